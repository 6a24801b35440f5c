//! The `initialize` exchange: the parameters lspgate sends (honest client
//! capabilities) and what it takes from the answer.

use std::path::Path;
use std::time::Instant;

use lsp_types::WorkspaceFolder;
use lsp_types::notification::Initialized;
use lsp_types::{ClientCapabilities, ClientInfo, InitializeParams, InitializedParams};
use serde_json::{Value, json};

use super::{Lifecycle, Server};
use crate::lsp::encoding;
use crate::lsp::protocol;
use crate::lsp::uri;
use crate::servers::{Quirks, ServerSpec};

/// The `initialize` parameters for `spec` at `root`.
pub(super) fn params(spec: &ServerSpec, root: &Path) -> Value {
    let root_uri = uri::from_path(root);
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // rootUri and rootPath are deprecated but still what older servers read.
    #[allow(deprecated)]
    let params = InitializeParams {
        process_id: Some(std::process::id()),
        root_path: Some(root.to_string_lossy().to_string()),
        root_uri: Some(root_uri.clone()),
        initialization_options: spec.initialization_options.clone(),
        capabilities: ClientCapabilities::default(),
        trace: None,
        workspace_folders: Some(vec![WorkspaceFolder {
            uri: root_uri,
            name,
        }]),
        client_info: Some(ClientInfo {
            name: "lspgate".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        locale: None,
        work_done_progress_params: Default::default(),
    };
    let mut params = serde_json::to_value(params).unwrap_or_default();
    params["capabilities"] = capabilities(spec);
    params
}

/// The client capabilities, written out rather than built as `lsp_types`'
/// `ClientCapabilities`: lsp_types 0.95.1 names the workspace capability `diagnostic`
/// where the spec says `diagnostics` (a server would never learn that we take
/// `workspace/diagnostic/refresh`), and has a server's own capabilities (offered by
/// `servers::quirks`) only behind its "proposed" feature.
fn capabilities(spec: &ServerSpec) -> Value {
    let mut capabilities = json!({
        // UTF-8 first: servers that count in bytes need not convert; whatever they
        // choose is converted back to UTF-16 on arrival (encoding.rs).
        "general": { "positionEncodings": ["utf-8", "utf-16"] },
        "window": { "workDoneProgress": true, "showMessage": {} },
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "didChangeWatchedFiles": { "dynamicRegistration": true, "relativePatternSupport": true },
            "didChangeConfiguration": { "dynamicRegistration": true },
            "diagnostics": { "refreshSupport": true },
            "workspaceEdit": { "documentChanges": true },
        },
        "textDocument": {
            "synchronization": { "dynamicRegistration": true, "didSave": true, "willSave": false },
            "publishDiagnostics": {
                "relatedInformation": true,
                "versionSupport": true,
                "codeDescriptionSupport": true,
                "dataSupport": true,
                "tagSupport": { "valueSet": [1, 2] },
            },
            "diagnostic": { "dynamicRegistration": true, "relatedDocumentSupport": false },
        },
    });
    Quirks::offer(&spec.wait, &mut capabilities);
    capabilities
}

/// The server answered `initialize` with `result`: take its encoding and how it
/// gives diagnostics, send `initialized`, then what was held back.
///
/// Read field by field rather than as `lsp_types`' `InitializeResult`: one capability
/// that type cannot parse (a newer server's, or an odd one) must not cost the others.
pub(super) fn answered(server: &mut Server, result: &Value) {
    let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
    server.encoding = encoding::Encoding::chosen(result);
    // Pulls of its own, or else (a server with a route past the protocol) routed.
    let pulls = capabilities
        .get("diagnosticProvider")
        .is_some_and(|v| !v.is_null())
        || server.quirks.route_pulls(&server.spec.wait, &capabilities);
    if pulls {
        server.static_pull = true;
        server.pull = true;
    }
    server.lifecycle = Lifecycle::Ready;
    server.times.ready_at = Some(Instant::now());
    server
        .transport
        .send(protocol::notification::<Initialized>(InitializedParams {}));
    for msg in std::mem::take(&mut server.held) {
        server.transport.send(msg);
    }
}
