//! The differential check of the direct reader: what it reads of an element is set beside
//! what the careful path (simd-json, then serde_json) reads of the same bytes. For the
//! property tests and the fuzz target; the reader itself never calls it.

use super::direct::{event, machine};
use crate::input::raw::RawItem;
use crate::input::raw::{MachineParts, convert_event};
use crate::input::record::{ReadMode, Record};
use crate::log::Format;

/// Whether an element read straight from its bytes gives the machine, and the errors, that
/// the careful path gives: `None` where this reader declines it. For the differential
/// property test and fuzz target.
pub fn agrees(bytes: &[u8]) -> Option<bool> {
    fn careful<'s>(bytes: &'s [u8], scratch: &'s mut Vec<u8>) -> Option<RawItem<'s>> {
        scratch.clear();
        scratch.extend_from_slice(bytes);
        match super::simd::parse::<RawItem>(scratch) {
            Ok(item) => Some(item),
            Err(_) => serde_json::from_slice::<RawItem>(bytes).ok(),
        }
    }
    let (mut first, mut second) = (Vec::new(), Vec::new());
    // As an element of a `machine logs` array: the same kind, the same event.
    let as_event = event(bytes).map(|direct| match careful(bytes, &mut first) {
        Some(careful) => {
            let read = |item: RawItem| (item.element_kind(), convert_event(item.into_event()));
            read(direct) == read(careful)
        }
        None => false,
    });
    // As a machine, read as every command reads it and as the audit reads it: the reader
    // steps over what only the audit judges by in the one, and reads it in the other.
    let mut answer = as_event;
    for mode in [ReadMode::Whole, ReadMode::Audit] {
        let Some(direct) = machine(bytes, mode) else {
            continue;
        };
        let Some(careful) = careful(bytes, &mut second) else {
            return Some(false);
        };
        if as_event == Some(false) {
            return Some(false);
        }
        let built = |item: RawItem| {
            let mut problems = Vec::new();
            let log = MachineParts::of(item, Some(Format::ListJson)).and_then(|parts| {
                parts.build("x", 1, None, mode, &mut |_| 1, &mut |r| {
                    if let Record::Error(e) = r {
                        problems.push(e.message);
                    }
                })
            });
            (log, problems)
        };
        if built(direct) != built(careful) {
            return Some(false);
        }
        answer = Some(true);
    }
    answer
}
