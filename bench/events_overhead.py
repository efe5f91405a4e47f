"""Events overhead: models without events, simulated before events existed and now.

Issue 3 asks that "a model without events is not slower after this issue than before it".
This script checks out git commit ``c9fce36`` (the last commit before events were added) and
``HEAD`` as two temporary worktrees (``git worktree add``; both removed afterwards) and times,
in each tree, two models without events:

* ``rc_ladder``: the RC ladder with N = 1000 stages of ``bench/rc_ladder.py``'s
  ``build_system`` (step source at t = 0, ``R = C = 1/N``), over 1 s with 101 output points,
  rtol 1e-6, atol 1e-8 (as in that benchmark);
* ``cauer``: the fifth-order Cauer low-pass filter of ``examples/cauer_filter.py`` (each tree's
  own copy; capacitor loops, index 2), over 60 s with dt 0.012, rtol 1e-8, atol 1e-10 (as in
  that example).

Each run is a fresh interpreter with ``PYTHONPATH`` at one tree (the worker checks that
``acausal`` and ``solvers`` were imported from there); runs alternate before / after, and the
best of ``--repeats`` (5) runs is kept per phase:

* compile:  ``ac.compile(system)``
* sim 1:    first ``simulate(model, ...)`` (builds initializer and IDAS, then runs)
* sim 2:    ``simulate`` again with one parameter changed (the integrator is reused): the
            best of three such calls

The Cauer filter is small (some 20 ms per phase), so its worker builds, compiles and
simulates it ten times over in its process (fresh system and model each time) and keeps the
best of each phase; the ladder's worker does it once.

Both trees' results are compared (max abs difference of one output on the grid).

    python bench/events_overhead.py                         # c9fce36 vs HEAD, best of 5
    python bench/events_overhead.py --working-tree          # also the uncommitted checkout
    python bench/events_overhead.py --before c9fce36 --after HEAD --repeats 5 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = {
    # name: (simulate arguments, output compared, parameter changed in sim 2, rounds in one
    # process: a small model is built, compiled and simulated several times, best kept)
    "rc_ladder": (
        {"t_end": 1.0, "dt": 0.01, "rtol": 1e-6, "atol": 1e-8},
        "C1000.v",
        ("R1.R", 1.1e-3),
        1,
    ),
    "cauer": (
        {"t_end": 60.0, "dt": 0.012, "rtol": 1e-8, "atol": 1e-10},
        "C5.v",
        ("R1.R", 1.1),
        10,
    ),
}


# -- the worker: one model, one tree, one fresh process ------------------------------------
def build(model: str):
    if model == "rc_ladder":
        sys.path.insert(0, HERE)
        from rc_ladder import build_system

        return build_system(1000, 0.0)
    from examples.cauer_filter import build as build_cauer

    return build_cauer()


def worker(model: str, tree: str) -> dict:
    import warnings

    import numpy as np

    import acausal as ac
    import solvers
    from solvers import simulate

    for mod in (ac, solvers):
        where = os.path.realpath(mod.__file__)
        if not where.startswith(os.path.realpath(tree) + os.sep):
            raise RuntimeError(f"{mod.__name__} imported from {where}, not from {tree}")
    args, output, (pname, pvalue), rounds = MODELS[model]
    times: dict[str, float] = {}

    def timed(key: str, fun, *a, **kw):
        tic = time.perf_counter()
        value = fun(*a, **kw)
        times[key] = min(times.get(key, float("inf")), time.perf_counter() - tic)
        return value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(rounds):
            system = timed("build", build, model)
            compiled = timed("compile", ac.compile, system)
            res1 = timed("sim1", simulate, compiled, **args)
            for _ in range(3):
                res2 = timed("sim2", simulate, compiled, **args, params={pname: pvalue})
    return {
        "times": times,
        "t": np.asarray(res1.t).tolist(),
        "y1": np.asarray(res1[output]).tolist(),
        "y2": np.asarray(res2[output]).tolist(),
        "states": int(compiled.dae.x.numel()),
        "algebraic": int(compiled.dae.z.numel()),
    }


# -- the driver ----------------------------------------------------------------------------
def git(*cmd: str) -> str:
    proc = subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(cmd)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def run_worker(model: str, tree: str, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", model, "--tree", tree]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=tree
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-3:]
        return {"error": f"exit code {proc.returncode}: " + " | ".join(tail)}
    return json.loads(lines[-1])


def measure(trees: dict[str, str], repeats: int, timeout: float) -> dict:
    """Best time per model, tree and phase over ``repeats`` rounds of fresh processes."""
    import numpy as np

    out: dict = {}
    for model in MODELS:
        best: dict[str, dict[str, float]] = {label: {} for label in trees}
        runs: dict[str, list[dict]] = {label: [] for label in trees}
        errors: dict[str, str] = {}
        last: dict[str, dict] = {}
        for k in range(repeats):
            order = list(trees) if k % 2 == 0 else list(trees)[::-1]  # alternate who goes first
            for label in order:
                r = run_worker(model, trees[label], timeout)
                if "error" in r:
                    errors[label] = r["error"]
                    print(f"{model} {label} run {k + 1}: FAILED: {r['error']}", flush=True)
                    continue
                runs[label].append(r["times"])
                for phase, value in r["times"].items():
                    best[label][phase] = min(best[label].get(phase, float("inf")), value)
                last[label] = r
                times = ", ".join(f"{p} {v:.3g}" for p, v in r["times"].items())
                print(f"{model} {label} run {k + 1}: {times}", flush=True)
        entry: dict = {"best": best, "runs": runs, "errors": errors}
        labels = [label for label in trees if label in last]
        if len(labels) >= 2:
            a, b = last[labels[0]], last[labels[1]]
            entry["diff"] = {
                f"{labels[1]} vs {labels[0]}": float(
                    max(
                        np.max(np.abs(np.subtract(a["y1"], b["y1"]))),
                        np.max(np.abs(np.subtract(a["y2"], b["y2"]))),
                    )
                )
            }
        if last:
            any_run = next(iter(last.values()))
            entry["states"], entry["algebraic"] = any_run["states"], any_run["algebraic"]
        out[model] = entry
    return out


def table(results: dict, labels: list[str]) -> str:
    """Markdown: best times (s) per tree and the ratios against the first tree."""
    base = labels[0]
    head = "| model | phase | " + " | ".join(f"{x} (s)" for x in labels)
    head += "".join(f" | {x} / {base}" for x in labels[1:]) + " |"
    rows = [head, "|---|---|" + "---:|" * (2 * len(labels) - 1)]
    notes = []
    for model, entry in results.items():
        for phase in ("compile", "sim1", "sim2"):
            vals = [entry["best"][x].get(phase) for x in labels]
            cells = ["-" if v is None else f"{v:.4g}" for v in vals]
            ratios = [
                "-" if v is None or vals[0] is None else f"{v / vals[0]:.2f}" for v in vals[1:]
            ]
            rows.append(f"| {model} | {phase} | " + " | ".join(cells + ratios) + " |")
        for label, text in entry["errors"].items():
            notes.append(f"- {model}, {label}: {text}")
        for what, value in entry.get("diff", {}).items():
            notes.append(f"- {model}: max |output difference| {what}: {value:.1e}")
    return "\n".join(rows + [""] + notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="c9fce36", help="commit before events")
    parser.add_argument("--after", default="HEAD", help="commit after events")
    parser.add_argument(
        "--working-tree", action="store_true", help="also time this checkout as it is"
    )
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per tree")
    parser.add_argument("--timeout", type=float, default=600.0, help="per run (s)")
    parser.add_argument("--json", help="write the results to this JSON file")
    parser.add_argument("--worker", choices=list(MODELS), help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.tree)))
        return

    sys.path.insert(0, HERE)
    from machine import machine

    info = machine()
    commits = {
        "before": git("rev-parse", "--short", args.before),
        "after": git("rev-parse", "--short", args.after),
    }
    print(f"machine: {info}")
    print(f"before = {commits['before']}, after = {commits['after']}", flush=True)
    scratch = tempfile.mkdtemp(prefix="events_overhead_")
    trees = {label: os.path.join(scratch, label) for label in commits}
    added = []
    try:
        for label, commit in commits.items():
            git("worktree", "add", "--detach", trees[label], commit)
            added.append(trees[label])
        if args.working_tree:
            trees["working tree"] = ROOT
        results = measure(trees, args.repeats, args.timeout)
    finally:
        for tree in added:
            try:
                git("worktree", "remove", "--force", tree)
            except RuntimeError as exc:
                print(f"could not remove worktree {tree}: {exc}", file=sys.stderr)
        try:
            os.rmdir(scratch)
        except OSError:
            pass
    labels = list(trees)
    text = table(results, labels)
    print()
    print(f"before = {commits['before']}, after = {commits['after']}")
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {"machine": info, "commits": commits, "args": vars(args), "results": results},
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
