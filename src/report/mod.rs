//! Reports: the only module that knows the output formats (text tables, JSON).
//!
//! Owns: rendering a `verify::Report` for people (text) and programs (JSON). Units in output:
//! times in milliseconds, frequencies in hertz, bandwidths in MB/s (10^6 bytes per second).

mod json;
mod text;

pub use json::check_json;
pub use text::check_text;
