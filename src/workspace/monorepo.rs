//! Monorepos: one repository of several packages that import each other by name,
//! tied together by a workspace manifest. Mapped from the manifests the project's
//! own tools read, never guessed from the layout:
//! - Node: `package.json` `workspaces` (npm, yarn, bun), `pnpm-workspace.yaml`,
//!   `lerna.json` `packages`;
//! - TypeScript project references: a `tsconfig.json` whose `references` name the
//!   projects `tsc -b` builds;
//! - Go: `go.work` `use` directives;
//! - Python: `[tool.uv.workspace]` `members` of a root `pyproject.toml`.
//!
//! A server whose family spans a kind (`Coverage::monorepos`) is started at the
//! monorepo's root for the files of its packages, so one server holds every package's
//! project and the dependents scan resolves imports across them. A manifest that
//! says there is a monorepo but cannot be read as one ([`Unmapped`]) is the caller's
//! to report: the packages it would name are unknown, so their files may go
//! unchecked.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A kind of workspace manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `package.json` `workspaces`, `pnpm-workspace.yaml`, `lerna.json`.
    Node,
    /// A `tsconfig.json` with `references`.
    TsReferences,
    /// `go.work`.
    GoWork,
    /// `[tool.uv.workspace]` in `pyproject.toml`.
    Uv,
    /// `[workspace]` in `Cargo.toml`.
    Cargo,
}

/// A mapped monorepo.
#[derive(Debug, Clone, PartialEq)]
pub struct Monorepo {
    pub root: PathBuf,
    pub kind: Kind,
    pub packages: Vec<Package>,
}

/// One member package.
#[derive(Debug, Clone, PartialEq)]
pub struct Package {
    /// Its name as the other packages import or require it (a package.json `name`,
    /// a Go module path, a Python distribution name); its directory relative to the
    /// monorepo's root when it has none.
    pub name: String,
    pub dir: PathBuf,
}

/// A manifest that declares a monorepo lspgate cannot map.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmapped {
    pub manifest: PathBuf,
    pub why: String,
}

impl Monorepo {
    /// The member package `path` is in (the innermost, when members nest).
    pub fn package_of(&self, path: &Path) -> Option<&Package> {
        self.packages
            .iter()
            .filter(|p| path.starts_with(&p.dir))
            .max_by_key(|p| p.dir.components().count())
    }

    /// Every package's name, sorted.
    pub fn names(&self) -> Vec<String> {
        self.names_of(self.packages.iter().map(|p| p.dir.as_path()))
    }

    /// The names of the packages `paths` are in, sorted, each once.
    pub fn names_of<'p>(&self, paths: impl IntoIterator<Item = &'p Path>) -> Vec<String> {
        let mut names: Vec<String> = paths
            .into_iter()
            .filter_map(|p| self.package_of(p).map(|p| p.name.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// Directories a member glob is matched against at most this deep: a glob with
/// `**` in a large repository would otherwise walk it whole.
const MAX_MEMBER_DEPTH: usize = 6;

/// The monorepo of one of `kinds` whose manifest is in `dir` or the nearest ancestor
/// of it inside `workspace` that has one.
pub fn around(dir: &Path, kinds: &[Kind], workspace: &Path) -> Option<Result<Monorepo, Unmapped>> {
    if kinds.is_empty() {
        return None;
    }
    for d in dir.ancestors() {
        if !d.starts_with(workspace) {
            break;
        }
        if let Some(found) = kinds.iter().find_map(|&k| in_dir(d, k)) {
            return Some(found);
        }
        if d == workspace {
            break;
        }
    }
    None
}

/// Every kind of manifest.
pub const ALL: [Kind; 5] = [
    Kind::Node,
    Kind::TsReferences,
    Kind::GoWork,
    Kind::Uv,
    Kind::Cargo,
];

/// The monorepos of `kinds` whose manifests are in `root` itself and map.
pub fn at(root: &Path, kinds: &[Kind]) -> Vec<Monorepo> {
    kinds
        .iter()
        .filter_map(|&k| in_dir(root, k)?.ok())
        .collect()
}

/// The monorepo of kind `kind` declared in `dir`, if one is.
fn in_dir(dir: &Path, kind: Kind) -> Option<Result<Monorepo, Unmapped>> {
    let (manifest, globs) = match kind {
        Kind::Node => node_globs(dir)?,
        Kind::TsReferences => references(dir)?,
        Kind::GoWork => go_work(dir)?,
        Kind::Uv => uv_members(dir)?,
        Kind::Cargo => cargo_members(dir)?,
    };
    let globs = match globs {
        Ok(globs) => globs,
        Err(why) => return Some(Err(Unmapped { manifest, why })),
    };
    let packages = expand(dir, &globs, kind)
        .into_iter()
        .map(|d| Package {
            name: manifest_name(&d.join(name_file(kind))).unwrap_or_else(|| {
                let rel = d.strip_prefix(dir).unwrap_or(&d);
                rel.display().to_string()
            }),
            dir: d,
        })
        .collect();
    Some(Ok(Monorepo {
        root: dir.to_path_buf(),
        kind,
        packages,
    }))
}

/// What one manifest declares: its path, and its member globs or why they cannot be
/// read.
type Declared = (PathBuf, Result<Vec<String>, String>);

fn read(path: &Path) -> Option<String> {
    crate::regular::read_to_string(path).ok()
}

/// npm, yarn and bun's `workspaces` (a list, or `{ "packages": [...] }`), pnpm's
/// `packages`, lerna's `packages`; Rush and Nx without one of those are named as
/// workspaces lspgate cannot map.
fn node_globs(dir: &Path) -> Option<Declared> {
    let package_json = dir.join("package.json");
    if let Some(text) = read(&package_json) {
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => {
                if let Some(w) = v.get("workspaces") {
                    let list = w.get("packages").unwrap_or(w);
                    return Some((
                        package_json,
                        strings(list).ok_or_else(|| {
                            "its `workspaces` is not a list of directory globs".to_string()
                        }),
                    ));
                }
            }
            Err(e) if text.contains("\"workspaces\"") => {
                return Some((package_json, Err(format!("it does not parse ({e})"))));
            }
            Err(_) => {}
        }
    }
    let pnpm = dir.join("pnpm-workspace.yaml");
    if let Some(text) = read(&pnpm) {
        return Some((pnpm, pnpm_packages(&text)));
    }
    let lerna = dir.join("lerna.json");
    if let Some(text) = read(&lerna) {
        let globs = match serde_json::from_str::<Value>(&text) {
            Ok(v) => match v.get("packages") {
                Some(p) => strings(p).ok_or_else(|| "its `packages` is not a list".to_string()),
                // Lerna's own default.
                None => Ok(vec!["packages/*".to_string()]),
            },
            Err(e) => Err(format!("it does not parse ({e})")),
        };
        return Some((lerna, globs));
    }
    for (name, tool) in [("rush.json", "Rush"), ("nx.json", "Nx")] {
        let path = dir.join(name);
        if path.is_file() {
            return Some((
                path,
                Err(format!("{tool} projects are not mapped by lspgate")),
            ));
        }
    }
    None
}

/// A JSON list of strings.
fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// `pnpm-workspace.yaml`'s `packages:` list: a block sequence of (quoted or bare)
/// globs, the only shape pnpm documents for it. Not a YAML parser: a file whose
/// `packages` this does not read is unmapped, never a monorepo of no packages.
fn pnpm_packages(text: &str) -> Result<Vec<String>, String> {
    let mut globs = Vec::new();
    let mut in_packages = false;
    for line in text.lines() {
        let code = line.split(" #").next().unwrap_or("").trim_end();
        if code.trim().is_empty() || code.trim_start().starts_with('#') {
            continue;
        }
        if !code.starts_with([' ', '\t', '-']) {
            in_packages = code.trim() == "packages:";
            continue;
        }
        if in_packages && let Some(item) = code.trim().strip_prefix('-') {
            globs.push(item.trim().trim_matches(['\'', '"']).to_string());
        }
    }
    if globs.is_empty() && text.contains("packages") {
        return Err("its `packages` list could not be read".to_string());
    }
    Ok(globs)
}

/// A `tsconfig.json` whose `references` name other projects (a `tsc -b` solution).
fn references(dir: &Path) -> Option<Declared> {
    let path = dir.join("tsconfig.json");
    let text = read(&path)?;
    if !text.contains("\"references\"") {
        return None;
    }
    let Ok(config) =
        jsonc_parser::parse_to_serde_value::<Value>(&text, &jsonc_parser::ParseOptions::default())
    else {
        return Some((path, Err("it does not parse".to_string())));
    };
    let refs = config["references"].as_array()?;
    let dirs: Option<Vec<String>> = refs
        .iter()
        .map(|r| {
            let p = r["path"].as_str()?;
            // A reference names a directory or a tsconfig file in one.
            Some(if p.ends_with(".json") {
                Path::new(p)
                    .parent()
                    .map(|d| d.display().to_string())
                    .unwrap_or_default()
            } else {
                p.to_string()
            })
        })
        .collect();
    // A package's own config references its siblings (`../core`): only one that
    // references projects below it is the solution the monorepo is built from.
    match dirs {
        Some(dirs) => {
            let below: Vec<String> = dirs
                .into_iter()
                .filter(|d| {
                    let d = crate::paths::normalize(&dir.join(d));
                    d.starts_with(dir) && d != dir
                })
                .collect();
            (!below.is_empty()).then_some((path, Ok(below)))
        }
        None => Some((path, Err("a reference has no `path`".to_string()))),
    }
}

/// `go.work`'s `use` directives.
fn go_work(dir: &Path) -> Option<Declared> {
    let path = dir.join("go.work");
    let uses = go_directive(&read(&path)?, "use");
    if uses.is_empty() {
        return Some((
            path,
            Err("it has no `use` directive lspgate can read".to_string()),
        ));
    }
    Some((path, Ok(uses)))
}

/// The first field of each of a `go.mod` or `go.work`'s `keyword` directives, single
/// (`use ./a`, `require m v1`) or in a block (`require ( ... )`), unquoted.
fn go_directive(text: &str, keyword: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        let entry = if in_block {
            in_block = line != ")";
            Some(line).filter(|_| in_block)
        } else if let Some(rest) = line.strip_prefix(keyword)
            && rest.starts_with([' ', '\t', '('])
        {
            let rest = rest.trim();
            in_block = rest == "(";
            Some(rest).filter(|_| !in_block)
        } else {
            None
        };
        out.extend(
            entry
                .and_then(|e| e.split_whitespace().next())
                .map(|f| f.trim_matches('"').to_string()),
        );
    }
    out
}

/// `[tool.uv.workspace]` `members` (minus `exclude`, as `!` globs).
fn uv_members(dir: &Path) -> Option<Declared> {
    let path = dir.join("pyproject.toml");
    let text = read(&path)?;
    if !text.contains("tool.uv.workspace") && !text.contains("[tool.uv]") {
        return None;
    }
    let workspace = |doc: &toml::Table| -> Option<toml::Table> {
        doc.get("tool")?
            .get("uv")?
            .get("workspace")?
            .as_table()
            .cloned()
    };
    toml_members(path, &text, "tool.uv.workspace", workspace, |_| None)
}

/// A Cargo workspace's `members` (minus `exclude`), and the root's own package when
/// its manifest has one, which Cargo makes a member too.
fn cargo_members(dir: &Path) -> Option<Declared> {
    let path = dir.join("Cargo.toml");
    let text = read(&path)?;
    if !text.contains("workspace") {
        return None;
    }
    let workspace = |doc: &toml::Table| doc.get("workspace")?.as_table().cloned();
    let root_package = |doc: &toml::Table| doc.contains_key("package").then(|| ".".to_string());
    toml_members(path, &text, "[workspace]", workspace, root_package)
}

/// The `members` and `exclude` (as `!` globs) of the workspace table `table` finds
/// in the TOML manifest `text` at `path`, with the member `also` names beside them;
/// `marker`, a text the manifest has when it means to declare one, makes one that
/// does not parse unmapped rather than none.
fn toml_members(
    path: PathBuf,
    text: &str,
    marker: &str,
    table: impl Fn(&toml::Table) -> Option<toml::Table>,
    also: impl Fn(&toml::Table) -> Option<String>,
) -> Option<Declared> {
    let doc: toml::Table = match text.parse() {
        Ok(doc) => doc,
        Err(e) if text.contains(marker) => {
            return Some((path, Err(format!("it does not parse ({})", e.message()))));
        }
        Err(_) => return None,
    };
    let workspace = table(&doc)?;
    let extra = also(&doc);
    let list = |key: &str| -> Option<Vec<String>> {
        match workspace.get(key) {
            None => Some(Vec::new()),
            Some(v) => v
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect(),
        }
    };
    let globs = match (list("members"), list("exclude")) {
        (Some(members), Some(exclude)) => Ok(members
            .into_iter()
            .chain(extra)
            .chain(exclude.into_iter().map(|e| format!("!{e}")))
            .collect()),
        _ => Err("its `members` or `exclude` is not a list of globs".to_string()),
    };
    Some((path, globs))
}

/// The file a member directory of `kind` must hold to be a package.
fn member_manifest(kind: Kind) -> &'static str {
    match kind {
        Kind::Node => "package.json",
        Kind::TsReferences => "tsconfig.json",
        Kind::GoWork => "go.mod",
        Kind::Uv => "pyproject.toml",
        Kind::Cargo => "Cargo.toml",
    }
}

/// The member directories `globs` name under `root` (`!glob` excludes), each holding
/// its kind's manifest. Literal paths are taken as they are; globs are matched against
/// the directories of the tree, skipping `node_modules` and what git ignores.
fn expand(root: &Path, globs: &[String], kind: Kind) -> Vec<PathBuf> {
    let clean = |g: &str| g.trim_start_matches("./").trim_end_matches('/').to_string();
    let (excludes, includes): (Vec<String>, Vec<String>) = globs
        .iter()
        .map(|g| g.trim().to_string())
        .partition(|g| g.starts_with('!'));
    let build = |list: &[String], strip: bool| -> globset::GlobSet {
        let mut b = globset::GlobSetBuilder::new();
        for g in list {
            let g = if strip { &g[1..] } else { g.as_str() };
            if let Ok(glob) = globset::GlobBuilder::new(&clean(g))
                .literal_separator(true)
                .build()
            {
                b.add(glob);
            }
        }
        b.build().unwrap_or_else(|_| globset::GlobSet::empty())
    };
    let include = build(&includes, false);
    let exclude = build(&excludes, true);
    let is_member = |rel: &Path, dir: &Path| {
        include.is_match(rel) && !exclude.is_match(rel) && dir.join(member_manifest(kind)).is_file()
    };
    let mut out: Vec<PathBuf> = Vec::new();
    let literal = |g: &str| !g.contains(['*', '?', '[', '{']);
    for g in includes.iter().filter(|g| literal(g)) {
        let dir = crate::paths::normalize(&root.join(clean(g)));
        if dir.starts_with(root) && dir.join(member_manifest(kind)).is_file() {
            out.push(dir);
        }
    }
    // Each glob walks from its literal head (`packages` of `packages/*`) only as
    // deep as it reaches: a glob of a large repository must not cost a walk of it.
    for g in includes.iter().filter(|g| !literal(g)) {
        let g = clean(g);
        let parts: Vec<&str> = g.split('/').collect();
        let head = parts.iter().take_while(|p| literal(p)).count();
        let base = root.join(parts[..head].join("/"));
        let depth = if g.contains("**") {
            MAX_MEMBER_DEPTH
        } else {
            parts.len() - head
        };
        let walk = ignore::WalkBuilder::new(&base)
            .max_depth(Some(depth))
            .filter_entry(|e| e.file_name() != "node_modules")
            .build();
        for entry in walk.flatten() {
            if !entry.file_type().is_some_and(|t| t.is_dir()) {
                continue;
            }
            let dir = entry.path();
            if let Ok(rel) = dir.strip_prefix(root)
                && !rel.as_os_str().is_empty()
                && is_member(rel, dir)
            {
                out.push(dir.to_path_buf());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Directories of a workspace walked at most this deep for packages that depend on
/// another by its manifest.
const MAX_DEPENDENT_DEPTH: usize = 5;

/// Packages of `workspace` outside `root` whose manifests depend on the package at
/// `root` by name (a `file:`/`path` dependency, a Go `require` with a `replace`, an
/// editable install): a repository of several packages without a workspace manifest
/// lspgate maps, where a server started at `root` does not load them. Each with its
/// directory and name. Nothing when `root` is the workspace itself, or has no name.
pub fn dependents_outside(root: &Path, kinds: &[Kind], workspace: &Path) -> Vec<(PathBuf, String)> {
    if root == workspace {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut manifests: Vec<&str> = kinds.iter().map(|&k| name_file(k)).collect();
    manifests.dedup();
    for manifest in manifests {
        let Some(own) = manifest_name(&root.join(manifest)) else {
            continue;
        };
        let walk = ignore::WalkBuilder::new(workspace)
            .max_depth(Some(MAX_DEPENDENT_DEPTH))
            .filter_entry(|e| e.file_name() != "node_modules")
            .build();
        for entry in walk.flatten() {
            let path = entry.path();
            let Some(dir) = path.parent() else { continue };
            if entry.file_name() != manifest || dir.starts_with(root) {
                continue;
            }
            let text = read(path).unwrap_or_default();
            if dependencies(&text, manifest)
                .iter()
                .any(|d| same_name(d, &own))
            {
                let name = manifest_name(path).unwrap_or_else(|| dir.display().to_string());
                out.push((dir.to_path_buf(), name));
            }
        }
    }
    out
}

/// The file that names a package of `kind` and lists what it depends on (a
/// referenced tsconfig project's is its `package.json`).
fn name_file(kind: Kind) -> &'static str {
    match kind {
        Kind::Node | Kind::TsReferences => "package.json",
        Kind::GoWork => "go.mod",
        Kind::Uv => "pyproject.toml",
        Kind::Cargo => "Cargo.toml",
    }
}

/// The name the manifest at `path` (one of the [`name_file`]s) gives its package.
fn manifest_name(path: &Path) -> Option<String> {
    let text = read(path)?;
    match path.file_name().and_then(|n| n.to_str()) {
        Some("package.json") => serde_json::from_str::<Value>(&text).ok()?["name"]
            .as_str()
            .map(str::to_string),
        Some("go.mod") => go_module_path(&text),
        Some("Cargo.toml") => {
            let doc: toml::Table = text.parse().ok()?;
            doc.get("package")?
                .get("name")?
                .as_str()
                .map(str::to_string)
        }
        _ => {
            let doc: toml::Table = text.parse().ok()?;
            let project = doc.get("project").and_then(|p| p.get("name"));
            let poetry = || doc.get("tool")?.get("poetry")?.get("name");
            project.or_else(poetry)?.as_str().map(str::to_string)
        }
    }
}

/// The names of the packages a manifest depends on, in any dependency section.
fn dependencies(text: &str, manifest: &str) -> Vec<String> {
    match manifest {
        "package.json" => {
            let Ok(v) = serde_json::from_str::<Value>(text) else {
                return Vec::new();
            };
            [
                "dependencies",
                "devDependencies",
                "peerDependencies",
                "optionalDependencies",
            ]
            .iter()
            .filter_map(|k| v[k].as_object())
            .flat_map(|m| m.keys().cloned())
            .collect()
        }
        "go.mod" => go_directive(text, "require"),
        "Cargo.toml" => cargo_dependencies(text),
        _ => python_dependencies(text),
    }
}

/// A Cargo manifest's dependency names: every dependency table, a target's too, by
/// the name the package has (`package = "..."` where it is renamed).
fn cargo_dependencies(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    const TABLES: [&str; 3] = ["dependencies", "dev-dependencies", "build-dependencies"];
    let targets = doc
        .get("target")
        .and_then(|t| t.as_table())
        .into_iter()
        .flat_map(|t| t.values());
    let mut out = Vec::new();
    for holder in std::iter::once(&toml::Value::Table(doc.clone())).chain(targets) {
        for table in TABLES.iter().filter_map(|k| holder.get(k)?.as_table()) {
            for (key, spec) in table {
                let renamed = spec.get("package").and_then(|p| p.as_str());
                out.push(renamed.unwrap_or(key).to_string());
            }
        }
    }
    out
}

/// A pyproject's dependency names: PEP 621 `dependencies` and optional ones, PEP 735
/// dependency groups, Poetry's tables.
fn python_dependencies(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let requirement = |v: &toml::Value| -> Option<String> {
        let s = v.as_str()?;
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
            .unwrap_or(s.len());
        Some(s[..end].to_string())
    };
    let mut out = Vec::new();
    let project = doc.get("project");
    let lists = project
        .and_then(|p| p.get("dependencies"))
        .into_iter()
        .chain(
            project
                .and_then(|p| p.get("optional-dependencies"))
                .and_then(|o| o.as_table())
                .into_iter()
                .flat_map(|t| t.values()),
        )
        .chain(
            doc.get("dependency-groups")
                .and_then(|g| g.as_table())
                .into_iter()
                .flat_map(|t| t.values()),
        );
    for list in lists {
        out.extend(
            list.as_array()
                .into_iter()
                .flatten()
                .filter_map(requirement),
        );
    }
    if let Some(poetry) = doc.get("tool").and_then(|t| t.get("poetry")) {
        let groups = poetry.get("group").and_then(|g| g.as_table());
        let tables = poetry
            .get("dependencies")
            .into_iter()
            .chain(poetry.get("dev-dependencies"))
            .chain(
                groups
                    .into_iter()
                    .flat_map(|g| g.values().filter_map(|v| v.get("dependencies"))),
            );
        for table in tables.filter_map(|t| t.as_table()) {
            out.extend(table.keys().cloned());
        }
    }
    out
}

/// Package names compared as their registries do: Python's case-insensitively with
/// `-`, `_` and `.` alike (PEP 503); the others as written.
fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_lowercase().replace(['_', '.'], "-");
    a == b || norm(a) == norm(b)
}

/// The module path a `go.mod` declares.
pub fn go_module_path(go_mod: &str) -> Option<String> {
    go_mod
        .lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| m.trim().trim_matches('"').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) -> std::io::Result<()> {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, text)
    }

    fn names(m: &Monorepo) -> Vec<&str> {
        m.packages.iter().map(|p| p.name.as_str()).collect()
    }

    #[test]
    fn npm_workspaces_map_names_to_directories() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        write(
            &ws,
            "package.json",
            r#"{"workspaces": ["packages/*", "!packages/skip"]}"#,
        )?;
        write(&ws, "packages/core/package.json", r#"{"name": "@x/core"}"#)?;
        write(&ws, "packages/app/package.json", r#"{"name": "@x/app"}"#)?;
        write(&ws, "packages/skip/package.json", r#"{"name": "@x/skip"}"#)?;
        std::fs::create_dir_all(ws.join("packages/empty"))?;
        let Some(Ok(m)) = around(&ws.join("packages/app/src"), &[Kind::Node], &ws) else {
            panic!("no monorepo");
        };
        assert_eq!(m.root, ws);
        assert_eq!(names(&m), ["@x/app", "@x/core"]);
        assert_eq!(
            m.package_of(&ws.join("packages/core/src/a.ts"))
                .map(|p| p.name.as_str()),
            Some("@x/core")
        );
        Ok(())
    }

    #[test]
    fn cargo_workspace_members_with_the_root_package_and_renamed_dependencies()
    -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        write(
            &ws,
            "Cargo.toml",
            "[package]\nname = \"top\"\n\n[workspace]\nmembers = [\"crates/*\"]\n\
             exclude = [\"crates/old\"]\n",
        )?;
        write(&ws, "crates/a/Cargo.toml", "[package]\nname = \"fx-a\"\n")?;
        write(&ws, "crates/old/Cargo.toml", "[package]\nname = \"old\"\n")?;
        let Some(Ok(m)) = around(&ws.join("crates/a/src"), &[Kind::Cargo], &ws) else {
            panic!("no Cargo workspace");
        };
        assert_eq!(m.root, ws);
        assert_eq!(names(&m), ["top", "fx-a"]);
        assert_eq!(
            m.package_of(&ws.join("crates/a/src/lib.rs"))
                .map(|p| p.name.as_str()),
            Some("fx-a")
        );
        // A crate's own manifest is no workspace.
        assert!(in_dir(&ws.join("crates/a"), Kind::Cargo).is_none());
        let deps = cargo_dependencies(
            "[dependencies]\nx = \"1\"\nalias = { package = \"fx-a\", path = \"../a\" }\n\
             [target.'cfg(unix)'.dev-dependencies]\ny = \"2\"\n",
        );
        assert_eq!(deps, ["fx-a", "x", "y"]);
        Ok(())
    }

    #[test]
    fn pnpm_go_work_and_uv_manifests() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        write(
            &ws,
            "pnpm-workspace.yaml",
            "packages:\n  - 'libs/*' # all\n  - \"!libs/old\"\ncatalog:\n  x: 1\n",
        )?;
        write(&ws, "libs/a/package.json", r#"{"name": "a"}"#)?;
        write(&ws, "libs/old/package.json", r#"{"name": "old"}"#)?;
        write(
            &ws,
            "go.work",
            "go 1.22\n\nuse (\n\t./mod/one // first\n\t./mod/two\n)\nuse ./three\n",
        )?;
        write(&ws, "mod/one/go.mod", "module example.com/one\n")?;
        write(&ws, "mod/two/go.mod", "module example.com/two\n")?;
        write(&ws, "three/go.mod", "module example.com/three\n")?;
        write(
            &ws,
            "pyproject.toml",
            "[tool.uv.workspace]\nmembers = [\"py/*\"]\nexclude = [\"py/x\"]\n",
        )?;
        write(
            &ws,
            "py/core/pyproject.toml",
            "[project]\nname = \"fx-core\"\n",
        )?;
        write(&ws, "py/x/pyproject.toml", "[project]\nname = \"x\"\n")?;
        let all = at(&ws, &ALL);
        let by_kind = |k: Kind| all.iter().find(|m| m.kind == k).map(names);
        assert_eq!(by_kind(Kind::Node), Some(vec!["a"]));
        assert_eq!(
            by_kind(Kind::GoWork),
            Some(vec![
                "example.com/one",
                "example.com/two",
                "example.com/three"
            ])
        );
        assert_eq!(by_kind(Kind::Uv), Some(vec!["fx-core"]));
        Ok(())
    }

    #[test]
    fn manifests_that_cannot_be_read_are_unmapped() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        write(&ws, "package.json", r#"{"workspaces": 3}"#)?;
        let found = around(&ws, &[Kind::Node], &ws);
        assert!(matches!(found, Some(Err(Unmapped { ref why, .. })) if why.contains("workspaces")));
        write(&ws, "package.json", r#"{"name": "solo"}"#)?;
        write(&ws, "rush.json", "{}")?;
        let found = around(&ws, &[Kind::Node], &ws);
        assert!(matches!(found, Some(Err(Unmapped { ref why, .. })) if why.contains("Rush")));
        std::fs::remove_file(ws.join("rush.json"))?;
        assert_eq!(around(&ws, &[Kind::Node], &ws), None);
        Ok(())
    }

    #[test]
    fn packages_depending_on_one_by_manifest_outside_its_root() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        write(
            &ws,
            "libs/core/pyproject.toml",
            "[project]\nname = \"Fx_Core\"\n",
        )?;
        write(
            &ws,
            "apps/web/pyproject.toml",
            "[project]\nname = \"web\"\ndependencies = [\"fx-core>=1\"]\n",
        )?;
        write(
            &ws,
            "apps/cli/pyproject.toml",
            "[tool.poetry]\nname = \"cli\"\n[tool.poetry.dependencies]\nfx_core = {path = \"../../libs/core\"}\n",
        )?;
        write(
            &ws,
            "apps/other/pyproject.toml",
            "[project]\nname = \"other\"\ndependencies = [\"requests\"]\n",
        )?;
        write(&ws, "go/a/go.mod", "module example.com/a\n")?;
        write(
            &ws,
            "go/b/go.mod",
            "module example.com/b\n\nrequire (\n\texample.com/a v0.0.0\n)\nreplace example.com/a => ../a\n",
        )?;
        let mut found = dependents_outside(&ws.join("libs/core"), &[Kind::Uv], &ws);
        found.sort();
        let names: Vec<&str> = found.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["cli", "web"]);
        let go = dependents_outside(&ws.join("go/a"), &[Kind::GoWork], &ws);
        assert_eq!(go, [(ws.join("go/b"), "example.com/b".to_string())]);
        assert!(dependents_outside(&ws, &[Kind::Uv], &ws).is_empty());
        Ok(())
    }

    #[test]
    fn solution_tsconfig_references() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        write(
            &ws,
            "tsconfig.json",
            "{ // solution\n \"files\": [], \"references\": [{\"path\": \"./a\"}, {\"path\": \"b/tsconfig.json\"}],}",
        )?;
        write(&ws, "a/tsconfig.json", "{}")?;
        write(&ws, "b/tsconfig.json", "{}")?;
        write(&ws, "b/package.json", r#"{"name": "bee"}"#)?;
        let Some(Ok(m)) = around(&ws.join("b"), &[Kind::TsReferences], &ws) else {
            panic!("no monorepo");
        };
        assert_eq!(m.packages.len(), 2);
        assert_eq!(
            m.package_of(&ws.join("b/x.ts")).map(|p| p.name.as_str()),
            Some("bee")
        );
        Ok(())
    }
}
