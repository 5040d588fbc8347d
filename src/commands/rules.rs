//! `fsmlog rules`: list, show, export, lint and import rule sets.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use super::shared::{Outcome, stdout, write_file};
use crate::cli::RulesCommand;
use crate::render::format::TextFormat;
use crate::render::terminal::Terminal;
use crate::render::{escape, render_doc, view};
use crate::rules::{Ruleset, builtins, go};

/// Runs one `rules` subcommand.
pub fn run(command: &RulesCommand, term: &Terminal) -> Result<Outcome> {
    let mut out = stdout();
    match command {
        RulesCommand::List => {
            for rules in builtins() {
                writeln!(out, "{:<20} {}", rules.name, rules.description)?;
            }
            writeln!(
                out,
                "{:<20} alias of the newest, {}",
                "metal-api",
                crate::rules::DEFAULT_RULES
            )?;
        }
        RulesCommand::Show { rules } => {
            let rules = Ruleset::resolve(rules)?;
            writeln!(
                out,
                "{}: {}",
                escape::text(&rules.name),
                escape::text(&rules.description)
            )?;
            render_doc(
                &view::rules::matrix(&rules),
                TextFormat::Table,
                term,
                &mut out,
            )?;
            let window = match rules.buffered_phoned_home {
                Some(w) => format!("{} s", w.num_seconds()),
                None => "none".to_string(),
            };
            writeln!(
                out,
                "buffered phoned home: {window} · failed reclaim after {} s · keeps {} events",
                rules.failed_reclaim_threshold.num_seconds(),
                rules.kept_events
            )?;
        }
        RulesCommand::Propose(_) => unreachable!("`rules propose` is a command of its own"),
        RulesCommand::Export { rules } => {
            write!(out, "{}", Ruleset::resolve(rules)?.file.to_json())?;
        }
        RulesCommand::Lint { path } => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            match Ruleset::from_json(&text) {
                Ok(rules) => writeln!(
                    out,
                    "{}: ok ({})",
                    escape::text(&path.display().to_string()),
                    escape::text(&rules.name)
                )?,
                Err(err) => {
                    out.flush()?;
                    for problem in format!("{err:#}").lines() {
                        // "line N: …" becomes "PATH:N: …", like every other input problem.
                        let shown = match problem.strip_prefix("line ") {
                            Some(rest) => format!("{}:{rest}", path.display()),
                            None => format!("{}: {problem}", path.display()),
                        };
                        eprintln!("fsmlog: {}", escape::text(&shown));
                    }
                    return Ok(Outcome::GateFailed);
                }
            }
        }
        RulesCommand::ImportGo {
            events_go,
            like,
            name,
            out: target,
        } => {
            let text = std::fs::read_to_string(events_go)
                .with_context(|| format!("cannot read {}", events_go.display()))?;
            let like = Ruleset::resolve(like)?;
            let name = name.clone().unwrap_or_else(|| stem(events_go));
            // Each problem as `PATH:LINE:COLUMN: message`, as input errors are named.
            let file = go::import(&text, &like.file, &name).map_err(|err| {
                let lines: Vec<String> = err
                    .to_string()
                    .lines()
                    .map(
                        |line| match line.starts_with(|c: char| c.is_ascii_digit()) {
                            true => format!("{}:{line}", events_go.display()),
                            false => format!("{}: {line}", events_go.display()),
                        },
                    )
                    .collect();
                anyhow::anyhow!(lines.join("\n"))
            })?;
            // Check the result the way `--rules` will load it.
            let json = file.to_json();
            Ruleset::from_json(&json).context("the imported rules do not check")?;
            match target {
                Some(path) => write_file(path, |w| Ok(w.write_all(json.as_bytes())?))?,
                None => write!(out, "{json}")?,
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(
        || "imported".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
