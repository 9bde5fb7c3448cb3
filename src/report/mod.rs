//! Reports: the only module that knows the output formats (text tables, JSON, DOT, SVG).
//!
//! Owns: rendering a `verify::Report` and a `solve::Outcome` for people (text: a summary first,
//! grouped diagnostics, folded tables), programs (JSON, full precision), Graphviz (DOT: the
//! group graph or the instance view), SVG (the cluster view; the limit chart), and as a mapping
//! file `check` reads back. Units in output: times in milliseconds, frequencies in hertz,
//! bandwidths in MB/s (10^6 bytes per second).

mod chart;
mod diagnostics;
mod dot;
mod errors;
mod explain;
mod export;
mod file;
mod gen;
mod json;
mod limit;
mod solve;
mod style;
mod summary;
mod svg;
mod text;

pub use chart::{limit_svg, probe_curve, utilisation};
pub use dot::{mapping_dot, Detail};
pub use errors::errors_json;
pub use explain::{
    add_conflict, conflict_text, explain_json, explain_text, limit_explain_text, moves_json, moves_text,
    repair_overlay, OverlayBase,
};
pub use export::export_json;
pub use file::write_file;
pub use gen::{gen_app_toml, gen_cluster_toml, gen_mapping_toml};
pub use json::check_json;
pub use limit::{limit_json, limit_text, Target};
pub use solve::{mapping_json, mapping_toml, solve_json, solve_text, Provenance};
pub use style::{fold_names, natural, num, pct, Style};
pub use svg::cluster_svg;
pub use text::{check_text, summary_text, LEGEND};
