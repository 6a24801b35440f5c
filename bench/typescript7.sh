#!/usr/bin/env bash
# TypeScript 7's own server next to typescript-language-server on the same project,
# cold and through a warm daemon (bench/typescript7.py has the details).
#
#   bash bench/typescript7.sh [--smoke] [--runs N] [--filler N]
#
# LSPGATE=/path/to/lspgate skips the release build.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${LSPGATE:-}" ]; then
  cargo build --release --quiet
  LSPGATE="${CARGO_TARGET_DIR:-target}/release/lspgate"
fi
exec python3 bench/typescript7.py --lspgate "$LSPGATE" "$@"
