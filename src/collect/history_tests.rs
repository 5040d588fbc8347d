//! The history directory: day files, alignment across polls, gaps, torn lines, the lock.
use super::super::shapes::{Event, Events};
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
                    time: time.to_string(),
                    event: event.to_string(),
                    message: "m".to_string(),
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
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("torn last line"), "{notes:?}");
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
