//! Feeds arbitrary bytes to the metalctl table reader: it must never panic.
#![no_main]

use fsmlog::{Format, InputOptions, read_reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let options = InputOptions {
        format: Some(Format::Table),
        ..InputOptions::default()
    };
    read_reader(data, "fuzz.txt", &options, &mut |_| {});
});
