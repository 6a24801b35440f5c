#!/usr/bin/env bash
# Installs every language server lspgate's tests and example use, on a fresh Debian
# machine:
#   Debian:  gopls (with go), clangd (14 on Debian 12) and clangd-19 (which reads the
#            headers lspgate has open: the tests run both)
#   npm -g:  pyright, typescript-language-server with typescript@6 (its tsserver),
#            @typescript/native-preview (`tsgo`, TypeScript 7 installed globally),
#            vscode-langservers-extracted (vscode-eslint-language-server) and eslint
#   PyPI:    basedpyright, ruff, ty, pyrefly, in a virtual environment under $PREFIX,
#            linked into /usr/local/bin
#   rustup:  rust-analyzer
# and, under $PREFIX/typescript7, typescript@7 as a project would have it in its
# node_modules (the TypeScript 7 tests link a fixture's node_modules/typescript to it).
# Idempotent: what is there is kept. Versions are pinned where a newer release could
# change what the tests see (ty and the TypeScript 7 preview are 0.x/dev builds).
set -euo pipefail

PREFIX="${LSPGATE_SERVERS_PREFIX:-/usr/local/lib/lspgate-servers}"
BIN=/usr/local/bin

have() { command -v "$1" >/dev/null 2>&1; }
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
say() { echo "install-servers: $*" >&2; }

apt_pkgs=()
have go || apt_pkgs+=(golang-go)
have gopls || apt_pkgs+=(gopls)
have clangd || apt_pkgs+=(clangd)
have clangd-19 || apt_pkgs+=(clangd-19)
have node || apt_pkgs+=(nodejs npm)
have python3 || apt_pkgs+=(python3 python3-venv)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  say "apt-get install ${apt_pkgs[*]}"
  sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_ apt-get install -y -qq "${apt_pkgs[@]}" >/dev/null
fi

# typescript is pinned to 6 for typescript-language-server: typescript@7 is the
# native compiler and ships no tsserver.js. TypeScript 7 comes as `tsgo`
# (@typescript/native-preview), so that `tsc` on PATH stays TypeScript 6.
npm_pkgs=()
have pyright-langserver || npm_pkgs+=(pyright@1)
have typescript-language-server || npm_pkgs+=(typescript-language-server@5 typescript@6)
have tsgo || npm_pkgs+=(@typescript/native-preview@7.0.0-dev.20260707.2)
have vscode-eslint-language-server || npm_pkgs+=(vscode-langservers-extracted@4.10.0)
have eslint || npm_pkgs+=(eslint@9)
if [ ${#npm_pkgs[@]} -gt 0 ]; then
  say "npm install -g ${npm_pkgs[*]}"
  sudo_ npm install -g --no-audit --no-fund --loglevel=error "${npm_pkgs[@]}" >/dev/null
fi

if [ ! -x "$PREFIX/typescript7/node_modules/typescript/bin/tsc" ]; then
  say "npm install typescript@7.0.2 into $PREFIX/typescript7"
  sudo_ mkdir -p "$PREFIX/typescript7"
  sudo_ npm install --prefix "$PREFIX/typescript7" --no-audit --no-fund --loglevel=error \
    typescript@7.0.2 >/dev/null
fi

py_tools=(basedpyright-langserver ruff ty pyrefly)
missing_py=()
for t in "${py_tools[@]}"; do have "$t" || missing_py+=("$t"); done
if [ ${#missing_py[@]} -gt 0 ]; then
  say "pip install basedpyright ruff ty pyrefly into $PREFIX/venv"
  [ -x "$PREFIX/venv/bin/pip" ] || sudo_ python3 -m venv "$PREFIX/venv"
  sudo_ "$PREFIX/venv/bin/pip" install -q --disable-pip-version-check \
    basedpyright==1.40.2 ruff==0.17.6 ty==0.0.105 pyrefly==1.4.1
  for t in "${py_tools[@]}"; do
    have "$t" || sudo_ ln -sf "$PREFIX/venv/bin/$t" "$BIN/$t"
  done
fi

# rust-analyzer: `~/.cargo/bin/rust-analyzer` is a rustup proxy that fails until the
# component is installed, so test it by running it.
if ! rust-analyzer --version >/dev/null 2>&1; then
  say "rustup component add rust-analyzer"
  rustup component add rust-analyzer >/dev/null
fi

servers=(pyright-langserver basedpyright-langserver ty pyrefly ruff typescript-language-server
  tsgo vscode-eslint-language-server eslint gopls clangd clangd-19 rust-analyzer)
for s in "${servers[@]}"; do
  have "$s" || { say "$s is still missing"; exit 1; }
done
[ -x "$PREFIX/typescript7/node_modules/typescript/bin/tsc" ] || {
  say "typescript@7 is still missing under $PREFIX/typescript7"
  exit 1
}
say "${servers[*]} and typescript@7 ready"
