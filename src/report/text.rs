//! Text output of `flowmap check` (and the check part of `solve`): a summary first, grouped
//! diagnostics, then the tables (instances with identical numbers folded into one row unless
//! `Style::verbose`), each column explained by a legend.

use super::diagnostics::DiagGroup;
use super::style::{fold_indices, fold_names, num, pct, right, Style};
use super::summary::{summarize, Summary};
use crate::model::{Application, Cluster, Mapping};
use crate::perf::Schedule;
use crate::verify::{Report, Verdict};
use std::fmt::Write;

/// The legend of the module table (README, "Glossary", says more).
pub const LEGEND: &str = "LD: share of Texec spent computing on the CPU; Texec: one iteration alone; \
T_I/O: time per iteration not computing (I/O, waiting for inputs; eq 6-7), which orders the CPU allocation; \
LDc: CPU share the allocation gives; Tcexec: Texec under CPU sharing (Texec x LD / LDc); \
Tit: time between iterations (1 / F); load: LD x Texec / Tit, the CPU load over an iteration";

fn verdict_word(v: Verdict, st: &Style) -> String {
    match v {
        Verdict::Sound => st.good("sound"),
        Verdict::Unsound => st.bad("UNSOUND"),
    }
}

fn headroom_line(s: &Summary) -> String {
    let h = s.headroom;
    if h.is_none() {
        "none: links and CPUs may run at 100 %".into()
    } else {
        format!("links {}, CPUs {} of capacity", pct(h.link.min(1.0)), pct(h.cpu.min(1.0)))
    }
}

/// The summary: verdict, nodes, busiest resources, bottleneck, headroom, groups, requirements
/// and the grouped diagnostics.
pub fn summary_text(app: &Application, cluster: &Cluster, mapping: &Mapping, r: &Report, st: &Style) -> String {
    let s = summarize(app, cluster, mapping, r);
    let mut out = String::new();
    let _ = writeln!(out, "{} on {}", app.name, cluster.name);
    let _ = writeln!(out, "  Verdict: {}", verdict_word(s.verdict, st));
    let _ = writeln!(out, "  nodes used     {} of {}", s.nodes_used, s.nodes_total);
    if let Some(c) = &s.cpu {
        let names: Vec<&str> = c.objects.iter().map(|&o| app.object(o).name.as_str()).collect();
        let _ = writeln!(
            out,
            "  busiest CPU    CPU {} of {}: {} busy ({})",
            c.cpu,
            cluster.node(c.node).name,
            pct(c.load),
            fold_names(&names, 50)
        );
    }
    if let Some(l) = &s.link {
        let _ = writeln!(
            out,
            "  busiest link   {} {} {} of {} MB/s on {} ({})",
            cluster.node(l.node).name,
            if l.send { "sends" } else { "receives" },
            num(l.bytes / 1e6),
            num(l.capacity / 1e6),
            cluster.network(l.network).name,
            pct(l.util())
        );
    }
    if let Some((b, margin)) = &s.bottleneck {
        let left = if !margin.is_finite() {
            String::new()
        } else if *margin >= 0.0 {
            format!("; {} left", pct(*margin))
        } else {
            format!(", {}{} the limit", num(1.0 - margin), st.times())
        };
        let _ = writeln!(out, "  bottleneck     {b}{left}");
    }
    let _ = writeln!(out, "  headroom       {}", headroom_line(&s));
    if !s.groups.is_empty() {
        let mut t = st.table(&["group", "instances", "nodes", "frequency Hz", "paced by"]);
        for g in &s.groups {
            let f = if num(g.fmin) == num(g.fmax) { num(g.fmin) } else { format!("{}..{}", num(g.fmin), num(g.fmax)) };
            t.add_row(vec![
                app.group(g.group).name.clone(),
                g.instances.to_string(),
                g.nodes.clone(),
                f,
                g.pace.clone(),
            ]);
        }
        if let Some(c) = t.column_mut(1) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
        if let Some(c) = t.column_mut(3) {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
        let _ = writeln!(out, "\nGroups\n{t}");
    }
    if s.requirements.is_empty() {
        let _ = writeln!(out, "\nRequirements: none declared");
    } else {
        let mut t = st.table(&["requirement", "what", "value", "bound", "margin"]);
        for q in &s.requirements {
            let margin = if q.margin >= 0.0 { format!("+{}", pct(q.margin)) } else { st.bad(&pct(q.margin)) };
            t.add_row(vec![
                q.name.clone(),
                q.what.clone(),
                format!("{} {}", num(q.value), q.unit),
                format!("{} {} {}", q.rel, num(q.bound), q.unit),
                margin,
            ]);
        }
        right(&mut t, 2);
        let _ = writeln!(out, "\nRequirements (margin: how far the value is inside its bound)\n{t}");
    }
    out += &diagnostics_text(&s.diagnostics, r, st);
    out
}

/// Grouped diagnostics: kind, subject, count, where, the worst case and a fix.
pub(crate) fn diagnostics_text(groups: &[DiagGroup], r: &Report, st: &Style) -> String {
    let mut out = String::new();
    if groups.is_empty() {
        let _ = writeln!(out, "\nNo problems found.");
        return out;
    }
    let _ = writeln!(out, "\nProblems: {} diagnostic(s) in {} group(s)", r.diagnostics.len(), groups.len());
    for g in groups {
        let sev = if g.kind.is_error() { st.bad("error") } else { st.warn("warning") };
        let count = if g.members.len() > 1 { format!("  {}{}", st.times(), g.members.len()) } else { String::new() };
        let _ = writeln!(out, "  {sev} [{}] {}{count}", g.kind.name(), g.subject);
        if !g.places.is_empty() {
            let _ = writeln!(out, "      where: {}", g.places);
        }
        let over = match g.ratio {
            Some(x) if x.is_finite() && x > 1.0 => format!(" ({}{} the limit)", num(x), st.times()),
            _ => String::new(),
        };
        let label = if g.members.len() > 1 { "worst" } else { "what" };
        let _ = writeln!(out, "      {label}: {}{over}", g.worst.message);
        if !g.hint.is_empty() {
            let _ = writeln!(out, "      fix:   {}", g.hint);
        }
    }
    out
}

/// Words wrapped at `width` columns, continuation lines indented.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for w in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + w.chars().count() > width {
            out += &line;
            out.push('\n');
            line = indent.to_string();
        } else if !line.is_empty() && line != indent {
            line.push(' ');
        }
        line += w;
    }
    out + &line
}

/// Consecutive rows with equal cells (but the first `keys`) become one, with `fold` applied to
/// those key cells.
struct Folder {
    rows: Vec<(Vec<String>, Vec<String>)>,
}

impl Folder {
    fn push(&mut self, keys: Vec<String>, cells: Vec<String>, fold: bool) {
        match self.rows.last_mut() {
            Some((k, c)) if fold && *c == cells && k.len() == keys.len() => {
                for (a, b) in k.iter_mut().zip(keys) {
                    a.push('\u{1}');
                    a.push_str(&b);
                }
            }
            _ => self.rows.push((keys, cells)),
        }
    }
}

fn split(s: &str) -> Vec<&str> {
    s.split('\u{1}').collect()
}

/// Instance names `fluid[3]`, ... folded to `fluid[0..31]`.
fn fold_instances(names: &[&str]) -> String {
    if names.len() == 1 {
        return names[0].to_string();
    }
    let base = names[0].split('[').next().unwrap_or("");
    let ix: Option<Vec<usize>> =
        names.iter().map(|n| n.strip_prefix(base)?.strip_prefix('[')?.strip_suffix(']')?.parse().ok()).collect();
    match ix {
        Some(ix) => format!("{base}[{}]", fold_indices(&ix)),
        None => fold_names(names, 40),
    }
}

/// CPUs folded: `0..3`, `1`.
fn fold_cpus(cpus: &[&str]) -> String {
    let mut v: Vec<usize> = cpus.iter().filter_map(|c| c.parse().ok()).collect();
    v.sort();
    v.dedup();
    fold_indices(&v)
}

pub fn check_text(app: &Application, cluster: &Cluster, mapping: &Mapping, r: &Report, st: &Style) -> String {
    summary_text(app, cluster, mapping, r, st) + &detail_text(app, cluster, mapping, r, st)
}

/// The tables after the summary.
pub(crate) fn detail_text(app: &Application, cluster: &Cluster, mapping: &Mapping, r: &Report, st: &Style) -> String {
    let mut out = String::new();
    let fold = !st.verbose;
    let folded_note = if fold { " (instances with identical numbers share a row; --verbose for one each)" } else { "" };
    if let Some(p) = &r.prediction {
        let mut f = Folder { rows: vec![] };
        for g in &app.groups {
            for &o in &g.objects {
                let Some(m) = p.module(o) else { continue };
                f.push(
                    vec![app.object(o).name.clone(), cluster.node(m.node).name.clone(), m.cpu.to_string()],
                    vec![
                        num(m.ld),
                        num(m.texec * 1e3),
                        num(m.tio * 1e3),
                        num(m.ldc),
                        num(m.tcexec * 1e3),
                        num(m.tit * 1e3),
                        num(m.frequency()),
                        num(m.iteration_load()),
                    ],
                    fold,
                );
            }
        }
        let mut t = st.table(&[
            "module",
            "node",
            "cpu",
            "LD",
            "Texec ms",
            "T_I/O ms",
            "LDc",
            "Tcexec ms",
            "Tit ms",
            "F Hz",
            "load",
        ]);
        for (k, c) in f.rows {
            let mut row = vec![fold_instances(&split(&k[0])), fold_names(&split(&k[1]), 40), fold_cpus(&split(&k[2]))];
            row.extend(c);
            t.add_row(row);
        }
        right(&mut t, 2);
        let _ = writeln!(out, "\nModules{folded_note}\n{t}");
        let _ = writeln!(out, "{}", st.dim(&wrap(&format!("Legend: {LEGEND}."), 100, "  ")));
        let mut f = Folder { rows: vec![] };
        for g in app.groups.iter().filter(|g| !g.is_module) {
            for &o in &g.objects {
                f.push(
                    vec![app.object(o).name.clone(), cluster.node(mapping.node_of(o)).name.clone()],
                    vec![
                        app.object(o).filter().map(|k| k.name()).unwrap_or("").to_string(),
                        num(p.frequency[o.index()]),
                    ],
                    fold,
                );
            }
        }
        if !f.rows.is_empty() {
            let mut t = st.table(&["filter", "node", "kind", "F Hz"]);
            for (k, c) in f.rows {
                let mut row = vec![fold_instances(&split(&k[0])), fold_names(&split(&k[1]), 40)];
                row.extend(c);
                t.add_row(row);
            }
            right(&mut t, 3);
            let _ = writeln!(out, "\nFilters\n{t}");
        }
        if !p.links.is_empty() {
            let mut links: Vec<_> = p.links.iter().collect();
            if fold {
                links.sort_by_key(|l| (l.network, l.node));
            }
            let mut f = Folder { rows: vec![] };
            for l in links {
                f.push(
                    vec![cluster.node(l.node).name.clone()],
                    vec![
                        cluster.network(l.network).name.clone(),
                        num(l.send / 1e6),
                        num(l.recv / 1e6),
                        num(l.capacity / 1e6),
                        pct(l.send.max(l.recv) / l.capacity),
                    ],
                    fold,
                );
            }
            let mut t = st.table(&["node", "network", "send MB/s", "recv MB/s", "capacity MB/s", "use"]);
            for (k, c) in f.rows {
                let mut row = vec![fold_names(&split(&k[0]), 40)];
                row.extend(c);
                t.add_row(row);
            }
            right(&mut t, 2);
            let _ = writeln!(out, "\nLinks (eq 9-10, each way; use = the busier direction's share of capacity)\n{t}");
        }
        let lat: Vec<_> = r.path_latencies.iter().collect();
        for (n, l) in lat {
            let _ = writeln!(out, "\nPath {n}: latency {} ms (eq 11)", num(l * 1e3));
        }
        match &p.schedule {
            Schedule::Converged { iterations } => {
                let _ = writeln!(out, "\nSchedule: converged after {iterations} allocation round(s)");
            }
            Schedule::Unstable { period, .. } => {
                let _ = writeln!(out, "\nSchedule: UNSTABLE (orders oscillate with period {period})");
            }
            Schedule::NoConvergence { iterations, .. } => {
                let _ = writeln!(out, "\nSchedule: did not settle in {iterations} rounds");
            }
        }
    }
    if fold && r.diagnostics.len() > 1 {
        let _ = writeln!(out, "\n(--verbose or --format json list all {} diagnostics)", r.diagnostics.len());
    } else if st.verbose && !r.diagnostics.is_empty() {
        let _ = writeln!(out, "\nAll diagnostics");
        for d in &r.diagnostics {
            let sev = if d.kind.is_error() { st.bad("error") } else { st.warn("warning") };
            let _ = writeln!(out, "  {sev} [{}] {}", d.kind.name(), d.message);
        }
    }
    out
}
