"""An RC circuit driven by a long sampled record: time against the record's length.

The model of ``tests/test_long_inputs.py``: a ``SignalVoltage`` following n samples of a
seeded random walk over 25 s (a kink at every sample), R = 1 ohm, C = 0.1 F from 0 V;
outputs every 10 ms, rtol 1e-6, atol 1e-8. For each n and each interpolation (linear
table, ``ac.spline``), in one process: build the ``ac.System``, ``ac.compile``, the first
``simulate`` (builds the integrator) and a second one (another resistance), and the error
of the linear table's response against its exact solution (closed form on each sample
interval, ``exact_response``). The floor: the same equation, ``tau v' = u(t) - v``, written
by hand as a CasADi IDAS integrator with the same interpolant (``linear`` or ``bspline``)
and the same IDAS options, built and run in the same process. The exponent is the
least-squares slope of log(time) against log(n).

    python bench/long_inputs.py                      # n = 2500 5000 10000 25000
    python bench/long_inputs.py --n 1000 25000 --kind linear
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from machine import fmt, machine  # noqa: E402

T_END, DT = 25.0, 0.01


def measure(n: int, kind: str) -> dict:
    import acausal as ac
    from examples.references.rc_record import exact_response, rc, record
    from solvers import Simulations, simulate

    tk, uk = record(n, T_END)
    out: dict = {"n": n, "kind": kind}
    tic = time.perf_counter()
    system = rc((tk, uk) if kind == "linear" else ac.spline(tk, uk))
    out["build"] = time.perf_counter() - tic
    tic = time.perf_counter()
    model = ac.compile(system)
    out["compile"] = time.perf_counter() - tic
    sims = Simulations()
    for key, r in (("sim1", 1.0), ("sim2", 1.1)):
        tic = time.perf_counter()
        tol = {"rtol": 1e-6, "atol": 1e-8, "simulators": sims}
        res = simulate(model, t_end=T_END, dt=DT, params={"R.R": r}, **tol)
        out[key] = time.perf_counter() - tic
        if kind == "linear" and r == 1.0:
            out["error"] = float(np.max(np.abs(res["C.v"] - exact_response(tk, uk, res.t))))
    return out


def floor(n: int, kind: str) -> dict:
    """The hand-written CasADi model at simulate 2's resistance (1.1 ohm): its build and run
    time and IDAS's step count."""
    import casadi as cs

    from examples.references.rc_record import TAU, record
    from solvers.functions import idas_options

    tk, uk = record(n, T_END)
    grid = np.arange(0.0, T_END + DT / 2, DT)
    tic = time.perf_counter()
    u = cs.interpolant("u", "linear" if kind == "linear" else "bspline", [tk], uk)
    v, t = cs.SX.sym("v"), cs.SX.sym("t")
    clamped = cs.fmin(cs.fmax(t, tk[0]), tk[-1])
    dae = {"x": v, "t": t, "ode": (u(clamped) - v) / (1.1 * TAU)}
    opts = idas_options(grid, 1e-6, 1e-8, 100_000)
    integrator = cs.integrator("floor", "idas", dae, grid[0], grid, opts)
    build = time.perf_counter() - tic
    tic = time.perf_counter()
    integrator(x0=0.0)
    return {"build": build, "run": time.perf_counter() - tic, "steps": integrator.stats()["nsteps"]}


def exponent(ns: list[int], times: list[float]) -> float:
    """Least-squares slope of log(time) against log(n)."""
    xs, ys = np.log(ns), np.log(times)
    return float(np.polyfit(xs, ys, 1)[0]) if len(ns) > 1 else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[2500, 5000, 10000, 25000])
    parser.add_argument("--kind", choices=["linear", "spline"], nargs="+")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(
        "| input | n | build | compile | simulate 1 | simulate 2 | error vs exact "
        "| floor: build / run (IDAS steps) | simulate 2 / floor run |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in args.kind or ["linear", "spline"]:
        rows = []
        for n in args.n:
            r = measure(n, kind)
            f = floor(n, kind)
            rows.append(r)
            err = f"{r['error']:.1e}" if "error" in r else "-"
            print(
                f"| {kind} | {n} | {fmt(r['build'])} | {fmt(r['compile'])} | {fmt(r['sim1'])} "
                f"| {fmt(r['sim2'])} | {err} | {fmt(f['build'])} / {fmt(f['run'])} "
                f"({f['steps']}) | {r['sim2'] / f['run']:.2f} |",
                flush=True,
            )
        slope = exponent([r["n"] for r in rows], [r["sim2"] for r in rows])
        print(f"| {kind}: exponent of simulate 2 in n | {slope:.2f} | | | | | | | |")


if __name__ == "__main__":
    main()
