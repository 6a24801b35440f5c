//! Typed messages: requests and notifications built from `lsp_types`' method traits,
//! so that a method's name, its parameters and its result cannot drift apart (as
//! helix-lsp's `call::<R>` and `notify::<N>` do), and the JSON-RPC error codes by name.
//!
//! What lspgate sends is always typed here. What servers send is matched on the same
//! traits' `METHOD`s; its parameters are read typed where `lsp_types` is no stricter
//! than what the reader needs, and field by field where one odd field would otherwise
//! cost the whole message (a publish, a progress report, an `initialize` answer: see
//! the readers in `server`). Server-specific extensions define their own
//! `Notification` types in their files (`clangd`, `rust_analyzer`).

use lsp_server::{ErrorCode, Message, Notification as RawNotification, Request as RawRequest};
use lsp_server::{RequestId, Response};
use lsp_types::notification::Notification;
use lsp_types::request::Request;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The method is not one we answer: every unknown request gets this, never silence.
pub const METHOD_NOT_FOUND: i32 = ErrorCode::MethodNotFound as i32;
/// The document changed under a request; the spec asks the client to retry.
pub const CONTENT_MODIFIED: i32 = ErrorCode::ContentModified as i32;
/// The server cancelled a request it declared cancellable; retried like the above.
pub const SERVER_CANCELLED: i32 = ErrorCode::ServerCancelled as i32;

/// Whether an error answer asks for the request again rather than saying it failed.
pub fn asks_to_retry(code: i32) -> bool {
    code == CONTENT_MODIFIED || code == SERVER_CANCELLED
}

/// The request `R` with `params`.
pub fn request<R: Request>(id: RequestId, params: R::Params) -> Message {
    Message::Request(RawRequest {
        id,
        method: R::METHOD.to_string(),
        params: to_params(&params),
    })
}

/// The request `R` with parameters written out by hand, for the one message whose
/// parameters `lsp_types` cannot express as sent (`initialize`: see its builder).
pub fn request_untyped<R: Request>(id: RequestId, params: Value) -> Message {
    Message::Request(RawRequest {
        id,
        method: R::METHOD.to_string(),
        params,
    })
}

/// The notification `N` with `params`.
pub fn notification<N: Notification>(params: N::Params) -> Message {
    Message::Notification(RawNotification {
        method: N::METHOD.to_string(),
        params: to_params(&params),
    })
}

/// The notification `method` with `params` built elsewhere (a server's own
/// extension, typed in its family's module: `servers::quirks`), written out as
/// [`notification`] writes typed ones.
pub fn notification_raw(method: &str, params: Value) -> Message {
    Message::Notification(RawNotification {
        method: method.to_string(),
        params: to_params(&params),
    })
}

/// The answer to a request `R` from a server.
pub fn reply<R: Request>(id: RequestId, result: R::Result) -> Message {
    Message::Response(Response::new_ok(id, result))
}

/// An error answer to a request from a server.
pub fn reply_error(id: RequestId, code: i32, message: String) -> Message {
    Message::Response(Response::new_err(id, code, message))
}

/// The parameters of a message from a server, as `T`; `None` when they do not parse.
pub fn params<T: DeserializeOwned>(params: &Value) -> Option<T> {
    T::deserialize(params).ok()
}

/// Parameters as JSON. Top-level null fields are left out: `lsp_types` 0.95.1 writes
/// some absent optional fields as null (`DocumentDiagnosticParams`' `identifier` and
/// `previousResultId`), which the spec does not allow for an optional property and
/// which lspgate never sent before it typed its messages. A null result (`()`, as
/// `shutdown` and `exit` take) stays null, and `lsp_server` then writes no `params`
/// at all (tsgo rejects `"params": null` on shutdown).
fn to_params<P: serde::Serialize>(params: &P) -> Value {
    let mut value = serde_json::to_value(params).unwrap_or_default();
    if let Value::Object(fields) = &mut value {
        fields.retain(|_, v| !v.is_null());
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::request::{DocumentDiagnosticRequest, Shutdown};
    use lsp_types::{DocumentDiagnosticParams, TextDocumentIdentifier, Url};

    fn body(msg: &Message) -> Value {
        serde_json::to_value(msg).unwrap_or_default()
    }

    #[test]
    fn a_pull_sends_only_the_document() {
        let uri = Url::parse("file:///w/a.py").unwrap_or_else(|_| unreachable!());
        let params = DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier { uri },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: Default::default(),
            partial_result_params: Default::default(),
        };
        let msg = request::<DocumentDiagnosticRequest>(RequestId::from(3), params);
        assert_eq!(
            body(&msg),
            serde_json::json!({
                "id": 3, "method": "textDocument/diagnostic",
                "params": { "textDocument": { "uri": "file:///w/a.py" } },
            })
        );
    }

    #[test]
    fn shutdown_has_no_params_at_all() {
        let msg = request::<Shutdown>(RequestId::from(9), ());
        assert_eq!(
            body(&msg),
            serde_json::json!({ "id": 9, "method": "shutdown" })
        );
    }

    #[test]
    fn error_codes_are_the_specs() {
        assert_eq!(METHOD_NOT_FOUND, -32601);
        assert_eq!(
            i64::from(CONTENT_MODIFIED),
            lsp_types::error_codes::CONTENT_MODIFIED
        );
        assert_eq!(
            i64::from(SERVER_CANCELLED),
            lsp_types::error_codes::SERVER_CANCELLED
        );
        assert!(asks_to_retry(CONTENT_MODIFIED) && !asks_to_retry(METHOD_NOT_FOUND));
    }
}
