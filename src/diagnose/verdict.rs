//! A verdict per unexpected pair (metal-api#324's question): should the FSM accept it, swallow
//! it, or is the fault elsewhere? The pair takes the kind of at least [`SHARE`] of its
//! occurrences that have a log context, and that kind's [`ruling`]; else it is undecided. A
//! rule change is a fleet decision, one per event: accepting or swallowing needs the class on
//! at least `min_machines` machines over every pair of the event that the same rule change
//! would touch.

use std::collections::BTreeMap;
use std::ops::AddAssign;

use super::class::{Class, Reboot};
use super::history::{HandledBy, Newer, UnderNewer};
use super::ruling::{Action, Component, Kind, Precedent, Reason, ruling, several_reboots};
use crate::event::{EventKind, Pair, State};

/// The share of a pair's occurrences (with a log context) one class must have.
pub const SHARE: f64 = 0.7;

/// The machines an `accept` or `swallow` needs by default (`--min-machines`): a rule change is
/// a fleet decision, not one machine's.
pub const MIN_MACHINES: u64 = 2;

/// How many occurrences fell in a class, and on how many machines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassCount {
    pub occurrences: u64,
    pub machines: u64,
}

impl AddAssign for ClassCount {
    fn add_assign(&mut self, other: ClassCount) {
        self.occurrences += other.occurrences;
        self.machines += other.machines;
    }
}

/// Unannounced reboots in Waiting by when they came: inside metal-hammer's autoreboot window
/// (24 h to 48 h and ten seconds after the machine's last Preparing) or outside it. One with
/// no Preparing before it in the data is in neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Autoreboot {
    pub inside: u64,
    pub outside: u64,
}

/// How many of a pair's occurrences, and on how many machines, fell in each class; and of
/// which root pairs its cascades are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Classes {
    pub counts: BTreeMap<Class, ClassCount>,
    /// The root pairs of the cascades, with how many cascades each.
    pub roots: BTreeMap<Pair, u64>,
    /// Machines with an unannounced reboot of any kind: the reboot classes' own counts would
    /// count a machine with two kinds twice.
    pub reboot_machines: u64,
    pub autoreboot: Autoreboot,
    /// What the occurrences came to on their machines replayed under the newer release that
    /// buffers Phoned Home (whatever their class).
    pub under_newer: UnderNewer,
}

impl Classes {
    /// Counts one occurrence; `first_on_machine` when its machine had none of this class yet
    /// for the pair.
    pub fn add(&mut self, class: Class, root: Option<Pair>, first_on_machine: bool) {
        *self.counts.entry(class).or_default() += ClassCount {
            occurrences: 1,
            machines: u64::from(first_on_machine),
        };
        if let Some(root) = root {
            *self.roots.entry(root).or_default() += 1;
        }
    }

    /// Counts a machine on which the pair was an unannounced reboot (of any kind) for the
    /// first time.
    pub fn add_reboot_machine(&mut self) {
        self.reboot_machines += 1;
    }

    /// Counts an unannounced reboot in Waiting by whether it came in the autoreboot window
    /// (`None`: no Preparing before it to measure from).
    pub fn add_autoreboot(&mut self, inside: Option<bool>) {
        match inside {
            Some(true) => self.autoreboot.inside += 1,
            Some(false) => self.autoreboot.outside += 1,
            None => {}
        }
    }

    /// Counts an occurrence by what the newer release that buffers Phoned Home does with it
    /// (`None`: it is no occurrence such a release swallows).
    pub fn add_newer(&mut self, newer: Option<Newer>) {
        self.under_newer.add(newer);
    }

    /// How many occurrences are cascades.
    pub fn cascades(&self) -> u64 {
        self.occurrences(Class::Cascade)
    }

    fn occurrences(&self, class: Class) -> u64 {
        self.counts.get(&class).map_or(0, |c| c.occurrences)
    }

    /// The root pairs of the cascades, most cascades first.
    pub fn roots_by_count(&self) -> Vec<(Pair, u64)> {
        let mut roots: Vec<_> = self.roots.iter().map(|(k, n)| (*k, *n)).collect();
        roots.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        roots
    }

    /// The classes with a log context, and their counts.
    fn judged(&self) -> impl Iterator<Item = (Class, ClassCount)> + '_ {
        self.counts
            .iter()
            .filter(|(c, _)| **c != Class::NoContext)
            .map(|(c, n)| (*c, *n))
    }
}

impl AddAssign for Classes {
    fn add_assign(&mut self, other: Classes) {
        for (class, count) in other.counts {
            *self.counts.entry(class).or_default() += count;
        }
        for (root, n) in other.roots {
            *self.roots.entry(root).or_default() += n;
        }
        self.reboot_machines += other.reboot_machines;
        self.autoreboot.inside += other.autoreboot.inside;
        self.autoreboot.outside += other.autoreboot.outside;
        self.under_newer += other.under_newer;
    }
}

/// Machines per rule change: for each event and action that changes rules (accept, swallow),
/// the machines with an occurrence so ruled in any state.
pub type Decisions = BTreeMap<(EventKind, Action), u64>;

/// What a verdict asks of the fleet beside the pair's own classes.
#[derive(Debug, Clone, Default)]
pub struct VerdictContext {
    /// The machines a rule change needs (`--min-machines`).
    pub min_machines: u64,
    pub decisions: Decisions,
}

#[cfg(test)]
impl VerdictContext {
    /// A fleet that counts each pair's rule change alone.
    pub fn new(min_machines: u64) -> VerdictContext {
        VerdictContext {
            min_machines,
            decisions: Decisions::new(),
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
    /// The rule change rests on `machines` machines; it needs `needed`.
    TooFewMachines {
        machines: u64,
        needed: u64,
        action: Action,
    },
    /// One rule change for the event in every state it touches: `machines` in all, more than
    /// the pair's own.
    OneDecision {
        event: EventKind,
        action: Action,
        machines: u64,
    },
    /// The window the delayed class uses.
    Window,
    /// The machine had phoned home and was not reclaimed since: a reinstall, which skips
    /// Waiting by design.
    Reinstall,
    /// The stage between never came, though its sender never skips it by design.
    Lost { skipped: State },
    /// metal-hammer's Alive ticker, and that metal-api never stores an unexpected Alive.
    AliveTicker,
    /// The evidence the firmware is named on: Phoned Home after the network boot with none
    /// of metal-hammer's events between.
    BackOnDisk,
    /// Nothing after the reboot tells its cause, and what does not.
    NothingAfter,
    /// A delayed event other than Phoned Home: metal-api can swallow only Phoned Home.
    OnlyPhonedHome { event: EventKind },
    /// A delayed Phoned Home in a state whose callback does not swallow it.
    NoSwallowIn { state: State },
    /// Unannounced reboots in Waiting inside and outside metal-hammer's autoreboot window, of
    /// `of` in all.
    Autoreboot { counts: Autoreboot, of: u64 },
}

impl Basis {
    fn of(reason: Reason, (state, event): Pair) -> Basis {
        match reason {
            Reason::Window => Basis::Window,
            Reason::OnlyPhonedHome => Basis::OnlyPhonedHome { event },
            Reason::NoSwallowIn => Basis::NoSwallowIn { state },
            Reason::Reinstall => Basis::Reinstall,
            Reason::Lost(skipped) => Basis::Lost { skipped },
            Reason::AliveTicker => Basis::AliveTicker,
            Reason::BackOnDisk => Basis::BackOnDisk,
            Reason::NothingAfter => Basis::NothingAfter,
        }
    }
}

/// What an undecided verdict lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lack {
    /// No occurrence has log rows around it.
    Context,
    /// No kind has [`SHARE`] of the occurrences.
    Share,
    /// The rule change rests on too few machines.
    Machines {
        machines: u64,
        needed: u64,
        action: Action,
    },
}

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
    /// The metal-stack issue or pull request where the same was seen and decided.
    pub precedent: Option<Precedent>,
    /// What an undecided verdict lacks.
    pub lacking: Option<Lack>,
    /// The unannounced reboots in Waiting by metal-hammer's autoreboot window.
    pub autoreboot: Option<Autoreboot>,
    /// A newer built-in rule set that expects or swallows the pair (see
    /// [`super::history::handled_by`]); never part of the judgement itself.
    pub handled_by: Option<HandledBy>,
}

/// The kind most occurrences have, and its classes.
struct Leading {
    kind: Kind,
    occurrences: u64,
    classes: Vec<(Class, ClassCount)>,
}

fn leading(judged: &[(Class, ClassCount)]) -> Option<Leading> {
    let mut by_kind: BTreeMap<Kind, Vec<(Class, ClassCount)>> = BTreeMap::new();
    for &(class, count) in judged {
        by_kind
            .entry(class.kind())
            .or_default()
            .push((class, count));
    }
    by_kind
        .into_iter()
        .map(|(kind, classes)| Leading {
            kind,
            occurrences: classes.iter().map(|c| c.1.occurrences).sum(),
            classes,
        })
        // The first kind wins a tie (none of two equal halves has the share anyway).
        .rev()
        .max_by_key(|l| l.occurrences)
}

/// Judges a pair from its classes.
pub fn verdict(
    pair: Pair,
    classes: &Classes,
    pair_machines: u64,
    fleet: &VerdictContext,
) -> PairVerdict {
    let (state, event) = pair;
    let judged: Vec<(Class, ClassCount)> = classes.judged().collect();
    let total: u64 = judged.iter().map(|c| c.1.occurrences).sum();
    let mut verdict = PairVerdict {
        kind: Kind::Undecided,
        action: Action::None,
        component: None,
        share: 0.0,
        machines: pair_machines,
        reboot: None,
        evidence: Vec::new(),
        roots: classes.roots_by_count(),
        precedent: None,
        lacking: Some(Lack::Context),
        autoreboot: None,
        handled_by: None,
    };
    let without_context = classes.occurrences(Class::NoContext);
    let Some(leading) = leading(&judged) else {
        if without_context > 0 {
            verdict
                .evidence
                .push(Basis::WithoutContext { n: without_context });
        }
        return verdict;
    };
    let share = leading.occurrences as f64 / total as f64;
    if share < SHARE || leading.kind == Kind::Undecided {
        verdict.lacking = Some(Lack::Share);
        verdict.evidence.push(Basis::Mix(
            judged.iter().map(|c| (c.0, c.1.occurrences)).collect(),
        ));
        if without_context > 0 {
            verdict
                .evidence
                .push(Basis::WithoutContext { n: without_context });
        }
        return verdict;
    }
    let (main, main_count) = leading
        .classes
        .iter()
        .copied()
        .max_by_key(|c| c.1.occurrences)
        .unwrap_or((Class::Unclassified, ClassCount::default()));
    let rebooted = leading.kind == Kind::UnannouncedReboot;
    // Classes of one kind share machines, so the most of any is a lower bound that never
    // counts one twice; unannounced reboots, one kind of several classes, are counted by
    // machine as well.
    let mut machines = leading
        .classes
        .iter()
        .map(|c| c.1.machines)
        .max()
        .unwrap_or(0);
    if rebooted {
        machines = machines.max(classes.reboot_machines);
    }
    // Unannounced reboots of several kinds are one verdict, but name a component only where
    // one kind has the share alone.
    let several = rebooted && (main_count.occurrences as f64) < SHARE * total as f64;
    verdict.evidence.push(Basis::Share {
        class: main,
        n: leading.occurrences,
        of: total,
        several,
    });
    if leading.classes.len() > 1 {
        verdict.evidence.push(Basis::Kinds(
            leading
                .classes
                .iter()
                .map(|c| (c.0, c.1.occurrences))
                .collect(),
        ));
    }
    if without_context > 0 {
        verdict
            .evidence
            .push(Basis::WithoutContext { n: without_context });
    }
    let ruled = if several {
        several_reboots()
    } else {
        ruling(main, state, event)
    };
    verdict
        .evidence
        .extend(ruled.reasons().map(|r| Basis::of(r, pair)));
    let in_waiting = classes.occurrences(Class::UnannouncedReboot(Reboot::InWaiting));
    if in_waiting > 0 {
        verdict.autoreboot = Some(classes.autoreboot);
        verdict.evidence.push(Basis::Autoreboot {
            counts: classes.autoreboot,
            of: in_waiting,
        });
    }
    verdict.share = share;
    if ruled.action.changes_rules() {
        let decided = fleet
            .decisions
            .get(&(event, ruled.action))
            .copied()
            .unwrap_or(0)
            .max(machines);
        if decided > machines {
            verdict.evidence.push(Basis::OneDecision {
                event,
                action: ruled.action,
                machines: decided,
            });
        }
        if decided < fleet.min_machines {
            let lack = Lack::Machines {
                machines: decided,
                needed: fleet.min_machines,
                action: ruled.action,
            };
            verdict.evidence.push(Basis::TooFewMachines {
                machines: decided,
                needed: fleet.min_machines,
                action: ruled.action,
            });
            verdict.lacking = Some(lack);
            return verdict;
        }
    }
    PairVerdict {
        kind: leading.kind,
        action: ruled.action,
        component: ruled.component,
        machines,
        reboot: match main {
            Class::UnannouncedReboot(reboot) if !several => Some(reboot),
            _ => None,
        },
        precedent: ruled.precedent,
        lacking: None,
        ..verdict
    }
}
