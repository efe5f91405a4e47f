"""``ln.identifiability`` with a network block (issue 32): the NNAP slider-crank's learner
(``examples/learn_slider_crank.py``: a 32-unit ReLU load of 129 weights, standardized by
the data) at the NNAP setting's physical values (``examples/nnap_slider_crank.py``), its
parameters ``m3, J1, Bm`` and the load's weights as one block, six experiments (3 torque
profiles x 2 start angles) of 600 samples at 2 kHz, outputs the crank angle and speed,
the default tolerances (rtol 1e-8, atol 1e-10).

Prints the machine, the wall time of the report and its main numbers; ``--profile`` adds
cProfile's functions by cumulative time, ``--save`` writes the report's arrays to an
``.npz`` and ``--compare`` prints the largest differences to such a file (e.g. one saved
by an earlier commit: the numbers must agree to the precision they are computed).

    PYTHONPATH=. python bench/identifiability.py [--profile] [--save a.npz] [--compare b.npz]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import acausal as ac  # noqa: E402
import learning as ln  # noqa: E402
from bench.machine import machine  # noqa: E402
from examples import learn_slider_crank as ex  # noqa: E402 - the shared builders
from examples import nnap_slider_crank as nn  # noqa: E402
from learning.fitting.identifiability import IdentifiabilityReport  # noqa: E402

SAMPLES, PROFILES = 600, 3


def experiments() -> tuple[list, dict[str, list[str]]]:
    """``(experiments, blocks)``: the learner's mechanism playing each trajectory's torque
    from its start angle, with the first ``SAMPLES`` times (only the times are used)."""
    data = nn.trajectories(count=PROFILES)
    law = ex.network(data)
    values = {"m_slider": nn.M_SLIDER, "J": nn.J1, "Bm": nn.BM}
    exps = []
    for x in data:
        t, tau = x["t"][:SAMPLES], x["tau"][:SAMPLES]
        load = ln.Unknown("load", ac.Flange, law)
        system = nn.mechanism(load, (t, tau), float(x[nn.THETA][0]), values=values)
        exps.append((ac.compile(system), {"t": t}))
    return exps, {"load": load.parameter_names()}


def report(exps: list, blocks: dict[str, list[str]]) -> IdentifiabilityReport:
    return ln.identifiability(
        None,
        fitted=list(ex.PHYSICAL),
        outputs=[nn.THETA, nn.OMEGA],
        blocks=blocks,
        experiments=exps,
    )


def arrays(rep) -> dict[str, np.ndarray]:
    """The report's numbers as arrays (subsets in the report's order)."""
    return {
        "S": rep.S,
        "singular_values": rep.singular_values,
        "correlation": rep.correlation,
        "cosines": rep.cosines,
        "weakest": np.array(list(rep.weakest.values())),
        "importance": np.array(list(rep.importance.values())),
        "overlap": np.array([v for o in rep.overlap.values() for v in o.values()]),
        "block_rank": np.array(list(rep.block_rank.values())),
        "collinearity": np.array(list(rep.collinearity.values())),
        "determinant": np.array(list(rep.determinant.values())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--save")
    parser.add_argument("--compare")
    args = parser.parse_args()
    print(machine())
    tic = time.perf_counter()
    exps, blocks = experiments()
    print(f"setup (data and compile): {time.perf_counter() - tic:.1f} s")
    profile = cProfile.Profile() if args.profile else None
    tic = time.perf_counter()
    if profile:
        profile.enable()
    rep = report(exps, blocks)
    if profile:
        profile.disable()
    wall = time.perf_counter() - tic
    print(f"identifiability: {wall:.1f} s ({len(rep.columns)} columns, S {rep.S.shape})")
    print(rep)
    if profile:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    if args.save:
        np.savez(args.save, **arrays(rep))
    if args.compare:
        ref = np.load(args.compare)
        for k, v in arrays(rep).items():
            r = ref[k]
            finite = np.isfinite(r) & np.isfinite(v)
            scale = max(np.max(np.abs(r[finite]), initial=0.0), 1e-300)
            diff = np.max(np.abs(v[finite] - r[finite]), initial=0.0) / scale
            print(f"  {k:16s} shape {v.shape}: max difference {diff:.2e} of its largest entry")


if __name__ == "__main__":
    main()
