//! Output of `flowmap limit`: JSON and text.

use super::json::{check_json, num as jnum};
use super::solve::{mapping_json, mapping_lines};
use super::style::{num, Style};
use crate::model::{Application, Cluster, GroupId};
use crate::solve::limit::{LimitOutcome, Probe};
use serde_json::{json, Value};
use std::fmt::Write;

/// What was searched for.
pub enum Target<'a> {
    Param(&'a str),
    Frequency(GroupId),
}

/// The value a probe stands for: the parameter value, or the frequency the group reached.
fn value(app: &Application, t: &Target, p: &Probe) -> f64 {
    match t {
        Target::Param(_) => p.value,
        Target::Frequency(g) => p
            .outcome
            .report
            .as_ref()
            .and_then(|r| r.prediction.as_ref())
            .map(|pr| {
                app.group(*g)
                    .objects
                    .iter()
                    .map(|&o| pr.module(o).map(|m| m.frequency()).unwrap_or(0.0))
                    .fold(f64::INFINITY, f64::min)
            })
            .unwrap_or(0.0),
    }
}

fn assumption(t: &Target) -> &'static str {
    match t {
        Target::Param(_) => "monotone: if a value has no sound mapping, no larger value has one",
        Target::Frequency(_) => "none: each step finds a strictly faster mapping or proves there is none",
    }
}

fn diag(d: &crate::verify::Diagnostic) -> Value {
    json!({"kind": d.kind.name(), "message": d.message, "subjects": d.subjects})
}

pub fn limit_json(app: &Application, cluster: &Cluster, t: &Target, o: &LimitOutcome) -> Value {
    let target = match t {
        Target::Param(n) => json!({"param": n}),
        Target::Frequency(g) => json!({"frequency": app.group(*g).name}),
    };
    let largest = o.largest_feasible.as_ref().map(|p| {
        json!({
            "value": jnum(value(app, t, p)),
            "mapping": p.outcome.mapping.as_ref().map(|m| mapping_json(app, cluster, m)),
            "check": match (&p.outcome.mapping, &p.outcome.report) {
                (Some(m), Some(r)) => check_json(app, cluster, m, r),
                _ => Value::Null,
            },
        })
    });
    let smallest = o.smallest_infeasible.as_ref().map(|p| {
        json!({
            "value": p.value,
            "why": o.why.iter().map(diag).collect::<Vec<_>>(),
            "reasons": o.why_reasons,
        })
    });
    json!({
        "target": target,
        "status": o.status.name(),
        "assumption": assumption(t),
        "largest_feasible": largest,
        "smallest_infeasible": smallest,
        "why": o.why_reasons,
        "violation": o.violation.map(|(f, i)| json!({"feasible": f, "infeasible": i})),
        "probes": o.probes.iter().map(|(v, s, time)| json!({"value": v, "status": s.name(), "time_s": (time * 1e6).round() / 1e6})).collect::<Vec<_>>(),
    })
}

pub fn limit_text(app: &Application, cluster: &Cluster, t: &Target, o: &LimitOutcome, st: &Style) -> String {
    let mut out = String::new();
    let what = match t {
        Target::Param(n) => format!("largest {n}"),
        Target::Frequency(g) => format!("highest frequency of {}", app.group(*g).name),
    };
    let status = match o.status {
        crate::solve::limit::LimitStatus::Exact | crate::solve::limit::LimitStatus::AboveRange => {
            st.good(o.status.name())
        }
        crate::solve::limit::LimitStatus::NoneFeasible => st.bad(o.status.name()),
        _ => st.warn(o.status.name()),
    };
    let _ = writeln!(out, "{what}: {status}");
    let _ = writeln!(out, "assumption: {}", assumption(t));
    let unit = if matches!(t, Target::Frequency(_)) { " Hz" } else { "" };
    if let Some(p) = &o.largest_feasible {
        let _ = writeln!(out, "\nlargest feasible: {}{unit}", num(value(app, t, p)));
        if let Some(r) = p.outcome.report.as_ref().filter(|r| !r.headroom.is_none()) {
            let _ = writeln!(
                out,
                "  with headroom: links {}, CPUs {} of capacity",
                super::style::pct(r.headroom.link.min(1.0)),
                super::style::pct(r.headroom.cpu.min(1.0))
            );
        }
        if let Some(m) = &p.outcome.mapping {
            out += &mapping_lines(app, cluster, m);
        }
    }
    if let Some(p) = &o.smallest_infeasible {
        if matches!(t, Target::Param(_)) {
            let _ = writeln!(out, "\nsmallest infeasible: {} (proven: no sound mapping)", num(p.value));
        } else {
            let _ = writeln!(out, "\nno sound mapping reaches more (proven)");
        }
        for r in &o.why_reasons {
            let _ = writeln!(out, "  why: {r}");
        }
        if !o.why.is_empty() {
            let _ = writeln!(out, "  the largest feasible mapping at this value fails because:");
            for d in &o.why {
                let _ = writeln!(out, "    [{}] {}", d.kind.name(), d.message);
            }
        }
    }
    if let Some((f, i)) = o.violation {
        let _ = writeln!(
            out,
            "\n{}",
            st.bad(&format!(
                "monotonicity violated: {} has a mapping but {} < {} has none; no limit is claimed",
                num(f),
                num(i),
                num(f)
            ))
        );
    }
    let _ = writeln!(out, "\nprobes:");
    for (v, s, time) in &o.probes {
        let _ = writeln!(out, "  {:>14}{unit} {:<10} {time:.3} s", num(*v), s.name());
    }
    out
}
