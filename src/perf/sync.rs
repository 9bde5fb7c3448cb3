//! G_sync (perf-model paper, Section IV.B.1): synchronous inputs IM_s(m), synchronous cycles,
//! and T_it from T_cexec by eq 3, 4 and 5.
//!
//! A module's synchronous inputs are found by walking FIFO edges backwards through filters:
//! a greedy connection or a greedy filter ends the walk (the module does not wait for it); a
//! k:1 gather multiplies the time between messages by k. Cycles are the strongly connected
//! components of the module-level graph; their T_it is the longest elementary cycle of eq 5
//! (one message travels round the cycle, members run one after another), or the external
//! inputs' pace if that is slower.

use super::comm_time;
use crate::model::{Application, Cluster, EdgeId, EdgeRole, FilterKind, Mapping, Sync};
use petgraph::graph::DiGraph;
use petgraph::Direction;

/// One synchronous input of a module.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncInput {
    /// Index into the prediction's modules.
    pub source: usize,
    /// Messages of the source per message received (product of gather ratios on the way).
    pub ratio: f64,
    /// Largest communication time of one message along the way (eq 5's Vol/BW + L terms).
    pub comm: f64,
}

/// The mapping-independent part of G_sync: every module's synchronous inputs with the edge
/// paths they arrive by, the MPI groups that run in lockstep with their exchange edges, and the
/// component structure (with zero communication times). Module indices follow
/// `Application::modules()`.
#[derive(Debug)]
pub struct SyncShape {
    pub inputs: Vec<Vec<StaticInput>>,
    /// Per lockstep group (as `graph.lockstep`): its MPI edges.
    pub lock_edges: Vec<Vec<EdgeId>>,
    pub graph: SyncGraph,
}

impl SyncShape {
    pub fn new(app: &Application) -> SyncShape {
        let mut module_of = vec![None; app.graph.node_count()];
        let mut n = 0;
        for o in app.modules() {
            module_of[o.index()] = Some(n);
            n += 1;
        }
        let inputs = static_inputs(app, &module_of, n);
        let zero = inputs
            .iter()
            .map(|ins| ins.iter().map(|x| SyncInput { source: x.source, ratio: x.ratio, comm: 0.0 }).collect())
            .collect();
        let (locks, lock_edges): (Vec<_>, Vec<_>) = lockstep_groups(app, &module_of)
            .into_iter()
            .map(|(members, edges)| (Lockstep { members, exchange: 0.0 }, edges))
            .unzip();
        SyncShape { inputs, lock_edges, graph: SyncGraph::from_parts(zero, locks) }
    }
}

/// The instances of a parallel module whose MPI exchange runs in lockstep
/// (`mpi = { ..., lockstep = true }`): each iteration ends with the exchange, so every instance
/// runs at the pace of the slowest one plus the exchange's transfer time.
#[derive(Clone, Debug, PartialEq)]
pub struct Lockstep {
    /// Module indices, ascending.
    pub members: Vec<usize>,
    /// Transfer time of one exchange: the slowest MPI edge's Vol/BW + L (zero when local), as
    /// eq 5 counts an edge of a synchronous cycle; the instances exchange in parallel.
    pub exchange: f64,
}

/// Lockstep MPI groups of the application: (member module indices, MPI edges) per group.
pub fn lockstep_groups(app: &Application, module_of: &[Option<usize>]) -> Vec<(Vec<usize>, Vec<EdgeId>)> {
    app.connections
        .iter()
        .filter(|c| c.lockstep)
        .map(|c| {
            let mut members: Vec<usize> = c
                .edges
                .iter()
                .flat_map(|&e| {
                    let (s, d) = app.graph.edge_endpoints(e).expect("edge");
                    [module_of[s.index()], module_of[d.index()]]
                })
                .flatten()
                .collect();
            members.sort_unstable();
            members.dedup();
            (members, c.edges.clone())
        })
        .filter(|(m, _)| m.len() > 1)
        .collect()
}

/// G_sync of one mapping: the synchronous inputs with their communication times, the lockstep
/// groups with their exchange times, and (through `Deref`) the mapping-independent structure,
/// shared between the mappings of one application.
#[derive(Clone, Debug)]
pub struct SyncGraph {
    pub inputs: Vec<Vec<SyncInput>>,
    pub lockstep: Vec<Lockstep>,
    pub structure: std::sync::Arc<SyncStructure>,
}

impl std::ops::Deref for SyncGraph {
    type Target = SyncStructure;
    fn deref(&self) -> &SyncStructure {
        &self.structure
    }
}

/// The component structure of G_sync, which depends on the application only.
#[derive(Debug)]
pub struct SyncStructure {
    /// Components in topological order (sources first); each a list of module indices. A
    /// component is a strongly connected component of G_sync, with the members of a lockstep
    /// group (and whatever lies on FIFO paths between them) joined into one.
    pub order: Vec<Vec<usize>>,
    /// Index into `order` of each module's component.
    pub comp_of: Vec<usize>,
    /// Per component: it holds a lockstep group.
    pub locked: Vec<bool>,
    /// Index of each module's cycle in `cycles`, if it is in one.
    pub cycle_of: Vec<Option<usize>>,
    pub cycles: Vec<Vec<usize>>,
    /// Elementary cycles of each cycle (lists of module indices, in order round the cycle).
    pub elementary: Vec<Vec<Vec<usize>>>,
    /// Cycles whose elementary cycles were too many to list.
    pub approximate: Vec<usize>,
    /// Index of each module's lockstep group in `SyncGraph::lockstep`, if it is in one.
    pub lock_of: Vec<Option<usize>>,
    /// The synchronous component (perf-model paper, Section IV.B.1: a connected component of
    /// G_sync, directions ignored; lockstep peers count as connected) of each module, numbered
    /// from 0.
    pub component: Vec<usize>,
}

const ENUMERATION_BUDGET: usize = 200_000;

impl SyncGraph {
    /// G_sync of a mapping: the application's mapping-independent shape (computed once per
    /// application and kept in `Application::sync_shape`) with each input's communication time,
    /// the slowest of its paths (Σ Vol/BW + L over the path's edges, eq 5), and each lockstep
    /// group's exchange time.
    pub fn build(app: &Application, cluster: &Cluster, mapping: &Mapping) -> SyncGraph {
        let shape = app.sync_shape.get_or_init(|| std::sync::Arc::new(SyncShape::new(app)));
        let mut sg = shape.graph.clone();
        for (ins, st) in sg.inputs.iter_mut().zip(&shape.inputs) {
            for (x, s) in ins.iter_mut().zip(st) {
                x.comm = s
                    .paths
                    .iter()
                    .map(|p| p.iter().map(|&e| comm_time(app, cluster, mapping, e)).sum::<f64>())
                    .fold(0.0, f64::max);
            }
        }
        for (l, edges) in sg.lockstep.iter_mut().zip(&shape.lock_edges) {
            l.exchange = edges.iter().map(|&e| comm_time(app, cluster, mapping, e)).fold(0.0, f64::max);
        }
        sg
    }

    /// Builds the component structure from known synchronous inputs (no lockstep group).
    pub fn from_inputs(inputs: Vec<Vec<SyncInput>>) -> SyncGraph {
        SyncGraph::from_parts(inputs, Vec::new())
    }

    /// Builds the component structure from known synchronous inputs and lockstep groups.
    pub fn from_parts(inputs: Vec<Vec<SyncInput>>, lockstep: Vec<Lockstep>) -> SyncGraph {
        let n = inputs.len();
        let mut dg: DiGraph<usize, (), u32> = DiGraph::with_capacity(n, 0);
        for i in 0..n {
            dg.add_node(i);
        }
        let ix = petgraph::graph::NodeIndex::new;
        for (m, ins) in inputs.iter().enumerate() {
            for x in ins {
                dg.add_edge(ix(x.source), ix(m), ());
            }
        }
        let mut sccs = petgraph::algo::tarjan_scc(&dg);
        sccs.reverse(); // tarjan gives reverse topological order
        let mut order = Vec::new();
        let mut cycle_of = vec![None; n];
        let mut cycles = Vec::new();
        let mut elementary = Vec::new();
        let mut approximate = Vec::new();
        for scc in sccs {
            let mut members: Vec<usize> = scc.iter().map(|x| x.index()).collect();
            members.sort();
            let self_loop = members.len() == 1 && inputs[members[0]].iter().any(|x| x.source == members[0]);
            if members.len() > 1 || self_loop {
                let id = cycles.len();
                for &m in &members {
                    cycle_of[m] = Some(id);
                }
                let (list, complete) = elementary_cycles(&members, &inputs);
                if !complete {
                    approximate.push(id);
                }
                elementary.push(list);
                cycles.push(members.clone());
            }
            order.push(members);
        }
        let mut lock_of = vec![None; n];
        for (l, g) in lockstep.iter().enumerate() {
            for &m in &g.members {
                lock_of[m] = Some(l);
            }
        }
        if !lockstep.is_empty() {
            // Lockstep peers wait for each other: components of G_sync plus peer links both ways.
            for g in &lockstep {
                for w in g.members.windows(2) {
                    dg.add_edge(ix(w[0]), ix(w[1]), ());
                    dg.add_edge(ix(w[1]), ix(w[0]), ());
                }
            }
            let mut sccs = petgraph::algo::tarjan_scc(&dg);
            sccs.reverse();
            order = sccs
                .into_iter()
                .map(|scc| {
                    let mut v: Vec<usize> = scc.iter().map(|x| x.index()).collect();
                    v.sort();
                    v
                })
                .collect();
        }
        let mut comp_of = vec![0; n];
        for (c, comp) in order.iter().enumerate() {
            for &m in comp {
                comp_of[m] = c;
            }
        }
        let locked = order.iter().map(|c| c.iter().any(|&m| lock_of[m].is_some())).collect();
        // Synchronous components: connected over FIFO inputs and lockstep peers.
        let links = inputs
            .iter()
            .enumerate()
            .flat_map(|(m, ins)| ins.iter().map(move |x| (x.source, m)))
            .chain(lockstep.iter().flat_map(|g| g.members.windows(2).map(|w| (w[0], w[1]))));
        let (component, _) = classes(n, links);
        let structure =
            SyncStructure { order, comp_of, locked, cycle_of, cycles, elementary, approximate, lock_of, component };
        SyncGraph { inputs, lockstep, structure: std::sync::Arc::new(structure) }
    }

    /// Whether module `m` is a predecessor (Section IV.B.1: IM_s(m) = ∅): no synchronous input
    /// and no lockstep peer to wait for.
    pub fn is_predecessor(&self, m: usize) -> bool {
        self.inputs[m].is_empty() && self.lock_of[m].is_none()
    }

    /// T_it of every module from T_cexec (eq 3, 4, 5), in topological order of components.
    pub fn iteration_times(&self, tcexec: &[f64]) -> Vec<f64> {
        let mut tit = vec![0.0; tcexec.len()];
        for c in 0..self.order.len() {
            self.set_component_time(c, tcexec, &mut tit);
        }
        tit
    }

    /// T_it of the members of component `c` (eq 3, 4, 5), from T_cexec and the T_it of the
    /// components before it.
    pub fn set_component_time(&self, c: usize, tcexec: &[f64], tit: &mut [f64]) {
        let comp = &self.order[c];
        // The pace of inputs from outside the component (eq 4).
        let mut ext = 0.0f64;
        for &m in comp {
            for x in &self.inputs[m] {
                if self.comp_of[x.source] != c {
                    ext = ext.max(x.ratio * tit[x.source]);
                }
            }
        }
        let t = if self.locked[c] {
            // Lockstep: the slowest member plus the exchange, or any FIFO cycle inside, or the
            // external inputs' pace.
            let mut t = ext;
            for &m in comp {
                let exchange = self.lock_of[m].map(|l| self.lockstep[l].exchange).unwrap_or(0.0);
                t = t.max(tcexec[m] + exchange);
                if let Some(cy) = self.cycle_of[m] {
                    if self.cycles[cy][0] == m {
                        t = t.max(self.cycle_round(cy, tcexec));
                    }
                }
            }
            t
        } else if let Some(cy) = self.cycle_of[comp[0]] {
            // eq 5: the slowest elementary cycle: members' T_cexec plus non-local transfers.
            ext.max(self.cycle_round(cy, tcexec))
        } else {
            // eq 3 (no synchronous input) and eq 4.
            ext.max(tcexec[comp[0]])
        };
        for &m in comp {
            tit[m] = t;
        }
    }

    /// eq 5 for cycle `cy`: its slowest elementary cycle, or all members in sequence when the
    /// elementary cycles were too many to list.
    fn cycle_round(&self, cy: usize, tcexec: &[f64]) -> f64 {
        if self.approximate.contains(&cy) {
            let inside = |s: usize| self.cycle_of[s] == Some(cy);
            self.cycles[cy]
                .iter()
                .map(|&m| {
                    tcexec[m] + self.inputs[m].iter().filter(|x| inside(x.source)).map(|x| x.comm).fold(0.0, f64::max)
                })
                .sum()
        } else {
            self.elementary[cy].iter().map(|cyc| cycle_weight(cyc, tcexec, &self.inputs)).fold(0.0, f64::max)
        }
    }
}

/// The classes of 0..n joined by `links` (union-find), numbered from 0 in order of their
/// smallest element; returns each element's class and the number of classes.
pub(super) fn classes(n: usize, links: impl Iterator<Item = (usize, usize)>) -> (Vec<usize>, usize) {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut a: usize) -> usize {
        while p[a] != a {
            p[a] = p[p[a]];
            a = p[a];
        }
        a
    }
    for (a, b) in links {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        parent[ra.max(rb)] = ra.min(rb);
    }
    let mut number = vec![usize::MAX; n];
    let mut next = 0;
    let class = (0..n)
        .map(|m| {
            let r = root(&mut parent, m);
            if number[r] == usize::MAX {
                number[r] = next;
                next += 1;
            }
            number[r]
        })
        .collect();
    (class, next)
}

/// A synchronous input before routes are known: the FIFO paths (edge lists) it arrives by.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticInput {
    pub source: usize,
    pub ratio: f64,
    pub paths: Vec<Vec<EdgeId>>,
}

/// Synchronous inputs of every module (indexed as `module_of`), found by walking FIFO edges
/// backwards through non-greedy filters.
pub fn static_inputs(app: &Application, module_of: &[Option<usize>], n: usize) -> Vec<Vec<StaticInput>> {
    walk_inputs(
        app,
        module_of,
        n,
        Vec::new(),
        |p: &Vec<EdgeId>, e| {
            let mut p = p.clone();
            p.push(e);
            p
        },
        |paths: &mut Vec<Vec<EdgeId>>, p| paths.push(p),
    )
    .into_iter()
    .map(|ins| ins.into_iter().map(|(source, ratio, paths)| StaticInput { source, ratio, paths }).collect())
    .collect()
}

/// The walk behind `static_inputs`, generic in what is carried along a path: `step` extends the
/// carried value by one edge, `fold` gathers the values of the paths from one source. Returns,
/// per module, (source module, ratio, gathered value).
fn walk_inputs<T: Clone, A: Default>(
    app: &Application,
    module_of: &[Option<usize>],
    n: usize,
    init: T,
    step: impl Fn(&T, EdgeId) -> T,
    fold: impl Fn(&mut A, T),
) -> Vec<Vec<(usize, f64, A)>> {
    use petgraph::visit::EdgeRef;
    let g = &app.graph;
    let mut inputs: Vec<Vec<(usize, f64, A)>> = (0..n).map(|_| Vec::new()).collect();
    let mut stack: Vec<(crate::model::ObjectId, f64, T)> = Vec::new();
    for m in app.modules() {
        let Some(mi) = module_of[m.index()] else { continue };
        stack.clear();
        stack.push((m, 1.0, init.clone()));
        let mut guard = 0usize;
        while let Some((o, ratio, carried)) = stack.pop() {
            guard += 1;
            if guard > 1_000_000 {
                break;
            }
            for e in g.edges_directed(o, Direction::Incoming) {
                if e.weight().role != EdgeRole::Flow(Sync::Fifo) {
                    continue;
                }
                let s = e.source();
                let next = step(&carried, e.id());
                match g[s].filter() {
                    None => {
                        let Some(si) = module_of[s.index()] else { continue };
                        let ins = &mut inputs[mi];
                        let k = match ins.iter().position(|x| x.0 == si) {
                            Some(k) => k,
                            None => {
                                ins.push((si, ratio, A::default()));
                                ins.len() - 1
                            }
                        };
                        ins[k].1 = ins[k].1.max(ratio);
                        fold(&mut ins[k].2, next);
                    }
                    Some(FilterKind::Greedy) => {}
                    Some(k) => stack.push((s, ratio * k.ratio() as f64, next)),
                }
            }
        }
        inputs[mi].sort_by_key(|x| x.0);
    }
    inputs
}

/// Sum of T_cexec over the cycle plus the communication time of each of its edges.
fn cycle_weight(cy: &[usize], tcexec: &[f64], inputs: &[Vec<SyncInput>]) -> f64 {
    let mut w = 0.0;
    for (k, &m) in cy.iter().enumerate() {
        let prev = cy[(k + cy.len() - 1) % cy.len()];
        w += tcexec[m];
        w += inputs[m].iter().find(|x| x.source == prev).map(|x| x.comm).unwrap_or(0.0);
    }
    w
}

/// Elementary cycles of the component (each listed once, starting at its smallest member).
/// Returns false when the enumeration budget ran out.
fn elementary_cycles(members: &[usize], inputs: &[Vec<SyncInput>]) -> (Vec<Vec<usize>>, bool) {
    // successors within the component
    let succ = |a: usize| -> Vec<usize> {
        members.iter().copied().filter(|&b| inputs[b].iter().any(|x| x.source == a)).collect()
    };
    let succs: Vec<(usize, Vec<usize>)> = members.iter().map(|&a| (a, succ(a))).collect();
    let succ_of = |a: usize| &succs.iter().find(|(x, _)| *x == a).expect("member").1;
    let mut out = Vec::new();
    let mut budget = ENUMERATION_BUDGET;
    for &start in members {
        let mut path = vec![start];
        let mut iters: Vec<usize> = vec![0];
        while let Some(&last) = path.last() {
            if budget == 0 {
                return (out, false);
            }
            budget -= 1;
            let k = iters.last_mut().expect("parallel stacks");
            let next = succ_of(last).get(*k).copied();
            *k += 1;
            match next {
                None => {
                    path.pop();
                    iters.pop();
                }
                Some(nx) if nx == start => out.push(path.clone()),
                Some(nx) if nx > start && !path.contains(&nx) => {
                    path.push(nx);
                    iters.push(0);
                }
                Some(_) => {}
            }
        }
    }
    (out, true)
}
