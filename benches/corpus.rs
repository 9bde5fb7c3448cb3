//! `solve` and `solve --minimize nodes` on the generated corpus (models/generated), every size.
//! Each answer is checked by the verifier before timing. `--minimize nodes` on 300x64 is not
//! proven within 60 s (best 22, bound 12), so it is timed with a 10 s limit and its answer
//! checked as a verified feasible mapping; on 1000x256 the CSP is over `max_csp_size` and the
//! answer is the greedy mapping with the static bound. See README, "Performance".

use criterion::{criterion_group, criterion_main, Criterion};
use flowmap::solve::{self, Objective, SolveOptions, Status};
use flowmap::{parse, perf, verify};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn load(name: &str) -> (flowmap::model::Application, flowmap::model::Cluster) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    (
        parse::load_application(&root.join(format!("models/generated/{name}.toml")), &[]).unwrap(),
        parse::load_cluster(&root.join(format!("clusters/generated/{name}.toml"))).unwrap(),
    )
}

fn bench_corpus(c: &mut Criterion) {
    let mut g = c.benchmark_group("corpus");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for name in [
        "gen-50x16-feasible-s1",
        "gen-50x16-tight-s1",
        "gen-50x16-infeasible-s1",
        "gen-300x64-feasible-s1",
        "gen-300x64-tight-s1",
        "gen-300x64-infeasible-s1",
        "gen-1000x256-feasible-s1",
        "gen-1000x256-tight-s1",
    ] {
        let (app, cluster) = load(name);
        let opts = SolveOptions::default();
        let o = solve::solve(&app, &cluster, None, &opts);
        if name.contains("infeasible") {
            assert_eq!(o.status, Status::Infeasible);
        } else {
            assert_eq!(o.status, Status::Feasible);
            let r = verify::check(&app, &cluster, o.mapping.as_ref().unwrap(), &perf::Options::default());
            assert_eq!(r.verdict, verify::Verdict::Sound);
        }
        g.bench_function(format!("solve {name}"), |b| {
            b.iter(|| solve::solve(black_box(&app), black_box(&cluster), None, &opts))
        });
    }
    // --minimize nodes on 50 x 16: proven optimal.
    let (app, cluster) = load("gen-50x16-feasible-s1");
    let min = SolveOptions { minimize: Some(Objective::Nodes), ..Default::default() };
    let o = solve::solve(&app, &cluster, None, &min);
    assert_eq!(o.status, Status::Optimal);
    let r = verify::check(&app, &cluster, o.mapping.as_ref().unwrap(), &perf::Options::default());
    assert_eq!(r.verdict, verify::Verdict::Sound);
    g.bench_function("minimize nodes gen-50x16-feasible-s1", |b| {
        b.iter(|| solve::solve(black_box(&app), black_box(&cluster), None, &min))
    });
    g.finish();
    // Larger minimisations: best verified mapping and bound within a limit.
    let mut g = c.benchmark_group("corpus-minimize");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (name, limit) in [("gen-300x64-feasible-s1", 10.0), ("gen-1000x256-feasible-s1", 60.0)] {
        let (app, cluster) = load(name);
        let min = SolveOptions {
            minimize: Some(Objective::Nodes),
            time_limit: Some(Duration::from_secs_f64(limit)),
            ..Default::default()
        };
        let o = solve::solve(&app, &cluster, None, &min);
        assert!(matches!(o.status, Status::Feasible | Status::Optimal), "{name}");
        let r = verify::check(&app, &cluster, o.mapping.as_ref().unwrap(), &perf::Options::default());
        assert_eq!(r.verdict, verify::Verdict::Sound);
        let (best, bound) = o.objective.unwrap();
        assert!(bound <= best);
        eprintln!("{name}: minimize nodes best {best}, bound {bound}");
        g.bench_function(format!("minimize nodes {name} (limit {limit} s)"), |b| {
            b.iter(|| solve::solve(black_box(&app), black_box(&cluster), None, &min))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_corpus);
criterion_main!(benches);

// The same allocator as the `flowmap` binary, so the numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
