//! What pyright (and basedpyright, its fork) asks of a client when it analyses its
//! whole workspace (`Delivery::WorkspaceAnalysis`, its entries in `servers`): its
//! publishes are the answer, so it must not be offered pulls, and its analysis is
//! under way from the moment it creates the progress token that reports it. (The
//! publishes it owes after a change are the diagnostics store's: `diagnostics`.)

use lsp_types::{NumberOrString, WorkDoneProgressCreateParams};
use serde::Deserialize;
use serde_json::Value;

/// Take the pull capability out of the client's: pyright stops publishing once
/// pulls are offered, and in workspace mode its publishes are the whole point.
pub fn withhold_pull_capability(capabilities: &mut Value) {
    if let Some(text_document) = capabilities
        .pointer_mut("/textDocument")
        .and_then(Value::as_object_mut)
    {
        text_document.remove("diagnostic");
    }
}

/// The token of a `window/workDoneProgress/create`, to count as progress under way
/// at once. pyright creates the token of a re-analysis in the same burst as its first
/// publishes, but begins it only after the answer has come back through its event
/// loop, one or more analysis slices (each up to seconds) later: the analysis is under
/// way from the create on. The key is the one `$/progress` gives the same token.
pub fn analysis_token(params: &Value) -> String {
    WorkDoneProgressCreateParams::deserialize(params)
        .ok()
        .map(|p| match p.token {
            NumberOrString::String(s) => s,
            NumberOrString::Number(n) => n.to_string(),
        })
        .unwrap_or_default()
}

/// pyright (and basedpyright) go on with their defaults when a configuration file
/// does not parse, and say so only in an error-level `window/logMessage`: `Config
/// file "…/pyrightconfig.json" could not be parsed. Verify that format is correct.`
/// (its `configOptions` reading; the same for a `pyproject.toml`). The message, if
/// the server logged one.
pub fn unparsed_config(logs: &std::collections::VecDeque<(i32, String)>) -> Option<&str> {
    const ERROR: i32 = 1;
    logs.iter()
        .find(|(level, text)| *level == ERROR && text.contains("could not be parsed"))
        .map(|(_, text)| text.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_pull_capability_is_withheld() {
        let mut capabilities = json!({
            "textDocument": { "diagnostic": {}, "publishDiagnostics": {} },
            "workspace": { "diagnostics": { "refreshSupport": true } },
        });
        withhold_pull_capability(&mut capabilities);
        assert_eq!(
            capabilities,
            json!({
                "textDocument": { "publishDiagnostics": {} },
                "workspace": { "diagnostics": { "refreshSupport": true } },
            })
        );
    }

    #[test]
    fn a_created_token_has_the_key_its_progress_will_have() {
        assert_eq!(analysis_token(&json!({ "token": "a-1" })), "a-1");
        assert_eq!(analysis_token(&json!({ "token": 5 })), "5");
        assert_eq!(analysis_token(&json!({})), "");
    }
}
