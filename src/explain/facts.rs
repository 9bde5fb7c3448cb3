//! Facts: the user-level statements of an instance that a user wrote and could change, each
//! with a way to *relax* it on a copy of the validated model (the application, the cluster and
//! the fixed part of a mapping). An instance "with only the facts K binding" is the original
//! with every fact outside K relaxed.
//!
//! Relaxations (each a change that can only admit more mappings, except where noted):
//! - `pin` / fixed placement: the object is no longer placed in advance (its group's
//!   `allowed_nodes` and costs still bind);
//! - `route` (a `--fix`ed mapping's route): the connection's edges may use any network;
//! - `allowed`: the group may use every node;
//! - `cpus`: the node gets as many CPUs as the application has modules, at most
//!   max(64, twice the largest node) ([`relaxed_cpus`]);
//! - `bandwidth`: the network carries [`RELAXED_BANDWIDTH`] (a petabyte per second) per link;
//! - `attachment` (a node *not* on a network): the node is put on it;
//! - `requirement`: the requirement is dropped;
//! - `cost` (a module group's T_exec and LD on a processor type, or their absence): a module
//!   paced by its synchronous inputs gets 1/1000 of its T_exec and LD there (in a sound mapping
//!   its pace is its inputs', so no rate rises); a module that paces itself (or a member of a
//!   synchronous cycle) keeps its T_exec, which sets its rate, and gets 1/1000 of its LD; a
//!   type the description gives no cost for gets the group's smallest ones;
//! - `volume`: the connection's messages carry 0 bytes.
//!
//! Relaxing LD changes the CPU allocation's orders, so relaxations are not guaranteed monotone;
//! the conflict search therefore checks every claim it makes by solving (`conflict`).

use crate::csp::Analysis;
use crate::model::{
    Application, Cluster, ConnectionId, GroupId, ModuleCosts, NetworkId, NodeId, ObjectId, ObjectKind, PerType,
    Placement, Requirement,
};
use crate::parse::PartialMapping;
use crate::report::num;
use std::collections::BTreeMap;

/// The bandwidth of a relaxed network, bytes per second (1 PB/s: no edge comes near it).
pub const RELAXED_BANDWIDTH: f64 = 1e15;
/// The factor a relaxed cost multiplies T_exec (input-paced modules) and LD by.
pub const RELAXED_COST: f64 = 1e-3;

/// One user-level fact of an instance.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fact {
    /// The application pins `object` to the node named `node` (`pin = [...]`).
    Pin { object: ObjectId, node: String },
    /// The `--fix` mapping places `object` (on `node`, maybe on a CPU).
    Fixed { object: ObjectId },
    /// The `--fix` mapping chooses the network of (some of) the connection's edges.
    Route { connection: ConnectionId },
    /// The group may only use its `allowed_nodes`.
    Allowed { group: GroupId },
    /// The node's CPU count.
    Cpus { node: NodeId },
    /// The network's bandwidth.
    Bandwidth { network: NetworkId },
    /// The node is not on the network.
    Attachment { node: NodeId, network: NetworkId },
    /// A requirement (index into `Application::requirements`).
    Requirement { index: usize },
    /// A module group's T_exec and LD on a processor type (or their absence).
    Cost { group: GroupId, processor: String },
    /// A connection's volume per message.
    Volume { connection: ConnectionId },
}

impl Fact {
    /// The kind, as the JSON output names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Fact::Pin { .. } | Fact::Fixed { .. } => "pin",
            Fact::Route { .. } => "route",
            Fact::Allowed { .. } => "allowed",
            Fact::Cpus { .. } => "cpus",
            Fact::Bandwidth { .. } => "bandwidth",
            Fact::Attachment { .. } => "attachment",
            Fact::Requirement { .. } => "requirement",
            Fact::Cost { .. } => "cost",
            Fact::Volume { .. } => "volume",
        }
    }

    /// Preference when several conflicts exist: the conflict search keeps facts that come first,
    /// so things users reason about (placements, requirements, links, capacities) come before
    /// costs.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Fact::Fixed { .. } => 0,
            Fact::Pin { .. } => 1,
            Fact::Requirement { .. } => 2,
            // A node's missing link reads better than the bandwidth of a network the node is
            // not on (which a conflict would otherwise name, relaxed attachments joining it).
            Fact::Attachment { .. } => 3,
            Fact::Bandwidth { .. } => 4,
            Fact::Cpus { .. } => 5,
            Fact::Volume { .. } => 6,
            Fact::Route { .. } => 7,
            Fact::Allowed { .. } => 8,
            Fact::Cost { .. } => 9,
        }
    }
}

/// The CPU count of a relaxed node: as many as the application has modules, capped at
/// max(64, twice the largest node of the cluster) (the allocation's cost grows with the CPUs of
/// every node, and no instance of ours puts more solo modules on one node).
pub fn relaxed_cpus(app: &Application, cluster: &Cluster) -> u32 {
    let largest = cluster.nodes.iter().map(|n| n.cpus).max().unwrap_or(1);
    (app.modules().count().max(1) as u32).min(64.max(2 * largest))
}

/// A changed copy of an instance, ready for `solve`.
#[derive(Clone, Debug)]
pub struct Instance {
    pub app: Application,
    pub cluster: Cluster,
    pub fix: Option<PartialMapping>,
}

/// The facts of one instance and how to relax them.
pub struct Facts<'a> {
    pub app: &'a Application,
    pub cluster: &'a Cluster,
    pub fix: Option<&'a PartialMapping>,
    pub list: Vec<Fact>,
    /// Per group: its modules pace themselves (no synchronous input, or a synchronous cycle).
    self_paced: Vec<bool>,
    /// Processor types of the cluster, sorted.
    processors: Vec<String>,
    /// Per module (index as in `Analysis::modules`): its object and its synchronous inputs.
    modules: Vec<(ObjectId, Vec<usize>)>,
}

impl<'a> Facts<'a> {
    /// Every fact of the instance, in a stable order (kind, then declaration order).
    pub fn new(app: &'a Application, cluster: &'a Cluster, fix: Option<&'a PartialMapping>) -> Facts<'a> {
        let an = Analysis::new(app, cluster, None);
        let mut self_paced = vec![false; app.groups.len()];
        for (mi, &o) in an.modules.iter().enumerate() {
            if an.inputs[mi].is_empty() || an.cycle_of[mi].is_some() {
                self_paced[app.object(o).group.ix()] = true;
            }
        }
        let mut processors: Vec<String> = cluster.nodes.iter().map(|n| n.processor.clone()).collect();
        processors.sort();
        processors.dedup();
        let mut list = Vec::new();
        if let Some(f) = fix {
            for o in app.graph.node_indices() {
                if f.placement[o.index()].is_some() {
                    list.push(Fact::Fixed { object: o });
                }
            }
            for (c, conn) in app.connections.iter().enumerate() {
                if conn.edges.iter().any(|e| f.network[e.index()].is_some()) {
                    list.push(Fact::Route { connection: ConnectionId(c as u32) });
                }
            }
        }
        for g in &app.groups {
            if let Some(pins) = &g.pins {
                for (i, &o) in g.objects.iter().enumerate() {
                    list.push(Fact::Pin { object: o, node: pins[i].clone() });
                }
            }
        }
        for (r, _) in app.requirements.iter().enumerate() {
            list.push(Fact::Requirement { index: r });
        }
        for k in 0..cluster.networks.len() {
            list.push(Fact::Bandwidth { network: NetworkId(k as u32) });
        }
        for n in 0..cluster.nodes.len() {
            list.push(Fact::Cpus { node: NodeId(n as u32) });
        }
        for (c, conn) in app.connections.iter().enumerate() {
            if conn.edges.iter().any(|&e| app.graph[e].volume > 0.0) {
                list.push(Fact::Volume { connection: ConnectionId(c as u32) });
            }
        }
        for (gi, g) in app.groups.iter().enumerate() {
            if g.allowed_nodes.is_some() {
                list.push(Fact::Allowed { group: GroupId(gi as u32) });
            }
        }
        for (n, node) in cluster.nodes.iter().enumerate() {
            for k in 0..cluster.networks.len() {
                if !node.networks.contains(&NetworkId(k as u32)) {
                    list.push(Fact::Attachment { node: NodeId(n as u32), network: NetworkId(k as u32) });
                }
            }
        }
        for (gi, g) in app.groups.iter().enumerate() {
            if g.is_module && !g.objects.is_empty() {
                for p in &processors {
                    list.push(Fact::Cost { group: GroupId(gi as u32), processor: p.clone() });
                }
            }
        }
        let modules = an
            .modules
            .iter()
            .enumerate()
            .map(|(mi, &o)| (o, an.inputs[mi].iter().map(|x| x.source).collect()))
            .collect();
        Facts { app, cluster, fix, list, self_paced, processors, modules }
    }

    /// The module groups whose T_exec sets the pace of `objects`: their self-paced synchronous
    /// ancestors (themselves included), in group order.
    pub fn pacers(&self, objects: &[ObjectId]) -> Vec<GroupId> {
        let mut stack: Vec<usize> =
            (0..self.modules.len()).filter(|&mi| objects.contains(&self.modules[mi].0)).collect();
        let mut seen: std::collections::BTreeSet<usize> = stack.iter().copied().collect();
        let mut out = std::collections::BTreeSet::new();
        while let Some(mi) = stack.pop() {
            let g = self.app.object(self.modules[mi].0).group;
            if self.self_paced(g) {
                out.insert(g);
            }
            for &s in &self.modules[mi].1 {
                if seen.insert(s) {
                    stack.push(s);
                }
            }
        }
        out.into_iter().collect()
    }

    /// The processor types of the cluster.
    pub fn processors(&self) -> &[String] {
        &self.processors
    }

    /// Whether the modules of `g` pace themselves (their T_exec sets their rate).
    pub fn self_paced(&self, g: GroupId) -> bool {
        self.self_paced[g.ix()]
    }

    /// The instance with only the facts marked in `keep` binding (indices into `list`), or the
    /// reason it is trivially infeasible (two kept facts place one object on two nodes).
    pub fn instance(&self, keep: &[bool]) -> Result<Instance, String> {
        let (app, cluster) = (self.app, self.cluster);
        let mut a = app.clone();
        let mut c = cluster.clone();
        let mut fix = PartialMapping {
            placement: vec![None; app.graph.node_count()],
            network: vec![None; app.graph.edge_count()],
        };
        // Pins become fixed placements, so that each instance's pin can be relaxed on its own.
        for g in &mut a.groups {
            g.pins = None;
        }
        let mut relaxed_costs: BTreeMap<GroupId, Vec<&str>> = BTreeMap::new();
        let mut dropped = vec![false; app.requirements.len()];
        let many = relaxed_cpus(app, cluster);
        for (i, f) in self.list.iter().enumerate() {
            let kept = keep[i];
            match f {
                Fact::Pin { object, node } if kept => {
                    let Some(n) = cluster.find_node(node) else {
                        return Err(format!(
                            "{} is pinned to {node}, which is not in the cluster",
                            app.object(*object).name
                        ));
                    };
                    place(&mut fix, app, cluster, *object, Placement { node: n, cpu: None })?;
                }
                Fact::Fixed { object } if kept => {
                    let p = self.fix.and_then(|f| f.placement[object.index()]).expect("fixed object");
                    place(&mut fix, app, cluster, *object, p)?;
                }
                Fact::Route { connection } if kept => {
                    let f = self.fix.expect("routes come from a fixed mapping");
                    for &e in &app.connections[connection.ix()].edges {
                        fix.network[e.index()] = f.network[e.index()];
                    }
                }
                Fact::Allowed { group } if !kept => a.groups[group.ix()].allowed_nodes = None,
                Fact::Cpus { node } if !kept => {
                    let n = &mut c.nodes[node.ix()];
                    n.cpus = n.cpus.max(many);
                }
                Fact::Bandwidth { network } if !kept => {
                    let k = &mut c.networks[network.ix()];
                    k.bandwidth = k.bandwidth.max(RELAXED_BANDWIDTH);
                }
                Fact::Attachment { node, network } if !kept => {
                    let n = &mut c.nodes[node.ix()];
                    n.networks.push(*network);
                    n.networks.sort();
                }
                Fact::Requirement { index } if !kept => dropped[*index] = true,
                Fact::Cost { group, processor } if !kept => {
                    relaxed_costs.entry(*group).or_default().push(processor.as_str());
                }
                Fact::Volume { connection } if !kept => {
                    for &e in &app.connections[connection.ix()].edges {
                        a.graph[e].volume = 0.0;
                    }
                }
                _ => {}
            }
        }
        let mut r = 0;
        a.requirements.retain(|_| {
            r += 1;
            !dropped[r - 1]
        });
        for (g, types) in relaxed_costs {
            let self_paced = self.self_paced(g);
            for &o in &app.group(g).objects {
                let ObjectKind::Module(costs) = &app.object(o).kind else { continue };
                let relaxed = self.relaxed_costs(costs, &types, self_paced);
                a.graph[o].kind = ObjectKind::Module(relaxed);
            }
        }
        let any_fixed = fix.placement.iter().any(|p| p.is_some()) || fix.network.iter().any(|n| n.is_some());
        Ok(Instance { app: a, cluster: c, fix: any_fixed.then_some(fix) })
    }

    /// Costs with the processor types in `types` relaxed (see the module comment).
    fn relaxed_costs(&self, c: &ModuleCosts, types: &[&str], self_paced: bool) -> ModuleCosts {
        let given = |v: &PerType, pick: fn(f64, f64) -> f64| -> Option<f64> {
            self.processors.iter().filter_map(|p| v.on(p)).reduce(pick).or(match v {
                PerType::Uniform(x) => Some(*x),
                PerType::ByType(m) => m.values().copied().reduce(pick),
            })
        };
        let (t_min, ld_min) = (given(&c.texec, f64::min), given(&c.load, f64::min));
        let mut texec = BTreeMap::new();
        let mut load = BTreeMap::new();
        for p in &self.processors {
            let (t, ld) = (c.texec.on(p), c.load.on(p));
            let (t, ld) = if types.contains(&p.as_str()) {
                let t = t.or(t_min).map(|t| if self_paced { t } else { t * RELAXED_COST });
                (t, ld.or(ld_min).map(|l| l * RELAXED_COST))
            } else {
                (t, ld)
            };
            if let (Some(t), Some(ld)) = (t, ld) {
                texec.insert(p.clone(), t);
                load.insert(p.clone(), ld);
            }
        }
        ModuleCosts { texec: PerType::ByType(texec), load: PerType::ByType(load) }
    }

    /// Every fact binding.
    pub fn all(&self) -> Vec<bool> {
        vec![true; self.list.len()]
    }

    /// Names of the things a fact is about (objects, groups, nodes, networks, connections).
    pub fn subjects(&self, f: &Fact) -> Vec<String> {
        let (app, cluster) = (self.app, self.cluster);
        match f {
            Fact::Pin { object, node } => vec![app.object(*object).name.clone(), node.clone()],
            Fact::Fixed { object } => {
                let p = self.fix.and_then(|m| m.placement[object.index()]).expect("fixed");
                vec![app.object(*object).name.clone(), cluster.node(p.node).name.clone()]
            }
            Fact::Route { connection } | Fact::Volume { connection } => {
                vec![app.connections[connection.ix()].name.clone()]
            }
            Fact::Allowed { group } => vec![app.group(*group).name.clone()],
            Fact::Cpus { node } => vec![cluster.node(*node).name.clone()],
            Fact::Bandwidth { network } => vec![cluster.network(*network).name.clone()],
            Fact::Attachment { node, network } => {
                vec![cluster.node(*node).name.clone(), cluster.network(*network).name.clone()]
            }
            Fact::Requirement { index } => {
                let mut v = vec![requirement_name(&app.requirements[*index]).to_string()];
                match &app.requirements[*index] {
                    Requirement::MinFrequency { group, .. } => v.push(app.group(*group).name.clone()),
                    Requirement::MaxLatency { path, .. } => v.extend(path.iter().map(|&o| app.object(o).name.clone())),
                }
                v
            }
            Fact::Cost { group, processor } => vec![app.group(*group).name.clone(), processor.clone()],
        }
    }

    /// The fact in words, with its numbers.
    pub fn describe(&self, f: &Fact) -> String {
        let (app, cluster) = (self.app, self.cluster);
        match f {
            Fact::Pin { object, node } => format!("{} is pinned to {node}", app.object(*object).name),
            Fact::Fixed { object } => {
                let p = self.fix.and_then(|m| m.placement[object.index()]).expect("fixed");
                let cpu = p.cpu.map(|c| format!(" (CPU {c})")).unwrap_or_default();
                format!("the mapping places {} on {}{cpu}", app.object(*object).name, cluster.node(p.node).name)
            }
            Fact::Route { connection } => {
                let conn = &app.connections[connection.ix()];
                let f = self.fix.expect("fixed");
                let mut nets: Vec<&str> = conn
                    .edges
                    .iter()
                    .filter_map(|e| f.network[e.index()])
                    .map(|k| cluster.network(k).name.as_str())
                    .collect();
                nets.sort();
                nets.dedup();
                format!("the mapping routes {} on {}", conn.name, nets.join(", "))
            }
            Fact::Allowed { group } => {
                let g = app.group(*group);
                format!("{} may only run on {}", g.name, g.allowed_nodes.as_ref().map(|a| fold(a)).unwrap_or_default())
            }
            Fact::Cpus { node } => {
                let n = cluster.node(*node);
                format!("{} has {} CPU{}", n.name, n.cpus, if n.cpus == 1 { "" } else { "s" })
            }
            Fact::Bandwidth { network } => {
                let k = cluster.network(*network);
                let on: Vec<&str> =
                    cluster.nodes.iter().filter(|n| n.networks.contains(network)).map(|n| n.name.as_str()).collect();
                format!(
                    "{} carries {} per node link, each way ({} on it: {})",
                    k.name,
                    mbs(k.bandwidth),
                    on.len(),
                    fold(&on)
                )
            }
            Fact::Attachment { node, network } => {
                format!("{} is not on {}", cluster.node(*node).name, cluster.network(*network).name)
            }
            Fact::Requirement { index } => match &app.requirements[*index] {
                Requirement::MinFrequency { name, group, hz } => {
                    format!("requirement {name}: every {} instance at least {} Hz", app.group(*group).name, num(*hz))
                }
                Requirement::MaxLatency { name, path, max_s } => {
                    let p: Vec<&str> = path.iter().map(|&o| app.object(o).name.as_str()).collect();
                    format!("requirement {name}: latency of {} at most {}", p.join(" -> "), ms(*max_s))
                }
            },
            Fact::Cost { group, processor } => {
                let g = app.group(*group);
                let c = app.object(g.objects[0]).costs().expect("module");
                match (c.texec.on(processor), c.load.on(processor)) {
                    (Some(t), Some(ld)) => format!(
                        "{} takes T_exec = {} with LD = {} on {processor}{}",
                        g.name,
                        ms(t),
                        num(ld),
                        if self.self_paced(*group) { " (it paces itself: T_exec sets its rate)" } else { "" }
                    ),
                    _ => format!("{} has no costs for {processor} (it cannot run there)", g.name),
                }
            }
            Fact::Volume { connection } => {
                let conn = &app.connections[connection.ix()];
                let vols: Vec<f64> = conn.edges.iter().map(|&e| app.graph[e].volume).collect();
                let (lo, hi) = vols.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
                let v = if lo == hi { bytes(hi) } else { format!("{}..{}", bytes(lo), bytes(hi)) };
                format!(
                    "{} carries {v} per message ({} edge{})",
                    conn.name,
                    vols.len(),
                    if vols.len() == 1 { "" } else { "s" }
                )
            }
        }
    }

    /// The objects a fact is about (for seeding and for witnesses).
    pub fn objects(&self, f: &Fact) -> Vec<ObjectId> {
        let app = self.app;
        match f {
            Fact::Pin { object, .. } | Fact::Fixed { object } => vec![*object],
            Fact::Allowed { group } | Fact::Cost { group, .. } => app.group(*group).objects.clone(),
            Fact::Requirement { index } => match &app.requirements[*index] {
                Requirement::MinFrequency { group, .. } => app.group(*group).objects.clone(),
                Requirement::MaxLatency { path, .. } => path.clone(),
            },
            Fact::Route { connection } | Fact::Volume { connection } => {
                let mut v: Vec<ObjectId> = app.connections[connection.ix()]
                    .edges
                    .iter()
                    .flat_map(|&e| {
                        let (s, d) = app.graph.edge_endpoints(e).expect("edge");
                        [s, d]
                    })
                    .collect();
                v.sort();
                v.dedup();
                v
            }
            Fact::Cpus { .. } | Fact::Bandwidth { .. } | Fact::Attachment { .. } => vec![],
        }
    }
}

fn place(
    fix: &mut PartialMapping,
    app: &Application,
    cluster: &Cluster,
    o: ObjectId,
    p: Placement,
) -> Result<(), String> {
    match fix.placement[o.index()] {
        Some(q) if q.node != p.node => Err(format!(
            "{} is pinned to {} and placed on {} by the mapping",
            app.object(o).name,
            cluster.node(q.node).name,
            cluster.node(p.node).name
        )),
        Some(q) => {
            fix.placement[o.index()] = Some(Placement { node: q.node, cpu: q.cpu.or(p.cpu) });
            Ok(())
        }
        None => {
            fix.placement[o.index()] = Some(p);
            Ok(())
        }
    }
}

pub(crate) fn requirement_name(r: &Requirement) -> &str {
    match r {
        Requirement::MinFrequency { name, .. } | Requirement::MaxLatency { name, .. } => name,
    }
}

/// Node names folded into ranges (`node01..node08`).
pub(crate) fn fold<S: AsRef<str>>(names: &[S]) -> String {
    let v: Vec<&str> = names.iter().map(|s| s.as_ref()).collect();
    crate::report::fold_names(&v, 80)
}

pub(crate) fn ms(s: f64) -> String {
    format!("{} ms", num(s * 1e3))
}

pub(crate) fn mbs(b: f64) -> String {
    format!("{} MB/s", num(b / 1e6))
}

pub(crate) fn bytes(b: f64) -> String {
    if b >= 1e6 {
        format!("{} MB", num(b / 1e6))
    } else if b >= 1e3 {
        format!("{} kB", num(b / 1e3))
    } else {
        format!("{} B", num(b))
    }
}
