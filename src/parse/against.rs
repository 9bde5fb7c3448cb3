//! An application read against the cluster it will be mapped on: the names it gives to the
//! cluster's nodes and processor types must mean something there.
//!
//! Rules (docs/formats.md, "Application against a cluster"):
//! - a node in `allowed_nodes` or `pin` that the cluster does not have is an error;
//! - a processor type in `texec`/`load` that no node has is an error when it is close to a type
//!   of the cluster the module gives no costs for (`epic` for `epyc`: a misspelling), or when it
//!   leaves the module no node to run on; otherwise a warning (an application may be written for
//!   several clusters).

use super::caps;
use super::suggest::{closest, hint};
use crate::error::Sink;
use crate::model::{Application, Cluster, GroupId, PerType};
use std::collections::{BTreeSet, HashSet};

/// What one module group says about nodes and processor types, with the lines.
#[derive(Debug)]
pub(super) struct GroupRefs {
    pub group: GroupId,
    pub allowed: Option<(Option<usize>, Vec<String>)>,
    pub pin: Option<(Option<usize>, Vec<String>)>,
    pub texec: Option<(Option<usize>, Option<PerType>)>,
    pub load: Option<(Option<usize>, Option<PerType>)>,
}

pub(super) fn check(app: &Application, refs: &[GroupRefs], cluster: &Cluster, errors: &mut Sink, warnings: &mut Sink) {
    let (objects, n) = (app.graph.node_count(), cluster.nodes.len());
    if objects.saturating_mul(n) > caps::PLACEMENTS {
        errors.push(
            None,
            "application",
            format!(
                "{objects} instances on the {n} nodes of cluster {} make {} possible placements; flowmap handles at most {}",
                cluster.name,
                objects * n,
                caps::PLACEMENTS
            ),
        );
    }
    let nodes: HashSet<&str> = cluster.nodes.iter().map(|n| n.name.as_str()).collect();
    let types: BTreeSet<&str> = cluster.nodes.iter().map(|n| n.processor.as_str()).collect();
    for r in refs {
        let g = app.group(r.group);
        let item = format!("module {}", g.name);
        for (field, list) in [("allowed_nodes", &r.allowed), ("pin", &r.pin)] {
            let Some((line, names)) = list else { continue };
            let unknown: Vec<&str> = {
                let mut seen = HashSet::new();
                names.iter().map(|s| s.as_str()).filter(|n| !nodes.contains(n) && seen.insert(*n)).collect()
            };
            if let Some(first) = unknown.first() {
                let h = hint(first, cluster.nodes.iter().map(|n| n.name.as_str()));
                let more = match unknown.len() {
                    1 => String::new(),
                    k => format!(" and {} more", k - 1),
                };
                errors.push(
                    *line,
                    &item,
                    format!("{field}: unknown node \"{first}\"{h}{more} (not in cluster {})", cluster.name),
                );
            }
        }
        processor_types(r, &item, cluster, &types, errors, warnings);
    }
}

/// Checks the processor types a module gives costs for (see the module's rules).
fn processor_types(
    r: &GroupRefs,
    item: &str,
    cluster: &Cluster,
    types: &BTreeSet<&str>,
    errors: &mut Sink,
    warnings: &mut Sink,
) {
    let (Some((tline, Some(texec))), Some((lline, Some(load)))) = (&r.texec, &r.load) else {
        return;
    };
    let listed = |p: &PerType| -> Vec<String> {
        match p {
            PerType::Uniform(_) => vec![],
            PerType::ByType(m) => m.keys().cloned().collect(),
        }
    };
    let allowed: Option<HashSet<&str>> = r.allowed.as_ref().map(|(_, v)| v.iter().map(|s| s.as_str()).collect());
    let runs_somewhere = cluster.nodes.iter().any(|n| {
        texec.on(&n.processor).is_some()
            && load.on(&n.processor).is_some()
            && allowed.as_ref().is_none_or(|a| a.contains(n.name.as_str()))
    });
    let mut reported = HashSet::new();
    for (field, line, p) in [("texec", *tline, texec), ("load", *lline, load)] {
        for t in listed(p) {
            if types.contains(t.as_str()) || !reported.insert(t.clone()) {
                continue;
            }
            // A type of the cluster the module has no cost for, spelt almost like this one.
            let lacking = types.iter().copied().filter(|c| texec.on(c).is_none() || load.on(c).is_none());
            let close = closest(&t, lacking);
            let msg = format!("{field} gives processor type \"{t}\", which no node of cluster {} has", cluster.name);
            match (close, runs_somewhere) {
                (Some(c), _) => errors.push(line, item, format!("{msg}; did you mean \"{c}\"?")),
                (None, false) => errors.push(
                    line,
                    item,
                    format!("{msg}, and no node it may use has a type it gives costs for (types: {})", list(types)),
                ),
                (None, true) => warnings.push(line, item, format!("{msg} (costs for it are not used)")),
            }
        }
    }
}

fn list(types: &BTreeSet<&str>) -> String {
    types.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(", ")
}
