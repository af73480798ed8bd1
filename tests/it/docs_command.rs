//! `pi-rules docs`: every document of the repository's `docs/` folder is embedded and printed
//! byte for byte, and the help texts point at documents that `pi-rules docs` has, never at a
//! `docs/` path that an installed binary's user does not have.

use assert_cmd::Command;
use clap::CommandFactory;
use std::fs;
use std::path::{Path, PathBuf};

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs")
}

/// The names (`serve` for `docs/serve.md`) of the folder's documents, sorted.
fn documents_on_disk() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(docs_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.file_stem().unwrap().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

fn pi_rules(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("pi-rules")
        .unwrap()
        .args(args)
        .env_remove("PI_RULES_PACKAGE_DIR")
        .output()
        .unwrap()
}

#[test]
fn every_document_in_docs_is_listed_and_printed_byte_for_byte() {
    let on_disk = documents_on_disk();
    assert!(on_disk.len() >= 7, "{on_disk:?}");
    let list = pi_rules(&["docs"]);
    assert_eq!(list.status.code(), Some(0));
    let list = String::from_utf8(list.stdout).unwrap();
    // The list is one line per document, its name first, then a blank line and a hint.
    let listed: Vec<String> = list
        .lines()
        .take_while(|line| !line.is_empty())
        .map(|line| line.split_whitespace().next().unwrap().to_owned())
        .collect();
    assert_eq!(listed, on_disk, "`pi-rules docs` lists\n{list}");
    assert!(
        list.ends_with("\nPrint one with `pi-rules docs NAME`.\n"),
        "{list}"
    );
    for name in &on_disk {
        let file = fs::read(docs_dir().join(format!("{name}.md"))).unwrap();
        let title = String::from_utf8_lossy(&file)
            .lines()
            .next()
            .unwrap()
            .trim_start_matches('#')
            .trim()
            .to_owned();
        assert!(
            list.lines()
                .any(|l| l.starts_with(name.as_str()) && l.ends_with(&title)),
            "{name}: its title `{title}` is not in the list\n{list}"
        );
        for asked in [name.clone(), format!("{name}.md")] {
            let shown = pi_rules(&["docs", &asked]);
            assert_eq!(shown.status.code(), Some(0), "pi-rules docs {asked}");
            assert!(
                shown.stdout == file,
                "`pi-rules docs {asked}` is not docs/{name}.md byte for byte"
            );
        }
    }
}

#[test]
fn an_unknown_document_is_a_usage_error_that_lists_the_documents() {
    let out = pi_rules(&["docs", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no document is named `nope`"), "{err}");
    for name in documents_on_disk() {
        assert!(err.contains(&name), "{name} missing from\n{err}");
    }
    // A name is a document's name, not a path into the folder.
    assert_eq!(pi_rules(&["docs", "../README"]).status.code(), Some(2));
}

/// Every `pi-rules docs NAME` a help text mentions, with `COMMAND` read as the command whose help
/// it is.
fn referenced_documents(help: &str, command: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = help;
    while let Some(at) = rest.find("pi-rules docs ") {
        rest = &rest[at + "pi-rules docs ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
            .collect();
        let name = name.trim_end_matches('.').replace("COMMAND", command);
        if !name.is_empty() && name != "NAME" {
            found.push(name);
        }
    }
    found
}

#[test]
fn help_texts_point_at_embedded_documents_not_at_the_docs_folder() {
    let on_disk = documents_on_disk();
    let mut root = pi_rules::commands::Cli::command();
    root.build();
    let mut referenced = 0;
    let mut helps = vec![("pi-rules".to_owned(), root.clone().render_long_help())];
    for sub in root.get_subcommands_mut() {
        let name = sub.get_name().to_owned();
        helps.push((name, sub.render_long_help()));
    }
    for (command, help) in helps {
        let help = help.to_string();
        assert!(
            !help.contains("docs/"),
            "`{command} --help` names the docs/ folder, which an installed binary's user does \
             not have; point at `pi-rules docs NAME`:\n{help}"
        );
        for name in referenced_documents(&help, &command) {
            referenced += 1;
            assert!(
                on_disk.contains(&name),
                "`{command} --help` points at `pi-rules docs {name}`, which does not exist"
            );
        }
    }
    // `serve` and the commands with `--format json` point at their documents.
    assert!(referenced >= 5, "{referenced} references");
}
