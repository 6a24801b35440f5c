"""A tiny stdlib-only LSP client, to measure what a language server costs by itself.

The bench compares lspgate's wall time with the server's own latency, measured
here the way an editor would see it: spawn, initialize, open the file, change it,
and time until the server answers for the new text (a push `publishDiagnostics`
or the response to a `textDocument/diagnostic` pull).

It answers every request a server sends (a server left waiting can stall) and
never sleeps to synchronise: every wait is on the next message, bounded by a
deadline.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote


def path_uri(path: Path) -> str:
    return "file://" + quote(str(path.resolve()))


class ServerGone(Exception):
    pass


class Client:
    """One server process and the state an editor keeps about it."""

    def __init__(self, cmd: list[str], root: Path, settings: dict | None = None,
                 env: dict | None = None):
        self.root = root.resolve()
        self.settings = settings or {}
        self.t_spawn = time.monotonic()
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # Servers log freely on stderr; nobody reads it here, and a full pipe
            # would block the server.
            stderr=subprocess.DEVNULL,
        )
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        self.responses: dict[int, Any] = {}
        self.pull = False
        self.progress: set = set()
        self.quiescent: bool | None = None
        self.last_message = time.monotonic()
        self.publishes: list[tuple[float, dict]] = []
        # Every work-done progress begin and end: (time, "begin"|"end", token, title).
        self.progress_events: list[tuple[float, str, str, str]] = []
        self.capabilities: dict = {}
        threading.Thread(target=self._read, name="lsp-reader", daemon=True).start()

    # --- transport -----------------------------------------------------------

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length is None:
                continue
            body = out.read(length)
            try:
                msg = json.loads(body)
            except ValueError:
                continue
            self.inbox.put((time.monotonic(), msg))

    def _send(self, msg: dict) -> None:
        msg["jsonrpc"] = "2.0"
        data = json.dumps(msg).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any = None) -> int:
        self.next_id += 1
        msg: dict = {"id": self.next_id, "method": method}
        # tsgo rejects `"params": null` on shutdown: omit it when there is none.
        if params is not None:
            msg["params"] = params
        self._send(msg)
        return self.next_id

    # --- the event loop ------------------------------------------------------

    def pump(self, until: Callable[[], bool], timeout: float) -> bool:
        """Handle messages until `until()` holds or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                item = self.inbox.get(timeout=left)
            except queue.Empty:
                return until()
            if item is None:
                raise ServerGone(f"server exited with {self.proc.poll()}")
            self._handle(*item)
        return True

    def pump_quiet(self, quiet: float, timeout: float) -> bool:
        """Handle messages until no progress is under way and `quiet` seconds
        passed without a message (the server has settled), or `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            if now >= deadline:
                return False
            settled_at = self.last_message + quiet
            busy = bool(self.progress) or self.quiescent is False
            wait = deadline - now if busy else min(settled_at - now, deadline - now)
            if not busy and wait <= 0:
                return True
            try:
                item = self.inbox.get(timeout=max(wait, 0.001))
            except queue.Empty:
                continue
            if item is None:
                raise ServerGone(f"server exited with {self.proc.poll()}")
            self._handle(*item)

    def _handle(self, t: float, msg: dict) -> None:
        self.last_message = t
        method = msg.get("method")
        if method is None:
            self.responses[msg.get("id")] = (t, msg)
            return
        params = msg.get("params") or {}
        if "id" in msg:
            self._send({"id": msg["id"], "result": self._answer(method, params)})
            return
        if method == "textDocument/publishDiagnostics":
            self.publishes.append((t, params))
        elif method == "$/progress":
            value = params.get("value") or {}
            kind = value.get("kind")
            token = str(params.get("token"))
            if kind == "begin":
                self.progress.add(token)
            elif kind == "end":
                self.progress.discard(token)
            if kind in ("begin", "end"):
                self.progress_events.append((t, kind, token, str(value.get("title") or "")))
        elif method == "experimental/serverStatus":
            self.quiescent = bool(params.get("quiescent"))

    def _answer(self, method: str, params: dict) -> Any:
        if method == "workspace/configuration":
            return [self._setting(item.get("section")) for item in params.get("items", [])]
        if method == "client/registerCapability":
            for reg in params.get("registrations", []):
                # pyright registers pull diagnostics dynamically, right after
                # `initialized`, and from then on stops pushing.
                if reg.get("method") == "textDocument/diagnostic":
                    self.pull = True
            return None
        if method == "workspace/workspaceFolders":
            return [{"uri": path_uri(self.root), "name": self.root.name}]
        # window/workDoneProgress/create, workspace/diagnostic/refresh,
        # client/unregisterCapability and anything unknown: null is a fine answer.
        return None

    def _setting(self, section: str | None) -> Any:
        value: Any = self.settings
        for part in (section or "").split("."):
            if not part:
                continue
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        return value

    def wait_response(self, rid: int, timeout: float) -> tuple[float, dict]:
        if not self.pump(lambda: rid in self.responses, timeout):
            raise TimeoutError(f"no response to request {rid} within {timeout}s")
        return self.responses.pop(rid)

    # --- the LSP conversation ------------------------------------------------

    def initialize(self, init_options: dict | None, timeout: float, *,
                   pull: bool = True) -> None:
        """`pull=False` leaves pull diagnostics out of the capabilities: pyright then
        pushes, which its workspace mode needs to report closed files."""
        root_uri = path_uri(self.root)
        caps = {
            "textDocument": {
                "synchronization": {"didSave": True, "dynamicRegistration": True},
                "publishDiagnostics": {"versionSupport": True, "relatedInformation": True},
                "diagnostic": {"dynamicRegistration": True, "relatedDocumentSupport": False},
            },
            "workspace": {
                "configuration": True,
                "workspaceFolders": True,
                "didChangeWatchedFiles": {"dynamicRegistration": True},
                "diagnostics": {"refreshSupport": True},
            },
            "window": {"workDoneProgress": True},
            "experimental": {"serverStatusNotification": True},
        }
        if not pull:
            del caps["textDocument"]["diagnostic"]
        params = {
            "processId": os.getpid(),
            "rootUri": root_uri,
            "rootPath": str(self.root),
            "workspaceFolders": [{"uri": root_uri, "name": self.root.name}],
            "capabilities": caps,
        }
        if init_options is not None:
            params["initializationOptions"] = init_options
        _, resp = self.wait_response(self.request("initialize", params), timeout)
        self.capabilities = (resp.get("result") or {}).get("capabilities") or {}
        if self.capabilities.get("diagnosticProvider"):
            self.pull = True
        self.notify("initialized", {})

    def open(self, path: Path, language_id: str, text: str) -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": path_uri(path), "languageId": language_id,
                              "version": 1, "text": text}},
        )

    def change(self, path: Path, version: int, text: str) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": path_uri(path), "version": version},
             "contentChanges": [{"text": text}]},
        )

    def save(self, path: Path) -> None:
        self.notify("textDocument/didSave", {"textDocument": {"uri": path_uri(path)}})

    def close(self, path: Path) -> None:
        self.notify("textDocument/didClose", {"textDocument": {"uri": path_uri(path)}})

    def watched(self, changes: list[tuple[Path, int]]) -> None:
        """workspace/didChangeWatchedFiles, as an editor's file watcher says it:
        type 1 created, 2 changed, 3 deleted."""
        self.notify("workspace/didChangeWatchedFiles",
                    {"changes": [{"uri": path_uri(p), "type": t} for p, t in changes]})

    def last_activity_after(self, since: float) -> float | None:
        """The time of the last publish or progress end received after `since`: when
        the server last said something about its analysis."""
        times = [t for t, _ in self.publishes if t >= since]
        times += [t for t, kind, _, _ in self.progress_events if t >= since and kind == "end"]
        return max(times) if times else None

    def pull_diagnostics(self, path: Path, timeout: float) -> tuple[float, list]:
        rid = self.request("textDocument/diagnostic", {"textDocument": {"uri": path_uri(path)}})
        t, resp = self.wait_response(rid, timeout)
        result = resp.get("result") or {}
        return t, result.get("items") or []

    def diagnostics_after(self, path: Path, since: float, accept: Callable[[dict], bool],
                          timeout: float) -> tuple[float, list]:
        """The first push for `path` received after `since` that `accept` takes."""
        uri = path_uri(path)
        found: list = []

        def seen() -> bool:
            for t, p in self.publishes:
                if t >= since and p.get("uri") == uri and accept(p):
                    found.append((t, p.get("diagnostics") or []))
                    return True
            return False

        if not self.pump(seen, timeout):
            raise TimeoutError(f"no diagnostics for {path.name} within {timeout}s")
        return found[0]

    def shutdown(self, timeout: float = 10.0) -> None:
        try:
            if self.proc.poll() is None:
                self.wait_response(self.request("shutdown"), timeout)
                self.notify("exit", None)
                self.proc.wait(timeout=timeout)
        except (TimeoutError, ServerGone, BrokenPipeError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def has_error(diagnostics: list) -> bool:
    return any(d.get("severity", 1) == 1 for d in diagnostics)


def measure_edit(cmd: list[str], root: Path, rel: str, language_id: str, old: str, new: str,
                 *, settings: dict | None = None, init_options: dict | None = None,
                 startup_timeout: float = 120.0, timeout: float = 60.0) -> dict:
    """Spawn the server at `root`, open `rel`, replace `old` by `new` in it, and time
    each step. Returns milliseconds: `first_diag` (spawn → the file's first
    diagnostics), `settled` (spawn → the end of start-up work: the last message
    before a second of silence with no progress under way), `change` (didChange →
    diagnostics of the new text), and whether that answer held an error."""
    path = root / rel
    text = path.read_text()
    if old not in text:
        raise ValueError(f"{old!r} is not in {rel}")
    client = Client(cmd, root, settings)
    try:
        client.initialize(init_options, startup_timeout)
        client.open(path, language_id, text)
        uri = path_uri(path)
        # A pull server may announce itself only after `initialized` (pyright
        # registers dynamically): wait for either that or a first push.
        client.pump(lambda: client.pull or any(p.get("uri") == uri for _, p in client.publishes),
                    startup_timeout)
        if client.pull:
            t_first, _ = client.pull_diagnostics(path, startup_timeout)
        else:
            t_first = next(t for t, p in client.publishes if p.get("uri") == uri)
        first_diag = (t_first - client.t_spawn) * 1000
        # Let start-up work (indexing, cargo check, project loading) finish, so the
        # change below is timed on a warm server as an editor would see it.
        client.pump_quiet(quiet=1.0, timeout=startup_timeout)
        # The last message before the quiet period: when start-up work really ended.
        # (A pull server such as rust-analyzer answers the first pull long before.)
        settled = (client.last_message - client.t_spawn) * 1000

        new_text = text.replace(old, new, 1)
        path.write_text(new_text)
        t_change = time.monotonic()
        client.change(path, 2, new_text)
        client.save(path)
        if client.pull:
            t_diag, diags = client.pull_diagnostics(path, timeout)
        else:
            # Servers that echo the version are matched on it; those that do not
            # (typescript-language-server; gopls 0.5, which sends the old one) are
            # matched on the error the edit introduces.
            def fresh(p: dict) -> bool:
                return p.get("version") == 2 or has_error(p.get("diagnostics") or [])
            t_diag, diags = client.diagnostics_after(path, t_change, fresh, timeout)
        return {
            "first_diag": first_diag,
            "settled": settled,
            "change": (t_diag - t_change) * 1000,
            "mode": "pull" if client.pull else "push",
            "error_seen": has_error(diags),
        }
    finally:
        path.write_text(text)
        client.shutdown()


def measure_changes(cmd: list[str], root: Path, rel: str, language_id: str, old: str, new: str,
                    runs: int, *, settings: dict | None = None,
                    init_options: dict | None = None, startup_timeout: float = 120.0,
                    timeout: float = 60.0, quiet: float = 0.3) -> dict:
    """The warm server's latency for the same edit `runs` times: spawn the server at
    `root`, open `rel`, let start-up work finish, then `runs` times change the file
    from `old` to `new` (timed: didChange → the diagnostics of the new text, pushed
    or pulled) and back (untimed), letting the server fall quiet for `quiet` seconds
    between changes, as a warm daemon finds it between two runs. Returns the list of
    milliseconds as `changes`, and `mode` (push or pull)."""
    path = root / rel
    text = path.read_text()
    if old not in text:
        raise ValueError(f"{old!r} is not in {rel}")
    new_text = text.replace(old, new, 1)
    client = Client(cmd, root, settings)
    changes: list[float] = []
    try:
        client.initialize(init_options, startup_timeout)
        client.open(path, language_id, text)
        uri = path_uri(path)
        client.pump(lambda: client.pull or any(p.get("uri") == uri for _, p in client.publishes),
                    startup_timeout)
        if client.pull:
            client.pull_diagnostics(path, startup_timeout)
        client.pump_quiet(quiet=1.0, timeout=startup_timeout)
        version = 1

        def change_to(content: str, expect_error: bool) -> float:
            nonlocal version
            version += 1
            path.write_text(content)
            t_change = time.monotonic()
            client.change(path, version, content)
            client.save(path)
            if client.pull:
                t_diag, _ = client.pull_diagnostics(path, timeout)
            else:
                want = version

                def fresh(p: dict) -> bool:
                    return p.get("version") == want or \
                        has_error(p.get("diagnostics") or []) == expect_error
                t_diag, _ = client.diagnostics_after(path, t_change, fresh, timeout)
            return (t_diag - t_change) * 1000

        for _ in range(runs):
            changes.append(change_to(new_text, True))
            client.pump_quiet(quiet=quiet, timeout=timeout)
            change_to(text, False)
            client.pump_quiet(quiet=quiet, timeout=timeout)
        return {"changes": changes, "mode": "pull" if client.pull else "push"}
    finally:
        path.write_text(text)
        client.shutdown()
