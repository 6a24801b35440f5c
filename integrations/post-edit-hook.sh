#!/bin/sh
# lspgate as a post-edit hook, for agent harnesses that write files with their own
# tools and run a command after each tool call (Claude Code's PostToolUse; any harness
# whose hook shows the command's stderr to the model when it exits 2).
#
# The harness's JSON on stdin is read and ignored: `lspgate check --changed` finds by
# itself what changed on disk since it last looked (the harness's write, a `sed -i`,
# a formatter), and reports only what that change introduced, the callers it broke
# included. Clean: exit 0, silent. Anything else (new errors, a check that could not
# be completed, bad input): the report on stderr and exit 2, for the model to read.
#
# Runs in the project directory (the harness's working directory for hooks); needs
# `lspgate` on PATH.
cat >/dev/null
out=$(lspgate check --changed --quiet 2>&1)
status=$?
[ "$status" -eq 0 ] && exit 0
printf '%s\n' "$out" >&2
[ "$status" -eq 3 ] && printf '%s\n' "lspgate: exit 3: not everything was checked (see the note lines); this is not a clean result" >&2
exit 2
