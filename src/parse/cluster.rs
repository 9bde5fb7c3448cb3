//! The cluster format (`clusters/*.toml`): networks, node groups, and what-if overlays that
//! `extends` another cluster file and add, replace, remove, attach or detach networks and nodes.

use super::app::{quantity, Scalar};
use super::units::Dim;
use super::{expand_range, read, span_line, toml_error, valid_name};
use crate::error::{InputError, InputErrors, Sink};
use crate::model::{Cluster, Network, NetworkId, Node};
use serde::Deserialize;
use std::collections::BTreeMap;
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

fn names(n: &Names) -> Result<Vec<String>, String> {
    let list: Vec<String> = match n {
        Names::One(s) => vec![s.clone()],
        Names::Many(v) => v.clone(),
    };
    let mut out = Vec::new();
    for s in list {
        out.extend(expand_range(&s)?);
    }
    Ok(out)
}

/// Working form while overlays are applied: networks by name (declaration order kept) and
/// nodes with network names.
#[derive(Default)]
struct Draft {
    name: String,
    networks: Vec<Network>,
    nodes: Vec<(String, u32, String, Vec<String>)>,
}

pub(super) fn load(path: &Path, chain: &mut Vec<PathBuf>) -> Result<Cluster, InputErrors> {
    let draft = load_draft(path, chain)?;
    let file = path.display().to_string();
    finish(draft, &file)
}

fn load_draft(path: &Path, chain: &mut Vec<PathBuf>) -> Result<Draft, InputErrors> {
    let file = path.display().to_string();
    let canon = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if chain.contains(&canon) {
        return Err(InputError {
            file,
            line: None,
            item: "extends".into(),
            message: "cluster files extend each other in a loop".into(),
        }
        .into());
    }
    chain.push(canon);
    let src = read(path)?;
    let raw: RawCluster = toml::from_str(&src).map_err(|e| toml_error(&src, &file, e))?;
    let mut draft = match &raw.extends {
        Some(base) => {
            let base_path = path.parent().unwrap_or(Path::new(".")).join(base.get_ref());
            if !base_path.exists() {
                return Err(InputError {
                    file,
                    line: span_line(&src, base.span()),
                    item: "extends".into(),
                    message: format!("base cluster {} does not exist", base_path.display()),
                }
                .into());
            }
            load_draft(&base_path, chain)?
        }
        None => Draft::default(),
    };
    apply(&mut draft, raw, &src, &file)?;
    Ok(draft)
}

fn apply(d: &mut Draft, raw: RawCluster, src: &str, file: &str) -> Result<(), InputErrors> {
    let mut sink = Sink::new(file);
    let ln = |sp: std::ops::Range<usize>| span_line(src, sp);
    if let Some(n) = raw.name {
        d.name = n;
    }
    for r in &raw.remove_networks {
        let before = d.networks.len();
        d.networks.retain(|n| &n.name != r.get_ref());
        if d.networks.len() == before {
            sink.push(ln(r.span()), format!("remove_networks {}", r.get_ref()), "no such network in the base cluster");
        }
        for node in &mut d.nodes {
            node.3.retain(|n| n != r.get_ref());
        }
    }
    for r in &raw.remove_nodes {
        match expand_range(r.get_ref()) {
            Ok(list) => {
                for name in list {
                    let before = d.nodes.len();
                    d.nodes.retain(|n| n.0 != name);
                    if d.nodes.len() == before {
                        sink.push(ln(r.span()), format!("remove_nodes {name}"), "no such node in the base cluster");
                    }
                }
            }
            Err(e) => sink.push(ln(r.span()), "remove_nodes", e),
        }
    }
    let none = BTreeMap::new();
    for n in &raw.networks {
        let name = n.name.get_ref().clone();
        let item = format!("network {name}");
        if !valid_name(&name) {
            sink.push(ln(n.name.span()), &item, "names use letters, digits, _, - and . only");
            continue;
        }
        let bw = match quantity(n.bandwidth.get_ref(), Dim::Rate, &none) {
            Ok(v) if v > 0.0 => v,
            Ok(v) => {
                sink.push(ln(n.bandwidth.span()), &item, format!("bandwidth must be > 0, got {v} B/s"));
                continue;
            }
            Err(e) => {
                sink.push(ln(n.bandwidth.span()), &item, format!("bandwidth: {e}"));
                continue;
            }
        };
        let lat = match quantity(n.latency.get_ref(), Dim::Time, &none) {
            Ok(v) if v >= 0.0 => v,
            Ok(v) => {
                sink.push(ln(n.latency.span()), &item, format!("latency must be >= 0, got {v} s"));
                continue;
            }
            Err(e) => {
                sink.push(ln(n.latency.span()), &item, format!("latency: {e}"));
                continue;
            }
        };
        let net = Network { name: name.clone(), bandwidth: bw, latency: lat };
        match d.networks.iter_mut().find(|x| x.name == name) {
            Some(x) => *x = net, // an overlay replaces a network, keeping which nodes are on it
            None => d.networks.push(net),
        }
    }
    for g in &raw.nodes {
        let list = match names(g.names.get_ref()) {
            Ok(l) => l,
            Err(e) => {
                sink.push(ln(g.names.span()), "nodes", e);
                continue;
            }
        };
        let item = format!("nodes {}", list.first().cloned().unwrap_or_default());
        if *g.cpus.get_ref() < 1 || *g.cpus.get_ref() > 100_000 {
            sink.push(ln(g.cpus.span()), &item, format!("cpus must be a whole number >= 1, got {}", g.cpus.get_ref()));
            continue;
        }
        for name in list {
            if !valid_name(&name) {
                sink.push(ln(g.names.span()), format!("node \"{name}\""), "names use letters, digits, _, - and . only");
                continue;
            }
            let entry = (name.clone(), *g.cpus.get_ref() as u32, g.processor.clone(), g.networks.get_ref().clone());
            match d.nodes.iter_mut().find(|x| x.0 == name) {
                Some(x) => *x = entry,
                None => d.nodes.push(entry),
            }
        }
    }
    for (verb, list) in [("attach", &raw.attach), ("detach", &raw.detach)] {
        for a in list {
            let nodes = match names(a.nodes.get_ref()) {
                Ok(l) => l,
                Err(e) => {
                    sink.push(ln(a.nodes.span()), verb, e);
                    continue;
                }
            };
            for name in nodes {
                let Some(node) = d.nodes.iter_mut().find(|x| x.0 == name) else {
                    sink.push(ln(a.nodes.span()), format!("{verb} {name}"), "no such node");
                    continue;
                };
                for net in a.networks.get_ref() {
                    if verb == "attach" {
                        if !node.3.contains(net) {
                            node.3.push(net.clone());
                        }
                    } else {
                        node.3.retain(|n| n != net);
                    }
                }
            }
        }
    }
    // Every network a node is on must be declared (checked here so the line is known).
    let groups = raw
        .nodes
        .iter()
        .map(|g| (g.names.get_ref(), &g.networks, "nodes"))
        .chain(raw.attach.iter().map(|a| (a.nodes.get_ref(), &a.networks, "attach")));
    for (who, nets, verb) in groups {
        let who = match who {
            Names::One(s) => s.clone(),
            Names::Many(v) => v.join(", "),
        };
        for net in nets.get_ref() {
            if !d.networks.iter().any(|n| &n.name == net) {
                sink.push(
                    ln(nets.span()),
                    format!("{verb} {who}"),
                    format!("network \"{net}\" is not declared in [[networks]]"),
                );
            }
        }
    }
    sink.into_result(())
}

fn finish(d: Draft, file: &str) -> Result<Cluster, InputErrors> {
    let mut sink = Sink::new(file);
    let mut seen = std::collections::HashSet::new();
    let mut nodes = Vec::new();
    for (name, cpus, processor, nets) in d.nodes {
        if !seen.insert(name.clone()) {
            sink.push(None, format!("node {name}"), "is declared twice");
        }
        let mut ids: Vec<NetworkId> = Vec::new();
        for n in &nets {
            match d.networks.iter().position(|x| &x.name == n) {
                Some(i) => {
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
    let mut netseen = std::collections::HashSet::new();
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
    let raw: RawCluster = toml::from_str(src).map_err(|e| toml_error(src, file, e))?;
    if raw.extends.is_some() {
        return Err(InputError {
            file: file.into(),
            line: None,
            item: "extends".into(),
            message: "extends needs a file path; load the cluster from a file".into(),
        }
        .into());
    }
    let mut d = Draft::default();
    apply(&mut d, raw, src, file)?;
    finish(d, file)
}
