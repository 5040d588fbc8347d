//! The diagnosis of a machine as its events arrive: the same classes, roots and newer-release
//! fates [`Diagnosis::of`] finds in a whole log, with memory that does not grow with the log.
//!
//! Each class looks back and ahead in time. What it looks back at is kept as running values
//! (the current root and the replay without it until that rejoins the real one; whether the
//! machine had phoned home since the last reclaim; per event type, how far back the steps
//! since its last stored step reach; the last Preparing). What it looks ahead at is a
//! question about the first later step of some kind (the next stored step, the next
//! unexpected one, the first that tells what a reboot after Phoned Home was), answered by
//! the step that comes; an occurrence is settled as soon as the answers its class needs are
//! in, and until then kept as those answers alone. Open occurrences that hold the same
//! answers are one entry with a count, so their number is bounded whatever the log.
//!
//! [`Diagnosis::of`]: super::Diagnosis::of

use chrono::{DateTime, Utc};

use super::class::{AUTOREBOOT_AFTER, AUTOREBOOT_UNTIL, Class, Reboot, WINDOW, outside};
use super::history::{Newer, newer_builtins, swallowing};
use super::ruling::SWALLOWING_STATES;
use crate::event::{Event, EventKind, Pair, State};
use crate::replay::{Following, Handling, Replaying, Step};
use crate::rules::Ruleset;
use crate::window::Window;

/// What the diagnosis settled of one counted occurrence (one in the window), `count` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    /// Its class, the pair of its root, and for an unannounced reboot in Waiting whether it
    /// came in metal-hammer's autoreboot window.
    Class {
        pair: Pair,
        class: Class,
        root: Option<Pair>,
        autoreboot: Option<bool>,
    },
    /// What the newer release that buffers Phoned Home did with it.
    Newer { pair: Pair, newer: Newer },
}

/// A machine replayed and diagnosed an event at a time.
#[derive(Debug, Clone)]
pub struct Diagnosing<'r> {
    real: Replaying<'r>,
    /// The machine replayed under each newer built-in release that may swallow an unexpected
    /// Phoned Home (see `history::under_newer`).
    newer: Vec<(&'static Ruleset, Replaying<'static>)>,
    /// The built-in rule sets newer than the one replayed.
    newer_all: &'static [Ruleset],
    window: Window,
    annotated: bool,
    /// Steps so far: an occurrence's id.
    steps: u64,
    root: Option<Root<'r>>,
    context: Context,
    open: Vec<(Open, u64)>,
    open_newer: Vec<(OpenNewer, u64)>,
    settled: Vec<(Settled, u64)>,
}

/// The current root of cascades, and the replay without it until that rejoins the real one.
#[derive(Debug, Clone)]
struct Root<'r> {
    id: u64,
    pair: Pair,
    without: Option<Following<'r>>,
}

/// What the classes look back at, as of the step about to come.
#[derive(Debug, Clone, Default)]
struct Context {
    /// The machine had phoned home (a stored Phoned Home) since the last Machine Reclaim.
    reinstalling: bool,
    /// Per event type: the earliest time among the steps from its last stored step on.
    reach: [Option<DateTime<Utc>>; EventKind::ALL.len()],
    /// The latest of `reach`: only a step before it changes any (in-order streams have none).
    reach_latest: Option<DateTime<Utc>>,
    last_preparing: Option<DateTime<Utc>>,
}

impl Context {
    fn after(&mut self, step: &Step) {
        if step.event == EventKind::MachineReclaim {
            self.reinstalling = false;
        } else if step.stored && step.event == EventKind::PhonedHome {
            self.reinstalling = true;
        }
        if self.reach_latest.is_some_and(|latest| step.time < latest) {
            for reach in self.reach.iter_mut().flatten() {
                *reach = (*reach).min(step.time);
            }
            // Every reach is now at or before the step, one of them at it.
            self.reach_latest = Some(step.time);
        }
        if step.stored {
            self.reach[step.event as usize] = Some(step.time);
            self.reach_latest = self.reach_latest.max(Some(step.time));
        }
        if step.event == EventKind::Preparing {
            self.last_preparing = Some(step.time);
        }
    }
}

/// What the first telling step after a network boot from Phoned Home says (see
/// `class::after_phoned_home`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reboot4 {
    NotAsked,
    /// The first step that tells has not come.
    Telling,
    /// It was a Phoned Home: whether metal-hammer's events follow it has not come.
    Hammer,
    Done(Reboot),
}

/// An occurrence whose class waits for later steps, as the answers it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Open {
    id: u64,
    pair: Pair,
    autoreboot: Option<bool>,
    skipped: Option<State>,
    reinstalling: bool,
    /// Stored, within the window, and a copy: delayed if the next unexpected step is its
    /// cascade.
    maybe_delayed: bool,
    /// The first stored step after it (its verdict and event), once come.
    next_stored: Option<(Handling, EventKind)>,
    /// Before the next stored step, a Phoned Home taken in without being stored.
    taken_in: bool,
    /// Whether the next unexpected step is its cascade, once come.
    next_unexpected: Option<bool>,
    reboot: Reboot4,
}

/// An unexpected Phoned Home whose fate under the newer release waits for later steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct OpenNewer {
    pair: Pair,
    /// Which of the newer replays.
    by: usize,
    /// `None` while no step it stores or finds unexpected has come before the next step the
    /// replayed release stores; then whether that step was unexpected, waiting for the next
    /// event other than Phoned Home.
    found: Option<bool>,
}

impl<'r> Diagnosing<'r> {
    /// A machine before its first event, replayed under `rules`; occurrences in `window` are
    /// the ones settled; `annotated` where the input carries recorded verdicts.
    pub fn new(rules: &'r Ruleset, window: Window, annotated: bool) -> Self {
        let newer = newer_builtins(&rules.name);
        let mut by: Vec<&'static Ruleset> = Vec::new();
        for state in SWALLOWING_STATES {
            if let Some(r) = swallowing((state, EventKind::PhonedHome), newer)
                && !by.iter().any(|b| b.name == r.name)
            {
                by.push(r);
            }
        }
        Diagnosing {
            real: Replaying::new(rules),
            newer: by.into_iter().map(|r| (r, Replaying::new(r))).collect(),
            newer_all: newer,
            window,
            annotated,
            steps: 0,
            root: None,
            context: Context::default(),
            open: Vec::new(),
            open_newer: Vec::new(),
            settled: Vec::new(),
        }
    }

    /// The real replay.
    pub fn replay(&self) -> &Replaying<'r> {
        &self.real
    }

    /// Whether the input carries recorded verdicts.
    pub fn annotated(&self) -> bool {
        self.annotated
    }

    /// Replays and diagnoses the next event; its step, `None` for an unknown event.
    pub fn push(&mut self, event: &Event, seam: bool) -> Option<Step> {
        let without = match &mut self.root {
            Some(Root {
                without: Some(w), ..
            }) => Some(w.push(event, seam)),
            _ => None,
        };
        let cascade = without == Some(Some(Handling::Expected));
        let kept = (!cascade && self.real.may_store_unexpected(event, seam))
            .then(|| self.real.without_next(event, seam));
        let step = self.real.push(event, seam);
        let newer: Vec<Option<Step>> = self
            .newer
            .iter_mut()
            .map(|(_, r)| r.push(event, seam))
            .collect();
        if let (Some(Some(_)), Some(root)) = (without, &mut self.root)
            && step.is_some()
            && root
                .without
                .as_ref()
                .is_some_and(|w| w.rejoined(&self.real))
        {
            root.without = None;
        }
        let step = step?;
        let id = self.steps;
        self.steps += 1;
        let unexpected = step.handling == Handling::Unexpected;
        let root_of = match &self.root {
            Some(root) if unexpected && cascade => Some((root.id, root.pair)),
            _ => None,
        };
        self.answer(&step, root_of.map(|r| r.0), &newer);
        if unexpected && self.window.contains(step.time) {
            self.open_occurrence(&step, id, root_of.map(|r| r.1), &newer);
        }
        if unexpected && root_of.is_none() && step.stored {
            self.root = Some(Root {
                id,
                pair: (step.from, step.event),
                without: kept,
            });
        }
        self.context.after(&step);
        self.settle();
        Some(step)
    }

    /// Whether some occurrence still waits for later steps.
    pub fn has_open(&self) -> bool {
        !self.open.is_empty() || !self.open_newer.is_empty()
    }

    /// Takes what was settled since the last call.
    pub fn take_settled(&mut self) -> Vec<(Settled, u64)> {
        std::mem::take(&mut self.settled)
    }

    /// What the open occurrences are if the log ends here: `moved` as
    /// `class::moved_past_newest` finds it of the log so far.
    pub fn at_end(&self, moved: bool) -> Vec<(Settled, u64)> {
        let mut end = Vec::new();
        for (open, n) in &self.open {
            if let Some(class) = class_of(open, self.annotated, Some(moved)) {
                end.push((open.settled(class), *n));
            }
        }
        for (open, n) in &self.open_newer {
            end.push((open.at_end(), *n));
        }
        end
    }

    /// The class of an exported last error that is no row of the log.
    pub fn outside(step: &Step) -> Class {
        outside(step)
    }

    /// Gives the open occurrences what a later step answers.
    fn answer(&mut self, step: &Step, cascade_of: Option<u64>, newer: &[Option<Step>]) {
        let annotated = self.annotated;
        for (open, _) in &mut self.open {
            if open.next_stored.is_none() {
                if step.stored {
                    open.next_stored = Some((step.handling, step.event));
                } else if step.event == EventKind::PhonedHome && step.handling == Handling::Expected
                {
                    open.taken_in = true;
                }
            }
            if open.next_unexpected.is_none() && step.handling == Handling::Unexpected {
                open.next_unexpected = Some(cascade_of == Some(open.id));
            }
            open.reboot = match open.reboot {
                Reboot4::Telling if telling(step, annotated) && !buffered(step) => {
                    match step.event {
                        EventKind::Preparing => Reboot4::Done(Reboot::Reinstall),
                        EventKind::PhonedHome => Reboot4::Hammer,
                        _ => Reboot4::Done(Reboot::AfterPhonedHome),
                    }
                }
                Reboot4::Hammer
                    if (!annotated || step.stored) && step.event != EventKind::PhonedHome =>
                {
                    Reboot4::Done(if hammer(step.event) {
                        Reboot::AfterPhonedHome
                    } else {
                        Reboot::Firmware
                    })
                }
                other => other,
            };
        }
        let mut done = Vec::new();
        self.open_newer.retain_mut(|(open, n)| {
            let fate = match open.found {
                None if step.stored => Some(Newer::Swallowed),
                None => match newer.get(open.by).cloned().flatten() {
                    Some(new) if new.handling == Handling::Unexpected => Some(Newer::Stored {
                        then_unexpected: true,
                    }),
                    Some(new) if new.stored => {
                        open.found = Some(false);
                        None
                    }
                    _ => None,
                },
                Some(_) if step.event != EventKind::PhonedHome => {
                    let new = newer.get(open.by).cloned().flatten();
                    Some(Newer::Stored {
                        then_unexpected: new.is_some_and(|s| s.handling == Handling::Unexpected),
                    })
                }
                Some(_) => None,
            };
            match fate {
                Some(newer) => {
                    done.push((
                        Settled::Newer {
                            pair: open.pair,
                            newer,
                        },
                        *n,
                    ));
                    false
                }
                None => true,
            }
        });
        self.settled.extend(done);
    }

    /// Opens (or settles at once) an unexpected step in the window.
    fn open_occurrence(
        &mut self,
        step: &Step,
        id: u64,
        root: Option<Pair>,
        newer: &[Option<Step>],
    ) {
        let pair = (step.from, step.event);
        let waited = self.context.last_preparing.map(|t| step.time - t);
        let autoreboot = waited.map(|w| (AUTOREBOOT_AFTER..=AUTOREBOOT_UNTIL).contains(&w));
        if root.is_some() {
            self.settled.push((
                Settled::Class {
                    pair,
                    class: Class::Cascade,
                    root,
                    autoreboot,
                },
                1,
            ));
        } else {
            let boot = matches!(step.event, EventKind::PxeBooting | EventKind::Preparing);
            let copy = step.event == EventKind::PhonedHome
                || (!boot
                    && self.context.reach[step.event as usize]
                        .is_some_and(|t| step.time - t < WINDOW));
            let skipped = match (stage(step.from), stage(step.event.home_state())) {
                (Some(from), Some(to)) if to == from + 2 => Some(State::PROVISIONING[from + 1]),
                _ => None,
            };
            let reboot = if step.from == State::PhonedHome && step.event == EventKind::PxeBooting {
                Reboot4::Telling
            } else {
                Reboot4::NotAsked
            };
            self.open.push((
                Open {
                    id,
                    pair,
                    autoreboot,
                    skipped,
                    reinstalling: self.context.reinstalling,
                    maybe_delayed: step.stored && step.within(WINDOW) && copy,
                    next_stored: None,
                    taken_in: false,
                    next_unexpected: None,
                    reboot,
                },
                1,
            ));
        }
        let by = swallowing(pair, self.newer_all)
            .and_then(|r| self.newer.iter().position(|(b, _)| b.name == r.name));
        if let Some(by) = by
            && let Some(Some(new)) = newer.get(by)
        {
            let fate = if new.stored || new.handling == Handling::Unexpected {
                if new.last_event_time.is_none() {
                    Some(Newer::Unmeasured)
                } else if new.handling == Handling::Unexpected {
                    Some(Newer::Stored {
                        then_unexpected: true,
                    })
                } else {
                    self.open_newer.push((
                        OpenNewer {
                            pair,
                            by,
                            found: Some(false),
                        },
                        1,
                    ));
                    None
                }
            } else {
                self.open_newer.push((
                    OpenNewer {
                        pair,
                        by,
                        found: None,
                    },
                    1,
                ));
                None
            };
            if let Some(newer) = fate {
                self.settled.push((Settled::Newer { pair, newer }, 1));
            }
        }
    }

    /// Settles every open occurrence whose class no later step can change (all of them where
    /// the log ends, `end` holding `moved` then), and folds open ones that hold the same
    /// answers into one.
    fn settle(&mut self) {
        let end = None;
        let annotated = self.annotated;
        let mut settled = Vec::new();
        self.open
            .retain(|(open, n)| match class_of(open, annotated, end) {
                Some(class) => {
                    settled.push((open.settled(class), *n));
                    false
                }
                None => true,
            });
        self.settled.extend(settled);
        fold_equal(&mut self.open, |o| o.next_unexpected.is_some());
        fold_equal(&mut self.open_newer, |_| true);
    }
}

impl Open {
    fn settled(&self, class: Class) -> Settled {
        Settled::Class {
            pair: self.pair,
            class,
            root: None,
            autoreboot: self.autoreboot,
        }
    }
}

impl OpenNewer {
    /// Its fate where the log ends: no step after it told more.
    fn at_end(&self) -> Settled {
        let newer = match self.found {
            None => Newer::Swallowed,
            Some(then_unexpected) => Newer::Stored { then_unexpected },
        };
        Settled::Newer {
            pair: self.pair,
            newer,
        }
    }
}

/// Folds entries equal in all but their count into one. `Open::id` matters only while the
/// next unexpected step has not come (`forget_id`): after that it is cleared so that equal
/// occurrences fold.
fn fold_equal<T: Copy + PartialEq + Forget>(items: &mut Vec<(T, u64)>, forget_id: fn(&T) -> bool) {
    if items.len() < 2 {
        return;
    }
    for (item, _) in items.iter_mut() {
        if forget_id(item) {
            item.forget();
        }
    }
    let mut folded: Vec<(T, u64)> = Vec::with_capacity(items.len());
    for (item, n) in items.drain(..) {
        match folded.iter_mut().find(|(f, _)| *f == item) {
            Some((_, m)) => *m += n,
            None => folded.push((item, n)),
        }
    }
    *items = folded;
}

/// Clears what tells two equal open entries apart without changing what they become.
trait Forget {
    fn forget(&mut self);
}

impl Forget for Open {
    fn forget(&mut self) {
        self.id = u64::MAX;
    }
}

impl Forget for OpenNewer {
    fn forget(&mut self) {}
}

/// Where a state is on the provisioning path.
fn stage(state: State) -> Option<usize> {
    State::PROVISIONING.iter().position(|s| *s == state)
}

/// Whether a step tells what a network boot after Phoned Home was (see
/// `class::after_phoned_home`).
fn telling(step: &Step, annotated: bool) -> bool {
    if annotated {
        step.stored
    } else {
        !matches!(step.event, EventKind::PxeBooting | EventKind::Alive)
    }
}

fn buffered(step: &Step) -> bool {
    step.event == EventKind::PhonedHome && step.within(WINDOW)
}

/// metal-hammer's events (see `class::hammer_after`).
fn hammer(event: EventKind) -> bool {
    matches!(
        event,
        EventKind::Preparing
            | EventKind::Registering
            | EventKind::Waiting
            | EventKind::Installing
            | EventKind::BootingNewKernel
            | EventKind::Crashed
            | EventKind::Alive
    )
}

/// The class `class::class` gives an occurrence, from the answers it has; `None` while one it
/// needs has not come. Where the log ends (`end` holds `moved`), what never came is taken as
/// a whole log takes it.
fn class_of(open: &Open, annotated: bool, end: Option<bool>) -> Option<Class> {
    let (_, event) = open.pair;
    let needs_carried = match open.skipped {
        Some(State::Waiting) => open.reinstalling,
        Some(_) => true,
        None => false,
    };
    if needs_carried {
        if open.next_stored.is_none() && end.is_none() {
            return None;
        }
        let next = open.next_stored;
        let kept_phoning_home = event == EventKind::PhonedHome
            && next.is_none_or(|(_, e)| e != EventKind::BootingNewKernel)
            && (open.taken_in || (annotated && end == Some(true) && next.is_none()));
        let carried_on = next.is_some_and(|(h, _)| h == Handling::Expected) || kept_phoning_home;
        match open.skipped {
            Some(State::Waiting) if carried_on => return Some(Class::SkippedStage),
            Some(State::Waiting) => {}
            Some(skipped) if carried_on => return Some(Class::LostEvent(skipped)),
            _ => {}
        }
    }
    if open.maybe_delayed {
        match open.next_unexpected {
            Some(true) => return Some(Class::Delayed),
            None if end.is_none() => return None,
            _ => {}
        }
    }
    let boot = matches!(event, EventKind::PxeBooting | EventKind::Preparing);
    let class = match open.pair.0 {
        State::PxeBooting | State::Preparing | State::Registering if boot => Class::CrashLoop,
        State::Waiting if boot => Class::UnannouncedReboot(Reboot::InWaiting),
        State::Installing | State::BootingNewKernel if boot => {
            Class::UnannouncedReboot(Reboot::Installation)
        }
        State::PhonedHome if boot => Class::UnannouncedReboot(match (event, open.reboot) {
            (EventKind::Preparing, _) => Reboot::Reinstall,
            (_, Reboot4::Done(reboot)) => reboot,
            (_, Reboot4::Hammer) if end.is_some() => Reboot::Firmware,
            (_, Reboot4::Telling) if end.is_some() => Reboot::AfterPhonedHome,
            _ => return None,
        }),
        _ if event == EventKind::Alive => Class::Liveness,
        _ => Class::Unclassified,
    };
    Some(class)
}
