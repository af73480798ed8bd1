//! Condition and literal parsing: the text inside `{{IF:…}}` and `{{IFNOT:…}}`.
//!
//! A condition is a bare key (`use_worktrees`) or a comparison (`dco == true`,
//! `commit_trailer != "Assisted-by"`). Anything else is malformed. Whitespace is JavaScript's.

use crate::text::{is_js_line_terminator, is_js_whitespace, js_trim};
use crate::value::Value;

/// `==` or `!=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Equals,
    NotEquals,
}

impl Operator {
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "==",
            Operator::NotEquals => "!=",
        }
    }
}

/// A parsed condition, borrowing from the marker text.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition<'a> {
    /// `KEY`: a truthiness test, or a feature predicate.
    Bare { key: &'a str },
    /// `KEY == LITERAL` or `KEY != LITERAL`.
    Compare {
        key: &'a str,
        op: Operator,
        /// The literal's text, trimmed, before parsing.
        literal_text: &'a str,
        literal: Value,
    },
}

impl<'a> Condition<'a> {
    pub fn key(&self) -> &'a str {
        match self {
            Condition::Bare { key } | Condition::Compare { key, .. } => key,
        }
    }
}

/// Parses a condition as written between the marker's `:` and `}}`. `None` means malformed.
pub fn parse(raw: &str) -> Option<Condition<'_>> {
    // The common case first: a bare key with nothing around it.
    if identifier_len(raw) == Some(raw.len()) {
        return Some(Condition::Bare { key: raw });
    }
    let cond = js_trim(raw);
    let key_len = identifier_len(cond)?;
    let (key, rest) = cond.split_at(key_len);
    if rest.is_empty() {
        return Some(Condition::Bare { key });
    }
    let rest = rest.trim_start_matches(is_js_whitespace);
    let op = if rest.starts_with("==") {
        Operator::Equals
    } else if rest.starts_with("!=") {
        Operator::NotEquals
    } else {
        return None;
    };
    let rest = rest[2..].trim_start_matches(is_js_whitespace);
    // `(.*)$`: the rest of the text must hold no line terminator.
    if rest.contains(is_js_line_terminator) {
        return None;
    }
    let literal_text = js_trim(rest);
    Some(Condition::Compare {
        key,
        op,
        literal_text,
        literal: parse_literal(literal_text),
    })
}

/// Length of the identifier `[A-Za-z_][A-Za-z0-9_]*` at the start of `s`, if there is one.
fn identifier_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let first = *bytes.first()?;
    if IDENTIFIER[usize::from(first)] != START {
        return None;
    }
    Some(
        bytes
            .iter()
            .position(|&b| IDENTIFIER[usize::from(b)] == NONE)
            .unwrap_or(bytes.len()),
    )
}

const NONE: u8 = 0;
const START: u8 = 1;
const CONTINUE: u8 = 2;

/// Per byte: [`START`] for `[A-Za-z_]`, [`CONTINUE`] for `[0-9]`, else [`NONE`].
const IDENTIFIER: [u8; 256] = {
    let mut table = [NONE; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphabetic() || c == b'_' {
            table[b] = START;
        } else if c.is_ascii_digit() {
            table[b] = CONTINUE;
        }
        b += 1;
    }
    table
};

/// Whether `s` is a whole settings-key identifier.
pub fn is_identifier(s: &str) -> bool {
    identifier_len(s) == Some(s.len())
}

/// Parses a comparison literal: `true`, `false`, `null`, a quoted string, a plain decimal number,
/// or else the text itself as a string.
pub fn parse_literal(text: &str) -> Value {
    match text {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        "null" => return Value::Null,
        _ => {}
    }
    let bytes = text.as_bytes();
    if bytes.len() >= 2 {
        let (first, last) = (bytes[0], bytes[bytes.len() - 1]);
        if first == last && (first == b'"' || first == b'\'') {
            return Value::String(text[1..text.len() - 1].to_owned());
        }
    }
    if is_plain_decimal(text) {
        if let Ok(n) = text.parse::<f64>() {
            return Value::Number(n);
        }
    }
    Value::String(text.to_owned())
}

/// `^-?(?:0|[1-9]\d*)(?:\.\d+)?$` with ASCII digits.
fn is_plain_decimal(text: &str) -> bool {
    let s = text.strip_prefix('-').unwrap_or(text).as_bytes();
    let int_len = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if int_len == 0 || (int_len > 1 && s[0] == b'0') {
        return false;
    }
    match &s[int_len..] {
        [] => true,
        [b'.', frac @ ..] => !frac.is_empty() && frac.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::String(x.to_owned())
    }

    #[test]
    fn literal_table() {
        let cases = [
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("null", Value::Null),
            ("\"x y\"", s("x y")),
            ("'x'", s("x")),
            ("''", s("")),
            ("'", s("'")),
            ("\"x'", s("\"x'")),
            ("3", Value::Number(3.0)),
            ("3.50", Value::Number(3.5)),
            ("-0", Value::Number(-0.0)),
            ("-1.25", Value::Number(-1.25)),
            ("03", s("03")),
            ("1e3", s("1e3")),
            ("3.", s("3.")),
            (".5", s(".5")),
            ("-", s("-")),
            ("Assisted-by", s("Assisted-by")),
            ("", s("")),
            ("True", s("True")),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_literal(text), expected, "{text:?}");
        }
    }

    #[test]
    fn condition_table() {
        let bare = |key| Some(Condition::Bare { key });
        let cmp = |key, op, literal_text, literal| {
            Some(Condition::Compare {
                key,
                op,
                literal_text,
                literal,
            })
        };
        let cases = [
            ("dco", bare("dco")),
            ("  dco\t", bare("dco")),
            ("\u{feff}dco\u{feff}", bare("dco")),
            ("_x9", bare("_x9")),
            ("9x", None),
            ("", None),
            ("   ", None),
            ("d-co", None),
            ("a b", None),
            ("a=b", None),
            ("a==", cmp("a", Operator::Equals, "", s(""))),
            (
                "a == true",
                cmp("a", Operator::Equals, "true", Value::Bool(true)),
            ),
            ("a!= x y ", cmp("a", Operator::NotEquals, "x y", s("x y"))),
            (
                "a\n==\n3",
                cmp("a", Operator::Equals, "3", Value::Number(3.0)),
            ),
            ("a==3\n4", None),
            ("a==3\u{2028}4", None),
            ("a===3", cmp("a", Operator::Equals, "=3", s("=3"))),
            ("a\u{85}==1", None),
        ];
        for (input, expected) in cases {
            assert_eq!(parse(input), expected, "{input:?}");
        }
    }
}
