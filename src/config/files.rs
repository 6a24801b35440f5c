//! Reading and validating a config file: TOML with kebab-case keys, where an unknown
//! key or a bad value is an error naming the file, the line and the key; durations
//! (`500ms`, `2s`, `1m`, a bare number of seconds); the options a file may set. What
//! the keys do to the server table is `layers`'.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::model::options::{ColorChoice, FailOn, Format, Severity};
use crate::servers::Role;

/// Parse `500ms`, `2s`, `1.5s`, `1m`, `1h`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    const USAGE: &str = "use a number followed by ms, s or m, e.g. 500ms, 2s, 1m";
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let invalid = |why: String| format!("invalid duration {s:?}: {why}");
    // `str::parse::<f64>` alone would also take "inf", "1e3" and "-1"; the split above
    // has already kept only digits and dots in `number`.
    let value: f64 = match number.parse() {
        Ok(v) if number.chars().any(|c| c.is_ascii_digit()) => v,
        _ => return Err(invalid(format!("expected a number ({USAGE})"))),
    };
    let seconds = match unit.trim_start() {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(invalid(format!("unknown unit {other:?} ({USAGE})"))),
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| invalid("out of range".to_string()))
}

/// A duration in a config file: a string in `parse_duration` syntax, or a number of
/// seconds (TOML has no duration type, and `quiet = 0.3` reads naturally).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Dur(pub(super) Duration);

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"a duration such as "500ms", "2s" or "1m", or a number of seconds"#)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Dur, E> {
                parse_duration(s).map(Dur).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Dur, E> {
                Ok(Dur(Duration::from_secs(n)))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Dur, E> {
                u64::try_from(n)
                    .map(|n| Dur(Duration::from_secs(n)))
                    .map_err(|_| E::custom(format!("invalid duration {n}: it is negative")))
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Dur, E> {
                Duration::try_from_secs_f64(x)
                    .map(Dur)
                    .map_err(|_| E::custom(format!("invalid duration {x}")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A config file or an option that cannot be used. Always names where it came from.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}{}: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Invalid {
        path: PathBuf,
        /// 1-based line and column, when the parser knows them.
        location: Option<(usize, usize)>,
        message: String,
    },
    /// A flag or environment value, named in the message (`--timeout: ...`).
    #[error("{0}")]
    Option(String),
}

pub(super) fn invalid(path: &Path, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_owned(),
        location: None,
        message: message.into(),
    }
}

/// Turn toml's error into `path:line:col: message`, saying "key" where serde says
/// "field", since the user wrote a key.
fn toml_error(path: &Path, text: &str, err: &toml::de::Error) -> ConfigError {
    let location = err.span().map(|span| {
        let before = text.get(..span.start).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        (line, column)
    });
    let message = err.message().trim_end();
    let message = match message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
    {
        Some((key, rest)) => {
            let expected = rest.trim_start_matches(',').trim();
            if expected.is_empty() {
                format!("unknown key {key:?}")
            } else {
                format!("unknown key {key:?} ({expected})")
            }
        }
        None => message.to_string(),
    };
    ConfigError::Invalid {
        path: path.to_owned(),
        location,
        message,
    }
}

/// The options a config file may set: those of `ReportArgs` except `dry-run` and
/// `reject`, which describe one run and would be surprising as a standing default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileOptions {
    pub format: Option<Format>,
    pub startup_timeout: Option<Duration>,
    pub timeout: Option<Duration>,
    pub cross_file_timeout: Option<Duration>,
    pub all: Option<bool>,
    pub fail_on: Option<FailOn>,
    pub severity: Option<Severity>,
    pub no_daemon: Option<bool>,
    pub max_entries: Option<usize>,
    pub color: Option<ColorChoice>,
}

impl FileOptions {
    /// `over`'s values where it has them, else ours.
    pub(super) fn overlay(self, over: FileOptions) -> FileOptions {
        FileOptions {
            format: over.format.or(self.format),
            startup_timeout: over.startup_timeout.or(self.startup_timeout),
            timeout: over.timeout.or(self.timeout),
            cross_file_timeout: over.cross_file_timeout.or(self.cross_file_timeout),
            all: over.all.or(self.all),
            fail_on: over.fail_on.or(self.fail_on),
            severity: over.severity.or(self.severity),
            no_daemon: over.no_daemon.or(self.no_daemon),
            max_entries: over.max_entries.or(self.max_entries),
            color: over.color.or(self.color),
        }
    }
}

/// One config file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) format: Option<Format>,
    pub(super) startup_timeout: Option<Dur>,
    pub(super) timeout: Option<Dur>,
    pub(super) cross_file_timeout: Option<Dur>,
    pub(super) all: Option<bool>,
    pub(super) fail_on: Option<FailOn>,
    pub(super) severity: Option<Severity>,
    pub(super) no_daemon: Option<bool>,
    pub(super) max_entries: Option<usize>,
    pub(super) color: Option<ColorChoice>,
    /// User config only.
    pub(super) trusted_workspaces: Option<Vec<String>>,
    /// User config only: servers never run (`layers::turn_off`).
    pub(super) without: Option<Vec<String>>,
    /// A BTreeMap: servers a single file adds are ordered by name (toml does not keep
    /// the document order).
    #[serde(default)]
    pub(super) server: BTreeMap<String, RawServer>,
}

impl RawFile {
    pub(super) fn options(&self) -> FileOptions {
        FileOptions {
            format: self.format,
            startup_timeout: self.startup_timeout.map(|d| d.0),
            timeout: self.timeout.map(|d| d.0),
            cross_file_timeout: self.cross_file_timeout.map(|d| d.0),
            all: self.all,
            fail_on: self.fail_on,
            severity: self.severity,
            no_daemon: self.no_daemon,
            max_entries: self.max_entries,
            color: self.color,
        }
    }
}

/// `[server.NAME]`: every key optional, since for a built-in it overrides only what
/// it names.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(super) struct RawServer {
    pub(super) command: Option<String>,
    pub(super) args: Option<Vec<String>>,
    pub(super) extensions: Option<Vec<String>>,
    pub(super) language_id: Option<LanguageId>,
    pub(super) root_markers: Option<Vec<String>>,
    pub(super) settings: Option<toml::Table>,
    pub(super) initialization_options: Option<toml::Table>,
    pub(super) disabled: Option<bool>,
    pub(super) quiet: Option<Dur>,
    pub(super) versioned_publish: Option<bool>,
    pub(super) project_wide: Option<bool>,
    pub(super) install_hint: Option<String>,
    pub(super) role: Option<Role>,
}

/// `language-id = "lua"` for every extension, or `{ ts = "typescript", ... }` per
/// extension.
#[derive(Debug)]
pub(super) enum LanguageId {
    All(String),
    PerExtension(BTreeMap<String, String>),
}

impl<'de> Deserialize<'de> for LanguageId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LanguageId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a language id, or a table of extension = language id")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<LanguageId, E> {
                Ok(LanguageId::All(s.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LanguageId, A::Error> {
                BTreeMap::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(LanguageId::PerExtension)
            }
        }
        d.deserialize_any(V)
    }
}

/// Read and parse one file; a missing file is no file.
pub(super) fn read_file(path: &Path) -> Result<Option<RawFile>, ConfigError> {
    let text = match crate::regular::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    toml::from_str(&text)
        .map(Some)
        .map_err(|e| toml_error(path, &text, &e))
}

pub(super) fn table_to_json(table: &toml::Table) -> Value {
    Value::Object(
        table
            .iter()
            .map(|(k, v)| (k.clone(), toml_to_json(v)))
            .collect(),
    )
}

/// By hand rather than through serde: toml's datetimes would serialize as a private
/// marker table, and servers expect a string.
fn toml_to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::from(*i),
        toml::Value::Float(f) => {
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number)
        }
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => table_to_json(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2s"), Ok(secs(2.0)));
        assert_eq!(parse_duration("1m"), Ok(secs(60.0)));
        assert_eq!(parse_duration("1.5s"), Ok(secs(1.5)));
        assert_eq!(parse_duration("3"), Ok(secs(3.0)));
        assert_eq!(parse_duration(" 250 ms "), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "s", "5x", "-1s", "1e3", "inf", "1.2.3s", ".", "5 sec"] {
            let err = parse_duration(bad).expect_err(bad);
            assert!(
                err.starts_with(&format!("invalid duration {bad:?}")),
                "{err}"
            );
        }
        assert!(
            parse_duration("5x")
                .expect_err("5x")
                .contains("unknown unit \"x\"")
        );
    }
}
