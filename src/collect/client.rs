//! One poll, as metal-metrics-exporter makes it: `POST URL/v1/machine/ipmi/find` with `{}` (or
//! `{"partition_id": ID}`), signed, with a timeout, the body cut into its machines as it arrives
//! and each parsed from its own bytes. Every failure is an error that says what went wrong and
//! never carries the key or the token.

use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use chrono::Utc;
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use super::shapes::Machine;
use super::sign::sign;
use super::source::{Auth, Source};
use crate::render::escape;

/// The largest response read (a fleet of 10,000 machines is about 100 MB).
const BODY_LIMIT: u64 = 4 << 30;

/// A client for one metal-api.
pub struct Client {
    agent: ureq::Agent,
    source: Source,
}

impl Client {
    /// A client with this request timeout; TLS is always verified, against the source's CA
    /// where it names one (as metalctl: then only against it).
    pub fn new(source: Source, timeout: Duration) -> Result<Client> {
        let mut tls = TlsConfig::builder();
        if let Some(pem) = &source.ca_pem {
            let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(pem)
                .filter_map(|item| match item {
                    Ok(PemItem::Certificate(cert)) => Some(cert),
                    _ => None,
                })
                .collect();
            if certs.is_empty() {
                bail!("certificate_authority_data holds no certificate that can be read");
            }
            tls = tls.root_certs(RootCerts::Specific(Arc::new(certs)));
        }
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .tls_config(tls.build())
            .build();
        Ok(Client {
            agent: config.into(),
            source,
        })
    }

    /// The endpoint polled, for what is said (the URL holds no secret unless the user put
    /// one in it).
    pub fn endpoint(&self) -> String {
        format!("{}/v1/machine/ipmi/find", self.source.url)
    }

    /// Polls every machine (of the partition) with its events, places and BMC facts.
    pub fn poll(&self) -> Result<Vec<Machine>> {
        let body = match &self.source.partition {
            Some(p) => serde_json::json!({ "partition_id": p }).to_string(),
            None => "{}".to_string(),
        };
        let mut request = self
            .agent
            .post(self.endpoint())
            .header("Accept", "application/json")
            .content_type("application/json");
        match &self.source.auth {
            Auth::Hmac { key, auth_type } => {
                let signed = sign(auth_type, key.expose().as_bytes(), "POST", Utc::now());
                request = request
                    .header("X-Date", signed.date)
                    .header("X-Data-Salt", signed.salt)
                    .header("Authorization", signed.authorization);
            }
            Auth::Token(token) => {
                request = request.header("Authorization", format!("Bearer {}", token.expose()));
            }
            Auth::Anonymous => {}
        }
        let mut response = request.send(body.as_bytes()).map_err(|e| {
            anyhow!(
                "metal-api at {} cannot be read: {}",
                escape::text(&self.endpoint()),
                escape::text(&e.to_string())
            )
        })?;
        let status = response.status();
        // Parsed as it arrives: a fleet's answer held whole costs more in fresh pages than in
        // parsing (measured: bench/collect.sh).
        let mut reader =
            BufReader::with_capacity(1 << 20, response.body_mut().as_reader().take(BODY_LIMIT));
        if !status.is_success() {
            let mut bytes = Vec::new();
            let _ = (&mut reader).take(64 << 10).read_to_end(&mut bytes);
            bail!(
                "metal-api at {} answered {}{}{}",
                escape::text(&self.endpoint()),
                status,
                why(status.as_u16()),
                said(&bytes)
            );
        }
        machines(&mut reader).map_err(|e| match e {
            Unread::Short(why) => anyhow!(
                "metal-api's answer was cut short ({}); nothing was written",
                escape::text(&why)
            ),
            Unread::Shape(what, 0) => anyhow!(
                "metal-api's answer is not a JSON list of machines ({what}); nothing was written"
            ),
            Unread::Shape(what, n) => anyhow!(
                "metal-api's answer is not a JSON list of machines ({what} in machine {n}); \
                 nothing was written"
            ),
        })
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

fn why(status: u16) -> &'static str {
    match status {
        401 => " (not signed in: check --hmac, --hmac-auth-type or --api-token)",
        403 => " (signed in without the right to view machines)",
        500..=599 => " (metal-api failed; the next poll tries again)",
        _ => "",
    }
}

/// metal-api's error body `{"statuscode", "message"}`: its message, escaped and short.
fn said(body: &[u8]) -> String {
    let message = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(String::from));
    match message {
        Some(m) => {
            let short: String = m.chars().take(200).collect();
            format!(": {}", escape::text(&short))
        }
        None => String::new(),
    }
}

/// Why an answer could not be read as a list of machines.
#[derive(Debug)]
enum Unread {
    /// The body ended inside the list, or could not be read.
    Short(String),
    /// Not a JSON list of machines: what, and the element's number (from 1).
    Shape(String, usize),
}

/// Reads the answer's top-level array element by element, each parsed from its own bytes
/// (borrowing is what makes serde fast; the answer is never held whole).
fn machines(reader: &mut impl BufRead) -> Result<Vec<Machine>, Unread> {
    let mut machines = Vec::new();
    let mut element = Vec::with_capacity(64 << 10);
    let short = |e: std::io::Error| Unread::Short(e.to_string());
    // Skips white space, returning the next byte without taking it.
    let next = |reader: &mut dyn BufRead| -> Result<Option<u8>, Unread> {
        loop {
            let buf = reader.fill_buf().map_err(short)?;
            let Some(&first) = buf.first() else {
                return Ok(None);
            };
            let space = buf
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(buf.len());
            if space == 0 {
                return Ok(Some(first));
            }
            reader.consume(space);
        }
    };
    let not_list = |what: &str| Unread::Shape(what.to_string(), 0);
    match next(reader)? {
        Some(b'[') => reader.consume(1),
        Some(_) => return Err(not_list("not JSON list")),
        None => return Err(not_list("empty")),
    }
    if next(reader)? == Some(b']') {
        reader.consume(1);
        return Ok(machines);
    }
    loop {
        element.clear();
        if next(reader)? != Some(b'{') {
            return Err(Unread::Shape("not a machine".into(), machines.len() + 1));
        }
        take_object(reader, &mut element)?;
        let machine = serde_json::from_slice::<Machine>(&element)
            .map_err(|e| Unread::Shape(category(&e).to_string(), machines.len() + 1))?;
        machines.push(machine);
        match next(reader)? {
            Some(b',') => reader.consume(1),
            Some(b']') => {
                reader.consume(1);
                break;
            }
            Some(_) => return Err(Unread::Shape("not JSON".into(), machines.len())),
            None => return Err(Unread::Short("the list is not closed".into())),
        }
    }
    match next(reader)? {
        None => Ok(machines),
        Some(_) => Err(Unread::Shape("more after the list".into(), machines.len())),
    }
}

/// Moves one JSON object (the reader stands on its `{`) into `out`: strings skipped with
/// memchr, brackets counted outside them.
fn take_object(reader: &mut impl BufRead, out: &mut Vec<u8>) -> Result<(), Unread> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    loop {
        let buf = reader
            .fill_buf()
            .map_err(|e| Unread::Short(e.to_string()))?;
        if buf.is_empty() {
            return Err(Unread::Short("the answer ends inside a machine".into()));
        }
        let mut at = 0;
        let mut done = None;
        while at < buf.len() {
            if in_string {
                if escaped {
                    escaped = false;
                    at += 1;
                    continue;
                }
                match memchr::memchr2(b'"', b'\\', &buf[at..]) {
                    None => at = buf.len(),
                    Some(i) => {
                        at += i;
                        if buf[at] == b'\\' {
                            escaped = true;
                        } else {
                            in_string = false;
                        }
                        at += 1;
                    }
                }
                continue;
            }
            match buf[at] {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth -= 1;
                    if depth == 0 {
                        done = Some(at + 1);
                        break;
                    }
                }
                _ => {}
            }
            at += 1;
        }
        let used = done.unwrap_or(buf.len());
        out.extend_from_slice(&buf[..used]);
        reader.consume(used);
        if done.is_some() {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#" [ {"id":"a\"}]{[","events":{"log":[{"time":"t","event":"E","message":"x\\"}],"crash_loop":true},"hardware":{"disks":[{"name":"]]"}]}} ,
        {"id":"b","events":{}} ] "#;

    #[test]
    fn elements_are_cut_as_serde_reads_the_list() {
        // Buffers of every small size, so that strings, escapes and brackets cross their ends.
        let whole: Vec<Machine> = serde_json::from_str(LIST).unwrap();
        for size in 1..24 {
            let mut reader = BufReader::with_capacity(size, LIST.as_bytes());
            assert_eq!(machines(&mut reader).unwrap(), whole, "buffer of {size}");
        }
        let mut empty = BufReader::new(" [ ] ".as_bytes());
        assert!(machines(&mut empty).unwrap().is_empty());
    }

    #[test]
    fn a_list_cut_short_or_not_a_list_is_said() {
        let cut = &LIST[..LIST.len() / 2];
        let Err(Unread::Short(_)) = machines(&mut BufReader::new(cut.as_bytes())) else {
            panic!("a list cut short")
        };
        let cut = &LIST[..LIST.len() - 4];
        let Err(Unread::Short(_)) = machines(&mut BufReader::new(cut.as_bytes())) else {
            panic!("a list not closed")
        };
        for bad in [
            "<html>",
            "{}",
            "[1]",
            r#"[{"id":"a"} {"id":"b"}]"#,
            r#"[{"id":"a"}] x"#,
            "",
        ] {
            let Err(Unread::Shape(..)) = machines(&mut BufReader::new(bad.as_bytes())) else {
                panic!("{bad}")
            };
        }
    }
}
