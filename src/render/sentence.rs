//! The sentences several renderers print about a finding: what the gate says of a pair, what
//! the audit says of an issue. The domain hands over data; these words are output's.

use chrono::{DateTime, Utc};

use crate::event::EventKind;
use crate::gate::{Nothing, PairCheck, Violation};
use crate::issues::{Evidence, Issue};
use crate::window::duration;

/// A sentence for people: what the pair is and why it fails, if it does.
pub fn pair(p: &PairCheck) -> String {
    let what = format!("unexpected {} in state {}", p.event.name(), p.state.name());
    let seen = match &p.tally {
        Some(t) => format!(
            "{} times on {} machines ({:.1}% of the fleet)",
            t.count,
            t.machines,
            p.share * 100.0
        ),
        None => "not seen".to_string(),
    };
    match &p.violation {
        Some(Violation::NewPair) => format!("{what}: {seen}; not in the baseline"),
        Some(Violation::CeilingExceeded { share, ceiling }) => format!(
            "{what}: {seen}; the baseline allows {:.1}% of machines, {:.1}% show it",
            ceiling * 100.0,
            share * 100.0
        ),
        None => format!("{what}: {seen}; accepted by the baseline"),
    }
}

/// Why a gate has nothing to judge: `no machine was read` or `no event was read`.
pub fn nothing(nothing: Nothing) -> &'static str {
    match nothing {
        Nothing::Machines => "no machine was read",
        Nothing::Events => "no event was read",
    }
}

/// An issue's details as of `now`: what it was judged on, in words.
pub fn details(issue: &Issue, now: DateTime<Utc>) -> String {
    let ago =
        |then: DateTime<Utc>| duration((now - then).num_milliseconds().max(0) as f64 / 1000.0);
    match &issue.evidence {
        Evidence::NoEvents => "the export holds the machine but no event of it".to_string(),
        Evidence::ExportedLiveliness {
            last_event: Some(last),
        } => format!("as exported; last event {} ago", ago(*last)),
        Evidence::ExportedLiveliness { last_event: None } => "as exported".to_string(),
        Evidence::NoEventTime => "no event time to judge by".to_string(),
        Evidence::Silent {
            last_event,
            allocated,
        } => {
            let why = match allocated {
                Some(true) => "allocated",
                Some(false) => "not allocated",
                None => "allocation not known",
            };
            format!("last event {} ago, {why}", ago(*last_event))
        }
        Evidence::ReclaimFlag => {
            "phoned home more than 5 minutes after a machine reclaim".to_string()
        }
        Evidence::PhonedHomeUnallocated => {
            "not allocated, and its newest event is Phoned Home".to_string()
        }
        Evidence::CrashLoop { newest } => format!(
            "crash loop flag set; newest stored event {}",
            newest.map_or("none", EventKind::name)
        ),
        Evidence::LastError { at } => format!("occurred {} ago", ago(*at)),
        Evidence::Stuck { state, since } => {
            format!("in {state} for {} without an event", ago(*since))
        }
        Evidence::Unexpected(pairs) => pairs
            .iter()
            .map(|((state, event), n)| format!("{event} in {state} ×{n}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
