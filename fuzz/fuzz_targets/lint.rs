//! Fuzz target: `check`'s linter on arbitrary rule files (raw bytes, invalid UTF-8 included) in
//! the three layers, and an arbitrary settings file.
//!
//! Checks: no panic; every position a finding has lies in its file's text as read (invalid UTF-8
//! replaced); the lines the report keeps place each span at the line and column the whole text
//! gives; every fix's edits are in order, apart, and on char boundaries.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use pi_rules_core::layer::Layer;
use pi_rules_core::lint::{
    lint, Content, Entry, LayerInput, LintInput, SchemaInfo, SettingsInput, FEATURES,
};
use pi_rules_core::settings::{Schema, SettingsFile};
use pi_rules_core::span;
use std::collections::HashMap;

#[derive(Arbitrary, Debug)]
struct Rule {
    layer: u8,
    name: String,
    bytes: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    rules: Vec<Rule>,
    settings: Option<String>,
    /// Whether pi honours scopes (`[rules] scoped`): the scope checks differ.
    scoped: bool,
}

fuzz_target!(|input: Input| {
    let kinds = [Layer::Package, Layer::User, Layer::Project];
    let mut layers: Vec<LayerInput> = kinds
        .iter()
        .map(|&kind| LayerInput::new(kind, Vec::new()))
        .collect();
    // Each rule at a path of its own, so that its text is the only one the report's lines
    // come from.
    let mut texts = HashMap::new();
    for (i, rule) in input.rules.into_iter().enumerate() {
        let layer = usize::from(rule.layer) % kinds.len();
        let name = format!("{}.md", rule.name.replace('/', "_"));
        let path = format!("{layer}/{i}/{name}");
        texts.insert(
            path.clone(),
            String::from_utf8_lossy(&rule.bytes).into_owned(),
        );
        layers[layer]
            .entries
            .push(Entry::new(name, path, Content::Bytes(rule.bytes)));
    }
    let schema = SchemaInfo::from_schema(Schema::embedded());
    let settings: Vec<SettingsInput> = input
        .settings
        .into_iter()
        .map(|text| SettingsInput {
            file_id: None,
            path: "settings.jsonc".to_string(),
            file: SettingsFile::parse(Schema::embedded(), &text),
            text,
            ignored_json: None,
            escape: None,
        })
        .collect();
    if let Some(settings) = settings.first() {
        texts.insert(settings.path.clone(), settings.text.clone());
    }
    let bytes = |a: &str, b: &str| a.cmp(b);
    let report = lint(LintInput {
        layers,
        settings: &settings,
        schema: &schema,
        features: FEATURES,
        collate: &bytes,
        scoped: input.scoped,
    });
    for diagnostic in &report.diagnostics {
        let Some(text) = texts.get(diagnostic.path.as_str()) else {
            continue;
        };
        let spans = diagnostic
            .span
            .iter()
            .cloned()
            .chain(diagnostic.labels.iter().map(|label| label.span.clone()));
        for span in spans {
            assert!(span.start <= span.end && span.end <= text.len());
            let lines = report.lines(&diagnostic.path).expect("lines of a finding");
            for offset in [span.start, span.end] {
                assert_eq!(lines.line_col(offset), span::line_col(text, offset));
            }
        }
        if let Some(fix) = &diagnostic.fix {
            let mut end = 0;
            for edit in &fix.edits {
                assert!(end <= edit.span.start && edit.span.start <= edit.span.end);
                assert!(text.get(edit.span.clone()).is_some());
                end = edit.span.end;
            }
        }
    }
});
