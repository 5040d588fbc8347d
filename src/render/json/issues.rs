//! `issues -o json`.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::common::InputsJson;
use crate::event::format_time as time;
use crate::issues::{Audited, IssueType, counts, unexpected_pairs};
use crate::log::Place;
use crate::render::reports::IssuesReport;
use crate::render::sentence;
use crate::render::sentence::needs_id;

#[derive(Serialize)]
struct IssuesJson<'a> {
    rules: &'a str,
    now: String,
    inputs: InputsJson<'a>,
    counts: BTreeMap<&'static str, u64>,
    machines: Vec<MachineJson<'a>>,
}

#[derive(Serialize)]
struct MachineJson<'a> {
    machine: &'a str,
    /// The machine's id again, as metalctl's JSON names it (`--template '{{ .id }}'`).
    id: &'a str,
    state: &'static str,
    last_event_time: Option<String>,
    allocated: Option<bool>,
    /// Where the machine is and who has it, each left out where its export does not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    partition: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rack: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hostname: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    project: Option<&'a str>,
    issues: Vec<IssueJson>,
}

#[derive(Serialize)]
struct IssueJson {
    #[serde(rename = "type")]
    kind: &'static str,
    severity: &'static str,
    description: &'static str,
    /// Where the type is explained (metal-api's troubleshooting page for its own).
    refurl: String,
    details: String,
    /// The unexpected pairs behind an `unexpected-transitions` issue, most frequent first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pairs: Option<Vec<PairJson>>,
}

#[derive(Serialize)]
struct PairJson {
    state: &'static str,
    event: &'static str,
    count: u64,
}

/// Writes `issues -o json`.
pub fn issues(report: &IssuesReport, out: &mut dyn Write) -> io::Result<()> {
    let doc = IssuesJson {
        rules: report.rules,
        now: time(report.now),
        inputs: InputsJson::of(report.summary, report.problems),
        counts: counts(report.machines)
            .into_iter()
            .map(|(kind, n)| (kind.id(), n))
            .collect(),
        machines: report
            .machines
            .iter()
            .map(|j| MachineJson {
                machine: &j.facts.machine,
                id: &j.facts.machine,
                state: j.facts.state.name(),
                last_event_time: j.facts.last_event_time.map(time),
                allocated: j.facts.allocated,
                partition: place(j, |p| &p.partition),
                rack: place(j, |p| &p.rack),
                size: place(j, |p| &p.size),
                hostname: place(j, |p| &p.hostname),
                project: place(j, |p| &p.project),
                issues: j
                    .issues
                    .iter()
                    .map(|i| IssueJson {
                        kind: i.kind.id(),
                        severity: i.kind.severity().name(),
                        description: i.kind.description(),
                        refurl: i.kind.refurl(),
                        details: sentence::details(i, report.now),
                        pairs: (i.kind == IssueType::UnexpectedTransitions).then(|| {
                            unexpected_pairs(&j.facts)
                                .into_iter()
                                .map(|((state, event), count)| PairJson {
                                    state: state.name(),
                                    event: event.name(),
                                    count,
                                })
                                .collect()
                        }),
                    })
                    .collect(),
            })
            .collect(),
    };
    super::safe::pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// One of a machine's place fields, where its export said it.
fn place(j: &Audited, field: impl Fn(&Place) -> &Option<String>) -> Option<&str> {
    j.facts.place.as_deref().and_then(|p| field(p).as_deref())
}

/// One issue type as metal-api's `GET /v1/machine/issues` lists it (`V1MachineIssue`), and
/// which export fsmlog needs to judge it.
#[derive(Serialize)]
struct IssueTypeJson {
    id: &'static str,
    severity: &'static str,
    description: &'static str,
    ref_url: String,
    /// Always empty in a list, as metal-api's.
    details: &'static str,
    needs: &'static str,
}

/// Writes `issues list -o json`: the types, as metalctl's `machine issues list -o json`.
pub fn issue_types(types: &[IssueType], out: &mut dyn Write) -> io::Result<()> {
    let list: Vec<IssueTypeJson> = types
        .iter()
        .map(|t| IssueTypeJson {
            id: t.id(),
            severity: t.severity().name(),
            description: t.description(),
            ref_url: t.refurl(),
            details: "",
            needs: needs_id(t.needs()),
        })
        .collect();
    super::safe::pretty(&mut *out, &list)?;
    writeln!(out)
}
