"""Many simulations on every executor (issue 16): throughput of ``simulate_many`` on the
Cauer filter's Monte Carlo (components +-5 %, 60 s step response, 1,001 outputs, rtol 1e-8)
serially, with CasADi's threads, on local processes (a pool made per call, and a warm pool
kept across calls) and on a 2-worker Dask ``LocalCluster``; the per-task overhead of each
executor (empty tasks through ``solvers.run_tasks``); start-up costs; the break-even batch
size (the smallest batch an executor runs faster than serial). Prints a markdown table with
the machine line and the load average (the machine may be shared). ``--slider-crank``: what
a cross-validation fold of the slider-crank network ships to a worker and what the worker
spends before training (the pickled learner system with its 20 trajectories; unpickling and
compiling it), for the estimate of a cluster's cross-validation in ``bench/README.md``.

    python bench/many.py [--sizes 10,100,1000] [--repeats 2] [--json out.json]
    python bench/many.py --slider-crank
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from machine import fmt, machine

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import acausal as ac  # noqa: E402
from examples.cauer_filter import build  # noqa: E402 - the shared builder
from examples.monte_carlo_cauer import RUN, component_values  # noqa: E402
from solvers import (  # noqa: E402
    Shared,
    available_cores,
    run_tasks,
    sample_design,
    simulate_many,
    tolerance_ranges,
)

EMPTY_TASKS = 400


def nothing(shared: Shared, item: int) -> int:
    """An empty task: what an executor costs per task, without work."""
    return item


def overhead(executor: object) -> float:
    """Seconds per empty task (wall time of ``EMPTY_TASKS`` of them / their number)."""
    shared = Shared.of(None, "nothing")
    run_tasks(nothing, shared, range(8), executor)  # warm: workers up, modules imported
    tic = time.perf_counter()
    run_tasks(nothing, shared, range(EMPTY_TASKS), executor)
    return (time.perf_counter() - tic) / EMPTY_TASKS


def throughput(model: ac.Model, design: dict, executor: object, repeats: int) -> float:
    """The best wall time of ``repeats`` batches (after one of 4 members: the simulator
    built, the workers' caches filled)."""
    warm = {k: v[:4] for k, v in design.items()}
    simulate_many(model, warm, outputs=["C5.v"], executor=executor, **RUN)
    best = float("inf")
    for _ in range(repeats):
        batch = simulate_many(model, design, outputs=["C5.v"], executor=executor, **RUN)
        assert not batch.errors, batch
        best = min(best, batch.wall_time)
    return best


def slider_crank_payload() -> None:
    """Bytes of a fold's payload and a worker's set-up time before it trains."""
    from examples import learn_slider_crank as ex
    from examples import nnap_slider_crank as nn

    data = nn.trajectories()
    payload = pickle.dumps((ex.learner(data), data))
    tic = time.perf_counter()
    system, _ = pickle.loads(payload)
    ac.compile(system)
    setup = time.perf_counter() - tic
    print(
        f"slider-crank fold payload: {len(payload) / 1e6:.2f} MB ({len(data)} trajectories); "
        f"unpickle + compile on a worker: {setup:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", default=None)
    parser.add_argument("--slider-crank", action="store_true")
    args = parser.parse_args()
    if args.slider_crank:
        slider_crank_payload()
        return
    from distributed import Client, LocalCluster

    load_before = os.getloadavg()[0]
    sizes = [int(s) for s in args.sizes.split(",")]
    model = ac.compile(build())
    ranges = tolerance_ranges(model, 0.05, component_values(model))
    designs = {n: sample_design(ranges, n, "lhs", seed=n) for n in sizes}
    tic = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    client.wait_for_workers(2)
    cluster_start = time.perf_counter() - tic
    tic = time.perf_counter()
    pool = ProcessPoolExecutor(available_cores())
    list(pool.map(abs, range(available_cores())))  # the workers up
    pool_start = time.perf_counter() - tic
    executors = {
        "serial": "serial",
        "threads (CasADi map)": "threads",
        "processes (pool per call)": "processes",
        "processes (warm pool)": pool,
        "dask LocalCluster (2 workers)": client,
    }
    rows = []
    for label, executor in executors.items():
        row = {"executor": label, "overhead": overhead(executor)}
        for n in sizes:
            row[n] = throughput(model, designs[n], executor, args.repeats)
        rows.append(row)
        print(label, {k: fmt(v) if isinstance(v, float) else v for k, v in row.items()})
    pool.shutdown()
    client.close()
    cluster.close()
    per_member = rows[0][sizes[-1]] / sizes[-1]
    info = machine()
    print(
        f"\n{info['cpu']}, nproc {info['nproc']}, Python {info['python']}, CasADi "
        f"{info['casadi']}, commit {info['git_commit']}{' (dirty)' if info['git_dirty'] else ''}"
        f"; load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print(
        f"serial: {1e3 * per_member:.2f} ms per member; start-up: LocalCluster "
        f"{cluster_start:.2f} s, process pool {pool_start:.2f} s\n"
    )
    head = " | ".join(f"{n} members/s" for n in sizes)
    print(f"| executor | overhead per task (ms) | {head} | break-even batch |")
    print("|---|---:|" + "---:|" * len(sizes) + "---:|")
    for row in rows:
        rates = " | ".join(f"{n / row[n]:.0f}" for n in sizes)
        even = next((n for n in sizes if row[n] < rows[0][n]), None)
        even_text = "-" if row is rows[0] else (f"<= {even}" if even else f"> {sizes[-1]}")
        print(f"| {row['executor']} | {1e3 * row['overhead']:.3f} | {rates} | {even_text} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "machine": info,
                    "cluster_start": cluster_start,
                    "pool_start": pool_start,
                    "rows": [{str(k): v for k, v in r.items()} for r in rows],
                },
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
