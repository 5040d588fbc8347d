//! Names the commit the binary is built from, for `fsmlog --version`: `git` where the source
//! is a checkout, else `FSMLOG_COMMIT` from the environment (a source tarball), else unknown.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=FSMLOG_COMMIT");
    let commit = std::env::var("FSMLOG_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            // Rebuild when HEAD moves: HEAD itself, the branch it names, and packed refs. Only
            // what exists is watched: cargo takes a missing file for a change every time, so a
            // checkout without packed refs (a fresh `git init`) rebuilt on every build. A
            // branch with no commit yet is watched through its folder, where it will appear.
            git(&["rev-parse", "--git-dir"])?;
            let watch = |path: &str| {
                let at = git(&["rev-parse", "--git-path", path])?;
                Path::new(&at)
                    .exists()
                    .then(|| println!("cargo:rerun-if-changed={at}"))
            };
            watch("HEAD");
            watch("packed-refs");
            if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"])
                && watch(&branch).is_none()
            {
                let folder = branch.rsplit_once('/').map_or("refs", |(dir, _)| dir);
                watch(folder);
            }
            let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
            let date = git(&["show", "-s", "--format=%cs", "HEAD"]).unwrap_or_default();
            Some(format!("{commit} {date}").trim().to_string())
        })
        .unwrap_or_else(|| "commit unknown".to_string());
    println!("cargo:rustc-env=FSMLOG_COMMIT={commit}");
}
