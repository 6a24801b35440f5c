//! The test harness: a just-style `Test` builder that runs the real `lspgate` binary in a
//! private git workspace, with private home, config, data, state and runtime
//! directories, so runs never share a daemon, a history or a user config.
//!
//! ```ignore
//! let out = Test::new()
//!     .file("a.fake", "one\n")
//!     .fake_server(&[])
//!     .args(["write", "a.fake", "--content", "ERROR boom\n"])
//!     .run();
//! out.assert_code(1).stdout_contains("Error: a.fake:1:1 [fake][E1] boom");
//! out.assert_no_orphans();
//! ```
//!
//! Every run is bounded by a watchdog: a hung lspgate fails its test instead of hanging
//! the suite.

// Not every test module uses every helper.
#![allow(dead_code)]

pub mod lsp_client;
pub mod process;

use std::{
    collections::BTreeMap,
    env,
    ffi::{OsStr, OsString},
    fmt, fs,
    io::{Read, Write},
    os::unix::fs::PermissionsExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::OnceLock,
    thread,
    time::{Duration, Instant, SystemTime},
};

use crossbeam_channel::RecvTimeoutError;
use serde_json::Value;
use tempfile::TempDir;

/// How long one run may take before the watchdog kills it. Generous: the slowest real
/// server starts in well under this, and a fake-server run takes a few seconds at most.
const WATCHDOG: Duration = Duration::from_secs(60);

/// How long a killed or stopped server may take to disappear once lspgate has exited.
const REAP_GRACE: Duration = Duration::from_secs(5);

/// One end-to-end test: a workspace, the arguments of one run, and its environment.
#[must_use]
pub struct Test {
    tempdir: TempDir,
    workspace: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    trust_project: bool,
    watchdog: Duration,
}

impl Default for Test {
    fn default() -> Self {
        Self::new()
    }
}

impl Test {
    /// A fresh workspace that is a git top level, and fresh private directories.
    pub fn new() -> Test {
        let tempdir = tempfile::Builder::new()
            .prefix("lspgate-test-")
            .tempdir()
            .expect("create a temp dir");
        // Canonical, so paths compare equal to what lspgate resolves (a /tmp symlink).
        let base = tempdir
            .path()
            .canonicalize()
            .expect("canonicalize the temp dir");
        let workspace = base.join("workspace");
        for dir in [
            "workspace",
            "home",
            "config",
            "data",
            "state",
            "runtime",
            "fake",
        ] {
            fs::create_dir(base.join(dir)).expect("create a private dir");
        }
        // XDG_RUNTIME_DIR must be private to its owner, or daemons may refuse it.
        fs::set_permissions(base.join("runtime"), fs::Permissions::from_mode(0o700))
            .expect("chmod runtime dir");
        fs::create_dir_all(base.join("config/lspgate")).expect("create the user config dir");
        fs::write(base.join("config/lspgate/config.toml"), "").expect("write an empty user config");
        let git = Command::new("git")
            .args(["-c", "init.defaultBranch=main", "init", "--quiet"])
            .current_dir(&workspace)
            .env("HOME", base.join("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .expect("run git init");
        assert!(git.success(), "git init failed in {}", workspace.display());
        Test {
            tempdir,
            workspace,
            args: Vec::new(),
            env: Vec::new(),
            stdin: None,
            trust_project: false,
            watchdog: WATCHDOG,
        }
    }

    /// The workspace directory (also the run directory, `-C`).
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// A path inside the workspace.
    pub fn path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.workspace.join(rel)
    }

    /// Writes a file of the workspace now, creating its directories.
    #[track_caller]
    pub fn file(self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> Test {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).expect("create parent dirs");
        }
        fs::write(&path, content).unwrap_or_else(|err| panic!("write {}: {err}", path.display()));
        self
    }

    /// Every file of the workspace staged in git's index (`git add -A`): what a
    /// `check --changed` with no earlier call measures from.
    pub fn staged(self) -> Test {
        let status = Command::new("git")
            .args(["add", "-A"])
            .current_dir(self.workspace())
            .status()
            .expect("run git add");
        assert!(status.success(), "git add failed");
        self
    }

    /// A `compile_commands.json` at the root listing `units`, each compiled alone
    /// (`cc -c UNIT`) in the workspace.
    pub fn compile_commands(self, units: &[&str]) -> Test {
        let dir = self.workspace().display().to_string();
        let entries: Vec<serde_json::Value> = units
            .iter()
            .map(|f| serde_json::json!({"directory": dir, "file": f, "arguments": ["cc", "-c", f]}))
            .collect();
        let text = serde_json::to_string(&entries).expect("json");
        self.file("compile_commands.json", text)
    }

    /// Configures the fake server for `.fake` files with these extra arguments (e.g.
    /// `["--mode", "garbage"]`) and trusts the project so lspgate runs it. The server
    /// logs what it receives and its pid in the private `fake/` dir, for
    /// `Output::fake_log` and `Output::assert_no_orphans`.
    pub fn fake_server(self, args: &[&str]) -> Test {
        self.fake_server_as("fake", args)
    }

    /// [`Test::fake_server`] in the user's config instead of the project's: it runs
    /// without trusting the project, whose `.lspgate.toml` the test may then write.
    pub fn fake_server_in_user_config(self, args: &[&str]) -> Test {
        let mut test = self.fake_server(args);
        let config = fs::read(test.path(".lspgate.toml")).expect("read the fake's config");
        fs::remove_file(test.path(".lspgate.toml")).expect("remove the project config");
        fs::write(test.private("config").join("lspgate/config.toml"), config)
            .expect("write the user config");
        test.trust_project = false;
        test
    }

    /// [`Test::fake_server`] as the server entry `name`: a built-in's name (`clangd`,
    /// `typescript-language-server`) replaces that entry's command, arguments and
    /// extensions, and keeps its wait profile.
    pub fn fake_server_as(self, name: &str, args: &[&str]) -> Test {
        let fake = self.private("fake");
        let mut all: Vec<String> = vec![
            "--log".into(),
            fake.join("log.jsonl").display().to_string(),
            "--pidfile".into(),
            fake.join("pids").display().to_string(),
        ];
        all.extend(args.iter().map(|arg| arg.to_string()));
        // A JSON string is a valid TOML basic string.
        let quote = |s: &str| serde_json::to_string(s).expect("quote a string");
        let config = format!(
            "[server.{}]\ncommand = {}\nargs = [{}]\nextensions = [\"fake\"]\n",
            quote(name),
            quote(&fake_lsp().display().to_string()),
            all.iter()
                .map(|arg| quote(arg))
                .collect::<Vec<_>>()
                .join(", "),
        );
        let mut test = self.file(".lspgate.toml", config);
        test.trust_project = true;
        test
    }

    /// Appends arguments (after `-C <workspace>`).
    pub fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    pub fn stdin(mut self, stdin: impl AsRef<[u8]>) -> Test {
        self.stdin = Some(stdin.as_ref().to_owned());
        self
    }

    /// Sets an environment variable of the run; it wins over the harness's defaults.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Test {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable from the run, including the harness's defaults.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Test {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Runs server commands from the project's `.lspgate.toml` (`--trust-project`).
    pub fn trust_project(mut self) -> Test {
        self.trust_project = true;
        self
    }

    /// Every file of the workspace but `.git`, with its bytes.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.workspace)
    }

    /// Lets runs use the warm daemon, which the harness turns off by default. Its
    /// socket, lock and log go to this test's private runtime dir, and a short idle
    /// timeout is a backstop against a daemon a failed test leaves behind.
    pub fn with_daemon(self) -> Test {
        let runtime = self.private("runtime").join("lspgate");
        self.env_remove("LSPGATE_NO_DAEMON")
            .env("LSPGATE_RUNTIME_DIR", runtime)
            .env("LSPGATE_IDLE_TIMEOUT", "60s")
    }

    /// The command `run` would start (arguments so far included), for tests that
    /// start several runs at once.
    pub fn to_command(&self) -> Command {
        self.command()
    }

    /// One of the test's private directories (`fake`, `runtime`, `home`, ...).
    pub fn private_dir(&self, name: &str) -> PathBuf {
        self.private(name)
    }

    /// Replaces the user's config file (`LSPGATE_CONFIG`) with `text`: it may run
    /// and choose servers without trusting the project.
    pub fn user_config(self, text: impl AsRef<[u8]>) -> Test {
        fs::write(self.private("config").join("lspgate/config.toml"), text)
            .expect("write the user config");
        self
    }

    /// Changes the watchdog's bound for this run.
    pub fn watchdog(mut self, bound: Duration) -> Test {
        self.watchdog = bound;
        self
    }

    fn private(&self, name: &str) -> PathBuf {
        self.workspace
            .parent()
            .expect("workspace has a parent")
            .join(name)
    }

    fn command(&self) -> Command {
        let mut cmd = self.command_with(env!("CARGO_BIN_EXE_lspgate"));
        cmd.args(self.lspgate_args());
        cmd
    }

    /// The arguments `run` gives lspgate: `-C WORKSPACE`, `--trust-project` when the
    /// project's server must run, then the test's.
    pub fn lspgate_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["-C".into(), self.workspace.clone().into()];
        if self.trust_project {
            args.push("--trust-project".into());
        }
        args.extend(self.args.iter().cloned());
        args
    }

    /// `program` (no arguments yet) in the environment and directory `run` gives
    /// lspgate: for a client that starts lspgate itself, which inherits them.
    pub fn command_with(&self, program: impl AsRef<OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(&self.workspace);
        // Whatever the developer's shell sets must not leak into a run.
        for (key, _) in env::vars_os() {
            let name = key.to_string_lossy();
            if name.starts_with("LSPGATE_")
                || name.starts_with("FAKE_LSP_")
                || name.starts_with("XDG_")
            {
                cmd.env_remove(&key);
            }
        }
        cmd.env("NO_COLOR", "1")
            .env("LSPGATE_NO_DAEMON", "1")
            .env("HOME", self.private("home"))
            .env("XDG_CONFIG_HOME", self.private("config"))
            .env("XDG_DATA_HOME", self.private("data"))
            .env("XDG_STATE_HOME", self.private("state"))
            .env("XDG_CACHE_HOME", self.private("home").join(".cache"))
            .env("XDG_RUNTIME_DIR", self.private("runtime"))
            .env(
                "LSPGATE_CONFIG",
                self.private("config").join("lspgate/config.toml"),
            );
        // The one way in for a developer: LSPGATE_TEST_TRACE=FILE traces the servers'
        // messages of every run (LSPGATE_TRACE itself is cleared above).
        if let Some(trace) = env::var_os("LSPGATE_TEST_TRACE") {
            cmd.env("LSPGATE_TRACE", trace);
        }
        for (key, value) in &self.env {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd
    }

    /// Runs lspgate once. Panics (failing the test) if the watchdog has to kill it.
    #[track_caller]
    pub fn run(mut self) -> Output {
        let mut cmd = self.command();
        let line = format!("{cmd:?}");
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|err| panic!("spawn {line}: {err}"));
        let stdin = self.stdin.take().unwrap_or_default();
        let mut pipe = child.stdin.take().expect("piped stdin");
        // A thread, because lspgate may not read its stdin at all, or only after writing.
        thread::spawn(move || pipe.write_all(&stdin));
        let stdout = drain(child.stdout.take().expect("piped stdout"));
        let stderr = drain(child.stderr.take().expect("piped stderr"));

        let pid = child.id();
        let (done_tx, done_rx) = crossbeam_channel::bounded(1);
        let waiter = thread::spawn(move || {
            let status = child.wait();
            let _ = done_tx.send(());
            status
        });
        let deadline = start + self.watchdog;
        let killed = match done_rx.recv_timeout(self.watchdog) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => false,
            Err(RecvTimeoutError::Timeout) => {
                kill(pid);
                // Before waiting for the pipes, which a hung server may hold open.
                kill_fake_servers(&self.private("fake"));
                true
            }
        };
        let status = waiter
            .join()
            .expect("waiter thread")
            .expect("wait for lspgate");
        let elapsed = start.elapsed();
        // Output pipes stay open while a server that inherited them lives on: bound it.
        let grace = deadline
            .saturating_duration_since(Instant::now())
            .max(REAP_GRACE);
        let stdout = stdout.recv_timeout(grace);
        let stderr = stderr.recv_timeout(grace);
        let out = Output {
            line,
            stdout: stdout.clone().unwrap_or_default(),
            stderr: stderr.clone().unwrap_or_default(),
            code: status.code(),
            elapsed,
            test: self,
        };
        if killed {
            out.kill_fake_servers();
            panic!(
                "watchdog: lspgate still running after {:?}, killed\n{out}",
                out.test.watchdog
            );
        }
        if stdout.is_err() || stderr.is_err() {
            out.kill_fake_servers();
            panic!("lspgate exited but its output pipes stayed open: a child outlived it\n{out}");
        }
        // Whatever the test expects, a panic is a bug.
        assert!(
            !out.stderr.contains("panicked at"),
            "lspgate panicked\n{out}"
        );
        out
    }
}

/// Reads a pipe to its end on a thread; the text arrives on the channel.
fn drain(mut pipe: impl Read + Send + 'static) -> crossbeam_channel::Receiver<String> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

use process::kill;

/// What one run produced. Assertion helpers panic with the whole run in the message.
pub struct Output {
    line: String,
    pub stdout: String,
    pub stderr: String,
    /// None when a signal ended the process.
    pub code: Option<i32>,
    pub elapsed: Duration,
    test: Test,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "command: {}", self.line)?;
        writeln!(f, "exit: {:?} after {:?}", self.code, self.elapsed)?;
        writeln!(f, "--- stdout ---\n{}", self.stdout)?;
        writeln!(f, "--- stderr ---\n{}", truncate(&self.stderr, 4000))?;
        let log =
            fs::read_to_string(self.test.private("fake").join("log.jsonl")).unwrap_or_default();
        if !log.is_empty() {
            writeln!(f, "--- fake-lsp log ---\n{}", truncate(&log, 4000))?;
        }
        Ok(())
    }
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

impl Output {
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Output {
        assert_eq!(self.code, Some(code), "unexpected exit status\n{self}");
        self
    }

    #[track_caller]
    pub fn assert_code_in(&self, codes: &[i32]) -> &Output {
        assert!(
            self.code.is_some_and(|code| codes.contains(&code)),
            "exit status not one of {codes:?}\n{self}"
        );
        self
    }

    #[track_caller]
    pub fn stdout_contains(&self, needle: &str) -> &Output {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{self}"
        );
        self
    }

    #[track_caller]
    pub fn stdout_lacks(&self, needle: &str) -> &Output {
        assert!(
            !self.stdout.contains(needle),
            "stdout has {needle:?}\n{self}"
        );
        self
    }

    #[track_caller]
    pub fn stderr_contains(&self, needle: &str) -> &Output {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{self}"
        );
        self
    }

    #[track_caller]
    pub fn assert_elapsed_below(&self, bound: Duration) -> &Output {
        assert!(
            self.elapsed < bound,
            "took {:?}, bound {bound:?}\n{self}",
            self.elapsed
        );
        self
    }

    /// The `<diagnostic_summary>` block's lines.
    #[track_caller]
    pub fn summary(&self) -> Vec<&str> {
        self.block("diagnostic_summary")
            .unwrap_or_else(|| panic!("no <diagnostic_summary> block\n{self}"))
    }

    /// The lines of a `<NAME>` block of the text output, if present.
    pub fn block(&self, name: &str) -> Option<Vec<&str>> {
        let open = format!("<{name}>\n");
        let close = format!("</{name}>");
        let start = self.stdout.find(&open)? + open.len();
        let end = start + self.stdout[start..].find(&close)?;
        Some(self.stdout[start..end].lines().collect())
    }

    /// The summary's `note:` lines (what was not checked, and why).
    pub fn notes(&self) -> Vec<&str> {
        self.summary()
            .into_iter()
            .filter(|line| line.trim_start().starts_with("note:"))
            .collect()
    }

    /// Stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|err| panic!("stdout is not JSON: {err}\n{self}"))
    }

    /// A workspace file's content now.
    pub fn file(&self, rel: impl AsRef<Path>) -> String {
        let path = self.test.path(rel);
        fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("read {}: {err}\n{self}", path.display()))
    }

    pub fn exists(&self, rel: impl AsRef<Path>) -> bool {
        self.test.path(rel).exists()
    }

    pub fn workspace(&self) -> &Path {
        self.test.workspace()
    }

    /// Ask the daemon what it holds (`diagnostics --format json`) until it has a
    /// diagnostic of `rel` (a file its server builds in its own time), or `bound`
    /// passes: whether it had, and the last answer.
    pub fn once_the_daemon_reports(self, rel: &str, bound: Duration) -> (bool, Output) {
        let uri = format!("file://{}/{rel}", self.workspace().display());
        let mut last = Some(self);
        let said = process::eventually(bound, || {
            let out = last
                .take()
                .expect("the last run")
                .again()
                .args(["diagnostics", "--format", "json"])
                .run();
            let said = out.json().as_array().is_some_and(|files| {
                files.iter().any(|f| {
                    f["uri"] == uri.as_str()
                        && f["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
                })
            });
            last = Some(out);
            said
        });
        (said, last.expect("the last run"))
    }

    /// Every file of the workspace but `.git`, with its bytes, now.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        self.test.snapshot()
    }

    /// What the fake servers of this test received and answered, one JSON value per
    /// event (`{"event": "recv", "method": ...}`, `{"event": "response", ...}`).
    #[track_caller]
    pub fn fake_log(&self) -> Vec<Value> {
        let text =
            fs::read_to_string(self.test.private("fake").join("log.jsonl")).unwrap_or_default();
        text.lines()
            .map(|line| {
                serde_json::from_str(line)
                    .unwrap_or_else(|err| panic!("bad log line {line:?}: {err}"))
            })
            .collect()
    }

    /// The methods the fake servers received, in order.
    pub fn fake_methods(&self) -> Vec<String> {
        self.fake_log()
            .iter()
            .filter(|event| event["event"] == "recv")
            .filter_map(|event| event["method"].as_str().map(str::to_owned))
            .collect()
    }

    /// The pids of every fake server this test started.
    pub fn fake_pids(&self) -> Vec<u32> {
        let text = fs::read_to_string(self.test.private("fake").join("pids")).unwrap_or_default();
        text.lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// Fails unless every fake server of this test is gone, allowing a short moment
    /// for the kernel to finish reaping. Also fails when no server was started at all,
    /// which would make the check vacuous.
    #[track_caller]
    pub fn assert_no_orphans(&self) -> &Output {
        let pids = self.fake_pids();
        assert!(!pids.is_empty(), "no fake server was started\n{self}");
        let alive = || -> Vec<u32> { pids.iter().copied().filter(|&p| fake_alive(p)).collect() };
        if !process::eventually(REAP_GRACE, || alive().is_empty()) {
            let alive = alive();
            self.kill_fake_servers();
            panic!("fake servers {alive:?} outlived lspgate by {REAP_GRACE:?}\n{self}");
        }
        self
    }

    fn kill_fake_servers(&self) {
        kill_fake_servers(&self.test.private("fake"));
    }

    /// The same test (workspace, environment, server) ready for another run.
    pub fn again(self) -> Test {
        let mut test = self.test;
        test.args.clear();
        test.stdin = None;
        test
    }
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let entries =
            fs::read_dir(dir).unwrap_or_else(|err| panic!("read {}: {err}", dir.display()));
        for entry in entries {
            let path = entry.expect("a dir entry").path();
            if path.is_dir() {
                if path.file_name() != Some(OsStr::new(".git")) {
                    walk(root, &path, files);
                }
            } else {
                let bytes =
                    fs::read(&path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
                files.insert(
                    path.strip_prefix(root).expect("inside the root").to_owned(),
                    bytes,
                );
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(root, root, &mut files);
    files
}

fn fake_pids(fake_dir: &Path) -> Vec<u32> {
    let text = fs::read_to_string(fake_dir.join("pids")).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect()
}

pub(crate) fn kill_fake_servers(fake_dir: &Path) {
    for pid in fake_pids(fake_dir)
        .into_iter()
        .filter(|&pid| fake_alive(pid))
    {
        kill(pid);
    }
}

/// Whether `pid` is a live (not zombie) fake-lsp: a zombie has exited already, and a
/// container's init may never reap it; the name guards against pid reuse.
fn fake_alive(pid: u32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // Format: `pid (comm) state ...`; comm may hold spaces and parentheses.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    state != Some("Z") && String::from_utf8_lossy(&cmdline).contains("fake-lsp")
}

/// The fake-lsp example binary, built on first use when missing or older than its
/// source (a plain `cargo test` builds examples, `cargo test --test integration` does
/// not).
pub fn fake_lsp() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let exe = env::current_exe().expect("current test binary");
        // <target>/<profile>/deps/<test binary>
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("test binary in <target>/<profile>/deps");
        let target_dir = profile_dir.parent().expect("a target dir");
        let path = profile_dir.join("examples").join("fake-lsp");
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fake_lsp.rs");
        if modified(&path) < modified(&source) {
            let profile = match profile_dir.file_name().and_then(OsStr::to_str) {
                Some("debug") | None => "dev",
                Some(other) => other,
            };
            let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args([
                    "build",
                    "--quiet",
                    "--example",
                    "fake-lsp",
                    "--profile",
                    profile,
                ])
                .arg("--manifest-path")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
                .arg("--target-dir")
                .arg(target_dir)
                .status()
                .expect("run cargo build --example fake-lsp");
            assert!(status.success(), "cargo build --example fake-lsp failed");
        }
        assert!(
            path.is_file(),
            "fake-lsp not found at {} after building it",
            path.display()
        );
        path
    })
}

/// A missing file is older than anything.
fn modified(path: &Path) -> SystemTime {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Whether a real server's command is on PATH. A missing server fails the test in CI
/// (`CI=true`), where every server is installed on purpose; elsewhere the test notes it
/// on stderr and the caller returns early.
#[allow(clippy::print_stderr)]
pub fn require_server(cmd: &str) -> bool {
    let found = env::var_os("PATH").is_some_and(|path| {
        env::split_paths(&path).any(|dir| {
            fs::metadata(dir.join(cmd))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    if !found {
        assert!(
            env::var("CI").as_deref() != Ok("true"),
            "{cmd} is not on PATH, and in CI every server must be"
        );
        eprintln!("note: {cmd} is not on PATH; this test checked nothing");
    }
    found
}

/// The pinned release of the official MCP Python SDK that `scripts/install-mcp-client.sh`
/// installs; the tests drive `lspgate mcp` with it.
pub const MCP_SDK: &str = "2.3.0";

/// The Python of the virtual environment `scripts/install-mcp-client.sh` makes under the
/// target directory, holding the official MCP SDK. When it is missing, a test fails in
/// CI (`CI=true`), where `scripts/test.sh` installs it; elsewhere it is noted on stderr
/// and the caller returns early, as for a missing language server.
#[allow(clippy::print_stderr)]
pub fn require_mcp_client() -> Option<PathBuf> {
    let exe = env::current_exe().expect("current test binary");
    // <target>/<profile>/deps/<test binary>
    let target_dir = exe
        .ancestors()
        .nth(3)
        .expect("test binary in <target>/<profile>/deps");
    let python = target_dir.join("mcp-venv/bin/python");
    let version = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned());
    if version.as_deref() == Some(MCP_SDK) {
        return Some(python);
    }
    let why = match version {
        Some(other) => format!("{} holds mcp {other}, not {MCP_SDK}", python.display()),
        None => format!("no MCP Python SDK at {}", python.display()),
    };
    assert!(
        env::var("CI").as_deref() != Ok("true"),
        "{why}: scripts/test.sh installs it (scripts/install-mcp-client.sh)"
    );
    eprintln!("note: {why} (run scripts/install-mcp-client.sh); this test checked nothing");
    None
}
