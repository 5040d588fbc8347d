//! `fsmlog rules propose`: the rule change that would accept what the fleet shows often
//! enough, and its effect — exactly what `diff --old BASE --new PROPOSAL` prints.

use anyhow::{Context, Result, bail};

use super::job::Job;
use super::shared::go_problems;
use crate::cli::ProposeArgs;
use crate::ending::{Ending, say};
use crate::fleet::{rule_diff, summarize};
use crate::propose::{Thresholds, propose};
use crate::render::format::ProposeFormat;
use crate::render::terminal::Terminal;
use crate::render::{self, DiffReport, ProposeReport, messages};
use crate::rules::{Ruleset, go_patch};
use crate::window::Shown;

/// Tallies the fleet under the base rules, proposes, replays under both, renders.
pub fn run(args: &ProposeArgs, term: &Terminal) -> Result<Ending> {
    let (job, wanted) = Job::with(&args.rules, &args.input, None, || {
        Ok(match (args.output, args.go_file.as_deref()) {
            (ProposeFormat::Json, _) => Wanted::RuleFile,
            (ProposeFormat::Yaml, _) => Wanted::RuleFileYaml,
            (ProposeFormat::Table, _) => Wanted::Effect,
            (ProposeFormat::Go, Some(path)) => Wanted::Patch(path),
            (ProposeFormat::Go, None) => {
                bail!("-o go writes a patch against metal-api's events.go: name it with --go-file")
            }
        })
    })?;
    let base = &job.rules;
    let (summary, problems) = summarize(&job.inputs, base, &Default::default());
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("{}-proposed", base.name));
    let thresholds = Thresholds {
        min_share: args.min_share,
        named: args.pairs.clone(),
    };
    let verdicts = summary.verdicts(args.min_machines.min_machines, &base.name);
    let proposal = propose(base, &summary, &verdicts, &thresholds, &name);
    for forced in proposal.accepted.iter().filter(|a| a.forced) {
        say(&messages::forced_pair(forced));
    }
    let text = proposal.file.to_json();
    let proposed = Ruleset::from_json(&text).context("the proposed rule set does not check")?;
    let sink = args.out.sink();
    match wanted {
        Wanted::Patch(path) => {
            let old = crate::stdin::read_to_string(path, "--go-file")
                .with_context(|| format!("cannot read {}", path.display()))?;
            let pairs: Vec<_> = proposal
                .accepted
                .iter()
                .map(|a| (a.state, a.event, a.target))
                .collect();
            let patch = go_patch::patch(&old, &pairs, &base.file)
                .map_err(|err| go_problems(&err, path))
                .with_context(|| format!("cannot patch {}", path.display()))?;
            for &pair in &patch.present {
                say(&messages::go_pair_present(path, pair));
            }
            for &(pair, has) in &patch.elsewhere {
                say(&messages::go_pair_elsewhere(path, pair, has));
            }
            if patch.added.is_empty() {
                say(&messages::go_nothing_to_add(path, pairs.is_empty()));
            }
            let diff = go_patch::unified_diff(&path.display().to_string(), &old, &patch.text);
            sink.write(|out| Ok(render::propose(&ProposeReport::Patch(&diff), term, out)?))?;
            if let Some(seconds) = proposal.buffering {
                say(&messages::buffering_not_in_go(seconds));
            }
        }
        Wanted::RuleFile => {
            sink.write(|out| Ok(render::propose(&ProposeReport::RuleFile(&text), term, out)?))?;
        }
        Wanted::RuleFileYaml => {
            let report = ProposeReport::RuleFileYaml(&text);
            sink.write(|out| Ok(render::propose(&report, term, out)?))?;
        }
        Wanted::Effect => {
            let (diff, _) = rule_diff(&job.inputs, base, &proposed, &Default::default());
            let effect = DiffReport {
                old: &base.name,
                new: &proposed.name,
                diff: &diff,
                window: Shown {
                    window: Default::default(),
                    now: diff.newest_event,
                },
                problems: &problems,
            };
            let report = ProposeReport::Effect {
                proposal: &proposal,
                summary: &summary,
                diff: &effect,
            };
            sink.write(|out| Ok(render::propose(&report, term, out)?))?;
        }
    }
    Ok(Ending::with(problems))
}

/// What `-o` asks to be computed and written.
enum Wanted<'a> {
    RuleFile,
    RuleFileYaml,
    Patch(&'a std::path::Path),
    Effect,
}
