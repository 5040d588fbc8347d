//! The fast cut of a pretty-printed array: pieces found by their element lines, without a
//! look at every byte between them.

use std::io::{self, BufRead};

use memchr::memmem;

use super::scanner::{Position, SplitError, Splitter};

/// After an element's comma: the indent of the next element when it starts on a line of its
/// own that holds nothing but the indent and `{` (as pretty printers write arrays).
pub(super) fn element_indent<R: BufRead>(
    splitter: &mut Splitter<R>,
) -> Result<Option<Vec<u8>>, SplitError> {
    let buf = splitter.buffered()?;
    let Some(rest) = buf.strip_prefix(b"\n") else {
        return Ok(None);
    };
    let indent = rest
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(rest.len());
    if indent == 0 || !rest[indent..].starts_with(b"{\n") {
        return Ok(None);
    }
    Ok(Some(rest[..indent].to_vec()))
}

/// Byte ranks for finding lines of pretty-printed JSON by their indent and first byte. The
/// default ranks take a space for a rare byte, so a searcher would stop at every line; here
/// spaces and newlines are the common bytes, and the byte after the indent is what is sought.
struct IndentedJson;

impl memchr::arch::all::packedpair::HeuristicFrequencyRank for IndentedJson {
    fn rank(&self, byte: u8) -> u8 {
        match byte {
            b' ' => 255,
            b'\n' => 250,
            _ => 100,
        }
    }
}

/// A searcher for a line's start (`\n`, an indent, a byte) in pretty-printed JSON.
pub fn line_finder(needle: &[u8]) -> memmem::Finder<'static> {
    memmem::FinderBuilder::new()
        .build_forward_with_ranker(IndentedJson, needle)
        .into_owned()
}

/// How much a cut-out element may grow before the careful scan takes over.
const FAST_LIMIT: usize = 8 << 20;

/// How much of an array the cut reads at once.
pub(super) const READ_AHEAD: usize = 1 << 20;

thread_local! {
    /// The cut's read buffer, kept for the next array this thread cuts.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Cuts the rest of a pretty-printed array at its element lines, after a comma: a line that
/// is exactly `INDENT{` starts the next element. Such a line cannot occur inside a string
/// (JSON strings hold no raw newline) nor, in a consistently indented document, deeper inside
/// a value. The search is `memmem`, far cheaper than looking at every byte. A piece is handed
/// to `each` only once it is exactly one element: it ends on an `INDENT}` line, and its
/// brackets, outside strings, close for the first time at that last byte ([`one_value`]).
/// What the cut cannot vouch for is handed back to the careful scan, which reads on from
/// there: a piece of another shape (an element on one line, a nested value whose lines stand
/// at the element indent, two elements glued together), the last element and `]` (after which
/// the caller reads on), and, after a read error, what was read before it and then the error.
/// So any valid document is read as a parser reads it.
pub(super) fn cut<R: BufRead>(
    splitter: &mut Splitter<R>,
    indent: &[u8],
    each: &mut impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    let mut separator = b"\n".to_vec();
    separator.extend_from_slice(indent);
    separator.extend_from_slice(b"{\n");
    // A piece cut out whole ends with its closing brace on a line of the same indent.
    let mut closing = b"\n".to_vec();
    closing.extend_from_slice(indent);
    closing.push(b'}');
    let finder = line_finder(&separator);
    // `pending[begin..filled]` starts with a separator; its first byte is at `line` (a
    // newline). The input is read straight into `pending` (a buffered reader would copy it
    // once more). The buffer is kept, initialised, from array to array on this thread, so
    // reading into it costs no clearing; it is taken, not borrowed, as a thread helping with
    // other work while it waits may cut another array meanwhile.
    let mut pending = SPARE.with(|spare| spare.take());
    if pending.len() < READ_AHEAD {
        pending = vec![0; READ_AHEAD];
    }
    let mut filled = 0;
    let mut begin = 0;
    let mut line = splitter.position().line;
    let mut searched = 1;
    let mut read_error = None;
    loop {
        let found = if begin + searched < filled {
            finder.find(&pending[begin + searched..filled])
        } else {
            None
        };
        if let Some(k) = found {
            let next = begin + searched + k;
            let open = begin + 1 + indent.len();
            let start = Position {
                line: line + 1,
                column: indent.len() + 1,
            };
            let piece = &pending[open..next];
            let element = piece
                .trim_ascii_end()
                .strip_suffix(b",")
                .map(<[u8]>::trim_ascii_end)
                .filter(|e| e.ends_with(&closing) && one_value(e));
            let Some(element) = element else {
                // Not the shape this cut relies on: the careful scan reads on from here, and
                // names any mistake.
                let rest = pending[open..filled].to_vec();
                keep_spare(pending);
                splitter.hand_back(rest, start, None);
                return Ok(());
            };
            each(element, start)?;
            line += memchr::memchr_iter(b'\n', &pending[begin..next]).count();
            begin = next;
            searched = 1;
            continue;
        }
        searched = (filled - begin).saturating_sub(separator.len() - 1).max(1);
        if filled - begin > FAST_LIMIT {
            break;
        }
        if begin > 0 && begin >= filled / 2 {
            pending.copy_within(begin..filled, 0);
            filled -= begin;
            begin = 0;
        }
        if filled == pending.len() {
            pending.resize(pending.len() * 2, 0);
        }
        let n = match splitter.read_raw(&mut pending[filled..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                // What is pending is still handed out before the error is named.
                read_error = Some(err);
                break;
            }
        };
        filled += n;
    }
    // The last element and `]`, or what came before a read error: the careful scan, on the
    // pending bytes handed back in front of the rest of the input, so that what follows the
    // array is the caller's to read.
    let tail = pending[begin..filled].to_vec();
    keep_spare(pending);
    splitter.hand_back(tail, Position { line, column: 1 }, read_error);
    Ok(())
}

/// Whether `piece`, which opens with `{`, is exactly one value as far as its structure goes:
/// its brackets, outside strings, close for the first time at its last byte. Sixteen bytes at
/// a time are stepped over where they hold no quote and no bracket.
pub(super) fn one_value(piece: &[u8]) -> bool {
    let n = piece.len();
    let mut depth = 0usize;
    let mut i = 0;
    while i < n {
        i += plain(&piece[i..]);
        let Some(&b) = piece.get(i) else {
            break;
        };
        i += 1;
        match b {
            b'"' => loop {
                // A string's end: the next quote not escaped.
                match memchr::memchr2(b'"', b'\\', &piece[i..]) {
                    Some(k) if piece[i + k] == b'"' => {
                        i += k + 1;
                        break;
                    }
                    Some(k) => i += k + 2,
                    None => return false,
                }
            },
            b'{' | b'[' => depth += 1,
            _ => match depth.checked_sub(1) {
                Some(0) => return i == n,
                Some(d) => depth = d,
                None => return false,
            },
        }
    }
    false
}

/// How many bytes from the start are neither a quote nor a bracket.
#[inline]
fn plain(bytes: &[u8]) -> usize {
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    while i + 16 <= bytes.len() {
        let found = sse2::structural(&bytes[i..i + 16]);
        if found != 0 {
            return i + found.trailing_zeros() as usize;
        }
        i += 16;
    }
    // `[` and `]` are `{` and `}` with bit 5 clear.
    i + bytes[i..]
        .iter()
        .take_while(|&&b| b != b'"' && b | 0x20 != b'{' && b | 0x20 != b'}')
        .count()
}

/// Sixteen bytes at a time with SSE2, which every x86-64 processor has.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// The mask of the first 16 bytes that are a quote or a bracket.
    #[inline]
    pub(super) fn structural(block: &[u8]) -> u32 {
        assert!(block.len() >= 16);
        // SAFETY: the block holds at least 16 bytes (checked above), an unaligned load reads
        // exactly 16, and SSE2 is part of every x86-64 target.
        unsafe {
            let x = _mm_loadu_si128(block.as_ptr().cast());
            // `[` and `]` are `{` and `}` with bit 5 clear: one compare each for both.
            let folded = _mm_or_si128(x, _mm_set1_epi8(0x20));
            let open = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8));
            let close = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8));
            let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(open, close), quote)) as u32
        }
    }
}

/// Keeps the cut's buffer for the next array on this thread, unless a huge element grew it.
fn keep_spare(pending: Vec<u8>) {
    if pending.len() <= 4 * READ_AHEAD {
        SPARE.with(|spare| spare.replace(pending));
    }
}
