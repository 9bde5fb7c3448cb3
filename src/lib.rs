//! flowmap: place FlowVR-style dataflow applications on heterogeneous clusters and predict,
//! check and (later) search their mappings with the Jubertie-Melin performance model.
//!
//! Pipeline: `parse` (TOML -> validated `model` types) -> `perf` (the performance model) ->
//! `verify` (diagnostics and verdict) -> `report` (text, JSON). See ARCHITECTURE.md.

pub mod cli;
pub mod csp;
pub mod error;
pub mod explain;
pub mod gen;
pub mod headroom;
pub mod model;
pub mod parse;
pub mod perf;
pub mod report;
pub mod solve;
pub mod verify;
