//! Hand calculations: each test writes out the arithmetic behind its expected numbers.

use crate::assert_close;
use crate::support::*;
use flowmap::perf::Schedule;
use flowmap::verify::Kind;

#[test]
fn predecessors_compete_on_one_node() {
    // Three unsynchronised modules on a 2-CPU node.
    // eq 6: T_I/O a = 10 x 0.2 = 2, b = 20 x 0.5 = 10, c = 30 x 0.4 = 12 -> order c, b, a.
    // c -> cpu0: LD_c 0.6; b -> cpu1: LD_c 0.5; a -> cpu1 (0.5 < 0.6): LD_c = 0.5 x 0.8 = 0.4,
    // T_cexec(a) = 10 x 0.8 / 0.4 = 20 ms = T_it(a) (eq 3).
    let app = r#"
[[modules]]
name = "a"
texec = "10 ms"
load = 0.8
[[modules]]
name = "b"
texec = "20 ms"
load = 0.5
[[modules]]
name = "c"
texec = "30 ms"
load = "60 %"
"#;
    let r =
        run(app, &simple_cluster(&[("n1", 2)], "100 MB/s", "0 ms"), "[place]\na = \"n1\"\nb = \"n1\"\nc = \"n1\"\n");
    assert_eq!((r.m("c").cpu, r.m("b").cpu, r.m("a").cpu), (0, 1, 1));
    assert_close!(r.ldc("a"), 0.4, 1e-12);
    assert_close!(r.tcexec("a"), 20.0, 1e-9);
    assert_close!(r.tit("a"), 20.0, 1e-9);
    assert_close!(r.tcexec("b"), 20.0, 1e-9);
    assert_close!(r.tcexec("c"), 30.0, 1e-9);
    // a paces itself (no input) and runs at 50 Hz instead of 100 Hz: cpu-overload (the mapping
    // does not keep the performance level the synchronisation analysis gives).
    assert_eq!(r.kinds(), vec![Kind::CpuOverload]);
    assert_eq!(r.report.diagnostics[0].subjects[0], "a");
    assert!(
        r.report.diagnostics[0].message.contains("runs at 50.000 Hz instead of 100.000 Hz"),
        "{}",
        r.report.diagnostics[0].message
    );
    // On a 3-CPU node nobody shares: sound.
    let r =
        run(app, &simple_cluster(&[("n1", 3)], "100 MB/s", "0 ms"), "[place]\na = \"n1\"\nb = \"n1\"\nc = \"n1\"\n");
    assert!(r.sound());
}

#[test]
fn slow_consumer_overflows_its_fifo() {
    // src: 10 ms alone on n1 -> T_it 10. dst: T_exec 15 ms > 10 -> buffer overflow (dst, src).
    let app = r#"
[[modules]]
name = "src"
texec = "10 ms"
load = 1.0
[[modules]]
name = "dst"
texec = "15 ms"
load = 1.0
[[connections]]
from = "src"
to = "dst"
volume = "1 kB"
"#;
    let r =
        run(app, &simple_cluster(&[("n1", 1), ("n2", 1)], "100 MB/s", "0 ms"), "[place]\nsrc = \"n1\"\ndst = \"n2\"\n");
    assert_eq!(r.kinds(), vec![Kind::BufferOverflow]);
    assert_eq!(r.report.diagnostics[0].subjects, vec!["dst", "src"]);
    assert!(r.report.diagnostics[0].message.contains("15 ms") && r.report.diagnostics[0].message.contains("10 ms"));
    // eq 4 still gives T_it(dst) = max(10, 15) = 15.
    assert_close!(r.tit("dst"), 15.0, 1e-9);
}

#[test]
fn outgoing_traffic_above_bandwidth_is_contention() {
    // src: T_it 100 ms -> 10 Hz. Two 6 MB messages per iteration to n2 and n3 over "net":
    // bw_s(n1, net) = 2 x 6 MB x 10 Hz = 120 MB/s > 100 MB/s (eq 9). Each receiver gets 60 MB/s.
    let app = r#"
[[modules]]
name = "src"
texec = "100 ms"
load = 1.0
[[modules]]
name = "d"
instances = 2
texec = "10 ms"
load = 1.0
[[connections]]
name = "feed"
from = "src"
to = "d"
pattern = "all-to-all"
volume = "6 MB"
"#;
    let r = run(
        app,
        &simple_cluster(&[("n1", 1), ("n2", 1), ("n3", 1)], "100 MB/s", "0 ms"),
        "[place]\nsrc = \"n1\"\nd = [\"n2\", \"n3\"]\n",
    );
    assert_eq!(r.kinds(), vec![Kind::NetworkContention]);
    let d = &r.report.diagnostics[0];
    assert_eq!(d.subjects, vec!["n1", "net", "feed"]);
    assert!(d.message.contains("sends 120.000 MB/s"), "{}", d.message);
    assert!(d.message.contains("feed 120.000 MB/s"), "{}", d.message);
    let links = &r.report.prediction.as_ref().unwrap().links;
    let n2 = links.iter().find(|l| r.cluster.node(l.node).name == "n2").unwrap();
    assert_close!(n2.recv, 60e6, 1e-3);
}

#[test]
fn receiving_above_bandwidth_is_contention_too() {
    // Two senders at 10 Hz x 6 MB into one node: bw_r = 120 MB/s > 100 MB/s (eq 10).
    let app = r#"
[[modules]]
name = "s"
instances = 2
texec = "100 ms"
load = 1.0
[[modules]]
name = "sink"
texec = "10 ms"
load = 1.0
[[connections]]
from = "s"
to = "sink"
pattern = "all-to-all"
volume = "6 MB"
"#;
    let r = run(
        app,
        &simple_cluster(&[("n1", 1), ("n2", 1), ("n3", 1)], "100 MB/s", "0 ms"),
        "[place]\ns = [\"n1\", \"n2\"]\nsink = \"n3\"\n",
    );
    assert_eq!(r.kinds(), vec![Kind::NetworkContention]);
    assert!(r.report.diagnostics[0].message.contains("n3 receives 120.000 MB/s"));
}

const FILTERS: &str = r#"
[[modules]]
name = "src"
texec = "50 ms"
load = 1.0
[[modules]]
name = "a"
texec = "10 ms"
load = 1.0
[[modules]]
name = "b"
texec = "20 ms"
load = 1.0
[[modules]]
name = "fast"
texec = "25 ms"
load = 1.0
[[filters]]
name = "bc"
kind = "broadcast"
[[filters]]
name = "g"
kind = "greedy"
[[connections]]
from = "src"
to = "bc"
volume = "1 MB"
[[connections]]
from = "bc"
to = "a"
volume = "1 MB"
[[connections]]
from = "bc"
to = "b"
volume = "1 MB"
[[connections]]
from = "src"
to = "g"
volume = "2 MB"
[[connections]]
from = "g"
to = "fast"
volume = "2 MB"
"#;

#[test]
fn broadcast_and_greedy_filter_frequencies() {
    // Broadcast: F(bc) = F(src) = 1 / 50 ms = 20 Hz; a and b wait for it: T_it = 50 ms.
    // Greedy: F(g) = F(fast) = 1 / 25 ms = 40 Hz; fast does not wait: T_it = 25 ms.
    // Traffic: g on n1 with src, fast on n2: g -> fast carries 2 MB x 40 Hz = 80 MB/s;
    // bc on n1, a and b on n2: 2 x 1 MB x 20 Hz = 40 MB/s. n1 sends 120 MB/s in all.
    let cluster = simple_cluster(&[("n1", 2), ("n2", 4)], "1000 MB/s", "0 ms");
    let r = run(
        FILTERS,
        &cluster,
        "[place]\nsrc = \"n1\"\nbc = \"n1\"\ng = \"n1\"\na = \"n2\"\nb = \"n2\"\nfast = \"n2\"\n",
    );
    assert_close!(r.freq("bc"), 20.0, 1e-9);
    assert_close!(r.freq("g"), 40.0, 1e-9);
    assert_close!(r.tit("a"), 50.0, 1e-9);
    assert_close!(r.tit("b"), 50.0, 1e-9);
    assert_close!(r.tit("fast"), 25.0, 1e-9);
    let l = &r.report.prediction.as_ref().unwrap().links;
    assert_eq!(l.len(), 2);
    assert_close!(l[0].send, 120e6, 1e-3);
    assert_close!(l[1].recv, 120e6, 1e-3);
    assert!(r.sound());
}

#[test]
fn greedy_filter_placed_at_the_receiver_carries_the_source_rate() {
    // Same application, g on n2 with fast: the network carries src -> g at F(src) = 20 Hz:
    // 2 MB x 20 = 40 MB/s, plus the broadcast's 40 MB/s: 80 MB/s.
    let cluster = simple_cluster(&[("n1", 2), ("n2", 4)], "1000 MB/s", "0 ms");
    let r = run(
        FILTERS,
        &cluster,
        "[place]\nsrc = \"n1\"\nbc = \"n1\"\ng = \"n2\"\na = \"n2\"\nb = \"n2\"\nfast = \"n2\"\n",
    );
    let l = &r.report.prediction.as_ref().unwrap().links;
    assert_close!(l[0].send, 80e6, 1e-3);
}

const GREEDY_THEN_BROADCAST: &str = r#"
[[modules]]
name = "m0"
texec = "10 ms"
load = 0.5
[[modules]]
name = "m1"
texec = "40 ms"
load = 0.5
[[modules]]
name = "m2"
texec = "50 ms"
load = 0.5
[[filters]]
name = "g"
kind = "greedy"
[[filters]]
name = "b"
kind = "broadcast"
[[connections]]
from = "m0"
to = "g"
volume = "1 MB"
[[connections]]
from = "g"
to = "b"
volume = "1 MB"
[[connections]]
from = "b"
to = "m1"
volume = "1 MB"
[[connections]]
from = "b"
to = "m2"
volume = "1 MB"
"#;

#[test]
fn greedy_filter_feeding_a_broadcast_runs_at_the_fastest_destination() {
    // m0 -> greedy g -> broadcast b -> {m1, m2}. Nobody waits for m0 (the greedy filter ends
    // the synchronous path): T_it = T_exec: m0 10 ms, m1 40 ms (25 Hz), m2 50 ms (20 Hz).
    // The broadcast has no source rate of its own (its only input is the greedy filter): it is
    // pulled by its destinations, the fastest at 25 Hz; the greedy filter sends when asked:
    // F(g) = F(b) = 25 Hz (F(greedy) = F(dest), Section IV.B.3).
    // g on n0 with m0, b on n1 with m1, m2 on n2: g -> b and b -> m2 cross the network,
    // 1 MB x 25 Hz = 25 MB/s each: n0 sends 25, n1 receives 25 and sends 25, n2 receives 25.
    let cluster = simple_cluster(&[("n0", 1), ("n1", 1), ("n2", 1)], "1000 MB/s", "0 ms");
    let r = run(
        GREEDY_THEN_BROADCAST,
        &cluster,
        "[place]\nm0 = \"n0\"\ng = \"n0\"\nb = \"n1\"\nm1 = \"n1\"\nm2 = \"n2\"\n",
    );
    assert_close!(r.freq("g"), 25.0, 1e-9);
    assert_close!(r.freq("b"), 25.0, 1e-9);
    let links = &r.report.prediction.as_ref().unwrap().links;
    let at = |n: &str| links.iter().find(|l| r.cluster.node(l.node).name == n).unwrap();
    assert_close!(at("n0").send, 25e6, 1e-3);
    assert_close!(at("n0").recv, 0.0, 1e-3);
    assert_close!(at("n1").recv, 25e6, 1e-3);
    assert_close!(at("n1").send, 25e6, 1e-3);
    assert_close!(at("n2").recv, 25e6, 1e-3);
    // With 20 MB/s links the same traffic is contention (it used to be predicted as 0 MB/s).
    let slow = simple_cluster(&[("n0", 1), ("n1", 1), ("n2", 1)], "20 MB/s", "0 ms");
    let r =
        run(GREEDY_THEN_BROADCAST, &slow, "[place]\nm0 = \"n0\"\ng = \"n0\"\nb = \"n1\"\nm1 = \"n1\"\nm2 = \"n2\"\n");
    assert_eq!(r.kinds(), vec![Kind::NetworkContention; 4]);
}

#[test]
fn longer_filter_chains_after_a_greedy_filter() {
    // m0 -> greedy g1 -> greedy g2 -> gather k=2 -> broadcast b -> {m1 (40 ms), m2 (50 ms)}.
    // b and the gather are fed only through greedy filters: b is pulled at its fastest
    // destination's 25 Hz; the gather must output as often: F = 25 Hz, and it consumes 2 input
    // messages per output, so g2 sends 2 x 25 = 50 Hz, and g1 (pulled by g2) 50 Hz too.
    // Traffic: g1 on n0, g2 on n1: g1 -> g2 carries 50 Hz x 1 MB = 50 MB/s; the gather on n1,
    // b on n2 with m1 and m2: gather -> b carries 25 Hz x 2 MB = 50 MB/s. n1 receives 50, sends 50.
    let app = GREEDY_THEN_BROADCAST
        .replace(
            "[[connections]]\nfrom = \"g\"\nto = \"b\"\nvolume = \"1 MB\"\n",
            "[[filters]]\nname = \"g2\"\nkind = \"greedy\"\n[[filters]]\nname = \"k\"\nkind = \"gather\"\nratio = 2\n[[connections]]\nfrom = \"g\"\nto = \"g2\"\nvolume = \"1 MB\"\n[[connections]]\nfrom = \"g2\"\nto = \"k\"\nvolume = \"1 MB\"\n[[connections]]\nfrom = \"k\"\nto = \"b\"\nvolume = \"2 MB\"\n",
        );
    let cluster = simple_cluster(&[("n0", 1), ("n1", 1), ("n2", 2)], "1000 MB/s", "0 ms");
    let r = run(
        &app,
        &cluster,
        "[place]\nm0 = \"n0\"\ng = \"n0\"\ng2 = \"n1\"\nk = \"n1\"\nb = \"n2\"\nm1 = \"n2\"\nm2 = \"n2\"\n",
    );
    assert_close!(r.freq("b"), 25.0, 1e-9);
    assert_close!(r.freq("k"), 25.0, 1e-9);
    assert_close!(r.freq("g2"), 50.0, 1e-9);
    assert_close!(r.freq("g"), 50.0, 1e-9);
    let links = &r.report.prediction.as_ref().unwrap().links;
    let n1 = links.iter().find(|l| r.cluster.node(l.node).name == "n1").unwrap();
    assert_close!(n1.recv, 50e6, 1e-3);
    assert_close!(n1.send, 50e6, 1e-3);
    assert!(r.sound());
}

const GATHER: &str = r#"
[parameters]
encoder_ms = 100
[[modules]]
name = "camera"
texec = "40 ms"
load = 0.5
[[modules]]
name = "encoder"
texec = "encoder_ms ms"
load = 1.0
[[filters]]
name = "gop"
kind = "gather"
ratio = 12
[[connections]]
from = "camera"
to = "gop"
volume = "1 MB"
[[connections]]
from = "gop"
to = "encoder"
volume = "12 MB"
"#;

#[test]
fn gather_twelve_to_one() {
    // One group of pictures per 12 frames: F(gop) = F(camera) / 12 = 25 Hz / 12 = 2.0833 Hz.
    // The encoder waits for 12 camera iterations: T_it = max(12 x 40, 100) = 480 ms.
    // Traffic gop (n1) -> encoder (n2): 12 MB x 2.0833 Hz = 25 MB/s.
    let cluster = simple_cluster(&[("n1", 1), ("n2", 1)], "100 MB/s", "0 ms");
    let r = run(GATHER, &cluster, "[place]\ncamera = \"n1\"\ngop = \"n1\"\nencoder = \"n2\"\n");
    assert_close!(r.freq("gop"), 25.0 / 12.0, 1e-9);
    assert_close!(r.tit("encoder"), 480.0, 1e-9);
    assert_close!(r.report.prediction.as_ref().unwrap().links[0].send, 25e6, 1e-3);
    assert!(r.sound());
    // An encoder slower than 12 frames (500 ms > 480 ms) overflows.
    let app = parse_set(GATHER, "encoder_ms", 500.0);
    let r = run(&app, &cluster, "[place]\ncamera = \"n1\"\ngop = \"n1\"\nencoder = \"n2\"\n");
    assert_eq!(r.kinds(), vec![Kind::BufferOverflow]);
}

fn parse_set(src: &str, name: &str, v: f64) -> String {
    src.replace(&format!("{name} = 100"), &format!("{name} = {v}"))
}

#[test]
fn path_latency_eq11() {
    // a (n1, 30 ms) -> b (n2, 20 ms) -> c (n2, 10 ms), FIFO, 1 MB per message on 100 MB/s with
    // L = 0.5 ms. eq 4: T_it = 30 ms for all three (a is the slowest, no overflow).
    // eq 11: L(P) = 30 + 30 + 30 + (1 MB / 100 MB/s + 0.5 ms = 10.5 ms for a -> b; b -> c is local)
    //      = 100.5 ms.
    let app = r#"
[[modules]]
name = "a"
texec = "30 ms"
load = 1.0
[[modules]]
name = "b"
texec = "20 ms"
load = 1.0
[[modules]]
name = "c"
texec = "10 ms"
load = 1.0
[[connections]]
from = "a"
to = "b"
volume = "1 MB"
[[connections]]
from = "b"
to = "c"
volume = "1 MB"
[[requirements]]
name = "interactive"
path = ["a", "b", "c"]
max_latency = "100 ms"
"#;
    let r = run(
        app,
        &simple_cluster(&[("n1", 1), ("n2", 2)], "100 MB/s", "0.5 ms"),
        "[place]\na = \"n1\"\nb = \"n2\"\nc = \"n2\"\n",
    );
    assert_close!(r.report.path_latencies[0].1 * 1e3, 100.5, 1e-9);
    assert_eq!(r.kinds(), vec![Kind::Requirement]);
    let relaxed = app.replace("max_latency = \"100 ms\"", "max_latency = \"101 ms\"");
    let r = run(
        &relaxed,
        &simple_cluster(&[("n1", 1), ("n2", 2)], "100 MB/s", "0.5 ms"),
        "[place]\na = \"n1\"\nb = \"n2\"\nc = \"n2\"\n",
    );
    assert!(r.sound());
}

#[test]
fn minimum_frequency_requirement() {
    // 57 ms -> 17.54 Hz < 18 Hz required.
    let app = "[[modules]]\nname = \"r\"\ntexec = \"57 ms\"\nload = 0.97\n[[requirements]]\nmodule = \"r\"\nmin_frequency = \"18 Hz\"\n";
    let r = run(app, &simple_cluster(&[("n1", 1)], "100 MB/s", "0 ms"), "[place]\nr = \"n1\"\n");
    assert_eq!(r.kinds(), vec![Kind::Requirement]);
    let ok = app.replace("18 Hz", "17.5 Hz");
    assert!(run(&ok, &simple_cluster(&[("n1", 1)], "100 MB/s", "0 ms"), "[place]\nr = \"n1\"\n").sound());
}

const MIXED: &str = r#"
[[modules]]
name = "p"
texec = "40 ms"
load = 0.5
[[modules]]
name = "c1"
texec = "10 ms"
load = 0.9
[[modules]]
name = "c2"
texec = "12 ms"
load = 1.0
[[connections]]
from = "c1"
to = "c2"
volume = "0 B"
[[connections]]
from = "c2"
to = "c1"
volume = "0 B"
"#;

#[test]
fn mixed_cycle_that_oscillates() {
    // p (predecessor) and c1 share the single CPU of n1; c1 and c2 form a synchronous cycle
    // (c2 alone on n2; messages are empty and latency 0, so eq 5 adds nothing).
    // T_I/O(p) = 40 x 0.5 = 20 (eq 6). T_I/O(c1) = T_it(cycle) - 10 x 0.9 (eq 7).
    // Round 1 (T_cexec = T_exec): T_it = 10 + 12 = 22, T_I/O(c1) = 13 < 20 -> order (p, c1):
    //   p LD_c 0.5; c1 LD_c = 0.5 x 0.9 = 0.45 -> T_cexec(c1) = 10 x 0.9 / 0.45 = 20.
    // Round 2: T_it = 20 + 12 = 32, T_I/O(c1) = 23 > 20 -> order (c1, p):
    //   c1 LD_c 0.9 -> T_cexec 10; p LD_c = 0.1 x 0.5 = 0.05 -> T_cexec(p) = 400.
    // Round 3: T_it = 22 again -> order (p, c1): the first state again, period 2.
    let r = run(
        MIXED,
        &simple_cluster(&[("n1", 1), ("n2", 1)], "100 MB/s", "0 ms"),
        "[place]\np = \"n1\"\nc1 = \"n1\"\nc2 = \"n2\"\n",
    );
    match &r.report.prediction.as_ref().unwrap().schedule {
        Schedule::Unstable { modules, period } => {
            assert_eq!(*period, 2);
            let names: Vec<&str> = modules.iter().map(|&o| r.app.object(o).name.as_str()).collect();
            assert_eq!(names, vec!["p", "c1"]);
        }
        s => panic!("expected an unstable schedule, got {s:?}"),
    }
    assert!(r.kinds().contains(&Kind::UnstableSchedule));
}

#[test]
fn mixed_cycle_that_converges() {
    // Same, with p lighter: T_I/O(p) = 40 x 0.8 = 32 with LD 0.2. Round 1: T_I/O(c1) = 13 < 32
    // -> (p, c1): p LD_c 0.2, c1 LD_c = 0.8 x 0.9 = 0.72 -> T_cexec(c1) = 12.5. Round 2:
    // T_it = 24.5, T_I/O(c1) = 15.5 < 32 -> same order: converged. T_it(c1) = T_it(c2) = 24.5.
    let app = MIXED.replace("load = 0.5", "load = 0.2");
    let r = run(
        &app,
        &simple_cluster(&[("n1", 1), ("n2", 1)], "100 MB/s", "0 ms"),
        "[place]\np = \"n1\"\nc1 = \"n1\"\nc2 = \"n2\"\n",
    );
    assert!(matches!(r.report.prediction.as_ref().unwrap().schedule, Schedule::Converged { .. }));
    assert_close!(r.tcexec("c1"), 12.5, 1e-9);
    assert_close!(r.tit("c1"), 24.5, 1e-9);
    assert_close!(r.tit("c2"), 24.5, 1e-9);
    // The cycle runs at 1/24.5 ms instead of 1/22 ms: c1's slowdown lowers its frequency.
    assert_eq!(r.kinds(), vec![Kind::CpuOverload]);
    assert_eq!(r.report.diagnostics[0].subjects[0], "c1");
}

#[test]
fn cycle_communication_term_of_eq5() {
    // c1 (n1) <-> c2 (n2), 2 MB each way on 100 MB/s with L = 1 ms:
    // T_it = 10 + 12 + 2 x (2 MB / 100 MB/s + 1 ms) = 22 + 42 = 64 ms.
    let app = MIXED.replace("volume = \"0 B\"", "volume = \"2 MB\"");
    let app = app.replace("[[modules]]\nname = \"p\"\ntexec = \"40 ms\"\nload = 0.5\n", "");
    let r =
        run(&app, &simple_cluster(&[("n1", 1), ("n2", 1)], "100 MB/s", "1 ms"), "[place]\nc1 = \"n1\"\nc2 = \"n2\"\n");
    assert_close!(r.tit("c1"), 64.0, 1e-9);
    assert_close!(r.tit("c2"), 64.0, 1e-9);
}

#[test]
fn starved_module_is_a_cpu_overload() {
    // One CPU: a (LD 1) takes it whole (T_I/O 0 vs b's 5 -> b first? b: 10 x 0.5 = 5, a: 0):
    // order b, a: b LD_c 0.5, a LD_c 0.5 x 1 = 0.5: nobody starves. With two LD-1 modules:
    // T_I/O both 0, order by declaration: a LD_c 1, b LD_c (1 - 1) x 1 = 0 -> starved.
    let app = "[[modules]]\nname = \"a\"\ntexec = \"10 ms\"\nload = 1.0\n[[modules]]\nname = \"b\"\ntexec = \"10 ms\"\nload = 1.0\n";
    let r = run(app, &simple_cluster(&[("n1", 1)], "100 MB/s", "0 ms"), "[place]\na = \"n1\"\nb = \"n1\"\n");
    assert_eq!(r.kinds(), vec![Kind::CpuOverload]);
    assert!(r.tcexec("b").is_infinite());
}

#[test]
fn pinned_cpu_is_honoured() {
    // Two modules pinned to cpu 0 of a dual node: a (T_I/O 5) first gets 0.5; b gets 0.5 x 0.5.
    let app = "[[modules]]\nname = \"a\"\ntexec = \"10 ms\"\nload = 0.5\n[[modules]]\nname = \"b\"\ntexec = \"10 ms\"\nload = 0.5\n";
    let r = run(
        app,
        &simple_cluster(&[("n1", 2)], "100 MB/s", "0 ms"),
        "[place]\na = { node = \"n1\", cpu = 0 }\nb = { node = \"n1\", cpu = 0 }\n",
    );
    assert_close!(r.ldc("b"), 0.25, 1e-12);
    assert_close!(r.tcexec("b"), 20.0, 1e-9);
}

#[test]
fn per_type_costs_and_missing_type() {
    let app = "[[modules]]\nname = \"a\"\ntexec = { x = \"10 ms\", y = \"5 ms\" }\nload = 1.0\n";
    let cluster = "[[networks]]\nname = \"net\"\nbandwidth = \"1 GB/s\"\nlatency = \"0 s\"\n[[nodes]]\nnames = \"n1\"\ncpus = 1\nprocessor = \"y\"\nnetworks = [\"net\"]\n[[nodes]]\nnames = \"n2\"\ncpus = 1\nprocessor = \"z\"\nnetworks = [\"net\"]\n";
    let r = run(app, cluster, "[place]\na = \"n1\"\n");
    assert_close!(r.tit("a"), 5.0, 1e-9);
    let r = run(app, cluster, "[place]\na = \"n2\"\n");
    assert_eq!(r.kinds(), vec![Kind::Placement]);
    assert!(r.report.diagnostics[0].message.contains("processor type z"));
}

#[test]
fn placement_constraints_and_routes() {
    let app = "[[modules]]\nname = \"a\"\ntexec = \"10 ms\"\nload = 1.0\nallowed_nodes = [\"n1\"]\n[[modules]]\nname = \"b\"\ntexec = \"10 ms\"\nload = 1.0\npin = [\"n2\"]\n[[connections]]\nfrom = \"a\"\nto = \"b\"\nvolume = \"1 B\"\n";
    let cluster = "[[networks]]\nname = \"x\"\nbandwidth = \"1 GB/s\"\nlatency = \"0 s\"\n[[networks]]\nname = \"y\"\nbandwidth = \"1 GB/s\"\nlatency = \"0 s\"\n[[nodes]]\nnames = \"n1\"\ncpus = 1\nprocessor = \"p\"\nnetworks = [\"x\"]\n[[nodes]]\nnames = \"n2\"\ncpus = 1\nprocessor = \"p\"\nnetworks = [\"x\"]\n[[nodes]]\nnames = \"n3\"\ncpus = 1\nprocessor = \"p\"\nnetworks = [\"y\"]\n";
    assert!(run(app, cluster, "[place]\na = \"n1\"\nb = \"n2\"\n").sound());
    // a outside its allowed nodes, b off its pin, and n3 shares no network with n2... a on n3:
    let r = run(app, cluster, "[place]\na = \"n3\"\nb = \"n1\"\n");
    assert_eq!(r.kinds(), vec![Kind::Placement, Kind::Placement, Kind::Placement]);
    // a route on a network an endpoint is not on
    let r = run(app, cluster, "[place]\na = \"n1\"\nb = \"n2\"\n[[route]]\nconnection = \"a->b\"\nnetwork = \"y\"\n");
    assert_eq!(r.kinds(), vec![Kind::Placement, Kind::Placement]);
}

#[test]
fn untangle_trades_places_to_relieve_a_busy_link() {
    // Four self-paced modules (10 ms, load 1: each needs a CPU of its own) on two 2-CPU nodes;
    // a -> b carries 2 MB per iteration of a (100 Hz): 200 MB/s, twice the network's 100 MB/s.
    // Start: n1 {a, c}, n2 {b, d}: n1 sends and n2 receives 200 MB/s (two busy links, excess
    // (200 - 100) / 100 each = 2 in all). Moving one module alone puts three on two CPUs (a
    // CPU error); trading b with c (or a with d) puts a and b together: sound, no traffic.
    let mut app: String = ["a", "b", "c", "d"]
        .iter()
        .map(|n| format!("[[modules]]\nname = \"{n}\"\ntexec = \"10 ms\"\nload = 1.0\n"))
        .collect();
    app += "[[connections]]\nfrom = \"a\"\nto = \"b\"\nvolume = \"2 MB\"\n";
    let app = app.as_str();
    let start = run(
        app,
        &simple_cluster(&[("n1", 2), ("n2", 2)], "100 MB/s", "0 ms"),
        "[place]\na = \"n1\"\nc = \"n1\"\nb = \"n2\"\nd = \"n2\"\n",
    );
    assert_eq!(start.kinds(), vec![Kind::NetworkContention, Kind::NetworkContention]);
    // Each single move is a CPU error.
    let moved = run(
        app,
        &simple_cluster(&[("n1", 2), ("n2", 2)], "100 MB/s", "0 ms"),
        "[place]\na = \"n1\"\nc = \"n1\"\nb = \"n1\"\nd = \"n2\"\n",
    );
    assert!(moved.kinds().contains(&Kind::CpuOverload), "{:?}", moved.kinds());
    let popts = flowmap::perf::Options::default();
    let an = flowmap::csp::Analysis::new(&start.app, &start.cluster, None);
    let cx = crate::realistic::ctx_of(&start.app, &start.cluster, &an, &popts);
    let (m, _) = flowmap::solve::walk::untangled(cx, start.mapping.clone(), &mut || false);
    let r = flowmap::verify::check(&start.app, &start.cluster, &m, &popts);
    assert_eq!(r.verdict, flowmap::verify::Verdict::Sound, "{:?}", r.diagnostics);
    let node = |o: &str| m.node_of(start.app.find_object(o).unwrap());
    assert_eq!(node("a"), node("b"));
}

/// `walk::strain`, the walk's tie-break among moves with as many errors, sums each error's
/// shortfall; by hand:
/// - the path of `path_latency_eq11`: 100.5 ms against 100 ms, 100.5 / 100 − 1 = 0.005
///   (a's 1 MB every 30 ms is 33 MB/s on 100 MB/s: no busy link; one module per CPU);
/// - `minimum_frequency_requirement`'s module: T_it 57 ms against 18 Hz, 18 × 0.057 − 1 =
///   0.026;
/// - `untangle_trades_places_to_relieve_a_busy_link`'s start: n1 sends and n2 receives
///   200 MB/s on 100 MB/s, (200 − 100) / 100 = 1 each, 2 in all;
/// - each of them made sound: 0.
#[test]
fn walk_strain_sums_each_errors_shortfall() {
    let popts = flowmap::perf::Options::default();
    let strain = |r: &Run| {
        let an = flowmap::csp::Analysis::new(&r.app, &r.cluster, None);
        let cx = crate::realistic::ctx_of(&r.app, &r.cluster, &an, &popts);
        flowmap::solve::walk::strain(cx, &r.report)
    };
    let path: String = [("a", 30), ("b", 20), ("c", 10)]
        .iter()
        .map(|(n, t)| format!("[[modules]]\nname = \"{n}\"\ntexec = \"{t} ms\"\nload = 1.0\n"))
        .collect::<String>()
        + "[[connections]]\nfrom = \"a\"\nto = \"b\"\nvolume = \"1 MB\"\n[[connections]]\nfrom = \"b\"\nto = \"c\"\nvolume = \"1 MB\"\n"
        + "[[requirements]]\nname = \"interactive\"\npath = [\"a\", \"b\", \"c\"]\nmax_latency = \"100 ms\"\n";
    let two = simple_cluster(&[("n1", 1), ("n2", 2)], "100 MB/s", "0.5 ms");
    let r = run(&path, &two, "[place]\na = \"n1\"\nb = \"n2\"\nc = \"n2\"\n");
    assert_eq!(r.kinds(), vec![Kind::Requirement]);
    assert_close!(strain(&r), 0.005, 1e-6);
    let r = run(&path.replace("100 ms", "101 ms"), &two, "[place]\na = \"n1\"\nb = \"n2\"\nc = \"n2\"\n");
    assert!(r.sound());
    assert_eq!(strain(&r), 0.0);

    let freq = "[[modules]]\nname = \"r\"\ntexec = \"57 ms\"\nload = 0.97\n[[requirements]]\nmodule = \"r\"\nmin_frequency = \"18 Hz\"\n";
    let one = simple_cluster(&[("n1", 1)], "100 MB/s", "0 ms");
    let r = run(freq, &one, "[place]\nr = \"n1\"\n");
    assert_eq!(r.kinds(), vec![Kind::Requirement]);
    assert_close!(strain(&r), 0.026, 1e-6);
    assert_eq!(strain(&run(&freq.replace("18 Hz", "17.5 Hz"), &one, "[place]\nr = \"n1\"\n")), 0.0);

    let mut busy: String = ["a", "b", "c", "d"]
        .iter()
        .map(|n| format!("[[modules]]\nname = \"{n}\"\ntexec = \"10 ms\"\nload = 1.0\n"))
        .collect();
    busy += "[[connections]]\nfrom = \"a\"\nto = \"b\"\nvolume = \"2 MB\"\n";
    let pair = simple_cluster(&[("n1", 2), ("n2", 2)], "100 MB/s", "0 ms");
    let r = run(&busy, &pair, "[place]\na = \"n1\"\nc = \"n1\"\nb = \"n2\"\nd = \"n2\"\n");
    assert_eq!(r.kinds(), vec![Kind::NetworkContention, Kind::NetworkContention]);
    assert_close!(strain(&r), 2.0, 1e-6);
    let r = run(&busy, &pair, "[place]\na = \"n1\"\nb = \"n1\"\nc = \"n2\"\nd = \"n2\"\n");
    assert!(r.sound());
    assert_eq!(strain(&r), 0.0);
}
