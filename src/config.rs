//! Configuration: `.lspgate.toml` and the user config layered over the built-in server table, and the options of a run (flag > env > file > default).
