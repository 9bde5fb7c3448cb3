//! `check` on FluidParticle (Table VI mapping). The answer is verified before timing.

use criterion::{criterion_group, criterion_main, Criterion};
use flowmap::{parse, perf, verify};
use std::hint::black_box;
use std::path::Path;

fn bench_check(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let app = parse::load_application(&root.join("models/fluid-particle.toml"), &[]).expect("app");
    let cluster = parse::load_cluster(&root.join("clusters/lifo-2007.toml")).expect("cluster");
    let mapping =
        parse::load_mapping(&root.join("models/mappings/fluid-particle-table6.toml"), &app, &cluster).expect("mapping");
    let opts = perf::Options::default();
    // Check the answer first: sound, fluid at 70 ms, renderer at 57 ms (Table VI).
    let r = verify::check(&app, &cluster, &mapping, &opts);
    assert_eq!(r.verdict, verify::Verdict::Sound);
    let p = r.prediction.as_ref().unwrap();
    let tit = |n: &str| p.module(app.find_object(n).unwrap()).unwrap().tit;
    assert!((tit("fluid[0]") - 0.070).abs() < 1e-12 && (tit("renderer[0]") - 0.057).abs() < 1e-12);

    c.bench_function("check fluid-particle table6", |b| {
        b.iter(|| verify::check(black_box(&app), black_box(&cluster), black_box(&mapping), &opts))
    });
    // What the walks mostly check: an unsound mapping, whose allocation iterates part by
    // part (realistic 300/64, the greedy construction forced onto the nodes).
    let app = parse::load_application(&root.join("models/realistic/realistic-300x64-tight-s1.toml"), &[]).expect("app");
    let cluster =
        parse::load_cluster(&root.join("clusters/realistic/realistic-300x64-tight-s1.toml")).expect("cluster");
    let an = flowmap::csp::Analysis::new(&app, &cluster, None);
    let cx = flowmap::solve::greedy::Ctx {
        app: &app,
        cluster: &cluster,
        an: &an,
        fix: None,
        popts: &opts,
        filter_locality: true,
        deadline: None,
    };
    let mut forced = flowmap::solve::greedy::construct_forced(cx, flowmap::solve::greedy::STRATEGIES[0]);
    // As a squeeze's later steps: the objects of the less busy half of the used nodes moved
    // onto the busier half, where their domains allow (the greedy mapping itself is sound).
    let mut count = vec![0usize; cluster.nodes.len()];
    for p in &forced.placement {
        count[p.node.ix()] += 1;
    }
    let mut used: Vec<usize> = (0..count.len()).filter(|&n| count[n] > 0).collect();
    used.sort_by_key(|&n| (count[n], n));
    let (emptied, kept) = used.split_at(used.len() / 2);
    for o in app.graph.node_indices() {
        if emptied.contains(&forced.node_of(o).ix()) {
            if let Some(&n) = an.domain[o.index()].iter().find(|n| kept.contains(&n.ix())) {
                forced.placement[o.index()] = flowmap::model::Placement { node: n, cpu: None };
            }
        }
    }
    // Check the answer first: unsound, with a prediction, and the same twice.
    let r = verify::check(&app, &cluster, &forced, &opts);
    assert_ne!(r.verdict, verify::Verdict::Sound);
    assert!(r.prediction.is_some());
    assert_eq!(format!("{:?}", r), format!("{:?}", verify::check(&app, &cluster, &forced, &opts)));
    c.bench_function("check realistic-300x64 forced greedy", |b| {
        b.iter(|| verify::check(black_box(&app), black_box(&cluster), black_box(&forced), &opts))
    });
    c.bench_function("parse fluid-particle", |b| {
        b.iter(|| parse::load_application(black_box(&root.join("models/fluid-particle.toml")), &[]).unwrap())
    });
}

criterion_group!(benches, bench_check);
criterion_main!(benches);

// The same allocator as the `flowmap` binary, so the numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
