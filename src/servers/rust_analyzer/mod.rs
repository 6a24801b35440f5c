//! rust-analyzer: its entry, its waits, and what an untrusted project may set for it.

pub mod protocol;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Allow, AllowList, Delivery, ServerSpec, WaitProfile, entry, languages, strs};

pub(super) const RUST_ANALYZER: &str = "rust-analyzer";

pub(super) fn rust_analyzer() -> ServerSpec {
    ServerSpec {
        root_markers: strs(&["Cargo.toml"]),
        // `check.allTargets` on, as rust-analyzer has it in an editor and as
        // `cargo check --all-targets`: a break in a test of another file is the edit's
        // too, and the check is its dependents' word. (It was off while its pushes out
        // of order looked like a check dropping results, more often with two targets:
        // `protocol::Check::stale`.) A project may turn it off.
        // `cachePriming` off: it indexes every dependency for completion, nothing a
        // check asks for, and its first check waits for it (1.9 s of a cold run on
        // itertools). `numThreads` 1: its pushes and its answers to pulls are tasks
        // of one worker pool, and with one thread an answer to a pull sent after the
        // check's end comes after every push of that check (the pushes go out from
        // the task, the answer through the main loop), so that answer ends the wait
        // with no silence after it (`protocol::Check::settled_after`). With
        // two threads a push finished after the answer in 2 of 52 runs of the
        // rust-analyzer tests. Measured on itertools, side by side: warm 0.47 s ->
        // 0.39 s, agent 0.46 s -> 0.38 s, cold 4.01 s -> 3.84 s (the check runs in
        // cargo, outside that pool).
        initialization_options: Some(json!({
            "checkOnSave": true,
            "check": { "allTargets": true },
            "cachePriming": { "enable": false },
            "numThreads": 1,
        })),
        // cargo check runs after a save and reports through progress; between
        // its progress tokens there can be short gaps. It publishes a file more than
        // once per change, so a publish of our version is no sign that it is done:
        // the check's end is (`Delivery::CheckAfterSave`); its pushes can trail that
        // end until a pull sent after it is answered, else the full quiet
        // (`protocol`).
        // A pull answer with no check owed is its final word on the file:
        // `confirmed_quiet`; none after an answer that proves a check's pushes in
        // (`numThreads` above).
        wait: WaitProfile {
            quiet: Duration::from_millis(300),
            confirmed_quiet: Some(Duration::from_millis(50)),
            // Its flycheck reports on every file of the crate, open or not, and is
            // waited for positively: the files it reports on with changed results
            // are a written edit's dependents, as `cargo check` would find them.
            // Its pushes can come out of order, a list built before a fuller one
            // arriving after it (`protocol::Check::stale`), which once
            // looked like a check dropping results and had the scan's likely
            // dependents opened and pulled as well: 3x slower warm on itertools.
            delivery: checking(),
            ..WaitProfile::default()
        },
        install_hint: "rustup component add rust-analyzer".into(),
        coverage: super::Coverage {
            // A crate's manifest (its dependencies, features, edition), the versions
            // locked, and the toolchain that checks it.
            configuration: strs(&[
                "Cargo.toml",
                "Cargo.lock",
                "rust-toolchain",
                "rust-toolchain.toml",
            ]),
            // One rust-analyzer at a Cargo workspace's root, whichever member a file
            // is in: started at a member, it loads the whole workspace all the same,
            // and a second member's file started a second one (a cold start, 3 s on
            // crossbeam's six crates, and two `cargo check`s of every crate).
            monorepos: vec![crate::workspace::MonorepoKind::Cargo],
            ..super::Coverage::default()
        },
        ..entry(RUST_ANALYZER, "rust-analyzer", &[], languages::RUST, "rust")
    }
}

/// `project-wide` for rust-analyzer: off, its check after a save still runs, but
/// lspgate neither waits for it nor takes what it pushes for files nobody opened;
/// the scan's dependents alone are asked about.
pub(super) fn set_project_wide(spec: &mut ServerSpec, on: bool) {
    if !on {
        spec.wait.delivery = Delivery::OpenFiles;
    } else if !spec.wait.check_after_save() {
        spec.wait.delivery = checking();
    }
}

/// Its check after a save, waited for: its pushes come before its answers to pulls
/// sent after the check's end with one worker thread, as it is started
/// (`numThreads`, see [`rust_analyzer`]; [`reconcile_project_wide`] says otherwise
/// for a config that gives it more), and it is shown the documents.
fn checking() -> Delivery {
    Delivery::CheckAfterSave {
        pushes_before_answers: true,
        disk_only: false,
    }
}

/// With `checkOnSave` off (in its settings or initialization options, as a boolean
/// or, in older releases, `{ "enable": false }`) no check runs after a save: nothing
/// to wait for, and the dependents are scanned and opened. So with `check.workspace`
/// off: its check is then `cargo check -p` of the saved file's crate, which does not
/// re-check the crates of a workspace that depend on it, so what it reports is not
/// every dependent's word.
pub(super) fn reconcile_project_wide(spec: &mut ServerSpec) {
    if spec.name != RUST_ANALYZER {
        return;
    }
    let off = |v: &Value| {
        v.as_bool() == Some(false) || v.get("enable").and_then(|e| e.as_bool()) == Some(false)
    };
    let one_crate = |v: &Value| v.as_bool() == Some(false);
    if configured(spec, "checkOnSave").iter().any(off)
        || configured(spec, "check.workspace").iter().any(one_crate)
    {
        spec.wait.delivery = Delivery::OpenFiles;
    }
    // A config that gives it more worker threads gives up that order.
    let one = |v: &Value| v.is_null() || v == &json!(1);
    if !configured(spec, "numThreads").iter().all(one)
        && let Delivery::CheckAfterSave {
            pushes_before_answers,
            ..
        } = &mut spec.wait.delivery
    {
        *pushes_before_answers = false;
    }
}

/// A server started for one edit, written to disk, that creates no file, at the root
/// of a Cargo workspace (where there is a check to run): its `cargo check` (rustc's
/// word on every file of the crate, the batch checker's) is the whole report.
///
/// Its first analysis of a file costs more than the check: on a cold itertools it
/// answered the first pull after 2.3 s, loading the standard library's names,
/// against 0.2-0.9 s for `cargo check`. So its own analysis is switched off
/// (`diagnostics.enable`) and it is shown no document (`disk_only`): after a change
/// it works out whether the file belongs to a proc-macro crate, and after a save
/// which crates it belongs to, each the same first analysis on its one worker thread
/// (2.7 s and 1.9 s before a pull was answered or the check began); the check is
/// asked for with `runFlycheck`.
///
/// Its own diagnostics say little more than rustc's (lspgate drops its copies of
/// them); what only they say goes unsaid in such a run: a file no crate includes
/// (hence no created file), its hints. Not for a dry run, a review or the daemon,
/// whose changes its check cannot see or which may meet one next.
pub(super) fn for_one_written_edit(spec: &mut ServerSpec, root: &Path) {
    let Delivery::CheckAfterSave { disk_only, .. } = &mut spec.wait.delivery else {
        return;
    };
    if !checks_at_start(root) {
        return;
    }
    *disk_only = true;
    let options = spec.initialization_options.get_or_insert_with(|| json!({}));
    if let Some(options) = options.as_object_mut() {
        let diagnostics = options.entry("diagnostics").or_insert_with(|| json!({}));
        if let Some(diagnostics) = diagnostics.as_object_mut() {
            diagnostics.insert("enable".into(), Value::Bool(false));
        }
    }
}

/// Whether rust-analyzer started at `root` runs a check of its own once it has loaded
/// the workspace: only where it finds a Cargo workspace; with none it checks nothing
/// until a save.
pub fn checks_at_start(root: &Path) -> bool {
    root.join("Cargo.toml").is_file()
}

/// What `key` is set to in the spec's initialization options and in its settings
/// (`rust-analyzer.<key>`), null where it is not: rust-analyzer reads both.
fn configured(spec: &ServerSpec, key: &str) -> [Value; 2] {
    let pointer = format!("/{}", key.replace('.', "/"));
    let option = spec
        .initialization_options
        .as_ref()
        .and_then(|o| o.pointer(&pointer))
        .cloned()
        .unwrap_or(Value::Null);
    [option, spec.setting(Some(&format!("rust-analyzer.{key}")))]
}

/// The keys of [`ALLOWED`], each after `$prefix`.
macro_rules! keys {
    ($prefix:literal) => {
        &[
            (concat!($prefix, "checkOnSave"), Allow::Value),
            (concat!($prefix, "check.allTargets"), Allow::Value),
            (concat!($prefix, "check.features"), Allow::Value),
            (concat!($prefix, "check.noDefaultFeatures"), Allow::Value),
            (concat!($prefix, "check.workspace"), Allow::Value),
            (concat!($prefix, "cargo.features"), Allow::Value),
            (concat!($prefix, "cargo.noDefaultFeatures"), Allow::Value),
            (concat!($prefix, "cargo.allTargets"), Allow::Value),
            (concat!($prefix, "cargo.cfgs"), Allow::Tree),
            (concat!($prefix, "cargo.buildScripts.enable"), Allow::Value),
            (concat!($prefix, "procMacro.enable"), Allow::Value),
            (
                concat!($prefix, "procMacro.attributes.enable"),
                Allow::Value,
            ),
            (concat!($prefix, "procMacro.ignored"), Allow::Tree),
            (concat!($prefix, "diagnostics.enable"), Allow::Value),
            (concat!($prefix, "diagnostics.disabled"), Allow::Value),
            (
                concat!($prefix, "diagnostics.experimental.enable"),
                Allow::Value,
            ),
            (
                concat!($prefix, "diagnostics.styleLints.enable"),
                Allow::Value,
            ),
            (concat!($prefix, "diagnostics.warningsAsHint"), Allow::Value),
            (concat!($prefix, "diagnostics.warningsAsInfo"), Allow::Value),
            (concat!($prefix, "cachePriming.enable"), Allow::Value),
            (concat!($prefix, "cachePriming.numThreads"), Allow::Value),
            (concat!($prefix, "numThreads"), Allow::Value),
            (concat!($prefix, "files.exclude"), Allow::InsidePaths),
            (concat!($prefix, "files.watcher"), Allow::Value),
        ]
    };
}

/// What an untrusted project may set, under `rust-analyzer` in settings and at the
/// top of its initialization options. Not `*.overrideCommand`, `*.extraArgs`,
/// `*.extraEnv`, `check.command`, `cargo.targetDir`, `cargo.sysroot*`,
/// `cargo.target`/`check.targets` (a target may be a path to a JSON spec),
/// `procMacro.server`, `server.*`, `linkedProjects` (a project JSON can name
/// proc-macro libraries), `workspace.discoverConfig`.
pub(super) const ALLOWED: AllowList = AllowList {
    settings: keys!("rust-analyzer."),
    initialization_options: keys!(""),
};

#[cfg(test)]
mod tests {
    use super::super::builtin;
    use super::*;

    fn rust_analyzer_spec() -> ServerSpec {
        builtin()
            .into_iter()
            .find(|s| s.name == RUST_ANALYZER)
            .expect("rust-analyzer is built in")
    }

    #[test]
    fn its_check_names_the_dependents_of_a_written_edit_only() {
        let spec = rust_analyzer_spec();
        assert!(spec.wait.finds_dependents(true));
        assert!(
            !spec.wait.finds_dependents(false),
            "a dry run is not checked"
        );
        let mut off = spec;
        set_project_wide(&mut off, false);
        assert!(!off.wait.finds_dependents(true));
    }

    #[test]
    fn an_answer_ends_the_wait_only_with_one_worker_thread() {
        let mut one = rust_analyzer_spec();
        reconcile_project_wide(&mut one);
        assert!(one.wait.pushes_before_answers());
        let mut two = rust_analyzer_spec();
        two.initialization_options = Some(json!({ "numThreads": 2 }));
        reconcile_project_wide(&mut two);
        assert!(!two.wait.pushes_before_answers());
        let mut logical = rust_analyzer_spec();
        logical.settings = json!({ "rust-analyzer": { "numThreads": "logical" } });
        reconcile_project_wide(&mut logical);
        assert!(!logical.wait.pushes_before_answers());
    }

    #[test]
    fn one_written_edit_is_reported_by_its_check_alone() {
        let crate_root = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(crate_root.path().join("Cargo.toml"), "").expect("Cargo.toml written");
        let root = crate_root.path();
        let mut spec = rust_analyzer_spec();
        for_one_written_edit(&mut spec, root);
        let options = spec.initialization_options.clone().unwrap_or_default();
        assert_eq!(options["diagnostics"]["enable"], json!(false));
        assert_eq!(options["numThreads"], json!(1), "the rest kept");
        assert!(spec.wait.disk_only());

        let mut own = rust_analyzer_spec();
        own.initialization_options = Some(json!({ "diagnostics": { "disabled": ["E0001"] } }));
        for_one_written_edit(&mut own, root);
        let options = own.initialization_options.unwrap_or_default();
        assert_eq!(options["diagnostics"]["enable"], json!(false));
        assert_eq!(options["diagnostics"]["disabled"], json!(["E0001"]));

        // No check after a save: its own analysis is all there is.
        let mut unchecked = rust_analyzer_spec();
        unchecked.wait.delivery = Delivery::OpenFiles;
        for_one_written_edit(&mut unchecked, root);
        assert!(!unchecked.wait.disk_only());
        let options = unchecked.initialization_options.unwrap_or_default();
        assert!(options.get("diagnostics").is_none());

        // No Cargo workspace: no check to run.
        let mut detached = rust_analyzer_spec();
        for_one_written_edit(&mut detached, &root.join("elsewhere"));
        assert!(!detached.wait.disk_only());
    }

    #[test]
    fn its_check_after_a_save_is_waited_for_unless_check_on_save_is_off() {
        let mut on = rust_analyzer_spec();
        reconcile_project_wide(&mut on);
        assert!(on.wait.check_after_save());

        let mut off_in_options = rust_analyzer_spec();
        off_in_options.initialization_options = Some(json!({ "checkOnSave": false }));
        reconcile_project_wide(&mut off_in_options);
        assert!(!off_in_options.wait.check_after_save());

        let mut off_in_settings = rust_analyzer_spec();
        off_in_settings.settings =
            json!({ "rust-analyzer": { "checkOnSave": { "enable": false } } });
        reconcile_project_wide(&mut off_in_settings);
        assert!(!off_in_settings.wait.check_after_save());

        let mut one_crate = rust_analyzer_spec();
        one_crate.settings = json!({ "rust-analyzer": { "check": { "workspace": false } } });
        reconcile_project_wide(&mut one_crate);
        assert!(!one_crate.wait.check_after_save());

        let mut one_crate_in_options = rust_analyzer_spec();
        one_crate_in_options.initialization_options =
            Some(json!({ "checkOnSave": true, "check": { "workspace": false } }));
        reconcile_project_wide(&mut one_crate_in_options);
        assert!(!one_crate_in_options.wait.check_after_save());

        let mut not_project_wide = rust_analyzer_spec();
        super::super::set_project_wide(&mut not_project_wide, false).expect("it has the mode");
        assert!(!not_project_wide.wait.check_after_save());
    }
}
