//! One TOML source file being read: its line index and a deserialisation that reports every
//! misspelt key, not only the first.

use super::suggest::closest;
use crate::error::{InputError, InputErrors, Sink};
use serde::de::DeserializeOwned;
use std::borrow::Cow;
use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Misspelt keys reported per file before the rest of the file is read as it is.
const MAX_KEY_ERRORS: usize = 10;

pub(crate) struct Doc<'a> {
    pub src: &'a str,
    pub file: &'a str,
    /// Byte offsets of the line breaks, for line numbers in O(log n).
    breaks: Vec<usize>,
}

impl<'a> Doc<'a> {
    pub fn new(src: &'a str, file: &'a str) -> Self {
        Doc { src, file, breaks: src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i).collect() }
    }

    /// 1-based line of a byte offset.
    pub fn line_at(&self, offset: usize) -> usize {
        self.breaks.partition_point(|&b| b < offset) + 1
    }

    /// The line a span starts on.
    pub fn line(&self, span: Range<usize>) -> Option<usize> {
        Some(self.line_at(span.start))
    }

    pub fn sink(&self) -> Sink {
        Sink::new(self.file)
    }

    /// A TOML syntax or shape error, with its line (and the closest spelling of a misspelt key).
    pub fn error(&self, e: &toml::de::Error) -> InputError {
        let line = e.span().map(|s| self.line_at(s.start));
        InputError::new(self.file, line, "TOML", with_suggestion(&e.message().replace('\n', " ")))
    }

    /// Deserialises the file into `T`. A key `T` does not know is reported and then renamed to
    /// its close match (`laod` -> `load`, when the table has no `load`) or dropped, and the file
    /// read again: every misspelt key is reported in one run (up to [`MAX_KEY_ERRORS`]), and the
    /// rest of the file is still checked. A required key found missing after a key was dropped
    /// is taken as a consequence and not reported.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, InputErrors> {
        let mut table = DeTable::parse(self.src).map_err(|e| InputErrors::from(self.error(&e)))?;
        let mut found = Vec::new();
        let mut value = None;
        let mut dropped = false;
        for _ in 0..=MAX_KEY_ERRORS {
            match T::deserialize(toml::de::Deserializer::from(table.clone())) {
                Ok(v) => {
                    value = Some(v);
                    break;
                }
                Err(e) => {
                    let msg = e.message();
                    if !(dropped && msg.starts_with("missing field")) {
                        found.push(self.error(&e));
                    }
                    let fix = match (msg.starts_with("unknown field"), e.span()) {
                        (true, Some(span)) => fix_key(table.get_mut(), &span, suggested(msg)),
                        _ => None,
                    };
                    match fix {
                        Some(Fix::Renamed) => {}
                        Some(Fix::Dropped) => dropped = true,
                        None => break,
                    }
                }
            }
        }
        found.sort_by_key(|e| e.line);
        let mut sink = self.sink();
        for e in found {
            sink.push(e.line, e.item, e.message);
        }
        match value {
            Some(v) => sink.into_result(v),
            None => Err(sink.into_errors().expect("an error was found")),
        }
    }
}

enum Fix {
    Renamed,
    Dropped,
}

/// Renames the key whose span is `span` to `to` (when its table has no such key) or drops it,
/// wherever it is in the document.
fn fix_key(t: &mut DeTable<'_>, span: &Range<usize>, to: Option<String>) -> Option<Fix> {
    if let Some(k) = t.keys().find(|k| k.span() == *span).cloned() {
        let v = t.remove(&k)?;
        if let Some(new) = to.filter(|n| !t.contains_key(n.as_str())) {
            t.insert(Spanned::new(span.clone(), Cow::Owned(new)), v);
            return Some(Fix::Renamed);
        }
        return Some(Fix::Dropped);
    }
    t.iter_mut().find_map(|(_, v)| fix_in(v, span, to.clone()))
}

fn fix_in(v: &mut Spanned<DeValue<'_>>, span: &Range<usize>, to: Option<String>) -> Option<Fix> {
    match v.get_mut() {
        DeValue::Table(t) => fix_key(t, span, to),
        DeValue::Array(a) => a.iter_mut().find_map(|x| fix_in(x, span, to.clone())),
        _ => None,
    }
}

/// The close match of the key in serde's "unknown field `laod`, expected one of `name`, `load`".
fn suggested(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown field `")?;
    let (bad, expected) = rest.split_once('`')?;
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    closest(bad, known.iter().copied()).map(str::to_string)
}

/// serde's "unknown field `laod`, expected one of `name`, `load`" gets "; did you mean `load`?".
fn with_suggestion(msg: &str) -> String {
    match suggested(msg) {
        Some(k) => format!("{msg}; did you mean `{k}`?"),
        None => msg.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        name: String,
        #[serde(default)]
        items: Vec<Item>,
    }
    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        load: f64,
    }

    #[test]
    fn lines_are_counted_from_one() {
        let d = Doc::new("a\nb\n\nc", "f");
        assert_eq!([d.line_at(0), d.line_at(2), d.line_at(4), d.line_at(5)], [1, 2, 3, 4]);
    }

    #[test]
    fn every_misspelt_key_is_reported() {
        // nmae cannot become name (the table has one); laod cannot become load (same): both are
        // dropped and reported, in line order.
        let src = "name = \"x\"\nnmae = 1\n[[items]]\nload = 1.0\n[[items]]\nlaod = 2.0\nload = 1.0\n";
        let e = Doc::new(src, "f.toml").deserialize::<T>().unwrap_err();
        let lines: Vec<Option<usize>> = e.0.iter().map(|e| e.line).collect();
        assert_eq!(lines, [Some(2), Some(6)], "{e}");
        assert!(e.0[1].message.ends_with("did you mean `load`?"), "{e}");
    }

    #[test]
    fn one_misspelt_key_is_one_error() {
        // laod is read as load (the item has none): the file is otherwise complete, one error.
        let e = Doc::new("name = \"x\"\n[[items]]\nlaod = 2.0\n", "f").deserialize::<T>().unwrap_err();
        assert_eq!(e.0.len(), 1, "{e}");
        // weight has no close match: dropped; the `load` then missing is not a second error.
        let e = Doc::new("name = \"x\"\n[[items]]\nweight = 2.0\n", "f").deserialize::<T>().unwrap_err();
        assert_eq!(e.0.len(), 1, "{e}");
        assert!(e.0[0].message.starts_with("unknown field `weight`"), "{e}");
    }
}
