//! The solver-neutral export of the static CSP as JSON (`flowmap export-csp`), read by the
//! CP-SAT reference script under `benches/`. Schema: see `benches/cpsat_reference.py`.

use crate::csp::rows::Neutral;
use crate::model::{Application, Cluster};
use serde_json::{json, Value};

pub fn export_json(app: &Application, cluster: &Cluster, n: &Neutral) -> Value {
    let nodes: Vec<Value> = cluster
        .nodes
        .iter()
        .map(
            |x| json!({"name": x.name, "cpus": x.cpus, "networks": x.networks.iter().map(|k| k.0).collect::<Vec<_>>()}),
        )
        .collect();
    let networks: Vec<Value> =
        cluster.networks.iter().map(|k| json!({"name": k.name, "bandwidth": k.bandwidth})).collect();
    let objects: Vec<Value> = n
        .objects
        .iter()
        .map(|o| {
            json!({
                "name": app.object(o.object).name,
                "module": app.object(o.object).is_module(),
                "domain": o.domain.iter().map(|d| d.0).collect::<Vec<_>>(),
                "load": o.load,
                "self_paced": o.self_paced,
                "solo": o.solo,
            })
        })
        .collect();
    let edges: Vec<Value> = n
        .edges
        .iter()
        .map(|e| {
            let (s, d) = app.graph.edge_endpoints(e.edge).expect("edge");
            json!({
                "name": app.edge_name(e.edge),
                "src": s.index(),
                "dst": d.index(),
                "connection": app.connections[app.graph[e.edge].connection.ix()].name,
                "bw": e.bw,
                "networks": e.networks.iter().map(|k| k.0).collect::<Vec<_>>(),
                "can_local": e.can_local,
            })
        })
        .collect();
    let rows: Vec<Value> = n
        .rows
        .iter()
        .map(|r| {
            json!({
                "family": r.family,
                "object": r.object.index(),
                "node": r.node.0,
                "heavy": r.heavy.iter().map(|o| o.index()).collect::<Vec<_>>(),
                "light": r.light.iter().map(|o| o.index()).collect::<Vec<_>>(),
                "cap": r.cap,
            })
        })
        .collect();
    json!({
        "application": app.name,
        "cluster": cluster.name,
        "nodes": nodes,
        "networks": networks,
        "objects": objects,
        "edges": edges,
        "rows": rows,
        "self_paced_cap": n.self_paced_cap,
        "filter_locality": n.filter_locality,
        "nodes_lower_bound": n.nodes_lower_bound,
    })
}
