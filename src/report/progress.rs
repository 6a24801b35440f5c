//! Following a run while it waits: the [`Watcher`] trait, and the one line of progress a
//! person sees on stderr while a run waits longer than about a second ("pyright:
//! indexing 40% (1.2s)"), from the servers' work-done progress. The line shows only on a
//! terminal; never on stdout, never with `--quiet`. In-process the pool's observer feeds
//! a watcher the servers' state; through the daemon, the progress the daemon streams
//! ([`Busy`]) feeds it the same. `lspgate mcp` has a watcher of its own, which sends the
//! client progress notifications.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::model::progress::{Busy, Progress, SHOW_AFTER, Watcher};

pub struct StatusLine {
    start: Instant,
    shown: bool,
    last: String,
}

impl StatusLine {
    /// A status line if stderr is a terminal and the user did not ask for quiet.
    pub fn for_stderr(quiet: bool) -> Option<StatusLine> {
        (!quiet && std::io::stderr().is_terminal()).then(|| StatusLine {
            start: Instant::now(),
            shown: false,
            last: String::new(),
        })
    }

    /// Redraw from the progress a daemon sent, if the wait has been long enough.
    pub fn update_busy(&mut self, busy: &[Busy]) {
        self.draw(|elapsed| describe_busy(busy, elapsed));
    }

    fn draw(&mut self, describe: impl FnOnce(Duration) -> String) {
        let elapsed = self.start.elapsed();
        if elapsed < SHOW_AFTER {
            return;
        }
        let text = describe(elapsed);
        if text == self.last {
            return;
        }
        let mut err = std::io::stderr().lock();
        // \r and clear-to-end-of-line: one line, rewritten in place.
        let _ = write!(err, "\r\x1b[K{text}");
        let _ = err.flush();
        self.last = text;
        self.shown = true;
    }

    /// Remove the line before anything else is printed.
    pub fn clear(&mut self) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

impl Watcher for StatusLine {
    fn progress(&mut self, busy: &[Busy]) {
        self.update_busy(busy);
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.clear();
    }
}

/// "pyright: indexing 40% (1.2s)" from the progress a daemon sent: the first server
/// with progress under way, else the first one still running.
pub fn describe_busy(busy: &[Busy], elapsed: Duration) -> String {
    let parts: Vec<(&str, Option<&Progress>)> = busy
        .iter()
        .map(|b| (b.server.as_str(), b.progress.as_ref()))
        .collect();
    describe_parts(&parts, elapsed)
}

fn describe_parts(servers: &[(&str, Option<&Progress>)], elapsed: Duration) -> String {
    let busy = servers.iter().find_map(|(name, progress)| {
        progress.map(|p| {
            let mut parts = vec![];
            if !p.title.is_empty() {
                parts.push(p.title.clone());
            }
            if let Some(m) = &p.message {
                parts.push(m.clone());
            }
            if let Some(pc) = p.percentage {
                parts.push(format!("{pc}%"));
            }
            if parts.is_empty() {
                parts.push("working".into());
            }
            format!("{name}: {}", parts.join(" "))
        })
    });
    let text = busy.unwrap_or_else(|| {
        let names: Vec<&str> = servers.iter().map(|(n, _)| *n).collect();
        let who = if names.is_empty() {
            "lspgate".to_string()
        } else {
            names.join(", ")
        };
        format!("{who}: waiting for diagnostics")
    });
    // Control characters from a server must not reach the terminal.
    let mut text: String = text.chars().filter(|c| !c.is_control()).collect();
    if text.chars().count() > 70 {
        text = text.chars().take(69).collect::<String>() + "…";
    }
    format!("{text} ({:.1}s)", elapsed.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_the_first_progress_with_its_percentage() {
        let p = Progress {
            title: "indexing".into(),
            message: None,
            percentage: Some(40),
        };
        let got = describe_parts(
            &[("gopls", None), ("pyright", Some(&p))],
            Duration::from_millis(1234),
        );
        assert_eq!(got, "pyright: indexing 40% (1.2s)");
    }

    #[test]
    fn without_progress_names_the_servers_waited_for() {
        let got = describe_parts(&[("clangd", None)], Duration::from_secs(2));
        assert_eq!(got, "clangd: waiting for diagnostics (2.0s)");
    }

    #[test]
    fn escapes_and_long_titles_are_tamed() {
        let p = Progress {
            title: "\u{1b}[31mx".repeat(30),
            message: Some("m".into()),
            percentage: None,
        };
        let got = describe_parts(&[("s", Some(&p))], Duration::ZERO);
        assert!(!got.contains('\u{1b}'), "{got}");
        assert!(got.chars().count() <= 70 + " (0.0s)".len(), "{got}");
    }
}
