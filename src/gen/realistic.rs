//! The `realistic` family (`flowmap gen --family realistic`): instances shaped like the ones an
//! independent team reported in issue 10, harder than we expect users' to be, each with a planted
//! mapping that `verify::check` calls sound (asserted by tests, not trusted from construction).
//!
//! **Application**: several independent pipelines, each with a random shape:
//! - `P_source` (1 instance, self-paced: its T_exec is the pipeline's pace), optionally through a
//!   `P_bcast` broadcast filter, feeds `P_sim`, 2–32 MPI instances exchanging halos
//!   (`mpi = { pattern = "ring" }`), FIFO;
//! - `P_particles` (optional) after `P_sim`, directly or through a `P_merge` filter (merge 1:1
//!   of all instances), FIFO; `P_viewer` after it, FIFO or greedy;
//! - `P_renderer` (one instance per node of a display wall, pinned there; costs on the display
//!   nodes' processor type only, `allowed_nodes` = every display node) fed greedily by the
//!   viewers, and a `P_joypad` pinned to a wall node, feeding the source and the
//!   renderers greedily (visual pipelines only; a wall serves one or two pipelines);
//! - optionally a `P_gather` k:1 gather filter (k = 2–8) from `P_sim` to `P_monitor`.
//!
//! Patterns are one-to-one, all-to-all or modulo, by the group sizes. Every module has a
//! T_exec and an LD per processor type: `epyc` (fast) and `xeon` (slow: T_exec x 1.3–2.5, LD a
//! little different); only renderers lack one type. A FIFO stage's T_exec on the fast type is
//! 30–95 % of the source's fast T_exec (x k after a k:1 gather), so the pipeline's pace is its
//! source's T_exec on the source's processor type.
//!
//! **Cluster**: display racks first (the wall nodes, `n0000..`, one processor type, CPUs for
//! what is pinned there and more), then compute racks of roughly 4–16 nodes, each of one
//! processor type and one CPU count (2–32), with nodes of each type in proportion to what the
//! planted mapping puts there and 1.5–2.1 CPUs per planted module. Networks: `eth` (slow
//! latency) on every rack or all but one compute rack; `ib0` on about half of the compute racks
//! and on the display racks; `ib1` (larger or lucky clusters) on another subset. No fast network
//! reaches every rack.
//!
//! **Planted mapping**: pinned objects first; then each pipeline is put in the zone of one
//! network (its racks; fast networks preferred; for a visual pipeline, a network its display
//! rack is on), on its chosen processor types: a pipeline's source is fast or slow (fast when a
//! requirement needs it); each stage is slow when its slow T_exec keeps up with the pace (at
//! most 98 % of it), with probability 0.55, and fast otherwise. Nodes are filled one module per
//! CPU (no module shares a CPU, so no concurrency slows anything), usually next to the previous
//! module. Filters sit on a neighbour's node. A heavy connection (1 MB/s or more per edge)
//! prefers a fast network three times in four, a light one `eth`; an edge takes the preferred
//! network when both nodes are on it, else another one they share.
//!
//! **Bandwidth**: each network's bandwidth is `feasible` 1.5x or `tight` 1.1x the busiest use of
//! that network by one node in one direction in the planted mapping (eq 9–10 at the
//! synchronisation frequencies; rounded up to 0.001 MB/s). A network the planted mapping does
//! not use gets the factor times the busiest use of any network.
//!
//! **Requirements** (they bind: the planted mapping meets them, and they exclude mappings):
//! - `min_frequency` on about a quarter of the pipelines (at least one), on a stage after the
//!   simulation: 1 / (k x T_fast(source) x (1 + e)), e = 1–5 %, k the gather ratio on the
//!   way. Every synchronous ancestor of that stage (through FIFO links and filters) has a slow
//!   T_exec above 1.12 x T_fast(source), so the requirement is met only when the source and
//!   all those ancestors run on the fast type (a slow one makes its own T_it, hence the
//!   stage's, at least k x its slow T_exec).
//! - `path` + `max_latency` on about 15 % of the pipelines (at least one), a chain source ->
//!   ... -> renderer: eq 11 of the planted mapping plus 2–8 % slack, kept below a lower bound
//!   of the latency with the source on the slow type (the source's slow T_exec x k for each
//!   module fed by it through FIFO links, the fastest T_exec for the others), so the source
//!   must run on the fast type. Chosen among the pipelines whose planted source is fast, with
//!   `tight` bandwidths, so `feasible` and `tight` instances have the same requirements.
//!
//! **Infeasible variants**, each the `feasible` instance of the same size and seed with ONE change:
//! - `infeasible-cpu`: the display node with the most pinned self-paced modules (renderers and
//!   joypads: their inputs are all greedy, so nothing synchronises them) gets one CPU fewer
//!   than it has such modules. Why no mapping exists: a self-paced module must run at its
//!   T_exec (`cpu-overload` otherwise), so in the first allocation round it must find a CPU
//!   with no load (LD_c = (1 - CPULD) x LD < LD on any loaded CPU); two of them never share a
//!   CPU, and the node has fewer CPUs than pinned self-paced modules.
//! - `infeasible-link`: the joypad -> renderer connection of a wall of at least two nodes gets a
//!   volume with Vol / T_exec(joypad) 1.25x the bandwidth of the fastest network the two wall
//!   nodes share. Why: the joypad and a renderer are pinned to different nodes, so their edge
//!   is not local; the joypad is self-paced, so in a sound mapping it sends at 1 / T_exec; any
//!   network that edge takes carries more than its bandwidth out of the joypad's node.
//! - `infeasible-requirement`: the first `min_frequency` becomes 1.05 / (k x T_fast(source)).
//!   Why: the required stage's T_it is at least k x T_it(source) (eq 4, through the FIFO
//!   links and the k:1 gather) and T_it(source) >= T_exec(source) >= T_fast(source) on any
//!   processor type, so its frequency is at most 1 / (k x T_fast(source)).
//!
//! Module counts are exact (`--modules` counts module instances, not filters); node counts are
//! exact. Deterministic: the same options give the same bytes.

use super::{inst, node_name, GenConnection, GenCost, GenFilter, GenModule, GenNetwork, GenNodeGroup};
use super::{GenRequirement, GenRoute, Generated};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The fast processor type's name.
pub const FAST: &str = "epyc";
/// The slow processor type's name.
pub const SLOW: &str = "xeon";
pub(super) const TYPE_NAMES: [&str; 2] = [FAST, SLOW];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RealisticKind {
    /// Bandwidths 1.5x the planted mapping's busiest use.
    Feasible,
    /// 1.1x.
    Tight,
    /// A display node with fewer CPUs than its pinned self-paced modules.
    InfeasibleCpu,
    /// A heavy link between pinned objects with no fast enough common network.
    InfeasibleLink,
    /// A minimum frequency no processor type can reach.
    InfeasibleRequirement,
}

impl RealisticKind {
    pub fn name(self) -> &'static str {
        match self {
            RealisticKind::Feasible => "feasible",
            RealisticKind::Tight => "tight",
            RealisticKind::InfeasibleCpu => "infeasible-cpu",
            RealisticKind::InfeasibleLink => "infeasible-link",
            RealisticKind::InfeasibleRequirement => "infeasible-requirement",
        }
    }
    /// Whether the instance has a (planted) sound mapping.
    pub fn is_feasible(self) -> bool {
        matches!(self, RealisticKind::Feasible | RealisticKind::Tight)
    }
}

#[derive(Clone, Debug)]
pub struct RealisticOptions {
    pub modules: usize,
    pub nodes: usize,
    pub seed: u64,
    pub kind: RealisticKind,
}

/// Sizes the family can build: at least 8 modules and 4 nodes, at most 8 modules per node.
pub fn check_size(modules: usize, nodes: usize) -> Result<(), String> {
    if modules < 8 || nodes < 4 {
        return Err(format!("the realistic family needs --modules >= 8 and --nodes >= 4 (got {modules}, {nodes})"));
    }
    if modules > 8 * nodes {
        return Err(format!("the realistic family builds at most 8 modules per node (got {modules} on {nodes})"));
    }
    Ok(())
}

pub(super) const FAST_T: usize = 0;
pub(super) const SLOW_T: usize = 1;
/// CPU counts a node may have.
pub(super) const CPUS: [u32; 8] = [2, 4, 6, 8, 12, 16, 24, 32];
pub(super) const DOMAINS: [&str; 8] = ["fluid", "ocean", "plasma", "crowd", "cloth", "quake", "smoke", "galaxy"];

pub(super) fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
pub(super) fn ceil3(x: f64) -> f64 {
    (x * 1000.0).ceil() / 1000.0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pat {
    OneToOne,
    AllToAll,
    Modulo,
}

impl Pat {
    pub(super) fn name(self) -> &'static str {
        match self {
            Pat::OneToOne => "one-to-one",
            Pat::AllToAll => "all-to-all",
            Pat::Modulo => "modulo",
        }
    }
    /// Instance pairs, as the parser expands them.
    pub(super) fn pairs(self, a: usize, b: usize) -> Vec<(usize, usize)> {
        match self {
            Pat::OneToOne => (0..a).map(|i| (i, i)).collect(),
            Pat::AllToAll => (0..a).flat_map(|i| (0..b).map(move |j| (i, j))).collect(),
            Pat::Modulo => {
                if a >= b {
                    (0..a).map(|i| (i, i % b)).collect()
                } else {
                    (0..b).map(|j| (j % a, j)).collect()
                }
            }
        }
    }
}

/// A module or filter group, with what the planted mapping does with it.
#[derive(Clone, Debug)]
pub(super) struct Grp {
    pub(super) name: String,
    pub(super) n: usize,
    /// (kind, ratio) for filters.
    pub(super) filter: Option<(&'static str, u32)>,
    /// T_exec in ms per type (FAST_T, SLOW_T); None: no cost on that type.
    pub(super) t: [Option<f64>; 2],
    pub(super) ld: [Option<f64>; 2],
    pub(super) pin: Option<Vec<usize>>,
    pub(super) mpi: Option<f64>,
    /// Planted processor type (modules).
    pub(super) ty: usize,
    /// Planted node of each instance.
    pub(super) nodes: Vec<usize>,
    /// Frequency of every instance in the planted mapping, Hz.
    pub(super) hz: f64,
    /// Nodes the group may use (`allowed_nodes`); None: every node (or, for a module without
    /// a cost on one processor type, the display nodes).
    pub(super) allowed: Option<Vec<usize>>,
}

impl Grp {
    pub(super) fn module(name: String, n: usize, t: [Option<f64>; 2], ld: [Option<f64>; 2]) -> Grp {
        Grp { name, n, filter: None, t, ld, pin: None, mpi: None, ty: FAST_T, nodes: vec![], hz: 0.0, allowed: None }
    }
    pub(super) fn filter(name: String, kind: &'static str, ratio: u32) -> Grp {
        Grp {
            name,
            n: 1,
            filter: Some((kind, ratio)),
            t: [None, None],
            ld: [None, None],
            pin: None,
            mpi: None,
            ty: FAST_T,
            nodes: vec![],
            hz: 0.0,
            allowed: None,
        }
    }
    pub(super) fn tmin(&self) -> f64 {
        self.t.iter().flatten().copied().fold(f64::INFINITY, f64::min)
    }
    pub(super) fn obj(&self, i: usize) -> String {
        inst(&self.name, self.n, i)
    }
}

#[derive(Clone, Debug)]
pub(super) struct Conn {
    pub(super) from: usize,
    pub(super) to: usize,
    pub(super) greedy: bool,
    pub(super) pat: Pat,
    pub(super) vol: f64,
}

/// What one pipeline is made of (group indices).
#[derive(Clone, Debug, Default)]
struct Pipe {
    src: usize,
    bcast: Option<usize>,
    sim: usize,
    merge: Option<usize>,
    part: Option<usize>,
    vis: Option<usize>,
    vis_greedy: bool,
    rend: Option<usize>,
    joy: Option<usize>,
    gather: Option<(usize, u32)>,
    mon: Option<usize>,
    wall: Option<usize>,
    /// Groups of the FIFO chain after the source, in order (sim, part, FIFO viewer).
    chain: Vec<usize>,
    /// The group with a min_frequency requirement, if any.
    required: Option<usize>,
    /// Planted pace (T_it of the source), ms.
    pace: f64,
    zone: usize,
}

/// Counts chosen before building a pipeline.
#[derive(Clone, Debug)]
struct Plan {
    k: usize,
    j: usize,
    v: usize,
    mon: usize,
    wall: Option<usize>,
}

impl Plan {
    fn size(&self, walls: &[Vec<usize>]) -> usize {
        1 + self.k + self.j + self.v + self.mon + self.wall.map(|w| walls[w].len() + 1).unwrap_or(0)
    }
}

#[derive(Clone, Debug)]
pub(super) struct Rack {
    pub(super) first: usize,
    pub(super) count: usize,
    pub(super) cpus: u32,
    pub(super) ty: usize,
    pub(super) display: bool,
    pub(super) nets: Vec<usize>,
}

pub(super) struct Net {
    pub(super) name: String,
    pub(super) fast: bool,
    pub(super) latency_ms: f64,
}

pub(super) struct B {
    pub(super) rng: StdRng,
    pub(super) groups: Vec<Grp>,
    pub(super) conns: Vec<Conn>,
    pipes: Vec<Pipe>,
    pub(super) walls: Vec<Vec<usize>>,
    pub(super) display_ty: usize,
    pub(super) racks: Vec<Rack>,
    pub(super) nets: Vec<Net>,
    /// Rack of every node.
    pub(super) rack_of: Vec<usize>,
    pub(super) free: Vec<u32>,
}

/// An instance-level edge of the planted application.
pub(super) struct Edge {
    /// Connection name (as the parser names it).
    pub(super) conn: String,
    /// Index into `conns`, or None for an MPI exchange.
    pub(super) conn_ix: Option<usize>,
    pub(super) from: (usize, usize),
    pub(super) to: (usize, usize),
    pub(super) vol: f64,
    pub(super) rate: f64,
}

pub fn generate(o: &RealisticOptions) -> Result<Generated, String> {
    check_size(o.modules, o.nodes)?;
    let mut b = B::new(o.seed);
    let display = b.plan_displays(o.nodes, o.modules);
    let plans = b.plan_pipelines(o.modules);
    for (p, plan) in plans.iter().enumerate() {
        b.build_pipeline(p, plan);
    }
    b.choose_requirements();
    b.choose_types();
    b.build_cluster(o.nodes, display);
    b.plant_pinned();
    for p in 0..b.pipes.len() {
        b.plant(p)?;
    }
    b.frequencies();
    let edges = b.edges();
    let (routes, planned) = b.routes(&edges)?;
    let factor = if o.kind == RealisticKind::Tight { 1.1 } else { 1.5 };
    let bw = b.bandwidths(&edges, &planned, factor);
    let bw_tight = b.bandwidths(&edges, &planned, 1.1);
    let requirements = b.requirements(&edges, &planned, &bw, &bw_tight);
    let head = Head {
        family: "realistic",
        kind: o.kind.name(),
        modules: o.modules,
        nodes: o.nodes,
        seed: o.seed,
        display,
        factor,
        shares: "",
    };
    let mut g = b.output(head.name(), requirements, routes, &bw);
    let broken = (!o.kind.is_feasible()).then(|| b.break_it(o.kind, &mut g));
    b.finish(&mut g, &head, broken);
    Ok(g)
}

/// What the first lines of an instance's files say.
pub(super) struct Head {
    pub(super) family: &'static str,
    pub(super) kind: &'static str,
    pub(super) modules: usize,
    pub(super) nodes: usize,
    pub(super) seed: u64,
    /// Display nodes (the first ones).
    pub(super) display: usize,
    /// Bandwidth over the planted busiest use.
    pub(super) factor: f64,
    /// Words about the planted mapping before "uses N of M nodes".
    pub(super) shares: &'static str,
}

impl Head {
    /// `family-MxN`.
    pub(super) fn base(&self) -> String {
        format!("{}-{}x{}", self.family, self.modules, self.nodes)
    }
    pub(super) fn name(&self) -> String {
        format!("{}-{}-s{}", self.base(), self.kind, self.seed)
    }
}

impl B {
    /// The head notes; the planted node count, or for an infeasible instance (`broken`: its one
    /// change and why no mapping exists) no planted mapping.
    pub(super) fn finish(&self, g: &mut Generated, h: &Head, broken: Option<(String, String)>) {
        g.notes = vec![
            format!("Family {}, kind {}: {} modules, {} nodes, seed {}.", h.family, h.kind, h.modules, h.nodes, h.seed),
            format!(
                "Processor types: {FAST} (fast) and {SLOW} (slow); display nodes {}..{} are {}.",
                node_name(0),
                node_name(h.display - 1),
                TYPE_NAMES[self.display_ty]
            ),
        ];
        match broken {
            None => {
                let mut used: Vec<usize> = self.groups.iter().flat_map(|g| g.nodes.iter().copied()).collect();
                used.sort();
                used.dedup();
                g.planted_nodes = Some(used.len());
                g.notes.push(format!(
                    "Bandwidths: {}x the planted mapping's busiest use of each network; the planted mapping (mappings/{}.toml) {}uses {} of {} nodes.",
                    h.factor, g.name, h.shares, used.len(), h.nodes
                ));
            }
            Some((change, why)) => {
                g.place.clear();
                g.routes.clear();
                g.notes.push(format!("Derived from {}-feasible-s{} by one change: {change}", h.base(), h.seed));
                g.notes.push(format!("No mapping exists: {why}"));
            }
        }
    }

    /// An empty builder with its random generator seeded.
    pub(super) fn new(seed: u64) -> B {
        B {
            rng: StdRng::seed_from_u64(seed),
            groups: vec![],
            conns: vec![],
            pipes: vec![],
            walls: vec![],
            display_ty: FAST_T,
            racks: vec![],
            nets: vec![],
            rack_of: vec![],
            free: vec![],
        }
    }
    pub(super) fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.rng.random_range(0..v.len())]
    }
    pub(super) fn u(&mut self, lo: f64, hi: f64) -> f64 {
        self.rng.random_range(lo..hi)
    }

    /// Display nodes (the first ones) and their walls; returns how many display nodes. The first
    /// wall has at least two nodes and leaves room for a visual pipeline (source, two simulation
    /// instances, a viewer, a joypad and the renderers).
    pub(super) fn plan_displays(&mut self, nodes: usize, modules: usize) -> usize {
        let share = self.u(0.08, 0.14);
        let d = ((nodes as f64 * share).round() as usize).clamp(2, (nodes / 4).max(2));
        let wmax = if nodes >= 64 { 8 } else { 4 };
        let mut first = 0;
        while first < d {
            let left = d - first;
            let w = if first == 0 {
                self.rng.random_range(2..=wmax.min(left).min(modules - 5).max(2))
            } else {
                self.rng.random_range(1..=wmax.min(left))
            };
            self.walls.push((first..first + w).collect());
            first += w;
        }
        self.display_ty = if self.rng.random_bool(0.5) { FAST_T } else { SLOW_T };
        d
    }

    /// Module counts of every pipeline, adding up to `modules` exactly.
    fn plan_pipelines(&mut self, modules: usize) -> Vec<Plan> {
        let kcap = (modules / 3).clamp(2, 32);
        let mut wall_use = vec![0usize; self.walls.len()];
        let mut plans: Vec<Plan> = Vec::new();
        let mut left = modules;
        while left > 0 {
            if left < 4 {
                let p = plans.last_mut().expect("the first pipeline takes at least 4 modules");
                grow(p, left);
                break;
            }
            let mut b = left - 1;
            // Visual: a wall with the fewest pipelines (at most two per wall).
            let wall = {
                let w = (0..self.walls.len()).filter(|&w| wall_use[w] < 2).min_by_key(|&w| (wall_use[w], w));
                match w {
                    Some(w) if (plans.is_empty() || self.rng.random_bool(0.65)) && b >= self.walls[w].len() + 4 => {
                        Some(w)
                    }
                    _ => None,
                }
            };
            let reserve = wall.map(|w| self.walls[w].len() + 2).unwrap_or(0);
            let ks: Vec<usize> =
                [2, 3, 4, 6, 8, 12, 16, 24, 32].into_iter().filter(|&k| k <= kcap && k <= b - reserve).collect();
            let k = if ks.is_empty() { b - reserve } else { self.pick(&ks) };
            b -= k;
            let mut j = 0;
            if b > reserve && self.rng.random_bool(0.75) {
                let js: Vec<usize> = [1, 2, 4, 8, k].into_iter().filter(|&j| j <= b - reserve && j <= 16).collect();
                if !js.is_empty() {
                    j = self.pick(&js);
                }
            }
            b -= j;
            let mut v = 0;
            if let Some(w) = wall {
                let room = b - (self.walls[w].len() + 1);
                let vs: Vec<usize> = [1, 2, 4, j.max(1)].into_iter().filter(|&v| v <= room).collect();
                v = self.pick(&vs);
                b -= v + self.walls[w].len() + 1;
                wall_use[w] += 1;
            }
            let mut mon = 0;
            if b >= 1 && self.rng.random_bool(0.45) {
                mon = self.rng.random_range(1..=2usize.min(b));
            }
            let mut plan = Plan { k, j, v, mon, wall };
            let size = plan.size(&self.walls);
            if left - size < 4 {
                grow(&mut plan, left - size);
                left = 0;
            } else {
                left -= size;
            }
            plans.push(plan);
        }
        plans
    }

    pub(super) fn costs(
        &mut self,
        fast_ms: f64,
        ld: (f64, f64),
        slow_at_least: f64,
    ) -> ([Option<f64>; 2], [Option<f64>; 2]) {
        let s = self.u(1.3, 2.5);
        let tf = r2(fast_ms).max(0.01);
        let ts = r2((tf * s).max(slow_at_least));
        let lf = (self.u(ld.0, ld.1) * 100.0).round() / 100.0;
        let ls = ((lf + self.u(-0.05, 0.05)).clamp(0.01, 1.0) * 100.0).round() / 100.0;
        ([Some(tf), Some(ts)], [Some(lf.clamp(0.01, 1.0)), Some(ls)])
    }

    pub(super) fn add(&mut self, g: Grp) -> usize {
        self.groups.push(g);
        self.groups.len() - 1
    }

    pub(super) fn connect(&mut self, from: usize, to: usize, greedy: bool, vol: f64) {
        let (a, b) = (self.groups[from].n, self.groups[to].n);
        let pat = if a == b {
            if a > 1 && a <= 4 && self.rng.random_bool(0.15) {
                Pat::AllToAll
            } else {
                Pat::OneToOne
            }
        } else if a == 1 || b == 1 || (a * b <= 64 && self.rng.random_bool(0.5)) {
            Pat::AllToAll
        } else {
            Pat::Modulo
        };
        self.conns.push(Conn { from, to, greedy, pat, vol: vol.round().max(1.0) });
    }

    fn build_pipeline(&mut self, p: usize, plan: &Plan) {
        let prefix = format!("{}{p}", DOMAINS[p % DOMAINS.len()]);
        let mut pipe = Pipe { wall: plan.wall, ..Default::default() };
        let pace = r2(self.u(20.0, 80.0));
        let (t, ld) = self.costs(pace, (0.3, 0.9), 0.0);
        pipe.src = self.add(Grp::module(format!("{prefix}_source"), 1, t, ld));
        let input = self.u(10e3, 500e3);
        let mut from = pipe.src;
        if self.rng.random_bool(0.5) {
            let f = self.add(Grp::filter(format!("{prefix}_bcast"), "broadcast", 1));
            self.connect(pipe.src, f, false, input);
            pipe.bcast = Some(f);
            from = f;
        }
        let a = self.u(0.55, 0.95);
        let (t, ld) = self.costs(a * pace, (0.9, 0.99), 0.0);
        let mut sim = Grp::module(format!("{prefix}_sim"), plan.k, t, ld);
        if plan.k >= 2 {
            sim.mpi = Some(self.u(8e3, 512e3).round());
        }
        pipe.sim = self.add(sim);
        self.connect(from, pipe.sim, false, input);
        pipe.chain.push(pipe.sim);
        let field = self.u(0.5e6, 8e6);
        let mut last = pipe.sim;
        let mut last_vol = field / plan.k as f64;
        if plan.j > 0 {
            let a = self.u(0.3, 0.9);
            let (t, ld) = self.costs(a * pace, (0.7, 0.97), 0.0);
            let part = self.add(Grp::module(format!("{prefix}_particles"), plan.j, t, ld));
            if plan.k > 1 && self.rng.random_bool(0.3) {
                let m = self.add(Grp::filter(format!("{prefix}_merge"), "merge", 1));
                self.connect(pipe.sim, m, false, last_vol);
                self.connect(m, part, false, field / plan.j as f64);
                pipe.merge = Some(m);
            } else {
                self.connect(pipe.sim, part, false, last_vol);
            }
            pipe.part = Some(part);
            pipe.chain.push(part);
            last = part;
            last_vol = self.u(0.1e6, 4e6) / plan.j as f64;
        }
        if let Some(w) = plan.wall {
            pipe.vis_greedy = self.rng.random_bool(0.3);
            let (t, ld) = if pipe.vis_greedy {
                let own = self.u(0.4, 1.5) * pace;
                self.costs(own, (0.6, 0.95), 0.0)
            } else {
                let a = self.u(0.3, 0.9);
                self.costs(a * pace, (0.6, 0.95), 0.0)
            };
            let vis = self.add(Grp::module(format!("{prefix}_viewer"), plan.v, t, ld));
            self.connect(last, vis, pipe.vis_greedy, last_vol);
            if !pipe.vis_greedy {
                pipe.chain.push(vis);
            }
            pipe.vis = Some(vis);
            let wall = self.walls[w].clone();
            let mut tr = [None, None];
            let mut lr = [None, None];
            tr[self.display_ty] = Some(r2(self.u(8.0, 40.0)));
            lr[self.display_ty] = Some((self.u(0.6, 0.95) * 100.0).round() / 100.0);
            let mut rend = Grp::module(format!("{prefix}_renderer"), wall.len(), tr, lr);
            rend.pin = Some(wall.clone());
            let rend = self.add(rend);
            let render = self.u(0.5e6, 6e6);
            self.connect(vis, rend, true, render / plan.v as f64);
            let jt = self.u(1.0, 5.0);
            let (t, ld) = self.costs(jt, (0.01, 0.05), 0.0);
            let mut joy = Grp::module(format!("{prefix}_joypad"), 1, t, ld);
            // The wall's second pipeline puts its joypad on the wall's second node.
            let slot = self.pipes.iter().filter(|q| q.wall == Some(w)).count();
            joy.pin = Some(vec![wall[slot % wall.len()]]);
            let joy = self.add(joy);
            let v1 = self.u(32.0, 512.0);
            self.connect(joy, pipe.src, true, v1);
            let v2 = self.u(64.0, 1024.0);
            self.connect(joy, rend, true, v2);
            pipe.rend = Some(rend);
            pipe.joy = Some(joy);
        }
        if plan.mon > 0 {
            let k = self.rng.random_range(2..=8u32);
            let gat = self.add(Grp::filter(format!("{prefix}_gather"), "gather", k));
            let vol = self.u(10e3, 1e6);
            self.connect(pipe.sim, gat, false, vol);
            let a = self.u(0.2, 0.9);
            let (t, ld) = self.costs(a * k as f64 * pace, (0.3, 0.9), 0.0);
            let mon = self.add(Grp::module(format!("{prefix}_monitor"), plan.mon, t, ld));
            let out = vol * plan.k as f64 * self.u(0.5, 1.0);
            self.connect(gat, mon, false, out);
            pipe.gather = Some((gat, k));
            pipe.mon = Some(mon);
        }
        self.pipes.push(pipe);
    }

    /// Picks the pipelines with a min_frequency requirement and makes every synchronous
    /// ancestor of the required stage too slow on the slow type.
    fn choose_requirements(&mut self) {
        let n = self.pipes.len();
        let count = ((n as f64 * 0.25).round() as usize).clamp(1, n);
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut self.rng);
        for &p in order.iter().take(count) {
            let pipe = self.pipes[p].clone();
            let mut cands: Vec<usize> = pipe.chain[1..].to_vec();
            cands.extend(pipe.mon);
            if cands.is_empty() {
                cands.push(pipe.sim);
            }
            let r = self.pick(&cands);
            self.pipes[p].required = Some(r);
            // Ancestors: the source and the chain before r (for the monitor: the simulation).
            let pace = self.groups[pipe.src].t[FAST_T].expect("fast cost");
            let upto = pipe.chain.iter().position(|&g| g == r).unwrap_or(1);
            for &g in &pipe.chain[..upto] {
                let tf = self.groups[g].t[FAST_T].expect("fast cost");
                let ts = self.groups[g].t[SLOW_T].expect("slow cost");
                if ts < 1.12 * pace {
                    // Raise the fast T_exec (within the pace) so that slow = fast x s > 1.12 x pace.
                    let s = ts / tf;
                    let a = self.u((1.12 / s).max(0.55), 0.95);
                    let tf2 = r2(a * pace);
                    self.groups[g].t = [Some(tf2), Some(r2((tf2 * s).max(1.12 * pace + 0.01)))];
                }
            }
        }
    }

    /// Planted processor types: the source fast when a requirement needs it, else either; each
    /// FIFO stage slow when its slow T_exec keeps up with the pace, with probability 0.55.
    fn choose_types(&mut self) {
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let src_ty = if pipe.required.is_some() || self.rng.random_bool(0.5) { FAST_T } else { SLOW_T };
            self.groups[pipe.src].ty = src_ty;
            let pace = self.groups[pipe.src].t[src_ty].expect("cost");
            self.pipes[p].pace = pace;
            let mut sync: Vec<(usize, f64)> = pipe.chain.iter().map(|&g| (g, 1.0)).collect();
            if let (Some(m), Some((_, k))) = (pipe.mon, pipe.gather) {
                sync.push((m, k as f64));
            }
            for (g, ratio) in sync {
                let ts = self.groups[g].t[SLOW_T].expect("cost");
                let slow_ok = ts <= 0.98 * ratio * pace;
                self.groups[g].ty = if slow_ok && self.rng.random_bool(0.55) { SLOW_T } else { FAST_T };
            }
            if pipe.vis_greedy {
                let v = pipe.vis.expect("viewer");
                self.groups[v].ty = if self.rng.random_bool(0.5) { FAST_T } else { SLOW_T };
            }
            for g in [pipe.rend, pipe.joy].into_iter().flatten() {
                self.groups[g].ty = self.display_ty;
            }
        }
    }

    fn build_cluster(&mut self, nodes: usize, display: usize) {
        // Display racks: walls, at most 16 nodes a rack, CPUs for what is pinned there and more.
        let mut pinned = vec![0u32; display];
        for g in &self.groups {
            for &n in g.pin.iter().flatten() {
                pinned[n] += 1;
            }
        }
        let mut w = 0;
        while w < self.walls.len() {
            let first = self.walls[w][0];
            let mut count = 0;
            while w < self.walls.len() && count + self.walls[w].len() <= 16 {
                count += self.walls[w].len();
                w += 1;
            }
            let need = pinned[first..first + count].iter().copied().max().unwrap_or(0) + 1;
            let mut cpus = CPUS.iter().copied().find(|&c| c >= need).unwrap_or(32);
            if self.rng.random_bool(0.4) {
                cpus = step(cpus, 1);
            }
            self.racks.push(Rack { first, count, cpus, ty: self.display_ty, display: true, nets: vec![] });
        }
        // Compute racks, typed in proportion to the planted needs.
        let mut need = [0usize; 2];
        for g in &self.groups {
            if g.filter.is_none() && g.pin.is_none() {
                need[g.ty] += g.n;
            }
        }
        let mc = nodes - display;
        // Nodes of each type in proportion to the planted needs, then racks of ~4-16 nodes.
        let share = need[FAST_T] as f64 / (need[FAST_T] + need[SLOW_T]).max(1) as f64;
        let fast_nodes = ((share * mc as f64).round() as usize).clamp(1, mc - 1);
        let per = self.u(4.0, 16.0);
        let mut racks: Vec<(usize, usize)> = Vec::new();
        for (ty, count) in [(FAST_T, fast_nodes), (SLOW_T, mc - fast_nodes)] {
            let rc = ((count as f64 / per).round() as usize).clamp(1, count);
            let mut cuts: Vec<usize> = (1..count).collect();
            cuts.shuffle(&mut self.rng);
            let mut cuts: Vec<usize> = cuts.into_iter().take(rc - 1).collect();
            cuts.sort();
            let mut prev = 0;
            for c in cuts.into_iter().chain(std::iter::once(count)) {
                racks.push((ty, c - prev));
                prev = c;
            }
        }
        racks.shuffle(&mut self.rng);
        let rc = racks.len();
        let mut first = display;
        let compute0 = self.racks.len();
        for (ty, count) in racks {
            self.racks.push(Rack { first, count, cpus: 2, ty, display: false, nets: vec![] });
            first += count;
        }
        for ty in [FAST_T, SLOW_T] {
            let ids: Vec<usize> = (compute0..self.racks.len()).filter(|&r| self.racks[r].ty == ty).collect();
            let nodes_t: usize = ids.iter().map(|&r| self.racks[r].count).sum();
            let target = (need[ty] as f64 * self.u(1.5, 2.1)).max(2.0 * nodes_t as f64);
            let avg = target / nodes_t as f64;
            for &r in &ids {
                let want = avg * self.u(0.6, 1.6);
                self.racks[r].cpus = CPUS
                    .iter()
                    .copied()
                    .min_by(|a, b| (*a as f64 - want).abs().total_cmp(&(*b as f64 - want).abs()))
                    .expect("cpus");
            }
            let total = |racks: &[Rack]| ids.iter().map(|&r| racks[r].cpus as f64 * racks[r].count as f64).sum::<f64>();
            while total(&self.racks) < target {
                let up: Vec<usize> = ids.iter().copied().filter(|&r| self.racks[r].cpus < 32).collect();
                if up.is_empty() {
                    break;
                }
                let r = self.pick(&up);
                self.racks[r].cpus = step(self.racks[r].cpus, 1);
            }
        }
        // Networks.
        let three = rc >= 6 || self.rng.random_bool(0.5);
        let names: &[(&str, bool)] =
            if three { &[("eth", false), ("ib0", true), ("ib1", true)] } else { &[("eth", false), ("ib0", true)] };
        for &(name, fast) in names {
            let latency_ms = if fast { ceil3(self.u(0.001, 0.01)) } else { ceil3(self.u(0.02, 0.1)) };
            self.nets.push(Net { name: name.into(), fast, latency_ms });
        }
        let nr = self.racks.len();
        for r in 0..nr {
            self.racks[r].nets.push(0);
        }
        // One compute rack off the common network, if it has at most a third of its type's nodes.
        if rc >= 3 && self.rng.random_bool(0.5) {
            let r = self.rng.random_range(compute0..nr);
            let ty = self.racks[r].ty;
            let of_type: usize = (compute0..nr).filter(|&q| self.racks[q].ty == ty).map(|q| self.racks[q].count).sum();
            if 3 * self.racks[r].count <= of_type {
                self.racks[r].nets.clear();
                self.racks[r].nets.push(1);
            }
        }
        for net in 1..self.nets.len() {
            let mut on: Vec<usize> = (compute0..nr).filter(|_| self.rng.random_bool(0.5)).collect();
            if on.is_empty() {
                on.push(self.rng.random_range(compute0..nr));
            }
            if on.len() == rc && rc > 1 {
                on.remove(self.rng.random_range(0..on.len()));
            }
            for r in on {
                if !self.racks[r].nets.contains(&net) {
                    self.racks[r].nets.push(net);
                }
            }
            // Display racks are on ib0 (as LIFO's display nodes are on Myrinet), maybe on ib1.
            for r in 0..compute0 {
                if net == 1 || self.rng.random_bool(0.4) {
                    self.racks[r].nets.push(net);
                }
            }
        }
        // A fast network reaches only some racks: drop one (still on eth) if it reaches all.
        for net in 1..self.nets.len() {
            if self.racks.iter().all(|r| r.nets.contains(&net)) {
                let off: Vec<usize> = (compute0..nr).filter(|&r| self.racks[r].nets.contains(&0)).collect();
                let r = self.pick(&off);
                self.racks[r].nets.retain(|&k| k != net);
            }
        }
        for r in &mut self.racks {
            r.nets.sort();
        }
        self.rack_of = vec![0; nodes];
        self.free = vec![0; nodes];
        for (i, r) in self.racks.iter().enumerate() {
            for n in r.first..r.first + r.count {
                self.rack_of[n] = i;
                self.free[n] = r.cpus;
            }
        }
    }

    pub(super) fn on(&self, n: usize, net: usize) -> bool {
        self.racks[self.rack_of[n]].nets.contains(&net)
    }

    /// Free CPUs of compute nodes of type `ty` on network `net`.
    fn capacity(&self, net: usize, ty: usize) -> u32 {
        self.racks
            .iter()
            .filter(|r| !r.display && r.ty == ty && r.nets.contains(&net))
            .map(|r| (r.first..r.first + r.count).map(|n| self.free[n]).sum::<u32>())
            .sum()
    }

    /// Pinned objects (renderers, joypads) first, so that no other module takes their CPUs.
    fn plant_pinned(&mut self) {
        for g in 0..self.groups.len() {
            let Some(pins) = self.groups[g].pin.clone() else { continue };
            for &n in &pins {
                self.free[n] -= 1;
            }
            self.groups[g].nodes = pins;
        }
    }

    /// Places pipeline `p`: a zone (fast networks preferred), then one CPU per module.
    fn plant(&mut self, p: usize) -> Result<(), String> {
        let pipe = self.pipes[p].clone();
        let mut movable: Vec<usize> = vec![pipe.src];
        movable.extend(&pipe.chain);
        if pipe.vis_greedy {
            movable.extend(pipe.vis);
        }
        movable.extend(pipe.mon);
        let mut need = [0u32; 2];
        for &g in &movable {
            need[self.groups[g].ty] += self.groups[g].n as u32;
        }
        let nets: Vec<usize> = match pipe.wall {
            Some(w) => self.racks[self.rack_of[self.walls[w][0]]].nets.clone(),
            None => (0..self.nets.len()).collect(),
        };
        let fits = |b: &B, net: usize| (0..2).all(|t| b.capacity(net, t) >= need[t]);
        let ok: Vec<usize> = nets.iter().copied().filter(|&n| fits(self, n)).collect();
        let zone = if ok.is_empty() {
            // Add CPUs to racks of the network with the most room until the pipeline fits.
            let room = |b: &B, net: usize| {
                (0..2).map(|t| b.capacity(net, t) as i64 - need[t] as i64).min().expect("two types")
            };
            let net = nets.iter().copied().max_by_key(|&n| (room(self, n), std::cmp::Reverse(n))).expect("a network");
            for (t, &want) in need.iter().enumerate() {
                while self.capacity(net, t) < want {
                    let up: Vec<usize> = (0..self.racks.len())
                        .filter(|&r| {
                            let k = &self.racks[r];
                            !k.display && k.ty == t && k.nets.contains(&net) && k.cpus < 32
                        })
                        .collect();
                    if up.is_empty() {
                        return Err(format!("cannot plant pipeline {p}: too few CPUs"));
                    }
                    let r = self.pick(&up);
                    let old = self.racks[r].cpus;
                    let new = step(old, 1);
                    self.racks[r].cpus = new;
                    let (f, c) = (self.racks[r].first, self.racks[r].count);
                    for n in f..f + c {
                        self.free[n] += new - old;
                    }
                }
            }
            net
        } else {
            let weighted: Vec<usize> =
                ok.iter().flat_map(|&n| std::iter::repeat_n(n, if self.nets[n].fast { 4 } else { 1 })).collect();
            self.pick(&weighted)
        };
        self.pipes[p].zone = zone;
        let mut cur: [Option<usize>; 2] = [None, None];
        for &g in &movable {
            let ty = self.groups[g].ty;
            let wall = if Some(g) == pipe.vis { pipe.wall.map(|w| self.walls[w].clone()) } else { None };
            let mut nodes = Vec::new();
            for _ in 0..self.groups[g].n {
                let n = self.next_node(&mut cur[ty], ty, zone, wall.as_deref());
                self.free[n] -= 1;
                nodes.push(n);
            }
            self.groups[g].nodes = nodes;
        }
        // Filters on a neighbour's node.
        if let Some(f) = pipe.bcast {
            self.groups[f].nodes = vec![self.groups[pipe.src].nodes[0]];
        }
        if let Some(f) = pipe.merge {
            let part = pipe.part.expect("merge feeds particles");
            self.groups[f].nodes = vec![self.groups[part].nodes[0]];
        }
        if let (Some((f, _)), Some(m)) = (pipe.gather, pipe.mon) {
            self.groups[f].nodes = vec![self.groups[m].nodes[0]];
        }
        Ok(())
    }

    fn next_node(&mut self, cur: &mut Option<usize>, ty: usize, zone: usize, wall: Option<&[usize]>) -> usize {
        if let Some(c) = *cur {
            if self.free[c] > 0 && self.rng.random_bool(0.93) {
                return c;
            }
        }
        let mut cands: Vec<usize> = Vec::new();
        for r in &self.racks {
            if r.ty != ty || !r.nets.contains(&zone) || r.display {
                continue;
            }
            cands.extend((r.first..r.first + r.count).filter(|&n| self.free[n] > 0));
        }
        if let Some(w) = wall {
            if self.display_ty == ty && self.rng.random_bool(0.5) {
                let on_wall: Vec<usize> = w.iter().copied().filter(|&n| self.free[n] > 0).collect();
                if !on_wall.is_empty() {
                    let n = self.pick(&on_wall);
                    *cur = Some(n);
                    return n;
                }
            }
        }
        let cpus = |n: usize| self.racks[self.rack_of[n]].cpus;
        let used: Vec<usize> = cands.iter().copied().filter(|&n| self.free[n] < cpus(n)).collect();
        let fresh: Vec<usize> = cands.iter().copied().filter(|&n| self.free[n] == cpus(n)).collect();
        let n = if !used.is_empty() && (fresh.is_empty() || self.rng.random_bool(0.5)) {
            self.pick(&used)
        } else if !fresh.is_empty() {
            self.pick(&fresh)
        } else {
            // Capacity was checked for the zone as a whole.
            self.pick(&cands)
        };
        *cur = Some(n);
        n
    }

    /// Frequencies of every group in the planted mapping (Hz).
    fn frequencies(&mut self) {
        for pipe in self.pipes.clone() {
            let f = 1000.0 / pipe.pace;
            self.groups[pipe.src].hz = f;
            for &g in &pipe.chain {
                self.groups[g].hz = f;
            }
            for g in [pipe.bcast, pipe.merge].into_iter().flatten() {
                self.groups[g].hz = f;
            }
            if let (Some((gat, k)), Some(m)) = (pipe.gather, pipe.mon) {
                self.groups[gat].hz = f / k as f64;
                self.groups[m].hz = f / k as f64;
            }
            for g in [pipe.rend, pipe.joy].into_iter().flatten() {
                self.groups[g].hz = 1000.0 / self.groups[g].t[self.display_ty].expect("cost");
            }
            if pipe.vis_greedy {
                let v = pipe.vis.expect("viewer");
                self.groups[v].hz = 1000.0 / self.groups[v].t[self.groups[v].ty].expect("cost");
            }
        }
    }

    /// Every instance-level edge, with its rate in the planted mapping.
    pub(super) fn edges(&self) -> Vec<Edge> {
        let mut out = Vec::new();
        let mut names = std::collections::BTreeMap::new();
        for (ci, c) in self.conns.iter().enumerate() {
            let (a, b) = (&self.groups[c.from], &self.groups[c.to]);
            let base = format!("{}->{}", a.name, b.name);
            let k = names.entry(base.clone()).or_insert(0usize);
            let name = if *k == 0 { base.clone() } else { format!("{base}#{ci}") };
            *k += 1;
            for (i, j) in c.pat.pairs(a.n, b.n) {
                out.push(Edge {
                    conn: name.clone(),
                    conn_ix: Some(ci),
                    from: (c.from, i),
                    to: (c.to, j),
                    vol: c.vol,
                    rate: a.hz,
                });
            }
        }
        for (gi, g) in self.groups.iter().enumerate() {
            let Some(vol) = g.mpi else { continue };
            let n = g.n;
            let mut pairs: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
            if n > 2 {
                pairs.extend((0..n).map(|i| ((i + 1) % n, i)));
            }
            for (i, j) in pairs {
                out.push(Edge {
                    conn: format!("{}.mpi", g.name),
                    conn_ix: None,
                    from: (gi, i),
                    to: (gi, j),
                    vol,
                    rate: g.hz,
                });
            }
        }
        out
    }

    pub(super) fn node(&self, o: (usize, usize)) -> usize {
        self.groups[o.0].nodes[o.1]
    }

    /// A network for every non-local edge (None for local ones), and the `[[route]]` entries.
    pub(super) fn routes(&mut self, edges: &[Edge]) -> Result<(Vec<GenRoute>, Vec<Option<usize>>), String> {
        let mut chosen = vec![None; edges.len()];
        let mut k = 0;
        let mut out = Vec::new();
        while k < edges.len() {
            // One connection (or MPI exchange) at a time: edges k..end.
            let end = (k..edges.len()).find(|&e| edges[e].conn != edges[k].conn).unwrap_or(edges.len());
            // Heavy connections (1 MB/s or more per edge) prefer a fast network (3 in 4), light
            // ones eth.
            let heavy = edges[k].vol * edges[k].rate >= 1e6 && self.rng.random_bool(0.75);
            let fast: Vec<usize> = (0..self.nets.len()).filter(|&n| self.nets[n].fast).collect();
            let pref = if heavy { self.pick(&fast) } else { 0 };
            let mut ambiguous = Vec::new();
            for e in k..end {
                let (s, d) = (self.node(edges[e].from), self.node(edges[e].to));
                if s == d {
                    continue;
                }
                let shared: Vec<usize> = (0..self.nets.len()).filter(|&n| self.on(s, n) && self.on(d, n)).collect();
                if shared.is_empty() {
                    return Err(format!("planted edge {} crosses nodes with no common network", edges[e].conn));
                }
                let net = if shared.contains(&pref) {
                    pref
                } else {
                    let same: Vec<usize> = shared.iter().copied().filter(|&n| self.nets[n].fast == heavy).collect();
                    if same.is_empty() {
                        self.pick(&shared)
                    } else {
                        self.pick(&same)
                    }
                };
                chosen[e] = Some(net);
                if shared.len() > 1 {
                    ambiguous.push(e);
                }
            }
            let nets: Vec<usize> = (k..end).filter_map(|e| chosen[e]).collect();
            if !nets.is_empty() && nets.iter().all(|&n| n == nets[0]) {
                out.push(GenRoute {
                    connection: edges[k].conn.clone(),
                    from: None,
                    to: None,
                    network: self.nets[nets[0]].name.clone(),
                });
            } else {
                for e in ambiguous {
                    let (f, t) = (edges[e].from, edges[e].to);
                    out.push(GenRoute {
                        connection: edges[e].conn.clone(),
                        from: Some(self.groups[f.0].obj(f.1)),
                        to: Some(self.groups[t.0].obj(t.1)),
                        network: self.nets[chosen[e].expect("routed")].name.clone(),
                    });
                }
            }
            k = end;
        }
        Ok((out, chosen))
    }

    /// Bandwidth of every network, bytes per second, as written (MB/s rounded up to 0.001).
    pub(super) fn bandwidths(&self, edges: &[Edge], planned: &[Option<usize>], factor: f64) -> Vec<f64> {
        let nn = self.nets.len();
        let mut send = vec![0.0; self.free.len() * nn];
        let mut recv = vec![0.0; self.free.len() * nn];
        for (e, net) in edges.iter().zip(planned) {
            let Some(net) = *net else { continue };
            send[self.node(e.from) * nn + net] += e.vol * e.rate;
            recv[self.node(e.to) * nn + net] += e.vol * e.rate;
        }
        let busiest: Vec<f64> = (0..nn)
            .map(|k| (0..self.free.len()).map(|n| send[n * nn + k].max(recv[n * nn + k])).fold(0.0, f64::max))
            .collect();
        let top = busiest.iter().copied().fold(0.0, f64::max);
        busiest
            .iter()
            .map(|&b| {
                let use_ = if b > 0.0 {
                    b
                } else if top > 0.0 {
                    top
                } else {
                    100e6 / factor
                };
                ceil3(factor * use_ / 1e6) * 1e6
            })
            .collect()
    }

    /// eq 11 of the planted mapping for a path of objects, ms, with bandwidths `bw` (B/s).
    pub(super) fn latency(
        &self,
        path: &[(usize, usize)],
        edges: &[Edge],
        planned: &[Option<usize>],
        bw: &[f64],
    ) -> f64 {
        let mut l: f64 =
            path.iter().filter(|o| self.groups[o.0].filter.is_none()).map(|o| 1000.0 / self.groups[o.0].hz).sum();
        for w in path.windows(2) {
            let t = edges
                .iter()
                .zip(planned)
                .filter(|(e, _)| e.from == w[0] && e.to == w[1])
                .map(|(e, net)| match net {
                    Some(k) => e.vol / bw[*k] * 1000.0 + self.nets[*k].latency_ms,
                    None => 0.0,
                })
                .fold(0.0, f64::max);
            l += t;
        }
        l
    }

    fn requirements(
        &mut self,
        edges: &[Edge],
        planned: &[Option<usize>],
        bw: &[f64],
        bw_tight: &[f64],
    ) -> Vec<GenRequirement> {
        let mut out = Vec::new();
        for pipe in self.pipes.clone() {
            let Some(r) = pipe.required else { continue };
            let ratio = if Some(r) == pipe.mon { pipe.gather.expect("gather").1 as f64 } else { 1.0 };
            let eps = self.u(0.01, 0.05);
            let hz = (1000.0 / (ratio * pipe.pace * (1.0 + eps)) * 1e6).floor() / 1e6;
            let name = self.groups[r].name.clone();
            out.push(GenRequirement::MinFrequency { name: format!("{name}-rate"), module: name, hz });
        }
        // Latency: a random chain per pipeline whose planted source is fast.
        let mut cands = Vec::new();
        for p in 0..self.pipes.len() {
            let pipe = self.pipes[p].clone();
            let path = self.chain_path(&pipe, edges);
            let slack = self.u(0.02, 0.08);
            if self.groups[pipe.src].ty != FAST_T {
                continue;
            }
            // Lower bound with the source slow: FIFO-fed modules wait for it, others run at
            // best at their fastest T_exec.
            let slow_src = self.groups[pipe.src].t[SLOW_T].expect("cost");
            let fed: Vec<usize> = std::iter::once(pipe.src).chain(pipe.chain.iter().copied()).collect();
            let lb: f64 = path
                .iter()
                .filter(|o| self.groups[o.0].filter.is_none())
                .map(|o| if fed.contains(&o.0) { slow_src } else { self.groups[o.0].tmin() })
                .sum();
            let l_tight = self.latency(&path, edges, planned, bw_tight);
            let margin = (lb - l_tight) / l_tight;
            if margin > 0.05 {
                cands.push((p, path, lb, slack));
            }
        }
        let count = ((self.pipes.len() as f64 * 0.15).round() as usize).clamp(1, self.pipes.len());
        cands.shuffle(&mut self.rng);
        for (p, path, lb, slack) in cands.into_iter().take(count) {
            let l0 = self.latency(&path, edges, planned, bw);
            let max = ceil3(l0 + (slack * l0).min(0.5 * (lb - l0)));
            let names: Vec<String> = path.iter().map(|o| self.groups[o.0].obj(o.1)).collect();
            let src = &self.groups[self.pipes[p].src].name;
            out.push(GenRequirement::MaxLatency { name: format!("{src}-latency"), path: names, ms: max });
        }
        out
    }

    /// source -> [bcast] -> sim[i] -> [merge] -> particles[j] -> viewer[k] -> renderer[r],
    /// as far as the pipeline goes, following random edges.
    fn chain_path(&mut self, pipe: &Pipe, edges: &[Edge]) -> Vec<(usize, usize)> {
        let mut seq = vec![pipe.src];
        seq.extend(pipe.bcast);
        seq.push(pipe.sim);
        if pipe.part.is_some() {
            seq.extend(pipe.merge);
            seq.extend(pipe.part);
        }
        seq.extend(pipe.vis);
        seq.extend(pipe.rend);
        self.follow(&seq, edges)
    }

    /// A path of objects through the groups `seq`, from the first one's instance 0, following
    /// random connection edges.
    pub(super) fn follow(&mut self, seq: &[usize], edges: &[Edge]) -> Vec<(usize, usize)> {
        let mut path = vec![(seq[0], 0)];
        for &g in &seq[1..] {
            let at = *path.last().expect("non-empty");
            let next: Vec<(usize, usize)> =
                edges.iter().filter(|e| e.conn_ix.is_some() && e.from == at && e.to.0 == g).map(|e| e.to).collect();
            path.push(self.pick(&next));
        }
        path
    }

    pub(super) fn output(
        &self,
        name: String,
        requirements: Vec<GenRequirement>,
        routes: Vec<GenRoute>,
        bw: &[f64],
    ) -> Generated {
        let ranges = |v: &[usize]| -> Vec<String> {
            // Consecutive runs as ranges.
            let mut out = Vec::new();
            let mut i = 0;
            while i < v.len() {
                let mut j = i;
                while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
                    j += 1;
                }
                out.push(if j > i { format!("{}..{}", node_name(v[i]), node_name(v[j])) } else { node_name(v[i]) });
                i = j + 1;
            }
            out
        };
        let display: Vec<usize> =
            self.racks.iter().filter(|r| r.display).flat_map(|r| r.first..r.first + r.count).collect();
        let cost =
            |v: &[Option<f64>; 2]| GenCost::ByType((0..2).filter_map(|t| v[t].map(|x| (TYPE_NAMES[t], x))).collect());
        let mut modules = Vec::new();
        let mut filters = Vec::new();
        for g in &self.groups {
            match g.filter {
                Some((kind, ratio)) => filters.push(GenFilter { name: g.name.clone(), kind, ratio, instances: g.n }),
                None => modules.push(GenModule {
                    name: g.name.clone(),
                    instances: g.n,
                    texec_ms: cost(&g.t),
                    load: cost(&g.ld),
                    allowed: match &g.allowed {
                        Some(a) => Some(ranges(a)),
                        None => (g.t[0].is_none() || g.t[1].is_none()).then(|| ranges(&display)),
                    },
                    pin: g.pin.as_ref().map(|p| p.iter().map(|&n| node_name(n)).collect()),
                    mpi_ring_bytes: g.mpi,
                }),
            }
        }
        let connections = self
            .conns
            .iter()
            .map(|c| GenConnection {
                from: self.groups[c.from].name.clone(),
                to: self.groups[c.to].name.clone(),
                greedy: c.greedy,
                pattern: c.pat.name(),
                volume_bytes: c.vol,
            })
            .collect();
        let node_groups = self
            .racks
            .iter()
            .enumerate()
            .map(|(i, r)| GenNodeGroup {
                first: r.first,
                count: r.count,
                cpus: r.cpus,
                processor: TYPE_NAMES[r.ty],
                networks: r.nets.iter().map(|&k| self.nets[k].name.clone()).collect(),
                description: Some(format!("rack {i}{}", if r.display { ": display nodes" } else { "" })),
            })
            .collect();
        let networks = self
            .nets
            .iter()
            .zip(bw)
            .map(|(n, b)| GenNetwork { name: n.name.clone(), bandwidth_mbs: b / 1e6, latency_ms: n.latency_ms })
            .collect();
        let mut place = Vec::new();
        for g in &self.groups {
            for i in 0..g.n {
                place.push((g.obj(i), node_name(g.nodes[i])));
            }
        }
        Generated {
            name,
            readme: "models/realistic/README.md",
            notes: vec![],
            modules,
            filters,
            connections,
            requirements,
            node_groups,
            networks,
            place,
            routes,
            planted_nodes: None,
        }
    }

    /// The one change of an infeasible kind, applied to the output; returns (change, argument).
    fn break_it(&mut self, kind: RealisticKind, g: &mut Generated) -> (String, String) {
        match kind {
            RealisticKind::InfeasibleCpu => {
                // The display node with the most pinned (self-paced) modules.
                let mut count = vec![0u32; self.free.len()];
                for gr in &self.groups {
                    for &n in gr.pin.iter().flatten() {
                        count[n] += 1;
                    }
                }
                let d = (0..count.len()).max_by_key(|&n| (count[n], std::cmp::Reverse(n))).expect("nodes");
                let k = count[d];
                let old_cpus = set_node_cpus(&mut g.node_groups, d, k - 1);
                let names: Vec<String> = self
                    .groups
                    .iter()
                    .flat_map(|gr| {
                        gr.pin
                            .iter()
                            .flatten()
                            .enumerate()
                            .filter(|(_, &n)| n == d)
                            .map(|(i, _)| gr.obj(i))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                (
                    format!("node {} has {} CPUs instead of {}.", node_name(d), k - 1, old_cpus),
                    format!(
                        "{k} self-paced modules ({}; their inputs are all greedy) are pinned to {}; each must find an idle CPU in the first allocation round (on a loaded CPU LD_c < LD and it runs below its own pace: cpu-overload), and {} has {} CPUs.",
                        names.join(", "),
                        node_name(d),
                        node_name(d),
                        k - 1
                    ),
                )
            }
            RealisticKind::InfeasibleLink => {
                let p = (0..self.pipes.len())
                    .find(|&p| self.pipes[p].wall.is_some_and(|w| self.walls[w].len() >= 2))
                    .expect("the first pipeline is visual, on a wall of at least two nodes");
                let pipe = self.pipes[p].clone();
                let (joy, rend) = (pipe.joy.expect("joypad"), pipe.rend.expect("renderer"));
                let jn = self.groups[joy].nodes[0];
                let ri = self.groups[rend].nodes.iter().position(|&n| n != jn).expect("two wall nodes");
                let rn = self.groups[rend].nodes[ri];
                let shared: Vec<usize> = (0..self.nets.len()).filter(|&k| self.on(jn, k) && self.on(rn, k)).collect();
                let best = shared.iter().map(|&k| g.networks[k].bandwidth_mbs).fold(0.0, f64::max);
                let tj = self.groups[joy].t[self.display_ty].expect("cost");
                let vol = (1.25 * best * 1e6 * tj / 1000.0).ceil();
                let (jname, rname) = (self.groups[joy].name.clone(), self.groups[rend].name.clone());
                let c = g.connections.iter_mut().find(|c| c.from == jname && c.to == rname).expect("joypad->renderer");
                let old = c.volume_bytes;
                c.volume_bytes = vol;
                (
                    format!("connection {jname}->{rname} carries {vol} B per message instead of {old} B."),
                    format!(
                        "{jname} (pinned to {}) and {} (pinned to {}) are on different nodes, so their edge is not local; {jname} is self-paced, so in a sound mapping it sends every T_exec = {tj} ms: {:.3} MB/s, above the {best} MB/s of the fastest network both nodes are on.",
                        node_name(jn),
                        self.groups[rend].obj(ri),
                        node_name(rn),
                        vol / tj * 1000.0 / 1e6
                    ),
                )
            }
            RealisticKind::InfeasibleRequirement => {
                let p = (0..self.pipes.len()).find(|&p| self.pipes[p].required.is_some()).expect("a requirement");
                let pipe = self.pipes[p].clone();
                let r = pipe.required.expect("required");
                let ratio = if Some(r) == pipe.mon { pipe.gather.expect("gather").1 } else { 1 };
                let tsrc = self.groups[pipe.src].tmin();
                let hz = (1.05 * 1000.0 / (ratio as f64 * tsrc) * 1e6).ceil() / 1e6;
                let rname = self.groups[r].name.clone();
                let req = g
                    .requirements
                    .iter_mut()
                    .find_map(|q| match q {
                        GenRequirement::MinFrequency { module, hz, .. } if *module == rname => Some(hz),
                        _ => None,
                    })
                    .expect("requirement");
                let old = *req;
                *req = hz;
                let src = &self.groups[pipe.src].name;
                let (gather, k) = if ratio > 1 {
                    (format!(" and a {ratio}:1 gather"), format!("{ratio} x "))
                } else {
                    Default::default()
                };
                (
                    format!("{rname}'s min_frequency is {hz} Hz instead of {old} Hz."),
                    format!(
                        "{rname} waits for {src} through FIFO links{gather}, so its T_it is at least {k}T_it({src}) >= {k}{tsrc} ms ({src}'s T_exec on its fastest type): at most {:.6} Hz.",
                        1000.0 / (ratio as f64 * tsrc)
                    ),
                )
            }
            _ => unreachable!("feasible kinds are not broken"),
        }
    }
}

/// Gives node `d` `cpus` CPUs, splitting its node group around it; returns its old CPU count.
pub(super) fn set_node_cpus(node_groups: &mut Vec<GenNodeGroup>, d: usize, cpus: u32) -> u32 {
    let gi = node_groups.iter().position(|x| d >= x.first && d < x.first + x.count).expect("rack");
    let rack = node_groups[gi].clone();
    let mut parts = Vec::new();
    if d > rack.first {
        parts.push(GenNodeGroup { count: d - rack.first, ..rack.clone() });
    }
    parts.push(GenNodeGroup { first: d, count: 1, cpus, ..rack.clone() });
    if d + 1 < rack.first + rack.count {
        parts.push(GenNodeGroup { first: d + 1, count: rack.first + rack.count - d - 1, ..rack.clone() });
    }
    node_groups.splice(gi..gi + 1, parts);
    rack.cpus
}

/// The next CPU count up (`dir` = 1) in [`CPUS`].
pub(super) fn step(c: u32, dir: i32) -> u32 {
    let i = CPUS.iter().position(|&x| x >= c).unwrap_or(CPUS.len() - 1) as i32;
    CPUS[(i + dir).clamp(0, CPUS.len() as i32 - 1) as usize]
}

/// Adds `r` module instances to a plan (to the simulation first, up to 32).
fn grow(p: &mut Plan, mut r: usize) {
    while r > 0 {
        if p.k < 32 {
            p.k += 1;
        } else if p.j < 16 {
            p.j += 1;
        } else {
            p.mon += 1;
        }
        r -= 1;
    }
}
