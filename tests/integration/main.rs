//! The one integration-test binary. Every expected number is computed by hand in the test,
//! taken from the papers' tables, or obtained by a second method; see each test's comments.

mod bad_input;
mod cli;
mod cli_io;
mod dependencies;
mod explain;
mod fuzz;
mod generated;
mod hand;
mod hard;
mod optimise;
mod paper;
mod realistic;
mod reports;
mod robustness;
mod solver;
mod support;
