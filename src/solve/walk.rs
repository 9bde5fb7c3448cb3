//! Verifier-guided repair: a min-conflicts walk over complete mappings. Each step takes an
//! error diagnostic of the current mapping, one object it names (or one on a node it names),
//! and moves it to the node of its domain whose mapping `verify::check` gives the fewest
//! errors (ties broken by the least `strain`, how far the requirements and links are from
//! holding, then at random; sideways moves allowed, the last few moved objects are tabu).
//! Routes of the moved object's edges go local or on the fastest shared network.
//!
//! It complements the CSP-based LNS, whose sub-models are relaxations of the CPU allocation:
//! on dense instances most of their candidates are rejected by the verifier, while here every
//! step is judged by the verifier itself. It proves nothing; a sound mapping it returns is
//! checked like every other.

use super::greedy::Ctx;
use crate::model::{EdgeId, Mapping, NetworkId, NodeId, ObjectId, Placement, Requirement, Route};
use crate::verify::{self, Report};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, VecDeque};

/// Steps without a new lowest error count before a kick, and the objects a kick moves.
const KICK_AFTER: usize = 150;
const KICK: usize = 4;
/// Kicks without a new fewest error count before the walk gives up.
const MAX_KICKS: usize = 40;

/// Target nodes ranked per step, at most (plus the nodes of the moved object's neighbours),
/// and those of them judged by a full `check` (the best by `Tables::cost`). Three, not six:
/// more cheap steps beat fewer well-judged ones. Measured on the hard corpus (feasibility,
/// 60 s): 300/64 s2 4.2 -> 0.4 s, 1000/256 18.7 -> 5.6 s and 10.8 -> 7.3 s, 3000/1024 tight
/// unknown -> 47.8 s, nothing slower than 0.6 s up to 300/64 (with two: 300/64 s1 0.3 -> 3.8 s,
/// 50/16 s2 3.7 s). Minimising (60 s): the same best at realistic 100/32 s4, 300/64 s1,
/// 1000/256 and hard 300/64; hard 100/32 24 -> 25, hard 1000/256 228 -> 224.
const MAX_TARGETS: usize = 64;
const CHECKED: usize = 3;
/// Batches of moves run while there are more errors than this, at most MAX_BATCH moves; a
/// batch shrunk to one move grows again after BATCH_AGAIN steps.
const BATCH_MIN: usize = 8;
const MAX_BATCH: usize = 64;
const BATCH_AGAIN: usize = 100;

/// Errors of a report, plus filters off their neighbours' nodes under filter locality (fewer
/// is better; 0: sound and local).
fn errors(cx: Ctx, m: &Mapping, r: &Report) -> usize {
    r.diagnostics.iter().filter(|d| d.kind.is_error()).count() + misplaced_filters(cx, m).len()
}

/// How far a report's requirements and links are from holding, summed (0 when they all
/// hold; infinite without a prediction): each requirement's relative shortfall (latency over
/// its limit, required frequency over the module's, each at most 4) and the links' relative
/// excess (`excess`). The walk breaks ties in the error count with it: a path latency or a
/// frequency that several moves must fix together counts one error until all are made, and a
/// walk that sees only the count drifts on that plateau (alt-gen 50/16 s10: the walks from the
/// 9-node shapes' packings ended one or two errors short, the path latency `cardio1-latency`
/// in most, and 9 nodes came after 28 s; with the tie-break in 5.6 s). CPU loads are left
/// out: with them alt-gen 1000/256 s1's squeeze ended at 90, 94, 81 nodes where it had 69,
/// 82, 74 (seeds 0-2; without them, over ten seeds, a mean of 80.8 against 80.6: that
/// instance's spread), and an overloaded CPU is one error that one move mends.
pub fn strain(cx: Ctx, r: &Report) -> f64 {
    let Some(p) = &r.prediction else { return f64::INFINITY };
    let mut total = excess(r);
    let mut lat = r.path_latencies.iter();
    for q in &cx.app.requirements {
        match q {
            Requirement::MinFrequency { group, hz, .. } => {
                for &o in &cx.app.group(*group).objects {
                    if let Some(m) = p.module(o) {
                        total += (hz * m.tit - 1.0).clamp(0.0, 4.0);
                    }
                }
            }
            Requirement::MaxLatency { max_s, .. } => {
                if let Some((_, l)) = lat.next() {
                    total += (l / max_s.max(1e-12) - 1.0).clamp(0.0, 4.0);
                }
            }
        }
    }
    if total.is_nan() {
        f64::INFINITY
    } else {
        total
    }
}

/// Filters on no node of a neighbour, when filter locality is asked for.
fn misplaced_filters(cx: Ctx, m: &Mapping) -> Vec<ObjectId> {
    if !cx.filter_locality {
        return Vec::new();
    }
    let g = &cx.app.graph;
    g.node_indices()
        .filter(|&o| !cx.app.object(o).is_module())
        .filter(|&o| {
            let n = m.node_of(o);
            !g.neighbors_directed(o, Direction::Incoming)
                .chain(g.neighbors_directed(o, Direction::Outgoing))
                .any(|b| m.node_of(b) == n)
        })
        .collect()
}

/// Sets the routes of `o`'s edges for its current node and its neighbours' nodes: local, or
/// the fastest shared network with room left by the other edges (bytes per second as in
/// `bytes`), else the one with the most headroom; heaviest edge first.
fn reroute(cx: Ctx, m: &mut Mapping, o: ObjectId, bytes: &[f64]) {
    // Routing reads the links' table alone (`route`).
    let mut t = Tables::links(cx, m, bytes, &[o]);
    let mut es: Vec<EdgeId> = cx
        .app
        .graph
        .edges_directed(o, Direction::Outgoing)
        .chain(cx.app.graph.edges_directed(o, Direction::Incoming))
        .map(|e| e.id())
        .collect();
    es.sort_by(|a, b| bytes[b.index()].total_cmp(&bytes[a.index()]).then(a.cmp(b)));
    es.dedup();
    for e in es {
        route(cx, m, e, bytes, &mut t);
    }
}

/// Puts `o` and the objects that must share its node (`share`, `Analysis::must_share`) on
/// `n`, and reroutes their edges when `bytes` are given.
fn put(cx: Ctx, m: &mut Mapping, share: &[Vec<ObjectId>], o: ObjectId, n: NodeId, bytes: Option<&[f64]>) {
    let unit = || std::iter::once(o).chain(share[o.index()].iter().copied());
    for x in unit() {
        m.placement[x.index()].node = n;
        m.placement[x.index()].cpu = None;
    }
    if let Some(bytes) = bytes {
        for x in unit() {
            reroute(cx, m, x, bytes);
        }
    }
}

/// `o` and the objects that must share its node, `o` first.
fn unit_of(share: &[Vec<ObjectId>], o: ObjectId) -> Vec<ObjectId> {
    std::iter::once(o).chain(share[o.index()].iter().copied()).collect()
}

/// Routes every edge as `reroute` does, heaviest first.
fn route_all(cx: Ctx, m: &mut Mapping, bytes: &[f64]) {
    let mut t = Tables::empty(cx);
    let mut es: Vec<EdgeId> = cx.app.graph.edge_indices().collect();
    es.sort_by(|a, b| bytes[b.index()].total_cmp(&bytes[a.index()]).then(a.cmp(b)));
    for e in es {
        route(cx, m, e, bytes, &mut t);
    }
}

/// Routes edge `e` for its ends' nodes (see `reroute`) and books it in `t`.
fn route(cx: Ctx, m: &mut Mapping, e: EdgeId, bytes: &[f64], t: &mut Tables) {
    let (s, d) = cx.app.graph.edge_endpoints(e).expect("edge");
    let (a, b) = (m.node_of(s), m.node_of(d));
    let x = bytes[e.index()];
    let given = cx.fix.and_then(|f| f.network[e.index()]);
    m.routes[e.index()] = if a == b {
        Route::Local
    } else if let Some(k) = given.filter(|&k| cx.cluster.on_network(a, k) && cx.cluster.on_network(b, k)) {
        // A network the partial mapping fixes.
        t.bw[a.ix() * t.nk + k.ix()][0] += x;
        t.bw[b.ix() * t.nk + k.ix()][1] += x;
        Route::Net(k)
    } else {
        // The fastest network the edge fits on (a slow one lengthens its messages, eq 5),
        // else the one with the most headroom.
        let nets: Vec<(f64, f64, NetworkId)> = cx
            .cluster
            .shared_networks(a, b)
            .into_iter()
            .map(|k| {
                let cap = cx.cluster.network(k).bandwidth;
                (
                    (cap - t.bw[a.ix() * t.nk + k.ix()][0] - x).min(cap - t.bw[b.ix() * t.nk + k.ix()][1] - x) / cap,
                    cap,
                    k,
                )
            })
            .collect();
        let fits = nets.iter().filter(|n| n.0 >= 0.0).max_by(|p, q| p.1.total_cmp(&q.1).then(q.2.cmp(&p.2)));
        let best = fits.or_else(|| nets.iter().max_by(|p, q| p.0.total_cmp(&q.0).then(q.2.cmp(&p.2))));
        match best.map(|n| n.2) {
            Some(k) => {
                t.bw[a.ix() * t.nk + k.ix()][0] += x;
                t.bw[b.ix() * t.nk + k.ix()][1] += x;
                Route::Net(k)
            }
            // No common network: the verifier reports it.
            None => Route::Unreachable,
        }
    };
}

/// What the cheap ranking of target nodes sees of the current mapping: modules and load lower
/// bounds per node, bytes per second per (node, network, direction) without the moved object's
/// edges. A ranking only: the chosen targets are judged by `check`.
struct Tables {
    count: Vec<i64>,
    /// Modules per node (without the moved object).
    on_node: Vec<Vec<ObjectId>>,
    /// T_it per object in the current prediction (modules; empty without one): the paces the
    /// allocation estimate of a module stacked on a full node keeps (`paced`).
    tit: Vec<f64>,
    load: Vec<f64>,
    /// [node x networks + network][0 = send, 1 = receive] (one allocation: a vector per node
    /// was a thousand per call at 1,024 nodes).
    bw: Vec<[f64; 2]>,
    /// Networks in the cluster (`bw`'s stride).
    nk: usize,
}

/// A module in the allocation estimate: (T_I/O key, tie-break, T_exec, LD, pace needed).
type Entry = (f64, u32, f64, f64, f64);

/// Bytes per second of every edge: the predicted rate when there is a prediction, else the
/// analysis' highest rate.
fn edge_bytes(cx: Ctx, r: Option<&Report>) -> Vec<f64> {
    let g = &cx.app.graph;
    g.edge_references()
        .map(|e| {
            let i = e.id().index();
            let rate = r.and_then(|r| r.prediction.as_ref()).map_or(cx.an.rate_hi[i], |p| p.edge_rate[i]);
            e.weight().volume * if rate.is_finite() { rate } else { cx.an.rate_hi[i] }
        })
        .collect()
}

impl Tables {
    /// The tables without the objects `moving` (and their edges).
    fn new(cx: Ctx, m: &Mapping, bytes: &[f64], moving: &[ObjectId]) -> Tables {
        let (app, cluster, an) = (cx.app, cx.cluster, cx.an);
        let nn = cluster.nodes.len();
        let mut t = Tables::links(cx, m, bytes, moving);
        t.count = vec![0; nn];
        t.on_node = vec![Vec::new(); nn];
        t.load = vec![0.0; nn];
        for o in app.graph.node_indices() {
            if let (Some(mi), false) = (an.module_of[o.index()], moving.contains(&o)) {
                let n = m.node_of(o);
                t.count[n.ix()] += 1;
                t.on_node[n.ix()].push(o);
                t.load[n.ix()] += an.load_lo(app, cluster, mi, n);
            }
        }
        t
    }

    /// Every table empty, the links' table zero.
    fn empty(cx: Ctx) -> Tables {
        let (nn, nk) = (cx.cluster.nodes.len(), cx.cluster.networks.len());
        Tables {
            count: Vec::new(),
            on_node: Vec::new(),
            tit: Vec::new(),
            load: Vec::new(),
            bw: vec![[0.0; 2]; nn * nk],
            nk,
        }
    }

    /// The links' table alone (`bw`), without the objects `moving` (their edges); the other
    /// tables empty. What routing needs (`reroute`: a whole `new` per rerouted object was 7 %
    /// of a 3,000-module squeeze).
    fn links(cx: Ctx, m: &Mapping, bytes: &[f64], moving: &[ObjectId]) -> Tables {
        let mut t = Tables::empty(cx);
        for e in cx.app.graph.edge_references() {
            if moving.contains(&e.source()) || moving.contains(&e.target()) {
                continue;
            }
            if let Route::Net(k) = m.routes[e.id().index()] {
                let b = bytes[e.id().index()];
                t.bw[m.node_of(e.source()).ix() * t.nk + k.ix()][0] += b;
                t.bw[m.node_of(e.target()).ix() * t.nk + k.ix()][1] += b;
            }
        }
        t
    }

    /// With the paces of report `r`'s prediction (see `stacks`), if `on`.
    fn paced(mut self, on: bool, r: &Report) -> Tables {
        if let (true, Some(p)) = (on, &r.prediction) {
            self.tit = p.module_of.iter().map(|i| i.map_or(f64::INFINITY, |i| p.modules[i].tit)).collect();
        }
        self
    }

    /// Whether module `o` (module index `mi`) on `n`, whose CPUs the modules there already take,
    /// keeps every module there at its current pace by the published allocation simulated with
    /// the prediction's T_it (`greedy::keeps_pace`; an estimate, the verifier judges).
    fn stacks(&self, cx: Ctx, o: ObjectId, mi: usize, n: NodeId) -> bool {
        if self.tit.is_empty() {
            return false;
        }
        let mut ms: Vec<Entry> = self.entries(cx, n);
        ms.push(self.entry(cx, o, mi, n));
        super::greedy::keeps_pace(&mut ms, cx.cluster.node(n).cpus as usize)
    }

    /// The allocation entries (`greedy::keeps_pace`) of the modules on `n`.
    fn entries(&self, cx: Ctx, n: NodeId) -> Vec<Entry> {
        self.on_node[n.ix()]
            .iter()
            .map(|&x| self.entry(cx, x, cx.an.module_of[x.index()].expect("module"), n))
            .collect()
    }

    /// Module `x` (module index `mi`) on `n` as an allocation entry: (T_I/O key, tie-break,
    /// T_exec, LD, pace needed), with the prediction's T_it (`paced`).
    fn entry(&self, cx: Ctx, x: ObjectId, mi: usize, n: NodeId) -> Entry {
        let (app, cluster, an) = (cx.app, cx.cluster, cx.an);
        let (texec, ld) = an.costs(app, cluster, mi, n);
        let ins = &an.inputs[mi];
        if ins.is_empty() || an.cycle_of[mi].is_some() {
            return (texec * (1.0 - ld), x.index() as u32, texec, ld, texec);
        }
        let pace = |s: usize| self.tit[an.modules[s].index()];
        let wait = ins.iter().map(|i| i.ratio * pace(i.source)).fold(texec, f64::max);
        let need = ins.iter().map(|i| i.ratio * pace(i.source)).fold(f64::INFINITY, f64::min);
        (wait - texec * ld, x.index() as u32, texec, ld, need)
    }

    /// How bad moving the objects `unit` (one, or a group that must share a node) to `n` looks
    /// (lower is better): unreachable neighbours and a filter off its neighbours' nodes first,
    /// then modules and load beyond the node's CPUs, links beyond their bandwidth (the fastest
    /// shared network), a slower processor type, and last traffic made local. The tables are
    /// without `unit`.
    fn cost(&self, cx: Ctx, m: &Mapping, bytes: &[f64], unit: &[ObjectId], n: NodeId) -> f64 {
        let (app, cluster, an) = (cx.app, cx.cluster, cx.an);
        let mut cost = 0.0;
        let cpus = cluster.node(n).cpus as f64;
        let i = n.ix();
        let mods: Vec<usize> = unit.iter().filter_map(|o| an.module_of[o.index()]).collect();
        if !mods.is_empty() {
            let over = ((self.count[i] + mods.len() as i64) as f64 - cpus).max(0.0);
            if over > 0.0 && !(unit.len() == 1 && self.stacks(cx, unit[0], mods[0], n)) {
                cost += 2.0 * over;
            }
            let l: f64 = mods.iter().map(|&mi| an.load_lo(app, cluster, mi, n)).sum();
            cost += 2.0 * ((self.load[i] + l - cpus).max(0.0) - (self.load[i] - cpus).max(0.0));
            for &mi in &mods {
                let lo = an.texec_min(mi);
                let t = an.costs(app, cluster, mi, n).0;
                if lo > 0.0 && lo.is_finite() {
                    cost += (t / lo - 1.0).min(4.0);
                }
            }
        }
        let (mut local, mut total) = (0.0, 0.0);
        for &o in unit {
            let mut near = false;
            for dir in [Direction::Outgoing, Direction::Incoming] {
                for e in app.graph.edges_directed(o, dir) {
                    let b = if dir == Direction::Outgoing { e.target() } else { e.source() };
                    if b == o {
                        continue;
                    }
                    if unit.contains(&b) {
                        // Goes along: local.
                        near = true;
                        continue;
                    }
                    let x = bytes[e.id().index()];
                    total += x;
                    let mb = m.node_of(b);
                    if mb == n {
                        local += x;
                        near = true;
                        continue;
                    }
                    let (dn, dm) = if dir == Direction::Outgoing { (0, 1) } else { (1, 0) };
                    let head = cluster
                        .shared_networks(n, mb)
                        .into_iter()
                        .map(|k| {
                            let cap = cluster.network(k).bandwidth;
                            (cap - self.bw[n.ix() * self.nk + k.ix()][dn] - x)
                                .min(cap - self.bw[mb.ix() * self.nk + k.ix()][dm] - x)
                                / cap
                        })
                        .fold(f64::NEG_INFINITY, f64::max);
                    if head == f64::NEG_INFINITY {
                        cost += 4.0;
                    } else if head < 0.0 {
                        cost += 2.0 * (-head).min(4.0);
                    }
                }
            }
            if cx.filter_locality && !app.object(o).is_module() && !near {
                cost += 4.0;
            }
        }
        if total > 0.0 {
            cost -= 0.5 * local / total;
        }
        cost
    }
}

/// Modules to move for an error on module `o`: `o`, the module whose own execution sets its
/// pace (following synchronous inputs, `verify::pace`; every member of a synchronous cycle),
/// and the modules sharing that one's node (a slow pacer is often a starved one).
fn pacers(cx: Ctx, m: &Mapping, r: &Report, o: ObjectId, out: &mut Vec<ObjectId>) {
    out.push(o);
    let Some(p) = &r.prediction else { return };
    let Some(mut mi) = p.module_of[o.index()] else { return };
    for _ in 0..p.modules.len() {
        match verify::pace(p, mi) {
            verify::Pace::Input(s) => mi = s,
            verify::Pace::Cycle(c) => {
                out.extend(p.cycles[c].iter().copied());
                return;
            }
            verify::Pace::Itself => break,
        }
    }
    let root = p.modules[mi].object;
    let n = m.node_of(root);
    out.push(root);
    out.extend(
        cx.app.graph.node_indices().filter(|&x| x != root && cx.an.module_of[x.index()].is_some() && m.node_of(x) == n),
    );
}

/// Target nodes for `o`: its whole domain when small, else a sample plus the nodes of its
/// neighbours.
fn targets(cx: Ctx, dom: &[Vec<NodeId>], m: &Mapping, o: ObjectId, rng: &mut StdRng) -> Vec<NodeId> {
    let domain = &dom[o.index()];
    if domain.len() <= MAX_TARGETS {
        return domain.clone();
    }
    let mut t: Vec<NodeId> = (0..MAX_TARGETS).map(|_| domain[rng.random_range(0..domain.len())]).collect();
    let g = &cx.app.graph;
    t.extend(
        g.neighbors_directed(o, Direction::Incoming)
            .chain(g.neighbors_directed(o, Direction::Outgoing))
            .map(|b| m.node_of(b))
            .filter(|n| domain.binary_search(n).is_ok()),
    );
    t.sort();
    t.dedup();
    t
}

/// The objects diagnostic `d` names, or those on a node it names; for a module too slow (a
/// requirement or an overflowing buffer), also its pacers (`pacers`).
fn named(
    cx: Ctx,
    m: &Mapping,
    r: &Report,
    d: &verify::Diagnostic,
    by_name: &HashMap<&str, ObjectId>,
    node_by_name: &HashMap<&str, NodeId>,
    out: &mut Vec<ObjectId>,
) {
    let slow = matches!(d.kind, verify::Kind::Requirement | verify::Kind::BufferOverflow);
    // A busy link (subjects: node, network, connections): both ends of its edges (moving the
    // far end onto the node makes an edge local).
    if d.kind == verify::Kind::NetworkContention {
        if let (Some(&n), Some(k)) = (
            d.subjects.first().and_then(|x| node_by_name.get(x.as_str())),
            d.subjects.get(1).and_then(|x| cx.cluster.find_network(x)),
        ) {
            for e in cx.app.graph.edge_references() {
                let (a, b) = (e.source(), e.target());
                if m.routes[e.id().index()] == Route::Net(k) && (m.node_of(a) == n || m.node_of(b) == n) {
                    out.push(a);
                    out.push(b);
                }
            }
            return;
        }
    }
    for s in &d.subjects {
        if let Some(&o) = by_name.get(s.as_str()) {
            if slow {
                pacers(cx, m, r, o, out);
            } else {
                out.push(o);
            }
        } else if let Some(&n) = node_by_name.get(s.as_str()) {
            out.extend(cx.app.graph.node_indices().filter(|&o| m.node_of(o) == n));
        }
    }
}

/// Walks from `start` until a mapping `check` calls sound, `stop()` says so, or `max_steps`
/// steps; the sound mapping and its report. With `stacking`, targets are ranked as in the
/// squeeze (see `walk`): callers alternate the two rankings.
pub fn repair(
    cx: Ctx,
    start: Mapping,
    seed: u64,
    max_steps: usize,
    stacking: bool,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    walk(cx, start, seed, max_steps, None, MAX_KICKS, stacking, false, stop)
}

/// `repair` from a packing of the modules (`bound::pack`): `base` with the modules of `at`
/// put on their nodes (objects the partial mapping fixes stay), each filter on the node of
/// a neighbouring module when its domain has it, every edge rerouted.
pub fn repair_from(
    cx: Ctx,
    base: Mapping,
    at: &[(ObjectId, NodeId)],
    seed: u64,
    stacking: bool,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    let g = &cx.app.graph;
    let fixed = |o: ObjectId| cx.fix.is_some_and(|f| f.placement[o.index()].is_some());
    let mut m = base;
    for &(o, n) in at {
        if !fixed(o) {
            m.placement[o.index()] = Placement { node: n, cpu: None };
        }
    }
    for o in g.node_indices() {
        if cx.app.object(o).is_module() || fixed(o) {
            continue;
        }
        let near = g.neighbors_undirected(o).find(|&b| cx.app.object(b).is_module()).map(|b| m.node_of(b));
        if let Some(n) = near.filter(|n| cx.an.domain[o.index()].contains(n)) {
            m.placement[o.index()] = Placement { node: n, cpu: None };
        }
    }
    let bytes = edge_bytes(cx, None);
    route_all(cx, &mut m, &bytes);
    walk(cx, m, seed, usize::MAX, None, MAX_KICKS, stacking, true, stop)
}

/// The walk of `repair`, on the nodes `allowed` only (all if None), giving up after
/// `max_kicks` kicks without a new fewest error count. With `stacking` (packing onto fewer
/// nodes), a module stacked on a full node costs nothing for its CPUs where the allocation
/// estimate says every module there keeps its pace (`Tables::stacks`). Measured (60 s):
/// minimising, realistic 100/32 s4 16 -> 14 nodes (15 without it), 300/64 s2 24 -> 23; in
/// repair walks alone it misleads (hard 300/64 tight s2 found in 4.1 s instead of 0.6 s), and
/// without it repairs stall where modules must share CPUs (unseen hard 100/32 tight s29:
/// 100 modules on 84 CPUs), so repairs alternate.
#[allow(clippy::too_many_arguments)]
fn walk(
    cx: Ctx,
    start: Mapping,
    seed: u64,
    max_steps: usize,
    allowed: Option<&[bool]>,
    max_kicks: usize,
    stacking: bool,
    untangle_first: bool,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    let Ctx { app, cluster, an, popts, fix, .. } = cx;
    let dom: Vec<Vec<NodeId>> = match allowed {
        None => an.domain.clone(),
        Some(a) => an.domain.iter().map(|d| d.iter().copied().filter(|n| a[n.ix()]).collect()).collect(),
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let checker = verify::Checker::new(app, cluster, popts);
    let by_name: HashMap<&str, ObjectId> = app.graph.node_indices().map(|o| (app.object(o).name.as_str(), o)).collect();
    let node_by_name: HashMap<&str, NodeId> =
        cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), NodeId(i as u32))).collect();
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    // Groups that share a node in every sound mapping move together; a start that splits one
    // first gathers it on its first member's node (when every member may go there).
    let share = an.must_share(app, cluster);
    let mut cur = start;
    for o in app.graph.node_indices() {
        let n = cur.node_of(o);
        if share[o.index()].iter().any(|&x| cur.node_of(x) != n)
            && share[o.index()].iter().all(|&x| !fixed(x) && dom[x.index()].binary_search(&n).is_ok())
        {
            put(cx, &mut cur, &share, o, n, None);
        }
    }
    route_all(cx, &mut cur, &edge_bytes(cx, None));
    let mut rep = checker.terse(&cur);
    let mut score = errors(cx, &cur, &rep);
    let mut tabu: VecDeque<ObjectId> = VecDeque::new();
    let (mut low, mut since_low) = (score, 0usize);
    // The fewest errors seen, and kicks since: a walk that stops improving gives up (tiny
    // infeasible instances end in milliseconds, leaving the time to the CSP's proof).
    let (mut fewest, mut kicks) = (score, 0usize);
    // The mapping with the fewest errors so far, where kicks start from.
    let mut elite = (cur.clone(), rep.clone(), score);
    let movable = |o: ObjectId| !fixed(o) && dom[o.index()].len() > 1 && share[o.index()].iter().all(|&x| !fixed(x));
    if untangle_first && score > 0 {
        untangle(
            cx,
            &Scope { checker: &checker, share: &share, dom: &dom, movable: &movable },
            &mut cur,
            &mut rep,
            stop,
        );
        score = errors(cx, &cur, &rep);
        (low, fewest) = (score, score);
        elite = (cur.clone(), rep.clone(), score);
    }
    // Moves per batch (see below), and steps since the batch shrank to one.
    let (mut batch, mut since_batch) = (4usize, 0usize);
    for _ in 0..max_steps {
        // Stuck on a plateau: kick a few movable objects to random nodes of their domains.
        since_low += 1;
        if since_low > KICK_AFTER {
            kicks += 1;
            if kicks > max_kicks {
                return None;
            }
            // From the mapping with the fewest errors so far, kick objects the errors name (a
            // kick anywhere in a large instance mostly adds errors far from the ones left).
            if elite.2 < score {
                (cur, rep, _) = elite.clone();
            }
            let all: Vec<ObjectId> = app.graph.node_indices().filter(|&o| movable(o)).collect();
            let errs: Vec<&verify::Diagnostic> = rep.diagnostics.iter().filter(|d| d.kind.is_error()).collect();
            for _ in 0..KICK.min(all.len()) {
                let mut near = Vec::new();
                if !errs.is_empty() {
                    named(cx, &cur, &rep, errs[rng.random_range(0..errs.len())], &by_name, &node_by_name, &mut near);
                    near.retain(|&o| movable(o));
                }
                let o = if near.is_empty() {
                    all[rng.random_range(0..all.len())]
                } else {
                    near[rng.random_range(0..near.len())]
                };
                let d = &dom[o.index()];
                put(cx, &mut cur, &share, o, d[rng.random_range(0..d.len())], Some(&edge_bytes(cx, Some(&rep))));
            }
            rep = checker.terse(&cur);
            score = errors(cx, &cur, &rep);
            since_low = 0;
            low = low.max(score);
        }
        if score == 0 {
            let rep = checker.full(&cur);
            return Some((cur, rep));
        }
        if stop() {
            return None;
        }
        // Candidates: the objects an error names, or those on a node it names.
        let errs: Vec<&verify::Diagnostic> = rep.diagnostics.iter().filter(|d| d.kind.is_error()).collect();
        // Many errors: first a batch of moves, one per randomly chosen error, each to its best
        // target by `Tables::cost`, judged by one `check` together (errors of separate
        // pipelines are mostly independent). Kept when it lowers the error count; the batch
        // doubles after a success and halves after a failure.
        if batch > 1 && errs.len() > BATCH_MIN {
            let bytes = edge_bytes(cx, Some(&rep));
            let mut m = cur.clone();
            let mut moved: Vec<ObjectId> = Vec::new();
            for _ in 0..batch {
                // Each move ranks its targets (milliseconds at 3,000 modules): a batch of 64
                // overran `--time-limit 1` by a second.
                if stop() {
                    return None;
                }
                let d = errs[rng.random_range(0..errs.len())];
                let mut cands = Vec::new();
                named(cx, &cur, &rep, d, &by_name, &node_by_name, &mut cands);
                cands.retain(|&o| movable(o) && !tabu.contains(&o) && !moved.contains(&o));
                if cands.is_empty() {
                    continue;
                }
                let o = cands[rng.random_range(0..cands.len())];
                let here = m.node_of(o);
                let unit = unit_of(&share, o);
                let tables = Tables::new(cx, &m, &bytes, &unit).paced(stacking, &rep);
                let best = targets(cx, &dom, &m, o, &mut rng)
                    .into_iter()
                    .filter(|&n| n != here)
                    .map(|n| (tables.cost(cx, &m, &bytes, &unit, n), n))
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, n)) = best {
                    put(cx, &mut m, &share, o, n, Some(&bytes));
                    moved.extend(unit);
                }
            }
            if stop() {
                return None;
            }
            let r = checker.terse(&m);
            let s = errors(cx, &m, &r);
            if s < score {
                cur = m;
                rep = r;
                score = s;
                batch = (batch * 2).min(MAX_BATCH);
                fewest = fewest.min(score);
                if score < elite.2 {
                    elite = (cur.clone(), rep.clone(), score);
                }
                if score < low {
                    low = score;
                    since_low = 0;
                }
                continue;
            }
            batch /= 2;
        } else if batch <= 1 {
            since_batch += 1;
            if since_batch > BATCH_AGAIN {
                batch = 4;
                since_batch = 0;
            }
        }
        // An error of the verifier or a filter off its neighbours' nodes, each as likely (a
        // walk that saw only the verifier's errors left misplaced filters for last, and could
        // stall on a few errors whose moves misplace filters).
        let mut cands: Vec<ObjectId> = Vec::new();
        let misplaced = misplaced_filters(cx, &cur);
        let pick = rng.random_range(0..errs.len() + misplaced.len());
        if pick >= errs.len() {
            cands.push(misplaced[pick - errs.len()]);
        } else {
            named(cx, &cur, &rep, errs[pick], &by_name, &node_by_name, &mut cands);
        }
        cands.retain(|&o| movable(o) && !tabu.contains(&o));
        if cands.is_empty() {
            // Nothing movable named: a random movable object.
            let all: Vec<ObjectId> = app.graph.node_indices().filter(|&o| movable(o)).collect();
            if all.is_empty() {
                return None;
            }
            cands.push(all[rng.random_range(0..all.len())]);
        }
        let o = cands[rng.random_range(0..cands.len())];
        let here = cur.node_of(o);
        let mut best: Vec<(Mapping, Report)> = Vec::new();
        let (mut best_score, mut best_strain) = (usize::MAX, f64::INFINITY);
        let targets = targets(cx, &dom, &cur, o, &mut rng);
        // Rank the targets cheaply; only the best CHECKED get a full `check`.
        let bytes = edge_bytes(cx, Some(&rep));
        let unit = unit_of(&share, o);
        let tables = Tables::new(cx, &cur, &bytes, &unit).paced(stacking, &rep);
        let mut ranked: Vec<(f64, u32, NodeId)> = targets
            .into_iter()
            .filter(|&n| n != here)
            .map(|n| (tables.cost(cx, &cur, &bytes, &unit, n), rng.random::<u32>(), n))
            .collect();
        ranked.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut tries: Vec<(NodeId, bool)> = ranked.iter().take(CHECKED).map(|x| (x.2, false)).collect();
        // A group bound to share a node also tries the node best for it once the single
        // movable modules there leave (`eject`): a full node rarely ranks first, and one swap
        // does not free CPUs for two.
        if unit.len() > 1 {
            let loose: Vec<ObjectId> = app
                .graph
                .node_indices()
                .filter(|&p| an.module_of[p.index()].is_some() && share[p.index()].is_empty() && movable(p))
                .chain(unit.iter().copied())
                .collect();
            let firm = Tables::new(cx, &cur, &bytes, &loose);
            let pick = ranked
                .iter()
                .map(|x| (firm.cost(cx, &cur, &bytes, &unit, x.2), x.1, x.2))
                .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            if let Some((_, _, n)) = pick {
                tries.push((n, true));
            }
        }
        for (n, ejecting) in tries {
            if n == here {
                continue;
            }
            // Each target costs a whole `check` (milliseconds at 3,000 modules).
            if stop() {
                return None;
            }
            let mut m = cur.clone();
            put(cx, &mut m, &share, o, n, None);
            if ejecting {
                eject(cx, &mut m, &share, &dom, n, &unit, &bytes, &movable, &mut rng);
            } else if rng.random_bool(0.5) {
                // Half the time a swap: an object of node n that may go where o was comes back
                // (dense nodes take nothing more, but may trade), with the objects that must
                // share its node when they are all on n.
                let back: Vec<ObjectId> = app
                    .graph
                    .node_indices()
                    .filter(|&p| {
                        !unit.contains(&p)
                            && cur.node_of(p) == n
                            && movable(p)
                            && dom[p.index()].binary_search(&here).is_ok()
                            && share[p.index()].iter().all(|&x| cur.node_of(x) == n)
                    })
                    .collect();
                if !back.is_empty() {
                    let p = back[rng.random_range(0..back.len())];
                    put(cx, &mut m, &share, p, here, Some(&bytes));
                }
            }
            for &x in &unit {
                reroute(cx, &mut m, x, &bytes);
            }
            let r = checker.terse(&m);
            let s = errors(cx, &m, &r);
            // Fewest errors, then the least strain (`strain`); exact ties at random.
            let st = strain(cx, &r);
            if s < best_score || (s == best_score && st < best_strain) {
                (best_score, best_strain) = (s, st);
                best.clear();
            }
            if s == best_score && st == best_strain {
                best.push((m, r));
            }
        }
        // Accept an improving or sideways move; a worse one now and then (random walk).
        if best.is_empty() || (best_score > score && rng.random_range(0..10) != 0) {
            continue;
        }
        let pick = rng.random_range(0..best.len());
        let (m, r) = best.swap_remove(pick);
        cur = m;
        rep = r;
        score = best_score;
        if score < fewest {
            fewest = score;
            kicks = 0;
        }
        if score < elite.2 {
            elite = (cur.clone(), rep.clone(), score);
        }
        if score < low {
            low = score;
            since_low = 0;
        }
        tabu.push_back(o);
        if tabu.len() > 5 {
            tabu.pop_front();
        }
    }
    (score == 0).then(|| {
        let rep = checker.full(&cur);
        (cur, rep)
    })
}

/// Bytes per second beyond the usable capacity, summed over every link and direction, each
/// relative to that capacity (0: no link over; infinite without a prediction).
fn excess(r: &Report) -> f64 {
    let Some(p) = &r.prediction else { return f64::INFINITY };
    let share = r.headroom.link.min(1.0);
    p.links
        .iter()
        .map(|l| {
            let cap = (l.capacity * share).max(1.0);
            ((l.send - cap).max(0.0) + (l.recv - cap).max(0.0)) / cap
        })
        .sum()
}

/// What `untangle` lowers: the errors other than busy links (with misplaced filters), then
/// `excess`.
fn tangle(cx: Ctx, m: &Mapping, r: &Report) -> (usize, f64) {
    let busy = r.diagnostics.iter().filter(|d| d.kind == verify::Kind::NetworkContention).count();
    (errors(cx, m, r) - busy, excess(r))
}

/// What `untangle` and `trades` work with: the checker, the objects bound to share a node
/// (`Analysis::must_share`), the domains, and which objects may move.
struct Scope<'a> {
    checker: &'a verify::Checker<'a>,
    share: &'a [Vec<ObjectId>],
    dom: &'a [Vec<NodeId>],
    movable: &'a dyn Fn(ObjectId) -> bool,
}

/// Moves of `untangle` judged per busy link at most.
const UNTANGLE_CANDIDATES: usize = 1500;

/// A move of `untangle`: an object to a node, and perhaps an object of that node back to the
/// first one's.
type Trade = (ObjectId, NodeId, Option<ObjectId>);

/// `cur` with `t` made, the moved objects' edges rerouted.
fn trade(cx: Ctx, cur: &Mapping, share: &[Vec<ObjectId>], t: Trade, bytes: &[f64]) -> Mapping {
    let (o, to, back) = t;
    let here = cur.node_of(o);
    let mut m = cur.clone();
    put(cx, &mut m, share, o, to, None);
    if let Some(c) = back {
        put(cx, &mut m, share, c, here, None);
        for x in unit_of(share, c) {
            reroute(cx, &mut m, x, bytes);
        }
    }
    for x in unit_of(share, o) {
        reroute(cx, &mut m, x, bytes);
    }
    m
}

/// The trades that may relieve one busy link (node `n`, network, direction; `edges` what it
/// carries), each judged by `check` as (other errors, `excess`): every end of an edge on `n`
/// to each node of its domain, every far end to `n`, alone or trading places with an object
/// of the target node that may take its place. At most `UNTANGLE_CANDIDATES`.
fn trades(
    cx: Ctx,
    sc: &Scope,
    cur: &Mapping,
    rep: &Report,
    n: NodeId,
    edges: &[EdgeId],
    stop: &mut dyn FnMut() -> bool,
) -> Vec<((usize, f64), Trade)> {
    let Scope { checker, share, dom, movable } = *sc;
    let g = &cx.app.graph;
    let bytes = edge_bytes(cx, Some(rep));
    let mut moves: Vec<(ObjectId, NodeId)> = Vec::new();
    for &e in edges {
        let (s, d) = g.edge_endpoints(e).expect("edge");
        let (x, y) = if cur.node_of(s) == n { (s, d) } else { (d, s) };
        moves.push((y, n));
        moves.extend(dom[x.index()].iter().map(|&t| (x, t)));
    }
    moves.sort();
    moves.dedup();
    let mut out = Vec::new();
    for (o, to) in moves {
        let here = cur.node_of(o);
        if here == to || !movable(o) || dom[o.index()].binary_search(&to).is_err() {
            continue;
        }
        let unit = unit_of(share, o);
        let partners = g.node_indices().filter(|&c| {
            !unit.contains(&c)
                && cur.node_of(c) == to
                && movable(c)
                && dom[c.index()].binary_search(&here).is_ok()
                && share[c.index()].iter().all(|&x| cur.node_of(x) == to)
        });
        for back in std::iter::once(None).chain(partners.map(Some)) {
            if out.len() >= UNTANGLE_CANDIDATES || stop() {
                return out;
            }
            let m = trade(cx, cur, share, (o, to, back), &bytes);
            let r = checker.terse(&m);
            out.push((tangle(cx, &m, &r), (o, to, back)));
        }
    }
    out
}

/// Steepest descent on busy links, for starts whose CPUs fit and whose links do not (a
/// packing's, `repair_from`): each step takes the busiest link not tried since the last move
/// and makes its best trade (`trades`) when that lowers (other errors, `excess`); it ends
/// when no link is left to try, at a sound mapping, or at `stop()`. The walk's moves only
/// see the error count: a move that takes a link from 52 to 49 MB/s on 48 is invisible to
/// it, and one that clears the link mostly breaks the packing's CPU fit.
fn untangle(cx: Ctx, sc: &Scope, cur: &mut Mapping, rep: &mut Report, stop: &mut dyn FnMut() -> bool) {
    let Scope { checker, share, .. } = *sc;
    let better = |a: (usize, f64), b: (usize, f64)| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1 - 1e-9);
    // Links over their usable capacity: (relative excess, node, network, sending, edges).
    let busy_links = |rep: &Report| -> Vec<(f64, NodeId, NetworkId, bool, Vec<EdgeId>)> {
        let Some(p) = &rep.prediction else { return Vec::new() };
        let share_bw = rep.headroom.link.min(1.0);
        let mut busy = Vec::new();
        for l in &p.links {
            let cap = (l.capacity * share_bw).max(1.0);
            for (send, total, edges) in [(true, l.send, &l.send_edges), (false, l.recv, &l.recv_edges)] {
                if total > cap {
                    busy.push(((total - cap) / cap, l.node, l.network, send, edges.clone()));
                }
            }
        }
        busy
    };
    let mut key = tangle(cx, cur, rep);
    let mut tried: Vec<(NodeId, NetworkId, bool)> = Vec::new();
    while errors(cx, cur, rep) > 0 && !stop() {
        let busy = busy_links(rep);
        let Some((_, n, k, send, edges)) = busy
            .into_iter()
            .filter(|b| !tried.contains(&(b.1, b.2, b.3)))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)))
        else {
            return;
        };
        tried.push((n, k, send));
        let cands = trades(cx, sc, cur, rep, n, &edges, stop);
        let pick = cands.into_iter().reduce(|a, b| if better(b.0, a.0) { b } else { a });
        if let Some((kk, t)) = pick.filter(|p| better(p.0, key)) {
            *cur = trade(cx, cur, share, t, &edge_bytes(cx, Some(rep)));
            *rep = checker.terse(cur);
            key = kk;
            tried.clear();
        }
    }
}

/// `untangle` from `start` (every route set afresh), outside a walk: the mapping it ends at
/// and its terse report.
pub fn untangled(cx: Ctx, start: Mapping, stop: &mut dyn FnMut() -> bool) -> (Mapping, Report) {
    let Ctx { app, cluster, an, popts, fix, .. } = cx;
    let checker = verify::Checker::new(app, cluster, popts);
    let share = an.must_share(app, cluster);
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    let movable =
        |o: ObjectId| !fixed(o) && an.domain[o.index()].len() > 1 && share[o.index()].iter().all(|&x| !fixed(x));
    let mut cur = start;
    route_all(cx, &mut cur, &edge_bytes(cx, None));
    let mut rep = checker.terse(&cur);
    untangle(
        cx,
        &Scope { checker: &checker, share: &share, dom: &an.domain, movable: &movable },
        &mut cur,
        &mut rep,
        stop,
    );
    (cur, rep)
}

/// Moves single modules (none of `unit`, each `movable` and bound to no other) off node `n`
/// until its modules fit its CPUs: each round, the one cheapest to place elsewhere goes to
/// its best other node by `Tables::cost`.
#[allow(clippy::too_many_arguments)]
fn eject(
    cx: Ctx,
    m: &mut Mapping,
    share: &[Vec<ObjectId>],
    dom: &[Vec<NodeId>],
    n: NodeId,
    unit: &[ObjectId],
    bytes: &[f64],
    movable: &dyn Fn(ObjectId) -> bool,
    rng: &mut StdRng,
) {
    let (app, an) = (cx.app, cx.an);
    let cpus = cx.cluster.node(n).cpus as usize;
    loop {
        let on: Vec<ObjectId> =
            app.graph.node_indices().filter(|&p| an.module_of[p.index()].is_some() && m.node_of(p) == n).collect();
        if on.len() <= cpus {
            return;
        }
        let mut best: Option<(f64, ObjectId, NodeId)> = None;
        for p in on.into_iter().filter(|&p| !unit.contains(&p) && share[p.index()].is_empty() && movable(p)) {
            let t = Tables::new(cx, m, bytes, &[p]);
            for x in targets(cx, dom, m, p, rng).into_iter().filter(|&x| x != n) {
                let c = t.cost(cx, m, bytes, &[p], x);
                if best.is_none_or(|b| c < b.0) {
                    best = Some((c, p, x));
                }
            }
        }
        let Some((_, p, x)) = best else { return };
        put(cx, m, share, p, x, Some(bytes));
    }
}

/// Pairs of nodes traded for a bigger one are taken among this many emptiest used nodes.
const PAIRS_FROM: usize = 5;

/// Kicks a squeeze attempt's walk may take without a new fewest error count.
const SQUEEZE_KICKS: usize = 2;
/// Victims the squeeze places and judges before it walks from the one with the fewest errors.
const LOOKAHEAD: usize = 8;

/// A sound mapping on the nodes `allowed` only, from `cur`: the objects elsewhere move each to
/// its cheapest allowed node (`Tables::cost`), then the walk repairs on the allowed nodes until
/// the mapping is sound or it gives up (None; also when an object has no allowed node).
pub fn onto(
    cx: Ctx,
    cur: &Mapping,
    rep: &Report,
    allowed: &[bool],
    seed: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    let m = onto_start(cx, cur, rep, allowed)?;
    walk(cx, m, seed, usize::MAX, Some(allowed), SQUEEZE_KICKS, true, false, stop)
}

/// The start of `onto`: the objects off the `allowed` nodes moved, one at a time (a group
/// with its members), to their cheapest allowed node by `Tables::cost` with the paces of
/// `rep` (a module stacked on a full node is free where the allocation estimate says every
/// module there keeps its pace, as in the walk that follows), then rerouted. None when an
/// object has no allowed node.
fn onto_start(cx: Ctx, cur: &Mapping, rep: &Report, allowed: &[bool]) -> Option<Mapping> {
    let Ctx { app, cluster, an, .. } = cx;
    let bytes = edge_bytes(cx, Some(rep));
    let share = an.must_share(app, cluster);
    let mut m = cur.clone();
    let movers: Vec<ObjectId> = app.graph.node_indices().filter(|&o| !allowed[m.node_of(o).ix()]).collect();
    for &o in &movers {
        if allowed[m.node_of(o).ix()] {
            // Moved with an object it must share a node with.
            continue;
        }
        let unit = unit_of(&share, o);
        let t = Tables::new(cx, &m, &bytes, &unit).paced(true, rep);
        let (_, n) = an.domain[o.index()]
            .iter()
            .copied()
            .filter(|n| allowed[n.ix()])
            .map(|n| (t.cost(cx, &m, &bytes, &unit, n), n))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))?;
        put(cx, &mut m, &share, o, n, None);
    }
    for &o in &movers {
        reroute(cx, &mut m, o, &bytes);
    }
    Some(m)
}

/// `repack` of node `v` alone, as the squeeze calls it (for tests): the used nodes are
/// `cur`'s (`rep` its report), the random choices drawn from `seed`.
pub fn repack_node(cx: Ctx, cur: &Mapping, rep: &Report, v: NodeId, seed: u64) -> Option<(Mapping, Report)> {
    let mut used = vec![false; cx.cluster.nodes.len()];
    for p in &cur.placement {
        used[p.node.ix()] = true;
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let checker = verify::Checker::new(cx.app, cx.cluster, cx.popts);
    repack(cx, cur, rep, &used, v.ix(), &mut rng, &checker, &mut || false)
}

/// Nodes a repack spreads a victim's modules over, and the packings it tries.
const REPACK_NODES: usize = 16;
const REPACK_TRIES: usize = 12;

/// Node `v` emptied by packing its modules, with those of `REPACK_NODES` other used nodes
/// (up to half of them holding the victim's neighbours, the rest at random among the used
/// nodes of the victim's processor type), onto those nodes alone. The modules go in
/// decreasing order key (T_I/O at their current node, with the prediction's paces): each to
/// a node where it shares a CPU and every module there keeps its pace by the allocation
/// estimate (`greedy::keeps_pace`), else to one with a free CPU, the fullest such node first
/// (ties at random), so that modules of like keys gather: the allocation stacks the
/// smallest keys, and a light module stacks only on a node whose modules all come before it
/// (in decreasing-u order nothing ever stacked: unseen realistic 1000/256 tight s7 placed
/// exactly as many modules as the nodes' CPUs, every time). `REPACK_TRIES` packings; the
/// first that places every module, with the victim's filters on a node of a neighbour, is
/// returned when the verifier calls it sound. None otherwise, and for victims with pinned
/// objects or objects bound to share a node.
#[allow(clippy::too_many_arguments)]
fn repack(
    cx: Ctx,
    cur: &Mapping,
    rep: &Report,
    used: &[bool],
    v: usize,
    rng: &mut StdRng,
    checker: &verify::Checker,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    let Ctx { app, cluster, an, fix, .. } = cx;
    rep.prediction.as_ref()?;
    let share = an.must_share(app, cluster);
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    let on = |n: usize| app.graph.node_indices().filter(move |&o| cur.node_of(o).ix() == n);
    if on(v).any(|o| fixed(o) || !share[o.index()].is_empty()) {
        return None;
    }
    // The other nodes: the victim's neighbours' first.
    let mut near: Vec<usize> = Vec::new();
    for o in on(v) {
        for b in app.graph.neighbors_undirected(o) {
            let n = cur.node_of(b).ix();
            if n != v && !near.contains(&n) && near.len() < REPACK_NODES / 2 {
                near.push(n);
            }
        }
    }
    let ty = &cluster.nodes[v].processor;
    let mut others: Vec<usize> = (0..cluster.nodes.len())
        .filter(|&n| used[n] && n != v && !near.contains(&n) && &cluster.nodes[n].processor == ty)
        .collect();
    while near.len() < REPACK_NODES && !others.is_empty() {
        near.push(others.swap_remove(rng.random_range(0..others.len())));
    }
    let movable = |o: ObjectId| an.module_of[o.index()].is_some() && !fixed(o) && share[o.index()].is_empty();
    let mut movers: Vec<ObjectId> = on(v).filter(|&o| an.module_of[o.index()].is_some()).collect();
    for &n in &near {
        movers.extend(on(n).filter(|&o| movable(o)));
    }
    let bytes = edge_bytes(cx, Some(rep));
    let t = Tables::new(cx, cur, &bytes, &movers).paced(true, rep);
    let key = |o: ObjectId| t.entry(cx, o, an.module_of[o.index()].expect("a module"), cur.node_of(o)).0;
    movers.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    for _ in 0..REPACK_TRIES {
        if stop() {
            return None;
        }
        // Per node: its entries (the modules staying, then those placed).
        let mut ent: Vec<Vec<Entry>> = near.iter().map(|&n| t.entries(cx, NodeId(n as u32))).collect();
        let mut place: Vec<(ObjectId, usize)> = Vec::new();
        let mut ok = true;
        for &o in &movers {
            let mi = an.module_of[o.index()].expect("a module");
            let mut stacked: Vec<usize> = Vec::new();
            let mut free: Vec<usize> = Vec::new();
            for (j, &n) in near.iter().enumerate() {
                let nd = NodeId(n as u32);
                if !an.domain[o.index()].contains(&nd) {
                    continue;
                }
                let cpus = cluster.nodes[n].cpus as usize;
                if ent[j].len() < cpus {
                    free.push(j);
                } else {
                    let mut ms = ent[j].clone();
                    ms.push(t.entry(cx, o, mi, nd));
                    if super::greedy::keeps_pace(&mut ms, cpus) {
                        stacked.push(j);
                    }
                }
            }
            let pick = if !stacked.is_empty() { &stacked } else { &free };
            if pick.is_empty() {
                ok = false;
                break;
            }
            // The fullest (most entries), ties at random: like keys gather on a node.
            let most = pick.iter().map(|&j| ent[j].len()).max().expect("a node");
            let best: Vec<usize> = pick.iter().copied().filter(|&j| ent[j].len() == most).collect();
            let j = best[rng.random_range(0..best.len())];
            ent[j].push(t.entry(cx, o, mi, NodeId(near[j] as u32)));
            place.push((o, near[j]));
        }
        if !ok {
            continue;
        }
        let mut m = cur.clone();
        for &(o, n) in &place {
            m.placement[o.index()] = Placement { node: NodeId(n as u32), cpu: None };
        }
        // The victim's filters: on a node of a neighbour.
        for o in on(v).filter(|&o| an.module_of[o.index()].is_none()) {
            let n = app.graph.neighbors_undirected(o).map(|b| m.node_of(b)).find(|n| n.ix() != v)?;
            m.placement[o.index()] = Placement { node: n, cpu: None };
            place.push((o, n.ix()));
        }
        for &(o, _) in &place {
            reroute(cx, &mut m, o, &bytes);
        }
        if checker.terse(&m).verdict == verify::Verdict::Sound {
            let r = checker.full(&m);
            return Some((m, r));
        }
    }
    None
}

/// Fewer nodes by walking: repeatedly takes the used node with the fewest modules (then
/// objects), moves its objects to their best other used nodes by `Tables::cost`, and walks
/// on the remaining used nodes until the mapping is sound (kept) or the walk gives up (the
/// node is not tried again until a later success). Trades a small used node for a bigger
/// unused one before a walk (moving the small node's objects there whole when they all may
/// use it, else as a removal), and runs `slow_pacers` and `stack` again before either, once
/// per node count; when
/// every used node failed, trades two of the emptiest for the unused node with the most CPUs
/// the same way. Ends at `floor` nodes, when every attempt failed, after `patience` failed
/// attempts in a row (when given: no removal, trade or repack succeeded in between; a
/// restack does not count), or when `stop()` says so; the best sound
/// mapping and its report. `better` hears each smaller node count on the way (for progress
/// displays: one squeeze may take the whole time limit).
pub fn squeeze(
    cx: Ctx,
    start: (Mapping, Report),
    floor: i64,
    seed: u64,
    patience: Option<usize>,
    stop: &mut dyn FnMut() -> bool,
    better: &mut dyn FnMut(i64),
) -> (Mapping, Report) {
    let Ctx { app, cluster, an, fix, .. } = cx;
    let (mut cur, mut rep) = start;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut failed = vec![false; cluster.nodes.len()];
    let mut failed_pairs: Vec<(usize, usize)> = Vec::new();
    let mut failed_up = vec![false; cluster.nodes.len()];
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    let checker = verify::Checker::new(app, cluster, cx.popts);
    // The node count at the last restack (see below).
    let mut stacked_at = i64::MAX;
    let mut told = super::nodes_used(&cur);
    // Failed attempts since the last success.
    let mut stale = 0usize;
    for attempt in 0.. {
        let k = super::nodes_used(&cur);
        if k < told {
            told = k;
            better(k);
        }
        // Any success (a removal, a trade, a repack) clears the failures.
        if !failed.iter().any(|&f| f) {
            stale = 0;
        }
        if k <= floor || stop() || patience.is_some_and(|p| stale >= p) {
            break;
        }
        stale += 1;
        let mut used = vec![false; cluster.nodes.len()];
        let (mut modules, mut objects) = (vec![0usize; cluster.nodes.len()], vec![0usize; cluster.nodes.len()]);
        let mut pinned = vec![false; cluster.nodes.len()];
        for o in app.graph.node_indices() {
            let n = cur.node_of(o).ix();
            used[n] = true;
            objects[n] += 1;
            modules[n] += usize::from(an.module_of[o.index()].is_some());
            pinned[n] |= fixed(o) || an.domain[o.index()].len() <= 1;
        }
        let mut victims: Vec<usize> = (0..cluster.nodes.len()).filter(|&n| used[n] && !pinned[n]).collect();
        victims.sort_by_key(|&n| (modules[n], objects[n], n));
        // One node out; when no single node can go, two of the emptiest out and the unused
        // node with the most CPUs in (small nodes traded for a big one).
        let mut allowed = used.clone();
        let big = (0..cluster.nodes.len())
            .filter(|&n| !used[n])
            .max_by_key(|&n| (cluster.nodes[n].cpus, std::cmp::Reverse(n)));
        // The used node with the fewest CPUs that a bigger unused node could replace (those
        // whose objects may all use the big node first: they move there whole; then the
        // fewest modules): the node count stays, the CPUs grow (so this ends), and single
        // nodes are tried again.
        let mut whole = vec![true; cluster.nodes.len()];
        if let Some(u) = big {
            for o in app.graph.node_indices() {
                if !an.domain[o.index()].contains(&NodeId(u as u32)) {
                    whole[cur.node_of(o).ix()] = false;
                }
            }
        }
        let small = big.and_then(|u| {
            victims
                .iter()
                .copied()
                .filter(|&v| !failed_up[v] && cluster.nodes[v].cpus < cluster.nodes[u].cpus)
                .min_by_key(|&v| (cluster.nodes[v].cpus, !whole[v], modules[v], v))
        });
        // A single node out: of the first LOOKAHEAD victims not failed, the one whose objects
        // placed by `onto_start` leave the fewest errors (one check each), the first with none.
        let mut ahead: Option<(usize, usize, Mapping)> = None;
        let look: Vec<usize> = victims.iter().copied().filter(|&v| !failed[v]).take(LOOKAHEAD).collect();
        for v in look {
            if stop() {
                break;
            }
            let mut allowed = used.clone();
            allowed[v] = false;
            let Some(m) = onto_start(cx, &cur, &rep, &allowed) else {
                failed[v] = true;
                continue;
            };
            let e = errors(cx, &m, &checker.terse(&m));
            if ahead.as_ref().is_none_or(|a| e < a.0) {
                ahead = Some((e, v, m));
            }
            if e == 0 {
                break;
            }
        }
        // No node leaves no error, even after a restack at this node count (below), and a walk
        // failed since the last removal: the look ahead's victims by repacking (`repack`), cheap
        // next to a walk (3-9 s when it fails at 1000/256-3000/1024). Measured (60 s): unseen
        // realistic 1000/256 tight s7 114 -> 113 (bound 103), 3000/1024 s4 384 -> 380-382
        // (349); tried before any walk failed, it cost 3000/1024 s3 409 -> 425 (372).
        if ahead.as_ref().is_some_and(|a| a.0 > 0) && super::nodes_used(&cur) >= stacked_at && failed.iter().any(|&f| f)
        {
            let mut done = None;
            for v in victims.iter().copied().filter(|&v| !failed[v]).take(LOOKAHEAD) {
                if stop() {
                    break;
                }
                if let Some(x) = repack(cx, &cur, &rep, &used, v, &mut rng, &checker, stop) {
                    done = Some(x);
                    break;
                }
            }
            if let Some((m, r)) = done {
                (cur, rep) = (m, r);
                failed.iter_mut().for_each(|f| *f = false);
                failed_pairs.clear();
                continue;
            }
        }
        // No node leaves no error: stacking again first, once per node count (removals bring
        // other nodes and paces, so other modules may share a CPU), frees CPUs that may let a
        // node go without errors. Measured at realistic 3000/1024, 60 s: 452/450 -> 448/449
        // (seeds 42/1), with 13 restacks of 0.6-2 s. Once per change of the mapping (trades
        // too), as before 2026-11-27, each restack moved ~100 modules in 1.1-1.9 s, with a
        // trade between two and no removal, 6 cycles running (unseen 3000/1024 s3: restacks
        // took ~35 s of the squeeze's 52); once per node count, s3 429 -> 414, committed s1
        // 445 -> 439, unseen s2 435 and s4 384 unchanged. Before it, the pacers onto slower
        // nodes (`slow_pacers`): the nodes of the slower type come into use during the
        // squeeze (trades for bigger nodes), none is used at its start.
        if ahead.as_ref().is_some_and(|a| a.0 > 0) && super::nodes_used(&cur) < stacked_at {
            stacked_at = super::nodes_used(&cur);
            let before = cur.clone();
            (cur, rep) = slow_pacers(cx, (cur, rep), stop);
            (cur, rep) = stack(cx, (cur, rep), stop);
            if cur != before {
                continue;
            }
        }
        // A node that leaves no error goes at once; otherwise a trade, while one is left,
        // comes before a walk of seconds that mostly fails once few CPUs are free (realistic
        // 3000/1024: the trades below were never reached, each failed single node costing a
        // walk of 4-10 s; each trade takes 0.05-7 s).
        if ahead.as_ref().is_some_and(|a| a.0 > 0) && small.is_some() {
            ahead = None;
        }
        let out: Vec<usize> = if let Some((_, v, m)) = ahead {
            let mut allowed = used.clone();
            allowed[v] = false;
            let s = seed.wrapping_add(attempt as u64).wrapping_add(rng.random::<u32>() as u64);
            if let Some((m, r)) = walk(cx, m, s, usize::MAX, Some(&allowed), SQUEEZE_KICKS, true, false, stop) {
                cur = m;
                rep = r;
                failed.iter_mut().for_each(|f| *f = false);
                failed_pairs.clear();
            } else {
                failed[v] = true;
            }
            continue;
        } else if stop() {
            break;
        } else if let (Some(v), Some(u)) = (small, big) {
            failed_up[v] = true;
            // The whole node onto the big one first: one check, no walk.
            if whole[v] {
                let mut m = cur.clone();
                let on_v: Vec<ObjectId> = app.graph.node_indices().filter(|&o| cur.node_of(o).ix() == v).collect();
                for &o in &on_v {
                    m.placement[o.index()] = Placement { node: NodeId(u as u32), cpu: None };
                }
                let bytes = edge_bytes(cx, Some(&rep));
                for &o in &on_v {
                    reroute(cx, &mut m, o, &bytes);
                }
                if checker.terse(&m).verdict == verify::Verdict::Sound {
                    rep = checker.full(&m);
                    cur = m;
                    failed.iter_mut().for_each(|f| *f = false);
                    failed_pairs.clear();
                    continue;
                }
            }
            allowed[u] = true;
            vec![v]
        } else {
            let few = &victims[..victims.len().min(PAIRS_FROM)];
            let pair = few
                .iter()
                .enumerate()
                .flat_map(|(i, &a)| few[i + 1..].iter().map(move |&b| (a, b)))
                .find(|p| !failed_pairs.contains(p));
            match (big, pair) {
                (Some(u), Some((a, b))) if cluster.nodes[u].cpus > cluster.nodes[a].cpus.max(cluster.nodes[b].cpus) => {
                    failed_pairs.push((a, b));
                    allowed[u] = true;
                    vec![a, b]
                }
                _ => break,
            }
        };
        let v = out[0];
        for &x in &out {
            allowed[x] = false;
        }
        let s = seed.wrapping_add(attempt as u64).wrapping_add(rng.random::<u32>() as u64);
        if let Some((m, r)) = onto(cx, &cur, &rep, &allowed, s, stop) {
            cur = m;
            rep = r;
            failed.iter_mut().for_each(|f| *f = false);
            failed_pairs.clear();
            continue;
        }
        if out.len() == 1 && !failed[v] {
            failed[v] = true;
        }
    }
    (cur, rep)
}

/// What `stack` builds from a mapping: modules per node, per node the CPUs taken, the traffic
/// per edge, the tables, per module its FIFO readers (module index, gather ratio).
struct StackTables {
    count: Vec<usize>,
    taken: Vec<Vec<u32>>,
    bytes: Vec<f64>,
    t: Tables,
    readers: Vec<Vec<(usize, f64)>>,
}

/// Modules tried per node by `stack` (each from another node).
const STACK_TRIES: usize = 3;

/// Frees CPUs by stacking. On a node whose CPUs all hold a module, one module more shares a
/// CPU: by the published allocation (decreasing T_I/O, least-loaded CPU) the last in order
/// shares the least-loaded one, and where it is paced by an input it may keep up. For each
/// such node (in node order), the modules from elsewhere that would leave every module there
/// at its pace by `Tables::stacks` (the allocation simulated with the prediction's T_it; those
/// on nodes with the fewest modules first, so that the squeeze can empty those, and at most
/// one per node; not a module that paces itself where its T_exec would outpace a FIFO
/// reader) are moved there one at a time, up to `STACK_TRIES`, and judged by the
/// verifier; a sound result is kept and the same node is tried again (its next lightest CPU
/// may host another). A module moves at most once. The squeeze then moves whole nodes onto
/// the CPUs freed. Ends when every node was tried or `stop()` says so.
pub fn stack(cx: Ctx, start: (Mapping, Report), stop: &mut dyn FnMut() -> bool) -> (Mapping, Report) {
    let Ctx { app, cluster, an, popts, fix, .. } = cx;
    let checker = verify::Checker::new(app, cluster, popts);
    let (mut cur, mut rep) = start;
    let mut changed = false;
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    // One module moves at a time: none bound to share a node with another.
    let share = an.must_share(app, cluster);
    let nn = cluster.nodes.len();
    let mut moved = vec![false; app.graph.node_count()];
    // The modules that may use each node (each node's candidates, without a scan of every
    // module's domain per node).
    let mut takers: Vec<Vec<ObjectId>> = vec![Vec::new(); nn];
    for &o in &an.modules {
        for n in &an.domain[o.index()] {
            takers[n.ix()].push(o);
        }
    }
    // What depends only on the mapping (modules per node, per node the CPUs taken, the
    // traffic, the tables): built again only after a move.
    let mut tables: Option<StackTables> = None;
    let mut next = 0usize;
    'nodes: while next < nn {
        // Each table costs an estimate per module (milliseconds at 3,000 modules).
        if stop() {
            break;
        }
        let Some(p) = rep.prediction.as_ref() else { break };
        let n = NodeId(next as u32);
        let StackTables { count, taken, bytes, t, readers } = tables.get_or_insert_with(|| {
            let mut count = vec![0usize; nn];
            let mut taken: Vec<Vec<u32>> = vec![Vec::new(); nn];
            for mp in &p.modules {
                count[mp.node.ix()] += 1;
                if !taken[mp.node.ix()].contains(&mp.cpu) {
                    taken[mp.node.ix()].push(mp.cpu);
                }
            }
            let bytes = edge_bytes(cx, Some(&rep));
            let t = Tables::new(cx, &cur, &bytes, &[]).paced(true, &rep);
            let mut readers: Vec<Vec<(usize, f64)>> = vec![Vec::new(); p.modules.len()];
            for (j, ins) in p.sync_inputs.iter().enumerate() {
                for x in ins {
                    readers[x.source].push((j, x.ratio));
                }
            }
            StackTables { count, taken, bytes, t, readers }
        });
        if taken[n.ix()].len() != cluster.node(n).cpus as usize {
            next += 1;
            continue;
        }
        // In the order tried (modules from the emptiest nodes, then the lightest), with the
        // allocation estimate (`Tables::stacks`, the costly test) only for those reached.
        let mut cands: Vec<(usize, f64, usize, usize)> = takers[n.ix()]
            .iter()
            .filter_map(|&o| p.module_of[o.index()].map(|i| (o, i)))
            .filter(|&(o, i)| p.modules[i].node != n && !moved[o.index()] && !fixed(o) && share[o.index()].is_empty())
            .filter_map(|(o, i)| {
                let f = &p.modules[i];
                let mi = an.module_of[o.index()]?;
                let texec = an.costs(app, cluster, mi, n).0;
                // A module that paces itself runs no faster than T_exec here: not where one
                // of its FIFO readers could not keep up with that pace.
                if p.sync_inputs[i].is_empty()
                    && readers[i].iter().any(|&(j, r)| !verify::le(p.modules[j].tcexec, r * texec))
                {
                    return None;
                }
                Some((count[f.node.ix()], texec / f.tit, i, mi))
            })
            .collect();
        cands.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut from: Vec<NodeId> = Vec::new();
        // The node's entries sorted once; each candidate is merged in (`keeps_pace_with`).
        let mut base = t.entries(cx, n);
        super::greedy::sort_entries(&mut base);
        let cpus = cluster.node(n).cpus as usize;
        for &(_, _, i, mi) in &cands {
            if from.len() >= STACK_TRIES {
                break;
            }
            let f = p.modules[i].object;
            if from.contains(&p.modules[i].node)
                || t.tit.is_empty()
                || !super::greedy::keeps_pace_with(&base, t.entry(cx, f, mi, n), cpus)
            {
                continue;
            }
            from.push(p.modules[i].node);
            if stop() {
                break 'nodes;
            }
            let mut m = cur.clone();
            m.placement[f.index()].node = n;
            m.placement[f.index()].cpu = None;
            reroute(cx, &mut m, f, bytes.as_slice());
            let r = checker.terse(&m);
            if r.verdict == verify::Verdict::Sound {
                moved[f.index()] = true;
                (cur, rep, changed) = (m, r, true);
                tables = None;
                continue 'nodes;
            }
        }
        next += 1;
    }
    if changed {
        rep = checker.full(&cur);
    }
    (cur, rep)
}

/// Slower pacers: each module that paces itself (no FIFO input, outside cycles) moved, where
/// the estimate says every module there keeps its pace, to a used node of a slower processor
/// type (the slowest first, up to `SLOW_TRIES` nodes, each judged by the verifier), else
/// swapped with a module of such a node that may use its node (as many tries). Its
/// pipeline then runs at a lower rate: the modules it paces get more time per message
/// (smaller T_exec / T_it), so more of them may share a CPU (`stack`), and the squeeze frees
/// more nodes. Requirements (a minimum frequency, a latency) are the verifier's to keep.
pub fn slow_pacers(cx: Ctx, start: (Mapping, Report), stop: &mut dyn FnMut() -> bool) -> (Mapping, Report) {
    let Ctx { app, cluster, an, popts, fix, .. } = cx;
    let checker = verify::Checker::new(app, cluster, popts);
    let (mut cur, mut rep) = start;
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    let share = an.must_share(app, cluster);
    // Those whose domain has a node of a slower type than the fastest they may use.
    let pacers: Vec<(ObjectId, usize)> = an
        .modules
        .iter()
        .copied()
        .filter_map(|o| {
            let mi = an.module_of[o.index()].expect("a module");
            let paces_itself = an.inputs[mi].is_empty() && an.cycle_of[mi].is_none();
            let t = an.domain[o.index()].iter().map(|&n| an.costs(app, cluster, mi, n).0);
            let spread = t.clone().fold(f64::NEG_INFINITY, f64::max) > t.fold(f64::INFINITY, f64::min);
            (paces_itself && spread && !fixed(o) && share[o.index()].is_empty()).then_some((o, mi))
        })
        .collect();
    // The used nodes and the tables, built again only after a move.
    let mut tables: Option<(Vec<bool>, Vec<f64>, Tables)> = None;
    'pacers: for &(o, mi) in &pacers {
        if stop() {
            break;
        }
        if rep.prediction.is_none() {
            break;
        }
        let (used, bytes, t) = tables.get_or_insert_with(|| {
            let mut used = vec![false; cluster.nodes.len()];
            for p in &cur.placement {
                used[p.node.ix()] = true;
            }
            let bytes = edge_bytes(cx, Some(&rep));
            let t = Tables::new(cx, &cur, &bytes, &[]).paced(true, &rep);
            (used, bytes, t)
        });
        let here = cur.node_of(o);
        let tex = an.costs(app, cluster, mi, here).0;
        let mut cands: Vec<(f64, NodeId)> = an.domain[o.index()]
            .iter()
            .copied()
            .filter(|&n| used[n.ix()] && n != here)
            .filter_map(|n| {
                let tn = an.costs(app, cluster, mi, n).0;
                if tn <= tex * (1.0 + verify::EPS) {
                    return None;
                }
                let mut ms = t.entries(cx, n);
                ms.push(t.entry(cx, o, mi, n));
                super::greedy::keeps_pace(&mut ms, cluster.node(n).cpus as usize).then_some((tn, n))
            })
            .collect();
        cands.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(_, n) in cands.iter().take(SLOW_TRIES) {
            if stop() {
                break;
            }
            let mut m = cur.clone();
            m.placement[o.index()] = Placement { node: n, cpu: None };
            reroute(cx, &mut m, o, bytes.as_slice());
            if checker.terse(&m).verdict == verify::Verdict::Sound {
                rep = checker.full(&m);
                cur = m;
                tables = None;
                continue 'pacers;
            }
        }
        // Else a swap: o takes the place of a module b on a used node of a slower type, and b
        // takes o's, where the estimate says both nodes keep every module's pace (the slower
        // nodes are mostly full in a minimised mapping).
        let mut swaps: Vec<(f64, NodeId, ObjectId)> = Vec::new();
        for &n in an.domain[o.index()].iter() {
            if !used[n.ix()] || n == here {
                continue;
            }
            let tn = an.costs(app, cluster, mi, n).0;
            if tn <= tex * (1.0 + verify::EPS) {
                continue;
            }
            for &b in &t.on_node[n.ix()] {
                let Some(bi) = an.module_of[b.index()] else { continue };
                if fixed(b) || !share[b.index()].is_empty() || !an.domain[b.index()].contains(&here) {
                    continue;
                }
                let mut at_n: Vec<Entry> = t.entries(cx, n).into_iter().filter(|e| e.1 != b.index() as u32).collect();
                at_n.push(t.entry(cx, o, mi, n));
                let mut at_here: Vec<Entry> =
                    t.entries(cx, here).into_iter().filter(|e| e.1 != o.index() as u32).collect();
                at_here.push(t.entry(cx, b, bi, here));
                if super::greedy::keeps_pace(&mut at_n, cluster.node(n).cpus as usize)
                    && super::greedy::keeps_pace(&mut at_here, cluster.node(here).cpus as usize)
                {
                    swaps.push((tn, n, b));
                }
            }
        }
        swaps.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        for &(_, n, b) in swaps.iter().take(SLOW_TRIES) {
            if stop() {
                break;
            }
            let mut m = cur.clone();
            m.placement[o.index()] = Placement { node: n, cpu: None };
            m.placement[b.index()] = Placement { node: here, cpu: None };
            reroute(cx, &mut m, o, bytes.as_slice());
            reroute(cx, &mut m, b, bytes.as_slice());
            if checker.terse(&m).verdict == verify::Verdict::Sound {
                rep = checker.full(&m);
                cur = m;
                tables = None;
                break;
            }
        }
    }
    (cur, rep)
}

/// Nodes `slow_pacers` tries per module.
const SLOW_TRIES: usize = 3;
