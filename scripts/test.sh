#!/usr/bin/env bash
# Everything CI runs, in order: install the language servers and the MCP client the
# `lspgate mcp` tests drive (the official Python SDK, in a venv), check formatting,
# the module structure (scripts/check-structure.py: no cycle, no over-long function)
# and lints, run the whole test suite (fake-server and real-server tests), then the
# edit-latency, daemon-latency, daemon-memory, TypeScript 7 and real-project corpus
# benches in smoke mode (they check the tables are produced, not the numbers).
# With CI=true (as .ci/run sets it) a missing language server (or MCP client) fails
# its tests instead of being noted and passed over.
#
# Every step runs even when an earlier one failed, so one run shows every problem;
# the script fails at the end if any step did.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-servers.sh
bash scripts/install-mcp-client.sh
# A minimal rustup profile has neither; install them rather than fail on a fresh machine.
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy

failed=()
step() {
  echo "test.sh: $*" >&2
  "$@" || failed+=("$*")
}

bench_smoke() {
  # Reuses the debug binary the tests just built instead of a second, release build.
  cargo build --quiet || return 1
  local lspgate="${CARGO_TARGET_DIR:-target}/debug/lspgate" status=0
  LSPGATE="$lspgate" bash bench/edit-latency.sh --smoke || status=1
  LSPGATE="$lspgate" bash bench/daemon-latency.sh --smoke || status=1
  LSPGATE="$lspgate" bash bench/corpus.sh --smoke || status=1
  LSPGATE="$lspgate" bash bench/typescript7.sh --smoke || status=1
  LSPGATE="$lspgate" bash bench/daemon-memory.sh --smoke || status=1
  return $status
}

step cargo fmt --check
step python3 scripts/check-structure.py
step cargo clippy --all-targets -- -D warnings
step cargo test --all-targets --no-fail-fast
step bench_smoke

if [ ${#failed[@]} -gt 0 ]; then
  printf 'test.sh: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "test.sh: all passed" >&2
