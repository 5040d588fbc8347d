//! Where the elements of an array inside a JSON document start: the lines a problem with one
//! of them is named by.

use super::array::for_each_element;
use super::scanner::{SplitError, Splitter};

/// The start lines of the elements of the array found by following `path` through nested
/// objects (`["events", "log"]`); empty when the path leads nowhere.
pub fn element_lines_at(text: &[u8], path: &[&str]) -> Result<Vec<usize>, SplitError> {
    let Some((key, rest)) = path.split_first() else {
        return Ok(Vec::new());
    };
    let mut splitter = Splitter::new(text);
    splitter.expect(b'{')?;
    let mut scratch = Vec::new();
    loop {
        match splitter.skip_whitespace()? {
            Some(b'}') | None => return Ok(Vec::new()),
            Some(b',') => {
                splitter.bump()?;
                continue;
            }
            _ => {}
        }
        scratch.clear();
        splitter.read_value(&mut scratch)?;
        let name: String = serde_json::from_slice(&scratch).unwrap_or_default();
        splitter.expect(b':')?;
        if name == *key {
            if rest.is_empty() {
                if splitter.skip_whitespace()? != Some(b'[') {
                    return Ok(Vec::new());
                }
                let mut lines = Vec::new();
                for_each_element(&mut splitter, |_, start| {
                    lines.push(start.line);
                    Ok(())
                })?;
                return Ok(lines);
            }
            scratch.clear();
            let start = splitter.read_value(&mut scratch)?;
            let inner = element_lines_at(&scratch, rest)?;
            return Ok(inner.into_iter().map(|l| l + start.line - 1).collect());
        }
        scratch.clear();
        splitter.read_value(&mut scratch)?;
    }
}
