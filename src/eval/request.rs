//! Reading an `eval` request line: the JSON checked, the texts decoded, the rest converted for
//! the engine.
//!
//! Nearly all of a request is its rule texts, JSON strings with an escape on every line, which
//! `serde_json` decodes at over 100 instructions an escape, each into fresh memory (and only
//! skipping over them costs it about as much). So the usual request is read the fast way: a small
//! reader walks the request object itself, decodes the texts in place, in the line, with
//! [`unescape`], and hands every other field's value to `serde_json`. A line out of the ordinary
//! (not valid JSON or not an object, a text that is not a string, a field given twice,
//! `serde_json`'s private tokens) is put back as it came and read the plain way, through a
//! `serde_json::Value`, so that every answer and every error message is the one that reading
//! gives. Texts with `\u` or `\/` escapes are decoded by `serde_json`.

use super::unescape::{reencode, unescape};
use pi_rules_core::find;
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

/// Reads request lines, keeping its buffers from one request to the next.
#[derive(Default)]
pub(super) struct Reader {
    /// The JSON of the last request's texts that `serde_json` decoded.
    saved: Vec<u8>,
    /// The last request, if it was read the plain way.
    json: Option<Json>,
}

impl Reader {
    /// Reads one request line, which must be valid UTF-8, decoding its texts in place; an error
    /// is the message of the error response.
    pub(super) fn read<'a>(&'a mut self, line: &'a mut [u8]) -> Result<Request<'a>, String> {
        self.json = None;
        match read_fast(line, &mut self.saved) {
            Some(fields) => fields.request(line),
            // The line is as it came, valid UTF-8 (without a copy).
            None => read_plain(&String::from_utf8_lossy(line), &mut self.json),
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

/// Reads a request line the fast way, decoding its texts in place, or `None` when it must be read
/// the plain way; the line is then as it came.
fn read_fast(line: &mut [u8], saved: &mut Vec<u8>) -> Option<Fields> {
    saved.clear();
    let mut texts = Texts {
        decoded: Vec::new(),
        saved,
    };
    let fields = Fields::read(&mut Cursor { line, at: 0 }, &mut texts);
    if fields.is_none() {
        texts.put_back(line);
    }
    fields
}

/// A request object read the fast way: where its texts are in the line, decoded, and its other
/// fields as JSON.
#[derive(Default)]
struct Fields {
    rules: Option<Vec<Range<usize>>>,
    prompt: Option<Range<usize>>,
    rest: Map<String, Json>,
}

impl Fields {
    /// Reads the request object that is all of the cursor's line, decoding its texts in place;
    /// `None` when it must be read the plain way.
    fn read(cursor: &mut Cursor<'_>, texts: &mut Texts<'_>) -> Option<Fields> {
        let mut fields = Fields::default();
        cursor.expect(b'{')?;
        let mut more = !cursor.eat(b'}');
        while more {
            let key = cursor.key()?;
            cursor.expect(b':')?;
            match key.as_str() {
                // A text given twice is left to the plain reading, where the last one wins.
                "rules" if fields.rules.is_some() => return None,
                "prompt" if fields.prompt.is_some() => return None,
                "rules" => fields.rules = Some(cursor.texts(texts)?),
                "prompt" => fields.prompt = Some(cursor.text(texts)?),
                // `serde_json::Value` reads an object whose first key is one of its private
                // tokens as something else.
                token if token.starts_with("$serde_json::private::") => return None,
                // The last of two fields with one key wins, as in the plain reading.
                _ => {
                    fields.rest.insert(key, cursor.value()?);
                }
            }
            more = cursor.eat(b',');
            if !more {
                cursor.expect(b'}')?;
            }
        }
        cursor.skip_whitespace();
        (cursor.at == cursor.line.len()).then_some(fields)
    }

    /// The request, with its texts in `line`, where they were decoded.
    fn request(self, line: &[u8]) -> Result<Request<'_>, String> {
        // The line was valid UTF-8, and decoding only replaced escapes, which are ASCII.
        let text = |range: &Range<usize>| {
            let text = line.get(range.clone()).map(std::str::from_utf8);
            text.and_then(Result::ok)
                .ok_or_else(|| "a text is not valid UTF-8 once decoded".to_owned())
        };
        let rules = self
            .rules
            .map(|ranges| ranges.iter().map(text).collect::<Result<Vec<_>, _>>());
        let prompt = self.prompt.map(|range| text(&range));
        Request::from_fields(&self.rest, rules, prompt)
    }
}

/// The texts of a request decoded in place, with what it takes to put the line back as it came.
struct Texts<'s> {
    decoded: Vec<Decoded>,
    /// The JSON of the texts that `serde_json` decoded, one after the other.
    saved: &'s mut Vec<u8>,
}

/// A text decoded in place: at `start`, `written` bytes of text where its JSON took `read` bytes
/// (without the quotes), which were either decoded by [`unescape`] or are kept in `saved`.
struct Decoded {
    start: usize,
    read: usize,
    written: usize,
    saved: Option<Range<usize>>,
}

impl Texts<'_> {
    /// Puts every text back in `line` as it came.
    fn put_back(&self, line: &mut [u8]) {
        for text in &self.decoded {
            let Some(place) = line.get_mut(text.start..text.start + text.read) else {
                continue;
            };
            match &text.saved {
                None => reencode(place, text.read, text.written),
                Some(saved) => {
                    let json = self.saved.get(saved.clone());
                    if let Some(json) = json.filter(|json| json.len() == place.len()) {
                        place.copy_from_slice(json);
                    }
                }
            }
        }
    }
}

/// A position in a request line, read the way `serde_json` reads JSON.
struct Cursor<'a> {
    line: &'a mut [u8],
    at: usize,
}

impl Cursor<'_> {
    /// Skips JSON whitespace (space, tab, line feed and carriage return).
    fn skip_whitespace(&mut self) {
        let rest = self.line.get(self.at..).unwrap_or_default();
        self.at += rest
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(rest.len());
    }

    /// Skips whitespace, then `byte` if it comes next; whether it did.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let next = self.line.get(self.at) == Some(&byte);
        self.at += usize::from(next);
        next
    }

    /// Skips whitespace, then `byte`, which must come next.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    /// Reads a key: a string, copied as it is, or decoded by `serde_json` if it has escapes.
    fn key(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let rest = self.line.get(self.at..)?;
        let end = find::memchr2(b'"', b'\\', rest)?;
        let plain = rest.get(..end)?;
        if rest.get(end) == Some(&b'"') && plain.iter().all(|&b| b >= 0x20) {
            let key = std::str::from_utf8(plain).ok()?.to_owned();
            self.at += end + 1;
            return Some(key);
        }
        self.serde_string()
    }

    /// Reads an array of strings, decoding each in place; where each is.
    fn texts(&mut self, texts: &mut Texts<'_>) -> Option<Vec<Range<usize>>> {
        self.expect(b'[')?;
        let mut ranges = Vec::new();
        let mut more = !self.eat(b']');
        while more {
            ranges.push(self.text(texts)?);
            more = self.eat(b',');
            if !more {
                self.expect(b']')?;
            }
        }
        Some(ranges)
    }

    /// Reads a string, decoding it in place; where it is.
    fn text(&mut self, texts: &mut Texts<'_>) -> Option<Range<usize>> {
        self.expect(b'"')?;
        let start = self.at;
        let contents = self.line.get_mut(start..)?;
        let decoded = match unescape(contents) {
            // What was read includes the closing quote.
            Ok((read, written)) => Decoded {
                start,
                read: read - 1,
                written,
                saved: None,
            },
            Err((read, written)) => {
                reencode(contents, read, written);
                self.decode_with_serde(start, texts.saved)?
            }
        };
        self.at = start + decoded.read + 1;
        let range = start..start + decoded.written;
        texts.decoded.push(decoded);
        Some(range)
    }

    /// Decodes in place, with `serde_json`, the string whose contents start at `start`, keeping
    /// its JSON in `saved`: strings with `\u` escapes (paired surrogates or lone ones) or `\/`,
    /// and malformed ones, which `serde_json` refuses.
    fn decode_with_serde(&mut self, start: usize, saved: &mut Vec<u8>) -> Option<Decoded> {
        let text = self.serde_string()?;
        let read = self.at.checked_sub(start + 1)?;
        let json = self.line.get(start..start + read)?;
        let kept = saved.len()..saved.len() + read;
        saved.extend_from_slice(json);
        // Decoded, a string never takes more bytes than its JSON.
        let place = self.line.get_mut(start..start + text.len())?;
        if text.len() > read {
            return None;
        }
        place.copy_from_slice(text.as_bytes());
        Some(Decoded {
            start,
            read,
            written: text.len(),
            saved: Some(kept),
        })
    }

    /// Reads the string whose opening quote was just read with `serde_json`.
    fn serde_string(&mut self) -> Option<String> {
        let quote = self.at.checked_sub(1)?;
        let mut strings = Deserializer::from_slice(self.line.get(quote..)?).into_iter::<String>();
        let text = strings.next()?.ok()?;
        self.at = quote + strings.byte_offset();
        Some(text)
    }

    /// Reads any JSON value with `serde_json`.
    fn value(&mut self) -> Option<Json> {
        let rest = self.line.get(self.at..)?;
        let mut values = Deserializer::from_slice(rest).into_iter::<Json>();
        let value = values.next()?.ok()?;
        let read = values.byte_offset();
        // The plain reading counts nesting (up to 128) from the start of the line, this one from
        // the start of the value: a deeply nested value is left to the plain reading.
        let brackets = rest.get(..read)?;
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
    /// `reader` took the fast way. A line left to the plain reading must be put back as it came.
    fn agree(reader: &mut Reader, line: &str) -> bool {
        let mut bytes = line.as_bytes().to_vec();
        let fast = read_fast(&mut bytes, &mut Vec::new()).is_some();
        if !fast {
            assert_eq!(String::from_utf8_lossy(&bytes), line, "put back");
        }
        let mut bytes = line.as_bytes().to_vec();
        let mut json = None;
        assert_eq!(
            reader.read(&mut bytes),
            read_plain(line, &mut json),
            "{line}"
        );
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
    fn texts_are_decoded_in_place_and_lines_left_to_the_plain_reading_put_back() {
        let line = r#"{"rules": ["a\nb", "\u00e9\/\"", "c"], "prompt": "\t", "x": 1}"#;
        let mut bytes = line.as_bytes().to_vec();
        let mut saved = Vec::new();
        let fields = read_fast(&mut bytes, &mut saved).expect("fast");
        assert_eq!(fields.rules, Some(vec![12..15, 20..24, 34..35]));
        assert_eq!(&bytes[12..15], b"a\nb");
        assert_eq!(&bytes[20..24], "\u{e9}/\"".as_bytes());
        assert_eq!(fields.prompt, Some(50..51));
        assert_eq!(saved, br#"\u00e9\/\""#);
        // The same texts, then something the plain reading must read: all put back.
        let line = line.replace("1}", "1, \"rules\": []}");
        let mut bytes = line.as_bytes().to_vec();
        assert!(read_fast(&mut bytes, &mut saved).is_none());
        assert_eq!(bytes, line.as_bytes());
    }
}
