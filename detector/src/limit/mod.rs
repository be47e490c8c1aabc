//! When a usage limit resets, read from the words an agent draws.
//!
//! An agent that hits its plan's usage limit says when it resets, each in
//! its own words: Claude Code "resets 3pm (UTC)" or "resets Dec 9, 6:32am
//! (UTC)", Codex "try again at 9:38 AM." or "try again at Dec 9th, 2026
//! 6:33 AM.", Gemini CLI "Access resets at 9:41 AM UTC."; others give a
//! span ("in 2h 14m") or a timestamp. An agent's limit rule cuts the words
//! out of its screen (the manifest's `reset`, see
//! [`crate::manifest::ResetWords`]); [`parse_reset`] turns them into a
//! Unix time. [`resume`] is the last look before tend types into a pane at
//! its limit: is the limit still on the screen, and what goes on from it.
//!
//! Pure: the present and the user's zone are arguments. A time without a
//! date is the next such time (one already passed by less than an hour
//! counts as today's: the screen was drawn before it); a date without a
//! year the next such date. A zone the words name wins over the user's
//! when tend knows its offset (`UTC`, `GMT+2`, `+05:30`, `PST`, `CET`, …);
//! a zone it cannot place without a time-zone database (`Europe/Berlin`)
//! is taken for the user's own, which is where the agent runs.

mod civil;
mod resume;

use std::sync::OnceLock;

use regex::Regex;

use civil::{valid_date, Civil};
pub use resume::{resume, NotAtLimit, Resume};

/// How long before `now` a time without a date may lie and still be
/// today's (the screen was drawn before the reset and is read after it).
const GRACE: i64 = 3600;

/// When the limit the words describe resets, as Unix seconds; `None` when
/// they name no time. `now` is the Unix time the words were read at,
/// `offset` the user's zone in seconds east of UTC (UTC+2 is 7200).
///
/// ```
/// use tend_detector::limit::parse_reset;
/// // 2026-12-06 09:30 UTC
/// let now = 1_796_549_400;
/// assert_eq!(parse_reset("3pm (UTC)", now, 0), Some(now + 5 * 3600 + 1800));
/// assert_eq!(parse_reset("in 2h 14m", now, 0), Some(now + 2 * 3600 + 14 * 60));
/// ```
pub fn parse_reset(text: &str, now: i64, offset: i32) -> Option<i64> {
    read_reset(text, now, offset).map(|r| r.at)
}

/// When a limit resets, as far as the words tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reset {
    /// The time the words name (Unix seconds).
    pub at: i64,
    /// How much later the reset may really be, in seconds: the agents
    /// drop what they do not draw ("resets 3:05pm" is 15:05:00 to
    /// 15:05:59, "Aug 8" any time that day). 1 when the words name the
    /// second.
    pub within: i64,
}

/// [`parse_reset`], with how precisely the words name the time.
pub fn read_reset(text: &str, now: i64, offset: i32) -> Option<Reset> {
    let text = normalise(text);
    if let Some(r) = relative(&text, now) {
        return Some(r);
    }
    if let Some(r) = iso(&text, offset) {
        return Some(r);
    }
    if let Some(at) = epoch(&text) {
        return Some(Reset { at, within: 1 });
    }
    let (rest, zone) = take_zone(&text);
    let offset = zone.unwrap_or(offset);
    let time = clock(&rest);
    let date = date(&rest);
    let within = match time {
        Some((_, _, _, true)) => 1,
        Some(_) => 60,
        None if date.is_some() => 86_400,
        None => return None,
    };
    let (h, m, s, _) = time.unwrap_or((0, 0, 0, false));
    let at = resolve(date, (h, m, s), now, offset)?;
    Some(Reset { at, within })
}

/// A reset as the user reads it in their zone (`offset` seconds east of
/// UTC): `15:05` on the day of `now`, `Tue 15:05` within the week ahead,
/// `Dec 9 15:05` beyond (24-hour: the status line has no room for
/// `p.m.`).
pub fn local_clock(at: i64, now: i64, offset: i32) -> String {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    const NAMES: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let t = Civil::at(at, offset);
    let clock = format!("{:02}:{:02}", t.hour, t.minute);
    let days = t.days() - Civil::at(now, offset).days();
    match days {
        0 => clock,
        1..=6 => format!("{} {clock}", DAYS[t.weekday() as usize]),
        _ => format!("{} {} {clock}", NAMES[(t.month - 1) as usize], t.day),
    }
}

/// How long until a reset, as a clock counting down: `2h 14m`, `45m`,
/// `3d 2h`, `40s`; `0s` once it is past.
pub fn countdown(secs: i64) -> String {
    let s = secs.max(0);
    let (d, h, m) = (s / 86_400, s % 86_400 / 3600, s % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h {m:02}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// Lower case, one space between words, no trailing full stop.
fn normalise(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect::<String>()
        .to_lowercase();
    let words: Vec<&str> = spaced.split(' ').filter(|w| !w.is_empty()).collect();
    words
        .join(" ")
        .trim_matches(|c: char| matches!(c, '.' | ',' | ';' | '!' | ':' | '·'))
        .to_owned()
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).expect("a valid built-in pattern"))
}

/// "in 2h 14m", "2h14m", "2 hours", "45 min", "1 day, 3 hours and 5 mins".
fn relative(text: &str, now: i64) -> Option<Reset> {
    static PART: OnceLock<Regex> = OnceLock::new();
    // Longest unit first: the regex crate takes the first alternative that
    // matches, so "2hours" is two hours, not two h and a stray "ours".
    let part = re(
        &PART,
        r"(\d{1,5})\s*(days|day|d|hours|hour|hrs|hr|h|minutes|minute|mins|min|m|seconds|second|secs|sec|s)",
    );
    let body = text
        .strip_prefix("in ")
        .or_else(|| text.strip_prefix("after "))
        .unwrap_or(text);
    let (mut total, mut within, mut last) = (0i64, 0i64, 0);
    let mut rest = String::new();
    for c in part.captures_iter(body) {
        let whole = c.get(0)?;
        rest.push_str(&body[last..whole.start()]);
        last = whole.end();
        let n: i64 = c[1].parse().ok()?;
        let unit = match c[2].as_bytes()[0] {
            b'd' => 86_400,
            b'h' => 3600,
            b'm' => 60,
            _ => 1,
        };
        total += n * unit;
        within = if within == 0 { unit } else { within.min(unit) };
    }
    rest.push_str(&body[last..]);
    // Only spans and what joins them: "3pm" or "5 mangoes" is no span.
    let stray = rest.split([' ', ',']).any(|w| !w.is_empty() && w != "and");
    (within > 0 && !stray).then_some(Reset {
        at: now + total,
        within,
    })
}

/// "2026-12-09T06:33:00Z", "2026-12-09 06:33 +01:00", "2026-12-09".
fn iso(text: &str, offset: i32) -> Option<Reset> {
    static ISO: OnceLock<Regex> = OnceLock::new();
    let c = re(
        &ISO,
        r"\b(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?\s*(z\b|[+-]\d{2}:?\d{2}\b)?",
    )
    .captures(text)?;
    let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let (year, month, day) = (i64::from(num(1)?), num(2)?, num(3)?);
    if !valid_date(year, month, day) {
        return None;
    }
    let zone = match c.get(7) {
        Some(z) => zone_offset(z.as_str())?,
        None => offset,
    };
    let t = Civil {
        year,
        month,
        day,
        hour: num(4).unwrap_or(0),
        minute: num(5).unwrap_or(0),
        second: num(6).unwrap_or(0),
    };
    let within = match (c.get(6), c.get(5)) {
        (Some(_), _) => 1,
        (None, Some(_)) => 60,
        (None, None) => 86_400,
    };
    (t.hour < 24 && t.minute < 60 && t.second < 60).then(|| Reset {
        at: t.unix(zone),
        within,
    })
}

/// Unix seconds, as some agents print `resets_at` (ten digits).
fn epoch(text: &str) -> Option<i64> {
    (text.len() == 10 && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// The words without the zone they name, and that zone's offset when
/// tend knows it. A zone in parentheses it does not know (`Europe/Berlin`)
/// is dropped and the user's zone stands.
fn take_zone(text: &str) -> (String, Option<i32>) {
    static PAREN: OnceLock<Regex> = OnceLock::new();
    static TRAILING: OnceLock<Regex> = OnceLock::new();
    if let Some(m) = re(&PAREN, r"\(([^()]*)\)").captures(text) {
        let rest = text.replacen(&m[0], " ", 1);
        return (normalise(&rest), zone_offset(m[1].trim()));
    }
    let trailing = re(
        &TRAILING,
        r"\s((?:utc|gmt)(?:\s?[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2}|[a-z]{3,4})$",
    );
    if let Some(m) = trailing.captures(text) {
        if let Some(zone) = zone_offset(&m[1]) {
            return (
                text[..m.get(0).map_or(0, |g| g.start())].to_owned(),
                Some(zone),
            );
        }
    }
    (text.to_owned(), None)
}

/// The offset of a zone named in words, when it says it: `utc`, `gmt+2`,
/// `utc-05:30`, `+0200`, `z`, or a common abbreviation (`pst`, `cet`, …).
fn zone_offset(zone: &str) -> Option<i32> {
    static NUMERIC: OnceLock<Regex> = OnceLock::new();
    let zone = zone.trim().to_lowercase();
    let numeric = re(&NUMERIC, r"^(?:utc|gmt)?\s?([+-])(\d{1,2})(?::?(\d{2}))?$");
    if let Some(c) = numeric.captures(&zone) {
        let hours: i32 = c[2].parse().ok()?;
        let minutes: i32 = c.get(3).map_or(Some(0), |m| m.as_str().parse().ok())?;
        if hours > 14 || minutes > 59 {
            return None;
        }
        let sign = if &c[1] == "-" { -1 } else { 1 };
        return Some(sign * (hours * 3600 + minutes * 60));
    }
    let hours = match zone.as_str() {
        "utc" | "gmt" | "z" | "wet" => 0,
        "bst" | "cet" | "west" => 1,
        "cest" | "eet" => 2,
        "eest" | "msk" => 3,
        "jst" | "kst" => 9,
        "aest" => 10,
        "aedt" => 11,
        "hst" => -10,
        "akst" => -9,
        "akdt" | "pst" => -8,
        "pdt" | "mst" => -7,
        "mdt" | "cst" => -6,
        "cdt" | "est" => -5,
        "edt" => -4,
        _ => return None,
    };
    Some(hours * 3600)
}

/// The time of day the words name: (hour, minute, second), 24-hour, and
/// whether they name the second.
fn clock(text: &str) -> Option<(u32, u32, u32, bool)> {
    static TWELVE: OnceLock<Regex> = OnceLock::new();
    static TWENTY_FOUR: OnceLock<Regex> = OnceLock::new();
    if let Some(c) = re(
        &TWELVE,
        r"\b(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s?([ap])\.?\s?m\b",
    )
    .captures(text)
    {
        let hour: u32 = c[1].parse().ok()?;
        if !(1..=12).contains(&hour) {
            return None;
        }
        let hour = hour % 12 + if &c[4] == "p" { 12 } else { 0 };
        return hms(hour, c.get(2), c.get(3));
    }
    if let Some(c) = re(&TWENTY_FOUR, r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?\b").captures(text) {
        return hms(c[1].parse().ok()?, c.get(2), c.get(3));
    }
    if text.contains("midnight") {
        return Some((0, 0, 0, false));
    }
    text.contains("noon").then_some((12, 0, 0, false))
}

fn hms(
    hour: u32,
    minute: Option<regex::Match>,
    second: Option<regex::Match>,
) -> Option<(u32, u32, u32, bool)> {
    let part = |m: Option<regex::Match>| m.map_or(Some(0), |m| m.as_str().parse::<u32>().ok());
    let named = second.is_some();
    let (minute, second) = (part(minute)?, part(second)?);
    (hour < 24 && minute < 60 && second < 60).then_some((hour, minute, second, named))
}

/// A date as the words give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Day {
    /// A month and day, with the year when given.
    Date {
        year: Option<i64>,
        month: u32,
        day: u32,
    },
    /// A weekday, 0 for Monday.
    Weekday(u32),
    /// "today" (0) or "tomorrow" (1).
    Ahead(i64),
}

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

fn date(text: &str) -> Option<Day> {
    static MONTH_DAY: OnceLock<Regex> = OnceLock::new();
    static DAY_MONTH: OnceLock<Regex> = OnceLock::new();
    static YEAR: OnceLock<Regex> = OnceLock::new();
    static WEEKDAY: OnceLock<Regex> = OnceLock::new();
    const MONTH: &str = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?";
    let month_day = re(
        &MONTH_DAY,
        &format!(r"\b{MONTH}\s(\d{{1,2}})(?:st|nd|rd|th)?\b"),
    );
    let day_month = re(
        &DAY_MONTH,
        &format!(r"\b(\d{{1,2}})(?:st|nd|rd|th)?\s{MONTH}(?:\s|,|$)"),
    );
    let month_of = |m: &str| MONTHS.iter().position(|x| *x == m).map(|i| i as u32 + 1);
    let found = if let Some(c) = month_day.captures(text) {
        Some((month_of(&c[1])?, c[2].parse::<u32>().ok()?))
    } else if let Some(c) = day_month.captures(text) {
        Some((month_of(&c[2])?, c[1].parse::<u32>().ok()?))
    } else {
        None
    };
    if let Some((month, day)) = found {
        let year = re(&YEAR, r"\b(20\d{2})\b")
            .captures(text)
            .and_then(|c| c[1].parse().ok());
        return Some(Day::Date { year, month, day });
    }
    if text.contains("tomorrow") {
        return Some(Day::Ahead(1));
    }
    if text.contains("today") || text.contains("tonight") {
        return Some(Day::Ahead(0));
    }
    let c = re(&WEEKDAY, r"\b(mon|tue|wed|thu|fri|sat|sun)[a-z]*\b").captures(text)?;
    let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    names
        .iter()
        .position(|n| *n == &c[1])
        .map(|i| Day::Weekday(i as u32))
}

/// The Unix time of `time` on the day the words give, the next such day
/// when they give none.
fn resolve(
    date: Option<Day>,
    (hour, minute, second): (u32, u32, u32),
    now: i64,
    offset: i32,
) -> Option<i64> {
    let today = Civil::at(now, offset);
    let on = |days: i64| {
        let (year, month, day) = civil::civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour,
            minute,
            second,
        }
        .unix(offset)
    };
    match date {
        Some(Day::Date { year, month, day }) => {
            let at = |year: i64| {
                valid_date(year, month, day).then(|| on(civil::days_from_civil(year, month, day)))
            };
            match year {
                Some(y) => at(y),
                // Feb 29 comes back within four years.
                None => (today.year..=today.year + 4)
                    .filter_map(at)
                    .find(|t| *t >= now - GRACE),
            }
        }
        Some(Day::Ahead(n)) => Some(on(today.days() + n)),
        Some(Day::Weekday(wd)) => {
            let ahead = (i64::from(wd) - i64::from(today.weekday())).rem_euclid(7);
            let at = on(today.days() + ahead);
            Some(if at < now - GRACE {
                at + 7 * 86_400
            } else {
                at
            })
        }
        None => {
            let at = on(today.days());
            Some(if at < now - GRACE {
                on(today.days() + 1)
            } else {
                at
            })
        }
    }
}

#[cfg(test)]
mod tests;
