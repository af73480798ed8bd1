//! `pi-rules lsp`: from a `didChange` to its `publishDiagnostics`, in process, without the
//! debounce.
//!
//! A server runs on channels, as `pi-rules lsp` does behind its stdio threads, with no pause for
//! typing (`server::run_with`), on a project folder with one open rule file and an empty
//! `$HOME`. Each iteration sends the whole new text in one `didChange` and waits for the file's
//! diagnostics: the server's whole work for one keystroke.
//!
//! - `keystroke`: the project layer holds 2 or 16,000 rule files (generated in a temporary
//!   directory; one of them is the open one, a typical rule). The first check, of every file,
//!   runs before the timing; a keystroke re-checks the open file alone.
//! - `file_made_or_removed`: the same, after a rule file made or removed on disk (reported as
//!   the client's file watcher does), which runs the checks across the layers again.
//! - `adversarial`: the open file is one of `../shared/bench`'s typical rule and 128 KiB
//!   adversarial ones, in an otherwise empty project.
//!
//! Run with `cargo bench -p pi-rules --bench lsp`.

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId};
use pi_rules::lsp::server;
use pi_rules::lsp::transport::{Incoming, Outgoing};
use pi_rules_host::env::Env;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn bench_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/bench")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Session {
    _dir: tempfile::TempDir,
    rules: PathBuf,
    tx: Sender<Incoming>,
    rx: Receiver<Outgoing>,
    uri: String,
    version: i32,
}

impl Session {
    /// A server on a project whose layer holds `files` rule files, the open one with `text`.
    fn new(text: &str, files: usize) -> Session {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let folder = base.join("p");
        let home: PathBuf = base.join("home");
        let rules = folder.join(".pi/rules");
        std::fs::create_dir_all(folder.join(".git")).expect("git");
        std::fs::create_dir_all(&rules).expect("rules");
        std::fs::create_dir_all(&home).expect("home");
        for i in 1..files {
            let text = format!("# Rule {i}\n\nDo the thing number {i} the way the team agreed.\n");
            std::fs::write(rules.join(format!("90-rule-{i:05}.md")), text).expect("rule");
        }
        let env = Env::from_vars(folder.clone(), [("HOME", home.as_os_str())]);
        let (tx, in_rx) = crossbeam_channel::unbounded();
        let (out_tx, rx) = crossbeam_channel::unbounded();
        std::thread::spawn(move || server::run_with(env, in_rx, out_tx, Duration::ZERO));
        let folder_uri = pi_rules::lsp::uri::from_path(&folder).as_str().to_owned();
        let uri = pi_rules::lsp::uri::from_path(&rules.join("90-bench.md"))
            .as_str()
            .to_owned();
        let session = Session {
            _dir: dir,
            rules,
            tx,
            rx,
            uri,
            version: 1,
        };
        session.send(Message::Request(Request::new(
            RequestId::from(1),
            "initialize".to_owned(),
            json!({"capabilities": {}, "workspaceFolders": [{"uri": folder_uri, "name": "p"}]}),
        )));
        session.notify("initialized", json!({}));
        session.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": session.uri, "languageId": "markdown", "version": 1, "text": text}}),
        );
        session.wait();
        session
    }

    fn send(&self, message: Message) {
        self.tx.send(Incoming::Message(message)).expect("server");
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(Message::Notification(Notification::new(
            method.to_owned(),
            params,
        )));
    }

    /// Waits for the open file's diagnostics; returns how many there are.
    fn wait(&self) -> usize {
        loop {
            if let Outgoing::Message(Message::Notification(n)) = self.rx.recv().expect("server") {
                if n.method == "textDocument/publishDiagnostics" && n.params["uri"] == self.uri {
                    return n.params["diagnostics"].as_array().map_or(0, Vec::len);
                }
            }
        }
    }

    fn edit(&mut self, text: &str) -> usize {
        self.version += 1;
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [{"text": text}]}),
        );
        self.wait()
    }
}

/// A rule file made or removed on disk, as the client's file watcher reports it, then a
/// keystroke, so that the open file is published: the checks across the layers run again.
fn toggle_file(session: &mut Session, text: &str) -> usize {
    let path = session.rules.join("90-rule-new.md");
    let (kind, exists) = match std::fs::remove_file(&path) {
        Ok(()) => (3, false),
        Err(_) => (1, true),
    };
    if exists {
        std::fs::write(&path, "# New\n\nA rule made while the editor is open.\n").expect("rule");
    }
    let uri = pi_rules::lsp::uri::from_path(&path).as_str().to_owned();
    session.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": kind}]}),
    );
    session.edit(text)
}

/// Types into `session`: two texts in turn, so that every edit is a change.
fn type_into(bencher: divan::Bencher, text: &str, files: usize) {
    let other = format!("{text} ");
    let mut session = Session::new(text, files);
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        session.edit(if flip { &other } else { text })
    });
}

const TYPICAL: &str = "typical/20-code-review-loop.md";

#[divan::bench(args = [2, 16_000], sample_count = 100)]
fn keystroke(bencher: divan::Bencher, files: usize) {
    type_into(bencher, &bench_file(TYPICAL), files);
}

#[divan::bench(args = [2, 16_000], sample_count = 30)]
fn file_made_or_removed(bencher: divan::Bencher, files: usize) {
    let text = bench_file(TYPICAL);
    let other = format!("{text} ");
    let mut session = Session::new(&text, files);
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        toggle_file(&mut session, if flip { &other } else { &text })
    });
}

const INPUTS: &[&str] = &[
    TYPICAL,
    "many-blocks.md",
    "deep-nesting.md",
    "stray-closers.md",
];

#[divan::bench(args = INPUTS, sample_count = 50)]
fn adversarial(bencher: divan::Bencher, input: &str) {
    type_into(bencher, &bench_file(input), 1);
}

fn main() {
    divan::main();
}
