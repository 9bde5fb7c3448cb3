//! The solver: searches the CSP with pumpkin and closes the loop with the verifier.
//!
//! Owns: running pumpkin (time limit, seed), decoding each solution into a candidate mapping,
//! checking it with `verify::check`, turning rejections into nogoods (`nogood`) and searching
//! on, and the outcome values (`Status`). Every mapping it returns has passed the verifier;
//! `Infeasible` is returned only when pumpkin proved that no candidate is left.

mod nogood;

use crate::csp::{Analysis, BuildOptions, Lit, Model};
use crate::model::{Application, Cluster, Mapping, Placement, Route};
use crate::parse::PartialMapping;
use crate::perf;
use crate::verify::{self, Report, Verdict};
use pumpkin_solver::conflict_resolvers::resolvers::ResolutionResolver;
use pumpkin_solver::core::results::SatisfactionResult;
use pumpkin_solver::core::termination::TimeBudget;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A sound mapping (not claimed optimal).
    Feasible,
    /// Proven: no sound mapping exists.
    Infeasible,
    /// The time limit came before an answer.
    Unknown,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Feasible => "feasible",
            Status::Infeasible => "infeasible",
            Status::Unknown => "unknown",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub time_s: f64,
    /// Candidates the verifier rejected.
    pub rejected: usize,
    /// Nogoods derived from rejections (more general than the candidate itself).
    pub general_nogoods: usize,
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
    pub stats: Stats,
}

#[derive(Clone, Debug, Default)]
pub struct SolveOptions {
    pub time_limit: Option<Duration>,
    pub build: BuildOptions,
    pub perf: perf::Options,
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
        return Outcome { status, mapping: Some(m), report: Some(r), reasons: vec![], stats };
    }
    let an = Analysis::new(app, cluster, fix);
    if !an.problems.is_empty() {
        stats.time_s = start.elapsed().as_secs_f64();
        return Outcome { status: Status::Infeasible, mapping: None, report: None, reasons: an.problems, stats };
    }
    let mut model = Model::build(app, cluster, &an, fix, &opts.build);
    let mut brancher = model.solver.default_brancher();
    let mut resolver = ResolutionResolver::default();
    let mut term = opts.time_limit.map(TimeBudget::starting_now);
    loop {
        let candidate = match model.solver.satisfy(&mut brancher, &mut term, &mut resolver) {
            SatisfactionResult::Satisfiable(sat) => model.dec.decode(&sat.solution()),
            SatisfactionResult::Unsatisfiable(..) => {
                stats.time_s = start.elapsed().as_secs_f64();
                return Outcome { status: Status::Infeasible, mapping: None, report: None, reasons: vec![], stats };
            }
            SatisfactionResult::Unknown(..) => {
                stats.time_s = start.elapsed().as_secs_f64();
                return Outcome { status: Status::Unknown, mapping: None, report: None, reasons: vec![], stats };
            }
        };
        let r = verify::check(app, cluster, &candidate, &opts.perf);
        if r.verdict == Verdict::Sound {
            stats.time_s = start.elapsed().as_secs_f64();
            return Outcome {
                status: Status::Feasible,
                mapping: Some(candidate),
                report: Some(r),
                reasons: vec![],
                stats,
            };
        }
        stats.rejected += 1;
        reject(app, cluster, &an, &mut model, &candidate, &r, &mut stats);
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
    let derived = nogood::derive(app, cluster, an, candidate, r);
    debug_assert!(derived.iter().all(|(c, _)| nogood::falsified_by(c, candidate)));
    // Progress is guaranteed only if some nogood excludes this very candidate.
    if !derived.iter().any(|(c, _)| nogood::falsified_by(c, candidate)) {
        let c: Vec<Lit> = model.assignment(candidate).into_iter().map(negate).collect();
        model.add_nogood_clause(&c, "verifier", "rejected candidate".into());
    } else {
        stats.general_nogoods += derived.len();
        for (c, what) in derived {
            model.add_nogood_clause(&c, "verifier", what);
        }
    }
}

fn negate(l: Lit) -> Lit {
    match l {
        Lit::Place(o, n, p) => Lit::Place(o, n, !p),
        Lit::Route(e, k, p) => Lit::Route(e, k, !p),
    }
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
    let an = Analysis::new(app, cluster, None);
    let mut stats = Stats::default();
    if !an.problems.is_empty() {
        return Some((vec![], stats));
    }
    let mut model = Model::build(app, cluster, &an, None, &opts.build);
    let mut brancher = model.solver.default_brancher();
    let mut resolver = ResolutionResolver::default();
    let mut term = opts.time_limit.map(TimeBudget::starting_now);
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
