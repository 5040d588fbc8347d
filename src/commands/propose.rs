//! `fsmlog rules propose`: the rule change that would accept what the fleet shows often
//! enough, and its effect — exactly what `diff --old BASE --new PROPOSAL` prints.

use std::io::Write;

use anyhow::{Context, Result, bail};

use super::shared::{Outcome, print_problems, stdout, write_file};
use crate::cli::ProposeArgs;
use crate::diagnose::Kind;
use crate::diff::RuleDiff;
use crate::fleet::{Inputs, summarize};
use crate::propose::{Proposal, Thresholds, propose};
use crate::render::escape;
use crate::render::format::{ProposeFormat, TextFormat};
use crate::render::terminal::Terminal;
use crate::render::{DiffReport, render_doc, view};
use crate::replay::replay;
use crate::rules::{Ruleset, Target, go_patch};

/// Tallies the fleet under the base rules, proposes, replays under both, renders.
pub fn run(args: &ProposeArgs, term: &Terminal) -> Result<Outcome> {
    let base = Ruleset::resolve(&args.rules)?;
    if args.output == ProposeFormat::Go && args.go_file.is_none() {
        bail!("-o go writes a patch against metal-api's events.go: name it with --go-file");
    }
    let inputs = Inputs::resolve(&args.input.sources())?;
    let summary = summarize(&inputs, &base, &Default::default());
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-proposed", base.name));
    let thresholds = Thresholds {
        min_share: args.min_share,
        named: args.pairs.clone(),
    };
    let verdicts = summary.verdicts(args.min_machines);
    let proposal = propose(&base, &summary, &verdicts, &thresholds, &name);
    warn_forced(&proposal);
    let text = proposal.file.to_json();
    let proposed = Ruleset::from_json(&text).context("the proposed rule set does not check")?;
    let outcome = if summary.errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::InputErrors
    };
    match args.output {
        ProposeFormat::Json => emit(args, text.as_bytes())?,
        ProposeFormat::Go => {
            let path = args.go_file.as_ref().expect("checked above");
            let old = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let pairs: Vec<_> = proposal
                .accepted
                .iter()
                .map(|a| (a.state, a.event, a.target))
                .collect();
            let new = go_patch::patched(&old, &pairs)
                .with_context(|| format!("cannot patch {}", path.display()))?;
            let patch = go_patch::unified_diff(&path.display().to_string(), &old, &new);
            emit(args, patch.as_bytes())?;
            if let Some(seconds) = proposal.buffering {
                eprintln!(
                    "fsmlog: note: the proposal swallows buffered Phoned Home events for {seconds} s, which events.go cannot say: the patch does so only in metal-api v0.42.2 or later (swallowBufferedPhonedHome in fsm/states/states.go); an older metal-api stores these events, and the pairs they cause stay"
                );
            }
        }
        ProposeFormat::Table => {
            let mut diff: RuleDiff = inputs.fold(|diff: &mut RuleDiff, merged| {
                diff.add(
                    &replay(&merged.log, &base),
                    &replay(&merged.log, &proposed),
                    &Default::default(),
                );
                diff.newest_event = diff.newest_event.max(merged.log.newest_event());
            });
            diff.errors.sort();
            let report = DiffReport {
                old: &base.name,
                new: &proposed.name,
                diff: &diff,
                window: crate::window::Shown {
                    window: Default::default(),
                    now: diff.newest_event,
                },
            };
            let doc = view::propose::doc(&proposal, &summary, &report);
            let mut out = stdout();
            render_doc(&doc, TextFormat::Table, term, &mut out)?;
            out.flush()?;
        }
    }
    print_problems(&summary.errors, &summary.skipped, &summary.notes);
    Ok(outcome)
}

/// Says on stderr which `--pair`s go against their verdict.
fn warn_forced(proposal: &Proposal) {
    for a in proposal.accepted.iter().filter(|a| a.forced) {
        // A swallow metal-api cannot run, written `self`, reads like the swallow it is not.
        let stored = if a.verdict.kind == Kind::Swallow && a.target == Target::Stay {
            format!(
                "; its `self` rule lets the event in and metal-api stores it in {}: accepted, not swallowed",
                a.state
            )
        } else {
            String::new()
        };
        eprintln!(
            "fsmlog: warning: --pair {}/{} is accepted against its {}{stored}",
            a.state,
            a.event,
            escape::text(&crate::render::sentence::verdict(&a.verdict))
        );
    }
}

/// Writes the rule file or patch to `--out`, or standard output.
fn emit(args: &ProposeArgs, bytes: &[u8]) -> Result<()> {
    match &args.out {
        Some(path) => write_file(path, |out| Ok(out.write_all(bytes)?)),
        None => {
            let mut out = stdout();
            out.write_all(bytes)?;
            Ok(out.flush()?)
        }
    }
}
