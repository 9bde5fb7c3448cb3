//! Requirement-aware presolve: removes from the objects' domains the nodes that no sound mapping
//! can use, before the greedy mapper, the bounds and the CSP see them. Pumpkin-free.
//!
//! Three arguments, each a consequence of soundness (ARCHITECTURE.md, "Soundness"): in a sound
//! mapping every module runs at its synchronisation pace, T_it = T_it_sync, and
//! T_it_sync(m) >= R x T_exec(a, node(a)) for every synchronous ancestor a of m, where R is the
//! largest product of gather ratios on a path from a to m (eq 3–4; a cycle's T_it is at least the
//! sum of the T_exec of the members of any of its elementary cycles, eq 5).
//!
//! 1. **Keep-up** (buffer-overflow rule, Section IV.B.1): a module m with a synchronous input i
//!    (not in m's own cycle) needs T_cexec(m) <= k x T_it(i), and T_cexec >= T_exec. So a node
//!    where T_exec(m) > k x (the slowest T_it_sync of i over every mapping) is never usable.
//! 2. **Minimum frequency** F on a module group: T_it(m) <= 1 / F for its instances, hence
//!    T_it(a) <= 1 / (F x R) for each synchronous ancestor a. A node where a's T_exec alone (or,
//!    for a cycle member, T_exec plus the smallest T_exec of the other members of an elementary
//!    cycle) exceeds that bound is never usable. For acyclic ancestors this is exact: the
//!    requirement holds iff every ancestor's T_exec respects its bound.
//! 3. **Maximum latency** L on a path (eq 11): Σ T_it over the path's modules plus the transfers
//!    is at most L; with every other term at its lower bound, each module's T_it gets a bound,
//!    which then spreads to its ancestors as in 2.
//! 4. **Routes** (eq 9–10 and placement): an edge's ends are on one node, or on two nodes that
//!    share a network whose bandwidth holds the edge's traffic (at its lowest rate) alone. A
//!    node of one end's domain with no such partner in the other end's domain is removed.
//!
//! Bounds are recomputed from the shrunken domains and the arguments repeated to a fixpoint.
//! Comparisons allow a relative 1e-6, looser than the verifier's, so that rounding can never
//! remove a node a sound mapping uses (tested against brute force).

use super::Analysis;
use crate::model::{Application, Cluster, ObjectId, Requirement};
use std::collections::BTreeMap;

/// Relative tolerance: a node is removed only when the bound is exceeded by more than this.
const TOL: f64 = 1e-6;

fn over(a: f64, b: f64) -> bool {
    a > b * (1.0 + TOL) + 1e-12
}

/// Why a node was removed from an object's domain.
#[derive(Clone, Debug, PartialEq)]
pub enum Cause {
    /// The module cannot keep up with this synchronous input (module index) on that node.
    KeepUp { input: usize, bound_s: f64 },
    /// Requirement `requirement` (index into `Application::requirements`) bounds the module's T_it.
    Requirement { requirement: usize, bound_s: f64 },
    /// This edge (carrying at least `bw` bytes per second) has no network from that node to any
    /// node of the other end's domain that could carry it, and the ends cannot share the node.
    Route { edge: crate::model::EdgeId, bw: f64 },
}

/// What the presolve did.
#[derive(Clone, Debug, Default)]
pub struct Presolve {
    /// (object, node) pairs removed from the domains.
    pub removed: usize,
    /// Pairs removed per reason, e.g. "keep-up" or a requirement's name.
    pub by_reason: BTreeMap<String, usize>,
    /// Rounds to the fixpoint.
    pub rounds: usize,
    /// Objects whose domain the presolve emptied, with the cause of the last removal.
    pub emptied: Vec<(ObjectId, Cause)>,
}

/// Runs the presolve on `an` (domains, then bounds), recording what it removed and, when a
/// domain becomes empty, a problem statement.
pub(crate) fn run(app: &Application, cluster: &Cluster, an: &mut Analysis) {
    let nm = an.modules.len();
    loop {
        an.presolve.rounds += 1;
        let mut removed_now = 0usize;
        let mut emptied: Vec<(ObjectId, Cause)> = Vec::new();
        // 1. Keep-up with each synchronous input.
        for mi in 0..nm {
            let mut bound: Option<(f64, usize)> = None;
            for x in &an.inputs[mi] {
                if an.cycle_of[mi].is_some() && an.cycle_of[x.source] == an.cycle_of[mi] {
                    continue;
                }
                let b = x.ratio * an.tit_hi[x.source];
                if b.is_finite() && b > 0.0 && bound.is_none_or(|(c, _)| b < c) {
                    bound = Some((b, x.source));
                }
            }
            if let Some((b, src)) = bound {
                let cause = Cause::KeepUp { input: src, bound_s: b };
                removed_now += restrict(app, cluster, an, mi, |t| over(t, b), "keep-up", cause, &mut emptied);
            }
        }
        // 2–3. Requirements: bounds on T_it, spread to synchronous ancestors.
        let (bound, origin) = requirement_bounds(app, cluster, an);
        for mi in 0..nm {
            let (b, Some(ri)) = (bound[mi], origin[mi]) else { continue };
            let cause = Cause::Requirement { requirement: ri, bound_s: b };
            let reason = requirement_name(app, ri);
            // The other members' smallest sum on each elementary cycle through mi (eq 5).
            let others: Vec<f64> = match an.sync_lo.cycle_of[mi] {
                Some(c) if !an.sync_lo.approximate.contains(&c) => an.sync_lo.elementary[c]
                    .iter()
                    .filter(|cy| cy.contains(&mi))
                    .map(|cy| cy.iter().filter(|&&j| j != mi).map(|&j| an.texec_lo(app, cluster, j)).sum())
                    .collect(),
                _ => vec![0.0],
            };
            let worst = others.iter().copied().fold(0.0, f64::max);
            removed_now += restrict(app, cluster, an, mi, |t| over(t + worst, b), &reason, cause, &mut emptied);
        }
        // 4. Routes: every edge needs a partner node for each end.
        removed_now += routes(app, cluster, an, &mut emptied);
        for (o, cause) in emptied {
            an.problems.push(format!("{} has no node left: {}", app.object(o).name, describe(app, an, o, &cause)));
            an.presolve.emptied.push((o, cause));
        }
        an.presolve.removed += removed_now;
        if removed_now == 0 || !an.problems.is_empty() {
            return;
        }
        an.refresh_bounds(app, cluster);
    }
}

/// Arc consistency of every edge's ends (rule 4); returns how many pairs it removed.
fn routes(app: &Application, cluster: &Cluster, an: &mut Analysis, emptied: &mut Vec<(ObjectId, Cause)>) -> usize {
    use petgraph::visit::EdgeRef;
    let nn = cluster.nodes.len();
    let nk = cluster.networks.len();
    let mut removed = 0usize;
    let mut in_other = vec![false; nn];
    let mut count = vec![0usize; nk];
    for e in app.graph.edge_references() {
        let bw = e.weight().volume * an.rate_lo[e.id().index()];
        let usable: Vec<bool> = cluster.networks.iter().map(|k| !over(bw, k.bandwidth)).collect();
        for (this, other) in [(e.source(), e.target()), (e.target(), e.source())] {
            if an.domain[other.index()].is_empty() || an.domain[this.index()].is_empty() {
                continue;
            }
            count.iter_mut().for_each(|c| *c = 0);
            for &b in &an.domain[other.index()] {
                in_other[b.ix()] = true;
                for k in &cluster.node(b).networks {
                    count[k.ix()] += 1;
                }
            }
            let before = an.domain[this.index()].len();
            an.domain[this.index()].retain(|&a| {
                in_other[a.ix()]
                    || cluster
                        .node(a)
                        .networks
                        .iter()
                        .any(|k| usable[k.ix()] && count[k.ix()] > usize::from(in_other[a.ix()]))
            });
            for &b in &an.domain[other.index()] {
                in_other[b.ix()] = false;
            }
            let k = before - an.domain[this.index()].len();
            if k > 0 {
                removed += k;
                *an.presolve.by_reason.entry("routes".to_string()).or_default() += k;
                if an.domain[this.index()].is_empty() {
                    emptied.push((this, Cause::Route { edge: e.id(), bw }));
                }
            }
        }
    }
    removed
}

/// Removes the nodes of module `mi`'s domain where `bad(T_exec there)`; returns how many.
#[allow(clippy::too_many_arguments)]
fn restrict(
    app: &Application,
    cluster: &Cluster,
    an: &mut Analysis,
    mi: usize,
    bad: impl Fn(f64) -> bool,
    reason: &str,
    cause: Cause,
    emptied: &mut Vec<(ObjectId, Cause)>,
) -> usize {
    let o = an.modules[mi];
    let before = an.domain[o.index()].len();
    if before == 0 {
        return 0;
    }
    let c = app.object(o).costs().expect("module");
    an.domain[o.index()].retain(|&n| c.texec.on(&cluster.node(n).processor).is_none_or(|t| !bad(t)));
    let removed = before - an.domain[o.index()].len();
    if removed > 0 {
        *an.presolve.by_reason.entry(reason.to_string()).or_default() += removed;
        if an.domain[o.index()].is_empty() {
            emptied.push((o, cause));
        }
    }
    removed
}

fn requirement_name(app: &Application, ri: usize) -> String {
    match &app.requirements[ri] {
        Requirement::MinFrequency { name, .. } | Requirement::MaxLatency { name, .. } => name.clone(),
    }
}

/// Per module: the tightest bound on T_it any requirement implies, and which requirement.
/// Bounds of a component's members are shared (a cycle has one T_it) and spread to synchronous
/// inputs divided by the gather ratio (T_it(m) >= k x T_it(i)), sinks first.
fn requirement_bounds(app: &Application, cluster: &Cluster, an: &Analysis) -> (Vec<f64>, Vec<Option<usize>>) {
    let nm = an.modules.len();
    let mut bound = vec![f64::INFINITY; nm];
    let mut origin: Vec<Option<usize>> = vec![None; nm];
    let tighten = |mi: usize, b: f64, ri: usize, bound: &mut Vec<f64>, origin: &mut Vec<Option<usize>>| {
        if b < bound[mi] {
            bound[mi] = b;
            origin[mi] = Some(ri);
        }
    };
    for (ri, r) in app.requirements.iter().enumerate() {
        match r {
            Requirement::MinFrequency { group, hz, .. } => {
                for &o in &app.group(*group).objects {
                    if let Some(mi) = an.module_of[o.index()] {
                        tighten(mi, 1.0 / hz, ri, &mut bound, &mut origin);
                    }
                }
            }
            Requirement::MaxLatency { path, max_s, .. } => {
                // Lower bound of eq 11: every module's T_it at its lower bound, and the cheapest
                // transfer between consecutive objects that can never share a node.
                let mut lb = 0.0;
                let mut count: BTreeMap<usize, usize> = BTreeMap::new();
                for &o in path {
                    if let Some(mi) = an.module_of[o.index()] {
                        lb += an.tit_lo[mi];
                        *count.entry(mi).or_default() += 1;
                    }
                }
                for w in path.windows(2) {
                    let (da, db) = (&an.domain[w[0].index()], &an.domain[w[1].index()]);
                    if da.iter().any(|n| db.contains(n)) {
                        continue;
                    }
                    lb += app
                        .graph
                        .edges_connecting(w[0], w[1])
                        .map(|e| {
                            cluster
                                .networks
                                .iter()
                                .map(|k| e.weight().volume / k.bandwidth + k.latency)
                                .fold(f64::INFINITY, f64::min)
                        })
                        .filter(|t| t.is_finite())
                        .fold(0.0, f64::max);
                }
                for (&mi, &c) in &count {
                    let b = (max_s - lb + c as f64 * an.tit_lo[mi]) / c as f64;
                    tighten(mi, b.max(0.0), ri, &mut bound, &mut origin);
                }
            }
        }
    }
    for comp in an.sync_lo.order.iter().rev() {
        let (b, ri) =
            comp.iter()
                .map(|&m| (bound[m], origin[m]))
                .fold((f64::INFINITY, None), |acc, x| if x.0 < acc.0 { x } else { acc });
        let Some(ri) = ri else { continue };
        for &m in comp {
            tighten(m, b, ri, &mut bound, &mut origin);
        }
        for &m in comp {
            for x in &an.inputs[m] {
                if comp.contains(&x.source) {
                    continue;
                }
                tighten(x.source, b / x.ratio, ri, &mut bound, &mut origin);
            }
        }
    }
    (bound, origin)
}

/// A sentence on why the last node of `o` was removed.
pub fn describe(app: &Application, an: &Analysis, o: ObjectId, cause: &Cause) -> String {
    let ms = |s: f64| format!("{:.3} ms", s * 1e3).replace(".000 ms", " ms");
    match cause {
        Cause::KeepUp { input, bound_s } => format!(
            "it cannot keep up with its FIFO input {}: on every allowed node its T_exec exceeds {} (the input's slowest pace)",
            app.object(an.modules[*input]).name,
            ms(*bound_s)
        ),
        Cause::Requirement { requirement, bound_s } => {
            let what = match &app.requirements[*requirement] {
                Requirement::MinFrequency { name, group, hz } => {
                    format!("requirement {name} ({} at least {hz} Hz)", app.group(*group).name)
                }
                Requirement::MaxLatency { name, max_s, .. } => {
                    format!("requirement {name} (path latency at most {})", ms(*max_s))
                }
            };
            let _ = o;
            format!("{what} needs its T_it <= {}, and its T_exec is above that on every allowed node", ms(*bound_s))
        }
        Cause::Route { edge, bw } => format!(
            "its edge {} carries at least {:.3} MB/s, and from no allowed node does a network that fast reach a node the other end may use",
            app.edge_name(*edge),
            bw / 1e6
        ),
    }
}
