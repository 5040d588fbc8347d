//! Read + replay + tally throughput per input format, on a seeded fleet held in memory.
//! `cargo bench --bench read_replay`; the end-to-end comparison with grep and jq on a 1 GB
//! file is `bench/compare.sh`.

use std::io::Cursor;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fsmlog::Ruleset;
use fsmlog::Summary;
use fsmlog::replay;
use fsmlog::sim::fleet;
use fsmlog::{Exporter, Layout};
use fsmlog::{InputOptions, Record, read_reader};

const MACHINES: u64 = 200;

fn fleet_bytes(layout: Layout, rules: &Ruleset) -> Vec<u8> {
    let mut exporter = Exporter::new(layout, Vec::new());
    for index in 0..MACHINES {
        let m = fleet::machine(7, index, 100, rules);
        exporter.machine(&m.id, &m.container).unwrap();
    }
    exporter.finish().unwrap()
}

fn summarize(bytes: &[u8], name: &str, rules: &Ruleset) -> Summary {
    let mut summary = Summary::default();
    read_reader(
        Cursor::new(bytes),
        name,
        &InputOptions::default(),
        &mut |record| {
            if let Record::Machine(log) = record {
                summary.add_trace(&replay(&log, rules));
            }
        },
    );
    summary
}

fn read_replay(c: &mut Criterion) {
    let rules = Ruleset::resolve("metal-api-v0.42.2").unwrap();
    let mut group = c.benchmark_group("read_replay");
    for (layout, name) in [
        (Layout::ListJson, "list-json"),
        (Layout::ContainerDump, "container-dump"),
        (Layout::V2Json, "v2-json"),
        (Layout::ConcatTable, "concat-table"),
    ] {
        let bytes = fleet_bytes(layout, &rules);
        let check = summarize(&bytes, "fleet", &rules);
        assert_eq!(check.machines, MACHINES, "{name}");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(name, |b| b.iter(|| summarize(&bytes, "fleet", &rules)));
    }
    group.finish();
}

fn replay_only(c: &mut Criterion) {
    let rules = Ruleset::resolve("metal-api-v0.42.2").unwrap();
    let bytes = fleet_bytes(Layout::ContainerDump, &rules);
    let mut logs = Vec::new();
    read_reader(
        Cursor::new(&bytes),
        "fleet",
        &InputOptions::default(),
        &mut |record| {
            if let Record::Machine(log) = record {
                logs.push(log);
            }
        },
    );
    let events: usize = logs.iter().map(|l| l.events.len()).sum();
    let mut group = c.benchmark_group("replay");
    group.throughput(Throughput::Elements(events as u64));
    group.bench_function("events", |b| {
        b.iter(|| {
            logs.iter()
                .map(|l| replay(l, &rules).steps.len())
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, read_replay, replay_only);
criterion_main!(benches);
