//! `-o openmetrics`: the Prometheus text exposition format, readable by Prometheus' scrape
//! (OpenMetrics), node_exporter's textfile collector, the Pushgateway and promtool (the classic
//! text format, which reads the OpenMetrics `# EOF` as a comment). So every family is a gauge
//! — each run judges a snapshot, and a counter's `_total` samples read differently in the two
//! flavours — no line is blank, no sample has a timestamp, and HELP holds no `"`.

use std::fmt::Write as _;
use std::io::{self, Write};

use super::reports::{CheckReport, IssuesReport, Report};
use std::collections::{BTreeSet, HashMap, HashSet};

use crate::hidden::{has_hidden, is_hidden};
use crate::issues::{Audited, IssueType, MachineFacts};

/// One metric family: its samples' labels (name, value) and values.
pub(super) struct Family {
    pub(super) name: &'static str,
    pub(super) help: &'static str,
    /// `gauge`, or `counter` (only `watch`'s, whose counters never go down).
    pub(super) kind: &'static str,
    pub(super) samples: Vec<(Vec<(&'static str, String)>, f64)>,
}

impl Family {
    pub(super) fn new(name: &'static str, help: &'static str) -> Family {
        Family {
            name,
            help,
            kind: "gauge",
            samples: Vec::new(),
        }
    }

    /// A counter: its name ends in `_total`, as the text format's counters do.
    pub(super) fn counter(name: &'static str, help: &'static str) -> Family {
        Family {
            kind: "counter",
            ..Family::new(name, help)
        }
    }

    pub(super) fn sample(mut self, labels: Vec<(&'static str, String)>, value: f64) -> Family {
        self.add(labels, value);
        self
    }

    pub(super) fn add(&mut self, mut labels: Vec<(&'static str, String)>, value: f64) {
        // As Prometheus' client libraries write them: labels by name.
        labels.sort_by_key(|(name, _)| *name);
        self.samples.push((labels, value));
    }
}

/// The label values of one exposition as written: an id is carried exactly wherever the
/// format can (it escapes only `\`, `"` and line feed, so a parser and a join with
/// metal-metrics-exporter's series read the id itself). Only what a terminal would act on (C0,
/// C1, DEL and the characters that hide or reorder text) is shown escaped, `\u{1b}` as
/// everywhere in fsmlog's output; should such a value read like another id of the same
/// exposition (`a` line feed `b` beside the id `a\u{a}b` written out), it is told apart by
/// `~2`, `~3`…, so that no two ids are one series (which makes the text invalid).
struct LabelValues {
    shown: HashMap<String, String>,
}

impl LabelValues {
    fn of(families: &[Family], constant: &[(String, String)]) -> LabelValues {
        let values = || {
            families
                .iter()
                .flat_map(|f| &f.samples)
                .flat_map(|s| &s.0)
                .map(|(_, v)| v)
                .chain(constant.iter().map(|(_, v)| v))
        };
        let mut taken: HashSet<String> = values().filter(|v| !has_hidden(v)).cloned().collect();
        let hidden: BTreeSet<&String> = values().filter(|v| has_hidden(v)).collect();
        let mut shown = HashMap::new();
        for raw in hidden {
            let base: String = raw
                .chars()
                .map(|c| match is_hidden(c) {
                    true => format!("\\u{{{:x}}}", c as u32),
                    false => c.to_string(),
                })
                .collect();
            let mut value = base.clone();
            for n in 2.. {
                if !taken.contains(&value) {
                    break;
                }
                value = format!("{base}~{n}");
            }
            taken.insert(value.clone());
            shown.insert(raw.clone(), value);
        }
        LabelValues { shown }
    }

    /// A value as written between the quotes: shown, then `\` and `"` escaped as the format
    /// says (no raw line feed is left to escape).
    fn write(&self, raw: &str, out: &mut String) {
        let shown = self.shown.get(raw).map_or(raw, String::as_str);
        for c in shown.chars() {
            match c {
                '\\' => out.push_str(r"\\"),
                '"' => out.push_str("\\\""),
                c => out.push(c),
            }
        }
    }
}

/// A value as Go's `ParseFloat` reads it: integers without a fraction.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Writes the families as [`write_families`] does, then `# EOF`.
fn write(
    families: Vec<Family>,
    constant: &[(String, String)],
    out: &mut dyn Write,
) -> io::Result<()> {
    write_families(families, constant, out)?;
    out.write_all(b"# EOF\n")
}

/// Writes the families, sorted by name, each one's samples by their label values (as the
/// Prometheus client libraries order them). Every sample also carries the constant labels
/// (`--label`, a cut's), but for a name its family already has: a machine's own `partition` is
/// kept.
pub(super) fn write_families(
    mut families: Vec<Family>,
    constant: &[(String, String)],
    out: &mut dyn Write,
) -> io::Result<()> {
    families.sort_by_key(|f| f.name);
    let values = LabelValues::of(&families, constant);
    let mut text = String::new();
    for family in &mut families {
        family.samples.sort_by(|a, b| {
            let values = |s: &(Vec<(&str, String)>, f64)| -> Vec<String> {
                s.0.iter().map(|(_, v)| v.clone()).collect()
            };
            values(a).cmp(&values(b))
        });
        let help = family.help.replace('\\', "\\\\").replace('\n', "\\n");
        let _ = writeln!(text, "# TYPE {} {}", family.name, family.kind);
        let _ = writeln!(text, "# HELP {} {help}", family.name);
        for (own, value) in &family.samples {
            text.push_str(family.name);
            let mut labels: Vec<(&str, &str)> = own.iter().map(|(n, v)| (*n, v.as_str())).collect();
            for (name, v) in constant {
                if !own.iter().any(|(n, _)| n == name) {
                    labels.push((name, v));
                }
            }
            labels.sort_by_key(|(name, _)| *name);
            if !labels.is_empty() {
                text.push('{');
                for (i, (name, v)) in labels.iter().enumerate() {
                    if i > 0 {
                        text.push(',');
                    }
                    let _ = write!(text, "{name}=\"");
                    values.write(v, &mut text);
                    text.push('"');
                }
                text.push('}');
            }
            let _ = writeln!(text, " {}", number(*value));
        }
        out.write_all(text.as_bytes())?;
        text.clear();
    }
    Ok(())
}

/// The families of the fleet read and its unexpected pairs (`report`'s, and `watch`'s).
pub(super) fn fleet(report: &Report) -> Vec<Family> {
    let s = report.summary;
    let unknown: u64 = s.unknown_events.values().map(|t| t.count).sum();
    let mut transitions = Family::new(
        "fsmlog_unexpected_transitions",
        "Occurrences of an event in a state that has no rule for it, as fsmlog report counts them",
    );
    let mut machines = Family::new(
        "fsmlog_unexpected_machines",
        "Machines with at least one occurrence of the unexpected pair",
    );
    let mut cascades = Family::new(
        "fsmlog_unexpected_cascades",
        "Occurrences of the pair that follow an earlier unexpected event of the machine",
    );
    let mut verdicts = Family::new(
        "fsmlog_unexpected_verdict_info",
        "The verdict on the unexpected pair: accept, swallow, a cascade, or a problem elsewhere",
    );
    for ((state, event), t) in s.pairs_by_count() {
        let pair = || {
            vec![
                ("state", state.name().to_string()),
                ("event", event.name().to_string()),
            ]
        };
        transitions.add(pair(), t.count as f64);
        machines.add(pair(), t.machines as f64);
        cascades.add(pair(), t.classes.cascades() as f64);
        if let Some(v) = report.verdicts.get(&(*state, *event)) {
            let mut labels = pair();
            labels.push(("kind", v.kind.name().to_string()));
            labels.push(("action", v.action.name().to_string()));
            labels.push((
                "component",
                v.component.map_or("", |c| c.name()).to_string(),
            ));
            verdicts.add(labels, 1.0);
        }
    }
    let mut families = vec![
        transitions,
        machines,
        cascades,
        verdicts,
        Family::new("fsmlog_machines", "Machines read").sample(vec![], s.machines as f64),
        Family::new(
            "fsmlog_events",
            "Events read, by what became of them (they add up to every event read)",
        )
        .sample(vec![("outcome", "replayed".into())], s.replayed as f64)
        .sample(vec![("outcome", "rejected".into())], s.rejected as f64)
        .sample(vec![("outcome", "unknown".into())], unknown as f64)
        .sample(vec![("outcome", "duplicate".into())], s.duplicates as f64),
        Family::new(
            "fsmlog_input_errors",
            "Input problems: a file or line fsmlog could not read",
        )
        .sample(vec![], report.problems.errors.len() as f64),
    ];
    let mut newest = Family::new(
        "fsmlog_newest_event_timestamp_seconds",
        "The time of the newest event read, in seconds since 1970",
    );
    if let Some(t) = s.newest_event {
        newest.add(vec![], t.timestamp_millis() as f64 / 1000.0);
    }
    families.push(newest);
    let mut info = Family::new(
        "fsmlog_rules_info",
        "The rule set the events were replayed under",
    );
    info.add(vec![("rules", report.rules.to_string())], 1.0);
    families.push(info);
    families
}

/// `report -o openmetrics`.
pub fn report(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    write(fleet(report), report.labels, out)
}

/// `check -o openmetrics`: the violations and whether the gate passed. The fleet's own
/// families are `report`'s alone: node_exporter refuses a series two files of one textfile
/// directory both write.
pub fn check(check: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let mut families = Vec::new();
    let mut violations = Family::new(
        "fsmlog_gate_violations",
        "Unexpected pairs beyond the accepted baseline (1), by why they fail the gate",
    );
    for p in check.result.violations() {
        if let Some(v) = &p.violation {
            violations.add(
                vec![
                    ("state", p.state.name().to_string()),
                    ("event", p.event.name().to_string()),
                    ("violation", v.id().to_string()),
                ],
                1.0,
            );
        }
    }
    families.push(violations);
    families.push(
        Family::new(
            "fsmlog_gate_passed",
            "Whether the fleet passed the gate (1) or not (0)",
        )
        .sample(vec![], if check.result.passed() { 1.0 } else { 0.0 }),
    );
    write(families, check.labels, out)
}

/// `issues -o openmetrics`: metal-metrics-exporter's two issue families, by its names, labels
/// and help texts: for every machine read and every issue type judged of it, 1 where the
/// machine has it and 0 where not, so that a resolved issue drops to 0 instead of vanishing.
pub fn issues(report: &IssuesReport, out: &mut dyn Write) -> io::Result<()> {
    let info = info_family(report.types);
    let issues = issue_family(
        Family::new(
            "metal_machine_issues",
            "Provide information on machine issues",
        ),
        report.machines,
        report.types,
    );
    let mut allocation = Family::new(
        "metal_machine_allocation_info",
        "Provide information about the machine allocation",
    );
    for judged in report.machines {
        if let Some(labels) = allocation_labels(&judged.facts) {
            allocation.add(labels, 1.0);
        }
    }
    let mut families = vec![info, issues];
    // As Prometheus' client libraries do, a family without samples is left out: no machine
    // object was read.
    if !allocation.samples.is_empty() {
        families.push(allocation);
    }
    write(families, report.labels, out)
}

/// `family` with a sample for every machine and every type judged of it: 1 where the machine
/// has the issue, else 0.
pub(super) fn issue_family(
    mut family: Family,
    machines: &[Audited],
    types: &[IssueType],
) -> Family {
    for judged in machines {
        // A type whose data the input lacks for the machine (its BMC, its partition) has no
        // row: neither a false 0 nor a false 1.
        for kind in types.iter().filter(|k| judged.facts.judges(**k)) {
            let has = judged.issues.iter().any(|i| i.kind == *kind);
            family.add(
                vec![
                    ("machineid", judged.facts.machine.clone()),
                    ("issueid", kind.id().to_string()),
                ],
                if has { 1.0 } else { 0.0 },
            );
        }
    }
    family
}

/// metal-metrics-exporter's `metal_machine_issues_info`: one sample per type.
pub(super) fn info_family(types: &[IssueType]) -> Family {
    info_rows(
        Family::new(
            "metal_machine_issues_info",
            "Provide general information on issues that are evaluated by the metal-api",
        ),
        types,
    )
}

/// `family` with 1 for each type, labelled with its description, severity and `refurl`.
pub(super) fn info_rows(mut family: Family, types: &[IssueType]) -> Family {
    for kind in types {
        family.add(
            vec![
                ("issueid", kind.id().to_string()),
                ("description", kind.description().to_string()),
                ("severity", kind.severity().name().to_string()),
                ("refurl", kind.refurl()),
            ],
            1.0,
        );
    }
    family
}

/// `issues list -o openmetrics`: the types as the exporter describes them, and nothing else.
pub fn issue_types(types: &[IssueType], out: &mut dyn Write) -> io::Result<()> {
    write(vec![info_family(types)], &[], out)
}

/// metal-metrics-exporter's labels of `metal_machine_allocation_info` for a machine whose v1
/// machine object was read, computed as its collector computes them
/// (pkg/collector/collector.go): placeholders where the machine is not allocated, the
/// state `AVAILABLE` where it is neither locked nor reserved, the tags only of an allocated
/// machine.
fn allocation_labels(m: &MachineFacts) -> Option<Vec<(&'static str, String)>> {
    if !m.machine_object {
        return None;
    }
    const NOT_ALLOCATED: &str = "NOTALLOCATED";
    let place = m.place.as_deref().cloned().unwrap_or_default();
    let or = |value: Option<String>, default: &str| value.unwrap_or_else(|| default.to_string());
    let state = place
        .state
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "AVAILABLE".to_string());
    // The allocation's members and the tags are read only of an allocation (and a freed
    // machine's are dropped when exports are merged).
    Some(vec![
        ("machineid", m.machine.clone()),
        ("partition", or(place.partition, "")),
        ("machinename", or(place.hostname, NOT_ALLOCATED)),
        ("clusterTag", or(place.cluster, NOT_ALLOCATED)),
        ("primaryASN", or(place.primary_asn, NOT_ALLOCATED)),
        ("role", or(place.role, "")),
        ("state", state),
        ("imageId", or(place.image, NOT_ALLOCATED)),
    ])
}

/// The issue types an audit judges, in output order, that a filter keeps.
pub fn judged_types(keeps: impl Fn(IssueType) -> bool) -> Vec<IssueType> {
    IssueType::ALL.into_iter().filter(|k| keeps(*k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels of a family of one sample per id, as written.
    fn written(ids: &[&str]) -> String {
        let mut family = Family::new("m", "h");
        for id in ids {
            family.add(vec![("machineid", id.to_string())], 1.0);
        }
        let mut out = Vec::new();
        write(vec![family], &[], &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn label_values_carry_the_id_and_show_only_controls_escaped() {
        // As the format escapes: `\` and `"`; the id itself otherwise.
        assert!(written(&[r#"a"b\c"#]).contains(r#"m{machineid="a\"b\\c"} 1"#));
        assert!(written(&["plain-id"]).contains(r#"m{machineid="plain-id"} 1"#));
        // What a terminal would act on, shown: the parser reads `x\u{a}y\u{1b}`.
        assert!(written(&["x\ny\u{1b}"]).contains(r#"m{machineid="x\\u{a}y\\u{1b}"} 1"#));
        // An id that reads like another's shown controls: the shown one is told apart.
        let both = written(&["a\nb", r"a\u{a}b"]);
        assert!(both.contains(r#"m{machineid="a\\u{a}b"} 1"#), "{both}");
        assert!(both.contains(r#"m{machineid="a\\u{a}b~2"} 1"#), "{both}");
        let three = written(&["a\nb", r"a\u{a}b", r"a\u{a}b~2"]);
        assert!(three.contains(r#"m{machineid="a\\u{a}b~3"} 1"#), "{three}");
    }

    #[test]
    fn families_and_samples_come_sorted_and_end_in_eof() {
        let families = vec![
            Family::new("b_metric", "B")
                .sample(vec![("z", "2".into()), ("a", "y".into())], 1.0)
                .sample(vec![("z", "1".into()), ("a", "x".into())], 0.5),
            Family::new("a_metric", "A\\ line").sample(vec![], 3.0),
        ];
        let mut out = Vec::new();
        write(families, &[], &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "# TYPE a_metric gauge\n# HELP a_metric A\\\\ line\na_metric 3\n\
             # TYPE b_metric gauge\n# HELP b_metric B\nb_metric{a=\"x\",z=\"1\"} 0.5\n\
             b_metric{a=\"y\",z=\"2\"} 1\n# EOF\n"
        );
    }
}
