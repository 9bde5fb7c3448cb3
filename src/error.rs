//! Input errors: what is wrong with a user's file, where, and about which item.
//!
//! Owns: the error values the parse/validate stage returns. They are collected, never thrown one
//! at a time, so a user sees every problem of a file in one run.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub file: String,
    /// 1-based line, where the format gives one.
    pub line: Option<usize>,
    /// The offending item, e.g. `connection fluid->particles` or `module viewer`.
    pub item: String,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}: {}", self.file, l, self.item, self.message),
            None => write!(f, "{}: {}: {}", self.file, self.item, self.message),
        }
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

/// Collects errors about one file.
#[derive(Debug)]
pub struct Sink {
    pub file: String,
    pub errors: Vec<InputError>,
}

impl Sink {
    pub fn new(file: impl Into<String>) -> Self {
        Sink { file: file.into(), errors: Vec::new() }
    }
    pub fn push(&mut self, line: Option<usize>, item: impl Into<String>, message: impl Into<String>) {
        self.errors.push(InputError { file: self.file.clone(), line, item: item.into(), message: message.into() });
    }
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
    pub fn into_result<T>(self, value: T) -> Result<T, InputErrors> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(InputErrors(self.errors))
        }
    }
}
