//! The overlay (editor buffers standing in for files) through the host's operations: assemble,
//! explain's report, check and its fixes' plan, `show`'s read and the settings, on a temporary
//! project whose files on disk say otherwise.
// Tests set up and inspect the file system directly.
#![allow(clippy::disallowed_methods)]

use pi_rules_core::lint::Severity;
use pi_rules_host::assembly::{self, LayerOptions, Run};
use pi_rules_host::authoring::Layers;
use pi_rules_host::check::{self, CheckOptions};
use pi_rules_host::env::Env;
use pi_rules_host::explain::{Explanation, Recorder};
use pi_rules_host::files::Overlay;
use pi_rules_host::fix;
use pi_rules_host::loader::{Layer, Pick, MAX_RULE_BYTES};
use pi_rules_host::session::Session;
use pi_rules_host::settings_source::{CachedSettings, FreshSettings, SettingsSource};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A project (not a repository) and a home directory, in a temporary directory.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new() -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("proj");
        let home = base.join("home");
        fs::create_dir_all(root.join(".pi/rules")).unwrap();
        fs::create_dir_all(&home).unwrap();
        Project {
            _tmp: tmp,
            root,
            home,
        }
    }

    fn rules(&self) -> PathBuf {
        self.root.join(".pi/rules")
    }

    fn rule(&self, name: &str) -> PathBuf {
        self.rules().join(name)
    }

    fn write_rule(&self, name: &str, text: &str) -> PathBuf {
        let path = self.rule(name);
        fs::write(&path, text).unwrap();
        path
    }

    fn settings(&self) -> PathBuf {
        self.root.join(".pi/pi-config-settings.jsonc")
    }

    fn env(&self) -> Env {
        Env::from_vars(
            self.root.clone(),
            [("HOME", self.home.as_os_str().to_owned())],
        )
    }

    fn session(&self, overlay: &Overlay) -> Session {
        Session::new(&self.env(), None, None)
            .unwrap()
            .with_overlay(Arc::new(overlay.clone()))
    }

    fn run_with(&self, overlay: &Overlay, options: &LayerOptions, recorder: &mut Recorder) -> Run {
        let session = self.session(overlay);
        let settings = FreshSettings.read(&session);
        assembly::run(session, options, settings, recorder).unwrap()
    }

    fn run(&self, overlay: &Overlay) -> Run {
        self.run_with(overlay, &LayerOptions::default(), &mut Recorder::default())
    }

    fn block(&self, overlay: &Overlay) -> String {
        self.run(overlay).block.text().to_owned()
    }

    fn check(&self, overlay: &Overlay) -> pi_rules_core::lint::Report {
        let session = self.session(overlay);
        let package = session.layer_dirs(None).package;
        check::check(&CheckOptions {
            session: &session,
            package,
            strict: false,
        })
        .unwrap()
    }
}

fn overlay_of(items: &[(&Path, &str)]) -> Overlay {
    let mut overlay = Overlay::new();
    for (path, text) in items {
        overlay.insert(path.to_path_buf(), *text);
    }
    overlay
}

/// The names of the taken files, in assembly order, with their layers.
fn taken(run: &Run) -> Vec<(String, Layer)> {
    let loaded = run.loaded.as_ref().unwrap();
    loaded
        .files
        .iter()
        .map(|f| (f.name.clone(), f.layer))
        .collect()
}

/// The codes of the errors and warnings about the file whose path ends with `name`.
fn codes_for(report: &pi_rules_core::lint::Report, name: &str) -> Vec<&'static str> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.path.ends_with(name) && d.severity != Severity::Info)
        .map(|d| d.code.id())
        .collect()
}

#[test]
fn assemble_reads_the_buffer_not_the_disk() {
    let project = Project::new();
    let path = project.write_rule("90-local.md", "DISK local rule\n");
    let empty = Overlay::new();
    assert!(project.block(&empty).contains("DISK local rule"));

    let overlay = overlay_of(&[(&path, "BUFFER local rule\n")]);
    let block = project.block(&overlay);
    assert!(block.contains("BUFFER local rule"), "{block}");
    assert!(!block.contains("DISK local rule"), "{block}");

    // Taking the buffer out gives the disk's answer again.
    let mut overlay = overlay;
    assert!(overlay.remove(&path));
    assert_eq!(project.block(&overlay), project.block(&empty));
}

#[test]
fn explain_reports_the_buffer() {
    let project = Project::new();
    let path = project.write_rule("90-local.md", "no blocks on disk\n");
    let overlay = overlay_of(&[(&path, "{{IF:dco}}signed{{/IF}}\nfrom the buffer\n")]);

    let mut recorder = Recorder::default();
    let run = project.run_with(&overlay, &LayerOptions::default(), &mut recorder);
    let report = Explanation::new(&run, &recorder, false);
    let entry = report
        .names()
        .find(|e| e.report.name == "90-local.md")
        .unwrap();
    let file = entry.file.expect("the buffer is taken");
    assert_eq!(
        report.text_of(file),
        "{{IF:dco}}signed{{/IF}}\nfrom the buffer\n"
    );
    assert_eq!(
        entry.report.winner().unwrap().path.as_deref(),
        Some(path.as_path())
    );
    assert!(!entry.report.winner().unwrap().is_symlink);
    // The buffer's one block was decided (dropped: dco is off by default).
    let decided: Vec<bool> = recorder.blocks[report.decided[file].clone()]
        .iter()
        .map(|d| d.kept)
        .collect();
    assert_eq!(decided, [false]);

    // On disk there is no block to decide.
    let mut recorder = Recorder::default();
    let run = project.run_with(&Overlay::new(), &LayerOptions::default(), &mut recorder);
    let report = Explanation::new(&run, &recorder, false);
    let file = report
        .names()
        .find(|e| e.report.name == "90-local.md")
        .and_then(|e| e.file)
        .unwrap();
    assert_eq!(report.text_of(file), "no blocks on disk\n");
    assert!(report.decided[file].is_empty());
}

#[test]
fn check_lints_the_buffer() {
    let project = Project::new();
    let path = project.write_rule("90-local.md", "{{IF:no_such_key}}x{{/IF}}\n");
    let on_disk = project.check(&Overlay::new());
    assert_eq!(codes_for(&on_disk, "90-local.md"), ["PR101"]);

    // The buffer has the key right: no finding. Another buffer misspells a feature.
    let overlay = overlay_of(&[
        (&path, "{{IF:dco}}x{{/IF}}\n"),
        (
            &project.rule("95-new.md"),
            "{{IF:no_such_feature()}}x{{/IF}}\n",
        ),
    ]);
    let report = project.check(&overlay);
    assert_eq!(codes_for(&report, "90-local.md"), Vec::<&str>::new());
    let new = codes_for(&report, "95-new.md");
    assert!(!new.is_empty(), "a rule only in the buffer is checked");
    // The finding points into the buffer's text.
    let finding = report
        .diagnostics
        .iter()
        .find(|d| d.path.ends_with("95-new.md"))
        .unwrap();
    assert!(finding.span.clone().unwrap().end <= "{{IF:no_such_feature()}}".len());
}

#[test]
fn fixes_are_planned_on_the_buffer() {
    let project = Project::new();
    let path = project.write_rule("90-local.md", "nothing to fix\n");
    // A marker with the wrong case is one that `--fix` repairs.
    let text = "{{if:dco}}x{{/IF}}\n";
    let overlay = overlay_of(&[(&path, text)]);
    let session = project.session(&overlay);
    let plan = fix::plan(&CheckOptions {
        session: &session,
        package: session.layer_dirs(None).package,
        strict: false,
    })
    .unwrap();
    assert_eq!(plan.files.len(), 1, "{:?}", plan.refused);
    assert_eq!(plan.files[0].before, text);
    assert_eq!(plan.files[0].after, "{{IF:dco}}x{{/IF}}\n");

    let session = project.session(&Overlay::new());
    let plan = fix::plan(&CheckOptions {
        session: &session,
        package: session.layer_dirs(None).package,
        strict: false,
    })
    .unwrap();
    assert!(plan.files.is_empty());
}

#[test]
fn a_rule_only_in_the_buffer_takes_its_collation_place() {
    let project = Project::new();
    let overlay = overlay_of(&[(&project.rule("32-new.md"), "new rule from the buffer\n")]);
    let run = project.run(&overlay);
    let names: Vec<String> = taken(&run).into_iter().map(|(n, _)| n).collect();
    let at = names.iter().position(|n| n == "32-new.md").unwrap();
    assert_eq!(names[at - 1], "30-prompt-templates.md");
    assert_eq!(names[at + 1], "35-memory.md");
    assert_eq!(taken(&run)[at].1, Layer::Project);
    assert!(run.block.text().contains("new rule from the buffer"));
    // Not on disk: no buffer, no rule.
    assert!(!taken(&project.run(&Overlay::new()))
        .iter()
        .any(|(n, _)| n == "32-new.md"));
}

#[test]
fn a_buffer_shadows_the_package_rule_of_its_name() {
    let project = Project::new();
    let path = project.rule("10-agent-routing.md");
    let overlay = overlay_of(&[(&path, "ROUTING FROM THE BUFFER\n")]);
    let run = project.run(&overlay);
    let report = run
        .loaded
        .as_ref()
        .unwrap()
        .names
        .iter()
        .find(|r| r.name == "10-agent-routing.md")
        .unwrap();
    match &report.outcome {
        Pick::Taken {
            winner, shadows, ..
        } => {
            assert_eq!(winner.layer, Layer::Project);
            assert_eq!(winner.path.as_deref(), Some(path.as_path()));
            assert_eq!(shadows.len(), 1);
            assert_eq!(shadows[0].layer, Layer::Package);
        }
        other => panic!("{other:?}"),
    }
    assert!(run.block.text().contains("ROUTING FROM THE BUFFER"));
    // `show` reads the same copy.
    let layers = Layers::read(project.session(&overlay), None, false);
    let found = layers.find("agent-routing").unwrap();
    let copy = layers
        .read_copy(&found.name, found.winner().unwrap())
        .unwrap();
    assert_eq!(copy.bytes, b"ROUTING FROM THE BUFFER\n");
}

#[test]
fn a_settings_buffer_changes_a_gated_block() {
    let project = Project::new();
    project.write_rule("90-gated.md", "{{IF:dco}}SIGNED OFF{{/IF}}\n");
    fs::write(project.settings(), "{\"dco\": false}").unwrap();
    let empty = Overlay::new();
    assert!(!project.block(&empty).contains("SIGNED OFF"));

    let overlay = overlay_of(&[(&project.settings(), "{\"dco\": true}")]);
    assert!(project.block(&overlay).contains("SIGNED OFF"));
    // Through `serve`'s caches too: a buffer is never taken from the cache.
    let mut cached = CachedSettings::new(Duration::from_secs(60));
    let disk = cached.read(&project.session(&empty));
    assert!(!disk.resolved.settings().get("dco").unwrap().is_truthy());
    let buffer = cached.read(&project.session(&overlay));
    assert!(buffer.resolved.settings().get("dco").unwrap().is_truthy());

    // A settings file only in the buffer is found and read (a `.jsonc` beside the `.json`).
    fs::remove_file(project.settings()).unwrap();
    fs::write(
        project.root.join(".pi/pi-config-settings.json"),
        "{\"dco\": false}",
    )
    .unwrap();
    assert!(!project.block(&empty).contains("SIGNED OFF"));
    assert!(project.block(&overlay).contains("SIGNED OFF"));
    let mut overlay = overlay;
    overlay.remove(&project.settings());
    assert!(!project.block(&overlay).contains("SIGNED OFF"));
}

#[test]
fn a_buffer_is_never_a_link_a_special_file_or_missing() {
    let project = Project::new();
    // A dangling link and a FIFO on disk, each overlaid by a buffer.
    std::os::unix::fs::symlink(project.root.join("nowhere.md"), project.rule("90-link.md"))
        .unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        project.rule("91-fifo.md"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let on_disk = project.run(&Overlay::new());
    assert!(!taken(&on_disk)
        .iter()
        .any(|(n, _)| n == "90-link.md" || n == "91-fifo.md"));

    let overlay = overlay_of(&[
        (&project.rule("90-link.md"), "LINK BUFFER\n"),
        (&project.rule("91-fifo.md"), "FIFO BUFFER\n"),
    ]);
    let run = project.run(&overlay);
    assert!(run.block.text().contains("LINK BUFFER") && run.block.text().contains("FIFO BUFFER"));
    let loaded = run.loaded.as_ref().unwrap();
    for name in ["90-link.md", "91-fifo.md"] {
        let report = loaded.names.iter().find(|r| r.name == name).unwrap();
        assert!(report.is_taken(), "{name}");
        assert!(!report.winner().unwrap().is_symlink, "{name}");
    }
    let on_disk = project.check(&Overlay::new());
    let report = project.check(&overlay);
    for name in ["90-link.md", "91-fifo.md"] {
        assert!(!codes_for(&on_disk, name).is_empty(), "{name}");
        assert_eq!(codes_for(&report, name), Vec::<&str>::new(), "{name}");
    }
}

#[test]
fn an_oversized_buffer_is_skipped_and_hides_the_package_rule() {
    let project = Project::new();
    let path = project.rule("10-agent-routing.md");
    let big = "x".repeat(MAX_RULE_BYTES as usize + 1);
    let overlay = overlay_of(&[(&path, &big)]);
    let run = project.run(&overlay);
    let report = (run.loaded.as_ref().unwrap().names.iter())
        .find(|r| r.name == "10-agent-routing.md")
        .unwrap();
    match &report.outcome {
        Pick::Oversized {
            size,
            by_read,
            hides,
            ..
        } => {
            assert_eq!(*size, MAX_RULE_BYTES + 1);
            assert!(!by_read);
            assert_eq!(hides.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    // At the limit it is read.
    let fits = "x".repeat(MAX_RULE_BYTES as usize);
    let run = project.run(&overlay_of(&[(&path, &fits)]));
    assert!(taken(&run).contains(&("10-agent-routing.md".to_owned(), Layer::Project)));
}

#[test]
fn confine_judges_a_buffer_by_where_its_directory_is() {
    let project = Project::new();
    let confined = LayerOptions {
        confine: true,
        ..LayerOptions::default()
    };
    let path = project.rule("90-local.md");
    let overlay = overlay_of(&[(&path, "INSIDE\n")]);
    let run = project.run_with(&overlay, &confined, &mut Recorder::default());
    assert!(run.block.text().contains("INSIDE"));
    assert!(run.loaded.as_ref().unwrap().escapes.is_empty());

    // A project layer directory that is a link out of the project: its buffers escape.
    let outside = project.home.join("elsewhere");
    fs::create_dir_all(&outside).unwrap();
    fs::remove_dir(project.rules()).unwrap();
    std::os::unix::fs::symlink(&outside, project.rules()).unwrap();
    let run = project.run_with(&overlay, &confined, &mut Recorder::default());
    assert!(!run.block.text().contains("INSIDE"));
    let escapes = &run.loaded.as_ref().unwrap().escapes;
    assert_eq!(escapes.len(), 1);
    assert!(escapes[0].refused);
    // Without --confine it is read and named.
    let run = project.run(&overlay);
    assert!(run.block.text().contains("INSIDE"));
    assert!(run
        .notes
        .iter()
        .any(|n| n.message.contains("is read although")));
}
