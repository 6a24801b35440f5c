//! The built-in entries added with issue 13, the servers people run in 2026: the type
//! checkers ty and pyrefly (after pyright and basedpyright in preference order, and
//! like them checkers, so only one runs), TypeScript 7's own server (`tsc --lsp`,
//! chosen by the project's TypeScript, see `typescript`), and the linters ruff and
//! ESLint, which run beside the checker. How each one delivers its diagnostics is in
//! `research/servers-python-ts.md`; the wait profiles below follow it.

use std::time::Duration;

use serde_json::json;

use super::{Coverage, Dependents, Origin, PYTHON_ROOTS, Role, ServerSpec, WaitProfile, strs};

/// The extensions TypeScript's servers check, and their language ids.
pub(crate) const TS_EXTENSIONS: &[&str] = &["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];

fn ts_language_ids() -> Vec<(String, String)> {
    [
        ("ts", "typescript"),
        ("tsx", "typescriptreact"),
        ("mts", "typescript"),
        ("cts", "typescript"),
        ("js", "javascript"),
        ("jsx", "javascriptreact"),
        ("mjs", "javascript"),
        ("cjs", "javascript"),
    ]
    .iter()
    .map(|(e, id)| (e.to_string(), id.to_string()))
    .collect()
}

/// A server that answers pulls (`textDocument/diagnostic`) with its final word: an
/// answer to a pull sent after the change ends the file's wait, and no
/// `workspace/diagnostic/refresh` is awaited (none of these sends one).
fn pull_final() -> WaitProfile {
    WaitProfile {
        quiet: Duration::from_millis(50),
        refresh_is_news: false,
        ..WaitProfile::default()
    }
}

fn python_roots(own: &[&str]) -> Vec<String> {
    own.iter()
        .chain(PYTHON_ROOTS)
        .map(|s| s.to_string())
        .collect()
}

/// The name of the TypeScript 7 entry; `typescript` chooses its program.
pub const TSGO: &str = "tsgo";

/// ESLint's configuration files, flat and legacy.
const ESLINT_CONFIGS: &[&str] = &[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
    "package.json:\"eslintConfig\"",
];

pub(super) fn builtin() -> Vec<ServerSpec> {
    vec![
        ServerSpec {
            name: "ty".into(),
            command: "ty".into(),
            args: strs(&["server"]),
            extensions: strs(&["py", "pyi"]),
            language_ids: vec![],
            default_language_id: "python".into(),
            root_markers: python_roots(&["ty.toml"]),
            // ty reads its settings from the `ty` section; it rejects them as
            // initialization options (a showMessage warning).
            settings: json!({ "ty": {} }),
            initialization_options: None,
            // ty registers pull dynamically when the client can pull, and then stops
            // publishing; a pull of a file it has open answers in 1-2 ms.
            wait: pull_final(),
            install_hint: "pip install ty".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: "pyrefly".into(),
            command: "pyrefly".into(),
            args: strs(&["lsp"]),
            extensions: strs(&["py", "pyi"]),
            language_ids: vec![],
            default_language_id: "python".into(),
            root_markers: python_roots(&["pyrefly.toml"]),
            settings: json!({ "python": {} }),
            initialization_options: None,
            // pyrefly pushes only, versioned, and after a save republishes an open
            // dependent first with its old diagnostics (+1.5 ms), then rechecks under
            // a "Pyrefly: Rechecking" progress and publishes again: the quiet period
            // must outlast the gap before that progress begins, and a positive sign
            // (our version) is not enough on its own.
            wait: WaitProfile {
                quiet: Duration::from_millis(150),
                ..WaitProfile::default()
            },
            install_hint: "pip install pyrefly".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage::default(),
        },
        ServerSpec {
            name: TSGO.into(),
            // `typescript::choose` replaces it with the program it picked: the
            // project's `tsc` (TypeScript 7, trusted workspace) or an installed one.
            command: "tsgo".into(),
            args: strs(&["--lsp", "--stdio"]),
            extensions: strs(TS_EXTENSIONS),
            language_ids: ts_language_ids(),
            default_language_id: "typescript".into(),
            root_markers: strs(&["tsconfig.json", "jsconfig.json", "package.json"]),
            settings: json!({}),
            initialization_options: None,
            // Pull only (it publishes nothing for source files even unasked), and a
            // pull answer is final; no refresh requests.
            wait: pull_final(),
            install_hint: "npm install -g @typescript/native-preview (TypeScript 7 as `tsgo`), \
                           or trust a project that has typescript@7"
                .into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage {
                dependents: Dependents::Project,
                ..Coverage::default()
            },
        },
        ServerSpec {
            name: "ruff".into(),
            command: "ruff".into(),
            args: strs(&["server"]),
            extensions: strs(&["py", "pyi"]),
            language_ids: vec![],
            default_language_id: "python".into(),
            root_markers: strs(&["ruff.toml", ".ruff.toml", "pyproject.toml"]),
            settings: json!({}),
            initialization_options: None,
            // Pull only when the client can pull (0.5-2 ms), no publishes.
            wait: pull_final(),
            install_hint: "pip install ruff".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage {
                role: Role::Linter,
                config_files: strs(&["ruff.toml", ".ruff.toml", "pyproject.toml:[tool.ruff"]),
                needs_config: false,
                dependents: Dependents::None,
                why: None,
            },
        },
        ServerSpec {
            name: "eslint".into(),
            command: "vscode-eslint-language-server".into(),
            args: strs(&["--stdio"]),
            extensions: strs(TS_EXTENSIONS),
            language_ids: ts_language_ids(),
            default_language_id: "javascript".into(),
            root_markers: ESLINT_CONFIGS
                .iter()
                .filter(|m| !m.contains(':'))
                .chain(&["package.json"])
                .map(|s| s.to_string())
                .collect(),
            // vscode-eslint-language-server asks for section "" (the whole object)
            // per document, and fails a document whose settings lack these keys.
            settings: json!({
                "validate": "on",
                "run": "onType",
                "packageManager": "npm",
                "useESLintClass": false,
                "experimental": {},
                "nodePath": null,
                "workingDirectory": { "mode": "location" },
                "problems": { "shortenToSingleLine": false },
                "rulesCustomizations": [],
                "quiet": false,
                "onIgnoredFiles": "off",
                "options": {},
                "format": false,
                "codeAction": {
                    "disableRuleComment": { "enable": false, "location": "separateLine" },
                    "showDocumentation": { "enable": false },
                },
                "codeActionOnSave": { "enable": false, "mode": "all" },
            }),
            initialization_options: None,
            wait: pull_final(),
            install_hint: "npm install -g vscode-langservers-extracted eslint".into(),
            origin: Origin::BuiltIn,
            disabled: false,
            not_checked: Vec::new(),
            coverage: Coverage {
                role: Role::Linter,
                config_files: strs(ESLINT_CONFIGS),
                needs_config: true,
                dependents: Dependents::None,
                why: None,
            },
        },
    ]
}
