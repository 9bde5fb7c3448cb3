//! The smallest change that makes an unsound mapping sound (`flowmap check`): one route change
//! (a connection's edges moved from one network to another) or one object moved to another
//! node (its edges then local, on the network they used if both nodes are on it, or else on the
//! fastest network both nodes share). Route changes are tried first, then moves of the objects
//! the diagnostics name, then every other object; each candidate is checked by the verifier.

use crate::model::{Application, Cluster, EdgeId, Mapping, NetworkId, NodeId, ObjectId, Placement, Route};
use crate::perf;
use crate::verify::{self, Verdict};
use std::collections::BTreeSet;
use std::time::Instant;

/// One change that makes the mapping sound.
#[derive(Clone, Debug)]
pub struct Move {
    /// The object moved: (object, from, to).
    pub object: Option<(ObjectId, NodeId, NodeId)>,
    /// Edges whose route changes: (edge, new route).
    pub routes: Vec<(EdgeId, Route)>,
    /// The change in words.
    pub description: String,
    /// The mapping after the change (sound).
    pub mapping: Mapping,
}

/// What the search found.
#[derive(Clone, Debug)]
pub struct MoveSearch {
    /// Sound single moves, route changes first (at most `max`).
    pub found: Vec<Move>,
    /// Candidates checked.
    pub tried: usize,
    /// Every candidate was checked (false when the deadline came first).
    pub complete: bool,
}

/// Single-object moves and route changes that make `m` sound, at most `max` of them.
pub fn smallest_moves(
    app: &Application,
    cluster: &Cluster,
    m: &Mapping,
    popts: &perf::Options,
    deadline: Option<Instant>,
    max: usize,
) -> MoveSearch {
    let mut s = MoveSearch { found: vec![], tried: 0, complete: true };
    let r = verify::check(app, cluster, m, popts);
    if r.verdict == Verdict::Sound {
        return s;
    }
    let named: BTreeSet<&str> = r
        .diagnostics
        .iter()
        .filter(|d| d.kind.is_error())
        .flat_map(|d| d.subjects.iter().map(|x| x.as_str()))
        .collect();
    let out_of_time = || deadline.is_some_and(|d| Instant::now() >= d);
    let consider = |s: &mut MoveSearch, mv: Move| -> bool {
        s.tried += 1;
        if verify::check(app, cluster, &mv.mapping, popts).verdict == Verdict::Sound {
            s.found.push(mv);
        }
        s.found.len() >= max
    };
    // 1. Route changes: a connection's edges on network a moved to network b.
    for (ci, conn) in app.connections.iter().enumerate() {
        let mut froms: Vec<Route> = conn.edges.iter().map(|&e| m.route(e)).filter(|r| *r != Route::Local).collect();
        froms.dedup();
        for from in froms {
            for b in (0..cluster.networks.len() as u32).map(NetworkId) {
                if from == Route::Net(b) {
                    continue;
                }
                let edges: Vec<EdgeId> = conn
                    .edges
                    .iter()
                    .copied()
                    .filter(|&e| m.route(e) == from && ends_on(app, cluster, m, e, b))
                    .collect();
                if edges.is_empty() {
                    continue;
                }
                if out_of_time() {
                    s.complete = false;
                    return s;
                }
                let mut mm = m.clone();
                for &e in &edges {
                    mm.routes[e.index()] = Route::Net(b);
                }
                let what = match from {
                    Route::Net(a) => format!("instead of {}", cluster.network(a).name),
                    _ => "(they had no usable network)".to_string(),
                };
                let description = format!(
                    "route the {} edge{} of {} on {} {what}",
                    edges.len(),
                    if edges.len() == 1 { "" } else { "s" },
                    app.connections[ci].name,
                    cluster.network(b).name
                );
                let routes = edges.iter().map(|&e| (e, Route::Net(b))).collect();
                if consider(&mut s, Move { object: None, routes, description, mapping: mm }) {
                    return s;
                }
            }
        }
    }
    // 2. One object to another node, the diagnostics' objects first.
    let mut objects: Vec<ObjectId> = app.graph.node_indices().collect();
    objects.sort_by_key(|&o| (!named.contains(app.object(o).name.as_str()), o));
    for o in objects {
        let obj = app.object(o);
        let g = app.group(obj.group);
        let from = m.node_of(o);
        for n in (0..cluster.nodes.len() as u32).map(NodeId) {
            let node = cluster.node(n);
            let usable = n != from
                && obj.costs().is_none_or(|c| c.texec.on(&node.processor).is_some())
                && g.allowed_nodes.as_ref().is_none_or(|a| a.contains(&node.name))
                && g.pins.as_ref().is_none_or(|p| p[obj.index] == node.name);
            if !usable {
                continue;
            }
            if out_of_time() {
                s.complete = false;
                return s;
            }
            let Some((mm, routes)) = moved(app, cluster, m, o, n) else { continue };
            let description = format!("move {} from {} to {}", obj.name, cluster.node(from).name, node.name);
            if consider(&mut s, Move { object: Some((o, from, n)), routes, description, mapping: mm }) {
                return s;
            }
        }
    }
    s
}

/// Both ends of `e` are on network `k`.
fn ends_on(app: &Application, cluster: &Cluster, m: &Mapping, e: EdgeId, k: NetworkId) -> bool {
    let (a, b) = app.graph.edge_endpoints(e).expect("edge");
    cluster.on_network(m.node_of(a), k) && cluster.on_network(m.node_of(b), k)
}

/// `m` with object `o` on node `n`; its edges local, on their old network, or on the fastest
/// shared one. None when an edge would have no network.
fn moved(
    app: &Application,
    cluster: &Cluster,
    m: &Mapping,
    o: ObjectId,
    n: NodeId,
) -> Option<(Mapping, Vec<(EdgeId, Route)>)> {
    let mut mm = m.clone();
    mm.placement[o.index()] = Placement { node: n, cpu: None };
    let mut changed = Vec::new();
    let incident = app
        .graph
        .edges_directed(o, petgraph::Direction::Outgoing)
        .chain(app.graph.edges_directed(o, petgraph::Direction::Incoming));
    for e in incident {
        use petgraph::visit::EdgeRef;
        let (a, b) = (mm.node_of(e.source()), mm.node_of(e.target()));
        let r = if a == b {
            Route::Local
        } else {
            match m.route(e.id()) {
                Route::Net(k) if cluster.on_network(a, k) && cluster.on_network(b, k) => Route::Net(k),
                _ => {
                    let shared = cluster.shared_networks(a, b);
                    let k = shared.into_iter().max_by(|x, y| {
                        cluster.network(*x).bandwidth.total_cmp(&cluster.network(*y).bandwidth).then(y.cmp(x))
                    })?;
                    Route::Net(k)
                }
            }
        };
        if r != m.route(e.id()) {
            changed.push((e.id(), r));
        }
        mm.routes[e.id().index()] = r;
    }
    Some((mm, changed))
}
