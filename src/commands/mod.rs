//! One module per subcommand, each the same shape: read → replay → aggregate → render. The
//! pipeline they share is [`crate::fleet`]; how a command ends, [`shared`].

mod check;
mod diff;
mod explain;
mod graph;
mod issues;
mod propose;
mod replay;
mod report;
mod rules;
mod shared;
mod shell;

pub use shared::Outcome;

use anyhow::Result;

use crate::cli::{Cli, Command, RulesCommand};
use crate::render::terminal::Terminal;

/// Runs the command the command line names.
pub fn run(cli: Cli) -> Result<Outcome> {
    let term = Terminal::detect(cli.color, cli.wide);
    match cli.command {
        Command::Report(args) => report::run(&args, &term),
        Command::Replay(args) => replay::run(&args, &term),
        Command::Diff(args) => diff::run(&args, &term),
        Command::Check(args) => check::run(&args, &term),
        Command::Explain(args) => explain::run(&args, &term),
        Command::Graph(args) => graph::run(&args),
        Command::Issues(args) => issues::run(&args, &term),
        Command::Rules(RulesCommand::Propose(args)) => propose::run(&args, &term),
        Command::Rules(command) => rules::run(&command, &term),
        Command::Completions { shell } => shell::completions(shell),
        Command::Man => shell::man(),
    }
}
