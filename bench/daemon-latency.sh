#!/usr/bin/env bash
# Warm daemon latency per server: `lspgate write` through the daemon next to the
# server's own didChange→diagnostics latency, the cold one-shot run, the batch
# checker, cli-lsp-client, and lspgate's own time and memory (bench/daemon_latency.py
# has the details).
#
#   bash bench/daemon-latency.sh [--smoke] [--runs N] [--servers pyright,gopls] [--no-cli-lsp-client]
#
# LSPGATE=/path/to/lspgate skips the release build (CI's smoke run reuses the
# test build).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${LSPGATE:-}" ]; then
  cargo build --release --quiet
  LSPGATE="${CARGO_TARGET_DIR:-target}/release/lspgate"
fi
exec python3 bench/daemon_latency.py --lspgate "$LSPGATE" "$@"
