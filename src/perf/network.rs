//! Networking (perf-model paper, Section IV.B.3): filter frequencies, the bandwidth each node
//! sends and receives on each network (eq 9–10), and path latency (eq 11).
//!
//! Filter frequencies (Section IV.B.3): greedy F(f) = F(dest) (the fastest destination when
//! there are several); broadcast and scatter F(f) = F(src); merge/gather with ratio k:
//! F(f) = min F(src) / k. A filter fed only through greedy filters (e.g. a broadcast after a
//! greedy filter) has no source rate of its own: its messages are pulled by its destinations,
//! so it runs at the fastest destination's rate, and a greedy filter feeding a k:1 filter sends
//! k messages per output. An edge's message rate is F(src(e)), except after a greedy filter,
//! which sends when its destination asks: F(dest(e)) (k x F(dest) for a k:1 destination).

use super::ModulePerf;
use crate::model::{Application, Cluster, EdgeId, FilterKind, Mapping, NetworkId, NodeId, ObjectId, Route};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

/// Traffic of one node on one network, each way (full duplex).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkUse {
    pub node: NodeId,
    pub network: NetworkId,
    /// bw_s(n, net), eq 9, bytes per second.
    pub send: f64,
    /// bw_r(n, net), eq 10, bytes per second.
    pub recv: f64,
    /// BW(net), bytes per second.
    pub capacity: f64,
    pub send_edges: Vec<EdgeId>,
    pub recv_edges: Vec<EdgeId>,
}

pub(super) fn frequencies(app: &Application, modules: &[ModulePerf], module_of: &[Option<usize>]) -> Vec<f64> {
    let hz = module_of.iter().map(|mi| mi.map(|i| modules[i].frequency())).collect();
    object_frequencies(app, hz)
}

/// Frequencies of every object, given the modules' (`None` for filters): filters follow the
/// rules above.
pub fn object_frequencies(app: &Application, module_hz: Vec<Option<f64>>) -> Vec<f64> {
    let n = app.graph.node_count();
    let mut f = module_hz;
    let mut supply = vec![None; n];
    for o in app.graph.node_indices() {
        filter_freq(app, o, &mut f, &mut supply);
    }
    f.into_iter().map(|x| x.unwrap_or(0.0)).collect()
}

/// Messages per second that object `o` consumes from each of its inputs: k x F for a k:1
/// merge or gather, F otherwise.
fn demand(app: &Application, o: ObjectId, f: &mut Vec<Option<f64>>, supply: &mut Vec<Option<f64>>) -> f64 {
    let k = app.object(o).filter().map(|k| k.ratio() as f64).unwrap_or(1.0);
    k * filter_freq(app, o, f, supply)
}

/// The rate at which messages reach object `o` from upstream, whatever is downstream: F(m) for
/// a module; unbounded for a greedy filter (it sends whenever it is asked); the slowest input
/// divided by k for the other filters. Recurses upstream only, and stops at modules and greedy
/// filters.
fn upstream_rate(app: &Application, o: ObjectId, f: &[Option<f64>], supply: &mut Vec<Option<f64>>) -> f64 {
    if app.object(o).is_module() {
        return f[o.index()].unwrap_or(0.0);
    }
    if let Some(v) = supply[o.index()] {
        return v;
    }
    supply[o.index()] = Some(0.0); // a filter-only cycle, rejected when the application was read
    let v = match app.object(o).filter().expect("filter") {
        FilterKind::Greedy => f64::INFINITY,
        k => {
            let srcs: Vec<ObjectId> = app.graph.edges_directed(o, Direction::Incoming).map(|e| e.source()).collect();
            srcs.into_iter().map(|s| upstream_rate(app, s, f, supply)).fold(f64::INFINITY, f64::min) / k.ratio() as f64
        }
    };
    supply[o.index()] = Some(v);
    v
}

/// F of a filter: its upstream rate when that is bounded; otherwise (a greedy filter, or a filter
/// fed only through greedy filters) the rate its destinations ask for, the fastest one's.
/// Recursion: upstream rates never come back down, and downstream it follows the flow, which
/// has no filter-only cycle, so every chain of filters ends at modules.
fn filter_freq(app: &Application, o: ObjectId, f: &mut Vec<Option<f64>>, supply: &mut Vec<Option<f64>>) -> f64 {
    if let Some(v) = f[o.index()] {
        return v;
    }
    f[o.index()] = Some(0.0); // a filter-only cycle, rejected when the application was read
    let up = upstream_rate(app, o, f, supply);
    let v = if up.is_finite() {
        up
    } else {
        let dests: Vec<ObjectId> = app.graph.edges_directed(o, Direction::Outgoing).map(|e| e.target()).collect();
        dests.into_iter().map(|d| demand(app, d, f, supply)).fold(0.0, f64::max)
    };
    f[o.index()] = Some(v);
    v
}

/// Messages per second on every edge: F(src), except after a greedy filter, which sends when
/// its destination asks: the destination's demand (k x F for a k:1 merge or gather, F otherwise).
pub fn edge_rates(app: &Application, freq: &[f64]) -> Vec<f64> {
    app.graph
        .edge_references()
        .map(|e| {
            if app.object(e.source()).filter() == Some(FilterKind::Greedy) {
                let k = app.object(e.target()).filter().map(|k| k.ratio() as f64).unwrap_or(1.0);
                k * freq[e.target().index()]
            } else {
                freq[e.source().index()]
            }
        })
        .collect()
}

/// eq 9 and 10 for every (node, network) pair with traffic.
pub(super) fn links(app: &Application, cluster: &Cluster, mapping: &Mapping, rate: &[f64]) -> Vec<LinkUse> {
    let nets = cluster.networks.len();
    // Edges per (node, network) and direction first, so each list is allocated once.
    let mut sizes = vec![[0usize; 2]; cluster.nodes.len() * nets];
    for e in app.graph.edge_references() {
        if let Route::Net(net) = mapping.route(e.id()) {
            sizes[mapping.node_of(e.source()).ix() * nets + net.ix()][0] += 1;
            sizes[mapping.node_of(e.target()).ix() * nets + net.ix()][1] += 1;
        }
    }
    let mut slots: Vec<Option<LinkUse>> = vec![None; cluster.nodes.len() * nets];
    for e in app.graph.edge_references() {
        let Route::Net(net) = mapping.route(e.id()) else { continue };
        let bw = e.weight().volume * rate[e.id().index()];
        let cap = cluster.network(net).bandwidth;
        let blank = |node: NodeId| {
            let [s, r] = sizes[node.ix() * nets + net.ix()];
            LinkUse {
                node,
                network: net,
                send: 0.0,
                recv: 0.0,
                capacity: cap,
                send_edges: Vec::with_capacity(s),
                recv_edges: Vec::with_capacity(r),
            }
        };
        let s = mapping.node_of(e.source());
        let d = mapping.node_of(e.target());
        let ls = slots[s.ix() * nets + net.ix()].get_or_insert_with(|| blank(s));
        ls.send += bw;
        ls.send_edges.push(e.id());
        let ld = slots[d.ix() * nets + net.ix()].get_or_insert_with(|| blank(d));
        ld.recv += bw;
        ld.recv_edges.push(e.id());
    }
    // In (node, network) order, as before.
    slots.into_iter().flatten().collect()
}

/// L(P), eq 11: T_it of every module on the path plus Vol/BW + L of every non-local edge
/// between consecutive objects (the slowest, if several edges join them).
pub fn path_latency(
    app: &Application,
    cluster: &Cluster,
    mapping: &Mapping,
    modules: &[ModulePerf],
    module_of: &[Option<usize>],
    path: &[ObjectId],
) -> f64 {
    let mut l = 0.0;
    for &o in path {
        if let Some(i) = module_of[o.index()] {
            l += modules[i].tit;
        }
    }
    for w in path.windows(2) {
        let t = app
            .graph
            .edges_connecting(w[0], w[1])
            .map(|e| super::comm_time(app, cluster, mapping, e.id()))
            .fold(0.0, f64::max);
        l += t;
    }
    l
}
