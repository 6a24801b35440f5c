#!/usr/bin/env bash
# Installs the language servers lspgate's tests and example use, on a fresh Debian
# machine: pyright and typescript-language-server from npm, gopls and clangd from
# Debian, rust-analyzer as a rustup component. Idempotent: what is there is kept.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_pkgs=()
have go || apt_pkgs+=(golang-go)
have gopls || apt_pkgs+=(gopls)
have clangd || apt_pkgs+=(clangd)
if [ ${#apt_pkgs[@]} -gt 0 ]; then
  echo "install-servers: apt-get install ${apt_pkgs[*]}" >&2
  sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive sudo_ apt-get install -y -qq "${apt_pkgs[@]}" >/dev/null
fi

# typescript is pinned to 6: typescript@7 is the native compiler and ships no
# tsserver.js, which typescript-language-server needs.
npm_pkgs=()
have pyright-langserver || npm_pkgs+=(pyright@1)
have typescript-language-server || npm_pkgs+=(typescript-language-server@5 typescript@6)
if [ ${#npm_pkgs[@]} -gt 0 ]; then
  echo "install-servers: npm install -g ${npm_pkgs[*]}" >&2
  sudo_ npm install -g --no-audit --no-fund --loglevel=error "${npm_pkgs[@]}" >/dev/null
fi

# rust-analyzer: `~/.cargo/bin/rust-analyzer` is a rustup proxy that fails until the
# component is installed, so test it by running it.
if ! rust-analyzer --version >/dev/null 2>&1; then
  echo "install-servers: rustup component add rust-analyzer" >&2
  rustup component add rust-analyzer >/dev/null
fi

for s in pyright-langserver typescript-language-server gopls clangd rust-analyzer; do
  command -v "$s" >/dev/null 2>&1 || { echo "install-servers: $s is still missing" >&2; exit 1; }
done
echo "install-servers: pyright-langserver typescript-language-server gopls clangd rust-analyzer ready" >&2
