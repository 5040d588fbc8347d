//! The commands fsmlog suggests, pasted: on a terminal of any width each line is a command, a
//! `#` comment or a command's ` \` continuation, never a comment's words run as a command;
//! Markdown and the HTML page keep a command and its comment on one line.

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::{Value, json};

use super::*;

/// The fleet, and two of its machines again under ids no terminal line holds: one that starts
/// with `-` and holds a quote, spaces and a command substitution, one merely long.
fn fleet_with_long_ids(dir: &Path) -> (PathBuf, Vec<String>) {
    let text = std::fs::read_to_string(testdata("fleet-v0.42.2/list-json/machines.json")).unwrap();
    let mut fleet: Vec<Value> = serde_json::from_str(&text).unwrap();
    let mut long = Vec::new();
    for (n, seed) in [
        "043afe87-2ce5-45b2-824a-4b04924cf73f",
        "99a8d282-516b-4273-b085-c3c262a2bba1",
    ]
    .into_iter()
    .enumerate()
    {
        let seed = fleet.iter().find(|m| m["id"] == seed).unwrap().clone();
        for id in [
            format!("-u{} it's $(touch PWNED){n}", "x".repeat(150)),
            format!("{}{n}", "m".repeat(70)),
        ] {
            let mut machine = seed.clone();
            machine["id"] = json!(id);
            machine["name"] = json!(id);
            fleet.push(machine);
            long.push(id);
        }
    }
    let ids = fleet
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    let file = dir.join("machines.json");
    std::fs::write(&file, serde_json::to_string(&fleet).unwrap()).unwrap();
    assert_eq!(long.len(), 4);
    (file, ids)
}

/// The lines below `look at:` and `next, to look at …:`, up to the next line that is not
/// indented: what a person selects and pastes.
fn shell_blocks(out: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut block: Option<String> = None;
    for line in out.lines() {
        if let Some(b) = block.as_mut().filter(|_| line.starts_with("  ")) {
            b.push_str(line);
            b.push('\n');
            continue;
        }
        blocks.extend(block.take());
        if line == "look at:" || line.starts_with("next, to look at ") {
            block = Some(String::new());
        }
    }
    blocks.extend(block);
    blocks
}

/// Runs a pasted block in bash, with `metalctl` a function that prints its arguments, one
/// line per call; any other command is a stray one and says so.
fn pasted(block: &str, dir: &Path) -> Vec<Vec<String>> {
    let script = format!(
        "set -f\nmetalctl() {{ printf '%s\\0' \"$@\"; printf '\\n'; }}\n\
         command_not_found_handle() {{ printf 'STRAY %s\\0\\n' \"$*\"; }}\n{block}"
    );
    let output = Process::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .lines()
        .map(|call| {
            call.trim_end_matches('\0')
                .split('\0')
                .map(String::from)
                .collect()
        })
        .collect()
}

#[test]
fn a_pasted_next_step_runs_the_command_it_shows_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (fleet, ids) = fleet_with_long_ids(dir.path());
    for columns in [80, 100, 120] {
        let out = on_terminal(columns, &["explain", arg(&fleet)], &[("NO_COLOR", "1")]);
        let blocks = shell_blocks(&out);
        assert!(blocks.len() >= 4, "{columns}: {out}");
        for block in blocks {
            let commands = block
                .lines()
                .filter(|l| l.starts_with("  metalctl "))
                .count();
            let calls = pasted(&block, dir.path());
            assert_eq!(calls.len(), commands, "{columns}:\n{block}");
            for call in calls {
                assert_eq!(call[0], "machine", "{columns}: {call:?} from\n{block}");
                let id = call.last().unwrap();
                let id = id.strip_prefix("--machine-id=").unwrap_or(id);
                assert!(ids.iter().any(|known| known == id), "{columns}: {call:?}");
            }
            // Each line fits, but for an id wider than a line of its own, alone on its line.
            let quoted = |id: &String| format!("'{}'", id.replace('\'', "'\\''"));
            for line in block.lines().filter(|l| l.chars().count() > columns) {
                let rest = line.strip_prefix("    ").unwrap_or_default();
                assert!(ids.iter().any(|id| rest == quoted(id)), "{columns}: {line}");
            }
        }
        assert!(!dir.path().join("PWNED").exists());
    }
}

#[test]
fn markdown_and_the_page_keep_a_command_and_its_comment_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (fleet, ids) = fleet_with_long_ids(dir.path());
    let (_, markdown, _) = stdout_of(&["explain", "-o", "markdown", arg(&fleet)]);
    let lines: Vec<&str> = markdown.lines().collect();
    let commands: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("  metalctl "))
        .collect();
    assert!(commands.len() >= 4, "{markdown}");
    for i in commands {
        // The line is the whole Markdown paragraph.
        assert!(lines[i].contains("   # "), "{}", lines[i]);
        assert_eq!(lines[i + 1], "", "{}", lines[i]);
    }
    // The page: each verdict's commands one `<pre><code>` block, a command and its comment a
    // line; the block's text, pasted, runs each command it shows on a machine of the fleet.
    let (_, page, _) = stdout_of(&["report", "-o", "html", arg(&fleet)]);
    let open = r#"<pre class="commands"><code>"#;
    let blocks: Vec<&str> = page
        .split(open)
        .skip(1)
        .map(|rest| rest.split_once("</code></pre>").unwrap().0)
        .collect();
    assert!(blocks.len() >= 2, "{page}");
    assert!(
        !page.contains("<p>  metalctl"),
        "no command left in a paragraph"
    );
    for block in blocks {
        let text = strip_tags(block);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() >= 2, "{block}");
        for line in &lines {
            assert!(
                line.starts_with("metalctl machine ") && line.contains("   # "),
                "{line}"
            );
        }
        let calls = pasted(&text, dir.path());
        assert_eq!(calls.len(), lines.len(), "{text}");
        for call in calls {
            assert_eq!(call[0], "machine", "{call:?} from\n{text}");
            let id = call.last().unwrap();
            assert!(ids.iter().any(|known| known == id), "{call:?}");
        }
    }
    assert!(!dir.path().join("PWNED").exists());
}

/// An HTML fragment's text, as a browser copies it: tags dropped, entities read.
fn strip_tags(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}
