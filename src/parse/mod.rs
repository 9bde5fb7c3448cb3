//! Parse and validate: the only module that knows the input formats (TOML).
//!
//! Owns: the raw serde structs of the three description formats (application, cluster, mapping)
//! and their conversion into validated domain types (`crate::model`). Every problem found is
//! reported with the file, the item and the line, and all of a file's problems are reported
//! together. See `docs/formats.md` for the formats.

mod app;
mod cluster;
mod expr;
mod mapping;
mod overlay;
mod units;

pub use app::application_from_str;
pub use cluster::cluster_from_str;
pub use mapping::{mapping_from_str, PartialMapping};

use crate::error::{InputError, InputErrors};
use crate::model::{Application, Cluster, Mapping};
use std::ops::Range;
use std::path::Path;

/// A `--set NAME=VALUE` override of an application parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub name: String,
    pub value: f64,
}

impl std::str::FromStr for Override {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (n, v) = s.split_once('=').ok_or_else(|| format!("expected NAME=VALUE, got \"{s}\""))?;
        let value = expr::eval(v, &Default::default()).map_err(|e| format!("--set {n}: {e}"))?;
        Ok(Override { name: n.trim().to_string(), value })
    }
}

fn read(path: &Path) -> Result<String, InputErrors> {
    std::fs::read_to_string(path).map_err(|e| {
        InputErrors(vec![InputError {
            file: path.display().to_string(),
            line: None,
            item: "file".into(),
            message: format!("cannot read: {e}"),
        }])
    })
}

/// Reads and validates an application description, following `extends` (an application
/// overlay, merged into its base first).
pub fn load_application(path: &Path, overrides: &[Override]) -> Result<Application, InputErrors> {
    let src = read(path)?;
    let file = path.display().to_string();
    match overlay::merged(path, &src)? {
        None => application_from_str(&src, &file, overrides),
        Some(merged) => application_from_str(&merged, &file, overrides).map_err(|e| overlay::relabel(e, &file)),
    }
}

/// Reads and validates a cluster description, following `extends` chains.
pub fn load_cluster(path: &Path) -> Result<Cluster, InputErrors> {
    cluster::load(path, &mut Vec::new())
}

/// Reads a mapping of `app` on `cluster` and checks it is complete.
pub fn load_mapping(path: &Path, app: &Application, cluster: &Cluster) -> Result<Mapping, InputErrors> {
    let partial = mapping_from_str(&read(path)?, &path.display().to_string(), app, cluster)?;
    partial.complete(app, cluster, &path.display().to_string())
}

/// Reads a mapping that may leave objects unplaced (for `solve --fix`).
pub fn load_partial_mapping(path: &Path, app: &Application, cluster: &Cluster) -> Result<PartialMapping, InputErrors> {
    mapping_from_str(&read(path)?, &path.display().to_string(), app, cluster)
}

/// 1-based line of a byte offset.
pub(crate) fn line_of(src: &str, offset: usize) -> usize {
    src[..offset.min(src.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

pub(crate) fn span_line(src: &str, span: Range<usize>) -> Option<usize> {
    Some(line_of(src, span.start))
}

/// Turns a TOML syntax or shape error into an input error with its line.
pub(crate) fn toml_error(src: &str, file: &str, e: toml::de::Error) -> InputErrors {
    let line = e.span().map(|s| line_of(src, s.start));
    let msg = e.message().replace('\n', " ");
    InputErrors(vec![InputError { file: file.to_string(), line, item: "TOML".into(), message: msg }])
}

/// Expands `node01..node08` into node01, node02, ..., node08 (the width of the first number is
/// kept); any other string is one name.
pub(crate) fn expand_range(s: &str) -> Result<Vec<String>, String> {
    let Some((a, b)) = s.split_once("..") else {
        return Ok(vec![s.to_string()]);
    };
    let split = |x: &str| {
        let cut = x.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        (x[..cut].to_string(), x[cut..].to_string())
    };
    let (pa, na) = split(a.trim());
    let (pb, nb) = split(b.trim());
    if na.is_empty() || nb.is_empty() || pa != pb {
        return Err(format!("cannot expand range \"{s}\": write it as prefixNN..prefixMM"));
    }
    let (lo, hi): (u64, u64) = (
        na.parse().map_err(|_| format!("bad number in \"{s}\""))?,
        nb.parse().map_err(|_| format!("bad number in \"{s}\""))?,
    );
    if hi < lo {
        return Err(format!("empty range \"{s}\": {hi} < {lo}"));
    }
    if hi - lo > 1_000_000 {
        return Err(format!("range \"{s}\" is too large"));
    }
    let w = na.len();
    Ok((lo..=hi).map(|i| format!("{pa}{i:0w$}")).collect())
}

/// Names of objects and nodes: letters, digits, `_`, `-`, `.`; not empty.
pub(crate) fn valid_name(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.') && !s.contains("..")
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn expands_ranges() {
        assert_eq!(expand_range("node01..node03").unwrap(), vec!["node01", "node02", "node03"]);
        assert_eq!(expand_range("n9..n11").unwrap(), vec!["n9", "n10", "n11"]);
        assert_eq!(expand_range("solo").unwrap(), vec!["solo"]);
        assert!(expand_range("a1..b2").is_err());
        assert!(expand_range("n5..n1").is_err());
    }
}
