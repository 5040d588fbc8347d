//! The output formats each command's `-o` takes, each declared once with the name `-o` takes
//! and the sentence `--help` says, and the text formats a view prints in: what the renderers
//! dispatch on (the command line reads the tables in `cli/values.rs`).

/// The formats a [`Doc`](super::doc::Doc) prints in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Table,
    Markdown,
    Csv,
}

/// One command's output formats, as its enum's table declares them.
pub trait OutputFormat: Copy + Eq + 'static {
    /// Every format, in the order `--help` lists them.
    const ALL: &'static [Self];

    /// The name `-o` takes.
    fn name(self) -> &'static str;

    /// What `--help` says of it, where it says something.
    fn help(self) -> Option<&'static str>;

    /// Whether it prints through `--template` (`-o template`).
    fn is_template(self) -> bool {
        self.name() == "template"
    }

    /// Whether it is the command's JSON document written as YAML (`-o yaml`).
    fn is_yaml(self) -> bool {
        self.name() == "yaml"
    }
}

/// Declares a command's output formats once: the enum (each help sentence its variant's doc
/// comment) and its [`OutputFormat`] table, `Variant = "name"`, then `: "help"` where `--help`
/// explains it.
macro_rules! formats {
    (@help) => { None };
    (@help $help:literal) => { Some($help) };
    ($(#[doc = $doc:literal])* $ty:ident {
        $($variant:ident = $name:literal $(: $help:literal)?),* $(,)?
    }) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $ty {
            $($(#[doc = $help])? $variant,)*
        }

        impl OutputFormat for $ty {
            const ALL: &'static [Self] = &[$(Self::$variant),*];

            fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }

            fn help(self) -> Option<&'static str> {
                match self {
                    $(Self::$variant => formats!(@help $($help)?),)*
                }
            }
        }
    };
}

formats!(
    /// Output formats of `report`.
    ReportFormat {
        Table = "table",
        Json = "json",
        Yaml = "yaml": "The JSON document as YAML (as metalctl's `-o yaml`)",
        Markdown = "markdown",
        Csv = "csv": "The unexpected pairs, one per row",
        Html = "html": "One self-contained page: totals, the graph, the pairs with sparklines, machines",
        Openmetrics = "openmetrics": "Prometheus' text exposition format (OpenMetrics, ending `# EOF`)",
        Template = "template": "Each unexpected pair of the JSON through --template (Go's text/template, as metalctl's)",
    }
);

formats!(
    /// Output formats of `diff`.
    DiffFormat {
        Table = "table",
        Json = "json",
        Yaml = "yaml": "The JSON document as YAML (as metalctl's `-o yaml`)",
        Markdown = "markdown",
        Template = "template": "The whole JSON document through --template, once",
    }
);

formats!(
    /// Output formats of `check`.
    CheckFormat {
        Table = "table",
        Json = "json",
        Yaml = "yaml": "The JSON document as YAML (as metalctl's `-o yaml`)",
        Sarif = "sarif": "SARIF 2.1.0, for code-scanning UIs",
        Junit = "junit": "JUnit XML, for Jenkins and GitLab",
        Markdown = "markdown": "A summary for a pull-request comment",
        Openmetrics = "openmetrics": "Prometheus' text exposition format (OpenMetrics, ending `# EOF`)",
        Template = "template": "Each pair of the JSON through --template (Go's text/template, as metalctl's)",
    }
);

formats!(
    /// Output formats of `graph`.
    GraphFormat {
        Svg = "svg": "SVG, drawn by fsmlog on a fixed layout of metal-api's states",
        Dot = "dot": "Graphviz DOT (`| dot -Tsvg`)",
        Mermaid = "mermaid": "A Mermaid flowchart (GitHub and GitLab render it)",
    }
);

formats!(
    /// Output formats of `explain`.
    TableFormat {
        Table = "table",
        Json = "json",
        Yaml = "yaml": "The JSON document as YAML (as metalctl's `-o yaml`)",
        Markdown = "markdown",
        Csv = "csv",
        Html = "html": "One self-contained page, as report's: the pairs, then each pair's note",
        Template = "template": "Each pair of the JSON through --template (Go's text/template, as metalctl's)",
    }
);

formats!(
    /// Output formats of `issues`.
    IssuesFormat {
        Table = "table",
        Json = "json",
        Yaml = "yaml": "The JSON document as YAML (as metalctl's `-o yaml`)",
        Markdown = "markdown",
        Csv = "csv",
        Openmetrics = "openmetrics": "metal-metrics-exporter's `metal_machine_issues` families, every machine and type",
        Template = "template": "Each machine of the JSON through --template (Go's text/template, as metalctl's)",
    }
);

formats!(
    /// Output formats of `replay`.
    ReplayFormat {
        Table = "table",
        Json = "json",
        Yaml = "yaml": "The JSON document as YAML (as metalctl's `-o yaml`)",
        Ndjson = "ndjson",
        Csv = "csv": "Every step, the machine in the first column",
        Template = "template": "Each machine of the JSON through --template (Go's text/template, as metalctl's)",
    }
);

formats!(
    /// Output formats of `rules propose`.
    ProposeFormat {
        Table = "table",
        Json = "json": "The proposal as a rule file",
        Yaml = "yaml": "The rule file as YAML (--rules reads it too)",
        Go = "go": "A unified diff against metal-api's events.go",
    }
);

formats!(
    /// How `watch` writes its log lines (`--log-format`).
    LogFormat {
        Text = "text": "`fsmlog: watch: …`, one line each",
        Json = "json": "One JSON object a line",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every format's name is its own, so that `-o NAME` picks one.
    fn names_differ<F: OutputFormat + std::fmt::Debug>() {
        for (i, a) in F::ALL.iter().enumerate() {
            for b in &F::ALL[i + 1..] {
                assert_ne!(a.name(), b.name(), "{a:?} and {b:?}");
            }
        }
    }

    #[test]
    fn each_command_names_its_formats_once() {
        names_differ::<ReportFormat>();
        names_differ::<DiffFormat>();
        names_differ::<CheckFormat>();
        names_differ::<GraphFormat>();
        names_differ::<TableFormat>();
        names_differ::<IssuesFormat>();
        names_differ::<ReplayFormat>();
        names_differ::<ProposeFormat>();
        names_differ::<LogFormat>();
    }

    #[test]
    fn the_table_says_what_the_commands_ask() {
        assert!(ReportFormat::Template.is_template());
        assert!(!ReportFormat::Json.is_template());
        assert!(DiffFormat::Yaml.is_yaml());
        assert_eq!(IssuesFormat::Openmetrics.name(), "openmetrics");
        assert_eq!(
            GraphFormat::Svg.help(),
            Some("SVG, drawn by fsmlog on a fixed layout of metal-api's states")
        );
        assert_eq!(CheckFormat::Table.help(), None);
        assert_eq!(ReplayFormat::ALL.len(), 6);
    }
}
