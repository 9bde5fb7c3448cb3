//! JSON output of `flowmap check` (schema in README.md, "Output").

use crate::model::{Application, Cluster, Mapping};
use crate::perf::Schedule;
use crate::verify::{Report, Verdict};
use serde_json::{json, Value};

fn num(x: f64) -> Value {
    if x.is_finite() {
        // Round away float noise so equal inputs print equal outputs on every machine.
        let r = (x * 1e9).round() / 1e9;
        json!(r)
    } else {
        Value::Null
    }
}

pub fn check_json(app: &Application, cluster: &Cluster, mapping: &Mapping, r: &Report) -> Value {
    let mut modules = Vec::new();
    let mut filters = Vec::new();
    let mut links = Vec::new();
    let mut schedule = Value::Null;
    if let Some(p) = &r.prediction {
        for m in &p.modules {
            modules.push(json!({
                "name": app.object(m.object).name,
                "node": cluster.node(m.node).name,
                "cpu": m.cpu,
                "texec_ms": num(m.texec * 1e3),
                "ld": num(m.ld),
                "tio_ms": num(m.tio * 1e3),
                "cpu_share": num(m.ldc),
                "tcexec_ms": num(m.tcexec * 1e3),
                "tit_ms": num(m.tit * 1e3),
                "frequency_hz": num(m.frequency()),
                "load": num(m.iteration_load()),
            }));
        }
        for o in app.graph.node_indices().filter(|&o| !app.object(o).is_module()) {
            filters.push(json!({
                "name": app.object(o).name,
                "kind": app.object(o).filter().map(|k| k.name()),
                "node": cluster.node(mapping.node_of(o)).name,
                "frequency_hz": num(p.frequency[o.index()]),
            }));
        }
        for l in &p.links {
            links.push(json!({
                "node": cluster.node(l.node).name,
                "network": cluster.network(l.network).name,
                "send_mbps": num(l.send / 1e6),
                "recv_mbps": num(l.recv / 1e6),
                "capacity_mbps": num(l.capacity / 1e6),
            }));
        }
        schedule = match &p.schedule {
            Schedule::Converged { iterations } => {
                json!({"status": "converged", "iterations": iterations})
            }
            Schedule::Unstable { period, .. } => json!({"status": "unstable", "period": period}),
            Schedule::NoConvergence { iterations, .. } => {
                json!({"status": "no-convergence", "iterations": iterations})
            }
        };
    }
    let diagnostics: Vec<Value> = r
        .diagnostics
        .iter()
        .map(|d| json!({"kind": d.kind.name(), "severity": if d.kind.is_error() {"error"} else {"warning"}, "message": d.message, "subjects": d.subjects}))
        .collect();
    let paths: Vec<Value> =
        r.path_latencies.iter().map(|(n, l)| json!({"name": n, "latency_ms": num(l * 1e3)})).collect();
    json!({
        "verdict": if r.verdict == Verdict::Sound { "sound" } else { "unsound" },
        "application": app.name,
        "cluster": cluster.name,
        "modules": modules,
        "filters": filters,
        "links": links,
        "paths": paths,
        "schedule": schedule,
        "diagnostics": diagnostics,
    })
}
