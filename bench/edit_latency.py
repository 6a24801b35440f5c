"""Edit latency: what one cold `lspgate edit` costs next to the server's own latency.

For each server, on its bundled fixture (tests/fixtures/<lang>), the same edit
(introduce a type error in module `a`) is made twice in fresh copies:

  * by `lspgate edit --no-daemon` (cold: spawns the server, waits for the edited
    file and for the files the edit can break, prints the report), wall time;
  * by the stdlib LSP client in lsp_client.py, which times the server itself:
    spawn → the file's first diagnostics, spawn → the end of its start-up work
    (indexing, project load, first cargo check), and, once warm, didChange → the
    diagnostics of the new text.

The ratio is lspgate's wall time over the server's didChange latency: how much a
cold one-shot run costs compared with an editor holding a warm server. The
daemon (coming) is what closes that gap.

Then the same on a real project fetched from PyPI when the bench runs (the
`requests` sdist): an edit that makes a helper's parameter required, breaking
callers in four other modules.

--smoke (CI): one run per server, fixture only; checks the table is produced,
not the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_client import measure_edit  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"

# (name, command, fixture, file, languageId, old, new, settings, initializationOptions)
# The commands and options are lspgate's built-in ones (src/servers/), so both
# sides start the same server the same way.
SERVERS = [
    ("pyright", ["pyright-langserver", "--stdio"], "python", "a.py", "python",
     'return "Hello, " + name', "return 42",
     {"python": {"analysis": {"diagnosticMode": "openFilesOnly"}}}, None),
    ("typescript-language-server", ["typescript-language-server", "--stdio"], "typescript",
     "a.ts", "typescript", 'return "Hello, " + name;', "return 42;", None, {"preferences": {}}),
    ("gopls", ["gopls"], "go", "a/a.go", "go", 'return "Hello, " + name', "return 42",
     {"gopls": {"diagnosticsDelay": "0s"}}, None),
    ("clangd", ["clangd", "--background-index=false"], "c", "a.c", "c",
     "return name;", "return name * 2;", None, {"clangdFileStatus": True}),
    ("rust-analyzer", ["rust-analyzer"], "rust", "src/a.rs", "rust",
     'format!("Hello, {name}")', "42", None, {"checkOnSave": True}),
]

REAL_PROJECT_WAITS = ["--startup-timeout", "120s", "--timeout", "30s",
                      "--cross-file-timeout", "60s"]

REAL_PROJECT = {
    "package": "requests",
    "file": "src/requests/_internal_utils.py",
    "old": 'encoding: str = "ascii") -> str:',
    "new": "encoding: str) -> str:",
}


def workspace(src: Path, into: Path) -> Path:
    """A fresh copy of `src` as its own git repository, as lspgate's users have."""
    dest = into / src.name
    shutil.copytree(src, dest)
    subprocess.run(["git", "init", "-q", str(dest)], check=True)
    return dest


def run_lspgate(lspgate: Path, root: Path, rel: str, old: str, new: str,
                state: Path, extra: list[str]) -> dict:
    env = dict(os.environ)
    # Private XDG dirs: the history database of a bench run is nobody's business.
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
                "XDG_CACHE_HOME"):
        env[var] = str(state / var.lower())
        Path(env[var]).mkdir(parents=True, exist_ok=True, mode=0o700)
    env["LSPGATE_NO_DAEMON"] = "1"
    env["NO_COLOR"] = "1"
    cmd = [str(lspgate), "-C", str(root), "edit", rel, "--old", old, "--new", new,
           "--no-daemon", "--format", "json", *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    wall = (time.monotonic() - t0) * 1000
    new_errors = dependents = None
    try:
        report = json.loads(proc.stdout)
        new_errors = report["summary"]["new"]["errors"]
        dependents = sum(1 for f in report["files"] if f.get("role") == "dependent"
                         and any(d.get("new") for d in f.get("diagnostics", [])))
    except (ValueError, KeyError, TypeError):
        pass
    return {"wall": wall, "exit": proc.returncode, "new_errors": new_errors,
            "broken_files": dependents, "stderr": proc.stderr.strip()}


def fetch_sdist(package: str, into: Path) -> Path:
    """Download `package`'s sdist from PyPI with pip and unpack it."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--no-binary", ":all:", "--dest", str(into), package], check=True)
    archive = next(into.glob(f"{package}-*.tar.gz"))
    with tarfile.open(archive) as tar:
        try:
            tar.extractall(into, filter="data")
        except TypeError:
            # A Python 3.11 older than 3.11.4 has no extraction filters; the sdist
            # comes from PyPI through pip, which has already vetted its name.
            tar.extractall(into)  # noqa: S202
    return next(p for p in into.iterdir() if p.is_dir() and p.name.startswith(package + "-"))


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def bench_one(label: str, lspgate: Path, src: Path, cmd: list[str], rel: str, lang: str,
              old: str, new: str, settings, init_options, runs: int, scratch: Path,
              errors: list[str], gate_args: list[str]) -> dict:
    gate, first, settled, change = [], [], [], []
    last: dict = {}
    mode = "?"
    for i in range(runs):
        run_dir = scratch / f"{label}-{i}"
        run_dir.mkdir(parents=True)
        try:
            last = run_lspgate(lspgate, workspace(src, run_dir / "gate"), rel, old, new,
                               run_dir / "state", gate_args)
            gate.append(last["wall"])
            if last["exit"] not in (0, 1):
                errors.append(f"{label}: lspgate exited {last['exit']}: "
                              f"{last['stderr'][-300:]}")
        except (subprocess.SubprocessError, OSError) as e:
            errors.append(f"{label}: lspgate: {e}")
        try:
            m = measure_edit(cmd, workspace(src, run_dir / "client"), rel, lang, old, new,
                             settings=settings, init_options=init_options)
            first.append(m["first_diag"])
            settled.append(m["settled"])
            change.append(m["change"])
            mode = m["mode"]
        except Exception as e:  # noqa: BLE001 — a bench row reports any failure
            errors.append(f"{label}: lsp client: {type(e).__name__}: {e}")
        shutil.rmtree(run_dir, ignore_errors=True)
    return {
        "server": label, "runs": runs, "gate": median(gate), "exit": last.get("exit"),
        "new_errors": last.get("new_errors"), "broken_files": last.get("broken_files"),
        "first": median(first), "settled": median(settled), "change": median(change),
        "mode": mode,
    }


def fmt_ms(v: float) -> str:
    return "-" if v != v else f"{v:.0f}"


def print_table(title: str, rows: list[dict]) -> None:
    head = ["server", "runs", "lspgate edit ms", "exit", "new errors", "server spawn→diag ms",
            "server spawn→settled ms", "server didChange→diag ms", "mode", "ratio"]
    lines = []
    for r in rows:
        ratio = r["gate"] / r["change"] if r["change"] == r["change"] and r["change"] > 0 \
            and r["gate"] == r["gate"] else float("nan")
        new = "-" if r["new_errors"] is None else str(r["new_errors"])
        if r.get("broken_files"):
            new += f" ({r['broken_files']} other files)"
        lines.append([r["server"], str(r["runs"]), fmt_ms(r["gate"]),
                      "-" if r["exit"] is None else str(r["exit"]), new,
                      fmt_ms(r["first"]), fmt_ms(r["settled"]), fmt_ms(r["change"]), r["mode"],
                      "-" if ratio != ratio else f"{ratio:.1f}x"])
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(head)]
    print(f"\n{title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for l in lines:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(l, widths)) + " |")
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lspgate", type=Path, required=True, help="the lspgate binary")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--smoke", action="store_true",
                    help="one run per server, fixtures only; check the table is produced")
    ap.add_argument("--servers", help="comma-separated subset of: "
                    + ", ".join(s[0] for s in SERVERS))
    ap.add_argument("--no-real-project", action="store_true")
    args = ap.parse_args()
    runs = 1 if args.smoke else args.runs
    wanted = set(args.servers.split(",")) if args.servers else None
    lspgate = args.lspgate.resolve()
    if not os.access(lspgate, os.X_OK):
        print(f"bench: {lspgate} is not an executable", file=sys.stderr)
        return 2

    errors: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="lspgate-bench-") as tmp:
        scratch = Path(tmp)
        for name, cmd, fixture, rel, lang, old, new, settings, init in SERVERS:
            if wanted and name not in wanted:
                continue
            if shutil.which(cmd[0]) is None:
                errors.append(f"{name}: {cmd[0]} is not installed")
                continue
            rows.append(bench_one(name, lspgate, FIXTURES / fixture, cmd, rel, lang, old, new,
                                  settings, init, runs, scratch, errors, []))
            print(f"bench: {name} done", file=sys.stderr, flush=True)
        print_table(f"Fixture edit (tests/fixtures), cold lspgate --no-daemon vs the server's "
                    f"own latency, median of {runs}", rows)

        if not args.smoke and not args.no_real_project and (not wanted or "pyright" in wanted):
            p = REAL_PROJECT
            src = fetch_sdist(p["package"], scratch / "sdist")
            name, cmd, _, _, lang, _, _, settings, init = SERVERS[0]
            # The default waits (5s, 2s) run out on a cold server here (exit 3, an
            # honest "not checked"); the row is about what a complete check costs.
            row = bench_one(f"pyright on {src.name}", lspgate, src, cmd, p["file"], lang,
                            p["old"], p["new"], settings, init, runs, scratch, errors,
                            REAL_PROJECT_WAITS)
            print_table(f"Real project ({src.name} from PyPI): {p['file']}, "
                        f"`{p['old']}` → `{p['new']}`, lspgate with "
                        f"{' '.join(REAL_PROJECT_WAITS)}, median of {runs}", [row])

    for e in errors:
        print(f"bench: {e}", file=sys.stderr)
    # The smoke run checks that every row was measured; numbers are not judged.
    # An lspgate exit of 2 (bad input) would mean the bench itself is wrong.
    incomplete = [r["server"] for r in rows
                  if r["gate"] != r["gate"] or r["change"] != r["change"] or r["exit"] in (None, 2)]
    if args.smoke and (incomplete or (wanted is None and len(rows) != len(SERVERS))):
        print(f"bench: smoke: table incomplete: {incomplete or 'servers missing'}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
