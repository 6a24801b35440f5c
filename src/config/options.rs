//! The options of a run: flag > env > file > default.

use crate::model::options::{Options, ReportArgs};

use super::files::{ConfigError, FileOptions, parse_duration};

/// Flag > env > file > default. clap has already put the env twins of the valued
/// options into `args`; the boolean flags' twins (`LSPGATE_ALL`, `LSPGATE_NO_DAEMON`,
/// `LSPGATE_DRY_RUN`, `LSPGATE_REJECT`) are read here, since clap's bool flags take none.
pub fn resolve_options(args: &ReportArgs, files: &FileOptions) -> Result<Options, ConfigError> {
    resolve_options_with(args, files, &|name| std::env::var(name).ok())
}

pub(super) fn resolve_options_with(
    args: &ReportArgs,
    files: &FileOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Options, ConfigError> {
    let duration = |value: &Option<String>, flag: &str, var: &str| {
        let Some(value) = value else { return Ok(None) };
        // clap merged the two, so say which one it was when we can tell.
        let source = if env(var).as_deref() == Some(value.as_str()) {
            var
        } else {
            flag
        };
        parse_duration(value)
            .map(Some)
            .map_err(|e| ConfigError::Option(format!("{source}: {e}")))
    };
    // A flag can only turn a boolean on; when absent, an env value (0 too) outranks
    // the file.
    let boolean = |flag: bool, var: &str, file: Option<bool>| -> Result<bool, ConfigError> {
        if flag {
            return Ok(true);
        }
        Ok(env_bool(var, env(var))?.or(file).unwrap_or(false))
    };
    let d = Options::default();
    Ok(Options {
        format: args.format.or(files.format).unwrap_or(d.format),
        startup_timeout: duration(
            &args.startup_timeout,
            "--startup-timeout",
            "LSPGATE_STARTUP_TIMEOUT",
        )?
        .or(files.startup_timeout)
        .unwrap_or(d.startup_timeout),
        timeout: duration(&args.timeout, "--timeout", "LSPGATE_TIMEOUT")?
            .or(files.timeout)
            .unwrap_or(d.timeout),
        cross_file_timeout: duration(
            &args.cross_file_timeout,
            "--cross-file-timeout",
            "LSPGATE_CROSS_FILE_TIMEOUT",
        )?
        .or(files.cross_file_timeout)
        .unwrap_or(d.cross_file_timeout),
        all: boolean(args.all, "LSPGATE_ALL", files.all)?,
        fail_on: args.fail_on.or(files.fail_on).unwrap_or(d.fail_on),
        severity: args.severity.or(files.severity).unwrap_or(d.severity),
        dry_run: boolean(args.dry_run, "LSPGATE_DRY_RUN", None)?,
        reject: boolean(args.reject, "LSPGATE_REJECT", None)?,
        no_daemon: boolean(args.no_daemon, "LSPGATE_NO_DAEMON", files.no_daemon)?,
        max_entries: args
            .max_entries
            .or(files.max_entries)
            .unwrap_or(d.max_entries),
        color: args.color.or(files.color).unwrap_or(d.color),
    })
}

/// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; empty counts as unset, as clap
/// treats the env twins of the other options.
pub(super) fn env_bool(name: &str, value: Option<String>) -> Result<Option<bool>, ConfigError> {
    let Some(value) = value else { return Ok(None) };
    match value.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "1" | "true" | "yes" | "on" => Ok(Some(true)),
        "0" | "false" | "no" | "off" => Ok(Some(false)),
        _ => Err(ConfigError::Option(format!(
            "{name}: expected 1 or 0, got {value:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::options::Format;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn options_precedence_flag_env_file_default() {
        let no_env = |_: &str| None;
        let files = FileOptions {
            timeout: Some(secs(3.0)),
            format: Some(Format::Json),
            all: Some(true),
            ..FileOptions::default()
        };

        let defaults =
            resolve_options_with(&ReportArgs::default(), &FileOptions::default(), &no_env)
                .expect("defaults");
        assert_eq!(defaults, Options::default());
        assert_eq!(defaults.timeout, secs(5.0));
        assert_eq!(defaults.startup_timeout, secs(60.0));
        assert_eq!(defaults.cross_file_timeout, secs(60.0));
        assert_eq!(defaults.max_entries, 20);

        let from_file =
            resolve_options_with(&ReportArgs::default(), &files, &no_env).expect("file");
        assert_eq!(
            (from_file.timeout, from_file.format, from_file.all),
            (secs(3.0), Format::Json, true)
        );

        let args = ReportArgs {
            timeout: Some("1s".into()),
            format: Some(Format::Text),
            max_entries: Some(3),
            ..ReportArgs::default()
        };
        let from_flag = resolve_options_with(&args, &files, &no_env).expect("flag");
        assert_eq!(
            (from_flag.timeout, from_flag.format, from_flag.max_entries),
            (secs(1.0), Format::Text, 3)
        );

        // Boolean env twins: on, and off outranking the file.
        let env = |name: &str| match name {
            "LSPGATE_NO_DAEMON" => Some("1".to_string()),
            "LSPGATE_ALL" => Some("0".to_string()),
            _ => None,
        };
        let from_env = resolve_options_with(&ReportArgs::default(), &files, &env).expect("env");
        assert!(from_env.no_daemon && !from_env.all);
        let all = ReportArgs {
            all: true,
            ..ReportArgs::default()
        };
        assert!(resolve_options_with(&all, &files, &env).expect("flag").all);

        let bad_env = |_: &str| Some("maybe".to_string());
        let err =
            resolve_options_with(&ReportArgs::default(), &files, &bad_env).expect_err("bad env");
        assert!(
            err.to_string().contains("LSPGATE_ALL: expected 1 or 0"),
            "{err}"
        );
    }

    #[test]
    fn invalid_duration_names_the_option() {
        let args = ReportArgs {
            timeout: Some("5x".into()),
            ..ReportArgs::default()
        };
        let err = resolve_options_with(&args, &FileOptions::default(), &|_| None)
            .expect_err("5x")
            .to_string();
        assert!(
            err.starts_with("--timeout: invalid duration \"5x\""),
            "{err}"
        );

        let env = |name: &str| (name == "LSPGATE_TIMEOUT").then(|| "5x".to_string());
        let err = resolve_options_with(&args, &FileOptions::default(), &env)
            .expect_err("5x")
            .to_string();
        assert!(
            err.starts_with("LSPGATE_TIMEOUT: invalid duration \"5x\""),
            "{err}"
        );
    }
}
