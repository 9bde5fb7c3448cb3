//! Graphviz DOT: the group graph (one box per module or filter group, edges aggregated per
//! group pair and network with MB/s, coloured by link utilisation), or the instance view (one
//! box per node holding its objects).

use super::solve::quote;
use super::style::{fold_distinct, num, pct};
use crate::model::{Application, Cluster, Mapping, Route};
use crate::verify::{self, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// How much a DOT drawing shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// One box per group, edges aggregated (readable at any size).
    #[default]
    Groups,
    /// One box per object inside its node, one edge per instance-level edge.
    Instances,
}

/// Colour of a utilisation against the headroom: green, orange from 70 % of it, red above.
pub(crate) fn util_color(u: f64, limit: f64) -> &'static str {
    if !verify::le(u, limit) {
        "#c62828"
    } else if u >= 0.7 * limit {
        "#ef6c00"
    } else {
        "#2e7d32"
    }
}

/// Objects named as the first subject of an error diagnostic (the modules with a problem).
fn troubled(app: &Application, r: Option<&Report>) -> BTreeSet<String> {
    let names: BTreeSet<&str> = app.graph.node_indices().map(|o| app.object(o).name.as_str()).collect();
    r.map(|r| {
        r.diagnostics
            .iter()
            .filter(|d| d.kind.is_error())
            .flat_map(|d| d.subjects.first())
            .filter(|s| names.contains(s.as_str()))
            .cloned()
            .collect()
    })
    .unwrap_or_default()
}

/// Per edge: its utilisation (the busier of its sending and receiving link), if routed.
fn edge_util(app: &Application, m: &Mapping, r: Option<&Report>) -> Vec<Option<f64>> {
    let Some(p) = r.and_then(|r| r.prediction.as_ref()) else { return vec![None; app.graph.edge_count()] };
    let link: BTreeMap<(u32, u32), (f64, f64, f64)> =
        p.links.iter().map(|l| ((l.node.0, l.network.0), (l.send, l.recv, l.capacity))).collect();
    app.graph
        .edge_indices()
        .map(|e| {
            let Route::Net(k) = m.route(e) else { return None };
            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
            let a = link.get(&(m.node_of(s).0, k.0)).map(|x| x.0 / x.2).unwrap_or(0.0);
            let b = link.get(&(m.node_of(d).0, k.0)).map(|x| x.1 / x.2).unwrap_or(0.0);
            Some(a.max(b))
        })
        .collect()
}

pub fn mapping_dot(app: &Application, cluster: &Cluster, m: &Mapping, r: Option<&Report>, detail: Detail) -> String {
    match detail {
        Detail::Groups => group_dot(app, cluster, m, r),
        Detail::Instances => instance_dot(app, cluster, m, r),
    }
}

fn group_dot(app: &Application, cluster: &Cluster, m: &Mapping, r: Option<&Report>) -> String {
    let p = r.and_then(|r| r.prediction.as_ref());
    let limit = r.map(|r| r.headroom.link.min(1.0)).unwrap_or(1.0);
    let verdict = match r.map(|r| r.verdict) {
        Some(verify::Verdict::Sound) => ": sound",
        Some(verify::Verdict::Unsound) => ": UNSOUND",
        None => "",
    };
    let mut out = format!(
        "digraph groups {{\n  rankdir=LR;\n  label={};\n  labelloc=t;\n  fontname=\"Helvetica\";\n  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n",
        quote(&format!("{} on {}{verdict} (edges: MB/s, network, busiest link's use)", app.name, cluster.name))
    );
    let bad = troubled(app, r);
    for (gi, g) in app.groups.iter().enumerate() {
        let nodes: Vec<&str> = g.objects.iter().map(|&o| cluster.node(m.node_of(o)).name.as_str()).collect();
        let count = if g.objects.len() > 1 { format!(" x{}", g.objects.len()) } else { String::new() };
        let hz = p
            .map(|p| {
                let f: Vec<f64> = g.objects.iter().map(|&o| p.frequency[o.index()]).collect();
                let (lo, hi) = f.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| (a.0.min(x), a.1.max(x)));
                if num(lo) == num(hi) {
                    format!("\\n{} Hz", num(lo))
                } else {
                    format!("\\n{}..{} Hz", num(lo), num(hi))
                }
            })
            .unwrap_or_default();
        let label = format!("{}{count}\\n{}{hz}", g.name, fold_distinct(&nodes, 40));
        let shape = if g.is_module { "" } else { ", shape=diamond" };
        let alarm = if g.objects.iter().any(|&o| bad.contains(&app.object(o).name)) {
            ", color=\"#c62828\", penwidth=2.5"
        } else {
            ""
        };
        let _ = writeln!(out, "  g{gi} [label=\"{}\"{shape}{alarm}];", label.replace('"', "\\\""));
    }
    // (src group, dst group, network or local) -> (connections, bytes/s, worst utilisation).
    type Key = (u32, u32, Option<u32>);
    let util = edge_util(app, m, r);
    let mut agg: BTreeMap<Key, (BTreeSet<String>, f64, f64, usize)> = BTreeMap::new();
    for e in app.graph.edge_indices() {
        let (s, d) = app.graph.edge_endpoints(e).expect("edge");
        let net = match m.route(e) {
            Route::Net(k) => Some(k.0),
            Route::Local => None,
            Route::Unreachable => Some(u32::MAX),
        };
        let key = (app.object(s).group.0, app.object(d).group.0, net);
        let a = agg.entry(key).or_default();
        a.0.insert(app.connections[app.graph[e].connection.ix()].name.clone());
        a.1 += p.map(|p| app.graph[e].volume * p.edge_rate[e.index()]).unwrap_or(0.0);
        a.2 = a.2.max(util[e.index()].unwrap_or(0.0));
        a.3 += 1;
    }
    for ((s, d, net), (conns, bytes, u, n)) in agg {
        let conns: Vec<String> = conns.into_iter().collect();
        let rate = if p.is_some() { format!("{} MB/s ", num(bytes / 1e6)) } else { String::new() };
        let edges = if n > 1 { format!(", {n} edges") } else { String::new() };
        let attrs = match net {
            None => format!("label=\"{}\\n{rate}local{edges}\", style=dashed, color=\"#777777\"", conns.join(", ")),
            Some(u32::MAX) => format!("label=\"{}\\nunreachable{edges}\", color=\"#c62828\"", conns.join(", ")),
            Some(k) => {
                let c = util_color(u, limit);
                let w = if c == "#c62828" { 3.0 } else { 1.0 + 2.0 * u.min(1.0) };
                format!(
                    "label=\"{}\\n{rate}{} ({}){edges}\", color=\"{c}\", fontcolor=\"{c}\", penwidth={w:.1}",
                    conns.join(", "),
                    cluster.networks[k as usize].name,
                    pct(u)
                )
            }
        };
        let _ = writeln!(out, "  g{s} -> g{d} [{attrs}];");
    }
    out += "}\n";
    out
}

fn instance_dot(app: &Application, cluster: &Cluster, m: &Mapping, r: Option<&Report>) -> String {
    let mut out = String::from("digraph mapping {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n");
    let bad = troubled(app, r);
    let limit = r.map(|r| r.headroom.link.min(1.0)).unwrap_or(1.0);
    let mut here: Vec<Vec<_>> = vec![Vec::new(); cluster.nodes.len()];
    for o in app.graph.node_indices() {
        here[m.node_of(o).ix()].push(o);
    }
    for (i, n) in cluster.nodes.iter().enumerate() {
        let nets: Vec<&str> = n.networks.iter().map(|&k| cluster.network(k).name.as_str()).collect();
        let _ = writeln!(
            out,
            "  subgraph {} {{\n    label={};",
            quote(&format!("cluster_{}", n.name)),
            quote(&format!("{} ({} x {}; {})", n.name, n.cpus, n.processor, nets.join(", ")))
        );
        if here[i].is_empty() {
            // Unused nodes stay visible, faded.
            let _ = writeln!(
                out,
                "    style=dashed;\n    color=\"#bbbbbb\";\n    fontcolor=\"#999999\";\n    {} [label=\"unused\", shape=plaintext, fontcolor=\"#999999\"];",
                quote(&format!("unused {}", n.name))
            );
        }
        for &o in &here[i] {
            let shape = if app.object(o).is_module() { "" } else { ", shape=diamond" };
            let alarm = if bad.contains(&app.object(o).name) { ", color=\"#c62828\", penwidth=2" } else { "" };
            let _ = writeln!(
                out,
                "    {} [label={}{shape}{alarm}];",
                quote(&app.object(o).name),
                quote(&app.object(o).name)
            );
        }
        out += "  }\n";
    }
    let util = edge_util(app, m, r);
    for e in app.graph.edge_indices() {
        let (s, d) = app.graph.edge_endpoints(e).expect("edge");
        let attrs = match m.route(e) {
            Route::Net(k) => match util[e.index()] {
                Some(u) if !verify::le(u, limit) => {
                    format!(" [label={}, color=\"#c62828\", penwidth=2]", quote(&cluster.network(k).name))
                }
                _ => format!(" [label={}]", quote(&cluster.network(k).name)),
            },
            Route::Local => " [style=dashed]".to_string(),
            Route::Unreachable => " [color=red]".to_string(),
        };
        let _ = writeln!(out, "  {} -> {}{attrs};", quote(&app.object(s).name), quote(&app.object(d).name));
    }
    out += "}\n";
    out
}
