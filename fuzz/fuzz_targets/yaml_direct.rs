//! A differential target for the YAML list read straight from its lines: whatever it reads
//! must be what saphyr's parser reads of the whole file, machines, events and problems; where
//! it is not sure, it declines. Fed the bytes as they come and behind `---\n- ` (a list's
//! first item, which it reads only if it names a machine).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    assert_ne!(fsmlog::yaml_agrees(data), Some(false), "{text:?}");
    let mut list = b"---\n- id: m-1\n  events:\n    log: []\n".to_vec();
    list.extend_from_slice(data);
    assert_ne!(fsmlog::yaml_agrees(&list), Some(false), "{text:?}");
});
