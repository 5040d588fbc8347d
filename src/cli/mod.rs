//! The command line: subcommands and the argument groups they share.

use std::path::PathBuf;

mod collect;
mod examples;
mod input;
mod metalctl;
mod values;
mod watch;

pub use input::{InputArgs, LabelArg};

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use collect::CollectArgs;
pub use watch::WatchArgs;

use crate::aggregate::Breakdown;
use crate::render::format::{
    CheckFormat, DiffFormat, GraphFormat, IssuesFormat, ProposeFormat, ReplayFormat, ReportFormat,
    TableFormat,
};
use examples::{
    CHECK_EXAMPLES, COLLECT_EXAMPLES, COMPLETIONS_EXAMPLES, DIFF_EXAMPLES, EXPLAIN_EXAMPLES,
    EXPORT_EXAMPLES, GRAPH_EXAMPLES, IMPORT_GO_EXAMPLES, ISSUES_EXAMPLES, LINT_EXAMPLES,
    LIST_EXAMPLES, MAN_EXAMPLES, PROPOSE_EXAMPLES, REPLAY_EXAMPLES, REPORT_EXAMPLES,
    RULES_EXAMPLES, SHOW_EXAMPLES, WATCH_EXAMPLES,
};

use crate::event::{Pair, parse_pair};
use crate::issues::{IssueType, Severity};
use crate::order::{MachineColumn, MachineOrder, Order, PairColumn, PairOrder, SortKey};
use crate::render::terminal::ColorChoice;
use crate::rules::DEFAULT_RULES;
use crate::sink::Sink;
use crate::window::{NowSpec, TimeSpec, WindowSpec, parse_now, parse_time_spec};
use chrono::TimeDelta;

/// The version and the commit it was built from (see build.rs).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("FSMLOG_COMMIT"), ")");

/// Replay metal-stack machine provisioning logs through metal-api's FSM and report the
/// transitions it does not expect.
#[derive(Debug, Parser)]
#[command(name = "fsmlog", version = VERSION, about, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Colour: on a terminal unless NO_COLOR is set (auto), always, or never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Show whole ids, times and example lists in tables instead of shortening them to fit.
    #[arg(long, global = true)]
    pub wide: bool,
    /// A table's rows alone, for a loop: no header row, border, summary or note (metalctl's
    /// `--no-headers`); CSV without its header row.
    #[arg(long, global = true)]
    pub no_headers: bool,
    /// With `-o template`: Go's text/template, executed over each row of the command's JSON
    /// (a pair in `report`, a machine in `issues`), as metalctl's `--template`:
    /// `fsmlog issues -o template --template '{{ .id }}'`.
    #[arg(long, global = true, value_name = "TEMPLATE")]
    pub template: Option<String>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Unexpected (state, event) pairs across a fleet, crash loops, failed reclaims, and
    /// recorded verdicts this replay does not reproduce.
    ///
    /// Memory grows with the number of distinct pairs and flagged machines, not with the input.
    #[command(after_help = REPORT_EXAMPLES)]
    Report(ReportArgs),
    /// Every event of every machine with its state before, verdict and state after, and the
    /// container metal-api would hold.
    ///
    /// Holds one machine's events at a time.
    #[command(after_help = REPLAY_EXAMPLES)]
    Replay(ReplayArgs),
    /// The (state, event) pairs whose verdict changes between two rule sets, and the machines
    /// whose crash-loop or failed-reclaim flag flips. Exit 1 when something becomes newly
    /// unexpected (see --fail-on).
    #[command(after_help = DIFF_EXAMPLES)]
    Diff(DiffArgs),
    /// The CI gate: exit 1 when unexpected pairs go beyond the accepted baseline.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// The transition graph: the rule set alone, or what the fleet did (observed edges with
    /// their events and counts, unexpected ones in red, rule edges nobody took faint).
    #[command(after_help = GRAPH_EXAMPLES, mut_arg("paths", |a| a.required(false)))]
    Graph(GraphArgs),
    /// A fleet audit: metal-api's machine issues (crash loops, failed reclaims, recent
    /// errors, liveliness, no event container) from an export, judged at --now, and the ones
    /// only a replay sees (stuck machines, unexpected transitions). Exit 1 with --fail-on.
    ///
    /// Holds a few hundred bytes per machine until the input is read.
    #[command(after_help = ISSUES_EXAMPLES)]
    Issues(IssuesArgs),
    /// Why each unexpected pair happens: how long machines sat in the state before it, the
    /// stored events just before and after, the days it happened on, and machines to look at.
    ///
    /// Counts the same occurrences as `report`. Memory grows with the number of occurrences
    /// (a few bytes each).
    #[command(after_help = EXPLAIN_EXAMPLES)]
    Explain(ExplainArgs),
    /// Poll metal-api and keep every stored event once in a history directory that every
    /// command reads (docs/history.md).
    ///
    /// Memory grows with the fleet, not with the history.
    #[command(after_help = COLLECT_EXAMPLES)]
    Collect(CollectArgs),
    /// `collect`'s loop serving the fleet live: Prometheus metrics, health and readiness, the
    /// report's page (docs/watch.md).
    ///
    /// The history is judged again after each poll that added to it.
    #[command(after_help = WATCH_EXAMPLES)]
    Watch(WatchArgs),
    /// The built-in rule sets.
    #[command(subcommand, after_help = RULES_EXAMPLES)]
    Rules(RulesCommand),
    /// Print a shell's completion script: `source <(fsmlog completions bash)`.
    #[command(visible_alias = "completion", after_help = COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) of fsmlog and every command: `fsmlog man | man -l -`.
    #[command(after_help = MAN_EXAMPLES)]
    Man,
}

/// `--since`, `--until` and `--now`: which occurrences a view counts. Every machine is still
/// replayed in full.
#[derive(Debug, Clone, Args)]
pub struct WindowArgs {
    /// Count only what happened at or after this time: RFC 3339, a date (midnight UTC), or a
    /// duration before --now (`7d`, `36h`, `90m`).
    #[arg(long, value_name = "TIME", value_parser = parse_time_spec)]
    pub since: Option<TimeSpec>,
    /// Count only what happened before this time (as --since takes it).
    #[arg(long, value_name = "TIME", value_parser = parse_time_spec)]
    pub until: Option<TimeSpec>,
    /// What durations count back from: the newest event in the input (the default), `now` for
    /// the wall clock, or a time.
    #[arg(long, value_name = "TIME|now", value_parser = parse_now)]
    pub now: Option<NowSpec>,
}

impl WindowArgs {
    /// The window as asked for.
    pub fn spec(&self) -> WindowSpec {
        WindowSpec {
            since: self.since,
            until: self.until,
            now: self.now.unwrap_or_default(),
        }
    }
}

/// `--out`: where a command that feeds a collector or a file writes its output.
#[derive(Debug, Args)]
pub struct OutArg {
    /// Write the output to FILE instead of standard output: atomically (a temporary file
    /// beside it, then renamed), as node_exporter's textfile collector needs; `-` is
    /// standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

impl OutArg {
    /// Where the output goes.
    pub fn sink(&self) -> Sink {
        Sink::to(self.out.as_deref())
    }
}

/// `--min-machines`: how many machines a verdict needs.
#[derive(Debug, Args)]
pub struct MinMachinesArg {
    /// A verdict to accept or swallow a pair needs its kind on at least this many machines.
    #[arg(long, default_value_t = crate::diagnose::MIN_MACHINES, value_name = "N")]
    pub min_machines: u64,
}

/// `--sort-by`: the order the pairs are listed in, as metalctl's lists sort.
#[derive(Debug, Args)]
pub struct SortArg {
    /// Sort the pairs by these columns (comma-separated or repeated), each ascending unless
    /// `:desc`: state, event, count, machines, first-seen, last-seen. Ties, and no
    /// `--sort-by`, keep the usual order: most frequent first.
    #[arg(
        long = "sort-by",
        value_name = "COLUMN[:asc|:desc]",
        value_delimiter = ',',
        value_parser = SortKey::<PairColumn>::parse
    )]
    pub sort_by: Vec<SortKey<PairColumn>>,
}

impl SortArg {
    /// The order asked for.
    pub fn order(&self) -> PairOrder {
        Order(self.sort_by.clone())
    }
}

/// `--allow-empty`: what a command that gates or feeds a collector does when no machine
/// was read.
#[derive(Debug, Args)]
pub struct AllowEmptyArg {
    /// Accept an empty input: when no machine was read, a gate passes and `-o openmetrics` is
    /// written (by default that is exit 2, and no metrics are written, so that a collector
    /// keeps its last good file).
    #[arg(long)]
    pub allow_empty: bool,
}

/// `--rules` for the commands that judge by one rule set.
#[derive(Debug, Args)]
pub struct RulesArg {
    /// The rule set: a built-in name (`fsmlog rules list`), `metal-api` for the newest, or a
    /// rule file.
    #[arg(long = "rules", default_value = DEFAULT_RULES, value_name = "RULES")]
    pub name: String,
}

/// `fsmlog report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Break each pair's counts down per day or ISO week (a sparkline in the table), and per
    /// partition, rack or size (a table of its own): at most one of each, repeated or
    /// comma-separated (`--by day,rack`).
    #[arg(long, value_enum, value_name = "BY", action = clap::ArgAction::Append, value_delimiter = ',')]
    pub by: Vec<Breakdown>,
    #[command(flatten)]
    pub min_machines: MinMachinesArg,
    #[command(flatten)]
    pub sort: SortArg,
    #[command(flatten)]
    pub allow_empty: AllowEmptyArg,
    /// Output format; `wide` is a table as `--wide` shows it (metalctl's `-o wide`).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = ReportFormat::Table)]
    pub output: ReportFormat,
    #[command(flatten)]
    pub out: OutArg,
    #[command(flatten)]
    pub labels: LabelArg,
}

/// `fsmlog replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RulesArg,
    /// Output format; `wide` is a table as `--wide` shows it (metalctl's `-o wide`).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = ReplayFormat::Table)]
    pub output: ReplayFormat,
}

/// `fsmlog diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The rule set the events are judged by today (name or file).
    #[arg(long, value_name = "RULES")]
    pub old: String,
    /// The rule set to compare with (name or file).
    #[arg(long, value_name = "RULES")]
    pub new: String,
    #[command(flatten)]
    pub window: WindowArgs,
    /// What makes the exit code 1.
    #[arg(long, value_enum, default_value_t = FailOn::NewlyUnexpected)]
    pub fail_on: FailOn,
    #[command(flatten)]
    pub allow_empty: AllowEmptyArg,
    /// Output format; `wide` is a table as `--wide` shows it (metalctl's `-o wide`).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = DiffFormat::Table)]
    pub output: DiffFormat,
}

/// When `diff` fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Something becomes unexpected that was not (a regression).
    NewlyUnexpected,
    /// Any verdict or flag changes.
    Any,
    /// Never; only report.
    Never,
}

/// `fsmlog check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub window: WindowArgs,
    /// The accepted pairs (a file written by --write-baseline, maybe edited). Without it, every
    /// unexpected pair fails the gate.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Record today's unexpected pairs as the accepted baseline in FILE (and pass).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    #[command(flatten)]
    pub allow_empty: AllowEmptyArg,
    /// Output format; `wide` is a table as `--wide` shows it (metalctl's `-o wide`).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = CheckFormat::Table)]
    pub output: CheckFormat,
    #[command(flatten)]
    pub out: OutArg,
    #[command(flatten)]
    pub labels: LabelArg,
}

/// `fsmlog graph`.
#[derive(Debug, Args)]
pub struct GraphArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Output format.
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = GraphFormat::Svg)]
    pub output: GraphFormat,
}

/// `fsmlog issues`.
#[derive(Debug, Args)]
pub struct IssuesArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RulesArg,
    /// The time to judge at: the newest event in the input (the default), `now` for the wall
    /// clock, or a time.
    #[arg(long, value_name = "TIME|now", value_parser = parse_now)]
    pub now: Option<NowSpec>,
    /// A last error event younger than this is an issue (`0` turns the check off). By default
    /// metal-api's 7d; with `-o openmetrics` metal-metrics-exporter's 1h, so that its alerts
    /// see what the exporter shows.
    #[arg(
        long,
        visible_alias = "last-event-error-threshold",
        value_name = "DURATION",
        value_parser = parse_limit
    )]
    pub last_error_threshold: Option<TimeDelta>,
    /// A machine in a state it should pass through for longer than this is stuck.
    #[arg(long, default_value = "1h", value_name = "DURATION", value_parser = parse_limit)]
    pub stuck_after: TimeDelta,
    /// Only these issue types (repeatable, or comma-separated).
    #[arg(long = "only", value_enum, value_delimiter = ',', value_name = "TYPE")]
    pub only: Vec<IssueType>,
    /// Not these issue types (repeatable, or comma-separated; beats --only).
    #[arg(long = "omit", value_enum, value_delimiter = ',', value_name = "TYPE")]
    pub omit: Vec<IssueType>,
    /// Only issues at or above this severity.
    #[arg(long, value_enum)]
    pub severity: Option<Severity>,
    /// Exit 1 when any machine has an issue at or above this severity.
    #[arg(long, value_enum, value_name = "SEVERITY")]
    pub fail_on: Option<Severity>,
    /// List the machines without issues too.
    #[arg(long)]
    pub all: bool,
    /// Sort the machines by these columns (comma-separated or repeated), each ascending unless
    /// `:desc`: id, partition, rack, size, project, hostname, liveliness, when (newest event
    /// first, as metalctl's), event (its name, as metalctl's), state, severity. Ties, and no
    /// `--sort-by`, keep the usual order: worst first, then by id.
    #[arg(
        long = "sort-by",
        value_name = "COLUMN[:asc|:desc]",
        value_delimiter = ',',
        value_parser = SortKey::<MachineColumn>::parse
    )]
    pub sort_by: Vec<SortKey<MachineColumn>>,
    #[command(flatten)]
    pub allow_empty: AllowEmptyArg,
    /// Output format; `wide` is a table as `--wide` shows it (metalctl's `-o wide`).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = IssuesFormat::Table)]
    pub output: IssuesFormat,
    #[command(flatten)]
    pub out: OutArg,
    #[command(flatten)]
    pub labels: LabelArg,
}

impl IssuesArgs {
    /// The order the machines are listed in.
    pub fn order(&self) -> MachineOrder {
        Order(self.sort_by.clone())
    }
}

fn parse_limit(text: &str) -> Result<TimeDelta, String> {
    if text.trim() == "0" {
        return Ok(TimeDelta::zero());
    }
    crate::window::parse_duration(text.trim())
        .ok_or_else(|| format!("expected a duration like 7d, 36h, 90m or 30s, found {text:?}"))
}

/// `fsmlog explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub rules: RulesArg,
    #[command(flatten)]
    pub window: WindowArgs,
    /// Only this pair, named as `report` names it: `STATE/EVENT` (repeatable, or comma-separated).
    #[arg(
        long = "pair",
        value_name = "STATE/EVENT",
        value_delimiter = ',',
        value_parser = parse_pair
    )]
    pub pairs: Vec<Pair>,
    /// How many stored events before and after each occurrence.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub context: usize,
    #[command(flatten)]
    pub min_machines: MinMachinesArg,
    #[command(flatten)]
    pub sort: SortArg,
    /// Output format; `wide` is a table as `--wide` shows it (metalctl's `-o wide`).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = TableFormat::Table)]
    pub output: TableFormat,
}

/// `fsmlog rules propose`.
#[derive(Debug, Args)]
pub struct ProposeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The rule set to start from (name or file).
    #[arg(long, default_value = DEFAULT_RULES, value_name = "BASE")]
    pub rules: String,
    #[command(flatten)]
    pub min_machines: MinMachinesArg,
    /// … and on at least this share (0–1) of the fleet's machines.
    #[arg(long, default_value_t = 0.0, value_name = "F", value_parser = parse_share)]
    pub min_share: f64,
    /// Accept this pair whatever its verdict (`STATE/EVENT`, repeatable or comma-separated; warned about).
    #[arg(
        long = "pair",
        value_name = "STATE/EVENT",
        value_delimiter = ',',
        value_parser = parse_pair
    )]
    pub pairs: Vec<Pair>,
    /// The proposed rule set's name (default: BASE-proposed).
    #[arg(long)]
    pub name: Option<String>,
    /// Output: the proposal and its effect (table), the rule file (json, or yaml), or a patch
    /// to events.go (go, with --go-file).
    #[arg(short, long, visible_alias = "output-format", value_enum, default_value_t = ProposeFormat::Table)]
    pub output: ProposeFormat,
    /// metal-api's `fsm/events.go` to write the patch against (-o go).
    #[arg(long, value_name = "EVENTS_GO")]
    pub go_file: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutArg,
}

fn parse_share(text: &str) -> Result<f64, String> {
    let share: f64 = text
        .parse()
        .map_err(|_| format!("expected a number, found {text:?}"))?;
    if (0.0..=1.0).contains(&share) {
        Ok(share)
    } else {
        Err(format!("a share is between 0 and 1, found {share}"))
    }
}

/// `fsmlog rules …`.
#[derive(Debug, Subcommand)]
pub enum RulesCommand {
    /// The built-in rule sets with a line each.
    #[command(after_help = LIST_EXAMPLES)]
    List,
    /// A rule set as a state × event matrix: target state, `self`, or `—` (unexpected).
    #[command(after_help = SHOW_EXAMPLES)]
    Show {
        /// A built-in name or a rule file.
        #[arg(default_value = DEFAULT_RULES)]
        rules: String,
    },
    /// Write a rule set as a rule file (JSON) to standard output.
    #[command(after_help = EXPORT_EXAMPLES)]
    Export {
        /// A built-in name or a rule file.
        #[arg(default_value = DEFAULT_RULES)]
        rules: String,
    },
    /// Check a rule file; each mistake is named with its line. Exit 1 when there is one.
    #[command(after_help = LINT_EXAMPLES)]
    Lint {
        /// The rule file.
        path: PathBuf,
    },
    /// The rule set that would accept the unexpected pairs a fleet shows often enough: the
    /// base plus one accepting row per pair, as a rule file or a patch to metal-api's
    /// events.go, with its effect as `diff` shows it.
    #[command(after_help = PROPOSE_EXAMPLES)]
    Propose(Box<ProposeArgs>),
    /// Read metal-api's `cmd/metal-api/internal/fsm/events.go` and write the rule file.
    #[command(after_help = IMPORT_GO_EXAMPLES)]
    ImportGo {
        /// The Go file.
        events_go: PathBuf,
        /// Take name-independent behaviour (buffering window, reclaim threshold, kept events)
        /// from this rule set.
        #[arg(long, default_value = DEFAULT_RULES, value_name = "RULES")]
        like: String,
        /// The name of the new rule set (default: the Go file's name).
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        out: OutArg,
    },
}

/// The command line with metalctl's spellings clap cannot parse put as fsmlog's (`-o wide`).
pub fn metalctl_spellings(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    metalctl::spellings(args)
}
