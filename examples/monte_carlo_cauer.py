"""A tolerance study of the fifth-order Cauer low-pass filter: 1,000 filters whose resistors,
capacitors and inductors are each drawn within +-5 % of their nominal values (a normal
distribution truncated there, the tolerance at 3 sigma, as parts are specified), the
1 V step response of each, its mean and 5-95 % band of the output voltage (``out/
monte_carlo_cauer.png``), and the throughput of each executor on the same members (they
must agree to rounding).

    python examples/monte_carlo_cauer.py [--members 1000] [--out DIR]
        [--executors serial,threads,processes,dask]

The Dask run starts a 2-worker ``LocalCluster`` (``pip install -e ".[dask]"``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import acausal as ac
from solvers import BatchResult, sample_design, simulate_many, tolerance_ranges

try:
    from examples.cauer_filter import build
    from examples.plotting import pyplot
except ImportError:  # run as a script: its own folder is on sys.path
    from cauer_filter import build
    from plotting import pyplot

RUN = {"t_end": 60.0, "dt": 0.06, "rtol": 1e-8, "atol": 1e-10}
OUTPUT = "C5.v"  # the load voltage (R2 is across C5)


def component_values(model: ac.Model) -> list[str]:
    """The R, C and L parameters: the components' values."""
    return [n for n in model.parameters if n.split(".")[1] in ("R", "C", "L")]


def run(executor: str, model: ac.Model, design: dict) -> BatchResult:
    """The batch on ``executor`` (``"dask"``: a 2-worker LocalCluster made for it)."""
    if executor != "dask":
        return simulate_many(model, design, outputs=[OUTPUT], executor=executor, **RUN)
    from distributed import Client, LocalCluster

    tic = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            client.wait_for_workers(2)
            print(f"  (a 2-worker LocalCluster started in {time.perf_counter() - tic:.2f} s)")
            return simulate_many(model, design, outputs=[OUTPUT], executor=client, **RUN)


def plot(batch: BatchResult, path: Path) -> None:
    plt = pyplot()
    if plt is None:
        return
    lo, hi = batch.percentile(OUTPUT, [5, 95])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.fill_between(batch.t, lo, hi, alpha=0.3, label="5-95 % of the members")
    ax.plot(batch.t, batch.mean(OUTPUT), label="mean")
    ax.set_xlabel("time [s]")
    ax.set_ylabel(f"{OUTPUT} [V]")
    ax.set_title(f"Cauer filter, {batch.ok.sum()} members, components +-5 % (3 sigma)")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=1000)
    parser.add_argument("--executors", default="serial,threads,processes,dask")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = ac.compile(build())
    ranges = tolerance_ranges(model, 0.05, component_values(model), distribution="truncnorm")
    design = sample_design(ranges, args.members, "lhs", seed=args.seed)
    batches = {}
    for executor in args.executors.split(","):
        batch = batches[executor] = run(executor, model, design)
        print(
            f"{batch.executor:>22s}: {batch.n_members} members in {batch.wall_time:.2f} s, "
            f"{batch.throughput:.0f} members/s, {len(batch.errors)} failed"
        )
    first = next(iter(batches.values()))
    for name, batch in batches.items():
        diff = np.max(np.abs(batch[OUTPUT] - first[OUTPUT]))
        print(f"  largest difference of {name} from {next(iter(batches))}: {diff:.2g} V")
    lo, hi = first.percentile(OUTPUT, [5, 95])
    peak = np.argmax(first.mean(OUTPUT))
    print(
        f"{OUTPUT}: overshoot peak {first.mean(OUTPUT)[peak]:.4f} V at t = {first.t[peak]:.2f} s "
        f"(5-95 %: {lo[peak]:.4f} to {hi[peak]:.4f} V); at {first.t[-1]:g} s mean "
        f"{first.mean(OUTPUT)[-1]:.4f} V (5-95 %: {lo[-1]:.4f} to {hi[-1]:.4f} V)"
    )
    plot(first, out / "monte_carlo_cauer.png")
    print(f"wrote {out / 'monte_carlo_cauer.png'}")


if __name__ == "__main__":
    main()
