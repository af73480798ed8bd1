//! The diagnostic codes: one static table with, for each code, its stable id, a kebab-case name,
//! the default severity, a one-line summary and the long explanation that `check --explain`
//! prints.
//!
//! Ids are `PR` and three digits, grouped by what they look at: `PR1xx` conditions, `PR2xx`
//! markers and placeholders, `PR3xx` frontmatter, `PR4xx` files and names, `PR5xx` text,
//! `PR6xx` links, `PR7xx` settings files, `PR8xx` what evaluation can produce (reasoning over the
//! conditions on the way to each block), `PR9xx` the files `export` writes for other agents,
//! `PR10xx` rule scopes (`paths:`, `agents:`) and nested rule directories; `PR75x` pi-rules' own
//! configuration file (`.pi/pi-rules.toml`) and the codes it and a rule's `lint-ignore:` name. An
//! id, once published, never changes meaning; a retired check keeps its id unused.

use std::fmt;

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything known about one code.
#[derive(Debug)]
pub struct CodeInfo {
    pub code: Code,
    /// The stable id, e.g. `PR101`.
    pub id: &'static str,
    /// The kebab-case name, e.g. `unknown-setting-key`.
    pub name: &'static str,
    pub severity: Severity,
    /// One line, used as the SARIF short description.
    pub summary: &'static str,
    /// The long description: a heading line, the summary, then what, why and how to fix.
    pub explanation: &'static str,
}

/// The lower-case name of a severity, as a literal for `concat!`.
macro_rules! severity_name {
    (Error) => {
        "error"
    };
    (Warning) => {
        "warning"
    };
    (Info) => {
        "info"
    };
}

macro_rules! codes {
    ($( $variant:ident = $id:literal $name:literal $severity:ident $summary:literal $explanation:literal; )*) => {
        /// A stable diagnostic code. See [`CODES`] for the table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $( $variant, )* }

        /// How many codes there are.
        pub(crate) const CODE_COUNT: usize = [$( Code::$variant, )*].len();

        /// Every code, in id order; `CODES[code as usize].code == code`.
        pub static CODES: &[CodeInfo] = &[ $(
            CodeInfo {
                code: Code::$variant,
                id: $id,
                name: $name,
                severity: Severity::$severity,
                summary: $summary,
                explanation: concat!($id, " ", $name, " (", severity_name!($severity), ")\n\n",
                    $summary, "\n\n", $explanation),
            },
        )* ];
    };
}

impl Code {
    /// This code's row of [`CODES`].
    pub fn info(self) -> &'static CodeInfo {
        // Invariant: the table is generated in enum order (tested by `table_is_in_enum_order`).
        &CODES[self as usize]
    }

    /// The stable id, e.g. `PR101`.
    pub fn id(self) -> &'static str {
        self.info().id
    }

    /// The default severity.
    pub fn severity(self) -> Severity {
        self.info().severity
    }
}

/// Finds a code by id (`PR101`, any case) or by name (`unknown-setting-key`).
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    let code = code.trim();
    CODES
        .iter()
        .find(|info| info.id.eq_ignore_ascii_case(code) || info.name.eq_ignore_ascii_case(code))
}

/// The long explanation of a code, as `check --explain CODE` prints it.
pub fn explain(code: &str) -> Option<&'static str> {
    lookup(code).map(|info| info.explanation)
}

codes! {
    UnknownSettingKey = "PR101" "unknown-setting-key" Error
        "A condition or `requires_setting` names a key that is not in the settings schema."
        "A block such as `{{IF:review_loop_enforcment}}` (note the typo) tests a key the schema
does not know. The engine fails closed: the block is dropped for `IF` and for `IFNOT` alike. The
only trace is a warning in the host's log (`rule assembly: unknown setting key in conditional:
KEY`), which the model never sees. In `requires_setting: KEY` the whole file is dropped, with the
warning `rule assembly: unknown requires_setting key: KEY`.

Feature predicates (`coms_active`, `external_ai_agents`) are not settings keys: gate a file on
one with `requires:`, not `requires_setting:`.

Fix: correct the key; the message suggests the closest key from the schema.";

    UnknownFeature = "PR102" "unknown-feature" Error
        "`requires:` names something that is not a feature predicate."
        "`requires: NAME` gates a file on a feature predicate reported by the host. The only
predicates are `coms_active` (peer-to-peer messaging is running) and `external_ai_agents`
(`acpx_agents` or `cli_agents` is not empty). Any other name drops the file, always.

To gate a file on a setting, write `requires_setting: KEY` instead.";

    MalformedCondition = "PR103" "malformed-condition" Error
        "A condition is neither `KEY` nor `KEY == LITERAL` nor `KEY != LITERAL`."
        "A condition must be a key (`[A-Za-z_][A-Za-z0-9_]*`), optionally followed by `==` or
`!=` and a literal on the same line. Anything else (an empty condition, `a && b`, `!a`, `a = 1`,
`a > 1`, a key with `-`) is malformed, and the block is dropped for `IF` and `IFNOT` alike.

There is no `&&`, `||` or `!`: nest blocks for \"and\", and use `{{IFNOT:key}}` for \"not\". A
condition that contains `{{` usually means the `}}` of the marker is missing, so the condition ran
into the next marker.";

    FeatureComparison = "PR104" "feature-comparison" Error
        "A comparison on a feature predicate, which is always false."
        "Feature predicates are only consulted for a bare key: `{{IF:coms_active}}`. A comparison
such as `{{IF:coms_active == true}}` is an ordinary settings lookup, and since `coms_active` is not
a settings key the block fails closed: it is dropped for `IF` and `IFNOT` alike, whatever the
feature's state.

Fix: test the predicate bare, with `{{IF:name}}` for \"on\" and `{{IFNOT:name}}` for \"off\".";

    ImpossibleComparison = "PR105" "impossible-comparison" Warning
        "A comparison literal that can never equal a value of the key's type."
        "Comparisons use JavaScript strict equality: the value and the literal must have the same
type. A boolean key never equals `\"yes\"`, `1` or `True` (a literal is case-sensitive, so `True`
is the string \"True\"); an integer key never equals a string such as `\"3\"` or `03`, a fraction,
or a number outside its range; a string key never equals a number; lists (`acpx_agents`,
`cli_agents`) and objects (`agent_overrides`) never equal any literal; no setting is ever `null`.
Such an `==` is always false and such a `!=` always true, so the block never (or always) shows.

Fix: compare with a literal of the right type (`dco == true`, `review_loop_max_cycles == 3`), or
test the key bare for truthiness (`{{IF:acpx_agents}}` holds when the list is not empty).";

    ConstantCondition = "PR106" "constant-condition" Warning
        "A condition that always holds, or never holds, for every value the schema allows."
        "The schema fixes each key's type, range and, for some string keys, the list of allowed
values (`enum`). Some conditions come out the same for every such value:

- a bare test on a key that is never falsy, such as an integer whose minimum is 1
  (`{{IF:review_loop_max_cycles}}`) or a log level, which is never the empty string;
- a comparison with a value outside a key's `enum` (`{{IF:log_rules == verbose}}`);
- a `requires_setting:` gate on such a key.

The block is then always kept, or always dropped, whatever the settings say. (A literal of the
wrong type or outside the range is PR105.)

Fix: remove the markers and keep the text, or remove the block; or test a value the key can
actually hold.";

    UnclosedBlock = "PR201" "unclosed-block" Error
        "An opener without a closer: it and the rest of the text leak into the prompt verbatim."
        "When `{{IF:…}}` or `{{IFNOT:…}}` has no matching closer, the engine keeps the rest of the
text from the opener on verbatim, markers included, and stops evaluating it. The model then sees
raw `{{IF:…}}` text, and every block after it is shown whatever its condition.

Fix: add `{{/IF}}` (or `{{/IFNOT}}`) where the block ends. Blocks nest, and each closer must match
the kind of the innermost open block.";

    StrayCloser = "PR202" "stray-closer" Error
        "A closer with no open block; it is kept in the prompt verbatim."
        "A `{{/IF}}` or `{{/IFNOT}}` that comes when no block is open is plain text: the engine keeps
it in the output with a warning. It is usually left over from a deleted opener, or one closer too
many.

Fix: remove it, or add the missing opener.";

    MismatchedCloser = "PR203" "mismatched-closer" Error
        "A closer of the other kind than the innermost open block."
        "`{{IF:a}} … {{/IFNOT}}` does not close the `IF` block: a closer of the other kind means the
open blocks have no closer at all. Every block still open at that point is left unclosed, so from
the outermost of them on the text is kept verbatim, markers included.

Fix: close the innermost block first, with a closer of its own kind.";

    NearMissMarker = "PR204" "near-miss-marker" Warning
        "Text that looks like a conditional marker but is not one, so it stays in the prompt."
        "Markers are exact: `{{IF:COND}}`, `{{IFNOT:COND}}`, `{{/IF}}` and `{{/IFNOT}}`, upper case,
with no spaces inside the braces and a non-empty condition that contains no `}`. `{{if:x}}`,
`{{ IF:x}}`, `{{IF x}}`, `{{IF:}}`, `{{/IF }}` and `{{/IF}` are plain text: they are not evaluated
and end up in the prompt as written.

Fix: write the marker exactly as shown in the help.";

    NearMissPlaceholder = "PR205" "near-miss-placeholder" Warning
        "Text that looks like `{{REVIEW_LOOP_MAX_CYCLES}}` but is not substituted."
        "The only placeholder in rules is `{{REVIEW_LOOP_MAX_CYCLES}}`, exactly: upper case, plural,
no spaces. Variants such as `{{REVIEW_LOOP_MAX_CYCLE}}`, `{{review_loop_max_cycles}}` or
`{{ REVIEW_LOOP_MAX_CYCLES }}` are left in the prompt as written.

Fix: write `{{REVIEW_LOOP_MAX_CYCLES}}`.";

    SettingsPlaceholderInRule = "PR206" "settings-placeholder-in-rule" Warning
        "`{{SETTINGS}}` in a rule file, where it is never substituted."
        "`{{SETTINGS}}` and `{{SETTINGS:key,…}}` are filled in agent prompt text only (a specialist
agent's prompt at dispatch). In a rule file they stay in the prompt as written.

Fix: use a conditional block (`{{IF:key}}…{{/IF}}`) to make rule text depend on a setting, or
`{{REVIEW_LOOP_MAX_CYCLES}}` for the cycle budget.";

    LeakedMarkerText = "PR207" "leaked-marker-text" Error
        "Marker text such as `{{IF` that evaluation assembles from pieces around removed markers."
        "Evaluation removes markers and dropped blocks and joins the text on both sides. When that
text ends in `{{` and the text after starts with `IF:` or `/IF`, the prompt gets the marker text
`{{IF…` or `{{/IF…`, which nobody wrote as such and which is never evaluated: the model sees raw
template syntax. For example `{{{{IF:a}}x{{/IF}}IF:b}}` gives `{{IF:b}}` when `a` is false.

Fix: do not put `{{`, `IF` or `/IF` right next to a marker; separate them with other text, or
remove the stray braces.";

    BrokenFrontmatter = "PR301" "broken-frontmatter" Error
        "A header that looks like frontmatter but does not parse, so its gate is ignored."
        "Frontmatter is recognised only when the file starts with a line `---`, then the header
lines, then a line `---` followed by a line break (`\\n` or `\\r\\n` each time). A byte-order mark
before the first `---`, a space after a fence, a missing line break after the closing fence, a
missing closing fence, or mixed line endings such as `\\r\\r\\n` or a lone `\\r` make the header
plain text: the file is always included, and its `requires:` lines become part of the prompt.

Fix: make both fences exactly `---` on lines of their own, and end the closing one with a line
break.";

    UnknownFrontmatterKey = "PR302" "unknown-frontmatter-key" Warning
        "A frontmatter key the loader does not read."
        "Only `requires_setting` and `requires` mean anything in a rule's frontmatter (and
`lint-ignore`, which silences `check`'s codes for that file). Any other key is ignored, which is
usually a misspelling (`require`, `requires_settings`) that leaves the file ungated.

Fix: correct the key; the message suggests the closest one.";

    DescriptiveFrontmatterKey = "PR303" "descriptive-frontmatter-key" Info
        "A descriptive frontmatter key (`description`, `title`, …) that the loader ignores."
        "Keys such as `description`, `title`, `name`, `summary` and `tags` are tolerated as
documentation, but nothing reads them: they do not gate the file and are not part of the
prompt. This is informational only.";

    IneffectiveFrontmatterLine = "PR304" "ineffective-frontmatter-line" Warning
        "A frontmatter line that has no effect: a repeated key, an empty gate value, or no `:`."
        "In frontmatter a later line with the same key replaces an earlier one, an empty
`requires_setting:` or `requires:` counts as absent (the file is not gated), and a line without a
`:` after its first character is skipped. Each is usually a mistake.

Fix: keep one line per key, give gates a value, and write lines as `key: value`.";

    OversizedFile = "PR401" "oversized-file" Error
        "A rule file over 131072 bytes: it is skipped, and it hides lower copies of the same name."
        "A rule file larger than 128 KiB (131072 bytes) is not loaded. The name still counts as
handled, so no lower layer is tried: an oversized override silently hides the package rule of the
same name, and the prompt has neither.

Fix: shorten the file, or remove it so that the lower copy loads again.";

    StubOverride = "PR402" "stub-override" Warning
        "An override far smaller than the rule it replaces (a stub)."
        "An override replaces the lower layer's file of the same name entirely: there is no merge.
An override under a quarter of the size of the copy it shadows has almost certainly dropped
instructions the original gave, and the orchestrator loses that behaviour.

Fix: copy the original and edit it, rather than writing a short stub. To switch a rule off
on purpose, use an empty file or a link to `/dev/null`.";

    MaskedRule = "PR403" "masked-rule" Info
        "An empty override that masks a lower rule."
        "An empty file (or a link to `/dev/null`) shadows the lower copy of the same name and
contributes nothing: this is the documented way to switch a rule off. Reported so that a masked
rule is never a surprise.";

    NameOutOfRange = "PR404" "name-out-of-range" Warning
        "A rule name outside its layer's prefix range, or one that loads before the layers below it."
        "Rule files are joined in the order of their names, so a name says where its rule is read.
The convention for numbered names is `00`-`69` for the package layer, `70`-`89` for the user layer
and `90`-`99` for the project layer. A new name outside its layer's range mixes into another
layer's rules: `05-x.md` in the project layer is read among the package rules.

A name without a prefix, such as `commit.md`, is fine: under ICU root collation digits sort
before letters, so it is read after every numbered rule, after the rules of the layers below.
It is reported only when it sorts before some of those rules, which a name that starts with a
space, punctuation, a symbol or a digit does (`_x.md`, `-x.md`, `2fa.md`). Overrides must use the
lower rule's exact name and are never reported.

Fix: give the file a prefix in its layer's range, or a name that starts with a letter.";

    UnpaddedPrefix = "PR405" "unpadded-prefix" Warning
        "A numeric prefix that is not exactly two digits."
        "Names are sorted as text, not as numbers: `5-x.md` sorts after `40-x.md`, and `100-x.md`
before `20-x.md`. A prefix of one digit, or of three or more, breaks the reading order.

Fix: use two digits, such as `05-x.md`.";

    CollationOrder = "PR406" "collation-order" Warning
        "Files load in an order that differs from their numeric prefixes."
        "Rule files are joined in the order of their names under ICU root collation (JavaScript
`localeCompare`). When a file with a lower prefix sorts after one with a higher prefix, the
prompt reads in a different order than the names suggest.

Fix: pad prefixes to two digits so that text order and numeric order agree.";

    IgnoredFile = "PR407" "ignored-file" Warning
        "A file that looks like a rule but is never loaded."
        "Only entries whose names end in `.md` (lower case) and that are files or links are loaded.
`x.MD`, `x.markdown`, `x.md.bak`, `x.md~`, a directory named `x.md` and a FIFO are skipped
without a word.

Fix: rename the file to end in `.md`, or move it out of the rules directory.";

    UnreadableRule = "PR408" "unreadable-rule" Warning
        "A rule entry that cannot be read, so a lower copy (or nothing) is used."
        "A dangling link, a link to a directory, a link loop, a FIFO or socket, or a permission
problem makes the loader skip the entry and try the next lower layer's copy of the name. If no
layer provides a readable copy the rule is missing from the prompt.

Fix: repair or remove the entry.";

    UnusableLayer = "PR409" "unusable-layer" Error
        "A rule layer directory that cannot be listed, so none of its rules load."
        "The package directory given with `--package-dir` or `PI_RULES_PACKAGE_DIR` that does not
exist, or a layer path (`~/.pi/agent/rules`, `.pi/rules`) that is a file, a FIFO, a link loop or a
directory that cannot be read, contributes nothing. The loader says nothing about it, as the
reference does; the rules simply vanish, and with a mistyped package directory the prompt is the
one-line fallback.

Fix: correct the path, or make it a readable directory.";

    NonUtf8Name = "PR410" "non-utf8-name" Error
        "A rule file whose name is not valid UTF-8, which is never loaded."
        "The reference lists names as text, and a name with bytes that are not UTF-8 does not match
`*.md` there, so the file is skipped without a word.

Fix: rename the file to a UTF-8 name.";

    CrTableGap = "PR501" "cr-table-gap" Warning
        "A blank line containing `\\r` between table rows, which table repair does not remove."
        "After conditional rows are dropped, table repair removes blank lines between rows, but
only lines of spaces and tabs: a line holding a `\\r` (from Windows line endings) is not blank to
it, so the table is split in two in the prompt.

Fix: save the file with `\\n` line endings, or put the markers on the row lines themselves.";

    InvalidUtf8 = "PR502" "invalid-utf8" Error
        "Bytes that are not valid UTF-8; they become U+FFFD in the prompt."
        "Rule files are read as UTF-8. Each invalid byte sequence is replaced by the replacement
character U+FFFD, so the model sees `�` where the author wrote something else (usually text
saved in Latin-1 or Windows-1252).

Fix: re-save the file as UTF-8.";

    BidiControl = "PR503" "bidi-control" Error
        "A bidirectional control character that makes text read differently than it is."
        "Bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) reorder how text is
displayed, so a reviewer sees one instruction while the model reads another (the \"Trojan
Source\" and \"rules file backdoor\" attacks). Rule files have no legitimate use for them.

Fix: delete the characters, and review where the text came from.";

    InvisibleCharacter = "PR504" "invisible-character" Warning
        "An invisible character (zero-width space, joiner, word joiner, BOM inside the text)."
        "Zero-width and invisible characters (U+200B-U+200F, U+2060-U+2064, U+061C, U+FEFF after
the start) are not shown by editors and reviews but are read by the model. They can split
keywords so that a review misses them, or hide where text was pasted from.

Fix: delete them.";

    TagCharacter = "PR505" "tag-character" Error
        "Unicode tag characters, which can carry hidden instructions."
        "Tag characters (U+E0000-U+E007F) are invisible in editors and reviews, yet a model can read
them as ASCII: a run of them is hidden text (the \"rules file backdoor\" attack). The diagnostic
shows what the run decodes to.

Fix: delete them, and review where the text came from.";

    VariationSelector = "PR506" "variation-selector" Warning
        "A variation selector that changes nothing a reader sees."
        "Variation selectors pick a glyph variant of the character before them and are invisible
themselves. U+FE0F after an emoji (its colour form), one U+E0100-U+E01EF after a CJK ideograph
(an ideographic variant) and one Mongolian free variation selector after a Mongolian letter are
ordinary text and not reported. Any other one (U+FE00-U+FE0E anywhere, U+FE0F after a letter, a
supplementary selector after anything else) shows nothing, yet the model reads it. In rule files
and in settings strings alike it is usually left over from pasted text, or a probe for hidden
data.

Fix: delete it.";

    VariationSelectorRun = "PR507" "variation-selector-run" Error
        "Several variation selectors in a row: invisible data."
        "No text needs two variation selectors in a row. A run of them is invisible in editors and
reviews but reaches the model, and 256 selectors (U+FE00-U+FE0F and U+E0100-U+E01EF) are enough
to encode any byte, one byte each: this is how text is smuggled behind an emoji or a letter. The
diagnostic shows what the run reads as, one byte per selector, when that is text.

Fix: delete the run, and review where the text came from.";

    ControlCharacter = "PR508" "control-character" Error
        "A control character or a terminal escape sequence."
        "Control characters other than tab and line ends (C0 controls such as NUL, backspace and
ESC, DEL, and the C1 controls U+0080-U+009F) have no place in a rule or a settings string. Editors
show them oddly or not at all, and a terminal acts on them: an ANSI escape sequence such as
`ESC [8m` (conceal) or `ESC [2J` (clear screen) can hide or overwrite instructions when the file
is shown with `cat` or in a log, while the model still reads every byte. The diagnostic covers the
whole escape sequence.

Fix: delete it.";

    BareCarriageReturn = "PR509" "bare-carriage-return" Error
        "A carriage return not followed by a line feed."
        "A lone `\\r` is no line break in a rule (the model reads the text on both sides as one
line), but a terminal moves back to the start of the line on it and prints what follows over what
came before: with `Always ask first.\\rNever ask.` a reviewer using `cat` sees one instruction and
the model reads both. (`\\r\\n` line endings are not affected.)

Fix: end lines with `\\n` (or `\\r\\n` throughout), and delete a lone `\\r`.";

    InvisibleFormatCharacter = "PR510" "invisible-format-character" Warning
        "An invisible formatting or filler character."
        "Characters that display as nothing or as empty space but are not whitespace: the soft
hyphen U+00AD, the combining grapheme joiner U+034F, the Hangul fillers U+115F, U+1160, U+3164 and
U+FFA0, the Khmer inherent vowels U+17B4 and U+17B5, the Mongolian vowel separator U+180E, the
invisible operator U+2065, the deprecated format controls U+206A-U+206F, the interlinear annotation
controls U+FFF9-U+FFFB, the shorthand format controls U+1BCA0-U+1BCA3, the musical format
controls U+1D173-U+1D17A, and the reserved default-ignorable code points. Like zero-width
characters they can split a keyword so that a search or review misses it, or pad text invisibly.

Fix: delete them.";

    LineSeparator = "PR511" "line-separator" Warning
        "A Unicode line or paragraph separator (U+2028, U+2029)."
        "U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are line breaks to some programs and
invisible or a box to others, so a reader and the model can disagree about where a line ends;
JavaScript-era tools also treat them inconsistently.

Fix: use a plain line break (`\\n`).";

    HtmlComment = "PR512" "html-comment" Info
        "An HTML comment: hidden when the Markdown is rendered, read by the model."
        "Rule files reach the model as plain text, so an HTML comment (`<!-- ... -->`) is an
instruction like any other, but a rendered review (a pull request, a Markdown preview) shows
nothing of it. An unclosed `<!--` at the start of a line hides the whole rest of the file from
the rendered view. Comments inside code blocks and code spans are shown as written and are not
reported. This is informational: comments can be legitimate notes to the model.

Fix: if the model should follow it, make it visible text; otherwise delete it.";

    PrivateUseCharacter = "PR513" "private-use-character" Info
        "A private-use character, which has no standard meaning or look."
        "Private-use code points (U+E000-U+F8FF and planes 15 and 16) mean whatever a font or an
application decides: one reviewer sees an icon, another a box or nothing, and the model sees an
opaque code. This is informational: icon fonts use them legitimately.

Fix: replace them with plain text if the model should understand them.";

    LinkOutsideProject = "PR601" "link-outside-project" Error
        "A project rule or settings file that resolves outside the project."
        "A project rule or project settings file that is, or sits in a directory that is, a symbolic
link leading outside the project makes the prompt depend on whatever that path holds on each
machine. A cloned project can use it to pull a private file (`~/.ssh/id_ed25519`) into a prompt
that is sent to a model provider. The project is the repository root of the working directory,
or the working directory itself when that root is `$HOME` or above it (a dotfiles repository).
`assemble` still reads such a file, as the reference does, and names it on stderr; with
`--confine` it is refused and the lower copy is used.

Fix: commit the file itself, or put a personal rule in the user layer (`~/.pi/agent/rules`).";

    SpecialFile = "PR602" "special-file" Error
        "A rule that is, or links to, a special file such as `/proc/self/environ`."
        "A rule file that resolves under `/proc`, `/sys` or `/dev` (other than `/dev/null`, which
masks a rule), or to a device, puts whatever the kernel or the device gives into the prompt: a link
to `/proc/self/environ` sends every environment variable, API keys included, to the model
provider. This is checked in every layer. `assemble` still reads such a file, as the reference
does, and names it on stderr; with `--confine` it is refused and the lower copy is used.

Fix: remove the link.";

    SettingsParseError = "PR701" "settings-parse-error" Error
        "A settings file that does not parse; the whole file is ignored."
        "Settings files are JSON with `//` and `/* */` comments (JSONC). Trailing commas, single
quotes, unquoted keys, or a top-level value that is not an object make the whole file count as
`{}`: every setting in it is ignored and comes from the other settings file, the environment or
the default instead.

Fix: correct the syntax at the position shown.";

    SettingsInvalidValue = "PR702" "settings-invalid-value" Warning
        "A settings value that fails validation and is ignored."
        "Each value is checked against its key's type and range (for example `pidash_port` must be
an integer from 1 to 65535, and `review_loop_max_cycles` from 1 to 10). A value that fails is
ignored, as if the key were absent, so a lower source supplies it.

Fix: give a value of the right type and range.";

    SettingsUnknownKey = "PR703" "settings-unknown-key" Warning
        "A settings key that is not in the schema; it is ignored."
        "Keys that the settings schema does not know are ignored; usually a misspelling.

Fix: correct the key; the message suggests the closest one.";

    SettingsJsonIgnored = "PR704" "settings-json-ignored" Warning
        "Both `pi-config-settings.jsonc` and `.json` exist; the `.json` is ignored."
        "In each settings directory the `.jsonc` file wins when it exists, even if it cannot be
parsed; the `.json` beside it is never read or merged.

Fix: move what you need into the `.jsonc` file and delete the `.json`.";

    SettingsDuplicateKey = "PR705" "settings-duplicate-key" Warning
        "A settings key that appears more than once; only the last value counts."
        "As with `JSON.parse`, a repeated key keeps the last value. The earlier one is dead text
that a reader may take for the setting in force.

Fix: keep one entry per key.";

    SettingsUnreadable = "PR706" "settings-unreadable" Error
        "A settings file that exists but cannot be read; the whole file is ignored."
        "A settings file that is larger than the 1 MiB limit, is not a regular file (a FIFO, a
directory), is a link that leads nowhere (a link loop, a dangling link), or cannot be opened
(permissions) counts as `{}`: every setting in it comes from the other file, the environment or
the default instead.

Fix: make it a readable file of JSON with comments, or remove it.";

    UnreachableBlock = "PR801" "unreachable-block" Error
        "A block whose condition can never hold where it stands: its text never reaches the prompt."
        "A block is evaluated only when every block around it is kept and the file's frontmatter
gate passes. When those conditions contradict the block's own, no settings can ever show it:
`{{IFNOT:x}}` inside `{{IF:x}}`, `{{IF:x == 3}}` inside `{{IF:x == 5}}`, `{{IF:x == true}}`
inside `{{IFNOT:x}}`, or `{{IFNOT:x}}` in a file with `requires_setting: x`. The author usually
expects the text to appear in the other configuration, and it never does.

The check reasons over the classes of values each key can take under the schema, so it is exact
for the conditions the engine understands. Features are taken as independent of each other and
of the settings.

Fix: move the block out of the block that excludes it (often: after its closer), or remove it.";

    RedundantCondition = "PR802" "redundant-condition" Warning
        "A condition that the blocks around it (or the frontmatter gate) already guarantee."
        "`{{IF:x}}` inside `{{IF:x}}`, or `{{IF:coms_active}}` in a file with `requires:
coms_active`, always holds where it stands: the block is kept whenever it is reached. The extra
markers do no harm to the prompt, but they suggest a condition the author meant to write
differently, and they make the rule harder to read.

Fix: remove the inner markers and keep the text between them, or correct the condition.";

    EmptyTableRow = "PR803" "empty-table-row" Warning
        "A table row whose cells can all come out empty when blocks in it are dropped."
        "When the content of every cell of a row sits in blocks that some settings drop, the
prompt gets a row of empty cells, such as `|  |  |`, in those settings. The model then reads a
table with a blank entry. The finding names one combination of settings that does it.

Fix: put the whole row inside the block, with its line break: `{{IF:x}}| a | b |` on one line,
then `{{/IF}}` at the start of the next; table repair closes the gap a dropped row leaves.";

    BlankRun = "PR804" "blank-run" Info
        "Some settings leave two or more blank lines in a row in the prompt."
        "When blocks drop, the line breaks around them stay, and two blank lines or more can meet
where one was meant. A text that ends with a blank line adds to the blank line that joins it to
the next file, and a file whose text is empty in some settings adds two. Runs of blank lines
waste tokens and split the prompt in odd places. The finding names one combination of settings
that does it.

A rule file is expected to end with one line break, as editors write text files. Files are joined
with a blank line (`\\n\\n`), so that final line break makes two blank lines at the join: that is
the format's join, not the author's, and it is not reported. Only a text that ends with a blank
line (two line breaks or more, written out or left by a dropped block) is. Blank lines before a
file's first line of text are not reported (a blank line between the frontmatter's closing `---`
and the first heading is how frontmatter is usually written), nor are blank lines between two
table rows: table repair removes them.

Fix: keep the line break on one side of a block only (`text{{IF:x}}\\nmore{{/IF}}` rather than
`text\\n{{IF:x}}\\nmore\\n{{/IF}}\\n`), end a rule file with one line break after its last line
of text, and gate a file whose text can be empty with `requires_setting:` instead of wrapping all
of it in a block.";

    ExportOverLimit = "PR901" "export-over-limit" Warning
        "An exported file holds more than its agent reads, and the agent cuts the rest."
        "Agents cut their instruction files without a word: Codex reads the `AGENTS.md` files up to
`project_doc_max_bytes` (32 KiB by default), Copilot code review reads the first 4,000 characters
of `.github/copilot-instructions.md`, and Windsurf reads at most 6,000 characters of a rule file.
Past that, the rules at the end of the file never reach the model. `pi-rules export` warns with
this code when a file it writes, or would write, holds more (with `--max-bytes N`, more than N
bytes), and `pi-rules check` reports each exported file of the project that does.

Fix: shorten the rules, gate the ones an agent does not need with `requires_setting:`, move
hand-written text out of the file, or export a smaller set of layers (`--layers`).";

    ExportReadTwice = "PR902" "export-read-twice" Warning
        "An agent reads the same rule text from two of the project's files."
        "Some agents read several instruction files together, so a rule written into two of them
reaches the model twice, which costs tokens and weighs the rule double. Copilot reads
`AGENTS.md`, `CLAUDE.md`, `GEMINI.md` and `.github/copilot-instructions.md` together, the nested
`AGENTS.md`, `CLAUDE.md` and `GEMINI.md` too, and `.claude/rules/*.md` (a `paths:` pattern that
starts with `/` matches nothing for it), and it leaves out only a file byte for byte the same as
another; it follows an `@AGENTS.md` line, not `@./AGENTS.md`. Cline reads `.clinerules/` and
`AGENTS.md`. Claude Code reads `CLAUDE.md` (`AGENTS.md` only where there is no `CLAUDE.md`),
`.claude/rules/` and what an `@path` line imports. Codex joins the `AGENTS.md` files from the
repository root down to its working directory. Gemini CLI reads every `GEMINI.md`, and the other
names that `context.fileName` in `.gemini/settings.json` gives. `pi-rules check` compares the
paragraphs of those files (and each managed section as a whole), spaces and line breaks aside,
and reports, once for each agent and pair of files, the first rule that reaches that agent from
both, for files written by hand as well as by `pi-rules export`.

Fix: keep each rule in one of the files the agent reads: export the pointer form
(`pi-rules export --pointer`, whose `@./AGENTS.md` Copilot does not follow), leave out a target
whose agent reads another of the files, or delete the hand-written copy.";

    ExportHidden = "PR903" "export-hidden" Warning
        "A file that an agent reads in place of a file `export` wrote."
        "Some agents read one file instead of another when both exist, so the rules `export`
wrote are never seen. Codex reads `AGENTS.override.md` instead of `AGENTS.md` in the same
directory. Claude Code reads `AGENTS.md` only when there is no `CLAUDE.md` beside it, so a
hand-written `CLAUDE.md` (one without pi-rules' section, and without an `@AGENTS.md` import)
hides the exported `AGENTS.md` from it. Nothing tells the user: the agent starts without the
rules.

Fix: move what the other file says into the rules (or into the exported file, outside pi-rules'
section) and delete it; for Claude Code, export the `claude` target as well, or add a line
`@AGENTS.md` to the hand-written `CLAUDE.md`.";

    ExportCommentDropped = "PR904" "export-comment-dropped" Warning
        "Text inside an HTML comment of a rule exported to Claude Code, which strips comments."
        "Claude Code takes the HTML comments (`<!-- ... -->`) out of its memory files before the
model sees them; comments inside code blocks stay. pi-rules' own markers and generated-by line
go with no loss, but a rule that says something inside a comment says nothing to Claude Code,
though other agents (and pi) read it. `pi-rules check` reports such a comment on the rule file
in `.pi/rules` when the `claude` target is exported (a managed section in `CLAUDE.md`, or files
in `.claude/rules/pi-rules/`) and the rule is for Claude Code, and on the exported file when it
comes from elsewhere (another layer, or a file not exported again since).

Fix: make the text visible (delete the comment markers), or delete the comment if no agent
should read it.";

    ExportChainOverLimit = "PR905" "export-chain-over-limit" Warning
        "The `AGENTS.md` files from the repository root down to a directory hold more than Codex reads."
        "Codex joins the `AGENTS.md` files (or `AGENTS.override.md` where there is one) from the
repository root down to its working directory, and stops adding text once the join reaches
`project_doc_max_bytes` (32 KiB by default): the rules at the end of the chain, those of the
deepest directory, never reach the model. `pi-rules check` sums, for each directory that holds
an `AGENTS.md` (found by the same walk that looks for nested rule directories), the files on the
way from the root, and reports a chain once: at its deepest file when the chain above it is
within the limit, naming every file of it. A root `AGENTS.md` over the limit on its own is
reported as `export-over-limit` (PR901), and the chains below it are not reported again.

Fix: shorten the files of the chain, move rules that only one directory needs into that
directory's file and out of the root's, or export a smaller set of layers (`--layers`).";

    InvalidGlob = "PR1001" "invalid-glob" Error
        "A glob in `paths:` that cannot be used."
        "`paths:` lists gitignore-style globs, relative to the directory the rule's scope belongs to
(the project directory for `.pi/rules`, the nested directory for a nested `.pi/rules`). A glob
that does not compile (an unclosed `[` or `{`, a `\\` at the end), an empty glob, a negation
(`!src/**`: a scope lists what a rule is for), a glob that climbs out of its directory with `..`,
or one that names the whole directory (`/`) is not used: the rule's scope is narrower than it
reads, and with scopes on the rule may never be added.

Fix: correct the glob as the message says, or delete it.";

    ScopeOverBounds = "PR1002" "scope-over-bounds" Error
        "A `paths:` or `agents:` with more items, or a longer item, than a scope may hold."
        "A scope reads at most 1,000 items from one `paths:` or `agents:`, and an item of at most
1,024 bytes; the rest is dropped and not used, so that a rule file cannot make every command
slow. A scope that long is almost always a generated file or a mistake.

Fix: use fewer, broader globs (`src/api/**` rather than one glob per file), or split the rule.";

    UnknownAgent = "PR1003" "unknown-agent" Error
        "`agents:` names an agent pi-rules does not know."
        "`agents:` limits a rule to some agents: `pi`, and the agents whose files `export`
writes (`claude`, `codex`, `gemini`, `copilot`, `cursor`, `windsurf`, `cline`, `kiro` and
others). A name that is none of them matches no agent, so the rule would reach none through it;
it is usually a misspelling (`claud`) or a product name for an agent's vendor.

Fix: correct the name; the message suggests the closest known agent.";

    GlobMatchesNothing = "PR1004" "glob-matches-nothing" Warning
        "A glob in `paths:` that matches no file of the repository."
        "`check` walks the project directory (honouring `.gitignore` and `.git/info/exclude`, as
git does, and never following links) and tries every glob of every project and nested rule on
every file. A glob that matches none is usually a typo, a directory that was renamed, or a
pattern for files that are ignored (ignored files are not counted): with scopes on, the rule is
never added for it. Rules of the user layer are not tried, as they serve every project.

Fix: correct the glob, or delete it if the files are gone.";

    GlobNotPortable = "PR1005" "glob-not-portable" Info
        "A glob in `paths:` that some agent's rule format cannot hold as it is."
        "`export` writes scopes into other agents' rule files, and each agent's format holds its
globs in its own way. Cursor's `globs` and Windsurf's `globs` are one comma-separated value, so a
glob that holds a comma (`src/**/*.{ts,tsx}`) is cut in two there; Copilot's `applyTo` is
comma-separated too, but keeps a comma inside `{}` or `[]` with its glob. Claude Code's and
Cline's `paths` are lists, and Kiro's `fileMatchPattern` holds one pattern, so any glob fits.

Each agent also matches globs in its own way. Claude Code and Copilot in VS Code ignore case, so
a glob with upper-case letters (`docs/API/**`) also matches the paths that differ from it only in
case there; Claude Code matches nothing with a negated class (`[!x]`). A negation of the whole
glob (`!src/**`) no agent can take, and a scope refuses it (`invalid-glob`, PR1001). The finding
names the agents and why.

Fix: write the alternatives as separate globs (`src/**/*.ts` and `src/**/*.tsx`), list the
characters a class allows rather than those it leaves out, or leave it if you never export to
those agents (a glob with upper-case letters is fine where no two paths differ only in case).";

    NestedRuleReplaces = "PR1006" "nested-rule-replaces" Info
        "A nested rule that replaces a root rule of the same name inside its directory."
        "A `.pi/rules` directory below the project directory (`packages/api/.pi/rules`) holds
rules for that subtree. A rule there with the same name as a rule of the project directory (of
any layer) or of a nested directory above it replaces that rule for files in the subtree, as a
project rule replaces a package rule of the same name. This is usually meant; the finding names
the rule it replaces so that a name taken by accident is seen.

Fix: nothing, if it is meant; otherwise give the nested rule a name of its own.";

    ScopeHasNoEffect = "PR1007" "scope-has-no-effect" Warning
        "A `paths:` or `agents:` that pi does not honour yet, because scopes are off."
        "pi-config ignores `paths:` and `agents:`, and pi-rules gives pi's rules block byte for byte
as pi-config does unless the project turns scopes on. With scopes off (the default), a rule with
`paths: src/api/**` or `agents: claude` is in every pi prompt, whatever the agent is working on.
`export` honours scopes always.

Fix: turn scopes on for the project with `[rules] scoped = true` in `.pi/pi-rules.toml`.";

    NestedRulesHaveNoEffect = "PR1008" "nested-rules-have-no-effect" Info
        "A nested `.pi/rules` directory that pi does not read yet, because scopes are off."
        "A `.pi/rules` directory below the project directory holds rules for that subtree, but
with scopes off (the default) pi reads only the project directory's `.pi/rules`, as pi-config
does: the nested rules reach pi only when it is started inside that directory.

Fix: turn scopes on for the project with `[rules] scoped = true` in `.pi/pi-rules.toml`.";

    ConfigParseError = "PR751" "config-parse-error" Error
        "pi-rules' configuration file is not valid TOML, so none of it is read."
        "`.pi/pi-rules.toml` (the project's) and `~/.pi/agent/pi-rules.toml` (a person's) hold
pi-rules' own choices. A file that is not TOML (an unclosed string or table header, a key
written twice, a value TOML does not know) is not read at all: every key it would set keeps the
value of the other file or the default. The finding points at the place the TOML reader stopped.

Fix: correct the TOML at the line and column given.";

    ConfigUnknownKey = "PR752" "config-unknown-key" Error
        "A key that pi-rules' configuration file does not have."
        "The configuration file knows `[rules] scoped`, `[check]` with `ignore`, `severity` and
`per-path` (each entry with `paths`, `ignore` and `severity`), and `[export] layers`. Any other
key is ignored, which is usually a misspelling (`[rule]`, `ignores`, `per_path`) that leaves the
setting at its default. `pi-rules schema --config` prints the whole file's JSON schema.

Fix: correct the key; the message suggests the closest one.";

    ConfigInvalidValue = "PR753" "config-invalid-value" Error
        "A value of the wrong type in pi-rules' configuration file, or one it does not allow."
        "Each key of the configuration file takes one type: `scoped` a boolean, `ignore` and
`paths` lists of strings, a severity one of `\"error\"`, `\"warning\"`, `\"info\"` or `\"off\"`,
`layers` a list of `\"package\"`, `\"user\"` and `\"project\"`; each glob of `paths` must be a
valid glob. A value that is not allowed is ignored: the key keeps the value of the other file or
the default.

Fix: write the value as the message says.";

    UnknownLintCode = "PR754" "unknown-lint-code" Error
        "A diagnostic code that `check` does not have, in `[check]` or in a rule's `lint-ignore:`."
        "`[check] ignore`, `[check.severity]`, a `[[check.per-path]]` entry and a rule file's
frontmatter key `lint-ignore:` name diagnostic codes, by id (`PR804`) or by name (`blank-run`).
A code that does not exist silences nothing, which is usually a typo (`PR8044`) or a code from
another tool.

Fix: correct the code; the message suggests the closest one, and `pi-rules check --list-codes`
lists them all.";

    ConfigUnreadable = "PR755" "config-unreadable" Error
        "pi-rules' configuration file exists but cannot be read, so none of it is used."
        "A configuration file over 1 MiB, one that is not a regular file (a directory, a FIFO), a
link that leads nowhere, or one that cannot be opened is not read: every key keeps the value of
the other file or the default.

Fix: make the file a readable TOML file under 1 MiB, or remove it.";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order() {
        for (index, info) in CODES.iter().enumerate() {
            assert_eq!(info.code as usize, index, "{}", info.id);
        }
        assert_eq!(CODE_COUNT, CODES.len());
    }

    #[test]
    fn ids_and_names_are_unique_and_well_formed() {
        let mut seen = std::collections::HashSet::new();
        for info in CODES {
            assert!(seen.insert(info.id), "{}", info.id);
            assert!(seen.insert(info.name), "{}", info.name);
            assert!(
                (5..=6).contains(&info.id.len())
                    && info.id.starts_with("PR")
                    && info.id[2..].bytes().all(|b| b.is_ascii_digit()),
                "{}",
                info.id
            );
            assert!(info
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'-' || b.is_ascii_digit()));
            assert!(info.explanation.starts_with(info.id));
            assert!(info.explanation.contains(info.summary));
            assert!(!info.summary.contains('\n'), "{}", info.id);
        }
    }

    /// A code span may wrap at a line's end, but a line break written into one (rather than
    /// `\n`) shows as a broken line, or ends the paragraph.
    #[test]
    fn code_spans_hold_no_line_break_of_their_own() {
        for info in CODES {
            let spans = info.explanation.split('`').skip(1).step_by(2);
            for span in spans {
                assert!(
                    !span.contains("\n\n") && !span.starts_with('\n') && !span.ends_with('\n'),
                    "{}: {span:?}",
                    info.id
                );
            }
        }
        assert!(explain("PR804").is_some_and(|t| t.contains("(`\\n\\n`)")));
    }

    #[test]
    fn lookup_table() {
        let cases = [
            ("PR101", Some("PR101")),
            ("pr101", Some("PR101")),
            (" unknown-setting-key ", Some("PR101")),
            ("PR999", None),
            ("", None),
        ];
        for (input, expected) in cases {
            assert_eq!(lookup(input).map(|i| i.id), expected, "{input:?}");
        }
        assert!(explain("PR201").is_some_and(|t| t.contains("verbatim")));
    }
}
