//! Reading an `eval` request line: the JSON checked, the texts decoded, the rest converted for
//! the engine.
//!
//! Nearly all of a request is its rule texts, JSON strings with an escape on every line, which
//! `serde_json` decodes at over 100 instructions an escape, each into a fresh `String` (and even
//! only skipping over them costs it about as much). So the usual request is read the fast way: a
//! small reader walks the request object itself, decodes the texts with [`unescape`] into one
//! buffer that the engine keeps from one request to the next, and hands every other field's value
//! to `serde_json`. Whatever is out of the ordinary there (a line that is not valid JSON or not an
//! object, a text that is not a string, a field given twice, serde_json's private tokens) is read
//! the plain way instead, through a `serde_json::Value`, so that every answer and every error
//! message is the one that reading gives. Texts with `\u` escapes are decoded by `serde_json`.

use super::unescape::unescape;
use pi_rules_core::value::js_number;
use pi_rules_core::{Features, Settings, Value};
use serde_json::{Deserializer, Map, Value as Json};
use std::ops::Range;

/// A request, checked and converted for the engine.
#[cfg_attr(test, derive(Debug, PartialEq))]
pub(super) enum Request<'a> {
    Assemble {
        rules: Vec<&'a str>,
        settings: Settings,
        features: Features,
        cycles: String,
    },
    Render {
        prompt: &'a str,
        settings: Settings,
    },
}

/// Reads request lines, keeping its buffer of texts from one request to the next.
#[derive(Default)]
pub(super) struct Reader {
    /// The decoded texts of the last request, one after the other.
    texts: Vec<u8>,
    /// The last request, if it was read the plain way.
    json: Option<Json>,
}

impl Reader {
    /// Reads one request line; an error is the message of the error response.
    pub(super) fn read<'a>(&'a mut self, line: &'a str) -> Result<Request<'a>, String> {
        self.json = None;
        match read_fast(line, &mut self.texts) {
            Some(request) => request,
            None => read_plain(line, &mut self.json),
        }
    }
}

/// Reads a request line the plain way, through a `serde_json::Value` (which `json` holds).
fn read_plain<'a>(line: &str, json: &'a mut Option<Json>) -> Result<Request<'a>, String> {
    let json = json.insert(
        serde_json::from_str(line).map_err(|err| format!("request is not valid JSON: {err}"))?,
    );
    Request::from_json(json)
}

impl<'a> Request<'a> {
    /// Reads a request parsed as a `serde_json::Value`.
    fn from_json(request: &'a Json) -> Result<Request<'a>, String> {
        let request = request
            .as_object()
            .ok_or("a request must be a JSON object with `rules` or `prompt`")?;
        let rules = request
            .get("rules")
            .map(|rules| string_array(rules, "rules"));
        let prompt = request.get("prompt").map(|prompt| {
            prompt
                .as_str()
                .ok_or_else(|| "`prompt` must be a string".into())
        });
        Request::from_fields(request, rules, prompt)
    }

    /// Reads a request from its `rules` and `prompt` as read (each an error if it is not what it
    /// should be) and its other `fields`.
    fn from_fields(
        fields: &Map<String, Json>,
        rules: Option<Result<Vec<&'a str>, String>>,
        prompt: Option<Result<&'a str, String>>,
    ) -> Result<Request<'a>, String> {
        let settings = settings(fields)?;
        if let Some(rules) = rules {
            let rules = rules?;
            let features = features(fields)?;
            let cycles = match fields.get("review_loop_max_cycles") {
                None | Some(Json::Null) => "3".to_owned(),
                Some(Json::Number(n)) => js_number(n.as_f64().unwrap_or(f64::NAN)),
                Some(Json::String(s)) => s.clone(),
                Some(_) => return Err("`review_loop_max_cycles` must be a number".into()),
            };
            Ok(Request::Assemble {
                rules,
                settings,
                features,
                cycles,
            })
        } else if let Some(prompt) = prompt {
            Ok(Request::Render {
                prompt: prompt?,
                settings,
            })
        } else {
            Err("a request needs `rules` (an assembly) or `prompt` (a render)".into())
        }
    }
}

/// Reads a request line the fast way, with its texts decoded into `texts`, or `None` when the
/// line must be read the plain way.
fn read_fast<'a>(line: &'a str, texts: &'a mut Vec<u8>) -> Option<Result<Request<'a>, String>> {
    // Texts never take more bytes decoded than escaped.
    reuse(texts, line.len());
    let mut decoded = Texts {
        bytes: texts,
        len: 0,
    };
    let fields = Fields::read(line, &mut decoded)?;
    let len = decoded.len;
    // Decoding only ever replaces escapes, which are ASCII, so the texts are valid UTF-8.
    let texts = std::str::from_utf8(texts.get(..len)?).ok()?;
    let text = |range: &Range<usize>| texts.get(range.clone());
    let rules = match &fields.rules {
        Some(ranges) => Some(Ok(ranges.iter().map(text).collect::<Option<Vec<_>>>()?)),
        None => None,
    };
    let prompt = match &fields.prompt {
        Some(range) => Some(Ok(text(range)?)),
        None => None,
    };
    Some(Request::from_fields(&fields.rest, rules, prompt))
}

/// Makes `texts` `bytes` long, first giving back capacity that requests much longer than this
/// one left behind (as the line reader does). What it holds is not cleared, only overwritten.
fn reuse(texts: &mut Vec<u8>, bytes: usize) {
    if texts.capacity() < bytes || texts.capacity() > 4 * bytes.max(64 << 10) {
        // Zeroed memory from the allocator: the system's fresh pages, not written to.
        *texts = vec![0; bytes];
    } else {
        texts.resize(bytes, 0);
    }
}

/// The decoded texts of a request, one after the other at the start of `bytes`.
struct Texts<'b> {
    bytes: &'b mut [u8],
    len: usize,
}

impl Texts<'_> {
    /// Reads a string at `cursor`, decoding it onto the end of the texts; where it is.
    fn read(&mut self, cursor: &mut Cursor<'_>) -> Option<Range<usize>> {
        let start = self.len;
        self.len += cursor.text(self.bytes.get_mut(start..)?)?;
        Some(start..self.len)
    }

    /// Reads an array of strings at `cursor`, decoding each onto the end of the texts; where each
    /// is.
    fn read_array(&mut self, cursor: &mut Cursor<'_>) -> Option<Vec<Range<usize>>> {
        cursor.expect(b'[')?;
        let mut ranges = Vec::new();
        let mut more = !cursor.eat(b']');
        while more {
            ranges.push(self.read(cursor)?);
            more = cursor.eat(b',');
            if !more {
                cursor.expect(b']')?;
            }
        }
        Some(ranges)
    }
}

/// A request object read the fast way: where its texts are, and its other fields as JSON.
#[derive(Default)]
struct Fields {
    rules: Option<Vec<Range<usize>>>,
    prompt: Option<Range<usize>>,
    rest: Map<String, Json>,
}

impl Fields {
    /// Reads the request object that is all of `line`, decoding its texts onto `texts`; `None`
    /// when it must be read the plain way.
    fn read(line: &str, texts: &mut Texts<'_>) -> Option<Fields> {
        let mut fields = Fields::default();
        let mut cursor = Cursor { line, at: 0 };
        // Longer keys are none the engine reads; they are left to the plain reading.
        let mut key_buffer = [0; 64];
        cursor.expect(b'{')?;
        let mut more = !cursor.eat(b'}');
        while more {
            let key_len = cursor.text(&mut key_buffer)?;
            let key = key_buffer.get(..key_len)?;
            cursor.expect(b':')?;
            match key {
                // A text given twice is left to the plain reading, where the last one wins.
                b"rules" if fields.rules.is_some() => return None,
                b"prompt" if fields.prompt.is_some() => return None,
                b"rules" => fields.rules = Some(texts.read_array(&mut cursor)?),
                b"prompt" => fields.prompt = Some(texts.read(&mut cursor)?),
                // `serde_json::Value` reads an object whose first key is one of its private
                // tokens as something else.
                token if token.starts_with(b"$serde_json::private::") => return None,
                _ => {
                    let key = String::from_utf8(key.to_vec()).ok()?;
                    // The last of two fields with one key wins, as in the plain reading.
                    fields.rest.insert(key, cursor.value()?);
                }
            }
            more = cursor.eat(b',');
            if !more {
                cursor.expect(b'}')?;
            }
        }
        cursor.skip_whitespace();
        (cursor.at == line.len()).then_some(fields)
    }
}

/// A position in a request line, read the way `serde_json` reads JSON.
struct Cursor<'a> {
    line: &'a str,
    at: usize,
}

impl Cursor<'_> {
    /// Skips JSON whitespace (space, tab, line feed and carriage return).
    fn skip_whitespace(&mut self) {
        let rest = self.line.as_bytes().get(self.at..).unwrap_or_default();
        self.at += rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
    }

    /// Skips whitespace, then `byte` if it comes next; whether it did.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let next = self.line.as_bytes().get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    /// Skips whitespace, then `byte`, which must come next.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    /// Reads a string, decoding it to the start of `out`; how many bytes it takes there.
    fn text(&mut self, out: &mut [u8]) -> Option<usize> {
        self.expect(b'"')?;
        let contents = self.line.as_bytes().get(self.at..)?;
        if let Some((read, written)) = unescape(contents, out) {
            self.at += read;
            return Some(written);
        }
        // `\u` escapes, paired surrogates or lone ones, are decoded or refused by serde_json.
        let quote = self.at - 1;
        let mut strings = Deserializer::from_str(self.line.get(quote..)?).into_iter::<String>();
        let text = strings.next()?.ok()?;
        out.get_mut(..text.len())?.copy_from_slice(text.as_bytes());
        self.at = quote + strings.byte_offset();
        Some(text.len())
    }

    /// Reads any JSON value with `serde_json`.
    fn value(&mut self) -> Option<Json> {
        let rest = self.line.get(self.at..)?;
        let mut values = Deserializer::from_str(rest).into_iter::<Json>();
        let value = values.next()?.ok()?;
        let read = values.byte_offset();
        // The plain reading counts nesting (up to 128) from the start of the line, this one from
        // the start of the value: a deeply nested value is left to the plain reading.
        let brackets = rest.as_bytes().get(..read)?;
        if brackets.iter().filter(|b| matches!(b, b'[' | b'{')).count() >= 64 {
            return None;
        }
        self.at += read;
        Some(value)
    }
}

fn string_array<'a>(value: &'a Json, field: &str) -> Result<Vec<&'a str>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("`{field}` must be an array of strings"))?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .ok_or_else(|| format!("`{field}` must be an array of strings"))
        })
        .collect()
}

/// Known keys in order (`known_keys`, or the keys of `settings`), each with its value or
/// undefined.
fn settings(request: &Map<String, Json>) -> Result<Settings, String> {
    let empty = Map::new();
    let values = match request.get("settings") {
        None | Some(Json::Null) => &empty,
        Some(Json::Object(map)) => map,
        Some(_) => return Err("`settings` must be an object".into()),
    };
    let mut settings = Settings::new();
    let mut add = |key: &str| {
        let value = values
            .get(key)
            .cloned()
            .map_or(Value::Undefined, Value::from);
        settings.insert(key.to_owned(), value);
    };
    match request.get("known_keys") {
        None | Some(Json::Null) => values.keys().for_each(|k| add(k)),
        Some(keys) => string_array(keys, "known_keys")?.into_iter().for_each(add),
    }
    Ok(settings)
}

fn features(request: &Map<String, Json>) -> Result<Features, String> {
    let mut features = Features::new();
    match request.get("features") {
        None | Some(Json::Null) => {}
        Some(Json::Object(map)) => {
            for (name, on) in map {
                let on = on
                    .as_bool()
                    .ok_or_else(|| format!("feature `{name}` must be true or false"))?;
                features.set(name.clone(), on);
            }
        }
        Some(_) => return Err("`features` must be an object of booleans".into()),
    }
    Ok(features)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// JSON strings, valid and not, with every kind of escape.
    const TEXTS: &[&str] = &[
        r#""""#,
        r#""plain""#,
        r#""a{{/IF}}\n{{IF: x}}b{{/IF}}\n""#,
        r#""\"\\\/\b\f\n\r\t""#,
        r#""\u0041\u00e9\u2028\uFFFF\u0000""#,
        r#""pair \ud83d\ude00 and \uD83D\uDE00""#,
        r#""lone high \ud800""#,
        r#""lone high then text \ud800x""#,
        r#""lone high then escape \ud800\n""#,
        r#""lone high then high \ud800\ud800""#,
        r#""lone high then not a surrogate \ud800\u0041""#,
        r#""lone low \udc00""#,
        r#""escaped backslash then u \\u0041""#,
        r#""invalid escape \x""#,
        r#""short hex \u12""#,
        r#""bad hex \uZZZZ""#,
        "\"raw tab \t\"",
        "\"raw control \u{1}\"",
        "\"raw line feed \n\"",
        "\"raw delete \u{7f}, non-ASCII é😀\u{2028}\u{2029}\u{feff}\"",
        r#""unterminated"#,
        r#""ends in a backslash \"#,
        r#""{{SETTINGS}} {{IF: dco}}d{{/IF}}""#,
    ];

    /// Values of every type for any field, the texts among them.
    const VALUES: &[&str] = &[
        "null",
        "true",
        "3",
        "-0.5e3",
        "1e400",
        "[]",
        "{}",
        r#"["a", 3]"#,
        r#"["a", null]"#,
        r#"[["a"]]"#,
        r#"{"dco": true, "x": [1, "a"], "y": {"z": null}}"#,
        r#"{"a": true, "b": false}"#,
        r#"{"a": 1}"#,
        r#"{"$serde_json::private::RawValue": "[1, 2]"}"#,
        r#"["dco", "x"]"#,
        r#"["a", "b\n", "c\"d"]"#,
        r#"[ "a" , "\u0062" ]"#,
    ];

    /// Keys, including ones that spell the fields with escapes and `serde_json`'s tokens.
    const KEYS: &[&str] = &[
        "rules",
        "rules",
        "prompt",
        "settings",
        "known_keys",
        "features",
        "review_loop_max_cycles",
        r"rul\u0065s",
        r"\u0070rompt",
        "other",
        "$serde_json::private::RawValue",
        "$serde_json::private::Number",
        r"bad \x key",
        r"a \ud83d\ude00 key",
        "a key longer than the sixty-four bytes that the fast reading decodes a key into",
    ];

    /// Reads `line` with `reader` and the plain way, and checks that the two agree; true when
    /// `reader` took the fast way.
    fn agree(reader: &mut Reader, line: &str) -> bool {
        let fast = read_fast(line, &mut Vec::new()).is_some();
        let mut json = None;
        assert_eq!(reader.read(line), read_plain(line, &mut json), "{line}");
        fast
    }

    fn value() -> impl Strategy<Value = String> {
        let text = prop::sample::select(TEXTS).prop_map(str::to_owned);
        let other = prop::sample::select(VALUES).prop_map(str::to_owned);
        let texts = prop::collection::vec(prop::sample::select(TEXTS), 0..4)
            .prop_map(|texts| format!("[{}]", texts.join(", ")));
        // Hostile strings: escapes of every kind, whole or cut short, and raw control bytes.
        let hostile = "([a-z{}/ é😀\u{2028}]|\\\\[nrtbf\"\\\\/ux]|\\\\u[0-9a-fA-F]{0,4}|\
             \\\\u[dD][89abAB][0-9a-f]{2}|\\\\u[dD][c-fC-F][0-9a-f]{2}|[\u{1}\t\u{7f}])*"
            .prop_map(|s| format!("\"{s}\""));
        let any = any::<String>().prop_map(|s| serde_json::to_string(&s).expect("json"));
        prop_oneof![
            3 => text,
            2 => other,
            3 => texts,
            2 => prop::collection::vec(hostile, 0..3).prop_map(|s| format!("[{}]", s.join(","))),
            1 => any.clone(),
            1 => prop::collection::vec(any, 0..3).prop_map(|s| format!("[{}]", s.join(","))),
        ]
    }

    /// Request lines: objects of any fields in any order (keys repeated too), now and then cut
    /// short, followed by something, or not an object at all.
    fn line() -> impl Strategy<Value = String> {
        let field =
            (prop::sample::select(KEYS), value()).prop_map(|(k, v)| format!("\"{k}\": {v}"));
        let object =
            prop::collection::vec(field, 0..5).prop_map(|f| format!("{{{}}}", f.join(", ")));
        (object, 0..12usize, any::<prop::sample::Index>()).prop_map(|(line, variant, at)| {
            match variant {
                0 => {
                    let cut = at.index(line.len() + 1);
                    line.get(..cut).unwrap_or(&line).to_owned()
                }
                1 => format!("{line} x"),
                2 => format!(" \t{line}  "),
                3 => format!("[{line}]"),
                _ => line,
            }
        })
    }

    /// `text` as a valid JSON string, each character written as itself, as its two-character
    /// escape or as `\u` escapes (a surrogate pair above U+FFFF), as `how` picks.
    fn encode(text: &str, how: &[u8]) -> String {
        let mut out = String::from("\"");
        for (c, how) in text.chars().zip(how.iter().cycle()) {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '\n' => Some("\\n"),
                '\t' => Some("\\t"),
                '\r' => Some("\\r"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                '/' => Some("\\/"),
                _ => None,
            };
            match (how % 3, short) {
                (0, _) | (1, None) if c >= ' ' && c != '"' && c != '\\' => out.push(c),
                (0 | 1, Some(short)) => out.push_str(short),
                _ => {
                    let mut units = [0; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
        }
        out.push('"');
        out
    }

    /// Valid requests: texts with escapes of every kind, and the other fields in any order.
    fn ordinary_line() -> impl Strategy<Value = String> {
        let text = (
            prop_oneof![
                any::<String>(),
                "[a{}/ \"\\\\\n\t\r\u{8}\u{c}\u{1}\u{7f}é😀\u{2028}]*",
                prop::sample::select(&["{{/IF}}\n", "{{IF: x}}\n", "a\"b\\c\n"][..])
                    .prop_flat_map(|unit| (0..50usize).prop_map(move |n| unit.repeat(n))),
            ],
            prop::collection::vec(any::<u8>(), 1..8),
        )
            .prop_map(|(text, how)| encode(&text, &how));
        let rules = prop::collection::vec(text.clone(), 0..4)
            .prop_map(|texts| format!("\"rules\": [{}]", texts.join(", ")));
        let prompt = text.prop_map(|text| format!("\"prompt\": {text}"));
        let other = (
            prop::sample::select(&KEYS[3..]),
            prop::sample::select(VALUES),
        )
            .prop_map(|(k, v)| format!("\"{k}\": {v}"));
        (
            prop::option::of(rules),
            prop::option::of(prompt),
            prop::collection::vec(other, 0..3),
        )
            .prop_map(|(rules, prompt, other)| {
                let fields: Vec<String> = rules.into_iter().chain(prompt).chain(other).collect();
                format!("{{{}}}", fields.join(", "))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Whatever the line, the reader reads what the plain reading reads.
        #[test]
        fn reads_any_line_as_the_plain_reading_does(lines in prop::collection::vec(line(), 1..4)) {
            // One reader for several lines: its buffers carry nothing over.
            let mut reader = Reader::default();
            for line in &lines {
                agree(&mut reader, line);
            }
        }

        /// Valid requests, with texts escaped every way, are read as the plain reading does.
        #[test]
        fn reads_valid_requests_as_the_plain_reading_does(
            lines in prop::collection::vec(ordinary_line(), 1..4),
        ) {
            let mut reader = Reader::default();
            for line in &lines {
                agree(&mut reader, line);
            }
        }
    }

    #[test]
    fn ordinary_requests_are_read_the_fast_way_and_agree() {
        let long = serde_json::to_string(&"{{/IF}}\n".repeat(20_000)).expect("json");
        let lines = [
            r#"{"rules": []}"#.to_owned(),
            r#"{"rules": ["a\nb", "\"q\"\\"], "settings": {"dco": true}, "features": {"x": false}}"#.to_owned(),
            r#"{"rules": ["a"], "review_loop_max_cycles": 5, "known_keys": ["dco"], "settings": null}"#.to_owned(),
            r#"{"rules": ["a"], "review_loop_max_cycles": "7"}"#.to_owned(),
            r#"{"prompt": "{{SETTINGS}}\n", "settings": {"dco": false}}"#.to_owned(),
            r#"{"prompt": "p", "rules": ["r"]}"#.to_owned(),
            // The last of two fields with one key wins, as in a `serde_json::Map`.
            r#"{"rules": ["b"], "settings": 3, "settings": {}, "features": {}, "features": 3}"#
                .to_owned(),
            r#"{"rul\u0065s": ["e"]}"#.to_owned(),
            // A `\u` escape in a text is decoded by serde_json, still without the `Value`.
            r#"{"rules": ["\u00e9\ud83d\ude00"]}"#.to_owned(),
            // Errors in the other fields, after a good reading of the texts.
            r#"{"rules": ["a"], "settings": 3}"#.to_owned(),
            r#"{"rules": ["a"], "features": {"x": 1}}"#.to_owned(),
            r#"{"rules": ["a"], "review_loop_max_cycles": []}"#.to_owned(),
            r#"{"rules": ["a"], "known_keys": [1]}"#.to_owned(),
            r#"{"other": 1}"#.to_owned(),
            format!(r#"{{"rules": [{long}, {long}, "x"]}}"#),
        ];
        let mut reader = Reader::default();
        for line in &lines {
            assert!(agree(&mut reader, line), "{line}");
        }
    }

    #[test]
    fn lines_out_of_the_ordinary_are_read_the_plain_way() {
        let deep = format!(
            r#"{{"rules": [{}"a"{}]}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let lines = [
            "",
            "[]",
            "3",
            "\"rules\"",
            "null",
            r#"{"rules": ["a"]"#,
            r#"{"rules": ["a"]} {}"#,
            r#"{"rules": ["a", 3]}"#,
            r#"{"rules": [1e400]}"#,
            r#"{"rules": ["a"], "prompt": 3}"#,
            r#"{"rules": 3}"#,
            r#"{"rules": null}"#,
            r#"{"prompt": null}"#,
            r#"{"prompt": ["a"]}"#,
            r#"{"rules": ["\ud800"]}"#,
            r#"{"rules": ["\udc00\u0041"]}"#,
            r#"{"rules": ["ok"], "prompt": "\ud800"}"#,
            r#"{"rules": ["\x"]}"#,
            "{\"rules\": [\"raw \u{1}\"]}",
            r#"{"$serde_json::private::RawValue": "{\"rules\": [\"a\"]}"}"#,
            r#"{"$serde_json::private::RawValue": "{\"rules\": [\"a\"]}", "rules": ["b"]}"#,
            r#"{"rules": ["b"], "$serde_json::private::RawValue": "{}"}"#,
            r#"{"$serde_json::private::Number": "12"}"#,
            &deep,
            // A text given twice: the first is checked by the plain reading only.
            r#"{"rules": ["\ud800"], "rules": ["b"]}"#,
            r#"{"rules": [3], "rules": ["b"]}"#,
            r#"{"prompt": "a", "\u0070rompt": "b"}"#,
        ];
        let mut reader = Reader::default();
        for line in lines {
            assert!(!agree(&mut reader, line), "{line}");
        }
    }

    #[test]
    fn nesting_is_limited_as_in_the_plain_reading() {
        let mut reader = Reader::default();
        for depth in (1..8).chain(60..70).chain(120..135) {
            let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            let objects = format!("{}1{}", "{\"a\": ".repeat(depth), "}".repeat(depth));
            for value in [nested, objects] {
                let line = format!(r#"{{"rules": ["a"], "settings": {{"x": {value}}}}}"#);
                // The value of `settings` has one bracket more than `value`.
                assert_eq!(agree(&mut reader, &line), depth + 1 < 64, "{line}");
            }
        }
    }

    #[test]
    fn the_texts_buffer_is_reused_and_given_back() {
        let mut texts = Vec::new();
        reuse(&mut texts, 1 << 20);
        assert_eq!(texts.len(), 1 << 20);
        let capacity = texts.capacity();
        reuse(&mut texts, 300 << 10);
        assert_eq!((texts.len(), texts.capacity()), (300 << 10, capacity));
        reuse(&mut texts, 10);
        assert_eq!(texts.len(), 10);
        assert!(texts.capacity() < 1 << 20);
    }
}
