//! One self-contained HTML page of a report, to attach to a ticket or publish from CI: the
//! totals, the transition graph (inline SVG), the pairs with sparklines, flagged machines and
//! disagreements. No network request (no external script, style or font), readable without
//! JavaScript (a few lines of inline script only sort tables), printable. Every string from
//! input is HTML-escaped.

use crate::event::{Pair, format_time};
use std::fmt::Write as _;
use std::io::{self, Write};

use std::collections::BTreeSet;

use super::doc::{Align, Block, Doc, Piece, Shortener, Tone, Value};
use super::escape;
use crate::window::duration;

/// A sparkline as an inline SVG bar chart, one bar per period.
fn spark(counts: &[u64]) -> String {
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    // At most 160 px wide, however many periods.
    let bar = (160.0 / counts.len().max(1) as f64 - 1.0).clamp(1.5, 8.0);
    let width = (counts.len() as f64 * (bar + 1.0)).max(bar);
    let mut s = format!(
        r#"<svg class="spark" width="{width:.0}" height="22" viewBox="0 0 {width:.0} 22" preserveAspectRatio="none" role="img" aria-label="{}">"#,
        counts
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    );
    for (i, n) in counts.iter().enumerate() {
        let h = (*n as f64 / max * 20.0).max(1.0);
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="{bar:.1}" height="{h:.1}"><title>{n}</title></rect>"#,
            i as f64 * (bar + 1.0),
            22.0 - h
        );
    }
    s.push_str("</svg>");
    s
}

/// What the page knows while it writes the document: how ids are shortened, and where
/// each machine's examples anchor is (and whether it is placed yet).
struct Page<'d> {
    ids: Shortener,
    /// Ids the page says more of ([`Value::Example`]): the table's ids link there.
    anchors: BTreeSet<&'d str>,
    /// Anchors written so far: an id is an element's only once.
    placed: BTreeSet<String>,
}

/// An id as a fragment and an element id alike: letters, digits, `.`, `_` and `-` as they
/// are, every other byte `%XX`, so that an id from input can neither end the attribute nor
/// name another place, and the fragment matches without decoding.
fn anchor(id: &str) -> String {
    let mut out = String::from("machine-");
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-') {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

impl<'d> Page<'d> {
    fn of(doc: &'d Doc) -> Page<'d> {
        let mut anchors = BTreeSet::new();
        doc.blocks.iter().for_each(|block| {
            if let Block::Line(pieces) = block {
                for piece in pieces {
                    if let Value::Example(id) = &piece.value {
                        anchors.insert(id.as_str());
                    }
                }
            }
        });
        Page {
            ids: Shortener::new(doc.machine_ids()),
            anchors,
            placed: BTreeSet::new(),
        }
    }

    /// A machine of a table's examples: shortened (the whole id on hover), a link to where
    /// the page says more of it.
    fn example(&self, id: &str) -> String {
        let shown = self.ids.show(id);
        // A shortened UUID is one short word; a name a person chose may be long and breaks.
        let class = if shown.len() < id.len() {
            r#" class="short""#
        } else {
            ""
        };
        let (short, title) = (escape::html(shown), escape::html(id));
        if self.anchors.contains(id) {
            format!(
                r##"<a class="id" href="#{}" title="{title}"><code{class}>{short}</code></a>"##,
                anchor(id)
            )
        } else {
            let class = if shown.len() < id.len() { " short" } else { "" };
            format!(r#"<code class="id{class}" title="{title}">{short}</code>"#)
        }
    }

    fn text(&mut self, piece: &Piece) -> String {
        let inner = match &piece.value {
            Value::Label(t) => escape::html(t),
            // Text from input may be one long word: it breaks anywhere rather than push the
            // table past the page; our own words never do.
            Value::Input(t) => format!(r#"<span class="input">{}</span>"#, escape::html(t)),
            Value::Argument(word) => format!(
                r#"<span class="input">{}</span>"#,
                escape::html(&escape::shell_word(word))
            ),
            Value::Machine(id) => format!("<code>{}</code>", escape::html(id)),
            Value::Example(id) if self.placed.insert(id.clone()) => {
                format!(r#"<code id="{}">{}</code>"#, anchor(id), escape::html(id))
            }
            Value::Example(id) => format!("<code>{}</code>", escape::html(id)),
            Value::Machines { ids, total } => {
                let mut shown: Vec<String> = ids.iter().map(|id| self.example(id)).collect();
                let rest = total.saturating_sub(ids.len() as u64);
                if rest > 0 {
                    shown.push(format!("+{rest}"));
                }
                shown.join(",<br>")
            }
            Value::Count(n) => n.to_string(),
            // The date and the time each whole: a narrow column breaks between them only.
            Value::Time(t) => format!(
                r#"<time datetime="{}"><span>{}</span> <span>{}</span></time>"#,
                format_time(*t),
                t.format("%Y-%m-%d"),
                t.format("%H:%M:%S")
            ),
            Value::Share(share) => format!("{:.1}%", share * 100.0),
            Value::Seconds(s) => duration(*s),
            Value::Spark(counts) => spark(counts),
            Value::Link { text, url } => {
                format!(
                    r#"<a href="{}">{}</a>"#,
                    escape::html(url),
                    escape::html(text)
                )
            }
            Value::Empty => "—".to_string(),
            Value::Separator => " · ".to_string(),
        };
        match piece.tone {
            Tone::Plain => inner,
            Tone::Bad => format!(r#"<span class="bad">{inner}</span>"#),
            Tone::Warn => format!(r#"<span class="warn">{inner}</span>"#),
            Tone::Strong => format!("<strong>{inner}</strong>"),
            Tone::Faint => format!(r#"<span class="faint">{inner}</span>"#),
        }
    }

    fn line(&mut self, pieces: &[Piece]) -> String {
        pieces.iter().map(|p| self.text(p)).collect()
    }
}

/// A sort key for a cell, so that numbers and times sort as such.
fn sort_key(piece: &Piece) -> String {
    match &piece.value {
        Value::Count(n) => format!("{n:020}"),
        Value::Time(t) => t.format("%Y-%m-%dT%H:%M:%S%.9f").to_string(),
        Value::Share(s) | Value::Seconds(s) => format!("{:020.3}", s * 1000.0),
        Value::Spark(counts) => format!("{:020}", counts.iter().sum::<u64>()),
        _ => String::new(),
    }
}

/// The document's blocks as HTML.
pub fn body(doc: &Doc) -> String {
    let mut page = Page::of(doc);
    let mut s = String::new();
    let mut blocks = doc.blocks.iter().peekable();
    while let Some(block) = blocks.next() {
        match block {
            Block::Title(_) => {}
            Block::Heading(pieces) => {
                let _ = writeln!(s, "<h2>{}</h2>", page.line(pieces));
            }
            Block::Line(pieces) => {
                let _ = writeln!(s, "<p>{}</p>", page.line(pieces));
            }
            // Commands in a row are one block of code to copy: each one line with its
            // comment after `#`, so that a pasted block runs the commands and nothing else.
            Block::Command { .. } => {
                s.push_str(r#"<pre class="commands"><code>"#);
                let mut next = Some(block);
                let mut first = true;
                while let Some(Block::Command { command, comment }) = next {
                    if !first {
                        s.push('\n');
                    }
                    first = false;
                    let mut command = command.clone();
                    if let Some(Piece {
                        value: Value::Label(head),
                        ..
                    }) = command.first_mut()
                    {
                        *head = head.trim_start().to_string().into();
                    }
                    let line = page.line(&command);
                    let _ = write!(
                        s,
                        r#"{line}   <span class="faint"># {}</span>"#,
                        page.line(comment)
                    );
                    next = blocks.next_if(|b| matches!(b, Block::Command { .. }));
                }
                s.push_str("</code></pre>\n");
            }
            Block::Table(grid) if grid.rows.is_empty() => {
                s.push_str("<p class=\"faint\">none</p>\n")
            }
            Block::Table(grid) => {
                s.push_str("<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>");
                for column in &grid.columns {
                    let class = if column.align == Align::Right {
                        " class=\"num\""
                    } else {
                        ""
                    };
                    let _ = write!(s, "<th{class}>{}</th>", escape::html(&column.header));
                }
                s.push_str("</tr></thead>\n<tbody>\n");
                for row in &grid.rows {
                    s.push_str("<tr>");
                    for (piece, column) in row.iter().zip(&grid.columns) {
                        let class = if column.align == Align::Right {
                            " class=\"num\""
                        } else {
                            ""
                        };
                        let key = sort_key(piece);
                        let key = if key.is_empty() {
                            String::new()
                        } else {
                            format!(r#" data-key="{key}""#)
                        };
                        let _ = write!(s, "<td{class}{key}>{}</td>", page.text(piece));
                    }
                    s.push_str("</tr>\n");
                }
                s.push_str("</tbody>\n</table></div>\n");
            }
        }
    }
    s
}

const STYLE: &str = r#"
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 1400px; color: #1b2b3a; line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #d5dde6; padding-bottom: 0.2rem; }
.scroll { overflow-x: auto; }
p, li { overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 0.5rem 0 1rem; font-size: 0.88rem; }
th, td { border: 1px solid #d5dde6; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
.input { overflow-wrap: anywhere; }
th { background: #f3f6fb; cursor: pointer; user-select: none; }
td.num, th.num { text-align: right; }
code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.85rem; overflow-wrap: anywhere; }
time span, .short { white-space: nowrap; }
pre.commands { background: #f3f6fb; border: 1px solid #d5dde6; padding: 0.5rem 0.75rem; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.commands code { font-size: 0.8rem; }
.bad { color: #c62828; font-weight: bold; }
.warn { color: #a66a00; }
.faint { color: #7a8896; }
.spark rect { fill: #c62828; }
.graph svg { width: 100%; max-width: 960px; height: auto; display: block; margin: 0 auto; border: 1px solid #d5dde6; }
footer { margin-top: 3rem; font-size: 0.8rem; color: #7a8896; }
@media (max-width: 1100px) { body { margin: 1rem auto; padding: 0 0.4rem; } table { font-size: 0.75rem; } th, td { padding: 0.2rem 0.25rem; } code { font-size: 0.72rem; } .spark { width: 44px; } }
@media print { body { margin: 0; max-width: none; } th { cursor: auto; } h2 { break-after: avoid; } table, .graph { break-inside: avoid; } }
"#;

/// Sorts a table by the clicked column; without JavaScript the tables keep the report's order.
const SCRIPT: &str = r#"
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var down = th.getAttribute("data-down") !== "1";
      th.setAttribute("data-down", down ? "1" : "0");
      var key = function (row) { var cell = row.cells[column]; return cell.getAttribute("data-key") || cell.textContent; };
      rows.sort(function (a, b) { var x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (down ? -1 : 1); });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"#;

/// Writes the page: a title, the document, and the graph (where there is one) after the
/// first table.
pub fn page(
    title: &str,
    doc: &Doc,
    graph_svg: Option<&str>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut body = body(doc);
    if let Some(graph_svg) = graph_svg {
        // The graph after the pairs' table: what happened, then where.
        let split = body
            .find("</table></div>")
            .map_or(body.len(), |i| i + "</table></div>\n".len());
        body.insert_str(
            split,
            &format!("<h2>Where in the lifecycle</h2>\n<div class=\"graph\">\n{graph_svg}</div>\n"),
        );
    }
    write!(
        out,
        r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{title}</h1>
{body}<footer>Written by fsmlog {version}. Times in UTC. A self-contained page: no script, style or font is fetched.</footer>
<script>{SCRIPT}</script>
</body>
</html>
"#,
        title = escape::html(title),
        version = env!("CARGO_PKG_VERSION"),
    )
}

/// The query that names a pair to an explanation page: `pair=STATE/EVENT`, the state's and
/// the event's names with every byte but `A-Za-z0-9-._~` written `%XX` (a space is `%20`),
/// as `explain --pair` names a pair once decoded.
pub fn explain_query(pair: &Pair) -> String {
    fn encoded(name: &str, out: &mut String) {
        for byte in name.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                out.push(byte as char);
            } else {
                let _ = write!(out, "%{byte:02X}");
            }
        }
    }
    let mut query = String::from("pair=");
    encoded(pair.0.name(), &mut query);
    query.push('/');
    encoded(pair.1.name(), &mut query);
    query
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_named_to_its_explanation_percent_encoded() {
        use crate::event::{EventKind, State, parse_pair};
        let pair = (State::PhonedHome, EventKind::PxeBooting);
        let query = explain_query(&pair);
        assert_eq!(query, "pair=Phoned%20Home/PXE%20Booting");
        // Decoded, it is the pair as `explain --pair` reads it.
        let decoded = query["pair=".len()..].replace("%20", " ");
        assert_eq!(parse_pair(&decoded), Ok(pair));
    }

    #[test]
    fn an_anchor_keeps_a_uuid_and_encodes_everything_else() {
        assert_eq!(
            anchor("043afe87-2ce5-45b2-824a-4b04924cf73f"),
            "machine-043afe87-2ce5-45b2-824a-4b04924cf73f"
        );
        assert_eq!(
            anchor("\"><i> #a%41\u{202e}"),
            "machine-%22%3E%3Ci%3E%20%23a%2541%E2%80%AE"
        );
    }
}
