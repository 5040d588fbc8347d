//! The two runs of bytes the direct reader (`input::fast`) looks for, sixteen bytes at a time: a string's
//! plain text up to its closing quote or first escape, and a pretty-printed line's
//! indentation.

/// How many bytes from the start hold neither `"`, `\` nor a control character: a string's
/// plain run.
#[inline]
pub fn plain_run(bytes: &[u8]) -> usize {
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= bytes.len() {
        let stop = sse2::stops(&bytes[i..i + 16]);
        if stop != 0 {
            return i + stop.trailing_zeros() as usize;
        }
        i += 16;
    }
    i + bytes[i..]
        .iter()
        .take_while(|&&b| b != b'"' && b != b'\\' && b >= 0x20)
        .count()
}

/// How many spaces `bytes` starts with: a pretty-printed line's indentation.
#[inline]
pub fn leading_spaces(bytes: &[u8]) -> usize {
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= bytes.len() {
        let other = !sse2::spaces(&bytes[i..i + 16]) & 0xffff;
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += 16;
    }
    i + bytes[i..].iter().take_while(|&&b| b == b' ').count()
}

/// Sixteen bytes at a time with SSE2, which every x86-64 processor has: a string's run and an
/// indentation are a compare and a mask each, where a byte loop takes one step a byte.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    #[inline]
    fn load(block: &[u8]) -> __m128i {
        assert!(block.len() >= 16);
        // SAFETY: the block holds at least 16 bytes (checked above), and an unaligned load
        // reads exactly 16.
        unsafe { _mm_loadu_si128(block.as_ptr().cast()) }
    }

    /// The mask of the first 16 bytes that are `"`, `\` or below 0x20.
    #[inline]
    pub(super) fn stops(block: &[u8]) -> u32 {
        let x = load(block);
        // SAFETY: SSE2 is part of every x86-64 target; these are register operations only.
        unsafe {
            let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
            let slash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
            // Unsigned: a byte is below 0x20 exactly when the minimum of it and 0x1f is itself.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), control)) as u32
        }
    }

    /// The mask of the first 16 bytes that are spaces.
    #[inline]
    pub(super) fn spaces(block: &[u8]) -> u32 {
        let x = load(block);
        // SAFETY: as above.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(b' ' as i8))) as u32 }
    }
}
