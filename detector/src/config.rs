//! Every timing and threshold the detector uses, with its documented default.
//!
//! Durations are written in TOML as strings such as `"500ms"`, `"3s"`,
//! `"10m"` or `"6h"` (see [`parse_duration`]).

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Detector timings. All fields have defaults; a config file may
/// set any subset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DetectorConfig {
    /// Shortest time between two evaluations of a pane's screen. Output in
    /// between is coalesced; the last frame is always evaluated. Default 50ms.
    #[serde(with = "dur")]
    pub eval_interval: Duration,
    /// While output keeps coming and every evaluation finds the same
    /// evidence, the interval doubles up to this (a spinner redrawing at
    /// 60 Hz is read a few times a second, not sixty). Any change of
    /// evidence, input or resize returns it to `eval_interval`. Default
    /// 200ms.
    #[serde(with = "dur")]
    pub eval_interval_max: Duration,
    /// Longest an evaluation waits for a synchronized update (DEC 2026) to
    /// end before reading a half-drawn frame anyway. Default 250ms.
    #[serde(with = "dur")]
    pub sync_max: Duration,
    /// A screen change this recent counts as activity when no rule claims
    /// the screen. Default 1.5s.
    #[serde(with = "dur")]
    pub activity_window: Duration,
    /// Silence after which a working agent with no working evidence on
    /// screen is taken to wait at an unknown prompt. Default 4s.
    #[serde(with = "dur")]
    pub settle: Duration,
    /// A transition at or above this confidence is strong. Default 0.85.
    pub strong_confidence: f32,
    /// After a strong transition, weak transitions to another state are
    /// held off this long. Default 500ms.
    #[serde(with = "dur")]
    pub strong_lock: Duration,
    /// A working run silent this long is shown as quiet. Default 10m.
    #[serde(with = "dur")]
    pub quiet_after: Duration,
    /// Process-group CPU at or above this (percent of one core) is busy.
    /// Default 10.
    pub cpu_high: f32,
    /// CPU below this (percent) ends a busy spell. Default 3.
    pub cpu_low: f32,
    /// Longest silence the CPU backstop holds a run in working, per
    /// episode. Default 60s.
    #[serde(with = "dur")]
    pub cpu_backstop_max: Duration,
    /// A waiting agent with no live child process, silent this long, drops
    /// to idle. Default 10m.
    #[serde(with = "dur")]
    pub watchdog: Duration,
    /// Screen changes this soon after a resize are redraws, not activity.
    /// Default 1s.
    #[serde(with = "dur")]
    pub resize_grace: Duration,
    /// Screen changes this soon after the user's own keystrokes are echo,
    /// not activity. Default 150ms.
    #[serde(with = "dur")]
    pub echo_window: Duration,
    /// Directing ends this long after the last keystroke. Default 3s.
    #[serde(with = "dur")]
    pub directing_hold: Duration,
    /// A live agent run whose screen no rule of its manifest has matched
    /// at any evaluation for this long is *unrecognised*: its state comes
    /// only from fallback evidence (activity, silence, the process tree,
    /// typing), so `tend doctor` lists it as worth capturing
    /// (`tend capture`). Default 30s: longer than any agent's start-up
    /// screen in the recordings, short enough to notice while it shows.
    #[serde(with = "dur")]
    pub unrecognised_after: Duration,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            eval_interval: Duration::from_millis(50),
            eval_interval_max: Duration::from_millis(200),
            sync_max: Duration::from_millis(250),
            activity_window: Duration::from_millis(1500),
            settle: Duration::from_secs(4),
            strong_confidence: 0.85,
            strong_lock: Duration::from_millis(500),
            quiet_after: Duration::from_secs(600),
            cpu_high: 10.0,
            cpu_low: 3.0,
            cpu_backstop_max: Duration::from_secs(60),
            watchdog: Duration::from_secs(600),
            resize_grace: Duration::from_secs(1),
            echo_window: Duration::from_millis(150),
            directing_hold: Duration::from_secs(3),
            unrecognised_after: Duration::from_secs(30),
        }
    }
}

impl DetectorConfig {
    /// Checks relations between values; names the key and the problem.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.strong_confidence) {
            return Err(format!(
                "strong_confidence = {}: must be between 0 and 1",
                self.strong_confidence
            ));
        }
        if self.cpu_low > self.cpu_high {
            return Err(format!(
                "cpu_low = {} is above cpu_high = {}: the busy spell could never end",
                self.cpu_low, self.cpu_high
            ));
        }
        if self.eval_interval_max < self.eval_interval {
            return Err(format!(
                "eval_interval_max = {} is below eval_interval = {}",
                format_duration(self.eval_interval_max),
                format_duration(self.eval_interval)
            ));
        }
        if self.settle.is_zero() {
            return Err(
                "settle = 0s: a pause mid-thought would read as waiting; use at least 1s".into(),
            );
        }
        Ok(())
    }
}

/// Parses `"250ms"`, `"4s"`, `"1.5s"`, `"10m"`, `"6h"`, `"2d"`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("`{s}` has no unit (use ms, s, m, h or d, e.g. `30s`)"))?;
    let (num, unit) = s.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        u => return Err(format!("`{s}`: unknown unit `{u}` (use ms, s, m, h or d)")),
    };
    if !(0.0..=10.0 * 365.0 * 86400.0).contains(&secs) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Formats a duration the way [`parse_duration`] reads it.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 3_600_000 == 0 && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// Serde helpers for human durations.
pub mod dur {
    use super::*;

    /// Serializes as `"500ms"` style text.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    /// Deserializes from `"500ms"` style text.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_round_trip() {
        for (text, d) in [
            ("250ms", Duration::from_millis(250)),
            ("4s", Duration::from_secs(4)),
            ("10m", Duration::from_secs(600)),
            ("6h", Duration::from_secs(21600)),
        ] {
            assert_eq!(parse_duration(text).unwrap(), d);
            assert_eq!(format_duration(d), text);
        }
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("5").unwrap_err().contains("no unit"));
        assert!(parse_duration("5y").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn config_from_toml_with_defaults() {
        let c: DetectorConfig = toml::from_str("settle = \"6s\"\ncpu_high = 20.0").unwrap();
        assert_eq!(c.settle, Duration::from_secs(6));
        assert_eq!(c.cpu_high, 20.0);
        assert_eq!(c.quiet_after, Duration::from_secs(600));
        assert!(toml::from_str::<DetectorConfig>("setle = \"6s\"").is_err());
        let bad = DetectorConfig {
            cpu_low: 50.0,
            ..DetectorConfig::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("cpu_low = 50"));
    }
}
