//! The beginning of an input, read before its format is known, and the reader that goes on
//! from it: detection looks at a deterministic head, however the input delivers its bytes.

use std::io::{self, BufRead, BufReader, Chain, Cursor, Read, Repeat, Take};

use crate::jsonsplit::MAX_VALUE;

/// How much of an input's beginning detection looks at: its first [`HEAD_LINES`] non-blank
/// lines, but no more than [`HEAD`] bytes, except that a first line opening an object is read
/// whole (up to [`MAX_VALUE`]): a stream line with a long message is still one line.
const HEAD: usize = 256 << 10;
const HEAD_LINES: usize = 8;

/// The UTF-8 byte-order mark, which is no content.
pub(super) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The beginning of a stream, read until the head is complete or the stream ends, however
/// the stream delivers it: `bytes[..cut]` is what detection looks at, whatever else came
/// with the last read. A read error ends the head early and is handed back.
pub(super) struct Head {
    pub bytes: Vec<u8>,
    pub cut: usize,
    pub error: Option<io::Error>,
    /// Whether `bytes` holds the whole stream.
    pub complete: bool,
    /// The blank lines and indentation before the content, which `bytes` leaves out.
    pub padding: Padding,
}

thread_local! {
    // One buffer per thread: a directory of small files would otherwise clear a new one for
    // every file.
    static CHUNK: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; 64 << 10]);
}

/// Reads the head of a stream.
pub(super) fn read_head(reader: &mut dyn Read) -> Head {
    CHUNK.with(|chunk| read_head_with(reader, &mut chunk.borrow_mut()))
}

fn read_head_with(reader: &mut dyn Read, chunk: &mut [u8]) -> Head {
    let mut bytes = Vec::new();
    let mut limit = HEAD;
    // Complete non-blank lines so far, whether the current line has a non-blank byte, and the
    // first non-blank byte of the stream.
    let mut lines = 0;
    let mut filled = false;
    let mut first = None;
    let mut complete = false;
    let mut padding = Padding::default();
    let (mut leading, mut read) = (true, 0);
    loop {
        let want = (limit - bytes.len()).min(chunk.len());
        let n = match reader.read(&mut chunk[..want]) {
            Ok(0) => {
                complete = true;
                break;
            }
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                let cut = bytes.len();
                return Head {
                    bytes,
                    cut,
                    error: Some(err),
                    complete: false,
                    padding,
                };
            }
        };
        let mut got = &chunk[..n];
        if leading {
            // Blank lines and indentation before the first non-blank byte are counted, not
            // held: however many there are, the head holds the content after them.
            let (skip, bom, content) = padding.take(got, read);
            read += n;
            leading = !content;
            bytes.extend_from_slice(&got[..bom]);
            got = &got[skip..];
        }
        let offset = bytes.len();
        bytes.extend_from_slice(got);
        for (i, &byte) in got.iter().enumerate() {
            if byte == b'\n' {
                lines += usize::from(filled);
                filled = false;
                if lines == HEAD_LINES {
                    return Head {
                        cut: offset + i + 1,
                        bytes,
                        error: None,
                        complete: false,
                        padding,
                    };
                }
            } else if !byte.is_ascii_whitespace() {
                let at = offset + i;
                let in_bom = at < BOM.len() && bytes[..=at] == BOM[..=at];
                if !in_bom {
                    filled = true;
                    first.get_or_insert(byte);
                }
            }
        }
        if bytes.len() >= limit {
            if lines == 0 && first == Some(b'{') && limit < MAX_VALUE {
                limit = MAX_VALUE;
                continue;
            }
            break;
        }
    }
    let cut = bytes.len();
    Head {
        bytes,
        cut,
        error: None,
        complete,
        padding,
    }
}

/// The blank lines and indentation before an input's first non-blank byte (after a UTF-8
/// byte-order mark), counted instead of held, and given back in front of the content by
/// [`Head::into_reader`] so that lines and columns stay where they are.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Padding {
    /// Line ends before the first non-blank line.
    pub lines: usize,
    /// Blank bytes on the first non-blank line before its first non-blank byte.
    pub indent: usize,
}

impl Padding {
    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        *self == Padding::default()
    }

    /// Counts the blank bytes at the start of `got`, which begins `read` bytes into the input.
    /// Hands back how many bytes of `got` to pass over, how many of them (a byte-order mark's,
    /// at the very start) to keep, and whether the content begins in `got`.
    fn take(&mut self, got: &[u8], read: usize) -> (usize, usize, bool) {
        let mut kept = 0;
        for (i, &byte) in got.iter().enumerate() {
            let at = read + i;
            if self.is_empty() && at < BOM.len() {
                if byte == BOM[at] {
                    kept += 1;
                    continue;
                }
                if at > 0 {
                    // A byte-order mark begun and not finished is content.
                    return (i, kept, true);
                }
            }
            match byte {
                b'\n' => {
                    self.lines += 1;
                    self.indent = 0;
                }
                b if b.is_ascii_whitespace() => self.indent += 1,
                _ => return (i, kept, true),
            }
        }
        (got.len(), kept, false)
    }

    /// The blank bytes to put back: the line ends, then the indentation as spaces.
    fn reader(self) -> Blank {
        io::repeat(b'\n')
            .take(self.lines as u64)
            .chain(io::repeat(b' ').take(self.indent as u64))
    }
}

impl Head {
    /// Reads on past the cut, up to [`HEAD`] bytes: a small file is then whole in memory and
    /// read without a buffer of its own. Only for inputs that may be read ahead of need (a
    /// pipe that trickles would hold the first records back). A read error is kept for where
    /// the reader reaches it.
    pub fn read_ahead(&mut self, reader: &mut dyn Read) {
        if self.complete || self.error.is_some() || self.bytes.len() >= HEAD {
            return;
        }
        CHUNK.with(|chunk| {
            let chunk = &mut chunk.borrow_mut()[..];
            while self.bytes.len() < HEAD {
                let want = (HEAD - self.bytes.len()).min(chunk.len());
                match reader.read(&mut chunk[..want]) {
                    Ok(0) => {
                        self.complete = true;
                        break;
                    }
                    Ok(n) => self.bytes.extend_from_slice(&chunk[..n]),
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(err) => {
                        self.error = Some(err);
                        break;
                    }
                }
            }
        });
    }

    /// The reader over the whole input from `skip` bytes in (past a byte-order mark): the
    /// blank bytes the head left out, the head, then the rest of `rest`, then the head's read
    /// error if there was one.
    pub fn into_reader(self, rest: &mut dyn Read, skip: usize) -> HeadReader<'_> {
        let mut start = Cursor::new(self.bytes);
        start.set_position(skip as u64);
        if self.complete && self.padding.is_empty() {
            return HeadReader::Whole(start);
        }
        let chained = self
            .padding
            .reader()
            .chain(start)
            .chain(rest)
            .chain(Failing(self.error));
        HeadReader::Buffered(BufReader::with_capacity(64 << 10, chained))
    }
}

/// A reader that fails once with a stored error, then reads nothing.
pub(super) struct Failing(pub Option<io::Error>);

impl Read for Failing {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(err) => Err(err),
            None => Ok(0),
        }
    }
}

/// The blank bytes before the content, the head, then the rest of the input, then the head's
/// read error.
type HeadThenRest<'r> = Chain<Chain<Chain<Blank, Cursor<Vec<u8>>>, &'r mut dyn Read>, Failing>;

/// Blank lines, then indentation, given back.
type Blank = Chain<Take<Repeat>, Take<Repeat>>;

/// An input from its head on: the head alone when it holds the whole input, or else the head
/// followed by the rest through a buffer.
pub(super) enum HeadReader<'r> {
    Whole(Cursor<Vec<u8>>),
    Buffered(BufReader<HeadThenRest<'r>>),
}

impl Read for HeadReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            HeadReader::Whole(r) => r.read(buf),
            HeadReader::Buffered(r) => r.read(buf),
        }
    }
}

impl BufRead for HeadReader<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            HeadReader::Whole(r) => r.fill_buf(),
            HeadReader::Buffered(r) => r.fill_buf(),
        }
    }

    fn consume(&mut self, amount: usize) {
        match self {
            HeadReader::Whole(r) => r.consume(amount),
            HeadReader::Buffered(r) => r.consume(amount),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Delivers a few bytes per read, as a pipe may.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn whole(mut reader: HeadReader) -> Vec<u8> {
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn the_cut_does_not_depend_on_read_ahead_or_read_sizes() {
        let text: Vec<u8> = (0..40)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut cuts = Vec::new();
        for step in [1, 3, 7, 4096] {
            let mut source = Trickle(&text, step);
            let mut head = read_head(&mut source);
            cuts.push(head.cut);
            head.read_ahead(&mut source);
            assert!(head.complete, "a small input is read whole ahead");
            assert_eq!(whole(head.into_reader(&mut source, 0)), text);
        }
        assert!(cuts.iter().all(|&c| c == cuts[0]), "{cuts:?}");
        assert_eq!(&text[..cuts[0]], &text[..8 * 7]);
    }

    #[test]
    fn a_large_input_goes_on_past_the_head() {
        let text: Vec<u8> = (0..100_000)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let mut source = Trickle(&text, 5000);
        let mut head = read_head(&mut source);
        head.read_ahead(&mut source);
        assert!(!head.complete);
        assert_eq!(head.bytes.len(), HEAD);
        assert_eq!(whole(head.into_reader(&mut source, 0)), text);
    }

    #[test]
    fn a_read_error_after_the_head_is_raised_where_it_is_reached() {
        struct Broken(bool);
        impl Read for Broken {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    return Err(io::Error::other("disk gone"));
                }
                let text = b"a\nb\nc\nd\ne\nf\ng\nh\ni\n";
                buf[..text.len()].copy_from_slice(text);
                Ok(text.len())
            }
        }
        let mut source = Broken(false);
        let mut head = read_head(&mut source);
        head.read_ahead(&mut source);
        assert!(head.error.is_some() && !head.complete);
        let mut reader = head.into_reader(&mut source, 0);
        let mut out = Vec::new();
        let err = reader.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.to_string(), "disk gone");
        assert_eq!(out, b"a\nb\nc\nd\ne\nf\ng\nh\ni\n");
    }

    #[test]
    fn blank_bytes_before_the_content_are_counted_not_held() {
        let content = b"{\"machine\": \"m\"}\n";
        for (blank, lines, indent) in [
            (vec![b'\n'; 300 << 10], 300 << 10, 0),
            (vec![b' '; 300 << 10], 0, 300 << 10),
            ([&b"\r\n \t\n"[..], &[b' '; 5]].concat(), 2, 5),
        ] {
            for bom in [&b""[..], BOM] {
                let text = [bom, &blank, content].concat();
                for step in [1, 4096, 1 << 20] {
                    let mut source = Trickle(&text, step);
                    let head = read_head(&mut source);
                    assert_eq!(&head.bytes[..head.cut], [bom, content].concat());
                    assert_eq!(head.padding, Padding { lines, indent });
                    // Read on, the blank lines are back, so that lines and columns hold.
                    let whole = whole(head.into_reader(&mut source, bom.len()));
                    assert_eq!(whole.len(), lines + indent + content.len());
                    assert_eq!(whole.iter().filter(|&&b| b == b'\n').count(), lines + 1);
                    assert!(whole.ends_with(&[&vec![b' '; indent][..], content].concat()));
                }
            }
        }
    }
}
