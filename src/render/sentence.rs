//! The sentences several renderers print about a finding: what the gate says of a pair, what
//! the audit says of an issue. The domain hands over data; these words are output's.

use chrono::{DateTime, Utc};

use crate::diagnose::{
    ALIVE_TICK, AUTOREBOOT_AFTER, AUTOREBOOT_LONGEST, AUTOREBOOT_POST, Action, Autoreboot, Basis,
    Class, Component, HandledBy, How, Kind, Lack, PairVerdict, Reboot, SHARE, WINDOW,
};
use crate::event::{EventKind, State};
use crate::gate::{Nothing, PairCheck, Violation};
use crate::issues::{Evidence, Issue, Needs};
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

/// Why a gate has nothing to judge: `no machine was read`, `no event was read`, or none of
/// metal-api's.
pub fn nothing(nothing: Nothing) -> &'static str {
    match nothing {
        Nothing::Machines => "no machine was read",
        Nothing::Events => "no event was read",
        Nothing::Judged => "no event read is one of metal-api's (each is an unknown event)",
        Nothing::Window => "no event read falls in the window (--since, --until)",
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
        Evidence::NoPartition => "the machine object names no partition".to_string(),
        Evidence::NoBmcMac => "the ipmi export's mac is empty".to_string(),
        Evidence::NoBmcAddress => "the ipmi export's address is empty".to_string(),
        Evidence::BmcUpdated { at: None } => "machine ipmi has never been set".to_string(),
        Evidence::BmcUpdated { at: Some(at) } => format!("last updated {} ago", ago(*at)),
        Evidence::SharedAsns(shared) => shared
            .iter()
            .map(|(asn, ids)| format!("ASN {asn} not unique, shared with {}", ids.join(", ")))
            .collect::<Vec<_>>()
            .join("; "),
        Evidence::SharedBmcAddress { address, machines } => format!(
            "BMC IP {address} not unique, shared with {}",
            machines.join(", ")
        ),
    }
}

/// What an issue type needs, as JSON names it.
pub fn needs_id(needs: Needs) -> &'static str {
    match needs {
        Needs::Events => "events",
        Needs::MachineExport => "machine-export",
        Needs::MachineObject => "machine-object",
        Needs::Allocation => "allocation",
        Needs::Ipmi => "ipmi",
    }
}

/// What an issue type needs, in words: the exports it is judged from.
pub fn needs(needs: Needs) -> &'static str {
    match needs {
        Needs::Events => "any export",
        Needs::MachineExport => "a machine export (describe, list, ipmi, v2, event API, dump)",
        Needs::MachineObject => "a v1 machine object (describe, list, ipmi)",
        Needs::Allocation => "a v1 machine object with its allocation (describe, list, ipmi)",
        Needs::Ipmi => "metalctl machine ipmi -o json",
    }
}

/// A verdict in one line: its kind, what to do and where, how sure, the precedent, and the
/// newer release that already handles it.
pub fn verdict(v: &PairVerdict) -> String {
    let mut line = verdict_head(v);
    if let Some(precedent) = v.precedent {
        line.push_str(&format!(" · as in {}", precedent.name()));
    }
    if let Some(h) = &v.handled_by {
        line.push_str(&format!(" · {}", handled(h)));
    }
    line
}

/// A verdict's kind, what to do and where, and how sure: its line before the precedent.
pub fn verdict_head(v: &PairVerdict) -> String {
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
            None if v.reboot == Some(Reboot::AfterPhonedHome) => {
                "look at each machine: nothing after the reboot tells its cause".to_string()
            }
            None if v.kind == Kind::UnannouncedReboot => {
                "look at each machine: its reboots are of several kinds".to_string()
            }
            None => "look at what sends it".to_string(),
        },
        Action::Ignore => "nothing to fix".to_string(),
        Action::None => match v.lacking {
            Some(Lack::Machines {
                machines: n,
                needed,
                action,
            }) => format!(
                "{}; {} {} needs {needed} (--min-machines)",
                machines(n),
                article(action.name()),
                action.name()
            ),
            Some(Lack::Share) => format!("no kind has {:.0}% of the occurrences", SHARE * 100.0),
            Some(Lack::Context) | None => {
                "no occurrence has log rows around it to judge by".to_string()
            }
        },
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
    line
}

/// Where a user of an older release stands: `metal-api v0.19.3 accepts this
/// (metal-api#325): upgrade`.
pub fn handled(h: &HandledBy) -> String {
    match h.precedent {
        Some(p) => format!("{} ({}){}", handled_release(h), p.name(), handled_tail(h)),
        None => format!("{}{}", handled_release(h), handled_tail(h)),
    }
}

/// The release that handles a pair, and how: `metal-api v0.19.3 accepts this`; `metal-api
/// v0.42.2 swallows 2 of these 3, those less than 5 minutes after the machine's last event`
/// where it handles only some.
pub fn handled_release(h: &HandledBy) -> String {
    let verb = match h.how {
        How::Expected => "accepts",
        How::Swallowed => "swallows",
    };
    let release = h.rules.replacen("-v", " v", 1);
    if h.partly() {
        format!(
            "{release} {verb} {} of these {}, those less than {} minutes after the machine's last event",
            h.occurrences,
            h.of,
            WINDOW.num_minutes()
        )
    } else {
        format!("{release} {verb} this")
    }
}

/// What follows the release and its precedent: upgrade, or where it handles only some of the
/// occurrences, what it does with the rest (only what its replay of the machines showed).
pub fn handled_tail(h: &HandledBy) -> String {
    if !h.partly() {
        return ": upgrade".to_string();
    }
    let mut tail = String::new();
    if h.later > 0 {
        tail.push_str(&format!(
            "; for {} it stores a Phoned Home that came {} minutes or more after the machine's last event as it holds it",
            h.later,
            WINDOW.num_minutes()
        ));
        let t = h.then_unexpected;
        if t == h.later {
            tail.push_str(", and the next event other than Phoned Home is then unexpected");
        } else if t > 0 {
            tail.push_str(&format!(
                ", and on {t} of them the next event other than Phoned Home is then unexpected"
            ));
        }
    }
    let unknown = h.of.saturating_sub(h.occurrences + h.later);
    if unknown > 0 {
        tail.push_str(&format!(
            "; {unknown} {} no event before {} to measure from",
            if unknown == 1 { "has" } else { "have" },
            if unknown == 1 { "it" } else { "them" }
        ));
    }
    tail
}

fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
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
        Reboot::AfterPhonedHome => "after Phoned Home, nothing after it tells which",
    }
}

/// What `n` occurrences of a class are, singular or plural with `n`.
fn class_phrase(class: Class, n: u64) -> String {
    let one = n == 1;
    let pick = |single: &str, many: &str| if one { single } else { many }.to_string();
    match class {
        Class::Cascade => format!(
            "{} of an earlier unexpected event: expected had that one not been stored",
            pick("a cascade", "cascades")
        ),
        Class::Delayed => format!(
            "late: within metal-api's buffering window, and the machine carried on as if {} had not come",
            pick("it", "they")
        ),
        Class::SkippedStage => {
            "Installing straight after Registering on a reinstall, and the next stored event is expected"
                .to_string()
        }
        Class::LostEvent(State::BootingNewKernel) => format!(
            "two stages ahead on the provisioning path with no {} between, and the next stored event is expected or the machine kept phoning home (metal-api stores none of those)",
            State::BootingNewKernel
        ),
        Class::LostEvent(skipped) => format!(
            "two stages ahead on the provisioning path with no {} between, and the next stored event is expected",
            skipped
        ),
        Class::CrashLoop => format!(
            "{} before the machine reached Waiting",
            pick("a boot that started again", "boots that started again")
        ),
        Class::UnannouncedReboot(reboot) => format!(
            "{}: {}",
            pick("an unannounced reboot", "unannounced reboots"),
            reboot_phrase(reboot)
        ),
        Class::Liveness => "Alive where the state expects none".to_string(),
        Class::Unclassified => "of no kind the diagnosis knows".to_string(),
        Class::NoContext => pick(
            "an exported last error event without log rows around it",
            "exported last error events without log rows around them",
        ),
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
                class_phrase(*class, *n)
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
            action,
        } => format!(
            "seen on {}; {} {} is a rule change, a fleet decision, and needs {needed} (--min-machines)",
            machines(*n),
            article(action.name()),
            action.name()
        ),
        Basis::OneDecision {
            event,
            action,
            machines: n,
        } => format!(
            "one decision for {event} in every state the same rule change would {} it in: {} in all",
            action.name(),
            machines(*n)
        ),
        Basis::Window => format!(
            "each less than {} minutes after the machine's last event (the container's last event time, which every event metal-api takes in moves, Alive included): metal-api's buffering window (swallowBufferedPhonedHomeThreshold)",
            minutes(WINDOW)
        ),
        Basis::Autoreboot { counts, of } => autoreboot(*counts, *of),
        Basis::Reinstall => "each machine had phoned home before this boot and was not reclaimed since: a reinstall, on which metal-hammer skips Waiting (cmd/root.go, `m.Allocation.Reinstall`)".to_string(),
        Basis::Lost { skipped } => format!(
            "{} never came: its sender sends it on every boot (only Waiting is skipped, on a reinstall), so it was sent and lost, or never sent",
            skipped
        ),
        Basis::AliveTicker => format!(
            "metal-hammer sends Alive every {} minute while it runs, also while it sleeps before a reboot; metal-api never stores an unexpected Alive",
            minutes(ALIVE_TICK)
        ),
        Basis::BackOnDisk => "the evidence: a Phoned Home after the network boot with none of metal-hammer's events before or after it (in an export one metal-api stored, in a raw stream the next event past DHCP retries and Alive ticks), 5 minutes or more after the machine's last event (a sooner one may be buffered from before the boot): the machine came back from its disk".to_string(),
        Basis::NothingAfter => "nothing after the network boot tells its cause: a Preparing would (a reinstall), a Phoned Home 5 minutes or more after the last event with none of metal-hammer's events before or after it would (the disk); an export's last event time later than its newest stored PXE Booting does not, since metal-api moves it for a repeated DHCP request as for a Phoned Home and stores neither (pxe-booting.go)".to_string(),
        Basis::OnlyPhonedHome { event } => format!(
            "metal-api can swallow only Phoned Home (buffered by metal-core); a delayed {event} needs a fix where it is sent"
        ),
        Basis::NoSwallowIn { state } => format!(
            "metal-api swallows a buffered Phoned Home only in PXE Booting, Preparing, Registering and Waiting (swallowBufferedPhonedHome); in {state} a `self` rule would store it"
        ),
    }
}

/// The reboots in Waiting by metal-hammer's autoreboot window, and what each means.
fn autoreboot(a: Autoreboot, of: u64) -> String {
    let window = format!(
        "{} h to {} h {} s after the machine's last Preparing (and {} minutes more for the reboot and the firmware's POST)",
        AUTOREBOOT_AFTER.num_hours(),
        AUTOREBOOT_LONGEST.num_hours(),
        AUTOREBOOT_LONGEST.num_seconds() % 60,
        AUTOREBOOT_POST.num_minutes()
    );
    let mut parts = vec![
        format!(
            "of the reboots in Waiting, {} {window}: metal-hammer's autoreboot, whose Planned Reboot was lost (its log is on the serial console)",
            came(a.inside)
        ),
        format!(
            "{} sooner or later: a crash or a power cycle (the IPMI event log tells which)",
            came(a.outside)
        ),
    ];
    let unknown = of.saturating_sub(a.inside + a.outside);
    if unknown > 0 {
        parts.push(format!(
            "{unknown} {} no Preparing before {} in the data to measure from",
            if unknown == 1 { "has" } else { "have" },
            if unknown == 1 { "it" } else { "them" }
        ));
    }
    parts.join("; ")
}

fn came(n: u64) -> String {
    match n {
        0 => "none came".to_string(),
        n => format!("{n} came"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(class: Class, n: u64, of: u64) -> String {
        basis(&Basis::Share {
            class,
            n,
            of,
            several: false,
        })
    }

    #[test]
    fn a_share_agrees_with_its_numbers() {
        assert_eq!(
            share(Class::Cascade, 1, 1),
            "1 of 1 occurrence judged is a cascade of an earlier unexpected event: expected had that one not been stored"
        );
        assert!(
            share(Class::Cascade, 2, 3).starts_with("2 of 3 occurrences judged are cascades of")
        );
        assert!(share(Class::Delayed, 1, 1).ends_with("as if it had not come"));
        assert!(share(Class::Delayed, 2, 2).ends_with("as if they had not come"));
        assert!(
            share(Class::UnannouncedReboot(Reboot::InWaiting), 1, 2)
                .starts_with("1 of 2 occurrences judged is an unannounced reboot:")
        );
        assert!(share(Class::CrashLoop, 1, 1).contains("is a boot that started again"));
    }

    #[test]
    fn the_autoreboot_sentence_counts_what_it_could_not_measure() {
        let a = Autoreboot {
            inside: 1,
            outside: 0,
        };
        assert_eq!(
            autoreboot(a, 3),
            "of the reboots in Waiting, 1 came 24 h to 48 h 10 s after the machine's last Preparing (and 5 minutes more for the reboot and the firmware's POST): metal-hammer's autoreboot, whose Planned Reboot was lost (its log is on the serial console); none came sooner or later: a crash or a power cycle (the IPMI event log tells which); 2 have no Preparing before them in the data to measure from"
        );
        assert!(!autoreboot(a, 1).contains("no Preparing"));
    }
}
