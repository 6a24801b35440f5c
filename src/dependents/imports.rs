//! Each language's imports, read from a file's text and resolved to files of the
//! workspace. Reading is line- and token-based, not a parser: it looks for the forms
//! an import takes and may find one in a string or comment. That errs towards more
//! dependents, which costs time, never a missed break.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::c_source;
use crate::paths::normalize;
use crate::workspace::MonorepoKind;

use crate::servers::languages;

/// The languages whose imports the scan resolves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Python,
    /// TypeScript and JavaScript.
    Script,
    /// C, C++ and Objective-C: `#include`.
    C,
    Go,
}

impl Language {
    /// The language of `path` by its extension, from the language table
    /// (`servers::languages`) the server entries use too.
    pub fn of(path: &Path) -> Option<Language> {
        let ext = path.extension()?.to_str()?;
        let is = |list| languages::is(list, ext);
        if is(languages::PYTHON) {
            Some(Language::Python)
        } else if is(languages::TYPESCRIPT) {
            Some(Language::Script)
        } else if is(languages::C) || is(languages::C_MORE) {
            Some(Language::C)
        } else if is(languages::GO) {
            Some(Language::Go)
        } else {
            None
        }
    }
}

/// One resolved import of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub target: PathBuf,
    /// The importing file passes the target's names on (`export * from`, a Python
    /// package's `__init__` importing from its own modules).
    pub reexport: bool,
}

/// What resolving needs to know about the workspace.
pub struct Resolver<'a> {
    known: &'a HashSet<PathBuf>,
    /// Python module name → file, against the root and its `src/`.
    modules: HashMap<String, PathBuf>,
    /// Python file → its module name (the shortest, `src/` layouts' own).
    module_of: HashMap<PathBuf, String>,
    /// File name → the files of that name, for `#include` by path suffix.
    by_name: HashMap<String, Vec<PathBuf>>,
    /// Directory → its files, for Go packages.
    by_dir: HashMap<PathBuf, Vec<PathBuf>>,
    /// The root, where a file's nearest tsconfig is looked for up to.
    root: PathBuf,
    /// Each directory's nearest tsconfig's `baseUrl` and `paths` (`ScriptPaths`),
    /// looked up once per directory: in a monorepo each package has its own.
    script_paths: RefCell<HashMap<PathBuf, Rc<ScriptPaths>>>,
    /// Go module paths and their directories: the root's `go.mod`, and a
    /// `go.work`'s modules.
    go_modules: Vec<(String, PathBuf)>,
    /// The monorepo's script packages, imported by name: name, directory, manifest.
    packages: Vec<(String, PathBuf, serde_json::Value)>,
    /// Each specifier naming one of `packages` and the files it reaches, resolved once
    /// per scan (the fallback to every file of a package walks every known file).
    package_targets: RefCell<HashMap<String, Option<Rc<Vec<PathBuf>>>>>,
}

/// TypeScript's resolution order for a specifier without an extension (`./x` is
/// `x.ts`, then `x.tsx`, `x.d.ts`, ...): a rule of its module resolution, not the
/// language's list of extensions.
const SCRIPT_EXTENSIONS: &[&str] = &["ts", "tsx", "d.ts", "mts", "cts", "js", "jsx", "mjs", "cjs"];

impl<'a> Resolver<'a> {
    pub fn new(root: &Path, known: &'a HashSet<PathBuf>) -> Resolver<'a> {
        let mut modules = HashMap::new();
        let mut module_of = HashMap::new();
        let mut by_name: HashMap<String, Vec<PathBuf>> = HashMap::new();
        let mut by_dir: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
        let monorepos = crate::workspace::monorepo::at(root, &crate::workspace::monorepo::ALL);
        let members = |kind: MonorepoKind| {
            monorepos
                .iter()
                .filter(move |m| m.kind == kind)
                .flat_map(|m| m.packages.iter())
        };
        // A uv workspace's members are importable from one another (installed
        // editable in its environment): each member's directory and `src/` are
        // import roots like the root's.
        let mut python_roots = vec![root.to_path_buf(), root.join("src")];
        for p in members(MonorepoKind::Uv) {
            python_roots.extend([p.dir.clone(), p.dir.join("src")]);
        }
        let mut go_modules: Vec<(String, PathBuf)> = go_module(root).into_iter().collect();
        go_modules.extend(members(MonorepoKind::GoWork).map(|p| (p.name.clone(), p.dir.clone())));
        let packages = members(MonorepoKind::Node)
            .chain(members(MonorepoKind::TsReferences))
            .filter_map(|p| {
                let text = crate::regular::read_to_string(p.dir.join("package.json")).ok()?;
                let manifest = serde_json::from_str(&text).ok()?;
                Some((p.name.clone(), p.dir.clone(), manifest))
            })
            .collect();
        for path in known {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                by_name
                    .entry(name.to_string())
                    .or_default()
                    .push(path.clone());
            }
            if let Some(dir) = path.parent() {
                by_dir
                    .entry(dir.to_path_buf())
                    .or_default()
                    .push(path.clone());
            }
            if Language::of(path) == Some(Language::Python) {
                for base in &python_roots {
                    if let Some(name) = module_name(base, path) {
                        let shorter = module_of
                            .get(path)
                            .is_none_or(|known: &String| known.len() > name.len());
                        if shorter {
                            module_of.insert(path.clone(), name.clone());
                        }
                        // A stub and its module are one module; either will do.
                        modules.entry(name).or_insert_with(|| path.clone());
                    }
                }
            }
        }
        Resolver {
            known,
            modules,
            module_of,
            by_name,
            by_dir,
            root: root.to_path_buf(),
            script_paths: RefCell::default(),
            go_modules,
            packages,
            package_targets: RefCell::default(),
        }
    }

    /// The files of the workspace that `path` (in `language`, with `text`) imports.
    pub fn imports(&self, language: Language, path: &Path, text: &str) -> Vec<Import> {
        let mut out = match language {
            Language::Python => self.python(path, text),
            Language::Script => self.script(path, text),
            Language::C => self.c(path, text),
            Language::Go => self.go(path, text),
        };
        out.retain(|i| i.target != path);
        out
    }

    fn python(&self, path: &Path, text: &str) -> Vec<Import> {
        let is_init = path.file_stem().is_some_and(|s| s == "__init__");
        let package = self.package_of(path);
        let mut out = Vec::new();
        for statement in python_statements(text) {
            if let Some(rest) = statement.strip_prefix("import ") {
                for part in rest.split(',') {
                    let name = part.split_whitespace().next().unwrap_or("");
                    out.extend(self.module(name).map(|target| Import {
                        target,
                        reexport: false,
                    }));
                }
            } else if let Some(rest) = statement.strip_prefix("from ") {
                let Some((from, names)) = rest.split_once(" import ") else {
                    continue;
                };
                let from = from.trim();
                let relative = from.starts_with('.');
                let Some(base) = absolute_module(from, package.as_deref()) else {
                    continue;
                };
                let reexport = is_init && relative;
                if let Some(target) = self.module(&base) {
                    out.push(Import { target, reexport });
                }
                let names = names.trim().trim_start_matches('(').trim_end_matches(')');
                for name in names.split(',') {
                    let name = name.split_whitespace().next().unwrap_or("");
                    if name.is_empty() || name == "*" {
                        continue;
                    }
                    let full = if base.is_empty() {
                        name.to_string()
                    } else {
                        format!("{base}.{name}")
                    };
                    if let Some(target) = self.module(&full) {
                        out.push(Import { target, reexport });
                    }
                }
            }
        }
        out
    }

    /// The dotted package `path` is in, as its modules name it.
    fn package_of(&self, path: &Path) -> Option<String> {
        let own = self.module_of.get(path)?.clone();
        let is_init = path.file_stem().is_some_and(|s| s == "__init__");
        if is_init {
            return Some(own);
        }
        Some(
            own.rsplit_once('.')
                .map(|(p, _)| p.to_string())
                .unwrap_or_default(),
        )
    }

    fn module(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() {
            return None;
        }
        self.modules.get(name).cloned()
    }

    fn script(&self, path: &Path, text: &str) -> Vec<Import> {
        let dir = path.parent().unwrap_or(Path::new("/"));
        let mut out = Vec::new();
        for (spec, reexport) in script_specifiers(text) {
            if let Some(target) = self.resolve_script(dir, &spec) {
                out.push(Import { target, reexport });
            } else if let Some(targets) = self.package_targets(&spec) {
                out.extend(targets.iter().map(|target| Import {
                    target: target.clone(),
                    reexport,
                }));
            }
        }
        out
    }

    /// [`Self::workspace_package`] of `spec`, once per scan.
    fn package_targets(&self, spec: &str) -> Option<Rc<Vec<PathBuf>>> {
        if let Some(known) = self.package_targets.borrow().get(spec) {
            return known.clone();
        }
        let found = self.workspace_package(spec).map(Rc::new);
        self.package_targets
            .borrow_mut()
            .insert(spec.to_string(), found.clone());
        found
    }

    /// The files a specifier naming a package of the monorepo (`@x/core`,
    /// `@x/core/sub`) reaches: what its manifest's `exports` point at under every
    /// condition (which one the importing project picks is its own configuration's
    /// business, `customConditions` included), else its `types`, `typings`, `module`
    /// or `main`, else its `index`; every script file of the package when none of
    /// those is one of its files (an entry in build output that is not there).
    fn workspace_package(&self, spec: &str) -> Option<Vec<PathBuf>> {
        let (name, dir, manifest) = self
            .packages
            .iter()
            .filter(|(n, _, _)| {
                spec == n
                    || spec
                        .strip_prefix(n.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
            .max_by_key(|(n, _, _)| n.len())?;
        let sub = &spec[name.len()..];
        let mut entries: Vec<String> = Vec::new();
        match manifest.get("exports") {
            Some(exports) => export_targets(exports, &format!(".{sub}"), &mut entries),
            None if sub.is_empty() => {
                for key in ["types", "typings", "module", "main"] {
                    entries.extend(manifest[key].as_str().map(str::to_string));
                }
                entries.push("index".to_string());
            }
            None => entries.push(sub.trim_start_matches('/').to_string()),
        }
        let found: Vec<PathBuf> = entries
            .iter()
            .filter_map(|e| self.script_file(&normalize(&dir.join(e))))
            .collect();
        if !found.is_empty() {
            return Some(found);
        }
        Some(
            self.known
                .iter()
                .filter(|p| p.starts_with(dir) && Language::of(p) == Some(Language::Script))
                .cloned()
                .collect(),
        )
    }

    fn resolve_script(&self, dir: &Path, spec: &str) -> Option<PathBuf> {
        if spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == ".." {
            return self.script_file(&normalize(&dir.join(spec)));
        }
        let config = self.script_paths(dir);
        for (pattern, targets) in &config.paths {
            let Some(star) = matches_pattern(pattern, spec) else {
                continue;
            };
            let base = config.base_url.as_deref()?;
            for target in targets {
                let candidate = normalize(&base.join(target.replace('*', star)));
                if let Some(found) = self.script_file(&candidate) {
                    return Some(found);
                }
            }
        }
        let base = config.base_url.as_deref()?;
        self.script_file(&normalize(&base.join(spec)))
    }

    /// The `baseUrl` and `paths` of the tsconfig (or jsconfig) nearest `dir`, inside
    /// the root.
    fn script_paths(&self, dir: &Path) -> Rc<ScriptPaths> {
        if let Some(known) = self.script_paths.borrow().get(dir) {
            return known.clone();
        }
        let found = if let Some(config) = ["tsconfig.json", "jsconfig.json"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
        {
            Rc::new(tsconfig(&config, 0))
        } else {
            match dir.parent() {
                Some(up) if dir != self.root && up.starts_with(&self.root) => self.script_paths(up),
                _ => Rc::new(ScriptPaths::default()),
            }
        };
        self.script_paths
            .borrow_mut()
            .insert(dir.to_path_buf(), found.clone());
        found
    }

    /// A specifier's file, by TypeScript's rules: as written, with each extension,
    /// `./x.js` as `./x.ts`, or a directory's `index`.
    fn script_file(&self, base: &Path) -> Option<PathBuf> {
        if self.known.contains(base) {
            return Some(base.to_path_buf());
        }
        let text = base.to_string_lossy();
        for (js, ts) in [
            (".js", ".ts"),
            (".jsx", ".tsx"),
            (".mjs", ".mts"),
            (".cjs", ".cts"),
        ] {
            if let Some(stem) = text.strip_suffix(js) {
                for candidate in [format!("{stem}{ts}"), format!("{stem}.d{ts}")] {
                    let candidate = PathBuf::from(candidate);
                    if self.known.contains(&candidate) {
                        return Some(candidate);
                    }
                }
            }
        }
        for ext in SCRIPT_EXTENSIONS {
            let candidate = PathBuf::from(format!("{text}.{ext}"));
            if self.known.contains(&candidate) {
                return Some(candidate);
            }
        }
        SCRIPT_EXTENSIONS
            .iter()
            .map(|ext| base.join(format!("index.{ext}")))
            .find(|candidate| self.known.contains(candidate))
    }

    fn c(&self, path: &Path, text: &str) -> Vec<Import> {
        let dir = path.parent().unwrap_or(Path::new("/"));
        let mut out = Vec::new();
        for included in c_source::included_files(text) {
            let beside = normalize(&dir.join(&included));
            if self.known.contains(&beside) {
                out.push(Import {
                    target: beside,
                    reexport: false,
                });
                continue;
            }
            // On an include path: any file whose path ends with the included one.
            let name = Path::new(&included)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            let suffix = Path::new(&included);
            for candidate in self.by_name.get(name).into_iter().flatten() {
                if candidate.ends_with(suffix) {
                    out.push(Import {
                        target: candidate.clone(),
                        reexport: false,
                    });
                }
            }
        }
        out
    }

    fn go(&self, path: &Path, text: &str) -> Vec<Import> {
        let mut out = Vec::new();
        // A package's files see one another's names.
        if let Some(dir) = path.parent() {
            out.extend(self.go_files(dir));
        }
        for import in go_imports(text) {
            for (module, module_dir) in &self.go_modules {
                let rest = if import == *module {
                    Some("")
                } else {
                    import
                        .strip_prefix(module.as_str())
                        .and_then(|r| r.strip_prefix('/'))
                };
                if let Some(rest) = rest {
                    out.extend(self.go_files(&module_dir.join(rest)));
                }
            }
        }
        out
    }

    fn go_files(&self, dir: &Path) -> Vec<Import> {
        let dir = normalize(dir);
        self.by_dir
            .get(&dir)
            .into_iter()
            .flatten()
            .filter(|p| p.extension().is_some_and(|e| e == "go"))
            .map(|p| Import {
                target: p.clone(),
                reexport: false,
            })
            .collect()
    }
}

/// Every target `exports` gives `subpath` (`.` or `./x`), under any condition: a
/// string, a list, a map of subpaths (`"./*"` patterns too), or a map of conditions.
fn export_targets(exports: &serde_json::Value, subpath: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    match exports {
        Value::String(s) if subpath == "." => out.push(s.clone()),
        Value::Array(list) => list.iter().for_each(|e| export_targets(e, subpath, out)),
        Value::Object(map) if map.keys().any(|k| k.starts_with('.')) => {
            if let Some(v) = map.get(subpath) {
                return leaves(v, "", out);
            }
            for (key, v) in map {
                if let Some(star) = matches_pattern(key, subpath) {
                    leaves(v, star, out);
                }
            }
        }
        Value::Object(_) if subpath == "." => leaves(exports, "", out),
        _ => {}
    }
}

/// Every string in a conditions tree, `*` replaced by `star`.
fn leaves(v: &serde_json::Value, star: &str, out: &mut Vec<String>) {
    use serde_json::Value;
    match v {
        Value::String(s) => out.push(s.replace('*', star)),
        Value::Array(list) => list.iter().for_each(|e| leaves(e, star, out)),
        Value::Object(map) => map.values().for_each(|e| leaves(e, star, out)),
        _ => {}
    }
}

/// `path`'s dotted module name under `base`: `pkg/mod.py` → `pkg.mod`,
/// `pkg/__init__.py` → `pkg`.
fn module_name(base: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(base).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let file = parts.pop()?;
    let stem = file
        .strip_suffix(".pyi")
        .or_else(|| file.strip_suffix(".py"))?;
    if stem != "__init__" {
        parts.push(stem.to_string());
    }
    if parts.is_empty() || parts.iter().any(|p| p.contains('.') || p.contains('-')) {
        return None;
    }
    Some(parts.join("."))
}

/// `from` of a Python `from X import`, absolute: leading dots climb from `package`.
fn absolute_module(from: &str, package: Option<&str>) -> Option<String> {
    let dots = from.chars().take_while(|c| *c == '.').count();
    if dots == 0 {
        return Some(from.to_string());
    }
    let mut base: Vec<&str> = package?.split('.').filter(|p| !p.is_empty()).collect();
    for _ in 1..dots {
        base.pop()?;
    }
    let rest = &from[dots..];
    if !rest.is_empty() {
        base.push(rest);
    }
    Some(base.join("."))
}

/// Python `import` and `from` statements, one per entry, with a parenthesised name
/// list joined onto one line.
fn python_statements(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(mut statement) = open.take() {
            statement.push(' ');
            statement.push_str(line);
            if line.contains(')') {
                out.push(statement);
            } else {
                open = Some(statement);
            }
            continue;
        }
        if !(line.starts_with("import ") || line.starts_with("from ")) {
            continue;
        }
        let line = line.trim_end_matches('\\').to_string();
        if line.contains('(') && !line.contains(')') {
            open = Some(line);
        } else {
            out.push(line);
        }
    }
    out
}

/// Module specifiers of a script, each with whether its statement re-exports:
/// `import … from "x"`, `export … from "x"`, `import "x"`, `import("x")`,
/// `require("x")`.
fn script_specifiers(text: &str) -> Vec<(String, bool)> {
    let mut found: Vec<(usize, String, bool)> = Vec::new();
    for (keyword, kind) in [
        ("from", Kind::From),
        ("import", Kind::Import),
        ("require", Kind::Call),
    ] {
        for (i, _) in text.match_indices(keyword) {
            if !starts_word(text, i, keyword) {
                continue;
            }
            let after = text[i + keyword.len()..].trim_start();
            let after = match kind {
                Kind::Call => after.strip_prefix('(').map(str::trim_start),
                Kind::Import => Some(after.strip_prefix('(').map_or(after, str::trim_start)),
                Kind::From => Some(after),
            };
            if let Some(spec) = after.and_then(quoted) {
                let reexport = kind == Kind::From && statement_keyword(text, i) == Some("export");
                found.push((i, spec.to_string(), reexport));
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, spec, re)| (spec, re)).collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    From,
    Import,
    Call,
}

/// Whether `word` starts at byte `at` of `text` as a whole word.
fn starts_word(text: &str, at: usize, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text[at..].starts_with(word)
        && text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !is_ident(c) && c != '.')
        && text[at + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident(c))
}

/// The string literal at the start of `s`, without its quotes.
fn quoted(s: &str) -> Option<&str> {
    let quote = s.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let body = &s[1..];
    let end = body.find(quote)?;
    Some(&body[..end])
}

/// `import` or `export`, whichever last began a statement before byte `at`.
fn statement_keyword(text: &str, at: usize) -> Option<&'static str> {
    let before = &text[..at];
    let last = |word: &str| {
        before
            .rmatch_indices(word)
            .map(|(i, _)| i)
            .find(|&i| starts_word(text, i, word))
    };
    match (last("import"), last("export")) {
        (Some(i), Some(e)) => Some(if e > i { "export" } else { "import" }),
        (None, Some(_)) => Some("export"),
        (Some(_), None) => Some("import"),
        (None, None) => None,
    }
}

/// The text matched by `*` when `spec` matches tsconfig `paths` pattern `pattern`.
fn matches_pattern<'s>(pattern: &str, spec: &'s str) -> Option<&'s str> {
    match pattern.split_once('*') {
        Some((prefix, suffix)) => spec
            .strip_prefix(prefix)?
            .strip_suffix(suffix)
            .filter(|s| !s.is_empty()),
        None => (pattern == spec).then_some(""),
    }
}

/// The import paths of a Go file: `import "x"`, `import alias "x"`, and the lines of
/// an `import ( … )` block.
fn go_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
        } else if let Some(rest) = line.strip_prefix("import") {
            let rest = rest.trim_start();
            if rest.starts_with('(') {
                in_block = !rest.contains(')');
                continue;
            }
        } else {
            continue;
        }
        if let Some(start) = line.find('"')
            && let Some(len) = line[start + 1..].find('"')
        {
            out.push(line[start + 1..start + 1 + len].to_string());
        }
    }
    out
}

/// `go.mod`'s module path, and its directory: the root's.
fn go_module(root: &Path) -> Option<(String, PathBuf)> {
    let text = crate::regular::read_to_string(root.join("go.mod")).ok()?;
    let module = crate::workspace::monorepo::go_module_path(&text)?;
    Some((module, root.to_path_buf()))
}

/// A tsconfig's `baseUrl` (absolute; for `paths` without one, the directory of the
/// config that declares them, as TypeScript resolves them) and `paths`.
#[derive(Debug, Default, PartialEq)]
struct ScriptPaths {
    base_url: Option<PathBuf>,
    paths: Vec<(String, Vec<String>)>,
}

/// `extends` chains followed at most this deep.
const MAX_EXTENDS: usize = 8;

/// The `baseUrl` and `paths` of the tsconfig at `path`, its own or those it inherits
/// through a relative `extends` (a package's tsconfig extending the monorepo's
/// `tsconfig.base.json`); an `extends` naming a package is not followed.
fn tsconfig(path: &Path, depth: usize) -> ScriptPaths {
    let Some(config) = crate::regular::read_to_string(path)
        .ok()
        .and_then(|t| crate::servers::typescript::project::parse_tsconfig(&t))
    else {
        return ScriptPaths::default();
    };
    let dir = path.parent().unwrap_or(Path::new("/"));
    let parents: Vec<&str> = match &config["extends"] {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(list) => list.iter().filter_map(|s| s.as_str()).collect(),
        _ => Vec::new(),
    };
    // Later entries of an `extends` list override earlier ones.
    let inherited = parents
        .into_iter()
        .filter(|p| p.starts_with('.') && depth < MAX_EXTENDS)
        .map(|p| {
            let parent = normalize(&dir.join(p));
            // TypeScript adds `.json` to a name without it (`tsconfig.base`).
            let parent = if parent.extension().is_some_and(|e| e == "json") {
                parent
            } else {
                let mut name = parent.into_os_string();
                name.push(".json");
                PathBuf::from(name)
            };
            tsconfig(&parent, depth + 1)
        })
        .fold(ScriptPaths::default(), |acc, p| ScriptPaths {
            base_url: p.base_url.or(acc.base_url),
            paths: if p.paths.is_empty() {
                acc.paths
            } else {
                p.paths
            },
        });
    let options = &config["compilerOptions"];
    let base_url = options["baseUrl"].as_str().map(|b| normalize(&dir.join(b)));
    let paths: Vec<(String, Vec<String>)> = options["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(pattern, targets)| {
            let targets = targets
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect();
            (pattern.clone(), targets)
        })
        .collect();
    if paths.is_empty() {
        return ScriptPaths {
            base_url: base_url.or(inherited.base_url),
            paths: inherited.paths,
        };
    }
    let base_url = base_url
        .or(inherited.base_url)
        .or_else(|| Some(dir.to_path_buf()));
    ScriptPaths { base_url, paths }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_relative_imports_climb_from_the_package() {
        assert_eq!(
            absolute_module(".", Some("pkg.sub")).as_deref(),
            Some("pkg.sub")
        );
        assert_eq!(
            absolute_module(".mod", Some("pkg")).as_deref(),
            Some("pkg.mod")
        );
        assert_eq!(
            absolute_module("..x", Some("pkg.sub")).as_deref(),
            Some("pkg.x")
        );
        assert_eq!(absolute_module("...x", Some("pkg")), None);
        assert_eq!(absolute_module("a.b", None).as_deref(), Some("a.b"));
    }

    #[test]
    fn python_statements_join_parenthesised_names() {
        let text = "import os\nfrom .x import (\n    a,  # one\n    b,\n)\nx = 1\n";
        assert_eq!(
            python_statements(text),
            ["import os", "from .x import ( a, b, )"]
        );
    }

    #[test]
    fn script_specifiers_and_reexports() {
        let text = "import { a } from \"./a\";\nexport * from './errors';\nexport {\n  b,\n} from \"./b\"\nconst c = require('./c');\nimport('./d');\nimport './e';\nconst from = 1;\n";
        assert_eq!(
            script_specifiers(text),
            [
                ("./a".to_string(), false),
                ("./errors".to_string(), true),
                ("./b".to_string(), true),
                ("./c".to_string(), false),
                ("./d".to_string(), false),
                ("./e".to_string(), false),
            ]
        );
    }

    #[test]
    fn tsconfig_with_comments_and_trailing_commas() {
        let text = "{\n  // paths\n  \"compilerOptions\": { \"baseUrl\": \"./src\", /* x */ \"paths\": { \"@/*\": [\"lib/*\",], }, },\n  \"include\": [\"a//b\"]\n}";
        let value: serde_json::Value =
            crate::servers::typescript::project::parse_tsconfig(text).expect("parses");
        assert_eq!(value["compilerOptions"]["baseUrl"], "./src");
        assert_eq!(value["include"][0], "a//b");
        assert_eq!(matches_pattern("@/*", "@/util/x"), Some("util/x"));
        assert_eq!(matches_pattern("exact", "exact"), Some(""));
    }

    #[test]
    fn go_import_forms() {
        let text = "package a\n\nimport \"fmt\"\nimport (\n\t\"example.com/m/b\" // why\n\tc \"example.com/m/c\"\n)\n";
        assert_eq!(
            go_imports(text),
            ["fmt", "example.com/m/b", "example.com/m/c"]
        );
    }
}
