//! Solver-neutral rows of the first-round families (CP builder passes `first_round` and
//! `keep_up`), and a solver-neutral export of the whole static model (for reference solvers).
//!
//! Owns: deciding, for each (module, node), which other modules surely (or maybe) come before it
//! in the node's allocation order (decreasing T_I/O, eq 6–7; perf-model paper Section IV.B.2).
//! Pure: no pumpkin. `csp::Model` posts these rows; `report` writes the export as JSON.

use super::Analysis;
use crate::model::{Application, Cluster, NetworkId, NodeId, ObjectId};
use petgraph::visit::EdgeRef;
use std::collections::HashMap;

/// "If `object` is on `node`, then Σ x[heavy][node] − |heavy| · Σ x[light][node] ≤ cap."
#[derive(Clone, Debug, PartialEq)]
pub struct CountRow {
    pub family: &'static str,
    pub object: ObjectId,
    pub node: NodeId,
    pub heavy: Vec<ObjectId>,
    pub light: Vec<ObjectId>,
    pub cap: i32,
}

/// First-round keys and loads per (module, processor type): they depend on the node only
/// through its processor type, so they are computed once per type, not once per node.
struct Keys {
    /// Node index -> processor type index.
    type_of: Vec<usize>,
    /// [type][module] -> (key lo, key hi, T_exec, LD).
    per_type: Vec<Vec<(f64, f64, f64, f64)>>,
    /// [object][node]: node in the object's domain.
    member: Vec<Vec<bool>>,
}

impl Keys {
    fn new(app: &Application, cluster: &Cluster, an: &Analysis) -> Keys {
        let mut types: HashMap<&str, usize> = HashMap::new();
        let mut first_node = Vec::new();
        let type_of = cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                *types.entry(n.processor.as_str()).or_insert_with(|| {
                    first_node.push(NodeId(i as u32));
                    first_node.len() - 1
                })
            })
            .collect();
        let per_type = first_node
            .iter()
            .map(|&n| {
                (0..an.modules.len())
                    .map(|mi| {
                        let (lo, hi) = an.key(app, cluster, mi, n);
                        let (t, ld) = an.costs(app, cluster, mi, n);
                        (lo, hi, t, ld)
                    })
                    .collect()
            })
            .collect();
        let mut member = vec![vec![false; cluster.nodes.len()]; an.domain.len()];
        for (o, d) in an.domain.iter().enumerate() {
            for n in d {
                member[o][n.ix()] = true;
            }
        }
        Keys { type_of, per_type, member }
    }
    fn at(&self, mi: usize, n: NodeId) -> (f64, f64, f64, f64) {
        self.per_type[self.type_of[n.ix()]][mi]
    }
}

/// Rows of the first allocation round for self-paced modules (see `Model::first_round`): at most
/// CPUs(n) − 1 of the modules surely before it may share its node. Stops and returns None once
/// the rows hold more than `max_terms` terms (the family is then left out: it is redundant with
/// the verifier, which rejects what it would have pruned).
pub fn first_round_rows(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    max_terms: usize,
    active: &[bool],
) -> Option<Vec<CountRow>> {
    let keys = Keys::new(app, cluster, an);
    let mut rows = Vec::new();
    let mut terms = 0usize;
    for (r, &ro) in an.modules.iter().enumerate() {
        if !an.inputs[r].is_empty() || an.cycle_of[r].is_some() {
            continue;
        }
        for &n in an.domain[ro.index()].iter().filter(|n| active[n.ix()]) {
            let cpus = cluster.node(n).cpus as usize;
            let kr = keys.at(r, n).0;
            let mut before = Vec::new();
            for (j, &jo) in an.modules.iter().enumerate() {
                if j == r || an.cycle_of[j].is_some() || !keys.member[jo.index()][n.ix()] {
                    continue;
                }
                let (lo, hi, _, _) = keys.at(j, n);
                if lo > kr || (lo == hi && lo == kr && jo < ro) {
                    before.push(jo);
                }
            }
            if before.len() < cpus {
                continue;
            }
            terms += before.len();
            if terms > max_terms {
                return None;
            }
            rows.push(CountRow {
                family: "first-round",
                object: ro,
                node: n,
                heavy: before,
                light: vec![],
                cap: cpus as i32 - 1,
            });
        }
    }
    Some(rows)
}

/// The first-round family for one node in prefix form: the modules that may share the node,
/// in an order where the modules surely before a self-paced module r are exactly those that
/// precede it (decreasing T_I/O lower bound; at equal bound, exact keys by object index, then
/// the others). `checks` holds (position of r, r) for each self-paced r with at least CPUs(n)
/// modules before it: the same constraints as `first_round_rows`, in O(modules) per node.
#[derive(Clone, Debug, PartialEq)]
pub struct PrefixChain {
    pub node: NodeId,
    pub order: Vec<ObjectId>,
    pub checks: Vec<(usize, ObjectId)>,
    pub cap: i32,
}

/// `first_round_rows` as prefix chains (see `PrefixChain`).
pub fn first_round_chains(app: &Application, cluster: &Cluster, an: &Analysis, active: &[bool]) -> Vec<PrefixChain> {
    let keys = Keys::new(app, cluster, an);
    let mut chains = Vec::new();
    for n in (0..cluster.nodes.len() as u32).map(NodeId).filter(|n| active[n.ix()]) {
        let cpus = cluster.node(n).cpus as usize;
        // (lo, inexact, object) for every module that may be before some r on n.
        let mut cand: Vec<(f64, bool, ObjectId, usize)> = an
            .modules
            .iter()
            .enumerate()
            .filter(|&(j, &jo)| an.cycle_of[j].is_none() && keys.member[jo.index()][n.ix()])
            .map(|(j, &jo)| {
                let (lo, hi, _, _) = keys.at(j, n);
                (lo, lo != hi, jo, j)
            })
            .collect();
        if cand.len() <= cpus {
            continue;
        }
        cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let checks: Vec<(usize, ObjectId)> = cand
            .iter()
            .enumerate()
            .filter(|&(p, &(_, _, _, j))| p >= cpus && an.inputs[j].is_empty())
            .map(|(p, &(_, _, o, _))| (p, o))
            .collect();
        if let Some(&(last, _)) = checks.last() {
            let order = cand[..last].iter().map(|c| c.2).collect();
            chains.push(PrefixChain { node: n, order, checks, cap: cpus as i32 - 1 });
        }
    }
    chains
}

/// Rows of the first allocation round for input-paced modules (see `Model::keep_up`). None with
/// an allocation other than the literal one: its argument (every CPU carries the LD of its first
/// thread) does not hold there.
pub fn keep_up_rows(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    max_terms: usize,
    active: &[bool],
) -> Option<Vec<CountRow>> {
    if !an.literal() {
        return None;
    }
    let keys = Keys::new(app, cluster, an);
    let mut rows = Vec::new();
    let mut terms = 0usize;
    for (mi, &mo) in an.modules.iter().enumerate() {
        if an.inputs[mi].is_empty() || an.cycle_of[mi].is_some() {
            continue;
        }
        let in_min_hi = an.inputs[mi].iter().map(|x| x.ratio * an.tit_hi[x.source]).fold(f64::INFINITY, f64::min);
        for &n in an.domain[mo.index()].iter().filter(|n| active[n.ix()]) {
            let cpus = cluster.node(n).cpus as i32;
            let (klo, khi, texec, _) = keys.at(mi, n);
            let u_lo = texec / in_min_hi;
            let mut heavy = Vec::new();
            for (j, &jo) in an.modules.iter().enumerate() {
                if j == mi || !keys.member[jo.index()][n.ix()] {
                    continue;
                }
                let (lo, hi, _, ld) = keys.at(j, n);
                let surely_before = lo > khi || (lo == hi && klo == khi && lo == klo && jo < mo);
                if surely_before && an.cycle_of[j].is_none() && ld > 1.0 - u_lo {
                    heavy.push(jo);
                }
            }
            let light = Vec::new();
            if (heavy.len() as i32) < cpus {
                continue;
            }
            terms += heavy.len() + light.len();
            if terms > max_terms {
                return None;
            }
            rows.push(CountRow { family: "keep-up", object: mo, node: n, heavy, light, cap: cpus - 1 });
        }
    }
    Some(rows)
}

/// The static model in solver-neutral form (what `flowmap export-csp` writes), for reference
/// solvers such as the CP-SAT script under `benches/`. Indices are object, edge, node and
/// network indices of the validated model.
#[derive(Clone, Debug)]
pub struct Neutral {
    /// Per object: domain nodes and the module's load lower bound there (0 for filters).
    pub objects: Vec<NeutralObject>,
    pub edges: Vec<NeutralEdge>,
    pub rows: Vec<CountRow>,
    /// At most CPUs(n) solo modules per node (off when CPUs are pinned by hand).
    pub self_paced_cap: bool,
    pub filter_locality: bool,
    pub nodes_lower_bound: i64,
}

#[derive(Clone, Debug)]
pub struct NeutralObject {
    pub object: ObjectId,
    pub domain: Vec<NodeId>,
    pub load: Vec<f64>,
    pub self_paced: bool,
    /// Per domain node: the module needs a CPU of its own there (`Analysis::solo`).
    pub solo: Vec<bool>,
}

#[derive(Clone, Debug)]
pub struct NeutralEdge {
    pub edge: crate::model::EdgeId,
    /// Bytes per second when not local (Vol × the rate's lower bound, as the traffic pass uses).
    pub bw: f64,
    pub networks: Vec<NetworkId>,
    pub can_local: bool,
}

/// The neutral export of the static CSP (no fixed part; the caller supplies the static node bound).
pub fn neutral(app: &Application, cluster: &Cluster, an: &Analysis, filter_locality: bool, bound: i64) -> Neutral {
    let mut objects = Vec::new();
    let ld_min = an.ld_min(app, cluster);
    for o in app.graph.node_indices() {
        let dom = an.domain[o.index()].clone();
        // The loads pass weighs each group's instances on a node by the lightest one's bound.
        let load = dom
            .iter()
            .map(|&n| {
                if !app.object(o).is_module() {
                    return 0.0;
                }
                app.group(app.object(o).group)
                    .objects
                    .iter()
                    .filter(|g| an.domain[g.index()].contains(&n))
                    .map(|g| an.load_lo(app, cluster, an.module_of[g.index()].expect("module"), n))
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let self_paced =
            an.module_of[o.index()].is_some_and(|mi| an.inputs[mi].is_empty() && an.cycle_of[mi].is_none());
        let solo = dom
            .iter()
            .map(|&n| an.module_of[o.index()].is_some_and(|mi| an.solo(app, cluster, mi, n, ld_min[n.ix()])))
            .collect();
        objects.push(NeutralObject { object: o, domain: dom, load, self_paced, solo });
    }
    let edges = app
        .graph
        .edge_references()
        .map(|e| {
            let (ds, dd) = (&an.domain[e.source().index()], &an.domain[e.target().index()]);
            let networks = (0..cluster.networks.len() as u32)
                .map(NetworkId)
                .filter(|&k| {
                    ds.iter()
                        .any(|&a| cluster.on_network(a, k) && dd.iter().any(|&b| b != a && cluster.on_network(b, k)))
                })
                .collect();
            NeutralEdge {
                edge: e.id(),
                bw: e.weight().volume * an.rate_lo[e.id().index()],
                networks,
                can_local: ds.iter().any(|n| dd.contains(n)),
            }
        })
        .collect();
    // Rows beyond 5,000,000 terms are left out (each family is optional: the verifier decides).
    let all = vec![true; cluster.nodes.len()];
    let mut rows = first_round_rows(app, cluster, an, 5_000_000, &all).unwrap_or_default();
    rows.extend(keep_up_rows(app, cluster, an, 5_000_000, &all).unwrap_or_default());
    Neutral { objects, edges, rows, self_paced_cap: true, filter_locality, nodes_lower_bound: bound }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;
    use std::path::Path;

    /// The prefix chains state exactly the rows: for each row, the modules before r in the
    /// chain's order are the row's `heavy` set (a second method for the same family).
    #[test]
    fn chains_state_the_same_constraints_as_rows() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (m, c) in [
            ("models/fluid-particle.toml", "clusters/lifo-2007.toml"),
            ("models/generated/gen-50x16-feasible-s1.toml", "clusters/generated/gen-50x16-feasible-s1.toml"),
            ("models/generated/gen-300x64-tight-s1.toml", "clusters/generated/gen-300x64-tight-s1.toml"),
        ] {
            let cluster = parse::load_cluster(&root.join(c)).expect("cluster");
            let app = parse::load_application(&root.join(m), &[]).expect("app");
            let an = Analysis::new(&app, &cluster, None);
            let all = vec![true; cluster.nodes.len()];
            let mut rows: Vec<(ObjectId, NodeId, Vec<ObjectId>)> =
                first_round_rows(&app, &cluster, &an, usize::MAX, &all)
                    .expect("no cap")
                    .into_iter()
                    .map(|r| {
                        let mut h = r.heavy;
                        h.sort();
                        (r.object, r.node, h)
                    })
                    .collect();
            let mut from_chains = Vec::new();
            for ch in first_round_chains(&app, &cluster, &an, &all) {
                for &(p, r) in &ch.checks {
                    let mut h = ch.order[..p].to_vec();
                    h.sort();
                    from_chains.push((r, ch.node, h));
                }
            }
            rows.sort();
            from_chains.sort();
            assert!(!rows.is_empty(), "{m}: the family is not empty");
            assert_eq!(rows, from_chains, "{m}");
        }
    }
}
