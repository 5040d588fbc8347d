//! A differential target for the reader that takes a machine (or a `machine logs` event, or
//! a whole `machine logs` file) straight from its bytes: whatever it reads must be what the
//! careful path (simd-json, then serde_json) reads, machine, events and problems; where it is
//! not sure, it declines. Fed the bytes as they come and, where they are JSON, as metalctl
//! prints them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::Serialize;

fuzz_target!(|data: &[u8]| {
    assert_ne!(fsmlog::direct_agrees(data), Some(false), "{:?}", String::from_utf8_lossy(data));
    assert_ne!(fsmlog::whole_log_agrees(data), Some(false), "{:?}", String::from_utf8_lossy(data));
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for indent in [&b"    "[..], b"  "] {
        let mut pretty = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
        let mut printer = serde_json::Serializer::with_formatter(&mut pretty, formatter);
        if value.serialize(&mut printer).is_ok() {
            assert_ne!(
                fsmlog::direct_agrees(&pretty),
                Some(false),
                "{:?}",
                String::from_utf8_lossy(&pretty)
            );
            assert_ne!(
                fsmlog::whole_log_agrees(&pretty),
                Some(false),
                "{:?}",
                String::from_utf8_lossy(&pretty)
            );
        }
    }
});
