//! The cluster view as SVG (`--format svg`), drawn without any external program: nodes grouped
//! by class (processor type, CPUs, networks), each node a card with one bar per CPU (its load
//! over an iteration), the objects on it by group, and one send and one receive bar per network
//! link against its capacity; red where a limit is passed or a diagnostic points, unused nodes
//! faded, a legend on top. Objects are always shown per group (`fluid x4`), and above 64 nodes
//! a card shows its groups as one coloured strip, so 1,000 modules on 256 nodes stay readable.
//!
//! Every node is one `<g class="node" id="node-NAME">` element.

use super::style::{fold_names, pct};
use crate::model::{Application, Cluster, Mapping, NodeId};
use crate::verify::{self, Kind, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

const RED: &str = "#c62828";
const FONT: &str = "font-family=\"Helvetica, Arial, sans-serif\"";
/// Above this many nodes, cards show groups as a strip instead of lines.
const COMPACT_FROM: usize = 64;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A colour per group: ten distinct ones, then golden-angle hues.
fn color(i: usize) -> String {
    const P: [&str; 10] =
        ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6"];
    if i < P.len() {
        P[i].to_string()
    } else {
        format!("hsl({:.0},55%,55%)", (i as f64 * 137.508) % 360.0)
    }
}

/// Text cut to about `px` pixels at font size `size` (average glyph width ~0.55 em).
fn fit(s: &str, px: f64, size: f64) -> String {
    let max = ((px / (size * 0.55)).floor() as usize).max(2);
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

struct NodeFacts {
    /// Load per CPU, and whether a diagnostic points at it.
    cpus: Vec<(f64, bool)>,
    /// (group index, count, troubled) in group order.
    groups: Vec<(usize, usize, bool)>,
    /// Per network the node is on: (name, send share, recv share, send over, recv over).
    links: Vec<(String, f64, f64, bool, bool)>,
    used: bool,
}

fn facts(app: &Application, cluster: &Cluster, m: &Mapping, r: Option<&Report>) -> Vec<NodeFacts> {
    let p = r.and_then(|r| r.prediction.as_ref());
    let h = r.map(|r| r.headroom).unwrap_or_default();
    let names: BTreeMap<&str, crate::model::ObjectId> =
        app.graph.node_indices().map(|o| (app.object(o).name.as_str(), o)).collect();
    // Objects that are the first subject of an error diagnostic.
    let mut bad: BTreeSet<crate::model::ObjectId> = BTreeSet::new();
    let mut bad_cpu: BTreeSet<(NodeId, u32)> = BTreeSet::new();
    for d in r.map(|r| r.diagnostics.as_slice()).unwrap_or_default().iter().filter(|d| d.kind.is_error()) {
        if let Some(&o) = d.subjects.first().and_then(|s| names.get(s.as_str())) {
            bad.insert(o);
            if matches!(d.kind, Kind::CpuOverload | Kind::BufferOverflow) {
                if let Some(mm) = p.and_then(|p| p.module(o)) {
                    bad_cpu.insert((mm.node, mm.cpu));
                }
            }
        }
    }
    let loads = p.map(verify::cpu_loads).unwrap_or_default();
    cluster
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let id = NodeId(i as u32);
            let cpus = (0..n.cpus)
                .map(|c| {
                    let l = loads.get(&(id, c)).map(|x| x.0).unwrap_or(0.0);
                    (l, bad_cpu.contains(&(id, c)) || !verify::le(l, h.cpu.min(1.0)))
                })
                .collect();
            let mut groups: Vec<(usize, usize, bool)> = Vec::new();
            for (gi, g) in app.groups.iter().enumerate() {
                let here: Vec<_> = g.objects.iter().filter(|&&o| m.node_of(o) == id).collect();
                if !here.is_empty() {
                    groups.push((gi, here.len(), here.iter().any(|o| bad.contains(o))));
                }
            }
            let links = n
                .networks
                .iter()
                .map(|&k| {
                    let net = cluster.network(k);
                    let l = p.and_then(|p| p.links.iter().find(|l| l.node == id && l.network == k));
                    let (s, r) = l.map(|l| (l.send / l.capacity, l.recv / l.capacity)).unwrap_or((0.0, 0.0));
                    let lim = h.link.min(1.0);
                    (net.name.clone(), s, r, !verify::le(s, lim), !verify::le(r, lim))
                })
                .collect();
            NodeFacts { cpus, used: !groups.is_empty(), groups, links }
        })
        .collect()
}

/// Classes of nodes: same processor type, CPUs and networks; in order of first node.
fn classes(cluster: &Cluster) -> Vec<Vec<usize>> {
    let mut keys: Vec<(String, u32, Vec<u32>)> = Vec::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, n) in cluster.nodes.iter().enumerate() {
        let k = (n.processor.clone(), n.cpus, n.networks.iter().map(|x| x.0).collect::<Vec<_>>());
        match keys.iter().position(|x| *x == k) {
            Some(j) => out[j].push(i),
            None => {
                keys.push(k);
                out.push(vec![i]);
            }
        }
    }
    out
}

struct Geometry {
    cols: usize,
    card_w: f64,
    card_h: f64,
    compact: bool,
    group_lines: usize,
    link_limit: f64,
}

fn geometry(cluster: &Cluster, f: &[NodeFacts], link_limit: f64) -> Geometry {
    let n = cluster.nodes.len();
    let compact = n > COMPACT_FROM;
    let cols = if n <= 8 {
        n.max(1)
    } else if n <= 32 {
        8
    } else if compact {
        16
    } else {
        10
    };
    let card_w = if compact { 118.0 } else { 170.0 };
    let max_groups = f.iter().map(|x| x.groups.len()).max().unwrap_or(0);
    let group_lines = if compact { 1 } else { max_groups.clamp(1, 5) };
    let max_links = cluster.nodes.iter().map(|x| x.networks.len()).max().unwrap_or(0);
    let card_h = 20.0 + 30.0 + 6.0 + group_lines as f64 * 13.0 + 10.0 + max_links as f64 * 13.0 + 4.0;
    Geometry { cols, card_w, card_h, compact, group_lines, link_limit }
}

/// A link bar: its use of capacity, slate below 70 % of the limit, orange up to it, red above;
/// the percentage written inside when it is at least 5 %.
fn bar(out: &mut String, x: f64, y: f64, w: f64, h: f64, share: f64, limit: f64) {
    let _ = writeln!(
        out,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"#f1f1f1\" stroke=\"#cccccc\" stroke-width=\"0.5\"/>"
    );
    let fw = (share.clamp(0.0, 1.0) * w).max(0.0);
    if fw > 0.0 {
        let fill = if !verify::le(share, limit) {
            RED
        } else if share >= 0.7 * limit {
            "#e65100"
        } else {
            "#8497ab"
        };
        let _ = writeln!(out, "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{fw:.1}\" height=\"{h:.1}\" fill=\"{fill}\"/>");
    }
    if share >= 0.05 && w >= 24.0 {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"7.5\" fill=\"{}\" text-anchor=\"end\">{:.0} %</text>",
            x + w - 1.5,
            y + h - 1.8,
            if share >= 0.8 { "#ffffff" } else { "#000000" },
            share * 100.0
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn card(out: &mut String, app: &Application, cluster: &Cluster, i: usize, f: &NodeFacts, g: &Geometry, x: f64, y: f64) {
    let n = &cluster.nodes[i];
    let any_bad = f.cpus.iter().any(|c| c.1) || f.groups.iter().any(|x| x.2) || f.links.iter().any(|l| l.3 || l.4);
    let opacity = if f.used { "1" } else { "0.35" };
    let _ = writeln!(out, "<g class=\"node\" id=\"node-{}\" opacity=\"{opacity}\">", esc(&n.name));
    let _ = writeln!(out, "<title>{}</title>", esc(&format!("{}: {} x {} CPU(s)", n.name, n.processor, n.cpus)));
    let (stroke, sw) = if any_bad { (RED, 2.0) } else { ("#9aa5b1", 1.0) };
    let _ = writeln!(
        out,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"5\" fill=\"#ffffff\" stroke=\"{stroke}\" stroke-width=\"{sw}\"/>",
        g.card_w, g.card_h
    );
    let pad = 6.0;
    let inner = g.card_w - 2.0 * pad;
    let title = if f.used { n.name.clone() } else { format!("{} (unused)", n.name) };
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"11\" font-weight=\"bold\">{}</text>",
        x + pad,
        y + 14.0,
        esc(&fit(&title, inner, 11.0))
    );
    // CPUs: vertical bars of their load.
    let top = y + 20.0;
    let cw = inner / f.cpus.len().max(1) as f64;
    for (c, (load, bad)) in f.cpus.iter().enumerate() {
        let bx = x + pad + c as f64 * cw;
        let w = (cw - 2.0).max(1.0);
        let _ = writeln!(
            out,
            "<rect x=\"{bx:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" height=\"26\" fill=\"#f1f1f1\" stroke=\"#cccccc\" stroke-width=\"0.5\"><title>CPU {c}: {}</title></rect>",
            pct(*load)
        );
        let h = 26.0 * load.clamp(0.0, 1.0);
        if h > 0.0 {
            let fill = if *bad { RED } else { "#5b7fa6" };
            let _ = writeln!(
                out,
                "<rect x=\"{bx:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" fill=\"{fill}\"/>",
                top + 26.0 - h
            );
        }
        if w >= 18.0 && *load > 0.0 {
            // Inside the bar's foot when the bar is tall enough to hold it, above it otherwise.
            let dark = *load >= 0.38;
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"8\" text-anchor=\"middle\" fill=\"{}\">{:.0} %</text>",
                bx + w / 2.0,
                if dark { top + 23.5 } else { top + 24.0 - h - 2.0 },
                if dark { "#ffffff" } else { "#333333" },
                load * 100.0
            );
        }
    }
    // Groups.
    let mut gy = top + 30.0 + 6.0;
    if g.compact {
        let total: usize = f.groups.iter().map(|x| x.1).sum();
        let mut sx = x + pad;
        for &(gi, c, _) in &f.groups {
            let w = inner * c as f64 / total.max(1) as f64;
            let _ = writeln!(
                out,
                "<rect x=\"{sx:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"5\" fill=\"{}\"><title>{} x{c}</title></rect>",
                gy - 8.0,
                color(gi),
                esc(&app.groups[gi].name)
            );
            sx += w;
        }
        let names: Vec<String> = f
            .groups
            .iter()
            .map(
                |&(gi, c, _)| if c > 1 { format!("{} x{c}", app.groups[gi].name) } else { app.groups[gi].name.clone() },
            )
            .collect();
        let fill = if f.groups.iter().any(|x| x.2) { RED } else { "#333333" };
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"9\" fill=\"{fill}\">{}</text>",
            x + pad,
            gy + 4.0,
            esc(&fit(&names.join(", "), inner, 9.0))
        );
        gy += 13.0;
    } else {
        let shown = if f.groups.len() > g.group_lines { g.group_lines - 1 } else { f.groups.len() };
        for &(gi, c, bad) in f.groups.iter().take(shown) {
            let _ = writeln!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"{}\"/>",
                x + pad,
                gy - 7.0,
                color(gi)
            );
            let label = if c > 1 { format!("{} x{c}", app.groups[gi].name) } else { app.groups[gi].name.clone() };
            let fill = if bad { RED } else { "#222222" };
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{gy:.1}\" {FONT} font-size=\"10\" fill=\"{fill}\">{}</text>",
                x + pad + 11.0,
                esc(&fit(&label, inner - 11.0, 10.0))
            );
            gy += 13.0;
        }
        if f.groups.len() > shown {
            let rest: usize = f.groups.iter().skip(shown).map(|x| x.1).sum();
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{gy:.1}\" {FONT} font-size=\"10\" fill=\"#555555\">+{} groups ({rest} objects)</text>",
                x + pad + 11.0,
                f.groups.len() - shown
            );
        }
        gy = top + 30.0 + 6.0 + g.group_lines as f64 * 13.0;
    }
    // Links: send and receive bars per network.
    let ly = gy + if g.compact { 2.0 } else { 6.0 };
    let label_w = if g.compact { 40.0 } else { 48.0 };
    let bw = (inner - label_w) / 2.0 - 2.0;
    if !g.compact {
        for (k, t) in ["send", "receive"].iter().enumerate() {
            let _ = writeln!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"7.5\" fill=\"#777777\">{t}</text>",
                x + pad + label_w + k as f64 * (bw + 4.0),
                ly - 2.0
            );
        }
    }
    let fs = if g.compact { 8.0 } else { 9.0 };
    for (j, (name, s, r, _, _)) in f.links.iter().enumerate() {
        let yy = ly + j as f64 * 13.0;
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"{fs}\" fill=\"#444444\">{}</text>",
            x + pad,
            yy + 8.0,
            esc(&fit(name, label_w - 2.0, fs))
        );
        let bx = x + pad + label_w;
        let _ = write!(out, "<g><title>{} send {} / receive {}</title>", esc(name), pct(*s), pct(*r));
        bar(out, bx, yy, bw, 9.0, *s, g.link_limit);
        bar(out, bx + bw + 4.0, yy, bw, 9.0, *r, g.link_limit);
        out.push_str("</g>\n");
    }
    out.push_str("</g>\n");
}

fn legend(out: &mut String, app: &Application, width: f64, y: f64) -> f64 {
    let mut x = 16.0;
    let mut y = y;
    let items: [(&str, &str); 5] = [
        ("#5b7fa6", "CPU: load over an iteration (bar height)"),
        ("#8497ab", "link use of capacity, send | receive"),
        ("#e65100", "70 % of its limit or more"),
        (RED, "over its limit, or a diagnostic points here"),
        ("#bbbbbb", "faded: unused node"),
    ];
    for (c, t) in items {
        let _ = writeln!(out, "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{c}\"/>", y - 9.0);
        let _ = writeln!(out, "<text x=\"{:.1}\" y=\"{y:.1}\" {FONT} font-size=\"11\">{}</text>", x + 14.0, esc(t));
        x += 28.0 + t.len() as f64 * 6.0;
    }
    y += 18.0;
    // Group colours (the first 40 groups).
    x = 16.0;
    let shown = app.groups.len().min(40);
    for (gi, g) in app.groups.iter().enumerate().take(shown) {
        let w = 24.0 + g.name.len() as f64 * 6.0;
        if x + w > width - 16.0 {
            x = 16.0;
            y += 16.0;
        }
        let _ = writeln!(
            out,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/>",
            y - 9.0,
            color(gi)
        );
        let _ =
            writeln!(out, "<text x=\"{:.1}\" y=\"{y:.1}\" {FONT} font-size=\"11\">{}</text>", x + 14.0, esc(&g.name));
        x += w;
    }
    if app.groups.len() > shown {
        let _ = writeln!(
            out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" {FONT} font-size=\"11\" fill=\"#555555\">… {} more groups</text>",
            app.groups.len() - shown
        );
    }
    y + 10.0
}

/// The cluster view of a mapping (and its report, for loads, traffic and problems).
pub fn cluster_svg(app: &Application, cluster: &Cluster, m: &Mapping, r: Option<&Report>) -> String {
    let f = facts(app, cluster, m, r);
    let g = geometry(cluster, &f, r.map(|r| r.headroom.link.min(1.0)).unwrap_or(1.0));
    let gap = 8.0;
    let width = (16.0 * 2.0 + g.cols as f64 * (g.card_w + gap)).max(900.0);
    let mut body = String::new();
    // Title and summary line.
    let used = f.iter().filter(|x| x.used).count();
    let verdict = match r.map(|r| r.verdict) {
        Some(verify::Verdict::Sound) => "sound".to_string(),
        Some(verify::Verdict::Unsound) => {
            let n = r.map(|r| r.diagnostics.iter().filter(|d| d.kind.is_error()).count()).unwrap_or(0);
            format!("UNSOUND ({n} errors)")
        }
        None => String::new(),
    };
    let _ = writeln!(
        body,
        "<text x=\"16\" y=\"26\" {FONT} font-size=\"18\" font-weight=\"bold\">{}</text>",
        esc(&format!("{} on {}", app.name, cluster.name))
    );
    let h = r.map(|r| r.headroom).unwrap_or_default();
    let head = if h.is_none() {
        String::new()
    } else {
        format!(" · headroom: links {}, CPUs {}", pct(h.link.min(1.0)), pct(h.cpu.min(1.0)))
    };
    let vcolor = if verdict.starts_with("UNSOUND") { RED } else { "#2e7d32" };
    let _ = writeln!(
        body,
        "<text x=\"16\" y=\"46\" {FONT} font-size=\"12\"><tspan fill=\"{vcolor}\" font-weight=\"bold\">{}</tspan> · {} objects · {used} of {} nodes used{}</text>",
        esc(&verdict),
        app.graph.node_count(),
        cluster.nodes.len(),
        esc(&head)
    );
    let mut y = legend(&mut body, app, width, 70.0) + 10.0;
    for class in classes(cluster) {
        let first = &cluster.nodes[class[0]];
        let nets: Vec<&str> = first.networks.iter().map(|&k| cluster.network(k).name.as_str()).collect();
        let names: Vec<&str> = class.iter().map(|&i| cluster.nodes[i].name.as_str()).collect();
        let cused = class.iter().filter(|&&i| f[i].used).count();
        let loads: Vec<f64> = class.iter().flat_map(|&i| f[i].cpus.iter().map(|c| c.0)).collect();
        let mean = loads.iter().sum::<f64>() / loads.len().max(1) as f64;
        let max = loads.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            body,
            "<text x=\"16\" y=\"{:.1}\" {FONT} font-size=\"13\" font-weight=\"bold\">{}</text>",
            y + 12.0,
            esc(&format!(
                "{} · {} x {} CPU(s) · {} — {} nodes, {cused} used, CPU load mean {}, max {}",
                fold_names(&names, 40),
                first.processor,
                first.cpus,
                nets.join(", "),
                class.len(),
                pct(mean),
                pct(max)
            ))
        );
        y += 20.0;
        for (k, &i) in class.iter().enumerate() {
            let (row, col) = (k / g.cols, k % g.cols);
            card(
                &mut body,
                app,
                cluster,
                i,
                &f[i],
                &g,
                16.0 + col as f64 * (g.card_w + gap),
                y + row as f64 * (g.card_h + gap),
            );
        }
        y += class.len().div_ceil(g.cols) as f64 * (g.card_h + gap) + 10.0;
    }
    let height = y + 10.0;
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n"
    );
    out += &body;
    out += "</svg>\n";
    out
}
