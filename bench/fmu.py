"""Exported FMUs against the project's own simulation (issue 36).

For each model: the export time (CasADi's C code, the C compiler, the zip), then the same
simulation run by the project (``simulate``, IDAS; first run with its integrator's
construction, then a second run) and by fmpy in a separate process on the model-exchange FMU
(fmpy's CVode) and on the co-simulation FMU (the FMU's own RODAS4 steps); the FMU times are
fmpy's ``simulate_fmu`` calls alone (the FMU's loading and instantiation included, the
interpreter's start and fmpy's import not). Every run at the same relative tolerance; the
largest difference of the FMUs' outputs to the project's, relative to each output's range.

    PYTHONPATH=. python bench/fmu.py [--tol 1e-8] [--ladder 10 100 1000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import acausal as ac
from bench.machine import machine
from examples.ladders import rc_ladder
from examples.references.mechanisms import Variant
from examples.references.switching import friction_system, half_wave
from solvers import export_fmu, simulate

CHILD = """
import json, sys, time
from fmpy import simulate_fmu
r = json.load(sys.stdin)
tic = time.perf_counter()
res = simulate_fmu(r["path"], stop_time=r["stop"], output_interval=r["dt"], output=r["outputs"],
                   relative_tolerance=r["tol"])
took = time.perf_counter() - tic
json.dump({"time": took, "t": res["time"].tolist(),
           "values": {n: res[n].tolist() for n in r["outputs"]}}, sys.stdout)
"""


def cases(ladders: list[int]) -> list[tuple[str, ac.System, list[str], float, float]]:
    """(label, system, outputs, stop time, output interval)."""
    out = [
        (f"RC ladder {n}", rc_ladder(n, False, start_time=0.1), [f"C{n}.v", "R1.i"], 2.0, 0.01)
        for n in ladders
    ]
    out += [
        ("slider-crank", Variant("slider_crank", "crank", "torque", 0.0).build(),
         ["B1.phi", "inertia.w"], 1.0, 0.01),
        ("rectifier (6 events)", half_wave(), ["C.v", "D.off"], 0.05, 5e-4),
        ("stick/slip", friction_system(), ["m.s", "m.v"], 5.0, 0.01),
    ]  # fmt: skip
    return out


def fmpy_run(path: Path, outputs: list[str], stop: float, dt: float, tol: float) -> dict:
    request = {"path": str(path), "outputs": outputs, "stop": stop, "dt": dt, "tol": tol}
    done = subprocess.run(
        [sys.executable, "-I", "-c", CHILD], input=json.dumps(request), capture_output=True,
        text=True,
    )  # fmt: skip
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1]}
    return json.loads(done.stdout)


def deviation(fmu: dict, ref: object, outputs: list[str], grid: np.ndarray) -> float:
    """The largest difference at the output grid, relative to each output's range."""
    t = np.array(fmu["t"])
    rows = [int(np.flatnonzero(np.abs(t - g) <= 1e-9 * max(1.0, grid[-1]))[-1]) for g in grid]
    worst = 0.0
    for n in outputs:
        got = np.array(fmu["values"][n])[rows]
        worst = max(worst, float(np.max(np.abs(got - ref[n])) / max(np.ptp(ref[n]), 1e-12)))
    return worst


def measure(label, system, outputs, stop, dt, tol, folder: Path) -> dict:
    model = ac.compile(system)
    row: dict = {"model": label, "states": model.n_states}
    for kind in ("model-exchange", "co-simulation"):
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export_fmu(model, folder / f"{label.split()[0]}_{kind}.fmu", kind)
        row[f"export {kind}"] = time.perf_counter() - tic
    grid = np.linspace(0.0, stop, int(round(stop / dt)) + 1)
    for k in (1, 2):
        tic = time.perf_counter()
        ref = simulate(model, grid=grid, rtol=tol, atol=tol)
        row[f"project run {k}"] = time.perf_counter() - tic
    for kind in ("model-exchange", "co-simulation"):
        out = fmpy_run(folder / f"{label.split()[0]}_{kind}.fmu", outputs, stop, dt, tol)
        row[f"fmu {kind}"] = out.get("time", float("nan"))
        row[f"deviation {kind}"] = deviation(out, ref, outputs, grid) if "t" in out else None
        row[f"error {kind}"] = out.get("error")
    return row


def table(rows: list[dict]) -> str:
    head = (
        "| model | states | export ME / CS (s) | project run 1 / run 2 (s) | FMU ME, CVode (s) "
        "| FMU CS, RODAS4 (s) | ME / project run 2 | CS / project run 2 | deviation ME / CS |"
    )
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        p2 = r["project run 2"]
        me, cs_ = r["fmu model-exchange"], r["fmu co-simulation"]
        dev = [r[f"deviation {k}"] for k in ("model-exchange", "co-simulation")]
        lines.append(
            f"| {r['model']} | {r['states']} | {r['export model-exchange']:.2f} / "
            f"{r['export co-simulation']:.2f} | {r['project run 1']:.3f} / {p2:.3f} | "
            f"{me:.3f} | {cs_:.3f} | {me / p2:.2f}x | {cs_ / p2:.2f}x | "
            + " / ".join("failed" if d is None else f"{d:.1e}" for d in dev)
            + " |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tol", type=float, default=1e-8)
    parser.add_argument("--ladder", type=int, nargs="*", default=[10, 100, 1000])
    args = parser.parse_args()
    print(machine())
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(args.ladder):
            rows.append(measure(*case, args.tol, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
