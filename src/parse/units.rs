//! Quantities with units in description files: `"70 ms"`, `"1.92 MB"`, `"100 MB/s"`.
//!
//! Owns: the unit table and the split of a value string into an expression and a unit. A value is
//! `<expression> <unit>`: the unit is the last whitespace-separated token, the expression is
//! everything before it (see `expr`). A missing or wrong unit is an error, never a guess.
//! (No crate parses combined "expression + unit" strings; `uom` checks dimensions at compile
//! time only, so the table of the few units this domain uses is kept here.)

/// The physical dimension a field expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Seconds.
    Time,
    /// Bytes.
    Data,
    /// Bytes per second.
    Rate,
    /// Hertz.
    Frequency,
    /// A load: a plain number in (0, 1] or a percentage.
    Fraction,
}

impl Dim {
    /// A unit to suggest in messages.
    pub fn example(self) -> &'static str {
        match self {
            Dim::Time => "ms",
            Dim::Data => "MB",
            Dim::Rate => "MB/s",
            Dim::Frequency => "Hz",
            Dim::Fraction => "%",
        }
    }
    /// The SI unit values are converted to.
    pub fn si(self) -> &'static str {
        match self {
            Dim::Time => "s",
            Dim::Data => "B",
            Dim::Rate => "B/s",
            Dim::Frequency => "Hz",
            Dim::Fraction => "",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Dim::Time => "a time (s, ms, us)",
            Dim::Data => "a data size (B, kB, MB, GB, KiB, MiB, GiB, bit, Mbit)",
            Dim::Rate => "a bandwidth (B/s, kB/s, MB/s, GB/s, MiB/s, Mbit/s, Gbit/s)",
            Dim::Frequency => "a frequency (Hz, kHz)",
            Dim::Fraction => "a fraction (0.5 or 50 %)",
        }
    }
}

const UNITS: &[(&str, Dim, f64)] = &[
    ("s", Dim::Time, 1.0),
    ("ms", Dim::Time, 1e-3),
    ("us", Dim::Time, 1e-6),
    ("µs", Dim::Time, 1e-6),
    ("ns", Dim::Time, 1e-9),
    ("min", Dim::Time, 60.0),
    ("B", Dim::Data, 1.0),
    ("kB", Dim::Data, 1e3),
    ("KB", Dim::Data, 1e3),
    ("MB", Dim::Data, 1e6),
    ("GB", Dim::Data, 1e9),
    ("KiB", Dim::Data, 1024.0),
    ("MiB", Dim::Data, 1048576.0),
    ("GiB", Dim::Data, 1073741824.0),
    ("bit", Dim::Data, 0.125),
    ("kbit", Dim::Data, 125.0),
    ("Mbit", Dim::Data, 125e3),
    ("Gbit", Dim::Data, 125e6),
    ("B/s", Dim::Rate, 1.0),
    ("kB/s", Dim::Rate, 1e3),
    ("KB/s", Dim::Rate, 1e3),
    ("MB/s", Dim::Rate, 1e6),
    ("GB/s", Dim::Rate, 1e9),
    ("KiB/s", Dim::Rate, 1024.0),
    ("MiB/s", Dim::Rate, 1048576.0),
    ("GiB/s", Dim::Rate, 1073741824.0),
    ("bit/s", Dim::Rate, 0.125),
    ("kbit/s", Dim::Rate, 125.0),
    ("Mbit/s", Dim::Rate, 125e3),
    ("Gbit/s", Dim::Rate, 125e6),
    ("Hz", Dim::Frequency, 1.0),
    ("kHz", Dim::Frequency, 1e3),
    ("%", Dim::Fraction, 0.01),
];

/// Splits `"<expr> <unit>"` and returns (expression text, factor to SI).
/// A `Fraction` may omit the unit.
pub fn split_unit(text: &str, dim: Dim) -> Result<(&str, f64), String> {
    let t = text.trim();
    let (expr, unit) = match t.rfind(char::is_whitespace) {
        Some(i) => (t[..i].trim(), &t[i + 1..]),
        None => {
            // "70ms": a number glued to a unit.
            let cut = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
            if cut > 0 && cut < t.len() && lookup(&t[cut..]).is_some() {
                (&t[..cut], &t[cut..])
            } else {
                (t, "")
            }
        }
    };
    if unit.is_empty() || lookup(unit).is_none() {
        if dim == Dim::Fraction {
            return Ok((t, 1.0));
        }
        if unit.is_empty() || expr.is_empty() {
            return Err(format!("missing unit in \"{text}\": expected {}", dim.describe()));
        }
        return Err(format!(
            "unknown or missing unit \"{unit}\" in \"{text}\": expected {}{}",
            dim.describe(),
            suggest_unit(unit, dim)
        ));
    }
    let (d, factor) = lookup(unit).expect("checked");
    if d != dim {
        return Err(format!("wrong unit \"{unit}\" in \"{text}\": expected {}", dim.describe()));
    }
    if expr.is_empty() {
        return Err(format!("no value before the unit in \"{text}\""));
    }
    Ok((expr, factor))
}

/// Spellings people use for units this table writes otherwise.
const ALIASES: &[(&str, &str)] = &[
    ("bps", "bit/s"),
    ("kbps", "kbit/s"),
    ("Kbps", "kbit/s"),
    ("Mbps", "Mbit/s"),
    ("Gbps", "Gbit/s"),
    ("Bps", "B/s"),
    ("kBps", "kB/s"),
    ("KBps", "kB/s"),
    ("MBps", "MB/s"),
    ("GBps", "GB/s"),
    ("kb/s", "kbit/s"),
    ("Kb/s", "kbit/s"),
    ("Mb/s", "Mbit/s"),
    ("Gb/s", "Gbit/s"),
    ("kb", "kbit"),
    ("Kb", "kbit"),
    ("Mb", "Mbit"),
    ("Gb", "Gbit"),
    ("sec", "s"),
    ("secs", "s"),
    ("second", "s"),
    ("seconds", "s"),
    ("msec", "ms"),
    ("msecs", "ms"),
    ("usec", "us"),
    ("usecs", "us"),
    ("nsec", "ns"),
    ("percent", "%"),
];

/// "; did you mean \"Gbit/s\"?" for a unit the table does not know, or "".
fn suggest_unit(unit: &str, dim: Dim) -> String {
    let found = ALIASES.iter().find(|(a, _)| *a == unit).map(|(_, u)| *u).or_else(|| {
        let same_dim = UNITS.iter().filter(|(_, d, _)| *d == dim).map(|(u, _, _)| *u);
        super::suggest::closest(unit, same_dim)
    });
    found.map(|u| format!("; did you mean \"{u}\"?")).unwrap_or_default()
}

fn lookup(unit: &str) -> Option<(Dim, f64)> {
    UNITS.iter().find(|(u, _, _)| *u == unit).map(|(_, d, f)| (*d, *f))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn splits_values_and_units() {
        assert_eq!(split_unit("70 ms", Dim::Time).unwrap(), ("70", 1e-3));
        assert_eq!(split_unit("70ms", Dim::Time).unwrap(), ("70", 1e-3));
        assert_eq!(split_unit("100 MB/s", Dim::Rate).unwrap(), ("100", 1e6));
        assert_eq!(split_unit("(particles * 12) B", Dim::Data).unwrap(), ("(particles * 12)", 1.0));
        assert_eq!(split_unit("0.97", Dim::Fraction).unwrap(), ("0.97", 1.0));
        assert_eq!(split_unit("97 %", Dim::Fraction).unwrap(), ("97", 0.01));
        assert!(split_unit("70", Dim::Time).unwrap_err().contains("missing unit"));
        assert!(split_unit("70 MB", Dim::Time).unwrap_err().contains("wrong unit"));
        assert!(split_unit("70 parsecs", Dim::Time).unwrap_err().contains("unknown or missing unit"));
        assert!(split_unit("1 Gbps", Dim::Rate).unwrap_err().ends_with("did you mean \"Gbit/s\"?"));
        assert!(split_unit("1 mb/s", Dim::Rate).unwrap_err().ends_with("did you mean \"MB/s\"?"));
        assert!(split_unit("3 msec", Dim::Time).unwrap_err().ends_with("did you mean \"ms\"?"));
    }
}
