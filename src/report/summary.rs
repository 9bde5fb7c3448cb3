//! The facts a reader wants first, computed once for text and JSON: verdict, nodes used, each
//! group's frequency range and what paces it, every requirement with its margin, the busiest
//! CPU and link, and the bottleneck.

use super::diagnostics::{self, DiagGroup};
use super::style::{fold_distinct, num, pct};
use crate::model::{Application, Cluster, GroupId, Mapping, NetworkId, NodeId, ObjectId, Requirement};
use crate::perf::{Headroom, Prediction};
use crate::verify::{self, Pace, Report, Verdict};

pub(crate) struct GroupLine {
    pub group: GroupId,
    pub instances: usize,
    /// Distinct nodes, folded.
    pub nodes: String,
    pub fmin: f64,
    pub fmax: f64,
    /// What paces the group: `itself`, `input fluid`, `cycle`, or a mix with counts.
    pub pace: String,
}

pub(crate) struct ReqLine {
    pub name: String,
    /// `frequency of renderer`, `latency of joypad -> ... -> renderer[0]`.
    pub what: String,
    pub value: f64,
    pub bound: f64,
    /// Hz or ms.
    pub unit: &'static str,
    /// Relative margin: (value - bound) / bound for a minimum, (bound - value) / bound for a
    /// maximum; negative when the requirement is not met.
    pub margin: f64,
    /// `>=` or `<=`.
    pub rel: &'static str,
}

/// The busiest CPU (by its load over an iteration).
pub(crate) struct CpuLine {
    pub node: NodeId,
    pub cpu: u32,
    pub load: f64,
    pub objects: Vec<ObjectId>,
}

/// The busiest link direction.
pub(crate) struct LinkLine {
    pub node: NodeId,
    pub network: NetworkId,
    pub send: bool,
    pub bytes: f64,
    pub capacity: f64,
}

impl LinkLine {
    pub fn util(&self) -> f64 {
        self.bytes / self.capacity
    }
}

pub(crate) struct Summary<'a> {
    pub verdict: Verdict,
    pub nodes_used: usize,
    pub nodes_total: usize,
    pub groups: Vec<GroupLine>,
    pub requirements: Vec<ReqLine>,
    pub cpu: Option<CpuLine>,
    pub link: Option<LinkLine>,
    /// What saturates first: a sentence, and the remaining margin (negative when over).
    pub bottleneck: Option<(String, f64)>,
    pub headroom: Headroom,
    pub diagnostics: Vec<DiagGroup<'a>>,
}

fn pace_label(app: &Application, p: &Prediction, mi: usize) -> String {
    match verify::pace(p, mi) {
        Pace::Itself => "itself".into(),
        Pace::Input(s) => format!("input {}", app.group(app.object(p.modules[s].object).group).name),
        Pace::Cycle(_) => "cycle".into(),
    }
}

/// Distinct labels, with counts when there are several.
fn mix(labels: Vec<String>) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for l in labels {
        match seen.iter_mut().find(|(x, _)| *x == l) {
            Some(e) => e.1 += 1,
            None => seen.push((l, 1)),
        }
    }
    if seen.len() == 1 {
        return seen.remove(0).0;
    }
    seen.iter().map(|(l, c)| format!("{l} ({c})")).collect::<Vec<_>>().join(", ")
}

fn groups(app: &Application, cluster: &Cluster, mapping: &Mapping, p: &Prediction) -> Vec<GroupLine> {
    app.groups
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            let nodes: Vec<&str> = g.objects.iter().map(|&o| cluster.node(mapping.node_of(o)).name.as_str()).collect();
            let f: Vec<f64> = g.objects.iter().map(|&o| p.frequency[o.index()]).collect();
            let pace = if g.is_module {
                mix(g.objects.iter().filter_map(|&o| p.module_of[o.index()]).map(|mi| pace_label(app, p, mi)).collect())
            } else {
                let k = g.objects.first().and_then(|&o| app.object(o).filter()).map(|k| k.name()).unwrap_or("filter");
                format!("{k} filter")
            };
            GroupLine {
                group: GroupId(gi as u32),
                instances: g.objects.len(),
                nodes: fold_distinct(&nodes, 48),
                fmin: f.iter().copied().fold(f64::INFINITY, f64::min),
                fmax: f.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                pace,
            }
        })
        .collect()
}

fn requirements(app: &Application, r: &Report, p: &Prediction) -> Vec<ReqLine> {
    let mut lat = r.path_latencies.iter();
    app.requirements
        .iter()
        .map(|q| match q {
            Requirement::MinFrequency { name, group, hz } => {
                let g = app.group(*group);
                let v = g
                    .objects
                    .iter()
                    .map(|&o| p.module(o).map(|m| m.frequency()).unwrap_or(0.0))
                    .fold(f64::INFINITY, f64::min);
                ReqLine {
                    name: name.clone(),
                    what: format!("frequency of {}", g.name),
                    value: v,
                    bound: *hz,
                    unit: "Hz",
                    margin: (v - hz) / hz,
                    rel: ">=",
                }
            }
            Requirement::MaxLatency { name, path, max_s } => {
                let l = lat.next().map(|x| x.1).unwrap_or(f64::NAN);
                let ends = match (path.first(), path.last()) {
                    (Some(&a), Some(&b)) => format!("{} -> {}", app.object(a).name, app.object(b).name),
                    _ => String::new(),
                };
                ReqLine {
                    name: name.clone(),
                    what: format!("latency of {ends}"),
                    value: l * 1e3,
                    bound: max_s * 1e3,
                    unit: "ms",
                    margin: (max_s - l) / max_s,
                    rel: "<=",
                }
            }
        })
        .collect()
}

pub(crate) fn busiest_cpu(p: &Prediction) -> Option<CpuLine> {
    verify::cpu_loads(p).into_iter().map(|((node, cpu), (load, objects))| CpuLine { node, cpu, load, objects }).fold(
        None,
        |best: Option<CpuLine>, c| match best {
            Some(b) if b.load >= c.load => Some(b),
            _ => Some(c),
        },
    )
}

pub(crate) fn busiest_link(p: &Prediction) -> Option<LinkLine> {
    let mut best: Option<LinkLine> = None;
    for l in &p.links {
        for (send, bytes) in [(true, l.send), (false, l.recv)] {
            let c = LinkLine { node: l.node, network: l.network, send, bytes, capacity: l.capacity };
            if best.as_ref().is_none_or(|b| c.util() > b.util()) {
                best = Some(c);
            }
        }
    }
    best
}

pub(crate) fn summarize<'a>(app: &Application, cluster: &Cluster, mapping: &Mapping, r: &'a Report) -> Summary<'a> {
    let mut used: Vec<NodeId> = mapping.placement.iter().map(|x| x.node).collect();
    used.sort();
    used.dedup();
    let diagnostics = diagnostics::group(app, cluster, r);
    let mut s = Summary {
        verdict: r.verdict,
        nodes_used: used.len(),
        nodes_total: cluster.nodes.len(),
        groups: vec![],
        requirements: vec![],
        cpu: None,
        link: None,
        bottleneck: None,
        headroom: r.headroom,
        diagnostics,
    };
    let Some(p) = &r.prediction else {
        s.bottleneck = s.diagnostics.first().map(|d| (format!("{} {}", d.kind.name(), d.subject), f64::NAN));
        return s;
    };
    s.groups = groups(app, cluster, mapping, p);
    s.requirements = requirements(app, r, p);
    s.cpu = busiest_cpu(p);
    s.link = busiest_link(p);
    if r.verdict == Verdict::Unsound {
        // The worst violation among the errors.
        let worst = s
            .diagnostics
            .iter()
            .filter(|d| d.kind.is_error())
            .max_by(|a, b| a.ratio.unwrap_or(0.0).total_cmp(&b.ratio.unwrap_or(0.0)))
            .or_else(|| s.diagnostics.iter().find(|d| d.kind.is_error()));
        s.bottleneck =
            worst.map(|d| (format!("{} {}", d.kind.name(), d.subject), d.ratio.map(|x| 1.0 - x).unwrap_or(f64::NAN)));
        return s;
    }
    // Sound: the smallest margin left, among the busiest CPU and link and the requirements.
    let h = r.headroom;
    let mut cands: Vec<(String, f64)> = Vec::new();
    // A CPU that one module keeps busy is as busy as that module's LD whatever the load: it
    // saturates only when shared (or against a CPU headroom).
    let shared = |c: &CpuLine| c.objects.len() > 1 || h.cpu < 1.0;
    let cpu = verify::cpu_loads(p)
        .into_iter()
        .map(|((node, cpu), (load, objects))| CpuLine { node, cpu, load, objects })
        .filter(shared)
        .max_by(|a, b| a.load.total_cmp(&b.load).then(b.node.cmp(&a.node)).then(b.cpu.cmp(&a.cpu)));
    if let Some(c) = &cpu {
        cands.push((
            format!("CPU {} of {} ({} busy)", c.cpu, cluster.node(c.node).name, pct(c.load)),
            1.0 - c.load / h.cpu.min(1.0),
        ));
    }
    if let Some(l) = &s.link {
        cands.push((
            format!(
                "the {} link of {} ({} {} MB/s of {} MB/s, {})",
                cluster.network(l.network).name,
                cluster.node(l.node).name,
                if l.send { "sends" } else { "receives" },
                num(l.bytes / 1e6),
                num(l.capacity / 1e6),
                pct(l.util())
            ),
            1.0 - l.util() / h.link.min(1.0),
        ));
    }
    for q in &s.requirements {
        cands.push((
            format!("requirement {} ({} {} {} {})", q.name, num(q.value), q.unit, q.rel, num(q.bound)),
            q.margin,
        ));
    }
    s.bottleneck = cands.into_iter().min_by(|a, b| a.1.total_cmp(&b.1));
    s
}
