//! What `Events()` in metal-api's `events.go` must be for its table to be read exactly: one
//! returned `fsm.Events{ … }` literal of items, and `SelfTransitionState` the constant
//! `"self_transition"` that every release declares beside it. Anything else could change the
//! table in a way this reader does not follow (a row appended, sliced off or changed after, an
//! early return of another table, another meaning of "stay"), so it is refused at its line and
//! column, never read past.

use std::sync::LazyLock;

use anyhow::{Result, bail};
use regex::Regex;

static EVENTS_FN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"func\s+Events\s*\(\s*\)\s*fsm\.Events\s*\{").expect("valid pattern")
});
static SELF_TRANSITION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bSelfTransitionState\b").expect("valid pattern"));
/// The one declaration every release has, alone or in a `const ( … )` block.
static SELF_DECLARED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:const\s+)?SelfTransitionState(?:\s+string)?\s*=\s*"self_transition"\s*;?$"#)
        .expect("valid pattern")
});

/// The items of the `fsm.Events{ … }` literal `Events()` returns: (offset of the item's `{`,
/// item text). Every problem is a line `LINE:COLUMN: message`.
pub(super) fn items(text: &str) -> Result<Vec<Item<'_>>> {
    let mut functions = EVENTS_FN.find_iter(text);
    let Some(function) = functions.next() else {
        bail!("no `func Events() fsm.Events {{` found; is this metal-api's fsm/events.go?");
    };
    if let Some(again) = functions.next() {
        bail!(
            "{}: a second `func Events() fsm.Events` (the first is at {})",
            position(text, again.start()),
            position(text, function.start())
        );
    }
    let (mut problems, declared) = self_transition(text);
    match body(text, function.end()) {
        Ok((found, literal)) if problems.is_empty() => {
            if let Some(used) = SELF_TRANSITION.find(&text[literal.0..literal.1])
                && !declared
            {
                bail!(
                    "{}: Dst SelfTransitionState, but this file does not declare `const SelfTransitionState = \"self_transition\"` as metal-api's events.go does, so fsmlog cannot know what it means",
                    position(text, literal.0 + used.start())
                );
            }
            return Ok(found);
        }
        Ok(_) => {}
        Err(problem) => problems.push(problem),
    }
    bail!("{}", problems.join("\n"))
}

/// An item's offset and text.
type Item<'a> = (usize, &'a str);

/// Reads the function body that opens before `from`: `return fsm.Events{ … }` and its
/// closing brace, nothing else. Gives the items and the literal's byte range.
fn body(text: &str, from: usize) -> Result<(Vec<Item<'_>>, (usize, usize)), String> {
    let only = "`Events()` must be exactly `return fsm.Events{ … }`, the shape of every metal-api release; fsmlog does not follow what else a body does to the table";
    let mut at = skip_space(text, from);
    if !keyword(text, at, "return") {
        return Err(format!(
            "{}: `{}`: {only}",
            position(text, at),
            shown(text, at)
        ));
    }
    at = skip_space(text, at + "return".len());
    let literal_at = at;
    let open = text[at..]
        .strip_prefix("fsm.Events")
        .map(|rest| skip_space(text, text.len() - rest.len()))
        .filter(|&open| text[open..].starts_with('{'));
    let Some(open) = open else {
        return Err(format!(
            "{}: returns `{}`, not an `fsm.Events{{ … }}` literal: {only}",
            position(text, literal_at),
            shown(text, literal_at)
        ));
    };
    let Some(close) = closing_brace(text, open) else {
        return Err(format!(
            "{}: the `fsm.Events{{` literal is not closed",
            position(text, open)
        ));
    };
    let found = literal_items(text, open + 1, close)?;
    let mut after = skip_space(text, close + 1);
    if text[after..].starts_with(';') {
        after = skip_space(text, after + 1);
    }
    if !text[after..].starts_with('}') {
        return Err(format!(
            "{}: `{}` after the returned literal: {only}",
            position(text, after),
            shown(text, after)
        ));
    }
    Ok((found, (open, close + 1)))
}

/// The items between `from` and `to` (inside the literal's braces): `{ … }` or
/// `fsm.EventDesc{ … }`, separated by commas; anything else (a call, an index key, a
/// variable) is refused.
fn literal_items(text: &str, from: usize, to: usize) -> Result<Vec<Item<'_>>, String> {
    let mut found = Vec::new();
    let mut at = skip_space(text, from);
    let mut item_next = true;
    while at < to {
        if !item_next && text[at..].starts_with(',') {
            item_next = true;
            at = skip_space(text, at + 1);
            continue;
        }
        let open = match text[at..].strip_prefix("fsm.EventDesc") {
            Some(rest) => skip_space(text, text.len() - rest.len()),
            None => at,
        };
        let close = (item_next && text[open..].starts_with('{'))
            .then(|| closing_brace(text, open))
            .flatten()
            .filter(|&close| close < to);
        let Some(close) = close else {
            return Err(format!(
                "{}: `{}` in the `fsm.Events{{ … }}` literal: fsmlog reads only items `{{Name: …, Src: …, Dst: …}}` separated by commas",
                position(text, at),
                shown(text, at)
            ));
        };
        found.push((open, &text[open..=close]));
        item_next = false;
        at = skip_space(text, close + 1);
    }
    Ok(found)
}

/// Every declaration of or assignment to `SelfTransitionState` that is not metal-api's
/// `const SelfTransitionState = "self_transition"`, and every declaration after the first;
/// and whether that declaration is there.
fn self_transition(text: &str) -> (Vec<String>, bool) {
    let mut problems = Vec::new();
    let mut first: Option<usize> = None;
    let quoted = in_strings(text);
    let mut block: Option<&str> = None;
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let start = line_start;
        line_start += line.len();
        let trimmed = line.trim();
        if block.is_some() && trimmed.starts_with(')') {
            block = None;
            continue;
        }
        let lead = ["const", "var"]
            .into_iter()
            .find(|kw| keyword(trimmed, 0, kw));
        for found in SELF_TRANSITION.find_iter(line) {
            if quoted[start + found.start()] {
                continue;
            }
            let after = line[found.end()..].trim_start();
            let first_on_line = line[..found.start()].trim().is_empty();
            // In `var x = SelfTransitionState` it is read, not declared.
            let named = !line[..found.start()].contains('=');
            let declares = (lead.is_some() && named)
                || (block.is_some() && first_on_line)
                || after.starts_with(":=")
                || (after.starts_with('=') && !after.starts_with("=="))
                || (after.starts_with(',') && assigns(after));
            if !declares {
                continue;
            }
            let at = start + found.start();
            let constant = lead == Some("const") || block == Some("const");
            if !(constant && SELF_DECLARED.is_match(trimmed)) {
                problems.push(format!(
                    "{}: `{}` declares or assigns SelfTransitionState; fsmlog reads Dst SelfTransitionState only as metal-api declares it, `const SelfTransitionState = \"self_transition\"`",
                    position(text, at),
                    shown(text, start + line.len() - line.trim_start().len())
                ));
            } else if let Some(first) = first {
                problems.push(format!(
                    "{}: SelfTransitionState declared again (first at {})",
                    position(text, at),
                    position(text, first)
                ));
            } else {
                first = Some(at);
            }
        }
        if let Some(kw) = lead
            && trimmed[kw.len()..].trim_start().starts_with('(')
            && !trimmed.ends_with(')')
        {
            block = Some(kw);
        }
    }
    (problems, first.is_some())
}

/// Whether the rest of a line after `name,` assigns: a `:=` or a lone `=`.
fn assigns(rest: &str) -> bool {
    let bytes = rest.as_bytes();
    rest.contains(":=")
        || bytes.iter().enumerate().any(|(i, &b)| {
            b == b'='
                && !matches!(bytes.get(i + 1), Some(b'='))
                && !matches!(
                    i.checked_sub(1).map(|j| bytes[j]),
                    Some(b'=' | b'!' | b'<' | b'>')
                )
        })
}

/// Which bytes of `text` are inside a string or rune literal.
fn in_strings(text: &str) -> Vec<bool> {
    let mut inside = vec![false; text.len()];
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        match quote {
            Some(q) => {
                inside[i] = true;
                if escaped {
                    escaped = false;
                } else if b == b'\\' && q != b'`' {
                    escaped = true;
                } else if b == q {
                    quote = None;
                }
            }
            None if matches!(b, b'"' | b'`' | b'\'') => {
                inside[i] = true;
                quote = Some(b);
            }
            None => {}
        }
    }
    inside
}

/// Where the brace opening at `open` closes, stepping over strings and rune literals.
fn closing_brace(text: &str, open: usize) -> Option<usize> {
    let quoted = in_strings(&text[open..]);
    let mut depth = 0usize;
    for (i, b) in text[open..].bytes().enumerate() {
        if quoted[i] {
            continue;
        }
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The line `offset` is on (1-based).
pub(super) fn line_at(text: &str, offset: usize) -> usize {
    1 + text[..offset].bytes().filter(|&b| b == b'\n').count()
}

/// Where a piece of the file is: line and column (1-based, in characters).
pub(super) fn position(text: &str, offset: usize) -> String {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let column = 1 + text[line_start..offset].chars().count();
    format!("{}:{column}", line_at(text, offset))
}

fn skip_space(text: &str, from: usize) -> usize {
    from + (text[from..].len() - text[from..].trim_start().len())
}

/// Whether `word` stands at `at` as a word of its own.
fn keyword(text: &str, at: usize, word: &str) -> bool {
    text[at..].starts_with(word)
        && !text[at + word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
}

/// The rest of the line from `at`, shortened, for a message.
fn shown(text: &str, at: usize) -> String {
    let line = text[at..].lines().next().unwrap_or("").trim_end();
    match line.char_indices().nth(48) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if line.is_empty() => "the end of the file".to_string(),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// metal-api's shape, cut short: the constant, `Events()`, and a function after it that
    /// uses the constant as `eventCallbacks` does.
    const BASE: &str = "package fsm

const SelfTransitionState = \"self_transition\"

func Events() fsm.Events {
\treturn fsm.Events{
\t\t{
\t\t\tName: metal.ProvisioningEventPXEBooting.String(),
\t\t\tSrc:  []string{states.Initial.String()},
\t\t\tDst:  states.PXEBooting.String(),
\t\t},
\t\t{
\t\t\tName: metal.ProvisioningEventPXEBooting.String(),
\t\t\tSrc:  []string{states.PXEBooting.String()},
\t\t\tDst:  SelfTransitionState,
\t\t},
\t}
}

func callbacks() map[string]string {
\treturn map[string]string{\"enter_\" + SelfTransitionState: \"x\"}
}
";
    const RETURN: &str = "\treturn fsm.Events{\n";
    const END: &str = "\t}\n}\n\nfunc callbacks";

    fn refused(text: &str) -> String {
        items(text).map_or_else(|e| e.to_string(), |found| format!("read {found:?}"))
    }

    #[test]
    fn metal_apis_shape_is_read_item_by_item() {
        let found = items(BASE).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found[1].1.contains("Dst:  SelfTransitionState"));
        assert_eq!(position(BASE, found[0].0), "7:3");
        // Written out, `fsm.EventDesc{ … }`, a `;` after the return, a `}` inside a string.
        let spelt = BASE
            .replacen("\t\t{\n", "\t\tfsm.EventDesc {\n", 1)
            .replace(END, "\t};\n}\n\nfunc callbacks")
            .replace("states.Initial.String()", "\"State }\"");
        let found = items(&spelt).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found[0].1.starts_with('{') && found[0].1.contains("\"State }\""));
        // In a const block, as gofmt writes one.
        let block = BASE.replace(
            "const SelfTransitionState = \"self_transition\"\n",
            "const (\n\tSelfTransitionState string = \"self_transition\"\n\tother = 1\n)\n",
        );
        assert_eq!(items(&block).unwrap().len(), 2);
    }

    #[test]
    fn a_body_that_is_not_one_returned_literal_is_refused_where_it_differs() {
        let only = "`Events()` must be exactly `return fsm.Events{ … }`";
        let cases = [
            // A row appended after the literal: it would be lost.
            (
                BASE.replace(RETURN, "\tevents := fsm.Events{\n").replace(
                    END,
                    "\t}\n\tevents = append(events, fsm.EventDesc{Name: \"Waiting\"})\n\treturn events\n}\n\nfunc callbacks",
                ),
                "6:2: `events := fsm.Events{`: ",
            ),
            // A field changed after: the row would be read as it was first written.
            (
                BASE.replace(RETURN, "\tevents := fsm.Events{\n").replace(
                    END,
                    "\t}\n\tevents[1].Dst = states.Waiting.String()\n\treturn events\n}\n\nfunc callbacks",
                ),
                "6:2: `events := fsm.Events{`: ",
            ),
            // Rows from a call appended to the literal.
            (
                BASE.replace(RETURN, "\treturn append(fsm.Events{\n")
                    .replace(END, "\t}, extra()...)\n}\n\nfunc callbacks"),
                "6:9: returns `append(fsm.Events{`, not an `fsm.Events{ … }` literal: ",
            ),
            // A row sliced off: it would be read as kept.
            (
                BASE.replace(END, "\t}[1:]\n}\n\nfunc callbacks"),
                "17:3: `[1:]` after the returned literal: ",
            ),
            // An early return of another table: the real one would be read instead.
            (
                BASE.replace(
                    RETURN,
                    "\tif os.Getenv(\"X\") != \"\" {\n\t\treturn fsm.Events{{Name: metal.ProvisioningEventPXEBooting.String(), Src: []string{states.Initial.String()}, Dst: states.PXEBooting.String()}}\n\t}\n\treturn fsm.Events{\n",
                ),
                "6:2: `if os.Getenv(\"X\") != \"\" {`: ",
            ),
        ];
        for (text, at) in cases {
            let err = refused(&text);
            assert!(err.contains(at) && err.contains(only), "{at}: {err}");
        }
    }

    #[test]
    fn the_literal_holds_items_and_commas_only() {
        let cases = [
            (
                BASE.replace(RETURN, "\treturn fsm.Events{\n\t\textra(),\n"),
                "7:3: `extra(),` in the `fsm.Events{ … }` literal",
            ),
            (
                BASE.replace(RETURN, "\treturn fsm.Events{\n\t\t5: ")
                    .replacen("\t\t{\n", "{\n", 1),
                "7:3: `5: {` in the `fsm.Events{ … }` literal",
            ),
            (
                BASE.replace("\t\t},\n\t\t{\n", "\t\t}\n\t\t{\n"),
                "12:3: `{` in the `fsm.Events{ … }` literal",
            ),
        ];
        for (text, at) in cases {
            let err = refused(&text);
            assert!(err.contains(at), "{at}: {err}");
        }
        let cut = &BASE[..BASE.find(END).unwrap()];
        let err = refused(cut);
        assert!(
            err.contains("6:19: the `fsm.Events{` literal is not closed"),
            "{err}"
        );
        let twice = format!("{BASE}\nfunc Events() fsm.Events {{\n\treturn nil\n}}\n");
        assert!(
            refused(&twice)
                .contains("24:1: a second `func Events() fsm.Events` (the first is at 5:1)"),
            "{}",
            refused(&twice)
        );
    }

    #[test]
    fn self_transition_state_means_self_transition_or_the_file_is_refused() {
        let declared = "const SelfTransitionState = \"self_transition\"\n";
        let said = "declares or assigns SelfTransitionState";
        let cases = [
            (
                BASE.replace(declared, "const SelfTransitionState = \"Waiting\"\n"),
                "3:7: `const SelfTransitionState = \"Waiting\"` ",
                said,
            ),
            (
                BASE.replace(declared, "var SelfTransitionState = \"self_transition\"\n"),
                "3:5: ",
                said,
            ),
            (
                BASE.replace(
                    declared,
                    "const (\n\tSelfTransitionState = states.Waiting.String()\n)\n",
                ),
                "4:2: ",
                said,
            ),
            (
                BASE.replace(declared, "var (\n\tSelfTransitionState string\n)\n"),
                "4:2: ",
                said,
            ),
            (
                format!("{BASE}\nfunc init() {{\n\tSelfTransitionState, _ = \"x\", 1\n}}\n"),
                "25:2: ",
                said,
            ),
            (
                BASE.replace(
                    declared,
                    &format!("{declared}const (\n\tSelfTransitionState = \"self_transition\"\n)\n"),
                ),
                "5:2: SelfTransitionState declared again (first at 3:7)",
                "",
            ),
            (
                BASE.replace(declared, ""),
                "14:10: Dst SelfTransitionState, but this file does not declare",
                "",
            ),
            // Shadowed inside `Events()`: refused twice over.
            (
                BASE.replace(
                    RETURN,
                    "\tSelfTransitionState := states.Waiting.String()\n\treturn fsm.Events{\n",
                ),
                "6:2: `SelfTransitionState := states.Waiting.String()` ",
                said,
            ),
        ];
        for (text, at, what) in cases {
            let err = refused(&text);
            assert!(err.contains(at) && err.contains(what), "{at}: {err}");
        }
        // Read in a string or compared, it is used, not declared.
        let used = format!(
            "{BASE}\nvar stay = SelfTransitionState\n\nfunc dst(d string) bool {{\n\treturn d == SelfTransitionState || d == \"SelfTransitionState = 1\"\n}}\n"
        );
        assert_eq!(items(&used).unwrap().len(), 2);
    }
}
