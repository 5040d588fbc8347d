//! Feeds arbitrary bytes to the YAML reader, as a `---` stream (so that detection takes it for
//! YAML), detected and under each JSON shape: it must never panic.
#![no_main]

use fsmlog::{Format, InputOptions, read_reader};
use libfuzzer_sys::fuzz_target;

const FORMATS: [Option<Format>; 7] = [
    None,
    Some(Format::LogsJson),
    Some(Format::DescribeJson),
    Some(Format::ListJson),
    Some(Format::EventApi),
    Some(Format::ContainerDump),
    Some(Format::V2Json),
];

fuzz_target!(|data: &[u8]| {
    let mut text = b"---\n".to_vec();
    text.extend_from_slice(data);
    for format in FORMATS {
        let options = InputOptions {
            format,
            ..InputOptions::default()
        };
        read_reader(&text[..], "fuzz.yaml", &options, &mut |_| {});
        read_reader(data, "fuzz.yaml", &options, &mut |_| {});
    }
});
