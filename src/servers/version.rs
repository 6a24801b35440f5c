//! How `lspgate servers` learns an installed server's version without starting it
//! as a server: from its package when it is a script (an npm package's
//! `package.json`, a PyPI distribution's `*.dist-info`), else from the first line of
//! what it prints for the arguments its family gives ([`version_args`]); `doctor`
//! runs those, in parallel and under a deadline.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes of a script read for its interpreter line and its imports.
const SCRIPT_HEAD_LIMIT: u64 = 4096;

/// How often the probes are polled. Short: most finish in a few milliseconds.
const POLL: Duration = Duration::from_millis(10);

/// Bytes of a probe's output read for its first line; a version is one short line.
const PROBE_OUTPUT_LIMIT: u64 = 4096;

/// Longest version string kept; anything longer is not a version line.
const MAX_VERSION_CHARS: usize = 120;

/// How long a `--version` probe may run before it is killed: for `servers`, its
/// server is then shown as "installed" with no version; for clangd's launch
/// (`clangd::adapt_launch`), it is taken for one without `--use-dirty-headers`. On an
/// idle machine a probe takes about 50 ms, but in CI, with the test suite running
/// servers on both cores, clangd 19's (its 129 MB libLLVM to load) ran past 10 s, and
/// so did rust-analyzer's through rustup; taken for clangd 14, a header's dry run went
/// unchecked (exit 3) with 2 s and with 10 s. As long as a server's own start may take
/// there; clangd's answer is kept per binary ([`probe_cached`]), so it is paid once.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The arguments that print the version of the program at `path`: `--version`,
/// unless its family says otherwise (gopls).
pub fn version_args(path: &Path) -> &'static [&'static str] {
    match path.file_name().and_then(OsStr::to_str) {
        Some(super::gopls::GOPLS) => super::gopls::VERSION_ARGS,
        _ => &["--version"],
    }
}

/// The version of the program at `path` read from its package, without running it:
/// the only way for the servers with no `--version` (see `pyright`).
pub fn from_package(path: &Path) -> Option<String> {
    npm_package_version(path).or_else(|| pip_package_version(path))
}

/// The version of an npm-installed server, read from its package's `package.json`
/// without running it. Servers written for node are scripts inside their package
/// (`/usr/bin/pyright-langserver` → `.../node_modules/pyright/langserver.index.js`).
fn npm_package_version(path: &Path) -> Option<String> {
    let script = path.canonicalize().ok()?;
    // A `.js` file, or an extensionless `#!/usr/bin/env node` one (`bin/tsgo`,
    // vscode-langservers-extracted's `bin/vscode-eslint-language-server`).
    let node_shebang = || {
        let mut head = [0u8; 64];
        let n = File::open(&script)
            .and_then(|mut f| f.read(&mut head))
            .unwrap_or(0);
        let first = String::from_utf8_lossy(&head[..n]);
        first.starts_with("#!") && first.lines().next().is_some_and(|l| l.ends_with("node"))
    };
    let is_script = matches!(
        script.extension().and_then(OsStr::to_str),
        Some("js" | "mjs" | "cjs")
    ) || (script.extension().is_none() && node_shebang());
    if !is_script {
        return None;
    }
    // The package root is a few levels up at most (`lib/cli.mjs`, `dist/bin/x.js`);
    // stop at `node_modules` so another package's manifest is never read.
    for dir in script.ancestors().skip(1).take(4) {
        if dir.file_name() == Some(OsStr::new("node_modules")) {
            return None;
        }
        let Ok(text) = crate::regular::read_to_string(dir.join("package.json")) else {
            continue;
        };
        let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
        return manifest
            .get("version")
            .and_then(serde_json::Value::as_str)
            .and_then(version_line);
    }
    None
}

/// The version of a server installed from PyPI whose entry point is a Python script
/// (`#!/venv/bin/python3`, `from basedpyright.langserver import main`), read from
/// its distribution's `PKG-VERSION.dist-info` beside the package, without running
/// it.
fn pip_package_version(path: &Path) -> Option<String> {
    let mut head = String::new();
    File::open(path)
        .ok()?
        .take(SCRIPT_HEAD_LIMIT)
        .read_to_string(&mut head)
        .ok()?;
    let interpreter = head.lines().next()?.strip_prefix("#!")?.trim();
    if !Path::new(interpreter)
        .file_name()
        .and_then(OsStr::to_str)
        .is_some_and(|n| n.starts_with("python"))
    {
        return None;
    }
    let package = head.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("from ")?;
        let module = rest.split_whitespace().next()?;
        module.split('.').next().map(str::to_string)
    })?;
    // `<env>/bin/python3` → `<env>/lib/python3.X/site-packages`.
    let env = Path::new(interpreter).parent()?.parent()?;
    let prefix = format!("{}-", package.replace('-', "_"));
    for lib in std::fs::read_dir(env.join("lib")).ok()?.flatten() {
        let site = lib.path().join("site-packages");
        for entry in std::fs::read_dir(&site).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(version) = name
                .strip_suffix(".dist-info")
                .and_then(|n| n.strip_prefix(&prefix))
            {
                return version_line(version);
            }
        }
    }
    None
}

/// The first non-empty line of some output, if it is short enough to be a version.
pub fn version_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    (line.chars().count() <= MAX_VERSION_CHARS).then(|| line.to_string())
}

/// One running version probe; its output goes to an anonymous file rather than a pipe,
/// so a probe that forks a child holding the output open cannot block us, and a chatty
/// one cannot fill a pipe and stall.
struct Probe {
    index: usize,
    child: Child,
    output: File,
}

/// The version of each installed command (`None` entries are skipped), all probed at
/// once and bounded together by `timeout`, each with `envs[i]` added to its
/// environment (the same for every server of a workspace).
pub fn probe_versions(
    paths: &[Option<PathBuf>],
    envs: &[&[(String, String)]],
    timeout: Duration,
) -> Vec<Option<String>> {
    let mut versions = vec![None; paths.len()];
    let mut probes = Vec::new();
    for (index, path) in paths.iter().enumerate() {
        let Some(path) = path else { continue };
        // The same program under two names is probed once (copied below).
        if paths[..index].contains(&Some(path.clone())) {
            continue;
        }
        match from_package(path) {
            Some(version) => versions[index] = Some(version),
            None => probes.extend(spawn_probe(
                index,
                path,
                envs.get(index).copied().unwrap_or_default(),
            )),
        }
    }
    for (index, output) in wait_all(probes, timeout) {
        versions[index] = output.as_deref().and_then(version_line);
    }
    for (index, path) in paths.iter().enumerate() {
        if let Some(first) = paths[..index].iter().position(|p| p.is_some() && p == path) {
            versions[index] = versions[first].clone();
        }
    }
    versions
}

/// [`probe_versions`] of one program, kept in the cache directory `cache` under the
/// program's identity: its real path, size, modification time and inode, and `env`.
/// The same binary prints the same line, and a cold run does not start it twice
/// (clangd's `--version`: about 50 ms of a 0.6 s check of lua). An upgraded program
/// is another file, so another identity, and is probed again. Nothing is kept for a
/// probe that failed; a cache that cannot be read or written is probed around.
pub fn probe_cached(
    path: &Path,
    env: &[(String, String)],
    timeout: Duration,
    cache: Option<&Path>,
) -> Option<String> {
    let file = cache
        .zip(identity(path, env))
        .map(|(dir, id)| dir.join("versions").join(id));
    let kept = file
        .as_ref()
        .and_then(|f| crate::regular::read_to_string(f).ok())
        .and_then(|text| version_line(&text));
    if kept.is_some() {
        return kept;
    }
    let probed = probe_versions(&[Some(path.to_path_buf())], &[env], timeout)
        .into_iter()
        .next()
        .flatten()?;
    if let Some(file) = file {
        // Best effort: a run that cannot keep it probes again next time.
        let _ = crate::regular::write_whole(&file, probed.as_bytes());
    }
    Some(probed)
}

/// What tells one installed program from another without running it (see
/// [`probe_cached`]), as a file name.
fn identity(path: &Path, env: &[(String, String)]) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let real = path.canonicalize().ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let mut hasher = sha1_smol::Sha1::new();
    hasher.update(real.as_os_str().as_encoded_bytes());
    for part in [meta.len(), meta.ino(), meta.dev()] {
        hasher.update(&part.to_le_bytes());
    }
    hasher.update(&meta.mtime().to_le_bytes());
    hasher.update(&meta.mtime_nsec().to_le_bytes());
    for (name, value) in env {
        hasher.update(format!("\0{name}={value}").as_bytes());
    }
    Some(hasher.digest().to_string())
}

/// Poll the probes until each has exited or `timeout` has passed, then kill the rest.
/// Returns each probe's output when it exited successfully, `None` otherwise.
fn wait_all(mut probes: Vec<Probe>, timeout: Duration) -> Vec<(usize, Option<String>)> {
    let deadline = Instant::now() + timeout;
    let mut done = Vec::with_capacity(probes.len());
    loop {
        let mut i = 0;
        while i < probes.len() {
            match probes[i].child.try_wait() {
                Ok(None) => i += 1,
                Ok(Some(status)) => {
                    let mut probe = probes.swap_remove(i);
                    let output = status.success().then(|| read_output(&mut probe.output));
                    done.push((probe.index, output.flatten()));
                }
                Err(_) => {
                    let probe = probes.swap_remove(i);
                    done.push((probe.index, None));
                }
            }
        }
        if probes.is_empty() {
            return done;
        }
        if Instant::now() >= deadline {
            for mut probe in probes {
                // Already gone if it exited since the last poll; either way, reap it.
                let _ = probe.child.kill();
                let _ = probe.child.wait();
                done.push((probe.index, None));
            }
            return done;
        }
        std::thread::sleep(POLL);
    }
}

/// The start of a probe's output, as text.
fn read_output(file: &mut File) -> Option<String> {
    file.rewind().ok()?;
    let mut bytes = Vec::new();
    file.by_ref()
        .take(PROBE_OUTPUT_LIMIT)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Start `<command> --version` (or its equivalent) with `env` added, no stdin and its
/// output in a temporary file.
fn spawn_probe(index: usize, path: &Path, env: &[(String, String)]) -> Option<Probe> {
    let output = tempfile::tempfile().ok()?;
    let stdout = output.try_clone().ok()?;
    // Some programs print their version on stderr; both go to the same file.
    let stderr = output.try_clone().ok()?;
    let child = Command::new(path)
        .args(version_args(path))
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .ok()?;
    Some(Probe {
        index,
        child,
        output,
    })
}

/// An executable shell script in `dir`, standing in for a server's program in tests
/// (here and in `doctor`).
#[cfg(test)]
pub(crate) fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_version_from_the_package_manifest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let package = dir.path().join("node_modules/pyright");
        std::fs::create_dir_all(package.join("dist")).expect("mkdir");
        std::fs::write(
            package.join("package.json"),
            r#"{"name": "pyright", "version": "1.1.414"}"#,
        )
        .expect("write manifest");
        let entry = script(&package, "langserver.index.js", "exit 1");
        let bin = dir.path().join("pyright-langserver");
        std::os::unix::fs::symlink(&entry, &bin).expect("symlink");
        assert_eq!(npm_package_version(&bin).as_deref(), Some("1.1.414"));
        // Not a node script: run it instead.
        let native = script(dir.path(), "native", "echo 1");
        assert_eq!(npm_package_version(&native), None);
        // No manifest inside the package: do not read one from elsewhere.
        let loose = dir.path().join("node_modules/other");
        std::fs::create_dir_all(&loose).expect("mkdir");
        let loose = script(&loose, "cli.js", "exit 1");
        assert_eq!(npm_package_version(&loose), None);
    }

    #[test]
    fn a_program_is_probed_once_until_it_is_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = dir.path().join("cache");
        let runs = dir.path().join("runs");
        let body = |v: &str| {
            format!(
                "echo run >> '{}'; echo 'clangd version {v}'",
                runs.display()
            )
        };
        let program = script(dir.path(), "clangd", &body("14.0.6"));
        let probe = || probe_cached(&program, &[], Duration::from_secs(10), Some(&cache));
        let runs_so_far = || std::fs::read_to_string(&runs).map_or(0, |t| t.lines().count());
        assert_eq!(probe().as_deref(), Some("clangd version 14.0.6"));
        assert_eq!(probe().as_deref(), Some("clangd version 14.0.6"));
        assert_eq!(runs_so_far(), 1, "the second answer came from the cache");
        // An upgrade writes another file in its place (of another size: the inode
        // may be reused, and the modification time's clock is coarse).
        std::fs::remove_file(&program).expect("remove");
        script(dir.path(), "clangd", &body("19.1.7-1"));
        assert_eq!(probe().as_deref(), Some("clangd version 19.1.7-1"));
        assert_eq!(runs_so_far(), 2);
        // Without a cache directory, every call probes.
        assert!(probe_cached(&program, &[], Duration::from_secs(10), None).is_some());
        assert_eq!(runs_so_far(), 3);
    }

    #[test]
    fn version_line_skips_blank_lines_and_rejects_prose() {
        assert_eq!(version_line("\n \n v1 \nx").as_deref(), Some("v1"));
        assert_eq!(version_line(""), None);
        assert_eq!(version_line(&"x".repeat(500)), None);
    }
}
