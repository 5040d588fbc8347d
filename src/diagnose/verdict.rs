//! A verdict per unexpected pair (metal-api#324's question): should the FSM accept it, swallow
//! it, or is the fault elsewhere? The pair takes the class of at least [`SHARE`] of its
//! occurrences that have a log context, else it is undecided. A rule change is a fleet
//! decision: accepting or swallowing needs the class on at least `min_machines` machines.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use super::class::{Class, Reboot};
use crate::event::{EventKind, Pair, State};

/// The share of a pair's occurrences (with a log context) one class must have.
pub const SHARE: f64 = 0.7;

/// The machines an `accept` or `swallow` needs by default (`--min-machines`): a rule change is
/// a fleet decision, not one machine's.
pub const MIN_MACHINES: u64 = 2;

/// How many of a pair's occurrences, and on how many machines, fell in each class; and of
/// which root pairs its cascades are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Classes {
    /// Per class: occurrences, machines.
    pub counts: BTreeMap<Class, (u64, u64)>,
    /// The root pairs of the cascades, with how many cascades each.
    pub roots: BTreeMap<Pair, u64>,
    /// Machines with an unannounced reboot of any kind: the reboot classes' own counts would
    /// count a machine with two kinds twice.
    pub reboot_machines: u64,
}

impl Classes {
    /// Counts one occurrence; `first_on_machine` when its machine had none of this class yet
    /// for the pair.
    pub fn add(&mut self, class: Class, root: Option<Pair>, first_on_machine: bool) {
        let entry = self.counts.entry(class).or_default();
        entry.0 += 1;
        entry.1 += u64::from(first_on_machine);
        if let Some(root) = root {
            *self.roots.entry(root).or_default() += 1;
        }
    }

    /// Counts a machine on which the pair was an unannounced reboot (of any kind) for the
    /// first time.
    pub fn add_reboot_machine(&mut self) {
        self.reboot_machines += 1;
    }

    /// How many occurrences are cascades.
    pub fn cascades(&self) -> u64 {
        self.counts.get(&Class::Cascade).map_or(0, |c| c.0)
    }

    /// The root pairs of the cascades, most cascades first.
    pub fn roots_by_count(&self) -> Vec<(Pair, u64)> {
        let mut roots: Vec<_> = self.roots.iter().map(|(k, n)| (*k, *n)).collect();
        roots.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        roots
    }
}

impl AddAssign for Classes {
    fn add_assign(&mut self, other: Classes) {
        for (class, (n, m)) in other.counts {
            let entry = self.counts.entry(class).or_default();
            entry.0 += n;
            entry.1 += m;
        }
        for (root, n) in other.roots {
            *self.roots.entry(root).or_default() += n;
        }
        self.reboot_machines += other.reboot_machines;
    }
}

/// What the verdict says a pair is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The FSM should accept it: a stage skipped on purpose.
    Accept,
    /// An event its sender sends on every boot never came: look at the sender.
    LostEvent,
    /// The FSM should swallow it: a late copy the machine carried on without.
    Swallow,
    /// It follows another unexpected event: fix that one.
    Cascade,
    /// The boot started again before Waiting, flagged on purpose.
    CrashLoop,
    /// The machine booted again without the event that would have moved it on.
    UnannouncedReboot,
    /// Alive where metal-api does not expect it; metal-api never stores it.
    Liveness,
    /// No class has enough of the occurrences, or a rule change would rest on too few
    /// machines.
    Undecided,
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

/// What to do about a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// What a verdict rests on; output writes each as a sentence with its numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Basis {
    /// `n` of `of` occurrences judged fell in `class` (in classes of its kind where
    /// `several`: unannounced reboots of more than one kind, none of them enough alone).
    Share {
        class: Class,
        n: u64,
        of: u64,
        several: bool,
    },
    /// `n` occurrences are exported last errors only, without a log context.
    WithoutContext { n: u64 },
    /// The classes seen, none with enough of the occurrences.
    Mix(Vec<(Class, u64)>),
    /// The kinds of one class the occurrences fell in (unannounced reboots of several kinds).
    Kinds(Vec<(Class, u64)>),
    /// The class was seen on `machines` machines; a rule change needs `needed`.
    TooFewMachines { machines: u64, needed: u64 },
    /// The window the delayed class uses.
    Window,
    /// The machine had phoned home and was not reclaimed since: a reinstall, which skips
    /// Waiting by design.
    Reinstall,
    /// The stage between never came, though its sender never skips it by design.
    Lost { skipped: State },
    /// metal-hammer's Alive ticker, and that metal-api never stores an unexpected Alive.
    AliveTicker,
    /// A delayed event other than Phoned Home: metal-api can swallow only Phoned Home.
    OnlyPhonedHome { event: EventKind },
    /// A delayed Phoned Home in a state whose callback does not swallow it.
    NoSwallowIn { state: State },
}

/// The states whose metal-api callback swallows a buffered Phoned Home
/// (`swallowBufferedPhonedHome`, v0.42.2): elsewhere a `self` rule stores it.
pub const SWALLOWING_STATES: [State; 4] = [
    State::PxeBooting,
    State::Preparing,
    State::Registering,
    State::Waiting,
];

/// A pair's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct PairVerdict {
    pub kind: Kind,
    pub action: Action,
    pub component: Option<Component>,
    /// The share of the occurrences with a log context that the verdict's class has.
    pub share: f64,
    /// The machines the verdict's class was seen on (the pair's machines when undecided).
    pub machines: u64,
    /// For an unannounced reboot, which one.
    pub reboot: Option<Reboot>,
    pub evidence: Vec<Basis>,
    /// The root pairs of the pair's cascades, most first.
    pub roots: Vec<(Pair, u64)>,
    /// The metal-stack issue where the same was seen and decided.
    pub precedent: Option<&'static str>,
}

/// Judges a pair from its classes.
pub fn verdict(
    (state, event): Pair,
    classes: &Classes,
    pair_machines: u64,
    min_machines: u64,
) -> PairVerdict {
    let without_context = classes.counts.get(&Class::NoContext).map_or(0, |c| c.0);
    let with_context: Vec<(Class, u64, u64)> = classes
        .counts
        .iter()
        .filter(|(c, _)| **c != Class::NoContext)
        .map(|(c, (n, m))| (*c, *n, *m))
        .collect();
    // Unannounced reboots of different kinds count together for the share.
    let total: u64 = with_context.iter().map(|c| c.1).sum();
    let mut by_kind: BTreeMap<u8, (u64, u64)> = BTreeMap::new();
    for (class, n, m) in &with_context {
        let entry = by_kind.entry(kind_rank(*class)).or_default();
        entry.0 += n;
        entry.1 = entry.1.max(*m);
    }
    let mut evidence = Vec::new();
    let roots = classes.roots_by_count();
    let undecided = |evidence: Vec<Basis>| PairVerdict {
        kind: Kind::Undecided,
        action: Action::None,
        component: None,
        share: 0.0,
        machines: pair_machines,
        reboot: None,
        evidence,
        roots: roots.clone(),
        precedent: None,
    };
    if without_context > 0 {
        evidence.push(Basis::WithoutContext { n: without_context });
    }
    let Some((&rank, &(n, _))) = by_kind
        .iter()
        .max_by_key(|(rank, (n, _))| (*n, std::cmp::Reverse(**rank)))
    else {
        return undecided(evidence);
    };
    let share = n as f64 / total as f64;
    let classes_of = |rank: u8| with_context.iter().filter(move |c| kind_rank(c.0) == rank);
    let main = classes_of(rank)
        .max_by_key(|c| c.1)
        .map(|c| c.0)
        .unwrap_or(Class::Unclassified);
    if share < SHARE || main == Class::Unclassified {
        evidence.insert(
            0,
            Basis::Mix(with_context.iter().map(|c| (c.0, c.1)).collect()),
        );
        return undecided(evidence);
    }
    // Machines the kind was seen on: per class, the most (classes of one kind share
    // machines, so the largest is a lower bound that never double counts); unannounced
    // reboots, the one kind of several classes, are counted by machine as well.
    let mut machines = classes_of(rank).map(|c| c.2).max().unwrap_or(0);
    if matches!(main, Class::UnannouncedReboot(_)) {
        machines = machines.max(classes.reboot_machines);
    }
    // Unannounced reboots of several kinds are one verdict, but name a component only where
    // one kind has the share alone.
    let main_n: u64 = classes_of(rank).filter(|c| c.0 == main).map(|c| c.1).sum();
    let several =
        matches!(main, Class::UnannouncedReboot(_)) && (main_n as f64) < SHARE * total as f64;
    evidence.insert(
        0,
        Basis::Share {
            class: main,
            n,
            of: total,
            several,
        },
    );
    let kinds: Vec<(Class, u64)> = classes_of(rank).map(|c| (c.0, c.1)).collect();
    if kinds.len() > 1 {
        evidence.insert(1, Basis::Kinds(kinds));
    }
    let (kind, action, component, precedent, reboot) = match main {
        Class::Cascade => (Kind::Cascade, Action::FixRoot, None, None, None),
        Class::Delayed => {
            evidence.push(Basis::Window);
            if event != EventKind::PhonedHome {
                evidence.push(Basis::OnlyPhonedHome { event });
                (Kind::Swallow, Action::Investigate, None, None, None)
            } else if !SWALLOWING_STATES.contains(&state) {
                // metal-core sends Phoned Home: a late one where metal-api stores it is its
                // sender's to explain.
                evidence.push(Basis::NoSwallowIn { state });
                (
                    Kind::Swallow,
                    Action::Investigate,
                    Some(Component::MetalCore),
                    None,
                    None,
                )
            } else {
                (
                    Kind::Swallow,
                    Action::Swallow,
                    Some(Component::Fsm),
                    Some("metal-api#631"),
                    None,
                )
            }
        }
        Class::SkippedStage => {
            evidence.push(Basis::Reinstall);
            (
                Kind::Accept,
                Action::Accept,
                Some(Component::Fsm),
                Some("metal-api#325"),
                None,
            )
        }
        Class::LostEvent(skipped) => {
            evidence.push(Basis::Lost { skipped });
            (
                Kind::LostEvent,
                Action::Investigate,
                Some(sender(skipped)),
                None,
                None,
            )
        }
        Class::CrashLoop => (
            Kind::CrashLoop,
            Action::Investigate,
            Some(Component::Machine),
            None,
            None,
        ),
        Class::UnannouncedReboot(_) if several => (
            Kind::UnannouncedReboot,
            Action::Investigate,
            None,
            None,
            None,
        ),
        Class::UnannouncedReboot(reboot) => {
            let (component, precedent) = match reboot {
                Reboot::InWaiting => (Component::MetalHammer, Some("metal-api#464")),
                Reboot::Installation => (Component::MetalHammer, None),
                Reboot::Reinstall => (Component::MetalApi, None),
                Reboot::Firmware => (Component::Firmware, Some("metal-api#599")),
            };
            (
                Kind::UnannouncedReboot,
                Action::Investigate,
                Some(component),
                precedent,
                Some(reboot),
            )
        }
        Class::Liveness => {
            evidence.push(Basis::AliveTicker);
            (
                Kind::Liveness,
                Action::Ignore,
                Some(Component::MetalHammer),
                None,
                None,
            )
        }
        // Left undecided above already; undecided here too, should that ever change.
        Class::Unclassified | Class::NoContext => return undecided(evidence),
    };
    if matches!(kind, Kind::Accept | Kind::Swallow) && machines < min_machines {
        evidence.push(Basis::TooFewMachines {
            machines,
            needed: min_machines,
        });
        let mut verdict = undecided(evidence);
        verdict.share = share;
        return verdict;
    }
    PairVerdict {
        kind,
        action,
        component,
        share,
        machines,
        reboot,
        evidence,
        roots,
        precedent,
    }
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

/// Classes that make one kind of verdict count together (the unannounced reboots).
fn kind_rank(class: Class) -> u8 {
    match class {
        Class::Cascade => 0,
        Class::Delayed => 1,
        Class::SkippedStage => 2,
        Class::LostEvent(_) => 8,
        Class::CrashLoop => 3,
        Class::UnannouncedReboot(_) => 4,
        Class::Liveness => 5,
        Class::Unclassified => 6,
        Class::NoContext => 7,
    }
}
