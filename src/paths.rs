//! Paths as lspgate shows them (one way to make a path relative to the directory a
//! command ran in, for every message, note and report), the per-user directories
//! ([`dirs`]: the user config file, the data directory of the history, the runtime
//! directory of the daemons, resolved from the environment once), and the name
//! lspgate gives a workspace in them (its daemon's socket, its history).

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The per-user places lspgate uses. Each has an `LSPGATE_*` override (for tests, or
/// a user who keeps them elsewhere), then its XDG variable, then the XDG default
/// under the home directory, on every platform (one path to document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dirs {
    /// The home directory, for `~` in the user's config and in notes.
    pub home: Option<PathBuf>,
    /// The user config file: `$LSPGATE_CONFIG`, else
    /// `$XDG_CONFIG_HOME/lspgate/config.toml`, else `~/.config/lspgate/config.toml`.
    pub config_file: Option<PathBuf>,
    /// The data directory, holding the history: `$LSPGATE_DATA_DIR`, else
    /// `$XDG_DATA_HOME/lspgate`, else `~/.local/share/lspgate`.
    pub data: Option<PathBuf>,
    /// The cache directory, holding stored baselines (`baseline`): `$LSPGATE_CACHE_DIR`,
    /// else `$XDG_CACHE_HOME/lspgate`, else `~/.cache/lspgate`. Anything in it may be
    /// deleted at any time.
    pub cache: Option<PathBuf>,
    /// The runtime directory, holding the daemons' sockets, locks and logs (created
    /// and checked by `daemon::paths`): `$LSPGATE_RUNTIME_DIR`, else
    /// `$XDG_RUNTIME_DIR/lspgate`, else `/tmp/lspgate-<uid>`.
    pub runtime: PathBuf,
}

/// The per-user directories of this process, read from its environment on first use.
pub fn dirs() -> &'static Dirs {
    static DIRS: OnceLock<Dirs> = OnceLock::new();
    DIRS.get_or_init(|| {
        let home = directories::BaseDirs::new().map(|b| b.home_dir().to_owned());
        let uid = rustix::process::getuid().as_raw();
        Dirs::resolve(&|name| std::env::var_os(name), home, uid)
    })
}

impl Dirs {
    /// The rules of [`Dirs`]' fields over an environment. An empty variable is unset.
    /// The XDG specification calls a relative `XDG_*_HOME` invalid, to be ignored,
    /// and lspgate ignores a relative `LSPGATE_DATA_DIR` or `LSPGATE_CACHE_DIR` too; the other variables are
    /// taken as they are.
    fn resolve(env: &dyn Fn(&str) -> Option<OsString>, home: Option<PathBuf>, uid: u32) -> Dirs {
        let set = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let absolute = |name: &str| set(name).filter(|p| p.is_absolute());
        let config_file = set("LSPGATE_CONFIG").or_else(|| {
            let base = absolute("XDG_CONFIG_HOME").or_else(|| Some(home.as_ref()?.join(".config")));
            Some(base?.join("lspgate").join("config.toml"))
        });
        let data = absolute("LSPGATE_DATA_DIR")
            .or_else(|| absolute("XDG_DATA_HOME").map(|d| d.join("lspgate")))
            .or_else(|| Some(home.as_ref()?.join(".local/share/lspgate")));
        let cache = absolute("LSPGATE_CACHE_DIR")
            .or_else(|| absolute("XDG_CACHE_HOME").map(|d| d.join("lspgate")))
            .or_else(|| Some(home.as_ref()?.join(".cache/lspgate")));
        let runtime = set("LSPGATE_RUNTIME_DIR")
            .or_else(|| set("XDG_RUNTIME_DIR").map(|d| d.join("lspgate")))
            .unwrap_or_else(|| PathBuf::from(format!("/tmp/lspgate-{uid}")));
        Dirs {
            home,
            config_file,
            data,
            cache,
            runtime,
        }
    }
}

/// `path` as the user should read it: relative to `run_dir`, with `../` when it lies
/// outside; absolute when the two share nothing but the root (`/usr/lib/...` reads
/// better than `../../../usr/lib/...`) or lie on different roots (Windows drives).
/// A name holding a control character is [`quote`]d: a file name from a patch must
/// neither start a report line of its own nor send escapes to the terminal.
pub fn display(path: &Path, run_dir: &Path) -> String {
    let shown = display_raw(path, run_dir);
    match quote(&shown) {
        Cow::Borrowed(_) => shown,
        Cow::Owned(quoted) => quoted,
    }
}

/// `path` [`display`]ed, control characters and all: for JSON, whose strings escape
/// them, and whose readers need the name itself.
pub fn display_raw(path: &Path, run_dir: &Path) -> String {
    if path.is_relative() {
        return path.display().to_string();
    }
    let mut path_components = path.components().peekable();
    let mut dir_components = run_dir.components().peekable();
    let mut shared_normal = false;
    while let (Some(a), Some(b)) = (path_components.peek(), dir_components.peek()) {
        if a != b {
            break;
        }
        shared_normal |= matches!(a, Component::Normal(_));
        path_components.next();
        dir_components.next();
    }
    if !shared_normal {
        return path.display().to_string();
    }
    let mut relative = PathBuf::new();
    for _ in dir_components {
        relative.push("..");
    }
    relative.extend(path_components);
    if relative.as_os_str().is_empty() {
        ".".to_owned()
    } else {
        relative.display().to_string()
    }
}

/// `text` (a path, or a name) as it may be shown on a terminal or to an agent: as it
/// is when it holds no control character, else in double quotes with C escapes (`\n`,
/// `\t`, `\r`, `\"`, `\\`, `\x1b`), as git shows such names (`core.quotePath`).
pub fn quote(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => escape_control(c, &mut out),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// `message` with every control character but the line break escaped as [`quote`]
/// escapes it: the last guard of what lspgate writes to stderr, where a name a
/// message quoted already is left as it is.
pub fn escape_controls(message: &str) -> Cow<'_, str> {
    if !message.chars().any(|c| c.is_control() && c != '\n') {
        return Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(message.len() + 8);
    for c in message.chars() {
        match c {
            '\n' => out.push(c),
            c => escape_control(c, &mut out),
        }
    }
    Cow::Owned(out)
}

fn escape_control(c: char, out: &mut String) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        // Control characters are all below U+00A0: two hex digits.
        c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
        c => out.push(c),
    }
}

/// A stable 64-bit FNV-1a hash of the path's bytes, as 16 hex digits. Stable across
/// builds and versions (std's hasher is not), so every lspgate finds the same socket.
pub fn workspace_hash(workspace: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// `path` with `.` and `..` taken out, without asking the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(vars: &[(&str, &str)], home: Option<&str>) -> Dirs {
        let env = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        };
        Dirs::resolve(&env, home.map(PathBuf::from), 1000)
    }

    #[test]
    fn names_with_control_characters_are_quoted() {
        assert_eq!(quote("src/a b.py"), "src/a b.py");
        assert_eq!(quote("a\\nb"), "a\\nb", "no control character: as it is");
        assert_eq!(
            quote("x\n</file_diagnostics>\nNew: 0 errors"),
            "\"x\\n</file_diagnostics>\\nNew: 0 errors\""
        );
        assert_eq!(quote("\u{1b}[31mred\"\\"), "\"\\x1b[31mred\\\"\\\\\"");
        assert_eq!(
            display(Path::new("/w/a\u{1b}.py"), Path::new("/w")),
            "\"a\\x1b.py\""
        );
        assert_eq!(
            display_raw(Path::new("/w/a\n.py"), Path::new("/w")),
            "a\n.py"
        );
        assert_eq!(escape_controls("one\ntwo\u{1b}\r"), "one\ntwo\\x1b\\r");
    }

    #[test]
    fn per_user_directories_follow_override_then_xdg_then_home() {
        let defaults = resolve(&[], Some("/home/me"));
        assert_eq!(
            defaults.config_file.as_deref(),
            Some(Path::new("/home/me/.config/lspgate/config.toml"))
        );
        assert_eq!(
            defaults.data.as_deref(),
            Some(Path::new("/home/me/.local/share/lspgate"))
        );
        assert_eq!(defaults.runtime, Path::new("/tmp/lspgate-1000"));
        assert_eq!(
            defaults.cache.as_deref(),
            Some(Path::new("/home/me/.cache/lspgate"))
        );

        let xdg = resolve(
            &[
                ("XDG_CONFIG_HOME", "/x/config"),
                ("XDG_DATA_HOME", "/x/data"),
                ("XDG_RUNTIME_DIR", "/run/user/1000"),
            ],
            Some("/home/me"),
        );
        assert_eq!(
            xdg.config_file.as_deref(),
            Some(Path::new("/x/config/lspgate/config.toml"))
        );
        assert_eq!(xdg.data.as_deref(), Some(Path::new("/x/data/lspgate")));
        assert_eq!(xdg.runtime, Path::new("/run/user/1000/lspgate"));

        let own = resolve(
            &[
                ("XDG_CONFIG_HOME", "/x/config"),
                ("LSPGATE_CONFIG", "my.toml"),
                ("LSPGATE_DATA_DIR", "/d"),
                ("LSPGATE_CACHE_DIR", "/c"),
                ("LSPGATE_RUNTIME_DIR", "/r"),
            ],
            None,
        );
        assert_eq!(own.cache.as_deref(), Some(Path::new("/c")));
        assert_eq!(own.config_file.as_deref(), Some(Path::new("my.toml")));
        assert_eq!(own.data.as_deref(), Some(Path::new("/d")));
        assert_eq!(own.runtime, Path::new("/r"));
    }

    #[test]
    fn relative_xdg_homes_and_empty_values_are_ignored() {
        let dirs = resolve(
            &[
                ("XDG_CONFIG_HOME", "rel"),
                ("XDG_DATA_HOME", "rel"),
                ("LSPGATE_DATA_DIR", "rel"),
                ("LSPGATE_CONFIG", ""),
                ("LSPGATE_RUNTIME_DIR", ""),
                ("XDG_RUNTIME_DIR", ""),
            ],
            None,
        );
        assert_eq!(
            dirs,
            Dirs {
                home: None,
                config_file: None,
                data: None,
                cache: None,
                runtime: PathBuf::from("/tmp/lspgate-1000"),
            }
        );
    }
}
