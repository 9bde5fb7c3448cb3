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
/// paths they arrive by, and the component structure (with zero communication times). Module
/// indices follow `Application::modules()`.
#[derive(Debug)]
pub struct SyncShape {
    pub inputs: Vec<Vec<StaticInput>>,
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
        SyncShape { inputs, graph: SyncGraph::from_inputs(zero) }
    }
}

#[derive(Clone, Debug)]
pub struct SyncGraph {
    pub inputs: Vec<Vec<SyncInput>>,
    /// Components in topological order (sources first); each a list of module indices.
    pub order: Vec<Vec<usize>>,
    /// Index of each module's cycle in `cycles`, if it is in one.
    pub cycle_of: Vec<Option<usize>>,
    pub cycles: Vec<Vec<usize>>,
    /// Elementary cycles of each cycle (lists of module indices, in order round the cycle).
    pub elementary: Vec<Vec<Vec<usize>>>,
    /// Cycles whose elementary cycles were too many to list.
    pub approximate: Vec<usize>,
}

const ENUMERATION_BUDGET: usize = 200_000;

impl SyncGraph {
    /// G_sync of a mapping: the application's mapping-independent shape (computed once per
    /// application and kept in `Application::sync_shape`) with each input's communication time,
    /// the slowest of its paths (Σ Vol/BW + L over the path's edges, eq 5).
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
        sg
    }

    /// Builds the component structure from known synchronous inputs.
    pub fn from_inputs(inputs: Vec<Vec<SyncInput>>) -> SyncGraph {
        let n = inputs.len();
        let mut dg: DiGraph<usize, (), u32> = DiGraph::with_capacity(n, 0);
        for i in 0..n {
            dg.add_node(i);
        }
        for (m, ins) in inputs.iter().enumerate() {
            for x in ins {
                dg.add_edge(petgraph::graph::NodeIndex::new(x.source), petgraph::graph::NodeIndex::new(m), ());
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
        SyncGraph { inputs, order, cycle_of, cycles, elementary, approximate }
    }

    /// T_it of every module from T_cexec (eq 3, 4, 5), in topological order of components.
    pub fn iteration_times(&self, tcexec: &[f64]) -> Vec<f64> {
        let mut tit = vec![0.0; tcexec.len()];
        for comp in &self.order {
            // Members of a component of several modules share their cycle id.
            let inside = |s: usize| {
                if comp.len() == 1 {
                    s == comp[0]
                } else {
                    self.cycle_of[s].is_some() && self.cycle_of[s] == self.cycle_of[comp[0]]
                }
            };
            // The pace of inputs from outside the component (eq 4).
            let mut ext = 0.0f64;
            for &m in comp {
                for x in &self.inputs[m] {
                    if !inside(x.source) {
                        ext = ext.max(x.ratio * tit[x.source]);
                    }
                }
            }
            let t = if self.cycle_of[comp[0]].is_none() {
                // eq 3 (no synchronous input) and eq 4.
                ext.max(tcexec[comp[0]])
            } else {
                // eq 5: the slowest elementary cycle: members' T_cexec plus non-local transfers.
                let c = self.cycle_of[comp[0]].expect("cycle");
                let round = if self.approximate.contains(&c) {
                    comp.iter()
                        .map(|&m| {
                            tcexec[m]
                                + self.inputs[m].iter().filter(|x| inside(x.source)).map(|x| x.comm).fold(0.0, f64::max)
                        })
                        .sum()
                } else {
                    self.elementary[c].iter().map(|cy| cycle_weight(cy, tcexec, &self.inputs)).fold(0.0, f64::max)
                };
                ext.max(round)
            };
            for &m in comp {
                tit[m] = t;
            }
        }
        tit
    }
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
