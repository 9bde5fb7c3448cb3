//! Diagnostics grouped for reading: one entry per (kind, group pair or resource), with how many
//! diagnostics it stands for, where, the worst one, and a fix in the user's terms.

use super::style::{fold_distinct, fold_indices, num};
use crate::model::{Application, Cluster, EdgeRole, ObjectId, Sync};
use crate::perf::Prediction;
use crate::verify::{self, Diagnostic, Kind, Report};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use std::collections::HashMap;

pub(crate) struct DiagGroup<'a> {
    pub kind: Kind,
    /// What the group is about: `particles <- fluid`, `viewer->renderer on myrinet`, `fluid`.
    pub subject: String,
    pub members: Vec<&'a Diagnostic>,
    pub worst: &'a Diagnostic,
    /// The worst member's value over its limit (1.79 = 79 % over), when it has one.
    pub ratio: Option<f64>,
    /// The instances or nodes concerned, folded.
    pub places: String,
    pub hint: String,
}

/// Names to objects, nodes and networks.
struct Names<'a> {
    app: &'a Application,
    cluster: &'a Cluster,
    objects: HashMap<&'a str, ObjectId>,
}

impl<'a> Names<'a> {
    fn new(app: &'a Application, cluster: &'a Cluster) -> Self {
        let objects = app.graph.node_indices().map(|o| (app.object(o).name.as_str(), o)).collect();
        Names { app, cluster, objects }
    }
    fn object(&self, s: &str) -> Option<ObjectId> {
        self.objects.get(s).copied()
    }
    fn group(&self, s: &str) -> String {
        match self.object(s) {
            Some(o) => self.app.group(self.app.object(o).group).name.clone(),
            None => s.to_string(),
        }
    }
    fn link(&self, p: &'a Prediction, node: &str, net: &str) -> Option<&'a crate::perf::LinkUse> {
        let n = self.cluster.find_node(node)?;
        let k = self.cluster.find_network(net)?;
        p.links.iter().find(|l| l.node == n && l.network == k)
    }
}

/// (key, ratio) of one diagnostic.
fn key(names: &Names, p: Option<&Prediction>, r: &Report, d: &Diagnostic) -> (String, Option<f64>) {
    let s = &d.subjects;
    let first = s.first().map(|x| x.as_str()).unwrap_or("");
    match d.kind {
        Kind::BufferOverflow | Kind::RateMismatch if s.len() >= 2 => {
            let ratio = p.and_then(|p| {
                let (m, src) = (names.object(&s[0])?, names.object(&s[1])?);
                let mi = p.module_of[m.index()]?;
                let mm = &p.modules[mi];
                let t = if d.kind == Kind::BufferOverflow { mm.tcexec } else { mm.tit };
                p.sync_inputs[mi]
                    .iter()
                    .filter(|x| p.modules[x.source].object == src)
                    .map(|x| t / (x.ratio * p.modules[x.source].tit))
                    .reduce(f64::max)
            });
            (format!("{} <- {}", names.group(&s[0]), names.group(&s[1])), ratio)
        }
        Kind::NetworkContention if s.len() >= 2 => {
            let ratio = p.and_then(|p| names.link(p, &s[0], &s[1])).map(|l| l.send.max(l.recv) / l.capacity);
            (format!("{} on {}", s[2..].join(", "), s[1]), ratio)
        }
        Kind::CpuOverload => {
            let m = names.object(first).and_then(|o| p.and_then(|p| p.module(o).map(|m| (p, m))));
            match m {
                Some((_, m)) if m.ldc <= 0.0 => (names.group(first), Some(f64::INFINITY)),
                Some((_, m)) if !verify::le(m.tit, m.tit_sync) => (names.group(first), Some(m.tit / m.tit_sync)),
                Some((p, m)) => {
                    // The CPU headroom check.
                    let load = verify::cpu_loads(p).get(&(m.node, m.cpu)).map(|x| x.0).unwrap_or(0.0);
                    ("CPUs above the headroom".into(), Some(load / r.headroom.cpu))
                }
                None => (names.group(first), None),
            }
        }
        Kind::Requirement => {
            let ratio = p.and_then(|p| {
                names.app.requirements.iter().find_map(|q| match q {
                    crate::model::Requirement::MinFrequency { name, hz, .. } if name == first => {
                        let o = names.object(s.get(1)?)?;
                        Some(hz / p.module(o)?.frequency())
                    }
                    crate::model::Requirement::MaxLatency { name, max_s, .. } if name == first => {
                        r.path_latencies.iter().find(|(n, _)| n == name).map(|(_, l)| l / max_s)
                    }
                    _ => None,
                })
            });
            (first.to_string(), ratio)
        }
        Kind::Placement => (names.group(first), None),
        Kind::UnstableSchedule | Kind::ApproximateCycle => {
            let mut g: Vec<String> = s.iter().map(|x| names.group(x)).collect();
            g.dedup();
            (g.join(", "), None)
        }
        // The node first, then its modules: grouped by the modules' groups.
        Kind::OrderHypothesis => {
            let mut g: Vec<String> = s.iter().skip(1).map(|x| names.group(x)).collect();
            g.dedup();
            (g.join(", "), None)
        }
        _ => (first.to_string(), None),
    }
}

/// Where: the instances of the first subjects (`particles[0..3]`), or the links' nodes.
fn places(names: &Names, p: Option<&Prediction>, members: &[&Diagnostic], headroom: f64) -> String {
    let d = members[0];
    if d.kind == Kind::NetworkContention {
        let mut send: Vec<&str> = Vec::new();
        let mut recv: Vec<&str> = Vec::new();
        for m in members {
            if let Some(l) = p.and_then(|p| names.link(p, &m.subjects[0], &m.subjects[1])) {
                let cap = l.capacity * headroom;
                if !verify::le(l.send, cap) && !send.contains(&m.subjects[0].as_str()) {
                    send.push(&m.subjects[0]);
                }
                if !verify::le(l.recv, cap) && !recv.contains(&m.subjects[0].as_str()) {
                    recv.push(&m.subjects[0]);
                }
            }
        }
        let mut parts = Vec::new();
        if !send.is_empty() {
            parts.push(format!("{} sending", fold_distinct(&send, 40)));
        }
        if !recv.is_empty() {
            parts.push(format!("{} receiving", fold_distinct(&recv, 40)));
        }
        return parts.join("; ");
    }
    // Instances of the first subject, per group.
    let mut per: Vec<(String, Vec<usize>)> = Vec::new();
    for m in members {
        let Some(o) = m.subjects.first().and_then(|s| names.object(s)) else { continue };
        let obj = names.app.object(o);
        let g = &names.app.group(obj.group).name;
        let e = match per.iter_mut().position(|(x, _)| x == g) {
            Some(i) => &mut per[i].1,
            None => {
                per.push((g.clone(), vec![]));
                &mut per.last_mut().expect("pushed").1
            }
        };
        if !e.contains(&obj.index) {
            e.push(obj.index);
        }
    }
    per.into_iter()
        .map(|(g, mut ix)| {
            ix.sort();
            let single = names.app.find_group(&g).is_some_and(|gi| names.app.group(gi).objects.len() == 1);
            if single {
                g
            } else {
                format!("{g}[{}]", fold_indices(&ix))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The name of a connection carrying data from `src` into `dst` (directly or through filters).
fn connection_into(app: &Application, src: ObjectId, dst: ObjectId) -> Option<String> {
    let e = app
        .graph
        .find_edge(src, dst)
        .or_else(|| app.graph.edges_directed(dst, Direction::Incoming).map(|e| e.id()).next())?;
    Some(app.connections[app.graph[e].connection.ix()].name.clone())
}

fn hint(names: &Names, p: Option<&Prediction>, r: &Report, g: &DiagGroup) -> String {
    let (app, cluster) = (names.app, names.cluster);
    let s = &g.worst.subjects;
    let obj = |i: usize| s.get(i).and_then(|x| names.object(x));
    let group_of = |o: ObjectId| app.group(app.object(o).group).name.clone();
    match g.kind {
        Kind::BufferOverflow => {
            let (Some(m), Some(src), Some(p)) = (obj(0), obj(1), p) else { return String::new() };
            let mm = p.module(m).expect("module");
            let (mg, sg) = (group_of(m), group_of(src));
            let conn = connection_into(app, src, m).unwrap_or_else(|| format!("{sg}->{mg}"));
            if !verify::le(mm.tcexec, mm.texec) {
                let others: Vec<String> = p
                    .modules
                    .iter()
                    .filter(|x| x.node == mm.node && x.cpu == mm.cpu && x.object != m)
                    .map(|x| app.object(x.object).name.clone())
                    .collect();
                format!(
                    "{} is slowed by sharing CPU {} of {} with {}: move that to another node, or {} to a node with an idle CPU",
                    app.object(m).name,
                    mm.cpu,
                    cluster.node(mm.node).name,
                    others.join(", "),
                    mg
                )
            } else {
                format!(
                    "{mg} needs {} ms per message where {sg} sends one every {} ms: add {mg} instances (if its work splits among them), run it on a faster processor, or make {conn} greedy so {mg} takes only the newest message",
                    num(mm.tcexec * 1e3),
                    num(mm.tcexec * 1e3 / g.ratio.unwrap_or(1.0)),
                )
            }
        }
        Kind::RateMismatch => {
            let (Some(m), Some(src)) = (obj(0), obj(1)) else { return String::new() };
            let conn = connection_into(app, src, m).unwrap_or_default();
            format!(
                "make {conn} greedy so {} takes only the newest message, or speed up what paces {}",
                group_of(m),
                group_of(m)
            )
        }
        Kind::NetworkContention => {
            let (Some(n), Some(k)) =
                (s.first().and_then(|x| cluster.find_node(x)), s.get(1).and_then(|x| cluster.find_network(x)))
            else {
                return String::new();
            };
            let conns = s[2..].join(", ");
            let mut parts = Vec::new();
            let free: Vec<String> = cluster
                .node(n)
                .networks
                .iter()
                .filter(|&&o| o != k)
                .map(|&o| {
                    let used = p
                        .and_then(|p| p.links.iter().find(|l| l.node == n && l.network == o))
                        .map(|l| l.send.max(l.recv))
                        .unwrap_or(0.0);
                    let free = (cluster.network(o).bandwidth * r.headroom.link.min(1.0) - used).max(0.0);
                    format!("{} ({} MB/s free on {})", cluster.network(o).name, num(free / 1e6), cluster.node(n).name)
                })
                .collect();
            if !free.is_empty() {
                let carried = p
                    .and_then(|p| p.links.iter().find(|l| l.node == n && l.network == k))
                    .map(|l| format!(" (this link carries {} MB/s)", num(l.send.max(l.recv) / 1e6)))
                    .unwrap_or_default();
                parts.push(format!(
                    "route {conns} on another network both ends are on{carried}: {}",
                    free.join(", ")
                ));
            }
            parts.push(format!("put both ends of {conns} on one node (local traffic is free)"));
            parts.push("spread the instances that share this link over more nodes".into());
            let greedy = app.connections.iter().filter(|c| s[2..].contains(&c.name)).all(|c| {
                c.edges.iter().all(|&e| matches!(app.graph[e].role, EdgeRole::Flow(Sync::Greedy)))
            });
            if !greedy {
                parts.push(format!("make {conns} greedy (it then sends at its reader's pace)"));
            }
            parts.push("or use a faster network".into());
            parts.join("; ")
        }
        Kind::CpuOverload => {
            let (Some(m), Some(p)) = (obj(0), p) else { return String::new() };
            let mm = p.module(m).expect("module");
            let node = cluster.node(mm.node);
            if g.subject == "CPUs above the headroom" {
                format!(
                    "spread the modules of CPU {} of {} over more CPUs or nodes, or allow more with --cpu-headroom",
                    mm.cpu, node.name
                )
            } else {
                let others: Vec<String> = p
                    .modules
                    .iter()
                    .filter(|x| x.node == mm.node && x.object != m)
                    .map(|x| app.object(x.object).name.clone())
                    .collect();
                format!(
                    "{} competes for the {} CPUs of {} with {}: move some of them to another node, or {} to a node with an idle CPU",
                    app.object(m).name,
                    node.cpus,
                    node.name,
                    super::style::fold_names(&others.iter().map(|x| x.as_str()).collect::<Vec<_>>(), 60),
                    group_of(m)
                )
            }
        }
        Kind::Requirement => {
            let Some(p) = p else { return String::new() };
            match obj(1) {
                Some(o) if s.len() == 2 => format!(
                    "{}; speed that up (a faster processor, a CPU of its own), or lower the requirement",
                    verify::pace_reason(app, cluster, p, o)
                ),
                _ => "shorten the path: put consecutive objects on one node or on faster networks, or speed up its modules (their T_it add up)".into(),
            }
        }
        Kind::Placement => {
            "place each object on a node it may use (allowed_nodes, pin, a processor type with costs) and route each connection on a network both of its nodes are on".into()
        }
        Kind::UnstableSchedule => {
            "put the modules of the mixed cycle on different nodes or CPUs, so their order stops changing".into()
        }
        Kind::ApproximateCycle => "nothing to fix: the cycle's T_it is an upper bound, so the verdict errs on the safe side".into(),
        Kind::OrderHypothesis => "a warning about the model: the node's eq-8 order assumes one T_it for its modules; to be sure, give the slower ones a node of their own or check with --allocation iteration-load".into(),
    }
}

/// Groups a report's diagnostics: errors first, then warnings, each in kind order and then in
/// order of first appearance.
pub(crate) fn group<'a>(app: &Application, cluster: &Cluster, r: &'a Report) -> Vec<DiagGroup<'a>> {
    let names = Names::new(app, cluster);
    let p = r.prediction.as_ref();
    let mut out: Vec<DiagGroup<'a>> = Vec::new();
    let mut index: HashMap<(Kind, String), usize> = HashMap::new();
    for d in &r.diagnostics {
        let (k, ratio) = key(&names, p, r, d);
        match index.get(&(d.kind, k.clone())) {
            Some(&i) => {
                let g = &mut out[i];
                g.members.push(d);
                if ratio.unwrap_or(f64::NEG_INFINITY) > g.ratio.unwrap_or(f64::NEG_INFINITY) {
                    g.worst = d;
                    g.ratio = ratio;
                }
            }
            None => {
                index.insert((d.kind, k.clone()), out.len());
                out.push(DiagGroup {
                    kind: d.kind,
                    subject: k,
                    members: vec![d],
                    worst: d,
                    ratio,
                    places: String::new(),
                    hint: String::new(),
                });
            }
        }
    }
    for g in out.iter_mut() {
        g.places = places(&names, p, &g.members, r.headroom.link.min(1.0));
        g.hint = hint(&names, p, r, g);
    }
    out.sort_by_key(|g| (!g.kind.is_error(), g.kind));
    out
}
