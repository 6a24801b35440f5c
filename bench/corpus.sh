#!/usr/bin/env bash
# The real-project corpus: lspgate on pinned real projects (PyPI, npm, Debian's Go
# sources, crates.io), each case's edit scored against the project's own batch checker
# (bench/corpus/score.py has the details, bench/corpus/README.md the results).
#
#   bash bench/corpus.sh [--smoke] [--projects rich,go-cmp] [--cases NAME,...]
#                        [--runs N] [--modes cold,warm] [--no-recheck] [--out FILE]
#
# LSPGATE=/path/to/lspgate skips the release build (CI's smoke run reuses the test
# build). The projects are fetched into ${LSPGATE_CORPUS_DIR:-~/.cache/lspgate-corpus}.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${LSPGATE:-}" ]; then
  cargo build --release --quiet
  LSPGATE="${CARGO_TARGET_DIR:-target}/release/lspgate"
fi
exec python3 bench/corpus/score.py --lspgate "$LSPGATE" "$@"
