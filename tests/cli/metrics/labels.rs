//! Metrics labels carry each id exactly, escaped only as the exposition format says, and ids
//! that only look alike stay apart.

use super::*;

#[test]
fn hostile_ids_are_escaped_and_read_back() {
    let input = testdata("metrics/hostile.json");
    let (_, text, _) = stdout_of(&["issues", "-o", "openmetrics", arg(&input)]);
    let (samples, _) = parse(&text);
    let ids: std::collections::BTreeSet<&str> = of(&samples, "metal_machine_issues")
        .iter()
        .map(|s| label(s, "machineid"))
        .collect();
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        [
            "m-\"quoted\"\\back\\slash",
            "m-# EOF",
            "m-new\\u{a}line\\u{1b}[31m\\u{7}\\u{202e}",
        ]
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
    assert_eq!(text.matches("# EOF\n").count(), 1, "{text}");
}

#[test]
fn ids_that_only_look_alike_stay_apart() {
    // `a` line feed `b`, and `a\u{a}b` written out: shown alike everywhere else, they must be
    // two series here, or the exposition holds one series twice and is invalid. The id
    // written out is carried as it is; the one with the line feed is told apart.
    let input = testdata("metrics/collide.json");
    let (code, text, stderr) = stdout_of(&["issues", "-o", "openmetrics", arg(&input)]);
    assert_eq!(code, 0, "{stderr}");
    let (samples, _) = parse(&text);
    let rows = of(&samples, "metal_machine_issues");
    let ids: std::collections::BTreeSet<&str> =
        rows.iter().map(|s| label(s, "machineid")).collect();
    assert_eq!(ids.len(), 7, "{ids:?}");
    assert!(
        ids.contains("a\\u{a}b") && ids.contains("a\\u{a}b~2"),
        "{ids:?}"
    );
    let series: std::collections::BTreeSet<(&str, &str)> = rows
        .iter()
        .map(|s| (label(s, "machineid"), label(s, "issueid")))
        .collect();
    assert_eq!(series.len(), rows.len(), "{text}");
    if have_promtool() {
        promtool_accepts(&text, "ids that look alike");
    }
}

#[test]
fn a_metrics_label_is_the_machines_id() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.json");
    std::fs::write(
        &list,
        r#"[{"id": "m-back\\slash\\", "events": {"log": [{"time": "2025-09-01T00:00:00Z", "event": "Waiting", "message": "w"}]}}]"#,
    )
    .unwrap();
    let (_, json, _) = run_json(&["issues", "-o", "json", "--all", arg(&list)]);
    assert_eq!(json["machines"][0]["machine"], r"m-back\slash\");
    let (code, text, err) = stdout_of(&["issues", "-o", "openmetrics", arg(&list)]);
    assert_eq!(code, 0, "{err}");
    // The exposition's `\\` is one backslash: the label reads back as the id.
    assert!(text.contains(r#"machineid="m-back\\slash\\""#), "{text}");
}
