//! Whether a piece of JSON is exactly one value as far as its structure goes, told from its
//! quotes, backslashes and brackets sixty-four bytes at a time: what the element cut checks
//! before it trusts a piece. The masks are `scan`'s, SIMD where the processor has it.

use crate::scan::structural_masks;

/// Whether `piece`, which opens with `{` or `[`, is exactly one value as far as its structure
/// goes: its brackets, outside strings, close for the first time at its last byte.
#[cfg(test)]
pub fn one_value(piece: &[u8]) -> bool {
    let mut scan = Scan::default();
    scan.close(piece, true)
        .is_some_and(|close| close + 1 == piece.len())
}

/// The scan of one value for the bracket that closes it, resumable as more of it arrives.
/// Each block of 64 bytes becomes four bit masks (quotes, backslashes, opening and closing
/// brackets); which bytes are inside strings is the running parity of the quotes before them,
/// and a block whose closing brackets are fewer than the depth it starts at cannot close the
/// value, so its brackets are counted, not walked. A block with a backslash (an escape) is
/// walked byte by byte.
#[derive(Debug, Default)]
pub struct Scan {
    state: State,
    /// How many bytes of the value are scanned (whole blocks, until its end is known).
    done: usize,
    /// Where the value closed, once found.
    closed: Option<usize>,
}

impl Scan {
    /// The offset in `value` (all of the value that has arrived, from its opening bracket) of
    /// the bracket that closes it; `None` while it is not there yet. Only whole blocks are
    /// taken until `complete` says nothing more will arrive.
    pub fn close(&mut self, value: &[u8], complete: bool) -> Option<usize> {
        if self.closed.is_some() {
            return self.closed;
        }
        let n = value.len();
        while self.done < n && (self.done + 64 <= n || complete) {
            let end = (self.done + 64).min(n);
            let bytes = &value[self.done..end];
            let block = Masks::of(bytes);
            let closed = match self.state.escaped {
                true => self.state.walk(bytes),
                false => match self.state.block(&block) {
                    Some(closed) => closed,
                    None => self.state.walk(bytes),
                },
            };
            if let Some(close) = closed {
                self.closed = Some(self.done + close);
                return self.closed;
            }
            self.done = end;
        }
        None
    }
}

/// Where a scan stands between blocks.
#[derive(Debug, Default)]
struct State {
    depth: u64,
    in_string: bool,
    /// The previous block ended on a backslash inside a string: its first byte is escaped.
    escaped: bool,
}

impl State {
    /// Takes a block without escapes; the offset of the bracket that closes the value, if one
    /// does (a closing bracket with nothing open counts as closing it too).
    /// `None`, with nothing changed, where the block must be walked byte by byte instead: a
    /// backslash next to another, one at its end (the next block's first byte is escaped), or
    /// one outside a string.
    fn block(&mut self, m: &Masks) -> Option<Option<usize>> {
        let bs = m.backslashes;
        if bs & (bs << 1) != 0 || bs >> 63 == 1 {
            return None;
        }
        // A lone backslash escapes the byte after it: an escaped quote does not end a string.
        let quotes = m.quotes & !(bs << 1);
        let inside = prefix_xor(quotes) ^ if self.in_string { !0 } else { 0 };
        if bs & !inside != 0 {
            return None;
        }
        Some(self.counted(m, inside))
    }

    /// Takes a block whose bytes inside strings are known (`inside`).
    fn counted(&mut self, m: &Masks, inside: u64) -> Option<usize> {
        self.in_string = inside >> 63 == 1;
        let opens = m.opens & !inside;
        let closes = m.closes & !inside;
        let n = u64::from(closes.count_ones());
        if n < self.depth {
            self.depth = self.depth + u64::from(opens.count_ones()) - n;
            return None;
        }
        let mut brackets = opens | closes;
        while brackets != 0 {
            let bit = brackets.trailing_zeros() as usize;
            brackets &= brackets - 1;
            if opens >> bit & 1 == 1 {
                self.depth += 1;
            } else {
                match self.depth.checked_sub(1) {
                    Some(0) | None => return Some(bit),
                    Some(d) => self.depth = d,
                }
            }
        }
        None
    }

    /// Takes a block byte by byte (it holds an escape); as [`State::block`].
    fn walk(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => match self.depth.checked_sub(1) {
                    Some(0) | None => return Some(i),
                    Some(d) => self.depth = d,
                },
                _ => {}
            }
        }
        None
    }
}

/// For each bit, the parity of the set bits up to and including it: which bytes of a block
/// stand after an odd number of quotes, that is inside a string (its opening quote included).
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// A block's structural bytes, bit i for byte i.
#[derive(Debug, Default)]
struct Masks {
    quotes: u64,
    backslashes: u64,
    opens: u64,
    closes: u64,
}

impl Masks {
    /// The masks of up to 64 bytes.
    #[inline]
    fn of(block: &[u8]) -> Masks {
        let [quotes, backslashes, opens, closes] = structural_masks(block);
        Masks {
            quotes,
            backslashes,
            opens,
            closes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same question answered a byte at a time, for comparison.
    fn by_bytes(piece: &[u8]) -> bool {
        let mut state = State::default();
        state
            .walk(piece)
            .is_some_and(|close| close + 1 == piece.len())
    }

    #[test]
    fn blocks_agree_with_a_walk_byte_by_byte() {
        let pieces = [
            "{\"a\": [1, {\"b\": \"}]\\\"{\"}]}",
            "{}",
            "{\"hw\": [{\"a\": 1}",
            "{\"a\": 1}, {\"b\": 2}",
            "{\"a\": \"}",
            "{\"a\": \"x\\\\\"}",
        ];
        // Each piece padded so that its quotes, escapes and brackets fall on every offset of
        // a 64-byte block, and repeated across blocks.
        for piece in pieces {
            for pad in 0..70 {
                let padded = format!("{{\"p\": \"{}\", \"q\": {piece}}}", " ".repeat(pad));
                assert_eq!(
                    one_value(padded.as_bytes()),
                    by_bytes(padded.as_bytes()),
                    "{padded}"
                );
                let long = format!(
                    "{{\"p\": [{}], \"q\": {piece}}}",
                    "{\"x\": \"]\"}, ".repeat(pad)
                );
                assert_eq!(
                    one_value(long.as_bytes()),
                    by_bytes(long.as_bytes()),
                    "{long}"
                );
            }
        }
    }

    #[test]
    fn a_pseudo_random_stream_of_structural_bytes_agrees() {
        let alphabet = b"{}[]\"\\ a,:";
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            let len = 1 + (seed % 200) as usize;
            let mut piece = vec![b'{'];
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                piece.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            piece.push(b'}');
            assert_eq!(
                one_value(&piece),
                by_bytes(&piece),
                "{}",
                String::from_utf8_lossy(&piece)
            );
        }
    }
}
