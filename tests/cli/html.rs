//! The HTML page, as Chromium shows it: input as text, long words broken, nothing off the
//! viewport.
use std::process::Command as Process;

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
    let (_, html, _) = stdout_of(&["report", "-o", "html", arg(&trust_ii("long-words.json"))]);
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
