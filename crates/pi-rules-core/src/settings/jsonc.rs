//! Settings files as the reference reads them: JSON with `//` and `/* */` comments.
//!
//! The reference blanks comments out with `strip-json-comments` 5 and then calls `JSON.parse`.
//! This scanner accepts exactly the texts that pipeline accepts and builds the same values:
//! strict JSON tokens and whitespace (space, tab, LF, CR), double-quoted strings only, no
//! trailing commas, numbers as doubles (`1e400` is infinite), a repeated key keeping its first
//! position and its last value. Comments may stand wherever whitespace may and hold anything; a
//! `//` comment ends before the next LF or at the end of the text. An unclosed `/*` is an error:
//! `strip-json-comments` leaves it in place and `JSON.parse` rejects it. A BOM is an error too, as
//! it is for `JSON.parse`.
//!
//! It is one pass with an explicit stack, so deep nesting cannot exhaust the call stack. Values
//! nested deeper than [`MAX_DEPTH`] are still checked but kept only as empty containers of the
//! same type; no settings rule looks more than three levels down. A lone surrogate escape
//! (`"\ud800"`), which a Rust string cannot hold, becomes U+FFFD.

use crate::text::is_js_whitespace;
use crate::value::{Object, Value};
use std::fmt;

/// Containers nested deeper than this keep their type but not their contents.
pub const MAX_DEPTH: usize = 128;

/// A text that is not valid JSONC, with the byte offset where reading stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub offset: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for SyntaxError {}

/// A top-level object key and the byte offset of its opening quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAt {
    pub key: String,
    pub offset: usize,
}

/// A parsed text: its value and, when it is an object, its keys in order of appearance
/// (a repeated key appears each time).
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub value: Value,
    pub top_level_keys: Vec<KeyAt>,
}

/// Parses a settings file text.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    }
    .document()
}

/// A container being filled.
enum Frame {
    Array(Vec<Value>),
    /// An object and the key whose value comes next.
    Object(Object, String),
    /// A container deeper than [`MAX_DEPTH`]: checked, its contents dropped.
    Opaque {
        object: bool,
    },
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn document(mut self) -> Result<Document, SyntaxError> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut top_level_keys = Vec::new();
        self.skip_trivia()?;
        loop {
            // A value starts here; containers push a frame and go on to their first element.
            let mut value = match self.peek() {
                Some(b'{') | Some(b'[') => {
                    let object = self.peek() == Some(b'{');
                    self.pos += 1;
                    self.skip_trivia()?;
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        empty_container(object)
                    } else {
                        let frame = if stack.len() >= MAX_DEPTH {
                            Frame::Opaque { object }
                        } else if object {
                            Frame::Object(Object::new(), String::new())
                        } else {
                            Frame::Array(Vec::new())
                        };
                        stack.push(frame);
                        if object {
                            let key = self.property_name(stack.len() == 1, &mut top_level_keys)?;
                            if let Some(Frame::Object(_, pending)) = stack.last_mut() {
                                *pending = key;
                            }
                        }
                        continue;
                    }
                }
                _ => self.scalar()?,
            };
            // The value is complete: hand it to its container, closing containers as they end.
            loop {
                self.skip_trivia()?;
                let Some(frame) = stack.last_mut() else {
                    if self.pos < self.bytes.len() {
                        return Err(self.unexpected("after the end of the JSON value"));
                    }
                    return Ok(Document {
                        value,
                        top_level_keys,
                    });
                };
                let object = match frame {
                    Frame::Array(items) => {
                        items.push(value);
                        false
                    }
                    Frame::Object(map, key) => {
                        map.insert(std::mem::take(key), value);
                        true
                    }
                    Frame::Opaque { object } => *object,
                };
                let close = if object { b'}' } else { b']' };
                match self.peek() {
                    Some(b',') => {
                        let comma = self.pos;
                        self.pos += 1;
                        self.skip_trivia()?;
                        if matches!(self.peek(), Some(b'}') | Some(b']')) {
                            return Err(self.error_at(comma, "trailing commas are not allowed"));
                        }
                        if object {
                            let top = stack.len() == 1;
                            let key = self.property_name(top, &mut top_level_keys)?;
                            if let Some(Frame::Object(_, pending)) = stack.last_mut() {
                                *pending = key;
                            }
                        }
                        break;
                    }
                    Some(b) if b == close => {
                        self.pos += 1;
                        value = match stack.pop() {
                            Some(Frame::Array(items)) => Value::Array(items),
                            Some(Frame::Object(map, _)) => Value::Object(map),
                            _ => empty_container(object),
                        };
                    }
                    _ => {
                        let expected = if object {
                            "`,` or `}` in an object"
                        } else {
                            "`,` or `]` in an array"
                        };
                        return Err(self.expected(expected));
                    }
                }
            }
        }
    }

    /// Reads `"name"` and the `:` after it, leaving the position at the value.
    fn property_name(
        &mut self,
        top_level: bool,
        keys: &mut Vec<KeyAt>,
    ) -> Result<String, SyntaxError> {
        if self.peek() != Some(b'"') {
            return Err(self.expected("a double-quoted property name"));
        }
        let offset = self.pos;
        let key = self.string()?;
        self.skip_trivia()?;
        if self.peek() != Some(b':') {
            return Err(self.expected("`:` after a property name"));
        }
        self.pos += 1;
        self.skip_trivia()?;
        if top_level {
            keys.push(KeyAt {
                key: key.clone(),
                offset,
            });
        }
        Ok(key)
    }

    /// A string, number or literal.
    fn scalar(&mut self) -> Result<Value, SyntaxError> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number().map(Value::Number),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'\'') => Err(self.error_here("strings must use double quotes, not `'`")),
            _ => Err(self.unexpected("where a value should start")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, SyntaxError> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.unexpected("where a value should start"))
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` as a double.
    fn number(&mut self) -> Result<f64, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.expected("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.required_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.required_digits()?;
        }
        // The grammar above is a subset of what `f64::from_str` accepts; it rounds correctly and
        // gives infinity on overflow, as JavaScript does.
        self.text[start..self.pos]
            .parse()
            .map_err(|_| self.error_at(start, "invalid number"))
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }

    fn required_digits(&mut self) -> Result<(), SyntaxError> {
        if !matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.expected("a digit"));
        }
        self.digits();
        Ok(())
    }

    /// A double-quoted string starting at the current position, unescaped.
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            let Some(b) = self.peek() else {
                return Err(self.error_at(start, "unterminated string"));
            };
            match b {
                b'"' => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => {
                    out.push_str(&self.text[run..self.pos]);
                    self.escape(&mut out)?;
                    run = self.pos;
                }
                0x00..=0x1f => {
                    return Err(self.error_here(format!(
                        "control character U+{b:04X} must be escaped inside a string"
                    )));
                }
                // Splitting only at ASCII bytes keeps every slice on a character boundary.
                _ => self.pos += 1,
            }
        }
    }

    /// One escape sequence, the position at its backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), SyntaxError> {
        let start = self.pos;
        let Some(&b) = self.bytes.get(self.pos + 1) else {
            return Err(self.error_at(start, "unterminated string"));
        };
        self.pos += 2;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(start)?;
                match unit {
                    0xd800..=0xdbff => self.low_surrogate(unit),
                    // A lone low surrogate.
                    0xdc00..=0xdfff => char::REPLACEMENT_CHARACTER,
                    _ => char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER),
                }
            }
            _ => {
                let shown = self.text[start + 1..]
                    .chars()
                    .next()
                    .map_or_else(String::new, |c| c.to_string());
                return Err(self.error_at(start, format!("invalid escape `\\{shown}`")));
            }
        };
        out.push(c);
        Ok(())
    }

    /// Four hex digits after `\u`.
    fn hex4(&mut self, escape: usize) -> Result<u16, SyntaxError> {
        let digits = self.bytes.get(self.pos..self.pos + 4);
        let unit = digits
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u16::from_str_radix(d, 16).ok())
            .ok_or_else(|| self.error_at(escape, "`\\u` must be followed by four hex digits"))?;
        self.pos += 4;
        Ok(unit)
    }

    /// The character for high surrogate `high`, combined with a `\uDC00`..`\uDFFF` right after
    /// it; U+FFFD when none follows (the next escape is then read on its own).
    fn low_surrogate(&mut self, high: u16) -> char {
        let follows = self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u");
        if follows {
            let saved = self.pos;
            self.pos += 2;
            if let Ok(low @ 0xdc00..=0xdfff) = self.hex4(saved) {
                let code = 0x10000 + ((u32::from(high) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
                return char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
            }
            self.pos = saved;
        }
        char::REPLACEMENT_CHARACTER
    }

    /// Skips JSON whitespace and comments.
    fn skip_trivia(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.pos += 1,
                Some(b'/') => match self.bytes.get(self.pos + 1) {
                    Some(b'/') => {
                        self.pos = self.text[self.pos..]
                            .find('\n')
                            .map_or(self.text.len(), |i| self.pos + i);
                    }
                    Some(b'*') => match self.text[self.pos + 2..].find("*/") {
                        Some(i) => self.pos += 2 + i + 2,
                        None => return Err(self.error_here("unclosed `/*` comment")),
                    },
                    _ => return Err(self.unexpected("outside a comment")),
                },
                _ => return Ok(()),
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn error_at(&self, offset: usize, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            message: message.into(),
            offset,
        }
    }

    fn error_here(&self, message: impl Into<String>) -> SyntaxError {
        self.error_at(self.pos, message)
    }

    /// "expected X, found Y" at the current position.
    fn expected(&self, what: &str) -> SyntaxError {
        self.error_here(format!("expected {what}, found {}", self.found()))
    }

    /// "unexpected Y WHERE" at the current position.
    fn unexpected(&self, place: &str) -> SyntaxError {
        self.error_here(format!("unexpected {} {place}", self.found()))
    }

    fn found(&self) -> String {
        self.text[self.pos..]
            .chars()
            .next()
            .map_or_else(|| "end of text".to_owned(), describe)
    }
}

/// A character for a message: printable ones in backticks, others as U+XXXX.
fn describe(c: char) -> String {
    if c.is_control() || is_js_whitespace(c) && c != ' ' || c == '\u{fffd}' {
        format!("U+{:04X}", u32::from(c))
    } else {
        format!("`{c}`")
    }
}

fn empty_container(object: bool) -> Value {
    if object {
        Value::Object(Object::new())
    } else {
        Value::Array(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> String {
        match parse(text) {
            Ok(doc) => doc.value.to_json().unwrap_or_default(),
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn accepted_table() {
        let cases = [
            (
                "plain object",
                r#"{"a": 1, "b": [true, false, null]}"#,
                r#"{"a":1,"b":[true,false,null]}"#,
            ),
            ("scalar top level", "  3.50 ", "3.5"),
            ("line comment", "// c\n{\"a\": 1} // tail", r#"{"a":1}"#),
            (
                "block comment",
                "{ /* x */ \"a\" /**/ : /* y */ 2 }",
                r#"{"a":2}"#,
            ),
            (
                "comment chars inside strings",
                r#"{"a": "x // y /* z */"}"#,
                r#"{"a":"x // y /* z */"}"#,
            ),
            ("unclosed line comment at the end", "{}//", "{}"),
            ("crlf line comment", "{// c\r\n\"a\":1}", r#"{"a":1}"#),
            (
                "repeated key: first position, last value",
                r#"{"a":1,"b":2,"a":3}"#,
                r#"{"a":3,"b":2}"#,
            ),
            (
                "huge exponent is infinite",
                r#"[1e400, -1e400]"#,
                "[null,null]",
            ),
            ("negative zero", "-0", "0"),
            (
                "exponent forms",
                "[1E2, 1e+2, 1e-2, 0.5e1]",
                "[100,100,0.01,5]",
            ),
            (
                "escapes",
                r#""\"\\\/\b\f\n\r\t\u0041\u00e9""#,
                r#""\"\\/\b\f\n\r\tAé""#,
            ),
            ("surrogate pair", r#""\ud83d\udc4D""#, "\"\u{1f44d}\""),
            (
                "lone surrogates",
                r#""\ud83dx\udc4d""#,
                "\"\u{fffd}x\u{fffd}\"",
            ),
            (
                "high then non-low escape",
                r#""\ud83d\u0041""#,
                "\"\u{fffd}A\"",
            ),
            (
                "non-ascii text",
                "{\"é\": \"ü\u{2028}\"}",
                "{\"é\":\"ü\u{2028}\"}",
            ),
            ("del is not a control", "\"\u{7f}\"", "\"\u{7f}\""),
            (
                "comment with ordinary unicode",
                "// ünïcödé \u{85}\n{}",
                "{}",
            ),
        ];
        for (name, input, expected) in cases {
            assert_eq!(json(input), expected, "{name}");
        }
    }

    #[test]
    fn rejected_table() {
        // (name, input, offset of the error)
        let cases = [
            ("trailing comma in object", r#"{"a": 1,}"#, 7),
            ("trailing comma in array", "[1, ]", 2),
            ("single quotes", "{'a': 1}", 1),
            ("single-quoted value", r#"{"a": 'x'}"#, 6),
            ("hex", r#"{"a": 0x10}"#, 7),
            ("leading zero", "01", 1),
            ("leading plus", "+1", 0),
            ("leading dot", ".5", 0),
            ("trailing dot", "1.", 2),
            ("bare exponent", "1e", 2),
            ("NaN", "NaN", 0),
            ("Infinity", "Infinity", 0),
            ("unquoted key", "{a: 1}", 1),
            ("bom", "\u{feff}{}", 0),
            ("no-break space", "{\u{a0}}", 1),
            ("vertical tab", "{\u{b}}", 1),
            ("raw tab in string", "\"a\tb\"", 2),
            ("raw newline in string", "\"a\nb\"", 2),
            ("bad escape", r#""\x""#, 1),
            ("short unicode escape", r#""\u12""#, 1),
            ("unterminated string", r#"{"a": "x"#, 6),
            ("empty text", "", 0),
            ("only a comment", "// nothing", 10),
            ("two values", "{} {}", 3),
            ("missing colon", r#"{"a" 1}"#, 5),
            ("missing comma", r#"{"a": 1 "b": 2}"#, 8),
            ("lone slash", "{} /", 3),
            ("comment between minus and digit", "-/**/1", 1),
            ("comment inside a literal", "tr/**/ue", 0),
            ("closing comment without opening", "{} */", 3),
            ("unclosed block comment", "{} /* open", 3),
            ("unclosed block comment inside", "{\"a\": /* 1}", 6),
            ("line comment swallows the closer", "{\"a\": 1 // }", 12),
            ("unclosed array", "[1, 2", 5),
            ("double comma", "[1,,2]", 3),
            ("truncated literal", "[tru]", 1),
        ];
        for (name, input, offset) in cases {
            match parse(input) {
                Ok(doc) => panic!("{name}: accepted as {:?}", doc.value),
                Err(e) => assert_eq!(e.offset, offset, "{name}: {e}"),
            }
        }
    }

    #[test]
    fn messages_name_the_problem() {
        let cases = [
            (r#"{"a": 1,}"#, "trailing commas are not allowed at byte 7"),
            (
                "{'a': 1}",
                "expected a double-quoted property name, found `'` at byte 1",
            ),
            (
                "[1 2]",
                "expected `,` or `]` in an array, found `2` at byte 3",
            ),
            (
                "{\u{a0}}",
                "expected a double-quoted property name, found U+00A0 at byte 1",
            ),
            (
                "{} x",
                "unexpected `x` after the end of the JSON value at byte 3",
            ),
            (
                "",
                "unexpected end of text where a value should start at byte 0",
            ),
        ];
        for (input, expected) in cases {
            let error = parse(input).expect_err(input);
            assert_eq!(error.to_string(), expected, "{input:?}");
        }
    }

    #[test]
    fn top_level_keys_in_order_of_appearance() {
        let doc = parse("{\"b\": {\"x\": 1}, \"a\": 2, \"b\": 3}").expect("parses");
        let keys: Vec<(&str, usize)> = doc
            .top_level_keys
            .iter()
            .map(|k| (k.key.as_str(), k.offset))
            .collect();
        assert_eq!(keys, [("b", 1), ("a", 16), ("b", 24)]);
    }

    #[test]
    fn deep_nesting_is_checked_without_recursion() {
        let depth = 200_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let doc = parse(&text).expect("deep arrays parse");
        // Levels past MAX_DEPTH are kept as empty containers of the same type.
        let mut value = &doc.value;
        let mut levels = 0;
        while let Value::Array(items) = value {
            levels += 1;
            match items.first() {
                Some(inner) => value = inner,
                None => break,
            }
        }
        assert_eq!(levels, MAX_DEPTH + 1);

        let unbalanced = format!("{}{}", "{\"a\":".repeat(depth), "1");
        assert!(parse(&unbalanced).is_err());
        let mixed = format!("{}1{}", "[{\"k\":".repeat(depth), "}]".repeat(depth));
        assert!(parse(&mixed).is_ok());
        let wrong_close = format!("{}1{}", "[".repeat(depth), "}".repeat(depth));
        assert!(parse(&wrong_close).is_err());
    }

    #[test]
    fn opaque_levels_keep_their_type() {
        let text = format!(
            "{}{{\"a\": [1]}}{}",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        let doc = parse(&text).expect("parses");
        let mut value = &doc.value;
        for _ in 0..MAX_DEPTH {
            match value {
                Value::Array(items) => value = &items[0],
                other => panic!("expected an array, got {other:?}"),
            }
        }
        assert_eq!(value, &Value::Object(Object::new()));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Any JSON value `JSON.stringify` can print (finite numbers, any strings).
        fn json_value() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<f64>()
                    .prop_filter("finite", |n| n.is_finite())
                    .prop_map(Value::Number),
                any::<String>().prop_map(Value::String),
            ];
            leaf.prop_recursive(4, 32, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                    prop::collection::vec(("[a-z0-9]{0,3}", inner), 0..4)
                        .prop_map(|entries| Value::Object(entries.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #[test]
            fn stringified_values_read_back(value in json_value()) {
                let text = value.to_json().unwrap_or_default();
                let parsed = parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(parsed.value.to_json(), Some(text));
            }

            #[test]
            fn comments_between_tokens_change_nothing(value in json_value()) {
                let text = value.to_json().unwrap_or_default();
                let commented = format!("// lead\n/* a */{}/* b */ // tail", text);
                let parsed = parse(&commented).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(parsed.value.to_json(), Some(text));
            }

            #[test]
            fn any_text_gives_a_value_or_an_error_in_bounds(text in "\\PC{0,64}") {
                if let Err(error) = parse(&text) {
                    prop_assert!(error.offset <= text.len());
                }
            }

            #[test]
            fn json_like_text_never_panics(text in r#"[{}\[\],:"\\/*\n \tue0-9.+\-a-z']{0,64}"#) {
                if let Err(error) = parse(&text) {
                    prop_assert!(error.offset <= text.len());
                }
            }
        }
    }
}
