//! Nogoods from the verifier's diagnosis: what about a rejected candidate makes every mapping
//! sharing it unsound. Each nogood is only as general as the argument for it allows; when no
//! argument applies, the candidate's full assignment is excluded.
//!
//! Paces depend on the mapping only through the processor types the modules run on (and, for
//! synchronous cycles that cross the network, through routes): T_it_sync is a max of sums of
//! T_exec along synchronous paths (eq 3–5), so it is monotone in every module's T_exec. A nogood
//! may therefore hold "unless some ancestor runs at another speed": the **context** literals
//! `Slower(a, t)` / `Faster(a, t)` say that module a runs where its T_exec is above / below its
//! value t in the candidate. With them:
//!
//! - First allocation round on node n: the first module m (in the node's T_I/O order) that the
//!   round leaves slower than soundness allows is determined by the modules before it on n and
//!   their keys (eq 6–7), which depend only on the speeds of their synchronous ancestors. So "m on
//!   n with exactly these earlier modules on n, no other module that may come first on n, and
//!   every relevant ancestor at the same speed" is unsound (ARCHITECTURE.md, "Soundness").
//! - Contention of link (n, k): a set of the link's edges whose traffic at the candidate's
//!   synchronisation rates exceeds BW(k) still does in any mapping where none of the modules
//!   that set those rates (or their ancestors) runs slower.
//! - Latency of a path: routing the path's edges the same way costs at least as much in any
//!   mapping where none of the path's modules' ancestors runs faster.
//!
//! Ancestors inside synchronous cycles make paces depend on routes too: no context is built
//! for them, and the nogood falls back to the candidate itself.

use crate::csp::{texec_key, Analysis, Lit};
use crate::model::{Application, Cluster, EdgeId, FilterKind, Mapping, NodeId, ObjectId, Requirement, Route};
use crate::perf::{self, Prediction};
use crate::verify::{le, Report};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

/// Whether the candidate violates the clause (every literal false under it).
pub fn falsified_by(app: &Application, cluster: &Cluster, c: &[Lit], m: &Mapping) -> bool {
    c.iter().all(|&l| !l.holds(app, cluster, m))
}

/// Nogood clauses (disjunctions of literals) for a rejected candidate, with a name each.
pub fn derive(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    mapping: &Mapping,
    report: &Report,
) -> Vec<(Vec<Lit>, String)> {
    derive_with_cuts(app, cluster, an, mapping, report).0
}

/// "At most `at_most` of `lits` hold, unless one of `unless` does": a nogood over many
/// candidates at once (`keep_up_cut`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cut {
    pub lits: Vec<Lit>,
    pub at_most: usize,
    pub unless: Vec<Lit>,
    pub what: String,
}

/// `derive`, and the cardinality nogoods (`keep_up_cut`) the candidate teaches.
pub fn derive_with_cuts(
    app: &Application,
    cluster: &Cluster,
    an: &Analysis,
    mapping: &Mapping,
    report: &Report,
) -> (Vec<(Vec<Lit>, String)>, Vec<Cut>) {
    let mut out = Vec::new();
    let mut cuts = Vec::new();
    let Some(p) = &report.prediction else {
        return (out, cuts);
    };
    let cx = Context { app, cluster, an, mapping };
    let pinned = mapping.placement.iter().any(|x| x.cpu.is_some());
    if !pinned {
        first_round(&cx, p, &mut out, &mut cuts);
    }
    contention(&cx, p, &mut out);
    latency(&cx, p, &mut out);
    (out, cuts)
}

struct Context<'a> {
    app: &'a Application,
    cluster: &'a Cluster,
    an: &'a Analysis,
    mapping: &'a Mapping,
}

impl Context<'_> {
    /// T_exec key of module `mi` where the candidate puts it.
    fn key_here(&self, mi: usize) -> u64 {
        texec_key(self.an.costs(self.app, self.cluster, mi, self.mapping.node_of(self.an.modules[mi])).0)
    }

    /// The modules (indices) whose speed sets the pace of the given ones: the given modules and
    /// their synchronous ancestors. None if one of them is in a synchronous cycle (whose pace
    /// also depends on routes).
    fn pace_ancestors(&self, from: impl IntoIterator<Item = usize>) -> Option<Vec<usize>> {
        let mut seen = vec![false; self.an.modules.len()];
        let mut stack: Vec<usize> = from.into_iter().collect();
        let mut out = Vec::new();
        while let Some(m) = stack.pop() {
            if seen[m] {
                continue;
            }
            seen[m] = true;
            if self.an.cycle_of[m].is_some() {
                return None;
            }
            out.push(m);
            stack.extend(self.an.inputs[m].iter().map(|x| x.source));
        }
        out.sort();
        Some(out)
    }

    /// Literals "ancestor a runs at another speed than here", for every ancestor whose domain
    /// has several speeds (`both`), or only "runs slower" / "runs faster".
    fn speed_escape(&self, ancestors: &[usize], slower: bool, faster: bool) -> Vec<Lit> {
        let mut c = Vec::new();
        for &a in ancestors {
            let o = self.an.modules[a];
            let k = self.key_here(a);
            if slower {
                c.push(Lit::Slower(o, k));
            }
            if faster {
                c.push(Lit::Faster(o, k));
            }
        }
        c
    }

    /// Modules whose frequency sets the rate of messages leaving object `o` (through filters).
    fn rate_modules(&self, o: ObjectId, out: &mut Vec<usize>, seen: &mut Vec<bool>) {
        if seen[o.index()] {
            return;
        }
        seen[o.index()] = true;
        let g = &self.app.graph;
        match g[o].filter() {
            None => out.extend(self.an.module_of[o.index()]),
            Some(FilterKind::Greedy) => {
                for e in g.edges_directed(o, Direction::Outgoing) {
                    self.rate_modules(e.target(), out, seen);
                }
            }
            Some(_) => {
                for e in g.edges_directed(o, Direction::Incoming) {
                    self.rate_modules(e.source(), out, seen);
                }
            }
        }
    }

    /// The modules whose speed sets an edge's rate (the object its rate is read from, eq 9–10).
    fn edge_rate_modules(&self, e: EdgeId) -> Vec<usize> {
        let (s, d) = self.app.graph.edge_endpoints(e).expect("edge");
        let from = if self.app.graph[s].filter() == Some(FilterKind::Greedy) { d } else { s };
        let mut out = Vec::new();
        let mut seen = vec![false; self.app.graph.node_count()];
        self.rate_modules(from, &mut out, &mut seen);
        out
    }
}

/// CPU loads after the published allocation of modules with these LDs, in order, on `cpus`
/// CPUs (least-loaded CPU, first on ties; LD_c = (1 − load) x LD).
fn loads_after(lds: &[f64], cpus: usize) -> Vec<f64> {
    let mut l = vec![0.0f64; cpus];
    for &ld in lds {
        let mut p = 0;
        for c in 1..cpus {
            if l[c] < l[p] {
                p = c;
            }
        }
        l[p] += (1.0 - l[p]) * ld;
    }
    l
}

/// First allocation round on each node: the first module m (in the node's order) that the
/// round leaves slower than soundness allows. Its share is 1 − (the least CPU load after the
/// modules before it), and the sorted CPU loads only grow when modules are inserted anywhere in
/// the sequence (checked by a property test), so a subsequence Q of the modules before m that
/// already starves m does so in every mapping where Q and m share the node in the same order:
/// "m on n and Q on n, with the speeds that order them unchanged" is unsound. Q is shrunk to
/// a minimal such subsequence. When m got a whole CPU and still cannot keep up, its own T_exec
/// against its inputs' pace is the reason and no other module is named.
fn first_round(cx: &Context, p: &Prediction, out: &mut Vec<(Vec<Lit>, String)>, cuts: &mut Vec<Cut>) {
    let Context { app, cluster, an, .. } = *cx;
    if !an.literal() {
        return; // the load argument below is the published allocation's
    }
    for n in (0..cluster.nodes.len() as u32).map(NodeId) {
        let mut here: Vec<usize> = (0..p.modules.len()).filter(|&i| p.modules[i].node == n).collect();
        here.sort_by_key(|&i| p.modules[i].first.rank);
        let cpus = cluster.node(n).cpus as usize;
        // The two orders a node may take (eq 7's decreasing T_I/O, or eq 8's ascending
        // T_exec x LD on a configuration-1 node), as "a comes before b".
        let before7 = |a: usize, b: usize| {
            let (ka, kb) = (p.modules[a].first.tio, p.modules[b].first.tio);
            ka > kb || (ka == kb && a < b)
        };
        let w = |i: usize| p.modules[i].texec * p.modules[i].ld;
        let before8 = |a: usize, b: usize| w(a) < w(b) || (w(a) == w(b) && a < b);
        for (pos, &mi) in here.iter().enumerate() {
            let m = &p.modules[mi];
            let in_min =
                p.sync_inputs[mi].iter().map(|x| x.ratio * p.modules[x.source].tit_sync).fold(f64::INFINITY, f64::min);
            // Whether m fails with this free share of its CPU.
            let fails_with = |free: f64| {
                let tcexec = if free > 0.0 { m.texec / free } else { f64::INFINITY };
                if p.sync_inputs[mi].is_empty() {
                    !le(tcexec, m.texec)
                } else {
                    !le(tcexec, in_min)
                }
            };
            let fails = if p.sync_inputs[mi].is_empty() {
                m.first.ldc < m.ld * (1.0 - 1e-12)
            } else {
                !le(m.first.tcexec, in_min)
            };
            if !fails {
                continue;
            }
            if an.cycle_of[mi].is_some() {
                break;
            }
            let mo = an.modules[mi];
            // m's pace: only slower ancestors could rescue it (and they could move it up).
            let Some(anc_m) = cx.pace_ancestors(std::iter::once(mi)) else { break };
            let anc_m: Vec<usize> = anc_m.into_iter().filter(|&j| j != mi).collect();
            if fails_with(1.0) {
                let mut c = vec![Lit::Place(mo, n, false)];
                c.extend(cx.speed_escape(&anc_m, true, false));
                out.push((c, format!("{} cannot keep up on {}", app.object(mo).name, cluster.node(n).name)));
                break;
            }
            cuts.extend(keep_up_cuts(cx, p, n, mi, &fails_with));
            // Modules before m in eq 7's order. A node holding m and Q is never in configuration
            // 1 when they include a predecessor or span two synchronous components (more
            // modules cannot change that), so eq 7's order is the only one to consider there;
            // otherwise Q must starve m in eq 8's order too, with every member before m in it.
            let sg = &an.sync_lo;
            let never_eq8 = |q: &[usize]| {
                sg.is_predecessor(mi) || q.iter().any(|&j| sg.is_predecessor(j) || sg.component[j] != sg.component[mi])
            };
            let least = |seq: &[usize]| {
                let lds: Vec<f64> = seq.iter().map(|&j| p.modules[j].ld).collect();
                loads_after(&lds, cpus).into_iter().fold(f64::INFINITY, f64::min)
            };
            let starved = |q: &[usize]| {
                let mut by7 = q.to_vec();
                by7.sort_by(|&a, &b| p.modules[b].first.tio.total_cmp(&p.modules[a].first.tio).then(a.cmp(&b)));
                if !fails_with((1.0 - least(&by7)).max(0.0)) {
                    return false;
                }
                if never_eq8(q) {
                    return true;
                }
                let mut by8 = q.to_vec();
                by8.sort_by(|&a, &b| w(a).total_cmp(&w(b)).then(a.cmp(&b)));
                q.iter().all(|&j| before8(j, mi)) && fails_with((1.0 - least(&by8)).max(0.0))
            };
            let by7: Vec<usize> =
                here[..pos].iter().copied().filter(|&j| an.cycle_of[j].is_none() && before7(j, mi)).collect();
            let both: Vec<usize> = by7.iter().copied().filter(|&j| before8(j, mi)).collect();
            let Some(prefix) = [by7, both].into_iter().find(|q| starved(q)) else {
                break; // what starves m here depends on the order or on cycles: no generalisation
            };
            let mut q = prefix;
            let mut i = q.len();
            while i > 0 {
                i -= 1;
                let mut shorter = q.clone();
                shorter.remove(i);
                if starved(&shorter) {
                    q = shorter;
                }
            }
            let Some(anc_q) = cx.pace_ancestors(q.iter().copied()) else { break };
            let anc_q: Vec<usize> = anc_q.into_iter().filter(|j| !q.contains(j) && *j != mi).collect();
            let mut c = vec![Lit::Place(mo, n, false)];
            for &j in &q {
                c.push(Lit::Place(an.modules[j], n, false));
            }
            // A slower ancestor only raises a Q member's key, which keeps it before m; and
            // with at most CPUs(n) members their order among themselves does not change the
            // least CPU load they leave (each takes an empty CPU of its own): then the
            // ancestors Q alone depends on escape only by running faster.
            if q.len() <= cpus {
                let (shared, own): (Vec<usize>, Vec<usize>) = anc_q.iter().partition(|j| anc_m.contains(j));
                c.extend(cx.speed_escape(&shared, true, true));
                c.extend(cx.speed_escape(&own, false, true));
            } else {
                c.extend(cx.speed_escape(&anc_q, true, true));
            }
            let only_m: Vec<usize> = anc_m.into_iter().filter(|j| !anc_q.contains(j) && !q.contains(j)).collect();
            c.extend(cx.speed_escape(&only_m, true, false));
            out.push((c, format!("{} on {} after {} module(s)", app.object(mo).name, cluster.node(n).name, q.len())));
            break;
        }
    }
}

/// The heavy-modules argument behind the keep-up family, for the candidate's paces. Module m
/// fails on node n (it got no idle CPU, and the share a CPU of load L leaves it, 1 − L, is too
/// small once L >= LD_j for the modules j called heavy). The first round gives each module the
/// least-loaded CPU and raises its load from L to L + (1 − L)·LD_j >= LD_j; loads never fall.
/// So while some CPU is still good for m (load below what m can stand), the least-loaded one
/// is, and a heavy module placed before m makes it bad: with CPUs(n) heavy modules before m in
/// the order, every CPU is bad when m's turn comes, whatever else shares the node. Heavy and
/// "before m" are decided with the keys (eq 6–8) the modules would have on n at the
/// candidate's paces, so the cut holds unless m leaves n or a pace ancestor of these modules
/// runs at another speed: "at most CPUs(n) − 1 of them on n". It covers every choice of
/// CPUs(n) modules among them, where the clause from `first_round` excludes one.
fn keep_up_cuts(cx: &Context, p: &Prediction, n: NodeId, mi: usize, fails_with: &dyn Fn(f64) -> bool) -> Vec<Cut> {
    let Context { app, cluster, an, .. } = *cx;
    if an.cycle_of[mi].is_some() {
        return Vec::new();
    }
    let cpus = cluster.node(n).cpus as usize;
    let sg = &an.sync_lo;
    // Key (eq 6–7) and eq 8's weight of module j if it ran on n, at the candidate's paces.
    let at_n = |j: usize| {
        let (texec, ld) = an.costs(app, cluster, j, n);
        let key = if p.sync_inputs[j].is_empty() {
            texec * (1.0 - ld)
        } else {
            p.sync_inputs[j].iter().map(|x| x.ratio * p.modules[x.source].tit_sync).fold(texec, f64::max) - texec * ld
        };
        (key, texec * ld, ld)
    };
    let (km, wm, _) = at_n(mi);
    // Per module j that may share n and would be heavy there: whether it comes before m on n
    // at any paces (`Analysis::key7`'s lower bound), at the candidate's paces, and the
    // ancestors its key depends on (None: a cycle among them).
    struct Cand {
        j: usize,
        always: bool,
        here: bool,
        anc: Option<Vec<usize>>,
    }
    let mut cands: Vec<Cand> = Vec::new();
    for j in 0..an.modules.len() {
        if j == mi || an.cycle_of[j].is_some() {
            continue;
        }
        let (kj, wj, ld) = at_n(j);
        if !fails_with((1.0 - ld).max(0.0)) {
            continue;
        }
        // A node holding j and m is in configuration 1 only if both are of one synchronous
        // component and neither is a predecessor; then eq 8's order must put j first too.
        let may_eq8 = !sg.is_predecessor(mi) && !sg.is_predecessor(j) && sg.component[j] == sg.component[mi];
        if may_eq8 && !(wj < wm || (wj == wm && j < mi)) {
            continue;
        }
        let before = |k: f64| k > km || (k == km && j < mi);
        let always = before(an.key7(app, cluster, j, n).0);
        let here = before(kj);
        if !always && !here {
            continue;
        }
        let anc = if always { None } else { cx.pace_ancestors(p.sync_inputs[j].iter().map(|x| x.source)) };
        cands.push(Cand { j, always, here, anc });
    }
    // The ancestors of the modules the candidate puts before m on n only at its paces: the cut
    // holds while none of them runs faster (slower ones only raise those modules' keys).
    let mut fixed: Vec<usize> = Vec::new();
    for c in &cands {
        if !c.always && c.here && p.modules[c.j].node == n {
            if let Some(a) = &c.anc {
                fixed.extend(a.iter().copied());
            }
        }
    }
    fixed.sort_unstable();
    fixed.dedup();
    let heavy: Vec<usize> = cands
        .iter()
        .filter(|c| {
            c.always || (c.here && c.anc.as_ref().is_some_and(|a| a.iter().all(|x| fixed.binary_search(x).is_ok())))
        })
        .map(|c| c.j)
        .collect();
    // m's key and what it can stand depend on its own ancestors: only slower ones raise them.
    let Some(anc) = cx.pace_ancestors(std::iter::once(mi)) else { return Vec::new() };
    let anc: Vec<usize> = anc.into_iter().filter(|&j| j != mi).collect();
    let fixed: Vec<usize> = fixed.into_iter().filter(|&a| a != mi).collect();
    let mut escape = cx.speed_escape(&anc, true, false);
    escape.extend(cx.speed_escape(&fixed, false, true));
    // Keys, loads and m's needs depend on n only through its processor type and CPUs: the
    // same argument holds on every such node of m's domain.
    let node = cluster.node(n);
    let mo = an.modules[mi];
    an.domain[mo.index()]
        .iter()
        .filter(|&&n2| cluster.node(n2).processor == node.processor && cluster.node(n2).cpus == node.cpus)
        .filter_map(|&n2| {
            let lits: Vec<Lit> = heavy
                .iter()
                .filter(|&&j| an.domain[an.modules[j].index()].contains(&n2))
                .map(|&j| Lit::Place(an.modules[j], n2, true))
                .collect();
            if lits.len() < cpus {
                return None;
            }
            let mut unless = vec![Lit::Place(mo, n2, false)];
            unless.extend(escape.iter().copied());
            unless.sort();
            unless.dedup();
            let what = format!(
                "{} on {} after {} of {} modules",
                app.object(mo).name,
                cluster.node(n2).name,
                cpus,
                lits.len()
            );
            Some(Cut { lits, at_most: cpus - 1, unless, what })
        })
        .collect()
}

fn contention(cx: &Context, p: &Prediction, out: &mut Vec<(Vec<Lit>, String)>) {
    let Context { app, cluster, mapping, .. } = *cx;
    // Rates at the synchronisation pace (what a sound mapping would run at).
    let hz = p
        .module_of
        .iter()
        .map(|mi| mi.map(|i| if p.modules[i].tit_sync > 0.0 { 1.0 / p.modules[i].tit_sync } else { 0.0 }))
        .collect();
    let rate = perf::edge_rates(app, &perf::object_frequencies(app, hz));
    for l in &p.links {
        for (edges, send) in [(&l.send_edges, true), (&l.recv_edges, false)] {
            let mut bws: Vec<(f64, EdgeId)> =
                edges.iter().map(|&e| (app.graph[e].volume * rate[e.index()], e)).collect();
            if le(bws.iter().map(|b| b.0).sum(), l.capacity) {
                continue;
            }
            bws.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut sum = 0.0;
            let mut c = Vec::new();
            let mut setters = Vec::new();
            for (bw, e) in bws {
                sum += bw;
                let (s, d) = app.graph.edge_endpoints(e).expect("edge");
                let end = if send { s } else { d };
                debug_assert_eq!(mapping.node_of(end), l.node);
                c.push(Lit::Place(end, l.node, false));
                c.push(Lit::Route(e, l.network, false));
                setters.extend(cx.edge_rate_modules(e));
                if !le(sum, l.capacity) {
                    break;
                }
            }
            if le(sum, l.capacity) {
                continue;
            }
            let Some(anc) = cx.pace_ancestors(setters) else { continue };
            c.extend(cx.speed_escape(&anc, true, false));
            out.push((
                c,
                format!(
                    "{} {} on {}",
                    cluster.node(l.node).name,
                    if send { "sends" } else { "receives" },
                    cluster.network(l.network).name
                ),
            ));
        }
    }
}

fn latency(cx: &Context, p: &Prediction, out: &mut Vec<(Vec<Lit>, String)>) {
    let Context { app, cluster, an, mapping } = *cx;
    for r in &app.requirements {
        let Requirement::MaxLatency { name, path, max_s } = r else {
            continue;
        };
        let mods: Vec<usize> = path.iter().filter_map(|o| an.module_of[o.index()]).collect();
        let Some(anc) = cx.pace_ancestors(mods.iter().copied()) else { continue };
        // eq 11 at the synchronisation pace, with this candidate's routes.
        let base: f64 = mods.iter().map(|&mi| p.modules[mi].tit_sync).sum();
        let mut comm = 0.0;
        let mut c = Vec::new();
        for pair in path.windows(2) {
            let mut best = (0.0, None);
            for e in app.graph.edges_connecting(pair[0], pair[1]) {
                let t = perf::comm_time(app, cluster, mapping, e.id());
                if t > best.0 {
                    best = (t, Some((e.id(), mapping.route(e.id()))));
                }
            }
            if let (t, Some((e, Route::Net(k)))) = best {
                comm += t;
                c.push(Lit::Route(e, k, false));
            }
        }
        if !le(base + comm, *max_s) {
            c.extend(cx.speed_escape(&anc, false, true));
            out.push((c, format!("latency of {name}")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::loads_after;
    use proptest::prelude::*;

    fn sorted(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(f64::total_cmp);
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5000, .. ProptestConfig::default() })]
        /// The first-round nogood rests on this: inserting a module anywhere in a node's
        /// allocation sequence never lowers any of the sorted CPU loads (so never raises the
        /// least-loaded CPU's free share). Checked against the allocation itself.
        #[test]
        fn sorted_loads_grow_under_insertion(
            cpus in 1usize..5,
            lds in prop::collection::vec(0.001f64..1.0, 0..8),
            x in 0.001f64..1.0,
            at in 0usize..9,
        ) {
            let at = at.min(lds.len());
            let mut longer = lds.clone();
            longer.insert(at, x);
            let a = sorted(loads_after(&lds, cpus));
            let b = sorted(loads_after(&longer, cpus));
            for (u, v) in a.iter().zip(&b) {
                prop_assert!(*v >= *u - 1e-12, "{:?} then {:?}", a, b);
            }
        }
    }
}
