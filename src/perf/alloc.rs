//! T_I/O (eq 6–7) and the per-node CPU allocation (Section IV.B.2), iterated until the per-node
//! orders settle (the paper's treatment of cycles mixing synchronisation and concurrency).
//!
//! The allocation is the published algorithm: modules of a node, sorted by decreasing T_I/O,
//! each take the least-loaded CPU p (the first one on ties), get LD_c = (1 - CPULD(p)) x LD and
//! add LD_c to CPULD(p); T_cexec = T_exec x LD / LD_c. A module pinned to a CPU takes that CPU.
//!
//! One refinement, needed by Table IV: members of one synchronous cycle never run at the same
//! time (a message goes round), so they do not compete with each other. They form one thread
//! of control: a member sees only the load of the *other* threads on a CPU, and a thread adds
//! to a CPU the largest LD_c of its members there, not their sum.
//!
//! Iteration (Section IV.B.2, "mixed cycles"): start from T_cexec = T_exec, compute T_it and
//! T_I/O, sort, allocate, and repeat. T_cexec depends only on the orders, so the state is the
//! tuple of per-node orders: the same orders twice in a row is a fixed point; an earlier state
//! coming back is an oscillation, reported as an unstable schedule.

use super::sync::SyncGraph;
use super::{FirstRound, ModulePerf, Options, Schedule};
use crate::model::{Cluster, Mapping, ObjectId};

pub(super) fn solve_schedule(
    sg: &SyncGraph,
    mapping: &Mapping,
    cluster: &Cluster,
    modules: &mut [ModulePerf],
    opts: &Options,
) -> Schedule {
    let n = modules.len();
    // Modules grouped by node, in module order (nodes in order of their first module).
    let mut by_node: Vec<(u32, Vec<usize>)> = Vec::new();
    {
        let mut slot: Vec<Option<usize>> = vec![None; cluster.nodes.len()];
        for (i, m) in modules.iter().enumerate() {
            let k = *slot[m.node.ix()].get_or_insert_with(|| {
                by_node.push((m.node.0, Vec::new()));
                by_node.len() - 1
            });
            by_node[k].1.push(i);
        }
    }
    let pinned: Vec<Option<u32>> = modules.iter().map(|m| mapping.placement[m.object.index()].cpu).collect();
    let mut tcexec: Vec<f64> = modules.iter().map(|m| m.texec).collect();
    let mut history: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut tit;
    let mut tio;
    let mut iterations = 0usize;
    let mut scratch = (Vec::new(), Vec::new());
    loop {
        tit = sg.iteration_times(&tcexec);
        tio = io_times(sg, modules, &tit);
        let orders: Vec<Vec<usize>> = by_node
            .iter()
            .map(|(_, ms)| {
                let mut o = ms.clone();
                o.sort_by(|&a, &b| tio[b].total_cmp(&tio[a]).then(a.cmp(&b)));
                o
            })
            .collect();
        if history.last() == Some(&orders) {
            write_back(modules, &tcexec, &tit, &tio);
            return Schedule::Converged { iterations };
        }
        if let Some(j) = history.iter().position(|h| h == &orders) {
            write_back(modules, &tcexec, &tit, &tio);
            let movers = changing_modules(&history[j..], modules);
            return Schedule::Unstable { modules: movers, period: history.len() - j };
        }
        if iterations >= opts.max_iterations {
            write_back(modules, &tcexec, &tit, &tio);
            let movers = changing_modules(&history, modules);
            return Schedule::NoConvergence { modules: movers, iterations };
        }
        iterations += 1;
        for ((node, _), order) in by_node.iter().zip(&orders) {
            let cpus = cluster.nodes[*node as usize].cpus as usize;
            allocate(order, cpus, sg, &pinned, modules, &mut tcexec, &mut scratch);
        }
        if iterations == 1 {
            for (i, m) in modules.iter_mut().enumerate() {
                m.tit_sync = tit[i];
                m.first = FirstRound { tio: tio[i], cpu: m.cpu, ldc: m.ldc, tcexec: tcexec[i] };
            }
        }
        history.push(orders);
        debug_assert_eq!(tcexec.len(), n);
    }
}

fn write_back(modules: &mut [ModulePerf], tcexec: &[f64], tit: &[f64], tio: &[f64]) {
    for (i, m) in modules.iter_mut().enumerate() {
        m.tcexec = tcexec[i];
        m.tit = tit[i];
        m.tio = tio[i];
    }
}

/// eq 6 for predecessors (no synchronous input), eq 7 otherwise.
fn io_times(sg: &SyncGraph, modules: &[ModulePerf], tit: &[f64]) -> Vec<f64> {
    modules
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if sg.inputs[i].is_empty() {
                m.texec * (1.0 - m.ld)
            } else {
                let wait = sg.inputs[i].iter().map(|x| x.ratio * tit[x.source]).fold(m.texec, f64::max);
                wait - m.texec * m.ld
            }
        })
        .collect()
}

/// The published allocation algorithm on one node, with threads for synchronous cycles.
fn allocate(
    order: &[usize],
    cpus: usize,
    sg: &SyncGraph,
    pinned: &[Option<u32>],
    modules: &mut [ModulePerf],
    tcexec: &mut [f64],
    scratch: &mut (Vec<(usize, usize, f64)>, Vec<f64>),
) {
    // Thread of a module: its cycle, or itself.
    let thread = |m: usize| -> usize { sg.cycle_of[m].map(|c| usize::MAX - c).unwrap_or(m) };
    // contrib = (cpu, thread, largest LD_c of that thread's members on that cpu); one entry per
    // (cpu, thread) pair, few in all, so one flat list. Buffers are reused across nodes.
    let (contrib, cpuld) = scratch;
    contrib.clear();
    cpuld.clear();
    cpuld.resize(cpus, 0.0);
    for &m in order {
        let t = thread(m);
        let own = |cpu: usize, contrib: &[(usize, usize, f64)]| {
            contrib.iter().find(|x| x.0 == cpu && x.1 == t).map(|x| x.2).unwrap_or(0.0)
        };
        let seen = |cpu: usize, contrib: &[(usize, usize, f64)], cpuld: &[f64]| cpuld[cpu] - own(cpu, contrib);
        let p = match pinned[m] {
            Some(c) => c as usize,
            None => {
                let mut p = 0;
                for c in 1..cpus {
                    if seen(c, contrib, cpuld) < seen(p, contrib, cpuld) {
                        p = c;
                    }
                }
                p
            }
        };
        let free = (1.0 - seen(p, contrib, cpuld)).max(0.0);
        let ld = modules[m].ld;
        let ldc = free * ld;
        let old = own(p, contrib);
        if ldc > old {
            cpuld[p] += ldc - old;
            match contrib.iter_mut().find(|x| x.0 == p && x.1 == t) {
                Some(x) => x.2 = ldc,
                None => contrib.push((p, t, ldc)),
            }
        }
        modules[m].cpu = p as u32;
        modules[m].ldc = ldc;
        tcexec[m] = if ldc > 0.0 { modules[m].texec * ld / ldc } else { f64::INFINITY };
    }
}

/// Modules whose rank on their node differs between the given states.
fn changing_modules(states: &[Vec<Vec<usize>>], modules: &[ModulePerf]) -> Vec<ObjectId> {
    let mut out = Vec::new();
    if states.is_empty() {
        return out;
    }
    for (k, first) in states[0].iter().enumerate() {
        for (pos, &m) in first.iter().enumerate() {
            if states.iter().any(|s| s[k].get(pos) != Some(&m)) {
                out.push(modules[m].object);
            }
        }
    }
    out.sort();
    out
}
