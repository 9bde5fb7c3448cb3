//! The CSP builder: the CP-mapping paper's model (Section 3.2) on pumpkin-solver, in named passes.
//!
//! Owns: turning an application, a cluster and the static `analysis` into pumpkin variables and
//! constraints, decoding solutions into `Mapping`s, and posting nogoods. Only this module and
//! `solve` know pumpkin. Every constraint is either exact for the soundness definition of
//! ARCHITECTURE.md or a relaxation of it (it never removes a sound mapping); the verifier decides
//! the rest and `solve` turns its rejections into nogoods.
//!
//! Variables (paper's notation in brackets):
//! - `node[o]` for every module and filter instance [Module_i, Filter_i], over its domain of
//!   nodes; the CPU is left to the scheduler (the allocation algorithm), so placement is per node;
//! - `x[o][n]`, a literal tied to `node[o] == n` [the matrix M, channelled with literals];
//! - `net[e]` for every edge: 0 = local, k + 1 = network k [cn; Loc <-> (c_in = c_out)];
//! - `y[e][k]`, a literal tied to `net[e] == k + 1`, and `z` literals for "edge e leaves (enters)
//!   node n on network k" [Cin/Cout x Loc], summed per link [bw = F x Vol].

pub mod analysis;
pub mod bound;
mod flow;
pub mod presolve;
pub mod rows;
pub mod units;

pub use analysis::{Analysis, RatePace};

use crate::model::{Application, Cluster, EdgeId, Mapping, NetworkId, NodeId, ObjectId, Placement, Requirement, Route};
use crate::parse::PartialMapping;
use crate::verify::EPS;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use pumpkin_solver::core::options::SolverOptions;
use pumpkin_solver::core::predicate;
use pumpkin_solver::core::proof::ConstraintTag;
use pumpkin_solver::core::rand::{rngs::SmallRng, SeedableRng};
use pumpkin_solver::core::results::ProblemSolution;
use pumpkin_solver::core::variables::TransformableVariable;
use pumpkin_solver::core::variables::{DomainId, Literal};
use pumpkin_solver::{
    binary_less_than_or_equals, boolean_less_than_or_equals, clause, equals, less_than_or_equals, Solver,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Which optional families to post.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Order interchangeable module instances and identical nodes (feasibility-preserving).
    pub symmetry: bool,
    /// A filter sits on the node of one of its sources or destinations (CP paper, Section 4.2).
    pub filter_locality: bool,
    pub seed: u64,
    /// Above this many terms, first-round rows are posted as prefix chains instead, and keep-up
    /// rows are left out (redundant with the verifier, which rejects what they would prune); at
    /// 1,000 modules on 256 nodes the rows would hold hundreds of millions of terms.
    pub max_row_terms: usize,
    /// Stop building at this instant or when this flag is raised (the model is then `interrupted`).
    pub deadline: Option<Instant>,
    pub stop: Option<Arc<AtomicBool>>,
    /// CPU headroom (`perf::Headroom::cpu`): the loads pass holds each node to this share of
    /// its CPUs (the verifier checks every CPU).
    pub cpu_headroom: f64,
    /// Traffic rows count each edge at the rate its senders' processor speeds give
    /// (`Model::pace_levels`), not only at its lowest rate. Off only to exercise the verifier's
    /// contention nogoods in tests.
    pub pace_levels: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            symmetry: true,
            filter_locality: true,
            seed: 42,
            max_row_terms: 5_000_000,
            deadline: None,
            stop: None,
            cpu_headroom: 1.0,
            pace_levels: true,
        }
    }
}

/// A neighbourhood of a complete mapping (large-neighbourhood search): the `free` objects may
/// move to the `nodes` of their domains; every other object stays where `base` puts it, and
/// every edge between two such objects keeps its route. Only constraints with a free term are
/// posted (the rest is constant), so the model's size follows the neighbourhood, not the instance.
#[derive(Clone, Debug)]
pub struct Scope<'a> {
    pub base: &'a Mapping,
    /// Per object: free to move.
    pub free: Vec<bool>,
    /// Per node: free objects may use it.
    pub nodes: Vec<bool>,
}

/// A literal of the mapping's decisions, independent of pumpkin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lit {
    /// Object on node (true) or not (false).
    Place(ObjectId, NodeId, bool),
    /// Edge on network (true) or not (false).
    Route(EdgeId, NetworkId, bool),
    /// Module on a node where its T_exec (in ns) is above (true) or below (false) this value:
    /// what a nogood needs to say "unless this ancestor runs on a slower (faster) processor".
    Slower(ObjectId, u64),
    Faster(ObjectId, u64),
}

impl Lit {
    /// Whether the literal holds in a mapping.
    pub fn holds(self, app: &Application, cluster: &Cluster, m: &Mapping) -> bool {
        let texec_ns = |o: ObjectId| -> u64 {
            let t = app.object(o).costs().and_then(|c| c.texec.on(&cluster.node(m.node_of(o)).processor));
            t.map(texec_key).unwrap_or(u64::MAX)
        };
        match self {
            Lit::Place(o, n, p) => (m.node_of(o) == n) == p,
            Lit::Route(e, k, p) => (m.route(e) == Route::Net(k)) == p,
            Lit::Slower(o, v) => texec_ns(o) > v,
            Lit::Faster(o, v) => texec_ns(o) < v,
        }
    }
}

/// T_exec as an exact key (nanoseconds, rounded) for level literals.
pub fn texec_key(t: f64) -> u64 {
    (t * 1e9).round() as u64
}

/// The pumpkin model of one mapping problem.
pub struct Model {
    pub solver: Solver,
    /// What turns a solution into a mapping (kept apart from `solver` for the borrow checker).
    pub dec: Decoder,
    /// Per object: (node, literal [node[o] == node]).
    x: Vec<Vec<(NodeId, Literal)>>,
    /// Per edge: (network, literal [net[e] == k + 1]).
    y: Vec<Vec<(NetworkId, Literal)>>,
    /// Constraint tags and the human names of their families (for explanations).
    pub tags: Vec<(ConstraintTag, String)>,
    /// Counts of posted constraints per family, for statistics.
    pub counts: std::collections::BTreeMap<&'static str, usize>,
    /// Count variables: instances of group g on node n (from the loads pass).
    cnt: std::collections::HashMap<(usize, u32), DomainId>,
    /// Per node: the literal "some object is on it" (symmetry and objective share it).
    used: std::collections::HashMap<u32, Literal>,
    /// Optional families left out because they would be too large.
    pub skipped: Vec<&'static str>,
    /// Per module index: the distinct T_exec keys (ascending) over its domain, and literals
    /// ge[i] = [its T_exec is at least keys[i]] (ge[0] is `true`).
    level: Vec<(Vec<u64>, Vec<Literal>)>,
    /// Object index -> module index.
    module_of: Vec<Option<usize>>,
    /// Per node: its constraints are posted (all nodes unless the model is scoped).
    active: Vec<bool>,
    scoped: bool,
    /// The build stopped at the deadline or on the stop flag: the model is incomplete.
    pub interrupted: bool,
    deadline: Option<Instant>,
    stop: Option<Arc<AtomicBool>>,
    /// Literal that is always true.
    yes: Literal,
    /// Cardinality nogoods posted so far (`add_nogood_cut`), so that none is posted twice.
    cuts_seen: std::collections::BTreeSet<(Vec<Lit>, usize, Vec<Lit>)>,
}

/// Most pace levels the traffic pass gives one object's messages (`Model::pace_levels`).
const MAX_LEVELS: usize = 4;
/// Most terms the pace levels add to the traffic rows over the whole model.
const MAX_LEVEL_TERMS: usize = 150_000;

/// A pace level of an object's messages: `lit` holds only if the rate is at least `rate`,
/// which is `extra` above the next slower level's.
#[derive(Clone, Copy, Debug)]
struct PaceLevel {
    lit: Literal,
    extra: f64,
    rate: f64,
}

/// One term of a traffic row (`Model::traffic`).
#[derive(Clone, Copy, Debug)]
struct TrafficTerm {
    bw: f64,
    total: f64,
    xn: Literal,
    yk: Literal,
    level: Option<Literal>,
}

/// A decision variable, or a value fixed before search.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Var(DomainId),
    Fixed(i32),
}

/// Variables a solution is read from.
pub struct Decoder {
    node_var: Vec<Slot>,
    net_var: Vec<Slot>,
    pinned_cpu: Vec<Option<u32>>,
}

impl Model {
    fn tag(&mut self, family: &'static str, what: String) -> ConstraintTag {
        let t = self.solver.new_constraint_tag();
        self.tags.push((t, format!("{family}: {what}")));
        *self.counts.entry(family).or_default() += 1;
        t
    }

    /// True once the model is infeasible at the root.
    pub fn dead(&self) -> bool {
        self.solver.is_inconsistent()
    }

    /// True when the build must stop (dead, out of time, or asked to stop).
    fn halt(&mut self) -> bool {
        if self.dead() || self.interrupted {
            return true;
        }
        let late = self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.stop.as_ref().is_some_and(|f| f.load(Ordering::Relaxed));
        if late {
            self.interrupted = true;
        }
        late
    }

    fn xl(&self, o: ObjectId, n: NodeId) -> Option<Literal> {
        // Domains are ascending.
        let x = &self.x[o.index()];
        x.binary_search_by_key(&n, |(m, _)| *m).ok().map(|i| x[i].1)
    }

    fn yl(&self, e: EdgeId, k: NetworkId) -> Option<Literal> {
        self.y[e.index()].iter().find(|(m, _)| *m == k).map(|(_, l)| *l)
    }

    /// Whether a literal is the constant true (a fixed placement or route).
    fn constant(&self, l: Literal) -> bool {
        l == self.yes
    }

    /// Builds the model of the whole problem. The analysis must have no `problems`.
    pub fn build(
        app: &Application,
        cluster: &Cluster,
        an: &Analysis,
        fix: Option<&PartialMapping>,
        opts: &BuildOptions,
    ) -> Model {
        Model::build_inner(app, cluster, an, fix, None, opts)
    }

    /// Builds the model of a neighbourhood (see `Scope`). `an` must be the analysis of the
    /// neighbourhood: fixed objects' domains are their base node, free ones' lie in `scope.nodes`.
    pub fn build_scoped(
        app: &Application,
        cluster: &Cluster,
        an: &Analysis,
        scope: &Scope,
        opts: &BuildOptions,
    ) -> Model {
        Model::build_inner(app, cluster, an, None, Some(scope), opts)
    }

    fn build_inner(
        app: &Application,
        cluster: &Cluster,
        an: &Analysis,
        fix: Option<&PartialMapping>,
        scope: Option<&Scope>,
        opts: &BuildOptions,
    ) -> Model {
        let solver = Solver::with_options(SolverOptions {
            random_generator: SmallRng::seed_from_u64(opts.seed),
            ..Default::default()
        });
        let yes = solver.get_true_literal();
        let mut m = Model {
            solver,
            dec: Decoder {
                node_var: Vec::new(),
                net_var: Vec::new(),
                pinned_cpu: (0..app.graph.node_count())
                    .map(|i| fix.and_then(|f| f.placement[i]).and_then(|p| p.cpu))
                    .collect(),
            },
            x: Vec::new(),
            y: Vec::new(),
            tags: Vec::new(),
            cnt: Default::default(),
            counts: Default::default(),
            skipped: Vec::new(),
            used: Default::default(),
            level: Vec::new(),
            module_of: an.module_of.clone(),
            active: scope.map(|s| s.nodes.clone()).unwrap_or_else(|| vec![true; cluster.nodes.len()]),
            scoped: scope.is_some(),
            interrupted: false,
            deadline: opts.deadline,
            stop: opts.stop.clone(),
            yes,
            cuts_seen: Default::default(),
        };
        if let Some(s) = scope {
            // Nodes of fixed objects next to free ones carry changing traffic only: their CPU
            // constraints are constant. The scope's nodes are where CPU constraints change.
            debug_assert_eq!(s.free.len(), app.graph.node_count());
        }
        // A pass that finds the problem infeasible at the root stops the build: pumpkin creates
        // no variables in an inconsistent state, and the first solve reports it.
        m.placement(app, cluster, an);
        let passes: [&dyn Fn(&mut Model); 8] = [
            &|m| m.connections(app, cluster, an, fix, scope),
            &|m| m.traffic(app, cluster, an, opts.pace_levels),
            &|m| {
                m.loads(app, cluster, an, opts.cpu_headroom);
                // Counting alone can refute the instance (more self-paced modules than CPUs):
                // find out before building the large per-instance families.
                let _ = m.solver.propagate_to_fixpoint();
            },
            &|m| m.stacking(app, cluster, an),
            &|m| m.first_round(app, cluster, an, opts.max_row_terms),
            &|m| m.keep_up(app, cluster, an, opts.max_row_terms),
            &|m| m.requirements(app, cluster, an),
            &|m| {
                if opts.filter_locality {
                    m.filter_locality(app, an)
                }
            },
        ];
        for pass in passes {
            if m.halt() {
                return m;
            }
            pass(&mut m);
        }
        if opts.symmetry && !m.scoped && !m.halt() {
            m.symmetry(app, cluster, an);
        }
        let _ = m.halt();
        m
    }

    /// Placement [Module_i, Filter_i, M]: one variable per object over its domain, and one literal
    /// per (object, node) tied to `node[o] == n`. An object with a single possible node is a
    /// constant (its literal is `true`). Modules whose T_exec differs over their domain also get
    /// a level variable (index of their T_exec among the distinct values), for nogoods that
    /// depend on processor speeds.
    fn placement(&mut self, app: &Application, cluster: &Cluster, an: &Analysis) {
        for o in app.graph.node_indices() {
            let d = &an.domain[o.index()];
            if d.len() == 1 {
                self.dec.node_var.push(Slot::Fixed(d[0].0 as i32));
                self.x.push(vec![(d[0], self.yes)]);
                continue;
            }
            let dom: Vec<i32> = d.iter().map(|n| n.0 as i32).collect();
            let v = self.solver.new_named_sparse_integer(dom, app.object(o).name.clone());
            let tag = self.tag("placement", app.object(o).name.clone());
            let lits = d
                .iter()
                .map(|&n| (n, self.solver.new_literal_for_predicate(predicate![v == n.0 as i32], tag)))
                .collect();
            self.dec.node_var.push(Slot::Var(v));
            self.x.push(lits);
        }
        for (mi, &o) in an.modules.iter().enumerate() {
            let keys: Vec<u64> =
                self.x[o.index()].iter().map(|&(n, _)| texec_key(an.costs(app, cluster, mi, n).0)).collect();
            let mut distinct = keys.clone();
            distinct.sort();
            distinct.dedup();
            let mut ge = vec![self.yes];
            if distinct.len() >= 2 {
                let tag = self.tag("placement", format!("speed of {}", app.object(o).name));
                let lvl = self.solver.new_bounded_integer(0, distinct.len() as i32 - 1);
                for (&(_, xn), k) in self.x[o.index()].clone().iter().zip(&keys) {
                    let i = distinct.binary_search(k).expect("listed") as i32;
                    let is = self.solver.new_literal_for_predicate(predicate![lvl == i], tag);
                    self.post_clause(vec![!xn, is], tag);
                }
                for i in 1..distinct.len() as i32 {
                    ge.push(self.solver.new_literal_for_predicate(predicate![lvl >= i], tag));
                }
            }
            self.level.push((distinct, ge));
        }
    }

    /// Connections [c_in, c_out, cn, Loc]: an edge is local exactly when both ends share a node;
    /// otherwise it uses a network both ends' nodes are on. An edge between two fixed objects
    /// of a scoped model keeps its base route (a constant).
    fn connections(
        &mut self,
        app: &Application,
        cluster: &Cluster,
        an: &Analysis,
        fix: Option<&PartialMapping>,
        scope: Option<&Scope>,
    ) {
        for e in app.graph.edge_references() {
            if self.halt() {
                return;
            }
            let (s, d) = (e.source(), e.target());
            let (ds, dd) = (&an.domain[s.index()], &an.domain[d.index()]);
            let fixed_ends = scope.is_some_and(|sc| !sc.free[s.index()] && !sc.free[d.index()]);
            let given = match scope {
                Some(sc) if fixed_ends => match sc.base.route(e.id()) {
                    Route::Net(k) => Some(k),
                    _ => None,
                },
                _ => fix.and_then(|f| f.network[e.id().index()]),
            };
            let can_local = ds.iter().any(|n| dd.contains(n));
            let candidates: Vec<NetworkId> = (0..cluster.networks.len() as u32)
                .map(NetworkId)
                .filter(|&k| given.is_none_or(|g| g == k))
                .filter(|&k| {
                    ds.iter()
                        .any(|&a| cluster.on_network(a, k) && dd.iter().any(|&b| b != a && cluster.on_network(b, k)))
                })
                .collect();
            // Both ends fixed on one node: local. On two nodes with one usable network: that one.
            if ds.len() == 1 && dd.len() == 1 {
                if ds[0] == dd[0] {
                    self.dec.net_var.push(Slot::Fixed(0));
                    self.y.push(Vec::new());
                    continue;
                }
                if candidates.len() == 1 {
                    self.dec.net_var.push(Slot::Fixed(candidates[0].0 as i32 + 1));
                    self.y.push(vec![(candidates[0], self.yes)]);
                    continue;
                }
            }
            let mut dom: Vec<i32> = candidates.iter().map(|k| k.0 as i32 + 1).collect();
            if can_local {
                dom.insert(0, 0);
            }
            let name = app.edge_name(e.id());
            let tag = self.tag("connections", name.clone());
            if dom.is_empty() {
                // Ends can never meet: no mapping. (An empty domain is not allowed: use 0 and forbid it.)
                let v = self.solver.new_sparse_integer(vec![0]);
                self.dec.net_var.push(Slot::Var(v));
                self.y.push(Vec::new());
                self.solver.add_clause([predicate![v != 0]], tag);
                continue;
            }
            let v = self.solver.new_named_sparse_integer(dom, format!("net({name})"));
            let ys: Vec<(NetworkId, Literal)> = candidates
                .iter()
                .map(|&k| (k, self.solver.new_literal_for_predicate(predicate![v == k.0 as i32 + 1], tag)))
                .collect();
            let loc =
                if can_local { Some(self.solver.new_literal_for_predicate(predicate![v == 0], tag)) } else { None };
            // Loc <-> same node.
            for &n in ds {
                let xs = self.xl(s, n).expect("domain");
                match (self.xl(d, n), loc) {
                    (Some(xd), Some(l)) => {
                        self.post_clause(vec![!xs, !xd, l], tag);
                        self.post_clause(vec![!l, !xs, xd], tag);
                    }
                    (None, Some(l)) => self.post_clause(vec![!l, !xs], tag),
                    (_, None) => {}
                }
            }
            // A network is used only by nodes on it.
            for &(k, yk) in &ys {
                for (end, dom) in [(s, ds), (d, dd)] {
                    for &n in dom {
                        if !cluster.on_network(n, k) {
                            let xn = self.xl(end, n).expect("domain");
                            self.post_clause(vec![!yk, !xn], tag);
                        }
                    }
                }
            }
            self.dec.net_var.push(Slot::Var(v));
            self.y.push(ys);
        }
    }

    fn post_clause(&mut self, lits: Vec<Literal>, tag: ConstraintTag) {
        self.solver.add_constraint(clause(lits, tag)).post();
    }

    /// Traffic [bw = F x Vol; Σ Cin x Loc x bw <= BWmax, both directions]: per node and network,
    /// the bandwidth of the non-local edges leaving (entering) it stays within the network's.
    /// Rates are the synchronisation-only frequencies (exact when constant over all mappings,
    /// their lower bound otherwise); weights are rounded down, so the constraint is a relaxation
    /// of eq 9–10 at the verifier's tolerance. Fixed edges' traffic is a constant taken off the
    /// capacity; a link with no free term is not posted.
    fn traffic(&mut self, app: &Application, cluster: &Cluster, an: &Analysis, pace_levels: bool) {
        let nk = cluster.networks.len();
        let slot = |n: NodeId, k: NetworkId, send: bool| (n.ix() * nk + k.ix()) * 2 + usize::from(!send);
        let mut background = vec![0.0f64; cluster.nodes.len() * nk * 2];
        // (bandwidth, node literal, route literal, pace level): without a level, the edge's
        // traffic at its lowest rate; with one, what it adds when that level holds.
        let mut terms: Vec<Vec<TrafficTerm>> = vec![Vec::new(); cluster.nodes.len() * nk * 2];
        let mut levels: std::collections::HashMap<u32, Vec<PaceLevel>> = Default::default();
        let mut budget = MAX_LEVEL_TERMS;
        for e in app.graph.edge_references() {
            let i = e.id().index();
            let bw = e.weight().volume * an.rate_lo[i];
            if bw <= 0.0 {
                continue;
            }
            let steps = if pace_levels && an.rate_hi[i] > an.rate_lo[i] * (1.0 + EPS) && budget > 0 {
                let o = e.source();
                match levels.get(&(o.index() as u32)) {
                    Some(l) => l.clone(),
                    None => {
                        let l = self.pace_levels(app, cluster, an, o);
                        levels.insert(o.index() as u32, l.clone());
                        l
                    }
                }
            } else {
                Vec::new()
            };
            for (end, send) in [(e.source(), true), (e.target(), false)] {
                for &(k, yk) in &self.y[i] {
                    for &(n, xn) in &self.x[end.index()] {
                        if !cluster.on_network(n, k) {
                            continue;
                        }
                        let t = &mut terms[slot(n, k, send)];
                        if self.constant(xn) && self.constant(yk) {
                            background[slot(n, k, send)] += bw;
                        } else {
                            t.push(TrafficTerm { bw, total: bw, xn, yk, level: None });
                        }
                        for l in &steps {
                            let v = e.weight().volume;
                            t.push(TrafficTerm { bw: v * l.extra, total: v * l.rate, xn, yk, level: Some(l.lit) });
                            budget = budget.saturating_sub(1);
                        }
                    }
                }
            }
        }
        for n in (0..cluster.nodes.len() as u32).map(NodeId) {
            for k in (0..nk as u32).map(NetworkId) {
                for send in [true, false] {
                    let i = slot(n, k, send);
                    let ts = std::mem::take(&mut terms[i]);
                    if ts.is_empty() {
                        continue;
                    }
                    if self.halt() {
                        return;
                    }
                    let cap = (cluster.network(k).bandwidth - background[i]).max(0.0);
                    if ts.iter().map(|t| t.bw).sum::<f64>() <= cap {
                        continue;
                    }
                    let what = format!(
                        "{} {} on {}",
                        cluster.node(n).name,
                        if send { "sends" } else { "receives" },
                        cluster.network(k).name
                    );
                    let tag = self.tag("traffic", what);
                    let scale = (1_500_000_000f64 / ts.len() as f64).min(1_000_000.0).floor();
                    let (mut w, mut lits) = (Vec::new(), Vec::new());
                    let mut pairs: std::collections::HashMap<(Literal, Literal), Literal> = Default::default();
                    for t in ts {
                        let TrafficTerm { bw, total, xn, yk, level } = t;
                        let mut conj: Vec<Literal> = [xn, yk].into_iter().filter(|&l| !self.constant(l)).collect();
                        conj.extend(level);
                        if total > cap * (1.0 + EPS) + 1e-15 {
                            // The edge alone (at this pace or slower) exceeds what the link has left.
                            self.post_clause(conj.iter().map(|&l| !l).collect(), tag);
                            continue;
                        }
                        if self.dead() {
                            return;
                        }
                        let weight = (bw / cap * scale).floor() as i32;
                        if weight == 0 {
                            continue; // negligible next to the link (and pumpkin cannot scale by 0)
                        }
                        let z = match (conj.as_slice(), level) {
                            ([l], _) => *l,
                            (&[a, b], None) => {
                                // [edge leaves n on k], both ways, shared with its levels' terms.
                                let z = self.solver.new_literal();
                                self.post_clause(vec![!z, a], tag);
                                self.post_clause(vec![!z, b], tag);
                                self.post_clause(vec![z, !a, !b], tag);
                                pairs.insert((a, b), z);
                                z
                            }
                            _ => {
                                // Forced true when the edge is on the link at this pace; it only
                                // adds to a sum bounded above, so the other direction is not needed.
                                let z = self.solver.new_literal();
                                let mut c = vec![z];
                                match pairs.get(&(xn, yk)) {
                                    Some(&p) if conj.len() == 3 => c.extend([!p, !conj[2]]),
                                    _ => c.extend(conj.iter().map(|&l| !l)),
                                }
                                self.post_clause(c, tag);
                                z
                            }
                        };
                        w.push(weight);
                        lits.push(z);
                    }
                    if !lits.is_empty() {
                        self.solver.add_constraint(boolean_less_than_or_equals(w, lits, scale as i32, tag)).post();
                    }
                }
            }
        }
    }

    /// The pace levels of the messages object `o` sends (`Analysis::rate_pace`): for each
    /// reachable value v of its pace below the slowest (at most `MAX_LEVELS`, spread over the
    /// range), a literal forced true when every module that sets the pace runs where K x T_exec
    /// <= v, so the rate is at least 1 / v; `extra` is what the rate gains over the next
    /// slower level (the slowest is the static `rate_lo`).
    fn pace_levels(&mut self, app: &Application, cluster: &Cluster, an: &Analysis, o: ObjectId) -> Vec<PaceLevel> {
        let Some(rp) = an.rate_pace(app, cluster, o) else { return Vec::new() };
        // Per term: its T_exec per level key (ascending keys, as `level`).
        let speeds: Vec<Vec<f64>> = rp
            .terms
            .iter()
            .map(|&(m, _)| {
                let keys = &self.level[m].0;
                let mut t = vec![0.0f64; keys.len()];
                for &(nd, _) in &self.x[an.modules[m].index()] {
                    let c = an.costs(app, cluster, m, nd).0;
                    if let Ok(j) = keys.binary_search(&texec_key(c)) {
                        t[j] = t[j].max(c);
                    }
                }
                t
            })
            .collect();
        let mut vs: Vec<f64> = rp
            .terms
            .iter()
            .zip(&speeds)
            .flat_map(|(&(_, q), t)| t.iter().map(move |&x| q * x))
            .chain(std::iter::once(rp.floor))
            .filter(|&v| v >= rp.lo * (1.0 - 1e-12) && v < rp.hi * (1.0 - 1e-9))
            .collect();
        vs.sort_by(f64::total_cmp);
        vs.dedup_by(|a, b| (*a - *b).abs() <= 1e-12 * b.abs());
        if vs.len() > MAX_LEVELS {
            let len = vs.len();
            vs = (0..MAX_LEVELS).map(|j| vs[j * len / MAX_LEVELS]).collect();
        }
        let name = app.object(o).name.clone();
        let tag = self.tag("traffic", format!("pace of {name}'s messages"));
        let mut out = Vec::new();
        for (j, &v) in vs.iter().enumerate() {
            let next = vs.get(j + 1).copied().unwrap_or(rp.hi);
            // Some term must run faster than its slowest for this pace: the clause names them.
            let mut c = Vec::new();
            for (&(m, q), t) in rp.terms.iter().zip(&speeds) {
                if let Some(first_over) = t.iter().position(|&x| q * x > v * (1.0 + 1e-12)) {
                    if first_over == 0 {
                        c.clear();
                        break; // cannot run that fast anywhere (not reachable: v >= lo)
                    }
                    c.push(self.level[m].1[first_over]);
                }
            }
            if c.is_empty() {
                continue;
            }
            let p = self.solver.new_literal();
            c.push(p);
            self.post_clause(c, tag);
            let shrink = 1.0 - 1e-10; // the traffic rows stay a relaxation through rounding
            out.push(PaceLevel { lit: p, extra: (1.0 / v - 1.0 / next) * shrink, rate: shrink / v });
        }
        out
    }

    /// Loads [Σ M x Load^c <= 100 %], per node: the modules' loads over an iteration at the
    /// synchronisation-only pace (lower bounds) fit the node's CPUs. Implied by soundness
    /// (ARCHITECTURE.md), posted for propagation. The sum is written over per-(group, node)
    /// counts, and each group's counts add up to its size: bounds propagation then sees
    /// pigeonhole facts (32 fluid instances filling exactly 32 CPUs leave no room for anything
    /// else) that clause learning finds only slowly.
    fn loads(&mut self, app: &Application, cluster: &Cluster, an: &Analysis, headroom: f64) {
        const S: f64 = 10_000.0;
        let mut per_group: Vec<Vec<DomainId>> = vec![Vec::new(); app.groups.len()];
        for n in (0..cluster.nodes.len() as u32).map(NodeId) {
            if !self.active[n.ix()] {
                continue;
            }
            let (mut w, mut terms) = (Vec::new(), Vec::new());
            let mut total = 0.0;
            for (gi, g) in app.groups.iter().enumerate() {
                if !g.is_module {
                    continue;
                }
                let here: Vec<(usize, Literal)> = g
                    .objects
                    .iter()
                    .filter_map(|&o| self.xl(o, n).map(|l| (an.module_of[o.index()].expect("module"), l)))
                    .collect();
                if here.is_empty() {
                    continue;
                }
                // The lightest instance's bound, so the weighted count stays a lower bound.
                let load = here.iter().map(|&(mi, _)| an.load_lo(app, cluster, mi, n)).fold(f64::INFINITY, f64::min);
                total += load * here.len() as f64;
                if self.halt() {
                    return;
                }
                let tag = self.tag("loads", format!("count of {} on {}", g.name, cluster.node(n).name));
                let cnt = self.solver.new_named_bounded_integer(
                    0,
                    if load > headroom * (1.0 + EPS) { 0 } else { here.len() as i32 },
                    format!("count({}, {})", g.name, cluster.node(n).name),
                );
                let mut eq: Vec<_> = here.iter().map(|(_, l)| l.get_integer_variable().scaled(1)).collect();
                eq.push(cnt.scaled(-1));
                self.solver.add_constraint(equals(eq, 0, tag)).post();
                per_group[gi].push(cnt);
                self.cnt.insert((gi, n.0), cnt);
                w.push((load * S).floor() as i32);
                terms.push(cnt);
            }
            let cpus = cluster.node(n).cpus as f64 * headroom.min(1.0);
            if total > cpus {
                let tag = self.tag("loads", cluster.node(n).name.clone());
                // Zero weights (cycle members, tiny loads) are left out: pumpkin cannot scale by 0.
                let t: Vec<_> = terms.iter().zip(&w).filter(|(_, &k)| k != 0).map(|(c, &k)| c.scaled(k)).collect();
                self.solver.add_constraint(less_than_or_equals(t, (cpus * S) as i32, tag)).post();
            }
        }
        // Solo modules (self-paced ones, and input-paced ones too slow to keep up on a shared
        // CPU: `Analysis::solo`) each need a CPU still idle at their turn, and take it: at most
        // CPUs(n) of them per node. Implied by soundness (first round).
        if !self.dec.pinned_cpu.iter().any(|p| p.is_some()) {
            let ld_min = an.ld_min(app, cluster);
            for n in (0..cluster.nodes.len() as u32).map(NodeId) {
                if !self.active[n.ix()] {
                    continue;
                }
                let mut terms = Vec::new();
                for (gi, g) in app.groups.iter().enumerate() {
                    if !g.is_module {
                        continue;
                    }
                    let here: Vec<ObjectId> = g.objects.iter().copied().filter(|&o| self.xl(o, n).is_some()).collect();
                    let root = |o: ObjectId| {
                        an.module_of[o.index()].is_some_and(|mi| an.solo(app, cluster, mi, n, ld_min[n.ix()]))
                    };
                    if !here.is_empty() && here.iter().all(|&o| root(o)) && self.cnt.contains_key(&(gi, n.0)) {
                        terms.push(self.cnt[&(gi, n.0)].scaled(1));
                    } else {
                        for o in here.into_iter().filter(|&o| root(o)) {
                            terms.push(self.xl(o, n).expect("domain").get_integer_variable().scaled(1));
                        }
                    }
                }
                let cpus = cluster.node(n).cpus as i32;
                if terms.len() as i32 > cpus || terms.len() > 1 {
                    if self.halt() {
                        return;
                    }
                    let tag = self.tag("loads", format!("solo modules on {}", cluster.node(n).name));
                    self.solver.add_constraint(less_than_or_equals(terms, cpus, tag)).post();
                }
            }
        }
        if self.scoped {
            return; // groups' totals hold only over all nodes
        }
        for (gi, cnts) in per_group.into_iter().enumerate() {
            if cnts.len() > 1 {
                let tag = self.tag("loads", format!("{} placed once", app.groups[gi].name));
                let t: Vec<_> = cnts.iter().map(|c| c.scaled(1)).collect();
                self.solver.add_constraint(equals(t, app.groups[gi].objects.len() as i32, tag)).post();
            }
        }
    }

    /// Stacking (a redundant family): in the first allocation round each CPU of a node holds a
    /// sequence of modules in which each later module B may follow each earlier one A only if
    /// u_B <= 1 - LD_A (`analysis::may_follow`; cycle members, which form threads, are left
    /// out). So the modules on n that come first on their CPU are at most CPUs(n), and every
    /// other one has an immediate predecessor on its CPU of a class it may follow, each module
    /// preceding at most one. Per node, over group counts: cnt = first + stacked, Σ first <=
    /// CPUs, stacked[b] = Σ_a p[a][b] over the classes a that b may follow, Σ_b p[a][b] <=
    /// cnt[a] (and p[a][a] <= cnt[a] − 1 when a is present). A group's class takes its most
    /// permissive instance's LD and u, so the family stays a relaxation. Skipped when a CPU is
    /// pinned by hand.
    fn stacking(&mut self, app: &Application, cluster: &Cluster, an: &Analysis) {
        if self.dec.pinned_cpu.iter().any(|p| p.is_some()) {
            return;
        }
        for n in (0..cluster.nodes.len() as u32).map(NodeId) {
            if !self.active[n.ix()] || self.halt() {
                continue;
            }
            // Classes: module groups present on n with no cycle member, their count variable,
            // most permissive (LD, u) and the most instances that may be on n.
            let mut classes: Vec<(DomainId, analysis::Stack, i32)> = Vec::new();
            for (gi, g) in app.groups.iter().enumerate() {
                let Some(&cnt) = self.cnt.get(&(gi, n.0)) else { continue };
                let here: Vec<usize> = g
                    .objects
                    .iter()
                    .filter(|&&o| self.xl(o, n).is_some())
                    .map(|&o| an.module_of[o.index()].expect("module"))
                    .collect();
                let params: Option<Vec<analysis::Stack>> =
                    here.iter().map(|&mi| an.stack_params(app, cluster, mi, n)).collect();
                let Some(params) = params else { continue };
                let Some(loosest) = params.into_iter().reduce(analysis::Stack::loosest) else { continue };
                classes.push((cnt, loosest, here.len() as i32));
            }
            let cpus = cluster.node(n).cpus as i32;
            if classes.iter().map(|c| c.2).sum::<i32>() <= cpus {
                continue;
            }
            let tag = self.tag("stacking", cluster.node(n).name.clone());
            let mut firsts = Vec::new();
            let mut preds: Vec<Vec<DomainId>> = vec![Vec::new(); classes.len()];
            let mut succs: Vec<Vec<DomainId>> = vec![Vec::new(); classes.len()];
            for (b, &(cnt_b, pb, ub)) in classes.iter().enumerate() {
                let first = self.solver.new_bounded_integer(0, ub);
                firsts.push(first);
                let mut in_terms = Vec::new();
                for (a, &(cnt_a, pa, ua)) in classes.iter().enumerate() {
                    if !analysis::may_follow(pa, pb) {
                        continue;
                    }
                    let p = self.solver.new_bounded_integer(0, ua.min(ub));
                    in_terms.push(p);
                    succs[a].push(p);
                    if a == b {
                        // A module does not precede itself: p[a][a] + [cnt[a] >= 1] <= cnt[a].
                        let present = self.solver.new_literal_for_predicate(predicate![cnt_a >= 1], tag);
                        let t = vec![p.scaled(1), present.get_integer_variable().scaled(1), cnt_a.scaled(-1)];
                        self.solver.add_constraint(less_than_or_equals(t, 0, tag)).post();
                    }
                }
                // cnt[b] = first[b] + Σ_a p[a][b]
                let mut t: Vec<_> = in_terms.iter().map(|p| p.scaled(1)).collect();
                t.push(first.scaled(1));
                t.push(cnt_b.scaled(-1));
                self.solver.add_constraint(equals(t, 0, tag)).post();
                preds[b] = in_terms;
            }
            for (a, out) in succs.iter().enumerate() {
                if out.is_empty() {
                    continue;
                }
                let mut t: Vec<_> = out.iter().map(|p| p.scaled(1)).collect();
                t.push(classes[a].0.scaled(-1));
                self.solver.add_constraint(less_than_or_equals(t, 0, tag)).post();
            }
            let t: Vec<_> = firsts.iter().map(|f| f.scaled(1)).collect();
            self.solver.add_constraint(less_than_or_equals(t, cpus, tag)).post();
            let _ = preds;
        }
    }

    /// The first allocation round: a module that paces itself (no synchronous input, not in a
    /// cycle) keeps T_cexec = T_exec only if it finds an idle CPU, that is, if fewer than
    /// CPUs(n) threads come before it in the node's order (decreasing T_I/O). Counting only the
    /// modules that come before it in every mapping keeps this a relaxation. Skipped when a CPU is
    /// pinned by hand (the scheduler then does not choose), and when its rows would exceed
    /// `max_row_terms` (the verifier then rejects what it would have pruned).
    fn first_round(&mut self, app: &Application, cluster: &Cluster, an: &Analysis, max_terms: usize) {
        if self.dec.pinned_cpu.iter().any(|p| p.is_some()) {
            return;
        }
        // Rows when they are small enough (pumpkin's search does best without extra integer
        // variables); otherwise the same constraints in O(modules) per node, as prefix chains.
        let active = self.active.clone();
        if let Some(rows) = rows::first_round_rows(app, cluster, an, max_terms, &active) {
            return self.post_rows(app, cluster, rows);
        }
        for ch in rows::first_round_chains(app, cluster, an, &active) {
            if self.halt() {
                return;
            }
            // prefix[i] = number of order[..i] on the node.
            let tag = self.tag("first-round", format!("allocation order on {}", cluster.node(ch.node).name));
            let last = ch.checks.last().expect("non-empty").0;
            let mut prefix: Vec<DomainId> = Vec::with_capacity(last + 1);
            for (i, &o) in ch.order[..last].iter().enumerate() {
                let x = self.xl(o, ch.node).expect("domain").get_integer_variable();
                let p = self.solver.new_bounded_integer(0, i as i32 + 1);
                let mut t = vec![p.scaled(1), x.scaled(-1)];
                if let Some(&q) = prefix.last() {
                    t.push(q.scaled(-1));
                }
                self.solver.add_constraint(equals(t, 0, tag)).post();
                prefix.push(p);
            }
            for &(pos, r) in &ch.checks {
                let tag = self
                    .tag("first-round", format!("{} idle CPU on {}", app.object(r).name, cluster.node(ch.node).name));
                let xr = self.xl(r, ch.node).expect("domain");
                self.solver
                    .add_constraint(less_than_or_equals(vec![prefix[pos - 1].scaled(1)], ch.cap, tag))
                    .implied_by(xr);
            }
        }
    }

    /// The first allocation round for a module paced by its inputs (not in a cycle): it keeps up
    /// only if the CPU it gets has a free share >= u = T_exec / (fastest input pace). A module
    /// placed takes the least-loaded CPU and leaves it loaded at least its own LD, and loads
    /// never fall; so while some CPU could still keep the module up, the least-loaded one
    /// can, and a module heavier than 1 - u placed before it turns that CPU into one that
    /// cannot. After CPUs(n) heavy modules no CPU can, whatever else (lighter, in a cycle, of
    /// uncertain order) came between: at most CPUs(n) - 1 heavy modules surely before it.
    /// (Until 2026-11 any module that might come first switched the row off, as if the
    /// argument needed every earlier module heavy; it does not.) Skipped as `first_round`.
    fn keep_up(&mut self, app: &Application, cluster: &Cluster, an: &Analysis, max_terms: usize) {
        if self.dec.pinned_cpu.iter().any(|p| p.is_some()) {
            return;
        }
        let active = self.active.clone();
        match rows::keep_up_rows(app, cluster, an, max_terms, &active) {
            Some(rows) => self.post_rows(app, cluster, rows),
            None => self.skipped.push("keep-up"),
        }
    }

    /// Posts count rows: `x[object][node]` implies Σ heavy − |heavy| · Σ light <= cap.
    fn post_rows(&mut self, app: &Application, cluster: &Cluster, rows: Vec<rows::CountRow>) {
        for r in rows {
            if self.halt() {
                return;
            }
            let what = match r.family {
                "first-round" => format!("{} idle CPU on {}", app.object(r.object).name, cluster.node(r.node).name),
                _ => format!("{} on {}", app.object(r.object).name, cluster.node(r.node).name),
            };
            let tag = self.tag(r.family, what);
            let big = r.heavy.len() as i32;
            let mut w = vec![1; r.heavy.len()];
            w.extend(std::iter::repeat_n(-big, r.light.len()));
            let lits: Vec<Literal> =
                r.heavy.iter().chain(&r.light).map(|&o| self.xl(o, r.node).expect("domain")).collect();
            let xm = self.xl(r.object, r.node).expect("domain");
            self.solver.add_constraint(boolean_less_than_or_equals(w, lits, r.cap, tag)).implied_by(xm);
        }
    }

    /// Requirements: minimum frequencies are checked against the fastest possible pace (no
    /// mapping can do better; the presolve already removed the nodes too slow for them); path
    /// latencies (eq 11) bound the routes' transfer times given the modules' fastest T_it.
    fn requirements(&mut self, app: &Application, cluster: &Cluster, an: &Analysis) {
        for r in &app.requirements {
            if self.halt() {
                return;
            }
            if let Requirement::MinFrequency { name, group, hz } = r {
                let tag = self.tag("requirements", name.clone());
                for &o in &app.group(*group).objects {
                    let Some(mi) = an.module_of[o.index()] else { continue };
                    let fastest = 1.0 / an.tit_lo[mi];
                    if *hz > fastest * (1.0 + EPS) + 1e-15 {
                        let f = self.solver.get_false_literal();
                        self.post_clause(vec![f], tag);
                    }
                }
            }
            if let Requirement::MaxLatency { name, path, max_s } = r {
                let base: f64 = path.iter().filter_map(|o| an.module_of[o.index()]).map(|mi| an.tit_lo[mi]).sum();
                let mut slack = max_s * (1.0 + EPS) + 1e-15 - base;
                let tag = self.tag("requirements", name.clone());
                let (mut w, mut lits) = (Vec::new(), Vec::new());
                const S: f64 = 1_000_000.0;
                let mut terms = Vec::new();
                for pair in path.windows(2) {
                    let Some(e) = app.graph.edges_connecting(pair[0], pair[1]).next() else {
                        continue;
                    };
                    for &(k, yk) in &self.y[e.id().index()] {
                        let net = cluster.network(k);
                        let c = crate::perf::transfer_time(e.weight().volume, net);
                        if self.constant(yk) {
                            slack -= c;
                        } else {
                            terms.push((c, yk));
                        }
                    }
                }
                for (c, yk) in terms {
                    if c > slack {
                        self.post_clause(vec![!yk], tag);
                    } else if slack > 0.0 && (c / slack * S).floor() >= 1.0 {
                        // (Weights that round to 0 are dropped: a relaxation, and pumpkin
                        // cannot scale by 0.)
                        w.push((c / slack * S).floor() as i32);
                        lits.push(yk);
                    }
                }
                if slack < 0.0 {
                    let f = self.solver.get_false_literal();
                    self.post_clause(vec![f], tag);
                } else if !lits.is_empty() {
                    self.solver.add_constraint(boolean_less_than_or_equals(w, lits, S as i32, tag)).post();
                }
            }
        }
    }

    /// Filter locality (CP paper, Section 4.2): a filter shares the node of one of its sources or
    /// destinations.
    fn filter_locality(&mut self, app: &Application, an: &Analysis) {
        for f in app.graph.node_indices().filter(|&o| !app.object(o).is_module()) {
            if self.halt() {
                return;
            }
            let tag = self.tag("filter-locality", app.object(f).name.clone());
            let nbs: Vec<ObjectId> = app
                .graph
                .neighbors_directed(f, Direction::Incoming)
                .chain(app.graph.neighbors_directed(f, Direction::Outgoing))
                .collect();
            for &n in &an.domain[f.index()] {
                let xf = self.xl(f, n).expect("domain");
                let mut c = vec![!xf];
                c.extend(nbs.iter().filter_map(|&b| self.xl(b, n)));
                self.post_clause(c, tag);
            }
        }
    }

    /// Symmetry breaking. Module instances of one group with the same domain whose swap maps the
    /// edge set onto itself (same volumes and roles) are interchangeable: their nodes are ordered.
    /// Nodes with the same CPUs, processor type and networks, that every domain treats alike, are
    /// interchangeable: a later one is used only if the earlier one is. Both keep at least one
    /// mapping of every orbit, so feasibility and optimal node counts are unchanged.
    fn symmetry(&mut self, app: &Application, cluster: &Cluster, an: &Analysis) {
        let in_paths: std::collections::HashSet<ObjectId> = app
            .requirements
            .iter()
            .flat_map(|r| match r {
                Requirement::MaxLatency { path, .. } => path.clone(),
                _ => vec![],
            })
            .collect();
        let edge_key =
            |a: ObjectId, b: ObjectId, w: &crate::model::Edge| (a, b, format!("{:?}", w.role), w.volume.to_bits());
        let mut edges: std::collections::HashMap<(ObjectId, ObjectId, String, u64), usize> = Default::default();
        for e in app.graph.edge_references() {
            *edges.entry(edge_key(e.source(), e.target(), e.weight())).or_default() += 1;
        }
        let swappable = |a: ObjectId, b: ObjectId| -> bool {
            let sw = |o: ObjectId| {
                if o == a {
                    b
                } else if o == b {
                    a
                } else {
                    o
                }
            };
            let mut img: std::collections::HashMap<(ObjectId, ObjectId, String, u64), usize> = Default::default();
            for e in app.graph.edge_references() {
                *img.entry(edge_key(sw(e.source()), sw(e.target()), e.weight())).or_default() += 1;
            }
            img == edges
        };
        for g in &app.groups {
            if !g.is_module {
                continue;
            }
            if self.halt() {
                return;
            }
            let objs: Vec<ObjectId> = g.objects.iter().copied().filter(|o| !in_paths.contains(o)).collect();
            let mut used = vec![false; objs.len()];
            for i in 0..objs.len() {
                if used[i] {
                    continue;
                }
                let mut class = vec![objs[i]];
                for j in i + 1..objs.len() {
                    if !used[j]
                        && an.domain[objs[j].index()] == an.domain[objs[i].index()]
                        && swappable(objs[i], objs[j])
                    {
                        used[j] = true;
                        class.push(objs[j]);
                    }
                }
                for w in class.windows(2) {
                    let (Slot::Var(a), Slot::Var(b)) =
                        (self.dec.node_var[w[0].index()], self.dec.node_var[w[1].index()])
                    else {
                        continue;
                    };
                    let tag =
                        self.tag("symmetry", format!("{} before {}", app.object(w[0]).name, app.object(w[1]).name));
                    self.solver.add_constraint(binary_less_than_or_equals(a, b, tag)).post();
                }
            }
        }
        // Identical nodes.
        let n = cluster.nodes.len();
        let signature = |i: usize| {
            let node = &cluster.nodes[i];
            let member: Vec<bool> = an.domain.iter().map(|d| d.contains(&NodeId(i as u32))).collect();
            (node.cpus, node.processor.clone(), node.networks.clone(), member)
        };
        let sigs: Vec<_> = (0..n).map(signature).collect();
        let mut prev_of_class: std::collections::HashMap<usize, usize> = Default::default();
        for i in 0..n {
            let Some(first) = (0..i).find(|&j| sigs[j] == sigs[i]) else {
                continue;
            };
            if self.halt() {
                return;
            }
            let prev = *prev_of_class.get(&first).unwrap_or(&first);
            prev_of_class.insert(first, i);
            let (a, b) = (NodeId(prev as u32), NodeId(i as u32));
            let tag = self.tag("symmetry", format!("{} used before {}", cluster.node(a).name, cluster.node(b).name));
            // used(b) -> used(a): for every object o placed on b, a is used.
            let Some(ua) = self.used_literal(app, a, tag) else { continue };
            for o in app.graph.node_indices() {
                if let Some(xb) = self.xl(o, b) {
                    self.post_clause(vec![!xb, ua], tag);
                }
            }
        }
    }

    /// Objective "nodes used" [CP paper 4.4]: a literal per node, true iff an object sits on it,
    /// and their sum. With the redundant bin-packing bound: the CPUs of the used nodes hold at
    /// least the total load (each module's smallest load over its domain); without it the model
    /// from the paper proves no optimum in 60 s (pumpkin notes). In a scoped model the sum runs
    /// over the scope's nodes only (the others' use is constant).
    pub fn nodes_objective(&mut self, app: &Application, cluster: &Cluster, an: &Analysis) -> Option<DomainId> {
        const S: f64 = 10_000.0;
        let tag = self.tag("objective", "nodes used".into());
        let mut used = Vec::new();
        for n in (0..cluster.nodes.len() as u32).map(NodeId) {
            if self.dead() {
                return None;
            }
            if !self.active[n.ix()] {
                continue;
            }
            if let Some(u) = self.used_literal(app, n, tag) {
                used.push((n, u));
            }
        }
        let total = used.len() as i32;
        if self.dead() {
            return None;
        }
        let obj = self.solver.new_named_bounded_integer(0, total, "nodes used");
        let mut t: Vec<_> = used.iter().map(|(_, u)| u.get_integer_variable().scaled(1)).collect();
        t.push(obj.scaled(-1));
        self.solver.add_constraint(equals(t, 0, tag)).post();
        if used.is_empty() || self.scoped {
            return Some(obj); // nothing to place: 0 nodes; scoped: no global bound applies
        }
        let load = an.total_load_lo(app, cluster);
        if !self.dec.pinned_cpu.iter().any(|p| p.is_some()) {
            let tag = self.tag("objective", "used CPUs give every solo module its own".into());
            let t: Vec<_> =
                used.iter().map(|(n, u)| u.get_integer_variable().scaled(-(cluster.node(*n).cpus as i32))).collect();
            self.solver.add_constraint(less_than_or_equals(t, -(an.solo_everywhere(app, cluster) as i32), tag)).post();
        }
        let tag = self.tag("objective", "used CPUs hold the total load".into());
        let t: Vec<_> = used
            .iter()
            .map(|(n, u)| u.get_integer_variable().scaled(-((cluster.node(*n).cpus as f64 * S) as i32)))
            .collect();
        self.solver.add_constraint(less_than_or_equals(t, -((load * S).floor() as i32), tag)).post();
        Some(obj)
    }

    /// A literal true iff some object is on node `n` (created once; None if no object may be).
    fn used_literal(&mut self, app: &Application, n: NodeId, tag: ConstraintTag) -> Option<Literal> {
        if let Some(&u) = self.used.get(&n.0) {
            return Some(u);
        }
        let here: Vec<Literal> = app.graph.node_indices().filter_map(|o| self.xl(o, n)).collect();
        if here.is_empty() {
            return None;
        }
        let u = if here.iter().any(|&l| self.constant(l)) {
            self.yes
        } else {
            let u = self.solver.new_literal();
            for &x in &here {
                self.post_clause(vec![!x, u], tag);
            }
            let mut c = vec![!u];
            c.extend(here);
            self.post_clause(c, tag);
            u
        };
        self.used.insert(n.0, u);
        Some(u)
    }

    /// Keeps only solutions with `obj <= k` from now on.
    pub fn bound_objective(&mut self, obj: DomainId, k: i32) {
        let tag = self.tag("objective", format!("at most {k}"));
        self.solver.add_constraint(less_than_or_equals(vec![obj.scaled(1)], k, tag)).post();
    }

    /// The pumpkin literal of a solver-neutral one, or the constant it is (`Err(value)`).
    fn literal(&self, l: Lit) -> Result<Literal, bool> {
        let level = |o: ObjectId| self.module_of[o.index()].map(|mi| &self.level[mi]);
        match l {
            Lit::Place(o, n, p) => self.xl(o, n).map(|x| if p { x } else { !x }).ok_or(!p),
            Lit::Route(e, k, p) => self.yl(e, k).map(|y| if p { y } else { !y }).ok_or(!p),
            Lit::Slower(o, v) => {
                let Some((keys, ge)) = level(o) else { return Err(false) };
                match keys.iter().position(|&k| k > v) {
                    None => Err(false),
                    Some(0) => Err(true),
                    Some(i) => Ok(ge[i]),
                }
            }
            Lit::Faster(o, v) => {
                let Some((keys, ge)) = level(o) else { return Err(false) };
                match keys.iter().rposition(|&k| k < v) {
                    None => Err(false),
                    Some(j) if j + 1 == keys.len() => Err(true),
                    Some(j) => Ok(!ge[j + 1]),
                }
            }
        }
    }

    /// The solver literals of a disjunction, those about impossible values dropped; None when
    /// one of them is certain (the disjunction holds).
    fn clause_literals(&self, lits: &[Lit]) -> Option<Vec<Literal>> {
        let mut out = Vec::new();
        for &l in lits {
            match self.literal(l) {
                Ok(x) => out.push(x),
                Err(false) => {}
                Err(true) => return None,
            }
        }
        Some(out)
    }

    /// Adds the clause "at least one of these literals holds". Literals about impossible values
    /// are false (dropped when positive; a negative one makes the clause trivially true).
    pub fn add_nogood_clause(&mut self, lits: &[Lit], family: &'static str, what: String) {
        let Some(mut out) = self.clause_literals(lits) else { return };
        let tag = self.tag(family, what);
        if out.is_empty() {
            let f = self.solver.get_false_literal();
            out.push(f);
        }
        self.solver.add_constraint(clause(out, tag)).post();
    }

    /// Adds "at most `at_most` of `lits` hold, unless one of `unless` does", as one linear row
    /// over literals: Σ lits + M·Σ ¬unless <= at_most + M·|unless| with M = |lits| − at_most.
    /// Literals about impossible values are false, those about certain ones true.
    pub fn add_nogood_cut(&mut self, lits: &[Lit], at_most: usize, unless: &[Lit], family: &'static str, what: String) {
        if !self.cuts_seen.insert((lits.to_vec(), at_most, unless.to_vec())) {
            return;
        }
        let Some(esc) = self.clause_literals(unless) else { return };
        let mut xs = Vec::new();
        let mut k = at_most as i64;
        for &l in lits {
            match self.literal(l) {
                Ok(x) => xs.push(x),
                Err(false) => {}
                Err(true) => k -= 1,
            }
        }
        if k < 0 {
            let c: Vec<Lit> = unless.to_vec();
            return self.add_nogood_clause(&c, family, what);
        }
        if xs.len() as i64 <= k {
            return;
        }
        let m = xs.len() as i64 - k;
        let tag = self.tag(family, what);
        let mut w = vec![1i32; xs.len()];
        w.extend(std::iter::repeat_n(m as i32, esc.len()));
        let rhs = (k + m * esc.len() as i64) as i32;
        xs.extend(esc.iter().map(|&e| !e));
        self.solver.add_constraint(boolean_less_than_or_equals(w, xs, rhs, tag)).post();
    }

    /// Literals that pin down a complete mapping (its negation is the most specific nogood).
    pub fn assignment(&self, mapping: &Mapping) -> Vec<Lit> {
        let mut v: Vec<Lit> =
            mapping.placement.iter().enumerate().map(|(i, p)| Lit::Place(ObjectId::new(i), p.node, true)).collect();
        for (i, r) in mapping.routes.iter().enumerate() {
            if let Route::Net(k) = r {
                v.push(Lit::Route(EdgeId::new(i), *k, true));
            }
        }
        v
    }
}

impl Decoder {
    /// The mapping a solution describes.
    pub fn decode(&self, sol: &impl ProblemSolution) -> Mapping {
        let value = |s: &Slot| match *s {
            Slot::Var(v) => sol.get_integer_value(v),
            Slot::Fixed(x) => x,
        };
        let placement = self
            .node_var
            .iter()
            .enumerate()
            .map(|(i, s)| Placement { node: NodeId(value(s) as u32), cpu: self.pinned_cpu[i] })
            .collect();
        let routes = self
            .net_var
            .iter()
            .map(|s| match value(s) {
                0 => Route::Local,
                k => Route::Net(NetworkId(k as u32 - 1)),
            })
            .collect();
        Mapping { placement, routes }
    }
}
