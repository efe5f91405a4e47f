"""Build and compile time of the two benchmark ladders against N: is compiling linear?

The ladders (issue 15):

* RC ladder: a 1 V ``StepVoltage`` feeding N stages, each a series ``Resistor`` R = 1/N
  then a shunt ``Capacitor`` C = 1/N to ground (index 1, N states).
* mass-spring-damper chain: N ``Mass`` es of 1/N kg on a line, a ``Spring`` of 100 N N/m
  from the wall to the first and between neighbours, a ``Damper`` of N N s/m from each
  mass to the wall, a ``ConstantForce`` of 1 N on the last mass (index 1: a damper's
  ``s_rel`` is its mass's position less ``L/2`` and the wall's ``s0``, an alias with an
  offset of parameters, so its ``der(s_rel)`` is the mass's speed; 2N states).

Per ladder and N, in a fresh subprocess (so peak memory is per figure): build (the
``ac.System`` in Python: the array form of :meth:`acausal.Component.array` unless
``--scalar``), compile (``ac.compile``, with its stages from ``model.timings``) and peak
resident memory (``resource.getrusage``), wall and CPU time (``time.process_time``: on a
shared machine the wall time also counts the waits for a core). The exponent is the
least-squares slope of log(time) against log(N).

    python bench/compile_scaling.py                         # N = 1000 3000 10000, both ladders
    python bench/compile_scaling.py --n 1000 3000 --scalar  # one component at a time
    python bench/compile_scaling.py --profile chain 1000    # cProfile of build + compile
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

from machine import fmt, machine

DEFAULT_N = [1000, 3000, 10000]
LADDERS = ("rc", "chain")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def builder(ladder: str):
    """The system builder of ``ladder`` (``examples/ladders.py``), imported on first use."""
    sys.path.insert(0, ROOT)
    from examples.ladders import chain, rc_ladder

    return {"rc": rc_ladder, "chain": chain}[ladder]


def measure(ladder: str, n: int, arrays: bool) -> dict:
    """Build and compile one ladder in this process."""
    import acausal as ac

    build_ladder = builder(ladder)
    tic, cpu = time.perf_counter(), time.process_time()
    system = build_ladder(n, arrays)
    build, build_cpu = time.perf_counter() - tic, time.process_time() - cpu
    tic, cpu = time.perf_counter(), time.process_time()
    model = ac.compile(system)
    compile_time, compile_cpu = time.perf_counter() - tic, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # GB (ru_maxrss: KB)
    return {
        "ladder": ladder,
        "n": n,
        "build": build,
        "compile": compile_time,
        "build_cpu": build_cpu,
        "compile_cpu": compile_cpu,
        "stages": dict(model.timings),
        "states": len(model.ir.states),
        "dummies": len(model.ir.dummies),
        "blocks": len(model.blocks),
        "peak_gb": peak,
    }


def run_child(ladder: str, n: int, arrays: bool) -> dict:
    """:func:`measure` in a fresh interpreter."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", ladder, str(n)]
    if not arrays:
        cmd.append("--scalar")
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{ladder} N={n} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def exponent(ns: list[int], times: list[float]) -> float:
    """Least-squares slope of log(time) against log(N)."""
    xs, ys = [math.log(n) for n in ns], [math.log(t) for t in times]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return num / sum((x - mx) ** 2 for x in xs)


def table(rows: list[dict]) -> str:
    """The markdown table of the runs, with the fitted exponents per ladder."""
    lines = [
        "| ladder | N | build (s) | compile (s) | build CPU (s) | compile CPU (s) "
        "| compile stages (s) | states | dummies | peak (GB) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        stages = ", ".join(f"{k} {fmt(v)}" for k, v in r["stages"].items())
        lines.append(
            f"| {r['ladder']} | {r['n']} | {fmt(r['build'])} | {fmt(r['compile'])} "
            f"| {fmt(r['build_cpu'])} | {fmt(r['compile_cpu'])} | {stages} "
            f"| {r['states']} | {r['dummies']} | {r['peak_gb']:.2f} |"
        )
    lines.append("")
    for ladder in LADDERS:
        sel = [r for r in rows if r["ladder"] == ladder]
        if len(sel) >= 2:
            ns = [r["n"] for r in sel]
            fits = ", ".join(
                f"{key} {exponent(ns, [r[key] for r in sel]):.2f}"
                for key in ("build", "compile", "build_cpu", "compile_cpu")
            )
            lines.append(f"{ladder}: fitted exponent of N: {fits}")
    return "\n".join(lines)


def profile(ladder: str, n: int, top: int = 30) -> None:
    """cProfile of building and compiling one ladder, top functions by cumulative time."""
    import cProfile
    import pstats

    import acausal as ac

    prof = cProfile.Profile()
    prof.enable()
    ac.compile(builder(ladder)(n))
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, nargs="+", default=DEFAULT_N)
    parser.add_argument("--ladders", nargs="+", choices=LADDERS, default=list(LADDERS))
    parser.add_argument("--scalar", action="store_true", help="one component at a time")
    parser.add_argument("--json", help="write the runs to this file")
    parser.add_argument("--profile", nargs=2, metavar=("LADDER", "N"))
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], int(args.child[1]), not args.scalar)))
        return
    if args.profile:
        profile(args.profile[0], int(args.profile[1]))
        return
    rows = [run_child(ladder, n, not args.scalar) for ladder in args.ladders for n in args.n]
    print(f"machine: {json.dumps(machine())}")
    print(f"construction: {'one component at a time' if args.scalar else 'Component.array'}")
    print(table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": machine(), "runs": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
