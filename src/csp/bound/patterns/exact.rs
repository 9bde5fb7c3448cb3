//! The exact side of the pattern bound where a case's sets can all be listed: branch and
//! price over every exact set (`set_fits_exact`) of every node class.
//!
//! Why: `pack`'s tree search distributes module classes over the nodes one class at a time
//! and sees a dead end only once the classes that cannot fit come; where the pattern LP's
//! optimum is the shape's node count with a fractional solution, it neither packs nor
//! refutes (unseen realistic 100/32 s312's one open 17-node case: 2e9 search nodes in vain;
//! CP-SAT on its 66,000 exact sets, as one table per node or as the integer covering
//! program, undecided after 120 s). There the LP used half of a 4-CPU node for two gathers
//! and four simulations (six modules on four CPUs) and the other half for the fast-only
//! modules, which need 62 of the 64 CPUs that may hold them: a whole node either way breaks
//! one count. Branching on "how many nodes of class k hold at least q modules of class c"
//! (Vanderbeck's branching for cutting stock; "at least 1" here) refutes it in three LPs:
//! both children's LPs exceed the node count.
//!
//! Method. The columns are every exact set, listed per node class by a depth-first search
//! over each of its orders (`place`, the links), kept when `set_fits_exact` passes them (the
//! verifier's order), at most `SETS_MAX` in all. The LP: per module class Σ a λ >= size, per
//! node class Σ λ <= |k|, the hub rows, the branching rows; minimise Σ λ. Column generation
//! prices by scanning the list, so any branching row is priced exactly. The bound of a node
//! is certified by weak duality (for multipliers w >= 0 and every listed column's reduced
//! cost rc: w·b + Σ_k |k| min(0, min rc_k), since Σ_{p in k} λ_p <= |k|), whatever the
//! simplex's accuracy; a node whose bound exceeds `keep` has no packing. Branching: the
//! fractional features (count of class c on node class k; nodes of class k holding at least
//! q of c; then single sets) are tried in turn (strong branching, at most `STRONG`): a child
//! whose LP is over `keep` fixes the other side (probing), both over refutes the node, else
//! the feature whose weaker child has the larger bound is branched on, depth first. An
//! integral solution is a packing (the cover rows hold with equality; every node checked again).

use super::super::simplex::Simplex;
use super::{link_fits, place, rows_hold, set_fits_exact, set_fits_in, slots_of, Setup};
use pumpkin_solver::core::termination::TerminationCondition;
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

/// Exact sets listed at most (over all node classes); beyond, the case is left to `pack`.
pub(super) const SETS_MAX: usize = 1_500_000;
/// Features tried per branch-and-bound node.
const STRONG: usize = 8;
/// Columns added per pricing round at most.
const ADD: usize = 64;
/// Pricing rounds per LP at most.
const ROUNDS: usize = 400;

/// What the branch and price found.
pub(super) enum Exact {
    Refuted,
    /// Per slot (`slots_of`), its count of each module class.
    Found(Vec<Vec<u32>>),
    Unknown,
}

/// The exact sets of one node class, one after another: set i is
/// `ent[start[i]..start[i + 1]]`, (module class, count) pairs ascending by class.
struct Sets {
    start: Vec<usize>,
    ent: Vec<(u16, u16)>,
}

impl Sets {
    fn len(&self) -> usize {
        self.start.len() - 1
    }

    fn get(&self, i: usize) -> &[(u16, u16)] {
        &self.ent[self.start[i]..self.start[i + 1]]
    }
}

/// The count of class `c` in `set`.
fn count_of(set: &[(u16, u16)], c: usize) -> u32 {
    set.iter().find(|e| e.0 as usize == c).map_or(0, |e| u32::from(e.1))
}

/// Every exact set of each node class (None: more than `SETS_MAX` in all, or stopped). A
/// set is kept in the first of its node class's orders that passes it (the depth-first
/// search of a later order finds it again), so no set is listed twice and nothing but the
/// list is kept in memory.
fn exact_sets(
    st: &Setup,
    reach: Option<&Reach>,
    end: Instant,
    stop: &mut impl TerminationCondition,
) -> Option<Vec<Sets>> {
    let nc = st.sizes.len();
    if nc > usize::from(u16::MAX) || st.sizes.iter().any(|&z| z > f64::from(u16::MAX)) {
        return None;
    }
    let mut total = 0usize;
    let mut out = Vec::with_capacity(st.node_classes.len());
    let mut loads = Vec::new();
    let mut cnt = vec![0u32; nc];
    let mut leaves = 0u64;
    for k in 0..st.node_classes.len() {
        let mut sets = Sets { start: vec![0], ent: Vec::new() };
        for (o, order) in st.orders[k].iter().enumerate() {
            let mut counts = vec![0u32; order.len()];
            let mut ok = true;
            let mut visit = |counts: &[u32]| -> bool {
                leaves += 1;
                if leaves.is_multiple_of(4096) && (Instant::now() >= end || stop.should_stop()) {
                    return false;
                }
                if counts.iter().all(|&q| q == 0) {
                    return true;
                }
                for (it, &q) in order.iter().zip(counts) {
                    cnt[it.class] = q;
                }
                let keep = (0..o).all(|e| !set_fits_in(st, k, &cnt, e..e + 1, &mut loads))
                    && set_fits_exact(st, k, &cnt, &mut loads);
                if keep {
                    let mut e: Vec<(u16, u16)> = order
                        .iter()
                        .zip(counts)
                        .filter(|x| *x.1 > 0)
                        .map(|(it, &q)| (it.class as u16, q as u16))
                        .collect();
                    e.sort_unstable();
                    sets.ent.extend(e);
                    sets.start.push(sets.ent.len());
                    total += 1;
                }
                for it in order {
                    cnt[it.class] = 0;
                }
                total <= SETS_MAX
            };
            let need = reach.map(|r| (r.values[k].as_slice(), r.need[k]));
            let at = (0.0, 0.0, 0.0);
            dfs(order, st.link[k], need, 0, &vec![0.0; st.cpus[k]], at, &mut counts, &mut visit, &mut ok);
            if !ok {
                return None;
            }
        }
        out.push(sets);
    }
    Some(out)
}

/// The sets worth listing, from the pattern LP's multipliers (`Duals`): per node class
/// the module classes' values yk and the value a set must reach, 1 + μ_k − allowance. For
/// any y, μ, z >= 0 and a packing λ on at most `keep` nodes (each module placed once),
/// Σ_p rc_p λ_p <= keep − D, with D the dual objective Σ y size − Σ μ |k| − Σ z cap
/// (`pack_counts`' slack). Every rc_p is at least −under_k, so a set a packing uses has
/// rc_p <= keep − D + Σ_k |k| under_k, the allowance. Sets of less value can be left out
/// of the whole branch and price (reduced-cost fixing): unseen realistic 100/32 s59's open
/// case 660,000 exact sets -> 72,000, s132's -> 122,000 (s295's and s233's slacks are too
/// wide to bring theirs under `SETS_MAX`).
struct Reach {
    values: Vec<Vec<f64>>,
    need: Vec<f64>,
}

impl Reach {
    fn new(st: &Setup, d: &super::Duals, keep: i64) -> Option<Reach> {
        let (nc, nk) = (st.sizes.len(), st.node_classes.len());
        if d.y.len() != nc || d.mu.len() != nk || d.yk.len() != nk || d.under.len() != nk {
            return None;
        }
        let dual: f64 = d.y.iter().zip(&st.sizes).map(|(y, s)| y * s).sum::<f64>()
            - d.mu.iter().zip(&st.caps).map(|(m, c)| m * c).sum::<f64>()
            - d.hub;
        let allowance = keep as f64 - dual + d.under.iter().zip(&st.caps).map(|(u, c)| u * c).sum::<f64>();
        if !allowance.is_finite() {
            return None;
        }
        // Generously: a set kept in excess costs time, one left out would be wrong.
        let need = d.mu.iter().map(|m| 1.0 + m - allowance - 1e-6 * (1.0 + allowance.abs() + m.abs())).collect();
        Some(Reach { values: d.yk.clone(), need })
    }
}

/// The count vectors of `order`'s items from position `j` on that fit after `loads` (in that
/// order, within `link` each way), each passed to `visit` (false: stop, `ok` false); with
/// `need` (values, the value to reach), only those whose value can reach it. `at`: the
/// value, the traffic sent and received so far.
#[allow(clippy::too_many_arguments)]
fn dfs(
    order: &[super::Item],
    link: f64,
    need: Option<(&[f64], f64)>,
    j: usize,
    loads: &[f64],
    (val, tx, rx): (f64, f64, f64),
    counts: &mut [u32],
    visit: &mut impl FnMut(&[u32]) -> bool,
    ok: &mut bool,
) {
    if !*ok {
        return;
    }
    if let Some((values, need)) = need {
        // What the items left could add: each class's copies that fit on these loads (no
        // more fit on higher ones), at their value when positive.
        let rest: f64 = order[j..].iter().map(|it| values[it.class].max(0.0) * f64::from(super::most(loads, it))).sum();
        if val + rest < need {
            return;
        }
    }
    if j == order.len() {
        *ok = visit(counts);
        return;
    }
    let it = &order[j];
    let value = need.map_or(0.0, |(values, _)| values[it.class]);
    let mut l = loads.to_vec();
    counts[j] = 0;
    dfs(order, link, need, j + 1, &l, (val, tx, rx), counts, visit, ok);
    let mut q = 0;
    while *ok && q < it.size {
        if !place(&mut l, it) {
            break;
        }
        q += 1;
        let (t, r) = (tx + q as f64 * it.tx, rx + q as f64 * it.rx);
        if !link_fits(t, link) || !link_fits(r, link) {
            break;
        }
        counts[j] = q;
        dfs(order, link, need, j + 1, &l, (val + value * q as f64, t, r), counts, visit, ok);
    }
    counts[j] = 0;
}

/// A branching feature: its coefficient on a set of a node class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Feature {
    /// Modules of class c on nodes of class k.
    Count(usize, usize),
    /// Nodes of class k holding at least q modules of class c.
    AtLeast(usize, usize, u32),
    /// Nodes of class k holding set number i.
    Set(usize, usize),
}

impl Feature {
    fn coef(&self, k: usize, i: usize, set: &[(u16, u16)]) -> f64 {
        match *self {
            Feature::Count(fk, c) if fk == k => count_of(set, c) as f64,
            Feature::AtLeast(fk, c, q) if fk == k => f64::from(u8::from(count_of(set, c) >= q)),
            Feature::Set(fk, fi) if fk == k && fi == i => 1.0,
            _ => 0.0,
        }
    }
}

/// A branching row: lo <= Σ coef λ (`lo` true) or Σ coef λ <= v.
#[derive(Clone, Copy, Debug)]
struct Branch {
    feature: Feature,
    lo: bool,
    v: f64,
}

/// A feature strong branching tried: the weaker child's bound, the feature, its value, and
/// the two children's LPs (down, up).
type Candidate = (f64, Feature, f64, Option<Lp>, Option<Lp>);

/// A node's LP: its certified bound, the sets with a positive value, and its columns.
struct Lp {
    bound: f64,
    x: Vec<((usize, usize), f64)>,
    cols: Vec<(usize, usize)>,
    /// The rows' multipliers (clamped at zero) the bound is certified with.
    #[cfg_attr(not(test), allow(dead_code))]
    w: Vec<f64>,
}

struct Bnb<'a, T: TerminationCondition> {
    st: &'a Setup,
    sets: Vec<Sets>,
    keep: f64,
    end: Instant,
    stop: &'a mut T,
    stopped: bool,
    lps: u64,
}

impl<T: TerminationCondition> Bnb<'_, T> {
    fn halted(&mut self) -> bool {
        self.stopped |= Instant::now() >= self.end || self.stop.should_stop();
        self.stopped
    }

    /// The LP under `rows`, its columns seeded with `seed`; None when stopped or the simplex
    /// failed.
    fn lp(&mut self, rows: &[Branch], seed: &[(usize, usize)]) -> Option<Lp> {
        self.lps += 1;
        let st = self.st;
        let (nc, nk, nh) = (st.sizes.len(), st.node_classes.len(), st.hubs.len());
        // The cover rows hold with equality (a packing places each module once): Σ a λ >=
        // size first, Σ a λ <= size last (`le`), so an integral solution is a packing.
        let le = nc + nk + nh + rows.len();
        let m = le + nc;
        let mut rhs: Vec<f64> = st.sizes.clone();
        rhs.extend(st.caps.iter().map(|c| -c));
        rhs.extend(st.hubs.iter().map(|h| -h.cap));
        rhs.extend(rows.iter().map(|b| if b.lo { b.v } else { -b.v }));
        rhs.extend(st.sizes.iter().map(|z| -z));
        // An artificial column's cost: a fraction of a module left uncovered must cost more
        // than every node (the bound is certified whatever it is; a cheap artificial would
        // only leave integral solutions that are not packings).
        let big = 1e4 * (st.caps.iter().sum::<f64>() + 1.0);
        let mut lp = Simplex::new(rhs.clone());
        let mut arts = 0;
        for (r, &b) in rhs.iter().enumerate() {
            if b > 0.0 {
                lp.add(big, vec![(r, 1.0)]);
                arts += 1;
            }
        }
        let sets = &self.sets;
        let column = |k: usize, i: usize| -> Vec<(usize, f64)> {
            let set = sets[k].get(i);
            let mut e: Vec<(usize, f64)> = set.iter().map(|&(c, q)| (usize::from(c), f64::from(q))).collect();
            e.extend(set.iter().map(|&(c, q)| (le + usize::from(c), -f64::from(q))));
            e.push((nc + k, -1.0));
            for (j, h) in st.hubs.iter().enumerate() {
                if h.on[k] {
                    let q = count_of(set, h.class);
                    if q > 0 {
                        e.push((nc + nk + j, -f64::from(q)));
                    }
                }
            }
            for (j, b) in rows.iter().enumerate() {
                let a = b.feature.coef(k, i, set);
                if a != 0.0 {
                    e.push((nc + nk + nh + j, if b.lo { a } else { -a }));
                }
            }
            e
        };
        let mut cols: Vec<(usize, usize)> = Vec::new();
        let mut inlp: HashSet<(usize, usize)> = HashSet::new();
        for &ki in seed {
            if inlp.insert(ki) {
                lp.add(1.0, column(ki.0, ki.1));
                cols.push(ki);
            }
        }
        for _ in 0..ROUNDS {
            self.stopped |= Instant::now() >= self.end || self.stop.should_stop();
            if self.stopped {
                return None;
            }
            if lp.solve(self.end) != Some(true) {
                return None;
            }
            let w: Vec<f64> = lp.duals().iter().take(m).map(|v| v.max(0.0)).collect();
            // Reduced costs of every listed set.
            let mut best: Vec<(f64, (usize, usize))> = Vec::new();
            let mut min_rc = vec![0.0f64; nk];
            for k in 0..nk {
                let mut value: Vec<f64> = (0..nc).map(|c| w[c] - w[le + c]).collect();
                for (j, h) in st.hubs.iter().enumerate() {
                    if h.on[k] {
                        value[h.class] -= w[nc + nk + j];
                    }
                }
                let mut special: Vec<(usize, Branch)> = Vec::new();
                for (j, b) in rows.iter().enumerate() {
                    match b.feature {
                        Feature::Count(fk, c) if fk == k => {
                            value[c] += if b.lo { w[nc + nk + nh + j] } else { -w[nc + nk + nh + j] };
                        }
                        Feature::AtLeast(fk, ..) | Feature::Set(fk, _) if fk == k => special.push((j, *b)),
                        _ => {}
                    }
                }
                for i in 0..sets[k].len() {
                    let set = sets[k].get(i);
                    let mut rc =
                        1.0 + w[nc + k] - set.iter().map(|&(c, q)| value[usize::from(c)] * f64::from(q)).sum::<f64>();
                    for &(j, b) in &special {
                        let a = b.feature.coef(k, i, set);
                        if a != 0.0 {
                            rc += if b.lo { -w[nc + nk + nh + j] * a } else { w[nc + nk + nh + j] * a };
                        }
                    }
                    min_rc[k] = min_rc[k].min(rc);
                    if rc < -1e-9 && !inlp.contains(&(k, i)) {
                        best.push((rc, (k, i)));
                    }
                }
            }
            let bound = w.iter().zip(&rhs).map(|(a, b)| a * b).sum::<f64>()
                + (0..nk).map(|k| st.caps[k] * min_rc[k]).sum::<f64>();
            if best.is_empty() || bound > self.keep + 1e-6 {
                let x = lp.primal();
                let mut pos = Vec::new();
                for (j, &ki) in cols.iter().enumerate() {
                    let v = x[arts + j];
                    if v > 1e-9 {
                        pos.push((ki, v));
                    }
                }
                return Some(Lp { bound, x: pos, cols, w });
            }
            best.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for &(_, ki) in best.iter().take(ADD) {
                inlp.insert(ki);
                lp.add(1.0, column(ki.0, ki.1));
                cols.push(ki);
            }
        }
        None
    }

    fn over(&self, lp: &Option<Lp>) -> bool {
        lp.as_ref().is_some_and(|l| l.bound > self.keep + 1e-6)
    }

    /// The fractional features of an LP solution, the most fractional first.
    fn fractional(&self, lp: &Lp) -> Vec<(Feature, f64)> {
        let mut v: BTreeMap<Feature, f64> = BTreeMap::new();
        for &((k, i), x) in &lp.x {
            for &(c, q) in self.sets[k].get(i) {
                let (c, q) = (usize::from(c), u32::from(q));
                *v.entry(Feature::Count(k, c)).or_default() += x * q as f64;
                for t in 1..=q {
                    *v.entry(Feature::AtLeast(k, c, t)).or_default() += x;
                }
            }
        }
        let mut out: Vec<(Feature, f64)> = v.into_iter().filter(|e| (e.1 - e.1.round()).abs() > 1e-6).collect();
        if out.is_empty() {
            out =
                lp.x.iter()
                    .filter(|e| (e.1 - e.1.round()).abs() > 1e-6)
                    .map(|&((k, i), x)| (Feature::Set(k, i), x))
                    .collect();
        }
        let frac = |x: f64| (x - x.floor()).min(x.ceil() - x);
        out.sort_by(|a, b| frac(b.1).total_cmp(&frac(a.1)).then(a.0.cmp(&b.0)));
        out
    }

    /// The packing of an integral solution (per slot its counts), when its nodes and rows pass
    /// (they do: each set is exact and the rows are the LP's; checked all the same).
    fn packing(&self, lp: &Lp) -> Option<Vec<Vec<u32>>> {
        let st = self.st;
        let nc = st.sizes.len();
        let slots = slots_of(st);
        let mut cnt = vec![vec![0u32; nc]; slots.len()];
        let mut next: Vec<usize> = Vec::new();
        let mut at = 0;
        for k in 0..st.node_classes.len() {
            next.push(at);
            at += st.node_classes[k].len();
        }
        for &((k, i), x) in &lp.x {
            for _ in 0..x.round() as usize {
                if next[k] >= slots.len() || slots[next[k]].0 != k {
                    return None;
                }
                for &(c, q) in self.sets[k].get(i) {
                    cnt[next[k]][usize::from(c)] = u32::from(q);
                }
                next[k] += 1;
            }
        }
        let mut loads = Vec::new();
        let ks: Vec<usize> = slots.iter().map(|e| e.0).collect();
        let whole = (0..nc).all(|c| cnt.iter().map(|s| s[c]).sum::<u32>() == st.sizes[c] as u32);
        let fit = cnt.iter().zip(&ks).all(|(s, &k)| set_fits_exact(st, k, s, &mut loads));
        (whole && fit && rows_hold(st, &ks, &cnt)).then_some(cnt)
    }

    fn node(&mut self, rows: &mut Vec<Branch>, mut lp: Lp) -> Exact {
        if lp.bound > self.keep + 1e-6 {
            return Exact::Refuted;
        }
        let base = rows.len();
        let out = 'out: loop {
            if self.halted() {
                break Exact::Unknown;
            }
            let cands = self.fractional(&lp);
            if cands.is_empty() {
                break match self.packing(&lp) {
                    Some(cnt) => Exact::Found(cnt),
                    None => Exact::Unknown,
                };
            }
            let mut best: Option<Candidate> = None;
            for &(f, x) in cands.iter().take(STRONG) {
                let down = Branch { feature: f, lo: false, v: x.floor() };
                let up = Branch { feature: f, lo: true, v: x.ceil() };
                rows.push(down);
                let a = self.lp(rows, &lp.cols);
                rows.pop();
                if self.stopped {
                    break 'out Exact::Unknown;
                }
                rows.push(up);
                let b = self.lp(rows, &lp.cols);
                rows.pop();
                if self.stopped {
                    break 'out Exact::Unknown;
                }
                match (self.over(&a), self.over(&b)) {
                    (true, true) => break 'out Exact::Refuted,
                    (true, false) | (false, true) => {
                        // Probing: one side has no packing, so the other holds here.
                        let (row, keep) = if self.over(&a) { (up, b) } else { (down, a) };
                        let Some(keep) = keep else { break 'out Exact::Unknown };
                        rows.push(row);
                        lp = keep;
                        continue 'out;
                    }
                    (false, false) => {
                        let score = a
                            .as_ref()
                            .map_or(f64::NEG_INFINITY, |l| l.bound)
                            .min(b.as_ref().map_or(f64::NEG_INFINITY, |l| l.bound));
                        if best.as_ref().is_none_or(|e| score > e.0 + 1e-9) {
                            best = Some((score, f, x, a, b));
                        }
                    }
                }
            }
            let Some((_, f, x, a, b)) = best else { break Exact::Unknown };
            let mut unknown = false;
            for (side, child) in
                [(Branch { feature: f, lo: false, v: x.floor() }, a), (Branch { feature: f, lo: true, v: x.ceil() }, b)]
            {
                let Some(child) = child else {
                    unknown = true;
                    continue;
                };
                rows.push(side);
                let r = self.node(rows, child);
                rows.pop();
                match r {
                    Exact::Found(cnt) => break 'out Exact::Found(cnt),
                    Exact::Refuted => {}
                    Exact::Unknown => {
                        unknown = true;
                        if self.stopped {
                            break;
                        }
                    }
                }
            }
            break if unknown { Exact::Unknown } else { Exact::Refuted };
        };
        rows.truncate(base);
        out
    }
}

/// Branch and price over every exact set of `st` (see the module's comment): Refuted when
/// no packing of at most `keep` nodes exists, Found with one, Unknown when the sets are too
/// many or the time ends first.
pub(super) fn solve(
    st: &Setup,
    keep: i64,
    duals: Option<&super::Duals>,
    end: Instant,
    stop: &mut impl TerminationCondition,
) -> Exact {
    let reach = duals.and_then(|d| Reach::new(st, d, keep));
    let Some(sets) = exact_sets(st, reach.as_ref(), end, stop) else {
        return Exact::Unknown;
    };
    let mut b = Bnb { st, sets, keep: keep as f64, end, stop, stopped: false, lps: 0 };
    let Some(root) = b.lp(&[], &[]) else {
        return Exact::Unknown;
    };
    b.node(&mut Vec::new(), root)
}

#[cfg(test)]
mod tests {
    use super::super::tests::uniform;
    use super::super::{Hub, Item};
    use super::*;
    use std::time::Duration;

    struct Never;
    impl TerminationCondition for Never {
        fn should_stop(&mut self) -> bool {
            false
        }
    }

    /// A random small setup: 1-3 node classes of 1-2 nodes and 1-4 CPUs, 2-3 module classes
    /// of 1-3 modules in 1-2 synchronous components, each on a random nonempty set of node
    /// classes; eq 7's order by key, one eq-8 order per component; sometimes links and a hub
    /// row.
    #[allow(clippy::needless_range_loop)]
    fn random_setup(rnd: &mut impl FnMut() -> f64) -> Setup {
        let nk = 1 + (rnd() * 3.0) as usize;
        let nc = 2 + (rnd() * 2.0) as usize;
        let sizes: Vec<u32> = (0..nc).map(|_| 1 + (rnd() * 3.0) as u32).collect();
        let comps: Vec<usize> = (0..nc).map(|_| (rnd() * 2.0) as usize).collect();
        let linked = rnd() < 0.3;
        let mut node_classes = Vec::new();
        let mut items = Vec::new();
        let mut orders = Vec::new();
        let mut cpus = Vec::new();
        let mut link = Vec::new();
        let mut next = 0u32;
        let mut on = vec![vec![false; nk]; nc];
        for row in on.iter_mut() {
            row[(rnd() * nk as f64) as usize] = true;
            for x in row.iter_mut() {
                *x |= rnd() < 0.5;
            }
        }
        for k in 0..nk {
            let n = 1 + (rnd() * 2.0) as usize;
            node_classes.push((next..next + n as u32).map(crate::model::NodeId).collect::<Vec<_>>());
            next += n as u32;
            cpus.push(1 + (rnd() * 4.0) as usize);
            link.push(if linked { 1.0 + rnd() * 4.0 } else { f64::INFINITY });
            let its: Vec<Item> = (0..nc)
                .filter(|&c| on[c][k])
                .map(|c| Item {
                    class: c,
                    size: sizes[c],
                    ld: 0.1 + rnd() * 0.9,
                    u: if rnd() < 0.2 { 1.0 } else { rnd() * 0.9 },
                    pred: rnd() < 0.2,
                    comp: comps[c],
                    key7: rnd(),
                    w8: rnd(),
                    decl: c,
                    tx: if linked { rnd() * 2.0 } else { 0.0 },
                    rx: if linked { rnd() * 2.0 } else { 0.0 },
                })
                .collect();
            let mut eq7 = its.clone();
            eq7.sort_by(|a, b| b.key7.total_cmp(&a.key7));
            let mut os = vec![eq7];
            for comp in 0..2 {
                let mut o: Vec<Item> = its.iter().filter(|it| it.comp == comp && !it.pred).copied().collect();
                if !o.is_empty() {
                    o.sort_by(|a, b| a.w8.total_cmp(&b.w8));
                    os.push(o);
                }
            }
            orders.push(os);
            items.push(its);
        }
        let hubs = if rnd() < 0.3 {
            let c = (rnd() * nc as f64) as usize;
            vec![Hub { class: c, on: (0..nk).map(|_| rnd() < 0.6).collect(), cap: (rnd() * sizes[c] as f64).floor() }]
        } else {
            Vec::new()
        };
        Setup {
            caps: node_classes.iter().map(|ns| ns.len() as f64).collect(),
            node_classes,
            members: Vec::new(),
            items,
            orders,
            eq7: vec![1; nk],
            cpus,
            sizes: sizes.iter().map(|&z| z as f64).collect(),
            link,
            hubs,
            together: Vec::new(),
            open: vec![false; nk],
            ranged: Vec::new(),
        }
    }

    /// Whether per-slot counts are a packing: every class placed whole, only on node classes
    /// that hold it, each slot's set whole as the verifier orders it, the hub rows kept.
    fn is_packing(st: &Setup, cnt: &[Vec<u32>]) -> bool {
        let slots = slots_of(st);
        let ks: Vec<usize> = slots.iter().map(|e| e.0).collect();
        let mut loads = Vec::new();
        (0..st.sizes.len()).all(|c| cnt.iter().map(|s| s[c]).sum::<u32>() == st.sizes[c] as u32)
            && cnt.iter().zip(&ks).all(|(s, &k)| {
                s.iter().enumerate().all(|(c, &q)| q == 0 || st.items[k].iter().any(|it| it.class == c))
                    && set_fits_exact(st, k, s, &mut loads)
            })
            && rows_hold(st, &ks, cnt)
    }

    /// Brute force: every distribution of every class's modules over the slots.
    fn brute(st: &Setup, keep: usize) -> bool {
        let ns = slots_of(st).len();
        let nc = st.sizes.len();
        let mut cnt = vec![vec![0u32; nc]; ns];
        fn rec(st: &Setup, keep: usize, cnt: &mut Vec<Vec<u32>>, c: usize, s: usize, left: u32) -> bool {
            let (ns, nc) = (cnt.len(), st.sizes.len());
            if c == nc {
                return cnt.iter().filter(|s| s.iter().any(|&q| q > 0)).count() <= keep && is_packing(st, cnt);
            }
            if s + 1 == ns {
                cnt[s][c] = left;
                let r = rec(st, keep, cnt, c + 1, 0, st.sizes.get(c + 1).map_or(0, |&z| z as u32));
                cnt[s][c] = 0;
                return r;
            }
            for q in 0..=left {
                cnt[s][c] = q;
                if rec(st, keep, cnt, c, s + 1, left - q) {
                    cnt[s][c] = 0;
                    return true;
                }
            }
            cnt[s][c] = 0;
            false
        }
        rec(st, keep, &mut cnt, 0, 0, st.sizes[0] as u32)
    }

    /// How many answers of each kind a test saw.
    #[derive(Default)]
    struct Seen {
        refuted: u32,
        found: u32,
        unknown: u32,
    }

    impl Seen {
        /// Enough of each decided kind, and an answer nearly always.
        fn enough(&self, refuted: u32, found: u32) {
            let Seen { refuted: r, found: f, unknown: u } = *self;
            assert!(r >= refuted && f >= found, "refuted {r}, found {f}, unknown {u}");
            assert!(u * 20 <= r + f, "refuted {r}, found {f}, unknown {u}");
        }
    }

    /// Holds an answer to brute force on at most `keep` nodes: a refutation only where it
    /// finds no packing, a packing only a valid one.
    fn tally(st: &Setup, keep: usize, answer: Exact, seen: &mut Seen) {
        match answer {
            Exact::Refuted => {
                assert!(!brute(st, keep), "refuted a case brute force packs on {keep} nodes");
                seen.refuted += 1;
            }
            Exact::Found(cnt) => {
                assert!(is_packing(st, &cnt), "not a packing: {cnt:?}");
                seen.found += 1;
            }
            Exact::Unknown => seen.unknown += 1,
        }
    }

    /// Branch and price against brute force on random small setups: a refutation only where
    /// brute force finds no packing, a packing only a valid one, and an answer nearly always
    /// (it is complete: single sets are branched on last).
    #[test]
    fn branch_and_price_agrees_with_brute_force() {
        let mut rnd = uniform(0x5eed_1234_abcd_0001);
        let mut seen = Seen::default();
        for _ in 0..600 {
            let st = random_setup(&mut rnd);
            let far = Instant::now() + Duration::from_secs(30);
            let keep = slots_of(&st).len();
            tally(&st, keep, solve(&st, keep as i64, None, far, &mut Never), &mut seen);
        }
        seen.enough(60, 60);
    }

    /// The root LP's multipliers as `Duals` (the hub rows' folded into yk, `under` from every
    /// exact set's value), for the reduced-cost fixing (`Reach`).
    fn root_duals(st: &Setup) -> Option<(super::super::Duals, f64)> {
        let far = Instant::now() + Duration::from_secs(30);
        let sets = exact_sets(st, None, far, &mut Never)?;
        let (nc, nk) = (st.sizes.len(), st.node_classes.len());
        let mut b = Bnb { st, sets, keep: f64::INFINITY, end: far, stop: &mut Never, stopped: false, lps: 0 };
        let lp = b.lp(&[], &[])?;
        let w = &lp.w;
        let le = w.len() - nc;
        let y: Vec<f64> = (0..nc).map(|c| w[c] - w[le + c]).collect();
        let mu: Vec<f64> = w[nc..nc + nk].to_vec();
        let z = &w[nc + nk..nc + nk + st.hubs.len()];
        let yk: Vec<Vec<f64>> = (0..nk)
            .map(|k| {
                let mut v = y.clone();
                for (h, zh) in st.hubs.iter().zip(z) {
                    if h.on[k] {
                        v[h.class] -= zh;
                    }
                }
                v
            })
            .collect();
        let under: Vec<f64> = (0..nk)
            .map(|k| {
                let top = (0..b.sets[k].len())
                    .map(|i| b.sets[k].get(i).iter().map(|&(c, q)| yk[k][usize::from(c)] * f64::from(q)).sum::<f64>())
                    .fold(0.0f64, f64::max);
                (top - mu[k] - 1.0).max(0.0)
            })
            .collect();
        let hub = z.iter().zip(&st.hubs).map(|(z, h)| z * h.cap).sum();
        Some((super::super::Duals { y, yk, hub, mu, under, cols: Vec::new() }, lp.bound))
    }

    /// With the root LP's multipliers and `keep` at the LP's bound rounded up (the tightest
    /// allowance that does not refute outright; the node count where the LP has no
    /// solution), and one more every third time: the sets the reduced costs leave out never
    /// cost a packing, against brute force with at most `keep` nodes.
    #[test]
    fn reduced_cost_fixing_keeps_every_packing() {
        let mut rnd = uniform(0x5eed_1234_abcd_0002);
        let mut seen = Seen::default();
        for n in 0..400 {
            let st = random_setup(&mut rnd);
            let Some((duals, bound)) = root_duals(&st) else { continue };
            let slots = slots_of(&st).len() as f64;
            let keep = (bound - 1e-6).ceil().clamp(1.0, slots) as i64 + i64::from(n % 3 == 0);
            let far = Instant::now() + Duration::from_secs(30);
            tally(&st, keep as usize, solve(&st, keep, Some(&duals), far, &mut Never), &mut seen);
        }
        seen.enough(20, 60);
    }
}
