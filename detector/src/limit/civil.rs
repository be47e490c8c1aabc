//! Calendar arithmetic on the Unix scale, in a zone given as an offset:
//! days from 1970-01-01 to a date and back (Howard Hinnant's
//! `days_from_civil` / `civil_from_days`, valid for every year here).

/// A local date and time, as an agent draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    /// 1–12.
    pub month: u32,
    /// 1–31.
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01: (year, month, day).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

impl Civil {
    /// The local time `unix` seconds after the epoch shows in a zone
    /// `offset` seconds east of UTC.
    pub(crate) fn at(unix: i64, offset: i32) -> Civil {
        let local = unix + i64::from(offset);
        let (year, month, day) = civil_from_days(local.div_euclid(86_400));
        let secs = local.rem_euclid(86_400);
        Civil {
            year,
            month,
            day,
            hour: u32::try_from(secs / 3600).unwrap_or(0),
            minute: u32::try_from(secs % 3600 / 60).unwrap_or(0),
            second: u32::try_from(secs % 60).unwrap_or(0),
        }
    }

    /// The Unix time of this local time in a zone `offset` seconds east of
    /// UTC.
    pub(crate) fn unix(&self, offset: i32) -> i64 {
        days_from_civil(self.year, self.month, self.day) * 86_400
            + i64::from(self.hour) * 3600
            + i64::from(self.minute) * 60
            + i64::from(self.second)
            - i64::from(offset)
    }

    /// Days since 1970-01-01 of its date.
    pub(crate) fn days(&self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// 0 for Monday … 6 for Sunday.
    pub(crate) fn weekday(&self) -> u32 {
        // 1970-01-01 was a Thursday (3).
        u32::try_from((self.days() + 3).rem_euclid(7)).unwrap_or(0)
    }
}

/// Whether `day` exists in that month of that year.
pub(crate) fn valid_date(year: i64, month: u32, day: u32) -> bool {
    if !(1..=12).contains(&month) || day == 0 {
        return false;
    }
    let (y, m, d) = civil_from_days(days_from_civil(year, month, day));
    (y, m, d) == (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip_and_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        for d in [-800_000, -1, 0, 59, 60, 365, 10_957, 20_000, 2_000_000] {
            let (y, m, day) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, day), d);
        }
        // 2026-12-06 09:30:00 UTC is 1796549400; in UTC+2 it is 11:30.
        let t = Civil::at(1_796_549_400, 0);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute),
            (2026, 12, 6, 9, 30)
        );
        assert_eq!(t.unix(0), 1_796_549_400);
        let t = Civil::at(1_796_549_400, 7200);
        assert_eq!((t.hour, t.minute), (11, 30));
        assert_eq!(t.unix(7200), 1_796_549_400);
        assert_eq!(t.weekday(), 6, "2026-12-06 is a Sunday");
        assert!(valid_date(2028, 2, 29) && !valid_date(2027, 2, 29) && !valid_date(2026, 4, 31));
    }
}
