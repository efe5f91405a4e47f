"""Repeated ``simulate`` of one compiled model (issue 33: no process-wide simulator cache).

Per model: the first ``simulate(model, ...)`` (builds the initializer, the model's CasADi
functions and IDAS, then runs), then ``--repeats`` further calls at other parameter values
each way, interleaved so that a load change on a shared machine hits both alike; every call
reads one output (the result's readout functions are built on first use):

* plain:  ``simulate(model, ..., params=...)``: builds its own simulator each call;
* held:   ``simulate(model, ..., params=..., simulators=sims)`` with one
          ``solvers.Simulations`` for the loop: the calls after the first reuse it (what the
          former process-wide cache gave every repeated call).

Medians of the repeated calls, in ms. Models: the Cauer filter's 60 s step response (as
its MSL validation: dt 0.012, rtol 1e-8, atol 1e-10) and the 300-stage RC ladder
(``examples.ladders.rc_ladder``, 1 s, dt 0.01, default tolerances).

    python bench/repeat_simulate.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from machine import fmt, machine

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import acausal as ac  # noqa: E402
from examples.cauer_filter import build as cauer  # noqa: E402
from examples.ladders import rc_ladder  # noqa: E402
from solvers import Simulations, simulate  # noqa: E402

# model: (builder, simulate's arguments, the parameter varied, the output read)
CASES = {
    "Cauer filter": (cauer, dict(t_end=60.0, dt=0.012, rtol=1e-8, atol=1e-10), "R1.R", "C1.v"),
    "RC ladder N=300": (lambda: rc_ladder(300), dict(t_end=1.0, dt=0.01), "R1.R", "C300.v"),
}


def _ms(model: ac.Model, output: str, **kwargs: object) -> float:
    """One ``simulate(model, **kwargs)`` and the read of ``output``, in ms."""
    start = time.perf_counter()
    simulate(model, **kwargs)[output]
    return 1e3 * (time.perf_counter() - start)


def measure(build: object, args: dict, param: str, output: str, repeats: int) -> dict:
    """First call, then the medians of ``repeats`` plain and held calls (ms)."""
    model = ac.compile(build())
    value = model.parameters[param]
    first = _ms(model, output, **args)
    sims = Simulations()
    simulate(model, **args, simulators=sims)[output]  # the held simulator, built once
    plain, held = [], []
    for k in range(repeats):
        params = {param: value * (1.0 + 0.01 * (k + 1))}
        plain.append(_ms(model, output, **args, params=params))
        held.append(_ms(model, output, **args, params=params, simulators=sims))
    return {
        "first": first,
        "plain": statistics.median(plain),
        "held": statistics.median(held),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    info = machine()
    print(
        f"machine: {info['nproc']} cores, {info['cpu']}, Python {info['python']}, "
        f"commit {info['git_commit']}{' (dirty)' if info['git_dirty'] else ''}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print("| model | first simulate | repeated, plain | repeated, simulators=Simulations() |")
    print("|---|---|---|---|")
    for name, (build, sim_args, param, output) in CASES.items():
        r = measure(build, sim_args, param, output, args.repeats)
        print(f"| {name} | {fmt(r['first'])} ms | {fmt(r['plain'])} ms | {fmt(r['held'])} ms |")


if __name__ == "__main__":
    main()
