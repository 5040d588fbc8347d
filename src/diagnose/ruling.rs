//! What metal-stack did about each class of occurrence, one ruling per class: the verdict's
//! kind, what to do, where the fix belongs, and the metal-stack issue or pull request where it
//! was decided. metal-api accepted one pair into its FSM in all its history (#325), swallowed
//! one (#631); every other fix belongs to the component that sends the event.

use super::class::{Class, Reboot};
use crate::event::{EventKind, State};

/// What the verdict says a pair is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// It follows another unexpected event: fix that one.
    Cascade,
    /// The FSM should swallow it: a late copy the machine carried on without.
    Swallow,
    /// The FSM should accept it: a stage skipped on purpose.
    Accept,
    /// The boot started again before Waiting, flagged on purpose.
    CrashLoop,
    /// The machine booted again without the event that would have moved it on.
    UnannouncedReboot,
    /// Alive where metal-api does not expect it; metal-api never stores it.
    Liveness,
    /// No class has enough of the occurrences, or a rule change would rest on too few
    /// machines.
    Undecided,
    /// An event its sender sends on every boot never came: look at the sender.
    LostEvent,
}

impl Kind {
    /// The name in output.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Accept => "accept",
            Kind::LostEvent => "lost-event",
            Kind::Swallow => "swallow",
            Kind::Cascade => "cascade",
            Kind::CrashLoop => "crash-loop",
            Kind::UnannouncedReboot => "unannounced-reboot",
            Kind::Liveness => "liveness",
            Kind::Undecided => "undecided",
        }
    }
}

impl Class {
    /// The kind of verdict a pair of this class gets.
    pub fn kind(self) -> Kind {
        match self {
            Class::Cascade => Kind::Cascade,
            Class::Delayed => Kind::Swallow,
            Class::SkippedStage => Kind::Accept,
            Class::LostEvent(_) => Kind::LostEvent,
            Class::CrashLoop => Kind::CrashLoop,
            Class::UnannouncedReboot(_) => Kind::UnannouncedReboot,
            Class::Liveness => Kind::Liveness,
            Class::Unclassified | Class::NoContext => Kind::Undecided,
        }
    }
}

/// What to do about a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Accept,
    Swallow,
    /// Fix the root the pair is a cascade of.
    FixRoot,
    /// Look at the component named.
    Investigate,
    /// Nothing is wrong.
    Ignore,
    /// Not known yet.
    None,
}

impl Action {
    /// The name in output.
    pub fn name(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Swallow => "swallow",
            Action::FixRoot => "fix-root",
            Action::Investigate => "investigate",
            Action::Ignore => "ignore",
            Action::None => "none",
        }
    }

    /// Whether the action changes metal-api's rules: a fleet decision.
    pub fn changes_rules(self) -> bool {
        matches!(self, Action::Accept | Action::Swallow)
    }
}

/// Where the fix belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    Fsm,
    MetalHammer,
    /// Sends Phoned Home, from the installed OS's LLDP frames (its `phone-home.go`).
    MetalCore,
    MetalApi,
    Firmware,
    Machine,
}

impl Component {
    /// The name in output.
    pub fn name(self) -> &'static str {
        match self {
            Component::Fsm => "fsm",
            Component::MetalHammer => "metal-hammer",
            Component::MetalCore => "metal-core",
            Component::MetalApi => "metal-api",
            Component::Firmware => "firmware",
            Component::Machine => "machine",
        }
    }
}

/// A metal-api issue or pull request where metal-stack saw the same and decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Precedent {
    pub number: u32,
    /// A pull request (the change itself) rather than an issue.
    pub pull: bool,
}

impl Precedent {
    /// v0.19.3 accepts Registering → Installing: metal-hammer skips Waiting on a reinstall.
    pub const ACCEPT_REINSTALL: Precedent = Precedent::pull(325);
    /// v0.42.2 swallows a Phoned Home buffered within five minutes.
    pub const SWALLOW_BUFFERED: Precedent = Precedent::pull(631);
    /// Waiting → PXE Booting, left to metal-hammer.
    pub const WAITING_REBOOT: Precedent = Precedent::issue(464);
    /// The firmware's network boot before the disk.
    pub const FIRMWARE_PXE: Precedent = Precedent::issue(599);

    const fn pull(number: u32) -> Precedent {
        Precedent { number, pull: true }
    }

    const fn issue(number: u32) -> Precedent {
        Precedent {
            number,
            pull: false,
        }
    }

    /// `metal-api#325`.
    pub fn name(self) -> String {
        format!("metal-api#{}", self.number)
    }

    /// The page on GitHub.
    pub fn url(self) -> String {
        let page = if self.pull { "pull" } else { "issues" };
        format!(
            "https://github.com/metal-stack/metal-api/{page}/{}",
            self.number
        )
    }
}

/// What the evidence adds to a ruling, beside the share of its class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The window the delayed class uses.
    Window,
    /// A delayed event other than Phoned Home: metal-api can swallow only Phoned Home.
    OnlyPhonedHome,
    /// A delayed Phoned Home in a state whose callback does not swallow it.
    NoSwallowIn,
    /// The machine had phoned home and was not reclaimed since: a reinstall.
    Reinstall,
    /// The stage between never came, though its sender never skips it by design.
    Lost(State),
    /// metal-hammer's Alive ticker, and that metal-api never stores an unexpected Alive.
    AliveTicker,
    /// The machine phoned home after the network boot with none of metal-hammer's events
    /// between: it came back from its disk.
    BackOnDisk,
    /// Nothing after the network boot tells its cause; an export's last event time past it
    /// does not.
    NothingAfter,
}

/// What metal-stack does about one class of occurrence of a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    pub action: Action,
    pub component: Option<Component>,
    pub precedent: Option<Precedent>,
    /// At most two; a fixed array, as the aggregate asks for a ruling per occurrence.
    reasons: [Option<Reason>; 2],
}

impl Ruling {
    fn new(action: Action, component: Option<Component>) -> Ruling {
        Ruling {
            action,
            component,
            precedent: None,
            reasons: [None; 2],
        }
    }

    /// What the evidence adds, in order.
    pub fn reasons(&self) -> impl Iterator<Item = Reason> + '_ {
        self.reasons.iter().flatten().copied()
    }

    fn decided_in(mut self, precedent: Precedent) -> Ruling {
        self.precedent = Some(precedent);
        self
    }

    fn because(mut self, reasons: &[Reason]) -> Ruling {
        for (slot, reason) in self.reasons.iter_mut().zip(reasons) {
            *slot = Some(*reason);
        }
        self
    }
}

/// The states whose metal-api callback swallows a buffered Phoned Home
/// (`swallowBufferedPhonedHome`, v0.42.2): elsewhere a `self` rule stores it.
pub const SWALLOWING_STATES: [State; 4] = [
    State::PxeBooting,
    State::Preparing,
    State::Registering,
    State::Waiting,
];

/// The ruling for occurrences of `class` of the pair (`state`, `event`).
pub fn ruling(class: Class, state: State, event: EventKind) -> Ruling {
    use Action::{Accept, FixRoot, Ignore, Investigate, Swallow};
    use Component::{Firmware, Fsm, Machine, MetalApi, MetalCore, MetalHammer};
    use Reason::{
        AliveTicker, BackOnDisk, Lost, NoSwallowIn, NothingAfter, OnlyPhonedHome, Reinstall, Window,
    };
    let phoned_home = event == EventKind::PhonedHome;
    match class {
        Class::Cascade => Ruling::new(FixRoot, None),
        Class::Delayed if !phoned_home => {
            Ruling::new(Investigate, None).because(&[Window, OnlyPhonedHome])
        }
        // metal-core sends Phoned Home: a late one where metal-api stores it is its to explain.
        Class::Delayed if !SWALLOWING_STATES.contains(&state) => {
            Ruling::new(Investigate, Some(MetalCore)).because(&[Window, NoSwallowIn])
        }
        Class::Delayed => Ruling::new(Swallow, Some(Fsm))
            .because(&[Window])
            .decided_in(Precedent::SWALLOW_BUFFERED),
        Class::SkippedStage => Ruling::new(Accept, Some(Fsm))
            .because(&[Reinstall])
            .decided_in(Precedent::ACCEPT_REINSTALL),
        Class::LostEvent(skipped) => {
            Ruling::new(Investigate, Some(sender(skipped))).because(&[Lost(skipped)])
        }
        Class::CrashLoop => Ruling::new(Investigate, Some(Machine)),
        Class::UnannouncedReboot(Reboot::InWaiting) => {
            Ruling::new(Investigate, Some(MetalHammer)).decided_in(Precedent::WAITING_REBOOT)
        }
        Class::UnannouncedReboot(Reboot::Installation) => {
            Ruling::new(Investigate, Some(MetalHammer))
        }
        Class::UnannouncedReboot(Reboot::Reinstall) => Ruling::new(Investigate, Some(MetalApi)),
        Class::UnannouncedReboot(Reboot::Firmware) => Ruling::new(Investigate, Some(Firmware))
            .because(&[BackOnDisk])
            .decided_in(Precedent::FIRMWARE_PXE),
        Class::UnannouncedReboot(Reboot::AfterPhonedHome) => {
            Ruling::new(Investigate, None).because(&[NothingAfter])
        }
        Class::Liveness => Ruling::new(Ignore, Some(MetalHammer)).because(&[AliveTicker]),
        Class::Unclassified | Class::NoContext => Ruling::new(Action::None, None),
    }
}

/// The ruling for unannounced reboots of several kinds, none with the share alone: look at
/// each machine.
pub fn several_reboots() -> Ruling {
    Ruling::new(Action::Investigate, None)
}

/// Who sends the event of a provisioning stage (docs/triage.md, "Who sends each event").
fn sender(stage: State) -> Component {
    match stage {
        // metal-api itself, when pixie relays the machine's DHCP request.
        State::PxeBooting => Component::MetalApi,
        State::PhonedHome => Component::MetalCore,
        _ => Component::MetalHammer,
    }
}
