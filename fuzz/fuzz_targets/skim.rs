//! A differential target for the skim: a JSON value printed as metalctl prints a list (four
//! spaces of indent, one member a line, which the skim steps through) must read to the same
//! machines, events and problems as the same value on one line (which is parsed whole).
#![no_main]

use fsmlog::{InputOptions, MachineLog, Record, read_reader};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;

/// What a reading says, without the lines (the two printings put things on other lines).
fn reading(text: &[u8]) -> (Vec<MachineLog>, Vec<String>) {
    let mut machines = Vec::new();
    let mut problems = Vec::new();
    read_reader(text, "fuzz.json", &InputOptions::default(), &mut |record| match record {
        Record::Machine(mut log) => {
            log.line = 0;
            log.events.iter_mut().for_each(|e| e.line = 0);
            if let Some(e) = log.last_error_event.as_mut() {
                e.line = 0;
            }
            machines.push(log);
        }
        Record::Error(e) | Record::Note(e) => problems.push(e.message),
        _ => {}
    });
    (machines, problems)
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let mut pretty = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut printer = serde_json::Serializer::with_formatter(&mut pretty, formatter);
    if value.serialize(&mut printer).is_err() {
        return;
    }
    let compact = serde_json::to_vec(&value).expect("a value prints");
    let (skimmed, skimmed_problems) = reading(&pretty);
    let (whole, whole_problems) = reading(&compact);
    assert_eq!(skimmed, whole, "machines");
    assert_eq!(skimmed_problems.len(), whole_problems.len(), "{skimmed_problems:?} {whole_problems:?}");
});
