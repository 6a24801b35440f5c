//! Choosing the servers for a file: its checker (the first installed of the enabled
//! checkers covering it), the linters that apply beside it, and why a file no
//! enabled server covers is still reported as not checked.

use std::ffi::OsStr;
use std::path::Path;

use crate::servers::{Role, ServerSpec};

use super::which::which;

/// The enabled servers that cover `path`'s extension, in preference order.
pub fn candidates<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
) -> impl Iterator<Item = &'a ServerSpec> + use<'a> {
    let ext = path.extension().and_then(OsStr::to_str).map(str::to_owned);
    servers.iter().filter(move |s| {
        !s.disabled
            && ext
                .as_deref()
                .is_some_and(|e| s.extensions.iter().any(|x| x == e))
    })
}

/// The checker for `path`: the first enabled checker covering it whose command is
/// installed; if none is, the first that covers it, so the caller can say which one
/// is missing. Linters are [`servers_for`]'s.
pub fn server_for<'a>(servers: &'a [ServerSpec], path: &Path) -> Option<&'a ServerSpec> {
    server_for_with(servers, path, &|command| which(command).is_some())
}

pub(super) fn server_for_with<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
    installed: &dyn Fn(&str) -> bool,
) -> Option<&'a ServerSpec> {
    let mut covering = candidates(servers, path).filter(|s| s.coverage.role == Role::Checker);
    let first = covering.next()?;
    if installed(&first.command) {
        return Some(first);
    }
    covering.find(|s| installed(&s.command)).or(Some(first))
}

/// Every server that checks `path`: its checker ([`server_for`]: one of the type
/// checkers or compilers covering it), then each linter covering it that applies
/// here: installed, and configured by the project when it needs to be; a missing one
/// only when the project configures it (its checks were asked for and are not made).
pub fn servers_for<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
    workspace: &Path,
) -> Vec<&'a ServerSpec> {
    servers_for_with(servers, path, workspace, &|command| {
        which(command).is_some()
    })
}

fn servers_for_with<'a>(
    servers: &'a [ServerSpec],
    path: &Path,
    workspace: &Path,
    installed: &dyn Fn(&str) -> bool,
) -> Vec<&'a ServerSpec> {
    let mut out: Vec<&ServerSpec> = server_for_with(servers, path, installed)
        .into_iter()
        .collect();
    for linter in candidates(servers, path).filter(|s| s.coverage.role == Role::Linter) {
        let configured = || has_config(linter, path, workspace);
        let applies = if installed(&linter.command) {
            !linter.coverage.needs_config || configured()
        } else {
            configured()
        };
        if applies {
            out.push(linter);
        }
    }
    out
}

/// Whether one of `spec`'s config files (`NAME`, or `NAME:TEXT` for a file holding
/// TEXT) is in `path`'s directory or above, up to the workspace.
pub fn has_config(spec: &ServerSpec, path: &Path, workspace: &Path) -> bool {
    let markers = &spec.coverage.config_files;
    if markers.is_empty() {
        return false;
    }
    let mut dir = path.parent();
    while let Some(d) = dir {
        if !d.starts_with(workspace) {
            break;
        }
        for marker in markers {
            let (name, needle) = match marker.split_once(':') {
                Some((name, needle)) => (name, Some(needle)),
                None => (marker.as_str(), None),
            };
            let file = d.join(name);
            let found = match needle {
                None => file.exists(),
                Some(needle) => {
                    crate::regular::read_to_string(&file).is_ok_and(|t| t.contains(needle))
                }
            };
            if found {
                return true;
            }
        }
        dir = d.parent();
    }
    false
}

/// The linters turned off that would have checked `path` (`ServerSpec::not_checked`
/// holds its extension, and it applies here as in [`servers_for`]: no config needed,
/// or one found), each with why: the caller reports the file as not checked, since
/// the checks the user would get from them are not made.
pub fn stopped_linters(servers: &[ServerSpec], path: &Path, workspace: &Path) -> Vec<String> {
    let Some(ext) = path.extension().and_then(OsStr::to_str) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter(|s| s.disabled && s.coverage.role == Role::Linter)
        .filter(|s| !s.coverage.needs_config || has_config(s, path, workspace))
        .filter_map(|s| s.not_checked.iter().find(|(e, _)| e == ext))
        .map(|(_, why)| why.clone())
        .collect()
}

/// Why `path`, which no enabled server covers, is still a file some server would check
/// (`ServerSpec::not_checked`): the caller reports it as not checked instead of
/// skipped. `None` for a file no server is for.
pub fn stopped_check(servers: &[ServerSpec], path: &Path) -> Option<String> {
    let ext = path.extension().and_then(OsStr::to_str)?;
    servers
        .iter()
        .flat_map(|s| &s.not_checked)
        .find(|(e, _)| e == ext)
        .map(|(_, why)| why.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::servers::{self, Origin};

    fn spec(name: &str, command: &str, ext: &str) -> ServerSpec {
        ServerSpec {
            name: name.into(),
            command: command.into(),
            extensions: vec![ext.into()],
            origin: Origin::UserConfig,
            ..servers::builtin().remove(0)
        }
    }

    #[test]
    fn server_for_prefers_installed_then_first() {
        let table = vec![
            spec("a", "a-lsp", "py"),
            spec("b", "b-lsp", "py"),
            spec("c", "c-lsp", "go"),
        ];
        let py = Path::new("src/x.py");
        let name = |installed: &[&str]| {
            server_for_with(&table, py, &|c| installed.contains(&c)).map(|s| s.name.clone())
        };
        assert_eq!(name(&["a-lsp", "b-lsp"]).as_deref(), Some("a"));
        assert_eq!(name(&["b-lsp"]).as_deref(), Some("b"));
        assert_eq!(name(&[]).as_deref(), Some("a"));
        assert!(server_for_with(&table, Path::new("x.rs"), &|_| true).is_none());
        assert!(server_for_with(&table, Path::new("Makefile"), &|_| true).is_none());

        let mut table = table;
        table[0].disabled = true;
        let first = server_for_with(&table, py, &|_| false).map(|s| s.name.as_str());
        assert_eq!(first, Some("b"));
    }
}
