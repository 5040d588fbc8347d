//! One module per subcommand, each the same shape: read → replay → aggregate → render, and
//! an [`Ending`] handed back (the input's problems, what to tell, the gate). The pipeline
//! they share is [`crate::fleet`]; what several decide alike at their end, [`shared`].

mod check;
mod collect;
mod diff;
mod explain;
mod graph;
mod issues;
mod job;
mod propose;
mod replay;
mod report;
mod rules;
mod shared;
mod shell;
mod watch;

use anyhow::{Result, anyhow};

use crate::cli::{Cli, Command, RulesCommand};
use crate::ending::Ending;
use crate::render::format::OutputFormat;
use crate::render::template::RowTemplate;
use crate::render::terminal::Terminal;

/// Runs the command the command line names.
pub fn run(cli: Cli) -> Result<Ending> {
    let template = match cli.template.as_deref() {
        Some(text) => Some(RowTemplate::parse(text).map_err(|err| anyhow!("--template: {err}"))?),
        None => None,
    };
    let term = Terminal::detect(cli.color, cli.wide, !cli.no_headers).with_template(template);
    shared::template_fits(prints_template(&cli.command), &term)?;
    match cli.command {
        Command::Report(args) => report::run(&args, &term),
        Command::Replay(args) => replay::run(&args, &term),
        Command::Diff(args) => diff::run(&args, &term),
        Command::Check(args) => check::run(&args, &term),
        Command::Explain(args) => explain::run(&args, &term),
        Command::Graph(args) => graph::run(&args),
        Command::Issues(args) => issues::run(&args, &term),
        Command::Collect(args) => collect::run(&args),
        Command::Watch(args) => watch::run(&args),
        Command::Rules(RulesCommand::Propose(args)) => propose::run(&args, &term),
        Command::Rules(RulesCommand::List) => rules::list(),
        Command::Rules(RulesCommand::Show { rules }) => rules::show(&rules, &term),
        Command::Rules(RulesCommand::Export { rules }) => rules::export(&rules),
        Command::Rules(RulesCommand::Lint { path }) => rules::lint(&path),
        Command::Rules(RulesCommand::ImportGo {
            events_go,
            like,
            name,
            out,
        }) => rules::import_go(&events_go, &like, name.as_deref(), out.out.as_deref()),
        Command::Completions { shell } => shell::completions(shell),
        Command::Man => shell::man(),
    }
}

/// Whether the command prints `-o template`.
fn prints_template(command: &Command) -> bool {
    match command {
        Command::Report(args) => args.output.is_template(),
        Command::Replay(args) => args.output.is_template(),
        Command::Diff(args) => args.output.is_template(),
        Command::Check(args) => args.output.is_template(),
        Command::Explain(args) => args.output.is_template(),
        Command::Issues(args) => args.output.is_template(),
        _ => false,
    }
}
