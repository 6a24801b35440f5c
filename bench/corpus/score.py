"""Score lspgate on the real-project corpus: does it find what the batch checker finds,
only that, and how fast, cold and warm.

    python3 bench/corpus/score.py --lspgate target/release/lspgate
        [--projects rich,go-cmp] [--cases rename-pick-bool,...] [--runs N]
        [--modes cold,warm] [--no-recheck] [--smoke] [--out FILE.md] [--save DIR]

For each project (fetched into the cache first, fetch.py) the scorer makes one fresh
copy, a git repository of one commit, and then, one heavy thing at a time:

  1. times the batch checker on the whole pristine project, three times, the median
     kept (the user's alternative, in this same run);
  2. cold: for each case, `lspgate patch CASE.diff --format json --no-daemon` on the
     copy, then `git checkout` + `git clean` back to the pristine commit;
  3. warm: `lspgate daemon start`, one untimed `lspgate check` of a file to warm the
     servers, then each case through the daemon, the copy restored with git between
     cases behind the daemon's back, as a user's repository is, and an untimed check
     after each restore so that the next case's figure is its own edit's, not the
     re-analysis of the restore; `daemon stop`;
  4. hook (not in the default modes): a daemon again; each case applied by `git apply`,
     as a harness's own write tool would, then a timed `lspgate check --changed`; the
     copy restored with git, the restore taken in by an untimed call, and a call with
     nothing changed timed (its table).
  5. idle (not in the default modes): the first edit after the daemon sat idle, per case
     on a fresh daemon: an untimed `check` of the file the case edits, think time of
     twice the batch checker (the daemon idle, as while an agent thinks), then the
     case's `patch` through the daemon, timed; `daemon stop`.
  6. stored (not in the default modes): cold again, each case's `patch --no-daemon`
     with a stored baseline of the pristine tree, made by one untimed
     `lspgate baseline` first (the `cold` mode gives each case an empty cache, so it
     never has one);
  7. agent (not in the default modes): a daemon again, and each case applied and then
     undone through lspgate (`patch`, then an untimed `patch -R`), as an agent that
     edits only through lspgate does: the daemon's steady state, where nothing changes
     behind its back; the copy is checked to be pristine after the undo;
  5. what the server costs alone, by the minimal client of recheck.py (same server,
     same settings): for the warm and agent rows its re-check of each case's edit on
     a warm server; for the cold rows the cold floor, a fresh server's start-up
     analysis plus that re-check, measured right before each cold run (the stored
     rows are held against each case's median floor); for the idle rows a fresh server's first re-check,
     after the same think time (blank where it cannot be measured honestly).

Each lspgate report is scored against the case's committed expected result (truth.py):
an error is the pair (path, 0-based line); lspgate's are the diagnostics with
`new: true` and severity Error in its JSON. Dependent recall counts the truth's new
errors in files other than the edited ones that lspgate reported as new; precision
counts lspgate's new errors that the truth has, edited files included. clangd reports
an error of an included header at the `#include` line as "In included file: MSG";
such a diagnostic matches the truth's errors with message MSG in a header. A unit the
batch compiler stopped at a fatal error (an include not found) is not judged past it:
clangd's further errors there count as right.

The exit code is right when it is the case's `expect_exit` (1 for a breaking edit, 0
for a clean one); 3 (incomplete) is wrong unless a case says so.

--smoke (CI): rich's rename and go-cmp's rename, once each way; checks that the tables
are produced and every run gave a report, not the numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import recheck  # noqa: E402
from common import (CorpusError, apply_diff, checker_env, git, make_copy,  # noqa: E402
                    parse_diff, restore, run_checker)
from fetch import FetchError, fetch  # noqa: E402
from projects import Project, select  # noqa: E402

SMOKE = {"rich": ["rename-pick-bool"], "go-cmp": ["rename-type-string"]}
# A cold Django start (pyright's whole-project analysis) takes about a minute here;
# the default 60s start-up budget would turn the bench into a start-up test.
DEFAULT_GATE_ARGS = ["--startup-timeout", "300s"]
RUN_TIMEOUT = 900  # seconds for one lspgate run, whatever it waits for
INCLUDED = "In included file: "


@dataclass
class Case:
    project: Project
    name: str
    diff: Path
    meta: dict

    @property
    def expected(self) -> dict:
        return self.meta["expected"]

    @property
    def want_exit(self) -> int:
        return int(self.meta.get("expect_exit", 1 if self.meta.get("kind") == "breaking" else 0))


@dataclass
class Outcome:
    case: Case
    mode: str
    wall: float = float("nan")  # seconds
    exit: int | None = None
    truth_dep: int = 0
    found_dep: int = 0
    gate_new: int = 0
    gate_in_truth: int = 0
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    # The server alone, measured next to this run (a cold run's floor, just before
    # it): milliseconds, or why not.
    alone: object = None

    @property
    def exit_right(self) -> bool:
        return self.exit == self.case.want_exit

    @property
    def clean_ok(self) -> bool | None:
        if self.case.meta.get("kind") != "clean":
            return None
        return self.exit == 0 and self.gate_new == 0


def load_cases(p: Project, only: set[str] | None) -> list[Case]:
    cases = []
    for meta_path in sorted(p.case_dir.glob("*.json")):
        name = meta_path.stem
        if only and name not in only:
            continue
        meta = json.loads(meta_path.read_text())
        if "expected" not in meta:
            raise CorpusError(f"{p.name}/{name}: no expected result: run bench/corpus/truth.py")
        cases.append(Case(p, name, p.diff_dir / f"{name}.diff", meta))
    return cases


# --- running lspgate ---------------------------------------------------------------

class Gate:
    """lspgate with a private state directory: the bench's history database, daemon
    sockets and logs are nobody else's."""

    def __init__(self, binary: Path, state: Path, env: dict, extra: list[str]):
        self.binary = binary
        self.env = dict(env, NO_COLOR="1")
        for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
                    "LSPGATE_CACHE_DIR"):
            d = state / var.lower()
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.env[var] = str(d)
        # lspgate's own cache (stored baselines) is private; the servers' are the
        # user's, as the batch checkers' are: a private XDG_CACHE_HOME gave gopls an
        # empty Go build cache, and emptying it for each cold case made gopls load
        # go-cmp in 1.5 s instead of 0.3 s.
        self.env["LSPGATE_RUNTIME_DIR"] = str(state / "run")
        (state / "run").mkdir(exist_ok=True, mode=0o700)
        self.env.pop("LSPGATE_NO_DAEMON", None)
        self.extra = extra

    def run(self, root: Path, args: list[str]) -> tuple[float, subprocess.CompletedProcess]:
        t0 = time.monotonic()
        proc = subprocess.run([str(self.binary), "-C", str(root), *args], env=self.env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        return time.monotonic() - t0, proc

    def changed(self, root: Path) -> tuple[float, subprocess.CompletedProcess]:
        """`lspgate check --changed` through the daemon: a harness's post-edit hook."""
        return self.run(root, ["check", "--changed", "--format", "json", "-q", *self.extra])

    def patch(self, root: Path, diff: Path, cold: bool) -> tuple[float, subprocess.CompletedProcess]:
        args = ["patch", str(diff), "--format", "json", "-q", *self.extra]
        if cold:
            args.append("--no-daemon")
        return self.run(root, args)

    def without_stored_baselines(self) -> None:
        """An empty cache from now on: no run finds a stored baseline."""
        cache = Path(self.env["LSPGATE_CACHE_DIR"])
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)


def gate_errors(report: dict) -> set[tuple[str, int | str]]:
    """lspgate's new errors as (path, line), or (INCLUDED, message) for clangd's
    "In included file" diagnostics."""
    out: set[tuple[str, int | str]] = set()
    for f in report.get("files", []):
        for d in f.get("diagnostics", []):
            if not d.get("new") or d.get("severity") != "Error":
                continue
            msg = (d.get("message") or "").strip().splitlines()[0] if d.get("message") else ""
            if msg.startswith(INCLUDED):
                out.add((INCLUDED, msg[len(INCLUDED):].strip()))
            else:
                out.add((f["path"], d["range"]["start"]["line"]))
    return out


def score(case: Case, o: Outcome, report: dict) -> None:
    exp = case.expected
    edited = set(exp["edited"])
    truth = {(path, line) for path, line, _ in exp["new_errors"]}
    header_msgs = {msg for path, _, msg in exp["new_errors"] if path.endswith((".h", ".hpp"))}
    header_at = {(path, line): msg for path, line, msg in exp["new_errors"]
                 if path.endswith((".h", ".hpp"))}
    gate = gate_errors(report)
    included = {m for k, m in gate if k == INCLUDED}

    def found(e: tuple[str, int]) -> bool:
        return e in gate or (e in header_at and header_at[e] in included)

    # A fatal error (an include not found) stops the batch checker's unit; clangd goes
    # on and reports what follows. Errors after it in such a file are not judged wrong.
    fatal = {path for path, _, msg in exp["new_errors"] if msg.endswith("file not found")}

    def right(g: tuple[str, int | str]) -> bool:
        if g[0] == INCLUDED:
            return g[1] in header_msgs
        return g in truth or g[0] in fatal

    dep = {e for e in truth if e[0] not in edited}
    o.truth_dep = len(dep)
    o.found_dep = sum(1 for e in dep if found(e))
    o.gate_new = len(gate)
    o.gate_in_truth = sum(1 for g in gate if right(g))
    for s in report.get("servers", []):
        if s.get("status") != "ok":
            o.notes.append(f"{s.get('name')}: {s.get('status')}")
    for n in report.get("notes", []) or []:
        o.notes.append(str(n)[:80])


SAVE: Path | None = None  # --save: where each run's report and stderr are kept
# Timings of the batch checker per project, the median kept.
BATCH_RUNS = 3

# The idle mode's think time, in batch checker times (the "twice").
THINK_TIMES = 2

NOCHANGE: dict[str, list[float]] = {}  # hook mode: the walls of calls with nothing changed


def undo_through_gate(gate: Gate, root: Path, case: Case, log) -> None:
    """Agent mode: undo the case with `lspgate patch -R` (untimed), as an agent that
    edits only through lspgate would; the copy must be pristine after it."""
    _, proc = gate.run(root, ["patch", "-R", str(case.diff), "--format", "json", "-q",
                              *gate.extra])
    dirty = git(root, "status", "--porcelain").strip()
    if proc.returncode not in (0, 1) or dirty:
        log(f"{case.project.name}/{case.name}: the undo through lspgate exited "
            f"{proc.returncode}, copy {'not ' if dirty else ''}pristine; restored with git")
        restore(root)


def run_case(gate: Gate, root: Path, case: Case, mode: str, log=None) -> Outcome:
    """One timed `lspgate patch` of the case, scored; then the copy back to pristine
    (through lspgate in agent mode, else with git)."""
    o = Outcome(case, mode)
    try:
        if mode == "hook":
            # Another tool makes the edit; the hook reports it.
            apply_diff(root, case.diff)
            wall, proc = gate.changed(root)
        else:
            if mode == "cold":
                gate.without_stored_baselines()
            wall, proc = gate.patch(root, case.diff, cold=(mode in ("cold", "stored")))
        o.wall = wall
        o.exit = proc.returncode
        if SAVE is not None:
            stem = SAVE / f"{case.project.name}.{case.name}.{mode}"
            n = len(list(SAVE.glob(stem.name + ".*.json")))
            Path(f"{stem}.{n}.json").write_text(proc.stdout)
            Path(f"{stem}.{n}.stderr").write_text(proc.stderr)
            Path(f"{stem}.{n}.wall").write_text(f"{wall:.3f} {proc.returncode}\n")
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            o.error = f"no JSON report (exit {proc.returncode}): " + \
                (proc.stderr.strip().splitlines() or [""])[-1][:200]
            return o
        score(case, o, report)
    except subprocess.TimeoutExpired:
        o.error = f"lspgate ran more than {RUN_TIMEOUT}s"
    finally:
        if mode == "agent" and log is not None and not o.error:
            undo_through_gate(gate, root, case, log)
        else:
            restore(root)
    return o


def edited_file(case: Case) -> str | None:
    """The first existing file the case edits, or None when it only creates files."""
    return next((d.old for d in parse_diff(case.diff.read_text()) if d.old), None)


def warm_file(cases: list[Case]) -> str:
    """A file the first case edits, as it stands before: the warm-up check asks about it."""
    for c in cases:
        if (path := edited_file(c)) is not None:
            return path
    raise CorpusError("no case edits an existing file")


def stop_daemon(gate: Gate, root: Path, p: Project, log) -> None:
    """The copy's daemon stopped, and the copy back to pristine."""
    try:
        gate.run(root, ["daemon", "stop"])
    except subprocess.TimeoutExpired:
        log(f"{p.name}: daemon stop ran more than {RUN_TIMEOUT}s")
    restore(root)


def timed_checker(p: Project, root: Path):
    """The batch checker on the pristine copy at `root`, as a user runs it after an
    edit."""
    if p.language == "Rust":
        # cargo keeps the last check: on an untouched copy it does nothing. A user's
        # check after an edit re-checks the crate, its dependencies built: that. A
        # workspace's: every member (an edit to crossbeam-utils re-checks them all).
        for lib in [root / "src" / "lib.rs", *sorted(root.glob("*/src/lib.rs"))]:
            if lib.exists():
                os.utime(lib)
    return run_checker(p, root)


def run_project(p: Project, cases: list[Case], args, gate_binary: Path, scratch: Path,
                log) -> tuple[list[Outcome], float, str, dict]:
    root = make_copy(p, scratch)
    env = checker_env(p)
    batch = timed_checker(p, root)
    # Timed BATCH_RUNS times, the median kept: one timing on a shared machine was off
    # by up to 5x (itertools' `cargo check` 5.21 s against 0.95 s), and every ratio of
    # the project rests on it. Each on a fresh copy, as the first: run again on the
    # same one, `go vet` and `cargo check` answer from their caches (go-cmp 0.23 s
    # against 2.2 s, itertools 0.28 s against 1.1 s). A developer's check after a real
    # edit keeps those caches and lies between (itertools 0.22-0.89 s a case;
    # bench/corpus/README.md, session 25).
    times = [batch.seconds]
    for i in range(BATCH_RUNS - 1):
        again = scratch / f"batch-{i}"
        try:
            times.append(timed_checker(p, make_copy(p, again)).seconds)
        finally:
            shutil.rmtree(again, ignore_errors=True)
    batch = dataclasses.replace(batch, seconds=statistics.median(times))
    log(f"{p.name}: {p.checker_label}: {batch.seconds:.2f}s (median of "
        f"{', '.join(f'{t:.2f}' for t in times)}), {len(batch.errors)} errors")
    outcomes: list[Outcome] = []
    gate = Gate(gate_binary, scratch / "state", env, args.gate_args)
    if "cold" in args.modes:
        outcomes += run_cold(gate, root, p, cases, args, "cold", log, env)
    if "stored" in args.modes:
        # A CI job whose cache holds the base commit's baseline: one made of the
        # pristine tree by an untimed `lspgate baseline` first.
        gate.without_stored_baselines()
        gate.run(root, ["baseline", "-q", *gate.extra])
        outcomes += run_cold(gate, root, p, cases, args, "stored", log)
    for mode in ("warm", "agent", "hook"):
        if mode in args.modes:
            outcomes += run_through_daemon(gate, root, p, cases, args, mode, log)
    if "idle" in args.modes:
        outcomes += run_after_idle(gate, root, p, cases, args, batch.seconds, log)
    alone: dict[str, dict] = {}
    if args.recheck and p.recheck:
        named = [(c.name, c.diff) for c in cases]
        runs = [("warm", recheck.measure)]
        if "idle" in args.modes:
            think = THINK_TIMES * batch.seconds
            runs.append(("idle", lambda *a: recheck.measure_idle(*a, think=think)))
        # The cold floor was measured next to each cold run; a stored run is held
        # against its case's median.
        floors: dict[str, list] = {}
        for o in outcomes:
            if o.mode == "cold" and isinstance(o.alone, (int, float)):
                floors.setdefault(o.case.name, []).append(o.alone)
        if floors:
            alone["cold"] = {name: statistics.median(v) for name, v in floors.items()}
        for mode, measure in runs:
            t0 = time.monotonic()
            alone[mode] = measure(p, root, named, env)
            log(f"{p.name}: server alone ({p.recheck}, {mode}) took "
                f"{time.monotonic() - t0:.0f}s: " +
                ", ".join(f"{k}={fmt_recheck(v)}" for k, v in alone[mode].items()))
    return outcomes, batch.seconds, p.checker_label, alone


def run_cold(gate: Gate, root: Path, p: Project, cases: list[Case], args, mode: str,
             log, env: dict | None = None) -> list[Outcome]:
    """Cold or stored: each case's `patch --no-daemon`, `args.runs` times. With `env`
    (cold, the server alone measured), each run comes right after the floor it is
    held against, the server alone on the same case: one load on the machine for both,
    where a floor measured in a phase of its own drifted from the runs by more than
    the 10% the ratio is judged on."""
    outcomes = []
    for case in cases:
        for _ in range(args.runs):
            floor = None
            if env is not None and args.recheck and p.recheck:
                floor = recheck.measure_cold(p, root, [(case.name, case.diff)], env)
                floor = floor.get(case.name)
            o = run_case(gate, root, case, mode)
            o.alone = floor
            outcomes.append(o)
            log(f"{p.name}/{case.name} {mode}: {brief(o)}"
                + (f", server alone {fmt_recheck(floor)}" if floor is not None else ""))
    return outcomes


def run_after_idle(gate: Gate, root: Path, p: Project, cases: list[Case], args,
                   batch_seconds: float, log) -> list[Outcome]:
    """Idle: each case on a fresh daemon, warmed by an untimed check of the file it
    edits, left idle for twice the batch checker's time (the agent thinking: the time
    the daemon has to get ready), then the edit, timed."""
    outcomes: list[Outcome] = []
    for case in cases:
        first = edited_file(case)
        if first is None:
            continue  # a case that only creates files has no file to look at first
        for _ in range(args.runs):
            try:
                gate.run(root, ["daemon", "start"])
                gate.run(root, ["check", first, "--format", "json", "-q", *args.gate_args])
                time.sleep(THINK_TIMES * batch_seconds)
                o = run_case(gate, root, case, "idle")
                outcomes.append(o)
                log(f"{p.name}/{case.name} idle: {brief(o)}")
            except subprocess.TimeoutExpired:
                log(f"{p.name}/{case.name}: an idle run ran more than {RUN_TIMEOUT}s")
            finally:
                stop_daemon(gate, root, p, log)
    return outcomes


def run_through_daemon(gate: Gate, root: Path, p: Project, cases: list[Case], args, mode: str,
                       log) -> list[Outcome]:
    """Warm or agent: a daemon for the copy, warmed by one untimed check, then every
    case through it; warm restores the copy with git behind the daemon's back (and an
    untimed check lets the daemon take the restore in, so the next figure is its own
    edit's), agent undoes each case through lspgate."""
    outcomes: list[Outcome] = []
    warm_check = ["check", warm_file(cases), "--format", "json", "-q", *args.gate_args]
    try:
        gate.run(root, ["daemon", "start"])
        wall, proc = gate.run(root, warm_check)
        log(f"{p.name}: daemon warmed by one check in {wall:.1f}s (exit {proc.returncode})")
        if mode == "hook":
            # The hook's baseline: the tree as it is (the first call measures from git's
            # index, which it equals).
            gate.changed(root)
        for case in cases:
            for _ in range(args.runs):
                o = run_case(gate, root, case, mode, log)
                outcomes.append(o)
                log(f"{p.name}/{case.name} {mode}: {brief(o)}")
                if mode == "warm":
                    gate.run(root, warm_check)
                if mode == "hook":
                    # The restore is a change too: taken in untimed, then a call with
                    # nothing changed, timed.
                    gate.changed(root)
                    wall, proc = gate.changed(root)
                    NOCHANGE.setdefault(p.name, []).append(wall)
                    if proc.returncode != 0:
                        log(f"{p.name}: a call with nothing changed exited {proc.returncode}")
    except subprocess.TimeoutExpired:
        log(f"{p.name}: a {mode} run ran more than {RUN_TIMEOUT}s")
    finally:
        stop_daemon(gate, root, p, log)
    return outcomes


def brief(o: Outcome) -> str:
    if o.error:
        return o.error
    return (f"exit {o.exit} (want {o.case.want_exit}), found {o.found_dep}/{o.truth_dep} "
            f"dependent, {o.gate_in_truth}/{o.gate_new} of its new errors right, "
            f"{o.wall:.2f}s" + (f"; {'; '.join(o.notes)}" if o.notes else ""))


# --- tables --------------------------------------------------------------------------

def pct(num: int, den: int) -> str:
    return "-" if den == 0 else f"{100 * num / den:.0f}% ({num}/{den})"


def secs(v: float | None) -> str:
    return "-" if v is None or v != v else f"{v:.2f}"


def fmt_recheck(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v.split(":")[0]  # "timeout" or "failed"; the log has the reason
    return f"{v / 1000:.2f}"


def table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def median(vals: list[float]) -> float | None:
    vals = [v for v in vals if v == v]
    return statistics.median(vals) if vals else None


def server_alone(o: Outcome, alone: dict):
    """The server's own time for the outcome's case: its warm re-check for a warm or
    agent run, the cold floor for a cold one (None where not measured). A floor
    measured next to the run is the run's own."""
    if o.alone is not None:
        return o.alone
    by_mode = alone.get(o.case.project.name, {})
    mode = {"cold": "cold", "stored": "cold", "idle": "idle"}.get(o.mode, "warm")
    return by_mode.get(mode, {}).get(o.case.name)


def case_table(outcomes: list[Outcome], batch: dict, alone: dict) -> str:
    head = ["project", "case", "mode", "dependent recall", "precision", "clean", "exit (want)",
            "wall s", "batch s", "ratio", "server alone s", "notes"]
    rows = []
    for o in outcomes:
        p = o.case.project
        b = batch.get(p.name)
        rc = server_alone(o, alone)
        clean = {None: "", True: "ok", False: "WRONG"}[o.clean_ok]
        if o.error:
            rows.append([p.name, o.case.name, o.mode, "-", "-", clean, f"{o.exit} ({o.case.want_exit})",
                         secs(o.wall), secs(b), "-", fmt_recheck(rc), o.error[:100]])
            continue
        exit_s = f"{o.exit} ({o.case.want_exit})" + ("" if o.exit_right else " WRONG")
        rows.append([p.name, o.case.name, o.mode, pct(o.found_dep, o.truth_dep),
                     pct(o.gate_in_truth, o.gate_new), clean, exit_s, secs(o.wall), secs(b),
                     f"{o.wall / b:.1f}x" if b else "-", fmt_recheck(rc),
                     "; ".join(o.notes)[:120]])
    return table(head, rows)


def language_table(outcomes: list[Outcome], batch: dict, alone: dict) -> str:
    head = ["language", "mode", "cases", "dependent recall", "precision", "clean edits ok",
            "exit right", "median wall s", "batch s", "median ratio to batch",
            "median server alone s", "median wall / server alone"]
    rows = []
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.case.project.language, o.mode), []).append(o)
    for (lang, mode), os_ in groups.items():
        ok = [o for o in os_ if not o.error]
        td = sum(o.truth_dep for o in ok)
        fd = sum(o.found_dep for o in ok)
        gn = sum(o.gate_new for o in ok)
        gt = sum(o.gate_in_truth for o in ok)
        cleans = [o for o in os_ if o.case.meta.get("kind") == "clean"]
        projects = sorted({o.case.project.name for o in os_})
        b = [batch[n] for n in projects if n in batch]  # one per project
        ratios = [o.wall / batch[o.case.project.name] for o in ok
                  if batch.get(o.case.project.name)]
        rcs, per = [], []
        for o in ok:
            v = server_alone(o, alone)
            if isinstance(v, (int, float)):
                rcs.append(v / 1000)
                per.append(o.wall / (v / 1000) if v > 0 else float("nan"))
        rows.append([lang, mode, str(len(os_)), pct(fd, td), pct(gt, gn),
                     f"{sum(1 for o in cleans if o.clean_ok)}/{len(cleans)}",
                     f"{sum(1 for o in os_ if o.exit_right)}/{len(os_)}",
                     secs(median([o.wall for o in ok])),
                     secs(b[0]) if len(b) == 1 else
                     ", ".join(f"{n} {secs(batch[n])}" for n in projects if n in batch),
                     secs(median(ratios)) + "x" if ratios else "-",
                     secs(median(rcs)), secs(median(per)) + "x" if per else "-"])
    return table(head, rows)


def lspgate_version(binary: Path) -> str:
    try:
        return subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "lspgate (version unknown)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lspgate", type=Path, required=True)
    ap.add_argument("--projects", help="comma-separated subset (default: all)")
    ap.add_argument("--cases", help="comma-separated case names (default: all)")
    ap.add_argument("--runs", type=int, default=1, help="runs of each case per mode")
    ap.add_argument("--modes", default="cold,warm",
                    help="comma-separated: cold, warm (each case restored with git behind "
                    "the daemon's back), agent (each case undone through lspgate), hook "
                    "(each case applied with git, then `check --changed` through the daemon), "
                    "idle (the first edit after the daemon sat idle: a check, think time of "
                    "twice the batch checker, the edit, on a fresh daemon per case), stored "
                    "(cold, with a stored baseline of the pristine tree)")
    ap.add_argument("--no-recheck", dest="recheck", action="store_false",
                    help="skip the server's own re-check time")
    ap.add_argument("--smoke", action="store_true",
                    help="two small cases; check the tables are produced (CI)")
    ap.add_argument("--gate-args", default=" ".join(DEFAULT_GATE_ARGS),
                    help="extra lspgate options for every run (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="also write the tables to this file")
    ap.add_argument("--save", type=Path, help="keep every lspgate report (JSON and stderr) "
                    "in this directory")
    args = ap.parse_args()
    global SAVE
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        SAVE = args.save
    args.gate_args = args.gate_args.split()
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if args.smoke:
        args.projects = ",".join(SMOKE)
        args.runs = 1
    only = set(args.cases.split(",")) if args.cases else None
    binary = args.lspgate.resolve()
    if not binary.exists():
        print(f"corpus: {binary}: no such lspgate binary", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(f"corpus: {msg}", file=sys.stderr, flush=True)

    t0 = time.monotonic()
    load_start = os.getloadavg()[0]
    outcomes: list[Outcome] = []
    batch: dict[str, float] = {}
    labels: dict[str, str] = {}
    alone: dict[str, dict] = {}
    failures = []
    for p in select(args.projects):
        try:
            fetch(p, force=False)
            wanted = set(SMOKE[p.name]) if args.smoke else only
            cases = load_cases(p, wanted)
            if not cases:
                continue
            with tempfile.TemporaryDirectory(prefix=f"corpus-{p.name}-") as tmp:
                o, b, label, rc = run_project(p, cases, args, binary, Path(tmp), log)
            outcomes += o
            batch[p.name] = b
            labels[p.name] = label
            alone[p.name] = rc
        except (CorpusError, FetchError, OSError) as e:
            log(f"{p.name}: {e}")
            failures.append(p.name)
    elapsed = time.monotonic() - t0

    out = [f"lspgate corpus: {lspgate_version(binary)}, {platform.machine()}, "
           f"{os.cpu_count()} cores (load average {load_start:.1f} at the start, "
           f"{os.getloadavg()[0]:.1f} at the end: other work on the machine slows every "
           f"column alike); {len(outcomes)} runs in {elapsed:.0f}s; "
           f"lspgate options: {' '.join(args.gate_args) or '(defaults)'}", "",
           "Batch checkers (whole project, this run): " + ", ".join(
               f"{n} `{labels[n]}` {batch[n]:.2f}s" for n in batch), "",
           "### Per language", "", language_table(outcomes, batch, alone), "",
           "### Per case", "", case_table(outcomes, batch, alone), ""]
    if NOCHANGE:
        out += ["### Hook mode: calls with nothing changed", "",
                table(["project", "calls", "median wall s", "max wall s"],
                      [[n, str(len(w)), secs(median(w)), secs(max(w))]
                       for n, w in NOCHANGE.items()]), ""]
    text = "\n".join(out)
    print(text)
    if args.out:
        args.out.write_text(text)
    broken = [o for o in outcomes if o.error]
    if failures or broken:
        log(f"{len(failures)} projects failed, {len(broken)} runs gave no report")
        return 1
    if args.smoke and not outcomes:
        log("smoke: no run was made")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
