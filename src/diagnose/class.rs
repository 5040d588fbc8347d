//! What each unexpected occurrence is, judged from the replay around it: the first class that
//! applies. The thresholds are metal-api's and metal-hammer's own constants, never tuned to
//! data.

use chrono::TimeDelta;

use crate::event::{EventKind, State};
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
    /// A late copy of something the machine already said, within the window of the previous
    /// stored step, and the machine carried on as if it had not come (the next unexpected
    /// occurrence is a cascade of it).
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
}

/// Where a state is on the provisioning path.
fn stage(state: State) -> Option<usize> {
    State::PROVISIONING.iter().position(|s| *s == state)
}

/// Every step's class (`None` for a step that is not unexpected), given each step's root.
pub fn classify(trace: &Trace, roots: &[Option<usize>]) -> Vec<Option<Class>> {
    let steps = &trace.steps;
    (0..steps.len())
        .map(|i| (steps[i].handling == Handling::Unexpected).then(|| class(trace, roots, i)))
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

fn class(trace: &Trace, roots: &[Option<usize>], i: usize) -> Class {
    let steps = &trace.steps;
    let step = &steps[i];
    if roots[i].is_some() {
        return Class::Cascade;
    }
    let previous_stored = steps[..i].iter().rev().find(|s| s.stored);
    let soon = previous_stored.is_some_and(|p| step.time - p.time < WINDOW);
    let said_before = steps[..i].iter().any(|s| s.stored && s.event == step.event);
    let next_unexpected = (i + 1..steps.len()).find(|&k| steps[k].handling == Handling::Unexpected);
    if step.stored && said_before && soon && next_unexpected.is_some_and(|k| roots[k] == Some(i)) {
        return Class::Delayed;
    }
    let next_stored = steps[i + 1..].iter().find(|s| s.stored);
    let skipped = match (stage(step.from), stage(step.event.home_state())) {
        (Some(from), Some(to)) if to == from + 2 => Some(State::PROVISIONING[from + 1]),
        _ => None,
    };
    let carried_on = next_stored.is_some_and(|s| s.handling == Handling::Expected);
    match skipped {
        Some(State::Waiting) if carried_on && reinstalling(steps, i) => {
            return Class::SkippedStage;
        }
        // Waiting skipped without a sign of a reinstall: no class says why.
        Some(State::Waiting) => {}
        Some(skipped) if carried_on => return Class::LostEvent(skipped),
        _ => {}
    }
    let boot = matches!(step.event, EventKind::PxeBooting | EventKind::Preparing);
    match step.from {
        State::PxeBooting | State::Preparing | State::Registering if boot => Class::CrashLoop,
        State::Waiting if boot => Class::UnannouncedReboot(Reboot::InWaiting),
        State::Installing | State::BootingNewKernel if boot => {
            Class::UnannouncedReboot(Reboot::Installation)
        }
        State::PhonedHome if boot => {
            // What followed: the next stored event of an export; in a raw stream (which holds
            // those metal-api swallowed too) the next event that can tell, past the DHCP
            // retries and Alive ticks that an export does not store either.
            let next = if trace.annotated {
                next_stored
            } else {
                steps[i + 1..]
                    .iter()
                    .find(|s| !matches!(s.event, EventKind::PxeBooting | EventKind::Alive))
            };
            let went_on = step.event == EventKind::Preparing
                || next.is_some_and(|s| s.event == EventKind::Preparing);
            Class::UnannouncedReboot(if went_on {
                Reboot::Reinstall
            } else {
                Reboot::Firmware
            })
        }
        _ if step.event == EventKind::Alive => Class::Liveness,
        _ => Class::Unclassified,
    }
}
