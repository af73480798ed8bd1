//! Hidden text: characters a reader does not see but the model reads, found in one forward pass
//! (PR503-PR511, PR513), in rule text and in settings strings.
//!
//! One table ([`TABLE`], in [`super::classes`]) says which characters are hidden or misleading and
//! how ([`Class`]); each
//! class reports under one code, so one severity. [`scan`] reads a text's characters once, front
//! to back, and groups consecutive characters of one class into a [`Run`], reported as one
//! finding. The only context it looks at is the character before and the one after, plus a
//! little state for three kinds of sequence that are ordinary text:
//!
//! - Emoji. U+FE0F (emoji presentation) is ordinary after an emoji, meaning a character with the
//!   Unicode property Extended_Pictographic (UTS #51; every emoji that has a presentation sequence
//!   has it) or a keycap base (`#`, `*`, `0`-`9`). U+200D (ZERO WIDTH JOINER) is ordinary between
//!   an emoji element (Extended_Pictographic, a skin-tone modifier U+1F3FB-U+1F3FF, or U+FE0F
//!   closing a presentation sequence) and an Extended_Pictographic character (`👨‍👩‍👧`). A tag run
//!   is ordinary when it is a flag tag sequence: U+1F3F4, two to seven tag letters or digits, and
//!   U+E007F CANCEL TAG (the flags of England, Scotland, Wales).
//! - Scripts that join letters. U+200C and U+200D between two letters of the Arabic, Syriac,
//!   Thaana, N'Ko, Indic, Myanmar, Khmer or Mongolian blocks shape them (Persian, Hindi, ...).
//! - Variants. One U+E0100-U+E01EF after a CJK unified ideograph (an ideographic variation
//!   sequence) and one Mongolian free variation selector after a Mongolian letter.
//!
//! A BOM is ordinary as the first character of a rule file, and `\r` before `\n`. An ESC starts a
//! terminal escape sequence, which is taken into its control run whole (up to
//! [`MAX_ESCAPE_CHARS`] characters), so a finding shows the sequence.

use super::classes::{class_of, is_hidden, selector_byte, Class};
use super::names::named;
use crate::lint::diagnostic::{excerpt, FileDiagnostics};
use icu_properties::props::{ExtendedPictographic, UnifiedIdeograph};
use icu_properties::{CodePointSetData, CodePointSetDataBorrowed};
use std::ops::Range;

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
pub(super) fn is_emoji_base(c: char) -> bool {
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
pub(super) fn is_plain(byte: u8) -> bool {
    matches!(byte, b' '..=b'~' | b'\t' | b'\n')
}

/// How many bytes at the start of `bytes` are [`is_plain`], eight bytes at a time: each test
/// below sets the high bit of exactly the bytes it holds for, so the first byte that is not
/// plain is found in the word without looking at its bytes one by one.
pub(super) fn plain_prefix(bytes: &[u8]) -> usize {
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

/// Reports one run (unless this file already has [`crate::lint::MAX_PER_CODE`] of its code).
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
