//! The mapping format (`models/mappings/*.toml`): where each module and filter instance runs
//! (optionally on which CPU), and which network each non-local connection uses.

use super::doc::Doc;
use super::suggest::{hint, listing};
use super::Expander;
use crate::error::{InputErrors, Sink};
use crate::model::*;
use petgraph::visit::EdgeRef;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use toml::Spanned;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawMapping {
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    place: BTreeMap<String, Spanned<RawPlace>>,
    #[serde(default)]
    route: Vec<RawRoute>,
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum RawPlace {
    One(String),
    List(Vec<String>),
    Block(RawBlock),
    Cpu(RawCpu),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawBlock {
    nodes: Vec<String>,
    per_node: usize,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawCpu {
    node: String,
    cpu: Option<u32>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    connection: Spanned<String>,
    network: Spanned<String>,
    from: Option<String>,
    to: Option<String>,
}

/// A mapping that may leave objects unplaced and edges unrouted.
#[derive(Clone, Debug, PartialEq)]
pub struct PartialMapping {
    /// Indexed by object index.
    pub placement: Vec<Option<Placement>>,
    /// The network the user chose for an edge, indexed by edge index.
    pub network: Vec<Option<NetworkId>>,
}

/// Parses a mapping of `app` on `cluster`; objects may be left unplaced.
pub fn mapping_from_str(
    src: &str,
    file: &str,
    app: &Application,
    cluster: &Cluster,
) -> Result<PartialMapping, InputErrors> {
    let doc = Doc::new(src, file);
    let raw: RawMapping = doc.deserialize()?;
    let mut sink = doc.sink();
    let ln = |sp: std::ops::Range<usize>| doc.line(sp);
    let mut pm =
        PartialMapping { placement: vec![None; app.graph.node_count()], network: vec![None; app.graph.edge_count()] };
    let node_ids: HashMap<&str, NodeId> =
        cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), NodeId(i as u32))).collect();
    let unknown_nodes = |sink: &mut Sink, names: &[&str], item: &str, line| {
        let h = hint(names[0], cluster.nodes.iter().map(|n| n.name.as_str()));
        let more = if names.len() > 1 { format!(" and {} more", names.len() - 1) } else { String::new() };
        sink.push(line, item, format!("unknown node \"{}\"{h}{more} (not in cluster {})", names[0], cluster.name));
    };
    let node = |sink: &mut Sink, name: &str, item: &str, line| -> Option<NodeId> {
        let id = node_ids.get(name).copied();
        if id.is_none() {
            unknown_nodes(sink, &[name], item, line);
        }
        id
    };
    let mut names = Expander::new();
    let mut nodes_of = |sink: &mut Sink, list: &[String], item: &str, line| -> Option<Vec<NodeId>> {
        let all = match names.all(list) {
            Ok(v) => v,
            Err(e) => {
                sink.push(line, item, e);
                return None;
            }
        };
        let unknown: Vec<&str> = all.iter().map(|s| s.as_str()).filter(|n| !node_ids.contains_key(n)).collect();
        if !unknown.is_empty() {
            unknown_nodes(sink, &unknown, item, line);
            return None;
        }
        Some(all.iter().map(|n| node_ids[n.as_str()]).collect())
    };
    let objects: HashMap<&str, ObjectId> = app.graph.node_indices().map(|o| (app.object(o).name.as_str(), o)).collect();
    let groups: HashMap<&str, GroupId> =
        app.groups.iter().enumerate().map(|(i, g)| (g.name.as_str(), GroupId(i as u32))).collect();
    for (key, val) in &raw.place {
        let line = ln(val.span());
        let item = format!("place {key}");
        // The key is a group or one instance.
        let targets: Vec<ObjectId> = if let Some(&g) = groups.get(key.as_str()) {
            app.group(g).objects.clone()
        } else if let Some(&o) = objects.get(key.as_str()) {
            vec![o]
        } else {
            let h = hint(key, app.groups.iter().map(|g| g.name.as_str()));
            sink.push(line, &item, format!("unknown module or filter \"{key}\"{h}"));
            continue;
        };
        let assigned: Option<Vec<Placement>> = match val.get_ref() {
            RawPlace::One(n) => {
                node(&mut sink, n, &item, line).map(|id| vec![Placement { node: id, cpu: None }; targets.len()])
            }
            RawPlace::List(l) => nodes_of(&mut sink, l, &item, line).and_then(|ids| {
                if ids.len() == targets.len() {
                    Some(ids.into_iter().map(|id| Placement { node: id, cpu: None }).collect())
                } else {
                    sink.push(line, &item, format!("lists {} nodes for {} instances", ids.len(), targets.len()));
                    None
                }
            }),
            RawPlace::Block(b) => nodes_of(&mut sink, &b.nodes, &item, line).and_then(|ids| {
                if b.per_node == 0 || ids.len().saturating_mul(b.per_node) < targets.len() {
                    sink.push(
                        line,
                        &item,
                        format!(
                            "{} nodes x {} per node cannot hold {} instances",
                            ids.len(),
                            b.per_node,
                            targets.len()
                        ),
                    );
                    None
                } else {
                    Some((0..targets.len()).map(|i| Placement { node: ids[i / b.per_node], cpu: None }).collect())
                }
            }),
            RawPlace::Cpu(c) => node(&mut sink, &c.node, &item, line).and_then(|id| {
                if let Some(cpu) = c.cpu {
                    if cpu >= cluster.node(id).cpus {
                        sink.push(
                            line,
                            &item,
                            format!(
                                "cpu {cpu} does not exist on {} ({} CPUs, numbered from 0)",
                                c.node,
                                cluster.node(id).cpus
                            ),
                        );
                        return None;
                    }
                    if targets.iter().any(|&o| !app.object(o).is_module()) {
                        sink.push(line, &item, "filters run on a node, not on a CPU");
                        return None;
                    }
                }
                Some(vec![Placement { node: id, cpu: c.cpu }; targets.len()])
            }),
        };
        if let Some(a) = assigned {
            for (o, p) in targets.iter().zip(a) {
                pm.placement[o.index()] = Some(p);
            }
        }
    }
    let conn_index: HashMap<&str, usize> =
        app.connections.iter().enumerate().map(|(i, c)| (c.name.as_str(), i)).collect();
    // A route repeated later is overridden by the later one: only the last of each is applied.
    let last: HashMap<(&str, Option<&str>, Option<&str>), usize> = raw
        .route
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.connection.get_ref().as_str(), r.from.as_deref(), r.to.as_deref()), i))
        .collect();
    for (i, r) in raw.route.iter().enumerate() {
        let key = (r.connection.get_ref().as_str(), r.from.as_deref(), r.to.as_deref());
        let cname = r.connection.get_ref();
        let item = format!("route {cname}");
        let Some(conn) = conn_index.get(cname.as_str()).map(|&i| &app.connections[i]) else {
            let known = app.connections.iter().map(|c| c.name.as_str());
            let h = hint(cname, app.connections.iter().map(|c| c.name.as_str()));
            sink.push(
                ln(r.connection.span()),
                &item,
                format!("unknown connection \"{cname}\"{h} (known: {})", listing(known)),
            );
            continue;
        };
        let Some(net) = cluster.find_network(r.network.get_ref()) else {
            let h = hint(r.network.get_ref(), cluster.networks.iter().map(|n| n.name.as_str()));
            sink.push(ln(r.network.span()), &item, format!("unknown network \"{}\"{h}", r.network.get_ref()));
            continue;
        };
        if last[&key] != i {
            continue; // names checked, edges set by the later route
        }
        // With from (or to), only that object's edges are looked at.
        let end = |name: &Option<String>| -> Result<Option<ObjectId>, String> {
            match name {
                None => Ok(None),
                Some(x) => objects
                    .get(x.as_str())
                    .map(|&o| Some(o))
                    .ok_or_else(|| format!("unknown object \"{x}\"{}", hint(x, objects.keys().copied()))),
            }
        };
        let (from, to) = match (end(&r.from), end(&r.to)) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(e), _) | (_, Err(e)) => {
                sink.push(ln(r.connection.span()), &item, e);
                continue;
            }
        };
        let cid = ConnectionId(conn_index[cname.as_str()] as u32);
        let candidates: Vec<EdgeId> = match (from, to) {
            (Some(f), _) => app.graph.edges_directed(f, petgraph::Direction::Outgoing).map(|e| e.id()).collect(),
            (None, Some(t)) => app.graph.edges_directed(t, petgraph::Direction::Incoming).map(|e| e.id()).collect(),
            (None, None) => conn.edges.clone(),
        };
        let mut n = 0;
        for e in candidates {
            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
            if app.graph[e].connection != cid || from.is_some_and(|f| f != s) || to.is_some_and(|t| t != d) {
                continue;
            }
            pm.network[e.index()] = Some(net);
            n += 1;
        }
        if n == 0 {
            sink.push(ln(r.connection.span()), &item, "from/to select no edge of this connection");
        }
    }
    sink.into_result(pm)
}

impl PartialMapping {
    /// Checks every object is placed and resolves every edge's route: local when both ends
    /// share a node; the given network; the only network both nodes share; unreachable when
    /// they share none. Two or more shared networks and no choice is an error, not a guess.
    pub fn complete(&self, app: &Application, cluster: &Cluster, file: &str) -> Result<Mapping, InputErrors> {
        let mut sink = Sink::new(file);
        for g in &app.groups {
            let mut missing = g
                .objects
                .iter()
                .filter(|o| self.placement[o.index()].is_none())
                .map(|&o| app.object(o).name.as_str())
                .peekable();
            if missing.peek().is_some() {
                let what = if g.is_module { "module" } else { "filter" };
                sink.push(
                    None,
                    format!("{what} {}", g.name),
                    format!("is not mapped: {} left without a node", listing(missing)),
                );
            }
        }
        if !sink.is_empty() {
            return sink.into_result(Mapping { placement: vec![], routes: vec![] });
        }
        let placement: Vec<Placement> = self.placement.iter().map(|p| p.expect("checked")).collect();
        let mut routes = Vec::with_capacity(app.graph.edge_count());
        let mut ambiguous: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for e in app.graph.edge_indices() {
            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
            let (ns, nd) = (placement[s.index()].node, placement[d.index()].node);
            let r = if ns == nd {
                Route::Local
            } else if let Some(net) = self.network[e.index()] {
                Route::Net(net)
            } else {
                let shared = cluster.shared_networks(ns, nd);
                match shared.len() {
                    0 => Route::Unreachable,
                    1 => Route::Net(shared[0]),
                    _ => {
                        let cname = app.connections[app.graph[e].connection.ix()].name.clone();
                        let names: Vec<&str> = shared.iter().map(|&n| cluster.network(n).name.as_str()).collect();
                        let ex = format!(
                            "{} ({} and {} share {})",
                            app.edge_name(e),
                            cluster.node(ns).name,
                            cluster.node(nd).name,
                            names.join(", ")
                        );
                        ambiguous.entry(cname).or_insert((0, ex)).0 += 1;
                        Route::Unreachable
                    }
                }
            };
            routes.push(r);
        }
        for (c, (n, ex)) in ambiguous {
            sink.push(
                None,
                format!("connection {c}"),
                format!("{n} edge(s) cross nodes that share several networks and no [[route]] says which, e.g. {ex}"),
            );
        }
        sink.into_result(Mapping { placement, routes })
    }
}
