"""The learners' optimizer loop on fixed small cases (issue 32: one optimizer module): each
case's result at full precision (hex floats) and its time, to check a refactor of the loop
(Adam, the polishes, least squares) changes no number and no speed.

Cases (one thread each, seeded):

- ``train_lbfgs``: :func:`learning.train` of the mass-spring-damper of
  ``tests/test_rollout.py`` (1 kg, ``k.c`` 40, ``d.d`` 0.5, from 5 cm), its ``k.c`` and ``d.d``
  from 30 and 0.8 (truth 40, 0.5) on two 2 s trajectories, one more held out, feedforward,
  5 epochs of Adam (batch 64, lr 0.05, decay 0.9), then L-BFGS-B (20 iterations);
- ``train_lsq``: the same with ``horizon=4, stride=2``, 3 epochs, then least squares (10
  Jacobians);
- ``lagrangian``: :func:`learning.train_lagrangian` of the cart-pendulum's network on one
  4 s trial, one held out, 3 epochs, then Levenberg-Marquardt (5 evaluations);
- ``reduce_given``, ``reduce_learned``: :func:`learning.reduce_mechanism` of the two-bar
  actuator (4 s of sim1), hidden ``(6,)``, 3 and 2 epochs, minimal coordinates given or
  learned;
- ``equations``: :func:`learning.fit_equations` of the oscillator's ``m.m``, ``k.c``,
  ``d.d`` from the exact accelerations (least squares, bounded).

    python bench/learners.py --json /tmp/learners.json   # results (hex floats), seconds
    python bench/learners.py --repeat 3                    # seconds per case (median of 3)

Before and after a change: run a copy of the script in a copy of the tree before it
(``git archive <rev> | tar -x -C /tmp/before``), alternating with this one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import acausal as ac  # noqa: E402
import learning as ln  # noqa: E402
from examples import cart_pendulum as cp  # noqa: E402
from examples import two_bar_actuator as tb  # noqa: E402
from examples.references.oscillator import oscillator  # noqa: E402
from solvers import simulate  # noqa: E402

INPUTS = {"F.f_constant": "F"}


def trajectories() -> list[dict[str, np.ndarray]]:
    """Three 2 s runs at 2 ms, force ``2 sin(w t)``, ``w`` = 3, 5, 8 rad/s, with the exact
    acceleration ``der(m.v)``."""
    out = []
    for w in (3.0, 5.0, 8.0):
        force = 2.0 * ac.sin(w * ac.time)
        res = simulate(oscillator(force, s0=0.05), t_end=2.0, dt=2e-3, rtol=1e-12)
        f = 2 * np.sin(w * res.t)
        acc = f - 40.0 * res["m.s"] - 0.5 * res["m.v"]
        out.append({"t": res.t, "m.s": res["m.s"], "m.v": res["m.v"], "F": f, "der(m.v)": acc})
    return out


def cases() -> dict[str, Callable[[], Any]]:
    """Each case as a call returning its result (the data made once, here)."""
    runs = trajectories()
    model = ac.compile(oscillator(s0=0.05))
    start = {"k.c": 30.0, "d.d": 0.8}
    train = dict(physical=["k.c", "d.d"], inputs=INPUTS, x0=start, progress=False, threads=1)
    trials = cp.trials(2, seed=5, duration=4.0)
    sim1 = tb.simulate_case("sim1", duration=4.0)
    given, learned = tb.natural(sim1), ln.natural_coordinates(sim1, tb.BODIES)
    reduce = dict(hidden=(6,), progress=False, threads=1)
    physical = ["m.m", "k.c", "d.d"]
    return {
        "train_lbfgs": lambda: ln.train(
            model,
            runs[:2],
            validation=runs[2:],
            epochs=5,
            lr=0.05,
            decay=0.9,
            polish={"method": "lbfgs", "max_iter": 20},
            **train,
        ),
        "train_lsq": lambda: ln.train(
            model,
            runs[:2],
            horizon=4,
            stride=2,
            epochs=3,
            lr=0.05,
            polish={"method": "least_squares", "max_iter": 10},
            **train,
        ),
        "lagrangian": lambda: ln.train_lagrangian(
            ln.Lagrangian("lnn", cp.COORDINATES, network=cp.network(trials)),
            trials[:1],
            validation=trials[1:],
            epochs=3,
            polish={"max_iter": 5},
            progress=False,
            threads=1,
        ),
        "reduce_given": lambda: ln.reduce_mechanism(given, epochs=3, **reduce),
        "reduce_learned": lambda: ln.reduce_mechanism(learned, epochs=2, **reduce),
        "equations": lambda: ln.fit_equations(
            model, runs, physical=physical, inputs=INPUTS, x0={"m.m": 1.3, **start}
        ),
    }


def exact(result: Any) -> dict[str, Any]:
    """The result's numbers as hex floats (params or weights, losses, histories) and its
    message."""
    hexes = lambda xs: [float(x).hex() for x in xs]  # noqa: E731
    params = getattr(result, "params", None)
    values = (
        {k: float(v).hex() for k, v in params.items()}
        if params is not None
        else {
            "decoder": hexes(result.decoder_theta),
            "encoder": hexes(result.encoder_theta if result.encoder_theta is not None else []),
        }
    )
    return {
        "params": values,
        "loss": float(result.loss).hex(),
        "loss_history": hexes(result.loss_history),
        "validation_history": hexes(result.validation_history),
        "message": result.message,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write each case's exact result here")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (median time)")
    args = parser.parse_args()
    out, times = {}, {}
    for name, run in cases().items():
        seconds = []
        for _ in range(args.repeat):
            tic = time.perf_counter()
            result = run()
            seconds.append(time.perf_counter() - tic)
        out[name] = exact(result)
        times[name] = float(np.median(seconds))
        digest = hashlib.sha256(json.dumps(out[name], sort_keys=True).encode()).hexdigest()
        print(f"{name:15s} {times[name]:7.3f} s  {digest[:16]}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": out, "seconds": times}, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
