//! Making tend visible in the user's status line, the way tmux plugins do.
//!
//! Plugins such as tmux-battery and tmux-cpu let the user write a
//! placeholder (`#{battery_percentage}`) in `status-right` and fill it in
//! when they load. tend does the same: `#{tend_summary}`,
//! `#{tend_window_glyph}`, … (any published `@tend_*` option without its
//! `@`) in `status-left`, `status-right`, `window-status-format`,
//! `window-status-current-format` or `pane-border-format` become the
//! matching `#{@tend_*}` references, and `#{tend_status}` becomes a
//! ready-styled segment ([`STATUS_SEGMENT`]).
//!
//! With no placeholder and no `@tend_` reference in any of those formats,
//! tend puts [`STATUS_SEGMENT`] in front of `status-right` (and widens
//! `status-right-length` by [`LENGTH_BONUS`], so the clock is not cut),
//! unless the user set `@tend-status off`.
//!
//! Every value tend changes is saved first in a server option
//! (`@tend_saved_<name>`) and put back byte for byte by
//! [`Server::restore_status`]. Installing again is idempotent: a value that
//! is still exactly what tend made from the saved one keeps the saved one
//! as its original; a value the user changed since (a re-sourced
//! `~/.tmux.conf`) becomes the new original.

use crate::error::Result;
use crate::options::{OptionUpdate, Scope};
use crate::server::Server;

/// The user setting that turns off the segment tend adds by itself.
pub const STATUS_SETTING: &str = "@tend-status";

/// The formats tend fills in, and the scope of their global value.
pub const FORMATS: &[(&str, Scope)] = &[
    ("status-left", Scope::Global),
    ("status-right", Scope::Global),
    ("window-status-format", Scope::GlobalWindow),
    ("window-status-current-format", Scope::GlobalWindow),
    ("pane-border-format", Scope::GlobalWindow),
];

/// The segment tend adds to `status-right` (and what `#{tend_status}`
/// becomes): the summary in reverse video, nothing when no agent needs
/// you.
pub const STATUS_SEGMENT: &str = "#{?@tend_summary,#[reverse] #{@tend_summary} #[noreverse] ,}";

/// How much wider `status-right-length` gets when tend adds its segment:
/// tmux keeps the left of a too long `status-right`, so without it the
/// summary would push the user's clock out.
pub const LENGTH_BONUS: u32 = 45;

const LENGTH: &str = "status-right-length";
const SAVED_PREFIX: &str = "@tend_saved_";

/// Replaces every `#{tend_NAME}` placeholder in a format: `tend_status`
/// with [`STATUS_SEGMENT`], any other with `#{@tend_NAME}`. Anything else
/// is left exactly as it is.
pub fn interpolate(format: &str) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(at) = rest.find("#{tend_") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        if after[name_len..].starts_with('}') && name.len() > "tend_".len() {
            if name == "tend_status" {
                out.push_str(STATUS_SEGMENT);
            } else {
                out.push_str("#{@");
                out.push_str(name);
                out.push('}');
            }
            rest = &after[name_len + 1..];
        } else {
            out.push_str("#{");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// True when a format shows something of tend: a placeholder or an
/// `@tend_` option.
pub fn mentions_tend(format: &str) -> bool {
    interpolate(format).contains("@tend_")
}

/// What a format becomes: its placeholders filled in, and for
/// `status-right` with `segment`, [`STATUS_SEGMENT`] in front.
fn render(name: &str, original: &str, segment: bool) -> String {
    let filled = interpolate(original);
    if segment && name == "status-right" {
        format!("{STATUS_SEGMENT}{filled}")
    } else {
        filled
    }
}

/// True when `@tend-status` turns the added segment off.
fn setting_off(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "no" | "false" | "0" | "none"
        )
    })
}

/// What [`Server::install_status`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusReport {
    /// Formats whose placeholders were filled in.
    pub filled: Vec<String>,
    /// True when tend added its own segment to `status-right`.
    pub segment: bool,
    /// Formats left alone because this tmux prints them ambiguously (3.4
    /// and 3.5a, a backslash in the format; see
    /// [`Printing`](crate::Printing)).
    pub unreadable: Vec<String>,
}

impl Server {
    /// The global value of a tmux option (not a user option).
    fn format_value(&self, name: &str, scope: Scope) -> Result<String> {
        let flag = if scope == Scope::GlobalWindow {
            "-gwv"
        } else {
            "-gv"
        };
        let out = self.run(["show-options", flag, "--", name])?;
        let printed = out.strip_suffix('\n').unwrap_or(&out);
        self.capabilities()
            .printing
            .unprint(printed)
            .ok_or_else(|| crate::options::unreadable(name, printed))
    }

    fn saved(&self, name: &str) -> Result<Option<String>> {
        self.show_option(Scope::Server, &format!("{SAVED_PREFIX}{name}"))
    }

    /// Fills in tend's placeholders in the status-line formats, or adds
    /// tend's segment when there is none (see the module documentation).
    /// Safe to run again at any time.
    pub fn install_status(&self) -> Result<StatusReport> {
        let off = setting_off(self.show_option(Scope::Global, STATUS_SETTING)?.as_deref());
        // Each format's original: the saved one while the value is still
        // what tend made of it, else the value itself.
        let mut entries = Vec::new();
        let mut recovered = false;
        let mut unreadable = Vec::new();
        for (name, scope) in FORMATS {
            // A format this tmux prints ambiguously (3.4 and 3.5a, a
            // backslash in it) is left exactly as it is.
            let (current, saved) = match (self.format_value(name, *scope), self.saved(name)) {
                (Ok(c), Ok(s)) => (c, s),
                (Err(e), _) | (_, Err(e)) if e.is_unreadable() => {
                    unreadable.push((*name).to_string());
                    continue;
                }
                (Err(e), _) | (_, Err(e)) => return Err(e),
            };
            recovered |=
                *name == "status-right" && saved.is_none() && current.starts_with(STATUS_SEGMENT);
            let original = match saved {
                Some(s)
                    if render(name, &s, true) == current || render(name, &s, false) == current =>
                {
                    s
                }
                // Saved value lost (its option cleared while tend was not
                // running to put it back): tend's own segment is known, so
                // the rest is the user's.
                _ if *name == "status-right" && current.starts_with(STATUS_SEGMENT) => {
                    current[STATUS_SEGMENT.len()..].to_string()
                }
                _ => current.clone(),
            };
            entries.push((*name, *scope, current, original));
        }
        let right_readable = !unreadable.iter().any(|n| n == "status-right");
        let segment =
            !off && right_readable && !entries.iter().any(|(_, _, _, o)| mentions_tend(o));
        let mut commands: Vec<Vec<String>> = Vec::new();
        let mut report = StatusReport {
            segment,
            unreadable,
            ..Default::default()
        };
        let mut save = Vec::new();
        for (name, scope, current, original) in &entries {
            let rendered = render(name, original, segment);
            let saved_name = format!("{SAVED_PREFIX}{name}");
            if rendered == *original {
                // Nothing of tend's in it (any more): give back the original.
                if self.saved(name)?.is_some() {
                    save.push(OptionUpdate::unset(Scope::Server, saved_name));
                }
            } else {
                save.push(OptionUpdate::set(
                    Scope::Server,
                    saved_name,
                    original.clone(),
                ));
                if interpolate(original) != *original {
                    report.filled.push((*name).to_string());
                }
            }
            if rendered != *current {
                commands.push(set_command(name, *scope, &rendered));
            }
        }
        // status-right-length: widened while the segment is there.
        let current: String = self.format_value(LENGTH, Scope::Global)?;
        let saved = self.saved(LENGTH)?;
        let bonus = |v: &str| {
            v.trim()
                .parse::<u32>()
                .map(|n| n.saturating_add(LENGTH_BONUS).to_string())
        };
        let original = match &saved {
            Some(s) if bonus(s).ok().as_deref() == Some(current.as_str()) => s.clone(),
            // The segment was there without its saved originals: the length
            // was widened with it.
            None if recovered => current
                .trim()
                .parse::<u32>()
                .ok()
                .and_then(|n| n.checked_sub(LENGTH_BONUS))
                .map_or_else(|| current.clone(), |n| n.to_string()),
            _ => current.clone(),
        };
        let saved_name = format!("{SAVED_PREFIX}{LENGTH}");
        match (segment, bonus(&original)) {
            (true, Ok(wide)) => {
                save.push(OptionUpdate::set(Scope::Server, saved_name, original));
                if wide != current {
                    commands.push(set_command(LENGTH, Scope::Global, &wide));
                }
            }
            _ => {
                if saved.is_some() {
                    save.push(OptionUpdate::unset(Scope::Server, saved_name));
                }
                if original != current {
                    commands.push(set_command(LENGTH, Scope::Global, &original));
                }
            }
        }
        // Save the originals before changing anything.
        self.set_options(&save)?;
        self.run_many(&commands)?;
        Ok(report)
    }

    /// Puts back every format tend changed, byte for byte, and forgets the
    /// saved values. A format the user changed while tend ran is left as
    /// the user made it. Returns the names put back.
    pub fn restore_status(&self) -> Result<Vec<String>> {
        let mut commands = Vec::new();
        let mut forget = Vec::new();
        let mut restored = Vec::new();
        for (name, scope) in FORMATS {
            let Some(original) = self.saved(name)? else {
                continue;
            };
            let current = match self.format_value(name, *scope) {
                Ok(c) => c,
                // Changed since to something this tmux prints ambiguously:
                // not tend's any more.
                Err(e) if e.is_unreadable() => {
                    forget.push(OptionUpdate::unset(
                        Scope::Server,
                        format!("{SAVED_PREFIX}{name}"),
                    ));
                    continue;
                }
                Err(e) => return Err(e),
            };
            if render(name, &original, true) == current || render(name, &original, false) == current
            {
                commands.push(set_command(name, *scope, &original));
                restored.push((*name).to_string());
            }
            forget.push(OptionUpdate::unset(
                Scope::Server,
                format!("{SAVED_PREFIX}{name}"),
            ));
        }
        if let Some(original) = self.saved(LENGTH)? {
            let current = self.format_value(LENGTH, Scope::Global)?;
            let wide = original
                .trim()
                .parse::<u32>()
                .map(|n| n.saturating_add(LENGTH_BONUS).to_string());
            if wide.ok().as_deref() == Some(current.as_str()) {
                commands.push(set_command(LENGTH, Scope::Global, &original));
                restored.push(LENGTH.to_string());
            }
            forget.push(OptionUpdate::unset(
                Scope::Server,
                format!("{SAVED_PREFIX}{LENGTH}"),
            ));
        }
        self.run_many(&commands)?;
        self.set_options(&forget)?;
        Ok(restored)
    }

    /// True when the status line shows something of tend for `session`
    /// (`None`: the global formats): an `@tend_` option in
    /// `status-left` or `status-right` as that session sees them, or a
    /// window format, while the status line is on.
    pub fn status_shows_tend(&self, session: Option<&str>) -> Result<bool> {
        let value = |name: &str, window: bool| -> Result<String> {
            let mut cmd = vec!["show-options".to_string(), "-Aqv".into()];
            match (session, window) {
                (Some(s), false) => cmd.extend(["-t".into(), s.to_string()]),
                (Some(s), true) => cmd.extend(["-w".into(), "-t".into(), s.to_string()]),
                (None, false) => cmd.push("-g".into()),
                (None, true) => cmd.push("-gw".into()),
            }
            cmd.push("--".into());
            cmd.push(name.into());
            self.run(&cmd)
        };
        if value("status", false)?.trim() == "off" {
            return Ok(false);
        }
        for (name, scope) in FORMATS {
            if *name == "pane-border-format" {
                continue;
            }
            // What tmux draws: a placeholder not yet filled in shows nothing.
            if value(name, *scope == Scope::GlobalWindow)?.contains("@tend_") {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

fn set_command(name: &str, scope: Scope, value: &str) -> Vec<String> {
    let flag = if scope == Scope::GlobalWindow {
        "-gw"
    } else {
        "-g"
    };
    vec![
        "set-option".into(),
        flag.into(),
        "--".into(),
        name.into(),
        value.into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert_eq!(
            interpolate("#{tend_summary} %H:%M"),
            "#{@tend_summary} %H:%M"
        );
        assert_eq!(
            interpolate("#I:#W#{tend_window_glyph}#{tend_"),
            "#I:#W#{@tend_window_glyph}#{tend_"
        );
        assert_eq!(interpolate("#{tend_status}x"), format!("{STATUS_SEGMENT}x"));
        // Not placeholders: tmux's own variables, a bare prefix, a modifier.
        for same in [
            "#{pane_title}",
            "#{tend_}",
            "#{tend_a b}",
            "#{=21:tend_summary}",
            "#{@tend_summary}",
            "tend_summary",
        ] {
            assert_eq!(interpolate(same), same);
        }
        assert!(mentions_tend("#{tend_summary}"));
        assert!(mentions_tend("#{?@tend_needs,x,}"));
        assert!(!mentions_tend("#{pane_title} %H:%M"));
    }

    #[test]
    fn rendering() {
        assert_eq!(
            render("status-right", "%H:%M", true),
            format!("{STATUS_SEGMENT}%H:%M")
        );
        assert_eq!(render("status-left", "x", true), "x");
        assert_eq!(
            render("status-right", "#{tend_needs}", false),
            "#{@tend_needs}"
        );
        assert!(setting_off(Some("off")) && setting_off(Some(" No ")));
        assert!(!setting_off(None) && !setting_off(Some("on")));
    }
}
