//! Output of `flowmap explain` (and the conflict `solve` prints, the smallest fix `check`
//! prints): text, JSON, and each repair as a what-if overlay (a cluster overlay with `extends`,
//! an application overlay with `extends`, `--set` values, or lines for the mapping file).

use super::solve::quote;
use super::style::{num, Style};
use crate::explain::{Change, Conflict, Explanation, MoveSearch, Repair};
use crate::model::{Application, Cluster, EdgeId, ObjectKind, PerType, Route};
use serde_json::{json, Value};
use std::fmt::Write;

/// What overlays extend: the inputs' file names as an overlay saved next to them would name
/// them, and the command line that solves the changed instance.
#[derive(Clone, Debug, Default)]
pub struct OverlayBase {
    /// `extends` of an application overlay (e.g. `fluid-particle.toml`).
    pub app: String,
    /// `extends` of a cluster overlay (e.g. `lifo-2007.toml`).
    pub cluster: String,
    /// The `--set` values given (NAME=VALUE).
    pub set: Vec<String>,
}

/// The overlay of a repair: (what it applies to, its text). Cluster and application overlays
/// are TOML files extending the inputs; parameters are `--set` values; a fixed mapping's
/// changes are lines for its file.
pub fn repair_overlay(app: &Application, cluster: &Cluster, r: &Repair, base: &OverlayBase) -> (&'static str, String) {
    let target = r.changes.first().map(|c| c.target()).unwrap_or("cluster");
    let text = match target {
        "cluster" => cluster_overlay(cluster, &r.changes, base),
        "application" => app_overlay(app, cluster, &r.changes, base),
        "parameters" => r
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Param { name, value } => Some(format!("--set {name}={}", value_text(*value))),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => mapping_lines(app, cluster, &r.changes),
    };
    (target, text)
}

/// A number as TOML/expression text that reads back to the same f64.
fn value_text(v: f64) -> String {
    format!("{v}")
}

/// `v` (in base units) written with `unit` (factor `f`) when a short decimal there reads back
/// to exactly `v` (the parser multiplies by the unit's factor), else with the base unit.
fn quantity(v: f64, unit: &str, f: f64, base: &str) -> String {
    for digits in [6, 10] {
        let s = format!("{:.*}", digits, v / f);
        let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
        if s.parse::<f64>().map(|x| x * f == v).unwrap_or(false) {
            return format!("\"{s} {unit}\"");
        }
    }
    format!("\"{} {base}\"", value_text(v))
}

fn list(v: &[String]) -> String {
    format!("[{}]", v.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", "))
}

fn cluster_overlay(cluster: &Cluster, changes: &[Change], base: &OverlayBase) -> String {
    let mut out =
        format!("extends = {}\nname = {}\n", quote(&base.cluster), quote(&format!("{}-what-if", cluster.name)));
    let latency = |k: &crate::model::Network| quantity(k.latency, "ms", 1e-3, "s");
    for c in changes {
        match c {
            Change::Bandwidth { network, bandwidth } => {
                let k = cluster.network(*network);
                let _ = write!(
                    out,
                    "\n[[networks]]\nname = {}\nbandwidth = {}\nlatency = {}\n",
                    quote(&k.name),
                    quantity(*bandwidth, "MB/s", 1e6, "B/s"),
                    latency(k)
                );
            }
            Change::ReplaceNetwork { network, like } => {
                let (k, l) = (cluster.network(*network), cluster.network(*like));
                let _ = write!(
                    out,
                    "\n# {} becomes a network like {}\n[[networks]]\nname = {}\nbandwidth = {}\nlatency = {}\n",
                    k.name,
                    l.name,
                    quote(&k.name),
                    quantity(l.bandwidth, "MB/s", 1e6, "B/s"),
                    latency(l)
                );
            }
            Change::Attach { nodes, network } => {
                let names: Vec<String> = nodes.iter().map(|&n| cluster.node(n).name.clone()).collect();
                let _ = write!(
                    out,
                    "\n[[attach]]\nnodes = {}\nnetworks = {}\n",
                    list(&names),
                    list(&[cluster.network(*network).name.clone()])
                );
            }
            Change::Cpus { node, cpus } => {
                out += &nodes_block(cluster, *node, &quote(&cluster.node(*node).name), *cpus);
            }
            Change::AddNodes { like, names } => {
                out += &nodes_block(cluster, *like, &list(names), cluster.node(*like).cpus);
            }
            _ => {}
        }
    }
    out
}

/// A `[[nodes]]` entry: `names` (TOML) like node `like`, with `cpus` CPUs.
fn nodes_block(cluster: &Cluster, like: crate::model::NodeId, names: &str, cpus: u32) -> String {
    let n = cluster.node(like);
    let nets: Vec<String> = n.networks.iter().map(|&k| cluster.network(k).name.clone()).collect();
    format!(
        "\n[[nodes]]\nnames = {names}\ncpus = {cpus}\nprocessor = {}\nnetworks = {}\n",
        quote(&n.processor),
        list(&nets)
    )
}

fn app_overlay(app: &Application, cluster: &Cluster, changes: &[Change], base: &OverlayBase) -> String {
    let mut out = format!("extends = {}\n", quote(&base.app));
    for c in changes {
        match c {
            Change::Pin { group, pins } => {
                let _ = write!(out, "\n[[modules]]\nname = {}\npin = {}\n", quote(&app.group(*group).name), list(pins));
            }
            Change::Allow { group, nodes } => {
                let g = app.group(*group);
                let table = if g.is_module { "modules" } else { "filters" };
                let _ = write!(out, "\n[[{table}]]\nname = {}\nallowed_nodes = {}\n", quote(&g.name), list(nodes));
            }
            Change::MinFrequency { requirement, hz } => {
                let name = crate::explain::facts::requirement_name(&app.requirements[*requirement]);
                let _ = write!(
                    out,
                    "\n[[requirements]]\nname = {}\nmin_frequency = \"{} Hz\"\n",
                    quote(name),
                    value_text(*hz)
                );
            }
            Change::MaxLatency { requirement, seconds } => {
                let name = crate::explain::facts::requirement_name(&app.requirements[*requirement]);
                let _ = write!(
                    out,
                    "\n[[requirements]]\nname = {}\nmax_latency = {}\n",
                    quote(name),
                    quantity(*seconds, "ms", 1e-3, "s")
                );
            }
            Change::Texec { group, processor, seconds } => {
                let g = app.group(*group);
                let ObjectKind::Module(costs) = &app.object(g.objects[0]).kind else { continue };
                let mut types: Vec<String> = cluster.nodes.iter().map(|n| n.processor.clone()).collect();
                types.sort();
                types.dedup();
                let entries: Vec<String> = types
                    .iter()
                    .filter_map(|t| {
                        let v = if t == processor {
                            Some(*seconds)
                        } else {
                            match &costs.texec {
                                PerType::Uniform(v) => Some(*v),
                                PerType::ByType(m) => m.get(t).copied(),
                            }
                        };
                        v.map(|v| format!("{t} = {}", quantity(v, "ms", 1e-3, "s")))
                    })
                    .collect();
                let _ = write!(out, "\n[[modules]]\nname = {}\ntexec = {{ {} }}\n", quote(&g.name), entries.join(", "));
            }
            Change::Volume { connection, bytes } => {
                let conn = &app.connections[connection.ix()];
                let volume = format!("\"{} B\"", value_text(*bytes));
                match conn.name.strip_suffix(".mpi").filter(|g| app.find_group(g).is_some()) {
                    Some(g) => {
                        let _ = write!(out, "\n[[modules]]\nname = {}\nmpi = {{ volume = {volume} }}\n", quote(g));
                    }
                    None => {
                        let _ = write!(out, "\n[[connections]]\nname = {}\nvolume = {volume}\n", quote(&conn.name));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn mapping_lines(app: &Application, cluster: &Cluster, changes: &[Change]) -> String {
    let mut out = String::new();
    for c in changes {
        match c {
            Change::Place { object, node } => {
                let _ = writeln!(
                    out,
                    "[place] {} = {}",
                    quote(&app.object(*object).name),
                    quote(&cluster.node(*node).name)
                );
            }
            Change::Unroute { connection } => {
                let _ =
                    writeln!(out, "remove the [[route]] entries of {}", quote(&app.connections[connection.ix()].name));
            }
            _ => {}
        }
    }
    out
}

fn conflict_json(c: &Conflict) -> Value {
    json!(c
        .facts
        .iter()
        .map(|f| json!({"kind": f.kind, "subjects": f.subjects, "message": f.message, "witness": f.witness}))
        .collect::<Vec<_>>())
}

pub fn explain_json(app: &Application, cluster: &Cluster, e: &Explanation, base: &OverlayBase) -> Value {
    let r3 = |x: f64| (x * 1e3).round() / 1e3;
    json!({
        "status": e.outcome.status.name(),
        "conflict": e.conflict.as_ref().map(conflict_json),
        "minimal": e.conflict.as_ref().map(|c| c.minimal),
        "why": e.conflict.as_ref().map(|c| c.why.clone()).unwrap_or_default(),
        "repairs": e.repairs.iter().map(|r| {
            let (target, overlay) = repair_overlay(app, cluster, r, base);
            json!({
                "change": r.description,
                "target": target,
                "overlay": overlay,
                "size": r.size,
                "verified": true,
                "result": "feasible",
                "nodes_used": r.nodes_used,
            })
        }).collect::<Vec<_>>(),
        "not_helping": e.not_helping,
        "reasons": e.outcome.reasons,
        "stats": {
            "time_s": r3(e.stats.time_s),
            "conflict_s": r3(e.stats.conflict_s),
            "repairs_s": r3(e.stats.repairs_s),
            "facts": e.stats.facts,
            "conflict_size": e.conflict.as_ref().map(|c| c.facts.len()),
            "seeded": e.conflict.as_ref().map(|c| c.seeded),
            "solve_calls": e.stats.solve_calls,
            "cache_hits": e.stats.cache_hits,
            "reused_mappings": e.stats.reused,
        },
    })
}

/// The conflict as text lines (also under `solve`'s "Status: infeasible").
pub fn conflict_text(c: &Conflict, st: &Style) -> String {
    let mut out = String::new();
    let n = c.facts.len();
    if c.minimal {
        let _ = writeln!(
            out,
            "Minimal conflict ({n} fact{}): together they admit no sound mapping; relaxing any one of them admits one (each proven by solving)",
            if n == 1 { "" } else { "s" }
        );
    } else {
        let _ = writeln!(
            out,
            "Conflict ({n} fact{}, {}): together they admit no sound mapping (proven); not shown minimal within the limits",
            if n == 1 { "" } else { "s" },
            st.warn("not minimal")
        );
    }
    for (i, f) in c.facts.iter().enumerate() {
        let _ = writeln!(out, "  {}. [{}] {}", i + 1, f.kind, f.message);
        if let Some(w) = &f.witness {
            let _ = writeln!(out, "       {}", st.dim(w));
        }
    }
    if !c.why.is_empty() {
        let _ = writeln!(out, "Why:");
        out += &capped(&c.why, "  - ");
    }
    out
}

pub fn explain_text(app: &Application, cluster: &Cluster, e: &Explanation, base: &OverlayBase, st: &Style) -> String {
    let mut out = String::new();
    let status = match e.outcome.status {
        crate::solve::Status::Infeasible => st.bad("infeasible (proven: no sound mapping)"),
        crate::solve::Status::Unknown => st.warn("unknown: no answer within the time limit, nothing to explain"),
        _ => st.good("feasible: a sound mapping exists, nothing to explain"),
    };
    let set = if base.set.is_empty() { String::new() } else { format!(" ({})", base.set.join(" ")) };
    let _ = writeln!(out, "{} on {}{set}: {status}", app.name, cluster.name);
    let Some(c) = &e.conflict else {
        return out;
    };
    out += &capped(&e.outcome.reasons, "  reason: ");
    let _ = writeln!(out);
    out += &conflict_text(c, st);
    if !e.repairs.is_empty() {
        let _ = writeln!(out, "\nRepairs (smallest first; each verified: the changed instance has a sound mapping):");
        for (i, r) in e.repairs.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {}. {} -> feasible, {} node{} used",
                i + 1,
                r.description,
                r.nodes_used,
                if r.nodes_used == 1 { "" } else { "s" }
            );
            let (target, text) = repair_overlay(app, cluster, r, base);
            let how = match target {
                "cluster" => "cluster overlay (save next to the cluster file, solve with it as CLUSTER):".to_string(),
                "application" => {
                    "application overlay (save next to the application file, solve with it as APP):".to_string()
                }
                "parameters" => "with".to_string(),
                _ => "in the mapping file:".to_string(),
            };
            if target == "parameters" {
                let _ = writeln!(out, "     {how} {text}");
            } else {
                let _ = writeln!(out, "     {how}");
                out += &indent(&text, 7);
            }
        }
    } else if !e.not_helping.is_empty() || e.stats.repairs_s > 0.0 {
        let _ = writeln!(out, "\nRepairs: none found among the changes tried");
    }
    if !e.not_helping.is_empty() {
        let _ = writeln!(out, "\nTried, does not help:");
        for w in &e.not_helping {
            let _ = writeln!(out, "  - {w}");
        }
    }
    let _ = writeln!(
        out,
        "\nExplain: {:.2} s ({:.2} s conflict, {:.2} s repairs), {} facts, {} solve calls",
        e.stats.time_s, e.stats.conflict_s, e.stats.repairs_s, e.stats.facts, e.stats.solve_calls
    );
    out
}

fn edge_route(app: &Application, cluster: &Cluster, e: EdgeId, r: Route) -> String {
    let net = match r {
        Route::Net(k) => cluster.network(k).name.clone(),
        Route::Local => "local".into(),
        Route::Unreachable => "no network".into(),
    };
    format!("{} on {net}", app.edge_name(e))
}

/// At most five lines, each after `prefix`, then how many more (JSON has them all).
fn capped(lines: &[String], prefix: &str) -> String {
    let mut out: String = lines.iter().take(5).map(|l| format!("{prefix}{l}\n")).collect();
    if lines.len() > 5 {
        let _ = writeln!(out, "{prefix}... and {} more (--format json lists them all)", lines.len() - 5);
    }
    out
}

/// Text indented by `n` spaces (empty lines stay empty).
fn indent(text: &str, n: usize) -> String {
    text.lines().map(|l| if l.is_empty() { "\n".to_string() } else { format!("{:n$}{l}\n", "") }).collect()
}

/// A move's new routes by connection and network.
fn route_groups(
    app: &Application,
    m: &crate::explain::Move,
) -> Vec<(crate::model::ConnectionId, crate::model::NetworkId, Vec<EdgeId>)> {
    let mut out: Vec<(crate::model::ConnectionId, crate::model::NetworkId, Vec<EdgeId>)> = Vec::new();
    for &(e, r) in &m.routes {
        let Route::Net(k) = r else { continue };
        let c = app.graph[e].connection;
        match out.iter_mut().find(|g| g.0 == c && g.1 == k) {
            Some(g) => g.2.push(e),
            None => out.push((c, k, vec![e])),
        }
    }
    out
}

/// `check`'s smallest fix, as text.
pub fn moves_text(app: &Application, cluster: &Cluster, s: &MoveSearch, st: &Style) -> String {
    let mut out = String::new();
    let Some(first) = s.found.first() else {
        if s.complete {
            let _ = writeln!(
                out,
                "\nSmallest fix: no single object move or route change makes this mapping sound ({} checked)",
                s.tried
            );
        } else {
            let _ =
                writeln!(out, "\nSmallest fix: none found among the {} moves checked before the time limit", s.tried);
        }
        return out;
    };
    let _ = writeln!(out, "\nSmallest fix: {} ({})", first.description, st.good("then sound, checked"));
    let _ = writeln!(out, "  in the mapping file:");
    if let Some((o, _, n)) = first.object {
        let _ = writeln!(out, "    [place] {} = {}", quote(&app.object(o).name), quote(&cluster.node(n).name));
    }
    for (conn, net, edges) in route_groups(app, first) {
        let k = quote(&cluster.network(net).name);
        let whole = app.connections[conn.ix()].edges.iter().all(|&e| {
            edges.contains(&e)
                || matches!(first.mapping.route(e), Route::Local)
                || first.mapping.route(e) == Route::Net(net)
        });
        if whole {
            let _ = writeln!(
                out,
                "    [[route]]\n    connection = {}\n    network = {k}",
                quote(&app.connections[conn.ix()].name)
            );
        } else {
            for e in edges {
                let (a, b) = app.graph.edge_endpoints(e).expect("edge");
                let _ = writeln!(
                    out,
                    "    [[route]]\n    connection = {}\n    from = {}\n    to = {}\n    network = {k}",
                    quote(&app.connections[conn.ix()].name),
                    quote(&app.object(a).name),
                    quote(&app.object(b).name)
                );
            }
        }
    }
    for m in s.found.iter().skip(1) {
        let _ = writeln!(out, "  or: {}", m.description);
    }
    out
}

/// `check`'s smallest fix, as JSON.
pub fn moves_json(app: &Application, cluster: &Cluster, s: &MoveSearch) -> Value {
    json!({
        "found": s.found.iter().map(|m| json!({
            "change": m.description,
            "object": m.object.map(|(o, _, _)| app.object(o).name.clone()),
            "from": m.object.map(|(_, f, _)| cluster.node(f).name.clone()),
            "to": m.object.map(|(_, _, t)| cluster.node(t).name.clone()),
            "routes": m.routes.iter().map(|&(e, r)| edge_route(app, cluster, e, r)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "tried": s.tried,
        "complete": s.complete,
    })
}

/// `limit`'s explanation of its edge, as text: the conflict at the smallest infeasible value and
/// the repairs with the limit each gives.
pub fn limit_explain_text(
    app: &Application,
    cluster: &Cluster,
    e: &Explanation,
    new_limits: &[(usize, Option<f64>)],
    base: &OverlayBase,
    st: &Style,
) -> String {
    let mut out = String::from("\nAt the smallest infeasible value:\n");
    let Some(c) = &e.conflict else {
        return out + "  (no proof of infeasibility to explain)\n";
    };
    out += &conflict_text(c, st);
    for &(i, lim) in new_limits {
        let r = &e.repairs[i];
        let (target, text) = repair_overlay(app, cluster, r, base);
        let lim = lim.map(|v| format!("the limit becomes {}", num(v))).unwrap_or_else(|| "new limit not found".into());
        let _ = writeln!(out, "Repair: {} -> {lim}", r.description);
        if target != "parameters" {
            out += &indent(&text, 4);
        }
    }
    out
}

/// Adds the conflict to `solve`'s JSON (`conflict`, `minimal`, `why`).
pub fn add_conflict(v: &mut Value, c: &Conflict) {
    if let Some(o) = v.as_object_mut() {
        o.insert("conflict".into(), conflict_json(c));
        o.insert("minimal".into(), json!(c.minimal));
        o.insert("why".into(), json!(c.why));
    }
}
