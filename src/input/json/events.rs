//! The events of a `machine logs -o json` array, parsed together once the array is known to
//! hold events.

use super::batch::BATCH_BYTES;
use super::element::parse_element;
use crate::input::fast::direct_event;
use crate::input::fast::simd;
use crate::input::raw::{LogEvents, RawItem};
use crate::input::record::Record;
use crate::jsonsplit::{Position, values_in};

/// The events of a `machine logs -o json` array after the first, held raw and parsed
/// together: one simd-json pass over them all costs far less than a serde_json parse of each.
#[derive(Default)]
pub(super) struct PendingEvents {
    /// The elements joined into one JSON array, not closed yet.
    bytes: Vec<u8>,
    /// Each element's range in `bytes` and its start in the file.
    elements: Vec<(usize, usize, Position)>,
}

impl PendingEvents {
    pub(super) fn push(&mut self, element: &[u8], start: Position) {
        self.bytes
            .push(if self.elements.is_empty() { b'[' } else { b',' });
        let begin = self.bytes.len();
        self.bytes.extend_from_slice(element);
        self.elements.push((begin, self.bytes.len(), start));
    }

    pub(super) fn is_full(&self) -> bool {
        self.bytes.len() >= BATCH_BYTES
    }

    /// Parses the events held into `events`, in order; when any is bad, each is parsed on
    /// its own by serde_json, which names the line and what is wrong.
    pub(super) fn parse_into(
        &mut self,
        events: &mut LogEvents,
        path: &str,
        emit: &mut dyn FnMut(Record),
    ) {
        if self.elements.is_empty() {
            return;
        }
        events.events.reserve(self.elements.len());
        let (kept, bad) = (events.events.len(), events.bad);
        // What pushing the events names is held back until the whole array has been read.
        let mut held = Vec::new();
        // Straight from the bytes where every element is an event that reader is sure of.
        let direct = self.elements.iter().all(|&(begin, end, start)| {
            direct_event(&self.bytes[begin..end])
                .map(|item| events.push(item, path, start.line, &mut |r| held.push(r)))
                .is_some()
        });
        if direct {
            held.into_iter().for_each(&mut *emit);
            self.bytes.clear();
            self.elements.clear();
            return;
        }
        events.events.truncate(kept);
        events.bad = bad;
        held.clear();
        self.bytes.push(b']');
        let mut taken = 0;
        let mut scratch = self.bytes.clone();
        let each = |item: RawItem| {
            let line = self.elements.get(taken).map_or(0, |e| e.2.line);
            taken += 1;
            events.push(item, path, line, &mut |r| held.push(r));
        };
        let parsed = simd::parse_seed(&mut scratch, EachElement(each));
        if parsed.is_ok() && taken == self.elements.len() {
            held.into_iter().for_each(&mut *emit);
        } else {
            events.events.truncate(kept);
            events.bad = bad;
            for &(begin, end, start) in &self.elements {
                let bytes = &self.bytes[begin..end];
                // Two events the cut at element lines took for one (the second opened at
                // another indent) are two events.
                let values = match serde_json::from_slice::<RawItem>(bytes) {
                    Ok(_) => None,
                    Err(_) => values_in(bytes, start),
                };
                let values = values.unwrap_or_else(|| vec![(bytes.to_vec(), start)]);
                for (value, at) in &values {
                    if let Some(item) = parse_element(value, *at, path, emit) {
                        events.push(item, path, at.line, emit);
                    }
                }
            }
        }
        self.bytes.clear();
        self.elements.clear();
    }
}

/// Hands each element of a JSON array to a closure as it is parsed, rather than collecting
/// them: an array of events is hundreds of bytes per element, a `RawItem` more.
struct EachElement<F>(F);

impl<'de, F: FnMut(RawItem<'de>)> serde::de::DeserializeSeed<'de> for EachElement<F> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, parser: D) -> Result<(), D::Error> {
        parser.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(RawItem<'de>)> serde::de::Visitor<'de> for EachElement<F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while let Some(item) = seq.next_element::<RawItem<'de>>()? {
            (self.0)(item);
        }
        Ok(())
    }
}
