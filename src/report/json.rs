//! JSON output of `flowmap check` (schema in README.md, "Output").

use super::summary::summarize;
use crate::model::{Application, Cluster, Mapping};
use crate::perf::Schedule;
use crate::verify::{Report, Verdict};
use serde_json::{json, Value};

pub(crate) fn num(x: f64) -> Value {
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
    let s = summarize(app, cluster, mapping, r);
    let latency_bound = |name: &str| {
        app.requirements.iter().find_map(|q| match q {
            crate::model::Requirement::MaxLatency { name: n, max_s, .. } if n == name => Some(num(max_s * 1e3)),
            _ => None,
        })
    };
    let paths: Vec<Value> = r
        .path_latencies
        .iter()
        .map(|(n, l)| json!({"name": n, "latency_ms": num(l * 1e3), "max_latency_ms": latency_bound(n)}))
        .collect();
    let requirements: Vec<Value> = s
        .requirements
        .iter()
        .map(|q| {
            json!({"name": q.name, "what": q.what, "value": num(q.value), "bound": num(q.bound), "unit": q.unit,
                   "relation": q.rel, "margin": num(q.margin), "met": q.margin >= -crate::verify::EPS})
        })
        .collect();
    let groups: Vec<Value> = s
        .groups
        .iter()
        .map(|g| {
            json!({"name": app.group(g.group).name, "instances": g.instances, "nodes": g.nodes,
                   "frequency_min_hz": num(g.fmin), "frequency_max_hz": num(g.fmax), "paced_by": g.pace})
        })
        .collect();
    let summary = json!({
        "nodes_used": s.nodes_used,
        "nodes_total": s.nodes_total,
        "headroom": {"link": num(s.headroom.link.min(1.0)), "cpu": num(s.headroom.cpu.min(1.0))},
        "busiest_cpu": s.cpu.as_ref().map(|c| json!({"node": cluster.node(c.node).name, "cpu": c.cpu, "load": num(c.load),
            "modules": c.objects.iter().map(|&o| app.object(o).name.as_str()).collect::<Vec<_>>()})),
        "busiest_link": s.link.as_ref().map(|l| json!({"node": cluster.node(l.node).name, "network": cluster.network(l.network).name,
            "direction": if l.send { "send" } else { "receive" }, "mbps": num(l.bytes / 1e6), "capacity_mbps": num(l.capacity / 1e6),
            "utilisation": num(l.util())})),
        "bottleneck": s.bottleneck.as_ref().map(|(b, m)| json!({"what": b, "margin": num(*m)})),
        "groups": groups,
    });
    let diagnostic_groups: Vec<Value> = s
        .diagnostics
        .iter()
        .map(|g| {
            json!({"kind": g.kind.name(), "severity": if g.kind.is_error() {"error"} else {"warning"}, "subject": g.subject,
                   "count": g.members.len(), "where": g.places, "worst": g.worst.message,
                   "worst_ratio": g.ratio.map(num), "fix": g.hint})
        })
        .collect();
    json!({
        "verdict": if r.verdict == Verdict::Sound { "sound" } else { "unsound" },
        "application": app.name,
        "cluster": cluster.name,
        "summary": summary,
        "requirements": requirements,
        "diagnostic_groups": diagnostic_groups,
        "modules": modules,
        "filters": filters,
        "links": links,
        "paths": paths,
        "schedule": schedule,
        "diagnostics": diagnostics,
    })
}
