#!/usr/bin/env bash
# The daemon's own memory (its servers apart) on a 10,000- and a 100,000-file tree and
# the largest fetched corpus project, with the directories it watches, the `check
# --changed` baseline on disk, and the wall time of `check --changed` with nothing
# changed and with a change (bench/daemon_memory.py has the details).
#
#   bash bench/daemon-memory.sh [--smoke] [--trees 10000,100000] [--corpus django|none] [--runs 10] [--changes 3]
#
# LSPGATE=/path/to/lspgate skips the release build (CI's smoke run reuses the
# test build).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${LSPGATE:-}" ]; then
  cargo build --release --quiet
  LSPGATE="${CARGO_TARGET_DIR:-target}/release/lspgate"
fi
exec python3 bench/daemon_memory.py --lspgate "$LSPGATE" "$@"
