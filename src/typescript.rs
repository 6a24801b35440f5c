//! Which TypeScript server checks a workspace: typescript-language-server (which runs
//! TypeScript 6's `tsserver.js`) or TypeScript 7's own server (`tsc --lsp --stdio`
//! from `typescript@7`, `tsgo --lsp --stdio` from `@typescript/native-preview`),
//! decided once per workspace from the project's TypeScript, and the files of a
//! TypeScript 7 project (its dependents: every file is pulled, see
//! [`project_files`]).
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
//! reported as not checked, with a note, exit 3 (SPEC section 4): another compiler's
//! verdict is not the project's.
//!
//! A program inside the workspace is the project's code: like typescript-language-
//! server's tsserver (issue 10), it runs only in a trusted workspace.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::servers::{Origin, ServerSpec, TS_EXTENSIONS, TSGO};

const TSLS: &str = "typescript-language-server";

/// Files pulled at most as a TypeScript 7 project's dependents; a larger project
/// falls back to the text scan of likely dependents.
pub const MAX_PROJECT_FILES: usize = 2000;

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

/// The `version` of the package at `dir`.
fn package_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest
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

/// Whether `command` is a TypeScript 7 program a run in `workspace` may start: one
/// installed outside it, or (trusted) the project's own. The daemon's check of a
/// client's tsgo command ([`crate::config::check_commands`]).
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
                .or_else(|| crate::config::installed_tsserver(&program, workspace, which));
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
            spec.command = p.display().to_string();
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

/// The files of the TypeScript project at `root` (the directory of its
/// `tsconfig.json`) that a TypeScript 7 server is asked about after an edit: every
/// file with one of its extensions (JavaScript only when the tsconfig allows or
/// checks JavaScript, or it is a `jsconfig.json` project) under the directories the
/// tsconfig's `include` names (the whole root without one), skipping what git
/// ignores and `node_modules`; `None` when there are more than
/// [`MAX_PROJECT_FILES`]. The edited files are left out.
pub fn project_files(root: &Path, edited: &[&Path]) -> Option<Vec<PathBuf>> {
    let config = ["tsconfig.json", "jsconfig.json"]
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file());
    let text = config
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let is_js_project = config
        .as_ref()
        .is_some_and(|p| p.file_name() == Some(OsStr::new("jsconfig.json")));
    // tsconfig is JSON with comments; a loose look for the two switches is enough to
    // decide whether JavaScript files belong.
    let js = is_js_project
        || text.contains("\"allowJs\": true")
        || text.contains("\"allowJs\":true")
        || text.contains("\"checkJs\": true")
        || text.contains("\"checkJs\":true");
    let extensions: Vec<&str> = TS_EXTENSIONS
        .iter()
        .copied()
        .filter(|e| js || !e.contains('j'))
        .collect();
    let dirs = include_dirs(&text)
        .into_iter()
        .map(|d| root.join(d))
        .filter(|d| d.starts_with(root))
        .collect::<Vec<_>>();
    let dirs = if dirs.is_empty() {
        vec![root.to_path_buf()]
    } else {
        dirs
    };
    let mut files = Vec::new();
    for dir in dirs {
        let walk = ignore::WalkBuilder::new(&dir)
            .hidden(true)
            .filter_entry(|e| e.file_name() != "node_modules")
            .build();
        for entry in walk.flatten() {
            let path = entry.path();
            let ok = entry.file_type().is_some_and(|t| t.is_file())
                && path
                    .extension()
                    .and_then(OsStr::to_str)
                    .is_some_and(|e| extensions.contains(&e))
                && !path.to_string_lossy().ends_with(".d.ts")
                && !edited.contains(&path);
            if ok && !files.iter().any(|f: &PathBuf| f == path) {
                files.push(path.to_path_buf());
                if files.len() > MAX_PROJECT_FILES {
                    return None;
                }
            }
        }
    }
    files.sort();
    Some(files)
}

/// The leading directories of a tsconfig's `include` patterns (`src/**/*` → `src`);
/// empty when there is no `include`, or one pattern starts with a wildcard.
fn include_dirs(tsconfig: &str) -> Vec<PathBuf> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&strip_comments(tsconfig)) else {
        return Vec::new();
    };
    let Some(patterns) = value.get("include").and_then(|i| i.as_array()) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for pattern in patterns.iter().filter_map(|p| p.as_str()) {
        let fixed: PathBuf = Path::new(pattern)
            .components()
            .take_while(|c| {
                let s = c.as_os_str().to_string_lossy();
                !s.contains('*') && !s.contains('?') && !s.contains('.')
            })
            .collect();
        if fixed.as_os_str().is_empty()
            || fixed
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            // `*.ts`, `./**/*`, `../shared`: the root as a whole.
            return Vec::new();
        }
        dirs.push(fixed);
    }
    dirs
}

/// `//` and `/* */` comments and trailing commas removed, outside strings.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                out.extend(chars.next());
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas: `,` followed by whitespace and `]` or `}`.
    let mut cleaned = String::with_capacity(out.len());
    let chars: Vec<char> = out.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some(']') | Some('}')) {
                continue;
            }
        }
        cleaned.push(*c);
    }
    cleaned
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn include_directories() {
        assert_eq!(
            include_dirs("{\n // c\n \"include\": [\"src/**/*\", \"test\",],\n}"),
            vec![PathBuf::from("src"), PathBuf::from("test")]
        );
        assert!(include_dirs(r#"{"include": ["*.ts"]}"#).is_empty());
        assert!(include_dirs(r#"{"include": ["../x"]}"#).is_empty());
        assert!(include_dirs(r#"{"compilerOptions": {}}"#).is_empty());
        assert_eq!(
            strip_comments("{\"a\": \"//not\", /* x */ \"b\": [1,],}"),
            "{\"a\": \"//not\",  \"b\": [1]}"
        );
    }

    #[test]
    fn project_files_follow_include_and_skip_the_edited_and_node_modules() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in [
            "src/a.ts",
            "src/b.ts",
            "src/c.js",
            "src/d.d.ts",
            "other/x.ts",
            "node_modules/m/i.ts",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
        }
        std::fs::write(root.join("tsconfig.json"), r#"{"include": ["src"]}"#).expect("write");
        let a = root.join("src/a.ts");
        let files = project_files(root, &[a.as_path()]).expect("few files");
        assert_eq!(files, vec![root.join("src/b.ts")]);
        std::fs::write(
            root.join("tsconfig.json"),
            r#"{"compilerOptions": {"allowJs": true}}"#,
        )
        .expect("write");
        let files = project_files(root, &[]).expect("few files");
        assert_eq!(
            files,
            vec![
                root.join("other/x.ts"),
                root.join("src/a.ts"),
                root.join("src/b.ts"),
                root.join("src/c.js")
            ]
        );
    }
}
