//! A lower bound on the nodes any sound mapping uses, from a small relaxation solved exactly
//! with pumpkin: nodes and modules grouped into classes, counts instead of placements.
//!
//! Node classes: nodes with the same CPUs, processor type, networks and membership in every
//! module's domain (so every domain is a union of classes, and a pinned node is a class of its
//! own). Module classes: a group's instances with the same domain. Variables: cnt[c][k], the
//! modules of class c on nodes of class k; used[k], the nodes of class k in use. Constraints,
//! each a sum over the nodes of a class of what holds on every node of a sound mapping:
//! - every module is placed in its domain, only on used nodes;
//! - loads: Σ LD x T_exec / T_it_sync <= CPUs per node (ARCHITECTURE.md, "Soundness");
//! - stacking (`Analysis::stack_params`, `may_follow`): the modules that come first on their CPU
//!   are at most the CPUs; every other module follows one it may follow, each module preceding
//!   at most one (first[c][k] + Σ_a p[a][c][k] = cnt[c][k], Σ_c p[a][c][k] <= cnt[a][k]).
//! Members of synchronous cycles (threads) take no CPU in this count; filters are ignored.
//! Minimise Σ used[k]: each "no solution with at most j nodes" is a proof, so the bound is the
//! smallest j not refuted, even when the budget ends before the relaxation's optimum.

use super::{analysis::may_follow, Analysis};
use crate::model::{Application, Cluster, NodeId};
use pumpkin_solver::conflict_resolvers::resolvers::ResolutionResolver;
use pumpkin_solver::core::results::SatisfactionResult;
use pumpkin_solver::core::termination::TerminationCondition;
use pumpkin_solver::core::variables::{DomainId, TransformableVariable};
use pumpkin_solver::{equals, less_than_or_equals, Solver};
use std::collections::BTreeMap;

/// The bound and whether the relaxation was solved to its optimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassBound {
    pub nodes: i64,
    pub complete: bool,
}

struct Class {
    /// Node classes the module class may use, with the most permissive (LD, u) of its
    /// instances there (None: cycle members) and the smallest load lower bound.
    on: BTreeMap<usize, (Option<super::analysis::Stack>, f64)>,
    size: i32,
}

/// Computes the class bound, starting from `from` (a bound already known); `stop` is polled
/// during search. Not valid when CPUs are pinned by hand (the stacking argument needs the
/// scheduler's choice): callers check.
pub fn class_bound(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    from: i64,
    stop: &mut impl TerminationCondition,
) -> ClassBound {
    // Node classes.
    let mut domains: BTreeMap<Vec<NodeId>, usize> = BTreeMap::new();
    for &o in &an.modules {
        let d = &an.domain[o.index()];
        let k = domains.len();
        domains.entry(d.clone()).or_insert(k);
    }
    let mut member = vec![vec![false; domains.len()]; cluster.nodes.len()];
    for (d, &i) in &domains {
        for n in d {
            member[n.ix()][i] = true;
        }
    }
    let mut node_class: BTreeMap<(u32, String, Vec<u32>, Vec<bool>), Vec<NodeId>> = BTreeMap::new();
    for (i, n) in cluster.nodes.iter().enumerate() {
        let key = (n.cpus, n.processor.clone(), n.networks.iter().map(|k| k.0).collect(), member[i].clone());
        node_class.entry(key).or_default().push(NodeId(i as u32));
    }
    let node_classes: Vec<Vec<NodeId>> = node_class.into_values().collect();
    let class_of: BTreeMap<NodeId, usize> =
        node_classes.iter().enumerate().flat_map(|(k, ns)| ns.iter().map(move |&n| (n, k))).collect();
    // Module classes: (group, domain).
    let mut classes: BTreeMap<(u32, usize), Class> = BTreeMap::new();
    for (mi, &o) in an.modules.iter().enumerate() {
        let d = &an.domain[o.index()];
        if d.is_empty() {
            continue;
        }
        let c = classes
            .entry((app.object(o).group.0, domains[d]))
            .or_insert_with(|| Class { on: BTreeMap::new(), size: 0 });
        c.size += 1;
        for &n in d {
            let k = class_of[&n];
            let p = an.stack_params(app, cluster, mi, n);
            let load = an.load_lo(app, cluster, mi, n);
            let e = c.on.entry(k).or_insert((p, load));
            e.0 = match (e.0, p) {
                (Some(a), Some(b)) => Some(a.loosest(b)),
                _ => None,
            };
            e.1 = e.1.min(load);
        }
    }
    let classes: Vec<Class> = classes.into_values().collect();
    // The LP relaxation first (milliseconds), its bound certified by a dual solution checked
    // here; then the exact relaxation from there, as long as the budget lasts.
    let mut lo = from.max(0);
    if let Some(lp) = lp_bound(cluster, &node_classes, &classes) {
        lo = lo.max(lp);
    }
    loop {
        if lo > cluster.nodes.len() as i64 {
            return ClassBound { nodes: lo, complete: true };
        }
        let mut solver = Solver::default();
        if build(&mut solver, cluster, &node_classes, &classes, lo as i32).is_none() {
            lo += 1;
            continue;
        }
        let mut brancher = solver.default_brancher();
        let mut resolver = ResolutionResolver::default();
        let verdict = match solver.satisfy(&mut brancher, stop, &mut resolver) {
            SatisfactionResult::Satisfiable(_) => Some(true),
            SatisfactionResult::Unsatisfiable(..) => Some(false),
            SatisfactionResult::Unknown(..) => None,
        };
        match verdict {
            Some(true) => return ClassBound { nodes: lo, complete: true },
            Some(false) => lo += 1,
            None => return ClassBound { nodes: lo, complete: false },
        }
    }
}

/// A linear program min c·x, rows `Σ a x (= or >=) b`, 0 <= x <= u.
struct Lp {
    cost: Vec<f64>,
    upper: Vec<f64>,
    rows: Vec<(Vec<(usize, f64)>, bool, f64)>,
}

impl Lp {
    fn var(&mut self, cost: f64, upper: f64) -> usize {
        self.cost.push(cost);
        self.upper.push(upper);
        self.cost.len() - 1
    }
    fn ge(&mut self, terms: Vec<(usize, f64)>, rhs: f64) {
        self.rows.push((terms, false, rhs));
    }
    fn eq(&mut self, terms: Vec<(usize, f64)>, rhs: f64) {
        self.rows.push((terms, true, rhs));
    }

    /// A lower bound on the LP's optimum, hence on any integer solution's: microlp solves the
    /// dual (max b·y, Aᵀy <= c, y >= 0 on inequality rows), and weak duality is applied to the
    /// dual solution as returned, after clamping signs, with each violated dual constraint
    /// charged at its primal variable's upper bound: for every feasible x,
    /// c·x >= yᵀAx − Σ_j max(0, (Aᵀy)_j − c_j) u_j >= b·y − Σ_j max(0, ...) u_j. So the bound
    /// holds whatever the LP solver's accuracy.
    fn certified_bound(&self) -> Option<f64> {
        use microlp::{ComparisonOp, OptimizationDirection, Problem};
        let mut dual = Problem::new(OptimizationDirection::Maximize);
        let y: Vec<microlp::Variable> = self
            .rows
            .iter()
            .map(|(_, eq, b)| {
                dual.add_var(*b, if *eq { (f64::NEG_INFINITY, f64::INFINITY) } else { (0.0, f64::INFINITY) })
            })
            .collect();
        let mut cols: Vec<Vec<(microlp::Variable, f64)>> = vec![Vec::new(); self.cost.len()];
        for (i, (terms, _, _)) in self.rows.iter().enumerate() {
            for &(j, a) in terms {
                cols[j].push((y[i], a));
            }
        }
        for (j, col) in cols.iter().enumerate() {
            dual.add_constraint(col.as_slice(), ComparisonOp::Le, self.cost[j]);
        }
        let sol = dual.solve().ok()?.into_solution().ok()?;
        let w: Vec<f64> = self
            .rows
            .iter()
            .zip(&y)
            .map(|((_, eq, _), &v)| if *eq { sol.var_value(v) } else { sol.var_value(v).max(0.0) })
            .collect();
        let mut at = vec![0.0f64; self.cost.len()];
        let mut bound = 0.0;
        for (i, (terms, _, b)) in self.rows.iter().enumerate() {
            bound += b * w[i];
            for &(j, a) in terms {
                at[j] += a * w[i];
            }
        }
        for j in 0..self.cost.len() {
            let excess = at[j] - self.cost[j];
            if excess > 0.0 {
                bound -= excess * self.upper[j];
            }
        }
        bound.is_finite().then_some(bound)
    }
}

/// The LP relaxation of the class model (same rows as `build`, real-valued, loads unrounded,
/// without the self-pair refinement), as a certified lower bound on the nodes used.
fn lp_bound(cluster: &Cluster, node_classes: &[Vec<NodeId>], classes: &[Class]) -> Option<i64> {
    let mut lp = Lp { cost: Vec::new(), upper: Vec::new(), rows: Vec::new() };
    let used: Vec<usize> = node_classes.iter().map(|ns| lp.var(1.0, ns.len() as f64)).collect();
    let cnt: Vec<BTreeMap<usize, usize>> =
        classes.iter().map(|c| c.on.keys().map(|&k| (k, lp.var(0.0, c.size as f64))).collect()).collect();
    for (c, class) in classes.iter().enumerate() {
        lp.eq(cnt[c].values().map(|&v| (v, 1.0)).collect(), class.size as f64);
        for (&k, &v) in &cnt[c] {
            lp.ge(vec![(used[k], class.size as f64), (v, -1.0)], 0.0);
        }
    }
    for (k, ns) in node_classes.iter().enumerate() {
        let cpus = cluster.node(ns[0]).cpus as f64;
        lp.ge(vec![(used[k], -1.0)], -(ns.len() as f64));
        let mut t = vec![(used[k], cpus)];
        for (c, class) in classes.iter().enumerate() {
            if let (Some(&v), Some(&(_, load))) = (cnt[c].get(&k), class.on.get(&k)) {
                if load > 0.0 {
                    t.push((v, -load));
                }
            }
        }
        lp.ge(t, 0.0);
        let here: Vec<(usize, super::analysis::Stack)> = classes
            .iter()
            .enumerate()
            .filter_map(|(c, class)| class.on.get(&k).and_then(|e| e.0).map(|p| (c, p)))
            .collect();
        let mut firsts = vec![(used[k], cpus)];
        let mut out: BTreeMap<usize, Vec<(usize, f64)>> = BTreeMap::new();
        for &(b, pb) in &here {
            let first = lp.var(0.0, classes[b].size as f64);
            firsts.push((first, -1.0));
            let mut t = vec![(cnt[b][&k], 1.0), (first, -1.0)];
            for &(a, pa) in &here {
                if may_follow(pa, pb) {
                    let p = lp.var(0.0, classes[a].size.min(classes[b].size) as f64);
                    t.push((p, -1.0));
                    out.entry(a).or_default().push((p, -1.0));
                }
            }
            lp.eq(t, 0.0);
        }
        for (a, mut ps) in out {
            ps.push((cnt[a][&k], 1.0));
            lp.ge(ps, 0.0);
        }
        if firsts.len() > 1 {
            lp.ge(firsts, 0.0);
        }
    }
    let b = lp.certified_bound()?;
    Some((b - 1e-6).ceil().max(0.0) as i64)
}

/// Posts the relaxation with Σ used <= `at_most`; None if it is infeasible at the root.
fn build(
    s: &mut Solver,
    cluster: &Cluster,
    node_classes: &[Vec<NodeId>],
    classes: &[Class],
    at_most: i32,
) -> Option<Vec<DomainId>> {
    const S: f64 = 10_000.0;
    let tag = s.new_constraint_tag();
    let used: Vec<DomainId> = node_classes.iter().map(|ns| s.new_bounded_integer(0, ns.len() as i32)).collect();
    // cnt[c][k]
    let cnt: Vec<BTreeMap<usize, DomainId>> =
        classes.iter().map(|c| c.on.keys().map(|&k| (k, s.new_bounded_integer(0, c.size))).collect()).collect();
    for (c, class) in classes.iter().enumerate() {
        let t: Vec<_> = cnt[c].values().map(|v| v.scaled(1)).collect();
        s.add_constraint(equals(t, class.size, tag)).post();
        for (&k, &v) in &cnt[c] {
            // Only on used nodes.
            s.add_constraint(less_than_or_equals(vec![v.scaled(1), used[k].scaled(-class.size)], 0, tag)).post();
        }
    }
    for (k, ns) in node_classes.iter().enumerate() {
        let cpus = cluster.node(ns[0]).cpus as i32;
        // Loads.
        let mut t = Vec::new();
        for (c, class) in classes.iter().enumerate() {
            if let (Some(&v), Some(&(_, load))) = (cnt[c].get(&k), class.on.get(&k)) {
                let w = (load * S).floor() as i32;
                if w > 0 {
                    t.push(v.scaled(w));
                }
            }
        }
        if !t.is_empty() {
            t.push(used[k].scaled(-(cpus * S as i32)));
            s.add_constraint(less_than_or_equals(t, 0, tag)).post();
        }
        // Stacking.
        let here: Vec<(usize, super::analysis::Stack)> = classes
            .iter()
            .enumerate()
            .filter_map(|(c, class)| class.on.get(&k).and_then(|e| e.0).map(|p| (c, p)))
            .collect();
        let mut firsts = Vec::new();
        let mut out: BTreeMap<usize, Vec<DomainId>> = BTreeMap::new();
        for &(b, pb) in &here {
            let cb = cnt[b][&k];
            let first = s.new_bounded_integer(0, classes[b].size);
            firsts.push(first);
            let mut t = vec![first.scaled(1), cb.scaled(-1)];
            for &(a, pa) in &here {
                if !may_follow(pa, pb) {
                    continue;
                }
                let p = s.new_bounded_integer(0, classes[a].size.min(classes[b].size));
                t.push(p.scaled(1));
                out.entry(a).or_default().push(p);
                if a == b {
                    let present = s.new_literal_for_predicate(pumpkin_solver::core::predicate![cb >= 1], tag);
                    let u = vec![p.scaled(1), present.get_integer_variable().scaled(1), cb.scaled(-1)];
                    s.add_constraint(less_than_or_equals(u, 0, tag)).post();
                }
            }
            s.add_constraint(equals(t, 0, tag)).post();
        }
        for (a, ps) in out {
            let mut t: Vec<_> = ps.iter().map(|p| p.scaled(1)).collect();
            t.push(cnt[a][&k].scaled(-1));
            s.add_constraint(less_than_or_equals(t, 0, tag)).post();
        }
        if !firsts.is_empty() {
            let mut t: Vec<_> = firsts.iter().map(|f| f.scaled(1)).collect();
            t.push(used[k].scaled(-cpus));
            s.add_constraint(less_than_or_equals(t, 0, tag)).post();
        }
    }
    let t: Vec<_> = used.iter().map(|u| u.scaled(1)).collect();
    s.add_constraint(less_than_or_equals(t, at_most, tag)).post();
    if s.is_inconsistent() {
        return None;
    }
    Some(used)
}
