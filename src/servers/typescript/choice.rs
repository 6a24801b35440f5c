//! Which TypeScript server checks a workspace: typescript-language-server (which runs
//! TypeScript 6's `tsserver.js`) or TypeScript 7's own server, decided once per
//! workspace from the project's TypeScript; and, for an untrusted workspace, which
//! tsserver typescript-language-server may run ([`pin_tsserver`]).
//!
//! The rule ([`decide`]):
//! - a project on TypeScript 7 (`node_modules/typescript` at 7 or newer, or
//!   `node_modules/@typescript/native-preview`) is checked by TypeScript 7: its own
//!   compiler when the workspace is trusted, else one installed outside it (`tsgo` on
//!   `PATH`, or `tsc` on `PATH` when that is TypeScript 7);
//! - a project on TypeScript 6 or older is checked by typescript-language-server;
//! - a project with no TypeScript of its own by the first installed, in preference
//!   order (typescript-language-server, then TypeScript 7).
//!
//! When the only compiler at hand is another major version than the project's
//! (a TypeScript 7 project and only TypeScript 6, or the reverse), its files are
//! reported as not checked, with a note, exit 3 (docs/SPEC.md section 4): another compiler's
//! verdict is not the project's.
//!
//! A program inside the workspace is the project's code: like typescript-language-
//! server's tsserver (issue 10), it runs only in a trusted workspace.
//!
//! Programs are looked up with the `which` the caller passes (`config::which`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{TSGO, TSLS};
use crate::servers::{Origin, ServerSpec, merge_json};

/// A TypeScript program and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    pub path: PathBuf,
    /// The version in its package's `package.json`.
    pub version: String,
    /// Inside the workspace (the project's own).
    pub project: bool,
}

/// What the choice depends on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Situation {
    /// The project's TypeScript version, if it has one.
    pub project: Option<String>,
    /// The TypeScript 7 program a run may use (the project's only when trusted).
    pub ts7: Option<Program>,
    /// The project's own TypeScript 7 program, not usable because the workspace is
    /// not trusted.
    pub untrusted_project_ts7: Option<Program>,
    /// typescript-language-server is installed and enabled: the version of the
    /// TypeScript it runs, when known.
    pub tsls: Option<Option<String>>,
}

/// The choice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Leave the table alone: preference order decides (no TypeScript in the
    /// project), or nothing is installed (the run reports the missing server).
    Order,
    /// typescript-language-server, not TypeScript 7: `why` for tsgo.
    Tsls { why: String },
    /// TypeScript 7's server with this program: `why` for both.
    Tsgo { program: PathBuf, why: String },
    /// Neither: the only compiler at hand is another major version than the
    /// project's. The files are not checked; `why` says so.
    Neither { why: String },
}

/// Major version of a semver-ish string (`7.0.2`, `7.0.0-dev.20260707.2`).
pub fn major(version: &str) -> Option<u64> {
    version.split(['.', '-']).next()?.parse().ok()
}

/// The manifest (`package.json`) of the package at `dir`.
fn manifest(dir: &Path) -> Option<Value> {
    serde_json::from_str(&crate::regular::read_to_string(dir.join("package.json")).ok()?).ok()
}

/// The `version` of the package at `dir`.
fn package_version(dir: &Path) -> Option<String> {
    manifest(dir)?
        .get("version")?
        .as_str()
        .filter(|v| !v.is_empty() && v.len() < 64)
        .map(str::to_string)
}

/// The project's TypeScript 7 program at `workspace`, with its version; or its
/// TypeScript version when that is older (no program to run).
fn project_typescript(workspace: &Path) -> (Option<String>, Option<Program>) {
    let modules = workspace.join("node_modules");
    let typescript = modules.join("typescript");
    let preview = modules.join("@typescript/native-preview");
    let version = package_version(&typescript);
    if let Some(v) = &version
        && major(v).is_some_and(|m| m >= 7)
    {
        let program = typescript.join("bin/tsc");
        if program.is_file() {
            return (
                version.clone(),
                Some(Program {
                    path: program,
                    version: v.clone(),
                    project: true,
                }),
            );
        }
    }
    if let Some(v) = package_version(&preview) {
        let program = preview.join("bin/tsgo");
        if program.is_file() && version.as_deref().and_then(major).is_none_or(|m| m >= 7) {
            return (
                Some(v.clone()),
                Some(Program {
                    path: program,
                    version: v,
                    project: true,
                }),
            );
        }
    }
    (version, None)
}

/// TypeScript 7 installed outside the workspace: `tsgo` on PATH, else `tsc` on PATH
/// when its package is TypeScript 7 or newer.
fn installed_ts7(workspace: &Path, which: &dyn Fn(&str) -> Option<PathBuf>) -> Option<Program> {
    ["tsgo", "tsc"].into_iter().find_map(|command| {
        let found = which(command)?;
        let real = std::fs::canonicalize(&found).ok()?;
        if real.starts_with(workspace) {
            return None;
        }
        // `<package>/bin/<command>`.
        let version = package_version(real.parent()?.parent()?)?;
        major(&version).is_some_and(|m| m >= 7).then_some(Program {
            path: found,
            version,
            project: false,
        })
    })
}

/// The native executable a TypeScript 7 launcher (`<package>/bin/tsgo` of
/// `@typescript/native-preview`, `<package>/bin/tsc` of `typescript` 7) would start:
/// `lib/<bin>` of its platform package (`@typescript/native-preview-linux-x64`), found
/// as node resolves it from the package, nested or hoisted. Started directly, it
/// spares each cold run node's start-up before the server's, about 60 ms (the
/// launcher only `execve`s the executable). None where it is not installed so.
pub fn native_executable(launcher: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(launcher).ok()?;
    let package = real.parent()?.parent()?;
    let manifest = manifest(package)?;
    let base = manifest.get("name")?.as_str()?.rsplit('/').next()?;
    let bin = if base == "typescript" { "tsc" } else { "tsgo" };
    let wanted = platform_package(base);
    let nested = std::iter::once(package.join("node_modules"));
    let hoisted = package
        .ancestors()
        .skip(1)
        .filter(|d| d.file_name() == Some(OsStr::new("node_modules")));
    nested
        .chain(hoisted.map(Path::to_path_buf))
        .map(|modules| modules.join(&wanted).join("lib").join(bin))
        .find(|exe| exe.is_file())
}

/// The package holding the native executable of TypeScript 7's package `base` on this
/// machine, named as node names the platform (`@typescript/native-preview-linux-x64`).
fn platform_package(base: &str) -> String {
    let platform = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("@typescript/{base}-{platform}-{arch}")
}

/// Whether `command` is a TypeScript 7 program a run in `workspace` may start: one
/// installed outside it, or (trusted) the project's own. The daemon's check of a
/// client's tsgo command ([`super::super::chosen_for_workspace`]).
pub fn permitted(command: &str, workspace: &Path, trusted: bool) -> bool {
    let Ok(real) = std::fs::canonicalize(command) else {
        return false;
    };
    let inside = Path::new(command).starts_with(workspace) || real.starts_with(workspace);
    if inside && !trusted {
        return false;
    }
    let name = real.file_name().and_then(OsStr::to_str);
    match name {
        Some("tsgo") | Some("tsc") => real
            .parent()
            .and_then(Path::parent)
            .and_then(package_version)
            .and_then(|v| major(&v))
            .is_some_and(|m| m >= 7),
        _ => false,
    }
}

/// Gather the situation of `workspace` from the table and the disk.
pub fn situation(
    servers: &[ServerSpec],
    workspace: &Path,
    trusted: bool,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) -> Situation {
    let (project, project_ts7) = project_typescript(workspace);
    let configured = servers
        .iter()
        .find(|s| s.name == TSGO && s.origin != Origin::BuiltIn && !s.disabled)
        .and_then(|s| {
            // A command the user (or a trusted project) gave it: theirs to vouch for.
            let path = which(&s.command)?;
            Some(Program {
                version: String::new(),
                project: false,
                path,
            })
        });
    let tsgo_enabled = servers.iter().any(|s| s.name == TSGO && !s.disabled);
    let (ts7, untrusted_project_ts7) = match project_ts7 {
        Some(p) if trusted => (Some(p), None),
        Some(p) => (
            configured.or_else(|| installed_ts7(workspace, which)),
            Some(p),
        ),
        None => (configured.or_else(|| installed_ts7(workspace, which)), None),
    };
    // Turned off by a config file: no TypeScript 7 at hand.
    let ts7 = ts7.filter(|_| tsgo_enabled);
    let tsls = servers
        .iter()
        .find(|s| s.name == TSLS && !s.disabled)
        .and_then(|s| which(&s.command).map(|program| (s, program)))
        .map(|(s, program)| {
            let tsserver = s
                .initialization_options
                .as_ref()
                .and_then(|o| o.pointer("/tsserver/path"))
                .and_then(|p| p.as_str())
                .map(PathBuf::from)
                .or_else(|| installed_tsserver(&program, workspace, which));
            // `<package>/lib/tsserver.js`.
            tsserver
                .as_deref()
                .and_then(Path::parent)
                .and_then(Path::parent)
                .and_then(package_version)
        });
    Situation {
        project,
        ts7,
        untrusted_project_ts7,
        tsls,
    }
}

fn described(p: &Program) -> String {
    if p.version.is_empty() {
        p.path.display().to_string()
    } else {
        format!("{} (TypeScript {})", p.path.display(), p.version)
    }
}

/// The rule of the module doc, as a pure function of the situation.
pub fn decide(s: &Situation) -> Decision {
    let project_major = s.project.as_deref().and_then(major);
    let tsls_ts = |s: &Situation| match &s.tsls {
        Some(Some(v)) => format!("TypeScript {v} (typescript-language-server)"),
        _ => "typescript-language-server's TypeScript".to_string(),
    };
    match (project_major, s.project.as_deref()) {
        (Some(m), Some(version)) if m >= 7 => match &s.ts7 {
            Some(p) if p.project => Decision::Tsgo {
                program: p.path.clone(),
                why: format!(
                    "the project is on TypeScript {version}: its own compiler {} runs it, \
                     the workspace being trusted",
                    p.path.display()
                ),
            },
            Some(p) => Decision::Tsgo {
                program: p.path.clone(),
                why: format!(
                    "the project is on TypeScript {version}; {}, so the TypeScript 7 \
                     installed at {} checks it",
                    if s.untrusted_project_ts7.is_some() {
                        "its own compiler is not run in an untrusted workspace"
                    } else {
                        "it has no TypeScript 7 program of its own"
                    },
                    described(p)
                ),
            },
            None => {
                let mut why = format!(
                    "the project is on TypeScript {version}, and no TypeScript 7 is at hand"
                );
                if s.untrusted_project_ts7.is_some() {
                    why.push_str(" (its own is not run in an untrusted workspace)");
                }
                if s.tsls.is_some() {
                    why.push_str(&format!(
                        "; the only compiler installed is {}, another major version",
                        tsls_ts(s)
                    ));
                    Decision::Neither { why }
                } else {
                    Decision::Order
                }
            }
        },
        (Some(_), Some(version)) => {
            if s.tsls.is_some() {
                Decision::Tsls {
                    why: format!(
                        "the project is on TypeScript {version}, which typescript-language-server runs"
                    ),
                }
            } else if let Some(p) = &s.ts7 {
                Decision::Neither {
                    why: format!(
                        "the project is on TypeScript {version}, and the only compiler at hand \
                         is {}, another major version (typescript-language-server with \
                         typescript@6 checks it)",
                        described(p)
                    ),
                }
            } else {
                Decision::Order
            }
        }
        _ => match (&s.tsls, &s.ts7) {
            (None, Some(p)) => Decision::Tsgo {
                program: p.path.clone(),
                why: format!(
                    "the project has no TypeScript of its own, and the installed TypeScript \
                     is {}",
                    described(p)
                ),
            },
            _ => Decision::Order,
        },
    }
}

/// Apply [`decide`] to the table; notes for the user go to `notes`.
pub fn choose(
    servers: &mut [ServerSpec],
    workspace: &Path,
    trusted: bool,
    notes: &mut Vec<String>,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) {
    if !servers.iter().any(|s| s.name == TSGO || s.name == TSLS) {
        return;
    }
    let situation = situation(servers, workspace, trusted, which);
    let decision = decide(&situation);
    // The installed program, whatever the decision, so that a missing tsgo is said
    // as such and a present one runs from where it was found.
    let fallback = situation.ts7.as_ref().map(|p| p.path.clone());
    for spec in servers.iter_mut() {
        let is_tsgo = spec.name == TSGO;
        let is_tsls = spec.name == TSLS;
        if !(is_tsgo || is_tsls) || spec.disabled {
            continue;
        }
        if is_tsgo
            && spec.origin == Origin::BuiltIn
            && let Some(p) = match &decision {
                Decision::Tsgo { program, .. } => Some(program.clone()),
                _ => fallback.clone(),
            }
        {
            let program = native_executable(&p).unwrap_or(p);
            spec.command = program.display().to_string();
        }
        match &decision {
            Decision::Order => {}
            Decision::Tsls { why } => {
                if is_tsgo {
                    spec.disabled = true;
                    spec.coverage.why = Some(format!("not used here: {why}"));
                } else {
                    spec.coverage.why = Some(why.clone());
                }
            }
            Decision::Tsgo { why, .. } => {
                if is_tsls {
                    spec.disabled = true;
                    spec.coverage.why = Some(format!("not used here: {why}"));
                } else {
                    spec.coverage.why = Some(why.clone());
                }
            }
            Decision::Neither { why } => {
                spec.coverage.why = Some(format!("not used here: {why}"));
                if is_tsls {
                    for ext in &spec.extensions {
                        spec.not_checked.push((ext.clone(), why.clone()));
                    }
                }
                spec.disabled = true;
            }
        }
    }
    if let Decision::Neither { why } = &decision {
        notes.push(format!(
            "TypeScript files are not checked: {why} (install the project's major version of \
             TypeScript, see `lspgate servers`)"
        ));
    }
}

/// typescript-language-server runs the tsserver it finds in the workspace
/// (`node_modules/typescript`, `.yarn/sdks/typescript`, `.vscode/pnpify/typescript`)
/// before its own: checking a change that adds one would run the change's JavaScript.
/// Unless the workspace is trusted, its `tsserver.path` is set to the installed
/// typescript's `lib/tsserver.js`, found as typescript-language-server itself finds
/// its bundled one (see [`installed_tsserver`]). When none is found, its files are
/// reported as not checked, and a note says why. A `tsserver.path` from the user's
/// config is kept; the server not being installed is left to the run to report.
pub fn pin_tsserver(
    spec: &mut ServerSpec,
    workspace: &Path,
    notes: &mut Vec<String>,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) {
    if spec.name != "typescript-language-server" || spec.disabled {
        return;
    }
    let options = spec
        .initialization_options
        .get_or_insert_with(|| Value::Object(Default::default()));
    if options.pointer("/tsserver/path").is_some() {
        return;
    }
    let Some(program) = which(&spec.command) else {
        return;
    };
    match installed_tsserver(&program, workspace, which) {
        Some(tsserver) => {
            let pin = serde_json::json!({ "tsserver": { "path": tsserver.display().to_string() } });
            merge_json(options, pin);
        }
        None => {
            let why = format!(
                "no installed TypeScript found next to {} (lib/tsserver.js), and the \
                 workspace's own is not run for an untrusted project",
                program.display()
            );
            notes.push(format!(
                "{}: its files are not checked: {why} (install typescript beside it, \
                 or trust the project)",
                spec.name
            ));
            for ext in &spec.extensions {
                spec.not_checked.push((ext.clone(), why.clone()));
            }
            spec.disabled = true;
        }
    }
}

/// The installed `typescript/lib/tsserver.js` typescript-language-server at `program`
/// would fall back to: node's `require.resolve("typescript")` from its real location
/// (`<dir>/node_modules/typescript` for each directory above it, as for the global
/// npm root `/usr/lib/node_modules`), else the package of the `tsserver` on PATH.
/// Never one inside the workspace.
pub fn installed_tsserver(
    program: &Path,
    workspace: &Path,
    which: &dyn Fn(&str) -> Option<PathBuf>,
) -> Option<PathBuf> {
    let outside = |p: PathBuf| {
        let p = std::fs::canonicalize(&p).ok()?;
        (p.is_file() && !p.starts_with(workspace)).then_some(p)
    };
    let real = std::fs::canonicalize(program).ok()?;
    let beside = real
        .ancestors()
        .skip(1)
        .filter(|dir| dir.file_name() != Some(OsStr::new("node_modules")))
        .find_map(|dir| outside(dir.join("node_modules/typescript/lib/tsserver.js")));
    beside.or_else(|| {
        // `typescript/bin/tsserver` → `typescript/lib/tsserver.js`.
        let bin = std::fs::canonicalize(which("tsserver")?).ok()?;
        outside(bin.parent()?.parent()?.join("lib/tsserver.js"))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn program(version: &str, project: bool) -> Program {
        Program {
            path: PathBuf::from(if project {
                "/ws/node_modules/typescript/bin/tsc"
            } else {
                "/usr/bin/tsgo"
            }),
            version: version.into(),
            project,
        }
    }

    /// The launcher's platform package, nested in it (a global install) or beside it
    /// (hoisted in a project); none without one.
    #[test]
    fn the_native_executable_is_found_beside_or_inside_the_launchers_package() {
        let dir = tempfile::tempdir().expect("tempdir");
        let modules = dir.path().join("node_modules");
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        let preview = modules.join("@typescript/native-preview");
        write(
            preview.join("package.json"),
            r#"{"name": "@typescript/native-preview"}"#,
        );
        write(preview.join("bin/tsgo"), "#!/usr/bin/env node\n");
        assert_eq!(native_executable(&preview.join("bin/tsgo")), None);
        let hoisted = modules
            .join(platform_package("native-preview"))
            .join("lib/tsgo");
        write(hoisted.clone(), "");
        let found = native_executable(&preview.join("bin/tsgo")).expect("found");
        assert_eq!(found.canonicalize().ok(), hoisted.canonicalize().ok());
        let nested = preview
            .join("node_modules")
            .join(platform_package("native-preview"))
            .join("lib/tsgo");
        write(nested.clone(), "");
        let found = native_executable(&preview.join("bin/tsgo")).expect("found");
        assert_eq!(found.canonicalize().ok(), nested.canonicalize().ok());
        // typescript 7's launcher is `tsc`, its platform package named after it.
        let typescript = modules.join("typescript");
        write(typescript.join("package.json"), r#"{"name": "typescript"}"#);
        write(typescript.join("bin/tsc"), "#!/usr/bin/env node\n");
        let exe = modules.join(platform_package("typescript")).join("lib/tsc");
        write(exe.clone(), "");
        let found = native_executable(&typescript.join("bin/tsc")).expect("found");
        assert_eq!(found.canonicalize().ok(), exe.canonicalize().ok());
    }

    #[test]
    fn majors() {
        assert_eq!(major("7.0.2"), Some(7));
        assert_eq!(major("7.0.0-dev.20260707.2"), Some(7));
        assert_eq!(major("10"), Some(10));
        assert_eq!(major("x"), None);
    }

    #[test]
    fn a_typescript_7_project() {
        let trusted = Situation {
            project: Some("7.0.2".into()),
            ts7: Some(program("7.0.2", true)),
            untrusted_project_ts7: None,
            tsls: Some(Some("6.0.3".into())),
        };
        assert!(
            matches!(decide(&trusted), Decision::Tsgo { program, .. } if program.ends_with("bin/tsc"))
        );
        let untrusted = Situation {
            ts7: Some(program("7.0.0-dev", false)),
            untrusted_project_ts7: Some(program("7.0.2", true)),
            ..trusted.clone()
        };
        match decide(&untrusted) {
            Decision::Tsgo { program, why } => {
                assert_eq!(program, PathBuf::from("/usr/bin/tsgo"));
                assert!(why.contains("not run in an untrusted workspace"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        // Only TypeScript 6 at hand: not checked, and said why.
        let only_six = Situation {
            ts7: None,
            ..untrusted.clone()
        };
        match decide(&only_six) {
            Decision::Neither { why } => {
                assert!(
                    why.contains("TypeScript 7.0.2") && why.contains("6.0.3"),
                    "{why}"
                )
            }
            other => panic!("{other:?}"),
        }
        // Nothing at all: the run says tsgo is missing.
        let nothing = Situation {
            tsls: None,
            ..only_six
        };
        assert_eq!(decide(&nothing), Decision::Order);
    }

    #[test]
    fn a_typescript_6_project_and_none() {
        let six = Situation {
            project: Some("6.0.3".into()),
            ts7: Some(program("7.0.0-dev", false)),
            untrusted_project_ts7: None,
            tsls: Some(None),
        };
        assert!(matches!(decide(&six), Decision::Tsls { .. }));
        let only_seven = Situation {
            tsls: None,
            ..six.clone()
        };
        assert!(matches!(decide(&only_seven), Decision::Neither { why } if why.contains("6.0.3")));
        let none = Situation {
            project: None,
            ..six
        };
        assert_eq!(decide(&none), Decision::Order);
        let none_only_seven = Situation { tsls: None, ..none };
        assert!(matches!(decide(&none_only_seven), Decision::Tsgo { .. }));
    }

    /// Issue 10, case 2: the tsserver pinned for an untrusted workspace is the one
    /// installed beside typescript-language-server (as node resolves it from there),
    /// never the workspace's; with none, its files are not checked.
    #[cfg(unix)]
    #[test]
    fn tsserver_is_pinned_beside_the_installed_server() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        let npm = root.join("usr/lib/node_modules");
        let cli = npm.join("typescript-language-server/lib/cli.mjs");
        std::fs::create_dir_all(cli.parent().expect("dir")).expect("mkdir");
        std::fs::write(&cli, "#!/usr/bin/env node\n").expect("write");
        std::fs::set_permissions(&cli, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::create_dir_all(root.join("usr/bin")).expect("mkdir");
        let bin = root.join("usr/bin/typescript-language-server");
        symlink(&cli, &bin).expect("symlink");
        let workspace = root.join("ws");
        std::fs::create_dir_all(workspace.join("node_modules/typescript/lib")).expect("mkdir");
        std::fs::write(
            workspace.join("node_modules/typescript/lib/tsserver.js"),
            "evil()",
        )
        .expect("write");

        let mut spec = crate::servers::builtin()
            .into_iter()
            .find(|s| s.name == "typescript-language-server")
            .expect("built in");
        spec.command = bin.display().to_string();
        let mut notes = Vec::new();
        let mut missing = spec.clone();
        // Only the fixture's PATH: the machine's own typescript must not count.
        let bin_dir = root.join("usr/bin");
        let which = |c: &str| Some(bin_dir.join(c)).filter(|p| p.is_file());
        pin_tsserver(&mut missing, &workspace, &mut notes, &which);
        assert!(
            missing.disabled && missing.not_checked.len() == 8,
            "{missing:?}"
        );
        assert!(
            notes[0].contains("no installed TypeScript found next to"),
            "{notes:?}"
        );

        let tsserver = npm.join("typescript/lib/tsserver.js");
        std::fs::create_dir_all(tsserver.parent().expect("dir")).expect("mkdir");
        std::fs::write(&tsserver, "// typescript").expect("write");
        let mut notes = Vec::new();
        pin_tsserver(&mut spec, &workspace, &mut notes, &which);
        assert!(notes.is_empty() && !spec.disabled, "{notes:?}");
        assert_eq!(
            spec.initialization_options,
            Some(json!({
                "preferences": {},
                "disableAutomaticTypingAcquisition": true,
                "tsserver": {
                    "path": tsserver.display().to_string(),
                    "useSyntaxServer": "never",
                    "useClientFileWatcher": true,
                },
            }))
        );
        // A server installed inside the workspace does not make the workspace's
        // TypeScript "installed".
        let inner = workspace.join("node_modules/.bin/typescript-language-server");
        std::fs::create_dir_all(inner.parent().expect("dir")).expect("mkdir");
        std::fs::write(&inner, "").expect("write");
        assert_ne!(
            installed_tsserver(&inner, &workspace, &which),
            Some(workspace.join("node_modules/typescript/lib/tsserver.js"))
        );
    }
}
