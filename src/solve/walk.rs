//! Verifier-guided repair: a min-conflicts walk over complete mappings. Each step takes an
//! error diagnostic of the current mapping, one object it names (or one on a node it names),
//! and moves it to the node of its domain whose mapping `verify::check` gives the fewest
//! errors (ties broken at random; sideways moves allowed, the last few moved objects are tabu).
//! Routes of the moved object's edges go local or on the fastest shared network.
//!
//! It complements the CSP-based LNS, whose sub-models are relaxations of the CPU allocation:
//! on dense instances most of their candidates are rejected by the verifier, while here every
//! step is judged by the verifier itself. It proves nothing; a sound mapping it returns is
//! checked like every other.

use super::greedy::Ctx;
use crate::model::{Mapping, NodeId, ObjectId, Route};
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

/// Target nodes tried per step, at most (plus the nodes of the moved object's neighbours).
const MAX_TARGETS: usize = 24;

/// Errors of a report, plus filters off their neighbours' nodes under filter locality (fewer
/// is better; 0: sound and local).
fn errors(cx: Ctx, m: &Mapping, r: &Report) -> usize {
    r.diagnostics.iter().filter(|d| d.kind.is_error()).count() + misplaced_filters(cx, m).len()
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

/// Sets the routes of `o`'s edges for its current node and its neighbours' nodes.
fn reroute(cx: Ctx, m: &mut Mapping, o: ObjectId) {
    let (app, cluster) = (cx.app, cx.cluster);
    for dir in [Direction::Incoming, Direction::Outgoing] {
        for e in app.graph.edges_directed(o, dir) {
            let (a, b) = (m.node_of(e.source()), m.node_of(e.target()));
            m.routes[e.id().index()] = if a == b {
                Route::Local
            } else {
                match cluster.shared_networks(a, b).into_iter().max_by(|&x, &y| {
                    cluster.networks[x.0 as usize].bandwidth.total_cmp(&cluster.networks[y.0 as usize].bandwidth)
                }) {
                    Some(k) => Route::Net(k),
                    // No common network: the verifier reports it.
                    None => Route::Unreachable,
                }
            };
        }
    }
}

/// Walks from `start` until a mapping `check` calls sound, `stop()` says so, or `max_steps`
/// steps; the sound mapping and its report.
pub fn repair(
    cx: Ctx,
    start: Mapping,
    seed: u64,
    max_steps: usize,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    let Ctx { app, cluster, an, popts, fix, .. } = cx;
    let mut rng = StdRng::seed_from_u64(seed);
    let by_name: HashMap<&str, ObjectId> = app.graph.node_indices().map(|o| (app.object(o).name.as_str(), o)).collect();
    let node_by_name: HashMap<&str, NodeId> =
        cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), NodeId(i as u32))).collect();
    let fixed = |o: ObjectId| fix.is_some_and(|f| f.placement[o.index()].is_some());
    let mut cur = start;
    for o in app.graph.node_indices() {
        reroute(cx, &mut cur, o);
    }
    let mut rep = verify::check(app, cluster, &cur, popts);
    let mut score = errors(cx, &cur, &rep);
    let mut tabu: VecDeque<ObjectId> = VecDeque::new();
    let (mut low, mut since_low) = (score, 0usize);
    // The fewest errors seen, and kicks since: a walk that stops improving gives up (tiny
    // infeasible instances end in milliseconds, leaving the time to the CSP's proof).
    let (mut fewest, mut kicks) = (score, 0usize);
    for _ in 0..max_steps {
        // Stuck on a plateau: kick a few movable objects to random nodes of their domains.
        since_low += 1;
        if since_low > KICK_AFTER {
            kicks += 1;
            if kicks > MAX_KICKS {
                return None;
            }
            let movable: Vec<ObjectId> =
                app.graph.node_indices().filter(|&o| !fixed(o) && an.domain[o.index()].len() > 1).collect();
            for _ in 0..KICK.min(movable.len()) {
                let o = movable[rng.random_range(0..movable.len())];
                let d = &an.domain[o.index()];
                cur.placement[o.index()].node = d[rng.random_range(0..d.len())];
                cur.placement[o.index()].cpu = None;
                reroute(cx, &mut cur, o);
            }
            rep = verify::check(app, cluster, &cur, popts);
            score = errors(cx, &cur, &rep);
            since_low = 0;
            low = low.max(score);
        }
        if score == 0 {
            return Some((cur, rep));
        }
        if stop() {
            return None;
        }
        // Candidates: the objects an error names, or those on a node it names.
        let errs: Vec<&verify::Diagnostic> = rep.diagnostics.iter().filter(|d| d.kind.is_error()).collect();
        let mut cands: Vec<ObjectId> = Vec::new();
        if errs.is_empty() {
            cands = misplaced_filters(cx, &cur);
        } else {
            let d = errs[rng.random_range(0..errs.len())];
            for s in &d.subjects {
                if let Some(&o) = by_name.get(s.as_str()) {
                    cands.push(o);
                } else if let Some(&n) = node_by_name.get(s.as_str()) {
                    cands.extend(app.graph.node_indices().filter(|&o| cur.node_of(o) == n));
                }
            }
        }
        cands.retain(|&o| !fixed(o) && an.domain[o.index()].len() > 1 && !tabu.contains(&o));
        if cands.is_empty() {
            // Nothing movable named: a random movable object.
            let all: Vec<ObjectId> =
                app.graph.node_indices().filter(|&o| !fixed(o) && an.domain[o.index()].len() > 1).collect();
            if all.is_empty() {
                return None;
            }
            cands.push(all[rng.random_range(0..all.len())]);
        }
        let o = cands[rng.random_range(0..cands.len())];
        let here = cur.node_of(o);
        let mut best: Vec<(Mapping, Report)> = Vec::new();
        let mut best_score = usize::MAX;
        // Target nodes: the whole domain when small, else a sample plus the nodes of the
        // object's neighbours (each target costs a `check` of the whole mapping).
        let domain = &an.domain[o.index()];
        let targets: Vec<NodeId> = if domain.len() <= MAX_TARGETS {
            domain.clone()
        } else {
            let mut t: Vec<NodeId> = (0..MAX_TARGETS).map(|_| domain[rng.random_range(0..domain.len())]).collect();
            let g = &app.graph;
            t.extend(
                g.neighbors_directed(o, Direction::Incoming)
                    .chain(g.neighbors_directed(o, Direction::Outgoing))
                    .map(|b| cur.node_of(b))
                    .filter(|n| domain.binary_search(n).is_ok()),
            );
            t.sort();
            t.dedup();
            t
        };
        for n in targets {
            if n == here {
                continue;
            }
            // Each target costs a whole `check` (milliseconds at 3,000 modules).
            if stop() {
                return None;
            }
            let mut m = cur.clone();
            m.placement[o.index()].node = n;
            m.placement[o.index()].cpu = None;
            // Half the time a swap: an object of node n that may go where o was comes back
            // (dense nodes take nothing more, but may trade).
            if rng.random_bool(0.5) {
                let back: Vec<ObjectId> = app
                    .graph
                    .node_indices()
                    .filter(|&p| {
                        p != o && cur.node_of(p) == n && !fixed(p) && an.domain[p.index()].binary_search(&here).is_ok()
                    })
                    .collect();
                if !back.is_empty() {
                    let p = back[rng.random_range(0..back.len())];
                    m.placement[p.index()].node = here;
                    m.placement[p.index()].cpu = None;
                    reroute(cx, &mut m, p);
                }
            }
            reroute(cx, &mut m, o);
            let r = verify::check(app, cluster, &m, popts);
            let s = errors(cx, &m, &r);
            if s < best_score {
                best_score = s;
                best.clear();
            }
            if s == best_score {
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
        if score < low {
            low = score;
            since_low = 0;
        }
        tabu.push_back(o);
        if tabu.len() > 5 {
            tabu.pop_front();
        }
    }
    (score == 0).then_some((cur, rep))
}
