//! The limit chart (`limit --format svg`), drawn with plotters' SVG backend: every probe as a
//! point (green feasible, red infeasible, grey unknown) at its value, and, for a parameter
//! limit, how close the largest feasible mapping comes to each kind of limit (links, shared
//! CPUs, module paces) at every probed value: the curve that crosses 100 % (or the headroom)
//! where the limit is names the bottleneck.

use super::limit::Target;
use super::style::num;
use crate::model::{Application, Cluster};
use crate::perf::{self, Prediction};
use crate::solve::limit::LimitOutcome;
use crate::solve::Status;
use crate::verify;
use plotters::prelude::*;

/// How close a prediction is to each kind of limit, as shares (1 = at the limit): the busiest
/// link direction's traffic over its bandwidth, the busiest shared CPU's load over an iteration
/// (a CPU that one module keeps busy cannot fill up), and the slowest module against its
/// inputs' pace (T_cexec / (k x T_it(input)); above 1 messages pile up).
pub fn utilisation(p: &Prediction) -> [f64; 3] {
    let link = p.links.iter().map(|l| l.send.max(l.recv) / l.capacity).fold(0.0, f64::max);
    let cpu = verify::cpu_loads(p).values().filter(|x| x.1.len() > 1).map(|x| x.0).fold(0.0, f64::max);
    let pace = p
        .modules
        .iter()
        .enumerate()
        .flat_map(|(i, m)| p.sync_inputs[i].iter().map(move |x| (m.tcexec, x)))
        .map(|(t, x)| t / (x.ratio * p.modules[x.source].tit))
        .filter(|r| r.is_finite())
        .fold(0.0, f64::max);
    [link, cpu, pace]
}

/// The largest feasible mapping of a parameter limit, checked at every probed value: (value,
/// `utilisation`). `make` builds the application for a value.
pub fn probe_curve(
    make: &dyn Fn(f64) -> Result<Application, String>,
    cluster: &Cluster,
    o: &LimitOutcome,
    opts: &perf::Options,
) -> Vec<(f64, [f64; 3])> {
    let Some(m) = o.largest_feasible.as_ref().and_then(|l| l.outcome.mapping.as_ref()) else { return vec![] };
    o.probes
        .iter()
        .filter_map(|&(v, _, _)| {
            let app = make(v).ok()?;
            let r = verify::check(&app, cluster, m, opts);
            r.prediction.as_ref().map(|p| (v, utilisation(p)))
        })
        .collect()
}

fn status_color(s: Status) -> RGBColor {
    match s {
        Status::Feasible | Status::Optimal => RGBColor(46, 125, 50),
        Status::Infeasible => RGBColor(198, 40, 40),
        Status::Unknown => RGBColor(150, 150, 150),
    }
}

/// The chart as an SVG document. `curve` comes from `probe_curve` (empty for frequency limits).
pub fn limit_svg(
    app: &Application,
    cluster: &Cluster,
    t: &Target,
    o: &LimitOutcome,
    curve: &[(f64, [f64; 3])],
    headroom: perf::Headroom,
) -> String {
    let mut buf = String::new();
    let (what, unit) = match t {
        Target::Param(n) => (n.to_string(), ""),
        Target::Frequency(g) => (format!("required frequency of {}", app.group(*g).name), " Hz"),
    };
    let title = format!("{} on {}: {}, {}", app.name, cluster.name, what, o.status.name());
    let xs: Vec<f64> = o.probes.iter().map(|p| p.0).chain(curve.iter().map(|c| c.0)).collect();
    let (mut x0, mut x1) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| (a.0.min(x), a.1.max(x)));
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    let pad = ((x1 - x0) * 0.05).max(x1.abs() * 0.01).max(1e-9);
    let (x0, x1) = ((x0 - pad).max(if x0 >= 0.0 { 0.0 } else { f64::NEG_INFINITY }), x1 + pad);
    let top = |c: &[f64; 3]| c.iter().copied().fold(0.0, f64::max);
    let ymax = curve.iter().map(|c| top(&c.1) * 100.0).fold(120.0, f64::max).min(400.0) * 1.05;
    {
        let root = SVGBackend::with_string(&mut buf, (960, 540)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let chart = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, 0.0..ymax);
        let Ok(mut chart) = chart else { return String::new() };
        let _ = chart
            .configure_mesh()
            .x_desc(format!("{what}{unit}"))
            .y_desc(if curve.is_empty() { "probe" } else { "use of the limit, % (largest feasible mapping)" })
            .x_label_formatter(&|v| num(*v))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .light_line_style(RGBColor(235, 235, 235))
            .draw();
        // Capacity and headroom lines.
        let lim = [(100.0, "capacity (100 %)", RGBColor(120, 120, 120))];
        for (y, label, c) in lim {
            let _ = chart
                .draw_series(LineSeries::new(vec![(x0, y), (x1, y)], c.stroke_width(1)))
                .map(|s| s.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c)));
        }
        let hmin = headroom.link.min(headroom.cpu).min(1.0);
        if hmin < 1.0 {
            let c = RGBColor(239, 108, 0);
            let y = hmin * 100.0;
            let _ = chart
                .draw_series(LineSeries::new(vec![(x0, y), (x1, y)], c.stroke_width(1)))
                .map(|s| s.label("headroom").legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c)));
        }
        let series = [
            ("busiest link", RGBColor(78, 121, 167)),
            ("busiest shared CPU", RGBColor(176, 122, 161)),
            ("slowest module vs its input's pace", RGBColor(156, 117, 95)),
        ];
        let mut pts = curve.to_vec();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (k, (label, c)) in series.into_iter().enumerate() {
            if pts.iter().all(|p| p.1[k] == 0.0) {
                continue;
            }
            let _ = chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(x, u)| (x, (u[k] * 100.0).min(ymax))),
                    c.stroke_width(2),
                ))
                .map(|s| s.label(label).legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c)));
        }
        // Probes: at their utilisation on the curve, or on a band when there is no curve.
        let y_of = |v: f64, s: Status| -> f64 {
            match curve.iter().find(|c| c.0 == v) {
                Some(c) => (top(&c.1) * 100.0).min(ymax),
                None => match s {
                    Status::Feasible | Status::Optimal => 40.0,
                    Status::Infeasible => 80.0,
                    Status::Unknown => 60.0,
                },
            }
        };
        for (label, pick) in [("feasible", 0), ("infeasible", 1), ("unknown", 2)] {
            let pts: Vec<(f64, f64, Status)> = o
                .probes
                .iter()
                .filter(|p| match pick {
                    0 => matches!(p.1, Status::Feasible | Status::Optimal),
                    1 => p.1 == Status::Infeasible,
                    _ => p.1 == Status::Unknown,
                })
                .map(|p| (p.0, y_of(p.0, p.1), p.1))
                .collect();
            if pts.is_empty() {
                continue;
            }
            let c = status_color(pts[0].2);
            let _ = chart
                .draw_series(pts.iter().map(|&(x, y, _)| Circle::new((x, y), 5, c.filled())))
                .map(|s| s.label(label).legend(move |(x, y)| Circle::new((x + 9, y), 5, c.filled())));
        }
        // The limit.
        if let Some(l) = &o.largest_feasible {
            let v = match t {
                Target::Param(_) => l.value,
                Target::Frequency(_) => o.probes.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
            };
            if v.is_finite() && matches!(t, Target::Param(_)) {
                let c = RGBColor(46, 125, 50);
                let _ = chart.draw_series(LineSeries::new(vec![(v, 0.0), (v, ymax)], c.stroke_width(1))).map(|s| {
                    s.label(format!("largest feasible: {}", num(v)))
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c))
                });
            }
        }
        let _ = chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .draw();
        let _ = root.present();
    }
    buf
}
