//! Maximum flow, shared by the class bound (`bound`) and the counting over must-share groups
//! (`units`).

/// A maximum flow (Dinic's algorithm) on a small graph: the class bound's stacking cap
/// (a matching) and Hall sets (a minimum cut, from `reachable`), and the units' placement of
/// must-share groups on nodes (a b-matching).
pub(crate) struct Flow {
    head: Vec<usize>,
    /// Per edge: head vertex, capacity left, next edge from the same tail (usize::MAX: none).
    to: Vec<usize>,
    cap: Vec<i64>,
    next: Vec<usize>,
}

impl Flow {
    pub(crate) fn new(vertices: usize) -> Flow {
        Flow { head: vec![usize::MAX; vertices], to: Vec::new(), cap: Vec::new(), next: Vec::new() }
    }
    pub(crate) fn edge(&mut self, u: usize, v: usize, c: i64) {
        for (a, b, c) in [(u, v, c), (v, u, 0)] {
            self.to.push(b);
            self.cap.push(c);
            self.next.push(self.head[a]);
            self.head[a] = self.to.len() - 1;
        }
    }
    pub(crate) fn max_flow(&mut self, s: usize, t: usize) -> i64 {
        let nv = self.head.len();
        let mut total = 0;
        loop {
            let mut level = vec![usize::MAX; nv];
            level[s] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                let mut e = self.head[u];
                while e != usize::MAX {
                    if self.cap[e] > 0 && level[self.to[e]] == usize::MAX {
                        level[self.to[e]] = level[u] + 1;
                        queue.push_back(self.to[e]);
                    }
                    e = self.next[e];
                }
            }
            if level[t] == usize::MAX {
                return total;
            }
            let mut it = self.head.clone();
            loop {
                let f = self.push(s, t, i64::MAX, &level, &mut it);
                if f == 0 {
                    break;
                }
                total += f;
            }
        }
    }
    /// The vertices `s` reaches in the residual graph (after `max_flow`: a minimum cut's side).
    pub(crate) fn reachable(&self, s: usize) -> Vec<bool> {
        let mut seen = vec![false; self.head.len()];
        seen[s] = true;
        let mut stack = vec![s];
        while let Some(u) = stack.pop() {
            let mut e = self.head[u];
            while e != usize::MAX {
                if self.cap[e] > 0 && !seen[self.to[e]] {
                    seen[self.to[e]] = true;
                    stack.push(self.to[e]);
                }
                e = self.next[e];
            }
        }
        seen
    }
    /// One augmenting path of the level graph, by depth-first search (recursion depth: the
    /// path's length, 3 edges in every use).
    fn push(&mut self, u: usize, t: usize, f: i64, level: &[usize], it: &mut [usize]) -> i64 {
        if u == t {
            return f;
        }
        while it[u] != usize::MAX {
            let e = it[u];
            let v = self.to[e];
            if self.cap[e] > 0 && level[v] == level[u] + 1 {
                let d = self.push(v, t, f.min(self.cap[e]), level, it);
                if d > 0 {
                    self.cap[e] -= d;
                    self.cap[e ^ 1] += d;
                    return d;
                }
            }
            it[u] = self.next[e];
        }
        0
    }
}
