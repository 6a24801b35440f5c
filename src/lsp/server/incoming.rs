//! What a server sends: its notifications recorded, its requests answered at once (an
//! unknown one with `MethodNotFound`, never silence), the answers to our requests put
//! where they belong.
//!
//! Messages are matched on `lsp_types`' method traits. Where `lsp_types`' parameter
//! type is stricter than what is read here, the fields are read one by one, and the
//! comment says what the strict form would cost.

use std::path::PathBuf;
use std::time::Instant;

use lsp_server::{Notification, Request, Response, ResponseError};
use lsp_types::notification::{
    LogMessage, Notification as _, Progress as ProgressNotification, PublishDiagnostics,
    ShowMessage,
};
use lsp_types::request::{
    ApplyWorkspaceEdit, CodeLensRefresh, InlayHintRefreshRequest, InlineValueRefreshRequest,
    RegisterCapability, Request as _, SemanticTokensRefresh, ShowMessageRequest,
    UnregisterCapability, WorkDoneProgressCreate, WorkspaceConfiguration,
    WorkspaceDiagnosticRefresh, WorkspaceFoldersRequest,
};
use lsp_types::{ApplyWorkspaceEditResponse, RegistrationParams, Url, WorkspaceFolder};
use serde::Deserialize;
use serde_json::Value;

use super::{Pending, Progress, Server, initialize};
use crate::lsp::diagnostics::{self, Published, Pulled};
use crate::lsp::protocol;
use crate::lsp::uri;
use crate::servers::Quirks;
use crate::servers::quirks::RoutedAnswer;

pub(super) fn notification(server: &mut Server, n: Notification, clock: u64) {
    match n.method.as_str() {
        PublishDiagnostics::METHOD => publish(server, &n.params, clock),
        ProgressNotification::METHOD => progress(server, &n.params, clock),
        LogMessage::METHOD | ShowMessage::METHOD => {
            // Read by hand: `lsp_types`' `MessageType` does not give its number back.
            let level = n.params.get("type").and_then(Value::as_i64).unwrap_or(4) as i32;
            let text = n
                .params
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("");
            if n.method == LogMessage::METHOD {
                server.log(level, text.to_string());
            } else {
                server.show(level, text);
            }
        }
        // A server's own (clangd's file status, rust-analyzer's server status).
        method => {
            server.quirks.notification(method, &n.params, clock);
        }
    }
}

/// `textDocument/publishDiagnostics`, read by hand: as `lsp_types`'
/// `PublishDiagnosticsParams` one malformed diagnostic would lose the whole list.
fn publish(server: &mut Server, params: &Value, clock: u64) {
    let Some(path) = params
        .get("uri")
        .and_then(Value::as_str)
        .and_then(|u| Url::parse(u).ok())
        .and_then(|u| uri::to_path(&u))
    else {
        return;
    };
    let version = params
        .get("version")
        .and_then(Value::as_i64)
        .map(|v| v as i32);
    let list = diagnostics::parse(params.get("diagnostics").unwrap_or(&Value::Null));
    let list = server.in_utf16(&path, list);
    let held = server
        .diagnostics
        .get(&path)
        .and_then(|d| d.pushed.as_ref())
        .map(|p| (p.seq, p.diagnostics.as_slice()));
    if server.quirks.stale_push(&server.spec.wait, held, &list) {
        return;
    }
    server.diagnostics.push(
        path,
        Published {
            diagnostics: list,
            version,
            seq: clock,
            at: Instant::now(),
        },
    );
}

/// `$/progress`, read by hand: a `begin` that failed to parse as `lsp_types`'
/// `WorkDoneProgress` as a whole (a fractional percentage, a missing title) would
/// leave a server that is working looking idle.
fn progress(server: &mut Server, params: &Value, clock: u64) {
    let token = token_key(params.get("token"));
    let text = |k: &str| {
        params
            .pointer(&format!("/value/{k}"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let percentage = params
        .pointer("/value/percentage")
        .and_then(Value::as_u64)
        .map(|p| p as u32);
    let kind = params.pointer("/value/kind").and_then(Value::as_str);
    if server.quirks.on_progress(
        &token,
        kind.unwrap_or_default(),
        text("title").as_deref(),
        std::time::Instant::now(),
        clock,
    ) {
        server.send_check_request();
    }
    match kind {
        Some("begin") => {
            let progress = Progress {
                title: text("title").unwrap_or_default(),
                message: text("message"),
                percentage,
            };
            server.progress.insert(token, progress);
        }
        Some("report") => {
            if let Some(p) = server.progress.get_mut(&token) {
                if let Some(m) = text("message") {
                    p.message = Some(m);
                }
                if let Some(pc) = percentage {
                    p.percentage = Some(pc);
                }
            }
        }
        Some("end") => {
            server.progress_ended |= server.progress.remove(&token).is_some();
        }
        _ => {}
    }
}

/// A progress token as a map key: `"5"` and `5` are one token (servers create with
/// one and report with the other no more than they mean two).
fn token_key(token: Option<&Value>) -> String {
    match token {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// Answer a request from the server. Answers go out at once, even before
/// `initialize` returns.
pub(super) fn request(server: &mut Server, req: Request, clock: u64) {
    let Request { id, method, params } = req;
    let reply = match method.as_str() {
        WorkspaceConfiguration::METHOD => {
            let answers = configuration_sections(&params)
                .into_iter()
                .map(|section| server.spec.setting(section.as_deref()))
                .collect();
            protocol::reply::<WorkspaceConfiguration>(id, answers)
        }
        RegisterCapability::METHOD => {
            let registrations = protocol::params::<RegistrationParams>(&params)
                .map(|p| p.registrations)
                .unwrap_or_default();
            for reg in registrations {
                if reg.method == lsp_types::notification::DidSaveTextDocument::METHOD {
                    server.wants_save = true;
                }
                if reg.method == lsp_types::notification::DidChangeWatchedFiles::METHOD {
                    server.disk.through_us = true;
                }
                server.registrations.insert(reg.id, reg.method);
            }
            server.update_pull();
            // A null success: servers built on vscode-languageserver-node treat an
            // error here as fatal.
            protocol::reply::<RegisterCapability>(id, ())
        }
        UnregisterCapability::METHOD => {
            for unregistration in protocol::params::<Unregistrations>(&params)
                .map(|p| p.unregisterations)
                .unwrap_or_default()
            {
                server.registrations.remove(&unregistration.id);
            }
            server.update_pull();
            protocol::reply::<UnregisterCapability>(id, ())
        }
        WorkDoneProgressCreate::METHOD => {
            if let Some(token) = Quirks::progress_created(&server.spec.wait, &params) {
                server.progress.entry(token).or_default();
            }
            protocol::reply::<WorkDoneProgressCreate>(id, ())
        }
        WorkspaceFoldersRequest::METHOD => {
            let folder = WorkspaceFolder {
                uri: uri::from_path(&server.root),
                name: server
                    .root
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default(),
            };
            protocol::reply::<WorkspaceFoldersRequest>(id, Some(vec![folder]))
        }
        WorkspaceDiagnosticRefresh::METHOD => {
            // Means: pull again. The wait re-pulls files pulled before this clock.
            server.clocks.refresh_seq = clock;
            if server.spec.wait.refresh_is_news {
                server.diagnostics.forget_views();
            }
            protocol::reply::<WorkspaceDiagnosticRefresh>(id, ())
        }
        ShowMessageRequest::METHOD => {
            // Read by hand, as `window/showMessage` is.
            if let Some(m) = params.get("message").and_then(Value::as_str) {
                let level = params.get("type").and_then(Value::as_i64).unwrap_or(3) as i32;
                server.show(level, m);
            }
            protocol::reply::<ShowMessageRequest>(id, None)
        }
        ApplyWorkspaceEdit::METHOD => {
            let answer = ApplyWorkspaceEditResponse {
                applied: false,
                failure_reason: Some("lspgate applies no server edits".into()),
                failed_change: None,
            };
            protocol::reply::<ApplyWorkspaceEdit>(id, answer)
        }
        SemanticTokensRefresh::METHOD
        | InlayHintRefreshRequest::METHOD
        | InlineValueRefreshRequest::METHOD
        | CodeLensRefresh::METHOD => protocol::reply::<SemanticTokensRefresh>(id, ()),
        _ => protocol::reply_error(
            id,
            protocol::METHOD_NOT_FOUND,
            format!("unhandled method {method}"),
        ),
    };
    server.transport.send(reply);
}

/// The `section` of each item of a `workspace/configuration` request: exactly one
/// answer is owed per item. Read leniently, not as `lsp_types`' `ConfigurationParams`,
/// whose `scopeUri` is a `Url`: one odd URI would fail the whole list, and the server
/// would get no answers instead of one per item.
fn configuration_sections(params: &Value) -> Vec<Option<String>> {
    #[derive(Deserialize)]
    struct Item {
        #[serde(default)]
        section: Option<String>,
    }
    let items = params.get("items").and_then(Value::as_array);
    items
        .into_iter()
        .flatten()
        .map(|item| Item::deserialize(item).ok().and_then(|i| i.section))
        .collect()
}

/// `client/unregisterCapability`'s parameters. The spec misspells the field
/// `unregisterations` (and `lsp_types` keeps the spelling); a server that spells it
/// right is understood too.
#[derive(Deserialize)]
struct Unregistrations {
    #[serde(alias = "unregistrations")]
    unregisterations: Vec<lsp_types::Unregistration>,
}

/// The answer to a request we sent.
pub(super) fn response(server: &mut Server, resp: Response) {
    let Some(pending) = server.requests.pending.remove(&resp.id) else {
        return;
    };
    match pending {
        Pending::Initialize => match resp.response_result {
            Ok(result) => initialize::answered(server, &result),
            Err(e) => server.die(format!("initialize failed: {}", e.message)),
        },
        Pending::Pull { path, sent_seq } => pulled(server, path, sent_seq, resp.response_result),
        Pending::RoutedPull {
            path,
            sent_seq,
            slot,
        } => {
            let answer = resp.response_result.map_err(|e| e.message);
            let trial = server.trials.contains(&path);
            match server
                .quirks
                .routed_answer(&path, sent_seq, slot, answer, trial)
            {
                RoutedAnswer::Incomplete => {}
                RoutedAnswer::Complete(diagnostics) => {
                    server.pulls_in_flight.remove(&path);
                    server.trials.remove(&path);
                    let view = server.view_at(sent_seq);
                    server
                        .diagnostics
                        .pulled(path, Pulled::answer(diagnostics, sent_seq, view));
                }
                RoutedAnswer::Failed(why) if trial => failed_trial(server, path, &why),
                RoutedAnswer::Failed(why) => {
                    server.log(2, format!("lspgate: {}", Quirks::route_failed(&path, &why)));
                    server.static_pull = false;
                    server.update_pull();
                    server.pulls_in_flight.clear();
                }
            }
        }
        Pending::Reload | Pending::Shutdown => {}
    }
}

/// The answer to a `textDocument/diagnostic` pull of `path` sent at `sent_seq`, read
/// by hand for the reason a publish is.
fn pulled(server: &mut Server, path: PathBuf, sent_seq: u64, answer: Result<Value, ResponseError>) {
    server.pulls_in_flight.remove(&path);
    let trial = server.trials.remove(&path);
    match answer {
        // A full report has `items`; an "unchanged" one keeps what we had.
        Ok(result) => match result.get("items") {
            Some(items) => {
                let list = server.in_utf16(&path, diagnostics::parse(items));
                let view = server.view_at(sent_seq);
                server
                    .diagnostics
                    .pulled(path, Pulled::answer(list, sent_seq, view));
            }
            None => {
                let view = server.view_at(sent_seq);
                server.diagnostics.pull_unchanged(&path, sent_seq, view);
            }
        },
        Err(e) if trial => failed_trial(server, path, &e.message),
        Err(e) => {
            // ServerCancelled / ContentModified ask for a retry; the wait re-pulls a
            // file whose pull is older than its change.
            server.log(
                2,
                format!("lspgate: pull of {} failed: {}", path.display(), e.message),
            );
            let retry = protocol::asks_to_retry(e.code)
                || server.quirks.pull_error_asks_to_retry(&e.message);
            if !retry {
                // A hard error: the server answered and said nothing of the file, so
                // the wait ends and the file is unknown. Taken for an empty answer,
                // it passed an edit that added an error as clean (exit 0).
                let why = format!("the server failed the pull: {}", e.message);
                server.diagnostics.pull_failed(path, sent_seq, why);
            }
        }
    }
}

/// A pull the daemon tried between runs failed (tsserver has the file in no project it
/// loaded): the file is not one a pull can answer for, so what an earlier pull said of
/// it goes too, and a run opens it as it would without.
fn failed_trial(server: &mut Server, path: PathBuf, why: &str) {
    server.log(
        3,
        format!("lspgate: {} cannot be pulled now: {why}", path.display()),
    );
    server.pulls_in_flight.remove(&path);
    server.trials.remove(&path);
    server.diagnostics.forget_pull(&path);
}
