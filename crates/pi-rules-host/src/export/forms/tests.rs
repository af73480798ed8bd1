use super::*;
use std::collections::HashSet;

fn globs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn placed(target: Target, dir: &str, items: &[&str]) -> Placed {
    let globs = globs(items);
    let rule = ScopedRule {
        name: "50-api",
        dir,
        globs: &globs,
        text: "Validate every request.\n",
    };
    place(target, &rule)
}

fn owned(path: &str, frontmatter: &str) -> Placement {
    Placement::Owned {
        path: path.into(),
        frontmatter: frontmatter.into(),
    }
}

fn section(file: &str, heading: Option<&str>) -> Placement {
    Placement::Section {
        file: file.into(),
        heading: heading.map(str::to_string),
    }
}

#[test]
fn a_rule_of_the_root_for_every_file_is_unscoped() {
    for items in [&[][..], &["**"], &["src/**", "*"], &["**/*"], &["  "]] {
        for target in Target::ALL {
            let p = placed(target, "", items);
            assert_eq!(p.placement, Placement::Unscoped, "{target:?} {items:?}");
            assert!(p.warnings.is_empty());
        }
    }
}

/// The table, for a rule of the root scoped to `src/api/**`.
#[test]
fn a_scoped_rule_of_the_root_in_each_target_s_form() {
    let want = [
        (
            Target::Claude,
            owned(
                ".claude/rules/pi-rules/50-api.md",
                "---\npaths:\n  - \"/src/api/**\"\n---\n",
            ),
        ),
        (
            Target::Cursor,
            owned(
                ".cursor/rules/pi-rules-50-api.mdc",
                "---\ndescription: \"pi-rules rule 50-api, for the files its globs match\"\n\
                 globs: src/api/**\nalwaysApply: false\n---\n",
            ),
        ),
        (
            Target::Copilot,
            owned(
                ".github/instructions/pi-rules-50-api.instructions.md",
                "---\napplyTo: \"src/api/**\"\n---\n",
            ),
        ),
        (
            Target::Kiro,
            owned(
                ".kiro/steering/pi-rules-50-api.md",
                "---\ninclusion: fileMatch\nfileMatchPattern: \"src/api/**\"\n---\n",
            ),
        ),
        (
            Target::Windsurf,
            owned(
                ".windsurf/rules/pi-rules-50-api.md",
                "---\ntrigger: glob\nglobs: src/api/**\n---\n",
            ),
        ),
        (
            Target::Cline,
            owned(
                ".clinerules/pi-rules-50-api.md",
                "---\npaths:\n  - \"src/api/**\"\n---\n",
            ),
        ),
        (
            Target::AgentsMd,
            section("AGENTS.md", Some("For files matching `src/api/**`")),
        ),
        (
            Target::Goose,
            section(".goosehints", Some("For files matching `src/api/**`")),
        ),
        // Every glob lies in `src/api` and stands for all of it.
        (Target::Gemini, section("src/api/GEMINI.md", None)),
    ];
    for (target, placement) in want {
        let p = placed(target, "", &["src/api/**"]);
        assert_eq!(p.placement, placement, "{target:?}");
        // An anchored folder's glob loses nothing for any agent: no warning (case is
        // `check`'s, PR1005).
        assert!(p.warnings.is_empty(), "{target:?}: {:?}", p.warnings);
    }
}

#[test]
fn several_globs_are_a_list_or_one_string_as_each_agent_reads_them() {
    let items = ["*.{ts,tsx}", "src/api/**"];
    let frontmatter = |target| match placed(target, "", &items).placement {
        Placement::Owned { frontmatter, .. } => frontmatter,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        frontmatter(Target::Claude),
        "---\npaths:\n  - \"/**/*.{ts,tsx}\"\n  - \"/src/api/**\"\n---\n"
    );
    assert_eq!(
        frontmatter(Target::Cline),
        "---\npaths:\n  - \"**/*.{ts,tsx}\"\n  - \"src/api/**\"\n---\n"
    );
    assert_eq!(
        frontmatter(Target::Kiro),
        "---\ninclusion: fileMatch\nfileMatchPattern: [\"**/*.{ts,tsx}\", \"src/api/**\"]\n---\n"
    );
    assert_eq!(
        frontmatter(Target::Copilot),
        "---\napplyTo: \"**/*.{ts,tsx},src/api/**\"\n---\n"
    );
    // Braces expanded where the value is split on every comma.
    assert!(frontmatter(Target::Cursor).contains("\nglobs: **/*.ts,**/*.tsx,src/api/**\n"));
    assert!(frontmatter(Target::Windsurf).contains("\nglobs: **/*.ts,**/*.tsx,src/api/**\n"));
}

#[test]
fn gemini_s_file_is_in_the_directory_every_glob_lies_in() {
    let cases: &[(&[&str], &str, bool)] = &[
        (&["src/api/*.ts"], "src/api/GEMINI.md", true),
        (&["src/a/**", "src/b/**"], "src/GEMINI.md", true),
        (&["src/api"], "src/GEMINI.md", true),
        (&["src/api/"], "src/api/GEMINI.md", false),
        (&["/src/api/**", "src/api/"], "src/api/GEMINI.md", false),
        (&["*.ts"], "GEMINI.md", true),
        (&["src/**", "*.md"], "GEMINI.md", true),
        (&["*/api/**"], "GEMINI.md", true),
    ];
    for &(items, file, headed) in cases {
        let p = placed(Target::Gemini, "", items);
        match p.placement {
            Placement::Section { file: f, heading } => {
                assert_eq!(f, file, "{items:?}");
                assert_eq!(heading.is_some(), headed, "{items:?}");
            }
            other => panic!("{items:?}: {other:?}"),
        }
    }
}

#[test]
fn a_nested_directory_s_rule_for_all_of_it() {
    let dir = "packages/api";
    let want = [
        (
            Target::Claude,
            owned(
                ".claude/rules/pi-rules/packages/api/50-api.md",
                "---\npaths:\n  - \"/packages/api/**\"\n---\n",
            ),
        ),
        (
            Target::Copilot,
            owned(
                ".github/instructions/pi-rules-packages-api--50-api.instructions.md",
                "---\napplyTo: \"packages/api/**\"\n---\n",
            ),
        ),
        (
            Target::Kiro,
            owned(
                ".kiro/steering/pi-rules-packages-api--50-api.md",
                "---\ninclusion: fileMatch\nfileMatchPattern: \"packages/api/**\"\n---\n",
            ),
        ),
        (
            Target::Windsurf,
            owned(
                ".windsurf/rules/pi-rules-packages-api--50-api.md",
                "---\ntrigger: glob\nglobs: packages/api/**\n---\n",
            ),
        ),
        // Cline's CLI reads its working directory's `.clinerules/` whole.
        (
            Target::Cline,
            owned("packages/api/.clinerules/pi-rules-50-api.md", ""),
        ),
        (Target::AgentsMd, section("packages/api/AGENTS.md", None)),
        (Target::Goose, section("packages/api/.goosehints", None)),
        (Target::Gemini, section("packages/api/GEMINI.md", None)),
    ];
    for (target, placement) in want {
        for items in [&[][..], &["**"], &["*"]] {
            let p = placed(target, dir, items);
            assert_eq!(p.placement, placement, "{target:?} {items:?}");
        }
    }
    let cursor = placed(Target::Cursor, dir, &[]).placement;
    let Placement::Owned { path, frontmatter } = cursor else {
        panic!("{cursor:?}");
    };
    assert_eq!(path, ".cursor/rules/pi-rules-packages-api--50-api.mdc");
    assert!(frontmatter.contains("\nglobs: packages/api/**\nalwaysApply: false\n"));
}

#[test]
fn a_nested_directory_s_rule_with_globs() {
    let dir = "packages/api";
    let fm = |target| match placed(target, dir, &["*.ts"]).placement {
        Placement::Owned { frontmatter, .. } => frontmatter,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        fm(Target::Claude),
        "---\npaths:\n  - \"/packages/api/**/*.ts\"\n---\n"
    );
    assert_eq!(
        fm(Target::Copilot),
        "---\napplyTo: \"packages/api/**/*.ts\"\n---\n"
    );
    // Cline's globs are relative to `D`, whose `.clinerules/` holds the file.
    assert_eq!(fm(Target::Cline), "---\npaths:\n  - \"**/*.ts\"\n---\n");
    assert_eq!(
        placed(Target::AgentsMd, dir, &["*.ts", "/src/**"]).placement,
        section(
            "packages/api/AGENTS.md",
            Some("For files matching `packages/api/**/*.ts`, `packages/api/src/**`")
        )
    );
    assert_eq!(
        placed(Target::Gemini, dir, &["src/**"]).placement,
        section("packages/api/src/GEMINI.md", None)
    );
    assert_eq!(
        placed(Target::Gemini, dir, &["*.ts"]).placement,
        section(
            "packages/api/GEMINI.md",
            Some("For files matching `packages/api/**/*.ts`")
        )
    );
}

#[test]
fn globs_that_cannot_be_used_are_said_and_a_rule_with_none_goes_nowhere() {
    for target in Target::ALL {
        let p = placed(target, "", &["!src/**", "../x"]);
        assert_eq!(p.placement, Placement::Nowhere, "{target:?}");
        assert!(
            p.warnings.iter().any(|w| w.contains("none of its globs")),
            "{target:?}: {:?}",
            p.warnings
        );
        let p = placed(target, "", &["!src/**", "lib/**"]);
        assert!(
            matches!(
                p.placement,
                Placement::Owned { .. } | Placement::Section { .. }
            ),
            "{target:?}"
        );
        assert!(
            p.warnings.iter().any(|w| w.contains("`!src/**`")),
            "{target:?}: {:?}",
            p.warnings
        );
        assert!(p.warnings.iter().all(|w| w.contains("rule `50-api`")));
    }
}

#[test]
fn what_an_agent_cannot_keep_is_a_warning_naming_the_rule_and_the_agent() {
    let p = placed(Target::Cursor, "", &["src/a[,]b/**"]);
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].starts_with("rule `50-api`, for Cursor: "));
    assert!(p.warnings[0].contains("commas"));
    let p = placed(Target::Copilot, "", &["/README.md"]);
    assert!(p.warnings[0].starts_with("rule `50-api`, for Copilot: "));
    // Case is `check`'s (PR1005), not a warning of every export to Claude Code.
    assert!(placed(Target::Claude, "", &["src/**"]).warnings.is_empty());
    assert!(placed(Target::Kiro, "", &["src/a[,]b/**"])
        .warnings
        .is_empty());
}

#[test]
fn yaml_values_are_quoted_so_that_they_read_back_as_written() {
    let cases = [
        ("src/**", "\"src/**\""),
        ("*.ts", "\"*.ts\""),
        ("{a,b}/x", "\"{a,b}/x\""),
        ("[ab]: #x", "\"[ab]: #x\""),
        ("a\"b", "'a\"b'"),
        ("a\\*b", "'a\\*b'"),
        ("it's", "\"it's\""),
        ("a\"b'c", "'a\"b''c'"),
        ("a\tb\u{1}", "\"a\\tb\\u0001\""),
    ];
    for (raw, quoted) in cases {
        assert_eq!(yaml_quoted(raw), quoted, "{raw:?}");
    }
    // Copilot: plain quotes, never escapes where it can be helped.
    assert_eq!(copilot_quoted("a\\*b,c"), ("'a\\*b,c'".to_string(), true));
    assert_eq!(copilot_quoted("src/**"), ("\"src/**\"".to_string(), true));
    assert_eq!(copilot_quoted("a\"b").0, "'a\"b'");
    assert!(!copilot_quoted("a\"b'c").1);
    // Every glob the list agents are given reads back, through import, as it was written.
    for glob in [
        "src/\"q\"/**",
        "docs/it's/**",
        "a\\*b/**",
        "x: y/**",
        "#x/**",
        "{a,b}/**",
    ] {
        for target in [Target::Claude, Target::Cline, Target::Kiro, Target::Copilot] {
            let p = placed(target, "", &[glob]);
            let Placement::Owned { frontmatter, .. } = p.placement else {
                panic!("{target:?} {glob}");
            };
            let value: String = frontmatter
                .lines()
                .filter_map(|l| {
                    if l.starts_with("  - ") {
                        Some(format!("{l}\n"))
                    } else {
                        let (key, v) = l.split_once(": ")?;
                        matches!(key, "applyTo" | "fileMatchPattern").then(|| v.to_string())
                    }
                })
                .collect();
            let d = Dialect::of(target).unwrap();
            let (back, warnings) = dialect::read_value(d, &value);
            assert!(warnings.is_empty(), "{target:?} {glob}: {warnings:?}");
            let want = format!("/{}", glob);
            let forms = [
                &want[..],
                want.trim_end_matches("/**"),
                want.trim_end_matches("**"),
            ];
            let back_one = back.len() == 1 && forms.contains(&back[0].as_str());
            assert!(back_one, "{target:?} {glob}: {value:?} -> {back:?}");
        }
    }
}

#[test]
fn names_are_made_safe_file_names_and_never_one_for_two_rules() {
    let names = [
        "50-api",
        "a/b",
        "a_b",
        "a\\b",
        "a:b",
        "a*b",
        "..",
        ".",
        "",
        " x",
        "x.",
        "CON",
        "con.md",
        "Lpt1",
        "a\u{7}b",
        "x--y",
        "x__y",
        "x_-y",
        "é-ü",
        &"n".repeat(300),
        &"n".repeat(301),
    ];
    let mut files = HashSet::new();
    for name in names {
        let safe = safe_name(name);
        assert!(!safe.is_empty(), "{name:?}");
        assert!(!safe.chars().any(bad_char), "{name:?} -> {safe:?}");
        assert!(!reserved(&safe), "{name:?} -> {safe:?}");
        assert!(!safe.contains("--"), "{name:?} -> {safe:?}");
        assert!(safe != "." && safe != "..");
        assert!(
            !safe.ends_with(['.', ' ']) && !safe.starts_with(' '),
            "{name:?} -> {safe:?}"
        );
        assert!(safe.len() <= MAX_NAME + 13, "{name:?}");
        assert_eq!(safe, safe_name(name), "deterministic");
        for d in Dialect::ALL {
            assert!(files.insert(owned_path(d, "", name)), "{d:?} {name:?}");
        }
    }
    assert_eq!(safe_name("50-api"), "50-api");
    assert_eq!(safe_name("é-ü"), "é-ü");
}

#[test]
fn nested_directories_never_share_a_file() {
    let dirs = [
        "packages/api",
        "packages-api",
        "packages/my-app",
        "packages/my_app",
        "packages/my/app",
        "a--b",
        "a/-b",
        "a-/b",
        "x.md",
        "x",
        "con/aux",
    ];
    let names = ["50-api", "b--50-api", "api--50-api"];
    let mut files = HashSet::new();
    for d in Dialect::ALL {
        for name in names {
            assert!(files.insert(owned_path(d, "", name)), "{d:?} {name}");
            for dir in dirs {
                let path = owned_path(d, dir, name);
                assert!(files.insert(path.clone()), "{d:?} {dir} {name}: {path}");
                assert!(!path.split('/').any(|p| p == ".." || p == "."), "{path}");
            }
        }
    }
    assert_eq!(dir_slug("packages/api"), "packages-api");
    assert!(dir_slug("packages/my-app").starts_with("packages-my_app-"));
    // Claude Code's folders hold a root rule's file `x.md` and a nested `x.md/` apart.
    assert_ne!(
        owned_path(Dialect::Claude, "", "x"),
        owned_path(Dialect::Claude, "x.md", "y")
            .rsplit_once('/')
            .unwrap()
            .0
    );
}

#[test]
fn section_text_joins_the_block_and_the_headed_rules() {
    let headed = [
        (
            Some("For files matching `src/**`".to_string()),
            "Rule one.\n",
        ),
        (None, "Rule two.\n"),
    ];
    assert_eq!(
        section_text("The block.\n", &headed),
        "The block.\n\n## For files matching `src/**`\n\nRule one.\n\nRule two.\n"
    );
    assert_eq!(
        section_text("", &headed[..1]),
        "## For files matching `src/**`\n\nRule one.\n"
    );
    assert_eq!(section_text("The block.\n", &[]), "The block.\n");
    assert_eq!(section_text("", &[]), "");
    assert_eq!(section_text("", &[(None, "")]), "");
    assert_eq!(section_text("", &[(Some("h".into()), "\n")]), "## h\n");
}

#[test]
fn a_glob_with_a_backtick_is_a_code_span_still() {
    assert_eq!(code_span("a`b"), "``a`b``");
    assert_eq!(code_span("`a"), "`` `a ``");
    let p = placed(Target::AgentsMd, "", &["src/`x`/**"]);
    assert_eq!(
        p.placement,
        section("AGENTS.md", Some("For files matching ``src/`x`/**``"))
    );
}

#[test]
fn an_unquoted_value_a_yaml_reader_would_misread_is_a_warning() {
    for target in [Target::Cursor, Target::Windsurf] {
        for glob in ["[ab]/x/**", "'q/**", "a: b/**"] {
            let p = placed(target, "", &[glob]);
            assert!(
                p.warnings.iter().any(|w| w.contains("unquoted")),
                "{target:?} {glob}: {:?}",
                p.warnings
            );
        }
        assert!(placed(target, "", &["src/**", "*.ts"]).warnings.is_empty());
    }
}

mod generated {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, .. ProptestConfig::default() })]

        /// Any two different names, in any directory, give two different files, each a safe
        /// name in the target's directory.
        #[test]
        fn names_are_safe_and_distinct(a in "\\PC{0,12}|[-._/\\\\a:]{0,6}", b in "\\PC{0,12}|[-._/\\\\a:]{0,6}", dir in "|packages/[-a_]{1,3}") {
            let safe = safe_name(&a);
            prop_assert!(!safe.is_empty() && !safe.chars().any(bad_char) && !reserved(&safe));
            prop_assert!(!safe.contains("--"));
            for d in Dialect::ALL {
                let (pa, pb) = (owned_path(d, &dir, &a), owned_path(d, &dir, &b));
                prop_assert_eq!(a == b, pa == pb, "{:?} {:?} {:?}", d, a, b);
                prop_assert!(!pa.split('/').any(|p| p == ".." || p.is_empty()), "{}", pa);
            }
        }

        /// Any rule is placed without a panic, and its owned file's frontmatter is one block.
        #[test]
        fn any_rule_is_placed(
            name in "\\PC{0,10}",
            dir in "|packages/api|a",
            globs in prop::collection::vec("[a-z/*?{},\\[\\]!\\\\ #'\".]{0,12}", 0..4),
        ) {
            let rule = ScopedRule { name: &name, dir: &dir, globs: &globs, text: "x\n" };
            for target in Target::ALL {
                let placed = place(target, &rule);
                if let Placement::Owned { frontmatter, .. } = placed.placement {
                    prop_assert!(frontmatter.is_empty() || frontmatter.starts_with("---\n") && frontmatter.ends_with("\n---\n"));
                    prop_assert_eq!(frontmatter.matches("\n---\n").count(), usize::from(!frontmatter.is_empty()));
                }
            }
        }
    }
}
