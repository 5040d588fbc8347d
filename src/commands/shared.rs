//! What several commands decide alike at their end, and how they name an events.go's problems.

use std::path::Path;

use anyhow::{Result, bail};

use crate::ending::{Ending, Gate};
use crate::gate::Nothing;
use crate::input::Problems;
use crate::render::messages;
use crate::render::terminal::Terminal;

/// `-o template` and `--template` go together: refused before anything is read when one
/// comes without the other (metalctl would print empty lines, or ignore the template).
pub(crate) fn template_fits(template_format: bool, term: &Terminal) -> Result<()> {
    match (template_format, term.template.is_some()) {
        (true, false) => bail!("-o template needs --template (as `--template '{{{{ .id }}}}'`)"),
        (false, true) => bail!("--template is for -o template"),
        _ => Ok(()),
    }
}

/// Whether metrics must not be written: no machine was read, and an empty exposition would
/// tell a collector that every issue is resolved.
pub(crate) fn no_metrics_of_nothing(machines: u64, allow_empty: bool) -> bool {
    machines == 0 && !allow_empty
}

/// The ending of a command that wrote no metrics because no machine was read: exit 2.
pub(crate) fn no_metrics(problems: Problems) -> Ending {
    Ending {
        after: vec![messages::no_metrics()],
        gate: Gate::Refused,
        ..Ending::with(problems)
    }
}

/// The ending of a gate: refused when there was nothing to judge (said after the problems),
/// else failed or passed.
pub(crate) fn gated(problems: Problems, nothing: Option<Nothing>, failed: bool) -> Ending {
    let gate = match (nothing, failed) {
        (Some(_), _) => Gate::Refused,
        (None, true) => Gate::Failed,
        (None, false) => Gate::Passed,
    };
    Ending {
        after: nothing.map(messages::nothing_to_gate).into_iter().collect(),
        gate,
        ..Ending::with(problems)
    }
}

/// The problems reading an `events.go` met, each as `PATH:LINE:COLUMN: message`, as input
/// errors are named.
pub(crate) fn go_problems(err: &anyhow::Error, path: &Path) -> anyhow::Error {
    let lines: Vec<String> = err
        .to_string()
        .lines()
        .map(
            |line| match line.starts_with(|c: char| c.is_ascii_digit()) {
                true => format!("{}:{line}", path.display()),
                false => format!("{}: {line}", path.display()),
            },
        )
        .collect();
    anyhow::anyhow!(lines.join("\n"))
}
