//! Feeds arbitrary bytes to the JSON readers (detected, and each forced format): they must
//! never panic.
#![no_main]

use fsmlog::{Format, InputOptions, read_reader};
use libfuzzer_sys::fuzz_target;

const FORMATS: [Option<Format>; 8] = [
    None,
    Some(Format::LogsJson),
    Some(Format::DescribeJson),
    Some(Format::ListJson),
    Some(Format::EventApi),
    Some(Format::ContainerDump),
    Some(Format::V2Json),
    Some(Format::Ndjson),
];

fuzz_target!(|data: &[u8]| {
    for format in FORMATS {
        let options = InputOptions {
            format,
            ..InputOptions::default()
        };
        read_reader(data, "fuzz.json", &options, &mut |_| {});
    }
});
