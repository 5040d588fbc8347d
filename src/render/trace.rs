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
        ReplayFormat::Csv => Box::new(TraceCsv { header: false }),
        ReplayFormat::Json => Box::new(TraceJson::array()),
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
