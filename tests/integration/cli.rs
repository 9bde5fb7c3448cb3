//! The command line, as a user runs it: exit codes, JSON shape, --set, determinism.

use crate::support::root;
use serde_json::Value;
use std::process::{Command, Output};

fn flowmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowmap")).current_dir(root()).args(args).output().unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn module<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["modules"].as_array().unwrap().iter().find(|m| m["name"] == name).unwrap()
}

const TABLE6: [&str; 6] = [
    "check",
    "models/fluid-particle.toml",
    "clusters/lifo-2007.toml",
    "models/mappings/fluid-particle-table6.toml",
    "--format",
    "json",
];

#[test]
fn table6_check_json() {
    // Acceptance: exit 0, verdict sound, T_it 70/70/70/57 ms, particles load 0.28 and viewer
    // 0.39-0.40 (+-0.01): LD x T_exec / T_it = 0.97 x 20 / 70 and 0.97 x 28 / 70.
    let o = flowmap(&TABLE6);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    assert_eq!(v["verdict"], "sound");
    for (m, tit) in
        [("fluid[0]", 70.0), ("fluid[31]", 70.0), ("particles[0]", 70.0), ("viewer[3]", 70.0), ("renderer[2]", 57.0)]
    {
        assert!((module(&v, m)["tit_ms"].as_f64().unwrap() - tit).abs() < 1e-6, "{m}");
    }
    assert!((module(&v, "particles[0]")["load"].as_f64().unwrap() - 0.28).abs() <= 0.01);
    let viewer = module(&v, "viewer[0]")["load"].as_f64().unwrap();
    assert!((0.38..=0.41).contains(&viewer), "{viewer}");
    for key in ["name", "node", "texec_ms", "tcexec_ms", "tit_ms", "frequency_hz", "load"] {
        assert!(module(&v, "fluid[0]").get(key).is_some(), "{key}");
    }
    let link = &v["links"][0];
    for key in ["node", "network", "send_mbps", "recv_mbps", "capacity_mbps"] {
        assert!(link.get(key).is_some(), "{key}");
    }
    assert!(v["diagnostics"].as_array().unwrap().is_empty());
}

#[test]
fn output_is_deterministic() {
    let a = flowmap(&TABLE6);
    let b = flowmap(&TABLE6);
    assert_eq!(a.stdout, b.stdout);
    let t1 = flowmap(&TABLE6[..4]);
    let t2 = flowmap(&TABLE6[..4]);
    assert_eq!(t1.stdout, t2.stdout);
    assert!(String::from_utf8_lossy(&t1.stdout).contains("Verdict: sound"));
}

#[test]
fn set_overrides_a_parameter() {
    // 250000 particles on 4 instances: particles T_exec = 20 x 250000 / 160000 = 31.25 ms,
    // viewer 28 x 1.5625 = 43.75 ms; both below the fluid's 70 ms, so T_it stays 70.
    let mut args = TABLE6.to_vec();
    args.extend(["--set", "particles=250000"]);
    let v = json(&flowmap(&args));
    assert!((module(&v, "particles[1]")["texec_ms"].as_f64().unwrap() - 31.25).abs() < 1e-9);
    assert!((module(&v, "viewer[1]")["texec_ms"].as_f64().unwrap() - 43.75).abs() < 1e-9);
    // 1000x1000 particles: viewer T_exec = 28 x 6.25 = 175 ms > 70 ms: buffer overflow, exit 1.
    let mut args = TABLE6.to_vec();
    args.extend(["--set", "particles=1000000"]);
    let o = flowmap(&args);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["verdict"], "unsound");
    assert!(v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["kind"] == "buffer-overflow" && d["subjects"][0] == "particles[0]"));
}

#[test]
fn unknown_parameter_in_set_is_bad_input() {
    let mut args = TABLE6.to_vec();
    args.extend(["--set", "particle=1"]);
    let o = flowmap(&args);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("models/fluid-particle.toml: --set particle: no such parameter"), "{e}");
}

#[test]
fn overflow_exits_one_naming_both_modules() {
    let dir = std::env::temp_dir().join(format!("flowmap-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let base = root().join("tests/bad-inputs/base");
    // base app: a (10 ms) -> b (5 ms); inverted so that the slow module consumes the fast one.
    let app = std::fs::read_to_string(base.join("app.toml"))
        .unwrap()
        .replace("from = \"a\"\nto = \"b\"", "from = \"b\"\nto = \"a\"");
    std::fs::write(dir.join("app.toml"), app).unwrap();
    let o = flowmap(&[
        "check",
        dir.join("app.toml").to_str().unwrap(),
        base.join("cluster.toml").to_str().unwrap(),
        base.join("mapping.toml").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    let d = &v["diagnostics"][0];
    assert_eq!(d["kind"], "buffer-overflow");
    assert_eq!(d["subjects"], serde_json::json!(["a", "b"]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn what_if_overlay_extends_a_cluster() {
    // clusters/lifo-2007-single-gige.toml removes Myrinet and gige2: the Table VI mapping's
    // routes then name missing networks, which is bad input (exit 2).
    let o = flowmap(&[
        "check",
        "models/fluid-particle.toml",
        "clusters/lifo-2007-single-gige.toml",
        "models/mappings/fluid-particle-table6.toml",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown network \"myrinet\""));
}
