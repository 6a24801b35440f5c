
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'lspgate' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'lspgate'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'lspgate' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Write PATH (new content from --content, else stdin) and report')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Replace --old by --new in PATH and report')
            [CompletionResult]::new('patch', 'patch', [CompletionResultType]::ParameterValue, 'Apply a unified diff (git or plain, several files) and report')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Report on files without editing them')
            [CompletionResult]::new('baseline', 'baseline', [CompletionResultType]::ParameterValue, 'Store the diagnostics of the tree as it is, for later cold runs: a run whose before tree has a stored baseline has its servers analyse the project once, after the edit (a CI cache keyed on the base commit holds one). For the servers that analyse or check their whole workspace (pyright, basedpyright, gopls, rust-analyzer) and the TypeScript servers and clangd (every file of the project asked about); always without a daemon')
            [CompletionResult]::new('servers', 'servers', [CompletionResultType]::ParameterValue, 'List the known servers, which are installed, and the files they cover')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'List past runs of this workspace, show one, or gate on the last')
            [CompletionResult]::new('daemon', 'daemon', [CompletionResultType]::ParameterValue, 'Start, stop or inspect the warm daemon that keeps this workspace''s servers running')
            [CompletionResult]::new('diagnostics', 'diagnostics', [CompletionResultType]::ParameterValue, 'Print the diagnostics the warm servers hold now, for every file or for PATH')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Print the servers'' recent log messages (window/logMessage; the daemon keeps the last 100 of each server)')
            [CompletionResult]::new('messages', 'messages', [CompletionResultType]::ParameterValue, 'Print the messages the servers showed the user (window/showMessage; the daemon keeps the last 50 of each server)')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'lspgate;write' {
            [CompletionResult]::new('--content', '--content', [CompletionResultType]::ParameterName, 'The new content; read from stdin when absent')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form [default: text]')
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a cold server may take to start and finish its initial analysis [default: 60s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]')
            [CompletionResult]::new('--cross-file-timeout', '--cross-file-timeout', [CompletionResultType]::ParameterName, 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a new diagnostic at or above this severity exists [default: error]')
            [CompletionResult]::new('--severity', '--severity', [CompletionResultType]::ParameterName, 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]')
            [CompletionResult]::new('--max-entries', '--max-entries', [CompletionResultType]::ParameterName, 'Cap per block; the rest is counted in a `... and N more` line [default: 20]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Report every diagnostic of the touched and dependent files, not only new ones')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Never touch the disk: the servers see the new text in memory only')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Apply the edit only if it introduces no diagnostic at --fail-on')
            [CompletionResult]::new('--no-daemon', '--no-daemon', [CompletionResultType]::ParameterName, 'Run the servers inside this process and stop them at exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;edit' {
            [CompletionResult]::new('--old', '--old', [CompletionResultType]::ParameterName, 'The exact text to replace; it must occur once unless --replace-all')
            [CompletionResult]::new('--new', '--new', [CompletionResultType]::ParameterName, 'The replacement text')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form [default: text]')
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a cold server may take to start and finish its initial analysis [default: 60s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]')
            [CompletionResult]::new('--cross-file-timeout', '--cross-file-timeout', [CompletionResultType]::ParameterName, 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a new diagnostic at or above this severity exists [default: error]')
            [CompletionResult]::new('--severity', '--severity', [CompletionResultType]::ParameterName, 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]')
            [CompletionResult]::new('--max-entries', '--max-entries', [CompletionResultType]::ParameterName, 'Cap per block; the rest is counted in a `... and N more` line [default: 20]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--replace-all', '--replace-all', [CompletionResultType]::ParameterName, 'Replace every occurrence of --old')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Report every diagnostic of the touched and dependent files, not only new ones')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Never touch the disk: the servers see the new text in memory only')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Apply the edit only if it introduces no diagnostic at --fail-on')
            [CompletionResult]::new('--no-daemon', '--no-daemon', [CompletionResultType]::ParameterName, 'Run the servers inside this process and stop them at exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;patch' {
            [CompletionResult]::new('-p', '-p', [CompletionResultType]::ParameterName, 'Strip N leading components from the paths in the patch, as `git apply -p`')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form [default: text]')
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a cold server may take to start and finish its initial analysis [default: 60s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]')
            [CompletionResult]::new('--cross-file-timeout', '--cross-file-timeout', [CompletionResultType]::ParameterName, 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a new diagnostic at or above this severity exists [default: error]')
            [CompletionResult]::new('--severity', '--severity', [CompletionResultType]::ParameterName, 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]')
            [CompletionResult]::new('--max-entries', '--max-entries', [CompletionResultType]::ParameterName, 'Cap per block; the rest is counted in a `... and N more` line [default: 20]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('-R', '-R ', [CompletionResultType]::ParameterName, 'Apply the patch in reverse, as `git apply -R`: undo a patch applied before')
            [CompletionResult]::new('--reverse', '--reverse', [CompletionResultType]::ParameterName, 'Apply the patch in reverse, as `git apply -R`: undo a patch applied before')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Report every diagnostic of the touched and dependent files, not only new ones')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Never touch the disk: the servers see the new text in memory only')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Apply the edit only if it introduces no diagnostic at --fail-on')
            [CompletionResult]::new('--no-daemon', '--no-daemon', [CompletionResultType]::ParameterName, 'Run the servers inside this process and stop them at exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;check' {
            [CompletionResult]::new('--patch', '--patch', [CompletionResultType]::ParameterName, 'Check the files an applied diff touches, counting as new only what it introduced')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form [default: text]')
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a cold server may take to start and finish its initial analysis [default: 60s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]')
            [CompletionResult]::new('--cross-file-timeout', '--cross-file-timeout', [CompletionResultType]::ParameterName, 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a new diagnostic at or above this severity exists [default: error]')
            [CompletionResult]::new('--severity', '--severity', [CompletionResultType]::ParameterName, 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]')
            [CompletionResult]::new('--max-entries', '--max-entries', [CompletionResultType]::ParameterName, 'Cap per block; the rest is counted in a `... and N more` line [default: 20]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--staged', '--staged', [CompletionResultType]::ParameterName, 'Check the staged content of the git index (not the working tree), counting as new only what it changes from HEAD')
            [CompletionResult]::new('--changed', '--changed', [CompletionResultType]::ParameterName, 'Check what changed on disk since lspgate last looked (the last `check --changed` or written edit here; the first time, the git index), counting as new only what that change introduced, in the changed files and the files it broke. For harnesses that write files themselves: run it after each write')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Report every diagnostic of the touched and dependent files, not only new ones')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Never touch the disk: the servers see the new text in memory only')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Apply the edit only if it introduces no diagnostic at --fail-on')
            [CompletionResult]::new('--no-daemon', '--no-daemon', [CompletionResultType]::ParameterName, 'Run the servers inside this process and stop them at exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;baseline' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form [default: text]')
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a cold server may take to start and finish its initial analysis [default: 60s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]')
            [CompletionResult]::new('--cross-file-timeout', '--cross-file-timeout', [CompletionResultType]::ParameterName, 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a new diagnostic at or above this severity exists [default: error]')
            [CompletionResult]::new('--severity', '--severity', [CompletionResultType]::ParameterName, 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]')
            [CompletionResult]::new('--max-entries', '--max-entries', [CompletionResultType]::ParameterName, 'Cap per block; the rest is counted in a `... and N more` line [default: 20]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Report every diagnostic of the touched and dependent files, not only new ones')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Never touch the disk: the servers see the new text in memory only')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Apply the edit only if it introduces no diagnostic at --fail-on')
            [CompletionResult]::new('--no-daemon', '--no-daemon', [CompletionResultType]::ParameterName, 'Run the servers inside this process and stop them at exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;servers' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;history' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'How many runs to list, newest first')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'Show the most recent run and the gate; exit 1 while an error a run introduced is not seen fixed (or the last run left one), 4 when the last edit was partly written, 3 when a run was incomplete, 2 when no run is recorded')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;daemon' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('start', 'start', [CompletionResultType]::ParameterValue, 'Start the daemon unless it is running')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Stop the daemon and its servers')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the daemon''s pid, uptime, memory and servers; exit 1 when none is running')
            [CompletionResult]::new('restart', 'restart', [CompletionResultType]::ParameterValue, 'Stop the daemon, then start a new one')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'lspgate;daemon;start' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;daemon;stop' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;daemon;status' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Every daemon of this user, whatever its workspace (JSON: a list)')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;daemon;restart' {
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'lspgate;daemon;help' {
            [CompletionResult]::new('start', 'start', [CompletionResultType]::ParameterValue, 'Start the daemon unless it is running')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Stop the daemon and its servers')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the daemon''s pid, uptime, memory and servers; exit 1 when none is running')
            [CompletionResult]::new('restart', 'restart', [CompletionResultType]::ParameterValue, 'Stop the daemon, then start a new one')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'lspgate;daemon;help;start' {
            break
        }
        'lspgate;daemon;help;stop' {
            break
        }
        'lspgate;daemon;help;status' {
            break
        }
        'lspgate;daemon;help;restart' {
            break
        }
        'lspgate;daemon;help;help' {
            break
        }
        'lspgate;diagnostics' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form: diagnostic lines as in the report, or a JSON list of {uri, diagnostics: [{message, severity, range, source, code}]}')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'lspgate;logs' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Only the last N messages of each server')
            [CompletionResult]::new('--level', '--level', [CompletionResultType]::ParameterName, 'Only messages at this level or more severe')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'lspgate;messages' {
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Only the last N messages of each server')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'lspgate;mcp' {
            [CompletionResult]::new('--startup-timeout', '--startup-timeout', [CompletionResultType]::ParameterName, 'How long a cold server may take to start and finish its initial analysis [default: 60s]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]')
            [CompletionResult]::new('--cross-file-timeout', '--cross-file-timeout', [CompletionResultType]::ParameterName, 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]')
            [CompletionResult]::new('--fail-on', '--fail-on', [CompletionResultType]::ParameterName, 'Exit 1 when a new diagnostic at or above this severity exists [default: error]')
            [CompletionResult]::new('--severity', '--severity', [CompletionResultType]::ParameterName, 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]')
            [CompletionResult]::new('--max-entries', '--max-entries', [CompletionResultType]::ParameterName, 'Cap per block; the rest is counted in a `... and N more` line [default: 20]')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output form [default: text]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]')
            [CompletionResult]::new('-C', '-C ', [CompletionResultType]::ParameterName, 'Run as if lspgate had been started in DIR')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'The workspace: every written path must lie inside it [default: git top level, else DIR]')
            [CompletionResult]::new('--all', '--all', [CompletionResultType]::ParameterName, 'Report every diagnostic of the touched and dependent files, not only new ones')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Never touch the disk: the servers see the new text in memory only')
            [CompletionResult]::new('--reject', '--reject', [CompletionResultType]::ParameterName, 'Apply the edit only if it introduces no diagnostic at --fail-on')
            [CompletionResult]::new('--no-daemon', '--no-daemon', [CompletionResultType]::ParameterName, 'Run the servers inside this process and stop them at exit')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Show no progress line on stderr while waiting')
            [CompletionResult]::new('--trust-project', '--trust-project', [CompletionResultType]::ParameterName, 'Run server commands that the project''s .lspgate.toml introduces or changes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'lspgate;help' {
            [CompletionResult]::new('write', 'write', [CompletionResultType]::ParameterValue, 'Write PATH (new content from --content, else stdin) and report')
            [CompletionResult]::new('edit', 'edit', [CompletionResultType]::ParameterValue, 'Replace --old by --new in PATH and report')
            [CompletionResult]::new('patch', 'patch', [CompletionResultType]::ParameterValue, 'Apply a unified diff (git or plain, several files) and report')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Report on files without editing them')
            [CompletionResult]::new('baseline', 'baseline', [CompletionResultType]::ParameterValue, 'Store the diagnostics of the tree as it is, for later cold runs: a run whose before tree has a stored baseline has its servers analyse the project once, after the edit (a CI cache keyed on the base commit holds one). For the servers that analyse or check their whole workspace (pyright, basedpyright, gopls, rust-analyzer) and the TypeScript servers and clangd (every file of the project asked about); always without a daemon')
            [CompletionResult]::new('servers', 'servers', [CompletionResultType]::ParameterValue, 'List the known servers, which are installed, and the files they cover')
            [CompletionResult]::new('history', 'history', [CompletionResultType]::ParameterValue, 'List past runs of this workspace, show one, or gate on the last')
            [CompletionResult]::new('daemon', 'daemon', [CompletionResultType]::ParameterValue, 'Start, stop or inspect the warm daemon that keeps this workspace''s servers running')
            [CompletionResult]::new('diagnostics', 'diagnostics', [CompletionResultType]::ParameterValue, 'Print the diagnostics the warm servers hold now, for every file or for PATH')
            [CompletionResult]::new('logs', 'logs', [CompletionResultType]::ParameterValue, 'Print the servers'' recent log messages (window/logMessage; the daemon keeps the last 100 of each server)')
            [CompletionResult]::new('messages', 'messages', [CompletionResultType]::ParameterValue, 'Print the messages the servers showed the user (window/showMessage; the daemon keeps the last 50 of each server)')
            [CompletionResult]::new('mcp', 'mcp', [CompletionResultType]::ParameterValue, 'Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'lspgate;help;write' {
            break
        }
        'lspgate;help;edit' {
            break
        }
        'lspgate;help;patch' {
            break
        }
        'lspgate;help;check' {
            break
        }
        'lspgate;help;baseline' {
            break
        }
        'lspgate;help;servers' {
            break
        }
        'lspgate;help;history' {
            break
        }
        'lspgate;help;daemon' {
            [CompletionResult]::new('start', 'start', [CompletionResultType]::ParameterValue, 'Start the daemon unless it is running')
            [CompletionResult]::new('stop', 'stop', [CompletionResultType]::ParameterValue, 'Stop the daemon and its servers')
            [CompletionResult]::new('status', 'status', [CompletionResultType]::ParameterValue, 'Show the daemon''s pid, uptime, memory and servers; exit 1 when none is running')
            [CompletionResult]::new('restart', 'restart', [CompletionResultType]::ParameterValue, 'Stop the daemon, then start a new one')
            break
        }
        'lspgate;help;daemon;start' {
            break
        }
        'lspgate;help;daemon;stop' {
            break
        }
        'lspgate;help;daemon;status' {
            break
        }
        'lspgate;help;daemon;restart' {
            break
        }
        'lspgate;help;diagnostics' {
            break
        }
        'lspgate;help;logs' {
            break
        }
        'lspgate;help;messages' {
            break
        }
        'lspgate;help;mcp' {
            break
        }
        'lspgate;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
