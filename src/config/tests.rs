//! The configuration as a whole: config files in a temporary workspace and user
//! directory, loaded, layered and trusted (or not), and the servers chosen from the
//! result.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::layers::{Loaded, load_from};
use super::select::{server_for_with, stopped_check};
use super::*;
use crate::model::options::{FailOn, Format, Severity};
use crate::servers::{self, Origin, ServerSpec, WaitProfile};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// A workspace and a user config directory, each in its own temp dir.
struct Fixture {
    workspace: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            workspace: tempfile::tempdir().expect("tempdir"),
            home: tempfile::tempdir().expect("tempdir"),
        }
    }
    fn project(self, text: &str) -> Fixture {
        std::fs::write(self.workspace.path().join(PROJECT_FILE), text).expect("write");
        self
    }
    fn user(self, text: &str) -> Fixture {
        std::fs::write(self.user_path(), text).expect("write");
        self
    }
    fn user_path(&self) -> PathBuf {
        self.home.path().join("config.toml")
    }
    fn load(&self, trust_flag: bool, trust_env: bool) -> Result<Loaded, ConfigError> {
        load_from(
            self.workspace.path(),
            Some(&self.user_path()),
            trust_flag,
            trust_env,
        )
    }
    fn loaded(&self) -> Loaded {
        self.load(false, false).expect("config loads")
    }
}

fn server<'a>(loaded: &'a Loaded, name: &str) -> Option<&'a ServerSpec> {
    loaded.servers.iter().find(|s| s.name == name)
}

const FAKE: &str = "[server.fake]\ncommand = \"fake-lsp\"\nextensions = [\"fk\"]\n";

#[test]
fn no_files_gives_the_builtin_table() {
    let loaded = Fixture::new().loaded();
    assert_eq!(loaded.servers, servers::builtin());
    assert_eq!(loaded.options, FileOptions::default());
    assert!(loaded.notes.is_empty() && loaded.files.is_empty() && !loaded.trusted);
}

#[test]
fn unknown_key_names_key_and_file() {
    let f = Fixture::new().project("format = \"json\"\ntimout = \"5s\"\n");
    let err = f.load(false, false).expect_err("unknown key").to_string();
    assert!(
        err.contains(".lspgate.toml:2:1: unknown key \"timout\""),
        "{err}"
    );

    let f = Fixture::new().user("[server.gopls]\ncomand = \"gopls\"\n");
    let err = f.load(false, false).expect_err("unknown key").to_string();
    assert!(
        err.contains("config.toml:2:1: unknown key \"comand\""),
        "{err}"
    );
}

#[test]
fn bad_values_name_the_file() {
    let f = Fixture::new().project("timeout = \"5x\"\n");
    let err = f.load(false, false).expect_err("bad duration").to_string();
    assert!(
        err.contains(".lspgate.toml:1:") && err.contains("invalid duration \"5x\""),
        "{err}"
    );

    let f = Fixture::new().project("format = \"yaml\"\n");
    let err = f.load(false, false).expect_err("bad format").to_string();
    assert!(
        err.contains(".lspgate.toml:1:") && err.contains("yaml"),
        "{err}"
    );

    let f = Fixture::new().project("[server.gopls\n");
    let err = f.load(false, false).expect_err("bad toml").to_string();
    assert!(err.contains(".lspgate.toml:1:"), "{err}");
}

#[test]
fn options_layer_project_over_user() {
    let f = Fixture::new()
        .user("format = \"json\"\ntimeout = \"3s\"\nmax-entries = 7\n")
        .project("timeout = 4\nquiet-unused = 1\n");
    // An unknown key anywhere fails the whole load.
    assert!(f.load(false, false).is_err());

    let f = Fixture::new()
        .user("format = \"json\"\ntimeout = \"3s\"\nmax-entries = 7\n")
        .project("timeout = 4\ncross-file-timeout = \"250ms\"\nall = true\n");
    let loaded = f.load(true, false).expect("config loads");
    assert_eq!(loaded.files.len(), 2);
    assert_eq!(
        loaded.options,
        FileOptions {
            format: Some(Format::Json),
            timeout: Some(secs(4.0)),
            cross_file_timeout: Some(Duration::from_millis(250)),
            all: Some(true),
            max_entries: Some(7),
            ..FileOptions::default()
        }
    );
    // Untrusted, the longer timeout stays; the shorter one is withheld.
    let loaded = f.loaded();
    assert_eq!(loaded.options.timeout, Some(secs(4.0)));
    assert_eq!(loaded.options.cross_file_timeout, None);
}

/// Issue 29, item 3: an untrusted project may not weaken the verdict through the
/// options (a laxer `fail-on`, a severity filter listing less, shorter timeouts);
/// stricter values stay, and a trusted project's stand.
#[test]
fn an_untrusted_project_cannot_weaken_the_options() {
    let lax = "fail-on = \"never\"\nseverity = \"error\"\ntimeout = \"1ms\"\n\
               startup-timeout = \"1s\"\ncross-file-timeout = \"1s\"\nmax-entries = 0\n";
    let loaded = Fixture::new().project(lax).loaded();
    assert_eq!(loaded.options, FileOptions::default());
    let note = loaded
        .notes
        .iter()
        .find(|n| n.contains("may not weaken the verdict"))
        .expect("a note");
    for key in [
        "fail-on",
        "severity",
        "timeout",
        "startup-timeout",
        "cross-file-timeout",
        "max-entries",
    ] {
        assert!(note.contains(key), "{note}");
    }
    assert!(note.contains("--trust-project"), "{note}");

    let trusted = Fixture::new()
        .project(lax)
        .load(true, false)
        .expect("loads");
    assert_eq!(trusted.options.fail_on, Some(FailOn::Never));
    assert_eq!(trusted.options.timeout, Some(Duration::from_millis(1)));
    assert!(trusted.notes.is_empty(), "{:?}", trusted.notes);

    // Stricter than the user's: kept.
    let strict = Fixture::new()
        .user("fail-on = \"never\"\nseverity = \"error\"\n")
        .project("fail-on = \"warning\"\nseverity = \"warning\"\ntimeout = \"9s\"\n")
        .loaded();
    assert_eq!(strict.options.fail_on, Some(FailOn::Warning));
    assert_eq!(strict.options.severity, Some(Severity::Warning));
    assert_eq!(strict.options.timeout, Some(secs(9.0)));
    assert!(strict.notes.is_empty(), "{:?}", strict.notes);
}

#[test]
fn servers_layer_and_settings_merge_deeply() {
    let f = Fixture::new()
        .user(
            "[server.gopls]\nquiet = \"1s\"\nroot-markers = [\"go.mod\"]\n\
             [server.gopls.settings.gopls]\nstaticcheck = true\nhints = { a = 1 }\n\
             [server.rust-analyzer]\ndisabled = true\n",
        )
        .project(
            "[server.gopls]\nquiet = \"2s\"\n\
             [server.gopls.settings.gopls]\nhints = { b = 2 }\n\
             [server.pyright.settings.python.analysis]\ntypeCheckingMode = \"strict\"\n\
             [server.rust-analyzer]\ndisabled = false\n\
             [server.rust-analyzer.initialization-options]\ncargo = { features = \"all\" }\n",
        );
    // Trusted: an untrusted project may not turn a server back on.
    let loaded = f.load(true, false).expect("config loads");
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);

    let gopls = server(&loaded, "gopls").expect("gopls");
    assert_eq!(gopls.wait.quiet, secs(2.0));
    assert_eq!(gopls.root_markers, ["go.mod"]);
    assert_eq!(
        gopls.settings,
        json!({ "gopls": {
            "diagnosticsDelay": "0s", "staticcheck": true, "hints": { "a": 1, "b": 2 }
        } })
    );
    assert_eq!(gopls.origin, Origin::BuiltIn);

    let pyright = server(&loaded, "pyright").expect("pyright");
    assert_eq!(
        pyright.setting(Some("python.analysis.typeCheckingMode")),
        json!("strict")
    );
    // The built-in keys beside it survive.
    assert_eq!(
        pyright.setting(Some("python.analysis.diagnosticMode")),
        json!("workspace")
    );

    let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
    assert!(!ra.disabled);
    assert_eq!(
        ra.initialization_options,
        Some(json!({
            "checkOnSave": true,
            "check": { "allTargets": true },
            "cachePriming": { "enable": false },
            "numThreads": 1,
            "cargo": { "features": "all" },
        }))
    );
}

#[test]
fn user_adds_a_server_ahead_of_the_builtins() {
    let f = Fixture::new().user(
        "[server.pylsp]\ncommand = \"pylsp\"\nextensions = [\".py\"]\n\
         language-id = \"python\"\nsettings = { when = 1979-05-27T07:32:00Z }\n",
    );
    let loaded = f.loaded();
    let first = &loaded.servers[0];
    assert_eq!(first.name, "pylsp");
    assert_eq!(first.origin, Origin::UserConfig);
    assert_eq!(first.extensions, ["py"]);
    assert_eq!(first.language_id("py"), "python");
    assert_eq!(first.settings, json!({ "when": "1979-05-27T07:32:00Z" }));
    assert_eq!(first.wait, WaitProfile::default());
    assert!(!first.install_hint.is_empty());
    assert_eq!(loaded.servers.len(), servers::builtin().len() + 1);
}

#[test]
fn language_id_defaults_to_the_extension_and_takes_a_table() {
    let f = Fixture::new().user(
        "[server.multi]\ncommand = \"multi-lsp\"\nextensions = [\"a\", \"b\", \"c\"]\n\
         language-id = { b = \"bee\" }\n",
    );
    let loaded = f.loaded();
    let multi = server(&loaded, "multi").expect("multi");
    assert_eq!(
        ["a", "b", "c"].map(|e| multi.language_id(e)),
        ["a", "bee", "c"]
    );
}

#[test]
fn a_new_server_needs_command_and_extensions() {
    for text in [
        "[server.fake]\nextensions = [\"fk\"]\n",
        "[server.fake]\ncommand = \"fake-lsp\"\n",
    ] {
        let err = Fixture::new()
            .user(text)
            .load(false, false)
            .expect_err(text)
            .to_string();
        assert!(
            err.contains("server.fake") && err.contains("\"command\""),
            "{err}"
        );
        // Trust does not matter: the file is wrong either way.
        let err = Fixture::new()
            .project(text)
            .load(false, false)
            .expect_err(text)
            .to_string();
        assert!(err.contains(".lspgate.toml: server.fake"), "{err}");
    }
}

#[test]
fn untrusted_project_settings_that_run_programs_are_withheld() {
    let project = "[server.rust-analyzer.settings.rust-analyzer.check]\n\
                   overrideCommand = [\"sh\", \"-c\", \"evil\"]\nallTargets = false\n\
                   [server.gopls.settings.gopls]\nbuildFlags = [\"-toolexec=/tmp/x\"]\n\
                   staticcheck = true\n\
                   [server.pyright.initialization-options]\npythonPath = \"/tmp/py\"\n";
    let loaded = Fixture::new().project(project).loaded();
    let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
    assert_eq!(
        ra.settings,
        json!({ "rust-analyzer": { "check": { "allTargets": false } } })
    );
    let gopls = server(&loaded, "gopls").expect("gopls");
    assert_eq!(
        gopls.settings,
        json!({ "gopls": { "diagnosticsDelay": "0s", "staticcheck": true } })
    );
    let pyright = server(&loaded, "pyright").expect("pyright");
    assert_eq!(pyright.initialization_options, Some(json!({})));
    let notes = loaded.notes.join("\n");
    for key in [
        "server.rust-analyzer.settings.rust-analyzer.check.overrideCommand",
        "server.gopls.settings.gopls.buildFlags",
        "server.pyright.initialization-options.pythonPath",
    ] {
        assert!(notes.contains(key), "{key} not in {notes}");
    }

    // Trusted, they apply.
    let loaded = Fixture::new()
        .project(project)
        .load(true, false)
        .expect("loads");
    let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
    assert!(
        ra.settings
            .pointer("/rust-analyzer/check/overrideCommand")
            .is_some()
    );
}

/// Issue 10, cases 1 and 3: settings of an untrusted project pass by allow-list,
/// per server. What names a program (`npmLocation`, which tsserver's typings
/// installer runs through a shell), extra arguments (`check.extraArgs`), a path
/// outside the workspace (`cargo.targetDir`, `extraPaths = ["../x"]`), an
/// environment or a plugin is withheld, with a note naming the key.
#[test]
fn untrusted_settings_pass_by_allow_list() {
    let project = r#"
[server.typescript-language-server.initialization-options]
npmLocation = "$(touch $HOME/PWNED)"
disableAutomaticTypingAcquisition = false
plugins = [{ name = "evil", location = "/tmp" }]
tsserver = { path = "node_modules/typescript/lib/tsserver.js" }
preferences = { quotePreference = "single" }
[server.rust-analyzer.initialization-options]
"check.extraArgs" = ["--config", "build.rustc-wrapper='tools/w.sh'"]
cargo = { targetDir = "/tmp/out", features = "all" }
[server.rust-analyzer.settings.rust-analyzer.check]
extraArgs = ["--config", "build.rustc-wrapper='tools/w.sh'"]
allTargets = false
[server.gopls.settings.gopls]
env = { GOFLAGS = "-toolexec=/tmp/x" }
staticcheck = true
[server.pyright.settings.python]
pythonPath = "/tmp/py"
analysis = { extraPaths = ["../outside", "src"], stubPath = "typings", typeCheckingMode = "strict" }
[server.clangd.initialization-options]
fallbackFlags = ["-fplugin=/tmp/x.so"]
compilationDatabasePath = "build"
[server.mine.settings]
anything = 1
"#;
    let user = "[server.mine]\ncommand = \"mine-lsp\"\nextensions = [\"mn\"]\n";
    let loaded = Fixture::new().user(user).project(project).loaded();
    let ts = server(&loaded, "typescript-language-server").expect("ts");
    assert_eq!(
        ts.initialization_options,
        Some(json!({
            "preferences": { "quotePreference": "single" },
            "disableAutomaticTypingAcquisition": true,
            "tsserver": { "useSyntaxServer": "never", "useClientFileWatcher": true },
        }))
    );
    let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
    assert_eq!(
        ra.initialization_options,
        Some(json!({
            "checkOnSave": true,
            "check": { "allTargets": true },
            "cachePriming": { "enable": false },
            "numThreads": 1,
            "cargo": { "features": "all" },
        }))
    );
    assert_eq!(
        ra.settings,
        json!({ "rust-analyzer": { "check": { "allTargets": false } } })
    );
    let gopls = server(&loaded, "gopls").expect("gopls");
    assert_eq!(
        gopls.settings,
        json!({ "gopls": { "diagnosticsDelay": "0s", "staticcheck": true } })
    );
    let pyright = server(&loaded, "pyright").expect("pyright");
    assert_eq!(
        pyright.setting(Some("python.analysis.stubPath")),
        json!("typings")
    );
    assert_eq!(pyright.setting(Some("python.pythonPath")), Value::Null);
    assert_eq!(
        pyright.setting(Some("python.analysis.extraPaths")),
        Value::Null
    );
    let clangd = server(&loaded, "clangd").expect("clangd");
    assert_eq!(
        clangd.initialization_options,
        Some(json!({ "clangdFileStatus": true, "compilationDatabasePath": "build" }))
    );
    let mine = server(&loaded, "mine").expect("mine");
    assert_eq!(mine.settings, json!({}));

    let notes = loaded.notes.join("\n");
    for key in [
        "server.typescript-language-server.initialization-options.npmLocation",
        "server.typescript-language-server.initialization-options.disableAutomaticTypingAcquisition",
        "server.typescript-language-server.initialization-options.plugins",
        "server.typescript-language-server.initialization-options.tsserver",
        "server.rust-analyzer.initialization-options.check.extraArgs",
        "server.rust-analyzer.initialization-options.cargo.targetDir",
        "server.rust-analyzer.settings.rust-analyzer.check.extraArgs",
        "server.gopls.settings.gopls.env",
        "server.pyright.settings.python.pythonPath",
        "server.pyright.settings.python.analysis.extraPaths",
        "server.clangd.initialization-options.fallbackFlags",
        "server.mine.settings.anything",
    ] {
        assert!(notes.contains(key), "{key} not in {notes}");
    }
    for kept in [
        "quotePreference",
        "allTargets",
        "staticcheck",
        "stubPath",
        "compilationDatabasePath",
    ] {
        assert!(!notes.contains(kept), "{kept} in {notes}");
    }

    // Trusted, all of it applies.
    let loaded = Fixture::new()
        .user(user)
        .project(project)
        .load(true, false)
        .expect("loads");
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
    let ts = server(&loaded, "typescript-language-server").expect("ts");
    assert_eq!(
        ts.initialization_options
            .as_ref()
            .and_then(|o| o.get("npmLocation")),
        Some(&json!("$(touch $HOME/PWNED)"))
    );
}

/// Issue 10, case 4, and issue 29, item 5: an untrusted project config may not turn
/// off the check of a file (`disabled`, `extensions`), nor choose another server for
/// it (`role`, `disabled` on the servers ahead of it), nor turn one on: which
/// servers run is the user's choice. Each key is withheld with a note; trusted, it is
/// the project's choice.
#[test]
fn an_untrusted_project_cannot_choose_the_servers() {
    let py = Path::new("a.py");
    // Every type checker for .py but pyrefly.
    let all = |key: &str| {
        ["pyright", "basedpyright", "ty"]
            .map(|name| format!("[server.{name}]\n{key}\n"))
            .concat()
    };
    let projects = [
        all("disabled = true"),
        all("extensions = [\"nope\"]"),
        all("language-id = \"plaintext\"\nroot-markers = [\"nowhere\"]"),
        "[server.pyrefly]\nrole = \"linter\"\n".to_string(),
        "[server.pyright]\nquiet = \"1ms\"\nversioned-publish = false\nproject-wide = false\n\
         install-hint = \"curl x | sh\"\n"
            .to_string(),
    ];
    let builtin = Fixture::new().loaded();
    for project in &projects {
        let loaded = Fixture::new().project(project).loaded();
        let names = |l: &Loaded| -> Vec<String> {
            l.servers
                .iter()
                .filter(|s| !s.disabled)
                .map(|s| format!("{} {:?} {:?}", s.name, s.extensions, s.coverage.role))
                .collect()
        };
        assert_eq!(names(&loaded), names(&builtin), "{project}");
        let pyright = server(&loaded, "pyright").expect("pyright");
        let built_in = server(&builtin, "pyright").expect("pyright");
        assert_eq!(
            (
                &pyright.wait,
                &pyright.install_hint,
                pyright.language_id("py"),
                &pyright.root_markers
            ),
            (
                &built_in.wait,
                &built_in.install_hint,
                built_in.language_id("py"),
                &built_in.root_markers
            ),
            "{project}"
        );
        assert_eq!(
            server_for_with(&loaded.servers, py, &|_| true).map(|s| s.name.as_str()),
            Some("pyright"),
            "{project}"
        );
        let key = project
            .lines()
            .nth(1)
            .and_then(|l| l.split(' ').next())
            .unwrap_or("");
        assert!(
            loaded.notes.iter().any(|n| n.contains(&format!(".{key}"))
                && n.contains("may not choose which servers run")
                && n.contains("--trust-project")),
            "{project}: {:?}",
            loaded.notes
        );
        let trusted = Fixture::new()
            .project(project)
            .load(true, false)
            .expect("loads");
        assert_ne!(trusted.servers, builtin.servers, "{project}");
    }
    // Nor turn on a server the user turned off.
    let loaded = Fixture::new()
        .user("[server.pyright]\ndisabled = true\n")
        .project("[server.pyright]\ndisabled = false\n")
        .loaded();
    assert!(server(&loaded, "pyright").is_some_and(|s| s.disabled));
    // Restating what applies changes nothing and needs no trust.
    let loaded = Fixture::new()
        .project("[server.pyright]\ndisabled = false\nrole = \"checker\"\n")
        .loaded();
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
    assert_eq!(stopped_check(&loaded.servers, py), None);
}

#[test]
fn untrusted_project_commands_are_ignored_with_a_note() {
    let f = Fixture::new().project(&format!(
        "{FAKE}[server.gopls]\ncommand = \"/tmp/evil\"\nargs = [\"-x\"]\nquiet = 1\n\
         [server.clangd]\ncommand = \"clangd\"\n"
    ));
    let loaded = f.loaded();
    assert!(!loaded.trusted);
    assert!(server(&loaded, "fake").is_none());

    let gopls = server(&loaded, "gopls").expect("gopls");
    assert_eq!(gopls.command, "gopls");
    assert!(gopls.args.is_empty());
    assert_eq!(gopls.origin, Origin::BuiltIn);
    // The keys that run nothing still apply.
    assert_eq!(gopls.wait.quiet, secs(1.0));

    assert_eq!(loaded.notes.len(), 2, "{:?}", loaded.notes);
    let fake = &loaded.notes[0];
    assert!(
        fake.contains(".lspgate.toml: ignored server.fake.command"),
        "{fake}"
    );
    assert!(
        fake.contains("--trust-project") && fake.contains("trusted-workspaces"),
        "{fake}"
    );
    let gopls = &loaded.notes[1];
    assert!(
        gopls.contains(
            "ignored server.gopls.command and server.gopls.args (the project is not trusted"
        ),
        "{gopls}"
    );
    // clangd's command was restated unchanged: nothing to ignore, nothing to say.
}

fn assert_project_trusted(loaded: &Loaded, workspace: &Path) {
    assert!(loaded.trusted);
    assert!(loaded.notes.is_empty(), "{:?}", loaded.notes);
    let fake = &loaded.servers[0];
    assert_eq!(
        (fake.name.as_str(), fake.origin),
        ("fake", Origin::ProjectConfig)
    );
    let gopls = server(loaded, "gopls").expect("gopls");
    assert_eq!(
        gopls.command,
        workspace.join("tools/gopls").display().to_string()
    );
    assert_eq!(gopls.origin, Origin::ProjectConfig);
}

const TRUSTED_PROJECT: &str = "[server.gopls]\ncommand = \"./tools/gopls\"\n";

#[test]
fn trust_by_flag() {
    let f = Fixture::new().project(&format!("{FAKE}{TRUSTED_PROJECT}"));
    let loaded = f.load(true, false).expect("loads");
    assert_project_trusted(&loaded, f.workspace.path());
}

#[test]
fn trust_by_env() {
    let f = Fixture::new().project(&format!("{FAKE}{TRUSTED_PROJECT}"));
    let loaded = f.load(false, true).expect("loads");
    assert_project_trusted(&loaded, f.workspace.path());
}

#[test]
fn trust_by_user_trusted_workspaces() {
    let f = Fixture::new().project(&format!("{FAKE}{TRUSTED_PROJECT}"));
    // Listed through a non-canonical spelling: compared after canonicalizing.
    let listed = f.workspace.path().join("sub").join("..");
    std::fs::create_dir(f.workspace.path().join("sub")).expect("mkdir");
    let f = f.user(&format!(
        "trusted-workspaces = [\"/nonexistent/elsewhere\", {:?}]\n",
        listed.display().to_string()
    ));
    let loaded = f.loaded();
    assert_project_trusted(&loaded, f.workspace.path());

    let f = Fixture::new().user("trusted-workspaces = [\"relative/path\"]\n");
    let err = f.load(false, false).expect_err("relative").to_string();
    assert!(err.contains("not an absolute path"), "{err}");
}

#[test]
fn a_project_cannot_trust_itself() {
    let f = Fixture::new().project(&format!("trusted-workspaces = [\"/\"]\n{FAKE}"));
    let err = f.load(false, false).expect_err("self-trust").to_string();
    assert!(
        err.contains(".lspgate.toml: trusted-workspaces is read only from the user config"),
        "{err}"
    );
}

#[test]
fn a_built_in_given_its_own_command_keeps_its_project_wide_switch() {
    let f = Fixture::new().user(
        "[server.clangd]\ncommand = \"~/bin/clangd\"\nproject-wide = true\n\
         [server.rust-analyzer]\ncommand = \"~/bin/rust-analyzer\"\nproject-wide = false\n",
    );
    let loaded = f.loaded();
    let clangd = server(&loaded, "clangd").expect("clangd");
    assert_eq!(clangd.origin, Origin::UserConfig);
    assert!(
        !clangd.wait.workspace_analysis(),
        "clangd has no analysis of its workspace: {:?}",
        clangd.wait.delivery
    );
    assert!(
        clangd.coverage.open_units > 0,
        "its units are opened instead"
    );
    let ra = server(&loaded, "rust-analyzer").expect("rust-analyzer");
    assert!(
        !ra.wait.check_after_save(),
        "project-wide off stops its check"
    );
    assert!(!ra.wait.workspace_analysis());
}

#[test]
fn user_commands_need_no_trust() {
    let f = Fixture::new().user("[server.gopls]\ncommand = \"~/bin/gopls\"\nargs = [\"serve\"]\n");
    let loaded = f.loaded();
    let gopls = server(&loaded, "gopls").expect("gopls");
    assert_eq!(gopls.origin, Origin::UserConfig);
    assert!(gopls.command.ends_with("bin/gopls") && !gopls.command.starts_with('~'));
    assert_eq!(gopls.args, ["serve"]);
    assert_eq!(
        gopls.install_hint, "check the command's path in the config file that sets it",
        "the built-in's apt hint does not install a program at a path"
    );
    assert!(not_found(&gopls.command).ends_with("does not exist or is not executable"));
    let pyright = server(&loaded, "pyright").expect("pyright");
    assert_eq!(pyright.install_hint, "npm install -g pyright");
    assert_eq!(
        not_found(&pyright.command),
        "`pyright-langserver` is not on PATH"
    );
}

#[test]
fn a_renamed_command_gets_its_own_install_hint() {
    let loaded = Fixture::new()
        .user("[server.pyright]\ncommand = \"my-pyright\"\n")
        .loaded();
    let pyright = server(&loaded, "pyright").expect("pyright");
    assert_eq!(
        pyright.install_hint,
        "install my-pyright and put it on PATH"
    );
    let loaded = Fixture::new()
        .user("[server.pyright]\ncommand = \"my-pyright\"\ninstall-hint = \"ask ops\"\n")
        .loaded();
    let pyright = server(&loaded, "pyright").expect("pyright");
    assert_eq!(pyright.install_hint, "ask ops");
}

#[test]
fn project_disables_a_builtin() {
    let f = Fixture::new().project("[server.pyright]\ndisabled = true\n");
    let loaded = f.load(true, false).expect("config loads");
    let chosen = server_for_with(&loaded.servers, Path::new("a.py"), &|_| true);
    assert_eq!(chosen.map(|s| s.name.as_str()), Some("basedpyright"));
}
