//! The application format (`models/*.toml`): parameters, module and filter groups,
//! connections with patterns, MPI exchanges, placement constraints and requirements.

use super::against::{self, GroupRefs};
use super::doc::Doc;
use super::suggest::{hint, listing};
use super::units::{split_unit, Dim};
use super::{caps, expr, short, valid_name, Expander, Override, NAME_RULE};
use crate::error::{InputError, InputErrors, Sink};
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

/// A quantity that must be > 0 (`strict`) or >= 0, or None after an error naming `field`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measured(
    sink: &mut Sink,
    line: Option<usize>,
    item: &str,
    field: &str,
    s: &Scalar,
    dim: Dim,
    vars: &BTreeMap<String, f64>,
    strict: bool,
) -> Option<f64> {
    match quantity(s, dim, vars) {
        Ok(v) if v > 0.0 || (!strict && v >= 0.0) => Some(v),
        Ok(v) => {
            let rule = if strict { ">" } else { ">=" };
            sink.push(line, item, format!("{field} must be {rule} 0, got {v} {}", dim.si()));
            None
        }
        Err(e) => {
            sink.push(line, item, format!("{field}: {e}"));
            None
        }
    }
}

fn count(s: &Scalar, vars: &BTreeMap<String, f64>) -> Result<usize, String> {
    let v = match s {
        Scalar::Num(v) => *v,
        Scalar::Text(t) => expr::eval(t, vars)?,
    };
    let max = caps::OBJECTS;
    if !(1.0..=max as f64).contains(&v) || v.fract() != 0.0 {
        return Err(format!("must be a whole number from 1 to {max}, got {v}"));
    }
    Ok(v as usize)
}

const RESERVED: &[&str] = &["instances", "from_instances", "to_instances"];

/// Parses and validates an application description. `file` names it in errors. Node names and
/// processor types are not checked (there is no cluster): see [`application_for_cluster`].
pub fn application_from_str(src: &str, file: &str, overrides: &[Override]) -> Result<Application, InputErrors> {
    let doc = Doc::new(src, file);
    let (app, _, sink) = build(&doc, overrides)?;
    sink.into_result(app)
}

/// Parses and validates an application description for `cluster`: also an error, with the line,
/// for a node in `allowed_nodes` or `pin` that the cluster does not have, and for a processor
/// type that looks like a misspelt one of the cluster's (or leaves a module no node to run on);
/// other processor types no node has are returned as warnings.
pub fn application_for_cluster(
    src: &str,
    file: &str,
    overrides: &[Override],
    cluster: &Cluster,
) -> Result<(Application, Vec<InputError>), InputErrors> {
    let doc = Doc::new(src, file);
    let (app, refs, mut sink) = build(&doc, overrides)?;
    let mut warnings = Sink::new(file);
    against::check(&app, &refs, cluster, &mut sink, &mut warnings);
    let app = sink.into_result(app)?;
    Ok((app, warnings.into_errors().map(|w| w.0).unwrap_or_default()))
}

/// Everything read from one application file so far.
struct Builder<'d> {
    doc: &'d Doc<'d>,
    sink: Sink,
    names: Expander,
    params: BTreeMap<String, f64>,
    graph: DiGraph<Object, Edge, u32>,
    groups: Vec<Group>,
    by_name: HashMap<String, GroupId>,
    /// Groups whose instances could not be made (bad count or name, over the cap): what refers
    /// to them is not wrong on its own account.
    broken: Vec<bool>,
    /// Groups one of whose connections was rejected: "no input connection" would repeat it.
    tainted: Vec<bool>,
    connections: Vec<Connection>,
    conn_names: HashMap<String, usize>,
    refs: Vec<GroupRefs>,
}

fn build<'d>(doc: &'d Doc<'d>, overrides: &[Override]) -> Result<(Application, Vec<GroupRefs>, Sink), InputErrors> {
    let raw: RawApp = doc.deserialize()?;
    let mut b = Builder {
        doc,
        sink: doc.sink(),
        names: Expander::new(),
        params: BTreeMap::new(),
        graph: DiGraph::default(),
        groups: Vec::new(),
        by_name: HashMap::new(),
        broken: Vec::new(),
        tainted: Vec::new(),
        connections: Vec::new(),
        conn_names: HashMap::new(),
        refs: Vec::new(),
    };
    b.parameters(&raw.parameters, overrides);
    if raw.modules.is_empty() {
        b.sink.push(None, "application", "has no module: declare at least one [[modules]]");
    }
    let mut mpi_specs = Vec::new();
    for m in &raw.modules {
        if let Some(gid) = b.module(m) {
            if let Some(mpi) = &m.mpi {
                mpi_specs.push((gid, mpi));
            }
        }
    }
    for f in &raw.filters {
        b.filter(f);
    }
    for c in &raw.connections {
        b.connection(c);
    }
    for (gid, mpi) in mpi_specs {
        b.mpi(gid, mpi);
    }
    b.filter_structure();
    let requirements = raw.requirements.iter().enumerate().filter_map(|(i, r)| b.requirement(i, r)).collect();
    let app = Application {
        name: raw.name.unwrap_or_else(|| "application".into()),
        parameters: b.params,
        graph: b.graph,
        groups: b.groups,
        connections: b.connections,
        requirements,
        sync_shape: Default::default(),
    };
    Ok((app, b.refs, b.sink))
}

impl Builder<'_> {
    fn ln(&self, span: std::ops::Range<usize>) -> Option<usize> {
        self.doc.line(span)
    }

    /// Parameters, then command-line overrides.
    fn parameters(&mut self, raw: &BTreeMap<String, Spanned<f64>>, overrides: &[Override]) {
        for (k, v) in raw {
            let line = self.ln(v.span());
            if RESERVED.contains(&k.as_str()) || !k.chars().all(|c| c.is_alphanumeric() || c == '_') {
                self.sink.push(
                    line,
                    format!("parameter {k}"),
                    "is not a usable name (letters, digits and _; not instances/from_instances/to_instances)",
                );
            }
            if !v.get_ref().is_finite() {
                self.sink.push(line, format!("parameter {k}"), format!("must be a finite number, got {}", v.get_ref()));
            }
            self.params.insert(k.clone(), *v.get_ref());
        }
        for o in overrides {
            if self.params.contains_key(&o.name) {
                self.params.insert(o.name.clone(), o.value);
            } else {
                let known = self.params.keys().map(|s| s.as_str());
                let h = hint(&o.name, self.params.keys().map(|s| s.as_str()));
                self.sink.push(
                    None,
                    format!("--set {}", o.name),
                    format!("no such parameter{h} (known: {})", listing(known)),
                );
            }
        }
    }

    /// Declares a module or filter group with its instance count. A group whose instances cannot
    /// be made is still declared (broken), so references to it add no errors of their own.
    fn group(
        &mut self,
        name: &Spanned<String>,
        what: &str,
        inst: &Option<Spanned<Scalar>>,
    ) -> Option<(GroupId, usize)> {
        let n = name.get_ref();
        let line = self.ln(name.span());
        if self.by_name.contains_key(n) {
            self.sink.push(
                line,
                format!("{what} {n}"),
                "is declared twice (module and filter names share one namespace)",
            );
            return None;
        }
        let id = GroupId(self.groups.len() as u32);
        self.by_name.insert(n.clone(), id);
        self.groups.push(Group {
            name: n.clone(),
            objects: vec![],
            is_module: what == "module",
            allowed_nodes: None,
            pins: None,
        });
        self.broken.push(true);
        self.tainted.push(false);
        if !valid_name(n) {
            self.sink.push(line, format!("{what} \"{}\"", short(n)), NAME_RULE);
            return None;
        }
        let k = match inst {
            None => 1,
            Some(s) => match count(s.get_ref(), &self.params) {
                Ok(k) => k,
                Err(e) => {
                    self.sink.push(self.ln(s.span()), format!("{what} {n}"), format!("instances {e}"));
                    return None;
                }
            },
        };
        let total = self.graph.node_count() + k;
        if total > caps::OBJECTS {
            self.sink.push(
                line,
                format!("{what} {n}"),
                format!(
                    "{k} instances make {total} module and filter instances in all; flowmap handles at most {}",
                    caps::OBJECTS
                ),
            );
            return None;
        }
        self.broken[id.ix()] = false;
        Some((id, k))
    }

    fn add_objects(&mut self, gid: GroupId, k: usize, kind: ObjectKind) {
        let name = self.groups[gid.ix()].name.clone();
        for i in 0..k {
            let o = self.graph.add_node(Object {
                name: instance_name(&name, k, i),
                group: gid,
                index: i,
                kind: kind.clone(),
            });
            self.groups[gid.ix()].objects.push(o);
        }
    }

    fn module(&mut self, m: &RawModule) -> Option<GroupId> {
        let (gid, k) = self.group(&m.name, "module", &m.instances)?;
        let item = format!("module {}", m.name.get_ref());
        let mut vars = self.params.clone();
        vars.insert("instances".into(), k as f64);
        let texec = per_type(&mut self.sink, self.doc, &item, "texec", &m.texec, Dim::Time, &vars, |v| {
            if v > 0.0 {
                Ok(())
            } else {
                Err(format!("must be > 0, got {} ms", v * 1e3))
            }
        });
        let load = per_type(&mut self.sink, self.doc, &item, "load", &m.load, Dim::Fraction, &vars, |v| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(format!("must satisfy 0 < LD <= 1, got {v}"))
            }
        });
        if let (Some(PerType::ByType(t)), Some(PerType::ByType(l))) = (&texec, &load) {
            let only = |a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>| {
                a.keys().filter(|x| !b.contains_key(*x)).map(|x| format!("\"{x}\"")).collect::<Vec<_>>()
            };
            for (field, span, types) in [("texec", m.texec.span(), only(t, l)), ("load", m.load.span(), only(l, t))] {
                if !types.is_empty() {
                    self.sink.push(
                        self.ln(span),
                        &item,
                        format!(
                            "processor type {} only in {field}: texec and load must list the same types",
                            types.join(", ")
                        ),
                    );
                }
            }
        }
        let mut refs = GroupRefs { group: gid, allowed: None, pin: None, texec: None, load: None };
        if let Some(a) = &m.allowed_nodes {
            match self.names.all(a.get_ref()) {
                Ok(v) => {
                    refs.allowed = Some((self.ln(a.span()), v.clone()));
                    self.groups[gid.ix()].allowed_nodes = Some(v);
                }
                Err(e) => self.sink.push(self.ln(a.span()), &item, format!("allowed_nodes: {e}")),
            }
        }
        if let Some(p) = &m.pin {
            let line = self.ln(p.span());
            match self.names.all(p.get_ref()) {
                Ok(v) if v.len() == k => {
                    if let Some(allowed) = &self.groups[gid.ix()].allowed_nodes {
                        let set: std::collections::HashSet<&String> = allowed.iter().collect();
                        let outside: Vec<String> = v
                            .iter()
                            .enumerate()
                            .filter(|(_, n)| !set.contains(n))
                            .map(|(i, n)| format!("{} on {n}", instance_name(m.name.get_ref(), k, i)))
                            .collect();
                        if !outside.is_empty() {
                            self.sink.push(
                                line,
                                &item,
                                format!(
                                    "pin puts {} outside its allowed_nodes",
                                    listing(outside.iter().map(|s| s.as_str()))
                                ),
                            );
                        }
                    }
                    refs.pin = Some((line, v.clone()));
                    self.groups[gid.ix()].pins = Some(v);
                }
                Ok(v) => self.sink.push(line, &item, format!("pin lists {} nodes for {k} instances", v.len())),
                Err(e) => self.sink.push(line, &item, format!("pin: {e}")),
            }
        }
        refs.texec = Some((self.ln(m.texec.span()), texec.clone()));
        refs.load = Some((self.ln(m.load.span()), load.clone()));
        self.refs.push(refs);
        // A module whose costs are wrong still gets its instances (with placeholder costs: the
        // application is rejected anyway), so its connections and paths are checked as usual.
        let texec = texec.unwrap_or(PerType::Uniform(1.0));
        let load = load.unwrap_or(PerType::Uniform(1.0));
        self.add_objects(gid, k, ObjectKind::Module(ModuleCosts { texec, load }));
        Some(gid)
    }

    fn filter(&mut self, f: &RawFilter) {
        let Some((gid, k)) = self.group(&f.name, "filter", &f.instances) else {
            return;
        };
        let item = format!("filter {}", f.name.get_ref());
        let ratio = match &f.ratio {
            None => 1,
            Some(r) if *r.get_ref() >= 1 && *r.get_ref() <= 1_000_000 => *r.get_ref() as u32,
            Some(r) => {
                self.sink.push(
                    self.ln(r.span()),
                    &item,
                    format!("ratio must be a whole number from 1 to 1000000, got {}", r.get_ref()),
                );
                1
            }
        };
        const KINDS: [&str; 5] = ["greedy", "broadcast", "merge", "gather", "scatter"];
        let kind = match f.kind.get_ref().as_str() {
            "greedy" => FilterKind::Greedy,
            "broadcast" => FilterKind::Broadcast,
            "merge" | "gather" => FilterKind::Merge { ratio },
            "scatter" => FilterKind::Scatter,
            other => {
                self.sink.push(
                    self.ln(f.kind.span()),
                    &item,
                    format!(
                        "unknown kind \"{other}\"{} (greedy, broadcast, merge, gather, scatter)",
                        hint(other, KINDS)
                    ),
                );
                FilterKind::Broadcast
            }
        };
        if ratio != 1 && !matches!(kind, FilterKind::Merge { .. }) {
            self.sink.push(self.ln(f.kind.span()), &item, "only merge/gather filters take a ratio");
        }
        self.add_objects(gid, k, ObjectKind::Filter(kind));
    }

    /// Marks the groups a rejected connection names, so their structural checks stay quiet.
    fn taint(&mut self, c: &RawConnection) {
        for end in [&c.from, &c.to] {
            let g = end.get_ref().split('[').next().unwrap_or("").trim();
            if let Some(&gid) = self.by_name.get(g) {
                self.tainted[gid.ix()] = true;
            }
        }
    }

    fn connection(&mut self, c: &RawConnection) {
        let errors_before = self.sink.count();
        self.add_connection(c);
        if self.sink.count() > errors_before {
            self.taint(c);
        }
    }

    fn add_connection(&mut self, c: &RawConnection) {
        let default_name = format!("{}->{}", c.from.get_ref(), c.to.get_ref());
        let item = format!("connection {default_name}");
        let from = self.endpoint(&item, &c.from);
        let to = self.endpoint(&item, &c.to);
        let sync = match c.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span())) {
            None | Some(("fifo", _)) => Sync::Fifo,
            Some(("greedy", _)) => Sync::Greedy,
            Some((other, span)) => {
                self.sink.push(
                    self.ln(span),
                    &item,
                    format!("unknown kind \"{other}\"{} (fifo, greedy)", hint(other, ["fifo", "greedy"])),
                );
                return;
            }
        };
        let (Some(from), Some(to)) = (from, to) else {
            return;
        };
        const PATTERNS: [&str; 3] = ["one-to-one", "all-to-all", "modulo"];
        let pattern = match c.pattern.as_ref().map(|p| (p.get_ref().as_str(), p.span())) {
            None if from.len() == to.len() => Pattern::OneToOne,
            None => {
                self.sink.push(
                    self.ln(c.from.span()),
                    &item,
                    format!(
                        "{} sources and {} destinations: say pattern = \"all-to-all\" or \"modulo\"",
                        from.len(),
                        to.len()
                    ),
                );
                return;
            }
            Some(("one-to-one", _)) => Pattern::OneToOne,
            Some(("all-to-all", _)) => Pattern::AllToAll,
            Some(("modulo", _)) | Some(("mod", _)) => Pattern::Modulo,
            Some((other, span)) => {
                self.sink.push(
                    self.ln(span),
                    &item,
                    format!("unknown pattern \"{other}\"{} (one-to-one, all-to-all, modulo)", hint(other, PATTERNS)),
                );
                return;
            }
        };
        if pattern == Pattern::OneToOne && from.len() != to.len() {
            self.sink.push(
                self.ln(c.from.span()),
                &item,
                format!("one-to-one needs equal counts, got {} sources and {} destinations", from.len(), to.len()),
            );
            return;
        }
        let mut vars = self.params.clone();
        vars.insert("from_instances".into(), from.len() as f64);
        vars.insert("to_instances".into(), to.len() as f64);
        let line = self.ln(c.volume.span());
        let Some(volume) = measured(&mut self.sink, line, &item, "volume", c.volume.get_ref(), Dim::Data, &vars, false)
        else {
            return;
        };
        let name = match &c.name {
            Some(n) => {
                if self.conn_names.contains_key(n.get_ref()) {
                    self.sink.push(
                        self.ln(n.span()),
                        &item,
                        format!("connection name \"{}\" is used twice", n.get_ref()),
                    );
                    return;
                }
                n.get_ref().clone()
            }
            None => {
                let k = self.conn_names.get(&default_name).map(|_| self.connections.len()).unwrap_or(0);
                if k == 0 {
                    default_name.clone()
                } else {
                    format!("{default_name}#{k}")
                }
            }
        };
        let expanded = match pattern {
            Pattern::AllToAll => from.len().saturating_mul(to.len()),
            _ => from.len().max(to.len()),
        };
        if !self.edges_fit(expanded, self.ln(c.from.span()), &item, "") {
            return;
        }
        let cid = ConnectionId(self.connections.len() as u32);
        self.conn_names.insert(name.clone(), cid.ix());
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
        let mut edges = Vec::with_capacity(pairs.len());
        for (a, b) in pairs {
            if a == b {
                self.sink.push(self.ln(c.from.span()), &item, format!("connects {} to itself", self.graph[a].name));
                continue;
            }
            edges.push(self.graph.add_edge(a, b, Edge { connection: cid, role: EdgeRole::Flow(sync), volume }));
        }
        self.connections.push(Connection { name, edges, lockstep: false });
    }

    /// Whether `n` more edges stay within the cap (an error otherwise).
    fn edges_fit(&mut self, n: usize, line: Option<usize>, item: &str, what: &str) -> bool {
        let total = n.saturating_add(self.graph.edge_count());
        if total <= caps::EDGES {
            return true;
        }
        self.sink.push(
            line,
            item,
            format!("{what}expands to {n} edges, {total} in all; flowmap handles at most {} in all", caps::EDGES),
        );
        false
    }

    /// MPI exchanges among the instances of a parallel module.
    fn mpi(&mut self, gid: GroupId, mpi: &Spanned<RawMpi>) {
        let g = &self.groups[gid.ix()];
        let item = format!("module {}", g.name);
        let objs = g.objects.clone();
        let n = objs.len();
        let line = self.ln(mpi.span());
        let mut vars = self.params.clone();
        vars.insert("instances".into(), n as f64);
        let raw = &mpi.get_ref().volume;
        let Some(volume) = measured(&mut self.sink, line, &item, "mpi volume", raw, Dim::Data, &vars, false) else {
            return;
        };
        let pattern = mpi.get_ref().pattern.as_str();
        let expanded = match pattern {
            "all-to-all" => n.saturating_mul(n.saturating_sub(1)),
            "ring" if n > 2 => 2 * n,
            "ring" => n.min(2) * n.saturating_sub(1),
            other => {
                self.sink.push(
                    line,
                    &item,
                    format!(
                        "unknown mpi pattern \"{other}\"{} (all-to-all, ring)",
                        hint(other, ["all-to-all", "ring"])
                    ),
                );
                return;
            }
        };
        if !self.edges_fit(expanded, line, &item, &format!("mpi {pattern} among {n} instances ")) {
            return;
        }
        let pairs: Vec<(usize, usize)> = match pattern {
            "all-to-all" => (0..n).flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j))).collect(),
            _ if n >= 2 => {
                let mut v: Vec<(usize, usize)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
                if n > 2 {
                    v.extend((0..n).map(|i| ((i + 1) % n, i)));
                }
                v
            }
            _ => vec![],
        };
        let cid = ConnectionId(self.connections.len() as u32);
        let edges = pairs
            .into_iter()
            .map(|(i, j)| self.graph.add_edge(objs[i], objs[j], Edge { connection: cid, role: EdgeRole::Mpi, volume }))
            .collect();
        let name = format!("{}.mpi", self.groups[gid.ix()].name);
        self.connections.push(Connection { name, edges, lockstep: mpi.get_ref().lockstep });
    }

    /// Filters need an input and an output; then cycles are checked (when all else is right).
    fn filter_structure(&mut self) {
        let g = &self.graph;
        for f in g.node_indices().filter(|&o| !g[o].is_module()) {
            if self.tainted[g[f].group.ix()] {
                continue;
            }
            let ins = g.edges_directed(f, petgraph::Direction::Incoming).count();
            let outs = g.edges_directed(f, petgraph::Direction::Outgoing).count();
            if ins == 0 || outs == 0 {
                self.sink.push(
                    None,
                    format!("filter {}", g[f].name),
                    if ins == 0 { "has no input connection" } else { "has no output connection" },
                );
            }
        }
        if self.sink.is_empty() {
            check_cycles(&mut self.sink, &self.graph);
        }
    }

    fn requirement(&mut self, i: usize, r: &RawRequirement) -> Option<Requirement> {
        let rname = r.name.clone().unwrap_or_else(|| format!("requirement {}", i + 1));
        let item = format!("requirement {rname}");
        match (&r.module, &r.min_frequency, &r.path, &r.max_latency) {
            (Some(m), Some(f), None, None) => {
                let Some(&gid) = self.by_name.get(m.get_ref()) else {
                    let h = hint(m.get_ref(), self.groups.iter().filter(|g| g.is_module).map(|g| g.name.as_str()));
                    self.sink.push(self.ln(m.span()), &item, format!("unknown module \"{}\"{h}", m.get_ref()));
                    return None;
                };
                if !self.groups[gid.ix()].is_module {
                    self.sink.push(
                        self.ln(m.span()),
                        &item,
                        format!("\"{}\" is a filter; frequency requirements name modules", m.get_ref()),
                    );
                    return None;
                }
                let line = self.ln(f.span());
                let field = "min_frequency";
                let hz = measured(&mut self.sink, line, &item, field, f.get_ref(), Dim::Frequency, &self.params, true)?;
                Some(Requirement::MinFrequency { name: rname, group: gid, hz })
            }
            (None, None, Some(p), Some(l)) => {
                let line = self.ln(p.span());
                let path = self.path(&item, p.get_ref(), line);
                let ll = self.ln(l.span());
                let max =
                    measured(&mut self.sink, ll, &item, "max_latency", l.get_ref(), Dim::Time, &self.params, true);
                Some(Requirement::MaxLatency { name: rname, path: path?, max_s: max? })
            }
            _ => {
                self.sink.push(None, &item, "give either module + min_frequency, or path + max_latency");
                None
            }
        }
    }

    /// The objects of a path, each followed by a connection to the next. Names of broken groups'
    /// instances are skipped quietly (their group's error is already reported).
    fn path(&mut self, item: &str, names: &[String], line: Option<usize>) -> Option<Vec<ObjectId>> {
        if names.is_empty() {
            self.sink.push(line, item, "path is empty");
            return None;
        }
        let mut path = Vec::new();
        let mut quiet = false;
        for n in names {
            let (group, index) = match n.split_once('[') {
                Some((g, rest)) => (g.trim(), rest.strip_suffix(']').and_then(|i| i.trim().parse::<usize>().ok())),
                None => (n.trim(), None),
            };
            let gid = self.by_name.get(group).copied();
            if gid.is_some_and(|g| self.broken[g.ix()] || self.tainted[g.ix()]) {
                quiet = true;
                continue;
            }
            let found = gid.and_then(|g| {
                let objs = &self.groups[g.ix()].objects;
                let o = match index {
                    Some(i) => objs.get(i).copied(),
                    None if objs.len() == 1 => Some(objs[0]),
                    None => None,
                };
                o.filter(|&o| &self.graph[o].name == n)
            });
            match (found, gid) {
                (Some(o), _) => path.push(o),
                (None, Some(g)) if self.groups[g.ix()].objects.len() > 1 && !n.contains('[') => {
                    let k = self.groups[g.ix()].objects.len();
                    self.sink.push(
                        line,
                        item,
                        format!("\"{n}\" in path is a group of {k} instances: name one, e.g. {n}[0]"),
                    );
                }
                (None, _) => {
                    let names = self.graph.node_indices().map(|o| self.graph[o].name.as_str());
                    let h = hint(n, names);
                    self.sink.push(line, item, format!("unknown object \"{n}\" in path{h}"));
                }
            }
        }
        if quiet || path.len() != names.len() {
            return None;
        }
        let mut ok = true;
        for w in path.windows(2) {
            if self.graph.find_edge(w[0], w[1]).is_none() {
                let (a, b) = (&self.graph[w[0]].name, &self.graph[w[1]].name);
                self.sink.push(line, item, format!("no connection from {a} to {b} in path"));
                ok = false;
            }
        }
        ok.then_some(path)
    }

    /// Resolves `group` or `group[i]` to its objects.
    fn endpoint(&mut self, item: &str, s: &Spanned<String>) -> Option<Vec<ObjectId>> {
        let line = self.ln(s.span());
        let text = s.get_ref().trim();
        let (gname, index) = match text.split_once('[') {
            Some((g, rest)) => match rest.strip_suffix(']').and_then(|i| i.trim().parse::<usize>().ok()) {
                Some(i) => (g.trim(), Some(i)),
                None => {
                    self.sink.push(line, item, format!("cannot read \"{text}\": write group or group[i]"));
                    return None;
                }
            },
            None => (text, None),
        };
        let Some(&gid) = self.by_name.get(gname) else {
            let h = hint(gname, self.groups.iter().map(|g| g.name.as_str()));
            self.sink.push(line, item, format!("unknown module or filter \"{gname}\"{h}"));
            return None;
        };
        if self.broken[gid.ix()] {
            return None; // the group itself had an error, already reported
        }
        let objs = &self.groups[gid.ix()].objects;
        match index {
            None => Some(objs.clone()),
            Some(i) if i < objs.len() => Some(vec![objs[i]]),
            Some(i) => {
                let k = objs.len();
                self.sink.push(line, item, format!("{gname} has {k} instances, no [{i}]"));
                None
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn per_type(
    sink: &mut Sink,
    doc: &Doc,
    item: &str,
    field: &str,
    raw: &Spanned<RawPerType>,
    dim: Dim,
    vars: &BTreeMap<String, f64>,
    check: impl Fn(f64) -> Result<(), String>,
) -> Option<PerType> {
    let line = doc.line(raw.span());
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
            if m.len() > caps::PROCESSOR_TYPES || m.keys().any(|t| t.chars().count() > caps::NAME_CHARS) {
                let msg = format!(
                    "{field} lists {} processor types; at most {}, named in at most {} characters",
                    m.len(),
                    caps::PROCESSOR_TYPES,
                    caps::NAME_CHARS
                );
                sink.push(line, item, msg);
                return None;
            }
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

/// Rejects cycles made of filters only (no object would ever start them) and synchronous cycles
/// through a k:1 filter (k > 1), which can never carry one message around.
fn check_cycles(sink: &mut Sink, g: &DiGraph<Object, Edge, u32>) {
    // Filters-only subgraph; `filter_map` keeps the filters in order, so its node i is `filters[i]`.
    let filters: Vec<ObjectId> = g.node_indices().filter(|&o| !g[o].is_module()).collect();
    let filters_only = g.filter_map(|_, o| (!o.is_module()).then_some(()), |_, e| Some(e.role));
    for scc in petgraph::algo::tarjan_scc(&filters_only) {
        if scc.len() > 1 || filters_only.contains_edge(scc[0], scc[0]) {
            let names: Vec<&str> = scc.iter().map(|&i| g[filters[i.index()]].name.as_str()).collect();
            sink.push(None, format!("filters {}", listing(names)), "form a cycle without a module");
        }
    }
    // Synchronous subgraph: FIFO edges, not leaving a greedy filter.
    let sync = g.filter_map(
        |_, _| Some(()),
        |ei, e| {
            let (s, _) = g.edge_endpoints(ei).expect("edge");
            let fifo = e.role == EdgeRole::Flow(Sync::Fifo) && g[s].filter() != Some(FilterKind::Greedy);
            fifo.then_some(())
        },
    );
    for scc in petgraph::algo::tarjan_scc(&sync) {
        if scc.len() > 1 {
            for &o in &scc {
                if let Some(FilterKind::Merge { ratio }) = g[o].filter() {
                    if ratio > 1 {
                        sink.push(
                            None,
                            format!("filter {}", g[o].name),
                            format!("is a {ratio}:1 gather inside a synchronous cycle, which can never complete an iteration"),
                        );
                    }
                }
            }
        }
    }
}

/// `group` for a group of one instance, `group[i]` otherwise.
fn instance_name(group: &str, count: usize, i: usize) -> String {
    if count == 1 {
        group.to_string()
    } else {
        format!("{group}[{i}]")
    }
}
