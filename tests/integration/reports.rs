//! Reports people read (issue 14): the summary and grouped diagnostics (insta snapshots, with
//! the numbers they show checked by hand), the SVG cluster view (parsed as XML), the DOT group
//! graph, JSON details, headroom, and a CLI that documents every argument.
//!
//! Hand numbers used below (models/fluid-particle.toml, clusters/lifo-2007.toml, the Table VI
//! mapping, 160,000 particles unless said):
//! - viewer->renderer carries particles x 80 / 4 B per message = 3.2 MB, at F(viewer) =
//!   1 / 70 ms (the greedy connection carries the source's rate): 45.714 MB/s per edge; each
//!   renderer node receives 4 edges on myrinet (250 MB/s): 182.857 MB/s, 73.14 %.
//! - At 1,000,000 particles: 20 MB per message at F(viewer) = 1 / 175 ms: 4 edges = 457.143 MB/s,
//!   1.8286 x 250 MB/s; particles T_exec = 20 x 6.25 = 125 ms against fluid's T_it 70 ms
//!   (1.7857 x), on 32 x 4 = 128 all-to-all edges; viewer 175 ms against particles' 125 ms
//!   (1.4 x), on 4 one-to-one edges.

use crate::assert_close;
use crate::support::*;
use flowmap::model::{Application, Cluster, Mapping};
use flowmap::parse::{self, Override};
use flowmap::perf;
use flowmap::report::{self, Style};
use flowmap::verify::{self, Report};
use serde_json::Value;
use std::process::{Command, Output};

const APP: &str = "models/fluid-particle.toml";
const LIFO: &str = "clusters/lifo-2007.toml";
const TABLE6: &str = "models/mappings/fluid-particle-table6.toml";

fn flowmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowmap")).current_dir(root()).args(args).output().unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

struct Case {
    app: Application,
    cluster: Cluster,
    mapping: Mapping,
    report: Report,
}

fn case(app_src: &str, cluster: &str, mapping_src: &str, set: &[Override]) -> Case {
    let app = parse::application_from_str(app_src, APP, set).unwrap();
    let cluster = parse::load_cluster(&root().join(cluster)).unwrap();
    let mapping = parse::mapping_from_str(mapping_src, TABLE6, &app, &cluster)
        .and_then(|p| p.complete(&app, &cluster, TABLE6))
        .unwrap();
    let report = verify::check(&app, &cluster, &mapping, &perf::Options::default());
    Case { app, cluster, mapping, report }
}

fn read(p: &str) -> String {
    std::fs::read_to_string(root().join(p)).unwrap()
}

/// The Table VI mapping at 1,000,000 particles.
fn million() -> Case {
    case(&read(APP), LIFO, &read(TABLE6), &[Override { name: "particles".into(), value: 1e6 }])
}

/// The Table VI mapping without its routes (for the single-gige cluster, where every edge
/// between nodes can only use gige).
fn table6_without_routes() -> String {
    read(TABLE6).split("[[route]]").next().unwrap().to_string()
}

impl Case {
    fn text(&self) -> String {
        report::check_text(&self.app, &self.cluster, &self.mapping, &self.report, &Style::plain())
    }
    fn json(&self) -> Value {
        report::check_json(&self.app, &self.cluster, &self.mapping, &self.report)
    }
}

fn group<'a>(v: &'a Value, kind: &str, subject: &str) -> &'a Value {
    v["diagnostic_groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["kind"] == kind && g["subject"] == subject)
        .unwrap_or_else(|| panic!("no group {kind} {subject} in {}", v["diagnostic_groups"]))
}

#[test]
fn summary_of_the_sound_table6_mapping() {
    let c = case(&read(APP), LIFO, &read(TABLE6), &[]);
    let v = c.json();
    let s = &v["summary"];
    assert_eq!(s["nodes_used"], 16);
    assert_eq!(s["nodes_total"], 16);
    // Busiest link: node01 receives 4 x 45.714 = 182.857 MB/s of 250 on myrinet (header).
    assert_eq!(s["busiest_link"]["node"], "node01");
    assert_eq!(s["busiest_link"]["direction"], "receive");
    assert_close!(s["busiest_link"]["mbps"].as_f64().unwrap(), 4.0 * 3.2 * 1000.0 / 70.0, 1e-6);
    assert_close!(s["busiest_link"]["utilisation"].as_f64().unwrap(), 4.0 * 3.2 * 1000.0 / 70.0 / 250.0, 1e-9);
    // Busiest CPU: LD 0.97 over a whole iteration (fluid and renderer are self-paced); the
    // first in (node, CPU) order is node01's CPU 0, the renderer's.
    assert_eq!(s["busiest_cpu"]["node"], "node01");
    assert_close!(s["busiest_cpu"]["load"].as_f64().unwrap(), 0.97, 1e-12);
    // Bottleneck: the shared resource closest to its limit is that myrinet link, 26.86 % left
    // (CPUs that one self-paced module keeps busy are not counted: they cannot fill up).
    assert!(s["bottleneck"]["what"].as_str().unwrap().contains("myrinet link of node01"), "{}", s["bottleneck"]);
    assert_close!(s["bottleneck"]["margin"].as_f64().unwrap(), 1.0 - 182.857142857 / 250.0, 1e-9);
    // Paced by: particles wait for fluid (70 ms > their 20 ms), viewers for particles.
    let g = |n: &str| s["groups"].as_array().unwrap().iter().find(|g| g["name"] == n).unwrap().clone();
    assert_eq!(g("fluid")["paced_by"], "itself");
    assert_eq!(g("particles")["paced_by"], "input fluid");
    assert_eq!(g("viewer")["paced_by"], "input particles");
    assert_eq!(g("fluid")["nodes"], "node11..node18");
    assert_close!(g("renderer")["frequency_min_hz"].as_f64().unwrap(), 1000.0 / 57.0, 1e-6);
    let text = c.text();
    // Folded: one row for the 32 fluid instances, and no line runs to the old 238 characters.
    assert!(text.contains("fluid[0..31]") && text.contains("node11..node18 (4 each)"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 130), "{text}");
    // Legible numbers: 17.54 Hz, not 17.543859649122805.
    assert!(text.contains("17.54") && !text.contains("17.543"), "{text}");
    insta::assert_snapshot!("fluid_particle_sound", text);
}

#[test]
fn requirements_show_value_bound_and_margin() {
    // renderer >= 15 Hz: 1000 / 57 = 17.544 Hz, margin 16.96 %.
    // Latency (eq 11) of joypad -> fluid[0] -> particles[0] -> viewer[0] -> renderer[0]:
    // T_it 1 + 70 + 70 + 70 + 57 = 268 ms; transfers joypad->fluid[0] on gige 64 B / 100 MB/s
    // + 0.05 ms = 0.05064 ms, fluid[0]->particles[0] on gige 65,536 B (512 x 512 x 8 / 32)
    // = 0.65536 + 0.05 ms, particles[0]->viewer[0] local (both on node05), viewer[0]->
    // renderer[0] on myrinet 3.2 MB / 250 MB/s + 0.01 = 12.81 ms: 281.566 ms <= 300 ms, margin
    // 6.145 %.
    let app = read(APP)
        + "\n[[requirements]]\nmodule = \"renderer\"\nmin_frequency = \"15 Hz\"\n\n[[requirements]]\nname = \"interaction\"\npath = [\"joypad\", \"fluid[0]\", \"particles[0]\", \"viewer[0]\", \"renderer[0]\"]\nmax_latency = \"300 ms\"\n";
    let c = case(&app, LIFO, &read(TABLE6), &[]);
    let v = c.json();
    let q = v["requirements"].as_array().unwrap();
    assert_eq!(q.len(), 2);
    assert_close!(q[0]["value"].as_f64().unwrap(), 1000.0 / 57.0, 1e-6);
    assert_close!(q[0]["margin"].as_f64().unwrap(), (1000.0 / 57.0 - 15.0) / 15.0, 1e-9);
    let lat = 268.0 + 0.05064 + 0.70536 + 12.81;
    assert_close!(q[1]["value"].as_f64().unwrap(), lat, 1e-6);
    assert_close!(q[1]["margin"].as_f64().unwrap(), (300.0 - lat) / 300.0, 1e-9);
    assert_eq!(q[1]["met"], true);
    assert_eq!(v["paths"][0]["max_latency_ms"], 300.0);
    // The latency requirement has the smallest margin: it is the bottleneck.
    assert!(v["summary"]["bottleneck"]["what"].as_str().unwrap().starts_with("requirement interaction"));
    let text = c.text();
    assert!(text.contains("+17 %") && text.contains("+6.1 %"), "{text}");
}

#[test]
fn grouped_diagnostics_at_a_million_particles() {
    let c = million();
    let v = c.json();
    // 128 + 4 + 8 errors (header), and 4 order-hypothesis warnings: node05..node08 each hold
    // only particles[i] and viewer[i], one synchronous component with no predecessor
    // (configuration 1, eq 8's order), whose T_it differ once particles overflow. Four groups.
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 144);
    assert_eq!(v["diagnostic_groups"].as_array().unwrap().len(), 4);
    let g = group(&v, "buffer-overflow", "particles <- fluid");
    assert_eq!(g["count"], 128);
    assert_eq!(g["where"], "particles[0..3]");
    assert_close!(g["worst_ratio"].as_f64().unwrap(), 125.0 / 70.0, 1e-9);
    assert!(g["fix"].as_str().unwrap().contains("add particles instances"));
    let g = group(&v, "buffer-overflow", "viewer <- particles");
    assert_eq!(g["count"], 4);
    assert_close!(g["worst_ratio"].as_f64().unwrap(), 175.0 / 125.0, 1e-9);
    let g = group(&v, "network-contention", "viewer->renderer on myrinet");
    assert_eq!(g["count"], 8);
    assert_eq!(g["where"], "node05..node08 sending; node01..node04 receiving");
    assert_close!(g["worst_ratio"].as_f64().unwrap(), 457.142857142857 / 250.0, 1e-9);
    // The only other network of node01 is gige (its joypad sends 2.048 MB/s there).
    assert!(g["fix"].as_str().unwrap().contains("gige (97.95 MB/s free on node01)"), "{}", g["fix"]);
    // The worst violation is the bottleneck.
    assert_eq!(v["summary"]["bottleneck"]["what"], "network-contention viewer->renderer on myrinet");
    let text = c.text();
    // Grouped: far from the 233 lines of one diagnostic each.
    assert!(text.lines().filter(|l| l.contains("[buffer-overflow]")).count() == 2, "{text}");
    insta::assert_snapshot!("fluid_particle_million_particles", text);
}

#[test]
fn grouped_diagnostics_on_the_single_gige_cluster() {
    // One gigabit link per node: viewer->renderer (182.857 MB/s per node) cannot fit 100 MB/s.
    let c = case(&read(APP), "clusters/lifo-2007-single-gige.toml", &table6_without_routes(), &[]);
    let v = c.json();
    let g = group(&v, "network-contention", "viewer->renderer on gige");
    assert_eq!(g["count"], 8);
    assert_close!(g["worst_ratio"].as_f64().unwrap(), 182.857142857 / 100.0, 1e-9);
    // No other network to suggest; viewer->renderer is greedy already.
    let fix = g["fix"].as_str().unwrap();
    assert!(!fix.contains("another network") && !fix.contains("make viewer->renderer greedy"), "{fix}");
    insta::assert_snapshot!("fluid_particle_single_gige", c.text());
    // solve proves there is none, and says so first.
    let o = flowmap(&["solve", APP, "clusters/lifo-2007-single-gige.toml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("Status: infeasible"));
}

#[test]
fn verbose_lists_every_instance_and_diagnostic() {
    let c = million();
    let st = Style { verbose: true, ..Style::plain() };
    let t = report::check_text(&c.app, &c.cluster, &c.mapping, &c.report, &st);
    // 45 objects, one row each; 140 diagnostics, one line each (after the grouped ones).
    assert!(t.contains("| fluid[31] ") && t.contains("| fluid[0] "));
    assert_eq!(t.lines().filter(|l| l.starts_with("  error [buffer-overflow] particles[")).count(), 128);
}

#[test]
fn unicode_and_colour_only_when_asked() {
    let plain = flowmap(&["check", APP, LIFO, TABLE6]);
    let s = String::from_utf8_lossy(&plain.stdout);
    // Piped: ASCII tables, no escape codes.
    assert!(s.is_ascii() || !s.contains('│'), "box characters in a pipe");
    assert!(!s.contains('\x1b'));
    let c = flowmap(&["check", APP, LIFO, TABLE6, "--color", "always"]);
    assert!(String::from_utf8_lossy(&c.stdout).contains("\x1b[1;32msound\x1b[0m"));
}

#[test]
fn svg_cluster_view_has_one_element_per_node() {
    for (app, cluster, mapping, nodes) in [
        (APP, LIFO, TABLE6, 16),
        (
            "models/generated/gen-1000x256-feasible-s1.toml",
            "clusters/generated/gen-1000x256-feasible-s1.toml",
            "models/generated/mappings/gen-1000x256-feasible-s1.toml",
            256,
        ),
    ] {
        let o = flowmap(&["check", app, cluster, mapping, "--format", "svg"]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8(o.stdout).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let cards: Vec<_> =
            doc.descendants().filter(|n| n.tag_name().name() == "g" && n.attribute("class") == Some("node")).collect();
        assert_eq!(cards.len(), nodes);
        // Unused nodes are drawn faded: as many as the mapping leaves empty.
        let r = run_files(app, cluster, mapping, &[]);
        let used: std::collections::BTreeSet<_> = r.mapping.placement.iter().map(|p| p.node).collect();
        let faded = cards.iter().filter(|n| n.attribute("opacity") == Some("0.35")).count();
        assert_eq!(faded, nodes - used.len());
    }
    // At a million particles the overloaded links are drawn red.
    let o = flowmap(&["check", APP, LIFO, TABLE6, "--set", "particles=1000000", "--format", "svg"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let node01 = doc.descendants().find(|n| n.attribute("id") == Some("node-node01")).unwrap();
    assert!(node01.descendants().any(|n| n.attribute("fill") == Some("#c62828")));
}

#[test]
fn dot_draws_the_group_graph() {
    let o = flowmap(&["check", APP, LIFO, TABLE6, "--format", "dot"]);
    let dot = String::from_utf8_lossy(&o.stdout);
    assert!(dot.starts_with("digraph groups {"));
    // One box per group (5), one edge per (group pair, network): fluid->particles on gige,
    // particles->viewer local (instance i of both on node05+i), viewer->renderer on myrinet,
    // joypad->fluid on gige, and the fluid.mpi ring (32 instances, both ways: 64 edges) local
    // inside a node (48) and on gige2 between consecutive nodes (8 boundaries x 2 = 16).
    assert_eq!(dot.lines().filter(|l| l.contains(" [label=") && !l.contains(" -> ")).count(), 5);
    assert_eq!(dot.lines().filter(|l| l.contains(" -> ")).count(), 6);
    assert!(dot.contains("local, 48 edges") && dot.contains("gige2 (0.1 %), 16 edges"), "{dot}");
    // viewer->renderer: 16 edges of 3.2 MB at 1 / 70 ms = 731.4 MB/s, busiest link at 73.1 %.
    assert!(dot.contains("viewer->renderer\\n731.4 MB/s myrinet (73.1 %), 16 edges"), "{dot}");
    let i = flowmap(&["check", APP, LIFO, TABLE6, "--format", "dot", "--detail", "instances"]);
    let d = String::from_utf8_lossy(&i.stdout);
    assert!(d.starts_with("digraph mapping {") && d.contains("cluster_node01"));
    // 244 instance-level edges, as before.
    assert_eq!(d.lines().filter(|l| l.contains(" -> ")).count(), 244);
}

#[test]
fn json_place_keys_in_natural_order() {
    let o = flowmap(&["solve", APP, LIFO, "--format", "json"]);
    let v = json(&o);
    let keys: Vec<&String> = v["mapping"]["place"].as_object().unwrap().keys().collect();
    let pos = |k: &str| keys.iter().position(|x| *x == k).unwrap();
    assert!(pos("fluid[2]") < pos("fluid[10]"));
    assert!(pos("fluid[9]") < pos("fluid[10]"));
}

#[test]
fn link_headroom_in_check() {
    // node01..node04 receive and node05..node08 send 182.857 MB/s on myrinet: 73.1 % of
    // 250 MB/s. A 75 % headroom keeps it sound; 70 % makes 8 contentions.
    let sound = flowmap(&["check", APP, LIFO, TABLE6, "--link-headroom", "0.75", "--format", "json"]);
    assert_eq!(sound.status.code(), Some(0));
    assert_close!(json(&sound)["summary"]["headroom"]["link"].as_f64().unwrap(), 0.75, 1e-12);
    let o = flowmap(&["check", APP, LIFO, TABLE6, "--link-headroom", "0.7", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    let d = v["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 8);
    assert!(d.iter().all(|d| d["kind"] == "network-contention"));
    assert!(d[0]["message"].as_str().unwrap().contains("above 175.000 MB/s, the 70 % headroom of its 250.000 MB/s"));
    let t = String::from_utf8_lossy(&flowmap(&["check", APP, LIFO, TABLE6, "--headroom", "0.7"]).stdout).to_string();
    assert!(t.contains("headroom       links 70 %, CPUs 70 % of capacity"), "{t}");
    // Out of range: bad input.
    assert_eq!(flowmap(&["check", APP, LIFO, TABLE6, "--headroom", "1.5"]).status.code(), Some(2));
}

#[test]
fn cpu_headroom_in_check_and_solve() {
    // Over an iteration the 32 fluid CPUs and the 4 renderer CPUs are busy LD = 97 %;
    // particles 0.97 x 20 / 70 = 27.7 %, viewer 38.8 %, joypad 1 %. A 90 % CPU headroom: 36
    // CPUs over it.
    let o = flowmap(&["check", APP, LIFO, TABLE6, "--cpu-headroom", "0.9", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["diagnostics"].as_array().unwrap().iter().filter(|d| d["kind"] == "cpu-overload").count(), 36);
    assert_eq!(group(&v, "cpu-overload", "CPUs above the headroom")["count"], 36);
    // No mapping can keep a module with LD 0.97 and no input (it runs flat out) under 90 %:
    // solve refutes it before search, naming the modules.
    let s = flowmap(&["solve", APP, LIFO, "--cpu-headroom", "0.9", "--format", "json"]);
    assert_eq!(s.status.code(), Some(1));
    let sv = json(&s);
    assert_eq!(sv["status"], "infeasible");
    assert!(sv["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r.as_str().unwrap().starts_with("fluid[0] keeps a CPU busy")));
    // At 98 % the Table VI mapping is sound, and solve finds a mapping check agrees with.
    let s = flowmap(&["solve", APP, LIFO, "--cpu-headroom", "0.98", "--format", "json"]);
    assert_eq!(s.status.code(), Some(0));
    assert_eq!(json(&s)["check"]["verdict"], "sound");
}

#[test]
fn link_headroom_in_solve_keeps_every_link_below_it() {
    // Whatever mapping solve finds with a 60 % link headroom, every link direction it uses
    // carries at most 60 % of its bandwidth (checked here on the JSON's own link table).
    let o = flowmap(&["solve", APP, LIFO, "--link-headroom", "0.6", "--format", "json"]);
    let v = json(&o);
    match o.status.code() {
        Some(0) => {
            assert_eq!(v["check"]["verdict"], "sound");
            for l in v["check"]["links"].as_array().unwrap() {
                let cap = l["capacity_mbps"].as_f64().unwrap();
                for k in ["send_mbps", "recv_mbps"] {
                    assert!(l[k].as_f64().unwrap() <= 0.6 * cap * (1.0 + 1e-9), "{l}");
                }
            }
        }
        Some(1) => assert_eq!(v["status"], "infeasible"),
        c => panic!("exit {c:?}"),
    }
    // At 50 % there is none: node01 holds renderer[0] and the pinned joypad, two self-paced
    // modules on its two CPUs, so no viewer fits there and node01 receives all four viewer
    // edges, 4 x 45.714 = 182.857 MB/s, more than 50 % of myrinet (125) plus 50 % of gige (50),
    // its only networks.
    let o = flowmap(&["solve", APP, LIFO, "--link-headroom", "0.5", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["status"], "infeasible");
}

#[test]
fn particle_limit_scales_with_the_link_headroom() {
    // README: the limit, 291,666 particles, is set by node01 receiving 3 viewer edges on
    // myrinet, each particles x 20 B at 1 / 70 ms. Every traffic that grows with particles
    // grows in proportion, and only the links change with the headroom: at 80 % the limit is
    // floor(0.8 x 250e6 x 0.07 / (3 x 20)) = 233,333.
    let o = flowmap(&[
        "limit",
        APP,
        LIFO,
        "--param",
        "particles",
        "--range",
        "233000..234000",
        "--link-headroom",
        "0.8",
        "--jobs",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    assert_eq!(v["largest_feasible"]["value"], 233333.0);
    assert_eq!(v["smallest_infeasible"]["value"], 233334.0);
    assert_eq!(v["largest_feasible"]["check"]["verdict"], "sound");
    let why = v["smallest_infeasible"]["why"].as_array().unwrap();
    assert!(why.iter().any(|d| d["message"].as_str().unwrap().contains("80 % headroom")), "{why:?}");
}

#[test]
fn limit_chart_is_an_svg_with_every_probe() {
    let src = read(APP);
    let make = |v: f64| {
        parse::application_from_str(&src, APP, &[Override { name: "particles".into(), value: v }])
            .map_err(|e| e.to_string())
    };
    let cluster = parse::load_cluster(&root().join(LIFO)).unwrap();
    let opts = flowmap::solve::SolveOptions::default();
    let o = flowmap::headroom::param_limit(&make, &cluster, 250000.0, Some(300000.0), true, 2, &opts).unwrap();
    let app = make(160000.0).unwrap();
    let curve = report::probe_curve(&make, &cluster, &o, &opts.perf);
    let t = report::Target::Param("particles");
    let text = report::limit_svg(&app, &cluster, &t, &o, &curve, Default::default());
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    // One circle per probe, plus one per legend entry (feasible, infeasible).
    let circles = doc.descendants().filter(|n| n.tag_name().name() == "circle").count();
    assert_eq!(circles, o.probes.len() + 2);
    // The largest feasible mapping (291,666: node01 receives 3 viewer edges of particles x 20 B
    // at 1 / 70 ms) uses its busiest link at 3 x 291,666 x 20 / 0.07 / 250e6 = 99.9997 % there.
    let at = curve.iter().find(|c| c.0 == 291666.0).expect("probed");
    assert_close!(at.1[0], 3.0 * 291666.0 * 20.0 / 0.07 / 250e6, 1e-9);
}

#[test]
fn out_file_says_where_it_came_from() {
    let dir = std::env::temp_dir().join(format!("flowmap-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("m.toml");
    let o = flowmap(&["solve", APP, LIFO, "--set", "particles=250000", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    let head: Vec<&str> = text.lines().take(4).collect();
    assert_eq!(head[0], format!("# Written by flowmap {} solve.", env!("CARGO_PKG_VERSION")));
    assert_eq!(head[1], format!("# application: {APP}"));
    assert_eq!(head[2], format!("# cluster: {LIFO}"));
    assert_eq!(head[3], "# --set: particles=250000");
    let c = flowmap(&["check", APP, LIFO, out.to_str().unwrap(), "--set", "particles=250000"]);
    assert_eq!(c.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_argument_has_help() {
    // From clap's own definitions: every argument and option of every subcommand.
    assert_eq!(flowmap::cli::undocumented(), Vec::<String>::new());
    let h = String::from_utf8_lossy(&flowmap(&["check", "--help"]).stdout).to_string();
    for arg in ["<APP>", "<CLUSTER>", "<MAPPING>", "--set", "--format", "--headroom", "--color", "--ascii"] {
        assert!(h.contains(arg), "{arg} missing from check --help:\n{h}");
    }
    // limit with neither target names both.
    let e = flowmap(&["limit", APP, LIFO]);
    assert_eq!(e.status.code(), Some(2));
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains("--param") && err.contains("--frequency"), "{err}");
}

#[test]
fn completions_and_man_page_come_from_the_definitions() {
    let b = flowmap(&["completions", "bash"]);
    assert_eq!(b.status.code(), Some(0));
    let s = String::from_utf8_lossy(&b.stdout);
    assert!(s.contains("_flowmap") && s.contains("--headroom"));
    let m = flowmap(&["man"]);
    let s = String::from_utf8_lossy(&m.stdout);
    assert!(s.starts_with(".ie") || s.contains(".TH flowmap"), "{}", &s[..200.min(s.len())]);
    let dir = std::env::temp_dir().join(format!("flowmap-man-{}", std::process::id()));
    let d = flowmap(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(d.status.code(), Some(0));
    for sub in ["flowmap.1", "flowmap-check.1", "flowmap-solve.1", "flowmap-limit.1"] {
        assert!(dir.join(sub).exists(), "{sub}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
