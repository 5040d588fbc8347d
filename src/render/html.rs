//! One self-contained HTML page of a report, to attach to a ticket or publish from CI: the
//! totals, the transition graph (inline SVG), the pairs with sparklines, flagged machines and
//! disagreements. No network request (no external script, style or font), readable without
//! JavaScript (a few lines of inline script only sort tables), printable. Every string from
//! input is HTML-escaped.

use crate::event::format_time;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::doc::{Align, Block, Doc, Piece, Tone, Value};
use super::escape;
use crate::window::duration;

/// A sparkline as an inline SVG bar chart, one bar per period.
fn spark(counts: &[u64]) -> String {
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    // At most 160 px wide, however many periods.
    let bar = (160.0 / counts.len().max(1) as f64 - 1.0).clamp(1.5, 8.0);
    let width = (counts.len() as f64 * (bar + 1.0)).max(bar);
    let mut s = format!(
        r#"<svg class="spark" width="{width:.0}" height="22" viewBox="0 0 {width:.0} 22" role="img" aria-label="{}">"#,
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

fn text(piece: &Piece) -> String {
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
        Value::Machines { ids, total } => {
            let mut shown: Vec<String> = ids
                .iter()
                .map(|id| format!("<code>{}</code>", escape::html(id)))
                .collect();
            let rest = total.saturating_sub(ids.len() as u64);
            if rest > 0 {
                shown.push(format!("+{rest}"));
            }
            shown.join(",<br>")
        }
        Value::Count(n) => n.to_string(),
        Value::Time(t) => {
            let full = format_time(*t);
            format!(
                r#"<time datetime="{full}">{}</time>"#,
                t.format("%Y-%m-%d %H:%M:%S")
            )
        }
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
    let mut s = String::new();
    for block in &doc.blocks {
        match block {
            Block::Title(_) => {}
            Block::Heading(pieces) => {
                let _ = writeln!(
                    s,
                    "<h2>{}</h2>",
                    pieces.iter().map(text).collect::<String>()
                );
            }
            Block::Line(pieces) => {
                let _ = writeln!(s, "<p>{}</p>", pieces.iter().map(text).collect::<String>());
            }
            // One paragraph: a browser may wrap it, but a copy of it is one line.
            Block::Command { command, comment } => {
                let line = Block::command_line(command, comment);
                let _ = writeln!(s, "<p>{}</p>", line.iter().map(text).collect::<String>());
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
                        let _ = write!(s, "<td{class}{key}>{}</td>", text(piece));
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
time { white-space: normal; }
.bad { color: #c62828; font-weight: bold; }
.warn { color: #a66a00; }
.faint { color: #7a8896; }
.spark rect { fill: #c62828; }
.graph svg { width: 100%; max-width: 960px; height: auto; display: block; margin: 0 auto; border: 1px solid #d5dde6; }
footer { margin-top: 3rem; font-size: 0.8rem; color: #7a8896; }
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

/// Writes the page: a title, the document, and the graph after the first table.
pub fn page(title: &str, doc: &Doc, graph_svg: &str, out: &mut dyn Write) -> io::Result<()> {
    let body = body(doc);
    // The graph after the pairs' table: what happened, then where.
    let split = body
        .find("</table></div>")
        .map_or(body.len(), |i| i + "</table></div>\n".len());
    let (before, after) = body.split_at(split);
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
{before}<h2>Where in the lifecycle</h2>
<div class="graph">
{graph_svg}</div>
{after}<footer>Written by fsmlog {version}. Times in UTC. A self-contained page: no script, style or font is fetched.</footer>
<script>{SCRIPT}</script>
</body>
</html>
"#,
        title = escape::html(title),
        version = env!("CARGO_PKG_VERSION"),
    )
}
