//! rust-analyzer's `experimental/serverStatus`: whether it is quiescent, that is done
//! loading and indexing the workspace. While it is not, what it publishes may be
//! incomplete, so a server that said `quiescent: false` is not settled
//! (`Server::settled_after`). It sends the notification only to a client that offers
//! `experimental.serverStatusNotification` ([`offer_server_status`]).

use lsp_types::notification::Notification;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `experimental/serverStatus`.
pub enum ServerStatusNotification {}

impl Notification for ServerStatusNotification {
    type Params = ServerStatusParams;
    const METHOD: &'static str = "experimental/serverStatus";
}

/// The parameters as rust-analyzer's `lsp_ext` defines them; only `quiescent` is read.
/// Every field is optional here: a status without `quiescent` says nothing about it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerStatusParams {
    #[serde(default)]
    pub health: Option<String>,
    #[serde(default)]
    pub quiescent: Option<bool>,
    #[serde(default)]
    pub message: Option<String>,
}

/// Ask for `experimental/serverStatus` in the client's capabilities.
pub fn offer_server_status(capabilities: &mut Value) {
    capabilities["experimental"] = json!({ "serverStatusNotification": true });
}
