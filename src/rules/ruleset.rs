//! A rule set ready to judge by: a rule file loaded, checked (each mistake named with its
//! line) and turned into a lookup table; the built-ins, and `--rules` resolved.

use std::path::Path;

use anyhow::{Context, Result, bail};
use chrono::TimeDelta;

use serde::Deserialize;

use super::file::{RuleFile, RuleRow, Target};
use crate::event::{EventKind, State};
use crate::jsonsplit::element_lines_at;

const BUILTIN: [(&str, &str); 3] = [
    (
        "metal-api-v0.19.0",
        include_str!("builtin/metal-api-v0.19.0.json"),
    ),
    (
        "metal-api-v0.19.3",
        include_str!("builtin/metal-api-v0.19.3.json"),
    ),
    (
        "metal-api-v0.42.2",
        include_str!("builtin/metal-api-v0.42.2.json"),
    ),
];

/// The name used when `--rules` is not given, and what the alias `metal-api` means.
pub const DEFAULT_RULES: &str = "metal-api-v0.42.2";

/// A checked rule set, ready for replay.
#[derive(Debug, Clone)]
pub struct Ruleset {
    pub name: String,
    pub description: String,
    table: [[Option<Target>; EventKind::ALL.len()]; State::ALL.len()],
    /// The target of each event's `*` row, where it has one.
    wildcard: [Option<Target>; EventKind::ALL.len()],
    /// Whether a (state, event) pair has its own row (not only the `*` row).
    explicit: [[bool; EventKind::ALL.len()]; State::ALL.len()],
    pub buffered_phoned_home: Option<TimeDelta>,
    pub failed_reclaim_threshold: TimeDelta,
    pub kept_events: usize,
    /// The file the set was built from, for `rules export`.
    pub file: RuleFile,
}

impl Ruleset {
    /// What metal-api does with `event` in `state`; `None` is an unexpected event.
    pub fn lookup(&self, state: State, event: EventKind) -> Option<Target> {
        self.table[state.index()][event.index()]
    }

    /// The target of the event's `*` row (every state without a row of its own).
    pub fn wildcard(&self, event: EventKind) -> Option<Target> {
        self.wildcard[event.index()]
    }

    /// Whether the pair has a row of its own, not only the event's `*` row.
    pub fn has_row(&self, state: State, event: EventKind) -> bool {
        self.explicit[state.index()][event.index()]
    }

    /// Resolves `--rules`: a built-in name, the alias `metal-api`, or a path to a rule file.
    pub fn resolve(spec: &str) -> Result<Ruleset> {
        let name = if spec == "metal-api" {
            DEFAULT_RULES
        } else {
            spec
        };
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name) {
            return Ruleset::from_json(text).with_context(|| format!("built-in rules {name}"));
        }
        let path = Path::new(spec);
        if path.is_file() || crate::stdin::is_dash(path) {
            let text = crate::stdin::read_to_string(path, "a rule file")
                .with_context(|| format!("cannot read rule file {spec}"))?;
            return Ruleset::from_text(&text).with_context(|| format!("rule file {spec}"));
        }
        bail!(
            "unknown rule set {spec:?}; built-in: {} (or `metal-api` for the newest), or a path to a rule file",
            builtin_names().join(", ")
        )
    }

    /// Parses and checks a rule file in JSON or in YAML (what `rules propose -o yaml` writes),
    /// naming the line of each mistake.
    pub fn from_text(text: &str) -> Result<Ruleset> {
        // A JSON rule file is an object; a text that opens as YAML does (a `key:` line, a quoted
        // key, `---`) is YAML; anything else gets JSON's error, which names what it found.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let head = text.trim_start();
        let yaml = !head.starts_with('{')
            && (crate::input::yaml::looks_like_yaml(head.as_bytes())
                || head.starts_with(['"', '\'']));
        if yaml {
            Ruleset::from_yaml(text)
        } else {
            Ruleset::from_json(text)
        }
    }

    /// Parses and checks a rule file written as YAML: the same members as the JSON.
    pub fn from_yaml(text: &str) -> Result<Ruleset> {
        let yaml = crate::input::yaml::mapping(text).map_err(anyhow::Error::msg)?;
        // YAML keeps the last of a repeated key; a rule file refuses it, as its JSON does.
        if let Some((line, path)) = yaml.repeated_keys.first() {
            bail!("line {line}: duplicate field `{path}`");
        }
        let rows = yaml
            .sequence_lines
            .get("transitions")
            .cloned()
            .unwrap_or_default();
        let key_line = |key: &str| yaml.key_lines.get(key).copied();
        let file = RuleFile::deserialize(&yaml.value).map_err(|err| {
            match mistake_line(&yaml.value, &rows, &key_line) {
                Some(line) => anyhow::anyhow!("line {line}: {err}"),
                None => anyhow::anyhow!("{err}"),
            }
        })?;
        Ruleset::from_file(file, &rows, &key_line)
    }

    /// Parses and checks a rule file, naming the line of each mistake.
    pub fn from_json(text: &str) -> Result<Ruleset> {
        let file: RuleFile = serde_json::from_str(text)
            .map_err(|err| anyhow::anyhow!("line {}: {}", err.line(), without_place(&err)))?;
        // serde accepted the text, so the splitter only fails on what it does not model; the
        // rows are then named by their index instead of their line.
        let lines = element_lines_at(text.as_bytes(), &["transitions"]).unwrap_or_default();
        Ruleset::from_file(file, &lines, &|key| key_line(text, key))
    }

    fn from_file(
        file: RuleFile,
        row_lines: &[usize],
        key_line: &dyn Fn(&str) -> Option<usize>,
    ) -> Result<Ruleset> {
        let mut problems = Vec::new();
        // A rule set's name heads every output (a DOT label, a SARIF driver, a table's first
        // line): it must show as the text it is.
        let name_at = key_line("name").map_or_else(String::new, |line| format!("line {line}: "));
        if let Some(c) = crate::hidden::first_hidden(&file.name) {
            problems.push(format!(
                "{name_at}the name holds U+{:04X}, a character that hides or reorders text; name the rule set with visible characters",
                c as u32
            ));
        } else if file.name.trim().is_empty() {
            problems.push(format!("{name_at}the name is empty"));
        }
        let mut explicit = [[None::<usize>; EventKind::ALL.len()]; State::ALL.len()];
        let mut wildcard = [None::<usize>; EventKind::ALL.len()];
        let mut table = [[None; EventKind::ALL.len()]; State::ALL.len()];
        let mut wildcard_target = [None; EventKind::ALL.len()];
        let place = |i: usize| match row_lines.get(i) {
            Some(line) => format!("line {line}"),
            None => format!("transition {}", i + 1),
        };
        for (i, row) in file.transitions.iter().enumerate() {
            let at = place(i);
            let Some(event) = EventKind::parse(&row.event) else {
                problems.push(format!("{at}: unknown event {:?}", row.event));
                continue;
            };
            let target = if row.to == "self" {
                Target::Stay
            } else if let Some(state) = State::parse(&row.to) {
                Target::To(state)
            } else {
                problems.push(format!("{at}: unknown target state {:?}", row.to));
                continue;
            };
            if row.from.is_empty() {
                problems.push(format!(
                    "{at}: `from` is empty, so this row can never apply"
                ));
            }
            for from in &row.from {
                if from == "*" {
                    if let Some(other) = wildcard[event.index()] {
                        problems.push(format!(
                            "{at}: a second `*` row for event {event} (the first is at {})",
                            place(other)
                        ));
                    }
                    wildcard[event.index()] = Some(i);
                    wildcard_target[event.index()] = Some(target);
                    continue;
                }
                let Some(state) = State::parse(from) else {
                    problems.push(format!("{at}: unknown state {from:?}"));
                    continue;
                };
                if state == State::Alive {
                    problems.push(format!(
                        "{at}: from state Alive can never apply: metal-api never stores an Alive event, so no machine is ever in Alive"
                    ));
                }
                let slot = &mut explicit[state.index()][event.index()];
                if let Some(other) = slot {
                    problems.push(format!(
                        "{at}: duplicate pair ({state}, {event}), already given at {}",
                        place(*other)
                    ));
                    continue;
                }
                *slot = Some(i);
                table[state.index()][event.index()] = Some(target);
            }
        }
        for (e, target) in wildcard_target.iter().enumerate() {
            let Some(target) = target else { continue };
            let shadowed = State::ALL
                .iter()
                .filter(|s| **s != State::Alive)
                .all(|s| explicit[s.index()][e].is_some());
            if shadowed && let Some(row) = wildcard[e] {
                problems.push(format!(
                    "{}: the `*` row for event {} can never apply: every state has its own row",
                    place(row),
                    EventKind::ALL[e]
                ));
            }
            for row in table.iter_mut() {
                // An explicit row beats the `*` row for the same pair.
                if row[e].is_none() {
                    row[e] = Some(*target);
                }
            }
        }
        // A transition into the current state by name is what looplab/fsm refuses with a
        // `NoTransitionError`, which metal-api's `HandleProvisioningEvent` does not handle:
        // the event fails with an internal error and nothing is stored. `self` is the way.
        for state in State::ALL {
            for event in EventKind::ALL {
                if table[state.index()][event.index()] != Some(Target::To(state)) {
                    continue;
                }
                let row = explicit[state.index()][event.index()].or(wildcard[event.index()]);
                let at = row.map_or_else(|| "a row".to_string(), place);
                problems.push(format!(
                    "{at}: {event} in {state} leads {state} to itself by name, which metal-api cannot run (looplab/fsm answers NoTransitionError: an internal error, nothing stored); write \"to\": \"self\" to stay in the state"
                ));
            }
        }
        let mut out_of_range = |key: &str, value: u64, range: std::ops::RangeInclusive<u64>| {
            if !range.contains(&value) {
                let at = key_line(key).map_or_else(String::new, |line| format!("line {line}: "));
                problems.push(format!(
                    "{at}{key} is {value}, but must be between {} and {}",
                    range.start(),
                    range.end()
                ));
            }
        };
        out_of_range("kept_events", file.kept_events as u64, 1..=MAX_KEPT_EVENTS);
        out_of_range(
            "failed_reclaim_seconds",
            file.failed_reclaim_seconds,
            1..=MAX_SECONDS,
        );
        if let Some(window) = file.buffered_phoned_home_seconds {
            out_of_range("buffered_phoned_home_seconds", window, 0..=MAX_SECONDS);
        }
        if !problems.is_empty() {
            bail!("{}", problems.join("\n"));
        }
        // In range, so neither conversion can fail; `seconds` is not reached with a bad value.
        let seconds = |s: u64| TimeDelta::try_seconds(s as i64).unwrap_or(TimeDelta::MAX);
        Ok(Ruleset {
            name: file.name.clone(),
            description: file.description.clone(),
            table,
            wildcard: wildcard_target,
            explicit: explicit.map(|row| row.map(|slot| slot.is_some())),
            buffered_phoned_home: file.buffered_phoned_home_seconds.map(seconds),
            failed_reclaim_threshold: seconds(file.failed_reclaim_seconds),
            kept_events: file.kept_events,
            file,
        })
    }
}

/// The longest time window a rule file may set: ten years, far beyond any real knob, and far
/// inside what time arithmetic can hold.
const MAX_SECONDS: u64 = 10 * 366 * 24 * 3600;

/// The most stored events a rule file may keep per machine.
const MAX_KEPT_EVENTS: u64 = 1_000_000;

/// The line a top-level key of a rule file stands on.
fn key_line(text: &str, key: &str) -> Option<usize> {
    let quoted = format!("\"{key}\"");
    let at = text.find(&quoted)?;
    Some(1 + text[..at].bytes().filter(|&b| b == b'\n').count())
}

/// The line of what serde refused in a rule file read as a value, which names no line: the
/// first row that does not read alone, else the member whose line the same members written
/// one per line of JSON break at.
fn mistake_line(
    value: &serde_json::Value,
    rows: &[usize],
    key_line: &dyn Fn(&str) -> Option<usize>,
) -> Option<usize> {
    let bad_row = value["transitions"]
        .as_array()
        .and_then(|all| all.iter().position(|r| RuleRow::deserialize(r).is_err()));
    if let Some(i) = bad_row {
        return rows.get(i).copied();
    }
    let members: Vec<(&String, &serde_json::Value)> = value.as_object()?.iter().collect();
    let lines: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}: {v}", serde_json::Value::from(k.as_str())))
        .collect();
    let json = format!("{{\n{}\n}}", lines.join(",\n"));
    let err = serde_json::from_str::<RuleFile>(&json).err()?;
    match members.get(err.line().checked_sub(2)?) {
        Some((key, _)) => key_line(key),
        // A member missing is missed by the mapping as a whole: named at its first line.
        None => members.iter().filter_map(|(k, _)| key_line(k)).min(),
    }
}

/// serde_json's message without the ` at line L column C` it ends with, where the line is
/// named before it already.
fn without_place(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, place)) if place.split(" column ").all(|n| n.parse::<u64>().is_ok()) => {
            message.to_string()
        }
        _ => text,
    }
}

/// The names of the built-in rule sets, oldest first.
pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(name, _)| *name).collect()
}

/// Every built-in rule set, oldest first.
pub fn builtins() -> Vec<Ruleset> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            Ruleset::from_json(text)
                .unwrap_or_else(|err| panic!("built-in {name} is broken: {err}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(name: &str) -> Ruleset {
        Ruleset::resolve(name).unwrap()
    }

    #[test]
    fn builtins_load() {
        assert_eq!(builtins().len(), 3);
        assert_eq!(rules("metal-api").name, DEFAULT_RULES);
    }

    #[test]
    fn registering_to_installing_only_from_v0_19_3() {
        let lookup = |r: &str| rules(r).lookup(State::Registering, EventKind::Installing);
        assert_eq!(lookup("metal-api-v0.19.0"), None);
        assert_eq!(
            lookup("metal-api-v0.19.3"),
            Some(Target::To(State::Installing))
        );
        assert_eq!(
            lookup("metal-api-v0.42.2"),
            Some(Target::To(State::Installing))
        );
    }

    #[test]
    fn phoned_home_in_waiting_is_a_self_transition_only_in_v0_42_2() {
        for state in [
            State::PxeBooting,
            State::Preparing,
            State::Registering,
            State::Waiting,
        ] {
            assert_eq!(
                rules("metal-api-v0.19.3").lookup(state, EventKind::PhonedHome),
                None
            );
            assert_eq!(
                rules("metal-api-v0.42.2").lookup(state, EventKind::PhonedHome),
                Some(Target::Stay)
            );
        }
        assert!(rules("metal-api-v0.19.3").buffered_phoned_home.is_none());
        assert_eq!(
            rules("metal-api-v0.42.2").buffered_phoned_home,
            Some(TimeDelta::minutes(5))
        );
    }

    #[test]
    fn explicit_row_beats_wildcard() {
        let r = rules("metal-api-v0.19.0");
        assert_eq!(
            r.lookup(State::PlannedReboot, EventKind::PlannedReboot),
            Some(Target::Stay)
        );
        assert_eq!(
            r.lookup(State::Waiting, EventKind::PlannedReboot),
            Some(Target::To(State::PlannedReboot))
        );
        assert_eq!(
            r.lookup(State::Initial, EventKind::MachineReclaim),
            Some(Target::To(State::MachineReclaim))
        );
    }

    #[test]
    fn unknown_name_lists_the_builtins() {
        let err = Ruleset::resolve("metal-api-v9").unwrap_err().to_string();
        assert!(err.contains("metal-api-v0.19.0"), "{err}");
    }

    #[test]
    fn mistakes_are_named_with_their_line() {
        let text = r#"{
  "name": "broken",
  "transitions": [
    {"event": "Waiting", "from": ["Registering"], "to": "Waiting"},
    {"event": "Waiting", "from": ["Registering"], "to": "Waiting"},
    {"event": "Wating", "from": ["Registering"], "to": "Waiting"},
    {"event": "Waiting", "from": ["Nowhere"], "to": "Waiting"}
  ],
  "buffered_phoned_home_seconds": null,
  "failed_reclaim_seconds": 300,
  "kept_events": 100
}"#;
        let err = Ruleset::from_json(text).unwrap_err().to_string();
        assert!(
            err.contains("line 5: duplicate pair (Registering, Waiting)"),
            "{err}"
        );
        assert!(err.contains("line 6: unknown event \"Wating\""), "{err}");
        assert!(err.contains("line 7: unknown state \"Nowhere\""), "{err}");
    }

    #[test]
    fn rows_that_can_never_apply_are_named() {
        let text = r#"{
  "name": "dead rows",
  "transitions": [
    {"event": "Waiting", "from": [], "to": "Waiting"},
    {"event": "Alive", "from": ["Alive"], "to": "Alive"},
    {"event": "Crashed", "from": ["*"], "to": "Crashing"},
    {"event": "Crashed", "from": ["Initial", "Crashing", "PXE Booting", "Preparing", "Registering", "Waiting", "Installing", "Booting New Kernel", "Phoned Home", "Planned Reboot", "Machine Reclaim"], "to": "Crashing"}
  ],
  "buffered_phoned_home_seconds": null,
  "failed_reclaim_seconds": 300,
  "kept_events": 100
}"#;
        let err = Ruleset::from_json(text).unwrap_err().to_string();
        assert!(err.contains("line 4: `from` is empty"), "{err}");
        assert!(
            err.contains("line 5: from state Alive can never apply"),
            "{err}"
        );
        assert!(
            err.contains("line 6: the `*` row for event Crashed can never apply"),
            "{err}"
        );
    }

    #[test]
    fn export_writes_the_builtin_file_byte_for_byte() {
        for (name, text) in BUILTIN {
            assert_eq!(
                Ruleset::resolve(name).unwrap().file.to_json(),
                text,
                "{name}"
            );
        }
    }

    #[test]
    fn exported_builtins_load_back_identically() {
        for rules in builtins() {
            let text = serde_json::to_string_pretty(&rules.file).unwrap();
            let again = Ruleset::from_json(&text).unwrap();
            assert_eq!(again.file, rules.file);
            for state in State::ALL {
                for event in EventKind::ALL {
                    assert_eq!(again.lookup(state, event), rules.lookup(state, event));
                }
            }
        }
    }
}
