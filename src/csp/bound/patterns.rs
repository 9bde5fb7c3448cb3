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
//! T_exec / (1 − CPULD) <= its fastest input's pace (rule 3). Networks only as far as each
//! node's links go: every module brings the traffic it must send and receive over them whatever
//! else its node holds (`set_traffic`: partners a node cannot hold enough of), and a set whose
//! sum exceeds the node's bandwidths in all is not a pattern; that sum only grows with more
//! modules, so subsets of patterns stay patterns. Between nodes, hub rows beside covering and
//! capacity: an object exchanging with every member of a class takes at most so many of
//! them over the networks its node shares with theirs (`hubs`). Requirements and the
//! iteration-load allocation are not modelled.
//!
//! Synchronous cycles: their members are items when no two may share a node (else they take
//! no load: one thread, `CycleRule`), and a key that only lies in a range (a pace a cycle or
//! several predecessors set) gives every eq-7 order the ranges allow (`eq7_orders`); a
//! class they cannot take is left out of the classes (`setup`), a relaxation. A lockstep
//! group's members (in no cycle) are items, each a thread of its own whose key has the
//! group's T_it as the wait and which keeps up with the group's T_it at most
//! (`Analysis::stack_params`, `keep_pace`); a cycle that holds lockstep members is left out.
//!
//! Why a set's own allocation is enough: removing a module from a node never raises any CPU's
//! load at any later step (the sorted loads after each step are monotone in the sorted loads
//! before it, an order-statistics argument), so a subset of a pattern that keeps the same
//! order is a pattern. The pricing search therefore only places modules whose class has a
//! positive dual value, and bounds each remaining class by the copies that fit on the loads
//! already there.
//!
//! Configuration 1: a node whose modules are all of one synchronous component, none a
//! predecessor, is ordered by eq 8, any other by eq 7, so whether a set passes depends on
//! what else the node holds. Patterns are the subsets of whole sets that pass as the verifier
//! orders them: a set of two classes or more of one component passes in its eq-8 order, or in
//! eq 7's with one module of a breaker class (a predecessor, a class of another component)
//! joining it there (`breaker_joins`; a class whose members are in several components leaves
//! the configuration open and counts as a breaker). The pricing searches eq 7's order with
//! that rule (`price`), each component's eq-8 order without it; `pack` passes each node's
//! whole set as the verifier orders it (`set_fits_exact`). Until the twentieth session a set
//! of one component passed in either order: unseen realistic 100/32 s179's 13-node shapes
//! packed (a monitor first on its CPU in eq 7's order, last in eq 8's, where it falls behind
//! its FIFO input), 11 walks from the packings failed, and it stayed 14/13 after 600 s; now
//! the pattern bound is 14 and it is optimal in 2 s.
//!
//! The bound is certified whatever the LP's accuracy: with multipliers w (y_c >= 0 on the
//! covering rows, μ_k >= 0 on the capacity rows), every mapping's node count is at least
//! Σ_c y_c size_c − Σ_k μ_k |k| − Σ_k |k| max(0, max_p (Σ_c y_c a_pc − μ_k − 1)), the last
//! maximum over every pattern of node class k, which the pricing search computes exactly, or
//! bounds from above when cut short (`Priced::ceiling`: its pruning bounds over what it left;
//! a weaker bound, still valid). Realistic 100/32 unseen
//! s20: the node-by-node LP left one case of one 13-node shape open; this bound is 13.375
//! there (an independent Python model gave the same), so the shape is refuted.
//!
//! The LP is not integral: `pack` is its integer side, an exhaustive search for an assignment
//! of the modules to the nodes whose every node's set is a pattern. None refutes the nodes
//! where the LP cannot (two triples of modules that pair up but never three: 3 fractional
//! nodes, 4 whole ones); one is a start for the walk, which on realistic 100/32 s3's known
//! 12-node shape turned a packing into a sound mapping at once.

use super::simplex::Simplex;
use super::{classes, dual_bound, ipm_duals, ipm_solve, Classes, Rows};
use crate::csp::Analysis;
use crate::model::{Application, Cluster};
use pumpkin_solver::core::termination::TerminationCondition;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

mod exact;

/// Search nodes of a pricing round's brief search, before the exhaustive one (`bound`):
/// unseen realistic 100/32 s64's refined cases, whose exact rounds mostly find columns,
/// spent 0.3-1.7 s a round pricing exhaustively.
const QUICK_NODES: u64 = 50_000;
/// Search nodes of one pricing problem; beyond, that round's bound is not certified.
const SEARCH_NODES: u64 = 30_000_000;
/// Nodes per depth the pricing search remembers for dominance (`Search::memo`). On the
/// pricing problems where unseen realistic 100/32 s156's cases ran out of time (22 classes,
/// 12 CPUs, duals alike): search nodes 17.9, 6.3, 23.0 million -> 4.3, 1.8, 6.6 million,
/// time 4.0, 2.2, 3.9 s -> 1.5, 0.8, 2.2 s, with 16; 256 remembered cut nodes further but
/// cost more time in the checks. Once the checks compared four values at a time
/// (`dominated`), 48: the whole cluster's bound of unseen realistic 100/32 s853 (32 cases)
/// 11.7-12.6 s -> 7.9-8.8 s, s852's 8.3 -> 5.8-6.2 s (128: 7.8 and 6.7 s; 512: 12.6 and
/// 8.9 s).
const MEMO: usize = 48;
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
    /// Bytes per second each copy must send (`tx`) and receive (`rx`) over the networks of a
    /// node of its node class, whatever else that node holds (`set_traffic`).
    tx: f64,
    rx: f64,
}

/// A pattern: a node class and (module class, count) pairs, ascending by class.
type Pattern = (usize, Vec<(usize, u32)>);

/// What the bound and the packing share: per node class its items (one per module class it
/// may hold), the orders a set of them may come in, the CPUs the simulation needs; per
/// module class its size; per node class its nodes.
struct Setup {
    node_classes: Vec<Vec<crate::model::NodeId>>,
    members: Vec<Vec<usize>>,
    items: Vec<Vec<Item>>,
    orders: Vec<Vec<Vec<Item>>>,
    /// Per node class, how many of its orders (the first) are eq 7's: one, or every order the
    /// key ranges allow (`eq7_orders`); the rest are eq 8's, one per synchronous component.
    eq7: Vec<usize>,
    cpus: Vec<usize>,
    caps: Vec<f64>,
    sizes: Vec<f64>,
    /// Per node class, the most a node of it sends, and receives, over all its networks.
    link: Vec<f64>,
    /// Rows beyond covering and capacity: each bounds a module class's members on some node
    /// classes (`hubs`).
    hubs: Vec<Hub>,
    /// Disjunctions from latency paths (`together`): in a sound mapping, for each, some node
    /// holds both module classes of one of its pairs (two members when they are one class).
    /// Checked on packings, not in the LP.
    together: Vec<Vec<(usize, usize)>>,
    /// Per node class, whether a module left out of the classes may sit there (`setup`): a
    /// set there may be joined by it, so it is never surely in configuration 1 and passes in
    /// either order.
    open: Vec<bool>,
    /// The modules (indices into `Analysis::modules`) of the classes left out because their
    /// keys are ranges (too many eq-7 orders, or members of several paces): a split that fixed
    /// those keys (a cycle's routes) might keep them (`range_dropped`).
    ranged: Vec<usize>,
}

/// A row of the pattern LP (`hubs`): the modules of class `class` on nodes of the node
/// classes `on` number at most `cap` in a sound mapping.
#[derive(Clone, Debug, PartialEq)]
struct Hub {
    class: usize,
    on: Vec<bool>,
    cap: f64,
}

/// The items and orders of `cluster` (None: out of scope, see `bound`).
fn setup(app: &Application, cluster: &Cluster, an: &Analysis, stop: &mut impl TerminationCondition) -> Option<Setup> {
    if !an.literal() {
        return None;
    }
    let Classes::Built(node_classes, classes) = classes(app, cluster, an, true, false, stop) else {
        return None;
    };
    let cycles = cycle_rules(an);
    let sig = pace_signatures(an);
    // Per module class, its item on each node class it may use with its key's upper bound
    // (the item holds the lower); None: left out (below).
    let mut per_class: Vec<Option<Vec<(usize, Item, f64)>>> = Vec::with_capacity(classes.len());
    let mut ranged: Vec<usize> = Vec::new();
    for class in &classes {
        let mut out: Option<Vec<(usize, Item, f64)>> = Some(Vec::new());
        'k: for &k in class.on.keys() {
            let n = node_classes[k][0];
            let mut item: Option<(Item, f64)> = None;
            for &mi in &class.members {
                let (texec, ld) = an.costs(app, cluster, mi, n);
                let (key7, key_hi, pred, u) = match an.stack_params(app, cluster, mi, n) {
                    // A member of a synchronous cycle whose members never share a node
                    // (`cycle_rules`): alone in its thread on its node, it is allocated as
                    // any module; it paces itself (u from its cycle's T_it, or 1: an idle
                    // CPU, where every slowdown slows the cycle).
                    None => match an.sync_lo.cycle_of[mi].and_then(|c| cycles[c]) {
                        // Members that may share a node form one thread there, which adds
                        // the largest of their loads, not each: taken as loading nothing and
                        // never slowed (a relaxation), anywhere in the order.
                        Some(CycleRule::Free) => {
                            let (lo, _) = an.key7(app, cluster, mi, n);
                            (lo, lo, false, 0.0)
                        }
                        Some(rule) => {
                            let (lo, hi) = an.key7(app, cluster, mi, n);
                            let u = if rule == CycleRule::Idle {
                                1.0
                            } else if an.tit_hi[mi] > 0.0 && an.tit_hi[mi].is_finite() {
                                (texec / an.tit_hi[mi]).min(1.0)
                            } else {
                                0.0
                            };
                            (lo, hi, false, u)
                        }
                        // Another cycle or a lockstep group: its class is left out.
                        None => {
                            out = None;
                            break 'k;
                        }
                    },
                    // A key no split on pace roots fixes stays a range: see below.
                    Some(s) if s.key7_lo != s.key7_hi && an.pace_root[mi].is_some() => return None,
                    Some(s) if s.w8_lo != s.w8_hi => return None,
                    // Any other module outside cycles, a lockstep group's member among them (a
                    // thread of its own, its key eq 7's with the group's T_it as the wait,
                    // keeping up with `tit_hi`: `Analysis::key7`, `keep_pace`; left out of
                    // the classes until the forty-sixth session, where alt-gen's instances
                    // packed onto 5 nodes where 10 were found and no shape was refuted).
                    Some(s) => (s.key7_lo, s.key7_hi, s.pred, s.u),
                };
                let free = an.sync_lo.cycle_of[mi].and_then(|c| cycles[c]) == Some(CycleRule::Free);
                let this = Item {
                    class: 0,
                    size: class.size as u32,
                    ld: if free { 0.0 } else { ld },
                    u,
                    pred,
                    comp: an.sync_lo.component[mi],
                    key7,
                    w8: texec * ld,
                    decl: an.modules[mi].index(),
                    tx: 0.0,
                    rx: 0.0,
                };
                match &mut item {
                    None => item = Some((this, key_hi)),
                    Some((f, hi)) => {
                        if (f.ld, f.pred, f.key7, f.w8, *hi) != (this.ld, this.pred, this.key7, this.w8, key_hi) {
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
            // A class is one block in the order: with a key known only within a range, only
            // when its members' T_it_sync is one value in every sound mapping (one pace
            // signature); else their keys could fall apart around another module's.
            if let Some((_, hi)) = item {
                if hi != item.map_or(hi, |i| i.0.key7) {
                    let s0 = sig[class.members[0]];
                    if class.members.iter().any(|&mi| sig[mi] != s0) {
                        out = None;
                        ranged.extend(class.members.iter().copied());
                        break 'k;
                    }
                }
            }
            if let (Some(v), Some((it, hi))) = (out.as_mut(), item) {
                v.push((k, it, hi));
            }
        }
        per_class.push(out);
    }
    // A key known only within a range (a pace set by a cycle, whose T_it_sync depends on its
    // members' processor types and routes, or by several predecessors): eq 7's order is any
    // the ranges allow (`eq7_orders`), each a relaxation's alternative (a set is a pattern
    // when it passes in one). At most `MAX_EQ7` per node class: beyond, the class with the
    // widest range is left out, until every node class is within it.
    let seqs: Vec<Vec<Vec<usize>>> = loop {
        let mut ranges: Vec<Vec<(usize, f64, f64, usize)>> = vec![Vec::new(); node_classes.len()];
        for (c, its) in per_class.iter().enumerate() {
            for (k, it, hi) in its.iter().flatten() {
                ranges[*k].push((c, it.key7, *hi, it.decl));
            }
        }
        let mut out = Vec::with_capacity(ranges.len());
        let mut drop = None;
        for rs in &ranges {
            match eq7_orders(rs) {
                Some(v) => out.push(v),
                None => {
                    // The class whose range holds the most other keys' ranges.
                    let meets = |r: &(usize, f64, f64, usize)| {
                        rs.iter().filter(|o| o.0 != r.0 && o.1 <= r.2 && o.2 >= r.1).count()
                    };
                    drop = rs
                        .iter()
                        .filter(|r| r.1 != r.2)
                        .max_by(|x, y| meets(x).cmp(&meets(y)).then((x.2 - x.1).total_cmp(&(y.2 - y.1))))
                        .map(|r| r.0);
                    break;
                }
            }
        }
        match drop {
            Some(c) => {
                per_class[c] = None;
                ranged.extend(classes[c].members.iter().copied());
            }
            None => break out,
        }
    };
    // Left-out modules are in no class: a sound mapping's restriction to the others keeps
    // every condition below (a node's set without them passes in the same order, their
    // loads gone; their traffic is not charged; see the module's documentation), except
    // that one of them may break a node's configuration 1, so a node class that may hold
    // one is never surely in it (`Setup::open`).
    let mut open = vec![false; node_classes.len()];
    let mut items: Vec<Vec<Item>> = vec![Vec::new(); node_classes.len()];
    let mut kept: Vec<super::Class> = Vec::new();
    let mut new_of: Vec<Option<usize>> = vec![None; classes.len()];
    for (c, (class, its)) in classes.into_iter().zip(per_class).enumerate() {
        match its {
            None => {
                for &k in class.on.keys() {
                    open[k] = true;
                }
            }
            Some(its) => {
                for (k, it, _) in its {
                    items[k].push(Item { class: kept.len(), ..it });
                }
                new_of[c] = Some(kept.len());
                kept.push(class);
            }
        }
    }
    let classes = kept;
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
    let members: Vec<Vec<usize>> = classes.into_iter().map(|c| c.members).collect();
    let link = link_caps(cluster, &node_classes);
    let (fmay, most_on) = set_traffic(app, cluster, an, &node_classes, &members, &mut items, &cpus, &link);
    let hubs = hubs(app, cluster, an, &node_classes, &members, &items, &fmay, &most_on);
    let together = together(app, cluster, an, &members);
    // Orders: eq 7's for every set (those the key ranges allow), and eq 8's per synchronous
    // component (no predecessor).
    let mut orders: Vec<Vec<Vec<Item>>> = Vec::new();
    let mut eq7 = Vec::with_capacity(items.len());
    for (its, seqs) in items.iter().zip(&seqs) {
        let mut per_node: Vec<Vec<Item>> = seqs
            .iter()
            .map(|seq| {
                seq.iter()
                    .map(|&c| {
                        let c = new_of[c].expect("a kept class");
                        *its.iter().find(|it| it.class == c).expect("the class's item")
                    })
                    .collect()
            })
            .collect();
        if per_node.is_empty() {
            per_node.push(Vec::new());
        }
        eq7.push(per_node.len());
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
    ranged.sort_unstable();
    ranged.dedup();
    Some(Setup { node_classes, members, items, orders, eq7, cpus, caps, sizes, link, hubs, together, open, ranged })
}

/// Most eq-7 orders per node class (`setup`).
const MAX_EQ7: usize = 8;
/// Search nodes `eq7_orders` may spend per node class.
const EQ7_NODES: usize = 20_000;

/// Every order of decreasing key, ties in declaration order (eq 7's, `perf::alloc`), that
/// keys within these ranges may give: `rs` holds (class, lowest key, highest key,
/// declaration index) per module class; the orders are sequences of those classes. None when
/// there are more than `MAX_EQ7` or the search ran past `EQ7_NODES`. Keys are independent
/// here (those of one cycle's pipeline move together, so this may list orders no mapping
/// gives: a relaxation). A sequence is possible when values v_1 >= v_2 >= ... exist with v_i
/// in its range and ties only in ascending declaration order: each placed as high as the
/// one before allows, which is what the search does, keeping the highest value left (a
/// value at most c, equal to c only after a lower declaration index; or below c).
fn eq7_orders(rs: &[(usize, f64, f64, usize)]) -> Option<Vec<Vec<usize>>> {
    // The cap on the next value: at most c (equal only with a larger declaration index than
    // d), or strictly below c.
    #[derive(Clone, Copy)]
    enum Cap {
        At(f64, usize),
        Below(f64),
    }
    fn admits(cap: Cap, lo: f64, decl: usize) -> bool {
        match cap {
            Cap::At(c, d) => lo < c || (lo == c && decl > d),
            Cap::Below(c) => lo < c,
        }
    }
    fn place(cap: Cap, lo: f64, hi: f64, decl: usize) -> Option<Cap> {
        match cap {
            Cap::At(c, d) => {
                if hi < c {
                    Some(Cap::At(hi, decl))
                } else if decl > d && lo <= c {
                    Some(Cap::At(c, decl))
                } else if lo < c {
                    Some(Cap::Below(c))
                } else {
                    None
                }
            }
            Cap::Below(c) => {
                if hi < c {
                    Some(Cap::At(hi, decl))
                } else if lo < c {
                    Some(Cap::Below(c))
                } else {
                    None
                }
            }
        }
    }
    struct Dfs<'a> {
        rs: &'a [(usize, f64, f64, usize)],
        used: Vec<bool>,
        seq: Vec<usize>,
        out: Vec<Vec<usize>>,
        nodes: usize,
    }
    impl Dfs<'_> {
        fn run(&mut self, cap: Cap) -> bool {
            self.nodes += 1;
            if self.nodes > EQ7_NODES || self.out.len() > MAX_EQ7 {
                return false;
            }
            if self.seq.len() == self.rs.len() {
                self.out.push(self.seq.iter().map(|&i| self.rs[i].0).collect());
                return true;
            }
            for i in 0..self.rs.len() {
                if self.used[i] {
                    continue;
                }
                let (_, lo, hi, decl) = self.rs[i];
                let Some(next) = place(cap, lo, hi, decl) else { continue };
                // Every module left must still fit below.
                self.used[i] = true;
                let ok = (0..self.rs.len()).all(|j| self.used[j] || admits(next, self.rs[j].1, self.rs[j].3));
                if ok {
                    self.seq.push(i);
                    let go = self.run(next);
                    self.seq.pop();
                    if !go {
                        self.used[i] = false;
                        return false;
                    }
                }
                self.used[i] = false;
            }
            true
        }
    }
    let mut d = Dfs { rs, used: vec![false; rs.len()], seq: Vec::new(), out: Vec::new(), nodes: 0 };
    if !d.run(Cap::At(f64::INFINITY, 0)) || d.out.len() > MAX_EQ7 {
        return None;
    }
    Some(d.out)
}

/// Per module, a pace signature: modules with one signature have one T_it_sync in every
/// sound mapping. A predecessor's T_it is its T_exec on its node (its own signature); a
/// cycle's or lockstep group's members share their group's; any other module keeps up with
/// every input (soundness rule 3), so its T_it is the largest ratio x T_it over its inputs
/// (eq 4): the same inputs' signatures with the same ratios give the same.
fn pace_signatures(an: &Analysis) -> Vec<usize> {
    use std::collections::BTreeMap;
    let sg = &an.sync_lo;
    let n = an.modules.len();
    let mut sig = vec![usize::MAX; n];
    let mut ids: BTreeMap<(u8, Vec<(usize, u64)>), usize> = BTreeMap::new();
    let mut intern = |key: (u8, Vec<(usize, u64)>)| {
        let next = ids.len();
        *ids.entry(key).or_insert(next)
    };
    for comp in &sg.order {
        if comp.len() > 1 || sg.cycle_of[comp[0]].is_some() || sg.lock_of[comp[0]].is_some() {
            let id = intern((1, vec![(comp[0], 0)]));
            for &m in comp {
                sig[m] = id;
            }
            continue;
        }
        let m = comp[0];
        let mut key: Vec<(usize, u64)> = an.inputs[m].iter().map(|x| (sig[x.source], x.ratio.to_bits())).collect();
        if key.is_empty() || key.iter().any(|e| e.0 == usize::MAX) {
            sig[m] = intern((0, vec![(m, 0)]));
            continue;
        }
        key.sort_unstable();
        key.dedup();
        sig[m] = intern((2, key));
    }
    sig
}

/// How the pattern tools take a synchronous cycle's members (`cycle_rules`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum CycleRule {
    /// No two members may share a node, and every slowdown of one slows the cycle (one
    /// elementary cycle through every member, no synchronous input from outside: its T_it is
    /// that cycle's round trip, eq 5): each needs an idle CPU.
    Idle,
    /// No two members may share a node: each keeps up with its cycle's T_it (eq 4).
    KeepUp,
    /// Two members may share a node, where they form one thread (perf/alloc.rs), which the
    /// simulation does not model: they take no load and no condition.
    Free,
}

/// Per synchronous cycle of `an` (`SyncStructure::cycles`), how the pattern tools take its
/// members (`CycleRule`); None for a lockstep group's, or a cycle whose elementary cycles
/// were not all listed.
pub(super) fn cycle_rules(an: &Analysis) -> Vec<Option<CycleRule>> {
    let sg = &an.sync_lo;
    (0..sg.cycles.len())
        .map(|c| {
            let ms = &sg.cycles[c];
            if sg.approximate.contains(&c) || ms.iter().any(|&m| sg.lock_of[m].is_some()) {
                return None;
            }
            for (i, &a) in ms.iter().enumerate() {
                let da = &an.domain[an.modules[a].index()];
                for &b in &ms[i + 1..] {
                    if an.domain[an.modules[b].index()].iter().any(|n| da.binary_search(n).is_ok()) {
                        return Some(CycleRule::Free);
                    }
                }
            }
            let one = sg.elementary[c].len() == 1 && sg.elementary[c][0].len() == ms.len();
            let closed = ms.iter().all(|&m| an.inputs[m].iter().all(|x| sg.cycle_of[x.source] == Some(c)));
            Some(if one && closed { CycleRule::Idle } else { CycleRule::KeepUp })
        })
        .collect()
}

/// Whether the modules of a mapping (`node`: each object's node, by object index) meet what
/// every packing must: each node's whole set passes the simulation as the verifier orders it
/// (`set_fits_exact`), and together they keep the hub rows and latency disjunctions
/// (`rows_hold`). None when the patterns are out of scope (see `bound`); Err names the first
/// condition broken. A sound mapping meets them all: the tests hold the packing conditions
/// to that.
pub fn mapping_passes(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    node: &[crate::model::NodeId],
) -> Option<Result<(), String>> {
    let st = setup(app, cluster, an, &mut pumpkin_solver::core::termination::Indefinite)?;
    let mut k_of = vec![usize::MAX; cluster.nodes.len()];
    for (k, ns) in st.node_classes.iter().enumerate() {
        for n in ns {
            k_of[n.ix()] = k;
        }
    }
    let mut cnt = vec![vec![0u32; st.sizes.len()]; cluster.nodes.len()];
    for (c, ms) in st.members.iter().enumerate() {
        for &mi in ms {
            cnt[node[an.modules[mi].index()].ix()][c] += 1;
        }
    }
    let mut loads = Vec::new();
    let (mut ks, mut sets) = (Vec::new(), Vec::new());
    for (n, c) in cnt.into_iter().enumerate() {
        if c.iter().all(|&q| q == 0) {
            continue;
        }
        let k = k_of[n];
        if k == usize::MAX {
            return Some(Err(format!("node {n} holds modules but is in no node class")));
        }
        if !set_fits_exact(&st, k, &c, &mut loads) {
            return Some(Err(format!("node {n}: its set fails the simulation ({c:?})")));
        }
        ks.push(k);
        sets.push(c);
    }
    if !rows_hold(&st, &ks, &sets) {
        return Some(Err("a hub row or latency disjunction is broken".into()));
    }
    Some(Ok(()))
}

/// Per node class, the most a node of it can send, and receive, in all: the sum of its
/// networks' bandwidths (eq 9–10: an edge between two nodes takes one network both are on,
/// and each (node, network) link sends and receives at most the network's bandwidth); the
/// largest over the class's nodes.
fn link_caps(cluster: &Cluster, node_classes: &[Vec<crate::model::NodeId>]) -> Vec<f64> {
    node_classes
        .iter()
        .map(|ns| {
            ns.iter()
                .map(|&n| cluster.node(n).networks.iter().map(|&w| cluster.network(w).bandwidth).sum::<f64>())
                .fold(0.0, f64::max)
        })
        .collect()
}

/// Whether `used` bytes per second fit a node's `cap` (generously: a sound node set never
/// fails by rounding).
fn link_fits(used: f64, cap: f64) -> bool {
    used <= cap * (1.0 + 1e-6) + 1e-6
}

/// The latency paths' disjunctions (`Setup::together`): per requirement whose pairs'
/// transfers cannot all be cut (`presolve::latency_pairs`), the fewest of its pairs of
/// classed modules, heaviest transfer first, whose transfers together break the bound, as
/// pairs of module classes. Each holds in every sound mapping: not all of those pairs are
/// on two nodes. Unseen realistic 100/32 s132: source -> sim[5] -> particles[1] within
/// 80.069 ms, the T_it at least 3 x 26.14 ms, the two transfers at least 0.339 and 1.616 ms
/// (eth): packings that put the sims on one node and the source and particles on another
/// walked to 80.376 ms.
fn together(app: &Application, cluster: &Cluster, an: &Analysis, members: &[Vec<usize>]) -> Vec<Vec<(usize, usize)>> {
    let class_of = class_of_objects(app, an, members);
    let mut out = Vec::new();
    for lp in crate::csp::presolve::latency_pairs(app, cluster, an) {
        let mut ps: Vec<(f64, usize, usize)> =
            lp.pairs.iter().filter_map(|&(a, b, c)| Some((c, class_of[a.index()]?, class_of[b.index()]?))).collect();
        ps.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
        let mut cut = 0.0;
        for i in 0..ps.len() {
            cut += ps[i].0;
            if lp.cut_breaks(cut) {
                let mut d: Vec<(usize, usize)> = ps[..=i].iter().map(|x| (x.1.min(x.2), x.1.max(x.2))).collect();
                d.sort_unstable();
                d.dedup();
                out.push(d);
                break;
            }
        }
    }
    out
}

/// Whether some slot holds both classes of one of `pairs` (two of a class paired with itself).
fn together_holds(pairs: &[(usize, usize)], cnt: &[Vec<u32>]) -> bool {
    cnt.iter().any(|c| pairs.iter().any(|&(a, b)| if a == b { c[a] >= 2 } else { c[a] >= 1 && c[b] >= 1 }))
}

/// Per application object, its module class (None for filters and unclassed objects).
fn class_of_objects(app: &Application, an: &Analysis, members: &[Vec<usize>]) -> Vec<Option<usize>> {
    let mut class_of: Vec<Option<usize>> = vec![None; app.graph.node_count()];
    for (c, ms) in members.iter().enumerate() {
        for &mi in ms {
            class_of[an.modules[mi].index()] = Some(c);
        }
    }
    class_of
}

/// Sets each item's `tx` and `rx`: what every copy of its module class must send and receive
/// over the networks of a node of its node class, whatever else that node holds, at the
/// edges' lowest rates (`Analysis::rate_lo`; an edge carries volume x rate, eq 9–10).
/// A module's edges to one partner are local only when the partner shares its node, and a
/// node of class k holds at most `most` copies of a module class (alone by the simulation;
/// fewer beside others, since loads only grow), one of them the module itself for its own
/// class: so of its partners in a class, the heaviest that many at most are local, and the
/// rest is traffic. A partner that may not use the class (its domain, or a filter that
/// cannot sit there: its own traffic, so reckoned, exceeds the links) is never local. The
/// least over the class's members. Unseen realistic 100/32 s133: 13 nodes with bandwidths
/// 100x, 15 and no proof with its own (a gather of 24 simulations' 275 MB/s cannot sit on a
/// node whose one network carries 74 MB/s beside the 8 a node there holds).
#[allow(clippy::too_many_arguments)]
fn set_traffic(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    node_classes: &[Vec<crate::model::NodeId>],
    members: &[Vec<usize>],
    items: &mut [Vec<Item>],
    cpus: &[usize],
    link: &[f64],
) -> (Vec<Vec<bool>>, Vec<Vec<u32>>) {
    use petgraph::visit::EdgeRef;
    use petgraph::Direction;
    let nk = node_classes.len();
    let objects = app.graph.node_count();
    let class_of = class_of_objects(app, an, members);
    let mut k_of = vec![usize::MAX; cluster.nodes.len()];
    for (k, ns) in node_classes.iter().enumerate() {
        for n in ns {
            k_of[n.ix()] = k;
        }
    }
    // Per object, the node classes it may use (any node of the class in its domain).
    let mut may = vec![vec![false; nk]; objects];
    for (o, row) in may.iter_mut().enumerate() {
        for n in an.domain.get(o).into_iter().flatten() {
            if let Some(&k) = k_of.get(n.ix()).filter(|&&k| k < nk) {
                row[k] = true;
            }
        }
    }
    let mut most_on = vec![vec![0u32; members.len()]; nk];
    for (k, its) in items.iter().enumerate() {
        let idle = vec![0.0; cpus[k]];
        for it in its {
            most_on[k][it.class] = most(&idle, it);
        }
    }
    let rate = |e: petgraph::graph::EdgeIndex| edge_traffic(app, an, e);
    // The traffic object `o` on a node of class k sends (`dir` Outgoing) or receives that no
    // partner on its node can take, with `may` saying which filters may sit there.
    let forced =
        |o: crate::model::ObjectId, k: usize, dir: Direction, may: &[Vec<bool>], most_on: &[Vec<u32>]| -> f64 {
            // Per partner, the traffic with it; then per group of partners (a module class; a
            // filter alone), the partners' traffic, heaviest first.
            let mut per: Vec<(usize, f64)> = Vec::new();
            for e in app.graph.edges_directed(o, dir) {
                let v = if dir == Direction::Outgoing { e.target() } else { e.source() };
                if v != o {
                    per.push((v.index(), rate(e.id())));
                }
            }
            per.sort_by_key(|x| x.0);
            let mut partners: Vec<((Option<usize>, usize), f64)> = Vec::new();
            for (v, r) in per {
                match partners.last_mut() {
                    Some(last) if last.0 .1 == v => last.1 += r,
                    _ => partners.push(((class_of[v], v), r)),
                }
            }
            // Group key: the class, or the filter itself.
            let mut keyed: Vec<((Option<usize>, usize), f64)> = partners
                .into_iter()
                .map(|((d, v), r)| (if d.is_some() { (d, usize::MAX) } else { (None, v) }, r))
                .collect();
            keyed.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
            let mut groups: Vec<(Option<usize>, usize, Vec<f64>)> = Vec::new();
            for ((d, v), r) in keyed {
                match groups.last_mut() {
                    Some(g) if (g.0, g.1) == (d, v) => g.2.push(r),
                    _ => groups.push((d, v, vec![r])),
                }
            }
            let own = class_of[o.index()];
            let mut out = 0.0;
            for (d, v, rs) in groups {
                let local = match d {
                    Some(d) => {
                        let m = most_on[k][d] as usize;
                        if own == Some(d) {
                            m.saturating_sub(1)
                        } else {
                            m
                        }
                    }
                    // A filter alone (or a module with no class: it may go nowhere).
                    None => usize::from(may[v][k]),
                };
                out += rs.iter().skip(local).sum::<f64>();
            }
            out
        };
    // Filters that cannot sit on a class: what they must send or receive there exceeds it;
    // module classes that cannot, likewise (their least member's traffic there exceeds it).
    // Each such finding makes partners' traffic there forced, so again until none is new.
    let mut fmay = may.clone();
    for _ in 0..TRAFFIC_ROUNDS {
        let mut next = fmay.clone();
        for o in app.graph.node_indices() {
            if app.object(o).is_module() {
                continue;
            }
            for k in 0..nk {
                if fmay[o.index()][k]
                    && (!link_fits(forced(o, k, Direction::Outgoing, &fmay, &most_on), link[k])
                        || !link_fits(forced(o, k, Direction::Incoming, &fmay, &most_on), link[k]))
                {
                    next[o.index()][k] = false;
                }
            }
        }
        let mut changed = next != fmay;
        fmay = next;
        for (k, its) in items.iter_mut().enumerate() {
            for it in its {
                let ms = &members[it.class];
                let least = |dir| {
                    ms.iter().map(|&mi| forced(an.modules[mi], k, dir, &fmay, &most_on)).fold(f64::INFINITY, f64::min)
                };
                it.tx = least(Direction::Outgoing);
                it.rx = least(Direction::Incoming);
                if !it.tx.is_finite() {
                    it.tx = 0.0;
                }
                if !it.rx.is_finite() {
                    it.rx = 0.0;
                }
            }
        }
        for (k, its) in items.iter().enumerate() {
            for it in its {
                if most_on[k][it.class] > 0 && !(link_fits(it.tx, link[k]) && link_fits(it.rx, link[k])) {
                    most_on[k][it.class] = 0;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    (fmay, most_on)
}

/// Rounds of `set_traffic`'s refinement at most (each may find objects that cannot sit on a
/// node class, which forces their partners' traffic there).
const TRAFFIC_ROUNDS: usize = 6;

/// The bytes per second edge `e` carries at the least (volume x `Analysis::rate_lo`, eq 9–10).
fn edge_traffic(app: &Application, an: &Analysis, e: petgraph::graph::EdgeIndex) -> f64 {
    let r = app.graph[e].volume * an.rate_lo.get(e.index()).copied().unwrap_or(0.0);
    if r.is_finite() && r > 0.0 {
        r
    } else {
        0.0
    }
}

/// Hub rows: an object h (a module or a filter) that exchanges at least r bytes per second
/// with every member of a module class d (another class) sits on one node, of one of the node
/// classes it may use (`may`: filters as `set_traffic` leaves them); every member of d not on
/// that node sends (receives) its r over a network both nodes are on, through that node's
/// links, which carry at most each network's bandwidth each way (eq 9–10). So for a set S of
/// networks, the members of d on the node classes that share with every node class h may
/// use only networks of S (none: they must share h's node) number at most, over h's node
/// classes K, (the most of d a node of K holds, when K is one of those) + floor(Σ_{w in S,
/// K on w} BW(w) / r). One row per (d, those node classes), the least cap, for S each network
/// alone and all of them; only rows that bind (a cap below d's size and below what those
/// node classes hold of d). Unseen realistic 100/32 s163 and s133: an eth-only rack of
/// 8-CPU nodes, with a viewer, gather or broadcast exchanging megabytes per second with each
/// of 24 simulations; with eth's bandwidth 100x, s163 is optimal with 13 nodes, and with its
/// own the best found is 14 where the bound was 13.
#[allow(clippy::too_many_arguments)]
fn hubs(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    node_classes: &[Vec<crate::model::NodeId>],
    members: &[Vec<usize>],
    items: &[Vec<Item>],
    may: &[Vec<bool>],
    most_on: &[Vec<u32>],
) -> Vec<Hub> {
    use petgraph::visit::EdgeRef;
    use petgraph::Direction;
    use std::collections::BTreeMap;
    let nk = node_classes.len();
    let nets: Vec<Vec<crate::model::NetworkId>> =
        node_classes.iter().map(|ns| cluster.node(ns[0]).networks.clone()).collect();
    let class_of = class_of_objects(app, an, members);
    let holds = |k: usize, d: usize| items[k].iter().any(|it| it.class == d);
    // Network sets: each network alone, then all.
    let all: Vec<crate::model::NetworkId> = (0..cluster.networks.len() as u32).map(crate::model::NetworkId).collect();
    let mut sets: Vec<Vec<crate::model::NetworkId>> = all.iter().map(|&w| vec![w]).collect();
    sets.push(all);
    let mut rows: BTreeMap<(usize, Vec<bool>), f64> = BTreeMap::new();
    for h in app.graph.node_indices() {
        // (A module only where its class fits, its traffic within the links: `most_on`.)
        let hk: Vec<usize> =
            (0..nk).filter(|&k| may[h.index()][k] && class_of[h.index()].is_none_or(|c| most_on[k][c] >= 1)).collect();
        if hk.is_empty() {
            continue;
        }
        for dir in [Direction::Incoming, Direction::Outgoing] {
            let mut per: BTreeMap<usize, f64> = BTreeMap::new();
            for e in app.graph.edges_directed(h, dir) {
                let v = if dir == Direction::Outgoing { e.target() } else { e.source() };
                if v != h {
                    *per.entry(v.index()).or_insert(0.0) += edge_traffic(app, an, e.id());
                }
            }
            if per.is_empty() {
                continue;
            }
            let near: BTreeSet<usize> = per.keys().filter_map(|&v| class_of[v]).collect();
            for d in near {
                let ms = &members[d];
                if class_of[h.index()] == Some(d) || ms.len() < 2 {
                    continue;
                }
                let r = ms
                    .iter()
                    .map(|&mi| per.get(&an.modules[mi].index()).copied().unwrap_or(0.0))
                    .fold(f64::INFINITY, f64::min);
                if !(r.is_finite() && r > 0.0) {
                    continue;
                }
                for set in &sets {
                    let on: Vec<bool> = (0..nk)
                        .map(|k| {
                            holds(k, d)
                                && hk.iter().all(|&kh| nets[k].iter().all(|w| !nets[kh].contains(w) || set.contains(w)))
                        })
                        .collect();
                    if !on.contains(&true) {
                        continue;
                    }
                    let cap = hk
                        .iter()
                        .map(|&kh| {
                            let bw: f64 = nets[kh]
                                .iter()
                                .filter(|w| set.contains(w))
                                .map(|&w| cluster.network(w).bandwidth)
                                .sum();
                            let local = if on[kh] { most_on[kh][d] as f64 } else { 0.0 };
                            // The tolerance `link_fits` allows.
                            local + ((bw * (1.0 + 1e-6) + 1e-6) / r).floor()
                        })
                        .fold(0.0f64, f64::max);
                    let room: f64 =
                        (0..nk).filter(|&k| on[k]).map(|k| (node_classes[k].len() as u32 * most_on[k][d]) as f64).sum();
                    if cap < room.min(ms.len() as f64) {
                        let slot = rows.entry((d, on)).or_insert(cap);
                        *slot = slot.min(cap);
                    }
                }
            }
        }
    }
    rows.into_iter().map(|((class, on), cap)| Hub { class, on, cap }).collect()
}

/// Whether the pattern bound and the packing searches apply to `cluster` (see `bound`).
pub(super) fn in_scope(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    stop: &mut impl TerminationCondition,
) -> bool {
    setup(app, cluster, an, stop).is_some()
}

/// The modules (indices into `an.modules`) the pattern tools leave out because their keys
/// are ranges (`Setup::ranged`); None when out of scope.
pub(super) fn range_dropped(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    stop: &mut impl TerminationCondition,
) -> Option<Vec<usize>> {
    setup(app, cluster, an, stop).map(|s| s.ranged)
}

/// What `bound` found: the bound (Some when a round certified one: the largest), the best
/// certified round's multipliers, every column generated (a warm start for another call on
/// the same instance), whether the column generation finished (the LP converged, or the
/// bound exceeds the target, or, with a target, the LP cannot: its restricted value is at
/// most the target in an exact round that would need the exhaustive pricing pass), rather
/// than ran out of time, and whether it reached the LP's optimum (the multipliers are the
/// optimum's; a stop at the target leaves them loose, the pricing's ceilings in them).
pub(super) struct Bounded {
    pub bound: Option<i64>,
    pub duals: Option<Duals>,
    pub cols: Columns,
    pub done: bool,
    pub optimal: bool,
}

/// Columns of the pattern LP, opaque outside `patterns`: `bound` takes them back as a warm
/// start (on the same application, cluster and analysis only: the classes they number are
/// `setup`'s, which is deterministic).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Columns(Vec<Pattern>);

/// The pattern bound of `cluster` (see the module's documentation), from the columns `start`
/// (those of an earlier call on the same instance, or none): `bound` None when the instance
/// is out of scope (an allocation other than the literal one, a synchronous cycle or
/// lockstep group, a key that is not one value, too many classes) or no round was certified.
/// Stops early once the bound exceeds `target`, or (`target` below `i64::MAX`) once it cannot
/// and only the exhaustive pricing pass is left: an exact round's restricted LP is at most
/// `target`, no column found, the brief pass cut short.
pub(super) fn bound(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    target: i64,
    budget: Duration,
    start: Columns,
    stop: &mut impl TerminationCondition,
) -> Bounded {
    let end = Instant::now() + budget;
    let Some(Setup { items, orders, eq7, cpus, caps, sizes, link, hubs, open, .. }) = setup(app, cluster, an, stop)
    else {
        return Bounded { bound: None, duals: None, cols: Columns::default(), done: false, optimal: false };
    };
    let nodes = cluster.nodes.len() as f64;
    // Columns: those of `start` that fit these classes, then every class alone on each node
    // class it may use.
    let mut seen: BTreeSet<Pattern> = BTreeSet::new();
    let mut cols: Vec<Pattern> = Vec::new();
    for p in start.0 {
        if p.0 < items.len() && p.1.iter().all(|e| e.0 < sizes.len()) && seen.insert(p.clone()) {
            cols.push(p);
        }
    }
    for (k, its) in items.iter().enumerate() {
        for it in its {
            let p = (k, vec![(it.class, 1)]);
            if seen.insert(p.clone()) {
                cols.push(p);
            }
        }
    }
    let mut lp = Master::new(&caps, &sizes, &hubs, nodes + 1.0);
    let mut best: Option<f64> = None;
    let mut duals: Option<Duals> = None;
    let mut exact = false;
    let mut done = false;
    let mut optimal = false;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..ROUNDS {
        if stop.should_stop() || Instant::now() >= end {
            break;
        }
        let rows = master(&cols, &caps, &sizes, &hubs, nodes + 1.0);
        let Some(w) = lp.duals_of(&cols, &rows, end) else {
            break;
        };
        let (nc, nk) = (sizes.len(), items.len());
        let y: Vec<f64> = (0..nc).map(|c| w[c].max(0.0)).collect();
        let z: Vec<f64> = (0..hubs.len()).map(|j| w[nc + nk + j].max(0.0)).collect();
        let yk = class_values(&y, &z, &hubs, nk);
        let mut added = 0;
        // Exact rounds price in two passes: a brief search on every node class first (a
        // column it finds is as good for the LP), then, only when none prices out and the
        // brief one's ceilings do not already certify a bound over `target`, the exhaustive
        // search wherever the brief one stopped short. Per (node class, order), an upper
        // bound on its patterns' values (exact rounds only).
        let mut tops = vec![0.0f64; items.len()];
        let mut ceils: Vec<Vec<f64>> = orders.iter().map(|os| vec![f64::INFINITY; os.len()]).collect();
        let mut short: Vec<(usize, usize)> = Vec::new();
        let mut take = |k: usize, value: f64, pattern: Vec<(usize, u32)>, tops: &mut [f64]| {
            tops[k] = tops[k].max(value);
            if value - w[nc + k].max(0.0) - 1.0 > 1e-7 {
                let p = (k, pattern);
                if seen.insert(p.clone()) {
                    cols.push(p);
                    return 1;
                }
            }
            0
        };
        for k in 0..items.len() {
            let floor = w[nc + k].max(0.0) + 1.0;
            for (o, order) in orders[k].iter().enumerate() {
                if exact {
                    let got = price(
                        order,
                        o < eq7[k] && !open[k],
                        &yk[k],
                        cpus[k],
                        link[k],
                        floor,
                        QUICK_NODES,
                        end,
                        &mut || stop.should_stop(),
                    );
                    if !got.complete {
                        short.push((k, o));
                    }
                    ceils[k][o] = got.ceiling;
                    added += take(k, got.value, got.pattern, &mut tops);
                } else {
                    let (value, pattern, _) =
                        greedy(order, o < eq7[k] && !open[k], &yk[k], cpus[k], link[k], &mut seed);
                    added += take(k, value, pattern, &mut tops);
                }
            }
        }
        // The bound the round's multipliers certify (weak duality, see the module's
        // documentation), with every node class's patterns worth at most its ceilings.
        let certify = |ceils: &[Vec<f64>], best: &mut Option<f64>, duals: &mut Option<Duals>| {
            let mut charge = 0.0;
            let mut under = vec![0.0; items.len()];
            for k in 0..items.len() {
                let top = ceils[k].iter().copied().fold(0.0f64, f64::max);
                under[k] = (top - w[nc + k].max(0.0) - 1.0).max(0.0);
                charge += caps[k] * under[k];
            }
            let b = dual_bound(&rows, &w) - charge;
            if b.is_finite() && best.is_none_or(|x| b > x) {
                *best = Some(b);
                *duals = Some(Duals {
                    mu: (0..items.len()).map(|k| w[nc + k].max(0.0)).collect(),
                    y: y.clone(),
                    yk: yk.clone(),
                    hub: z.iter().zip(&hubs).map(|(z, h)| z * h.cap).sum(),
                    under,
                    cols: Vec::new(),
                });
            }
        };
        let over = |best: &Option<f64>| best.is_some_and(|b| b.ceil() as i64 > target);
        if exact {
            certify(&ceils, &mut best, &mut duals);
            // The restricted LP's value bounds the LP's from above (more columns only lower
            // it): at most the target, no round can certify more, so an exhaustive pricing
            // pass, where the brief one stopped short, has nothing to prove (unseen realistic
            // 100/32 s159: its 9-node shapes' cases reach LP value 9 in 0.1 s, then spent the
            // rest of every 3-s step in an exhaustive pricing that never finished, so the
            // packing search never ran). Where the brief pass is exhaustive the column
            // generation goes on to the LP's optimum, whose multipliers the dive and the
            // packing search use (unseen s142 found its 17 nodes from such a dive's packing).
            let capped = target < i64::MAX && dual_bound(&rows, &w) <= target as f64;
            if over(&best) || (capped && added == 0 && !short.is_empty()) {
                done = true;
                break;
            }
        }
        if exact && added == 0 && !short.is_empty() {
            let mut complete = true;
            for &(k, o) in &short {
                let floor = w[nc + k].max(0.0) + 1.0;
                let got = price(
                    &orders[k][o],
                    o < eq7[k] && !open[k],
                    &yk[k],
                    cpus[k],
                    link[k],
                    floor,
                    SEARCH_NODES,
                    end,
                    &mut || stop.should_stop(),
                );
                complete &= got.complete;
                ceils[k][o] = ceils[k][o].min(got.ceiling);
                added += take(k, got.value, got.pattern, &mut tops);
            }
            certify(&ceils, &mut best, &mut duals);
            if over(&best) {
                done = true;
                break;
            }
            if !complete {
                // A round whose search stops at its node budget: no further.
                break;
            }
        }
        // Greedy pricing until it finds no column, then an exhaustive one (which certifies
        // the round's bound, and may find columns the quick ones missed); an exact round that
        // finds none has the LP's optimum.
        if added == 0 {
            if exact {
                done = true;
                optimal = true;
                break;
            }
            exact = true;
        } else {
            exact = false;
        }
    }
    if let Some(d) = &mut duals {
        d.cols = cols.clone();
    }
    Bounded { bound: best.map(|b| b.ceil().max(0.0) as i64), duals, cols: Columns(cols), done, optimal }
}

/// The multipliers of the pattern LP's best certified round, for `pack`: per module class
/// y_c >= 0, per node class μ_k >= 0 and how far below zero the reduced cost 1 + μ_k − Σ_c
/// y_c a_pc of any of its patterns p goes (at most `under[k]`: the pricing search was
/// exhaustive). With them, every column the column generation found (`pack_dive`'s start).
#[derive(Clone, Debug)]
pub struct Duals {
    y: Vec<f64>,
    /// Per node class, the module classes' values in the pricing (`class_values`), and the
    /// hub rows' part of the dual objective, Σ z cap.
    yk: Vec<Vec<f64>>,
    hub: f64,
    mu: Vec<f64>,
    under: Vec<f64>,
    cols: Vec<Pattern>,
}

/// The covering LP over `cols`: one variable per column (cost 1, at most its class's nodes),
/// one artificial per module class (cost `big`: more than any mapping, so the LP uses it only
/// where no column covers the class); rows: per module class Σ a λ + s >= size, then per node
/// class −Σ λ >= −|k|, then per hub row (`hubs`) −Σ_{p on its node classes} a_pd λ_p >= −cap,
fn master(cols: &[Pattern], caps: &[f64], sizes: &[f64], hubs: &[Hub], big: f64) -> Rows {
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
    for h in hubs {
        let mut t = Vec::new();
        for (v, (k, p)) in cols.iter().enumerate() {
            if h.on[*k] {
                if let Some(&(_, q)) = p.iter().find(|e| e.0 == h.class) {
                    t.push((v, -(q as f64)));
                }
            }
        }
        r.ge(t, -h.cap);
    }
    r
}

/// `master`'s LP kept across the rounds of a column generation, solved by the warm-started
/// simplex (`simplex`), with clarabel's interior point as the fallback where the simplex
/// gives up (no starting basis, a singular basis: not seen on the corpora).
struct Master {
    lp: Simplex,
    hubs: Vec<Hub>,
    nc: usize,
    nk: usize,
    /// Columns of `cols` already in `lp` (after the artificials).
    taken: usize,
    big: f64,
    caps: Vec<f64>,
    sizes: Vec<f64>,
    failed: bool,
}

impl Master {
    fn new(caps: &[f64], sizes: &[f64], hubs: &[Hub], big: f64) -> Master {
        let (nc, nk) = (sizes.len(), caps.len());
        let rhs: Vec<f64> =
            sizes.iter().copied().chain(caps.iter().map(|c| -c)).chain(hubs.iter().map(|h| -h.cap)).collect();
        let mut lp = Simplex::new(rhs);
        for c in 0..nc {
            lp.add(big, vec![(c, 1.0)]);
        }
        Master {
            lp,
            hubs: hubs.to_vec(),
            nc,
            nk,
            taken: 0,
            big,
            caps: caps.to_vec(),
            sizes: sizes.to_vec(),
            failed: false,
        }
    }

    /// Takes in the columns of `cols` not yet in the LP (`cols` only grows).
    fn extend(&mut self, cols: &[Pattern]) {
        for (k, p) in &cols[self.taken..] {
            let mut e: Vec<(usize, f64)> = p.iter().map(|&(c, q)| (c, q as f64)).collect();
            e.push((self.nc + k, -1.0));
            for (j, h) in self.hubs.iter().enumerate() {
                if h.on[*k] {
                    if let Some(&(_, q)) = p.iter().find(|e| e.0 == h.class) {
                        e.push((self.nc + self.nk + j, -(q as f64)));
                    }
                }
            }
            self.lp.add(1.0, e);
        }
        self.taken = cols.len();
    }

    /// The rows' multipliers at the LP's optimum over `cols` (`rows`: `master` of the same),
    /// None when the time ends first.
    fn duals_of(&mut self, cols: &[Pattern], rows: &Rows, end: Instant) -> Option<Vec<f64>> {
        self.extend(cols);
        if !self.failed {
            match self.lp.solve(end) {
                Some(true) => return Some(self.lp.duals()),
                Some(false) => return None,
                None => self.failed = true,
            }
        }
        ipm_duals(rows, end.saturating_duration_since(Instant::now())).map(|(w, _)| w)
    }

    /// The multipliers and the values of `master`'s variables (the columns, then the
    /// artificials) at the LP's optimum over `cols`, None when the time ends first.
    fn solve(&mut self, cols: &[Pattern], end: Instant) -> Option<(Vec<f64>, Vec<f64>)> {
        self.extend(cols);
        if !self.failed {
            match self.lp.solve(end) {
                Some(true) => {
                    let x = self.lp.primal();
                    let mut v: Vec<f64> = x[self.nc..].to_vec();
                    v.extend_from_slice(&x[..self.nc]);
                    return Some((self.lp.duals(), v));
                }
                Some(false) => return None,
                None => self.failed = true,
            }
        }
        let rows = master(cols, &self.caps, &self.sizes, &self.hubs, self.big);
        let (w, x, _) = ipm_solve(&rows, end.saturating_duration_since(Instant::now()))?;
        Some((w, x))
    }
}

/// Per node class, each module class's value in the pricing: y_c less the multipliers z of
/// the hub rows on that node class for that module class (a pattern's reduced cost is
/// 1 + μ_k − Σ_c y_c a_pc + Σ_{hub rows on k} z a_pd).
fn class_values(y: &[f64], z: &[f64], hubs: &[Hub], nk: usize) -> Vec<Vec<f64>> {
    let mut out = vec![y.to_vec(); nk];
    for (h, &zh) in hubs.iter().zip(z) {
        for (k, row) in out.iter_mut().enumerate() {
            if h.on[k] {
                row[h.class] -= zh;
            }
        }
    }
    out
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

/// The loads after 0, 1, 2, ... copies of `it` (as many as fit, at most its class size): the
/// reference the tests hold `copies_into` to.
#[cfg(test)]
fn copies(loads: &[f64], it: &Item) -> Vec<Vec<f64>> {
    let mut states = vec![loads.to_vec()];
    while states.len() <= it.size as usize {
        let mut l = states.last().expect("one").clone();
        if !place(&mut l, it) {
            break;
        }
        states.push(l);
    }
    states
}

/// `copies` into `buf` (each state `loads.len()` values, one after another): how many states.
fn copies_into(loads: &[f64], it: &Item, buf: &mut Vec<f64>) -> usize {
    let c = loads.len();
    buf.clear();
    buf.extend_from_slice(loads);
    let mut n = 1;
    while n <= it.size as usize {
        buf.extend_from_within((n - 1) * c..n * c);
        if !place(&mut buf[n * c..], it) {
            buf.truncate(n * c);
            break;
        }
        n += 1;
    }
    n
}

/// The most copies of `it` that fit after `loads` (at most its class size), as `place`
/// would put them, without the simulation: each copy goes to the least-loaded CPU, and once
/// that one cannot take it no CPU can (`place`'s conditions only tighten as a load grows), so
/// every CPU ends having taken copies until it could not, whatever the interleaving: the
/// count is the sum over the CPUs of what each takes alone, with `place`'s arithmetic.
/// (The pricing search's bounds call it per remaining class at every search node.)
fn most(loads: &[f64], it: &Item) -> u32 {
    debug_assert!(loads.is_sorted());
    let size = it.size;
    let mut q = 0;
    for &start in loads {
        let mut l = start;
        let before = q;
        while q < size && !((it.pred && l > 1e-6) || (1.0 - l) * (1.0 + 1e-6) < it.u) {
            l += (1.0 - l) * it.ld;
            q += 1;
        }
        // Full, or (the loads ascending) no later CPU takes a copy either.
        if q == size || q == before {
            break;
        }
    }
    q
}

/// The most valuable set of `order`'s items (value Σ y per module) a node of `cpus` CPUs
/// holds when they come in that order, within its `link` each way (`Item::tx`, `Item::rx`),
/// as far as the search got (`Priced`); when no set is worth more than `floor`, `floor` and no
/// pattern. (A column prices out only above 1 + μ_k, so that is the floor: the search prunes
/// every branch that cannot beat it. Unseen realistic 100/32 s64's refined cases: the 8-CPU
/// nodes' pricing took 2.6 million search nodes, 0.5 s, from a floor of zero.) Where `order`
/// is eq 7's (`eq7`: the node class's first order, with every class, zero values too), only
/// over the sets that are subsets of whole sets the verifier passes: a set of one synchronous
/// component is searched in its eq-8 order too, and is one here only when a module of another
/// (a breaker) joins it within eq 7's order (`breaker_joins`).
#[allow(clippy::too_many_arguments)]
fn price(
    order: &[Item],
    eq7: bool,
    y: &[f64],
    cpus: usize,
    link: f64,
    floor: f64,
    limit: u64,
    end: Instant,
    halt: &mut dyn FnMut() -> bool,
) -> Priced {
    let its: Vec<Item> = order.iter().filter(|i| y[i.class] > 1e-12).copied().collect();
    let full: Vec<usize> = order.iter().map(|i| i.class).collect();
    let mut s = Search {
        full: eq7.then_some(order),
        at_full: its.iter().map(|i| full.iter().position(|&c| c == i.class).expect("an item of the order")).collect(),
        counts: vec![0; order.len()],
        scratch: Vec::new(),
        cpus,
        its: &its,
        y,
        nodes: 0,
        limit,
        end,
        halt,
        link,
        best: floor.max(0.0),
        best_q: vec![0; its.len()],
        q: vec![0; its.len()],
        complete: true,
        open: f64::NEG_INFINITY,
        memo: Vec::new(),
        key: Vec::new(),
        states: Vec::new(),
        most: Vec::new(),
        order: LogOrder::new(&its, y),
    };
    s.run(0, &vec![0.0; cpus], 0.0, 0.0, 0.0, Config::Empty);
    let mut p: Vec<(usize, u32)> = its.iter().zip(&s.best_q).filter(|e| *e.1 > 0).map(|(i, &q)| (i.class, q)).collect();
    p.sort_unstable();
    let ceiling = if s.complete { s.best } else { s.best.max(s.open) };
    Priced { value: s.best, pattern: p, complete: s.complete, ceiling }
}

/// What a pricing search (`price`) found.
#[derive(Clone, Debug, PartialEq)]
struct Priced {
    /// The best value found (at least the floor), and its pattern (none when nothing beat the
    /// floor).
    value: f64,
    pattern: Vec<(usize, u32)>,
    /// Whether the search was exhaustive.
    complete: bool,
    /// An upper bound on every set's value (and the floor): `value` when complete; cut short,
    /// the search's own pruning bounds over the subtrees it left (unseen realistic 100/32
    /// s156: an exhaustive pricing pass took 2.3-2.8 s, the whole of a case's 3 s, where the
    /// LP's bound was 23.5 against 13 nodes; a bound from the brief pass's ceilings needs
    /// no exhaustive pass there).
    ceiling: f64,
}

/// Whether `order`'s items with these counts send and receive within a node's `link`.
fn traffic_fits(order: &[Item], counts: &[u32], link: f64) -> bool {
    let (tx, rx) =
        order.iter().zip(counts).fold((0.0, 0.0), |(tx, rx), (it, &q)| (tx + q as f64 * it.tx, rx + q as f64 * it.rx));
    link_fits(tx, link) && link_fits(rx, link)
}

/// Whether `order`'s items with these counts fit a node of `cpus` CPUs (in that order).
fn fits(order: &[Item], counts: &[u32], cpus: usize, loads: &mut Vec<f64>) -> bool {
    loads.clear();
    loads.resize(cpus, 0.0);
    order.iter().zip(counts).all(|(it, &q)| (0..q).all(|_| place(loads, it)))
}

/// A good set by greedy choice (not necessarily the best): classes by decreasing value per
/// load, randomly perturbed after the first try, each with the most copies that still fit;
/// in eq 7's order (`eq7`, see `price_in`) only sets a breaker joins where they need one.
/// Never certifies (the third value is false).
fn greedy(
    order: &[Item],
    eq7: bool,
    y: &[f64],
    cpus: usize,
    link: f64,
    seed: &mut u64,
) -> (f64, Vec<(usize, u32)>, bool) {
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
                // (Sets a breaker joins are closed under subsets too.)
                if fits(order, &counts, cpus, &mut loads)
                    && traffic_fits(order, &counts, link)
                    && (!eq7 || breaker_joins(order, &mut counts, cpus, link, &mut loads))
                {
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

/// What a set's module classes say of its node's configuration (the allocation's order):
/// no class yet, classes of one synchronous component, none a predecessor (how many), or
/// anything else (configuration 1 ruled out, or undecided: a class whose members are in
/// several components).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Config {
    Empty,
    One(usize, u32),
    Other,
}

impl Config {
    fn with(self, it: &Item) -> Config {
        if it.pred || it.comp == usize::MAX {
            return Config::Other;
        }
        match self {
            Config::Empty => Config::One(it.comp, 1),
            Config::One(c, n) if c == it.comp => Config::One(c, n + 1),
            _ => Config::Other,
        }
    }
}

/// Whether a set (`counts` per item of `order`, eq 7's: every class of a node class), which
/// fits `order`, is a subset of some set the verifier passes: yes unless it is of one
/// synchronous component and two classes or more (a node holding it alone is in
/// configuration 1, ordered by eq 8, which `set_fits` and the pricing try on their own);
/// then only when one module of a breaker class (a predecessor, a class of another component
/// or of several) joins it within `order` (CPUs and links). Sizes are the items'.
fn breaker_joins(order: &[Item], counts: &mut [u32], cpus: usize, link: f64, loads: &mut Vec<f64>) -> bool {
    let cfg = order.iter().zip(counts.iter()).filter(|e| *e.1 > 0).fold(Config::Empty, |c, (it, _)| c.with(it));
    let Config::One(comp, n) = cfg else { return true };
    if n < 2 {
        return true;
    }
    for z in 0..order.len() {
        let it = &order[z];
        if counts[z] > 0 || it.size == 0 || !(it.pred || it.comp == usize::MAX || it.comp != comp) {
            continue;
        }
        counts[z] = 1;
        let ok = fits(order, counts, cpus, loads) && traffic_fits(order, counts, link);
        counts[z] = 0;
        if ok {
            return true;
        }
    }
    false
}

struct Search<'a> {
    /// Eq 7's order with every class (`price`'s `eq7`), where sets of one component need
    /// a breaker; each searched item's place in it; scratch counts and loads; the node's CPUs.
    full: Option<&'a [Item]>,
    at_full: Vec<usize>,
    counts: Vec<u32>,
    scratch: Vec<f64>,
    cpus: usize,
    its: &'a [Item],
    y: &'a [f64],
    nodes: u64,
    limit: u64,
    end: Instant,
    /// The caller's stop, checked with the clock (a pricing search can take seconds: a split
    /// given 2 s ran 3.7 s when only the rounds between searches checked it).
    halt: &'a mut dyn FnMut() -> bool,
    /// What a node sends, and receives, at most (`Item::tx`, `Item::rx`).
    link: f64,
    best: f64,
    best_q: Vec<u32>,
    q: Vec<u32>,
    complete: bool,
    /// Cut short (`complete` false): an upper bound on the value of every set left unsearched.
    open: f64,
    /// Per depth, the last `MEMO` nodes whose subtrees were searched whole (minus the value,
    /// traffic each way, loads in descending order; flat) and where the next one goes; the node's own.
    memo: Vec<(Vec<f64>, usize)>,
    key: Vec<Vec<f64>>,
    /// Per depth, its states (see `run`).
    states: Vec<Vec<f64>>,
    /// Per depth, `fit_alone`'s counts of the node there (each remaining class); `log_bound`'s
    /// constants.
    most: Vec<Vec<u32>>,
    order: LogOrder,
}

/// `log_bound`'s constants for one search's items (its values `y` are fixed): per item its
/// use a = −ln(1 − LD), and the items by value (descending) and by value per use (a use of
/// zero first, an infinite one last), ties by position. `log_bound` runs at every search
/// node; sorting there took about a tenth of a pricing-heavy run (unseen realistic 100/32
/// s233's profile).
struct LogOrder {
    a: Vec<f64>,
    by_value: Vec<usize>,
    by_ratio: Vec<usize>,
}

impl LogOrder {
    fn new(its: &[Item], y: &[f64]) -> LogOrder {
        let a: Vec<f64> = its.iter().map(|it| -(1.0 - it.ld.min(1.0)).ln()).collect();
        let mut by_value: Vec<usize> = (0..its.len()).collect();
        by_value.sort_by(|&p, &q| y[its[q].class].total_cmp(&y[its[p].class]));
        let ratio = |r: usize| {
            if a[r] <= 0.0 {
                f64::INFINITY
            } else if a[r].is_finite() {
                y[its[r].class] / a[r]
            } else {
                f64::NEG_INFINITY
            }
        };
        let mut by_ratio = by_value.clone();
        by_ratio.sort_by(|&p, &q| ratio(q).total_cmp(&ratio(p)));
        LogOrder { a, by_value, by_ratio }
    }
}

/// An upper bound on the value (Σ y per module) that the items of `its` from `from` on (at
/// most `most[r − from]` copies of item r) add to a node whose CPUs carry `loads`, from the
/// CPUs' free shares (`order`: `LogOrder::new(its, y)`). A module of load LD placed on a CPU
/// with free share f leaves f (1 − LD), so in logarithms it uses a = −ln(1 − LD) of the CPU's
/// ln f, and it needs f >= u first (`place`, with its tolerance). On each CPU every module but
/// the last leaves at least the last one's u, so those use at most ln f − ln u_min in all
/// (u_min: the least u of those items), and a CPU with f < u_min holds nothing: the value is
/// at most the best one copy per such CPU ("last" modules) plus the fractional knapsack of
/// every copy into Σ (ln f − ln u_min) by value per use.
fn log_bound(loads: &[f64], its: &[Item], y: &[f64], order: &LogOrder, from: usize, most: &[u32]) -> f64 {
    let tol = 1e-6;
    let Some(umin) = its[from..].iter().zip(most).filter(|e| *e.1 > 0).map(|e| e.0.u).min_by(f64::total_cmp) else {
        return 0.0;
    };
    let mut cap = 0.0;
    let mut alive = 0u32;
    let lu = umin.max(1e-300).ln();
    for &l in loads {
        let f = 1.0 - l;
        if f * (1.0 + tol) >= umin {
            alive += 1;
            cap += (f.ln() - lu).max(0.0) + tol;
        }
    }
    // The "last" modules: the best values, one per live CPU.
    let mut ub = 0.0;
    let mut left = alive;
    for &r in &order.by_value {
        if left == 0 {
            break;
        }
        if r < from || most[r - from] == 0 {
            continue;
        }
        let t = most[r - from].min(left);
        ub += y[its[r].class] * t as f64;
        left -= t;
    }
    // The rest by value per use (a use of zero first: those take no share).
    for &r in &order.by_ratio {
        if r < from || most[r - from] == 0 {
            continue;
        }
        let (v, a, q) = (y[its[r].class], order.a[r], most[r - from]);
        if a <= 0.0 {
            ub += v * q as f64;
            continue;
        }
        if !a.is_finite() || cap <= 0.0 {
            break;
        }
        let t = (cap / a).min(q as f64);
        ub += v * t;
        cap -= t * a;
    }
    ub
}

impl Search<'_> {
    /// An upper bound on the value of every set the search reaches from a node at depth `j`
    /// (classes `j..` still to decide) with these `loads` and value `val`: the bounds `run`
    /// prunes with.
    fn ceiling(&mut self, j: usize, loads: &[f64], val: f64) -> f64 {
        if j == self.its.len() {
            return val;
        }
        let ub = self.fit_alone(j, loads);
        val + ub.min(log_bound(loads, self.its, self.y, &self.order, j, &self.most[j]))
    }

    /// Each class from `j` on at most what fits on these loads alone (into `most[j]`), and the
    /// value of all of those. A node's loads are at least its parent's, CPU by CPU once sorted
    /// (copies only add load), and `most` only falls as loads grow: the parent's counts (at
    /// depth j − 1, set before any of its children run) cap these, so the count stops there
    /// (the same counts, with less simulation: a class none of which fit above fits none here).
    fn fit_alone(&mut self, j: usize, loads: &[f64]) -> f64 {
        let mut ub = 0.0;
        if self.most.len() <= j {
            self.most.resize_with(j + 1, Vec::new);
        }
        let (above, here) = self.most.split_at_mut(j);
        let here = &mut here[0];
        here.clear();
        for r in j..self.its.len() {
            let it = self.its[r];
            let cap = above.last().map_or(it.size, |m| m[r + 1 - j]);
            let q = if cap == 0 { 0 } else { most(loads, &Item { size: it.size.min(cap), ..it }) };
            here.push(q);
            ub += self.y[it.class] * q as f64;
        }
        ub
    }

    /// Whether the set of the search's counts (`q`, up to depth `j`), of configuration
    /// `cfg`, may be a pattern (`breaker_joins`).
    fn admits(&mut self, j: usize, cfg: Config) -> bool {
        let Some(full) = self.full else { return true };
        if !matches!(cfg, Config::One(_, n) if n >= 2) {
            return true;
        }
        self.counts.iter_mut().for_each(|c| *c = 0);
        for r in 0..j {
            self.counts[self.at_full[r]] = self.q[r];
        }
        breaker_joins(full, &mut self.counts, self.cpus, self.link, &mut self.scratch)
    }

    fn run(&mut self, j: usize, loads: &[f64], val: f64, tx: f64, rx: f64, cfg: Config) {
        self.nodes += 1;
        if self.nodes > self.limit || (self.nodes.is_multiple_of(256) && (Instant::now() >= self.end || (self.halt)()))
        {
            // Cut short: this node's subtree is left unsearched.
            self.complete = false;
            let top = self.ceiling(j, loads, val);
            self.open = self.open.max(top);
            return;
        }
        if val > self.best && self.admits(j, cfg) {
            self.best = val;
            self.best_q.clone_from(&self.q);
        }
        if j == self.its.len() {
            return;
        }
        // Each remaining class at most what fits on these loads alone, and (`log_bound`) all
        // of them within what the CPUs' free shares allow.
        let ub = self.fit_alone(j, loads);
        if val + ub <= self.best + 1e-9 {
            return;
        }
        if val + log_bound(loads, self.its, self.y, &self.order, j, &self.most[j]) <= self.best + 1e-9 {
            return;
        }
        let it = self.its[j];
        let c = loads.len();
        // Dominance: a node at this depth whose sorted loads, traffic and lost value are no
        // more than those of one whose subtree was searched whole (`memo`) reaches nothing
        // better (each completion that fits here fits there: the allocation's monotonicity,
        // see the module's documentation).
        // Where sets of one component need a breaker (`full`), only among nodes whose sets
        // need none: every completion of theirs that fits is a pattern.
        let w = c + 3;
        let memo = self.full.is_none() || cfg == Config::Other;
        if self.memo.len() <= j {
            self.memo.resize_with(j + 1, || (Vec::new(), 0));
            self.key.resize_with(j + 1, Vec::new);
        }
        let mut key = std::mem::take(&mut self.key[j]);
        key.clear();
        // The lost value and traffic, then the loads largest first: most remembered nodes
        // fail the check at its first values (the scan took a tenth of s233's run with the
        // loads smallest first, many of them zero in both). Element comparisons over 40
        // random pricing problems of 10-16 classes on 8-16 CPUs: 310 million with the loads
        // smallest first then the value, 299 million with the loads largest first then the
        // value, 211 million so.
        key.extend([-val, tx, rx]);
        // (`place` keeps loads ascending, from the root's zeros: reversed, they are in order.)
        key.extend(loads.iter().rev());
        if !key[3..].is_sorted_by(|a, b| a >= b) {
            key[3..].sort_by(|a, b| b.total_cmp(a));
        }
        if memo && self.memo[j].0.chunks_exact(w).any(|e| dominated(e, &key)) {
            self.key[j] = key;
            return;
        }
        // The states after 0, 1, 2, ... copies, in this depth's buffer (taken out while the
        // deeper calls run: no allocation per search node).
        if self.states.len() <= j {
            self.states.resize_with(j + 1, Vec::new);
        }
        let mut states = std::mem::take(&mut self.states[j]);
        let n = copies_into(loads, &it, &mut states);
        // Each child's classes after this one fit at most as many copies as here (its loads
        // are at least these), and it holds q copies of this class where `ub` counts
        // `most[j][0]` (n − 1, as `place` puts them): once that bound is no better than the
        // best, neither is any child with fewer copies (each would be pruned on entry).
        let rest = ub - self.y[it.class] * self.most[j][0] as f64;
        for q in (0..n).rev() {
            if val + rest + q as f64 * self.y[it.class] <= self.best + 1e-9 {
                break;
            }
            // Traffic only grows with more copies: a count over the links is skipped.
            let (qt, qr) = (tx + q as f64 * it.tx, rx + q as f64 * it.rx);
            if !link_fits(qt, self.link) || !link_fits(qr, self.link) {
                continue;
            }
            self.q[j] = q as u32;
            let next = if q > 0 { cfg.with(&it) } else { cfg };
            self.run(j + 1, &states[q * c..(q + 1) * c], val + q as f64 * self.y[it.class], qt, qr, next);
            if !self.complete {
                // The fewer copies not yet tried are left unsearched too.
                for q2 in (0..q).rev() {
                    let (t2, r2) = (tx + q2 as f64 * it.tx, rx + q2 as f64 * it.rx);
                    if link_fits(t2, self.link) && link_fits(r2, self.link) {
                        let top =
                            self.ceiling(j + 1, &states[q2 * c..(q2 + 1) * c], val + q2 as f64 * self.y[it.class]);
                        self.open = self.open.max(top);
                    }
                }
                break;
            }
        }
        self.states[j] = states;
        self.q[j] = 0;
        if self.complete && memo {
            let (m, next) = &mut self.memo[j];
            if m.len() < MEMO * w {
                m.extend_from_slice(&key);
            } else {
                m[*next * w..(*next + 1) * w].copy_from_slice(&key);
                *next = (*next + 1) % MEMO;
            }
        }
        self.key[j] = key;
    }
}

/// Whether every value of `e` is at most the same one of `key` (as long as `e`). Four at
/// a time without a branch between them: most remembered nodes fail within the first few
/// values, and the scan took about a fifth of a pricing-heavy run (unseen realistic 100/32
/// s853's cluster bound) one value at a time.
fn dominated(e: &[f64], key: &[f64]) -> bool {
    let mut a = e.chunks_exact(4);
    let mut b = key.chunks_exact(4);
    for (x, y) in (&mut a).zip(&mut b) {
        if !((x[0] <= y[0]) & (x[1] <= y[1]) & (x[2] <= y[2]) & (x[3] <= y[3])) {
            return false;
        }
    }
    a.remainder().iter().zip(b.remainder()).all(|(x, y)| x <= y)
}

/// What `pack` decided about the nodes of a cluster.
#[derive(Clone, Debug, PartialEq)]
pub enum Packing {
    /// No assignment of the modules to the nodes passes the simulation on every node, so no
    /// sound mapping uses only these nodes.
    Refuted,
    /// One assignment that passes: per module (in `Analysis::modules` order) its node. Only
    /// the allocation is simulated (each node's whole set in the verifier's order,
    /// `set_fits_exact`), and each node's forced traffic (`set_traffic`) checked: routes and
    /// requirements are not.
    Found(Vec<crate::model::NodeId>),
    /// The budget ended first, or the instance is out of scope (see `bound`).
    Unknown,
}

/// Search nodes of the packing search's first run (the next ones: this times the Luby sequence).
pub(super) const PACK_FIRST: u64 = 2_000;

/// The integer side of the pattern bound: whether the modules can be assigned to the nodes of
/// `cluster` so that every node's set passes the simulation of `bound` (a pattern; whole, as
/// the verifier orders it: `set_fits_exact`, checked as soon as the classes left can no
/// longer change the node's configuration, `Pack::future`), decided by an exhaustive search. Module classes are placed one at a time, most constrained first
/// (fewest nodes, then most load), each class's modules distributed over the nodes that may
/// hold it, most on the first node first. Pruning: a node's set that fails fails with any
/// more modules (subsets of patterns are patterns); every class not yet placed must still
/// fit, each node taken alone; nodes of one class holding the same set so far are
/// interchangeable, so their counts of the next class do not increase along them.
/// With `duals` (the pattern LP ran and left the case open), branch and price over every
/// exact set (`exact`) gets the first half of `budget` where the sets can all be listed: it
/// refutes what this search cannot (unseen realistic 100/32 s312's last 17-node case, where
/// the LP's optimum is the node count) and finds packings too.
#[allow(clippy::too_many_arguments)]
pub(super) fn pack(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    duals: Option<&Duals>,
    first_run: u64,
    seed: u64,
    max_nodes: u64,
    budget: Duration,
    stop: &mut impl TerminationCondition,
) -> Packing {
    let Some(st) = setup(app, cluster, an, stop) else {
        return Packing::Unknown;
    };
    let slots = slots_of(&st);
    let end = Instant::now() + budget;
    if duals.is_some() {
        // Half of the time: the exhaustive search below finds packings the branch and
        // price may not reach (its LPs at the node count give it no direction there).
        match exact::solve(&st, slots.len() as i64, duals, Instant::now() + budget / 2, stop) {
            exact::Exact::Found(cnt) => return Packing::Found(at_of(&st, &slots, &cnt, an)),
            exact::Exact::Refuted => return Packing::Refuted,
            exact::Exact::Unknown => {}
        }
    }
    match pack_counts(&st, duals, first_run, seed, max_nodes, end, stop) {
        Some(Some(cnt)) => Packing::Found(at_of(&st, &slots, &cnt, an)),
        Some(None) => Packing::Refuted,
        None => Packing::Unknown,
    }
}

/// Per node (slot), its class and node, the node classes in turn.
fn slots_of(st: &Setup) -> Vec<(usize, crate::model::NodeId)> {
    let mut slots: Vec<(usize, crate::model::NodeId)> = Vec::new();
    for (k, ns) in st.node_classes.iter().enumerate() {
        slots.extend(ns.iter().map(|&n| (k, n)));
    }
    slots
}

/// `pack`'s search on a setup: Some(Some(per slot, its count of each class)) when found,
/// Some(None) when refuted, None when stopped first.
fn pack_counts(
    st: &Setup,
    duals: Option<&Duals>,
    first_run: u64,
    seed: u64,
    max_nodes: u64,
    end: Instant,
    stop: &mut impl TerminationCondition,
) -> Option<Option<Vec<Vec<u32>>>> {
    let nc = st.sizes.len();
    let slots = slots_of(st);
    let mut allowed: Vec<Vec<usize>> = vec![Vec::new(); nc];
    let mut weight = vec![0.0f64; nc];
    for (s, &(k, _)) in slots.iter().enumerate() {
        for it in &st.items[k] {
            allowed[it.class].push(s);
            weight[it.class] = weight[it.class].max(it.size as f64 * (it.ld + it.u));
        }
    }
    // The classes of latency disjunctions first (each is checked once its classes are
    // placed), then the fewest allowed slots first, the heaviest first.
    let mut late = vec![true; nc];
    for &(a, b) in st.together.iter().flatten() {
        late[a] = false;
        late[b] = false;
    }
    let mut order: Vec<usize> = (0..nc).collect();
    order.sort_by(|&a, &b| {
        late[a]
            .cmp(&late[b])
            .then(allowed[a].len().cmp(&allowed[b].len()))
            .then(weight[b].total_cmp(&weight[a]))
            .then(a.cmp(&b))
    });
    // The reduced-cost argument needs the same classes (the setup is deterministic).
    let duals = duals.filter(|d| d.y.len() == nc && d.mu.len() == st.node_classes.len());
    let slack = duals.map(|d| {
        let dual: f64 = d.y.iter().zip(&st.sizes).map(|(y, s)| y * s).sum::<f64>()
            - d.mu.iter().zip(&st.caps).map(|(m, c)| m * c).sum::<f64>()
            - d.hub;
        slots.len() as f64 - dual
    });
    let mut p = Pack {
        st,
        duals: duals.zip(slack),
        memo: std::collections::HashMap::new(),
        slots: slots.iter().map(|e| e.0).collect(),
        cnt: vec![vec![0; nc]; slots.len()],
        order: order.clone(),
        allowed: allowed.clone(),
        nodes: 0,
        max_nodes,
        run: 0,
        limit: u64::MAX,
        cut: false,
        end,
        stopped: false,
        loads: Vec::new(),
        future: Vec::new(),
        depth: 0,
        due: Vec::new(),
    };
    // Restarts (limits by the Luby sequence, after the first run each with the classes of
    // equal reach in a perturbed order and the node classes in a shuffled order): packings
    // are found sooner than by one long search, and sooner with many short runs than with
    // geometrically growing ones (unseen realistic 100/32 s26's 13-node shape, its one open
    // case: found in 50k-570k search nodes over 7 seeds; 1.2M growing by 1.5x). Any run that
    // ends within its limit has searched everything, so it refutes whatever its order.
    let mut seed = (0x2545_f491_4f6c_dd1du64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)).max(1);
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut limit = first_run.max(1);
    let mut found = false;
    for r in 0.. {
        if r > 0 {
            let noise: Vec<f64> = (0..nc).map(|_| 0.5 + rnd()).collect();
            p.order.sort_by(|&a, &b| {
                late[a]
                    .cmp(&late[b])
                    .then(allowed[a].len().cmp(&allowed[b].len()))
                    .then((weight[b] * noise[b]).total_cmp(&(weight[a] * noise[a])))
            });
            for (c, sl) in p.allowed.iter_mut().enumerate() {
                let rank: Vec<f64> = (0..st.node_classes.len()).map(|_| rnd()).collect();
                sl.clone_from(&allowed[c]);
                sl.sort_by(|&a, &b| rank[p.slots[a]].total_cmp(&rank[p.slots[b]]).then(a.cmp(&b)));
            }
        }
        p.future = futures(st, &p.slots, &p.order);
        p.due = dues(st, &p.order);
        p.run = 0;
        p.limit = limit;
        p.cut = false;
        for c in &mut p.cnt {
            c.iter_mut().for_each(|x| *x = 0);
        }
        found = p.class(0, stop);
        if found || p.stopped || !p.cut {
            break;
        }
        limit = first_run.max(1).saturating_mul(luby(r + 2));
    }
    if found {
        Some(Some(p.cnt))
    } else if p.stopped {
        None
    } else {
        Some(None)
    }
}

/// `pack_local`'s large neighbourhoods: steps without a new fewest before them, tries each
/// time, nodes freed (at least, at most), and the exhaustive search's first run and nodes.
const LNS_STALL: u64 = 500;
const LNS_TRIES: usize = 40;
const LNS_SLOTS: (usize, usize) = (3, 5);
const LNS_FIRST: u64 = 500;
const LNS_NODES: u64 = 20_000;
/// Returns to `pack_local`'s best state before it starts afresh.
const RETURNS: u32 = 2;

/// `st` on the slots `chosen` (ascending) alone, with `counts` of each module class to place:
/// sub-slot i is `chosen[i]` (slots are in class order, and so are the sub-setup's).
fn restrict(st: &Setup, slots: &[(usize, crate::model::NodeId)], chosen: &[usize], counts: &[u32]) -> Setup {
    let mut node_classes = vec![Vec::new(); st.node_classes.len()];
    for &s in chosen {
        node_classes[slots[s].0].push(slots[s].1);
    }
    let resize = |it: &Item| Item { size: counts[it.class], ..*it };
    let items = st.items.iter().map(|its| its.iter().map(resize).collect()).collect();
    let orders = st.orders.iter().map(|os| os.iter().map(|o| o.iter().map(resize).collect()).collect()).collect();
    let caps = node_classes.iter().map(|ns| ns.len() as f64).collect();
    let sizes = counts.iter().map(|&c| c as f64).collect();
    Setup {
        node_classes,
        members: Vec::new(),
        items,
        orders,
        eq7: st.eq7.clone(),
        cpus: st.cpus.clone(),
        caps,
        sizes,
        link: st.link.clone(),
        hubs: Vec::new(),
        together: Vec::new(),
        open: st.open.clone(),
        ranged: Vec::new(),
    }
}

/// A packing (as `pack` defines it) by local search, for finding one where `pack`'s tree
/// search takes long. Modules not yet placed wait in a pool; each step takes one at random
/// and puts it on the fullest of its allowed nodes where it fits, else on the node where it
/// displaces the least weight (a random node one step in ten): one module whose leaving makes
/// the set fit, the lightest such, else the lightest until it fits. The displaced go back to
/// the pool and may not return to that node for 5-14 steps (tabu); every 64 steps each class
/// waiting in the pool weighs one more, so what waits long displaces others and is displaced
/// last. Every node's set fits after every step (subsets of patterns are patterns, so
/// displacing always ends). After `LNS_STALL` steps without a new fewest waiting: up to
/// `LNS_TRIES` large neighbourhoods, each the best state's pool and the modules of 3-5 nodes
/// (one allowed node per waiting class, the rest at random) given to `pack`'s exhaustive
/// search on those nodes alone (`restrict`, at most `LNS_NODES` search nodes); after 20,000
/// steps without one, back to the best state, and after `RETURNS` such returns a fresh start.
/// Found or Unknown (it proves nothing). At most `max_steps` steps (deterministic for a
/// seed), cut by the budget. Measured on unseen realistic 100/32 s37's four open 16-node
/// cases (10 seeds each): with the neighbourhoods 14 of 40 runs of 100,000 steps found a
/// packing, without them 1 of 40; with the fresh starts 20 of 40 runs of 300,000 steps
/// (3.4 s each).
pub fn pack_local(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    seed: u64,
    max_steps: u64,
    budget: Duration,
    stop: &mut impl TerminationCondition,
) -> Packing {
    let end = Instant::now() + budget;
    let Some(st) = setup(app, cluster, an, stop) else {
        return Packing::Unknown;
    };
    let nc = st.sizes.len();
    let slots = slots_of(&st);
    let ks: Vec<usize> = slots.iter().map(|e| e.0).collect();
    let mut allowed: Vec<Vec<usize>> = vec![Vec::new(); nc];
    for (s, &(k, _)) in slots.iter().enumerate() {
        for it in &st.items[k] {
            allowed[it.class].push(s);
        }
    }
    if allowed.iter().zip(&st.sizes).any(|(a, &z)| a.is_empty() && z > 0.0) {
        return Packing::Unknown;
    }
    let mut seed = (0x5851_f42d_4c95_7f2du64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)).max(1);
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed >> 11
    };
    let mut cnt = vec![vec![0u32; nc]; slots.len()];
    let mut pool: Vec<u32> = st.sizes.iter().map(|&z| z as u32).collect();
    let mut left: u32 = pool.iter().sum();
    let mut tabu = vec![vec![0u64; slots.len()]; nc];
    let mut loads = Vec::new();
    let mut best = (left, cnt.clone(), pool.clone());
    let mut since = 0u64;
    let mut trial: Vec<u32> = Vec::new();
    let mut w = vec![1u64; nc];
    let mut returns = 0;
    for step in 1u64.. {
        if left == 0 {
            // Whole sets pass as the verifier orders them (`set_fits_exact`), or give up a
            // module of a class at random.
            let mut whole = true;
            for s in 0..slots.len() {
                if !set_fits_exact(&st, slots[s].0, &cnt[s], &mut loads) {
                    whole = false;
                    let on: Vec<usize> = (0..nc).filter(|&c| cnt[s][c] > 0).collect();
                    let d = on[rnd() as usize % on.len()];
                    cnt[s][d] -= 1;
                    pool[d] += 1;
                    left += 1;
                    tabu[d][s] = step + 5 + rnd() % 10;
                }
            }
            let mut directed = false;
            if whole {
                if rows_hold(&st, &ks, &cnt) {
                    return Packing::Found(at_of(&st, &slots, &cnt, an));
                }
                // A latency disjunction broken: a module of one class of one of its pairs
                // joins a node of the other's, whose modules of other classes leave at
                // random until its set fits (they may not come back for a while).
                if let Some(d) = st.together.iter().find(|d| !together_holds(d, &cnt)) {
                    let (a, b) = d[rnd() as usize % d.len()];
                    let (x, y) = if rnd() % 2 == 0 { (a, b) } else { (b, a) };
                    let to: Vec<usize> = allowed[y].iter().copied().filter(|&t| cnt[t][x] > 0).collect();
                    let from: Vec<usize> = (0..slots.len()).filter(|&f| cnt[f][y] > 0).collect();
                    if !to.is_empty() && !from.is_empty() {
                        let (t, f) = (to[rnd() as usize % to.len()], from[rnd() as usize % from.len()]);
                        cnt[f][y] -= 1;
                        cnt[t][y] += 1;
                        while !set_fits(&st, slots[t].0, &cnt[t], &mut loads) {
                            let keep = |e: usize, q: u32| if e == x || e == y { q > 1 } else { q > 0 };
                            let on: Vec<usize> = (0..nc).filter(|&e| keep(e, cnt[t][e])).collect();
                            if on.is_empty() {
                                break;
                            }
                            let e = on[rnd() as usize % on.len()];
                            cnt[t][e] -= 1;
                            pool[e] += 1;
                            left += 1;
                            tabu[e][t] = step + 5 + rnd() % 10;
                        }
                        directed = true;
                    }
                }
            }
            if whole && !directed {
                // A hub row broken: one module of a random node back to the pool.
                let used: Vec<usize> = (0..slots.len()).filter(|&s| cnt[s].iter().any(|&q| q > 0)).collect();
                let s = used[rnd() as usize % used.len()];
                let on: Vec<usize> = (0..nc).filter(|&c| cnt[s][c] > 0).collect();
                let d = on[rnd() as usize % on.len()];
                cnt[s][d] -= 1;
                pool[d] += 1;
                left += 1;
                tabu[d][s] = step + 5 + rnd() % 10;
            }
        }
        if step > max_steps || (step.is_multiple_of(256) && (Instant::now() >= end || stop.should_stop())) {
            return Packing::Unknown;
        }
        if left == 0 {
            continue;
        }
        // The class: a random module of the pool (classes weighted by what waits).
        let mut r = rnd() % left as u64;
        let mut c = 0;
        while r >= pool[c] as u64 {
            r -= pool[c] as u64;
            c += 1;
        }
        // Where it fits as it is: the fullest such node.
        let mut pick: Option<(usize, u64)> = None;
        for &s in &allowed[c] {
            cnt[s][c] += 1;
            let ok = set_fits(&st, slots[s].0, &cnt[s], &mut loads);
            cnt[s][c] -= 1;
            if ok {
                let score = ((cnt[s].iter().sum::<u32>() as u64) << 20) | (rnd() & 0xf_ffff);
                if pick.is_none_or(|(_, b)| score > b) {
                    pick = Some((s, score));
                }
            }
        }
        if let Some((s, _)) = pick {
            cnt[s][c] += 1;
            pool[c] -= 1;
            left -= 1;
        } else {
            // Else where it displaces the fewest (each node's evictions drawn at random).
            let mut choice: Option<(usize, Vec<u32>, u64)> = None;
            let wild = rnd() % 10 == 0;
            for &s in &allowed[c] {
                if tabu[c][s] > step {
                    continue;
                }
                trial.clone_from(&cnt[s]);
                trial[c] += 1;
                let mut out = 0u64;
                while !set_fits(&st, slots[s].0, &trial, &mut loads) {
                    // One module of another class (of its own class when alone).
                    let others: u32 = (0..nc).filter(|&d| d != c).map(|d| trial[d]).sum();
                    // The lightest-weighted class there (ties and near ties at random).
                    let d = if others == 0 {
                        c
                    } else {
                        let mut pickd = (usize::MAX, u64::MAX);
                        let mut fixd = (usize::MAX, u64::MAX);
                        for d in 0..nc {
                            if d == c || trial[d] == 0 {
                                continue;
                            }
                            let key = w[d] * (8 + rnd() % 8);
                            if key < pickd.1 {
                                pickd = (d, key);
                            }
                            if key < fixd.1 {
                                trial[d] -= 1;
                                if set_fits(&st, slots[s].0, &trial, &mut loads) {
                                    fixd = (d, key);
                                }
                                trial[d] += 1;
                            }
                        }
                        if fixd.0 != usize::MAX {
                            fixd.0
                        } else {
                            pickd.0
                        }
                    };
                    trial[d] -= 1;
                    out += w[d];
                }
                let score = if wild { rnd() } else { (out << 20) | (rnd() & 0xf_ffff) };
                if choice.as_ref().is_none_or(|(_, _, b)| score < *b) {
                    choice = Some((s, trial.clone(), score));
                }
            }
            let Some((s, next, _)) = choice else {
                continue;
            };
            pool[c] -= 1;
            left -= 1;
            for d in 0..nc {
                let before = cnt[s][d] + u32::from(d == c);
                if next[d] < before {
                    let q = before - next[d];
                    pool[d] += q;
                    left += q;
                    tabu[d][s] = step + 5 + rnd() % 10;
                }
            }
            cnt[s] = next;
        }
        // Modules long in the pool weigh more: they displace lighter ones, and are displaced last.
        if step.is_multiple_of(64) {
            for d in 0..nc {
                if pool[d] > 0 {
                    w[d] += 1;
                }
            }
        }
        if left < best.0 {
            best = (left, cnt.clone(), pool.clone());
            since = 0;
        } else {
            since += 1;
            // Stalled: the best state's pool and a few nodes' modules packed anew on those
            // nodes by `pack`'s exhaustive search (a large neighbourhood, each search small).
            if since == LNS_STALL {
                for _ in 0..LNS_TRIES {
                    if Instant::now() >= end || stop.should_stop() {
                        return Packing::Unknown;
                    }
                    let (_, bcnt, bpool) = &best;
                    let want = (LNS_SLOTS.0 + rnd() as usize % (LNS_SLOTS.1 - LNS_SLOTS.0 + 1)).min(slots.len());
                    let mut chosen: Vec<usize> = Vec::new();
                    let mut waiting: Vec<usize> = (0..nc).filter(|&c| bpool[c] > 0).collect();
                    for i in (1..waiting.len()).rev() {
                        waiting.swap(i, rnd() as usize % (i + 1));
                    }
                    for c in waiting {
                        if !chosen.iter().any(|s| allowed[c].contains(s)) {
                            let free: Vec<usize> = allowed[c].iter().copied().filter(|s| !chosen.contains(s)).collect();
                            if let Some(&s) = free.get(rnd() as usize % free.len().max(1)) {
                                chosen.push(s);
                            }
                        }
                    }
                    while chosen.len() < want {
                        let s = rnd() as usize % slots.len();
                        if !chosen.contains(&s) {
                            chosen.push(s);
                        }
                    }
                    chosen.sort_unstable();
                    let mut counts = bpool.clone();
                    for &s in &chosen {
                        for (c, q) in counts.iter_mut().enumerate() {
                            *q += bcnt[s][c];
                        }
                    }
                    let sub = restrict(&st, &slots, &chosen, &counts);
                    if let Some(Some(sc)) = pack_counts(&sub, None, LNS_FIRST, rnd(), LNS_NODES, end, stop) {
                        let mut full = bcnt.clone();
                        for (i, &s) in chosen.iter().enumerate() {
                            full[s].clone_from(&sc[i]);
                        }
                        if (0..slots.len()).all(|s| set_fits_exact(&st, slots[s].0, &full[s], &mut loads))
                            && rows_hold(&st, &ks, &full)
                        {
                            return Packing::Found(at_of(&st, &slots, &full, an));
                        }
                    }
                }
            }
            // Long without a new fewest: back to the best state; after a few such returns,
            // a fresh start (independent runs found packings sooner than one long one).
            if since > 20_000 {
                since = 0;
                returns += 1;
                if returns > RETURNS {
                    returns = 0;
                    for c in &mut cnt {
                        c.iter_mut().for_each(|x| *x = 0);
                    }
                    pool = st.sizes.iter().map(|&z| z as u32).collect();
                    left = pool.iter().sum();
                    w.iter_mut().for_each(|x| *x = 1);
                    tabu.iter_mut().for_each(|t| t.iter_mut().for_each(|x| *x = 0));
                    best = (left, cnt.clone(), pool.clone());
                } else {
                    left = best.0;
                    cnt.clone_from(&best.1);
                    pool.clone_from(&best.2);
                }
            }
        }
    }
    Packing::Unknown
}

/// Rounds of column generation per step of `pack_dive`, at most.
const DIVE_ROUNDS: usize = 60;
/// Dives of `pack_dive`, at most (each at most one LP per node).
const DIVES: u64 = 12;
/// The exhaustive pricing search of one round of `pack_dive`, at most.
const DIVE_PRICE: Duration = Duration::from_millis(100);

/// A packing (as `pack` defines it) by diving on the pattern LP, a price-and-branch
/// heuristic: column generation for the covering LP of what is left, then the column with
/// the largest value (perturbed after the first dive) is taken whole: one node of its class,
/// its counts cut to what is left (a subset of a pattern in the same order is a pattern),
/// and again, until every module is placed, a node class runs out or the LP needs its
/// artificials (that dive fails; the next starts with every column found so far; at most
/// `DIVES` dives, and none after the first LP needs them). Where the
/// LP is nearly integral, as when its optimum is the shape's node count and a packing
/// exists, the dive follows it to one. Found or Unknown (it proves nothing). With `duals`
/// (the pattern bound's on the same instance), its columns start the first LP.
#[allow(clippy::too_many_arguments)]
pub fn pack_dive(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    duals: Option<&Duals>,
    seed: u64,
    budget: Duration,
    stop: &mut impl TerminationCondition,
) -> Packing {
    let end = Instant::now() + budget;
    let Some(st) = setup(app, cluster, an, stop) else {
        return Packing::Unknown;
    };
    let (nc, nk) = (st.sizes.len(), st.node_classes.len());
    let slots = slots_of(&st);
    let mut pool: BTreeSet<Pattern> = BTreeSet::new();
    for (k, its) in st.items.iter().enumerate() {
        for it in its {
            pool.insert((k, vec![(it.class, 1)]));
        }
    }
    // The bound's columns, when they are of this setup (it is deterministic).
    if let Some(d) = duals.filter(|d| d.y.len() == nc && d.mu.len() == nk) {
        pool.extend(d.cols.iter().filter(|(k, p)| *k < nk && p.iter().all(|e| e.0 < nc)).cloned());
    }
    let mut seed = (0x7a3c_9e1f_55d2_b461u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)).max(1);
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut gseed = rnd();
    let mut loads = Vec::new();
    for dive in 0..DIVES {
        if Instant::now() >= end || stop.should_stop() {
            break;
        }
        let mut caps: Vec<u32> = st.node_classes.iter().map(|ns| ns.len() as u32).collect();
        let mut sizes: Vec<u32> = st.sizes.iter().map(|&z| z as u32).collect();
        // Per node class, the sets its nodes take (counts per module class).
        let mut taken: Vec<Vec<Vec<u32>>> = vec![Vec::new(); nk];
        let placed = loop {
            if sizes.iter().all(|&z| z == 0) {
                break true;
            }
            let Some(lp) = residual_lp(&st, &mut pool, &caps, &sizes, end, stop, &mut gseed) else {
                // Not even the LP of the whole covers the modules: no dive can.
                if taken.iter().all(|t| t.is_empty()) {
                    return Packing::Unknown;
                }
                break false;
            };
            let mut pick: Option<(f64, &Pattern)> = None;
            for (p, x) in &lp {
                let noise = if dive == 0 { 0.0 } else { (rnd() >> 11) as f64 / (1u64 << 53) as f64 * 0.4 };
                let score = x + noise;
                if *x > 1e-3 && pick.is_none_or(|(b, _)| score > b) {
                    pick = Some((score, p));
                }
            }
            let Some((_, (k, p))) = pick else { break false };
            let mut set = vec![0u32; nc];
            for &(c, q) in p {
                set[c] = q.min(sizes[c]);
                sizes[c] -= set[c];
            }
            caps[*k] -= 1;
            taken[*k].push(set);
        };
        if !placed {
            continue;
        }
        let mut cnt = vec![vec![0u32; nc]; slots.len()];
        for (s, &(k, _)) in slots.iter().enumerate() {
            if let Some(set) = taken[k].pop() {
                cnt[s] = set;
            }
        }
        // Checked as `pack`'s are (the cut sets are patterns by monotonicity; whole, each
        // as the verifier orders it).
        let ks: Vec<usize> = slots.iter().map(|e| e.0).collect();
        if (0..slots.len()).all(|s| set_fits_exact(&st, slots[s].0, &cnt[s], &mut loads)) && rows_hold(&st, &ks, &cnt) {
            return Packing::Found(at_of(&st, &slots, &cnt, an));
        }
    }
    Packing::Unknown
}

/// `pack_dive`'s covering LP of what is left (`caps` nodes per node class, `sizes` modules
/// per class) by column generation from `pool`'s columns cut to what is left, new columns
/// joining `pool`: per column its value. None when stopped, or when the LP needs its
/// artificials (no covering with the columns found).
#[allow(clippy::too_many_arguments)]
fn residual_lp(
    st: &Setup,
    pool: &mut BTreeSet<Pattern>,
    caps: &[u32],
    sizes: &[u32],
    end: Instant,
    stop: &mut impl TerminationCondition,
    seed: &mut u64,
) -> Option<Vec<(Pattern, f64)>> {
    let nc = sizes.len();
    let mut seen: BTreeSet<Pattern> = BTreeSet::new();
    let mut cols: Vec<Pattern> = Vec::new();
    for (k, p) in pool.iter() {
        if caps[*k] == 0 {
            continue;
        }
        let q: Vec<(usize, u32)> = p.iter().map(|&(c, q)| (c, q.min(sizes[c]))).filter(|e| e.1 > 0).collect();
        if !q.is_empty() && seen.insert((*k, q.clone())) {
            cols.push((*k, q));
        }
    }
    let orders: Vec<Vec<Vec<Item>>> = st
        .orders
        .iter()
        .map(|os| os.iter().map(|o| o.iter().map(|it| Item { size: sizes[it.class], ..*it }).collect()).collect())
        .collect();
    let capsf: Vec<f64> = caps.iter().map(|&c| c as f64).collect();
    let sizesf: Vec<f64> = sizes.iter().map(|&z| z as f64).collect();
    let big = capsf.iter().sum::<f64>() + 1.0;
    let mut lp = Master::new(&capsf, &sizesf, &[], big);
    for round in 0..DIVE_ROUNDS {
        if stop.should_stop() || Instant::now() >= end {
            return None;
        }
        let (w, x) = lp.solve(&cols, end)?;
        let y: Vec<f64> = (0..nc).map(|c| w[c].max(0.0)).collect();
        let n = cols.len();
        // Greedy pricing, then (when it finds nothing) the exhaustive search.
        let mut added = 0;
        for exact in [false, true] {
            for k in 0..caps.len() {
                if caps[k] == 0 {
                    continue;
                }
                let mu = w[nc + k].max(0.0);
                for (o, order) in orders[k].iter().enumerate() {
                    let (value, pattern) = if exact {
                        let got = price(
                            order,
                            o < st.eq7[k] && !st.open[k],
                            &y,
                            st.cpus[k],
                            st.link[k],
                            mu + 1.0,
                            SEARCH_NODES,
                            end.min(Instant::now() + DIVE_PRICE),
                            &mut || stop.should_stop(),
                        );
                        (got.value, got.pattern)
                    } else {
                        let (value, pattern, _) =
                            greedy(order, o < st.eq7[k] && !st.open[k], &y, st.cpus[k], st.link[k], seed);
                        (value, pattern)
                    };
                    if value - mu - 1.0 > 1e-7 && !pattern.is_empty() {
                        let p = (k, pattern);
                        if seen.insert(p.clone()) {
                            pool.insert(p.clone());
                            cols.push(p);
                            added += 1;
                        }
                    }
                }
            }
            if added > 0 {
                break;
            }
        }
        if added == 0 || round + 1 == DIVE_ROUNDS {
            if x[n..n + nc].iter().any(|&a| a > 1e-4) {
                return None;
            }
            return Some(cols.into_iter().take(n).zip(x).collect());
        }
    }
    None
}

/// The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, ... (1-based).
fn luby(i: u64) -> u64 {
    let mut k = 1;
    while (1u64 << k) - 1 < i {
        k += 1;
    }
    if (1u64 << k) - 1 == i {
        1u64 << (k - 1)
    } else {
        luby(i - (1u64 << (k - 1)) + 1)
    }
}

/// Per module (in `Analysis::modules` order) its node, from per slot its count of each class.
fn at_of(
    st: &Setup,
    slots: &[(usize, crate::model::NodeId)],
    cnt: &[Vec<u32>],
    an: &Analysis,
) -> Vec<crate::model::NodeId> {
    let mut at: Vec<Option<crate::model::NodeId>> = vec![None; an.modules.len()];
    for (c, members) in st.members.iter().enumerate() {
        let mut m = members.iter();
        for (s, cnt) in cnt.iter().enumerate() {
            for _ in 0..cnt[c] {
                at[*m.next().expect("counts sum to the class size")] = Some(slots[s].1);
            }
        }
    }
    // Modules in no class (left out, `setup`): the first slot of their domain, else its first
    // node (a start for the walk, which places them again where they fit).
    at.into_iter()
        .enumerate()
        .map(|(mi, n)| {
            n.unwrap_or_else(|| {
                let d = &an.domain[an.modules[mi].index()];
                slots
                    .iter()
                    .map(|s| s.1)
                    .find(|n| d.contains(n))
                    .or(d.first().copied())
                    .unwrap_or(crate::model::NodeId(0))
            })
        })
        .collect()
}

struct Pack<'a> {
    st: &'a Setup,
    /// The pattern LP's multipliers and the slack they leave, N − (Σ_c y_c size_c − Σ_k μ_k
    /// |k|) over the N slots (see `lower`).
    duals: Option<(&'a Duals, f64)>,
    /// `rest_values` per (node class, classes still free as a bit set, set): a function of
    /// these alone, so it holds across restarts whatever their order.
    memo: std::collections::HashMap<(usize, Vec<u64>, Vec<u32>), f64>,
    /// Per node (slot), its node class.
    slots: Vec<usize>,
    /// Per slot, modules of each class on it.
    cnt: Vec<Vec<u32>>,
    /// Module classes in the order they are placed.
    order: Vec<usize>,
    /// Per module class, the slots that may hold it.
    allowed: Vec<Vec<usize>>,
    nodes: u64,
    max_nodes: u64,
    /// Search nodes of this run, and its limit (`cut` once passed).
    run: u64,
    limit: u64,
    cut: bool,
    end: Instant,
    stopped: bool,
    loads: Vec<f64>,
    /// Per position of `order` (and one past the end) and slot, what the classes from there
    /// on that the slot may take leave of its configuration (`Future`).
    future: Vec<Vec<Future>>,
    /// The position of `order` being placed.
    depth: usize,
    /// Per position of `order` (and one past the end), the latency disjunctions
    /// (`Setup::together`) whose classes are all placed from there on and not before.
    due: Vec<Vec<usize>>,
}

/// What the module classes still to place may do to a slot's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Future {
    /// The slot takes no more classes: its set is whole.
    Whole,
    /// It may take only non-predecessor classes of this synchronous component.
    Within(usize),
    /// Anything else.
    Open,
}

/// `Pack::future` for `order`.
/// `Pack::due` for `order`.
fn dues(st: &Setup, order: &[usize]) -> Vec<Vec<usize>> {
    let mut at = vec![0usize; st.sizes.len()];
    for (i, &c) in order.iter().enumerate() {
        at[c] = i;
    }
    let mut due = vec![Vec::new(); order.len() + 1];
    for (d, pairs) in st.together.iter().enumerate() {
        let last = pairs.iter().map(|&(a, b)| at[a].max(at[b])).max().unwrap_or(0);
        due[last + 1].push(d);
    }
    due
}

fn futures(st: &Setup, slots: &[usize], order: &[usize]) -> Vec<Vec<Future>> {
    let mut out = vec![vec![Future::Whole; slots.len()]; order.len() + 1];
    for i in (0..order.len()).rev() {
        for (s, &k) in slots.iter().enumerate() {
            let after = out[i + 1][s];
            out[i][s] = match st.items[k].iter().find(|it| it.class == order[i]) {
                None => after,
                Some(it) if it.pred || it.comp == usize::MAX => Future::Open,
                Some(it) => match after {
                    Future::Whole => Future::Within(it.comp),
                    Future::Within(c) if c == it.comp => after,
                    _ => Future::Open,
                },
            };
        }
    }
    out
}

/// Whether a node of class `k` holding `cnt` of each module class passes the simulation in
/// one of the class's orders (`loads`: scratch), and may be a subset of a whole set that
/// passes as the verifier orders it (`breaker_joins`: subsets of patterns stay patterns).
fn set_fits(st: &Setup, k: usize, cnt: &[u32], loads: &mut Vec<f64>) -> bool {
    match config1(st, k, cnt) {
        // Of one component: its eq-8 order, or eq 7's with a breaker (`breaker_joins`).
        Some((_, Some(j))) => {
            set_fits_in(st, k, cnt, j..j + 1, loads)
                || (0..st.eq7[k]).any(|o| {
                    let order = &st.orders[k][o];
                    let mut counts: Vec<u32> = order.iter().map(|it| cnt[it.class]).collect();
                    set_fits_in(st, k, cnt, o..o + 1, loads)
                        && breaker_joins(order, &mut counts, st.cpus[k], st.link[k], loads)
                })
        }
        _ => set_fits_in(st, k, cnt, 0..st.orders[k].len(), loads),
    }
}

/// Where a node of class `k` holding `cnt` is surely in configuration 1 (every module class
/// on it non-predecessor and of one synchronous component, `Item::comp`): that component, and
/// the order of the class's eq-8 orders that holds the set (None: its only class is in none,
/// so eq 7's order serves). A class whose members are in several components leaves the
/// configuration open.
fn config1(st: &Setup, k: usize, cnt: &[u32]) -> Option<(usize, Option<usize>)> {
    if st.open[k] {
        return None;
    }
    let mut comp = None;
    for it in &st.items[k] {
        if cnt[it.class] == 0 {
            continue;
        }
        if it.pred || it.comp == usize::MAX || comp.is_some_and(|c| c != it.comp) {
            return None;
        }
        comp = Some(it.comp);
    }
    let comp = comp?;
    let total: u32 = cnt.iter().sum();
    let j =
        (st.eq7[k]..st.orders[k].len()).find(|&j| st.orders[k][j].iter().map(|it| cnt[it.class]).sum::<u32>() == total);
    Some((comp, j))
}

/// Whether a node of class `k` holding exactly `cnt` (its whole set: what the node holds in
/// a packing) passes the simulation: in configuration 1 (`config1`) the verifier orders the
/// node by eq 8 alone, so only that order counts (`set_fits` also takes eq 7's there, since a
/// subset of a set that is not in configuration 1 may be: unseen realistic 100/32 s179's
/// packings put a monitor beside its component's simulations, first on its CPU in eq 7's
/// order, last in eq 8's, where it falls behind its FIFO input; 11 walks from them failed).
fn set_fits_exact(st: &Setup, k: usize, cnt: &[u32], loads: &mut Vec<f64>) -> bool {
    match config1(st, k, cnt) {
        Some((_, j)) => set_fits_in(st, k, cnt, j.map_or(0..st.eq7[k], |j| j..j + 1), loads),
        None => set_fits(st, k, cnt, loads),
    }
}

/// Whether a packing (per slot its node class `ks` and its counts `cnt`) keeps every hub row
/// and latency disjunction.
fn rows_hold(st: &Setup, ks: &[usize], cnt: &[Vec<u32>]) -> bool {
    st.hubs.iter().all(|h| {
        let n: u32 = ks.iter().zip(cnt).filter(|(&k, _)| h.on[k]).map(|(_, c)| c[h.class]).sum();
        n as f64 <= h.cap + 1e-9
    }) && st.together.iter().all(|d| together_holds(d, cnt))
}

/// `set_fits` in the class's orders `only` (indices into `Setup::orders`).
fn set_fits_in(st: &Setup, k: usize, cnt: &[u32], only: std::ops::Range<usize>, loads: &mut Vec<f64>) -> bool {
    let total: u32 = cnt.iter().sum();
    if total == 0 {
        return true;
    }
    let (tx, rx) = st.items[k].iter().fold((0.0, 0.0), |(tx, rx), it| {
        let q = cnt[it.class] as f64;
        (tx + q * it.tx, rx + q * it.rx)
    });
    if !link_fits(tx, st.link[k]) || !link_fits(rx, st.link[k]) {
        return false;
    }
    for (j, order) in st.orders[k].iter().enumerate() {
        if !only.contains(&j) || order.iter().map(|it| cnt[it.class]).sum::<u32>() != total {
            continue;
        }
        loads.clear();
        loads.resize(st.cpus[k], 0.0);
        if order.iter().all(|it| (0..cnt[it.class]).all(|_| place(loads, it))) {
            return true;
        }
    }
    false
}

impl Pack<'_> {
    /// Whether slot `s`'s set passes the simulation in one of its node class's orders; in
    /// eq 8's alone where it is in configuration 1 whatever the classes still to place add
    /// (`set_fits_exact`: then its whole set is too, and a subset of a pattern in the same
    /// order is one).
    fn fits(&mut self, s: usize) -> bool {
        let k = self.slots[s];
        match (config1(self.st, k, &self.cnt[s]), self.future[self.depth][s]) {
            (Some((_, j)), Future::Whole) => {
                set_fits_in(self.st, k, &self.cnt[s], j.map_or(0..self.st.eq7[k], |j| j..j + 1), &mut self.loads)
            }
            (Some((c, j)), Future::Within(d)) if c == d => {
                set_fits_in(self.st, k, &self.cnt[s], j.map_or(0..self.st.eq7[k], |j| j..j + 1), &mut self.loads)
            }
            _ => set_fits(self.st, k, &self.cnt[s], &mut self.loads),
        }
    }

    /// The most modules of class `c` slot `s` can take besides its set (at most `cap`).
    fn room(&mut self, s: usize, c: usize, cap: u32) -> u32 {
        let before = self.cnt[s][c];
        let mut q = 0;
        while q < cap {
            self.cnt[s][c] = before + q + 1;
            if !self.fits(s) {
                break;
            }
            q += 1;
        }
        self.cnt[s][c] = before;
        q
    }

    fn tick(&mut self, stop: &mut impl TerminationCondition) -> bool {
        self.nodes += 1;
        self.run += 1;
        // Each search node may simulate every slot for every class left (about a millisecond
        // at 100 modules), so the clock is read often.
        if self.nodes > self.max_nodes
            || (self.nodes.is_multiple_of(16) && (Instant::now() >= self.end || stop.should_stop()))
        {
            self.stopped = true;
        }
        self.cut |= self.run > self.limit;
        self.stopped || self.cut
    }

    /// Places the classes from position `i` of the order on; true when all are placed.
    fn class(&mut self, i: usize, stop: &mut impl TerminationCondition) -> bool {
        self.depth = i;
        if self.due[i].iter().any(|&d| !together_holds(&self.st.together[d], &self.cnt)) {
            return false;
        }
        if i == self.order.len() {
            // Every set is whole: each must pass as the verifier orders it, and the hub rows
            // hold.
            return (0..self.slots.len()).all(|s| self.fits(s)) && rows_hold(self.st, &self.slots, &self.cnt);
        }
        if self.tick(stop) {
            return false;
        }
        // Every class still to place must fit, each slot taken alone.
        for j in i..self.order.len() {
            let c = self.order[j];
            let size = self.st.sizes[c] as u32;
            let mut room = 0;
            for a in 0..self.allowed[c].len() {
                let s = self.allowed[c][a];
                room += self.room(s, c, size - room);
                if room >= size {
                    break;
                }
            }
            if room < size {
                return false;
            }
        }
        let c = self.order[i];
        let size = self.st.sizes[c] as u32;
        let sl = self.allowed[c].clone();
        let most: Vec<u32> = sl.iter().map(|&s| self.room(s, c, size)).collect();
        // The reduced-cost argument (`lower`), each slot with what it can still take.
        let (rest, sum) = if let Some((d, _)) = self.duals {
            let mut rest = self.rest_values(i);
            for (a, &s) in sl.iter().enumerate() {
                rest[s] += d.yk[self.slots[s]][c] * most[a] as f64;
            }
            let sum: f64 = (0..self.slots.len()).map(|s| self.lower(s, rest[s])).sum();
            if self.over(sum) {
                return false;
            }
            for (a, &s) in sl.iter().enumerate() {
                rest[s] -= d.yk[self.slots[s]][c] * most[a] as f64;
            }
            (rest, sum)
        } else {
            (Vec::new(), 0.0)
        };
        let mut suffix = vec![0u32; sl.len() + 1];
        for a in (0..sl.len()).rev() {
            suffix[a] = suffix[a + 1] + most[a];
        }
        let twin: Vec<bool> = (0..sl.len())
            .map(|a| a > 0 && self.slots[sl[a]] == self.slots[sl[a - 1]] && self.cnt[sl[a]] == self.cnt[sl[a - 1]])
            .collect();
        self.spread(i, &sl, &most, &suffix, &twin, &rest, sum, 0, size, u32::MAX, stop)
    }

    /// The reduced-cost argument. For any y and μ, summing the reduced cost 1 + μ_k(s) −
    /// Σ_c y_c a_sc over the N slots s of a complete packing (each module once, every slot a
    /// pattern, maybe empty) gives N − Σ_c y_c size_c + Σ_k μ_k |k|, the slack. Each slot's
    /// term is at least −under[k] (an exhaustive pricing search found no pattern lower), and
    /// at least 1 + μ_k − (an upper bound on the value the slot can reach): `lower` of it.
    /// A partial packing whose lower bounds sum past the slack has no completion. Where the
    /// LP's optimum is the number of slots the slack is about zero, so every slot must reach
    /// its full dual value.
    fn lower(&self, s: usize, value: f64) -> f64 {
        let (d, _) = self.duals.expect("duals");
        let k = self.slots[s];
        (1.0 + d.mu[k] - value).max(-d.under[k])
    }

    /// Per slot, the most value (Σ_c y_c a_c) it can reach with its modules so far and more of
    /// the classes `order[i + 1..]` (those after the one being placed), by an exhaustive
    /// search (`Extend`, remembered per node class and set); where that search stops at its
    /// node budget, its set's value plus y_c x the most of each such class it takes alone.
    fn rest_values(&mut self, i: usize) -> Vec<f64> {
        let (d, _) = self.duals.expect("duals");
        let mut out = Vec::with_capacity(self.slots.len());
        for s in 0..self.slots.len() {
            let k = self.slots[s];
            let y = &d.yk[k];
            let mut free = vec![false; self.st.sizes.len()];
            for &c in &self.order[i + 1..] {
                free[c] = y[c] > 0.0;
            }
            let mut free_bits = vec![0u64; free.len().div_ceil(64)];
            for (c, _) in free.iter().enumerate().filter(|e| *e.1) {
                free_bits[c / 64] |= 1 << (c % 64);
            }
            let key = (k, free_bits.clone(), self.cnt[s].clone());
            if let Some(&v) = self.memo.get(&key) {
                out.push(v);
                continue;
            }
            let mut best = f64::NEG_INFINITY;
            let mut exact = true;
            for order in &self.st.orders[k] {
                // The slot's classes must all be in this order.
                if order.iter().map(|it| self.cnt[s][it.class]).sum::<u32>() != self.cnt[s].iter().sum::<u32>() {
                    continue;
                }
                // Items neither on the slot nor free take no copies: left out.
                let its: Vec<Item> =
                    order.iter().filter(|it| free[it.class] || self.cnt[s][it.class] > 0).copied().collect();
                let mut e = Extend {
                    its: &its,
                    y,
                    cnt: &self.cnt[s],
                    free: &free,
                    best,
                    nodes: 0,
                    complete: true,
                    stack: vec![Vec::new(); its.len()],
                };
                e.run(0, &vec![0.0; self.st.cpus[k]], 0.0);
                exact &= e.complete;
                best = best.max(e.best);
            }
            if !exact {
                best = self.cnt[s].iter().zip(y).map(|(&q, y)| q as f64 * y).sum();
                for j in i + 1..self.order.len() {
                    let c = self.order[j];
                    if y[c] > 0.0 && self.st.items[k].iter().any(|it| it.class == c) {
                        best += y[c] * self.room(s, c, self.st.sizes[c] as u32) as f64;
                    }
                }
            }
            if self.memo.len() > 200_000 {
                self.memo.clear();
            }
            self.memo.insert(key, best);
            out.push(best);
        }
        out
    }

    fn over(&self, sum: f64) -> bool {
        self.duals.is_some_and(|(_, slack)| sum > slack + 1e-7 * (1.0 + slack.abs()))
    }

    /// Class `order[i]`: `rem` modules left for slots `sl[a..]`; `prev`: the count given to
    /// `sl[a - 1]`.
    #[allow(clippy::too_many_arguments)]
    fn spread(
        &mut self,
        i: usize,
        sl: &[usize],
        most: &[u32],
        suffix: &[u32],
        twin: &[bool],
        rest: &[f64],
        sum: f64,
        a: usize,
        rem: u32,
        prev: u32,
        stop: &mut impl TerminationCondition,
    ) -> bool {
        if rem == 0 {
            return self.class(i + 1, stop);
        }
        if a == sl.len() || rem > suffix[a] || self.tick(stop) {
            return false;
        }
        let c = self.order[i];
        let hi = rem.min(most[a]).min(if twin[a] { prev } else { u32::MAX });
        let lo = rem.saturating_sub(suffix[a + 1]);
        let s = sl[a];
        for q in (lo..=hi).rev() {
            // This slot's share of the reduced costs with q of class c, not most[a].
            let mut next = sum;
            if let Some((d, _)) = self.duals {
                let y = d.yk[self.slots[s]][c];
                next += self.lower(s, rest[s] + y * q as f64) - self.lower(s, rest[s] + y * most[a] as f64);
                if self.over(next) {
                    // Fewer would only raise it.
                    break;
                }
            }
            self.cnt[s][c] = q;
            if self.spread(i, sl, most, suffix, twin, rest, next, a + 1, rem - q, q, stop) {
                return true;
            }
            if self.stopped || self.cut {
                break;
            }
        }
        self.cnt[s][c] = 0;
        false
    }
}

/// Search nodes of one `Extend` search; beyond, the caller falls back to a looser bound.
const EXTEND_NODES: u64 = 100_000;

/// The most value a slot reaches in one order: `cnt`'s classes that are not `free` exactly as
/// many as `cnt` says, the `free` ones (positive y) any number; each class in the order's
/// place, the allocation simulated as in `bound`.
struct Extend<'a> {
    its: &'a [Item],
    y: &'a [f64],
    cnt: &'a [u32],
    free: &'a [bool],
    best: f64,
    nodes: u64,
    complete: bool,
    /// Per depth, its states (see `run`).
    stack: Vec<Vec<f64>>,
}

impl Extend<'_> {
    fn run(&mut self, j: usize, loads: &[f64], val: f64) {
        self.nodes += 1;
        if self.nodes > EXTEND_NODES {
            self.complete = false;
            return;
        }
        if j == self.its.len() {
            self.best = self.best.max(val);
            return;
        }
        // What is left: the forced classes' value, and the free ones, each at most what fits
        // on these loads alone.
        let mut ub = 0.0;
        for it in &self.its[j..] {
            ub += self.y[it.class] * if self.free[it.class] { most(loads, it) } else { self.cnt[it.class] } as f64;
        }
        if val + ub <= self.best {
            return;
        }
        let it = self.its[j];
        // This depth's states, in a buffer kept across calls (no allocation per search node).
        let mut buf = std::mem::take(&mut self.stack[j]);
        let c = loads.len();
        if !self.free[it.class] {
            buf.clear();
            buf.extend_from_slice(loads);
            if (0..self.cnt[it.class]).all(|_| place(&mut buf, &it)) {
                self.run(j + 1, &buf, val + self.cnt[it.class] as f64 * self.y[it.class]);
            }
        } else {
            let states = copies_into(loads, &it, &mut buf);
            for q in (0..states).rev() {
                self.run(j + 1, &buf[q * c..(q + 1) * c], val + q as f64 * self.y[it.class]);
                if !self.complete {
                    break;
                }
            }
        }
        self.stack[j] = buf;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An item of class `class` (declared as `class`): `size` copies of load `ld` at `u` of
    /// their pace, after a predecessor when `pred`; no keys, no traffic.
    fn item(class: usize, size: u32, ld: f64, u: f64, pred: bool) -> Item {
        Item { class, size, ld, u, pred, comp: 0, key7: 0.0, w8: 0.0, decl: class, tx: 0.0, rx: 0.0 }
    }

    #[test]
    fn luby_sequence() {
        // Luby, Sinclair and Zuckerman (1993): 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, 1.
        let first: Vec<u64> = (1..=16).map(luby).collect();
        assert_eq!(first, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, 1]);
    }

    /// Uniform draws in [0, 1) from a xorshift seeded with `seed`.
    pub(super) fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A pricing problem: a node's CPU loads, its items, the values y per module class.
    type Problem = (Vec<f64>, Vec<Item>, Vec<f64>);

    /// Random small pricing problems: loads left by a few random modules, then 1-4 classes of
    /// 1-3 copies each, on 1-4 CPUs.
    fn random_problems(n: usize) -> Vec<Problem> {
        let mut rnd = uniform(0x1234_5678_9abc_def1);
        let mut out = Vec::new();
        for _ in 0..n {
            let cpus = 1 + (rnd() * 4.0) as usize;
            let mut loads = vec![0.0; cpus];
            for _ in 0..(rnd() * 3.0) as usize {
                let it = item(0, 1, rnd(), 0.0, false);
                place(&mut loads, &it);
            }
            let classes = 1 + (rnd() * 4.0) as usize;
            let its: Vec<Item> = (0..classes)
                .map(|c| {
                    let size = 1 + (rnd() * 3.0) as u32;
                    // Some loads of exactly 1 (nothing may follow them) and some u of 1.
                    let ld = if rnd() < 0.2 { 1.0 } else { rnd() };
                    let u = if rnd() < 0.2 { 1.0 } else { rnd() };
                    item(c, size, ld, u, rnd() < 0.2)
                })
                .collect();
            let y: Vec<f64> = (0..classes).map(|_| 0.05 + rnd()).collect();
            out.push((loads, its, y));
        }
        out
    }

    /// The best value by brute force: every count of every class, placed in order from `loads`.
    fn brute_best(loads: &[f64], its: &[Item], y: &[f64]) -> f64 {
        brute_best_linked(loads, its, y, f64::INFINITY)
    }

    /// The best value of `its` on `loads` by brute force (every count of every class, in
    /// `its`' order), each item's traffic (`tx`, `rx`) summed within `link` as well.
    fn brute_best_linked(loads: &[f64], its: &[Item], y: &[f64], link: f64) -> f64 {
        let mut best = 0.0f64;
        let mut q = vec![0u32; its.len()];
        loop {
            let mut l = loads.to_vec();
            let tx: f64 = its.iter().zip(&q).map(|(it, &k)| it.tx * k as f64).sum();
            let rx: f64 = its.iter().zip(&q).map(|(it, &k)| it.rx * k as f64).sum();
            if tx <= link && rx <= link && its.iter().zip(&q).all(|(it, &k)| (0..k).all(|_| place(&mut l, it))) {
                best = best.max(its.iter().zip(&q).map(|(it, &k)| y[it.class] * k as f64).sum());
            }
            let mut i = 0;
            while i < q.len() && q[i] == its[i].size {
                q[i] = 0;
                i += 1;
            }
            if i == q.len() {
                return best;
            }
            q[i] += 1;
        }
    }

    /// `eq7_orders` against brute force: key ranges with integer ends (so that ends and keys
    /// tie often), every assignment of keys on a grid of eighths (quarters with four classes)
    /// sorted as the verifier sorts (decreasing key, ties by declaration index). Every order
    /// brute force finds is listed (what makes the patterns a relaxation); with up to three
    /// classes, whose keys in one open cell the grid always separates, exactly those.
    #[test]
    fn eq7_orders_lists_every_order_the_ranges_allow() {
        let mut rnd = uniform(0x5eed_0e97);
        let mut several = 0;
        for case in 0..400 {
            let n = 1 + (rnd() * 4.0) as usize;
            let mut decls: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                decls.swap(i, (rnd() * (i + 1) as f64) as usize);
            }
            let rs: Vec<(usize, f64, f64, usize)> = (0..n)
                .map(|c| {
                    let a = (rnd() * 4.0).floor();
                    let b = if rnd() < 0.4 { a } else { (rnd() * 4.0).floor() };
                    (c, a.min(b), a.max(b), decls[c])
                })
                .collect();
            let step = if n == 4 { 0.25 } else { 0.125 };
            let grids: Vec<Vec<f64>> = rs
                .iter()
                .map(|r| {
                    let m = ((r.2 - r.1) / step).round() as usize;
                    (0..=m).map(|i| r.1 + i as f64 * step).collect()
                })
                .collect();
            let mut brute: BTreeSet<Vec<usize>> = BTreeSet::new();
            let mut pick = vec![0usize; n];
            loop {
                let mut seq: Vec<usize> = (0..n).collect();
                seq.sort_by(|&a, &b| grids[b][pick[b]].total_cmp(&grids[a][pick[a]]).then(rs[a].3.cmp(&rs[b].3)));
                brute.insert(seq);
                let mut i = 0;
                while i < n {
                    pick[i] += 1;
                    if pick[i] < grids[i].len() {
                        break;
                    }
                    pick[i] = 0;
                    i += 1;
                }
                if i == n {
                    break;
                }
            }
            let Some(got) = eq7_orders(&rs) else {
                assert!(brute.len() > MAX_EQ7, "case {case}: None with {} orders: {rs:?}", brute.len());
                continue;
            };
            let got: BTreeSet<Vec<usize>> = got.into_iter().collect();
            assert!(brute.is_subset(&got), "case {case}: {rs:?}\nbrute {brute:?}\ngot {got:?}");
            if n <= 3 {
                assert_eq!(brute, got, "case {case}: {rs:?}");
            }
            several += usize::from(got.len() > 1);
        }
        assert!(several > 50, "{several} cases with several orders");
    }

    #[test]
    fn price_keeps_within_the_links() {
        // Random traffic per copy (some none) and a node's links that take some of it: the
        // pricing search's best value is the brute force's, and its pattern's traffic fits.
        let far = Instant::now() + Duration::from_secs(60);
        let mut rnd = uniform(0x5eed_0011);
        let mut bound = 0;
        for (n, (loads, mut its, y)) in random_problems(1500).into_iter().enumerate() {
            if loads.iter().any(|&l| l > 0.0) {
                continue;
            }
            for it in &mut its {
                it.tx = if rnd() < 0.3 { 0.0 } else { rnd() };
                it.rx = if rnd() < 0.3 { 0.0 } else { rnd() };
            }
            let link = 0.2 + 2.0 * rnd();
            let best = brute_best_linked(&loads, &its, &y, link);
            bound += usize::from(best + 1e-9 < brute_best(&loads, &its, &y));
            let got = price(&its, false, &y, loads.len(), link, 0.0, SEARCH_NODES, far, &mut || false);
            let (v, p, complete) = (got.value, got.pattern, got.complete);
            assert!(complete);
            assert_eq!(got.ceiling, v);
            assert!((v - best).abs() < 1e-9, "problem {n}: {v} vs {best}");
            // Cut short after 1 to 40 search nodes: the ceiling still bounds the best.
            for limit in [1, 3, 10, 40] {
                let got = price(&its, false, &y, loads.len(), link, 0.0, limit, far, &mut || false);
                assert!(
                    got.value <= best + 1e-9 && got.ceiling >= best - 1e-9,
                    "problem {n}, {limit} nodes: {got:?} vs {best}"
                );
            }
            let counts: Vec<u32> = its.iter().map(|it| p.iter().find(|e| e.0 == it.class).map_or(0, |e| e.1)).collect();
            assert!(traffic_fits(&its, &counts, link));
            // The greedy pricing's set fits too.
            let (_, p, _) = greedy(&its, false, &y, loads.len(), link, &mut 7);
            let counts: Vec<u32> = its.iter().map(|it| p.iter().find(|e| e.0 == it.class).map_or(0, |e| e.1)).collect();
            assert!(traffic_fits(&its, &counts, link));
        }
        // The links bind on some of them.
        assert!(bound > 100, "{bound}");
    }

    /// `log_bound` as it was written before `LogOrder`: the pieces of the items given, sorted
    /// at each call.
    fn log_bound_sorting(loads: &[f64], its: &[Item], y: &[f64], most: &[u32]) -> f64 {
        let tol = 1e-6;
        let Some(umin) = its.iter().zip(most).filter(|e| *e.1 > 0).map(|e| e.0.u).min_by(f64::total_cmp) else {
            return 0.0;
        };
        let mut cap = 0.0;
        let mut alive = 0u32;
        for &l in loads {
            let f = 1.0 - l;
            if f * (1.0 + tol) >= umin {
                alive += 1;
                cap += (f.ln() - umin.max(1e-300).ln()).max(0.0) + tol;
            }
        }
        let mut pieces: Vec<(f64, f64, u32)> = its
            .iter()
            .zip(most)
            .filter(|e| *e.1 > 0)
            .map(|(it, &q)| (y[it.class], -(1.0 - it.ld.min(1.0)).ln(), q))
            .collect();
        pieces.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut ub = 0.0;
        let mut left = alive;
        for &(v, _, q) in pieces.iter() {
            let t = q.min(left);
            ub += v * t as f64;
            left -= t;
            if left == 0 {
                break;
            }
        }
        pieces.sort_by(|a, b| (b.0 * a.1).total_cmp(&(a.0 * b.1)));
        for &(v, a, q) in pieces.iter() {
            if a <= 0.0 {
                ub += v * q as f64;
                continue;
            }
            if !a.is_finite() || cap <= 0.0 {
                break;
            }
            let t = (cap / a).min(q as f64);
            ub += v * t;
            cap -= t * a;
        }
        ub
    }

    #[test]
    fn log_bound_is_at_least_the_best_value() {
        let mut tight = 0;
        for (loads, its, y) in random_problems(3000) {
            // Every suffix of the items, as the search asks (its orders made once, for all).
            let order = LogOrder::new(&its, &y);
            for from in 0..its.len() {
                let most: Vec<u32> = its[from..].iter().map(|it| most(&loads, it)).collect();
                let ub = log_bound(&loads, &its, &y, &order, from, &most);
                let best = brute_best(&loads, &its[from..], &y);
                assert!(ub + 1e-9 >= best, "{loads:?} {its:?} {y:?} from {from}: bound {ub} below {best}");
                // The same bound as sorting the suffix's pieces at each call (the former code).
                let sorted = log_bound_sorting(&loads, &its[from..], &y, &most);
                assert!((ub - sorted).abs() <= 1e-9 * (1.0 + sorted.abs()), "from {from}: {ub} vs {sorted}");
                let alone: f64 = most.iter().zip(&its[from..]).map(|(&q, it)| y[it.class] * q as f64).sum();
                tight += usize::from(from == 0 && ub < alone - 1e-9);
            }
        }
        // It prunes: below the classes-alone bound on some of them.
        assert!(tight > 0);
    }

    #[test]
    fn price_finds_the_best_value_above_its_floor() {
        let far = Instant::now() + Duration::from_secs(60);
        let mut briefs = 0;
        for (n, (loads, its, y)) in random_problems(1500).into_iter().enumerate() {
            if loads.iter().any(|&l| l > 0.0) {
                continue;
            }
            let best = brute_best(&loads, &its, &y);
            // A floor below the best, and one above it.
            for floor in [0.0, best * 0.5, best + 0.25] {
                let got = price(&its, false, &y, loads.len(), f64::INFINITY, floor, SEARCH_NODES, far, &mut || false);
                let (v, p, complete) = (got.value, got.pattern, got.complete);
                assert!(complete);
                assert_eq!(got.ceiling, v);
                assert!((v - best.max(floor)).abs() < 1e-9, "problem {n}, floor {floor}: {v} vs {best}");
                // The pattern is worth its value (none when nothing beats the floor).
                let worth: f64 = p.iter().map(|&(c, k)| y[c] * k as f64).sum();
                if best > floor + 1e-9 {
                    assert!((worth - best).abs() < 1e-9);
                    let counts: Vec<u32> =
                        its.iter().map(|it| p.iter().find(|e| e.0 == it.class).map_or(0, |e| e.1)).collect();
                    assert!(fits(&its, &counts, loads.len(), &mut Vec::new()));
                } else {
                    assert!(p.is_empty());
                }
                // A brief search (`QUICK_NODES` in `bound`; 10 search nodes here): never
                // above the best, and what it returns is worth its value and fits.
                let got = price(&its, false, &y, loads.len(), f64::INFINITY, floor, 10, far, &mut || false);
                let (v, p, complete) = (got.value, got.pattern, got.complete);
                assert!(v <= best.max(floor) + 1e-9, "problem {n}: brief {v} above {best}");
                // Its ceiling bounds the best, whatever the search left (`bound` certifies
                // with it).
                assert!(got.ceiling >= best.max(floor) - 1e-9, "problem {n}: ceiling {} below {best}", got.ceiling);
                briefs += usize::from(!complete);
                if complete {
                    assert!((v - best.max(floor)).abs() < 1e-9);
                }
                if v > floor + 1e-9 {
                    let worth: f64 = p.iter().map(|&(c, k)| y[c] * k as f64).sum();
                    assert!((worth - v).abs() < 1e-9);
                    let counts: Vec<u32> =
                        its.iter().map(|it| p.iter().find(|e| e.0 == it.class).map_or(0, |e| e.1)).collect();
                    assert!(fits(&its, &counts, loads.len(), &mut Vec::new()));
                }
            }
        }
        // The brief searches were cut short on many problems.
        assert!(briefs > 50, "{briefs}");
    }

    #[test]
    fn most_counts_what_the_simulation_places() {
        // Against `place` itself, copy after copy on the least-loaded CPU: random loads and
        // items (sizes 0-12, self-paced or not), and by hand.
        let mut rnd = uniform(0x1234_5678_9abc_def1);
        for _ in 0..20_000 {
            let cpus = 1 + (rnd() * 6.0) as usize;
            let mut loads: Vec<f64> = (0..cpus).map(|_| if rnd() < 0.3 { 0.0 } else { rnd() }).collect();
            loads.sort_by(f64::total_cmp);
            let size = (rnd() * 13.0) as u32;
            let ld = if rnd() < 0.1 { 0.0 } else { rnd() };
            let u = if rnd() < 0.2 { 1.0 } else { rnd() * 0.8 };
            let it = item(0, size, ld, u, rnd() < 0.2);
            let mut sim = loads.clone();
            let mut q = 0;
            while q < it.size && place(&mut sim, &it) {
                q += 1;
            }
            assert_eq!(most(&loads, &it), q, "{loads:?} {it:?}");
        }
        // By hand: on loads 0 and 0.5, copies of LD 0.5 needing a free share of 0.3 go
        // 0 -> 0.5 -> 0.75 on the first CPU (two) and 0.5 -> 0.75 on the second (one).
        let it = item(0, 9, 0.5, 0.3, false);
        assert_eq!(most(&[0.0, 0.5], &it), 3);
        assert_eq!(most(&[0.0, 0.5], &Item { size: 2, ..it }), 2);
    }

    #[test]
    fn dominated_is_the_elementwise_comparison() {
        // Against the comparison one value at a time, on lengths around the chunks of four,
        // values drawn from a few levels so that ties and near-misses are frequent.
        let mut rnd = uniform(0x0bad_cafe_f00d_1234);
        let mut yes = 0;
        for _ in 0..20_000 {
            let w = 1 + (rnd() * 14.0) as usize;
            let key: Vec<f64> = (0..w).map(|_| (rnd() * 3.0).floor()).collect();
            let e: Vec<f64> =
                key.iter().map(|&k| if rnd() < 0.9 { k - (rnd() * 1.2).floor() } else { k + 1.0 }).collect();
            let naive = e.iter().zip(&key).all(|(a, b)| a <= b);
            assert_eq!(dominated(&e, &key), naive, "{e:?} {key:?}");
            yes += usize::from(naive);
        }
        // Both answers occur.
        assert!(yes > 1_000 && yes < 19_000, "{yes}");
        // By hand: the fifth value decides.
        assert!(dominated(&[0.0, 1.0, 2.0, 3.0, 4.0], &[0.0, 1.0, 2.0, 3.0, 4.0]));
        assert!(!dominated(&[0.0, 1.0, 2.0, 3.0, 4.5], &[0.0, 1.0, 2.0, 3.0, 4.0]));
    }

    #[test]
    fn copies_into_matches_copies() {
        // Loads before, and items that fit 0, some or all of their copies.
        let loads = [0.0, 0.3, 0.6];
        let item = |size, ld, u, pred| item(0, size, ld, u, pred);
        let mut buf = Vec::new();
        for it in
            [item(5, 0.5, 0.4, false), item(2, 0.9, 0.2, false), item(4, 0.3, 1.0, true), item(0, 0.5, 0.5, false)]
        {
            let states = copies(&loads, &it);
            let n = copies_into(&loads, &it, &mut buf);
            assert_eq!(n, states.len(), "{it:?}");
            assert_eq!(buf, states.concat(), "{it:?}");
        }
        // By hand: a self-paced module (u = 1) needs an idle CPU, so exactly one copy fits.
        assert_eq!(copies_into(&loads, &item(4, 0.3, 1.0, true), &mut buf), 2);
    }

    /// A one-CPU node class with two classes of one synchronous component and a breaker of
    /// another, z (`z_u`: its u). By hand: eq 7's order (decreasing key) is b, a, z; eq 8's
    /// for the component (ascending T_exec x LD) is a, b. {a, b} in eq 7's: b takes the idle
    /// CPU (load 0.5), a needs 0.1 of the 0.5 left (load 0.75); in eq 8's: a (load 0.5), then
    /// b needs 0.6 of the 0.5 left: no. After b and a, 0.25 is left, so z joins with u 0.2
    /// and not with u 0.3.
    fn config_one_setup(z_u: f64, z_size: u32) -> Setup {
        let it = |class: usize, size: u32, ld: f64, u: f64, comp: usize, key7: f64, w8: f64| Item {
            class,
            size,
            ld,
            u,
            pred: false,
            comp,
            key7,
            w8,
            decl: class,
            tx: 0.0,
            rx: 0.0,
        };
        let a = it(0, 1, 0.5, 0.1, 0, 2.0, 0.05);
        let b = it(1, 1, 0.5, 0.6, 0, 3.0, 0.3);
        let z = it(2, z_size, 0.1, z_u, 1, 1.0, 0.1);
        Setup {
            node_classes: vec![vec![crate::model::NodeId(0)]],
            members: vec![vec![0], vec![1], (0..z_size as usize).map(|i| 2 + i).collect()],
            items: vec![vec![a, b, z]],
            orders: vec![vec![vec![b, a, z], vec![a, b]]],
            eq7: vec![1],
            cpus: vec![1],
            caps: vec![1.0],
            sizes: vec![1.0, 1.0, z_size as f64],
            link: vec![f64::INFINITY],
            hubs: Vec::new(),
            together: Vec::new(),
            open: vec![false; 1],
            ranged: Vec::new(),
        }
    }

    #[test]
    fn a_set_of_one_component_is_a_pattern_only_in_eq_8_order_or_with_a_breaker() {
        let mut loads = Vec::new();
        for (z_u, joins) in [(0.3, false), (0.2, true)] {
            let st = config_one_setup(z_u, 1);
            // Either order, as before: {a, b} passes in eq 7's.
            assert!(set_fits_in(&st, 0, &[1, 1, 0], 0..2, &mut loads));
            // Whole, the node is in configuration 1: eq 8's order alone, which fails.
            assert!(!set_fits_exact(&st, 0, &[1, 1, 0], &mut loads));
            // A subset of a whole set that passes only when z joins it.
            assert_eq!(set_fits(&st, 0, &[1, 1, 0], &mut loads), joins, "z u {z_u}");
            assert_eq!(set_fits_exact(&st, 0, &[1, 1, 1], &mut loads), joins, "z u {z_u}");
            // One class alone: no order to choose.
            assert!(set_fits_exact(&st, 0, &[0, 1, 0], &mut loads));
            // Pricing with z worth nothing: {a, b} (value 2) only with the breaker, else one.
            let y = [1.0, 1.0, 0.0];
            let far = Instant::now() + Duration::from_secs(60);
            let eq7 = &st.orders[0][0];
            let got = price(eq7, true, &y, 1, f64::INFINITY, 0.0, SEARCH_NODES, far, &mut || false);
            assert_eq!(got.value, if joins { 2.0 } else { 1.0 }, "z u {z_u}");
            assert!(got.complete);
            let (value, _, _) = greedy(eq7, true, &y, 1, f64::INFINITY, &mut 7);
            assert_eq!(value, if joins { 2.0 } else { 1.0 }, "z u {z_u}");
            // Without the breaker rule: 2 whatever z.
            let got = price(eq7, false, &y, 1, f64::INFINITY, 0.0, SEARCH_NODES, far, &mut || false);
            assert_eq!(got.value, 2.0);
        }
    }

    #[test]
    fn the_packing_search_passes_whole_sets_as_the_verifier_orders_them() {
        let far = Instant::now() + Duration::from_secs(60);
        let stop = &mut pumpkin_solver::core::termination::Indefinite;
        // a and b on the one node: a packing only in eq 7's order, so none.
        let st = config_one_setup(0.2, 0);
        assert_eq!(pack_counts(&st, None, PACK_FIRST, 0, 1_000, far, stop), Some(None));
        // With z on it too, the node is not in configuration 1: eq 7's order, which passes.
        let st = config_one_setup(0.2, 1);
        assert_eq!(pack_counts(&st, None, PACK_FIRST, 0, 1_000, far, stop), Some(Some(vec![vec![1, 1, 1]])));
        // And z too heavy to join: none.
        let st = config_one_setup(0.3, 1);
        assert_eq!(pack_counts(&st, None, PACK_FIRST, 0, 1_000, far, stop), Some(None));
    }
}
