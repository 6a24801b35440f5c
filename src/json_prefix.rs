//! Members read from a JSON text too large to parse (the start of a frame or an MCP
//! line over its cap) without parsing it: strings and nesting are followed, nothing is
//! built but the values asked for. Written here because serde_json parses whole
//! texts only, and a prefix cut anywhere is never a whole text.

use serde_json::Value;

/// The string or number members at `paths` (each a chain of member names from the
/// top-level object: `["params", "uri"]`) found in `head`, the start of a JSON text;
/// `None` for each one `head` does not hold whole (a number cut by its end may go on).
pub fn scalars_in_head<const N: usize>(head: &[u8], paths: [&[&str]; N]) -> [Option<Value>; N] {
    let mut found: [Option<Value>; N] = std::array::from_fn(|_| None);
    let wanted: Vec<Vec<Vec<u8>>> = paths
        .iter()
        .map(|path| {
            path.iter()
                .map(|k| format!("\"{k}\"").into_bytes())
                .collect()
        })
        .collect();
    // The current key of each open object, from the top ("" in an array or before
    // the first key).
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while i < head.len() && found.iter().any(Option::is_none) {
        match head[i] {
            b'"' | b'-' | b'0'..=b'9' => {
                let len = match head[i] {
                    b'"' => match string_end(head, i) {
                        Some(end) => end + 1 - i,
                        None => break,
                    },
                    _ => number_len(&head[i..]),
                };
                let token = &head[i..i + len];
                let next = i + len + skip_ws(&head[i + len..]);
                if token.first() == Some(&b'"') && head.get(next) == Some(&b':') {
                    if let Some(key) = keys.last_mut() {
                        *key = token;
                    }
                    i = next + 1;
                    continue;
                }
                if let Some(at) = wanted.iter().position(|w| w.iter().eq(keys.iter())) {
                    found[at] = found[at].take().or_else(|| scalar_at(head, i, false));
                }
                i += len;
                continue;
            }
            b'{' | b'[' => keys.push(b""),
            b'}' | b']' => {
                keys.pop();
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// A string or number that starts at `at`; `ends_here` when the end of `text` ends
/// it too (else a number that runs to the end may go on).
pub fn scalar_at(text: &[u8], at: usize, ends_here: bool) -> Option<Value> {
    match *text.get(at)? {
        b'"' => {
            let end = string_end(text, at)?;
            serde_json::from_slice::<String>(&text[at..=end])
                .ok()
                .map(Value::String)
        }
        b'-' | b'0'..=b'9' => {
            let len = number_len(&text[at..]);
            if at + len >= text.len() && !ends_here {
                return None;
            }
            serde_json::from_slice::<serde_json::Number>(&text[at..at + len])
                .ok()
                .map(Value::Number)
        }
        _ => None,
    }
}

/// The index of the quote closing the string that opens at `start`.
pub fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut escaped = false;
    for (i, &b) in text.iter().enumerate().skip(start + 1) {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => return Some(i),
            _ => {}
        }
    }
    None
}

/// The length of the number `text` starts with.
pub fn number_len(text: &[u8]) -> usize {
    text.iter()
        .take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        .count()
}

fn skip_ws(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_whitespace()).count()
}
