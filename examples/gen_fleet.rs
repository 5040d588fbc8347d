//! Generates a seeded fleet in any input format, for benchmarks and demos:
//!
//! ```sh
//! cargo run --release --example gen_fleet -- --machines 100000 --format list-json --out fleet.json
//! cargo run --release --example gen_fleet -- --machines 50 --format table --out fleet-tables/
//! cargo run --release --example gen_fleet -- --machines 300 --rules metal-api-v0.19.0 --out old.json
//! ```
//!
//! Fleet formats (list-json, container-dump, v2-json, ndjson, concat-table) write one file;
//! per-machine formats (logs-json, describe-json, event-api, table, markdown) write a directory.
//! The exports hold what metal-api v0.42.2 stored; the raw stream (ndjson) what the machines sent.

use fsmlog::sim::{details, fleet};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use fsmlog::Ruleset;
use fsmlog::format_time;
use fsmlog::{Exporter, Layout};

/// A layout by its name.
fn layout(name: &str) -> Result<Layout, String> {
    Layout::from_name(name).ok_or_else(|| {
        let names: Vec<_> = Layout::ALL.iter().map(|l| l.name()).collect();
        format!("expected one of {}", names.join(", "))
    })
}

/// Generate a seeded fleet export.
#[derive(Parser)]
struct Args {
    /// How many machines.
    #[arg(long, default_value_t = 1000)]
    machines: u64,
    /// The export format.
    #[arg(long, default_value = "list-json", value_parser = layout)]
    format: Layout,
    /// The random seed: the same seed gives the same fleet.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Simulate each machine until metal-api holds this many stored events for it.
    #[arg(long, default_value_t = 100)]
    events: usize,
    /// With it, each machine holds between this many and `--events` (the number drawn from
    /// the seed and the machine): a fleet of machines of all ages.
    #[arg(long)]
    min_events: Option<usize>,
    /// Give each machine of a describe or list export what metal-api's v1 API holds besides
    /// its events (hardware, IPMI, BIOS, tags, allocation: ~6 KB), as real exports have it.
    #[arg(long)]
    real: bool,
    /// The rule set metal-api ran when it stored the events (a built-in name or a rule file).
    #[arg(long, default_value = "metal-api-v0.42.2")]
    rules: String,
    /// The file (fleet formats) or directory (per-machine formats) to write; `-` for stdout.
    #[arg(long, default_value = "-")]
    out: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let rules = Ruleset::resolve(&args.rules)?;
    if args.format.one_machine_per_file() && args.out.as_os_str() != "-" {
        fs::create_dir_all(&args.out)
            .with_context(|| format!("cannot create {}", args.out.display()))?;
        for index in 0..args.machines {
            let m = fleet::machine(args.seed, index, events_of(&args, index), &rules);
            let path = args
                .out
                .join(format!("{}.{}", m.id, args.format.extension()));
            let mut exporter = Exporter::new(args.format, BufWriter::new(File::create(&path)?));
            exporter.machine_with(&m.id, &m.container, &extra(&args, index))?;
            exporter.finish()?;
        }
        return Ok(());
    }
    let out: Box<dyn Write> = if args.out.as_os_str() == "-" {
        Box::new(std::io::stdout().lock())
    } else {
        Box::new(
            File::create(&args.out)
                .with_context(|| format!("cannot create {}", args.out.display()))?,
        )
    };
    let mut out = BufWriter::with_capacity(1 << 20, out);
    if args.format == Layout::Ndjson {
        // The raw stream: every event as the machines sent it, machines interleaved by time
        // within each batch of machines, as a collector would have recorded them.
        for batch in (0..args.machines).collect::<Vec<_>>().chunks(64) {
            let machines: Vec<_> = batch
                .iter()
                .map(|i| fleet::machine(args.seed, *i, events_of(&args, *i), &rules))
                .collect();
            let mut lines: Vec<_> = machines
                .iter()
                .flat_map(|m| m.sent.iter().map(move |e| (e.time, &m.id, e)))
                .collect();
            lines.sort_by_key(|(t, _, _)| *t);
            for (_, id, e) in lines {
                let line = serde_json::json!({
                    "machine_id": id,
                    "time": format_time(e.time),
                    "event": e.event.name(),
                    "message": e.message,
                });
                serde_json::to_writer(&mut out, &line)?;
                out.write_all(b"\n")?;
            }
        }
        out.flush()?;
        return Ok(());
    }
    let mut exporter = Exporter::new(args.format, out);
    for index in 0..args.machines {
        let m = fleet::machine(args.seed, index, events_of(&args, index), &rules);
        exporter.machine_with(&m.id, &m.container, &extra(&args, index))?;
    }
    exporter.finish()?;
    Ok(())
}

/// How many stored events machine `index` is simulated to: `--events`, or with
/// `--min-events` a number between the two drawn from the seed and the index (a fixed mix,
/// not a random generator's, so that the fleet is the same on every run).
fn events_of(args: &Args, index: u64) -> usize {
    let Some(min) = args.min_events.filter(|m| *m < args.events) else {
        return args.events;
    };
    let mut x = args.seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    min + (x % (args.events - min + 1) as u64) as usize
}

fn extra(args: &Args, index: u64) -> serde_json::Map<String, serde_json::Value> {
    if args.real {
        details::details(args.seed, index)
    } else {
        serde_json::Map::new()
    }
}
