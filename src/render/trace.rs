//! `replay`'s renderers: traces printed as they come, one machine at a time.

use std::io::{self, Write};

use super::doc;
use super::escape;
use super::format::ReplayFormat;
use super::json::TraceJson;
use super::reports::TraceRenderer;
use super::terminal::Terminal;
use super::{csv, text, view};
use crate::replay::Trace;

/// The trace renderer for a format.
pub fn trace_renderer(format: ReplayFormat, term: Terminal) -> Box<dyn TraceRenderer> {
    match format {
        ReplayFormat::Table => Box::new(TraceText { term }),
        ReplayFormat::Csv => Box::new(TraceCsv {
            header: !term.headers,
        }),
        ReplayFormat::Json => Box::new(TraceJson::array()),
        ReplayFormat::Yaml => Box::new(TraceYaml {
            json: TraceJson::array(),
            buffer: Vec::new(),
        }),
        ReplayFormat::Ndjson => Box::new(TraceJson::lines()),
    }
}

/// `replay -o table`: a heading and a table per machine.
struct TraceText {
    term: Terminal,
}

impl TraceRenderer for TraceText {
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "rules {} (times in UTC)", escape::text(rules))
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        text::render(&view::replay::doc(trace), &self.term, out)
    }

    fn end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// `replay -o csv`: every step of every machine, the machine first.
struct TraceCsv {
    /// Whether the header is written already (or not wanted).
    header: bool,
}

impl TraceRenderer for TraceCsv {
    fn begin(&mut self, _rules: &str, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        let mut columns = vec![doc::Column::new("Machine")];
        columns.extend(view::replay::step_columns());
        let mut rows = csv::CsvRows::continuing(&mut *out, &columns, !self.header)?;
        self.header = true;
        for step in &trace.steps {
            let mut cells = vec![doc::machine(trace.machine.clone())];
            cells.extend(view::replay::step_cells(step));
            rows.row(&cells)?;
        }
        rows.finish()
    }

    fn end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// `replay -o yaml`: the JSON array, written as YAML once it is whole (YAML's block
/// sequence cannot be streamed from JSON's without it).
struct TraceYaml {
    json: TraceJson,
    buffer: Vec<u8>,
}

impl TraceRenderer for TraceYaml {
    fn begin(&mut self, rules: &str, _out: &mut dyn Write) -> io::Result<()> {
        self.json.begin(rules, &mut self.buffer)
    }

    fn machine(&mut self, trace: &Trace, _out: &mut dyn Write) -> io::Result<()> {
        self.json.machine(trace, &mut self.buffer)
    }

    fn end(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.json.end(&mut self.buffer)?;
        let buffer = std::mem::take(&mut self.buffer);
        super::yaml::from_json(out, |w| w.write_all(&buffer))
    }
}
