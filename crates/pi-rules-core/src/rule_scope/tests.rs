use super::*;
use crate::frontmatter::split;
use proptest::prelude::*;

fn scope_of(text: &str) -> RuleScope<'_> {
    parse(text, &split(text))
}

fn globs(text: &str) -> Vec<&str> {
    scope_of(text).globs().collect()
}

#[test]
fn the_three_forms_read_the_same_globs() {
    let want = ["src/api/**", "**/*.sql"];
    assert_eq!(globs("---\npaths: src/api/**, **/*.sql\n---\nbody\n"), want);
    assert_eq!(
        globs("---\npaths: [\"src/api/**\", '**/*.sql']\n---\nbody\n"),
        want
    );
    assert_eq!(
        globs("---\npaths:\n  - \"src/api/**\"\n  # a comment\n\n  - **/*.sql # sql\nname: x\n---\nbody\n"),
        want
    );
    assert_eq!(
        globs("---\r\npaths:\r\n  - src/api/**\r\n  - '**/*.sql'\r\n---\r\nbody\r\n"),
        want
    );
}

#[test]
fn spans_point_at_each_item_in_the_file() {
    for text in [
        "---\npaths: a/**,  \"b/*.ts\" , {c,d}/x\nagents: claude, Cursor\n---\n",
        "---\npaths:\n - a/**\n -   \"b/*.ts\"\n - '{c,d}/x'\nagents: [claude, \"Cursor\"]\n---\n",
    ] {
        let scope = scope_of(text);
        let items = &scope.paths.as_ref().unwrap().items;
        assert_eq!(items.len(), 3, "{text:?}");
        for item in items.iter().chain(&scope.agents.as_ref().unwrap().items) {
            assert_eq!(&text[item.span.clone()], item.text, "{text:?}");
        }
        assert_eq!(items[2].text, "{c,d}/x");
        assert!(scope.is_for_agent("cursor") && scope.is_for_agent("CLAUDE"));
        assert!(!scope.is_for_agent("pi"));
    }
}

#[test]
fn commas_inside_braces_and_quotes_belong_to_the_glob() {
    assert_eq!(
        globs("---\npaths: **/*.{ts,tsx}, \"a,b/**\", [ab]*.md\n---\n"),
        ["**/*.{ts,tsx}", "a,b/**", "[ab]*.md"]
    );
}

#[test]
fn no_key_no_header_or_empty_values_are_no_scope() {
    for text in [
        "body only",
        "---\nrequires: x\n---\nbody",
        "---\npaths:\n---\nbody",
        "---\npaths: , ,\nagents: \"\"\n---\nbody",
        "---\npaths:\nagents:\n---\nbody",
    ] {
        assert!(!scope_of(text).is_scoped(), "{text:?}");
    }
    // A list stops at the first line that is not an item: the next key is read as a key.
    let text = "---\npaths:\n  - a/**\nrequires: x\n  - b/**\n---\n";
    assert_eq!(globs(text), ["a/**"]);
}

#[test]
fn the_last_key_wins_as_frontmatter_lookups_do() {
    assert_eq!(globs("---\npaths: a/**\npaths: b/**\n---\n"), ["b/**"]);
}

#[test]
fn items_past_the_bounds_are_reported_not_used() {
    let many: Vec<String> = (0..MAX_ITEMS + 5).map(|i| format!("d{i}/**")).collect();
    let text = format!("---\npaths: {}\n---\n", many.join(", "));
    let scope = scope_of(&text);
    assert_eq!(scope.globs().count(), MAX_ITEMS);
    assert_eq!(
        scope.problems[0].kind,
        ProblemKind::TooManyItems { dropped: 5 }
    );
    let long = "x".repeat(MAX_ITEM_LEN + 1);
    let text = format!("---\npaths:\n  - a/**\n  - {long}\n---\n");
    let scope = scope_of(&text);
    assert_eq!(scope.globs().collect::<Vec<_>>(), ["a/**"]);
    assert_eq!(scope.problems[0].kind, ProblemKind::ItemTooLong);
    assert_eq!(&text[scope.problems[0].span.clone()], long);
}

fn matcher(globs: &[&str]) -> ScopeMatcher {
    let mut b = ScopeMatcherBuilder::new();
    for (i, g) in globs.iter().enumerate() {
        b.add(0, i, g).unwrap();
    }
    b.build()
}

#[test]
fn globs_are_gitignore_style() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "src/api/**",
            &["src/api/a.ts", "src/api/x/y.ts"],
            &["src/apix/a.ts", "web/src/api/a.ts", "src/a.ts"],
        ),
        ("*.sql", &["a.sql", "db/m/1.sql"], &["a.sqlx", "sql/a.ts"]),
        ("/*.sql", &["a.sql"], &["db/a.sql"]),
        (
            "src/api",
            &["src/api", "src/api/h.ts"],
            &["src/apix", "x/src/api/h.ts"],
        ),
        ("docs/", &["docs/a.md", "a/docs/b.md"], &["docs", "docs.md"]),
        ("/docs/", &["docs/a.md"], &["a/docs/b.md"]),
        ("src/*.ts", &["src/a.ts"], &["src/x/a.ts"]),
        ("**/*.{ts,tsx}", &["a.ts", "x/y/a.tsx"], &["a.js"]),
        ("./web/**", &["web/index.html"], &["src/web/x"]),
        ("build", &["build/out.js", "pkg/build/x"], &["builds/x"]),
    ];
    for (glob, yes, no) in cases {
        let m = matcher(&[glob]);
        for p in *yes {
            assert!(m.is_match(p), "{glob} should match {p}");
        }
        for p in *no {
            assert!(!m.is_match(p), "{glob} should not match {p}");
        }
    }
}

#[test]
fn unusable_globs_say_why() {
    for glob in ["", "!src/**", "a/{b", "../x/**", "/", "a/[b"] {
        let err = compile_glob(glob).unwrap_err();
        assert!(!err.reason.is_empty(), "{glob:?}");
    }
}

#[test]
fn one_set_answers_for_many_rules_each_once() {
    let mut b = ScopeMatcherBuilder::new();
    b.add(0, 0, "src/**").unwrap();
    b.add(0, 1, "*.ts").unwrap();
    b.add(1, 0, "web/**").unwrap();
    b.add(2, 0, "**/*.ts").unwrap();
    let m = b.build();
    let (mut scratch, mut out) = (Vec::new(), Vec::new());
    m.matches_into("src/a.ts", &mut scratch, &mut out);
    assert_eq!(out, [(0, 0), (2, 0)]);
    m.matches_into("web/a.css", &mut scratch, &mut out);
    assert_eq!(out, [(1, 0)]);
    m.matches_into("README.md", &mut scratch, &mut out);
    assert!(out.is_empty());
}

#[test]
fn unknown_agents_get_a_suggestion() {
    assert_eq!(suggest_agent("claud"), Some("claude"));
    assert_eq!(suggest_agent("Cursr"), Some("cursor"));
    assert_eq!(suggest_agent("copliot"), Some("copilot"));
    assert_eq!(suggest_agent("gemini-cli"), Some("gemini"));
    assert_eq!(suggest_agent("zzzzzzzz"), None);
    assert!(is_known_agent("PI") && !is_known_agent("vim"));
}

fn segment() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "src", "api", "web", "a.ts", "b.sql", "x.md", "docs", "lib", ".hidden", "a b",
    ])
    .prop_map(str::to_owned)
}

fn glob_segment() -> impl Strategy<Value = String> {
    prop_oneof![
        segment(),
        Just("*".to_owned()),
        Just("**".to_owned()),
        Just("*.ts".to_owned()),
        Just("{a,b}.sql".to_owned()),
        Just("?pi".to_owned()),
    ]
}

proptest! {
    /// The matcher is `globset` on the glob's gitignore meaning: a glob with a `/` as written
    /// (and everything below what it names), one without at any depth.
    #[test]
    fn matcher_agrees_with_globset(
        glob in prop::collection::vec(glob_segment(), 1..4),
        path in prop::collection::vec(segment(), 1..5),
    ) {
        let glob = glob.join("/");
        let path = path.join("/");
        let m = matcher(&[&glob]);
        let plain = |p: &str| {
            GlobBuilder::new(p).literal_separator(true).build().unwrap().compile_matcher()
        };
        let rooted = if glob.contains('/') || glob.starts_with("**") {
            glob.clone()
        } else {
            format!("**/{glob}")
        };
        // What the glob names, or anything under it: some prefix of the path's parts matches.
        let parts: Vec<&str> = path.split('/').collect();
        let want = (1..=parts.len()).any(|n| plain(&rooted).is_match(parts[..n].join("/")));
        prop_assert_eq!(m.is_match(&path), want, "glob {} path {}", glob, path);
    }

    /// A rule never answers for a path outside its globs: every match is the glob's own.
    #[test]
    fn a_rule_matches_only_through_its_own_globs(
        globs in prop::collection::vec(prop::collection::vec(glob_segment(), 1..3), 1..6),
        path in prop::collection::vec(segment(), 1..4),
    ) {
        let globs: Vec<String> = globs.iter().map(|g| g.join("/")).collect();
        let mut b = ScopeMatcherBuilder::new();
        for (rule, g) in globs.iter().enumerate() {
            b.add(rule, 0, g).unwrap();
        }
        let all = b.build();
        let path = path.join("/");
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        all.matches_into(&path, &mut scratch, &mut out);
        for (rule, g) in globs.iter().enumerate() {
            let alone = matcher(&[g]).is_match(&path);
            prop_assert_eq!(out.iter().any(|&(r, _)| r == rule), alone);
        }
    }
}

/// Globs that could make a matcher explode: each is refused with a reason, or compiled and
/// matched in bounded time.
#[test]
fn explosive_globs_are_refused_or_bounded() {
    let nested = (0..30).fold(String::from("x"), |g, _| format!("{{a,{g}}}"));
    let started = std::time::Instant::now();
    for (glob, hit) in [
        ("{a,b}".repeat(30), "a".repeat(30)),
        (nested, "x".to_owned()),
        ("**/".repeat(300) + "x", "x".to_owned()),
    ] {
        let mut builder = ScopeMatcherBuilder::new();
        builder.add(0, 0, &glob).unwrap();
        let matcher = builder.build();
        assert!(!matcher.is_match(&("b/".repeat(500) + "c")), "{glob}");
        assert!(matcher.is_match(&("b/".repeat(500) + &hit)), "{glob}");
    }
    for (glob, reason) in [
        (
            "a".repeat(1 << 20),
            "1048576 bytes, over the 1024-byte limit",
        ),
        ("**/".repeat(1000) + "x", "over the 1024-byte limit"),
        ("*".repeat(MAX_ITEM_LEN + 1), "over the 1024-byte limit"),
        ("[a".to_owned(), "unclosed character class"),
        ("[".repeat(1000), "unclosed character class"),
        ("{a,{b".to_owned(), "unclosed alternate"),
    ] {
        let err = compile_glob(&glob).unwrap_err();
        assert!(
            err.reason.contains(reason),
            "{}: {err}",
            &glob[..glob.len().min(20)]
        );
        assert!(ScopeMatcherBuilder::new().add(0, 0, &glob).is_err());
    }
    // The longest glob allowed, of the costliest tokens, still compiles at once.
    let longest = "*?".repeat(MAX_ITEM_LEN / 2);
    let mut builder = ScopeMatcherBuilder::new();
    builder.add(0, 0, &longest).unwrap();
    assert!(builder.build().is_match(&"a".repeat(MAX_ITEM_LEN)));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// One rule's globs too large for one compiled set do not silence the others: the matcher is
/// built in parts, and each pattern that compiles alone still matches.
#[test]
fn globs_too_large_for_one_set_do_not_silence_the_others() {
    let mut builder = ScopeMatcherBuilder::new();
    builder.add(0, 0, "keep/**").unwrap();
    let heavy = "*?".repeat(500);
    // 140 of them do not compile as one set (globset's size limit).
    for i in 0..140 {
        builder.add(1, i, &format!("{heavy}{i}")).unwrap();
    }
    builder.add(2, 0, "last/*.md").unwrap();
    let matcher = builder.build();
    assert!(matcher.sets.len() > 1);
    assert!(matcher.is_match("keep/x.ts"));
    assert!(matcher.is_match("last/a.md"));
    let (mut scratch, mut out) = (Vec::new(), Vec::new());
    matcher.matches_into("last/a.md", &mut scratch, &mut out);
    assert_eq!(out, [(2, 0)]);
    assert!(!matcher.is_match("other/x.ts"));
}
