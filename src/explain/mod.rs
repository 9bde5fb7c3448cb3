//! Explanations of "no" (issue 11): for an instance with no sound mapping (or an unsound
//! `--fix`ed mapping), a minimal conflict of user-level facts with the numbers that make it
//! bind, repairs verified by solving the changed instance, and the changes tried that do not
//! help; for an unsound mapping (`check`), the smallest single move that makes it sound.
//!
//! Owns: the facts of an instance and their relaxations (`facts`), the conflict search with
//! `solve` as the oracle (`conflict`), repairs (`repair`), single moves (`moves`). Pumpkin-free:
//! it only calls `solve` (through `headroom`, so margins apply) and `verify`. Never prints;
//! `report::explain` renders.
//!
//! Solver cores under assumptions (one selector literal per fact) are not used: most facts
//! (pins, allowed nodes, costs, attachments) shape the domains and the bounds the presolve and
//! the CSP are built from, and the verifier's nogoods are valid only for the facts they were
//! learned under, so selectors would have to reach into every constraint family and every
//! nogood. Deletion over cached `solve` calls, seeded from the presolve's and the counting
//! arguments' reasons, meets the time targets (README, "explain").

pub mod conflict;
pub mod facts;
pub mod moves;
pub mod repair;

pub use conflict::{Answer, Conflict, FactNote};
pub use facts::{Fact, Facts, Instance, RELAXED_BANDWIDTH, RELAXED_COST};
pub use moves::{smallest_moves, Move, MoveSearch};
pub use repair::{apply, Change, MakeApp, Repair};

use crate::model::{Application, Cluster};
use crate::parse::PartialMapping;
use crate::solve::{Outcome, SolveOptions, Status};
use std::time::{Duration, Instant};

/// How much work an explanation may do.
#[derive(Clone, Debug)]
pub struct ExplainOptions {
    /// Options of every `solve` call (seed, headroom, stop flag); their time limit is set per call.
    pub solve: SolveOptions,
    /// The whole explanation's budget (conflict and repairs).
    pub time_limit: Option<Duration>,
    /// One `solve` call's limit while searching the conflict.
    pub per_call: Duration,
    /// One `solve` call's limit while searching repairs (bisections make many).
    pub repair_call: Duration,
    /// At most this many `solve` calls for the conflict (None: no limit).
    pub max_calls: Option<usize>,
    /// Search repairs too.
    pub repairs: bool,
    /// `solve` calls run in parallel where independent (minimality checks, repairs).
    pub jobs: usize,
}

impl Default for ExplainOptions {
    fn default() -> Self {
        ExplainOptions {
            solve: SolveOptions::default(),
            time_limit: Some(Duration::from_secs(60)),
            per_call: Duration::from_secs(10),
            repair_call: Duration::from_secs(3),
            max_calls: None,
            repairs: true,
            jobs: 1,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct ExplainStats {
    pub time_s: f64,
    pub conflict_s: f64,
    pub repairs_s: f64,
    /// Facts of the instance.
    pub facts: usize,
    /// `solve` calls made, answers taken from the cache, and answers given by a mapping found
    /// earlier (checked by the verifier, no search).
    pub solve_calls: usize,
    pub cache_hits: usize,
    pub reused: usize,
}

/// An explanation.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// The original instance's answer.
    pub outcome: Outcome,
    /// Present when the instance is proven infeasible.
    pub conflict: Option<Conflict>,
    pub repairs: Vec<Repair>,
    pub not_helping: Vec<String>,
    pub stats: ExplainStats,
}

/// Explains why `app` on `cluster` (completing `fix`) has no sound mapping. `first` is the
/// original instance's answer if already known; `make` rebuilds the application with one
/// parameter changed (for "lower a parameter" repairs).
pub fn explain(
    app: &Application,
    cluster: &Cluster,
    fix: Option<&PartialMapping>,
    make: Option<MakeApp>,
    first: Option<Outcome>,
    opts: &ExplainOptions,
) -> Explanation {
    let start = Instant::now();
    let deadline = opts.time_limit.map(|t| start + t);
    let outcome = first.unwrap_or_else(|| {
        let o = SolveOptions { time_limit: opts.time_limit, ..opts.solve.clone() };
        crate::headroom::solve(app, cluster, fix, &o)
    });
    let mut stats = ExplainStats::default();
    if outcome.status != Status::Infeasible {
        stats.time_s = start.elapsed().as_secs_f64();
        return Explanation { outcome, conflict: None, repairs: vec![], not_helping: vec![], stats };
    }
    let facts = Facts::new(app, cluster, fix);
    stats.facts = facts.list.len();
    let mut oracle = conflict::Oracle::new(&facts, opts.solve.clone(), opts.per_call, deadline);
    oracle.max_calls = opts.max_calls;
    oracle.jobs = opts.jobs;
    oracle.remember(facts.all(), Answer::Infeasible(outcome.reasons.clone()));
    let c = conflict::find(&mut oracle, &outcome);
    stats.conflict_s = start.elapsed().as_secs_f64();
    stats.solve_calls = oracle.calls;
    stats.cache_hits = oracle.hits;
    stats.reused = oracle.reused;
    let (repairs, not_helping) = if opts.repairs {
        let t = Instant::now();
        let s = repair::Search {
            facts: &facts,
            opts: opts.solve.clone(),
            per_call: opts.repair_call,
            deadline,
            jobs: opts.jobs,
            make,
        };
        let r = repair::repairs(&s, &c);
        stats.repairs_s = t.elapsed().as_secs_f64();
        r
    } else {
        (vec![], vec![])
    };
    stats.time_s = start.elapsed().as_secs_f64();
    Explanation { outcome, conflict: Some(c), repairs, not_helping, stats }
}
