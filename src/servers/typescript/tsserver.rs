//! Pulling a file's diagnostics from typescript-language-server's tsserver.
//!
//! typescript-language-server pushes diagnostics only after a debounce of 300–800 ms
//! per change, sends no version with them, and sends nothing at all for a file that
//! was clean and stays clean: a client can only wait out its silence. It also offers
//! `workspace/executeCommand typescript.tsserverRequest`, which passes a request to
//! tsserver as is; tsserver's `syntacticDiagnosticsSync`, `semanticDiagnosticsSync`
//! and `suggestionDiagnosticsSync` answer for one file at once, after every change
//! sent before them. The three answers together are what the server would push
//! (`FileDiagnostics.getDiagnostics` in its source), converted the way it converts
//! them (`toDiagnostic`). No crate speaks tsserver's protocol, hence this module.
//!
//! The server's part is small: a server whose profile asks for this route
//! (`Delivery::TsserverPull`) and whose `initialize` answer [`offered`] the command
//! keeps a [`Route`]; a pull of a file is then the three requests [`Route::start`]
//! gives, their answers go to [`Route::answer`], and [`current`] says which of a
//! file's pull and push stands.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag,
    ExecuteCommandParams, Location, NumberOrString, Position, Range,
};
use serde_json::{Value, json};

use crate::uri;

/// The command typescript-language-server lists in `executeCommandProvider`.
pub const COMMAND: &str = "typescript.tsserverRequest";

/// tsserver's commands, in the order the server's push lists their diagnostics.
pub const KINDS: [&str; 3] = [
    "syntacticDiagnosticsSync",
    "semanticDiagnosticsSync",
    "suggestionDiagnosticsSync",
];

/// Whether an `initialize` result offers [`COMMAND`].
pub fn offered(capabilities: &Value) -> bool {
    capabilities
        .pointer("/executeCommandProvider/commands")
        .and_then(|c| c.as_array())
        .is_some_and(|c| c.iter().any(|c| c.as_str() == Some(COMMAND)))
}

/// The `workspace/executeCommand` parameters asking tsserver `kind` about `path`.
fn request(kind: &str, path: &Path) -> ExecuteCommandParams {
    ExecuteCommandParams {
        command: COMMAND.to_string(),
        arguments: vec![json!(kind), json!({ "file": path.to_string_lossy() })],
        work_done_progress_params: Default::default(),
    }
}

/// The `workspace/executeCommand` parameters asking tsserver to reload its projects
/// from the disk (what an editor's "TypeScript: Reload Project" does), module
/// resolutions included. tsserver sees a file created or deleted behind lspgate's
/// back in its own time, and keeps a module it failed to find as not found until its
/// own watcher fires (mobx in the corpus: three runs after a module was put back, its
/// importers still had "no exported member"); a reload sent now is handled before
/// every request sent after it. tsserver answers nothing to it, so it goes with
/// `expectsResult: false`: otherwise typescript-language-server would wait for that
/// answer, and its queue, which sends nothing while an answer is owed, would stall.
/// typescript-language-server 5.3 then answers with an error (it calls `catch` on
/// the promise such a command has not got) after passing the command on; later
/// releases answer with nothing. Either answer means sent.
pub fn reload_projects() -> ExecuteCommandParams {
    ExecuteCommandParams {
        command: COMMAND.to_string(),
        arguments: vec![
            json!("reloadProjects"),
            json!({}),
            json!({ "expectsResult": false }),
        ],
        work_done_progress_params: Default::default(),
    }
}

/// The pulls through tsserver under way on one server, by file.
#[derive(Debug, Default)]
pub struct Route {
    under_way: HashMap<PathBuf, Parts>,
}

/// What one answer of a pull through tsserver came to.
#[derive(Debug)]
pub enum Answer {
    /// More answers to come, or the answer of a pull since superseded.
    Incomplete,
    /// The pull's three answers are in: the file's diagnostics.
    Complete(Vec<Diagnostic>),
    /// The route does not work here (an older server, a file outside every project):
    /// the server is to wait for pushes, as without it.
    Failed(String),
}

impl Route {
    /// Begin a pull of `path` sent at pool clock `sent_seq`: the requests to send,
    /// with the slot each answer goes to.
    pub fn start(&mut self, path: &Path, sent_seq: u64) -> Vec<(usize, ExecuteCommandParams)> {
        self.under_way
            .insert(path.to_path_buf(), Parts::new(sent_seq));
        KINDS
            .iter()
            .enumerate()
            .map(|(slot, kind)| (slot, request(kind, path)))
            .collect()
    }

    /// The answer (`Err`: an error response's message) for `slot` of the pull of
    /// `path` sent at `sent_seq`.
    pub fn answer(
        &mut self,
        path: &Path,
        sent_seq: u64,
        slot: usize,
        answer: Result<Value, String>,
    ) -> Answer {
        let Some(parts) = self.under_way.get_mut(path) else {
            return Answer::Incomplete;
        };
        if parts.sent_seq != sent_seq {
            return Answer::Incomplete;
        }
        // The first of a pull's answers to fail ends it: the others are ignored.
        let diagnostics = match answer.and_then(|result| diagnostics(&result)) {
            Ok(diagnostics) => diagnostics,
            Err(why) => {
                self.under_way.remove(path);
                return Answer::Failed(why);
            }
        };
        match parts.add(slot, diagnostics) {
            Some(all) => {
                self.under_way.remove(path);
                Answer::Complete(all)
            }
            None => Answer::Incomplete,
        }
    }

    /// Forget the pulls under way (the server died).
    pub fn clear(&mut self) {
        self.under_way.clear();
    }
}

/// Which of a file's pull answer and push stands, when it has both:
/// typescript-language-server's pull and push are two routes to the same answer, so
/// the newer counts, not both. A pull sent after the file's last change (`changed_at`,
/// the pool clock; `None` when it is not open) is the answer for its text; a push
/// arriving after it may come from a check that started before the change. Each of
/// `pulled` and `pushed` is the pool clock (the pull's sending, the push's arrival)
/// with the list.
pub fn current<'a>(
    pulled: Option<(u64, &'a [Diagnostic])>,
    pushed: Option<(u64, &'a [Diagnostic])>,
    changed_at: Option<u64>,
) -> Option<&'a [Diagnostic]> {
    let ((sent_seq, pulled), (seq, pushed)) = (pulled?, pushed?);
    let pull_is_current = sent_seq > seq || changed_at.is_some_and(|c| sent_seq > c);
    Some(if pull_is_current { pulled } else { pushed })
}

/// The diagnostics in one answer (a tsserver response: `{success, body, message}`).
pub fn diagnostics(answer: &Value) -> Result<Vec<Diagnostic>, String> {
    if answer.get("success").and_then(|s| s.as_bool()) == Some(false) {
        let why = answer
            .get("message")
            .and_then(|m| m.as_str())
            .unwrap_or("no reason given");
        return Err(format!("tsserver said: {why}"));
    }
    let Some(body) = answer.get("body").and_then(|b| b.as_array()) else {
        return Err("tsserver's answer has no diagnostics list".into());
    };
    Ok(body.iter().filter_map(convert).collect())
}

/// The three answers of one pull, as they come in.
#[derive(Debug, Clone)]
struct Parts {
    sent_seq: u64,
    answers: [Option<Vec<Diagnostic>>; 3],
}

impl Parts {
    fn new(sent_seq: u64) -> Parts {
        Parts {
            sent_seq,
            answers: [None, None, None],
        }
    }

    /// Record the answer for `KINDS[slot]`; once all three are in, their diagnostics
    /// in the server's order.
    fn add(&mut self, slot: usize, diagnostics: Vec<Diagnostic>) -> Option<Vec<Diagnostic>> {
        if let Some(s) = self.answers.get_mut(slot) {
            *s = Some(diagnostics);
        }
        if self.answers.iter().any(Option::is_none) {
            return None;
        }
        Some(
            self.answers
                .iter_mut()
                .flat_map(|a| a.take().unwrap_or_default())
                .collect(),
        )
    }
}

/// One tsserver diagnostic as typescript-language-server converts it: 1-based line
/// and UTF-16 offset to 0-based positions, category to severity ("suggestion" is a
/// hint, anything unknown an error), source "typescript" unless given, tags always
/// present (we declare tag support), related information when given.
fn convert(d: &Value) -> Option<Diagnostic> {
    let range = range(d.get("start")?, d.get("end")?)?;
    let severity = match d.get("category").and_then(|c| c.as_str()) {
        Some("warning") => DiagnosticSeverity::WARNING,
        Some("suggestion") => DiagnosticSeverity::HINT,
        _ => DiagnosticSeverity::ERROR,
    };
    let code = match d.get("code") {
        Some(Value::Number(n)) => n.as_i64().map(|n| NumberOrString::Number(n as i32)),
        Some(Value::String(s)) => Some(NumberOrString::String(s.clone())),
        _ => None,
    };
    let flag = |k: &str| d.get(k).and_then(|v| v.as_bool()) == Some(true);
    let mut tags = Vec::new();
    if flag("reportsUnnecessary") {
        tags.push(DiagnosticTag::UNNECESSARY);
    }
    if flag("reportsDeprecated") {
        tags.push(DiagnosticTag::DEPRECATED);
    }
    let related = d
        .get("relatedInformation")
        .and_then(|r| r.as_array())
        .map(|items| items.iter().filter_map(related).collect());
    Some(Diagnostic {
        range,
        severity: Some(severity),
        code,
        code_description: None,
        source: Some(
            d.get("source")
                .and_then(|s| s.as_str())
                .filter(|s| !s.is_empty())
                .unwrap_or("typescript")
                .to_string(),
        ),
        message: d.get("text")?.as_str()?.to_string(),
        related_information: related,
        tags: Some(tags),
        data: None,
    })
}

/// A related location; the server drops those without a span.
fn related(item: &Value) -> Option<DiagnosticRelatedInformation> {
    let span = item.get("span")?;
    let file = span.get("file")?.as_str()?;
    Some(DiagnosticRelatedInformation {
        location: Location {
            uri: uri::from_path(Path::new(file)),
            range: range(span.get("start")?, span.get("end")?)?,
        },
        message: item.get("message")?.as_str()?.to_string(),
    })
}

fn range(start: &Value, end: &Value) -> Option<Range> {
    Some(Range {
        start: position(start)?,
        end: position(end)?,
    })
}

/// tsserver's `{line, offset}`, both 1-based; offsets count UTF-16 units.
fn position(p: &Value) -> Option<Position> {
    let line = p.get("line")?.as_u64()?;
    let offset = p.get("offset")?.as_u64()?;
    Some(Position {
        line: u32::try_from(line.saturating_sub(1)).ok()?,
        character: u32::try_from(offset.saturating_sub(1)).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_as_the_server_does() {
        let answer = json!({
            "seq": 0, "type": "response", "command": "suggestionDiagnosticsSync",
            "success": true,
            "body": [
                {"start": {"line": 1, "offset": 23}, "end": {"line": 1, "offset": 27},
                 "text": "'name' is declared but its value is never read.",
                 "code": 6133, "category": "suggestion", "reportsUnnecessary": true},
                {"start": {"line": 3, "offset": 7}, "end": {"line": 3, "offset": 12},
                 "text": "Type 'string' is not assignable to type 'number'.",
                 "code": 2322, "category": "error",
                 "relatedInformation": [
                    {"span": {"start": {"line": 2, "offset": 1}, "end": {"line": 2, "offset": 4},
                              "file": "/w/b.ts"}, "message": "declared here", "category": "message",
                     "code": 2728},
                    {"message": "no span", "category": "message", "code": 1}
                 ]}
            ]
        });
        let got = diagnostics(&answer).expect("converted");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].severity, Some(DiagnosticSeverity::HINT));
        assert_eq!(got[0].tags, Some(vec![DiagnosticTag::UNNECESSARY]));
        assert_eq!(got[0].range.start, Position::new(0, 22));
        assert_eq!(got[0].code, Some(NumberOrString::Number(6133)));
        assert_eq!(got[1].severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(got[1].tags, Some(vec![]));
        assert_eq!(got[1].source.as_deref(), Some("typescript"));
        let related = got[1].related_information.as_ref().expect("related");
        assert_eq!(related.len(), 1, "the one without a span is dropped");
        assert_eq!(related[0].location.uri.as_str(), "file:///w/b.ts");
        assert_eq!(related[0].location.range.end, Position::new(1, 3));
    }

    #[test]
    fn a_failed_request_is_an_error_not_an_empty_answer() {
        let answer = json!({"success": false, "message": "No Project."});
        assert!(
            diagnostics(&answer)
                .expect_err("failed")
                .contains("No Project.")
        );
        assert!(diagnostics(&json!(null)).is_err());
    }

    #[test]
    fn parts_complete_in_the_servers_order() {
        let d = |m: &str| Diagnostic {
            message: m.into(),
            ..Diagnostic::default()
        };
        let mut parts = Parts::new(7);
        assert!(parts.add(2, vec![d("suggestion")]).is_none());
        assert!(parts.add(0, vec![]).is_none());
        let all = parts.add(1, vec![d("semantic")]).expect("complete");
        let messages: Vec<&str> = all.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["semantic", "suggestion"]);
    }

    fn answer(messages: &[&str]) -> Result<Value, String> {
        let body: Vec<Value> = messages
            .iter()
            .map(|m| json!({"start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 2}, "text": m}))
            .collect();
        Ok(json!({"success": true, "body": body}))
    }

    #[test]
    fn a_route_completes_a_pull_once_its_three_answers_are_in() {
        let path = Path::new("/w/a.ts");
        let mut route = Route::default();
        let requests = route.start(path, 4);
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[1].1.arguments[0], json!("semanticDiagnosticsSync"));
        assert!(matches!(
            route.answer(path, 4, 0, answer(&[])),
            Answer::Incomplete
        ));
        assert!(matches!(
            route.answer(path, 4, 2, answer(&["hint"])),
            Answer::Incomplete
        ));
        match route.answer(path, 4, 1, answer(&["error"])) {
            Answer::Complete(all) => {
                let messages: Vec<&str> = all.iter().map(|d| d.message.as_str()).collect();
                assert_eq!(messages, ["error", "hint"]);
            }
            other => panic!("not complete: {other:?}"),
        }
    }

    #[test]
    fn an_answer_to_a_superseded_pull_is_dropped_and_a_failure_ends_the_route() {
        let path = Path::new("/w/a.ts");
        let mut route = Route::default();
        route.start(path, 4);
        route.start(path, 8);
        for slot in 0..3 {
            assert!(matches!(
                route.answer(path, 4, slot, answer(&["old"])),
                Answer::Incomplete
            ));
        }
        let failed = route.answer(path, 8, 0, Err("no handler".into()));
        assert!(matches!(failed, Answer::Failed(why) if why == "no handler"));
        assert!(
            matches!(route.answer(path, 8, 1, answer(&[])), Answer::Incomplete),
            "forgotten"
        );
    }

    #[test]
    fn the_newer_of_a_pull_and_a_push_stands() {
        let d = |m: &str| {
            vec![Diagnostic {
                message: m.into(),
                ..Diagnostic::default()
            }]
        };
        let (pulled, pushed) = (d("pulled"), d("pushed"));
        let first = |sent_seq, seq, changed| {
            current(Some((sent_seq, &pulled)), Some((seq, &pushed)), changed)
                .map(|l| l[0].message.clone())
        };
        assert_eq!(first(5, 3, None).as_deref(), Some("pulled"));
        assert_eq!(first(5, 7, None).as_deref(), Some("pushed"));
        assert_eq!(
            first(5, 7, Some(4)).as_deref(),
            Some("pulled"),
            "sent after the change"
        );
        assert!(current(None, Some((1, &pushed)), None).is_none());
    }

    #[test]
    fn offered_reads_the_command_list() {
        let caps = json!({"executeCommandProvider": {"commands": ["_x", COMMAND]}});
        assert!(offered(&caps));
        assert!(!offered(
            &json!({"executeCommandProvider": {"commands": []}})
        ));
        assert!(!offered(&json!({})));
    }
}
