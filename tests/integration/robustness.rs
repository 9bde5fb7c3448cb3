//! No input makes flowmap panic: random edits of valid files are read and checked, and either
//! give input errors or a report whose numbers obey the model's invariants.

use crate::support::*;
use flowmap::parse;
use flowmap::perf::Options;
use flowmap::verify;
use proptest::prelude::*;

fn try_all(app: &str, cluster: &str, mapping: &str) {
    let Ok(app) = parse::application_from_str(app, "app.toml", &[]) else {
        return;
    };
    let Ok(cluster) = parse::cluster_from_str(cluster, "cluster.toml") else {
        return;
    };
    let Ok(pm) = parse::mapping_from_str(mapping, "mapping.toml", &app, &cluster) else {
        return;
    };
    let Ok(m) = pm.complete(&app, &cluster, "mapping.toml") else {
        return;
    };
    let r = verify::check(&app, &cluster, &m, &Options::default());
    if let Some(p) = r.prediction {
        for x in &p.modules {
            assert!(x.ldc >= 0.0 && x.ldc <= x.ld + 1e-12);
            assert!(x.tcexec >= x.texec * (1.0 - 1e-12));
            assert!(x.tit >= x.tcexec * (1.0 - 1e-12) || x.tit.is_infinite());
        }
    }
}

fn sources() -> (String, String, String) {
    let b = root().join("tests/bad-inputs/base");
    let fp = std::fs::read_to_string(root().join("models/fluid-particle.toml")).unwrap();
    let _ = b;
    (fp, lifo(), std::fs::read_to_string(root().join("models/mappings/fluid-particle-table6.toml")).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn random_edits_never_panic(which in 0usize..3, pos in 0usize..10_000, len in 0usize..12, insert in "[ -~\n]{0,12}") {
        let (mut a, mut c, mut m) = sources();
        let s = match which { 0 => &mut a, 1 => &mut c, _ => &mut m };
        let mut bytes: Vec<char> = s.chars().collect();
        let p = pos % (bytes.len() + 1);
        let end = (p + len).min(bytes.len());
        bytes.splice(p..end, insert.chars());
        *s = bytes.into_iter().collect();
        try_all(&a, &c, &m);
    }

    #[test]
    fn random_numbers_never_panic(texec in -5.0f64..500.0, load in -0.5f64..1.5, vol in -1.0f64..1e4, cpus in 0u32..4, bw in -1.0f64..1e3) {
        let app = format!("[[modules]]\nname = \"a\"\ntexec = \"{texec} ms\"\nload = {load}\n[[modules]]\nname = \"b\"\ntexec = \"10 ms\"\nload = 0.5\n[[connections]]\nfrom = \"a\"\nto = \"b\"\nvolume = \"{vol} MB\"\n[[connections]]\nfrom = \"b\"\nto = \"a\"\nvolume = \"1 kB\"\n");
        let cluster = format!("[[networks]]\nname = \"n\"\nbandwidth = \"{bw} MB/s\"\nlatency = \"0 ms\"\n[[nodes]]\nnames = \"x1..x2\"\ncpus = {cpus}\nprocessor = \"p\"\nnetworks = [\"n\"]\n");
        try_all(&app, &cluster, "[place]\na = \"x1\"\nb = \"x2\"\n");
        try_all(&app, &cluster, "[place]\na = \"x1\"\nb = \"x1\"\n");
    }
}

#[test]
fn negligible_weights_next_to_large_ones_do_not_crash_the_solver() {
    // a -> b carries 60 MB at a's 10 Hz = 600 MB/s, more than the 500 MB/s link: b must share
    // a's node. a -> c carries 1 byte (10 B/s), which rounds to weight 0 in the link's
    // constraint; the CSP must drop it rather than hand pumpkin a zero coefficient (a panic).
    // Cycle members likewise have load weight 0. By hand: a and b on one node, c anywhere.
    let app = parse::application_from_str(
        "[[modules]]\nname = \"a\"\ntexec = \"100 ms\"\nload = 0.9\n\
         [[modules]]\nname = \"b\"\ntexec = \"10 ms\"\nload = 0.9\n\
         [[modules]]\nname = \"c\"\ntexec = \"10 ms\"\nload = 0.9\n\
         [[connections]]\nfrom = \"a\"\nto = \"b\"\nvolume = \"60 MB\"\n\
         [[connections]]\nfrom = \"a\"\nto = \"c\"\nvolume = \"1 B\"\n",
        "app.toml",
        &[],
    )
    .unwrap();
    let cluster = parse::cluster_from_str(
        "[[networks]]\nname = \"N\"\nbandwidth = \"500 MB/s\"\nlatency = \"0 ms\"\n\
         [[nodes]]\nnames = \"n0..n1\"\ncpus = 2\nprocessor = \"p\"\nnetworks = [\"N\"]\n",
        "cluster.toml",
    )
    .unwrap();
    for warm in [false, true] {
        let o = flowmap::solve::solve(
            &app,
            &cluster,
            None,
            &flowmap::solve::SolveOptions { warm_start: warm, ..Default::default() },
        );
        assert_eq!(o.status, flowmap::solve::Status::Feasible, "warm {warm}");
        let m = o.mapping.unwrap();
        let (a, b) = (app.find_object("a").unwrap(), app.find_object("b").unwrap());
        assert_eq!(m.node_of(a), m.node_of(b), "warm {warm}");
        assert_eq!(verify::check(&app, &cluster, &m, &Options::default()).verdict, verify::Verdict::Sound);
    }
}
