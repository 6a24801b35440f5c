use std::fs;
use std::path::Path;

use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};

use super::*;
use crate::servers::ServerSpec;

fn pyright() -> ServerSpec {
    crate::servers::builtin()
        .into_iter()
        .find(|s| s.name == "pyright")
        .expect("pyright is built in")
}

fn error(message: &str) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(2, 4), Position::new(2, 9)),
        severity: Some(DiagnosticSeverity::ERROR),
        message: message.into(),
        ..Diagnostic::default()
    }
}

fn stored() -> Stored {
    let mut files = std::collections::BTreeMap::new();
    files.insert(
        "pkg/b.py".to_string(),
        vec![error("Expected 1 positional argument")],
    );
    Stored { files }
}

fn project(dir: &Path) {
    fs::create_dir_all(dir.join("pkg")).expect("mkdir");
    fs::write(dir.join("a.py"), "def greet(name):\n    return name\n").expect("write");
    fs::write(dir.join("pkg/b.py"), "from a import greet\ngreet('x')\n").expect("write");
    fs::write(dir.join("pyrightconfig.json"), "{}\n").expect("write");
    fs::write(dir.join("README.md"), "# hello\n").expect("write");
}

fn key_of(dir: &Path, spec: &ServerSpec) -> String {
    Tree::read(dir, spec).expect("read tree").key(spec)
}

#[test]
fn a_stored_baseline_is_found_by_its_key_and_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = Baselines::at(dir.path().join("b"));
    baselines.store("pyright", "k1", stored()).expect("store");
    match baselines.lookup("pyright", "k1") {
        Lookup::Found(found) => assert_eq!(found, stored()),
        other => panic!("expected found, got {other:?}"),
    }
    assert!(matches!(baselines.lookup("pyright", "k2"), Lookup::Absent));
    assert!(matches!(
        baselines.lookup("basedpyright", "k1"),
        Lookup::Absent
    ));
    let root = Path::new("/ws");
    let found = stored();
    assert_eq!(found.of(root, &root.join("pkg/b.py")).len(), 1);
    assert!(found.of(root, &root.join("a.py")).is_empty());
}

#[test]
fn a_cut_short_changed_or_moved_baseline_is_unusable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = Baselines::at(dir.path().join("b"));
    let path = baselines.store("pyright", "k1", stored()).expect("store");
    let whole = fs::read(&path).expect("read");

    fs::write(&path, &whole[..whole.len() / 2]).expect("cut");
    assert!(matches!(
        baselines.lookup("pyright", "k1"),
        Lookup::Unusable { .. }
    ));

    let changed = String::from_utf8(whole.clone())
        .expect("utf-8")
        .replace("Expected 1", "Expected 2");
    fs::write(&path, changed).expect("change");
    match baselines.lookup("pyright", "k1") {
        Lookup::Unusable { why, .. } => assert!(why.contains("checksum"), "{why}"),
        other => panic!("expected unusable, got {other:?}"),
    }

    fs::write(&path, &whole).expect("restore");
    fs::copy(&path, path.with_file_name("pyright-k2.json")).expect("copy");
    assert!(matches!(
        baselines.lookup("pyright", "k2"),
        Lookup::Unusable { .. }
    ));
    assert!(matches!(
        baselines.lookup("pyright", "k1"),
        Lookup::Found(_)
    ));
}

#[test]
fn only_the_most_recent_baselines_of_a_server_are_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let baselines = Baselines::at(dir.path().to_path_buf());
    for i in 0..(KEPT + 3) {
        baselines
            .store("pyright", &format!("k{i:02}"), Stored::default())
            .expect("store");
        let t = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(i as u64 + 1);
        let f = fs::File::options()
            .write(true)
            .open(dir.path().join(format!("pyright-k{i:02}.json")))
            .expect("open");
        f.set_modified(t).expect("set time");
    }
    baselines
        .store("other", "k", Stored::default())
        .expect("store");
    let count = |prefix: &str| {
        fs::read_dir(dir.path())
            .expect("list")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .count()
    };
    assert_eq!(count("pyright-"), KEPT);
    assert_eq!(count("other-"), 1);
    assert!(matches!(baselines.lookup("pyright", "k00"), Lookup::Absent));
}

#[test]
fn the_key_changes_with_any_file_the_server_reads_and_no_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    project(root);
    let spec = pyright();
    let first = key_of(root, &spec);
    assert_eq!(first, key_of(root, &spec), "the same tree, the same key");

    fs::write(root.join("README.md"), "# changed\n").expect("write");
    fs::create_dir_all(root.join(".hidden")).expect("mkdir");
    fs::write(root.join(".hidden/x.py"), "x = 1\n").expect("write");
    fs::create_dir_all(root.join("node_modules/p")).expect("mkdir");
    fs::write(root.join("node_modules/p/y.py"), "y = 1\n").expect("write");
    assert_eq!(first, key_of(root, &spec), "files no server reads");
    fs::remove_dir_all(root.join("node_modules")).expect("rm");

    fs::write(root.join("pkg/b.py"), "from a import greet\ngreet('y')\n").expect("write");
    let unrelated = key_of(root, &spec);
    assert_ne!(first, unrelated, "one byte of a file not edited");

    fs::write(root.join("pyrightconfig.json"), "{\"strict\": [\".\"]}\n").expect("write");
    let configured = key_of(root, &spec);
    assert_ne!(unrelated, configured, "a configuration file");

    fs::write(root.join("uv.lock"), "version = 1\n").expect("write");
    assert_ne!(configured, key_of(root, &spec), "a lock file");
}

#[test]
fn the_key_changes_with_the_server_and_its_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("ws");
    project(&root);
    let spec = pyright();
    let tree = Tree::read(&root, &spec).expect("read tree");

    let mut set = spec.clone();
    set.settings = serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
    assert_ne!(tree.key(&spec), tree.key(&set), "settings");

    // Another build of the server: the same command, another program.
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).expect("mkdir");
    let program = bin.join("server");
    fs::write(&program, "#!/bin/sh\necho 1\n").expect("write");
    let mut perms = fs::metadata(&program).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    fs::set_permissions(&program, perms).expect("chmod");
    let mut local = spec.clone();
    local.command = program.display().to_string();
    let old = tree.key(&local);
    fs::write(&program, "#!/bin/sh\necho 1.1\n").expect("write");
    assert_ne!(old, tree.key(&local), "the server's version");

    // A program it runs besides (a pinned tsserver), upgraded in place.
    let tsserver = bin.join("tsserver.js");
    fs::write(&tsserver, "// 6.0.3\n").expect("write");
    let mut pinned = local.clone();
    pinned.initialization_options =
        Some(serde_json::json!({"tsserver": {"path": tsserver.display().to_string()}}));
    let before_upgrade = tree.key(&pinned);
    fs::write(&tsserver, "// 6.0.4 and more\n").expect("write");
    assert_ne!(before_upgrade, tree.key(&pinned), "the tsserver's version");
}

#[test]
fn a_tree_with_an_edit_is_the_tree_read_after_writing_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    project(root);
    let spec = pyright();
    let mut tree = Tree::read(root, &spec).expect("read tree");
    let text = "def greet(name, greeting):\n    return name\n";
    tree.with(&root.join("a.py"), Some(text.as_bytes()));
    tree.with(&root.join("pkg/b.py"), None);
    tree.with(&root.join("c.py"), Some(b"x = 1\n"));
    tree.with(Path::new("/elsewhere/d.py"), Some(b"y = 1\n"));
    fs::write(root.join("a.py"), text).expect("write");
    fs::remove_file(root.join("pkg/b.py")).expect("rm");
    fs::write(root.join("c.py"), "x = 1\n").expect("write");
    assert_eq!(tree, Tree::read(root, &spec).expect("read tree"));
}
