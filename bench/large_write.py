"""A large write each way: what `lspgate write` of a file of --mb megabytes costs in
wall time and memory, in process (`--no-daemon`), through the warm daemon, and as a
`write` call of `lspgate mcp` (which goes through the daemon too).

The file is `big.txt` in a fresh git workspace: no server covers it, and at this size
lspgate would not show it to one anyway (files over 8 MiB are written, not checked),
so what is measured is lspgate's own handling of the contents: reading them, planning
the write, passing them on, committing them.

Peak memory is each process's VmHWM (/proc/PID/status), polled every 2 ms while the
run lasts: the CLI's (or the MCP server's), and the daemon's as it stands after the
run (a daemon's VmHWM is its lifetime peak: it is started, untimed, just before). Wall
time: from starting the CLI to its exit; for MCP, from sending the call to reading its
answer, the server started and initialized before. The median of --runs runs, each in
a fresh workspace and runtime directory.
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
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from daemon_latency import vm_hwm_kib  # noqa: E402

LINE = "plain line of a generated file\n"


class Poller:
    """Polls a process's VmHWM until stopped; keeps the largest value read."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self.done = pid, 0, threading.Event()
        self.thread = threading.Thread(target=self.poll, daemon=True)
        self.thread.start()

    def poll(self) -> None:
        while not self.done.is_set():
            self.peak = max(self.peak, vm_hwm_kib(self.pid) or 0)
            time.sleep(0.002)

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return self.peak


def workspace(scratch: Path, name: str) -> tuple[Path, dict]:
    ws = scratch / name / "ws"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    env = dict(os.environ)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(scratch / name / var.lower())
        Path(env[var]).mkdir(parents=True, exist_ok=True, mode=0o700)
    # Short: a Unix socket path holds about 100 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="lg-rt-"))
    os.chmod(runtime, 0o700)
    env["LSPGATE_RUNTIME_DIR"] = str(runtime)
    env["NO_COLOR"] = "1"
    env.pop("LSPGATE_NO_DAEMON", None)
    return ws, env


def daemon_pid(lspgate: str, ws: Path, env: dict) -> int | None:
    out = subprocess.run([lspgate, "-C", str(ws), "daemon", "status", "--format", "json"],
                         env=env, capture_output=True, text=True)
    try:
        return json.loads(out.stdout).get("pid")
    except ValueError:
        return None


def stop_daemon(lspgate: str, ws: Path, env: dict) -> None:
    subprocess.run([lspgate, "-C", str(ws), "daemon", "stop"], env=env, capture_output=True)
    shutil.rmtree(env["LSPGATE_RUNTIME_DIR"], ignore_errors=True)


def cli_write(lspgate: str, ws: Path, env: dict, content: bytes, extra: list[str]) -> tuple[float, int, int]:
    """One `lspgate write big.txt` with `content` on stdin: seconds, peak KiB, exit."""
    start = time.monotonic()
    proc = subprocess.Popen([lspgate, "-C", str(ws), "write", "big.txt", *extra], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    poller = Poller(proc.pid)
    proc.communicate(content)
    wall = time.monotonic() - start
    return wall, poller.stop(), proc.returncode


def in_process(lspgate: str, scratch: Path, content: bytes) -> dict:
    ws, env = workspace(scratch, "solo")
    wall, peak, code = cli_write(lspgate, ws, env, content, ["--no-daemon"])
    shutil.rmtree(env["LSPGATE_RUNTIME_DIR"], ignore_errors=True)
    return {"wall": wall, "client": peak, "daemon": None, "exit": code}


def through_daemon(lspgate: str, scratch: Path, content: bytes) -> dict:
    ws, env = workspace(scratch, "daemon")
    subprocess.run([lspgate, "-C", str(ws), "daemon", "start"], env=env, capture_output=True)
    try:
        wall, peak, code = cli_write(lspgate, ws, env, content, [])
        pid = daemon_pid(lspgate, ws, env)
        return {"wall": wall, "client": peak, "daemon": pid and vm_hwm_kib(pid), "exit": code}
    finally:
        stop_daemon(lspgate, ws, env)


def through_mcp(lspgate: str, scratch: Path, content: bytes) -> dict:
    ws, env = workspace(scratch, "mcp")
    subprocess.run([lspgate, "-C", str(ws), "daemon", "start"], env=env, capture_output=True)
    proc = subprocess.Popen([lspgate, "-C", str(ws), "mcp"], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin and proc.stdout

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "0"}}})
        proc.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                           "params": {"name": "write", "arguments": {
                               "path": "big.txt", "content": content.decode()}}}).encode() + b"\n"
        poller = Poller(proc.pid)
        start = time.monotonic()
        proc.stdin.write(call)
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline() or b"{}")
        wall = time.monotonic() - start
        peak = poller.stop()
        code = (answer.get("result", {}).get("structuredContent") or {}).get("exit_code")
        if code is None:
            code = "error" if "error" in answer or answer.get("result", {}).get("isError") else "?"
        pid = daemon_pid(lspgate, ws, env)
        return {"wall": wall, "client": peak, "daemon": pid and vm_hwm_kib(pid), "exit": code}
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        stop_daemon(lspgate, ws, env)


WAYS = [("in process (--no-daemon)", in_process), ("through the daemon", through_daemon),
        ("through MCP (and the daemon)", through_mcp)]


def fmt_mib(kib: int | None) -> str:
    return "-" if not kib else f"{kib / 1024:.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lspgate", action="append", required=True, metavar="LABEL=PATH")
    ap.add_argument("--mb", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    builds = [spec.split("=", 1) if "=" in spec else (spec, spec) for spec in args.lspgate]
    content = (LINE * (args.mb * 1_000_000 // len(LINE))).encode()
    rows = []
    with tempfile.TemporaryDirectory(prefix="lspgate-large-") as tmp:
        for label, path in builds:
            for way, bench in WAYS:
                results = []
                for i in range(args.runs):
                    scratch = Path(tmp) / f"{label}-{way.split()[1]}-{i}"
                    results.append(bench(str(Path(path).resolve()), scratch, content))
                daemon = [r["daemon"] for r in results if r["daemon"]]
                rows.append([label, way,
                             f"{statistics.median(r['wall'] for r in results):.2f}",
                             fmt_mib(int(statistics.median(r["client"] for r in results))),
                             fmt_mib(int(statistics.median(daemon)) if daemon else None),
                             ", ".join(sorted({str(r["exit"]) for r in results}))])
    head = ["build", "way", "wall s", "CLI / MCP server peak MiB", "daemon peak MiB", "exit"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"\nA {args.mb} MB `lspgate write` (median of {args.runs}; peak = VmHWM)\n")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
