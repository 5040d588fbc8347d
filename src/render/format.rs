//! The output formats each command's `-o` takes, and the text formats a view prints in: what
//! the renderers dispatch on (the command line names them in `cli/values.rs`).

/// The formats a [`Doc`](super::doc::Doc) prints in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Table,
    Markdown,
    Csv,
}

/// Output formats of `report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Table,
    Json,
    /// The JSON document as YAML.
    Yaml,
    Markdown,
    /// The unexpected pairs, one per row.
    Csv,
    /// One self-contained page: totals, the graph, the pairs with sparklines, machines.
    Html,
    /// Prometheus' text exposition format (OpenMetrics, ending `# EOF`).
    Openmetrics,
    /// Each row of the JSON document through `--template` (Go's text/template, as metalctl's).
    Template,
}

/// Output formats of `diff`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffFormat {
    Table,
    Json,
    /// The JSON document as YAML.
    Yaml,
    Markdown,
    /// Each row of the JSON document through `--template` (Go's text/template, as metalctl's).
    Template,
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckFormat {
    Table,
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// SARIF 2.1.0, for code-scanning UIs.
    Sarif,
    /// JUnit XML, for Jenkins and GitLab.
    Junit,
    /// A summary for a pull-request comment.
    Markdown,
    /// Prometheus' text exposition format (OpenMetrics, ending `# EOF`).
    Openmetrics,
    /// Each row of the JSON document through `--template` (Go's text/template, as metalctl's).
    Template,
}

/// Output formats of `graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphFormat {
    /// SVG, drawn by fsmlog on a fixed layout of metal-api's states.
    Svg,
    /// Graphviz DOT (`| dot -Tsvg`).
    Dot,
    /// A Mermaid flowchart (GitHub and GitLab render it).
    Mermaid,
}

/// Output formats of `explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Table,
    Json,
    /// The JSON document as YAML.
    Yaml,
    Markdown,
    Csv,
    /// One self-contained page, as `report`'s: the pairs, then each pair's note.
    Html,
    /// Each row of the JSON document through `--template` (Go's text/template, as metalctl's).
    Template,
}

/// Output formats of `issues`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssuesFormat {
    Table,
    Json,
    /// The JSON document as YAML.
    Yaml,
    Markdown,
    Csv,
    /// metal-metrics-exporter's `metal_machine_issues` families, every machine and type.
    Openmetrics,
    /// Each row of the JSON document through `--template` (Go's text/template, as metalctl's).
    Template,
}

/// Output formats of `replay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayFormat {
    Table,
    Json,
    /// The JSON array as YAML, written when the replay is done.
    Yaml,
    Ndjson,
    /// Every step, the machine in the first column.
    Csv,
    /// Each row of the JSON document through `--template` (Go's text/template, as metalctl's).
    Template,
}

/// Output formats of `rules propose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposeFormat {
    Table,
    /// The proposal as a rule file.
    Json,
    /// The rule file as YAML (`--rules` reads it too).
    Yaml,
    /// A unified diff against metal-api's events.go.
    Go,
}
