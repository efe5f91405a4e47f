"""Equation error against output error for the same parameters (issue 12: target 50x).

Case ``oscillator``: a carriage (1 kg) on a spring and a damper to a wall, pushed by
``2 sin(3t) + sin(7.3t)`` (the oscillator of ``tests/test_rollout.py``), 5 s sampled at
1 kHz, the truth simulated by IDAS at rtol 1e-10. Fitted: ``m``, ``c``, ``d`` from starts 30 % off.

* equation error: ``ln.fit_equations`` on the states and the exact acceleration (the time a
  user pays once derivatives are reconstructed; ``ln.reconstruct`` adds milliseconds);
* output error: ``ln.fit`` (least squares through IDAS forward sensitivities) on the
  position, its default tolerances.

Case ``servo``: the two-mass servo of ``examples/two_mass_servo.py`` with smooth friction
(``F_c tanh(w / 0.01) + F_v w`` per inertia: the study's least-squares baseline as the
truth, so both fits can reach it), 2 s at 1 kHz of its band-limited torque, IDAS at rtol
1e-10. Fitted: the eight parameters ``m_m, m_l, k, b`` and the four friction coefficients
from the example's starts (inertias, stiffness, damping 20-30 % off, friction at half):
equation error on the exact states and accelerations, output error on both angles.

Both must reach the truth (relative error printed); the ratio of wall times is the result,
best of ``--repeat`` runs each, interleaved (the servo's output error: one run, ~2 min).

    python bench/equation_error.py --json /tmp/bench_out/equation_error.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np
from machine import machine

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import acausal as ac  # noqa: E402
import learning as ln  # noqa: E402
from examples import two_mass_servo as ts  # noqa: E402
from examples.references.oscillator import oscillator  # noqa: E402
from solvers import simulate  # noqa: E402

TRUTH = {"m.m": 1.0, "k.c": 40.0, "d.d": 0.5}
START = {k: 1.3 * v for k, v in TRUTH.items()}
SERVO = {
    **ts.TRUTH,
    **{f"{side}_coulomb.tau_coulomb": ts.COULOMB[side] for side in ts.SIDES},
    **{f"{side}_viscous.d": ts.VISCOUS[side] for side in ts.SIDES},
}


def data() -> dict:
    t = np.arange(0.0, 5.0, 1e-3)
    push = 2.0 * ac.sin(3.0 * ac.time) + ac.sin(7.3 * ac.time)
    res = simulate(oscillator(push), grid=t, rtol=1e-10, atol=1e-12)
    force = 2.0 * np.sin(3.0 * t) + np.sin(7.3 * t)
    return {
        "t": t,
        "m.s": res["m.s"],
        "m.v": res["m.v"],
        "der(m.v)": res["der(m.v)"],
        "F": force,
    }


def equation_error(rec: dict) -> tuple[float, ln.FitResult]:
    tic = time.perf_counter()
    fit = ln.fit_equations(
        oscillator(), [rec], physical=list(TRUTH), inputs={"F.f_constant": "F"}, x0=START
    )
    return time.perf_counter() - tic, fit


def output_error(rec: dict) -> tuple[float, ln.FitResult]:
    push = 2.0 * ac.sin(3.0 * ac.time) + ac.sin(7.3 * ac.time)
    tic = time.perf_counter()
    fit = ln.fit(
        oscillator(push),
        {"t": rec["t"], "m.s": rec["m.s"]},
        physical=list(TRUTH),
        x0=START,
        progress=False,
    )
    return time.perf_counter() - tic, fit


def servo_data() -> dict:
    """The servo's exact record (states, accelerations, torque) from its smooth truth."""
    t = np.arange(int(ts.DURATION * ts.RATE)) / ts.RATE
    tau = ts.torque(0, t.size)
    truth = [ts.smooth_friction(side, ts.W_SMOOTH) for side in ts.SIDES]
    res = simulate(ts.servo(*truth, (t, tau)), grid=t, rtol=1e-10, atol=1e-12)
    rec = {"t": t, "tau": tau}
    for side in ts.SIDES:
        for name, q in (("phi", "phi"), ("w", "w"), ("der(w)", "a")):
            key = f"der({side}.w)" if name == "der(w)" else f"{side}.{name}"
            rec[key] = res[f"{side}.{q}"]
    return rec


def servo_equation_error(rec: dict) -> tuple[float, ln.FitResult]:
    tic = time.perf_counter()
    fit = ts.fit_baseline(rec)
    return time.perf_counter() - tic, fit


def servo_output_error(rec: dict) -> tuple[float, ln.FitResult]:
    friction = [ts.smooth_friction(side, ts.W_SMOOTH, 0.5) for side in ts.SIDES]
    tic = time.perf_counter()
    fit = ln.fit(
        ts.servo(*friction, (rec["t"], rec["tau"]), values=ts.start_values()),
        {k: rec[k] for k in ("t", "motor.phi", "load.phi")},
        physical=list(SERVO),
        progress=False,
    )
    return time.perf_counter() - tic, fit


def measure(runs: dict, truth: dict, rec: dict) -> dict:
    """Best wall time and the largest relative error of each fit in ``runs`` (``{name:
    (function, repeats)}``), the runs interleaved."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    errors = {}
    for k in range(max(n for _, n in runs.values())):
        for name, (run, repeats) in runs.items():
            if k >= repeats:
                continue
            seconds, fit = run(rec)
            times[name].append(seconds)
            errors[name] = max(abs(fit.params[p] / v - 1) for p, v in truth.items())
    best = {k: min(v) for k, v in times.items()}
    return {
        "best_seconds": best,
        "max_relative_error": errors,
        "ratio": best["output error"] / best["equation error"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    parser.add_argument("--case", nargs="+", default=["oscillator", "servo"])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    cases = {
        "oscillator": (
            {
                "equation error": (equation_error, args.repeat),
                "output error": (output_error, args.repeat),
            },
            TRUTH,
            data(),
        ),
        "servo": (
            {
                "equation error": (servo_equation_error, args.repeat),
                "output error": (servo_output_error, 1),
            },
            SERVO,
            servo_data(),
        ),
    }
    out = {"machine": machine()}
    for case in args.case:
        runs, truth, rec = cases[case]
        out[case] = result = measure(runs, truth, rec)
        print(f"{case}:")
        for name, seconds in result["best_seconds"].items():
            error = result["max_relative_error"][name]
            print(f"  {name:15s} {seconds:8.3f} s (max relative error {error:.1e})")
        print(f"  output error / equation error: {result['ratio']:.0f}x")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)


if __name__ == "__main__":
    main()
