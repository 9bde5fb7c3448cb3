//! The verifier: turns the performance model's prediction into diagnostics and a verdict.
//!
//! Owns: the one definition of a *sound* mapping (ARCHITECTURE.md, "Soundness"): a mapping is
//! sound when it has no error diagnostic of these kinds:
//! - `placement`: a module outside its allowed nodes or pin, a module on a processor type its
//!   description gives no cost for, an edge routed on a network one of its nodes is not on, or
//!   between nodes that share no network;
//! - `cpu-overload`: a module the CPU allocation leaves no share of a CPU (LD_c = 0), or whose
//!   frequency CPU concurrency lowers below the one the synchronisation analysis gives: a
//!   sound mapping keeps the application's performance level (CP-mapping paper, Section 1);
//!   with a CPU headroom H < 1 (`perf::Headroom`), also a CPU busier than H over an iteration;
//! - `buffer-overflow`: T_cexec(m) > k x T_it(i) for a synchronous input i of m (k = gather
//!   ratio on the way, 1 without one) (Section IV.B.2, last paragraph);
//! - `network-contention`: bw_s(n, net) > H x BW(net) or bw_r(n, net) > H x BW(net) (eq 9–10;
//!   link headroom H = 1 by default);
//! - `unstable-schedule`: the ordering of mixed cycles does not settle (Section IV.B.2);
//! - `requirement`: a module group below its minimum frequency, or a path above its maximum
//!   latency (eq 11).
//!
//! Warnings (`rate-mismatch`, `approximate-cycle`, `order-hypothesis`) inform but do not change
//! the verdict.
//! This module shares only the model's formulas (`perf`) with the rest of the pipeline.

use crate::model::{Application, Cluster, Mapping, ObjectId, Requirement, Route};
use crate::perf::{self, Prediction, Schedule};
use std::collections::BTreeMap;

/// Relative slack for comparing computed times and rates (floating-point noise only).
pub const EPS: f64 = 1e-9;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Placement,
    CpuOverload,
    BufferOverflow,
    NetworkContention,
    UnstableSchedule,
    Requirement,
    RateMismatch,
    ApproximateCycle,
    OrderHypothesis,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Placement => "placement",
            Kind::CpuOverload => "cpu-overload",
            Kind::BufferOverflow => "buffer-overflow",
            Kind::NetworkContention => "network-contention",
            Kind::UnstableSchedule => "unstable-schedule",
            Kind::Requirement => "requirement",
            Kind::RateMismatch => "rate-mismatch",
            Kind::ApproximateCycle => "approximate-cycle",
            Kind::OrderHypothesis => "order-hypothesis",
        }
    }
    pub fn is_error(self) -> bool {
        !matches!(self, Kind::RateMismatch | Kind::ApproximateCycle | Kind::OrderHypothesis)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub kind: Kind,
    pub message: String,
    /// Names of the objects, nodes, networks and connections involved.
    pub subjects: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Sound,
    Unsound,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub verdict: Verdict,
    /// None when costs are missing for a placement (see the placement diagnostics).
    pub prediction: Option<Prediction>,
    pub diagnostics: Vec<Diagnostic>,
    /// eq 11 for every latency requirement's path, seconds, in requirement order.
    pub path_latencies: Vec<(String, f64)>,
    /// The headroom the mapping was judged with.
    pub headroom: perf::Headroom,
}

/// `a <= b` up to the verifier's tolerance.
pub fn le(a: f64, b: f64) -> bool {
    a <= b * (1.0 + EPS) + 1e-15
}

fn ms(s: f64) -> String {
    if s.is_finite() {
        format!("{:.3} ms", s * 1e3).replace(".000 ms", " ms")
    } else {
        "infinite".into()
    }
}

fn mbs(b: f64) -> String {
    format!("{:.3} MB/s", b / 1e6)
}

/// Two bandwidths, with enough digits that the first visibly exceeds the second.
fn mbs_over(total: f64, cap: f64) -> (String, String) {
    let mut d = 3;
    while d < 9 && format!("{:.*}", d, total / 1e6) == format!("{:.*}", d, cap / 1e6) {
        d += 1;
    }
    (format!("{:.*} MB/s", d, total / 1e6), format!("{:.*} MB/s", d, cap / 1e6))
}

/// Checks a complete mapping.
pub fn check(app: &Application, cluster: &Cluster, mapping: &Mapping, opts: &perf::Options) -> Report {
    check_with(app, cluster, mapping, opts, None, false)
}

/// `check` for searches that judge many mappings of one instance: allowed nodes are resolved
/// once, and `terse` reports leave error messages empty and warnings out (the formatting was a
/// third of a check at 3,000 modules, the allowed-name lookups a seventh).
pub struct Checker<'a> {
    app: &'a Application,
    cluster: &'a Cluster,
    opts: &'a perf::Options,
    /// Per group with allowed nodes: whether each node is allowed.
    allowed: Vec<Option<Vec<bool>>>,
}

impl<'a> Checker<'a> {
    pub fn new(app: &'a Application, cluster: &'a Cluster, opts: &'a perf::Options) -> Checker<'a> {
        // Node names to indices once: a scan of each group's list per node was 6 % of a
        // 3,000-module squeeze (a checker is made per walk and per stack pass).
        let index: std::collections::HashMap<&str, usize> =
            cluster.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
        let allowed = app
            .groups
            .iter()
            .map(|g| {
                g.allowed_nodes.as_ref().map(|a| {
                    let mut ok = vec![false; cluster.nodes.len()];
                    for i in a.iter().filter_map(|x| index.get(x.as_str())) {
                        ok[*i] = true;
                    }
                    ok
                })
            })
            .collect();
        Checker { app, cluster, opts, allowed }
    }

    /// The verdict, the errors' kinds and subjects, and the prediction of `check`; messages
    /// empty, warnings left out. Same verdict as `check`.
    pub fn terse(&self, mapping: &Mapping) -> Report {
        check_with(self.app, self.cluster, mapping, self.opts, Some(&self.allowed), true)
    }

    /// `check` itself.
    pub fn full(&self, mapping: &Mapping) -> Report {
        check_with(self.app, self.cluster, mapping, self.opts, Some(&self.allowed), false)
    }
}

/// A diagnostic's message, unless `quiet`.
fn msg(quiet: bool, f: impl FnOnce() -> String) -> String {
    if quiet {
        String::new()
    } else {
        f()
    }
}

fn check_with(
    app: &Application,
    cluster: &Cluster,
    mapping: &Mapping,
    opts: &perf::Options,
    allowed: Option<&[Option<Vec<bool>>]>,
    q: bool,
) -> Report {
    let mut d = Vec::new();
    placement(app, cluster, mapping, &mut d, allowed, q);
    let prediction = match perf::predict(app, cluster, mapping, opts) {
        Ok(p) => Some(p),
        Err(missing) => {
            for m in missing {
                let o = app.object(m.object);
                let node = cluster.node(m.node);
                d.push(Diagnostic {
                    kind: Kind::Placement,
                    message: msg(q, || {
                        format!(
                            "{} runs on {} ({}), but its description gives no texec/load for processor type {}",
                            o.name, node.name, node.processor, node.processor
                        )
                    }),
                    subjects: vec![o.name.clone(), node.name.clone()],
                });
            }
            None
        }
    };
    let mut path_latencies = Vec::new();
    if let Some(p) = &prediction {
        model_diagnostics(app, cluster, mapping, p, &mut d, opts.headroom, q);
        requirements(app, cluster, mapping, p, &mut d, &mut path_latencies, q);
    }
    let verdict = if d.iter().any(|x| x.kind.is_error()) { Verdict::Unsound } else { Verdict::Sound };
    Report { verdict, prediction, diagnostics: d, path_latencies, headroom: opts.headroom }
}

fn placement(
    app: &Application,
    cluster: &Cluster,
    mapping: &Mapping,
    d: &mut Vec<Diagnostic>,
    resolved: Option<&[Option<Vec<bool>>]>,
    q: bool,
) {
    for (gi, g) in app.groups.iter().enumerate() {
        for (i, &o) in g.objects.iter().enumerate() {
            let n = mapping.node_of(o);
            let node = &cluster.node(n).name;
            let name = &app.object(o).name;
            if let Some(allowed) = &g.allowed_nodes {
                let ok = match resolved.and_then(|r| r[gi].as_ref()) {
                    Some(r) => r[n.ix()],
                    None => allowed.contains(node),
                };
                if !ok {
                    d.push(Diagnostic {
                        kind: Kind::Placement,
                        message: msg(q, || {
                            format!("{name} is on {node}, outside its allowed nodes ({})", allowed.join(", "))
                        }),
                        subjects: vec![name.clone(), node.clone()],
                    });
                }
            }
            if let Some(pins) = &g.pins {
                if &pins[i] != node {
                    d.push(Diagnostic {
                        kind: Kind::Placement,
                        message: msg(q, || format!("{name} is on {node} but is pinned to {}", pins[i])),
                        subjects: vec![name.clone(), node.clone()],
                    });
                }
            }
        }
    }
    // Routes, reported once per (connection, network or problem).
    let mut bad: BTreeMap<(String, String), (usize, String, Vec<String>)> = BTreeMap::new();
    for e in app.graph.edge_indices() {
        let (s, t) = app.graph.edge_endpoints(e).expect("edge");
        let (ns, nt) = (mapping.node_of(s), mapping.node_of(t));
        let cname = || app.connections[app.graph[e].connection.ix()].name.clone();
        // One entry per (connection, problem): a count, the first edge's message and subjects.
        let mut note = |problem: String, msg: &dyn Fn() -> String, names: [&str; 2]| {
            let c = cname();
            let subjects = vec![c.clone(), names[0].to_string(), names[1].to_string()];
            bad.entry((c, problem)).or_insert_with(|| (0, msg(), subjects)).0 += 1;
        };
        let (a, b) = (&cluster.node(ns).name, &cluster.node(nt).name);
        match mapping.route(e) {
            Route::Net(net) => {
                let k = &cluster.network(net).name;
                for n in [ns, nt] {
                    if !cluster.on_network(n, net) {
                        let node = &cluster.node(n).name;
                        note(
                            format!("{k}-{node}"),
                            &|| format!("{} uses network {k}, but node {node} is not on it", app.edge_name(e)),
                            [k, node],
                        );
                    }
                }
            }
            Route::Unreachable => note(
                format!("unreachable {a}-{b}"),
                &|| format!("{}: nodes {a} and {b} share no network", app.edge_name(e)),
                [a, b],
            ),
            // A mapping built in memory may say "local" for an edge between two nodes (files
            // cannot): as unsound as an unreachable pair.
            Route::Local if ns != nt => note(
                format!("local {a}-{b}"),
                &|| format!("{}: routed as local, but its ends are on nodes {a} and {b}", app.edge_name(e)),
                [a, b],
            ),
            Route::Local => {}
        }
    }
    for (_, (n, msg, subjects)) in bad {
        let message = if n > 1 { format!("{msg} ({n} edges of this connection alike)") } else { msg };
        d.push(Diagnostic { kind: Kind::Placement, message, subjects });
    }
}

fn model_diagnostics(
    app: &Application,
    cluster: &Cluster,
    _mapping: &Mapping,
    p: &Prediction,
    d: &mut Vec<Diagnostic>,
    headroom: perf::Headroom,
    q: bool,
) {
    let name = |o: ObjectId| app.object(o).name.clone();
    // cpu-overload: a module starved (LD_c = 0), or slowed by CPU concurrency so much that it
    // paces itself (a predecessor, a member of a synchronous cycle or of a lockstep MPI group)
    // below the frequency the synchronisation analysis gives (T_it > T_it with T_cexec = T_exec).
    // Per object: its synchronous cycle (index into p.cycles), and whether it is in a cycle or
    // a lockstep group.
    let mut cycle_of: Vec<Option<usize>> = vec![None; app.graph.node_count()];
    for (c, members) in p.cycles.iter().enumerate() {
        for &o in members {
            cycle_of[o.index()] = Some(c);
        }
    }
    let mut cyclic: Vec<bool> = cycle_of.iter().map(Option::is_some).collect();
    for &o in p.lockstep.iter().flatten() {
        cyclic[o.index()] = true;
    }
    let in_cycle = |o: ObjectId| cyclic[o.index()];
    let mut lowered = false;
    // Modules per node, once (a node may hold thousands: lists in messages are capped); a
    // vector by node, where a BTreeMap's lookups were a tenth of a 3,000-module squeeze.
    let mut on_node: Vec<Vec<usize>> = vec![Vec::new(); cluster.nodes.len()];
    for (i, m) in p.modules.iter().enumerate() {
        on_node[m.node.ix()].push(i);
    }
    const LISTED: usize = 8;
    for (i, m) in p.modules.iter().enumerate() {
        let node = cluster.node(m.node);
        let others = || -> Vec<String> {
            on_node[m.node.ix()]
                .iter()
                .filter(|&&j| j != i)
                .take(LISTED + 1)
                .map(|&j| name(p.modules[j].object))
                .collect()
        };
        let count_others = on_node[m.node.ix()].len() - 1;
        let listed_others = |o: &[String]| -> String {
            if count_others <= LISTED {
                o.join(", ")
            } else {
                format!("{} and {} more", o[..LISTED].join(", "), count_others - LISTED)
            }
        };
        if m.ldc <= 0.0 {
            let others = others();
            d.push(Diagnostic {
                kind: Kind::CpuOverload,
                message: msg(q, || {
                    format!(
                        "{} gets no CPU share on {} ({} CPUs): they are saturated by {}",
                        name(m.object),
                        node.name,
                        node.cpus,
                        listed_others(&others)
                    )
                }),
                subjects: std::iter::once(name(m.object))
                    .chain(std::iter::once(node.name.clone()))
                    .chain(others)
                    .collect(),
            });
            lowered = true;
            continue;
        }
        let paces_itself = p.sync_inputs[i].is_empty() || in_cycle(m.object);
        if paces_itself && !le(m.tit, m.tit_sync) && !le(m.tcexec, m.texec) {
            let others = others();
            d.push(Diagnostic {
                kind: Kind::CpuOverload,
                message: msg(q, || format!(
                    "{} runs at {:.3} Hz instead of {:.3} Hz: on {} ({} CPUs) it shares a CPU with {} and gets {:.1} % of it (LD {:.2}), so T_cexec = {} > T_exec = {}",
                    name(m.object), m.frequency(), 1.0 / m.tit_sync, node.name, node.cpus,
                    {
                        let same: Vec<usize> = on_node[m.node.ix()].iter().copied().filter(|&j| j != i && p.modules[j].cpu == m.cpu).collect();
                        let names: Vec<String> = same.iter().take(LISTED).map(|&j| name(p.modules[j].object)).collect();
                        if same.len() > LISTED { format!("{} and {} more", names.join(", "), same.len() - LISTED) } else { names.join(", ") }
                    },
                    m.ldc * 100.0, m.ld, ms(m.tcexec), ms(m.texec)
                )),
                subjects: std::iter::once(name(m.object)).chain(std::iter::once(node.name.clone())).chain(others).collect(),
            });
            lowered = true;
        }
    }
    let _ = lowered;
    for (i, m) in p.modules.iter().enumerate() {
        if m.ldc <= 0.0 {
            continue; // reported as cpu-overload
        }
        let mut overflow = false;
        for x in &p.sync_inputs[i] {
            let src = &p.modules[x.source];
            if !le(m.tcexec, x.ratio * src.tit) {
                overflow = true;
                let per = if x.ratio != 1.0 {
                    format!("{} x T_it = {}", x.ratio, ms(x.ratio * src.tit))
                } else {
                    format!("T_it = {}", ms(src.tit))
                };
                d.push(Diagnostic {
                    kind: Kind::BufferOverflow,
                    message: msg(q, || {
                        format!(
                            "{} (T_cexec = {}) is slower than its FIFO input {} ({}): messages pile up on {}",
                            name(m.object),
                            ms(m.tcexec),
                            name(src.object),
                            per,
                            cluster.node(m.node).name
                        )
                    }),
                    subjects: vec![name(m.object), name(src.object)],
                });
            }
        }
        if !overflow && !q {
            for x in &p.sync_inputs[i] {
                let src = &p.modules[x.source];
                if cycle_of[m.object.index()].is_some() && cycle_of[m.object.index()] == cycle_of[src.object.index()] {
                    continue;
                }
                if !le(m.tit, x.ratio * src.tit) && src.tit.is_finite() {
                    d.push(Diagnostic {
                        kind: Kind::RateMismatch,
                        message: msg(q, || format!("{} sends every {} but {} takes one message every {} (paced by a slower input): the FIFO between them grows", name(src.object), ms(x.ratio * src.tit), name(m.object), ms(m.tit))),
                        subjects: vec![name(m.object), name(src.object)],
                    });
                }
            }
        }
    }
    if headroom.cpu < 1.0 {
        cpu_headroom(app, cluster, p, headroom.cpu, d, q);
    }
    // Headroom: the links' usable capacity is a share of their bandwidth.
    let share = headroom.link.min(1.0);
    for l in &p.links {
        let cap = l.capacity * share;
        for (dir, total, edges) in [("sends", l.send, &l.send_edges), ("receives", l.recv, &l.recv_edges)] {
            if le(total, cap) {
                continue;
            }
            let mut per: BTreeMap<String, f64> = BTreeMap::new();
            for &e in edges {
                *per.entry(app.connections[app.graph[e].connection.ix()].name.clone()).or_default() +=
                    app.graph[e].volume * p.edge_rate[e.index()];
            }
            let parts: Vec<String> = per.iter().map(|(c, b)| format!("{c} {}", mbs(*b))).collect();
            let (node, net) = (&cluster.node(l.node).name, &cluster.network(l.network).name);
            let mut subjects = vec![node.clone(), net.clone()];
            subjects.extend(per.keys().cloned());
            let (t, c) = mbs_over(total, cap);
            let limit = if share < 1.0 {
                format!("above {c}, the {} % headroom of its {}", pct(share), mbs(l.capacity))
            } else {
                format!("above its {c}")
            };
            d.push(Diagnostic {
                kind: Kind::NetworkContention,
                message: msg(q, || format!("{node} {dir} {t} on {net}, {limit} ({})", parts.join(", "))),
                subjects,
            });
        }
    }
    match &p.schedule {
        Schedule::Converged { .. } => {}
        Schedule::Unstable { modules, period } => d.push(Diagnostic {
            kind: Kind::UnstableSchedule,
            message: msg(q, || format!("the CPU allocation oscillates (period {period}) between orders of {}: their T_cexec changes from one iteration to the next", modules.iter().map(|&o| name(o)).collect::<Vec<_>>().join(", "))),
            subjects: modules.iter().map(|&o| name(o)).collect(),
        }),
        Schedule::NoConvergence { modules, iterations } => d.push(Diagnostic {
            kind: Kind::UnstableSchedule,
            message: msg(q, || format!("the CPU allocation did not settle in {iterations} iterations; modules changing rank: {}", modules.iter().map(|&o| name(o)).collect::<Vec<_>>().join(", "))),
            subjects: modules.iter().map(|&o| name(o)).collect(),
        }),
    }
    // order-hypothesis: a configuration-1 node was ordered by eq 8, which assumes its modules
    // share one T_it (Section IV.B.2); say so where the result breaks that.
    if q {
        return; // the rest are warnings
    }
    for &n in &p.eq8_nodes {
        let here: Vec<&perf::ModulePerf> = p.modules.iter().filter(|m| m.node == n).collect();
        let (lo, hi) = here.iter().fold((f64::INFINITY, 0.0f64), |(a, b), m| (a.min(m.tit), b.max(m.tit)));
        if le(hi, lo) {
            continue;
        }
        let list: Vec<String> = here.iter().map(|m| format!("{} {}", name(m.object), ms(m.tit))).collect();
        d.push(Diagnostic {
            kind: Kind::OrderHypothesis,
            message: msg(q, || format!(
                "{} holds only modules of one synchronous component, so they were ordered by eq 8 (T_exec x LD), which assumes they share one T_it; here T_it differ ({}), and eq 7 could order them otherwise",
                cluster.node(n).name,
                list.join(", ")
            )),
            subjects: std::iter::once(cluster.node(n).name.clone()).chain(here.iter().map(|m| name(m.object))).collect(),
        });
    }
    for c in &p.approximate_cycles {
        d.push(Diagnostic {
            kind: Kind::ApproximateCycle,
            message: msg(q, || format!("the synchronous cycle through {} has too many elementary cycles to list; its T_it is an upper bound (all members in sequence)", c.iter().map(|&o| name(o)).collect::<Vec<_>>().join(", "))),
            subjects: c.iter().map(|&o| name(o)).collect(),
        });
    }
}

/// A headroom share as a percentage without float noise (0.8 -> "80").
fn pct(share: f64) -> String {
    let s = format!("{:.4}", share * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Each CPU's load over an iteration, Σ LD x T_exec / T_it of the modules the allocation puts
/// on it, in (node, CPU) order, with those modules.
pub fn cpu_loads(p: &Prediction) -> BTreeMap<(crate::model::NodeId, u32), (f64, Vec<ObjectId>)> {
    let mut per: BTreeMap<(crate::model::NodeId, u32), (f64, Vec<ObjectId>)> = BTreeMap::new();
    for m in &p.modules {
        let e = per.entry((m.node, m.cpu)).or_default();
        e.0 += m.iteration_load();
        e.1.push(m.object);
    }
    per
}

/// CPU headroom: every CPU's load over an iteration stays within `share` (reported as
/// `cpu-overload`).
fn cpu_headroom(app: &Application, cluster: &Cluster, p: &Prediction, share: f64, d: &mut Vec<Diagnostic>, q: bool) {
    for ((n, cpu), (load, objects)) in cpu_loads(p) {
        if le(load, share) {
            continue;
        }
        let node = &cluster.node(n).name;
        let names: Vec<String> = objects.iter().map(|&o| app.object(o).name.clone()).collect();
        d.push(Diagnostic {
            kind: Kind::CpuOverload,
            message: msg(q, || {
                format!(
                    "CPU {cpu} of {node} is busy {:.1} % of the time ({}), above the {} % CPU headroom",
                    load * 100.0,
                    names.join(", "),
                    pct(share)
                )
            }),
            subjects: names.into_iter().chain(std::iter::once(node.clone())).collect(),
        });
    }
}

fn requirements(
    app: &Application,
    cluster: &Cluster,
    mapping: &Mapping,
    p: &Prediction,
    d: &mut Vec<Diagnostic>,
    lat: &mut Vec<(String, f64)>,
    q: bool,
) {
    for r in &app.requirements {
        match r {
            Requirement::MinFrequency { name, group, hz } => {
                for &o in &app.group(*group).objects {
                    let m = p.module(o).expect("module");
                    if !le(*hz, m.frequency()) {
                        d.push(Diagnostic {
                            kind: Kind::Requirement,
                            message: msg(q, || {
                                format!(
                                    "{name}: {} runs at {:.3} Hz (T_it = {}), below the required {:.3} Hz",
                                    app.object(o).name,
                                    m.frequency(),
                                    ms(m.tit),
                                    hz
                                )
                            }),
                            subjects: vec![name.clone(), app.object(o).name.clone()],
                        });
                    }
                }
            }
            Requirement::MaxLatency { name, path, max_s } => {
                let l = perf::path_latency(app, cluster, mapping, &p.modules, &p.module_of, path);
                lat.push((name.clone(), l));
                if !le(l, *max_s) {
                    d.push(Diagnostic {
                        kind: Kind::Requirement,
                        message: msg(q, || {
                            format!(
                                "{name}: latency of {} is {} (eq 11), above the allowed {}",
                                path.iter().map(|&o| app.object(o).name.as_str()).collect::<Vec<_>>().join(" -> "),
                                ms(l),
                                ms(*max_s)
                            )
                        }),
                        subjects: std::iter::once(name.clone())
                            .chain(path.iter().map(|&o| app.object(o).name.clone()))
                            .collect(),
                    });
                }
            }
        }
    }
}

/// What sets a module's pace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Its own execution: T_it = T_cexec (CPU-bound).
    Itself,
    /// A synchronous input (index into `Prediction::modules`) it waits for.
    Input(usize),
    /// Its synchronous cycle (index into `Prediction::cycles`), eq 5.
    Cycle(usize),
}

/// What paces module `mi` (index into `p.modules`).
pub fn pace(p: &Prediction, mi: usize) -> Pace {
    let m = &p.modules[mi];
    if let Some(c) = p.cycles.iter().position(|c| c.contains(&m.object)) {
        return Pace::Cycle(c);
    }
    match p.sync_inputs[mi].iter().find(|x| le(m.tit, x.ratio * p.modules[x.source].tit) && !le(m.tit, m.tcexec)) {
        Some(x) => Pace::Input(x.source),
        None => Pace::Itself,
    }
}

/// What sets a module's pace in a prediction: its own execution (CPU-bound), a synchronous
/// input, or its synchronous cycle. Used to explain frequency limits.
pub fn pace_reason(app: &Application, cluster: &Cluster, p: &Prediction, o: ObjectId) -> String {
    let name = |x: ObjectId| app.object(x).name.clone();
    let Some(mi) = p.module_of[o.index()] else { return format!("{} is not a module", name(o)) };
    let m = &p.modules[mi];
    match pace(p, mi) {
        Pace::Cycle(c) => {
            return format!(
                "{} is in the synchronous cycle {} (eq 5): T_it = {}",
                name(o),
                p.cycles[c].iter().map(|&x| name(x)).collect::<Vec<_>>().join(" -> "),
                ms(m.tit)
            )
        }
        Pace::Input(s) => {
            let src = &p.modules[s];
            return format!(
                "{} waits for its FIFO input {} (T_it = {}); that one is paced by: {}",
                name(o),
                name(src.object),
                ms(src.tit),
                pace_reason(app, cluster, p, src.object)
            );
        }
        Pace::Itself => {}
    }
    let node = cluster.node(m.node);
    format!(
        "{} is CPU-bound: T_exec = {} on {} ({}), the fastest it runs with no concurrency",
        name(o),
        ms(m.texec),
        node.processor,
        node.name
    )
}
