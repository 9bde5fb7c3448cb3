//! Repairs: changes to the real instance that make it feasible, each verified by solving the
//! changed instance (the mapping found has passed the verifier), ranked by the size of the
//! change; and the changes tried that do not help.
//!
//! Candidates follow the conflict's facts (a network's bandwidth raised to the value needed or
//! replaced by a faster network of the cluster, nodes attached to a network, CPUs added, a pin
//! moved, allowed nodes widened, a requirement relaxed to the value reached, a T_exec or a volume
//! lowered to the value needed), plus parameters lowered to their limit and "k more nodes like
//! an existing class". Values are found by bisection, assuming monotonicity between the
//! current value and a relaxed one that is checked first; the value reported is rounded toward
//! the relaxed side and solved again, so what is printed is what was verified.

use super::conflict::{decide_instance, Answer, Conflict};
use super::facts::{fold, mbs, ms, requirement_name, Fact, Facts, Instance, RELAXED_BANDWIDTH, RELAXED_COST};
use crate::model::{
    Application, Cluster, ConnectionId, GroupId, Mapping, NetworkId, Node, NodeId, ObjectId, ObjectKind, PerType,
    Placement, Requirement,
};
use crate::parse::PartialMapping;
use crate::report::num;
use crate::solve::SolveOptions;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Builds the application with one parameter changed (the caller re-reads the description).
pub type MakeApp<'a> = &'a (dyn Fn(&str, f64) -> Result<Application, String> + Sync);

/// One change to an instance (what a what-if overlay says).
#[derive(Clone, Debug, PartialEq)]
pub enum Change {
    /// A network's bandwidth, bytes per second.
    Bandwidth { network: NetworkId, bandwidth: f64 },
    /// A network gets the bandwidth and latency of another network of the cluster.
    ReplaceNetwork { network: NetworkId, like: NetworkId },
    /// Nodes put on a network.
    Attach { nodes: Vec<NodeId>, network: NetworkId },
    /// A node's CPU count.
    Cpus { node: NodeId, cpus: u32 },
    /// New nodes with the processor, CPUs and networks of `like`.
    AddNodes { like: NodeId, names: Vec<String> },
    /// A group's pin list.
    Pin { group: GroupId, pins: Vec<String> },
    /// A group's allowed nodes.
    Allow { group: GroupId, nodes: Vec<String> },
    /// A minimum frequency's new value, Hz.
    MinFrequency { requirement: usize, hz: f64 },
    /// A maximum latency's new value, seconds.
    MaxLatency { requirement: usize, seconds: f64 },
    /// A module group's T_exec on one processor type, seconds.
    Texec { group: GroupId, processor: String, seconds: f64 },
    /// A connection's volume per message, bytes.
    Volume { connection: ConnectionId, bytes: f64 },
    /// An application parameter (`--set`).
    Param { name: String, value: f64 },
    /// A `--fix`ed object placed elsewhere.
    Place { object: ObjectId, node: NodeId },
    /// A `--fix`ed mapping's routes of a connection dropped.
    Unroute { connection: ConnectionId },
}

impl Change {
    /// Whether the change is to the cluster (a cluster overlay), the application (an
    /// application overlay), a parameter (`--set`), or the fixed mapping.
    pub fn target(&self) -> &'static str {
        match self {
            Change::Bandwidth { .. }
            | Change::ReplaceNetwork { .. }
            | Change::Attach { .. }
            | Change::Cpus { .. }
            | Change::AddNodes { .. } => "cluster",
            Change::Param { .. } => "parameters",
            Change::Place { .. } | Change::Unroute { .. } => "mapping",
            _ => "application",
        }
    }
    /// Whether the change means the same at every parameter value (for `limit`'s new limit).
    pub fn parameter_free(&self) -> bool {
        !matches!(self, Change::Texec { .. } | Change::Volume { .. } | Change::Param { .. })
    }
}

/// A verified repair.
#[derive(Clone, Debug)]
pub struct Repair {
    pub changes: Vec<Change>,
    /// The change in words, with old and new values.
    pub description: String,
    /// Items changed (networks, nodes, pins, ...).
    pub size: usize,
    /// Relative size of the change (0.06 = 6 %; structural changes count 1).
    pub magnitude: f64,
    /// The sound mapping the changed instance admits, and the nodes it uses.
    pub mapping: Mapping,
    pub nodes_used: i64,
}

/// The changed instance (`make` builds the application for a parameter change).
pub fn apply(
    app: &Application,
    cluster: &Cluster,
    fix: Option<&PartialMapping>,
    changes: &[Change],
    make: Option<MakeApp>,
) -> Result<Instance, String> {
    let mut a = app.clone();
    let mut c = cluster.clone();
    let mut f = fix.cloned();
    for ch in changes {
        if let Change::Param { name, value } = ch {
            let make = make.ok_or("parameters can only be changed when the description can be re-read")?;
            a = make(name, *value)?;
        }
    }
    for ch in changes {
        match ch {
            Change::Bandwidth { network, bandwidth } => c.networks[network.ix()].bandwidth = *bandwidth,
            Change::ReplaceNetwork { network, like } => {
                let l = cluster.network(*like).clone();
                let k = &mut c.networks[network.ix()];
                k.bandwidth = l.bandwidth;
                k.latency = l.latency;
            }
            Change::Attach { nodes, network } => {
                for n in nodes {
                    let node = &mut c.nodes[n.ix()];
                    if !node.networks.contains(network) {
                        node.networks.push(*network);
                        node.networks.sort();
                    }
                }
            }
            Change::Cpus { node, cpus } => c.nodes[node.ix()].cpus = *cpus,
            Change::AddNodes { like, names } => {
                let l = cluster.node(*like);
                for n in names {
                    c.nodes.push(Node {
                        name: n.clone(),
                        cpus: l.cpus,
                        processor: l.processor.clone(),
                        networks: l.networks.clone(),
                    });
                }
            }
            Change::Pin { group, pins } => a.groups[group.ix()].pins = Some(pins.clone()),
            Change::Allow { group, nodes } => a.groups[group.ix()].allowed_nodes = Some(nodes.clone()),
            Change::MinFrequency { requirement, hz: v } => {
                if let Requirement::MinFrequency { hz, .. } = &mut a.requirements[*requirement] {
                    *hz = *v;
                }
            }
            Change::MaxLatency { requirement, seconds } => {
                if let Requirement::MaxLatency { max_s, .. } = &mut a.requirements[*requirement] {
                    *max_s = *seconds;
                }
            }
            Change::Texec { group, processor, seconds } => {
                let types: Vec<String> = cluster.nodes.iter().map(|n| n.processor.clone()).collect();
                for o in app.group(*group).objects.clone() {
                    if let ObjectKind::Module(costs) = &mut a.graph[o].kind {
                        let mut m: BTreeMap<String, f64> = match &costs.texec {
                            PerType::ByType(m) => m.clone(),
                            PerType::Uniform(v) => types.iter().map(|t| (t.clone(), *v)).collect(),
                        };
                        m.insert(processor.clone(), *seconds);
                        costs.texec = PerType::ByType(m);
                    }
                }
            }
            Change::Volume { connection, bytes } => {
                for &e in &app.connections[connection.ix()].edges {
                    a.graph[e].volume = *bytes;
                }
            }
            Change::Param { .. } => {}
            Change::Place { object, node } => {
                let f = f.as_mut().ok_or("no mapping to change")?;
                f.placement[object.index()] = Some(Placement { node: *node, cpu: None });
            }
            Change::Unroute { connection } => {
                let f = f.as_mut().ok_or("no mapping to change")?;
                for &e in &app.connections[connection.ix()].edges {
                    f.network[e.index()] = None;
                }
            }
        }
    }
    Ok(Instance { app: a, cluster: c, fix: f })
}

/// What one candidate change came to.
enum Tried {
    Repair(Repair),
    NotHelping(String),
}

/// The repair search's context.
pub struct Search<'f, 'a> {
    pub facts: &'f Facts<'a>,
    pub opts: SolveOptions,
    /// Time limit of one solve of a changed instance.
    pub per_call: Duration,
    pub deadline: Option<Instant>,
    pub jobs: usize,
    pub make: Option<MakeApp<'f>>,
}

/// Candidate changes, each searched on its own (in parallel).
#[derive(Clone, Debug)]
enum Candidate {
    RaiseBandwidth(NetworkId),
    ReplaceNetwork(NetworkId, NetworkId),
    Attach(Vec<NodeId>, NetworkId),
    RaiseCpus(NodeId),
    MovePin(ObjectId, Option<NodeId>),
    MoveFixed(ObjectId, Option<NodeId>),
    Unroute(ConnectionId),
    Allow(GroupId, Vec<NodeId>),
    Requirement(usize),
    Texec(GroupId, String),
    Volume(ConnectionId),
    Param(String),
    AddNodes(Vec<NodeId>),
}

/// Repairs for the conflict, best first, and what was tried without success.
pub fn repairs(s: &Search, conflict: &Conflict) -> (Vec<Repair>, Vec<String>) {
    let facts = s.facts;
    let (app, cluster) = (facts.app, facts.cluster);
    let mut cands: Vec<Candidate> = Vec::new();
    let mut attach: BTreeMap<NetworkId, Vec<NodeId>> = BTreeMap::new();
    for (note, w) in conflict.facts.iter().zip(&conflict.witnesses) {
        match &note.fact {
            Fact::Bandwidth { network } => {
                cands.push(Candidate::RaiseBandwidth(*network));
                let bw = cluster.network(*network).bandwidth;
                for (j, k) in cluster.networks.iter().enumerate() {
                    if k.bandwidth > bw {
                        cands.push(Candidate::ReplaceNetwork(*network, NetworkId(j as u32)));
                    }
                }
            }
            Fact::Attachment { node, network } => attach.entry(*network).or_default().push(*node),
            Fact::Cpus { node } => cands.push(Candidate::RaiseCpus(*node)),
            Fact::Pin { object, .. } => cands.push(Candidate::MovePin(*object, w.as_ref().map(|m| m.node_of(*object)))),
            Fact::Fixed { object } => cands.push(Candidate::MoveFixed(*object, w.as_ref().map(|m| m.node_of(*object)))),
            Fact::Route { connection } => cands.push(Candidate::Unroute(*connection)),
            Fact::Allowed { group } => {
                let allowed = app.group(*group).allowed_nodes.clone().unwrap_or_default();
                let mut extra: Vec<NodeId> = w
                    .as_ref()
                    .map(|m| {
                        app.group(*group)
                            .objects
                            .iter()
                            .map(|&o| m.node_of(o))
                            .filter(|&n| !allowed.contains(&cluster.node(n).name))
                            .collect()
                    })
                    .unwrap_or_default();
                extra.sort();
                extra.dedup();
                cands.push(Candidate::Allow(*group, extra));
            }
            Fact::Requirement { index } => {
                cands.push(Candidate::Requirement(*index));
                // What paces the required modules: their self-paced ancestors' T_exec.
                for g in facts.pacers(&facts.objects(&note.fact)) {
                    for p in facts.processors() {
                        let c = Candidate::Texec(g, p.clone());
                        if !cands.iter().any(|x| matches!((x, &c), (Candidate::Texec(a, b), Candidate::Texec(c2, d)) if a == c2 && b == d)) {
                            cands.push(c);
                        }
                    }
                }
            }
            Fact::Cost { group, processor } => {
                let c = Candidate::Texec(*group, processor.clone());
                if !cands.iter().any(|x| matches!(x, Candidate::Texec(a, b) if a == group && b == processor)) {
                    cands.push(c);
                }
            }
            Fact::Volume { connection } => cands.push(Candidate::Volume(*connection)),
        }
    }
    for (k, nodes) in attach {
        if nodes.len() > 1 {
            for &n in &nodes {
                cands.push(Candidate::Attach(vec![n], k));
            }
        }
        cands.push(Candidate::Attach(nodes, k));
    }
    if s.make.is_some() {
        for name in app.parameters.keys() {
            cands.push(Candidate::Param(name.clone()));
        }
    }
    for class in classes(facts, conflict) {
        cands.push(Candidate::AddNodes(class));
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(s.jobs.max(1)).build().expect("thread pool");
    let tried: Vec<Vec<Tried>> = pool.install(|| cands.par_iter().map(|c| s.try_candidate(c, conflict)).collect());
    let mut found = Vec::new();
    let mut not = Vec::new();
    for t in tried.into_iter().flatten() {
        match t {
            Tried::Repair(r) => found.push(r),
            Tried::NotHelping(w) => not.push(w),
        }
    }
    found.sort_by(|a, b| {
        a.size.cmp(&b.size).then(a.magnitude.total_cmp(&b.magnitude)).then(a.description.cmp(&b.description))
    });
    (found, not)
}

/// Node classes (same processor, CPUs and networks) to grow by their own size: those of the
/// conflict's nodes first, then the others; at most six.
fn classes(facts: &Facts, conflict: &Conflict) -> Vec<Vec<NodeId>> {
    let cluster = facts.cluster;
    let mut by: BTreeMap<(String, u32, Vec<NetworkId>), Vec<NodeId>> = BTreeMap::new();
    for (i, n) in cluster.nodes.iter().enumerate() {
        by.entry((n.processor.clone(), n.cpus, n.networks.clone())).or_default().push(NodeId(i as u32));
    }
    let named: Vec<String> = conflict.facts.iter().flat_map(|f| f.subjects.clone()).collect();
    let mut v: Vec<Vec<NodeId>> = by.into_values().collect();
    v.sort_by_key(|c| (!c.iter().any(|&n| named.contains(&cluster.node(n).name)), c[0]));
    v.truncate(6);
    v
}

/// A note when a bisection toward larger values ended undecided.
fn lower(undecided: bool) -> &'static str {
    if undecided {
        " (a smaller value may do: undecided within the time limit)"
    } else {
        ""
    }
}

/// A note when a bisection toward smaller values ended undecided.
fn higher(undecided: bool) -> &'static str {
    if undecided {
        " (a larger value may do: undecided within the time limit)"
    } else {
        ""
    }
}

/// The value in the middle of a bracket (geometric when both ends are positive and far apart).
fn middle(a: f64, b: f64, integer: bool, geometric: bool) -> f64 {
    let m = if geometric && a > 0.0 && b > 0.0 { (a * b).sqrt() } else { (a + b) / 2.0 };
    if integer {
        m.floor()
    } else {
        m
    }
}

/// `x` rounded to three significant digits, up or down.
fn round3(x: f64, up: bool) -> f64 {
    round_to(x, 3, up)
}

/// `x` rounded to `digits` significant digits, up or down.
fn round_to(x: f64, digits: i32, up: bool) -> f64 {
    if x <= 0.0 || !x.is_finite() {
        return x;
    }
    let p = 10f64.powi(x.log10().floor() as i32 - (digits - 1));
    let r = if up { (x / p).ceil() * p } else { (x / p).floor() * p };
    // Exact decimal: print and re-read.
    format!("{r:.12}").parse().unwrap_or(r)
}

impl<'f, 'a> Search<'f, 'a> {
    fn limit(&self) -> Option<Duration> {
        let left = self.deadline.map(|d| d.saturating_duration_since(Instant::now()));
        Some(left.map_or(self.per_call, |l| l.min(self.per_call)))
    }

    /// Solves the real instance with `changes`.
    fn check(&self, changes: &[Change]) -> Answer {
        match apply(self.facts.app, self.facts.cluster, self.facts.fix, changes, self.make) {
            Ok(inst) => decide_instance(&inst, &self.opts, self.limit()),
            Err(_) => Answer::Unknown,
        }
    }

    fn repair(&self, changes: Vec<Change>, description: String, size: usize, magnitude: f64, a: Answer) -> Tried {
        match a {
            Answer::Feasible(mapping, nodes_used) => {
                Tried::Repair(Repair { changes, description, size, magnitude, mapping, nodes_used })
            }
            Answer::Infeasible(_) => Tried::NotHelping(format!("{description}: still infeasible (proven)")),
            Answer::Unknown => Tried::NotHelping(format!("{description}: undecided within the time limit")),
        }
    }

    /// The value closest to `current` (infeasible) on the way to `relaxed` that is feasible:
    /// `relaxed` is checked first; bisection to a relative `tol` (or 1 for integers); the value
    /// is rounded toward `relaxed` to three significant digits when that stays feasible. The
    /// flag says the bisection ended undecided (a value closer to `current` may also work).
    /// `what` names the change and `extreme` the relaxed value, for "does not help".
    #[allow(clippy::too_many_arguments)]
    fn boundary(
        &self,
        current: f64,
        relaxed: f64,
        integer: bool,
        geometric: bool,
        tol: f64,
        mk: &dyn Fn(f64) -> Vec<Change>,
        what: &str,
        extreme: &str,
    ) -> Result<(f64, Answer, bool), Tried> {
        let first = self.check(&mk(relaxed));
        match first {
            Answer::Infeasible(_) => {
                return Err(Tried::NotHelping(format!("{what}: still infeasible {extreme} (proven)")))
            }
            Answer::Unknown => return Err(Tried::NotHelping(format!("{what}: undecided within the time limit"))),
            Answer::Feasible(..) => {}
        }
        let (mut bad, mut good, mut best) = (current, relaxed, first);
        let mut undecided = false;
        for _ in 0..60 {
            let done =
                if integer { (good - bad).abs() <= 1.0 } else { (good - bad).abs() <= tol * good.abs().max(bad.abs()) };
            if done {
                break;
            }
            let mid = middle(bad.min(good), bad.max(good), integer, geometric);
            if mid == bad || mid == good {
                break;
            }
            match self.check(&mk(mid)) {
                a @ Answer::Feasible(..) => {
                    good = mid;
                    best = a;
                }
                Answer::Infeasible(_) => bad = mid,
                Answer::Unknown => {
                    undecided = true;
                    break;
                }
            }
        }
        if !integer {
            // A round value: the first one past the last infeasible value, else past `good`.
            let up = relaxed > current;
            let beyond = |x: f64, y: f64| if up { x > y } else { x < y };
            let near = round3(bad, up);
            if beyond(near, bad) && !beyond(near, good) && near != good {
                if let a @ Answer::Feasible(..) = self.check(&mk(near)) {
                    return Ok((near, a, undecided));
                }
            }
            let nice = round3(good, up);
            if nice != good && !beyond(nice, relaxed) {
                if let a @ Answer::Feasible(..) = self.check(&mk(nice)) {
                    return Ok((nice, a, undecided));
                }
            }
        }
        Ok((good, best, undecided))
    }

    fn try_candidate(&self, c: &Candidate, conflict: &Conflict) -> Vec<Tried> {
        let (app, cluster) = (self.facts.app, self.facts.cluster);
        let one = |t: Tried| vec![t];
        match c {
            Candidate::RaiseBandwidth(k) => {
                let net = cluster.network(*k);
                let what = format!("raise {}'s bandwidth", net.name);
                let mk = |v: f64| vec![Change::Bandwidth { network: *k, bandwidth: v }];
                match self.boundary(net.bandwidth, RELAXED_BANDWIDTH, false, true, 0.002, &mk, &what, "at 1 PB/s") {
                    Ok((v, a, u)) => one(self.repair(
                        mk(v),
                        format!("raise {}'s bandwidth from {} to {}{}", net.name, mbs(net.bandwidth), mbs(v), lower(u)),
                        1,
                        v / net.bandwidth - 1.0,
                        a,
                    )),
                    Err(t) => one(t),
                }
            }
            Candidate::ReplaceNetwork(k, j) => {
                let (net, like) = (cluster.network(*k), cluster.network(*j));
                let ch = vec![Change::ReplaceNetwork { network: *k, like: *j }];
                let d = format!(
                    "replace {} ({}, {}) by a network like {} ({}, {})",
                    net.name,
                    mbs(net.bandwidth),
                    ms(net.latency),
                    like.name,
                    mbs(like.bandwidth),
                    ms(like.latency)
                );
                let a = self.check(&ch);
                one(self.repair(ch, d, 1, like.bandwidth / net.bandwidth - 1.0, a))
            }
            Candidate::Attach(nodes, k) => {
                let names: Vec<&str> = nodes.iter().map(|&n| cluster.node(n).name.as_str()).collect();
                let net = cluster.network(*k);
                let ch = vec![Change::Attach { nodes: nodes.clone(), network: *k }];
                let d = format!("attach {} to {} ({})", fold(&names), net.name, mbs(net.bandwidth));
                let a = self.check(&ch);
                one(self.repair(ch, d, nodes.len(), 1.0, a))
            }
            Candidate::RaiseCpus(n) => {
                let node = cluster.node(*n);
                let many = super::facts::relaxed_cpus(app, cluster).max(node.cpus + 1) as f64;
                let what = format!("give {} more CPUs", node.name);
                let mk = |v: f64| vec![Change::Cpus { node: *n, cpus: v as u32 }];
                match self.boundary(node.cpus as f64, many, true, false, 0.0, &mk, &what, &format!("with {many} CPUs"))
                {
                    Ok((v, a, u)) => one(self.repair(
                        mk(v),
                        format!("give {} {} CPUs instead of {}{}", node.name, v, node.cpus, lower(u)),
                        1,
                        v / node.cpus as f64 - 1.0,
                        a,
                    )),
                    Err(t) => one(t),
                }
            }
            Candidate::MovePin(o, hint) | Candidate::MoveFixed(o, hint) => {
                let fixed = matches!(c, Candidate::MoveFixed(..));
                self.move_object(*o, *hint, fixed)
            }
            Candidate::Unroute(conn) => {
                let ch = vec![Change::Unroute { connection: *conn }];
                let d = format!("let the solver choose the networks of {}", app.connections[conn.ix()].name);
                let a = self.check(&ch);
                one(self.repair(ch, d, 1, 1.0, a))
            }
            Candidate::Allow(g, extra) => {
                let group = app.group(*g);
                let mut nodes = group.allowed_nodes.clone().unwrap_or_default();
                let (ch, d, size) = if extra.is_empty() {
                    let all: Vec<String> = cluster.nodes.iter().map(|n| n.name.clone()).collect();
                    let k = all.len() - nodes.len();
                    (vec![Change::Allow { group: *g, nodes: all }], format!("let {} run on every node", group.name), k)
                } else {
                    let names: Vec<String> = extra.iter().map(|&n| cluster.node(n).name.clone()).collect();
                    nodes.extend(names.iter().cloned());
                    let d = format!("let {} also run on {}", group.name, fold(&names));
                    (vec![Change::Allow { group: *g, nodes }], d, extra.len())
                };
                let a = self.check(&ch);
                one(self.repair(ch, d, size, 1.0, a))
            }
            Candidate::Requirement(r) => one(self.relax_requirement(*r)),
            Candidate::Texec(g, p) => {
                let group = app.group(*g);
                let Some(t) = app.object(group.objects[0]).costs().and_then(|c| c.texec.on(p)) else {
                    return vec![];
                };
                let what = format!("lower {}'s T_exec on {p}", group.name);
                let mk = |v: f64| vec![Change::Texec { group: *g, processor: p.clone(), seconds: v }];
                match self.boundary(
                    t,
                    t * RELAXED_COST,
                    false,
                    true,
                    0.002,
                    &mk,
                    &what,
                    &format!("at {}", ms(t * RELAXED_COST)),
                ) {
                    Ok((v, a, u)) => one(self.repair(
                        mk(v),
                        format!("lower {}'s T_exec on {p} from {} to {}{}", group.name, ms(t), ms(v), higher(u)),
                        1,
                        1.0 - v / t,
                        a,
                    )),
                    Err(t) => one(t),
                }
            }
            Candidate::Volume(conn) => {
                let cn = &app.connections[conn.ix()];
                let v0 = cn.edges.iter().map(|&e| app.graph[e].volume).fold(0.0, f64::max);
                let what = format!("lower the volume of {}", cn.name);
                let mk = |v: f64| vec![Change::Volume { connection: *conn, bytes: v.floor() }];
                match self.boundary(v0, 0.0, false, false, 0.001, &mk, &what, "at 0 B") {
                    Ok((v, a, u)) => one(self.repair(
                        mk(v),
                        format!(
                            "lower the volume of {} from {} to {} per message{}",
                            cn.name,
                            super::facts::bytes(v0),
                            super::facts::bytes(v.floor()),
                            higher(u)
                        ),
                        1,
                        1.0 - v / v0,
                        a,
                    )),
                    Err(t) => one(t),
                }
            }
            Candidate::Param(name) => self.lower_param(name, conflict),
            Candidate::AddNodes(class) => {
                let like = class[0];
                let l = cluster.node(like);
                let names: Vec<String> = (1..)
                    .map(|i| format!("{}-new{i}", l.name))
                    .filter(|n| cluster.find_node(n).is_none())
                    .take(class.len())
                    .collect();
                let members: Vec<&str> = class.iter().map(|&n| cluster.node(n).name.as_str()).collect();
                let nets: Vec<&str> = l.networks.iter().map(|&k| cluster.network(k).name.as_str()).collect();
                let d = format!(
                    "add {} node{} like {} ({}, {} CPUs, on {})",
                    names.len(),
                    if names.len() == 1 { "" } else { "s" },
                    fold(&members),
                    l.processor,
                    l.cpus,
                    nets.join(", ")
                );
                let ch = vec![Change::AddNodes { like, names: names.clone() }];
                let a = self.check(&ch);
                one(self.repair(ch, d, names.len(), 1.0, a))
            }
        }
    }

    /// Moves a pinned (or fixed) object to another node: the witness's node first, then the
    /// other nodes it may use, up to six.
    fn move_object(&self, o: ObjectId, hint: Option<NodeId>, fixed: bool) -> Vec<Tried> {
        let (app, cluster) = (self.facts.app, self.facts.cluster);
        let obj = app.object(o);
        let g = app.group(obj.group);
        let current = if fixed {
            self.facts.fix.and_then(|f| f.placement[o.index()]).map(|p| p.node)
        } else {
            g.pins.as_ref().and_then(|p| cluster.find_node(&p[obj.index]))
        };
        let usable = |n: NodeId| {
            let node = cluster.node(n);
            obj.costs().is_none_or(|c| c.texec.on(&node.processor).is_some())
                && g.allowed_nodes.as_ref().is_none_or(|a| a.contains(&node.name))
                && Some(n) != current
        };
        let mut order: Vec<NodeId> = hint.into_iter().filter(|&n| usable(n)).collect();
        for n in (0..cluster.nodes.len() as u32).map(NodeId) {
            if usable(n) && !order.contains(&n) {
                order.push(n);
            }
        }
        order.truncate(6);
        let from = current.map(|n| cluster.node(n).name.clone()).unwrap_or_default();
        let (mut failed, mut undecided) = (Vec::new(), Vec::new());
        for n in order {
            let to = &cluster.node(n).name;
            let (ch, d) = if fixed {
                (vec![Change::Place { object: o, node: n }], format!("place {} on {to} instead of {from}", obj.name))
            } else {
                let mut pins = g.pins.clone().expect("pinned");
                pins[obj.index] = to.clone();
                (vec![Change::Pin { group: obj.group, pins }], format!("pin {} to {to} instead of {from}", obj.name))
            };
            match self.check(&ch) {
                a @ Answer::Feasible(..) => return vec![self.repair(ch, d, 1, 1.0, a)],
                Answer::Infeasible(_) => failed.push(to.clone()),
                Answer::Unknown => undecided.push(to.clone()),
            }
        }
        let mut out = Vec::new();
        if !failed.is_empty() {
            out.push(Tried::NotHelping(format!(
                "moving {} from {from} to {}: still infeasible (proven)",
                obj.name,
                fold(&failed)
            )));
        }
        if !undecided.is_empty() {
            out.push(Tried::NotHelping(format!(
                "moving {} from {from} to {}: undecided within the time limit",
                obj.name,
                fold(&undecided)
            )));
        }
        out
    }

    /// A requirement relaxed to the best value reached without it.
    fn relax_requirement(&self, r: usize) -> Tried {
        let (app, cluster) = (self.facts.app, self.facts.cluster);
        let req = &app.requirements[r];
        let name = requirement_name(req).to_string();
        let mut without = app.clone();
        without.requirements.remove(r);
        match req {
            Requirement::MinFrequency { group, hz, .. } => {
                let opts = SolveOptions { time_limit: self.limit(), ..self.opts.clone() };
                let lim = crate::headroom::frequency_limit(&without, cluster, *group, &opts, 50);
                let reached = lim.largest_feasible.as_ref().and_then(|p| p.outcome.report.as_ref()).and_then(|r| {
                    let pr = r.prediction.as_ref()?;
                    Some(
                        app.group(*group)
                            .objects
                            .iter()
                            .map(|&o| pr.module(o).map(|m| m.frequency()).unwrap_or(0.0))
                            .fold(f64::INFINITY, f64::min),
                    )
                });
                let Some(f) = reached.filter(|f| f.is_finite() && *f > 0.0) else {
                    return Tried::NotHelping(format!("relax requirement {name}: no sound mapping even without it"));
                };
                let v = round_to(f, 4, false);
                let ch = vec![Change::MinFrequency { requirement: r, hz: v }];
                let d = format!("relax requirement {name} from {} Hz to {} Hz (the highest reached)", num(*hz), num(v));
                let a = self.check(&ch);
                self.repair(ch, d, 1, 1.0 - v / hz, a)
            }
            Requirement::MaxLatency { max_s, path, .. } => {
                let latency = |a: &Application, m: &Mapping| -> Option<f64> {
                    let rep = crate::verify::check(a, cluster, m, &self.opts.perf);
                    let p = rep.prediction.as_ref()?;
                    Some(crate::perf::path_latency(a, cluster, m, &p.modules, &p.module_of, path))
                };
                let mut best: Option<f64> = None;
                let mut probe = without.clone();
                for _ in 0..10 {
                    let inst = Instance { app: probe.clone(), cluster: cluster.clone(), fix: self.facts.fix.cloned() };
                    match decide_instance(&inst, &self.opts, self.limit()) {
                        Answer::Feasible(m, _) => {
                            let Some(l) = latency(app, &m) else { break };
                            best = Some(l);
                            probe = without.clone();
                            probe.requirements.push(Requirement::MaxLatency {
                                name: "explain probe".into(),
                                path: path.clone(),
                                max_s: l * (1.0 - 1e-6),
                            });
                        }
                        _ => break,
                    }
                }
                let Some(l) = best else {
                    return Tried::NotHelping(format!("relax requirement {name}: no sound mapping even without it"));
                };
                let v = round_to(l, 4, true);
                let ch = vec![Change::MaxLatency { requirement: r, seconds: v }];
                let d = format!("relax requirement {name} from {} to {} (the lowest reached)", ms(*max_s), ms(v));
                let a = self.check(&ch);
                self.repair(ch, d, 1, v / max_s - 1.0, a)
            }
        }
    }

    /// A parameter lowered to its limit, if lowering it changes a volume, cost or requirement of
    /// the conflict.
    fn lower_param(&self, name: &str, conflict: &Conflict) -> Vec<Tried> {
        let (app, make) = (self.facts.app, self.make.expect("make"));
        let v0 = app.parameters[name];
        if v0 <= 0.0 {
            return vec![];
        }
        let Ok(half) = make(name, v0 / 2.0) else { return vec![] };
        if half.graph.node_count() != app.graph.node_count() || half.graph.edge_count() != app.graph.edge_count() {
            return vec![];
        }
        let changed = conflict.facts.iter().any(|n| match &n.fact {
            Fact::Volume { connection } => {
                app.connections[connection.ix()].edges.iter().any(|&e| half.graph[e].volume != app.graph[e].volume)
            }
            Fact::Cost { group, processor } => app.group(*group).objects.iter().any(|&o| {
                let (a, b) = (app.object(o).costs(), half.object(o).costs());
                a.map(|c| (c.texec.on(processor), c.load.on(processor)))
                    != b.map(|c| (c.texec.on(processor), c.load.on(processor)))
            }),
            Fact::Requirement { index } => app.requirements.get(*index) != half.requirements.get(*index),
            _ => false,
        });
        if !changed {
            return vec![];
        }
        let integer = v0.fract() == 0.0;
        let what = format!("lower {name}");
        let mk = |v: f64| vec![Change::Param { name: name.to_string(), value: v }];
        // The relaxed end: halve until feasible (at most ten times).
        let mut relaxed = v0 / 2.0;
        for _ in 0..10 {
            let v = if integer { relaxed.floor() } else { relaxed };
            match self.check(&mk(v)) {
                Answer::Feasible(..) => break,
                Answer::Infeasible(_) => relaxed /= 2.0,
                Answer::Unknown => return vec![Tried::NotHelping(format!("{what}: undecided within the time limit"))],
            }
        }
        let relaxed = if integer { relaxed.floor() } else { relaxed };
        match self.boundary(v0, relaxed, integer, false, 1e-4, &mk, &what, &format!("at {}", num(relaxed))) {
            Ok((v, a, u)) => vec![self.repair(
                mk(v),
                format!("lower {name} from {} to {}{}", num(v0), num(v), higher(u)),
                1,
                1.0 - v / v0,
                a,
            )],
            Err(t) => vec![t],
        }
    }
}
