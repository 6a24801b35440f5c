"""The corpus: which real projects, pinned how, checked by which batch checker.

One table shared by fetch.py (brings the projects), truth.py (runs the batch checker
before and after each case to make the expected results) and score.py (runs lspgate on
the cases and times the batch checker). Everything a project needs beyond its pinned
release (a pyrightconfig.json, a tsconfig.json, a compile_commands.json, a trimmed
Cargo.toml) is written by fetch.py and described here, so the truth and lspgate see
the same project with the same settings.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"


def cache_dir() -> Path:
    """Where fetched projects live: never in the repository."""
    env = os.environ.get("LSPGATE_CORPUS_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lspgate-corpus"


@dataclass(frozen=True)
class Project:
    name: str
    language: str  # the table's language column
    source: str  # how fetch.py gets it, with the pin: "pypi:rich==13.9.4"
    checker: list[str]  # the batch checker, run at the project's top
    checker_label: str
    # The diffs live in cases/<diffs_from>/ (mobx-ts7 reuses mobx's edits); the
    # expected results always in cases/<name>/.
    diffs_from: str = ""
    # Not part of the project for the checker (build output, installed packages):
    # ignored by the copy's git repository, so restoring a case never removes them.
    gitignore: tuple[str, ...] = ()
    # The server's own re-check client (score.py): which kind, or "" when none is
    # measured honestly.
    recheck: str = ""
    notes: str = ""
    env: dict = field(default_factory=dict)
    # A monorepo: the batch checker runs in each of these directories (its packages)
    # and their errors are merged, paths relative to the project's top; empty: once,
    # at the top.
    packages: tuple[str, ...] = ()

    @property
    def case_dir(self) -> Path:
        return CASES / self.name

    @property
    def diff_dir(self) -> Path:
        return CASES / (self.diffs_from or self.name)

    def tree(self) -> Path:
        """The prepared, pristine tree in the cache (fetch.py makes it)."""
        return cache_dir() / self.name

    def checker_cmd(self, root: Path) -> list[str]:
        cmd = list(self.checker)
        local = root / cmd[0]
        if "/" in cmd[0] and local.exists():
            cmd[0] = str(local)
        elif shutil.which(cmd[0]) is None and "/" not in cmd[0]:
            raise FileNotFoundError(f"{cmd[0]} is not installed")
        return cmd


# Offline Go: no proxy, no toolchain download, no checksum database; the module has
# no dependencies, so module mode needs nothing from outside.
GO_ENV = {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GONOSUMDB": "*", "GOTOOLCHAIN": "local",
          "GOSUMDB": "off"}

PROJECTS = [
    Project("rich", "Python", "pypi:rich==13.9.4", ["pyright", "--outputjson"],
            "pyright", recheck="pyright",
            notes="78 modules under rich/, inline types; pygments and markdown-it are not "
                  "installed (their imports are errors before and after)"),
    Project("django", "Python", "pypi:django==5.2.8", ["pyright", "--outputjson"],
            "pyright", recheck="pyright",
            notes="883 modules; pyrightconfig.json include [\"django\"]; tests/ and docs/ "
                  "removed so the project is what the checker checks"),
    Project("mobx", "TypeScript 6", "npm:mobx@6.13.7", ["tsc", "--noEmit", "-p", "."],
            "tsc --noEmit (6)", gitignore=("node_modules/",), recheck="tsls",
            notes="58 .ts files under src/, re-export barrel src/internal.ts; tsconfig.json "
                  "written by fetch.py; @types/node@22.20.5 from npm; global TypeScript 6"),
    Project("mobx-ts7", "TypeScript 7", "npm:mobx@6.13.7+typescript@7.0.2",
            ["node_modules/.bin/tsc", "--noEmit", "-p", "."], "tsc --noEmit (7)",
            diffs_from="mobx", gitignore=("node_modules/",), recheck="tsgo",
            notes="the same sources with typescript@7.0.2 installed in the project (its tsc "
                  "is the native compiler)"),
    Project("go-cmp", "Go", "deb:golang-github-google-go-cmp-dev=0.5.9-1",
            ["go", "vet", "./..."], "go vet ./...", recheck="gopls", env=GO_ENV,
            notes="github.com/google/go-cmp from Debian's sources (34 files, 44 with "
                  "tests), no dependencies, module mode offline"),
    Project("lua", "C", "crate:lua-src==547.0.0:lua-5.4.7", ["clang", "-fsyntax-only"],
            "clang -fsyntax-only per TU", recheck="clangd",
            notes="Lua 5.4.7's sources shipped in the lua-src crate; compile_commands.json "
                  "written by fetch.py with the crate's own flags"),
    Project("itertools", "Rust", "crate:itertools==0.14.0",
            ["cargo", "check", "--all-targets", "--message-format=json"],
            "cargo check", gitignore=("target/",), recheck="rust-analyzer",
            notes="50 modules, one dependency (either) from crates.io; tests, benches, "
                  "examples and dev-dependencies removed, dependencies built once by fetch.py"),
]

# A go.work monorepo offline: workspace mode allows no -mod flag.
GO_WORK_ENV = {"GOPROXY": "off", "GOFLAGS": "", "GONOSUMDB": "*", "GOTOOLCHAIN": "local",
               "GOSUMDB": "off"}

PROJECTS += [
    Project("trpc-workspace-ts7", "TypeScript 7",
            "npm:@trpc/server@10.45.2+@trpc/client@10.45.2+@trpc/react-query@10.45.2;"
            "@types/node@22.20.5+react@18.3.1+react-dom@18.3.1+@types/react@18.3.12"
            "+@tanstack/react-query@4.36.1+typescript@7.0.2",
            ["../../node_modules/.bin/tsc", "--noEmit", "-p", "."],
            "tsc --noEmit per package (7)", diffs_from="trpc-workspace",
            gitignore=("node_modules/",), recheck="",
            packages=("packages/server", "packages/client", "packages/react-query"),
            notes="trpc-workspace with typescript@7.0.2 installed at the root (its tsc is "
                  "the native compiler, and lspgate checks the workspace with it)"),
    Project("trpc-references", "TypeScript 6",
            "npm:@trpc/server@10.45.2+@trpc/client@10.45.2+@trpc/react-query@10.45.2;"
            "@types/node@22.20.5+react@18.3.1+react-dom@18.3.1+@types/react@18.3.12"
            "+@tanstack/react-query@4.36.1",
            ["tsc", "-b", "."], "tsc -b (6)", diffs_from="trpc-workspace",
            gitignore=("node_modules/", "dist/", "*.tsbuildinfo"), recheck="",
            notes="the same packages in the tsc -b shape: composite packages referencing "
                  "the siblings they depend on, a root solution tsconfig.json; the checker "
                  "builds the solution (declarations only)"),
    Project("markdown-uv", "Python", "pypi:markdown-it-py==3.0.0+mdurl==0.1.2"
            "+mdit-py-plugins==0.4.2", ["pyright", "--outputjson"], "pyright (at the root)",
            gitignore=(".venv/",), recheck="",
            notes="markdown-it-py, mdurl (src/ layout) and mdit-py-plugins as a uv "
                  "workspace: each member installed editable in the root's .venv (a .pth "
                  "file each); pyright at the root is the checker a user of the workspace "
                  "runs (a member alone does not see the venv)"),
    Project("trpc-workspace", "TypeScript 6",
            "npm:@trpc/server@10.45.2+@trpc/client@10.45.2+@trpc/react-query@10.45.2;"
            "@types/node@22.20.5+react@18.3.1+react-dom@18.3.1+@types/react@18.3.12"
            "+@tanstack/react-query@4.36.1",
            ["tsc", "--noEmit", "-p", "."], "tsc --noEmit per package (6)",
            gitignore=("node_modules/",), recheck="",
            packages=("packages/server", "packages/client", "packages/react-query"),
            notes="tRPC 10's server, client and react-query packages from npm (each ships "
                  "its src/), laid out as an npm workspace: exports under the custom "
                  "condition `source`, a base tsconfig, no root tsconfig; the client "
                  "imports the server and its subpaths by name, react-query both"),
    Project("cobra-work", "Go", "deb:golang-github-spf13-cobra-dev=1.6.1-1"
            "+golang-github-spf13-pflag-dev=1.0.6~git20210604-d5e0c0615ace-1",
            ["go", "build", "-gcflags=-e", "./..."], "go build -gcflags=-e ./... per module",
            recheck="gopls",
            env=GO_WORK_ENV, packages=("pflag", "cobra"),
            notes="a go.work of spf13/pflag and spf13/cobra (which imports pflag) from "
                  "Debian's sources; tests and cobra/doc removed, cobra's go.mod "
                  "with no requirements (pflag is the workspace's; offline); every edit is in pflag and breaks cobra. go build, "
                  "not go vet: vet prints a package's first type error only, the compiler "
                  "with -e all of them"),
    Project("crossbeam-workspace", "Rust",
            "crates:crossbeam-utils==0.8.21+crossbeam-epoch==0.9.18+crossbeam-deque==0.8.6"
            "+crossbeam-channel==0.5.15+crossbeam-queue==0.3.12+crossbeam==0.8.4",
            ["cargo", "check", "--workspace", "--all-targets", "--keep-going",
             "--message-format=json"],
            "cargo check --workspace", gitignore=("target/",), recheck="rust-analyzer",
            notes="crossbeam's utils, epoch, deque, channel and queue crates and the umbrella "
                  "crossbeam (48 modules under their src/) as a Cargo workspace: each crate "
                  "in its own directory at the top, a root Cargo.toml with [workspace] "
                  "members (resolver 2) and [patch.crates-io] pointing each crate at its "
                  "directory, so that a member's dependency by name (crossbeam-utils = "
                  "\"0.8.18\") is its sibling's local source; no other dependency (the "
                  "cfg(crossbeam_loom) loom one dropped); tests, benches, examples and "
                  "dev-dependencies removed, built once by fetch.py. --keep-going, as "
                  "rust-analyzer's flycheck passes it: without it cargo stops at the first "
                  "crate that fails, and which of the others it checked depends on timing"),
]

BY_NAME = {p.name: p for p in PROJECTS}


def select(names: str | None) -> list[Project]:
    if not names:
        return list(PROJECTS)
    out = []
    for n in names.split(","):
        n = n.strip()
        if n not in BY_NAME:
            raise SystemExit(f"corpus: unknown project {n!r} (known: {', '.join(BY_NAME)})")
        out.append(BY_NAME[n])
    return out
