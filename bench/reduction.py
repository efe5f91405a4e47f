"""The two-bar actuator (issue 14): the reduced ODE in the sliders' heights against the full
planar DAE, seconds to compile and to simulate 10 s at 1 ms output (rtol 1e-8, atol 1e-10).

The reduction is the example's (``examples/reduce_two_bar.py``: decoder 2 x 32 x 32 x 8,
tanh, reconstruction + simulation losses, ``--epochs`` epochs on sim1); each figure is the
median of ``--repeat`` runs in this process, full and reduced alternating.

    python bench/reduction.py --json /tmp/bench_out/reduction.json
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
from examples import two_bar_actuator as tb  # noqa: E402
from solvers import simulate  # noqa: E402


def timed(system: ac.System) -> tuple[float, float, object]:
    """Seconds to compile and to simulate, and the result."""
    tic = time.perf_counter()
    model = ac.compile(system)
    built = time.perf_counter() - tic
    tic = time.perf_counter()
    res = simulate(model, t_end=tb.DURATION, dt=tb.DT, rtol=1e-8, atol=1e-10)
    return built, time.perf_counter() - tic, res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
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
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": machine(), "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
