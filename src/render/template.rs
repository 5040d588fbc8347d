//! `-o template`: metalctl's `--template`, Go's text/template (the gotmpl crate) executed over
//! each row of a command's JSON document, as metal-lib's template printer executes it over
//! each element of a list: a row whose output is empty is left out, every other is followed
//! by a newline. Strings from input reach the template escaped as the tables escape them, so
//! that no row can put a control character on the terminal.

use std::io::{self, Write};
use std::sync::Arc;

use gotmpl::{Template, Value};

use super::escape;

/// metal-lib names its template `t`; Go's error messages say so (`template: t:1: …`).
const NAME: &str = "t";

/// A `--template`, parsed once, executed per row.
pub struct RowTemplate {
    source: String,
    parsed: Template,
}

impl RowTemplate {
    /// Parses a template; the error is Go's message (`template: t:1: unexpected …`).
    pub fn parse(source: &str) -> Result<RowTemplate, String> {
        let parsed = Template::new(NAME)
            .parse(source)
            .map_err(|err| err.to_string())?;
        Ok(RowTemplate {
            source: source.to_string(),
            parsed,
        })
    }

    /// Executes the template over each row of a JSON document: the elements of the array
    /// under `rows`, or the whole document where `rows` is `None`.
    pub fn document(
        &self,
        rows: Option<&str>,
        write_json: impl FnOnce(&mut dyn Write) -> io::Result<()>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut json = Vec::new();
        write_json(&mut json)?;
        let doc: serde_json::Value = serde_json::from_slice(&json)?;
        // A document that is a list (`issues list`) is its rows, as metal-lib's printer
        // takes a list; any other without a row key is one row.
        let Some(key) = rows else {
            return match &doc {
                serde_json::Value::Array(rows) => {
                    rows.iter().try_for_each(|row| self.row(row, out))
                }
                other => self.row(other, out),
            };
        };
        match doc.get(key) {
            Some(serde_json::Value::Array(rows)) => {
                rows.iter().try_for_each(|row| self.row(row, out))
            }
            _ => Ok(()),
        }
    }

    /// Executes the template over one row; its output and a newline, unless it is empty.
    pub fn row(&self, row: &serde_json::Value, out: &mut dyn Write) -> io::Result<()> {
        let text = self.parsed.execute_to_string(&value(row)).map_err(|err| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("--template: {err}"))
        })?;
        if text.is_empty() {
            return Ok(());
        }
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")
    }
}

impl std::fmt::Debug for RowTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RowTemplate").field(&self.source).finish()
    }
}

impl PartialEq for RowTemplate {
    fn eq(&self, other: &RowTemplate) -> bool {
        self.source == other.source
    }
}

impl Eq for RowTemplate {}

/// A JSON value as the template sees it: strings (and keys, which may be names from input)
/// escaped as a table shows them; whole numbers as integers, so that `{{ printf "%d" .count }}`
/// and `{{ eq .count 3 }}` work (Go's metalctl reads every number as a float64).
fn value(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::Uint(u)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        serde_json::Value::String(s) => Value::String(Arc::from(escape::text(s).as_ref())),
        serde_json::Value::Array(items) => Value::from(items.iter().map(value).collect::<Vec<_>>()),
        serde_json::Value::Object(map) => Value::from(
            map.iter()
                .map(|(k, v)| (escape::text(k).into_owned(), value(v)))
                .collect::<std::collections::BTreeMap<String, Value>>(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows(template: &str, doc: serde_json::Value) -> String {
        let t = RowTemplate::parse(template).unwrap();
        let mut out = Vec::new();
        t.document(
            Some("rows"),
            |w| serde_json::to_writer(w, &doc).map_err(io::Error::from),
            &mut out,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_row_is_followed_by_a_newline_and_empty_rows_are_left_out() {
        let doc = json!({"rows": [{"id": "a", "n": 1}, {"id": "test", "n": 2}]});
        assert_eq!(rows("{{ .id }}", doc.clone()), "a\ntest\n");
        // metal-lib's own test: a row whose output is empty prints no line.
        assert_eq!(
            rows(r#"{{ if eq .id "test" }}{{ .id }}{{ end }}"#, doc.clone()),
            "test\n"
        );
        assert_eq!(
            rows(r#"{{ printf "%s=%d" .id .n }}"#, doc.clone()),
            "a=1\ntest=2\n"
        );
        // As Go prints a missing key of a map.
        assert_eq!(rows("{{ .nope }}", doc), "<no value>\n<no value>\n");
    }

    #[test]
    fn range_len_and_nested_fields_work_as_in_go() {
        let doc = json!({"rows": [{"m": {"ids": ["x", "y"]}, "share": 0.5, "whole": 1.0}]});
        assert_eq!(
            rows(
                "{{ len .m.ids }}:{{ range $i, $id := .m.ids }}{{ if $i }},{{ end }}{{ $id }}{{ end }} {{ .share }} {{ .whole }}",
                doc
            ),
            "2:x,y 0.5 1\n"
        );
    }

    #[test]
    fn strings_from_input_reach_the_template_escaped() {
        let doc = json!({"rows": [{"id": "m-1\u{1b}[2J\u{202e}", "where": {"r\u{7}": 1}}]});
        let out = rows(
            "{{ .id }} {{ range $k, $v := .where }}{{ $k }}{{ end }}",
            doc,
        );
        assert_eq!(out, "m-1\\u{1b}[2J\\u{202e} r\\u{7}\n");
    }

    #[test]
    fn a_template_that_does_not_parse_or_run_is_an_error() {
        let err = RowTemplate::parse("{{ .id ").unwrap_err();
        assert!(err.contains("t:1"), "{err}");
        let t = RowTemplate::parse("{{ index .id 5 }}").unwrap();
        let err = t.row(&json!({"id": "ab"}), &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(err.to_string().starts_with("--template: "), "{err}");
    }
}
