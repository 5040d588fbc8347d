//! What fsmlog tells on stderr besides the input's problems: the sentences a command hands to
//! its ending (see `crate::ending`), each without the `fsmlog: ` every line gets.

use std::path::Path;

use crate::diagnose::Kind;
use crate::event::{EventKind, State};
use crate::gate::Nothing;
use crate::propose::Accepted;
use crate::rules::Target;

use super::{escape, sentence};

/// Why a gate has nothing to judge.
pub fn nothing_to_gate(nothing: Nothing) -> String {
    nothing_read(
        nothing,
        "there is nothing to gate on",
        "accept an empty input",
    )
}

/// Why no metrics were written: an empty text would tell a collector every issue is resolved.
pub fn no_metrics() -> String {
    nothing_read(
        Nothing::Machines,
        "no metrics are written (an empty text would resolve every alert)",
        "write it",
    )
}

/// `<what was not read>, so <consequence>; check the paths, or pass --allow-empty to <what
/// that does>`.
fn nothing_read(nothing: Nothing, consequence: &str, allowed: &str) -> String {
    format!(
        "{}, so {consequence}; check the paths, or pass --allow-empty to {allowed}",
        sentence::nothing(nothing)
    )
}

/// Why `graph` with paths draws nothing: the rule set's picture in its place would mislead.
pub fn no_fleet() -> String {
    "no machine was read, so there is no fleet to draw (without PATH, graph draws the rule set)"
        .to_string()
}

/// What `check --write-baseline` wrote.
pub fn wrote_baseline(pairs: usize, path: &Path) -> String {
    format!("wrote {pairs} accepted pairs to {}", path.display())
}

/// A `--pair` of `rules propose` that goes against its verdict.
pub fn forced_pair(a: &Accepted) -> String {
    // A swallow metal-api cannot run, written `self`, reads like the swallow it is not.
    let stored = if a.verdict.kind == Kind::Swallow && a.target == Target::Stay {
        format!(
            "; its `self` rule lets the event in and metal-api stores it in {}: accepted, not swallowed",
            a.state
        )
    } else {
        String::new()
    };
    format!(
        "warning: --pair {}/{} is accepted against its {}{stored}",
        a.state,
        a.event,
        escape::text(&sentence::verdict(&a.verdict))
    )
}

/// What a patch to events.go cannot say: a proposal's buffering window.
pub fn buffering_not_in_go(seconds: u64) -> String {
    format!(
        "note: the proposal swallows buffered Phoned Home events for {seconds} s, which events.go cannot say: the patch does so only in metal-api v0.42.2 or later (swallowBufferedPhonedHome in fsm/states/states.go); an older metal-api stores these events, and the pairs they cause stay"
    )
}

/// A pair a patch leaves out because the events.go already accepts it as proposed.
pub fn go_pair_present(path: &Path, (state, event, target): (State, EventKind, Target)) -> String {
    format!(
        "note: {} already accepts {event} in {state}, leading to {target} as proposed: not added again",
        escape::text(&path.display().to_string())
    )
}

/// A pair a patch leaves out because the events.go accepts it, leading elsewhere.
pub fn go_pair_elsewhere(
    path: &Path,
    (state, event, target): (State, EventKind, Target),
    has: Target,
) -> String {
    format!(
        "warning: {} already accepts {event} in {state}, leading to {has}, not to {target} as the proposal from --rules does: left as the file has it",
        escape::text(&path.display().to_string())
    )
}

/// Why a patch to events.go is empty.
pub fn go_nothing_to_add(path: &Path, nothing_proposed: bool) -> String {
    let path = path.display().to_string();
    let path = escape::text(&path);
    if nothing_proposed {
        format!("note: the proposal accepts no pair, so {path} needs no patch: none written")
    } else {
        format!("note: {path} already accepts every pair the proposal accepts: no patch to write")
    }
}

/// A problem of a rule file, as every input problem is named: `PATH:LINE: …` where the
/// problem says `line N: …`, else `PATH: …`.
pub fn rule_file_problem(path: &Path, problem: &str) -> String {
    let shown = match problem.strip_prefix("line ") {
        Some(rest) => format!("{}:{rest}", path.display()),
        None => format!("{}: {problem}", path.display()),
    };
    escape::text(&shown).into_owned()
}
