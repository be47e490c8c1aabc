//! `$XDG_CONFIG_HOME/tend/config.toml`: a typed configuration with
//! defaults. Every key is optional; unknown keys and bad values are errors
//! that name the key and the problem.

use crate::error::ErrorKind;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tend_attention::notify::{Policy, QuietHours, Switches};
use tend_detector::config::{dur, format_duration};
use tend_detector::DetectorConfig;

use crate::error::{bound_quotes, excerpt, quoted, CliError};

pub use tend_core::remote::{check_name, LinkConfig, RemoteConfig};

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Detector timings and thresholds (see `tend config`).
    pub detector: DetectorConfig,
    /// Key bindings. A tmux option `@tend-key-*` set in tmux.conf wins over
    /// these, so tmux users keep configuring keys where they expect to.
    pub keys: KeysConfig,
    /// When and how the user is told that an agent needs them.
    pub notifications: NotificationsConfig,
    /// Other machines whose agents join this status line, over ssh
    /// (`tend remote add NAME DEST`), by name.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub remotes: std::collections::BTreeMap<String, RemoteConfig>,
    /// How the links to remotes are kept.
    pub remote_link: LinkConfig,
    /// What tend types into an agent's pane when its usage limit resets.
    pub limits: crate::limits::LimitsConfig,
}

/// The keys tend binds (tmux key names; `none` leaves one unbound).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct KeysConfig {
    /// Key table (`prefix`, `root`, …). Default `prefix`.
    pub table: String,
    /// Next agent waiting on you. Default `N`.
    pub next: String,
    /// Next agent waiting in this session. Default `T`.
    pub next_session: String,
    /// Next working agent. Default `W`.
    pub working: String,
    /// Agent picker. Default `A`.
    pub picker: String,
}

impl Default for KeysConfig {
    fn default() -> Self {
        KeysConfig {
            table: "prefix".into(),
            next: "N".into(),
            next_session: "T".into(),
            working: "W".into(),
            picker: "A".into(),
        }
    }
}

impl KeysConfig {
    /// The configured key for a key action id (`next-waiting`, …),
    /// without surrounding spaces.
    pub fn key_for(&self, action: &str) -> &str {
        match action {
            "next-waiting" => &self.next,
            "next-waiting-session" => &self.next_session,
            "next-working" => &self.working,
            _ => &self.picker,
        }
        .trim()
    }

    /// The setting's name under `[keys]` for a key action id.
    pub fn field_for(action: &str) -> &'static str {
        match action {
            "next-waiting" => "next",
            "next-waiting-session" => "next_session",
            "next-working" => "working",
            _ => "picker",
        }
    }

    /// Checks the table and every key name (without asking tmux, which
    /// has the last word when the daemon binds them: `tend start` asks
    /// it); names the setting and what to write instead.
    pub fn validate(&self) -> Result<(), String> {
        tend_tmux::keys::check_table_name(&self.table)
            .map_err(|why| format!("table = {}: {why}", quoted(&self.table)))?;
        for action in tend_tmux::keys::KEY_ACTIONS {
            let value = self.key_for(action.id);
            if tend_tmux::keys::disables_key(value) {
                continue;
            }
            tend_tmux::keys::check_key_name(value).map_err(|why| {
                format!("{} = {}: {why}", Self::field_for(action.id), quoted(value))
            })?;
        }
        Ok(())
    }
}

/// The configuration file's path.
pub fn path() -> Option<PathBuf> {
    Some(crate::paths::config_dir()?.join("config.toml"))
}

/// Parses configuration text; `file` names it in errors. An error quotes
/// at most a short excerpt of the file's text, once.
pub fn parse(file: &str, text: &str) -> Result<Config, CliError> {
    let bad = |what: String| {
        CliError::new(
            ErrorKind::BadConfig,
            format!("{file}: {}", bound_quotes(&what)),
        )
    };
    let cfg: Config = toml::from_str(text).map_err(|e| bad(toml_error(text, &e)))?;
    cfg.detector
        .validate()
        .map_err(|e| bad(format!("[detector] {e}")))?;
    cfg.keys
        .validate()
        .map_err(|e| bad(format!("[keys] {e}")))?;
    cfg.notifications
        .validate()
        .map_err(|e| bad(format!("[notifications] {e}")))?;
    for (name, r) in &cfg.remotes {
        check_name(name)
            .and_then(|_| r.validate())
            .map_err(|e| bad(format!("[remotes.{}] {e}", excerpt(name, 60))))?;
    }
    cfg.remote_link
        .validate()
        .map_err(|e| bad(format!("[remote_link] {e}")))?;
    cfg.limits
        .validate()
        .map_err(|e| bad(format!("[limits] {e}")))?;
    Ok(cfg)
}

/// A TOML error in one line: where, what (its quotes cut short), and for
/// a syntax error (a point in the text) the few characters around it.
/// The parser's own text would quote the whole line and underline it.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim();
    let Some(span) = e.span() else {
        return message.to_owned();
    };
    let at = span.start.min(text.len());
    let at = (0..=at)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    let mut out = format!("line {line}, column {column}: {message}");
    if span.len() > 1 {
        // A value refused: the key it belongs to, from the line before it.
        let lead = text[line_start..at].trim_end();
        let lead = lead.strip_suffix('=').unwrap_or(lead).trim();
        if !lead.is_empty() {
            let n = lead.chars().count();
            let lead: String = lead.chars().skip(n.saturating_sub(60)).collect();
            let cut = if n > 60 { "…" } else { "" };
            out = format!("line {line}, column {column} ({cut}{lead}): {message}");
        }
    } else {
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
        let before: String = {
            let b: Vec<char> = text[line_start..at].chars().rev().take(30).collect();
            b.into_iter().rev().collect()
        };
        let after = excerpt(&text[at..line_end], 30);
        let cut = if before.len() < at - line_start {
            "…"
        } else {
            ""
        };
        out.push_str(&format!(" (here: `{cut}{before}{after}`)"));
    }
    out
}

/// Loads the configuration file, or the defaults when there is none.
pub fn load() -> Result<Config, CliError> {
    let Some(p) = path() else {
        return Ok(Config::default());
    };
    match std::fs::read_to_string(&p) {
        Ok(text) => parse(&p.display().to_string(), &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(e) => Err(CliError::new(
            ErrorKind::BadConfig,
            format!("cannot read {}: {e}", p.display()),
        )),
    }
}

// ---- [notifications] -------------------------------------------------------

/// `[notifications]`: when a pane enters a demand band. Every key
/// is optional:
///
/// ```toml
/// [notifications]
/// enabled = true
/// desktop = "auto"          # auto | on | off: D-Bus desktop notifications
/// tmux = true               # display-message (and the bell) when no desktop
/// bell = true               # ring the terminal bell with the tmux message
/// osc = true                # OSC 9 / OSC 777 to the terminals of clients
/// osc_format = "auto"       # auto | 9 | 777 | both
/// display_time = "4s"       # how long the tmux message stays
/// group_window = "200ms"    # bursts within it become one notification
/// quiet_hours = "22:00-07:00"
/// # what is notified
/// approval = true
/// question = true
/// error = true
/// prompt = true
/// completed = true          # a finished turn (ready for review)
/// quiet = false             # a working run gone quiet
/// park_released = true      # a park released by its gate
/// gone = true               # a self-reporting agent gone
/// limit = true              # a usage limit hit, reset, resumed
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NotificationsConfig {
    /// Off: no notification of any kind. Default on.
    pub enabled: bool,
    /// Desktop notifications over D-Bus. Default `auto`.
    pub desktop: DesktopMode,
    /// When no desktop notification was shown: a `display-message` on
    /// every attached client. Default on.
    pub tmux: bool,
    /// With the tmux message, the bell on each client's terminal. Default
    /// on.
    pub bell: bool,
    /// OSC 9 / OSC 777 notifications written to each attached client's
    /// terminal (shown by terminals that support them, over ssh too).
    /// Sent to every client when no desktop notification was shown, and
    /// to clients attached over ssh always. Default on.
    pub osc: bool,
    /// Which OSC: `auto` picks by the client's terminal. Default `auto`.
    pub osc_format: OscFormat,
    /// How long the tmux message stays. Default 4s.
    #[serde(with = "dur")]
    pub display_time: Duration,
    /// Happenings within this window go out as one notification. Default
    /// 200ms.
    #[serde(with = "dur")]
    pub group_window: Duration,
    /// A daily window of local time (`"22:00-07:00"`) in which nothing is
    /// notified. Default none.
    #[serde(with = "opt_hours", skip_serializing_if = "Option::is_none")]
    pub quiet_hours: Option<QuietHours>,
    /// Waiting for approval. Default on.
    pub approval: bool,
    /// Asked a question. Default on.
    pub question: bool,
    /// Blocked by an error. Default on.
    pub error: bool,
    /// Waiting at a prompt. Default on.
    pub prompt: bool,
    /// A finished turn, ready for review. Default on.
    #[serde(alias = "ready_for_review")]
    pub completed: bool,
    /// A working run gone quiet (not a demand). Default off.
    pub quiet: bool,
    /// A park released by its gate. Default on.
    pub park_released: bool,
    /// A self-reporting agent gone (unless its last report was `stopped`).
    /// Default on.
    pub gone: bool,
    /// An agent hit its plan's usage limit, the limit reset, tend resumed
    /// it (`[limits]`). Default on.
    pub limit: bool,
}

impl Default for NotificationsConfig {
    fn default() -> Self {
        let sw = Switches::default();
        NotificationsConfig {
            enabled: true,
            desktop: DesktopMode::Auto,
            tmux: true,
            bell: true,
            osc: true,
            osc_format: OscFormat::Auto,
            display_time: Duration::from_secs(4),
            group_window: tend_attention::notify::DEFAULT_GROUP_WINDOW,
            quiet_hours: None,
            approval: sw.approval,
            question: sw.question,
            error: sw.error,
            prompt: sw.prompt,
            completed: sw.completed,
            quiet: sw.quiet,
            park_released: sw.park_released,
            gone: sw.gone,
            limit: sw.limit,
        }
    }
}

/// Longest grouping window: every notification waits this long.
const MAX_GROUP_WINDOW: Duration = Duration::from_secs(5);
/// Longest tmux message.
const MAX_DISPLAY_TIME: Duration = Duration::from_secs(60);

impl NotificationsConfig {
    /// Checks values; names the key and the problem.
    pub fn validate(&self) -> Result<(), String> {
        if self.group_window > MAX_GROUP_WINDOW {
            return Err(format!(
                "group_window = {}: every notification waits that long; use at most {}",
                format_duration(self.group_window),
                format_duration(MAX_GROUP_WINDOW)
            ));
        }
        if self.display_time.is_zero() || self.display_time > MAX_DISPLAY_TIME {
            return Err(format!(
                "display_time = {}: use between 1s and {}",
                format_duration(self.display_time),
                format_duration(MAX_DISPLAY_TIME)
            ));
        }
        if self.enabled && self.desktop == DesktopMode::Off && !self.tmux && !self.osc {
            return Err(
                "desktop = \"off\", tmux = false and osc = false: nothing could be \
                 delivered; set enabled = false to turn notifications off"
                    .into(),
            );
        }
        Ok(())
    }

    /// The switches for the decision logic.
    pub fn switches(&self) -> Switches {
        Switches {
            approval: self.approval,
            question: self.question,
            error: self.error,
            prompt: self.prompt,
            completed: self.completed,
            quiet: self.quiet,
            park_released: self.park_released,
            gone: self.gone,
            limit: self.limit,
        }
    }

    /// The policy for [`tend_attention::notify::Notifier`].
    pub fn policy(&self) -> Policy {
        Policy {
            enabled: self.enabled,
            switches: self.switches(),
            quiet_hours: self.quiet_hours,
            group_window: self.group_window,
        }
    }
}

/// Whether desktop notifications are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DesktopMode {
    /// When a notification service answers on the session bus.
    Auto,
    /// Always tried; the tmux message still stands in when it fails.
    On,
    /// Never.
    Off,
}

/// Which terminal notification sequence is written to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum OscFormat {
    /// OSC 777 for terminals known for it (foot, rxvt), OSC 9 for the
    /// rest (iTerm2, WezTerm, Ghostty, kitty, Windows Terminal).
    #[serde(rename = "auto")]
    Auto,
    /// `ESC ] 9 ; text BEL`.
    #[serde(rename = "9")]
    Osc9,
    /// `ESC ] 777 ; notify ; title ; body BEL`.
    #[serde(rename = "777")]
    Osc777,
    /// Both (a terminal that shows both shows two).
    #[serde(rename = "both")]
    Both,
}

/// Serde for `quiet_hours = "22:00-07:00"`.
mod opt_hours {
    use super::QuietHours;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(q: &Option<QuietHours>, s: S) -> Result<S::Ok, S::Error> {
        match q {
            Some(q) => s.serialize_str(&q.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<QuietHours>, D::Error> {
        let text = String::deserialize(d)?;
        let text = text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        text.parse().map(Some).map_err(serde::de::Error::custom)
    }
}

// ---- end [notifications] ---------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_errors() {
        assert_eq!(parse("c.toml", "").unwrap(), Config::default());
        let c = parse("c.toml", "[detector]\nsettle = \"6s\"\n").unwrap();
        assert_eq!(c.detector.settle, std::time::Duration::from_secs(6));
        let e = parse("c.toml", "[detector]\nsettle = \"6 parsecs\"\n").unwrap_err();
        assert!(e.message.starts_with("c.toml: "), "{}", e.message);
        assert!(e.message.contains("unknown unit"), "{}", e.message);
        assert!(
            e.message
                .starts_with("c.toml: line 2, column 10 (settle): `6 parsecs`"),
            "{}",
            e.message
        );
        let e = parse("c.toml", "[detectr]\n").unwrap_err();
        assert!(
            e.message.contains("unknown field `detectr`"),
            "{}",
            e.message
        );
        let e = parse("c.toml", "[detector]\ncpu_low = 50.0\n").unwrap_err();
        assert!(e.message.contains("cpu_low = 50"), "{}", e.message);
    }

    #[test]
    fn notifications_section() {
        let c = parse("c.toml", "").unwrap();
        assert_eq!(c.notifications, NotificationsConfig::default());
        assert!(c.notifications.enabled);
        assert_eq!(c.notifications.policy(), Policy::default());
        let c = parse(
            "c.toml",
            "[notifications]\ndesktop = \"off\"\nosc_format = \"777\"\n\
             quiet_hours = \"22:00-07:00\"\ngroup_window = \"500ms\"\n\
             question = false\nready_for_review = false\n",
        )
        .unwrap();
        let n = &c.notifications;
        assert_eq!(n.desktop, DesktopMode::Off);
        assert_eq!(n.osc_format, OscFormat::Osc777);
        assert_eq!(n.group_window, Duration::from_millis(500));
        assert_eq!(
            n.quiet_hours.map(|q| q.to_string()).as_deref(),
            Some("22:00-07:00")
        );
        assert!(!n.question && !n.completed && n.approval);
        // Round trip through TOML.
        let text = toml::to_string(&c).unwrap();
        assert_eq!(parse("c.toml", &text).unwrap(), c);
        // The detector section still works beside it.
        let c = parse(
            "c.toml",
            "[detector]\nsettle = \"6s\"\n[notifications]\nenabled = false\n",
        )
        .unwrap();
        assert_eq!(c.detector.settle, Duration::from_secs(6));
        assert!(!c.notifications.enabled);

        for (text, want) in [
            ("desktop = \"sometimes\"", "unknown variant `sometimes`"),
            ("quiet_hours = \"22-7\"", "HH:MM"),
            ("quiet_hours = \"22:00\"", "start-end"),
            (
                "group_window = \"10s\"",
                "[notifications] group_window = 10s",
            ),
            ("display_time = \"0s\"", "display_time = 0s"),
            ("aproval = true", "unknown field `aproval`"),
            (
                "desktop = \"off\"\ntmux = false\nosc = false",
                "nothing could be delivered",
            ),
        ] {
            let e = parse("c.toml", &format!("[notifications]\n{text}\n")).unwrap_err();
            assert!(e.message.starts_with("c.toml: "), "{}", e.message);
            assert!(e.message.contains(want), "{text}: {}", e.message);
        }
    }

    #[test]
    fn keys_section() {
        let c = parse("c.toml", "[keys]\nnext = \" M-n \"\npicker = \"none\"\n").unwrap();
        assert_eq!(c.keys.key_for("next-waiting"), "M-n");
        assert_eq!(c.keys.key_for("picker"), "none");
        for ok in [
            "N", "C-a", "^a", "F5", "C-Space", "M-#", "é", "0x41", "off", "None", "",
        ] {
            assert!(
                parse("c.toml", &format!("[keys]\nworking = {ok:?}\n")).is_ok(),
                "{ok}"
            );
        }
        let help = "tmux knows no key by that name; write a key as tmux does: `N`, `M-n` \
                    (Alt+n), `C-a` (Ctrl+a), `F5`, `Space`, `C-Space`, or `none` for no key";
        let e = parse(
            "/home/u/.config/tend/config.toml",
            "[keys]\nnext = \"#(touch x)\"\n",
        )
        .unwrap_err();
        assert_eq!(e.code(), "bad_config");
        assert_eq!(
            e.message,
            format!("/home/u/.config/tend/config.toml: [keys] next = \"#(touch x)\": {help}")
        );
        let e = parse("c.toml", "[keys]\nnext_session = \"a b\"\n").unwrap_err();
        assert_eq!(
            e.message,
            format!("c.toml: [keys] next_session = \"a b\": {help}")
        );
        let e = parse("c.toml", "[keys]\ntable = \"\"\n").unwrap_err();
        assert_eq!(
            e.message,
            "c.toml: [keys] table = \"\": an empty name is no key table: use `prefix` (keys \
             pressed after the prefix key) or `root` (keys pressed alone)"
        );
        let e = parse("c.toml", "[keys]\ntable = \"a\\tb\"\n").unwrap_err();
        assert!(
            e.message
                .starts_with("c.toml: [keys] table = \"a\\tb\": a key table name cannot"),
            "{}",
            e.message
        );
        // Quotes and spaces are fine: tend reads such a table back.
        let c = parse("c.toml", "[keys]\ntable = 'my \"tend\" keys'\n").unwrap();
        assert_eq!(c.keys.table, "my \"tend\" keys");
    }

    /// A 10 MB line makes an error of a few hundred characters that quotes
    /// at most EXCERPT_CHARS of it, once.
    #[test]
    fn errors_quote_a_short_excerpt_once() {
        use crate::error::EXCERPT_CHARS;
        let v = "x".repeat(10 * 1024 * 1024);
        let cut = format!("{}…", "x".repeat(EXCERPT_CHARS));
        // A value the deserialiser refuses: quoted once, cut.
        let e = parse("c.toml", &format!("[detector]\nsettle = \"{v}\"\n")).unwrap_err();
        assert_eq!(
            e.message,
            format!("c.toml: line 2, column 10 (settle): `{cut}` does not start with a number")
        );
        // A syntax error: where, and thirty characters either side.
        let e = parse("c.toml", &format!("[keys]\nnext = \"{v}\" junk\n")).unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "c.toml: line 2, column {}: unexpected key or value, expected newline, `#` \
                 (here: `…{}\" junk`)",
                v.len() + 11,
                "x".repeat(28)
            )
        );
        // A key validation, an unknown field, a remote's name.
        let e = parse("c.toml", &format!("[keys]\nnext = \"{v}\"\n")).unwrap_err();
        assert!(e
            .message
            .starts_with(&format!("c.toml: [keys] next = \"{cut}\": tmux knows")));
        assert!(e.message.len() < 600, "{}", e.message.len());
        let e = parse("c.toml", &format!("[detector]\n{v} = 1\n")).unwrap_err();
        assert!(e.message.len() < 1_500, "{}", e.message.len());
        assert_eq!(e.message.matches(&cut).count(), 1, "{}", e.message);
        let e = parse("c.toml", &format!("[remotes.\"{v}\"]\ndest = \"h\"\n")).unwrap_err();
        assert!(e.message.len() < 1_500, "{}", e.message.len());
    }
}
