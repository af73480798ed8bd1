//! One configuration file read: the TOML parsed with `toml_edit` (which keeps every key's and
//! value's byte range), each key checked against the keys the file may have, and what it sets
//! ([`Settings`]) with a [`ConfigFinding`] for each problem. A value that is not allowed sets
//! nothing, so the key keeps the other file's value or its default.

use super::globs;
use super::{ConfigFinding, ConfigSource, ExportSettings, Level, PerPath};
use crate::export::targets::Target;
use crate::settings_source::SettingsOverrides;
use indexmap::IndexMap;
use pi_rules_core::layer::Layer;
use pi_rules_core::lint::{self, suggest, Code, MAX_PER_CODE};
use pi_rules_core::settings::Schema;
use pi_rules_core::span::line_col;
use std::ops::Range;
use std::path::Path;
use toml_edit::{Item, Key, TableLike, Value};

/// What one file sets; `None` (or empty) for what it does not.
#[derive(Debug, Default)]
pub(super) struct Settings {
    pub scoped: Option<bool>,
    pub ignore: Option<Vec<Code>>,
    pub severity: Vec<(Code, Level)>,
    pub per_path: Option<Vec<PerPath>>,
    pub layers: Option<Vec<Layer>>,
    pub targets: Option<Vec<String>>,
    pub export_settings: Option<ExportSettings>,
    pub set: Option<Vec<String>>,
}

/// The keys of the file's top level.
const TOP_KEYS: [&str; 3] = ["rules", "check", "export"];
const RULES_KEYS: [&str; 1] = ["scoped"];
const CHECK_KEYS: [&str; 3] = ["ignore", "severity", "per-path"];
const PER_PATH_KEYS: [&str; 3] = ["paths", "ignore", "severity"];
const EXPORT_KEYS: [&str; 4] = ["targets", "layers", "settings", "set"];
const LAYER_NAMES: [&str; 3] = ["package", "user", "project"];

/// The most globs a file's `[[check.per-path]]` entries hold together, and the most entries:
/// past them the rest are ignored (with a finding), so that a hostile file cannot make every
/// finding of `check` cost a walk through thousands of sets.
pub(super) const MAX_GLOBS: usize = 1_000;

/// Reads `text`, the file at `path`: what it sets, its findings in position order, and whether
/// it was TOML at all.
pub(super) fn read(
    text: &str,
    path: &Path,
    source: ConfigSource,
    schema: &Schema,
) -> (Settings, Vec<ConfigFinding>, bool) {
    let mut reader = Reader {
        text,
        path,
        source,
        schema,
        findings: Vec::new(),
        kept: IndexMap::new(),
        left_out: IndexMap::new(),
        globs: 0,
    };
    let document = match toml_edit::Document::parse(text) {
        Ok(document) => document,
        Err(err) => {
            let span = err.span().unwrap_or(0..0);
            let message = format!("not valid TOML: {}", first_line(err.message()));
            reader.report(Code::ConfigParseError, Some(span), message, None);
            return (Settings::default(), reader.findings, false);
        }
    };
    let mut set = Settings::default();
    reader.top(document.as_table(), &mut set);
    let mut findings = reader.findings;
    findings.sort_by_key(|f| f.span.as_ref().map_or(0, |s| s.start));
    // Each code's findings past the bound, summed up in one (as `check` does for a rule file).
    for (code, (count, span)) in reader.left_out {
        let at = line_col(text, span.as_ref().map_or(0, |s| s.start));
        findings.push(ConfigFinding {
            path: path.to_path_buf(),
            source,
            code,
            span,
            line: at.line,
            column: at.column,
            message: format!(
                "and {count} more `{}` findings in this file, not shown",
                code.id()
            ),
            help: None,
        });
    }
    (set, findings, true)
}

/// `text` for a message: at most 60 characters, the rest as `…`.
fn short(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The first line of a parser's message (they end in a line break, some hold a second line).
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("").trim()
}

/// A string of the file with where it is.
type Located<'d> = (&'d str, Option<Range<usize>>);

struct Reader<'t> {
    text: &'t str,
    path: &'t Path,
    source: ConfigSource,
    /// The settings keys `[export] set` may give values to.
    schema: &'t Schema,
    findings: Vec<ConfigFinding>,
    /// Per code, how many findings are kept.
    kept: IndexMap<Code, usize>,
    /// Per code, the findings past [`MAX_PER_CODE`]: how many, and where the first one is.
    left_out: IndexMap<Code, (usize, Option<Range<usize>>)>,
    /// The globs of per-path entries read so far.
    globs: usize,
}

/// What a value is, for messages: `a string`, `a boolean`, `a table`.
fn kind_of(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(value) => match value {
            Value::String(_) => "a string",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Boolean(_) => "a boolean",
            Value::Datetime(_) => "a date-time",
            Value::Array(_) => "an array",
            Value::InlineTable(_) => "an inline table",
        },
    }
}

fn value_kind(value: &Value) -> &'static str {
    kind_of(&Item::Value(value.clone()))
}

impl Reader<'_> {
    /// Whether `code` has its [`MAX_PER_CODE`] findings already (the next is only counted).
    fn is_full(&self, code: Code) -> bool {
        self.kept.get(&code).is_some_and(|&n| n >= MAX_PER_CODE)
    }

    fn report(
        &mut self,
        code: Code,
        span: Option<Range<usize>>,
        message: String,
        help: Option<String>,
    ) {
        let kept = self.kept.entry(code).or_insert(0);
        if *kept >= MAX_PER_CODE {
            self.left_out.entry(code).or_insert((0, span)).0 += 1;
            return;
        }
        *kept += 1;
        let at = line_col(self.text, span.as_ref().map_or(0, |s| s.start));
        self.findings.push(ConfigFinding {
            path: self.path.to_path_buf(),
            source: self.source,
            code,
            span,
            line: at.line,
            column: at.column,
            message,
            help,
        });
    }

    /// Where to point for the value of `key`: the value, else the key.
    fn at(key: &Key, item: &Item) -> Option<Range<usize>> {
        item.span().or_else(|| key.span())
    }

    /// An unknown key `name` of the table `table` (dotted, for the message), among `known`.
    fn unknown_key(&mut self, table: &str, key: &Key, known: &[&str]) {
        let name = short(key.get());
        let shown = if table.is_empty() {
            format!("`{name}`")
        } else {
            format!("`{name}` in `[{table}]`")
        };
        let help = match suggest::closest(&name, known.iter().copied()) {
            Some(near) => format!("did you mean `{near}`?"),
            None => {
                let list: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
                format!("the keys here are {}", list.join(", "))
            }
        };
        self.report(
            Code::ConfigUnknownKey,
            key.span(),
            format!("unknown key {shown}"),
            Some(help),
        );
    }

    /// A value of the wrong type for `key`.
    fn wrong_type(&mut self, dotted: &str, span: Option<Range<usize>>, wanted: &str, got: &str) {
        self.report(
            Code::ConfigInvalidValue,
            span,
            format!("`{dotted}` must be {wanted}, not {got}"),
            None,
        );
    }

    /// The entries of a table, each with its key (for its position).
    fn entries(table: &dyn TableLike) -> Vec<(&Key, &Item)> {
        table
            .iter()
            .filter_map(|(name, _)| table.get_key_value(name))
            .collect()
    }

    /// `item` as a table, or a finding.
    fn table<'d>(&mut self, dotted: &str, key: &Key, item: &'d Item) -> Option<&'d dyn TableLike> {
        let table = item.as_table_like();
        if table.is_none() {
            self.wrong_type(dotted, Self::at(key, item), "a table", kind_of(item));
        }
        table
    }

    fn top(&mut self, root: &toml_edit::Table, set: &mut Settings) {
        for (key, item) in Self::entries(root) {
            match key.get() {
                "rules" => {
                    if let Some(table) = self.table("rules", key, item) {
                        self.rules(table, set);
                    }
                }
                "check" => {
                    if let Some(table) = self.table("check", key, item) {
                        self.check(table, set);
                    }
                }
                "export" => {
                    if let Some(table) = self.table("export", key, item) {
                        self.export(table, set);
                    }
                }
                _ => self.unknown_key("", key, &TOP_KEYS),
            }
        }
    }

    fn rules(&mut self, table: &dyn TableLike, set: &mut Settings) {
        for (key, item) in Self::entries(table) {
            match key.get() {
                "scoped" => match item.as_bool() {
                    Some(on) => set.scoped = Some(on),
                    None => self.wrong_type(
                        "rules.scoped",
                        Self::at(key, item),
                        "`true` or `false`",
                        kind_of(item),
                    ),
                },
                _ => self.unknown_key("rules", key, &RULES_KEYS),
            }
        }
    }

    fn check(&mut self, table: &dyn TableLike, set: &mut Settings) {
        for (key, item) in Self::entries(table) {
            match key.get() {
                "ignore" => set.ignore = self.codes("check.ignore", key, item),
                "severity" => {
                    if let Some(table) = self.table("check.severity", key, item) {
                        set.severity = self.severities("check.severity", table);
                    }
                }
                "per-path" => set.per_path = self.per_path(key, item),
                _ => self.unknown_key("check", key, &CHECK_KEYS),
            }
        }
    }

    fn export(&mut self, table: &dyn TableLike, set: &mut Settings) {
        for (key, item) in Self::entries(table) {
            match key.get() {
                "layers" => set.layers = self.layers(key, item),
                "targets" => set.targets = self.targets(key, item),
                "settings" => set.export_settings = self.export_settings(key, item),
                "set" => set.set = self.set(key, item),
                _ => self.unknown_key("export", key, &EXPORT_KEYS),
            }
        }
    }

    /// The strings of an array, each with its span; a finding for the array when it is not
    /// one, and for each item that is not a string.
    fn strings<'d>(
        &mut self,
        dotted: &str,
        key: &Key,
        item: &'d Item,
        wanted: &str,
    ) -> Option<Vec<Located<'d>>> {
        let Some(array) = item.as_array() else {
            self.wrong_type(dotted, Self::at(key, item), wanted, kind_of(item));
            return None;
        };
        let mut out = Vec::with_capacity(array.len());
        for value in array.iter() {
            match value.as_str() {
                Some(text) => out.push((text, value.span())),
                None => {
                    let got = value_kind(value);
                    self.report(
                        Code::ConfigInvalidValue,
                        value.span(),
                        format!("`{dotted}` must be {wanted}; this item is {got}"),
                        None,
                    );
                }
            }
        }
        Some(out)
    }

    /// A list of codes (`ignore`): each known code; a finding for each unknown one.
    fn codes(&mut self, dotted: &str, key: &Key, item: &Item) -> Option<Vec<Code>> {
        let items = self.strings(dotted, key, item, "a list of codes such as `[\"PR512\"]`")?;
        let mut codes = Vec::with_capacity(items.len());
        for (text, span) in items {
            if let Some(code) = self.code(text, span) {
                if !codes.contains(&code) {
                    codes.push(code);
                }
            }
        }
        Some(codes)
    }

    /// The code `text` names (an id or a name), or a finding at `span`.
    fn code(&mut self, text: &str, span: Option<Range<usize>>) -> Option<Code> {
        match lint::lookup(text) {
            Some(info) => Some(info.code),
            None => {
                // The suggestion is worked out only for a finding that is shown.
                let (message, help) = if self.is_full(Code::UnknownLintCode) {
                    (String::new(), None)
                } else {
                    let message = format!("`{}` is not a diagnostic code", short(text));
                    (message, Some(lint::suggest_code(text)))
                };
                self.report(Code::UnknownLintCode, span, message, help);
                None
            }
        }
    }

    /// `[check.severity]` or a per-path entry's `severity`: code = level.
    fn severities(&mut self, dotted: &str, table: &dyn TableLike) -> Vec<(Code, Level)> {
        let mut out: Vec<(Code, Level)> = Vec::new();
        for (key, item) in Self::entries(table) {
            let Some(code) = self.code(key.get(), key.span()) else {
                continue;
            };
            let span = Self::at(key, item);
            let Some(name) = item.as_str() else {
                let wanted = "one of \"error\", \"warning\", \"info\" or \"off\"";
                let got = kind_of(item);
                let shown = format!("{dotted}.{}", key.get());
                self.wrong_type(&shown, span, wanted, got);
                continue;
            };
            let Some(level) = Level::parse(name) else {
                let prefix = Level::NAMES
                    .into_iter()
                    .find(|level| name.len() > 1 && level.starts_with(name));
                let help = match prefix.or_else(|| suggest::closest(name, Level::NAMES)) {
                    Some(near) => format!("did you mean \"{near}\"?"),
                    None => "a severity is \"error\", \"warning\", \"info\" or \"off\"".to_owned(),
                };
                self.report(
                    Code::ConfigInvalidValue,
                    span,
                    format!("`{}` is not a severity for `{}`", short(name), code.id()),
                    Some(help),
                );
                continue;
            };
            match out.iter_mut().find(|(c, _)| *c == code) {
                Some(slot) => slot.1 = level,
                None => out.push((code, level)),
            }
        }
        out
    }

    /// `[[check.per-path]]`: an array of tables (or an array of inline tables).
    fn per_path(&mut self, key: &Key, item: &Item) -> Option<Vec<PerPath>> {
        let mut tables: Vec<(&dyn TableLike, Option<Range<usize>>)> = Vec::new();
        match item {
            Item::ArrayOfTables(array) => {
                for table in array.iter() {
                    tables.push((table, table.span().or_else(|| key.span())));
                }
            }
            Item::Value(Value::Array(array)) => {
                for value in array.iter() {
                    match value.as_inline_table() {
                        Some(table) => tables.push((table, value.span())),
                        None => {
                            let got = value_kind(value);
                            self.wrong_type("check.per-path", value.span(), "a table", got);
                        }
                    }
                }
            }
            _ => {
                let wanted = "an array of tables (`[[check.per-path]]`)";
                self.wrong_type("check.per-path", Self::at(key, item), wanted, kind_of(item));
                return None;
            }
        }
        let mut entries = Vec::with_capacity(tables.len().min(MAX_GLOBS));
        for (i, (table, span)) in tables.into_iter().enumerate() {
            if i == MAX_GLOBS {
                self.report(
                    Code::ConfigInvalidValue,
                    span,
                    format!(
                        "more than {MAX_GLOBS} `[[check.per-path]]` entries: the rest are ignored"
                    ),
                    None,
                );
                break;
            }
            if let Some(entry) = self.per_path_entry(table, span) {
                entries.push(entry);
            }
        }
        Some(entries)
    }

    fn per_path_entry(
        &mut self,
        table: &dyn TableLike,
        span: Option<Range<usize>>,
    ) -> Option<PerPath> {
        let mut paths = None;
        let mut ignore = Vec::new();
        let mut severity = Vec::new();
        let mut matcher = globs::Matcher::default();
        for (key, item) in Self::entries(table) {
            match key.get() {
                "paths" => {
                    let wanted = "a list of globs such as `[\".pi/rules/legacy/**\"]`";
                    let dotted = "check.per-path.paths";
                    let Some(items) = self.strings(dotted, key, item, wanted) else {
                        // Present but unusable: the entry applies nowhere, and says so once.
                        paths = Some(Vec::new());
                        continue;
                    };
                    let mut kept = Vec::with_capacity(items.len());
                    for (glob, at) in items {
                        if self.globs >= MAX_GLOBS {
                            // Said once, at the first glob left out.
                            if self.globs == MAX_GLOBS {
                                self.report(
                                    Code::ConfigInvalidValue,
                                    at,
                                    format!("more than {MAX_GLOBS} globs in `[[check.per-path]]`: the rest are ignored"),
                                    None,
                                );
                                self.globs += 1;
                            }
                            break;
                        }
                        self.globs += 1;
                        match matcher.add(glob) {
                            Ok(()) => kept.push(glob.to_owned()),
                            Err(reason) => self.report(
                                Code::ConfigInvalidValue,
                                at,
                                format!("`{}` is not a valid glob: {reason}", short(glob)),
                                None,
                            ),
                        }
                    }
                    paths = Some(kept);
                }
                "ignore" => {
                    ignore = self
                        .codes("check.per-path.ignore", key, item)
                        .unwrap_or_default();
                }
                "severity" => {
                    if let Some(table) = self.table("check.per-path.severity", key, item) {
                        severity = self.severities("check.per-path.severity", table);
                    }
                }
                _ => self.unknown_key("[check.per-path]", key, &PER_PATH_KEYS),
            }
        }
        let Some(paths) = paths else {
            self.report(
                Code::ConfigInvalidValue,
                span,
                "a `[[check.per-path]]` entry needs `paths`, the globs of the files it is for"
                    .to_owned(),
                Some("add `paths = [\"GLOB\", ...]`, relative to the project root".to_owned()),
            );
            return None;
        };
        let matcher = match matcher.build() {
            Ok(set) => set,
            Err(reason) => {
                self.report(
                    Code::ConfigInvalidValue,
                    span,
                    format!(
                        "the globs of this `[[check.per-path]]` entry are too large to be \
                         compiled together ({reason}); the entry applies nowhere"
                    ),
                    Some("split the entry, or use fewer or shorter globs".to_owned()),
                );
                globset::GlobSet::empty()
            }
        };
        Some(PerPath {
            paths,
            ignore,
            severity,
            source: self.source,
            matcher,
        })
    }

    /// `[export] targets`: a list of target names, or one comma-separated string
    /// (`"agents-md,claude"`), as on the command line.
    fn targets(&mut self, key: &Key, item: &Item) -> Option<Vec<String>> {
        let wanted = "a list of targets such as `[\"agents-md\", \"claude\"]`";
        let items: Vec<(&str, Option<Range<usize>>)> = match item.as_str() {
            Some(text) => {
                let span = Self::at(key, item);
                text.split(',').map(|name| (name, span.clone())).collect()
            }
            None => self.strings("export.targets", key, item, wanted)?,
        };
        let mut targets: Vec<String> = Vec::with_capacity(items.len());
        for (name, span) in items {
            let name = name.trim();
            if Target::from_name(name).is_none() {
                let names = Target::ALL.map(Target::name);
                let help = match suggest::closest(name, names) {
                    Some(near) => format!("did you mean \"{near}\"?"),
                    None => format!("the targets are {}", crate::export::targets::names()),
                };
                self.report(
                    Code::ConfigInvalidValue,
                    span,
                    format!("`{}` is not an export target", short(name)),
                    Some(help),
                );
                continue;
            }
            if !targets.iter().any(|t| t == name) {
                targets.push(name.to_owned());
            }
        }
        Some(targets)
    }

    /// `[export] settings`: `"project"` or `"all"`, as `--settings`.
    fn export_settings(&mut self, key: &Key, item: &Item) -> Option<ExportSettings> {
        let span = Self::at(key, item);
        let Some(name) = item.as_str() else {
            let wanted = "\"project\" or \"all\"";
            self.wrong_type("export.settings", span, wanted, kind_of(item));
            return None;
        };
        match name {
            "project" => Some(ExportSettings::Project),
            "all" => Some(ExportSettings::All),
            _ => {
                let help = match suggest::closest(name, ["project", "all"]) {
                    Some(near) => format!("did you mean \"{near}\"?"),
                    None => "the choices are \"project\" (the project settings file and the \
                             schema defaults) and \"all\" (the whole chain)"
                        .to_owned(),
                };
                self.report(
                    Code::ConfigInvalidValue,
                    span,
                    format!("`{}` is not a settings choice", short(name)),
                    Some(help),
                );
                None
            }
        }
    }

    /// `[export] set`: a table of settings values, as `--set KEY=VALUE` each (`KEY=JSON`).
    /// A key the schema does not have, or a value its check rejects, is a finding.
    fn set(&mut self, key: &Key, item: &Item) -> Option<Vec<String>> {
        let table = self.table("export.set", key, item)?;
        let mut pairs = Vec::new();
        for (key, item) in Self::entries(table) {
            let span = Self::at(key, item);
            let name = key.get();
            let Some(json) = item.as_value().and_then(toml_to_json) else {
                let wanted = "a string, a number, a boolean, or a list or table of them";
                let shown = format!("export.set.{}", short(name));
                self.wrong_type(&shown, span, wanted, kind_of(item));
                continue;
            };
            let pair = format!("{name}={json}");
            match SettingsOverrides::parse(self.schema, std::slice::from_ref(&pair)) {
                Ok(_) => pairs.push(pair),
                Err(err) => {
                    let span = if self.schema.contains(name) {
                        span
                    } else {
                        key.span()
                    };
                    let message = err.0.replace("in `--set`", "in `[export] set`");
                    self.report(Code::ConfigInvalidValue, span, message, None);
                }
            }
        }
        Some(pairs)
    }

    /// `[export] layers`.
    fn layers(&mut self, key: &Key, item: &Item) -> Option<Vec<Layer>> {
        let wanted = "a list of layers such as `[\"project\"]`";
        let items = self.strings("export.layers", key, item, wanted)?;
        let mut layers = Vec::with_capacity(items.len());
        for (name, span) in items {
            let layer = match name {
                "package" => Layer::Package,
                "user" => Layer::User,
                "project" => Layer::Project,
                _ => {
                    let help = match suggest::closest(name, LAYER_NAMES) {
                        Some(near) => format!("did you mean \"{near}\"?"),
                        None => "the layers are \"package\", \"user\" and \"project\"".to_owned(),
                    };
                    self.report(
                        Code::ConfigInvalidValue,
                        span,
                        format!("`{}` is not a layer", short(name)),
                        Some(help),
                    );
                    continue;
                }
            };
            if !layers.contains(&layer) {
                layers.push(layer);
            }
        }
        Some(layers)
    }
}

/// A TOML value as JSON text, for `[export] set`; `None` for a date-time, which no setting
/// takes.
fn toml_to_json(value: &Value) -> Option<String> {
    fn convert(value: &Value) -> Option<serde_json::Value> {
        Some(match value {
            Value::String(s) => serde_json::Value::String(s.value().clone()),
            Value::Integer(i) => serde_json::Value::from(*i.value()),
            Value::Float(f) => serde_json::Number::from_f64(*f.value())?.into(),
            Value::Boolean(b) => serde_json::Value::Bool(*b.value()),
            Value::Datetime(_) => return None,
            Value::Array(array) => array.iter().map(convert).collect::<Option<_>>()?,
            Value::InlineTable(table) => serde_json::Value::Object(
                table
                    .iter()
                    .map(|(k, v)| Some((k.to_owned(), convert(v)?)))
                    .collect::<Option<_>>()?,
            ),
        })
    }
    Some(convert(value)?.to_string())
}
