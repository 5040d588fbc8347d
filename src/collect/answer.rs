//! metal-api's answer cut into its machines as it arrives: read into one buffer, each machine's
//! end found by the crate's block scan (quotes, backslashes and brackets 64 bytes at a time)
//! and the machine parsed by serde where it lies, the answer never held whole. A pretty-printed
//! machine (metal-api's go-restful prints its answers so) is skimmed first (`input::fast::skim`,
//! as `report` reads a list): serde sees only the members `shapes.rs` keeps, and a member left
//! out (the hardware, the BIOS, an allocation's user data, SSH keys and networks, the BMC's
//! user and password) is checked for its shape only.

use std::io::{ErrorKind, Read};

use super::shapes::{self, Machine};
use crate::input::fast::skim::skim;
use crate::jsonsplit::Scan;

/// Why an answer could not be read as a list of machines.
#[derive(Debug)]
pub enum Unread {
    /// The body ended inside the list, or could not be read.
    Short(String),
    /// Not a JSON list of machines: what, and the element's number (from 1).
    Shape(String, usize),
}

/// The answer as it arrives: `data[at..end]` read and not yet taken.
struct Answer<R> {
    inner: R,
    data: Vec<u8>,
    at: usize,
    end: usize,
}

impl<R: Read> Answer<R> {
    fn new(inner: R, capacity: usize) -> Self {
        Answer {
            inner,
            data: vec![0; capacity.max(1)],
            at: 0,
            end: 0,
        }
    }

    /// Reads more after what is not taken yet (moved to the front first, the buffer doubled
    /// when that fills it); false at the end of the answer.
    fn more(&mut self) -> Result<bool, Unread> {
        if self.at > 0 {
            self.data.copy_within(self.at..self.end, 0);
            self.end -= self.at;
            self.at = 0;
        }
        if self.end == self.data.len() {
            self.data.resize(self.data.len() * 2, 0);
        }
        loop {
            match self.inner.read(&mut self.data[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(Unread::Short(e.to_string())),
            }
        }
    }

    /// Skips white space: the next byte, not taken.
    fn peek(&mut self) -> Result<Option<u8>, Unread> {
        loop {
            match self.data[self.at..self.end]
                .iter()
                .position(|b| !b.is_ascii_whitespace())
            {
                Some(i) => {
                    self.at += i;
                    return Ok(Some(self.data[self.at]));
                }
                None => {
                    self.at = self.end;
                    if !self.more()? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Takes the object the answer stands on (at its `{`).
    fn object(&mut self) -> Result<&[u8], Unread> {
        let mut scan = Scan::default();
        // The scan's offsets count from the object's `{`, which stays at `at` as more arrives.
        let mut ended = false;
        loop {
            if let Some(close) = scan.close(&self.data[self.at..self.end], ended) {
                let start = self.at;
                self.at += close + 1;
                return Ok(&self.data[start..self.at]);
            }
            if ended {
                return Err(Unread::Short("the answer ends inside a machine".into()));
            }
            ended = !self.more()?;
        }
    }
}

fn category(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Eof => "it ends early",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "not metal-api's v1 shape",
        serde_json::error::Category::Io => "unreadable",
    }
}

/// Reads the answer's top-level array element by element, each parsed from its own bytes
/// (borrowing is what makes serde fast), through a buffer of `capacity` bytes to start with.
pub fn machines(reader: impl Read, capacity: usize) -> Result<Vec<Machine>, Unread> {
    let mut answer = Answer::new(reader, capacity);
    let mut machines = Vec::new();
    let mut skimmed = Vec::new();
    let not_list = |what: &str| Unread::Shape(what.to_string(), 0);
    match answer.peek()? {
        Some(b'[') => answer.at += 1,
        Some(_) => return Err(not_list("not JSON list")),
        None => return Err(not_list("empty")),
    }
    if answer.peek()? == Some(b']') {
        answer.at += 1;
    } else {
        loop {
            if answer.peek()? != Some(b'{') {
                return Err(Unread::Shape("not a machine".into(), machines.len() + 1));
            }
            let object = answer.object()?;
            let kept = match skim(object, shapes::kept, &mut skimmed) {
                true => &skimmed[..],
                false => object,
            };
            let machine = serde_json::from_slice::<Machine>(kept)
                .map_err(|e| Unread::Shape(category(&e).to_string(), machines.len() + 1))?;
            machines.push(machine);
            match answer.peek()? {
                Some(b',') => answer.at += 1,
                Some(b']') => {
                    answer.at += 1;
                    break;
                }
                Some(_) => return Err(Unread::Shape("not JSON".into(), machines.len())),
                None => return Err(Unread::Short("the list is not closed".into())),
            }
        }
    }
    match answer.peek()? {
        None => Ok(machines),
        Some(_) => Err(Unread::Shape("more after the list".into(), machines.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Machines whose strings hold brackets, escaped quotes and a run of backslashes longer
    /// than a 64-byte block.
    fn list() -> String {
        let run = r"\\".repeat(50);
        format!(
            r#" [ {{"id":"a\"}}]{{[","events":{{"log":[{{"time":"t","event":"E","message":"x\\"}}],"crash_loop":true}},"hardware":{{"disks":[{{"name":"]]"}}]}}}} ,
        {{"id":"b","events":{{"log":[{{"time":"u","event":"E","message":"\\\"}}{{"}}]}}}},
        {{"id":"c\\","tags":["{run}\"]{run}"]}} ] "#
        )
    }

    /// Reads at most `n` bytes a call: the answer arrives in pieces of every size.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(self.1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn elements_are_cut_as_serde_reads_the_list() {
        // Buffers and reads of every small size, so that strings, escapes, brackets and
        // whole 64-byte blocks cross their ends.
        let list = list();
        let whole: Vec<Machine> = serde_json::from_str(&list).unwrap();
        assert_eq!(whole.len(), 3);
        for size in 1..80 {
            for read in [1, 7, 64, 1000] {
                let got = machines(Trickle(list.as_bytes(), read), size).unwrap();
                assert_eq!(got, whole, "buffer of {size}, reads of {read}");
            }
        }
        assert!(machines(" [ ] ".as_bytes(), 4).unwrap().is_empty());
    }

    #[test]
    fn a_pretty_machine_skimmed_is_the_machine_parsed_whole() {
        let machine = serde_json::json!({
            "id": "m1", "partition": {"id": "p", "name": "x"}, "rackid": "r", "size": {"id": "s"},
            "allocation": {"hostname": "h", "project": "p", "role": "machine", "user_data": "c2VjcmV0",
                "ssh_pub_keys": ["ssh-ed25519 AAAA"], "networks": [{"ips": ["10.0.0.1"]}],
                "image": {"id": "ubuntu", "url": "x"}},
            "state": {"value": "LOCKED", "description": "d"}, "liveliness": "Alive",
            "tags": ["a=b", "c"], "hardware": {"disks": [{"name": "]]}"}], "nics": []},
            "events": {"log": [{"time": "2025-01-01T00:00:00Z", "event": "Alive", "message": "m"}],
                "last_event_time": "2025-01-01T00:00:00Z", "crash_loop": true,
                "failed_machine_reclaim": true,
                "last_error_event": {"time": "2025-01-01T00:00:00Z", "event": "Alive", "message": "e"}},
            "ipmi": {"address": "10.1.1.1:623", "user": "admin", "password": "hunter2",
                "mac": "m", "interface": "lanplus", "bmcversion": "1", "powerstate": "ON",
                "last_updated": "2025-01-01T00:00:00Z", "fru": {"board_mfg": "Supermicro"}},
            "bios": {"version": "1"}
        });
        let list = serde_json::Value::Array(vec![machine.clone(), machine]);
        let whole: Vec<Machine> = serde_json::from_value(list.clone()).unwrap();
        assert!(whole[0].ipmi.as_ref().unwrap().fru.is_some());
        for text in [
            serde_json::to_string(&list).unwrap(),
            serde_json::to_string_pretty(&list).unwrap(),
        ] {
            assert_eq!(machines(text.as_bytes(), 64).unwrap(), whole, "{text}");
        }
        // The skim is what reads a pretty machine: it keeps the members of `kept` only.
        let pretty = serde_json::to_string_pretty(&list[0]).unwrap();
        let mut skimmed = Vec::new();
        assert!(skim(pretty.as_bytes(), shapes::kept, &mut skimmed));
        let skimmed = String::from_utf8(skimmed).unwrap();
        for gone in [
            "hunter2",
            "admin",
            "c2VjcmV0",
            "ssh-ed25519",
            "10.0.0.1",
            "hardware",
            "bios",
        ] {
            assert!(!skimmed.contains(gone), "{gone} in {skimmed}");
        }
    }

    #[test]
    fn a_list_cut_short_or_not_a_list_is_said() {
        let list = list();
        for cut in [&list[..list.len() / 2], &list[..list.len() - 4]] {
            for size in [1, 16, 1 << 20] {
                let Err(Unread::Short(_)) = machines(cut.as_bytes(), size) else {
                    panic!("a list cut short: {cut}")
                };
            }
        }
        for bad in [
            "<html>",
            "{}",
            "[1]",
            r#"[{"id":"a"} {"id":"b"}]"#,
            r#"[{"id":"a"}] x"#,
            r#"[{"id":"a",}]"#,
            "",
        ] {
            let Err(Unread::Shape(..)) = machines(bad.as_bytes(), 8) else {
                panic!("{bad}")
            };
        }
    }
}
