//! `fsmlog diff`: every machine replayed under two rule sets, and what changes.

use std::io::Write;

use crate::render::terminal::Terminal;
use anyhow::Result;

use super::shared::{Outcome, print_problems, stdout};
use crate::cli::{DiffArgs, FailOn};
use crate::diff::RuleDiff;
use crate::fleet::Inputs;
use crate::gate::Nothing;
use crate::render::{DiffReport, render_diff};
use crate::replay::replay;
use crate::rules::Ruleset;

/// Replays under both rule sets, compares, renders, and gates on `--fail-on`.
pub fn run(args: &DiffArgs, term: &Terminal) -> Result<Outcome> {
    let old = Ruleset::resolve(&args.old)?;
    let new = Ruleset::resolve(&args.new)?;
    let inputs = Inputs::resolve(&args.input.sources())?;
    let (counting, shown) = crate::fleet::counted(&inputs, &args.window.spec(), None)?;
    let mut diff: RuleDiff = inputs.fold(|diff: &mut RuleDiff, merged| {
        diff.add(
            &replay(&merged.log, &old),
            &replay(&merged.log, &new),
            &counting.window,
        );
        diff.newest_event = diff.newest_event.max(merged.log.newest_event());
    });
    diff.errors.sort();
    diff.skipped.sort();
    diff.notes.sort();
    let mut out = stdout();
    render_diff(
        args.output,
        &DiffReport {
            old: &old.name,
            new: &new.name,
            diff: &diff,
            window: shown.seen_at(diff.newest_event),
        },
        term,
        &mut out,
    )?;
    out.flush()?;
    print_problems(&diff.errors, &diff.skipped, &diff.notes);
    let failed = match args.fail_on {
        FailOn::NewlyUnexpected => diff.has_regressions(),
        FailOn::Any => !diff.changes.is_empty() || !diff.flips.is_empty(),
        FailOn::Never => false,
    };
    let nothing = Nothing::of(
        diff.machines,
        diff.events,
        args.allow_empty || args.fail_on == FailOn::Never,
    );
    super::shared::say_nothing_read(nothing);
    Ok(if !diff.errors.is_empty() || nothing.is_some() {
        Outcome::InputErrors
    } else if failed {
        Outcome::GateFailed
    } else {
        Outcome::Ok
    })
}
