//! The patch planner on arbitrary bytes, against a small fixed workspace: it may
//! refuse anything, but must never panic. Planning only reads the tree, so the
//! workspace is made once and shared by every input.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn workspace() -> &'static PathBuf {
    static WS: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &WS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir");
        let ws = dir.path().canonicalize().expect("canonical");
        for (name, text) in [
            ("a.txt", "one\ntwo\nthree\n"),
            ("old.txt", "o\np"),
            ("w.txt", "w\r\nx\r\n"),
            ("src/lib.py", "def f():\n    return 1\n"),
        ] {
            let path = ws.join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        (dir, ws)
    })
    .1
}

fuzz_target!(|data: &[u8]| {
    let ws = workspace();
    let _ = lspgate::edit::plan_patch(ws, ws, data, 1);
});
