//! SIGINT, SIGTERM and SIGHUP held back while a commit writes: one arriving then is
//! remembered, the commit either finishes its renames (all of them: a half-applied
//! patch is the worst outcome) or, still staging, stops and removes its temporary
//! files, and the signal then takes effect as it would have (the default action:
//! the process ends, killed by that signal, as its parent expects).
//!
//! Outside a commit the handlers run the default action at once, so lspgate stops on
//! these signals exactly as before. A signal ignored when lspgate started (`nohup`, a
//! background job of a non-interactive shell) stays ignored: no handler is installed
//! for it. SIGKILL cannot be held back; `RELIABILITY.md` says what it leaves.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// True while no commit is under way: a signal then takes effect at once.
static ACT_NOW: AtomicBool = AtomicBool::new(true);
/// The signal that arrived during a commit, 0 for none.
static CAUGHT: AtomicUsize = AtomicUsize::new(0);
/// Commits under way (tests commit from several threads), and whether the handlers
/// are installed.
static STATE: Mutex<(usize, bool)> = Mutex::new((0, false));

/// Held for the length of a commit; dropping it lets a held signal take effect.
pub(super) struct Deferred(());

impl Deferred {
    pub(super) fn start() -> Deferred {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if !state.1 {
            install();
            state.1 = true;
        }
        state.0 += 1;
        ACT_NOW.store(false, Ordering::SeqCst);
        Deferred(())
    }

    /// Whether a signal arrived since the commit began: staging stops at the next file.
    pub(super) fn interrupted(&self) -> bool {
        CAUGHT.load(Ordering::SeqCst) != 0
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
        state.0 = state.0.saturating_sub(1);
        if state.0 > 0 {
            return;
        }
        ACT_NOW.store(true, Ordering::SeqCst);
        let signal = CAUGHT.swap(0, Ordering::SeqCst);
        drop(state);
        if let Ok(signal) = i32::try_from(signal)
            && signal != 0
        {
            // Resets the signal to its default action and raises it: the process ends
            // here, as it would have when the signal came.
            let _ = signal_hook::low_level::emulate_default_handler(signal);
        }
    }
}

fn install() {
    let ignored = ignored_signals();
    for signal in [SIGINT, SIGTERM, SIGHUP] {
        let leave_alone = match ignored {
            Some(mask) => mask & (1u64 << (signal - 1)) != 0,
            None => signal != SIGTERM,
        };
        if leave_alone {
            continue;
        }
        // Order matters: the signal is remembered first, then acted on unless deferred.
        let remembered = signal_hook::flag::register_usize(signal, &CAUGHT, signal as usize);
        let acted = signal_hook::flag::register_conditional_default(signal, &ACT_NOW);
        if remembered.is_err() || acted.is_err() {
            // Without the handlers a signal simply takes effect at once, as before.
            continue;
        }
    }
}

/// The signals ignored by this process, as a mask (bit `n - 1` for signal `n`), from
/// Linux's `/proc/self/status`; `None` where that cannot be read. Without it, only
/// SIGTERM is held back: SIGINT and SIGHUP may be ignored on purpose (`nohup`), and a
/// handler would undo that.
fn ignored_signals() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("SigIgn:"))?;
    u64::from_str_radix(line.split_whitespace().nth(1)?, 16).ok()
}
