//! The history directory: day files, alignment across polls, gaps, torn lines, the lock.
use super::super::shapes::{Event, Events};
use super::super::tail;
use super::*;

fn machine(id: &str, events: &[(&str, &str)]) -> Machine {
    // `events` oldest first; metal-api sends them newest first.
    Machine {
        id: id.to_string(),
        events: Events {
            log: events
                .iter()
                .rev()
                .map(|(time, event)| Event {
                    time: (*time).into(),
                    event: (*event).into(),
                    message: "m".into(),
                })
                .collect(),
            ..Events::default()
        },
        ..Machine::default()
    }
}

fn lines(dir: &Path) -> Vec<String> {
    let mut all = Vec::new();
    for file in day_files(&dir.join("events")).unwrap() {
        all.extend(fs::read_to_string(file).unwrap().lines().map(String::from));
    }
    all
}

#[test]
fn windows_are_appended_once_across_polls_and_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, notes) = History::open(dir.path()).unwrap();
    assert!(notes.is_empty());
    let first = [("2025-01-01T23:59:59Z", "A"), ("2025-01-01T23:59:59Z", "A")];
    let added = history.append(vec![machine("m", &first)]).unwrap();
    assert_eq!((added.events, added.new_machines), (2, 1));
    let second = [
        ("2025-01-01T23:59:59Z", "A"),
        ("2025-01-01T23:59:59Z", "A"),
        ("2025-01-02T00:00:01Z", "B"),
    ];
    assert_eq!(
        history.append(vec![machine("m", &second)]).unwrap().events,
        1
    );
    drop(history);
    let (mut history, _) = History::open(dir.path()).unwrap();
    assert_eq!(
        history.append(vec![machine("m", &second)]).unwrap().events,
        0
    );
    assert_eq!(
        lines(dir.path()),
        [
            r#"{"machine":"m","time":"2025-01-01T23:59:59Z","event":"A","message":"m"}"#,
            r#"{"machine":"m","time":"2025-01-01T23:59:59Z","event":"A","message":"m"}"#,
            r#"{"machine":"m","time":"2025-01-02T00:00:01Z","event":"B","message":"m"}"#,
        ]
    );
    assert!(dir.path().join("events/2025-01-02.ndjson").is_file());
    let machines = fs::read_to_string(dir.path().join("machines.json")).unwrap();
    assert!(machines.contains(r#""log": []"#), "{machines}");
}

#[test]
fn a_torn_last_line_is_cut_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    let events = [("2025-01-01T00:00:00Z", "A"), ("2025-01-01T00:00:01Z", "B")];
    history.append(vec![machine("m", &events)]).unwrap();
    drop(history);
    let file = dir.path().join("events/2025-01-01.ndjson");
    let text = fs::read(&file).unwrap();
    fs::write(&file, &text[..text.len() - 10]).unwrap();
    let (mut history, notes) = History::open(dir.path()).unwrap();
    // The tail file names the length before the cut: the event files are read, and repaired.
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].contains("does not match the event files"),
        "{notes:?}"
    );
    assert!(notes[1].contains("torn last line"), "{notes:?}");
    assert_eq!(
        history.append(vec![machine("m", &events)]).unwrap().events,
        1
    );
    assert_eq!(fs::read(&file).unwrap(), text);
}

#[test]
fn a_full_window_past_the_history_is_marked_as_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    history
        .append(vec![machine("m", &[("2025-01-01T00:00:00Z", "A")])])
        .unwrap();
    let times: Vec<String> = (0..WINDOW)
        .map(|i| format!("2025-01-03T00:00:{i:02}Z"))
        .collect();
    let window: Vec<(&str, &str)> = times.iter().map(|t| (t.as_str(), "B")).collect();
    let added = history.append(vec![machine("m", &window)]).unwrap();
    assert_eq!(added.gaps, ["m"]);
    let day = fs::read_to_string(dir.path().join("events/2025-01-03.ndjson")).unwrap();
    assert_eq!(
        day.lines().next().unwrap(),
        r#"{"machine":"m","time":"2025-01-03T00:00:00Z","gap":true}"#
    );
    assert_eq!(day.lines().count(), WINDOW + 1);
    // Reopened, the marker is no event: the next window continues after the last B.
    drop(history);
    let (mut history, _) = History::open(dir.path()).unwrap();
    assert_eq!(
        history.append(vec![machine("m", &window)]).unwrap().events,
        0
    );
}

#[test]
fn one_collector_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let (_history, _) = History::open(dir.path()).unwrap();
    let err = History::open(dir.path()).err().unwrap();
    assert!(err.to_string().contains("another fsmlog collect"), "{err}");
}

#[test]
fn a_bad_time_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    let good = machine("a", &[("2025-01-01T00:00:00Z", "A")]);
    let bad = machine("b", &[("yesterday", "A")]);
    assert!(history.append(vec![good, bad]).is_err());
    assert!(lines(dir.path()).is_empty());
    assert!(!dir.path().join("machines.json").exists());
}

#[test]
fn a_start_with_a_tail_file_reads_no_event_file() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    let first = [("2025-01-01T10:00:00Z", "A"), ("2025-01-01T10:00:01Z", "B")];
    history.append(vec![machine("m", &first)]).unwrap();
    let second = [
        ("2025-01-01T10:00:00Z", "A"),
        ("2025-01-01T10:00:01Z", "B"),
        ("2025-01-02T10:00:00Z", "C"),
    ];
    history.append(vec![machine("m", &second)]).unwrap();
    drop(history);
    // Every event file made something no line of the history is, of the same length: a
    // start that read one would fail.
    for file in day_files(&dir.path().join("events")).unwrap() {
        let len = fs::metadata(&file).unwrap().len() as usize;
        fs::write(&file, "x".repeat(len - 1) + "\n").unwrap();
    }
    let (mut history, notes) = History::open(dir.path()).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    let third = [
        ("2025-01-01T10:00:01Z", "B"),
        ("2025-01-02T10:00:00Z", "C"),
        ("2025-01-02T10:00:09Z", "D"),
    ];
    let added = history.append(vec![machine("m", &third)]).unwrap();
    assert_eq!((added.events, added.new_machines), (1, 0));
    let day = fs::read_to_string(dir.path().join("events/2025-01-02.ndjson")).unwrap();
    assert!(
        day.ends_with("\n{\"machine\":\"m\",\"time\":\"2025-01-02T10:00:09Z\",\"event\":\"D\",\"message\":\"m\"}\n"),
        "{day}"
    );
}

#[test]
fn a_missing_corrupt_or_stale_tail_file_still_aligns_exactly() {
    let a = ("2025-01-01T10:00:00Z", "A");
    let b = ("2025-01-01T10:00:01Z", "B");
    let c = ("2025-01-02T10:00:00Z", "C");
    let d = ("2025-01-02T10:00:05Z", "D");
    for case in ["missing", "corrupt", "stale"] {
        let dir = tempfile::tempdir().unwrap();
        let tail_file = dir.path().join(tail::NAME);
        let (mut history, _) = History::open(dir.path()).unwrap();
        history.append(vec![machine("m", &[a, b])]).unwrap();
        let before = fs::read(&tail_file).unwrap();
        // Killed after C was appended and before the tail file was replaced: the stale case.
        history.append(vec![machine("m", &[a, b, c])]).unwrap();
        drop(history);
        match case {
            "missing" => fs::remove_file(&tail_file).unwrap(),
            "corrupt" => fs::write(&tail_file, "{\"version\":1,").unwrap(),
            _ => fs::write(&tail_file, before).unwrap(),
        }
        let (mut history, notes) = History::open(dir.path()).unwrap();
        if case != "missing" {
            assert!(
                notes.iter().any(|n| n.contains("read instead")),
                "{notes:?}"
            );
        }
        let added = history.append(vec![machine("m", &[a, b, c, d])]).unwrap();
        assert_eq!(added.events, 1, "{case}");
        let events: Vec<String> = lines(dir.path())
            .iter()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].to_string())
            .collect();
        assert_eq!(events, ["\"A\"", "\"B\"", "\"C\"", "\"D\""], "{case}");
        // And the tail file written then is used by the next start.
        drop(history);
        let (_, notes) = History::open(dir.path()).unwrap();
        assert!(notes.is_empty(), "{case}: {notes:?}");
    }
}

#[test]
fn without_a_tail_file_the_newest_day_files_are_read_first_and_only_as_far_as_needed() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    let times: Vec<String> = (0..WINDOW)
        .map(|i| format!("2025-01-02T00:00:{i:02}Z"))
        .collect();
    let window: Vec<(&str, &str)> = times.iter().map(|t| (t.as_str(), "B")).collect();
    history.append(vec![machine("m", &window)]).unwrap();
    drop(history);
    fs::remove_file(dir.path().join(tail::NAME)).unwrap();
    // An older day file that cannot be read as the history: m's newest events are all in the
    // newer one, so it is not read for m.
    fs::write(dir.path().join("events/2025-01-01.ndjson"), "not a line\n").unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    assert_eq!(
        history.append(vec![machine("m", &window)]).unwrap().events,
        0
    );
    // A machine the files read so far do not know sends the reader further back.
    let err = history
        .append(vec![machine("n", &[("2025-01-03T00:00:00Z", "A")])])
        .unwrap_err();
    assert!(err.to_string().contains("2025-01-01.ndjson:1"), "{err}");
}

fn with_alive(mut m: Machine, time: &str) -> Machine {
    m.events.last_error_event = Some(Event {
        time: time.into(),
        event: "Alive".into(),
        message: "[unexpectedly received in state phoned home]".into(),
    });
    m
}

#[test]
fn an_alive_error_is_kept_once_where_its_time_puts_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    let stored = [("2025-01-01T10:00:00Z", "A"), ("2025-01-01T10:00:10Z", "B")];
    let polled = || with_alive(machine("m", &stored), "2025-01-01T10:00:05.5Z");
    let added = history.append(vec![polled()]).unwrap();
    assert_eq!((added.events, added.alive), (2, 1));
    assert_eq!(history.append(vec![polled()]).unwrap().alive, 0);
    drop(history);
    // Shown again after a start from the tail file, and after one from the event files.
    let (mut history, _) = History::open(dir.path()).unwrap();
    assert_eq!(history.append(vec![polled()]).unwrap().alive, 0);
    drop(history);
    fs::remove_file(dir.path().join(tail::NAME)).unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    assert_eq!(history.append(vec![polled()]).unwrap().alive, 0);
    // A newer one is kept after the events it follows.
    let more = [
        ("2025-01-01T10:00:00Z", "A"),
        ("2025-01-01T10:00:10Z", "B"),
        ("2025-01-01T10:00:30Z", "C"),
    ];
    let added = history
        .append(vec![with_alive(
            machine("m", &more),
            "2025-01-01T10:00:31Z",
        )])
        .unwrap();
    assert_eq!((added.events, added.alive), (1, 1));
    let kept: Vec<(String, String)> = lines(dir.path())
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["time"].as_str().unwrap().into(),
                v["event"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [
        ("2025-01-01T10:00:00Z", "A"),
        ("2025-01-01T10:00:05.5Z", "Alive"),
        ("2025-01-01T10:00:10Z", "B"),
        ("2025-01-01T10:00:30Z", "C"),
        ("2025-01-01T10:00:31Z", "Alive"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(t, e)| (t.to_string(), e.to_string()))
        .collect();
    assert_eq!(kept, want);
}

#[test]
fn machines_json_keeps_a_machine_not_polled_and_is_read_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let a = [("2025-01-01T10:00:00Z", "A")];
    let (mut history, _) = History::open(dir.path()).unwrap();
    history
        .append(vec![machine("m", &a), machine("n", &a)])
        .unwrap();
    drop(history);
    let (mut history, _) = History::open(dir.path()).unwrap();
    history.append(vec![machine("m", &a)]).unwrap();
    drop(history);
    let ids = |dir: &Path| -> Vec<String> {
        let list: Vec<serde_json::Value> =
            serde_json::from_str(&fs::read_to_string(dir.join("machines.json")).unwrap()).unwrap();
        list.iter()
            .map(|m| m["id"].as_str().unwrap().into())
            .collect()
    };
    assert_eq!(ids(dir.path()), ["m", "n"]);
    // A poll of every machine known replaces it without reading it.
    fs::write(dir.path().join("machines.json"), "not read").unwrap();
    let (mut history, _) = History::open(dir.path()).unwrap();
    history
        .append(vec![machine("n", &a), machine("m", &a)])
        .unwrap();
    assert_eq!(ids(dir.path()), ["m", "n"]);
}
