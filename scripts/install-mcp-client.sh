#!/usr/bin/env bash
# Installs the MCP client the tests drive `lspgate mcp` with: the official MCP Python
# SDK (`mcp` from PyPI, pinned), in a virtual environment under the target directory
# (${CARGO_TARGET_DIR:-target}/mcp-venv), where tests/support/mod.rs looks for it.
# Needs python3 with venv and pip. Idempotent: a venv that holds this version is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

version=2.3.0   # keep equal to MCP_SDK in tests/support/mod.rs
venv="${CARGO_TARGET_DIR:-target}/mcp-venv"

installed() {
  "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '$version')" 2>/dev/null
}

if ! installed; then
  echo "install-mcp-client: mcp==$version into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$version"
fi
installed || { echo "install-mcp-client: mcp $version is still missing from $venv" >&2; exit 1; }
echo "install-mcp-client: mcp $version ready in $venv" >&2
