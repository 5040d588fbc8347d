//! metalctl's spellings that clap's derive cannot say: `-o wide` is metalctl's wide table,
//! here `-o table --wide`. Rewritten before parsing, only for the commands that print a
//! table, so that any other command still refuses `wide` as its own format.

use std::ffi::OsString;

/// The commands (as typed) whose `-o` has `table`.
const WITH_TABLE: [&[&str]; 7] = [
    &["report"],
    &["replay"],
    &["diff"],
    &["check"],
    &["explain"],
    &["issues"],
    &["rules", "propose"],
];

/// The global options that take a value, so that it is not read as the command.
const GLOBAL_VALUES: [&str; 2] = ["--color", "--template"];

/// The command line with `-o wide` (`-owide`, `--output wide`, `--output=wide`,
/// `--output-format wide`, `--output-format=wide`) as `--output=table --wide`, where the
/// command prints tables; anything after `--` is a path and left alone.
pub fn spellings(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args.into_iter().collect();
    if !prints_tables(&args) {
        return args;
    }
    let mut out = Vec::with_capacity(args.len() + 1);
    let mut wide = false;
    let mut rest = args.into_iter();
    while let Some(arg) = rest.next() {
        let text = arg.to_str().unwrap_or("");
        if text == "--" {
            // `--wide` must come before the paths.
            if std::mem::take(&mut wide) {
                out.push("--wide".into());
            }
            out.push(arg);
            out.extend(rest.by_ref());
            break;
        }
        match text {
            "-o" | "--output" | "--output-format" => {
                let value = rest.next();
                if value.as_ref().and_then(|v| v.to_str()) == Some("wide") {
                    out.push("--output=table".into());
                    wide = true;
                } else {
                    out.push(arg);
                    out.extend(value);
                }
            }
            "-owide" | "-o=wide" | "--output=wide" | "--output-format=wide" => {
                out.push("--output=table".into());
                wide = true;
            }
            _ => out.push(arg),
        }
    }
    if wide {
        out.push("--wide".into());
    }
    out
}

/// Whether the command the line names is one with a table.
fn prints_tables(args: &[OsString]) -> bool {
    let mut words = Vec::new();
    let mut skip = false;
    for arg in args.iter().skip(1) {
        let text = arg.to_str().unwrap_or("");
        if skip {
            skip = false;
        } else if GLOBAL_VALUES.contains(&text) {
            skip = true;
        } else if !text.starts_with('-') {
            words.push(text);
            if words.len() == 2 {
                break;
            }
        }
    }
    WITH_TABLE
        .iter()
        .any(|command| words.len() >= command.len() && words[..command.len()] == **command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(line: &str) -> String {
        let args = line.split(' ').map(OsString::from);
        spellings(args)
            .iter()
            .map(|a| a.to_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn wide_is_a_wide_table_where_the_command_has_tables() {
        for line in [
            "fsmlog report -o wide x",
            "fsmlog report -owide x",
            "fsmlog report --output wide x",
            "fsmlog report --output=wide x",
            "fsmlog report --output-format wide x",
            "fsmlog --color never report -o=wide x",
        ] {
            let got = rewritten(line);
            assert!(
                got.contains("report --output=table x --wide"),
                "{line}: {got}"
            );
        }
        assert_eq!(
            rewritten("fsmlog rules propose -o wide x"),
            "fsmlog rules propose --output=table x --wide"
        );
        // Another format, a command without tables, and a path named `wide` stay.
        for line in [
            "fsmlog report -o json wide",
            "fsmlog graph -o wide x",
            "fsmlog rules export -o wide",
            "fsmlog report -- -o wide",
        ] {
            assert_eq!(rewritten(line), line);
        }
        // Before `--`, never among the paths after it.
        assert_eq!(
            rewritten("fsmlog report -o wide -- x"),
            "fsmlog report --output=table --wide -- x"
        );
    }
}
