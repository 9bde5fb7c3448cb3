//! The pattern bound: the node-by-node relaxation's stacking rows approximate the allocation
//! (a matching of stacked modules to hosts, Hall-type rows); where every module's key is one
//! value (the split on pace roots' processor types fixes the paces), a node's allocation is
//! a function of the modules placed on it, and which sets of modules a node can hold can be
//! decided exactly by simulating the published allocation. The bound is the LP of the
//! covering formulation over such sets ("patterns", Gilmore and Gomory 1961): at least
//! Σ_p λ_p nodes, where every module class is covered (Σ_p a_pc λ_p >= size_c) and each node
//! class holds at most its nodes (Σ_{p on k} λ_p <= |k|), by column generation.
//!
//! Patterns are sets a node could hold in a sound mapping (necessary conditions only, so the
//! LP is a relaxation): in the node's order (decreasing eq-6/7 key at T_it_sync, ties in
//! declaration order; ascending T_exec x LD on a configuration-1 node), each module takes the
//! least-loaded CPU, which then carries 1 − (1 − CPULD)(1 − LD); a self-paced module must find
//! it idle (it is not slowed, soundness rule 2), an input-paced one must keep up,
//! T_exec / (1 − CPULD) <= its fastest input's pace (rule 3). Networks, requirements and the
//! iteration-load allocation are not modelled.
//!
//! Why a set's own allocation is enough: removing a module from a node never raises any CPU's
//! load at any later step (the sorted loads after each step are monotone in the sorted loads
//! before it, an order-statistics argument), so a subset of a pattern that keeps the same
//! order is a pattern. The pricing search therefore only places modules whose class has a
//! positive dual value, and bounds each remaining class by the copies that fit on the loads
//! already there. A set that would be in configuration 1 is also searched in the eq-7 order
//! (a superset of the true patterns, which keeps the bound valid).
//!
//! The bound is certified whatever the LP's accuracy: with multipliers w (y_c >= 0 on the
//! covering rows, μ_k >= 0 on the capacity rows), every mapping's node count is at least
//! Σ_c y_c size_c − Σ_k μ_k |k| − Σ_k |k| max(0, max_p (Σ_c y_c a_pc − μ_k − 1)), the last
//! maximum over every pattern of node class k, which the pricing search computes exactly (a
//! round whose search stops at its node budget certifies nothing). Realistic 100/32 unseen
//! s20: the node-by-node LP left one case of one 13-node shape open; this bound is 13.375
//! there (an independent Python model gave the same), so the shape is refuted.

use super::{classes, dual_bound, ipm_duals, Classes, Rows};
use crate::csp::Analysis;
use crate::model::{Application, Cluster};
use pumpkin_solver::core::termination::TerminationCondition;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Search nodes of one pricing problem; beyond, that round's bound is not certified.
const SEARCH_NODES: u64 = 30_000_000;
/// Orders the greedy pricing tries per round.
const GREEDY_TRIES: usize = 24;
/// Rounds of column generation at most.
const ROUNDS: usize = 300;

/// One module class on one node class, with what its allocation needs.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Item {
    class: usize,
    size: u32,
    ld: f64,
    /// T_exec over its fastest input's pace (the smallest over its members); 1: self-paced.
    u: f64,
    pred: bool,
    comp: usize,
    key7: f64,
    w8: f64,
    decl: usize,
}

/// A pattern: a node class and (module class, count) pairs, ascending by class.
type Pattern = (usize, Vec<(usize, u32)>);

/// The pattern bound of `cluster` (see the module's documentation): Some(bound) when a round
/// certified one (the largest), None when the instance is out of scope (an allocation other
/// than the literal one, a synchronous cycle or lockstep group, a key that is not one value,
/// too many classes) or no round was certified. Stops early once the bound exceeds `target`.
pub(super) fn bound(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    target: i64,
    budget: Duration,
    stop: &mut impl TerminationCondition,
) -> Option<i64> {
    if !an.literal() {
        return None;
    }
    let end = Instant::now() + budget;
    let Classes::Built(node_classes, classes) = classes(app, cluster, an, true, false, stop) else {
        return None;
    };
    let mut items: Vec<Vec<Item>> = vec![Vec::new(); node_classes.len()];
    for (c, class) in classes.iter().enumerate() {
        for &k in class.on.keys() {
            let n = node_classes[k][0];
            let mut item: Option<Item> = None;
            for &mi in &class.members {
                let s = an.stack_params(app, cluster, mi, n)?;
                if s.key7_lo != s.key7_hi || s.w8_lo != s.w8_hi {
                    return None;
                }
                let this = Item {
                    class: c,
                    size: class.size as u32,
                    ld: s.ld,
                    u: s.u,
                    pred: s.pred,
                    comp: s.comp,
                    key7: s.key7_lo,
                    w8: s.w8_lo,
                    decl: an.modules[mi].index(),
                };
                match &mut item {
                    None => item = Some(this),
                    Some(f) => {
                        if (f.ld, f.pred, f.key7, f.w8) != (this.ld, this.pred, this.key7, this.w8) {
                            return None;
                        }
                        if f.comp != this.comp {
                            f.comp = usize::MAX;
                        }
                        f.u = f.u.min(this.u);
                        f.decl = f.decl.min(this.decl);
                    }
                }
            }
            items[k].extend(item);
        }
    }
    let nodes = cluster.nodes.len() as f64;
    // CPUs beyond the modules a node could hold stay idle (every module finds an idle one
    // first), so the simulation needs at most that many: the same allocation, bounded work.
    let cpus: Vec<usize> = node_classes
        .iter()
        .zip(&items)
        .map(|(ns, its)| {
            (cluster.node(ns[0]).cpus as usize).min(its.iter().map(|i| i.size as usize).sum::<usize>().max(1))
        })
        .collect();
    let caps: Vec<f64> = node_classes.iter().map(|ns| ns.len() as f64).collect();
    let sizes: Vec<f64> = classes.iter().map(|c| c.size as f64).collect();
    // Orders: eq 7's for every set, and eq 8's per synchronous component (no predecessor).
    let mut orders: Vec<Vec<Vec<Item>>> = Vec::new();
    for its in &items {
        let mut by_key = its.clone();
        by_key.sort_by(|a, b| b.key7.total_cmp(&a.key7).then(a.decl.cmp(&b.decl)));
        let mut per_node = vec![by_key];
        // usize::MAX: a class whose members are in several components; it joins every
        // component's order, and the order of such classes alone covers the rest.
        let mut comps: BTreeSet<usize> = its.iter().filter(|i| !i.pred).map(|i| i.comp).collect();
        comps.insert(usize::MAX);
        for comp in comps {
            let mut c1: Vec<Item> =
                its.iter().filter(|i| !i.pred && (i.comp == comp || i.comp == usize::MAX)).copied().collect();
            c1.sort_by(|a, b| a.w8.total_cmp(&b.w8).then(a.decl.cmp(&b.decl)));
            if c1.len() > 1 {
                per_node.push(c1);
            }
        }
        orders.push(per_node);
    }
    // Columns: every class alone on each node class it may use.
    let mut seen: BTreeSet<Pattern> = BTreeSet::new();
    let mut cols: Vec<Pattern> = Vec::new();
    for (k, its) in items.iter().enumerate() {
        for it in its {
            let p = (k, vec![(it.class, 1)]);
            if seen.insert(p.clone()) {
                cols.push(p);
            }
        }
    }
    let mut best: Option<f64> = None;
    let mut exact = false;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..ROUNDS {
        if stop.should_stop() || Instant::now() >= end {
            break;
        }
        let rows = master(&cols, &caps, &sizes, nodes + 1.0);
        let left = end.saturating_duration_since(Instant::now());
        let (w, _) = ipm_duals(&rows, left)?;
        let nc = sizes.len();
        let y: Vec<f64> = (0..nc).map(|c| w[c].max(0.0)).collect();
        let mut certified = true;
        let mut charge = 0.0;
        let mut added = 0;
        for k in 0..items.len() {
            let mu = w[nc + k].max(0.0);
            let mut top = 0.0f64;
            for order in &orders[k] {
                let (value, pattern, complete) =
                    if exact { price(order, &y, cpus[k], end) } else { greedy(order, &y, cpus[k], &mut seed) };
                certified &= complete;
                top = top.max(value);
                if value - mu - 1.0 > 1e-7 {
                    let p = (k, pattern);
                    if seen.insert(p.clone()) {
                        cols.push(p);
                        added += 1;
                    }
                }
            }
            charge += caps[k] * (top - mu - 1.0).max(0.0);
        }
        if certified {
            let b = dual_bound(&rows, &w) - charge;
            if b.is_finite() && best.is_none_or(|x| b > x) {
                best = Some(b);
            }
            if best.is_some_and(|b| b.ceil() as i64 > target) || added == 0 {
                break;
            }
        }
        // Greedy pricing until it finds no column, then an exhaustive one (which certifies
        // the round's bound, and may find columns the quick ones missed).
        if added == 0 {
            if exact {
                break;
            }
            exact = true;
        } else {
            exact = false;
        }
    }
    best.map(|b| b.ceil().max(0.0) as i64)
}

/// The covering LP over `cols`: one variable per column (cost 1, at most its class's nodes),
/// one artificial per module class (cost `big`: more than any mapping, so the LP uses it only
/// where no column covers the class); rows: per module class Σ a λ + s >= size, then per node
/// class −Σ λ >= −|k|.
fn master(cols: &[Pattern], caps: &[f64], sizes: &[f64], big: f64) -> Rows {
    let mut r =
        Rows { upper: Vec::new(), cost: Vec::new(), rows: Vec::new(), used: Vec::new(), terms: 0, blocks: Vec::new() };
    let mut cover: Vec<Vec<(usize, f64)>> = vec![Vec::new(); sizes.len()];
    let mut cap: Vec<Vec<(usize, f64)>> = vec![Vec::new(); caps.len()];
    for (k, p) in cols {
        let v = r.var(1.0, caps[*k]);
        for &(c, q) in p {
            cover[c].push((v, q as f64));
        }
        cap[*k].push((v, -1.0));
    }
    for (c, mut t) in cover.into_iter().enumerate() {
        t.push((r.var(big, sizes[c]), 1.0));
        r.ge(t, sizes[c]);
    }
    for (k, t) in cap.into_iter().enumerate() {
        r.ge(t, -caps[k]);
    }
    r
}

/// The least-loaded CPU takes `it` (loads ascending): false when it cannot run there in a
/// sound mapping (a self-paced module on a busy CPU, an input-paced one that falls behind),
/// with the verifier's tolerance and more.
fn place(loads: &mut [f64], it: &Item) -> bool {
    let l = loads[0];
    if (it.pred && l > 1e-6) || (1.0 - l) * (1.0 + 1e-6) < it.u {
        return false;
    }
    loads[0] = l + (1.0 - l) * it.ld;
    let mut i = 0;
    while i + 1 < loads.len() && loads[i] > loads[i + 1] {
        loads.swap(i, i + 1);
        i += 1;
    }
    true
}

/// The most copies of `it` that fit after `loads` (at most its class size).
fn most(loads: &[f64], it: &Item, scratch: &mut Vec<f64>) -> u32 {
    scratch.clear();
    scratch.extend_from_slice(loads);
    let mut q = 0;
    while q < it.size && place(scratch, it) {
        q += 1;
    }
    q
}

/// The most valuable set of `order`'s items (value Σ y per module) a node of `cpus` CPUs
/// holds when they come in that order, its pattern, and whether the search was exhaustive.
fn price(order: &[Item], y: &[f64], cpus: usize, end: Instant) -> (f64, Vec<(usize, u32)>, bool) {
    let its: Vec<Item> = order.iter().filter(|i| y[i.class] > 1e-12).copied().collect();
    let mut s = Search {
        its: &its,
        y,
        nodes: 0,
        limit: SEARCH_NODES,
        end,
        best: 0.0,
        best_q: vec![0; its.len()],
        q: vec![0; its.len()],
        complete: true,
        scratch: Vec::new(),
    };
    s.run(0, &vec![0.0; cpus], 0.0);
    let mut p: Vec<(usize, u32)> = its.iter().zip(&s.best_q).filter(|e| *e.1 > 0).map(|(i, &q)| (i.class, q)).collect();
    p.sort_unstable();
    (s.best, p, s.complete)
}

/// Whether `order`'s items with these counts fit a node of `cpus` CPUs (in that order).
fn fits(order: &[Item], counts: &[u32], cpus: usize, loads: &mut Vec<f64>) -> bool {
    loads.clear();
    loads.resize(cpus, 0.0);
    order.iter().zip(counts).all(|(it, &q)| (0..q).all(|_| place(loads, it)))
}

/// A good set by greedy choice (not necessarily the best): classes by decreasing value per
/// load, randomly perturbed after the first try, each with the most copies that still fit.
/// Never certifies (the third value is false).
fn greedy(order: &[Item], y: &[f64], cpus: usize, seed: &mut u64) -> (f64, Vec<(usize, u32)>, bool) {
    let mut loads = Vec::new();
    let (mut best, mut best_counts) = (0.0, vec![0u32; order.len()]);
    for t in 0..GREEDY_TRIES {
        let mut by: Vec<(f64, usize)> = (0..order.len())
            .filter(|&i| y[order[i].class] > 1e-12)
            .map(|i| {
                // xorshift: a deterministic perturbation in [0.5, 1.5).
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                let noise = if t == 0 { 1.0 } else { 0.5 + (*seed >> 11) as f64 / (1u64 << 53) as f64 };
                (y[order[i].class] / (order[i].ld * order[i].u + 0.05) * noise, i)
            })
            .collect();
        by.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut counts = vec![0u32; order.len()];
        for &(_, i) in &by {
            // Feasibility is monotone in the count (more copies only load later modules more).
            let (mut lo, mut hi) = (0u32, order[i].size);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                counts[i] = mid;
                if fits(order, &counts, cpus, &mut loads) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            counts[i] = lo;
        }
        let v: f64 = counts.iter().zip(order).map(|(&q, it)| q as f64 * y[it.class]).sum();
        if v > best {
            best = v;
            best_counts = counts;
        }
    }
    let mut p: Vec<(usize, u32)> =
        order.iter().zip(&best_counts).filter(|e| *e.1 > 0).map(|(i, &q)| (i.class, q)).collect();
    p.sort_unstable();
    (best, p, false)
}

struct Search<'a> {
    its: &'a [Item],
    y: &'a [f64],
    nodes: u64,
    limit: u64,
    end: Instant,
    best: f64,
    best_q: Vec<u32>,
    q: Vec<u32>,
    complete: bool,
    scratch: Vec<f64>,
}

impl Search<'_> {
    fn run(&mut self, j: usize, loads: &[f64], val: f64) {
        self.nodes += 1;
        if self.nodes > self.limit || (self.nodes.is_multiple_of(256) && Instant::now() >= self.end) {
            self.complete = false;
            return;
        }
        if val > self.best {
            self.best = val;
            self.best_q.clone_from(&self.q);
        }
        if j == self.its.len() {
            return;
        }
        // Each remaining class at most what fits on these loads alone.
        let mut ub = 0.0;
        for r in j..self.its.len() {
            let it = self.its[r];
            ub += self.y[it.class] * most(loads, &it, &mut self.scratch) as f64;
        }
        if val + ub <= self.best + 1e-9 {
            return;
        }
        let it = self.its[j];
        let mut states = vec![loads.to_vec()];
        while states.len() <= it.size as usize {
            let mut l = states.last().expect("one").clone();
            if !place(&mut l, &it) {
                break;
            }
            states.push(l);
        }
        for q in (0..states.len()).rev() {
            self.q[j] = q as u32;
            self.run(j + 1, &states[q], val + q as f64 * self.y[it.class]);
            if !self.complete {
                break;
            }
        }
        self.q[j] = 0;
    }
}
