//! The build script: `fsmlog --version` names its commit, and a second build is fresh.
use std::path::Path;

use super::*;

/// Runs `cargo build -v` in `dir` and returns its stderr.
fn cargo_build(dir: &Path) -> String {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["build", "-v", "--offline"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("FSMLOG_COMMIT")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    err
}

#[test]
fn the_build_script_watches_only_what_exists() {
    // A crate of the build script alone, in a fresh `git init` (no packed refs, no commit).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs"),
        root.join("build.rs"),
    )
    .unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(
        root.join("src/main.rs"),
        "fn main() {\n    println!(\"{}\", env!(\"FSMLOG_COMMIT\"));\n}\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(root, &["init", "-q"]);
    assert!(!root.join(".git/packed-refs").exists());
    let first = cargo_build(root);
    assert!(first.contains("Compiling tiny"), "{first}");
    let second = cargo_build(root);
    assert!(
        second.contains("Fresh tiny"),
        "a second build is a no-op: {second}"
    );
    // The first commit makes the branch: the build names it.
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "first"]);
    let third = cargo_build(root);
    assert!(third.contains("Compiling tiny"), "{third}");
    let version = std::process::Command::new(root.join("target/debug/tiny"))
        .output()
        .unwrap();
    let version = String::from_utf8(version.stdout).unwrap();
    assert_ne!(version.trim(), "commit unknown");
    assert!(cargo_build(root).contains("Fresh tiny"));
}
