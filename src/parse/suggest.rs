//! "Did you mean ...?": the closest known spelling of a misspelt name or unit.

/// Candidates compared per suggestion (a suggestion is a courtesy; a 100,000-node cluster is
/// searched only this far).
const MAX_CANDIDATES: usize = 10_000;

/// The candidate closest to `word`: equal ignoring case, else within an edit distance of about a
/// third of the word (at least 1; adjacent transpositions count as one edit). Ties go to the
/// first candidate. None when nothing is close.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w: Vec<char> = word.chars().flat_map(char::to_lowercase).collect();
    if w.is_empty() || w.len() > 64 {
        return None;
    }
    // One character is too little to guess from; two may lack one (`b6` for `b06`).
    let limit = if w.len() < 2 { 0 } else { (w.len() / 3).max(1) };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates.into_iter().take(MAX_CANDIDATES) {
        if c == word {
            continue;
        }
        let cl: Vec<char> = c.chars().flat_map(char::to_lowercase).collect();
        if cl.len().abs_diff(w.len()) > limit || other_number(&w, &cl) {
            continue;
        }
        let d = distance(&w, &cl);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Whether two names differ only in their numbers, and the numbers differ: `n9` and `n1` are two
/// nodes, not a typo (but `b6` may well be `b06`).
fn other_number(a: &[char], b: &[char]) -> bool {
    let letters = |x: &[char]| x.iter().filter(|c| !c.is_ascii_digit()).copied().collect::<Vec<_>>();
    let numbers = |x: &[char]| -> Vec<u128> {
        x.split(|c| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .map(|s| s.iter().collect::<String>().parse().unwrap_or(u128::MAX))
            .collect()
    };
    letters(a) == letters(b) && numbers(a) != numbers(b)
}

/// " (did you mean \"x\"?)" or "".
pub fn hint<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates).map(|c| format!(" (did you mean \"{c}\"?)")).unwrap_or_default()
}

/// Names for a "known: ..." list: the first 12, then how many more.
pub fn listing<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut shown: Vec<&str> = Vec::new();
    let mut more = 0usize;
    for n in names {
        if shown.len() < 12 {
            shown.push(n);
        } else {
            more += 1;
        }
    }
    match (shown.is_empty(), more) {
        (true, _) => "none".into(),
        (false, 0) => shown.join(", "),
        (false, m) => format!("{}, ... ({m} more)", shown.join(", ")),
    }
}

/// Optimal-string-alignment distance (Levenshtein with adjacent transpositions).
fn distance(a: &[char], b: &[char]) -> usize {
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[n][m]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_spellings_only() {
        assert_eq!(closest("epic", ["xeon", "epyc"]), Some("epyc"));
        assert_eq!(closest("Xeon", ["opteron", "xeon"]), Some("xeon"));
        assert_eq!(closest("laod", ["name", "load"]), Some("load"));
        assert_eq!(closest("b6", ["b06", "b07"]), Some("b06"));
        assert_eq!(closest("n9", ["n1", "n2"]), None);
        assert_eq!(closest("node9", ["node09", "node10"]), Some("node09"));
        assert_eq!(closest("gpu", ["xeon", "opteron"]), None);
        assert_eq!(closest("", ["a"]), None);
        assert_eq!(closest("c", ["a", "b"]), None);
        assert_eq!(closest("A", ["a", "b"]), Some("a"));
    }
}
