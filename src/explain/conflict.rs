//! Minimal conflicts: a set C of facts such that the instance with only C binding (every other
//! fact relaxed) has no sound mapping (proved by `solve`), and relaxing any one fact of C as
//! well admits one (found and verified by `solve`).
//!
//! Search: QuickXplain (Junker, 2004) with `solve` as the oracle, over the facts seeded from
//! the presolve's and the counting arguments' reasons when those already name the objects
//! involved (then only the facts about those objects, their synchronous ancestors and their
//! nodes are candidates), else over every fact. Every answer is cached by the set of binding
//! facts. QuickXplain assumes monotonicity (relaxing facts never removes mappings), which LD
//! relaxations may break, so its result is checked: C is solved again, and for every f in C,
//! C \ {f} must be feasible; a fact whose removal keeps C infeasible is removed and the check
//! repeated. Where a call ends undecided (time limit), the smallest set proved infeasible is
//! returned, marked not minimal.

use super::facts::{Fact, Facts, Instance};
use crate::csp::presolve::Cause;
use crate::csp::Analysis;
use crate::model::{Mapping, NodeId, ObjectId, Requirement, Route};
use crate::solve::{Outcome, SolveOptions, Status};
use crate::verify::{self, Verdict};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

/// What `solve` said about one changed instance.
#[derive(Clone, Debug)]
pub enum Answer {
    /// Proved: no sound mapping; with the reasons found before search, if any.
    Infeasible(Vec<String>),
    /// A sound mapping (verified), with the nodes it uses.
    Feasible(Mapping, i64),
    /// No answer within the time limit.
    Unknown,
}

impl Answer {
    pub fn infeasible(&self) -> bool {
        matches!(self, Answer::Infeasible(_))
    }
}

/// Solves one instance within `limit`: first a short large-neighbourhood search alone (no CSP,
/// so it claims infeasibility only when the presolve or the counting arguments prove it), which
/// finds mappings of slightly relaxed instances in milliseconds where the greedy start fails and
/// the CSP search takes seconds; then, if undecided, the full solver.
pub fn decide_instance(inst: &Instance, opts: &SolveOptions, limit: Option<Duration>) -> Answer {
    let objects = inst.app.graph.node_count() as u64;
    let quick = Duration::from_millis(50 + objects / 2).min(Duration::from_secs(1));
    let quick = limit.map_or(quick, |l| l.min(quick));
    let a = solve_once(inst, &SolveOptions { max_csp_size: 0, ..opts.clone() }, Some(quick));
    if !matches!(a, Answer::Unknown) {
        return a;
    }
    solve_once(inst, opts, limit.map(|l| l.saturating_sub(quick)))
}

fn solve_once(inst: &Instance, opts: &SolveOptions, limit: Option<Duration>) -> Answer {
    if limit.is_some_and(|l| l.is_zero())
        || opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    {
        return Answer::Unknown;
    }
    let o = SolveOptions { time_limit: limit, progress: None, leak_model: false, ..opts.clone() };
    let out: Outcome = crate::headroom::solve(&inst.app, &inst.cluster, inst.fix.as_ref(), &o);
    match (out.status, out.mapping) {
        (Status::Infeasible, _) => Answer::Infeasible(out.reasons),
        (Status::Feasible | Status::Optimal, Some(m)) => {
            let k = crate::solve::nodes_used(&m);
            Answer::Feasible(m, k)
        }
        _ => Answer::Unknown,
    }
}

/// `solve` on instances with some facts relaxed, cached, within a budget.
pub struct Oracle<'f, 'a> {
    pub facts: &'f Facts<'a>,
    pub opts: SolveOptions,
    /// Time limit of one call.
    pub per_call: Duration,
    pub deadline: Option<Instant>,
    /// At most this many calls (then every further answer is `Unknown`).
    pub max_calls: Option<usize>,
    pub jobs: usize,
    cache: HashMap<Vec<bool>, Answer>,
    pub calls: usize,
    pub hits: usize,
    /// Answers given by a mapping found earlier (no search).
    pub reused: usize,
    /// Sound mappings found so far (the most recent few), tried before any search.
    found: Vec<Mapping>,
    /// The smallest set of binding facts proved infeasible so far.
    pub smallest_proved: Option<Vec<bool>>,
}

impl<'f, 'a> Oracle<'f, 'a> {
    pub fn new(facts: &'f Facts<'a>, opts: SolveOptions, per_call: Duration, deadline: Option<Instant>) -> Self {
        Oracle {
            facts,
            opts,
            per_call,
            deadline,
            max_calls: None,
            jobs: 1,
            cache: HashMap::new(),
            calls: 0,
            hits: 0,
            reused: 0,
            found: Vec::new(),
            smallest_proved: None,
        }
    }

    /// Records an answer obtained elsewhere (the original instance's).
    pub fn remember(&mut self, keep: Vec<bool>, a: Answer) {
        self.note(&keep, &a);
        self.cache.insert(keep, a);
    }

    fn note(&mut self, keep: &[bool], a: &Answer) {
        if a.infeasible() {
            let k = keep.iter().filter(|&&b| b).count();
            if self.smallest_proved.as_ref().is_none_or(|s| s.iter().filter(|&&b| b).count() > k) {
                self.smallest_proved = Some(keep.to_vec());
            }
        }
    }

    fn limit(&self) -> Option<Duration> {
        if self.max_calls.is_some_and(|m| self.calls >= m) {
            return Some(Duration::ZERO);
        }
        let left = self.deadline.map(|d| d.saturating_duration_since(Instant::now()));
        Some(left.map_or(self.per_call, |l| l.min(self.per_call)))
    }

    fn run(&self, keep: &[bool], limit: Option<Duration>) -> Answer {
        match self.facts.instance(keep) {
            Err(why) => Answer::Infeasible(vec![why]),
            Ok(inst) => decide_instance(&inst, &self.opts, limit),
        }
    }

    /// A mapping found earlier that is sound on this instance too (checked by the verifier,
    /// fixed placements and routes included): relaxing facts rarely breaks a mapping, and
    /// checking one costs far less than a search.
    fn reuse(&self, keep: &[bool]) -> Option<Answer> {
        let inst = self.facts.instance(keep).ok()?;
        self.found.iter().rev().find_map(|m| {
            let fixed_ok = inst.fix.as_ref().is_none_or(|f| {
                f.placement.iter().enumerate().all(|(i, p)| p.is_none_or(|p| m.placement[i].node == p.node))
                    && f.network.iter().enumerate().all(|(e, k)| k.is_none_or(|k| m.routes[e] == Route::Net(k)))
            });
            let sound =
                fixed_ok && verify::check(&inst.app, &inst.cluster, m, &self.opts.perf).verdict == Verdict::Sound;
            sound.then(|| Answer::Feasible(m.clone(), crate::solve::nodes_used(m)))
        })
    }

    fn keep_found(&mut self, a: &Answer) {
        if let Answer::Feasible(m, _) = a {
            if !self.found.contains(m) {
                self.found.push(m.clone());
                if self.found.len() > 4 {
                    self.found.remove(0);
                }
            }
        }
    }

    /// The answer for the instance with the facts in `keep` binding.
    pub fn decide(&mut self, keep: &[bool]) -> Answer {
        if let Some(a) = self.cache.get(keep) {
            self.hits += 1;
            return a.clone();
        }
        // Past the deadline nothing is built (an instance and a check cost seconds at
        // thousands of objects).
        let limit = self.limit();
        if limit.is_some_and(|l| l.is_zero()) {
            return Answer::Unknown;
        }
        if let Some(a) = self.reuse(keep) {
            self.reused += 1;
            self.cache.insert(keep.to_vec(), a.clone());
            return a;
        }
        let limit = self.limit();
        if limit.is_some_and(|l| l.is_zero()) {
            return Answer::Unknown;
        }
        self.calls += 1;
        let a = self.run(keep, limit);
        self.note(keep, &a);
        self.keep_found(&a);
        if !matches!(a, Answer::Unknown) {
            self.cache.insert(keep.to_vec(), a.clone());
        }
        a
    }

    /// Several independent questions, solved in parallel (`jobs` at a time); answers in order.
    pub fn decide_many(&mut self, keeps: &[Vec<bool>]) -> Vec<Answer> {
        let mut out: Vec<Option<Answer>> = keeps.iter().map(|k| self.cache.get(k).cloned()).collect();
        self.hits += out.iter().filter(|a| a.is_some()).count();
        for (i, k) in keeps.iter().enumerate() {
            if out[i].is_none() && self.limit().is_none_or(|l| !l.is_zero()) {
                if let Some(a) = self.reuse(k) {
                    self.reused += 1;
                    self.cache.insert(k.clone(), a.clone());
                    out[i] = Some(a);
                }
            }
        }
        let todo: Vec<usize> = (0..keeps.len()).filter(|&i| out[i].is_none()).collect();
        let limit = self.limit();
        if todo.is_empty() || limit.is_some_and(|l| l.is_zero()) {
            return out.into_iter().map(|a| a.unwrap_or(Answer::Unknown)).collect();
        }
        self.calls += todo.len();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(self.jobs.max(1)).build().expect("thread pool");
        let this = &*self;
        let fresh: Vec<(usize, Answer)> =
            pool.install(|| todo.par_iter().map(|&i| (i, this.run(&keeps[i], limit))).collect());
        for (i, a) in fresh {
            self.note(&keeps[i], &a);
            self.keep_found(&a);
            if !matches!(a, Answer::Unknown) {
                self.cache.insert(keeps[i].clone(), a.clone());
            }
            out[i] = Some(a);
        }
        out.into_iter().map(|a| a.unwrap_or(Answer::Unknown)).collect()
    }

    fn keep_of(&self, set: &[usize]) -> Vec<bool> {
        let mut keep = vec![false; self.facts.list.len()];
        for &i in set {
            keep[i] = true;
        }
        keep
    }

    fn infeasible(&mut self, set: &[usize]) -> bool {
        let keep = self.keep_of(set);
        self.decide(&keep).infeasible()
    }

    /// QuickXplain: a subset of `cands` that, with `background`, is infeasible and minimal
    /// (under monotonicity); facts early in `cands` are preferred.
    fn qx(&mut self, background: &[usize], delta: bool, cands: &[usize]) -> Vec<usize> {
        if delta && self.infeasible(background) {
            return vec![];
        }
        if cands.len() <= 1 {
            return cands.to_vec();
        }
        let (c1, c2) = cands.split_at(cands.len() / 2);
        let b1: Vec<usize> = background.iter().chain(c1).copied().collect();
        let d2 = self.qx(&b1, true, c2);
        let b2: Vec<usize> = background.iter().chain(&d2).copied().collect();
        let d1 = self.qx(&b2, !d2.is_empty(), c1);
        d1.into_iter().chain(d2).collect()
    }
}

/// One fact of a conflict, for reports.
#[derive(Clone, Debug)]
pub struct FactNote {
    pub fact: Fact,
    pub kind: &'static str,
    pub subjects: Vec<String>,
    pub message: String,
    /// What goes wrong with this fact alone: a mapping that is sound with it relaxed (and the
    /// rest of the conflict binding) breaks it like this.
    pub witness: Option<String>,
}

/// A conflict and how it was found.
#[derive(Clone, Debug)]
pub struct Conflict {
    pub facts: Vec<FactNote>,
    /// Proved minimal: relaxing any one fact admits a sound mapping (each found and verified).
    pub minimal: bool,
    /// The numbers that make it bind: the refutation's reasons, link cuts.
    pub why: Vec<String>,
    /// Candidates were narrowed from the refutation's reasons.
    pub seeded: bool,
    /// For each fact of the conflict (same order): the sound mapping found with it relaxed.
    pub witnesses: Vec<Option<Mapping>>,
    /// Indices into `Facts::list`.
    pub indices: Vec<usize>,
}

/// Finds a conflict of an instance known infeasible (`oracle` has its answer for all facts).
pub fn find(oracle: &mut Oracle, outcome: &Outcome) -> Conflict {
    let facts = oracle.facts;
    let n = facts.list.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (facts.list[i].rank(), i));
    let seed = seeds(facts, outcome);
    let mut seeded = false;
    let start: Vec<usize> = if !seed.is_empty() && seed.len() < n && oracle.infeasible(&seed) {
        seeded = true;
        order.iter().copied().filter(|i| seed.contains(i)).collect()
    } else {
        let (a, b): (Vec<usize>, Vec<usize>) = order.iter().partition(|i| seed.contains(i));
        a.into_iter().chain(b).collect()
    };
    let mut c = oracle.qx(&[], false, &start);
    c.sort_by_key(|&i| (facts.list[i].rank(), i));
    let mut minimal = true;
    if !oracle.infeasible(&c) {
        // Non-monotone or undecided steps: fall back on the smallest set proved infeasible.
        minimal = false;
        c = oracle
            .smallest_proved
            .as_ref()
            .map(|k| (0..n).filter(|&i| k[i]).collect())
            .unwrap_or_else(|| (0..n).collect());
        c.sort_by_key(|&i| (facts.list[i].rank(), i));
    }
    // Check minimality: every C \ {f} feasible; drop facts that are not needed.
    let witnesses: Vec<Option<Mapping>>;
    loop {
        let keeps: Vec<Vec<bool>> =
            c.iter().map(|&f| oracle.keep_of(&c.iter().copied().filter(|&g| g != f).collect::<Vec<_>>())).collect();
        let answers = oracle.decide_many(&keeps);
        if let Some(pos) = answers.iter().position(|a| a.infeasible()) {
            c.remove(pos);
            continue;
        }
        if answers.iter().any(|a| matches!(a, Answer::Unknown)) {
            minimal = false;
        }
        witnesses = answers
            .into_iter()
            .map(|a| match a {
                Answer::Feasible(m, _) => Some(m),
                _ => None,
            })
            .collect();
        break;
    }
    let keep = oracle.keep_of(&c);
    let reasons = match oracle.decide(&keep) {
        Answer::Infeasible(r) => r,
        _ => vec![],
    };
    let inst = facts.instance(&keep).ok();
    let mut why = reasons;
    if let Some(inst) = &inst {
        why.extend(cuts(facts, inst, &c));
    }
    let notes = c
        .iter()
        .zip(&witnesses)
        .map(|(&i, w)| {
            let f = &facts.list[i];
            FactNote {
                fact: f.clone(),
                kind: f.kind(),
                subjects: facts.subjects(f),
                message: facts.describe(f),
                witness: match (w, &inst) {
                    (Some(m), Some(inst)) => witness(facts, inst, f, m, &oracle.opts),
                    _ => None,
                },
            }
        })
        .collect();
    Conflict { facts: notes, minimal, why, seeded, witnesses, indices: c }
}

/// Facts about the objects a refutation names (with their synchronous ancestors and their
/// nodes), and every bandwidth; empty when the refutation names no object.
fn seeds(facts: &Facts, outcome: &Outcome) -> Vec<usize> {
    let (app, cluster) = (facts.app, facts.cluster);
    let an = Analysis::new(app, cluster, facts.fix);
    let mut objs: BTreeSet<ObjectId> = BTreeSet::new();
    for (o, cause) in &an.presolve.emptied {
        objs.insert(*o);
        match cause {
            Cause::KeepUp { input, requirement, .. } => {
                objs.insert(an.modules[*input]);
                match requirement.map(|ri| &app.requirements[ri]) {
                    Some(Requirement::MinFrequency { group, .. }) => {
                        objs.extend(app.group(*group).objects.iter().copied())
                    }
                    Some(Requirement::MaxLatency { path, .. }) => objs.extend(path.iter().copied()),
                    None => {}
                }
            }
            Cause::Requirement { requirement, .. } => match &app.requirements[*requirement] {
                Requirement::MinFrequency { group, .. } => objs.extend(app.group(*group).objects.iter().copied()),
                Requirement::MaxLatency { path, .. } => objs.extend(path.iter().copied()),
            },
            Cause::Loop { requirement, cycle, .. } => {
                match &app.requirements[*requirement] {
                    Requirement::MinFrequency { group, .. } => objs.extend(app.group(*group).objects.iter().copied()),
                    Requirement::MaxLatency { path, .. } => objs.extend(path.iter().copied()),
                }
                // The loop's members and the filters on its edges (their placements set the transfers).
                for (k, &m) in cycle.iter().enumerate() {
                    let prev = cycle[(k + cycle.len() - 1) % cycle.len()];
                    objs.insert(an.modules[m]);
                    for x in an.inputs[m].iter().filter(|x| x.source == prev) {
                        for &e in x.paths.iter().flatten() {
                            let (s, d) = app.graph.edge_endpoints(e).expect("edge");
                            objs.insert(s);
                            objs.insert(d);
                        }
                    }
                }
            }
            Cause::Route { edge, .. } => {
                let (s, d) = app.graph.edge_endpoints(*edge).expect("edge");
                objs.insert(s);
                objs.insert(d);
            }
        }
    }
    for o in app.graph.node_indices() {
        if an.domain[o.index()].is_empty() {
            objs.insert(o);
        }
    }
    // Counting reasons and diagnostics name groups and objects.
    let mut words: Vec<String> = outcome.reasons.clone();
    if let Some(r) = &outcome.report {
        words.extend(r.diagnostics.iter().filter(|d| d.kind.is_error()).flat_map(|d| d.subjects.clone()));
    }
    for text in &words {
        for tok in text.split(|c: char| !(c.is_alphanumeric() || "_-.[]".contains(c))) {
            let tok = tok.trim_end_matches('.');
            if tok.is_empty() {
                continue;
            }
            if let Some(o) = app.find_object(tok) {
                objs.insert(o);
            } else if let Some(g) = app.find_group(tok) {
                objs.extend(app.group(g).objects.iter().copied());
            }
        }
    }
    if objs.is_empty() {
        return vec![];
    }
    // Synchronous ancestors set the paces and rates.
    let mut stack: Vec<usize> = objs.iter().filter_map(|o| an.module_of[o.index()]).collect();
    let mut seen: BTreeSet<usize> = stack.iter().copied().collect();
    while let Some(mi) = stack.pop() {
        for x in &an.inputs[mi] {
            if seen.insert(x.source) {
                stack.push(x.source);
                objs.insert(an.modules[x.source]);
            }
        }
    }
    // Nodes those objects may use, ignoring the presolve (which used the facts themselves).
    let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
    for &o in &objs {
        let obj = app.object(o);
        let g = app.group(obj.group);
        for (n, node) in cluster.nodes.iter().enumerate() {
            let typed = obj.costs().is_none_or(|c| c.texec.on(&node.processor).is_some());
            let allowed = g.allowed_nodes.as_ref().is_none_or(|a| a.contains(&node.name));
            let pinned = g.pins.as_ref().is_none_or(|p| p[obj.index] == node.name);
            let fixed = facts.fix.and_then(|f| f.placement[o.index()]).is_none_or(|p| p.node.ix() == n);
            if typed && allowed && pinned && fixed {
                nodes.insert(NodeId(n as u32));
            }
        }
    }
    let touches = |v: Vec<ObjectId>| v.iter().any(|o| objs.contains(o));
    (0..facts.list.len())
        .filter(|&i| match &facts.list[i] {
            Fact::Cpus { node } | Fact::Attachment { node, .. } => nodes.contains(node),
            Fact::Bandwidth { .. } => true,
            f => touches(facts.objects(f)),
        })
        .collect()
}

/// Link cuts: a node where objects are fixed (only one node left to them) exchanges edges with
/// objects elsewhere; at their lowest rates those edges need more than the node's links carry.
fn cuts(facts: &Facts, inst: &Instance, conflict: &[usize]) -> Vec<String> {
    use super::facts::{fold, mbs};
    if !conflict.iter().any(|&i| matches!(facts.list[i], Fact::Bandwidth { .. })) {
        return vec![];
    }
    let (app, cluster) = (&inst.app, &inst.cluster);
    let an = Analysis::new(app, cluster, inst.fix.as_ref());
    let mut out = Vec::new();
    let mut pinned: std::collections::BTreeMap<NodeId, Vec<ObjectId>> = Default::default();
    for o in app.graph.node_indices() {
        if let [n] = an.domain[o.index()][..] {
            pinned.entry(n).or_default().push(o);
        }
    }
    for (&n, here) in &pinned {
        let node = cluster.node(n);
        if node.networks.iter().any(|&k| cluster.network(k).bandwidth >= super::facts::RELAXED_BANDWIDTH) {
            continue;
        }
        for recv in [true, false] {
            let mut edges: Vec<(f64, String, bool)> = Vec::new();
            let mut here = here.clone();
            here.sort_by(|&a, &b| crate::report::natural(&app.object(a).name, &app.object(b).name));
            for &o in &here {
                let dir = if recv { petgraph::Direction::Incoming } else { petgraph::Direction::Outgoing };
                for e in app.graph.edges_directed(o, dir) {
                    use petgraph::visit::EdgeRef;
                    let other = if recv { e.source() } else { e.target() };
                    if here.contains(&other) {
                        continue;
                    }
                    let bw = e.weight().volume * an.rate_lo[e.id().index()];
                    if bw <= 0.0 {
                        continue;
                    }
                    let could_share = an.domain[other.index()].contains(&n);
                    edges.push((bw, app.edge_name(e.id()), could_share));
                }
            }
            if edges.is_empty() {
                continue;
            }
            edges.sort_by(|a, b| crate::report::natural(&a.1, &b.1));
            let caps: Vec<(String, f64)> = node
                .networks
                .iter()
                .map(|&k| (cluster.network(k).name.clone(), cluster.network(k).bandwidth))
                .collect();
            let total_cap: f64 = caps.iter().map(|c| c.1).sum();
            let mut bws: Vec<f64> = edges.iter().map(|e| e.0).collect();
            bws.sort_by(f64::total_cmp);
            let uniform = bws.iter().all(|&b| (b - bws[0]).abs() <= 1e-9 * bws[0]);
            let fit = if uniform {
                caps.iter().map(|c| (c.1 * (1.0 + verify::EPS) / bws[0]).floor() as usize).sum::<usize>()
            } else {
                let mut acc = 0.0;
                bws.iter()
                    .take_while(|&&b| {
                        acc += b;
                        acc <= total_cap * (1.0 + verify::EPS)
                    })
                    .count()
            };
            if fit >= edges.len() {
                continue;
            }
            let names: Vec<&str> = here.iter().map(|&o| app.object(o).name.as_str()).collect();
            let share = edges.iter().filter(|e| e.2).count();
            let each = if uniform {
                format!("of at least {} each", mbs(bws[0]))
            } else {
                format!("of at least {} to {}", mbs(bws[0]), mbs(bws[bws.len() - 1]))
            };
            let list: Vec<String> = edges.iter().map(|e| e.1.clone()).collect();
            let links: Vec<String> = caps
                .iter()
                .map(|(k, c)| {
                    if uniform {
                        format!("{k} {} (room for {})", mbs(*c), (c * (1.0 + verify::EPS) / bws[0]).floor())
                    } else {
                        format!("{k} {}", mbs(*c))
                    }
                })
                .collect();
            out.push(format!(
                "{} ({} fixed there) {} {} edge{} {each} ({}); its links carry {}: at most {fit} of them{}",
                node.name,
                fold(&names),
                if recv { "receives" } else { "sends" },
                edges.len(),
                if edges.len() == 1 { "" } else { "s" },
                shorten(&list),
                links.join(", "),
                if share > 0 {
                    format!(", so at least {} must be local (both ends on {})", edges.len() - fit, node.name)
                } else {
                    String::new()
                }
            ));
        }
    }
    out
}

/// A long list cut to its first entries.
fn shorten(list: &[String]) -> String {
    if list.len() <= 4 {
        list.join(", ")
    } else {
        format!("{}, ... {} more", list[..3].join(", "), list.len() - 3)
    }
}

/// What a mapping that is sound with fact `f` relaxed does to `f`.
fn witness(facts: &Facts, inst: &Instance, f: &Fact, m: &Mapping, opts: &SolveOptions) -> Option<String> {
    let (app, cluster) = (facts.app, facts.cluster);
    match f {
        Fact::Pin { object, .. } | Fact::Fixed { object } => {
            return Some(format!(
                "with it relaxed, a sound mapping puts {} on {}",
                app.object(*object).name,
                cluster.node(m.node_of(*object)).name
            ));
        }
        Fact::Route { connection } => {
            let nets: BTreeSet<String> = app.connections[connection.ix()]
                .edges
                .iter()
                .map(|&e| match m.route(e) {
                    crate::model::Route::Net(k) => cluster.network(k).name.clone(),
                    _ => "local".into(),
                })
                .collect();
            return Some(format!(
                "with it relaxed, a sound mapping routes {} on {}",
                app.connections[connection.ix()].name,
                nets.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        _ => {}
    }
    let r = verify::check(&inst.app, &inst.cluster, m, &opts.perf);
    let subjects = facts.subjects(f);
    let errors: Vec<&verify::Diagnostic> = r.diagnostics.iter().filter(|d| d.kind.is_error()).collect();
    let best = errors.iter().find(|d| d.subjects.iter().any(|s| subjects.contains(s))).or(errors.first())?;
    let mut msg = best.message.clone();
    if msg.chars().count() > 320 {
        msg = msg.chars().take(300).collect::<String>() + " ...";
    }
    Some(format!("the mapping found with it relaxed breaks it: {msg}"))
}
