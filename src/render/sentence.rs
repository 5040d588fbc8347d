//! The sentences several renderers print about a finding: what the gate says of a pair, what
//! the audit says of an issue. The domain hands over data; these words are output's.

use chrono::{DateTime, Utc};

use crate::diagnose::{
    ALIVE_TICK, Action, Basis, Class, Component, Kind, PairVerdict, Reboot, SHARE, WINDOW,
};
use crate::event::EventKind;
use crate::gate::{Nothing, PairCheck, Violation};
use crate::issues::{Evidence, Issue};
use crate::window::duration;

/// A sentence for people: what the pair is and why it fails, if it does.
pub fn pair(p: &PairCheck) -> String {
    let what = format!("unexpected {} in state {}", p.event.name(), p.state.name());
    let seen = match &p.tally {
        Some(t) => format!(
            "{} on {} ({:.1}% of the fleet)",
            amount(t.count, "time"),
            amount(t.machines, "machine"),
            p.share * 100.0
        ),
        None => "not seen".to_string(),
    };
    match &p.violation {
        Some(Violation::NewPair) => format!("{what}: {seen}; not in the baseline"),
        Some(Violation::CeilingExceeded { share, ceiling }) => format!(
            "{what}: {seen}; the baseline allows {:.1}% of machines, {:.1}% show it",
            ceiling * 100.0,
            share * 100.0
        ),
        None => format!("{what}: {seen}; accepted by the baseline"),
    }
}

/// Why a gate has nothing to judge: `no machine was read` or `no event was read`.
pub fn nothing(nothing: Nothing) -> &'static str {
    match nothing {
        Nothing::Machines => "no machine was read",
        Nothing::Events => "no event was read",
    }
}

/// An issue's details as of `now`: what it was judged on, in words.
pub fn details(issue: &Issue, now: DateTime<Utc>) -> String {
    let ago =
        |then: DateTime<Utc>| duration((now - then).num_milliseconds().max(0) as f64 / 1000.0);
    match &issue.evidence {
        Evidence::NoEvents => "the export holds the machine but no event of it".to_string(),
        Evidence::ExportedLiveliness {
            last_event: Some(last),
        } => format!("as exported; last event {} ago", ago(*last)),
        Evidence::ExportedLiveliness { last_event: None } => "as exported".to_string(),
        Evidence::NoEventTime => "no event time to judge by".to_string(),
        Evidence::Silent {
            last_event,
            allocated,
        } => {
            let why = match allocated {
                Some(true) => "allocated",
                Some(false) => "not allocated",
                None => "allocation not known",
            };
            format!("last event {} ago, {why}", ago(*last_event))
        }
        Evidence::ReclaimFlag => {
            "phoned home more than 5 minutes after a machine reclaim".to_string()
        }
        Evidence::PhonedHomeUnallocated => {
            "not allocated, and its newest event is Phoned Home".to_string()
        }
        Evidence::CrashLoop { newest } => format!(
            "crash loop flag set; newest stored event {}",
            newest.map_or("none", EventKind::name)
        ),
        Evidence::LastError { at } => format!("occurred {} ago", ago(*at)),
        Evidence::Stuck { state, since } => {
            format!("in {state} for {} without an event", ago(*since))
        }
        Evidence::Unexpected(pairs) => pairs
            .iter()
            .map(|((state, event), n)| format!("{event} in {state} ×{n}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A verdict in one line: its kind, what to do and where, how sure, and the precedent.
pub fn verdict(v: &PairVerdict) -> String {
    let what = match v.action {
        Action::Accept => "add the transition to the FSM".to_string(),
        Action::Swallow => {
            "let the FSM swallow it, as metal-api v0.42.2 does buffered Phoned Home".to_string()
        }
        Action::FixRoot => match v.roots.first() {
            Some(((state, event), _)) => format!("fix its root, {event} in {state}"),
            None => "fix its root".to_string(),
        },
        Action::Investigate => match v.component {
            Some(Component::Machine) => {
                "look at the machine: its boot fails before Waiting".to_string()
            }
            Some(Component::Firmware) => {
                "look at the machine's firmware and its boot order".to_string()
            }
            Some(Component::Fsm) => "look at the FSM".to_string(),
            Some(component) => format!("look at {}", component.name()),
            None if v.kind == Kind::UnannouncedReboot => {
                "look at each machine: its reboots are of several kinds".to_string()
            }
            None => "look at what sends it".to_string(),
        },
        Action::Ignore => "nothing to fix".to_string(),
        Action::None => "not enough to say".to_string(),
    };
    let kind = match v.reboot {
        Some(reboot) => format!("{} ({})", v.kind.name(), reboot_phrase(reboot)),
        None => v.kind.name().to_string(),
    };
    let mut line = format!("verdict: {kind} — {what}");
    if v.kind != Kind::Undecided {
        line.push_str(&format!(
            " · {:.0}% of the occurrences · {}",
            v.share * 100.0,
            machines(v.machines)
        ));
    }
    if let Some(precedent) = v.precedent {
        line.push_str(&format!(" · as in {precedent}"));
    }
    line
}

fn machines(n: u64) -> String {
    amount(n, "machine")
}

/// The noun for `n` of it: `occurrence`, `occurrences`.
pub fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        noun.to_string()
    } else {
        format!("{noun}s")
    }
}

/// `n` and its noun: `1 occurrence`, `3 occurrences`.
pub fn amount(n: u64, noun: &str) -> String {
    format!("{n} {}", plural(n, noun))
}

fn reboot_phrase(reboot: Reboot) -> &'static str {
    match reboot {
        Reboot::InWaiting => "the Planned Reboot did not arrive",
        Reboot::Installation => "the installation rebooted without Crashed",
        Reboot::Reinstall => "a reinstall without an event",
        Reboot::Firmware => "the firmware booted from the network first",
    }
}

fn class_phrase(class: Class) -> String {
    match class {
        Class::Cascade => {
            "cascades of an earlier unexpected event: expected had that one not been stored"
                .to_string()
        }
        Class::Delayed => {
            "late copies of an event the machine had sent before, which it carried on without"
                .to_string()
        }
        Class::SkippedStage => {
            "Installing straight after Registering on a reinstall, and the next stored event is expected"
                .to_string()
        }
        Class::LostEvent(skipped) => format!(
            "two stages ahead on the provisioning path with no {} between, and the next stored event is expected",
            skipped
        ),
        Class::CrashLoop => {
            "a boot that started again before the machine reached Waiting".to_string()
        }
        Class::UnannouncedReboot(reboot) => {
            format!("unannounced reboots: {}", reboot_phrase(reboot))
        }
        Class::Liveness => "Alive where the state expects none".to_string(),
        Class::Unclassified => "of no kind the diagnosis knows".to_string(),
        Class::NoContext => "exported last error events without log rows around them".to_string(),
    }
}

fn counted_classes(classes: &[(Class, u64)]) -> String {
    classes
        .iter()
        .map(|(class, n)| format!("{} ×{n}", class.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a verdict rests on, as a sentence with its numbers.
pub fn basis(e: &Basis) -> String {
    let minutes = |d: chrono::TimeDelta| d.num_minutes();
    match e {
        Basis::Share {
            class,
            n,
            of,
            several,
        } => format!(
            "{n} of {} judged {} {}",
            amount(*of, "occurrence"),
            if *n == 1 { "is" } else { "are" },
            if *several {
                "unannounced reboots, of several kinds".to_string()
            } else {
                class_phrase(*class)
            }
        ),
        Basis::WithoutContext { n } => format!(
            "{n} occurrence{} exported last error event{} only, with no log rows around {} to judge by",
            if *n == 1 { " is an" } else { "s are" },
            if *n == 1 { "" } else { "s" },
            if *n == 1 { "it" } else { "them" },
        ),
        Basis::Mix(classes) => format!(
            "the occurrences judged: {}; a verdict needs one kind for {:.0}% of them",
            counted_classes(classes),
            SHARE * 100.0
        ),
        Basis::Kinds(classes) => format!("of these: {}", counted_classes(classes)),
        Basis::TooFewMachines {
            machines: n,
            needed,
        } => format!(
            "seen on {}; a rule change is a fleet decision and needs {needed} (--min-machines)",
            machines(*n)
        ),
        Basis::Window => format!(
            "each within {} minutes of the previous stored event: metal-api's buffering window (swallowBufferedPhonedHomeThreshold), also its liveliness window (MachineDeadAfter)",
            minutes(WINDOW)
        ),
        Basis::Reinstall => "each machine had phoned home before this boot and was not reclaimed since: a reinstall, on which metal-hammer skips Waiting (cmd/root.go, `m.Allocation.Reinstall`)".to_string(),
        Basis::Lost { skipped } => format!(
            "{} never came: its sender sends it on every boot (only Waiting is skipped, on a reinstall), so it was sent and lost, or never sent",
            skipped
        ),
        Basis::AliveTicker => format!(
            "metal-hammer sends Alive every {} minute while it runs, also while it sleeps before a reboot; metal-api never stores an unexpected Alive",
            minutes(ALIVE_TICK)
        ),
        Basis::OnlyPhonedHome { event } => format!(
            "metal-api can swallow only Phoned Home (buffered by metal-core); a delayed {event} needs a fix where it is sent"
        ),
        Basis::NoSwallowIn { state } => format!(
            "metal-api swallows a buffered Phoned Home only in PXE Booting, Preparing, Registering and Waiting (swallowBufferedPhonedHome); in {state} a `self` rule would store it"
        ),
    }
}
