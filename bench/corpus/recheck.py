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
  tsgo      TypeScript 7's `tsc --lsp` is pull-only: didChange → every project file
            pulled again (the answers are final).

typescript-language-server (TypeScript 6) has neither a project-wide mode nor pull:
what it re-checks for closed files cannot be timed honestly, so that column is blank.

Every wait has a deadline; a case whose wait ran out is reported as a timeout, not as
a number. Between cases the edit is undone the same way and the server left to settle.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from lsp_client import Client, ServerGone  # noqa: E402

from common import apply_diff, parse_diff, restore  # noqa: E402
from projects import Project  # noqa: E402

QUIET = 1.0

# Command, settings, initializationOptions, languageId by extension. The settings are
# lspgate's built-in ones (src/servers/) except pyright's diagnosticMode.
SERVERS = {
    "pyright": (["pyright-langserver", "--stdio"],
                {"python": {"analysis": {"diagnosticMode": "workspace"}}}, None),
    "gopls": (["gopls"], {"gopls": {"diagnosticsDelay": "0s"}}, None),
    "clangd": (["clangd", "--background-index=false"], None, {"clangdFileStatus": True}),
    "rust-analyzer": (["rust-analyzer"], None,
                      {"checkOnSave": True, "check": {"allTargets": True},
                       "cachePriming": {"enable": False}, "numThreads": 1}),
    "tsgo": (["node_modules/.bin/tsc", "--lsp", "--stdio"], None, None),
}
LANGUAGE_IDS = {".py": "python", ".go": "go", ".c": "c", ".h": "c", ".rs": "rust",
                ".ts": "typescript"}


class Silent(Exception):
    """The server published nothing after the change: it did not re-check (clangd
    does not watch the disk, so a deleted header goes unnoticed)."""


class Recheck:
    def __init__(self, kind: str, root: Path, env: dict, startup_timeout: float,
                 timeout: float):
        cmd, settings, init = SERVERS[kind]
        if cmd[0].startswith("node_modules/"):
            cmd = [str(root / cmd[0]), *cmd[1:]]
        self.kind = kind
        self.root = root
        self.timeout = timeout
        self.versions: dict[Path, int] = {}
        self.client = Client(cmd, root, settings, env=env)
        self.client.initialize(init, startup_timeout, pull=(kind != "pyright"))
        t0 = time.monotonic()
        if kind == "clangd":
            for entry in json.loads((root / "compile_commands.json").read_text()):
                self.open(root / entry["file"])
            uris = {f"file://{root / e['file']}" for e in
                    json.loads((root / "compile_commands.json").read_text())}
            self.client.pump(lambda: uris <= {p.get("uri") for _, p in self.client.publishes},
                             startup_timeout)
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
            else:
                self.versions[path] += 1
                self.client.change(path, self.versions[path], path.read_text())
                self.client.save(path)
        if watched:
            self.client.watched(watched)

    def _wait(self, since: float) -> float:
        """Milliseconds from `since` to the server's last word on the change."""
        if self.kind == "tsgo":
            files = sorted((self.root / "src").rglob("*.ts"))
            ids = [self.client.request("textDocument/diagnostic",
                                       {"textDocument": {"uri": f"file://{f}"}}) for f in files]
            if not self.client.pump(lambda: all(i in self.client.responses for i in ids),
                                    self.timeout):
                raise TimeoutError(f"tsgo: pulls unanswered after {self.timeout:.0f}s")
            last = max(self.client.responses.pop(i)[0] for i in ids)
            return (last - since) * 1000
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
        files = parse_diff(diff.read_text())
        states = []
        for d in files:
            if d.old and d.new:
                states.append((self.root / d.new, "modified"))
            elif d.new:
                states.append((self.root / d.new, "created"))
            else:
                states.append((self.root / d.old, "deleted"))
        if self.kind == "rust-analyzer" and not any(s == "modified" for _, s in states):
            return None
        for path, state in states:
            if state == "modified":
                self.open(path)
        self.client.pump_quiet(QUIET / 2, self.timeout)
        apply_diff(self.root, diff)
        since = time.monotonic()
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
                        self.kind != "tsgo":
                    self.open(path)
            try:
                self._wait(undone)
            except (TimeoutError, Silent):
                pass  # the next case's wait says so if the server is still busy

    def close(self) -> None:
        self.client.shutdown()


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
            try:
                out[name] = session.case(diff)
            except TimeoutError as e:
                out[name] = f"timeout: {e}"
            except Silent as e:
                out[name] = f"silent: {e}"
            except ServerGone as e:
                out[name] = f"failed: {e}"
                break
    finally:
        session.close()
        restore(root)
    return out
