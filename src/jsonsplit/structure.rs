//! Whether a piece of JSON is exactly one value as far as its structure goes, told from its
//! quotes, backslashes and brackets sixty-four bytes at a time: what the element cut checks
//! before it trusts a piece.

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
    fn of(block: &[u8]) -> Masks {
        #[cfg(target_arch = "x86_64")]
        if block.len() == 64 {
            let [quotes, backslashes, opens, closes] = match *AVX2 {
                // SAFETY: the processor has AVX2 (detected at run time).
                true => unsafe { avx2::masks(block) },
                false => sse2::masks(block),
            };
            return Masks {
                quotes,
                backslashes,
                opens,
                closes,
            };
        }
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => m.quotes |= bit,
                b'\\' => m.backslashes |= bit,
                b'{' | b'[' => m.opens |= bit,
                b'}' | b']' => m.closes |= bit,
                _ => {}
            }
        }
        m
    }
}

/// Whether the processor has AVX2: 32 bytes a compare where SSE2 takes 16.
#[cfg(target_arch = "x86_64")]
pub(crate) static AVX2: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(|| std::is_x86_feature_detected!("avx2"));

/// Thirty-two bytes a compare with AVX2, where the processor has it.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };

    /// The masks of exactly 64 bytes, as [`super::sse2::masks`] gives them.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn masks(block: &[u8]) -> [u64; 4] {
        assert_eq!(block.len(), 64);
        let mut m = [0u64; 4];
        for half in 0..2 {
            // SAFETY: the block holds 64 bytes (checked above), each unaligned load reads 32
            // of them, and the caller vouches for AVX2.
            let x: __m256i = unsafe { _mm256_loadu_si256(block[half * 32..].as_ptr().cast()) };
            let folded = _mm256_or_si256(x, _mm256_set1_epi8(0x20));
            let mask = |v| _mm256_movemask_epi8(v) as u32 as u64;
            let shift = half * 32;
            m[0] |= mask(_mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'"' as i8))) << shift;
            m[1] |= mask(_mm256_cmpeq_epi8(x, _mm256_set1_epi8(b'\\' as i8))) << shift;
            m[2] |= mask(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'{' as i8))) << shift;
            m[3] |= mask(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'}' as i8))) << shift;
        }
        m
    }
}

/// Sixteen bytes a compare with SSE2, which every x86-64 processor has.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// The masks of exactly 64 bytes: quotes, backslashes, opening and closing brackets.
    pub(super) fn masks(block: &[u8]) -> [u64; 4] {
        assert_eq!(block.len(), 64);
        let mut m = [0u64; 4];
        for lane in 0..4 {
            // SAFETY: the block holds 64 bytes (checked above), each unaligned load reads 16
            // of them, and SSE2 is part of every x86-64 target.
            let (quotes, backslashes, opens, closes) = unsafe {
                let x: __m128i = _mm_loadu_si128(block[lane * 16..].as_ptr().cast());
                // `[` and `]` are `{` and `}` with bit 5 clear: one compare each for both.
                let folded = _mm_or_si128(x, _mm_set1_epi8(0x20));
                let mask = |v| _mm_movemask_epi8(v) as u16 as u64;
                (
                    mask(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8))),
                    mask(_mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8))),
                    mask(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8))),
                    mask(_mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8))),
                )
            };
            let shift = lane * 16;
            m[0] |= quotes << shift;
            m[1] |= backslashes << shift;
            m[2] |= opens << shift;
            m[3] |= closes << shift;
        }
        m
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
    #[cfg(target_arch = "x86_64")]
    fn the_vector_masks_are_the_bytes_masks() {
        let block: Vec<u8> = (0..64u8)
            .map(|i| b"{}[]\"\\ a"[(i as usize * 7) % 8])
            .collect();
        let scalar = Masks::of(&block[..63]);
        let sse2 = sse2::masks(&block);
        let last = |m: u64| m & !(1 << 63);
        assert_eq!(
            [
                scalar.quotes,
                scalar.backslashes,
                scalar.opens,
                scalar.closes
            ],
            sse2.map(last)
        );
        if *AVX2 {
            // SAFETY: the processor has AVX2.
            assert_eq!(unsafe { avx2::masks(&block) }, sse2);
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
