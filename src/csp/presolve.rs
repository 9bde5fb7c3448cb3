//! Requirement-aware presolve: removes from the objects' domains the nodes that no sound mapping
//! can use, before the greedy mapper, the bounds and the CSP see them. Pumpkin-free.
//!
//! Three arguments, each a consequence of soundness (ARCHITECTURE.md, "Soundness"): in a sound
//! mapping every module runs at its synchronisation pace, T_it = T_it_sync, and
//! T_it_sync(m) >= R x T_exec(a, node(a)) for every synchronous ancestor a of m, where R is the
//! largest product of gather ratios on a path from a to m (eq 3–4; a cycle's T_it is at least the
//! sum of the T_exec of the members of any of its elementary cycles plus the transfer time,
//! Vol / BW + L, of each of its edges whose ends are on two nodes, eq 5).
//!
//! 1. **Keep-up** (buffer-overflow rule, Section IV.B.1): a module m with a synchronous input i
//!    (not in m's own cycle) needs T_cexec(m) <= k x T_it(i), and T_cexec >= T_exec. So a node
//!    where T_exec(m) > k x (the slowest T_it_sync of i over every mapping) is never usable.
//! 2. **Minimum frequency** F on a module group: T_it(m) <= 1 / F for its instances, hence
//!    T_it(a) <= 1 / (F x R) for each synchronous ancestor a. A node where a's T_exec alone (or,
//!    for a cycle member, T_exec plus the smallest T_exec of the other members of an elementary
//!    cycle) exceeds that bound is never usable. For acyclic ancestors this is exact: the
//!    requirement holds iff every ancestor's T_exec respects its bound. For a cycle member the
//!    elementary cycle's transfers are added too (`loop_transfers`): eq 5 counts Vol / BW + L for
//!    each of its edges routed over a network, and an edge whose ends' domains share no node
//!    takes at least the cheapest network between them (through the filters on the way, placed
//!    anywhere their domains allow). Nodes removed only because of that term are counted as
//!    "loop-transfers".
//! 3. **Maximum latency** L on a path (eq 11): Σ T_it over the path's modules plus the transfers
//!    is at most L; with every other term at its lower bound, each module's T_it gets a bound,
//!    which then spreads to its ancestors as in 2.
//! 4. **Routes** (eq 9–10 and placement): an edge's ends are on one node, or on two nodes that
//!    share a network whose bandwidth holds the edge's traffic (at its lowest rate) alone. A
//!    node of one end's domain with no such partner in the other end's domain is removed.
//!
//! Bounds are recomputed from the shrunken domains and the arguments repeated to a fixpoint.
//! Comparisons allow a relative 1e-6, looser than the verifier's, so that rounding can never
//! remove a node a sound mapping uses (tested against brute force).

use super::Analysis;
use crate::model::{Application, Cluster, EdgeId, ObjectId, Requirement};
use std::collections::BTreeMap;

/// Relative tolerance: a node is removed only when the bound is exceeded by more than this.
const TOL: f64 = 1e-6;

fn over(a: f64, b: f64) -> bool {
    a > b * (1.0 + TOL) + 1e-12
}

/// Why a node was removed from an object's domain.
#[derive(Clone, Debug, PartialEq)]
pub enum Cause {
    /// The module cannot keep up with this synchronous input (module index) on that node; with
    /// `requirement`, the input's pace is the one that requirement allows it (`Analysis::
    /// tit_cap`), slower than any its processor types give.
    KeepUp { input: usize, bound_s: f64, requirement: Option<usize> },
    /// Requirement `requirement` (index into `Application::requirements`) bounds the module's T_it.
    Requirement { requirement: usize, bound_s: f64 },
    /// Requirement `requirement` bounds the T_it of the synchronous cycle the module is in, and
    /// eq 5's round trip of the elementary cycle `cycle` (module indices, in order) exceeds it:
    /// the module's smallest T_exec `own_s`, the other members' smallest `others_s`, and
    /// `transfers_s`, the least the cycle's edges can take on networks (`loop_transfers`).
    Loop { requirement: usize, bound_s: f64, cycle: Vec<usize>, own_s: f64, others_s: f64, transfers_s: f64 },
    /// This edge (carrying at least `bw` bytes per second) has no network from that node to any
    /// node of the other end's domain that could carry it, and the ends cannot share the node.
    Route { edge: EdgeId, bw: f64 },
}

/// What the presolve did.
#[derive(Clone, Debug, Default)]
pub struct Presolve {
    /// (object, node) pairs removed from the domains.
    pub removed: usize,
    /// Pairs removed per reason, e.g. "keep-up" or a requirement's name.
    pub by_reason: BTreeMap<String, usize>,
    /// Rounds to the fixpoint.
    pub rounds: usize,
    /// Objects whose domain the presolve emptied, with the cause of the last removal.
    pub emptied: Vec<(ObjectId, Cause)>,
}

/// Runs the presolve on `an` (domains, then bounds), recording what it removed and, when a
/// domain becomes empty, a problem statement.
pub(crate) fn run(app: &Application, cluster: &Cluster, an: &mut Analysis) {
    let nm = an.modules.len();
    loop {
        an.presolve.rounds += 1;
        let mut removed_now = 0usize;
        let mut emptied: Vec<(ObjectId, Cause)> = Vec::new();
        // 1. Keep-up with each synchronous input.
        for mi in 0..nm {
            let mut bound: Option<(f64, usize)> = None;
            for x in &an.inputs[mi] {
                if an.cycle_of[mi].is_some() && an.cycle_of[x.source] == an.cycle_of[mi] {
                    continue;
                }
                let b = x.ratio * an.tit_hi[x.source];
                if b.is_finite() && b > 0.0 && bound.is_none_or(|(c, _)| b < c) {
                    bound = Some((b, x.source));
                }
            }
            if let Some((b, src)) = bound {
                // The input's pace bound is a requirement's cap (from round 2): the removal is
                // that requirement's, labelled and explained so.
                let requirement =
                    an.tit_cap_by.get(src).copied().flatten().filter(|_| an.tit_cap[src] <= an.tit_hi[src]);
                let reason = requirement.map_or_else(|| "keep-up".to_string(), |ri| requirement_name(app, ri));
                let cause = Cause::KeepUp { input: src, bound_s: b, requirement };
                removed_now += restrict(app, cluster, an, mi, |t| over(t, b), &reason, cause, &mut emptied);
            }
        }
        // 2–3. Requirements: bounds on T_it, spread to synchronous ancestors.
        let (bound, origin) = requirement_bounds(app, cluster, an);
        // In a sound mapping T_it_sync(m) <= bound[m] (up to the verifier's tolerance, well
        // within this one): `tit_hi` takes it from here on (`Analysis::refresh_bounds`), so
        // the keys, loads and keep-up arguments built on it see the requirement too.
        an.tit_cap = bound.iter().map(|&b| if b.is_finite() { b * (1.0 + TOL) + 1e-12 } else { b }).collect();
        an.tit_cap_by = origin.clone();
        // A cap that lowers some `tit_hi` is a change like a removal: the keep-up pass (1.)
        // runs again with it, although nothing else was removed this round.
        let mut capped = false;
        for (t, &c) in an.tit_hi.iter_mut().zip(&an.tit_cap) {
            if c < *t {
                *t = c;
                capped = true;
            }
        }
        let sync = an.sync_lo.clone();
        // Per (module, cycle predecessor): the least its input's transfers take (this round).
        let mut transfers: BTreeMap<(usize, usize), f64> = BTreeMap::new();
        for mi in 0..nm {
            let (b, Some(ri)) = (bound[mi], origin[mi]) else { continue };
            let cause = Cause::Requirement { requirement: ri, bound_s: b };
            let reason = requirement_name(app, ri);
            // On each elementary cycle through mi (eq 5): the other members' smallest T_exec sum,
            // and the least the cycle's transfers take. A cycle with a member whose domain is
            // already empty is left out: that member is the refutation, not mi.
            let loops: Vec<(&Vec<usize>, f64, f64)> = match sync.cycle_of[mi] {
                Some(c) if !sync.approximate.contains(&c) => sync.elementary[c]
                    .iter()
                    .filter(|cy| cy.contains(&mi))
                    .filter_map(|cy| {
                        let others: f64 = cy.iter().filter(|&&j| j != mi).map(|&j| an.texec_lo(app, cluster, j)).sum();
                        others.is_finite().then(|| (cy, others, loop_transfers(app, cluster, an, cy, &mut transfers)))
                    })
                    .collect(),
                _ => vec![],
            };
            let worst = loops.iter().map(|l| l.1).fold(0.0, f64::max);
            removed_now += restrict(app, cluster, an, mi, |t| over(t + worst, b), &reason, cause, &mut emptied);
            // The same with the transfers: what it removes beyond the above is theirs.
            let Some(&(cy, others, tr)) = loops.iter().max_by(|x, y| (x.1 + x.2).total_cmp(&(y.1 + y.2))) else {
                continue;
            };
            if tr > 0.0 {
                let cause = Cause::Loop {
                    requirement: ri,
                    bound_s: b,
                    cycle: cy.clone(),
                    own_s: an.texec_lo(app, cluster, mi),
                    others_s: others,
                    transfers_s: tr,
                };
                let bad = |t: f64| over(t + others + tr, b);
                removed_now += restrict(app, cluster, an, mi, bad, "loop-transfers", cause, &mut emptied);
            }
        }
        // 4. Routes: every edge needs a partner node for each end.
        removed_now += routes(app, cluster, an, &mut emptied);
        for (o, cause) in emptied {
            an.problems.push(format!("{} has no node left: {}", app.object(o).name, describe(app, an, o, &cause)));
            an.presolve.emptied.push((o, cause));
        }
        an.presolve.removed += removed_now;
        if (removed_now == 0 && !capped) || !an.problems.is_empty() {
            return;
        }
        an.refresh_bounds(app, cluster);
    }
}

/// Arc consistency of every edge's ends (rule 4); returns how many pairs it removed.
fn routes(app: &Application, cluster: &Cluster, an: &mut Analysis, emptied: &mut Vec<(ObjectId, Cause)>) -> usize {
    use petgraph::visit::EdgeRef;
    let nn = cluster.nodes.len();
    let nk = cluster.networks.len();
    let mut removed = 0usize;
    let mut in_other = vec![false; nn];
    let mut count = vec![0usize; nk];
    for e in app.graph.edge_references() {
        let bw = e.weight().volume * an.rate_lo[e.id().index()];
        let usable: Vec<bool> = cluster.networks.iter().map(|k| !over(bw, k.bandwidth)).collect();
        for (this, other) in [(e.source(), e.target()), (e.target(), e.source())] {
            if an.domain[other.index()].is_empty() || an.domain[this.index()].is_empty() {
                continue;
            }
            count.iter_mut().for_each(|c| *c = 0);
            for &b in &an.domain[other.index()] {
                in_other[b.ix()] = true;
                for k in &cluster.node(b).networks {
                    count[k.ix()] += 1;
                }
            }
            let before = an.domain[this.index()].len();
            an.domain[this.index()].retain(|&a| {
                in_other[a.ix()]
                    || cluster
                        .node(a)
                        .networks
                        .iter()
                        .any(|k| usable[k.ix()] && count[k.ix()] > usize::from(in_other[a.ix()]))
            });
            for &b in &an.domain[other.index()] {
                in_other[b.ix()] = false;
            }
            let k = before - an.domain[this.index()].len();
            if k > 0 {
                removed += k;
                *an.presolve.by_reason.entry("routes".to_string()).or_default() += k;
                if an.domain[this.index()].is_empty() {
                    emptied.push((this, Cause::Route { edge: e.id(), bw }));
                }
            }
        }
    }
    removed
}

/// A lower bound on the transfer times eq 5 adds round the elementary cycle `cy` (module
/// indices in order; each member's input from the one before it) in every sound mapping inside
/// the current domains. Each input's time is the slowest of its FIFO paths (as
/// `SyncGraph::build` computes `SyncInput::comm`), so any one path's least time bounds it;
/// results are cached per (member, predecessor) in `cache`.
fn loop_transfers(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    cy: &[usize],
    cache: &mut BTreeMap<(usize, usize), f64>,
) -> f64 {
    let mut sum = 0.0;
    for (k, &m) in cy.iter().enumerate() {
        let prev = cy[(k + cy.len() - 1) % cy.len()];
        let t = *cache.entry((m, prev)).or_insert_with(|| {
            an.inputs[m]
                .iter()
                .filter(|x| x.source == prev)
                .flat_map(|x| &x.paths)
                .filter_map(|p| path_transfers_lo(app, cluster, an, p))
                .fold(0.0, f64::max)
        });
        sum += t;
    }
    sum
}

/// A lower bound on one message's transfer time along `path` (edges as `StaticInput::paths`
/// lists them: from the receiving module back to the sender, through filters) in every sound
/// mapping inside the current domains. Each edge costs what `perf::comm_time` gives for its
/// route: 0 when both ends are on one node, else Vol / BW + L of the network it takes, which in
/// a sound mapping both nodes are on (placement rule). The least sum over the placements of
/// the path's objects is found by dynamic programming over (object, node), with the networks as
/// hubs: node y of the next object is reached locally, or over a network k of y from the
/// cheapest node of the previous object on k (which may be y itself, where staying local is
/// cheaper anyway), so each edge costs O(Σ networks of the domains' nodes). None when no
/// placement routes the path: route arc-consistency (rule 4) removes those nodes, under its
/// own reason.
fn path_transfers_lo(app: &Application, cluster: &Cluster, an: &Analysis, path: &[EdgeId]) -> Option<f64> {
    let Some(&first) = path.first() else { return Some(0.0) };
    let (_, mut obj) = app.graph.edge_endpoints(first).expect("edge");
    let mut dist = vec![f64::INFINITY; cluster.nodes.len()];
    for &n in &an.domain[obj.index()] {
        dist[n.ix()] = 0.0;
    }
    let mut hub = vec![f64::INFINITY; cluster.networks.len()];
    for &e in path {
        let (s, t) = app.graph.edge_endpoints(e).expect("edge");
        debug_assert_eq!(t, obj, "paths run from the receiver back to the sender");
        hub.fill(f64::INFINITY);
        for &n in &an.domain[obj.index()] {
            for k in &cluster.node(n).networks {
                hub[k.ix()] = hub[k.ix()].min(dist[n.ix()]);
            }
        }
        let volume = app.graph[e].volume;
        let mut next = vec![f64::INFINITY; cluster.nodes.len()];
        for &y in &an.domain[s.index()] {
            next[y.ix()] = cluster.node(y).networks.iter().fold(dist[y.ix()], |best, &k| {
                let net = cluster.network(k);
                best.min(hub[k.ix()] + crate::perf::transfer_time(volume, net))
            });
        }
        dist = next;
        obj = s;
    }
    let best = an.domain[obj.index()].iter().map(|n| dist[n.ix()]).fold(f64::INFINITY, f64::min);
    best.is_finite().then_some(best)
}

/// Removes the nodes of module `mi`'s domain where `bad(T_exec there)`; returns how many.
#[allow(clippy::too_many_arguments)]
fn restrict(
    app: &Application,
    cluster: &Cluster,
    an: &mut Analysis,
    mi: usize,
    bad: impl Fn(f64) -> bool,
    reason: &str,
    cause: Cause,
    emptied: &mut Vec<(ObjectId, Cause)>,
) -> usize {
    let o = an.modules[mi];
    let before = an.domain[o.index()].len();
    if before == 0 {
        return 0;
    }
    let c = app.object(o).costs().expect("module");
    an.domain[o.index()].retain(|&n| c.texec.on(&cluster.node(n).processor).is_none_or(|t| !bad(t)));
    let removed = before - an.domain[o.index()].len();
    if removed > 0 {
        *an.presolve.by_reason.entry(reason.to_string()).or_default() += removed;
        if an.domain[o.index()].is_empty() {
            emptied.push((o, cause));
        }
    }
    removed
}

fn requirement_name(app: &Application, ri: usize) -> String {
    match &app.requirements[ri] {
        Requirement::MinFrequency { name, .. } | Requirement::MaxLatency { name, .. } => name.clone(),
    }
}

/// Per module: the tightest bound on T_it any requirement implies, and which requirement.
/// Bounds of a component's members are shared (a cycle has one T_it) and spread to synchronous
/// inputs divided by the gather ratio (T_it(m) >= k x T_it(i)), sinks first.
fn requirement_bounds(app: &Application, cluster: &Cluster, an: &Analysis) -> (Vec<f64>, Vec<Option<usize>>) {
    let nm = an.modules.len();
    let mut bound = vec![f64::INFINITY; nm];
    let mut origin: Vec<Option<usize>> = vec![None; nm];
    let tighten = |mi: usize, b: f64, ri: usize, bound: &mut Vec<f64>, origin: &mut Vec<Option<usize>>| {
        if b < bound[mi] {
            bound[mi] = b;
            origin[mi] = Some(ri);
        }
    };
    for (ri, r) in app.requirements.iter().enumerate() {
        match r {
            Requirement::MinFrequency { group, hz, .. } => {
                for &o in &app.group(*group).objects {
                    if let Some(mi) = an.module_of[o.index()] {
                        tighten(mi, 1.0 / hz, ri, &mut bound, &mut origin);
                    }
                }
            }
            Requirement::MaxLatency { path, max_s, .. } => {
                let lb = latency_lo(app, cluster, an, path);
                let mut count: BTreeMap<usize, usize> = BTreeMap::new();
                for &o in path {
                    if let Some(mi) = an.module_of[o.index()] {
                        *count.entry(mi).or_default() += 1;
                    }
                }
                for (&mi, &c) in &count {
                    let b = (max_s - lb + c as f64 * an.tit_lo[mi]) / c as f64;
                    tighten(mi, b.max(0.0), ri, &mut bound, &mut origin);
                }
            }
        }
    }
    for comp in an.sync_lo.order.iter().rev() {
        let (b, ri) =
            comp.iter()
                .map(|&m| (bound[m], origin[m]))
                .fold((f64::INFINITY, None), |acc, x| if x.0 < acc.0 { x } else { acc });
        let Some(ri) = ri else { continue };
        for &m in comp {
            tighten(m, b, ri, &mut bound, &mut origin);
        }
        for &m in comp {
            for x in &an.inputs[m] {
                if comp.contains(&x.source) {
                    continue;
                }
                tighten(x.source, b / x.ratio, ri, &mut bound, &mut origin);
            }
        }
    }
    (bound, origin)
}

/// Lower bound of eq 11 on `path`: every module's T_it at its lower bound, and the cheapest
/// transfer between consecutive objects that can never share a node.
fn latency_lo(app: &Application, cluster: &Cluster, an: &Analysis, path: &[ObjectId]) -> f64 {
    let mut lb: f64 = path.iter().filter_map(|o| an.module_of[o.index()]).map(|mi| an.tit_lo[mi]).sum();
    for w in path.windows(2) {
        let (da, db) = (&an.domain[w[0].index()], &an.domain[w[1].index()]);
        if da.iter().any(|n| db.contains(n)) {
            continue;
        }
        lb += app
            .graph
            .edges_connecting(w[0], w[1])
            .map(|e| cheapest_transfer(cluster, e.weight().volume))
            .filter(|t| t.is_finite())
            .fold(0.0, f64::max);
    }
    lb
}

/// Vol / BW + L on the network that makes it least.
fn cheapest_transfer(cluster: &Cluster, volume: f64) -> f64 {
    cluster.networks.iter().map(|k| crate::perf::transfer_time(volume, k)).fold(f64::INFINITY, f64::min)
}

/// Per latency requirement (eq 11), the consecutive pairs of modules on its path that may
/// share a node, each with the least its transfer takes when they do not (the cheapest
/// network; the least over the edges joining them). A set of such pairs whose transfers
/// cannot all be cut in a sound mapping when `cut_breaks` says so (`latency_lo` plus their
/// sum over the bound): one of them shares a node.
pub fn latency_pairs(app: &Application, cluster: &Cluster, an: &Analysis) -> Vec<LatencyPairs> {
    let mut out = Vec::new();
    for r in &app.requirements {
        let Requirement::MaxLatency { path, max_s, .. } = r else { continue };
        let lo = latency_lo(app, cluster, an, path);
        let mut pairs = Vec::new();
        for w in path.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (da, db) = (&an.domain[a.index()], &an.domain[b.index()]);
            if an.module_of[a.index()].is_none()
                || an.module_of[b.index()].is_none()
                || !da.iter().any(|n| db.contains(n))
            {
                continue;
            }
            let c = app
                .graph
                .edges_connecting(a, b)
                .map(|e| cheapest_transfer(cluster, e.weight().volume))
                .fold(f64::INFINITY, f64::min);
            if c.is_finite() && c > 0.0 {
                pairs.push((a, b, c));
            }
        }
        out.push(LatencyPairs { lo, max_s: *max_s, pairs });
    }
    out
}

/// A latency requirement's pairs (`latency_pairs`).
pub struct LatencyPairs {
    /// `latency_lo` of the path, and the bound, seconds.
    pub lo: f64,
    pub max_s: f64,
    /// (module, next module on the path, least transfer when on two nodes, seconds).
    pub pairs: Vec<(ObjectId, ObjectId, f64)>,
}

impl LatencyPairs {
    /// Whether cutting pairs whose transfers sum to `cut` seconds breaks the bound (with the
    /// presolve's tolerance: never when a sound mapping could).
    pub fn cut_breaks(&self, cut: f64) -> bool {
        over(self.lo + cut, self.max_s)
    }
}

/// Seconds as milliseconds, three decimals.
fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3).replace(".000 ms", " ms")
}

/// A requirement in words: its name and what it asks.
fn requirement_what(app: &Application, ri: usize) -> String {
    match &app.requirements[ri] {
        Requirement::MinFrequency { name, group, hz } => {
            format!("requirement {name} ({} at least {hz} Hz)", app.group(*group).name)
        }
        Requirement::MaxLatency { name, max_s, .. } => {
            format!("requirement {name} (path latency at most {})", ms(*max_s))
        }
    }
}

/// A sentence on why the last node of `o` was removed.
pub fn describe(app: &Application, an: &Analysis, o: ObjectId, cause: &Cause) -> String {
    match cause {
        Cause::KeepUp { input, bound_s, requirement: None } => format!(
            "it cannot keep up with its FIFO input {}: on every allowed node its T_exec exceeds {} (the input's slowest pace)",
            app.object(an.modules[*input]).name,
            ms(*bound_s)
        ),
        Cause::KeepUp { input, bound_s, requirement: Some(ri) } => format!(
            "it cannot keep up with its FIFO input {}: on every allowed node its T_exec exceeds {} (the slowest pace {} allows the input)",
            app.object(an.modules[*input]).name,
            ms(*bound_s),
            requirement_what(app, *ri)
        ),
        Cause::Requirement { requirement, bound_s } => {
            let _ = o;
            format!(
                "{} needs its T_it <= {}, and its T_exec is above that on every allowed node",
                requirement_what(app, *requirement),
                ms(*bound_s)
            )
        }
        Cause::Loop { requirement, bound_s, cycle, own_s, others_s, transfers_s } => {
            let names: Vec<&str> =
                cycle.iter().chain(cycle.first()).map(|&m| app.object(an.modules[m]).name.as_str()).collect();
            format!(
                "{} needs its T_it <= {}, but it is in the synchronous loop {}, whose round trip (eq 5) is at least {} (its fastest T_exec on the nodes it may use) + {} (the other members' fastest) + {} (the least the loop's transfers, Vol / BW + L, can take with each end on a node it may use) = {}",
                requirement_what(app, *requirement),
                ms(*bound_s),
                names.join(" -> "),
                ms(*own_s),
                ms(*others_s),
                ms(*transfers_s),
                ms(own_s + others_s + transfers_s)
            )
        }
        Cause::Route { edge, bw } => format!(
            "its edge {} carries at least {:.3} MB/s, and from no allowed node does a network that fast reach a node the other end may use",
            app.edge_name(*edge),
            bw / 1e6
        ),
    }
}

/// Objects that share a node in every sound mapping, closed transitively: the ends of an edge
/// whose traffic at its lowest rate (`Analysis::rate_lo`) is more than any network's bandwidth
/// (eq 9–10: no route carries it alone, so rule 4 leaves it only the local route), and of an
/// edge of a synchronous loop whose cheapest transfer would take the loop's period past a
/// requirement's bound (rules 2–3 with eq 5), and of two consecutive modules of a latency
/// path whose cheapest transfer alone takes the path past its bound (rule 3 with eq 11,
/// `latency_pairs`). Per object, the other members of its group,
/// ascending (empty for an object bound to none).
pub(crate) fn must_share(app: &Application, cluster: &Cluster, an: &Analysis) -> Vec<Vec<ObjectId>> {
    use petgraph::unionfind::UnionFind;
    use petgraph::visit::EdgeRef;
    let n = app.graph.node_count();
    let mut uf: UnionFind<usize> = UnionFind::new(n);
    let mut bound = false;
    for e in app.graph.edge_references() {
        let bw = e.weight().volume * an.rate_lo.get(e.id().index()).copied().unwrap_or(0.0);
        if e.source() != e.target() && bw > 0.0 && cluster.networks.iter().all(|k| over(bw, k.bandwidth)) {
            bound |= uf.union(e.source().index(), e.target().index());
        }
    }
    // A synchronous loop a requirement bounds (rule 2): its period is at least its members'
    // smallest T_exec plus each edge's transfer (eq 5), so an edge whose cheapest transfer
    // (Vol / BW + L on any network) exceeds what the T_exec leave of the bound must be local.
    let (limit, _) = requirement_bounds(app, cluster, an);
    let sync = an.sync_lo.clone();
    for (mi, &b) in limit.iter().enumerate() {
        let Some(c) = sync.cycle_of[mi] else { continue };
        if !b.is_finite() || sync.approximate.contains(&c) {
            continue;
        }
        for cy in sync.elementary[c].iter().filter(|cy| cy.contains(&mi)) {
            let own: f64 = cy.iter().map(|&j| an.texec_lo(app, cluster, j)).sum();
            if !own.is_finite() || over(own, b) {
                continue;
            }
            for (k, &m) in cy.iter().enumerate() {
                let prev = cy[(k + cy.len() - 1) % cy.len()];
                let edges = an.inputs[m].iter().filter(|x| x.source == prev).flat_map(|x| &x.paths).flatten();
                for &e in edges {
                    let v = app.graph[e].volume;
                    let t = cheapest_transfer(cluster, v);
                    if over(own + t, b) {
                        let (x, y) = app.graph.edge_endpoints(e).expect("edge");
                        bound |= uf.union(x.index(), y.index());
                    }
                }
            }
        }
    }
    // A pair on a latency path whose transfer alone breaks the bound (eq 11).
    for lp in latency_pairs(app, cluster, an) {
        for &(a, b, c) in &lp.pairs {
            if lp.cut_breaks(c) {
                bound |= uf.union(a.index(), b.index());
            }
        }
    }
    let mut out = vec![Vec::new(); n];
    if !bound {
        return out;
    }
    let mut members: BTreeMap<usize, Vec<ObjectId>> = BTreeMap::new();
    for o in app.graph.node_indices() {
        members.entry(uf.find(o.index())).or_default().push(o);
    }
    for group in members.values().filter(|g| g.len() > 1) {
        for &o in group {
            out[o.index()] = group.iter().copied().filter(|&x| x != o).collect();
        }
    }
    out
}
