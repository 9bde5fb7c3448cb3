//! Output of `flowmap solve`: JSON, text, a mapping file `check` reads back, and Graphviz DOT.

use super::json::check_json;
use super::text::check_text;
use crate::model::{Application, Cluster, Mapping, Route};
use crate::solve::Outcome;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Non-local edges per connection and network.
fn routes(app: &Application, m: &Mapping) -> BTreeMap<usize, BTreeMap<u32, Vec<crate::model::EdgeId>>> {
    let mut out: BTreeMap<usize, BTreeMap<u32, Vec<_>>> = BTreeMap::new();
    for e in app.graph.edge_indices() {
        if let Route::Net(k) = m.route(e) {
            out.entry(app.graph[e].connection.ix()).or_default().entry(k.0).or_default().push(e);
        }
    }
    out
}

pub fn mapping_json(app: &Application, cluster: &Cluster, m: &Mapping) -> Value {
    let mut place = serde_json::Map::new();
    for o in app.graph.node_indices() {
        let p = m.placement[o.index()];
        let v = match p.cpu {
            Some(c) => json!({"node": cluster.node(p.node).name, "cpu": c}),
            None => json!(cluster.node(p.node).name),
        };
        place.insert(app.object(o).name.clone(), v);
    }
    let mut r = Vec::new();
    for e in app.graph.edge_indices() {
        if let Route::Net(k) = m.route(e) {
            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
            r.push(json!({"connection": app.connections[app.graph[e].connection.ix()].name, "from": app.object(s).name, "to": app.object(d).name, "network": cluster.network(k).name}));
        }
    }
    json!({"place": place, "routes": r})
}

pub fn solve_json(app: &Application, cluster: &Cluster, o: &Outcome) -> Value {
    json!({
        "status": o.status.name(),
        "mapping": o.mapping.as_ref().map(|m| mapping_json(app, cluster, m)),
        "check": match (&o.mapping, &o.report) {
            (Some(m), Some(r)) => check_json(app, cluster, m, r),
            _ => Value::Null,
        },
        "reasons": o.reasons,
        "nodes_used": o.objective.map(|x| x.0),
        "bound": o.objective.map(|x| x.1),
        "stats": {
            "time_s": (o.stats.time_s * 1e6).round() / 1e6,
            "build_s": (o.stats.build_s * 1e6).round() / 1e6,
            "constraints": o.stats.constraints,
            "rejected_by_verifier": o.stats.rejected,
            "general_nogoods": o.stats.general_nogoods,
            "greedy_s": (o.stats.greedy_s * 1e6).round() / 1e6,
            "greedy_nodes": o.stats.greedy_nodes,
            "found_by": o.stats.found_by,
            "skipped_families": o.stats.skipped,
            "presolve_removed": o.stats.presolve_removed,
            "presolve_by_reason": o.stats.presolve_by_reason,
            "lns_s": (o.stats.lns_s * 1e6).round() / 1e6,
            "lns": {
                "iterations": o.stats.lns.iterations,
                "improvements": o.stats.lns.improvements,
                "sat": o.stats.lns.sat,
                "unsat": o.stats.lns.unsat,
                "unknown": o.stats.lns.unknown,
                "rejected": o.stats.lns.rejected,
            },
        },
    })
}

pub fn solve_text(app: &Application, cluster: &Cluster, o: &Outcome) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Status: {}", o.status.name());
    if let Some((v, b)) = o.objective {
        let _ = writeln!(out, "Nodes used: {v} (proven lower bound {b})");
    }
    for r in &o.reasons {
        let _ = writeln!(out, "  reason: {r}");
    }
    if let (Some(m), Some(r)) = (&o.mapping, &o.report) {
        let _ = writeln!(out, "\nMapping\n");
        for g in &app.groups {
            let nodes: Vec<&str> = g.objects.iter().map(|&ob| cluster.node(m.node_of(ob)).name.as_str()).collect();
            let _ = writeln!(out, "  {:<12} {}", g.name, nodes.join(" "));
        }
        for (c, nets) in routes(app, m) {
            for (k, edges) in nets {
                let _ = writeln!(
                    out,
                    "  route {} on {} ({} edge(s))",
                    app.connections[c].name,
                    cluster.networks[k as usize].name,
                    edges.len()
                );
            }
        }
        let _ = writeln!(out);
        out += &check_text(app, cluster, m, r);
    }
    let _ =
        writeln!(out, "\nSearch: {:.3} s, {} candidate(s) rejected by the verifier", o.stats.time_s, o.stats.rejected);
    if let Some(by) = o.stats.found_by {
        let _ = writeln!(out, "Mapping found by: {by}");
    }
    if !o.stats.skipped.is_empty() {
        let _ = writeln!(out, "Left out of the CSP as too large: {}", o.stats.skipped.join(", "));
    }
    out
}

/// A mapping file in the format `flowmap check` reads.
pub fn mapping_toml(app: &Application, cluster: &Cluster, m: &Mapping) -> String {
    let mut out = String::from("# Written by flowmap solve.\n[place]\n");
    for o in app.graph.node_indices() {
        let p = m.placement[o.index()];
        let node = quote(&cluster.node(p.node).name);
        match p.cpu {
            Some(c) => {
                let _ = writeln!(out, "{} = {{ node = {node}, cpu = {c} }}", quote(&app.object(o).name));
            }
            None => {
                let _ = writeln!(out, "{} = {node}", quote(&app.object(o).name));
            }
        }
    }
    for (c, nets) in routes(app, m) {
        let cname = &app.connections[c].name;
        let single = nets.len() == 1;
        for (k, edges) in nets {
            let net = quote(&cluster.networks[k as usize].name);
            if single {
                let _ = writeln!(out, "\n[[route]]\nconnection = {}\nnetwork = {net}", quote(cname));
            } else {
                for e in edges {
                    let (s, d) = app.graph.edge_endpoints(e).expect("edge");
                    let _ = writeln!(
                        out,
                        "\n[[route]]\nconnection = {}\nfrom = {}\nto = {}\nnetwork = {net}",
                        quote(cname),
                        quote(&app.object(s).name),
                        quote(&app.object(d).name)
                    );
                }
            }
        }
    }
    out
}

/// Graphviz: one box per node holding its objects; non-local edges labelled with their network.
pub fn mapping_dot(app: &Application, cluster: &Cluster, m: &Mapping) -> String {
    let mut out = String::from("digraph mapping {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n");
    for (i, n) in cluster.nodes.iter().enumerate() {
        let here: Vec<_> = app.graph.node_indices().filter(|&o| m.node_of(o).ix() == i).collect();
        if here.is_empty() {
            continue;
        }
        let nets: Vec<&str> = n.networks.iter().map(|&k| cluster.network(k).name.as_str()).collect();
        let _ = writeln!(
            out,
            "  subgraph {} {{\n    label={};",
            quote(&format!("cluster_{}", n.name)),
            quote(&format!("{} ({} x {}; {})", n.name, n.cpus, n.processor, nets.join(", ")))
        );
        for o in here {
            let shape = if app.object(o).is_module() { "" } else { ", shape=diamond" };
            let _ = writeln!(out, "    {} [label={}{shape}];", quote(&app.object(o).name), quote(&app.object(o).name));
        }
        out += "  }\n";
    }
    for e in app.graph.edge_indices() {
        let (s, d) = app.graph.edge_endpoints(e).expect("edge");
        let attrs = match m.route(e) {
            Route::Net(k) => format!(" [label={}]", quote(&cluster.network(k).name)),
            Route::Local => " [style=dashed]".to_string(),
            Route::Unreachable => " [color=red]".to_string(),
        };
        let _ = writeln!(out, "  {} -> {}{attrs};", quote(&app.object(s).name), quote(&app.object(d).name));
    }
    out += "}\n";
    out
}
