//! The toolchain an untrusted workspace may not choose.
//!
//! rustup's proxies (`~/.cargo/bin/rust-analyzer`, `cargo`, `rustc`) run the
//! toolchain that a `rust-toolchain.toml` or `rust-toolchain` file in their working
//! directory or above names, and such a file may name a directory
//! (`[toolchain] path = "..."`) whose programs are then run: a repository could
//! plant its own `rust-analyzer` or `cargo`. `go` (and so gopls) downloads and runs
//! the release a `toolchain` line of `go.mod` or `go.work` asks for, under its default
//! `GOTOOLCHAIN=auto`. So in an untrusted workspace every process lspgate starts
//! (servers and version probes; what a server starts inherits it) gets the
//! toolchain the user has outside the workspace, in the variables those tools give
//! precedence over any file:
//! - `RUSTUP_TOOLCHAIN`: the user's own value if set, else what `rustup default`
//!   says. `rustup default` reads only rustup's settings (never a directory's files),
//!   and is run from `/` all the same. Where no toolchain can be named (rustup is
//!   there but has no default), rust-analyzer is not run and its files are reported
//!   as not checked: a bad value would not do, since rustup takes a value that is not
//!   a toolchain name as a path.
//! - `GOTOOLCHAIN`: `local` (the installed `go`), unless the user's own value names
//!   one release (`go1.22.3`) rather than letting files choose (`auto`, `path`,
//!   `+auto`, `+path`).
//!
//! Without rustup (standalone `cargo`, a distro's `rust-analyzer`) no file chooses a
//! Rust toolchain, and nothing is pinned.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::ServerSpec;

pub const RUSTUP_TOOLCHAIN: &str = "RUSTUP_TOOLCHAIN";
pub const GOTOOLCHAIN: &str = "GOTOOLCHAIN";

/// The only variables a server's `env` may set (the daemon refuses others).
pub const PINNED: &[&str] = &[RUSTUP_TOOLCHAIN, GOTOOLCHAIN];

/// The Rust toolchain of the user, outside any workspace.
#[derive(Debug, Clone, PartialEq)]
pub enum Rust {
    /// No rustup: no file chooses a Rust toolchain.
    NoRustup,
    Toolchain(String),
    /// rustup is there but names no toolchain; why.
    Unknown(String),
}

/// Pin the toolchains of every server of an untrusted workspace (see the module).
/// `env` reads this process's environment; `rust` is the user's Rust toolchain.
pub(super) fn pin(
    servers: &mut [ServerSpec],
    rust: &Rust,
    env: &dyn Fn(&str) -> Option<String>,
    notes: &mut Vec<String>,
) {
    let mut pins = vec![(GOTOOLCHAIN.to_string(), go_toolchain(env))];
    match rust {
        Rust::NoRustup => {}
        Rust::Toolchain(name) => pins.push((RUSTUP_TOOLCHAIN.to_string(), name.clone())),
        Rust::Unknown(why) => {
            for spec in servers
                .iter_mut()
                .filter(|s| s.name == super::rust_analyzer::RUST_ANALYZER && !s.disabled)
            {
                spec.disabled = true;
                let reason = format!(
                    "no Rust toolchain to pin for an untrusted workspace ({why}), and \
                     rustup would run the one a file of the workspace names"
                );
                for ext in &spec.extensions {
                    spec.not_checked.push((ext.clone(), reason.clone()));
                }
                spec.coverage.why = Some(format!("not run: {reason}"));
                notes.push(format!(
                    "{} is not run: {reason}; set RUSTUP_TOOLCHAIN, run `rustup default \
                     stable`, or trust the project",
                    spec.name
                ));
            }
        }
    }
    for spec in servers {
        for (key, value) in &pins {
            spec.env.retain(|(k, _)| k != key);
            spec.env.push((key.clone(), value.clone()));
        }
    }
}

/// Whether `spec`, in an untrusted workspace, would run through rustup with no
/// toolchain to pin ([`Rust::Unknown`]): then nothing of it is run, not even for its
/// version.
pub fn unpinned(spec: &ServerSpec, which: &dyn Fn(&str) -> Option<PathBuf>) -> bool {
    spec.name == super::rust_analyzer::RUST_ANALYZER && matches!(user_rust(which), Rust::Unknown(_))
}

/// `GOTOOLCHAIN` for an untrusted workspace: the user's, when it names a release,
/// else `local`.
fn go_toolchain(env: &dyn Fn(&str) -> Option<String>) -> String {
    match env(GOTOOLCHAIN) {
        Some(v) if !v.is_empty() && v != "auto" && v != "path" && !v.contains('+') => v,
        _ => "local".to_string(),
    }
}

/// The user's Rust toolchain, found once per process; programs are looked up with
/// `which`.
pub fn user_rust(which: &dyn Fn(&str) -> Option<PathBuf>) -> &'static Rust {
    static RUST: OnceLock<Rust> = OnceLock::new();
    RUST.get_or_init(|| {
        let env = |name: &str| std::env::var(name).ok();
        rust_toolchain(&env, find_rustup(&env, which).as_deref())
    })
}

fn rust_toolchain(env: &dyn Fn(&str) -> Option<String>, rustup: Option<&Path>) -> Rust {
    if let Some(own) = env(RUSTUP_TOOLCHAIN).filter(|v| !v.trim().is_empty()) {
        return Rust::Toolchain(own);
    }
    let Some(rustup) = rustup else {
        return Rust::NoRustup;
    };
    let output = Command::new(rustup)
        .arg("default")
        .current_dir("/")
        // Never install anything to answer.
        .env("RUSTUP_AUTO_INSTALL", "0")
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => return Rust::Unknown(format!("`{} default`: {e}", rustup.display())),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    match default_toolchain(&stdout) {
        Some(name) if output.status.success() => Rust::Toolchain(name),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let said = stderr
                .lines()
                .chain(stdout.lines())
                .find(|l| !l.trim().is_empty());
            Rust::Unknown(format!(
                "`rustup default` says {:?}",
                said.unwrap_or("nothing").trim()
            ))
        }
    }
}

/// The toolchain `rustup default` prints: `stable-x86_64-unknown-linux-gnu (default)`.
fn default_toolchain(stdout: &str) -> Option<String> {
    let name = stdout.lines().next()?.split_whitespace().next()?;
    // A name, never a path: rustup takes a value it cannot parse as a name for one.
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    plain.then(|| name.to_string())
}

/// rustup on `PATH`, else in `$CARGO_HOME/bin` or `~/.cargo/bin`: rust-analyzer finds
/// `cargo` there even when it is not on `PATH`.
fn find_rustup(
    env: &dyn Fn(&str) -> Option<String>,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) -> Option<PathBuf> {
    if let Some(found) = which("rustup") {
        return Some(found);
    }
    let homes = [
        env("CARGO_HOME").map(PathBuf::from),
        env("HOME").map(|h| Path::new(&h).join(".cargo")),
    ];
    homes
        .into_iter()
        .flatten()
        .filter(|home| home.is_absolute())
        .map(|home| home.join("bin").join("rustup"))
        .find_map(|p| which(&p.display().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn go_keeps_a_named_release_only() {
        assert_eq!(go_toolchain(&env_of(&[])), "local");
        for files_choose in ["auto", "path", "go1.21+auto", "go1.21+path", ""] {
            let env = move |n: &str| (n == GOTOOLCHAIN).then(|| files_choose.to_string());
            assert_eq!(go_toolchain(&env), "local", "{files_choose}");
        }
        let env = env_of(&[(GOTOOLCHAIN, "go1.22.3")]);
        assert_eq!(go_toolchain(&env), "go1.22.3");
    }

    #[test]
    fn rust_is_the_users_own_or_rustups_default() {
        let own = env_of(&[(RUSTUP_TOOLCHAIN, "nightly")]);
        assert_eq!(
            rust_toolchain(&own, None),
            Rust::Toolchain("nightly".into())
        );
        assert_eq!(rust_toolchain(&env_of(&[]), None), Rust::NoRustup);
        let dir = tempfile::tempdir().expect("tempdir");
        let good = super::super::version::script(
            dir.path(),
            "rustup",
            "echo 'stable-x86_64-unknown-linux-gnu (default)'",
        );
        assert_eq!(
            rust_toolchain(&env_of(&[]), Some(&good)),
            Rust::Toolchain("stable-x86_64-unknown-linux-gnu".into())
        );
        let none = super::super::version::script(
            dir.path(),
            "none",
            "echo 'error: no default toolchain is configured' >&2; exit 1",
        );
        assert!(matches!(
            rust_toolchain(&env_of(&[]), Some(&none)),
            Rust::Unknown(why) if why.contains("no default toolchain")
        ));
        assert_eq!(default_toolchain("../evil (default)"), None);
    }
}
