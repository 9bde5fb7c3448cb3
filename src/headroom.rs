//! Headroom for searches (`--headroom`, `--link-headroom`, `--cpu-headroom`): operators' margins
//! below capacity. The verifier applies them itself (`perf::Headroom`, `verify::check`); this
//! module makes the solver and the limits search for mappings that keep them, without changing
//! the search:
//!
//! - links: the solver works on a copy of the cluster whose bandwidths are scaled by the link
//!   headroom, so its traffic constraints, nogoods and verifier all see H x BW as the capacity;
//! - CPUs: the CSP's `loads` pass holds each node to H x CPUs (`BuildOptions::cpu_headroom`),
//!   and the verifier checks every CPU; a module whose own load exceeds H on every node it may
//!   use refutes the instance before search.
//!
//! The scaled copy also lengthens transfer times (Vol / (H x BW)), which enter cycle paces and
//! path latencies, so every mapping returned is checked again on the real cluster with the
//! headroom; the rare one that fails there is returned as `unknown`, with the reason.

use crate::csp::Analysis;
use crate::model::{Application, Cluster, GroupId};
use crate::parse::PartialMapping;
use crate::perf::Headroom;
use crate::solve::limit::{self, LimitOutcome};
use crate::solve::{self, Outcome, SolveOptions, Status};
use crate::verify::{self, Verdict};

/// The cluster and options the solver works with: bandwidths x link headroom, CPU headroom in
/// the CSP and (with the link headroom now in the bandwidths) the verifier's CPU check only.
pub fn solver_view(cluster: &Cluster, opts: &SolveOptions) -> (Cluster, SolveOptions) {
    let h = opts.perf.headroom;
    let mut c = cluster.clone();
    if h.link < 1.0 {
        for n in &mut c.networks {
            n.bandwidth *= h.link;
        }
    }
    let mut o = opts.clone();
    o.perf.headroom.link = 1.0;
    o.build.cpu_headroom = h.cpu.min(1.0);
    (c, o)
}

/// Modules whose own load over an iteration (a lower bound: LD x T_exec / T_it_sync) exceeds
/// the CPU headroom on every node they may use: no mapping keeps the headroom.
pub fn cpu_refutation(app: &Application, cluster: &Cluster, fix: Option<&PartialMapping>, h: Headroom) -> Vec<String> {
    if h.cpu >= 1.0 {
        return vec![];
    }
    let an = Analysis::new(app, cluster, fix);
    let mut out = Vec::new();
    for (mi, &o) in an.modules.iter().enumerate() {
        let lo = an.domain[o.index()].iter().map(|&n| an.load_lo(app, cluster, mi, n)).fold(f64::INFINITY, f64::min);
        if lo.is_finite() && !verify::le(lo, h.cpu) {
            out.push(format!(
                "{} keeps a CPU busy at least {:.1} % of the time on every node it may use, above the {:.0} % CPU headroom",
                app.object(o).name,
                lo * 100.0,
                h.cpu * 100.0
            ));
        }
    }
    out
}

/// Checks an outcome's mapping again on the real cluster with the headroom (see the module
/// comment); a found mapping that fails there becomes `unknown`.
pub fn recheck(app: &Application, cluster: &Cluster, o: &mut Outcome, opts: &SolveOptions) {
    let Some(m) = &o.mapping else { return };
    let r = verify::check(app, cluster, m, &opts.perf);
    if matches!(o.status, Status::Feasible | Status::Optimal) && r.verdict == Verdict::Unsound {
        o.status = Status::Unknown;
        o.reasons.push(
            "the mapping found with bandwidths scaled to the link headroom fails on the real cluster (its shorter transfer times change the paces); see the diagnostics".into(),
        );
    }
    o.report = Some(r);
}

/// `solve::solve` with the headroom in `opts.perf.headroom`.
pub fn solve(app: &Application, cluster: &Cluster, fix: Option<&PartialMapping>, opts: &SolveOptions) -> Outcome {
    if opts.perf.headroom.is_none() {
        return solve::solve(app, cluster, fix, opts);
    }
    let reasons = cpu_refutation(app, cluster, fix, opts.perf.headroom);
    if !reasons.is_empty() {
        return Outcome {
            status: Status::Infeasible,
            mapping: None,
            report: None,
            reasons,
            objective: None,
            stats: Default::default(),
        };
    }
    let (scaled, inner) = solver_view(cluster, opts);
    let mut o = solve::solve(app, &scaled, fix, &inner);
    recheck(app, cluster, &mut o, opts);
    o
}

/// `limit::param_limit` with the headroom in `opts.perf.headroom`.
pub fn param_limit(
    make: &(dyn Fn(f64) -> Result<Application, String> + Sync),
    cluster: &Cluster,
    lo: f64,
    hi: Option<f64>,
    integer: bool,
    jobs: usize,
    opts: &SolveOptions,
) -> Result<LimitOutcome, String> {
    if opts.perf.headroom.is_none() {
        return limit::param_limit(make, cluster, lo, hi, integer, jobs, opts);
    }
    let (scaled, inner) = solver_view(cluster, opts);
    let mut o = limit::param_limit(make, &scaled, lo, hi, integer, jobs, &inner)?;
    let Some(l) = &mut o.largest_feasible else { return Ok(o) };
    let app = make(l.value)?;
    recheck(&app, cluster, &mut l.outcome, opts);
    // Why the next value fails, on the real cluster with the headroom.
    if let (Some(s), Some(m)) = (&o.smallest_infeasible, &l.outcome.mapping) {
        let app = make(s.value)?;
        let r = verify::check(&app, cluster, m, &opts.perf);
        o.why = r.diagnostics.into_iter().filter(|d| d.kind.is_error()).collect();
    }
    Ok(o)
}

/// `limit::frequency_limit` with the headroom in `opts.perf.headroom`.
pub fn frequency_limit(
    app: &Application,
    cluster: &Cluster,
    group: GroupId,
    opts: &SolveOptions,
    max_steps: usize,
) -> LimitOutcome {
    if opts.perf.headroom.is_none() {
        return limit::frequency_limit(app, cluster, group, opts, max_steps);
    }
    let (scaled, inner) = solver_view(cluster, opts);
    let mut o = limit::frequency_limit(app, &scaled, group, &inner, max_steps);
    if let Some(l) = &mut o.largest_feasible {
        recheck(app, cluster, &mut l.outcome, opts);
    }
    o
}
