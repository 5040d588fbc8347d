//! `fsmlog rules`: list, show and export rule sets.

use std::io::{self, Write};

use anyhow::Result;

use super::Outcome;
use crate::cli::RulesCommand;
use crate::render::rules_matrix;
use crate::rules::{Ruleset, builtins};

/// Runs one `rules` subcommand.
pub fn run(command: &RulesCommand) -> Result<Outcome> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match command {
        RulesCommand::List => {
            for rules in builtins() {
                writeln!(out, "{:<20} {}", rules.name, rules.description)?;
            }
        }
        RulesCommand::Show { rules } => {
            let rules = Ruleset::resolve(rules)?;
            writeln!(out, "{}: {}", rules.name, rules.description)?;
            writeln!(out, "{}", rules_matrix(&rules))?;
        }
        RulesCommand::Export { rules } => {
            let rules = Ruleset::resolve(rules)?;
            writeln!(out, "{}", serde_json::to_string_pretty(&rules.file)?)?;
        }
    }
    Ok(Outcome::Ok)
}
