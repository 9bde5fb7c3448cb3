//! How text reports look: box characters or ASCII, colour, detail; legible numbers; folded
//! name lists (`node11..node18`, `fluid[0..31]`).

use comfy_table::{presets, CellAlignment, Table};

/// How to draw a text report. The CLI chooses (terminal or pipe, `--ascii`, `--color`,
/// `--verbose`); the library never looks at the environment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    /// Unicode box-drawing tables (else plain ASCII).
    pub unicode: bool,
    /// ANSI colours for verdicts and errors.
    pub color: bool,
    /// One table row per instance (else instances with identical numbers share a row).
    pub verbose: bool,
}

impl Style {
    /// Plain ASCII, no colour, folded tables: what a pipe gets.
    pub fn plain() -> Style {
        Style::default()
    }
    pub(crate) fn table(&self, header: &[&str]) -> Table {
        let mut t = Table::new();
        t.load_preset(if self.unicode { presets::UTF8_FULL_CONDENSED } else { presets::ASCII_FULL_CONDENSED });
        t.set_header(header.to_vec());
        t
    }
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn good(&self, s: &str) -> String {
        self.paint("1;32", s)
    }
    pub(crate) fn bad(&self, s: &str) -> String {
        self.paint("1;31", s)
    }
    pub(crate) fn warn(&self, s: &str) -> String {
        self.paint("1;33", s)
    }
    pub(crate) fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub(crate) fn times(&self) -> &'static str {
        if self.unicode {
            "×"
        } else {
            "x"
        }
    }
}

/// Right-aligns columns `from..`.
pub(crate) fn right(t: &mut Table, from: usize) {
    for i in from..t.column_count() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// A number for people: four significant digits, no trailing zeros, whole numbers from 1,000
/// on (17.543859649122805 -> 17.54, 25.000024999999997 -> 25, 457.142857 -> 457.1).
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() { "-".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    if a >= 999.95 {
        return format!("{x:.0}");
    }
    let digits = (3 - a.log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{x:.digits$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A share as a percentage with one decimal (0.9701 -> "97 %", 0.6857 -> "68.6 %").
pub fn pct(x: f64) -> String {
    if !x.is_finite() {
        return "inf".into();
    }
    let s = format!("{:.1}", x * 100.0);
    format!("{} %", s.trim_end_matches(".0"))
}

/// A name's trailing number: ("node", 11, 2) for "node11"; None without one.
fn numbered(name: &str) -> Option<(&str, u64, usize)> {
    let digits = name.bytes().rev().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 18 {
        return None;
    }
    let (p, d) = name.split_at(name.len() - digits);
    Some((p, d.parse().ok()?, digits))
}

fn successor(a: &str, b: &str) -> bool {
    match (numbered(a), numbered(b)) {
        (Some((pa, na, wa)), Some((pb, nb, wb))) => pa == pb && nb == na + 1 && (wa == wb || !b.starts_with('0')),
        _ => false,
    }
}

/// Runs of consecutively numbered names (`node05..node08`), each with how many times its
/// names occur (the count, when all of the run's names occur equally often).
pub(crate) fn runs(names: &[&str]) -> Vec<(String, String, usize)> {
    // Repeats first: [(name, count)], in order.
    let mut rle: Vec<(&str, usize)> = Vec::new();
    for &n in names {
        match rle.last_mut() {
            Some((m, c)) if *m == n => *c += 1,
            _ => rle.push((n, 1)),
        }
    }
    let mut out: Vec<(String, String, usize)> = Vec::new();
    let mut i = 0;
    while i < rle.len() {
        let (first, count) = rle[i];
        let mut j = i;
        while j + 1 < rle.len() && rle[j + 1].1 == count && successor(rle[j].0, rle[j + 1].0) {
            j += 1;
        }
        out.push((first.to_string(), rle[j].0.to_string(), count));
        i = j + 1;
    }
    out
}

/// A folded part that is one name (no range, no list).
fn a_is_b(r: &str) -> bool {
    !r.contains("..") && !r.contains(", ")
}

/// Names folded into ranges: `node11..node18 (4 each)`, `node01, node03`; at most `max` chars
/// before the rest is counted (`…, 12 more`).
pub fn fold_names(names: &[&str], max: usize) -> String {
    let parts: Vec<String> = runs(names)
        .into_iter()
        .map(|(a, b, c)| {
            let r = if a == b {
                a
            } else if successor(&a, &b) {
                format!("{a}, {b}")
            } else {
                format!("{a}..{b}")
            };
            match c {
                1 => r,
                _ if a_is_b(&r) => format!("{r} ({c})"),
                _ => format!("{r} ({c} each)"),
            }
        })
        .collect();
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        if out.len() + sep.len() + p.len() > max && i > 0 {
            out += &format!(", … {} more", parts.len() - i);
            return out;
        }
        out += sep;
        out += p;
    }
    out
}

/// Distinct node names in first-seen order, folded (`node11..node18`).
pub fn fold_distinct(names: &[&str], max: usize) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for &n in names {
        if !seen.contains(&n) {
            seen.push(n);
        }
    }
    seen.sort_by(|a, b| natural(a, b));
    fold_names(&seen, max)
}

/// Instance indices as ranges: `0..31`, `0..3,8..11`, `5`.
pub fn fold_indices(ix: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ix.len() {
        let mut j = i;
        while j + 1 < ix.len() && ix[j + 1] == ix[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ix[i].to_string()
        } else if j == i + 1 {
            format!("{},{}", ix[i], ix[j])
        } else {
            format!("{}..{}", ix[i], ix[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Natural order of names: `latest[2]` before `latest[10]`, `node9` before `node10`.
pub fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[i - 1].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for (x, y) in ca.iter().zip(&cb) {
        let o = match (x, y) {
            ((true, p), (true, q)) => {
                let (p, q) = (p.trim_start_matches('0'), q.trim_start_matches('0'));
                p.len().cmp(&q.len()).then(p.cmp(q))
            }
            _ => x.1.cmp(y.1),
        };
        if o != std::cmp::Ordering::Equal {
            return o;
        }
    }
    ca.len().cmp(&cb.len()).then(a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(17.543859649122805), "17.54");
        assert_eq!(num(25.000024999999997), "25");
        assert_eq!(num(457.142857), "457.1");
        assert_eq!(num(0.97), "0.97");
        assert_eq!(num(1000.0), "1000");
        assert_eq!(num(291666.0), "291666");
        assert_eq!(num(0.0001234), "0.0001234");
        assert_eq!(pct(0.97), "97 %");
        assert_eq!(pct(0.68571), "68.6 %");
    }

    #[test]
    fn folding() {
        let n: Vec<String> = (11..=18).flat_map(|i| std::iter::repeat_n(format!("node{i}"), 4)).collect();
        let n: Vec<&str> = n.iter().map(|s| s.as_str()).collect();
        assert_eq!(fold_names(&n, 80), "node11..node18 (4 each)");
        assert_eq!(fold_names(&["node05", "node06", "node07", "node08"], 80), "node05..node08");
        assert_eq!(fold_names(&["node01", "node03"], 80), "node01, node03");
        assert_eq!(fold_names(&["node05", "node06", "node06", "node07"], 80), "node05, node06 (2), node07");
        assert_eq!(fold_names(&["a", "b", "c"], 4), "a, b, … 1 more");
        assert_eq!(fold_indices(&[0, 1, 2, 3, 8, 9, 10]), "0..3,8..10");
        assert_eq!(natural("latest[2]", "latest[10]"), std::cmp::Ordering::Less);
    }
}
