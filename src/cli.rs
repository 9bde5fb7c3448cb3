//! The command line's definitions (clap): every subcommand, argument and option with its help
//! text. `main.rs` runs them; the completions, the man page and the tests read them from here.
//! Nothing here prints or reads the environment: the caller says whether stdout is a terminal.

use crate::parse::Override;
use crate::perf::Headroom;
use crate::report::{Detail, Style};
use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "flowmap",
    version,
    about = "Map FlowVR-style dataflow applications onto clusters and predict their performance",
    long_about = "Map FlowVR-style dataflow applications onto heterogeneous clusters and predict their \
performance with the Jubertie-Melin model: check a mapping, find one (or prove none exists), \
minimise the nodes it uses, and find the largest data size or frequency that still fits."
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The application and the cluster every subcommand starts from.
#[derive(Args, Clone)]
pub struct Inputs {
    /// The application description (TOML; see docs/formats.md), e.g. models/fluid-particle.toml.
    #[arg(value_name = "APP")]
    pub app: PathBuf,
    /// The cluster description (TOML; may `extends` another), e.g. clusters/lifo-2007.toml.
    #[arg(value_name = "CLUSTER")]
    pub cluster: PathBuf,
    /// Override an application parameter, e.g. --set particles=250000 (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<Override>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Tables for people: a summary first, grouped diagnostics, folded tables.
    Text,
    /// Everything, at full precision, for programs.
    Json,
    /// Graphviz: the group graph (or, with --detail instances, every object in its node).
    Dot,
    /// A picture of the cluster (check, solve) or of the probes (limit), no external program needed.
    Svg,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DetailArg {
    /// One box per module group, edges aggregated per group pair and network.
    Groups,
    /// One box per object inside its node, one edge per instance-level edge.
    Instances,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Colour when stdout is a terminal.
    Auto,
    /// Always colour (e.g. for `less -R`).
    Always,
    /// Never colour.
    Never,
}

/// How to print results.
#[derive(Args, Clone)]
pub struct OutputArgs {
    /// Output format: text (people), json (programs), dot (Graphviz), svg (a picture).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// With --format dot: one box per group (groups) or per object (instances).
    #[arg(long, value_enum, default_value = "groups")]
    pub detail: DetailArg,
    /// Text: one table row per instance and every diagnostic, not folded.
    #[arg(long)]
    pub verbose: bool,
    /// Text: plain ASCII tables even on a terminal (they are ASCII when piped anyway).
    #[arg(long)]
    pub ascii: bool,
    /// Colour verdicts and errors: auto (when stdout is a terminal), always, never.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub color: ColorArg,
}

impl OutputArgs {
    /// The text style, given whether stdout is a terminal.
    pub fn style(&self, terminal: bool) -> Style {
        Style {
            unicode: terminal && !self.ascii,
            color: match self.color {
                ColorArg::Always => true,
                ColorArg::Never => false,
                ColorArg::Auto => terminal,
            },
            verbose: self.verbose,
        }
    }
    pub fn detail(&self) -> Detail {
        match self.detail {
            DetailArg::Groups => Detail::Groups,
            DetailArg::Instances => Detail::Instances,
        }
    }
}

/// Margins below capacity, for the verifier and the solver alike.
#[derive(Args, Clone, Default)]
pub struct HeadroomArgs {
    /// Use at most this share of every link's bandwidth and every CPU, e.g. 0.8 (sets both
    /// options below; default 1: exactly 100 % is allowed).
    #[arg(long, value_name = "SHARE")]
    pub headroom: Option<f64>,
    /// Use at most this share of every link's bandwidth, each way (overrides --headroom).
    #[arg(long, value_name = "SHARE")]
    pub link_headroom: Option<f64>,
    /// Keep every CPU's load over an iteration at or below this share (overrides --headroom).
    #[arg(long, value_name = "SHARE")]
    pub cpu_headroom: Option<f64>,
}

impl HeadroomArgs {
    /// The headroom asked for, or a message when a share is not in (0, 1].
    pub fn headroom(&self) -> Result<Headroom, String> {
        let check = |name: &str, v: Option<f64>| -> Result<Option<f64>, String> {
            match v {
                Some(x) if !(x > 0.0 && x <= 1.0) => Err(format!("--{name}: expected a share in (0, 1], got {x}")),
                _ => Ok(v),
            }
        };
        let all = check("headroom", self.headroom)?.unwrap_or(1.0);
        Ok(Headroom {
            link: check("link-headroom", self.link_headroom)?.unwrap_or(all),
            cpu: check("cpu-headroom", self.cpu_headroom)?.unwrap_or(all),
        })
    }
}

/// How the performance model is applied: the margins below capacity and the allocation variant
/// (every subcommand that predicts takes both).
#[derive(Args, Clone)]
pub struct ModelArgs {
    #[command(flatten)]
    pub headroom: HeadroomArgs,
    /// CPU-allocation variant of the performance model.
    #[arg(long, value_enum, default_value = "literal")]
    pub allocation: AllocationArg,
}

impl ModelArgs {
    /// The model's options, or a message when a headroom share is not in (0, 1].
    pub fn options(&self) -> Result<crate::perf::Options, String> {
        Ok(crate::perf::Options {
            headroom: self.headroom.headroom()?,
            allocation: self.allocation.into(),
            ..Default::default()
        })
    }
}

/// What a module adds to its CPU's load in the allocation algorithm.
#[derive(Clone, Copy, ValueEnum)]
pub enum AllocationArg {
    /// Its CPU share LD_c: the published algorithm.
    Literal,
    /// Its load over an iteration, LD x T_exec / T_it (closer to the paper's measurements).
    IterationLoad,
}

impl From<AllocationArg> for crate::perf::Allocation {
    fn from(a: AllocationArg) -> Self {
        match a {
            AllocationArg::Literal => crate::perf::Allocation::Literal,
            AllocationArg::IterationLoad => crate::perf::Allocation::IterationLoad,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub enum MinimizeArg {
    /// The number of nodes used.
    Nodes,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
pub enum GenFamilyArg {
    /// Stages of parallel modules, one processor cost (models/generated).
    Pipeline,
    /// Pipelines with MPI rings, filters, pinned displays, two processor types, partial networks
    /// and binding requirements (models/realistic).
    Realistic,
    /// The realistic shape made adversarial: dense planted mappings that share CPUs, bandwidth
    /// 1.02x the planted use, interaction loops, bound MPI ranks, more requirements (models/hard).
    Hard,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum GenKindArg {
    /// A planted sound mapping exists.
    Feasible,
    /// Like feasible, with resources just large enough.
    Tight,
    /// pipeline family: no sound mapping exists (more self-paced modules than CPUs).
    Infeasible,
    /// realistic family: a display node with too few CPUs for its pinned modules.
    InfeasibleCpu,
    /// realistic family: a link between pinned objects heavier than any network they share.
    InfeasibleLink,
    /// realistic family: a minimum frequency no processor type reaches.
    InfeasibleRequirement,
    /// hard family: a partition node too small for a simulation whose MPI ranks must share a node.
    InfeasiblePack,
    /// hard family: a minimum frequency just above an interaction loop's shortest round trip.
    InfeasibleCycle,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Predict a mapping's performance and say what is wrong with it (exit 0 sound, 1 unsound, 2 bad input).
    Check(CheckArgs),
    /// Find a sound mapping, or prove there is none (exit 0 found, 1 none exists, 2 bad input, 3 no answer in time).
    Solve(SolveArgs),
    /// The largest parameter value, or the highest module frequency, with a sound mapping
    /// (exit 0 found, 1 no value in range has one, 2 bad input, 3 inconclusive).
    #[command(group(ArgGroup::new("target").required(true).args(["param", "frequency"])))]
    Limit(LimitArgs),
    /// Why no sound mapping exists: a minimal conflict of facts you wrote, with the numbers that
    /// make it bind, and the smallest changes that make the instance feasible, each verified by
    /// solving the changed instance (exit 0 feasible, 1 explained, 2 bad input, 3 no answer in time).
    Explain(ExplainArgs),
    /// Write the static CSP as solver-neutral JSON (for the CP-SAT reference script in benches/).
    ExportCsp {
        #[command(flatten)]
        inputs: Inputs,
    },
    /// Generate a synthetic instance (application, cluster, planted mapping), seeded.
    Gen(GenArgs),
    /// Print a shell completion script (install: see README, "Shell completions and man page").
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per subcommand into a directory.
    Man {
        /// Write flowmap.1 and flowmap-SUBCOMMAND.1 here instead of printing flowmap.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// The mapping to check (TOML: [place] and [[route]]; see docs/formats.md).
    #[arg(value_name = "MAPPING")]
    pub mapping: PathBuf,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args)]
pub struct SolveArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// A partial mapping to complete (a complete one is validated).
    #[arg(long, value_name = "MAPPING")]
    pub fix: Option<PathBuf>,
    /// Stop after this many seconds in all (parsing, presolve, search; the best answer so far is
    /// returned): from 0 to 1,000,000.
    #[arg(long, value_name = "SECONDS", value_parser = crate::parse::args::time_limit, allow_negative_numbers = true)]
    pub time_limit: Option<std::time::Duration>,
    /// Seed of the solver's random choices (same seed, same answer).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Write the mapping found as a file `flowmap check` accepts (starting with a comment
    /// naming the inputs, the --set values and the flowmap version).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Do not order interchangeable instances and identical nodes.
    #[arg(long)]
    pub no_symmetry: bool,
    /// Let filters sit on nodes other than their sources' and destinations'.
    #[arg(long)]
    pub no_filter_locality: bool,
    /// Find a mapping that minimises this and prove it optimal (or report best and bound).
    #[arg(long, value_enum)]
    pub minimize: Option<MinimizeArg>,
    /// Skip the greedy warm start: search with the CSP from the first candidate.
    #[arg(long)]
    pub no_warm_start: bool,
    /// Skip large-neighbourhood search (repairing and improving mappings on small sub-models).
    #[arg(long)]
    pub no_lns: bool,
    /// Build the CSP only up to this many placement and edge-end literals; larger instances
    /// get the greedy mapping and the static bound (the CSP of 1,000 modules on 256 nodes
    /// would take ~7 GB).
    #[arg(long, default_value_t = 400_000, value_name = "LITERALS")]
    pub max_csp_size: usize,
    /// With --minimize: run this many searches in parallel (seeds seed, seed + 1, ...); the
    /// first proof stops the others. The answer depends only on the input, seed and job count.
    #[arg(long, default_value = "1", value_parser = crate::parse::args::jobs, allow_negative_numbers = true)]
    pub jobs: usize,
    /// Report progress on stderr every few seconds even when it is not a terminal (for logs);
    /// on a terminal a status line is shown anyway.
    #[arg(long)]
    pub progress: bool,
    /// When infeasibility is proven by search (no reason found before it), also compute a
    /// minimal conflict (as `flowmap explain` does, without repairs); it is computed anyway when
    /// a reason was found before search.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args)]
pub struct LimitArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// A parameter of the application to push up (e.g. particles); or use --frequency.
    #[arg(long, value_name = "NAME")]
    pub param: Option<String>,
    /// A module whose frequency to push up; or use --param.
    #[arg(long, value_name = "MODULE")]
    pub frequency: Option<String>,
    /// Values to search, LO..HI (default: from the parameter's value, doubling until none fits).
    #[arg(long, value_name = "LO..HI")]
    pub range: Option<String>,
    /// Probes solved in parallel (default: all cores).
    #[arg(long, value_parser = crate::parse::args::jobs, allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    /// Time limit for the whole search (every probe), seconds, from 0 to 1,000,000.
    #[arg(long, value_name = "SECONDS", value_parser = crate::parse::args::time_limit, allow_negative_numbers = true)]
    pub time_limit: Option<std::time::Duration>,
    /// Seed of the solver's random choices (same seed, same answer).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Report progress on stderr every few seconds even when it is not a terminal (for logs).
    #[arg(long)]
    pub progress: bool,
    /// Explain the edge: a minimal conflict at the smallest infeasible value, and the repairs
    /// that raise the limit, with the new limit (takes longer: it solves changed instances).
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    pub inputs: Inputs,
    /// A partial or complete mapping: explain why it cannot be completed into a sound one.
    #[arg(long, value_name = "MAPPING")]
    pub fix: Option<PathBuf>,
    /// Budget for the whole explanation (proof, conflict and repairs), seconds, above 0 and at
    /// most 1,000,000.
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = crate::parse::args::positive_time_limit, allow_negative_numbers = true)]
    pub time_limit: std::time::Duration,
    /// Time limit of each solve of a changed instance while searching the conflict, seconds,
    /// above 0 (repairs: at most 3 s each; a repair not verified in time is not printed).
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = crate::parse::args::positive_time_limit, allow_negative_numbers = true)]
    pub call_limit: std::time::Duration,
    /// Only the conflict: do not search repairs.
    #[arg(long)]
    pub no_repairs: bool,
    /// Write each repair's overlay into this directory (repair-N-cluster.toml or
    /// repair-N-app.toml, extending the inputs by their absolute paths) with the sound mapping
    /// found for it (repair-N-mapping.toml, for `flowmap check`).
    #[arg(long, value_name = "DIR")]
    pub write_repairs: Option<PathBuf>,
    /// Seed of the solver's random choices (same seed, same answer).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Solves run in parallel where independent (default: all cores).
    #[arg(long, value_parser = crate::parse::args::jobs, allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Args)]
pub struct GenArgs {
    /// Which family of instances.
    #[arg(long, value_enum, default_value = "pipeline")]
    pub family: GenFamilyArg,
    /// Module instances to generate (filters not counted).
    #[arg(long, default_value_t = 50)]
    pub modules: usize,
    /// Cluster nodes.
    #[arg(long, default_value_t = 16)]
    pub nodes: usize,
    /// Seed of the generator (same seed, same files).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// What kind of instance to make.
    #[arg(long, value_enum, default_value = "feasible")]
    pub kind: GenKindArg,
    /// Directory for the application and planted mapping (mapping in DIR/mappings)
    /// [default: models/generated, models/realistic or models/hard].
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,
    /// Directory for the cluster [default: clusters/generated, clusters/realistic or clusters/hard].
    #[arg(long, value_name = "DIR")]
    pub clusters: Option<PathBuf>,
}

/// Every argument of every subcommand (and the top level) that has no help text, as
/// `subcommand: argument` (empty when all are documented).
pub fn undocumented() -> Vec<String> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path}: {id}"));
            }
        }
        for s in cmd.get_subcommands() {
            if s.get_about().is_none() && s.get_name() != "help" {
                out.push(format!("{path}: subcommand {}", s.get_name()));
            }
            walk(s, &format!("{path} {}", s.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(&Cli::command(), "flowmap", &mut out);
    out
}
