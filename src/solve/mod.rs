//! The solver: searches the CSP with pumpkin and closes the loop with the verifier.
//!
//! Owns: running pumpkin (time limit, seed), decoding each solution into a candidate mapping,
//! checking it with `verify::check`, turning rejections into nogoods (`nogood`) and searching
//! on, and the outcome values (`Status`). Every mapping it returns has passed the verifier;
//! `Infeasible` is returned only when pumpkin proved that no candidate is left.

pub mod greedy;
pub mod limit;
pub mod lns;
mod nogood;
pub mod shapes;
pub mod walk;

use crate::csp::{Analysis, BuildOptions, Lit, Model};
use crate::model::{Application, Cluster, Mapping, Placement, Route};
use crate::parse::PartialMapping;
use crate::perf;
use crate::verify::{self, Report, Verdict};
use pumpkin_solver::conflict_resolvers::resolvers::ResolutionResolver;
use pumpkin_solver::core::results::SatisfactionResult;
use pumpkin_solver::core::termination::{TerminationCondition, TimeBudget};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A sound mapping (not claimed optimal).
    Feasible,
    /// A sound mapping, and proven that none is better for the objective.
    Optimal,
    /// Proven: no sound mapping exists.
    Infeasible,
    /// The time limit came before an answer.
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Feasible => "feasible",
            Status::Optimal => "optimal",
            Status::Infeasible => "infeasible",
            Status::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub time_s: f64,
    /// Time spent building the model.
    pub build_s: f64,
    /// Constraints posted per family (see ARCHITECTURE.md, "The CSP").
    pub constraints: std::collections::BTreeMap<&'static str, usize>,
    /// Candidates the verifier rejected.
    pub rejected: usize,
    /// Nogoods derived from rejections (more general than the candidate itself).
    pub general_nogoods: usize,
    /// Time spent in the greedy warm start (construction and improvement).
    pub greedy_s: f64,
    /// Nodes used by the greedy warm start's sound mapping, if it found one.
    pub greedy_nodes: Option<i64>,
    /// Who found the mapping returned: "greedy", "walk", "lns" or "search".
    pub found_by: Option<&'static str>,
    /// Optional CSP families left out because they would be too large.
    pub skipped: Vec<&'static str>,
    /// (object, node) pairs the requirement-aware presolve removed, in all and per reason.
    pub presolve_removed: usize,
    pub presolve_by_reason: std::collections::BTreeMap<String, usize>,
    /// Objects bound to share a node with another (an edge no network can carry,
    /// `Analysis::must_share`), and the groups they form.
    pub must_share: (usize, usize),
    /// The class relaxation's bound (csp::bound) and the time it took.
    pub class_bound: Option<i64>,
    pub bound_s: f64,
    /// Large-neighbourhood search: time spent and what it did.
    pub lns_s: f64,
    pub lns: lns::LnsStats,
    /// The verifier-guided walk (`walk`), run when the greedy mapper finds no sound mapping:
    /// time spent.
    pub walk_s: f64,
    /// Minimising: the walk that empties nodes one at a time (`walk::squeeze`): time spent.
    pub squeeze_s: f64,
    /// Minimising: the search by shape (`shapes`): time spent and what it did.
    pub shapes_s: f64,
    pub shapes: shapes::ShapeStats,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub status: Status,
    /// The sound mapping found (Feasible), or the fixed mapping that was checked.
    pub mapping: Option<Mapping>,
    /// The verifier's report on `mapping`.
    pub report: Option<Report>,
    /// Why no mapping exists, when that was found before search.
    pub reasons: Vec<String>,
    /// The objective's value for `mapping` and the proven lower bound (equal when optimal).
    pub objective: Option<(i64, i64)>,
    pub stats: Stats,
}

/// What to optimise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Objective {
    /// The number of nodes hosting at least one object (CP paper, Section 4.4).
    Nodes,
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Where a search stands, for progress displays.
#[derive(Clone, Debug)]
pub struct Progress {
    pub elapsed_s: f64,
    pub best: Option<i64>,
    pub bound: Option<i64>,
    pub rejected: usize,
    /// Probes finished (limit searches).
    pub probes: usize,
}

#[derive(Clone)]
pub struct SolveOptions {
    pub time_limit: Option<Duration>,
    pub build: BuildOptions,
    pub perf: perf::Options,
    pub minimize: Option<Objective>,
    /// Set from outside (e.g. on Ctrl-C) to stop the search; the best answer so far is returned.
    pub stop: Option<Arc<AtomicBool>>,
    /// Called after each candidate; must be cheap.
    pub progress: Option<ProgressFn>,
    /// Try the greedy mapper (`greedy`) before the search.
    pub warm_start: bool,
    /// Build the CSP only up to this size (`csp_size`); larger instances get the greedy answer.
    pub max_csp_size: usize,
    /// Portfolio searches run in parallel (seeds seed, seed + 1, ...); 1 = a single search.
    pub jobs: usize,
    /// Do not free the CSP model when a search returns (for processes that exit right after:
    /// freeing a 300-module model takes about a second, which a time limit would not count).
    pub leak_model: bool,
    /// Run large-neighbourhood search (repair and node-emptying) between the greedy mapper and
    /// the full CSP.
    pub lns: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            time_limit: None,
            build: BuildOptions::default(),
            perf: perf::Options::default(),
            minimize: None,
            stop: None,
            progress: None,
            warm_start: true,
            max_csp_size: 400_000,
            jobs: 1,
            leak_model: false,
            lns: true,
        }
    }
}

impl std::fmt::Debug for SolveOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SolveOptions")
            .field("time_limit", &self.time_limit)
            .field("build", &self.build)
            .field("minimize", &self.minimize)
            .finish()
    }
}

/// Stops pumpkin at the time limit or when the stop flag is raised.
struct Stop {
    budget: Option<TimeBudget>,
    flag: Option<Arc<AtomicBool>>,
    /// Another portfolio job has proven the answer.
    done: Option<Arc<AtomicBool>>,
}

impl TerminationCondition for Stop {
    fn should_stop(&mut self) -> bool {
        self.flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
            || self.done.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
            || self.budget.as_mut().is_some_and(|b| b.should_stop())
    }
}

impl Stop {
    fn new(opts: &SolveOptions) -> Stop {
        Stop { budget: opts.time_limit.map(TimeBudget::starting_now), flag: opts.stop.clone(), done: None }
    }
}

/// A proven lower bound on the nodes any mapping uses: distinct nodes of objects with a single
/// possible node, and the fewest nodes whose CPUs hold the total load and give every solo module
/// (`Analysis::solo`) a CPU of its own.
pub fn nodes_lower_bound(app: &Application, cluster: &Cluster, an: &Analysis, fix_pins_cpu: bool) -> i64 {
    let pinned: std::collections::BTreeSet<_> = an.domain.iter().filter(|d| d.len() == 1).map(|d| d[0]).collect();
    let load = an.total_load_lo(app, cluster);
    let mut cpus: Vec<f64> = cluster.nodes.iter().map(|n| n.cpus as f64).collect();
    cpus.sort_by(|a, b| b.total_cmp(a));
    // CPUs needed: the total load, and one each for the self-paced modules (unless CPUs are
    // pinned by hand, when the scheduler does not choose).
    let pinned_cpu = fix_pins_cpu;
    let need = if pinned_cpu { load } else { load.max(an.cpus_needed(app, cluster) * (1.0 - 1e-9)) };
    let mut acc = 0.0;
    let mut k = 0;
    while acc < need * (1.0 - 1e-9) && k < cpus.len() {
        acc += cpus[k];
        k += 1;
    }
    (pinned.len() as i64).max(k as i64).max(if app.graph.node_count() > 0 { 1 } else { 0 })
}

/// Steps of the verifier-guided walk (each checks one move per node of the moved object's
/// domain), without a time limit.
const WALK_STEPS: usize = 20_000;
/// The walk's steps: bounded by the time limit when there is one, else `WALK_STEPS`.
fn walk_steps(opts: &SolveOptions) -> usize {
    if opts.time_limit.is_some() {
        usize::MAX
    } else {
        WALK_STEPS
    }
}

/// The CSP's first slice before the walk (feasibility), at most.
const CSP_FIRST: Duration = Duration::from_secs(3);
/// The CSP's probe between the two first walks (see `solve`).
const CSP_PROBE: Duration = Duration::from_millis(500);

/// Below this CSP size (placement and edge-end literals) the CSP decides at once: no walk.
const WALK_MIN_CSP: usize = 500;

/// The walk's time when the CSP is built after it.
const WALK_CAP: Duration = Duration::from_secs(10);

/// The walk's time to repair a construction into a start for the squeeze.
const STARTS_WALK: Duration = Duration::from_millis(500);

/// Squeezes from the best mapping with new seeds after one from each start.
const SQUEEZE_ROUNDS: usize = 8;
/// Those rounds in a row without a better mapping that end them when the search by shape
/// follows.
const SQUEEZE_STALE: usize = 2;
/// Without a CSP to follow, or with the search by shape to follow, a squeeze round ends
/// after this many failed attempts in a row (`walk::squeeze`), and the next round starts, from
/// another construction or from the best with another seed (unseen realistic 300/64 s701: the
/// round from the best reached 30 nodes in 2 s, then failed for 7.5 s, and the sixth ended
/// before the rounds from the constructions, which reach 29 and 28). Logged at hard 1000/256
/// s1 (60 s): the first round went from 248 nodes to 187 in 87 attempts and 14 s (at most 4
/// attempts between two removals), then spent the other 46 s on about 15 attempts of 2-3 s
/// each without one; the rounds after it were never reached. Counting every attempt without
/// a node fewer (trades too) ended hard 3000/1024 s1's first round at 774 nodes after 23 s,
/// where it goes on to 750.
const SQUEEZE_PATIENCE: usize = 10;
/// The brief search by shape before the squeeze, at most.
const EARLY_SHAPES: Duration = Duration::from_secs(3);

/// The walk before the CSP's first slice (feasibility, when the CSP fits).
const WALK_FIRST: Duration = Duration::from_millis(500);

/// Walks from fresh constructions (and seeds) when the walk is the search and gives up.
const WALK_RESTARTS: usize = 1000;

/// The static CSP in solver-neutral form (`flowmap export-csp`), for reference solvers.
/// Why `export_csp` wrote no model.
#[derive(Clone, Debug)]
pub enum ExportError {
    /// Presolve or counting proved that no sound mapping exists.
    NoMapping(Vec<String>),
    /// The model would exceed `EXPORT_MAX_LITERALS` placement and edge-end literals.
    TooLarge { literals: usize },
}

/// The largest static CSP `export_csp` writes (placement and edge-end literals).
pub const EXPORT_MAX_LITERALS: usize = 2_000_000;

pub fn export_csp(app: &Application, cluster: &Cluster) -> Result<crate::csp::rows::Neutral, ExportError> {
    let an = Analysis::new(app, cluster, None);
    if !an.problems.is_empty() {
        return Err(ExportError::NoMapping(an.problems));
    }
    let counting = counting_refutation(app, cluster, &an, None);
    if !counting.is_empty() {
        return Err(ExportError::NoMapping(counting));
    }
    let literals = csp_size(app, &an);
    if literals > EXPORT_MAX_LITERALS {
        return Err(ExportError::TooLarge { literals });
    }
    let bound = nodes_lower_bound(app, cluster, &an, false);
    Ok(crate::csp::rows::neutral(app, cluster, &an, BuildOptions::default().filter_locality, bound))
}

/// "Infeasible" from a class bound above the cluster's node count (csp::bound: every sound
/// mapping is a solution of the class relaxation, which has none on these nodes).
fn relaxation_refutes(cluster: &Cluster, stats: Stats) -> Outcome {
    let reason = format!(
        "no mapping fits on the cluster's {} nodes: counted per node class (modules' loads and how \
         many may share a CPU), the modules need more nodes than there are",
        cluster.nodes.len()
    );
    Outcome { status: Status::Infeasible, mapping: None, report: None, reasons: vec![reason], objective: None, stats }
}

/// Whole-cluster counting arguments that refute an instance before any search: every solo
/// module (`Analysis::solo`) needs an idle CPU of its own (first allocation round), the
/// modules' load lower bounds must fit the cluster's CPUs (Σ Load <= 100 % per CPU), and the
/// groups bound to one node must fit their nodes' CPUs (`csp::units`).
fn counting_refutation(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    fix: Option<&PartialMapping>,
) -> Vec<String> {
    let mut out = Vec::new();
    let pinned_cpu = fix.is_some_and(|f| f.placement.iter().any(|p| p.is_some_and(|p| p.cpu.is_some())));
    let ld_min = an.ld_min(app, cluster);
    // Per module: needs an idle CPU wherever it goes (solo everywhere), and its smallest load.
    let words = cluster.nodes.len().div_ceil(64);
    let bits = |d: &[crate::model::NodeId]| {
        let mut b = vec![0u64; words];
        for n in d {
            b[n.ix() / 64] |= 1 << (n.ix() % 64);
        }
        b
    };
    let mods: Vec<(Vec<u64>, bool, f64)> = an
        .modules
        .iter()
        .enumerate()
        .map(|(mi, &o)| {
            let d = &an.domain[o.index()];
            let solo = !pinned_cpu && !d.is_empty() && d.iter().all(|&n| an.solo(app, cluster, mi, n, ld_min[n.ix()]));
            let load = d.iter().map(|&n| an.load_lo(app, cluster, mi, n)).fold(f64::INFINITY, f64::min);
            (bits(d), solo, if load.is_finite() { load } else { 0.0 })
        })
        .collect();
    // Hall-type counting: for the whole cluster and for every distinct domain D, the modules
    // that can only run inside D must fit D's CPUs (one idle CPU per solo module in the first
    // allocation round; Σ Load <= 100 % per CPU).
    let mut domains: Vec<Vec<crate::model::NodeId>> =
        vec![(0..cluster.nodes.len() as u32).map(crate::model::NodeId).collect()];
    let mut seen: std::collections::BTreeSet<Vec<crate::model::NodeId>> = domains.iter().cloned().collect();
    for &o in &an.modules {
        let d = &an.domain[o.index()];
        if !d.is_empty() && seen.insert(d.clone()) {
            domains.push(d.clone());
        }
    }
    for d in &domains {
        let db = bits(d);
        let inside = |b: &Vec<u64>| b.iter().zip(&db).all(|(x, y)| x & !y == 0);
        let members: Vec<usize> = (0..mods.len()).filter(|&mi| inside(&mods[mi].0)).collect();
        let cpus: u64 = d.iter().map(|&n| cluster.node(n).cpus as u64).sum();
        let whole = d.len() == cluster.nodes.len();
        let place = if whole {
            "the cluster has".to_string()
        } else {
            format!("{} {}", node_set(cluster, d), if d.len() == 1 { "has" } else { "have" })
        };
        let solo: Vec<usize> = members.iter().copied().filter(|&mi| mods[mi].1).collect();
        if solo.len() as u64 > cpus {
            out.push(format!(
                "{} modules{} (self-paced, or too slow to keep up on a shared CPU) each need an idle CPU of their own in the first allocation round; {place} {cpus} CPUs",
                solo.len(),
                if whole { String::new() } else { format!(" that may only run on {} ({})", node_set(cluster, d), crate::csp::units::object_list(app, &solo.iter().map(|&mi| an.modules[mi]).collect::<Vec<_>>())) },
            ));
            continue;
        }
        let load: f64 = members.iter().map(|&mi| mods[mi].2).sum();
        if load > cpus as f64 * (1.0 + verify::EPS) {
            out.push(format!(
                "the loads of the modules{} add up to at least {load:.2} CPUs; {place} {cpus}",
                if whole { String::new() } else { format!(" that may only run on {}", node_set(cluster, d)) }
            ));
        }
    }
    if out.is_empty() && !pinned_cpu {
        out = crate::csp::units::refutation(app, cluster, an, &an.must_share(app, cluster));
    }
    out
}

/// Nodes named compactly: "n0001", "n0001 and n0002", or "12 nodes (n0001, ...)".
fn node_set(cluster: &Cluster, d: &[crate::model::NodeId]) -> String {
    match d.len() {
        1 => cluster.node(d[0]).name.clone(),
        2 => format!("{} and {}", cluster.node(d[0]).name, cluster.node(d[1]).name),
        k => format!("{k} nodes ({}, ..., {})", cluster.node(d[0]).name, cluster.node(d[k - 1]).name),
    }
}

/// The CSP's size in placement and edge-end literals (its memory grows with it).
pub fn csp_size(app: &Application, an: &Analysis) -> usize {
    let place: usize = an.domain.iter().map(|d| d.len()).sum();
    let edges: usize = app
        .graph
        .edge_indices()
        .map(|e| {
            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
            an.domain[s.index()].len() + an.domain[d.index()].len()
        })
        .sum();
    place + edges
}

/// Nodes hosting at least one object.
pub fn nodes_used(m: &Mapping) -> i64 {
    m.placement.iter().map(|p| p.node).collect::<std::collections::BTreeSet<_>>().len() as i64
}

/// A complete mapping from a partial one, if every object is placed and every edge's route is
/// determined (given, local, or the only shared network).
fn completed(app: &Application, cluster: &Cluster, fix: &PartialMapping) -> Option<Mapping> {
    if fix.placement.iter().any(|p| p.is_none()) {
        return None;
    }
    fix.complete(app, cluster, "").ok()
}

/// Finds a sound mapping (or proves there is none), completing `fix` if given.
pub fn solve(app: &Application, cluster: &Cluster, fix: Option<&PartialMapping>, opts: &SolveOptions) -> Outcome {
    let start = Instant::now();
    let mut stats = Stats::default();
    if let Some(m) = fix.and_then(|f| completed(app, cluster, f)) {
        let r = verify::check(app, cluster, &m, &opts.perf);
        let status = if r.verdict == Verdict::Sound { Status::Feasible } else { Status::Infeasible };
        stats.time_s = start.elapsed().as_secs_f64();
        let objective = opts.minimize.map(|_| (nodes_used(&m), nodes_used(&m)));
        return Outcome { status, mapping: Some(m), report: Some(r), reasons: vec![], objective, stats };
    }
    let mut an = Analysis::new(app, cluster, fix);
    an.allocation = opts.perf.allocation;
    stats.presolve_removed = an.presolve.removed;
    stats.presolve_by_reason = an.presolve.by_reason.clone();
    let share = an.must_share(app, cluster);
    let bound = share.iter().filter(|g| !g.is_empty()).count();
    // Each group counted once, at its first member (groups list the others ascending).
    let groups = share.iter().enumerate().filter(|(o, g)| g.first().is_some_and(|x| x.index() > *o)).count();
    stats.must_share = (bound, groups);
    if !an.problems.is_empty() {
        stats.time_s = start.elapsed().as_secs_f64();
        return Outcome {
            status: Status::Infeasible,
            mapping: None,
            report: None,
            reasons: an.problems,
            objective: None,
            stats,
        };
    }
    let counting = counting_refutation(app, cluster, &an, fix);
    if !counting.is_empty() {
        stats.time_s = start.elapsed().as_secs_f64();
        return Outcome {
            status: Status::Infeasible,
            mapping: None,
            report: None,
            reasons: counting,
            objective: None,
            stats,
        };
    }
    // The budget counts from the start of `solve` (the analysis and presolve are spent).
    let mut term = Stop {
        budget: opts.time_limit.map(|l| TimeBudget::starting_now(l.saturating_sub(start.elapsed()))),
        flag: opts.stop.clone(),
        done: None,
    };
    let static_bound = nodes_lower_bound(
        app,
        cluster,
        &an,
        fix.is_some_and(|f| f.placement.iter().any(|p| p.is_some_and(|p| p.cpu.is_some()))),
    );
    let minimizing = opts.minimize.is_some();
    // The constructions' context, shared by the greedy mapper, the walk and LNS.
    let cx = greedy::Ctx {
        app,
        cluster,
        an: &an,
        fix,
        popts: &opts.perf,
        filter_locality: opts.build.filter_locality,
        deadline: opts.time_limit.map(|l| start + l),
    };
    // The greedy warm start (milliseconds): its node count caps the class bound's exact part
    // below, so when minimising it runs first. Its `improve` then stops at the static bound
    // instead of the class bound: that floor is only an early exit (no mapping goes below a
    // valid bound), so the mapping is the same, found at most a few checks later.
    let mut best: Option<(Mapping, Report, i64)> = None;
    if opts.warm_start && !term.should_stop() {
        let t = Instant::now();
        if let Some(g) = greedy::best(cx, minimizing, &mut || term.should_stop()) {
            let g = if minimizing { greedy::improve(cx, g, static_bound, &mut || term.should_stop()) } else { g };
            let k = nodes_used(&g.0);
            stats.greedy_nodes = Some(k);
            stats.found_by = Some("greedy");
            best = Some((g.0, g.1, k));
            tell(opts, start, Some(k), static_bound, 0);
        }
        stats.greedy_s = t.elapsed().as_secs_f64();
    }
    // Minimising: a stronger bound from the class relaxation (csp::bound), within a tenth of
    // the time limit (at most 6 s; three quarters of it for the LP, which needs about 3 s at
    // 300/64 on this machine and gives nothing when interrupted).
    let mut shape: Vec<(Vec<crate::model::NodeId>, usize)> = Vec::new();
    let mut static_bound = if minimizing
        && !fix.is_some_and(|f| f.placement.iter().any(|p| p.is_some_and(|p| p.cpu.is_some())))
    {
        let t = Instant::now();
        // Within what the warm start left of the limit, too.
        let share = opts
            .time_limit
            .map(|l| (l / 10).min(Duration::from_secs(6)).min(l.saturating_sub(start.elapsed())))
            .unwrap_or(Duration::from_secs(6));
        let mut cut = Stop { budget: Some(TimeBudget::starting_now(share)), flag: opts.stop.clone(), done: None };
        let cap = best.as_ref().map_or(i64::MAX, |b| b.2);
        // With the search by shape to follow, the LP only: the shapes ask the exact part's
        // question (a mapping with the LP's count of nodes?) shape by shape, with the
        // LPs, splits and walks, and refute what it leaves faster (unseen realistic 50/16
        // s7: its exact part spent 4.2-6 s undecided on "6 nodes", the shapes refuted
        // them in 1.1 s). Logged on the 228 unseen realistic and alt-gen minimisation
        // instances up to 300/64 (fifty-third session), its quarter of the share (1.5 s
        // at 60 s) raised the LP's bound on one (alt 100/32 s10, 9 -> 10, which the
        // shapes refute too), ran out undecided on 67 (1.5 s each, every 300/64 among
        // them) and spent 36 s on 105 others (a solution, whose shape the squeeze walked
        // onto).
        let shapes_follow = csp_size(app, &an) <= opts.max_csp_size && fix.is_none();
        let lp = share.mul_f64(0.75);
        let b =
            crate::csp::bound::class_bound(app, cluster, &an, static_bound, lp, shapes_follow, share, cap, &mut cut);
        stats.bound_s = t.elapsed().as_secs_f64();
        stats.class_bound = Some(b.nodes);
        if b.nodes > cluster.nodes.len() as i64 {
            stats.time_s = start.elapsed().as_secs_f64();
            return relaxation_refutes(cluster, stats);
        }
        if b.nodes >= static_bound {
            shape = b.shape;
        }
        tell(opts, start, best.as_ref().map(|b| b.2), static_bound.max(b.nodes), 0);
        static_bound.max(b.nodes)
    } else {
        static_bound
    };
    let finish = |status: Status, best: Option<(Mapping, Report, i64)>, bound: i64, mut stats: Stats| {
        stats.time_s = start.elapsed().as_secs_f64();
        let objective = best
            .as_ref()
            .filter(|_| minimizing)
            .map(|b| (b.2, if status == Status::Optimal { b.2 } else { bound.min(b.2) }));
        let (mapping, report) = match best {
            Some((m, r, _)) => (Some(m), Some(r)),
            None => (None, None),
        };
        Outcome { status, mapping, report, reasons: vec![], objective, stats }
    };
    // The warm start's mapping answers a feasibility question at once, and is minimisation's
    // first incumbent.
    if opts.warm_start {
        match &best {
            Some(_) if !minimizing => return finish(Status::Feasible, best, 0, stats),
            Some(b) if b.2 <= static_bound => return finish(Status::Optimal, best, static_bound, stats),
            _ => {}
        }
        if term.should_stop() {
            let status = if best.is_some() { Status::Feasible } else { Status::Unknown };
            return finish(status, best, static_bound, stats);
        }
    }
    // Feasibility, no sound construction: the class relaxation's LP (milliseconds up to
    // 300/64; loads only where the full LP would not fit a twentieth of the time, at most 1 s)
    // may prove that no mapping exists, which the CSP's search can take minutes to (a 7-node
    // cut of realistic 50/16 s2: undecided after 300 s, refuted by the LP in 10 ms).
    let pinned_cpu = fix.is_some_and(|f| f.placement.iter().any(|p| p.is_some_and(|p| p.cpu.is_some())));
    if best.is_none() && !minimizing && !pinned_cpu && !term.should_stop() {
        let t = Instant::now();
        let share = opts.time_limit.map(|l| (l / 20).min(Duration::from_secs(1))).unwrap_or(Duration::from_secs(1));
        let b =
            crate::csp::bound::class_bound(app, cluster, &an, static_bound, share, true, share, i64::MAX, &mut term);
        stats.bound_s = t.elapsed().as_secs_f64();
        stats.class_bound = Some(b.nodes);
        if b.nodes > cluster.nodes.len() as i64 {
            stats.time_s = start.elapsed().as_secs_f64();
            return relaxation_refutes(cluster, stats);
        }
    }
    // No sound construction: a verifier-guided walk from a forced one, within a quarter of
    // the time left, at most WALK_CAP when the CSP can still decide (it may have to prove that
    // no mapping exists). Measured on the hard corpus: it finds mappings where the CSP and LNS,
    // whose models relax the CPU allocation, see most candidates rejected.
    let size = csp_size(app, &an);
    let walk_useful = best.is_none() && opts.warm_start && opts.lns && size > WALK_MIN_CSP;
    // Feasibility, no sound construction, a CSP that fits: the CSP first gets a short slice,
    // in which it decides most instances it can decide at all (FluidParticle's infeasible
    // `limit` probes: 33 ms), before the walk takes its share.
    // Before it, a walk of at most WALK_FIRST (measured on the hard corpus, it finds in
    // milliseconds the mappings the CSP slice spent its 3 s not finding), a CSP probe of at
    // most CSP_PROBE (FluidParticle's infeasible `limit` probes are proven in 33 ms: without
    // it, the second walk made `limit` 70 % slower), then one more walk with the other ranking of targets
    // (a module beyond a full node's CPUs costs its excess in the first, nothing where the
    // allocation estimate says it keeps pace in the second): on unseen hard instances where
    // modules must share CPUs (hard 100/32 tight s29: 100 modules, 84 CPUs) only the second
    // finds them. Later walks keep alternating (`walks`).
    let csp_slice = |budget: Duration| {
        let quick = SolveOptions { time_limit: Some(start.elapsed() + budget), ..opts.clone() };
        search(Job {
            app,
            cluster,
            an: &an,
            fix,
            opts: &quick,
            seed: opts.build.seed,
            incumbent: None,
            static_bound,
            done: None,
            at_most: None,
            start,
        })
    };
    let csp_first = walk_useful && !minimizing && size <= opts.max_csp_size;
    let mut walks = 0usize;
    if csp_first && !term.should_stop() {
        let first = greedy::construct_forced(cx, greedy::STRATEGIES[0]);
        for stacking in [false, true] {
            if term.should_stop() {
                break;
            }
            let t = Instant::now();
            let left = opts.time_limit.map(|l| l.saturating_sub(start.elapsed())).unwrap_or(WALK_FIRST * 16);
            // The second walk gets twice the first's slice (it took up to 0.5 s on the unseen
            // hard 300/64 instances it found).
            let slice_end = t + (left / 16).min(WALK_FIRST) * if stacking { 2 } else { 1 };
            let mut stop = || term.should_stop() || Instant::now() >= slice_end;
            let seed = opts.build.seed.wrapping_add(1 + walks as u64);
            let found = walk::repair(cx, first.clone(), seed, walk_steps(opts), stacking, &mut stop);
            walks += 1;
            stats.walk_s += t.elapsed().as_secs_f64();
            if let Some((m, r)) = found {
                let k = nodes_used(&m);
                stats.found_by = Some("walk");
                return finish(Status::Feasible, Some((m, r, k)), 0, stats);
            }
            if !stacking && !term.should_stop() {
                let left = opts.time_limit.map(|l| l.saturating_sub(start.elapsed())).unwrap_or(CSP_PROBE * 16);
                let r = csp_slice((left / 16).min(CSP_PROBE));
                merge(&mut stats, &r.stats);
                if matches!(r.status, Status::Feasible | Status::Infeasible) {
                    return finish(r.status, r.best, r.bound, stats);
                }
            }
        }
    }
    if csp_first && !term.should_stop() {
        let left = opts.time_limit.map(|l| l.saturating_sub(start.elapsed())).unwrap_or(CSP_FIRST);
        let r = csp_slice((left / 8).min(CSP_FIRST));
        merge(&mut stats, &r.stats);
        if matches!(r.status, Status::Feasible | Status::Infeasible) {
            return finish(r.status, r.best, r.bound, stats);
        }
    }
    if walk_useful && !term.should_stop() {
        let t = Instant::now();
        // Without a CSP to fall back on the walk is the search: it runs until it finds a
        // mapping or the time ends, restarting from another construction and seed when it
        // gives up (LNS's sub-models, relaxations of the CPU allocation, were measured to
        // repair nothing there: 190 of 190 unsatisfiable at hard 1000/256).
        let slice_end = opts.time_limit.map(|l| {
            let left = (start + l).saturating_duration_since(t);
            if size <= opts.max_csp_size {
                t + (left / 4).min(WALK_CAP)
            } else {
                t + left
            }
        });
        let mut stop = || term.should_stop() || slice_end.is_some_and(|e| Instant::now() >= e);
        // Restarts until the slice ends (a walk that gives up early leaves the rest of its
        // slice to constructions and seeds it has not tried: hard 100/32 tight seed 7, not in
        // the corpus, stalled at one error in its first walk), the rankings alternating with
        // the walks before (`walk::repair`'s `stacking`).
        let restarts = if opts.time_limit.is_some() { WALK_RESTARTS } else { 1 };
        for i in 0..restarts {
            if i > 0 && stop() {
                break;
            }
            // The first walk starts from the forced construction with the fewest errors.
            let first = if i == 0 {
                // Each construction takes ~0.3 s at 3,000 modules and does not poll the
                // deadline: the next one only when the time left covers another like the last
                // (`--time-limit 2` ran 2.7 s at hard 3000/1024).
                let checker = verify::Checker::new(app, cluster, &opts.perf);
                let mut best: Option<(usize, Mapping)> = None;
                let mut last = Duration::ZERO;
                for st in greedy::STRATEGIES {
                    let t = Instant::now();
                    if best.is_some() && (stop() || opts.time_limit.is_some_and(|l| t + last >= start + l)) {
                        break;
                    }
                    let m = greedy::construct_forced(cx, st);
                    last = t.elapsed();
                    let errors = checker.terse(&m).diagnostics.len();
                    if best.as_ref().is_none_or(|b| errors < b.0) {
                        best = Some((errors, m));
                    }
                }
                best.expect("a construction").1
            } else {
                greedy::construct_forced(cx, greedy::STRATEGIES[i % greedy::STRATEGIES.len()])
            };
            let seed = opts.build.seed.wrapping_add(i as u64 * 7919);
            if let Some((m, r)) = walk::repair(cx, first, seed, walk_steps(opts), (walks + i) % 2 == 1, &mut stop) {
                let k = nodes_used(&m);
                stats.found_by = Some("walk");
                best = Some((m, r, k));
                tell(opts, start, Some(k), static_bound, stats.rejected);
                break;
            }
        }
        stats.walk_s += t.elapsed().as_secs_f64();
        match &best {
            Some(_) if !minimizing => return finish(Status::Feasible, best, 0, stats),
            Some(b) if b.2 <= static_bound => return finish(Status::Optimal, best, static_bound, stats),
            _ => {}
        }
    }
    // Large-neighbourhood search: repairs an unsound construction, then (minimising) empties
    // nodes. With a full CSP to fall back on it gets a slice of the time and stops when it
    // stalls; without one it is the search.
    let csp_fits = size <= opts.max_csp_size;
    let deadline = opts.time_limit.map(|l| start + l);
    // Feasibility with a full CSP to fall back on: the CSP decides (it can also prove that no
    // mapping exists). Minimising, LNS runs first, also without a sound construction (it
    // repairs a forced one): the CSP's first mapping can be far from the optimum, and its
    // branch and bound rarely closes the distance (measured: 15 nodes where 12 were planted,
    // 50/16 tight).
    let lns_useful = minimizing || !csp_fits;
    // Minimising from a sound mapping: first empty nodes with the verifier-guided walk, in
    // two thirds of the time left (a sixth with the search by shape to follow; all of it
    // without a CSP to follow; it ends sooner when
    // no node can go). Measured: LNS's sub-model candidates are mostly rejected by the
    // verifier on dense instances, and the CSP's branch and bound rarely improves after it
    // (a third of the time: hard 300/64 62 nodes, 1000/256 235; two thirds: 60 and 228).
    let shaping = minimizing && csp_fits && fix.is_none();
    // What the brief search by shape learnt, for the one after the squeeze.
    let mut memo = shapes::Memo::default();
    // With shapes to follow, a brief search by shape first (its first two rounds, within a
    // twentieth of the time left, at most `EARLY_SHAPES`): its cheap refutations (counting,
    // the LPs, 0.25 s a shape, the split) often prove the first mapping optimal at once (the
    // first round alone proved none of the four below). Unseen realistic 50/16 seeds 5-8 were proven
    // optimal only after 4.8-12.9 s: the squeeze spent 4.5-7.5 s trying to go below an
    // optimum that the shapes then proved in 0.3-1.0 s.
    if shaping && !term.should_stop() {
        if let Some(inc) = best.clone().filter(|b| b.2 > static_bound) {
            let t = Instant::now();
            let left = deadline.map_or(EARLY_SHAPES * 20, |d| d.saturating_duration_since(t));
            let end = Some(t + (left / 20).min(EARLY_SHAPES));
            let f = shapes::search(cx, opts, static_bound, &inc, (end, end), 2, false, &mut memo, &mut || {
                term.should_stop()
            });
            stats.shapes_s += t.elapsed().as_secs_f64();
            stats.shapes.tried += f.stats.tried;
            stats.shapes.refuted += f.stats.refuted;
            static_bound = static_bound.max(f.bound);
            if let Some(b) = f.best.filter(|b| b.2 < inc.2) {
                stats.found_by = Some("shapes");
                best = Some(b);
                tell(opts, start, best.as_ref().map(|b| b.2), static_bound, stats.rejected);
            }
            if best.as_ref().is_some_and(|b| b.2 <= static_bound) {
                return finish(Status::Optimal, best, static_bound, stats);
            }
        }
    }
    if minimizing && opts.lns && !term.should_stop() {
        if let Some(b) = best.clone() {
            let t = Instant::now();
            let slice_end = deadline.map(|d| {
                let left = d.saturating_duration_since(t);
                // A sixth when the search by shape follows: it finds mappings as well as it
                // proves (packings, dives, walks on shapes), and the squeeze's rounds (2-4.6 s
                // each at 100/32) mostly re-find the incumbent. Measured (60 s, the 32
                // realistic 100/32 instances, two at a time): with a third 30 proven, with a
                // sixth 31, faster (realistic s4 29.4 -> 19.7 s, unseen s20 35.3 -> 25.4, s21
                // 25.1 -> 15.6, s27 31.2 -> 23.0); 300/64 unchanged (eight instances); the hard
                // family, where the squeeze finds the answer and shapes do not, loses one node on
                // two of six (100/32 s2 22 -> 23, 300/64 s1 51 -> 52; both runs each).
                t + if shaping {
                    left / 6
                } else if csp_fits {
                    left * 2 / 3
                } else {
                    // No CSP follows: all of it (LNS, after it, never improved a squeezed
                    // mapping at 1000/256 or 3000/1024 in 60 or 300 s, realistic or hard).
                    left
                }
            });
            // With shapes to follow and several starts, the rounds run past the sixth until
            // every start has had one, within a third of the time left: with a patience, a
            // round is a few seconds, and the improvements come from the other starts (unseen
            // realistic 300/64 s701: the rounds from the best, then from the constructions,
            // gave 30, 30, 29, 28 nodes, and the sixth ended in the fourth).
            let first_pass = deadline.filter(|_| shaping).map(|d| t + d.saturating_duration_since(t) / 3);
            let every_start = std::cell::Cell::new(true);
            let mut stop = || {
                let end = match first_pass {
                    Some(f) if !every_start.get() => Some(f),
                    _ => slice_end,
                };
                term.should_stop() || end.is_some_and(|e| Instant::now() >= e)
            };
            // Starts: the best mapping, then every sound construction (a spread-out start
            // was measured to squeeze further than the packed one: 12 -> 8 nodes where the
            // packed 9 stayed 9, realistic 50/16), then the best again with other seeds.
            let mut starts: Vec<(Mapping, Report)> = vec![(b.0.clone(), b.1.clone())];
            // One node above the proven bound with the search by shape to follow: no
            // constructions as starts. The one question left is whether the bound's size has
            // a mapping, which the shapes ask on each shape of that size (walks on its nodes,
            // packings, proofs); a construction's round starts further off and helps only if
            // it gets all the way there. Unseen realistic 50/16 s609 (9 nodes, bound 8): the
            // five starts and their rounds took 3.1 s and all stayed at 9, then the shapes
            // found 8 in 1.1 s; 7.7-8.1 -> 5.2-5.3 s.
            let gap_one = shaping && b.2 == static_bound + 1;
            for (i, st) in greedy::MIN_STRATEGIES.into_iter().enumerate().filter(|_| !gap_one) {
                let built = greedy::construct_persistent(cx, st, greedy::RETRIES);
                let sound = built
                    .as_ref()
                    .ok()
                    .map(|m| {
                        let r = verify::check(app, cluster, m, &opts.perf);
                        (m.clone(), r)
                    })
                    .filter(|(_, r)| r.verdict == Verdict::Sound);
                // A construction that is not sound: the walk repairs it, briefly.
                let sound = sound.or_else(|| {
                    let t = Instant::now();
                    let mut brief = || stop() || t.elapsed() >= STARTS_WALK;
                    let first = built.unwrap_or_else(|m| m);
                    walk::repair(cx, first, opts.build.seed.wrapping_add(i as u64), walk_steps(opts), false, &mut brief)
                });
                if let Some((m, r)) = sound {
                    if !starts.iter().any(|s| s.0 == m) {
                        starts.push((m, r));
                    }
                }
            }
            // The class relaxation's solution names node classes and counts: walk onto that
            // many nodes of each (those the best mapping uses first), which proves the bound
            // optimal when it works. (Only when its exact part ran: no search by shape follows,
            // whose shapes of the bound's size include that one.)
            if !shape.is_empty() && best.as_ref().is_some_and(|b| b.2 > static_bound) && !stop() {
                let (m, r, _) = best.clone().expect("a sound mapping");
                let mut allowed = vec![false; cluster.nodes.len()];
                let mut busy = vec![false; cluster.nodes.len()];
                for p in &m.placement {
                    busy[p.node.ix()] = true;
                }
                for (nodes, k) in &shape {
                    let mut ns = nodes.clone();
                    ns.sort_by_key(|n| (!busy[n.ix()], n.0));
                    for n in ns.into_iter().take(*k) {
                        allowed[n.ix()] = true;
                    }
                }
                if let Some((m, r)) = walk::onto(cx, &m, &r, &allowed, opts.build.seed, &mut stop) {
                    let k = nodes_used(&m);
                    if best.as_ref().is_none_or(|b| k < b.2) {
                        stats.found_by = Some("squeeze");
                        best = Some((m, r, k));
                    }
                }
            }
            let mut stale = 0usize;
            for round in 0..starts.len() + SQUEEZE_ROUNDS {
                every_start.set(round >= starts.len() || starts.len() < 2);
                if stop() || best.as_ref().is_some_and(|b| b.2 <= static_bound) {
                    break;
                }
                // With the search by shape to follow, the rounds from the best end after
                // `SQUEEZE_STALE` in a row gave nothing: the shapes prove with the time left
                // (unseen realistic 100/32 s35: optimal at the greedy mapping's 15, the squeeze
                // spent 18.5 s, the search by shape needed about 5 s more than it had).
                if shaping && round >= starts.len() && stale >= SQUEEZE_STALE {
                    break;
                }
                let from = match starts.get(round) {
                    Some(s) => s.clone(),
                    None => best.as_ref().map(|b| (b.0.clone(), b.1.clone())).expect("a sound mapping"),
                };
                let seed = opts.build.seed.wrapping_add(round as u64);
                // CPUs freed by stacking first, for the squeeze to move whole nodes onto.
                let from = walk::stack(cx, from, &mut stop);
                let (told, rejected) = (best.as_ref().map(|b| b.2), stats.rejected);
                let mut better = |k: i64| tell(opts, start, Some(told.map_or(k, |b| b.min(k))), static_bound, rejected);
                // Without a CSP the squeeze is the whole search, and with shapes to follow it has
                // a sixth of the time: either way a round that stalls ends, and the next starts
                // from another construction (or the best with another seed).
                let patience = (!csp_fits || shaping).then_some(SQUEEZE_PATIENCE);
                let (m, r) = walk::squeeze(cx, from, static_bound, seed, patience, &mut stop, &mut better);
                let k = nodes_used(&m);
                if best.as_ref().is_none_or(|b| k < b.2) {
                    stats.found_by = Some("squeeze");
                    best = Some((m, r, k));
                    stale = 0;
                    // One node above the proven bound now: the constructions' rounds left
                    // go, as they do not start when the squeeze begins there (`gap_one`);
                    // the rounds from the best follow, then the shapes. Unseen realistic
                    // 50/16 s844 (9 nodes after the brief search, bound 7): the round from
                    // the best gave 8 at 0.7 s, the five constructions' rounds then 8 each
                    // until 4.0 s; 13.1 -> 11.0 s, 60 fresh 50/16 and 100/32 instances
                    // (paired runs) as fast or faster.
                    if shaping && k == static_bound + 1 {
                        starts.truncate(round + 1);
                    }
                } else if round >= starts.len() {
                    stale += 1;
                }
                tell(opts, start, best.as_ref().map(|b| b.2), static_bound, stats.rejected);
            }
            stats.squeeze_s = t.elapsed().as_secs_f64();
            if best.as_ref().is_some_and(|b| b.2 <= static_bound) {
                return finish(Status::Optimal, best, static_bound, stats);
            }
        }
    }
    // Minimising, with a CSP that fits: after the squeeze, the search by shape (`shapes`), in
    // three quarters of the time left. Each count of nodes per symmetry class with the bound, the bound + 1, ...
    // nodes is a feasibility question on just those nodes; when every shape of a size is
    // refuted, the bound rises (realistic 100/32 s1: 13 nodes, optimal, where the squeeze
    // stayed at 14 for 60 s).
    if shaping && !term.should_stop() {
        if let Some(inc) = best.clone().filter(|b| b.2 > static_bound) {
            let k = inc.2;
            let t = Instant::now();
            // Three quarters of the time left (LNS and the CSP follow), all of it when every
            // size searched can be proven (`shapes::search`).
            let end = deadline.map(|d| t + d.saturating_duration_since(t) * 3 / 4);
            let f =
                shapes::search(cx, opts, static_bound, &inc, (end, deadline), u64::MAX, true, &mut memo, &mut || {
                    term.should_stop()
                });
            stats.shapes_s += t.elapsed().as_secs_f64();
            stats.shapes.tried += f.stats.tried;
            stats.shapes.refuted += f.stats.refuted;
            stats.shapes.undecided = f.stats.undecided;
            stats.shapes.open = f.stats.open;
            stats.shapes.unlisted = f.stats.unlisted;
            stats.shapes.cluster_bound = f.stats.cluster_bound;
            stats.shapes.cluster_s += f.stats.cluster_s;
            stats.shapes.boxed = stats.shapes.boxed.max(f.stats.boxed);
            stats.shapes.boxes_s += f.stats.boxes_s;
            static_bound = static_bound.max(f.bound);
            if let Some(b) = f.best.filter(|b| b.2 < k) {
                stats.found_by = Some("shapes");
                best = Some(b);
                tell(opts, start, best.as_ref().map(|b| b.2), static_bound, stats.rejected);
            }
            if best.as_ref().is_some_and(|b| b.2 <= static_bound) {
                return finish(Status::Optimal, best, static_bound, stats);
            }
        }
    }
    if opts.lns && lns_useful && !term.should_stop() {
        let t = Instant::now();
        let first = match &best {
            Some(b) => b.0.clone(),
            None => greedy::construct_forced(cx, greedy::STRATEGIES[0]),
        };
        let inc = lns::Incumbent::new(app, cluster, &opts.perf, first);
        let now = Instant::now();
        let slice_end = match deadline {
            Some(d) if csp_fits => Some(now + d.saturating_duration_since(now) / 5),
            d => d,
        };
        let slice = lns::Budget { deadline: slice_end, stop: opts.stop.clone(), done: None };
        let stall = if csp_fits { 10 } else { 300 };
        let mut l = lns::Lns::new(app, cluster, &an, &opts.perf, &opts.build, opts.build.seed);
        let rejected0 = stats.rejected;
        let mut report_progress = |i: &lns::Incumbent| {
            if let lns::Score::Sound(k) = i.score {
                tell(opts, start, Some(k), static_bound, rejected0);
            }
        };
        let mut inc = l.run(inc, lns::Goal::Repair, &slice, stall, &mut report_progress);
        if minimizing && matches!(inc.score, lns::Score::Sound(_)) {
            inc = l.run(inc, lns::Goal::FewerNodes { floor: static_bound }, &slice, stall, &mut report_progress);
        }
        if let lns::Score::Sound(k) = inc.score {
            if best.as_ref().is_none_or(|b| k < b.2) {
                stats.found_by = Some("lns");
                best = Some((inc.mapping, inc.report, k));
            }
        }
        stats.lns_s = t.elapsed().as_secs_f64();
        stats.lns = l.stats.clone();
        match &best {
            Some(_) if !minimizing => return finish(Status::Feasible, best, 0, stats),
            Some(b) if b.2 <= static_bound => return finish(Status::Optimal, best, static_bound, stats),
            _ => {}
        }
    }
    // A CSP too large to build within memory and time (1,000 modules on 256 nodes: ~7 GB,
    // 16 s) is not built: the best mapping found so far is the answer, with the static bound.
    if !csp_fits || term.should_stop() {
        if !csp_fits {
            stats.skipped.push("csp");
        }
        // Still no sound mapping and time left: the walk again, from another construction,
        // until the end.
        if best.is_none() && opts.warm_start && opts.lns && !term.should_stop() {
            let t = Instant::now();
            let first = greedy::construct_forced(cx, greedy::STRATEGIES[1]);
            let seed = opts.build.seed.wrapping_add(1);
            if let Some((m, r)) = walk::repair(cx, first, seed, walk_steps(opts), false, &mut || term.should_stop()) {
                let k = nodes_used(&m);
                stats.found_by = Some("walk");
                best = Some((m, r, k));
            }
            stats.walk_s += t.elapsed().as_secs_f64();
        }
        let status = if best.is_some() { Status::Feasible } else { Status::Unknown };
        return finish(status, best, static_bound, stats);
    }
    // A portfolio serves minimisation; a feasibility search stays single (its first mapping
    // would otherwise depend on which job finds one first).
    let jobs = if minimizing { opts.jobs.max(1) } else { 1 };
    let job = |j: usize, done: Option<Arc<AtomicBool>>, at_most: Option<i64>| Job {
        app,
        cluster,
        an: &an,
        fix,
        opts,
        seed: opts.build.seed.wrapping_add(j as u64),
        incumbent: best.clone(),
        static_bound,
        done,
        at_most,
        start,
    };
    if jobs == 1 {
        let r = search(job(0, None, None));
        merge(&mut stats, &r.stats);
        return finish(r.status, r.best, r.bound, stats);
    }
    // Portfolio: job 0 searches the CSP (the only job that can prove); jobs 1.. run LNS from the
    // same incumbent with seeds seed + 1, ..., each on small sub-models, so memory is one CSP
    // plus sub-models (not `jobs` CSPs) and the jobs differ. A proof by job 0 stops the others.
    // A proven answer is job 0's and does not depend on the others; an answer at the time
    // limit is the fewest nodes (job 0 first on ties, then the lowest LNS job).
    let done = Arc::new(AtomicBool::new(false));
    let (csp, workers): (Searched, Vec<LnsJob>) = std::thread::scope(|sc| {
        let hs: Vec<_> = (1..jobs)
            .map(|j| {
                let (done, an, start_map) = (done.clone(), &an, best.clone());
                sc.spawn(move || {
                    let budget = lns::Budget { deadline, stop: opts.stop.clone(), done: Some(done) };
                    lns_worker(
                        app,
                        cluster,
                        an,
                        fix,
                        opts,
                        opts.build.seed.wrapping_add(j as u64),
                        start_map,
                        static_bound,
                        &budget,
                    )
                })
            })
            .collect();
        let r = search(job(0, None, None));
        if matches!(r.status, Status::Optimal | Status::Infeasible) {
            done.store(true, Ordering::Relaxed);
        }
        (r, hs.into_iter().map(|h| h.join().expect("LNS job")).collect())
    });
    merge(&mut stats, &csp.stats);
    for (_, ls) in &workers {
        stats.lns.add(ls);
    }
    if matches!(csp.status, Status::Optimal | Status::Infeasible) {
        return finish(csp.status, csp.best, csp.bound, stats);
    }
    let mut top = csp.best;
    for (b, _) in workers {
        if let Some(b) = b {
            if top.as_ref().is_none_or(|t| b.2 < t.2) {
                stats.found_by = Some("lns");
                top = Some(b);
            }
        }
    }
    if top.as_ref().is_some_and(|t| t.2 <= csp.bound) {
        let bound = csp.bound;
        return finish(Status::Optimal, top, bound, stats);
    }
    let status = if top.is_some() { Status::Feasible } else { Status::Unknown };
    finish(status, top, csp.bound, stats)
}

/// What an LNS job ends with: its best sound mapping (with nodes used) and its statistics.
type LnsJob = (Option<(Mapping, Report, i64)>, lns::LnsStats);

/// One LNS job of a portfolio: repairs `start` (or a forced construction) if needed, then
/// empties nodes until the budget ends; the best sound mapping it reached.
#[allow(clippy::too_many_arguments)]
fn lns_worker(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    fix: Option<&PartialMapping>,
    opts: &SolveOptions,
    seed: u64,
    start: Option<(Mapping, Report, i64)>,
    floor: i64,
    budget: &lns::Budget,
) -> LnsJob {
    let cx = greedy::Ctx {
        app,
        cluster,
        an,
        fix,
        popts: &opts.perf,
        filter_locality: opts.build.filter_locality,
        deadline: budget.deadline,
    };
    let first = match start {
        Some(b) => b.0,
        None => greedy::construct_forced(cx, greedy::STRATEGIES[0]),
    };
    let mut l = lns::Lns::new(app, cluster, an, &opts.perf, &opts.build, seed);
    let mut inc = lns::Incumbent::new(app, cluster, &opts.perf, first);
    let mut quiet = |_: &lns::Incumbent| {};
    // Repeated runs: each one stops when it stalls; restarts keep the incumbent.
    while !budget.expired() {
        let iterations = l.stats.iterations;
        inc = match inc.score {
            lns::Score::Sound(_) => l.run(inc, lns::Goal::FewerNodes { floor }, budget, 300, &mut quiet),
            _ => l.run(inc, lns::Goal::Repair, budget, 300, &mut quiet),
        };
        if matches!(inc.score, lns::Score::Sound(k) if k <= floor) || l.stats.iterations == iterations {
            break;
        }
    }
    let best = match inc.score {
        lns::Score::Sound(k) => Some((inc.mapping, inc.report, k)),
        _ => None,
    };
    (best, l.stats)
}

/// One search of the CSP (one job of a portfolio).
struct Job<'a> {
    app: &'a Application,
    cluster: &'a Cluster,
    an: &'a Analysis,
    fix: Option<&'a PartialMapping>,
    opts: &'a SolveOptions,
    seed: u64,
    /// The best sound mapping known before the search (the warm start's).
    incumbent: Option<(Mapping, Report, i64)>,
    static_bound: i64,
    /// Raised by the job that proves its answer; the others stop.
    done: Option<Arc<AtomicBool>>,
    /// Find any sound mapping with at most this many nodes (a proven optimum), then stop.
    at_most: Option<i64>,
    start: Instant,
}

/// What a search ends with: its status, best sound mapping (with nodes used), bound, statistics.
struct Searched {
    status: Status,
    best: Option<(Mapping, Report, i64)>,
    bound: i64,
    stats: Stats,
}

fn merge(into: &mut Stats, from: &Stats) {
    into.build_s = from.build_s;
    into.constraints = from.constraints.clone();
    for &f in &from.skipped {
        if !into.skipped.contains(&f) {
            into.skipped.push(f);
        }
    }
    into.rejected += from.rejected;
    into.general_nogoods += from.general_nogoods;
    if from.found_by.is_some() {
        into.found_by = from.found_by;
    }
}

fn search(job: Job) -> Searched {
    let Job { app, cluster, an, fix, opts, seed, incumbent, static_bound, done, at_most, start } = job;
    let t = Instant::now();
    let mut stats = Stats::default();
    let build = BuildOptions {
        seed,
        deadline: opts.time_limit.map(|l| start + l),
        stop: opts.stop.clone(),
        ..opts.build.clone()
    };
    let mut model = Model::build(app, cluster, an, fix, &build);
    stats.build_s = t.elapsed().as_secs_f64();
    if model.interrupted {
        let status = if incumbent.is_some() { Status::Feasible } else { Status::Unknown };
        if opts.leak_model {
            std::mem::forget(model);
        }
        return Searched { status, best: incumbent, bound: static_bound, stats };
    }
    stats.constraints = model.counts.clone();
    stats.skipped = model.skipped.clone();
    let obj = opts.minimize.and_then(|Objective::Nodes| model.nodes_objective(app, cluster, an));
    let mut best = incumbent;
    match (obj, at_most, &best) {
        (Some(o), Some(v), _) => model.bound_objective(o, v as i32),
        (Some(o), None, Some(b)) => model.bound_objective(o, b.2 as i32 - 1),
        _ => {}
    }
    let mut brancher = model.solver.default_brancher();
    let mut resolver = ResolutionResolver::default();
    let mut term = Stop {
        budget: opts.time_limit.map(|l| TimeBudget::starting_now(l.saturating_sub(start.elapsed()))),
        flag: opts.stop.clone(),
        done: done.clone(),
    };
    let proven = |status: Status, best: Option<(Mapping, Report, i64)>, bound: i64, stats: Stats| {
        if let Some(d) = &done {
            d.store(true, Ordering::Relaxed);
        }
        Searched { status, best, bound, stats }
    };
    let run = || -> Searched {
        loop {
            let candidate = match model.solver.satisfy(&mut brancher, &mut term, &mut resolver) {
                SatisfactionResult::Satisfiable(sat) => model.dec.decode(&sat.solution()),
                SatisfactionResult::Unsatisfiable(..) => {
                    return match best {
                        Some(_) if at_most.is_none() => proven(Status::Optimal, best, static_bound, stats),
                        _ if at_most.is_some() => {
                            Searched { status: Status::Unknown, best: None, bound: static_bound, stats }
                        }
                        _ => proven(Status::Infeasible, None, static_bound, stats),
                    };
                }
                SatisfactionResult::Unknown(solver, _, _) => {
                    let bound = obj.map(|o| solver.lower_bound(&o) as i64).unwrap_or(0).max(static_bound);
                    let status = if best.is_some() { Status::Feasible } else { Status::Unknown };
                    return Searched { status, best, bound, stats };
                }
            };
            let r = verify::check(app, cluster, &candidate, &opts.perf);
            if r.verdict == Verdict::Sound {
                stats.found_by = Some("search");
                let Some(o) = obj else {
                    return proven(Status::Feasible, Some((candidate, r, 0)), 0, stats);
                };
                let k = nodes_used(&candidate);
                if k <= static_bound || at_most.is_some() {
                    return proven(Status::Optimal, Some((candidate, r, k)), k, stats);
                }
                best = Some((candidate, r, k));
                model.bound_objective(o, k as i32 - 1);
            } else {
                stats.rejected += 1;
                reject(app, cluster, an, &mut model, &candidate, &r, &mut stats);
            }
            tell(opts, start, best.as_ref().map(|b| b.2), static_bound, stats.rejected);
        }
    };
    let r = run();
    if opts.leak_model {
        // Freeing a large pumpkin model takes about a second at 300 modules; a process that
        // exits right after has no use for that second.
        std::mem::forget(model);
    }
    r
}

/// Reports where the search stands to the progress callback, if any.
fn tell(opts: &SolveOptions, start: Instant, best: Option<i64>, bound: i64, rejected: usize) {
    if let Some(p) = &opts.progress {
        p(&Progress { elapsed_s: start.elapsed().as_secs_f64(), best, bound: Some(bound), rejected, probes: 0 });
    }
}

/// Adds the nogoods a rejected candidate teaches; always at least one that excludes it.
fn reject(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    model: &mut Model,
    candidate: &Mapping,
    r: &Report,
    stats: &mut Stats,
) {
    let (derived, cuts) = nogood::derive_with_cuts(app, cluster, an, candidate, r);
    debug_assert!(derived.iter().all(|(c, _)| nogood::falsified_by(app, cluster, c, candidate)));
    stats.general_nogoods += cuts.len();
    for cut in cuts {
        model.add_nogood_cut(&cut.lits, cut.at_most, &cut.unless, "verifier", cut.what);
    }
    // Progress is guaranteed only if some nogood excludes this very candidate.
    if !derived.iter().any(|(c, _)| nogood::falsified_by(app, cluster, c, candidate)) {
        let c: Vec<Lit> = model.assignment(candidate).into_iter().map(negate).collect();
        model.add_nogood_clause(&c, "verifier", "rejected candidate".into());
    } else {
        stats.general_nogoods += derived.len();
        for (c, what) in derived {
            model.add_nogood_clause(&c, "verifier", what);
        }
    }
}

pub(crate) fn negate(l: Lit) -> Lit {
    match l {
        Lit::Place(o, n, p) => Lit::Place(o, n, !p),
        Lit::Route(e, k, p) => Lit::Route(e, k, !p),
        Lit::Slower(..) | Lit::Faster(..) => unreachable!("assignments hold placements and routes only"),
    }
}

/// The search by shape alone (`shapes`), from a sound mapping and a proven bound, for tests:
/// the sound mapping with fewer nodes it finds (its first: the fewest, when every smaller size
/// was refuted), and the bound it proves. Time per shape as in `solve`, up to `time_limit`.
#[doc(hidden)]
pub fn search_by_shape(
    app: &Application,
    cluster: &Cluster,
    opts: &SolveOptions,
    incumbent: &Mapping,
    bound: i64,
) -> (Option<Mapping>, i64) {
    let mut an = Analysis::new(app, cluster, None);
    an.allocation = opts.perf.allocation;
    let cx = greedy::Ctx {
        app,
        cluster,
        an: &an,
        fix: None,
        popts: &opts.perf,
        filter_locality: opts.build.filter_locality,
        deadline: opts.time_limit.map(|l| Instant::now() + l),
    };
    let r = verify::check(app, cluster, incumbent, &opts.perf);
    let inc = (incumbent.clone(), r, nodes_used(incumbent));
    let end = opts.time_limit.map(|l| Instant::now() + l);
    let mut memo = shapes::Memo::default();
    let f = shapes::search(cx, opts, bound, &inc, (end, end), u64::MAX, true, &mut memo, &mut || {
        opts.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    });
    (f.best.map(|b| b.0), f.bound)
}

/// Every sound mapping (for tests on tiny instances): enumerates candidates, excluding each
/// sound one by its full assignment and each unsound one by its nogoods. Returns None when the
/// time limit or `max` was reached first.
pub fn enumerate_sound(
    app: &Application,
    cluster: &Cluster,
    opts: &SolveOptions,
    max: usize,
) -> Option<(Vec<Mapping>, Stats)> {
    let mut an = Analysis::new(app, cluster, None);
    an.allocation = opts.perf.allocation;
    let mut stats = Stats::default();
    if !an.problems.is_empty() {
        return Some((vec![], stats));
    }
    let mut model = Model::build(app, cluster, &an, None, &opts.build);
    let mut brancher = model.solver.default_brancher();
    let mut resolver = ResolutionResolver::default();
    let mut term = Stop::new(opts);
    let mut found = Vec::new();
    loop {
        let candidate = match model.solver.satisfy(&mut brancher, &mut term, &mut resolver) {
            SatisfactionResult::Satisfiable(sat) => model.dec.decode(&sat.solution()),
            SatisfactionResult::Unsatisfiable(..) => return Some((found, stats)),
            SatisfactionResult::Unknown(..) => return None,
        };
        let r = verify::check(app, cluster, &candidate, &opts.perf);
        if r.verdict == Verdict::Sound {
            let c: Vec<Lit> = model.assignment(&candidate).into_iter().map(negate).collect();
            model.add_nogood_clause(&c, "enumeration", "found".into());
            found.push(candidate);
            if found.len() >= max {
                return None;
            }
        } else {
            stats.rejected += 1;
            reject(app, cluster, &an, &mut model, &candidate, &r, &mut stats);
        }
    }
}

/// A placement-only view of a mapping, for comparing sets of mappings.
pub fn mapping_key(m: &Mapping) -> (Vec<u32>, Vec<Option<u32>>) {
    (
        m.placement.iter().map(|p: &Placement| p.node.0).collect(),
        m.routes
            .iter()
            .map(|r| match r {
                Route::Net(k) => Some(k.0),
                _ => None,
            })
            .collect(),
    )
}
