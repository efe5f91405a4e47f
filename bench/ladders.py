"""The two benchmark ladders of issue 15: the user's path against hand-written CasADi.

* RC ladder: a 1 V step source feeding N stages, a series resistor R = 1/N then a shunt
  capacitor C = 1/N to ground (``rc_ladder.build_system``). Output: the last capacitor's
  voltage ``C<N>.v``.
* mass-spring-damper chain: N masses of 1/N kg on a line from rest at 0, a spring of
  100 N N/m from the wall to the first mass and between neighbours, a damper of N N s/m
  from each mass to the wall, a constant 1 N on the last mass. Output: the last mass's
  position ``M<N>.s``.

t = 0..1 s, outputs every 1 ms, rtol 1e-6, atol 1e-8. Per ladder and N, two fresh
subprocesses (so that each peak memory, ``ru_maxrss``, is its own):

* project: build the ``ac.System``; ``ac.compile``; the first ``simulate`` and reading the
  output (``res["C<N>.v"]``); a second ``simulate`` with the first element's parameter
  changed by 10 % (``R1.R``, ``S1.c``) and its output read.
* floor: the same equations hand-written as an ODE in CasADi SX with vector operations,
  ``cs.integrator(..., "idas")`` on the same grid with the options ``solvers`` gives IDAS
  (:func:`solvers.functions.idas_options`): build (expressions and integrator), run, and a
  second run with the same changed parameter.

The ratios (project / floor) are of figures measured in the same run of this script, and
the two outputs must agree to the tolerances (max |difference| over the grid, both runs).

    python bench/ladders.py                          # both ladders, N = 100 1000
    python bench/ladders.py --n 100 1000 10000       # 10,000 too (minutes, GBs)
    python bench/ladders.py --ladder rc --n 1000 --json out.json
    python bench/ladders.py --n 1000 --arrays        # built by Component.array
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from machine import fmt, machine

DEFAULT_N = [100, 1000]
T_END, DT, RTOL, ATOL = 1.0, 1e-3, 1e-6, 1e-8
AGREE = 100 * RTOL  # the two outputs agree when their max difference is below this (relative)
OUTPUT = {"rc": "C{n}.v", "chain": "M{n}.s"}
CHANGED = {"rc": ("R1.R", lambda n: 1.1 / n), "chain": ("S1.c", lambda n: 110.0 * n)}


# -- the models ---------------------------------------------------------------------------
def chain_ode(n: int):
    """``(x, p, ode, t)``: the chain's ODE in SX, ``x = (s, v)``, ``p`` the first spring's
    stiffness: ``m v_k' = c_k (s_(k-1) - s_k) - c_(k+1) (s_k - s_(k+1)) - d v_k + F_k``
    (``s_0 = 0`` the wall, no spring past the last mass, ``F = 1 N`` on the last)."""
    import casadi as cs

    m, c, d = 1.0 / n, 100.0 * n, float(n)
    s, v = cs.SX.sym("s", n), cs.SX.sym("v", n)
    c1, t = cs.SX.sym("c1"), cs.SX.sym("t")
    stretch = s - cs.vertcat(0.0, s[: n - 1, 0])  # spring k: s_k - s_(k-1)
    stiffness = cs.vertcat(c1, c * cs.DM.ones(n - 1))
    tension = cs.vertcat(stiffness * stretch, 0.0)  # the force spring k pulls with
    load = cs.vertcat(cs.DM.zeros(n - 1), 1.0)
    acc = (tension[1:, 0] - tension[:n, 0] - d * v + load) / m
    return cs.vertcat(s, v), c1, cs.vertcat(v, acc), t


def project_system(ladder: str, n: int, arrays: bool = False):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from examples.ladders import chain, rc_ladder

    return rc_ladder(n, arrays=arrays) if ladder == "rc" else chain(n, arrays=arrays)


def floor_ode(ladder: str, n: int):
    from rc_ladder import floor_ode as rc_ode

    return rc_ode(n, 0.0) if ladder == "rc" else chain_ode(n)


# -- the two children ---------------------------------------------------------------------
def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KB on Linux


def run_project(ladder: str, n: int, arrays: bool = False) -> dict:
    """The user's path, timed stage by stage (``arrays``: built by ``Component.array``)."""
    import acausal as ac
    from solvers import Simulations, simulate

    out: dict = {}
    tic = time.perf_counter()
    system = project_system(ladder, n, arrays)
    out["build"] = time.perf_counter() - tic
    tic = time.perf_counter()
    model = ac.compile(system)
    out["compile"] = time.perf_counter() - tic
    name = OUTPUT[ladder].format(n=n)
    args = {"t_end": T_END, "dt": DT, "rtol": RTOL, "atol": ATOL, "simulators": Simulations()}
    tic = time.perf_counter()
    res = simulate(model, **args)
    out["sim1"] = time.perf_counter() - tic
    tic = time.perf_counter()
    y = res[name]
    out["read1"] = time.perf_counter() - tic
    param, value = CHANGED[ladder]
    tic = time.perf_counter()
    res2 = simulate(model, **args, params={param: value(n)})
    out["sim2"] = time.perf_counter() - tic
    tic = time.perf_counter()
    y2 = res2[name]
    out["read2"] = time.perf_counter() - tic
    out["peak_gb"] = _peak_gb()
    out["states"] = int(model.dae.x.numel())
    out["variables"] = len(model.names)
    out["y"], out["y2"] = y.tolist(), y2.tolist()
    return out


def run_floor(ladder: str, n: int) -> dict:
    """The hand-written CasADi model: build, run, run with the changed parameter."""
    import casadi as cs
    import numpy as np

    from solvers.functions import idas_options

    grid = np.linspace(0.0, T_END, int(round(T_END / DT)) + 1)
    out: dict = {}
    tic = time.perf_counter()
    x, p, ode, t = floor_ode(ladder, n)
    opts = idas_options(grid, RTOL, ATOL, 100_000)
    integ = cs.integrator("floor", "idas", {"x": x, "p": p, "t": t, "ode": ode}, 0.0, grid, opts)
    out["build"] = time.perf_counter() - tic
    row = n - 1  # the floor's state of the output: the last capacitor / mass position
    x0 = np.zeros(x.numel())
    first = {"rc": 1.0 / n, "chain": 100.0 * n}[ladder]
    for key, pv in (("run", first), ("run2", CHANGED[ladder][1](n))):
        tic = time.perf_counter()
        xf = integ(x0=x0, p=pv)["xf"]
        y = np.asarray(xf[row, :]).ravel()
        out[key] = time.perf_counter() - tic
        out["y" if key == "run" else "y2"] = y.tolist()
    out["peak_gb"] = _peak_gb()
    return out


# -- the driver ---------------------------------------------------------------------------
def child(kind: str, ladder: str, n: int, timeout: float, max_gb: float) -> dict:
    """``run_project`` or ``run_floor`` in a fresh interpreter, limited to ``max_gb`` of
    address space; a failure is returned as ``{"error": ...}``."""
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", kind, ladder, str(n)]
    cmd += ["--max-gb", str(max_gb)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(here), here]))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-2:]
        return {"error": f"exit code {proc.returncode}: " + " | ".join(tail)}
    return json.loads(lines[-1])


def compare(ladder: str, n: int, timeout: float, max_gb: float, kind: str = "project") -> dict:
    """Floor first, then the project (``kind`` ``"project"``, or ``"arrays"``: built by
    ``Component.array``); ratios and the outputs' difference."""
    import numpy as np

    floor = child("floor", ladder, n, timeout, max_gb)
    proj = child(kind, ladder, n, timeout, max_gb)
    row: dict = {"ladder": ladder, "n": n, "project": proj, "floor": floor}
    if "error" in floor or "error" in proj:
        return row
    first = proj["build"] + proj["compile"] + proj["sim1"] + proj["read1"]
    row["first"] = first
    row["ratio_first"] = first / (floor["build"] + floor["run"])
    row["ratio_second"] = (proj["sim2"] + proj["read2"]) / floor["run2"]
    row["ratio_memory"] = proj["peak_gb"] / floor["peak_gb"]
    row["max_diff"] = max(
        float(np.max(np.abs(np.subtract(proj[k], floor[k])))) for k in ("y", "y2")
    )
    scale = max(float(np.max(np.abs(floor["y"]))), 1e-300)
    row["max_diff_relative"] = row["max_diff"] / scale
    for side in (proj, floor):
        side.pop("y"), side.pop("y2")
    return row


def table(rows: list[dict]) -> str:
    head = (
        "| ladder | N | build | compile | sim 1 + read | first total | sim 2 + read | peak GB "
        "| floor build | floor run | floor run 2 | floor GB | first / floor (build+run) "
        "| second / floor run 2 | memory ratio | max diff (rel.) |"
    )
    lines = [head, "|---|" + "---:|" * 15]
    notes = []
    for r in rows:
        p, f = r["project"], r["floor"]
        if "first" not in r:
            sides = (("project", p), ("floor", f))
            errors = [f"{k}: {v['error']}" for k, v in sides if "error" in v]
            notes.append(f"- {r['ladder']} N={r['n']}: " + "; ".join(errors))
            lines.append(f"| {r['ladder']} | {r['n']} | failed (below) |" + " |" * 13)
            continue
        lines.append(
            f"| {r['ladder']} | {r['n']} | {fmt(p['build'])} | {fmt(p['compile'])} "
            f"| {fmt(p['sim1'] + p['read1'])} | {fmt(r['first'])} "
            f"| {fmt(p['sim2'] + p['read2'])} | {p['peak_gb']:.2f} | {fmt(f['build'])} "
            f"| {fmt(f['run'])} | {fmt(f['run2'])} | {f['peak_gb']:.2f} "
            f"| {r['ratio_first']:.1f}x | {r['ratio_second']:.1f}x | {r['ratio_memory']:.1f}x "
            f"| {r['max_diff']:.1e} ({r['max_diff_relative']:.1e})"
            + ("" if r["max_diff_relative"] <= AGREE else " DISAGREE")
            + " |"
        )
    return "\n".join(lines + ([""] + notes if notes else []))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=DEFAULT_N, help="ladder sizes")
    parser.add_argument("--ladder", choices=["rc", "chain"], nargs="+", default=["rc", "chain"])
    parser.add_argument("--timeout", type=float, default=3600.0, help="per child (s)")
    parser.add_argument("--max-gb", type=float, default=12.0, help="address space per child")
    parser.add_argument("--json", help="write the rows and the machine to this file")
    parser.add_argument(
        "--arrays", action="store_true", help="build with Component.array, not one by one"
    )
    parser.add_argument("--child", nargs=3, metavar=("KIND", "LADDER", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, ladder, n = args.child[0], args.child[1], int(args.child[2])
        limit = int(args.max_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        if kind == "floor":
            print(json.dumps(run_floor(ladder, n)))
        else:
            print(json.dumps(run_project(ladder, n, kind == "arrays")))
        return
    info = machine()
    print(f"machine: {info}", flush=True)
    rows = []
    for ladder in args.ladder:
        for n in args.n:
            kind = "arrays" if args.arrays else "project"
            rows.append(compare(ladder, n, args.timeout, args.max_gb, kind))
            print(table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
