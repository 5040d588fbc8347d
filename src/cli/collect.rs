//! `fsmlog collect`'s options: metalctl's names for where to poll and how to sign in, and the
//! collector's own.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::collect::{Plan, SourceOptions};

/// Where to poll, how to sign in, and where the history goes.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// The history directory: `events/YYYY-MM-DD.ndjson` and `machines.json` (created).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// Time between polls (metal-metrics-exporter's 90s); `--once` polls once.
    #[arg(long, value_name = "DURATION", default_value = "90s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Give up on a request after this long.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Poll once and exit: 0 when written, 2 when metal-api cannot be read (nothing written).
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Where to poll and how to sign in, with metalctl's names (`collect` and `watch`).
#[derive(Debug, Args)]
pub struct SourceArgs {
    /// metal-api's URL (requests go to URL/v1/…); else METALCTL_API_URL, else the context's.
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// A bearer token; else METALCTL_API_TOKEN. Prefer the variable: flags show in `ps`.
    #[arg(long, value_name = "TOKEN")]
    pub api_token: Option<String>,
    /// The HMAC key; else METALCTL_HMAC, else the context's `hmac`. Prefer the variable.
    #[arg(long, value_name = "KEY")]
    pub hmac: Option<String>,
    /// The HMAC's auth type; else METALCTL_HMAC_AUTH_TYPE, else the context's, else
    /// Metal-Admin.
    #[arg(long, value_name = "TYPE")]
    pub hmac_auth_type: Option<String>,
    /// metalctl's config.yaml; else METALCTL_CONFIG, else the first of /etc/metalctl,
    /// ~/.metalctl and the current directory.
    #[arg(short = 'c', long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The context of metalctl's config to use instead of its `current` one.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// Poll only this partition's machines.
    #[arg(long, value_name = "ID")]
    pub partition: Option<String>,
}

impl SourceArgs {
    /// The options as the collector takes them.
    pub fn options(&self) -> SourceOptions {
        SourceOptions {
            api_url: self.api_url.clone(),
            api_token: self.api_token.clone(),
            hmac: self.hmac.clone(),
            hmac_auth_type: self.hmac_auth_type.clone(),
            config: self.config.clone(),
            context: self.context.clone(),
            partition: self.partition.clone(),
        }
    }
}

impl CollectArgs {
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

/// A duration longer than zero, as humantime reads it (`90s`, `5m`).
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    match humantime::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("a duration longer than zero, e.g. 90s".to_string()),
        Err(e) => Err(format!("{e} (e.g. 90s, 5m)")),
    }
}
