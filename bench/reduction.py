"""Reduced models against their full planar DAEs (issue 14, issue 32): seconds to compile and
to simulate, IDAS's work, the right-hand side's size.

``two_bar``: the two-bar actuator's reduced ODE in the sliders' heights against the full
DAE, 10 s at 1 ms output (rtol 1e-8, atol 1e-10); the reduction is the example's
(``examples/reduce_two_bar.py``: decoder 2 x 32 x 32 x 8, tanh, reconstruction + simulation
losses, ``--epochs`` epochs on sim1).

``four_bar``: the crank-rocker of ``examples/references/mechanisms.py`` driven from rest by
its constant torque against the damper (inertia, motor and damper on the crank axis),
reduced to the crank angle ``B1.phi`` (given minimal coordinate, its generalized force
``B1.tau``; decoder 1 x 32 x 32 x 12, ``--epochs`` epochs on the run itself), 1.5 s at 1 ms
output (rtol 1e-8, atol 1e-10: the crank turns from 0 to 8.2 rad); the reduced system
carries the same inertia, motor and damper on its crank port. Per model: IDAS steps,
right-hand side and Jacobian evaluations (``nfevals``, ``nlinsetups``) and the CasADi
instructions of the DAE's right-hand side.

``slider_crank``: the slider-crank of ``examples/reduce_slider_crank.py`` (a load
connector at the slider) on 3 s of its ``train`` force at 1 ms output, reduced to one
learned coordinate (encoder and decoder 32 x 32, ``--epochs`` epochs on that run in
batches of 64), the reduced model started from the full model's start.

``--reduction PATH``: a reduction pickled by an earlier run (``--save PATH``) instead of
training.

Each time is the median of ``--repeat`` runs in this process after a first run (timed
apart: it builds the simulator), full and reduced alternating.

    python bench/reduction.py --json /tmp/bench_out/reduction.json
    python bench/reduction.py four_bar --save /tmp/four_bar_reduction.pkl
    python bench/reduction.py slider_crank --save /tmp/slider_crank_reduction.pkl
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
import warnings

import casadi as cs
import numpy as np
from machine import machine

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import acausal as ac  # noqa: E402
import learning as ln  # noqa: E402
from components import rotational as rot  # noqa: E402
from examples import reduce_slider_crank as sc  # noqa: E402
from examples import two_bar_actuator as tb  # noqa: E402
from examples.references import mechanisms as mech  # noqa: E402
from solvers import Simulations, simulate  # noqa: E402
from solvers.simulate import simulator  # noqa: E402

TOL = {"rtol": 1e-8, "atol": 1e-10}
FOUR_BAR = mech.Variant("four_bar", "crank", "torque", 0.0)
FOUR_BAR_END = 1.5
SLIDER_CRANK_END = 3.0
EPOCHS = {"two_bar": 150, "four_bar": 200, "slider_crank": 8}


def timed(system: ac.System) -> tuple[float, float, object]:
    """Seconds to compile and to simulate, and the result."""
    tic = time.perf_counter()
    model = ac.compile(system)
    built = time.perf_counter() - tic
    tic = time.perf_counter()
    res = simulate(model, t_end=tb.DURATION, dt=tb.DT, **TOL)
    return built, time.perf_counter() - tic, res


def two_bar(args: argparse.Namespace) -> list[dict]:
    tic = time.perf_counter()
    red = ln.reduce_mechanism(
        tb.natural(tb.simulate_case("sim1")),
        hidden=(32, 32),
        epochs=args.epochs,
        lr=3e-3,
        decay=0.98,
        progress=False,
    )
    print(f"trained in {time.perf_counter() - tic:.0f} s ({red.message})", flush=True)
    rows = []
    for case in ("sim1", "sim2"):
        full, reduced = [], []
        for _ in range(args.repeat):
            full.append(timed(tb.mechanism(*tb.forces(case))))
            reduced.append(timed(tb.reduced(red, case)[0]))
        error = tb.centres_error(full[0][2], reduced[0][2])
        f_c, f_s = (float(np.median([r[k] for r in full])) for k in (0, 1))
        r_c, r_s = (float(np.median([r[k] for r in reduced])) for k in (0, 1))
        rows.append(
            {
                "case": case,
                "full_compile_s": f_c,
                "full_simulate_s": f_s,
                "reduced_compile_s": r_c,
                "reduced_simulate_s": r_s,
                "simulate_ratio": f_s / r_s,
                "centres_error": error,
                "full_states": len(ac.compile(tb.mechanism(*tb.forces(case))).states),
            }
        )
        print(
            f"{case}: full compile {f_c:.2f} s, simulate {f_s:.2f} s; reduced compile "
            f"{r_c:.2f} s, simulate {r_s:.2f} s (full / reduced {f_s / r_s:.2f}x); "
            f"centres within {error:.2%} of their range",
            flush=True,
        )
    return rows


def reduction(args: argparse.Namespace, data: object, **options: object) -> ln.Reduction:
    """The reduction of ``data``: loaded from ``--reduction`` or trained (and saved)."""
    if args.reduction:
        with open(args.reduction, "rb") as fh:
            return pickle.load(fh)
    tic = time.perf_counter()
    red = ln.reduce_mechanism(
        data(), hidden=(32, 32), epochs=args.epochs, lr=3e-3, progress=False, **options
    )
    print(f"trained in {time.perf_counter() - tic:.0f} s ({red.message})", flush=True)
    if args.save:
        with open(args.save, "wb") as fh:
            pickle.dump(red, fh)
    return red


def four_bar_case(args: argparse.Namespace) -> tuple:
    """The four-bar, its crank-angle reduction, the reduced system with the full model's
    inertia, motor and damper on its crank (the coordinate by its local name,
    ``red.names[0]``, as before issue 32, so the script runs on a checkout of then too), and
    the crank angle's error (rad)."""

    def data() -> ln.NaturalCoordinates:
        system = FOUR_BAR.build()
        res = simulate(system, t_end=FOUR_BAR_END, dt=1e-3, **TOL)
        parts = {c.full_name: c for c in system.all_components()}
        bodies = [parts[b] for b in mech.BODIES["four_bar"]]
        return ln.natural_coordinates(res, bodies, minimal=["B1.phi"], forces={"B1.phi": "B1.tau"})

    red = reduction(args, data, decay=0.98)
    s = ac.System("four_bar_reduced")
    crank = red.names[0]
    comp = red.component("red", q0={crank: 0.0}, v0={crank: 0.0}, ports={crank: ac.RotFlange})
    tau, d = mech.DRIVE["four_bar"]
    inertia = rot.Inertia("inertia", J=mech.J_FOUR_BAR)
    motor = rot.ConstantTorque("motor", tau_constant=tau)
    damper, housing = rot.Damper("damper", d=d), rot.Fixed("housing")
    s.connect(motor.flange, inertia.flange_a)
    s.connect(housing.flange, damper.flange_a)
    s.connect(damper.flange_b, inertia.flange_b, getattr(comp, crank))

    def error(full: object, reduced: object) -> str:
        miss = np.max(np.abs(reduced[f"red.q_{crank}"] - full["B1.phi"]))
        return f"crank angle within {miss:.3g} rad (range {np.ptp(full['B1.phi']):.3g} rad)"

    return FOUR_BAR.build(), s, FOUR_BAR_END, red, error


def slider_crank_case(args: argparse.Namespace) -> tuple:
    """The slider-crank of ``examples/reduce_slider_crank.py`` on 3 s of its ``train``
    force, its learned one-coordinate reduction (batches of 64), the reduced system from
    the full model's start, and the centres' error (of their range)."""
    full = sc.full_run("train", SLIDER_CRANK_END)

    def data() -> ln.NaturalCoordinates:
        return ln.natural_coordinates(full, sc.bodies(), loads=sc.LOADS)

    red = reduction(args, data, batch=64)
    start = ln.natural_coordinates(full, sc.bodies()).records[0]
    q0, v0 = red.initial(start["x"][0], start["v"][0])
    s = ac.System("slider_crank_reduced")
    comp = red.component("red", q0=q0, v0=v0)
    sc.mount(s, comp.slider, sc.force("train"))

    def error(full: object, reduced: object) -> str:
        return f"centres of mass within {sc.centres_error(full, reduced):.3%} of their range"

    return sc.mechanism("train"), s, SLIDER_CRANK_END, red, error


def idas_work(model: ac.Model, t_end: float) -> dict:
    """IDAS's statistics of one run on the bench's grid, the seconds of that call alone
    (the integrator, without initialization and result), the right-hand side's size."""
    grid = np.arange(0.0, t_end + 5e-4, 1e-3)
    p = np.asarray(model.parameter_vector(), dtype=float)
    sim = simulator(model, grid, TOL["rtol"], TOL["atol"], p)
    x0, z0 = sim.initial_values(p)
    tic = time.perf_counter()
    sim.integrators[0](x0=x0, z0=z0, p=p)
    idas = time.perf_counter() - tic
    stats = sim.integrators[0].stats()
    spec = sim.functions.spec()
    rhs = cs.Function("rhs", [spec[k] for k in "xzpt"], [spec["ode"], spec["alg"]])
    out = {k: int(stats[k]) for k in ("nsteps", "nfevals", "nlinsetups")}
    out.update(idas_s=idas, states=sim.nx, newton_unknowns=sim.nz, rhs=rhs.n_instructions())
    return out


def compare(args: argparse.Namespace) -> list[dict]:
    """A full mechanism against its reduction (``four_bar``, ``slider_crank``)."""
    case = four_bar_case if args.mechanism == "four_bar" else slider_crank_case
    full, reduced, t_end, red, error = case(args)
    models = {"full": ac.compile(full), "reduced": ac.compile(reduced)}
    times = {k: [] for k in models}
    first, results = {}, {}
    kept = {k: Simulations() for k in models}  # each model's simulator, built by its first run
    for k, m in models.items():  # the first run builds the simulator (IDAS, its Jacobian)
        tic = time.perf_counter()
        results[k] = simulate(m, t_end=t_end, dt=1e-3, simulators=kept[k], **TOL)
        first[k] = time.perf_counter() - tic
    for _ in range(args.repeat):
        for k, m in models.items():
            tic = time.perf_counter()
            simulate(m, t_end=t_end, dt=1e-3, simulators=kept[k], **TOL)
            times[k].append(time.perf_counter() - tic)
    row = {"case": args.mechanism}
    for k, m in models.items():
        median = float(np.median(times[k]))
        row[k] = {"first_simulate_s": first[k], "simulate_s": median, **idas_work(m, t_end)}
        print(f"{k}: {row[k]}", flush=True)
    row["reduced_over_full"] = row["reduced"]["simulate_s"] / row["full"]["simulate_s"]
    row["error"] = error(results["full"], results["reduced"])
    print(f"reduced / full simulate time {row['reduced_over_full']:.2f}; {row['error']}")
    if args.trajectory:
        np.save(args.trajectory, results["reduced"][f"red.q_{red.names[0]}"])
    return [row]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mechanism", nargs="?", default="two_bar", choices=tuple(EPOCHS))
    parser.add_argument("--epochs", type=int, default=None, help=f"default {EPOCHS}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reduction", help="a pickled reduction to use (not two_bar)")
    parser.add_argument("--save", help="pickle the trained reduction here (not two_bar)")
    parser.add_argument("--trajectory", help="save the reduced coordinate (.npy, not two_bar)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if args.epochs is None:
        args.epochs = EPOCHS[args.mechanism]
    warnings.simplefilter("ignore", UserWarning)
    rows = (two_bar if args.mechanism == "two_bar" else compare)(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": machine(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
