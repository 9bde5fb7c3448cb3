#!/usr/bin/env python3
"""Side-by-side reference: flowmap's node minimisation against OR-Tools CP-SAT.

This is a *reference* script for humans comparing solvers. It is not part of the
tests or of CI, and nothing in flowmap depends on it.

For each instance (APP CLUSTER) it:

1. runs ``target/release/flowmap export-csp APP CLUSTER``, which prints the static CSP
   that flowmap posts to pumpkin as solver-neutral JSON (placement, connections,
   traffic, loads, self-paced CPUs, first-round / keep-up rows, filter locality);
2. builds the same constraints as a CP-SAT model, minimises the number of used
   nodes (fixed random seed, ``--workers`` workers, ``--time-limit`` seconds) and
   records the median wall time of ``--runs`` solves, the status, the objective and
   the best bound;
3. times ``flowmap solve --minimize nodes --format json APP CLUSTER`` the same
   number of times (median wall clock, same time limit) and reads its status,
   ``nodes_used`` and ``bound``;
4. cross-checks the optima (flowmap adds a verifier loop on top of the static model,
   so its optimum can only be >= CP-SAT's) and runs ``flowmap check`` on the CP-SAT
   mapping, which tells whether the static optimum is also sound;
5. prints one table row per instance, with the ratio CP-SAT time / flowmap time.

Run it through ``benches/cpsat-reference``, which creates ``benches/.venv`` with
OR-Tools on first use. ``--csp FILE.json`` solves a hand-written export with
CP-SAT only (no flowmap needed), for testing the model itself.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import ortools
from ortools.sat.python import cp_model

REPO = Path(__file__).resolve().parent.parent
FLOWMAP = REPO / "target" / "release" / "flowmap"

DEFAULT_INSTANCES = [
    ("models/fluid-particle.toml", "clusters/lifo-2007.toml"),
    ("models/generated/gen-50x16-feasible-s1.toml", "clusters/generated/gen-50x16-feasible-s1.toml"),
]
EXTRA_INSTANCES = [  # added by --all
    ("models/generated/gen-300x64-feasible-s1.toml", "clusters/generated/gen-300x64-feasible-s1.toml"),
]

# Scalings, as in flowmap's CSP (src/csp/mod.rs): weights are floored, so each scaled
# constraint is a relaxation of the real-valued one.
TRAFFIC_SCALE = 1_000_000
LOAD_SCALE = 10_000
EPS = 1e-9  # the verifier's relative tolerance


# --------------------------------------------------------------------------- flowmap


def ensure_binary() -> None:
    """Builds target/release/flowmap with `cargo build --release` if it is missing."""
    if FLOWMAP.exists():
        return
    print("target/release/flowmap missing: cargo build --release", file=sys.stderr)
    r = subprocess.run(["cargo", "build", "--release"], cwd=REPO)
    if r.returncode != 0 or not FLOWMAP.exists():
        sys.exit("cargo build --release failed (src/ may be mid-edit: retry in a few minutes)")


def export_csp(app: str, cluster: str) -> dict:
    """The static CSP of one instance, from `flowmap export-csp`."""
    r = subprocess.run([str(FLOWMAP), "export-csp", app, cluster], cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        hint = " (target/release/flowmap predates export-csp: cargo build --release)" if "unrecognized" in r.stderr else ""
        raise RuntimeError(f"flowmap export-csp {app} {cluster} exited {r.returncode}: {r.stderr.strip()}{hint}")
    return json.loads(r.stdout)


@dataclass
class FlowmapResult:
    status: str = "?"
    objective: int | None = None
    bound: int | None = None
    times: list[float] = field(default_factory=list)
    exit_code: int | None = None

    @property
    def time(self) -> float:
        return statistics.median(self.times) if self.times else math.nan


def run_flowmap(app: str, cluster: str, runs: int, time_limit: float) -> FlowmapResult:
    """Times `flowmap solve --minimize nodes` (wall clock); exit 0/1/3 are all results."""
    cmd = [str(FLOWMAP), "solve", "--minimize", "nodes", "--format", "json", "--time-limit", str(time_limit), app, cluster]
    res = FlowmapResult()
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        res.times.append(time.perf_counter() - t0)
        res.exit_code = r.returncode
        if r.returncode not in (0, 1, 3):
            res.status = f"exit {r.returncode}"
            print(f"flowmap solve {app} {cluster}: exit {r.returncode}: {r.stderr.strip()}", file=sys.stderr)
            return res
        out = json.loads(r.stdout)
        res.status, res.objective, res.bound = out.get("status", "?"), out.get("nodes_used"), out.get("bound")
    return res


def check_mapping(app: str, cluster: str, mapping_toml: str) -> str:
    """Runs `flowmap check` on a mapping: "sound", "unsound" or an error note."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(mapping_toml)
        path = f.name
    try:
        r = subprocess.run([str(FLOWMAP), "check", app, cluster, path], cwd=REPO, capture_output=True, text=True)
    finally:
        os.unlink(path)
    if r.returncode == 0:
        return "sound"
    if r.returncode == 1:
        return "unsound"
    return f"check exit {r.returncode}: {r.stderr.strip()[:200]}"


# --------------------------------------------------------------------------- CP-SAT model


@dataclass
class CspModel:
    model: cp_model.CpModel
    x: list[dict[int, cp_model.IntVar]]  # x[o][n]: object o on node n
    y: list[dict[int, cp_model.IntVar]]  # y[e][k]: edge e on network k
    local: list[cp_model.IntVar | None]  # local[e]: both ends on one node
    used: dict[int, cp_model.IntVar]  # used[n]: some object on node n
    objective: cp_model.LinearExpr | int


def build_model(csp: dict) -> CspModel:
    """The CP-SAT model of the exported constraint families, minimising used nodes."""
    m = cp_model.CpModel()
    nodes, nets, objects, edges = csp["nodes"], csp["networks"], csp["objects"], csp["edges"]
    on_net = [set(n["networks"]) for n in nodes]

    # Placement: each object on exactly one node of its domain.
    x: list[dict[int, cp_model.IntVar]] = []
    for oi, o in enumerate(objects):
        xo = {n: m.NewBoolVar(f"x[{oi}][{n}]") for n in o["domain"]}
        m.AddExactlyOne(xo.values())
        x.append(xo)

    # Connections: local iff both ends share a node, else exactly one candidate network
    # that both ends' nodes are on.
    y: list[dict[int, cp_model.IntVar]] = []
    local: list[cp_model.IntVar | None] = []
    for ei, e in enumerate(edges):
        s, d = e["src"], e["dst"]
        ye = {k: m.NewBoolVar(f"y[{ei}][{k}]") for k in e["networks"]}
        loc = m.NewBoolVar(f"local[{ei}]") if e["can_local"] else None
        choices = list(ye.values()) + ([loc] if loc is not None else [])
        if not choices:
            m.AddBoolOr([])  # the ends can never meet: infeasible
        else:
            m.AddExactlyOne(choices)
        for n, xs in x[s].items():
            xd = x[d].get(n)
            if loc is None:
                if xd is not None:
                    m.AddBoolOr([xs.Not(), xd.Not()])
            elif xd is None:
                m.AddImplication(loc, xs.Not())
            else:
                m.AddBoolOr([xs.Not(), xd.Not(), loc])  # same node -> local
                m.AddBoolOr([loc.Not(), xs.Not(), xd])  # local -> same node
        for k, yk in ye.items():
            for end in (s, d):
                for n, xn in x[end].items():
                    if k not in on_net[n]:
                        m.AddBoolOr([yk.Not(), xn.Not()])
        y.append(ye)
        local.append(loc)

    # Traffic: per node, network and direction, the non-local bandwidth fits the network's.
    for k, net in enumerate(nets):
        cap = net["bandwidth"]
        for n in range(len(nodes)):
            if k not in on_net[n]:
                continue
            for end_key in ("src", "dst"):
                terms = []
                for ei, e in enumerate(edges):
                    xn, yk = x[e[end_key]].get(n), y[ei].get(k)
                    if xn is None or yk is None or e["bw"] <= 0:
                        continue
                    terms.append((e["bw"], xn, yk))
                if not terms or sum(t[0] for t in terms) <= cap:
                    continue
                weights, lits = [], []
                for bw, xn, yk in terms:
                    if bw > cap * (1 + EPS) + 1e-15:
                        m.AddBoolOr([xn.Not(), yk.Not()])
                        continue
                    # z >= xn AND yk is enough: z has a positive weight in a <= constraint.
                    z = m.NewBoolVar("")
                    m.AddBoolOr([z, xn.Not(), yk.Not()])
                    weights.append(min(math.floor(bw / cap * TRAFFIC_SCALE), TRAFFIC_SCALE))
                    lits.append(z)
                if lits:
                    m.Add(cp_model.LinearExpr.WeightedSum(lits, weights) <= TRAFFIC_SCALE)

    # Loads: the modules' load lower bounds on a node fit its CPUs.
    for n, node in enumerate(nodes):
        weights, lits = [], []
        for oi, o in enumerate(objects):
            if not o["module"] or n not in x[oi]:
                continue
            w = math.floor(o["load"][o["domain"].index(n)] * LOAD_SCALE)
            if w > 0:
                weights.append(w)
                lits.append(x[oi][n])
        if lits and sum(weights) > node["cpus"] * LOAD_SCALE:
            m.Add(cp_model.LinearExpr.WeightedSum(lits, weights) <= node["cpus"] * LOAD_SCALE)

    # Solo modules (self-paced, or too slow to keep up on a shared CPU; per node, "solo" aligned
    # with "domain"; older exports only have "self_paced"): at most CPUs(n) of them per node.
    def solo_at(o, n):
        if "solo" in o:
            return dict(zip(o["domain"], o["solo"])).get(n, False)
        return o["self_paced"]

    if csp.get("self_paced_cap"):
        for n, node in enumerate(nodes):
            lits = [x[oi][n] for oi, o in enumerate(objects) if o["module"] and n in x[oi] and solo_at(o, n)]
            if len(lits) > node["cpus"]:
                m.Add(sum(lits) <= node["cpus"])

    # First-round and keep-up rows: x[o][n] -> sum(heavy) - |heavy| * sum(light) <= cap.
    for row in csp["rows"]:
        o, n = row["object"], row["node"]
        if n not in x[o]:
            continue
        heavy = [x[j][n] for j in row["heavy"] if n in x[j]]
        light = [x[j][n] for j in row["light"] if n in x[j]]
        big = len(row["heavy"])
        weights = [1] * len(heavy) + [-big] * len(light)
        m.Add(cp_model.LinearExpr.WeightedSum(heavy + light, weights) <= row["cap"]).OnlyEnforceIf(x[o][n])

    # Filter locality: a filter shares the node of one of its sources or destinations.
    if csp.get("filter_locality"):
        neighbours: dict[int, set[int]] = {}
        for e in edges:
            neighbours.setdefault(e["dst"], set()).add(e["src"])
            neighbours.setdefault(e["src"], set()).add(e["dst"])
        for oi, o in enumerate(objects):
            if o["module"]:
                continue
            for n, xf in x[oi].items():
                m.AddBoolOr([xf.Not()] + [x[b][n] for b in sorted(neighbours.get(oi, ())) if n in x[b]])

    # Objective: nodes hosting at least one object.
    used: dict[int, cp_model.IntVar] = {}
    for n in range(len(nodes)):
        here = [x[oi][n] for oi in range(len(objects)) if n in x[oi]]
        if not here:
            continue
        u = m.NewBoolVar(f"used[{n}]")
        for xo in here:
            m.AddImplication(xo, u)
        m.AddBoolOr([u.Not()] + here)
        used[n] = u
    objective = sum(used.values()) if used else 0
    if used:
        m.Add(objective >= csp.get("nodes_lower_bound", 0))
        # Redundant, as in flowmap's objective: the used CPUs hold every module's smallest load
        # (and, with self_paced_cap, give each module solo on all its nodes a CPU of its own).
        min_load = sum(
            min(math.floor(l * LOAD_SCALE) for l in o["load"]) for o in objects if o["module"] and o["load"]
        )
        m.Add(sum(nodes[n]["cpus"] * LOAD_SCALE * u for n, u in used.items()) >= min_load)
        if csp.get("self_paced_cap"):
            sp = sum(1 for o in objects if o["module"] and o["domain"] and all(solo_at(o, n) for n in o["domain"]))
            m.Add(sum(nodes[n]["cpus"] * u for n, u in used.items()) >= sp)
    m.Minimize(objective)
    return CspModel(m, x, y, local, used, objective)


@dataclass
class CpsatResult:
    status: str = "?"
    objective: int | None = None
    bound: int | None = None
    times: list[float] = field(default_factory=list)
    build_s: float = math.nan
    placement: list[int] | None = None  # node per object
    routes: list[int | None] | None = None  # network per edge, None when local

    @property
    def time(self) -> float:
        return statistics.median(self.times) if self.times else math.nan


def solve_cpsat(csp: dict, runs: int, workers: int, time_limit: float, seed: int) -> CpsatResult:
    """Builds the model once and solves it `runs` times; returns the last run's answer."""
    t0 = time.perf_counter()
    cm = build_model(csp)
    res = CpsatResult(build_s=time.perf_counter() - t0)
    for _ in range(runs):
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = workers
        solver.parameters.max_time_in_seconds = time_limit
        solver.parameters.random_seed = seed
        t0 = time.perf_counter()
        status = solver.Solve(cm.model)
        res.times.append(time.perf_counter() - t0)
        res.status = solver.StatusName(status)
        res.placement = res.routes = None
        res.objective = res.bound = None
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            res.objective = round(solver.ObjectiveValue())
            res.bound = math.ceil(solver.BestObjectiveBound() - 1e-6)
            res.placement = [next(n for n, v in xo.items() if solver.BooleanValue(v)) for xo in cm.x]
            res.routes = [next((k for k, v in ye.items() if solver.BooleanValue(v)), None) for ye in cm.y]
        elif status == cp_model.INFEASIBLE:
            res.bound = None
        else:
            res.bound = math.ceil(solver.BestObjectiveBound() - 1e-6) if cm.used else None
    return res


def mapping_toml(csp: dict, placement: list[int], routes: list[int | None]) -> tuple[str, list[str]]:
    """A mapping file `flowmap check` reads (docs/formats.md, "Mapping").

    Routes are written only where the two nodes share several networks: with one shared
    network flowmap infers it. Returns the text and warnings (duplicate edges of one
    connection between the same instances can only be routed together).
    """
    nodes, nets, objects, edges = csp["nodes"], csp["networks"], csp["objects"], csp["edges"]
    q = json.dumps  # TOML basic strings accept JSON's escapes
    lines = [f"description = {q('CP-SAT reference mapping (benches/cpsat_reference.py)')}", "", "[place]"]
    for oi, o in enumerate(objects):
        lines.append(f"{q(o['name'])} = {q(nodes[placement[oi]]['name'])}")
    chosen: dict[tuple[str, str, str], int] = {}
    warnings: list[str] = []
    for ei, e in enumerate(edges):
        k = routes[ei]
        if k is None:
            continue
        a, b = placement[e["src"]], placement[e["dst"]]
        if len(set(nodes[a]["networks"]) & set(nodes[b]["networks"])) <= 1:
            continue
        key = (e["connection"], objects[e["src"]]["name"], objects[e["dst"]]["name"])
        if key in chosen:
            if chosen[key] != k:
                warnings.append(f"edges {key[1]} -> {key[2]} of {key[0]} use different networks; routed together")
            continue
        chosen[key] = k
        lines += [
            "",
            "[[route]]",
            f"connection = {q(key[0])}",
            f"from = {q(key[1])}",
            f"to = {q(key[2])}",
            f"network = {q(nets[k]['name'])}",
        ]
    return "\n".join(lines) + "\n", warnings


# --------------------------------------------------------------------------- report


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.3f}"
    return str(v)


COLUMNS = [
    ("instance", 44),
    ("fm status", 10),
    ("fm obj", 6),
    ("fm bnd", 6),
    ("fm s", 8),
    ("cp status", 10),
    ("cp obj", 6),
    ("cp bnd", 6),
    ("cp s", 8),
    ("cp/fm", 7),
    ("cp check", 9),
]


def row(cells: list) -> str:
    return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, (_, w)) in enumerate(zip(cells, COLUMNS)))


def instance_name(app: str, cluster: str) -> str:
    a, c = Path(app).stem, Path(cluster).stem
    return a if a == c else f"{a}@{c}"


def cross_check(name: str, fm: FlowmapResult | None, cp: CpsatResult) -> list[str]:
    """Notes on disagreements between the two answers."""
    notes = []
    if fm is None:
        return notes
    if fm.status == "optimal" and cp.status == "OPTIMAL" and fm.objective != cp.objective:
        rel = ">" if (fm.objective or 0) > (cp.objective or 0) else "<"
        why = (
            "expected when the static optimum is unsound (flowmap's verifier adds nogoods)"
            if rel == ">"
            else "BUG: flowmap's optimum is below the static model's"
        )
        notes.append(f"{name}: flowmap optimum {fm.objective} {rel} CP-SAT optimum {cp.objective} ({why})")
    if fm.status == "infeasible" and cp.status in ("OPTIMAL", "FEASIBLE"):
        notes.append(f"{name}: flowmap proves no mapping; CP-SAT's static model has one (verifier rejections)")
    if cp.status == "INFEASIBLE" and fm.status in ("optimal", "feasible"):
        notes.append(f"{name}: BUG: CP-SAT finds the static model infeasible but flowmap found a mapping")
    if cp.status == "OPTIMAL" and fm.bound is not None and fm.bound > cp.objective:
        notes.append(f"{name}: note: flowmap's bound {fm.bound} exceeds CP-SAT's static optimum {cp.objective}")
    return notes


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="benches/cpsat-reference",
        description="Compare flowmap's node minimisation with OR-Tools CP-SAT on the same static CSP "
        "(a reference, not part of the tests).",
    )
    p.add_argument("instances", nargs="*", metavar="APP CLUSTER", help="pairs of application and cluster files")
    p.add_argument("--runs", type=int, default=3, help="timed runs per solver; the median is reported (default 3)")
    p.add_argument("--workers", type=int, default=2, help="CP-SAT num_workers (default 2)")
    p.add_argument("--time-limit", type=float, default=60.0, help="seconds, for both solvers (default 60)")
    p.add_argument("--seed", type=int, default=0, help="CP-SAT random_seed (default 0)")
    p.add_argument("--all", action="store_true", help="add the 300x64 instance to the default list")
    p.add_argument("--no-check", action="store_true", help="do not run `flowmap check` on CP-SAT's mapping")
    p.add_argument("--csp", action="append", default=[], metavar="FILE.json",
                   help="solve a saved export with CP-SAT only (repeatable; no flowmap runs)")
    p.add_argument("--save-csp", metavar="DIR", help="also write each export to DIR/<instance>.json")
    p.add_argument("--save-mapping", metavar="DIR", help="also write CP-SAT's mapping to DIR/<instance>.toml")
    a = p.parse_args(argv)
    if len(a.instances) % 2:
        p.error("instances come in pairs: APP CLUSTER")
    if a.runs < 1:
        p.error("--runs must be >= 1")
    return a


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    pairs = list(zip(args.instances[::2], args.instances[1::2]))
    if not pairs and not args.csp:
        pairs = DEFAULT_INSTANCES + (EXTRA_INSTANCES if args.all else [])
    if pairs:
        ensure_binary()
    print(
        f"OR-Tools {ortools.__version__} CP-SAT: workers={args.workers}, seed={args.seed}, "
        f"time limit {args.time_limit:g} s, median of {args.runs} run(s); times are wall clock "
        f"(flowmap: whole process; CP-SAT: Solve() only)"
    )
    print(row([c for c, _ in COLUMNS]))
    print(row(["-" * w for _, w in COLUMNS]))
    notes: list[str] = []
    failed = False
    jobs: list[tuple[str, str | None, str | None, str | None]] = [(instance_name(a, c), a, c, None) for a, c in pairs]
    jobs += [(Path(f).stem, None, None, f) for f in args.csp]
    for name, app, cluster, csp_file in jobs:
        try:
            if csp_file:
                csp = json.loads(Path(csp_file).read_text())
            else:
                csp = export_csp(app, cluster)
                if args.save_csp:
                    Path(args.save_csp).mkdir(parents=True, exist_ok=True)
                    (Path(args.save_csp) / f"{name}.json").write_text(json.dumps(csp, indent=1))
        except (RuntimeError, OSError, json.JSONDecodeError) as e:
            print(f"{name}: {e}", file=sys.stderr)
            failed = True
            continue
        cp = solve_cpsat(csp, args.runs, args.workers, args.time_limit, args.seed)
        fm = run_flowmap(app, cluster, args.runs, args.time_limit) if app else None
        verdict = "-"
        if cp.placement is not None:
            text, warnings = mapping_toml(csp, cp.placement, cp.routes)
            notes += [f"{name}: {w}" for w in warnings]
            if args.save_mapping:
                Path(args.save_mapping).mkdir(parents=True, exist_ok=True)
                (Path(args.save_mapping) / f"{name}.toml").write_text(text)
            if app and not args.no_check:
                verdict = check_mapping(app, cluster, text)
        ratio = cp.time / fm.time if fm and fm.time > 0 else None
        print(
            row(
                [
                    name,
                    fm.status if fm else "-",
                    fmt(fm.objective if fm else None),
                    fmt(fm.bound if fm else None),
                    fmt(fm.time if fm else None),
                    cp.status,
                    fmt(cp.objective),
                    fmt(cp.bound),
                    fmt(cp.time),
                    fmt(ratio),
                    verdict,
                ]
            ),
            flush=True,
        )
        notes += cross_check(name, fm, cp)
        notes.append(
            f"{name}: CP-SAT model {len(csp['objects'])} objects, {len(csp['edges'])} edges, "
            f"{len(csp['rows'])} rows, built in {cp.build_s:.3f} s"
        )
    if notes:
        print()
        for n in notes:
            print(n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
