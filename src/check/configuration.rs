//! An edit of a file a server reads as its configuration (`go.mod`, `tsconfig.json`,
//! `pyrightconfig.json`, `Cargo.toml`, `compile_flags.txt`: each family lists its own
//! in `Coverage::configuration`) changes what the server says of the files it governs
//! without changing any of them. Such a file is checked through them: every file of
//! the server's extensions at and below its directory, in the group of the server
//! and root that check it, their before view taken as for any dependent; once the
//! edit is written, each such server is replaced by one started afresh, whose word on
//! them is the after view.
//!
//! Afresh, because a running server may never read the new configuration: tsserver
//! and clangd notice a changed config file through their own watchers or timers, if
//! at all, and nothing they say tells when they have. A fresh server reads it before
//! its first answer, for certain. A configuration edit costs a cold start; it is rare.
//!
//! A change the servers are shown in memory only (a dry run, `--reject`, a review)
//! never reaches their configuration, which they read from disk: what it governs is
//! reported as not checked (exit 3), never as clean.

use std::path::PathBuf;

use crate::config;
use crate::dependents;
use crate::lsp::Pool;
use crate::lsp::restart::NotRestarted;
use crate::model::{Note, RunReason, ServerReason, ServerStatus};
use crate::paths;
use crate::servers::ServerSpec;

use super::before::{self, MAX_DEPENDENTS};
use super::files::Tracked;
use super::servers::{Group, Resolved};
use super::{Context, Kind};

/// Files of one server's extensions under a configuration file's directory read, at
/// most, to find what it governs; a directory with more is reported as not fully
/// checked unless the server reports on its whole workspace by itself.
const MAX_GOVERNED: usize = 20_000;

/// Add the groups that check what the run's configuration files govern (see the
/// module's notes). A configuration file is no longer "skipped": it is checked
/// through them, or said not to be.
pub(super) fn add_groups(
    ctx: &Context,
    tracked: &[Tracked],
    kind: Kind,
    written: bool,
    out: &mut Resolved,
) {
    if !kind.has_change {
        return;
    }
    for (i, t) in tracked.iter().enumerate() {
        let readers: Vec<&ServerSpec> = ctx
            .servers
            .iter()
            .filter(|s| !s.disabled && s.configured_by(&t.path))
            .collect();
        let mut governs_any = false;
        let mut used_elsewhere: Option<&str> = None;
        for spec in readers {
            let Some(dir) = t.path.parent() else { continue };
            let (mut files, mut more) =
                dependents::files_under(dir, &spec.extensions, MAX_GOVERNED);
            // A package's manifest also governs how the other packages of the workspace
            // resolve it by name (`exports`, `main`, `types`): the files naming it.
            let named = package_names(t);
            if !named.is_empty() {
                let (importers, stopped) = dependents::files_naming(
                    &ctx.workspace,
                    &spec.extensions,
                    &named,
                    MAX_GOVERNED,
                );
                files.extend(importers.into_iter().filter(|f| !f.starts_with(dir)));
                more |= stopped;
            }
            let roots = by_root(ctx, spec, files);
            if roots.is_empty() {
                // Files elsewhere may read it all the same (a tsconfig they extend).
                let (elsewhere, _) = dependents::files_under(&ctx.workspace, &spec.extensions, 1);
                if !elsewhere.is_empty() {
                    used_elsewhere.get_or_insert(&spec.name);
                }
                continue;
            }
            governs_any = true;
            if !written {
                out.notes
                    .push(Note::Incomplete(RunReason::ConfigurationInMemory {
                        file: t.path.clone(),
                        server: spec.name.clone(),
                    }));
                break;
            }
            for (root, files) in roots {
                // The run's own files are checked as such, not as dependents.
                let files = files
                    .into_iter()
                    .filter(|f| !tracked.iter().any(|t| &t.path == f))
                    .collect();
                let g = group_at(&mut out.groups, spec, root);
                g.configuration.push(i);
                govern(g, files, more);
            }
        }
        if let (false, Some(name)) = (governs_any, used_elsewhere) {
            out.notes
                .push(Note::Incomplete(RunReason::ConfigurationElsewhere {
                    file: t.path.clone(),
                    server: name.to_string(),
                }));
        }
        if governs_any || used_elsewhere.is_some() {
            out.skipped.retain(|p| p != &t.path);
        }
    }
}

/// How files elsewhere would name the package whose `package.json` `t` is, before or
/// after the edit, as a module specifier: `"NAME"`, `"NAME/...`, with either quote.
/// None for any other file, or a manifest without a name.
fn package_names(t: &Tracked) -> Vec<String> {
    if t.path.file_name().is_none_or(|n| n != "package.json") {
        return Vec::new();
    }
    let mut names: Vec<String> = [&t.before, &t.after]
        .into_iter()
        .flatten()
        .filter_map(|text| {
            let value: serde_json::Value =
                jsonc_parser::parse_to_serde_value(text, &Default::default()).ok()?;
            Some(value.get("name")?.as_str()?.to_string())
        })
        .filter(|name| !name.is_empty())
        .collect();
    names.dedup();
    names
        .iter()
        .flat_map(|n| {
            ['"', '\'']
                .into_iter()
                .flat_map(move |q| [format!("{q}{n}{q}"), format!("{q}{n}/")])
        })
        .collect()
}

/// `files` grouped by the root their server `spec` checks them at, keeping only the
/// roots where `spec` is one of the servers that check them.
fn by_root(ctx: &Context, spec: &ServerSpec, files: Vec<PathBuf>) -> Vec<(PathBuf, Vec<PathBuf>)> {
    let mut roots: Vec<(PathBuf, Vec<PathBuf>)> = Vec::new();
    for f in files {
        let (root, _) = spec.root_of(&f, &ctx.workspace);
        match roots.iter_mut().find(|(r, _)| *r == root) {
            Some((_, list)) => list.push(f),
            None => roots.push((root, vec![f])),
        }
    }
    // Another checker may be the one that runs for these files (basedpyright beside
    // pyright), or a linter may not apply there: asked of one file per root.
    roots.retain(|(_, files)| {
        files.first().is_some_and(|f| {
            config::servers_for(&ctx.servers, f, &ctx.workspace)
                .iter()
                .any(|s| s.name == spec.name)
        })
    });
    roots
}

/// The group of `spec` at `root`, made if the run has none.
fn group_at<'a>(groups: &'a mut Vec<Group>, spec: &ServerSpec, root: PathBuf) -> &'a mut Group {
    let at = groups
        .iter()
        .position(|g| g.spec.name == spec.name && g.root == root);
    match at {
        Some(at) => &mut groups[at],
        None => {
            groups.push(Group::without_files(spec, root));
            let last = groups.len() - 1;
            &mut groups[last]
        }
    }
}

/// Make `files` dependents of `g`: asked about before and after, up to the run's cap,
/// the rest named as not checked. A server that reports on its whole workspace by
/// itself (pyright, gopls, rust-analyzer's check of a written edit) needs none.
fn govern(g: &mut Group, files: Vec<PathBuf>, more: bool) {
    if g.spec.wait.finds_dependents(true) {
        return;
    }
    for f in files {
        if g.dependents.contains(&f) || g.dropped.contains(&f) {
            continue;
        }
        if g.dependents.len() < MAX_DEPENDENTS {
            g.dependents.push(f);
        } else {
            g.dropped.push(f);
        }
    }
    g.unscanned |= more;
}

/// After the edit is written: replace the server of each group that checks what an
/// edited configuration file governs by one started afresh, and wait for it as for
/// any cold server. The group's before view stays the old server's.
pub(super) fn restart(
    pool: &mut Pool,
    ctx: &Context,
    groups: &mut Vec<Group>,
    tracked: &[Tracked],
    notes: &mut Vec<Note>,
) {
    // Taken apart to wait for the fresh ones alone, put back in their order.
    let mut fresh: Vec<(usize, Group)> = Vec::new();
    let mut kept: Vec<(usize, Group)> = Vec::new();
    for (at, mut g) in groups.drain(..).enumerate() {
        let Some(old) = g.server.filter(|_| !g.configuration.is_empty()) else {
            kept.push((at, g));
            continue;
        };
        match pool.start_afresh(old) {
            Ok(new) => {
                g.server = Some(new);
                g.cold = true;
                fresh.push((at, g));
            }
            Err(NotRestarted(why)) => {
                g.status = ServerStatus::Failed;
                g.reasons.push(ServerReason::NotStartedAfresh {
                    server: g.spec.name.clone(),
                    why,
                    configuration: configuration_paths(&g, tracked),
                });
                g.server = None;
                kept.push((at, g));
            }
        }
    }
    if !fresh.is_empty() {
        let (at, mut started): (Vec<usize>, Vec<Group>) = fresh.into_iter().unzip();
        let befores: Vec<_> = started.iter().map(|g| g.before_server).collect();
        // Their answers are the after view, read when the run compares; only the
        // waiting is wanted here.
        before::take(pool, ctx, &mut started, tracked, true, notes);
        for (g, b) in started.iter_mut().zip(befores) {
            g.before_server = b;
            if let Some(why) = complaint(pool, g, tracked) {
                g.status = ServerStatus::Failed;
                g.reasons.push(ServerReason::ConfigurationNotRead {
                    server: g.spec.name.clone(),
                    why,
                    configuration: configuration_paths(g, tracked),
                });
                g.server = None;
            } else {
                notes.push(Note::Info(said_again(ctx, g, tracked)));
            }
        }
        kept.extend(at.into_iter().zip(started));
    }
    kept.sort_by_key(|(at, _)| *at);
    *groups = kept.into_iter().map(|(_, g)| g).collect();
}

/// Why the server started afresh for group `g` may not have read its configuration:
/// the server says its project did not load (`Server::load_failure`: rust-analyzer,
/// gopls and pyright each say it their own way), or a configuration file is not
/// well-formed JSON or TOML (typescript-language-server says nothing of a
/// tsconfig.json it cannot parse; tsc fails on it). Its other error logs are no sign:
/// gopls logs a failed `go mod tidy` lookup of a module it cannot reach as an error.
fn complaint(pool: &Pool, g: &Group, tracked: &[Tracked]) -> Option<String> {
    let server = pool.server(g.server?);
    if let Some(why) = server.load_failure() {
        return Some(format!(
            "it could not load the project ({})",
            first_line(&why)
        ));
    }
    g.configuration.iter().find_map(|&i| malformed(&tracked[i]))
}

/// Why a configuration file's new text is not well-formed in its format, for the
/// JSON (with comments, as tsconfig has them) and TOML ones; `None` otherwise.
fn malformed(t: &Tracked) -> Option<String> {
    let text = t.after.as_deref()?;
    let name = t.path.file_name()?.to_str()?;
    let error = if name.ends_with(".json") {
        jsonc_parser::parse_to_value(text, &Default::default())
            .err()
            .map(|e| e.to_string())
    } else if name.ends_with(".toml") {
        text.parse::<toml::Table>()
            .err()
            .map(|e| first_line(&e.to_string()))
    } else {
        None
    }?;
    Some(format!("{name} is not well-formed ({error})"))
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_string()
}

/// The edited configuration files group `g` was started afresh for.
fn configuration_paths(g: &Group, tracked: &[Tracked]) -> Vec<PathBuf> {
    g.configuration
        .iter()
        .map(|&i| tracked[i].path.clone())
        .collect()
}

/// The note that says which configuration a server was started afresh for.
fn said_again(ctx: &Context, g: &Group, tracked: &[Tracked]) -> String {
    let files: Vec<String> = g
        .configuration
        .iter()
        .map(|&i| paths::display(&tracked[i].path, &ctx.run_dir))
        .collect();
    format!(
        "{} configures {}: the files it checks under {} were checked again by a {} started \
         afresh",
        files.join(", "),
        g.spec.name,
        paths::display(&g.root, &ctx.run_dir),
        g.spec.name
    )
}
