//! The bad-input corpus (tests/bad-inputs/<case>/): each case replaces some of the base files
//! (and may give the command line in `args`), and pins the exact error text in `expected.txt`.
//! Every case must exit 2 without a panic.

use crate::support::root;
use std::process::Command;

#[test]
fn corpus_messages_are_pinned() {
    let dir = root().join("tests/bad-inputs");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|c| c != "base")
        .collect();
    cases.sort();
    assert!(cases.len() >= 8, "corpus went missing");
    let mut failures = Vec::new();
    for case in &cases {
        let pick = |f: &str| {
            let own = format!("tests/bad-inputs/{case}/{f}");
            if root().join(&own).exists() {
                own
            } else {
                format!("tests/bad-inputs/base/{f}")
            }
        };
        // `args` (optional): the command line, APP, CLUSTER and MAPPING standing for the files.
        let args = std::fs::read_to_string(dir.join(case).join("args")).unwrap_or("check APP CLUSTER MAPPING".into());
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| match a {
                "APP" => pick("app.toml"),
                "CLUSTER" => pick("cluster.toml"),
                "MAPPING" => pick("mapping.toml"),
                _ => a.to_string(),
            })
            .collect();
        let out = Command::new(env!("CARGO_BIN_EXE_flowmap")).current_dir(root()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = std::fs::read_to_string(dir.join(case).join("expected.txt")).unwrap_or_default();
        if out.status.code() != Some(2) || stderr.trim_end() != expected.trim_end() || stderr.contains("panicked") {
            failures
                .push(format!("case {case}: exit {:?}\n--- got\n{stderr}--- expected\n{expected}", out.status.code()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn all_problems_of_a_file_are_reported_together() {
    // load-above-one has two bad loads; missing-unit two missing units: both lines appear.
    for case in ["load-above-one", "missing-unit"] {
        let t = std::fs::read_to_string(root().join(format!("tests/bad-inputs/{case}/expected.txt"))).unwrap();
        assert_eq!(t.lines().count(), 2, "{case}");
    }
}
