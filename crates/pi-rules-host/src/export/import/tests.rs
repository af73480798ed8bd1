use super::*;
use pi_rules_core::frontmatter;

/// A path, and its kind, directory and stem.
type LocateCase = (&'static str, Option<(SourceKind, usize, &'static str)>);

fn locate_str(path: &str) -> Option<(SourceKind, usize, String)> {
    locate(&path.split('/').collect::<Vec<_>>()).map(|l| (l.kind, l.dir, l.stem))
}

#[test]
fn kinds_directories_and_stems_by_path() {
    use SourceKind::*;
    let cases: &[LocateCase] = &[
        ("CLAUDE.md", Some((Plain, 0, "claude"))),
        ("sub/AGENTS.md", Some((Plain, 1, "agents"))),
        ("packages/api/GEMINI.md", Some((Plain, 2, "gemini"))),
        ("pkg/.claude/CLAUDE.md", Some((Plain, 1, "claude"))),
        (
            ".github/copilot-instructions.md",
            Some((Plain, 0, "copilot-instructions")),
        ),
        ("copilot-instructions.md", None),
        (".cursorrules", Some((Plain, 0, "cursorrules"))),
        (".clinerules", Some((Plain, 0, "clinerules"))),
        (".cursor/rules/a.mdc", Some((Cursor, 0, "a"))),
        (".cursor/rules/a.md", Some((Cursor, 0, "a"))),
        (
            ".cursor/rules/web/React Hooks.mdc",
            Some((Cursor, 0, "web-react-hooks")),
        ),
        (
            ".cursor/rules/testing/RULE.md",
            Some((Cursor, 0, "testing")),
        ),
        ("apps/web/.cursor/rules/a.mdc", Some((Cursor, 2, "a"))),
        (".cursor/a.mdc", None),
        (".windsurf/rules/a.md", Some((Windsurf, 0, "a"))),
        (
            ".windsurf/rules/backend/api.md",
            Some((Windsurf, 0, "backend-api")),
        ),
        (".clinerules/a.md", Some((Cline, 0, "a"))),
        (".clinerules/sub/b.txt", Some((Cline, 0, "sub-b"))),
        (".kiro/steering/a.md", Some((Kiro, 0, "a"))),
        (".claude/rules/api.md", Some((ClaudeRule, 0, "api"))),
        (
            ".claude/rules/frontend/react.md",
            Some((ClaudeRule, 0, "frontend-react")),
        ),
        ("svc/.claude/rules/api.md", Some((ClaudeRule, 1, "api"))),
        (".claude/rules/a.txt", None),
        (
            ".github/instructions/python.instructions.md",
            Some((Copilot, 0, "python")),
        ),
        (
            ".github/instructions/web/react.instructions.md",
            Some((Copilot, 0, "web-react")),
        ),
        (".github/instructions/notes.md", None),
        ("README.md", None),
        ("", None),
    ];
    for (path, want) in cases {
        let want = want.map(|(k, d, s)| (k, d, s.to_owned()));
        assert_eq!(locate_str(path), want, "{path}");
    }
}

fn imported(kind: SourceKind, file: &str) -> Imported {
    import(kind, file.as_bytes()).unwrap_or_else(|e| panic!("{file:?}: {e}"))
}

fn warnings(got: &Imported) -> Vec<&str> {
    got.notes
        .iter()
        .filter(|n| n.level == crate::notes::Level::Warning)
        .map(|n| n.message.as_str())
        .collect()
}

/// The globs the core reads from an imported rule's text, each as [`same`] writes it.
fn core_globs(text: &str) -> Vec<String> {
    let fm = frontmatter::split(text);
    rule_scope::parse(text, &fm).globs().map(same).collect()
}

/// A glob of ours in one spelling, whatever spelling the dialect reading chose: `**/` before a
/// name without `/` means nothing more, nor a trailing `/**` after an anchored glob (it matches
/// everything below what it names), nor a leading `/` before a glob that another `/` anchors.
fn same(glob: &str) -> String {
    if let Some(rest) = glob.strip_prefix("**/") {
        if !rest.is_empty() && !rest.contains('/') {
            return rest.to_owned();
        }
    }
    let anchored = glob.starts_with('/') || glob.trim_end_matches('/').contains('/');
    if !anchored {
        return glob.to_owned();
    }
    let g = glob.strip_prefix('/').unwrap_or(glob);
    let g = g.strip_suffix("/**").unwrap_or(g);
    if g.contains('/') {
        g.to_owned()
    } else {
        format!("/{g}")
    }
}

fn same_all(globs: &[String]) -> Vec<String> {
    globs.iter().map(|g| same(g)).collect()
}

#[test]
fn bodies_without_sections_or_frontmatter() {
    let claude = "# Team\n\nUse tabs.\n\n<!-- pi-rules:begin x -->\ngen\n<!-- pi-rules:end -->\n";
    let got = imported(SourceKind::Plain, claude);
    assert_eq!(got.text, "# Team\n\nUse tabs.\n");
    assert!(got.notes.is_empty() && got.paths.is_empty());
    let always = "---\ndescription: Always\nglobs:\nalwaysApply: true\n---\nA\n";
    let got = imported(SourceKind::Cursor, always);
    assert_eq!((got.text.as_str(), got.notes.len()), ("A\n", 0));
    let kiro = "\u{feff}---\r\ninclusion: always\r\n---\r\nRust\r\n";
    assert_eq!(imported(SourceKind::Kiro, kiro).text, "Rust\n");
    assert!(imported(SourceKind::Cline, "plain\n").notes.is_empty());
    assert_eq!(import(SourceKind::Plain, b"\n\n"), Err(Skip::Empty));
    assert_eq!(
        import(SourceKind::Cursor, b"---\nalwaysApply: true\n---\n \n"),
        Err(Skip::Empty)
    );
    // No final line break, after the closing fence or anywhere.
    assert_eq!(
        import(SourceKind::Cursor, b"---\nglobs: a/**\n---"),
        Err(Skip::Empty)
    );
    let got = imported(
        SourceKind::Windsurf,
        "---\ntrigger: glob\nglobs: a/b/**\n---\nno break",
    );
    assert_eq!(got.text, format!("{}no break\n", paths_header(&got.paths)));
    assert_eq!(core_globs(&got.text), [same("a/b/**")]);
    let generated = owned::render("", "x");
    assert_eq!(import(SourceKind::Cline, &generated), Err(Skip::Generated));
    let broken = b"a\n<!-- pi-rules:begin x -->\nb\n";
    assert!(matches!(
        import(SourceKind::Plain, broken),
        Err(Skip::Markers(section::MarkerError::BeginWithoutEnd {
            line: 2
        }))
    ));
}

/// Real-looking files of each agent whose scope is a set of paths: the rule's globs as the core
/// reads them back.
#[test]
fn path_scopes_become_the_rule_s_paths() {
    use SourceKind::*;
    let cases: &[(SourceKind, &str, &[&str])] = &[
        // Cursor: comma-separated, unquoted; one quoted string; a block list with CRLF.
        (
            Cursor,
            "---\ndescription: API\nglobs: src/api/**/*.ts, src/api/**/*.tsx\nalwaysApply: false\n---\nX\n",
            &["src/api/**/*.ts", "src/api/**/*.tsx"],
        ),
        (Cursor, "---\nglobs: \"*.sql,migrations/**\"\n---\nX\n", &["*.sql", "migrations/**"]),
        (
            Cursor,
            "---\r\nglobs:\r\n  - \"web/**\"\r\n  - 'docs/**/*.md'\r\nalwaysApply: false\r\n---\r\nX\r\n",
            &["web/**", "docs/**/*.md"],
        ),
        // Braces with commas inside: split on the commas outside them only.
        (
            Cursor,
            "---\nglobs: **/*.{rs,toml},crates/**\n---\nX\n",
            &["**/*.{rs,toml}", "crates/**"],
        ),
        // Separated by spaces.
        (Cursor, "---\nglobs: src/** tests/**\n---\nX\n", &["src/**", "tests/**"]),
        // A flow list with either quote, over lines.
        (
            Windsurf,
            "---\ntrigger: glob\nglobs: [\"docker/**\", 'compose/*.yml']\n---\nX\n",
            &["docker/**", "compose/*.yml"],
        ),
        (
            Windsurf,
            "---\ntrigger: glob\nglobs: [\n  \"a/**\",\n  \"b/**\"\n]\n---\nX\n",
            &["a/**", "b/**"],
        ),
        (Kiro, "---\ninclusion: fileMatch\nfileMatchPattern: \"components/**/*.tsx\"\n---\nX\n", &["components/**/*.tsx"]),
        (
            Kiro,
            "---\ninclusion: fileMatch\nfileMatchPattern: [\"app/api/**/*\", \"src/**/*.{ts,tsx}\"]\n---\nX\n",
            &["app/api/**/*", "src/**/*.{ts,tsx}"],
        ),
        (Cline, "---\npaths:\n  - \"src/components/**\"\n---\nX\n", &["src/components/**"]),
        // Claude Code expands braces, and reads `a/**` as `a` at any depth.
        (
            ClaudeRule,
            "---\npaths:\n  - \"src/api/**/*.ts\"\n  - \"src/**/*.{ts,tsx}\"\n  - \"lib/**\"\n---\nX\n",
            &["src/api/**/*.ts", "src/**/*.ts", "src/**/*.tsx", "lib"],
        ),
        (Copilot, "---\napplyTo: \"**/*.cs,**/*.csproj\"\n---\nX\n", &["**/*.cs", "**/*.csproj"]),
        // Not strict YAML: several quoted strings, each comma-separated.
        (Copilot, "---\napplyTo: 'a/**, b/**', 'c/**, d/**'\n---\nX\n", &["a/**", "b/**", "c/**", "d/**"]),
    ];
    for (kind, file, want) in cases {
        let got = imported(*kind, file);
        let want: Vec<String> = want.iter().map(|g| same(g)).collect();
        assert_eq!(same_all(&got.paths), want, "{kind:?}: {file:?}");
        assert_eq!(core_globs(&got.text), want, "{}", got.text);
        // Nothing is left out (the dialect reading may say where a glob reads wider).
        assert!(
            warnings(&got)
                .iter()
                .all(|w| !w.contains("left out") && !w.contains("every request")),
            "{file:?}: {:?}",
            got.notes
        );
        assert!(got.text.ends_with("---\nX\n"), "{}", got.text);
    }
}

#[test]
fn several_globs_are_a_yaml_list_and_a_comma_survives() {
    let got = imported(
        SourceKind::Kiro,
        "---\ninclusion: fileMatch\nfileMatchPattern:\n  - 'packages/{web,api}/**'\n  - 'it\"s/**'\n---\nX\n",
    );
    assert_eq!(
        got.text,
        "---\npaths:\n  - \"/packages/{web,api}/**\"\n  - '/it\"s/**'\n---\nX\n"
    );
    assert_eq!(
        core_globs(&got.text),
        [same("packages/{web,api}/**"), same("it\"s/**")]
    );
    // One glob with a comma, on the key's line.
    let got = imported(
        SourceKind::Kiro,
        "---\ninclusion: fileMatch\nfileMatchPattern: 'src/*.{ts,tsx}'\n---\nX\n",
    );
    assert_eq!(core_globs(&got.text), ["src/*.{ts,tsx}"]);
}

/// Scopes that are not paths: the rule is imported for every request, with a warning with its
/// line; rules always on have no scope and no warning.
#[test]
fn scopes_that_are_not_paths() {
    use SourceKind::*;
    let cases: &[(SourceKind, &str, &str)] = &[
        (
            Cursor,
            "---\ndescription: d\nglobs:\nalwaysApply: false\n---\nM\n",
            "line 3: Cursor applied it when the model",
        ),
        (
            Cursor,
            "---\n\n---\nManual\n",
            "Cursor applied it when the model",
        ),
        (Cursor, "Manual\n", "Cursor applied it when you asked"),
        (
            Windsurf,
            "---\ntrigger: model_decision\n---\nW\n",
            "line 2: Windsurf applied it on request (`trigger: model_decision`)",
        ),
        (
            Windsurf,
            "---\ntrigger: manual\n---\nW\n",
            "`trigger: manual`",
        ),
        (
            Windsurf,
            "---\ntrigger: glob\n---\nW\n",
            "a pattern that the file does not give",
        ),
        (
            Kiro,
            "---\ninclusion: manual\n---\nK\n",
            "when you asked for it",
        ),
        (
            Kiro,
            "---\ninclusion: auto\n---\nK\n",
            "description relevant",
        ),
        (Cline, "---\npaths: []\n---\nC\n", "Cline gives no glob"),
        (
            Cline,
            "---\npaths: \"src/**\"\n---\nC\n",
            "line 2: Cline reads `paths:` as a YAML list only",
        ),
        (Copilot, "---\ndescription: d\n---\nC\n", "no `applyTo:`"),
        // Only a negation: every file but these, which no scope of ours says.
        (
            Copilot,
            "---\napplyTo: \"!manifests/**\"\n---\nC\n",
            "`!manifests/**`",
        ),
    ];
    for (kind, file, why) in cases {
        let got = imported(*kind, file);
        let said = warnings(&got).join("\n");
        assert!(said.contains(why), "{file:?}: {said}");
        assert!(
            got.paths.is_empty() && core_globs(&got.text).is_empty(),
            "{}",
            got.text
        );
    }
    for (kind, file) in [
        (Windsurf, "---\ntrigger: always_on\n---\nW\n"),
        (Copilot, "---\napplyTo: \"**\"\n---\nC\n"),
        (Copilot, "---\napplyTo: '**/*'\n---\nC\n"),
        (Cursor, "---\nglobs: *\n---\nC\n"),
        (Cursor, "---\nalwaysApply: true\nglobs: src/**\n---\nC\n"),
        (ClaudeRule, "# No frontmatter\n"),
        (Kiro, "---\ninclusion: always\n---\nK\n"),
    ] {
        let got = imported(kind, file);
        assert!(got.notes.is_empty(), "{file:?}: {:?}", got.notes);
        assert!(!got.text.starts_with("---"), "{}", got.text);
    }
}

#[test]
fn keys_of_another_agent_are_said_and_left_out() {
    // `globs:` in a Claude rule: Claude Code reads `paths:` only.
    let got = imported(SourceKind::ClaudeRule, "---\nglobs: src/**\n---\nX\n");
    assert!(got.paths.is_empty());
    assert_eq!(
        warnings(&got),
        ["line 2: `globs:` is not a key Claude Code reads (another agent's); left out"]
    );
    // `applyTo` and `paths` together: Copilot reads `applyTo`.
    let got = imported(
        SourceKind::Copilot,
        "---\npaths:\n  - \"b/**\"\napplyTo: \"a/**\"\n---\nX\n",
    );
    assert_eq!(same_all(&got.paths), [same("a/**")]);
    assert_eq!(warnings(&got).len(), 1);
    assert!(warnings(&got)[0].starts_with("line 2: `paths:`"));
    // Windsurf's `glob:` (not `globs:`).
    let got = imported(
        SourceKind::Windsurf,
        "---\ntrigger: glob\nglob: '**/*.ts'\n---\nX\n",
    );
    assert!(got.paths.is_empty());
    assert_eq!(warnings(&got).len(), 2, "{:?}", got.notes);
}

/// Two frontmatter blocks in a row: the second is text, and stays text in the rule.
#[test]
fn a_second_block_and_frontmatter_in_plain_files_stay_text() {
    let got = imported(
        SourceKind::ClaudeRule,
        "---\npaths: src/**\n---\n---\nrequires: x\n---\nBody\n",
    );
    let fm = frontmatter::split(&got.text);
    assert_eq!(&got.text[fm.body_start..], "---\nrequires: x\n---\nBody\n");
    assert_eq!(core_globs(&got.text), ["src"]);
    let got = imported(
        SourceKind::Cursor,
        "---\nalwaysApply: true\n---\n---\nrequires: x\n---\nBody\n",
    );
    let fm = frontmatter::split(&got.text);
    assert!(fm.attributes.is_empty());
    assert_eq!(&got.text[fm.body_start..], "---\nrequires: x\n---\nBody\n");
    // AGENTS.md with a frontmatter: its agents read it as text; so is it here, with a note.
    let got = imported(SourceKind::Plain, "---\napplyTo: \"**\"\n---\nAgents\n");
    let fm = frontmatter::split(&got.text);
    assert!(fm.attributes.is_empty());
    assert_eq!(
        &got.text[fm.body_start..],
        "---\napplyTo: \"**\"\n---\nAgents\n"
    );
    assert_eq!(got.notes.len(), 1);
    // A horizontal rule first is guarded the same way.
    let got = imported(SourceKind::Plain, "---\nText\n");
    assert_eq!(got.text, "---\n\n---\n---\nText\n");
}

#[test]
fn bounds_and_hostile_values_never_panic() {
    let mut many = String::from("---\npaths:\n");
    for i in 0..1_500 {
        many.push_str(&format!("  - \"d{i}/**\"\n"));
    }
    many.push_str("---\nX\n");
    let got = imported(SourceKind::ClaudeRule, &many);
    assert_eq!(got.paths.len(), rule_scope::MAX_ITEMS);
    assert!(warnings(&got)[0].contains("1500 globs"));
    let long = format!("---\npaths: \"{}\"\n---\nX\n", "a".repeat(2_000));
    let got = imported(SourceKind::ClaudeRule, &long);
    assert!(got.paths.is_empty() && !warnings(&got).is_empty());
    for file in [
        "---\npaths: [\n",
        "---\npaths: [\n---\nX",
        "---\npaths: |\n---\nX",
        "---\n:\n-\n- \n'\n\"\n---\nX",
        "---\npaths: \"\n---\nX",
        "---\npaths: '\n---\nX",
        "---\npaths: ,,,\n---\nX",
        "---\npaths: {\n---\nX",
        "\u{feff}\u{feff}---\n---\n",
        "\r\r\r---\r\n",
    ] {
        for kind in [
            SourceKind::Plain,
            SourceKind::Cursor,
            SourceKind::Windsurf,
            SourceKind::Cline,
            SourceKind::Kiro,
            SourceKind::ClaudeRule,
            SourceKind::Copilot,
        ] {
            let _ = import(kind, file.as_bytes());
        }
    }
    let _ = import(SourceKind::Cursor, &[0xff, 0xfe, b'-', b'-', b'-', b'\n']);
}

#[test]
fn nested_directories_take_prefixes_and_names_their_parents_do_not_use() {
    let rules = [
        ToName {
            dir: "",
            stem: "agents",
        },
        ToName {
            dir: "packages/api",
            stem: "agents",
        },
        ToName {
            dir: "packages",
            stem: "agents",
        },
        ToName {
            dir: "packages/web",
            stem: "agents",
        },
    ];
    let mut asked = Vec::new();
    let taken: HashSet<String> = ["90-base.md".to_owned()].into();
    let got = name_rules(&rules, &[90], &taken, (90, 99), |dir| {
        asked.push(dir.to_owned());
        if dir == "packages/api" {
            vec!["95-x.md".to_owned()]
        } else {
            Vec::new()
        }
    });
    assert_eq!(
        got,
        [
            "91-agents.md",
            "96-agents.md",
            "92-agents.md",
            "93-agents.md"
        ]
    );
    assert!(!asked.contains(&String::new()));
}

#[test]
fn a_large_set_shares_prefixes_in_the_sources_order() {
    let stems: Vec<String> = (0..302).map(|i| format!("rule-{i}")).collect();
    let rules: Vec<ToName<'_>> = stems.iter().map(|s| ToName { dir: "", stem: s }).collect();
    let got = name_rules(&rules, &[], &HashSet::new(), (90, 99), |_| Vec::new());
    let mut sorted = got.clone();
    sorted.sort_by(|a, b| crate::loader::compare_names(a, b));
    assert_eq!(sorted, got);
    assert_eq!(got.iter().collect::<HashSet<_>>().len(), 302);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const KINDS: [SourceKind; 7] = [
        SourceKind::Plain,
        SourceKind::Cursor,
        SourceKind::Windsurf,
        SourceKind::Cline,
        SourceKind::Kiro,
        SourceKind::ClaudeRule,
        SourceKind::Copilot,
    ];

    /// Text made of the pieces agents' files are made of, so that frontmatters, lists and
    /// quotes come up often.
    fn file() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "---",
            "\n",
            "\r\n",
            "globs:",
            "paths:",
            "applyTo:",
            "alwaysApply: true",
            "trigger: glob",
            "inclusion: fileMatch",
            "fileMatchPattern:",
            " - ",
            "  - ",
            "\"",
            "'",
            "[",
            "]",
            "{",
            "}",
            ",",
            " ",
            "src/**",
            "*.ts",
            "!x/**",
            "#",
            "text",
            "|",
            ">",
            "\u{feff}",
            "<!-- pi-rules:begin x -->",
            "<!-- pi-rules:end -->",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// Any file: no panic; a rule's scope is what the core reads back from its text, and
        /// its body holds no frontmatter of its own.
        #[test]
        fn any_file_imports_or_is_skipped(text in file()) {
            for kind in KINDS {
                let Ok(got) = import(kind, text.as_bytes()) else { continue };
                prop_assert!(got.text.ends_with('\n'));
                let fm = frontmatter::split(&got.text);
                let read: Vec<String> =
                    rule_scope::parse(&got.text, &fm).globs().map(str::to_owned).collect();
                prop_assert_eq!(&read, &got.paths, "{}", got.text);
                prop_assert!(got.paths.is_empty() || fm.header.is_some());
                let body = &got.text[fm.body_start..];
                prop_assert!(!body.trim().is_empty());
            }
        }
    }
}

/// A file that documents pi-rules shows its markers in code fences: they are its text, and it
/// is imported whole rather than skipped for broken markers. Its real section stays out.
#[test]
fn markers_in_code_fences_are_the_file_s_text() {
    let documented = "# Docs\n\n```md\n<!-- pi-rules:begin -->\n<!-- pi-rules:end -->\n```\n";
    let got = import(SourceKind::Plain, documented.as_bytes()).unwrap();
    assert_eq!(got.text, documented);
    let mut with_section = documented.as_bytes().to_vec();
    with_section.extend_from_slice(&section::render("exported\n", "\n"));
    let got = import(SourceKind::Plain, &with_section).unwrap();
    assert_eq!(got.text, documented);
    // A byte-order mark is not part of the rule.
    let got = import(SourceKind::Plain, b"\xef\xbb\xbfmine\n").unwrap();
    assert_eq!(got.text, "mine\n");
}
