//! A dense revised primal simplex for the pattern LP's column generation (`patterns::bound`,
//! the dive's `residual_lp`): rows `Σ a x >= b`, variables `x >= 0`, columns added between
//! solves, each solve starting from the previous optimal basis (still feasible: a new column
//! enters at zero), so a round of column generation costs a few pivots.
//!
//! Why hand-written: the master has few rows (module classes + node classes + hub rows, tens)
//! and up to thousands of columns; clarabel (interior point) has no warm start and factorises
//! a system the size of the columns (three rows per column with its bounds) every round;
//! `microlp` warm-starts only after adding constraints; HiGHS needs a C++ build. Measured on
//! unseen realistic 100/32 s217 (30 s): 79 master solves in 4 ms in all. (The interior point's
//! third of that run is the class and node-by-node relaxations' LPs: 238 solves, 10.4 s.)
//! The multipliers it returns are certified by weak duality whatever their accuracy
//! (`dual_bound`), so a numerical slip can weaken a bound, never make it wrong.
//!
//! Method: the basis inverse is kept dense (m x m) and updated by Gauss-Jordan pivots,
//! recomputed from scratch every `REFACTOR` pivots; Dantzig pricing, switching to Bland's rule
//! (smallest index enters, smallest index leaves among ties) after `DEGENERATE` degenerate
//! pivots in a row, until one makes progress. Each row has a surplus variable (`Σ a x − s = b`);
//! the starting basis is the surpluses of rows with b <= 0 and, for each row with b > 0, a
//! column with one positive entry on that row only (the master's artificial columns).

use std::time::Instant;

/// Pivots between two recomputations of the basis inverse.
const REFACTOR: usize = 64;
/// Degenerate pivots in a row before Bland's rule.
const DEGENERATE: usize = 40;
/// Pivots per solve at most.
const PIVOTS: usize = 50_000;
/// Reduced cost below −TOL enters.
const TOL: f64 = 1e-9;
/// Pivot elements at most this (in magnitude) are not pivoted on.
const PIVOT_TOL: f64 = 1e-9;

/// A column: its cost and its entries (row, coefficient).
type Col = (f64, Vec<(usize, f64)>);

pub(super) struct Simplex {
    m: usize,
    rhs: Vec<f64>,
    cols: Vec<Col>,
    /// Per row, its basic variable: `i < m` is row i's surplus, `m + j` column j.
    basis: Vec<usize>,
    /// Per variable (surpluses first), whether it is basic.
    basic: Vec<bool>,
    /// The basis inverse, row-major.
    binv: Vec<f64>,
    /// The basic variables' values.
    xb: Vec<f64>,
    /// Pivots since the basis inverse was last recomputed.
    since: usize,
    started: bool,
}

impl Simplex {
    /// An LP with rows `Σ a x >= rhs` and no columns yet.
    pub(super) fn new(rhs: Vec<f64>) -> Simplex {
        let m = rhs.len();
        Simplex {
            m,
            rhs,
            cols: Vec::new(),
            basis: (0..m).collect(),
            basic: vec![true; m],
            binv: Vec::new(),
            xb: Vec::new(),
            since: 0,
            started: false,
        }
    }

    /// Adds a column (nonbasic, at zero); returns its index.
    pub(super) fn add(&mut self, cost: f64, mut entries: Vec<(usize, f64)>) -> usize {
        entries.sort_by_key(|e| e.0);
        let mut merged: Vec<(usize, f64)> = Vec::with_capacity(entries.len());
        for (i, a) in entries {
            debug_assert!(i < self.m);
            match merged.last_mut() {
                Some(last) if last.0 == i => last.1 += a,
                _ => merged.push((i, a)),
            }
        }
        self.cols.push((cost, merged));
        self.basic.push(false);
        self.cols.len() - 1
    }

    fn entries(&self, v: usize) -> (f64, std::borrow::Cow<'_, [(usize, f64)]>) {
        if v < self.m {
            (0.0, std::borrow::Cow::Owned(vec![(v, -1.0)]))
        } else {
            let (c, e) = &self.cols[v - self.m];
            (*c, std::borrow::Cow::Borrowed(e.as_slice()))
        }
    }

    /// The starting basis (see the module's documentation); false when a row with a positive
    /// right-hand side has no unit column.
    fn start(&mut self) -> bool {
        for i in 0..self.m {
            if self.rhs[i] > 0.0 {
                let unit = self.cols.iter().position(|(_, e)| e.len() == 1 && e[0].0 == i && e[0].1 > 0.0);
                let Some(j) = unit else { return false };
                self.basic[i] = false;
                self.basic[self.m + j] = true;
                self.basis[i] = self.m + j;
            }
        }
        self.started = true;
        self.refactor()
    }

    /// Recomputes the basis inverse and the basic values (false: the basis is singular).
    fn refactor(&mut self) -> bool {
        let m = self.m;
        // [B | I] -> [I | B^-1] by Gauss-Jordan with partial pivoting.
        let w = 2 * m;
        let mut a = vec![0.0; m * w];
        for (r, &v) in self.basis.iter().enumerate() {
            let (_, e) = self.entries(v);
            for &(i, x) in e.iter() {
                a[i * w + r] = x;
            }
        }
        for i in 0..m {
            a[i * w + m + i] = 1.0;
        }
        for c in 0..m {
            let p = (c..m).max_by(|&x, &y| a[x * w + c].abs().total_cmp(&a[y * w + c].abs())).expect("rows");
            if a[p * w + c].abs() < 1e-12 {
                return false;
            }
            if p != c {
                for k in 0..w {
                    a.swap(c * w + k, p * w + k);
                }
            }
            let d = a[c * w + c];
            for k in 0..w {
                a[c * w + k] /= d;
            }
            for r in 0..m {
                if r != c {
                    let f = a[r * w + c];
                    if f != 0.0 {
                        for k in 0..w {
                            a[r * w + k] -= f * a[c * w + k];
                        }
                    }
                }
            }
        }
        // The row operations (swaps included) that turned B into I turned I into B^-1; its
        // row r belongs to the basic variable of position r.
        self.binv = vec![0.0; m * m];
        for r in 0..m {
            self.binv[r * m..(r + 1) * m].copy_from_slice(&a[r * w + m..(r + 1) * w]);
        }
        self.xb = (0..m).map(|r| (0..m).map(|i| self.binv[r * m + i] * self.rhs[i]).sum::<f64>()).collect();
        for x in &mut self.xb {
            if *x < 0.0 && *x > -1e-9 {
                *x = 0.0;
            }
        }
        self.since = 0;
        self.xb.iter().all(|&x| x >= 0.0)
    }

    /// The simplex multipliers y = c_B B^-1 (the rows' duals, >= 0 at an optimum).
    pub(super) fn duals(&self) -> Vec<f64> {
        let m = self.m;
        let mut y = vec![0.0; m];
        for (r, &v) in self.basis.iter().enumerate() {
            let c = if v < m { 0.0 } else { self.cols[v - m].0 };
            if c != 0.0 {
                for (i, yi) in y.iter_mut().enumerate() {
                    *yi += c * self.binv[r * m + i];
                }
            }
        }
        y
    }

    /// The columns' values.
    pub(super) fn primal(&self) -> Vec<f64> {
        let mut x = vec![0.0; self.cols.len()];
        for (r, &v) in self.basis.iter().enumerate() {
            if v >= self.m {
                x[v - self.m] = self.xb[r].max(0.0);
            }
        }
        x
    }

    /// Solves from the current basis: Some(true) at an optimum, Some(false) when `end` or the
    /// pivot limit came first (the basis stays feasible), None when the LP cannot be solved
    /// this way (no starting basis, unbounded, a singular basis).
    pub(super) fn solve(&mut self, end: Instant) -> Option<bool> {
        if !self.started && !self.start() {
            return None;
        }
        let m = self.m;
        let mut degenerate = 0usize;
        for pivot in 0..PIVOTS {
            if pivot % 64 == 63 && Instant::now() >= end {
                return Some(false);
            }
            if self.since >= REFACTOR && !self.refactor() {
                return None;
            }
            let y = self.duals();
            let bland = degenerate >= DEGENERATE;
            // Entering: the most negative reduced cost (Bland: the first negative one).
            let mut enter: Option<(usize, f64)> = None;
            let nv = m + self.cols.len();
            for v in 0..nv {
                if self.basic[v] {
                    continue;
                }
                let d = if v < m {
                    y[v]
                } else {
                    let (c, e) = &self.cols[v - m];
                    c - e.iter().map(|&(i, a)| a * y[i]).sum::<f64>()
                };
                if d < -TOL && enter.is_none_or(|(_, b)| d < b) {
                    enter = Some((v, d));
                    if bland {
                        break;
                    }
                }
            }
            let Some((q, _)) = enter else { return Some(true) };
            // Its column in the basis: alpha = B^-1 a_q.
            let (_, e) = self.entries(q);
            let mut alpha = vec![0.0; m];
            for (r, al) in alpha.iter_mut().enumerate() {
                *al = e.iter().map(|&(i, a)| self.binv[r * m + i] * a).sum();
            }
            // Leaving: the least ratio; ties to the larger pivot (Bland: the smaller variable).
            let mut leave: Option<(usize, f64)> = None;
            for r in 0..m {
                if alpha[r] > PIVOT_TOL {
                    let t = self.xb[r].max(0.0) / alpha[r];
                    let better = match leave {
                        None => true,
                        Some((l, lt)) => {
                            if t < lt - 1e-12 {
                                true
                            } else if t <= lt + 1e-12 {
                                if bland {
                                    self.basis[r] < self.basis[l]
                                } else {
                                    alpha[r] > alpha[l]
                                }
                            } else {
                                false
                            }
                        }
                    };
                    if better {
                        leave = Some((r, t));
                    }
                }
            }
            let (r, theta) = leave?;
            degenerate = if theta <= 1e-12 { degenerate + 1 } else { 0 };
            for (k, x) in self.xb.iter_mut().enumerate() {
                if k != r {
                    *x = (*x - theta * alpha[k]).max(0.0);
                }
            }
            self.xb[r] = theta;
            let p = alpha[r];
            for k in 0..m {
                self.binv[r * m + k] /= p;
            }
            let pivot_row: Vec<f64> = self.binv[r * m..(r + 1) * m].to_vec();
            for (k, &f) in alpha.iter().enumerate() {
                if k != r && f != 0.0 {
                    for (b, &p) in self.binv[k * m..(k + 1) * m].iter_mut().zip(&pivot_row) {
                        *b -= f * p;
                    }
                }
            }
            self.basic[self.basis[r]] = false;
            self.basic[q] = true;
            self.basis[r] = q;
            self.since += 1;
        }
        Some(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    /// min x0 + x1 + 10 a0 + 10 a1 s.t. 2 x0 + x1 + a0 >= 4, x0 + 3 x1 + a1 >= 6: optimum at
    /// the intersection 2x0 + x1 = 4, x0 + 3x1 = 6: x0 = 1.2, x1 = 1.6, value 2.8; duals from
    /// y A = c on the basis: 2 y0 + y1 = 1, y0 + 3 y1 = 1: y0 = 0.4, y1 = 0.2 (hand-solved).
    #[test]
    fn solves_a_two_row_lp_and_its_duals() {
        let mut s = Simplex::new(vec![4.0, 6.0]);
        s.add(10.0, vec![(0, 1.0)]);
        s.add(10.0, vec![(1, 1.0)]);
        s.add(1.0, vec![(0, 2.0), (1, 1.0)]);
        s.add(1.0, vec![(0, 1.0), (1, 3.0)]);
        assert_eq!(s.solve(far()), Some(true));
        let x = s.primal();
        assert!((x[2] - 1.2).abs() < 1e-9 && (x[3] - 1.6).abs() < 1e-9, "{x:?}");
        let y = s.duals();
        assert!((y[0] - 0.4).abs() < 1e-9 && (y[1] - 0.2).abs() < 1e-9, "{y:?}");
    }

    /// Warm start: adding a column that prices out moves the optimum. With only x0 (and the
    /// artificials), x0 >= 2 and x0 >= 6 give x0 = 6, value 6; adding x1 gives 2.8 as above.
    #[test]
    fn a_column_added_after_a_solve_is_taken() {
        let mut s = Simplex::new(vec![4.0, 6.0]);
        s.add(10.0, vec![(0, 1.0)]);
        s.add(10.0, vec![(1, 1.0)]);
        s.add(1.0, vec![(0, 2.0), (1, 1.0)]);
        assert_eq!(s.solve(far()), Some(true));
        assert!((s.primal()[2] - 6.0).abs() < 1e-9);
        s.add(1.0, vec![(0, 1.0), (1, 3.0)]);
        assert_eq!(s.solve(far()), Some(true));
        let x = s.primal();
        assert!((x[2] + x[3] - 2.8).abs() < 1e-9, "{x:?}");
    }

    /// A capacity row (−x0 − x1 >= −1) binding: min x0 + 2 x1 + 100 a s.t. x0 + x1 + a >= 3,
    /// −x0 >= −1 (x0 at most 1): x0 = 1, then x1 = 2, value 5; the capacity row's dual is
    /// 2 − 1 = 1 (x0 saves one per unit over x1), the cover's 2.
    #[test]
    fn a_less_than_row_gets_a_nonnegative_dual() {
        let mut s = Simplex::new(vec![3.0, -1.0]);
        s.add(100.0, vec![(0, 1.0)]);
        s.add(1.0, vec![(0, 1.0), (1, -1.0)]);
        s.add(2.0, vec![(0, 1.0)]);
        assert_eq!(s.solve(far()), Some(true));
        let x = s.primal();
        assert!((x[1] - 1.0).abs() < 1e-9 && (x[2] - 2.0).abs() < 1e-9, "{x:?}");
        let y = s.duals();
        assert!((y[0] - 2.0).abs() < 1e-9 && (y[1] - 1.0).abs() < 1e-9, "{y:?}");
    }

    /// A second method: on random covering LPs shaped like the pattern master (covering rows
    /// with artificials, capacity rows, columns added in batches between warm solves), the
    /// simplex's optimum equals clarabel's interior point's (each solved from scratch), and
    /// its multipliers certify that optimum (`dual_bound` within 1e-5 of it).
    #[test]
    fn warm_solves_match_the_interior_point_on_random_masters() {
        use super::super::{dual_bound, ipm_solve, Rows};
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut compared = 0;
        for _ in 0..200 {
            let (nc, nk) = (1 + next(6) as usize, 1 + next(3) as usize);
            let sizes: Vec<f64> = (0..nc).map(|_| 1.0 + next(8) as f64).collect();
            let caps: Vec<f64> = (0..nk).map(|_| 1.0 + next(5) as f64).collect();
            let big = caps.iter().sum::<f64>() + 1.0;
            let rhs: Vec<f64> = sizes.iter().copied().chain(caps.iter().map(|c| -c)).collect();
            let mut s = Simplex::new(rhs.clone());
            for c in 0..nc {
                s.add(big, vec![(c, 1.0)]);
            }
            let mut cols: Vec<Col> = (0..nc).map(|c| (big, vec![(c, 1.0)])).collect();
            for _batch in 0..4 {
                for _ in 0..1 + next(6) {
                    let k = next(nk as u64) as usize;
                    let mut e: Vec<(usize, f64)> = Vec::new();
                    for c in 0..nc {
                        if next(2) == 0 {
                            e.push((c, 1.0 + next(3) as f64));
                        }
                    }
                    e.push((nc + k, -1.0));
                    s.add(1.0, e.clone());
                    cols.push((1.0, e));
                }
                assert_eq!(s.solve(far()), Some(true));
                let x = s.primal();
                let value: f64 = x.iter().zip(&s.cols).map(|(x, c)| x * c.0).sum();
                // The same LP from scratch, for clarabel, bounded as `master` bounds it: an
                // artificial by its class's size, a column by `big` (its capacity row binds
                // first).
                let mut r = Rows {
                    upper: (0..cols.len()).map(|j| if j < nc { sizes[j] } else { big }).collect(),
                    cost: cols.iter().map(|c| c.0).collect(),
                    rows: Vec::new(),
                    used: Vec::new(),
                    terms: 0,
                    blocks: Vec::new(),
                };
                for (i, &b) in rhs.iter().enumerate() {
                    let t: Vec<(usize, f64)> = cols
                        .iter()
                        .enumerate()
                        .flat_map(|(j, c)| c.1.iter().filter(|e| e.0 == i).map(move |e| (j, e.1)))
                        .collect();
                    r.ge(t, b);
                }
                let (_, xi, solved) = ipm_solve(&r, Duration::from_secs(10)).expect("clarabel");
                assert!(solved, "{:?}", r.rows);
                let ipm: f64 = xi.iter().zip(&r.cost).map(|(x, c)| x * c).sum();
                assert!((value - ipm).abs() < 1e-5 * value.max(1.0), "simplex {value}, interior point {ipm}");
                let certified = dual_bound(&r, &s.duals());
                assert!(certified <= value + 1e-9 && certified > value - 1e-5, "{certified} for {value}");
                compared += 1;
            }
        }
        assert_eq!(compared, 800);
    }

    /// No unit column for a row that needs one: no starting basis.
    #[test]
    fn no_starting_basis_is_none() {
        let mut s = Simplex::new(vec![1.0, 0.0]);
        s.add(1.0, vec![(0, 2.0), (1, 1.0)]);
        assert_eq!(s.solve(far()), None);
    }
}
