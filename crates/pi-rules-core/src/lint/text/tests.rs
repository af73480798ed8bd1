//! Tests of the text checks through the rule-file path (decode, hidden text, HTML comments, table
//! gaps): tables of texts and their findings and messages, the scanner's table against the
//! Unicode data, linearity on hostile runs; and properties over random texts (valid spans, both
//! scanner drivers agree).

use super::classes::*;
use super::hidden::*;
use super::names::char_name;
use super::*;
use crate::lint::codes::Code;
use crate::lint::testing::codes_of;
use crate::markers;
use icu_properties::CodePointSetData;

fn check(bytes: &[u8]) -> Vec<(Code, Option<String>)> {
    let mut out = FileDiagnostics::new("x.md");
    let text = decode(bytes, &mut out).into_owned();
    let markers = markers::scan(&text);
    check_hidden(&text, &mut out);
    check_table_gaps(&text, 0, &markers, &mut out);
    out.finish(None)
        .into_iter()
        .map(|d| (d.code, Some(d.message.into_owned())))
        .collect()
}

#[test]
fn text_table() {
    use Code::*;
    let cases: &[(&[u8], &[Code])] = &[
        (b"plain", &[]),
        ("\u{feff}bom at start, é, 👍".as_bytes(), &[]),
        (b"a\xffb\xc3", &[InvalidUtf8, InvalidUtf8]),
        ("x\u{202e}y".as_bytes(), &[BidiControl]),
        ("x\u{2066}\u{2069}y".as_bytes(), &[BidiControl]),
        (
            "x\u{200b}y\u{feff}".as_bytes(),
            &[InvisibleCharacter, InvisibleCharacter],
        ),
        ("x\u{e0041}\u{e0042}".as_bytes(), &[TagCharacter]),
        (b"| a |\n\n| b |", &[]),
        (b"| a |\r\n| b |\r\n", &[]),
        (b"| a |\r\n\r\n| b |\r\n", &[CrTableGap]),
        (
            b"| a |\r\n{{IF:x}}\r\n| b |\r\n{{/IF}}\r\n| c |",
            &[CrTableGap, CrTableGap],
        ),
        (b"| a |\n{{IF:x}}\n| b |\n{{/IF}}\n| c |", &[]),
        (b"| a |\r\n\r\ntext\r\n", &[]),
        (b"text\r\n\r\n| b |\r\n", &[]),
    ];
    for (bytes, expected) in cases {
        let got = check(bytes);
        assert_eq!(codes_of(&got), *expected, "{bytes:?}: {got:?}");
    }
}

#[test]
fn messages_table() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"ab\xff",
            "invalid UTF-8 at byte 2: `\\xFF` is read as U+FFFD",
        ),
        ("\u{202e}".as_bytes(), "U+202E RIGHT-TO-LEFT OVERRIDE"),
        (
            "a\u{e0068}\u{e0069}".as_bytes(),
            "2 characters starting with U+E0068",
        ),
    ];
    for (bytes, expected) in cases {
        let got = check(bytes);
        let message = got[0].1.clone().unwrap_or_default();
        assert!(message.contains(expected), "{message:?}");
    }
}

#[test]
fn invalid_utf8_spans_point_at_the_replacement() {
    let mut out = FileDiagnostics::new("x.md");
    let text = decode(b"a\xff\xfeb", &mut out).into_owned();
    for d in out.finish(None) {
        let span = d.span.unwrap_or_default();
        assert_eq!(&text[span], "\u{fffd}");
    }
}

/// `(code, the text of its span)` for every finding of `check`.
fn findings(text: &str) -> Vec<(Code, String)> {
    let mut out = FileDiagnostics::new("x.md");
    check_hidden(text, &mut out);
    out.finish(None)
        .into_iter()
        .map(|d| {
            let span = d.span.unwrap_or_default();
            (d.code, text[span].to_owned())
        })
        .collect()
}

fn messages(text: &str) -> Vec<String> {
    let mut out = FileDiagnostics::new("x.md");
    check_hidden(text, &mut out);
    out.finish(None)
        .into_iter()
        .map(|d| [vec![d.message], d.notes].concat().join(" | "))
        .collect()
}

#[test]
fn hidden_character_table() {
    use Code::*;
    // (text, [(code, what the span covers)])
    let cases: &[(&str, &[(Code, &str)])] = &[
        // Variation selectors.
        ("a\u{fe00}b", &[(VariationSelector, "\u{fe00}")]),
        ("a\u{fe0e}", &[(VariationSelector, "\u{fe0e}")]),
        ("\u{263a}\u{fe0e}", &[(VariationSelector, "\u{fe0e}")]),
        ("a\u{fe0f}", &[(VariationSelector, "\u{fe0f}")]),
        ("\u{fe0f}", &[(VariationSelector, "\u{fe0f}")]),
        ("x\u{e0100}", &[(VariationSelector, "\u{e0100}")]),
        ("a\u{180b}", &[(VariationSelector, "\u{180b}")]),
        (
            "\u{6f22}\u{e0100}\u{e0101}",
            &[(VariationSelector, "\u{e0101}")],
        ),
        (
            "\u{1f600}\u{fe0f}\u{fe0f}",
            &[(VariationSelector, "\u{fe0f}")],
        ),
        (
            "a\u{e0100}\u{e0101}\u{e0102}",
            &[(VariationSelectorRun, "\u{e0100}\u{e0101}\u{e0102}")],
        ),
        (
            "\u{1f600}\u{fe0f}\u{e0158}\u{e0159}",
            &[(VariationSelectorRun, "\u{e0158}\u{e0159}")],
        ),
        // Line ends and controls.
        ("a\rb", &[(BareCarriageReturn, "\r")]),
        ("a\r", &[(BareCarriageReturn, "\r")]),
        ("a\r\r\nb", &[(BareCarriageReturn, "\r")]),
        ("a\r\rb", &[(BareCarriageReturn, "\r\r")]),
        ("a\0b", &[(ControlCharacter, "\0")]),
        ("\u{1}\u{7}\u{8}", &[(ControlCharacter, "\u{1}\u{7}\u{8}")]),
        ("\u{b}", &[(ControlCharacter, "\u{b}")]),
        ("\u{c}", &[(ControlCharacter, "\u{c}")]),
        ("\u{1f}", &[(ControlCharacter, "\u{1f}")]),
        ("a\u{7f}", &[(ControlCharacter, "\u{7f}")]),
        ("\u{80}", &[(ControlCharacter, "\u{80}")]),
        ("\u{85}", &[(ControlCharacter, "\u{85}")]),
        ("\u{9b}", &[(ControlCharacter, "\u{9b}")]),
        ("\u{9f}", &[(ControlCharacter, "\u{9f}")]),
        ("a\u{1b}[2Jb", &[(ControlCharacter, "\u{1b}[2J")]),
        ("\u{1b}[8mhidden", &[(ControlCharacter, "\u{1b}[8m")]),
        (
            "\u{1b}]0;OWNED\u{7}x",
            &[(ControlCharacter, "\u{1b}]0;OWNED\u{7}")],
        ),
        (
            "\u{1b}]8;;http://x\u{1b}\\link",
            &[(ControlCharacter, "\u{1b}]8;;http://x\u{1b}\\")],
        ),
        (
            "\u{1b}[31m\u{1b}[1mred",
            &[(ControlCharacter, "\u{1b}[31m\u{1b}[1m")],
        ),
        ("\u{1b}(Bx", &[(ControlCharacter, "\u{1b}(B")]),
        ("x\u{1b}", &[(ControlCharacter, "\u{1b}")]),
        ("\u{1b}\n", &[(ControlCharacter, "\u{1b}")]),
        // Invisible formatting and fillers.
        ("soft\u{ad}hyphen", &[(InvisibleFormatCharacter, "\u{ad}")]),
        ("a\u{34f}b", &[(InvisibleFormatCharacter, "\u{34f}")]),
        (
            "\u{115f}\u{1160}",
            &[(InvisibleFormatCharacter, "\u{115f}\u{1160}")],
        ),
        ("a\u{3164}b", &[(InvisibleFormatCharacter, "\u{3164}")]),
        ("a\u{ffa0}b", &[(InvisibleFormatCharacter, "\u{ffa0}")]),
        (
            "a\u{17b4}\u{17b5}",
            &[(InvisibleFormatCharacter, "\u{17b4}\u{17b5}")],
        ),
        ("a\u{180e}b", &[(InvisibleFormatCharacter, "\u{180e}")]),
        ("a\u{2065}b", &[(InvisibleFormatCharacter, "\u{2065}")]),
        ("a\u{206a}b", &[(InvisibleFormatCharacter, "\u{206a}")]),
        (
            "\u{fff9}a\u{fffa}b\u{fffb}",
            &[
                (InvisibleFormatCharacter, "\u{fff9}"),
                (InvisibleFormatCharacter, "\u{fffa}"),
                (InvisibleFormatCharacter, "\u{fffb}"),
            ],
        ),
        (
            "a\u{1d173}\u{1d17a}",
            &[(InvisibleFormatCharacter, "\u{1d173}\u{1d17a}")],
        ),
        ("a\u{1bca0}", &[(InvisibleFormatCharacter, "\u{1bca0}")]),
        (
            "a\u{e0080}\u{e01f0}",
            &[(InvisibleFormatCharacter, "\u{e0080}\u{e01f0}")],
        ),
        // Zero-width characters, bidirectional controls, separators.
        ("a\u{200b}b", &[(InvisibleCharacter, "\u{200b}")]),
        ("a\u{200c}b", &[(InvisibleCharacter, "\u{200c}")]),
        ("a\u{200d}b", &[(InvisibleCharacter, "\u{200d}")]),
        ("\u{1f600}\u{200d}a", &[(InvisibleCharacter, "\u{200d}")]),
        ("a\u{200d}\u{1f600}", &[(InvisibleCharacter, "\u{200d}")]),
        (
            "\u{1f600}\u{200d}\u{200d}\u{1f600}",
            &[(InvisibleCharacter, "\u{200d}\u{200d}")],
        ),
        (
            "x\u{2061}\u{2064}",
            &[(InvisibleCharacter, "\u{2061}\u{2064}")],
        ),
        ("a\u{feff}", &[(InvisibleCharacter, "\u{feff}")]),
        ("a\u{2028}b", &[(LineSeparator, "\u{2028}")]),
        ("a\u{2029}b", &[(LineSeparator, "\u{2029}")]),
        (
            "a\u{202a}b\u{202c}",
            &[(BidiControl, "\u{202a}"), (BidiControl, "\u{202c}")],
        ),
        ("\u{2067}x", &[(BidiControl, "\u{2067}")]),
        // Tags.
        ("x\u{e0041}", &[(TagCharacter, "\u{e0041}")]),
        (
            "\u{1f3f4}\u{e0067}\u{e0062}",
            &[(TagCharacter, "\u{e0067}\u{e0062}")],
        ),
        (
            "\u{1f3f4}\u{e0067}\u{e0062}\u{e007f}\u{e0041}",
            &[(TagCharacter, "\u{e0067}\u{e0062}\u{e007f}\u{e0041}")],
        ),
        (
            "\u{1f3f4}\u{e0047}\u{e0042}\u{e007f}",
            &[(TagCharacter, "\u{e0047}\u{e0042}\u{e007f}")],
        ),
        // Private use.
        ("icon \u{e000}", &[(PrivateUseCharacter, "\u{e000}")]),
        (
            "\u{f8ff}\u{f0000}",
            &[(PrivateUseCharacter, "\u{f8ff}\u{f0000}")],
        ),
        ("\u{10fffd}", &[(PrivateUseCharacter, "\u{10fffd}")]),
        // Runs of different classes are separate findings.
        (
            "a\u{200b}\u{202e}\u{200b}",
            &[
                (InvisibleCharacter, "\u{200b}"),
                (BidiControl, "\u{202e}"),
                (InvisibleCharacter, "\u{200b}"),
            ],
        ),
    ];
    for (text, expected) in cases {
        let expected: Vec<(Code, String)> = expected
            .iter()
            .map(|(c, s)| (*c, (*s).to_owned()))
            .collect();
        assert_eq!(findings(text), expected, "{text:?}");
    }
}

#[test]
fn ordinary_text_has_no_findings() {
    let texts = [
        "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}", // family: ZWJ sequence
        "\u{2764}\u{fe0f} \u{26a0}\u{fe0f} \u{2705} \u{274c}", // emoji with VS16
        "\u{1f44d}\u{1f3fd} \u{1f9d1}\u{1f3fd}\u{200d}\u{1f4bb}", // skin tones
        "\u{1f3f3}\u{fe0f}\u{200d}\u{1f308} \u{1f3f4}\u{200d}\u{2620}\u{fe0f}",
        "\u{1f3f3}\u{fe0f}\u{200d}\u{26a7}\u{fe0f} \u{1f43b}\u{200d}\u{2744}\u{fe0f}",
        "\u{1f468}\u{200d}\u{1f9b0} \u{2764}\u{fe0f}\u{200d}\u{1f525}",
        "\u{1f1eb}\u{1f1f7}\u{1f1e9}\u{1f1ea}", // flags
        "\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}", // England
        "\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}", // Scotland
        "#\u{fe0f}\u{20e3} 1\u{fe0f}\u{20e3} *\u{fe0f}\u{20e3}", // keycaps
        "\u{a9}\u{fe0f} \u{203c}\u{fe0f}",
        "漢字とかなとカナ、한국어, 中文。",
        "\u{845b}\u{e0100}城市", // an ideographic variation sequence
        "Ελληνικά, русский, العربية, עברית",
        "\u{645}\u{6cc}\u{200c}\u{62e}\u{648}\u{627}\u{647}\u{645}", // Persian with ZWNJ
        "\u{915}\u{94d}\u{200d}\u{937}",                             // Devanagari with ZWJ
        "\u{1820}\u{180b}", // Mongolian with a free variation selector
        "\u{feff}a BOM first",
        "```\n\tcode\twith tabs\n```\n",
        "a\r\nb\r\n\r\n",
        "é ñ ü — – … “” ‘’ ¡¿ ½ € ™ ° ± × ÷ → ← ✓ ★ ♥",
        "no-break\u{a0}space and narrow\u{202f}one",
        "<!---->, <!-- -->, and text <!-- with no end",
        "`<!-- shown -->` and ``a ` <!-- shown --> b``",
        "```\n<!-- shown in a code block -->\n```\n~~~\n<!-- too -->\n~~~\n",
        "---\nrequires: dco\n# <!-- frontmatter -->\n---\nbody\n",
    ];
    for text in texts {
        assert_eq!(findings(text), Vec::<(Code, String)>::new(), "{text:?}");
    }
}

#[test]
fn html_comment_table() {
    use Code::HtmlComment;
    let cases: &[(&str, &[&str])] = &[
        ("a <!-- secret --> b", &["<!-- secret -->"]),
        ("<!--\nhidden\n-->\ntext", &["<!--\nhidden\n-->"]),
        ("<!--a--> x <!--b-->", &["<!--a-->", "<!--b-->"]),
        ("<!--a\n-->b <!--c-->", &["<!--a\n-->", "<!--c-->"]),
        ("  <!-- unclosed\nrest of file", &["<!--"]),
        ("text\n<!-- unclosed", &["<!--"]),
        ("` <!-- x -->", &["<!-- x -->"]),
        ("```\ncode\n```\n<!-- x -->", &["<!-- x -->"]),
        (
            "~~~\n```\n<!-- in -->\n~~~\n<!-- out -->",
            &["<!-- out -->"],
        ),
        ("---\nrequires: dco\n---\n<!-- body -->", &["<!-- body -->"]),
    ];
    for (text, expected) in cases {
        let got = findings(text);
        assert!(
            got.iter().all(|(c, _)| *c == HtmlComment),
            "{text:?}: {got:?}"
        );
        let spans: Vec<&str> = got.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(spans, *expected, "{text:?}");
    }
    assert!(messages("<!-- unclosed")[0].contains("rest of the file is hidden"));
    assert!(messages("a <!-- do it -->")[0].contains("\"do it\""));
}

#[test]
fn html_comments_gives_the_closed_comments_with_text_outside_code() {
    let text = "a <!-- x --> `<!-- y -->` <!-- -->\n```\n<!-- z -->\n```\n<!--w\n-->\n<!-- open";
    let got: Vec<&str> = html_comments(text, 0)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(got, ["<!-- x -->", "<!--w\n-->"]);
    // From the body's start only.
    assert!(html_comments("<!-- a --> b", 5).is_empty());
}

#[test]
fn messages_name_the_character_and_what_it_hides() {
    let cases: &[(&str, &str)] = &[
        (
            "a\u{fe0e}",
            "variation selector: U+FE0E VARIATION SELECTOR-15",
        ),
        ("x\u{e0101}", "U+E0101 VARIATION SELECTOR-18"),
        (
            "a\u{ad}",
            "invisible formatting character: U+00AD SOFT HYPHEN",
        ),
        ("a\u{3164}", "U+3164 HANGUL FILLER"),
        ("a\u{0}", "control character: U+0000 NULL"),
        ("a\u{7f}", "U+007F DELETE"),
        ("a\u{1b}[2J", "terminal escape sequence: `\\e[2J`"),
        ("\u{1b}]0;x\u{7}", "terminal escape sequence: `\\e]0;x\\a`"),
        ("a\rb", "carriage return (`\\r`) without a line feed"),
        ("a\u{2028}", "Unicode line separator: U+2028 LINE SEPARATOR"),
        (
            "a\u{e000}",
            "private-use character: U+E000 PRIVATE USE CHARACTER",
        ),
        ("a\u{2065}", "U+2065 RESERVED DEFAULT-IGNORABLE CHARACTER"),
        ("a\u{1d173}", "U+1D173 MUSICAL SYMBOL BEGIN BEAM"),
        (
            "a\u{200b}\u{200b}",
            "2 characters starting with U+200B ZERO WIDTH SPACE",
        ),
    ];
    for (text, expected) in cases {
        let got = messages(text);
        assert!(
            got.iter().any(|m| m.contains(expected)),
            "{text:?}: {got:?}"
        );
    }
    // A run of selectors shows what it encodes, one byte per selector.
    let hidden: String = "run rm -rf"
        .bytes()
        .map(|b| match b {
            0..=15 => char::from_u32(0xFE00 + u32::from(b)),
            _ => char::from_u32(0xE0100 + u32::from(b) - 16),
        })
        .map(|c| c.unwrap_or('?'))
        .collect();
    let got = messages(&format!("Hello\u{1f600}{hidden}"));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].contains("10 variation selectors in a row"),
        "{got:?}"
    );
    assert!(got[0].contains("they read: \"run rm -rf\""), "{got:?}");
}

#[test]
fn hostile_runs_are_one_finding_and_linear() {
    // 128 KiB of zero-width spaces: one finding, and the scan visits each character once.
    let zwsp = "\u{200b}".repeat(131_072 / 3);
    let got = findings(&zwsp);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1.len(), zwsp.len());
    assert!(messages(&zwsp)[0].starts_with("invisible character: 43690 characters"));
    // The driver over units (settings strings) agrees with the one over text.
    let mut runs = Vec::new();
    let units = zwsp.char_indices().map(|(at, c)| Unit {
        c,
        span: at..at + c.len_utf8(),
        escaped: false,
    });
    scan(units, Some(0), |run| {
        runs.push((run.span.clone(), run.count))
    });
    assert_eq!(runs, [(0..zwsp.len(), zwsp.chars().count())]);
    // Alternating hidden and plain characters: capped per code, the rest summarised.
    let alternating = "a\u{200b}".repeat(20_000);
    let got = findings(&alternating);
    assert_eq!(got.len(), super::super::MAX_PER_CODE + 1);
    // Long hidden payloads keep bounded messages.
    let tags: String = (0..40_000)
        .map(|i| char::from_u32(0xE0061 + i % 26).unwrap_or('x'))
        .collect();
    let selectors: String = (0..40_000)
        .map(|i| char::from_u32(0xE0100 + i % 200).unwrap_or('x'))
        .collect();
    let escapes = "\u{1b}]0;".repeat(20_000);
    for text in [tags, selectors, escapes] {
        for message in messages(&text) {
            assert!(message.len() < 600, "{}", message.len());
        }
    }
    // Many `<!--` without a closer, and many comments: linear searches, bounded findings.
    let openers = "x <!--".repeat(20_000);
    assert_eq!(findings(&openers), vec![]);
    let comments = "<!--a-->".repeat(20_000);
    assert_eq!(findings(&comments).len(), super::super::MAX_PER_CODE + 1);
    let ticks: String = (1..400).map(|n| "`".repeat(n) + " <!-- ").collect();
    assert!(findings(&ticks).is_empty());
}

#[test]
fn table_is_sorted_and_disjoint() {
    for pair in TABLE.windows(2) {
        let ((lo, hi, _), (next, _, _)) = (pair[0], pair[1]);
        assert!(lo <= hi && hi < next, "{lo:X}..{hi:X} then {next:X}");
    }
}

/// The table against the Unicode data: every default-ignorable code point, control, private
/// use character and separator is in it, and every format character that is not shows a
/// visible glyph.
#[test]
fn table_covers_the_unicode_properties() {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory as Gc};
    use icu_properties::CodePointMapData;
    let ignorable = CodePointSetData::new::<DefaultIgnorableCodePoint>();
    let category = CodePointMapData::<Gc>::new();
    // Format characters with a visible glyph: the prepended concatenation marks (signs that
    // span the digits after them) and the Egyptian hieroglyph format controls.
    let visible_format = |c: u32| {
        matches!(c, 0x0600..=0x0605 | 0x06DD | 0x070F | 0x0890..=0x0891 | 0x08E2
            | 0x110BD | 0x110CD | 0x13430..=0x1345F)
    };
    for c in (0..=0x10FFFF_u32).filter_map(char::from_u32) {
        let class = class_of(c);
        let gc = category.get(c);
        let hex = u32::from(c);
        if ignorable.contains(c) {
            assert!(class.is_some(), "default-ignorable U+{hex:04X}");
        }
        match gc {
            Gc::Control if c != '\t' && c != '\n' => {
                assert!(
                    matches!(class, Some(Class::Control | Class::BareCr)),
                    "U+{hex:04X}"
                );
            }
            Gc::PrivateUse => assert_eq!(class, Some(Class::PrivateUse), "U+{hex:04X}"),
            Gc::LineSeparator | Gc::ParagraphSeparator => {
                assert_eq!(class, Some(Class::LineSeparator), "U+{hex:04X}")
            }
            Gc::Format => {
                assert!(class.is_some() || visible_format(hex), "format U+{hex:04X}")
            }
            _ => {}
        }
        if class.is_some() {
            assert!(is_hidden(c));
            assert_ne!(char_name(c), "CHARACTER", "U+{hex:04X} has no name");
        }
    }
}

#[test]
fn emoji_contexts_follow_the_unicode_properties() {
    // Every Extended_Pictographic character takes VS16 and ZWJ; a letter takes neither.
    for c in ['\u{a9}', '\u{2764}', '\u{1f600}', '\u{1f9b0}', '\u{1faf8}'] {
        assert!(is_emoji_base(c), "{c:?}");
        assert!(
            findings(&format!("{c}\u{fe0f}\u{200d}{c}")).is_empty(),
            "{c:?}"
        );
    }
    for c in ['a', 'é', '\u{3042}', '\u{5d0}'] {
        assert!(!is_emoji_base(c), "{c:?}");
    }
}

#[test]
fn plain_prefix_agrees_with_the_byte_test() {
    let mut texts: Vec<Vec<u8>> = vec![b"".to_vec(), b"abc".to_vec()];
    // Every byte, at every place of a word, after plain bytes of every kind.
    for byte in 0..=255u8 {
        for at in 0..10 {
            for fill in [b'x', b'\t', b'\n', b' ', b'~'] {
                let mut bytes = vec![fill; 16];
                bytes[at] = byte;
                texts.push(bytes);
            }
        }
    }
    for special in [
        0x00u8, 0x08, 0x09, 0x0A, 0x0D, 0x1B, 0x1F, 0x20, 0x7E, 0x7F, 0x80, 0xC3, 0xFF,
    ] {
        for at in 0..20 {
            let mut bytes = vec![b'x'; 24];
            bytes[at] = special;
            texts.push(bytes);
        }
    }
    for bytes in texts {
        let expected = bytes.iter().take_while(|&&b| is_plain(b)).count();
        assert_eq!(plain_prefix(&bytes), expected, "{bytes:?}");
    }
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Fragments of every class, their contexts, and the syntax around them.
    const PIECES: &[&str] = &[
        "a",
        " ",
        "\n",
        "\t",
        "\r",
        "\r\n",
        "\0",
        "\u{1b}",
        "[",
        "]",
        "2J",
        "0;",
        "\u{7}",
        "\\",
        "\u{7f}",
        "\u{85}",
        "\u{ad}",
        "\u{200b}",
        "\u{200c}",
        "\u{200d}",
        "\u{202e}",
        "\u{2028}",
        "\u{2066}",
        "\u{3164}",
        "\u{feff}",
        "\u{fe0e}",
        "\u{fe0f}",
        "\u{e0100}",
        "\u{e0041}",
        "\u{e0067}",
        "\u{e007f}",
        "\u{1f3f4}",
        "\u{1f600}",
        "\u{1f3fd}",
        "\u{6f22}",
        "\u{645}",
        "\u{1820}",
        "\u{180b}",
        "\u{e000}",
        "é",
        "<!--",
        "-->",
        "`",
        "```",
        "~~~",
        "---",
        "\"",
        "{",
        "}",
        ":",
        ",",
        "//",
        "/*",
        "*/",
        "\\u202e",
        "\\ud83d",
        "\\ude00",
        "\\n",
    ];

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(0..PIECES.len(), 0..120)
            .prop_map(|ix| ix.into_iter().map(|i| PIECES[i]).collect())
    }

    fn check_spans(text: &str, found: Vec<crate::lint::Diagnostic>) -> Result<(), TestCaseError> {
        for d in &found {
            let span = d.span.clone().unwrap_or_default();
            prop_assert!(span.start <= span.end && span.end <= text.len(), "{d:?}");
            prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
            prop_assert!(!d.message.is_empty());
        }
        // At most one finding per character, and never more than the cap allows.
        prop_assert!(found.len() <= text.chars().count() + 1);
        Ok(())
    }

    proptest! {
        #[test]
        fn rule_text_findings_have_valid_spans(text in text()) {
            let mut out = FileDiagnostics::new("x.md");
            check_hidden(&text, &mut out);
            check_spans(&text, out.finish(None))?;
        }

        #[test]
        fn settings_text_findings_have_valid_spans(text in text()) {
            let mut out = FileDiagnostics::new("s.jsonc");
            crate::lint::settings_files::check_hidden(&text, &mut out);
            check_spans(&text, out.finish(None))?;
        }

        /// Splitting a text into plain characters and units gives the same runs either way.
        #[test]
        fn both_drivers_agree(text in text()) {
            let mut from_text = Vec::new();
            scan_text(&text, 0, Some(0), |r| from_text.push((r.class, r.span.clone(), r.count)));
            let mut from_units = Vec::new();
            let units = text.char_indices().map(|(at, c)| Unit {
                c,
                span: at..at + c.len_utf8(),
                escaped: false,
            });
            scan(units, Some(0), |r| from_units.push((r.class, r.span.clone(), r.count)));
            prop_assert_eq!(from_text, from_units);
        }
    }
}
