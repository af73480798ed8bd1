//! Tests of [`lint`](super::lint) over whole layers: which file gets which finding (shadowed
//! copies, misnamed files, dropped blocks, one directory listed twice); and properties over random
//! files (no panic, valid spans, a linter fed in listing order agrees).

use super::*;

fn entry(name: &str, content: Content) -> Entry {
    Entry::new(name, name, content)
}

fn bytes(text: &str) -> Content {
    Content::Bytes(text.as_bytes().to_vec())
}

fn run(layers: &[LayerInput]) -> Vec<(String, Code)> {
    testing::lint_layers(layers, None)
        .diagnostics
        .into_iter()
        .map(|d| (d.path.to_string(), d.code))
        .collect()
}

fn layer(kind: Layer, entries: Vec<Entry>) -> LayerInput {
    LayerInput::new(kind, entries)
}

fn prefixed(kind: Layer, entries: Vec<(&str, Content)>) -> LayerInput {
    let dir = kind.as_str();
    layer(
        kind,
        entries
            .into_iter()
            .map(|(n, c)| Entry {
                path: format!("{dir}/{n}"),
                ..entry(n, c)
            })
            .collect(),
    )
}

#[test]
fn layer_table() {
    use Code::*;
    use Layer::*;
    let long = "x".repeat(400);
    type Case<'a> = (&'a str, Vec<LayerInput>, Vec<(&'a str, Code)>);
    let cases: Vec<Case<'_>> = vec![
        (
            "clean",
            vec![prefixed(Package, vec![("00-a.md", bytes("a"))])],
            vec![],
        ),
        (
            "oversized hides",
            vec![
                prefixed(Package, vec![("00-a.md", bytes("a"))]),
                prefixed(
                    User,
                    vec![("00-a.md", Content::Oversized { size: 200_000 })],
                ),
            ],
            vec![("user/00-a.md", OversizedFile)],
        ),
        (
            "stub",
            vec![
                prefixed(Package, vec![("00-a.md", bytes(&long))]),
                prefixed(Project, vec![("00-a.md", bytes("short"))]),
            ],
            vec![("project/00-a.md", StubOverride)],
        ),
        (
            "masked",
            vec![
                prefixed(Package, vec![("00-a.md", bytes(&long))]),
                prefixed(User, vec![("00-a.md", bytes(""))]),
            ],
            vec![("user/00-a.md", MaskedRule)],
        ),
        (
            "ranges",
            vec![
                prefixed(User, vec![("10-x.md", bytes("a")), ("75-y.md", bytes("a"))]),
                prefixed(Project, vec![("5-x.md", bytes("a")), ("x.md", bytes("a"))]),
            ],
            // `x.md` has no prefix and sorts after every numbered name: no finding.
            vec![
                ("user/10-x.md", NameOutOfRange),
                ("project/5-x.md", UnpaddedPrefix),
                ("project/5-x.md", NameOutOfRange),
                ("project/5-x.md", CollationOrder),
            ],
        ),
        (
            "names without a prefix",
            vec![
                prefixed(
                    Package,
                    vec![
                        ("00-a.md", bytes("a")),
                        ("20-b.md", bytes("a")),
                        ("-zz.md", bytes("a")),
                    ],
                ),
                prefixed(
                    User,
                    vec![("-mine.md", bytes("a")), ("mine.md", bytes("a"))],
                ),
                prefixed(
                    Project,
                    vec![
                        ("-team.md", bytes("a")),
                        ("1team.md", bytes("a")),
                        ("team.md", bytes("a")),
                    ],
                ),
            ],
            // In byte order `-` sorts before digits, and `1team.md` before `20-b.md`: those
            // names load before package rules. A package name has no layer below it.
            vec![
                ("user/-mine.md", NameOutOfRange),
                ("project/-team.md", NameOutOfRange),
                ("project/1team.md", NameOutOfRange),
            ],
        ),
        (
            "collation",
            vec![prefixed(
                Package,
                vec![("40-a.md", bytes("a")), ("5-b.md", bytes("b"))],
            )],
            vec![
                ("package/5-b.md", UnpaddedPrefix),
                ("package/5-b.md", CollationOrder),
            ],
        ),
        (
            "ignored",
            vec![prefixed(
                Project,
                vec![
                    ("90-a.MD", Content::NotRead),
                    ("90-b.md", Content::Directory),
                    ("notes.txt", Content::NotRead),
                ],
            )],
            vec![
                ("project/90-a.MD", IgnoredFile),
                ("project/90-b.md", IgnoredFile),
            ],
        ),
        (
            "unreadable falls back",
            vec![
                prefixed(Package, vec![("00-a.md", bytes("a"))]),
                prefixed(
                    User,
                    vec![(
                        "00-a.md",
                        Content::Unreadable {
                            reason: "dangling link".into(),
                        },
                    )],
                ),
            ],
            vec![("user/00-a.md", UnreadableRule)],
        ),
    ];
    for (name, layers, expected) in cases {
        let got = run(&layers);
        let expected: Vec<(String, Code)> = expected
            .into_iter()
            .map(|(p, c)| (p.to_owned(), c))
            .collect();
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn shadowed_copies_are_checked_and_noted() {
    let layers = vec![
        prefixed(
            Layer::Package,
            vec![("00-a.md", bytes("{{/IF}} a long enough text"))],
        ),
        prefixed(
            Layer::Project,
            vec![("00-a.md", bytes("Override{{IF:dco}} when signing{{/IF}}."))],
        ),
    ];
    let report = testing::lint_layers(&layers, None);
    assert_eq!(report.diagnostics.len(), 1);
    let d = &report.diagnostics[0];
    assert_eq!(d.code, Code::StrayCloser);
    assert_eq!(
        d.notes.last().map(|n| &**n),
        Some("this copy is not loaded: `project/00-a.md` overrides it")
    );
    assert_eq!(report.files, 2);
}

#[test]
fn a_misnamed_file_is_reported_once_with_the_files_it_displaces() {
    let layers = vec![prefixed(
        Layer::Package,
        vec![
            ("00-a.md", bytes("a")),
            ("100-x.md", bytes("x")),
            ("20-y.md", bytes("y")),
            ("30-z.md", bytes("z")),
        ],
    )];
    let report = testing::lint_layers(&layers, None);
    let order: Vec<&Diagnostic> = report
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::CollationOrder)
        .collect();
    assert_eq!(order.len(), 1, "{order:#?}");
    assert_eq!(order[0].path, "package/100-x.md");
    assert!(
        order[0].message.contains("`20-y.md`, `30-z.md`"),
        "{}",
        order[0].message
    );
}

#[test]
fn a_name_without_prefix_is_placed_by_the_collator() {
    // ICU root collation puts `_` before digits and digits before letters.
    let icu_like = |a: &str, b: &str| {
        let key = |s: &str| -> Vec<u8> {
            s.bytes()
                .map(|c| match c {
                    b'_' => 0,
                    b'-' => 1,
                    b'0'..=b'9' => 2 + c - b'0',
                    _ => c,
                })
                .collect()
        };
        key(a).cmp(&key(b))
    };
    let layers = vec![
        prefixed(
            Layer::Package,
            vec![("00-core.md", bytes("c")), ("60-tasks.md", bytes("t"))],
        ),
        prefixed(
            Layer::Project,
            vec![
                ("_x.md", bytes("x")),
                ("90-a.md", bytes("a")),
                ("95-b.md", bytes("b")),
                ("zz.md", bytes("z")),
            ],
        ),
    ];
    let report = testing::lint_layers(&layers, Some(&icu_like));
    let found = |path: &str| {
        report
            .diagnostics
            .iter()
            .find(|d| d.path == path && d.code == Code::NameOutOfRange)
    };
    // `_x.md` loads before the package rules; `zz.md`, after every numbered rule, is where
    // a project rule belongs and is no finding.
    let x = found("project/_x.md").expect("a finding for `_x.md`");
    assert_eq!(
        x.message,
        "`_x.md` has no numeric prefix and loads before `00-core.md` and one other rule of the \
         layers below"
    );
    assert!(x.notes.join(" ").contains("before every numbered name"));
    assert!(found("project/zz.md").is_none());
}

#[test]
fn blocks_inside_dropped_blocks_are_checked() {
    let layers = vec![prefixed(
        Layer::Package,
        vec![("00-a.md", bytes("A{{IF:dco}}{{IF:dcoo}}x{{/IF}}{{/IF}}"))],
    )];
    assert_eq!(
        run(&layers),
        vec![("package/00-a.md".to_owned(), Code::UnknownSettingKey)]
    );
}

#[test]
fn one_directory_listed_as_two_layers_keeps_each_copys_fixes_to_itself() {
    // A package directory that is also the project's: the same paths in two layers, whose
    // findings share one list. Each copy's look-alike markers are repaired on its own text.
    let text = "{{if:dco}}a{{/IF}}\n{{ IF:dco}}b";
    let copy = || vec![Entry::new("90-x.md", "same/90-x.md", bytes(text))];
    let layers = vec![layer(Layer::Package, copy()), layer(Layer::Project, copy())];
    let report = testing::lint_layers(&layers, None);
    let fixed = |d: &&Diagnostic| d.code == Code::NearMissMarker && d.fix.is_some();
    // Two look-alikes in each copy, each with its fix.
    assert_eq!(report.diagnostics.iter().filter(fixed).count(), 4);
    let lines = report
        .lines("same/90-x.md")
        .expect("findings with positions");
    assert_eq!(lines.line(1), Some((0, "{{if:dco}}a{{/IF}}")));
    assert_eq!(lines.line(2), Some((19, "{{ IF:dco}}b")));
    assert_eq!(report.files, 2);
}

#[test]
fn look_alike_markers_that_run_into_the_next_one_end_where_it_starts() {
    // A look-alike with no `}}` before the next `{{` stops there: its span and its repair never
    // cover the next look-alike or a real marker (the repairs of overlapping spans panicked).
    for (text, spans) in [
        ("{{ /IF{{if:IF:}}", vec![(0, 6), (6, 16)]),
        ("{{ /IF{{/IF}}", vec![(0, 6)]),
        ("{{ IF:dco {{if:dco}}x{{/IF}}", vec![(0, 5), (10, 20)]),
    ] {
        let layers = vec![layer(
            Layer::Project,
            vec![Entry::new("90-x.md", "p/90-x.md", bytes(text))],
        )];
        let report = testing::lint_layers(&layers, None);
        let found: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::NearMissMarker)
            .filter_map(|d| d.span.as_ref().map(|s| (s.start, s.end)))
            .collect();
        assert_eq!(found, spans, "{text:?}");
    }
}

#[test]
fn a_byte_order_mark_before_an_indented_fence_is_reported_through_the_fence() {
    // White space, another mark included, between the mark and the fence: the span ends after
    // the fence, on a character boundary (it was cut inside the second mark).
    for (text, end) in [
        ("\u{feff}---\nrequires: dco\n---\nx", 6),
        ("\u{feff} \u{feff}--- \nx", 10),
        ("\u{feff}\t---\nx", 7),
    ] {
        let layers = vec![layer(
            Layer::Project,
            vec![Entry::new("90-x.md", "p/90-x.md", bytes(text))],
        )];
        let report = testing::lint_layers(&layers, None);
        let spans: Vec<_> = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::BrokenFrontmatter)
            .filter_map(|d| d.span.as_ref().map(|s| (s.start, s.end)))
            .collect();
        assert_eq!(spans, [(0, end)], "{text:?}");
    }
}

mod properties {
    use crate::lint::*;
    use proptest::prelude::*;

    /// Fragments that exercise every check.
    const PIECES: &[&[u8]] = &[
        b"{{",
        b"}}",
        b"}",
        b"IF:",
        b"IFNOT:",
        b"/IF",
        b"/IFNOT",
        b"if:",
        b" ",
        b"\t",
        b"\n",
        b"\r",
        b"\r\n",
        b"---",
        b"|",
        b":",
        b"==",
        b"!=",
        b"=",
        b"\"",
        b"dco",
        b"coms_active",
        b"requires: ",
        b"requires_setting: ",
        b"REVIEW_LOOP_MAX_CYCLES",
        b"SETTINGS",
        b"x",
        "é".as_bytes(),
        "\u{202e}".as_bytes(),
        "\u{200b}".as_bytes(),
        "\u{feff}".as_bytes(),
        "\u{e0041}".as_bytes(),
        b"\xff",
        b"\xc3",
    ];

    fn text() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0..PIECES.len(), 0..80).prop_map(|ix| {
            ix.into_iter()
                .flat_map(|i| PIECES[i].iter().copied())
                .collect()
        })
    }

    proptest! {
        #[test]
        fn any_text_lints_without_panic_and_spans_are_valid(bytes in text(), lower in text()) {
            let texts = [("p", String::from_utf8_lossy(&lower).into_owned()), ("q", String::from_utf8_lossy(&bytes).into_owned())];
            let layers = vec![
                LayerInput::new(Layer::Package, vec![
                    Entry::new("00-a.md", "p/00-a.md", Content::Bytes(lower)),
                ]),
                LayerInput::new(Layer::Project, vec![
                    Entry::new("00-a.md", "q/00-a.md", Content::Bytes(bytes)),
                ]),
            ];
            let schema = testing::schema();
            let input = LintInput {
                layers,
                settings: &[],
                schema: &schema,
                features: FEATURES,
                collate: &|a: &str, b: &str| a.cmp(b),
                scoped: false,
            };
            let report = lint(input);
            let keys: Vec<(bool, &str, usize)> = report
                .diagnostics
                .iter()
                .map(|d| (d.path.starts_with('q'), d.path.as_str(), d.span.as_ref().map_or(0, |s| s.start)))
                .collect();
            prop_assert!(keys.windows(2).all(|w| w[0] <= w[1]), "not sorted: {keys:?}");
            for d in &report.diagnostics {
                let text = texts.iter().find(|(dir, _)| d.path.starts_with(dir)).map_or("", |(_, t)| t.as_str());
                let spans = d.span.iter().chain(d.labels.iter().map(|l| &l.span));
                let lines = report.lines(&d.path);
                for span in spans {
                    prop_assert!(span.start <= span.end && span.end <= text.len(), "{d:?}");
                    prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
                    // The kept lines place the span as the whole text does.
                    let lines = lines.expect("a file with positions keeps lines");
                    for offset in [span.start, span.end] {
                        let at = crate::span::line_col(text, offset);
                        prop_assert_eq!(lines.line_col(offset), at);
                        let range = crate::span::line_span(text, offset);
                        prop_assert_eq!(lines.line(at.line), Some((range.start, &text[range])));
                    }
                }
                prop_assert!(!d.message.is_empty(), "{d:?}");
            }
        }

        #[test]
        fn a_linter_fed_in_listing_order_reports_as_lint_does(
            package in prop::collection::vec(text(), 0..4),
            project in prop::collection::vec(text(), 0..4),
        ) {
            // Names out of the loader's order, one without a prefix and one that is in both
            // layers.
            let layer = |kind: Layer, dir: &str, texts: &[Vec<u8>]| {
                let entries = texts
                    .iter()
                    .enumerate()
                    .map(|(i, text)| {
                        let name = ["9-b.md", "x.md", "00-a.md", "10-c.md"][i % 4];
                        Entry::new(name, format!("{dir}/{name}"), Content::Bytes(text.clone()))
                    })
                    .collect();
                LayerInput::new(kind, entries)
            };
            let layers = vec![
                layer(Layer::Project, "q", &project),
                layer(Layer::Package, "p", &package),
            ];
            let schema = testing::schema();
            let collate = |a: &str, b: &str| a.cmp(b);
            let expected = lint(LintInput {
                layers: layers.clone(),
                settings: &[],
                schema: &schema,
                features: FEATURES,
                collate: &collate,
                scoped: false,
            });
            // Layer by layer, each as listed, last entry first.
            let mut linter = Linter::new(&schema, FEATURES);
            let mut fed = layers;
            fed.sort_by_key(|l| l.kind);
            for layer in &mut fed {
                for entry in layer.entries.iter_mut().rev() {
                    linter.check_rule(entry);
                }
            }
            let got = linter.finish(&fed, &[], &collate);
            prop_assert_eq!(&got.diagnostics, &expected.diagnostics);
            prop_assert_eq!(got.files, expected.files);
            for d in &got.diagnostics {
                let (got, expected) = (got.lines(&d.path), expected.lines(&d.path));
                let position = |lines: Option<SourceLines<'_>>, offset: usize| {
                    let lines = lines?;
                    let at = lines.line_col(offset);
                    Some((at, lines.line(at.line).map(|(start, text)| (start, text.to_owned()))))
                };
                for span in d.span.iter().chain(d.labels.iter().map(|l| &l.span)) {
                    for offset in [span.start, span.end] {
                        prop_assert_eq!(position(got, offset), position(expected, offset));
                    }
                }
            }
        }
    }
}

#[test]
fn findings_carry_the_ids_the_host_gave_their_files() {
    use crate::FileId;
    let mut with_id = Entry::new(
        "90-x.md",
        "90-x.md",
        Content::Bytes(b"{{IF:nope}}x".to_vec()),
    );
    with_id.file_id = Some(FileId::new(7));
    let without = Entry::new("9-y.md", "9-y.md", Content::Bytes(b"{{/IF}}".to_vec()));
    let layers = [LayerInput::new(Layer::Project, vec![with_id, without])];
    let report = testing::lint_layers(&layers, None);
    let ids: Vec<(&str, Option<FileId>)> = (report.diagnostics.iter())
        .map(|d| (d.path.as_str(), d.file_id))
        .collect();
    // Both a file's own findings and those across the layers (the name's prefix).
    assert!(
        ids.iter().filter(|(p, _)| *p == "90-x.md").count() >= 1,
        "{ids:?}"
    );
    assert!(
        ids.iter().filter(|(p, _)| *p == "9-y.md").count() >= 2,
        "{ids:?}"
    );
    for (path, id) in ids {
        let want = (path == "90-x.md").then_some(FileId::new(7));
        assert_eq!(id, want, "{path}");
    }
}

/// A rule's `lint-ignore:` silences the codes it names in that file only: its own findings and
/// those the checks across the layers make on it.
#[test]
fn lint_ignore_silences_its_own_file_only() {
    let blank = "text <!-- a comment -->\n";
    let ignoring = "---\nlint-ignore: PR512, PR404 PR405\n---\ntext <!-- a comment -->\n";
    let entry =
        |name: &str, text: &str| Entry::new(name, name, Content::Bytes(text.as_bytes().to_vec()));
    let layers = [LayerInput::new(
        Layer::Project,
        vec![entry("1-a.md", ignoring), entry("2-b.md", blank)],
    )];
    let report = testing::lint_layers(&layers, None);
    let on = |path: &str| -> Vec<Code> {
        let found = report.diagnostics.iter().filter(|d| d.path == path);
        found.map(|d| d.code).collect()
    };
    for code in [
        Code::HtmlComment,
        Code::UnpaddedPrefix,
        Code::NameOutOfRange,
    ] {
        assert!(
            on("2-b.md").contains(&code),
            "{code:?}: {:?}",
            report.diagnostics
        );
    }
    assert_eq!(on("1-a.md"), Vec::<Code>::new(), "{:?}", report.diagnostics);
}
