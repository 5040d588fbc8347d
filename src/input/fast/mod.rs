//! The ways a JSON export is read, and the one rule they share.
//!
//! The careful path cuts the document with `jsonsplit`'s scanner (lines and columns for every
//! problem) and parses each value with serde, which says exactly where and why a value is
//! wrong. The fast paths exist for speed alone:
//!
//! - **whole log**: a `machine logs -o json` file held whole in memory, read straight from
//!   its bytes (`direct::event_array`) without cutting it first;
//! - **cut at element lines**: a pretty-printed array cut where each element's brackets close
//!   (`jsonsplit::indented`), once its first element told what it holds;
//! - **stream line**: a raw stream's compact four-key line (`line::stream_line`), serde where
//!   it declines (`ndjson::stream_agrees` holds it to serde's answer);
//! - per machine element, tried in this order: **skimmed** (only the members fsmlog reads kept,
//!   `skim`, then read directly), **direct** (the whole element read straight from its
//!   bytes), **simd** (simd-json), and last **serde**, the careful parse.
//!
//! Every fast path keeps one contract: it **declines, or gives exactly the careful path's
//! answer** — the same records, lines and problems, in the same order. A fast path that is not
//! sure declines and hands on nothing; the next one, and at the end the careful path, reads the
//! input. The differential checks (`whole_log_agrees`, `direct_agrees`, the property tests and
//! fuzz targets) hold the fast paths to it.
//!
//! [`ways`] is the one place that chooses them: for a file of a detected family, a machine
//! element, or any other value, the fast ways tried in order and the careful way that answers
//! last. The readers ask it and take the first way that does not decline: the file's in
//! `input::read_detected`, a machine element's in [`machine_element`], any other value's in
//! [`value`]. With `FSMLOG_TRACE=read` the ways taken are named on stderr ([`tracing`]).

use std::sync::OnceLock;

mod agrees;
mod direct;
mod line;
pub(crate) mod simd;
pub(crate) mod skim;

pub use agrees::agrees as direct_agrees;
pub(crate) use direct::{
    event as direct_event, event_array as direct_event_array, machine as direct_machine,
};

pub use super::problems::{PathsTaken, ReadPath};
use super::raw::RawItem;
use super::record::ReadMode;
pub(crate) use line::{stream_line, string as json_string};
use skim::skim;

/// Tells how `path` (a file), or a value in it, was read, where `FSMLOG_TRACE=read` asks.
pub fn read_by(path: &str, how: ReadPath, emit: &mut dyn FnMut(super::record::Record)) {
    if tracing() {
        let mut taken = PathsTaken::default();
        taken.add(how);
        emit(super::record::Record::ReadBy {
            path: path.to_string(),
            taken,
        });
    }
}

/// Whether `FSMLOG_TRACE` asks for the read paths (`read`, or a comma list holding it).
pub fn tracing() -> bool {
    static WANTED: OnceLock<bool> = OnceLock::new();
    *WANTED.get_or_init(|| {
        std::env::var("FSMLOG_TRACE").is_ok_and(|v| v.split(',').any(|w| w.trim() == "read"))
    })
}

/// What is about to be read, as far as the choice of its ways depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// A file of JSON documents; `held_whole` where its head holds all of it, clean (no read
    /// error, no blank lines before the content).
    Json { held_whole: bool },
    /// A YAML file.
    Yaml,
    /// A file of `metalctl machine logs` tables.
    Table,
    /// A raw event stream.
    Stream,
    /// A machine element of a list; `skimming` while skimming pays in its batch.
    Machine { skimming: bool },
    /// Any other JSON value: a document, the element that tells what an array holds, or an
    /// element every fast way declined.
    Value,
}

/// The ways one reading may take: the fast ones, tried in order, each declining or giving
/// exactly the careful answer; then the careful one, which always answers (and names what is
/// wrong).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ways {
    pub fast: &'static [ReadPath],
    pub careful: ReadPath,
}

/// Chooses how a reading is read: the one place that does (see the module's contract).
pub(crate) fn ways(reading: Reading) -> Ways {
    use ReadPath::*;
    let (fast, careful): (&'static [ReadPath], ReadPath) = match reading {
        // A `machine logs` file (a directory holds thousands) is mostly read whole with its
        // head: straight from those bytes, without cutting it into elements first.
        Reading::Json { held_whole: true } => (&[WholeLog], Careful),
        Reading::Json { held_whole: false } => (&[], Careful),
        Reading::Yaml => (&[], Yaml),
        Reading::Table => (&[], Table),
        Reading::Stream => (&[], Ndjson),
        // Only what is read is parsed: a machine's hardware is most of its bytes.
        Reading::Machine { skimming: true } => (&[Skimmed, Simd], Serde),
        Reading::Machine { skimming: false } => (&[Direct, Simd], Serde),
        Reading::Value => (&[Simd], Serde),
    };
    Ways { fast, careful }
}

/// Reads one machine element of a list by the first of its fast [`ways`] that does not
/// decline, handing the machine and the way to `take`; `false` when every one declined and the
/// careful parse must read it (and name what is wrong) with [`value`], after the element is
/// told from two the cut took for one. `skimming` says whether skimming still pays for this
/// batch: where it does not (the machines hold little else than events, or are not
/// pretty-printed) it is turned off for the rest. `scratch` is a working buffer. What only
/// the audit judges by is kept and read where `mode` is [`ReadMode::Audit`] only.
pub(crate) fn machine_element(
    bytes: &[u8],
    mode: ReadMode,
    scratch: &mut Vec<u8>,
    skimming: &mut bool,
    take: &mut dyn FnMut(RawItem<'_>, ReadPath),
) -> bool {
    *skimming = *skimming
        && skim(bytes, RawItem::chooser(mode), scratch)
        && scratch.len() < bytes.len() / 5 * 4;
    // Where skimming stopped paying, `scratch` holds no copy of the element yet.
    let mut copied = *skimming;
    for &way in ways(Reading::Machine {
        skimming: *skimming,
    })
    .fast
    {
        match way {
            ReadPath::Skimmed | ReadPath::Direct => {
                let from: &[u8] = if way == ReadPath::Skimmed {
                    scratch
                } else {
                    bytes
                };
                if let Some(item) = direct_machine(from, mode) {
                    take(item, way);
                    return true;
                }
            }
            ReadPath::Simd => {
                if !copied {
                    scratch.clear();
                    scratch.extend_from_slice(bytes);
                    copied = true;
                }
                if let Ok(item) = simd::parse::<RawItem>(scratch) {
                    take(item, way);
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// Reads one JSON value by its fast [`ways`] (simd-json on a copy in `scratch`), else by the
/// careful parse, serde, whose error names what is wrong.
pub(crate) fn value<'a>(
    bytes: &'a [u8],
    scratch: &'a mut Vec<u8>,
) -> Result<(RawItem<'a>, ReadPath), serde_json::Error> {
    let ways = ways(Reading::Value);
    // simd-json writes into what it parses, so it is given the copy, once.
    let mut scratch = Some(scratch);
    for &way in ways.fast {
        if way == ReadPath::Simd
            && let Some(copy) = scratch.take()
        {
            copy.clear();
            copy.extend_from_slice(bytes);
            if let Ok(item) = simd::parse::<RawItem>(copy) {
                return Ok((item, way));
            }
        }
    }
    serde_json::from_slice(bytes).map(|item| (item, ways.careful))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_names_the_files_path_then_the_values() {
        let mut taken = PathsTaken::default();
        taken.add(ReadPath::Careful);
        for _ in 0..3 {
            taken.add(ReadPath::Skimmed);
        }
        taken.add(ReadPath::Serde);
        assert_eq!(taken.describe(), "careful scan; values: 3 skimmed, 1 serde");
        let mut whole = PathsTaken::default();
        whole.add(ReadPath::WholeLog);
        assert_eq!(whole.describe(), "whole log read directly");
    }

    #[test]
    fn the_bmc_and_the_networks_are_skimmed_and_read_for_the_audit_only() {
        let disks = vec!["1"; 200].join(", ");
        let machine = format!(
            "{{\n    \"id\": \"m\",\n    \"hardware\": {{\n        \"disks\": [{disks}]\n    }},\n    \"allocation\": {{\n        \"role\": \"firewall\",\n        \"networks\": [\n            {{\n                \"asn\": 4200000001,\n                \"prefixes\": [\"10.0.0.0/22\"]\n            }}\n        ]\n    }},\n    \"ipmi\": {{\n        \"address\": \"10.1.1.1:623\",\n        \"password\": \"secret\"\n    }},\n    \"events\": {{\n        \"log\": []\n    }}\n}}"
        );
        for (mode, read) in [(ReadMode::Whole, false), (ReadMode::Audit, true)] {
            let mut scratch = Vec::new();
            let mut skimming = true;
            let mut seen = None;
            assert!(machine_element(
                machine.as_bytes(),
                mode,
                &mut scratch,
                &mut skimming,
                &mut |item, path| {
                    let asns = item.place().map(|p| p.asns);
                    seen = Some((path, asns, item.bmc().map(|b| b.address)));
                },
            ));
            let skimmed = String::from_utf8_lossy(&scratch).to_string();
            assert_eq!(skimmed.contains("networks"), read, "{skimmed}");
            assert_eq!(skimmed.contains("10.1.1.1"), read, "{skimmed}");
            assert!(!skimmed.contains("secret"), "{skimmed}");
            let (path, asns, bmc) = seen.unwrap();
            assert_eq!(path, ReadPath::Skimmed);
            let want_asns = if read {
                vec![4_200_000_001]
            } else {
                Vec::new()
            };
            assert_eq!(asns, Some(want_asns));
            assert_eq!(bmc, read.then(|| "10.1.1.1:623".to_string()));
            // Read straight from its bytes (no skim), the same.
            let mut off = false;
            let mut direct = None;
            assert!(machine_element(
                machine.as_bytes(),
                mode,
                &mut scratch,
                &mut off,
                &mut |item, path| direct = Some((path, item.ipmi.0.is_some())),
            ));
            assert_eq!(direct, Some((ReadPath::Direct, read)));
        }
    }

    #[test]
    fn each_fast_path_is_taken_where_it_fits_and_declines_otherwise() {
        let mut scratch = Vec::new();
        let mut took = Vec::new();
        // Pretty-printed, with a hardware member far larger than what is read: skimmed.
        let disks = vec!["1"; 200].join(", ");
        let pretty = format!(
            "{{\n        \"id\": \"m\",\n        \"hardware\": {{\n            \"disks\": [{disks}]\n        }},\n        \"events\": {{\n            \"log\": []\n        }}\n    }}"
        );
        let mut skimming = true;
        assert!(machine_element(
            pretty.as_bytes(),
            ReadMode::Whole,
            &mut scratch,
            &mut skimming,
            &mut |item, path| took.push((item.id.as_deref().map(str::to_string), path)),
        ));
        assert_eq!(took, [(Some("m".to_string()), ReadPath::Skimmed)]);
        // Where the machine is survives the skim: the partition whole, of the allocation
        // (whose user data is most of it) only what is read.
        let user_data = "x".repeat(4000);
        let placed = format!(
            "{{\n        \"id\": \"m\",\n        \"partition\": {{\n            \"id\": \"fra\",\n            \"bootconfig\": {{\n                \"commandline\": \"console=ttyS1\"\n            }}\n        }},\n        \"rackid\": \"rack08\",\n        \"allocation\": {{\n            \"hostname\": \"worker-1\",\n            \"userdata\": \"{user_data}\",\n            \"image\": {{\n                \"id\": \"debian-12\"\n            }}\n        }},\n        \"events\": {{\n            \"log\": []\n        }}\n    }}"
        );
        let mut places = Vec::new();
        let mut skimming = true;
        assert!(machine_element(
            placed.as_bytes(),
            ReadMode::Whole,
            &mut scratch,
            &mut skimming,
            &mut |item, path| places.push((item.place(), path)),
        ));
        let (place, path) = places.pop().unwrap();
        assert_eq!(path, ReadPath::Skimmed);
        assert!(scratch.len() < 400, "{}", String::from_utf8_lossy(&scratch));
        let place = place.unwrap();
        assert_eq!(
            (place.partition.as_deref(), place.rack.as_deref()),
            (Some("fra"), Some("rack08"))
        );
        assert_eq!(
            (place.hostname.as_deref(), place.image.as_deref()),
            (Some("worker-1"), Some("debian-12"))
        );
        // Not valid JSON: every fast path declines, and nothing is handed on.
        took.clear();
        let broken = b"{\"id\": \"m\", \"events\": {\"log\": [}";
        let mut skimming = false;
        assert!(!machine_element(
            broken,
            ReadMode::Whole,
            &mut scratch,
            &mut skimming,
            &mut |item, path| took.push((item.id.as_deref().map(str::to_string), path)),
        ));
        assert!(took.is_empty());
    }
}
