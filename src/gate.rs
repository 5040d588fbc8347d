//! The fleet gate of `check`: today's unexpected pairs against an accepted baseline. A pair
//! outside the baseline, or one on a larger share of machines than its ceiling allows, fails.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::aggregate::{PairTally, Summary};
use crate::event::{EventKind, State};
use crate::jsonsplit::element_lines_at;

/// A baseline file: the unexpected pairs a fleet accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The rule set the baseline was recorded with (informational).
    #[serde(default)]
    pub rules: String,
    pub accepted: Vec<AcceptedPair>,
    /// The line of each accepted pair in the file it was loaded from (empty otherwise).
    #[serde(skip)]
    pub lines: Vec<usize>,
}

/// One accepted pair, optionally with a ceiling on the share of machines that may show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptedPair {
    pub state: String,
    pub event: String,
    /// At most this fraction (0–1) of the fleet's machines may show the pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_machine_share: Option<f64>,
    /// How often the pair was seen when the baseline was written (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// On how many machines it was seen when the baseline was written (informational).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machines: Option<u64>,
}

/// An accepted pair, checked.
#[derive(Debug, Clone, PartialEq)]
struct CheckedPair {
    state: State,
    event: EventKind,
    ceiling: Option<f64>,
    /// The line of the entry in the baseline file, where known.
    line: Option<usize>,
}

impl Baseline {
    /// Reads and checks a baseline file, naming the line of each mistake.
    pub fn load(path: &Path) -> Result<Baseline> {
        let text = crate::stdin::read_to_string(path, "--baseline")
            .with_context(|| format!("cannot read baseline {}", path.display()))?;
        let baseline: Baseline = serde_json::from_str(&text)
            .map_err(|err| anyhow::anyhow!("baseline {}:{}: {err}", path.display(), err.line()))?;
        let lines = element_lines_at(text.as_bytes(), &["accepted"]).unwrap_or_default();
        if let Err(problems) = baseline.checked() {
            let named: Vec<String> = problems
                .into_iter()
                .map(|(i, p)| match lines.get(i) {
                    Some(line) => format!("{}:{line}: {p}", path.display()),
                    None => format!("{}: accepted pair {}: {p}", path.display(), i + 1),
                })
                .collect();
            bail!("{}", named.join("\n"));
        }
        Ok(Baseline { lines, ..baseline })
    }

    /// The baseline that accepts exactly today's pairs.
    pub fn from_summary(rules: &str, summary: &Summary) -> Baseline {
        Baseline {
            rules: rules.to_string(),
            accepted: summary
                .pairs_by_count()
                .into_iter()
                .map(|((state, event), tally)| AcceptedPair {
                    state: state.name().to_string(),
                    event: event.name().to_string(),
                    max_machine_share: None,
                    count: Some(tally.count),
                    machines: Some(tally.machines),
                })
                .collect(),
            lines: Vec::new(),
        }
    }

    /// The file as people read, edit and diff it: one accepted pair per line, so that a
    /// location in the baseline shows the whole pair.
    pub fn to_json(&self) -> String {
        let rows: Vec<String> = self
            .accepted
            .iter()
            .map(|pair| format!("    {}", serde_json::to_string(pair).unwrap_or_default()))
            .collect();
        format!(
            "{{\n  \"rules\": {},\n  \"accepted\": [\n{}\n  ]\n}}\n",
            serde_json::to_string(&self.rules).unwrap_or_default(),
            rows.join(",\n")
        )
    }

    /// The accepted pairs, or (index, problem) for each bad one.
    fn checked(&self) -> Result<Vec<CheckedPair>, Vec<(usize, String)>> {
        let mut good = Vec::new();
        let mut problems = Vec::new();
        for (i, pair) in self.accepted.iter().enumerate() {
            let state = State::parse(&pair.state);
            let event = EventKind::parse(&pair.event);
            match (state, event) {
                (None, _) => problems.push((i, format!("unknown state {:?}", pair.state))),
                (_, None) => problems.push((i, format!("unknown event {:?}", pair.event))),
                (Some(state), Some(event)) => {
                    if let Some(share) = pair.max_machine_share
                        && !(0.0..=1.0).contains(&share)
                    {
                        problems.push((
                            i,
                            format!("max_machine_share must be between 0 and 1, found {share}"),
                        ));
                    }
                    if good
                        .iter()
                        .any(|a: &CheckedPair| a.state == state && a.event == event)
                    {
                        problems.push((i, format!("({state}, {event}) is listed twice")));
                    }
                    good.push(CheckedPair {
                        state,
                        event,
                        ceiling: pair.max_machine_share,
                        line: self.lines.get(i).copied(),
                    });
                }
            }
        }
        if problems.is_empty() {
            Ok(good)
        } else {
            Err(problems)
        }
    }
}

/// How a pair stands against the baseline (SARIF's `baselineState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BaselineState {
    /// Seen today, not in the baseline.
    New,
    /// Seen today and in the baseline.
    Unchanged,
    /// In the baseline, not seen today.
    Absent,
}

impl BaselineState {
    /// SARIF's spelling.
    pub fn name(self) -> &'static str {
        match self {
            BaselineState::New => "new",
            BaselineState::Unchanged => "unchanged",
            BaselineState::Absent => "absent",
        }
    }
}

/// Why a pair fails the gate.
#[derive(Debug, Clone, PartialEq)]
pub enum Violation {
    /// The pair is not in the baseline.
    NewPair,
    /// More of the fleet shows the pair than the baseline allows.
    CeilingExceeded { share: f64, ceiling: f64 },
}

impl Violation {
    /// A short identifier (SARIF rule id, JUnit failure type).
    pub fn id(&self) -> &'static str {
        match self {
            Violation::NewPair => "new-unexpected-pair",
            Violation::CeilingExceeded { .. } => "machine-share-ceiling",
        }
    }
}

/// One pair's standing.
#[derive(Debug, Clone, PartialEq)]
pub struct PairCheck {
    pub state: State,
    pub event: EventKind,
    pub baseline: BaselineState,
    /// Today's tally; `None` for an absent pair.
    pub tally: Option<PairTally>,
    /// The share of the fleet's machines that show the pair today.
    pub share: f64,
    pub ceiling: Option<f64>,
    pub violation: Option<Violation>,
    /// The line of the pair's entry in the baseline file, where it has one.
    pub baseline_line: Option<usize>,
}

/// The gate's verdict on a fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct GateResult {
    /// Today's pairs (most frequent first), then the baseline's absent ones.
    pub pairs: Vec<PairCheck>,
    /// What was not read at all (and `--allow-empty` was not given): the gate has nothing
    /// to pass on.
    pub nothing_read: Option<Nothing>,
}

/// What a gate read none of, so that it has nothing to pass on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nothing {
    /// No machine at all: an empty directory, broken links, `[]` lists.
    Machines,
    /// Machines, but not one event among them.
    Events,
    /// Events, but none of metal-api's: every one an unknown event, which the replay skips
    /// (a v2 export's enum numbers where fsmlog cannot read them, a misspelt column).
    Judged,
    /// Events judged, but none at a time the window (`--since`, `--until`) holds: a stale
    /// export asked about the last day.
    Window,
}

/// What a gate read: machines, events, and of those the events the replay judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadCounts {
    pub machines: u64,
    /// Every event read, unknown ones too.
    pub events: u64,
    /// The events the replay judged (handled or rejected).
    pub judged: u64,
    /// Of those, the ones the window holds: what a gate passes on.
    pub in_window: u64,
}

impl ReadCounts {
    /// What a fleet's summary read.
    pub fn of(summary: &Summary) -> ReadCounts {
        ReadCounts {
            machines: summary.machines,
            events: summary.events,
            judged: summary.replayed + summary.rejected,
            in_window: summary.judged_in_window,
        }
    }
}

impl Nothing {
    /// What a gate has nothing of, unless `allow_empty`.
    pub fn of(read: ReadCounts, allow_empty: bool) -> Option<Nothing> {
        match read {
            _ if allow_empty => None,
            ReadCounts { machines: 0, .. } => Some(Nothing::Machines),
            ReadCounts { events: 0, .. } => Some(Nothing::Events),
            ReadCounts { judged: 0, .. } => Some(Nothing::Judged),
            ReadCounts { in_window: 0, .. } => Some(Nothing::Window),
            _ => None,
        }
    }
}

impl GateResult {
    /// The pairs that fail the gate, most frequent first.
    pub fn violations(&self) -> impl Iterator<Item = &PairCheck> {
        self.pairs.iter().filter(|p| p.violation.is_some())
    }

    /// Whether the gate passes.
    pub fn passed(&self) -> bool {
        self.nothing_read.is_none() && self.violations().next().is_none()
    }
}

/// Checks today's summary against a baseline (no baseline: every pair is new).
pub fn check(summary: &Summary, baseline: Option<&Baseline>) -> Result<GateResult> {
    let accepted = match baseline {
        Some(b) => b.checked().map_err(|problems| {
            anyhow::anyhow!(
                "{}",
                problems
                    .into_iter()
                    .map(|(i, p)| format!("accepted pair {}: {p}", i + 1))
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })?,
        None => Vec::new(),
    };
    let fleet = summary.machines.max(1) as f64;
    let mut pairs = Vec::new();
    for ((state, event), tally) in summary.pairs_by_count() {
        let found = accepted
            .iter()
            .find(|a| a.state == *state && a.event == *event);
        let share = tally.machines as f64 / fleet;
        let violation = match found {
            None => Some(Violation::NewPair),
            Some(CheckedPair {
                ceiling: Some(ceiling),
                ..
            }) if share > *ceiling => Some(Violation::CeilingExceeded {
                share,
                ceiling: *ceiling,
            }),
            Some(_) => None,
        };
        pairs.push(PairCheck {
            state: *state,
            event: *event,
            baseline: if found.is_some() {
                BaselineState::Unchanged
            } else {
                BaselineState::New
            },
            tally: Some(tally.clone()),
            share,
            ceiling: found.and_then(|a| a.ceiling),
            violation,
            baseline_line: found.and_then(|a| a.line),
        });
    }
    for a in &accepted {
        if !summary.pairs.contains_key(&(a.state, a.event)) {
            pairs.push(PairCheck {
                state: a.state,
                event: a.event,
                baseline: BaselineState::Absent,
                tally: None,
                share: 0.0,
                ceiling: a.ceiling,
                violation: None,
                baseline_line: a.line,
            });
        }
    }
    Ok(GateResult {
        pairs,
        nothing_read: None,
    })
}

/// A stable identifier of a pair for code-scanning UIs (`waiting/pxe-booting`).
pub fn fingerprint(state: State, event: EventKind) -> String {
    let slug = |s: &str| s.to_ascii_lowercase().replace(' ', "-");
    format!("{}/{}", slug(state.name()), slug(event.name()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Container, Handling, Step, Trace};
    use chrono::{DateTime, Utc};

    fn summary(pairs: &[(&str, State, EventKind)], machines: u64) -> Summary {
        let mut s = Summary::default();
        let time = DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        for (machine, state, event) in pairs {
            s.add_trace(&Trace {
                machine: machine.to_string(),
                source: "x".into(),
                sources: vec!["x".into()],
                steps: vec![Step {
                    time,
                    event: *event,
                    message: "".into(),
                    from: *state,
                    handling: Handling::Unexpected,
                    to: *state,
                    stored: true,
                    recorded_state: None,
                    line: 1,
                    source: 0,
                    index: 0,
                    last_event_time: None,
                }],
                container: Container::default(),
                unknown: Vec::new(),
                last_error_only: None,
                annotated: false,
                place: None,
            });
        }
        s.machines = machines;
        s
    }

    const W: State = State::Waiting;
    const PXE: EventKind = EventKind::PxeBooting;

    #[test]
    fn baseline_from_today_passes() {
        let s = summary(&[("m1", W, PXE)], 10);
        let b = Baseline::from_summary("r", &s);
        let result = check(&s, Some(&b)).unwrap();
        assert!(result.passed());
        assert_eq!(result.pairs[0].baseline, BaselineState::Unchanged);
    }

    #[test]
    fn a_new_pair_fails() {
        let before = summary(&[("m1", W, PXE)], 10);
        let b = Baseline::from_summary("r", &before);
        let after = summary(
            &[
                ("m1", W, PXE),
                ("m2", State::Preparing, EventKind::Preparing),
            ],
            10,
        );
        let result = check(&after, Some(&b)).unwrap();
        assert!(!result.passed());
        let new: Vec<_> = result.violations().collect();
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].state, State::Preparing);
        assert_eq!(new[0].baseline, BaselineState::New);
        assert_eq!(new[0].violation, Some(Violation::NewPair));
    }

    #[test]
    fn ceiling_on_machine_share() {
        let s = summary(&[("m1", W, PXE), ("m2", W, PXE), ("m3", W, PXE)], 10);
        let mut b = Baseline::from_summary("r", &s);
        b.accepted[0].max_machine_share = Some(0.3);
        assert!(
            check(&s, Some(&b)).unwrap().passed(),
            "3 of 10 is not above 30%"
        );
        b.accepted[0].max_machine_share = Some(0.2);
        let result = check(&s, Some(&b)).unwrap();
        assert_eq!(
            result.pairs[0].violation,
            Some(Violation::CeilingExceeded {
                share: 0.3,
                ceiling: 0.2
            })
        );
    }

    #[test]
    fn absent_pairs_are_listed_but_pass() {
        let before = summary(&[("m1", W, PXE)], 1);
        let b = Baseline::from_summary("r", &before);
        let result = check(&Summary::default(), Some(&b)).unwrap();
        assert!(result.passed());
        assert_eq!(result.pairs[0].baseline, BaselineState::Absent);
    }

    #[test]
    fn bad_baseline_names_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.json");
        std::fs::write(
            &path,
            "{\"rules\": \"r\", \"accepted\": [\n {\"state\": \"Waiting\", \"event\": \"PXE Booting\"},\n {\"state\": \"Wating\", \"event\": \"PXE Booting\"}\n]}",
        )
        .unwrap();
        let err = Baseline::load(&path).unwrap_err().to_string();
        assert!(err.contains("b.json:3: unknown state \"Wating\""), "{err}");
    }

    #[test]
    fn fingerprints_are_stable_slugs() {
        assert_eq!(fingerprint(W, PXE), "waiting/pxe-booting");
    }
}
