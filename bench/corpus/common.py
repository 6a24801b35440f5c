"""What truth.py and score.py share: a project's working copy, its batch checker, and
the rule that says which of the checker's errors an edit introduced.

An error is the triple (path relative to the project, 0-based line, message's first
line). An error after the edit is *new* when no equal error (same path, same message)
stood before at the line the diff maps to it. Lines are mapped through the case's
unified diff, hunk by hunk, as `git apply` moves them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from projects import Project

Error = tuple[str, int, str]  # (path, 0-based line, message)


class CorpusError(Exception):
    """One line for the user: what failed and where."""


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="corpus", GIT_AUTHOR_EMAIL="corpus@localhost",
               GIT_COMMITTER_NAME="corpus", GIT_COMMITTER_EMAIL="corpus@localhost")
    proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise CorpusError(f"git {' '.join(args[:2])}: {proc.stderr.strip()[:300]}")
    return proc.stdout


def make_copy(p: Project, into: Path) -> Path:
    """A fresh copy of the project's pristine tree as its own git repository (one
    commit), as lspgate's users have it: the workspace is the git top level, and a case
    is undone with `git checkout` + `git clean`, behind any daemon's back."""
    src = p.tree()
    if not (src / ".corpus-pin").exists():
        raise CorpusError(f"{p.name} is not fetched: run bench/corpus/fetch.py")
    dest = into / p.name
    shutil.copytree(src, dest, symlinks=True)
    (dest / ".corpus-pin").unlink()
    cc = dest / "compile_commands.json"
    if cc.exists():  # the format wants an absolute directory: this copy's
        data = json.loads(cc.read_text())
        for entry in data:
            entry["directory"] = str(dest)
        cc.write_text(json.dumps(data, indent=1) + "\n")
    (dest / ".gitignore").write_text("".join(f"{g}\n" for g in p.gitignore))
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--no-gpg-sign", "-m", "pristine")
    return dest


def restore(root: Path) -> None:
    """Back to the pristine commit: tracked files reverted, untracked files removed
    (ignored ones, such as node_modules/ and target/, kept)."""
    git(root, "checkout", "-q", "--", ".")
    git(root, "clean", "-fdq")


def apply_diff(root: Path, diff: Path) -> None:
    git(root, "apply", "--whitespace=nowarn", str(diff))


# --- the batch checkers ----------------------------------------------------------------

@dataclass
class CheckResult:
    errors: set[Error]
    seconds: float
    exit: int


def checker_env(p: Project) -> dict:
    env = dict(os.environ, NO_COLOR="1", **p.env)
    env.pop("CARGO_TARGET_DIR", None)  # the copy's own target/, with its built deps
    return env


def run_checker(p: Project, root: Path, timeout: float = 900) -> CheckResult:
    """Run the project's batch checker on the whole project at `root`; its errors. A
    monorepo's runs once per package, merged."""
    if p.packages:
        parts = [_run_checker(p, root / pkg, timeout) for pkg in p.packages]
        errors = {(rel(str(root / pkg / path), root), line, msg)
                  for pkg, part in zip(p.packages, parts) for (path, line, msg) in part.errors}
        return CheckResult(errors, sum(x.seconds for x in parts), max(x.exit for x in parts))
    return _run_checker(p, root, timeout)


def _run_checker(p: Project, root: Path, timeout: float) -> CheckResult:
    env = checker_env(p)
    t0 = time.monotonic()
    if p.language == "C":
        env["LC_ALL"] = "C"  # plain quotes in messages
        errors, code = _gcc(root, env, timeout)
        return CheckResult(errors, time.monotonic() - t0, code)
    try:
        proc = subprocess.run(p.checker_cmd(root), cwd=root, env=env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise CorpusError(f"{p.checker_label} on {p.name}: timed out after {timeout:.0f}s") \
            from None
    except OSError as e:  # FileNotFoundError included: the checker is not installed
        raise CorpusError(f"{p.checker_label} on {p.name}: {e}") from None
    seconds = time.monotonic() - t0
    parse = {"Python": _pyright, "Go": _go, "Rust": _cargo}.get(p.language, _tsc)
    errors = parse(proc.stdout, proc.stderr, root)
    if proc.returncode != 0 and not errors:
        tail = (proc.stderr.strip() or proc.stdout.strip())[-300:]
        raise CorpusError(f"{p.checker_label} on {p.name} failed with no error parsed: {tail}")
    return CheckResult(errors, seconds, proc.returncode)


def first_line(msg: str) -> str:
    return msg.strip().splitlines()[0].strip() if msg.strip() else ""


def rel(path: str, root: Path) -> str:
    pth = Path(path)
    if pth.is_absolute():
        try:
            return str(pth.resolve().relative_to(root.resolve()))
        except ValueError:
            return str(pth)
    return os.path.normpath(path)


def _pyright(out: str, _err: str, root: Path) -> set[Error]:
    data = json.loads(out)
    return {(rel(d["file"], root), d["range"]["start"]["line"], first_line(d["message"]))
            for d in data.get("generalDiagnostics", []) if d.get("severity") == "error"}


TSC_LINE = re.compile(r"^(?P<path>[^\s(][^(]*)\((?P<line>\d+),(?P<col>\d+)\): error (?P<code>TS\d+): "
                      r"(?P<msg>.*)$")


def _tsc(out: str, err: str, root: Path) -> set[Error]:
    errors = set()
    for line in (out + "\n" + err).splitlines():
        m = TSC_LINE.match(line)
        if m:
            errors.add((rel(m["path"], root), int(m["line"]) - 1, f"{m['code']}: {m['msg'].strip()}"))
    return errors


# `go vet` prints type errors and vet findings as path:line:col: msg, sometimes behind
# "vet: "; a package that does not compile prints its compiler errors instead.
GO_LINE = re.compile(r"^(?:vet: )?(?P<path>[^\s:]+\.go):(?P<line>\d+)(?::\d+)?: (?P<msg>.*)$")


def _go(out: str, err: str, root: Path) -> set[Error]:
    errors = set()
    for line in (out + "\n" + err).splitlines():
        m = GO_LINE.match(line.strip())
        if m:
            errors.add((rel(m["path"], root), int(m["line"]) - 1, m["msg"].strip()))
    return errors


def _cargo(out: str, _err: str, root: Path) -> set[Error]:
    errors = set()
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-message":
            continue
        m = msg["message"]
        if m.get("level") != "error":
            continue
        for span in m.get("spans", []):
            if span.get("is_primary"):
                errors.add((rel(span["file_name"], root), span["line_start"] - 1,
                            first_line(m["message"])))
    return errors


GCC_LINE = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+): (?:fatal )?error: "
                      r"(?P<msg>.*)$")


def c_compiler() -> str:
    """clang where installed (clangd's own front end: the same error recovery, the
    same messages), else gcc."""
    for name in ("clang", "clang-19", "clang-18", "clang-17", "clang-16", "clang-15",
                 "clang-14"):
        path = shutil.which(name)
        if path:
            return path
    return shutil.which("gcc") or "gcc"


def _gcc(root: Path, env: dict, timeout: float) -> tuple[set[Error], int]:
    """`clang -fsyntax-only` (or gcc's) on every translation unit of
    compile_commands.json, with its own flags; errors in a header are counted once
    whichever unit shows them."""
    compiler = c_compiler()
    errors: set[Error] = set()
    status = 0
    deadline = time.monotonic() + timeout
    for entry in json.loads((root / "compile_commands.json").read_text()):
        args = [a for a in entry["arguments"]]
        # -c FILE -o OBJ becomes -fsyntax-only FILE: nothing is written.
        if "-o" in args:
            i = args.index("-o")
            del args[i:i + 2]
        args = [a for a in args if a != "-c"]
        args[1:1] = ["-fsyntax-only"]
        if "gcc" in Path(compiler).name:
            # An error inside a macro is placed where the macro is used, as clangd
            # places it, not where it is defined.
            args[1:1] = ["-ftrack-macro-expansion=0"]
        args[0] = compiler
        left = deadline - time.monotonic()
        if left <= 0:
            raise CorpusError(f"gcc -fsyntax-only on {root.name}: timed out after {timeout:.0f}s")
        proc = subprocess.run(args, cwd=root / entry["directory"], env=env,
                              capture_output=True, text=True, timeout=left,
                              stdin=subprocess.DEVNULL)
        status = status or proc.returncode
        for line in proc.stderr.splitlines():
            m = GCC_LINE.match(line)
            if m:
                errors.add((rel(str(root / entry["directory"] / m["path"]), root),
                            int(m["line"]) - 1, m["msg"].strip()))
    return errors, status


# --- diffs -----------------------------------------------------------------------------

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class FileDiff:
    old: str | None  # None: created
    new: str | None  # None: deleted
    hunks: list[tuple[int, int, int, int, list[str]]]

    def map_line(self, line0: int) -> int | None:
        """The 0-based line in the new file that the old 0-based line became, or None
        when the edit removed or changed it."""
        line = line0 + 1
        shift = 0
        for old_start, old_len, _new_start, new_len, body in self.hunks:
            if old_len == 0 or line < old_start:
                # A pure insertion goes after old line `old_start`.
                if old_len == 0 and line > old_start:
                    shift += new_len
                    continue
                break
            if line >= old_start + old_len:
                shift += new_len - old_len
                continue
            o, n = old_start, _new_start
            for b in body:
                tag = b[:1]
                if tag in (" ", "-") and o == line:
                    return n - 1 if tag == " " else None
                if tag in (" ", "-"):
                    o += 1
                if tag in (" ", "+"):
                    n += 1
            return None
        return line + shift - 1


def parse_diff(text: str) -> list[FileDiff]:
    files: list[FileDiff] = []
    cur: FileDiff | None = None
    hunk = None
    for line in text.splitlines():
        if line.startswith("--- "):
            name = line[4:].split("\t")[0].strip()
            cur = FileDiff(None if name == "/dev/null" else strip1(name), None, [])
            files.append(cur)
            hunk = None
        elif line.startswith("+++ ") and cur is not None and hunk is None:
            name = line[4:].split("\t")[0].strip()
            cur.new = None if name == "/dev/null" else strip1(name)
        elif cur is not None:
            m = HUNK.match(line)
            if m:
                hunk = (int(m[1]), int(m[2] if m[2] is not None else 1), int(m[3]),
                        int(m[4] if m[4] is not None else 1), [])
                cur.hunks.append(hunk)
            elif hunk is not None and line[:1] in (" ", "-", "+"):
                hunk[4].append(line)
    return files


def strip1(name: str) -> str:
    return name.split("/", 1)[1] if "/" in name else name


def edited_paths(diffs: list[FileDiff]) -> set[str]:
    return {p for d in diffs for p in (d.old, d.new) if p}


def new_errors(before: set[Error], after: set[Error], diffs: list[FileDiff]) -> set[Error]:
    """The errors after the edit that no equal error stood at the mapped line before."""
    by_path = {d.old: d for d in diffs if d.old}
    moved: set[Error] = set()
    for path, line, msg in before:
        d = by_path.get(path)
        if d is None:
            moved.add((path, line, msg))
        elif d.new is not None:
            m = d.map_line(line)
            if m is not None:
                moved.add((d.new, m, msg))
    return {e for e in after if e not in moved}
