//! Feeds arbitrary bytes to the table reader as pasted text: detected, and with every line
//! behind a quote marker, a list marker and a number, as chat and tickets hand them over. It
//! must never panic.
#![no_main]

use fsmlog::{InputOptions, read_reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let options = InputOptions::default();
    read_reader(data, "fuzz.txt", &options, &mut |_| {});
    for marker in [&b"> "[..], b"- ", b"1. ", b"(2) "] {
        let mut marked = Vec::with_capacity(data.len() * 2);
        for line in data.split_inclusive(|&b| b == b'\n') {
            marked.extend_from_slice(marker);
            marked.extend_from_slice(line);
        }
        read_reader(&marked[..], "fuzz.txt", &options, &mut |_| {});
    }
});
