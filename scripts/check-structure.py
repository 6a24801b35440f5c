#!/usr/bin/env python3
"""The structure rules CI holds lspgate's src/ to, read from the code's own text:

1. No cycle between modules. An edge A -> B is a `crate::`, `super::` or `self::` path
   in A's file that names module B (or an item in it). Edges are compared at the level
   where the two modules are siblings: `check::before` using `report::Role` is an edge
   check -> report. A module and its own descendants are one unit to the rest of the
   crate, so a parent declaring its children and the children naming the parent's
   items are not cycles (that is how a module is built).
2. No function longer than 150 lines; the check's top-level function (`check::run`)
   shorter than 100.
3. No server named outside `src/servers/`: each family's entries, waits and protocol
   extensions live in its module there, and the rest of the crate reaches them through
   `servers::quirks`. Comments and tests (an in-file `#[cfg(test)] mod`, a `tests.rs`,
   a module declared under `#[cfg(test)]`) may name servers.
4. `lsp::Server` has at most 25 fields: what belongs together is grouped.
5. Every `docs/SPEC.md section N` the code cites is a section the contract has.
6. The exit statuses' numbers (the constants of src/exit.rs) are named nowhere but in
   src/exit.rs, whose `status` alone maps an outcome to one; tests excepted.

Usage: python3 scripts/check-structure.py [--graph]   (exit 1 on a violation)
--graph prints the module-level edges, one per line, for a reader.

Written here because it is thirty lines of graph code over what a Rust module graph
tool would need a compiled crate for, and CI should not build one to read imports.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
MAX_FN = 150
MAX_CHECK_RUN = 100
MAX_SERVER_FIELDS = 25
SERVER_NAMES = re.compile(r"clangd|rust.analyzer|tsserver|pyright|gopls")

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH_RE = re.compile(rf"\b(crate|super|self)((?:::{IDENT})+|::\{{)")
FN_RE = re.compile(rf"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+({IDENT})")


def module_of(path: Path) -> tuple[str, ...] | None:
    rel = path.relative_to(SRC)
    parts = list(rel.parts)
    if parts == ["lib.rs"]:
        return ()
    if parts == ["main.rs"]:
        return None
    last = parts.pop()
    stem = last[:-3]
    if stem != "mod":
        parts.append(stem)
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def references(text: str, here: tuple[str, ...], is_mod_file: bool) -> list[tuple[str, ...]]:
    """Module paths named by `crate::`, `super::` and `self::` paths in `text`."""
    out = []
    # The module a file's `self::` names; `super::` is its parent.
    for m in PATH_RE.finditer(text):
        anchor, rest = m.group(1), m.group(2)
        if anchor == "crate":
            base: tuple[str, ...] = ()
        elif anchor == "self":
            base = here
        else:
            base = here[:-1]
        if rest == "::{":
            # crate::{a, b::c}: the first name of each entry.
            depth, start, i = 1, m.end(), m.end()
            while i < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            inner = text[start:i - 1]
            for entry in split_top(inner):
                names = re.findall(IDENT, entry.split(" as ")[0])
                if names:
                    out.append(base + tuple(n for n in names if n != "self"))
            continue
        names = tuple(rest.strip(":").split("::"))
        # `super::super::x`
        while names and names[0] == "super":
            base = base[:-1]
            names = names[1:]
        out.append(base + names)
    return out


def split_top(inner: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for c in inner:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def longest_module(path: tuple[str, ...], modules: set[tuple[str, ...]]) -> tuple[str, ...]:
    for n in range(len(path), -1, -1):
        if path[:n] in modules:
            return path[:n]
    return ()


def sibling_edge(a: tuple[str, ...], b: tuple[str, ...]):
    """The edge between a and b at the level where they are siblings; None when one
    contains the other."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    if n == len(a) or n == len(b):
        return None
    return a[: n + 1], b[: n + 1]


def cycles(edges: dict[tuple, set]) -> list[list[tuple]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def blank_literals(text: str, keep_strings: bool = False) -> str:
    """`text` with comments, strings (raw ones too) and char literals blanked out, line
    breaks kept, so that braces can be counted; with `keep_strings`, comments only."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'b?r(#*)"', text[i:i + 40])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append(text[i:j] if keep_strings else "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1] if keep_strings else "\n" * text.count("\n", i, j + 1))
            i = j + 1
            continue
        m = re.match(r"'(\\.|[^'\\])'", text[i:i + 12]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 14])
        if m:
            if keep_strings:
                out.append(m.group(0))
            i += m.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def long_functions(path: Path, text: str) -> list[tuple[str, int, int, int]]:
    """(name, first line, length, limit) of every function over its limit."""
    lines = blank_literals(text).splitlines()
    out = []
    module = module_of(path)
    for i, line in enumerate(lines):
        m = FN_RE.match(line)
        if not m:
            continue
        end = block_end(lines, i, bodiless_stop=True)
        if end is None:
            continue
        length = end - i + 1
        name = m.group(1)
        limit = MAX_CHECK_RUN if (module == ("check",) and name == "run") else MAX_FN
        if length > limit:
            out.append((name, i + 1, length, limit))
    return out


def block_end(lines: list[str], start: int, bodiless_stop: bool = False) -> int | None:
    """The line closing the first `{` block opened on or after line `start` of
    `lines` (literals blanked). With `bodiless_stop`, None when a line ends the item
    with `;` before any block opens (a declaration without a body)."""
    depth, opened = 0, False
    for j in range(start, len(lines)):
        if bodiless_stop and not opened and ";" in lines[j] and "{" not in lines[j]:
            return None
        for c in lines[j]:
            if c == "{":
                depth += 1
                opened = True
            elif c == "}":
                depth -= 1
        if opened and depth <= 0:
            return j
    return None


def test_only_files(files: list[Path]) -> set[Path]:
    """The files that are tests: `tests.rs`, anything under a `tests/` directory, and
    a module declared under `#[cfg(test)]` (`#[cfg(test)] mod fixtures;`)."""
    out = {f for f in files if f.name == "tests.rs" or "tests" in f.relative_to(SRC).parts[:-1]}
    for f in files:
        text = f.read_text()
        for m in re.finditer(rf"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+({IDENT})\s*;", text):
            base = f.parent if f.name in ("mod.rs", "lib.rs") else f.parent / f.stem
            out.add(base / f"{m.group(1)}.rs")
            out.add(base / m.group(1) / "mod.rs")
    return out


def test_lines(text: str) -> set[int]:
    """The lines (0-based) of in-file test modules: `#[cfg(test)] mod x { ... }`."""
    lines = blank_literals(text).splitlines()
    out: set[int] = set()
    for i, line in enumerate(lines):
        if not re.match(r"\s*#\[cfg\(test\)\]", line):
            continue
        j = i + 1
        while j < len(lines) and re.match(r"\s*(#\[|$)", lines[j]):
            j += 1
        if j < len(lines) and re.match(r"\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", lines[j]):
            end = block_end(lines, j)
            out.update(range(i, (end if end is not None else len(lines) - 1) + 1))
    return out


def server_names_outside_servers(files: list[Path]) -> list[str]:
    """Every non-comment, non-test line outside `src/servers/` that names a server."""
    tests = test_only_files(files)
    out = []
    for f in files:
        rel = f.relative_to(SRC)
        if rel.parts[0] == "servers" or f in tests:
            continue
        text = f.read_text()
        skip = test_lines(text)
        for i, line in enumerate(blank_literals(text, keep_strings=True).splitlines()):
            if i not in skip and SERVER_NAMES.search(line):
                out.append(f"{f.relative_to(SRC.parent)}:{i + 1}: names a server outside src/servers/: "
                           f"{line.strip()}")
    return out


def server_fields() -> list[str]:
    """`lsp::Server`'s fields, over the limit."""
    path = SRC / "lsp" / "server.rs"
    lines = blank_literals(path.read_text()).splitlines()
    start = next((i for i, l in enumerate(lines) if re.match(r"\s*pub struct Server\s*\{", l)), None)
    if start is None:
        return [f"{path.relative_to(SRC.parent)}: no `pub struct Server` to count the fields of"]
    end = block_end(lines, start)
    fields = [l for l in lines[start + 1:end]
              if re.match(rf"\s*(?:pub(?:\([^)]*\))?\s+)?{IDENT}\s*:", l)]
    if len(fields) > MAX_SERVER_FIELDS:
        return [f"{path.relative_to(SRC.parent)}:{start + 1}: lsp::Server has {len(fields)} fields "
                f"(at most {MAX_SERVER_FIELDS}): group what belongs together"]
    return []


SPEC = SRC.parent / "docs" / "SPEC.md"


def contract_citations(files: list[Path]) -> list[str]:
    """Every `docs/SPEC.md section N` the code cites names a section the contract has."""
    sections = set(re.findall(r"(?m)^## (\d+)\. ", SPEC.read_text())) if SPEC.exists() else set()
    out = []
    for f in files:
        for m in re.finditer(r"docs/SPEC\.md\s+(?://[!/]?\s*)?section\s+(\d+)", f.read_text()):
            if m.group(1) not in sections:
                line = f.read_text().count("\n", 0, m.start()) + 1
                out.append(f"{f.relative_to(SRC.parent)}:{line}: cites docs/SPEC.md section "
                           f"{m.group(1)}, which it does not have")
    return out


EXIT = SRC / "exit.rs"


def non_test_code(path: Path, text: str) -> str:
    """`text` without its comments and string literals, and without its tests: none
    for a file of tests, else up to its first `#[cfg(test)]`."""
    if path.name == "tests.rs" or path.name.endswith("_tests.rs") or "tests" in path.relative_to(SRC).parts:
        return ""
    code = blank_literals(text)
    cut = code.find("#[cfg(test)]")
    return code if cut < 0 else code[:cut]


def exit_numbers_elsewhere(files: list[Path]) -> list[str]:
    """Uses of src/exit.rs's constants outside it (non-test code)."""
    if not EXIT.exists():
        return []
    names = re.findall(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?const\s+([A-Z_][A-Z0-9_]*)\s*:", EXIT.read_text())
    if not names:
        return []
    alternatives = "|".join(names)
    # `exit::OK`, and a `use crate::exit::{OK, ...}` that would bring one in bare.
    pattern = re.compile(rf"\bexit::(?:{alternatives})\b|\bexit::\{{[^}}]*\b(?:{alternatives})\b")
    out = []
    for f in files:
        if f == EXIT:
            continue
        code = non_test_code(f, f.read_text())
        for m in pattern.finditer(code):
            line = code.count("\n", 0, m.start()) + 1
            out.append(f"{f.relative_to(SRC.parent)}:{line}: names an exit status's number "
                       f"({m.group(0)}); use exit::Outcome and exit::status")
    return out


def main() -> int:
    files = sorted(SRC.rglob("*.rs"))
    modules = {m for f in files if (m := module_of(f)) is not None}
    edges: dict[tuple, set] = defaultdict(set)
    problems = []
    for f in files:
        here = module_of(f)
        text = f.read_text()
        if here is not None:
            is_mod = f.name in ("mod.rs", "lib.rs")
            for ref in references(strip_comments(text), here, is_mod):
                target = longest_module(ref, modules)
                edge = sibling_edge(here, target)
                if edge:
                    edges[edge[0]].add(edge[1])
        for name, line, length, limit in long_functions(f, text):
            problems.append(f"{f.relative_to(SRC.parent)}:{line}: fn {name} is {length} lines (at most {limit})")
    if "--graph" in sys.argv:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f"{'::'.join(a)} -> {'::'.join(b)}")
    for comp in cycles(edges):
        names = ", ".join("::".join(m) for m in comp)
        ties = [f"{'::'.join(a)} -> {'::'.join(b)}" for a in comp for b in sorted(edges[a]) if b in comp]
        problems.append(f"module cycle: {names} ({'; '.join(ties)})")
    problems.extend(contract_citations(files))
    problems.extend(server_names_outside_servers(files))
    problems.extend(server_fields())
    problems.extend(exit_numbers_elsewhere(files))
    for p in problems:
        print(f"check-structure: {p}", file=sys.stderr)
    if not problems:
        print(f"check-structure: {len(modules)} modules, no cycle, no function over its limit, "
              f"no server named outside src/servers/, lsp::Server within {MAX_SERVER_FIELDS} fields",
              file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
