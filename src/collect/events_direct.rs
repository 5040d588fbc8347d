//! A polled machine's event log read straight from its text: serde hands it over unparsed (a
//! raw value, only its syntax checked), and the objects of `time`, `event` and `message` are
//! read here, with the white space of a pretty-printed answer between their tokens. Reading
//! them through serde was a quarter of a poll (measured: docs/performance.md). Anything else —
//! another member, a member twice, a value that is no string, an escaped key — declines, and
//! serde reads the log (and refuses what it refuses); a string with an escape is decoded by
//! serde. What this accepts, serde reads the same (`tests`).

use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::shapes::{Event, Text};

/// `Events.log` as serde hands it over: read here, or by serde where this declines.
pub fn log<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Event>, D::Error> {
    let raw = <&RawValue>::deserialize(deserializer)?;
    match read(raw.get()) {
        Some(log) => Ok(log),
        None => serde_json::from_str(raw.get()).map_err(serde::de::Error::custom),
    }
}

/// The events of a log array, or `None` to let serde read it.
pub fn read(text: &str) -> Option<Vec<Event>> {
    let mut at = Cursor { text, at: 0 };
    at.expect(b'[')?;
    let mut log = Vec::with_capacity(20);
    if at.next()? == b']' {
        at.at += 1;
        return at.end().then_some(log);
    }
    loop {
        at.expect(b'{')?;
        let (mut time, mut event, mut message) = (None, None, None);
        loop {
            let key = at.plain_key()?;
            at.expect(b':')?;
            let slot = match key {
                "time" => &mut time,
                "event" => &mut event,
                "message" => &mut message,
                _ => return None,
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(at.string()?);
            match at.take()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
        log.push(Event {
            time: time?.into(),
            event: Text::from(&*event?),
            message: message.map_or_else(Text::default, |m| Text::from(&*m)),
        });
        match at.take()? {
            b',' => {}
            b']' => return at.end().then_some(log),
            _ => return None,
        }
    }
}

/// Where the reading stands.
struct Cursor<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// The next byte that is not white space, not taken.
    fn next(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        while let Some(&b) = bytes.get(self.at) {
            if !matches!(b, b' ' | b'\n' | b'\t' | b'\r') {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    fn take(&mut self) -> Option<u8> {
        let b = self.next()?;
        self.at += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.take()? == b).then_some(())
    }

    /// Nothing but white space is left.
    fn end(&mut self) -> bool {
        self.next().is_none()
    }

    /// A key without an escape.
    fn plain_key(&mut self) -> Option<&'a str> {
        match self.string()? {
            std::borrow::Cow::Borrowed(key) => Some(key),
            std::borrow::Cow::Owned(_) => None,
        }
    }

    /// A string: borrowed where it holds no escape, else decoded by serde.
    fn string(&mut self) -> Option<std::borrow::Cow<'a, str>> {
        self.expect(b'"')?;
        let bytes = self.text.as_bytes();
        let open = self.at - 1;
        let mut at = self.at;
        loop {
            match *bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(self.text[open + 1..at].into());
                }
                b'\\' | 0..0x20 => break,
                _ => at += 1,
            }
        }
        // Escaped: the end is the first quote no backslash escapes.
        loop {
            match *bytes.get(at)? {
                b'"' => break,
                b'\\' => at += 2,
                _ => at += 1,
            }
        }
        let decoded: String = serde_json::from_str(self.text.get(open..=at)?).ok()?;
        self.at = at + 1;
        Some(decoded.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serde(text: &str) -> Option<Vec<Event>> {
        serde_json::from_str::<Vec<Event>>(text).ok()
    }

    #[test]
    fn a_log_is_read_as_serde_reads_it() {
        let log = serde_json::json!([
            {"event": "Phoned Home", "message": "phoned home", "time": "2025-06-23T05:39:40.435Z"},
            {"time": "t", "event": "Preparing", "message": "starting metal-hammer version:\"v0.13.2\""},
            {"message": "a\\b\u{1}\u{7f}\n ünï 🐧 \u{2028}", "event": "E\"", "time": "\t"},
            {"event": "Alive", "time": "2025-01-01T00:00:00Z"},
        ]);
        for text in [
            serde_json::to_string(&log).unwrap(),
            serde_json::to_string_pretty(&log).unwrap(),
            " [ ] ".to_string(),
            "[]".to_string(),
        ] {
            let direct = read(&text).expect("read directly");
            assert_eq!(Some(direct), serde(&text), "{text}");
        }
    }

    #[test]
    fn what_is_read_directly_serde_reads_the_same() {
        // Every cut, and every byte changed to one that matters to the shape: the direct
        // read declines, or reads what serde reads.
        let log = serde_json::json!([
            {"event": "Phoned Home", "message": "x\"y", "time": "2025-06-23T05:39:40.435Z"},
            {"time": "t", "event": "P"},
        ]);
        let mut read_directly = 0;
        for text in [
            serde_json::to_string(&log).unwrap(),
            serde_json::to_string_pretty(&log).unwrap(),
        ] {
            let mut check = |bytes: &[u8]| {
                let Ok(text) = std::str::from_utf8(bytes) else {
                    return;
                };
                if let Some(direct) = read(text) {
                    read_directly += 1;
                    assert_eq!(Some(direct), serde(text), "{text:?}");
                }
            };
            let bytes = text.as_bytes();
            for cut in 0..bytes.len() {
                check(&bytes[..cut]);
            }
            for at in 0..bytes.len() {
                for b in *b"\"\\:,[]{}0 \n\x01ae" {
                    let mut changed = bytes.to_vec();
                    changed[at] = b;
                    check(&changed);
                }
            }
        }
        assert!(read_directly > 100, "only {read_directly} read directly");
    }

    #[test]
    fn a_machine_reads_its_log_here_or_through_serde_alike() {
        // The log of a machine as serde hands it over, read directly and where it declines.
        let machine = r#"{"id":"m","events":{"log":[{"time":"t","event":"E","message":"m"}]}}"#;
        let read: super::super::shapes::Machine = serde_json::from_str(machine).unwrap();
        assert_eq!(
            read.events.log,
            serde(r#"[{"time":"t","event":"E","message":"m"}]"#).unwrap()
        );
        let odd = r#"{"id":"m","events":{"log":[{"time":"t","event":"E","extra":1}]}}"#;
        let read: super::super::shapes::Machine = serde_json::from_str(odd).unwrap();
        assert_eq!(
            read.events.log,
            serde(r#"[{"time":"t","event":"E"}]"#).unwrap()
        );
        let bad = r#"{"id":"m","events":{"log":[{"time":"t"}]}}"#;
        assert!(serde_json::from_str::<super::super::shapes::Machine>(bad).is_err());
    }
}
