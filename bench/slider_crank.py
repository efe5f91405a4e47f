"""Slider-crank benchmark: the mechanism built from planar components against a hand-derived
1-DOF ODE integrated by CasADi directly.

The mechanism (issue 3, the neural-network-augmented-physics paper): crank 0.05 m, rod 0.29 m
(a uniform bar), masses crank 0.23, rod 0.35, slider 0.77 kg, motor+crank inertia
0.0034 kg m^2 about the crank axis, viscous friction 0.007 N m s/rad, in a vertical plane
(gravity 9.80665 along -y, the slider line horizontal), driven by a constant torque of
0.3 N m through the crank axis from rest at theta = 0. Over 5 s the crank turns about
180 rad (the speed approaches tau / d = 43 rad/s).

* build:    the ``ac.System``: ``pl.World``, ``pl.SliderCrank``, ``rot.Damper`` and
            ``rot.ConstantTorque`` on the crank axis
* compile:  ``ac.compile(system)`` (index 3 -> index 1, states theta and w)
* sim 1:    first ``simulate(model, ...)``: builds the initializer and IDAS, then runs
* sim 2:    second call with ``params={"motor.tau_constant": 0.35}``: no rebuild
* output:   first ``result["sc.crank_joint.phi"]``
* floor:    theta'' from the Lagrangian ``L = M(theta) w^2 / 2 - V(theta)`` derived with
            sympy from the explicit geometry (as in tests/test_planar.py),
            ``M theta'' = tau - d w - M'(theta) w^2 / 2 - V'(theta)``, lambdified to CasADi SX
            with the drive torque and the friction as parameters, integrated by
            ``cs.integrator("floor", "idas", ...)`` on the same grid with the same tolerances
            and the options ``solvers`` gives IDAS: build and run timed separately; also
            run with rtol and atol ten times tighter, which makes it about as accurate as
            the component model (whose IDAS also controls the error of 48 algebraic unknowns).

Both are compared on theta and w over the grid (max abs difference), for both torques, and
against an independent reference: scipy's DOP853 on the numpy lambdification of the same
ODE at rtol = atol = 1e-12. ``IDAS call in sim`` is the bare CasADi call inside ``simulate``
(internal), which separates the integrator's cost from the Python around it.

    python bench/slider_crank.py                    # 5 s, dt 1e-3, rtol 1e-8, atol 1e-10
    python bench/slider_crank.py --repeats 5 --t-end 2 --json out.json
    python bench/slider_crank.py --work-precision 1e-6 1e-7 1e-8 1e-9 1e-10

``--work-precision``: the model's second ``simulate`` and the floor at each tolerance,
time against theta's largest error from the reference; the floor's time at the model's
error is interpolated between the floor's points, so the ratio is at equal accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from functools import partial

import casadi as cs
import numpy as np
import sympy as sp
from machine import fmt, machine

# the mechanism
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from examples.references.slider_crank_reference import (  # noqa: E402 - the hand-derived reference model
    FRICTION,
    driven_slider_crank,
    lagrangian_terms,
)

TORQUE, TORQUE2 = 0.3, 0.35  # first and second simulate
REF_TOL = 1e-12  # DOP853's rtol and atol for the reference


# -- the component model -------------------------------------------------------------------
def build_system(torque: float = TORQUE, friction: float = FRICTION):
    """The slider-crank from planar components, driven through the crank axis."""
    return driven_slider_crank(torque, friction)


# -- the floor: the hand-derived 1-DOF ODE ------------------------------------------------
CASADI_MODULE = {
    "sin": cs.sin,
    "cos": cs.cos,
    "sqrt": cs.sqrt,
    "atan2": cs.atan2,
    "asin": cs.asin,
    "Abs": cs.fabs,
}


def floor_ode():
    """``(x, p, ode)`` in CasADi SX: ``x = (theta, w)``, ``p = (tau, d)``."""
    q, mass, dmass, dpot = lagrangian_terms()
    f_mass, f_dmass, f_dpot = (
        sp.lambdify(q, e, modules=[CASADI_MODULE], cse=True) for e in (mass, dmass, dpot)
    )
    x = cs.SX.sym("x", 2)
    p = cs.SX.sym("p", 2)
    theta, w = x[0], x[1]
    tau, d = p[0], p[1]
    force = tau - d * w - f_dmass(theta) * w**2 / 2 - f_dpot(theta)
    return x, p, cs.vertcat(w, force / f_mass(theta))


def floor_rhs_numpy(torque: float, friction: float):
    """The same ODE for scipy (the reference)."""
    q, mass, dmass, dpot = lagrangian_terms()
    f_mass, f_dmass, f_dpot = (sp.lambdify(q, e, "numpy") for e in (mass, dmass, dpot))

    def rhs(_, y):
        theta, w = y
        force = torque - friction * w - f_dmass(theta) * w**2 / 2 - f_dpot(theta)
        return [w, force / f_mass(theta)]

    return rhs


def build_floor(grid: np.ndarray, rtol: float, atol: float):
    """The floor's IDAS integrator on ``grid``, with the options ``solvers`` gives IDAS
    (calc_ic off, first step 1e-12 of the interval, 100,000 steps at most)."""
    x, p, ode = floor_ode()
    span = float(grid[-1] - grid[0])
    opts = {
        "abstol": atol,
        "reltol": rtol,
        "calc_ic": False,
        "step0": 1e-12 * span,
        "max_num_steps": 100_000,
    }
    return cs.integrator("floor", "idas", {"x": x, "p": p, "ode": ode}, float(grid[0]), grid, opts)


def reference(grid: np.ndarray, torque: float) -> np.ndarray:
    """theta and w on ``grid`` by DOP853 at 1e-12: (2, N)."""
    from scipy.integrate import solve_ivp

    sol = solve_ivp(
        floor_rhs_numpy(torque, FRICTION),
        (grid[0], grid[-1]),
        [0.0, 0.0],
        "DOP853",
        grid,
        rtol=REF_TOL,
        atol=REF_TOL,
    )
    if not sol.success:
        raise RuntimeError(f"reference: {sol.message}")
    return sol.y


# -- the measurement -----------------------------------------------------------------------
def _error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[-400:]}"


def measure(repeats: int, t_end: float, dt: float, rtol: float, atol: float) -> dict:
    """Best of ``repeats`` for every phase; differences from the last repeat."""
    import acausal as ac
    from solvers import Simulations, simulate, simulator

    n = int(round(t_end / dt))
    grid = dt * np.arange(n + 1)
    best: dict[str, float] = {}
    out: dict = {"repeats": repeats, "t_end": t_end, "dt": dt, "rtol": rtol, "atol": atol}
    out["errors"] = {}

    def timed(key: str, fun, *args, **kwargs):
        tic = time.perf_counter()
        value = fun(*args, **kwargs)
        best[key] = min(best.get(key, float("inf")), time.perf_counter() - tic)
        return value

    refs = {}
    try:
        refs = {tq: reference(grid, tq) for tq in (TORQUE, TORQUE2)}
    except Exception as exc:  # a benchmark reports, it does not stop
        out["errors"]["reference"] = _error(exc)
    floors = {}
    sims = {}
    for _ in range(repeats):
        try:
            floor = timed("floor_build", build_floor, grid, rtol, atol)
            x0 = cs.DM.zeros(2)
            floors[TORQUE] = np.asarray(
                timed("floor_run", floor, x0=x0, p=[TORQUE, FRICTION])["xf"]
            )
            out["floor_steps"] = int(floor.stats()["nsteps"])  # at the first torque
            floors[TORQUE2] = np.asarray(
                timed("floor_run2", floor, x0=x0, p=[TORQUE2, FRICTION])["xf"]
            )
            # the floor at a tolerance ten times tighter, new torque (the work-precision
            # mode compares at equal accuracy)
            tight = timed("floor_tight_build", build_floor, grid, rtol / 10, atol / 10)
            floors["tight"] = np.asarray(
                timed("floor_tight_run", tight, x0=x0, p=[TORQUE2, FRICTION])["xf"]
            )
            x, p, ode = floor_ode()
            out["floor_ode_instructions"] = cs.Function("f", [x, p], [ode]).n_instructions()
        except Exception as exc:
            out["errors"]["floor"] = _error(exc)

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*unconnected connectors")
            system = timed("build", build_system)
            try:
                model = timed("compile", ac.compile, system)
            except Exception as exc:
                out["errors"]["compile"] = _error(exc)
                continue
        out["model"] = {
            "index": int(model.index),
            "states": list(model.states),
            "newton_unknowns": int(model.dae.z.numel()),
            "blocks": len(model.blocks),
            "variables": len(model.flat.variables),
            "aliases": len(model.reduced.eliminated),
        }
        kept = Simulations()  # kept between sim 1 and sim 2, as a caller re-running does
        args = {"t_end": t_end, "dt": dt, "rtol": rtol, "atol": atol, "simulators": kept}
        try:
            res1 = timed("sim1", simulate, model, **args)
            theta1 = timed("output", res1.__getitem__, "sc.crank_joint.phi")
            pvec = np.asarray(model.parameter_vector(), dtype=float)
            first = simulator(model, res1.t, rtol, atol, pvec, kept)  # the one simulate used
            if hasattr(first, "sim"):  # internal: the bare CasADi call
                timed("sim_core_run", first.sim, pvec)
                try:  # IDAS's step count: the integrator called numerically, not timed
                    x0, z0 = first.initial_values(pvec)
                    first.integrators[0](x0=x0, z0=z0, p=pvec)
                    out["sim_steps"] = int(first.integrators[0].stats()["nsteps"])
                except Exception as exc:
                    out["errors"]["sim_steps"] = _error(exc)
            res2 = timed("sim2", simulate, model, **args, params={"motor.tau_constant": TORQUE2})
        except Exception as exc:
            out["errors"]["simulate"] = _error(exc)
            continue
        again = simulator(model, res2.t, rtol, atol, np.asarray(res2.p), kept)
        out["rebuilt_on_second_call"] = again is not first
        out["grid_equal"] = bool(np.array_equal(res1.t, grid))
        sims[TORQUE] = np.vstack([theta1, res1["sc.crank_joint.w"]])
        sims[TORQUE2] = np.vstack([res2["sc.crank_joint.phi"], res2["sc.crank_joint.w"]])
        out["theta_end"] = float(theta1[-1])
        worst, value = res1.residuals(top=1)[0]
        out["worst_residual"] = [str(worst), float(value)]

    out["times"] = best
    diffs = {}
    for tq in (TORQUE, TORQUE2):
        d = {}
        if tq in sims and tq in floors:
            d["theta_sim_vs_floor"] = float(np.max(np.abs(sims[tq][0] - floors[tq][0])))
            d["w_sim_vs_floor"] = float(np.max(np.abs(sims[tq][1] - floors[tq][1])))
        if tq in refs:
            if tq in sims:
                d["theta_sim_vs_ref"] = float(np.max(np.abs(sims[tq][0] - refs[tq][0])))
                d["w_sim_vs_ref"] = float(np.max(np.abs(sims[tq][1] - refs[tq][1])))
            if tq in floors:
                d["theta_floor_vs_ref"] = float(np.max(np.abs(floors[tq][0] - refs[tq][0])))
                d["w_floor_vs_ref"] = float(np.max(np.abs(floors[tq][1] - refs[tq][1])))
        if tq == TORQUE2 and "tight" in floors and tq in refs:
            d["theta_floor_tight_vs_ref"] = float(np.max(np.abs(floors["tight"][0] - refs[tq][0])))
            d["w_floor_tight_vs_ref"] = float(np.max(np.abs(floors["tight"][1] - refs[tq][1])))
        diffs[str(tq)] = d
    out["diffs"] = diffs
    return out


def _model_theta(simulate, model, args: dict) -> np.ndarray:
    return simulate(model, **args)["sc.crank_joint.phi"]


def _floor_theta(floor) -> np.ndarray:
    return np.asarray(floor(x0=[0.0, 0.0], p=[TORQUE, FRICTION])["xf"])[0]


def work_precision(repeats: int, t_end: float, dt: float, tolerances: list[float]) -> dict:
    """Time against accuracy at the first torque, model (a second ``simulate``) and floor,
    at each ``rtol`` (``atol = rtol / 100``): the best of ``repeats`` runs and the largest
    |theta - reference| on the grid. Each model point is compared with the floor's time
    at the same error, interpolated linearly in log(error) -> log(time) between the floor's
    points (which reach two decades of tolerance further; None outside their range): the
    ratio at equal accuracy."""
    import acausal as ac
    from solvers import Simulations, simulate

    grid = dt * np.arange(int(round(t_end / dt)) + 1)
    ref = reference(grid, TORQUE)[0]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*unconnected connectors")
        model = ac.compile(build_system())
    points: dict[str, list[dict]] = {"model": [], "floor": []}
    tightest = min(tolerances)
    for rtol in [*tolerances, tightest / 10, tightest / 100]:  # the floor reaching further
        args = {"t_end": t_end, "dt": dt, "rtol": rtol, "atol": rtol / 100}
        args["simulators"] = Simulations()
        runs = {"floor": partial(_floor_theta, build_floor(grid, rtol, rtol / 100))}
        if rtol in tolerances:
            simulate(model, **args)  # builds the simulator: then a second simulate is timed
            runs["model"] = partial(_model_theta, simulate, model, args)
        for kind, run in runs.items():
            best, theta = float("inf"), None
            for _ in range(repeats):
                tic = time.perf_counter()
                theta = run()
                best = min(best, time.perf_counter() - tic)
            error = float(np.max(np.abs(theta - ref)))
            points[kind].append({"rtol": rtol, "time": best, "error": error})
    floor = sorted(points["floor"], key=lambda q: q["error"])
    log_err = np.log([q["error"] for q in floor])
    log_time = np.log([q["time"] for q in floor])
    for q in points["model"]:
        e = np.log(q["error"])
        inside = log_err[0] <= e <= log_err[-1]
        q["floor_time"] = float(np.exp(np.interp(e, log_err, log_time))) if inside else None
        q["ratio"] = q["time"] / q["floor_time"] if inside else None
    return points


def work_precision_table(points: dict) -> str:
    rows = [
        "| rtol (atol = rtol/100) | model: time / theta error | floor: time / theta error "
        "| floor time at the model's error | ratio at equal accuracy |",
        "|---:|---:|---:|---:|---:|",
    ]
    for m, f in zip(points["model"], points["floor"]):  # the floor's tighter ones left out
        rows.append(
            f"| {m['rtol']:.0e} | {fmt(m['time'])} s / {_sci(m['error'])} "
            f"| {fmt(f['time'])} s / {_sci(f['error'])} "
            f"| {'-' if m['floor_time'] is None else fmt(m['floor_time']) + ' s'} "
            f"| {'-' if m['ratio'] is None else format(m['ratio'], '.1f')} |"
        )
    return "\n".join(rows)


# -- reporting -----------------------------------------------------------------------------
def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.1f}"


def _sci(x: float | None) -> str:
    return "-" if x is None else f"{x:.1e}"


def table(r: dict) -> str:
    """Markdown tables: times (s) and ratios; agreement and accuracy (rad, rad/s)."""
    g = r["times"].get
    floor_all = g("floor_build", 0) + g("floor_run", 0) if g("floor_run") else None
    rows = [
        "| phase | time (s) |",
        "|---|---:|",
        f"| build (ac.System) | {fmt(g('build'))} |",
        f"| compile (ac.compile) | {fmt(g('compile'))} |",
        f"| sim 1 (builds initializer + IDAS, runs) | {fmt(g('sim1'))} |",
        f"| sim 2 (new drive torque, no rebuild) | {fmt(g('sim2'))} |",
        f"| output (first result[...]) | {fmt(g('output'))} |",
        f"| IDAS call in sim (internal) | {fmt(g('sim_core_run'))} |",
        f"| floor build (sympy -> SX, cs.integrator) | {fmt(g('floor_build'))} |",
        f"| floor run | {fmt(g('floor_run'))} |",
        f"| floor run, new torque | {fmt(g('floor_run2'))} |",
        f"| floor run, new torque, rtol and atol / 10 | {fmt(g('floor_tight_run'))} |",
        "",
        "| ratio | value |",
        "|---|---:|",
        f"| sim 2 / floor run (new torque) | {_ratio(g('sim2'), g('floor_run2'))} |",
        f"| sim 2 / floor run, rtol and atol / 10 (new torque) "
        f"| {_ratio(g('sim2'), g('floor_tight_run'))} |",
        f"| IDAS call in sim / floor run | {_ratio(g('sim_core_run'), g('floor_run'))} |",
        f"| build + compile + sim 1 / floor (build + run) | "
        f"{_ratio(g('build', 0) + g('compile', 0) + g('sim1', 0), floor_all)} |",
    ]
    tight_note = ""
    rows += [
        "",
        "| drive torque | theta: sim vs floor | w: sim vs floor | theta: sim vs ref "
        "| theta: floor vs ref | w: sim vs ref | w: floor vs ref |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tq, d in r["diffs"].items():
        if "theta_floor_tight_vs_ref" in d:
            tight_note = (
                f"At {tq} N m the floor with rtol and atol / 10 is off the reference by "
                f"{_sci(d['theta_floor_tight_vs_ref'])} rad in theta, "
                f"{_sci(d['w_floor_tight_vs_ref'])} rad/s in w."
            )
        rows.append(
            f"| {tq} N m | {_sci(d.get('theta_sim_vs_floor'))} | {_sci(d.get('w_sim_vs_floor'))} "
            f"| {_sci(d.get('theta_sim_vs_ref'))} | {_sci(d.get('theta_floor_vs_ref'))} "
            f"| {_sci(d.get('w_sim_vs_ref'))} | {_sci(d.get('w_floor_vs_ref'))} |"
        )
    m = r.get("model", {})
    worst = r.get("worst_residual", ["-", float("nan")])
    rows += [
        "",
        tight_note,
        "",
        f"Model: index {m.get('index')}, states {m.get('states')}, "
        f"{m.get('newton_unknowns')} algebraic unknowns in IDAS, {m.get('blocks')} BLT blocks, "
        f"{m.get('variables')} variables ({m.get('aliases')} aliases). "
        f"IDAS steps at 0.3 N m: model {r.get('sim_steps', '-')}, floor "
        f"{r.get('floor_steps', '-')}; "
        f"floor ODE {r.get('floor_ode_instructions', '-')} SX instructions. "
        f"theta(t_end) = {r.get('theta_end', float('nan')):.3f} rad; "
        f"worst equation residual on the grid {worst[1]:.1e} ({worst[0]}); "
        f"second simulate rebuilt the integrator: {r.get('rebuilt_on_second_call')}.",
    ]
    if r["errors"]:
        rows += ["", "Failures:", ""] + [f"- {k}: {v}" for k, v in r["errors"].items()]
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="repeats, best taken")
    parser.add_argument("--t-end", type=float, default=5.0, help="simulated time (s)")
    parser.add_argument("--dt", type=float, default=1e-3, help="output step (s)")
    parser.add_argument("--rtol", type=float, default=1e-8)
    parser.add_argument("--atol", type=float, default=1e-10)
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument(
        "--work-precision",
        nargs="+",
        type=float,
        metavar="RTOL",
        help="instead: time against theta's error at these rtol (atol = rtol / 100)",
    )
    args = parser.parse_args()
    info = machine(sympy=sp.__version__)
    print(f"machine: {info}")
    if args.work_precision:
        result = work_precision(args.repeats, args.t_end, args.dt, args.work_precision)
        print()
        print(work_precision_table(result))
    else:
        result = measure(args.repeats, args.t_end, args.dt, args.rtol, args.atol)
        print()
        print(table(result))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "args": vars(args), "result": result}, fh, indent=1)


if __name__ == "__main__":
    main()
