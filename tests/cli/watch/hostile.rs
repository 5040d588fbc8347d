//! A fleet whose machines name themselves with markup, quotes, backslashes, newlines, ANSI
//! escapes and bidirectional controls, through every endpoint and every log line.

use super::running::request;
use super::{hmac, promtool_clean, ready, two_more_polls};
use crate::collect::standin::{Standin, simulated_fleet};

const HOSTILE: &str = "<script>alert(1)</script>\"q'\\\n\u{1b}[31m\u{202e}\u{2066}\u{7f}\u{9b}";

/// Whether a text holds a character that hides or reorders text, raw.
fn raw_hidden(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        c != '\n'
            && (c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'))
    })
}

#[test]
fn hostile_names_reach_no_endpoint_and_no_log_line_raw() {
    let home = tempfile::tempdir().unwrap();
    let mut fleet = simulated_fleet(3, 45);
    for (n, machine) in fleet.iter_mut().enumerate() {
        machine.id = format!("{HOSTILE}{n}");
        machine.partition = HOSTILE.to_string();
        for event in &mut machine.stored {
            event.message = format!("{HOSTILE} {}", event.message);
        }
    }
    let standin = Standin::start(fleet, 5, hmac());
    let mut watch = ready(home.path(), &standin, "300ms", &["--log-format", "json"]);
    // Every machine jumps past a window: a gap, whose line names a machine.
    standin.show(45);
    two_more_polls(&mut watch);
    let (status, _, metrics) = watch.get("/metrics");
    assert_eq!(status, 200);
    assert_eq!(raw_hidden(&metrics), None, "{metrics}");
    promtool_clean(&metrics);
    let (status, _, page) = watch.get("/");
    assert_eq!(status, 200);
    assert!(
        page.contains("&lt;script&gt;alert(1)"),
        "the page names them"
    );
    assert!(!page.contains("<script>alert"), "{page}");
    assert_eq!(raw_hidden(&page), None);
    let pairs = watch
        .metrics()
        .by_pair("fsmlog_unexpected_transitions_total");
    let ((state, event), _) = pairs.iter().next().expect("an unexpected pair");
    let query = format!("{state}/{event}").replace(' ', "%20");
    let (status, _, text) = watch.get(&format!("/explain?pair={query}"));
    assert_eq!(status, 200, "{text}");
    assert_eq!(raw_hidden(&text), None, "{text}");
    for hostile in ["%1b%5b31m/x", "%e2%80%ae/x", "Waiting/%e2%80%ae%0a%7f"] {
        let (status, _, text) = watch.get(&format!("/explain?pair={hostile}"));
        assert_eq!(status, 400, "{text}");
        assert_eq!(raw_hidden(&text), None, "{text:?}");
    }
    // Said once, as the command line says it: not escaped twice.
    let (_, _, text) = watch.get("/explain?pair=Wait%20ing/x");
    assert_eq!(text, "unknown state \"Wait ing\"\n");
    // The absolute form a proxy sends is the same request.
    let (status, _, body) = request(
        &watch.addr,
        &format!("GET http://{}/healthz HTTP/1.1\r\n\r\n", watch.addr),
    );
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    assert_eq!(watch.signal("-TERM").0, Some(0));
    let log = watch.log();
    assert!(
        log.iter().any(|l| l.contains(r#""event":"gap""#)),
        "{log:?}"
    );
    for line in &log {
        assert_eq!(raw_hidden(line), None, "{line:?}");
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}
