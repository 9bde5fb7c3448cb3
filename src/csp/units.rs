//! Counting over the groups of objects that share a node in every sound mapping
//! (`Analysis::must_share`), with the stacking argument of the class bound: two modules A and B
//! of which neither may follow the other on a CPU (`may_follow` both ways false) never share
//! one. B after A on a CPU, directly or with others between, needs A's largest first-round key
//! to reach B's smallest (keys only fall along a node's order) and B to keep up on a CPU that
//! carries at least LD_A (a CPU's load only grows): exactly what `may_follow` checks for a
//! direct successor. So a group whose modules hold k pairwise such modules needs a node with
//! k CPUs, and groups whose modules are all pairwise such share a node only when their counts
//! fit its CPUs together. Pumpkin-free; literal allocation only (`Analysis::stack_params` is
//! None otherwise), and not valid when CPUs are pinned by hand (callers check).
//!
//! What it proves: a group with no node of enough CPUs in its domain, or a family of groups
//! that cannot all be placed (a maximum flow from groups to nodes, each node taking as many
//! as fit its CPUs, smallest first, falls short). Measured on generated hard 300/64
//! `infeasible-pack` (bound simulations of two ranks, nodes of three CPUs, one node of one):
//! the search left 9 of 13 such instances undecided after 60 s.

use super::analysis::{may_follow, Stack};
use super::flow::Flow;
use super::Analysis;
use crate::model::{Application, Cluster, NodeId, ObjectId};
use std::collections::BTreeMap;

/// Groups in one family at most (the pairwise test grows with its square).
const MAX_FAMILY: usize = 256;
/// Module pairs compared when building families, at most (then the families stay as built:
/// any set of groups pairwise apart is a family, so a smaller one is still an argument).
const MAX_PAIRS: usize = 20_000_000;
/// Modules of a group scanned for its clique at most.
const MAX_SCAN: usize = 512;

/// A group bound to one node: its modules (indices into `Analysis::modules`), its domain (the
/// nodes every member may use), and per processor type (index into `types`) a set of its
/// modules no two of which may share a CPU there.
struct Unit {
    objects: Vec<ObjectId>,
    domain: Vec<NodeId>,
    clique: Vec<Vec<usize>>,
}

/// The reasons no sound mapping exists found by counting over must-share groups (empty when
/// none is found). `share` as `Analysis::must_share` returns it.
pub fn refutation(app: &Application, cluster: &Cluster, an: &Analysis, share: &[Vec<ObjectId>]) -> Vec<String> {
    if !an.literal() {
        return Vec::new();
    }
    // Processor types and one node of each (stacking parameters depend on the node only through
    // its processor type).
    let mut types: Vec<&str> = Vec::new();
    let mut rep: Vec<NodeId> = Vec::new();
    let mut type_of = vec![0usize; cluster.nodes.len()];
    for (i, n) in cluster.nodes.iter().enumerate() {
        let t = match types.iter().position(|&p| p == n.processor) {
            Some(t) => t,
            None => {
                types.push(n.processor.as_str());
                rep.push(NodeId(i as u32));
                types.len() - 1
            }
        };
        type_of[i] = t;
    }
    let params = |mi: usize, t: usize| -> Option<Stack> { an.stack_params(app, cluster, mi, rep[t]) };
    let apart = |a: Option<Stack>, b: Option<Stack>| match (a, b) {
        (Some(a), Some(b)) => !may_follow(a, b) && !may_follow(b, a),
        _ => false,
    };
    let mut out = Vec::new();
    let mut units: Vec<Unit> = Vec::new();
    for (o, others) in share.iter().enumerate() {
        // Each group once, at its first member (groups list the others ascending).
        if others.first().is_none_or(|x| x.index() < o) {
            continue;
        }
        let objects: Vec<ObjectId> = std::iter::once(ObjectId::new(o)).chain(others.iter().copied()).collect();
        let mods: Vec<usize> = objects.iter().filter_map(|x| an.module_of[x.index()]).collect();
        if mods.len() < 2 {
            continue;
        }
        // The nodes every member may use.
        let mut count = vec![0usize; cluster.nodes.len()];
        for x in &objects {
            for n in &an.domain[x.index()] {
                count[n.ix()] += 1;
            }
        }
        let domain: Vec<NodeId> = an.domain[o].iter().copied().filter(|n| count[n.ix()] == objects.len()).collect();
        let clique: Vec<Vec<usize>> = (0..types.len())
            .map(|t| {
                if !domain.iter().any(|n| type_of[n.ix()] == t) {
                    return Vec::new();
                }
                // A clique among the first modules only (a clique of a subset is one of the
                // group): the pairwise test grows with the square of the group.
                let scan = mods.len().min(MAX_SCAN);
                let p: Vec<Option<Stack>> = mods[..scan].iter().map(|&mi| params(mi, t)).collect();
                let mut c: Vec<usize> = Vec::new();
                for i in 0..scan {
                    if c.iter().all(|&j| apart(p[j], p[i])) {
                        c.push(i);
                    }
                }
                c.into_iter().map(|i| mods[i]).collect()
            })
            .collect();
        let need = |n: NodeId| clique[type_of[n.ix()]].len().max(1) as u32;
        let fit: Vec<NodeId> = domain.iter().copied().filter(|&n| cluster.node(n).cpus >= need(n)).collect();
        if fit.is_empty() && !domain.is_empty() {
            let most = domain.iter().map(|&n| need(n)).min().unwrap_or(0);
            out.push(format!(
                "{} share one node in every sound mapping (an edge between them no network can carry, or a bounded loop), and at least {most} of their modules cannot share a CPU (each would make the other miss its pace, or come before it in the node's order); no node they may all use has {most} CPUs",
                object_list(app, &objects),
            ));
            continue;
        }
        if domain.is_empty() {
            // Each member has nodes, but none all of them may use (the presolve's route rule
            // keeps only pairwise overlaps).
            out.push(format!(
                "{} share one node in every sound mapping (an edge between them no network can carry, or a bounded loop), and no node is allowed to all of them",
                object_list(app, &objects),
            ));
            continue;
        }
        units.push(Unit { objects, domain: fit, clique });
    }
    if !out.is_empty() || units.len() < 2 {
        return out;
    }
    // Families: groups whose modules are pairwise apart on every processor type, greedily,
    // largest first; each tested by a maximum flow.
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by_key(|&u| (std::cmp::Reverse(units[u].clique.iter().map(|c| c.len()).min().unwrap_or(0)), u));
    let mut taken = vec![false; units.len()];
    let mut cache: BTreeMap<(usize, usize), Option<Stack>> = BTreeMap::new();
    let compared = std::cell::Cell::new(0usize);
    let mut apart_units = |a: &Unit, b: &Unit| -> bool {
        let work: usize = (0..types.len()).map(|t| a.clique[t].len() * b.clique[t].len()).sum();
        compared.set(compared.get() + work + 1);
        (0..types.len()).all(|t| {
            a.clique[t].iter().all(|&x| {
                b.clique[t].iter().all(|&y| {
                    let px = *cache.entry((x, t)).or_insert_with(|| params(x, t));
                    let py = *cache.entry((y, t)).or_insert_with(|| params(y, t));
                    apart(px, py)
                })
            })
        })
    };
    for &u in &order {
        if compared.get() >= MAX_PAIRS {
            break;
        }
        if taken[u] {
            continue;
        }
        taken[u] = true;
        let mut family = vec![u];
        for &v in &order {
            if family.len() >= MAX_FAMILY || compared.get() >= MAX_PAIRS {
                break;
            }
            if !taken[v] && family.iter().all(|&f| apart_units(&units[f], &units[v])) {
                taken[v] = true;
                family.push(v);
            }
        }
        if family.len() < 2 {
            continue;
        }
        if let Some(short) = shortfall(cluster, &units, &family, &type_of) {
            let objects: Vec<ObjectId> = family.iter().flat_map(|&f| units[f].objects.iter().copied()).collect();
            let mut nodes: Vec<NodeId> = family.iter().flat_map(|&f| units[f].domain.iter().copied()).collect();
            nodes.sort_unstable();
            nodes.dedup();
            out.push(format!(
                "{} groups of objects each share one node in every sound mapping ({}: an edge between members no network can carry, or a bounded loop), and no two of their modules may share a CPU, in a group or across groups (the load of one plus the share of a CPU the other needs to keep its pace exceeds the CPU, or the first-round order puts neither after the other); the nodes they may use that have CPUs enough for one group, {}, hold at most {} of the {} groups (a node as many as fit its CPUs, one CPU per module)",
                family.len(),
                object_list(app, &objects),
                node_list(cluster, &nodes),
                family.len() - short,
                family.len(),
            ));
        }
    }
    out
}

/// How many groups of `family` a maximum flow leaves unplaced (None: none), each node taking
/// as many groups as fit its CPUs, the smallest first.
fn shortfall(cluster: &Cluster, units: &[Unit], family: &[usize], type_of: &[usize]) -> Option<usize> {
    let size = |f: usize, n: NodeId| units[f].clique[type_of[n.ix()]].len().max(1) as u32;
    let mut nodes: Vec<NodeId> = family.iter().flat_map(|&f| units[f].domain.iter().copied()).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let cap: Vec<usize> = nodes
        .iter()
        .map(|&n| {
            let mut s: Vec<u32> =
                family.iter().filter(|&&f| units[f].domain.contains(&n)).map(|&f| size(f, n)).collect();
            s.sort_unstable();
            let (mut sum, mut k) = (0u32, 0usize);
            for x in s {
                if sum + x > cluster.node(n).cpus {
                    break;
                }
                sum += x;
                k += 1;
            }
            k
        })
        .collect();
    // A b-matching: source -> group (1) -> each node of its domain (1) -> sink (the node's
    // groups).
    let (src, sink) = (0, 1 + family.len() + nodes.len());
    let mut g = Flow::new(sink + 1);
    for (i, &f) in family.iter().enumerate() {
        g.edge(src, 1 + i, 1);
        for n in &units[f].domain {
            if let Ok(j) = nodes.binary_search(n) {
                g.edge(1 + i, 1 + family.len() + j, 1);
            }
        }
    }
    for (j, &c) in cap.iter().enumerate() {
        g.edge(1 + family.len() + j, sink, c as i64);
    }
    let placed = g.max_flow(src, sink) as usize;
    (placed < family.len()).then(|| family.len() - placed)
}

/// Nodes with their CPUs: "n0006 (3 CPUs), n0007 (1 CPU)", or "24 nodes (n0006, ..., n0029)".
fn node_list(cluster: &Cluster, nodes: &[NodeId]) -> String {
    if nodes.len() > 8 {
        let (a, b) = (nodes[0], nodes[nodes.len() - 1]);
        return format!("{} nodes ({}, ..., {})", nodes.len(), cluster.node(a).name, cluster.node(b).name);
    }
    nodes
        .iter()
        .map(|&n| {
            let c = cluster.node(n).cpus;
            format!("{} ({c} CPU{})", cluster.node(n).name, if c == 1 { "" } else { "s" })
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Objects named by group: "renderer x4, joypad" (also the counting reasons' wording).
pub(crate) fn object_list(app: &Application, objs: &[ObjectId]) -> String {
    let mut per: BTreeMap<(u32, String), usize> = BTreeMap::new();
    for &o in objs {
        let g = app.object(o).group;
        *per.entry((g.0, app.group(g).name.clone())).or_default() += 1;
    }
    per.into_iter().map(|((_, g), k)| if k == 1 { g } else { format!("{g} x{k}") }).collect::<Vec<_>>().join(", ")
}
