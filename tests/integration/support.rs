//! Helpers: build a problem from inline TOML, run the verifier, look results up by name.

use flowmap::model::{Application, Cluster, Mapping};
use flowmap::parse;
use flowmap::perf::{ModulePerf, Options};
use flowmap::verify::{self, Kind, Report};
use std::path::PathBuf;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub struct Run {
    pub app: Application,
    pub cluster: Cluster,
    #[allow(dead_code)]
    pub mapping: Mapping,
    pub report: Report,
}

impl Run {
    pub fn m(&self, name: &str) -> &ModulePerf {
        let o = self.app.find_object(name).unwrap_or_else(|| panic!("no object {name}"));
        self.report.prediction.as_ref().expect("prediction").module(o).expect("module")
    }
    /// T_it in ms.
    pub fn tit(&self, name: &str) -> f64 {
        self.m(name).tit * 1e3
    }
    pub fn tcexec(&self, name: &str) -> f64 {
        self.m(name).tcexec * 1e3
    }
    pub fn ldc(&self, name: &str) -> f64 {
        self.m(name).ldc
    }
    pub fn freq(&self, name: &str) -> f64 {
        let o = self.app.find_object(name).unwrap();
        self.report.prediction.as_ref().unwrap().frequency[o.index()]
    }
    /// Warnings, by kind.
    pub fn warnings(&self) -> Vec<Kind> {
        self.report.diagnostics.iter().filter(|d| !d.kind.is_error()).map(|d| d.kind).collect()
    }
    pub fn kinds(&self) -> Vec<Kind> {
        self.report.diagnostics.iter().filter(|d| d.kind.is_error()).map(|d| d.kind).collect()
    }
    pub fn sound(&self) -> bool {
        self.report.verdict == verify::Verdict::Sound
    }
}

pub fn run(app: &str, cluster: &str, mapping: &str) -> Run {
    run_with(app, cluster, mapping, &Options::default())
}

/// `run` with given model options (e.g. the iteration-load allocation).
pub fn run_with(app: &str, cluster: &str, mapping: &str, opts: &Options) -> Run {
    let app = parse::application_from_str(app, "app.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let cluster = parse::cluster_from_str(cluster, "cluster.toml").unwrap_or_else(|e| panic!("{e}"));
    let mapping = parse::mapping_from_str(mapping, "mapping.toml", &app, &cluster)
        .and_then(|p| p.complete(&app, &cluster, "mapping.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    let report = verify::check(&app, &cluster, &mapping, opts);
    Run { app, cluster, mapping, report }
}

pub fn run_files(app: &str, cluster: &str, mapping: &str, set: &[parse::Override]) -> Run {
    run_files_with(app, cluster, mapping, set, &Options::default())
}

pub fn run_files_with(app: &str, cluster: &str, mapping: &str, set: &[parse::Override], opts: &Options) -> Run {
    let r = root();
    let app = parse::load_application(&r.join(app), set).unwrap_or_else(|e| panic!("{e}"));
    let cluster = parse::load_cluster(&r.join(cluster)).unwrap_or_else(|e| panic!("{e}"));
    let mapping = parse::load_mapping(&r.join(mapping), &app, &cluster).unwrap_or_else(|e| panic!("{e}"));
    let report = verify::check(&app, &cluster, &mapping, opts);
    Run { app, cluster, mapping, report }
}

/// The bundled cluster's text (self-contained, no `extends`).
pub fn lifo() -> String {
    std::fs::read_to_string(root().join("clusters/lifo-2007.toml")).unwrap()
}

#[macro_export]
macro_rules! assert_close {
    ($a:expr, $b:expr, $tol:expr) => {{
        let (a, b): (f64, f64) = ($a, $b);
        assert!((a - b).abs() <= $tol, "{} = {a}, expected {b} (+-{})", stringify!($a), $tol);
    }};
}

/// A cluster of plain nodes on one network, for hand calculations.
pub fn simple_cluster(nodes: &[(&str, u32)], bandwidth: &str, latency: &str) -> String {
    let mut s = format!(
        "name = \"test\"\n[[networks]]\nname = \"net\"\nbandwidth = \"{bandwidth}\"\nlatency = \"{latency}\"\n"
    );
    for (n, c) in nodes {
        s += &format!("[[nodes]]\nnames = \"{n}\"\ncpus = {c}\nprocessor = \"x\"\nnetworks = [\"net\"]\n");
    }
    s
}
