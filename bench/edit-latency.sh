#!/usr/bin/env bash
# Edit latency per server: cold `lspgate edit --no-daemon` next to the server's own
# didChange→diagnostics latency (bench/edit_latency.py has the details).
#
#   bash bench/edit-latency.sh [--smoke] [--runs N] [--servers pyright,gopls] [--no-real-project]
#
# LSPGATE=/path/to/lspgate skips the release build (CI's smoke run reuses the
# test build).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${LSPGATE:-}" ]; then
  cargo build --release --quiet
  LSPGATE="${CARGO_TARGET_DIR:-target}/release/lspgate"
fi
exec python3 bench/edit_latency.py --lspgate "$LSPGATE" "$@"
