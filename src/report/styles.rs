//! Colours of the text report, the cargo-nextest way: a struct of `owo_colors::Style`s
//! that are all no-ops until [`Styles::colorized`], decided once from `--color` and
//! passed by reference, so printing code never branches on colour.

use owo_colors::Style;

use crate::model::ColorChoice;

/// The styles of the text report. Only severities and paths are coloured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Styles {
    pub error: Style,
    pub warning: Style,
    pub info: Style,
    pub hint: Style,
    pub path: Style,
}

impl Styles {
    /// No colour at all: output is plain text (the same as `Styles::default()`).
    pub fn plain() -> Styles {
        Styles::default()
    }

    pub fn colorized() -> Styles {
        Styles {
            error: Style::new().red().bold(),
            warning: Style::new().yellow().bold(),
            info: Style::new().blue().bold(),
            hint: Style::new().cyan(),
            path: Style::new().bold(),
        }
    }

    /// The styles `--color` asks for on stdout.
    pub fn for_choice(choice: ColorChoice) -> Styles {
        if should_colorize(choice) {
            Styles::colorized()
        } else {
            Styles::plain()
        }
    }
}

/// Whether to colour stdout: `always` and `never` say so; `auto` colours a terminal
/// that supports it unless `NO_COLOR` is set to a non-empty value (no-color.org).
pub fn should_colorize(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => auto_colorize(
            std::env::var_os("NO_COLOR").as_deref(),
            // Beyond "is stdout a terminal", supports-color honours TERM=dumb and
            // FORCE_COLOR. (It also reads an empty NO_COLOR as set; that only errs
            // towards no colour.)
            supports_color::on_cached(supports_color::Stream::Stdout).is_some(),
        ),
    }
}

fn auto_colorize(no_color: Option<&std::ffi::OsStr>, supported: bool) -> bool {
    let no_color = no_color.is_some_and(|value| !value.is_empty());
    !no_color && supported
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    #[test]
    fn choices() {
        assert!(should_colorize(ColorChoice::Always));
        assert!(!should_colorize(ColorChoice::Never));
    }

    #[test]
    fn no_color_set_and_non_empty_disables() {
        assert!(auto_colorize(None, true));
        assert!(auto_colorize(Some(OsStr::new("")), true));
        assert!(!auto_colorize(Some(OsStr::new("1")), true));
        assert!(!auto_colorize(Some(OsStr::new("0")), true));
        assert!(!auto_colorize(None, false));
    }

    #[test]
    fn plain_styles_are_no_ops() {
        use owo_colors::OwoColorize;
        let plain = Styles::plain();
        assert_eq!(format!("{}", "Error".style(plain.error)), "Error");
        let colorized = Styles::colorized();
        assert_ne!(format!("{}", "Error".style(colorized.error)), "Error");
    }
}
