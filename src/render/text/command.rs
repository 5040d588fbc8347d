//! A suggested command on a terminal too narrow for it and its comment on one line: the
//! comment above it, and the command broken only where a shell reads on.

use anstyle::Style;
use unicode_width::UnicodeWidthStr;

/// A word as shown (styled) and how wide it is.
pub(super) type Word = (String, usize);

/// The words of pieces, each given as (text shown, style, whether it may break at its
/// spaces): split at spaces where it may, pieces with no space between them one word.
pub(super) fn words(pieces: impl IntoIterator<Item = (String, Style, bool)>) -> Vec<Word> {
    let mut words: Vec<Word> = Vec::new();
    let mut glued = false;
    for (text, style, breaks) in pieces {
        let parts: Vec<&str> = if breaks {
            text.split(' ').collect()
        } else {
            vec![text.as_str()]
        };
        for (i, part) in parts.into_iter().enumerate() {
            glued &= i == 0;
            if part.is_empty() {
                continue;
            }
            let shown = if style == Style::new() {
                part.to_string()
            } else {
                format!("{style}{part}{style:#}")
            };
            match words.last_mut() {
                Some((word, w)) if glued => {
                    word.push_str(&shown);
                    *w += part.width();
                }
                _ => words.push((shown, part.width())),
            }
            glued = true;
        }
    }
    words
}

/// The comment on lines of their own above the command, each a `#` comment, and the command
/// broken only between its words, each break a shell's ` \`: pasted, every line is still a
/// comment or the one command. A word wider than a line stays whole.
pub(super) fn lay_out(comment: &[Word], command: &[Word], width: usize) -> String {
    let mut out = String::from("  #");
    let mut used = 3;
    for (word, w) in comment {
        if used + 1 + w > width && used > 3 {
            out.push_str("\n  #");
            used = 3;
        }
        out.push(' ');
        out.push_str(word);
        used += 1 + w;
    }
    out.push_str("\n  ");
    used = 2;
    for (i, (word, w)) in command.iter().enumerate() {
        // A line the command goes on after leaves room for its ` \`.
        let tail = if i + 1 < command.len() { 2 } else { 0 };
        if i > 0 && used + 1 + w + tail > width {
            out.push_str(" \\\n    ");
            used = 4;
        } else if i > 0 {
            out.push(' ');
            used += 1;
        }
        out.push_str(word);
        used += w;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, breaks: bool) -> (String, Style, bool) {
        (text.to_string(), Style::new(), breaks)
    }

    #[test]
    fn the_comment_goes_above_and_the_command_breaks_where_a_shell_reads_on() {
        let command = words([
            plain("  metalctl switch connected-machines --machine-id=", true),
            plain("'a b'", false),
        ]);
        let comment = words([plain("what the leaf switches say of it", true)]);
        // The option and its quoted value (a space and all) stay one word.
        assert_eq!(
            lay_out(&comment, &command, 30),
            "  # what the leaf switches say\n  # of it\n  metalctl switch \\\n    \
             connected-machines \\\n    --machine-id='a b'"
        );
        // A word wider than a line is alone on its line, never cut.
        let long = words([
            plain("  metalctl machine logs ", true),
            plain(&"x".repeat(40), false),
        ]);
        assert_eq!(
            lay_out(&comment[..1], &long, 20),
            format!(
                "  # what\n  metalctl machine \\\n    logs \\\n    {}",
                "x".repeat(40)
            )
        );
    }

    #[test]
    fn colour_changes_no_width() {
        let red = anstyle::AnsiColor::Red.on_default();
        let got = words([
            ("a b".to_string(), red, true),
            ("c".to_string(), Style::new(), false),
        ]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (format!("{red}a{red:#}"), 1));
        assert_eq!(got[1], (format!("{red}b{red:#}c"), 2));
    }
}
