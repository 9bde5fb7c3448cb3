//! Generated instances: the planted mapping is sound by construction; infeasible ones are
//! proven infeasible; the solver finds verified mappings on the small ones.

use crate::support::*;
use flowmap::gen::{generate, GenKind, GenOptions};
use flowmap::parse;
use flowmap::perf::Options;
use flowmap::report;
use flowmap::solve::{self, SolveOptions, Status};
use flowmap::verify::{self, Verdict};

fn build(
    modules: usize,
    nodes: usize,
    seed: u64,
    kind: GenKind,
) -> (flowmap::model::Application, flowmap::model::Cluster, String) {
    let g = generate(&GenOptions { modules, nodes, seed, kind });
    let app = parse::application_from_str(&report::gen_app_toml(&g), "gen-app", &[]).unwrap();
    let cluster = parse::cluster_from_str(&report::gen_cluster_toml(&g), "gen-cluster").unwrap();
    (app, cluster, report::gen_mapping_toml(&g))
}

#[test]
fn planted_mappings_are_sound() {
    for (m, n) in [(20, 6), (50, 16), (300, 64)] {
        for seed in 1..4 {
            for kind in [GenKind::Feasible, GenKind::Tight] {
                let (app, cluster, mapping) = build(m, n, seed, kind);
                assert_eq!(app.modules().count(), m);
                let mp = parse::mapping_from_str(&mapping, "gen-map", &app, &cluster)
                    .unwrap()
                    .complete(&app, &cluster, "gen-map")
                    .unwrap();
                let r = verify::check(&app, &cluster, &mp, &Options::default());
                assert_eq!(r.verdict, Verdict::Sound, "{m}x{n} seed {seed} {kind:?}: {:?}", r.diagnostics);
            }
        }
    }
}

#[test]
fn generation_is_deterministic() {
    let a = generate(&GenOptions { modules: 50, nodes: 16, seed: 7, kind: GenKind::Feasible });
    let b = generate(&GenOptions { modules: 50, nodes: 16, seed: 7, kind: GenKind::Feasible });
    assert_eq!(report::gen_app_toml(&a), report::gen_app_toml(&b));
    assert_eq!(report::gen_cluster_toml(&a), report::gen_cluster_toml(&b));
    assert_eq!(report::gen_mapping_toml(&a), report::gen_mapping_toml(&b));
}

#[test]
fn small_generated_instances_are_solved_and_verified() {
    for seed in 1..4 {
        let (app, cluster, _) = build(50, 16, seed, GenKind::Feasible);
        let o = solve::solve(&app, &cluster, None, &SolveOptions::default());
        assert_eq!(o.status, Status::Feasible, "seed {seed}");
        let r = verify::check(&app, &cluster, o.mapping.as_ref().unwrap(), &Options::default());
        assert_eq!(r.verdict, Verdict::Sound);
        let (app, cluster, _) = build(50, 16, seed, GenKind::Infeasible);
        let o = solve::solve(&app, &cluster, None, &SolveOptions::default());
        assert_eq!(o.status, Status::Infeasible, "seed {seed}");
        // By construction the "hog" group alone has one self-paced instance more than the
        // cluster has CPUs: counting refutes it before any search, and says so.
        let cpus: u32 = cluster.nodes.iter().map(|n| n.cpus).sum();
        assert!(
            o.reasons.iter().any(|r| r.contains("idle CPU") && r.contains(&format!("the cluster has {cpus} CPUs"))),
            "{:?}",
            o.reasons
        );
    }
}

#[test]
fn committed_corpus_matches_the_generator() {
    // models/generated holds `flowmap gen` output; regenerate it rather than edit it by hand.
    let g = generate(&GenOptions { modules: 50, nodes: 16, seed: 1, kind: GenKind::Feasible });
    let committed = std::fs::read_to_string(root().join(format!("models/generated/{}.toml", g.name))).unwrap();
    assert_eq!(committed, report::gen_app_toml(&g));
}
