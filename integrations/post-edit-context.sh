#!/bin/sh
# lspgate as a post-edit hook, for agent harnesses that read the hook's JSON answer on
# stdout and add its `hookSpecificOutput.additionalContext` to what the model sees after
# the tool's own result: Codex CLI (`PostToolUse`) and Gemini CLI (`AfterTool`). There,
# exit 2 would replace the tool's result or mark the tool as failed, though the edit
# has already happened; this leaves the result as it is and adds lspgate's report.
#
# Usage: post-edit-context.sh EVENT   (EVENT: the harness's event name, echoed back in
# `hookEventName`: PostToolUse for Codex CLI, AfterTool for Gemini CLI)
#
# The harness's JSON on stdin is read and ignored: `lspgate check --changed` finds by
# itself what changed on disk since it last looked, and reports only what that change
# introduced, the callers it broke included. Clean: exit 0, nothing on stdout. Anything
# else (new errors, a check that could not be completed, lspgate missing): exit 0 and
# the report as additional context, so that the model reads it.
#
# Runs in the project directory (the harness's working directory for hooks); needs
# `lspgate` on PATH, and `awk` (to write the report as a JSON string).
cat >/dev/null
event=${1:-PostToolUse}
out=$(lspgate check --changed --quiet 2>&1)
status=$?
[ "$status" -eq 0 ] && exit 0
if [ "$status" -eq 3 ]; then
	out="$out
lspgate: exit 3: not everything was checked (see the note lines); this is not a clean result"
elif [ "$status" -ne 1 ]; then
	out="$out
lspgate: exit $status: the change was not checked"
fi
# One JSON string, character by character: no awk's gsub escaping rules to depend on.
printf '%s\n' "$out" | awk -v event="$event" '
BEGIN {
	for (i = 1; i < 32; i++) esc[sprintf("%c", i)] = sprintf("\\u%04x", i)
	esc["\t"] = "\\t"; esc["\r"] = "\\r"; esc["\\"] = "\\\\"; esc["\""] = "\\\""
	text = ""
}
{
	line = ""
	n = length($0)
	for (i = 1; i <= n; i++) {
		c = substr($0, i, 1)
		line = line ((c in esc) ? esc[c] : c)
	}
	text = (NR == 1) ? line : text "\\n" line
}
END {
	printf "{\"hookSpecificOutput\":{\"hookEventName\":\"%s\",\"additionalContext\":\"%s\"}}\n", event, text
}'
