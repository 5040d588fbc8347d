//! One poll, as metal-metrics-exporter makes it: `POST URL/v1/machine/ipmi/find` with `{}` (or
//! `{"partition_id": ID}`), signed, with a timeout, the body cut into its machines as it arrives
//! (`answer.rs`). Every failure is an error that says what went wrong and
//! never carries the key or the token.

use std::io::Read;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use chrono::Utc;
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use super::answer::{Unread, machines};
use super::shapes::{self, Machine};
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
        let mut reader = response.body_mut().as_reader().take(BODY_LIMIT);
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
        let read = machines(reader, 1 << 20);
        shapes::forget_texts();
        read.map_err(|e| match e {
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
