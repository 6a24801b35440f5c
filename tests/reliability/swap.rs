//! A workspace changed between an edit's planning and its commit: the fake server
//! swaps a directory for a symlink out of the workspace when it is started
//! (`--swap-on-initialize`), after lspgate planned the edit and before it writes (it
//! waits for the server's answer first). The commit reaches every directory from the
//! workspace root without following a symlink, so it refuses: exit 2, one line naming
//! the directory, nothing created outside, the workspace as it was. In process and in
//! the daemon.

use std::fs;
use std::path::Path;

use super::figure;
use crate::support::Test;
use crate::support::process::DaemonGuard;

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_directory_swapped_for_a_symlink_out_before_the_commit_is_not_written_through() {
    for daemon in [false, true] {
        for (what, target) in [("write", "sub/new.fake"), ("deeper", "sub/d/new.fake")] {
            let test = Test::new()
                .file("a.fake", "one\n")
                .file("sub/b.fake", "two\n");
            let outside = test.private_dir("home").join("outside");
            fs::create_dir(&outside).expect("mkdir");
            let swap = format!("sub={}", outside.display());
            let mut test = test.fake_server(&["--swap-on-initialize", &swap]);
            let _guard = daemon.then(|| DaemonGuard::new(&test));
            if daemon {
                test = test.with_daemon();
            }
            let out = test.args(["write", target, "--content", "x\n"]).run();
            let case = format!("{what}, daemon {daemon}");
            figure(&format!(
                "swapped directory ({case}): exit {:?} in {:?}, {} entries outside",
                out.code,
                out.elapsed,
                entries(&outside).len()
            ));
            assert!(
                fs::symlink_metadata(out.workspace().join("sub"))
                    .is_ok_and(|m| m.file_type().is_symlink()),
                "{case}: the server did not swap the directory\n{out}"
            );
            assert_eq!(
                entries(&outside),
                Vec::<String>::new(),
                "{case}: written outside\n{out}"
            );
            assert_eq!(
                entries(&out.workspace().join("sub.real")),
                vec!["b.fake".to_string()],
                "{case}\n{out}"
            );
            out.assert_code(2);
            let lines: Vec<&str> = out.stderr.lines().collect();
            assert!(
                lines.len() == 1
                    && lines[0].starts_with("lspgate: ")
                    && lines[0].contains("/sub is not a directory of the workspace any more"),
                "{case}: not one line naming the directory\n{out}"
            );
        }
    }
}
