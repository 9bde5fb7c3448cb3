//! `solve` and `solve --minimize nodes` on the corpora, every size: the generated corpus
//! (models/generated), and the realistic and hard corpora (models/realistic, models/hard: from
//! their corpus.toml, seed 1 of every size and kind). Each answer is checked before it is
//! timed: its status against the instance's (a planted sound mapping exists, or an argument
//! that none does), and its mapping by the verifier. A wrong answer panics; an instance the
//! solver does not answer within its limit (`unknown`) is reported on stderr and not timed.
//! Realistic and hard: feasibility runs have a 10 s limit; minimisations 2 s up to 100 modules,
//! 10 s up to 300 (`MINIMIZE_UP_TO`: above, the limit is not kept today), and report best and
//! bound on stderr. Generated: `--minimize nodes` on 300x64 is not proven within 60 s (best 22,
//! bound 12), so it is timed with a 10 s limit and its answer checked as a verified feasible
//! mapping; on 1000x256 the CSP is over `max_csp_size` and the answer is the greedy mapping with
//! the static bound. See README, "Performance".
//!
//! `cargo bench --bench corpus -- hard` runs the hard corpus only (criterion's filter), but every
//! instance is still solved once for the check; that first run is what the stderr lines report.

use criterion::{criterion_group, criterion_main, Criterion};
use flowmap::model::{Application, Cluster};
use flowmap::solve::{self, Objective, SolveOptions, Status};
use flowmap::{parse, perf, verify};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

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
    bench_corpus_index(c, "realistic");
    bench_corpus_index(c, "hard");
}

/// One `[[instance]]` of a corpus index: (name, app, cluster, kind, expected, modules, seed).
struct Entry {
    name: String,
    app: String,
    cluster: String,
    kind: String,
    feasible: bool,
    modules: i64,
    seed: i64,
}

fn index(family: &str) -> Vec<Entry> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(format!("models/{family}/corpus.toml"))).expect("corpus index");
    let t: toml::Table = toml::from_str(&text).expect("corpus index");
    let s = |e: &toml::Table, k: &str| e[k].as_str().expect("string").to_string();
    t["instance"]
        .as_array()
        .expect("instances")
        .iter()
        .map(|e| {
            let e = e.as_table().expect("table");
            Entry {
                name: s(e, "name"),
                app: s(e, "app"),
                cluster: s(e, "cluster"),
                kind: s(e, "kind"),
                feasible: s(e, "expected") == "feasible",
                modules: e["modules"].as_integer().expect("modules"),
                seed: e["seed"].as_integer().expect("seed"),
            }
        })
        .collect()
}

/// Solves once and checks the answer: Some(description) when it may be timed, None when the
/// solver gave no answer in time. Panics on a wrong answer.
fn checked(app: &Application, cluster: &Cluster, opts: &SolveOptions, what: &str, feasible: bool) -> Option<String> {
    let start = Instant::now();
    let o = solve::solve(app, cluster, None, opts);
    let took = start.elapsed().as_secs_f64();
    match o.status {
        Status::Unknown => {
            eprintln!("{what}: unknown after {took:.2} s: not timed");
            None
        }
        Status::Infeasible => {
            assert!(!feasible, "{what}: WRONG: infeasible, but a planted sound mapping exists");
            Some(format!("infeasible in {took:.2} s"))
        }
        Status::Feasible | Status::Optimal => {
            assert!(feasible, "{what}: WRONG: a mapping where none exists");
            let r = verify::check(app, cluster, o.mapping.as_ref().expect("mapping"), &perf::Options::default());
            assert_eq!(r.verdict, verify::Verdict::Sound, "{what}: WRONG: the mapping is unsound");
            let best = o.objective.map(|(b, l)| format!(", best {b}, bound {l}")).unwrap_or_default();
            Some(format!("{:?} in {took:.2} s{best}", o.status))
        }
    }
}

/// The largest instance minimised: at 1000x256, `--minimize nodes --time-limit 10` was still
/// running after 100 s (realistic) and 320 s (hard) on main at 3fdc7f9, which no bench can wait
/// for. Raise it when the time limit holds there.
const MINIMIZE_UP_TO: i64 = 300;

/// Seed 1 of every size and kind of models/FAMILY/corpus.toml: `solve` (10 s limit) and, for
/// the feasible kind, `solve --minimize nodes` (2 s limit up to 100 modules, 10 s above).
fn bench_corpus_index(c: &mut Criterion, family: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut g = c.benchmark_group(family);
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for e in index(family).into_iter().filter(|e| e.seed == 1) {
        let app = parse::load_application(&root.join(&e.app), &[]).expect("app");
        let cluster = parse::load_cluster(&root.join(&e.cluster)).expect("cluster");
        let solve = SolveOptions { time_limit: Some(Duration::from_secs(10)), ..Default::default() };
        if let Some(how) = checked(&app, &cluster, &solve, &e.name, e.feasible) {
            eprintln!("{}: {how}", e.name);
            g.bench_function(format!("solve {}", e.name), |b| {
                b.iter(|| solve::solve(black_box(&app), black_box(&cluster), None, &solve))
            });
        }
        if e.kind != "feasible" {
            continue;
        }
        if e.modules > MINIMIZE_UP_TO {
            eprintln!("{}: --minimize nodes not run (it overruns its time limit by minutes here: README)", e.name);
            continue;
        }
        let limit = if e.modules <= 100 { 2 } else { 10 };
        let min = SolveOptions {
            minimize: Some(Objective::Nodes),
            time_limit: Some(Duration::from_secs(limit)),
            ..Default::default()
        };
        let what = format!("{} --minimize nodes (limit {limit} s)", e.name);
        if let Some(how) = checked(&app, &cluster, &min, &what, e.feasible) {
            eprintln!("{what}: {how}");
            g.bench_function(format!("minimize nodes {} (limit {limit} s)", e.name), |b| {
                b.iter(|| solve::solve(black_box(&app), black_box(&cluster), None, &min))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_corpus);
criterion_main!(benches);

// The same allocator as the `flowmap` binary, so the numbers are what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
