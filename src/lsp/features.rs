//! The editor features over the host's IDE queries (hover, completion, inlay hints, symbols,
//! definition, references), converted to and from the protocol's types with a `LineIndex`.
//!
//! The host answers in byte offsets of the document's text ([`pi_rules_host::ide`]); this module
//! turns the client's positions into offsets and the answers' offsets into positions, in the
//! encoding negotiated at `initialize`. A definition in another file is converted with a
//! `LineIndex` of that file's text (the editor's buffer when it is open, else the file as saved),
//! in the same encoding.

use super::position::LineIndex;
use super::uri;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, DocumentSymbol, Documentation, Hover,
    HoverContents, InlayHint, InlayHintLabel, InlayHintTooltip, Location, MarkupContent,
    MarkupKind, Position, Range, SymbolKind, TextEdit,
};
use pi_rules_host::files::bounded::MAX_SETTINGS_BYTES;
use pi_rules_host::ide::{self, CompletionKind, DocumentKind, IdeContext, Symbol, Target};
use pi_rules_host::loader::READ_LIMIT;
use std::path::Path;

/// The hover at `at` of the document at `path`: the host's Markdown and the range it is about.
/// On an item of a rule's `paths:` or `agents:`, the scope's hover; in pi-rules' configuration
/// file, its own; else the rule's or settings file's.
pub fn hover(
    ctx: &IdeContext,
    kind: &DocumentKind,
    path: &Path,
    text: &str,
    lines: &LineIndex,
    at: Position,
) -> Option<Hover> {
    let offset = lines.offset(at);
    let info = match kind {
        DocumentKind::Config { .. } => ide::config_hover(ctx, text, offset),
        _ => ide::scope_hover(ctx, kind, path, text, offset)
            .or_else(|| ide::hover(ctx, kind, text, offset)),
    }?;
    Some(Hover {
        contents: HoverContents::Markup(markdown(info.markdown)),
        range: Some(lines.range(info.range)),
    })
}

/// The completions at `at` of the document at `path`, each a text edit of the range it
/// replaces, in the host's order: on an item of a rule's `paths:` or `agents:`, the scope's
/// (directories, agents); in pi-rules' configuration file, its sections, keys and values; else
/// the rule's or settings file's.
pub fn completion(
    ctx: &IdeContext,
    kind: &DocumentKind,
    path: &Path,
    text: &str,
    lines: &LineIndex,
    at: Position,
) -> Vec<CompletionItem> {
    let offset = lines.offset(at);
    let items = match kind {
        DocumentKind::Config { .. } => ide::config_completions(text, offset),
        _ => ide::scope_completions(ctx, kind, path, text, offset)
            .unwrap_or_else(|| ide::completions(ctx, kind, text, offset)),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let kind = match item.kind {
                CompletionKind::Key => CompletionItemKind::PROPERTY,
                CompletionKind::Value => CompletionItemKind::VALUE,
                CompletionKind::Feature => CompletionItemKind::CONSTANT,
                CompletionKind::Closer => CompletionItemKind::KEYWORD,
                CompletionKind::Agent => CompletionItemKind::ENUM_MEMBER,
                CompletionKind::Path => CompletionItemKind::FOLDER,
            };
            // The client filters on the text of the range up to the cursor: what is inserted
            // starts as that text does (`"log_r` for `"log_rules": `), the label may not.
            let filter_text = (item.insert != item.label).then(|| item.insert.clone());
            CompletionItem {
                label: item.label,
                kind: Some(kind),
                detail: item.detail,
                documentation: item
                    .documentation
                    .map(|d| Documentation::MarkupContent(markdown(d))),
                sort_text: Some(format!("{i:04}")),
                filter_text,
                text_edit: Some(CompletionTextEdit::Edit(TextEdit {
                    range: lines.range(item.replace),
                    new_text: item.insert,
                })),
                ..CompletionItem::default()
            }
        })
        .collect()
}

/// The most items one answer lists (outline symbols, inlay hints): a document of megabytes can
/// hold hundreds of thousands of blocks, and an answer of them all would take seconds to write
/// and more for an editor to read, while nobody reads an outline that long.
pub const MAX_ITEMS: usize = 5_000;

/// The hints after the openers that lie in `range` (its ends included), the first
/// [`MAX_ITEMS`].
pub fn inlay_hints(
    ctx: &IdeContext,
    kind: &DocumentKind,
    text: &str,
    lines: &LineIndex,
    range: Range,
) -> Vec<InlayHint> {
    let wanted = lines.offsets(range);
    ide::inlay_hints(ctx, kind, text)
        .into_iter()
        .filter(|hint| wanted.start <= hint.offset && hint.offset <= wanted.end)
        .take(MAX_ITEMS)
        .map(|hint| InlayHint {
            position: lines.position(hint.offset),
            label: InlayHintLabel::String(hint.label),
            kind: None,
            text_edits: None,
            tooltip: hint.tooltip.map(InlayHintTooltip::String),
            padding_left: Some(true),
            padding_right: None,
            data: None,
        })
        .collect()
}

/// The outline: a rule file's frontmatter and blocks, nested; a settings file's keys; the
/// configuration file's sections. The first [`MAX_ITEMS`] symbols in text order (a symbol before
/// its children).
pub fn document_symbols(kind: &DocumentKind, text: &str, lines: &LineIndex) -> Vec<DocumentSymbol> {
    let symbol_kind = match kind {
        DocumentKind::Settings { .. } => SymbolKind::KEY,
        _ => SymbolKind::NAMESPACE,
    };
    // The host's outline is at most `MAX_DEPTH` deep, so this recursion is bounded.
    fn convert(
        symbol: Symbol,
        kind: SymbolKind,
        lines: &LineIndex,
        left: &mut usize,
    ) -> DocumentSymbol {
        *left -= 1;
        let name = if symbol.name.is_empty() {
            "\"\"".to_owned()
        } else {
            symbol.name
        };
        #[allow(deprecated)]
        DocumentSymbol {
            name,
            detail: symbol.detail,
            kind,
            tags: None,
            deprecated: None,
            range: lines.range(symbol.range),
            selection_range: lines.range(symbol.selection),
            children: (!symbol.children.is_empty() && *left > 0).then(|| {
                let mut children = Vec::new();
                for child in symbol.children {
                    if *left == 0 {
                        break;
                    }
                    children.push(convert(child, kind, lines, left));
                }
                children
            }),
        }
    }
    let symbols = match kind {
        DocumentKind::Config { .. } => ide::config_symbols(text),
        _ => ide::symbols(kind, text),
    };
    let mut left = MAX_ITEMS;
    let mut out = Vec::new();
    for symbol in symbols {
        if left == 0 {
            break;
        }
        out.push(convert(symbol, symbol_kind, lines, &mut left));
    }
    out
}

/// Where what is at `at` is defined ([`ide::definition`]), as locations.
pub fn definition(
    ctx: &IdeContext,
    kind: &DocumentKind,
    text: &str,
    lines: &LineIndex,
    at: Position,
) -> Vec<Location> {
    locations(ctx, ide::definition, kind, text, lines, at)
}

/// Every place that has what is at `at` ([`ide::references`]), as locations.
pub fn references(
    ctx: &IdeContext,
    kind: &DocumentKind,
    text: &str,
    lines: &LineIndex,
    at: Position,
) -> Vec<Location> {
    locations(ctx, ide::references, kind, text, lines, at)
}

/// The targets `query` gives at `at`, as locations; a range in another file is converted with
/// that file's lines, in the same encoding.
fn locations(
    ctx: &IdeContext,
    query: fn(&IdeContext, &DocumentKind, &str, usize) -> Vec<Target>,
    kind: &DocumentKind,
    text: &str,
    lines: &LineIndex,
    at: Position,
) -> Vec<Location> {
    let encoding = lines.encoding();
    query(ctx, kind, text, lines.offset(at))
        .into_iter()
        .map(|target| {
            let uri = uri::from_path(&target.path);
            let range = match target.range {
                None => Range::default(),
                Some(bytes) => match target_text(ctx, &target.path) {
                    Some(text) => LineIndex::new(&text, encoding).range(bytes),
                    None => Range::default(),
                },
            };
            Location { uri, range }
        })
        .collect()
}

/// The text of another file: the editor's buffer when it is open, else the file, bounded.
fn target_text(ctx: &IdeContext, path: &Path) -> Option<String> {
    let limit = READ_LIMIT.max(MAX_SETTINGS_BYTES);
    ctx.session().files().read_text(path, limit).ok().flatten()
}

fn markdown(value: String) -> MarkupContent {
    MarkupContent {
        kind: MarkupKind::Markdown,
        value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::position::Encoding;
    use pi_rules_core::settings::Schema;
    use pi_rules_host::env::Env;
    use pi_rules_host::ide::IdeOptions;
    use pi_rules_host::session::Session;
    use std::borrow::Cow;
    use std::fs;

    struct Project {
        _tmp: tempfile::TempDir,
        cwd: std::path::PathBuf,
        home: std::path::PathBuf,
    }

    impl Project {
        fn new() -> Project {
            let tmp = tempfile::tempdir().unwrap();
            let root = fs::canonicalize(tmp.path()).unwrap();
            let cwd = root.join("app");
            let home = root.join("home");
            fs::create_dir_all(cwd.join(".pi/rules")).unwrap();
            fs::create_dir_all(&home).unwrap();
            Project {
                _tmp: tmp,
                cwd,
                home,
            }
        }

        fn ctx(&self) -> IdeContext {
            let env = Env::from_vars(
                self.cwd.clone(),
                [
                    ("HOME", self.home.display().to_string()),
                    (
                        "XDG_CACHE_HOME",
                        self.home.join("cache").display().to_string(),
                    ),
                ],
            );
            let session = Session::in_env(
                env,
                self.cwd.clone(),
                Some(self.home.clone()),
                Cow::Borrowed(Schema::embedded()),
            );
            IdeContext::new(&session, &IdeOptions::default()).unwrap()
        }

        fn rule_path(&self) -> std::path::PathBuf {
            self.cwd.join(".pi/rules/a.md")
        }

        fn settings_path(&self) -> std::path::PathBuf {
            self.cwd.join(".pi/pi-config-settings.json")
        }
    }

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    fn rule() -> DocumentKind {
        DocumentKind::Rule {
            layer: pi_rules_host::loader::Layer::Project,
            name: "a.md".to_owned(),
        }
    }

    /// After an emoji (two UTF-16 units, four UTF-8 bytes) and an accented letter (one unit, two
    /// bytes), the same place has a different character in each encoding, and both find it.
    #[test]
    fn positions_after_an_emoji_in_each_encoding() {
        let p = Project::new();
        let ctx = p.ctx();
        let text = "x\n😀é {{IF:dco}}y{{/IF}}\n";
        // `{{IF:` starts after 😀é and a space: 4 UTF-16 units, 7 bytes.
        for (encoding, opener) in [(Encoding::Utf16, 4), (Encoding::Utf8, 7)] {
            let lines = LineIndex::new(text, encoding);
            let on_key = pos(1, opener + 6);
            let hover = hover(&ctx, &rule(), &p.rule_path(), text, &lines, on_key).unwrap();
            assert_eq!(
                hover.range,
                Some(Range {
                    start: pos(1, opener),
                    end: pos(1, opener + 10)
                }),
                "{encoding:?}"
            );
            let HoverContents::Markup(content) = &hover.contents else {
                panic!("markdown expected");
            };
            assert_eq!(content.kind, MarkupKind::Markdown);
            assert!(content.value.contains("**This block:** dropped"));
            let hints = inlay_hints(
                &ctx,
                &rule(),
                text,
                &lines,
                Range {
                    start: pos(0, 0),
                    end: pos(9, 0),
                },
            );
            assert_eq!(hints.len(), 1);
            assert_eq!(hints[0].position, pos(1, opener + 10), "{encoding:?}");
            assert!(matches!(
                &hints[0].label,
                InlayHintLabel::String(label) if label == "dropped: dco = false, default"
            ));
            // Outside the requested range: none.
            let none = inlay_hints(
                &ctx,
                &rule(),
                text,
                &lines,
                Range {
                    start: pos(0, 0),
                    end: pos(0, 1),
                },
            );
            assert!(none.is_empty());
        }
    }

    #[test]
    fn scope_items_complete_and_hover_in_the_protocol_s_terms() {
        let p = Project::new();
        fs::create_dir_all(p.cwd.join("src/api")).unwrap();
        fs::write(p.cwd.join("src/api/h.ts"), "").unwrap();
        let ctx = p.ctx();
        let text = "---\n# 😀\nagents: cla\npaths:\n  - sr\n---\n";
        let lines = LineIndex::new(text, Encoding::Utf16);
        let items = completion(&ctx, &rule(), &p.rule_path(), text, &lines, pos(2, 11));
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].kind, Some(CompletionItemKind::ENUM_MEMBER));
        let Some(CompletionTextEdit::Edit(edit)) = &items[0].text_edit else {
            panic!("a text edit expected");
        };
        assert_eq!(
            (edit.range, edit.new_text.as_str()),
            (
                Range {
                    start: pos(2, 8),
                    end: pos(2, 11)
                },
                "claude"
            )
        );
        let items = completion(&ctx, &rule(), &p.rule_path(), text, &lines, pos(4, 6));
        let labels: Vec<&str> = items.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["src/**", "src/api/**"]);
        assert!(items
            .iter()
            .all(|i| i.kind == Some(CompletionItemKind::FOLDER)));
        let text = text.replace("- sr", "- src/api");
        let lines = LineIndex::new(&text, Encoding::Utf16);
        let hover = hover(&ctx, &rule(), &p.rule_path(), &text, &lines, pos(4, 5)).unwrap();
        assert_eq!(
            hover.range,
            Some(Range {
                start: pos(4, 4),
                end: pos(4, 11)
            })
        );
        let HoverContents::Markup(content) = &hover.contents else {
            panic!("markdown expected");
        };
        assert!(
            content.value.contains("Matches 1 file"),
            "{}",
            content.value
        );
        assert!(
            content.value.contains("`src/api/h.ts`"),
            "{}",
            content.value
        );
    }

    #[test]
    fn completion_edits_replace_what_was_typed() {
        let p = Project::new();
        let ctx = p.ctx();
        let text = "😀 {{IF:us";
        let lines = LineIndex::new(text, Encoding::Utf16);
        // 😀 is two units, then ` {{IF:` five: the key starts at 8.
        let items = completion(&ctx, &rule(), &p.rule_path(), text, &lines, pos(0, 10));
        let item = items.iter().find(|i| i.label == "use_worktrees").unwrap();
        assert_eq!(item.kind, Some(CompletionItemKind::PROPERTY));
        let Some(CompletionTextEdit::Edit(edit)) = &item.text_edit else {
            panic!("a text edit expected");
        };
        assert_eq!(
            edit.range,
            Range {
                start: pos(0, 8),
                end: pos(0, 10)
            }
        );
        assert_eq!(edit.new_text, "use_worktrees");
        assert_eq!(item.filter_text, None);
        // Sorted in the host's order.
        assert!(items.windows(2).all(|w| w[0].sort_text < w[1].sort_text));
        // In a settings file the insert is quoted, and filtered on what it inserts.
        let settings = DocumentKind::Settings {
            scope: ide::SettingsScope::Project,
        };
        let text = "{\"dc";
        let lines = LineIndex::new(text, Encoding::Utf16);
        let items = completion(&ctx, &settings, &p.settings_path(), text, &lines, pos(0, 4));
        let dco = items.iter().find(|i| i.label == "dco").unwrap();
        assert_eq!(dco.filter_text.as_deref(), Some("\"dco\": "));
    }

    #[test]
    fn symbols_nest_with_positions() {
        let text = "é\n{{IF:a}}\n{{IF:b}}x{{/IF}}\n{{/IF}}";
        let lines = LineIndex::new(text, Encoding::Utf16);
        let symbols = document_symbols(&rule(), text, &lines);
        assert_eq!(symbols.len(), 1);
        let a = &symbols[0];
        assert_eq!(a.name, "IF a");
        assert_eq!(a.range.start, pos(1, 0));
        assert_eq!(a.range.end, pos(3, 7));
        assert_eq!(a.selection_range.end, pos(1, 8));
        let children = a.children.as_ref().unwrap();
        assert_eq!(children[0].name, "IF b");
        assert_eq!(
            children[0].range,
            Range {
                start: pos(2, 0),
                end: pos(2, 16)
            }
        );
        assert!(children[0].children.is_none());
    }

    /// A document of more blocks than an answer lists: the first [`MAX_ITEMS`], a parent
    /// before its children, and as many hints.
    #[test]
    fn an_outline_and_hints_stop_at_the_limit() {
        let text = "{{IF:dco}}\n{{IF:dco}}a{{/IF}}\n{{/IF}}\n".repeat(MAX_ITEMS);
        let lines = LineIndex::new(&text, Encoding::Utf16);
        let symbols = document_symbols(&rule(), &text, &lines);
        fn count(symbols: &[DocumentSymbol]) -> usize {
            symbols
                .iter()
                .map(|s| 1 + s.children.as_deref().map_or(0, count))
                .sum()
        }
        assert_eq!(count(&symbols), MAX_ITEMS);
        assert_eq!(symbols.len(), MAX_ITEMS / 2);
        assert!(symbols
            .iter()
            .all(|s| s.children.as_ref().unwrap().len() == 1));
        let p = Project::new();
        let whole = Range {
            start: pos(0, 0),
            end: pos(u32::MAX, u32::MAX),
        };
        let hints = inlay_hints(&p.ctx(), &rule(), &text, &lines, whole);
        assert!(hints.len() <= MAX_ITEMS, "{}", hints.len());
    }

    /// A definition in another file gets that file's positions, in the same encoding.
    #[test]
    fn a_settings_line_is_located_in_its_own_file() {
        let p = Project::new();
        let settings = p.cwd.join(".pi/pi-config-settings.json");
        fs::write(&settings, "{\n  \"😀\": 1,  \"dco\": true\n}").unwrap();
        let ctx = p.ctx();
        let text = "{{IF:dco}}x{{/IF}}";
        for (encoding, column) in [(Encoding::Utf16, 12), (Encoding::Utf8, 14)] {
            let lines = LineIndex::new(text, encoding);
            let found = definition(&ctx, &rule(), text, &lines, pos(0, 6));
            assert_eq!(found.len(), 1);
            assert_eq!(found[0].uri, uri::from_path(&settings));
            assert_eq!(
                found[0].range,
                Range {
                    start: pos(1, column),
                    end: pos(1, column + 5)
                },
                "{encoding:?}"
            );
        }
        // References of the file itself: its one copy, at the file's start.
        let lines = LineIndex::new(text, Encoding::Utf16);
        fs::write(p.cwd.join(".pi/rules/a.md"), text).unwrap();
        let ctx = p.ctx();
        let refs = references(&ctx, &rule(), text, &lines, pos(0, 11));
        assert_eq!(refs.len(), 1);
        assert_eq!(refs[0].range, Range::default());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any text, any position (past a line's end, past the last line, inside a surrogate
        /// pair), either encoding: every feature answers, and every position it gives is on a
        /// line of the text.
        #[test]
        fn every_feature_is_total(
            text in "(\\{\\{(IF|IFNOT|/IF|/IFNOT)?:?|\\}\\}|dco|log_rules == |---\n|requires: |paths: |agents: |  - |\"|:|,|\\{|😀|é|\r\n|\n|[a-z ]{0,3}){0,30}",
            line in 0u32..12,
            character in 0u32..40,
            utf8 in proptest::bool::ANY,
        ) {
            let p = Project::new();
            let ctx = p.ctx();
            let encoding = if utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
            let lines = LineIndex::new(&text, encoding);
            let last = lines.line_count() as u32;
            let on_text = |position: Position| position.line < last;
            let at = pos(line, character);
            let whole = Range { start: pos(0, 0), end: pos(u32::MAX, u32::MAX) };
            for kind in [rule(), DocumentKind::Settings { scope: ide::SettingsScope::Global }] {
                if let Some(Hover { range: Some(r), .. }) = hover(&ctx, &kind, &p.rule_path(), &text, &lines, at) {
                    proptest::prop_assert!(on_text(r.start) && on_text(r.end));
                }
                for item in completion(&ctx, &kind, &p.rule_path(), &text, &lines, at) {
                    if let Some(CompletionTextEdit::Edit(edit)) = item.text_edit {
                        proptest::prop_assert!(on_text(edit.range.start) && on_text(edit.range.end));
                    }
                }
                for hint in inlay_hints(&ctx, &kind, &text, &lines, whole) {
                    proptest::prop_assert!(on_text(hint.position));
                }
                for symbol in document_symbols(&kind, &text, &lines) {
                    proptest::prop_assert!(on_text(symbol.range.start) && on_text(symbol.range.end));
                }
                let _ = definition(&ctx, &kind, &text, &lines, at);
                let _ = references(&ctx, &kind, &text, &lines, at);
            }
        }
    }
}
