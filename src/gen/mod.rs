//! Synthetic instances for tests and benchmarks, seeded, with a planted sound mapping.
//!
//! Owns: choosing the numbers (as plain specs, [`Generated`]); `report::gen` writes them in the
//! description formats. Three families: `pipeline` (this file, [`generate`]), `realistic`
//! ([`realistic::generate`]: several processor types, pinned displays, filters, MPI rings,
//! partial networks and binding requirements; see that module) and `hard`
//! ([`hard::generate`]: the realistic shape made adversarial, with dense planted mappings).
//!
//! The pipeline family. Construction: stages of module groups linked one-to-one, all-to-all or modulo, FIFO
//! or greedy. A FIFO stage runs faster than its input's pace, so the synchronisation analysis
//! keeps every stage at its source's pace. The planted mapping gives every module its own CPU
//! (no slowdown) and routes each non-local edge on a network both nodes share; each network's
//! bandwidth is then set to its busiest link's traffic x (1 + slack). So `Feasible` and `Tight`
//! instances have the planted mapping (sound by construction; checked in tests), and
//! `Infeasible` ones add self-paced modules until they outnumber the CPUs: each needs an idle
//! CPU of its own in the first allocation round, so no mapping can exist.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

pub mod hard;
pub mod realistic;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenKind {
    /// Bandwidths 30 % above the planted mapping's busiest link.
    Feasible,
    /// 1 % above.
    Tight,
    /// More self-paced modules than CPUs.
    Infeasible,
}

#[derive(Clone, Debug)]
pub struct GenOptions {
    pub modules: usize,
    pub nodes: usize,
    pub seed: u64,
    pub kind: GenKind,
}

/// A module's T_exec (ms) or LD: one value, or one per processor type.
#[derive(Clone, Debug, PartialEq)]
pub enum GenCost {
    Uniform(f64),
    ByType(Vec<(&'static str, f64)>),
}

#[derive(Clone, Debug)]
pub struct GenModule {
    pub name: String,
    pub instances: usize,
    pub texec_ms: GenCost,
    pub load: GenCost,
    /// Node names or ranges (`n0001..n0004`).
    pub allowed: Option<Vec<String>>,
    /// Node names or ranges, one node per instance once expanded.
    pub pin: Option<Vec<String>>,
    /// MPI ring among the instances: bytes per message.
    pub mpi_ring_bytes: Option<f64>,
}

impl GenModule {
    /// A module with one T_exec (ms) and LD on every processor type, unconstrained.
    pub fn uniform(name: String, instances: usize, texec_ms: f64, load: f64) -> GenModule {
        GenModule {
            name,
            instances,
            texec_ms: GenCost::Uniform(texec_ms),
            load: GenCost::Uniform(load),
            allowed: None,
            pin: None,
            mpi_ring_bytes: None,
        }
    }
}

/// A filter group.
#[derive(Clone, Debug)]
pub struct GenFilter {
    pub name: String,
    /// broadcast | merge | gather | scatter | greedy
    pub kind: &'static str,
    /// Input messages per output message (gather k:1); 1 otherwise.
    pub ratio: u32,
    pub instances: usize,
}

#[derive(Clone, Debug)]
pub enum GenRequirement {
    MinFrequency { name: String, module: String, hz: f64 },
    MaxLatency { name: String, path: Vec<String>, ms: f64 },
}

/// One `[[route]]` entry of a mapping; `from`/`to` select instances (None: every edge).
#[derive(Clone, Debug)]
pub struct GenRoute {
    pub connection: String,
    pub from: Option<String>,
    pub to: Option<String>,
    pub network: String,
}

#[derive(Clone, Debug)]
pub struct GenConnection {
    pub from: String,
    pub to: String,
    pub greedy: bool,
    pub pattern: &'static str,
    pub volume_bytes: f64,
}

#[derive(Clone, Debug)]
pub struct GenNodeGroup {
    pub first: usize,
    pub count: usize,
    pub cpus: u32,
    pub processor: &'static str,
    pub networks: Vec<String>,
    pub description: Option<String>,
}

#[derive(Clone, Debug)]
pub struct GenNetwork {
    pub name: String,
    pub bandwidth_mbs: f64,
    pub latency_ms: f64,
}

#[derive(Clone, Debug)]
pub struct Generated {
    pub name: String,
    /// The README that describes the family (named in the files' first line).
    pub readme: &'static str,
    /// Comment lines for the head of the application and cluster files.
    pub notes: Vec<String>,
    pub modules: Vec<GenModule>,
    pub filters: Vec<GenFilter>,
    pub connections: Vec<GenConnection>,
    pub requirements: Vec<GenRequirement>,
    pub node_groups: Vec<GenNodeGroup>,
    pub networks: Vec<GenNetwork>,
    /// Planted placement: (instance name, node name); empty for infeasible instances.
    pub place: Vec<(String, String)>,
    /// Planted routes.
    pub routes: Vec<GenRoute>,
    /// Nodes the planted mapping uses (realistic family; None for the pipeline family).
    pub planted_nodes: Option<usize>,
}

impl Generated {
    /// Whether a planted (sound) mapping comes with the instance.
    pub fn has_mapping(&self) -> bool {
        !self.place.is_empty()
    }
}

pub fn node_name(i: usize) -> String {
    format!("n{i:04}")
}

/// `name` for a group of one instance, `name[i]` otherwise (the parser's naming).
pub(crate) fn inst(name: &str, count: usize, i: usize) -> String {
    if count == 1 {
        name.to_string()
    } else {
        format!("{name}[{i}]")
    }
}

pub fn generate(o: &GenOptions) -> Generated {
    let mut rng = StdRng::seed_from_u64(o.seed);
    // Cluster: 2-4 node groups, two processor types, CPUs 2..64, so that CPUs >= 1.5 x modules.
    let groups = rng.random_range(2..=4usize).min(o.nodes.max(1));
    let mut node_groups = Vec::new();
    let mut first = 0;
    let sizes = [2u32, 4, 8, 16, 32, 64];
    for g in 0..groups {
        let count = if g + 1 == groups { o.nodes - first } else { (o.nodes / groups).max(1) };
        node_groups.push(GenNodeGroup {
            first,
            count,
            cpus: sizes[rng.random_range(0..3usize)],
            processor: if g % 2 == 0 { "a" } else { "b" },
            networks: vec!["common".into()],
            description: None,
        });
        first += count;
    }
    let target_cpus = (o.modules as f64 * 1.5).ceil() as u32;
    while node_groups.iter().map(|g| g.cpus * g.count as u32).sum::<u32>() < target_cpus {
        let g = rng.random_range(0..node_groups.len());
        let next = sizes.iter().copied().find(|&c| c > node_groups[g].cpus).unwrap_or(64);
        node_groups[g].cpus = next;
        if node_groups.iter().all(|g| g.cpus == 64) {
            break;
        }
    }
    // Networks: a common one, and 1-3 more each covering one or two groups.
    let extra = rng.random_range(1..=3usize);
    let mut net_names = vec!["common".to_string()];
    for k in 0..extra {
        let name = format!("net{k}");
        let a = rng.random_range(0..node_groups.len());
        node_groups[a].networks.push(name.clone());
        if rng.random_bool(0.5) {
            let b = rng.random_range(0..node_groups.len());
            if !node_groups[b].networks.contains(&name) {
                node_groups[b].networks.push(name.clone());
            }
        }
        net_names.push(name);
    }
    let node_group_of =
        |n: usize| node_groups.iter().position(|g| n >= g.first && n < g.first + g.count).expect("node in a group");
    let cpus_of = |n: usize| node_groups[node_group_of(n)].cpus as usize;
    let nets_of = |n: usize| node_groups[node_group_of(n)].networks.clone();

    // Application: stages of groups; paces flow along FIFO links.
    let mut modules: Vec<GenModule> = Vec::new();
    let mut pace: Vec<f64> = Vec::new();
    let mut connections = Vec::new();
    let mut total = 0;
    let counts = [1usize, 2, 4, 8, 16];
    while total < o.modules {
        let left = o.modules - total;
        let k = counts.iter().copied().filter(|&c| c <= left).nth(rng.random_range(0..5usize)).unwrap_or(1).min(left);
        let name = format!("s{}", modules.len());
        let (texec, p);
        if modules.is_empty() || rng.random_bool(0.15) {
            texec = rng.random_range(40.0..80.0f64).round();
            p = texec;
            modules.push(GenModule::uniform(
                name.clone(),
                k,
                texec,
                (rng.random_range(0.5..0.97f64) * 100.0).round() / 100.0,
            ));
            pace.push(p);
        } else {
            let up = rng.random_range(modules.len().saturating_sub(3)..modules.len());
            let greedy = rng.random_bool(0.3);
            if greedy {
                texec = rng.random_range(20.0..80.0f64).round();
                p = texec;
            } else {
                texec = (pace[up] * rng.random_range(0.3..0.9f64)).round().max(1.0);
                p = pace[up];
            }
            let (a, b) = (modules[up].instances, k);
            let pattern = if a == b {
                "one-to-one"
            } else if rng.random_bool(0.5) {
                "all-to-all"
            } else {
                "modulo"
            };
            let volume = (rng.random_range(10e3..2e6f64) / 1e3).round() * 1e3;
            connections.push(GenConnection {
                from: modules[up].name.clone(),
                to: name.clone(),
                greedy,
                pattern,
                volume_bytes: volume,
            });
            modules.push(GenModule::uniform(name, k, texec, (rng.random_range(0.5..0.97f64) * 100.0).round() / 100.0));
            pace.push(p);
        }
        total += k;
    }
    // Planted placement: every instance on a node with a free CPU, near its input half the time.
    let mut free: Vec<usize> = (0..o.nodes).map(cpus_of).collect();
    let mut place: BTreeMap<String, usize> = BTreeMap::new();
    let mut last = 0usize;
    for m in &modules {
        for i in 0..m.instances {
            let mut n = if rng.random_bool(0.5) && free[last] > 0 { last } else { rng.random_range(0..o.nodes) };
            let mut tries = 0;
            while free[n] == 0 && tries < o.nodes {
                n = (n + 1) % o.nodes;
                tries += 1;
            }
            free[n] -= 1;
            last = n;
            place.insert(inst(&m.name, m.instances, i), n);
        }
    }
    // Pin a few groups where they were planted (placement constraints).
    for m in modules.iter_mut() {
        if rng.random_bool(0.05) {
            m.pin = Some((0..m.instances).map(|i| node_name(place[&inst(&m.name, m.instances, i)])).collect());
        }
    }
    // Routes and traffic at the synchronisation frequencies.
    let mut routes = Vec::new();
    let mut traffic: BTreeMap<(usize, String, bool), f64> = BTreeMap::new();
    for c in &connections {
        let (fm, tm) = (
            modules.iter().position(|m| m.name == c.from).unwrap(),
            modules.iter().position(|m| m.name == c.to).unwrap(),
        );
        let (a, b) = (modules[fm].instances, modules[tm].instances);
        let pairs: Vec<(usize, usize)> = match c.pattern {
            "one-to-one" => (0..a).map(|i| (i, i)).collect(),
            "all-to-all" => (0..a).flat_map(|i| (0..b).map(move |j| (i, j))).collect(),
            _ => {
                if a >= b {
                    (0..a).map(|i| (i, i % b)).collect()
                } else {
                    (0..b).map(|j| (j % a, j)).collect()
                }
            }
        };
        let rate = 1000.0 / pace[fm];
        for (i, j) in pairs {
            let (si, di) = (inst(&c.from, a, i), inst(&c.to, b, j));
            let (ns, nd) = (place[&si], place[&di]);
            if ns == nd {
                continue;
            }
            let shared: Vec<String> = nets_of(ns).into_iter().filter(|k| nets_of(nd).contains(k)).collect();
            let k = shared[rng.random_range(0..shared.len())].clone();
            *traffic.entry((ns, k.clone(), true)).or_default() += c.volume_bytes * rate;
            *traffic.entry((nd, k.clone(), false)).or_default() += c.volume_bytes * rate;
            routes.push(GenRoute {
                connection: format!("{}->{}", c.from, c.to),
                from: Some(si),
                to: Some(di),
                network: k,
            });
        }
    }
    let slack = match o.kind {
        GenKind::Tight => 0.01,
        _ => 0.3,
    };
    let networks = net_names
        .iter()
        .map(|k| {
            let busiest = traffic.iter().filter(|((_, n, _), _)| n == k).map(|(_, v)| *v).fold(0.0, f64::max);
            GenNetwork {
                name: k.clone(),
                bandwidth_mbs: ((busiest * (1.0 + slack) / 1e6).ceil()).max(10.0),
                latency_ms: (rng.random_range(0.01..0.1f64) * 100.0).round() / 100.0,
            }
        })
        .collect();
    let mut place: Vec<(String, String)> = place.into_iter().map(|(o, n)| (o, node_name(n))).collect();
    if o.kind == GenKind::Infeasible {
        let cpus: usize = (0..o.nodes).map(cpus_of).sum();
        modules.push(GenModule::uniform("hog".into(), cpus + 1, 10.0, 0.9));
        place.clear();
        routes.clear();
    }
    let kind = match o.kind {
        GenKind::Feasible => "feasible",
        GenKind::Tight => "tight",
        GenKind::Infeasible => "infeasible",
    };
    Generated {
        name: format!("gen-{}x{}-{kind}-s{}", o.modules, o.nodes, o.seed),
        readme: "models/generated/README.md",
        notes: Vec::new(),
        modules,
        filters: Vec::new(),
        connections,
        requirements: Vec::new(),
        node_groups,
        networks,
        place,
        routes,
        planted_nodes: None,
    }
}
