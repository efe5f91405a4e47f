"""Forward sensitivities: our augmented DAE vs CasADi's forward derivative of IDAS.

The Cauer filter of the main job with R1 an unknown (the polynomial law, 5 raw
parameters, and the paper's neural law, 9), 201 output times over 40 s, rtol 1e-8,
atol 1e-10 (the fit's): the wall time of ``d(X, Z)/dtheta`` by each method (best of
``--repeats``, after one warm-up call each), the plain simulation's, and the largest
difference between the two methods relative to the largest sensitivity.

    PYTHONPATH=. python bench/sensitivities.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import acausal as ac
import learning as ln
from bench.machine import machine
from examples.learn_cauer import SAMPLES, cauer, laws
from solvers.simulate import simulator


def best(repeats: int, fun, *args) -> float:
    """The shortest of ``repeats`` calls ``fun(*args)``, after one warm-up call."""
    fun(*args)
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        fun(*args)
        times.append(time.perf_counter() - tic)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    for name, law in laws(constrained=True).items():
        unknown = ln.Unknown("R1", ac.Pin, law=law)
        model = ac.compile(cauer(unknown))
        p = np.array(list(model.parameters.values()))
        sim = simulator(model, SAMPLES, 1e-8, 1e-10, p)
        which = [list(model.parameters).index(n) for n in unknown.parameter_names()]
        ours = sim.sensitivities(p, which)[2]
        theirs = sim._forward_sensitivities(p, which)[0]
        diff = np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs))
        t_plain = best(args.repeats, sim.run, p)
        t_ours = best(args.repeats, sim.sensitivities, p, which)
        t_casadi = best(args.repeats, sim._forward_sensitivities, p, which)
        print(
            f"{name:>10} ({len(which)} parameters): plain {t_plain:.3f} s, augmented DAE "
            f"{t_ours:.3f} s, CasADi forward {t_casadi:.3f} s (ratio {t_casadi / t_ours:.1f}); "
            f"max difference {diff:.1e} of the largest sensitivity"
        )


if __name__ == "__main__":
    main()
