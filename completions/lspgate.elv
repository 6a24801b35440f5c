
use builtin;
use str;

set edit:completion:arg-completer[lspgate] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'lspgate'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'lspgate'= {
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand write 'Write PATH (new content from --content, else stdin) and report'
            cand edit 'Replace --old by --new in PATH and report'
            cand patch 'Apply a unified diff (git or plain, several files) and report'
            cand check 'Report on files without editing them'
            cand baseline 'Store the diagnostics of the tree as it is, for later cold runs: a run whose before tree has a stored baseline has its servers analyse the project once, after the edit (a CI cache keyed on the base commit holds one). For the servers that analyse or check their whole workspace (pyright, basedpyright, gopls, rust-analyzer) and the TypeScript servers and clangd (every file of the project asked about); always without a daemon'
            cand servers 'List the known servers, which are installed, and the files they cover'
            cand history 'List past runs of this workspace, show one, or gate on the last'
            cand daemon 'Start, stop or inspect the warm daemon that keeps this workspace''s servers running'
            cand diagnostics 'Print the diagnostics the warm servers hold now, for every file or for PATH'
            cand logs 'Print the servers'' recent log messages (window/logMessage; the daemon keeps the last 100 of each server)'
            cand messages 'Print the messages the servers showed the user (window/showMessage; the daemon keeps the last 50 of each server)'
            cand mcp 'Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'lspgate;write'= {
            cand --content 'The new content; read from stdin when absent'
            cand --format 'Output form [default: text]'
            cand --startup-timeout 'How long a cold server may take to start and finish its initial analysis [default: 60s]'
            cand --timeout 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]'
            cand --cross-file-timeout 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]'
            cand --fail-on 'Exit 1 when a new diagnostic at or above this severity exists [default: error]'
            cand --severity 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]'
            cand --max-entries 'Cap per block; the rest is counted in a `... and N more` line [default: 20]'
            cand --color 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --all 'Report every diagnostic of the touched and dependent files, not only new ones'
            cand --dry-run 'Never touch the disk: the servers see the new text in memory only'
            cand --reject 'Apply the edit only if it introduces no diagnostic at --fail-on'
            cand --no-daemon 'Run the servers inside this process and stop them at exit'
            cand -q 'Show no progress line on stderr while waiting'
            cand --quiet 'Show no progress line on stderr while waiting'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;edit'= {
            cand --old 'The exact text to replace; it must occur once unless --replace-all'
            cand --new 'The replacement text'
            cand --format 'Output form [default: text]'
            cand --startup-timeout 'How long a cold server may take to start and finish its initial analysis [default: 60s]'
            cand --timeout 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]'
            cand --cross-file-timeout 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]'
            cand --fail-on 'Exit 1 when a new diagnostic at or above this severity exists [default: error]'
            cand --severity 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]'
            cand --max-entries 'Cap per block; the rest is counted in a `... and N more` line [default: 20]'
            cand --color 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --replace-all 'Replace every occurrence of --old'
            cand --all 'Report every diagnostic of the touched and dependent files, not only new ones'
            cand --dry-run 'Never touch the disk: the servers see the new text in memory only'
            cand --reject 'Apply the edit only if it introduces no diagnostic at --fail-on'
            cand --no-daemon 'Run the servers inside this process and stop them at exit'
            cand -q 'Show no progress line on stderr while waiting'
            cand --quiet 'Show no progress line on stderr while waiting'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;patch'= {
            cand -p 'Strip N leading components from the paths in the patch, as `git apply -p`'
            cand --format 'Output form [default: text]'
            cand --startup-timeout 'How long a cold server may take to start and finish its initial analysis [default: 60s]'
            cand --timeout 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]'
            cand --cross-file-timeout 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]'
            cand --fail-on 'Exit 1 when a new diagnostic at or above this severity exists [default: error]'
            cand --severity 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]'
            cand --max-entries 'Cap per block; the rest is counted in a `... and N more` line [default: 20]'
            cand --color 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand -R 'Apply the patch in reverse, as `git apply -R`: undo a patch applied before'
            cand --reverse 'Apply the patch in reverse, as `git apply -R`: undo a patch applied before'
            cand --all 'Report every diagnostic of the touched and dependent files, not only new ones'
            cand --dry-run 'Never touch the disk: the servers see the new text in memory only'
            cand --reject 'Apply the edit only if it introduces no diagnostic at --fail-on'
            cand --no-daemon 'Run the servers inside this process and stop them at exit'
            cand -q 'Show no progress line on stderr while waiting'
            cand --quiet 'Show no progress line on stderr while waiting'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;check'= {
            cand --patch 'Check the files an applied diff touches, counting as new only what it introduced'
            cand --format 'Output form [default: text]'
            cand --startup-timeout 'How long a cold server may take to start and finish its initial analysis [default: 60s]'
            cand --timeout 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]'
            cand --cross-file-timeout 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]'
            cand --fail-on 'Exit 1 when a new diagnostic at or above this severity exists [default: error]'
            cand --severity 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]'
            cand --max-entries 'Cap per block; the rest is counted in a `... and N more` line [default: 20]'
            cand --color 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --staged 'Check the staged content of the git index (not the working tree), counting as new only what it changes from HEAD'
            cand --changed 'Check what changed on disk since lspgate last looked (the last `check --changed` or written edit here; the first time, the git index), counting as new only what that change introduced, in the changed files and the files it broke. For harnesses that write files themselves: run it after each write'
            cand --all 'Report every diagnostic of the touched and dependent files, not only new ones'
            cand --dry-run 'Never touch the disk: the servers see the new text in memory only'
            cand --reject 'Apply the edit only if it introduces no diagnostic at --fail-on'
            cand --no-daemon 'Run the servers inside this process and stop them at exit'
            cand -q 'Show no progress line on stderr while waiting'
            cand --quiet 'Show no progress line on stderr while waiting'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;baseline'= {
            cand --format 'Output form [default: text]'
            cand --startup-timeout 'How long a cold server may take to start and finish its initial analysis [default: 60s]'
            cand --timeout 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]'
            cand --cross-file-timeout 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]'
            cand --fail-on 'Exit 1 when a new diagnostic at or above this severity exists [default: error]'
            cand --severity 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]'
            cand --max-entries 'Cap per block; the rest is counted in a `... and N more` line [default: 20]'
            cand --color 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --all 'Report every diagnostic of the touched and dependent files, not only new ones'
            cand --dry-run 'Never touch the disk: the servers see the new text in memory only'
            cand --reject 'Apply the edit only if it introduces no diagnostic at --fail-on'
            cand --no-daemon 'Run the servers inside this process and stop them at exit'
            cand -q 'Show no progress line on stderr while waiting'
            cand --quiet 'Show no progress line on stderr while waiting'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;servers'= {
            cand --format 'Output form'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;history'= {
            cand --limit 'How many runs to list, newest first'
            cand --format 'Output form'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --last 'Show the most recent run and the gate; exit 1 while an error a run introduced is not seen fixed (or the last run left one), 4 when the last edit was partly written, 3 when a run was incomplete, 2 when no run is recorded'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;daemon'= {
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand start 'Start the daemon unless it is running'
            cand stop 'Stop the daemon and its servers'
            cand status 'Show the daemon''s pid, uptime, memory and servers; exit 1 when none is running'
            cand restart 'Stop the daemon, then start a new one'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'lspgate;daemon;start'= {
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;daemon;stop'= {
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;daemon;status'= {
            cand --format 'Output form'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --all 'Every daemon of this user, whatever its workspace (JSON: a list)'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;daemon;restart'= {
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'lspgate;daemon;help'= {
            cand start 'Start the daemon unless it is running'
            cand stop 'Stop the daemon and its servers'
            cand status 'Show the daemon''s pid, uptime, memory and servers; exit 1 when none is running'
            cand restart 'Stop the daemon, then start a new one'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'lspgate;daemon;help;start'= {
        }
        &'lspgate;daemon;help;stop'= {
        }
        &'lspgate;daemon;help;status'= {
        }
        &'lspgate;daemon;help;restart'= {
        }
        &'lspgate;daemon;help;help'= {
        }
        &'lspgate;diagnostics'= {
            cand --format 'Output form: diagnostic lines as in the report, or a JSON list of {uri, diagnostics: [{message, severity, range, source, code}]}'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'lspgate;logs'= {
            cand --limit 'Only the last N messages of each server'
            cand --level 'Only messages at this level or more severe'
            cand --format 'Output form'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'lspgate;messages'= {
            cand --limit 'Only the last N messages of each server'
            cand --format 'Output form'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'lspgate;mcp'= {
            cand --startup-timeout 'How long a cold server may take to start and finish its initial analysis [default: 60s]'
            cand --timeout 'Primary wait, for the edited files'' fresh diagnostics [default: 5s]'
            cand --cross-file-timeout 'Cross-file wait, after the primary wait, for other files'' diagnostics; it ends when the servers say they are done [default: 60s]'
            cand --fail-on 'Exit 1 when a new diagnostic at or above this severity exists [default: error]'
            cand --severity 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]'
            cand --max-entries 'Cap per block; the rest is counted in a `... and N more` line [default: 20]'
            cand --format 'Output form [default: text]'
            cand --color 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]'
            cand -C 'Run as if lspgate had been started in DIR'
            cand --root 'The workspace: every written path must lie inside it [default: git top level, else DIR]'
            cand --all 'Report every diagnostic of the touched and dependent files, not only new ones'
            cand --dry-run 'Never touch the disk: the servers see the new text in memory only'
            cand --reject 'Apply the edit only if it introduces no diagnostic at --fail-on'
            cand --no-daemon 'Run the servers inside this process and stop them at exit'
            cand -q 'Show no progress line on stderr while waiting'
            cand --quiet 'Show no progress line on stderr while waiting'
            cand --trust-project 'Run server commands that the project''s .lspgate.toml introduces or changes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'lspgate;help'= {
            cand write 'Write PATH (new content from --content, else stdin) and report'
            cand edit 'Replace --old by --new in PATH and report'
            cand patch 'Apply a unified diff (git or plain, several files) and report'
            cand check 'Report on files without editing them'
            cand baseline 'Store the diagnostics of the tree as it is, for later cold runs: a run whose before tree has a stored baseline has its servers analyse the project once, after the edit (a CI cache keyed on the base commit holds one). For the servers that analyse or check their whole workspace (pyright, basedpyright, gopls, rust-analyzer) and the TypeScript servers and clangd (every file of the project asked about); always without a daemon'
            cand servers 'List the known servers, which are installed, and the files they cover'
            cand history 'List past runs of this workspace, show one, or gate on the last'
            cand daemon 'Start, stop or inspect the warm daemon that keeps this workspace''s servers running'
            cand diagnostics 'Print the diagnostics the warm servers hold now, for every file or for PATH'
            cand logs 'Print the servers'' recent log messages (window/logMessage; the daemon keeps the last 100 of each server)'
            cand messages 'Print the messages the servers showed the user (window/showMessage; the daemon keeps the last 50 of each server)'
            cand mcp 'Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'lspgate;help;write'= {
        }
        &'lspgate;help;edit'= {
        }
        &'lspgate;help;patch'= {
        }
        &'lspgate;help;check'= {
        }
        &'lspgate;help;baseline'= {
        }
        &'lspgate;help;servers'= {
        }
        &'lspgate;help;history'= {
        }
        &'lspgate;help;daemon'= {
            cand start 'Start the daemon unless it is running'
            cand stop 'Stop the daemon and its servers'
            cand status 'Show the daemon''s pid, uptime, memory and servers; exit 1 when none is running'
            cand restart 'Stop the daemon, then start a new one'
        }
        &'lspgate;help;daemon;start'= {
        }
        &'lspgate;help;daemon;stop'= {
        }
        &'lspgate;help;daemon;status'= {
        }
        &'lspgate;help;daemon;restart'= {
        }
        &'lspgate;help;diagnostics'= {
        }
        &'lspgate;help;logs'= {
        }
        &'lspgate;help;messages'= {
        }
        &'lspgate;help;mcp'= {
        }
        &'lspgate;help;help'= {
        }
    ]
    $completions[$command]
}
