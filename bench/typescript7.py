"""TypeScript 7 against typescript-language-server, on the same project: the
TypeScript fixture (a.ts defines greet, b.ts and c.ts call it) plus `--filler` modules
that import each other but not a.ts (56 files in all by default, the size the research
measured), edited by giving greet a second parameter, which breaks b.ts and c.ts.

  * tsgo: the project has typescript@7 in node_modules (a link to the one
    scripts/install-servers.sh installs); untrusted, so the installed `tsgo` checks it;
  * tsgo, trusted: the project's own `node_modules/typescript/bin/tsc --lsp`;
  * typescript-language-server: the same files without node_modules (it runs the
    installed TypeScript 6; on the typescript@7 project it would not be used at all).

For each: a cold `lspgate edit --no-daemon`, then through a warm daemon the break and
its revert `--runs` times (the break is timed). Every timed run must report both
importers, or the bench fails. Medians in ms.

--smoke (CI): one run each, 10 filler files.
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

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "typescript"
TS7 = Path(os.environ.get("LSPGATE_SERVERS_PREFIX", "/usr/local/lib/lspgate-servers")) \
    / "typescript7" / "node_modules" / "typescript"

OLD = "greet(name: string)"
NEW = "greet(name: string, greeting: string)"


def project(into: Path, filler: int, typescript_7: bool) -> Path:
    root = into / ("ts7" if typescript_7 else "ts6")
    shutil.copytree(FIXTURE, root)
    (root / "tsconfig.json").write_text(
        (root / "tsconfig.json").read_text().replace('"include": ["*.ts"]',
                                                     '"include": ["*.ts", "lib"]'))
    lib = root / "lib"
    lib.mkdir()
    for i in range(filler):
        prev = f'import {{ f{i - 1} }} from "./m{i - 1}";\n' if i else ""
        use = f"f{i - 1}() + " if i else ""
        (lib / f"m{i}.ts").write_text(
            f"{prev}export function f{i}(): number {{\n  return {use}{i};\n}}\n")
    if typescript_7:
        (root / "node_modules").mkdir()
        (root / "node_modules" / "typescript").symlink_to(TS7)
        (root / ".gitignore").write_text("node_modules/\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def env_for(state: Path, daemon: bool) -> dict:
    env = dict(os.environ)
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(state / var.lower())
        Path(env[var]).mkdir(parents=True, exist_ok=True, mode=0o700)
    env["LSPGATE_RUNTIME_DIR"] = str(state / "runtime")
    Path(env["LSPGATE_RUNTIME_DIR"]).mkdir(parents=True, exist_ok=True, mode=0o700)
    env["LSPGATE_CONFIG"] = str(state / "config.toml")
    env["NO_COLOR"] = "1"
    env.pop("LSPGATE_NO_DAEMON", None)
    if not daemon:
        env["LSPGATE_NO_DAEMON"] = "1"
    return env


def edit(lspgate: str, root: Path, env: dict, old: str, new: str,
         extra: list[str]) -> tuple[float, dict]:
    cmd = [lspgate, "-C", str(root), "edit", "a.ts", "--old", old, "--new", new,
           "--format", "json", "-q", *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    ms = (time.monotonic() - t0) * 1000
    try:
        return ms, json.loads(proc.stdout)
    except ValueError:
        return ms, {"error": proc.stderr.strip()}


def broken(report: dict) -> list[str]:
    return sorted(f["path"] for f in report.get("files", [])
                  if f.get("role") == "dependent"
                  and any(d.get("new") and d.get("severity") == "Error"
                          for d in f.get("diagnostics", [])))


def bench(lspgate: str, name: str, root: Path, state: Path, runs: int,
          extra: list[str], errors: list[str]) -> dict:
    servers = []

    def check(report: dict, what: str) -> None:
        nonlocal servers
        servers = [s["name"] for s in report.get("servers", [])]
        if broken(report) != ["b.ts", "c.ts"]:
            errors.append(f"{name} {what}: reported {broken(report)} "
                          f"({json.dumps(report)[:300]})")

    cold_ms, report = edit(lspgate, root, env_for(state / "cold", False), OLD, NEW, extra)
    check(report, "cold")
    edit(lspgate, root, env_for(state / "cold", False), NEW, OLD, extra)
    env = env_for(state / "warm", True)
    warm = []
    try:
        edit(lspgate, root, env, OLD, NEW, extra)  # starts the daemon and the server
        edit(lspgate, root, env, NEW, OLD, extra)
        for i in range(runs):
            ms, report = edit(lspgate, root, env, OLD, NEW, extra)
            check(report, f"warm run {i + 1}")
            warm.append(ms)
            edit(lspgate, root, env, NEW, OLD, extra)
    finally:
        subprocess.run([lspgate, "-C", str(root), "daemon", "stop"], env=env,
                       capture_output=True, timeout=60)
    return {"name": name, "servers": servers, "cold": cold_ms,
            "warm": statistics.median(warm) if warm else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lspgate", required=True)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--filler", type=int, default=53)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.filler = 1, 10
    if not (TS7 / "bin" / "tsc").is_file():
        print(f"typescript7: typescript@7 is not installed under {TS7}", file=sys.stderr)
        return 1
    errors: list[str] = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="lspgate-ts7-") as tmp:
        tmp_path = Path(tmp)
        ts7 = project(tmp_path, args.filler, True)
        ts6 = project(tmp_path, args.filler, False)
        files = 3 + args.filler
        rows.append(bench(args.lspgate, "tsgo (installed TypeScript 7)", ts7,
                          tmp_path / "s1", args.runs, [], errors))
        rows.append(bench(args.lspgate, "tsc --lsp (the project's, trusted)", ts7,
                          tmp_path / "s2", args.runs, ["--trust-project"], errors))
        rows.append(bench(args.lspgate, "typescript-language-server (TypeScript 6)", ts6,
                          tmp_path / "s3", args.runs, [], errors))
    print(f"\nTypeScript: {files} files, an edit breaking 2 importers; median of "
          f"{args.runs} warm runs (ms)\n")
    print("| server | servers in the report | cold `--no-daemon` ms | warm ms |")
    print("|---|---|---|---|")
    for r in rows:
        warm = "-" if r["warm"] is None else f"{r['warm']:.0f}"
        print(f"| {r['name']} | {', '.join(r['servers'])} | {r['cold']:.0f} | {warm} |")
    for e in errors:
        print(f"typescript7: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
