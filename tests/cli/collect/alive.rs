//! Alive pairs from polls: metal-api stores no Alive, but one it received in a state with no
//! rule for it is shown as the machine's last error event until a newer error replaces it.
//! The history keeps each such Alive a poll shows once, where its time puts it, and its report
//! counts the pairs as the whole stream of what metal-api received does.

use super::*;
use standin::alive_machine;

/// The pair (state, event)'s count in a report, or 0.
fn count(report: &Value, state: &str, event: &str) -> u64 {
    report["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["state"] == state && p["event"] == event)
        .map_or(0, |p| p["count"].as_u64().unwrap())
}

#[test]
fn each_alive_error_a_poll_shows_is_counted_once() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let mut fleet = simulated_fleet(3, 30);
    fleet.push(alive_machine(4));
    let standin = Standin::start(fleet.clone(), 0, hmac());
    let stored = fleet.iter().map(|m| m.stored.len()).max().unwrap();
    // Polled after each stored event, so that each Alive is shown; every state polled twice,
    // the second time as if the first had been killed after its events were written (the
    // tail and machines.json of before, the next start reads the event files).
    for shown in 1..=stored {
        standin.show(shown);
        let before: Vec<Option<Vec<u8>>> = [".fsmlog-tail.json", "machines.json"]
            .iter()
            .map(|f| std::fs::read(into.join(f)).ok())
            .collect();
        for again in [false, true] {
            let out = collect_once(&standin, home.path(), &into, &[]);
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            if !again {
                for (name, old) in [".fsmlog-tail.json", "machines.json"].iter().zip(&before) {
                    match old {
                        Some(old) => std::fs::write(into.join(name), old).unwrap(),
                        None => std::fs::remove_file(into.join(name)).unwrap(),
                    }
                }
            }
        }
    }
    let lines = history_lines(&into);
    let machine = fleet.last().unwrap();
    let mut truth: Vec<(String, String, String)> = Vec::new();
    for (i, e) in machine.stored.iter().enumerate() {
        truth.push((e.time.clone(), e.event.clone(), e.message.clone()));
        for (_, a) in machine.alive.iter().filter(|(after, _)| *after == i + 1) {
            truth.push((a.time.clone(), a.event.clone(), a.message.clone()));
        }
    }
    assert_eq!(events_of(&lines, &machine.id), truth);
    for m in &fleet[..3] {
        assert_eq!(events_of(&lines, &m.id), truth_of(m), "machine {}", m.id);
    }
    let whole = home.path().join("whole.ndjson");
    std::fs::write(&whole, whole_stream(&fleet)).unwrap();
    let mut from_history = report(home.path(), &into);
    for pair in from_history["unexpected"].as_array_mut().unwrap() {
        pair.as_object_mut().unwrap().remove("where");
    }
    let from_truth = report(home.path(), &whole);
    assert_eq!(from_history, from_truth);
    // Four cycles, each an Alive in Phoned Home and one in Planned Reboot.
    assert_eq!(count(&from_history, "Phoned Home", "Alive"), 4);
    assert_eq!(count(&from_history, "Planned Reboot", "Alive"), 4);
}

/// Polled less often than Alives arrive, only the newest of each stretch is seen: the history
/// counts what the polls showed, never more.
#[test]
fn polled_rarely_only_the_alive_errors_shown_are_counted() {
    let home = tempfile::tempdir().unwrap();
    let into = home.path().join("history");
    let machine = alive_machine(3);
    let standin = Standin::start(vec![machine.clone()], 0, hmac());
    // Polls after 8, 16 and 24 stored events: each shows the Alive in Planned Reboot that
    // followed its newest event; the one in Phoned Home before it was never shown.
    for shown in [8, 16, 24, 24] {
        standin.show(shown);
        let out = collect_once(&standin, home.path(), &into, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let lines = history_lines(&into);
    let alive: Vec<&str> = lines
        .iter()
        .filter(|l| l["event"] == "Alive")
        .map(|l| l["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        alive,
        ["[unexpectedly received in state planned reboot]"; 3]
    );
    let from_history = report(home.path(), &into);
    assert_eq!(count(&from_history, "Planned Reboot", "Alive"), 3);
    assert_eq!(count(&from_history, "Phoned Home", "Alive"), 0);
}
