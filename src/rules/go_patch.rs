//! A patch to metal-api's `cmd/metal-api/internal/fsm/events.go` that makes the FSM accept
//! more pairs: each pair's state is added to the `Src` of the entry with that event and
//! destination, or a new entry is added where there is none. The patch is a unified diff that
//! `git apply` takes; `rules import-go` of the patched file reads the same transitions.

use anyhow::{Result, bail};

use super::file::Target;
use super::go::{Dst, STATE, Src, entry, squash, strip_comments};
use super::go_body::items;
use crate::event::{EventKind, State};

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

/// The text of `events.go` with the pairs added.
pub fn patched(text: &str, pairs: &[(State, EventKind, Target)]) -> Result<String> {
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
        let out = patched(
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
        )
        .unwrap();
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
}
