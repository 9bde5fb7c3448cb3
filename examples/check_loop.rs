//! Profiling aid: runs `verify::check` on FluidParticle's Table VI mapping many times.
use flowmap::{parse, perf, verify};
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cluster = parse::load_cluster(&root.join("clusters/lifo-2007.toml")).unwrap();
    let app = parse::load_application(&root.join("models/fluid-particle.toml"), &[]).unwrap();
    let m = parse::load_mapping(&root.join("models/mappings/fluid-particle-table6.toml"), &app, &cluster).unwrap();
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let t = std::time::Instant::now();
    let mut sound = 0;
    for _ in 0..n {
        if verify::check(&app, &cluster, &m, &perf::Options::default()).verdict == verify::Verdict::Sound {
            sound += 1;
        }
    }
    println!(
        "{n} checks ({sound} sound) in {:?}: {:.2} us each",
        t.elapsed(),
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
