//! A patch to metal-api's `cmd/metal-api/internal/fsm/events.go` that makes the FSM accept
//! more pairs: each pair's state is added to the `Src` of the entry with that event and
//! destination, or a new entry is added where there is none. The patch is a unified diff that
//! `git apply` takes; `rules import-go` of the patched file reads the same transitions.
//!
//! The pairs are weighed against the file's own table, not against the rule set the proposal
//! started from: the file may be newer (metal-api's HEAD already accepts what v0.19.0 did
//! not), and a state added twice to a `Src` is a duplicate that import-go refuses.

use anyhow::{Context, Result, bail};

use super::file::{RuleFile, Target};
use super::go::{Dst, STATE, Src, entry, import, squash, strip_comments};
use super::go_body::items;
use super::ruleset::Ruleset;
use crate::event::{EventKind, State};

/// A pair the proposal accepts: its state, its event and where it leads.
pub type Wanted = (State, EventKind, Target);

/// The file patched with what it lacks, and what it already had.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// The file's text with the missing pairs added (the original where none is missing).
    pub text: String,
    /// Pairs added to the file.
    pub added: Vec<Wanted>,
    /// Pairs the file already accepts and leads where the proposal does.
    pub present: Vec<Wanted>,
    /// Pairs the file already accepts but leads elsewhere: (the pair as proposed, where the
    /// file leads it). Left as the file has them, since the event is not unexpected there.
    pub elsewhere: Vec<(Wanted, Target)>,
}

/// Patches `text` with the pairs its own `Events()` table lacks; `like` lends the knobs the
/// Go file does not hold, so that its table can be loaded as a rule set.
pub fn patch(text: &str, pairs: &[Wanted], like: &RuleFile) -> Result<Patch> {
    let own = import(text, like, "events.go")?;
    let own = Ruleset::from_json(&own.to_json()).context("its table does not check as rules")?;
    let mut found = Patch {
        text: String::new(),
        added: Vec::new(),
        present: Vec::new(),
        elsewhere: Vec::new(),
    };
    for &(state, event, target) in pairs {
        match own.lookup(state, event) {
            None => found.added.push((state, event, target)),
            Some(has) if has == target => found.present.push((state, event, target)),
            Some(has) => found.elsewhere.push(((state, event, target), has)),
        }
    }
    found.text = if found.added.is_empty() {
        text.to_string()
    } else {
        patched(text, &found.added)?
    };
    Ok(found)
}

/// An addition to the file: text inserted at a byte offset of the original.
struct Insert {
    at: usize,
    text: String,
}

/// The Go identifiers the file spells states and events with (`PXEBooting`), so that added
/// lines read like the rest; names without spaces where the file has none yet.
struct Idents {
    states: Vec<(String, String)>,
}

impl Idents {
    fn of(clean: &str) -> Idents {
        let mut states = Vec::new();
        for found in STATE.captures_iter(clean) {
            let Some(ident) = found.get(1).or(found.get(2)) else {
                continue;
            };
            let ident = ident.as_str().to_string();
            if !states.iter().any(|(_, i)| *i == ident) {
                states.push((squash(&ident), ident));
            }
        }
        Idents { states }
    }

    fn state(&self, state: State) -> String {
        let key = squash(state.name());
        self.states
            .iter()
            .find(|(k, _)| *k == key)
            .map_or_else(|| state.name().replace(' ', ""), |(_, ident)| ident.clone())
    }
}

/// The leading whitespace of the line `offset` is on.
fn indent_at(text: &str, offset: usize) -> &str {
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The text of `events.go` with the pairs added, each assumed missing from it.
fn patched(text: &str, pairs: &[Wanted]) -> Result<String> {
    let clean = strip_comments(text);
    let idents = Idents::of(&clean);
    let entries = items(&clean)?;
    let Some(&(last_start, last_text)) = entries.last() else {
        bail!("`Events()` holds no transitions to add to");
    };
    let mut inserts: Vec<Insert> = Vec::new();
    let mut new_entries: Vec<(EventKind, Target, Vec<State>)> = Vec::new();
    for &(state, event, target) in pairs {
        let want = match target {
            Target::To(state) => Dst::To(state),
            Target::Stay => Dst::Stay,
        };
        let found = entries.iter().find_map(|&(start, item)| {
            let read = entry(&clean, start, item).ok()?;
            match read.src {
                Src::List { inner, .. } if read.event == event && read.dst == want => Some(inner),
                _ => None,
            }
        });
        let Some((open, close)) = found else {
            match new_entries
                .iter_mut()
                .find(|(e, t, _)| *e == event && *t == target)
            {
                Some((_, _, states)) => states.push(state),
                None => new_entries.push((event, target, vec![state])),
            }
            continue;
        };
        let ident = format!("states.{}.String()", idents.state(state));
        let inner = &text[open..close];
        if inner.contains('\n') {
            // One state a line: a new line like the last one, after it.
            let last_line_start = text[..close].trim_end().rfind('\n').map_or(0, |i| i + 1);
            let indent = indent_at(text, last_line_start + 1).to_string();
            let after_last = text[last_line_start..]
                .find('\n')
                .map_or(close, |i| last_line_start + i + 1);
            inserts.push(Insert {
                at: after_last,
                text: format!("{indent}{ident},\n"),
            });
        } else {
            let trimmed = inner.trim_end();
            let separator = if trimmed.trim().is_empty() {
                ""
            } else if trimmed.ends_with(',') {
                " "
            } else {
                ", "
            };
            inserts.push(Insert {
                at: open + trimmed.len(),
                text: format!("{separator}{ident}"),
            });
        }
    }
    if !new_entries.is_empty() {
        // After the last entry, in its style.
        let end = last_start + last_text.len();
        let after = text[end..].find('\n').map_or(end, |i| end + i + 1);
        let indent = indent_at(text, last_start).to_string();
        let mut block = String::new();
        for (event, target, states) in &new_entries {
            let dst = match target {
                Target::To(state) => format!("states.{}.String()", idents.state(*state)),
                Target::Stay => "SelfTransitionState".to_string(),
            };
            block.push_str(&format!(
                "{indent}{{\n{indent}\tName: metal.ProvisioningEvent{}.String(),\n{indent}\tSrc: []string{{\n",
                event.name().replace(' ', "")
            ));
            for state in states {
                block.push_str(&format!(
                    "{indent}\t\tstates.{}.String(),\n",
                    idents.state(*state)
                ));
            }
            block.push_str(&format!(
                "{indent}\t}},\n{indent}\tDst: {dst},\n{indent}}},\n"
            ));
        }
        inserts.push(Insert {
            at: after,
            text: block,
        });
    }
    inserts.sort_by_key(|i| i.at);
    let mut out = String::with_capacity(text.len() + 256);
    let mut from = 0;
    for insert in inserts {
        out.push_str(&text[from..insert.at]);
        out.push_str(&insert.text);
        from = insert.at;
    }
    out.push_str(&text[from..]);
    Ok(out)
}

/// A unified diff from `old` to `new` of the file at `path`, for `git apply`.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let path = path.trim_start_matches("./");
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::go::import;
    use crate::rules::{RuleFile, Ruleset};

    const SHAPE: &str = "package fsm\n\nconst SelfTransitionState = \"self_transition\"\n\nfunc Events() fsm.Events {\n\treturn fsm.Events{\n\t\t{\n\t\t\tName: metal.ProvisioningEventPXEBooting.String(),\n\t\t\tSrc: []string{\n\t\t\t\tstates.PlannedReboot.String(), // a comment\n\t\t\t\tstates.Initial.String(),\n\t\t\t},\n\t\t\tDst: states.PXEBooting.String(),\n\t\t},\n\t\t{\n\t\t\tName: metal.ProvisioningEventPhonedHome.String(),\n\t\t\tSrc:  []string{states.PhonedHome.String()},\n\t\t\tDst:  SelfTransitionState,\n\t\t},\n\t}\n}\n";

    fn like() -> RuleFile {
        Ruleset::resolve("metal-api").unwrap().file
    }

    #[test]
    fn a_state_joins_the_entry_with_that_event_and_destination() {
        let out = patch(
            SHAPE,
            &[
                (
                    State::Waiting,
                    EventKind::PxeBooting,
                    Target::To(State::PxeBooting),
                ),
                (State::Waiting, EventKind::PhonedHome, Target::Stay),
                (
                    State::Installing,
                    EventKind::Alive,
                    Target::To(State::Alive),
                ),
            ],
            &like(),
        )
        .unwrap()
        .text;
        assert!(
            out.contains(
                "\t\t\t\tstates.Initial.String(),\n\t\t\t\tstates.Waiting.String(),\n\t\t\t},"
            ),
            "{out}"
        );
        assert!(
            out.contains("[]string{states.PhonedHome.String(), states.Waiting.String()}"),
            "{out}"
        );
        assert!(out.contains("\t\t{\n\t\t\tName: metal.ProvisioningEventAlive.String(),\n\t\t\tSrc: []string{\n\t\t\t\tstates.Installing.String(),\n\t\t\t},\n\t\t\tDst: states.Alive.String(),\n\t\t},\n\t}\n}\n"), "{out}");
        let rows = import(&out, &like(), "x").unwrap().transitions;
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].from, vec!["Planned Reboot", "Initial", "Waiting"]);
    }

    #[test]
    fn a_pair_the_file_already_has_is_not_added_again() {
        // metal-api's HEAD holds Registering in Installing's Src, which v0.19.0 lacked: a
        // proposal from v0.19.0's rules must leave it, and still add what the file lacks.
        let head = SHAPE.replace(
            "\t\t\t\tstates.Initial.String(),\n",
            "\t\t\t\tstates.Initial.String(),\n\t\t\t\tstates.Registering.String(),\n",
        );
        let registering = (
            State::Registering,
            EventKind::PxeBooting,
            Target::To(State::PxeBooting),
        );
        let waiting = (
            State::Waiting,
            EventKind::PxeBooting,
            Target::To(State::PxeBooting),
        );
        let done = patch(&head, &[registering, waiting], &like()).unwrap();
        assert_eq!(done.present, vec![registering]);
        assert_eq!(done.added, vec![waiting]);
        assert_eq!(
            done.text,
            head.replace(
                "\t\t\t\tstates.Registering.String(),\n",
                "\t\t\t\tstates.Registering.String(),\n\t\t\t\tstates.Waiting.String(),\n"
            )
        );
        assert_eq!(done.text.matches("states.Registering").count(), 1);
        let rows = import(&done.text, &like(), "x").unwrap().transitions;
        assert_eq!(
            rows[0].from,
            vec!["Planned Reboot", "Initial", "Registering", "Waiting"]
        );
        // Everything there already: the text unchanged, nothing added.
        let again = patch(&done.text, &[registering, waiting], &like()).unwrap();
        assert_eq!(again.text, done.text);
        assert!(again.added.is_empty());
        assert_eq!(again.present, vec![registering, waiting]);
        assert_eq!(unified_diff("events.go", &done.text, &again.text), "");
    }

    #[test]
    fn a_pair_the_file_leads_elsewhere_is_left_as_it_is() {
        // PXE Booting in Planned Reboot leads to PXE Booting; a proposal (from other rules)
        // that it stay would be a second row for the pair, which import-go refuses.
        let pair = (State::PlannedReboot, EventKind::PxeBooting, Target::Stay);
        let done = patch(SHAPE, &[pair], &like()).unwrap();
        assert_eq!(done.text, SHAPE);
        assert_eq!(done.elsewhere, vec![(pair, Target::To(State::PxeBooting))]);
        assert!(done.added.is_empty() && done.present.is_empty());
    }
}
