//! Each rule of the audit, and each of its edges, on hand-made machines.

use super::*;

fn t(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

const NOW: &str = "2025-09-22T12:00:00Z";

/// What output says of an issue, at the tests' `NOW`.
fn details(issue: &Issue) -> String {
    crate::render::sentence::details(issue, t(NOW))
}

fn policy() -> Policy {
    Policy {
        now: t(NOW),
        last_error_threshold: TimeDelta::days(7),
        stuck_after: TimeDelta::hours(1),
    }
}

/// A healthy machine: waiting, alive a minute ago, nothing recorded.
fn machine() -> MachineFacts {
    MachineFacts {
        machine: "m".to_string(),
        state: State::Waiting,
        newest_stored: Some(EventKind::Waiting),
        last_event_time: Some(t("2025-09-22T11:59:00Z")),
        last_error_time: None,
        crash_loop: false,
        failed_machine_reclaim: false,
        liveliness: Some("Alive".into()),
        allocated: Some(false),
        no_event_container: false,
        place: None,
        machine_object: false,
        says_partition: false,
        bmc: None,
        unexpected: BTreeMap::new(),
    }
}

/// The machine's issues, judged as a fleet of one.
fn evaluate(m: &MachineFacts, policy: &Policy) -> Vec<Issue> {
    super::evaluate(m, policy, &compared(std::slice::from_ref(m)))
}

fn kinds(m: &MachineFacts) -> Vec<IssueType> {
    evaluate(m, &policy()).into_iter().map(|i| i.kind).collect()
}

#[test]
fn a_healthy_machine_has_no_issue() {
    assert_eq!(kinds(&machine()), vec![]);
}

#[test]
fn crashloop_unless_the_newest_stored_event_is_waiting() {
    let mut m = machine();
    m.crash_loop = true;
    assert_eq!(kinds(&m), vec![], "Waiting is the exception");
    m.newest_stored = Some(EventKind::Preparing);
    m.state = State::Preparing;
    assert_eq!(kinds(&m), vec![IssueType::Crashloop]);
    assert_eq!(IssueType::Crashloop.severity(), Severity::Major);
}

#[test]
fn failed_machine_reclaim_by_the_flag_or_by_phoning_home_unallocated() {
    let mut m = machine();
    m.failed_machine_reclaim = true;
    assert_eq!(kinds(&m), vec![IssueType::FailedMachineReclaim]);
    assert_eq!(
        IssueType::FailedMachineReclaim.severity(),
        Severity::Critical
    );
    let mut m = machine();
    m.state = State::PhonedHome;
    m.newest_stored = Some(EventKind::PhonedHome);
    assert_eq!(
        kinds(&m),
        vec![IssueType::FailedMachineReclaim],
        "allocation null"
    );
    m.allocated = None;
    assert_eq!(kinds(&m), vec![], "allocation not known: not judged");
    m.allocated = Some(true);
    assert_eq!(kinds(&m), vec![]);
}

#[test]
fn last_event_error_within_the_threshold_only() {
    let mut m = machine();
    m.last_error_time = Some(t(NOW) - TimeDelta::days(7) + TimeDelta::seconds(1));
    let issues = evaluate(&m, &policy());
    assert_eq!(issues.len(), 1);
    assert_eq!(issues[0].kind, IssueType::LastEventError);
    assert_eq!(details(&issues[0]), "occurred 6d23h ago");
    m.last_error_time = Some(t(NOW) - TimeDelta::days(7));
    assert_eq!(
        kinds(&m),
        vec![],
        "exactly the threshold is not less than it"
    );
    m.last_error_time = Some(t(NOW) - TimeDelta::hours(51));
    let mut off = policy();
    off.last_error_threshold = TimeDelta::zero();
    assert!(
        evaluate(&m, &off).is_empty(),
        "a zero threshold turns the check off"
    );
    assert_eq!(details(&evaluate(&m, &policy())[0]), "occurred 2d3h ago");
}

#[test]
fn liveliness_as_exported() {
    for (exported, kind) in [
        ("Dead", Some(IssueType::LivelinessDead)),
        ("Unknown", Some(IssueType::LivelinessUnknown)),
        ("", Some(IssueType::LivelinessNotAvailable)),
        ("Alive", None),
    ] {
        let mut m = machine();
        m.liveliness = Some(exported.into());
        assert_eq!(
            kinds(&m),
            kind.into_iter().collect::<Vec<_>>(),
            "{exported:?}"
        );
    }
    // A Dead or Unknown stands however long the machine has been silent.
    let mut m = machine();
    m.liveliness = Some("Unknown".into());
    m.last_event_time = Some(t("2025-01-01T00:00:00Z"));
    assert_eq!(kinds(&m), vec![IssueType::LivelinessUnknown]);
}

#[test]
fn an_exported_alive_goes_stale_after_five_silent_minutes() {
    let mut m = machine();
    m.last_event_time = Some(t(NOW) - DEAD_AFTER);
    assert_eq!(kinds(&m), vec![]);
    m.last_event_time = Some(t(NOW) - DEAD_AFTER - TimeDelta::seconds(1));
    assert_eq!(kinds(&m), vec![IssueType::LivelinessDead], "not allocated");
}

#[test]
fn liveliness_computed_at_now_where_the_export_has_none() {
    let mut m = machine();
    m.liveliness = None;
    m.last_event_time = Some(t(NOW) - DEAD_AFTER);
    assert_eq!(kinds(&m), vec![], "exactly five minutes is still alive");
    m.last_event_time = Some(t(NOW) - DEAD_AFTER - TimeDelta::milliseconds(1));
    m.allocated = Some(false);
    assert_eq!(kinds(&m), vec![IssueType::LivelinessDead]);
    m.allocated = Some(true);
    assert_eq!(kinds(&m), vec![IssueType::LivelinessUnknown]);
    m.allocated = None;
    assert_eq!(
        kinds(&m),
        vec![IssueType::LivelinessUnknown],
        "allocation not known"
    );
    m.last_event_time = None;
    assert_eq!(kinds(&m), vec![IssueType::LivelinessNotAvailable]);
    assert_eq!(
        IssueType::LivelinessNotAvailable.severity(),
        Severity::Minor
    );
}

#[test]
fn a_machine_export_without_events_has_no_event_container() {
    let mut m = machine();
    m.no_event_container = true;
    m.newest_stored = None;
    m.last_event_time = None;
    m.liveliness = None;
    m.state = State::Initial;
    // As in metal-api, no other issue is judged for it.
    assert_eq!(kinds(&m), vec![IssueType::NoEventContainer]);
}

#[test]
fn stuck_in_a_transient_state_beyond_the_limit() {
    let mut m = machine();
    m.state = State::Installing;
    m.newest_stored = Some(EventKind::Installing);
    // Silent for an hour, the machine is also Dead; only `stuck` is looked at here.
    let stuck = |m: &MachineFacts| -> Vec<Issue> {
        evaluate(m, &policy())
            .into_iter()
            .filter(|i| i.kind == IssueType::Stuck)
            .collect()
    };
    m.last_event_time = Some(t(NOW) - TimeDelta::hours(1));
    assert_eq!(stuck(&m), vec![], "exactly an hour is not more than it");
    m.last_event_time = Some(t(NOW) - TimeDelta::hours(1) - TimeDelta::seconds(1));
    let issues = stuck(&m);
    assert_eq!(issues.len(), 1);
    assert_eq!(details(&issues[0]), "in Installing for 1h without an event");
    m.state = State::Waiting;
    assert_eq!(stuck(&m), vec![], "Waiting is where a machine may stay");
    m.state = State::PhonedHome;
    assert_eq!(stuck(&m), vec![]);
}

#[test]
fn unexpected_transitions_most_frequent_first() {
    let mut m = machine();
    m.unexpected = BTreeMap::from([
        ((State::Preparing, EventKind::Preparing), 1),
        ((State::Waiting, EventKind::PxeBooting), 3),
    ]);
    let issues = evaluate(&m, &policy());
    assert_eq!(issues[0].kind, IssueType::UnexpectedTransitions);
    assert_eq!(
        details(&issues[0]),
        "PXE Booting in Waiting ×3, Preparing in Preparing ×1"
    );
}

#[test]
fn filters_omit_beats_only_and_severity_is_at_or_above() {
    let filter = Filter {
        only: vec![IssueType::Crashloop, IssueType::Stuck],
        omit: vec![IssueType::Stuck],
        severity: None,
    };
    assert!(filter.keeps(IssueType::Crashloop));
    assert!(!filter.keeps(IssueType::Stuck));
    assert!(!filter.keeps(IssueType::LastEventError));
    let major = Filter {
        severity: Some(Severity::Major),
        ..Filter::default()
    };
    assert!(major.keeps(IssueType::FailedMachineReclaim));
    assert!(major.keeps(IssueType::Crashloop));
    assert!(!major.keeps(IssueType::UnexpectedTransitions));
}

#[test]
fn the_audit_lists_the_worst_first_then_by_id() {
    let healthy = machine();
    let mut minor = machine();
    minor.machine = "a".to_string();
    minor.unexpected = BTreeMap::from([((State::Waiting, EventKind::PxeBooting), 1)]);
    let mut critical = machine();
    critical.machine = "z".to_string();
    critical.failed_machine_reclaim = true;
    let judged = audit(
        vec![healthy.clone(), minor, critical],
        &policy(),
        &Filter::default(),
        false,
    );
    let ids: Vec<&str> = judged.iter().map(|j| j.facts.machine.as_str()).collect();
    assert_eq!(ids, vec!["z", "a"], "no healthy machine without --all");
    let all = audit(vec![healthy], &policy(), &Filter::default(), true);
    assert_eq!(all.len(), 1);
    assert!(all[0].issues.is_empty());
}

/// A machine as a `machine ipmi` export gives it: in partition `fra`, its BMC at `address`,
/// reported at `updated`.
fn with_bmc(id: &str, address: &str, updated: BmcUpdated) -> MachineFacts {
    MachineFacts {
        machine: id.to_string(),
        machine_object: true,
        says_partition: true,
        place: Some(Arc::new(Place {
            partition: Some("fra".to_string()),
            ..Place::default()
        })),
        bmc: Some(Arc::new(Bmc {
            address: address.to_string(),
            mac: "aa:bb:cc:dd:ee:ff".to_string(),
            last_updated: updated,
        })),
        ..machine()
    }
}

/// A firewall (or, with another role, a machine) whose networks announce `asns`.
fn allocated(id: &str, role: &str, asns: &[u32]) -> MachineFacts {
    MachineFacts {
        machine: id.to_string(),
        machine_object: true,
        says_partition: true,
        allocated: Some(true),
        place: Some(Arc::new(Place {
            partition: Some("fra".to_string()),
            role: Some(role.to_string()),
            asns: asns.to_vec(),
            ..Place::default()
        })),
        ..machine()
    }
}

/// Each machine's issues, judged together.
fn judged_together(machines: &[MachineFacts]) -> Vec<Vec<Issue>> {
    let compared = compared(machines);
    machines
        .iter()
        .map(|m| super::evaluate(m, &policy(), &compared))
        .collect()
}

#[test]
fn bmc_info_is_outdated_after_more_than_twenty_minutes_or_never() {
    let at = |s: &str| BmcUpdated::At(t(s));
    let kinds_at = |updated| kinds(&with_bmc("m", "10.0.0.1", updated));
    assert!(kinds_at(at("2025-09-22T11:40:00Z")).is_empty());
    assert_eq!(
        kinds_at(at("2025-09-22T11:39:59Z")),
        [IssueType::BmcInfoOutdated]
    );
    assert_eq!(kinds_at(BmcUpdated::Never), [IssueType::BmcInfoOutdated]);
    // A time in the future of `--now` is no age.
    assert!(kinds_at(at("2025-09-22T13:00:00Z")).is_empty());
    // A time that could not be read is not judged: no issue, and not judged at all.
    let odd = with_bmc("m", "10.0.0.1", BmcUpdated::Unreadable);
    assert!(kinds(&odd).is_empty());
    assert!(!odd.judges(IssueType::BmcInfoOutdated) && odd.judges(IssueType::BmcWithoutMac));
    // Without an ipmi export none of the four is judged; no-partition needs the member.
    let plain = machine();
    for kind in [
        IssueType::BmcWithoutMac,
        IssueType::BmcWithoutIp,
        IssueType::BmcInfoOutdated,
        IssueType::BmcNoDistinctIp,
        IssueType::NoPartition,
        IssueType::AsnNotUnique,
    ] {
        assert!(!plain.judges(kind), "{kind}");
    }
    let unsaid = MachineFacts {
        machine_object: true,
        ..machine()
    };
    assert!(!unsaid.judges(IssueType::NoPartition) && kinds(&unsaid).is_empty());
    let said = MachineFacts {
        says_partition: true,
        ..unsaid
    };
    assert_eq!(kinds(&said), [IssueType::NoPartition]);
}

#[test]
fn a_machine_without_an_event_container_has_that_issue_alone() {
    // As metal-api's Find: no other type is evaluated, and every type counts as judged (0).
    let m = MachineFacts {
        no_event_container: true,
        says_partition: true,
        ..with_bmc("m", "", BmcUpdated::Never)
    };
    assert_eq!(kinds(&m), [IssueType::NoEventContainer]);
    assert!(IssueType::ALL.into_iter().all(|k| m.judges(k)));
}

#[test]
fn asns_and_bmc_addresses_are_compared_across_the_fleet_as_metal_api_compares_them() {
    let machines = [
        allocated("fw-a", "firewall", &[65001, 0]),
        // 65001 on two of its networks: named twice, as metal-api appends once per network.
        allocated("fw-b", "firewall", &[65001, 65001, 65002]),
        // A machine's ASNs do not count, nor does a freed firewall's.
        allocated("m", "machine", &[65002]),
        MachineFacts {
            allocated: Some(false),
            ..allocated("fw-freed", "firewall", &[65002])
        },
        // 0 is no ASN.
        allocated("fw-zero", "firewall", &[0]),
        with_bmc("bmc-1", "10.1.1.1", BmcUpdated::At(t(NOW))),
        with_bmc("bmc-2", "10.1.1.1", BmcUpdated::At(t(NOW))),
        with_bmc("bmc-empty-1", "", BmcUpdated::At(t(NOW))),
        with_bmc("bmc-empty-2", "", BmcUpdated::At(t(NOW))),
    ];
    let judged = judged_together(&machines);
    let of = |i: usize| -> Vec<String> { judged[i].iter().map(details).collect() };
    assert_eq!(of(0), ["ASN 65001 not unique, shared with fw-b, fw-b"]);
    assert_eq!(of(1), ["ASN 65001 not unique, shared with fw-a"]);
    assert!(of(2).is_empty() && of(3).is_empty() && of(4).is_empty());
    assert_eq!(of(5), ["BMC IP 10.1.1.1 not unique, shared with bmc-2"]);
    assert_eq!(of(6), ["BMC IP 10.1.1.1 not unique, shared with bmc-1"]);
    let empty: Vec<IssueType> = judged[7].iter().map(|i| i.kind).collect();
    assert_eq!(empty, [IssueType::BmcWithoutIp]);
}

#[test]
fn an_earlier_now_forgets_a_bmc_reported_after_it() {
    let mut log = MachineLog::new("m".to_string(), "-", 1, crate::log::Format::ListJson);
    log.machine_info.bmc = Some(Arc::new(Bmc {
        address: "10.0.0.1".to_string(),
        mac: String::new(),
        last_updated: BmcUpdated::At(t("2025-09-22T11:00:00Z")),
    }));
    let mut then = log.clone();
    then.as_it_was_at(t("2025-09-22T11:00:00Z"));
    assert!(then.machine_info.bmc.is_some(), "reported at the cut: kept");
    then.as_it_was_at(t("2025-09-22T10:59:59Z"));
    assert!(
        then.machine_info.bmc.is_none(),
        "reported after the cut: forgotten"
    );
}
