//! Large-neighbourhood search (LNS): improves a complete mapping by repeatedly freeing a
//! neighbourhood (the objects of a few nodes, or those a diagnostic names, with their
//! neighbours), re-solving it with pumpkin on a scoped model (`csp::Model::build_scoped`: the
//! rest of the mapping is constant, so the model's size follows the neighbourhood, not the
//! instance), and keeping what the verifier accepts.
//!
//! Two goals: **repair** (the mapping is unsound: fewer error diagnostics is better, a sound
//! mapping ends it) and **fewer nodes** (the mapping is sound: a neighbourhood's model must use
//! at least one node fewer than it does now). Every mapping kept has been checked by
//! `verify::check`; a sub-model's rejected candidates become nogoods of that sub-model.
//!
//! Determinism: sub-searches are bounded by a number of search steps (pumpkin calls the
//! termination condition once per step), not by time, and neighbourhoods come from a seeded
//! generator, so the same input, seed and budget of steps give the same path. Only the outer
//! time limit, when it strikes, depends on the machine.

use super::nogood;
use crate::csp::{Analysis, BuildOptions, Lit, Model, Scope};
use crate::model::{Application, Cluster, Mapping, NodeId, ObjectId};
use crate::perf;
use crate::verify::{self, Report, Verdict};
use petgraph::Direction;
use pumpkin_solver::conflict_resolvers::resolvers::ResolutionResolver;
use pumpkin_solver::core::results::SatisfactionResult;
use pumpkin_solver::core::termination::TerminationCondition;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// When the whole search must stop.
#[derive(Clone, Default)]
pub struct Budget {
    pub deadline: Option<Instant>,
    pub stop: Option<Arc<AtomicBool>>,
    /// Raised by another job that proved the answer.
    pub done: Option<Arc<AtomicBool>>,
}

impl Budget {
    pub fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.stop.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
            || self.done.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

/// A sub-search's termination: a number of search steps, or the outer budget.
struct Steps<'a> {
    left: u64,
    outer: &'a Budget,
    tick: u32,
    /// Whether the outer budget (not the step count) stopped it.
    outer_hit: bool,
}

impl TerminationCondition for Steps<'_> {
    fn should_stop(&mut self) -> bool {
        if self.left == 0 {
            return true;
        }
        self.left -= 1;
        self.tick += 1;
        if self.tick >= 64 {
            self.tick = 0;
            if self.outer.expired() {
                self.outer_hit = true;
                return true;
            }
        }
        false
    }
}

/// How good a mapping is (smaller is better): sound ones by nodes used, unsound ones after
/// every sound one, by their number of error diagnostics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    Sound(i64),
    Unsound(usize),
}

impl Score {
    fn of(m: &Mapping, r: &Report) -> Score {
        if r.verdict == Verdict::Sound {
            Score::Sound(super::nodes_used(m))
        } else {
            Score::Unsound(r.diagnostics.iter().filter(|d| d.kind.is_error()).count())
        }
    }
    fn better(self, other: Score) -> bool {
        match (self, other) {
            (Score::Sound(a), Score::Sound(b)) => a < b,
            (Score::Sound(_), Score::Unsound(_)) => true,
            (Score::Unsound(_), Score::Sound(_)) => false,
            (Score::Unsound(a), Score::Unsound(b)) => a < b,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct LnsStats {
    pub iterations: usize,
    pub improvements: usize,
    /// Sub-searches that found a candidate, proved none exists, or ran out of steps.
    pub sat: usize,
    pub unsat: usize,
    pub unknown: usize,
    pub rejected: usize,
}

/// What to improve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Reach a sound mapping (stop there).
    Repair,
    /// Use fewer nodes (the start is sound), down to `floor` (a proven lower bound).
    FewerNodes { floor: i64 },
}

pub struct Lns<'a> {
    app: &'a Application,
    cluster: &'a Cluster,
    an: &'a Analysis,
    popts: &'a perf::Options,
    build: BuildOptions,
    rng: StdRng,
    by_name: HashMap<&'a str, ObjectId>,
    node_by_name: HashMap<&'a str, NodeId>,
    /// Target number of free objects (adapted to how hard the sub-models are).
    size: f64,
    /// Search steps per sub-search.
    steps: u64,
    pub stats: LnsStats,
}

/// The incumbent: a complete mapping, its report and score.
#[derive(Clone)]
pub struct Incumbent {
    pub mapping: Mapping,
    pub report: Report,
    pub score: Score,
}

impl Incumbent {
    pub fn new(app: &Application, cluster: &Cluster, popts: &perf::Options, mapping: Mapping) -> Incumbent {
        let report = verify::check(app, cluster, &mapping, popts);
        let score = Score::of(&mapping, &report);
        Incumbent { mapping, report, score }
    }
}

impl<'a> Lns<'a> {
    pub fn new(
        app: &'a Application,
        cluster: &'a Cluster,
        an: &'a Analysis,
        popts: &'a perf::Options,
        build: &BuildOptions,
        seed: u64,
    ) -> Lns<'a> {
        Lns {
            app,
            cluster,
            an,
            popts,
            build: BuildOptions { symmetry: false, ..build.clone() },
            rng: StdRng::seed_from_u64(seed),
            by_name: app.graph.node_indices().map(|o| (app.object(o).name.as_str(), o)).collect(),
            node_by_name: cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), NodeId(i as u32))).collect(),
            size: 12.0,
            steps: 1_000,
            stats: LnsStats::default(),
        }
    }

    /// Improves `inc` for `goal` until the budget runs out, the goal is reached, or `rounds`
    /// neighbourhoods in a row bring nothing. `on_improve` sees every improvement.
    pub fn run(
        &mut self,
        mut inc: Incumbent,
        goal: Goal,
        budget: &Budget,
        stall_limit: usize,
        on_improve: &mut dyn FnMut(&Incumbent),
    ) -> Incumbent {
        let mut stall = 0usize;
        while !budget.expired() && stall < stall_limit {
            match (goal, inc.score) {
                (Goal::Repair, Score::Sound(_)) => break,
                (Goal::FewerNodes { floor }, Score::Sound(k)) if k <= floor => break,
                _ => {}
            }
            self.stats.iterations += 1;
            let (free, nodes) = match inc.score {
                Score::Sound(_) => self.emptying_neighbourhood(&inc),
                Score::Unsound(_) => self.repair_neighbourhood(&inc),
            };
            if !free.iter().any(|&f| f) {
                stall += 1;
                continue;
            }
            match self.resolve(&inc, &free, &nodes, budget) {
                Some(better) => {
                    inc = better;
                    stall = 0;
                    self.stats.improvements += 1;
                    on_improve(&inc);
                }
                None => stall += 1,
            }
        }
        inc
    }

    /// Free the objects of a used node (preferring nodes with few objects) and of up to a few
    /// partner nodes (nodes its objects talk to, or of the same kind); the sub-model must use
    /// one node fewer among them.
    fn emptying_neighbourhood(&mut self, inc: &Incumbent) -> (Vec<bool>, Vec<bool>) {
        let (app, cluster) = (self.app, self.cluster);
        let nn = cluster.nodes.len();
        let mut on: Vec<Vec<ObjectId>> = vec![Vec::new(); nn];
        for o in app.graph.node_indices() {
            on[inc.mapping.node_of(o).ix()].push(o);
        }
        let used: Vec<usize> = (0..nn).filter(|&n| !on[n].is_empty()).collect();
        // Victim: a used node, with probability falling with its object count.
        let weights: Vec<f64> = used.iter().map(|&n| 1.0 / (on[n].len() as f64 + 1.0)).collect();
        let victim = used[pick(&mut self.rng, &weights)];
        let mut nodes = vec![false; nn];
        let mut free = vec![false; app.graph.node_count()];
        nodes[victim] = true;
        let mut count = 0usize;
        for &o in &on[victim] {
            free[o.index()] = true;
            count += 1;
        }
        // Partners: nodes the victim's objects exchange data with, then nodes of its class.
        let mut partners: Vec<usize> = Vec::new();
        for &o in &on[victim] {
            let g = &app.graph;
            for b in g.neighbors_directed(o, Direction::Incoming).chain(g.neighbors_directed(o, Direction::Outgoing)) {
                let n = inc.mapping.node_of(b).ix();
                if n != victim && !partners.contains(&n) {
                    partners.push(n);
                }
            }
        }
        let same_kind = |a: usize, b: usize| {
            cluster.nodes[a].processor == cluster.nodes[b].processor
                && cluster.nodes[a].networks == cluster.nodes[b].networks
        };
        let mut kin: Vec<usize> = used.iter().copied().filter(|&n| n != victim && same_kind(n, victim)).collect();
        shuffle(&mut self.rng, &mut kin);
        shuffle(&mut self.rng, &mut partners);
        let mut others: Vec<usize> = used.iter().copied().filter(|&n| n != victim).collect();
        shuffle(&mut self.rng, &mut others);
        for n in partners.into_iter().chain(kin).chain(others) {
            if count as f64 >= self.size {
                break;
            }
            if nodes[n] {
                continue;
            }
            nodes[n] = true;
            for &o in &on[n] {
                free[o.index()] = true;
                count += 1;
            }
        }
        // Unused nodes the freed objects may use, largest first: the sub-model may trade two
        // small nodes for one large one.
        if self.rng.random_bool(0.5) {
            let mut spare: Vec<usize> = Vec::new();
            for (o, &f) in free.iter().enumerate() {
                if f {
                    for n in &self.an.domain[o] {
                        if on[n.ix()].is_empty() && !spare.contains(&n.ix()) {
                            spare.push(n.ix());
                        }
                    }
                }
            }
            shuffle(&mut self.rng, &mut spare);
            spare.sort_by_key(|&n| std::cmp::Reverse(cluster.nodes[n].cpus));
            for n in spare.into_iter().take(self.rng.random_range(1..=2)) {
                nodes[n] = true;
            }
        }
        self.close_filters(inc, &mut free, &mut nodes);
        (free, nodes)
    }

    /// Free what an error diagnostic names (objects, and the objects of the nodes it names),
    /// their neighbours, and open a few more nodes to move them to.
    fn repair_neighbourhood(&mut self, inc: &Incumbent) -> (Vec<bool>, Vec<bool>) {
        let (app, cluster) = (self.app, self.cluster);
        let nn = cluster.nodes.len();
        let errors: Vec<&verify::Diagnostic> = inc.report.diagnostics.iter().filter(|d| d.kind.is_error()).collect();
        let mut free = vec![false; app.graph.node_count()];
        let mut nodes = vec![false; nn];
        if errors.is_empty() {
            return (free, nodes);
        }
        let d = errors[self.rng.random_range(0..errors.len())];
        let mut seeds: Vec<ObjectId> = Vec::new();
        for s in &d.subjects {
            if let Some(&o) = self.by_name.get(s.as_str()) {
                seeds.push(o);
            } else if let Some(&n) = self.node_by_name.get(s.as_str()) {
                let mut here: Vec<ObjectId> =
                    app.graph.node_indices().filter(|&o| inc.mapping.node_of(o) == n).collect();
                shuffle(&mut self.rng, &mut here);
                seeds.extend(here.into_iter().take(self.size as usize));
            }
        }
        // Breadth-first from the seeds over the application graph, up to the target size.
        let mut queue: std::collections::VecDeque<ObjectId> = seeds.into_iter().collect();
        let mut count = 0usize;
        while let Some(o) = queue.pop_front() {
            if free[o.index()] {
                continue;
            }
            free[o.index()] = true;
            nodes[inc.mapping.node_of(o).ix()] = true;
            count += 1;
            if count as f64 >= self.size {
                break;
            }
            let g = &app.graph;
            let mut nb: Vec<ObjectId> = g
                .neighbors_directed(o, Direction::Incoming)
                .chain(g.neighbors_directed(o, Direction::Outgoing))
                .collect();
            shuffle(&mut self.rng, &mut nb);
            queue.extend(nb);
        }
        // Extra nodes to move to: a few of the free objects' domains, preferring empty ones.
        let mut load = vec![0u32; nn];
        for o in app.modules() {
            load[inc.mapping.node_of(o).ix()] += 1;
        }
        let mut cand: Vec<usize> = Vec::new();
        for (o, &f) in free.iter().enumerate() {
            if f {
                for n in &self.an.domain[o] {
                    if !nodes[n.ix()] && !cand.contains(&n.ix()) {
                        cand.push(n.ix());
                    }
                }
            }
        }
        shuffle(&mut self.rng, &mut cand);
        cand.sort_by_key(|&n| load[n] as i64 - cluster.nodes[n].cpus as i64);
        for n in cand.into_iter().take(2 + (self.size as usize) / 8) {
            nodes[n] = true;
        }
        self.close_filters(inc, &mut free, &mut nodes);
        (free, nodes)
    }

    /// A free filter must be able to sit with a neighbour (filter locality): its neighbours'
    /// nodes join the scope.
    fn close_filters(&self, inc: &Incumbent, free: &mut [bool], nodes: &mut [bool]) {
        if !self.build.filter_locality {
            return;
        }
        let g = &self.app.graph;
        for f in g.node_indices().filter(|&o| free[o.index()] && !self.app.object(o).is_module()) {
            for b in g.neighbors_directed(f, Direction::Incoming).chain(g.neighbors_directed(f, Direction::Outgoing)) {
                nodes[inc.mapping.node_of(b).ix()] = true;
            }
        }
    }

    /// Re-solves one neighbourhood; returns a better incumbent if it finds one.
    fn resolve(&mut self, inc: &Incumbent, free: &[bool], nodes: &[bool], budget: &Budget) -> Option<Incumbent> {
        let (app, cluster) = (self.app, self.cluster);
        let scoped = self.an.scoped(app, cluster, &inc.mapping, free, nodes);
        if scoped.domain.iter().any(|d| d.is_empty()) {
            return None;
        }
        let scope = Scope { base: &inc.mapping, free: free.to_vec(), nodes: nodes.to_vec() };
        let build = BuildOptions {
            seed: self.rng.random(),
            deadline: budget.deadline,
            stop: budget.stop.clone(),
            ..self.build.clone()
        };
        let mut model = Model::build_scoped(app, cluster, &scoped, &scope, &build);
        if model.interrupted {
            return None;
        }
        if let Score::Sound(_) = inc.score {
            // One node fewer among the scope's used nodes.
            let used_now = (0..cluster.nodes.len())
                .filter(|&n| nodes[n] && app.graph.node_indices().any(|o| inc.mapping.node_of(o).ix() == n))
                .count() as i32;
            let obj = model.nodes_objective(app, cluster, &scoped)?;
            model.bound_objective(obj, used_now - 1);
        }
        let mut brancher = model.solver.default_brancher();
        let mut resolver = ResolutionResolver::default();
        let steps = self.steps.max(200 * free.iter().filter(|&&f| f).count() as u64);
        let mut term = Steps { left: steps, outer: budget, tick: 0, outer_hit: false };
        let mut best: Option<Incumbent> = None;
        for _ in 0..20 {
            let candidate = match model.solver.satisfy(&mut brancher, &mut term, &mut resolver) {
                SatisfactionResult::Satisfiable(sat) => model.dec.decode(&sat.solution()),
                SatisfactionResult::Unsatisfiable(..) => {
                    self.stats.unsat += 1;
                    self.size = (self.size * 1.15).min(400.0);
                    break;
                }
                SatisfactionResult::Unknown(..) => {
                    self.stats.unknown += 1;
                    if !term.outer_hit {
                        self.size = (self.size * 0.8).max(4.0);
                    }
                    break;
                }
            };
            self.stats.sat += 1;
            let cand = Incumbent::new(app, cluster, self.popts, candidate);
            if cand.score.better(best.as_ref().map(|b| b.score).unwrap_or(inc.score)) {
                let sound = matches!(cand.score, Score::Sound(_));
                best = Some(cand);
                if sound {
                    break;
                }
                // An unsound improvement: keep it, and look for a sound one in the same model.
                let b = best.as_ref().expect("just set");
                self.reject(&mut model, &scoped, &b.mapping, &b.report);
                continue;
            }
            self.stats.rejected += 1;
            self.reject(&mut model, &scoped, &cand.mapping, &cand.report);
        }
        // Freeing a large model costs time the search does not need to spend twice.
        drop(model);
        best
    }

    fn reject(&self, model: &mut Model, an: &Analysis, m: &Mapping, r: &Report) {
        let derived = nogood::derive(self.app, self.cluster, an, m, r);
        if derived.iter().any(|(c, _)| nogood::falsified_by(self.app, self.cluster, c, m)) {
            for (c, what) in derived {
                model.add_nogood_clause(&c, "verifier", what);
            }
        } else {
            let c: Vec<Lit> = model.assignment(m).into_iter().map(super::negate).collect();
            model.add_nogood_clause(&c, "verifier", "rejected candidate".into());
        }
    }
}

/// An index drawn with probability proportional to `w`.
fn pick(rng: &mut StdRng, w: &[f64]) -> usize {
    let total: f64 = w.iter().sum();
    let mut x = rng.random_range(0.0..total.max(f64::MIN_POSITIVE));
    for (i, &v) in w.iter().enumerate() {
        if x < v {
            return i;
        }
        x -= v;
    }
    w.len() - 1
}

fn shuffle<T>(rng: &mut StdRng, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = rng.random_range(0..=i);
        v.swap(i, j);
    }
}
