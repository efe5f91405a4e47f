"""The 2-D thermal plate of issue 35 (``examples/references/thermal_plate.py``): the user's
path against the same ODE written by hand in CasADi, at sizes n x n.

The plate: n x n heat capacitors (C = 1), each joined to its four neighbours by
conductors (G = 1), the top edge held at 373.15 K and the three others at 293.15 K through
a border of conductors, from 293.15 K everywhere; built with ``Component.array`` (the path
issue 35's compiler will keep as arrays). Simulated for 25 slowest time constants (``tau =
C / (G lambda_min)``, 4,600 s at 300 x 300), outputs every tau, rtol 1e-6, atol 1e-8; the
end state against the closed-form steady state (double sine series) of the reference.

Per size, two fresh subprocesses (so that each peak memory, ``ru_maxrss``, is its own):

* project: build the ``ac.System``; ``ac.compile``; the first ``simulate``; reading one
  temperature (the centre cell's); then every cell's end temperature (untimed in the total)
  for the error against the closed form.
* floor: ``C dT/dt = G (b - (L_n (x) I + I (x) L_n) T)`` as one sparse matrix (CasADi DM)
  times the state vector in SX, ``cs.integrator(..., "idas")`` on the same grid with the
  options ``solvers`` gives IDAS (:func:`solvers.functions.idas_options`): build, run.

A child that runs past ``--timeout`` or fails (as past ``--max-gb`` of address space) is
reported as such in the table.

    PYTHONPATH=. python bench/plate.py                         # 10 x 10, 30 x 30, 100 x 100
    PYTHONPATH=. python bench/plate.py --sizes 300 --timeout 900
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

from machine import fmt, machine

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SIZES = [10, 30, 100]
SETTLED, RTOL, ATOL = 25, 1e-6, 1e-8


def _grid(n: int):
    import numpy as np

    sys.path.insert(0, ROOT)
    from examples.references.thermal_plate import slowest_time_constant

    return slowest_time_constant(n) * np.arange(SETTLED + 1.0)


def _gb() -> float:
    """This process's peak resident memory in GB (``ru_maxrss`` is in KB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2


def project(n: int) -> dict:
    """Build, compile, first simulate and one read, timed; the end state's error."""
    import numpy as np

    import acausal as ac
    from examples.references.thermal_plate import cell_names, plate, steady_state
    from solvers import simulate

    grid, out = _grid(n), {}
    tic = time.perf_counter()
    system = plate(n)
    out["build"] = time.perf_counter() - tic
    tic = time.perf_counter()
    model = ac.compile(system)
    out["compile"] = time.perf_counter() - tic
    tic = time.perf_counter()
    res = simulate(model, grid=grid, rtol=RTOL, atol=ATOL)
    out["simulate"] = time.perf_counter() - tic
    tic = time.perf_counter()
    res[f"C{(n // 2) * n + n // 2 + 1}.T"]
    out["read"] = time.perf_counter() - tic
    end = np.array([res[name][-1] for name in cell_names(n)]).reshape(n, n)
    out["max_error"] = float(np.max(np.abs(end - steady_state(n))))
    out["states"] = int(model.dae.x.numel())
    out["gb"] = _gb()
    return out


def floor(n: int) -> dict:
    """The ODE by hand: one sparse matrix-vector product, IDAS; build and run, timed."""
    import casadi as cs
    import numpy as np
    import scipy.sparse as sp

    from examples.references.thermal_plate import T_COLD, T_HOT, steady_state
    from solvers.functions import idas_options

    grid, out = _grid(n), {}
    tic = time.perf_counter()
    diff = sp.diags([-np.ones(n - 1), 2.0 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])
    lap = sp.csc_matrix(sp.kron(diff, sp.eye(n)) + sp.kron(sp.eye(n), diff))
    border = np.full((n, n), 0.0)
    border[0, :] += T_HOT
    border[-1, :] += T_COLD
    border[:, 0] += T_COLD
    border[:, -1] += T_COLD
    sparsity = cs.Sparsity(n * n, n * n, lap.indptr.tolist(), lap.indices.tolist())
    x = cs.SX.sym("T", n * n)
    ode = cs.DM(border.ravel()) - cs.mtimes(cs.DM(sparsity, lap.data.tolist()), x)
    opts = idas_options(grid, RTOL, ATOL, 100_000)
    integ = cs.integrator("floor", "idas", {"x": x, "ode": ode}, grid[0], grid, opts)
    out["build"] = time.perf_counter() - tic
    tic = time.perf_counter()
    xf = np.asarray(integ(x0=np.full(n * n, T_COLD))["xf"])
    out["run"] = time.perf_counter() - tic
    out["max_error"] = float(np.max(np.abs(xf[:, -1].reshape(n, n) - steady_state(n))))
    out["gb"] = _gb()
    return out


def child(kind: str, n: int, timeout: float, max_gb: float) -> dict:
    """``project`` or ``floor`` of size ``n`` in a fresh interpreter limited to ``max_gb``
    of address space; ``{"failed": why}`` if it did not finish in ``timeout`` seconds or
    failed (a ``MemoryError`` past the limit)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "bench")]))
    args = ["--child", kind, str(n), "--max-gb", str(max_gb)]
    try:
        done = subprocess.run(
            [sys.executable, __file__, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"did not finish in {timeout:.0f} s"}
    if done.returncode == 0:  # the child's last line is its figures
        return json.loads(done.stdout.splitlines()[-1])
    why = done.stderr.strip().splitlines()[-1:] or ["no message"]
    return {"failed": f"exit code {done.returncode}: {why[0]}"}


def row(n: int, p: dict, f: dict) -> str:
    """One markdown row: the project's stages, the floor's, the ratios and the errors."""
    cells = [f"{n} x {n}", f"{n * n:,}"]
    if "failed" in p:
        cells += [f"project: {p['failed']}"] + [""] * 5
    else:
        first = p["build"] + p["compile"] + p["simulate"] + p["read"]
        cells += [fmt(p[k]) for k in ("build", "compile", "simulate", "read")]
        cells += [fmt(first), f"{p['gb']:.2f}"]
    if "failed" in f:
        cells += [f"floor: {f['failed']}", "", ""]
    else:
        cells += [fmt(f["build"]), fmt(f["run"]), f"{f['gb']:.2f}"]
    if "failed" in p or "failed" in f:
        cells += ["", ""]
    else:
        cells += [f"{first / (f['build'] + f['run']):.1f}x", f"{p['gb'] / f['gb']:.1f}x"]
    errors = [f"{side['max_error']:.1e}" if "max_error" in side else "-" for side in (p, f)]
    return "| " + " | ".join(cells + [" / ".join(errors)]) + " |"


HEAD = (
    "| n x n | cells | build | compile | simulate | read | first total | peak GB "
    "| floor build | floor run | floor GB | first / floor | memory ratio "
    "| max error vs closed form (K): project / floor |\n|---|" + "---:|" * 13
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, help="n of n x n")
    parser.add_argument("--timeout", type=float, default=600.0, help="per child (s)")
    parser.add_argument("--max-gb", type=float, default=12.0, help="address space per child")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        limit = int(args.max_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        run = project if args.child[0] == "project" else floor
        print(json.dumps(run(int(args.child[1]))))
        return
    print(f"machine: {machine()}", flush=True)
    print(HEAD, flush=True)
    for n in args.sizes:
        f = child("floor", n, args.timeout, args.max_gb)
        p = child("project", n, args.timeout, args.max_gb)
        print(row(n, p, f), flush=True)


if __name__ == "__main__":
    main()
