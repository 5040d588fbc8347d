//! A differential target for the table rows' fast path: whatever it reads of metalctl's rows
//! must be what the careful classifier reads, line by line, machines, events and problems.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    assert!(fsmlog::table_agrees(data), "{:?}", String::from_utf8_lossy(data));
});
