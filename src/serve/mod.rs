//! `pi-rules serve`: the commands as JSON-RPC 2.0 methods over stdin and stdout, for hosts that
//! assemble on every agent turn.
//!
//! Framing: one message per line, split on LF only (a JSON string may hold U+2028 and U+2029,
//! which some line readers treat as line ends). Each response is one line, flushed, in request
//! order. A batch (a JSON array) is answered with an array; a notification (no `id`) gets no
//! response. A line longer than [`MAX_LINE`] gets an error response and the rest of it is
//! skipped without being kept (see [`crate::lines`]). EOF ends the server.
//!
//! Methods mirror the commands: a method calls the host operation the command calls and writes
//! its report through the command's own printer ([`crate::report`]), so its
//! `result` is exactly what the command prints with `--format json`. What a command writes to
//! stderr is not part of a result, except `explain`'s and `check`'s note on project rules they do
//! not read, in the `notes` of their text forms. The protocol is documented in `docs/serve.md`.
//!
//! State: rule and settings files are looked at on every request (a settings file's text is kept
//! while its stamp holds); `assemble` with `have` answers `{"unchanged":true}` without a run when
//! the stamps of everything the last run read still hold (see the `turn` module); a working directory's
//! repository root (and so where its settings file is and where the
//! project ends) is found once per request, or taken from the location cache, which keeps it per
//! working directory for `--settings-ttl`; the environment is the one read when serve started.

use crate::invocation::{OutputFormat, SettingsSource};
use crate::json::EscapeMemo;
use crate::lines::{Line, LineReader, MAX_LINE};
use crate::output::Error;
use crate::report::{self, check as check_report};
use crate::terminal::Paint;
use pi_rules_core::rule_scope;
use pi_rules_core::Scope;
use pi_rules_host::assembly::{self, AssemblyMemo, LayerOptions, Run, ScopeOptions};
use pi_rules_host::check;
use pi_rules_host::env::Env;
use pi_rules_host::explain::{Explanation, Recorder};
use pi_rules_host::scoped;
use pi_rules_host::session::{Session, SettingsRead};
use pi_rules_host::settings_source::CachedSettings;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

mod turn;

pub use turn::{ChangeEvents, NoEvents, NotifyEvents, TurnCounts};

/// The protocol version `version` reports; it changes when a method or its parameters change
/// incompatibly.
pub const PROTOCOL_VERSION: u32 = 1;

/// JSON-RPC error codes.
pub mod code {
    /// The line is not JSON.
    pub const PARSE_ERROR: i32 = -32700;
    /// The JSON is not a request.
    pub const INVALID_REQUEST: i32 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i32 = -32601;
    /// The parameters do not fit the method.
    pub const INVALID_PARAMS: i32 = -32602;
    /// The method failed on its input (an unusable `cwd`, an unreadable file); `data.kind` says
    /// how.
    pub const APPLICATION_ERROR: i32 = -32000;
}

/// The methods, for `version` and for the message of an unknown method.
const METHODS: &[&str] = &[
    "assemble",
    "explain",
    "check",
    "settings",
    "render",
    "eval",
    "version",
    "rules_for_paths",
];

/// A failed request: the JSON-RPC `error` object.
#[derive(Debug)]
struct RpcError {
    code: i32,
    message: String,
    /// `data.kind` of an application error.
    kind: Option<&'static str>,
}

impl RpcError {
    fn new(code: i32, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            kind: None,
        }
    }

    fn params(err: impl std::fmt::Display) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, format!("invalid params: {err}"))
    }

    /// A command's failure, by exit code. What the command line calls by a flag is named as the
    /// request's parameter.
    fn application(err: &Error) -> RpcError {
        let message = match err.not_a_directory() {
            // Escaped as the host once escaped it, so that a client that shows it raw is safe.
            Some(cwd) => crate::terminal::escape(&cwd.for_param("params.cwd")).into_owned(),
            None => err.message().to_owned(),
        };
        RpcError {
            code: code::APPLICATION_ERROR,
            message,
            kind: Some(err.kind().name()),
        }
    }
}

/// Why serving stopped early.
#[derive(Debug)]
pub enum ServeError {
    /// Reading stdin failed (exit 3).
    Input(io::Error),
    /// Writing stdout failed (exit 4).
    Output(io::Error),
}

impl From<ServeError> for Error {
    fn from(err: ServeError) -> Error {
        match err {
            ServeError::Input(err) => Error::input(format!("cannot read the requests: {err}")),
            ServeError::Output(err) => Error::output(err),
        }
    }
}

/// `serve`'s server of request lines: the settings cache and reusable buffers.
pub struct LineServer {
    /// The process as the host sees it, the same for every request (a request's `cwd` is
    /// given to the session explicitly).
    env: Env,
    settings: CachedSettings,
    /// A method's result as the command printed it.
    body: Vec<u8>,
    /// One response, before it is written.
    response: Vec<u8>,
    /// The last `assemble` block and its JSON escape, and the last assembly with its inputs: a
    /// session asks for the same block turn after turn.
    block: EscapeMemo,
    assembly: AssemblyMemo,
    /// The path-scoped rules of the last project `rules_for_paths` was asked about; dropped by
    /// every `assemble`, which reads the rules anew.
    scope_index: Option<scoped::Index>,
    /// The last `assemble` with `have`: what it read, and its token.
    turns: turn::Turns,
}

/// Buffers that grew past this between requests are given back rather than kept.
const RETAINED_BYTES: usize = 1 << 20;

impl LineServer {
    pub fn new(env: Env, settings_ttl: Duration) -> LineServer {
        LineServer {
            env,
            settings: CachedSettings::fresh(settings_ttl),
            body: Vec::new(),
            response: Vec::new(),
            block: EscapeMemo::default(),
            assembly: AssemblyMemo::default(),
            scope_index: None,
            turns: turn::Turns::default(),
        }
    }

    /// The same server taking its file-change events from `events` instead of the platform's
    /// watcher, and trusting stamps of files changed at least `margin` before a run (two
    /// seconds otherwise): for tests, which deliver, drop, delay or merge events, and cannot
    /// wait two seconds a step.
    pub fn with_events(mut self, events: Box<dyn ChangeEvents>, margin: Duration) -> LineServer {
        self.turns.events = events;
        self.turns.platform_events = false;
        self.turns.margin = margin;
        self
    }

    /// How the turns (`assemble` with `have`) went so far.
    pub fn turn_counts(&self) -> TurnCounts {
        self.turns.counts
    }

    /// Answers every request line of `input` on `out` until EOF.
    pub fn serve(&mut self, input: impl Read, out: &mut dyn Write) -> Result<(), ServeError> {
        let mut lines = LineReader::new(input);
        loop {
            match lines.next_line().map_err(ServeError::Input)? {
                None => return Ok(()),
                Some(Line::TooLong { bytes }) => {
                    let error = RpcError::new(
                        code::INVALID_REQUEST,
                        format!(
                            "the request is {bytes} bytes, over the {MAX_LINE}-byte limit; it \
                             was skipped"
                        ),
                    );
                    let mut response = Vec::new();
                    write_error(&mut response, None, &error);
                    response.push(b'\n');
                    out.write_all(&response).map_err(ServeError::Output)?;
                }
                Some(Line::Complete(line)) => {
                    self.handle_line(line, out).map_err(ServeError::Output)?;
                }
            }
            out.flush().map_err(ServeError::Output)?;
        }
    }

    /// Answers one line on `out`: one response line, or nothing for notifications and blank
    /// lines. The responses to a batch are written one by one as they are made, so a batch of
    /// many requests never holds more than one response in memory.
    pub fn handle_line(&mut self, line: &[u8], out: &mut dyn Write) -> io::Result<()> {
        let mut response = std::mem::take(&mut self.response);
        let written = self.answer_line(line, &mut response, out);
        response.clear();
        if response.capacity() > RETAINED_BYTES {
            response = Vec::new();
        }
        self.response = response;
        written
    }

    fn answer_line(
        &mut self,
        line: &[u8],
        response: &mut Vec<u8>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let single = |response: &mut Vec<u8>, out: &mut dyn Write| {
            if response.is_empty() {
                return Ok(());
            }
            response.push(b'\n');
            out.write_all(response)
        };
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(err) => {
                let error = RpcError::new(code::PARSE_ERROR, format!("parse error: {err}"));
                write_error(response, None, &error);
                return single(response, out);
            }
        };
        if text.trim_ascii().is_empty() {
            return Ok(());
        }
        let message: &RawValue = match serde_json::from_str(text) {
            Ok(message) => message,
            Err(err) => {
                let error = RpcError::new(code::PARSE_ERROR, format!("parse error: {err}"));
                write_error(response, None, &error);
                return single(response, out);
            }
        };
        if !message.get().starts_with('[') {
            self.handle_message(message, response);
            return single(response, out);
        }
        let batch: Vec<&RawValue> = match serde_json::from_str(message.get()) {
            Ok(batch) => batch,
            Err(err) => {
                let error = RpcError::new(code::PARSE_ERROR, format!("parse error: {err}"));
                write_error(response, None, &error);
                return single(response, out);
            }
        };
        if batch.is_empty() {
            let error = RpcError::new(code::INVALID_REQUEST, "an empty batch is not a request");
            write_error(response, None, &error);
            return single(response, out);
        }
        // `[` goes out with the first response: a batch of notifications alone gets no line.
        let mut first = true;
        for message in batch {
            response.clear();
            self.handle_message(message, response);
            if response.is_empty() {
                continue;
            }
            out.write_all(if first { b"[" } else { b"," })?;
            out.write_all(response)?;
            first = false;
        }
        if first {
            Ok(())
        } else {
            out.write_all(b"]\n")
        }
    }

    /// Writes the response to one message into `out` (nothing for a notification).
    fn handle_message(&mut self, message: &RawValue, out: &mut Vec<u8>) {
        let envelope: Envelope<'_> = match serde_json::from_str(message.get()) {
            Ok(envelope) => envelope,
            Err(_) => {
                let error = RpcError::new(
                    code::INVALID_REQUEST,
                    "a request is an object with `jsonrpc`, `method`, and `id` unless it is a \
                     notification",
                );
                return write_error(out, None, &error);
            }
        };
        let id = envelope.id;
        let valid_id = id.is_none_or(|id| {
            let raw = id.get();
            raw == "null"
                || raw.starts_with('"')
                || raw.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
        });
        let version: Option<&str> = envelope
            .jsonrpc
            .and_then(|raw| serde_json::from_str(raw.get()).ok());
        let method: Option<String> = envelope
            .method
            .and_then(|raw| serde_json::from_str(raw.get()).ok());
        let (Some(method), Some("2.0"), true) = (method, version, valid_id) else {
            let error = RpcError::new(
                code::INVALID_REQUEST,
                "a request needs `\"jsonrpc\": \"2.0\"`, a string `method`, and an `id` that is a \
                 string, a number or null",
            );
            return write_error(out, if valid_id { id } else { None }, &error);
        };
        let mut body = std::mem::take(&mut self.body);
        body.clear();
        // The result is written after the response's head, so that a large one (the block) is
        // not copied again into the response.
        if let Some(id) = id {
            write_result_head(&mut body, id);
        }
        let result = self.call(&method, envelope.params, &mut body);
        if let Some(id) = id {
            match result {
                Ok(()) if out.is_empty() => {
                    body.push(b'}');
                    std::mem::swap(out, &mut body);
                }
                Ok(()) => {
                    out.extend_from_slice(&body);
                    out.push(b'}');
                }
                Err(error) => write_error(out, Some(id), &error),
            }
        }
        // A very large result (explain of a huge project) is not kept for the next request.
        body.clear();
        if body.capacity() > RETAINED_BYTES {
            body = Vec::new();
        }
        self.body = body;
    }

    /// Runs `method` with `params`, writing its result (JSON) into `body`.
    fn call(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
        body: &mut Vec<u8>,
    ) -> Result<(), RpcError> {
        match method {
            "assemble" => {
                let mut p: LayerParams = parse_params(params)?;
                if p.format.is_some() {
                    return Err(RpcError::params(
                        "`assemble` has no `format`: its result is JSON",
                    ));
                }
                if let Some(have) = p.have.take() {
                    return self.turn(p, &have, body);
                }
                let (session, settings) = self.session(&p)?;
                self.scope_index = None;
                let run =
                    assembly::run_memoized(session, &p.options(), settings, &mut self.assembly)
                        .map_err(|e| RpcError::application(&e))?;
                report::assemble::append_json(&run, body, &mut self.block);
                trim_newline(body);
                Ok(())
            }
            "explain" => {
                let p: LayerParams = parse_params(params)?;
                if p.have.is_some() {
                    return Err(RpcError::params(
                        "`explain` has no `have`: only `assemble` does",
                    ));
                }
                match p.format.unwrap_or(OutputFormat::Json) {
                    OutputFormat::Json => {
                        let mut recorder = Recorder::default();
                        let run = self.run_assembly(&p, &mut recorder)?;
                        let report = Explanation::new(&run, &recorder, p.coms_active);
                        report::explain::write_json(&report, body).map_err(output_error)?;
                        trim_newline(body);
                        Ok(())
                    }
                    OutputFormat::Text => {
                        let mut text = Vec::new();
                        self.settings.forget_unread_root_rules();
                        let mut recorder = Recorder::default();
                        let run = self.run_assembly(&p, &mut recorder)?;
                        let report = Explanation::new(&run, &recorder, p.coms_active);
                        report::explain::write_text(&report, &mut text, Paint { on: false })
                            .map_err(output_error)?;
                        trim_newline(&mut text);
                        let notes = self.settings.take_unread_root_rules();
                        write_json(
                            body,
                            &NotedText {
                                text: String::from_utf8_lossy(&text),
                                notes: notes.as_slice(),
                            },
                        );
                        Ok(())
                    }
                }
            }
            "check" => self.check(parse_params(params)?, body),
            "rules_for_paths" => self.rules_for_paths(parse_params(params)?, body),
            "settings" => {
                let p: SettingsParams = parse_params(params)?;
                let session = self.session_at(p.cwd)?;
                // The settings' notes go to the command's stderr, not into the result.
                let resolved = SettingsSource::read(&mut self.settings, &session).resolved;
                let only = p.keys.unwrap_or_default();
                let rows = report::settings::rows(&resolved, &only);
                report::settings::write_json(rows, body).map_err(output_error)?;
                trim_newline(body);
                Ok(())
            }
            "render" => {
                let p: RenderParams = parse_params(params)?;
                let session = self.session_at(p.cwd)?;
                let settings = self.settings.resolve(&session).into_settings();
                let text = pi_rules_core::render::render(&p.prompt, &settings);
                write_json(body, &TextResult::new(text.as_bytes()));
                Ok(())
            }
            "eval" => {
                let params = params
                    .ok_or_else(|| RpcError::params("`eval` takes an eval request as params"))?;
                if turn::has_turn_members(params.get()) {
                    return self.turns.eval(params.get(), body);
                }
                body.extend_from_slice(crate::eval::respond(params.get()).as_bytes());
                Ok(())
            }
            "version" => {
                write_json(
                    body,
                    &serde_json::json!({
                        "name": "pi-rules",
                        "version": env!("CARGO_PKG_VERSION"),
                        "protocol": PROTOCOL_VERSION,
                        "methods": METHODS,
                        "formats": {
                            "assemble": report::assemble::FORMAT_VERSION,
                            "explain": report::explain::FORMAT_VERSION,
                            "check": check_report::JSON_FORMAT_VERSION,
                            "settings": report::settings::FORMAT_VERSION,
                        },
                    }),
                );
                Ok(())
            }
            other => Err(RpcError::new(
                code::METHOD_NOT_FOUND,
                format!(
                    "unknown method `{other}`; the methods are {}",
                    METHODS.join(", ")
                ),
            )),
        }
    }

    /// `check`: the JSON report as the command prints it, or the text of another format with
    /// the counts.
    fn check(&mut self, p: CheckParams, body: &mut Vec<u8>) -> Result<(), RpcError> {
        let format = match p.format {
            CheckFormat::Json => check_report::Format::Json,
            CheckFormat::Human => check_report::Format::Human,
            CheckFormat::Short => check_report::Format::Short,
        };
        let session = self.session_at(p.cwd)?;
        if format == check_report::Format::Json {
            // As the command does: the report alone, its note on stderr (not in the result).
            let options = check_report::CheckRun {
                check: check::CheckOptions {
                    session: &session,
                    package: session.layer_dirs(p.package_dir.as_deref()).package,
                    strict: p.strict,
                },
                format,
                color: false,
            };
            let report = check::check(&options.check).map_err(|e| RpcError::application(&e))?;
            options.render(&report, body).map_err(output_error)?;
            trim_newline(body);
            return Ok(());
        }
        self.settings.locate(&session, Instant::now());
        let package = session.layer_dirs(p.package_dir.as_deref()).package;
        let options = check_report::CheckRun {
            check: check::CheckOptions {
                session: &session,
                package,
                strict: p.strict,
            },
            format,
            color: false,
        };
        let report = check::check(&options.check).map_err(|e| RpcError::application(&e))?;
        let mut text = Vec::new();
        options.render(&report, &mut text).map_err(output_error)?;
        let (errors, warnings, infos) = check_report::counts(&report);
        let notes = session.unread_root_rules_note();
        /// The result of a `check` in a human format: the report's text is written into the
        /// response as it is, not copied into a JSON tree first.
        #[derive(serde::Serialize)]
        struct Checked<'a> {
            text: std::borrow::Cow<'a, str>,
            errors: usize,
            warnings: usize,
            infos: usize,
            notes: &'a [String],
        }
        write_json(
            body,
            &Checked {
                text: String::from_utf8_lossy(&text),
                errors,
                warnings,
                infos,
                notes: notes.as_slice(),
            },
        );
        Ok(())
    }

    /// `assemble` with `have`: `{"unchanged":true}` when nothing the last run read has changed
    /// and the client holds its result, else a run, answered "unchanged" when its token is
    /// `have`, or with the result and its `token` (see [`turn`]).
    fn turn(&mut self, p: LayerParams, have: &str, body: &mut Vec<u8>) -> Result<(), RpcError> {
        let key = turn::TurnKey {
            cwd: p.cwd.clone(),
            package_dir: p.package_dir.clone(),
            coms_active: p.coms_active,
            confine: p.confine,
        };
        if self.turns.unchanged(&key, have, Instant::now()) {
            self.turns.counts.unchanged_without_run += 1;
            body.extend_from_slice(turn::UNCHANGED);
            return Ok(());
        }
        self.turns.counts.runs += 1;
        self.turns.last = None;
        let generation = self.turns.events.generation();
        let started = SystemTime::now();
        let session = self.session_at(p.cwd.clone())?;
        session.files().record_reads();
        session.files().note(&session.cwd, false);
        let settings = SettingsSource::read(&mut self.settings, &session);
        self.scope_index = None;
        let run = assembly::run_memoized(session, &p.options(), settings, &mut self.assembly)
            .map_err(|e| RpcError::application(&e))?;
        let start = body.len();
        report::assemble::append_json(&run, body, &mut self.block);
        trim_newline(body);
        let token = turn::token(&body[start..]);
        let stamps = pi_rules_host::files::ReadStamps::take_with_margin(
            run.session.files(),
            started,
            self.turns.margin,
        );
        if let Some(located_until) = self.settings.located_until(&key.cwd) {
            self.turns.keep(turn::LastTurn {
                key,
                token: token.clone(),
                stamps,
                generation,
                located_until,
            });
        }
        if token == have {
            self.turns.counts.unchanged_after_run += 1;
            body.truncate(start);
            body.extend_from_slice(turn::UNCHANGED);
            return Ok(());
        }
        // The result with its token as the last member.
        body.pop();
        body.extend_from_slice(b",\"token\":\"");
        body.extend_from_slice(token.as_bytes());
        body.extend_from_slice(b"\"}");
        Ok(())
    }

    /// The session `p` names, with its settings from the cache.
    fn session(&mut self, p: &LayerParams) -> Result<(Session, SettingsRead), RpcError> {
        let session = self.session_at(p.cwd.clone())?;
        let settings = SettingsSource::read(&mut self.settings, &session);
        Ok((session, settings))
    }

    /// `rules_for_paths`: the path-scoped rules the given files bring in, each assembled alone
    /// with the project's settings, from the project's index (built on the first call after an
    /// `assemble`, or when a layer directory changed).
    fn rules_for_paths(&mut self, p: PathsParams, body: &mut Vec<u8>) -> Result<(), RpcError> {
        let started = Instant::now();
        let agent = p
            .agent
            .as_deref()
            .unwrap_or(scoped::PI)
            .to_ascii_lowercase();
        if !rule_scope::is_known_agent(&agent) {
            return Err(RpcError::params(format!("unknown agent `{agent}`")));
        }
        let layer = LayerParams {
            cwd: p.cwd,
            package_dir: p.package_dir,
            coms_active: p.coms_active,
            confine: p.confine,
            format: None,
            have: None,
        };
        let (session, settings) = self.session(&layer)?;
        let options = ScopeOptions {
            agent: Some(agent.clone()),
            paths: Vec::new(),
            scoped_in_pi: None,
        };
        let mut answer = scoped::PathRules::default();
        let on = options.query(&session).is_some();
        if on {
            let policy = session.policy(session.env.confined(layer.confine));
            let package_dir = layer.package_dir.as_deref();
            let fresh = self
                .scope_index
                .as_ref()
                .is_some_and(|i| i.is_fresh(&session, package_dir, policy.confine));
            if !fresh {
                self.scope_index = Some(scoped::Index::build(&session, package_dir, &policy));
            }
            let index = self.scope_index.as_mut().expect("built above");
            let resolved = settings.resolved;
            let features = pi_rules_host::session::features(layer.coms_active, &resolved);
            let cycles = pi_rules_host::session::review_loop_max_cycles(resolved.settings());
            let scope = Scope {
                settings: resolved.settings(),
                features: &features,
                review_loop_max_cycles: &cycles,
            };
            let query = scoped::Query {
                agent,
                paths: p.paths,
            };
            answer = index.rules_for(&session, &policy, &query, &scope);
        }
        report::scope::write_path_rules(on, &answer, started.elapsed().as_micros(), body);
        Ok(())
    }

    /// The session of the project at `cwd`, with the embedded schema.
    fn session_at(&self, cwd: PathBuf) -> Result<Session, RpcError> {
        Session::new(&self.env, Some(cwd), None).map_err(|e| RpcError::application(&e))
    }

    /// Reads the session `p` names, takes its settings from the cache and runs the assembly,
    /// as the commands that assemble do (their notes go to the command's stderr, not into a
    /// result).
    fn run_assembly<O: pi_rules_core::Observer>(
        &mut self,
        p: &LayerParams,
        observer: &mut O,
    ) -> Result<Run, RpcError> {
        let (session, settings) = self.session(p)?;
        assembly::run(session, &p.options(), settings, observer)
            .map_err(|e| RpcError::application(&e))
    }
}

/// A printer's failure to write into a buffer (which does not fail), as an output error, as the
/// commands report it.
fn output_error(err: io::Error) -> RpcError {
    RpcError::application(&Error::output(err))
}

/// The members of a message that matter before dispatch, unparsed.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    /// Present (even as `null`) for a request, absent for a notification.
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// Keeps a member that is present, `null` included (plain `Option` would turn `null` into
/// `None`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

fn parse_params<'a, T: Deserialize<'a>>(params: Option<&'a RawValue>) -> Result<T, RpcError> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(RpcError::params)
}

/// Params of `assemble` and `explain` (only `explain` takes a `format`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LayerParams {
    cwd: PathBuf,
    #[serde(default)]
    package_dir: Option<PathBuf>,
    #[serde(default)]
    coms_active: bool,
    #[serde(default)]
    confine: bool,
    #[serde(default, deserialize_with = "text_or_json")]
    format: Option<OutputFormat>,
    /// `assemble`'s token of the result the client holds (`""`: none), see [`turn`].
    #[serde(default)]
    have: Option<String>,
}

impl LayerParams {
    /// The host's options, as the command line's `LayerArgs` gives them.
    fn options(&self) -> LayerOptions {
        LayerOptions {
            package_dir: self.package_dir.clone(),
            coms_active: self.coms_active,
            confine: self.confine,
            export_layers: None,
            scope: Default::default(),
        }
    }
}

/// `rules_for_paths`' params: a project as `assemble` takes it, the files, and the agent.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathsParams {
    cwd: PathBuf,
    #[serde(default)]
    package_dir: Option<PathBuf>,
    #[serde(default)]
    coms_active: bool,
    #[serde(default)]
    confine: bool,
    paths: Vec<PathBuf>,
    #[serde(default)]
    agent: Option<String>,
}

fn text_or_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<OutputFormat>, D::Error> {
    match String::deserialize(d)?.as_str() {
        "json" => Ok(Some(OutputFormat::Json)),
        "text" => Ok(Some(OutputFormat::Text)),
        other => Err(serde::de::Error::custom(format!(
            "`format` is \"json\" or \"text\", not {other:?}"
        ))),
    }
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum CheckFormat {
    #[default]
    Json,
    Human,
    Short,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckParams {
    cwd: PathBuf,
    #[serde(default)]
    package_dir: Option<PathBuf>,
    #[serde(default)]
    format: CheckFormat,
    #[serde(default)]
    strict: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsParams {
    cwd: PathBuf,
    #[serde(default)]
    keys: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RenderParams {
    cwd: PathBuf,
    prompt: String,
}

/// `{"text": ..., "notes": [...]}`: a text form and what its command said on stderr that the user
/// should hear (`explain`'s note on project rules it does not read).
#[derive(serde::Serialize)]
struct NotedText<'a> {
    text: std::borrow::Cow<'a, str>,
    notes: &'a [String],
}

/// `{"text": ...}`.
#[derive(serde::Serialize)]
struct TextResult<'a> {
    text: std::borrow::Cow<'a, str>,
}

impl<'a> TextResult<'a> {
    fn new(bytes: &'a [u8]) -> TextResult<'a> {
        TextResult {
            text: String::from_utf8_lossy(bytes),
        }
    }
}

fn write_json(out: &mut Vec<u8>, value: &impl serde::Serialize) {
    // Serialising our own types into a Vec cannot fail.
    let _ = serde_json::to_writer(out, value);
}

fn trim_newline(body: &mut Vec<u8>) {
    if body.last() == Some(&b'\n') {
        body.pop();
    }
}

/// A result response up to its result, which follows, and then `}`.
fn write_result_head(out: &mut Vec<u8>, id: &RawValue) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(b",\"result\":");
}

fn write_error(out: &mut Vec<u8>, id: Option<&RawValue>, error: &RpcError) {
    #[derive(serde::Serialize)]
    struct Data {
        kind: &'static str,
    }
    #[derive(serde::Serialize)]
    struct ErrorObject<'a> {
        code: i32,
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<Data>,
    }
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.map_or("null", RawValue::get).as_bytes());
    out.extend_from_slice(b",\"error\":");
    write_json(
        out,
        &ErrorObject {
            code: error.code,
            message: &error.message,
            data: error.kind.map(|kind| Data { kind }),
        },
    );
    out.push(b'}');
}
