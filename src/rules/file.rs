//! A rule file as a person edits it: the transition rows and the behaviour knobs, in the
//! schema the built-ins are written in too.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::event::State;

/// Where a valid event leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The machine moves to this state.
    To(State),
    /// The event is valid and the machine stays where it is.
    Stay,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::To(state) => f.write_str(state.name()),
            Target::Stay => f.write_str("self"),
        }
    }
}

/// One row of a rule file: `event` is allowed from `from` and leads to `to`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RuleRow {
    pub event: String,
    pub from: Vec<String>,
    pub to: String,
}

/// A rule file as a person writes it (docs/rules.md).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub transitions: Vec<RuleRow>,
    /// The buffered-phoned-home window in seconds; `null` where the release has none. It must
    /// be written either way: left out, a file would silently judge without buffering.
    #[serde(deserialize_with = "present")]
    pub buffered_phoned_home_seconds: Option<u64>,
    /// How long after the last event a Phoned Home in Machine Reclaim flags a failed reclaim.
    pub failed_reclaim_seconds: u64,
    /// How many stored events metal-api keeps per machine.
    pub kept_events: usize,
}

/// Reads an optional number that must still be there: serde takes a missing `Option` for
/// `None` unless the field has its own reader, and with one it says the field is missing.
fn present<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<u64>, D::Error> {
    Option::<u64>::deserialize(value)
}

impl RuleFile {
    /// The file as people read and diff it: one transition row per line.
    pub fn to_json(&self) -> String {
        let string = |s: &str| serde_json::to_string(s).unwrap_or_default();
        let rows: Vec<String> = self
            .transitions
            .iter()
            .map(|row| {
                let from: Vec<String> = row.from.iter().map(|s| string(s)).collect();
                format!(
                    "    {{\"event\": {}, \"from\": [{}], \"to\": {}}}",
                    string(&row.event),
                    from.join(", "),
                    string(&row.to)
                )
            })
            .collect();
        let window = match self.buffered_phoned_home_seconds {
            Some(s) => s.to_string(),
            None => "null".to_string(),
        };
        format!(
            "{{\n  \"name\": {},\n  \"description\": {},\n  \"transitions\": [\n{}\n  ],\n  \"buffered_phoned_home_seconds\": {window},\n  \"failed_reclaim_seconds\": {},\n  \"kept_events\": {}\n}}\n",
            string(&self.name),
            string(&self.description),
            rows.join(",\n"),
            self.failed_reclaim_seconds,
            self.kept_events
        )
    }
}
