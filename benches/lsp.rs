//! `pi-rules lsp`: from a `didChange` to its `publishDiagnostics`, in process.
//!
//! A server runs on channels, as `pi-rules lsp` does behind its stdio threads, on a project
//! folder with one open rule file and an empty `$HOME` (so the check reads the embedded package
//! layer, the open file from the editor's text, and nothing else). Each iteration sends the whole
//! new text and a `didSave` (which checks at once instead of after the typing pause) and waits for
//! the file's diagnostics: the server's whole work for one edit, the check of every layer
//! included. The inputs are `../shared/bench`: a typical rule file, and the 128 KiB adversarial
//! ones.
//!
//! Run with `cargo bench -p pi-rules --bench lsp`.

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId};
use pi_rules::lsp::server;
use pi_rules::lsp::transport::{Incoming, Outgoing};
use pi_rules_host::env::Env;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn bench_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/bench")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Session {
    _dir: tempfile::TempDir,
    tx: Sender<Incoming>,
    rx: Receiver<Outgoing>,
    uri: String,
    version: i32,
}

impl Session {
    fn new(text: &str) -> Session {
        let dir = tempfile::tempdir().expect("tempdir");
        let base = dir.path().canonicalize().expect("canonical");
        let folder = base.join("p");
        let home: PathBuf = base.join("home");
        std::fs::create_dir_all(folder.join(".git")).expect("git");
        std::fs::create_dir_all(folder.join(".pi/rules")).expect("rules");
        std::fs::create_dir_all(&home).expect("home");
        let env = Env::from_vars(folder.clone(), [("HOME", home.as_os_str())]);
        let (tx, in_rx) = crossbeam_channel::unbounded();
        let (out_tx, rx) = crossbeam_channel::unbounded();
        std::thread::spawn(move || server::run(env, in_rx, out_tx));
        let folder_uri = pi_rules::lsp::uri::from_path(&folder).as_str().to_owned();
        let uri = pi_rules::lsp::uri::from_path(&folder.join(".pi/rules/90-bench.md"))
            .as_str()
            .to_owned();
        let session = Session {
            _dir: dir,
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
        self.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": self.uri}}),
        );
        self.wait()
    }
}

const INPUTS: &[&str] = &[
    "typical/20-code-review-loop.md",
    "many-blocks.md",
    "deep-nesting.md",
    "stray-closers.md",
];

#[divan::bench(args = INPUTS, sample_count = 50)]
fn did_change_to_diagnostics(bencher: divan::Bencher, input: &str) {
    let text = bench_file(input);
    // Two texts in turn, so that every edit is a change.
    let other = format!("{text} ");
    let mut session = Session::new(&text);
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        session.edit(if flip { &other } else { &text })
    });
}

fn main() {
    divan::main();
}
