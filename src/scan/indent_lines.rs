//! Finds, in one pass, the lines of a pretty-printed object that are exactly one indent and
//! then a quote or a closing bracket: where the skim's (`input::fast::skim`) members start and the lines that close
//! their values. Three searches (one per byte) took three passes over every object, and most
//! of a machine is lines deeper than its members (measured with cachegrind).
//!
//! A candidate is a newline whose byte `indent + 1` further on is not a space: a deeper line
//! has a space there, and the members of a pretty-printed object hold no shallower line, so
//! nearly every candidate is a line of the indent (two compares where telling the three bytes
//! apart took four; measured with cachegrind). Each is checked for the spaces in between and
//! the byte after them. Sixty-four positions are compared at once with AVX2 where the
//! processor has it (SSE2 otherwise); the last few positions of an object are taken with one
//! more block that overlaps the ones before, or byte by byte in an object too short for one.

/// How the blocks of sixty-four positions are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    Scalar,
}

impl Level {
    fn detected() -> Level {
        #[cfg(target_arch = "x86_64")]
        return match *super::cpu::AVX2 {
            true => Level::Avx2,
            false => Level::Sse2,
        };
        #[cfg(not(target_arch = "x86_64"))]
        Level::Scalar
    }
}

/// The lines of `hay` that are a newline, exactly `indent` spaces and `"`, `}` or `]`, in
/// order: each as the offset of its newline and that last byte. A line is counted only where
/// its last byte is inside `hay`, as a search for the whole line would find it.
pub struct IndentLines<'a> {
    hay: &'a [u8],
    indent: usize,
    level: Level,
    /// How many offsets may start a line: those whose last byte is inside `hay`.
    starts: usize,
    /// The first offset not yet compared.
    next: usize,
    /// Candidates not yet checked: bit `i` for offset `base + i`.
    base: usize,
    mask: u64,
}

impl<'a> IndentLines<'a> {
    /// The lines of `indent` in `hay`; `indent` is at least one.
    pub fn new(hay: &'a [u8], indent: usize) -> IndentLines<'a> {
        IndentLines::with_level(hay, indent, Level::detected())
    }

    fn with_level(hay: &'a [u8], indent: usize, level: Level) -> IndentLines<'a> {
        IndentLines {
            hay,
            indent,
            level,
            starts: hay.len().saturating_sub(indent + 1),
            next: 0,
            base: 0,
            mask: 0,
        }
    }

    /// Takes the next block that holds a candidate, or the rest of `hay`. Kept out of
    /// [`Iterator::next`], which then takes a candidate in a few instructions.
    #[inline(never)]
    fn refill(&mut self) {
        let (hay, indent, starts) = (self.hay, self.indent, self.starts);
        let (at, mask) = match self.level {
            // SAFETY: the processor has AVX2 (detected at run time, or a test checked it).
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => unsafe { avx2::next_block(hay, indent, self.next, starts) },
            #[cfg(target_arch = "x86_64")]
            Level::Sse2 => sse2::next_block(hay, indent, self.next, starts),
            Level::Scalar => scalar_next_block(hay, indent, self.next, starts),
        };
        if mask != 0 {
            (self.base, self.mask, self.next) = (at, mask, at + 64);
            return;
        }
        self.next = starts;
        if at >= starts {
            return;
        }
        // Fewer than sixty-four offsets are left: one block ending at the last of them, its
        // offsets already compared masked off.
        let (base, mask) = match self.level {
            #[cfg(target_arch = "x86_64")]
            _ if starts >= 64 && self.level != Level::Scalar => {
                let base = starts - 64;
                // SAFETY: the block ends at the last offset, and the processor has AVX2 where
                // it is asked for (as above).
                let mask = unsafe {
                    match self.level {
                        Level::Avx2 => avx2::block(hay, indent, base),
                        _ => sse2::block(hay, indent, base),
                    }
                };
                (base, mask & (!0 << (at - base)))
            }
            _ => (at, scalar_block(hay, indent, at, starts)),
        };
        (self.base, self.mask) = (base, mask);
    }
}

impl Iterator for IndentLines<'_> {
    type Item = (usize, u8);

    #[inline]
    fn next(&mut self) -> Option<(usize, u8)> {
        loop {
            while self.mask != 0 {
                let at = self.base + self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                let line = &self.hay[at..=at + self.indent + 1];
                let last = line[self.indent + 1];
                if matches!(last, b'"' | b'}' | b']') && spaces(&line[1..=self.indent]) {
                    return Some((at, last));
                }
            }
            if self.next >= self.starts {
                return None;
            }
            self.refill();
        }
    }
}

/// Whether `bytes` are all spaces, eight at a time: an indent is a few words long.
fn spaces(bytes: &[u8]) -> bool {
    let (words, rest) = bytes.as_chunks::<8>();
    words.iter().all(|&word| word == [b' '; 8]) && rest.iter().all(|&b| b == b' ')
}

/// Whether the byte at an offset and the one `indent + 1` further on could start a line.
fn candidate(newline: u8, last: u8) -> bool {
    newline == b'\n' && last != b' '
}

/// The candidates among offsets `from..to` (at most sixty-four), bit 0 for `from`.
fn scalar_block(hay: &[u8], indent: usize, from: usize, to: usize) -> u64 {
    let lasts = &hay[from + indent + 1..to + indent + 1];
    hay[from..to]
        .iter()
        .zip(lasts)
        .enumerate()
        .filter(|&(_, (&newline, &last))| candidate(newline, last))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The first block of sixty-four offsets from `at` with a candidate, and its candidates; the
/// offset where fewer than sixty-four are left, and no candidates, if none has one.
fn scalar_next_block(hay: &[u8], indent: usize, mut at: usize, starts: usize) -> (usize, u64) {
    while at + 64 <= starts {
        let mask = scalar_block(hay, indent, at, at + 64);
        if mask != 0 {
            return (at, mask);
        }
        at += 64;
    }
    (at, 0)
}

/// Thirty-two offsets a compare with AVX2, where the processor has it.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_andnot_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_testz_si256,
    };

    /// The candidates among the sixty-four offsets from `base`, as two vectors of 32 bytes
    /// (all ones for a candidate).
    ///
    /// # Safety
    /// The processor must have AVX2, and `hay` must hold the byte `indent + 1` after the last
    /// of them (`base + 64 <= starts`).
    #[target_feature(enable = "avx2")]
    unsafe fn hits(hay: &[u8], indent: usize, base: usize) -> [__m256i; 2] {
        debug_assert!(base + indent + 65 <= hay.len());
        // Unchecked: the bounds checks of two slices cost as much as a third of the compares.
        // SAFETY: `base` is inside `hay` (vouched for by the caller).
        let newlines = unsafe { hay.as_ptr().add(base) };
        [0, 32].map(|half| {
            // SAFETY: both loads read 32 bytes inside `hay` (vouched for by the caller), and
            // the caller vouches for AVX2.
            let (newline, last): (__m256i, __m256i) = unsafe {
                let at = newlines.add(half);
                (
                    _mm256_loadu_si256(at.cast()),
                    _mm256_loadu_si256(at.add(indent + 1).cast()),
                )
            };
            let space = _mm256_cmpeq_epi8(last, _mm256_set1_epi8(b' ' as i8));
            let newline = _mm256_cmpeq_epi8(newline, _mm256_set1_epi8(b'\n' as i8));
            _mm256_andnot_si256(space, newline)
        })
    }

    /// The candidates of [`hits`] as bits, bit 0 for the first offset.
    #[target_feature(enable = "avx2")]
    fn mask([low, high]: [__m256i; 2]) -> u64 {
        let bits = |hit| _mm256_movemask_epi8(hit) as u32 as u64;
        bits(low) | bits(high) << 32
    }

    /// The candidates among the sixty-four offsets from `base`, bit 0 for `base`.
    ///
    /// # Safety
    /// As [`hits`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn block(hay: &[u8], indent: usize, base: usize) -> u64 {
        // SAFETY: vouched for by the caller.
        mask(unsafe { hits(hay, indent, base) })
    }

    /// [`super::scalar_next_block`], thirty-two offsets a compare.
    ///
    /// # Safety
    /// The processor must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn next_block(
        hay: &[u8],
        indent: usize,
        mut at: usize,
        starts: usize,
    ) -> (usize, u64) {
        // Most blocks have no candidate: two blocks at a time with one test of them all, and
        // bits only for a block that has one.
        while at + 128 <= starts {
            // SAFETY: the loop's condition keeps both blocks inside `hay`, and the caller
            // vouches for AVX2.
            let (first, second) = unsafe { (hits(hay, indent, at), hits(hay, indent, at + 64)) };
            let any = _mm256_or_si256(
                _mm256_or_si256(first[0], first[1]),
                _mm256_or_si256(second[0], second[1]),
            );
            if _mm256_testz_si256(any, any) == 0 {
                return match mask(first) {
                    0 => (at + 64, mask(second)),
                    first => (at, first),
                };
            }
            at += 128;
        }
        if at + 64 <= starts {
            // SAFETY: as above.
            let mask = unsafe { block(hay, indent, at) };
            if mask != 0 {
                return (at, mask);
            }
            at += 64;
        }
        (at, 0)
    }
}

/// Sixteen offsets a compare with SSE2, which every x86-64 processor has.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_set1_epi8,
    };

    /// As [`super::avx2::block`].
    ///
    /// # Safety
    /// `hay` must hold the byte `indent + 1` after the last offset (`base + 64 <= starts`).
    pub(super) unsafe fn block(hay: &[u8], indent: usize, base: usize) -> u64 {
        debug_assert!(base + indent + 65 <= hay.len());
        let newlines = hay[base..].as_ptr();
        let mut mask = 0;
        for lane in 0..4 {
            // SAFETY: both loads read 16 bytes inside `hay` (vouched for by the caller), and
            // SSE2 is part of every x86-64 target.
            let hit = unsafe {
                let at = newlines.add(lane * 16);
                let newline: __m128i = _mm_loadu_si128(at.cast());
                let last: __m128i = _mm_loadu_si128(at.add(indent + 1).cast());
                let space = _mm_cmpeq_epi8(last, _mm_set1_epi8(b' ' as i8));
                let newline = _mm_cmpeq_epi8(newline, _mm_set1_epi8(b'\n' as i8));
                _mm_movemask_epi8(_mm_andnot_si128(space, newline))
            };
            mask |= (hit as u16 as u64) << (lane * 16);
        }
        mask
    }

    /// [`super::scalar_next_block`], sixteen offsets a compare.
    pub(super) fn next_block(
        hay: &[u8],
        indent: usize,
        mut at: usize,
        starts: usize,
    ) -> (usize, u64) {
        while at + 64 <= starts {
            // SAFETY: the loop's condition keeps the block inside `hay`.
            let mask = unsafe { block(hay, indent, at) };
            if mask != 0 {
                return (at, mask);
            }
            at += 64;
        }
        (at, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A xorshift generator: the same bytes on every run, without a crate for it.
    struct Bytes(u64);

    impl Bytes {
        fn pick<'a>(&mut self, from: &'a [u8]) -> &'a u8 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            &from[(self.0 % from.len() as u64) as usize]
        }
    }

    /// What a search for each whole line finds, offset by offset.
    fn naive(hay: &[u8], indent: usize) -> Vec<(usize, u8)> {
        (0..hay.len().saturating_sub(indent + 1))
            .filter(|&at| {
                hay[at] == b'\n'
                    && hay[at + 1..=at + indent].iter().all(|&b| b == b' ')
                    && matches!(hay[at + indent + 1], b'"' | b'}' | b']')
            })
            .map(|at| (at, hay[at + indent + 1]))
            .collect()
    }

    fn levels() -> Vec<Level> {
        let mut levels = vec![Level::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            levels.push(Level::Sse2);
            if std::is_x86_feature_detected!("avx2") {
                levels.push(Level::Avx2);
            }
        }
        levels
    }

    fn check(hay: &[u8], indent: usize) {
        let want = naive(hay, indent);
        for level in levels() {
            let got: Vec<_> = IndentLines::with_level(hay, indent, level).collect();
            assert_eq!(got, want, "{level:?}, indent {indent}, {:?}", hay);
        }
    }

    #[test]
    fn every_level_finds_what_a_search_for_each_line_finds() {
        let mut bytes = Bytes(0x9e37_79b9_7f4a_7c15);
        // Bytes that make lines of every depth, the sought ones and their near misses.
        let alphabet = b"\n\n\n      \"\"}]{[a\x02\x7d\x5d,:";
        for len in (0..200).chain([255, 256, 257, 511, 512, 513]) {
            for indent in 1..=40 {
                // Loose bytes among lines one shallower, as deep and one deeper than sought.
                let mut hay = Vec::new();
                while hay.len() < len {
                    match bytes.pick(b"ll.") {
                        b'l' => {
                            hay.push(b'\n');
                            let depth = indent - 1 + usize::from(*bytes.pick(&[0, 1, 1, 2]));
                            hay.extend(std::iter::repeat_n(b' ', depth));
                            hay.push(*bytes.pick(alphabet));
                        }
                        _ => hay.push(*bytes.pick(alphabet)),
                    }
                }
                hay.truncate(len);
                check(&hay, indent);
            }
        }
    }

    #[test]
    fn lines_at_the_edges_of_blocks_and_at_the_very_end_are_found() {
        for indent in 1..=40 {
            let line = |last: u8| {
                let mut line = vec![b'\n'];
                line.extend(std::iter::repeat_n(b' ', indent));
                line.push(last);
                line
            };
            for len in [0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129] {
                for last in [b'"', b'}', b']', b' '] {
                    // A line at the very start, and one ending on the last byte.
                    let mut hay = line(last);
                    hay.extend(std::iter::repeat_n(b'x', len));
                    hay.extend(line(last));
                    check(&hay, indent);
                    // Lines one deeper and one shallower are not lines of the indent.
                    let mut near = vec![b'\n'; 1];
                    near.extend(std::iter::repeat_n(b' ', indent + 1));
                    near.push(last);
                    near.extend(std::iter::repeat_n(b' ', len));
                    near.extend(&line(last)[1..]);
                    check(&near, indent);
                    // Every offset a line: each block full of candidates.
                    let mut dense: Vec<u8> = (0..len).flat_map(|_| line(last)).collect();
                    dense.truncate(dense.len().saturating_sub(len % 3));
                    check(&dense, indent);
                }
            }
        }
    }
}
