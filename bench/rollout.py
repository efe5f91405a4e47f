"""Rollout training on the NNAP slider-crank (issue 11): seconds per epoch against the window
length N, and time to a free-run accuracy against least squares through IDAS sensitivities.

Data: ``examples/nnap_slider_crank.py`` with 2 torque profiles x 2 start angles (3
trajectories to train on, 1 held out), the learner of ``examples/learn_slider_crank.py``
(32-unit ReLU load and ``m3, J1, Bm``; 132 parameters).

* per epoch: ``ln.train`` with ``horizon = N`` (stride ``max(1, N // 3)``), explicit Euler,
  batch 200 windows for N = 1 and 16 for longer ones, ``EPOCHS`` epochs; the time per epoch
  and the number of windows;
* to a target: the held-out trajectory's free-run RMSE of the crank speed (IDAS on the
  fitted model, the same for both methods) after feedforward rollout training, and the time
  ``ln.fit(method="least_squares")`` (IDAS forward sensitivities of all 132 parameters, each
  experiment a system playing its torque samples) takes to reach it, within ``--budget`` s;
* threads: seconds per epoch at N = 1 and 300 with the windows on one thread and on every
  core (``ln.train(threads=...)``), explicit Euler and RK4.

    python bench/rollout.py --json /tmp/bench_out/rollout.json
    python bench/rollout.py --threads-only --json /tmp/bench_out/rollout_threads.json
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
from examples import learn_slider_crank as ex  # noqa: E402 - the shared builders
from examples import nnap_slider_crank as nn  # noqa: E402

EPOCHS = 3


def per_epoch(
    data: list[dict], horizons: list[int], scheme: str = "euler", threads: int | None = 1
) -> list[dict]:
    import learning as ln

    rows = []
    system = ex.learner(data)
    for n in horizons:
        tic = time.perf_counter()
        fit = ln.train(
            system,
            data[:3],
            physical=list(ex.PHYSICAL),
            inputs=nn.INPUTS,
            horizon=n,
            stride=max(1, n // 3),
            epochs=EPOCHS,
            batch=200 if n == 1 else 16,
            lr=1e-3,
            scheme=scheme,
            progress=False,
            threads=threads,
        )
        windows = sum(len(range(0, nn.SAMPLES - n, max(1, n // 3))) for _ in data[:3])
        rows.append(
            {
                "N": n,
                "s_per_epoch": (time.perf_counter() - tic) / EPOCHS,
                "windows": windows,
                "loss": fit.loss,
            }
        )
        print(
            f"N = {n:4d}, {scheme}, threads {threads or 'all'}: "
            f"{rows[-1]['s_per_epoch']:.3f} s per epoch ({windows} windows)",
            flush=True,
        )
    return rows


def threaded(data: list[dict], horizons: list[int]) -> list[dict]:
    """Seconds per epoch with the windows on one thread and on every core, for both schemes
    (the losses must agree: the threads only split the batch)."""
    rows = []
    for scheme in ("euler", "rk4"):
        one, every = per_epoch(data, horizons, scheme, 1), per_epoch(data, horizons, scheme, None)
        for a, b in zip(one, every):
            assert abs(a["loss"] - b["loss"]) <= 1e-12 * abs(a["loss"]), (a, b)
            rows.append(
                {"scheme": scheme, "N": a["N"], "one": a["s_per_epoch"], "all": b["s_per_epoch"]}
            )
    return rows


def held_out_rmse(params: dict, data: list[dict]) -> float:
    """Free-run RMSE of the crank speed by IDAS on the held-out trajectory."""
    import acausal as ac
    from solvers import simulate

    x = data[3]
    model = ac.compile(ex.learner(data, (x["t"], x["tau"]), float(x[nn.THETA][0])))
    own = {k: v for k, v in params.items() if k in model.parameters}
    res = simulate(model, grid=x["t"], params=own, rtol=1e-8, atol=1e-10)
    return float(np.sqrt(np.mean((res[nn.OMEGA] - x[nn.OMEGA]) ** 2)))


def to_target(data: list[dict], epochs: int, budget: float) -> dict:
    import learning as ln

    tic = time.perf_counter()
    fit = ln.train(
        ex.learner(data),
        data[:3],
        physical=list(ex.PHYSICAL),
        inputs=nn.INPUTS,
        horizon=1,
        epochs=epochs,
        batch=200,
        lr=3e-3,
        decay=0.98,
        scheme="euler",
        progress=False,
    )
    t_rollout = time.perf_counter() - tic
    target = held_out_rmse(fit.params, data)
    print(
        f"rollout: {epochs} epochs in {t_rollout:.1f} s, held-out RMSE {target:.4g} rad/s",
        flush=True,
    )
    exps = [
        (
            ex.learner(data, (x["t"], x["tau"]), float(x[nn.THETA][0])),
            {"t": x["t"], nn.OMEGA: x[nn.OMEGA]},
        )
        for x in data[:3]
    ]
    common = dict(
        experiments=exps,
        physical=list(ex.PHYSICAL),
        method="least_squares",
        progress=False,
        rtol=1e-6,
        atol=1e-8,
    )
    tic = time.perf_counter()
    probe = ln.fit(None, None, max_nfev=1, **common)  # one residual and one Jacobian
    per_iteration = time.perf_counter() - tic
    tic = time.perf_counter()
    ls = ln.fit(None, None, max_nfev=max(2, int(budget / per_iteration)), **common)
    t_ls = time.perf_counter() - tic
    reached = held_out_rmse(ls.params, data)
    print(
        f"least squares: {ls.n_iterations} iterations in {t_ls:.1f} s (one: "
        f"{per_iteration:.1f} s), held-out RMSE {reached:.4g} rad/s",
        flush=True,
    )
    del probe
    return {
        "rollout_s": t_rollout,
        "rollout_rmse": target,
        "least_squares_s": t_ls,
        "least_squares_rmse": reached,
        "least_squares_iterations": ls.n_iterations,
        "least_squares_iteration_s": per_iteration,
        "reached": reached <= target,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=[1, 10, 50, 100, 300])
    parser.add_argument("--epochs", type=int, default=40, help="rollout epochs to the target")
    parser.add_argument("--budget", type=float, default=600.0, help="least squares' seconds")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument(
        "--threads-only", action="store_true", help="only one thread against every core"
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    data = nn.trajectories(count=2)
    out = {"machine": machine(), "threads": threaded(data, [1, 300])}
    if not args.threads_only:
        out["per_epoch"] = per_epoch(data, args.horizons)
        out["to_target"] = to_target(data, args.epochs, args.budget)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
