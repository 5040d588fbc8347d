//! `fsmlog watch`'s log lines: one per poll and per fault, as text (`fsmlog: watch: TIME: …`,
//! what came from elsewhere escaped as every text output escapes it) or as one JSON object a
//! line (`--log-format json`) with the same fields named, in which every character that
//! hides or reorders text is a JSON `\uXXXX` escape: a program reads the text as it was, a
//! terminal showing `kubectl logs` shows no raw bidirectional control.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

use super::escape;
use crate::hidden::{has_hidden, is_hidden};

/// How bad what a line tells is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

impl Level {
    fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// One log line: what happened (`event`), the sentence for people, and fields for programs.
pub struct LogLine<'a> {
    pub time: DateTime<Utc>,
    pub level: Level,
    pub event: &'a str,
    pub message: &'a str,
    pub fields: Vec<(&'a str, Value)>,
}

impl LogLine<'_> {
    /// The line as text (the sentence alone) or JSON (every field), without its line feed.
    pub fn render(&self, json: bool) -> String {
        let time = self.time.to_rfc3339_opts(SecondsFormat::Millis, true);
        if !json {
            let level = match self.level {
                Level::Info => String::new(),
                other => format!("{}: ", other.name()),
            };
            return format!(
                "fsmlog: watch: {time}: {level}{}",
                escape::text(self.message)
            );
        }
        let mut object = Map::new();
        object.insert("time".into(), Value::from(time));
        object.insert("level".into(), Value::from(self.level.name()));
        object.insert("event".into(), Value::from(self.event));
        object.insert("message".into(), Value::from(self.message));
        for (name, value) in &self.fields {
            object.insert((*name).into(), value.clone());
        }
        json_shown(Value::Object(object).to_string())
    }
}

/// A JSON text with each character that hides or reorders text written as `\uXXXX` (a pair
/// of them past U+FFFF). Outside its strings a JSON text holds only ASCII that shows, so each
/// such character is inside a string, where the escape means the same.
fn json_shown(json: String) -> String {
    if !has_hidden(&json) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_hidden(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(message: &str) -> LogLine<'_> {
        LogLine {
            time: DateTime::parse_from_rfc3339("2026-12-03T10:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            level: Level::Error,
            event: "poll",
            message,
            fields: vec![
                ("result", Value::from("error")),
                ("seconds", Value::from(0.5)),
            ],
        }
    }

    #[test]
    fn a_line_is_text_or_one_json_object() {
        let l = line("the poll failed: 500 \u{1b}[31m");
        assert_eq!(
            l.render(false),
            "fsmlog: watch: 2026-12-03T10:00:00.000Z: error: the poll failed: 500 \\u{1b}[31m"
        );
        let json: Value = serde_json::from_str(&l.render(true)).unwrap();
        assert_eq!(json["level"], "error");
        assert_eq!(json["event"], "poll");
        assert_eq!(json["result"], "error");
        assert_eq!(json["seconds"], 0.5);
        assert_eq!(json["message"], "the poll failed: 500 \u{1b}[31m");
        assert!(!l.render(true).contains('\n'));
    }

    #[test]
    fn a_json_line_holds_no_character_that_hides_or_reorders_text() {
        let hostile = "m-1\u{202e}txt.exe\u{2066}\u{7f}\u{9b}31m\u{200b}\u{e0041}\u{1b}[2J";
        let mut l = line(hostile);
        l.fields.push(("machine", Value::from(hostile)));
        let text = l.render(true);
        assert!(!text.chars().any(crate::hidden::is_hidden), "{text:?}");
        assert!(
            text.contains("\\u202e") && text.contains("\\udb40\\udc41"),
            "{text}"
        );
        let json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["message"], hostile);
        assert_eq!(json["machine"], hostile);
    }
}
