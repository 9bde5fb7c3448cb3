//! Mutation fuzzing of the three parsers and of the command line (issue 12): valid bundled
//! inputs are edited (bytes spliced or deleted, lines duplicated, swapped or dropped, numbers and
//! strings replaced by awkward values, known-dangerous snippets inserted: huge ranges and
//! instance counts, `extends = "/dev/zero"`, deep nesting, long expressions...) and run.
//!
//! Every run must end with exit 0, 1, 2 or 3 and no panic, abort or hang. In `cargo test` the
//! runs are few (a few seconds); a longer run, with a summary of exit codes and times:
//!
//! ```sh
//! FLOWMAP_FUZZ_CASES=10000 cargo test --release --test integration fuzz:: -- --nocapture
//! ```
//!
//! (`FLOWMAP_FUZZ_SEED=N` varies the cases.) With FLOWMAP_FUZZ_CASES set, a run over 5 s also
//! fails the test.

use crate::support::root;
use flowmap::parse;
use flowmap::perf::Options;
use flowmap::verify;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Cases per test, unless FLOWMAP_FUZZ_CASES says otherwise.
const LIB_CASES: u32 = 1000;
const CLI_CASES: u32 = 16;
/// A run slower than this fails the long run (FLOWMAP_FUZZ_CASES set).
const SLOW: Duration = Duration::from_secs(5);
/// A run still going after this is killed and counted as a hang (in every mode).
const WATCHDOG: Duration = Duration::from_secs(60);

fn cases(default: u32) -> u32 {
    std::env::var("FLOWMAP_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn runner(cases: u32) -> TestRunner {
    let seed = std::env::var("FLOWMAP_FUZZ_SEED").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(12);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let config = Config { cases, failure_persistence: None, max_shrink_iters: 50, ..Config::default() };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}

/// Seed inputs: application, cluster (with the files it extends), mapping.
const SEEDS: [(&str, &[&str], &str); 5] = [
    ("models/fluid-particle.toml", &["clusters/lifo-2007.toml"], "models/mappings/fluid-particle-table6.toml"),
    ("models/sync-cycle.toml", &["clusters/lifo-2007.toml"], "models/mappings/sync-cycle-3nodes.toml"),
    ("tests/bad-inputs/base/app.toml", &["tests/bad-inputs/base/cluster.toml"], "tests/bad-inputs/base/mapping.toml"),
    (
        "models/generated/gen-50x16-feasible-s1.toml",
        &["clusters/generated/gen-50x16-feasible-s1.toml"],
        "models/generated/mappings/gen-50x16-feasible-s1.toml",
    ),
    (
        "models/fluid-particle.toml",
        &["clusters/lifo-2007-myrinet-common.toml", "clusters/lifo-2007.toml"],
        "models/mappings/fluid-particle-table6.toml",
    ),
];

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e300",
    "-1e300",
    "nan",
    "inf",
    "1e-300",
    "4294967296",
    "18446744073709551616",
    "10000",
    "10001",
    "1000000",
    "0.5",
    "3",
    "2",
    "7",
    "64",
    "999",
    "250000",
    "0.01",
    "0.99",
];

const WORDS: &[&str] = &[
    "",
    "n1..n100000",
    "node01..node99999",
    "a[999]",
    "fluid[",
    "1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1 ms",
    "1e308 * 1e308 ms",
    "particles^particles ms",
    "sqrt(-1) ms",
    "0 ms",
    "1 Gbps",
    "97 %",
    "all-to-all",
    "ring",
    "greedy",
    "gather",
    "ü",
    "node01",
    "epyc",
    "Xeon",
    "xeon",
    "opteron",
    "node05",
    "node11..node18",
    "gige",
    "myrinet",
    "500 MB/s",
    "1 ms",
    "100 Hz",
];

const SNIPPETS: &[&str] = &[
    "instances = 10000\n",
    "instances = 100000\n",
    "names = \"n1..n100000\"\n",
    "allowed_nodes = [\"node01..node99\", \"b6\"]\n",
    "pin = [\"node99\"]\n",
    "texec = { xeon = \"1 ms\", epic = \"2 ms\" }\n",
    "mpi = { pattern = \"all-to-all\", volume = \"1 B\" }\n",
    "mpi = { pattern = \"ring\", volume = \"1 B\" }\n",
    "pattern = \"all-to-all\"\n",
    "extends = \"/dev/zero\"\n",
    "extends = \".\"\n",
    "extends = \"lifo-2007.toml\"\n",
    "[[modules]]\nname = \"z\"\ninstances = 5000\ntexec = \"1 ms\"\nload = 0.5\n",
    "[[filters]]\nname = \"f\"\nkind = \"gather\"\nratio = 1000000\n",
    "[[connections]]\nfrom = \"fluid\"\nto = \"fluid\"\nvolume = \"1 B\"\n",
    "[[connections]]\nfrom = \"particles\"\nto = \"viewer\"\npattern = \"all-to-all\"\nvolume = \"1 B\"\n",
    "[[requirements]]\npath = [\"fluid[0]\", \"fluid[1]\"]\nmax_latency = \"1 ms\"\n",
    "volume = \"((((((((((((((((((((1)))))))))))))))))))) B\"\n",
    "bandwidth = \"1 Gbps\"\n",
    "cpus = 100000\n",
    "[[nodes]]\nnames = \"x1..x9000\"\ncpus = 64\nprocessor = \"xeon\"\nnetworks = [\"gige\"]\n",
    "[[route]]\nconnection = \"fluid.mpi\"\nnetwork = \"gige\"\nfrom = \"fluid[0]\"\n",
    "\"viewer[2]\" = { node = \"node07\", cpu = 9 }\n",
    "x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
    "[place]\n",
    "laod = 0.5\n",
];

/// One edit; positions are taken modulo the text's size.
#[derive(Clone, Debug)]
enum Edit {
    Splice { at: usize, len: usize, text: String },
    DuplicateLine { from: usize, to: usize },
    SwapLines { a: usize, b: usize },
    DropLine { at: usize },
    Number { nth: usize, value: usize },
    Word { nth: usize, value: usize },
    Snippet { line: usize, value: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    let n = 0usize..100_000;
    // Weighted towards edits that keep the file readable, so that later stages are reached too.
    prop_oneof![
        1 => (n.clone(), 0usize..16, "[ -~\n]{0,12}").prop_map(|(at, len, text)| Edit::Splice { at, len, text }),
        1 => (n.clone(), n.clone()).prop_map(|(from, to)| Edit::DuplicateLine { from, to }),
        1 => (n.clone(), n.clone()).prop_map(|(a, b)| Edit::SwapLines { a, b }),
        1 => n.clone().prop_map(|at| Edit::DropLine { at }),
        3 => (n.clone(), 0..NUMBERS.len()).prop_map(|(nth, value)| Edit::Number { nth, value }),
        3 => (n.clone(), 0..WORDS.len()).prop_map(|(nth, value)| Edit::Word { nth, value }),
        2 => (n, 0..SNIPPETS.len()).prop_map(|(line, value)| Edit::Snippet { line, value }),
    ]
}

/// Byte ranges of the runs of `pick` characters (numbers) or of quoted strings' contents.
fn tokens(s: &str, number: bool) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if number && b[i].is_ascii_digit() {
            let j = i + b[i..].iter().take_while(|c| c.is_ascii_digit() || **c == b'.').count();
            out.push((i, j));
            i = j;
        } else if !number && b[i] == b'"' {
            match b[i + 1..].iter().position(|&c| c == b'"' || c == b'\n') {
                Some(k) if b[i + 1 + k] == b'"' => {
                    out.push((i + 1, i + 1 + k));
                    i += k + 2;
                }
                _ => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

fn apply(s: &str, e: &Edit) -> String {
    let mut lines: Vec<String> = s.split_inclusive('\n').map(str::to_string).collect();
    match e {
        Edit::Splice { at, len, text } => {
            let mut chars: Vec<char> = s.chars().collect();
            let p = at % (chars.len() + 1);
            let end = (p + len).min(chars.len());
            chars.splice(p..end, text.chars());
            return chars.into_iter().collect();
        }
        Edit::Number { nth, value } | Edit::Word { nth, value } => {
            let (number, dict) = if matches!(e, Edit::Number { .. }) { (true, NUMBERS) } else { (false, WORDS) };
            let t = tokens(s, number);
            if t.is_empty() {
                return s.to_string();
            }
            let (a, b) = t[nth % t.len()];
            return format!("{}{}{}", &s[..a], dict[*value], &s[b..]);
        }
        _ if lines.is_empty() => return s.to_string(),
        Edit::DuplicateLine { from, to } => {
            let l = lines[from % lines.len()].clone();
            lines.insert(to % (lines.len() + 1), l);
        }
        Edit::SwapLines { a, b } => {
            let n = lines.len();
            lines.swap(a % n, b % n);
        }
        Edit::DropLine { at } => {
            let n = lines.len();
            lines.remove(at % n);
        }
        Edit::Snippet { line, value } => lines.insert(line % (lines.len() + 1), SNIPPETS[*value].to_string()),
    }
    lines.concat()
}

/// A mutated input set: which seed, which file (0 app, 1 cluster, 2 mapping), which edits.
#[derive(Clone, Debug)]
struct Case {
    seed: usize,
    file: usize,
    edits: Vec<Edit>,
    /// A second file edited too, sometimes.
    also: Option<(usize, Vec<Edit>)>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        0..SEEDS.len(),
        0usize..3,
        prop::collection::vec(edit(), 1..3),
        prop::option::weighted(0.2, (0usize..3, prop::collection::vec(edit(), 1..3))),
    )
        .prop_map(|(seed, file, edits, also)| Case { seed, file, edits, also })
}

fn read(p: &str) -> String {
    std::fs::read_to_string(root().join(p)).unwrap()
}

/// The seed's texts with the case's edits: app, cluster files (first is the one passed), mapping.
fn texts(c: &Case) -> (String, Vec<String>, String) {
    let (a, cl, m) = SEEDS[c.seed];
    let (mut app, mut clusters, mut map) = (read(a), cl.iter().map(|p| read(p)).collect::<Vec<_>>(), read(m));
    let mut run = |file: usize, edits: &[Edit]| {
        let t = match file {
            0 => &mut app,
            1 => &mut clusters[0],
            _ => &mut map,
        };
        for e in edits {
            *t = apply(t, e);
        }
    };
    run(c.file, &c.edits);
    if let Some((f, e)) = &c.also {
        run(*f, e);
    }
    (app, clusters, map)
}

#[test]
fn parsers_survive_mutations() {
    // In process: every parser, the cross-check with the cluster, and the verifier on any mapping
    // that reads. A panic fails the test (and proptest shrinks the edits).
    let r = runner(cases(LIB_CASES)).run(&case(), |c| {
        let (app, clusters, map) = texts(&c);
        let cluster = parse::cluster_from_str(&clusters[0], "cluster.toml");
        let plain = parse::application_from_str(&app, "app.toml", &[]);
        let (Ok(cluster), Ok(_)) = (cluster, plain) else {
            return Ok(());
        };
        let Ok((app, _warnings)) = parse::application_for_cluster(&app, "app.toml", &[], &cluster) else {
            return Ok(());
        };
        if let Ok(m) = parse::mapping_from_str(&map, "mapping.toml", &app, &cluster)
            .and_then(|p| p.complete(&app, &cluster, "mapping.toml"))
        {
            let _ = verify::check(&app, &cluster, &m, &Options::default());
        }
        Ok(())
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}

/// What the command-line runs did.
#[derive(Default, Debug)]
struct Stats {
    runs: usize,
    by_exit: std::collections::BTreeMap<String, usize>,
    slow: Vec<(f64, String)>,
    max_s: f64,
}

/// Runs flowmap with a watchdog; (exit code or signal, stderr, seconds).
fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, f64) {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowmap"))
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut s);
        s
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let secs = t.elapsed().as_secs_f64();
    let stderr = reader.join().unwrap_or_default();
    (status.and_then(|s| s.code()), stderr, secs)
}

#[test]
fn cli_survives_mutations() {
    let long = std::env::var("FLOWMAP_FUZZ_CASES").is_ok();
    let dir: PathBuf = std::env::temp_dir().join(format!("flowmap-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stats = Mutex::new(Stats::default());
    let r = runner(cases(CLI_CASES)).run(&case(), |c| {
        let (app, clusters, map) = texts(&c);
        std::fs::write(dir.join("app.toml"), &app).unwrap();
        std::fs::write(dir.join("mapping.toml"), &map).unwrap();
        for (text, name) in clusters.iter().zip(SEEDS[c.seed].1) {
            std::fs::write(dir.join(Path::new(name).file_name().unwrap()), text).unwrap();
        }
        let cluster = Path::new(SEEDS[c.seed].1[0]).file_name().unwrap().to_str().unwrap().to_string();
        let commands: [Vec<&str>; 4] = [
            vec!["check", "app.toml", &cluster, "mapping.toml", "--format", "json"],
            vec!["solve", "app.toml", &cluster, "--time-limit", "1"],
            vec!["solve", "app.toml", &cluster, "--time-limit", "1", "--fix", "mapping.toml", "--format", "json"],
            vec!["solve", "app.toml", &cluster, "--time-limit", "1", "--minimize", "nodes", "--out", "out.toml"],
        ];
        for args in &commands {
            let (code, stderr, secs) = run(&dir, args);
            let mut s = stats.lock().unwrap();
            s.runs += 1;
            s.max_s = s.max_s.max(secs);
            let key = match code {
                Some(k) => format!("exit {k}"),
                None if secs > WATCHDOG.as_secs_f64() => "hang".into(),
                None => "signal".into(),
            };
            *s.by_exit.entry(key.clone()).or_default() += 1;
            if secs > SLOW.as_secs_f64() {
                s.slow.push((secs, format!("{args:?} on {c:?}")));
            }
            drop(s);
            let ok = matches!(code, Some(0..=3)) && !stderr.contains("panicked");
            prop_assert!(ok, "{key} after {secs:.1} s: {args:?}\n{stderr}");
            prop_assert!(!long || secs <= SLOW.as_secs_f64(), "{secs:.1} s: {args:?}");
        }
        Ok(())
    });
    let s = stats.into_inner().unwrap();
    println!(
        "fuzz: {} runs, {:?}, slowest {:.2} s, over {} s: {}",
        s.runs,
        s.by_exit,
        s.max_s,
        SLOW.as_secs(),
        s.slow.len()
    );
    for (t, what) in &s.slow {
        println!("  slow {t:.1} s: {what}");
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = r {
        panic!("{e}");
    }
}
