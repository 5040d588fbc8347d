//! `fsmlog rules`: list, show, export, lint and import rule sets.

use std::path::Path;

use anyhow::{Context, Result};

use crate::ending::{Ending, Gate};
use crate::render::terminal::Terminal;
use crate::render::{self, messages};
use crate::rules::{Ruleset, builtins, go};
use crate::sink::Sink;

use super::shared::go_problems;

/// `rules list`: the built-in rule sets with a line each.
pub fn list() -> Result<Ending> {
    Sink::Stdout.write(|out| Ok(render::rules_list(&builtins(), out)?))?;
    Ok(Ending::default())
}

/// `rules show`: a rule set as a state × event matrix.
pub fn show(rules: &str, term: &Terminal) -> Result<Ending> {
    let rules = Ruleset::resolve(rules)?;
    Sink::Stdout.write(|out| Ok(render::rules_show(&rules, term, out)?))?;
    Ok(Ending::default())
}

/// `rules export`: a rule set as a rule file.
pub fn export(rules: &str) -> Result<Ending> {
    let json = Ruleset::resolve(rules)?.file.to_json();
    Sink::Stdout.write(|out| Ok(out.write_all(json.as_bytes())?))?;
    Ok(Ending::default())
}

/// `rules import-go`: metal-api's events.go as a rule file.
pub fn import_go(
    events_go: &Path,
    like: &str,
    name: Option<&str>,
    target: Option<&Path>,
) -> Result<Ending> {
    let text = crate::stdin::read_to_string(events_go, "rules import-go")
        .with_context(|| format!("cannot read {}", events_go.display()))?;
    let like = Ruleset::resolve(like)?;
    let name = name.map_or_else(|| stem(events_go), str::to_string);
    // Each problem as `PATH:LINE:COLUMN: message`, as input errors are named.
    let file = go::import(&text, &like.file, &name).map_err(|err| go_problems(&err, events_go))?;
    // Check the result the way `--rules` will load it.
    let json = file.to_json();
    Ruleset::from_json(&json).context("the imported rules do not check")?;
    Sink::to(target).write(|out| Ok(out.write_all(json.as_bytes())?))?;
    Ok(Ending::default())
}

/// `rules lint`: `PATH: ok (NAME)`, or each mistake named with its line and exit 1.
pub fn lint(path: &Path) -> Result<Ending> {
    let text = crate::stdin::read_to_string(path, "rules lint")
        .with_context(|| format!("cannot read {}", path.display()))?;
    match Ruleset::from_text(&text) {
        Ok(rules) => {
            let line = format!(
                "{}: ok ({})",
                render::escape::text(&path.display().to_string()),
                render::escape::text(&rules.name)
            );
            Sink::Stdout.write(|out| Ok(writeln!(out, "{line}")?))?;
            Ok(Ending::default())
        }
        Err(err) => Ok(Ending {
            after: format!("{err:#}")
                .lines()
                .map(|problem| messages::rule_file_problem(path, problem))
                .collect(),
            gate: Gate::Failed,
            ..Ending::default()
        }),
    }
}

fn stem(path: &Path) -> String {
    if crate::stdin::is_dash(path) {
        return "imported".to_string();
    }
    path.file_stem().map_or_else(
        || "imported".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
