//! What the place output goes to can show: how wide it is, whether colour is wanted, and
//! whether values are shortened. Decided once per run, from the command line, the
//! environment (`COLUMNS`, `NO_COLOR`) and whether standard output is a terminal.

use std::io::IsTerminal;
use std::sync::Arc;

use super::template::RowTemplate;

/// When to colour output (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    Always,
    Never,
}

/// How text output is laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Terminal {
    /// The width tables must fit; `None` when output is piped (nothing is wrapped).
    pub width: Option<usize>,
    /// Whether to colour verdicts and headings.
    pub color: bool,
    /// Whether to shorten times, ids and example lists.
    pub shorten: bool,
    /// Whether tables and CSV have their header row; without it (metalctl's `--no-headers`) a
    /// table is its rows alone.
    pub headers: bool,
    /// What `-o template` prints each row through (metalctl's `--template`).
    pub template: Option<Arc<RowTemplate>>,
}

impl Terminal {
    /// Looks at standard output and the environment.
    pub fn detect(color: ColorChoice, wide: bool, headers: bool) -> Terminal {
        let tty = std::io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                tty && !no_color && std::env::var("TERM").map_or(true, |t| t != "dumb")
            }
        };
        if !tty {
            return Terminal {
                width: None,
                color,
                shorten: false,
                headers,
                template: None,
            };
        }
        let columns = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0);
        // comfy-table asks the terminal for its size.
        let width = columns.or_else(|| comfy_table::Table::new().width().map(usize::from));
        Terminal {
            width: Some(width.unwrap_or(80)),
            color,
            shorten: !wide,
            headers,
            template: None,
        }
    }

    /// The same, printing `-o template`'s rows through this template.
    pub fn with_template(self, template: Option<RowTemplate>) -> Terminal {
        Terminal {
            template: template.map(Arc::new),
            ..self
        }
    }
}
