//! Reads the transition table out of metal-api's `cmd/metal-api/internal/fsm/events.go`, so a
//! rule change can be checked before it ships.
//!
//! The file's `Events()` returns `fsm.Events{ {Name: metal.ProvisioningEventX.String(), Src:
//! []string{states.Y.String(), …} or states.AllStateNames(), Dst: states.Z.String() or
//! SelfTransitionState}, … }`. This is a reader for that shape, not for Go at large: comments
//! are dropped, then each item's three fields are matched.

use std::sync::LazyLock;

use anyhow::{Result, bail};
use regex::Regex;

use super::file::{RuleFile, RuleRow};
use crate::event::{EventKind, State};

pub(super) static NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Name:\s*metal\.ProvisioningEvent(\w+)\.String\(\)").expect("valid pattern")
});
static SRC_ALL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Src:\s*states\.AllStateNames\(\)").expect("valid pattern"));
pub(super) static SRC_LIST: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Src:\s*\[\]string\s*\{([^}]*)\}").expect("valid pattern"));
pub(super) static STATE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"states\.(\w+)\.String\(\)").expect("valid pattern"));
pub(super) static DST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"Dst:\s*(?:states\.(\w+)\.String\(\)|(SelfTransitionState)|"self_transition"|"self")"#,
    )
    .expect("valid pattern")
});
static EVENTS_FN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"func\s+Events\s*\(\s*\)\s*fsm\.Events\s*\{").expect("valid pattern")
});

/// Go identifiers name events and states without spaces (`PXEBooting`, `BootingNewKernel`).
pub(super) fn squash(name: &str) -> String {
    name.replace(' ', "").to_ascii_lowercase()
}

pub(super) fn event_from_go(ident: &str) -> Option<EventKind> {
    EventKind::ALL
        .into_iter()
        .find(|k| squash(k.name()) == ident.to_ascii_lowercase())
}

pub(super) fn state_from_go(ident: &str) -> Option<State> {
    State::ALL
        .into_iter()
        .find(|s| squash(s.name()) == ident.to_ascii_lowercase())
}

/// Replaces comments with spaces (keeping newlines, so lines stay where they were).
pub(super) fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(quote) = in_string {
            out.push(c as char);
            if c == b'\\' && quote == b'"' && i + 1 < bytes.len() {
                out.push(bytes[i + 1] as char);
                i += 2;
                continue;
            }
            if c == quote {
                in_string = None;
            }
            i += 1;
            continue;
        }
        if c == b'"' || c == b'`' {
            in_string = Some(c);
            out.push(c as char);
            i += 1;
        } else if text[i..].starts_with("//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(' ');
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            let end = text[i + 2..]
                .find("*/")
                .map_or(bytes.len(), |e| i + 2 + e + 2);
            for &b in &bytes[i..end] {
                out.push(if b == b'\n' { '\n' } else { ' ' });
            }
            i = end;
        } else {
            // Only ASCII matters to the patterns; other characters are kept as they are.
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn line_at(text: &str, offset: usize) -> usize {
    1 + text[..offset].bytes().filter(|&b| b == b'\n').count()
}

/// The items of the `fsm.Events{ … }` literal: (start offset, item text).
pub(super) fn items(text: &str) -> Result<Vec<(usize, &str)>> {
    let Some(start) = EVENTS_FN.find(text) else {
        bail!("no `func Events() fsm.Events {{` found; is this metal-api's fsm/events.go?");
    };
    let Some(literal) = text[start.end()..].find("fsm.Events{") else {
        bail!(
            "line {}: `Events()` does not return an `fsm.Events{{ … }}` literal",
            line_at(text, start.start())
        );
    };
    let body_start = start.end() + literal + "fsm.Events{".len();
    let mut depth = 0usize;
    let mut item_start = None;
    let mut found = Vec::new();
    for (offset, c) in text[body_start..].char_indices() {
        let at = body_start + offset;
        match c {
            '{' => {
                if depth == 0 {
                    item_start = Some(at);
                }
                depth += 1;
            }
            '}' if depth == 0 => return Ok(found),
            '}' => {
                depth -= 1;
                if depth == 0
                    && let Some(s) = item_start.take()
                {
                    found.push((s, &text[s..=at]));
                }
            }
            _ => {}
        }
    }
    bail!(
        "line {}: the `fsm.Events{{` literal is not closed",
        line_at(text, body_start)
    )
}

/// Reads the transition rows of an `events.go`; names, description and knobs come from `like`.
pub fn import(text: &str, like: &RuleFile, name: &str) -> Result<RuleFile> {
    let clean = strip_comments(text);
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    // Each (state, event) pair with the Go line that gives it, so that a pair given twice is
    // named by its lines in events.go, not in the rule file written from it.
    let mut given: Vec<(String, EventKind, usize)> = Vec::new();
    let mut lines = Vec::new();
    for (offset, item) in items(&clean)? {
        let line = line_at(&clean, offset);
        let Some(name) = NAME.captures(item) else {
            problems.push(format!(
                "line {line}: item without `Name: metal.ProvisioningEventX.String()`"
            ));
            continue;
        };
        let Some(event) = event_from_go(&name[1]) else {
            problems.push(format!(
                "line {line}: unknown event ProvisioningEvent{}",
                &name[1]
            ));
            continue;
        };
        let from = if SRC_ALL.is_match(item) {
            vec!["*".to_string()]
        } else if let Some(list) = SRC_LIST.captures(item) {
            let mut from = Vec::new();
            for state in STATE.captures_iter(&list[1]) {
                match state_from_go(&state[1]) {
                    Some(s) => from.push(s.name().to_string()),
                    None => {
                        problems.push(format!("line {line}: unknown state states.{}", &state[1]))
                    }
                }
            }
            from
        } else {
            problems.push(format!(
                "line {line}: item for {event} without `Src: []string{{…}}` or `states.AllStateNames()`"
            ));
            continue;
        };
        let to = match DST.captures(item) {
            Some(dst) => match dst.get(1) {
                Some(state) => match state_from_go(state.as_str()) {
                    Some(s) => s.name().to_string(),
                    None => {
                        problems.push(format!(
                            "line {line}: unknown state states.{}",
                            state.as_str()
                        ));
                        continue;
                    }
                },
                None => "self".to_string(),
            },
            None => {
                problems.push(format!("line {line}: item for {event} without `Dst:`"));
                continue;
            }
        };
        for state in &from {
            match given.iter().find(|(s, e, _)| s == state && *e == event) {
                Some((_, _, first)) => problems.push(format!(
                    "line {line}: duplicate pair ({state}, {event}), already given at line {first}"
                )),
                None => given.push((state.clone(), event, line)),
            }
        }
        rows.push(RuleRow {
            event: event.name().to_string(),
            from,
            to,
        });
        lines.push(line);
    }
    // A destination equal to a source state is a transition into the current state by name:
    // looplab/fsm answers `NoTransitionError`, and metal-api fails the event. A `*` row's
    // own state is overridden only by a later entry for it (looplab keeps the last).
    for (row, line) in rows.iter().zip(&lines) {
        let event = EventKind::parse(&row.event).expect("read above");
        let into_itself: Vec<&String> = if row.from == ["*"] {
            let later = |state: &str| {
                given
                    .iter()
                    .any(|(s, e, at)| s == state && *e == event && at > line)
            };
            (!later(&row.to) && row.to != "self")
                .then_some(&row.to)
                .into_iter()
                .collect()
        } else {
            row.from.iter().filter(|s| **s == row.to).collect()
        };
        for state in into_itself {
            problems.push(format!(
                "line {line}: {event} from {state} has Dst {state} itself, which looplab/fsm answers with NoTransitionError (metal-api then fails the event and stores nothing); write Dst: SelfTransitionState"
            ));
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("\n"));
    }
    if rows.is_empty() {
        bail!("`Events()` holds no transitions");
    }
    Ok(RuleFile {
        name: name.to_string(),
        description: format!(
            "imported from events.go; behaviour knobs as in {}",
            like.name
        ),
        transitions: rows,
        ..like.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: &str = r#"package fsm

const SelfTransitionState = "self_transition"

// Events lists the transitions.
func Events() fsm.Events {
	return fsm.Events{
		{
			Name: metal.ProvisioningEventPXEBooting.String(),
			Src: []string{
				states.PlannedReboot.String(), // a comment with } in it
				/* states.Waiting.String(), */
				states.Initial.String(),
			},
			Dst: states.PXEBooting.String(),
		},
		{
			Name: metal.ProvisioningEventPlannedReboot.String(),
			Src:  states.AllStateNames(),
			Dst:  states.PlannedReboot.String(),
		},
		{
			Name: metal.ProvisioningEventPhonedHome.String(),
			Src:  []string{states.PhonedHome.String()},
			Dst:  SelfTransitionState,
		},
		{
			Name: metal.ProvisioningEventPlannedReboot.String(),
			Src:  []string{states.PlannedReboot.String()},
			Dst:  SelfTransitionState,
		},
	}
}
"#;

    fn like() -> RuleFile {
        crate::rules::Ruleset::resolve("metal-api-v0.19.0")
            .unwrap()
            .file
    }

    #[test]
    fn reads_rows_and_skips_comments() {
        let file = import(SHAPE, &like(), "mine").unwrap();
        assert_eq!(file.name, "mine");
        assert_eq!(
            file.transitions,
            vec![
                RuleRow {
                    event: "PXE Booting".into(),
                    from: vec!["Planned Reboot".into(), "Initial".into()],
                    to: "PXE Booting".into(),
                },
                RuleRow {
                    event: "Planned Reboot".into(),
                    from: vec!["*".into()],
                    to: "Planned Reboot".into(),
                },
                RuleRow {
                    event: "Phoned Home".into(),
                    from: vec!["Phoned Home".into()],
                    to: "self".into(),
                },
                RuleRow {
                    event: "Planned Reboot".into(),
                    from: vec!["Planned Reboot".into()],
                    to: "self".into(),
                },
            ]
        );
        assert_eq!(file.kept_events, 100);
    }

    #[test]
    fn a_transition_into_the_state_itself_is_refused_with_its_go_line() {
        // Without the later self entry, Planned Reboot in Planned Reboot leads to itself.
        let i = SHAPE
            .rfind("\t\t{\n\t\t\tName: metal.ProvisioningEventPlannedReboot")
            .unwrap();
        let j = SHAPE[i..].find("},\n").unwrap() + i + 3;
        let without = format!("{}{}", &SHAPE[..i], &SHAPE[j..]);
        let err = import(&without, &like(), "x").unwrap_err().to_string();
        assert!(
            err.contains(
                "line 17: Planned Reboot from Planned Reboot has Dst Planned Reboot itself"
            ) && err.contains("write Dst: SelfTransitionState"),
            "{err}"
        );
        let by_name = SHAPE.replace(
            "Src:  []string{states.PhonedHome.String()},\n\t\t\tDst:  SelfTransitionState,",
            "Src:  []string{states.PhonedHome.String()},\n\t\t\tDst:  states.PhonedHome.String(),",
        );
        let err = import(&by_name, &like(), "x").unwrap_err().to_string();
        assert!(
            err.contains("line 22: Phoned Home from Phoned Home has Dst Phoned Home itself"),
            "{err}"
        );
    }

    #[test]
    fn unknown_names_are_reported_with_lines() {
        let text = SHAPE
            .replace("ProvisioningEventPlannedReboot", "ProvisioningEventReboot")
            .replace("states.Initial.String()", "states.Limbo.String()");
        let err = import(&text, &like(), "x").unwrap_err().to_string();
        assert!(err.contains("line 8: unknown state states.Limbo"), "{err}");
        assert!(
            err.contains("line 17: unknown event ProvisioningEventReboot"),
            "{err}"
        );
    }

    #[test]
    fn a_pair_given_twice_is_named_by_its_go_lines() {
        let text = SHAPE.replace(
            "Src:  []string{states.PhonedHome.String()},",
            "Src:  []string{states.PhonedHome.String(), states.PhonedHome.String()},",
        );
        let err = import(&text, &like(), "x").unwrap_err().to_string();
        assert!(
            err.contains(
                "line 22: duplicate pair (Phoned Home, Phoned Home), already given at line 22"
            ),
            "{err}"
        );
    }

    #[test]
    fn not_an_events_file() {
        let err = import("package main\nfunc main() {}\n", &like(), "x").unwrap_err();
        assert!(err.to_string().contains("no `func Events() fsm.Events {`"));
    }
}
