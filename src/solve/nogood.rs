//! Nogoods from the verifier's diagnosis: what about a rejected candidate makes every mapping
//! sharing it unsound. Each nogood is only as general as the argument for it allows; when no
//! argument applies, the candidate's full assignment is excluded.
//!
//! - First allocation round on node n: the first module m (in the node's T_I/O order) that the
//!   round leaves slower than soundness allows is determined by the modules before it on n. If
//!   their keys and costs are the same in every mapping, "m on n with exactly these earlier
//!   modules on n" is unsound whatever else happens (ARCHITECTURE.md, "Soundness").
//! - Contention of link (n, k): if the rates of the contributing edges are the same in every
//!   mapping, any mapping that routes a subset of them exceeding BW(k) through (n, k) is unsound.
//! - Latency of a path: with constant module paces, routing the path's edges the same way
//!   costs at least as much.

use crate::csp::{Analysis, Lit};
use crate::model::{Application, Cluster, Mapping, NodeId, Requirement, Route};
use crate::perf::{self, Prediction};
use crate::verify::{le, Report};

/// Whether the candidate violates the clause (every literal false under it).
pub fn falsified_by(c: &[Lit], m: &Mapping) -> bool {
    c.iter().all(|&l| match l {
        Lit::Place(o, n, p) => (m.node_of(o) == n) != p,
        Lit::Route(e, k, p) => (m.route(e) == Route::Net(k)) != p,
    })
}

/// Nogood clauses (disjunctions of literals) for a rejected candidate, with a name each.
pub fn derive(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    mapping: &Mapping,
    report: &Report,
) -> Vec<(Vec<Lit>, String)> {
    let mut out = Vec::new();
    let Some(p) = &report.prediction else {
        return out;
    };
    let pinned = mapping.placement.iter().any(|x| x.cpu.is_some());
    if !pinned {
        first_round(app, cluster, an, mapping, p, &mut out);
    }
    contention(app, cluster, an, mapping, p, &mut out);
    latency(app, cluster, an, mapping, p, &mut out);
    out
}

fn first_round(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    _mapping: &Mapping,
    p: &Prediction,
    out: &mut Vec<(Vec<Lit>, String)>,
) {
    for n in (0..cluster.nodes.len() as u32).map(NodeId) {
        let mut here: Vec<usize> = (0..p.modules.len()).filter(|&i| p.modules[i].node == n).collect();
        here.sort_by(|&a, &b| p.modules[b].first.tio.total_cmp(&p.modules[a].first.tio).then(a.cmp(&b)));
        for (pos, &mi) in here.iter().enumerate() {
            let m = &p.modules[mi];
            let fails = if p.sync_inputs[mi].is_empty() {
                m.first.ldc < m.ld * (1.0 - 1e-12)
            } else {
                let in_min = p.sync_inputs[mi]
                    .iter()
                    .map(|x| x.ratio * p.modules[x.source].tit_sync)
                    .fold(f64::INFINITY, f64::min);
                !le(m.first.tcexec, in_min)
            };
            if !fails {
                continue;
            }
            // Generalise only when the order and costs up to m are the same in every mapping.
            let prefix = &here[..pos];
            let fixed = |i: usize| {
                let (lo, hi) = an.key(app, cluster, i, n);
                lo == hi && an.cycle_of[i].is_none() && an.inputs[i].iter().all(|x| an.constant_pace(x.source))
            };
            if !fixed(mi) || !prefix.iter().all(|&j| fixed(j)) {
                break;
            }
            let (km, _) = an.key(app, cluster, mi, n);
            let mo = an.modules[mi];
            let mut c = vec![Lit::Place(mo, n, false)];
            for &j in prefix {
                c.push(Lit::Place(an.modules[j], n, false));
            }
            let mut general = true;
            for (j, &jo) in an.modules.iter().enumerate() {
                if j == mi || prefix.contains(&j) || !an.domain[jo.index()].contains(&n) {
                    continue;
                }
                let (_, hi) = an.key(app, cluster, j, n);
                let maybe_before = hi > km || (hi == km && jo < mo) || an.cycle_of[j].is_some();
                if maybe_before {
                    if here.contains(&j) {
                        // On n after m here, but it could precede m elsewhere: no safe generalisation.
                        general = false;
                        break;
                    }
                    c.push(Lit::Place(jo, n, true));
                }
            }
            if !general {
                break;
            }
            out.push((
                c,
                format!("{} on {} after {} module(s)", app.object(mo).name, cluster.node(n).name, prefix.len()),
            ));
            break;
        }
    }
}

fn contention(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    mapping: &Mapping,
    p: &Prediction,
    out: &mut Vec<(Vec<Lit>, String)>,
) {
    for l in &p.links {
        for (total, edges, send) in [(l.send, &l.send_edges, true), (l.recv, &l.recv_edges, false)] {
            if le(total, l.capacity) || !edges.iter().all(|&e| an.constant_rate(e)) {
                continue;
            }
            let mut bws: Vec<(f64, crate::model::EdgeId)> =
                edges.iter().map(|&e| (app.graph[e].volume * an.rate_lo[e.index()], e)).collect();
            bws.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut sum = 0.0;
            let mut c = Vec::new();
            for (bw, e) in bws {
                sum += bw;
                let (s, d) = app.graph.edge_endpoints(e).expect("edge");
                let end = if send { s } else { d };
                debug_assert_eq!(mapping.node_of(end), l.node);
                c.push(Lit::Place(end, l.node, false));
                c.push(Lit::Route(e, l.network, false));
                if !le(sum, l.capacity) {
                    break;
                }
            }
            if !le(sum, l.capacity) {
                out.push((
                    c,
                    format!(
                        "{} {} on {}",
                        cluster.node(l.node).name,
                        if send { "sends" } else { "receives" },
                        cluster.network(l.network).name
                    ),
                ));
            }
        }
    }
}

fn latency(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    mapping: &Mapping,
    p: &Prediction,
    out: &mut Vec<(Vec<Lit>, String)>,
) {
    for r in &app.requirements {
        let Requirement::MaxLatency { name, path, max_s } = r else {
            continue;
        };
        if !path.iter().filter_map(|o| an.module_of[o.index()]).all(|mi| an.constant_pace(mi)) {
            continue;
        }
        let l = perf::path_latency(app, cluster, mapping, &p.modules, &p.module_of, path);
        if le(l, *max_s) {
            continue;
        }
        // Rebuild the bound from T_it_sync: a sound mapping would run at that pace.
        let base: f64 = path.iter().filter_map(|o| an.module_of[o.index()]).map(|mi| an.tit_lo[mi]).sum();
        let mut comm = 0.0;
        let mut c = Vec::new();
        for pair in path.windows(2) {
            let mut best = (0.0, None);
            for e in app.graph.edges_connecting(pair[0], pair[1]) {
                use petgraph::visit::EdgeRef;
                let t = perf::comm_time(app, cluster, mapping, e.id());
                if t > best.0 {
                    best = (t, Some((e.id(), mapping.route(e.id()))));
                }
            }
            if let (t, Some((e, Route::Net(k)))) = best {
                comm += t;
                c.push(Lit::Route(e, k, false));
            }
        }
        if !le(base + comm, *max_s) {
            out.push((c, format!("latency of {name}")));
        }
    }
}
