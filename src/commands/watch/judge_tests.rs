//! The watch's fleet when `machines.json` holds what is no machine.

use super::*;

const ONE: &str = r#"[{"id":"m1","events":{"log":[{"time":"2025-01-01T00:00:00Z","event":"PXE Booting","message":""}]}}]"#;

#[test]
fn a_list_that_cannot_be_read_whole_is_said_and_the_history_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("machines.json");
    std::fs::write(&list, ONE).unwrap();
    let rules: &'static Ruleset = Box::leak(Box::new(Ruleset::resolve("metal-api").unwrap()));
    let mut view = FleetView::load(dir.path(), rules).unwrap();
    assert!(view.problems().errors.is_empty());
    assert_eq!(view.issues().len(), 1);
    assert_eq!(view.after_poll().unwrap(), None, "nothing changed");

    // A second element that is no machine: said, not dropped.
    std::fs::write(&list, format!("{}, 7]", &ONE[..ONE.len() - 1])).unwrap();
    let taken = listed(dir.path());
    assert_eq!(taken.machines.len(), 1);
    assert_eq!(taken.problems.errors.len(), 1);
    let why = view.after_poll().unwrap();
    assert_eq!(
        why.as_deref(),
        Some("machines.json holds what is no machine")
    );
    let errors: Vec<String> = view
        .problems()
        .errors
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("machines.json:1:"), "{errors:?}");
    assert_eq!(view.issues().len(), 1);
}
