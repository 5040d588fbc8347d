//! The tail file read straight from its bytes, in the one form `tail::write` writes it (no
//! space but a newline after each machine, the members in their order): every start of a
//! scheduled `--once` reads 20 events of every machine, and serde spent most of a repeat
//! poll's start on it (measured: docs/performance.md). Anything else — space elsewhere,
//! another member or order, a number that is not a plain integer, a string serde would
//! refuse — declines, and serde reads the file (and says what is wrong). What this accepts,
//! serde reads the same (`tests`: written files, and every cut and changed byte of one).

use std::borrow::Cow;
use std::collections::HashMap;

use super::align::Seen;
use super::tail::{Interner, Known, Lengths, Parsed, time};

/// The tail file, or `None` to let serde read it.
pub fn read(bytes: &[u8], names: &mut Interner) -> Option<Parsed> {
    // UTF-8 checked once; strings are then cut at ASCII quotes.
    let text = simdutf8::basic::from_utf8(bytes).ok()?;
    let mut at = Cursor { text, at: 0 };
    at.eat("{\"version\":")?;
    let version = u32::try_from(at.integer()?).ok()?;
    at.eat(",\"files\":{")?;
    let mut files = Lengths::new();
    if !at.eat_byte(b'}') {
        loop {
            let name = at.string()?.into_owned();
            at.eat(":")?;
            files.insert(name, u64::try_from(at.integer()?).ok()?);
            if at.eat_byte(b'}') {
                break;
            }
            at.eat(",")?;
        }
    }
    at.eat(",\"machines\":{")?;
    let mut machines = HashMap::new();
    if !at.eat_byte(b'}') {
        loop {
            let id = at.string()?.into_owned();
            at.eat(":{")?;
            let alive = match at.eat("\"alive\":") {
                Some(()) => {
                    let alive = at.integer()?;
                    at.eat(",")?;
                    Some(time(alive))
                }
                None => None,
            };
            at.eat("\"events\":[")?;
            let mut tail = Vec::new();
            if !at.eat_byte(b']') {
                loop {
                    at.eat("[")?;
                    let nanos = at.integer()?;
                    at.eat(",")?;
                    let event = names.get(&at.string()?);
                    at.eat(",")?;
                    let message = names.get(&at.string()?);
                    at.eat("]")?;
                    tail.push(Seen {
                        time: time(nanos),
                        event,
                        message,
                    });
                    if at.eat_byte(b']') {
                        break;
                    }
                    at.eat(",")?;
                }
            }
            at.eat("}")?;
            at.eat_byte(b'\n');
            // Of a machine named twice, the last (as serde fills a map).
            machines.insert(id, Known { tail, alive });
            if at.eat_byte(b'}') {
                break;
            }
            at.eat(",")?;
        }
    }
    at.eat("}")?;
    // JSON's white space may end the file, nothing else.
    let rest = &text.as_bytes()[at.at..];
    if !rest
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        return None;
    }
    Some(Parsed {
        version,
        files,
        machines,
    })
}

/// Where the reading stands.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn eat(&mut self, expected: &str) -> Option<()> {
        let rest = &self.text.as_bytes()[self.at..];
        rest.starts_with(expected.as_bytes()).then(|| {
            self.at += expected.len();
        })
    }

    fn eat_byte(&mut self, expected: u8) -> bool {
        let next = self.text.as_bytes().get(self.at) == Some(&expected);
        self.at += usize::from(next);
        next
    }

    /// `-?(0|[1-9][0-9]*)` within an i64, but `-0`.
    fn integer(&mut self) -> Option<i64> {
        let bytes = self.text.as_bytes();
        let negative = self.eat_byte(b'-');
        let start = self.at;
        let mut n: i64 = 0;
        while let Some(&b) = bytes.get(self.at).filter(|b| b.is_ascii_digit()) {
            let digit = i64::from(b - b'0');
            // Built negative, so that i64::MIN fits.
            n = n.checked_mul(10)?.checked_sub(digit)?;
            self.at += 1;
        }
        let digits = self.at - start;
        // serde reads `-0` as a float, which no integer member takes.
        if digits == 0 || (digits > 1 && bytes[start] == b'0') || (negative && n == 0) {
            return None;
        }
        if negative { Some(n) } else { n.checked_neg() }
    }

    /// A string at its opening quote, read as a raw stream's line reads one (borrowed where
    /// it holds no escape; `None` for what serde would refuse or pair, a surrogate escape).
    fn string(&mut self) -> Option<Cow<'a, str>> {
        crate::input::fast::json_string(self.text, &mut self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tail;
    use super::*;
    use chrono::DateTime;

    fn known(events: &[(i64, &str, &str)], alive: Option<i64>) -> Known {
        Known {
            tail: events
                .iter()
                .map(|&(t, event, message)| Seen {
                    time: time(t),
                    event: event.into(),
                    message: message.into(),
                })
                .collect(),
            alive: alive.map(time),
        }
    }

    /// Machines with every kind of string and time the file holds.
    fn fleet() -> HashMap<String, Known> {
        let odd = "a\\b\"c\u{1}d\u{1f}\u{7f}\n\t ünï 🐧 \u{2028}";
        HashMap::from([
            ("m1".to_string(), known(&[(0, "Alive", "")], Some(5))),
            ("m2".to_string(), known(&[], None)),
            ("m2\"\\x".to_string(), known(&[], Some(-1))),
            (
                odd.to_string(),
                known(
                    &[
                        (-1_000_000_123, odd, "plain"),
                        (1_748_772_297_000_000_123, "Phoned Home", odd),
                        (i64::MAX, "", r#"version:"v0.13.2""#),
                    ],
                    Some(i64::MIN),
                ),
            ),
        ])
    }

    fn written(machines: &HashMap<String, Known>) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let files = Lengths::from([("2025-06-01.ndjson".to_string(), 48211), ("x\"".into(), 0)]);
        tail::write(dir.path(), &files, machines).unwrap();
        std::fs::read(dir.path().join(tail::NAME)).unwrap()
    }

    #[test]
    fn a_written_tail_is_read_as_serde_reads_it() {
        for machines in [fleet(), HashMap::new()] {
            let text = written(&machines);
            let direct = read(&text, &mut Interner::default()).expect("read directly");
            assert_eq!(direct.machines, machines);
            assert_eq!(Ok(direct), tail::parse(&text, &mut Interner::default()));
        }
        let t = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
        assert_eq!(time(t.timestamp_nanos_opt().unwrap()), t);
    }

    #[test]
    fn what_is_read_directly_serde_reads_the_same() {
        // Every cut, and every byte changed to one of the bytes that matter to the shape: the
        // direct read declines, or reads what serde reads.
        let text = written(&fleet());
        let mut read_directly = 0;
        let mut check = |bytes: &[u8]| {
            if let Some(direct) = read(bytes, &mut Interner::default()) {
                read_directly += 1;
                let serde = tail::parse(bytes, &mut Interner::default());
                assert_eq!(Ok(direct), serde, "{:?}", String::from_utf8_lossy(bytes));
            }
        };
        for cut in 0..text.len() {
            check(&text[..cut]);
        }
        for at in 0..text.len() {
            for b in *b"\"\\:,[]{}0-19 \n\x01ae\xff" {
                let mut changed = text.clone();
                changed[at] = b;
                check(&changed);
            }
        }
        check(b"{\"version\":1,\"files\":{},\"machines\":{}} \r\n");
        assert!(read_directly > 100, "only {read_directly} read directly");
    }
}
