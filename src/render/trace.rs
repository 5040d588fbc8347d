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
        ReplayFormat::Template => Box::new(TraceTemplate {
            json: TraceJson::lines(),
            term,
        }),
    }
}

/// `replay -o table`: a heading and a table per machine.
struct TraceText {
    term: Terminal,
}

impl TraceRenderer for TraceText {
    fn begin(&mut self, rules: &str, out: &mut dyn Write) -> io::Result<()> {
        if !self.term.headers {
            return Ok(());
        }
        writeln!(out, "rules {} (times in UTC)", escape::text(rules))
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        if self.term.headers {
            return text::render(&view::replay::doc(trace), &self.term, out);
        }
        // Rows alone, as `--no-headers` prints every table: each step with its machine in
        // front, as the CSV has it (the whole id: no prefix is known to be unique yet).
        let mut grid = doc::Grid::new(view::replay::step_columns());
        grid.columns.insert(0, doc::Column::new("Machine"));
        for step in &trace.steps {
            let mut cells = vec![doc::input(trace.machine.clone())];
            cells.extend(view::replay::step_cells(step));
            grid.row(cells);
        }
        let mut rows = doc::Doc::default();
        rows.table(grid);
        text::render(&rows, &self.term, out)
    }

    fn end(&mut self, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }
}

/// `replay -o template`: each machine's JSON object (an `-o ndjson` line) through
/// `--template`, as it comes.
struct TraceTemplate {
    json: TraceJson,
    term: Terminal,
}

impl TraceRenderer for TraceTemplate {
    fn begin(&mut self, _rules: &str, _out: &mut dyn Write) -> io::Result<()> {
        Ok(())
    }

    fn machine(&mut self, trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
        let mut line = Vec::new();
        self.json.machine(trace, &mut line)?;
        let row: serde_json::Value = serde_json::from_slice(&line)?;
        match &self.term.template {
            Some(t) => t.row(&row, out),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "-o template needs --template",
            )),
        }
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
