//! The characters that hide or reorder text: no text from input may show them raw. Shared by
//! the renderers, which escape them, and by the checks that refuse them where a name must be
//! plain (a rule set's name).

use std::sync::LazyLock;

use regex::Regex;

/// Unicode's format characters (category Cf: the bidirectional controls, zero-width spaces
/// and joiners, the soft hyphen, the byte-order mark, the tag characters), the invisible
/// letters and marks outside it (the combining grapheme joiner, the Hangul fillers), the line
/// and paragraph separators, the whole tag block, and C0, C1 and DEL.
static HIDDEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"[\p{Cf}\p{Cc}\u{034F}\u{115F}\u{1160}\u{3164}\u{FFA0}\u{2028}\u{2029}\u{E0000}-\u{E007F}]",
    )
    .expect("a valid character class")
});

/// Whether a character hides or reorders text (see [`HIDDEN`]).
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    let mut buf = [0u8; 4];
    HIDDEN.is_match(c.encode_utf8(&mut buf))
}

/// Whether a text holds such a character: printable ASCII, the common case, is told without
/// the character class.
pub fn has_hidden(s: &str) -> bool {
    if s.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return false;
    }
    HIDDEN.is_match(s)
}

/// The first such character of a text.
pub fn first_hidden(s: &str) -> Option<char> {
    s.chars().find(|&c| is_hidden(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_character_that_hides_or_reorders_text_is_hidden() {
        let hidden = [
            '\u{0}',
            '\u{9}',
            '\u{a}',
            '\u{1b}',
            '\u{7f}',
            '\u{85}',
            '\u{9b}',
            '\u{ad}',
            '\u{34f}',
            '\u{61c}',
            '\u{115f}',
            '\u{1160}',
            '\u{180e}',
            '\u{200b}',
            '\u{200c}',
            '\u{200d}',
            '\u{200e}',
            '\u{200f}',
            '\u{2028}',
            '\u{2029}',
            '\u{202a}',
            '\u{202e}',
            '\u{2060}',
            '\u{2066}',
            '\u{2069}',
            '\u{3164}',
            '\u{feff}',
            '\u{ffa0}',
            '\u{e0000}',
            '\u{e0001}',
            '\u{e0041}',
            '\u{e007f}',
        ];
        for c in hidden {
            assert!(is_hidden(c), "U+{:04X}", c as u32);
            assert!(has_hidden(&format!("m-1{c}")), "U+{:04X}", c as u32);
        }
        for c in ['a', ' ', '~', 'é', 'ß', '›', '█', '—', '中', '😀'] {
            assert!(!is_hidden(c), "U+{:04X}", c as u32);
        }
        assert!(!has_hidden("PXE Booting › Preparing"));
        assert_eq!(first_hidden("ab\u{202e}c\u{1b}"), Some('\u{202e}'));
    }
}
