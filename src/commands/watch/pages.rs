//! What the server answers: the newest snapshot the poll loop published, read under a lock
//! held only to clone an `Arc`, so that a scrape never waits on a poll and a poll never waits
//! on a client.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::judge::explain_page;
use crate::event::{Pair, parse_pair};
use crate::render::escape;
use crate::rules::Ruleset;
use crate::serve::{Handler, Request, Response};

/// Prometheus' text exposition format 0.0.4.
const METRICS_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// What the server shows until the next poll.
pub struct Snapshot {
    /// The history was read and a poll written.
    pub ready: bool,
    /// `/metrics` and `/`, once the history was read.
    pub metrics: Option<Arc<[u8]>>,
    pub page: Option<Arc<[u8]>>,
    pub explainer: Option<Arc<Explainer>>,
}

/// `/explain`'s pairs, explained when first asked for, once per reading of the history.
pub struct Explainer {
    pub dir: PathBuf,
    pub rules: &'static Ruleset,
    pub min_machines: u64,
    /// The unexpected pairs of the history: no other is read for.
    pub pairs: BTreeSet<Pair>,
    pub done: Mutex<HashMap<Pair, Arc<[u8]>>>,
    /// Held while one explanation is read: a second waits for no worker, it is told to come
    /// back (503), so that explanations never take every worker from a scrape.
    pub reading: Mutex<()>,
}

/// The snapshot the loop publishes and the server reads.
pub struct Published {
    current: Mutex<Arc<Snapshot>>,
}

impl Published {
    /// Nothing read yet: alive, not ready.
    pub fn new() -> Published {
        Published {
            current: Mutex::new(Arc::new(Snapshot {
                ready: false,
                metrics: None,
                page: None,
                explainer: None,
            })),
        }
    }

    /// Replaces what is shown.
    pub fn publish(&self, snapshot: Snapshot) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
    }

    fn current(&self) -> Arc<Snapshot> {
        Arc::clone(&self.current.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn body(content_type: &'static str, body: &Arc<[u8]>) -> Response {
    Response {
        status: 200,
        content_type,
        body: Arc::clone(body),
    }
}

fn not_loaded() -> Response {
    Response::text(503, "the history is not read yet\n")
}

impl Handler for Published {
    fn respond(&self, request: &Request) -> Option<Response> {
        let now = self.current();
        Some(match request.path.as_str() {
            "/healthz" => Response::text(200, "ok\n"),
            "/readyz" if now.ready => Response::text(200, "ready\n"),
            "/readyz" => Response::text(
                503,
                "not ready: the history is read and a poll written first\n",
            ),
            "/metrics" => now
                .metrics
                .as_ref()
                .map_or_else(not_loaded, |m| body(METRICS_TYPE, m)),
            "/" => now
                .page
                .as_ref()
                .map_or_else(not_loaded, |p| body("text/html; charset=utf-8", p)),
            "/explain" => match &now.explainer {
                Some(explainer) => explain(explainer, request.query.as_deref()),
                None => not_loaded(),
            },
            _ => return None,
        })
    }
}

/// `/explain?pair=STATE/EVENT`: the pair's explanation, read once per reading of the history.
fn explain(explainer: &Explainer, query: Option<&str>) -> Response {
    let wanted = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("pair="))
        .map(percent_decoded);
    let Some(wanted) = wanted else {
        return Response::text(400, "ask for one pair: /explain?pair=STATE/EVENT\n");
    };
    let pair = match wanted
        .as_deref()
        .map_err(|e| e.to_string())
        .and_then(parse_pair)
    {
        Ok(pair) => pair,
        Err(e) => return Response::text(400, &format!("{}\n", escape::text(&e))),
    };
    if !explainer.pairs.contains(&pair) {
        return Response::text(
            404,
            "the history holds no unexpected occurrence of that pair\n",
        );
    }
    let done = |explainer: &Explainer| {
        let done = explainer.done.lock().unwrap_or_else(|e| e.into_inner());
        done.get(&pair).cloned()
    };
    if let Some(text) = done(explainer) {
        return body("text/html; charset=utf-8", &text);
    }
    let Ok(_reading) = explainer.reading.try_lock() else {
        return Response::text(
            503,
            "another explanation is being read: try again shortly\n",
        );
    };
    // Read by the one before, while this one was on its way.
    if let Some(text) = done(explainer) {
        return body("text/html; charset=utf-8", &text);
    }
    match explain_page(
        &explainer.dir,
        explainer.rules,
        pair,
        explainer.min_machines,
    ) {
        Ok(text) => {
            let text: Arc<[u8]> = Arc::from(text);
            let mut done = explainer.done.lock().unwrap_or_else(|e| e.into_inner());
            done.insert(pair, Arc::clone(&text));
            body("text/html; charset=utf-8", &text)
        }
        Err(_) => Response::text(500, "the history could not be read\n"),
    }
}

/// A query value as sent: `%XX` and `+` decoded; not UTF-8 is an error.
fn percent_decoded(text: &str) -> Result<String, &'static str> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or("a `%` not followed by two hex digits")?;
                out.push(hex);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| "a pair that is not UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_decoded() {
        assert_eq!(
            percent_decoded("Waiting/PXE%20Booting").as_deref(),
            Ok("Waiting/PXE Booting")
        );
        assert_eq!(
            percent_decoded("Waiting/PXE+Booting").as_deref(),
            Ok("Waiting/PXE Booting")
        );
        assert!(percent_decoded("a%2").is_err());
        assert!(percent_decoded("%ff%fe").is_err());
    }
}
