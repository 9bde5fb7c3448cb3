//! Input errors: what is wrong with a user's file, where, and about which item.
//!
//! Owns: the error values the parse/validate stage returns. They are collected, never thrown one
//! at a time, so a user sees every problem of a file in one run; a flood of errors of one shape
//! (a 100,000-name range of unknown nodes, one bad unit copied into every module) is cut to the
//! first few, the last of which says how many more like it were left out.

use std::collections::HashMap;
use std::fmt;

/// Errors of one shape (the same message up to quoted names and numbers) shown per file; the
/// last one shown counts the rest.
pub const SHOWN_PER_SHAPE: usize = 3;
/// Errors shown per file in all; the last one shown counts the rest.
pub const SHOWN_PER_FILE: usize = 50;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub file: String,
    /// 1-based line, where the format gives one.
    pub line: Option<usize>,
    /// The offending item, e.g. `connection fluid->particles` or `module viewer`.
    pub item: String,
    pub message: String,
    /// How many further errors like this one were left out of the list.
    pub more: usize,
}

impl InputError {
    pub fn new(file: impl Into<String>, line: Option<usize>, item: impl Into<String>, msg: impl Into<String>) -> Self {
        InputError { file: file.into(), line, item: item.into(), message: msg.into(), more: 0 }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}: {}", self.file, l, self.item, self.message)?,
            None => write!(f, "{}: {}: {}", self.file, self.item, self.message)?,
        }
        if self.more > 0 {
            write!(f, "\n  ... and {} more like it", self.more)?;
        }
        Ok(())
    }
}

/// Every problem found in the inputs (at least one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputErrors(pub Vec<InputError>);

impl fmt::Display for InputErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InputErrors {}

impl From<InputError> for InputErrors {
    fn from(e: InputError) -> Self {
        InputErrors(vec![e])
    }
}

impl InputErrors {
    /// The errors of `a` and then of `b`, either of which may be absent.
    pub fn join(a: Option<InputErrors>, b: Option<InputErrors>) -> Option<InputErrors> {
        match (a, b) {
            (Some(mut a), Some(b)) => {
                a.0.extend(b.0);
                Some(a)
            }
            (a, b) => a.or(b),
        }
    }
}

/// Collects errors about one file, keeping at most [`SHOWN_PER_SHAPE`] of each shape and
/// [`SHOWN_PER_FILE`] in all (memory stays bounded however many are pushed).
#[derive(Debug)]
pub struct Sink {
    pub file: String,
    errors: Vec<InputError>,
    /// Per shape: (shown, index of the last one shown).
    shapes: HashMap<String, (usize, usize)>,
    /// Errors pushed after the file's list was full.
    dropped: usize,
    /// Errors pushed in all, shown or not.
    pushed: usize,
}

impl Sink {
    pub fn new(file: impl Into<String>) -> Self {
        Sink { file: file.into(), errors: Vec::new(), shapes: HashMap::new(), dropped: 0, pushed: 0 }
    }
    pub fn push(&mut self, line: Option<usize>, item: impl Into<String>, message: impl Into<String>) {
        self.pushed += 1;
        let message = cut(message.into(), 2_000);
        let key = shape(&message);
        if let Some(&(shown, last)) = self.shapes.get(&key) {
            if shown >= SHOWN_PER_SHAPE {
                self.errors[last].more += 1;
                return;
            }
        }
        if self.errors.len() >= SHOWN_PER_FILE {
            self.dropped += 1;
            return;
        }
        let s = self.shapes.entry(key).or_insert((0, 0));
        *s = (s.0 + 1, self.errors.len());
        self.errors.push(InputError::new(self.file.clone(), line, cut(item.into(), 200), message));
    }
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }
    /// Errors pushed so far, shown or not.
    pub fn count(&self) -> usize {
        self.pushed
    }
    /// Adds errors found elsewhere about this file (e.g. a TOML key check).
    pub fn extend(&mut self, errors: InputErrors) {
        for e in errors.0 {
            self.push(e.line, e.item, e.message);
        }
    }
    pub fn into_errors(mut self) -> Option<InputErrors> {
        if self.dropped > 0 {
            let n = self.dropped;
            self.errors.push(InputError::new(
                self.file.clone(),
                None,
                "errors",
                format!("{n} more not shown (at most {SHOWN_PER_FILE} are listed per file)"),
            ));
        }
        (!self.errors.is_empty()).then_some(InputErrors(self.errors))
    }
    pub fn into_result<T>(self, value: T) -> Result<T, InputErrors> {
        match self.into_errors() {
            None => Ok(value),
            Some(e) => Err(e),
        }
    }
}

/// `s` cut to `max` bytes (at a character boundary), saying so: a message never echoes a whole
/// megabyte-long name.
fn cut(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} [... {} more bytes]", &s[..end], s.len() - end)
}

/// A message with its quoted parts and numbers blanked out: errors of one shape differ only in
/// the names and values they mention.
fn shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut quoted = false;
    let mut last_digit = false;
    for c in message.chars() {
        if c == '"' {
            quoted = !quoted;
            out.push('"');
        } else if quoted {
            continue;
        } else if c.is_ascii_digit() || (last_digit && c == '.') {
            if !last_digit {
                out.push('#');
            }
            last_digit = true;
            continue;
        } else {
            out.push(c);
        }
        last_digit = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floods_are_cut_to_a_few_of_each_shape() {
        let mut s = Sink::new("f.toml");
        for i in 0..10_000 {
            s.push(Some(3), "place b", format!("unknown node \"n{i}\""));
        }
        s.push(Some(4), "place c", "lists 2 nodes for 3 instances");
        let e = s.into_errors().unwrap();
        // 3 of the 10,000 unknown nodes, the third counting the 9,997 others, then the other error.
        assert_eq!(e.0.len(), 4);
        assert_eq!(e.0[2].more, 9_997);
        assert_eq!(e.0[3].item, "place c");
        assert!(e.to_string().contains("... and 9997 more like it"));
    }

    #[test]
    fn a_file_lists_at_most_fifty() {
        let mut s = Sink::new("f.toml");
        let shapes = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
        for a in shapes {
            for b in shapes {
                s.push(None, "x", format!("{a} {b}"));
            }
        }
        let e = s.into_errors().unwrap();
        // 64 distinct shapes: 50 shown, then one line for the 14 left out.
        assert_eq!(e.0.len(), SHOWN_PER_FILE + 1);
        assert!(e.0[SHOWN_PER_FILE].message.starts_with("14 more not shown"));
    }
}
