"""A slider-crank reduced to one learned coordinate by the full autoencoder (Angeli, Desmet and
Naets, Section 4.2.1: the minimal coordinate is not given, an encoder learns it).

    python examples/reduce_slider_crank.py            # the full experiment (~12 min, 2 cores)
    python examples/reduce_slider_crank.py --quick    # fewer epochs (~3 min)

The planar library's slider-crank (the NNAP paper's dimensions: crank 0.05 m, rod 0.29 m,
0.23 / 0.35 / 0.77 kg) in a horizontal plane, its crank free, the slider held by a spring
(500 N/m, at rest where the crank is square to the slider line) and a damper (4 N s/m) and
pushed along its line by a force of 0.5 and 1.1 Hz (below the spring's resonance): the crank
swings between 53 and 131 degrees, away from the dead centres (a one-coordinate chart of a
full revolution would need an angle; an earlier force at 2.9 Hz drove the crank round and
no encoder of one coordinate can follow that). Natural coordinates: both ends of the crank
and of the rod, the slider's point and one beside it (12); the mobility, 1, from the
compiled model's two states. The encoder (12 x 32 x 32 x 1) and decoder (1 x 32 x 32 x 12,
tanh) learn from ``train`` (10 s at 1 kHz); the reduced component takes the force through a
load connector at the slider's decoded position and is simulated on ``lower`` (7 N at
0.8 Hz, never seen) and ``higher`` (1.3 x train: the crank reaches 39-159 degrees, out of
range, the flag), the centres of mass against the full DAE's, for the reconstruction +
simulation losses and the ablation, reconstruction only. Writes
``out/reduce_slider_crank.png``.

Measured (full run, 150 epochs, shared 2-core machine): with both losses the centres of mass
stay within 0.067 % (train) and 0.077 % (lower, never seen) of their range of motion; with
reconstruction only 2.55 % and 1.35 % (38x and 17x larger). On ``higher`` the flag is raised
at t = 0.25 s (both models); the reduced model with both losses runs through (75 % off)
and the reconstruction-only one stops at t = 1.49 s. Simulation time (compiled models, 10 s
at 1 ms output): reduced ODE 0.40 s (train) and 0.27 s (lower) against the full DAE's 0.46 s
and 0.45 s (1.2x and 1.7x; ``bench/README.md``): the full model is small (three bodies, one
loop), the reduced one evaluates the decoder with its first and second derivatives.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import acausal as ac  # noqa: E402
import learning as ln  # noqa: E402
from components import planar as pl  # noqa: E402
from components import translational as tr  # noqa: E402
from examples.plotting import pyplot  # noqa: E402
from solvers import simulate  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "out"
L1, L2 = 0.05, 0.29
REST = float(np.sqrt(L2**2 - L1**2))  # the slider's distance with the crank at 90 degrees
SPRING, DAMPER = 500.0, 4.0
BODIES = ("sc.crank", "sc.rod", "sc.slider")  # found by name in the system
LOADS = {"slider": ln.PointLoad("sc.slider", (0.0, 0.0), (1.0, 0.0), "sc.slide.f")}
DURATION, DT = 10.0, 1e-3
PAPER = (
    "paper (Section 5.1, a MacPherson suspension with a learned coordinate, figures only): "
    "the reduced model generalizes to a force it never saw inside the training range "
    "(Fig. 9) and fails outside it (Fig. 10); with L_rec alone it departs (Fig. 14, two-bar)"
)
FULL = {"epochs": 150, "lr": 3e-3, "decay": 0.98}
QUICK = {"epochs": 15, "lr": 3e-3, "decay": 0.98}


def force(case: str) -> object:
    """The force on the slider (N) of ``case``."""
    t = ac.time
    if case == "train":
        return 8 * (ac.sin(2 * np.pi * 0.5 * t) + 0.6 * ac.sin(2 * np.pi * 1.1 * t))
    if case == "lower":
        return 7 * ac.sin(2 * np.pi * 0.8 * t + 0.4)
    if case == "higher":
        return 1.3 * force("train")
    raise ValueError(f"unknown case {case!r}")


def mount(s: ac.System, flange: ac.Connector, push: object) -> None:
    """The slider's spring, damper and force between ``flange`` and the ground."""
    spring = tr.Spring("spring", c=SPRING, s_rel0=REST)
    damper, ground, source = (
        tr.Damper("damper", d=DAMPER),
        tr.Fixed("ground"),
        tr.Force("push", f=push),
    )
    s.connect(flange, spring.flange_b, damper.flange_b, source.flange)
    s.connect(ground.flange, spring.flange_a, damper.flange_a)


def mechanism(case: str) -> ac.System:
    s = ac.System("slider_crank")
    world = pl.World("world", g=0.0)  # a horizontal plane
    sc = pl.SliderCrank("sc", theta0=np.pi / 2, w0=0.0)
    s.connect(world.frame_b, sc.frame_a)
    mount(s, sc.slider_axis, force(case))
    return s


SYSTEMS: dict[str, ac.System] = {}
SECONDS: dict[tuple[str, str], float] = {}  # simulation times (compiled models) by (model, case)


def full_run(case: str, duration: float = DURATION) -> object:
    """The full model's response to ``case`` (its system kept for :func:`bodies`)."""
    SYSTEMS[case] = mechanism(case)
    model = ac.compile(SYSTEMS[case])
    tic = time.perf_counter()
    res = simulate(model, t_end=duration, dt=DT, rtol=1e-8, atol=1e-10)
    SECONDS["full", case] = time.perf_counter() - tic
    return res


def bodies(case: str = "train") -> list[pl.Body]:
    """The planar bodies of ``case``'s system (their inertia is the slider-crank's)."""
    parts = {c.full_name: c for c in SYSTEMS[case].all_components()}
    return [parts[b] for b in BODIES]


def reduced_run(
    red: ln.Reduction, case: str, start: dict, duration: float = DURATION
) -> tuple[object, ln.ReducedModel, str | None]:
    """The reduced model on ``case`` from the full model's start ``start``: its result, the
    component and, when IDAS gives up (a reduced model far outside its training range may
    leave the chart: ``M_m`` -> 0), the failure; the result is then the run up to the last
    output time before it, which the error keeps (it names the coordinate outside its
    training range there)."""
    q0, v0 = red.initial(start["x"][0], start["v"][0])
    s = ac.System("slider_crank_reduced")
    comp = red.component("red", q0=q0, v0=v0)
    mount(s, comp.slider, force(case))
    model = ac.compile(s)
    tic = time.perf_counter()
    try:
        res = simulate(model, t_end=duration, dt=DT, rtol=1e-8, atol=1e-10)
        SECONDS["reduced", case] = time.perf_counter() - tic
        return res, comp, None
    except ac.SimulationError as err:
        if err.result is None or err.time < 20 * DT:
            raise
        return err.result, comp, f"IDAS gave up at t = {err.time:.3g} s"


def centres_error(full: object, red: object) -> float:
    """Max error of the bodies' centres of mass over each coordinate's range of motion
    (coordinates that move by less than a micrometre are skipped), over the reduced run's
    times (a failed run's: up to its failure)."""
    worst, n = 0.0, len(red.t)
    for b in BODIES:
        for axis in "xy":
            truth = full[f"{b}.{axis}_cm"]
            if np.ptp(truth) > 1e-6:
                mine = red[f"red.{b}.{axis}_cm"]
                miss = np.max(np.abs(mine - truth[:n])) / np.ptp(truth)
                worst = max(worst, float(miss))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer epochs")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)
    cfg = QUICK if args.quick else FULL
    tic = time.perf_counter()
    full = {case: full_run(case) for case in ("train", "lower", "higher")}
    data = ln.natural_coordinates(full["train"], bodies(), loads=LOADS)
    print(f"natural coordinates: {len(data.names)}, mobility {data.mobility}")
    runs, errors = {}, {}
    for name, losses in (("rec + sim", {"rec": 1.0, "sim": 1.0}), ("rec only", {"rec": 1.0})):
        red = ln.reduce_mechanism(
            data, hidden=(32, 32), batch=256, losses=losses, progress=False, **cfg
        )
        print(f"\n{name}: {red.message}, loss {red.loss:.3g} ({red.wall_time:.0f} s)")
        for case in ("train", "lower", "higher"):
            start = ln.natural_coordinates(full[case], bodies(case)).records[0]
            res, comp, failed = reduced_run(red, case, start)
            runs[name, case] = res
            flag = comp.outside_range(res)
            error = errors[name, case] = centres_error(full[case], res)
            took = (
                ""
                if failed
                else (
                    f"; reduced {SECONDS['reduced', case]:.2f} s vs full "
                    f"{SECONDS['full', case]:.2f} s"
                )
            )
            print(
                f"  {case}: centres of mass within {error:.3%} of their range"
                + (f" until {failed}" if failed else took)
                + (f"\n    flag: {flag}" if flag else " (in the training range)")
            )
    ratio = errors["rec only", "lower"] / errors["rec + sim", "lower"]
    print(f"\nablation on 'lower' (never seen): reconstruction only {ratio:.1f}x the error")
    print(PAPER)
    plt = pyplot()
    if plt is not None:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4))
        for ax, (b, axis) in zip(axes, (("sc.slider", "x"), ("sc.rod", "y"))):
            ax.plot(full["lower"].t, full["lower"][f"{b}.{axis}_cm"], "k", lw=2, label="full")
            for (name, case), res in runs.items():
                if case == "lower":
                    mine = res[f"red.{b}.{axis}_cm"]
                    ax.plot(res.t, mine, "--", label=f"reduced, {name}")
            ax.set_title(f"{b} {axis}_cm on 'lower' (never seen)")
            ax.set_xlabel("t [s]")
        axes[0].legend()
        fig.tight_layout()
        OUT.mkdir(exist_ok=True)
        fig.savefig(OUT / "reduce_slider_crank.png", dpi=110)
    print(f"\n({time.perf_counter() - tic:.0f} s)")


if __name__ == "__main__":
    main()
