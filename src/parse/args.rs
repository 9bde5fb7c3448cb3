//! Command-line values every subcommand reads the same way (`--time-limit`, `--jobs`, `--out`):
//! one validation, one message.

use super::caps;
use std::path::Path;
use std::time::Duration;

/// `--time-limit SECONDS`: a finite number from 0 to [`caps::TIME_LIMIT_S`].
pub fn time_limit(s: &str) -> Result<Duration, String> {
    let max = caps::TIME_LIMIT_S;
    match s.trim().parse::<f64>() {
        Ok(t) if (0.0..=max).contains(&t) => Ok(Duration::from_secs_f64(t)),
        _ => Err(format!("expected a number of seconds from 0 to {max}, got \"{s}\"")),
    }
}

/// `explain --time-limit` and `--call-limit`: as [`time_limit`], but above 0 (an explanation
/// solves changed instances; with no time each would be undecided).
pub fn positive_time_limit(s: &str) -> Result<Duration, String> {
    let max = caps::TIME_LIMIT_S;
    match time_limit(s) {
        Ok(t) if !t.is_zero() => Ok(t),
        _ => Err(format!("expected a number of seconds above 0 and at most {max}, got \"{s}\"")),
    }
}

/// `--jobs N`: a whole number from 1 to [`caps::JOBS`].
pub fn jobs(s: &str) -> Result<usize, String> {
    let max = caps::JOBS;
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("expected a whole number from 1 to {max}, got \"{s}\"")),
    }
}

/// `--out FILE`: refused when it is one of the input files (it would be overwritten), exists
/// but is not a regular file (a directory, `/dev/full`: the file is written elsewhere and renamed
/// over it), or is in a directory that does not exist; checked before any work is done.
pub fn out_path(out: &Path, inputs: &[&Path]) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let shown = out.display();
    if let Ok(m) = std::fs::metadata(out) {
        if !m.is_file() {
            // A directory, or a device such as /dev/full: never replaced by a file.
            return Err(format!("--out {shown}: is not a regular file"));
        }
        let id = (m.dev(), m.ino());
        for i in inputs {
            if std::fs::metadata(i).is_ok_and(|x| (x.dev(), x.ino()) == id) {
                return Err(format!("--out {shown}: is the input file {}; write the mapping elsewhere", i.display()));
            }
        }
    }
    match out.parent() {
        Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => {
            Err(format!("--out {shown}: directory {} does not exist", d.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_limits_are_finite_and_bounded() {
        assert_eq!(time_limit("2.5").unwrap(), Duration::from_millis(2500));
        assert_eq!(time_limit("0").unwrap(), Duration::ZERO);
        for bad in ["-1", "1e300", "inf", "NaN", "", "two", "1000001"] {
            assert!(time_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn explain_time_limits_are_above_zero() {
        assert_eq!(positive_time_limit("0.5").unwrap(), Duration::from_millis(500));
        for bad in ["0", "-1", "1000001", "inf", "x"] {
            assert!(positive_time_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn jobs_are_at_least_one() {
        assert_eq!(jobs("4").unwrap(), 4);
        for bad in ["0", "-1", "257", "1.5", "x"] {
            assert!(jobs(bad).is_err(), "{bad}");
        }
    }
}
