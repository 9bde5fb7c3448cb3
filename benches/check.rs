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
    c.bench_function("parse fluid-particle", |b| {
        b.iter(|| parse::load_application(black_box(&root.join("models/fluid-particle.toml")), &[]).unwrap())
    });
}

criterion_group!(benches, bench_check);
criterion_main!(benches);

// The same allocator as the `flowmap` binary, so the numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
