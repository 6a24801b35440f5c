# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_lspgate_global_optspecs
    string join \n C= root= trust-project h/help V/version
end

function __fish_lspgate_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_lspgate_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_lspgate_using_subcommand
    set -l cmd (__fish_lspgate_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c lspgate -n "__fish_lspgate_needs_command" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_needs_command" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_needs_command" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lspgate -n "__fish_lspgate_needs_command" -s V -l version -d 'Print version'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "write" -d 'Write PATH (new content from --content, else stdin) and report'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "edit" -d 'Replace --old by --new in PATH and report'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "patch" -d 'Apply a unified diff (git or plain, several files) and report'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "check" -d 'Report on files without editing them'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "baseline" -d 'Store the diagnostics of the tree as it is, for later cold runs: a run whose before tree has a stored baseline has its servers analyse the project once, after the edit (a CI cache keyed on the base commit holds one). For the servers that analyse or check their whole workspace (pyright, basedpyright, gopls, rust-analyzer) and the TypeScript servers and clangd (every file of the project asked about); always without a daemon'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "servers" -d 'List the known servers, which are installed, and the files they cover'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "history" -d 'List past runs of this workspace, show one, or gate on the last'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "daemon" -d 'Start, stop or inspect the warm daemon that keeps this workspace\'s servers running'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "diagnostics" -d 'Print the diagnostics the warm servers hold now, for every file or for PATH'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "logs" -d 'Print the servers\' recent log messages (window/logMessage; the daemon keeps the last 100 of each server)'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "messages" -d 'Print the messages the servers showed the user (window/showMessage; the daemon keeps the last 50 of each server)'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "mcp" -d 'Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio'
complete -c lspgate -n "__fish_lspgate_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l content -d 'The new content; read from stdin when absent' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l format -d 'Output form [default: text]' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l startup-timeout -d 'How long a cold server may take to start and finish its initial analysis [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l timeout -d 'Primary wait, for the edited files\' fresh diagnostics [default: 5s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l cross-file-timeout -d 'Cross-file wait, after the primary wait, for other files\' diagnostics; it ends when the servers say they are done [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l fail-on -d 'Exit 1 when a new diagnostic at or above this severity exists [default: error]' -r -f -a "error\t''
warning\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l severity -d 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]' -r -f -a "error\t''
warning\t''
info\t''
hint\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l max-entries -d 'Cap per block; the rest is counted in a `... and N more` line [default: 20]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l color -d 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]' -r -f -a "auto\t''
always\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l all -d 'Report every diagnostic of the touched and dependent files, not only new ones'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l dry-run -d 'Never touch the disk: the servers see the new text in memory only'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l reject -d 'Apply the edit only if it introduces no diagnostic at --fail-on'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l no-daemon -d 'Run the servers inside this process and stop them at exit'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -s q -l quiet -d 'Show no progress line on stderr while waiting'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand write" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l old -d 'The exact text to replace; it must occur once unless --replace-all' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l new -d 'The replacement text' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l format -d 'Output form [default: text]' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l startup-timeout -d 'How long a cold server may take to start and finish its initial analysis [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l timeout -d 'Primary wait, for the edited files\' fresh diagnostics [default: 5s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l cross-file-timeout -d 'Cross-file wait, after the primary wait, for other files\' diagnostics; it ends when the servers say they are done [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l fail-on -d 'Exit 1 when a new diagnostic at or above this severity exists [default: error]' -r -f -a "error\t''
warning\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l severity -d 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]' -r -f -a "error\t''
warning\t''
info\t''
hint\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l max-entries -d 'Cap per block; the rest is counted in a `... and N more` line [default: 20]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l color -d 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]' -r -f -a "auto\t''
always\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l replace-all -d 'Replace every occurrence of --old'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l all -d 'Report every diagnostic of the touched and dependent files, not only new ones'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l dry-run -d 'Never touch the disk: the servers see the new text in memory only'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l reject -d 'Apply the edit only if it introduces no diagnostic at --fail-on'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l no-daemon -d 'Run the servers inside this process and stop them at exit'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -s q -l quiet -d 'Show no progress line on stderr while waiting'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand edit" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -s p -d 'Strip N leading components from the paths in the patch, as `git apply -p`' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l format -d 'Output form [default: text]' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l startup-timeout -d 'How long a cold server may take to start and finish its initial analysis [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l timeout -d 'Primary wait, for the edited files\' fresh diagnostics [default: 5s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l cross-file-timeout -d 'Cross-file wait, after the primary wait, for other files\' diagnostics; it ends when the servers say they are done [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l fail-on -d 'Exit 1 when a new diagnostic at or above this severity exists [default: error]' -r -f -a "error\t''
warning\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l severity -d 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]' -r -f -a "error\t''
warning\t''
info\t''
hint\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l max-entries -d 'Cap per block; the rest is counted in a `... and N more` line [default: 20]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l color -d 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]' -r -f -a "auto\t''
always\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -s R -l reverse -d 'Apply the patch in reverse, as `git apply -R`: undo a patch applied before'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l all -d 'Report every diagnostic of the touched and dependent files, not only new ones'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l dry-run -d 'Never touch the disk: the servers see the new text in memory only'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l reject -d 'Apply the edit only if it introduces no diagnostic at --fail-on'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l no-daemon -d 'Run the servers inside this process and stop them at exit'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -s q -l quiet -d 'Show no progress line on stderr while waiting'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand patch" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l patch -d 'Check the files an applied diff touches, counting as new only what it introduced' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l format -d 'Output form [default: text]' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l startup-timeout -d 'How long a cold server may take to start and finish its initial analysis [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l timeout -d 'Primary wait, for the edited files\' fresh diagnostics [default: 5s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l cross-file-timeout -d 'Cross-file wait, after the primary wait, for other files\' diagnostics; it ends when the servers say they are done [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l fail-on -d 'Exit 1 when a new diagnostic at or above this severity exists [default: error]' -r -f -a "error\t''
warning\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l severity -d 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]' -r -f -a "error\t''
warning\t''
info\t''
hint\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l max-entries -d 'Cap per block; the rest is counted in a `... and N more` line [default: 20]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l color -d 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]' -r -f -a "auto\t''
always\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l staged -d 'Check the staged content of the git index (not the working tree), counting as new only what it changes from HEAD'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l changed -d 'Check what changed on disk since lspgate last looked (the last `check --changed` or written edit here; the first time, the git index), counting as new only what that change introduced, in the changed files and the files it broke. For harnesses that write files themselves: run it after each write'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l all -d 'Report every diagnostic of the touched and dependent files, not only new ones'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l dry-run -d 'Never touch the disk: the servers see the new text in memory only'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l reject -d 'Apply the edit only if it introduces no diagnostic at --fail-on'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l no-daemon -d 'Run the servers inside this process and stop them at exit'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -s q -l quiet -d 'Show no progress line on stderr while waiting'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand check" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l format -d 'Output form [default: text]' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l startup-timeout -d 'How long a cold server may take to start and finish its initial analysis [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l timeout -d 'Primary wait, for the edited files\' fresh diagnostics [default: 5s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l cross-file-timeout -d 'Cross-file wait, after the primary wait, for other files\' diagnostics; it ends when the servers say they are done [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l fail-on -d 'Exit 1 when a new diagnostic at or above this severity exists [default: error]' -r -f -a "error\t''
warning\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l severity -d 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]' -r -f -a "error\t''
warning\t''
info\t''
hint\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l max-entries -d 'Cap per block; the rest is counted in a `... and N more` line [default: 20]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l color -d 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]' -r -f -a "auto\t''
always\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l all -d 'Report every diagnostic of the touched and dependent files, not only new ones'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l dry-run -d 'Never touch the disk: the servers see the new text in memory only'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l reject -d 'Apply the edit only if it introduces no diagnostic at --fail-on'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l no-daemon -d 'Run the servers inside this process and stop them at exit'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -s q -l quiet -d 'Show no progress line on stderr while waiting'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand baseline" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand servers" -l format -d 'Output form' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand servers" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand servers" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand servers" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand servers" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -l limit -d 'How many runs to list, newest first' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -l format -d 'Output form' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -l last -d 'Show the most recent run and the gate; exit 1 while an error a run introduced is not seen fixed (or the last run left one), 4 when the last edit was partly written, 3 when a run was incomplete, 2 when no run is recorded'
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand history" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -f -a "start" -d 'Start the daemon unless it is running'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -f -a "stop" -d 'Stop the daemon and its servers'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -f -a "status" -d 'Show the daemon\'s pid, uptime, memory and servers; exit 1 when none is running'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -f -a "restart" -d 'Stop the daemon, then start a new one'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and not __fish_seen_subcommand_from start stop status restart help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from start" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from start" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from start" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from start" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from stop" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from stop" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from stop" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from stop" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from status" -l format -d 'Output form' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from status" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from status" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from status" -l all -d 'Every daemon of this user, whatever its workspace (JSON: a list)'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from status" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from restart" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from restart" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from restart" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from restart" -s h -l help -d 'Print help'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "start" -d 'Start the daemon unless it is running'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "stop" -d 'Stop the daemon and its servers'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show the daemon\'s pid, uptime, memory and servers; exit 1 when none is running'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "restart" -d 'Stop the daemon, then start a new one'
complete -c lspgate -n "__fish_lspgate_using_subcommand daemon; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lspgate -n "__fish_lspgate_using_subcommand diagnostics" -l format -d 'Output form: diagnostic lines as in the report, or a JSON list of {uri, diagnostics: [{message, severity, range, source, code}]}' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand diagnostics" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand diagnostics" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand diagnostics" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand diagnostics" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -l limit -d 'Only the last N messages of each server' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -l level -d 'Only messages at this level or more severe' -r -f -a "error\t''
warning\t''
info\t''
log\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -l format -d 'Output form' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand logs" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lspgate -n "__fish_lspgate_using_subcommand messages" -l limit -d 'Only the last N messages of each server' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand messages" -l format -d 'Output form' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand messages" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand messages" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand messages" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand messages" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l startup-timeout -d 'How long a cold server may take to start and finish its initial analysis [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l timeout -d 'Primary wait, for the edited files\' fresh diagnostics [default: 5s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l cross-file-timeout -d 'Cross-file wait, after the primary wait, for other files\' diagnostics; it ends when the servers say they are done [default: 60s]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l fail-on -d 'Exit 1 when a new diagnostic at or above this severity exists [default: error]' -r -f -a "error\t''
warning\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l severity -d 'List diagnostics at or above this severity, and always those at --fail-on (`warning` hides infos and hints) [default: hint]' -r -f -a "error\t''
warning\t''
info\t''
hint\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l max-entries -d 'Cap per block; the rest is counted in a `... and N more` line [default: 20]' -r
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l format -d 'Output form [default: text]' -r -f -a "text\t''
json\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l color -d 'Colour: auto (only on a terminal, honouring NO_COLOR), always or never [default: auto]' -r -f -a "auto\t''
always\t''
never\t''"
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -s C -d 'Run as if lspgate had been started in DIR' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l root -d 'The workspace: every written path must lie inside it [default: git top level, else DIR]' -r -F
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l all -d 'Report every diagnostic of the touched and dependent files, not only new ones'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l dry-run -d 'Never touch the disk: the servers see the new text in memory only'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l reject -d 'Apply the edit only if it introduces no diagnostic at --fail-on'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l no-daemon -d 'Run the servers inside this process and stop them at exit'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -s q -l quiet -d 'Show no progress line on stderr while waiting'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -l trust-project -d 'Run server commands that the project\'s .lspgate.toml introduces or changes'
complete -c lspgate -n "__fish_lspgate_using_subcommand mcp" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "write" -d 'Write PATH (new content from --content, else stdin) and report'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "edit" -d 'Replace --old by --new in PATH and report'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "patch" -d 'Apply a unified diff (git or plain, several files) and report'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "check" -d 'Report on files without editing them'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "baseline" -d 'Store the diagnostics of the tree as it is, for later cold runs: a run whose before tree has a stored baseline has its servers analyse the project once, after the edit (a CI cache keyed on the base commit holds one). For the servers that analyse or check their whole workspace (pyright, basedpyright, gopls, rust-analyzer) and the TypeScript servers and clangd (every file of the project asked about); always without a daemon'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "servers" -d 'List the known servers, which are installed, and the files they cover'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "history" -d 'List past runs of this workspace, show one, or gate on the last'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "daemon" -d 'Start, stop or inspect the warm daemon that keeps this workspace\'s servers running'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "diagnostics" -d 'Print the diagnostics the warm servers hold now, for every file or for PATH'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "logs" -d 'Print the servers\' recent log messages (window/logMessage; the daemon keeps the last 100 of each server)'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "messages" -d 'Print the messages the servers showed the user (window/showMessage; the daemon keeps the last 50 of each server)'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "mcp" -d 'Serve the commands as the tools of an MCP (Model Context Protocol) server on stdio'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and not __fish_seen_subcommand_from write edit patch check baseline servers history daemon diagnostics logs messages mcp help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "start" -d 'Start the daemon unless it is running'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "stop" -d 'Stop the daemon and its servers'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "status" -d 'Show the daemon\'s pid, uptime, memory and servers; exit 1 when none is running'
complete -c lspgate -n "__fish_lspgate_using_subcommand help; and __fish_seen_subcommand_from daemon" -f -a "restart" -d 'Stop the daemon, then start a new one'
