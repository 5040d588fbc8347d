//! A fleet audit: metal-api's own machine issues (`metalctl machine issues`), evaluated on the
//! container metal-api held as the export shows it and, where the export holds them, on the
//! machine object and its BMC (compared across the fleet as metal-api compares them), plus the
//! issues only a replay can see — machines stuck half-way through provisioning, and machines that keep
//! hitting unexpected transitions. What a machine looks like is gathered while the input is
//! read; the issues are judged at `--now`, known once everything is read.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};

use crate::diagnose::Judged;
use crate::event::{EventKind, Pair, State};
use crate::log::{Bmc, BmcUpdated, Liveliness, MachineLog, Place};
use crate::replay::{Container, Handling, Trace};

mod compared;
mod policy;
mod types;

pub use compared::Compared;
pub use policy::{Policy, cut};
pub use types::{IssueType, Needs, Severity};

/// What the audit needs of one machine: the container metal-api held (the exported flags,
/// liveliness and last error where the input carries them, the replayed ones where not).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineFacts {
    pub machine: String,
    /// The replayed state.
    pub state: State,
    /// The newest stored event.
    pub newest_stored: Option<EventKind>,
    /// When the machine last sent anything: the newest event, or the exported
    /// `last_event_time` where that is newer.
    pub last_event_time: Option<DateTime<Utc>>,
    /// The last error metal-api held (see [`MachineFacts::of`]).
    pub last_error_time: Option<DateTime<Utc>>,
    pub crash_loop: bool,
    pub failed_machine_reclaim: bool,
    pub liveliness: Option<Liveliness>,
    pub allocated: Option<bool>,
    pub no_event_container: bool,
    /// Where the machine is and who has it, where its export says.
    pub place: Option<Arc<Place>>,
    /// Whether a v1 machine object of it was read (metal-metrics-exporter's machine info).
    pub machine_object: bool,
    /// Whether a machine object said its partition (`null` or one).
    pub says_partition: bool,
    /// Its BMC, where a `machine ipmi` export said.
    pub bmc: Option<Arc<Bmc>>,
    /// The machine's unexpected occurrences, as `report` counts them.
    pub unexpected: BTreeMap<Pair, u64>,
}

impl MachineFacts {
    /// Whether metal-api takes the machine for a firewall: allocated, with the role
    /// `firewall`.
    pub fn firewall(&self) -> bool {
        self.allocated == Some(true)
            && self
                .place
                .as_deref()
                .is_some_and(|p| p.role.as_deref() == Some("firewall"))
    }

    /// A firewall's networks' ASNs; none for any other machine.
    fn firewall_asns(&self) -> &[u32] {
        match self.place.as_deref() {
            Some(place) if self.firewall() => &place.asns,
            _ => &[],
        }
    }

    /// Whether the input holds what the type is judged by, for this machine. A machine
    /// without an event container is judged of every type (as metal-api judges it: of that
    /// one only).
    pub fn judges(&self, kind: IssueType) -> bool {
        if self.no_event_container {
            return true;
        }
        match kind.needs() {
            Needs::MachineExport | Needs::Events => true,
            Needs::MachineObject => self.machine_object && self.says_partition,
            Needs::Allocation => self.machine_object && self.allocated.is_some(),
            Needs::Ipmi => self.bmc.as_deref().is_some_and(|b| {
                kind != IssueType::BmcInfoOutdated || b.last_updated != BmcUpdated::Unreadable
            }),
        }
    }
}

impl MachineFacts {
    /// Gathers what the audit needs from a machine's log and its replay.
    pub fn of(log: &MachineLog, trace: &Trace) -> MachineFacts {
        let mut unexpected = BTreeMap::new();
        for step in trace.steps.iter().chain(trace.last_error_only.iter()) {
            if step.handling == Handling::Unexpected {
                *unexpected.entry((step.from, step.event)).or_default() += 1;
            }
        }
        let newest = log.events.last().map(|e| e.time);
        MachineFacts::gather(log, newest, &trace.container, unexpected)
    }

    /// A judged machine's facts as they were at `cut` (as they are now without one); `None`
    /// where it had sent nothing by then (a machine not heard of is not judged at all).
    pub fn at(judged: &Judged, cut: Option<DateTime<Utc>>) -> Option<MachineFacts> {
        match cut {
            Some(cut) if judged.log().newest_event().is_some_and(|t| t > cut) => {
                let then = judged.as_it_was_at(cut)?;
                Some(MachineFacts::of(then.log(), then.trace()))
            }
            _ => Some(MachineFacts::of(judged.log(), judged.trace())),
        }
    }

    /// The same from a machine's records besides its events (`log`, whose events are not
    /// read), the time of its newest event, the container its replay ended with (the
    /// recorded flags in place) and its unexpected steps by pair.
    pub fn gather(
        log: &MachineLog,
        newest: Option<DateTime<Utc>>,
        c: &Container,
        unexpected: BTreeMap<Pair, u64>,
    ) -> MachineFacts {
        let newer_than = |as_of: Option<DateTime<Utc>>| newest > as_of;
        // The exported last error is the one metal-api held; a replayed one replaces it only
        // when it comes from events newer than the export (a replay under other rules finds
        // errors metal-api never stored).
        let recorded = &log.recorded;
        let exported_container = recorded.crash_loop.is_some()
            || recorded.failed_machine_reclaim.is_some()
            || log.last_error_event.is_some();
        let exported_as_of = [recorded.crash_loop, recorded.failed_machine_reclaim]
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_of)
            .chain(recorded.last_event_time)
            .max();
        let replayed_error = c.last_error_event.as_ref().map(|e| e.time);
        let last_error_time = if exported_container {
            let newer = replayed_error.filter(|&t| exported_as_of.is_some_and(|as_of| t > as_of));
            log.last_error_event.as_ref().map(|e| e.time).max(newer)
        } else {
            replayed_error
        };
        MachineFacts {
            machine: log.machine.clone(),
            state: c.state(),
            newest_stored: c.events.front().map(|e| e.event),
            last_event_time: [
                c.last_event_time,
                log.recorded.last_event_time,
                newest,
                log.last_error_event.as_ref().map(|e| e.time),
            ]
            .into_iter()
            .flatten()
            .max(),
            last_error_time,
            crash_loop: c.held_crash_loop(),
            failed_machine_reclaim: c.failed_machine_reclaim,
            // What an export said of the machine holds until a newer event says otherwise.
            liveliness: log
                .recorded
                .liveliness
                .clone()
                .filter(|_| !newer_than(log.recorded.liveliness_as_of)),
            allocated: log
                .machine_info
                .allocated
                .filter(|_| !newer_than(log.machine_info.allocated_as_of)),
            no_event_container: log.machine_info.no_event_container,
            place: log.machine_info.place.clone(),
            machine_object: log.machine_info.machine_object,
            says_partition: log.machine_info.says_partition,
            bmc: log.machine_info.bmc.clone(),
            unexpected,
        }
    }
}

/// One issue of one machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub kind: IssueType,
    /// What it was judged on.
    pub evidence: Evidence,
}

/// What an issue was judged on: the facts output says with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The export holds the machine but no event of it.
    NoEvents,
    /// The liveliness as the export said it, and when the machine last sent an event.
    ExportedLiveliness { last_event: Option<DateTime<Utc>> },
    /// No liveliness exported, and no event time to judge one by.
    NoEventTime,
    /// Computed as metal-api's liveliness job would: silent since `last_event`.
    Silent {
        last_event: DateTime<Utc>,
        allocated: Option<bool>,
    },
    /// The exported failed-reclaim flag.
    ReclaimFlag,
    /// Not allocated, and its newest stored event is Phoned Home.
    PhonedHomeUnallocated,
    /// The crash-loop flag, and the newest stored event.
    CrashLoop { newest: Option<EventKind> },
    /// The last error event's time.
    LastError { at: DateTime<Utc> },
    /// In a state it should pass through, since its last event.
    Stuck { state: State, since: DateTime<Utc> },
    /// The unexpected pairs with their counts, most frequent first.
    Unexpected(Vec<(Pair, u64)>),
    /// A v1 machine object without a partition.
    NoPartition,
    /// The `ipmi` object's `mac` is empty.
    NoBmcMac,
    /// The `ipmi` object's `address` is empty.
    NoBmcAddress,
    /// When the BMC was last reported; `None` for never.
    BmcUpdated { at: Option<DateTime<Utc>> },
    /// The firewall's ASNs that other firewalls announce too, with those machines.
    SharedAsns(Vec<(u32, Vec<String>)>),
    /// The BMC's address, and the other machines whose BMC has it.
    SharedBmcAddress {
        address: String,
        machines: Vec<String>,
    },
}

/// metal-api's bmc-info-outdated: a BMC not reported for longer than this
/// (issues/bmc-info-outdated.go, `20*time.Minute`).
pub const BMC_OUTDATED_AFTER: TimeDelta = TimeDelta::minutes(20);

/// metal-api's liveliness job: more than five minutes without an event is Unknown for an
/// allocated machine (or one whose allocation the input does not tell), Dead otherwise.
pub const DEAD_AFTER: TimeDelta = TimeDelta::minutes(5);

/// The states a machine only passes through.
fn transient(state: State) -> bool {
    matches!(
        state,
        State::PxeBooting
            | State::Preparing
            | State::Registering
            | State::Installing
            | State::BootingNewKernel
            | State::PlannedReboot
            | State::MachineReclaim
            | State::Crashing
    )
}

/// Every issue of one machine of `fleet` at `policy.now`, in output order; a type is judged
/// only where the input holds what it is judged by ([`MachineFacts::judges`]).
pub fn evaluate(m: &MachineFacts, policy: &Policy, compared: &Compared) -> Vec<Issue> {
    let now = policy.now;
    let mut issues = Vec::new();
    let mut add = |kind: IssueType, evidence: Evidence| issues.push(Issue { kind, evidence });
    if m.no_event_container {
        // As in metal-api: a machine without an event container has no other issue.
        add(IssueType::NoEventContainer, Evidence::NoEvents);
        return issues;
    }
    if m.judges(IssueType::NoPartition)
        && m.place
            .as_deref()
            .and_then(|p| p.partition.as_deref())
            .is_none_or(str::is_empty)
    {
        add(IssueType::NoPartition, Evidence::NoPartition);
    }
    // Liveliness: as exported, else as metal-api's liveliness job would set it now. An
    // exported Alive is stale once the machine has been silent for five minutes.
    let silent = m
        .last_event_time
        .is_some_and(|last| now - last > DEAD_AFTER);
    let exported = m
        .liveliness
        .as_ref()
        .filter(|l| !(silent && **l == Liveliness::Alive));
    let (liveliness, how) = match exported {
        Some(exported) => (
            Some(exported.clone()),
            Evidence::ExportedLiveliness {
                last_event: m.last_event_time,
            },
        ),
        None => match m.last_event_time {
            None => (None, Evidence::NoEventTime),
            Some(last) if now - last > DEAD_AFTER => {
                let computed = if m.allocated == Some(false) {
                    Liveliness::Dead
                } else {
                    Liveliness::Unknown
                };
                let silent = Evidence::Silent {
                    last_event: last,
                    allocated: m.allocated,
                };
                (Some(computed), silent)
            }
            Some(_) => (Some(Liveliness::Alive), Evidence::NoEventTime),
        },
    };
    match liveliness {
        Some(Liveliness::Alive) => {}
        Some(Liveliness::Dead) => add(IssueType::LivelinessDead, how),
        Some(Liveliness::Unknown) => add(IssueType::LivelinessUnknown, how),
        Some(Liveliness::Other(_)) | None => add(IssueType::LivelinessNotAvailable, how),
    }
    let not_allocated_phoned_home =
        m.allocated == Some(false) && m.newest_stored == Some(EventKind::PhonedHome);
    if m.failed_machine_reclaim {
        add(IssueType::FailedMachineReclaim, Evidence::ReclaimFlag);
    } else if not_allocated_phoned_home {
        add(
            IssueType::FailedMachineReclaim,
            Evidence::PhonedHomeUnallocated,
        );
    }
    if m.crash_loop && m.newest_stored != Some(EventKind::Waiting) {
        add(
            IssueType::Crashloop,
            Evidence::CrashLoop {
                newest: m.newest_stored,
            },
        );
    }
    if policy.last_error_threshold > TimeDelta::zero()
        && let Some(at) = m.last_error_time
        && now - at < policy.last_error_threshold
    {
        add(IssueType::LastEventError, Evidence::LastError { at });
    }
    if let Some(bmc) = m.bmc.as_deref() {
        if bmc.mac.is_empty() {
            add(IssueType::BmcWithoutMac, Evidence::NoBmcMac);
        }
        if bmc.address.is_empty() {
            add(IssueType::BmcWithoutIp, Evidence::NoBmcAddress);
        }
        // As metal-api: never reported, or longer ago than 20 minutes (`time.Since`, here
        // `--now`).
        match bmc.last_updated {
            BmcUpdated::Never => add(
                IssueType::BmcInfoOutdated,
                Evidence::BmcUpdated { at: None },
            ),
            BmcUpdated::At(at) if now - at > BMC_OUTDATED_AFTER => add(
                IssueType::BmcInfoOutdated,
                Evidence::BmcUpdated { at: Some(at) },
            ),
            BmcUpdated::At(_) | BmcUpdated::Unreadable => {}
        }
    }
    if m.judges(IssueType::AsnNotUnique) {
        let shared = compared.shared_asns(&m.machine, m.firewall_asns());
        if !shared.is_empty() {
            add(IssueType::AsnNotUnique, Evidence::SharedAsns(shared));
        }
    }
    if let Some(bmc) = m.bmc.as_deref() {
        let machines = compared.shared_bmc_address(&m.machine, &bmc.address);
        if !machines.is_empty() {
            let address = bmc.address.clone();
            add(
                IssueType::BmcNoDistinctIp,
                Evidence::SharedBmcAddress { address, machines },
            );
        }
    }
    if transient(m.state)
        && let Some(last) = m.last_event_time
        && now - last > policy.stuck_after
    {
        add(
            IssueType::Stuck,
            Evidence::Stuck {
                state: m.state,
                since: last,
            },
        );
    }
    if !m.unexpected.is_empty() {
        add(
            IssueType::UnexpectedTransitions,
            Evidence::Unexpected(unexpected_pairs(m)),
        );
    }
    issues
}

/// The machines judged together, as metal-api compares them.
pub fn compared(machines: &[MachineFacts]) -> Compared {
    let mut compared = Compared::default();
    for m in machines {
        let bmc = m.bmc.as_deref().map(|b| b.address.as_str());
        compared.add(&m.machine, m.firewall_asns(), bmc);
    }
    compared
}

/// A machine's unexpected (state, event) pairs with their counts, most frequent first.
pub fn unexpected_pairs(m: &MachineFacts) -> Vec<(Pair, u64)> {
    let mut pairs: Vec<_> = m.unexpected.iter().map(|(k, n)| (*k, *n)).collect();
    pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    pairs
}

/// Which issues to show, as metal-api's filters do: `omit` beats `only`, and `severity` keeps
/// those at or above it.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub only: Vec<IssueType>,
    pub omit: Vec<IssueType>,
    pub severity: Option<Severity>,
}

impl Filter {
    /// Whether an issue type passes.
    pub fn keeps(&self, kind: IssueType) -> bool {
        !self.omit.contains(&kind)
            && (self.only.is_empty() || self.only.contains(&kind))
            && self.severity.is_none_or(|s| kind.severity() >= s)
    }
}

/// A machine and its issues, as output shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Audited {
    pub facts: MachineFacts,
    pub issues: Vec<Issue>,
}

impl Audited {
    /// The worst severity among the machine's issues.
    pub fn worst(&self) -> Option<Severity> {
        self.issues.iter().map(|i| i.kind.severity()).max()
    }
}

/// Judges every machine and orders them: worst first, then by id (a machine's issues worst
/// first too); machines without issues only when `all`.
pub fn audit(
    machines: Vec<MachineFacts>,
    policy: &Policy,
    filter: &Filter,
    all: bool,
) -> Vec<Audited> {
    let compared = compared(&machines);
    let mut judged: Vec<Audited> = machines
        .into_iter()
        .map(|facts| {
            let mut issues: Vec<Issue> = evaluate(&facts, policy, &compared)
                .into_iter()
                .filter(|i| filter.keeps(i.kind))
                .collect();
            issues.sort_by_key(|i| std::cmp::Reverse(i.kind.severity()));
            Audited { facts, issues }
        })
        .filter(|j| all || !j.issues.is_empty())
        .collect();
    judged.sort_by(|a, b| {
        b.worst()
            .cmp(&a.worst())
            .then_with(|| a.facts.machine.cmp(&b.facts.machine))
    });
    judged
}

/// How many machines have each issue type.
pub fn counts(judged: &[Audited]) -> BTreeMap<IssueType, u64> {
    let mut counts = BTreeMap::new();
    for j in judged {
        for issue in &j.issues {
            *counts.entry(issue.kind).or_default() += 1;
        }
    }
    counts
}

#[cfg(test)]
mod tests;
