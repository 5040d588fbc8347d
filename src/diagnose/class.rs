//! What each unexpected occurrence is, judged from the replay around it: the first class that
//! applies. The thresholds are metal-api's and metal-hammer's own constants, never tuned to
//! data.

use chrono::TimeDelta;

use crate::event::{EventKind, EventName, State};
use crate::log::MachineLog;
use crate::replay::{Handling, Step, Trace};

/// metal-api's windows: a Phoned Home within five minutes of the last event is swallowed as
/// buffered (`swallowBufferedPhonedHomeThreshold`), a machine silent for five minutes is no
/// longer alive (`MachineDeadAfter`).
pub const WINDOW: TimeDelta = TimeDelta::minutes(5);

/// metal-hammer's Alive ticker: one Alive a minute while it runs.
pub const ALIVE_TICK: TimeDelta = TimeDelta::minutes(1);

/// What an unexpected occurrence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Expected had the event of an earlier unexpected occurrence (its root) not been stored.
    Cascade,
    /// Late, as metal-api's buffering window measures it (a Phoned Home, or a copy of an
    /// event the machine already sent), and the machine carried on as if it had not come.
    Delayed,
    /// Installing straight after Registering on a reinstall (the machine had phoned home, and
    /// no Machine Reclaim came since), and the next stored step is expected: metal-hammer
    /// skips Waiting on a reinstall, the one stage it skips by design.
    SkippedStage,
    /// Two stages ahead on the provisioning path, the machine carrying on (the next stored
    /// step is expected), where the stage between is one its sender never skips: its event
    /// was sent and lost, or never sent.
    LostEvent(State),
    /// PXE Booting or Preparing before the machine reached Waiting: the boot started again.
    CrashLoop,
    /// PXE Booting or Preparing after the machine got further, without the event that would
    /// have moved it out of that state.
    UnannouncedReboot(Reboot),
    /// Alive in a state that does not expect it.
    Liveness,
    /// None of the above.
    Unclassified,
    /// An exported last error event, not a row of the log: nothing around it to judge by.
    NoContext,
}

impl Class {
    /// The name in output.
    pub fn name(self) -> &'static str {
        match self {
            Class::Cascade => "cascade",
            Class::Delayed => "delayed",
            Class::SkippedStage => "skipped-stage",
            Class::LostEvent(_) => "lost-event",
            Class::CrashLoop => "crash-loop",
            Class::UnannouncedReboot(Reboot::InWaiting) => "unannounced-reboot in Waiting",
            Class::UnannouncedReboot(Reboot::Installation) => {
                "unannounced-reboot during the installation"
            }
            Class::UnannouncedReboot(Reboot::Reinstall) => "unannounced-reboot: a reinstall",
            Class::UnannouncedReboot(Reboot::Firmware) => "unannounced-reboot: the firmware",
            Class::UnannouncedReboot(Reboot::AfterPhonedHome) => {
                "unannounced-reboot after Phoned Home"
            }
            Class::Liveness => "liveness",
            Class::Unclassified => "unclassified",
            Class::NoContext => "without context",
        }
    }
}

/// Which unannounced reboot, by where it came and what followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reboot {
    /// In Waiting: the Planned Reboot did not arrive.
    InWaiting,
    /// In Installing or Booting New Kernel: the installation rebooted without Crashed.
    Installation,
    /// After Phoned Home, and provisioning went on: a reinstall without an event.
    Reinstall,
    /// After Phoned Home, and the machine came back from its disk: the firmware booted from
    /// the network first.
    Firmware,
    /// After Phoned Home, with nothing after it that tells which.
    AfterPhonedHome,
}

/// Where a state is on the provisioning path.
fn stage(state: State) -> Option<usize> {
    State::PROVISIONING.iter().position(|s| *s == state)
}

/// Every step's class (`None` for a step that is not unexpected), given each step's root and
/// whether an export's last event time is later than its newest stored event (see
/// [`moved_past_newest`]).
pub fn classify(trace: &Trace, roots: &[Option<usize>], moved: bool) -> Vec<Option<Class>> {
    let steps = &trace.steps;
    (0..steps.len())
        .map(|i| (steps[i].handling == Handling::Unexpected).then(|| class(trace, roots, i, moved)))
        .collect()
}

/// The class of an exported last error event that is no row of the log: only Alive needs no
/// context.
pub fn outside(step: &Step) -> Class {
    if step.event == EventKind::Alive {
        Class::Liveness
    } else {
        Class::NoContext
    }
}

/// Whether the boot that step `i` belongs to is a reinstall, as the log can tell: the machine
/// had phoned home (it was installed and allocated), and no Machine Reclaim came since (a
/// reinstall keeps the allocation; a freed machine is provisioned anew).
fn reinstalling(steps: &[Step], i: usize) -> bool {
    steps[..i]
        .iter()
        .rev()
        .take_while(|s| s.event != EventKind::MachineReclaim)
        .any(|s| s.stored && s.event == EventKind::PhonedHome)
}

fn class(trace: &Trace, roots: &[Option<usize>], i: usize, moved: bool) -> Class {
    let steps = &trace.steps;
    let step = &steps[i];
    if roots[i].is_some() {
        return Class::Cascade;
    }
    let next_stored = steps[i + 1..].iter().find(|s| s.stored);
    let skipped = match (stage(step.from), stage(step.event.home_state())) {
        (Some(from), Some(to)) if to == from + 2 => Some(State::PROVISIONING[from + 1]),
        _ => None,
    };
    let carried_on = next_stored.is_some_and(|s| s.handling == Handling::Expected)
        || kept_phoning_home(trace, i, moved);
    match skipped {
        Some(State::Waiting) if carried_on && reinstalling(steps, i) => {
            return Class::SkippedStage;
        }
        // Waiting skipped without a sign of a reinstall: no class says why.
        Some(State::Waiting) => {}
        Some(skipped) if carried_on => return Class::LostEvent(skipped),
        _ => {}
    }
    if delayed(steps, roots, i) {
        return Class::Delayed;
    }
    let boot = matches!(step.event, EventKind::PxeBooting | EventKind::Preparing);
    match step.from {
        State::PxeBooting | State::Preparing | State::Registering if boot => Class::CrashLoop,
        State::Waiting if boot => Class::UnannouncedReboot(Reboot::InWaiting),
        State::Installing | State::BootingNewKernel if boot => {
            Class::UnannouncedReboot(Reboot::Installation)
        }
        State::PhonedHome if boot => Class::UnannouncedReboot(after_phoned_home(trace, i)),
        _ if step.event == EventKind::Alive => Class::Liveness,
        _ => Class::Unclassified,
    }
}

/// Whether step `i` came late, as metal-api's buffering measures it: less than the window
/// after the container's last event time (every event metal-api took in, stored or not,
/// Alive included), and the machine carried on as if it had not come (the next unexpected
/// occurrence is a cascade of it). metal-core buffers Phoned Home, so any Phoned Home can be
/// late; another event only as a copy of one the machine sent within the window.
fn delayed(steps: &[Step], roots: &[Option<usize>], i: usize) -> bool {
    let step = &steps[i];
    let soon = step.within(WINDOW);
    // A boot event again is a new boot (a crash loop, a reboot), never a late copy; another
    // event is a copy of one stored within the window.
    let boot = matches!(step.event, EventKind::PxeBooting | EventKind::Preparing);
    let copy = step.event == EventKind::PhonedHome
        || (!boot
            && steps[..i]
                .iter()
                .rev()
                .take_while(|s| step.time - s.time < WINDOW)
                .any(|s| s.stored && s.event == step.event));
    let next_unexpected = (i + 1..steps.len()).find(|&k| steps[k].handling == Handling::Unexpected);
    step.stored && soon && copy && next_unexpected.is_some_and(|k| roots[k] == Some(i))
}

/// Whether the machine stayed phoned home after step `i`, a Phoned Home: metal-core phones
/// home again each minute and metal-api takes each in without storing it (`PhonedHomeState`
/// moves only the last event time), so no stored step follows to show that it carried on. A
/// raw stream holds those Phoned Home events (before the next stored one, which must not be
/// the Booting New Kernel said lost: then it came, late); an export holds nothing stored after
/// it, and a last event time later than its newest stored event that no Alive explains (see
/// [`moved_past_newest`]).
fn kept_phoning_home(trace: &Trace, i: usize, moved: bool) -> bool {
    if trace.steps[i].event != EventKind::PhonedHome {
        return false;
    }
    let later = &trace.steps[i + 1..];
    let next_stored = later.iter().find(|s| s.stored);
    if next_stored.is_some_and(|s| s.event == EventKind::BootingNewKernel) {
        return false;
    }
    let taken_in = later
        .iter()
        .take_while(|s| !s.stored)
        .any(|s| s.event == EventKind::PhonedHome && s.handling == Handling::Expected);
    taken_in || (trace.annotated && moved && next_stored.is_none())
}

/// Which reboot a network boot straight after Phoned Home (step `i`) is, by what followed:
/// Preparing (metal-hammer ran) is a reinstall without an event; the machine back on its
/// disk (Phoned Home without metal-hammer's events) is the firmware booting from the network
/// first; anything else, or nothing, names no cause. An export's last event time past its
/// newest stored PXE Booting is no evidence of the disk: metal-api moves it for a repeated
/// DHCP request (`PXEBootingState`, "swallow repeated pxe booting events") as for a Phoned
/// Home, and stores neither. Nor is a Phoned Home less than the window after the last event:
/// metal-core buffers Phoned Home, so it may be one from before the reboot (v0.42.2 swallows
/// it as buffered); nor one metal-hammer's events follow.
fn after_phoned_home(trace: &Trace, i: usize) -> Reboot {
    let steps = &trace.steps;
    if steps[i].event == EventKind::Preparing {
        return Reboot::Reinstall;
    }
    // What followed: the stored events of an export; in a raw stream (which holds those
    // metal-api swallowed too) every event, past the DHCP retries and Alive ticks that an
    // export does not store either.
    let telling = |s: &&Step| {
        if trace.annotated {
            s.stored
        } else {
            !matches!(s.event, EventKind::PxeBooting | EventKind::Alive)
        }
    };
    let buffered = |s: &&Step| s.event == EventKind::PhonedHome && s.within(WINDOW);
    let Some(k) = (i + 1..steps.len()).find(|&k| {
        let s = &steps[k];
        telling(&s) && !buffered(&s)
    }) else {
        return Reboot::AfterPhonedHome;
    };
    match steps[k].event {
        EventKind::Preparing => Reboot::Reinstall,
        EventKind::PhonedHome if !hammer_after(trace, k) => Reboot::Firmware,
        _ => Reboot::AfterPhonedHome,
    }
}

/// Whether metal-hammer's events follow step `k` (a Phoned Home) before anything else but
/// Phoned Home: then metal-hammer ran, and the machine was not on its disk. A raw stream's
/// Alive is metal-hammer's ticker; an export stores none.
fn hammer_after(trace: &Trace, k: usize) -> bool {
    let next = trace.steps[k + 1..]
        .iter()
        .filter(|s| !trace.annotated || s.stored)
        .find(|s| s.event != EventKind::PhonedHome);
    next.is_some_and(|s| {
        matches!(
            s.event,
            EventKind::Preparing
                | EventKind::Registering
                | EventKind::Waiting
                | EventKind::Installing
                | EventKind::BootingNewKernel
                | EventKind::Crashed
                | EventKind::Alive
        )
    })
}

/// Whether an export's last event time is later than its newest stored event: metal-api took
/// in events after it and stored none of them. Not where the export's last error event is an
/// Alive after that event: metal-api moves the last event time for an unexpected Alive too
/// (`HandleProvisioningEvent`, the `InvalidEventError` path), and metal-hammer was running.
pub fn moved_past_newest(log: &MachineLog, trace: &Trace) -> bool {
    let Some(newest) = trace.container.events.front().map(|e| e.time) else {
        return false;
    };
    let alive_after = log
        .last_error_event
        .as_ref()
        .is_some_and(|e| e.name == EventName::Known(EventKind::Alive) && e.time > newest);
    trace.annotated
        && !alive_after
        && log
            .recorded
            .last_event_time
            .is_some_and(|last| last > newest)
}

/// metal-hammer's autoreboot (cmd/root.go, pkg/kernel/kernel.go): started right after it
/// sends Preparing, it waits 24 hours plus a random spread of up to 24 hours, sends Planned
/// Reboot, and reboots ten seconds later.
pub const AUTOREBOOT_AFTER: TimeDelta = TimeDelta::hours(24);
/// The autoreboot's longest wait: 48 hours, and the ten seconds to its reboot.
pub const AUTOREBOOT_LONGEST: TimeDelta = TimeDelta::seconds(48 * 3600 + 10);
/// The reboot and the firmware's POST before the DHCP request metal-api records as PXE
/// Booting: 76 s in metal-api#464's own log (Planned Reboot to PXE Booting); a server with
/// much memory or many devices takes minutes.
pub const AUTOREBOOT_POST: TimeDelta = TimeDelta::minutes(5);
/// The latest PXE Booting the autoreboot explains.
pub const AUTOREBOOT_UNTIL: TimeDelta = AUTOREBOOT_LONGEST.checked_add(&AUTOREBOOT_POST).unwrap();

/// Whether step `i` came in metal-hammer's autoreboot window after the machine's last
/// Preparing before it; `None` when the data holds no Preparing before it.
pub fn in_autoreboot_window(steps: &[Step], i: usize) -> Option<bool> {
    let started = steps[..i]
        .iter()
        .rev()
        .find(|s| s.event == EventKind::Preparing)?;
    let waited = steps[i].time - started.time;
    Some((AUTOREBOOT_AFTER..=AUTOREBOOT_UNTIL).contains(&waited))
}
