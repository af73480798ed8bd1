//! Which characters are hidden or misleading, and how: one table ([`TABLE`]) of code point
//! ranges, each with its [`Class`], which says the code it reports under. The scanner
//! ([`super::hidden`]) adds the context in which some of them are ordinary text; the names
//! ([`super::names`]) and the escaper ([`crate::escape`]) ask about one character, whatever its
//! context.

use crate::lint::codes::Code;

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
    pub(super) fn code(self, count: usize) -> Code {
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

/// The byte a variation selector stands for in the one-byte-per-selector encoding.
pub(super) fn selector_byte(c: char) -> Option<u8> {
    match u32::from(c) {
        c @ 0xFE00..=0xFE0F => u8::try_from(c - 0xFE00).ok(),
        c @ 0xE0100..=0xE01EF => u8::try_from(c - 0xE0100 + 16).ok(),
        _ => None,
    }
}
