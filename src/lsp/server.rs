//! The message loop: initialization, the open documents, diagnostics (debounced), code actions
//! and commands, shutdown and exit.
//!
//! One thread runs the loop over a channel of [`Incoming`] messages and answers on a channel of
//! [`Outgoing`] ones; `stdio` puts a reader and a writer thread around it. Each message is
//! handled under `catch_unwind`: a panic answers a request with an internal error and leaves the
//! server running.

use super::diagnostics;
use super::documents::{Document, Documents};
use super::features;
use super::position::Encoding;
use super::transport::{Incoming, Outgoing};
use super::uri;
pub use super::workspace::{owner, OVERRIDE_COMMAND};
use super::workspace::{Options, Workspace};
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    ExecuteCommandOptions, HoverProviderCapability, InitializeParams, InitializeResult, OneOf,
    PositionEncodingKind, PublishDiagnosticsParams, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, WorkspaceFoldersServerCapabilities, WorkspaceServerCapabilities,
};
use pi_rules_host::env::Env;
use pi_rules_host::ide::{self, DocumentKind, IdeContext, IdeOptions};
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long the server waits after a change for the typing to pause before it checks.
pub const DEBOUNCE: Duration = Duration::from_millis(75);

/// How the loop ended: `exit` after `shutdown` (0), or anything else (1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Clean,
    Unclean,
}

/// The server's state between messages.
pub struct Server {
    out: Sender<Outgoing>,
    env: Env,
    encoding: Encoding,
    options: Options,
    workspaces: Vec<Workspace>,
    /// The open documents a workspace folder serves.
    documents: Documents,
    /// The open documents no folder serves (yet): kept up to date, so that a folder added
    /// later serves them at once.
    unserved: Documents,
    /// What was last published per open document.
    published: HashMap<PathBuf, Vec<lsp_types::Diagnostic>>,
    /// The files changed since the last check (edited, opened, closed, changed on disk), in
    /// order, each once.
    changed: Vec<PathBuf>,
    /// The open documents whose diagnostics are published at the next check even when they
    /// are the same (a new version, or a check of everything).
    republish: HashSet<PathBuf>,
    /// The next check checks everything again.
    recheck_all: bool,
    /// How long the server waits after a change for the typing to pause.
    debounce: Duration,
    /// When the pending check is due, if one is.
    due: Option<Instant>,
    shutdown: bool,
    show_document: bool,
    /// The client registers file watchers on request (`workspace/didChangeWatchedFiles`).
    watch_files: bool,
    /// Whether the file watchers are registered (under [`WATCH_ID`]), to be replaced when the
    /// workspace folders change.
    watching: bool,
    next_id: i32,
}

/// The id of the file watchers' registration.
const WATCH_ID: &str = "pi-rules-watch";

/// Runs a server on `incoming` until `exit` or the end of the input.
pub fn run(env: Env, incoming: Receiver<Incoming>, out: Sender<Outgoing>) -> Ending {
    run_with(env, incoming, out, DEBOUNCE)
}

/// [`run`], waiting `debounce` after a change for the typing to pause (a benchmark measures the
/// server's work with none).
pub fn run_with(
    env: Env,
    incoming: Receiver<Incoming>,
    out: Sender<Outgoing>,
    debounce: Duration,
) -> Ending {
    let Some(mut server) = initialize(env, &incoming, &out) else {
        return Ending::Unclean;
    };
    server.debounce = debounce;
    loop {
        let next = match server.due {
            None => incoming.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(due) => incoming.recv_timeout(due.saturating_duration_since(Instant::now())),
        };
        match next {
            Ok(Incoming::Message(Message::Notification(n))) if n.method == notif::Exit::METHOD => {
                return if server.shutdown {
                    Ending::Clean
                } else {
                    Ending::Unclean
                };
            }
            Ok(incoming) => server.handle(incoming),
            Err(RecvTimeoutError::Timeout) => {
                if !server.guarded(|s| s.flush()) {
                    // The changes it took may not have reached every workspace's check.
                    server.recheck_all = true;
                }
            }
            Err(RecvTimeoutError::Disconnected) => return Ending::Unclean,
        }
    }
}

/// Waits for `initialize`, answers it, and builds the server. Requests before it are answered
/// with an error, notifications dropped (`exit` ends the loop), as the protocol says.
fn initialize(env: Env, incoming: &Receiver<Incoming>, out: &Sender<Outgoing>) -> Option<Server> {
    loop {
        let message = match incoming.recv().ok()? {
            Incoming::Refused { code, message } => {
                let _ = out.send(Outgoing::NullIdError { code, message });
                continue;
            }
            Incoming::Message(message) => message,
        };
        match message {
            Message::Request(request) if request.method == req::Initialize::METHOD => {
                let params: InitializeParams = match serde_json::from_value(request.params) {
                    Ok(params) => params,
                    Err(err) => {
                        let _ = out.send(error(
                            request.id,
                            ErrorCode::InvalidParams,
                            format!("invalid initialize parameters: {err}"),
                        ));
                        continue;
                    }
                };
                let (server, result) = Server::new(env, &params, out.clone());
                let _ = out.send(Outgoing::Message(Message::Response(Response::new_ok(
                    request.id, result,
                ))));
                for warning in &server.options.warnings {
                    server.log(warning);
                }
                return Some(server);
            }
            Message::Request(request) => {
                let _ = out.send(error(
                    request.id,
                    ErrorCode::ServerNotInitialized,
                    "the server is not initialized".to_owned(),
                ));
            }
            Message::Notification(n) if n.method == notif::Exit::METHOD => return None,
            _ => {}
        }
    }
}

fn error(id: RequestId, code: ErrorCode, message: String) -> Outgoing {
    Outgoing::Message(Message::Response(Response::new_err(
        id,
        code as i32,
        message,
    )))
}

impl Server {
    fn new(
        env: Env,
        params: &InitializeParams,
        out: Sender<Outgoing>,
    ) -> (Server, InitializeResult) {
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_ref());
        let encoding = if offered.is_some_and(|kinds| kinds.contains(&PositionEncodingKind::UTF8)) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        };
        let watch_files = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|w| w.dynamic_registration)
            .unwrap_or(false);
        let show_document = params
            .capabilities
            .window
            .as_ref()
            .and_then(|w| w.show_document.as_ref())
            .is_some_and(|s| s.support);
        let options = Options::from_json(params.initialization_options.as_ref());
        let mut folders: Vec<PathBuf> = params
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|f| uri::to_path(&f.uri))
            .collect();
        #[allow(deprecated)] // rootUri: the clients that send no workspace folders send it.
        if folders.is_empty() {
            folders.extend(params.root_uri.as_ref().and_then(uri::to_path));
        }
        if folders.is_empty() {
            folders.extend(env.cwd().ok().map(uri::normal));
        }
        let workspaces = folders
            .into_iter()
            .map(|folder| Workspace::new(&env, folder, &options))
            .collect();
        let capabilities = ServerCapabilities {
            position_encoding: Some(encoding.kind()),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                        include_text: Some(false),
                    })),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::REFACTOR]),
                ..CodeActionOptions::default()
            })),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: vec![OVERRIDE_COMMAND.to_owned()],
                ..ExecuteCommandOptions::default()
            }),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some([":", "{", " ", "\"", "="].map(str::to_owned).to_vec()),
                ..CompletionOptions::default()
            }),
            inlay_hint_provider: Some(OneOf::Left(true)),
            document_symbol_provider: Some(OneOf::Left(true)),
            definition_provider: Some(OneOf::Left(true)),
            references_provider: Some(OneOf::Left(true)),
            workspace: Some(WorkspaceServerCapabilities {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(OneOf::Left(true)),
                }),
                file_operations: None,
            }),
            ..ServerCapabilities::default()
        };
        let result = InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "pi-rules".to_owned(),
                version: Some(env!("PI_RULES_VERSION").to_owned()),
            }),
        };
        let server = Server {
            out,
            env,
            encoding,
            options,
            workspaces,
            documents: Documents::default(),
            unserved: Documents::default(),
            published: HashMap::new(),
            changed: Vec::new(),
            republish: HashSet::new(),
            recheck_all: false,
            debounce: DEBOUNCE,
            due: None,
            shutdown: false,
            show_document,
            watch_files,
            watching: false,
            next_id: 0,
        };
        (server, result)
    }

    /// Runs `f`, catching a panic; returns whether it completed.
    fn guarded(&mut self, f: impl FnOnce(&mut Server)) -> bool {
        match catch_unwind(AssertUnwindSafe(|| f(self))) {
            Ok(()) => true,
            Err(_) => {
                // What it was doing is dropped; the next change checks again.
                self.due = None;
                false
            }
        }
    }

    fn handle(&mut self, incoming: Incoming) {
        match incoming {
            Incoming::Refused { code, message } => {
                self.send(Outgoing::NullIdError { code, message })
            }
            Incoming::Message(Message::Request(request)) => {
                let id = request.id.clone();
                let method = request.method.clone();
                let mut answer = None;
                let done = self.guarded(|s| answer = Some(s.request(request)));
                let response = match answer {
                    Some(Ok(value)) if done => Response::new_ok(id, value),
                    Some(Err((code, message))) if done => {
                        Response::new_err(id, code as i32, message)
                    }
                    _ => Response::new_err(
                        id,
                        ErrorCode::InternalError as i32,
                        format!("pi-rules failed on `{method}`; this is a bug, please report it"),
                    ),
                };
                self.send(Outgoing::Message(Message::Response(response)));
            }
            Incoming::Message(Message::Notification(n)) => {
                self.guarded(|s| s.notification(n));
            }
            // Answers to the server's own requests (window/showDocument): nothing waits for them.
            Incoming::Message(Message::Response(_)) => {}
        }
    }

    fn request(&mut self, request: Request) -> Result<serde_json::Value, (ErrorCode, String)> {
        // The specification, on `shutdown`: "If a server receives requests after a shutdown
        // request those requests should error with `InvalidRequest`."
        if self.shutdown {
            return Err((
                ErrorCode::InvalidRequest,
                "the server is shutting down".to_owned(),
            ));
        }
        match request.method.as_str() {
            // "The initialize request may only be sent once."
            req::Initialize::METHOD => Err((
                ErrorCode::InvalidRequest,
                "the server is already initialized".to_owned(),
            )),
            req::Shutdown::METHOD => {
                self.shutdown = true;
                Ok(serde_json::Value::Null)
            }
            req::CodeActionRequest::METHOD => {
                let params = extract::<req::CodeActionRequest>(request)?;
                // Answer on the text as it is now, not on a check from before the last change.
                if self.due.is_some() {
                    self.flush();
                }
                let Some(path) = uri::to_path(&params.text_document.uri) else {
                    return Ok(serde_json::Value::Array(Vec::new()));
                };
                let actions =
                    diagnostics::code_actions(&params, self.documents.get(&path), &self.workspaces);
                to_value(actions)
            }
            req::ExecuteCommand::METHOD => {
                let params = extract::<req::ExecuteCommand>(request)?;
                if params.command != OVERRIDE_COMMAND {
                    return Err((
                        ErrorCode::InvalidParams,
                        format!("unknown command `{}`", params.command),
                    ));
                }
                let written = diagnostics::run_override(
                    &params.arguments,
                    &self.env,
                    &self.options,
                    &self.workspaces,
                )
                .map_err(|message| (ErrorCode::RequestFailed, message))?;
                if self.show_document {
                    let show = lsp_types::ShowDocumentParams {
                        uri: uri::from_path(&written),
                        external: None,
                        take_focus: Some(true),
                        selection: None,
                    };
                    self.next_id += 1;
                    let request = Request::new(
                        RequestId::from(format!("pi-rules-{}", self.next_id)),
                        req::ShowDocument::METHOD.to_owned(),
                        show,
                    );
                    self.send(Outgoing::Message(Message::Request(request)));
                }
                // A new copy in a higher layer shadows the lower one: check again.
                self.changed(written.clone());
                self.schedule(Duration::ZERO);
                Ok(serde_json::Value::String(written.display().to_string()))
            }
            req::HoverRequest::METHOD => {
                let p = extract::<req::HoverRequest>(request)?.text_document_position_params;
                let path = uri::to_path(&p.text_document.uri).unwrap_or_default();
                let hover = self.ide(&p.text_document.uri, |ctx, kind, doc| {
                    features::hover(ctx, kind, &path, doc.text(), &doc.lines, p.position)
                })?;
                to_value(hover)
            }
            req::Completion::METHOD => {
                let p = extract::<req::Completion>(request)?.text_document_position;
                let path = uri::to_path(&p.text_document.uri).unwrap_or_default();
                let items = self.ide(&p.text_document.uri, |ctx, kind, doc| {
                    features::completion(ctx, kind, &path, doc.text(), &doc.lines, p.position)
                })?;
                to_value(items)
            }
            req::InlayHintRequest::METHOD => {
                let p = extract::<req::InlayHintRequest>(request)?;
                let hints = self.ide(&p.text_document.uri, |ctx, kind, doc| {
                    features::inlay_hints(ctx, kind, doc.text(), &doc.lines, p.range)
                })?;
                to_value(hints)
            }
            req::DocumentSymbolRequest::METHOD => {
                let p = extract::<req::DocumentSymbolRequest>(request)?;
                let symbols = self.ide(&p.text_document.uri, |_, kind, doc| {
                    features::document_symbols(kind, doc.text(), &doc.lines)
                })?;
                to_value(symbols)
            }
            req::GotoDefinition::METHOD => {
                let p = extract::<req::GotoDefinition>(request)?.text_document_position_params;
                let targets = self.ide(&p.text_document.uri, |ctx, kind, doc| {
                    features::definition(ctx, kind, doc.text(), &doc.lines, p.position)
                })?;
                to_value(targets)
            }
            req::References::METHOD => {
                let p = extract::<req::References>(request)?.text_document_position;
                let targets = self.ide(&p.text_document.uri, |ctx, kind, doc| {
                    features::references(ctx, kind, doc.text(), &doc.lines, p.position)
                })?;
                to_value(targets)
            }
            _ => Err((
                ErrorCode::MethodNotFound,
                format!("`{}` is not supported", request.method),
            )),
        }
    }

    /// Asks the client to tell of changes on disk to the files a check reads: every layer's
    /// rule files and the settings files, of each workspace.
    fn watch(&mut self) {
        if !self.watch_files {
            return;
        }
        if self.watching {
            let params = lsp_types::UnregistrationParams {
                unregisterations: vec![lsp_types::Unregistration {
                    id: WATCH_ID.to_owned(),
                    method: notif::DidChangeWatchedFiles::METHOD.to_owned(),
                }],
            };
            self.next_id += 1;
            let request = Request::new(
                RequestId::from(format!("pi-rules-{}", self.next_id)),
                req::UnregisterCapability::METHOD.to_owned(),
                params,
            );
            self.send(Outgoing::Message(Message::Request(request)));
        }
        self.watching = true;
        let mut patterns: Vec<String> = Vec::new();
        for workspace in &self.workspaces {
            for pattern in workspace.watched() {
                if !patterns.contains(&pattern) {
                    patterns.push(pattern);
                }
            }
        }
        let watchers = patterns
            .into_iter()
            .map(|pattern| lsp_types::FileSystemWatcher {
                glob_pattern: lsp_types::GlobPattern::String(pattern),
                kind: None,
            })
            .collect();
        let options = lsp_types::DidChangeWatchedFilesRegistrationOptions { watchers };
        let params = lsp_types::RegistrationParams {
            registrations: vec![lsp_types::Registration {
                id: WATCH_ID.to_owned(),
                method: notif::DidChangeWatchedFiles::METHOD.to_owned(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        self.next_id += 1;
        let request = Request::new(
            RequestId::from(format!("pi-rules-{}", self.next_id)),
            req::RegisterCapability::METHOD.to_owned(),
            params,
        );
        self.send(Outgoing::Message(Message::Request(request)));
    }

    /// Runs one of the editor queries (`features`) on the open document at `uri`, in its
    /// workspace's session with the open documents' texts; the query's empty answer for a
    /// document that is not open or not served.
    fn ide<T: Default>(
        &self,
        uri: &lsp_types::Uri,
        query: impl FnOnce(&IdeContext, &DocumentKind, &Document) -> T,
    ) -> Result<T, (ErrorCode, String)> {
        let Some(path) = uri::to_path(uri) else {
            return Ok(T::default());
        };
        let (Some(doc), Some(index)) = (self.documents.get(&path), owner(&self.workspaces, &path))
        else {
            return Ok(T::default());
        };
        let overlay = std::sync::Arc::new(self.documents.overlay());
        let session = self.workspaces[index].session(&self.env, &overlay);
        let options = IdeOptions {
            package_dir: self.options.package_dir.clone(),
            coms_active: self.options.coms_active,
            confine: self.options.confine,
        };
        let ctx = IdeContext::new(&session, &options)
            .map_err(|err| (ErrorCode::RequestFailed, err.message().to_owned()))?;
        let kind = ide::classify_with(&session, self.options.package_dir.as_deref(), &path);
        Ok(query(&ctx, &kind, doc))
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            notif::DidOpenTextDocument::METHOD => {
                let Ok(params) = n.extract::<lsp_types::DidOpenTextDocumentParams>(
                    notif::DidOpenTextDocument::METHOD,
                ) else {
                    return;
                };
                let doc = params.text_document;
                let Some(path) = uri::to_path(&doc.uri) else {
                    return;
                };
                let document = Document::new(doc.uri, doc.version, doc.text, self.encoding);
                if !self.workspaces.iter().any(|w| w.serves(&path)) {
                    self.unserved.insert(path, document);
                    return;
                }
                self.documents.insert(path.clone(), document);
                self.republish.insert(path.clone());
                self.changed(path);
                self.schedule(Duration::ZERO);
            }
            notif::DidChangeTextDocument::METHOD => {
                let Ok(params) = n.extract::<lsp_types::DidChangeTextDocumentParams>(
                    notif::DidChangeTextDocument::METHOD,
                ) else {
                    return;
                };
                let Some(path) = uri::to_path(&params.text_document.uri) else {
                    return;
                };
                let version = params.text_document.version;
                if let Some(doc) = self.documents.get_mut(&path) {
                    doc.apply(version, &params.content_changes);
                    self.republish.insert(path.clone());
                    self.changed(path);
                    self.schedule(self.debounce);
                } else if let Some(doc) = self.unserved.get_mut(&path) {
                    doc.apply(version, &params.content_changes);
                }
            }
            notif::Initialized::METHOD => self.watch(),
            notif::DidChangeWorkspaceFolders::METHOD => {
                let Ok(params) = n.extract::<lsp_types::DidChangeWorkspaceFoldersParams>(
                    notif::DidChangeWorkspaceFolders::METHOD,
                ) else {
                    return;
                };
                self.change_folders(&params.event);
            }
            // A layer's file or a settings file changed on disk (saved here or elsewhere, made,
            // removed): the open rule files may read it.
            notif::DidChangeWatchedFiles::METHOD => {
                let Ok(params) = n.extract::<lsp_types::DidChangeWatchedFilesParams>(
                    notif::DidChangeWatchedFiles::METHOD,
                ) else {
                    return;
                };
                for change in &params.changes {
                    match uri::to_path(&change.uri) {
                        Some(path) => self.changed(path),
                        None => self.recheck_all = true,
                    }
                }
                self.schedule(self.debounce);
            }
            notif::DidSaveTextDocument::METHOD => {
                // The file on disk changed too: what reads it there (when the editor's text is
                // not kept) is checked again.
                let Ok(params) = n.extract::<lsp_types::DidSaveTextDocumentParams>(
                    notif::DidSaveTextDocument::METHOD,
                ) else {
                    return;
                };
                if let Some(path) = uri::to_path(&params.text_document.uri) {
                    self.changed(path);
                }
                self.schedule(Duration::ZERO);
            }
            notif::DidCloseTextDocument::METHOD => {
                let Ok(params) = n.extract::<lsp_types::DidCloseTextDocumentParams>(
                    notif::DidCloseTextDocument::METHOD,
                ) else {
                    return;
                };
                let Some(path) = uri::to_path(&params.text_document.uri) else {
                    return;
                };
                if self.documents.remove(&path).is_some() {
                    self.published.remove(&path);
                    self.republish.remove(&path);
                    self.publish(params.text_document.uri, Vec::new(), None);
                    // The file on disk stands in for it again.
                    self.changed(path);
                    self.schedule(self.debounce);
                } else {
                    self.unserved.remove(&path);
                }
            }
            _ => {}
        }
    }

    /// Takes the removed workspace folders out and adds the new ones. An open document that no
    /// folder serves any more is set aside and its diagnostics cleared, and one that a new
    /// folder serves is taken up; the watchers are replaced and every open rule is checked again
    /// (another folder may now read it).
    fn change_folders(&mut self, event: &lsp_types::WorkspaceFoldersChangeEvent) {
        for removed in event.removed.iter().filter_map(|f| uri::to_path(&f.uri)) {
            self.workspaces.retain(|w| w.folder() != removed);
        }
        for added in event.added.iter().filter_map(|f| uri::to_path(&f.uri)) {
            if !self.workspaces.iter().any(|w| w.folder() == added) {
                let workspace = Workspace::new(&self.env, added, &self.options);
                self.workspaces.push(workspace);
            }
        }
        let workspaces = &self.workspaces;
        let orphans = self
            .documents
            .take_where(|path| owner(workspaces, path).is_none());
        for (path, doc) in orphans {
            self.published.remove(&path);
            self.republish.remove(&path);
            self.publish(doc.uri.clone(), Vec::new(), None);
            self.unserved.insert(path, doc);
        }
        let adopted = self
            .unserved
            .take_where(|path| owner(workspaces, path).is_some());
        for (path, doc) in adopted {
            self.documents.insert(path, doc);
        }
        self.watch();
        self.recheck_all = true;
        self.schedule(Duration::ZERO);
    }

    /// Notes that the file at `path` changed, for the next check.
    fn changed(&mut self, path: PathBuf) {
        if !self.changed.contains(&path) {
            self.changed.push(path);
        }
    }

    /// Asks for a check `after` from now. A check asked for at once (open, save, a command)
    /// stays due at once; a change's check moves to `after` from the latest change, so that it
    /// runs when the typing pauses.
    fn schedule(&mut self, after: Duration) {
        let now = Instant::now();
        self.due = Some(match self.due {
            Some(due) if due <= now || after.is_zero() => due.min(now + after),
            _ => now + after,
        });
    }

    /// Brings the check of every workspace with an open document up to date with the files
    /// changed since the last one, and publishes the diagnostics of each open document that
    /// changed or has a new version. A workspace with no open document lets its check go.
    fn flush(&mut self) {
        self.due = None;
        let changed = std::mem::take(&mut self.changed);
        if std::mem::take(&mut self.recheck_all) {
            self.workspaces.iter_mut().for_each(Workspace::forget);
            self.republish.extend(self.documents.paths().cloned());
        }
        let overlay = std::sync::Arc::new(self.documents.overlay());
        for index in 0..self.workspaces.len() {
            let mine: Vec<PathBuf> = self
                .documents
                .paths()
                .filter(|path| owner(&self.workspaces, path) == Some(index))
                .cloned()
                .collect();
            let workspace = &mut self.workspaces[index];
            if mine.is_empty() {
                workspace.forget();
                continue;
            }
            let result = workspace.refresh(&self.env, &overlay, &self.options, &changed, &mine);
            for path in mine {
                let Some(doc) = self.documents.get(&path) else {
                    continue;
                };
                let diagnostics = match &result {
                    Ok(()) => {
                        let findings = workspace.findings_of(&path).unwrap_or_default();
                        diagnostics::of_findings(&findings, doc, self.options.strict)
                    }
                    Err(message) => diagnostics::failure(message),
                };
                let again = self.republish.remove(&path);
                if !again && self.published.get(&path) == Some(&diagnostics) {
                    continue;
                }
                let params = PublishDiagnosticsParams {
                    uri: doc.uri.clone(),
                    diagnostics: diagnostics.clone(),
                    version: Some(doc.version),
                };
                self.published.insert(path, diagnostics);
                let _ = self
                    .out
                    .send(Outgoing::Message(Message::Notification(Notification::new(
                        notif::PublishDiagnostics::METHOD.to_owned(),
                        params,
                    ))));
            }
        }
    }

    fn publish(
        &self,
        uri: lsp_types::Uri,
        diagnostics: Vec<lsp_types::Diagnostic>,
        version: Option<i32>,
    ) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Outgoing::Message(Message::Notification(Notification::new(
            notif::PublishDiagnostics::METHOD.to_owned(),
            params,
        ))));
    }

    fn log(&self, message: &str) {
        let params = lsp_types::LogMessageParams {
            typ: lsp_types::MessageType::WARNING,
            message: message.to_owned(),
        };
        self.send(Outgoing::Message(Message::Notification(Notification::new(
            notif::LogMessage::METHOD.to_owned(),
            params,
        ))));
    }

    fn send(&self, message: Outgoing) {
        // The writer is gone only when the output is closed: the input's end follows.
        let _ = self.out.send(message);
    }
}

fn extract<R: lsp_types::request::Request>(
    request: Request,
) -> Result<R::Params, (ErrorCode, String)> {
    serde_json::from_value(request.params).map_err(|err| {
        (
            ErrorCode::InvalidParams,
            format!("invalid parameters for `{}`: {err}", R::METHOD),
        )
    })
}

fn to_value(value: impl serde::Serialize) -> Result<serde_json::Value, (ErrorCode, String)> {
    serde_json::to_value(value).map_err(|err| (ErrorCode::InternalError, err.to_string()))
}
