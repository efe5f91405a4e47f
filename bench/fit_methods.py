"""Wall time of the fitting methods on the paper's experiment (``examples/learn_cauer.py``).

R1 of the Cauer filter (truth: a linear 2 ohm resistor) learned from the load voltage R2.v
with the paper's neural law (feasibility-constrained), by least squares with IDAS forward
sensitivities, direct collocation with IPOPT, and Powell (gradient-free). Each from the same
start; reported: wall time, simulations (failed ones too), the final loss (an IDAS
simulation at the returned parameters) and the time to first reach ``--target`` (the wall
time times the fraction of the loss history, evaluation by evaluation, spent before it; a
collocation fit is one IPOPT solve, so its whole wall time), with ratios to Powell.

    PYTHONPATH=. python bench/fit_methods.py [--powell-budget 2000] [--target 1e-6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import acausal as ac
import learning as ln
from components import electrical as el
from examples.learn_cauer import R_TRUE, SAMPLES, cauer, laws
from solvers import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--powell-budget", type=int, default=2000)
    parser.add_argument("--target", type=float, default=1e-6, help="loss to reach")
    args = parser.parse_args()
    truth = simulate(cauer(el.Resistor("R1", R=R_TRUE)), grid=SAMPLES, rtol=1e-10, atol=1e-12)
    data = {"t": SAMPLES, "R2.v": truth["R2.v"]}
    runs = {
        "least_squares": {},
        "collocation": {},
        "powell": {"options": {"maxfev": args.powell_budget}},
    }
    rows = []
    for method, extra in runs.items():
        unknown = ln.Unknown("R1", ac.Pin, law=laws(constrained=True)["neural"])
        tic = time.perf_counter()
        fit = ln.fit(cauer(unknown), data, method=method, progress=False, **extra)
        wall = time.perf_counter() - tic
        history = np.asarray(fit.loss_history, dtype=float)
        hit = np.nonzero(history <= args.target)[0]
        if method == "collocation":  # one IPOPT solve
            reach = wall if fit.loss <= args.target else float("nan")
        else:
            reach = wall * (hit[0] + 1) / len(history) if hit.size else float("nan")
        rows.append((method, reach))
        print(
            f"{method:>14}: {wall:7.2f} s, {fit.n_simulations:4d} simulations, "
            f"{fit.n_failed} failed, final loss {fit.loss:.3g}, "
            f"loss <= {args.target:g} after {reach:.2f} s"
        )
    powell = rows[-1][1]
    ratios = ", ".join(f"{m} {powell / r:.1f}" for m, r in rows[:-1])
    print(f"\ntime to loss <= {args.target:g}, Powell / method: {ratios}")


if __name__ == "__main__":
    main()
