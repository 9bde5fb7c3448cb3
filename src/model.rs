//! Validated domain types: the application graph, the cluster and a mapping.
//!
//! Owns: the shapes every later stage works on. Nothing here knows TOML or JSON; values are in SI
//! base units (seconds, bytes, bytes per second, hertz). Instances of parsed files are turned into
//! these types by `parse`, which guarantees the invariants listed on each type.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use std::collections::BTreeMap;

/// An object (module or filter instance) of the application graph.
pub type ObjectId = NodeIndex<u32>;
/// An edge (one instance-level connection, or an MPI exchange) of the application graph.
pub type EdgeId = EdgeIndex<u32>;

/// A cluster node, by index into [`Cluster::nodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);
/// A network, by index into [`Cluster::networks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NetworkId(pub u32);
/// A declared group of objects (`[[modules]]` or `[[filters]]` entry), by index into [`Application::groups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(pub u32);
/// A declared connection (`[[connections]]` entry or a module's MPI exchange), by index into
/// [`Application::connections`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectionId(pub u32);

impl NodeId {
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}
impl NetworkId {
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}
impl GroupId {
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}
impl ConnectionId {
    pub fn ix(self) -> usize {
        self.0 as usize
    }
}

/// A value that is either the same on every processor type or given per type.
#[derive(Clone, Debug, PartialEq)]
pub enum PerType {
    Uniform(f64),
    ByType(BTreeMap<String, f64>),
}

impl PerType {
    /// The value on a processor of type `processor`, if the description gives one.
    pub fn on(&self, processor: &str) -> Option<f64> {
        match self {
            PerType::Uniform(v) => Some(*v),
            PerType::ByType(m) => m.get(processor).copied(),
        }
    }
}

/// What a filter does to messages (perf-model paper, Section III.A and IV.B.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKind {
    /// Forwards the newest message when its destination asks: F(f) = F(dest). Breaks synchrony.
    Greedy,
    /// Copies each message to every output: F(f) = F(src).
    Broadcast,
    /// Combines one message from each input into one (`ratio` = 1), or `ratio` messages per
    /// input into one (a k:1 gather): F(f) = min F(src) / ratio.
    Merge { ratio: u32 },
    /// Splits each message into one part per output: F(f) = F(src).
    Scatter,
}

impl FilterKind {
    pub fn name(&self) -> &'static str {
        match self {
            FilterKind::Greedy => "greedy",
            FilterKind::Broadcast => "broadcast",
            FilterKind::Merge { .. } => "merge",
            FilterKind::Scatter => "scatter",
        }
    }
    /// How many input messages make one output message (1 except for k:1 gathers).
    pub fn ratio(&self) -> u32 {
        match self {
            FilterKind::Merge { ratio } => *ratio,
            _ => 1,
        }
    }
}

/// Costs of one module instance when it runs alone on a processor.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleCosts {
    /// T_exec, seconds (> 0).
    pub texec: PerType,
    /// LD, the share of T_exec spent on the CPU (0 < LD <= 1).
    pub load: PerType,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ObjectKind {
    Module(ModuleCosts),
    Filter(FilterKind),
}

/// One module or filter instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// `group` for a group of one instance, `group[i]` otherwise.
    pub name: String,
    pub group: GroupId,
    pub index: usize,
    pub kind: ObjectKind,
}

impl Object {
    pub fn is_module(&self) -> bool {
        matches!(self.kind, ObjectKind::Module(_))
    }
    pub fn costs(&self) -> Option<&ModuleCosts> {
        match &self.kind {
            ObjectKind::Module(c) => Some(c),
            ObjectKind::Filter(_) => None,
        }
    }
    pub fn filter(&self) -> Option<FilterKind> {
        match &self.kind {
            ObjectKind::Filter(k) => Some(*k),
            ObjectKind::Module(_) => None,
        }
    }
}

/// FIFO connections make the destination wait for the source; greedy ones do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    Fifo,
    Greedy,
}

/// How a declared connection is expanded to instance-level edges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Instance i to instance i (equal counts).
    OneToOne,
    /// Every source instance to every destination instance.
    AllToAll,
    /// Instance i of the larger group to instance i mod n of the smaller one.
    Modulo,
}

/// What an edge is for: a FlowVR connection, or data exchanged outside FlowVR by a parallel
/// (MPI) module, which costs bandwidth but does not synchronise (perf-model paper, "Networking").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeRole {
    Flow(Sync),
    Mpi,
}

/// One instance-level edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub connection: ConnectionId,
    pub role: EdgeRole,
    /// Vol(e), bytes per message (>= 0).
    pub volume: f64,
}

/// A declared group of instances.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub objects: Vec<ObjectId>,
    pub is_module: bool,
    /// Placement constraint: the nodes every instance may use (names; resolved against a cluster).
    pub allowed_nodes: Option<Vec<String>>,
    /// Placement constraint: instance i must be on node `pins[i]`.
    pub pins: Option<Vec<String>>,
}

/// A declared connection group (or a module's MPI exchange), for naming and routing.
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    /// `from->to` unless the description names it; `module.mpi` for MPI exchanges.
    pub name: String,
    pub edges: Vec<EdgeId>,
    /// An MPI exchange whose instances run in lockstep (`mpi = { ..., lockstep = true }`): they
    /// share the slowest instance's T_it plus the exchange's transfer time.
    pub lockstep: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Requirement {
    /// Every instance of the module group reaches at least this frequency (Hz).
    MinFrequency { name: String, group: GroupId, hz: f64 },
    /// The path's latency (eq 11) stays at or below `max_s` seconds.
    MaxLatency { name: String, path: Vec<ObjectId>, max_s: f64 },
}

/// A validated application: the FlowVR network G(V, E) with costs and volumes evaluated for one
/// set of parameter values.
///
/// Invariants: every object belongs to exactly one group; module costs satisfy T_exec > 0 and
/// 0 < LD <= 1; volumes are >= 0; every cycle of the graph contains a module; no synchronous
/// cycle passes through a k:1 filter with k > 1.
#[derive(Clone, Debug)]
pub struct Application {
    pub name: String,
    pub parameters: BTreeMap<String, f64>,
    pub graph: DiGraph<Object, Edge, u32>,
    pub groups: Vec<Group>,
    pub connections: Vec<Connection>,
    pub requirements: Vec<Requirement>,
    /// Memo: the mapping-independent shape of G_sync (`perf::SyncShape`), computed on first use
    /// by the performance model. Derived from `graph`, which is never changed after parsing.
    pub sync_shape: std::sync::OnceLock<std::sync::Arc<crate::perf::SyncShape>>,
}

impl Application {
    pub fn object(&self, id: ObjectId) -> &Object {
        &self.graph[id]
    }
    pub fn modules(&self) -> impl Iterator<Item = ObjectId> + '_ {
        self.graph.node_indices().filter(move |&o| self.graph[o].is_module())
    }
    pub fn find_object(&self, name: &str) -> Option<ObjectId> {
        self.graph.node_indices().find(|&o| self.graph[o].name == name)
    }
    pub fn find_group(&self, name: &str) -> Option<GroupId> {
        self.groups.iter().position(|g| g.name == name).map(|i| GroupId(i as u32))
    }
    pub fn group(&self, id: GroupId) -> &Group {
        &self.groups[id.ix()]
    }
    /// A readable name for an edge: `src -> dst (connection)`.
    pub fn edge_name(&self, e: EdgeId) -> String {
        let (s, d) = self.graph.edge_endpoints(e).expect("edge of this graph");
        format!("{} -> {}", self.graph[s].name, self.graph[d].name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub name: String,
    /// BW(net), bytes per second, each way (full duplex), per node link.
    pub bandwidth: f64,
    /// L(net), seconds.
    pub latency: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub name: String,
    pub cpus: u32,
    pub processor: String,
    /// Nets(n), in declaration order of the cluster's networks.
    pub networks: Vec<NetworkId>,
}

/// A validated cluster. Invariants: names are unique; every node has >= 1 CPU and is on
/// declared networks only; bandwidths are > 0 and latencies >= 0.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub name: String,
    pub nodes: Vec<Node>,
    pub networks: Vec<Network>,
}

impl Cluster {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.ix()]
    }
    pub fn network(&self, id: NetworkId) -> &Network {
        &self.networks[id.ix()]
    }
    pub fn find_node(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(|i| NodeId(i as u32))
    }
    pub fn find_network(&self, name: &str) -> Option<NetworkId> {
        self.networks.iter().position(|n| n.name == name).map(|i| NetworkId(i as u32))
    }
    pub fn on_network(&self, node: NodeId, net: NetworkId) -> bool {
        self.nodes[node.ix()].networks.contains(&net)
    }
    /// Networks both nodes are on, in declaration order.
    pub fn shared_networks(&self, a: NodeId, b: NodeId) -> Vec<NetworkId> {
        let nb = &self.nodes[b.ix()].networks;
        self.nodes[a.ix()].networks.iter().copied().filter(|n| nb.contains(n)).collect()
    }
}

/// Where one object runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    pub node: NodeId,
    /// A CPU the user pinned the module to (index within the node); None lets the scheduler choose.
    pub cpu: Option<u32>,
}

/// The network an edge uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Both ends on one node: shared memory, costless.
    Local,
    Net(NetworkId),
    /// The endpoints' nodes share no network.
    Unreachable,
}

/// A complete mapping: every object placed, every edge routed.
#[derive(Clone, Debug, PartialEq)]
pub struct Mapping {
    /// Indexed by `ObjectId::index()`.
    pub placement: Vec<Placement>,
    /// Indexed by `EdgeId::index()`.
    pub routes: Vec<Route>,
}

impl Mapping {
    pub fn node_of(&self, o: ObjectId) -> NodeId {
        self.placement[o.index()].node
    }
    pub fn route(&self, e: EdgeId) -> Route {
        self.routes[e.index()]
    }
}
