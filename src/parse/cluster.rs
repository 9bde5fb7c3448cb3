//! The cluster format (`clusters/*.toml`): networks, node groups, and what-if overlays that
//! `extends` another cluster file and add, replace, remove, attach or detach networks and nodes.

use super::app::{measured, Scalar};
use super::doc::Doc;
use super::suggest::{hint, listing};
use super::units::Dim;
use super::{caps, short, valid_name, Expander, NAME_RULE};
use crate::error::{InputError, InputErrors, Sink};
use crate::model::{Cluster, Network, NetworkId, Node};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use toml::Spanned;

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    name: Option<String>,
    #[allow(dead_code)]
    description: Option<String>,
    extends: Option<Spanned<String>>,
    #[serde(default)]
    remove_networks: Vec<Spanned<String>>,
    #[serde(default)]
    remove_nodes: Vec<Spanned<String>>,
    #[serde(default)]
    networks: Vec<RawNetwork>,
    #[serde(default)]
    nodes: Vec<RawNodes>,
    #[serde(default)]
    attach: Vec<RawAttach>,
    #[serde(default)]
    detach: Vec<RawAttach>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    name: Spanned<String>,
    #[allow(dead_code)]
    description: Option<String>,
    bandwidth: Spanned<Scalar>,
    latency: Spanned<Scalar>,
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum Names {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawNodes {
    names: Spanned<Names>,
    #[allow(dead_code)]
    description: Option<String>,
    cpus: Spanned<i64>,
    processor: String,
    networks: Spanned<Vec<String>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawAttach {
    nodes: Spanned<Names>,
    networks: Spanned<Vec<String>>,
}

/// Working form while overlays are applied: networks by name (declaration order kept) and
/// nodes with network names, indexed by name so that a 100,000-node range is read in linear time.
#[derive(Default)]
struct Draft {
    name: String,
    networks: Vec<Network>,
    nodes: Vec<DraftNode>,
    index: HashMap<String, usize>,
}

struct DraftNode {
    name: String,
    cpus: u32,
    processor: String,
    networks: Vec<String>,
}

impl Draft {
    fn node_mut(&mut self, name: &str) -> Option<&mut DraftNode> {
        self.index.get(name).map(|&i| &mut self.nodes[i])
    }
    /// Adds a node, or replaces the one of the same name. False when the cluster is full.
    fn put(&mut self, n: DraftNode) -> bool {
        match self.index.get(&n.name) {
            Some(&i) => self.nodes[i] = n,
            None if self.nodes.len() >= caps::NODES => return false,
            None => {
                self.index.insert(n.name.clone(), self.nodes.len());
                self.nodes.push(n);
            }
        }
        true
    }
    fn remove(&mut self, names: &HashSet<String>) {
        self.nodes.retain(|n| !names.contains(&n.name));
        self.index = self.nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();
    }
}

/// Files in an `extends` chain (cluster or application).
pub(super) const MAX_CHAIN: usize = 32;

pub(super) fn load(path: &Path, chain: &mut Vec<PathBuf>) -> Result<Cluster, InputErrors> {
    let draft = load_draft(path, super::read_file(path)?, chain)?;
    let file = path.display().to_string();
    finish(draft, &file)
}

fn load_draft(path: &Path, src: String, chain: &mut Vec<PathBuf>) -> Result<Draft, InputErrors> {
    let file = path.display().to_string();
    chain.push(path.canonicalize().unwrap_or_else(|_| path.to_path_buf()));
    let doc = Doc::new(&src, &file);
    let raw: RawCluster = doc.deserialize()?;
    let mut draft = match &raw.extends {
        Some(base) => {
            let base_path = path.parent().unwrap_or(Path::new(".")).join(base.get_ref());
            let refuse = |msg: String| InputErrors::from(InputError::new(&file, doc.line(base.span()), "extends", msg));
            if chain.len() >= MAX_CHAIN {
                return Err(refuse(format!("more than {MAX_CHAIN} cluster files extend one another")));
            }
            if base_path.canonicalize().is_ok_and(|c| chain.contains(&c)) {
                return Err(refuse(format!(
                    "{} is already in the chain: cluster files extend each other in a loop",
                    base_path.display()
                )));
            }
            match super::read_checked(&base_path, false) {
                Ok(text) => load_draft(&base_path, text, chain)?,
                Err(m) => return Err(refuse(format!("base cluster {}: {m}", base_path.display()))),
            }
        }
        None => Draft::default(),
    };
    apply(&mut draft, raw, &doc)?;
    Ok(draft)
}

fn apply(d: &mut Draft, raw: RawCluster, doc: &Doc) -> Result<(), InputErrors> {
    let mut sink = doc.sink();
    let mut names = Expander::new();
    let ln = |sp: std::ops::Range<usize>| doc.line(sp);
    if let Some(n) = raw.name {
        d.name = n;
    }
    for r in &raw.remove_networks {
        let before = d.networks.len();
        d.networks.retain(|n| &n.name != r.get_ref());
        if d.networks.len() == before {
            let h = hint(r.get_ref(), d.networks.iter().map(|n| n.name.as_str()));
            sink.push(
                ln(r.span()),
                format!("remove_networks {}", r.get_ref()),
                format!("no such network in the base cluster{h}"),
            );
        }
        for node in &mut d.nodes {
            node.networks.retain(|n| n != r.get_ref());
        }
    }
    let mut gone = HashSet::new();
    for r in &raw.remove_nodes {
        match names.one(r.get_ref()) {
            Ok(list) => {
                let missing: Vec<&String> = list.iter().filter(|n| !d.index.contains_key(*n)).collect();
                if let Some(first) = missing.first() {
                    let more =
                        if missing.len() > 1 { format!(" and {} more", missing.len() - 1) } else { String::new() };
                    let h = hint(first, d.nodes.iter().map(|n| n.name.as_str()));
                    sink.push(
                        ln(r.span()),
                        format!("remove_nodes {first}"),
                        format!("no such node in the base cluster{h}{more}"),
                    );
                }
                gone.extend(list);
            }
            Err(e) => sink.push(ln(r.span()), "remove_nodes", e),
        }
    }
    if !gone.is_empty() {
        d.remove(&gone);
    }
    let none = BTreeMap::new();
    // Networks whose entry is wrong: nodes on them are not also told they are undeclared.
    let mut broken: HashSet<&str> = HashSet::new();
    for n in &raw.networks {
        let name = n.name.get_ref().clone();
        let item = format!("network {}", short(&name));
        if !valid_name(&name) {
            sink.push(ln(n.name.span()), &item, NAME_RULE);
            broken.insert(n.name.get_ref());
            continue;
        }
        if d.networks.len() >= caps::NETWORKS && !d.networks.iter().any(|x| x.name == name) {
            let msg = format!("the cluster has more than {} networks, the most flowmap handles", caps::NETWORKS);
            sink.push(ln(n.name.span()), &item, msg);
            break;
        }
        // A wrong value still declares the network (the cluster is rejected anyway), so nodes on
        // it are not also told it is undeclared.
        let (bl, ll) = (ln(n.bandwidth.span()), ln(n.latency.span()));
        let bw = measured(&mut sink, bl, &item, "bandwidth", n.bandwidth.get_ref(), Dim::Rate, &none, true);
        let lat = measured(&mut sink, ll, &item, "latency", n.latency.get_ref(), Dim::Time, &none, false);
        let (bw, lat) = (bw.unwrap_or(1.0), lat.unwrap_or(0.0));
        let net = Network { name: name.clone(), bandwidth: bw, latency: lat };
        match d.networks.iter_mut().find(|x| x.name == name) {
            Some(x) => *x = net, // an overlay replaces a network, keeping which nodes are on it
            None => d.networks.push(net),
        }
    }
    let mut full = false;
    for g in &raw.nodes {
        let list = match names.all(names_of(g.names.get_ref())) {
            Ok(l) => l,
            Err(e) => {
                sink.push(ln(g.names.span()), "nodes", e);
                continue;
            }
        };
        let item = format!("nodes {}", list.first().map(|n| short(n)).unwrap_or_default());
        // Each node keeps its own copy of the group's networks: listed once each, and few.
        let mut seen = HashSet::new();
        let nets: Vec<String> = g.networks.get_ref().iter().filter(|n| seen.insert(n.as_str())).cloned().collect();
        if nets.len() > caps::NETWORKS || g.processor.chars().count() > caps::NAME_CHARS {
            let msg = format!(
                "a node is on at most {} networks and its processor type has at most {} characters",
                caps::NETWORKS,
                caps::NAME_CHARS
            );
            sink.push(ln(g.networks.span()), &item, msg);
            continue;
        }
        let cpus = *g.cpus.get_ref();
        let cpus = if (1..=100_000).contains(&cpus) {
            cpus as u32
        } else {
            sink.push(ln(g.cpus.span()), &item, format!("cpus must be a whole number from 1 to 100000, got {cpus}"));
            1
        };
        for name in list {
            if !valid_name(&name) {
                sink.push(ln(g.names.span()), format!("node \"{}\"", short(&name)), NAME_RULE);
                continue;
            }
            let node = DraftNode { name, cpus, processor: g.processor.clone(), networks: nets.clone() };
            if !d.put(node) && !full {
                full = true;
                sink.push(
                    ln(g.names.span()),
                    &item,
                    format!("the cluster has more than {} nodes, the most flowmap handles", caps::NODES),
                );
            }
        }
    }
    for (verb, list) in [("attach", &raw.attach), ("detach", &raw.detach)] {
        for a in list {
            let nodes = match names.all(names_of(a.nodes.get_ref())) {
                Ok(l) => l,
                Err(e) => {
                    sink.push(ln(a.nodes.span()), verb, e);
                    continue;
                }
            };
            let nets: HashSet<&String> = a.networks.get_ref().iter().collect();
            if nets.len() > caps::NETWORKS {
                let msg = format!("lists more than {} networks", caps::NETWORKS);
                sink.push(ln(a.networks.span()), verb, msg);
                continue;
            }
            let mut missing = Vec::new();
            for name in nodes {
                let Some(node) = d.node_mut(&name) else {
                    missing.push(name);
                    continue;
                };
                if verb == "attach" {
                    let have: HashSet<String> = node.networks.iter().cloned().collect();
                    let new = a.networks.get_ref().iter().filter(|n| !have.contains(*n));
                    let mut added = HashSet::new();
                    node.networks.extend(new.filter(|n| added.insert(*n)).cloned());
                } else {
                    node.networks.retain(|n| !nets.contains(n));
                }
            }
            if let Some(first) = missing.first() {
                let more = if missing.len() > 1 { format!(" and {} more", missing.len() - 1) } else { String::new() };
                let h = hint(first, d.nodes.iter().map(|n| n.name.as_str()));
                sink.push(ln(a.nodes.span()), format!("{verb} {first}"), format!("no such node{h}{more}"));
            }
        }
    }
    // Every network a node is on must be declared (checked here so the line is known).
    let declared: HashSet<&str> = d.networks.iter().map(|n| n.name.as_str()).collect();
    let groups = raw
        .nodes
        .iter()
        .map(|g| (g.names.get_ref(), &g.networks, "nodes"))
        .chain(raw.attach.iter().map(|a| (a.nodes.get_ref(), &a.networks, "attach")));
    for (who, nets, verb) in groups {
        let who = match who {
            Names::One(s) => s.clone(),
            Names::Many(v) => listing(v.iter().map(|s| s.as_str())),
        };
        let mut seen = HashSet::new();
        for net in nets.get_ref() {
            if seen.insert(net) && !broken.contains(net.as_str()) && !declared.contains(net.as_str()) {
                let h = hint(net, d.networks.iter().map(|n| n.name.as_str()));
                sink.push(
                    ln(nets.span()),
                    format!("{verb} {who}"),
                    format!("network \"{net}\" is not declared in [[networks]]{h}"),
                );
            }
        }
    }
    sink.into_result(())
}

fn names_of(n: &Names) -> Vec<&String> {
    match n {
        Names::One(s) => vec![s],
        Names::Many(v) => v.iter().collect(),
    }
}

fn finish(d: Draft, file: &str) -> Result<Cluster, InputErrors> {
    let mut sink = Sink::new(file);
    let mut nodes = Vec::with_capacity(d.nodes.len());
    let index: HashMap<&str, usize> = d.networks.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    for DraftNode { name, cpus, processor, networks: nets } in d.nodes {
        let mut ids: Vec<NetworkId> = Vec::new();
        for n in &nets {
            match index.get(n.as_str()) {
                Some(&i) => {
                    if !ids.contains(&NetworkId(i as u32)) {
                        ids.push(NetworkId(i as u32))
                    }
                }
                None => {
                    sink.push(None, format!("node {name}"), format!("is on network \"{n}\", which is not declared"))
                }
            }
        }
        ids.sort();
        nodes.push(Node { name, cpus, processor, networks: ids });
    }
    let mut netseen = HashSet::new();
    for n in &d.networks {
        if !netseen.insert(n.name.clone()) {
            sink.push(None, format!("network {}", n.name), "is declared twice");
        }
    }
    if nodes.is_empty() {
        sink.push(None, "nodes", "the cluster has no node");
    }
    sink.into_result(Cluster {
        name: if d.name.is_empty() { "cluster".into() } else { d.name },
        nodes,
        networks: d.networks,
    })
}

/// Parses a self-contained cluster description (no `extends`), for tests and tools.
pub fn cluster_from_str(src: &str, file: &str) -> Result<Cluster, InputErrors> {
    let doc = Doc::new(src, file);
    let raw: RawCluster = doc.deserialize()?;
    if let Some(e) = &raw.extends {
        let msg = "extends needs a file path; load the cluster from a file";
        return Err(InputError::new(file, doc.line(e.span()), "extends", msg).into());
    }
    let mut d = Draft::default();
    apply(&mut d, raw, &doc)?;
    finish(d, file)
}
