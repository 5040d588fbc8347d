//! `check -o junit`: JUnit XML, one test case per pair and a failure for each violation, as
//! Jenkins and GitLab render it.

use std::io::{self, Write};

use super::reports::CheckReport;
use super::sentence;
use crate::gate::BaselineState;

/// Escapes text for XML attributes and content; control characters as every text output
/// shows them (`\u{9b}`), since XML cannot carry most of them and a terminal must not.
fn xml(text: &str) -> String {
    let text = super::escape::text(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 has no way to write other control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Writes the JUnit report.
pub fn check(report: &CheckReport, out: &mut dyn Write) -> io::Result<()> {
    let pairs = &report.result.pairs;
    let nothing = report.result.nothing_read;
    let empty = nothing.is_some();
    let failures = pairs.iter().filter(|p| p.violation.is_some()).count() + usize::from(empty);
    let tests = pairs.len() + usize::from(empty);
    let suite = format!("fsmlog check ({})", report.rules);
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        out,
        r#"<testsuites name="fsmlog" tests="{tests}" failures="{failures}" errors="0">"#
    )?;
    writeln!(
        out,
        r#"  <testsuite name="{}" tests="{tests}" failures="{failures}" errors="0" skipped="0">"#,
        xml(&suite)
    )?;
    if let Some(nothing) = nothing {
        writeln!(
            out,
            r#"    <testcase classname="fsmlog.input" name="machines read"><failure type="nothing-read" message="{}, so there is nothing to pass on">check the paths, or pass --allow-empty</failure></testcase>"#,
            sentence::nothing(nothing)
        )?;
    }
    for pair in pairs {
        let name = format!("{} / {}", pair.state.name(), pair.event.name());
        let class = match pair.baseline {
            BaselineState::New => "fsmlog.unexpected.new",
            BaselineState::Unchanged => "fsmlog.unexpected.accepted",
            BaselineState::Absent => "fsmlog.unexpected.absent",
        };
        match &pair.violation {
            None => writeln!(
                out,
                r#"    <testcase classname="{class}" name="{}"><system-out>{}</system-out></testcase>"#,
                xml(&name),
                xml(&sentence::pair(pair))
            )?,
            Some(violation) => {
                let examples = pair
                    .tally
                    .as_ref()
                    .map(|t| t.examples.iter().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default();
                writeln!(
                    out,
                    r#"    <testcase classname="{class}" name="{}">"#,
                    xml(&name)
                )?;
                writeln!(
                    out,
                    r#"      <failure type="{}" message="{}">example machines: {}</failure>"#,
                    violation.id(),
                    xml(&sentence::pair(pair)),
                    xml(&examples)
                )?;
                writeln!(out, "    </testcase>")?;
            }
        }
    }
    writeln!(out, "  </testsuite>")?;
    writeln!(out, "</testsuites>")
}

#[cfg(test)]
mod tests {
    use super::xml;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(xml("a<b>&\"'\u{1}"), "a&lt;b&gt;&amp;&quot;&apos;\\u{1}");
    }
}
