//! The Python servers besides pyright: the type checkers ty and pyrefly (after
//! pyright and basedpyright in preference order, and like them checkers, so only one
//! runs) and the linter ruff, which runs beside the checker. How each delivers its
//! diagnostics was measured in `research/servers-python-ts.md`; the waits below
//! follow it. An untrusted project may set none of their settings yet.

use std::time::Duration;

use serde_json::json;

use super::pyright::PYTHON_ROOTS;
use super::{Coverage, Dependents, Role, ServerSpec, WaitProfile, entry, languages, strs};

fn python_roots(own: &[&str]) -> Vec<String> {
    own.iter()
        .chain(PYTHON_ROOTS)
        .map(|s| s.to_string())
        .collect()
}

pub(super) fn ty() -> ServerSpec {
    ServerSpec {
        root_markers: python_roots(&["ty.toml"]),
        // ty reads its settings from the `ty` section; it rejects them as
        // initialization options (a showMessage warning).
        settings: json!({ "ty": {} }),
        // ty registers pull dynamically when the client can pull, and then stops
        // publishing; a pull of a file it has open answers in 1-2 ms.
        wait: WaitProfile::pull_final(),
        install_hint: "pip install ty".into(),
        coverage: Coverage {
            configuration: strs(&["ty.toml", "pyproject.toml"]),
            ..Coverage::default()
        },
        ..entry("ty", "ty", &["server"], languages::PYTHON, "python")
    }
}

pub(super) const PYREFLY: &str = "pyrefly";

pub(super) fn pyrefly() -> ServerSpec {
    ServerSpec {
        root_markers: python_roots(&["pyrefly.toml"]),
        settings: json!({ "python": {} }),
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
        coverage: Coverage {
            configuration: strs(&["pyrefly.toml", "pyproject.toml"]),
            ..Coverage::default()
        },
        ..entry(PYREFLY, "pyrefly", &["lsp"], languages::PYTHON, "python")
    }
}

pub(super) fn ruff() -> ServerSpec {
    ServerSpec {
        root_markers: strs(&["ruff.toml", ".ruff.toml", "pyproject.toml"]),
        // Pull only when the client can pull (0.5-2 ms), no publishes.
        wait: WaitProfile::pull_final(),
        install_hint: "pip install ruff".into(),
        coverage: Coverage {
            role: Role::Linter,
            config_files: strs(&["ruff.toml", ".ruff.toml", "pyproject.toml:[tool.ruff"]),
            needs_config: false,
            dependents: Dependents::None,
            configuration: strs(&["ruff.toml", ".ruff.toml", "pyproject.toml"]),
            ..Coverage::default()
        },
        ..entry("ruff", "ruff", &["server"], languages::PYTHON, "python")
    }
}

/// pyrefly runs the Python interpreter a workspace names to find its search paths: a
/// `.venv` (or other environment) it finds there, or `python-interpreter-path` in
/// `pyrefly.toml` or `pyproject.toml`, which wins over the `python.pythonPath` a
/// client gives (measured: a planted `.venv/bin/python` ran both ways). So in an
/// untrusted workspace it is not run; a file it alone would check is reported as
/// not checked.
pub(super) fn keep_out_of_untrusted(spec: &mut ServerSpec) {
    if spec.name != PYREFLY || spec.disabled {
        return;
    }
    spec.disabled = true;
    let why = "not run: it would run the Python interpreter the workspace names (its \
               .venv, python-interpreter-path), and the workspace is not trusted";
    for ext in &spec.extensions {
        spec.not_checked
            .push((ext.clone(), format!("pyrefly is {why}")));
    }
    spec.coverage.why = Some(why.to_string());
}
