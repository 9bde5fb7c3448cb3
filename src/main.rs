//! The `flowmap` command line: parses arguments, runs the library, prints, maps outcomes to exit
//! codes (0 sound, 1 unsound, 2 bad input). All logic lives in the library.

use clap::{Parser, Subcommand, ValueEnum};
use flowmap::csp::BuildOptions;
use flowmap::error::InputErrors;
use flowmap::model::{Application, Cluster};
use flowmap::parse::{self, Override};
use flowmap::solve::{self, SolveOptions, Status};
use flowmap::{perf, report, verify};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "flowmap",
    version,
    about = "Map FlowVR-style dataflow applications onto clusters and predict their performance"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Format {
    Text,
    Json,
    Dot,
}

#[derive(Subcommand)]
enum Cmd {
    /// Predict a mapping's performance and say what is wrong with it (exit 0 sound, 1 unsound, 2 bad input).
    Check {
        app: PathBuf,
        cluster: PathBuf,
        mapping: PathBuf,
        /// Override an application parameter, e.g. --set particles=250000.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<Override>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Find a sound mapping, or prove there is none (exit 0 found, 1 none exists, 2 bad input, 3 time limit).
    Solve {
        app: PathBuf,
        cluster: PathBuf,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<Override>,
        /// A partial mapping to complete (a complete one is validated).
        #[arg(long, value_name = "MAPPING")]
        fix: Option<PathBuf>,
        /// Stop searching after this many seconds.
        #[arg(long, value_name = "SECONDS")]
        time_limit: Option<f64>,
        /// Seed of the solver's random choices (same seed, same answer).
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Write the mapping found as a file `flowmap check` accepts.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// Do not order interchangeable instances and identical nodes.
        #[arg(long)]
        no_symmetry: bool,
        /// Let filters sit on nodes other than their sources' and destinations'.
        #[arg(long)]
        no_filter_locality: bool,
    },
}

/// Reads both descriptions, reporting the problems of both files together.
fn load(app: &Path, cluster: &Path, set: &[Override]) -> Result<(Application, Cluster), InputErrors> {
    match (parse::load_application(app, set), parse::load_cluster(cluster)) {
        (Ok(a), Ok(c)) => Ok((a, c)),
        (a, c) => {
            let mut all = a.err().map(|e| e.0).unwrap_or_default();
            all.extend(c.err().map(|e| e.0).unwrap_or_default());
            Err(InputErrors(all))
        }
    }
}

fn bad_input(e: InputErrors) -> ExitCode {
    eprintln!("{e}");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.cmd {
        Cmd::Check { app, cluster, mapping, set, format } => {
            let (app, cluster) = match load(&app, &cluster, &set) {
                Ok(x) => x,
                Err(e) => return bad_input(e),
            };
            let mapping = match parse::load_mapping(&mapping, &app, &cluster) {
                Ok(m) => m,
                Err(e) => return bad_input(e),
            };
            let r = verify::check(&app, &cluster, &mapping, &perf::Options::default());
            match format {
                Format::Text => print!("{}", report::check_text(&app, &cluster, &mapping, &r)),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&report::check_json(&app, &cluster, &mapping, &r)).expect("json")
                ),
                Format::Dot => print!("{}", report::mapping_dot(&app, &cluster, &mapping)),
            }
            if r.verdict == verify::Verdict::Sound {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Cmd::Solve { app, cluster, set, fix, time_limit, seed, out, format, no_symmetry, no_filter_locality } => {
            let (app, cluster) = match load(&app, &cluster, &set) {
                Ok(x) => x,
                Err(e) => return bad_input(e),
            };
            let fix = match fix.map(|f| parse::load_partial_mapping(&f, &app, &cluster)).transpose() {
                Ok(f) => f,
                Err(e) => return bad_input(e),
            };
            if let Some(t) = time_limit {
                if !(t.is_finite() && t >= 0.0) {
                    eprintln!("error: --time-limit: expected a number of seconds >= 0, got {t}");
                    return ExitCode::from(2);
                }
            }
            let opts = SolveOptions {
                time_limit: time_limit.map(Duration::from_secs_f64),
                build: BuildOptions { symmetry: !no_symmetry, filter_locality: !no_filter_locality, seed },
                perf: perf::Options::default(),
            };
            let outcome = solve::solve(&app, &cluster, fix.as_ref(), &opts);
            match format {
                Format::Text => print!("{}", report::solve_text(&app, &cluster, &outcome)),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&report::solve_json(&app, &cluster, &outcome)).expect("json")
                ),
                Format::Dot => match &outcome.mapping {
                    Some(m) => print!("{}", report::mapping_dot(&app, &cluster, m)),
                    None => eprintln!("no mapping to draw: {}", outcome.status.name()),
                },
            }
            if let (Some(path), Some(m), Status::Feasible) = (&out, &outcome.mapping, outcome.status) {
                if let Err(e) = std::fs::write(path, report::mapping_toml(&app, &cluster, m)) {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
            match outcome.status {
                Status::Feasible => ExitCode::SUCCESS,
                Status::Infeasible => ExitCode::from(1),
                Status::Unknown => ExitCode::from(3),
            }
        }
    }
}
