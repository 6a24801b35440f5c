#!/usr/bin/env bash
# Sets up the language servers, builds lspgate, and runs it once on the bundled demo
# project (examples/demo): an edit of lib/greeting.py that breaks app/cli.py, a file
# nobody opened. lspgate reports the broken caller and exits 1; this script shows the
# command, its output and its exit status, and succeeds when that status is the
# expected 1.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

bash scripts/install-servers.sh
cargo build --release
lspgate="${CARGO_TARGET_DIR:-$repo/target}/release/lspgate"

# A throwaway copy, so the demo in the repository stays as it is; a git repository,
# because lspgate takes the git top level as the workspace.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lspgate-demo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp -R examples/demo/. "$tmp"
git -C "$tmp" init --quiet

# The workspace is deleted when this script ends: a warm daemon for it would only
# linger, so the servers run inside lspgate for this one run.
export LSPGATE_NO_DAEMON=1

old='def greet(name: str)'
new='def greet(name: str, greeting: str)'
printf "\$ lspgate -C %s edit lib/greeting.py --old '%s' --new '%s'\n" "$tmp" "$old" "$new"
status=0
"$lspgate" -C "$tmp" edit lib/greeting.py --old "$old" --new "$new" || status=$?
echo
echo "exit status: $status"

if [ "$status" -eq 1 ]; then
  echo "as expected: the edit broke app/cli.py, and lspgate said so (exit 1)"
else
  echo "unexpected: lspgate should have reported the broken call in app/cli.py and exited 1" >&2
  exit 1
fi
