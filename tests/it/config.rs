//! pi-rules' own configuration file, through the binary: `pi-rules config` (precedence and each
//! value's source), the findings of a broken file in `check` with line and column, `[check]`
//! (ignore, severity, per-path) and a rule's `lint-ignore:` changing `check`'s output in every
//! format and its exit code, and `schema --config` against the issue's example.

use crate::common::{self, code, stderr, stdout, World};
use serde_json::{json, Value};
use std::fs;

/// Writes the project's configuration file.
fn project_config(world: &World, text: &str) {
    world.write(&world.project.join(".pi"), "pi-rules.toml", text);
}

/// Writes the user's configuration file.
fn user_config(world: &World, text: &str) {
    world.write(&world.home.join(".pi/agent"), "pi-rules.toml", text);
}

fn json_of(world: &World, args: &[&str]) -> Value {
    let out = world.run(args);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}\n{}\n{}", stdout(&out), stderr(&out)))
}

/// `check --format short`'s lines whose code is one of `codes`.
fn short_lines(world: &World, codes: &[&str]) -> Vec<String> {
    let out = world.run(&["check", "--format", "short"]);
    stdout(&out)
        .lines()
        .filter(|line| codes.iter().any(|c| line.contains(&format!("[{c}]"))))
        .map(str::to_owned)
        .collect()
}

#[test]
fn without_a_file_every_value_is_its_default() {
    let world = World::new();
    let out = world.expect(&["config"], 0);
    assert_eq!(stderr(&out), "");
    let text = stdout(&out);
    for line in [
        "scoped = false  # default",
        "ignore = []  # default",
        "layers = [\"project\"]  # default",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    let report = json_of(&world, &["config", "--format", "json"]);
    assert_eq!(report["format"], 1);
    assert_eq!(report["config"]["rules"]["scoped"], false);
    assert_eq!(report["config"]["export"]["layers"], json!(["project"]));
    let states: Vec<&Value> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["state"])
        .collect();
    assert_eq!(states, [&json!("missing"), &json!("missing")]);
    assert!(report["sources"]
        .as_object()
        .unwrap()
        .values()
        .all(|s| s == "default"));
}

#[test]
fn the_project_file_overrides_the_user_file_key_by_key() {
    let world = World::new();
    user_config(
        &world,
        "[rules]\nscoped = true\n\n[check]\nignore = [\"PR512\"]\n\n[check.severity]\nPR804 = \"warning\"\nPR504 = \"error\"\n",
    );
    project_config(
        &world,
        "[check.severity]\nPR504 = \"off\"\n\n[[check.per-path]]\npaths = [\".pi/rules/legacy/**\"]\nignore = [\"PR201\"]\n",
    );
    let report = json_of(&world, &["config", "--format", "json"]);
    let config = &report["config"];
    assert_eq!(config["rules"]["scoped"], true);
    assert_eq!(config["check"]["ignore"], json!(["PR512"]));
    assert_eq!(
        config["check"]["severity"],
        json!({"PR804": "warning", "PR504": "off"})
    );
    assert_eq!(
        config["check"]["per-path"][0]["paths"],
        json!([".pi/rules/legacy/**"])
    );
    assert_eq!(
        report["sources"],
        json!({
            "rules.scoped": "user",
            "check.ignore": "user",
            "check.severity.PR804": "user",
            "check.severity.PR504": "project",
            "check.per-path": "project",
            "export.targets": "default",
            "export.layers": "default",
            "export.settings": "default",
            "export.set": "default",
        })
    );
    // The text form names the same sources, one per value.
    let text = stdout(&world.expect(&["config"], 0));
    for line in [
        "scoped = true  # user file",
        "ignore = [\"PR512\"]  # user file",
        "PR804 = \"warning\"  # user file",
        "PR504 = \"off\"  # project file",
        "[[check.per-path]]  # project file",
        "layers = [\"project\"]  # default",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
}

#[test]
fn the_text_form_reads_back_as_the_same_configuration() {
    let world = World::new();
    user_config(&world, "[export]\nlayers = [\"user\", \"project\"]\n");
    project_config(
        &world,
        "[rules]\nscoped = true\n[check]\nignore = [\"blank-run\"]\n[[check.per-path]]\npaths = [\"a \\\"b\\\"/**\", \"*.md\"]\nseverity = { PR512 = \"info\" }\n",
    );
    let first = json_of(&world, &["config", "--format", "json"]);
    let text = stdout(&world.expect(&["config"], 0));
    let again = World::new();
    project_config(&again, &text);
    let second = json_of(&again, &["config", "--format", "json"]);
    assert_eq!(second["findings"], json!([]), "{text}");
    let mut expected = first["config"].clone();
    // Read back from one file, every per-path entry is the project's.
    for entry in expected["check"]["per-path"].as_array_mut().unwrap() {
        entry["source"] = json!("project");
    }
    assert_eq!(second["config"], expected, "{text}");
}

#[test]
fn the_project_file_is_at_the_repository_root_and_globs_are_relative_to_it() {
    let world = World::new();
    common::git(&world.project, &["init", "-q"]);
    let sub = world.project.join("packages/api");
    world.write(&sub.join(".pi/rules"), "90-a.md", "{{IF:dco}}Sign off.\n");
    let args = ["check", "--format", "short", "--cwd", "packages/api"];
    assert!(stdout(&world.expect(&args, 1)).contains("[PR201]"));
    project_config(
        &world,
        "[[check.per-path]]\npaths = [\"packages/api/.pi/rules/*.md\"]\nignore = [\"PR201\"]\n",
    );
    let out = world.expect(&args, 0);
    assert!(!stdout(&out).contains("[PR201]"), "{}", stdout(&out));
    let report = json_of(
        &world,
        &["config", "--cwd", "packages/api", "--format", "json"],
    );
    assert_eq!(report["sources"]["check.per-path"], "project");
}

#[test]
fn every_finding_of_the_file_has_its_line_and_column_in_check() {
    let world = World::new();
    project_config(
        &world,
        "[rule]\nscoped = true\n\n[check]\nignore = [\"PR9999\", 3]\n\n[check.severity]\nPR804 = \"fatal\"\n\n[[check.per-path]]\npaths = [\"a/[b\"]\n\n[export]\nlayers = [\"projet\"]\n",
    );
    user_config(&world, "[rules\n");
    let lines = short_lines(&world, &["PR751", "PR752", "PR753", "PR754", "PR755"]);
    let user = world.home.join(".pi/agent/pi-rules.toml");
    let expected = [
        ".pi/pi-rules.toml:1:2: error[PR752]: unknown key `rule`".to_owned(),
        ".pi/pi-rules.toml:5:11: error[PR754]: `PR9999` is not a diagnostic code".to_owned(),
        ".pi/pi-rules.toml:5:21: error[PR753]: `check.ignore` must be a list of codes such as `[\"PR512\"]`; this item is an integer".to_owned(),
        ".pi/pi-rules.toml:8:9: error[PR753]: `fatal` is not a severity for `PR804`".to_owned(),
        ".pi/pi-rules.toml:11:10: error[PR753]: `a/[b` is not a valid glob: unclosed character class; missing ']'".to_owned(),
        ".pi/pi-rules.toml:14:11: error[PR753]: `projet` is not a layer".to_owned(),
        format!(
            "{}:1:7: error[PR751]: not valid TOML: unclosed table, expected `]`",
            user.display()
        ),
    ];
    let mut sorted = lines.clone();
    sorted.sort_by_key(|l| !l.starts_with(".pi/"));
    assert_eq!(sorted, expected);
    // The findings are errors: the check fails, and the JSON form places them too.
    assert_eq!(code(&world.run(&["check"])), 1);
    let report = json_of(&world, &["check", "--format", "json"]);
    let placed: Vec<(String, u64, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["path"] == ".pi/pi-rules.toml")
        .map(|d| {
            let at = |k: &str| d[k].as_u64().unwrap();
            (
                d["code"].as_str().unwrap().to_owned(),
                at("line"),
                at("column"),
            )
        })
        .collect();
    assert_eq!(placed.len(), 6, "{placed:?}");
    assert_eq!(placed[0], ("PR752".to_owned(), 1, 2));
    // `config` says the same on stderr and still prints the configuration.
    let out = world.expect(&["config"], 0);
    let err = stderr(&out);
    assert!(
        err.contains("pi-rules: warning: ")
            && err.contains("pi-rules.toml:1:2: unknown key `rule` [PR752]; did you mean `rules`?"),
        "{err}"
    );
    assert!(stdout(&out).contains("scoped = false  # default"));
}

#[test]
fn a_file_that_is_a_directory_is_reported_on_the_whole_file() {
    let world = World::new();
    fs::create_dir_all(world.project.join(".pi/pi-rules.toml")).unwrap();
    let lines = short_lines(&world, &["PR755"]);
    assert_eq!(
        lines,
        [".pi/pi-rules.toml:1:1: error[PR755]: configuration file is not read: not a regular file"]
    );
    assert_eq!(code(&world.run(&["check"])), 1);
}

/// A project with an unclosed block (PR201, an error) in two rules and an HTML comment
/// (PR512, an info) in one.
fn two_rules(world: &World) {
    world.rule("90-a.md", "{{IF:dco}}Sign off.\n");
    world.rule("91-b.md", "{{IF:dco}}Sign off. <!-- a comment -->\n");
}

/// (path, code, severity) of every finding, from `check --format json`.
fn findings(world: &World) -> Vec<(String, String, String)> {
    let report = json_of(world, &["check", "--format", "json"]);
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap().to_owned();
            (s("path"), s("code"), s("severity"))
        })
        .collect()
}

fn owned(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn check_section_changes_what_check_reports_and_its_exit_code() {
    let a = ".pi/rules/90-a.md";
    let b = ".pi/rules/91-b.md";
    // (configuration, findings, exit code, exit code with --strict)
    type Case<'c> = (&'c str, &'c [(&'c str, &'c str, &'c str)], i32, i32);
    let cases: &[Case<'_>] = &[
        (
            "",
            &[(a, "PR201", "error"), (b, "PR201", "error"), (b, "PR512", "info")],
            1,
            1,
        ),
        ("[check]\nignore = [\"PR201\"]\n", &[(b, "PR512", "info")], 0, 0),
        (
            "[check.severity]\nPR201 = \"warning\"\nPR512 = \"error\"\n",
            &[(a, "PR201", "warning"), (b, "PR201", "warning"), (b, "PR512", "error")],
            1,
            1,
        ),
        (
            "[check.severity]\nunclosed-block = \"warning\"\nPR512 = \"off\"\n",
            &[(a, "PR201", "warning"), (b, "PR201", "warning")],
            0,
            1,
        ),
        (
            "[[check.per-path]]\npaths = [\".pi/rules/90-*.md\"]\nignore = [\"PR201\"]\n",
            &[(b, "PR201", "error"), (b, "PR512", "info")],
            1,
            1,
        ),
        // A glob without `/` matches at any depth; a later entry wins; a per-path severity
        // brings back a code ignored everywhere else.
        (
            "[check]\nignore = [\"PR512\"]\n[[check.per-path]]\npaths = [\"*.md\"]\nseverity = { PR201 = \"info\" }\n\
             [[check.per-path]]\npaths = [\".pi/rules/91-b.md\"]\nseverity = { PR201 = \"error\", PR512 = \"warning\" }\n",
            &[(a, "PR201", "info"), (b, "PR201", "error"), (b, "PR512", "warning")],
            1,
            1,
        ),
        // A directory glob covers what is in it.
        (
            "[[check.per-path]]\npaths = [\".pi/rules\"]\nseverity = { PR201 = \"off\", PR512 = \"off\" }\n",
            &[],
            0,
            0,
        ),
    ];
    for (config, expected, exit, strict) in cases {
        let world = World::new();
        two_rules(&world);
        if !config.is_empty() {
            project_config(&world, config);
        }
        assert_eq!(findings(&world), owned(expected), "{config}");
        assert_eq!(code(&world.run(&["check"])), *exit, "{config}");
        assert_eq!(
            code(&world.run(&["check", "--strict"])),
            *strict,
            "{config}"
        );
    }
}

#[test]
fn a_changed_severity_shows_in_every_format() {
    let world = World::new();
    world.rule("90-a.md", "{{IF:dco}}Sign off.\n");
    project_config(&world, "[check.severity]\nPR201 = \"warning\"\n");
    let human = stdout(&world.expect(&["check"], 0));
    assert!(human.contains("warning[PR201]"), "{human}");
    assert!(human.contains("0 errors, 1 warning"), "{human}");
    let short = stdout(&world.expect(&["check", "--format", "short"], 0));
    assert!(
        short.contains(".pi/rules/90-a.md:1:1: warning[PR201]"),
        "{short}"
    );
    let report = json_of(&world, &["check", "--format", "json"]);
    assert_eq!(report["diagnostics"][0]["severity"], "warning");
    assert_eq!(report["summary"]["errors"], 0);
    assert_eq!(report["summary"]["warnings"], 1);
    let sarif = json_of(&world, &["check", "--format", "sarif"]);
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "PR201");
    assert_eq!(result["level"], "warning");
}

#[test]
fn lint_ignore_silences_codes_for_its_own_file_only() {
    let world = World::new();
    world.rule(
        "90-a.md",
        "---\nlint-ignore: PR201, html-comment\n---\n{{IF:dco}}Sign off. <!-- a -->\n",
    );
    world.rule("91-b.md", "{{IF:dco}}Sign off. <!-- b -->\n");
    let b = ".pi/rules/91-b.md";
    assert_eq!(
        findings(&world),
        owned(&[(b, "PR201", "error"), (b, "PR512", "info")])
    );
    world.rule("91-b.md", "Plain.\n");
    assert_eq!(findings(&world), owned(&[]));
    assert_eq!(code(&world.run(&["check"])), 0);
    // It is frontmatter: the prompt never holds it.
    let block = stdout(&world.expect(&["assemble", "--package-dir", &world.package(&[])], 0));
    assert!(!block.contains("lint-ignore"), "{block}");
    // An unknown code in it is a finding with its place.
    world.rule("92-c.md", "---\nlint-ignore: PR8o4\n---\nText.\n");
    let lines = short_lines(&world, &["PR754"]);
    assert_eq!(
        lines,
        [".pi/rules/92-c.md:2:14: error[PR754]: `PR8o4` is not a diagnostic code"]
    );
}

#[test]
fn lint_ignore_is_not_an_unknown_frontmatter_key() {
    let world = World::new();
    world.rule("90-a.md", "---\nlint-ignore: PR512\n---\nText.\n");
    let out = stdout(&world.run(&["check", "--format", "short"]));
    assert!(!out.contains("[PR302]"), "{out}");
}

#[test]
fn an_empty_file_changes_nothing() {
    let world = World::new();
    two_rules(&world);
    let before: Vec<Vec<u8>> = ["human", "short", "json", "sarif"]
        .iter()
        .map(|f| world.run(&["check", "--format", f]).stdout)
        .collect();
    project_config(&world, "# nothing set\n");
    user_config(&world, "");
    for (i, format) in ["human", "short", "json", "sarif"].iter().enumerate() {
        let after = world.run(&["check", "--format", format]).stdout;
        assert_eq!(
            String::from_utf8_lossy(&after),
            String::from_utf8_lossy(&before[i]),
            "{format}"
        );
    }
}

/// A small JSON Schema validator, for the keywords the configuration's schema uses: `type`,
/// `properties`, `additionalProperties`, `required`, `items`, `enum`, `propertyNames`,
/// `minLength`, `uniqueItems` and `$ref` into `#/$defs/`. The errors, as JSON pointers.
fn validate(schema: &Value, root: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.strip_prefix("#/$defs/").expect("a local $ref");
        return validate(&root["$defs"][name], root, value, at, errors);
    }
    if let Some(kind) = schema["type"].as_str() {
        let ok = match kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            other => panic!("type {other} is not handled"),
        };
        if !ok {
            errors.push(format!("{at}: not of type {kind}"));
            return;
        }
    }
    if let Some(allowed) = schema["enum"].as_array() {
        if !allowed.contains(value) {
            errors.push(format!("{at}: {value} is not one of the allowed values"));
        }
    }
    if let (Some(min), Some(text)) = (schema["minLength"].as_u64(), value.as_str()) {
        if (text.chars().count() as u64) < min {
            errors.push(format!("{at}: too short"));
        }
    }
    if let Some(items) = value.as_array() {
        if schema["uniqueItems"] == true {
            for (i, item) in items.iter().enumerate() {
                if items[..i].contains(item) {
                    errors.push(format!("{at}/{i}: repeated"));
                }
            }
        }
        if schema.get("items").is_some() {
            for (i, item) in items.iter().enumerate() {
                validate(&schema["items"], root, item, &format!("{at}/{i}"), errors);
            }
        }
    }
    if let Some(object) = value.as_object() {
        for name in schema["required"].as_array().into_iter().flatten() {
            if !object.contains_key(name.as_str().unwrap()) {
                errors.push(format!("{at}: `{name}` is required"));
            }
        }
        for (key, item) in object {
            let here = format!("{at}/{key}");
            if schema.get("propertyNames").is_some() {
                validate(&schema["propertyNames"], root, &json!(key), &here, errors);
            }
            match schema["properties"].get(key) {
                Some(property) => validate(property, root, item, &here, errors),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{here}: not allowed")),
                    Some(extra) if extra.is_object() => validate(extra, root, item, &here, errors),
                    _ => {}
                },
            }
        }
    }
}

fn errors_of(schema: &Value, document: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    validate(schema, schema, document, "", &mut errors);
    errors
}

#[test]
fn the_json_schema_validates_the_example_of_the_issue() {
    let world = World::new();
    let out = world.expect(&["schema", "--config"], 0);
    let schema: Value = serde_json::from_slice(&out.stdout).expect("the schema is JSON");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    // The issue's example, as the JSON a TOML reader makes of it (and the file reads clean).
    let example_toml = "[check]\nignore = [\"PR512\"]\n[check.severity]\nPR804 = \"warning\"          # \"error\", \"warning\", \"info\" or \"off\"\n[[check.per-path]]\npaths = [\".pi/rules/legacy/**\"]\nignore = [\"PR504\"]\n";
    let example = json!({
        "check": {
            "ignore": ["PR512"],
            "severity": {"PR804": "warning"},
            "per-path": [{"paths": [".pi/rules/legacy/**"], "ignore": ["PR504"]}],
        }
    });
    assert_eq!(errors_of(&schema, &example), Vec::<String>::new());
    project_config(&world, example_toml);
    let report = json_of(&world, &["config", "--format", "json"]);
    assert_eq!(report["findings"], json!([]));
    assert_eq!(
        report["config"]["check"]["ignore"],
        example["check"]["ignore"]
    );
    let full = json!({
        "rules": {"scoped": true},
        "check": {"severity": {"blank-run": "off"}},
        "export": {"layers": ["package", "project"]},
    });
    assert_eq!(errors_of(&schema, &full), Vec::<String>::new());
    // What the reader refuses, the schema refuses too.
    let refused = [
        json!({"rule": {"scoped": true}}),
        json!({"rules": {"scoped": "yes"}}),
        json!({"check": {"ignore": ["PR9999"]}}),
        json!({"check": {"severity": {"PR804": "fatal"}}}),
        json!({"check": {"severity": {"PR8044": "off"}}}),
        json!({"check": {"per-path": [{"ignore": ["PR504"]}]}}),
        json!({"check": {"per-path": [{"paths": ["a"], "ignores": []}]}}),
        json!({"export": {"layers": ["projet"]}}),
    ];
    for document in refused {
        assert!(
            !errors_of(&schema, &document).is_empty(),
            "the schema takes {document}"
        );
    }
}

#[test]
fn help_texts_name_the_file_and_the_schema() {
    let world = World::new();
    let help = stdout(&world.expect(&["config", "--help"], 0));
    assert!(help.contains(".pi/pi-rules.toml"), "{help}");
    assert!(help.contains("pi-rules schema --config"), "{help}");
    let help = stdout(&world.expect(&["schema", "--help"], 0));
    assert!(help.contains("--config"), "{help}");
    assert_eq!(code(&world.run(&["schema", "--config", "dco"])), 2);
}

/// `[rules] scoped` is what pi's block and `check` follow: off, a rule with `paths:` is in the
/// block and `check` says its scope has no effect (PR1007); on, it leaves the always-on block
/// and `check` no longer says so.
#[test]
fn rules_scoped_turns_scopes_on_for_pi() {
    let world = World::new();
    world.rule("90-api.md", "---\npaths: src/api/**\n---\nAPI rule.\n");
    world.rule("91-all.md", "Everywhere rule.\n");
    world.write(&world.project.join("src/api"), "handler.ts", "x\n");
    let package = world.package(&[]);
    let block = |world: &World| stdout(&world.expect(&["assemble", "--package-dir", &package], 0));
    let off = block(&world);
    assert!(
        off.contains("API rule.") && off.contains("Everywhere rule."),
        "{off}"
    );
    assert!(!short_lines(&world, &["PR1007"]).is_empty());
    user_config(&world, "[rules]\nscoped = true\n");
    let on = block(&world);
    assert!(
        !on.contains("API rule.") && on.contains("Everywhere rule."),
        "{on}"
    );
    assert_eq!(short_lines(&world, &["PR1007"]), Vec::<String>::new());
    // The project file overrides the user's.
    project_config(&world, "[rules]\nscoped = false\n");
    assert_eq!(block(&world), off);
}
