//! The `flowmap` command line: parses arguments, runs the library, prints, maps outcomes to exit
//! codes (0 sound, 1 unsound, 2 bad input). All logic lives in the library.

use clap::{Parser, Subcommand, ValueEnum};
use flowmap::error::InputErrors;
use flowmap::parse::{self, Override};
use flowmap::{perf, report, verify};
use std::path::PathBuf;
use std::process::ExitCode;

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

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
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
        Cmd::Check {
            app,
            cluster,
            mapping,
            set,
            format,
        } => {
            let app = match parse::load_application(&app, &set) {
                Ok(a) => a,
                Err(e) => return bad_input(e),
            };
            let cluster = match parse::load_cluster(&cluster) {
                Ok(c) => c,
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
                    serde_json::to_string_pretty(&report::check_json(&app, &cluster, &mapping, &r))
                        .expect("json")
                ),
            }
            if r.verdict == verify::Verdict::Sound {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}
