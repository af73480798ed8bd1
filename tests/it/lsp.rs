//! `pi-rules lsp` in process: the server's message loop on channels, driven as a client would.

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId, Response};
use pi_rules::lsp::server::{self, Ending};
use pi_rules::lsp::transport::{self, Incoming, Outgoing};
use pi_rules_host::env::Env;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(20);

struct Client {
    tx: Option<Sender<Incoming>>,
    rx: Receiver<Outgoing>,
    server: Option<JoinHandle<Ending>>,
    next_id: i32,
    /// Notifications and server requests seen while waiting for something else.
    seen: Vec<Message>,
}

impl Client {
    fn start(env: Env) -> Client {
        let (tx, in_rx) = crossbeam_channel::unbounded();
        let (out_tx, rx) = crossbeam_channel::unbounded();
        let server = std::thread::spawn(move || server::run(env, in_rx, out_tx));
        Client {
            tx: Some(tx),
            rx,
            server: Some(server),
            next_id: 0,
            seen: Vec::new(),
        }
    }

    /// A server on a project folder with `$HOME` at `home`, initialized with `capabilities` and
    /// `options`.
    fn initialized(
        folder: &Path,
        home: &Path,
        capabilities: Value,
        options: Value,
    ) -> (Client, Value) {
        let env = Env::from_vars(folder.to_path_buf(), [("HOME", home.as_os_str())]);
        let mut client = Client::start(env);
        let result = client.request(
            "initialize",
            json!({
                "capabilities": capabilities,
                "workspaceFolders": [{"uri": uri(folder), "name": "p"}],
                "initializationOptions": options,
            }),
        );
        let result = result.response_result.expect("initialize succeeds");
        client.notify("initialized", json!({}));
        (client, result)
    }

    fn send(&self, incoming: Incoming) {
        self.tx
            .as_ref()
            .expect("open")
            .send(incoming)
            .expect("server running");
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(Incoming::Message(Message::Notification(Notification::new(
            method.to_owned(),
            params,
        ))));
    }

    fn request(&mut self, method: &str, params: Value) -> Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Incoming::Message(Message::Request(Request::new(
            id.clone(),
            method.to_owned(),
            params,
        ))));
        loop {
            match self.next() {
                Outgoing::Message(Message::Response(r)) if r.id == id => return r,
                Outgoing::Message(other) => self.seen.push(other),
                Outgoing::NullIdError { .. } => panic!("unexpected error"),
            }
        }
    }

    fn next(&self) -> Outgoing {
        self.rx
            .recv_timeout(WAIT)
            .expect("the server answers in time")
    }

    /// The next `publishDiagnostics` for `uri`.
    fn diagnostics(&mut self, for_uri: &str) -> Value {
        if let Some(i) = self.seen.iter().position(|m| is_diagnostics(m, for_uri)) {
            let Message::Notification(n) = self.seen.remove(i) else {
                unreachable!()
            };
            return n.params;
        }
        loop {
            match self.next() {
                Outgoing::Message(m) if is_diagnostics(&m, for_uri) => {
                    let Message::Notification(n) = m else {
                        unreachable!()
                    };
                    return n.params;
                }
                Outgoing::Message(other) => self.seen.push(other),
                Outgoing::NullIdError { .. } => panic!("unexpected error"),
            }
        }
    }

    fn open(&self, path: &Path, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "markdown", "version": 1, "text": text}}),
        );
    }

    /// Ends the server with `exit`, after `shutdown` when `shutdown`.
    fn exit(mut self, shutdown: bool) -> Ending {
        if shutdown {
            let r = self.request("shutdown", Value::Null);
            assert_eq!(r.response_result.clone().ok(), Some(Value::Null));
        }
        self.notify("exit", Value::Null);
        self.server
            .take()
            .expect("running")
            .join()
            .expect("no panic")
    }
}

fn is_diagnostics(m: &Message, for_uri: &str) -> bool {
    matches!(m, Message::Notification(n)
        if n.method == "textDocument/publishDiagnostics" && n.params["uri"] == for_uri)
}

fn uri(path: &Path) -> String {
    pi_rules::lsp::uri::from_path(path).as_str().to_owned()
}

/// A project folder (a repository, so that discovery stops there) and an empty `$HOME`.
fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().expect("tempdir");
    let base = root.path().canonicalize().expect("canonical");
    let folder = base.join("p");
    let home = base.join("home");
    std::fs::create_dir_all(folder.join(".git")).expect("git");
    std::fs::create_dir_all(folder.join(".pi/rules")).expect("rules");
    std::fs::create_dir_all(&home).expect("home");
    (root, folder, home)
}

const BROKEN: &str = "# Rule\n\n😀 {{IF:dcoo}}\nsigned\n{{/IF}}\n";
const FIXED: &str = "# Rule\n\n😀 {{IF:dco}}\nsigned\n{{/IF}}\n";

fn codes(params: &Value) -> Vec<String> {
    params["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn find<'a>(params: &'a Value, code: &str) -> &'a Value {
    params["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {params:#}"))
}

#[test]
fn diagnostics_of_unsaved_text_appear_and_clear_and_close() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    // On disk the key is right: the findings come from the editor's text.
    std::fs::write(&rule, FIXED).expect("rule");
    let (mut client, init) = Client::initialized(&folder, &home, json!({}), Value::Null);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
    let u = uri(&rule);
    client.open(&rule, BROKEN);
    let params = client.diagnostics(&u);
    assert_eq!(params["version"], 1);
    let d = find(&params, "PR101");
    assert_eq!(d["severity"], 1, "an error");
    assert_eq!(d["source"], "pi-rules");
    // After 😀 (two UTF-16 units), a space and `{{IF:`.
    assert_eq!(
        d["range"],
        json!({"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 12}})
    );
    assert!(d["message"].as_str().unwrap().contains("dcoo"), "{d}");
    assert!(
        d["data"]["description"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{d}"
    );

    // Delete the second `o`: the finding goes.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 2, "character": 11}, "end": {"line": 2, "character": 12}}, "text": ""}]}),
    );
    let params = client.diagnostics(&u);
    assert_eq!(params["version"], 2);
    assert!(!codes(&params).contains(&"PR101".to_owned()), "{params:#}");

    // Break it again, then close: the diagnostics are cleared.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 3}, "contentChanges": [{"text": BROKEN}]}),
    );
    assert!(codes(&client.diagnostics(&u)).contains(&"PR101".to_owned()));
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    let params = client.diagnostics(&u);
    assert_eq!(params["diagnostics"], json!([]));
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn utf8_positions_when_the_client_offers_them() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    let capabilities = json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}});
    let (mut client, init) = Client::initialized(&folder, &home, capabilities, Value::Null);
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8");
    client.open(&rule, BROKEN);
    let params = client.diagnostics(&uri(&rule));
    // 😀 is four bytes.
    assert_eq!(
        find(&params, "PR101")["range"]["start"],
        json!({"line": 2, "character": 10})
    );
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn the_quick_fix_is_the_check_fix_edit_and_preferred() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    let u = uri(&rule);
    client.open(&rule, BROKEN);
    let params = client.diagnostics(&u);
    let d = find(&params, "PR101").clone();
    let r = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    let actions = r.response_result.expect("actions");
    let fixes: Vec<&Value> = actions
        .as_array()
        .expect("a list")
        .iter()
        .filter(|a| a["kind"] == "quickfix")
        .collect();
    assert_eq!(fixes.len(), 1, "{actions:#}");
    let fix = fixes[0];
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["title"], "replace `dcoo` with `dco`");
    let edits = &fix["edit"]["changes"][u.as_str()];
    assert_eq!(
        edits,
        &json!([{"range": {"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 12}}, "newText": "dco"}])
    );
    // A project rule has no override action.
    assert!(actions
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["kind"] != "refactor"));
    // The fix comes with the diagnostic in the request, not from what the server published:
    // without it there is none, and a diagnostic's fix is offered as the client sends it.
    let r = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": d["range"], "context": {"diagnostics": []}}),
    );
    assert_eq!(r.response_result.expect("actions"), json!([]));
    let mut sent = d.clone();
    sent["data"]["fix"]["title"] = json!("as the client has it");
    let r = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": d["range"], "context": {"diagnostics": [sent]}}),
    );
    assert_eq!(
        r.response_result.expect("actions")[0]["title"],
        "as the client has it"
    );
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn strict_makes_warnings_errors() {
    let (_root, folder, home) = project();
    // Outside the project layer's prefix range: a warning (PR404).
    let rule = folder.join(".pi/rules/50-x.md");
    for (options, severity) in [(Value::Null, 2), (json!({"strict": true}), 1)] {
        let (mut client, _) = Client::initialized(&folder, &home, json!({}), options);
        client.open(&rule, FIXED);
        let params = client.diagnostics(&uri(&rule));
        assert_eq!(find(&params, "PR404")["severity"], severity);
        assert_eq!(client.exit(true), Ending::Clean);
    }
}

#[test]
fn override_a_package_rule_in_the_project() {
    let (root, folder, home) = project();
    let package = root.path().canonicalize().unwrap().join("pkg");
    std::fs::create_dir_all(&package).unwrap();
    let rule = package.join("10-pkg.md");
    std::fs::write(&rule, "Package text.\n").unwrap();
    let capabilities = json!({"window": {"showDocument": {"support": true}}});
    let options = json!({"packageDir": package});
    let (mut client, init) = Client::initialized(&folder, &home, capabilities, options);
    assert_eq!(
        init["capabilities"]["executeCommandProvider"]["commands"],
        json!(["pi-rules.server.override"])
    );
    let u = uri(&rule);
    client.open(&rule, "Package text.\n");
    client.diagnostics(&u);
    let r = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": u}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": []}}),
    );
    let actions = r.response_result.expect("actions");
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["command"]["title"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        titles,
        ["Override in the project", "Override in the user layer"],
        "{actions:#}"
    );
    let command = &actions[0]["command"];
    let r = client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    let written = folder.join(".pi/rules/10-pkg.md");
    assert_eq!(
        r.response_result.clone().ok(),
        Some(json!(written.display().to_string())),
        "{r:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&written).unwrap(),
        "Package text.\n"
    );
    // The editor is asked to show the new copy.
    let show = loop {
        if let Some(Message::Request(r)) = client
            .seen
            .iter()
            .find(|m| matches!(m, Message::Request(r) if r.method == "window/showDocument"))
        {
            break r.clone();
        }
        match client.next() {
            Outgoing::Message(m) => client.seen.push(m),
            Outgoing::NullIdError { .. } => panic!("unexpected error"),
        }
    };
    assert_eq!(show.params["uri"], uri(&written));
    // A second time, the copy exists: an error, and the file is kept.
    std::fs::write(&written, "mine\n").unwrap();
    let r = client.request(
        "workspace/executeCommand",
        json!({"command": command["command"], "arguments": command["arguments"]}),
    );
    assert!(r
        .response_result
        .expect_err("refused")
        .message
        .contains("already exists"));
    assert_eq!(std::fs::read_to_string(&written).unwrap(), "mine\n");
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn exit_without_shutdown_is_unclean() {
    let (_root, folder, home) = project();
    let (client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    assert_eq!(client.exit(false), Ending::Unclean);
    let (client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    assert_eq!(client.exit(true), Ending::Clean);
    // The input ending without `exit` is unclean too.
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    client.tx = None;
    assert_eq!(
        client.server.take().unwrap().join().unwrap(),
        Ending::Unclean
    );
}

#[test]
fn bad_messages_are_answered_with_errors() {
    let (_root, folder, home) = project();
    let env = Env::from_vars(folder.clone(), [("HOME", home.as_os_str())]);
    let mut client = Client::start(env);
    // Before initialize: not initialized.
    let r = client.request("textDocument/codeAction", json!({}));
    assert_eq!(r.response_result.expect_err("an error").code, -32002);
    client.request("initialize", json!({"capabilities": {}}));
    // An unknown method, and parameters of the wrong shape.
    let r = client.request("textDocument/unknown", json!({}));
    assert_eq!(r.response_result.expect_err("an error").code, -32601);
    let r = client.request("textDocument/codeAction", json!({"textDocument": 3}));
    assert_eq!(r.response_result.expect_err("an error").code, -32602);
    // A message over the limit, read from a real byte stream, is refused with a null id and
    // the server goes on.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"x","params":"{}"}}"#,
        "a".repeat(transport::MAX_MESSAGE_BYTES)
    );
    let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let incoming = transport::read(&mut framed.as_bytes())
        .expect("read")
        .expect("a message");
    client.send(incoming);
    match client.next() {
        Outgoing::NullIdError { code, message } => {
            assert_eq!(code, transport::INVALID_REQUEST);
            assert!(message.contains("over the limit"), "{message}");
        }
        other => panic!("a refusal, got {other:?}"),
    }
    // Notifications of the wrong shape are dropped; documents outside the layers ignored.
    client.notify("textDocument/didOpen", json!({"textDocument": 1}));
    client.open(&folder.join("README.md"), "{{IF:dcoo}}");
    let r = client.request("shutdown", Value::Null);
    assert!(r.response_result.is_ok());
    assert!(client.seen.iter().all(
        |m| !matches!(m, Message::Notification(n) if n.method == "textDocument/publishDiagnostics")
    ));
    client.notify("exit", Value::Null);
    assert_eq!(client.server.take().unwrap().join().unwrap(), Ending::Clean);
}

#[test]
fn another_layer_opened_or_closed_rechecks_the_open_rule() {
    let (_root, folder, home) = project();
    let project_rule = folder.join(".pi/rules/80-x.md");
    let user_rule = home.join(".pi/agent/rules/80-x.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    let (p, u) = (uri(&project_rule), uri(&user_rule));
    // An empty project rule with no lower copy masks nothing.
    client.open(&project_rule, "");
    assert!(!codes(&client.diagnostics(&p)).contains(&"PR403".to_owned()));
    // A user copy, only in the editor: now the empty project file masks it.
    client.open(&user_rule, "User rule text.\n");
    let params = client.diagnostics(&p);
    let d = find(&params, "PR403");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("masks the user layer's copy"),
        "{d}"
    );
    client.diagnostics(&u);
    // Closed, and not on disk: the user copy is gone again.
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    assert_eq!(client.diagnostics(&u)["diagnostics"], json!([]));
    assert!(!codes(&client.diagnostics(&p)).contains(&"PR403".to_owned()));
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn settings_files_are_served_and_checked() {
    let (_root, folder, home) = project();
    let settings = folder.join(".pi/pi-config-settings.json");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    client.open(&settings, "{\n  \"dcoo\": true\n}\n");
    let params = client.diagnostics(&uri(&settings));
    let d = find(&params, "PR703");
    assert_eq!(d["range"]["start"]["line"], 1, "{d}");
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn a_rule_over_the_size_limit_is_reported_not_read() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-big.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    let big = "x".repeat(pi_rules_core::lint::MAX_RULE_BYTES as usize + 1);
    client.open(&rule, &big);
    let params = client.diagnostics(&uri(&rule));
    assert_eq!(codes(&params), ["PR401"], "{params:#}");
    assert_eq!(client.exit(true), Ending::Clean);
}

/// The `(line, character)` request parameters on `uri`.
fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

#[test]
fn hover_shows_the_value_and_its_source_from_unsaved_settings() {
    let (_root, folder, home) = project();
    let settings = folder.join(".pi/pi-config-settings.json");
    std::fs::write(&settings, "{\"dco\": true}\n").unwrap();
    let rule = folder.join(".pi/rules/90-x.md");
    let (mut client, init) = Client::initialized(&folder, &home, json!({}), Value::Null);
    assert_eq!(init["capabilities"]["hoverProvider"], true);
    let u = uri(&rule);
    client.open(&rule, "😀 {{IF:dco}}\nsigned\n{{/IF}}\n");
    client.diagnostics(&u);
    let hover = |client: &mut Client| {
        let r = client.request("textDocument/hover", at(&u, 0, 8));
        let value = r.response_result.expect("hover");
        value["contents"]["value"]
            .as_str()
            .expect("markdown")
            .to_owned()
    };
    let text = hover(&mut client);
    assert!(text.contains("**Now:** `true`"), "{text}");
    assert!(text.contains("pi-config-settings.json"), "{text}");
    assert!(text.contains("kept"), "{text}");
    // The settings file's unsaved text decides.
    client.open(&settings, "{\"dco\": false}\n");
    let text = hover(&mut client);
    assert!(text.contains("**Now:** `false`"), "{text}");
    assert!(text.contains("dropped"), "{text}");
    // Inlay hints say the same after the opener.
    let r = client.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": u}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}}),
    );
    let hints = r.response_result.expect("hints");
    assert_eq!(
        hints[0]["label"].as_str().map(|l| l.starts_with("dropped")),
        Some(true),
        "{hints:#}"
    );
    // After the emoji's two UTF-16 units, a space and `{{IF:dco}}` (10 units).
    assert_eq!(hints[0]["position"], json!({"line": 0, "character": 13}));
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn completion_symbols_definition_and_references() {
    let (_root, folder, home) = project();
    // The project's copy of an embedded package rule.
    let rule = folder.join(".pi/rules/00-orchestrator-core.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    let u = uri(&rule);
    client.open(
        &rule,
        "# Core\n{{IF:dco}}\n{{IFNOT:review_loop_enforcement}}x{{/IFNOT}}\n{{/IF}}\n{{IF:",
    );
    client.diagnostics(&u);
    let r = client.request("textDocument/completion", at(&u, 4, 5));
    let items = r.response_result.expect("items");
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["label"].as_str())
        .collect();
    assert!(
        labels.contains(&"dco") && labels.contains(&"review_loop_enforcement"),
        "{labels:?}"
    );

    let r = client.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": u}}),
    );
    let symbols = r.response_result.expect("symbols");
    assert_eq!(symbols[0]["name"], "IF dco", "{symbols:#}");
    assert_eq!(
        symbols[0]["children"][0]["name"], "IFNOT review_loop_enforcement",
        "{symbols:#}"
    );

    // Definition, from the text outside a marker: the package copy this file overrides,
    // written to the cache, read-only.
    let r = client.request("textDocument/definition", at(&u, 0, 0));
    let targets = r.response_result.expect("definition");
    let target = targets[0]["uri"].as_str().expect("a location");
    let cached = home
        .join(".cache/pi-rules")
        .join(env!("CARGO_PKG_VERSION"))
        .join("package/00-orchestrator-core.md");
    assert_eq!(target, uri(&cached));
    let meta = std::fs::metadata(&cached).expect("written");
    assert!(meta.permissions().readonly());
    // References: every copy of the name.
    let r = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 0}, "context": {"includeDeclaration": true}}),
    );
    let refs = r.response_result.expect("references");
    let uris: Vec<&str> = refs
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["uri"].as_str())
        .collect();
    assert!(
        uris.contains(&u.as_str()) && uris.contains(&uri(&cached).as_str()),
        "{uris:?}"
    );
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn every_method_with_wrong_parameters_is_answered_and_the_server_goes_on() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    client.open(&rule, BROKEN);
    client.diagnostics(&uri(&rule));
    let methods = [
        "textDocument/hover",
        "textDocument/completion",
        "textDocument/inlayHint",
        "textDocument/documentSymbol",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/codeAction",
        "workspace/executeCommand",
    ];
    let wrong = [
        Value::Null,
        json!(1),
        json!({"textDocument": {"uri": "untitled:x"}, "position": {"line": 0, "character": 0}}),
        json!({"textDocument": {"uri": uri(&rule)}, "position": {"line": 4_000_000_000u32, "character": 4_000_000_000u32},
               "range": {"start": {"line": 9, "character": 9}, "end": {"line": 0, "character": 0}},
               "context": {"diagnostics": [], "includeDeclaration": true}}),
        json!({"command": "pi-rules.server.override", "arguments": [{"name": "../../etc/passwd", "layer": "project"}]}),
        json!({"command": "pi-rules.server.override", "arguments": ["x"]}),
    ];
    for method in methods {
        for params in &wrong {
            // An answer, an error or an empty result, and never a panic.
            let r = client.request(method, params.clone());
            if let Ok(value) = &r.response_result {
                assert!(
                    value.is_null() || value.is_array() || value.is_object(),
                    "{method} {params}: {value}"
                );
            }
        }
    }
    // Nothing was written outside the layers, and the server still checks.
    assert!(!folder.join(".pi/rules/passwd").exists());
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri(&rule), "version": 2}, "contentChanges": [{"text": FIXED}]}),
    );
    assert!(!codes(&client.diagnostics(&uri(&rule))).contains(&"PR101".to_owned()));
    assert_eq!(client.exit(true), Ending::Clean);
}

/// The real binary over stdio: framed messages in, framed answers out, and its exit code.
fn run_binary(
    folder: &Path,
    home: &Path,
    bodies: &[Value],
    tail: &[u8],
) -> (Option<i32>, Vec<Value>) {
    run_binary_with(&[], folder, home, bodies, tail)
}

/// `run_binary` with `args` after `lsp`.
fn run_binary_with(
    args: &[&str],
    folder: &Path,
    home: &Path,
    bodies: &[Value],
    tail: &[u8],
) -> (Option<i32>, Vec<Value>) {
    let mut input = Vec::new();
    for body in bodies {
        let text = body.to_string();
        input.extend(format!("Content-Length: {}\r\n\r\n{text}", text.len()).bytes());
    }
    input.extend(tail);
    let out = assert_cmd::Command::cargo_bin("pi-rules")
        .expect("binary")
        .arg("lsp")
        .args(args)
        .current_dir(folder)
        .env_clear()
        .env("HOME", home)
        .write_stdin(input)
        .timeout(WAIT)
        .output()
        .expect("runs");
    let mut answers = Vec::new();
    let mut rest = &out.stdout[..];
    while !rest.is_empty() {
        // The server's framing, read here without the server's reader.
        let text = std::str::from_utf8(rest).expect("UTF-8");
        let (head, body) = text.split_once("\r\n\r\n").expect("a header");
        let length: usize = head
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .expect("Content-Length");
        let mut value: Value = serde_json::from_str(&body[..length]).expect("JSON");
        assert_eq!(value["jsonrpc"], "2.0");
        value.as_object_mut().expect("object").remove("jsonrpc");
        answers.push(value);
        rest = &rest[head.len() + 4 + length..];
    }
    (out.status.code(), answers)
}

#[test]
fn the_binary_serves_stdio_and_exits_as_the_protocol_says() {
    let (_root, folder, home) = project();
    let init =
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}});
    let shutdown = json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"});
    let exit = json!({"jsonrpc": "2.0", "method": "exit"});
    let (code, answers) = run_binary(
        &folder,
        &home,
        &[init.clone(), shutdown.clone(), exit.clone()],
        b"",
    );
    assert_eq!(code, Some(0));
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "pi-rules");
    assert_eq!(answers[1], json!({"id": 2, "result": null}));
    // `exit` without `shutdown`, and stdin's end without `exit`: 1.
    assert_eq!(
        run_binary(&folder, &home, &[init.clone(), exit], b"").0,
        Some(1)
    );
    assert_eq!(
        run_binary(&folder, &home, std::slice::from_ref(&init), b"").0,
        Some(1)
    );
    // A broken header is a parse error with a null id, and the session goes on: the reader
    // finds the next `Content-Length` and the request after it is answered.
    let mut tail = b"Content-Length: nope\r\n\r\n{}".to_vec();
    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "x/y"}).to_string();
    tail.extend(format!("Content-Length: {}\r\n\r\n{unknown}", unknown.len()).bytes());
    let (code, answers) = run_binary(&folder, &home, &[init], &tail);
    assert_eq!(code, Some(1), "the input ended without exit");
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[1]["id"], Value::Null);
    assert_eq!(answers[1]["error"]["code"], -32700);
    assert_eq!(answers[2]["id"], 3);
    assert_eq!(answers[2]["error"]["code"], -32601);
}

/// Each malformed message gets the JSON-RPC error the specification names, over the real
/// binary, and the session goes on to a clean `exit`.
#[test]
fn malformed_messages_get_the_errors_json_rpc_names() {
    let (_root, folder, home) = project();
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    let mut input = String::new();
    for body in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        // Not JSON: -32700, null id.
        "{\"jsonrpc\":\"2.0\",",
        // An id that is an object or an array, a missing method: -32600, null id.
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"textDocument/hover","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":[2],"method":"textDocument/hover","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":3}"#,
        // An unknown method: -32601 with the id; wrong parameters: -32602 with the id.
        r#"{"jsonrpc":"2.0","id":4,"method":"textDocument/noSuchThing","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":"five","method":"textDocument/hover","params":{"textDocument":3}}"#,
        // initialize again: -32600 with the id.
        r#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#,
        // A request after shutdown: -32600 with the id.
        r#"{"jsonrpc":"2.0","id":8,"method":"textDocument/hover","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
    ] {
        input.push_str(&frame(body));
    }
    let (code, answers) = run_binary(&folder, &home, &[], input.as_bytes());
    assert_eq!(code, Some(0), "{answers:?}");
    let got: Vec<(Value, Value)> = answers[1..]
        .iter()
        .map(|a| (a["id"].clone(), a["error"]["code"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            (Value::Null, json!(-32700)),
            (Value::Null, json!(-32600)),
            (Value::Null, json!(-32600)),
            (Value::Null, json!(-32600)),
            (json!(4), json!(-32601)),
            (json!("five"), json!(-32602)),
            (json!(6), json!(-32600)),
            (json!(7), Value::Null),
            (json!(8), json!(-32600)),
        ]
    );
}

#[test]
fn stdio_as_editor_clients_ask_for_it_and_no_other_transport() {
    let (_root, folder, home) = project();
    let bodies = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        json!({"jsonrpc": "2.0", "method": "exit"}),
    ];
    // vscode-languageclient starts an executable over stdio as `COMMAND ARGS... --stdio`.
    let (code, answers) = run_binary_with(&["--stdio"], &folder, &home, &bodies, b"");
    assert_eq!(code, Some(0));
    assert_eq!(answers[0]["result"]["serverInfo"]["name"], "pi-rules");
    assert_eq!(answers[1], json!({"id": 2, "result": null}));
    // The other transports a client may ask for, and stray arguments: a usage error naming the
    // argument, and nothing on stdout (no server ran).
    for args in [
        &["--socket=5007"][..],
        &["--pipe=/tmp/pi-rules.sock"],
        &["--node-ipc"],
        &["--stdio", "--clientProcessId=1"],
        &["serve"],
    ] {
        let out = assert_cmd::Command::cargo_bin("pi-rules")
            .expect("binary")
            .arg("lsp")
            .args(args)
            .current_dir(&folder)
            .env_clear()
            .env("HOME", &home)
            .write_stdin(Vec::new())
            .timeout(WAIT)
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let refused = args.last().unwrap().split('=').next().unwrap();
        assert!(
            stderr.contains(&format!("unexpected argument '{refused}'")),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_burst_of_changes_is_checked_once_when_the_typing_pauses() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    let u = uri(&rule);
    client.open(&rule, FIXED);
    assert_eq!(client.diagnostics(&u)["version"], 1);
    for version in 2..=6 {
        let text = if version % 2 == 1 { BROKEN } else { FIXED };
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": u, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }
    // One publication, of the last version (its text is FIXED's).
    let params = client.diagnostics(&u);
    assert_eq!(params["version"], 6);
    assert!(!codes(&params).contains(&"PR101".to_owned()));
    std::thread::sleep(server::DEBOUNCE * 3);
    assert!(client.rx.try_recv().is_err(), "nothing more");
    assert_eq!(client.exit(true), Ending::Clean);
}

#[test]
fn a_file_changed_on_disk_rechecks_the_open_rules_through_the_watchers() {
    let (_root, folder, home) = project();
    let project_rule = folder.join(".pi/rules/80-x.md");
    let user_rule = home.join(".pi/agent/rules/80-x.md");
    let capabilities =
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let (mut client, _) = Client::initialized(&folder, &home, capabilities, Value::Null);
    let p = uri(&project_rule);
    client.open(&project_rule, "");
    assert!(!codes(&client.diagnostics(&p)).contains(&"PR403".to_owned()));
    // The server asked to watch every layer and the settings files.
    let register = client
        .seen
        .iter()
        .find_map(|m| match m {
            Message::Request(r) if r.method == "client/registerCapability" => {
                Some(r.params.clone())
            }
            _ => None,
        })
        .expect("a registration");
    let watchers = &register["registrations"][0]["registerOptions"]["watchers"];
    let patterns: Vec<&str> = watchers
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["globPattern"].as_str())
        .collect();
    let user_pattern = format!("{}/*.md", home.join(".pi/agent/rules").display());
    assert!(patterns.contains(&user_pattern.as_str()), "{patterns:?}");
    assert!(
        patterns
            .iter()
            .any(|p| p.ends_with("/.pi/pi-config-settings.json*")),
        "{patterns:?}"
    );
    // A user copy written by something else: the empty project file now masks it.
    std::fs::create_dir_all(user_rule.parent().unwrap()).unwrap();
    std::fs::write(&user_rule, "User rule text.\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&user_rule), "type": 1}]}),
    );
    assert!(codes(&client.diagnostics(&p)).contains(&"PR403".to_owned()));
    assert_eq!(client.exit(true), Ending::Clean);
}

/// Workspace folders come and go: a folder added is served (its rules checked, those already
/// open included, with the edits made while no folder served them), a folder removed is not, and
/// the diagnostics of its open rules are cleared, until it comes back.
#[test]
fn workspace_folders_added_and_removed() {
    let (_root, first, home) = project();
    let (_other_root, second, _) = project();
    let (mut client, init) = Client::initialized(&first, &home, json!({}), Value::Null);
    let folders = &init["capabilities"]["workspace"]["workspaceFolders"];
    assert_eq!(folders["supported"], true);
    assert_eq!(folders["changeNotifications"], true);

    let first_rule = first.join(".pi/rules/90-x.md");
    client.open(&first_rule, BROKEN);
    assert_eq!(codes(&client.diagnostics(&uri(&first_rule))), ["PR101"]);

    // Not a folder of the server yet: the rule is not served, so the request finds no document.
    let second_rule = second.join(".pi/rules/90-y.md");
    let outline_of = |client: &mut Client, rule: &Path| {
        client
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri(rule)}}),
            )
            .response_result
            .expect("an answer")
    };
    let outline = |client: &mut Client| outline_of(client, &second_rule);
    client.open(&second_rule, "---\nrequires_setting: dco\n---\n# fine\n");
    assert_eq!(outline(&mut client), json!([]));
    // An edit while it is not served is kept: the folder added below checks this text.
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": uri(&second_rule), "version": 2},
            "contentChanges": [{"text": BROKEN}],
        }),
    );

    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {
            "added": [{"uri": uri(&second), "name": "second"}],
            "removed": [{"uri": uri(&first), "name": "first"}],
        }}),
    );
    // The first folder's open rule is no longer served: its diagnostics are cleared.
    assert_eq!(
        codes(&client.diagnostics(&uri(&first_rule))),
        Vec::<String>::new()
    );
    // The second folder's rule, open before its folder came, is served at once, as edited.
    assert_eq!(codes(&client.diagnostics(&uri(&second_rule))), ["PR101"]);
    assert_ne!(outline(&mut client), json!([]));

    // The first folder comes back: its rule, still open, is checked again.
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri(&first), "name": "first"}], "removed": []}}),
    );
    assert_eq!(codes(&client.diagnostics(&uri(&first_rule))), ["PR101"]);
    assert_ne!(outline_of(&mut client, &first_rule), json!([]));
    // Closed while not served, it is gone: a folder change does not bring it back.
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [], "removed": [{"uri": uri(&first), "name": "first"}]}}),
    );
    assert_eq!(
        codes(&client.diagnostics(&uri(&first_rule))),
        Vec::<String>::new()
    );
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri(&first_rule)}}),
    );
    client.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [{"uri": uri(&first), "name": "first"}], "removed": []}}),
    );
    assert_eq!(codes(&client.diagnostics(&uri(&second_rule))), ["PR101"]);
    assert_eq!(outline_of(&mut client, &first_rule), json!([]));
    client.exit(true);
}

/// What a fresh `pi-rules check` of the folder, with `open`'s texts in the editor, gives as the
/// diagnostics of each open document.
fn fresh_diagnostics(folder: &Path, home: &Path, open: &[(PathBuf, String)]) -> Vec<Value> {
    use pi_rules::lsp::{diagnostics, documents::Document, position::Encoding};
    use pi_rules_host::check::{self, CheckOptions};
    use pi_rules_host::files::Overlay;
    use pi_rules_host::session::Session;
    let mut overlay = Overlay::new();
    for (path, text) in open {
        overlay.insert(path.clone(), text.as_str());
    }
    let env = Env::from_vars(folder.to_path_buf(), [("HOME", home.as_os_str())]);
    let session = Session::new(&env, None, None)
        .expect("session")
        .with_overlay(std::sync::Arc::new(overlay));
    let package = session.layer_dirs(None).package;
    let report = check::check(&CheckOptions {
        session: &session,
        package,
        strict: false,
    })
    .expect("check");
    open.iter()
        .map(|(path, text)| {
            let findings: Vec<_> = (report.diagnostics.iter())
                .filter(|d| folder.join(d.path.as_str()) == *path)
                .cloned()
                .collect();
            let u = uri(path).parse().expect("uri");
            let doc = Document::new(u, 1, text.clone(), Encoding::Utf16);
            serde_json::to_value(diagnostics::of_findings(&findings, &doc, false)).unwrap()
        })
        .collect()
}

/// After each of a run of edits, opens, closes and changes on disk, each open document's
/// diagnostics, as last published, are those of a fresh check of the same texts: findings
/// across files (a shadowed copy's note, a stub, a masked copy, prefixes), a settings file's,
/// and a file's own, whichever file changed.
#[test]
fn diagnostics_stay_those_of_a_fresh_check_through_edits_opens_closes_and_disk_changes() {
    let (_root, folder, home) = project();
    let rules = folder.join(".pi/rules");
    let user = home.join(".pi/agent/rules");
    std::fs::create_dir_all(&user).unwrap();
    let settings = folder.join(".pi/pi-config-settings.json");
    let (a, b, c, sentinel) = (
        rules.join("80-a.md"),
        rules.join("85-b.md"),
        rules.join("50-c.md"),
        rules.join("99-sentinel.md"),
    );
    let (ua, ub) = (user.join("80-a.md"), user.join("85-b.md"));
    std::fs::write(&ub, "A user rule with a good deal of text. ".repeat(8)).unwrap();
    std::fs::write(&a, "on disk\n").unwrap();
    let env = Env::from_vars(folder.clone(), [("HOME", home.as_os_str())]);
    let (tx, in_rx) = crossbeam_channel::unbounded();
    let (out_tx, rx) = crossbeam_channel::unbounded();
    let server = std::thread::spawn(move || server::run_with(env, in_rx, out_tx, Duration::ZERO));
    let mut client = Client {
        tx: Some(tx),
        rx,
        server: Some(server),
        next_id: 0,
        seen: Vec::new(),
    };
    let init =
        json!({"capabilities": {}, "workspaceFolders": [{"uri": uri(&folder), "name": "p"}]});
    client.request("initialize", init);
    client.notify("initialized", json!({}));

    let mut open: Vec<(PathBuf, String)> = Vec::new();
    let mut versions = 1;
    let mut latest: std::collections::HashMap<String, Value> = Default::default();
    let mut covered: Vec<(String, String)> = Vec::new();
    client.open(&sentinel, "sentinel\n");
    open.push((sentinel.clone(), "sentinel\n".to_owned()));
    enum Step<'a> {
        Open(&'a Path, &'a str),
        Edit(&'a Path, &'a str),
        Close(&'a Path),
        Write(&'a Path, &'a str),
        Remove(&'a Path),
    }
    use Step::*;
    let steps = [
        Open(&a, "{{IF:dcoo}}\nproject a\n{{/IF}}\n"),
        // A user copy in the editor: shadowed by the project's, its findings get the note.
        Open(&ua, "{{/IF}}\nuser a\n"),
        Edit(&a, "{{IF:dco}}\nproject a, fixed\n{{/IF}}\n"),
        // A stub over the user's long copy, made on disk.
        Write(&b, "stub"),
        Open(&b, "stub"),
        Edit(&b, ""),
        Edit(&ua, "{{/IF}}\nuser a, edited {{IF:x}}\n"),
        Write(&c, "{{/IF}}\n"),
        Open(&settings, "{\"dcoo\": true}\n"),
        Edit(&settings, "{\"dco\": 3, \"dco\": 4}\n"),
        // Closed: the file on disk stands in for the project copy again.
        Close(&a),
        Remove(&c),
        Close(&b),
        Write(&a, "\n"),
        Remove(&b),
        Close(&ua),
        Open(&c, "{{/IF}} back in the editor\n"),
    ];
    for (i, step) in steps.iter().enumerate() {
        match *step {
            Open(path, text) => {
                client.open(path, text);
                open.push((path.to_path_buf(), text.to_owned()));
            }
            Edit(path, text) => {
                versions += 1;
                client.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri(path), "version": versions}, "contentChanges": [{"text": text}]}),
                );
                let doc = open.iter_mut().find(|(p, _)| p == path).expect("open");
                doc.1 = text.to_owned();
            }
            Close(path) => {
                client.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri(path)}}),
                );
                open.retain(|(p, _)| p != path);
            }
            Write(path, text) => {
                std::fs::write(path, text).unwrap();
                client.notify(
                    "workspace/didChangeWatchedFiles",
                    json!({"changes": [{"uri": uri(path), "type": 2}]}),
                );
            }
            Remove(path) => {
                std::fs::remove_file(path).unwrap();
                client.notify(
                    "workspace/didChangeWatchedFiles",
                    json!({"changes": [{"uri": uri(path), "type": 3}]}),
                );
            }
        }
        // The sentinel's new version is published by the last check that takes in this step;
        // a request answered after it comes after every publication of that check.
        versions += 1;
        let text = format!("sentinel {i}\n");
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(&sentinel), "version": versions}, "contentChanges": [{"text": text}]}),
        );
        open.iter_mut()
            .find(|(p, _)| *p == sentinel)
            .expect("open")
            .1 = text;
        loop {
            let params = client.diagnostics(&uri(&sentinel));
            if params["version"] == versions {
                latest.insert(uri(&sentinel), params["diagnostics"].clone());
                break;
            }
        }
        client.request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri(&sentinel)}}),
        );
        for m in std::mem::take(&mut client.seen) {
            if let Message::Notification(n) = m {
                if n.method == "textDocument/publishDiagnostics" {
                    let u = n.params["uri"].as_str().unwrap_or("").to_owned();
                    latest.insert(u, n.params["diagnostics"].clone());
                }
            }
        }
        let expected = fresh_diagnostics(&folder, &home, &open);
        for d in expected.iter().filter_map(Value::as_array).flatten() {
            let code = d["code"].as_str().unwrap_or_default().to_owned();
            covered.push((code, d["message"].as_str().unwrap_or_default().to_owned()));
        }
        for ((path, _), want) in open.iter().zip(expected) {
            let got = latest.get(&uri(path)).unwrap_or(&Value::Null);
            assert_eq!(got, &want, "step {i}: {}", path.display());
        }
    }
    // The steps made findings of every kind the test means to cover: a stub, an empty copy
    // masking another, a shadowed copy's note, a settings file's finding, a file's own.
    for code in ["PR402", "PR403", "PR702", "PR101"] {
        assert!(
            covered.iter().any(|(c, _)| c == code),
            "{code}: {covered:?}"
        );
    }
    assert!(
        covered
            .iter()
            .any(|(_, m)| m.contains("note: this copy is not loaded")),
        "{covered:?}"
    );
    assert_eq!(client.exit(true), Ending::Clean);
}

/// A nested rule directory's file is served: its own findings at their lines, the rule of the
/// project's layer it replaces, kept up to date as the root's rule comes and goes on disk; a
/// change on disk in a nested directory with no open document is left alone.
#[test]
fn a_nested_rule_file_is_checked_as_check_checks_it() {
    let (_root, folder, home) = project();
    let root_rule = folder.join(".pi/rules/10-api.md");
    let nested = folder.join("packages/api/.pi/rules/10-api.md");
    let other = folder.join("packages/web/.pi/rules/10-web.md");
    std::fs::create_dir_all(nested.parent().unwrap()).unwrap();
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    std::fs::write(&root_rule, "The root's rule.\n").unwrap();
    let capabilities =
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let (mut client, _) = Client::initialized(&folder, &home, capabilities, Value::Null);
    let u = uri(&nested);
    client.open(
        &nested,
        "---\nagents: claude, claud\n---\n{{IF:dcoo}}\nx\n{{/IF}}\n",
    );
    let params = client.diagnostics(&u);
    let unknown = find(&params, "PR1003");
    assert_eq!(
        unknown["range"],
        json!({"start": {"line": 1, "character": 16}, "end": {"line": 1, "character": 21}})
    );
    assert_eq!(find(&params, "PR101")["range"]["start"]["line"], 3);
    let replaces = find(&params, "PR1006");
    let message = replaces["message"].as_str().unwrap();
    assert!(
        message.contains(".pi/rules/10-api.md") && message.contains("packages/api"),
        "{message}"
    );
    // The root's rule removed on disk: nothing to replace.
    std::fs::remove_file(&root_rule).unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&root_rule), "type": 3}]}),
    );
    let params = client.diagnostics(&u);
    assert!(!codes(&params).contains(&"PR1006".to_owned()), "{params:#}");
    assert!(codes(&params).contains(&"PR1003".to_owned()), "{params:#}");
    // Another nested directory's file changed on disk: not opened, not read; the open one's
    // diagnostics stand.
    std::fs::write(&other, "{{/IF}}\n").unwrap();
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&other), "type": 1}]}),
    );
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": u}, "position": {"line": 3, "character": 6}}),
    );
    let hover = hover.response_result.expect("hover");
    assert!(
        hover["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("dcoo"),
        "{hover:#}"
    );
    assert_eq!(client.exit(true), Ending::Clean);
}

/// pi-rules' configuration file: checked as it is typed, and what it says (`[check]`) followed
/// by the open rules' diagnostics once it changes, in the editor or on disk.
#[test]
fn the_configuration_file_is_checked_and_its_check_section_followed() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    let toml = folder.join(".pi/pi-rules.toml");
    std::fs::write(&rule, BROKEN).unwrap();
    let capabilities =
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let (mut client, _) = Client::initialized(&folder, &home, capabilities, Value::Null);
    let r = uri(&rule);
    client.open(&rule, BROKEN);
    assert_eq!(find(&client.diagnostics(&r), "PR101")["severity"], 1);
    let t = uri(&toml);
    client.open(&toml, "[check]\nignroe = []\n");
    let params = client.diagnostics(&t);
    let unknown = find(&params, "PR752");
    assert_eq!(
        unknown["range"]["start"],
        json!({"line": 1, "character": 0})
    );
    // `[check.severity]` typed: the open rule's finding is a warning now.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": t, "version": 2},
               "contentChanges": [{"text": "[check.severity]\nPR101 = \"warning\"\n"}]}),
    );
    assert_eq!(codes(&client.diagnostics(&t)), Vec::<String>::new());
    assert_eq!(find(&client.diagnostics(&r), "PR101")["severity"], 2);
    // Written by another program with `ignore`, and closed unsaved: the file on disk counts,
    // and the finding goes.
    std::fs::write(&toml, "[check]\nignore = [\"PR101\"]\n").unwrap();
    client.notify("textDocument/didClose", json!({"textDocument": {"uri": t}}));
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": t, "type": 1}]}),
    );
    let params = client.diagnostics(&r);
    assert!(!codes(&params).contains(&"PR101".to_owned()), "{params:#}");
    assert_eq!(client.exit(true), Ending::Clean);
}

/// A lone `\r` is a line break, as `\n` and `\r\n` are: an edit on the line after one lands
/// there, and the diagnostics' positions count it (before, the server took `x\rline` for one
/// line, so the edit below went to the line after and the key stayed right).
#[test]
fn a_lone_cr_is_a_line_break_for_edits_and_positions() {
    let (_root, folder, home) = project();
    let rule = folder.join(".pi/rules/90-x.md");
    let (mut client, _) = Client::initialized(&folder, &home, json!({}), Value::Null);
    let u = uri(&rule);
    let text = "x\rline\r\n{{IF:dco}}\nsigned\n{{/IF}}\n";
    client.open(&rule, text);
    assert!(!codes(&client.diagnostics(&u)).contains(&"PR101".to_owned()));
    // Line 2 is `{{IF:dco}}`: an `o` after `dco` makes it an unknown key.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": u, "version": 2}, "contentChanges": [
            {"range": {"start": {"line": 2, "character": 8}, "end": {"line": 2, "character": 8}}, "text": "o"}
        ]}),
    );
    let params = client.diagnostics(&u);
    let d = find(&params, "PR101");
    assert_eq!(d["range"]["start"]["line"], 2, "{d:#}");
    let edited = "x\rline\r\n{{IF:dcoo}}\nsigned\n{{/IF}}\n";
    let fresh = fresh_diagnostics(&folder, &home, &[(rule.clone(), edited.to_owned())]);
    assert_eq!(params["diagnostics"], fresh[0]);
    assert_eq!(client.exit(true), Ending::Clean);
}
