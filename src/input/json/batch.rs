//! Raw machine elements of a large array, handed on in batches and parsed on every core.

use std::sync::Mutex;

use super::element::{array_format, element_error, machine_from_parts};
use crate::input::fast::{self, PathsTaken, Reading, machine_element, tracing};
use crate::input::raw::{MachineParts, RawItem};
use crate::input::record::{Batch, InputError, ReadMode, Record};
use crate::jsonsplit::{Position, values_in};
use crate::log::{Format, Shape};

/// How many bytes of raw elements a batch collects before it is handed on.
pub(super) const BATCH_BYTES: usize = 1 << 20;

/// Raw machine elements of one array, not parsed yet: the unit of parallel work for a large
/// export. [`ElementBatch::decode`] turns them into records.
#[derive(Debug)]
pub struct ElementBatch {
    path: String,
    forced: Option<Format>,
    /// What of each machine to read.
    mode: ReadMode,
    /// The format of the array's machines, as its first element showed.
    pub format: Option<Format>,
    /// Whether the elements were converted from YAML.
    pub yaml: bool,
    bytes: Vec<u8>,
    /// Each element's end in `bytes` and its start in the file.
    elements: Vec<(usize, Position)>,
}

/// Batch buffers decoded and given back, for the next batches: a fresh megabyte for every
/// batch would be fresh pages the kernel clears first.
static SPENT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// A buffer given back by a decoded batch, or a new one.
fn spent_buffer() -> Vec<u8> {
    SPENT
        .lock()
        .ok()
        .and_then(|mut spent| spent.pop())
        .unwrap_or_default()
}

impl Drop for ElementBatch {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.bytes);
        if bytes.capacity() == 0 {
            return;
        }
        bytes.clear();
        if let Ok(mut spent) = SPENT.lock() {
            // As many as can be in flight at once; more would only hold memory.
            if spent.len() < 2 * rayon::current_num_threads().max(1) + 2 {
                spent.push(bytes);
            }
        }
    }
}

impl ElementBatch {
    pub(super) fn new(path: &str, forced: Option<Format>, mode: ReadMode) -> ElementBatch {
        ElementBatch {
            path: path.to_string(),
            forced,
            mode,
            format: forced,
            yaml: false,
            // Allocated at the first element: a file of events never needs it.
            bytes: Vec::new(),
            elements: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, element: &[u8], start: Position) {
        if self.bytes.capacity() == 0 {
            self.bytes = spent_buffer();
            self.bytes.reserve(BATCH_BYTES + (BATCH_BYTES >> 2));
        }
        self.bytes.extend_from_slice(element);
        self.elements.push((self.bytes.len(), start));
    }

    pub(super) fn is_full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES
    }

    /// Whether the batch holds no element.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Hands on the machine an element holds, or names what is wrong with it.
    fn hand_on(&self, item: RawItem, bytes: &[u8], start: Position, emit: &mut dyn FnMut(Record)) {
        match (MachineParts::of(item, self.format), self.forced) {
            (Some(parts), Some(forced)) if array_format(parts.format) != forced => {
                emit(Record::Error(InputError::at(
                    &self.path,
                    start.line,
                    format!(
                        "expected {forced} JSON, but this element is {}",
                        array_format(parts.format)
                    ),
                )))
            }
            (Some(mut parts), _) => {
                parts.format = array_format(parts.format);
                if let Some(machine) =
                    machine_from_parts(parts, bytes, start, &self.path, None, self.mode, emit)
                {
                    emit(Record::Machine(machine));
                }
            }
            (None, _) => emit(Record::Error(InputError::at(
                &self.path,
                start.line,
                "array element is not a machine (no `events`, `log` or `recentProvisioningEvents`)",
            ))),
        }
    }
}

impl Batch for ElementBatch {
    /// Parses every element into a machine, or names what is wrong with it.
    fn parse(&self, emit: &mut dyn FnMut(Record)) {
        let mut begin = 0;
        // simd-json parses in place; the batch keeps the original for error positions.
        let mut scratch = Vec::new();
        let mut skimming = true;
        let mut taken = PathsTaken::default();
        for &(end, start) in &self.elements {
            let bytes = &self.bytes[begin..end];
            begin = end;
            // The fast ways first (see `fast::ways`); what they all decline goes the careful
            // way below.
            if machine_element(
                bytes,
                self.mode,
                &mut scratch,
                &mut skimming,
                &mut |item, path| {
                    taken.add(path);
                    self.hand_on(item, bytes, start, emit);
                },
            ) {
                continue;
            }
            // Two elements the cut at element lines took for one (the second opened at
            // another indent): each is a machine.
            let values = values_in(bytes, start).unwrap_or_else(|| vec![(bytes.to_vec(), start)]);
            for (value, at) in &values {
                // serde_json says precisely where and why; should it accept what simd-json
                // did not, its reading stands.
                match fast::value(value, &mut scratch) {
                    Ok((item, way)) => {
                        taken.add(way);
                        self.hand_on(item, value, *at, emit);
                    }
                    Err(err) => {
                        taken.add(fast::ways(Reading::Value).careful);
                        emit(Record::Error(element_error(
                            &self.path,
                            *at,
                            &err,
                            "array element",
                        )));
                    }
                }
            }
        }
        if tracing() {
            emit(Record::ReadBy {
                path: self.path.clone(),
                taken,
            });
        }
    }

    fn shape(&self) -> Option<Shape> {
        self.format.map(|format| Shape {
            format,
            yaml: self.yaml,
        })
    }
}
