"""Fetch the corpus's pinned real projects from the package registries into the cache.

    python3 bench/corpus/fetch.py [--projects rich,go-cmp] [--force]

Each project is downloaded with its registry's own client (pip, npm, apt-get, cargo)
at the version pinned in projects.py, unpacked into
`${LSPGATE_CORPUS_DIR:-~/.cache/lspgate-corpus}/<project>/`, and given what its batch
checker and its language server need to see the same project (see projects.py). A
project already prepared at the same pin is left alone: the stamp file `.corpus-pin`
says which pin a tree holds. Nothing here is committed; the trees are rebuilt from the
registries on a fresh machine.

Why registries and not a copy in the repository: the projects are other people's
code, tens of megabytes, and the pins make the bench reproducible anyway.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from projects import GO_ENV, GO_WORK_ENV, Project, select  # noqa: E402

PIN_FILE = ".corpus-pin"


class FetchError(Exception):
    pass


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None,
        timeout: float = 900) -> str:
    """Run a registry client; a failure becomes one line naming the command."""
    full_env = dict(os.environ, **(env or {}))
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=full_env, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise FetchError(f"{' '.join(cmd[:4])}: timed out after {timeout:.0f}s") from None
    except OSError as e:
        raise FetchError(f"{cmd[0]}: {e.strerror}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-1:] or [""]
        raise FetchError(f"{' '.join(cmd[:5])}: exit {proc.returncode}: {last[0][:300]}")
    return proc.stdout


def untar(archive: Path, into: Path) -> None:
    with tarfile.open(archive) as tar:
        try:
            tar.extractall(into, filter="data")
        except TypeError:  # Python 3.11 before 3.11.4 has no filters; the archive
            tar.extractall(into)  # noqa: S202  comes from the registry's own client


def only_child(d: Path) -> Path:
    kids = [p for p in d.iterdir() if p.is_dir()]
    if len(kids) != 1:
        raise FetchError(f"expected one directory in {d}, found {len(kids)}")
    return kids[0]


# --- per registry ---------------------------------------------------------------------

def fetch_pypi(spec: str, work: Path) -> Path:
    """An sdist, as `pip download --no-binary :all:` gets it."""
    run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--no-binary", ":all:", "--dest", str(work / "dl"), spec])
    archive = next((work / "dl").glob("*.tar.gz"), None)
    if archive is None:
        raise FetchError(f"pip download {spec}: no sdist")
    untar(archive, work / "x")
    return only_child(work / "x")


def fetch_npm(spec: str, work: Path) -> Path:
    (work / "dl").mkdir()
    run(["npm", "pack", "--silent", spec], cwd=work / "dl")
    archive = next((work / "dl").glob("*.tgz"), None)
    if archive is None:
        raise FetchError(f"npm pack {spec}: no tarball")
    untar(archive, work / "x")
    return only_child(work / "x")


def fetch_deb(spec: str, work: Path) -> Path:
    """A Debian package's files, unpacked with dpkg-deb (not installed)."""
    (work / "dl").mkdir()
    try:
        run(["apt-get", "download", "-q", spec], cwd=work / "dl")
    except FetchError:
        # A fresh machine may have no package lists yet.
        run(["apt-get", "update", "-qq"])
        run(["apt-get", "download", "-q", spec], cwd=work / "dl")
    deb = next((work / "dl").glob("*.deb"))
    run(["dpkg-deb", "-x", str(deb), str(work / "x")])
    return work / "x"


def fetch_crate(name: str, version: str, work: Path) -> Path:
    """A crate's source as cargo downloads it: a throwaway package that depends on it
    exactly, `cargo fetch`, and the path cargo metadata gives for it."""
    proj = work / "fetcher"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "lib.rs").write_text("")
    (proj / "Cargo.toml").write_text(
        '[package]\nname = "corpus-fetcher"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[dependencies]\n{name} = "={version}"\n')
    run(["cargo", "fetch", "--quiet"], cwd=proj)
    meta = json.loads(run(["cargo", "metadata", "--format-version", "1", "--offline"],
                          cwd=proj))
    for pkg in meta["packages"]:
        if pkg["name"] == name and pkg["version"] == version:
            return Path(pkg["manifest_path"]).parent
    raise FetchError(f"cargo fetch {name} {version}: not in cargo metadata")


# --- per project ----------------------------------------------------------------------

def prepare(p: Project, work: Path) -> Path:
    """Fetch `p` and make it a project its checker and its server agree on. Returns
    the tree to move into the cache."""
    kind, spec = p.source.split(":", 1)
    out = work / "tree"
    if p.name == "rich":
        src = fetch_pypi(spec, work)
        shutil.copytree(src, out)
    elif p.name == "django":
        src = fetch_pypi(spec, work)
        out.mkdir()
        # The package and its metadata; tests/, docs/, js_tests/ are not what the
        # checker checks, and a server asked about them would report errors the
        # truth never sees.
        shutil.copytree(src / "django", out / "django")
        for f in ("pyproject.toml", "LICENSE", "README.rst"):
            if (src / f).exists():
                shutil.copy2(src / f, out / f)
        (out / "pyrightconfig.json").write_text('{\n  "include": ["django"]\n}\n')
    elif p.name in ("mobx", "mobx-ts7"):
        pkg, *extra = spec.split("+")
        src = fetch_npm(pkg, work)
        out.mkdir()
        shutil.copytree(src / "src", out / "src")
        shutil.copy2(src / "LICENSE", out / "LICENSE")
        # mobx publishes no tsconfig; this one is its repository's spirit (strict, no
        # implicit-any checks) with a lib new enough for the Set methods it uses.
        (out / "tsconfig.json").write_text(json.dumps({"compilerOptions": {
            "target": "es2022", "lib": ["es2025", "dom"], "module": "esnext",
            "moduleResolution": "bundler", "strict": True, "noImplicitAny": False,
            "noImplicitThis": False, "noEmit": True, "experimentalDecorators": True,
            "skipLibCheck": True, "types": ["node"]}, "include": ["src"]}, indent=2) + "\n")
        (out / "package.json").write_text(json.dumps(
            {"name": "mobx-corpus", "version": "0.0.0", "private": True}, indent=2) + "\n")
        run(["npm", "install", "--no-audit", "--no-fund", "--silent", "--save-dev",
             "@types/node@22.20.5", *extra], cwd=out)
    elif p.name == "go-cmp":
        x = fetch_deb(spec, work)
        mods = list(x.rglob("go.mod"))
        if len(mods) != 1:
            raise FetchError(f"{spec}: expected one go.mod, found {len(mods)}")
        shutil.copytree(mods[0].parent, out, symlinks=False)
        # Offline module mode: the module has no requirements, so an empty go.sum and
        # GOPROXY=off are all it takes.
        (out / "go.sum").touch()
        run(["go", "build", "./..."], cwd=out, env=GO_ENV)
    elif p.name in ("trpc-workspace", "trpc-workspace-ts7"):
        prepare_npm_workspace(spec, work, out)
    elif p.name == "trpc-references":
        prepare_npm_workspace(spec, work, out, references=True)
    elif p.name == "markdown-uv":
        prepare_uv_workspace(spec, work, out)
    elif p.name == "cobra-work":
        out.mkdir()
        for pin in spec.split("+"):
            (work / pin.split("=")[0]).mkdir()
            x = fetch_deb(pin, work / pin.split("=")[0])
            for mod in x.rglob("go.mod"):
                name = mod.parent.name
                shutil.copytree(mod.parent, out / name, symlinks=False)
        shutil.rmtree(out / "cobra" / "doc")
        for t in out.rglob("*_test.go"):
            t.unlink()
        for s in out.rglob("go.sum"):
            s.unlink()
        # cobra's other requirements are for cobra/doc and Windows only, and pflag is
        # the workspace's own: offline, a requirement of a version of it would send
        # gopls to look that version up (go build does not).
        (out / "cobra" / "go.mod").write_text("module github.com/spf13/cobra\n\ngo 1.15\n")
        (out / "go.work").write_text("go 1.18\n\nuse (\n\t./pflag\n\t./cobra\n)\n")
        for mod in ("pflag", "cobra"):
            run(["go", "build", "./..."], cwd=out / mod, env=GO_WORK_ENV)
    elif p.name == "lua":
        crate, dirname = spec.split(":")
        name, version = crate.split("==")
        src = fetch_crate(name, version, work) / dirname
        shutil.copytree(src, out)
        write_compile_commands(out)
    elif p.name == "itertools":
        name, version = spec.split("==")
        src = fetch_crate(name, version, work)
        shutil.copytree(src, out)
        trim_cargo_toml(out)
        # Build the dependencies once, so a check is as incremental as a user's.
        run(["cargo", "check", "--all-targets", "--quiet"], cwd=out, timeout=1800)
    elif p.name == "crossbeam-workspace":
        prepare_cargo_workspace(spec, work, out)
    else:
        raise FetchError(f"no recipe for {p.name}")
    return out


def source_exports(exports: dict) -> dict:
    """A published package's `exports`, each subpath first under the condition
    `source` pointing at the TypeScript it was built from (`./dist/x.mjs` →
    `./src/x.ts`, or `./src/x/index.ts`), as a monorepo has it for its siblings."""
    out = {}
    for key, target in exports.items():
        if not isinstance(target, dict):
            out[key] = target
            continue
        built = target.get("import") or target.get("default") or ""
        stem = re.sub(r"^\./dist/", "./src/", re.sub(r"\.m?js$", "", built))
        out[key] = {"source": f"{stem}.ts", **target}
    return out


def prepare_npm_workspace(spec: str, work: Path, out: Path, references: bool = False) -> None:
    """npm packages that ship their sources, laid out as the monorepo they came from:
    `packages/<name>/src` and a manifest whose `exports` point at the sources under
    the condition `source`, a root `package.json` with `workspaces` (whose `npm
    install` links them into node_modules and brings the rest), a base tsconfig each
    package's extends, no root tsconfig. With `references`, the `tsc -b` shape
    instead: composite packages referencing the siblings they depend on, and a root
    solution tsconfig referencing them all."""
    pins, _, extra = spec.partition(";")
    (out / "packages").mkdir(parents=True)
    names = {pin.rsplit("@", 1)[0]: pin.rsplit("@", 1)[0].split("/")[-1]
             for pin in pins.split("+")}
    for pin in pins.split("+"):
        name = pin.rsplit("@", 1)[0]
        short = name.split("/")[-1]
        (work / short).mkdir()
        src = fetch_npm(pin, work / short)
        dest = out / "packages" / short
        shutil.copytree(src / "src", dest / "src")
        manifest = json.loads((src / "package.json").read_text())
        keep = {k: manifest[k] for k in ("name", "version", "peerDependencies",
                                           "dependencies") if k in manifest}
        keep["exports"] = source_exports(manifest.get("exports", {}))
        (dest / "package.json").write_text(json.dumps(keep, indent=2) + "\n")
        tsconfig = {"extends": "../../tsconfig.base.json", "include": ["src"]}
        if references:
            deps = {**manifest.get("dependencies", {}), **manifest.get("peerDependencies", {})}
            tsconfig["compilerOptions"] = {"composite": True, "rootDir": "src",
                                           "outDir": "dist", "emitDeclarationOnly": True}
            tsconfig["references"] = [{"path": f"../{names[d]}"} for d in deps if d in names]
        (dest / "tsconfig.json").write_text(json.dumps(tsconfig, indent=2) + "\n")
    (out / "tsconfig.base.json").write_text(json.dumps({"compilerOptions": {
        "target": "es2022", "lib": ["es2022", "dom", "dom.iterable"], "module": "esnext",
        "moduleResolution": "bundler", "customConditions": ["source"], "strict": True,
        "noEmit": not references, "skipLibCheck": True, "jsx": "react-jsx",
        "types": ["node"]}}, indent=2) + "\n")
    if references:
        (out / "tsconfig.json").write_text(json.dumps(
            {"files": [], "references": [{"path": f"packages/{n}"} for n in names.values()]},
            indent=2) + "\n")
    devs = dict(d.rsplit("@", 1) for d in extra.split("+") if d)
    (out / "package.json").write_text(json.dumps(
        {"name": "corpus-workspace", "private": True, "workspaces": ["packages/*"],
         "devDependencies": devs}, indent=2) + "\n")
    run(["npm", "install", "--no-audit", "--no-fund", "--silent"], cwd=out, timeout=1800)


def prepare_uv_workspace(spec: str, work: Path, out: Path) -> None:
    """PyPI sdists laid out as a uv workspace: `packages/<dist>/` with its
    pyproject.toml and its import root (flat or `src/`), a root pyproject.toml with
    `[tool.uv.workspace]`, and the root `.venv` where uv installs every member
    editable: one `.pth` file per member, relative to site-packages, so that a copy of
    the tree imports its own members."""
    (out / "packages").mkdir(parents=True)
    members = []
    for pin in spec.split("+"):
        dist = pin.split("==")[0]
        (work / dist).mkdir()
        src = fetch_pypi(pin, work / dist)
        dest = out / "packages" / dist
        dest.mkdir()
        shutil.copy2(src / "pyproject.toml", dest / "pyproject.toml")
        for child in sorted(src.iterdir()):
            if child.is_dir() and child.name not in ("tests", "docs", "scripts", "benchmarks") \
                    and any(child.rglob("*.py")):
                shutil.copytree(child, dest / child.name,
                                ignore=shutil.ignore_patterns("tests", "__pycache__"))
        members.append(dest / "src" if (dest / "src").is_dir() else dest)
    (out / "pyproject.toml").write_text(
        '[project]\nname = "corpus-uv"\nversion = "0"\n\n[tool.uv.workspace]\n'
        'members = ["packages/*"]\n\n[tool.pyright]\nvenvPath = "."\nvenv = ".venv"\n')
    run([sys.executable, "-m", "venv", "--without-pip", str(out / ".venv")])
    site = Path(run([str(out / ".venv" / "bin" / "python"), "-c",
                     "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).strip())
    for root in members:
        name = root.relative_to(out).parts[1]
        (site / f"_{name}.pth").write_text(os.path.relpath(root, site) + "\n")


# The flags the lua-src crate compiles Lua 5.4 with on Linux (its src/lib.rs).
LUA_FLAGS = ["-std=gnu99", "-O2", "-Wall", "-DLUA_USE_LINUX", "-DLUA_COMPAT_5_3"]


def write_compile_commands(root: Path) -> None:
    """One entry per library translation unit. `directory` is "." here: every copy the
    bench makes rewrites it to the copy's absolute path (workspace.py), as the format
    wants."""
    cmds = []
    for c in sorted(root.glob("*.c")):
        if c.name in ("lua.c", "luac.c", "onelua.c"):
            continue  # programs, not part of the library the crate builds
        cmds.append({"directory": ".", "file": c.name,
                     "arguments": ["gcc", *LUA_FLAGS, "-c", c.name, "-o", c.stem + ".o"]})
    (root / "compile_commands.json").write_text(json.dumps(cmds, indent=1) + "\n")


def trim_cargo_toml(root: Path) -> None:
    """Drop tests, benches, examples and dev-dependencies: building criterion and its
    tree would dominate every check of a 50-module crate."""
    text = (root / "Cargo.toml").read_text()
    blocks = re.split(r"(?m)^(?=\[)", text)
    keep = [b for b in blocks
            if not re.match(r"\[\[(test|bench|example)\]\]|\[dev-dependencies", b)]
    (root / "Cargo.toml").write_text("".join(keep))
    for d in ("tests", "benches", "examples"):
        shutil.rmtree(root / d, ignore_errors=True)


def prepare_cargo_workspace(spec: str, work: Path, out: Path) -> None:
    """crates.io crates laid out as the Cargo workspace they came from: each crate in
    its own directory at the top (`crossbeam-utils/`, ...), trimmed as itertools is,
    and a root Cargo.toml whose `[workspace]` lists them and whose `[patch.crates-io]`
    points each at its directory, so that a member's dependency on a sibling by name
    (`crossbeam-utils = "0.8.18"`) is the sibling's local source. The optional `loom`
    dependency (only under `--cfg crossbeam_loom`) is dropped: a workspace locks its
    members' optional dependencies, and loom's tree would be downloaded and locked for
    nothing. Dependencies built once, as for itertools."""
    out.mkdir()
    names = []
    for pin in spec.split("+"):
        name, version = pin.split("==")
        (work / name).mkdir()
        shutil.copytree(fetch_crate(name, version, work / name), out / name)
        trim_cargo_toml(out / name)
        drop_loom(out / name / "Cargo.toml")
        (out / name / "Cargo.lock").unlink(missing_ok=True)  # the workspace has one
        names.append(name)
    members = "".join(f'    "{n}",\n' for n in names)
    patches = "".join(f'{n} = {{ path = "{n}" }}\n' for n in names)
    (out / "Cargo.toml").write_text(f'[workspace]\nmembers = [\n{members}]\nresolver = "2"\n\n'
                                    f"[patch.crates-io]\n{patches}")
    run(["cargo", "check", "--workspace", "--all-targets", "--quiet"], cwd=out, timeout=1800)


def drop_loom(manifest: Path) -> None:
    """A crossbeam manifest without its `cfg(crossbeam_loom)` dependencies and the
    `loom` feature that enables them."""
    text = manifest.read_text()
    blocks = re.split(r"(?m)^(?=\[)", text)
    keep = [b for b in blocks if not b.startswith('[target."cfg(crossbeam_loom)"')]
    text = "".join(keep)
    text = re.sub(r'(?ms)^loom = \[.*?\]\n', "", text)
    manifest.write_text(text)


def fetch(p: Project, force: bool) -> Path:
    dest = p.tree()
    pin = dest / PIN_FILE
    if not force and pin.exists() and pin.read_text().strip() == p.source:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{p.name}-") as tmp:
        work = Path(tmp)
        tree = prepare(p, work)
        (tree / PIN_FILE).write_text(p.source + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        tree.rename(dest)
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--projects", help="comma-separated subset (default: all)")
    ap.add_argument("--force", action="store_true", help="fetch again even when cached")
    args = ap.parse_args()
    status = 0
    for p in select(args.projects):
        try:
            path = fetch(p, args.force)
            print(f"corpus: {p.name}: {path}", file=sys.stderr)
        except FetchError as e:
            print(f"corpus: {p.name}: fetch failed: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
