//! What several JSON outputs share: the `inputs` object, a pair's tally, the window.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::aggregate::{PairTally, Summary};
use crate::diagnose::PairVerdict;
use crate::event::{EventKind, Pair, State, format_time as time};
use crate::input::Problems;
use crate::input::record::InputError;
use crate::log::Dimension;
use crate::render::sentence;
use crate::window::{Period, Shown};

#[derive(Serialize)]
pub(super) struct InputsJson<'a> {
    files: u64,
    formats: std::collections::BTreeMap<&'static str, u64>,
    machines: u64,
    merged_machines: u64,
    events: u64,
    skipped_lines: u64,
    duplicates: u64,
    /// Left out without gap markers, so output without them stays as it was.
    #[serde(skip_serializing_if = "is_zero")]
    gaps: u64,
    #[serde(skip_serializing_if = "is_zero")]
    gap_machines: u64,
    replayed: u64,
    rejected: u64,
    unknown_events: Vec<UnknownJson<'a>>,
    errors: Vec<ErrorJson<'a>>,
    skipped: Vec<SkippedJson<'a>>,
    notes: Vec<ErrorJson<'a>>,
}

impl<'a> InputsJson<'a> {
    /// The `inputs` object of a summary.
    pub(super) fn of(s: &'a Summary, problems: &'a Problems) -> InputsJson<'a> {
        InputsJson {
            files: s.files,
            // By name, as they always were listed.
            formats: s
                .formats
                .iter()
                .fold(Default::default(), |mut by_name, (f, n)| {
                    *by_name.entry(f.name()).or_default() += n;
                    by_name
                }),
            machines: s.machines,
            merged_machines: s.merged_machines,
            events: s.events,
            skipped_lines: s.skipped_lines,
            duplicates: s.duplicates,
            gaps: s.gaps,
            gap_machines: s.gap_machines,
            replayed: s.replayed,
            rejected: s.rejected,
            unknown_events: s
                .unknown_events
                .iter()
                .map(|(name, t)| UnknownJson {
                    event: name,
                    count: t.count,
                    machines: t.machines,
                })
                .collect(),
            errors: errors(&problems.errors),
            skipped: problems
                .skipped
                .iter()
                .map(|s| SkippedJson {
                    path: &s.path,
                    reason: &s.reason,
                })
                .collect(),
            notes: errors(&problems.notes),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Serialize)]
pub(super) struct UnknownJson<'a> {
    event: &'a str,
    count: u64,
    machines: u64,
}

#[derive(Serialize)]
pub(super) struct ErrorJson<'a> {
    path: &'a str,
    line: Option<usize>,
    column: Option<usize>,
    message: &'a str,
}

#[derive(Serialize)]
pub(super) struct SkippedJson<'a> {
    path: &'a str,
    reason: &'a str,
}

#[derive(Serialize)]
pub(super) struct PairJson {
    state: &'static str,
    event: &'static str,
    count: u64,
    machines: u64,
    first_seen: String,
    last_seen: String,
    examples: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    series: Option<Vec<PeriodJson>>,
    /// How many occurrences are cascades of an earlier unexpected event (`report`).
    #[serde(skip_serializing_if = "Option::is_none")]
    cascades: Option<u64>,
    /// The root pairs of those cascades.
    #[serde(skip_serializing_if = "Option::is_none")]
    roots: Option<Vec<RootJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict: Option<VerdictJson>,
    /// Where the pair's machines are: machines per partition, rack and size.
    #[serde(rename = "where", skip_serializing_if = "Option::is_none")]
    place: Option<WhereJson>,
    /// The counts per partition, rack or size (`report --by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    breakdown: Option<BreakdownJson>,
}

/// A pair's counts per value of one dimension, most occurrences first.
#[derive(Serialize)]
pub(super) struct BreakdownJson {
    by: &'static str,
    values: Vec<SplitJson>,
}

/// The pair among the machines of one value (`null`: machines whose export does not say).
#[derive(Serialize)]
pub(super) struct SplitJson {
    value: Option<String>,
    count: u64,
    machines: u64,
    first_seen: String,
    last_seen: String,
}

/// A pair's machines per partition, rack and size, where their exports say; a dimension no
/// export gave is left out.
#[derive(Serialize)]
pub(super) struct WhereJson {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    partition: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    rack: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    size: BTreeMap<String, u64>,
}

impl WhereJson {
    /// `None` where no machine of the pair had a place.
    pub(super) fn of(t: &PairTally) -> Option<WhereJson> {
        if t.places.is_empty() {
            return None;
        }
        let of = |dimension: Dimension| -> BTreeMap<String, u64> {
            t.where_(dimension)
                .into_iter()
                .map(|(v, n)| (v.to_string(), n))
                .collect()
        };
        Some(WhereJson {
            partition: of(Dimension::Partition),
            rack: of(Dimension::Rack),
            size: of(Dimension::Size),
        })
    }
}

/// A root pair of a pair's cascades.
#[derive(Serialize)]
pub(super) struct RootJson {
    state: &'static str,
    event: &'static str,
    count: u64,
}

impl RootJson {
    pub(super) fn all(roots: &[(Pair, u64)]) -> Vec<RootJson> {
        roots
            .iter()
            .map(|((state, event), count)| RootJson {
                state: state.name(),
                event: event.name(),
                count: *count,
            })
            .collect()
    }
}

/// A pair's verdict (see [`crate::diagnose`]).
#[derive(Serialize)]
pub(super) struct VerdictJson {
    kind: &'static str,
    action: &'static str,
    component: Option<&'static str>,
    share: f64,
    machines: u64,
    evidence: Vec<String>,
    roots: Vec<RootJson>,
    precedent: Option<String>,
    /// The precedent's page on GitHub.
    #[serde(skip_serializing_if = "Option::is_none")]
    precedent_url: Option<String>,
    /// The newer built-in rule set that already expects or swallows the pair.
    #[serde(skip_serializing_if = "Option::is_none")]
    handled_by: Option<HandledByJson>,
    /// Unannounced reboots in Waiting inside and outside metal-hammer's autoreboot window.
    #[serde(skip_serializing_if = "Option::is_none")]
    autoreboot: Option<AutorebootJson>,
}

#[derive(Serialize)]
pub(super) struct HandledByJson {
    rules: String,
    how: &'static str,
    precedent: Option<String>,
    /// How many of the pair's occurrences it handles, where that is not all of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    occurrences: Option<u64>,
}

#[derive(Serialize)]
pub(super) struct AutorebootJson {
    inside: u64,
    outside: u64,
}

impl VerdictJson {
    pub(super) fn of(v: &PairVerdict) -> VerdictJson {
        VerdictJson {
            kind: v.kind.name(),
            action: v.action.name(),
            component: v.component.map(|c| c.name()),
            share: v.share,
            machines: v.machines,
            evidence: std::iter::once(sentence::verdict(v))
                .chain(v.evidence.iter().map(sentence::basis))
                .collect(),
            roots: RootJson::all(&v.roots),
            precedent: v.precedent.map(|p| p.name()),
            precedent_url: v.precedent.map(|p| p.url()),
            handled_by: v.handled_by.as_ref().map(|h| HandledByJson {
                rules: h.rules.clone(),
                how: h.how.name(),
                precedent: h.precedent.map(|p| p.name()),
                occurrences: h.partly().then_some(h.occurrences),
            }),
            autoreboot: v.autoreboot.map(|a| AutorebootJson {
                inside: a.inside,
                outside: a.outside,
            }),
        }
    }
}

#[derive(Serialize)]
pub(super) struct PeriodJson {
    period: String,
    count: u64,
}

/// The window a view counted in (`since ≤ time < until`), and the `--now` it counted back
/// from.
#[derive(Serialize)]
pub(super) struct WindowJson {
    since: Option<String>,
    until: Option<String>,
    now: Option<String>,
}

impl WindowJson {
    pub(super) fn of(shown: &Shown) -> WindowJson {
        WindowJson {
            since: shown.window.since.map(time),
            until: shown.window.until.map(time),
            now: shown.now.map(time),
        }
    }
}

pub(super) fn errors(list: &[InputError]) -> Vec<ErrorJson<'_>> {
    list.iter()
        .map(|e| ErrorJson {
            path: &e.path,
            line: (e.line > 0).then_some(e.line),
            column: (e.column > 0).then_some(e.column),
            message: &e.message,
        })
        .collect()
}

impl PairJson {
    pub(super) fn new(state: State, event: EventKind, t: &PairTally) -> PairJson {
        PairJson {
            state: state.name(),
            event: event.name(),
            count: t.count,
            machines: t.machines,
            first_seen: time(t.first_seen),
            last_seen: time(t.last_seen),
            examples: t.examples.iter().cloned().collect(),
            series: None,
            cascades: None,
            roots: None,
            verdict: None,
            place: WhereJson::of(t),
            breakdown: None,
        }
    }

    /// With its cascades and verdict, as `report` shows them.
    pub(super) fn with_verdict(mut self, t: &PairTally, verdict: Option<&PairVerdict>) -> PairJson {
        self.cascades = Some(t.classes.cascades());
        self.roots = Some(RootJson::all(&t.classes.roots_by_count()));
        self.verdict = verdict.map(VerdictJson::of);
        self
    }

    /// With its counts per value of `dimension`, where one was asked for.
    pub(super) fn with_breakdown(
        mut self,
        t: &PairTally,
        dimension: Option<Dimension>,
    ) -> PairJson {
        self.breakdown = dimension.map(|d| BreakdownJson {
            by: d.name(),
            values: t
                .split_by_count()
                .into_iter()
                .map(|(value, split)| SplitJson {
                    value: value.map(str::to_string),
                    count: split.count,
                    machines: split.machines,
                    first_seen: time(split.first_seen),
                    last_seen: time(split.last_seen),
                })
                .collect(),
        });
        self
    }

    pub(super) fn with_series(mut self, t: &PairTally, period: Option<Period>) -> PairJson {
        if let Some(period) = period {
            self.series = Some(
                t.series
                    .iter()
                    .map(|(start, count)| PeriodJson {
                        period: period.label(*start),
                        count: *count,
                    })
                    .collect(),
            );
        }
        self
    }
}
