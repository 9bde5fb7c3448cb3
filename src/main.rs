//! The `flowmap` command line: parses arguments, runs the library, prints, maps outcomes to exit
//! codes (0 sound, 1 unsound, 2 bad input). All logic lives in the library.

use clap::{Parser, Subcommand, ValueEnum};
use flowmap::csp::BuildOptions;
use flowmap::error::InputErrors;
use flowmap::model::{Application, Cluster};
use flowmap::parse::{self, Override};
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

#[derive(Clone, Copy, ValueEnum)]
enum MinimizeArg {
    /// The number of nodes used.
    Nodes,
}

/// What a module adds to its CPU's load in the allocation algorithm.
#[derive(Clone, Copy, ValueEnum)]
enum AllocationArg {
    /// Its CPU share LD_c: the published algorithm.
    Literal,
    /// Its load over an iteration, LD x T_exec / T_it (closer to the paper's measurements).
    IterationLoad,
}

impl AllocationArg {
    fn options(self) -> perf::Options {
        let allocation = match self {
            AllocationArg::Literal => perf::Allocation::Literal,
            AllocationArg::IterationLoad => perf::Allocation::IterationLoad,
        };
        perf::Options { allocation, ..Default::default() }
    }
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
        /// CPU-allocation variant of the performance model.
        #[arg(long, value_enum, default_value = "literal")]
        allocation: AllocationArg,
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
    Limit {
        app: PathBuf,
        cluster: PathBuf,
        /// A parameter of the application to push up (e.g. particles).
        #[arg(long, value_name = "NAME", conflicts_with = "frequency", required_unless_present = "frequency")]
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
        #[arg(long)]
        jobs: Option<usize>,
        /// Time limit for each probe, seconds.
        #[arg(long, value_name = "SECONDS")]
        time_limit: Option<f64>,
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// CPU-allocation variant of the performance model.
        #[arg(long, value_enum, default_value = "literal")]
        allocation: AllocationArg,
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
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// CPU-allocation variant of the performance model.
    #[arg(long, value_enum, default_value = "literal")]
    allocation: AllocationArg,
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

fn usage(msg: String) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
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
    time_limit: Option<f64>,
    seed: u64,
    format: Format,
    allocation: AllocationArg,
) -> ExitCode {
    let (app, cluster) = match load(app_path, cluster_path, &set) {
        Ok(x) => x,
        Err(e) => return bad_input(e),
    };
    let opts = SolveOptions {
        time_limit: time_limit.filter(|t| t.is_finite() && *t >= 0.0).map(Duration::from_secs_f64),
        build: BuildOptions { seed, ..Default::default() },
        perf: allocation.options(),
        stop: Some(stop_flag()),
        progress: progress_display(),
        ..Default::default()
    };
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1);
    let (target, outcome) = if let Some(name) = &param {
        let Some(&default) = app.parameters.get(name) else {
            return usage(format!("{}: --param {name}: no such parameter", app_path.display()));
        };
        let (lo, hi) = match range.as_deref().map(|r| r.split_once("..")) {
            None => (default, None),
            Some(Some((a, b))) => match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
                (Ok(a), Ok(b)) if a <= b => (a, Some(b)),
                _ => {
                    return usage(format!(
                        "--range: expected LO..HI with numbers LO <= HI, got {}",
                        range.unwrap_or_default()
                    ))
                }
            },
            Some(None) => return usage("--range: expected LO..HI".into()),
        };
        let integer = default.fract() == 0.0 && lo.fract() == 0.0 && hi.is_none_or(|h| h.fract() == 0.0);
        let src = match std::fs::read_to_string(app_path) {
            Ok(s) => s,
            Err(e) => return usage(format!("{}: {e}", app_path.display())),
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
            Err(e) => return usage(e),
        }
    } else {
        let m = frequency.as_deref().unwrap_or_default();
        let Some(g) = app.find_group(m).filter(|&g| app.group(g).is_module) else {
            return usage(format!("{}: --frequency {m}: no such module", app_path.display()));
        };
        (report::Target::Frequency(g), solve::limit::frequency_limit(&app, &cluster, g, &opts, 1000))
    };
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report::limit_json(&app, &cluster, &target, &outcome)).expect("json")
        ),
        _ => print!("{}", report::limit_text(&app, &cluster, &target, &outcome)),
    }
    use solve::limit::LimitStatus as L;
    match outcome.status {
        L::Exact | L::AboveRange => ExitCode::SUCCESS,
        L::NoneFeasible => ExitCode::from(1),
        L::Unknown | L::NonMonotone => ExitCode::from(3),
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
        Cmd::Check { app, cluster, mapping, set, format, allocation } => {
            check_cmd(&app, &cluster, &mapping, &set, format, allocation)
        }
        Cmd::Solve(args) => solve_cmd(args),
        Cmd::ExportCsp { app, cluster, set } => export_cmd(&app, &cluster, &set),
        Cmd::Gen { modules, nodes, seed, kind, models, clusters } => {
            gen_cmd(modules, nodes, seed, kind, &models, &clusters)
        }
        Cmd::Limit { app, cluster, param, frequency, range, set, jobs, time_limit, seed, format, allocation } => {
            limit_cmd(&app, &cluster, param, frequency, range, set, jobs, time_limit, seed, format, allocation)
        }
    }
}

fn check_cmd(
    app: &Path,
    cluster: &Path,
    mapping: &Path,
    set: &[Override],
    format: Format,
    allocation: AllocationArg,
) -> ExitCode {
    let (app, cluster) = match load(app, cluster, set) {
        Ok(x) => x,
        Err(e) => return bad_input(e),
    };
    let mapping = match parse::load_mapping(mapping, &app, &cluster) {
        Ok(m) => m,
        Err(e) => return bad_input(e),
    };
    let r = verify::check(&app, &cluster, &mapping, &allocation.options());
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
        allocation,
    } = a;
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
        build: BuildOptions {
            symmetry: !no_symmetry,
            filter_locality: !no_filter_locality,
            seed,
            ..Default::default()
        },
        perf: allocation.options(),
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
    match format {
        Format::Text => print!("{}", report::solve_text(&app, &cluster, &outcome)),
        Format::Json => {
            println!("{}", serde_json::to_string_pretty(&report::solve_json(&app, &cluster, &outcome)).expect("json"))
        }
        Format::Dot => match &outcome.mapping {
            Some(m) => print!("{}", report::mapping_dot(&app, &cluster, m)),
            None => eprintln!("no mapping to draw: {}", outcome.status.name()),
        },
    }
    if let (Some(path), Some(m), Status::Feasible | Status::Optimal) = (&out, &outcome.mapping, outcome.status) {
        if let Err(e) = std::fs::write(path, report::mapping_toml(&app, &cluster, m)) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    match outcome.status {
        Status::Feasible | Status::Optimal => ExitCode::SUCCESS,
        Status::Infeasible => ExitCode::from(1),
        Status::Unknown => ExitCode::from(3),
    }
}

fn export_cmd(app: &Path, cluster: &Path, set: &[Override]) -> ExitCode {
    let (app, cluster) = match load(app, cluster, set) {
        Ok(x) => x,
        Err(e) => return bad_input(e),
    };
    match solve::export_csp(&app, &cluster) {
        Ok(n) => {
            use std::io::Write;
            let text = serde_json::to_string(&report::export_json(&app, &cluster, &n)).expect("json");
            // A closed pipe (e.g. `| head`) is not an error worth a panic.
            let _ = writeln!(std::io::stdout().lock(), "{text}");
            ExitCode::SUCCESS
        }
        Err(reasons) => {
            for r in reasons {
                eprintln!("no mapping can exist: {r}");
            }
            ExitCode::from(1)
        }
    }
}

fn gen_cmd(modules: usize, nodes: usize, seed: u64, kind: GenKindArg, models: &Path, clusters: &Path) -> ExitCode {
    if modules == 0 || nodes == 0 {
        return usage("--modules and --nodes must be at least 1".into());
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
        if let Err(e) = path.parent().map(std::fs::create_dir_all).transpose().and_then(|_| std::fs::write(path, text))
        {
            return usage(format!("cannot write {}: {e}", path.display()));
        }
        println!("{}", path.display());
    }
    ExitCode::SUCCESS
}
