//! `solve` and `solve --minimize nodes` on the generated corpus (models/generated). Each answer
//! is checked by the verifier before timing. Not benchmarked yet: --minimize nodes on 300x64
//! (38 nodes, bound 12 after 60 s) and the 1000x256 instances (the model build alone takes ~25 s
//! and ~5 GB). See README, "Performance".

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
    for name in ["gen-50x16-feasible-s1", "gen-50x16-tight-s1", "gen-50x16-infeasible-s1", "gen-300x64-infeasible-s1"] {
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
}

criterion_group!(benches, bench_corpus);
criterion_main!(benches);
