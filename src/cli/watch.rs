//! `fsmlog watch`'s options: the collector's (where to poll, how to sign in, where the
//! history goes) and the server's.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::collect::{SourceArgs, parse_duration};
use crate::collect::Plan;
use crate::render::format::LogFormat;

/// `fsmlog watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The history directory, as `collect --into` (created).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// Time between polls (metal-metrics-exporter's 90s).
    #[arg(long, value_name = "DURATION", default_value = "90s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Give up on a request to metal-api after this long.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Where the server listens: /metrics, /healthz, /readyz, / and /explain (loopback unless
    /// told, e.g. `0.0.0.0:9119` in a pod).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9119")]
    pub listen: SocketAddr,
    /// Log lines as text or as JSON lines.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Also serve metal-metrics-exporter's `metal_machine_issues` and
    /// `metal_machine_issues_info` for metal-api's issue types: only where the exporter is not
    /// deployed, or each series would be there twice.
    #[arg(long)]
    pub exporter_issues: bool,
    /// The rule set: a built-in name (`fsmlog rules list`), `metal-api` for the newest, or a
    /// rule file.
    #[arg(long = "rules", default_value = crate::rules::DEFAULT_RULES, value_name = "RULES")]
    pub rules: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

impl WatchArgs {
    /// The collector's plan.
    pub fn plan(&self) -> Plan {
        Plan {
            source: self.source.options(),
            into: self.into.clone(),
            interval: self.interval,
            timeout: self.timeout,
        }
    }
}
