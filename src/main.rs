//! The `flowmap` command line: parses arguments, runs the library, prints, maps outcomes to exit
//! codes (0 sound, 1 unsound, 2 bad input, 3 no answer, 4 output not written). All logic lives in
//! the library.

use clap::{ArgGroup, Parser, Subcommand, ValueEnum};
use flowmap::csp::BuildOptions;
use flowmap::error::{InputError, InputErrors};
use flowmap::parse::{self, Inputs, Override};
use flowmap::solve::{self, Objective, Progress, ProgressFn, SolveOptions, Status};
use flowmap::{perf, report, verify};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

// mimalloc: the model allocates many small vectors per prediction; measured 25 % faster
// `check` (20.9 -> 15.6 µs on FluidParticle) than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum LimitFormat {
    Text,
    Json,
}

/// Exit code when the output could not be written (stdout or an output file): not bad input.
const IO_ERROR: u8 = 4;

#[derive(Clone, Copy, ValueEnum)]
enum MinimizeArg {
    /// The number of nodes used.
    Nodes,
}

#[derive(Clone, Copy, ValueEnum)]
enum GenKindArg {
    Feasible,
    Tight,
    Infeasible,
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
    Solve(SolveArgs),
    /// Write the static CSP as solver-neutral JSON (for the CP-SAT reference script in benches/).
    ExportCsp {
        app: PathBuf,
        cluster: PathBuf,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<Override>,
    },
    /// Generate a synthetic instance (application, cluster, planted mapping), seeded.
    Gen {
        #[arg(long, default_value_t = 50)]
        modules: usize,
        #[arg(long, default_value_t = 16)]
        nodes: usize,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_enum, default_value = "feasible")]
        kind: GenKindArg,
        /// Directory for the application and planted mapping (mapping in DIR/mappings).
        #[arg(long, default_value = "models/generated")]
        models: PathBuf,
        /// Directory for the cluster.
        #[arg(long, default_value = "clusters/generated")]
        clusters: PathBuf,
    },
    /// The largest parameter value, or the highest module frequency, with a sound mapping
    /// (exit 0 found, 1 no value in range has one, 2 bad input, 3 inconclusive).
    #[command(group(ArgGroup::new("target").required(true).args(["param", "frequency"])))]
    Limit {
        app: PathBuf,
        cluster: PathBuf,
        /// A parameter of the application to push up (e.g. particles).
        #[arg(long, value_name = "NAME")]
        param: Option<String>,
        /// A module whose frequency to push up.
        #[arg(long, value_name = "MODULE")]
        frequency: Option<String>,
        /// Values to search, LO..HI (default: from the parameter's value, doubling until none fits).
        #[arg(long, value_name = "LO..HI")]
        range: Option<String>,
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<Override>,
        /// Probes solved in parallel (default: all cores).
        #[arg(long, value_parser = parse::args::jobs, allow_negative_numbers = true)]
        jobs: Option<usize>,
        /// Time limit for each probe, seconds.
        #[arg(long, value_name = "SECONDS", value_parser = parse::args::time_limit, allow_negative_numbers = true)]
        time_limit: Option<Duration>,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[arg(long, value_enum, default_value = "text")]
        format: LimitFormat,
    },
}

#[derive(clap::Args)]
struct SolveArgs {
    app: PathBuf,
    cluster: PathBuf,
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<Override>,
    /// A partial mapping to complete (a complete one is validated).
    #[arg(long, value_name = "MAPPING")]
    fix: Option<PathBuf>,
    /// Stop searching after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = parse::args::time_limit, allow_negative_numbers = true)]
    time_limit: Option<Duration>,
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
    /// Find a mapping that minimises this and prove it optimal (or report best and bound).
    #[arg(long, value_enum)]
    minimize: Option<MinimizeArg>,
    /// Skip the greedy warm start: search with the CSP from the first candidate.
    #[arg(long)]
    no_warm_start: bool,
    /// Build the CSP only up to this many placement and edge-end literals; larger instances
    /// get the greedy mapping and the static bound (the CSP of 1,000 modules on 256 nodes
    /// would take ~7 GB).
    #[arg(long, default_value_t = 400_000)]
    max_csp_size: usize,
    /// With --minimize: run this many searches in parallel (seeds seed, seed + 1, ...); the
    /// first proof stops the others. The answer depends only on the input, seed and job count.
    #[arg(long, default_value_t = 1, value_parser = parse::args::jobs, allow_negative_numbers = true)]
    jobs: usize,
}

/// Reads both descriptions (the problems of both files together), warnings to stderr.
fn load(app: &Path, cluster: &Path, set: &[Override], json: bool) -> Result<Inputs, ExitCode> {
    let inputs = parse::load_inputs(app, cluster, set).map_err(|e| bad_input(e, json))?;
    for w in &inputs.warnings {
        say(&format!("warning: {w}"));
    }
    Ok(inputs)
}

/// Bad input: the errors on stderr and, with `--format json`, as a JSON object on stdout; exit 2.
fn bad_input(e: InputErrors, json: bool) -> ExitCode {
    say(&e.to_string());
    if json {
        let _ = emit(&format!("{:#}\n", report::errors_json(&e)));
    }
    ExitCode::from(2)
}

/// Writes the output to stdout. A closed pipe (`| head`) ends the output quietly; any other
/// failure (a full disk) is reported, exit 4.
fn emit(text: &str) -> Result<(), ExitCode> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            say(&format!("error: cannot write the output: {e}"));
            Err(ExitCode::from(IO_ERROR))
        }
        _ => Ok(()),
    }
}

/// A line on stderr (never a panic when stderr is gone).
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// A flag raised by Ctrl-C: searches stop and report the best answer so far.
fn stop_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let _ = ctrlc::set_handler(move || f.store(true, Ordering::Relaxed));
    flag
}

/// A spinner on stderr with elapsed time, best and bound, only when stderr is a terminal.
fn progress_display() -> Option<ProgressFn> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new_spinner();
    Some(Arc::new(move |p: &Progress| {
        let best = p.best.map(|b| b.to_string()).unwrap_or_else(|| "-".into());
        let bound = p.bound.map(|b| b.to_string()).unwrap_or_else(|| "-".into());
        if p.probes > 0 {
            bar.set_message(format!("{:.1} s  probes done {}", p.elapsed_s, p.probes));
        } else {
            bar.set_message(format!("{:.1} s  best {best}  bound {bound}  rejected {}", p.elapsed_s, p.rejected));
        }
        bar.tick();
    }))
}

/// Bad input on the command line (not in a file).
fn usage(item: &str, msg: String, json: bool) -> ExitCode {
    bad_input(InputError::new("command line", None, item, msg).into(), json)
}

#[allow(clippy::too_many_arguments)]
fn limit_cmd(
    app_path: &Path,
    cluster_path: &Path,
    param: Option<String>,
    frequency: Option<String>,
    range: Option<String>,
    set: Vec<Override>,
    jobs: Option<usize>,
    time_limit: Option<Duration>,
    seed: u64,
    format: LimitFormat,
) -> ExitCode {
    let json = format == LimitFormat::Json;
    let Inputs { app, cluster, .. } = match load(app_path, cluster_path, &set, json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let opts = SolveOptions {
        time_limit,
        build: BuildOptions { seed, ..Default::default() },
        stop: Some(stop_flag()),
        progress: progress_display(),
        ..Default::default()
    };
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let (target, outcome) = if let Some(name) = &param {
        let Some(&default) = app.parameters.get(name) else {
            let msg = format!("no such parameter in {}", app_path.display());
            return usage(&format!("--param {name}"), msg, json);
        };
        let (lo, hi) = match range.as_deref().map(|r| r.split_once("..")) {
            None => (default, None),
            Some(Some((a, b))) => match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
                (Ok(a), Ok(b)) if a <= b => (a, Some(b)),
                _ => {
                    let msg = format!("expected LO..HI with numbers LO <= HI, got {}", range.unwrap_or_default());
                    return usage("--range", msg, json);
                }
            },
            Some(None) => return usage("--range", "expected LO..HI".into(), json),
        };
        let integer = default.fract() == 0.0 && lo.fract() == 0.0 && hi.is_none_or(|h| h.fract() == 0.0);
        let src = match parse::read_file(app_path) {
            Ok(s) => s,
            Err(e) => return bad_input(e, json),
        };
        let file = app_path.display().to_string();
        let make = move |v: f64| -> Result<flowmap::model::Application, String> {
            let mut o = set.clone();
            o.retain(|x| &x.name != name);
            o.push(Override { name: name.clone(), value: v });
            parse::application_from_str(&src, &file, &o).map_err(|e| e.to_string())
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().expect("thread pool");
        match pool.install(|| solve::limit::param_limit(&make, &cluster, lo, hi, integer, jobs, &opts)) {
            Ok(o) => (report::Target::Param(name), o),
            Err(e) => return usage(&format!("--param {name}"), e, json),
        }
    } else {
        let m = frequency.as_deref().unwrap_or_default();
        let Some(g) = app.find_group(m).filter(|&g| app.group(g).is_module) else {
            let msg = format!("no such module in {}", app_path.display());
            return usage(&format!("--frequency {m}"), msg, json);
        };
        (report::Target::Frequency(g), solve::limit::frequency_limit(&app, &cluster, g, &opts, 1000))
    };
    let text = match format {
        LimitFormat::Json => format!("{:#}\n", report::limit_json(&app, &cluster, &target, &outcome)),
        LimitFormat::Text => report::limit_text(&app, &cluster, &target, &outcome),
    };
    if let Err(code) = emit(&text) {
        return code;
    }
    use solve::limit::LimitStatus as L;
    match outcome.status {
        L::Exact | L::AboveRange => ExitCode::SUCCESS,
        L::NoneFeasible => ExitCode::from(1),
        L::Unknown | L::NonMonotone => ExitCode::from(3),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            if !e.use_stderr() {
                return ExitCode::SUCCESS; // --help, --version
            }
            let args: Vec<String> = std::env::args().collect();
            if args.windows(2).any(|w| w == ["--format", "json"]) || args.iter().any(|a| a == "--format=json") {
                let first = e.to_string().lines().next().unwrap_or("").trim_start_matches("error: ").to_string();
                let e = InputErrors::from(InputError::new("command line", None, "arguments", first));
                let _ = emit(&format!("{:#}\n", report::errors_json(&e)));
            }
            return ExitCode::from(2);
        }
    };
    match cli.cmd {
        Cmd::Check { app, cluster, mapping, set, format } => check_cmd(&app, &cluster, &mapping, &set, format),
        Cmd::Solve(args) => solve_cmd(args),
        Cmd::ExportCsp { app, cluster, set } => export_cmd(&app, &cluster, &set),
        Cmd::Gen { modules, nodes, seed, kind, models, clusters } => {
            gen_cmd(modules, nodes, seed, kind, &models, &clusters)
        }
        Cmd::Limit { app, cluster, param, frequency, range, set, jobs, time_limit, seed, format } => {
            limit_cmd(&app, &cluster, param, frequency, range, set, jobs, time_limit, seed, format)
        }
    }
}

fn check_cmd(app: &Path, cluster: &Path, mapping: &Path, set: &[Override], format: Format) -> ExitCode {
    let json = format == Format::Json;
    let Inputs { app, cluster, .. } = match load(app, cluster, set, json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let mapping = match parse::load_mapping(mapping, &app, &cluster) {
        Ok(m) => m,
        Err(e) => return bad_input(e, json),
    };
    let r = verify::check(&app, &cluster, &mapping, &perf::Options::default());
    let text = match format {
        Format::Text => report::check_text(&app, &cluster, &mapping, &r),
        Format::Json => format!("{:#}\n", report::check_json(&app, &cluster, &mapping, &r)),
        Format::Dot => report::mapping_dot(&app, &cluster, &mapping),
    };
    if let Err(code) = emit(&text) {
        return code;
    }
    if r.verdict == verify::Verdict::Sound {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn solve_cmd(a: SolveArgs) -> ExitCode {
    let SolveArgs {
        app,
        cluster,
        set,
        fix,
        time_limit,
        seed,
        out,
        format,
        no_symmetry,
        no_filter_locality,
        minimize,
        no_warm_start,
        max_csp_size,
        jobs,
    } = a;
    let json = format == Format::Json;
    if let Some(out) = &out {
        let inputs: Vec<&Path> =
            [Some(&app), Some(&cluster), fix.as_ref()].into_iter().flatten().map(|p| p.as_path()).collect();
        if let Err(msg) = parse::args::out_path(out, &inputs) {
            return usage("--out", msg, json);
        }
    }
    let Inputs { app, cluster, .. } = match load(&app, &cluster, &set, json) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let fix = match fix.map(|f| parse::load_partial_mapping(&f, &app, &cluster)).transpose() {
        Ok(f) => f,
        Err(e) => return bad_input(e, json),
    };
    let opts = SolveOptions {
        time_limit,
        build: BuildOptions {
            symmetry: !no_symmetry,
            filter_locality: !no_filter_locality,
            seed,
            ..Default::default()
        },
        perf: perf::Options::default(),
        minimize: minimize.map(|MinimizeArg::Nodes| Objective::Nodes),
        stop: Some(stop_flag()),
        progress: progress_display(),
        warm_start: !no_warm_start,
        max_csp_size,
        jobs,
        // One-shot process: skip freeing the model (about 1 s at 300 modules).
        leak_model: true,
    };
    let outcome = solve::solve(&app, &cluster, fix.as_ref(), &opts);
    let text = match (format, &outcome.mapping) {
        (Format::Text, _) => report::solve_text(&app, &cluster, &outcome),
        (Format::Json, _) => format!("{:#}\n", report::solve_json(&app, &cluster, &outcome)),
        (Format::Dot, Some(m)) => report::mapping_dot(&app, &cluster, m),
        (Format::Dot, None) => {
            say(&format!("no mapping to draw: {}", outcome.status.name()));
            String::new()
        }
    };
    let written = emit(&text);
    if let (Some(path), Some(m), Status::Feasible | Status::Optimal) = (&out, &outcome.mapping, outcome.status) {
        if let Err(e) = report::write_file(path, &report::mapping_toml(&app, &cluster, m)) {
            say(&format!("error: cannot write {}: {e}", path.display()));
            return ExitCode::from(IO_ERROR);
        }
    }
    if let Err(code) = written {
        return code;
    }
    match outcome.status {
        Status::Feasible | Status::Optimal => ExitCode::SUCCESS,
        Status::Infeasible => ExitCode::from(1),
        Status::Unknown => ExitCode::from(3),
    }
}

fn export_cmd(app: &Path, cluster: &Path, set: &[Override]) -> ExitCode {
    let Inputs { app, cluster, .. } = match load(app, cluster, set, false) {
        Ok(x) => x,
        Err(code) => return code,
    };
    match solve::export_csp(&app, &cluster) {
        Ok(n) => match emit(&format!("{}\n", report::export_json(&app, &cluster, &n))) {
            Ok(()) => ExitCode::SUCCESS,
            Err(code) => code,
        },
        Err(reasons) => {
            for r in reasons {
                say(&format!("no mapping can exist: {r}"));
            }
            ExitCode::from(1)
        }
    }
}

fn gen_cmd(modules: usize, nodes: usize, seed: u64, kind: GenKindArg, models: &Path, clusters: &Path) -> ExitCode {
    let caps = (parse::caps::OBJECTS, parse::caps::NODES);
    if modules == 0 || nodes == 0 || modules > caps.0 || nodes > caps.1 {
        let msg = format!("--modules must be from 1 to {}, --nodes from 1 to {}", caps.0, caps.1);
        return usage("--modules, --nodes", msg, false);
    }
    let kind = match kind {
        GenKindArg::Feasible => flowmap::gen::GenKind::Feasible,
        GenKindArg::Tight => flowmap::gen::GenKind::Tight,
        GenKindArg::Infeasible => flowmap::gen::GenKind::Infeasible,
    };
    let g = flowmap::gen::generate(&flowmap::gen::GenOptions { modules, nodes, seed, kind });
    let files = [
        (models.join(format!("{}.toml", g.name)), report::gen_app_toml(&g)),
        (clusters.join(format!("{}.toml", g.name)), report::gen_cluster_toml(&g)),
        (models.join("mappings").join(format!("{}.toml", g.name)), report::gen_mapping_toml(&g)),
    ];
    for (path, text) in files.iter().take(if g.place.is_empty() { 2 } else { 3 }) {
        if let Err(e) =
            path.parent().map(std::fs::create_dir_all).transpose().and_then(|_| report::write_file(path, text))
        {
            say(&format!("error: cannot write {}: {e}", path.display()));
            return ExitCode::from(IO_ERROR);
        }
        if let Err(code) = emit(&format!("{}\n", path.display())) {
            return code;
        }
    }
    ExitCode::SUCCESS
}
