//! Reports: the only module that knows the output formats (text tables, JSON).
//!
//! Owns: rendering a `verify::Report` and a `solve::Outcome` for people (text), programs (JSON),
//! Graphviz (DOT), and as a mapping file `check` reads back. Units in output:
//! times in milliseconds, frequencies in hertz, bandwidths in MB/s (10^6 bytes per second).

mod errors;
mod export;
mod file;
mod gen;
mod json;
mod limit;
mod solve;
mod text;

pub use errors::errors_json;
pub use export::export_json;
pub use file::write_file;
pub use gen::{gen_app_toml, gen_cluster_toml, gen_mapping_toml};
pub use json::check_json;
pub use limit::{limit_json, limit_text, Target};
pub use solve::{mapping_dot, mapping_json, mapping_toml, solve_json, solve_text};
pub use text::check_text;
