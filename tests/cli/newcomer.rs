//! What a newcomer meets: the README's shell examples, run from the checkout with a fresh home
//! (every `fsmlog` line runs, none leaves a file in the checkout), and a test whose checker is
//! missing saying so on the test output instead of passing in silence.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command as Process;

/// The README's `sh` blocks, each as its command lines (continuation lines joined).
fn readme_blocks() -> Vec<Vec<String>> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let mut blocks = Vec::new();
    let mut block: Option<Vec<String>> = None;
    let mut pending = String::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            blocks.extend(block.take());
            if line == "```sh" {
                block = Some(Vec::new());
            }
            continue;
        }
        let Some(block) = block.as_mut() else {
            continue;
        };
        let line = line.trim_end();
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(line);
        block.push(std::mem::take(&mut pending));
    }
    blocks
}

/// Every file below the checkout but for the build's and git's own folders.
fn files_in(root: &Path) -> BTreeSet<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            !(e.depth() == 1 && (name == "target" || name == ".git"))
        })
        .filter_map(Result::ok)
        .map(|e| e.path().to_path_buf())
        .collect()
}

#[test]
fn readme_examples_run_on_a_fresh_account_and_leave_the_checkout_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = assert_cmd::cargo::cargo_bin("fsmlog");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let home = tempfile::tempdir().unwrap();
    let before = files_in(root);
    let mut ran = 0;
    // A block that starts from metalctl's output needs a metal-api; cargo and a patch to
    // metal-api's own checkout are not the README's to run here either.
    let runnable = readme_blocks()
        .into_iter()
        .filter(|block| !block.iter().any(|c| c.starts_with("metalctl ")))
        .flatten()
        .filter(|c| {
            let first = c.split_whitespace().next().unwrap_or("");
            (first == "fsmlog" || first == "mkdir") && !c.contains("git apply")
        });
    for command in runnable {
        let out = Process::new("sh")
            .args(["-c", &command])
            .current_dir(root)
            .env("PATH", &path)
            .env("HOME", home.path())
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0) | Some(1)),
            "{command}\nexit {code:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 12, "only {ran} README commands found");
    let after = files_in(root);
    let left: Vec<_> = after.difference(&before).collect();
    assert!(left.is_empty(), "the README's examples left {left:?}");
    assert!(home.path().join(".local/share/man/man1/fsmlog.1").is_file());
}

#[test]
fn a_test_without_its_checker_says_it_was_skipped() {
    let empty = tempfile::tempdir().unwrap();
    // No PATH to find `dot` (nor the `sh` that looks for it) on: Graphviz is missing.
    let out = Process::new(std::env::current_exe().unwrap())
        .args(["pictures::dot_renders_with_graphviz", "--exact"])
        .env("PATH", empty.path())
        .env_remove("FSMLOG_REQUIRE_TOOLS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stderr.contains(
            "skipped: pictures::dot_renders_with_graphviz: Graphviz (dot) is not installed"
        ),
        "{stderr}"
    );
}
