//! Interdependencies as the perf-model paper prescribes them (Section IV.B.2): configuration 1
//! (eq 8 order), part-by-part evaluation of G_dep, and MPI groups in lockstep. Every expected
//! number is computed by hand in the comments.

use crate::assert_close;
use crate::support::*;
use flowmap::perf::Schedule;
use flowmap::verify::Kind;

/// p (20 ms) and r (100 ms) are predecessors on nodes of their own; x waits for p, y for p and
/// r: one synchronous component {p, r, x, y}. x and y share the single CPU of n1.
const CONFIG1: &str = r#"
[[modules]]
name = "p"
texec = "20 ms"
load = 1.0
[[modules]]
name = "r"
texec = "100 ms"
load = 1.0
[[modules]]
name = "x"
texec = "10 ms"
load = 0.5
[[modules]]
name = "y"
texec = "8 ms"
load = 0.8
[[connections]]
from = "p"
to = "x"
volume = "0 B"
[[connections]]
from = "p"
to = "y"
volume = "0 B"
[[connections]]
from = "r"
to = "y"
volume = "0 B"
"#;

#[test]
fn configuration_1_orders_by_eq8_not_eq7() {
    // n1 holds only x and y, of one synchronous component, neither a predecessor:
    // configuration 1, ordered by eq 8, ascending T_exec x LD: x 10 x 0.5 = 5 < y 8 x 0.8 = 6.4,
    // so x first. (Eq 7 would order them the other way: T_I/O(x) = max(10, 20) - 5 = 15,
    // T_I/O(y) = max(8, 20, 100) - 6.4 = 93.6, y first, and x would get 0.2 x 0.5 = 0.1,
    // T_cexec(x) = 10 x 0.5 / 0.1 = 50 ms > T_it(p) = 20 ms: a buffer overflow.)
    // Allocation on one CPU: x LD_c = 0.5, T_cexec = 10; y LD_c = (1 - 0.5) x 0.8 = 0.4,
    // T_cexec = 8 x 0.8 / 0.4 = 16 ms. T_it: x = max(20, 10) = 20; y = max(20, 100, 16) = 100.
    let cluster = simple_cluster(&[("n0", 1), ("n1", 1), ("n2", 1)], "100 MB/s", "0 ms");
    let r = run(CONFIG1, &cluster, "[place]\np = \"n0\"\nx = \"n1\"\ny = \"n1\"\nr = \"n2\"\n");
    assert_eq!((r.m("x").cpu, r.m("y").cpu), (0, 0));
    assert_close!(r.ldc("x"), 0.5, 1e-12);
    assert_close!(r.tcexec("x"), 10.0, 1e-9);
    assert_close!(r.ldc("y"), 0.4, 1e-12);
    assert_close!(r.tcexec("y"), 16.0, 1e-9);
    assert_close!(r.tit("x"), 20.0, 1e-9);
    assert_close!(r.tit("y"), 100.0, 1e-9);
    // T_I/O is still reported by eq 7 (15 and 93.6 ms); only the order comes from eq 8.
    assert_close!(r.m("x").tio * 1e3, 15.0, 1e-9);
    assert_close!(r.m("y").tio * 1e3, 93.6, 1e-9);
    // The first round is the same allocation (the order does not depend on T_it).
    assert_close!(r.m("x").first.ldc, 0.5, 1e-12);
    assert_close!(r.m("y").first.ldc, 0.4, 1e-12);
    // Sound, but the paper's hypothesis (one T_it in the component) fails here: 20 vs 100 ms
    // (and p's messages to y pile up, p sending every 20 ms, y taking one every 100 ms: a
    // rate mismatch).
    assert!(r.sound(), "{:?}", r.report.diagnostics);
    assert_eq!(r.warnings(), vec![Kind::RateMismatch, Kind::OrderHypothesis]);
    let d = r.report.diagnostics.iter().find(|d| d.kind == Kind::OrderHypothesis).unwrap();
    assert_eq!(d.subjects, vec!["n1", "x", "y"]);
    assert!(d.message.contains("x 20 ms") && d.message.contains("y 100 ms"), "{}", d.message);
}

#[test]
fn predecessor_on_the_node_is_not_configuration_1() {
    // Same, with p on n1 too: a predecessor shares the node, so eq 6–7 order it:
    // T_I/O(p) = 20 x 0 = 0, x 15, y 93.6 -> y, x, p on one CPU: y LD_c 0.8 (8 ms);
    // x 0.2 x 0.5 = 0.1 (50 ms); p (1 - 0.8 - 0.1) x 1 = 0.1 -> T_cexec(p) = 200 ms.
    // Round 2: T_it(p) = 200: T_I/O x = 200 - 5 = 195, y = max(8, 200, 100) - 6.4 = 193.6,
    // p 0 -> x, y, p: x 0.5 (10 ms), y 0.5 x 0.8 = 0.4 (16 ms), p 0.1 x 1 = 0.1 (200 ms).
    // Round 3: T_it(p) = 200 again: same order (x, y, p): converged after 2 allocations.
    let cluster = simple_cluster(&[("n1", 1), ("n2", 1)], "100 MB/s", "0 ms");
    let r = run(CONFIG1, &cluster, "[place]\np = \"n1\"\nx = \"n1\"\ny = \"n1\"\nr = \"n2\"\n");
    assert!(r.report.prediction.as_ref().unwrap().eq8_nodes.is_empty());
    assert!(matches!(r.report.prediction.as_ref().unwrap().schedule, Schedule::Converged { iterations: 2 }));
    assert_close!(r.tcexec("x"), 10.0, 1e-9);
    assert_close!(r.tcexec("y"), 16.0, 1e-9);
    assert_close!(r.tcexec("p"), 200.0, 1e-9);
    assert!(!r.warnings().contains(&Kind::OrderHypothesis));
}

/// Upstream part: a and b (predecessors) share n0's CPU. Downstream part: u (waits for a) and
/// ya (waits for v) on n1; v (predecessor) and yb (waits for u) on n2; one CPU each. n1 and n2
/// depend on each other (v -> ya, u -> yb), so they form one part of G_dep, after {a, b}.
const TWO_PARTS: &str = r#"
[[modules]]
name = "a"
texec = "15 ms"
load = 0.5
[[modules]]
name = "b"
texec = "20 ms"
load = 0.5
[[modules]]
name = "u"
texec = "10 ms"
load = 0.5
[[modules]]
name = "ya"
texec = "8 ms"
load = 0.9
[[modules]]
name = "v"
texec = "20 ms"
load = 0.5
[[modules]]
name = "yb"
texec = "25 ms"
load = 0.9
[[connections]]
from = "a"
to = "u"
volume = "0 B"
[[connections]]
from = "v"
to = "ya"
volume = "0 B"
[[connections]]
from = "u"
to = "yb"
volume = "0 B"
"#;

#[test]
fn downstream_part_starts_from_the_upstream_final_pace() {
    // Upstream part {a, b} on n0: eq 6: T_I/O a = 15 x 0.5 = 7.5, b = 20 x 0.5 = 10 -> b, a:
    // b LD_c 0.5 (20 ms); a 0.5 x 0.5 = 0.25 -> T_cexec(a) = 15 x 0.5 / 0.25 = 30 ms = T_it(a).
    // Downstream part, round 1 from T_cexec = T_exec and the final T_it(a) = 30:
    //   T_it u = max(30, 10) = 30, v = 20. n1: T_I/O u = max(10, 30) - 5 = 25,
    //   ya = max(8, 20) - 7.2 = 12.8 -> u, ya. n2: v = 20 x 0.5 = 10, yb = max(25, 30) - 22.5 =
    //   7.5 -> v, yb. Allocation: u 0.5 (10 ms), ya 0.5 x 0.9 = 0.45 (8 x 0.9 / 0.45 = 16 ms);
    //   v 0.5 (20 ms), yb 0.45 (25 x 0.9 / 0.45 = 50 ms).
    // Round 2: T_it u = max(30, 10) = 30, v = 20: same keys, same orders: converged, 1 allocation.
    // (Starting from T_it(a) = T_exec(a) = 15 instead, as one iteration over the whole
    // application would, n1's first order is ya (12.8) before u (max(10, 15) - 5 = 10): u gets
    // 0.1 x 0.5 = 0.05 (100 ms), which drives yb first on n2 and v to 200 ms, and the two nodes
    // then swap orders every round: an oscillation of period 2.)
    let cluster = simple_cluster(&[("n0", 1), ("n1", 1), ("n2", 1)], "100 MB/s", "0 ms");
    let r =
        run(TWO_PARTS, &cluster, "[place]\na = \"n0\"\nb = \"n0\"\nu = \"n1\"\nya = \"n1\"\nv = \"n2\"\nyb = \"n2\"\n");
    assert!(
        matches!(r.report.prediction.as_ref().unwrap().schedule, Schedule::Converged { iterations: 1 }),
        "{:?}",
        r.report.prediction.as_ref().unwrap().schedule
    );
    for (m, ldc, tcexec, tit) in [
        ("a", 0.25, 30.0, 30.0),
        ("b", 0.5, 20.0, 20.0),
        ("u", 0.5, 10.0, 30.0),
        ("ya", 0.45, 16.0, 20.0),
        ("v", 0.5, 20.0, 20.0),
        ("yb", 0.45, 50.0, 50.0),
    ] {
        assert_close!(r.ldc(m), ldc, 1e-12);
        assert_close!(r.tcexec(m), tcexec, 1e-9);
        assert_close!(r.tit(m), tit, 1e-9);
    }
    // a is slowed (30 > 15 ms): cpu-overload; yb (50 ms) is slower than u (30 ms): overflow.
    assert_eq!(r.kinds(), vec![Kind::CpuOverload, Kind::BufferOverflow]);
    // The first round (T_it_sync: a at 15 ms) is the other order on n1: ya before u, u at 100 ms.
    assert_close!(r.m("u").first.tcexec * 1e3, 100.0, 1e-9);
}

/// Two instances of an MPI module on processors of different speeds, exchanging 1 MB each way
/// per iteration (200 MB/s, 0.5 ms latency), feeding a sink.
fn lockstep_app(lockstep: bool) -> String {
    format!(
        r#"
[[modules]]
name = "sim"
instances = 2
texec = {{ a = "8 ms", b = "12.5 ms" }}
load = 1.0
mpi = {{ pattern = "ring", volume = "1 MB", lockstep = {lockstep} }}
[[modules]]
name = "sink"
texec = {{ a = "5 ms", b = "5 ms" }}
load = 1.0
[[modules]]
name = "q"
texec = {{ a = "40 ms", b = "40 ms" }}
load = 0.2
[[connections]]
from = "sim"
to = "sink"
pattern = "all-to-all"
volume = "0 B"
"#
    )
}

const LOCKSTEP_CLUSTER: &str = r#"
[[networks]]
name = "net"
bandwidth = "200 MB/s"
latency = "0.5 ms"
[[nodes]]
names = "n0"
cpus = 1
processor = "a"
networks = ["net"]
[[nodes]]
names = "n1"
cpus = 1
processor = "b"
networks = ["net"]
[[nodes]]
names = "n2"
cpus = 1
processor = "a"
networks = ["net"]
[[nodes]]
names = "n3"
cpus = 1
processor = "a"
networks = ["net"]
"#;

#[test]
fn mpi_group_in_lockstep_runs_at_its_slowest_instance_plus_the_exchange() {
    let mapping = "[place]\n\"sim[0]\" = \"n0\"\n\"sim[1]\" = \"n1\"\nsink = \"n2\"\nq = \"n3\"\n";
    // Default (no lockstep): each instance at its own T_exec: 8 ms (125 Hz) and 12.5 ms (80 Hz);
    // the ring of 2 is one edge each way, 1 MB per iteration: n0 sends 125 MB/s, n1 80 MB/s.
    let r = run(&lockstep_app(false), LOCKSTEP_CLUSTER, mapping);
    assert_close!(r.tit("sim[0]"), 8.0, 1e-9);
    assert_close!(r.tit("sim[1]"), 12.5, 1e-9);
    let links = &r.report.prediction.as_ref().unwrap().links;
    let at = |n: &str| links.iter().find(|l| r.cluster.node(l.node).name == n).unwrap().clone();
    assert_close!(at("n0").send, 125e6, 1e-3);
    assert_close!(at("n1").send, 80e6, 1e-3);
    // Lockstep: the exchange takes 1 MB / 200 MB/s + 0.5 ms = 5.5 ms; both instances run at
    // max(8, 12.5) + 5.5 = 18 ms, and each sends 1 MB / 18 ms = 55.56 MB/s. The sink waits for
    // both: T_it = 18 ms, and no rate mismatch any more (both inputs at the same pace).
    let r = run(&lockstep_app(true), LOCKSTEP_CLUSTER, mapping);
    assert_close!(r.tit("sim[0]"), 18.0, 1e-9);
    assert_close!(r.tit("sim[1]"), 18.0, 1e-9);
    assert_close!(r.tit("sink"), 18.0, 1e-9);
    let links = &r.report.prediction.as_ref().unwrap().links;
    let at = |n: &str| links.iter().find(|l| r.cluster.node(l.node).name == n).unwrap().clone();
    assert_close!(at("n0").send, 1e6 / 0.018, 1e-3);
    assert_close!(at("n1").send, 1e6 / 0.018, 1e-3);
    assert!(r.sound(), "{:?}", r.report.diagnostics);
    assert!(r.warnings().is_empty(), "{:?}", r.report.diagnostics);
}

#[test]
fn lockstep_member_slowed_below_the_group_pace_keeps_the_pace() {
    // q (predecessor, T_I/O = 40 x 0.8 = 32) shares sim[0]'s CPU on n0. sim[0] waits for its
    // peer, eq 7: T_I/O = max(8, T_it = 18) - 8 x 1 = 10 < 32, so q goes first: LD_c 0.2;
    // sim[0] gets 0.8: T_cexec = 8 / 0.8 = 10 ms. The group: max(10, 12.5) + 5.5 = 18 ms,
    // unchanged: sound. Without lockstep sim[0] is a predecessor paced by itself: 8 -> 10 ms
    // is a cpu-overload.
    let mapping = "[place]\n\"sim[0]\" = \"n0\"\n\"sim[1]\" = \"n1\"\nsink = \"n2\"\nq = \"n0\"\n";
    let r = run(&lockstep_app(true), LOCKSTEP_CLUSTER, mapping);
    assert_close!(r.ldc("sim[0]"), 0.8, 1e-12);
    assert_close!(r.tcexec("sim[0]"), 10.0, 1e-9);
    assert_close!(r.m("sim[0]").tio * 1e3, 10.0, 1e-9);
    assert_close!(r.tit("sim[0]"), 18.0, 1e-9);
    assert!(r.sound(), "{:?}", r.report.diagnostics);
    // Without lockstep: T_I/O(sim[0]) = 8 x 0 = 0 < 32: q first, sim[0] at 10 ms > 8 ms.
    let r = run(&lockstep_app(false), LOCKSTEP_CLUSTER, mapping);
    assert_close!(r.tcexec("sim[0]"), 10.0, 1e-9);
    assert_eq!(r.kinds(), vec![Kind::CpuOverload]);
    // A member slowed past the group's pace lowers it. q with LD 0.5: T_I/O = 40 x 0.5 = 20 > 10:
    // q first, LD_c 0.5; sim[0] gets 0.5: 8 / 0.5 = 16 ms; the group: max(16, 12.5) + 5.5 =
    // 21.5 ms. Round 2: T_I/O(sim[0]) = 21.5 - 8 = 13.5 < 20: same order, converged.
    // 21.5 ms > 18 ms: sim[0] lowers the group's pace: cpu-overload.
    let heavy = lockstep_app(true).replace("load = 0.2", "load = 0.5");
    let r = run(&heavy, LOCKSTEP_CLUSTER, mapping);
    assert_close!(r.tcexec("sim[0]"), 16.0, 1e-9);
    assert_close!(r.tit("sim[1]"), 21.5, 1e-9);
    assert_eq!(r.kinds(), vec![Kind::CpuOverload]);
    assert_eq!(r.report.diagnostics.iter().find(|d| d.kind == Kind::CpuOverload).unwrap().subjects[0], "sim[0]");
}
