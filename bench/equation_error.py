"""Equation error against output error for the same parameters (issue 12: target 50x).

A carriage (1 kg) on a spring and a damper to a wall, pushed by ``2 sin(3t) + sin(7.3t)``
(the oscillator of ``tests/test_rollout.py``), 5 s sampled at 1 kHz, the truth simulated by
IDAS at rtol 1e-10. Fitted: ``m``, ``c``, ``d`` from starts 30 % off.

* equation error: ``ln.fit_equations`` on the states and the exact acceleration (the time a
  user pays once derivatives are reconstructed; ``ln.reconstruct`` adds milliseconds);
* output error: ``ln.fit`` (least squares through IDAS forward sensitivities) on the
  position, its default tolerances.

Both must reach the truth (relative error printed); the ratio of wall times is the result,
best of ``--repeat`` runs each, interleaved.

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
from solvers import simulate  # noqa: E402
from tests.test_rollout import oscillator  # noqa: E402

TRUTH = {"m.m": 1.0, "k.c": 40.0, "d.d": 0.5}
START = {k: 1.3 * v for k, v in TRUTH.items()}


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rec = data()
    times: dict[str, list[float]] = {"equation error": [], "output error": []}
    errors = {}
    for _ in range(args.repeat):
        for name, run in (("equation error", equation_error), ("output error", output_error)):
            seconds, fit = run(rec)
            times[name].append(seconds)
            errors[name] = max(abs(fit.params[k] / v - 1) for k, v in TRUTH.items())
    best = {k: min(v) for k, v in times.items()}
    out = {
        "machine": machine(),
        "best_seconds": best,
        "max_relative_error": errors,
        "ratio": best["output error"] / best["equation error"],
    }
    for name in best:
        print(f"{name:15s} {best[name]:8.3f} s (max relative error {errors[name]:.1e})")
    print(f"output error / equation error: {out['ratio']:.0f}x")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)


if __name__ == "__main__":
    main()
