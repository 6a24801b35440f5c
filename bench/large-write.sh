#!/usr/bin/env bash
# A large write each way (in process, through the daemon, through `lspgate mcp`):
# wall time and the peak memory (VmHWM) of every lspgate process, side by side
# (bench/large_write.py has the details).
#
#   bash bench/large-write.sh [--mb 50] [--runs 3] [--lspgate LABEL=PATH ...]
#
# Without --lspgate, the release build of this tree. Several --lspgate give one row
# per build and way (before and after a change, say).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ " $* " != *" --lspgate "* ]]; then
  cargo build --release --quiet
  set -- --lspgate "this=${CARGO_TARGET_DIR:-target}/release/lspgate" "$@"
fi
exec python3 bench/large_write.py "$@"
