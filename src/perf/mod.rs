//! The Jubertie–Melin performance model (perf-model paper, Section IV): the verifier's formulas.
//!
//! Owns: predicting, for one application, cluster and mapping, each module's T_I/O, CPU, LD_c,
//! T_cexec and T_it (eq 1–8 and the CPU-allocation algorithm), each filter's frequency, the
//! bandwidth every (node, network) link sends and receives (eq 9–10), and path latencies
//! (eq 11). It states facts; deciding what is wrong with them is `verify`'s job.
//!
//! Submodules: `sync` (G_sync, synchronous inputs, cycles, T_it), `alloc` (T_I/O and the
//! per-node CPU allocation), `network` (frequencies of filters, link bandwidth, latency).

mod alloc;
mod network;
pub mod sync;

pub use network::{edge_rates, object_frequencies, path_latency, LinkUse};
pub use sync::{lockstep_groups, static_inputs, Lockstep, StaticInput, SyncGraph, SyncInput, SyncShape};

use crate::model::{Application, Cluster, Mapping, NodeId, ObjectId};

/// Per-module results.
#[derive(Clone, Debug, PartialEq)]
pub struct ModulePerf {
    pub object: ObjectId,
    pub node: NodeId,
    /// The CPU (index within the node) the allocation algorithm gives the module.
    pub cpu: u32,
    /// T_exec on this node's processor type, seconds.
    pub texec: f64,
    /// LD on this node's processor type.
    pub ld: f64,
    /// T_I/O (eq 6 for predecessors, eq 7 otherwise), seconds.
    pub tio: f64,
    /// LD_c: the CPU share the allocation algorithm gives (0 means starved).
    pub ldc: f64,
    /// T_cexec = T_exec x LD / LD_c, seconds (infinite when starved).
    pub tcexec: f64,
    /// T_it (eq 3–5), seconds.
    pub tit: f64,
    /// T_it from the synchronisation analysis alone (eq 3–5 with T_cexec = T_exec): the pace the
    /// application would keep if no module were slowed by CPU concurrency.
    pub tit_sync: f64,
    /// The first allocation round (orders from `tit_sync`, eq 8 on configuration-1 nodes): what
    /// a sound mapping keeps.
    pub first: FirstRound,
}

/// One module's values in the first allocation round.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FirstRound {
    pub tio: f64,
    pub cpu: u32,
    pub ldc: f64,
    pub tcexec: f64,
    /// Position in its node's first-round order, and whether that order is eq 8's
    /// (configuration 1) rather than decreasing T_I/O.
    pub rank: u32,
    pub eq8: bool,
}

impl ModulePerf {
    /// F = 1 / T_it (eq 1), hertz.
    pub fn frequency(&self) -> f64 {
        if self.tit.is_finite() {
            1.0 / self.tit
        } else {
            0.0
        }
    }
    /// The load over a whole iteration, LD x T_exec / T_it (= LD_c x T_cexec / T_it; Table VI's LD_c).
    pub fn iteration_load(&self) -> f64 {
        if self.tit.is_finite() {
            self.ld * self.texec / self.tit
        } else {
            0.0
        }
    }
}

/// Whether the iterative ordering of mixed cycles (Section IV.B.2) settled, in every part of
/// G_dep.
#[derive(Clone, Debug, PartialEq)]
pub enum Schedule {
    /// The per-node orders stopped changing after `iterations` allocations (the most any part
    /// took).
    Converged { iterations: usize },
    /// In some parts the orders came back to an earlier state: they oscillate with this period
    /// (the least common multiple of the parts'), and these modules change rank (or T_it, with
    /// the iteration-load variant). The values reported are those of the last allocation.
    Unstable { modules: Vec<ObjectId>, period: usize },
    /// No repeat within the iteration limit in some part.
    NoConvergence { modules: Vec<ObjectId>, iterations: usize },
}

/// A module whose node's processor type has no cost in the description.
#[derive(Clone, Debug, PartialEq)]
pub struct MissingCost {
    pub object: ObjectId,
    pub node: NodeId,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// One entry per module, in object order.
    pub modules: Vec<ModulePerf>,
    /// Object index -> index into `modules`.
    pub module_of: Vec<Option<usize>>,
    /// F of every object (modules and filters), hertz, by object index.
    pub frequency: Vec<f64>,
    /// Messages per second on every edge, by edge index (F(src), or F(dest) after a greedy filter).
    pub edge_rate: Vec<f64>,
    /// Synchronous inputs of each module (index into `modules`).
    pub sync_inputs: Vec<Vec<SyncInput>>,
    /// Synchronous cycles (strongly connected components of G_sync with more than one module).
    pub cycles: Vec<Vec<ObjectId>>,
    /// Cycles too large to enumerate: their T_it is an upper bound.
    pub approximate_cycles: Vec<Vec<ObjectId>>,
    /// MPI groups running in lockstep (`mpi = { ..., lockstep = true }`): their instances.
    pub lockstep: Vec<Vec<ObjectId>>,
    /// Nodes in configuration 1 (only modules of one synchronous component, none a
    /// predecessor) with at least two modules: ordered by eq 8, which assumes their T_it equal.
    pub eq8_nodes: Vec<NodeId>,
    pub schedule: Schedule,
    /// Every (node, network) pair that carries traffic (eq 9–10).
    pub links: Vec<LinkUse>,
}

impl Prediction {
    pub fn module(&self, o: ObjectId) -> Option<&ModulePerf> {
        self.module_of.get(o.index()).copied().flatten().map(|i| &self.modules[i])
    }
}

/// What a module adds to its CPU's load CPULD in the allocation algorithm.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allocation {
    /// Its share LD_c: the published algorithm (the reference).
    #[default]
    Literal,
    /// Its load over an iteration, LD x T_exec / T_it, iterated with T_it to a fixed point: a
    /// module that waits for its inputs leaves the CPU to others meanwhile. Closer to the
    /// paper's measurements (README, "How close the model comes").
    IterationLoad,
}

impl Allocation {
    pub fn name(self) -> &'static str {
        match self {
            Allocation::Literal => "literal",
            Allocation::IterationLoad => "iteration-load",
        }
    }
}

/// Knobs of the model.
#[derive(Clone, Debug)]
pub struct Options {
    /// Upper bound on allocation rounds per part of G_dep when ordering mixed cycles.
    pub max_iterations: usize,
    /// The share of each resource a sound mapping may use (`verify` applies it).
    pub headroom: Headroom,
    pub allocation: Allocation,
}

impl Default for Options {
    fn default() -> Self {
        Options { max_iterations: 200, headroom: Headroom::default(), allocation: Allocation::Literal }
    }
}

/// Operators' margins: a sound mapping keeps every link's traffic, each way, within
/// `link` x BW(net), and every CPU's load over an iteration (Σ LD x T_exec / T_it of the modules
/// on it) within `cpu`. 1 (the default) allows exactly 100 %.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Headroom {
    pub link: f64,
    pub cpu: f64,
}

impl Default for Headroom {
    fn default() -> Self {
        Headroom { link: 1.0, cpu: 1.0 }
    }
}

impl Headroom {
    /// No margin asked for.
    pub fn is_none(&self) -> bool {
        self.link >= 1.0 && self.cpu >= 1.0
    }
}

/// Runs the model. Fails only when a module's costs are not given for its node's processor type.
pub fn predict(
    app: &Application,
    cluster: &Cluster,
    mapping: &Mapping,
    opts: &Options,
) -> Result<Prediction, Vec<MissingCost>> {
    // Costs on the mapped node's processor type.
    let mut modules = Vec::new();
    let mut module_of = vec![None; app.graph.node_count()];
    let mut missing = Vec::new();
    for o in app.modules() {
        let p = mapping.placement[o.index()];
        let node = cluster.node(p.node);
        let c = app.object(o).costs().expect("module");
        match (c.texec.on(&node.processor), c.load.on(&node.processor)) {
            (Some(texec), Some(ld)) => {
                module_of[o.index()] = Some(modules.len());
                modules.push(ModulePerf {
                    object: o,
                    node: p.node,
                    cpu: p.cpu.unwrap_or(0),
                    texec,
                    ld,
                    tio: 0.0,
                    ldc: ld,
                    tcexec: texec,
                    tit: texec,
                    tit_sync: texec,
                    first: FirstRound::default(),
                });
            }
            _ => missing.push(MissingCost { object: o, node: p.node }),
        }
    }
    if !missing.is_empty() {
        return Err(missing);
    }
    let sg = sync::SyncGraph::build(app, cluster, mapping);
    let (schedule, eq8_nodes) = alloc::solve_schedule(&sg, mapping, cluster, &mut modules, opts);
    let frequency = network::frequencies(app, &modules, &module_of);
    let edge_rate = network::edge_rates(app, &frequency);
    let links = network::links(app, cluster, mapping, &edge_rate);
    let cycles = sg.cycles.iter().map(|c| c.iter().map(|&i| modules[i].object).collect()).collect();
    let approximate_cycles =
        sg.approximate.iter().map(|&c| sg.cycles[c].iter().map(|&i| modules[i].object).collect()).collect();
    let lockstep = sg.lockstep.iter().map(|l| l.members.iter().map(|&i| modules[i].object).collect()).collect();
    Ok(Prediction {
        sync_inputs: sg.inputs,
        cycles,
        approximate_cycles,
        lockstep,
        eq8_nodes,
        modules,
        module_of,
        frequency,
        edge_rate,
        schedule,
        links,
    })
}

/// Communication time of one message on an edge (the term Vol/BW + L of eq 5 and 11); zero
/// for local or unreachable edges.
pub fn comm_time(app: &Application, cluster: &Cluster, mapping: &Mapping, e: crate::model::EdgeId) -> f64 {
    match mapping.route(e) {
        crate::model::Route::Net(n) => transfer_time(app.graph[e].volume, cluster.network(n)),
        _ => 0.0,
    }
}

/// One message of `volume` bytes over `net`: Vol / BW + L (eq 5 and 11).
pub fn transfer_time(volume: f64, net: &crate::model::Network) -> f64 {
    volume / net.bandwidth + net.latency
}
