//! The command line's edges: output that cannot be written, `--out` files, bad input as JSON,
//! warnings, and the arguments every subcommand validates alike (issue 12).

use crate::support::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn flowmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowmap")).current_dir(root()).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const APP: &str = "tests/bad-inputs/base/app.toml";
const CLUSTER: &str = "tests/bad-inputs/base/cluster.toml";
const MAPPING: &str = "tests/bad-inputs/base/mapping.toml";

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("flowmap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // `flowmap check ... | head -c 0`: the reader is gone before anything is written. The base
    // mapping is sound (a 10 ms -> b 5 ms on two nodes), so the exit code stays 0.
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowmap"))
        .current_dir(root())
        .args(["check", "models/fluid-particle.toml", "clusters/lifo-2007.toml"])
        .arg("models/mappings/fluid-particle-table6.toml")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

#[test]
fn a_full_disk_is_an_io_error_with_its_own_exit_code() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_flowmap"))
        .current_dir(root())
        .args(["check", APP, CLUSTER, MAPPING])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot write the output: No space left on device"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn out_writes_a_mapping_check_accepts_and_leaves_no_temporary_file() {
    let d = scratch("out");
    let out = d.join("m.toml");
    std::fs::write(&out, "stale").unwrap();
    let o = flowmap(&["solve", APP, CLUSTER, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = flowmap(&["check", APP, CLUSTER, out.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(0), "{}", stderr(&c));
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 1);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn out_is_refused_before_solving_when_it_would_destroy_something() {
    let d = scratch("out-refused");
    let app = d.join("app.toml");
    std::fs::copy(root().join(APP), &app).unwrap();
    let before = std::fs::read(&app).unwrap();
    let cases: [(&Path, &str); 4] = [
        (&app, "is the input file"),
        (&d, "is not a regular file"),
        (Path::new("/dev/full"), "is not a regular file"),
        (&d.join("no/such/dir/m.toml"), "does not exist"),
    ];
    for (out, why) in cases {
        let o = flowmap(&["solve", app.to_str().unwrap(), CLUSTER, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{out:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{out:?}: refused before solving");
    }
    assert_eq!(std::fs::read(&app).unwrap(), before);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_out_file_that_cannot_be_written_is_exit_4_not_bad_input() {
    // /proc takes no new files, even from root: the search succeeded and printed its mapping,
    // the file could not be written.
    let o = flowmap(&["solve", APP, CLUSTER, "--out", "/proc/flowmap-out-test.toml"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("Status: feasible"));
    assert!(stderr(&o).contains("cannot write /proc/flowmap-out-test.toml"), "{}", stderr(&o));
}

#[test]
fn bad_input_with_format_json_is_a_json_error_object() {
    // Two independent mistakes in one file (tests/bad-inputs/load-above-one): both, with lines.
    let o = flowmap(&["check", "tests/bad-inputs/load-above-one/app.toml", CLUSTER, MAPPING, "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "error");
    let e = v["errors"].as_array().unwrap();
    assert_eq!(e.len(), 2);
    assert_eq!(e[0]["file"], "tests/bad-inputs/load-above-one/app.toml");
    assert_eq!(e[0]["line"], 4);
    assert_eq!(e[0]["item"], "module a");
    assert!(e[0]["message"].as_str().unwrap().contains("0 < LD <= 1"));
    // A bad argument, a bad --param and bad input in solve and limit: the same object.
    for args in [
        &["solve", APP, CLUSTER, "--time-limit", "nan", "--format", "json"][..],
        &["limit", APP, CLUSTER, "--param", "nope", "--format", "json"][..],
        &["solve", "tests/bad-inputs/empty-application/app.toml", CLUSTER, "--format", "json"][..],
    ] {
        let o = flowmap(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(v["status"], "error", "{args:?}");
        assert!(v["errors"][0]["message"].is_string(), "{args:?}");
    }
}

#[test]
fn time_limit_and_jobs_are_validated_alike_everywhere() {
    // The same message from solve and limit, for every way a value can be wrong.
    for bad in ["-1", "1e300", "inf", "NaN", "1000001"] {
        let s = flowmap(&["solve", APP, CLUSTER, "--time-limit", bad]);
        let l = flowmap(&["limit", APP, CLUSTER, "--frequency", "a", "--time-limit", bad]);
        assert_eq!((s.status.code(), l.status.code()), (Some(2), Some(2)), "{bad}");
        let line = |o: &Output| stderr(o).lines().next().unwrap_or("").to_string();
        assert_eq!(line(&s), line(&l), "{bad}");
        assert!(line(&s).contains("expected a number of seconds from 0 to 1000000"), "{bad}: {}", line(&s));
        assert!(!stderr(&s).contains("panicked") && !stderr(&l).contains("panicked"));
    }
    for cmd in [&["solve", APP, CLUSTER][..], &["limit", APP, CLUSTER, "--frequency", "a"][..]] {
        let mut args = cmd.to_vec();
        args.extend(["--jobs", "0"]);
        let o = flowmap(&args);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        assert!(stderr(&o).contains("expected a whole number from 1 to 256"), "{}", stderr(&o));
    }
}

#[test]
fn limit_dot_draws_a_graph_and_limit_names_both_targets() {
    // `limit --format dot` is not text in disguise: it draws the largest feasible value's
    // mapping as a DOT graph (README, "limit").
    let o = flowmap(&["limit", APP, CLUSTER, "--frequency", "a", "--format", "dot"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("digraph"), "{}", stderr(&o));
    let o = flowmap(&["limit", APP, CLUSTER]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--param") && stderr(&o).contains("--frequency"), "{}", stderr(&o));
}

#[test]
fn a_processor_type_no_node_has_is_a_visible_warning() {
    // "gpu" is close to no type of the base cluster ("x") and a can still run on x: a warning,
    // and the answer is as without it (exit 0).
    let d = scratch("warning");
    let app = std::fs::read_to_string(root().join(APP)).unwrap().replace(
        "texec = \"10 ms\"\nload = 1.0",
        "texec = { x = \"10 ms\", gpu = \"1 ms\" }\nload = { x = 1.0, gpu = 1.0 }",
    );
    std::fs::write(d.join("app.toml"), app).unwrap();
    let o = flowmap(&["solve", d.join("app.toml").to_str().unwrap(), CLUSTER]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.starts_with("warning: "), "{e}");
    assert!(e.contains("texec gives processor type \"gpu\", which no node of cluster base has"), "{e}");
    assert_eq!(e.lines().count(), 1, "one type, one warning: {e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn input_files_are_read_only_when_small_and_regular() {
    // A device never ends; a directory is not a file: both refused at once, naming the file.
    for (path, why) in [("/dev/zero", "is not a regular file or a pipe"), ("tests", "is a directory")] {
        let o = flowmap(&["check", path, CLUSTER, MAPPING]);
        assert_eq!(o.status.code(), Some(2), "{path}");
        assert!(stderr(&o).contains(&format!("{path}: file: {why}")), "{}", stderr(&o));
    }
    // A file over the 4 MiB cap: refused before it is parsed.
    let d = scratch("big");
    let big = d.join("app.toml");
    std::fs::write(&big, format!("# {}\n", "x".repeat(5 << 20))).unwrap();
    let o = flowmap(&["check", big.to_str().unwrap(), CLUSTER, MAPPING]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is larger than 4194304 bytes, the most flowmap reads"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&d);
    // A pipe is fine (`flowmap check <(...) ...`).
    let mut child = Command::new(env!("CARGO_BIN_EXE_flowmap"))
        .current_dir(root())
        .args(["check", "/dev/stdin", CLUSTER, MAPPING])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&std::fs::read(root().join(APP)).unwrap()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
