//! The arguments every reading command shares: what to read and how (`InputArgs`, with
//! metalctl's cuts), and the labels a metrics file adds to its series (`LabelArg`).

use std::path::PathBuf;

use clap::Args;

use crate::fleet::{Keep, Sources};
use crate::input::Format;
use crate::input::record::InputOptions;
use crate::input::time::{ExtraZone, parse_zone_arg};

/// What every command that reads logs takes.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Files or directories (read recursively) of exported logs; `-` reads standard input.
    /// `.gz` files are decompressed.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Read every file as this format instead of detecting it.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// The machine id for single-machine files, instead of the file name.
    #[arg(long, value_name = "ID")]
    pub machine_id: Option<String>,
    /// Resolve a time-zone abbreviation in tables, e.g. `--tz IST=+0530` (repeatable, or
    /// comma-separated: `--tz IST=+0530,XST=+0500`).
    #[arg(long, value_name = "NAME=OFFSET", value_delimiter = ',', value_parser = parse_zone_arg)]
    pub tz: Vec<ExtraZone>,
    /// Worker threads (default: one per core); output does not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// No progress bar (it shows only on a terminal, outside CI, for runs over a second).
    #[arg(short, long)]
    pub quiet: bool,
    /// Only the machines in these partitions, as their exports say (metalctl's
    /// `--partition`; repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub partition: Vec<String>,
    /// Only the machines in these racks (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub rack: Vec<String>,
    /// Only the machines of these sizes (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub size: Vec<String>,
    /// Only the machines with these ids (metalctl's `--id`; repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub id: Vec<String>,
    /// Only the machines allocated to these projects (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub project: Vec<String>,
    /// Only the machines whose allocation has these hostnames (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAME")]
    pub hostname: Vec<String>,
    /// Only the machines allocated in these roles, `machine` or `firewall` (repeatable, or
    /// comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ROLE")]
    pub role: Vec<String>,
    /// Only the machines whose allocation runs these images (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub image: Vec<String>,
}

impl InputArgs {
    /// What the pipeline is to read, as these options say.
    pub fn sources(&self) -> Sources {
        Sources {
            paths: self.paths.clone(),
            options: InputOptions {
                format: self.format,
                machine_id: self.machine_id.clone(),
                zones: self.tz.clone(),
                ..InputOptions::default()
            },
            threads: self.threads,
            progress: !self.quiet,
            keep: Keep {
                id: self.id.clone(),
                partition: self.partition.clone(),
                rack: self.rack.clone(),
                size: self.size.clone(),
                project: self.project.clone(),
                hostname: self.hostname.clone(),
                role: self.role.clone(),
                image: self.image.clone(),
                machine_id: self.machine_id.is_some(),
            },
        }
    }
}

impl InputArgs {
    /// A label for each cut given, named as its flag, its value the list as given
    /// (`partition="fra-equ01,fra-equ02"`): files of two cuts never hold the same series.
    fn cut_labels(&self) -> Vec<(String, String)> {
        [
            ("id", &self.id),
            ("partition", &self.partition),
            ("rack", &self.rack),
            ("size", &self.size),
            ("project", &self.project),
            ("hostname", &self.hostname),
            ("role", &self.role),
            ("image", &self.image),
        ]
        .into_iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(name, values)| (name.to_string(), values.join(",")))
        .collect()
    }
}

/// `--label`: what a metrics file adds to every series, so that files of several runs share
/// one textfile directory or one Prometheus without a repeated series.
#[derive(Debug, Args)]
pub struct LabelArg {
    /// Add this label to every series of `-o openmetrics` (repeatable), e.g. `--label
    /// cluster=prod`; a cut (`--partition`, `--rack`, …) adds its own, named as its flag.
    #[arg(long = "label", value_name = "NAME=VALUE", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
}

impl LabelArg {
    /// The labels of every series: the cuts', then `--label`'s, which win over a cut's of the
    /// same name.
    pub fn labels(&self, input: &InputArgs) -> Vec<(String, String)> {
        let mut labels = input.cut_labels();
        labels.retain(|(name, _)| !self.labels.iter().any(|(n, _)| n == name));
        labels.extend(self.labels.iter().cloned());
        labels
    }
}

/// A label as Prometheus names them: `[a-zA-Z_][a-zA-Z0-9_]*`, not `__`-prefixed (those are
/// Prometheus' own).
fn parse_label(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not NAME=VALUE"))?;
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with("__");
    if !valid {
        return Err(format!(
            "`{name}` is no Prometheus label name (letters, digits and `_`, not starting with a digit or `__`)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}
