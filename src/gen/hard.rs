//! The `hard` family (`flowmap gen --family hard`): the shape of the `realistic` family
//! (pipelines with MPI rings, filters, pinned displays, two processor types, partial networks,
//! binding requirements), made adversarial. Each instance has a planted mapping that
//! `verify::check` calls sound (checked here before it is returned, and asserted by tests).
//!
//! **What makes it hard**
//! - The planted mapping is **dense**: modules are packed first-fit onto nodes, sharing CPUs
//!   wherever the CPU allocation (simulated here, node by node, with the published algorithm
//!   and the perf model's node order: eq 8 on "configuration 1" nodes, else decreasing T_I/O)
//!   still lets every self-paced module run undisturbed and every input-paced one keep up
//!   (T_exec / (1 - CPULD) <= its input's pace, to 1e-6). Neighbours are tried first (their
//!   traffic becomes local), then the display nodes and the last six nodes opened, then a new
//!   node. Compute racks start at 2 or 4 CPUs a node; racks that overflow their share of the
//!   nodes get the next CPU count up (and, when far fewer nodes than planned are used, the
//!   emptiest ones the next one down) until the packing uses 90 % (± 4 %) of the compute nodes.
//!   So the planted mapping uses almost every CPU of the nodes it uses, about 10 % of the
//!   compute nodes stay spare (`--minimize nodes` can do worse than the planted count), and a
//!   mapping that does not share CPUs often does not fit.
//! - Bandwidths are `tight` 1.02x or `feasible` 1.2x the planted mapping's busiest use per
//!   network.
//! - Requirements: `min_frequency` on about 40 % of the pipelines, 0.2–1.5 % below the planted
//!   rate (every module the required stage waits for is too slow on the slow type); path
//!   latencies 0.5–3 % above the planted eq 11 and below what a slow source allows;
//!   `allowed_nodes` on a quarter of the movable groups (the racks the planted mapping uses,
//!   sometimes one more); sources of about 15 % of the pipelines pinned to a compute node.
//! - Structure: **interaction loops** (a FIFO cycle source -> steer -> source; in visual
//!   pipelines the steering module is pinned to a display node and the source may only run on
//!   compute nodes, so the loop crosses a network and its round trip, eq 5, includes
//!   Vol / BW + L both ways); **bound simulations** whose MPI halos are so large that every ring
//!   edge must be local (all ranks on one node, allowed only on a partition of nodes with k to
//!   2k - 1 CPUs); **in-situ analysis** fed one-to-one by the simulation with the whole field
//!   (local or very expensive); greedy filters feeding broadcast filters (`_latest` -> `_fan`
//!   -> renderers); k:1 gathers; merges.
//!
//! **Greedy -> broadcast filter chains.** The perf model gives a greedy filter the frequency of
//! its destination and a broadcast the frequency of its source, which is circular for a greedy
//! filter feeding a broadcast; the generator takes the renderers' (fastest) frequency for both
//! filters when it sets bandwidths, so the planted mapping is sound whatever a frequency between
//! 0 and that one the verifier gives them.
//!
//! **Infeasible variants** (the `feasible` instance of the same size and seed with ONE change,
//! argued in the files' first lines and checked by tests from the files' numbers):
//! - `infeasible-pack`: one partition node gets k - 1 CPUs. Every ring edge of a bound
//!   simulation carries at least Vol / T_slow(source) (a sound mapping runs the source at its
//!   T_exec), more than any network's bandwidth, so a group's k ranks share a node; no two bound
//!   ranks share a CPU (u x LD + u' > 1 with u = T_exec / T_slow(source)); the partition's nodes
//!   have fewer than 2k CPUs, so each holds at most one group, and one of them now holds none:
//!   r groups, r - 1 nodes. The partition's CPUs still exceed r x k, so counting CPUs does not
//!   see it.
//! - `infeasible-cycle`: the first pipeline's `min_frequency` becomes 1 / (k x (T + C / 2)), T
//!   the fastest T_exec of the source plus the pinned steering module's, C the smallest
//!   Vol / BW + L of the two loop edges over the networks of the steering module's node (the
//!   source may not share that node); the loop's round trip is at least LB = T + C. Each member
//!   alone is fast enough, and so is the sum of their T_exec; only with the comm times is the
//!   round trip too slow.
//!
//! Module counts and node counts are exact. Deterministic: the same options give the same bytes.
//! The node simulation is only the packing's estimate: the finished planted mapping, with the
//! `tight` and the `feasible` bandwidths and the requirements, goes through `verify::check`
//! (default options) before anything is returned, whatever the kind (so every kind of one size
//! and seed comes from the same try). A construction whose final numbers (with the comm times
//! of the loops) no longer pass the node simulation, or whose planted mapping the verifier
//! does not call sound, is redone from a seed derived from the same options.

use super::realistic::{ceil3, r2, set_node_cpus, step, Conn, Edge, Grp, Head, Net, Pat, Rack, B};
use super::realistic::{CPUS, DOMAINS, FAST_T, SLOW_T};
use super::{node_name, GenRequirement, Generated};
use crate::verify::{self, Verdict};
use crate::{parse, perf, report};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Bandwidth over the planted busiest use, `feasible` kind.
pub const FEASIBLE_FACTOR: f64 = 1.2;
/// Bandwidth over the planted busiest use, `tight` kind.
pub const TIGHT_FACTOR: f64 = 1.02;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HardKind {
    /// Bandwidths 1.2x the planted mapping's busiest use.
    Feasible,
    /// 1.02x.
    Tight,
    /// A partition node too small for a bound simulation.
    InfeasiblePack,
    /// An interaction loop's required rate just above its shortest round trip.
    InfeasibleCycle,
}

impl HardKind {
    pub fn name(self) -> &'static str {
        match self {
            HardKind::Feasible => "feasible",
            HardKind::Tight => "tight",
            HardKind::InfeasiblePack => "infeasible-pack",
            HardKind::InfeasibleCycle => "infeasible-cycle",
        }
    }
    /// Whether the instance has a (planted) sound mapping.
    pub fn is_feasible(self) -> bool {
        matches!(self, HardKind::Feasible | HardKind::Tight)
    }
}

#[derive(Clone, Debug)]
pub struct HardOptions {
    pub modules: usize,
    pub nodes: usize,
    pub seed: u64,
    pub kind: HardKind,
}

/// Sizes the family can build: at least 8 modules and 4 nodes, at most 8 modules per node;
/// `infeasible-pack` needs bound simulations (at least 30 modules and 10 nodes).
pub fn check_size(modules: usize, nodes: usize, kind: HardKind) -> Result<(), String> {
    if modules < 8 || nodes < 4 {
        return Err(format!("the hard family needs --modules >= 8 and --nodes >= 4 (got {modules}, {nodes})"));
    }
    if modules > 8 * nodes {
        return Err(format!("the hard family builds at most 8 modules per node (got {modules} on {nodes})"));
    }
    if kind == HardKind::InfeasiblePack && !bound_possible(modules, nodes) {
        return Err(format!(
            "--kind infeasible-pack needs bound simulations: --modules >= 30 and --nodes >= 10 (got {modules}, {nodes})"
        ));
    }
    Ok(())
}

fn bound_possible(modules: usize, nodes: usize) -> bool {
    modules >= 30 && nodes >= 10
}

/// Tries with derived seeds before giving up (a try fails when the loops' comm times reorder a
/// node's allocation, or when `verify::check` does not call the planted mapping sound; both
/// rare).
const ATTEMPTS: u64 = 12;
/// Nodes of the recent window tried before a new node is opened.
const WINDOW: usize = 6;

pub fn generate(o: &HardOptions) -> Result<Generated, String> {
    check_size(o.modules, o.nodes, o.kind)?;
    let mut last = String::new();
    for attempt in 0..ATTEMPTS {
        let seed = if attempt == 0 { o.seed } else { o.seed ^ (attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) };
        match H::build(o, seed) {
            Ok(g) => return Ok(g),
            Err(Fail::Retry(why)) => last = why,
            Err(Fail::Error(e)) => return Err(e),
        }
    }
    Err(format!("no hard instance after {ATTEMPTS} tries: {last}"))
}

enum Fail {
    Retry(String),
    Error(String),
}

/// What the synchronisation makes of a group in the planted mapping.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// No synchronous input: runs at its own T_exec (sources outside loops, greedy-fed modules).
    SelfPaced,
    /// In an interaction loop (a synchronous cycle): one thread with the loop's other member.
    Loop,
    /// Input-paced: waits for the pipeline's source through FIFO links (ratio: gathers on the way).
    Fed(f64),
    Filter,
}

#[derive(Clone, Debug, Default)]
struct Pipe {
    src: usize,
    bcast: Option<usize>,
    steer: Option<usize>,
    /// The steering module is pinned to a display node and the source kept off display nodes.
    steer_pinned: bool,
    sim: usize,
    /// Ring edges too heavy for any network: all ranks on one partition node.
    bound: bool,
    insitu: Option<usize>,
    merge: Option<usize>,
    part: Option<usize>,
    vis: Option<usize>,
    vis_greedy: bool,
    latest: Option<usize>,
    fan: Option<usize>,
    rend: Option<usize>,
    joy: Option<usize>,
    gather: Option<(usize, u32)>,
    mon: Option<usize>,
    wall: Option<usize>,
    required: Option<usize>,
    zone: usize,
    /// The shortest pace the pipeline can have: T_fast(source) (+ T_fast(steer)), ms.
    pf: f64,
}

impl Pipe {
    /// Input-paced groups and their ratio (sim, in-situ, particles, FIFO viewer, monitor).
    fn fed(&self) -> Vec<(usize, f64)> {
        let mut v = vec![(self.sim, 1.0)];
        v.extend(self.insitu.map(|g| (g, 1.0)));
        v.extend(self.part.map(|g| (g, 1.0)));
        if !self.vis_greedy {
            v.extend(self.vis.map(|g| (g, 1.0)));
        }
        if let (Some(m), Some((_, k))) = (self.mon, self.gather) {
            v.push((m, k as f64));
        }
        v
    }
    /// The input-paced groups a fed group waits for (besides the source and the steer).
    fn fed_ancestors(&self, r: usize) -> Vec<usize> {
        let mut v = vec![];
        if r != self.sim {
            v.push(self.sim);
        }
        if Some(r) == self.vis {
            v.extend(self.part);
        }
        v
    }
}

/// Counts chosen before building a pipeline.
#[derive(Clone, Debug)]
struct Plan {
    k: usize,
    insitu: bool,
    j: usize,
    v: usize,
    mon: usize,
    wall: Option<usize>,
    steer: bool,
    bound: bool,
    fan: bool,
}

impl Plan {
    fn size(&self, walls: &[Vec<usize>]) -> usize {
        1 + self.k * (1 + self.insitu as usize)
            + self.j
            + self.v
            + self.mon
            + self.steer as usize
            + self.wall.map(|w| walls[w].len() + 1).unwrap_or(0)
    }
    /// Adds one module instance.
    fn grow(&mut self) {
        if !self.bound && !self.insitu && self.k < 32 {
            self.k += 1;
        } else if self.j < 16 {
            self.j += 1;
        } else {
            self.mon += 1;
        }
    }
}

/// A module on a node as the CPU allocation sees it (ms).
#[derive(Clone, Debug)]
struct SMod {
    /// (group, instance): declaration order, which breaks T_I/O ties.
    key: (usize, usize),
    tio: f64,
    t: f64,
    ld: f64,
    /// Thread of control: its loop, or the module itself.
    thread: usize,
    /// The pace it must keep up with (input-paced), or None: it must run undisturbed.
    limit: Option<f64>,
    /// Its synchronous component (its pipeline) when it has a synchronous input (loop and
    /// input-paced modules); None for a predecessor (self-paced).
    sync: Option<usize>,
}

/// Whether the published allocation (least-loaded CPU, LD_c = (1 - CPULD) x LD; members of a
/// loop as one thread) keeps every module on a node of `cpus` CPUs sound: self-paced and loop
/// modules undisturbed, input-paced ones keeping up. The node's order is the perf model's
/// (`perf::alloc`): on a node holding only modules of one synchronous component, none a
/// predecessor ("configuration 1"), eq 8's ascending T_exec x LD; otherwise decreasing T_I/O;
/// ties by declaration order. Near-ties of the sort key between groups are refused (the
/// verifier's rounding could order them either way). This is the packing's fast estimate;
/// the finished planted mapping is checked with `verify::check` itself (`check_planted`).
fn node_ok(mods: &[SMod], cpus: u32) -> bool {
    let mut order: Vec<&SMod> = mods.iter().collect();
    let eq8 = mods.first().and_then(|m| m.sync).is_some_and(|c| mods.iter().all(|m| m.sync == Some(c)));
    let sort_key = |m: &SMod| if eq8 { m.t * m.ld } else { -m.tio };
    order.sort_by(|a, b| sort_key(a).total_cmp(&sort_key(b)).then(a.key.cmp(&b.key)));
    for w in order.windows(2) {
        let (x, y) = (sort_key(w[0]), sort_key(w[1]));
        if w[0].key.0 != w[1].key.0 && (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) {
            return false;
        }
    }
    let c = cpus as usize;
    let mut cpuld = vec![0.0f64; c];
    let mut contrib: Vec<(usize, usize, f64)> = Vec::new();
    for m in order {
        let own = |cpu: usize, contrib: &[(usize, usize, f64)]| {
            contrib.iter().find(|x| x.0 == cpu && x.1 == m.thread).map(|x| x.2).unwrap_or(0.0)
        };
        let mut p = 0;
        for q in 1..c {
            if cpuld[q] - own(q, &contrib) < cpuld[p] - own(p, &contrib) {
                p = q;
            }
        }
        let seen = cpuld[p] - own(p, &contrib);
        let ldc = (1.0 - seen).max(0.0) * m.ld;
        let old = own(p, &contrib);
        if ldc > old {
            cpuld[p] += ldc - old;
            match contrib.iter_mut().find(|x| x.0 == p && x.1 == m.thread) {
                Some(x) => x.2 = ldc,
                None => contrib.push((p, m.thread, ldc)),
            }
        }
        if ldc <= 0.0 {
            return false;
        }
        let tcexec = m.t * m.ld / ldc;
        let ok = match m.limit {
            None => tcexec <= m.t * (1.0 + 1e-12),
            Some(l) => tcexec <= l * (1.0 - 1e-6),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// `verify::check` (default options) on the planted mapping of `g`: a retry when it is not
/// sound, with the verifier's first error.
fn check_planted(g: &Generated) -> Result<(), Fail> {
    let bug = |what: &str, e: String| Fail::Error(format!("the hard generator wrote an unreadable {what}: {e}"));
    let app = parse::application_from_str(&report::gen_app_toml(g), "app", &[])
        .map_err(|e| bug("application", e.to_string()))?;
    let cluster =
        parse::cluster_from_str(&report::gen_cluster_toml(g), "cluster").map_err(|e| bug("cluster", e.to_string()))?;
    let mapping = parse::mapping_from_str(&report::gen_mapping_toml(g), "mapping", &app, &cluster)
        .and_then(|p| p.complete(&app, &cluster, "mapping"))
        .map_err(|e| bug("mapping", e.to_string()))?;
    let r = verify::check(&app, &cluster, &mapping, &perf::Options::default());
    if r.verdict == Verdict::Sound {
        return Ok(());
    }
    let first = r.diagnostics.iter().find(|d| d.kind.is_error()).map(|d| d.message.clone()).unwrap_or_default();
    Err(Fail::Retry(format!("the planted mapping is not sound: {first}")))
}

/// A node while packing.
#[derive(Clone, Debug)]
struct ONode {
    rack: usize,
    mods: Vec<SMod>,
}

/// Rack plan before the node count is known.
#[derive(Clone, Debug)]
struct RPlan {
    ty: usize,
    cpus: u32,
    nets: Vec<usize>,
    display: bool,
    partition: bool,
    /// Nodes it should have (compute racks; spare nodes go where this is not reached).
    target: usize,
    /// Display racks: their nodes (global indices, fixed).
    display_nodes: Vec<usize>,
}

struct H {
    b: B,
    pipes: Vec<Pipe>,
    role: Vec<Role>,
    /// Pipeline of every group.
    pipe_of: Vec<usize>,
    kb: usize,
    racks: Vec<RPlan>,
    /// Current estimate of every pipeline's pace (T_it of its source), ms.
    pace: Vec<f64>,
    onodes: Vec<ONode>,
    /// Node (index into `onodes`) of every instance of every group.
    at: Vec<Vec<usize>>,
    /// Open compute and partition nodes in opening order.
    open: Vec<usize>,
    opened: Vec<usize>,
    /// Display nodes (their `onodes` index is their global index).
    display: usize,
}

/// Per-kind results of the planted mapping: bandwidths (B/s), paces (ms), edges.
struct Pass {
    bw: Vec<f64>,
    pace: Vec<f64>,
    edges: Vec<Edge>,
}

impl H {
    fn build(o: &HardOptions, seed: u64) -> Result<Generated, Fail> {
        let mut h = H {
            b: B::new(seed),
            pipes: vec![],
            role: vec![],
            pipe_of: vec![],
            kb: 0,
            racks: vec![],
            pace: vec![],
            onodes: vec![],
            at: vec![],
            open: vec![],
            opened: vec![],
            display: 0,
        };
        let display = h.b.plan_displays(o.nodes, o.modules);
        h.display = display;
        let bound_ok = bound_possible(o.modules, o.nodes);
        h.kb = if bound_ok { h.b.rng.random_range(2..=4usize) } else { 0 };
        let plans = h.plan_pipelines(o.modules, o.nodes, bound_ok);
        for (p, plan) in plans.iter().enumerate() {
            h.build_pipeline(p, plan);
        }
        h.choose_requirements();
        h.choose_types();
        h.plan_cluster(o.nodes)?;
        h.choose_zones();
        h.pack_all(o.nodes)?;
        h.finalize(o.nodes);
        h.constraints();
        if o.kind == HardKind::InfeasiblePack && h.pipes.iter().filter(|p| p.bound).count() < 2 {
            return Err(Fail::Error("too small for --kind infeasible-pack (fewer than two bound simulations)".into()));
        }
        if o.kind == HardKind::InfeasibleCycle && !h.pipes[0].steer_pinned {
            return Err(Fail::Error("too small for --kind infeasible-cycle (no wall for the first pipeline)".into()));
        }
        // Routes with the comm-free rates, then each kind's bandwidths with the loops' comm times.
        h.set_paces(None, &[]);
        h.frequencies();
        let edges = h.b.edges();
        let (routes, planned) = h.b.routes(&edges).map_err(Fail::Error)?;
        let tight = h.pass(&planned, TIGHT_FACTOR);
        let feasible = h.pass(&planned, FEASIBLE_FACTOR);
        for p in [&tight, &feasible] {
            h.pace = p.pace.clone();
            if !h.all_nodes_ok() {
                return Err(Fail::Retry("a loop's comm time reorders a node".into()));
            }
        }
        // Requirements from the tight numbers (they hold in both kinds).
        h.pace = tight.pace.clone();
        h.frequencies();
        let mut requirements = h.requirements(&tight, &planned);
        // Bound rings: heavier than any network at the slowest source.
        let top = feasible.bw.iter().copied().fold(0.0, f64::max);
        for p in 0..h.pipes.len() {
            if h.pipes[p].bound {
                let ts = h.b.groups[h.pipes[p].src].t[SLOW_T]
                    .expect("cost")
                    .max(h.b.groups[h.pipes[p].src].t[FAST_T].expect("cost"));
                h.b.groups[h.pipes[p].sim].mpi = Some((1.25 * top * ts / 1000.0).ceil());
            }
        }
        // The planted mapping, as `verify::check` sees it, in both kinds (so that every kind of
        // one size and seed is built from the same try): the packing above only estimates it.
        for p in [&tight, &feasible] {
            let g = h.b.output(String::new(), requirements.clone(), routes.clone(), &p.bw);
            check_planted(&g)?;
        }
        let pass = if o.kind == HardKind::Tight { &tight } else { &feasible };
        h.pace = pass.pace.clone();
        h.frequencies();
        let head = Head {
            family: "hard",
            kind: o.kind.name(),
            modules: o.modules,
            nodes: o.nodes,
            seed: o.seed,
            display,
            factor: if o.kind == HardKind::Tight { TIGHT_FACTOR } else { FEASIBLE_FACTOR },
            shares: "shares CPUs and ",
        };
        let cycle = (o.kind == HardKind::InfeasibleCycle).then(|| h.break_cycle(&mut requirements, &pass.bw));
        let mut g = h.b.output(head.name(), requirements, routes, &pass.bw);
        g.readme = "models/hard/README.md";
        let broken = match o.kind {
            HardKind::InfeasiblePack => Some(h.break_pack(&mut g, &pass.bw)),
            _ => cycle,
        };
        h.b.finish(&mut g, &head, broken);
        Ok(g)
    }

    // ---- application ----

    /// Module counts of every pipeline, adding up to `modules` exactly. The first pipeline is
    /// visual with an interaction loop; with `bound_ok`, the next two (and about a quarter of
    /// the rest) are bound simulations of `kb` ranks.
    fn plan_pipelines(&mut self, modules: usize, nodes: usize, bound_ok: bool) -> Vec<Plan> {
        let kcap = (modules / 3).clamp(2, 32);
        let rmax = if bound_ok { ((nodes as f64 * 0.15) as usize).max(2) } else { 0 };
        let walls = self.b.walls.clone();
        let mut wall_use = vec![0usize; walls.len()];
        let mut plans: Vec<Plan> = Vec::new();
        let mut bound = 0;
        let mut left = modules;
        while left > 0 {
            if left < 4 {
                let p = plans.last_mut().expect("the first pipeline takes at least 4 modules");
                for _ in 0..left {
                    p.grow();
                }
                break;
            }
            let p = plans.len();
            let mut b = left - 1;
            let wall = {
                let w = (0..walls.len()).filter(|&w| wall_use[w] < 2).min_by_key(|&w| (wall_use[w], w));
                match w {
                    Some(w) if (p == 0 || self.b.rng.random_bool(0.6)) && b >= walls[w].len() + 5 => Some(w),
                    _ => None,
                }
            };
            let is_bound =
                bound < rmax && (p == 1 || p == 2 || (p > 2 && self.b.rng.random_bool(0.25))) && b > self.kb + 1;
            let steer = !is_bound && (p == 0 || self.b.rng.random_bool(if wall.is_some() { 0.5 } else { 0.25 }));
            let reserve = wall.map(|w| walls[w].len() + 2).unwrap_or(0) + steer as usize;
            let k = if is_bound {
                self.kb
            } else {
                let cap = if p == 0 && bound_ok { kcap.min(8) } else { kcap };
                let ks: Vec<usize> =
                    [2, 3, 4, 6, 8, 12, 16, 24, 32].into_iter().filter(|&k| k <= cap && k + reserve <= b).collect();
                if ks.is_empty() {
                    b.saturating_sub(reserve).max(1)
                } else {
                    self.b.pick(&ks)
                }
            };
            b -= k;
            let insitu = !is_bound && (p != 0 || !bound_ok) && b >= k + reserve && self.b.rng.random_bool(0.35);
            if insitu {
                b -= k;
            }
            let mut j = 0;
            if b > reserve && self.b.rng.random_bool(0.7) {
                let js: Vec<usize> = [1, 2, 4, 8, k].into_iter().filter(|&j| j <= b - reserve && j <= 16).collect();
                if !js.is_empty() {
                    j = self.b.pick(&js);
                }
            }
            b -= j;
            let mut v = 0;
            let mut fan = false;
            if let Some(w) = wall {
                let room = b - (walls[w].len() + 1) - steer as usize;
                let vs: Vec<usize> = [1, 2, 4, j.max(1)].into_iter().filter(|&v| v <= room).collect();
                v = self.b.pick(&vs);
                b -= v + walls[w].len() + 1;
                wall_use[w] += 1;
                fan = walls[w].len() >= 2 && self.b.rng.random_bool(0.4);
            }
            if steer {
                b -= 1;
            }
            let mut mon = 0;
            if b >= 1 && self.b.rng.random_bool(0.45) {
                mon = self.b.rng.random_range(1..=2usize.min(b));
            }
            let mut plan = Plan { k, insitu, j, v, mon, wall, steer, bound: is_bound, fan };
            bound += is_bound as usize;
            let size = plan.size(&walls);
            if left - size < 4 {
                for _ in 0..left - size {
                    plan.grow();
                }
                left = 0;
            } else {
                left -= size;
            }
            plans.push(plan);
        }
        plans
    }

    /// T_exec and LD on both types: fast `fast_ms`, slow x `s` (at least `slow_at_least`).
    fn costs(
        &mut self,
        fast_ms: f64,
        ld: (f64, f64),
        s: (f64, f64),
        slow_at_least: f64,
    ) -> ([Option<f64>; 2], [Option<f64>; 2]) {
        let s = self.b.u(s.0, s.1);
        let tf = r2(fast_ms).max(0.01);
        let ts = r2((tf * s).max(slow_at_least));
        let lf = (self.b.u(ld.0, ld.1) * 100.0).round() / 100.0;
        let ls = ((lf + self.b.u(-0.05, 0.05)).clamp(0.01, 1.0) * 100.0).round() / 100.0;
        ([Some(tf), Some(ts)], [Some(lf.clamp(0.01, 1.0)), Some(ls)])
    }

    fn add(&mut self, g: Grp, p: usize, role: Role) -> usize {
        self.role.push(role);
        self.pipe_of.push(p);
        self.b.add(g)
    }

    fn build_pipeline(&mut self, p: usize, plan: &Plan) {
        let prefix = format!("{}{p}", DOMAINS[p % DOMAINS.len()]);
        let mut pipe = Pipe { wall: plan.wall, bound: plan.bound, ..Default::default() };
        let tsrc = r2(self.b.u(20.0, 80.0));
        let sf = if plan.bound { (1.02, 1.1) } else { (1.3, 2.5) };
        let (t, ld) = self.costs(tsrc, (0.3, 0.9), sf, 0.0);
        let src_role = if plan.steer { Role::Loop } else { Role::SelfPaced };
        pipe.src = self.add(Grp::module(format!("{prefix}_source"), 1, t, ld), p, src_role);
        pipe.pf = tsrc;
        if plan.steer {
            let b = self.b.u(0.1, 0.3);
            let (t, ld) = self.costs(b * tsrc, (0.2, 0.6), (1.3, 2.5), 0.0);
            pipe.pf += t[FAST_T].expect("cost");
            let steer = self.add(Grp::module(format!("{prefix}_steer"), 1, t, ld), p, Role::Loop);
            let state = self.b.u(20e3, 200e3);
            self.conn(pipe.src, steer, false, Pat::OneToOne, state);
            let command = self.b.u(1e3, 16e3);
            self.conn(steer, pipe.src, false, Pat::OneToOne, command);
            pipe.steer = Some(steer);
            pipe.steer_pinned = plan.wall.is_some();
        }
        let pace = pipe.pf;
        let input = self.b.u(10e3, 500e3);
        let mut from = pipe.src;
        if self.b.rng.random_bool(0.4) {
            let f = self.add(Grp::filter(format!("{prefix}_bcast"), "broadcast", 1), p, Role::Filter);
            self.b.connect(pipe.src, f, false, input);
            pipe.bcast = Some(f);
            from = f;
        }
        let a = if plan.bound { self.b.u(0.8, 0.95) } else { self.b.u(0.55, 0.95) };
        let (t, ld) = self.costs(a * pace, (0.9, 0.99), (1.3, 2.5), 0.0);
        let mut sim = Grp::module(format!("{prefix}_sim"), plan.k, t, ld);
        if plan.k >= 2 {
            // Bound rings get their (huge) volume once the bandwidths are known.
            sim.mpi = Some(self.b.u(8e3, 512e3).round());
        }
        pipe.sim = self.add(sim, p, Role::Fed(1.0));
        self.b.connect(from, pipe.sim, false, input);
        let field = self.b.u(0.5e6, 8e6);
        if plan.insitu {
            let a = self.b.u(0.1, 0.4);
            let (t, ld) = self.costs(a * pace, (0.3, 0.7), (1.3, 2.5), 0.0);
            let g = self.add(Grp::module(format!("{prefix}_insitu"), plan.k, t, ld), p, Role::Fed(1.0));
            self.conn(pipe.sim, g, false, Pat::OneToOne, field / plan.k as f64);
            pipe.insitu = Some(g);
        }
        let mut last = pipe.sim;
        let mut last_vol = field / plan.k as f64;
        if plan.j > 0 {
            let a = self.b.u(0.2, 0.9);
            let (t, ld) = self.costs(a * pace, (0.5, 0.95), (1.3, 2.5), 0.0);
            let part = self.add(Grp::module(format!("{prefix}_particles"), plan.j, t, ld), p, Role::Fed(1.0));
            if plan.k > 1 && self.b.rng.random_bool(0.3) {
                let m = self.add(Grp::filter(format!("{prefix}_merge"), "merge", 1), p, Role::Filter);
                self.b.connect(pipe.sim, m, false, last_vol);
                self.b.connect(m, part, false, field / plan.j as f64);
                pipe.merge = Some(m);
            } else {
                self.b.connect(pipe.sim, part, false, last_vol);
            }
            pipe.part = Some(part);
            last = part;
            last_vol = self.b.u(0.1e6, 4e6) / plan.j as f64;
        }
        if let Some(w) = plan.wall {
            pipe.vis_greedy = self.b.rng.random_bool(0.3);
            let (t, ld) = if pipe.vis_greedy {
                let own = self.b.u(0.4, 1.5) * pace;
                self.costs(own, (0.5, 0.95), (1.3, 2.5), 0.0)
            } else {
                let a = self.b.u(0.2, 0.9);
                self.costs(a * pace, (0.5, 0.95), (1.3, 2.5), 0.0)
            };
            let role = if pipe.vis_greedy { Role::SelfPaced } else { Role::Fed(1.0) };
            let vis = self.add(Grp::module(format!("{prefix}_viewer"), plan.v, t, ld), p, role);
            self.b.connect(last, vis, pipe.vis_greedy, last_vol);
            pipe.vis = Some(vis);
            let wall = self.b.walls[w].clone();
            let mut tr = [None, None];
            let mut lr = [None, None];
            let dt = self.b.display_ty;
            tr[dt] = Some(r2(self.b.u(8.0, 40.0)));
            lr[dt] = Some((self.b.u(0.6, 0.95) * 100.0).round() / 100.0);
            let mut rend = Grp::module(format!("{prefix}_renderer"), wall.len(), tr, lr);
            rend.pin = Some(wall.clone());
            let rend = self.add(rend, p, Role::SelfPaced);
            let render = self.b.u(0.5e6, 6e6);
            if plan.fan {
                let l = self.add(Grp::filter(format!("{prefix}_latest"), "greedy", 1), p, Role::Filter);
                let f = self.add(Grp::filter(format!("{prefix}_fan"), "broadcast", 1), p, Role::Filter);
                self.b.connect(vis, l, false, render / plan.v as f64);
                self.b.connect(l, f, false, render);
                self.b.connect(f, rend, false, render);
                pipe.latest = Some(l);
                pipe.fan = Some(f);
            } else {
                self.b.connect(vis, rend, true, render / plan.v as f64);
            }
            let jt = self.b.u(1.0, 5.0);
            let (t, ld) = self.costs(jt, (0.01, 0.05), (1.3, 2.5), 0.0);
            let mut joy = Grp::module(format!("{prefix}_joypad"), 1, t, ld);
            let slot = self.pipes.iter().filter(|q| q.wall == Some(w)).count();
            joy.pin = Some(vec![wall[slot % wall.len()]]);
            let joy = self.add(joy, p, Role::SelfPaced);
            let v1 = self.b.u(32.0, 512.0);
            self.b.connect(joy, pipe.src, true, v1);
            let v2 = self.b.u(64.0, 1024.0);
            self.b.connect(joy, rend, true, v2);
            if let Some(s) = pipe.steer {
                // The interaction loop's console: another wall node than the joypad's.
                self.b.groups[s].pin = Some(vec![wall[(slot + 1) % wall.len()]]);
            }
            pipe.rend = Some(rend);
            pipe.joy = Some(joy);
        }
        if plan.mon > 0 {
            let k = self.b.rng.random_range(2..=8u32);
            let gat = self.add(Grp::filter(format!("{prefix}_gather"), "gather", k), p, Role::Filter);
            let vol = self.b.u(10e3, 1e6);
            self.b.connect(pipe.sim, gat, false, vol);
            let a = self.b.u(0.2, 0.9);
            let (t, ld) = self.costs(a * k as f64 * pace, (0.3, 0.9), (1.3, 2.5), 0.0);
            let mon = self.add(Grp::module(format!("{prefix}_monitor"), plan.mon, t, ld), p, Role::Fed(k as f64));
            let out = vol * plan.k as f64 * self.b.u(0.5, 1.0);
            self.b.connect(gat, mon, false, out);
            pipe.gather = Some((gat, k));
            pipe.mon = Some(mon);
        }
        self.pipes.push(pipe);
    }

    fn conn(&mut self, from: usize, to: usize, greedy: bool, pat: Pat, vol: f64) {
        self.b.conns.push(Conn { from, to, greedy, pat, vol: vol.round().max(1.0) });
    }

    /// Pipelines with a min_frequency requirement (the first one, and about 40 % in all): the
    /// required stage and every input-paced module it waits for get a slow T_exec of at least
    /// 1.3 x the pipeline's planted pace without comm times (on the slow type they cannot keep up).
    fn choose_requirements(&mut self) {
        let n = self.pipes.len();
        let count = ((n as f64 * 0.4).round() as usize).clamp(1, n);
        let mut order: Vec<usize> = (1..n).collect();
        order.shuffle(&mut self.b.rng);
        order.insert(0, 0);
        for &p in order.iter().take(count) {
            let pipe = self.pipes[p].clone();
            let mut cands: Vec<usize> = pipe.fed().into_iter().map(|x| x.0).filter(|&g| g != pipe.sim).collect();
            if cands.is_empty() {
                cands.push(pipe.sim);
            }
            let r = self.b.pick(&cands);
            self.pipes[p].required = Some(r);
            // The planted pace, but for the loops' comm times: the source fast, a pinned steer
            // on the display type, another one fast.
            let pace = match pipe.steer {
                Some(s) if pipe.steer_pinned => {
                    let t = &self.b.groups[s].t;
                    pipe.pf - t[FAST_T].expect("cost") + t[self.b.display_ty].expect("cost")
                }
                _ => pipe.pf,
            };
            for g in pipe.fed_ancestors(r).into_iter().chain(std::iter::once(r)) {
                let k = pipe.fed().iter().find(|x| x.0 == g).map(|x| x.1).unwrap_or(1.0);
                let ts = self.b.groups[g].t[SLOW_T].expect("cost");
                if ts < 1.3 * k * pace {
                    self.b.groups[g].t[SLOW_T] = Some(r2(1.3 * k * pace + 0.01));
                }
            }
        }
    }

    /// Planted processor types: the source (and steer) fast when a requirement needs it, else
    /// either; each input-paced stage slow when its slow T_exec keeps up with the pace (at most
    /// 98 % of it), with probability 0.55; bound ranks fast (the partition is fast).
    fn choose_types(&mut self) {
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let req = pipe.required.is_some();
            let src_ty = if req || self.b.rng.random_bool(0.5) { FAST_T } else { SLOW_T };
            self.b.groups[pipe.src].ty = src_ty;
            let mut pace = self.b.groups[pipe.src].t[src_ty].expect("cost");
            if let Some(s) = pipe.steer {
                let ty = if pipe.steer_pinned {
                    self.b.display_ty
                } else if req || self.b.rng.random_bool(0.5) {
                    FAST_T
                } else {
                    SLOW_T
                };
                self.b.groups[s].ty = ty;
                pace += self.b.groups[s].t[ty].expect("cost");
            }
            for (g, ratio) in pipe.fed() {
                let ts = self.b.groups[g].t[SLOW_T].expect("cost");
                let slow_ok = !(pipe.bound && g == pipe.sim) && ts <= 0.98 * ratio * pace;
                self.b.groups[g].ty = if slow_ok && self.b.rng.random_bool(0.55) { SLOW_T } else { FAST_T };
            }
            if pipe.vis_greedy {
                let v = pipe.vis.expect("viewer");
                self.b.groups[v].ty = if self.b.rng.random_bool(0.5) { FAST_T } else { SLOW_T };
            }
            for g in [pipe.rend, pipe.joy].into_iter().flatten() {
                self.b.groups[g].ty = self.b.display_ty;
            }
        }
    }

    // ---- cluster ----

    /// Racks before their node counts: display racks (walls, at most 16 nodes a rack), the
    /// partition (one node per bound simulation, k to 2k - 1 CPUs), compute racks of ~4-12
    /// nodes of one type each, starting at 2 or 4 CPUs; networks `eth` (everywhere, or all but one
    /// compute rack), `ib0` (display racks, the partition and about half of the compute racks)
    /// and, on larger clusters or one in two, `ib1` on another subset.
    fn plan_cluster(&mut self, nodes: usize) -> Result<(), Fail> {
        let walls = self.b.walls.clone();
        let mut w = 0;
        while w < walls.len() {
            let first = walls[w][0];
            let mut members = vec![];
            while w < walls.len() && members.len() + walls[w].len() <= 16 {
                members.extend(walls[w].iter().copied());
                w += 1;
            }
            let _ = first;
            self.racks.push(RPlan {
                ty: self.b.display_ty,
                cpus: 1,
                nets: vec![],
                display: true,
                partition: false,
                target: members.len(),
                display_nodes: members,
            });
        }
        let r = self.pipes.iter().filter(|p| p.bound).count();
        let mc = nodes.checked_sub(self.display + r).filter(|&m| m >= 2).ok_or_else(|| {
            Fail::Error(format!("{nodes} nodes are too few for {} display and {r} partition nodes", self.display))
        })?;
        if r > 0 {
            let parts = r.div_ceil(16);
            for i in 0..parts {
                let count = r / parts + (i < r % parts) as usize;
                let cpus = self.b.rng.random_range(self.kb + 1..=2 * self.kb - 1) as u32;
                self.racks.push(RPlan {
                    ty: FAST_T,
                    cpus,
                    nets: vec![],
                    display: false,
                    partition: true,
                    target: count,
                    display_nodes: vec![],
                });
            }
        }
        // Compute racks, typed in proportion to the planted needs.
        let mut need = [0usize; 2];
        for (gi, g) in self.b.groups.iter().enumerate() {
            if g.filter.is_none()
                && g.pin.is_none()
                && !(self.pipes[self.pipe_of[gi]].bound && self.pipes[self.pipe_of[gi]].sim == gi)
            {
                need[g.ty] += g.n;
            }
        }
        let per = self.b.u(4.0, 12.0);
        let share = need[FAST_T] as f64 / (need[FAST_T] + need[SLOW_T]).max(1) as f64;
        let fast_nodes = ((share * mc as f64).round() as usize).clamp(1, mc - 1);
        let mut racks: Vec<(usize, usize)> = Vec::new();
        for (ty, count) in [(FAST_T, fast_nodes), (SLOW_T, mc - fast_nodes)] {
            let rc = ((count as f64 / per).round() as usize).clamp(1, count);
            let mut cuts: Vec<usize> = (1..count).collect();
            cuts.shuffle(&mut self.b.rng);
            let mut cuts: Vec<usize> = cuts.into_iter().take(rc - 1).collect();
            cuts.sort();
            let mut prev = 0;
            for c in cuts.into_iter().chain(std::iter::once(count)) {
                racks.push((ty, c - prev));
                prev = c;
            }
        }
        racks.shuffle(&mut self.b.rng);
        let compute0 = self.racks.len();
        for (ty, count) in racks {
            let cpus = CPUS[self.b.rng.random_range(0..2usize)];
            self.racks.push(RPlan {
                ty,
                cpus,
                nets: vec![],
                display: false,
                partition: false,
                target: count,
                display_nodes: vec![],
            });
        }
        let nr = self.racks.len();
        let rc = nr - compute0;
        let three = rc >= 6 || self.b.rng.random_bool(0.5);
        let names: &[(&str, bool)] =
            if three { &[("eth", false), ("ib0", true), ("ib1", true)] } else { &[("eth", false), ("ib0", true)] };
        for &(name, fast) in names {
            let latency_ms = if fast { ceil3(self.b.u(0.001, 0.01)) } else { ceil3(self.b.u(0.02, 0.1)) };
            self.b.nets.push(Net { name: name.into(), fast, latency_ms });
        }
        for r in 0..nr {
            self.racks[r].nets.push(0);
            if self.racks[r].display || self.racks[r].partition {
                self.racks[r].nets.push(1);
            }
        }
        // One compute rack off eth (on ib0 only), if its type has another rack.
        if rc >= 3 && self.b.rng.random_bool(0.5) {
            let r = self.b.rng.random_range(compute0..nr);
            let ty = self.racks[r].ty;
            if (compute0..nr).any(|q| q != r && self.racks[q].ty == ty) {
                self.racks[r].nets = vec![1];
            }
        }
        for net in 1..self.b.nets.len() {
            let mut on: Vec<usize> = (compute0..nr).filter(|_| self.b.rng.random_bool(0.5)).collect();
            if on.is_empty() {
                on.push(self.b.rng.random_range(compute0..nr));
            }
            for r in on {
                if !self.racks[r].nets.contains(&net) {
                    self.racks[r].nets.push(net);
                }
            }
            if net == 2 {
                for r in 0..compute0 {
                    if self.racks[r].display && self.b.rng.random_bool(0.4) {
                        self.racks[r].nets.push(net);
                    }
                }
            }
        }
        // A fast network reaches only some racks.
        for net in 1..self.b.nets.len() {
            if self.racks.iter().all(|r| r.nets.contains(&net)) {
                let off: Vec<usize> = (compute0..nr).filter(|&r| self.racks[r].nets.contains(&0)).collect();
                let r = self.b.pick(&off);
                self.racks[r].nets.retain(|&k| k != net);
            }
        }
        for r in &mut self.racks {
            r.nets.sort();
        }
        Ok(())
    }

    /// Each pipeline's zone: a network that reaches its wall (visual), the partition (bound) and
    /// a compute rack of every type its movable modules run on; fast networks weigh 4.
    fn choose_zones(&mut self) {
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let mut types = [false; 2];
            for (gi, g) in self.b.groups.iter().enumerate() {
                if self.pipe_of[gi] == p && g.filter.is_none() && g.pin.is_none() && !(pipe.bound && gi == pipe.sim) {
                    types[g.ty] = true;
                }
            }
            let wall_rack = pipe.wall.map(|w| self.display_rack(self.b.walls[w][0]));
            let ok = |h: &H, net: usize| {
                wall_rack.is_none_or(|r| h.racks[r].nets.contains(&net))
                    && (!pipe.bound || h.racks.iter().any(|r| r.partition && r.nets.contains(&net)))
                    && (0..2).all(|t| {
                        !types[t]
                            || h.racks.iter().any(|r| !r.display && !r.partition && r.ty == t && r.nets.contains(&net))
                    })
            };
            let cands: Vec<usize> = (0..self.b.nets.len())
                .filter(|&n| ok(self, n))
                .flat_map(|n| std::iter::repeat_n(n, if self.b.nets[n].fast { 4 } else { 1 }))
                .collect();
            self.pipes[p].zone = if cands.is_empty() { 0 } else { self.b.pick(&cands) };
        }
    }

    fn display_rack(&self, node: usize) -> usize {
        self.racks.iter().position(|r| r.display_nodes.contains(&node)).expect("a display rack")
    }

    // ---- packing ----

    /// The allocation's view of instance `i` of group `g` on a node of type `ty`.
    fn smod(&self, g: usize, i: usize, ty: usize) -> SMod {
        let grp = &self.b.groups[g];
        let t = grp.t[ty].expect("a cost on the node's type");
        let ld = grp.ld[ty].expect("a cost on the node's type");
        let p = self.pipe_of[g];
        let own = (g << 16) | i;
        let (tio, thread, limit, sync) = match self.role[g] {
            Role::SelfPaced => (t * (1.0 - ld), own, None, None),
            Role::Loop => (self.pace[p].max(t) - t * ld, usize::MAX - p, None, Some(p)),
            Role::Fed(k) => {
                let pin = k * self.pace[p];
                (pin.max(t) - t * ld, own, Some(pin), Some(p))
            }
            Role::Filter => unreachable!("filters use no CPU"),
        };
        SMod { key: (g, i), tio, t, ld, thread, limit, sync }
    }

    fn node_ty(&self, n: usize) -> usize {
        self.racks[self.onodes[n].rack].ty
    }
    fn node_cpus(&self, n: usize) -> u32 {
        self.racks[self.onodes[n].rack].cpus
    }

    fn try_add(&mut self, n: usize, objs: &[(usize, usize)]) -> bool {
        let ty = self.node_ty(n);
        let mut mods = self.onodes[n].mods.clone();
        for &(g, i) in objs {
            mods.push(self.smod(g, i, ty));
        }
        if node_ok(&mods, self.node_cpus(n)) {
            self.onodes[n].mods = mods;
            for &(g, i) in objs {
                self.at[g][i] = n;
            }
            true
        } else {
            false
        }
    }

    /// Whether `n` can take a module of type `ty` of a pipeline in zone `zone`.
    fn fits_zone(&self, n: usize, ty: usize, zone: usize) -> bool {
        let r = &self.racks[self.onodes[n].rack];
        r.ty == ty && r.nets.contains(&zone)
    }

    fn open_node(&mut self, rack: usize) -> usize {
        self.onodes.push(ONode { rack, mods: vec![] });
        self.opened[rack] += 1;
        let n = self.onodes.len() - 1;
        self.open.push(n);
        n
    }

    /// Places one instance: its neighbour's node, the display nodes, the last few nodes opened
    /// (oldest first), else a new node in the least filled rack of its type on the zone.
    /// `off_display`: not on a display node.
    fn place(&mut self, g: usize, i: usize, pref: Option<usize>, zone: usize, off_display: bool) {
        let ty = self.b.groups[g].ty;
        let mut cands: Vec<usize> = Vec::new();
        if let Some(n) = pref {
            if self.fits_zone(n, ty, zone) && !(off_display && n < self.display) {
                cands.push(n);
            }
        }
        for n in 0..self.display {
            if !off_display && self.fits_zone(n, ty, zone) && !cands.contains(&n) {
                cands.push(n);
            }
        }
        let mut recent: Vec<usize> =
            self.open.iter().rev().copied().filter(|&n| self.fits_zone(n, ty, zone)).take(WINDOW).collect();
        recent.reverse();
        for n in recent {
            if !cands.contains(&n) {
                cands.push(n);
            }
        }
        for n in cands {
            if self.try_add(n, &[(g, i)]) {
                return;
            }
        }
        let rack = (0..self.racks.len())
            .filter(|&r| {
                let k = &self.racks[r];
                !k.display && !k.partition && k.ty == ty && k.nets.contains(&zone)
            })
            .min_by(|&a, &b| {
                let f = |r: usize| self.opened[r] as f64 / self.racks[r].target.max(1) as f64;
                f(a).total_cmp(&f(b)).then(a.cmp(&b))
            })
            .expect("the zone has a rack of every type its pipeline uses");
        let n = self.open_node(rack);
        assert!(self.try_add(n, &[(g, i)]), "a module alone keeps up on an idle node");
    }

    /// Pinned objects on the display nodes; each display rack gets the fewest CPUs that hold
    /// them (+ 0 or 1).
    fn pin_displays(&mut self, rng: &mut StdRng) {
        for n in 0..self.display {
            let rack = self.display_rack(n);
            self.onodes.push(ONode { rack, mods: vec![] });
        }
        for g in 0..self.b.groups.len() {
            let Some(pins) = self.b.groups[g].pin.clone() else { continue };
            for (i, &n) in pins.iter().enumerate() {
                let m = self.smod(g, i, self.b.display_ty);
                self.onodes[n].mods.push(m);
                self.at[g][i] = n;
            }
        }
        for r in 0..self.racks.len() {
            if !self.racks[r].display {
                continue;
            }
            let mut need = 1;
            for &n in &self.racks[r].display_nodes {
                while !node_ok(&self.onodes[n].mods, need) {
                    need += 1;
                }
            }
            self.racks[r].cpus = need + rng.random_range(0..=1u32);
        }
    }

    /// One packing of every pipeline with the current CPU counts.
    fn pack_once(&mut self, seed: u64) {
        let mut rng = StdRng::seed_from_u64(seed);
        self.onodes.clear();
        self.open.clear();
        self.opened = vec![0; self.racks.len()];
        self.at = self.b.groups.iter().map(|g| vec![usize::MAX; g.n]).collect();
        self.pin_displays(&mut rng);
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let z = pipe.zone;
            self.place(pipe.src, 0, None, z, pipe.steer_pinned);
            let src_node = self.at[pipe.src][0];
            if let (Some(s), false) = (pipe.steer, pipe.steer_pinned) {
                self.place(s, 0, Some(src_node), z, false);
            }
            let k = self.b.groups[pipe.sim].n;
            if pipe.bound {
                let rack = (0..self.racks.len())
                    .filter(|&r| self.racks[r].partition && self.racks[r].nets.contains(&z))
                    .find(|&r| self.opened[r] < self.racks[r].target)
                    .expect("a partition node for every bound simulation");
                let n = self.open_node(rack);
                let objs: Vec<(usize, usize)> = (0..k).map(|i| (pipe.sim, i)).collect();
                assert!(self.try_add(n, &objs), "a bound simulation fits its partition node");
            } else {
                for i in 0..k {
                    let pref = if i == 0 { src_node } else { self.at[pipe.sim][i - 1] };
                    self.place(pipe.sim, i, Some(pref), z, false);
                }
            }
            if let Some(g) = pipe.insitu {
                for i in 0..k {
                    let pref = self.at[pipe.sim][i];
                    self.place(g, i, Some(pref), z, false);
                }
            }
            if let Some(g) = pipe.part {
                for j in 0..self.b.groups[g].n {
                    let pref = self.at[pipe.sim][j % k];
                    self.place(g, j, Some(pref), z, false);
                }
            }
            if let Some(g) = pipe.vis {
                for v in 0..self.b.groups[g].n {
                    let pref = match pipe.part {
                        Some(q) => self.at[q][v % self.b.groups[q].n],
                        None => self.at[pipe.sim][v % k],
                    };
                    self.place(g, v, Some(pref), z, false);
                }
            }
            if let Some(g) = pipe.mon {
                for m in 0..self.b.groups[g].n {
                    let pref = self.at[pipe.sim][0];
                    self.place(g, m, Some(pref), z, false);
                }
            }
        }
    }

    /// Packs onto 90 % of the compute nodes, give or take 4 %: racks that overflow
    /// their share of the nodes get the next CPU count up, and when far fewer nodes than there
    /// are get used, the emptiest racks the next one down; the best packing that fits is kept.
    fn pack_all(&mut self, nodes: usize) -> Result<(), Fail> {
        self.set_paces(None, &[]);
        let seed = self.b.rng.random::<u64>();
        // About 10 % of the compute nodes stay spare: the planted node count is then a demanding
        // target for `--minimize nodes` (a solver can use more nodes than it).
        let compute_nodes = nodes - self.display - self.pipes.iter().filter(|p| p.bound).count();
        let budget = ((compute_nodes as f64 * 0.9).round() as usize).max(1);
        let slack = (budget / 25).max(1);
        let compute: Vec<usize> =
            (0..self.racks.len()).filter(|&r| !self.racks[r].display && !self.racks[r].partition).collect();
        let mut best: Option<(usize, Vec<u32>)> = None;
        for _ in 0..60 {
            self.pack_once(seed);
            let used: usize = compute.iter().map(|&r| self.opened[r]).sum();
            if used <= budget && best.as_ref().is_none_or(|b| used > b.0) {
                best = Some((used, self.racks.iter().map(|r| r.cpus).collect()));
            }
            if used <= budget && used + slack >= budget {
                break;
            }
            // Racks to change, the farthest from their share first; a third of them at a time.
            let (up, mut cands): (bool, Vec<usize>) = if used > budget {
                (
                    true,
                    compute
                        .iter()
                        .copied()
                        .filter(|&r| self.opened[r] > self.racks[r].target && self.racks[r].cpus < 32)
                        .collect(),
                )
            } else {
                (
                    false,
                    compute
                        .iter()
                        .copied()
                        .filter(|&r| self.opened[r] < self.racks[r].target && self.racks[r].cpus > CPUS[0])
                        .collect(),
                )
            };
            if cands.is_empty() && up {
                cands = compute.iter().copied().filter(|&r| self.racks[r].cpus < 32).collect();
            }
            if cands.is_empty() {
                break;
            }
            let gap = |h: &H, r: usize| (h.opened[r] as i64 - h.racks[r].target as i64).abs();
            cands.sort_by_key(|&r| (std::cmp::Reverse(gap(self, r)), r));
            let take = cands.len().div_ceil(3);
            for &r in &cands[..take] {
                self.racks[r].cpus = step(self.racks[r].cpus, if up { 1 } else { -1 });
            }
        }
        let (_, cpus) =
            best.ok_or_else(|| Fail::Error("the modules do not fit the nodes even with 32 CPUs each".into()))?;
        for (r, c) in cpus.into_iter().enumerate() {
            self.racks[r].cpus = c;
        }
        self.pack_once(seed);
        Ok(())
    }

    /// Node counts (opened nodes, spares where a rack is below its share), global node indices
    /// (display racks, then the others in order; opened nodes first in each), racks for the
    /// builder, and the planted node of every object.
    fn finalize(&mut self, nodes: usize) {
        let mut count: Vec<usize> = (0..self.racks.len())
            .map(|r| if self.racks[r].display { self.racks[r].display_nodes.len() } else { self.opened[r] })
            .collect();
        let mut spare = nodes - count.iter().sum::<usize>();
        while spare > 0 {
            let r = (0..self.racks.len())
                .filter(|&r| !self.racks[r].display && !self.racks[r].partition)
                .max_by_key(|&r| (self.racks[r].target as i64 - count[r] as i64, std::cmp::Reverse(r)))
                .expect("compute racks");
            count[r] += 1;
            spare -= 1;
        }
        let mut first = vec![0usize; self.racks.len()];
        let mut next = 0;
        for r in 0..self.racks.len() {
            first[r] = next;
            next += count[r];
        }
        debug_assert_eq!(next, nodes);
        let mut node_of = vec![0usize; self.onodes.len()];
        let mut used = vec![0usize; self.racks.len()];
        for (n, o) in self.onodes.iter().enumerate() {
            node_of[n] = if n < self.display {
                n
            } else {
                used[o.rack] += 1;
                first[o.rack] + used[o.rack] - 1
            };
        }
        self.b.racks = (0..self.racks.len())
            .filter(|&r| count[r] > 0)
            .map(|r| Rack {
                first: first[r],
                count: count[r],
                cpus: self.racks[r].cpus,
                ty: self.racks[r].ty,
                display: self.racks[r].display,
                nets: self.racks[r].nets.clone(),
            })
            .collect();
        self.b.rack_of = vec![0; nodes];
        self.b.free = vec![0; nodes];
        for (i, r) in self.b.racks.iter().enumerate() {
            for n in r.first..r.first + r.count {
                self.b.rack_of[n] = i;
                self.b.free[n] = r.cpus;
            }
        }
        for g in 0..self.b.groups.len() {
            if self.b.groups[g].filter.is_none() {
                self.b.groups[g].nodes = self.at[g].iter().map(|&n| node_of[n]).collect();
            }
        }
        // Filters on a neighbour's node.
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let node = |h: &H, g: usize| h.b.groups[g].nodes[0];
            if let Some(f) = pipe.bcast {
                self.b.groups[f].nodes = vec![node(self, pipe.src)];
            }
            if let Some(f) = pipe.merge {
                self.b.groups[f].nodes = vec![node(self, pipe.part.expect("merge feeds particles"))];
            }
            if let (Some((f, _)), Some(m)) = (pipe.gather, pipe.mon) {
                self.b.groups[f].nodes = vec![node(self, m)];
            }
            if let (Some(l), Some(f)) = (pipe.latest, pipe.fan) {
                let at_viewer = node(self, pipe.vis.expect("viewer"));
                self.b.groups[l].nodes = vec![at_viewer];
                let on_wall = self.b.rng.random_bool(0.5);
                self.b.groups[f].nodes =
                    vec![if on_wall { node(self, pipe.rend.expect("renderer")) } else { at_viewer }];
            }
        }
    }

    /// Pins and allowed nodes: bound ranks on the partition; loop sources with a pinned steer
    /// on compute nodes; about 15 % of the other sources pinned where they are; a quarter of
    /// the other movable groups allowed on the racks they use (sometimes one more).
    fn constraints(&mut self) {
        let part_nodes: Vec<usize> = {
            // Partition racks come right after the display racks.
            let d = self.racks.iter().filter(|r| r.display).count();
            let parts = self.racks.iter().filter(|r| r.partition).count();
            self.b.racks[d..d + parts].iter().flat_map(|r| r.first..r.first + r.count).collect()
        };
        let compute: Vec<usize> = (self.display..self.b.free.len()).collect();
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            if pipe.bound {
                self.b.groups[pipe.sim].allowed = Some(part_nodes.clone());
            }
            if pipe.steer_pinned {
                self.b.groups[pipe.src].allowed = Some(compute.clone());
            } else if self.b.rng.random_bool(0.15) {
                let n = self.b.groups[pipe.src].nodes[0];
                self.b.groups[pipe.src].pin = Some(vec![n]);
            }
        }
        for g in 0..self.b.groups.len() {
            let grp = &self.b.groups[g];
            if grp.filter.is_some() || grp.pin.is_some() || grp.allowed.is_some() || !self.b.rng.random_bool(0.25) {
                continue;
            }
            let mut racks: Vec<usize> = grp.nodes.iter().map(|&n| self.b.rack_of[n]).collect();
            let ty = grp.ty;
            if self.b.rng.random_bool(0.5) {
                let others: Vec<usize> =
                    (0..self.b.racks.len()).filter(|&r| self.b.racks[r].ty == ty && !racks.contains(&r)).collect();
                if !others.is_empty() {
                    let r = self.b.pick(&others);
                    racks.push(r);
                }
            }
            racks.sort();
            racks.dedup();
            let nodes: Vec<usize> = racks
                .iter()
                .flat_map(|&r| self.b.racks[r].first..self.b.racks[r].first + self.b.racks[r].count)
                .collect();
            self.b.groups[g].allowed = Some(nodes);
        }
    }

    // ---- rates, bandwidths, requirements ----

    /// Paces: T_exec of the source on its type, plus for a loop the steer's T_exec and the comm
    /// time of both loop edges with bandwidths `bw` (None: no comm).
    fn set_paces(&mut self, bw: Option<&[f64]>, planned: &[Option<usize>]) {
        let edges = if bw.is_some() { self.b.edges() } else { vec![] };
        self.pace = (0..self.pipes.len())
            .map(|p| {
                let pipe = &self.pipes[p];
                let src = &self.b.groups[pipe.src];
                let mut pace = src.t[src.ty].expect("cost");
                if let Some(s) = pipe.steer {
                    let st = &self.b.groups[s];
                    pace += st.t[st.ty].expect("cost");
                    if let Some(bw) = bw {
                        for (e, net) in edges.iter().zip(planned) {
                            let loop_edge =
                                (e.from.0 == pipe.src && e.to.0 == s) || (e.from.0 == s && e.to.0 == pipe.src);
                            if let (true, Some(k)) = (loop_edge, net) {
                                pace += e.vol / bw[*k] * 1000.0 + self.b.nets[*k].latency_ms;
                            }
                        }
                    }
                }
                pace
            })
            .collect();
    }

    /// Frequencies of every group from the paces (greedy -> broadcast chains: the renderers').
    fn frequencies(&mut self) {
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let f = 1000.0 / self.pace[p];
            for g in [Some(pipe.src), pipe.steer, Some(pipe.sim), pipe.insitu, pipe.part, pipe.bcast, pipe.merge]
                .into_iter()
                .flatten()
            {
                self.b.groups[g].hz = f;
            }
            if let (Some((gat, k)), Some(m)) = (pipe.gather, pipe.mon) {
                self.b.groups[gat].hz = f / k as f64;
                self.b.groups[m].hz = f / k as f64;
            }
            for g in [pipe.rend, pipe.joy].into_iter().flatten() {
                self.b.groups[g].hz = 1000.0 / self.b.groups[g].t[self.b.display_ty].expect("cost");
            }
            if let Some(v) = pipe.vis {
                let own = &self.b.groups[v];
                self.b.groups[v].hz = if pipe.vis_greedy { 1000.0 / own.t[own.ty].expect("cost") } else { f };
            }
            if let (Some(l), Some(fan), Some(r)) = (pipe.latest, pipe.fan, pipe.rend) {
                let hz = self.b.groups[r].hz;
                self.b.groups[l].hz = hz;
                self.b.groups[fan].hz = hz;
            }
        }
    }

    /// Bandwidths `factor` x the busiest use, with the loops' comm times at those bandwidths:
    /// iterated from no comm time down to the fixed point (the map is monotone and the
    /// bandwidths are on a 0.001 MB/s grid).
    fn pass(&mut self, planned: &[Option<usize>], factor: f64) -> Pass {
        self.set_paces(None, planned);
        self.frequencies();
        let mut bw = self.b.bandwidths(&self.b.edges(), planned, factor);
        for _ in 0..100 {
            self.set_paces(Some(&bw), planned);
            self.frequencies();
            let next = self.b.bandwidths(&self.b.edges(), planned, factor);
            if next == bw {
                break;
            }
            bw = next;
        }
        self.set_paces(Some(&bw), planned);
        self.frequencies();
        Pass { bw, pace: self.pace.clone(), edges: self.b.edges() }
    }

    /// Every packed node still sound with the current paces.
    fn all_nodes_ok(&self) -> bool {
        let mut on: Vec<Vec<(usize, usize)>> = vec![vec![]; self.b.free.len()];
        for (g, grp) in self.b.groups.iter().enumerate() {
            if grp.filter.is_none() {
                for (i, &n) in grp.nodes.iter().enumerate() {
                    on[n].push((g, i));
                }
            }
        }
        on.iter().enumerate().all(|(n, objs)| {
            let ty = self.b.racks[self.b.rack_of[n]].ty;
            let mods: Vec<SMod> = objs.iter().map(|&(g, i)| self.smod(g, i, ty)).collect();
            node_ok(&mods, self.b.free[n])
        })
    }

    /// source -> [bcast] -> sim -> [merge] -> particles -> viewer -> [latest -> fan] -> renderer,
    /// as far as the pipeline goes (or sim -> in-situ), following random edges.
    fn chain_path(&mut self, p: usize, edges: &[Edge]) -> Vec<(usize, usize)> {
        let pipe = self.pipes[p].clone();
        let mut seq = vec![pipe.src];
        seq.extend(pipe.bcast);
        seq.push(pipe.sim);
        if pipe.vis.is_none() && pipe.part.is_none() {
            seq.extend(pipe.insitu);
        }
        if pipe.part.is_some() {
            seq.extend(pipe.merge);
            seq.extend(pipe.part);
        }
        seq.extend(pipe.vis);
        seq.extend(pipe.latest);
        seq.extend(pipe.fan);
        seq.extend(pipe.rend);
        self.b.follow(&seq, edges)
    }

    fn requirements(&mut self, tight: &Pass, planned: &[Option<usize>]) -> Vec<GenRequirement> {
        let mut out = Vec::new();
        for p in 0..self.pipes.len() {
            let Some(r) = self.pipes[p].required else { continue };
            let k = self.pipes[p].fed().iter().find(|x| x.0 == r).map(|x| x.1).unwrap_or(1.0);
            let eps = self.b.u(0.002, 0.015);
            let hz = (1000.0 / (k * tight.pace[p] * (1.0 + eps)) * 1e6).floor() / 1e6;
            let name = self.b.groups[r].name.clone();
            out.push(GenRequirement::MinFrequency { name: format!("{name}-rate"), module: name, hz });
        }
        let mut cands = Vec::new();
        for p in 0..self.pipes.len() {
            let path = self.chain_path(p, &tight.edges);
            let slack = self.b.u(0.005, 0.03);
            let pipe = self.pipes[p].clone();
            if self.b.groups[pipe.src].ty != FAST_T {
                continue;
            }
            // Lower bound with the source slow: modules waiting for it take at least its slow
            // T_exec (+ the steer's fastest) x k, the others their fastest T_exec.
            let slow_src = self.b.groups[pipe.src].t[SLOW_T].expect("cost")
                + pipe.steer.map(|s| self.b.groups[s].tmin()).unwrap_or(0.0);
            let fed = pipe.fed();
            let lb: f64 = path
                .iter()
                .filter(|o| self.b.groups[o.0].filter.is_none())
                .map(|o| {
                    if o.0 == pipe.src || Some(o.0) == pipe.steer {
                        slow_src
                    } else if let Some(x) = fed.iter().find(|x| x.0 == o.0) {
                        x.1 * slow_src
                    } else {
                        self.b.groups[o.0].tmin()
                    }
                })
                .sum();
            let l = self.b.latency(&path, &tight.edges, planned, &tight.bw);
            let max = ceil3(l * (1.0 + slack));
            if max < lb {
                cands.push((p, path, max));
            }
        }
        let count = ((self.pipes.len() as f64 * 0.3).round() as usize).clamp(1, self.pipes.len());
        cands.shuffle(&mut self.b.rng);
        for (p, path, max) in cands.into_iter().take(count) {
            let names: Vec<String> = path.iter().map(|o| self.b.groups[o.0].obj(o.1)).collect();
            let src = &self.b.groups[self.pipes[p].src].name;
            out.push(GenRequirement::MaxLatency { name: format!("{src}-latency"), path: names, ms: max });
        }
        out
    }

    // ---- infeasible variants ----

    /// `infeasible-cycle`: the first pipeline's required rate becomes 1 / (k x (T + C / 2)), T the
    /// loop's fastest T_exec, C its cheapest comm times (LB = T + C).
    fn break_cycle(&mut self, reqs: &mut [GenRequirement], bw: &[f64]) -> (String, String) {
        let pipe = self.pipes[0].clone();
        let (s, r) = (pipe.steer.expect("the first pipeline has a loop"), pipe.required.expect("and a requirement"));
        let k = pipe.fed().iter().find(|x| x.0 == r).map(|x| x.1).unwrap_or(1.0);
        let d = self.b.groups[s].nodes[0];
        let src = &self.b.groups[pipe.src];
        let st = &self.b.groups[s];
        let t_src = src.tmin();
        let t_steer = st.t[self.b.display_ty].expect("cost");
        let nets: Vec<usize> = (0..self.b.nets.len()).filter(|&k| self.b.on(d, k)).collect();
        let mut comm = Vec::new();
        for c in &self.b.conns {
            if (c.from == pipe.src && c.to == s) || (c.from == s && c.to == pipe.src) {
                let best = nets
                    .iter()
                    .map(|&n| c.vol / bw[n] * 1000.0 + self.b.nets[n].latency_ms)
                    .fold(f64::INFINITY, f64::min);
                comm.push((c.vol, best));
            }
        }
        let comm_min: f64 = comm.iter().map(|c| c.1).sum();
        let lb = t_src + t_steer + comm_min;
        // Between the two bounds: the loop's T_exec alone would allow it, its comm times do not.
        let hz = (1000.0 / (k * (t_src + t_steer + 0.5 * comm_min)) * 1e6).floor() / 1e6;
        let rname = self.b.groups[r].name.clone();
        let req = reqs
            .iter_mut()
            .find_map(|q| match q {
                GenRequirement::MinFrequency { module, hz, .. } if *module == rname => Some(hz),
                _ => None,
            })
            .expect("requirement");
        let old = *req;
        *req = hz;
        let kk = if k > 1.0 { format!("{k} x ") } else { String::new() };
        (
            format!("{rname}'s min_frequency is {hz} Hz instead of {old} Hz."),
            format!(
                "{rname} waits for {} (through FIFO links{}), so T_it({rname}) >= {kk}T_it({}); {} is in a synchronous loop with {} (pinned to {}, where {} may not run: allowed_nodes), so by eq 5 T_it({}) >= T_exec({}) + T_exec({}) + the two loop edges' Vol / BW + L >= {t_src} + {t_steer} + {:.6} + {:.6} = {lb:.6} ms (fastest T_exec; cheapest network of {} for {} B and {} B): at most {:.6} Hz.",
                src.name,
                if k > 1.0 { format!(" and a {k}:1 gather") } else { String::new() },
                src.name,
                src.name,
                st.name,
                node_name(d),
                src.name,
                src.name,
                src.name,
                st.name,
                comm[0].1,
                comm[1].1,
                node_name(d),
                comm[0].0,
                comm[1].0,
                1000.0 / (k * lb)
            ),
        )
    }

    /// `infeasible-pack`: the last partition node gets kb - 1 CPUs.
    fn break_pack(&mut self, g: &mut Generated, bw: &[f64]) -> (String, String) {
        let bound: Vec<usize> = (0..self.pipes.len()).filter(|&p| self.pipes[p].bound).collect();
        let hosts: Vec<usize> = bound.iter().map(|&p| self.b.groups[self.pipes[p].sim].nodes[0]).collect();
        let d = *hosts.iter().max().expect("bound simulations");
        let kb = self.kb;
        let old = set_node_cpus(&mut g.node_groups, d, kb as u32 - 1);
        let allowed = self.b.groups[self.pipes[bound[0]].sim].allowed.clone().expect("partition");
        let top = bw.iter().copied().fold(0.0, f64::max);
        let names: Vec<String> = bound.iter().map(|&p| self.b.groups[self.pipes[p].sim].name.clone()).collect();
        let min_rate = bound
            .iter()
            .map(|&p| {
                let pipe = &self.pipes[p];
                let ts = self.b.groups[pipe.src].t.iter().flatten().copied().fold(0.0, f64::max);
                self.b.groups[pipe.sim].mpi.expect("ring") / ts * 1000.0
            })
            .fold(f64::INFINITY, f64::min);
        let cpus: Vec<u32> = allowed.iter().map(|&n| if n == d { kb as u32 - 1 } else { self.b.free[n] }).collect();
        (
            format!("node {} has {} CPUs instead of {old}.", node_name(d), kb - 1),
            format!(
                "the {} bound simulations ({}) have {kb} MPI ranks each; a rank runs at its source's pace, at most the source's slowest T_exec, so each ring edge carries at least {:.3} MB/s, more than any network ({:.3} MB/s at most): a simulation's ranks share one node. No two of these ranks share a CPU (T_exec / pace x LD of one plus T_exec / pace of the other exceeds 1 on either type, pace <= the source's slowest T_exec). They may run only on {} nodes ({}..{}, allowed_nodes) with {:?} CPUs, fewer than {} each, so each holds at most one simulation and {} holds none: {} simulations, {} node{} that can hold one. (Their {} CPUs would cover {} ranks: counting CPUs does not see it.)",
                bound.len(),
                names.join(", "),
                min_rate / 1e6,
                top / 1e6,
                allowed.len(),
                node_name(allowed[0]),
                node_name(*allowed.last().expect("nodes")),
                cpus,
                2 * kb,
                node_name(d),
                bound.len(),
                bound.len() - 1,
                if bound.len() == 2 { "" } else { "s" },
                cpus.iter().sum::<u32>(),
                bound.len() * kb
            ),
        )
    }
}
