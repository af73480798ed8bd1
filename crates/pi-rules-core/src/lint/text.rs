//! Checks on the raw text: invalid UTF-8; hidden text (characters a reader does not see but the
//! model reads: bidirectional and other controls, zero-width and filler characters, tags,
//! variation selectors, lone `\r`, separators, private use), found in one forward pass over one
//! classification table and also applied to settings strings; HTML comments; and blank lines
//! holding `\r` between table rows (which table repair keeps).

use super::codes::Code;
use super::diagnostic::{excerpt, FileDiagnostics};
use crate::find;
use crate::markers::Marker;
use std::borrow::Cow;
use std::ops::Range;

/// Decodes `bytes` the way the loader does (invalid sequences become U+FFFD, a BOM is kept) and
/// reports each invalid sequence with its byte offset in the file.
pub(crate) fn decode<'b>(bytes: &'b [u8], out: &mut FileDiagnostics) -> Cow<'b, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut raw = 0;
    let mut decoded = 0;
    for chunk in bytes.utf8_chunks() {
        raw += chunk.valid().len();
        decoded += chunk.valid().len();
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        let span = decoded..decoded + '\u{fffd}'.len_utf8();
        if let Some(d) = out.report(Code::InvalidUtf8, Some(span)) {
            let shown: Vec<String> = invalid.iter().map(|b| format!("\\x{b:02X}")).collect();
            d.message(format!(
                "invalid UTF-8 at byte {raw}: `{}` is read as U+FFFD",
                shown.join("")
            ))
            .label("the model sees `\u{fffd}` here")
            .help("re-save the file as UTF-8");
        }
        raw += invalid.len();
        decoded += '\u{fffd}'.len_utf8();
    }
    String::from_utf8_lossy(bytes)
}

// ---------------------------------------------------------------------------------------------
// Hidden text.
//
// One table ([`TABLE`]) says which characters are hidden or misleading and how ([`Class`]); each
// class reports under one code, so one severity. [`scan`] reads a text's characters once, front
// to back, and groups consecutive characters of one class into a [`Run`], reported as one
// finding. The only context it looks at is the character before and the one after, plus a
// little state for three kinds of sequence that are ordinary text:
//
// - Emoji. U+FE0F (emoji presentation) is ordinary after an emoji, meaning a character with the
//   Unicode property Extended_Pictographic (UTS #51; every emoji that has a presentation sequence
//   has it) or a keycap base (`#`, `*`, `0`-`9`). U+200D (ZERO WIDTH JOINER) is ordinary between
//   an emoji element (Extended_Pictographic, a skin-tone modifier U+1F3FB-U+1F3FF, or U+FE0F
//   closing a presentation sequence) and an Extended_Pictographic character (`👨‍👩‍👧`). A tag run
//   is ordinary when it is a flag tag sequence: U+1F3F4, two to seven tag letters or digits, and
//   U+E007F CANCEL TAG (the flags of England, Scotland, Wales).
// - Scripts that join letters. U+200C and U+200D between two letters of the Arabic, Syriac,
//   Thaana, N'Ko, Indic, Myanmar, Khmer or Mongolian blocks shape them (Persian, Hindi, ...).
// - Variants. One U+E0100-U+E01EF after a CJK unified ideograph (an ideographic variation
//   sequence) and one Mongolian free variation selector after a Mongolian letter.
//
// A BOM is ordinary as the first character of a rule file, and `\r` before `\n`. An ESC starts a
// terminal escape sequence, which is taken into its control run whole (up to
// [`MAX_ESCAPE_CHARS`] characters), so a finding shows the sequence.

use icu_properties::props::{ExtendedPictographic, UnifiedIdeograph};
use icu_properties::{CodePointSetData, CodePointSetDataBorrowed};

/// What is wrong with a hidden or misleading character. Each class reports under one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Bidirectional embeddings, overrides and isolates (PR503).
    Bidi,
    /// Zero-width characters, marks and a BOM inside the text (PR504).
    ZeroWidth,
    /// Tag characters (PR505).
    Tag,
    /// Variation selectors: one is PR506, a run of several PR507.
    Selector,
    /// C0 controls other than tab and line ends, DEL, C1 controls (PR508).
    Control,
    /// `\r` not followed by `\n` (PR509).
    BareCr,
    /// Invisible formatting and filler characters (PR510).
    Format,
    /// U+2028 and U+2029 (PR511).
    LineSeparator,
    /// Private-use characters (PR513).
    PrivateUse,
}

impl Class {
    fn code(self, count: usize) -> Code {
        match self {
            Class::Bidi => Code::BidiControl,
            Class::ZeroWidth => Code::InvisibleCharacter,
            Class::Tag => Code::TagCharacter,
            Class::Selector if count > 1 => Code::VariationSelectorRun,
            Class::Selector => Code::VariationSelector,
            Class::Control => Code::ControlCharacter,
            Class::BareCr => Code::BareCarriageReturn,
            Class::Format => Code::InvisibleFormatCharacter,
            Class::LineSeparator => Code::LineSeparator,
            Class::PrivateUse => Code::PrivateUseCharacter,
        }
    }
}

/// Every hidden or misleading character, as sorted, disjoint, inclusive ranges of code points.
/// It covers all of Default_Ignorable_Code_Point, every control but tab and LF, every private-use
/// character, and the format characters that show nothing (tested against the Unicode data).
/// Entries marked "in context" are ordinary text in the sequences described above.
pub(crate) const TABLE: &[(u32, u32, Class)] = &[
    (0x0000, 0x0008, Class::Control),
    (0x000B, 0x000C, Class::Control),
    (0x000D, 0x000D, Class::BareCr), // in context: before `\n`
    (0x000E, 0x001F, Class::Control),
    (0x007F, 0x009F, Class::Control),
    (0x00AD, 0x00AD, Class::Format),
    (0x034F, 0x034F, Class::Format),
    (0x061C, 0x061C, Class::ZeroWidth),
    (0x115F, 0x1160, Class::Format),
    (0x17B4, 0x17B5, Class::Format),
    (0x180B, 0x180D, Class::Selector), // in context: after a Mongolian letter
    (0x180E, 0x180E, Class::Format),
    (0x180F, 0x180F, Class::Selector), // in context: after a Mongolian letter
    (0x200B, 0x200F, Class::ZeroWidth), // in context: U+200C and U+200D
    (0x2028, 0x2029, Class::LineSeparator),
    (0x202A, 0x202E, Class::Bidi),
    (0x2060, 0x2064, Class::ZeroWidth),
    (0x2065, 0x2065, Class::Format),
    (0x2066, 0x2069, Class::Bidi),
    (0x206A, 0x206F, Class::Format),
    (0x3164, 0x3164, Class::Format),
    (0xE000, 0xF8FF, Class::PrivateUse),
    (0xFE00, 0xFE0F, Class::Selector), // in context: U+FE0F after an emoji
    (0xFEFF, 0xFEFF, Class::ZeroWidth), // in context: first in a rule file
    (0xFFA0, 0xFFA0, Class::Format),
    (0xFFF0, 0xFFFB, Class::Format),
    (0x1BCA0, 0x1BCA3, Class::Format),
    (0x1D173, 0x1D17A, Class::Format),
    (0xE0000, 0xE007F, Class::Tag), // in context: a flag tag sequence
    (0xE0080, 0xE00FF, Class::Format),
    (0xE0100, 0xE01EF, Class::Selector), // in context: after a CJK ideograph
    (0xE01F0, 0xE0FFF, Class::Format),
    (0xF0000, 0xFFFFD, Class::PrivateUse),
    (0x100000, 0x10FFFD, Class::PrivateUse),
];

/// The class of `c` in [`TABLE`], whatever its context.
pub(crate) fn class_of(c: char) -> Option<Class> {
    let c = u32::from(c);
    // Printable ASCII, tab and LF: most of any text.
    if (0x20..0x7F).contains(&c) || c == 0x09 || c == 0x0A {
        return None;
    }
    let i = TABLE.partition_point(|&(_, hi, _)| hi < c);
    TABLE
        .get(i)
        .filter(|&&(lo, _, _)| lo <= c)
        .map(|&(_, _, class)| class)
}

/// Whether `c` is hidden or misleading in some context: for printers that must show such
/// characters visibly.
pub fn is_hidden(c: char) -> bool {
    class_of(c).is_some()
}

static EXTENDED_PICTOGRAPHIC: CodePointSetDataBorrowed<'static> =
    CodePointSetData::new::<ExtendedPictographic>();
static UNIFIED_IDEOGRAPH: CodePointSetDataBorrowed<'static> =
    CodePointSetData::new::<UnifiedIdeograph>();

const ZWNJ: char = '\u{200c}';
const ZWJ: char = '\u{200d}';
const VS16: char = '\u{fe0f}';
const BLACK_FLAG: char = '\u{1f3f4}';
const CANCEL_TAG: char = '\u{e007f}';

fn is_pictographic(c: char) -> bool {
    EXTENDED_PICTOGRAPHIC.contains(c)
}

/// A character that U+FE0F can make an emoji: Extended_Pictographic or a keycap base.
fn is_emoji_base(c: char) -> bool {
    is_pictographic(c) || matches!(c, '#' | '*' | '0'..='9')
}

/// A skin-tone modifier.
fn is_emoji_modifier(c: char) -> bool {
    ('\u{1f3fb}'..='\u{1f3ff}').contains(&c)
}

/// A letter (or mark) of a script whose letters ZWJ and ZWNJ shape.
fn joins_letters(c: char) -> bool {
    matches!(c,
        '\u{0620}'..='\u{08ff}' // Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic, Arabic ext.
        | '\u{0900}'..='\u{0dff}' // Devanagari to Sinhala
        | '\u{1000}'..='\u{109f}' // Myanmar
        | '\u{1780}'..='\u{17b3}' | '\u{17b6}'..='\u{17ff}' // Khmer
        | '\u{1820}'..='\u{18aa}' // Mongolian letters
        | '\u{a8e0}'..='\u{a8ff}' // Devanagari extended
        | '\u{fb50}'..='\u{fdff}' | '\u{fe70}'..='\u{fefc}') // Arabic presentation forms
}

/// Whether a joiner or non-joiner between `prev` and `next` is ordinary text.
fn joiner_in_context(c: char, prev: Option<char>, next: Option<char>) -> bool {
    let (Some(prev), Some(next)) = (prev, next) else {
        return false;
    };
    let emoji = c == ZWJ
        && (is_pictographic(prev) || is_emoji_modifier(prev) || prev == VS16)
        && is_pictographic(next);
    emoji || (joins_letters(prev) && joins_letters(next))
}

/// Whether variation selector `selector` after `base` is ordinary text.
fn selector_in_context(base: Option<char>, selector: char) -> bool {
    let Some(base) = base else {
        return false;
    };
    match selector {
        VS16 => is_emoji_base(base),
        '\u{e0100}'..='\u{e01ef}' => UNIFIED_IDEOGRAPH.contains(base),
        '\u{180b}'..='\u{180d}' | '\u{180f}' => ('\u{1820}'..='\u{18aa}').contains(&base),
        _ => false,
    }
}

/// The byte a variation selector stands for in the one-byte-per-selector encoding.
fn selector_byte(c: char) -> Option<u8> {
    match u32::from(c) {
        c @ 0xFE00..=0xFE0F => u8::try_from(c - 0xFE00).ok(),
        c @ 0xE0100..=0xE01EF => u8::try_from(c - 0xE0100 + 16).ok(),
        _ => None,
    }
}

/// Where a flag tag sequence (U+1F3F4, tag letters or digits, CANCEL TAG) has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TagSequence {
    /// This many tag letters or digits after U+1F3F4 so far.
    Spec(usize),
    /// Complete: the run is a flag.
    Flag,
    /// Not a flag.
    No,
}

impl TagSequence {
    fn start(base: Option<char>) -> Self {
        if base == Some(BLACK_FLAG) {
            TagSequence::Spec(0)
        } else {
            TagSequence::No
        }
    }

    fn step(self, c: char) -> Self {
        let spec = matches!(c, '\u{e0030}'..='\u{e0039}' | '\u{e0061}'..='\u{e007a}');
        match self {
            TagSequence::Spec(n) if spec && n < 7 => TagSequence::Spec(n + 1),
            TagSequence::Spec(n) if c == CANCEL_TAG && n >= 2 => TagSequence::Flag,
            _ => TagSequence::No,
        }
    }
}

/// The longest terminal escape sequence taken whole into a finding, in characters after ESC.
pub(crate) const MAX_ESCAPE_CHARS: usize = 64;

/// Where a terminal escape sequence (ECMA-48) has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    Off,
    /// Just after ESC, or after intermediate bytes.
    Start,
    /// `ESC [`: parameters and intermediates until a final byte.
    Csi,
    /// `ESC ]`, `ESC P`, `ESC _`, `ESC ^`, `ESC X`: a string until BEL or `ESC \`.
    Text,
    /// ESC inside such a string.
    TextEsc,
}

impl Escape {
    /// Whether `c` continues the sequence; moves on.
    fn absorb(&mut self, c: char, taken: &mut usize) -> bool {
        if *self == Escape::Off || *taken >= MAX_ESCAPE_CHARS {
            *self = Escape::Off;
            return false;
        }
        let (take, next) = match (*self, c) {
            (Escape::Start, '[') => (true, Escape::Csi),
            (Escape::Start, ']' | 'P' | '_' | '^' | 'X') => (true, Escape::Text),
            (Escape::Start, ' '..='/') => (true, Escape::Start),
            (Escape::Start, '0'..='~') => (true, Escape::Off),
            (Escape::Csi, ' '..='?') => (true, Escape::Csi),
            (Escape::Csi, '@'..='~') => (true, Escape::Off),
            (Escape::Text, '\u{7}') => (true, Escape::Off),
            (Escape::Text, '\u{1b}') => (true, Escape::TextEsc),
            (Escape::Text, c) if c != '\n' => (true, Escape::Text),
            (Escape::TextEsc, '\\') => (true, Escape::Off),
            _ => (false, Escape::Off),
        };
        *taken += usize::from(take);
        *self = next;
        take
    }
}

/// One character handed to [`scan`]: its byte span in the file, and whether the file spells it
/// as an escape (`\u202e` in a settings string) rather than as the character.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub c: char,
    pub span: Range<usize>,
    pub escaped: bool,
}

/// The most characters kept of a run to show what it hides.
const SAMPLE_CHARS: usize = 81;

/// Consecutive hidden characters of one class: one finding.
#[derive(Debug, Clone)]
pub(crate) struct Run {
    pub class: Class,
    pub span: Range<usize>,
    /// How many hidden characters (the rest of an escape sequence not counted).
    pub count: usize,
    pub first: char,
    /// The character just before the run.
    pub base: Option<char>,
    /// The second hidden character and where it starts.
    second: Option<(char, usize)>,
    /// Some character is written as an escape.
    pub escaped: bool,
    /// Whether the run holds an ESC.
    has_escape: bool,
    tags: TagSequence,
    /// What the run hides, bounded: decoded tags, or the controls shown.
    sample: String,
    sample_chars: usize,
    /// The bytes a selector run encodes, bounded.
    bytes: Vec<u8>,
}

impl Run {
    /// A run starting with `c`; `spare` are emptied buffers to reuse for the sample and bytes.
    fn new(
        class: Class,
        (c, span, escaped): (char, Range<usize>, bool),
        base: Option<char>,
        spare: (String, Vec<u8>),
    ) -> Run {
        let mut run = Run {
            class,
            span: span.start..span.start,
            count: 0,
            first: c,
            base,
            second: None,
            escaped: false,
            has_escape: false,
            tags: TagSequence::start(base),
            sample: spare.0,
            sample_chars: 0,
            bytes: spare.1,
        };
        run.push(c, span, escaped);
        run
    }

    fn push(&mut self, c: char, span: Range<usize>, escaped: bool) {
        if self.count == 1 {
            self.second = Some((c, span.start));
        }
        self.span.end = span.end;
        self.escaped |= escaped;
        self.count += 1;
        match self.class {
            Class::Tag => {
                self.tags = self.tags.step(c);
                let ascii = u32::from(c).wrapping_sub(0xE0000);
                if (0x20..0x7F).contains(&ascii) && self.sample_chars < SAMPLE_CHARS {
                    self.sample.extend(char::from_u32(ascii));
                    self.sample_chars += 1;
                }
            }
            Class::Selector => {
                if let Some(byte) = selector_byte(c) {
                    if self.bytes.len() < SAMPLE_CHARS * 4 {
                        self.bytes.push(byte);
                    }
                }
            }
            Class::Control => {
                self.has_escape |= c == '\u{1b}';
                self.show(c);
            }
            _ => {}
        }
    }

    /// Takes a character of an escape sequence into a control run.
    fn absorb(&mut self, c: char, end: usize, escaped: bool) {
        self.span.end = end;
        self.escaped |= escaped;
        self.show(c);
    }

    /// Adds `c` to the sample of a control run, as an escape when it is not printable.
    fn show(&mut self, c: char) {
        if self.sample_chars >= SAMPLE_CHARS {
            return;
        }
        self.sample_chars += 1;
        match c {
            '\u{1b}' => self.sample.push_str("\\e"),
            '\u{7}' => self.sample.push_str("\\a"),
            '\u{8}' => self.sample.push_str("\\b"),
            '\0' => self.sample.push_str("\\0"),
            c if is_hidden(c) || c.is_control() => {
                self.sample.push_str(&format!("\\u{{{:X}}}", u32::from(c)));
            }
            c => self.sample.push(c),
        }
    }

    /// Drops the characters that are ordinary in context; whether anything is left to report.
    fn settle(&mut self) -> bool {
        match self.class {
            Class::Tag => self.tags != TagSequence::Flag,
            Class::Selector if selector_in_context(self.base, self.first) => {
                let Some((second, start)) = self.second else {
                    return false;
                };
                if selector_byte(self.first).is_some() && !self.bytes.is_empty() {
                    self.bytes.remove(0);
                }
                self.base = Some(self.first);
                self.first = second;
                self.span.start = start;
                self.count -= 1;
                true
            }
            _ => true,
        }
    }
}

/// The state of one forward pass: the character before, the open run and escape sequence.
struct Scanner<F: FnMut(&Run)> {
    /// A BOM at this byte offset is ordinary (the start of a rule file).
    bom_at: Option<usize>,
    prev: Option<char>,
    run: Option<Run>,
    escape: Escape,
    /// Characters taken into the current escape sequence.
    taken: usize,
    /// The buffers of the last closed run, emptied, so that runs do not allocate each time.
    spare: (String, Vec<u8>),
    emit: F,
}

impl<F: FnMut(&Run)> Scanner<F> {
    fn new(bom_at: Option<usize>, emit: F) -> Self {
        Scanner {
            bom_at,
            prev: None,
            run: None,
            escape: Escape::Off,
            taken: 0,
            spare: (String::new(), Vec::new()),
            emit,
        }
    }

    /// Takes character `c` at `span`, with `next` the character after it.
    fn step(&mut self, c: char, span: Range<usize>, escaped: bool, next: Option<char>) {
        if self.escape != Escape::Off {
            if let Some(run) = self.run.as_mut().filter(|r| r.span.end == span.start) {
                if self.escape.absorb(c, &mut self.taken) {
                    run.absorb(c, span.end, escaped);
                    self.prev = Some(c);
                    return;
                }
            }
            self.escape = Escape::Off;
        }
        let class = class_of(c).filter(|_| match c {
            '\r' => next != Some('\n'),
            '\u{feff}' => Some(span.start) != self.bom_at,
            ZWNJ | ZWJ => !joiner_in_context(c, self.prev, next),
            _ => true,
        });
        match class {
            None => self.close(),
            Some(class) => {
                match self.run.as_mut() {
                    Some(run) if run.class == class && run.span.end == span.start => {
                        run.push(c, span, escaped)
                    }
                    _ => {
                        self.close();
                        let spare = std::mem::take(&mut self.spare);
                        self.run = Some(Run::new(class, (c, span, escaped), self.prev, spare));
                    }
                }
                if c == '\u{1b}' {
                    self.escape = Escape::Start;
                    self.taken = 0;
                }
            }
        }
        self.prev = Some(c);
    }

    /// Reports the open run, if any.
    fn close(&mut self) {
        if let Some(mut run) = self.run.take() {
            if run.settle() {
                (self.emit)(&run);
            }
            run.sample.clear();
            run.bytes.clear();
            self.spare = (run.sample, run.bytes);
        }
    }
}

/// Reads `units` once and hands each run of hidden characters to `emit`, in order. A BOM at byte
/// `bom_at` is ordinary.
pub(crate) fn scan(
    units: impl Iterator<Item = Unit>,
    bom_at: Option<usize>,
    emit: impl FnMut(&Run),
) {
    let mut scanner = Scanner::new(bom_at, emit);
    let mut units = units.peekable();
    while let Some(unit) = units.next() {
        let next = units.peek().map(|u| u.c);
        scanner.step(unit.c, unit.span, unit.escaped, next);
    }
    scanner.close();
}

/// Whether `byte` is printable ASCII, a tab or a line feed: never hidden, and context for
/// nothing but the character after it.
fn is_plain(byte: u8) -> bool {
    matches!(byte, b' '..=b'~' | b'\t' | b'\n')
}

/// How many bytes at the start of `bytes` are [`is_plain`], eight bytes at a time: each test
/// below sets the high bit of exactly the bytes it holds for, so the first byte that is not
/// plain is found in the word without looking at its bytes one by one.
fn plain_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW: u64 = !HIGH;
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(word);
        let x = u64::from_le_bytes(buf);
        // The low seven bits of each byte: sums below stay inside their byte.
        let low = x & LOW;
        let is = |byte: u8| {
            let y = low ^ (ONES * u64::from(byte));
            !((y + LOW) | y) & HIGH
        };
        let below_space = !((low + ONES * (0x80 - 0x20)) & HIGH) & HIGH;
        // Bytes of 0x80 and above are flagged by their own high bit, whatever the other tests
        // say of their low bits.
        let not_plain = (x & HIGH) | (below_space & !is(b'\t') & !is(b'\n')) | is(0x7F);
        if not_plain != 0 {
            return at + (not_plain.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes[at..].iter().take_while(|&&b| is_plain(b)).count()
}

/// [`scan`] over the characters of `text`, whose spans start at `offset`. Plain ASCII outside a
/// hidden run is skipped without decoding, eight bytes at a time.
pub(crate) fn scan_text(text: &str, offset: usize, bom_at: Option<usize>, emit: impl FnMut(&Run)) {
    let bytes = text.as_bytes();
    let mut scanner = Scanner::new(bom_at, emit);
    let mut at = 0;
    // The character at `at`, when already decoded.
    let mut here: Option<char> = None;
    while at < bytes.len() {
        if scanner.run.is_none() && is_plain(bytes[at]) {
            at += plain_prefix(&bytes[at..]);
            scanner.prev = Some(char::from(bytes[at - 1]));
            here = None;
            continue;
        }
        let Some(c) = here.or_else(|| text[at..].chars().next()) else {
            break;
        };
        let end = at + c.len_utf8();
        here = text[end..].chars().next();
        scanner.step(c, offset + at..offset + end, false, here);
        at = end;
    }
    scanner.close();
}

/// Where a run was found, for the message.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place<'a> {
    /// Rule text.
    Rule,
    /// A settings file: the value of this top-level key.
    Value(&'a str),
    /// A settings file: a key.
    Key,
    /// A settings file: a string outside any top-level key, or a comment.
    SettingsText,
}

/// Reports hidden text in a rule file (a BOM as its first character is ordinary) and its HTML
/// comments.
pub(crate) fn check_hidden(text: &str, out: &mut FileDiagnostics) {
    scan_text(text, 0, Some(0), |run| report(run, Place::Rule, out));
    let body = crate::frontmatter::split(text).body_start;
    check_html_comments(text, body, out);
}

/// The Unicode name of a hidden character (or of its kind), for messages.
fn char_name(c: char) -> Cow<'static, str> {
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
fn named(c: char) -> String {
    format!("U+{:04X} {}", u32::from(c), char_name(c))
}

/// Reports one run (unless this file already has [`super::MAX_PER_CODE`] of its code).
pub(crate) fn report(run: &Run, place: Place<'_>, out: &mut FileDiagnostics) {
    let code = run.class.code(run.count);
    let Some(d) = out.report(code, Some(run.span.clone())) else {
        return;
    };
    let what = if run.count == 1 {
        named(run.first)
    } else {
        format!(
            "{} characters starting with {}",
            run.count,
            named(run.first)
        )
    };
    match run.class {
        Class::Bidi => {
            d.message(format!("bidirectional control character: {what}"))
                .label("reorders how the text displays")
                .note("a reader can see different text than the model reads")
                .help("delete it, and review where this text came from");
        }
        Class::ZeroWidth => {
            d.message(format!("invisible character: {what}"))
                .label("not shown by editors, read by the model")
                .help("delete it");
        }
        Class::Tag => {
            d.message(format!("Unicode tag characters: {what}"))
                .label("invisible text")
                .help("delete them, and review where this text came from");
            if !run.sample.is_empty() {
                d.note(format!("hidden text: \"{}\"", excerpt(&run.sample, 80)));
            }
        }
        Class::Selector if run.count == 1 => {
            d.message(format!("variation selector: {what}"))
                .label("invisible, and it varies nothing here; the model still reads it")
                .help("delete it");
        }
        Class::Selector => {
            d.message(format!(
                "{} variation selectors in a row, starting with {}",
                run.count,
                named(run.first)
            ))
            .label("invisible, yet enough to encode hidden text")
            .help("delete them, and review where this text came from");
            let decoded = String::from_utf8_lossy(&run.bytes);
            if decoded.chars().any(char::is_alphanumeric) {
                d.note(format!(
                    "one byte per selector, they read: \"{}\"",
                    excerpt(&decoded, 80)
                ));
            }
        }
        Class::Control if run.has_escape => {
            d.message(format!(
                "terminal escape sequence: `{}`",
                excerpt(&run.sample, 80)
            ))
            .label("a terminal acts on this: it can hide, recolour or overwrite text")
            .note("editors show it differently or not at all; the model reads it")
            .help("delete it");
        }
        Class::Control => {
            d.message(format!("control character: {what}"))
                .label("not printable: editors show it differently or not at all")
                .help("delete it");
        }
        Class::BareCr => {
            d.message(if run.count == 1 {
                "carriage return (`\\r`) without a line feed".to_owned()
            } else {
                format!("{} carriage returns (`\\r`) without a line feed", run.count)
            })
            .label("a terminal returns to the line start here and prints the rest over it")
            .help("end lines with `\\n` (or `\\r\\n`), and delete a lone `\\r`");
        }
        Class::Format => {
            d.message(format!("invisible formatting character: {what}"))
                .label("not shown by editors, read by the model")
                .help("delete it");
        }
        Class::LineSeparator => {
            d.message(format!("Unicode line separator: {what}"))
                .label("some tools break the line here, others show nothing")
                .help("use a plain line break (`\\n`)");
        }
        Class::PrivateUse => {
            d.message(format!("private-use character: {what}"))
                .label("no standard meaning: it shows as an icon, a box or nothing")
                .help("replace it with plain text if the model should understand it");
        }
    }
    match place {
        Place::Rule => {}
        Place::Value(key) => {
            d.note(format!(
                "in the value of `{}`, which `render` puts into agent prompts",
                excerpt(key, 60)
            ));
        }
        Place::Key => {
            d.note("in a key of the settings file");
        }
        Place::SettingsText => {
            d.note("in the settings file");
        }
    }
    if run.escaped {
        d.note("written as a JSON escape: the value holds the character itself");
    }
}

// ---------------------------------------------------------------------------------------------
// HTML comments.

/// A fence line: `(fence character, length, nothing but blanks after the fence)`.
fn fence(line: &[u8]) -> Option<(u8, usize, bool)> {
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = *rest.first().filter(|&&b| b == b'`' || b == b'~')?;
    let len = rest.iter().take_while(|&&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let after = &rest[len..];
    if ch == b'`' && after.contains(&b'`') {
        return None;
    }
    Some((ch, len, after.iter().all(u8::is_ascii_whitespace)))
}

/// The code spans of a line segment (CommonMark: a backtick run closed by the next run of the
/// same length), as sorted byte ranges relative to the segment.
fn code_spans(seg: &[u8]) -> Vec<Range<usize>> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while let Some(at) = find::memchr(b'`', &seg[i..]) {
        let start = i + at;
        let len = seg[start..].iter().take_while(|&&b| b == b'`').count();
        runs.push((start, len));
        i = start + len;
    }
    // For each run, the next run of the same length.
    let mut next_same = vec![None; runs.len()];
    let mut last: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (index, &(_, len)) in runs.iter().enumerate().rev() {
        next_same[index] = last.insert(len, index);
    }
    let mut spans = Vec::new();
    let mut index = 0;
    while index < runs.len() {
        match next_same[index] {
            Some(close) => {
                let (start, _) = runs[index];
                let (end, len) = runs[close];
                spans.push(start..end + len);
                index = close + 1;
            }
            None => index += 1,
        }
    }
    spans
}

/// Reports HTML comments in the Markdown body (from `body_start`), outside fenced code blocks
/// and code spans. Indented code blocks are not recognised. Linear: each byte is looked at a
/// bounded number of times, and the search for `-->` is never repeated over the same text.
pub(crate) fn check_html_comments(text: &str, body_start: usize, out: &mut FileDiagnostics) {
    let bytes = text.as_bytes();
    let opener = find::Finder::new(b"<!--");
    if opener.find(&bytes[body_start..]).is_none() {
        return;
    }
    let closer = find::Finder::new(b"-->");
    // The last search for `-->`: (from, found at).
    let mut last_close: Option<(usize, Option<usize>)> = None;
    let mut find_close = |from: usize| -> Option<usize> {
        if let Some((searched, found)) = last_close {
            if searched <= from && found.is_none_or(|at| at >= from) {
                return found;
            }
        }
        let found = closer.find(&bytes[from..]).map(|at| from + at);
        last_close = Some((from, found));
        found
    };
    let mut open_fence: Option<(u8, usize)> = None;
    let mut pos = body_start;
    let mut at_line_start = true;
    while pos < bytes.len() {
        let end = find::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let seg = &bytes[pos..end];
        if at_line_start {
            match (open_fence, fence(seg)) {
                (None, Some((ch, len, _))) => {
                    open_fence = Some((ch, len));
                    pos = end + 1;
                    continue;
                }
                (Some((ch, len)), Some((c, l, true))) if c == ch && l >= len => {
                    open_fence = None;
                    pos = end + 1;
                    continue;
                }
                (Some(_), _) => {
                    pos = end + 1;
                    continue;
                }
                (None, None) => {}
            }
        }
        if opener.find(seg).is_none() {
            pos = end + 1;
            at_line_start = true;
            continue;
        }
        let spans = if find::memchr(b'`', seg).is_some() {
            code_spans(seg)
        } else {
            Vec::new()
        };
        let mut span_index = 0;
        let mut from = 0;
        let mut resume = None;
        while let Some(found) = opener.find(&seg[from..]) {
            let start = from + found;
            while span_index < spans.len() && spans[span_index].end <= start {
                span_index += 1;
            }
            if spans.get(span_index).is_some_and(|s| s.start <= start) {
                from = spans[span_index].end;
                continue;
            }
            let at = pos + start;
            match find_close(at + 4) {
                Some(close) => {
                    let content = &text[at + 4..close];
                    if !content.trim().is_empty() {
                        report_comment(at..close + 3, content, false, out);
                    }
                    if close + 3 <= end {
                        from = close + 3 - pos;
                    } else {
                        resume = Some(close + 3);
                        break;
                    }
                }
                None => {
                    let indent = start == seg.iter().take_while(|&&b| b == b' ').count();
                    if at_line_start && indent && start <= 3 {
                        report_comment(at..at + 4, &text[at + 4..], true, out);
                        return;
                    }
                    from = start + 4;
                }
            }
        }
        match resume {
            Some(next) => {
                pos = next;
                at_line_start = false;
            }
            None => {
                pos = end + 1;
                at_line_start = true;
            }
        }
    }
}

fn report_comment(span: Range<usize>, content: &str, unclosed: bool, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::HtmlComment, Some(span)) else {
        return;
    };
    if unclosed {
        d.message("unclosed HTML comment: the rest of the file is hidden when rendered")
            .label("from here on, a rendered review shows nothing; the model reads it all");
    } else {
        d.message(format!(
            "HTML comment, hidden when rendered: \"{}\"",
            excerpt(content.trim(), 60)
        ))
        .label("a rendered review shows nothing here; the model reads it");
    }
    d.help("if the model should follow it, make it visible text; otherwise delete it");
}

/// Reports runs of blank lines that hold `\r`, between a line with `|` and a line starting with
/// `|`. Lines made only of markers and whitespace count as blank: dropping a block leaves them
/// so. `markers` are sorted; only the body (from `body_start`) is looked at.
pub(crate) fn check_table_gaps(
    text: &str,
    body_start: usize,
    markers: &[Marker],
    out: &mut FileDiagnostics,
) {
    let bytes = text.as_bytes();
    if find::memchr(b'\r', &bytes[body_start..]).is_none() {
        return;
    }
    let mut m = 0;
    let mut prev_has_pipe = false;
    // The current run of blankish lines after a `|` line: (range, holds a `\r`).
    let mut run: Option<(Range<usize>, bool)> = None;
    let mut start = body_start;
    while start <= bytes.len() {
        let end = find::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let line = start..end;
        match blankish(bytes, line.clone(), markers, &mut m) {
            Some(has_cr) if prev_has_pipe || run.is_some() => {
                let r = run.get_or_insert((line.start..line.end, false));
                r.0.end = line.end;
                r.1 |= has_cr;
            }
            _ => {
                if let Some((range, true)) = run.take() {
                    if starts_row(bytes, line.clone(), markers, m) {
                        report_gap(range, out);
                    }
                }
                prev_has_pipe = find::memchr(b'|', &bytes[line.clone()]).is_some();
                run = None;
            }
        }
        if end == bytes.len() {
            break;
        }
        start = end + 1;
    }
}

/// `Some(holds \r)` when the line is only spaces, tabs, `\r` and whole markers.
fn blankish(bytes: &[u8], line: Range<usize>, markers: &[Marker], m: &mut usize) -> Option<bool> {
    while *m < markers.len() && markers[*m].span().end <= line.start {
        *m += 1;
    }
    let mut k = *m;
    let mut pos = line.start;
    let mut has_cr = false;
    let gap_ok = |from: usize, to: usize, has_cr: &mut bool| {
        bytes[from..to].iter().all(|&b| {
            *has_cr |= b == b'\r';
            matches!(b, b' ' | b'\t' | b'\r')
        })
    };
    while k < markers.len() && markers[k].span().start < line.end {
        let span = markers[k].span();
        if span.start < pos || span.end > line.end {
            return None;
        }
        if !gap_ok(pos, span.start, &mut has_cr) {
            return None;
        }
        pos = span.end;
        k += 1;
    }
    gap_ok(pos, line.end, &mut has_cr).then_some(has_cr)
}

/// Whether the line starts with `|` (after markers at its start).
fn starts_row(bytes: &[u8], line: Range<usize>, markers: &[Marker], m: usize) -> bool {
    let mut pos = line.start;
    for marker in markers.iter().skip(m) {
        if marker.span().start != pos {
            break;
        }
        pos = marker.span().end;
    }
    bytes.get(pos) == Some(&b'|')
}

fn report_gap(range: Range<usize>, out: &mut FileDiagnostics) {
    let Some(d) = out.report(Code::CrTableGap, Some(range)) else {
        return;
    };
    d.message("blank line with `\\r` between table rows")
        .label("table repair keeps this line, so the table is split in two")
        .help("use `\\n` line endings, or put the markers on the row lines");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::testing::codes_of;
    use crate::markers;

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
}

#[cfg(test)]
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

    fn check_spans(text: &str, found: Vec<super::super::Diagnostic>) -> Result<(), TestCaseError> {
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
            super::super::settings_files::check_hidden(&text, &mut out);
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
