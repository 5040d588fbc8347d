//! Random streams cut into blocks and parsed on several threads against the same lines read
//! one at a time, in order: the same records, lines and problems, in the same order.

use std::io::{self, BufReader, Read};

use super::*;
use crate::input::record::{InputOptions, ReadMode};
use crate::log::{Format, MachineLog};

struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// One random line, without its end.
fn line(r: &mut Random) -> Vec<u8> {
    let m = r.below(5);
    let t = format!("2025-09-01T10:{:02}:{:02}Z", r.below(60), r.below(60));
    let text = match r.below(16) {
        0 => String::new(),
        1 => "   ".to_string(),
        2 => "{not json".to_string(),
        3 => format!(r#"{{"machine":"m{m}","time":"{t}","gap":true}}"#),
        // An id with an escape: read by serde, the id decoded.
        4 => format!(r#"{{"machine":"m\u0031{m}","time":"{t}","event":"Alive","message":"x"}}"#),
        5 => format!(r#" {{"machine_id":"m{m}","time":"{t}","event":"Waiting","message":"a\"b"}}"#),
        6 => format!(r#"{{"machine":"m{m}","time":"not a time","event":"Alive","message":""}}"#),
        7 => {
            format!(r#"{{"machine":"m{m}","time":"{t}","event":"Phoned Home","message":"y"}}"#)
                + "\r"
        }
        _ => format!(r#"{{"machine":"m{m}","time":"{t}","event":"Preparing","message":"z{m}"}}"#),
    };
    text.into_bytes()
}

/// A random stream: its bytes, and whether to end in a read error after them.
fn stream(r: &mut Random) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    for _ in 0..r.below(120) {
        bytes.extend(line(r));
        bytes.push(b'\n');
    }
    match r.below(40) {
        // Lines too long: ended, at the stream's end, and one that may just be read there.
        0 => bytes.extend(vec![b'x'; MAX_LINE]),
        1 => bytes.extend(vec![b'x'; MAX_LINE + 3]),
        2 => {
            bytes.extend(vec![b'x'; MAX_LINE]);
            bytes.extend(b"\n");
            bytes.extend(line(r));
        }
        3 => {
            bytes.extend(vec![b'y'; MAX_LINE + 100]);
            bytes.extend(b"\n");
            bytes.extend(line(r));
            bytes.push(b'\n');
        }
        // The last line without its end.
        4..=12 => bytes.extend(line(r)),
        _ => {}
    }
    let fails = r.below(8) == 0;
    if fails {
        let cut = r.below(bytes.len() as u64 + 1) as usize;
        bytes.truncate(cut);
    }
    (bytes, fails)
}

/// A reader of `bytes` that fails after them where `fails`.
struct Source {
    bytes: io::Cursor<Vec<u8>>,
    fails: bool,
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.bytes.read(buf)? {
            0 if self.fails => Err(io::Error::other("broken")),
            n => Ok(n),
        }
    }
}

/// The records as the line-at-a-time reader hands them on: each line parsed alone.
fn one_at_a_time(bytes: &[u8], fails: bool) -> Vec<String> {
    let mut out = Vec::new();
    let path = "stream.ndjson";
    let mut rest = bytes;
    let mut line_no = 0;
    while !rest.is_empty() {
        line_no += 1;
        let (raw, ended) = match memchr::memchr(b'\n', rest) {
            Some(end) => (&rest[..end], true),
            None if fails => break,
            None => (rest, false),
        };
        rest = &rest[raw.len() + usize::from(ended)..];
        if raw.len() > MAX_LINE || (ended && raw.len() >= MAX_LINE) {
            out.push(format!(
                "{:?}",
                Record::Error(InputError::at(path, line_no, TOO_LONG))
            ));
            continue;
        }
        let text = raw.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let record = match parse_line(text, true) {
            Ok((machine, what)) => {
                let mut log =
                    MachineLog::new(machine.0.into_owned(), path, line_no, Format::Ndjson);
                log.annotated = false;
                match what {
                    StreamLine::Event(event) => log.events.push(event.at_line(line_no)),
                    StreamLine::Gap(time) => log.gaps.push(time),
                }
                Record::Machine(log)
            }
            Err(message) => Record::Error(InputError::at(path, line_no, message)),
        };
        out.push(format!("{record:?}"));
    }
    if fails {
        // At the line being read: the one after the last ended.
        let line = memchr::memchr_iter(b'\n', bytes).count() + 1;
        out.push(format!(
            "{:?}",
            Record::Error(InputError::at(path, line, "cannot read: broken"))
        ));
    }
    out
}

/// The records as [`read_blocks`] hands them on, its lines made records of one line each.
fn in_blocks(bytes: &[u8], fails: bool, threads: usize, block: usize) -> Vec<String> {
    let options = InputOptions {
        mode: ReadMode::Lines,
        threads,
        ..InputOptions::default()
    };
    let ctx = FileContext {
        path: "stream.ndjson".to_string(),
        machine: "stream".to_string(),
        options: &options,
        read_ahead: true,
        named: true,
    };
    let source = Source {
        bytes: io::Cursor::new(bytes.to_vec()),
        fails,
    };
    let mut out = Vec::new();
    let mut add = |record: Record| match record {
        Record::Lines(lines) => lines.records(&mut |r| out.push(format!("{r:?}"))),
        other => out.push(format!("{other:?}")),
    };
    // A small buffer, so that lines also run past its end.
    read_blocks(
        BufReader::with_capacity(97, source),
        &ctx,
        true,
        block,
        &mut add,
    );
    out
}

#[test]
fn lines_read_in_blocks_on_threads_are_the_lines_read_one_at_a_time() {
    let mut r = Random(0x2545_f491_4f6c_dd1d);
    for round in 0..300 {
        let (bytes, fails) = stream(&mut r);
        let want = one_at_a_time(&bytes, fails);
        for (threads, block) in [(1, BLOCK), (1, 64), (2, 1), (3, 200), (4, 97)] {
            let got = in_blocks(&bytes, fails, threads, block);
            assert_eq!(
                got, want,
                "round {round}, {threads} threads, blocks of {block}"
            );
        }
    }
}
