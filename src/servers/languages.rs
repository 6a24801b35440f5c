//! The languages lspgate knows, by file extension: one list per language, each
//! extension with its LSP `languageId` and whether it is a file other files include by
//! name. The built-in server entries take their extensions and language ids from here,
//! and the dependents scan takes the languages whose imports it reads
//! (`dependents::Language::of`) and the headers it names (`dependents::text`), so the
//! servers and the scan cannot disagree about what a C or TypeScript file is.

/// One file extension of a language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extension {
    /// Without the dot.
    pub ext: &'static str,
    /// The LSP `languageId` a server is told when the file is opened.
    pub language_id: &'static str,
    /// Included by name (`#include "a.h"`) rather than compiled on its own.
    pub included: bool,
}

const fn source(ext: &'static str, language_id: &'static str) -> Extension {
    Extension {
        ext,
        language_id,
        included: false,
    }
}

const fn header(ext: &'static str, language_id: &'static str) -> Extension {
    Extension {
        ext,
        language_id,
        included: true,
    }
}

pub const PYTHON: &[Extension] = &[source("py", "python"), source("pyi", "python")];

/// TypeScript and JavaScript, as TypeScript's servers (and ESLint) check them.
pub const TYPESCRIPT: &[Extension] = &[
    source("ts", "typescript"),
    source("tsx", "typescriptreact"),
    source("mts", "typescript"),
    source("cts", "typescript"),
    source("js", "javascript"),
    source("jsx", "javascriptreact"),
    source("mjs", "javascript"),
    source("cjs", "javascript"),
];

/// C and C++ in their usual spellings: what the built-in clangd entry checks.
pub const C: &[Extension] = &[
    source("c", "c"),
    header("h", "c"),
    source("cc", "cpp"),
    source("cpp", "cpp"),
    source("cxx", "cpp"),
    header("hpp", "cpp"),
    header("hh", "cpp"),
    header("hxx", "cpp"),
];

/// The rest of the C family, whose `#include`s the scan follows too: the rarer
/// spellings, the template and inline fragments a header includes, and Objective-C.
/// The built-in clangd entry does not claim them (a config's `extensions` may).
pub const C_MORE: &[Extension] = &[
    source("c++", "cpp"),
    header("h++", "cpp"),
    header("ipp", "cpp"),
    header("inl", "cpp"),
    header("tpp", "cpp"),
    source("m", "objective-c"),
    source("mm", "objective-cpp"),
];

pub const GO: &[Extension] = &[source("go", "go")];

pub const RUST: &[Extension] = &[source("rs", "rust")];

/// Whether `ext` is one of `language`'s.
pub fn is(language: &[Extension], ext: &str) -> bool {
    language.iter().any(|e| e.ext == ext)
}

/// Whether `ext` names a C-family file that others include by name.
pub fn is_included(ext: &str) -> bool {
    C.iter().chain(C_MORE).any(|e| e.ext == ext && e.included)
}

/// The extensions of `language`, as a server entry lists them.
pub fn extensions(language: &[Extension]) -> Vec<String> {
    language.iter().map(|e| e.ext.to_string()).collect()
}

/// Each extension of `language` with its language id, as a server entry lists them.
pub fn language_ids(language: &[Extension]) -> Vec<(String, String)> {
    language
        .iter()
        .map(|e| (e.ext.to_string(), e.language_id.to_string()))
        .collect()
}
