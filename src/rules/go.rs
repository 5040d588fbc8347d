//! Reads the transition table out of metal-api's `cmd/metal-api/internal/fsm/events.go`, so a
//! rule change can be checked before it ships.
//!
//! The file's `Events()` returns `fsm.Events{ {Name: …, Src: …, Dst: …}, … }`. This is a
//! reader for that shape, not for Go at large: comments are dropped, each item is cut into its
//! fields, and every field must be one of the spellings Go allows for metal-api's events and
//! states (docs/rules.md); anything else refuses the file, so no state is ever dropped unread.

use std::sync::LazyLock;

use anyhow::{Result, bail};
use regex::Regex;

use super::file::{RuleFile, RuleRow};
use super::go_body::{items, line_at, position};
use crate::event::{EventKind, State};

/// A state as Go spells it: `states.X.String()` or `string(states.X)`.
static STATE_IDENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:states\.(\w+)\.String\(\)|string\(\s*states\.(\w+)\s*\))$")
        .expect("valid pattern")
});
/// An event as Go spells it: `metal.ProvisioningEventX.String()` or
/// `string(metal.ProvisioningEventX)`.
static EVENT_IDENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:metal\.ProvisioningEvent(\w+)\.String\(\)|string\(\s*metal\.ProvisioningEvent(\w+)\s*\))$",
    )
    .expect("valid pattern")
});
/// A state spelt as Go code does in `Src` and `Dst` (for the patch's new lines to match).
pub(super) static STATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"states\.(\w+)\.String\(\)|string\(\s*states\.(\w+)\s*\)").expect("valid pattern")
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

/// Replaces comments with spaces, byte for byte (keeping newlines, so lines and offsets stay
/// where they were). Strings, raw strings and rune literals are stepped over as Go lexes them:
/// a `'"'` rune or a `"/*"` string opens nothing, so no comment can hide code from the reader
/// or show it code Go never compiles.
pub(super) fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_literal: Option<u8> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(quote) = in_literal {
            if c == b'\\' && quote != b'`' && i + 1 < bytes.len() {
                out.push('\\');
                i += 1;
            } else if c == quote || (c == b'\n' && quote != b'`') {
                // A line end closes an interpreted literal Go would refuse; the reader then
                // refuses what follows rather than read it as inside a string.
                in_literal = None;
            }
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        if matches!(c, b'"' | b'`' | b'\'') {
            in_literal = Some(c);
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
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The pieces of `text` between commas outside brackets and strings, each trimmed, with its
/// offset (`base` added); empty pieces (a trailing comma) are left out.
fn split_top<'a>(text: &'a str, base: usize) -> Vec<(usize, &'a str)> {
    let mut pieces = Vec::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut from = 0;
    let push = |from: usize, to: usize, pieces: &mut Vec<(usize, &'a str)>| {
        let raw = &text[from..to];
        let trimmed = raw.trim();
        if !trimmed.is_empty() {
            let lead = raw.len() - raw.trim_start().len();
            pieces.push((base + from + lead, trimmed));
        }
    };
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '`' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                push(from, i, &mut pieces);
                from = i + 1;
            }
            _ => {}
        }
    }
    push(from, text.len(), &mut pieces);
    pieces
}

/// A Go string literal's text (`"…"` without escapes, or a raw `` `…` ``).
fn literal(expr: &str) -> Option<&str> {
    let inner = expr
        .strip_prefix('"')
        .and_then(|e| e.strip_suffix('"'))
        .filter(|e| !e.contains(['"', '\\']))
        .or_else(|| expr.strip_prefix('`').and_then(|e| e.strip_suffix('`')))?;
    (!inner.contains('`')).then_some(inner)
}

/// A state as `Src` or `Dst` names it: `states.X.String()`, `string(states.X)`, or its
/// string (`"State PXE Booting"`, as metal-api's `states.go` defines it).
fn state_expr(expr: &str) -> Result<State, String> {
    if let Some(found) = STATE_IDENT.captures(expr) {
        let ident = found.get(1).or(found.get(2)).map_or("", |m| m.as_str());
        return state_from_go(ident).ok_or_else(|| format!("unknown state states.{ident}"));
    }
    if let Some(text) = literal(expr) {
        return State::ALL
            .into_iter()
            .find(|s| text.strip_prefix("State ") == Some(s.name()))
            .ok_or_else(|| {
                format!(
                    "{expr} is no state metal-api has (its states are spelt \"State PXE Booting\")"
                )
            });
    }
    Err(format!(
        "cannot read `{expr}` as a state (states.X.String(), string(states.X) or \"State X\")"
    ))
}

/// An event as `Name` names it: `metal.ProvisioningEventX.String()`,
/// `string(metal.ProvisioningEventX)`, or its string (`"PXE Booting"`).
fn event_expr(expr: &str) -> Result<EventKind, String> {
    if let Some(found) = EVENT_IDENT.captures(expr) {
        let ident = found.get(1).or(found.get(2)).map_or("", |m| m.as_str());
        return event_from_go(ident)
            .ok_or_else(|| format!("unknown event ProvisioningEvent{ident}"));
    }
    if let Some(text) = literal(expr) {
        return EventKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| format!("{expr} is no event metal-api has"));
    }
    Err(format!(
        "cannot read `{expr}` as an event (metal.ProvisioningEventX.String(), \
         string(metal.ProvisioningEventX) or \"X\")"
    ))
}

/// Where an item's transition goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dst {
    To(State),
    /// `SelfTransitionState` (`"self_transition"`): the event is valid, the machine stays.
    Stay,
}

/// An item's `Src`: every state, or a list with the span of its elements in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Src {
    All,
    List {
        states: Vec<(State, usize)>,
        /// The byte range inside the list's braces.
        inner: (usize, usize),
    },
}

/// One item of `fsm.Events{ … }`, every field resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) event: EventKind,
    pub(super) src: Src,
    pub(super) dst: Dst,
}

/// Reads one item (`{ Name: …, Src: …, Dst: … }` at `offset` of `clean`): every field must be
/// one of the spellings metal-api's code uses, or the item is refused with each problem at
/// its line and column.
pub(super) fn entry(clean: &str, offset: usize, item: &str) -> Result<Entry, Vec<String>> {
    let at = |o: usize| position(clean, o);
    let mut problems = Vec::new();
    let (mut event, mut src, mut dst) = (None, None, None);
    let body = &item[1..item.len() - 1];
    let mut seen: Vec<&str> = Vec::new();
    for (field_at, field) in split_top(body, offset + 1) {
        let Some((key, value)) = field.split_once(':') else {
            problems.push(format!("{}: `{field}` is no `Key: value`", at(field_at)));
            continue;
        };
        let value_at = field_at + key.len() + 1 + (value.len() - value.trim_start().len());
        let value = value.trim();
        let key = key.trim();
        if seen.contains(&key) {
            problems.push(format!(
                "{}: `{key}` given twice (Go refuses that)",
                at(field_at)
            ));
            continue;
        }
        seen.push(key);
        match key {
            "Name" => match event_expr(value) {
                Ok(e) => event = Some(e),
                Err(why) => problems.push(format!("{}: {why}", at(value_at))),
            },
            "Src" if value.replace(' ', "") == "states.AllStateNames()" => src = Some(Src::All),
            "Src" => {
                let Some(open) = value
                    .strip_prefix("[]string")
                    .map(str::trim_start)
                    .filter(|v| v.starts_with('{') && v.ends_with('}'))
                else {
                    problems.push(format!(
                        "{}: cannot read `{value}` as a Src (`[]string{{…}}` or `states.AllStateNames()`)",
                        at(value_at)
                    ));
                    continue;
                };
                let inner_at = value_at + (value.len() - open.len()) + 1;
                let inner = &open[1..open.len() - 1];
                let mut states = Vec::new();
                for (state_at, expr) in split_top(inner, inner_at) {
                    match state_expr(expr) {
                        Ok(state) => states.push((state, state_at)),
                        Err(why) => problems.push(format!("{}: {why}", at(state_at))),
                    }
                }
                src = Some(Src::List {
                    states,
                    inner: (inner_at, inner_at + inner.len()),
                });
            }
            "Dst" => match value {
                "SelfTransitionState" | "\"self_transition\"" => dst = Some(Dst::Stay),
                _ => match state_expr(value) {
                    Ok(state) => dst = Some(Dst::To(state)),
                    Err(why) => problems.push(format!("{}: {why}", at(value_at))),
                },
            },
            other => problems.push(format!(
                "{}: unknown field `{other}` (an fsm.EventDesc has Name, Src and Dst)",
                at(field_at)
            )),
        }
    }
    let here = at(offset);
    let missing = |what: &str| format!("{here}: item without `{what}`");
    match (event, src, dst) {
        (Some(event), Some(src), Some(dst)) if problems.is_empty() => Ok(Entry { event, src, dst }),
        (event, src, dst) => {
            if event.is_none() && !problems.iter().any(|p| p.contains("event")) {
                problems.push(missing("Name: metal.ProvisioningEventX.String()"));
            }
            if src.is_none() && !problems.iter().any(|p| p.contains("Src")) {
                problems.push(missing("Src: []string{…}` or `states.AllStateNames()"));
            }
            if dst.is_none() && !problems.iter().any(|p| p.contains("state")) {
                problems.push(missing("Dst:"));
            }
            Err(problems)
        }
    }
}

/// Reads the transition rows of an `events.go`; names, description and knobs come from `like`.
/// Problems are named as `LINE:COLUMN: message`.
pub fn import(text: &str, like: &RuleFile, name: &str) -> Result<RuleFile> {
    let clean = strip_comments(text);
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    // Each (state, event) pair with the Go line that gives it, so that a pair given twice is
    // named by its lines in events.go, not in the rule file written from it.
    let mut given: Vec<(String, EventKind, usize, String)> = Vec::new();
    let mut lines = Vec::new();
    for (offset, item) in items(&clean)? {
        let line = line_at(&clean, offset);
        let entry = match entry(&clean, offset, item) {
            Ok(entry) => entry,
            Err(found) => {
                problems.extend(found);
                continue;
            }
        };
        let event = entry.event;
        let from: Vec<(String, usize)> = match &entry.src {
            Src::All => vec![("*".to_string(), offset)],
            Src::List { states, .. } => states
                .iter()
                .map(|(s, at)| (s.name().to_string(), *at))
                .collect(),
        };
        let to = match entry.dst {
            Dst::To(state) => state.name().to_string(),
            Dst::Stay => "self".to_string(),
        };
        for (state, at) in &from {
            match given.iter().find(|(s, e, _, _)| s == state && *e == event) {
                Some((_, _, _, first)) => problems.push(format!(
                    "{}: duplicate pair ({state}, {event}), already given at {first}",
                    position(&clean, *at)
                )),
                None => given.push((state.clone(), event, line, position(&clean, *at))),
            }
        }
        rows.push(RuleRow {
            event: event.name().to_string(),
            from: from.into_iter().map(|(s, _)| s).collect(),
            to,
        });
        lines.push((line, position(&clean, offset)));
    }
    // A destination equal to a source state is a transition into the current state by name:
    // looplab/fsm answers `NoTransitionError`, and metal-api fails the event. A `*` row's
    // own state is overridden only by a later entry for it (looplab keeps the last).
    for (row, (line, at)) in rows.iter().zip(&lines) {
        let event = EventKind::parse(&row.event).expect("read above");
        let into_itself: Vec<&String> = if row.from == ["*"] {
            let later = |state: &str| {
                given
                    .iter()
                    .any(|(s, e, at, _)| s == state && *e == event && at > line)
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
                "{at}: {event} from {state} has Dst {state} itself, which looplab/fsm answers with NoTransitionError (metal-api then fails the event and stores nothing); write Dst: SelfTransitionState"
            ));
        }
    }
    problems.extend(shadowed(&rows, &lines));
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

/// Rows a later `states.AllStateNames()` row of the same event overrides: looplab/fsm fills
/// its transitions in order, so the last row for a pair wins, while a rule file's explicit
/// row beats its `*` row wherever it stands. Read as a rule file they would mean another FSM,
/// so they are refused at their place.
fn shadowed(rows: &[RuleRow], lines: &[(usize, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    for (star, (star_line, star_at)) in rows.iter().zip(lines) {
        if star.from != ["*"] {
            continue;
        }
        for (row, (line, at)) in rows.iter().zip(lines) {
            if row.event == star.event && line < star_line && row.from != ["*"] && row.to != star.to
            {
                problems.push(format!(
                    "{at}: {} from {} is overridden by the `states.AllStateNames()` row after it ({star_at}): looplab/fsm keeps the last row for a pair (to {}), a rule file its explicit row (to {}); move this row after that one",
                    row.event,
                    row.from.join(", "),
                    star.to,
                    row.to
                ));
            }
        }
    }
    problems
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
        let j = SHAPE[i..].find("\t\t},\n").unwrap() + i + 5;
        let without = format!("{}{}", &SHAPE[..i], &SHAPE[j..]);
        let err = import(&without, &like(), "x").unwrap_err().to_string();
        assert!(
            err.contains("17:3: Planned Reboot from Planned Reboot has Dst Planned Reboot itself")
                && err.contains("write Dst: SelfTransitionState"),
            "{err}"
        );
        let by_name = SHAPE.replace(
            "Src:  []string{states.PhonedHome.String()},\n\t\t\tDst:  SelfTransitionState,",
            "Src:  []string{states.PhonedHome.String()},\n\t\t\tDst:  states.PhonedHome.String(),",
        );
        let err = import(&by_name, &like(), "x").unwrap_err().to_string();
        assert!(
            err.contains("22:3: Phoned Home from Phoned Home has Dst Phoned Home itself"),
            "{err}"
        );
    }

    #[test]
    fn unknown_names_are_reported_with_lines() {
        let text = SHAPE
            .replace("ProvisioningEventPlannedReboot", "ProvisioningEventReboot")
            .replace("states.Initial.String()", "states.Limbo.String()");
        let err = import(&text, &like(), "x").unwrap_err().to_string();
        assert!(err.contains("13:5: unknown state states.Limbo"), "{err}");
        assert!(
            err.contains("18:10: unknown event ProvisioningEventReboot"),
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
                "24:47: duplicate pair (Phoned Home, Phoned Home), already given at 24:19"
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
