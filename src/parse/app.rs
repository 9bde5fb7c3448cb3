//! The application format (`models/*.toml`): parameters, module and filter groups,
//! connections with patterns, MPI exchanges, placement constraints and requirements.

use super::units::{split_unit, Dim};
use super::{expand_range, expr, span_line, toml_error, valid_name, Override};
use crate::error::{InputErrors, Sink};
use crate::model::*;
use petgraph::graph::DiGraph;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use toml::Spanned;

#[derive(Deserialize, Clone, Debug)]
#[serde(untagged)]
pub(crate) enum Scalar {
    Num(f64),
    Text(String),
}

#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum RawPerType {
    One(Scalar),
    ByType(BTreeMap<String, Scalar>),
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawApp {
    name: Option<String>,
    #[allow(dead_code)]
    description: Option<String>,
    #[serde(default)]
    parameters: BTreeMap<String, Spanned<f64>>,
    #[serde(default)]
    modules: Vec<RawModule>,
    #[serde(default)]
    filters: Vec<RawFilter>,
    #[serde(default)]
    connections: Vec<RawConnection>,
    #[serde(default)]
    requirements: Vec<RawRequirement>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawModule {
    name: Spanned<String>,
    #[allow(dead_code)]
    description: Option<String>,
    instances: Option<Spanned<Scalar>>,
    texec: Spanned<RawPerType>,
    load: Spanned<RawPerType>,
    allowed_nodes: Option<Spanned<Vec<String>>>,
    pin: Option<Spanned<Vec<String>>>,
    mpi: Option<Spanned<RawMpi>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawMpi {
    pattern: String,
    volume: Scalar,
    #[serde(default)]
    lockstep: bool,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawFilter {
    name: Spanned<String>,
    #[allow(dead_code)]
    description: Option<String>,
    kind: Spanned<String>,
    ratio: Option<Spanned<i64>>,
    instances: Option<Spanned<Scalar>>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawConnection {
    name: Option<Spanned<String>>,
    #[allow(dead_code)]
    description: Option<String>,
    from: Spanned<String>,
    to: Spanned<String>,
    kind: Option<Spanned<String>>,
    pattern: Option<Spanned<String>>,
    volume: Spanned<Scalar>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct RawRequirement {
    name: Option<String>,
    module: Option<Spanned<String>>,
    min_frequency: Option<Spanned<Scalar>>,
    path: Option<Spanned<Vec<String>>>,
    max_latency: Option<Spanned<Scalar>>,
}

/// Evaluates a scalar of dimension `dim` into SI units.
pub(crate) fn quantity(s: &Scalar, dim: Dim, vars: &BTreeMap<String, f64>) -> Result<f64, String> {
    match s {
        Scalar::Num(v) if dim == Dim::Fraction => Ok(*v),
        Scalar::Num(v) => Err(format!(
            "missing unit in {v} (write it as a string, e.g. \"{v} {}\"): expected {}",
            dim.example(),
            dim.describe()
        )),
        Scalar::Text(t) => {
            let (e, factor) = split_unit(t, dim)?;
            Ok(expr::eval(e, vars)? * factor)
        }
    }
}

fn count(s: &Scalar, vars: &BTreeMap<String, f64>) -> Result<usize, String> {
    let v = match s {
        Scalar::Num(v) => *v,
        Scalar::Text(t) => expr::eval(t, vars)?,
    };
    if v < 1.0 || v.fract() != 0.0 || v > 1e6 {
        return Err(format!("must be a whole number from 1 to 1000000, got {v}"));
    }
    Ok(v as usize)
}

/// Upper bound on instance-level edges (connections and MPI exchanges together).
const MAX_EDGES: usize = 5_000_000;

const RESERVED: &[&str] = &["instances", "from_instances", "to_instances"];

/// Parses and validates an application description. `file` names it in errors.
pub fn application_from_str(src: &str, file: &str, overrides: &[Override]) -> Result<Application, InputErrors> {
    let raw: RawApp = toml::from_str(src).map_err(|e| toml_error(src, file, e))?;
    let mut sink = Sink::new(file);
    let ln = |sp: std::ops::Range<usize>| span_line(src, sp);

    // Parameters, then command-line overrides.
    let mut params: BTreeMap<String, f64> = BTreeMap::new();
    for (k, v) in &raw.parameters {
        if RESERVED.contains(&k.as_str()) || !k.chars().all(|c| c.is_alphanumeric() || c == '_') {
            sink.push(
                ln(v.span()),
                format!("parameter {k}"),
                "is not a usable name (letters, digits and _; not instances/from_instances/to_instances)",
            );
        }
        params.insert(k.clone(), *v.get_ref());
    }
    for o in overrides {
        if params.contains_key(&o.name) {
            params.insert(o.name.clone(), o.value);
        } else {
            let known: Vec<&str> = params.keys().map(|s| s.as_str()).collect();
            sink.push(None, format!("--set {}", o.name), format!("no such parameter (known: {})", known.join(", ")));
        }
    }

    let mut graph: DiGraph<Object, Edge, u32> = DiGraph::default();
    let mut groups: Vec<Group> = Vec::new();
    let mut by_name: HashMap<String, GroupId> = HashMap::new();

    let mut add_group = |sink: &mut Sink,
                         name: &Spanned<String>,
                         what: &str,
                         inst: &Option<Spanned<Scalar>>,
                         groups: &mut Vec<Group>|
     -> Option<(GroupId, usize)> {
        let n = name.get_ref();
        let line = ln(name.span());
        if !valid_name(n) {
            sink.push(line, format!("{what} \"{n}\""), "names use letters, digits, _, - and . only");
            return None;
        }
        if by_name.contains_key(n) {
            sink.push(line, format!("{what} {n}"), "is declared twice (module and filter names share one namespace)");
            return None;
        }
        let k = match inst {
            None => 1,
            Some(s) => match count(s.get_ref(), &params) {
                Ok(k) => k,
                Err(e) => {
                    sink.push(ln(s.span()), format!("{what} {n}"), format!("instances {e}"));
                    return None;
                }
            },
        };
        let id = GroupId(groups.len() as u32);
        by_name.insert(n.clone(), id);
        groups.push(Group {
            name: n.clone(),
            objects: vec![],
            is_module: what == "module",
            allowed_nodes: None,
            pins: None,
        });
        Some((id, k))
    };

    // Modules.
    let mut mpi_specs: Vec<(GroupId, &Spanned<RawMpi>)> = Vec::new();
    for m in &raw.modules {
        let Some((gid, k)) = add_group(&mut sink, &m.name, "module", &m.instances, &mut groups) else {
            continue;
        };
        let name = m.name.get_ref().clone();
        let item = format!("module {name}");
        let mut vars = params.clone();
        vars.insert("instances".into(), k as f64);
        let texec = per_type(&mut sink, &item, "texec", &m.texec, Dim::Time, &vars, ln(m.texec.span()), |v| {
            if v > 0.0 {
                Ok(())
            } else {
                Err(format!("must be > 0, got {} ms", v * 1e3))
            }
        });
        let load = per_type(&mut sink, &item, "load", &m.load, Dim::Fraction, &vars, ln(m.load.span()), |v| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(format!("must satisfy 0 < LD <= 1, got {v}"))
            }
        });
        if let Some(a) = &m.allowed_nodes {
            match expand_all(a.get_ref()) {
                Ok(v) => groups[gid.ix()].allowed_nodes = Some(v),
                Err(e) => sink.push(ln(a.span()), &item, format!("allowed_nodes: {e}")),
            }
        }
        if let Some(p) = &m.pin {
            match expand_all(p.get_ref()) {
                Ok(v) if v.len() == k => groups[gid.ix()].pins = Some(v),
                Ok(v) => sink.push(ln(p.span()), &item, format!("pin lists {} nodes for {k} instances", v.len())),
                Err(e) => sink.push(ln(p.span()), &item, format!("pin: {e}")),
            }
        }
        if let Some(mpi) = &m.mpi {
            mpi_specs.push((gid, mpi));
        }
        let (Some(texec), Some(load)) = (texec, load) else {
            continue;
        };
        for i in 0..k {
            let oname = instance_name(&name, k, i);
            let o = graph.add_node(Object {
                name: oname,
                group: gid,
                index: i,
                kind: ObjectKind::Module(ModuleCosts { texec: texec.clone(), load: load.clone() }),
            });
            groups[gid.ix()].objects.push(o);
        }
    }

    // Filters.
    for f in &raw.filters {
        let Some((gid, k)) = add_group(&mut sink, &f.name, "filter", &f.instances, &mut groups) else {
            continue;
        };
        let name = f.name.get_ref().clone();
        let item = format!("filter {name}");
        let ratio = match &f.ratio {
            None => 1,
            Some(r) if *r.get_ref() >= 1 && *r.get_ref() <= 1_000_000 => *r.get_ref() as u32,
            Some(r) => {
                sink.push(ln(r.span()), &item, format!("ratio must be a whole number >= 1, got {}", r.get_ref()));
                continue;
            }
        };
        let kind = match f.kind.get_ref().as_str() {
            "greedy" => FilterKind::Greedy,
            "broadcast" => FilterKind::Broadcast,
            "merge" | "gather" => FilterKind::Merge { ratio },
            "scatter" => FilterKind::Scatter,
            other => {
                sink.push(
                    ln(f.kind.span()),
                    &item,
                    format!("unknown kind \"{other}\" (greedy, broadcast, merge, gather, scatter)"),
                );
                continue;
            }
        };
        if ratio != 1 && !matches!(kind, FilterKind::Merge { .. }) {
            sink.push(ln(f.kind.span()), &item, "only merge/gather filters take a ratio");
        }
        for i in 0..k {
            let oname = instance_name(&name, k, i);
            let o = graph.add_node(Object { name: oname, group: gid, index: i, kind: ObjectKind::Filter(kind) });
            groups[gid.ix()].objects.push(o);
        }
    }

    // Connections.
    let mut connections: Vec<Connection> = Vec::new();
    let mut conn_names: HashMap<String, usize> = HashMap::new();
    for c in &raw.connections {
        let default_name = format!("{}->{}", c.from.get_ref(), c.to.get_ref());
        let item = format!("connection {default_name}");
        let from = endpoint(&mut sink, &item, &c.from, &by_name, &groups, ln(c.from.span()));
        let to = endpoint(&mut sink, &item, &c.to, &by_name, &groups, ln(c.to.span()));
        let sync = match c.kind.as_ref().map(|k| k.get_ref().as_str()) {
            None | Some("fifo") => Sync::Fifo,
            Some("greedy") => Sync::Greedy,
            Some(other) => {
                sink.push(
                    ln(c.kind.as_ref().unwrap().span()),
                    &item,
                    format!("unknown kind \"{other}\" (fifo, greedy)"),
                );
                continue;
            }
        };
        let (Some(from), Some(to)) = (from, to) else {
            continue;
        };
        let pattern = match c.pattern.as_ref().map(|p| p.get_ref().as_str()) {
            None if from.len() == to.len() => Pattern::OneToOne,
            None => {
                sink.push(
                    ln(c.from.span()),
                    &item,
                    format!(
                        "{} sources and {} destinations: say pattern = \"all-to-all\" or \"modulo\"",
                        from.len(),
                        to.len()
                    ),
                );
                continue;
            }
            Some("one-to-one") => Pattern::OneToOne,
            Some("all-to-all") => Pattern::AllToAll,
            Some("modulo") | Some("mod") => Pattern::Modulo,
            Some(other) => {
                sink.push(
                    ln(c.pattern.as_ref().unwrap().span()),
                    &item,
                    format!("unknown pattern \"{other}\" (one-to-one, all-to-all, modulo)"),
                );
                continue;
            }
        };
        if pattern == Pattern::OneToOne && from.len() != to.len() {
            sink.push(
                ln(c.from.span()),
                &item,
                format!("one-to-one needs equal counts, got {} sources and {} destinations", from.len(), to.len()),
            );
            continue;
        }
        let mut vars = params.clone();
        vars.insert("from_instances".into(), from.len() as f64);
        vars.insert("to_instances".into(), to.len() as f64);
        let volume = match quantity(c.volume.get_ref(), Dim::Data, &vars) {
            Ok(v) if v >= 0.0 => v,
            Ok(v) => {
                sink.push(ln(c.volume.span()), &item, format!("volume must be >= 0, got {v} B"));
                continue;
            }
            Err(e) => {
                sink.push(ln(c.volume.span()), &item, format!("volume: {e}"));
                continue;
            }
        };
        let name = match &c.name {
            Some(n) => {
                if conn_names.contains_key(n.get_ref()) {
                    sink.push(ln(n.span()), &item, format!("connection name \"{}\" is used twice", n.get_ref()));
                    continue;
                }
                n.get_ref().clone()
            }
            None => {
                let k = conn_names.get(&default_name).map(|_| connections.len()).unwrap_or(0);
                if k == 0 {
                    default_name.clone()
                } else {
                    format!("{default_name}#{k}")
                }
            }
        };
        let cid = ConnectionId(connections.len() as u32);
        conn_names.insert(name.clone(), cid.ix());
        let mut edges = Vec::new();
        let expanded = match pattern {
            Pattern::AllToAll => from.len().saturating_mul(to.len()),
            _ => from.len().max(to.len()),
        };
        if expanded.saturating_add(graph.edge_count()) > MAX_EDGES {
            sink.push(
                ln(c.from.span()),
                &item,
                format!("expands to {expanded} edges; flowmap handles at most {MAX_EDGES} in all"),
            );
            continue;
        }
        let pairs: Vec<(ObjectId, ObjectId)> = match pattern {
            Pattern::OneToOne => from.iter().copied().zip(to.iter().copied()).collect(),
            Pattern::AllToAll => from.iter().flat_map(|&a| to.iter().map(move |&b| (a, b))).collect(),
            Pattern::Modulo => {
                if from.len() >= to.len() {
                    from.iter().enumerate().map(|(i, &a)| (a, to[i % to.len()])).collect()
                } else {
                    to.iter().enumerate().map(|(j, &b)| (from[j % from.len()], b)).collect()
                }
            }
        };
        for (a, b) in pairs {
            if a == b {
                sink.push(ln(c.from.span()), &item, format!("connects {} to itself", graph[a].name));
                continue;
            }
            edges.push(graph.add_edge(a, b, Edge { connection: cid, role: EdgeRole::Flow(sync), volume }));
        }
        connections.push(Connection { name, edges, lockstep: false });
    }

    // MPI exchanges among the instances of a parallel module.
    for (gid, mpi) in mpi_specs {
        let g = &groups[gid.ix()];
        let item = format!("module {}", g.name);
        let mut vars = params.clone();
        vars.insert("instances".into(), g.objects.len() as f64);
        let volume = match quantity(&mpi.get_ref().volume, Dim::Data, &vars) {
            Ok(v) if v >= 0.0 => v,
            Ok(v) => {
                sink.push(ln(mpi.span()), &item, format!("mpi volume must be >= 0, got {v} B"));
                continue;
            }
            Err(e) => {
                sink.push(ln(mpi.span()), &item, format!("mpi volume: {e}"));
                continue;
            }
        };
        let objs = g.objects.clone();
        let n = objs.len();
        if mpi.get_ref().pattern == "all-to-all" && n.saturating_mul(n).saturating_add(graph.edge_count()) > MAX_EDGES {
            sink.push(ln(mpi.span()), &item, format!("mpi all-to-all among {n} instances expands to {} edges; flowmap handles at most {MAX_EDGES} in all", n * n - n));
            continue;
        }
        let pairs: Vec<(usize, usize)> = match mpi.get_ref().pattern.as_str() {
            "all-to-all" => (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect(),
            "ring" if n >= 2 => {
                let mut v: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
                if n > 2 {
                    v.extend((0..n).map(|i| ((i + 1) % n, i)));
                }
                v
            }
            "ring" => vec![],
            other => {
                sink.push(ln(mpi.span()), &item, format!("unknown mpi pattern \"{other}\" (all-to-all, ring)"));
                continue;
            }
        };
        let cid = ConnectionId(connections.len() as u32);
        let edges = pairs
            .into_iter()
            .map(|(i, j)| graph.add_edge(objs[i], objs[j], Edge { connection: cid, role: EdgeRole::Mpi, volume }))
            .collect();
        connections.push(Connection { name: format!("{}.mpi", g.name), edges, lockstep: mpi.get_ref().lockstep });
    }

    // Structural checks on filters.
    for f in graph.node_indices().filter(|&o| !graph[o].is_module()) {
        let ins = graph.edges_directed(f, petgraph::Direction::Incoming).count();
        let outs = graph.edges_directed(f, petgraph::Direction::Outgoing).count();
        if ins == 0 || outs == 0 {
            sink.push(
                None,
                format!("filter {}", graph[f].name),
                if ins == 0 { "has no input connection" } else { "has no output connection" },
            );
        }
    }
    if sink.is_empty() {
        check_cycles(&mut sink, &graph);
    }

    // Requirements.
    let mut requirements = Vec::new();
    for (i, r) in raw.requirements.iter().enumerate() {
        let rname = r.name.clone().unwrap_or_else(|| format!("requirement {}", i + 1));
        let item = format!("requirement {rname}");
        match (&r.module, &r.min_frequency, &r.path, &r.max_latency) {
            (Some(m), Some(f), None, None) => {
                let Some(&gid) = by_name.get(m.get_ref()) else {
                    sink.push(ln(m.span()), &item, format!("unknown module \"{}\"", m.get_ref()));
                    continue;
                };
                if !groups[gid.ix()].is_module {
                    sink.push(
                        ln(m.span()),
                        &item,
                        format!("\"{}\" is a filter; frequency requirements name modules", m.get_ref()),
                    );
                    continue;
                }
                match quantity(f.get_ref(), Dim::Frequency, &params) {
                    Ok(hz) if hz > 0.0 => requirements.push(Requirement::MinFrequency { name: rname, group: gid, hz }),
                    Ok(hz) => sink.push(ln(f.span()), &item, format!("min_frequency must be > 0, got {hz} Hz")),
                    Err(e) => sink.push(ln(f.span()), &item, format!("min_frequency: {e}")),
                }
            }
            (None, None, Some(p), Some(l)) => {
                let mut path = Vec::new();
                for n in p.get_ref() {
                    match graph.node_indices().find(|&o| &graph[o].name == n) {
                        Some(o) => path.push(o),
                        None => sink.push(
                            ln(p.span()),
                            &item,
                            format!("unknown object \"{n}\" in path (instances are named like fluid[0])"),
                        ),
                    }
                }
                if path.len() == p.get_ref().len() {
                    for w in path.windows(2) {
                        if graph.find_edge(w[0], w[1]).is_none() {
                            sink.push(
                                ln(p.span()),
                                &item,
                                format!("no connection from {} to {} in path", graph[w[0]].name, graph[w[1]].name),
                            );
                        }
                    }
                }
                if path.is_empty() {
                    sink.push(ln(p.span()), &item, "path is empty");
                }
                match quantity(l.get_ref(), Dim::Time, &params) {
                    Ok(s) if s > 0.0 => requirements.push(Requirement::MaxLatency { name: rname, path, max_s: s }),
                    Ok(s) => sink.push(ln(l.span()), &item, format!("max_latency must be > 0, got {s} s")),
                    Err(e) => sink.push(ln(l.span()), &item, format!("max_latency: {e}")),
                }
            }
            _ => sink.push(None, &item, "give either module + min_frequency, or path + max_latency"),
        }
    }

    let app = Application {
        name: raw.name.unwrap_or_else(|| "application".into()),
        parameters: params,
        graph,
        groups,
        connections,
        requirements,
        sync_shape: Default::default(),
    };
    sink.into_result(app)
}

#[allow(clippy::too_many_arguments)]
fn per_type(
    sink: &mut Sink,
    item: &str,
    field: &str,
    raw: &Spanned<RawPerType>,
    dim: Dim,
    vars: &BTreeMap<String, f64>,
    line: Option<usize>,
    check: impl Fn(f64) -> Result<(), String>,
) -> Option<PerType> {
    let eval = |s: &Scalar| quantity(s, dim, vars).and_then(|v| check(v).map(|_| v));
    match raw.get_ref() {
        RawPerType::One(s) => match eval(s) {
            Ok(v) => Some(PerType::Uniform(v)),
            Err(e) => {
                sink.push(line, item, format!("{field}: {e}"));
                None
            }
        },
        RawPerType::ByType(m) => {
            let mut out = BTreeMap::new();
            let mut ok = true;
            for (t, s) in m {
                match eval(s) {
                    Ok(v) => {
                        out.insert(t.clone(), v);
                    }
                    Err(e) => {
                        sink.push(line, item, format!("{field} on {t}: {e}"));
                        ok = false;
                    }
                }
            }
            if m.is_empty() {
                sink.push(line, item, format!("{field} lists no processor type"));
                ok = false;
            }
            ok.then_some(PerType::ByType(out))
        }
    }
}

fn expand_all(v: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for s in v {
        out.extend(expand_range(s)?);
    }
    Ok(out)
}

/// Resolves `group` or `group[i]` to its objects.
fn endpoint(
    sink: &mut Sink,
    item: &str,
    s: &Spanned<String>,
    by_name: &HashMap<String, GroupId>,
    groups: &[Group],
    line: Option<usize>,
) -> Option<Vec<ObjectId>> {
    let text = s.get_ref().trim();
    let (gname, index) = match text.split_once('[') {
        Some((g, rest)) => match rest.strip_suffix(']').and_then(|i| i.trim().parse::<usize>().ok()) {
            Some(i) => (g, Some(i)),
            None => {
                sink.push(line, item, format!("cannot read \"{text}\": write group or group[i]"));
                return None;
            }
        },
        None => (text, None),
    };
    let Some(&gid) = by_name.get(gname) else {
        sink.push(line, item, format!("unknown module or filter \"{gname}\""));
        return None;
    };
    let objs = &groups[gid.ix()].objects;
    if objs.is_empty() {
        return None; // the group itself had an error, already reported
    }
    match index {
        None => Some(objs.clone()),
        Some(i) if i < objs.len() => Some(vec![objs[i]]),
        Some(i) => {
            sink.push(line, item, format!("{gname} has {} instances, no [{i}]", objs.len()));
            None
        }
    }
}

/// Rejects cycles made of filters only (no object would ever start them) and synchronous cycles
/// through a k:1 filter (k > 1), which can never carry one message around.
fn check_cycles(sink: &mut Sink, g: &DiGraph<Object, Edge, u32>) {
    // Filters-only subgraph.
    let filters_only = g.filter_map(|_, o| (!o.is_module()).then_some(()), |_, e| Some(e.role));
    for scc in petgraph::algo::tarjan_scc(&filters_only) {
        if scc.len() > 1 || filters_only.contains_edge(scc[0], scc[0]) {
            let names: Vec<String> = scc
                .iter()
                .map(|&i| g[filters_only.node_weight(i).map(|_| find_nth_filter(g, i.index())).unwrap()].name.clone())
                .collect();
            sink.push(None, format!("filters {}", names.join(", ")), "form a cycle without a module");
        }
    }
    // Synchronous subgraph: FIFO edges, not leaving a greedy filter.
    let sync = g.filter_map(
        |_, _| Some(()),
        |ei, e| {
            let (s, _) = g.edge_endpoints(ei).unwrap();
            let fifo = e.role == EdgeRole::Flow(Sync::Fifo) && g[s].filter() != Some(FilterKind::Greedy);
            fifo.then_some(())
        },
    );
    for scc in petgraph::algo::tarjan_scc(&sync) {
        if scc.len() > 1 {
            for &o in &scc {
                if let Some(FilterKind::Merge { ratio }) = g[o].filter() {
                    if ratio > 1 {
                        sink.push(None, format!("filter {}", g[o].name), format!("is a {ratio}:1 gather inside a synchronous cycle, which can never complete an iteration"));
                    }
                }
            }
        }
    }
}

fn find_nth_filter(g: &DiGraph<Object, Edge, u32>, n: usize) -> ObjectId {
    g.node_indices().filter(|&o| !g[o].is_module()).nth(n).expect("filter index")
}

/// `group` for a group of one instance, `group[i]` otherwise.
fn instance_name(group: &str, count: usize, i: usize) -> String {
    if count == 1 {
        group.to_string()
    } else {
        format!("{group}[{i}]")
    }
}
