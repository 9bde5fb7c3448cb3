//! Search by shape, when minimising. Nodes fall into symmetry classes: the same CPUs,
//! processor type and networks, and in or out of every object's domain together, so nodes of
//! a class are interchangeable in every mapping. A shape says how many nodes of each class a
//! mapping uses; a sound mapping whose class counts are at most a shape's moves onto any nodes
//! of that shape. So "a sound mapping with at most j nodes" splits into one feasibility
//! question per shape with j nodes, each on a cluster of just those nodes, answered by the
//! whole feasibility pipeline (`solve`: counting, the class relaxation's LP, greedy, walks,
//! the CSP), which is far smaller than the question over the whole cluster: a mapping found
//! there has at most j nodes, and when every shape with j nodes is refuted, none exists.
//!
//! Shapes are tried in rounds whose time per shape triples (0.25 s first; the feasibility
//! pipeline in a shape's first stage at most `FIRST_PIPELINE`, for the first
//! `FIRST_PIPELINES` shapes of a size in a round): shapes the counting or the
//! class relaxation's LP refute drop out in milliseconds, and the rest share the time. In round 1 the relaxations are split on the
//! pace roots' processor types (`bound::split_bound`, at most `SPLIT_SLICE` a shape, of which
//! its pass 2 at most `PASS2_SLICE`, `prove_on` going on with it in later stages): unseen
//! realistic 100/32 s14's 13-node shapes, 2 of which stood against the unsplit LPs for 60 s,
//! all fall in 17–19 s, proving its 14. Sizes go
//! from the bound up to one below the best mapping; a level whose shapes are all refuted
//! raises the bound. At most `MAX_SHAPES` shapes per size at once (most CPUs first), topped
//! up each round; a size with more than `MAX_LISTED` is searched but never
//! proven. Shapes a dominating class could take over are left out
//! (`Dominance`): unseen realistic 100/32 s23 had more than 400 9-node shapes, and 308 without
//! those, all refuted (10 nodes proven optimal in 35 s).
//!
//! Refuting shapes one LP each is what bounds a proof at 100/32 (unseen s35: 1,159 shapes of
//! 14 nodes, 31 ms each; s34: 86 ms each). Two things share LPs among shapes. Boxes
//! (`refute_boxes`, before the rounds): shapes whose envelope (the most of each class any of
//! them takes) holds no sound mapping with at most their size are all refuted by that one
//! LP, splitting boxes that are not (s34: 502 of 514 12-node shapes in 4.1 s). And
//! certificates (`bound::refutes`): the multipliers that proved one shape's relaxation
//! infeasible are tried on the next shapes with the same classes (whose rows differ only in
//! the node counts) before their own LP is solved.
//!
//! Measured (realistic 100/32 s1, 3 classes besides 4 display nodes): 40 shapes with 13
//! nodes; 37 refuted by the LP, and one of the three left holds a sound mapping the walk finds
//! in 2 s on its 13 nodes, where the squeeze over the 32 nodes stayed at 14 for 60 s.

use super::{greedy, nodes_used, walk, Outcome, SolveOptions, Status};
use crate::csp::{
    bound::{Case, Open, Packed, Progress, Step},
    Analysis,
};
use crate::model::{Application, Cluster, Mapping, NodeId, Placement};

use crate::verify::{self, Report, Verdict};
use pumpkin_solver::core::termination::TerminationCondition;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Shapes of one size searched at once: the next ones join when all of these are decided.
const MAX_SHAPES: usize = 400;
/// Most shapes of one size listed; beyond, the size is proven only if listed by boxes
/// (`list_by_boxes`).
const MAX_LISTED: usize = MAX_SHAPES * 8;
/// The time one shape gets in the first round, and at most in any round.
const FIRST_SLICE: Duration = Duration::from_millis(250);
const MAX_SLICE: Duration = Duration::from_secs(20);
/// The feasibility pipeline's time on a shape in its first stage (`on_nodes`), at most: what
/// it finds there it finds at once (greedy or a short walk: 0.03-0.06 s), and it refuted no
/// shape the LP left (traces of 18 unseen realistic 50/16 and 100/32 instances: 279 shapes
/// given 0.25 s each, 3 found within 0.07 s, none refuted); the split in stage 1 decides them. Unseen 100/32 s623 spent 31.5 s
/// of its 60 on 105 shapes' first stage, 50/16 s828 4.8 of 8.3 s, and found in stage 1.
const FIRST_PIPELINE: Duration = Duration::from_millis(100);
/// Shapes of one size per round that get the feasibility pipeline in their first stage; the
/// rest go on to the split (stage 1) after counting and the LP. Traces of the 35 slowest
/// unseen instances (alt-gen 50/16 and 100/32, realistic 50/16 and 100/32 over 4 s): the
/// pipeline found 14 mappings in stage 0, all on the first six shapes of their size to reach it
/// (most CPUs first; twelve on the first or second), and nothing on the other 700-odd shapes,
/// which cost 0.11-0.15 s each (alt 100/32 s8: 112 shapes, 20 s of its 60; s10 94, 18 s).
/// Paired at 60 s on the 31 instances with more than eight (two at a time): the same statuses
/// and nodes, 653 -> 637 s in all (alt 50/16 s3 18.4 -> 14.7 s, realistic 100/32 s877 10.6 ->
/// 4.5, s623 60.0 -> 57.1, s876 25.7 -> 23.2; s874 11.2 -> 13.7, the rest within 1.5 s).
const FIRST_PIPELINES: usize = 8;
/// In the brief search before the squeeze (`dive` off), two (the search after the squeeze
/// gives the first `FIRST_PIPELINES` theirs, skipping those the brief search ran: `Memo::
/// piped`), so that the brief search reaches the splits in its 3 s: with eight, alt-gen 50/16
/// s3's went to the pipelines of its 9-, 10- and 11-node shapes and ended in round 0, and
/// 10 nodes came after the squeeze at 12.5 s; with two, the split's packing on its first
/// 10-node shape gave them in round 1, and the brief search proved them optimal, at 4.1 s.
const BRIEF_PIPELINES: usize = 2;
/// The class relaxation's LP per shape, at most.
const LP_SLICE: Duration = Duration::from_secs(1);
/// The split on pace roots' processor types (`split_refuted`), per shape at most.
const SPLIT_SLICE: Duration = Duration::from_secs(10);
/// Of which the split's pass 2 (the exact tools) at most: `prove_on` goes on with it in later
/// stages, while no case has a packing. Unseen realistic 100/32 s133: three of its 14-node
/// shapes' splits took the full 10 s each (pass 1 1.1-1.8 s, none packed, none refuted), and
/// the fourth's, which packed all its kept cases in 1.2 s and gave the 14 by a walk in
/// 0.15 s, came at 68 s; with pass 2 at most 3 s, optimal in 46-47 s (two runs).
const PASS2_SLICE: Duration = Duration::from_secs(3);
/// The split's pass 2 ends once this many cases are open with a packing or settled (`bound::
/// split_bound`'s `enough`): one. Such a case is not refuted by the exact tools (only the
/// CSP on the case could), so the shape is not refuted in pass 2 either, and its time goes to
/// the walk from the packing in stage 1; `prove_on` goes on with the cases pass 2 did not
/// reach in stage 2 (their packings are more starts), and later while no case has a packing.
/// With four (until the thirty-seventh session),
/// unseen hard 50/16 s7's last 10-node shape packed a case in pass 1 at 7.3 s, pass 2 ran
/// its 3 s on the other cases, and the walk from the packing found the optimum at once, at
/// 10.3 s; with one, at 7.3 s.
const PASS2_ENOUGH: usize = 1;
/// Open cases of the split kept per shape, for the search, and in all for `case_squeeze`.
/// Four, not two: with dominated shapes left out, fewer shapes stay open to fill the pool
/// (hard 100/32 s3: 25/24 after 60 s in two runs with two; with four, 24 proven optimal in
/// 24 s in one run of three, 25/24 in the others: its 24 is luck either way).
const ALIVE_KEPT: usize = 4;
const POOL_MAX: usize = 8;
/// The dive's share of the time left per shape, and its most per shape (`dive_top`).
const DIVE_SHARE: f64 = 0.25;
const DIVE_SLICE: Duration = Duration::from_secs(10);
/// A walk from a packing gets at least this long from stage 2 (within the time left): one try (a
/// construction and a repair walk to its last kick) took about 2.3 s on unseen realistic
/// 100/32 s83's 14-node shapes, so the first rounds' slices (0.25, 0.75, 2.25 s) cut every
/// try short.
const PACKED_WALK: Duration = Duration::from_secs(3);
/// The share of the time left, and the most time, the whole cluster's pattern bound gets.
const CLUSTER_SHARE: f64 = 0.5;
const CLUSTER_CAP: Duration = Duration::from_secs(600);
/// With several packings, each gets an equal share of a walk's budget first, at least this.
const PACK_TRY: Duration = Duration::from_millis(250);

/// What the search by shape did.
#[derive(Clone, Debug, Default)]
pub struct ShapeStats {
    /// Shapes tried, refuted (no sound mapping on their nodes), and left undecided at the end.
    pub tried: usize,
    pub refuted: usize,
    pub undecided: usize,
    /// The shapes left undecided below the best mapping's size (smallest first, at most
    /// `MAX_OPEN_LISTED`), each with where its proof stands (`OpenShape`): why the bound
    /// stayed below the best.
    pub open: Vec<OpenShape>,
    /// The sizes below the best mapping's with more shapes than are listed (`MAX_LISTED`):
    /// searched, never proven (unless listed by boxes since: `boxed`).
    pub unlisted: Vec<i64>,
    /// The whole cluster's pattern bound (`bound::cluster_pattern_bound`), when it finished,
    /// and the time it took in all.
    pub cluster_bound: Option<i64>,
    pub cluster_s: f64,
    /// The size listed by boxes (`list_by_boxes`), when it finished, and the time that took.
    pub boxed: Option<i64>,
    pub boxes_s: f64,
}

/// Most undecided shapes `ShapeStats::open` lists.
const MAX_OPEN_LISTED: usize = 20;

/// Where an undecided shape stands: its size, whether the split on pace roots' types ran to
/// its end (`split`), and its open cases: with a packing that passes the allocation's
/// simulation (no walk from it reached a sound mapping: `packed`), without one, their
/// bound's search run to its end (`settled`: the packing search neither found nor refuted
/// one), cut short (`unsettled`), or not reached (`fresh`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenShape {
    pub size: i64,
    pub split: bool,
    pub cases: usize,
    pub packed: usize,
    pub settled: usize,
    pub unsettled: usize,
    pub fresh: usize,
}

impl OpenShape {
    fn of(p: &Pending) -> OpenShape {
        let mut o = OpenShape { size: p.size, split: !p.proof.is_empty(), ..OpenShape::default() };
        if p.proof.is_empty() {
            // The split cut short: its kept cases only.
            o.cases = p.cases.len();
            o.packed = p.packed.iter().filter(|a| a.is_some()).count();
            o.fresh = o.cases - o.packed;
            return o;
        }
        let packed = p.packings();
        for c in &p.proof {
            o.cases += 1;
            if c.packed.is_some() || packed.iter().any(|(d, _)| *d == c.case) {
                o.packed += 1;
                continue;
            }
            match c.progress {
                Progress::Fresh => o.fresh += 1,
                Progress::Unsettled { .. } => o.unsettled += 1,
                Progress::Settled => o.settled += 1,
            }
        }
        o
    }
}

/// `ShapeStats::open` of the shapes `pending` below `best`.
fn open_shapes(pending: &[Pending], best: i64) -> Vec<OpenShape> {
    let mut out: Vec<OpenShape> = pending.iter().filter(|p| p.size < best).map(OpenShape::of).collect();
    out.sort_by_key(|o| o.size);
    out.truncate(MAX_OPEN_LISTED);
    out
}

/// What one search by shape learnt that the next one (on the same application and cluster)
/// can take up: the shapes refuted, and the splits that ran past pass 1, per shape (its node
/// count per class: the nodes of a class are interchangeable, so shapes with the same counts
/// have the same sub-cluster up to renaming, and a packing numbered by position in the shape
/// holds on either). The brief search before the squeeze and the one after it share one:
/// unseen realistic 100/32 s112's one open 13-node shape was split in both, 3.7 s each.
#[derive(Default)]
pub(super) struct Memo {
    refuted: std::collections::HashSet<Vec<usize>>,
    splits: std::collections::HashMap<Vec<usize>, SplitCases>,
    /// Per shape, the seed and time of the walk from its split's packings in stage 1.
    walked: std::collections::HashMap<Vec<usize>, (u64, Duration)>,
    /// Per shape the class relaxation's LP left open, the time it had.
    lp_open: std::collections::HashMap<Vec<usize>, Duration>,
    /// Per shape, the seed and time of its stage-0 feasibility pipeline, which found nothing.
    piped: std::collections::HashMap<Vec<usize>, (u64, Duration)>,
    /// How far the whole cluster's pattern bound got, and the best mapping's size it was
    /// asked to prove optimal.
    cluster: crate::csp::bound::ClusterBound,
    cluster_best: i64,
}

/// What `split_cases` found: the cases kept for the search, their packings, whether they are
/// all the open ones, and every open case.
type SplitCases = (Vec<Case>, Vec<Option<Packed>>, bool, Vec<Open>);

/// What `search` returns: the best sound mapping it found, if better, and the bound proven.
pub(super) struct Found {
    pub best: Option<(Mapping, Report, i64)>,
    pub bound: i64,
    pub stats: ShapeStats,
}

/// One shape: its size and the nodes it takes (the first of each class).
struct Pending {
    size: i64,
    nodes: Vec<NodeId>,
    /// The cases of the split on pace roots' types that its tools leave open
    /// (from round 1; at most `ALIVE_KEPT`).
    cases: Vec<Case>,
    /// Per case, a packing of its modules onto the shape's nodes (numbered as in the shape's
    /// cluster), when `bound::pack` found one.
    packed: Vec<Option<Packed>>,
    /// Whether `cases` holds every case the split left open (then refuting them all refutes
    /// the shape).
    whole: bool,
    /// Every case the split left open, with how far its pass 2 got (`prove_on` goes on):
    /// refuting them all refutes the shape. Empty when the split did not run to its end.
    proof: Vec<Open>,
    /// The round it joined the search: its stages count from there.
    born: u64,
    /// The stages it had a packing in (`packings`): two or three in four walk from one.
    packed_stages: u64,
    /// The walks from its packings so far (they take the packings in turn).
    walked: u64,
}

impl Pending {
    /// A shape joining the search in round `born`, before any split.
    fn new(size: i64, nodes: Vec<NodeId>, born: u64) -> Pending {
        Pending {
            size,
            nodes,
            cases: Vec::new(),
            packed: Vec::new(),
            whole: false,
            proof: Vec::new(),
            born,
            packed_stages: 0,
            walked: 0,
        }
    }

    /// A kept case without a packing, the `turn`-th of them (cyclically), if any.
    fn unpacked(&self, turn: usize) -> Option<usize> {
        let open: Vec<usize> = (0..self.packed.len()).filter(|&i| self.packed[i].is_none()).collect();
        (!open.is_empty()).then(|| open[turn % open.len()])
    }

    /// The cases with a packing (kept cases first, then those `prove_on` packed), each once.
    fn packings(&self) -> Vec<(Case, Packed)> {
        let mut out: Vec<(Case, Packed)> = Vec::new();
        let kept = self.cases.iter().zip(&self.packed).filter_map(|(c, a)| Some((c, a.as_ref()?)));
        let proved = self.proof.iter().filter_map(|o| Some((&o.case, o.packed.as_ref()?)));
        for (c, a) in kept.chain(proved) {
            if !out.iter().any(|(d, _)| d == c) {
                out.push((c.clone(), a.clone()));
            }
        }
        out
    }
}

/// Searches shapes of `bound` .. (the incumbent's nodes − 1) nodes until `ends.0` (`ends.1`
/// when every size searched is listed whole, so that refuting its shapes proves it),
/// `stop()` or the end of round `rounds` − 1. (Unseen realistic 100/32 s64: the split on its
/// last 13-node shape went on in its slices until 0.1 s before three quarters of the time
/// left ended, 2-3 s short of refuting it, and LNS and the CSP after it found nothing.)
/// Each shape gets, in turn: counting and the LP, the feasibility pipeline (round 0), then
/// walks from the incumbent moved onto the shape (`walk::onto`, odd rounds) and from fresh
/// constructions on the shape's nodes (even rounds), each round with another seed.
#[allow(clippy::too_many_arguments)]
pub(super) fn search(
    cx: greedy::Ctx,
    opts: &SolveOptions,
    bound: i64,
    incumbent: &(Mapping, Report, i64),
    ends: (Option<Instant>, Option<Instant>),
    rounds: u64,
    dive: bool,
    memo: &mut Memo,
    stop: &mut dyn FnMut() -> bool,
) -> Found {
    let greedy::Ctx { app, cluster, an, .. } = cx;
    let best = incumbent.2;
    let mut out = Found { best: None, bound, stats: ShapeStats::default() };
    let (mut classes, least, over) = classes(cluster, an);
    // Within a class any nodes will do; those the incumbent uses first, for `walk::onto`.
    let mut busy = vec![false; cluster.nodes.len()];
    for p in &incumbent.0.placement {
        busy[p.node.ix()] = true;
    }
    for ns in &mut classes {
        ns.sort_by_key(|n| (!busy[n.ix()], n.0));
    }
    // Certificates of refuted shapes, per support (the classes a shape uses): shapes with one
    // support have the same relaxation but for the node counts (`bound::refutes`).
    let mut certs = Certs::new(cluster, &classes);
    // Every mapping uses a node of each class some object's domain lies in.
    out.bound = out.bound.max(least.iter().sum::<usize>() as i64);
    let cluster_on = dive;
    let mut pending: Vec<Pending> = Vec::new();
    // The sizes whose every shape is listed (only those can be proven).
    let mut listed: BTreeMap<i64, bool> = BTreeMap::new();
    // Per size, the shapes listed beyond the first `MAX_SHAPES`, most CPUs first: each round
    // tops that size's pending shapes up to `MAX_SHAPES` (unseen realistic 100/32 s35: its
    // first 400 shapes of 14 nodes all refuted in 24 s, the size not proven for the rest; s34:
    // waiting for all of a batch to be decided left its next ones untried while the open
    // shapes' slices grew).
    let mut later: BTreeMap<i64, std::vec::IntoIter<Vec<NodeId>>> = BTreeMap::new();
    let mut lists: BTreeMap<i64, Vec<Vec<NodeId>>> = BTreeMap::new();
    for size in bound.max(least.iter().sum::<usize>() as i64)..best {
        let deadline = ends.0.max(ends.1);
        let mut halt = || stop() || deadline.is_some_and(|e| Instant::now() >= e);
        let (shapes, whole) = enumerate(cluster, &classes, &least, &over, size as usize, &mut halt);
        listed.insert(size, whole);
        let all: Vec<Vec<NodeId>> = shapes
            .into_iter()
            .take(MAX_LISTED)
            .map(|counts| classes.iter().zip(&counts).flat_map(|(ns, &c)| ns.iter().copied().take(c)).collect())
            .collect();
        lists.insert(size, all);
    }
    let end = if listed.values().all(|&whole| whole) { ends.1 } else { ends.0 };
    let mut slice = FIRST_SLICE;
    let mut best_k = best;
    // The dive only where the round-robin cannot give every shape even its first slice twice
    // over in the time left (unseen realistic 300/64 s7: 1,195 shapes, 27.6 s; realistic 100/32,
    // committed and unseen, at most 124 shapes with 27.7 s: there the dive cost up to 8 s of a
    // proof that came anyway). Without a deadline the round-robin has all the time it needs.
    let first: usize = lists.values().map(|l| l.len().min(MAX_SHAPES)).sum();
    let spread =
        end.is_some_and(|e| FIRST_SLICE.mul_f64(first as f64) > e.saturating_duration_since(Instant::now()) * 2);
    if dive && spread {
        if let Some(found) = dive_top(cx, opts, &mut lists, best_k, end, &mut certs, stop) {
            best_k = found.2;
            out.best = Some(found);
        }
    }
    // The smallest size too many shapes to list (none below it is proven then, `proven`),
    // by boxes (`list_by_boxes`), in the search after the squeeze, within `BNB_SHARE` of the
    // time left: the vectors it leaves open replace the lists of every size up to it, which
    // are then whole (alt-gen 300/64 s1: its 9-node shapes, over 3,200, were never all
    // listed, so 10/9 for 60 s; the boxes leave 2 open, which the shapes' own refutations
    // then take).
    if dive {
        let bnb_end = end.map(|e| Instant::now() + e.saturating_duration_since(Instant::now()).mul_f64(BNB_SHARE));
        let t = Instant::now();
        // A size whose every vector the boxes refute proves the next one's bound: that one
        // next (alt-gen 300/64 s2: 20 nodes refuted in 4.3 s).
        while let Some(size) = listed.iter().find(|&(&sz, &whole)| !whole && sz < best_k).map(|(&sz, _)| sz) {
            let Some(open) = list_by_boxes(app, cluster, opts, &classes, &least, size as usize, bnb_end, stop) else {
                break;
            };
            for (&sz, whole) in listed.iter_mut().filter(|(&sz, _)| sz <= size) {
                *whole = true;
                let mut all: Vec<Vec<NodeId>> = open
                    .iter()
                    .filter(|v| v.iter().sum::<usize>() as i64 == sz)
                    .map(|v| classes.iter().zip(v).flat_map(|(ns, &c)| ns.iter().copied().take(c)).collect())
                    .collect();
                all.sort_by_key(|nodes: &Vec<NodeId>| {
                    std::cmp::Reverse(nodes.iter().map(|&n| cluster.node(n).cpus).sum::<u32>())
                });
                lists.insert(sz, all);
            }
            out.stats.boxed = Some(size);
            if !open.is_empty() {
                break;
            }
        }
        out.stats.boxes_s += t.elapsed().as_secs_f64();
    }
    // Boxes of shapes refuted together (`refute_boxes`), smallest size first, within a share
    // of the time left (after the dive: at 300/64 a box's LP takes up to its whole second).
    let box_end = end.map(|e| Instant::now() + e.saturating_duration_since(Instant::now()).mul_f64(BOX_SHARE));
    for (&size, all) in lists.iter_mut() {
        if size >= best_k || all.is_empty() {
            continue;
        }
        let counts: Vec<Vec<usize>> = all.iter().map(|nodes| certs.counts(nodes, classes.len())).collect();
        let gone = refute_boxes(app, cluster, opts, &classes, &counts, size, box_end, stop);
        let n = gone.iter().filter(|&&g| g).count();
        out.stats.tried += n;
        out.stats.refuted += n;
        let mut it = gone.iter();
        all.retain(|_| !*it.next().expect("one per shape"));
    }
    for (size, mut all) in lists {
        if size >= best_k {
            continue;
        }
        let rest = all.split_off(all.len().min(MAX_SHAPES));
        for nodes in all {
            pending.push(Pending::new(size, nodes, 0));
        }
        if !rest.is_empty() {
            later.insert(size, rest.into_iter());
        }
    }
    // The whole cluster's pattern bound, split on the pace roots (`bound::cluster_pattern_bound`),
    // before the rounds when the shapes left below the best (after the boxes) outnumber its
    // cases (a shape's first slice and split cost about what a case's LP costs), within
    // `CLUSTER_SHARE` of the time left; then, while unfinished, after each round as long as
    // the round took: one bound for every shape of every size below it, where the shapes'
    // own splits refute them one by one (unseen realistic 100/32 s853: 81 open 12-node shapes
    // at about 1.5 s each, 13/12 after 60 s; the whole cluster's 32 cases all bound 13 in
    // about 17 s). Run first whatever the count, it cost fresh s873 (8 shapes left, 32 cases)
    // 8 s in vain, 10 -> 22 s. Not in the brief search (`dive` off), whose cheap refutations
    // come first.
    let left: usize = pending.len() + later.values().map(|r| r.as_slice().len()).sum::<usize>();
    if cluster_on && left > crate::csp::bound::cluster_cases(app, cluster, an) {
        let t = Instant::now();
        let budget = ends.1.map_or(CLUSTER_CAP, |e| e.saturating_duration_since(t).mul_f64(CLUSTER_SHARE));
        cluster_step(cx, &mut out, best_k, budget, memo, stop);
        if out.bound >= best_k {
            return out;
        }
    }
    let mut round = 0u64;
    // The open cases of the split at the smallest size with open shapes (from round 1).
    let mut pool: Vec<Case> = Vec::new();
    let mut pending_size: Option<i64> = None;
    // The pool's next case.
    let mut turn = 0usize;
    while !pending.is_empty() || !later.is_empty() {
        // The next shapes of each size with none pending.
        for (&size, rest) in later.iter_mut() {
            let here = pending.iter().filter(|p| p.size == size).count();
            if size < best_k && here < MAX_SHAPES {
                let at = pending.partition_point(|p| p.size <= size);
                let batch: Vec<Pending> =
                    rest.by_ref().take(MAX_SHAPES - here).map(|nodes| Pending::new(size, nodes, round)).collect();
                pending.splice(at..at, batch);
            }
        }
        later.retain(|&size, rest| size < best_k && !rest.as_slice().is_empty());
        if pending.is_empty() {
            break;
        }
        let mut next = Vec::new();
        let round_start = Instant::now();
        let shapes = pending.len();
        // Shapes given the pipeline in stage 0 this round, per size (`FIRST_PIPELINES`).
        let mut piped: BTreeMap<i64, usize> = BTreeMap::new();
        for mut p in pending {
            if p.size >= best_k {
                continue;
            }
            let now = Instant::now();
            if stop() || end.is_some_and(|e| now >= e) {
                next.push(p);
                continue;
            }
            out.stats.tried += usize::from(round == p.born);
            // This shape's stage: rounds since it joined.
            let stage = round - p.born;
            let sub = sub_cluster(cluster, &p.nodes);
            let key = certs.counts(&p.nodes, classes.len());
            // The cheap refutations once: counting, then the class relaxation's LP.
            // An LP that left the shape open in the brief search, given as long a slice, is
            // not solved again (the same rows: it would leave it open again).
            let lp = end.map_or(LP_SLICE, |e| LP_SLICE.min(e.saturating_duration_since(now)));
            if stage == 0
                && (memo.refuted.contains(&key)
                    || (memo.lp_open.get(&key).is_none_or(|&d| d < lp)
                        && refuted(app, &sub, opts, end, certs.of(&p.nodes))))
            {
                memo.refuted.insert(key);
                out.stats.refuted += 1;
                continue;
            }
            if stage == 0 {
                let d = memo.lp_open.entry(key.clone()).or_insert(lp);
                *d = (*d).max(lp);
            }
            // The costlier refutation once, for the shapes round 0 left open (a split an
            // earlier search ran goes on from where it stopped, within the split's time).
            let split_end = end.map_or(now + SPLIT_SLICE, |e| e.min(now + SPLIT_SLICE));
            let mut resumed = false;
            if stage == 1 {
                let split = match memo.splits.get(&key) {
                    Some(known) => {
                        resumed = true;
                        Ok(known.clone())
                    }
                    None => split_cases(app, &sub, opts, split_end),
                };
                match split {
                    Err(()) => {
                        memo.refuted.insert(key);
                        out.stats.refuted += 1;
                        continue;
                    }
                    Ok((cases, packed, whole, proof)) => {
                        if !resumed && !proof.is_empty() {
                            memo.splits.insert(key.clone(), (cases.clone(), packed.clone(), whole, proof.clone()));
                        }
                        p.packed = packed;
                        p.whole = whole;
                        p.proof = proof;
                        // The pool takes the cases of the smallest size that has any.
                        if pool.is_empty() || pending_size == Some(p.size) {
                            pending_size = Some(p.size);
                            for c in &cases {
                                if pool.len() < POOL_MAX && !pool.contains(c) {
                                    pool.push(c.clone());
                                }
                            }
                        }
                        p.cases = cases;
                    }
                }
            }
            // From here, not from before the split (which has its own time): measured from
            // `now`, a split of 1 s near the end of the brief search let the walk after it
            // run 1 s past the search's end (unseen realistic 100/32 s131: 3.9 s for a 2.9-s
            // window).
            let t0 = Instant::now();
            let mut budget = end.map_or(slice, |e| slice.min(e.saturating_duration_since(t0)));
            // A case with a packing is never refuted (only the search's mapping decides the
            // shape then), so such a shape's time all goes to finding a mapping.
            let mut packings = p.packings();
            // From stage 2, the split's pass 2 goes on where it stopped (`prove_on`), before
            // the stage's search, while no case has a packing (which `prove_on` leaves alone);
            // in stage 1 too when the split was resumed, within the split's time.
            // In stage 2 also when a case has one: pass 2 stopped at the first packing
            // (`PASS2_ENOUGH`) for stage 1's walk from it, and goes on with the cases it left,
            // whose packings are more starts (hard 100/32 s1's 20 nodes came from a packing of
            // a case pass 2 packed, in stage 2).
            if (stage >= 2 || resumed)
                && (packings.is_empty() || stage == 2)
                && p.proof.iter().any(|o| o.packed.is_none() && o.progress != Progress::Settled)
            {
                let share = if resumed { split_end.saturating_duration_since(now) } else { budget };
                if prove_on(app, &sub, opts, &mut p, share, stop) {
                    memo.refuted.insert(key);
                    out.stats.refuted += 1;
                    continue;
                }
                budget = budget.saturating_sub(t0.elapsed());
                // A packing `prove_on` found is walked from in this stage's time left.
                packings = p.packings();
            }
            // Each round another seed: the walks' luck differs (realistic 100/32 s1's 13-node
            // shape: found with 2 seeds of 5 in 60 s each).
            let seed = opts.build.seed.wrapping_add(round);
            // First the whole feasibility pipeline (the CSP may refute the shape), then walks
            // only: on these small clusters the CSP was measured to decide nothing more (the
            // three 13-node shapes of realistic 100/32 s1 left after counting and the LP:
            // undecided after 120 s each), while the walk finds mappings.
            let answer = if stage == 0 {
                let n = piped.entry(p.size).or_insert(0);
                *n += 1;
                if *n > if dive { FIRST_PIPELINES } else { BRIEF_PIPELINES } {
                    next.push(p);
                    continue;
                }
                // The same pipeline (seed and time) the brief search already ran on this shape
                // and that found nothing is not run again (alt-gen 50/16 s3: 16 shapes, 1.8 s).
                let b = budget.min(FIRST_PIPELINE);
                if memo.piped.get(&key).is_some_and(|&(s, d)| s == seed && d >= b) {
                    None
                } else {
                    let a = on_nodes(&Question { app, cluster, sub: &sub, nodes: &p.nodes, opts }, b, seed, false);
                    if a.is_none() {
                        memo.piped.insert(key.clone(), (seed, b));
                    }
                    a
                }
            } else if !p.cases.is_empty()
                && if packings.is_empty() { stage.is_multiple_of(2) } else { p.packed_stages % 4 == 2 }
            {
                // The feasibility pipeline on one open case of the split (its roots on one
                // type each), the cases in turn: realistic 100/32 s1's 13 nodes were found so,
                // never in 600 s without (see `split_cases`). Once a case has a packing, the
                // third stage with one (stage 3 when the split packed: after two walks from
                // it), and the CSP alone with all of the budget (walks come in the other
                // stages). Traces of the 23 slowest of 194 unseen realistic 50/16 and 100/32
                // instances: walks from a packing found 12 mappings, all in the first two
                // stages with one (within 0.28 s), the 8 later walks (3-6.75 s) none; the CSP
                // on s844's last 7-node shape's case refuted it in 1.8-2.3 s, which in the
                // fourth stage came after 12.5 s of walks (s844 19.0 -> 12.8 s). The CSP alone,
                // not the whole pipeline (its walks, CSP slices restarted, LNS): 20.6 -> 19.4 s.
                let ix = (stage as usize / 2).saturating_sub(1) % p.cases.len();
                let mut variant = app.clone();
                crate::csp::bound::apply_case(&mut variant, &p.cases[ix]);
                let q = Question { app: &variant, cluster, sub: &sub, nodes: &p.nodes, opts };
                match on_nodes(&q, budget, seed, !packings.is_empty()) {
                    // Sound there is sound here (the same costs where the roots are): checked.
                    Some(Ok((m, _))) => {
                        let rep = verify::check(app, cluster, &m, &opts.perf);
                        (rep.verdict == Verdict::Sound).then_some(Ok((m, rep)))
                    }
                    // The case holds no sound mapping (its application relaxes the original
                    // with the roots on their types), nor do its refinements: they leave the
                    // shape's cases and proof, and the shape is refuted with its last case.
                    Some(Err(())) => refute_case(&mut p, ix).then_some(Err(())),
                    None => None,
                }
            } else if let Some(ix) = (!packings.is_empty() && stage >= 2 && p.packed_stages % 4 == 1)
                .then(|| p.unpacked(p.packed_stages as usize / 4))
                .flatten()
            {
                // With a packing for some case, one stage in four (from stage 2) searches one
                // for a kept case that has none, the cases in turn: unseen realistic 100/32
                // s180's 14-node shape kept 4 cases, its split packed one, whose walks found
                // nothing in 30 s (3 runs in 4 unproven), where a packing of another case
                // (when the split packed none and `prove_on` then packed all four) gave the
                // mapping in 3 ms.
                let nodes = p.nodes.clone();
                pack_on(&Question { app, cluster, sub: &sub, nodes: &nodes, opts }, &mut p, ix, budget, seed, stop)
            } else if !packings.is_empty() {
                let first = p.walked as usize;
                p.walked += 1;
                // From a packing of the modules onto the shape's nodes that passes the
                // allocation's simulation (`bound::pack`): networks and requirements are
                // left to the walk. Once a case has one, three stages in four (two while a kept
                // case has none: the packing search above takes one), the packings in turn
                // (the third: the CSP above), counted from the first stage with a
                // packing: unseen realistic 100/32 s82 and s83 found their 14-node mappings by
                // walks from a packing in round 5 (at 180-230 s), when one stage in four
                // walked from one; s112's one case was packed by `prove_on` in stage 3, whose
                // time left went to the packing search, stage 4 to the pipeline on the case
                // (20 s in vain), and stage 5's walk from the packing found its 13 at 57 s of 60.
                // Stage 1 (the split's own packings) keeps to its slice, so that the round
                // reaches every shape: unseen realistic 100/32 s142's 17 nodes came from the
                // 13th shape of round 1 (its walk took 0.02 s), after 12 walks of 3 s each
                // found nothing, and 60 s ended the round before it.
                let least = if stage <= 1 { Duration::ZERO } else { PACKED_WALK };
                let budget = end.map_or(least, |e| least.min(e.saturating_duration_since(Instant::now()))).max(budget);
                // A resumed split's stage-1 walk is the earlier search's again (the same
                // packings, first turn, seed), with no more time: left out (unseen realistic
                // 50/16 s609: the brief search's walk from its 8-node shape's packing found
                // nothing in 0.75 s, the search after the squeeze repeated it, then packed
                // anew in stage 2 and walked to 8 nodes).
                let again =
                    stage == 1 && resumed && memo.walked.get(&key).is_some_and(|&(s, d)| s == seed && d >= budget);
                if stage == 1 && !again {
                    memo.walked.insert(key.clone(), (seed, budget));
                }
                if again {
                    None
                } else {
                    walk_packings(
                        &Question { app, cluster, sub: &sub, nodes: &p.nodes, opts },
                        &packings,
                        first,
                        budget,
                        seed,
                        stop,
                    )
                }
            } else if let Some(ix) = (stage >= 3 && stage % 2 == 1).then(|| p.unpacked(stage as usize / 2)).flatten() {
                // The packing search goes on for an open case without a packing (another
                // seed each time, the cases in turn): unseen realistic 100/32 s26's one open
                // 13-node case needs 9-50 s (8 seeds), more than the split's share.
                let nodes = p.nodes.clone();
                pack_on(&Question { app, cluster, sub: &sub, nodes: &nodes, opts }, &mut p, ix, budget, seed, stop)
            } else if stage % 2 == 1 {
                // From the incumbent, its objects off the shape moved onto it.
                let mut allowed = vec![false; cluster.nodes.len()];
                for n in &p.nodes {
                    allowed[n.ix()] = true;
                }
                let t = Instant::now();
                let mut halt = || stop() || t.elapsed() >= budget;
                walk::onto(cx, &incumbent.0, &incumbent.1, &allowed, seed, &mut halt).map(Ok)
            } else if p.proof.is_empty() && p.cases.is_empty() {
                // No split to prove with (its pass 1 cut short): the
                // feasibility pipeline, whose CSP may refute the shape. A tiny instance's
                // 2-node shape that its stage-0 CSP refutes in milliseconds stayed open for
                // 59 s when a loaded machine cut that CSP short, walks alone in its later
                // stages (and without a time limit, for ever).
                on_nodes(&Question { app, cluster, sub: &sub, nodes: &p.nodes, opts }, budget, seed, false)
            } else {
                walk_on(&Question { app, cluster, sub: &sub, nodes: &p.nodes, opts }, None, budget, seed, stop)
            };
            p.packed_stages += u64::from(!packings.is_empty());
            match answer {
                Some(Ok((m, r))) => {
                    let k = nodes_used(&m);
                    if k < best_k {
                        best_k = k;
                        out.best = Some((m, r, k));
                    }
                }
                Some(Err(())) => {
                    memo.refuted.insert(key);
                    out.stats.refuted += 1;
                }
                None => next.push(p),
            }
        }
        pending = next;
        // From round 2, the squeeze on the whole cluster with each open case's roots on their
        // types (realistic 100/32 s1: 13 nodes in 4.7 s with one case's roots so fixed, where
        // the squeeze without stayed at 14 for 60 s), each with this round's time per shape.
        // At most as much time in all as the shapes got this round (a slice each), the cases
        // in turn from round to round, after the shapes (unseen realistic 100/32 s64: one
        // shape left, whose split goes on in its slices, and four cases that took four slices
        // a round before it, until the time ran out).
        if round >= 2 && out.bound.max(proven(&pending, &later, &listed, best_k)) < best_k {
            let total = slice * shapes.max(1) as u32;
            let t0 = Instant::now();
            for _ in 0..pool.len() {
                let now = Instant::now();
                let left = total.saturating_sub(t0.elapsed());
                if stop() || end.is_some_and(|e| now >= e) || left.is_zero() {
                    break;
                }
                let i = turn % pool.len();
                turn += 1;
                let case = &pool[i];
                let budget = end.map_or(slice, |e| slice.min(e.saturating_duration_since(now))).min(left);
                let seed = opts.build.seed.wrapping_add(round * 1_000 + i as u64);
                let floor = out.bound.max(pending.iter().map(|p| p.size).min().unwrap_or(best_k));
                if let Some((m, r)) = case_squeeze(cx, case, floor, budget, seed, stop) {
                    let k = nodes_used(&m);
                    if k < best_k {
                        best_k = k;
                        out.best = Some((m, r, k));
                    }
                }
            }
        }
        if cluster_on {
            cluster_step(cx, &mut out, best_k, round_start.elapsed(), memo, stop);
        }
        round += 1;
        out.bound = out.bound.max(proven(&pending, &later, &listed, best_k));
        if out.bound >= best_k || stop() || end.is_some_and(|e| Instant::now() >= e) || round >= rounds {
            break;
        }
        slice = (slice * 3).min(MAX_SLICE);
    }
    // (Also when the boxes refuted every shape, and the rounds never ran.)
    out.bound = out.bound.max(proven(&pending, &later, &listed, best_k));
    out.stats.open = open_shapes(&pending, best_k);
    out.stats.unlisted =
        listed.iter().filter(|&(&size, &whole)| !whole && size < best_k).map(|(&size, _)| size).collect();
    out.stats.undecided = pending.iter().filter(|p| p.size < best_k).count()
        + later.iter().filter(|(&size, _)| size < best_k).map(|(_, rest)| rest.len()).sum::<usize>();
    out
}

/// The whole cluster's pattern bound (`bound::cluster_pattern_bound`) for at most `budget`,
/// going on from `memo`'s progress: asked for a bound of `best` (each case's LP stops once
/// over `best` − 1, and the first case at most that gives up, until a better mapping lowers
/// `best`), which proves `best` optimal. Asked for any bound over `out.bound` instead, it
/// took 13.6 s to prove unseen realistic 100/32 s852's 13 while its best mapping had 14
/// (the shapes found 13 and refuted the 12-node shapes in 10 s: 20 -> 34 s).
fn cluster_step(
    cx: greedy::Ctx,
    out: &mut Found,
    best: i64,
    budget: Duration,
    memo: &mut Memo,
    stop: &mut dyn FnMut() -> bool,
) {
    if best != memo.cluster_best {
        memo.cluster.again();
        memo.cluster_best = best;
    }
    if out.bound >= best || memo.cluster.over || budget.is_zero() {
        return;
    }
    let t = Instant::now();
    let budget = budget.min(CLUSTER_CAP);
    let mut halt = Halt { stop, end: t + budget };
    let b = crate::csp::bound::cluster_pattern_bound(
        cx.app,
        cx.cluster,
        cx.an,
        best - 1,
        best - 1,
        budget,
        &mut memo.cluster,
        &mut halt,
    );
    if let Some(b) = b {
        out.stats.cluster_bound = Some(b.min(best));
        out.bound = out.bound.max(b.min(best));
    }
    out.stats.cluster_s += t.elapsed().as_secs_f64();
}

/// The bound the refuted sizes prove: one above every size below the smallest one with an
/// undecided shape (pending, or listed to join later), if listed whole.
fn proven(
    pending: &[Pending],
    later: &BTreeMap<i64, std::vec::IntoIter<Vec<NodeId>>>,
    listed: &BTreeMap<i64, bool>,
    best_k: i64,
) -> i64 {
    let open = pending
        .iter()
        .map(|p| p.size)
        .chain(later.iter().filter(|(_, rest)| !rest.as_slice().is_empty()).map(|(&size, _)| size))
        .filter(|&size| size < best_k)
        .min()
        .unwrap_or(best_k);
    let mut bound = 0;
    for (&size, &whole) in listed {
        if size >= open || !whole {
            break;
        }
        bound = size + 1;
    }
    bound
}

/// The dive: from one below the incumbent's nodes down, the shape with the most CPUs of each
/// size (the first listed) gets walks from fresh constructions on its nodes (`walk_on`, after
/// counting and the LP), a share of the time left (`DIVE_SHARE`, at most `DIVE_SLICE`); each
/// mapping found makes the next size's turn, and the first shape not found ends it (a refuted
/// one leaves `pending`). The round-robin gives every shape the same small slices, fairest
/// for refuting; a mapping on the largest nodes may need more than they give. Unseen realistic
/// 300/64 s7: its cluster's eth-only and ib0-only racks meet only at the display nodes, so a
/// pipeline moves between them whole or not at all; the squeeze stayed at 29 nodes for 600 s,
/// while walks on the 26 largest nodes found a mapping in 4.8 s.
fn dive_top(
    cx: greedy::Ctx,
    opts: &SolveOptions,
    lists: &mut BTreeMap<i64, Vec<Vec<NodeId>>>,
    best: i64,
    end: Option<Instant>,
    certs: &mut Certs,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report, i64)> {
    let greedy::Ctx { app, cluster, .. } = cx;
    let mut found = None;
    let mut best_k = best;
    loop {
        let now = Instant::now();
        if stop() || end.is_some_and(|e| now >= e) {
            break;
        }
        let Some(list) = lists.get_mut(&(best_k - 1)).filter(|l| !l.is_empty()) else { break };
        let budget = end.map_or(DIVE_SLICE, |e| e.saturating_duration_since(now).mul_f64(DIVE_SHARE).min(DIVE_SLICE));
        let nodes = list[0].clone();
        let sub = sub_cluster(cluster, &nodes);
        if refuted(app, &sub, opts, Some(now + budget), certs.of(&nodes)) {
            list.remove(0);
            break;
        }
        let budget = budget.saturating_sub(now.elapsed());
        let q = Question { app, cluster, sub: &sub, nodes: &nodes, opts };
        match walk_on(&q, None, budget, opts.build.seed.wrapping_add(best_k as u64), stop) {
            Some(Ok((m, r))) => {
                let k = nodes_used(&m);
                if k >= best_k {
                    break;
                }
                best_k = k;
                found = Some((m, r, k));
            }
            Some(Err(())) => {
                list.remove(0);
                break;
            }
            None => break,
        }
    }
    found
}

/// Shapes a box holds, at least, for its own LP (fewer are left to their own).
const BOX_LEAST: usize = 3;
/// LPs of boxes after which they must have refuted as many shapes to go on.
const BOX_TRIAL: usize = 24;
/// The share of the time left the boxes get, at most.
const BOX_SHARE: f64 = 0.25;
/// The share of the time left that listing a size by boxes (`list_by_boxes`) gets, at most.
const BNB_SHARE: f64 = 0.5;

/// Which of `shapes` (counts per class, all with `size` nodes) fall in boxes refuted together:
/// a box is the nodes of the most of each class its shapes take (their envelope), and when
/// counting or the class relaxation's LP shows that no sound mapping uses at most `size` of
/// its nodes, none uses a shape's, as each lies in it. A box not refuted splits on the class
/// whose counts differ most, at the middle of their range, down to `BOX_LEAST` shapes; each
/// box costs one LP, about what one shape's costs.
#[allow(clippy::too_many_arguments)]
fn refute_boxes(
    app: &Application,
    cluster: &Cluster,
    opts: &SolveOptions,
    classes: &[Vec<NodeId>],
    shapes: &[Vec<usize>],
    size: i64,
    end: Option<Instant>,
    stop: &mut dyn FnMut() -> bool,
) -> Vec<bool> {
    let mut out = vec![false; shapes.len()];
    let mut todo: Vec<Vec<usize>> = vec![(0..shapes.len()).collect()];
    let (mut lps, mut gone) = (0usize, 0usize);
    while let Some(group) = todo.pop() {
        // Boxes that refute fewer shapes than LPs spent are worse than shapes one by one
        // (unseen realistic 100/32 s34: 502 of 514 12-node shapes refuted in 4.1 s by boxes,
        // but 44 of 637 13-node ones in 8 s, about 90 LPs).
        if stop() || end.is_some_and(|e| Instant::now() >= e) || (lps >= BOX_TRIAL && gone < lps) {
            break;
        }
        if group.len() < BOX_LEAST {
            continue;
        }
        let range = |k: usize| {
            let it = group.iter().map(|&s| shapes[s][k]);
            (it.clone().min().unwrap_or(0), it.max().unwrap_or(0))
        };
        let hi: Vec<usize> = (0..classes.len()).map(|k| range(k).1).collect();
        let nodes: Vec<NodeId> = classes.iter().zip(&hi).flat_map(|(ns, &c)| ns.iter().copied().take(c)).collect();
        lps += 1;
        if at_most_refuted(app, &sub_cluster(cluster, &nodes), opts, size, end) {
            for &s in &group {
                out[s] = true;
            }
            gone += group.len();
            continue;
        }
        let Some((k, lo, top)) = (0..classes.len())
            .map(|k| (k, range(k).0, range(k).1))
            .max_by_key(|&(k, lo, top)| (top - lo, std::cmp::Reverse(k)))
        else {
            continue;
        };
        if top == lo {
            continue;
        }
        let mid = (lo + top) / 2;
        let (a, b): (Vec<usize>, Vec<usize>) = group.iter().partition(|&&s| shapes[s][k] <= mid);
        todo.push(b);
        todo.push(a);
    }
    out
}

/// The shapes of at most `size` nodes that the class relaxation leaves open, found by branch
/// and bound over boxes of node counts rather than by listing every shape (`enumerate`, which
/// gives up past `MAX_LISTED`): a box is per class a range [lo, hi] of the nodes a mapping
/// uses there (lo from `least`; hi at most the class's nodes and `size` less the other
/// classes' lo), refuted when counting or the class LP shows that no sound mapping uses at
/// most `size` nodes of its envelope (every class at its hi; nodes of a class are
/// interchangeable) including the first lo of each class (`bound::box_refutes`). A box not
/// refuted splits on its widest range at the middle, the upper half first; a box of one
/// vector not refuted is left open. Every mapping of at most `size` nodes has its vector of
/// used nodes in a box left open, so these vectors (each with its own number of nodes)
/// stand for every shape of every size up to `size`. None when `end` or `stop` cut it short,
/// or more than `MAX_LISTED` are left open.
/// Measured (alt-gen 300/64, where sizes had thousands of shapes past the list's cap), with
/// the full rows: s1's 9 nodes in 77 LPs (21 s), 2 vectors left open; s3's 16 nodes in 227
/// LPs (30 s), 8 left. With the lean rows (`bound::box_refutes`) s1's took 6.6 s.
#[allow(clippy::too_many_arguments)]
fn list_by_boxes(
    app: &Application,
    cluster: &Cluster,
    opts: &SolveOptions,
    classes: &[Vec<NodeId>],
    least: &[usize],
    size: usize,
    end: Option<Instant>,
    stop: &mut dyn FnMut() -> bool,
) -> Option<Vec<Vec<usize>>> {
    let nk = classes.len();
    let mut open: Vec<Vec<usize>> = Vec::new();
    let mut todo: Vec<(Vec<usize>, Vec<usize>)> = vec![(least.to_vec(), classes.iter().map(|c| c.len()).collect())];
    while let Some((lo, mut hi)) = todo.pop() {
        if stop() || end.is_some_and(|e| Instant::now() >= e) {
            return None;
        }
        let base: usize = lo.iter().sum();
        if base > size {
            continue;
        }
        for k in 0..nk {
            hi[k] = hi[k].min(lo[k] + size - base);
        }
        let nodes: Vec<NodeId> = classes.iter().zip(&hi).flat_map(|(ns, &c)| ns.iter().copied().take(c)).collect();
        let must: Vec<bool> = hi.iter().zip(&lo).flat_map(|(&h, &l)| (0..h).map(move |i| i < l)).collect();
        if box_refuted(app, &sub_cluster(cluster, &nodes), opts, &must, size as i64, end) {
            continue;
        }
        // An LP cut short by the end refutes nothing: not a vector left open.
        if end.is_some_and(|e| Instant::now() >= e) {
            return None;
        }
        let Some(k) = (0..nk).filter(|&k| hi[k] > lo[k]).max_by_key(|&k| (hi[k] - lo[k], std::cmp::Reverse(k))) else {
            open.push(lo);
            if open.len() > MAX_LISTED {
                return None;
            }
            continue;
        };
        let mid = (lo[k] + hi[k]) / 2;
        let mut below = hi.clone();
        below[k] = mid;
        let mut above = lo.clone();
        above[k] = mid + 1;
        todo.push((lo, below));
        todo.push((above, hi));
    }
    Some(open)
}

/// `list_by_boxes` for tests: the node classes (`classes`) and the vectors of node counts per
/// class that the boxes leave open for `size` (None: cut short).
#[doc(hidden)]
pub fn boxes_left_open(
    app: &Application,
    cluster: &Cluster,
    opts: &SolveOptions,
    size: usize,
) -> (Vec<Vec<NodeId>>, Option<Vec<Vec<usize>>>) {
    let mut an = Analysis::new(app, cluster, None);
    an.allocation = opts.perf.allocation;
    let (classes, least, _) = classes(cluster, &an);
    let open = list_by_boxes(app, cluster, opts, &classes, &least, size, None, &mut || false);
    (classes, open)
}

/// `at_most_refuted` for a box whose nodes `must` marks are used (`bound::box_refutes`).
fn box_refuted(
    app: &Application,
    sub: &Cluster,
    opts: &SolveOptions,
    must: &[bool],
    size: i64,
    end: Option<Instant>,
) -> bool {
    let Some((an, budget, mut stop)) = counted(app, sub, opts, end) else { return true };
    let from = super::nodes_lower_bound(app, sub, &an, false);
    from > size || crate::csp::bound::box_refutes(app, sub, &an, must, size, budget, &mut stop)
}

/// Whether counting or the class relaxation's LP (at most `LP_SLICE`) proves that no sound
/// mapping uses at most `size` of `sub`'s nodes.
fn at_most_refuted(app: &Application, sub: &Cluster, opts: &SolveOptions, size: i64, end: Option<Instant>) -> bool {
    let Some((an, budget, mut stop)) = counted(app, sub, opts, end) else { return true };
    let from = super::nodes_lower_bound(app, sub, &an, false);
    from > size
        || crate::csp::bound::class_bound(app, sub, &an, from, budget, true, budget, i64::MAX, &mut stop).nodes > size
}

/// The analysis of `sub`, and an LP's budget (at most `LP_SLICE`, within `end`) with its stop;
/// None when the analysis or counting proves that no sound mapping uses only `sub`'s nodes.
fn counted(
    app: &Application,
    sub: &Cluster,
    opts: &SolveOptions,
    end: Option<Instant>,
) -> Option<(Analysis, Duration, super::Stop)> {
    let mut an = Analysis::new(app, sub, None);
    an.allocation = opts.perf.allocation;
    if !an.problems.is_empty() || !super::counting_refutation(app, sub, &an, None).is_empty() {
        return None;
    }
    let budget = end.map_or(LP_SLICE, |e| LP_SLICE.min(e.saturating_duration_since(Instant::now())));
    let stop = super::Stop {
        budget: Some(pumpkin_solver::core::termination::TimeBudget::starting_now(budget)),
        flag: opts.stop.clone(),
        done: None,
    };
    Some((an, budget, stop))
}

/// The certificates of refuted shapes (`bound::Certificates`) per support: which symmetry
/// classes a shape's nodes come from.
struct Certs {
    class_of: Vec<usize>,
    by_support: BTreeMap<Vec<usize>, crate::csp::bound::Certificates>,
}

impl Certs {
    fn new(cluster: &Cluster, classes: &[Vec<NodeId>]) -> Certs {
        let mut class_of = vec![usize::MAX; cluster.nodes.len()];
        for (k, ns) in classes.iter().enumerate() {
            for n in ns {
                class_of[n.ix()] = k;
            }
        }
        Certs { class_of, by_support: BTreeMap::new() }
    }

    /// A shape's nodes as counts per class.
    fn counts(&self, nodes: &[NodeId], classes: usize) -> Vec<usize> {
        let mut c = vec![0; classes];
        for n in nodes {
            c[self.class_of[n.ix()]] += 1;
        }
        c
    }

    fn of(&mut self, nodes: &[NodeId]) -> &mut crate::csp::bound::Certificates {
        let mut support: Vec<usize> = nodes.iter().map(|n| self.class_of[n.ix()]).collect();
        support.sort_unstable();
        support.dedup();
        self.by_support.entry(support).or_default()
    }
}

/// Symmetry classes of nodes (those some object may use; each ordered by node), per class
/// the fewest nodes every mapping uses there (1 when some object's domain lies in it), and
/// per class the classes that dominate it (`Dominance`).
fn classes(cluster: &Cluster, an: &Analysis) -> (Vec<Vec<NodeId>>, Vec<usize>, Dominance) {
    let n = cluster.nodes.len();
    // Membership signature: which domains hold the node (as a sorted list of object indices).
    let mut member: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (o, d) in an.domain.iter().enumerate() {
        for nd in d {
            member[nd.ix()].push(o as u32);
        }
    }
    type Key<'a> = (u32, &'a str, Vec<u32>, &'a [u32]);
    let mut by_key: BTreeMap<Key, Vec<NodeId>> = BTreeMap::new();
    for (i, node) in cluster.nodes.iter().enumerate() {
        if member[i].is_empty() {
            continue; // no object may use it
        }
        let key =
            (node.cpus, node.processor.as_str(), node.networks.iter().map(|k| k.0).collect(), member[i].as_slice());
        by_key.entry(key).or_default().push(NodeId(i as u32));
    }
    let classes: Vec<Vec<NodeId>> = by_key.into_values().collect();
    let mut class_of = vec![usize::MAX; n];
    for (k, ns) in classes.iter().enumerate() {
        for nd in ns {
            class_of[nd.ix()] = k;
        }
    }
    let mut least = vec![0usize; classes.len()];
    for d in &an.domain {
        if let Some(&first) = d.first() {
            let k = class_of[first.ix()];
            if d.iter().all(|nd| class_of[nd.ix()] == k) {
                least[k] = 1;
            }
        }
    }
    // Class a dominates class b: the same CPUs and processor type, b's networks among a's,
    // and every object whose domain holds b's nodes also may use a's.
    let first = |k: usize| classes[k][0].ix();
    let subset = |x: &[u32], y: &[u32]| x.iter().all(|e| y.binary_search(e).is_ok());
    let over: Dominance = (0..classes.len())
        .map(|b| {
            let nb = cluster.node(classes[b][0]);
            (0..classes.len())
                .filter(|&a| {
                    let na = cluster.node(classes[a][0]);
                    a != b
                        && na.cpus == nb.cpus
                        && na.processor == nb.processor
                        && subset(&nb.networks.iter().map(|k| k.0).collect::<Vec<_>>(), &{
                            let mut v: Vec<u32> = na.networks.iter().map(|k| k.0).collect();
                            v.sort_unstable();
                            v
                        })
                        && subset(&member[first(b)], &member[first(a)])
                })
                .collect()
        })
        .collect();
    (classes, least, over)
}

/// Per node class, the classes that dominate it. A sound mapping that uses a node of class b
/// while a node of a dominating class a is free stays sound with that node's objects moved
/// onto the free one: the same CPUs and costs (so the same allocation), every route's network
/// still reaches it, the same traffic on each network, every object still in its domain. So a
/// shape that uses b beyond its least while a has room holds a sound mapping only if the
/// shape with one b traded for one a does; such shapes are left out (the trades end, as
/// dominance is a strict order: two classes dominating each other would be one class).
type Dominance = Vec<Vec<usize>>;

/// The most steps (vectors of counts extended by one class) the enumeration of one size
/// takes: past it the size's shapes listed so far are searched, and the size is never
/// proven. An independently generated 300/64 instance (`benches/alt-gen`, seed 4: 23 node
/// classes of 1-9 nodes, best 54 nodes, bound 21) walked every vector of counts of each size,
/// nearly all dominated, with nothing listed to stop it: 10 minutes with `--time-limit 10`.
const ENUM_STEPS: u64 = 1 << 22;

/// The shapes with `size` nodes (at least `least`, at most each class's nodes), most CPUs
/// first (then the faster-looking order: classes as listed), at most `MAX_LISTED` + 1; and
/// whether that is all of them (false when more than `MAX_LISTED`, or when `ENUM_STEPS` or
/// `halt` cut the enumeration short). A vector is cut off as soon as the classes given
/// counts leave too few nodes for the rest, or make it dominated (a class over its least
/// while one that dominates it, already counted, has room).
fn enumerate(
    cluster: &Cluster,
    classes: &[Vec<NodeId>],
    least: &[usize],
    over: &Dominance,
    size: usize,
    halt: &mut dyn FnMut() -> bool,
) -> (Vec<Vec<usize>>, bool) {
    let base: usize = least.iter().sum();
    if base > size {
        return (Vec::new(), true);
    }
    // Per class, the classes it dominates.
    let mut under: Vec<Vec<usize>> = vec![Vec::new(); classes.len()];
    for (b, os) in over.iter().enumerate() {
        for &a in os {
            under[a].push(b);
        }
    }
    // Room in the classes from k on.
    let mut room_from = vec![0usize; classes.len() + 1];
    for k in (0..classes.len()).rev() {
        room_from[k] = room_from[k + 1] + classes[k].len() - least[k];
    }
    struct Walk<'a> {
        classes: &'a [Vec<NodeId>],
        least: &'a [usize],
        over: &'a Dominance,
        under: Vec<Vec<usize>>,
        room_from: Vec<usize>,
        cur: Vec<usize>,
        out: Vec<Vec<usize>>,
        steps: u64,
        cut: bool,
    }
    impl Walk<'_> {
        fn rec(&mut self, k: usize, left: usize, halt: &mut dyn FnMut() -> bool) {
            if self.cut || self.out.len() > MAX_LISTED {
                return;
            }
            self.steps += 1;
            if self.steps > ENUM_STEPS || (self.steps.is_multiple_of(4096) && halt()) {
                self.cut = true;
                return;
            }
            if k == self.classes.len() {
                if left == 0 {
                    self.out.push(self.cur.clone());
                }
                return;
            }
            let room = self.classes[k].len() - self.least[k];
            // At least what the classes after k cannot take.
            let lo = left.saturating_sub(self.room_from[k + 1]);
            for extra in (lo..=room.min(left)).rev() {
                let c = self.least[k] + extra;
                // Dominated through a pair of classes both counted by now.
                let full = |a: usize, cur: &[usize]| cur[a] == self.classes[a].len();
                if extra > 0 && self.over[k].iter().any(|&a| a < k && !full(a, &self.cur)) {
                    continue;
                }
                if c < self.classes[k].len() && self.under[k].iter().any(|&b| b < k && self.cur[b] > self.least[b]) {
                    continue;
                }
                self.cur[k] = c;
                self.rec(k + 1, left - extra, halt);
                self.cur[k] = self.least[k];
            }
        }
    }
    let mut w =
        Walk { classes, least, over, under, room_from, cur: least.to_vec(), out: Vec::new(), steps: 0, cut: false };
    w.rec(0, size - base, halt);
    let whole = !w.cut && w.out.len() <= MAX_LISTED;
    let mut out = w.out;
    let cpus = |c: &Vec<usize>| -> u64 {
        classes.iter().zip(c).map(|(ns, &k)| k as u64 * cluster.node(ns[0]).cpus as u64).sum()
    };
    out.sort_by_key(|c| std::cmp::Reverse(cpus(c)));
    out.truncate(MAX_LISTED + 1);
    (out, whole)
}

/// The packing search (`bound::pack`, with the pattern LP's reduced costs) on open case `ix`
/// of shape `p`, within `budget`: a packing is kept and walked from (`walk_on`) with the
/// time left; a refutation drops the case, and the shape with its last case when `p.cases`
/// held every case the split left open (Some(Err)).
fn pack_on(
    q: &Question,
    p: &mut Pending,
    ix: usize,
    budget: Duration,
    seed: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Option<Result<(Mapping, Report), ()>> {
    let Question { app, sub, opts, .. } = *q;
    let end = Instant::now() + budget;
    let (variant, mut an) = p.cases[ix].analyse(app, sub);
    an.allocation = opts.perf.allocation;
    if !an.problems.is_empty() || stop() {
        return None;
    }
    let mut halt = Halt { stop, end };
    let first = crate::csp::bound::PACK_FIRST_RUN;
    // First the packing search with the pattern LP's multipliers (`bound::pack`: the LP, then
    // the search, each within a quarter of the slice; its branch and price over the exact
    // sets, `patterns::exact`, decides a case in its scope either way: unseen realistic 50/16
    // s636's last 6-node case was refuted by it in 0.33 s, after the dive and the local
    // search had spent about 3.7 s of the slice on it; 11.6 -> 8.1 s), then the dive on the pattern LP (half of the time left), then the local
    // search, then the exhaustive one with the time left: on unseen realistic 100/32 s37's
    // four open 16-node cases the local search found packings in 1-2 s where the exhaustive
    // one found none in 3.4 s; on s26's one case, where the pattern LP's optimum is the node
    // count, neither finds one within the slices, and the dive finds one in about 2 s.
    let mut found = crate::csp::bound::pack(&variant, sub, &an, true, first, seed, budget / 4, &mut halt);
    if found == crate::csp::bound::Packing::Unknown {
        let left = end.saturating_duration_since(Instant::now());
        found = crate::csp::bound::pack_dive(&variant, sub, &an, seed, left / 2, &mut halt);
    }
    if found == crate::csp::bound::Packing::Unknown {
        let left = end.saturating_duration_since(Instant::now());
        found = crate::csp::bound::pack_local(&variant, sub, &an, seed, u64::MAX, left / 2, &mut halt);
    }
    if found == crate::csp::bound::Packing::Unknown {
        let left = end.saturating_duration_since(Instant::now());
        found = crate::csp::bound::pack(&variant, sub, &an, true, first, seed, left, &mut halt);
    }
    let stop = halt.stop;
    match found {
        crate::csp::bound::Packing::Found(at) => {
            let at: Packed = an.modules.iter().copied().zip(at).collect();
            let case = p.cases[ix].clone();
            p.packed[ix] = Some(at.clone());
            walk_on(q, Some((&case, &at)), end.saturating_duration_since(Instant::now()), seed, stop)
        }
        crate::csp::bound::Packing::Refuted => {
            p.cases.remove(ix);
            p.packed.remove(ix);
            (p.cases.is_empty() && p.whole).then_some(Err(()))
        }
        crate::csp::bound::Packing::Unknown => None,
    }
}

/// The split's pass 2 on `p`'s open cases where it stopped (`bound::advance`: refinement,
/// the pattern bound from the columns so far, the dive and the packing search), the cases in
/// turn, within `budget`: true when every case is refuted (the shape is). A case refuted
/// leaves the search's cases too.
fn prove_on(
    app: &Application,
    sub: &Cluster,
    opts: &SolveOptions,
    p: &mut Pending,
    budget: Duration,
    stop: &mut dyn FnMut() -> bool,
) -> bool {
    let end = Instant::now() + budget;
    let mut an = Analysis::new(app, sub, None);
    an.allocation = opts.perf.allocation;
    let keep = sub.nodes.len() as i64;
    let mut halt = Halt { stop, end };
    let mut i = 0;
    while i < p.proof.len() && !halt.should_stop() {
        let open = &p.proof[i];
        if open.packed.is_some() || open.progress == Progress::Settled {
            i += 1;
            continue;
        }
        let left = end.saturating_duration_since(Instant::now());
        match crate::csp::bound::advance(app, sub, &an, open, keep, LP_SLICE, left, &mut halt) {
            Step::Refuted(_) => {
                let gone = p.proof.remove(i);
                if let Some(ix) = p.cases.iter().position(|c| *c == gone.case) {
                    p.cases.remove(ix);
                    p.packed.remove(ix);
                }
            }
            Step::Refined(subs, _) => {
                p.proof.splice(i..=i, subs);
            }
            Step::Now(now) => {
                let unchanged = now.progress == open.progress && now.packed.is_none();
                p.proof[i] = now;
                // Cut short: the next call goes on with this case.
                if unchanged || matches!(p.proof[i].progress, Progress::Unsettled { .. }) {
                    break;
                }
                i += 1;
            }
        }
    }
    p.proof.is_empty()
}

/// Case `ix` of `p` refuted: it and its refinements (the cases it prefixes) leave the kept
/// cases and the proof. True when that refutes the shape (the proof held every open case and
/// none is left).
fn refute_case(p: &mut Pending, ix: usize) -> bool {
    let gone = p.cases[ix].clone();
    let had = !p.proof.is_empty();
    let mut i = 0;
    while i < p.cases.len() {
        if p.cases[i].starts_with(&gone) {
            p.cases.remove(i);
            p.packed.remove(i);
        } else {
            i += 1;
        }
    }
    p.proof.retain(|o| !o.case.starts_with(&gone));
    had && p.proof.is_empty()
}

/// The caller's stop, or a deadline, as a termination condition.
struct Halt<'a> {
    stop: &'a mut dyn FnMut() -> bool,
    end: Instant,
}

impl pumpkin_solver::core::termination::TerminationCondition for Halt<'_> {
    fn should_stop(&mut self) -> bool {
        (self.stop)() || Instant::now() >= self.end
    }
}

/// Walks from each of `packs` in turn, from number `first`: an equal share of `budget` each
/// (at least `PACK_TRY`, within the budget), then the rest of the budget from number `first`
/// again.
fn walk_packings(
    q: &Question,
    packs: &[(Case, Packed)],
    first: usize,
    budget: Duration,
    seed: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Option<Result<(Mapping, Report), ()>> {
    let end = Instant::now() + budget;
    for (k, (ix, share)) in packing_turns(packs.len(), first, budget).into_iter().enumerate() {
        let left = end.saturating_duration_since(Instant::now());
        if stop() || left.is_zero() {
            return None;
        }
        let (case, at) = &packs[ix];
        // The last turn (the time left) with `seed` itself.
        let s = if share.is_some() { seed.wrapping_add(k as u64 * 104_729) } else { seed };
        if let Some(found) = walk_on(q, Some((case, at)), share.map_or(left, |d| d.min(left)), s, stop) {
            return Some(found);
        }
    }
    None
}

/// `walk_packings`' turns among `n` packings from number `first`: each packing with its share
/// of `budget` (at least `PACK_TRY`) when there are several, then number `first` with the
/// time left (None).
fn packing_turns(n: usize, first: usize, budget: Duration) -> Vec<(usize, Option<Duration>)> {
    if n == 0 {
        return Vec::new();
    }
    let mut turns = Vec::new();
    if n > 1 {
        let share = (budget / n as u32).max(PACK_TRY);
        turns.extend((0..n).map(|k| ((first + k) % n, Some(share))));
    }
    turns.push((first % n, None));
    turns
}

/// Feasibility on `sub` by walks from fresh constructions (a new strategy and seed each try)
/// within `budget`: Some(Ok) with a mapping sound on the whole cluster, Some(Err) when the
/// analysis refutes `sub`, None when undecided. With `packed`, for the application with the
/// case's roots on their types and with its packing's modules on their nodes
/// (`walk::repair_from`); a mapping sound there is sound here (the same costs where the
/// roots are), which is checked.
fn walk_on(
    q: &Question,
    packed: Option<(&Case, &Packed)>,
    budget: Duration,
    seed: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Option<Result<(Mapping, Report), ()>> {
    let Question { app, cluster, sub, nodes, opts } = *q;
    let end = Instant::now() + budget;
    let (variant, mut an) = match packed {
        Some((case, _)) => case.analyse(app, sub),
        None => (app.clone(), Analysis::new(app, sub, None)),
    };
    an.allocation = opts.perf.allocation;
    if !an.problems.is_empty() {
        // One case refuted is not the shape refuted.
        return packed.is_none().then_some(Err(()));
    }
    let cx = greedy::Ctx {
        app: &variant,
        cluster: sub,
        an: &an,
        fix: None,
        popts: &opts.perf,
        filter_locality: opts.build.filter_locality,
        deadline: Some(end),
    };
    for i in 0usize.. {
        if stop() || Instant::now() >= end {
            break;
        }
        let first = greedy::construct_forced(cx, greedy::STRATEGIES[i % greedy::STRATEGIES.len()]);
        let s = seed.wrapping_mul(31).wrapping_add(i as u64 * 7919);
        let mut halt = || stop() || Instant::now() >= end;
        let found = match packed {
            Some((_, at)) => walk::repair_from(cx, first, at, s, i % 2 == 1, &mut halt),
            None => walk::repair(cx, first, s, usize::MAX, i % 2 == 1, &mut halt),
        };
        if let Some((m, _)) = found {
            let m = back(&m, nodes);
            let rep = verify::check(app, cluster, &m, &opts.perf);
            return (rep.verdict == Verdict::Sound).then_some(Ok((m, rep)));
        }
    }
    None
}

/// A sound mapping of at most `floor`.. nodes, by the squeeze (`walk::stack`, `walk::squeeze`)
/// on the whole cluster for the application with `case`'s roots on their types, from its
/// first sound construction (a brief walk repairs one that is not), within `budget`;
/// checked against the application itself.
fn case_squeeze(
    cx: greedy::Ctx,
    case: &Case,
    floor: i64,
    budget: Duration,
    seed: u64,
    stop: &mut dyn FnMut() -> bool,
) -> Option<(Mapping, Report)> {
    let greedy::Ctx { app, cluster, popts, .. } = cx;
    let end = Instant::now() + budget;
    let (variant, mut van) = case.analyse(app, cluster);
    van.allocation = cx.an.allocation;
    if !van.problems.is_empty() {
        return None;
    }
    let vcx = greedy::Ctx { app: &variant, an: &van, fix: None, deadline: Some(end), ..cx };
    let mut halt = || stop() || Instant::now() >= end;
    let mut start = None;
    for (i, st) in greedy::MIN_STRATEGIES.into_iter().enumerate() {
        if halt() {
            return None;
        }
        if let Some(m) = greedy::construct(vcx, st) {
            let r = verify::check(&variant, cluster, &m, popts);
            if r.verdict == Verdict::Sound {
                start = Some((m, r));
                break;
            }
        }
        let first = greedy::construct_forced(vcx, st);
        if let Some(s) = walk::repair(vcx, first, seed.wrapping_add(i as u64), usize::MAX, false, &mut halt) {
            start = Some(s);
            break;
        }
    }
    let from = walk::stack(vcx, start?, &mut halt);
    let (m, _) = walk::squeeze(vcx, from, floor, seed, None, &mut halt, &mut |_| {});
    let rep = verify::check(app, cluster, &m, popts);
    (rep.verdict == Verdict::Sound).then_some((m, rep))
}

/// One shape's question: feasibility on `sub`, the cluster of only `nodes` of `cluster`.
#[derive(Clone, Copy)]
struct Question<'a> {
    app: &'a Application,
    cluster: &'a Cluster,
    sub: &'a Cluster,
    nodes: &'a [NodeId],
    opts: &'a SolveOptions,
}

/// A mapping on the cluster of only `nodes`, on the whole cluster.
fn back(m: &Mapping, nodes: &[NodeId]) -> Mapping {
    Mapping {
        placement: m.placement.iter().map(|p| Placement { node: nodes[p.node.ix()], cpu: p.cpu }).collect(),
        routes: m.routes.clone(),
    }
}

/// A cluster of only `nodes` (names, CPUs, networks as in `cluster`).
fn sub_cluster(cluster: &Cluster, nodes: &[NodeId]) -> Cluster {
    Cluster {
        name: cluster.name.clone(),
        nodes: nodes.iter().map(|&n| cluster.node(n).clone()).collect(),
        networks: cluster.networks.clone(),
    }
}

/// Whether counting or the class relaxation's LP (at most 1 s; `certs` first, see
/// `bound::refutes`) proves `sub` infeasible. Not the node-by-node LP (`bound::node_bound`):
/// here it refuted none of the 864 shapes the class LP left open in 62 realistic 100/32 runs
/// (unseen and committed, each 15-59 s to its proof; none either on u72, u39, u159, u180,
/// u217) and took 0.1 s each, 87 s in all; nor does the split any more (twenty-fifth
/// session: per case it refuted none the class LP had left open in 137 splits).
fn refuted(
    app: &Application,
    sub: &Cluster,
    opts: &SolveOptions,
    end: Option<Instant>,
    certs: &mut crate::csp::bound::Certificates,
) -> bool {
    let Some((an, budget, mut stop)) = counted(app, sub, opts, end) else { return true };
    let n = sub.nodes.len() as i64;
    super::nodes_lower_bound(app, sub, &an, false) > n
        || crate::csp::bound::refutes(app, sub, &an, budget, certs, &mut stop)
}

/// The relaxations split on the pace roots' processor types (`bound::split_bound`, asked
/// for feasibility on all of `sub`'s nodes, its pass 2 at most `PASS2_SLICE` and until
/// `PASS2_ENOUGH` cases are open) on `sub`: Err
/// when it refutes every case, else the first `ALIVE_KEPT` cases it leaves open (none when
/// there is nothing to split or `end` comes), whether those are all it leaves open, and
/// every case it leaves open (for `prove_on`).
#[allow(clippy::type_complexity)]
fn split_cases(
    app: &Application,
    sub: &Cluster,
    opts: &SolveOptions,
    end: Instant,
) -> Result<(Vec<Case>, Vec<Option<Packed>>, bool, Vec<Open>), ()> {
    let mut an = Analysis::new(app, sub, None);
    an.allocation = opts.perf.allocation;
    if !an.problems.is_empty() {
        return Err(());
    }
    let mut stop = super::Stop {
        budget: Some(pumpkin_solver::core::termination::TimeBudget::starting_now(
            end.saturating_duration_since(Instant::now()),
        )),
        flag: opts.stop.clone(),
        done: None,
    };
    let n = sub.nodes.len() as i64;
    match crate::csp::bound::split_bound(app, sub, &an, n, PASS2_ENOUGH, LP_SLICE, Some(PASS2_SLICE), &mut stop) {
        Some(s) if s.alive.is_empty() => Err(()),
        Some(s) => {
            // Those with a packing come first.
            let whole = s.alive.len() <= ALIVE_KEPT;
            let (cases, packed) = s.alive.iter().take(ALIVE_KEPT).map(|o| (o.case.clone(), o.packed.clone())).unzip();
            Ok((cases, packed, whole, s.alive))
        }
        None => Ok((Vec::new(), Vec::new(), false, Vec::new())),
    }
}

/// Feasibility on `sub` (the cluster of only `nodes`): Some(Ok) with a mapping sound on the
/// whole cluster, Some(Err) when none exists there, None when undecided within `budget`.
/// With `csp_only`, no constructions, walks or LNS: the CSP has all of `budget`.
fn on_nodes(q: &Question, budget: Duration, seed: u64, csp_only: bool) -> Option<Result<(Mapping, Report), ()>> {
    let Question { app, cluster, sub, nodes, opts } = *q;
    let sub_opts = SolveOptions {
        warm_start: opts.warm_start && !csp_only,
        lns: opts.lns && !csp_only,
        time_limit: Some(budget),
        minimize: None,
        progress: None,
        jobs: 1,
        leak_model: false,
        build: crate::csp::BuildOptions { seed, ..opts.build.clone() },
        ..opts.clone()
    };
    let r: Outcome = super::solve(app, sub, None, &sub_opts);
    match (r.status, r.mapping) {
        (Status::Feasible, Some(m)) => {
            let m = back(&m, nodes);
            let rep = verify::check(app, cluster, &m, &opts.perf);
            (rep.verdict == Verdict::Sound).then_some(Ok((m, rep)))
        }
        (Status::Infeasible, _) => Some(Err(())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csp::bound::Open;
    use crate::model::{ModuleCosts, ObjectId, PerType};

    /// A case putting root `o` on a type with T_exec `t` (only its identity matters here).
    fn case(o: usize, t: f64) -> Case {
        let costs = vec![(ObjectId::new(o), ModuleCosts { texec: PerType::Uniform(t), load: PerType::Uniform(1.0) })];
        Case { costs, routes: Vec::new() }
    }

    fn packing(n: u32) -> Packed {
        vec![(ObjectId::new(0), NodeId(n)), (ObjectId::new(1), NodeId(n + 1))]
    }

    fn open(c: Case, packed: Option<Packed>) -> Open {
        Open { case: c, packed, bound: 3, progress: Progress::Settled }
    }

    #[test]
    fn refuting_a_case_drops_its_refinements_and_the_last_refutes_the_shape() {
        let mut p = Pending::new(3, vec![NodeId(0), NodeId(1), NodeId(2)], 0);
        // Kept: c0 (packed) and c1; the proof: c0's refinement on a second root, c1 and c2.
        let c0 = case(0, 1.0);
        let mut c0r = c0.clone();
        c0r.extend(case(3, 2.0));
        p.cases = vec![c0.clone(), case(1, 2.0)];
        p.packed = vec![Some(packing(0)), None];
        p.proof = vec![open(c0r, None), open(case(1, 2.0), None), open(case(2, 3.0), None)];
        assert!(!refute_case(&mut p, 0));
        assert_eq!(p.cases, vec![case(1, 2.0)]);
        assert_eq!(p.packed, vec![None]);
        assert_eq!(p.proof.iter().map(|o| o.case.clone()).collect::<Vec<_>>(), vec![case(1, 2.0), case(2, 3.0)]);
        // c2 is open in the proof but not kept: refuting c1 leaves the shape open.
        assert!(!refute_case(&mut p, 0));
        assert!(p.cases.is_empty());
        assert_eq!(p.proof.len(), 1);
        // Without a proof (the split cut short), a case refuted never refutes the shape.
        let mut q = Pending::new(2, vec![NodeId(0), NodeId(1)], 0);
        q.cases = vec![case(0, 1.0)];
        q.packed = vec![None];
        assert!(!refute_case(&mut q, 0));
        // The last case of a proof refutes it.
        let mut r = Pending::new(2, vec![NodeId(0), NodeId(1)], 0);
        r.cases = vec![case(0, 1.0)];
        r.packed = vec![None];
        r.proof = vec![open(case(0, 1.0), None)];
        assert!(refute_case(&mut r, 0));
    }

    #[test]
    fn every_packing_gets_a_share_before_the_one_whose_turn_it_is_gets_the_rest() {
        let ms = Duration::from_millis;
        // Four packings, turn 5 (packing 1): 1, 2, 3, 0 with a quarter of 2 s each, then 1.
        let turns = packing_turns(4, 5, ms(2_000));
        assert_eq!(
            turns,
            vec![(1, Some(ms(500))), (2, Some(ms(500))), (3, Some(ms(500))), (0, Some(ms(500))), (1, None)]
        );
        // A short budget: each share at least 0.25 s (the walk's time left cuts the later ones).
        assert_eq!(packing_turns(3, 0, ms(300))[..3], [(0, Some(ms(250))), (1, Some(ms(250))), (2, Some(ms(250)))]);
        // One packing: all the time to it; none: no turn.
        assert_eq!(packing_turns(1, 7, ms(300)), vec![(0, None)]);
        assert!(packing_turns(0, 0, ms(300)).is_empty());
    }

    #[test]
    fn unpacked_takes_the_kept_cases_without_a_packing_in_turn() {
        let mut p = Pending::new(3, vec![NodeId(0), NodeId(1), NodeId(2)], 0);
        assert_eq!(p.unpacked(0), None);
        // Kept: c0 packed, c1 and c2 not, c3 packed: turns 0, 1, 2, 3 give c1, c2, c1, c2.
        p.cases = vec![case(0, 1.0), case(1, 2.0), case(2, 3.0), case(3, 4.0)];
        p.packed = vec![Some(packing(0)), None, None, Some(packing(1))];
        assert_eq!((0..4).map(|t| p.unpacked(t)).collect::<Vec<_>>(), vec![Some(1), Some(2), Some(1), Some(2)]);
        // Every kept case packed: none.
        p.packed[1] = Some(packing(2));
        p.packed[2] = Some(packing(3));
        assert_eq!(p.unpacked(5), None);
    }

    #[test]
    fn open_shapes_say_where_each_proof_stands() {
        // A shape whose split ran to its end: c0 packed (kept), c1 packed by `prove_on`,
        // c2 settled, c3 cut short, c4 not reached.
        let mut p = Pending::new(4, vec![NodeId(0); 4], 0);
        p.cases = vec![case(0, 1.0)];
        p.packed = vec![Some(packing(0))];
        let mut c3 = open(case(3, 4.0), None);
        c3.progress = Progress::Unsettled { cols: Default::default(), tries: 1 };
        let mut c4 = open(case(4, 5.0), None);
        c4.progress = Progress::Fresh;
        p.proof =
            vec![open(case(0, 1.0), None), open(case(1, 2.0), Some(packing(1))), open(case(2, 3.0), None), c3, c4];
        // One whose split was cut short: two kept cases, one packed.
        let mut q = Pending::new(3, vec![NodeId(0); 3], 0);
        q.cases = vec![case(0, 1.0), case(1, 2.0)];
        q.packed = vec![None, Some(packing(0))];
        // One at the best size: not listed.
        let r = Pending::new(5, vec![NodeId(0); 5], 0);
        let got = open_shapes(&[p, q, r], 5);
        assert_eq!(
            got,
            vec![
                OpenShape { size: 3, split: false, cases: 2, packed: 1, settled: 0, unsettled: 0, fresh: 1 },
                OpenShape { size: 4, split: true, cases: 5, packed: 2, settled: 1, unsettled: 1, fresh: 1 },
            ]
        );
    }

    #[test]
    fn packings_lists_each_packed_case_once_kept_ones_first() {
        let mut p = Pending::new(3, vec![NodeId(0), NodeId(1), NodeId(2)], 0);
        assert!(p.packings().is_empty());
        // Kept cases: c0 without a packing, c1 with one; the proof holds c1 again (packed
        // by the split, the same packing), c2 packed later by `prove_on`, and c0 still open.
        p.cases = vec![case(0, 1.0), case(1, 2.0)];
        p.packed = vec![None, Some(packing(0))];
        p.proof =
            vec![open(case(1, 2.0), Some(packing(0))), open(case(2, 3.0), Some(packing(1))), open(case(0, 1.0), None)];
        let got = p.packings();
        assert_eq!(got, vec![(case(1, 2.0), packing(0)), (case(2, 3.0), packing(1))]);
        // The same root on another type is another case.
        p.proof.push(open(case(2, 4.0), Some(packing(2))));
        assert_eq!(p.packings().len(), 3);
    }

    /// A cluster whose class k has `sizes[k]` nodes of k + 1 CPUs each (the CPUs only order
    /// the shapes), and those classes.
    fn classed(sizes: &[usize]) -> (Cluster, Vec<Vec<NodeId>>) {
        let mut nodes = Vec::new();
        let mut classes = Vec::new();
        for (k, &n) in sizes.iter().enumerate() {
            let mut ids = Vec::new();
            for i in 0..n {
                ids.push(NodeId(nodes.len() as u32));
                nodes.push(crate::model::Node {
                    name: format!("c{k}n{i}"),
                    cpus: k as u32 + 1,
                    processor: "p".into(),
                    networks: Vec::new(),
                });
            }
            classes.push(ids);
        }
        (Cluster { name: "t".into(), nodes, networks: Vec::new() }, classes)
    }

    #[test]
    fn enumerate_lists_what_the_definition_lists() {
        // Brute force over every vector of counts, dominance as `Dominance` defines it,
        // against the enumeration's pruned walk, on 400 seeded random class structures.
        let mut x: u64 = 12345;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..400 {
            let k = 1 + rnd(6) as usize;
            let sizes: Vec<usize> = (0..k).map(|_| 1 + rnd(4) as usize).collect();
            let least: Vec<usize> = (0..k).map(|_| rnd(3) as usize / 2).collect();
            let over: Dominance = (0..k).map(|b| (0..k).filter(|&a| a != b && rnd(4) == 0).collect()).collect();
            let (cluster, classes) = classed(&sizes);
            for size in 0..=sizes.iter().sum::<usize>() + 1 {
                let mut want = Vec::new();
                let mut c = vec![0usize; k];
                'all: loop {
                    let ok = c.iter().zip(&least).all(|(a, b)| a >= b)
                        && c.iter().sum::<usize>() == size
                        && !(0..k).any(|b| c[b] > least[b] && over[b].iter().any(|&a| c[a] < sizes[a]));
                    if ok {
                        want.push(c.clone());
                    }
                    for i in 0..k {
                        if c[i] < sizes[i] {
                            c[i] += 1;
                            continue 'all;
                        }
                        c[i] = 0;
                    }
                    break;
                }
                let (mut got, whole) = enumerate(&cluster, &classes, &least, &over, size, &mut || false);
                assert!(whole);
                want.sort();
                got.sort();
                assert_eq!(got, want, "sizes {sizes:?} least {least:?} over {over:?} size {size}");
            }
        }
    }

    #[test]
    fn enumerate_stops_at_its_step_cap_and_when_told() {
        // 30 classes of 9 nodes, each but the last dominated by the last: of the vectors of 8
        // nodes only (0, .., 0, 8) is undominated, but that is known only at the last class,
        // after the C(37, 8) = 38.6 million ways to spread up to 8 nodes over the others
        // (more than `ENUM_STEPS`).
        let sizes = vec![9usize; 30];
        let (cluster, classes) = classed(&sizes);
        let least = vec![0usize; 30];
        let over: Dominance = (0..30).map(|b| if b < 29 { vec![29] } else { Vec::new() }).collect();
        let (_, whole) = enumerate(&cluster, &classes, &least, &over, 8, &mut || false);
        assert!(!whole);
        // Five nodes: C(34, 5) = 278,256 ways, within the cap: the one shape, whole.
        let (got, whole) = enumerate(&cluster, &classes, &least, &over, 5, &mut || false);
        assert!(whole);
        let mut one = vec![0usize; 30];
        one[29] = 5;
        assert_eq!(got, vec![one]);
        // Told to stop: cut at the first check.
        let (_, whole) = enumerate(&cluster, &classes, &least, &over, 5, &mut || true);
        assert!(!whole);
    }
}
