//! Limits (CP paper, Sections 1 and 4.3): the largest value of a parameter (e.g. particles) for
//! which a sound mapping exists, and the highest frequency a module reaches in a sound mapping.
//!
//! Parameter limits assume **monotonicity**: if value v has no sound mapping, no larger value has
//! one (more data never makes a mapping easier). Probes run in parallel (rayon), `jobs` at a time,
//! over a bracket [largest feasible, smallest infeasible] that shrinks each round; every probed
//! value is kept, and a feasible value above an infeasible one is reported as a violation of the
//! assumption instead of an answer.

use super::{solve, Outcome, SolveOptions, Status};
use crate::model::{Application, Cluster, GroupId, Requirement};
use crate::verify::{self, Diagnostic};
use rayon::prelude::*;

/// One probed value.
#[derive(Clone, Debug)]
pub struct Probe {
    pub value: f64,
    pub outcome: Outcome,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitStatus {
    /// Largest feasible and smallest infeasible value are adjacent (or within tolerance).
    Exact,
    /// No feasible value in the range.
    NoneFeasible,
    /// Every probed value was feasible: the limit lies above the range.
    AboveRange,
    /// Probes ran out of time: the bracket is what is known.
    Unknown,
    /// A feasible value lies above an infeasible one: the monotonicity assumption is false here.
    NonMonotone,
}

impl LimitStatus {
    pub fn name(self) -> &'static str {
        match self {
            LimitStatus::Exact => "exact",
            LimitStatus::NoneFeasible => "none-feasible",
            LimitStatus::AboveRange => "above-range",
            LimitStatus::Unknown => "unknown",
            LimitStatus::NonMonotone => "non-monotone",
        }
    }
}

#[derive(Clone, Debug)]
pub struct LimitOutcome {
    pub status: LimitStatus,
    pub largest_feasible: Option<Probe>,
    pub smallest_infeasible: Option<Probe>,
    /// Why the smallest infeasible value fails: the largest feasible value's mapping, checked
    /// again at that value (the resource it saturates), or the reason found before search.
    pub why: Vec<Diagnostic>,
    pub why_reasons: Vec<String>,
    /// Every probe, in the order of values.
    pub probes: Vec<(f64, Status, f64)>,
    /// (feasible value, infeasible value) showing a monotonicity violation.
    pub violation: Option<(f64, f64)>,
}

fn feasible(s: Status) -> bool {
    matches!(s, Status::Feasible | Status::Optimal)
}

/// The largest value of a parameter with a sound mapping. `make` builds the application for a
/// value; `integer` restricts the search to whole numbers; `range` = (lo, hi) with hi optional
/// (then the search doubles from lo until it finds an infeasible value).
pub fn param_limit(
    make: &(dyn Fn(f64) -> Result<Application, String> + Sync),
    cluster: &Cluster,
    lo: f64,
    hi: Option<f64>,
    integer: bool,
    jobs: usize,
    opts: &SolveOptions,
) -> Result<LimitOutcome, String> {
    let jobs = jobs.max(1);
    let mut all: Vec<Probe> = Vec::new();
    let start = std::time::Instant::now();
    let inner = SolveOptions { progress: None, ..opts.clone() };
    let done = std::sync::atomic::AtomicUsize::new(0);
    let probe_all = |values: Vec<f64>| -> Result<Vec<Probe>, String> {
        values
            .into_par_iter()
            .map(|v| {
                let app = make(v)?;
                let p = Probe { value: v, outcome: solve(&app, cluster, None, &inner) };
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                if let Some(f) = &opts.progress {
                    f(&super::Progress {
                        elapsed_s: start.elapsed().as_secs_f64(),
                        best: None,
                        bound: None,
                        rejected: 0,
                        probes: n,
                    });
                }
                Ok(p)
            })
            .collect()
    };
    let snap = |v: f64| if integer { v.round() } else { v };
    let mut first = vec![snap(lo)];
    if let Some(h) = hi {
        first.push(snap(h));
    }
    all.extend(probe_all(first)?);
    // Grow until an infeasible value shows up.
    if hi.is_none() {
        let mut next = snap(lo).max(1.0);
        for _ in 0..40 {
            if all.iter().any(|p| p.outcome.status == Status::Infeasible)
                || all.iter().all(|p| p.outcome.status == Status::Unknown)
            {
                break;
            }
            let batch: Vec<f64> = (1..=jobs).map(|k| snap(next * 2f64.powi(k as i32))).collect();
            next = *batch.last().expect("jobs >= 1");
            all.extend(probe_all(batch)?);
        }
    }
    loop {
        all.sort_by(|a, b| a.value.total_cmp(&b.value));
        all.dedup_by(|a, b| a.value == b.value);
        let best = all.iter().filter(|p| feasible(p.outcome.status)).map(|p| p.value).fold(f64::NEG_INFINITY, f64::max);
        let worst = all
            .iter()
            .filter(|p| p.outcome.status == Status::Infeasible)
            .map(|p| p.value)
            .fold(f64::INFINITY, f64::min);
        if best > worst {
            return Ok(finish(all, LimitStatus::NonMonotone, Some((best, worst)), cluster, make, &opts.perf));
        }
        if !worst.is_finite() {
            let st = if best.is_finite() { LimitStatus::AboveRange } else { LimitStatus::Unknown };
            return Ok(finish(all, st, None, cluster, make, &opts.perf));
        }
        if !best.is_finite() {
            let st = if worst <= snap(lo) { LimitStatus::NoneFeasible } else { LimitStatus::Unknown };
            if st == LimitStatus::NoneFeasible {
                return Ok(finish(all, st, None, cluster, make, &opts.perf));
            }
        }
        let low = if best.is_finite() { best } else { snap(lo) };
        let gap_done = if integer { worst - low <= 1.0 } else { worst - low <= 1e-3 * worst.abs().max(1e-12) };
        if gap_done {
            return Ok(finish(all, LimitStatus::Exact, None, cluster, make, &opts.perf));
        }
        // Unknown probes inside the bracket stop the narrowing there.
        let inside: Vec<f64> = (1..=jobs)
            .map(|k| snap(low + (worst - low) * k as f64 / (jobs + 1) as f64))
            .filter(|v| *v > low && *v < worst)
            .collect();
        let fresh: Vec<f64> = inside.into_iter().filter(|v| !all.iter().any(|p| p.value == *v)).collect();
        if fresh.is_empty() {
            return Ok(finish(all, LimitStatus::Unknown, None, cluster, make, &opts.perf));
        }
        let got = probe_all(fresh)?;
        let stuck = got.iter().all(|p| p.outcome.status == Status::Unknown);
        all.extend(got);
        if stuck {
            all.sort_by(|a, b| a.value.total_cmp(&b.value));
            return Ok(finish(all, LimitStatus::Unknown, None, cluster, make, &opts.perf));
        }
    }
}

fn finish(
    all: Vec<Probe>,
    status: LimitStatus,
    violation: Option<(f64, f64)>,
    cluster: &Cluster,
    make: &(dyn Fn(f64) -> Result<Application, String> + Sync),
    perf: &crate::perf::Options,
) -> LimitOutcome {
    let largest = all.iter().filter(|p| feasible(p.outcome.status)).max_by(|a, b| a.value.total_cmp(&b.value)).cloned();
    let smallest = all
        .iter()
        .filter(|p| p.outcome.status == Status::Infeasible && largest.as_ref().is_none_or(|l| p.value > l.value))
        .min_by(|a, b| a.value.total_cmp(&b.value))
        .cloned();
    let (mut why, mut why_reasons) = (Vec::new(), Vec::new());
    if let Some(s) = &smallest {
        why_reasons = s.outcome.reasons.clone();
        if let (Some(l), Ok(app)) = (&largest, make(s.value)) {
            if let Some(m) = &l.outcome.mapping {
                let r = verify::check(&app, cluster, m, perf);
                why = r.diagnostics.into_iter().filter(|d| d.kind.is_error()).collect();
            }
        }
    }
    let probes = all.iter().map(|p| (p.value, p.outcome.status, p.outcome.stats.time_s)).collect();
    LimitOutcome {
        status,
        largest_feasible: largest,
        smallest_infeasible: smallest,
        why,
        why_reasons,
        probes,
        violation,
    }
}

/// The highest frequency every instance of `group` reaches in a sound mapping: solve, then ask
/// for more than the frequency found, until that is proven impossible. Exact: each step is a
/// proof or a strictly faster mapping.
pub fn frequency_limit(
    app: &Application,
    cluster: &Cluster,
    group: GroupId,
    opts: &SolveOptions,
    max_steps: usize,
) -> LimitOutcome {
    let mut all: Vec<Probe> = Vec::new();
    let mut required = 0.0f64;
    let mut status = LimitStatus::Unknown;
    for _ in 0..max_steps {
        let mut a = app.clone();
        if required > 0.0 {
            a.requirements.push(Requirement::MinFrequency { name: "limit probe".into(), group, hz: required });
        }
        let o = solve(&a, cluster, None, opts);
        let st = o.status;
        let reached = o.report.as_ref().and_then(|r| r.prediction.as_ref()).map(|p| {
            app.group(group)
                .objects
                .iter()
                .map(|&ob| p.module(ob).map(|m| m.frequency()).unwrap_or(0.0))
                .fold(f64::INFINITY, f64::min)
        });
        all.push(Probe { value: required, outcome: o });
        match (st, reached) {
            (Status::Feasible | Status::Optimal, Some(f)) => required = f * (1.0 + 1e-6),
            (Status::Infeasible, _) => {
                status = if all.len() == 1 { LimitStatus::NoneFeasible } else { LimitStatus::Exact };
                break;
            }
            _ => break,
        }
    }
    let largest = all.iter().rfind(|p| feasible(p.outcome.status)).cloned();
    let smallest = all.iter().find(|p| p.outcome.status == Status::Infeasible).cloned();
    let probes = all.iter().map(|p| (p.value, p.outcome.status, p.outcome.stats.time_s)).collect();
    // Why no faster: what paces the slowest instance in the fastest mapping.
    let mut why_reasons = Vec::new();
    if let Some(pr) = largest.as_ref().and_then(|l| l.outcome.report.as_ref()).and_then(|r| r.prediction.as_ref()) {
        let slowest = app.group(group).objects.iter().copied().min_by(|&a, &b| {
            let f = |o| pr.module(o).map(|m| m.frequency()).unwrap_or(0.0);
            f(a).total_cmp(&f(b))
        });
        if let Some(o) = slowest {
            why_reasons.push(verify::pace_reason(app, cluster, pr, o));
        }
    }
    LimitOutcome {
        status,
        largest_feasible: largest,
        smallest_infeasible: smallest,
        why: vec![],
        why_reasons,
        probes,
        violation: None,
    }
}
