//! Tests of the configuration: precedence and sources over real files, each finding with its
//! line and column, and `[check]`'s word on a finding.
#![allow(clippy::disallowed_methods)]

use super::*;
use crate::settings_source::SettingsOverrides;
use pi_rules_core::settings::Schema;
use std::borrow::Cow;
use std::fs;

/// A project and a `$HOME` in a temporary directory.
struct Place {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    home: PathBuf,
}

impl Place {
    fn new() -> Place {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let project = root.join("project");
        let home = root.join("home");
        fs::create_dir_all(project.join(".pi")).unwrap();
        fs::create_dir_all(home.join(".pi/agent")).unwrap();
        Place {
            _tmp: tmp,
            project,
            home,
        }
    }

    fn user(&self, text: &str) -> PathBuf {
        let path = self.home.join(".pi/agent/pi-rules.toml");
        fs::write(&path, text).unwrap();
        path
    }

    fn project(&self, text: &str) -> PathBuf {
        let path = self.project.join(".pi/pi-rules.toml");
        fs::write(&path, text).unwrap();
        path
    }

    fn read(&self) -> LoadedConfig {
        let session = Session::from_parts(
            self.project.clone(),
            Some(self.home.clone()),
            Cow::Borrowed(Schema::embedded()),
        );
        Config::read(&session)
    }
}

/// The findings of `text` as a project file: (code, line, column).
fn findings_of(text: &str) -> Vec<(Code, usize, usize)> {
    let (_, found, _) = file::read(
        text,
        Path::new("p.toml"),
        ConfigSource::Project,
        Schema::embedded(),
    );
    found.iter().map(|f| (f.code, f.line, f.column)).collect()
}

#[test]
fn without_files_everything_is_its_default() {
    let place = Place::new();
    let loaded = place.read();
    assert_eq!(loaded.config, Config::default());
    assert!(!loaded.config.scoped());
    assert_eq!(loaded.config.export.layers, vec![Layer::Project]);
    assert!(loaded.sources.is_empty());
    assert!(loaded.findings.is_empty());
    let states: Vec<(ConfigSource, &FileState)> =
        loaded.files.iter().map(|f| (f.source, &f.state)).collect();
    assert_eq!(
        states,
        [
            (ConfigSource::User, &FileState::Missing),
            (ConfigSource::Project, &FileState::Missing)
        ]
    );
    for key in KEYS {
        assert_eq!(loaded.source(key), ConfigSource::Default, "{key}");
    }
}

#[test]
fn the_project_file_overrides_the_user_file_key_by_key() {
    let place = Place::new();
    place.user(
        "[rules]\nscoped = true\n[check]\nignore = [\"PR512\"]\n[check.severity]\nPR804 = \"warning\"\nPR504 = \"error\"\n",
    );
    place.project("[rules]\nscoped = false\n[check.severity]\nPR504 = \"off\"\n[export]\nlayers = [\"user\", \"project\"]\n");
    let loaded = place.read();
    assert!(loaded.findings.is_empty(), "{:?}", loaded.findings);
    let config = &loaded.config;
    assert!(!config.scoped());
    assert_eq!(config.check.ignore, vec![Code::HtmlComment]);
    assert_eq!(
        config.check.severity,
        vec![
            (Code::BlankRun, Level::Warning),
            (Code::InvisibleCharacter, Level::Off)
        ]
    );
    assert_eq!(config.export.layers, vec![Layer::User, Layer::Project]);
    let cases = [
        ("rules.scoped", ConfigSource::Project),
        ("check.ignore", ConfigSource::User),
        ("check.severity.PR804", ConfigSource::User),
        ("check.severity.PR504", ConfigSource::Project),
        ("check.per-path", ConfigSource::Default),
        ("export.layers", ConfigSource::Project),
    ];
    for (key, source) in cases {
        assert_eq!(loaded.source(key), source, "{key}");
    }
}

#[test]
fn a_project_file_is_at_the_repository_root_when_started_below_it() {
    let place = Place::new();
    // A minimal git directory that native discovery accepts.
    let git = place.project.join(".git");
    fs::create_dir_all(git.join("objects")).unwrap();
    fs::create_dir_all(git.join("refs")).unwrap();
    fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(
        git.join("config"),
        "[core]\n\trepositoryformatversion = 0\n",
    )
    .unwrap();
    let below = place.project.join("packages/api");
    fs::create_dir_all(&below).unwrap();
    let path = place.project("[rules]\nscoped = true\n");
    let session = Session::from_parts(
        below,
        Some(place.home.clone()),
        Cow::Borrowed(Schema::embedded()),
    );
    let loaded = Config::read(&session);
    assert!(loaded.config.scoped());
    assert_eq!(loaded.file(ConfigSource::Project).unwrap().path, path);
}

#[test]
fn every_finding_has_its_line_and_column() {
    use Code::*;
    type Case<'c> = (&'c str, &'c [(Code, usize, usize)]);
    let cases: &[Case<'_>] = &[
        ("[rules]\nscoped = true\n", &[]),
        ("[rules\nscoped = true\n", &[(ConfigParseError, 1, 7)]),
        (
            "[rules]\nscoped = true\nscoped = false\n",
            &[(ConfigParseError, 3, 1)],
        ),
        ("[rule]\nscoped = true\n", &[(ConfigUnknownKey, 1, 2)]),
        ("[rules]\nscope = true\n", &[(ConfigUnknownKey, 2, 1)]),
        (
            "[rules]\nscoped = \"yes\"\n",
            &[(ConfigInvalidValue, 2, 10)],
        ),
        ("rules = 1\n", &[(ConfigInvalidValue, 1, 9)]),
        (
            "[check]\nignore = \"PR512\"\n",
            &[(ConfigInvalidValue, 2, 10)],
        ),
        (
            "[check]\nignore = [\"PR512\", 3]\n",
            &[(ConfigInvalidValue, 2, 20)],
        ),
        (
            "[check]\nignore = [\"PR9999\"]\n",
            &[(UnknownLintCode, 2, 11)],
        ),
        ("[check]\nignore = [\"blank-run\"]\n", &[]),
        ("[check]\nper_path = []\n", &[(ConfigUnknownKey, 2, 1)]),
        (
            "[check.severity]\nPR804 = \"fatal\"\n",
            &[(ConfigInvalidValue, 2, 9)],
        ),
        (
            "[check.severity]\nPR804 = 2\n",
            &[(ConfigInvalidValue, 2, 9)],
        ),
        (
            "[check.severity]\nPR8044 = \"off\"\n",
            &[(UnknownLintCode, 2, 1)],
        ),
        (
            "[[check.per-path]]\nignore = [\"PR504\"]\n",
            &[(ConfigInvalidValue, 1, 1)],
        ),
        (
            "[[check.per-path]]\npaths = [\"a/[b\"]\n",
            &[(ConfigInvalidValue, 2, 10)],
        ),
        (
            "[[check.per-path]]\npaths = [\"a/**\"]\nignores = []\n",
            &[(ConfigUnknownKey, 3, 1)],
        ),
        (
            "[[check.per-path]]\npaths = [\"a/**\"]\nseverity = { PR504 = \"of\" }\n",
            &[(ConfigInvalidValue, 3, 22)],
        ),
        ("[check]\nper-path = 1\n", &[(ConfigInvalidValue, 2, 12)]),
        (
            "[export]\nlayers = [\"projet\"]\n",
            &[(ConfigInvalidValue, 2, 11)],
        ),
        ("[export]\nlayer = []\n", &[(ConfigUnknownKey, 2, 1)]),
        ("surprise = 1\n", &[(ConfigUnknownKey, 1, 1)]),
        // Columns count characters, not bytes.
        (
            "# é\n[rules]\n  scoped = 'é'\n",
            &[(ConfigInvalidValue, 3, 12)],
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(findings_of(text), *expected, "{text:?}");
    }
}

#[test]
fn messages_name_the_key_and_suggest_the_closest() {
    let cases = [
        (
            "[rule]\n",
            "unknown key `rule`",
            Some("did you mean `rules`?"),
        ),
        (
            "[check]\nper_path = []\n",
            "unknown key `per_path` in `[check]`",
            Some("did you mean `per-path`?"),
        ),
        (
            "[rules]\nscoped = 1\n",
            "`rules.scoped` must be `true` or `false`, not an integer",
            None,
        ),
        (
            "[check]\nignore = [\"PR8o4\"]\n",
            "`PR8o4` is not a diagnostic code",
            Some("did you mean `PR804`?"),
        ),
        (
            "[check.severity]\nPR804 = \"warn\"\n",
            "`warn` is not a severity for `PR804`",
            Some("did you mean \"warning\"?"),
        ),
        (
            "[export]\nlayers = [\"projet\"]\n",
            "`projet` is not a layer",
            Some("did you mean \"project\"?"),
        ),
    ];
    for (text, message, help) in cases {
        let (_, found, _) = file::read(
            text,
            Path::new("p.toml"),
            ConfigSource::Project,
            Schema::embedded(),
        );
        assert_eq!(found.len(), 1, "{text:?}: {found:?}");
        assert_eq!(found[0].message, message, "{text:?}");
        assert_eq!(found[0].help.as_deref(), help, "{text:?}");
    }
    let (_, found, parsed) = file::read(
        "[rules",
        Path::new("p.toml"),
        ConfigSource::Project,
        Schema::embedded(),
    );
    assert!(!parsed);
    assert!(
        found[0].message.starts_with("not valid TOML: "),
        "{found:?}"
    );
}

#[test]
fn a_bad_value_leaves_the_key_to_the_other_file() {
    let place = Place::new();
    place.user("[rules]\nscoped = true\n[check]\nignore = [\"PR512\"]\n");
    place.project("[rules]\nscoped = \"no\"\n[check]\nignore = [\"PR504\", \"PR9999\"]\n");
    let loaded = place.read();
    assert!(loaded.config.scoped());
    assert_eq!(loaded.source("rules.scoped"), ConfigSource::User);
    // A list with a bad item is still the project's list, less that item.
    assert_eq!(loaded.config.check.ignore, vec![Code::InvisibleCharacter]);
    assert_eq!(loaded.source("check.ignore"), ConfigSource::Project);
    let codes: Vec<Code> = loaded.findings.iter().map(|f| f.code).collect();
    assert_eq!(codes, [Code::ConfigInvalidValue, Code::UnknownLintCode]);
    assert!(loaded
        .findings
        .iter()
        .all(|f| f.source == ConfigSource::Project));
    let project = loaded.file(ConfigSource::Project).unwrap();
    assert_eq!(project.state, FileState::Read { findings: 2 });
    assert_eq!(loaded.notes().len(), 2);
}

#[test]
fn a_file_that_is_not_toml_gives_nothing_and_one_finding() {
    let place = Place::new();
    place.user("[rules]\nscoped = true\n");
    place.project("[rules]\nscoped = false\n[check\n");
    let loaded = place.read();
    assert!(loaded.config.scoped(), "the user's value stands");
    assert_eq!(loaded.findings.len(), 1);
    assert_eq!(loaded.findings[0].code, Code::ConfigParseError);
    assert_eq!(loaded.findings[0].line, 3);
    assert_eq!(
        loaded.file(ConfigSource::Project).unwrap().state,
        FileState::Invalid
    );
}

#[test]
fn files_that_cannot_be_read_are_findings_on_the_whole_file() {
    let place = Place::new();
    // A directory where the file should be, and a file over 1 MiB.
    fs::create_dir(place.project.join(".pi/pi-rules.toml")).unwrap();
    let big = format!("# {}\n", "x".repeat(MAX_CONFIG_BYTES as usize));
    place.user(&big);
    let loaded = place.read();
    let found: Vec<(ConfigSource, Code, Option<Range<usize>>)> = loaded
        .findings
        .iter()
        .map(|f| (f.source, f.code, f.span.clone()))
        .collect();
    assert_eq!(
        found,
        [
            (ConfigSource::User, Code::ConfigUnreadable, None),
            (ConfigSource::Project, Code::ConfigUnreadable, None)
        ]
    );
    for file in &loaded.files {
        assert!(
            matches!(file.state, FileState::Unreadable { .. }),
            "{file:?}"
        );
    }
}

#[test]
fn a_link_that_leads_nowhere_is_a_finding() {
    let place = Place::new();
    std::os::unix::fs::symlink("nowhere.toml", place.project.join(".pi/pi-rules.toml")).unwrap();
    let loaded = place.read();
    assert_eq!(loaded.findings.len(), 1, "{:?}", loaded.findings);
    assert_eq!(loaded.findings[0].code, Code::ConfigUnreadable);
    assert!(loaded.findings[0].message.contains("leads nowhere"));
}

#[test]
fn check_config_decides_each_findings_severity() {
    let text = "[check]\nignore = [\"PR512\"]\n[check.severity]\nPR804 = \"warning\"\nPR504 = \"off\"\n\
                [[check.per-path]]\npaths = [\".pi/rules/legacy/**\"]\nignore = [\"PR804\"]\nseverity = { PR512 = \"info\" }\n\
                [[check.per-path]]\npaths = [\"90-*.md\"]\nseverity = { PR804 = \"error\" }\n";
    let (set, found, _) = file::read(
        text,
        Path::new("p.toml"),
        ConfigSource::Project,
        Schema::embedded(),
    );
    assert!(found.is_empty(), "{found:?}");
    let check = CheckConfig {
        ignore: set.ignore.unwrap(),
        severity: set.severity,
        per_path: set.per_path.unwrap(),
    };
    let elsewhere = Some(Path::new(".pi/rules/10-a.md"));
    let legacy = Some(Path::new(".pi/rules/legacy/10-a.md"));
    let legacy_90 = Some(Path::new(".pi/rules/legacy/90-a.md"));
    use Severity::*;
    let cases = [
        (Code::HtmlComment, Info, elsewhere, None),
        (Code::HtmlComment, Info, legacy, Some(Info)),
        (Code::BlankRun, Info, elsewhere, Some(Warning)),
        (Code::BlankRun, Info, None, Some(Warning)),
        (Code::BlankRun, Info, legacy, None),
        // The later entry wins.
        (Code::BlankRun, Info, legacy_90, Some(Error)),
        (Code::InvisibleCharacter, Warning, elsewhere, None),
        (Code::UnclosedBlock, Error, legacy, Some(Error)),
    ];
    for (code, default, path, expected) in cases {
        assert_eq!(
            check.severity_of(code, default, path),
            expected,
            "{code:?} {path:?}"
        );
    }
    assert!(CheckConfig::default().is_default());
    assert!(!check.is_default());
}

#[test]
fn the_schema_names_every_key_the_reader_takes() {
    let schema = json_schema();
    let properties = &schema["properties"];
    for key in KEYS {
        let (table, name) = key.split_once('.').unwrap();
        assert!(
            properties[table]["properties"][name].is_object(),
            "{key} is missing from the schema"
        );
    }
    let codes = schema["$defs"]["code"]["enum"].as_array().unwrap();
    assert!(codes.iter().any(|c| c == "PR804"));
    assert!(codes.iter().any(|c| c == "blank-run"));
}

#[test]
fn findings_are_bounded_per_code_and_a_large_file_reads_quickly() {
    // Close to 1 MiB of codes that do not exist.
    let items = vec!["\"PR9999\""; 100_000].join(", ");
    let text = format!("[check]\nignore = [{items}]\n");
    let started = std::time::Instant::now();
    let (set, found, _) = file::read(
        &text,
        Path::new("p.toml"),
        ConfigSource::Project,
        Schema::embedded(),
    );
    let elapsed = started.elapsed();
    assert_eq!(set.ignore, Some(Vec::new()));
    assert_eq!(found.len(), pi_rules_core::lint::MAX_PER_CODE + 1);
    let last = found.last().unwrap();
    assert_eq!(
        last.message,
        format!(
            "and {} more `PR754` findings in this file, not shown",
            100_000 - pi_rules_core::lint::MAX_PER_CODE
        )
    );
    assert!(elapsed.as_secs() < 5, "{elapsed:?}");
}

#[test]
fn per_path_globs_and_entries_are_bounded() {
    let globs = vec!["\"a/**\""; 50_000].join(", ");
    let entries = "[[check.per-path]]\npaths = [\"b\"]\n".repeat(20_000);
    for text in [format!("[[check.per-path]]\npaths = [{globs}]\n"), entries] {
        let started = std::time::Instant::now();
        let (set, found, _) = file::read(
            &text,
            Path::new("p.toml"),
            ConfigSource::Project,
            Schema::embedded(),
        );
        let elapsed = started.elapsed();
        let per_path = set.per_path.unwrap();
        let kept: usize = per_path.iter().map(|e| e.paths.len()).sum();
        assert_eq!(kept, file::MAX_GLOBS);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].code, Code::ConfigInvalidValue);
        assert!(
            found[0].message.contains("the rest are ignored"),
            "{found:?}"
        );
        assert!(elapsed.as_secs() < 10, "{elapsed:?}");
    }
}

#[test]
fn export_keys_give_targets_settings_and_values_as_the_flags_do() {
    let place = Place::new();
    place.user("[export]\ntargets = \"claude\"\nsettings = \"all\"\n");
    place.project(
        "[export]\ntargets = \"agents-md, claude,agents-md\"\nset = { dco = true, commit_trailer = \"Assisted-by\", review_loop_max_cycles = 3 }\n",
    );
    let loaded = place.read();
    assert!(loaded.findings.is_empty(), "{:?}", loaded.findings);
    let export = &loaded.config.export;
    assert_eq!(export.targets, ["agents-md", "claude"]);
    assert_eq!(export.settings, Some(ExportSettings::All));
    assert_eq!(
        export.set,
        [
            "dco=true",
            "commit_trailer=\"Assisted-by\"",
            "review_loop_max_cycles=3"
        ]
    );
    // Each value is what `--set` takes: the schema accepts every pair.
    assert!(SettingsOverrides::parse(Schema::embedded(), &export.set).is_ok());
    assert_eq!(loaded.source("export.targets"), ConfigSource::Project);
    assert_eq!(loaded.source("export.settings"), ConfigSource::User);
    assert_eq!(loaded.source("export.set"), ConfigSource::Project);
    // A list works as the string does; a string that looks like JSON stays a string.
    place.project(
        "[export]\ntargets = [\"kiro\", \"cursor\"]\nset = { commit_trailer = \"true\" }\n",
    );
    let loaded = place.read();
    assert_eq!(loaded.config.export.targets, ["kiro", "cursor"]);
    assert_eq!(loaded.config.export.set, ["commit_trailer=\"true\""]);
}

#[test]
fn export_keys_report_what_they_cannot_use_where_it_is() {
    use Code::*;
    let cases = [
        (
            "[export]\ntargets = [\"claud\"]\n",
            &[(ConfigInvalidValue, 2, 12)],
        ),
        ("[export]\ntargets = 3\n", &[(ConfigInvalidValue, 2, 11)]),
        (
            "[export]\nsettings = \"everything\"\n",
            &[(ConfigInvalidValue, 2, 12)],
        ),
        (
            "[export]\nset = { dko = true }\n",
            &[(ConfigInvalidValue, 2, 9)],
        ),
        (
            "[export]\nset = { review_loop_max_cycles = \"many\" }\n",
            &[(ConfigInvalidValue, 2, 34)],
        ),
        ("[export]\ntarget = []\n", &[(ConfigUnknownKey, 2, 1)]),
    ];
    for (text, expected) in cases {
        assert_eq!(findings_of(text), *expected, "{text:?}");
    }
    let (set, found, _) = file::read(
        "[export]\ntargets = [\"claud\", \"kiro\"]\nset = { dko = 1 }\n",
        Path::new("p.toml"),
        ConfigSource::Project,
        Schema::embedded(),
    );
    assert_eq!(found[0].message, "`claud` is not an export target");
    assert_eq!(found[0].help.as_deref(), Some("did you mean \"claude\"?"));
    assert!(found[1].message.contains("`dko`"), "{}", found[1].message);
    assert!(found[1].message.contains("`dco`"), "{}", found[1].message);
    // What can be used is kept.
    assert_eq!(set.targets, Some(vec!["kiro".to_owned()]));
    assert_eq!(set.set, Some(Vec::new()));
}

/// Hostile configuration files: each gives findings with their line (or the whole file), the
/// defaults for what it could not give, and no crash.
#[test]
fn hostile_configuration_files_give_findings_and_the_defaults() {
    let place = Place::new();
    let scoped_user = "[rules]\nscoped = true\n";
    place.user(scoped_user);
    let cases: Vec<(&str, String, Code, usize)> = vec![
        (
            "not TOML",
            "[rules\nscoped = true\n".to_owned(),
            Code::ConfigParseError,
            1,
        ),
        (
            "a key of the wrong type",
            "\n[rules]\nscoped = \"yes\"\n".to_owned(),
            Code::ConfigInvalidValue,
            3,
        ),
        (
            "nested arrays past any reader's depth",
            format!(
                "[rules]\nscoped = {}{}\n",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
            Code::ConfigParseError,
            2,
        ),
        (
            "nested inline tables",
            format!("x = {}{}\n", "{a=".repeat(50_000), "}".repeat(50_000)),
            Code::ConfigParseError,
            1,
        ),
        (
            "dotted keys past any depth",
            format!("{} = 1\n", vec!["a"; 100_000].join(".")),
            Code::ConfigParseError,
            1,
        ),
    ];
    for (what, text, code, line) in cases {
        let started = std::time::Instant::now();
        let path = place.project(&text);
        let loaded = place.read();
        let finding = loaded
            .findings
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{what}: no finding"));
        assert_eq!(
            (finding.code, finding.line),
            (code, line),
            "{what}: {finding:?}"
        );
        // The user file's value stands where the project file gave none.
        assert!(loaded.config.scoped(), "{what}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{what}"
        );
    }
}

#[test]
fn a_large_file_or_a_link_out_of_the_project_is_not_read_and_the_defaults_stand() {
    use std::os::unix::fs::symlink;
    let place = Place::new();
    place.user("[rules]\nscoped = true\n");
    let path = place.project.join(".pi/pi-rules.toml");
    // 100 MiB (sparse: nothing past the limit is read).
    let file = fs::File::create(&path).unwrap();
    file.set_len(100 << 20).unwrap();
    let started = std::time::Instant::now();
    let loaded = place.read();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let finding = loaded.findings.iter().find(|f| f.path == path).unwrap();
    assert_eq!(
        (finding.code, finding.line, finding.column),
        (Code::ConfigUnreadable, 1, 1)
    );
    assert!(finding.message.contains("limit"), "{}", finding.message);
    assert!(loaded.config.scoped());
    // A link to a file outside the project (a secret of the machine's, say) is not read.
    fs::remove_file(&path).unwrap();
    let outside = place.home.join("secret.toml");
    fs::write(&outside, "[rules]\nscoped = false\nsecret = \"s3cr3t\"\n").unwrap();
    symlink(&outside, &path).unwrap();
    let loaded = place.read();
    let finding = loaded.findings.iter().find(|f| f.path == path).unwrap();
    assert_eq!(finding.code, Code::ConfigUnreadable);
    assert!(
        finding.message.contains("outside the project"),
        "{}",
        finding.message
    );
    assert!(loaded
        .findings
        .iter()
        .all(|f| !f.message.contains("s3cr3t")));
    assert!(loaded.config.scoped(), "the project file was not read");
    assert_eq!(
        loaded.file(ConfigSource::Project).unwrap().text,
        None,
        "its text is not kept"
    );
    // A link inside the project is read.
    fs::remove_file(&path).unwrap();
    fs::write(
        place.project.join("shared.toml"),
        "[rules]\nscoped = false\n",
    )
    .unwrap();
    symlink("../shared.toml", &path).unwrap();
    let loaded = place.read();
    assert!(loaded.findings.is_empty(), "{:?}", loaded.findings);
    assert!(!loaded.config.scoped());
}

/// Globs that compile one by one but not together (globset's size limit on a set): a finding on
/// the entry, where they silently matched nothing before.
#[test]
fn per_path_globs_too_large_together_are_a_finding_on_the_entry() {
    let heavy = "*?".repeat(500);
    let globs: Vec<String> = (0..140).map(|i| format!("\"{heavy}{i}\"")).collect();
    let text = format!(
        "[rules]\nscoped = true\n\n[[check.per-path]]\npaths = [{}]\nignore = [\"PR101\"]\n",
        globs.join(", ")
    );
    let found = findings_of(&text);
    assert_eq!(found, [(Code::ConfigInvalidValue, 4, 1)], "{found:?}");
}
