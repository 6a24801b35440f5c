"""The daemon's own memory on large trees, and what `check --changed` costs there: the
resident memory of the daemon process (its servers apart), the directories it watches,
the `check --changed` baseline on disk, and the wall time of a `check --changed` with
nothing changed and with a change, side by side for each tree.

Trees (each a fresh git repository with everything committed, a private XDG state):

  * generated: the Python quick-start fixture (tests/fixtures/python) plus N small
    asset files (`assets/dNNN/eNN/fNNNNNN.txt`, 50 to a directory, 20 directories to a
    parent), N = 10,000 and 100,000 by default (`--trees`);
  * the largest fetched corpus project (`--corpus`; Django when
    `bench/corpus/fetch.py --projects django` has fetched it, else the project of the
    most files in ~/.cache/lspgate-corpus), changed by one of its breaking cases.

On each: a `check` of the file the change edits starts the daemon and its server (cold,
untimed), a second one is the warm check; a first `check --changed` takes its baseline
from the git index (timed, apart); then `--runs` `check --changed` with nothing changed
(the median is the no-change figure); then `--changes` times another process breaks the
file (the fixture: `a.py`'s `greet` gains a required parameter, breaking `b.py` and
`c.py`; a corpus project: `git apply` of the case) and a `check --changed` reports it
(the median is the change figure; it must exit 1), and the change is undone, followed by
an untimed `check --changed`.

Memory is the daemon process's VmRSS and VmHWM (/proc/PID/status), read after the warm
check, after the no-change calls and after the last changed call; VmHWM is the
lifetime peak, so each later one includes the earlier. The servers are processes of
their own and are not counted. `check --changed` walks the tree and reads and writes
its baseline in the CLI process, not the daemon: the CLI's peak (VmHWM, by GNU time,
when installed) of one more no-change call and of the changed calls is shown too. So is
the CPU time of a no-change call: the daemon's (from /proc/PID/stat, over the timed
calls, per call) and the CLI's (user + system, by GNU time, the one more call). The baseline is the size on disk of the files under the
data directory's `changed/` (XDG_DATA_HOME is private to the run).

Targets (issue 31): the daemon under 100 MiB resident on the largest corpus project and
on a 100,000-file tree; a no-change call under 50 ms median on a 10,000-file tree.

Measured at e28a1a2 (release build, shared 2-core machine, load average 2 to 5; the
README's Benchmark section has the table): the daemon's VmHWM 7.6 MiB on the fixture +
10,000 files, 9.3 MiB on + 100,000 files, 29.9 MiB on Django, the CLI's at most 39 MiB:
under 100 MiB. The no-change call: 137 ms median on 10,000 files, over the 50 ms target;
980 ms on 100,000 files, 614 ms on Django (mostly the daemon's CPU: 50, 504, 670 ms a
call). The baseline on disk: 0.4 KiB on the fixture trees (it holds only the files the
servers cover), 126 KiB on Django. A changed call: 589 ms, 1,462 ms, and 33 s on Django
(pyright's re-check of `make_hashable`'s importers); its third call on Django reported
13 of the 15 new errors.

--smoke (CI): one tree of 200 asset files, 2 no-change calls, one change, no corpus
project: checks the table is produced, not the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "corpus"))
from daemon_latency import (GNU_TIME, lspgate_env, median, report_of,  # noqa: E402
                            run_measured, table)
from edit_latency import FIXTURES  # noqa: E402
from common import make_copy  # noqa: E402
from projects import PROJECTS, Project, cache_dir  # noqa: E402

# The fixture's breaking edit: every caller of `greet` (b.py, c.py) lacks the argument.
FIXTURE_FILE = "a.py"
FIXTURE_OLD = "def greet(name: str) -> str:"
FIXTURE_NEW = "def greet(name: str, times: int) -> str:"

PER_DIR, DIRS_PER_PARENT = 50, 20
GATE_ARGS = ["--format", "json", "-q", "--startup-timeout", "300s"]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost",
                    *args], cwd=root, check=True, stdout=subprocess.DEVNULL)


def commit_all(root: Path) -> None:
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-gpg-sign", "-m", "tree")


def generated_tree(into: Path, files: int) -> Path:
    root = into / f"tree-{files}"
    shutil.copytree(FIXTURES / "python", root)
    for i in range(files):
        leaf = root / "assets" / f"d{i // (PER_DIR * DIRS_PER_PARENT):03}" / \
            f"e{(i // PER_DIR) % DIRS_PER_PARENT:02}"
        if i % PER_DIR == 0:
            leaf.mkdir(parents=True)
        (leaf / f"f{i:06}.txt").write_text(f"asset {i}\n")
    commit_all(root)
    return root


def largest_fetched() -> Project | None:
    fetched = [p for p in PROJECTS if (p.tree() / ".corpus-pin").exists()]
    django = [p for p in fetched if p.name == "django"]
    if django:
        return django[0]
    return max(fetched, key=lambda p: sum(1 for _ in p.tree().rglob("*")), default=None)


def breaking_case(p: Project) -> Path | None:
    """The project's first case that breaks other files (a changed signature first)."""
    cases = []
    for meta in sorted(p.case_dir.glob("*.json")):
        data = json.loads(meta.read_text())
        if data.get("kind") == "breaking" and \
                data.get("expected", {}).get("new_in_other_files", 0) > 0:
            cases.append(("signature" not in data.get("covers", []), meta.stem))
    if not cases:
        return None
    diff = p.diff_dir / f"{min(cases)[1]}.diff"
    return diff if diff.exists() else None


def edited_file(diff: Path) -> str:
    for line in diff.read_text().splitlines():
        if line.startswith("+++ b/"):
            return line[len("+++ b/"):]
    raise ValueError(f"{diff}: no file")


def proc_kib(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def daemon_status(base: list[str], root: Path, env: dict) -> dict:
    _, _, out, _ = run_measured(base + ["daemon", "status", "--format", "json"], root, env)
    return report_of(out)


def memory(pid: int | None) -> tuple[int | None, int | None]:
    if pid is None:
        return None, None
    return proc_kib(pid, "VmRSS"), proc_kib(pid, "VmHWM")


def cpu_ms(pid: int | None) -> int | None:
    """The user and system CPU time `pid` has used, in ms (clock ticks of 10 ms)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError):
        return None


def disk_bytes(top: Path) -> int:
    return sum(f.stat().st_size for f in top.rglob("*") if f.is_file())


def measure(lspgate: Path, label: str, root: Path, edited: str, change, undo, runs: int,
            changes: int, scratch: Path, extra_env: dict, errors: list[str]) -> dict:
    """The sequence of the module doc on `root`; `change` and `undo` edit it as
    another process would."""
    env = lspgate_env(scratch / f"state-{label}", daemon=True)
    env.update(extra_env)
    base = [str(lspgate), "-C", str(root)]
    row: dict = {"label": label,
                 "files": len(subprocess.run(["git", "ls-files"], cwd=root, check=True,
                                             capture_output=True, text=True).stdout.split())}

    peaks: dict[str, int] = {}

    def gate(args: list[str], what: str, want: tuple[int, ...],
             peak: str = "") -> tuple[float, dict]:
        """One call; with `peak`, under GNU time, its VmHWM kept as the largest of
        that kind (the wall time then includes starting GNU time, about 1 ms)."""
        cmd = base + args + GATE_ARGS
        with tempfile.NamedTemporaryFile(mode="r") as hwm:
            if peak and GNU_TIME:
                cmd = [GNU_TIME, "-f", "%M %U %S", "-o", hwm.name, *cmd]
            wall, code, out, err = run_measured(cmd, root, env)
            if peak and GNU_TIME:
                try:
                    kib, user, system = hwm.read().strip().splitlines()[-1].split()
                    peaks[peak] = max(peaks.get(peak, 0), int(kib))
                    peaks[peak + "_cpu"] = (float(user) + float(system)) * 1000
                except (ValueError, IndexError):
                    pass
        if code not in want:
            errors.append(f"{label}: {what} exited {code}: {err.strip()[-300:]}")
            return float("nan"), {}
        return wall, report_of(out)

    try:
        gate(["check", edited], "cold check", (0, 1))
        row["warm_check"], _ = gate(["check", edited], "warm check", (0, 1))
        pid = daemon_status(base, root, env).get("pid")
        row["mem_warm"] = memory(pid)
        row["first_changed"], _ = gate(["check", "--changed"], "first check --changed", (0,))
        before = cpu_ms(pid)
        row["no_change"] = median([w for w in (gate(["check", "--changed"],
                                                    "no-change check --changed", (0,))[0]
                                               for _ in range(runs)) if w == w])
        after = cpu_ms(pid)
        row["daemon_cpu"] = (after - before) / runs \
            if before is not None and after is not None else None
        # One more, for the CLI's peak: GNU time is not in the timed calls.
        gate(["check", "--changed"], "no-change check --changed", (0,), peak="cli_no_change")
        row["mem_no_change"] = memory(pid)
        walls, found = [], []
        for _ in range(changes):
            change()
            wall, report = gate(["check", "--changed"], "changed check --changed", (1,),
                                peak="cli_changed")
            walls.append(wall)
            found.append(report.get("summary", {}).get("new", {}).get("errors"))
            row["mem_changed"] = memory(pid)
            undo()
            gate(["check", "--changed"], "check --changed after the undo", (0, 1))
        row["changed"] = median([w for w in walls if w == w])
        row.update(peaks)
        row["new_errors"] = found
        status = daemon_status(base, root, env)
        row["watched"] = status.get("watched_directories")
        if status.get("pid") != pid:
            errors.append(f"{label}: the daemon changed during the run ({pid} → "
                          f"{status.get('pid')})")
        changed_dirs = list(Path(env["XDG_DATA_HOME"]).rglob("changed"))
        row["baseline"] = sum(disk_bytes(d) for d in changed_dirs if d.is_dir()) \
            if changed_dirs else None
    finally:
        run_measured(base + ["daemon", "stop"], root, env)
        shutil.rmtree(env["LSPGATE_RUNTIME_DIR"], ignore_errors=True)
    return row


def fixture_change(root: Path):
    path = root / FIXTURE_FILE
    old = path.read_text()

    def change() -> None:
        path.write_text(old.replace(FIXTURE_OLD, FIXTURE_NEW, 1))

    def undo() -> None:
        path.write_text(old)
    return change, undo


def fmt_ms(v: float | None) -> str:
    return "-" if v is None or v != v else f"{v:.0f}"


def fmt_mem(pair: tuple[int | None, int | None] | None) -> str:
    if not pair or not pair[0] or not pair[1]:
        return "-"
    return f"{pair[0] / 1024:.1f} / {pair[1] / 1024:.1f}"


def fmt_kib(kib: int | None) -> str:
    return "-" if not kib else f"{kib / 1024:.1f}"


def fmt_bytes(n: int | None) -> str:
    if n is None:
        return "-"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lspgate", type=Path, required=True, help="the lspgate binary")
    ap.add_argument("--trees", default="10000,100000",
                    help="asset files of each generated tree, comma-separated")
    ap.add_argument("--corpus", help="the corpus project (default: the largest fetched); "
                    "'none' skips it")
    ap.add_argument("--runs", type=int, default=10, help="no-change calls")
    ap.add_argument("--changes", type=int, default=3, help="changed calls")
    ap.add_argument("--smoke", action="store_true",
                    help="one tree of 200 files, no corpus project; check the table")
    args = ap.parse_args()
    lspgate = args.lspgate.resolve()
    if not os.access(lspgate, os.X_OK):
        print(f"bench: {lspgate} is not an executable", file=sys.stderr)
        return 2
    sizes = [200] if args.smoke else [int(n) for n in args.trees.split(",") if n]
    runs, changes = (2, 1) if args.smoke else (args.runs, args.changes)
    project = None
    if not args.smoke and args.corpus != "none":
        project = next((p for p in PROJECTS if p.name == args.corpus), None) \
            if args.corpus else largest_fetched()
        if project is None or not (project.tree() / ".corpus-pin").exists():
            print(f"bench: corpus project {args.corpus or ''} not fetched in {cache_dir()}",
                  file=sys.stderr)
            project = None

    errors: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="lspgate-mbench-") as tmp:
        scratch = Path(tmp)
        for n in sizes:
            root = generated_tree(scratch, n)
            change, undo = fixture_change(root)
            rows.append(measure(lspgate, f"fixture + {n:,} files", root, FIXTURE_FILE,
                                change, undo, runs, changes, scratch, {}, errors))
            shutil.rmtree(root, ignore_errors=True)
            print(f"bench: {n} files done", file=sys.stderr, flush=True)
        if project is not None:
            diff = breaking_case(project)
            if diff is None:
                errors.append(f"{project.name}: no breaking case")
            else:
                root = make_copy(project, scratch)

                def apply(args: list[str]) -> None:
                    git(root, "apply", "--whitespace=nowarn", *args, str(diff))
                rows.append(measure(lspgate, f"{project.name} ({diff.stem})", root,
                                    edited_file(diff), lambda: apply([]),
                                    lambda: apply(["-R"]), runs, changes, scratch,
                                    project.env, errors))
                print(f"bench: {project.name} done", file=sys.stderr, flush=True)

    lines = [[r["label"], f"{r['files']:,}", str(r.get("watched", "-")),
              fmt_ms(r.get("warm_check")), fmt_ms(r.get("first_changed")),
              fmt_ms(r.get("no_change")),
              f"{fmt_ms(r.get('changed'))} "
              f"({', '.join(str(e) for e in r.get('new_errors', []))} new errors)",
              fmt_mem(r.get("mem_warm")), fmt_mem(r.get("mem_no_change")),
              fmt_mem(r.get("mem_changed")), fmt_bytes(r.get("baseline")),
              f"{fmt_kib(r.get('cli_no_change'))} / {fmt_kib(r.get('cli_changed'))}",
              f"{fmt_ms(r.get('daemon_cpu'))} / {fmt_ms(r.get('cli_no_change_cpu'))}"]
             for r in rows]
    table(f"The daemon's own memory (VmRSS / VmHWM MiB, its servers apart) and `check "
          f"--changed` wall times (ms; no change: median of {runs}, a change: median of "
          f"{changes}). Targets: daemon under 100 MiB, no-change call under 50 ms",
          ["tree", "files (git)", "dirs watched", "warm check ms",
           "first --changed ms (from the git index)", "no-change --changed ms",
           "changed --changed ms", "daemon after warm check", "after no-change calls",
           "after changed calls", "--changed baseline on disk",
           "CLI peak MiB, no change / changed",
           "no-change call CPU ms, daemon / CLI"], lines)
    over = [f"{r['label']}: daemon VmHWM {r['mem_changed'][1] / 1024:.1f} MiB"
            for r in rows if r.get("mem_changed") and r["mem_changed"][1]
            and r["mem_changed"][1] > 100 * 1024]
    over += [f"{r['label']}: `check --changed` CLI VmHWM {r[k] / 1024:.1f} MiB"
             for r in rows for k in ("cli_no_change", "cli_changed")
             if r.get(k, 0) > 100 * 1024]
    over += [f"{r['label']}: no-change call {r['no_change']:.0f} ms"
             for r in rows if r.get("no_change", float("nan")) > 50]
    if over:
        print()
    for o in over:
        print(f"over the target: {o}")
    sys.stdout.flush()

    for e in errors:
        print(f"bench: {e}", file=sys.stderr)
    incomplete = [r["label"] for r in rows
                  if any(r.get(k) is None or r.get(k) != r.get(k)
                         for k in ("warm_check", "no_change", "changed", "watched", "baseline"))
                  or not all(r.get(k) and r[k][0] for k in ("mem_warm", "mem_no_change",
                                                             "mem_changed"))]
    if args.smoke and (incomplete or errors or len(rows) != len(sizes)):
        print(f"bench: smoke: table incomplete: {incomplete or errors or 'rows missing'}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
