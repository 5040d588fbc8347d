//! simd-json with this thread's working buffers and tape, reused from document to document:
//! a list is parsed one machine at a time, and a fresh tape and padded copy for each would
//! cost more than some of the machines.

use std::cell::RefCell;

use serde::de::{Deserialize, DeserializeSeed};
use simd_json::{Buffers, Deserializer, INPUT_PADDING, Tape};

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::new(Buffers::new(64 << 10));
    static TAPE: RefCell<Tape<'static>> = const { RefCell::new(Tape(Vec::new())) };
}

/// Parses the JSON document in `doc` into a `T` that may borrow from it. simd-json writes
/// into the document as it parses (and padding is appended), so `doc` is a scratch copy.
pub fn parse<'d, T: Deserialize<'d>>(doc: &'d mut Vec<u8>) -> simd_json::Result<T> {
    parse_seed(doc, std::marker::PhantomData::<T>)
}

/// Parses the JSON document in `doc` with a seed (see [`parse`]).
pub fn parse_seed<'d, S: DeserializeSeed<'d>>(
    doc: &'d mut Vec<u8>,
    seed: S,
) -> simd_json::Result<S::Value> {
    let len = doc.len();
    // simd-json reads in blocks past the end; padded here, it needs no copy of its own.
    doc.resize(len + INPUT_PADDING, b' ');
    let mut tape: Tape<'d> = TAPE
        .with(|t| std::mem::replace(&mut *t.borrow_mut(), Tape(Vec::new())))
        .reset();
    let filled = BUFFERS.with(|buffers| {
        simd_json::fill_tape_padded(doc, len, &mut buffers.borrow_mut(), &mut tape)
    });
    let (value, tape) = match filled {
        Ok(()) => {
            let mut parser = Deserializer::from_tape(tape);
            (seed.deserialize(&mut parser), parser.into_tape())
        }
        Err(err) => (Err(err), tape),
    };
    TAPE.with(|t| *t.borrow_mut() = tape.reset());
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_document_after_document_with_one_tape() {
        let mut first = br#"{"a": "x\ny", "b": [1, 2]}"#.to_vec();
        let value: serde_json::Value = parse(&mut first).unwrap();
        assert_eq!(value["a"], "x\ny");
        let mut broken = br#"{"a": [1, 2}"#.to_vec();
        assert!(parse::<serde_json::Value>(&mut broken).is_err());
        let mut second = br#"["z"]"#.to_vec();
        let value: Vec<&str> = parse(&mut second).unwrap();
        assert_eq!(value, ["z"]);
    }
}
