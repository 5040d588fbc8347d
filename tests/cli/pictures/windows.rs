//! Windows and trends: `--since`, `--until` and `--by` count exactly what happened in them,
//! and every windowed view says its window.
use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::*;

/// The newest event of a list export, worked out from the file (its events, last error
/// events and last event times): the data's own clock.
fn newest_event(list: &Path) -> String {
    let machines: Value = serde_json::from_str(&std::fs::read_to_string(list).unwrap()).unwrap();
    let mut times: Vec<chrono::DateTime<chrono::FixedOffset>> = Vec::new();
    for m in machines.as_array().unwrap() {
        let events = &m["events"];
        if let Some(t) = events["last_event_time"].as_str() {
            times.push(chrono::DateTime::parse_from_rfc3339(t).unwrap());
        }
        for e in events["log"].as_array().unwrap().iter().chain(
            events["last_error_event"]
                .as_object()
                .map(|_| &events["last_error_event"]),
        ) {
            times.push(chrono::DateTime::parse_from_rfc3339(e["time"].as_str().unwrap()).unwrap());
        }
    }
    let newest = times.into_iter().max().unwrap().with_timezone(&chrono::Utc);
    newest.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

// Time windows and trends.

/// The unexpected pairs of a replay, filtered by time by hand: (state, event) → count.
fn by_hand(replay: &Value, since: &str, until: &str) -> BTreeMap<(String, String), u64> {
    let mut pairs = BTreeMap::new();
    for machine in replay["machines"].as_array().unwrap() {
        let outside = machine["last_error_outside_log"]
            .as_object()
            .map(|_| &machine["last_error_outside_log"]);
        for step in machine["steps"].as_array().unwrap().iter().chain(outside) {
            let time = step["time"].as_str().unwrap();
            // RFC 3339 in UTC with `Z` compares as text where the whole seconds differ; the
            // bounds are whole seconds.
            let t = chrono::DateTime::parse_from_rfc3339(time).unwrap();
            let ok = (since.is_empty()
                || chrono::DateTime::parse_from_rfc3339(since).unwrap() <= t)
                && (until.is_empty() || t < chrono::DateTime::parse_from_rfc3339(until).unwrap());
            if step["verdict"] == "unexpected" && ok {
                let key = (
                    step["from"].as_str().unwrap().to_string(),
                    step["event"].as_str().unwrap().to_string(),
                );
                *pairs.entry(key).or_default() += 1;
            }
        }
    }
    pairs
}

#[test]
fn windows_count_exactly_what_happened_in_them() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = generated_fleet(dir.path(), 150, 5, 40);
    let (_, replay, _) = run_json(&["replay", "-o", "json", arg(&fleet)]);
    let (_, all, _) = run_json(&["report", "-o", "json", arg(&fleet)]);
    assert_eq!(
        counts(&all),
        by_hand(&replay, "", ""),
        "the steps are what report counts"
    );
    let now = all["window"]["now"].as_str().unwrap().to_string();
    let newest = chrono::DateTime::parse_from_rfc3339(&now).unwrap();
    let days_ago = |d: i64| (newest - chrono::TimeDelta::days(d)).to_rfc3339();
    for (since, until, args) in [
        (days_ago(3), String::new(), vec!["--since", "3d"]),
        (String::new(), days_ago(5), vec!["--until", "120h"]),
        (
            days_ago(6),
            days_ago(2),
            vec!["--since", "6d", "--until", "48h"],
        ),
    ] {
        let mut all_args = vec!["report", "-o", "json", arg(&fleet)];
        all_args.extend_from_slice(&args);
        let (code, windowed, stderr) = run_json(&all_args);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            counts(&windowed),
            by_hand(&replay, &since, &until),
            "{args:?}"
        );
        assert_eq!(windowed["window"]["now"], now.as_str());
        assert_eq!(
            windowed["inputs"], all["inputs"],
            "the input accounting is not windowed"
        );
        assert_eq!(
            windowed["machines"], all["machines"],
            "nor are the machines' flags"
        );
    }
    // An absolute window, and --now from the wall clock, a fixed time, explicitly.
    let (_, fixed, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--since",
        "7d",
        "--now",
        &now,
        arg(&fleet),
    ]);
    assert_eq!(counts(&fixed), by_hand(&replay, &days_ago(7), ""));
    let (_, wall, _) = run_json(&[
        "report",
        "-o",
        "json",
        "--since",
        "1d",
        "--now",
        "now",
        arg(&fleet),
    ]);
    assert_eq!(
        wall["unexpected"],
        json!([]),
        "the generated fleet lies in the past"
    );
}

#[test]
fn trend_series_sum_to_the_counts() {
    for period in ["day", "week"] {
        let (code, report, _) = run_json(&[
            "report",
            "-o",
            "json",
            "--by",
            period,
            arg(&testdata("fleet-v0.42.2/list-json")),
        ]);
        assert_eq!(code, 0);
        for pair in report["unexpected"].as_array().unwrap() {
            let series = pair["series"].as_array().unwrap();
            let sum: u64 = series.iter().map(|p| p["count"].as_u64().unwrap()).sum();
            assert_eq!(sum, pair["count"].as_u64().unwrap());
            let periods: Vec<&str> = series
                .iter()
                .map(|p| p["period"].as_str().unwrap())
                .collect();
            let mut sorted = periods.clone();
            sorted.sort();
            assert_eq!(periods, sorted, "ascending");
            if period == "week" {
                assert!(
                    periods.iter().all(|p| p.starts_with("2025-W")),
                    "{periods:?}"
                );
            }
        }
    }
    let (_, plain, _) = run_json(&["report", "-o", "json", arg(&testdata("seed-machine.txt"))]);
    assert!(
        plain["unexpected"][0].get("series").is_none(),
        "only with --by"
    );
    let (_, table, _) = stdout_of(&["report", "--by", "day", arg(&testdata("seed-machine.txt"))]);
    assert!(table.contains("Per day"), "{table}");
}

#[test]
fn every_windowed_view_says_its_window() {
    let fleet = testdata("fleet-v0.42.2/list-json");
    let now = newest_event(&fleet.join("machines.json"));
    for command in [
        &["report"][..],
        &["explain"][..],
        &["check"][..],
        &[
            "diff",
            "--old",
            "metal-api",
            "--new",
            "metal-api-v0.19.0",
            "--fail-on",
            "never",
        ][..],
    ] {
        let mut args = command.to_vec();
        args.extend(["-o", "json", "--since", "2025-09-18", arg(&fleet)]);
        let (_, out, _) = run_json(&args);
        assert_eq!(
            out["window"]["since"], "2025-09-18T00:00:00Z",
            "{command:?}"
        );
        assert_eq!(out["window"]["until"], Value::Null);
        assert_eq!(out["window"]["now"], now.as_str(), "{command:?}");
    }
}

#[test]
fn a_trend_over_a_long_span_says_how_many_periods_a_bar_holds() {
    let dir = tempfile::tempdir().unwrap();
    // Two occurrences (on two machines) five years apart: 1,827 days in at most 20 bars of
    // 92 days (1,827 / 20 = 91.35), or 262 ISO weeks in bars of 14 (262 / 20 = 13.1).
    for (name, date) in [
        ("m1.txt", "Tue, 01 Jan 2030"),
        ("m2.txt", "Wed, 01 Jan 2025"),
    ] {
        write(
            dir.path(),
            name,
            &format!(
                "{date} 00:00:00 UTC   PXE Booting   [unexpectedly received in state waiting]: x\n"
            ),
        );
    }
    let dir = arg(dir.path());
    let (_, csv, _) = stdout_of(&["report", "--by", "day", "-o", "csv", dir]);
    let header = csv.lines().next().unwrap();
    assert!(header.ends_with(",Per 92 days,Verdict"), "{header}");
    let (_, csv, _) = stdout_of(&["report", "--by", "week", "-o", "csv", dir]);
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .ends_with(",Per 14 weeks,Verdict"),
        "{csv}"
    );
}
