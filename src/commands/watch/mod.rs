//! `fsmlog watch` (docs/watch.md): `collect`'s loop, and beside it on threads of its own a
//! server of the fleet judged live. After each poll the loop judges the history
//! (`judge.rs`, the seam the incremental fleet replaces), renders what the server shows and
//! publishes it (`pages.rs`); SIGTERM or SIGINT ends the loop after the poll under way, then
//! the server.

mod judge;
mod pages;

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use chrono::Utc;
use serde_json::Value;
use signal_hook::consts::{SIGINT, SIGTERM};

use crate::cli::WatchArgs;
use crate::collect::{self, Observer, Polled};
use crate::diagnose::MIN_MACHINES;
use crate::ending::{Ending, log};
use crate::render::format::LogFormat;
use crate::render::watch_log::{Level, LogLine};
use crate::render::{self, Collected, Report, WatchMetrics, watch_metrics};
use crate::rules::Ruleset;
use crate::serve::{Limits, Server};
use crate::window::Period;
use judge::FleetView;
use pages::{Explainer, Published, Snapshot};

/// Runs the collector's loop and the server until a signal.
pub fn run(args: &WatchArgs) -> Result<Ending> {
    // Lives as long as the process: every machine judged holds on to it.
    let rules: &'static Ruleset = Box::leak(Box::new(Ruleset::resolve(&args.rules)?));
    // Before serving: a pod whose source is wrong fails at once, not after its history is
    // read with /healthz answering 200.
    collect::check_source(&args.plan())?;
    let listener = TcpListener::bind(args.listen)
        .with_context(|| format!("--listen {}: cannot listen there", args.listen))?;
    let published = Arc::new(Published::new());
    let server = Server::start(listener, published.clone(), Limits::default())?;
    let mut watcher = Watcher {
        json: args.log_format == LogFormat::Json,
        exporter_issues: args.exporter_issues,
        published,
        view: None,
        collected: Collected::default(),
        page: None,
        explainer: None,
    };
    watcher.log(
        Level::Info,
        "serving",
        &format!("serving on http://{}", server.addr()),
        vec![("listen", Value::from(server.addr().to_string()))],
    );
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [SIGTERM, SIGINT] {
        signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(&stop))?;
        signal_hook::flag::register(signal, Arc::clone(&stop))?;
    }
    let started = std::time::Instant::now();
    let view = FleetView::load(&args.into, rules)
        .with_context(|| format!("{}: the history cannot be read", args.into.display()))?;
    watcher.view = Some(view);
    watcher.collected.load_seconds = Some(started.elapsed().as_secs_f64());
    watcher.publish();
    let ran = collect::run_observed(&args.plan(), &stop, &mut watcher);
    server.stop();
    ran?;
    Ok(Ending::default())
}

/// The loop's observer: it logs, judges and publishes.
struct Watcher {
    json: bool,
    exporter_issues: bool,
    published: Arc<Published>,
    view: Option<FleetView>,
    collected: Collected,
    /// The page and the explainer of the summary's generation they were made of.
    page: Option<(u64, Arc<[u8]>)>,
    explainer: Option<(u64, Arc<Explainer>)>,
}

impl Watcher {
    fn log(&self, level: Level, event: &str, message: &str, fields: Vec<(&str, Value)>) {
        let line = LogLine {
            time: Utc::now(),
            level,
            event,
            message,
            fields,
        }
        .render(self.json);
        log(&line);
    }

    /// Renders what the server shows from the view and the collector's counts, and hands it
    /// over.
    fn publish(&mut self) {
        let Some(view) = &self.view else { return };
        let summary = view.summary();
        let rules = view.rules();
        let verdicts = summary.verdicts(MIN_MACHINES, &rules.name);
        let report = Report {
            rules: &rules.name,
            summary,
            window: view.window(),
            period: Some(Period::Day),
            breakdown: None,
            graph: Some(view.graph()),
            verdicts: &verdicts,
            problems: view.problems(),
            order: &Default::default(),
            labels: &[],
        };
        let mut metrics = Vec::new();
        let written = watch_metrics(
            &WatchMetrics {
                report: &report,
                machines: view.issues(),
                exporter_issues: self.exporter_issues,
                collected: &self.collected,
                version: env!("CARGO_PKG_VERSION"),
            },
            &mut metrics,
        );
        let generation = view.generation();
        if self.page.as_ref().is_none_or(|(g, _)| *g != generation) {
            let mut page = Vec::new();
            // Each pair links to its explanation on this server.
            let _ = render::report_page(&report, Some("/explain"), &mut page);
            self.page = Some((generation, Arc::from(page)));
            let pairs: BTreeSet<_> = summary.pairs_by_count().iter().map(|(p, _)| **p).collect();
            self.explainer = Some((
                generation,
                Arc::new(Explainer {
                    dir: view.dir().to_path_buf(),
                    rules,
                    min_machines: MIN_MACHINES,
                    pairs,
                    done: Mutex::new(Default::default()),
                    reading: Mutex::new(()),
                }),
            ));
        }
        if let Err(err) = written {
            self.log(
                Level::Error,
                "render",
                &format!("the metrics could not be written: {err}"),
                vec![],
            );
            return;
        }
        self.published.publish(Snapshot {
            ready: self.collected.polls_ok > 0,
            metrics: Some(Arc::from(metrics)),
            page: self.page.as_ref().map(|(_, p)| Arc::clone(p)),
            explainer: self.explainer.as_ref().map(|(_, e)| Arc::clone(e)),
        });
    }
}

impl Observer for Watcher {
    fn polled(&mut self, polled: Polled<'_>) {
        match polled {
            Polled::Written { appended, took } => {
                self.collected.polls_ok += 1;
                self.collected.last_good_poll = Some(Utc::now());
                self.collected.last_poll_seconds = Some(took.as_secs_f64());
                self.collected.events += appended.events as u64;
                let seconds = (took.as_secs_f64() * 1000.0).round() / 1000.0;
                self.log(
                    Level::Info,
                    "poll",
                    &format!(
                        "poll written in {seconds}s: {} machines ({} new), {} new events, {} gaps",
                        appended.machines,
                        appended.new_machines,
                        appended.events,
                        appended.gaps.len()
                    ),
                    vec![
                        ("result", Value::from("ok")),
                        ("seconds", Value::from(seconds)),
                        ("machines", Value::from(appended.machines)),
                        ("new_machines", Value::from(appended.new_machines)),
                        ("events", Value::from(appended.events)),
                        ("gaps", Value::from(appended.gaps.len())),
                    ],
                );
                if let Some(first) = appended.gaps.first() {
                    self.log(
                        Level::Warn,
                        "gap",
                        &format!(
                            "{} machines (the first {first}) stored more events than a window \
                             holds since the last poll: marked as gaps; poll more often",
                            appended.gaps.len()
                        ),
                        vec![("machines", Value::from(appended.gaps.len()))],
                    );
                }
                let started = std::time::Instant::now();
                let judged = match self.view.as_mut() {
                    Some(view) => view.after_poll(),
                    None => Ok(None),
                };
                self.collected.last_judge_seconds = Some(started.elapsed().as_secs_f64());
                match judged {
                    Ok(Some(why)) => self.log(
                        Level::Warn,
                        "reread",
                        &format!("the history was read again whole: {why}"),
                        vec![("why", Value::from(why.as_str()))],
                    ),
                    Ok(None) => {}
                    Err(err) => self.log(
                        Level::Error,
                        "judge",
                        &format!("the history could not be read: {err:#}"),
                        vec![],
                    ),
                }
            }
            Polled::Failed {
                error,
                writing,
                took,
            } => {
                self.collected.polls_failed += 1;
                self.collected.last_poll_seconds = Some(took.as_secs_f64());
                let what = if writing {
                    "writing the history failed"
                } else {
                    "the poll failed"
                };
                self.log(
                    Level::Error,
                    "poll",
                    &format!("{what}: {error:#}"),
                    vec![
                        ("result", Value::from("error")),
                        ("writing", Value::from(writing)),
                        ("seconds", Value::from(took.as_secs_f64())),
                        ("error", Value::from(format!("{error:#}"))),
                    ],
                );
            }
        }
        self.publish();
    }

    fn said(&mut self, line: &str) {
        self.log(Level::Info, "note", line, vec![]);
    }
}
