//! A JSON block's structural bytes as bit masks, sixty-four bytes at a time: quotes,
//! backslashes, opening and closing brackets, bit `i` for byte `i` (what `jsonsplit`'s
//! structure scan counts brackets and strings with).

#[cfg(target_arch = "x86_64")]
use super::cpu::AVX2;

/// The masks of up to 64 bytes: quotes, backslashes, opening brackets (`{`, `[`) and closing
/// ones (`}`, `]`), bit `i` for byte `i`.
#[inline]
pub fn structural_masks(block: &[u8]) -> [u64; 4] {
    #[cfg(target_arch = "x86_64")]
    if block.len() == 64 {
        return match *AVX2 {
            // SAFETY: the processor has AVX2 (detected at run time).
            true => unsafe { avx2::masks(block) },
            false => sse2::masks(block),
        };
    }
    let mut m = [0u64; 4];
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => m[0] |= bit,
            b'\\' => m[1] |= bit,
            b'{' | b'[' => m[2] |= bit,
            b'}' | b']' => m[3] |= bit,
            _ => {}
        }
    }
    m
}

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

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_vector_masks_are_the_bytes_masks() {
        let block: Vec<u8> = (0..64u8)
            .map(|i| b"{}[]\"\\ a"[(i as usize * 7) % 8])
            .collect();
        let scalar = structural_masks(&block[..63]);
        let sse2 = sse2::masks(&block);
        let last = |m: u64| m & !(1 << 63);
        assert_eq!(scalar, sse2.map(last));
        if *AVX2 {
            // SAFETY: the processor has AVX2.
            assert_eq!(unsafe { avx2::masks(&block) }, sse2);
        }
    }
}
