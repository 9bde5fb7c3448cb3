//! Text output of `flowmap check`: tables of modules, filters, links, then diagnostics.

use crate::model::{Application, Cluster, Mapping};
use crate::perf::Schedule;
use crate::verify::{Report, Verdict};
use comfy_table::{presets::UTF8_FULL_CONDENSED, CellAlignment, Table};
use std::fmt::Write;

fn f(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "inf".into()
    }
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(header.to_vec());
    t
}

fn right(t: &mut Table, from: usize) {
    for i in from..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

pub fn check_text(app: &Application, cluster: &Cluster, mapping: &Mapping, r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} on {}", app.name, cluster.name);
    if let Some(p) = &r.prediction {
        let mut t = table(&[
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
        for m in &p.modules {
            t.add_row(vec![
                app.object(m.object).name.clone(),
                cluster.node(m.node).name.clone(),
                m.cpu.to_string(),
                f(m.ld, 2),
                f(m.texec * 1e3, 2),
                f(m.tio * 1e3, 2),
                f(m.ldc, 3),
                f(m.tcexec * 1e3, 2),
                f(m.tit * 1e3, 2),
                f(m.frequency(), 2),
                f(m.iteration_load(), 3),
            ]);
        }
        right(&mut t, 2);
        let _ = writeln!(out, "\nModules (load = LD x Texec / Tit, the load over an iteration)\n{t}");
        let filters: Vec<_> = app.graph.node_indices().filter(|&o| !app.object(o).is_module()).collect();
        if !filters.is_empty() {
            let mut t = table(&["filter", "kind", "node", "F Hz"]);
            for o in filters {
                t.add_row(vec![
                    app.object(o).name.clone(),
                    app.object(o).filter().map(|k| k.name()).unwrap_or("").to_string(),
                    cluster.node(mapping.node_of(o)).name.clone(),
                    f(p.frequency[o.index()], 2),
                ]);
            }
            right(&mut t, 3);
            let _ = writeln!(out, "\nFilters\n{t}");
        }
        if !p.links.is_empty() {
            let mut t = table(&["node", "network", "send MB/s", "recv MB/s", "capacity MB/s"]);
            for l in &p.links {
                t.add_row(vec![
                    cluster.node(l.node).name.clone(),
                    cluster.network(l.network).name.clone(),
                    f(l.send / 1e6, 3),
                    f(l.recv / 1e6, 3),
                    f(l.capacity / 1e6, 1),
                ]);
            }
            right(&mut t, 2);
            let _ = writeln!(out, "\nLinks (eq 9-10, each way)\n{t}");
        }
        for (n, l) in &r.path_latencies {
            let _ = writeln!(out, "\nPath {n}: latency {} ms (eq 11)", f(l * 1e3, 2));
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
    if r.diagnostics.is_empty() {
        let _ = writeln!(out, "\nNo problems found.");
    } else {
        let _ = writeln!(out, "\nDiagnostics");
        for d in &r.diagnostics {
            let sev = if d.kind.is_error() { "error" } else { "warning" };
            let _ = writeln!(out, "  {sev} [{}] {}", d.kind.name(), d.message);
        }
    }
    let _ = writeln!(out, "\nVerdict: {}", if r.verdict == Verdict::Sound { "sound" } else { "UNSOUND" });
    out
}
