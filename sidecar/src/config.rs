//! `$XDG_CONFIG_HOME/tend/config.toml`: a typed configuration with
//! defaults. Every key is optional; unknown keys and bad values are errors
//! that name the key and the problem.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tend_detector::DetectorConfig;

use crate::error::CliError;

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Detector timings and thresholds (see `tend config`).
    pub detector: DetectorConfig,
    /// Key bindings. A tmux option `@tend-key-*` set in tmux.conf wins over
    /// these, so tmux users keep configuring keys where they expect to.
    pub keys: KeysConfig,
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
    /// The configured key for a key action id (`next-waiting`, …).
    pub fn key_for(&self, action: &str) -> &str {
        match action {
            "next-waiting" => &self.next,
            "next-waiting-session" => &self.next_session,
            "next-working" => &self.working,
            _ => &self.picker,
        }
    }
}

/// The configuration file's path.
pub fn path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("tend").join("config.toml"))
}

/// Parses configuration text; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Config, CliError> {
    let cfg: Config =
        toml::from_str(text).map_err(|e| CliError::new("bad_config", format!("{file}: {e}")))?;
    cfg.detector
        .validate()
        .map_err(|e| CliError::new("bad_config", format!("{file}: [detector] {e}")))?;
    Ok(cfg)
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
            "bad_config",
            format!("cannot read {}: {e}", p.display()),
        )),
    }
}

/// The detector part.
pub fn load_detector_config() -> Result<DetectorConfig, CliError> {
    Ok(load()?.detector)
}

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
        let e = parse("c.toml", "[detectr]\n").unwrap_err();
        assert!(
            e.message.contains("unknown field `detectr`"),
            "{}",
            e.message
        );
        let e = parse("c.toml", "[detector]\ncpu_low = 50.0\n").unwrap_err();
        assert!(e.message.contains("cpu_low = 50"), "{}", e.message);
    }
}
