//! The fast cut of a pretty-printed array: elements that start on lines of their own, each
//! ended where its brackets close, told from whole blocks of bytes at a time.

use std::io::{self, BufRead};

use super::scanner::{Position, SplitError, Splitter};
use super::structure::Scan;

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

/// How much a cut-out element may grow before the careful scan takes over.
const FAST_LIMIT: usize = 8 << 20;

/// How much of an array the cut reads at once.
pub(super) const READ_AHEAD: usize = 1 << 20;

thread_local! {
    /// The cut's read buffer, kept for the next array this thread cuts.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Cuts the rest of a pretty-printed array into its elements, after a comma. Each element
/// starts on a line of its own at the element indent (`INDENT{`), and ends at the bracket that
/// closes it, found from the element's quotes, escapes and brackets sixty-four bytes at a time
/// ([`Scan`]): so a piece handed to `each` is exactly one element, whatever the indentation of
/// the lines inside it. What the cut cannot vouch for is handed back to the careful scan, which
/// reads on from there, from the start of an element: one followed by anything but `,` and the
/// next element line (the last element and `]`, after which the caller reads on; an element
/// with another on its line), one that does not close before the input ends or grows past the
/// cut's limit, and, after a read error, what was read before it and then the error. So any
/// valid document is read as a parser reads it.
pub(super) fn cut<R: BufRead>(
    splitter: &mut Splitter<R>,
    indent: &[u8],
    each: &mut impl FnMut(&[u8], Position) -> Result<(), SplitError>,
) -> Result<(), SplitError> {
    // `\n INDENT {`: the line an element starts.
    let mut separator = b"\n".to_vec();
    separator.extend_from_slice(indent);
    separator.push(b'{');
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
    let mut scan = Scan::default();
    let mut ended = false;
    let mut read_error = None;
    loop {
        let open = begin + separator.len() - 1;
        let have_start = filled >= begin + separator.len();
        if have_start && pending[begin..begin + separator.len()] != separator[..] {
            // Not an element line after all (a shorter indent's next line): the careful scan.
            break;
        }
        let closed = if have_start {
            scan.close(&pending[open..filled], ended)
        } else {
            None
        };
        if let Some(close) = closed {
            let end = open + close + 1;
            // After the element: `,` and the next element's line, or the careful scan.
            let after = &pending[end..filled];
            let gap = after
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
            let next = end + gap + 1;
            let known = after.len() >= gap + 1 + separator.len();
            if known || ended {
                let follows = known
                    && after[gap] == b','
                    && pending[next..next + separator.len()] == separator[..];
                if !follows {
                    // The last element, or one the careful scan reads on from.
                    break;
                }
                let start = Position {
                    line: line + 1,
                    column: indent.len() + 1,
                };
                each(&pending[open..end], start)?;
                line += memchr::memchr_iter(b'\n', &pending[begin..next]).count();
                begin = next;
                scan = Scan::default();
                continue;
            }
        } else if ended || filled - begin > FAST_LIMIT {
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
        match splitter.read_raw(&mut pending[filled..]) {
            Ok(0) => ended = true,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => {
                // What is pending is still handed out before the error is named.
                read_error = Some(err);
                ended = true;
            }
        }
    }
    // An element the cut cannot vouch for, or what came before a read error: the careful
    // scan, on the pending bytes handed back in front of the rest of the input, so that what
    // follows the array is the caller's to read.
    let tail = pending[begin..filled].to_vec();
    keep_spare(pending);
    splitter.hand_back(tail, Position { line, column: 1 }, read_error);
    Ok(())
}

/// Keeps the cut's buffer for the next array on this thread, unless a huge element grew it.
fn keep_spare(pending: Vec<u8>) {
    if pending.len() <= 4 * READ_AHEAD {
        SPARE.with(|spare| spare.replace(pending));
    }
}
