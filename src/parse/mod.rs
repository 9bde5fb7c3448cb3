//! Parse and validate: the only module that knows the input formats (TOML).
//!
//! Owns: the raw serde structs of the three description formats (application, cluster, mapping)
//! and their conversion into validated domain types (`crate::model`). Every problem found is
//! reported with the file, the item and the line, and all of a file's problems are reported
//! together. See `docs/formats.md` for the formats.

mod against;
mod app;
pub mod args;
mod cluster;
mod doc;
mod expr;
mod mapping;
mod overlay;
mod suggest;
mod units;

pub use app::{application_for_cluster, application_from_str};
pub use cluster::cluster_from_str;
pub use mapping::{mapping_from_str, PartialMapping};

use crate::error::{InputError, InputErrors};
use crate::model::{Application, Cluster, Mapping};
use std::io::Read;
use std::path::Path;

/// The sizes flowmap accepts. Inputs above them are refused while reading, before anything is
/// built (README, "Bad input", lists them).
pub mod caps {
    /// Bytes in one input file (4 MiB; the bundled 1,000-module instance is 27 kB).
    pub const FILE_BYTES: u64 = 4 << 20;
    /// Characters in one expression, e.g. `(20 * particles / 160000 * 4 / instances)`.
    pub const EXPRESSION_CHARS: usize = 256;
    /// Names in one range such as `node001..node999`.
    pub const RANGE_NAMES: u64 = 100_000;
    /// Names in all the name lists of one file together, ranges expanded.
    pub const NAMES_PER_FILE: u64 = 1_000_000;
    /// Characters in a name (module, filter, node, network, processor type; names made by ranges).
    pub const NAME_CHARS: usize = 200;
    /// Networks in a cluster.
    pub const NETWORKS: usize = 1_000;
    /// Processor types in one `texec` or `load` table.
    pub const PROCESSOR_TYPES: usize = 100;
    /// Nodes in a cluster.
    pub const NODES: usize = 10_000;
    /// Module and filter instances in an application, all groups together.
    pub const OBJECTS: usize = 10_000;
    /// Instance-level edges (connections and MPI exchanges together).
    pub const EDGES: usize = 1_000_000;
    /// Instances times nodes: the placements a search considers.
    pub const PLACEMENTS: usize = 10_000_000;
    /// `--time-limit`, seconds (about 11.6 days).
    pub const TIME_LIMIT_S: f64 = 1e6;
    /// `--jobs`.
    pub const JOBS: usize = 256;
}

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

/// Reads an input file: a regular file or a pipe (`<(...)`, `/dev/stdin`), at most
/// [`caps::FILE_BYTES`]. Devices such as `/dev/zero` and directories are refused.
pub fn read_file(path: &Path) -> Result<String, InputErrors> {
    read_checked(path, true).map_err(|m| InputError::new(path.display().to_string(), None, "file", m).into())
}

/// The text of `path`, or why it cannot be read (`pipes`: accept pipes as well as regular files).
fn read_checked(path: &Path, pipes: bool) -> Result<String, String> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    let t = meta.file_type();
    if t.is_dir() {
        return Err("is a directory, not a file".into());
    }
    if !(t.is_file() || (pipes && t.is_fifo())) {
        return Err(format!("is not a regular file{}", if pipes { " or a pipe" } else { "" }));
    }
    let too_big = || format!("is larger than {} bytes, the most flowmap reads", caps::FILE_BYTES);
    if meta.len() > caps::FILE_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    let f = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    f.take(caps::FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > caps::FILE_BYTES {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The text of an application file, merged into its base when it `extends` one (an application
/// overlay, `overlay`), and a function that relabels the merged text's errors (the overlay's
/// file, no line).
fn application_source(path: &Path) -> Result<(String, impl Fn(InputErrors) -> InputErrors), InputErrors> {
    let src = read_file(path)?;
    let file = path.display().to_string();
    let merged = overlay::merged(path, &src)?;
    let relabel = {
        let is_merged = merged.is_some();
        move |e: InputErrors| if is_merged { overlay::relabel(e, &file) } else { e }
    };
    Ok((merged.unwrap_or(src), relabel))
}

/// The text of an application file, merged into its base when it `extends` one (for callers
/// that parse it several times, e.g. once per parameter value).
pub fn read_application(path: &Path) -> Result<String, InputErrors> {
    Ok(application_source(path)?.0)
}

/// Reads and validates an application description on its own (node names in `allowed_nodes` and
/// `pin` and processor types are checked only against a cluster: see [`load_inputs`]), following
/// `extends`.
pub fn load_application(path: &Path, overrides: &[Override]) -> Result<Application, InputErrors> {
    let (src, relabel) = application_source(path)?;
    application_from_str(&src, &path.display().to_string(), overrides).map_err(relabel)
}

/// Reads and validates a cluster description, following `extends` chains.
pub fn load_cluster(path: &Path) -> Result<Cluster, InputErrors> {
    cluster::load(path, &mut Vec::new())
}

/// An application and the cluster it is mapped on, read and checked against each other.
#[derive(Debug)]
pub struct Inputs {
    pub app: Application,
    pub cluster: Cluster,
    /// Suspicious but valid (e.g. a processor type no node has): say so, go on.
    pub warnings: Vec<InputError>,
}

/// Reads an application and a cluster, and checks the application's node names and processor
/// types against the cluster. The problems of both files are reported together.
pub fn load_inputs(app: &Path, cluster: &Path, overrides: &[Override]) -> Result<Inputs, InputErrors> {
    let c = load_cluster(cluster);
    let (src, relabel) = application_source(app)?;
    let file = app.display().to_string();
    match c {
        Ok(cluster) => {
            let (app, warnings) = application_for_cluster(&src, &file, overrides, &cluster).map_err(&relabel)?;
            Ok(Inputs { app, cluster, warnings })
        }
        Err(ce) => {
            let ae = application_from_str(&src, &file, overrides).err().map(relabel);
            Err(InputErrors::join(ae, Some(ce)).expect("cluster errors"))
        }
    }
}

/// Reads a mapping of `app` on `cluster` and checks it is complete.
pub fn load_mapping(path: &Path, app: &Application, cluster: &Cluster) -> Result<Mapping, InputErrors> {
    let partial = mapping_from_str(&read_file(path)?, &path.display().to_string(), app, cluster)?;
    partial.complete(app, cluster, &path.display().to_string())
}

/// Reads a mapping that may leave objects unplaced (for `solve --fix`).
pub fn load_partial_mapping(path: &Path, app: &Application, cluster: &Cluster) -> Result<PartialMapping, InputErrors> {
    mapping_from_str(&read_file(path)?, &path.display().to_string(), app, cluster)
}

/// Expands ranges like `node01..node08` into node01, node02, ..., node08 (the width of the first
/// number is kept), in time linear in the names made, and at most [`caps::NAMES_PER_FILE`] names
/// in one file.
pub(crate) struct Expander {
    left: u64,
}

impl Expander {
    pub fn new() -> Self {
        Expander { left: caps::NAMES_PER_FILE }
    }

    /// One name or range; any string without `..` is one name.
    pub fn one(&mut self, s: &str) -> Result<Vec<String>, String> {
        let full = || format!("the file's name lists make more than {} names", caps::NAMES_PER_FILE);
        let Some((a, b)) = s.split_once("..") else {
            self.left = self.left.checked_sub(1).ok_or_else(full)?;
            return Ok(vec![s.to_string()]);
        };
        let shown = short(s);
        let split = |x: &str| {
            let x = x.trim();
            let cut = x.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            (x[..cut].to_string(), x[cut..].to_string())
        };
        let (pa, na) = split(a);
        let (pb, nb) = split(b);
        if na.is_empty() || nb.is_empty() || pa != pb {
            return Err(format!("cannot expand range \"{shown}\": write it as prefixNN..prefixMM"));
        }
        let (Ok(lo), Ok(hi)) = (na.parse::<u64>(), nb.parse::<u64>()) else {
            return Err(format!("bad number in range \"{shown}\""));
        };
        if hi < lo {
            return Err(format!("empty range \"{shown}\": {hi} < {lo}"));
        }
        if hi - lo >= caps::RANGE_NAMES {
            return Err(format!("range \"{shown}\" has more than {} names, the most a range has", caps::RANGE_NAMES));
        }
        let n = hi - lo + 1;
        let w = na.len();
        if pa.chars().count() + w.max(nb.len()) > caps::NAME_CHARS {
            return Err(format!("range \"{shown}\" makes names longer than {} characters", caps::NAME_CHARS));
        }
        if n > self.left {
            return Err(format!("range \"{shown}\": {}", full()));
        }
        self.left -= n;
        Ok((lo..=hi).map(|i| format!("{pa}{i:0w$}")).collect())
    }

    /// Every name of a list of names and ranges.
    pub fn all<'s>(&mut self, list: impl IntoIterator<Item = &'s String>) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        for s in list {
            out.extend(self.one(s)?);
        }
        Ok(out)
    }
}

/// Names of objects and nodes: letters, digits, `_`, `-`, `.`; not empty; at most
/// [`caps::NAME_CHARS`] characters.
pub(crate) fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars().count() <= caps::NAME_CHARS
        && s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
        && !s.contains("..")
}

/// A name as quoted in a message: at most 40 characters.
pub(crate) fn short(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// What `valid_name` asks for.
pub(crate) const NAME_RULE: &str = "names use letters, digits, _, - and . only, at most 200 characters";

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn expands_ranges() {
        let mut x = Expander::new();
        assert_eq!(x.one("node01..node03").unwrap(), vec!["node01", "node02", "node03"]);
        assert_eq!(x.one("n9..n11").unwrap(), vec!["n9", "n10", "n11"]);
        assert_eq!(x.one("solo").unwrap(), vec!["solo"]);
        assert!(x.one("a1..b2").is_err());
        assert!(x.one("n5..n1").is_err());
        assert!(x.one("n1..n100001").unwrap_err().contains("more than 100000 names"));
        assert!(x.one("n0..n18446744073709551615").unwrap_err().contains("more than 100000 names"));
    }

    #[test]
    fn a_file_expands_at_most_a_million_names() {
        // Ten ranges of 100,000 names are the budget; the eleventh is refused.
        let mut x = Expander::new();
        for _ in 0..10 {
            assert_eq!(x.one("n1..n100000").unwrap().len(), 100_000);
        }
        assert!(x.one("n1..n2").unwrap_err().contains("more than 1000000 names"));
        assert!(x.one("n1").unwrap_err().contains("more than 1000000 names"));
    }
}
