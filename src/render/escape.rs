//! Text from input (messages, machine ids, event names, file names) is untrusted: a machine
//! writes its own messages. Every text renderer passes such strings through one of these
//! functions at its boundary, so that no control character reaches a terminal raw and no
//! markup reaches Markdown, CSV or HTML unescaped.

use std::borrow::Cow;

use crate::hidden::{has_hidden, is_hidden};

/// The text with every control character shown as `\u{1b}`: tabs and newlines too, so that a
/// row stays one row. Borrowed when there is nothing to escape (the common case).
pub fn text(s: &str) -> Cow<'_, str> {
    if !has_hidden(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_hidden(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A word as a POSIX shell reads it back: as it is when it holds only `A-Za-z0-9._:/-`,
/// else in single quotes (a `'` inside written `'\''`). Controls in it are then escaped
/// by the renderer like any text.
pub fn shell_word(s: &str) -> Cow<'_, str> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'/' | b'-');
    if !s.is_empty() && s.bytes().all(plain) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(format!("'{}'", s.replace('\'', "'\\''")))
}

/// A Markdown table cell: controls escaped as for the terminal, and every character Markdown
/// or the HTML it may carry would read as markup escaped, so that text shows as it is.
pub fn markdown(s: &str) -> String {
    let plain = text(s);
    let mut out = String::with_capacity(plain.len() + 8);
    for c in plain.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            // No @mention from a machine's message pings anyone in a pull request.
            '@' => out.push_str("&#64;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A CSV field's text: controls escaped as for the terminal (the csv writer quotes the
/// rest), and a leading `=`, `+`, `-` or `@` guarded with `'` so that a spreadsheet does not
/// run it as a formula.
pub fn csv(s: &str) -> Cow<'_, str> {
    let plain = text(s);
    if plain.starts_with(['=', '+', '-', '@']) {
        return Cow::Owned(format!("'{plain}"));
    }
    plain
}

/// HTML text or attribute content: the five markup characters as entities, and controls
/// escaped as for the terminal.
pub fn html(s: &str) -> String {
    let plain = text(s);
    let mut out = String::with_capacity(plain.len() + 8);
    for c in plain.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}1m\r\n\tz\u{7f}\u{202e}";

    #[test]
    fn no_control_character_survives() {
        let shown = text(HOSTILE);
        assert!(!shown.chars().any(is_hidden), "{shown:?}");
        assert_eq!(
            shown,
            "a\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{9b}1m\\u{d}\\u{a}\\u{9}z\\u{7f}\\u{202e}"
        );
        assert!(matches!(text("plain text"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_cells_hold_their_text() {
        assert_eq!(markdown("a|b <script> *x*"), "a\\|b &lt;script&gt; \\*x\\*");
        assert!(!markdown(HOSTILE).contains('\u{1b}'));
    }

    #[test]
    fn shell_words_are_quoted_where_a_shell_would_read_them() {
        assert_eq!(shell_word("043afe87-2ce5:a/b.c_d"), "043afe87-2ce5:a/b.c_d");
        assert_eq!(shell_word("$(touch PWNED)"), "'$(touch PWNED)'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("a b"), "'a b'");
    }

    #[test]
    fn csv_fields_never_start_a_formula() {
        assert_eq!(csv("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv("waiting"), "waiting");
    }

    #[test]
    fn html_escapes_markup() {
        assert_eq!(
            html("<script>alert('x')</script>&"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;"
        );
    }
}
