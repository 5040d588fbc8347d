//! The command line: subcommands and the argument groups they share.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::input::Format;
use crate::input::time::{ExtraZone, parse_zone_arg};
use crate::rules::DEFAULT_RULES;

/// Replay metal-stack machine provisioning logs through metal-api's FSM and report the
/// transitions it does not expect.
#[derive(Debug, Parser)]
#[command(name = "fsmlog", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Unexpected (state, event) pairs across a fleet, crash loops, failed reclaims, and
    /// recorded verdicts this replay does not reproduce.
    ///
    /// Memory grows with the number of distinct pairs and flagged machines, not with the input.
    Report(ReportArgs),
    /// Every event of every machine with its state before, verdict and state after, and the
    /// container metal-api would hold.
    ///
    /// Holds one machine's events at a time.
    Replay(ReplayArgs),
    /// The built-in rule sets.
    #[command(subcommand)]
    Rules(RulesCommand),
}

/// What every command that reads logs takes.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Files or directories (read recursively) of exported logs; `-` reads standard input.
    /// `.gz` files are decompressed.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// The rule set: a built-in name (`fsmlog rules list`), `metal-api` for the newest, or a
    /// rule file.
    #[arg(long, default_value = DEFAULT_RULES, value_name = "RULES")]
    pub rules: String,
    /// Read every file as this format instead of detecting it.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// The machine id for single-machine files, instead of the file name.
    #[arg(long, value_name = "ID")]
    pub machine_id: Option<String>,
    /// Resolve a time-zone abbreviation in tables, e.g. `--tz IST=+0530` (repeatable).
    #[arg(long, value_name = "NAME=OFFSET", value_parser = parse_zone_arg)]
    pub tz: Vec<ExtraZone>,
    /// Worker threads (default: one per core); output does not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
}

/// `fsmlog report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = ReportFormat::Table)]
    pub output: ReportFormat,
}

/// `fsmlog replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = ReplayFormat::Table)]
    pub output: ReplayFormat,
}

/// Output formats of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
    Markdown,
}

/// Output formats of `replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReplayFormat {
    Table,
    Json,
    Ndjson,
}

/// `fsmlog rules …`.
#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// The built-in rule sets with a line each.
    List,
    /// A rule set as a state × event matrix: target state, `self`, or `—` (unexpected).
    Show {
        /// A built-in name or a rule file.
        #[arg(default_value = DEFAULT_RULES)]
        rules: String,
    },
    /// Write a rule set as a rule file (JSON) to standard output.
    Export {
        /// A built-in name or a rule file.
        #[arg(default_value = DEFAULT_RULES)]
        rules: String,
    },
}
