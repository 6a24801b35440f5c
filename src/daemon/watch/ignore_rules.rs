//! Whether a path the watcher named is one a walk skips: a hidden entry below the
//! root, or one a `.gitignore` of a git repository ignores (its `.gitignore` files
//! from the repository's top down, deeper ones first, `!` re-including, and
//! `.git/info/exclude`), as the `ignore` crate's walk decides. The walk itself cannot
//! be asked: a path given as a walk's start is always yielded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

/// The ignore files read so far, by directory (`None`: it has none).
#[derive(Default)]
pub(super) struct Rules {
    read: HashMap<PathBuf, Option<Gitignore>>,
}

impl Rules {
    pub(super) fn ignored(&mut self, root: &Path, path: &Path, is_dir: bool) -> bool {
        let Ok(below) = path.strip_prefix(root) else {
            return true;
        };
        let hidden = below
            .components()
            .any(|c| c.as_os_str().to_str().is_some_and(|s| s.starts_with('.')));
        if hidden {
            return true;
        }
        let Some(top) = path.ancestors().skip(1).find(|d| d.join(".git").exists()) else {
            // Outside git, `.gitignore` files count for nothing (the walk's default).
            return false;
        };
        // Deepest first: the first to say anything decides.
        for dir in path.ancestors().skip(1) {
            if let Some(rules) = self.of(dir, dir == top) {
                let said = rules.matched_path_or_any_parents(path, is_dir);
                if said.is_ignore() {
                    return true;
                }
                if said.is_whitelist() {
                    return false;
                }
            }
            if dir == top {
                break;
            }
        }
        false
    }

    fn of(&mut self, dir: &Path, top: bool) -> Option<&Gitignore> {
        self.read
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let mut builder = GitignoreBuilder::new(dir);
                let mut any = false;
                let mut files = vec![dir.join(".gitignore")];
                if top {
                    files.push(dir.join(".git/info/exclude"));
                }
                for file in files.iter().filter(|f| f.is_file()) {
                    any |= builder.add(file).is_none();
                }
                any.then(|| builder.build().ok()).flatten()
            })
            .as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignored_and_hidden_paths_are_ignored() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        std::fs::create_dir(root.join(".git")).expect("a git dir");
        std::fs::write(root.join(".gitignore"), "build/\n*.gen.py\n").expect("write");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::fs::write(root.join("src/.gitignore"), "!keep.gen.py\n").expect("write");
        let mut rules = Rules::default();
        assert!(rules.ignored(&root, &root.join("build/x.py"), false));
        assert!(rules.ignored(&root, &root.join("build"), true));
        assert!(rules.ignored(&root, &root.join("a.gen.py"), false));
        assert!(rules.ignored(&root, &root.join(".hidden/x.py"), false));
        assert!(!rules.ignored(&root, &root.join("src/x.py"), false));
        assert!(!rules.ignored(&root, &root.join("src/keep.gen.py"), false));
    }
}
