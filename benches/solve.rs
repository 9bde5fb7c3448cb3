//! `solve` on FluidParticle: the bundled cluster (feasible) and its single-gigabit what-if
//! (proven infeasible). Each answer is verified before timing.

use criterion::{criterion_group, criterion_main, Criterion};
use flowmap::solve::{self, limit, Objective, SolveOptions, Status};
use flowmap::{parse, perf, verify};
use std::hint::black_box;
use std::path::Path;

fn bench_solve(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let app = parse::load_application(&root.join("models/fluid-particle.toml"), &[]).expect("app");
    let base = parse::load_cluster(&root.join("clusters/lifo-2007.toml")).expect("cluster");
    let single = parse::load_cluster(&root.join("clusters/lifo-2007-single-gige.toml")).expect("cluster");
    let opts = SolveOptions::default();

    let o = solve::solve(&app, &base, None, &opts);
    assert_eq!(o.status, Status::Feasible);
    let r = verify::check(&app, &base, o.mapping.as_ref().unwrap(), &perf::Options::default());
    assert_eq!(r.verdict, verify::Verdict::Sound);
    assert_eq!(solve::solve(&app, &single, None, &opts).status, Status::Infeasible);

    let mut g = c.benchmark_group("solve");
    g.sample_size(20);
    g.bench_function("fluid-particle feasible", |b| {
        b.iter(|| solve::solve(black_box(&app), black_box(&base), None, &opts))
    });
    g.bench_function("fluid-particle single-gige infeasible", |b| {
        b.iter(|| solve::solve(black_box(&app), black_box(&single), None, &opts))
    });
    // --minimize nodes: proven optimal at 15 (see tests/integration/optimise.rs for why).
    let min = SolveOptions { minimize: Some(Objective::Nodes), ..Default::default() };
    let o = solve::solve(&app, &base, None, &min);
    assert_eq!((o.status, o.objective), (Status::Optimal, Some((15, 15))));
    g.bench_function("fluid-particle minimize nodes", |b| {
        b.iter(|| solve::solve(black_box(&app), black_box(&base), None, &min))
    });
    g.finish();

    // limit --param particles on all cores: 291,666 (hand calculation in the model file).
    let src = std::fs::read_to_string(root.join("models/fluid-particle.toml")).unwrap();
    let make = |v: f64| {
        parse::application_from_str(&src, "fp", &[parse::Override { name: "particles".into(), value: v }])
            .map_err(|e| e.to_string())
    };
    let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let l = limit::param_limit(&make, &base, 160000.0, None, true, jobs, &opts).unwrap();
    assert_eq!(l.largest_feasible.unwrap().value, 291666.0);
    let mut g = c.benchmark_group("limit");
    g.sample_size(10);
    g.bench_function("fluid-particle particles", |b| {
        b.iter(|| limit::param_limit(&make, &base, 160000.0, None, true, jobs, &opts).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench_solve);
criterion_main!(benches);

// The same allocator as the `flowmap` binary, so the numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
