"""Warm daemon latency: what one `lspgate write` costs once its servers are warm, next
to the server's own latency for the same edit, and the other ways to check that edit.

For each server, on its bundled fixture (tests/fixtures/<lang>), the edit of
edit_latency.py (a type error in module `a`) is made `--runs` times in each of these
ways, each in a fresh copy of the fixture:

  * warm `lspgate write` through the daemon: one untimed run starts the daemon and the
    server; then each timed run writes the new text (and an untimed one writes the
    old text back). Wall time, as the caller sees it.
  * the server's own latency, by the stdlib client of lsp_client.py on a warm server
    started with lspgate's settings (gopls: diagnosticsDelay 0s): didChange → the
    diagnostics of the new text (push, or the answer to a pull). The ratio is the
    first over this; the target is 1.1x + 30 ms. typescript-language-server's own
    latency is its push (its 300 ms debounce included); lspgate asks tsserver instead.
  * lspgate's own cost: the warm wall time less the waits the report accounts for
    (primary and cross-file): connecting, the request, re-syncing with the disk,
    writing, printing. Also, once, a warm run on a file no server covers (no wait at
    all) and a `lspgate diagnostics` query.
  * peak memory (VmHWM) of the CLI (by GNU time, when installed) and of the daemon
    without its servers (from /proc: the servers are processes of their own).
  * cold `lspgate write --no-daemon` (spawns the server, waits, stops it);
  * the batch checker a user would run instead: `pyright FILES`, `tsc --noEmit -p .`,
    `go vet ./...`, and `clang -fsyntax-only` where clang is installed, else
    `clangd --check=FILE` (which also runs clangd's feature checks on line 1);
  * cli-lsp-client (npm package cli-lsp-client-linux-x64, installed into a temporary
    directory with npm), `diagnostics FILE`, warm: its daemon started by an untimed
    call first.

lspgate checks the edited file and the files the edit can break; the server's own
latency is for the edited file alone, as are clangd --check and cli-lsp-client.

--smoke (CI): one server (pyright), one run, no cli-lsp-client (no network): checks
the tables are produced, not the numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from edit_latency import FIXTURES, SERVERS, workspace  # noqa: E402
from lsp_client import measure_changes  # noqa: E402

WANTED = ["pyright", "typescript-language-server", "gopls", "clangd"]

# The batch checker of each server, and how the table names it.
BATCH = {
    "pyright": (["pyright", "a.py", "b.py", "c.py"], "pyright FILES"),
    "typescript-language-server": (["tsc", "--noEmit", "-p", "."], "tsc --noEmit -p ."),
    "gopls": (["go", "vet", "./..."], "go vet ./..."),
}

CLC_PACKAGE = "cli-lsp-client-linux-x64"


def clang_batch() -> tuple[list[str], str]:
    if shutil.which("clang"):
        return ["clang", "-fsyntax-only", "-Wall", "-std=c11", "a.c"], "clang -fsyntax-only"
    return (["clangd", "--check=a.c", "--check-lines=1"],
            "clangd --check (no clang here)")


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def gnu_time() -> str | None:
    """GNU time, which measures a child forked from a small process: a child forked
    from Python carries Python's resident memory into its peak (the kernel keeps the
    pre-exec high-water mark), so wait4's figure is Python's, not lspgate's."""
    path = shutil.which("time", path="/usr/bin:/bin")
    if path is None:
        return None
    try:
        probe = subprocess.run([path, "-f", "%M", "true"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if probe.returncode == 0 and probe.stderr.strip().isdigit() else None


GNU_TIME = gnu_time()


def peak_kib(cmd: list[str], cwd: Path, env: dict) -> int | None:
    """The peak resident memory (VmHWM) of one run of `cmd` in KiB, by GNU time."""
    if GNU_TIME is None:
        return None
    with tempfile.NamedTemporaryFile(mode="r") as out:
        subprocess.run([GNU_TIME, "-f", "%M", "-o", out.name, *cmd], cwd=cwd, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        try:
            return int(out.read().strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None


def run_measured(cmd: list[str], cwd: Path, env: dict) -> tuple[float, int, str, str]:
    """Run `cmd`: wall milliseconds, exit status, stdout, stderr."""
    with tempfile.TemporaryFile() as err_file:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err_file)
        # stderr goes to a file, so reading stdout to its end cannot block the child.
        out = proc.stdout.read() if proc.stdout else b""
        _, status = os.waitpid(proc.pid, 0)
        wall = (time.monotonic() - t0) * 1000
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.stdout:
            proc.stdout.close()
        err_file.seek(0)
        err = err_file.read()
    return wall, proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def lspgate_env(state: Path, daemon: bool) -> dict:
    env = dict(os.environ)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(state / var.lower())
        Path(env[var]).mkdir(parents=True, exist_ok=True, mode=0o700)
    # Short: a Unix socket path holds about 100 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="lg-rt-"))
    os.chmod(runtime, 0o700)
    env["LSPGATE_RUNTIME_DIR"] = str(runtime)
    env["NO_COLOR"] = "1"
    env.pop("LSPGATE_NO_DAEMON", None)
    if not daemon:
        env["LSPGATE_NO_DAEMON"] = "1"
    return env


def vm_hwm_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def report_of(stdout: str) -> dict:
    try:
        return json.loads(stdout)
    except ValueError:
        return {}


def new_errors(report: dict) -> int | None:
    try:
        return report["summary"]["new"]["errors"]
    except (KeyError, TypeError):
        return None


def bench_warm(lspgate: Path, src: Path, rel: str, old: str, new: str, runs: int,
               scratch: Path, errors: list[str], label: str) -> dict:
    """Warm `lspgate write` runs through the daemon, and lspgate's own cost."""
    ws = workspace(src, scratch / "warm")
    env = lspgate_env(scratch / "warm-state", daemon=True)
    path = ws / rel
    old_text = path.read_text()
    new_text = old_text.replace(old, new, 1)
    base = [str(lspgate), "-C", str(ws)]
    # Start the daemon and the server, and let the server settle.
    wall, code, _, err = run_measured(base + ["check", rel, "--format", "json"], ws, env)
    if code not in (0, 1):
        errors.append(f"{label}: warm-up run exited {code}: {err.strip()[-300:]}")
    walls, own = [], []
    last: dict = {}
    for _ in range(runs):
        wall, code, out, err = run_measured(
            base + ["write", rel, "--content", new_text, "--format", "json"], ws, env)
        last = report_of(out)
        if code not in (0, 1) or not last:
            errors.append(f"{label}: warm run exited {code}: {err.strip()[-300:]}")
            continue
        walls.append(wall)
        waits = sum((s.get("primary_ms") or 0) + (s.get("cross_file_ms") or 0)
                    for s in last.get("servers", []))
        own.append(wall - waits)
        run_measured(base + ["write", rel, "--content", old_text, "--format", "json"], ws, env)
        # An agent thinks between two edits: the server is idle when the next comes, as
        # the client's measure lets it fall quiet between changes.
        time.sleep(0.5)
    # lspgate alone: a file no server covers, and a cache query.
    none, query = [], []
    for i in range(max(runs, 3)):
        wall, code, _, _ = run_measured(
            base + ["write", "notes.txt", "--content", f"note {i}\n"], ws, env)
        if code == 0:
            none.append(wall)
        wall, code, _, _ = run_measured(base + ["diagnostics"], ws, env)
        if code == 0:
            query.append(wall)
    # Peak memory, measured apart (GNU time adds its own fork to the wall time).
    cli_peaks = [peak_kib(base + ["write", rel, "--content", new_text, "--format", "json"],
                          ws, env),
                 peak_kib(base + ["write", rel, "--content", old_text], ws, env),
                 peak_kib(base + ["diagnostics"], ws, env)]
    cli_peaks = [p for p in cli_peaks if p]
    _, _, out, _ = run_measured(base + ["daemon", "status", "--format", "json"], ws, env)
    status = report_of(out)
    daemon_peak = vm_hwm_kib(status["pid"]) if status.get("pid") else None
    run_measured(base + ["daemon", "stop"], ws, env)
    shutil.rmtree(env["LSPGATE_RUNTIME_DIR"], ignore_errors=True)
    return {
        "warm": median(walls), "own": median(own), "no_server": median(none),
        "query": median(query), "cli_peak": max(cli_peaks, default=0),
        "daemon_peak": daemon_peak, "new_errors": new_errors(last),
        "other_files": sum(1 for f in last.get("files", []) if f.get("role") == "dependent"),
    }


def bench_cold(lspgate: Path, src: Path, rel: str, old: str, new: str, runs: int,
               scratch: Path, errors: list[str], label: str) -> float:
    walls = []
    for i in range(runs):
        ws = workspace(src, scratch / f"cold-{i}")
        env = lspgate_env(scratch / f"cold-state-{i}", daemon=False)
        wall, code, _, err = run_measured(
            [str(lspgate), "-C", str(ws), "edit", rel, "--old", old, "--new", new,
             "--no-daemon", "--format", "json"], ws, env)
        shutil.rmtree(env["LSPGATE_RUNTIME_DIR"], ignore_errors=True)
        if code not in (0, 1):
            errors.append(f"{label}: --no-daemon exited {code}: {err.strip()[-300:]}")
            continue
        walls.append(wall)
    return median(walls)


def bench_batch(cmd: list[str], src: Path, rel: str, old: str, new: str, runs: int,
                scratch: Path, errors: list[str], label: str) -> tuple[float, bool | None]:
    if shutil.which(cmd[0]) is None:
        errors.append(f"{label}: {cmd[0]} is not installed")
        return float("nan"), None
    ws = workspace(src, scratch / "batch")
    path = ws / rel
    path.write_text(path.read_text().replace(old, new, 1))
    walls, found = [], None
    for _ in range(runs):
        wall, code, out, err = run_measured(cmd, ws, dict(os.environ))
        walls.append(wall)
        found = code != 0
    return median(walls), found


def install_clc(scratch: Path, errors: list[str]) -> Path | None:
    if shutil.which("npm") is None:
        errors.append("cli-lsp-client: npm is not installed")
        return None
    prefix = scratch / "clc"
    try:
        proc = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit",
                               "--no-fund", "--loglevel=error", CLC_PACKAGE],
                              capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        errors.append(f"cli-lsp-client: npm install failed: {e}")
        return None
    binary = prefix / "node_modules" / CLC_PACKAGE / "bin" / "cli-lsp-client"
    if proc.returncode != 0 or not binary.exists():
        errors.append(f"cli-lsp-client: npm install failed: {proc.stderr.strip()[-300:]}")
        return None
    return binary


def bench_clc(binary: Path, src: Path, rel: str, old: str, new: str, runs: int,
              scratch: Path, errors: list[str], label: str) -> tuple[float, str]:
    ws = workspace(src, scratch / "clc-ws")
    env = dict(os.environ)
    env["HOME"] = str(scratch / "clc-home")  # its daemon and logs, not the user's
    Path(env["HOME"]).mkdir(exist_ok=True)
    path = ws / rel
    old_text = path.read_text()
    new_text = old_text.replace(old, new, 1)
    walls, found = [], 0
    try:
        _, code, out, err = run_measured([str(binary), "diagnostics", rel], ws, env)
        if code not in (0, 2):
            errors.append(f"{label}: cli-lsp-client exited {code}: "
                          f"{(err or out).strip()[-300:]}")
            return float("nan"), "failed"
        for _ in range(runs):
            path.write_text(new_text)
            wall, code, out, err = run_measured([str(binary), "diagnostics", rel], ws, env)
            walls.append(wall)
            # It prints diagnostics on stderr, and exits 2 when there are some.
            found += code == 2 and "ERROR" in out + err
            path.write_text(old_text)
            run_measured([str(binary), "diagnostics", rel], ws, env)
    finally:
        run_measured([str(binary), "stop"], ws, env)
    return median(walls), f"error found in {found} of {runs}"


def fmt_ms(v: float | None) -> str:
    return "-" if v is None or v != v else f"{v:.0f}"


def fmt_mib(kib: int | None) -> str:
    return "-" if not kib else f"{kib / 1024:.1f}"


def table(title: str, head: list[str], lines: list[list[str]]) -> None:
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h)
              for i, h in enumerate(head)]
    print(f"\n{title}\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for l in lines:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(l, widths)) + " |")
    sys.stdout.flush()


def yes_no(found: bool | None) -> str:
    return "?" if found is None else ("error found" if found else "no error")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lspgate", type=Path, required=True, help="the lspgate binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--smoke", action="store_true",
                    help="pyright only, one run, no cli-lsp-client; check the tables")
    ap.add_argument("--servers", help="comma-separated subset of: " + ", ".join(WANTED))
    ap.add_argument("--no-cli-lsp-client", action="store_true")
    args = ap.parse_args()
    runs = 1 if args.smoke else args.runs
    wanted = ["pyright"] if args.smoke else (args.servers.split(",") if args.servers
                                              else WANTED)
    lspgate = args.lspgate.resolve()
    if not os.access(lspgate, os.X_OK):
        print(f"bench: {lspgate} is not an executable", file=sys.stderr)
        return 2

    errors: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="lspgate-dbench-") as tmp:
        scratch = Path(tmp)
        clc = None
        clc_note = "skipped (--smoke)" if args.smoke else "skipped"
        if not args.smoke and not args.no_cli_lsp_client:
            clc = install_clc(scratch, errors)
            clc_note = "could not install" if clc is None else ""
        for name, cmd, fixture, rel, lang, old, new, settings, init in SERVERS:
            if name not in wanted:
                continue
            if shutil.which(cmd[0]) is None:
                errors.append(f"{name}: {cmd[0]} is not installed")
                continue
            src = FIXTURES / fixture
            work = scratch / name
            work.mkdir()
            row: dict = {"server": name}
            try:
                m = measure_changes(cmd, workspace(src, work / "client"), rel, lang, old, new,
                                    runs, settings=settings, init_options=init)
                row["server_ms"] = median(m["changes"])
                row["mode"] = m["mode"]
                if name == "typescript-language-server" and m["mode"] == "push":
                    # The server pushes; lspgate asks tsserver (src/servers/typescript/tsserver.rs).
                    row["mode"] = "push (lspgate: tsserver pull)"
            except Exception as e:  # noqa: BLE001 — a bench row reports any failure
                errors.append(f"{name}: lsp client: {type(e).__name__}: {e}")
                row["server_ms"], row["mode"] = float("nan"), "?"
            row.update(bench_warm(lspgate, src, rel, old, new, runs, work, errors, name))
            row["cold"] = bench_cold(lspgate, src, rel, old, new, runs, work, errors, name)
            batch_cmd, row["batch_name"] = (clang_batch() if name == "clangd"
                                            else BATCH[name])
            row["batch"], row["batch_found"] = bench_batch(batch_cmd, src, rel, old, new,
                                                           runs, work, errors, name)
            if clc is not None:
                row["clc"], row["clc_found"] = bench_clc(clc, src, rel, old, new, runs, work,
                                                         errors, name)
            else:
                row["clc"], row["clc_found"] = float("nan"), ""
            rows.append(row)
            print(f"bench: {name} done", file=sys.stderr, flush=True)

    lines = []
    for r in rows:
        server, warm = r["server_ms"], r["warm"]
        ratio = warm / server if server == server and server > 0 and warm == warm \
            else float("nan")
        target = 1.1 * server + 30 if server == server else float("nan")
        met = "-" if target != target or warm != warm else \
            ("yes" if warm <= target else f"no (+{warm - target:.0f} ms)")
        lines.append([r["server"], r["mode"], fmt_ms(server), fmt_ms(warm),
                      "-" if ratio != ratio else f"{ratio:.2f}x", fmt_ms(target), met,
                      fmt_ms(r["own"]),
                      f"{r['new_errors']} ({r['other_files']} other files)"
                      if r["new_errors"] is not None else "-"])
    table(f"Warm `lspgate write` through the daemon vs the server's own didChange→diagnostics "
          f"latency, same edit, median of {runs}",
          ["server", "mode", "server ms", "lspgate warm ms", "ratio", "target ms (1.1x+30)",
           "met", "lspgate own ms (wall − waits)", "new errors"], lines)

    lines = []
    for r in rows:
        clc = fmt_ms(r["clc"]) + f" ({r['clc_found']})" if r["clc"] == r["clc"] \
            else (clc_note or "failed (see below)")
        lines.append([r["server"], fmt_ms(r["warm"]), fmt_ms(r["cold"]),
                      f"{fmt_ms(r['batch'])} ({r['batch_name']}, {yes_no(r['batch_found'])})",
                      clc])
    table(f"The same edit, other ways, median of {runs} (ms)",
          ["server", "lspgate warm", "lspgate --no-daemon (cold)", "batch checker",
           "cli-lsp-client diagnostics (warm)"], lines)

    lines = [[r["server"], fmt_ms(r["query"]), fmt_ms(r["no_server"]), fmt_ms(r["own"]),
              fmt_mib(r["cli_peak"]), fmt_mib(r["daemon_peak"])] for r in rows]
    table(f"lspgate's own cost, median of {max(runs, 3)} (targets: connect, request, print under "
          "5 ms; CLI under 10 MiB; daemon without its servers under 20 MiB)",
          ["server", "connect, request, print ms (diagnostics query)",
           "write, no server ms (+ resync, atomic write, history)",
           "warm write less primary and cross-file waits ms",
           "CLI peak MiB (VmHWM)", "daemon peak MiB (VmHWM)"], lines)
    if GNU_TIME is None:
        print("\n(CLI peak memory not measured: GNU time is not installed)")

    for e in errors:
        print(f"bench: {e}", file=sys.stderr)
    incomplete = [r["server"] for r in rows
                  if r["warm"] != r["warm"] or r["server_ms"] != r["server_ms"]
                  or r["cold"] != r["cold"]]
    if args.smoke and (incomplete or len(rows) != len(wanted)):
        print(f"bench: smoke: tables incomplete: {incomplete or 'servers missing'}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
