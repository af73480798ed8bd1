//! `check`'s findings as the protocol's diagnostics, their fixes as quick fixes, and the override
//! actions on a lower layer's rule.

use super::documents::Document;
use super::workspace::{owner, Options, Workspace, OVERRIDE_COMMAND};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Command,
    DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Range, TextEdit,
    WorkspaceEdit,
};
use pi_rules_core::lint::{Diagnostic, Severity};
use pi_rules_host::authoring::Layers;
use pi_rules_host::authoring::OverrideError;
use pi_rules_host::check::explain_code;
use pi_rules_host::env::Env;
use pi_rules_host::loader::Layer;
use pi_rules_host::session::Session;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A quick fix of one finding: the linter's edits, as `check --fix` applies them. It travels
/// in the diagnostic's `data` (under `fix`), and comes back in a code action request's context.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QuickFix {
    pub title: String,
    pub edits: Vec<TextEdit>,
}

/// The protocol's diagnostics of `findings`, the findings of `check` on the document `doc`.
pub fn of_findings(
    findings: &[Diagnostic],
    doc: &Document,
    strict: bool,
) -> Vec<lsp_types::Diagnostic> {
    let lines = &doc.lines;
    let mut items = Vec::new();
    if doc.oversized() {
        items.push(plain(
            DiagnosticSeverity::ERROR,
            format!(
                "the editor's text is over {} bytes: it is not checked, and the file on disk \
                 is checked instead",
                super::documents::MAX_DOCUMENT_BYTES
            ),
        ));
    }
    for d in findings {
        let range = d.span.clone().map(|s| lines.range(s)).unwrap_or_default();
        let severity = match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning if strict => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        };
        let mut message = d.message.to_string();
        if !d.label.is_empty() && d.label != d.message {
            message.push_str(&format!("\n{}", d.label));
        }
        for note in &d.notes {
            message.push_str(&format!("\nnote: {note}"));
        }
        if let Some(help) = &d.help {
            message.push_str(&format!("\nhelp: {help}"));
        }
        let related: Vec<DiagnosticRelatedInformation> = d
            .labels
            .iter()
            .map(|label| DiagnosticRelatedInformation {
                location: Location {
                    uri: doc.uri.clone(),
                    range: lines.range(label.span.clone()),
                },
                message: label.message.to_string(),
            })
            .collect();
        let id = d.code.id();
        let fix = d.fix.as_ref().map(|fix| QuickFix {
            title: fix.description.clone(),
            edits: fix
                .edits
                .iter()
                .map(|e| TextEdit {
                    range: lines.range(e.span.clone()),
                    new_text: e.replacement.clone(),
                })
                .collect(),
        });
        // What `pi-rules check --explain CODE` prints, for clients that show it; and the quick
        // fix, for the code actions.
        let mut data = serde_json::json!({
            "name": d.code.info().name,
            "description": explain_code(id).unwrap_or_default(),
        });
        if let Some(fix) = fix {
            data["fix"] = serde_json::to_value(fix).unwrap_or_default();
        }
        items.push(lsp_types::Diagnostic {
            range,
            severity: Some(severity),
            code: Some(NumberOrString::String(id.to_owned())),
            code_description: None,
            source: Some("pi-rules".to_owned()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            tags: None,
            data: Some(data),
        });
    }
    items
}

/// One diagnostic at the start of the document saying the check failed.
pub fn failure(message: &str) -> Vec<lsp_types::Diagnostic> {
    vec![plain(
        DiagnosticSeverity::ERROR,
        format!("pi-rules could not check this workspace: {message}"),
    )]
}

fn plain(severity: DiagnosticSeverity, message: String) -> lsp_types::Diagnostic {
    lsp_types::Diagnostic {
        severity: Some(severity),
        source: Some("pi-rules".to_owned()),
        message,
        ..lsp_types::Diagnostic::default()
    }
}

fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The code actions at `params.range`: the quick fixes of the diagnostics in the request's
/// context (each carries its fix in `data`), and the overrides of a package or user rule.
pub fn code_actions(
    params: &CodeActionParams,
    doc: Option<&Document>,
    workspaces: &[Workspace],
) -> Vec<CodeActionOrCommand> {
    let wants = |kind: &CodeActionKind| {
        params.context.only.as_ref().is_none_or(|only| {
            only.iter().any(|o| {
                kind.as_str() == o.as_str()
                    || kind.as_str().starts_with(&format!("{}.", o.as_str()))
            })
        })
    };
    let mut actions = Vec::new();
    let uri = &params.text_document.uri;
    if doc.is_some() && wants(&CodeActionKind::QUICKFIX) {
        for diagnostic in &params.context.diagnostics {
            let ours = diagnostic.source.as_deref() == Some("pi-rules");
            let fix = diagnostic
                .data
                .as_ref()
                .and_then(|data| data.get("fix"))
                .and_then(|fix| serde_json::from_value::<QuickFix>(fix.clone()).ok());
            let Some(fix) = fix.filter(|_| ours) else {
                continue;
            };
            if !overlaps(diagnostic.range, params.range) {
                continue;
            }
            // lsp-types keys the edits by `Uri`, whose parsed form caches in a `Cell`; its hash
            // and equality are of the text alone, so the key is not mutated in the map's sense.
            #[allow(clippy::mutable_key_type)]
            let changes = HashMap::from([(uri.clone(), fix.edits)]);
            actions.push(CodeAction {
                title: fix.title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic.clone()]),
                edit: Some(WorkspaceEdit {
                    changes: Some(changes),
                    ..WorkspaceEdit::default()
                }),
                ..CodeAction::default()
            });
        }
        if actions.len() == 1 {
            actions[0].is_preferred = Some(true);
        }
    }
    let path = super::uri::to_path(uri);
    if let (Some(path), Some(_), true) = (&path, doc, wants(&CodeActionKind::REFACTOR)) {
        if let Some(index) = owner(workspaces, path) {
            actions.extend(override_actions(&workspaces[index], path));
        }
    }
    actions
        .into_iter()
        .map(CodeActionOrCommand::CodeAction)
        .collect()
}

/// "Override in the project" and "Override in the user layer" on a rule of a lower layer, where
/// that layer has no copy yet.
fn override_actions(workspace: &Workspace, path: &Path) -> Vec<CodeAction> {
    let (Some(layer), Some(name)) = (
        workspace.layer_of(path),
        path.file_name().and_then(|n| n.to_str()),
    ) else {
        return Vec::new();
    };
    let mut actions = Vec::new();
    for (target, title, key) in [
        (Layer::Project, "Override in the project", "project"),
        (Layer::User, "Override in the user layer", "user"),
    ] {
        if layer >= target {
            continue;
        }
        let arguments = serde_json::json!({
            "name": name,
            "layer": key,
            "folder": workspace.folder(),
        });
        actions.push(CodeAction {
            title: format!("{title} (pi-rules override {name} --{key})"),
            kind: Some(CodeActionKind::REFACTOR),
            command: Some(Command {
                title: title.to_owned(),
                command: OVERRIDE_COMMAND.to_owned(),
                arguments: Some(vec![arguments]),
            }),
            ..CodeAction::default()
        });
    }
    actions
}

/// `pi-rules override NAME --project|--user` in a workspace folder: copies the copy that wins
/// below the target layer into it, never replacing a file there. Returns the path written.
pub fn run_override(
    arguments: &[serde_json::Value],
    env: &Env,
    options: &Options,
    workspaces: &[Workspace],
) -> Result<PathBuf, String> {
    let args = arguments
        .first()
        .and_then(serde_json::Value::as_object)
        .ok_or("the override command takes one object: {name, layer, folder}")?;
    let text = |key: &str| args.get(key).and_then(serde_json::Value::as_str);
    let name = text("name").ok_or("the override command needs a `name`")?;
    let target = match text("layer") {
        Some("project") => Layer::Project,
        Some("user") => Layer::User,
        _ => return Err("the override command's `layer` is `project` or `user`".to_owned()),
    };
    let folder = text("folder").map(PathBuf::from);
    let folder = match folder {
        Some(folder) if workspaces.iter().any(|w| w.folder() == folder) => folder,
        Some(folder) => {
            return Err(format!(
                "`{}` is not a workspace folder of this server",
                folder.display()
            ))
        }
        None => workspaces
            .first()
            .map(|w| w.folder().to_path_buf())
            .ok_or("there is no workspace folder")?,
    };
    let message = |err: pi_rules_host::error::Error| err.message().to_owned();
    let session =
        Session::new(&env.with_cwd(folder.clone()), Some(folder), None).map_err(message)?;
    let layers = Layers::read(session, options.package_dir.as_deref(), options.confine);
    match layers.override_rule(name, target, false) {
        Ok(done) => Ok(done.dest),
        Err(OverrideError::Exists { dest, .. }) => {
            Err(format!("`{}` already exists", dest.display()))
        }
        Err(OverrideError::Failed(err)) => Err(message(err)),
    }
}
