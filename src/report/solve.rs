//! Output of `flowmap solve`: JSON, text, and a mapping file `check` reads back.

use super::json::check_json;
use super::style::{fold_names, natural, Style};
use super::text::{detail_text, summary_text};
use crate::model::{Application, Cluster, Mapping, Route};
use crate::perf::Headroom;
use crate::solve::Outcome;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

pub(crate) fn quote(s: &str) -> String {
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
    // Natural order of names (`latest[2]` before `latest[10]`).
    let mut objects: Vec<_> = app.graph.node_indices().collect();
    objects.sort_by(|&a, &b| natural(&app.object(a).name, &app.object(b).name));
    for o in objects {
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
            "must_share": {"objects": o.stats.must_share.0, "groups": o.stats.must_share.1},
            "class_bound": o.stats.class_bound,
            "bound_s": (o.stats.bound_s * 1e6).round() / 1e6,
            "lns_s": (o.stats.lns_s * 1e6).round() / 1e6,
            "walk_s": (o.stats.walk_s * 1e6).round() / 1e6,
            "squeeze_s": (o.stats.squeeze_s * 1e6).round() / 1e6,
            "shapes_s": (o.stats.shapes_s * 1e6).round() / 1e6,
            "shapes": {
                "tried": o.stats.shapes.tried,
                "refuted": o.stats.shapes.refuted,
                "undecided": o.stats.shapes.undecided,
                "open": o.stats.shapes.open.iter().map(|s| json!({
                    "size": s.size,
                    "split": s.split,
                    "cases": s.cases,
                    "packed": s.packed,
                    "settled": s.settled,
                    "unsettled": s.unsettled,
                    "fresh": s.fresh,
                })).collect::<Vec<_>>(),
                "unlisted": o.stats.shapes.unlisted,
                "cluster_bound": o.stats.shapes.cluster_bound,
                "cluster_s": (o.stats.shapes.cluster_s * 1e6).round() / 1e6,
                "boxed": o.stats.shapes.boxed,
                "boxes_s": (o.stats.shapes.boxes_s * 1e6).round() / 1e6,
            },
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

/// One line per group: its instances' nodes, folded (`fluid  node11..node18 (4 each)`).
pub(crate) fn mapping_lines(app: &Application, cluster: &Cluster, m: &Mapping) -> String {
    let mut out = String::new();
    let w = app.groups.iter().map(|g| g.name.len()).max().unwrap_or(0).max(8);
    for g in &app.groups {
        let nodes: Vec<&str> = g.objects.iter().map(|&ob| cluster.node(m.node_of(ob)).name.as_str()).collect();
        let _ = writeln!(out, "  {:<w$}  {}", g.name, fold_names(&nodes, 90));
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
    out
}

pub fn solve_text(app: &Application, cluster: &Cluster, o: &Outcome, st: &Style) -> String {
    let mut out = String::new();
    let status = match o.status {
        crate::solve::Status::Feasible | crate::solve::Status::Optimal => st.good(o.status.name()),
        crate::solve::Status::Infeasible => st.bad(o.status.name()),
        crate::solve::Status::Unknown => st.warn(o.status.name()),
    };
    let _ = writeln!(out, "Status: {status}");
    if let Some((v, b)) = o.objective {
        let _ = writeln!(out, "Nodes used: {v} (proven lower bound {b})");
        if b < v {
            if let Some(line) = open_shapes_line(&o.stats.shapes.open, &o.stats.shapes.unlisted) {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    for r in &o.reasons {
        let _ = writeln!(out, "  reason: {r}");
    }
    if let (Some(m), Some(r)) = (&o.mapping, &o.report) {
        let _ = writeln!(out);
        out += &summary_text(app, cluster, m, r, st);
        let _ = writeln!(out, "\nMapping");
        out += &mapping_lines(app, cluster, m);
        out += &detail_text(app, cluster, m, r, st);
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

/// Why the bound stayed below the best mapping, from the search by shape: the smallest size
/// with undecided shapes, and where their proofs stand (`OpenShape`).
fn open_shapes_line(open: &[crate::solve::shapes::OpenShape], unlisted: &[i64]) -> Option<String> {
    // (Both ascending.) A size with too many shapes to list stops the proof there first.
    let first_unlisted = unlisted.first().copied();
    let size = match (open.first().map(|s| s.size), first_unlisted) {
        (Some(a), Some(b)) if b <= a => None,
        (Some(a), _) => Some(a),
        (None, _) => None,
    };
    let Some(size) = size else {
        let size = first_unlisted?;
        return Some(format!(
            "Undecided: {size} nodes has too many shapes to list whole; the search by shape tries some but cannot prove that size"
        ));
    };
    let here: Vec<&crate::solve::shapes::OpenShape> = open.iter().filter(|s| s.size == size).collect();
    let sum = |f: fn(&crate::solve::shapes::OpenShape) -> usize| here.iter().map(|s| f(s)).sum::<usize>();
    let (cases, packed, settled, unsettled, fresh) =
        (sum(|s| s.cases), sum(|s| s.packed), sum(|s| s.settled), sum(|s| s.unsettled), sum(|s| s.fresh));
    let mut parts = Vec::new();
    if packed > 0 {
        parts.push(format!("{packed} packed (no walk from the packing reached a sound mapping)"));
    }
    if settled > 0 {
        parts.push(format!("{settled} neither packed nor refuted by the packing search"));
    }
    if unsettled > 0 {
        parts.push(format!("{unsettled} whose pattern bound ran out of time"));
    }
    if fresh > 0 {
        parts.push(format!("{fresh} not reached"));
    }
    let unsplit = here.iter().filter(|s| !s.split).count();
    let mut line = format!(
        "Undecided: {} shape(s) of {size} nodes, {cases} open case(s) of the split on pace roots' types",
        here.len()
    );
    if !parts.is_empty() {
        line += &format!(": {}", parts.join(", "));
    }
    if unsplit > 0 {
        line += &format!(" ({unsplit} shape(s) whose split was cut short: their kept cases only)");
    }
    Some(line)
}

/// Where a written mapping came from, for the comment at the top of `--out` files.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    /// The flowmap version and subcommand, e.g. `flowmap 0.1.0 solve`.
    pub tool: String,
    pub app: String,
    pub cluster: String,
    /// `--set` values as given (NAME=VALUE).
    pub set: Vec<String>,
    pub headroom: Headroom,
}

/// A mapping file in the format `flowmap check` reads, starting with where it came from.
pub fn mapping_toml(app: &Application, cluster: &Cluster, m: &Mapping, from: &Provenance) -> String {
    let mut out = format!(
        "# Written by {}.\n# application: {}\n# cluster: {}\n# --set: {}\n",
        from.tool,
        from.app,
        from.cluster,
        if from.set.is_empty() { "none".to_string() } else { from.set.join(" ") }
    );
    if !from.headroom.is_none() {
        let _ = writeln!(out, "# headroom: links {}, CPUs {}", from.headroom.link.min(1.0), from.headroom.cpu.min(1.0));
    }
    out += "[place]\n";
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

#[cfg(test)]
mod tests {
    use super::open_shapes_line;
    use crate::solve::shapes::OpenShape;

    fn shape(size: i64, split: bool, cases: usize, packed: usize, settled: usize) -> OpenShape {
        OpenShape { size, split, cases, packed, settled, unsettled: 0, fresh: cases - packed - settled }
    }

    #[test]
    fn the_open_shapes_line_names_the_smallest_undecided_size_and_why() {
        assert_eq!(open_shapes_line(&[], &[]), None);
        // Two shapes of 10 nodes (one split cut short), one of 11: the line is about 10.
        let open = [shape(10, true, 3, 2, 1), shape(10, false, 2, 0, 0), shape(11, true, 1, 1, 0)];
        assert_eq!(
            open_shapes_line(&open, &[]).as_deref(),
            Some(
                "Undecided: 2 shape(s) of 10 nodes, 5 open case(s) of the split on pace roots' types: 2 packed (no \
                 walk from the packing reached a sound mapping), 1 neither packed nor refuted by the packing search, \
                 2 not reached (1 shape(s) whose split was cut short: their kept cases only)"
            )
        );
        // A size with too many shapes at or below the smallest open one comes first.
        let line = open_shapes_line(&open, &[9, 12]).expect("a line");
        assert!(line.starts_with("Undecided: 9 nodes has too many shapes"), "{line}");
        assert!(open_shapes_line(&open, &[11]).expect("a line").contains("of 10 nodes"));
        assert!(open_shapes_line(&[], &[7]).expect("a line").starts_with("Undecided: 7 nodes"));
    }
}
