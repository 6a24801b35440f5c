"""The server's own re-check time for a case's edit, measured by a minimal client.

What lspgate's warm run is compared with: an editor that holds the same server, warm,
with the same settings, and shows the edit to it. One server process per project; for
each case the client opens the files the diff touches, writes the edit to disk, tells
the server as an editor would (didChange + didSave; didChangeWatchedFiles for created
and deleted files), and times until the server has said all it will say about it:

  pyright   workspace mode (`diagnosticMode: "workspace"`): it re-analyses every
            importer, transitively, inside a `$/progress` begin ... end; the time is
            didChange → the last progress end or publish, once no progress is under
            way and the server has been silent for QUIET seconds.
  gopls     pushes its workspace's reverse dependencies by itself: didChange → the
            last publish, by the same rule.
  clangd    every translation unit of compile_commands.json is opened first (clangd
            checks open files only); didChange + didSave → the last publish.
  rust-analyzer  didSave starts cargo check (flycheck, a `$/progress`); didSave → the
            flycheck's end. A deleted module has no save to start it: not measured.
  tsgo      TypeScript 7's `tsc --lsp` is pull-only and analyses nothing unasked: its
            start-up analysis is every project file pulled, as an editor showing the
            project's problems asks, and didChange → every project file pulled again
            (the answers are final).
  tsls      typescript-language-server (TypeScript 6) has neither a project-wide mode
            nor pull, and pushes only for open files after a debounce of its own
            (300 ms or more): every project file is opened first, and its diagnostics
            asked of tsserver directly (`typescript.tsserverRequest`, the syntactic,
            semantic and suggestion ones); didChange → the last answer.

The cold floor (`measure_cold`) is the same client started afresh for each case: the
server's start-up and its view of the files the edit touches, opened as above, then its
re-check of the edit, each timed to the server's last word (the client's own quiet
waits left out). pyright's start-up is its analysis of the whole workspace; clangd is
shown only the units that include an edited file, as a cold check must build them;
rust-analyzer's is its workspace load, and its one check is the edit's. It is what the
server itself costs for one cold check by any client: lspgate's cold run has it as
its floor.

Every wait has a deadline; a case whose wait ran out is reported as a timeout, not as
a number. Between cases the edit is undone the same way and the server left to settle.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from lsp_client import Client, ServerGone, path_uri  # noqa: E402

from common import apply_diff, parse_diff, restore  # noqa: E402
from projects import Project  # noqa: E402

QUIET = 1.0

# Command, settings, initializationOptions, languageId by extension. The settings are
# lspgate's built-in ones (src/servers/) except pyright's diagnosticMode.
SERVERS = {
    "pyright": (["pyright-langserver", "--stdio"],
                {"python": {"analysis": {"diagnosticMode": "workspace"}}}, None),
    # Told to bracket each diagnosis, as lspgate tells it: the end of its start-up
    # analysis is then a word of its own, counted in the cold floor (untold, a clean
    # workspace's start-up analysis ended in silence, and a case that opens no file
    # had only its package load counted).
    "gopls": (["gopls"], {"gopls": {"diagnosticsDelay": "0s"}},
              {"verboseWorkDoneProgress": True}),
    "clangd": (["clangd", "--background-index=false"], None, {"clangdFileStatus": True}),
    "rust-analyzer": (["rust-analyzer"], None,
                      {"checkOnSave": True, "check": {"allTargets": True},
                       "cachePriming": {"enable": False}, "numThreads": 1}),
    "tsgo": (["node_modules/.bin/tsc", "--lsp", "--stdio"], None, None),
    # lspgate's initialization options; tsserver.path is set at start (the global
    # TypeScript, as lspgate pins it).
    "tsls": (["typescript-language-server", "--stdio"], None,
             {"preferences": {}, "disableAutomaticTypingAcquisition": True,
              "tsserver": {"useSyntaxServer": "never"}}),
}
LANGUAGE_IDS = {".py": "python", ".go": "go", ".c": "c", ".h": "c", ".rs": "rust",
                ".ts": "typescript"}
TSSERVER_KINDS = ("syntacticDiagnosticsSync", "semanticDiagnosticsSync",
                  "suggestionDiagnosticsSync")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
C_FILES = (".c", ".h", ".cc", ".cpp", ".hpp", ".cxx", ".hh")


def includers(root: Path, files: set[Path]) -> set[Path]:
    """`files` and every file under `root` that includes one of them, transitively,
    by a quoted include resolved against the including file's directory, then `root`."""
    sources = [p for p in root.rglob("*") if p.suffix in C_FILES and p.is_file()]
    included_by: dict[Path, set[Path]] = {}
    for src in sources:
        for name in INCLUDE.findall(src.read_text(errors="replace")):
            for base in (src.parent, root):
                target = (base / name).resolve()
                if target.is_file():
                    included_by.setdefault(target, set()).add(src.resolve())
                    break
    seen = {f.resolve() for f in files}
    todo = list(seen)
    while todo:
        for parent in included_by.get(todo.pop(), ()):
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return seen


def edited_files(diff: Path, root: Path) -> list[tuple[Path, str]]:
    """(path, "modified" | "created" | "deleted") for each file the diff touches."""
    states = []
    for d in parse_diff(diff.read_text()):
        if d.old and d.new:
            states.append((root / d.new, "modified"))
        elif d.new:
            states.append((root / d.new, "created"))
        else:
            states.append((root / d.old, "deleted"))
    return states


class Silent(Exception):
    """The server published nothing after the change: it did not re-check (clangd
    does not watch the disk, so a deleted header goes unnoticed)."""


class Recheck:
    def __init__(self, kind: str, root: Path, env: dict, startup_timeout: float,
                 timeout: float, units: set[Path] | None = None, first: tuple = ()):
        """`units`: for clangd, the translation units to open (default: every one of
        compile_commands.json). `first`: files to open right after `initialize`, so
        that the start-up's last word includes the server's view of them (gopls
        checks a file when it is opened, and signals nothing while it does)."""
        cmd, settings, init = SERVERS[kind]
        if cmd[0].startswith("node_modules/"):
            cmd = [str(root / cmd[0]), *cmd[1:]]
        if kind == "tsls":
            tsc = shutil.which("tsc")
            if tsc is None:
                raise OSError("tsls: no global tsc, whose tsserver lspgate runs")
            tsserver = Path(tsc).resolve().parent.parent / "lib" / "tsserver.js"
            init = dict(init, tsserver=dict(init["tsserver"], path=str(tsserver)))
        self.kind = kind
        self.root = root
        self.timeout = timeout
        self.versions: dict[Path, int] = {}
        self.client = Client(cmd, root, settings, env=env)
        self.client.initialize(init, startup_timeout, pull=(kind != "pyright"))
        t0 = time.monotonic()
        # When tsserver answered (tsls): its word, where the others' is a publish.
        self.answers: list[float] = []
        # When `initialize` was answered, and when the last case's edit was shown.
        self.initialized_at = self.edit_at = t0
        if kind != "tsgo":
            for path in first:
                self.open(path)
        if kind == "clangd":
            wanted = [root / e["file"] for e in
                      json.loads((root / "compile_commands.json").read_text())]
            if units is not None:
                wanted = [u for u in wanted if u.resolve() in units]
            for unit in wanted:
                self.open(unit)
            uris = {path_uri(u) for u in wanted}
            self.client.pump(lambda: uris <= {p.get("uri") for _, p in self.client.publishes},
                             startup_timeout)
        if kind == "tsls":
            for path in self._ts_files():
                self.open(path)
            self._ask_tsserver(startup_timeout)
        if kind == "tsgo":
            self._pull_every_file(startup_timeout)
        if kind == "pyright":
            # Its workspace analysis starts a while after `initialized` (a second or
            # more on 883 files) and is bracketed by progress: wait for its end.
            if not self.client.pump(lambda: any(k == "end" for _, k, _, _ in
                                                self.client.progress_events),
                                    startup_timeout):
                raise TimeoutError(f"pyright: no analysis end within {startup_timeout:.0f}s")
        left = startup_timeout - (time.monotonic() - t0)
        if not self.client.pump_quiet(QUIET, max(left, 1.0)):
            raise TimeoutError(f"{kind}: start-up analysis not over within {startup_timeout:.0f}s")

    def ready_before_edit(self) -> float:
        """Seconds from the spawn to the server's last word before the last case's edit:
        its start-up analysis and its view of the files just opened (gopls says nothing
        of a clean workspace at start and checks a file when it is opened). For tsls,
        tsserver's answers; typescript-language-server's pushes, after its own
        debounce, are not waited for. For tsgo, its answers to the pulls."""
        if self.kind in ("tsls", "tsgo"):
            times = self.answers
        else:
            times = [t for t, _ in self.client.publishes]
            times += [t for t, kind, _, _ in self.client.progress_events if kind == "end"]
        last = max((t for t in times if t < self.edit_at), default=self.initialized_at)
        return last - self.client.t_spawn

    def _ts_files(self) -> list[Path]:
        return sorted(p for p in (self.root / "src").rglob("*.ts")
                      if "node_modules" not in p.parts)

    def _ask_tsserver(self, timeout: float) -> float:
        """Ask tsserver for every open file's diagnostics; the time of the last answer."""
        ids = [self.client.request("workspace/executeCommand",
                                   {"command": "typescript.tsserverRequest",
                                    "arguments": [kind, {"file": str(path)}]})
               for path in self.versions for kind in TSSERVER_KINDS]
        if not self.client.pump(lambda: all(i in self.client.responses for i in ids), timeout):
            raise TimeoutError(f"tsls: tsserver requests unanswered after {timeout:.0f}s")
        self.answers += [self.client.responses.pop(i)[0] for i in ids]
        return max(self.answers[-len(ids):])

    def _pull_every_file(self, timeout: float) -> float:
        """Pull every project file of tsgo; the time of the last answer."""
        ids = [self.client.request("textDocument/diagnostic",
                                   {"textDocument": {"uri": path_uri(f)}})
               for f in self._ts_files()]
        if not self.client.pump(lambda: all(i in self.client.responses for i in ids), timeout):
            raise TimeoutError(f"tsgo: pulls unanswered after {timeout:.0f}s")
        self.answers += [self.client.responses.pop(i)[0] for i in ids]
        return max(self.answers[-len(ids):])

    def open(self, path: Path) -> None:
        if path in self.versions:
            return
        self.versions[path] = 1
        self.client.open(path, LANGUAGE_IDS.get(path.suffix, "plaintext"), path.read_text())

    def _show(self, paths: list[tuple[Path, str]]) -> None:
        """Tell the server about the disk as it is now, for these (path, state) pairs."""
        watched = []
        for path, state in paths:
            if state == "deleted":
                if path in self.versions:
                    self.client.close(path)
                    del self.versions[path]
                watched.append((path, 3))
            elif state == "created":
                watched.append((path, 1))
            elif self.kind == "pyright":
                # As lspgate shows pyright a written file: a close and an open, since
                # after a change it waits 250 ms for more typing (src/servers/pyright.rs).
                self.client.close(path)
                self.client.open(path, "python", path.read_text())
            else:
                self.versions[path] += 1
                self.client.change(path, self.versions[path], path.read_text())
                self.client.save(path)
        if watched:
            self.client.watched(watched)

    def _wait(self, since: float) -> float:
        """Milliseconds from `since` to the server's last word on the change."""
        if self.kind == "tsls":
            return (self._ask_tsserver(self.timeout) - since) * 1000
        if self.kind == "tsgo":
            return (self._pull_every_file(self.timeout) - since) * 1000
        if self.kind == "rust-analyzer":
            def flycheck_over() -> bool:
                ends = [t for t, k, tok, _ in self.client.progress_events
                        if t >= since and k == "end" and "flycheck" in tok]
                return bool(ends) and not any("flycheck" in tok for tok in self.client.progress)
            if not self.client.pump(flycheck_over, self.timeout):
                raise TimeoutError(f"rust-analyzer: no flycheck end within {self.timeout:.0f}s")
        # Quiet counts from the change at the earliest: a server silent since before
        # it has not answered yet.
        self.client.last_message = max(self.client.last_message, since)
        if not self.client.pump_quiet(QUIET, self.timeout):
            raise TimeoutError(f"{self.kind}: not quiet within {self.timeout:.0f}s")
        last = self.client.last_activity_after(since)
        if last is None:
            raise Silent(f"{self.kind} said nothing about the change")
        return (last - since) * 1000

    def case(self, diff: Path) -> float | None:
        """Milliseconds for the server's re-check of `diff`; None when it cannot be
        started the way an editor would."""
        states = edited_files(diff, self.root)
        if self.kind == "rust-analyzer" and not any(s == "modified" for _, s in states):
            return None
        for path, state in states:
            if state == "modified":
                self.open(path)
        if self.kind == "rust-analyzer":
            # As an editor showing the file asks for its diagnostics, and as lspgate's
            # check before the edit did. rust-analyzer's first answer loads the
            # standard library's names (2.3 s on itertools); unasked, that load fell
            # inside the edit's check, whose flycheck task waits for it (the idle
            # floor was 2.5-3.5 s against 0.5 s).
            for path, state in states:
                if state == "modified":
                    self.client.pull_diagnostics(path, self.timeout)
        self.client.pump_quiet(QUIET / 2, self.timeout)
        apply_diff(self.root, diff)
        since = self.edit_at = time.monotonic()
        try:
            self._show(states)
            return self._wait(since)
        finally:
            restore(self.root)
            undo = [(p, {"created": "deleted", "deleted": "created"}.get(s, s))
                    for p, s in states]
            undone = time.monotonic()
            self._show(undo)
            for path, state in undo:
                if state == "created" and path.suffix in LANGUAGE_IDS and \
                        self.kind not in ("tsgo", "tsls"):
                    self.open(path)
            try:
                self._wait(undone)
            except (TimeoutError, Silent):
                pass  # the next case's wait says so if the server is still busy

    def close(self) -> None:
        self.client.shutdown()


def timed_case(session: Recheck, diff: Path, cold: bool) -> tuple[object, bool]:
    """What to record for `diff` (milliseconds, None, or why not) and whether the
    server is gone. `cold`: the session's start-up counts too."""
    try:
        ms = session.case(diff)
    except TimeoutError as e:
        return f"timeout: {e}", False
    except Silent as e:
        return f"silent: {e}", False
    except ServerGone as e:
        return f"failed: {e}", True
    if cold and ms is not None:
        ms += session.ready_before_edit() * 1000
    return ms, False


def measure(p: Project, root: Path, cases: list[tuple[str, Path]], env: dict,
            startup_timeout: float = 300, timeout: float = 120) -> dict[str, object]:
    """{case: milliseconds | None (not measurable) | "timeout: ..." | "silent: ..." |
    "failed: ..."}."""
    if not p.recheck:
        return {}
    out: dict[str, object] = {}
    try:
        session = Recheck(p.recheck, root, env, startup_timeout, timeout)
    except (TimeoutError, ServerGone, OSError) as e:
        return {name: f"failed: {e}" for name, _ in cases}
    try:
        for name, diff in cases:
            out[name], gone = timed_case(session, diff, cold=False)
            if gone:
                break
    finally:
        session.close()
        restore(root)
    return out


def measure_idle(p: Project, root: Path, cases: list[tuple[str, Path]], env: dict,
                 think: float, startup_timeout: float = 300,
                 timeout: float = 120) -> dict[str, object]:
    """The idle floor of each case, what lspgate's idle mode is held against: a fresh
    server per case, its start-up as for the warm measure (every file open or shown),
    `think` seconds with nothing asked, then its re-check of the edit, timed alone. It
    is the server's first re-check after its start, as the idle mode's edit is; the
    warm measure's comes after earlier edits, on a server warmed by them (tsserver
    re-checks mobx's module in 0.3 s there and in 0.7 s the first time)."""
    if not p.recheck:
        return {}
    out: dict[str, object] = {}
    for name, diff in cases:
        restore(root)
        try:
            session = Recheck(p.recheck, root, env, startup_timeout, timeout)
        except (TimeoutError, ServerGone, OSError) as e:
            out[name] = f"failed: {e}"
            continue
        try:
            # Idle time, as the idle mode gives the daemon; not a synchronisation.
            time.sleep(think)
            out[name], _ = timed_case(session, diff, cold=False)
        finally:
            session.close()
            restore(root)
    return out


def measure_cold(p: Project, root: Path, cases: list[tuple[str, Path]], env: dict,
                 startup_timeout: float = 300, timeout: float = 120) -> dict[str, object]:
    """The cold floor of each case: {case: milliseconds of a fresh server's start-up
    analysis plus its re-check of the edit | None | "timeout: ..." | ...}."""
    if not p.recheck:
        return {}
    out: dict[str, object] = {}
    for name, diff in cases:
        restore(root)
        edited = edited_files(diff, root)
        units = None
        if p.recheck == "clangd":
            units = includers(root, {path for path, _ in edited})
        first = tuple(path for path, state in edited if state == "modified")
        try:
            session = Recheck(p.recheck, root, env, startup_timeout, timeout, units, first)
        except (TimeoutError, ServerGone, OSError) as e:
            out[name] = f"failed: {e}"
            continue
        try:
            out[name], _ = timed_case(session, diff, cold=True)
        finally:
            session.close()
            restore(root)
    return out
