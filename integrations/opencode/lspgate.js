// lspgate as an opencode plugin (.opencode/plugins/lspgate.js, or
// ~/.config/opencode/plugins/): after each tool that can change files, run
// `lspgate check --changed` in the project and, when the change is not clean, append its
// report to the tool's output, which is what the model reads next. `tool.execute.after`
// receives that output object; what the hook leaves in `output.output` is the result.
//
// `lspgate check --changed` finds by itself what changed on disk since it last looked
// (this tool's write, a shell command's, a formatter's) and reports only what that
// change introduced, the callers it broke included. Clean: the output is left as it is.
// Anything else (new errors, a check that could not be completed, lspgate missing):
// the report is appended. Needs `lspgate` on the PATH opencode runs with.
import { execFile } from "node:child_process"

// opencode's tools that write files, and its shell (a command may edit files too).
const WRITERS = new Set(["edit", "write", "multiedit", "patch", "apply_patch", "bash"])

export const LspgatePlugin = async ({ directory }) => ({
  "tool.execute.after": async (input, output) => {
    if (!WRITERS.has(input.tool)) return
    const report = await check(directory)
    if (report) output.output = `${output.output ?? ""}\n\n${report}`
  },
})

/** The report to hand the model, or "" when the change is clean (exit 0). */
function check(cwd) {
  return new Promise((resolve) => {
    execFile(
      "lspgate",
      ["check", "--changed", "--quiet"],
      { cwd, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? error.code : 0
        if (code === 0) return resolve("")
        let text = `${stdout}${stderr}`.trimEnd()
        if (code === 3) {
          text += "\nlspgate: exit 3: not everything was checked (see the note lines); this is not a clean result"
        } else if (code !== 1) {
          // Not started (no lspgate on PATH), killed, or bad input: never passed as clean.
          text += `\nlspgate: ${typeof code === "number" ? `exit ${code}` : error.message}: the change was not checked`
        }
        resolve(text.trimStart())
      },
    )
  })
}
