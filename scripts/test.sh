#!/usr/bin/env bash
# Everything CI runs, in order: install the language servers, check formatting and
# lints, run the whole test suite (fake-server and real-server tests), then the
# edit-latency bench in smoke mode (it checks the table is produced, not the numbers).
# With CI=true (as .ci/run sets it) a missing language server fails its tests
# instead of being noted and passed over.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-servers.sh
# A minimal rustup profile has neither; install them rather than fail on a fresh machine.
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy

echo "test.sh: cargo fmt --check" >&2
cargo fmt --check
echo "test.sh: cargo clippy --all-targets -- -D warnings" >&2
cargo clippy --all-targets -- -D warnings
echo "test.sh: cargo test --all-targets" >&2
cargo test --all-targets

echo "test.sh: bench/edit-latency.sh --smoke" >&2
# Reuses the debug binary the tests just built instead of a second, release build.
cargo build --quiet
LSPGATE="${CARGO_TARGET_DIR:-target}/debug/lspgate" bash bench/edit-latency.sh --smoke
