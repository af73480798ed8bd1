//! A forgiving reading of a settings file's JSONC for the editor: its tokens, the keys of the
//! top-level object with their ranges, and whether an offset is where a key or a value goes.
//! Half-typed text reads as far as it can (a string left open ends at its line's end); whether
//! the file is valid is the core's settings reader's business, not this one's.

use std::ops::Range;

/// One token: a string (quotes included, the closing one missing when it is left open), a
/// punctuation byte, or a run of other characters (numbers, `true`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Str(Range<usize>),
    Punct(u8, usize),
    Word(Range<usize>),
}

impl Token {
    pub(crate) fn range(&self) -> Range<usize> {
        match self {
            Token::Str(r) | Token::Word(r) => r.clone(),
            Token::Punct(_, at) => *at..*at + 1,
        }
    }
}

/// The tokens of `text`, comments and whitespace left out.
pub(crate) fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(bytes.len(), |p| i + p);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = bytes[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(bytes.len(), |p| i + 2 + p + 2);
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' && i + 1 < bytes.len() && bytes[i + 1] != b'\n' {
                        2
                    } else {
                        1
                    };
                }
                if bytes.get(i) == Some(&b'"') {
                    i += 1;
                }
                out.push(Token::Str(start..i.min(bytes.len())));
            }
            b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                out.push(Token::Punct(b, i));
                i += 1;
            }
            _ => {
                let start = i;
                while i < bytes.len()
                    && !matches!(
                        bytes[i],
                        b' ' | b'\t'
                            | b'\r'
                            | b'\n'
                            | b'{'
                            | b'}'
                            | b'['
                            | b']'
                            | b':'
                            | b','
                            | b'"'
                    )
                    && !(bytes[i] == b'/' && matches!(bytes.get(i + 1), Some(b'/' | b'*')))
                {
                    i += 1;
                }
                // Stop on a character boundary: the run ends at an ASCII byte or the end.
                out.push(Token::Word(start..i));
            }
        }
    }
    out
}

/// The text of a string token without its quotes (escapes kept as written).
pub(crate) fn unquoted(text: &str, range: Range<usize>) -> &str {
    let s = text.get(range).unwrap_or("");
    let s = s.strip_prefix('"').unwrap_or(s);
    s.strip_suffix('"').unwrap_or(s)
}

/// A key of the top-level object: its text as written and the range of the string, quotes
/// included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub name: String,
    pub range: Range<usize>,
}

/// Where each token stands: its depth (0 outside everything) and, for a token at depth 1 of
/// the top-level object, whether it is a key.
fn walk(tokens: &[Token], mut visit: impl FnMut(usize, &Token, bool) -> bool) {
    let mut depth = 0usize;
    // The top-level container is an object.
    let mut object = false;
    let mut expect_key = false;
    for token in tokens {
        match token {
            Token::Punct(b'{' | b'[', _) => {
                if depth == 0 {
                    object = matches!(token, Token::Punct(b'{', _));
                    expect_key = object;
                }
                if !visit(depth, token, false) {
                    return;
                }
                depth += 1;
                continue;
            }
            Token::Punct(b'}' | b']', _) => {
                depth = depth.saturating_sub(1);
                if !visit(depth, token, false) {
                    return;
                }
                continue;
            }
            _ => {}
        }
        let is_key = depth == 1 && object && expect_key && matches!(token, Token::Str(_));
        if depth == 1 && object {
            match token {
                Token::Punct(b',', _) => expect_key = true,
                Token::Punct(b':', _) => expect_key = false,
                Token::Str(_) if is_key => expect_key = false,
                _ => {}
            }
        }
        if !visit(depth, token, is_key) {
            return;
        }
    }
}

/// The keys of the top-level object, in order, repeated ones included.
pub(crate) fn top_level_keys(text: &str) -> Vec<Key> {
    let tokens = tokens(text);
    let mut keys = Vec::new();
    walk(&tokens, |_, token, is_key| {
        if is_key {
            let range = token.range();
            keys.push(Key {
                name: unquoted(text, range.clone()).to_owned(),
                range,
            });
        }
        true
    });
    keys
}

/// What goes at an offset of a settings file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Spot {
    /// A key of the top-level object; `replace` is the string (or bare word) being typed, or an
    /// empty range.
    Key { replace: Range<usize> },
    /// The value of the top-level key `key`; `replace` as for a key.
    Value { key: String, replace: Range<usize> },
}

/// What goes at `offset` (a character boundary) of the settings file `text`.
pub(crate) fn spot_at(text: &str, offset: usize) -> Option<Spot> {
    let tokens = tokens(text);
    // The last significant token at depth 1 before the one at the offset, and the last key.
    let mut before: Option<(usize, Token, bool)> = None;
    let mut last_key: Option<String> = None;
    let mut found: Option<Spot> = None;
    let mut stopped = false;
    walk(&tokens, |depth, token, is_key| {
        let range = token.range();
        let inside = match token {
            // In a string: after its opening quote, up to its end.
            Token::Str(r) => r.start < offset && offset <= r.end && !closed_before(text, r, offset),
            Token::Word(r) => r.start <= offset && offset <= r.end,
            Token::Punct(..) => false,
        };
        if inside || range.start >= offset {
            stopped = true;
            // A closing bracket is walked at the depth after it; the offset is before it.
            let depth = match token {
                Token::Punct(b'}' | b']', _) => depth + 1,
                _ => depth,
            };
            if inside {
                found = spot_for(depth, before.as_ref(), &last_key, range, is_key);
            } else {
                found = spot_for(depth, before.as_ref(), &last_key, offset..offset, false);
            }
            return false;
        }
        if is_key {
            last_key = Some(unquoted(text, range).to_owned());
        }
        before = Some((depth, token.clone(), is_key));
        true
    });
    if !stopped {
        // After every token.
        let depth = depth_after(&tokens);
        found = spot_for(depth, before.as_ref(), &last_key, offset..offset, false);
    }
    found
}

/// Whether the string token `r` closed before `offset` (the offset is after its closing quote).
fn closed_before(text: &str, r: &Range<usize>, offset: usize) -> bool {
    r.end == offset && r.end > r.start + 1 && text.as_bytes().get(r.end - 1) == Some(&b'"')
}

/// The depth after all of `tokens`.
fn depth_after(tokens: &[Token]) -> usize {
    let mut depth = 0usize;
    walk(tokens, |d, token, _| {
        depth = match token {
            Token::Punct(b'{' | b'[', _) => d + 1,
            _ => d,
        };
        true
    });
    depth
}

fn spot_for(
    depth: usize,
    before: Option<&(usize, Token, bool)>,
    last_key: &Option<String>,
    replace: Range<usize>,
    is_key: bool,
) -> Option<Spot> {
    if depth != 1 {
        return None;
    }
    if is_key {
        return Some(Spot::Key { replace });
    }
    match before {
        Some((1, Token::Punct(b',', _), _)) => Some(Spot::Key { replace }),
        Some((0, Token::Punct(b'{', _), _)) => Some(Spot::Key { replace }),
        Some((1, Token::Punct(b':', _), _)) => Some(Spot::Value {
            key: last_key.clone()?,
            replace,
        }),
        _ => None,
    }
}
