//! The mapping format (`models/mappings/*.toml`): where each module and filter instance runs
//! (optionally on which CPU), and which network each non-local connection uses.

use super::{expand_range, span_line, toml_error};
use crate::error::{InputErrors, Sink};
use crate::model::*;
use serde::Deserialize;
use std::collections::BTreeMap;
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
    let raw: RawMapping = toml::from_str(src).map_err(|e| toml_error(src, file, e))?;
    let mut sink = Sink::new(file);
    let ln = |sp: std::ops::Range<usize>| span_line(src, sp);
    let mut pm =
        PartialMapping { placement: vec![None; app.graph.node_count()], network: vec![None; app.graph.edge_count()] };
    let node = |sink: &mut Sink, name: &str, item: &str, line| -> Option<NodeId> {
        let id = cluster.find_node(name);
        if id.is_none() {
            sink.push(line, item, format!("unknown node \"{name}\" (not in cluster {})", cluster.name));
        }
        id
    };
    let nodes_of = |sink: &mut Sink, list: &[String], item: &str, line| -> Option<Vec<NodeId>> {
        let mut out = Vec::new();
        let mut ok = true;
        for s in list {
            match expand_range(s) {
                Ok(v) => {
                    for n in v {
                        match node(sink, &n, item, line) {
                            Some(id) => out.push(id),
                            None => ok = false,
                        }
                    }
                }
                Err(e) => {
                    sink.push(line, item, e);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    };
    for (key, val) in &raw.place {
        let line = ln(val.span());
        let item = format!("place {key}");
        // The key is a group or one instance.
        let targets: Vec<ObjectId> = if let Some(g) = app.find_group(key) {
            app.group(g).objects.clone()
        } else if let Some(o) = app.find_object(key) {
            vec![o]
        } else {
            sink.push(line, &item, format!("unknown module or filter \"{key}\""));
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
                if b.per_node == 0 || ids.len() * b.per_node < targets.len() {
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
    for r in &raw.route {
        let cname = r.connection.get_ref();
        let item = format!("route {cname}");
        let Some(conn) = app.connections.iter().find(|c| &c.name == cname) else {
            let known: Vec<&str> = app.connections.iter().map(|c| c.name.as_str()).collect();
            sink.push(
                ln(r.connection.span()),
                &item,
                format!("unknown connection \"{cname}\" (known: {})", known.join(", ")),
            );
            continue;
        };
        let Some(net) = cluster.find_network(r.network.get_ref()) else {
            sink.push(ln(r.network.span()), &item, format!("unknown network \"{}\"", r.network.get_ref()));
            continue;
        };
        let mut n = 0;
        for &e in &conn.edges {
            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
            if r.from.as_ref().is_some_and(|f| f != &app.object(s).name)
                || r.to.as_ref().is_some_and(|t| t != &app.object(d).name)
            {
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
            let missing: Vec<&str> = g
                .objects
                .iter()
                .filter(|o| self.placement[o.index()].is_none())
                .map(|&o| app.object(o).name.as_str())
                .collect();
            if !missing.is_empty() {
                let what = if g.is_module { "module" } else { "filter" };
                sink.push(
                    None,
                    format!("{what} {}", g.name),
                    format!("is not mapped: {} left without a node", missing.join(", ")),
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
