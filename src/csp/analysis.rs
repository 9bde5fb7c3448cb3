//! Static numbers the CSP needs before any mapping exists: each object's domain of nodes, and
//! bounds on the synchronisation-only pace (T_it with T_cexec = T_exec, "T_it_sync") over every
//! mapping the domains allow, from which message rates, first-round T_I/O keys and loads follow.
//!
//! A bound pair with lo == hi means the value is the same in every mapping: constraints and
//! nogoods built on it are exact; otherwise they use the bound that keeps them a relaxation.

use super::presolve::Presolve;
use crate::model::{Application, Cluster, EdgeId, NodeId, ObjectId};
use crate::parse::PartialMapping;
use crate::perf::{self, StaticInput, SyncGraph, SyncInput};
use std::sync::Arc;

#[derive(Clone)]
pub struct Analysis {
    /// Module index -> object.
    pub modules: Vec<ObjectId>,
    /// Object index -> module index.
    pub module_of: Vec<Option<usize>>,
    /// Object index -> allowed nodes (ascending).
    pub domain: Vec<Vec<NodeId>>,
    /// Synchronous inputs of each module.
    pub inputs: Arc<Vec<Vec<StaticInput>>>,
    /// Module index -> synchronous cycle id. Members of lockstep MPI groups count as members of
    /// a cycle here (ids after the cycles'): no argument about a cycle's members is made for
    /// them; a member in no synchronous cycle (`lock_only`) gets the first-round arguments of
    /// any module outside cycles (`key7`, `keep_pace`, `solo`, `stack_params`).
    pub cycle_of: Vec<Option<usize>>,
    /// Per module: W_C, the common wait eq 8 assumes for its synchronous component C, when the
    /// module may share a configuration-1 node with another module of C (it is no predecessor
    /// and C has another); its allocation order there is eq 8's (see `key`).
    pub eq8_wait: Vec<Option<f64>>,
    /// Per module with synchronous inputs and outside cycles: the one predecessor r whose
    /// execution sets its pace in every sound mapping, with factors (c, f) such that its
    /// fastest input's pace is c x T_exec(r) and its wait (eq 7) f x T_exec(r); None when
    /// several predecessors or a cycle set it (`pace_roots`).
    pub pace_root: Vec<Option<(usize, f64, f64)>>,
    /// The allocation variant the verifier uses; the first-round arguments that hold only for
    /// the literal algorithm are dropped for the others.
    pub allocation: perf::Allocation,
    /// Bounds on T_it_sync per module, seconds.
    pub tit_lo: Vec<f64>,
    pub tit_hi: Vec<f64>,
    /// Per module, what the requirements allow its T_it in a sound mapping (`csp::presolve`:
    /// a minimum frequency, a path latency, spread to the synchronous ancestors), with the
    /// presolve's tolerance; infinite where none applies. `tit_hi` never exceeds it.
    pub(crate) tit_cap: Vec<f64>,
    /// Per module, the requirement (index into `Application::requirements`) `tit_cap` comes from.
    pub(crate) tit_cap_by: Vec<Option<usize>>,
    /// Bounds on each edge's message rate, per second.
    pub rate_lo: Vec<f64>,
    pub rate_hi: Vec<f64>,
    /// Reasons no mapping can exist, found before search.
    pub problems: Vec<String>,
    /// What the requirement-aware presolve removed from the domains (`csp::presolve`).
    pub presolve: Presolve,
    /// `texec_lo` per module over the final domains (set once they are: at the end of `new`
    /// and `scoped`), for the squeeze's move costs, which ask it per candidate node.
    texec_min: Vec<f64>,
    /// G_sync with no communication time (lower bounds) and with the slowest network's on every
    /// edge (upper bounds): the mapping-independent structure the bounds are computed on.
    pub(crate) sync_lo: Arc<SyncGraph>,
    pub(crate) sync_hi: Arc<SyncGraph>,
    /// (T_exec, LD) per (module, processor type) as `costs` returns them, and each node's
    /// processor type (an index): `costs` is called per candidate move in the walk and the
    /// greedy mapper, and a lookup by type name took a tenth of their time at 3,000 modules.
    costs: Arc<CostTable>,
}

/// See `Analysis::rate_pace`: F = 1 / max(floor, max over terms of K x T_exec(module)),
/// between 1 / hi and 1 / lo.
#[derive(Clone, Debug, PartialEq)]
pub struct RatePace {
    pub terms: Vec<(usize, f64)>,
    pub floor: f64,
    pub lo: f64,
    pub hi: f64,
}

/// See `Analysis::costs`.
#[derive(Clone, Debug, Default)]
struct CostTable {
    types: usize,
    type_of: Vec<u32>,
    cost: Vec<(f64, f64)>,
}

impl CostTable {
    fn new(app: &Application, cluster: &Cluster, modules: &[crate::model::ObjectId]) -> CostTable {
        let mut names: Vec<&str> = cluster.nodes.iter().map(|n| n.processor.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let type_of =
            cluster.nodes.iter().map(|n| names.binary_search(&n.processor.as_str()).expect("a type") as u32).collect();
        let mut cost = Vec::with_capacity(modules.len() * names.len());
        for &o in modules {
            let c = app.object(o).costs().expect("module");
            for t in &names {
                cost.push((c.texec.on(t).unwrap_or(f64::INFINITY), c.load.on(t).unwrap_or(1.0)));
            }
        }
        CostTable { types: names.len(), type_of, cost }
    }
}

/// Stacking parameters of a module on a node (`Analysis::stack_params`): its LD, a lower bound
/// on u = T_exec / fastest input pace, bounds on its first-round key T_I/O, and what the joint
/// test of `may_follow` needs: T_exec, LD (as a follower: the largest of a class) and the
/// key eq 8 gives it on a configuration-1 node (infinite where eq 8 cannot apply).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stack {
    pub ld: f64,
    pub u: f64,
    pub key_lo: f64,
    pub key_hi: f64,
    pub texec: f64,
    pub ld_hi: f64,
    pub key8: f64,
    /// Bounds on its eq-6/7 key alone (`key_lo`/`key_hi` also cover eq 8's), for nodes that
    /// cannot be in configuration 1: it is a predecessor (`pred`), or the other module is, or
    /// they are in different synchronous components (`comp`; usize::MAX: several).
    pub key7_lo: f64,
    pub key7_hi: f64,
    pub pred: bool,
    pub comp: usize,
    /// Bounds on T_exec x LD, which orders a configuration-1 node (eq 8, ascending).
    pub w8_lo: f64,
    pub w8_hi: f64,
    /// The paces (fastest input) it can have in a sound mapping, when one predecessor sets
    /// them (one per processor type of that predecessor's domain; `npaces` = 0: unknown), and
    /// its wait over that pace.
    pub paces: [f64; MAX_PACES],
    pub npaces: usize,
    pub wait_ratio: f64,
}

/// Most distinct paces a `Stack` lists.
pub const MAX_PACES: usize = 4;

impl Stack {
    /// The most permissive of two (for a class of modules): what either may do.
    pub fn loosest(self, o: Stack) -> Stack {
        Stack {
            ld: self.ld.min(o.ld),
            u: self.u.min(o.u),
            key_lo: self.key_lo.min(o.key_lo),
            key_hi: self.key_hi.max(o.key_hi),
            texec: self.texec.min(o.texec),
            ld_hi: self.ld_hi.max(o.ld_hi),
            key8: self.key8.min(o.key8),
            key7_lo: self.key7_lo.min(o.key7_lo),
            key7_hi: self.key7_hi.max(o.key7_hi),
            pred: self.pred && o.pred,
            w8_lo: self.w8_lo.min(o.w8_lo),
            w8_hi: self.w8_hi.max(o.w8_hi),
            comp: if self.comp == o.comp { self.comp } else { usize::MAX },
            ..if self.same_paces(&o) { self } else { Stack { npaces: 0, ..self } }
        }
    }

    fn same_paces(&self, o: &Stack) -> bool {
        self.npaces == o.npaces
            && self.paces[..self.npaces] == o.paces[..o.npaces]
            && self.wait_ratio == o.wait_ratio
            && self.texec == o.texec
    }
}

/// Whether a module `then` (B) may follow a module `first` (A) on a CPU
/// (`Analysis::stack_params`): A can come earlier in the node's order, and B keeps its pace
/// after it. Both at once: B keeps up only if its fastest input's pace p is at least
/// T_exec / (1 − LD_A) (its CPU's load is at least LD_A), and then its eq-7 key (the wait,
/// at least p, minus T_exec x LD) is at least T_exec x (1 / (1 − LD_A) − LD), which A's
/// largest key must reach unless eq 8 orders the node. Tolerances keep the test a relaxation.
pub fn may_follow(first: Stack, then: Stack) -> bool {
    follow_key(first, then, true).is_some()
}

/// The smallest first-round key B (`then`) can have while it follows A (`first`) on a CPU, or
/// None when it cannot (`may_follow`). B keeps up only at a pace p with T_exec <= p (1 − LD_A),
/// where its key is its eq-7 key at p (or eq 8's, where the node can be in configuration 1),
/// and only when A's largest key reaches it; the smallest over the paces that do both, never
/// below B's own lower bound; `eq8`: whether the node may be in configuration 1 (else eq 7's
/// key only). Used by the class bound: a module that does not come first on its CPU has
/// CPUs(n) modules before it in its node's order, all with keys at least its own.
pub fn follow_key(first: Stack, then: Stack, eq8: bool) -> Option<f64> {
    let eq8 = eq8
        && !first.pred
        && !then.pred
        && (first.comp == then.comp || first.comp == usize::MAX || then.comp == usize::MAX);
    let (hi_a, lo_b, key8_b) =
        if eq8 { (first.key_hi, then.key_lo, then.key8) } else { (first.key7_hi, then.key7_lo, f64::INFINITY) };
    let apart = first.ld + then.u <= 1.0 + 1e-6 && hi_a >= lo_b * (1.0 - 1e-9) - 1e-12;
    if !apart {
        return None;
    }
    if first.ld >= 1.0 {
        return Some(lo_b);
    }
    let reaches = |key7: f64| hi_a >= key7.min(key8_b) * (1.0 - 1e-6) - 1e-9;
    let key = if then.npaces > 0 {
        // The paces B can have: one of them must do both.
        then.paces[..then.npaces]
            .iter()
            .filter(|&&p| then.texec <= p * (1.0 - first.ld) * (1.0 + 1e-6) + 1e-12)
            .map(|&p| then.texec.max(p * then.wait_ratio) - then.texec * then.ld_hi)
            .filter(|&k7| reaches(k7))
            .map(|k7| k7.min(key8_b))
            .reduce(f64::min)?
    } else {
        let k7 = then.texec * (1.0 / (1.0 - first.ld) - then.ld_hi);
        if !reaches(k7) {
            return None;
        }
        k7.min(key8_b)
    };
    Some(key.max(lo_b))
}

impl Analysis {
    pub fn new(app: &Application, cluster: &Cluster, fix: Option<&PartialMapping>) -> Analysis {
        Analysis::routed(app, cluster, fix, &[])
    }

    /// The analysis of the mappings that route each edge of `routes` as given (a case of the
    /// bound's split on the routes of synchronous cycles, `bound::split_bound`): the edge's
    /// transfer time (eq 5's Vol / BW + L) is then that route's, not a range from nothing to
    /// the slowest network, and its ends may only use nodes where the route can be (both on
    /// nodes with the network; on one node: each end on nodes the other may use). Every
    /// mapping that routes them so and is sound keeps every node the domains lose here.
    pub fn routed(
        app: &Application,
        cluster: &Cluster,
        fix: Option<&PartialMapping>,
        routes: &[(EdgeId, crate::model::Route)],
    ) -> Analysis {
        let mut problems = Vec::new();
        let mut modules = Vec::new();
        let mut module_of = vec![None; app.graph.node_count()];
        for o in app.modules() {
            module_of[o.index()] = Some(modules.len());
            modules.push(o);
        }
        // Domains: processor types with costs, allowed_nodes, pins, the fixed part.
        let mut domain = Vec::with_capacity(app.graph.node_count());
        for o in app.graph.node_indices() {
            let obj = app.object(o);
            let g = app.group(obj.group);
            let d: Vec<NodeId> = (0..cluster.nodes.len() as u32)
                .map(NodeId)
                .filter(|&n| {
                    let node = cluster.node(n);
                    let typed = obj
                        .costs()
                        .is_none_or(|c| c.texec.on(&node.processor).is_some() && c.load.on(&node.processor).is_some());
                    let allowed = g.allowed_nodes.as_ref().is_none_or(|a| a.contains(&node.name));
                    let pinned = g.pins.as_ref().is_none_or(|p| p[obj.index] == node.name);
                    let fixed = fix.and_then(|f| f.placement[o.index()]).is_none_or(|p| p.node == n);
                    typed && allowed && pinned && fixed
                })
                .collect();
            if d.is_empty() {
                problems.push(format!(
                    "{} has no node it may run on (allowed nodes, pin, processor types with costs{})",
                    obj.name,
                    if fix.is_some() { ", fixed placement" } else { "" }
                ));
            }
            domain.push(d);
        }
        // A routed edge's ends: on nodes with its network, or on nodes the other end may use.
        for &(e, r) in routes {
            let (a, b) = app.graph.edge_endpoints(e).expect("edge");
            match r {
                crate::model::Route::Net(k) => {
                    for o in [a, b] {
                        domain[o.index()].retain(|&n| cluster.node(n).networks.contains(&k));
                    }
                }
                _ => {
                    let (da, db) = (domain[a.index()].clone(), domain[b.index()].clone());
                    domain[a.index()].retain(|n| db.contains(n));
                    domain[b.index()].retain(|n| da.contains(n));
                }
            }
            for o in [a, b] {
                if domain[o.index()].is_empty() && !problems.iter().any(|p: &String| p.starts_with(&app.object(o).name))
                {
                    problems.push(format!("{} has no node it may run on (the route of a case)", app.object(o).name));
                }
            }
        }
        let inputs = perf::static_inputs(app, &module_of, modules.len());
        let transfer = |e: EdgeId, k: &crate::model::Network| perf::transfer_time(app.graph[e].volume, k);
        // An edge's transfer time: its route's when routed, else from nothing (local) to the
        // slowest network's.
        let comm = |e: EdgeId, hi: bool| -> f64 {
            match routes.iter().find(|r| r.0 == e).map(|r| r.1) {
                Some(crate::model::Route::Net(k)) => transfer(e, cluster.network(k)),
                Some(_) => 0.0,
                None if hi => cluster.networks.iter().map(|k| transfer(e, k)).fold(0.0, f64::max),
                None => 0.0,
            }
        };
        let with_comm = |hi: bool| -> Vec<Vec<SyncInput>> {
            inputs
                .iter()
                .map(|ins| {
                    ins.iter()
                        .map(|x| SyncInput {
                            source: x.source,
                            ratio: x.ratio,
                            comm: x
                                .paths
                                .iter()
                                .map(|p| p.iter().map(|&e| comm(e, hi)).sum::<f64>())
                                .fold(0.0, f64::max),
                        })
                        .collect()
                })
                .collect()
        };
        let max_comm = |e: EdgeId| comm(e, true);
        // Lockstep groups: their exchange costs nothing (all local) to the slowest network.
        let locks = perf::lockstep_groups(app, &module_of);
        let with_locks = |hi: bool| -> Vec<perf::Lockstep> {
            locks
                .iter()
                .map(|(members, edges)| perf::Lockstep {
                    members: members.clone(),
                    exchange: if hi { edges.iter().map(|&e| max_comm(e)).fold(0.0, f64::max) } else { 0.0 },
                })
                .collect()
        };
        let sync_lo = Arc::new(SyncGraph::from_parts(with_comm(false), with_locks(false)));
        let sync_hi = Arc::new(SyncGraph::from_parts(with_comm(true), with_locks(true)));
        let cycles = sync_lo.cycles.len();
        let cycle_of: Vec<Option<usize>> =
            (0..modules.len()).map(|m| sync_lo.cycle_of[m].or(sync_lo.lock_of[m].map(|l| cycles + l))).collect();
        let costs = Arc::new(CostTable::new(app, cluster, &modules));
        let mut an = Analysis {
            costs,
            modules,
            module_of,
            domain,
            inputs: Arc::new(inputs),
            cycle_of,
            eq8_wait: Vec::new(),
            pace_root: Vec::new(),
            allocation: perf::Allocation::Literal,
            tit_lo: Vec::new(),
            tit_hi: Vec::new(),
            tit_cap: Vec::new(),
            tit_cap_by: Vec::new(),
            rate_lo: Vec::new(),
            rate_hi: Vec::new(),
            problems,
            presolve: Presolve::default(),
            texec_min: Vec::new(),
            sync_lo,
            sync_hi,
        };
        an.refresh_bounds(app, cluster);
        if an.problems.is_empty() {
            super::presolve::run(app, cluster, &mut an);
        }
        an.texec_min = (0..an.modules.len()).map(|mi| an.texec_lo(app, cluster, mi)).collect();
        an
    }

    /// The analysis of a neighbourhood of `base` (large-neighbourhood search): free objects keep
    /// the nodes of their domain that `nodes` allows, the others are fixed where `base` puts
    /// them. Bounds are recomputed, so paces set by fixed modules become exact.
    pub fn scoped(
        &self,
        app: &Application,
        cluster: &Cluster,
        base: &crate::model::Mapping,
        free: &[bool],
        nodes: &[bool],
    ) -> Analysis {
        let mut an = self.clone();
        for (o, d) in an.domain.iter_mut().enumerate() {
            if free[o] {
                d.retain(|n| nodes[n.ix()]);
            } else {
                d.clear();
                d.push(base.placement[o].node);
            }
        }
        an.presolve = Presolve::default();
        an.refresh_bounds(app, cluster);
        an.texec_min = (0..an.modules.len()).map(|mi| an.texec_lo(app, cluster, mi)).collect();
        an
    }

    /// Recomputes the pace and rate bounds from the current domains.
    pub(crate) fn refresh_bounds(&mut self, app: &Application, cluster: &Cluster) {
        let n = self.modules.len();
        let texec_on = |mi: usize, pick: fn(f64, f64) -> f64, init: f64| -> f64 {
            let c = app.object(self.modules[mi]).costs().expect("module");
            self.domain[self.modules[mi].index()]
                .iter()
                .filter_map(|&nd| c.texec.on(&cluster.node(nd).processor))
                .fold(init, pick)
        };
        let texec_lo: Vec<f64> = (0..n).map(|m| texec_on(m, f64::min, f64::INFINITY)).collect();
        let texec_hi: Vec<f64> = (0..n).map(|m| texec_on(m, f64::max, 0.0)).collect();
        let fin = |v: &[f64]| v.iter().map(|x| if x.is_finite() { *x } else { 0.0 }).collect::<Vec<_>>();
        self.tit_lo = self.sync_lo.iteration_times(&fin(&texec_lo));
        self.tit_hi = self.sync_hi.iteration_times(&fin(&texec_hi));
        self.eq8_wait = eq8_waits(&self.sync_lo, &self.inputs, &self.tit_lo);
        self.pace_root = pace_roots(&self.sync_lo, &self.inputs, &self.cycle_of);
        let hz = |tit: &[f64]| -> Vec<Option<f64>> {
            let mut v = vec![None; app.graph.node_count()];
            for (mi, &o) in self.modules.iter().enumerate() {
                v[o.index()] = Some(if tit[mi] > 0.0 { 1.0 / tit[mi] } else { 0.0 });
            }
            v
        };
        self.rate_lo = perf::edge_rates(app, &perf::object_frequencies(app, hz(&self.tit_hi)));
        self.rate_hi = perf::edge_rates(app, &perf::object_frequencies(app, hz(&self.tit_lo)));
        // The requirements' caps come after the rates: `rate_pace` reproduces `rate_lo` from
        // the processor speeds alone, which know nothing of them.
        for (t, &c) in self.tit_hi.iter_mut().zip(&self.tit_cap) {
            *t = t.min(c);
        }
    }

    /// The pace behind the messages object `o` sends, as a function of processor speeds (the
    /// traffic pass's levels): in every sound mapping F(o) = 1 / max(floor, max_a K_a x
    /// T_exec(a)). The terms (a, K_a) are the modules outside cycles whose execution sets it:
    /// the modules upstream of `o` through non-greedy filters (a k:1 filter multiplies the time
    /// between messages by k, and the slowest source wins, perf::network) and their synchronous
    /// ancestors (eq 3–4: T_it(m) = max(T_exec(m), ratio x T_it(input)), a max of products
    /// along every path); `floor` is what cycles and lockstep groups contribute at most
    /// (their T_it upper bound). None for a greedy filter upstream (its rate is pulled from
    /// downstream), for a module in a cycle, or if the form does not reproduce the static
    /// bounds (`rate_lo` of `o`'s edges), so a term never claims more than the model says.
    pub fn rate_pace(&self, app: &Application, cluster: &Cluster, o: ObjectId) -> Option<RatePace> {
        let n = self.modules.len();
        let mut k = vec![0.0f64; n];
        let mut stack = vec![(o, 1.0f64)];
        let mut steps = 0usize;
        while let Some((x, q)) = stack.pop() {
            steps += 1;
            if steps > 4 * app.graph.node_count() + 16 {
                return None; // many paths through filters: not worth enumerating
            }
            match (self.module_of[x.index()], app.object(x).filter()) {
                (Some(mi), _) => k[mi] = k[mi].max(q),
                (None, Some(crate::model::FilterKind::Greedy)) | (None, None) => return None,
                (None, Some(f)) => {
                    use petgraph::visit::EdgeRef;
                    let r = q * f.ratio() as f64;
                    for e in app.graph.edges_directed(x, petgraph::Direction::Incoming) {
                        stack.push((e.source(), r));
                    }
                }
            }
        }
        let mut floor = 0.0f64;
        for comp in self.sync_lo.order.iter().rev() {
            for &m in comp {
                if k[m] <= 0.0 {
                    continue;
                }
                if self.cycle_of[m].is_some() {
                    floor = floor.max(k[m] * self.tit_hi[m]);
                    k[m] = 0.0;
                    continue;
                }
                for x in &self.inputs[m] {
                    k[x.source] = k[x.source].max(k[m] * x.ratio);
                }
            }
        }
        let terms: Vec<(usize, f64)> = (0..n).filter(|&m| k[m] > 0.0).map(|m| (m, k[m])).collect();
        let texec_hi = |m: usize| {
            self.domain[self.modules[m].index()].iter().map(|&nd| self.costs(app, cluster, m, nd).0).fold(0.0, f64::max)
        };
        let hi = terms.iter().map(|&(m, q)| q * texec_hi(m)).fold(floor, f64::max);
        let lo = terms.iter().map(|&(m, q)| q * self.texec_lo(app, cluster, m)).fold(floor, f64::max);
        // The form must give the static bound on the rate of every edge o sends on.
        {
            use petgraph::visit::EdgeRef;
            for e in app.graph.edges_directed(o, petgraph::Direction::Outgoing) {
                let r = self.rate_lo[e.id().index()];
                if !(hi.is_finite() && hi > 0.0 && r > 0.0 && ((1.0 / hi) / r - 1.0).abs() <= 1e-9) {
                    return None;
                }
            }
        }
        (lo.is_finite() && lo > 0.0).then_some(RatePace { terms, floor, lo, hi })
    }

    /// The smallest T_exec of module `mi` over its domain (infinite if the domain is empty).
    pub fn texec_lo(&self, app: &Application, cluster: &Cluster, mi: usize) -> f64 {
        self.domain[self.modules[mi].index()]
            .iter()
            .map(|&n| self.costs(app, cluster, mi, n).0)
            .fold(f64::INFINITY, f64::min)
    }

    /// `texec_lo` as of the end of construction (the domains are not changed after it).
    pub fn texec_min(&self, mi: usize) -> f64 {
        self.texec_min[mi]
    }

    /// (T_exec, LD) of module `mi` on node `n`'s processor type.
    pub fn costs(&self, app: &Application, cluster: &Cluster, mi: usize, n: NodeId) -> (f64, f64) {
        let _ = (app, cluster);
        self.costs.cost[mi * self.costs.types + self.costs.type_of[n.ix()] as usize]
    }

    /// Bounds on the first-round order key of module `mi` on node `n`: T_I/O (eq 6–7, computed
    /// as `perf` does) on most nodes. On a configuration-1 node (only modules of one synchronous
    /// component, none a predecessor) `perf` orders by eq 8 instead, ascending T_exec x LD, which
    /// is the order of the key W_C − T_exec x LD for the component's constant W_C; whether a
    /// node is in configuration 1 depends on the mapping, so the bounds cover both keys. Two
    /// modules compared on one node are both keyed one way or both the other, so "lo(a) > hi(b)"
    /// still means "a before b in every mapping".
    pub fn key(&self, app: &Application, cluster: &Cluster, mi: usize, n: NodeId) -> (f64, f64) {
        let (lo, hi) = self.key7(app, cluster, mi, n);
        if self.sync_lo.is_predecessor(mi) {
            return (lo, hi);
        }
        let (texec, ld) = self.costs(app, cluster, mi, n);
        match self.eq8_wait[mi] {
            Some(w) => (lo.min(w - texec * ld), hi.max(w - texec * ld)),
            None => (lo, hi),
        }
    }

    /// Bounds on the eq-6/7 key of module `mi` on node `n` (see `key`). A lockstep group's
    /// member waits for its peers too: its wait is at least the group's T_it (perf/alloc.rs,
    /// `io_time`), between `tit_lo` and `tit_hi`; it is never a predecessor (eq 6), inputs
    /// or not.
    pub fn key7(&self, app: &Application, cluster: &Cluster, mi: usize, n: NodeId) -> (f64, f64) {
        let (texec, ld) = self.costs(app, cluster, mi, n);
        if self.sync_lo.is_predecessor(mi) {
            let k = texec * (1.0 - ld);
            return (k, k);
        }
        let locked = self.sync_lo.lock_of[mi].is_some();
        let wait = |tit: &[f64]| {
            let w = self.inputs[mi].iter().map(|x| x.ratio * tit[x.source]).fold(texec, f64::max);
            if locked {
                w.max(tit[mi])
            } else {
                w
            }
        };
        (wait(&self.tit_lo) - texec * ld, wait(&self.tit_hi) - texec * ld)
    }

    /// Whether module `mi` is a lockstep group's member in no synchronous cycle: a thread of
    /// its own in the allocation, as any module outside cycles, whose pace is its group's
    /// (`keep_pace`). `cycle_of` holds it (the arguments about cycles' single thread are not
    /// made for it), but the first-round arguments are.
    pub fn lock_only(&self, mi: usize) -> bool {
        self.sync_lo.cycle_of[mi].is_none() && self.sync_lo.lock_of[mi].is_some()
    }

    /// The pace module `mi` keeps up with in a sound mapping, at its slowest (first
    /// allocation round: T_cexec <= this): its fastest synchronous input's k x T_it, at most
    /// k x `tit_hi` of that input; for a lockstep group's member in no synchronous cycle, its
    /// group's T_it, at most `tit_hi` (a member whose T_cexec plus the exchange exceeds the
    /// group's T_it_sync slows the group: a `cpu-overload`). Infinite for a predecessor.
    pub fn keep_pace(&self, mi: usize) -> f64 {
        if self.lock_only(mi) {
            return self.tit_hi[mi];
        }
        self.inputs[mi].iter().map(|x| x.ratio * self.tit_hi[x.source]).fold(f64::INFINITY, f64::min)
    }

    /// A lower bound on the module's load over an iteration on node `n` (LD x T_exec / T_it_sync).
    /// Zero for members of synchronous cycles: they form one thread of control that adds the
    /// largest member's share to a CPU, not the sum (perf/alloc.rs), so summing their loads
    /// would not be implied by soundness. Not for a lockstep group's members (`cycle_of` holds
    /// them too): each is a thread of its own in the allocation, and in a sound mapping its
    /// T_cexec fits in the group's T_it (<= `tit_hi`), so ARCHITECTURE's argument for
    /// "Σ Load^c <= 100 %" holds for it as for any module. (Until the forty-sixth session they
    /// weighed 0: an independently generated 50/16 instance with two lockstep groups of
    /// 9 members at LD 0.91-0.97 had its class bound at 5 where 10 nodes were found.)
    pub fn load_lo(&self, app: &Application, cluster: &Cluster, mi: usize, n: NodeId) -> f64 {
        if self.sync_lo.cycle_of[mi].is_some() {
            return 0.0;
        }
        let (texec, ld) = self.costs(app, cluster, mi, n);
        if self.tit_hi[mi] > 0.0 && self.tit_hi[mi].is_finite() {
            ld * texec / self.tit_hi[mi]
        } else {
            0.0
        }
    }

    /// A lower bound on the total load of all modules, each on its lightest allowed node.
    pub fn total_load_lo(&self, app: &Application, cluster: &Cluster) -> f64 {
        (0..self.modules.len())
            .map(|mi| {
                self.domain[self.modules[mi].index()]
                    .iter()
                    .map(|&n| self.load_lo(app, cluster, mi, n))
                    .fold(f64::INFINITY, f64::min)
            })
            .filter(|x| x.is_finite())
            .sum()
    }

    /// Modules that pace themselves outside cycles: each takes an idle CPU of its own in the
    /// first allocation round (so a sound mapping's nodes have at least this many CPUs).
    pub fn self_paced(&self) -> usize {
        (0..self.modules.len()).filter(|&mi| self.inputs[mi].is_empty() && self.cycle_of[mi].is_none()).count()
    }

    /// Whether module `mi` must find an idle CPU on node `n` (a "solo" module): every non-idle
    /// CPU carries at least the LD of the thread that found it idle, so its free share is at most
    /// 1 − ld_min(n) (the smallest LD among modules that may run on n); a module outside cycles
    /// keeps its pace only with a free share >= u = T_exec / (fastest input pace) (first
    /// allocation round), so if u > 1 − ld_min(n) it needs a CPU of its own. Self-paced modules
    /// (u = 1) always do. So at most CPUs(n) solo modules share a node. Not valid when CPUs are
    /// pinned by hand (callers check).
    /// With the iteration-load allocation a CPU carries only its threads' loads over an
    /// iteration, which can be far below their LD: only self-paced modules are solo then.
    pub fn solo(&self, app: &Application, cluster: &Cluster, mi: usize, n: NodeId, ld_min: f64) -> bool {
        if self.cycle_of[mi].is_some() && !self.lock_only(mi) {
            return false;
        }
        if self.sync_lo.is_predecessor(mi) {
            return true;
        }
        if self.allocation != perf::Allocation::Literal {
            return false;
        }
        let (texec, _) = self.costs(app, cluster, mi, n);
        let pace = self.keep_pace(mi);
        pace.is_finite() && pace > 0.0 && texec / pace > 1.0 - ld_min + 1e-9
    }

    /// Per node: the smallest LD of the modules whose domain holds it (1 if none).
    pub fn ld_min(&self, app: &Application, cluster: &Cluster) -> Vec<f64> {
        let mut v = vec![1.0f64; cluster.nodes.len()];
        for (mi, &o) in self.modules.iter().enumerate() {
            for &n in &self.domain[o.index()] {
                v[n.ix()] = v[n.ix()].min(self.costs(app, cluster, mi, n).1);
            }
        }
        v
    }

    /// Per object, the other objects that share its node in every sound mapping (an edge no
    /// network can carry, or whose transfer a requirement's loop or path cannot afford;
    /// `presolve::must_share`), ascending; empty for most.
    pub fn must_share(&self, app: &Application, cluster: &Cluster) -> Vec<Vec<crate::model::ObjectId>> {
        super::presolve::must_share(app, cluster, self)
    }

    /// Modules that are solo on every node of their domain: each needs a CPU of its own
    /// wherever it goes, so any mapping's used nodes have at least this many CPUs.
    pub fn solo_everywhere(&self, app: &Application, cluster: &Cluster) -> usize {
        let ld_min = self.ld_min(app, cluster);
        (0..self.modules.len())
            .filter(|&mi| {
                let d = &self.domain[self.modules[mi].index()];
                !d.is_empty() && d.iter().all(|&n| self.solo(app, cluster, mi, n, ld_min[n.ix()]))
            })
            .count()
    }

    /// A lower bound on the CPUs any sound mapping uses (first allocation round): a CPU's load
    /// CPULD stays <= 1, a solo module adds its whole LD to an idle CPU of its own, and any
    /// other module outside cycles adds LD_c = free x LD >= u x LD (with the iteration-load
    /// allocation: its load over an iteration, at least `load_lo`). The spare share of the solo
    /// modules' CPUs (1 − LD each) may hold the others; what does not fit needs more CPUs.
    pub fn cpus_needed(&self, app: &Application, cluster: &Cluster) -> f64 {
        let ld_min = self.ld_min(app, cluster);
        let (mut solo, mut spare, mut rest) = (0usize, 0.0f64, 0.0f64);
        for (mi, &o) in self.modules.iter().enumerate() {
            let d = &self.domain[o.index()];
            if d.is_empty() || (self.cycle_of[mi].is_some() && !self.lock_only(mi)) {
                continue;
            }
            if d.iter().all(|&n| self.solo(app, cluster, mi, n, ld_min[n.ix()])) {
                solo += 1;
                spare += d.iter().map(|&n| 1.0 - self.costs(app, cluster, mi, n).1).fold(0.0, f64::max);
            } else {
                let pace = self.keep_pace(mi);
                rest += d
                    .iter()
                    .map(|&n| {
                        let (texec, ld) = self.costs(app, cluster, mi, n);
                        if self.solo(app, cluster, mi, n, ld_min[n.ix()]) {
                            ld
                        } else if self.allocation != perf::Allocation::Literal {
                            self.load_lo(app, cluster, mi, n)
                        } else if pace.is_finite() && pace > 0.0 {
                            (texec / pace).min(1.0) * ld
                        } else {
                            0.0
                        }
                    })
                    .fold(f64::INFINITY, f64::min);
            }
        }
        solo as f64 + (rest - spare).max(0.0)
    }

    /// Whether the verifier uses the published allocation (the keep-up and solo arguments hold).
    pub fn literal(&self) -> bool {
        self.allocation == perf::Allocation::Literal
    }

    /// Stacking parameters of module `mi` on node `n`'s processor type: its LD there and a lower
    /// bound on u = T_exec / (fastest input pace) (1 for a self-paced module; for a lockstep
    /// group's member, T_exec / its group's T_it, `keep_pace`); None for members of
    /// synchronous cycles. In the first allocation round a module B that follows a module A
    /// on the same CPU sees CPULD >= LD_A (the CPU's load never falls below what A added,
    /// c + (1 - c) x LD_A >= LD_A), so it keeps its pace only if u_B <= 1 - LD_A
    /// (`may_follow`): a self-paced module must be first on its CPU, and two heavy modules
    /// cannot share one. B follows A only if A comes first in the node's order (decreasing
    /// T_I/O, eq 6–7), which needs A's largest key to reach B's smallest. Not valid when CPUs
    /// are pinned by hand (callers check), nor with the iteration-load allocation (None).
    pub fn stack_params(&self, app: &Application, cluster: &Cluster, mi: usize, n: NodeId) -> Option<Stack> {
        if (self.cycle_of[mi].is_some() && !self.lock_only(mi)) || !self.literal() {
            return None;
        }
        let (texec, ld) = self.costs(app, cluster, mi, n);
        let (key_lo, key_hi) = self.key(app, cluster, mi, n);
        let (key7_lo, key7_hi) = self.key7(app, cluster, mi, n);
        let key8 = self.eq8_wait[mi].map_or(f64::INFINITY, |w| w - texec * ld);
        let (pred, comp) = (self.sync_lo.is_predecessor(mi), self.sync_lo.component[mi]);
        let (mut paces, mut npaces, mut wait_ratio) = ([0.0; MAX_PACES], 0, 1.0);
        if let Some((r, c, f)) = self.pace_root[mi] {
            // The root's T_exec on each processor type of its domain.
            for &nd in &self.domain[self.modules[r].index()] {
                let p = c * self.costs(app, cluster, r, nd).0;
                if !p.is_finite() || paces[..npaces].contains(&p) {
                    continue;
                }
                if npaces == MAX_PACES {
                    npaces = 0;
                    break;
                }
                paces[npaces] = p;
                npaces += 1;
            }
            paces[..npaces].sort_by(f64::total_cmp);
            wait_ratio = f / c;
        }
        let stack = Stack {
            ld,
            u: 1.0,
            key_lo,
            key_hi,
            texec,
            ld_hi: ld,
            key8,
            key7_lo,
            key7_hi,
            pred,
            comp,
            w8_lo: texec * ld,
            w8_hi: texec * ld,
            paces,
            npaces,
            wait_ratio,
        };
        if pred {
            return Some(stack);
        }
        let pace = self.keep_pace(mi);
        let u = if pace.is_finite() && pace > 0.0 { (texec / pace).min(1.0) } else { 0.0 };
        Some(Stack { u, ..stack })
    }

    pub fn constant_pace(&self, mi: usize) -> bool {
        self.tit_lo[mi] == self.tit_hi[mi]
    }

    pub fn constant_rate(&self, e: EdgeId) -> bool {
        self.rate_lo[e.index()] == self.rate_hi[e.index()]
    }
}

/// The predecessor that sets each module's pace, with its factors (`Analysis::pace_root`). In
/// a sound mapping a predecessor is not slowed (T_it = T_exec) and every other module outside
/// cycles keeps up with each input (T_cexec <= k x T_it(input)), so by eq 4 its T_it is
/// max_i k_i T_it(i): when all of a module's inputs lead to one predecessor r, T_it = F x
/// T_exec(r), with F the largest product of ratios over its inputs, and its fastest input's
/// pace is c x T_exec(r), c the smallest.
fn pace_roots(
    sg: &SyncGraph,
    inputs: &[Vec<StaticInput>],
    cycle_of: &[Option<usize>],
) -> Vec<Option<(usize, f64, f64)>> {
    let n = inputs.len();
    let mut out: Vec<Option<(usize, f64, f64)>> = vec![None; n];
    for comp in &sg.order {
        let &[m] = comp.as_slice() else { continue };
        if cycle_of[m].is_some() || inputs[m].is_empty() {
            continue;
        }
        let mut root = None;
        let (mut c, mut f) = (f64::INFINITY, 0.0f64);
        let mut ok = true;
        for x in &inputs[m] {
            let (r, fx) = if inputs[x.source].is_empty() && cycle_of[x.source].is_none() {
                (x.source, 1.0)
            } else if let Some((r, _, fx)) = out[x.source] {
                (r, fx)
            } else {
                ok = false;
                break;
            };
            if root.is_some_and(|q| q != r) {
                ok = false;
                break;
            }
            root = Some(r);
            c = c.min(x.ratio * fx);
            f = f.max(x.ratio * fx);
        }
        if ok {
            out[m] = root.map(|r| (r, c, f));
        }
    }
    out
}

/// W_C per module (see `Analysis::eq8_wait`): for the modules that are no predecessor in a
/// synchronous component with at least two of them, the largest input pace (lower bound) among
/// them; any constant per component keeps `Analysis::key` sound, this one makes the two keys
/// coincide where the component keeps one pace.
fn eq8_waits(sg: &SyncGraph, inputs: &[Vec<StaticInput>], tit_lo: &[f64]) -> Vec<Option<f64>> {
    let n = inputs.len();
    let eligible = |m: usize| !sg.is_predecessor(m);
    let comps = sg.component.iter().copied().max().map(|c| c + 1).unwrap_or(0);
    let mut count = vec![0usize; comps];
    let mut w = vec![0.0f64; comps];
    for m in (0..n).filter(|&m| eligible(m)) {
        let c = sg.component[m];
        count[c] += 1;
        w[c] = inputs[m].iter().map(|x| x.ratio * tit_lo[x.source]).fold(w[c], f64::max);
    }
    (0..n).map(|m| (eligible(m) && count[sg.component[m]] > 1).then(|| w[sg.component[m]])).collect()
}
