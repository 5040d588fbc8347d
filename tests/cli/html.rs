//! The HTML page, as Chromium shows it: input as text, long words broken, nothing off the
//! viewport.
use std::process::Command as Process;

use serde_json::Value;

use super::*;

// The HTML page in a browser.

#[test]
fn the_html_page_loads_in_chromium_with_input_as_text() {
    let Some(browser) = chromium() else {
        have("Chromium", false);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let output = fsmlog()
        .args(["report", "-o", "html"])
        .arg(testdata("fleet-v0.42.2/list-json"))
        .arg(testdata("html"))
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "the damaged row is an input error"
    );
    std::fs::write(&page, &output.stdout).unwrap();
    let html = String::from_utf8(output.stdout).unwrap();
    // The precedents are links to follow, not to fetch.
    assert!(
        html.contains(
            r#"<a href="https://github.com/metal-stack/metal-api/issues/464">metal-api#464</a>"#
        ),
        "the precedent is a link"
    );
    for external in ["http://", "https://", "src=\"", "<link"] {
        let found = html
            .replace("http://www.w3.org/2000/svg", "")
            .replace(r#"<a href="https://github.com/metal-stack/metal-api/"#, "");
        assert!(
            !found.contains(external),
            "the page fetches nothing: {external}"
        );
    }
    let flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ];
    let profile = dir.path().join("profile");
    let url = format!("file://{}", page.display());
    let dom = Process::new(browser)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=3000", "--dump-dom", &url])
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout).to_string();
    // A row per pair in the first table.
    let (_, report, _) = run_json(&[
        "report",
        "-o",
        "json",
        arg(&testdata("fleet-v0.42.2/list-json")),
        arg(&testdata("html")),
    ]);
    let first_table = &dom[dom.find("<tbody>").unwrap()..dom.find("</tbody>").unwrap()];
    assert_eq!(
        first_table.matches("<tr>").count(),
        report["unexpected"].as_array().unwrap().len()
    );
    // The hostile strings are text: escaped in the DOM, never elements.
    assert!(
        dom.contains("&lt;script&gt;alert('message')&lt;/script&gt;"),
        "{dom}"
    );
    assert!(dom.contains("&lt;script&gt;alert('id')&lt;/script&gt;"));
    assert!(dom.contains("&lt;img src=x onerror=alert('event')&gt;"));
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's own sorting script"
    );
    assert!(!dom.contains("<img"));
    // A screenshot to look at.
    let shot = tools().join("report-page.png");
    std::fs::create_dir_all(tools()).unwrap();
    let status = Process::new(browser)
        .args(flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--window-size=1400,1800"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(status.status.success());
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);
}

#[test]
fn the_html_page_breaks_long_words_instead_of_the_viewport() {
    let Some(browser) = chromium() else {
        have("Chromium", false);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_, html, _) = stdout_of(&[
        "report",
        "-o",
        "html",
        arg(&testdata("hostile-names/long-words.json")),
    ]);
    // The page with a probe after it that writes into the DOM whether any table overflows.
    let probe = r#"<script>document.body.setAttribute("data-overflow", [].some.call(document.querySelectorAll(".scroll"), function (d) { return d.scrollWidth > d.clientWidth; }) || document.documentElement.scrollWidth > window.innerWidth);</script>"#;
    let page = dir.path().join("page.html");
    std::fs::write(&page, format!("{html}{probe}")).unwrap();
    let dom = Process::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1000,900",
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains(r#"data-overflow="false""#),
        "a table overflows: {dom}"
    );
    // Our own words never break inside: only text from input may.
    assert!(html.contains(r#"<span class="input">"#));
    assert!(html.contains(".input { overflow-wrap: anywhere; }"));
}

/// The page at `width` px in Chromium, with a probe that writes into the DOM what it
/// measured: the pairs table's Verdict column against the viewport, sideways scrolling, each
/// example link and where it leads, the suggested commands and any element from input.
fn measured_at(browser: &str, page: &std::path::Path, width: u32) -> Value {
    let probe = r##"<script>window.addEventListener("load", function () {
  var view = document.documentElement.clientWidth;
  var table = document.querySelector("table");
  var verdict = [].filter.call(table.querySelectorAll("th"), function (th) { return th.textContent === "Verdict"; })[0];
  var scrolls = [].some.call(document.querySelectorAll(".scroll"), function (d) { return d.scrollWidth > d.clientWidth; });
  var links = [].map.call(table.querySelectorAll("a.id"), function (a) {
    var target = document.getElementById(a.getAttribute("href").slice(1));
    return { title: a.getAttribute("title"), text: a.textContent, target: target && target.textContent };
  });
  var unlinked = table.querySelectorAll("code.id").length;
  var commands = [].map.call(document.querySelectorAll("pre.commands > code"), function (c) { return c.textContent; });
  var prose = [].filter.call(document.querySelectorAll("p"), function (p) { return p.textContent.indexOf("metalctl machine ") >= 0 && p.textContent.indexOf("#") >= 0; }).length;
  document.body.setAttribute("data-probe", JSON.stringify({
    view: view, verdict_right: verdict.getBoundingClientRect().right, sideways: scrolls || document.documentElement.scrollWidth > view,
    links: links, unlinked: unlinked, commands: commands, commands_in_prose: prose,
    injected: document.querySelectorAll("i, img").length, scripts: document.querySelectorAll("script").length
  }));
});</script>"##;
    let dir = tempfile::tempdir().unwrap();
    let probed = dir.path().join("probed.html");
    let html = std::fs::read_to_string(page).unwrap();
    std::fs::write(&probed, format!("{html}{probe}")).unwrap();
    let dom = Process::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
            "--dump-dom",
        ])
        .arg(format!("--window-size={width},1200"))
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", probed.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    let at = dom
        .find("data-probe=\"")
        .unwrap_or_else(|| panic!("no probe: {dom}"))
        + "data-probe=\"".len();
    let json = &dom[at..at + dom[at..].find('"').unwrap()];
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

#[test]
fn at_800_px_the_verdict_shows_and_each_example_links_to_its_note() {
    let Some(browser) = chromium() else {
        have("Chromium", false);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A machine whose id would end an attribute, open an element and name another anchor.
    // It sorts first, so that it is among a pair's examples.
    let hostile = r#""><i>z</i> 'y #a%41"#;
    let machine = serde_json::json!({"id": hostile, "allocation": null, "events": {"log": [
        {"time": "2025-09-10T10:05:00Z", "event": "PXE Booting", "message": "[unexpectedly received in state waiting]"},
        {"time": "2025-09-10T10:00:00Z", "event": "Waiting", "message": "waiting for allocation"}
    ], "last_event_time": "2025-09-10T10:05:00Z", "last_error_event": null, "crash_loop": false, "failed_machine_reclaim": false}});
    let odd = write(dir.path(), "odd.json", &machine.to_string());
    for inputs in [
        vec![testdata("fleet-v0.42.2/list-json"), testdata("html")],
        vec![testdata("fleet-v0.19.0/list-json"), odd],
    ] {
        let page = dir.path().join("report.html");
        let output = fsmlog()
            .args(["report", "-o", "html"])
            .args(&inputs)
            .output()
            .unwrap();
        std::fs::write(&page, &output.stdout).unwrap();
        for width in [800, 1280] {
            let seen = measured_at(browser, &page, width);
            let shown = format!("{inputs:?} at {width} px: {seen}");
            assert_eq!(seen["sideways"], false, "{shown}");
            assert!(
                seen["verdict_right"].as_f64().unwrap() <= seen["view"].as_f64().unwrap(),
                "{shown}"
            );
            // Every example is a link to the note that names it in full; a UUID is shown
            // shortened to at least 8 characters, any other id whole.
            let links = seen["links"].as_array().unwrap();
            assert!(links.len() >= 4, "{shown}");
            assert_eq!(seen["unlinked"], 0, "{shown}");
            for link in links {
                let (title, text) = (
                    link["title"].as_str().unwrap(),
                    link["text"].as_str().unwrap(),
                );
                assert_eq!(link["target"], title, "{shown}");
                assert!(title.starts_with(text), "{shown}");
                if title.len() == 36 {
                    assert!(text.len() >= 8 && text.len() < 36, "{shown}");
                } else {
                    assert_eq!(text, title, "{shown}");
                }
            }
            // The commands are code to copy, one block per verdict, none left in prose.
            let commands = seen["commands"].as_array().unwrap();
            assert!(!commands.is_empty(), "{shown}");
            for block in commands {
                for line in block.as_str().unwrap().lines() {
                    assert!(line.starts_with("metalctl machine "), "{shown}");
                    assert!(line.contains("   # "), "{shown}");
                }
            }
            assert_eq!(seen["commands_in_prose"], 0, "{shown}");
            assert_eq!(seen["injected"], 0, "{shown}");
            assert_eq!(
                seen["scripts"], 2,
                "the page's sorting and the probe: {shown}"
            );
        }
        let odd_one = inputs[1].ends_with("odd.json");
        let links = measured_at(browser, &page, 800)["links"].clone();
        assert_eq!(
            links
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["title"] == hostile),
            odd_one,
            "the hostile id is an example, its whole id in the title: {links}"
        );
    }
}

// `explain -o html`: the same page, over explain's document.

/// The text of a piece of HTML: its tags left out, its entities read.
fn text_of(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The cells of a table body's rows: each cell's text, and its sort key where it has one.
fn rows_of(tbody: &str) -> Vec<Vec<(String, Option<String>)>> {
    tbody
        .split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let key = cell
                        .split_once("data-key=\"")
                        .map(|(_, rest)| rest[..rest.find('"').unwrap()].to_string())
                        .filter(|_| cell.find("data-key") < cell.find('>'));
                    let body = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
                    (text_of(body), key)
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_explain_page_holds_what_explain_json_says() {
    for fleet in ["fleet-v0.42.2/list-json", "fleet-v0.19.0/list-json"] {
        let path = testdata(fleet);
        let (code, json, _) = run_json(&["explain", "-o", "json", arg(&path)]);
        assert_eq!(code, 0);
        let (code, html, stderr) = stdout_of(&["explain", "-o", "html", arg(&path)]);
        assert_eq!(code, 0, "{stderr}");
        assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
        assert!(html.contains("<title>fsmlog explain · rules metal-api-v0."));
        let pairs = json["pairs"].as_array().unwrap();
        assert!(!pairs.is_empty(), "{fleet}");
        // The overview: a row per pair, in the same order, with the same numbers.
        let tbody = &html[html.find("<tbody>").unwrap()..html.find("</tbody>").unwrap()];
        let rows = rows_of(tbody);
        assert_eq!(rows.len(), pairs.len(), "{fleet}");
        for (row, pair) in rows.iter().zip(pairs) {
            let cell = |i: usize| row[i].0.as_str();
            assert_eq!(cell(0), pair["state"], "{fleet}");
            assert_eq!(cell(1), pair["event"], "{fleet}");
            assert_eq!(cell(2), pair["count"].to_string(), "{fleet}");
            assert_eq!(cell(3), pair["machines"].to_string(), "{fleet}");
            // The gaps, to the millisecond, in the cells' sort keys.
            let gaps = &pair["gap_seconds"];
            for (i, which) in [(4, "median"), (5, "p90")] {
                let want = gaps[which]
                    .as_f64()
                    .map(|s| format!("{:020.3}", s * 1000.0));
                assert_eq!(row[i].1, want, "{fleet} {which}");
            }
        }
        // Each pair's note: its occurrences, its span, its verdict, its neighbours, its days,
        // where it happened and the machines to look at.
        let notes = &html[html.find("</tbody>").unwrap()..];
        let headings: Vec<&str> = notes.split("<h2>").skip(1).collect();
        assert_eq!(headings.len(), pairs.len(), "{fleet}");
        for (note, pair) in headings.iter().zip(pairs) {
            let text = text_of(note);
            let (state, event) = (
                pair["state"].as_str().unwrap(),
                pair["event"].as_str().unwrap(),
            );
            let (count, machines) = (
                pair["count"].as_u64().unwrap(),
                pair["machines"].as_u64().unwrap(),
            );
            let heading = format!(
                "{event} in {state}: {count} occurrence{} on {machines} machine{}, ",
                if count == 1 { "" } else { "s" },
                if machines == 1 { "" } else { "s" }
            );
            assert!(text.starts_with(&heading), "{fleet}: {heading} / {text}");
            for seen in ["first_seen", "last_seen"] {
                let at = format!("<time datetime=\"{}\">", pair[seen].as_str().unwrap());
                assert!(note.contains(&at), "{fleet}: {at}");
            }
            if let Some(evidence) = pair["verdict"]["evidence"].as_array() {
                assert!(!evidence.is_empty());
                for line in evidence {
                    assert!(text.contains(line.as_str().unwrap()), "{fleet}: {line}");
                }
            }
            for side in ["before", "after"] {
                for sequence in pair[side].as_array().unwrap() {
                    let events: Vec<&str> = sequence["events"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|e| e.as_str().unwrap())
                        .collect();
                    let shown = format!(
                        "{:.0}%  {:>4}×  {}",
                        sequence["share"].as_f64().unwrap() * 100.0,
                        sequence["count"].as_u64().unwrap(),
                        events.join(" › ")
                    );
                    assert!(text.contains(&shown), "{fleet}: {shown}");
                }
            }
            // The days' bars add up to the days' counts.
            let by_day: u64 = pair["by_day"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["count"].as_u64().unwrap())
                .sum();
            let bars = note.split("by day: ").nth(1).unwrap();
            let label = bars.split("aria-label=\"").nth(1).unwrap();
            let label = &label[..label.find('"').unwrap()];
            let summed: u64 = label.split(' ').map(|n| n.parse::<u64>().unwrap()).sum();
            assert_eq!(summed, by_day, "{fleet}");
            // Where: how many values of each dimension, the three commonest by name.
            for (dimension, values) in pair["where"].as_object().into_iter().flatten() {
                let values = values.as_object().unwrap();
                let plural = if values.len() == 1 { "" } else { "s" };
                let counted = format!("{} {dimension}{plural} (", values.len());
                assert!(text.contains(&counted), "{fleet}: {counted}");
                let named = values.keys().filter(|v| text.contains(v.as_str())).count();
                assert_eq!(named, values.len().min(3), "{fleet}: {dimension}");
            }
            for example in pair["examples"].as_array().unwrap() {
                let look = format!(
                    "metalctl machine logs {}   # first at ",
                    example["machine"].as_str().unwrap()
                );
                assert!(text.contains(&look), "{fleet}: {look}");
                let at = format!("<time datetime=\"{}\">", example["time"].as_str().unwrap());
                assert!(note.contains(&at), "{fleet}: {at}");
            }
        }
    }
}

#[test]
fn the_explain_page_shows_hostile_input_as_text() {
    let path = testdata("explain-page/hostile.json");
    let (code, html, stderr) = stdout_of(&["explain", "-o", "html", arg(&path)]);
    assert_eq!(code, 0, "{stderr}");
    // The ids, the partition, the racks and the size are input: never markup, quotes never
    // end an attribute, and characters that reorder text are shown as escapes.
    for markup in ["<script>alert", "<img", "<b>", "<i>", "\"'"] {
        assert!(!html.contains(markup), "{markup}");
    }
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the sorting script"
    );
    for hidden in ['\u{202e}', '\u{2066}', '\u{2069}'] {
        assert!(!html.contains(hidden), "{hidden:?}");
    }
    for shown in [
        "&lt;script&gt;alert(&#39;\\&#39;&#39;id&#39;\\&#39;&#39;)&lt;/script&gt;&quot;\\u{202e}",
        "rack\\u{202e}01&lt;img src=x onerror=alert(1)&gt;",
        "&lt;b&gt;fra&lt;/b&gt;&quot;&#39;&amp;amp;",
        "c1-&lt;i&gt;large&lt;/i&gt;",
        "m-\\u{2066}",
    ] {
        assert!(html.contains(shown), "{shown}");
    }
    let Some(browser) = chromium() else {
        have("Chromium", false);
        return;
    };
    // In a browser: no element from input, and nothing off the page at 800 px.
    let dir = tempfile::tempdir().unwrap();
    let probe = r#"<script>window.addEventListener("load", function () { document.body.setAttribute("data-probe", JSON.stringify({ injected: document.querySelectorAll("b, i, img").length, scripts: document.querySelectorAll("script").length, sideways: document.documentElement.scrollWidth > document.documentElement.clientWidth, text: document.body.textContent.indexOf("<b>fra</b>\"'&amp;") >= 0 })); });</script>"#;
    let page = write(dir.path(), "explain.html", &format!("{html}{probe}"));
    for width in [800, 1280] {
        let dom = Process::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--virtual-time-budget=3000",
                "--dump-dom",
            ])
            .arg(format!("--window-size={width},1200"))
            .arg(format!(
                "--user-data-dir={}",
                dir.path().join("profile").display()
            ))
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap();
        let dom = String::from_utf8_lossy(&dom.stdout);
        let probed = dom
            .split("data-probe=\"")
            .nth(1)
            .unwrap_or_else(|| panic!("{dom}"));
        let probed = probed[..probed.find('"').unwrap()].replace("&quot;", "\"");
        assert_eq!(
            probed, r#"{"injected":0,"scripts":2,"sideways":false,"text":true}"#,
            "at {width} px"
        );
    }
}

#[test]
fn explain_names_its_html_output() {
    let (code, help, _) = stdout_of(&["explain", "--help"]);
    assert_eq!(code, 0);
    assert!(
        help.contains("html") && help.contains("One self-contained page, as report's"),
        "{help}"
    );
}
