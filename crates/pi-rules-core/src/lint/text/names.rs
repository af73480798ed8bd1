//! The names of hidden characters in messages (`U+202E RIGHT-TO-LEFT OVERRIDE`): a table of the
//! Unicode names of the controls and format characters [`super::hidden`] reports, and names by
//! kind (variation selectors, tags, private use) for the rest.

use super::classes::{class_of, selector_byte, Class};
use std::borrow::Cow;

/// The Unicode name of a hidden character (or of its kind), for messages.
pub(super) fn char_name(c: char) -> Cow<'static, str> {
    const C0: [&str; 32] = [
        "NULL",
        "START OF HEADING",
        "START OF TEXT",
        "END OF TEXT",
        "END OF TRANSMISSION",
        "ENQUIRY",
        "ACKNOWLEDGE",
        "BELL",
        "BACKSPACE",
        "CHARACTER TABULATION",
        "LINE FEED",
        "LINE TABULATION",
        "FORM FEED",
        "CARRIAGE RETURN",
        "SHIFT OUT",
        "SHIFT IN",
        "DATA LINK ESCAPE",
        "DEVICE CONTROL ONE",
        "DEVICE CONTROL TWO",
        "DEVICE CONTROL THREE",
        "DEVICE CONTROL FOUR",
        "NEGATIVE ACKNOWLEDGE",
        "SYNCHRONOUS IDLE",
        "END OF TRANSMISSION BLOCK",
        "CANCEL",
        "END OF MEDIUM",
        "SUBSTITUTE",
        "ESCAPE",
        "FILE SEPARATOR",
        "GROUP SEPARATOR",
        "RECORD SEPARATOR",
        "UNIT SEPARATOR",
    ];
    let name = match c {
        '\0'..='\u{1f}' => C0[c as usize],
        '\u{7f}' => "DELETE",
        '\u{85}' => "NEXT LINE",
        '\u{9b}' => "CONTROL SEQUENCE INTRODUCER",
        '\u{9d}' => "OPERATING SYSTEM COMMAND",
        '\u{80}'..='\u{9f}' => "C1 CONTROL",
        '\u{ad}' => "SOFT HYPHEN",
        '\u{34f}' => "COMBINING GRAPHEME JOINER",
        '\u{061c}' => "ARABIC LETTER MARK",
        '\u{115f}' => "HANGUL CHOSEONG FILLER",
        '\u{1160}' => "HANGUL JUNGSEONG FILLER",
        '\u{17b4}' => "KHMER VOWEL INHERENT AQ",
        '\u{17b5}' => "KHMER VOWEL INHERENT AA",
        '\u{180b}' => "MONGOLIAN FREE VARIATION SELECTOR ONE",
        '\u{180c}' => "MONGOLIAN FREE VARIATION SELECTOR TWO",
        '\u{180d}' => "MONGOLIAN FREE VARIATION SELECTOR THREE",
        '\u{180e}' => "MONGOLIAN VOWEL SEPARATOR",
        '\u{180f}' => "MONGOLIAN FREE VARIATION SELECTOR FOUR",
        '\u{200b}' => "ZERO WIDTH SPACE",
        '\u{200c}' => "ZERO WIDTH NON-JOINER",
        '\u{200d}' => "ZERO WIDTH JOINER",
        '\u{200e}' => "LEFT-TO-RIGHT MARK",
        '\u{200f}' => "RIGHT-TO-LEFT MARK",
        '\u{2028}' => "LINE SEPARATOR",
        '\u{2029}' => "PARAGRAPH SEPARATOR",
        '\u{202a}' => "LEFT-TO-RIGHT EMBEDDING",
        '\u{202b}' => "RIGHT-TO-LEFT EMBEDDING",
        '\u{202c}' => "POP DIRECTIONAL FORMATTING",
        '\u{202d}' => "LEFT-TO-RIGHT OVERRIDE",
        '\u{202e}' => "RIGHT-TO-LEFT OVERRIDE",
        '\u{2060}' => "WORD JOINER",
        '\u{2061}' => "FUNCTION APPLICATION",
        '\u{2062}' => "INVISIBLE TIMES",
        '\u{2063}' => "INVISIBLE SEPARATOR",
        '\u{2064}' => "INVISIBLE PLUS",
        '\u{2066}' => "LEFT-TO-RIGHT ISOLATE",
        '\u{2067}' => "RIGHT-TO-LEFT ISOLATE",
        '\u{2068}' => "FIRST STRONG ISOLATE",
        '\u{2069}' => "POP DIRECTIONAL ISOLATE",
        '\u{206a}' => "INHIBIT SYMMETRIC SWAPPING",
        '\u{206b}' => "ACTIVATE SYMMETRIC SWAPPING",
        '\u{206c}' => "INHIBIT ARABIC FORM SHAPING",
        '\u{206d}' => "ACTIVATE ARABIC FORM SHAPING",
        '\u{206e}' => "NATIONAL DIGIT SHAPES",
        '\u{206f}' => "NOMINAL DIGIT SHAPES",
        '\u{3164}' => "HANGUL FILLER",
        '\u{feff}' => "ZERO WIDTH NO-BREAK SPACE (BOM)",
        '\u{ffa0}' => "HALFWIDTH HANGUL FILLER",
        '\u{fff9}' => "INTERLINEAR ANNOTATION ANCHOR",
        '\u{fffa}' => "INTERLINEAR ANNOTATION SEPARATOR",
        '\u{fffb}' => "INTERLINEAR ANNOTATION TERMINATOR",
        '\u{1bca0}' => "SHORTHAND FORMAT LETTER OVERLAP",
        '\u{1bca1}' => "SHORTHAND FORMAT CONTINUING OVERLAP",
        '\u{1bca2}' => "SHORTHAND FORMAT DOWN STEP",
        '\u{1bca3}' => "SHORTHAND FORMAT UP STEP",
        '\u{1d173}' => "MUSICAL SYMBOL BEGIN BEAM",
        '\u{1d174}' => "MUSICAL SYMBOL END BEAM",
        '\u{1d175}' => "MUSICAL SYMBOL BEGIN TIE",
        '\u{1d176}' => "MUSICAL SYMBOL END TIE",
        '\u{1d177}' => "MUSICAL SYMBOL BEGIN SLUR",
        '\u{1d178}' => "MUSICAL SYMBOL END SLUR",
        '\u{1d179}' => "MUSICAL SYMBOL BEGIN PHRASE",
        '\u{1d17a}' => "MUSICAL SYMBOL END PHRASE",
        '\u{e0000}'..='\u{e007f}' => "TAG",
        c => match (selector_byte(c), class_of(c)) {
            (Some(_), _) if c < '\u{10000}' => {
                return format!("VARIATION SELECTOR-{}", u32::from(c) - 0xFE00 + 1).into()
            }
            (Some(_), _) => {
                return format!("VARIATION SELECTOR-{}", u32::from(c) - 0xE0100 + 17).into()
            }
            (None, Some(Class::PrivateUse)) => "PRIVATE USE CHARACTER",
            (None, Some(Class::Format)) => "RESERVED DEFAULT-IGNORABLE CHARACTER",
            _ => "CHARACTER",
        },
    };
    Cow::Borrowed(name)
}

/// `U+XXXX NAME`.
pub(super) fn named(c: char) -> String {
    format!("U+{:04X} {}", u32::from(c), char_name(c))
}
