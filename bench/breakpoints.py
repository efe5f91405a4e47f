"""Cost of splitting the integration at known input discontinuities (breakpoints).

The Cauer filter's 1 V step at t = 1 s is a breakpoint: IDAS runs two segments and the
algebraic unknowns are re-solved at the step. This times a re-run of ``simulate`` (the
integrators cached, a changed parameter) with the breakpoint and with breakpoints switched
off, in one process, best of ``--repeats``.

    PYTHONPATH=. python bench/breakpoints.py [--repeats 7]     # from the checkout
"""

from __future__ import annotations

import argparse
import time

import acausal as ac
from examples.cauer_filter import build
from solvers import Simulations, simulate


def best(model: ac.Model, repeats: int) -> float:
    times, sims = [], Simulations()
    for k in range(repeats):
        tic = time.perf_counter()
        p = {"R1.R": 1 + k * 1e-9}
        simulate(model, t_end=60.0, dt=0.012, rtol=1e-8, atol=1e-10, params=p, simulators=sims)
        times.append(time.perf_counter() - tic)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    model = ac.compile(build())
    with_breakpoint = best(model, args.repeats)
    original = ac.Model.breakpoint_times
    ac.Model.breakpoint_times = lambda self, p, t0, t1: ()  # one segment, IDAS steps over it
    try:
        without = best(model, args.repeats)
    finally:
        ac.Model.breakpoint_times = original
    print(
        f"Cauer re-run: with breakpoint {with_breakpoint:.4f} s, without {without:.4f} s, "
        f"ratio {with_breakpoint / without:.2f}"
    )


if __name__ == "__main__":
    main()
