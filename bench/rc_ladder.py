"""RC ladder benchmark: model build, compile and simulation time against a hand-written floor.

The ladder: a ``StepVoltage`` source (1 V) feeding N stages, each a series resistor ``R_k``
then a shunt capacitor ``C_k`` to ground. Per stage ``R = C = 1/N`` (total resistance 1 ohm,
total capacitance 1 F), so the ladder is a discretized diffusion line whose slowest time
constant is about 0.4 s whatever N, and the last capacitor charges visibly over ``t_end = 1``.

Per N, each in a fresh subprocess (so that peak-memory numbers are per N):

* build:    constructing the ``ac.System`` (components and ``connect`` calls) in Python
* compile:  ``ac.compile(system)``, with ``model.timings`` (its stages)
* sim 1:    first ``simulate(model, ...)``: builds initializer + IDAS integrator, then runs
* sim 2:    second call with ``params={"R1.R": 1.1 * R}``: should reuse the integrator
* output:   first ``result["C<N>.v"]`` (evaluates every named variable on the grid)
* floor:    the same ladder hand-written as the minimal ODE in CasADi SX,
            ``C dv_k/dt = (v_{k-1} - v_k)/R_k - (v_k - v_{k+1})/R_{k+1}`` (v_0 = source,
            no current past the last stage), integrated by ``cs.integrator(..., "idas")``
            on the same grid with the same tolerances: build and run timed separately.

Both runs are compared on the last capacitor voltage over the grid (max abs difference),
and the simulation also against an independent reference: the floor's ODE integrated
by CVODES at rtol 1e-10, atol 1e-12. The time of the bare CasADi call inside ``simulate``
(``IDAS call in sim``) separates the integrator's cost from the Python around it.

    python bench/rc_ladder.py                       # N = 10 100 1000 3000 10000
    python bench/rc_ladder.py --n 10 100 --repeats 3 --json out.json --markdown out.md
    python bench/rc_ladder.py --profile 1000        # cProfile of ac.compile, top 25 by cumtime
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

DEFAULT_N = [10, 100, 1000, 3000, 10000]
REF_RTOL, REF_ATOL = 1e-10, 1e-12  # the accuracy reference (CVODES)


# -- the two models -------------------------------------------------------------------------
def build_system(n: int, start_time: float):
    """The RC ladder as an ``ac.System``."""
    import acausal as ac
    from components import electrical as el

    r, c = 1.0 / n, 1.0 / n
    s = ac.System(f"rc_ladder_{n}")
    source = el.StepVoltage("V", V=1.0, start_time=start_time)
    ground = el.Ground("G")
    s.connect(source.n, ground.p)
    prev = source.p
    for k in range(1, n + 1):
        res = el.Resistor(f"R{k}", R=r)
        cap = el.Capacitor(f"C{k}", C=c, v0=0.0)
        s.connect(prev, res.p)
        s.connect(res.n, cap.p)
        s.connect(cap.n, ground.p)
        prev = res.n
    return s


def floor_ode(n: int, start_time: float):
    """The minimal ODE in CasADi SX: ``(v, p, ode, t)`` with ``p = R_1`` (symbolic).

    Written with vector operations, as one would by hand: scalar SX operations cost ~37 us
    each from Python (CasADi 3.8.2), which would make the floor's build 9 x slower at N = 10000.
    """
    import casadi as cs

    r, c = 1.0 / n, 1.0 / n
    v = cs.SX.sym("v", n)
    r1 = cs.SX.sym("R1")
    t = cs.SX.sym("t")
    u = cs.if_else(t >= start_time, 1.0, 0.0)
    # current into stage k through R_k; nothing flows past the last capacitor
    cur = cs.vertcat((u - v[0]) / r1, (v[: n - 1, 0] - v[1:, 0]) / r, 0.0)
    ode = (cur[:n, 0] - cur[1:, 0]) / c
    return v, r1, ode, t


def build_floor(n: int, start_time: float, grid, rtol: float, atol: float):
    """The floor's IDAS integrator on ``grid``, with the options ``solvers`` gives IDAS.

    Same tolerances and step limit; as in ``solvers.integrate``, IDAS's own consistent
    initialization (``calc_ic``) is off and the first step is 1e-12 of the interval. With
    IDAS's defaults (``calc_ic`` on) the floor fails from N = 3000 with the step at t = 0:
    ``IDACalcIC returned "IDA_CONV_FAIL"`` (x'(0) = N^2 V/s on the first capacitor).
    """
    import casadi as cs

    v, r1, ode, t = floor_ode(n, start_time)
    dae = {"x": v, "p": r1, "t": t, "ode": ode}
    span = float(grid[-1] - grid[0])
    opts = {
        "abstol": atol,
        "reltol": rtol,
        "max_num_steps": 100_000,
        "calc_ic": False,
        "step0": 1e-12 * span,
    }
    return cs.integrator("floor", "idas", dae, float(grid[0]), grid, opts)


def build_reference(n: int, start_time: float, grid):
    """The floor's ODE integrated by CVODES (BDF) at rtol 1e-10, atol 1e-12: the reference.

    CVODES, not IDAS: it evaluates x'(0) itself, where IDAS with ``calc_ic`` off and these
    tolerances fails at N = 10000 (``IDASolve returned "IDA_ERR_FAIL"``).
    """
    import casadi as cs

    v, r1, ode, t = floor_ode(n, start_time)
    dae = {"x": v, "p": r1, "t": t, "ode": ode}
    opts = {"abstol": REF_ATOL, "reltol": REF_RTOL, "max_num_steps": 1_000_000}
    return cs.integrator("reference", "cvodes", dae, float(grid[0]), grid, opts)


def _instructions(args: list, expr) -> int:
    """Size of a right-hand side: instructions of the SX function ``args -> expr``."""
    import casadi as cs

    return cs.Function("rhs", args, [expr]).n_instructions()


# -- one N, in this process ----------------------------------------------------------------
def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux


def _error(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[-400:]}"


def measure(n: int, repeats: int, t_end: float, points: int, start_time: float) -> dict:
    """All timings for one N (best of ``repeats``) and the accuracy check (last repeat).

    A phase that raises is recorded in ``errors`` with its message; later phases that
    need its result are skipped.
    """
    import casadi as cs
    import numpy as np

    import acausal as ac
    from solvers import Simulations, simulate, simulator

    rtol, atol = 1e-6, 1e-8
    grid = np.linspace(0.0, t_end, points)
    dt = t_end / (points - 1)
    r = 1.0 / n
    out: dict = {"n": n, "repeats": repeats, "mem_mb": {"imports": _peak_mb()}, "errors": {}}
    best: dict[str, float] = {}
    stages: dict[str, float] = {}

    def keep(key: str, value: float) -> None:
        best[key] = min(best.get(key, float("inf")), value)

    def timed(key: str, fun, *args, **kwargs):
        tic = time.perf_counter()
        value = fun(*args, **kwargs)
        keep(key, time.perf_counter() - tic)
        return value

    ref = None  # the floor at tight tolerances: an independent accuracy reference
    for _ in range(repeats):
        # floor first, so the peak-memory reading after it is the floor's alone
        f1 = f2 = None
        try:
            floor = timed("floor_build", build_floor, n, start_time, grid, rtol, atol)
            x0 = cs.DM.zeros(n)
            f1 = np.asarray(timed("floor_run", floor, x0=x0, p=r)["xf"])
            f2 = np.asarray(timed("floor_run2", floor, x0=x0, p=1.1 * r)["xf"])
            stats = floor.stats()
            out["floor_steps"] = int(stats.get("nsteps", -1)) if stats else -1
            v, r1, ode, t = floor_ode(n, start_time)
            out["floor_ode_instructions"] = _instructions([v, r1, t], ode)
            del floor
            if ref is None:
                tight = build_reference(n, start_time, grid)
                ref = np.asarray(tight(x0=x0, p=r)["xf"])[-1]
                out["floor_error_vs_ref"] = float(np.max(np.abs(f1[-1] - ref)))
                del tight
        except Exception as exc:  # a benchmark reports, it does not stop
            out["errors"]["floor"] = _error(exc)
        out["mem_mb"].setdefault("floor", _peak_mb())

        system = timed("build", build_system, n, start_time)
        out["mem_mb"].setdefault("build", _peak_mb())
        try:
            tic = time.perf_counter()
            model = ac.compile(system)
            compile_time = time.perf_counter() - tic
        except Exception as exc:
            out["errors"]["compile"] = _error(exc)
            continue
        if compile_time <= best.get("compile", float("inf")):
            stages = dict(model.timings)
        keep("compile", compile_time)
        out["mem_mb"].setdefault("compile", _peak_mb())
        out["model"] = {
            "states": int(model.dae.x.numel()),
            "newton_unknowns": int(model.dae.z.numel()),
            "blocks": len(model.blocks),
            "variables": len(model.flat.variables),
            "aliases": len(model.reduced.eliminated),
            "ode_instructions": _instructions(
                [model.dae.x, model.dae.z, model.p, model.t], model.dae.ode
            ),
        }

        sims = Simulations()  # kept between sim 1 and sim 2, as a caller re-running does
        sim_args = {"t_end": t_end, "dt": dt, "rtol": rtol, "atol": atol, "simulators": sims}
        try:
            res1 = timed("sim1", simulate, model, **sim_args)
            y1 = timed("output", res1.__getitem__, f"C{n}.v")
            pvec = np.asarray(model.parameter_vector(), dtype=float)
            first = simulator(model, res1.t, rtol, atol, pvec, sims)  # the one simulate used
            timed("sim_core_run", first.sim, pvec)  # the bare CasADi call inside simulate
            p2 = {"R1.R": 1.1 * r}
            res2 = timed("sim2", simulate, model, **sim_args, params=p2)
            y2 = res2[f"C{n}.v"]
            again = simulator(model, res2.t, rtol, atol, np.asarray(res2.p), sims)
        except Exception as exc:
            out["errors"]["simulate"] = _error(exc)
            continue
        out["mem_mb"].setdefault("simulate", _peak_mb())
        out["rebuilt_on_second_call"] = again is not first
        out["grid_equal"] = bool(np.array_equal(res1.t, grid))
        out["last_cap_end"] = float(y1[-1])
        if f1 is not None:
            out["diff_last_cap"] = float(np.max(np.abs(y1 - f1[-1])))
            out["diff_last_cap_p2"] = float(np.max(np.abs(y2 - f2[-1])))
        if ref is not None:
            out["sim_error_vs_ref"] = float(np.max(np.abs(y1 - ref)))
        del system, model, res1, res2
    out["times"] = best
    out["compile_stages"] = stages
    out["mem_mb"]["peak"] = _peak_mb()
    return out


# -- the driver: one subprocess per N ------------------------------------------------------
def run_worker(n: int, args: argparse.Namespace) -> dict:
    """Measure ``n`` in a fresh interpreter; a failure is returned with its error text."""
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        str(n),
        "--repeats",
        str(repeats_for(n, args.repeats)),
        "--t-end",
        str(args.t_end),
        "--points",
        str(args.points),
        "--start-time",
        str(args.start_time),
    ]
    tic = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"n": n, "error": f"timed out after {args.timeout:.0f} s"}
    wall = time.perf_counter() - tic
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-3:]
        return {"n": n, "error": f"exit code {proc.returncode}: " + " | ".join(tail)}
    result = json.loads(lines[-1])
    result["wall_s"] = wall
    return result


def repeats_for(n: int, repeats: int | None) -> int:
    if repeats is not None:
        return repeats
    return 3 if n <= 1000 else 2


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}"


def table(results: list[dict]) -> str:
    """Markdown table of times (s), ratios, accuracy and peak memory; failures listed below."""
    head = (
        "| N | build | compile | sim 1 | sim 2 | output | floor build | floor run "
        "| sim 2 / floor run | IDAS call in sim / floor run | sim 1 / floor (build+run) "
        "| max diff sim vs floor | sim error vs reference | peak MB |"
    )
    rows = [head, "|" + "---:|" * 14]
    notes = []
    for r in results:
        if "error" in r:
            rows.append(f"| {r['n']} | failed (see below) |" + " |" * 12)
            notes.append(f"- N={r['n']}: {r['error']}")
            continue
        notes += [f"- N={r['n']}, {phase}: {text}" for phase, text in r["errors"].items()]
        t = r["times"]
        g = t.get
        floor_all = g("floor_build", 0) + g("floor_run", 0) if "floor_run" in t else None
        diffs = [r[k] for k in ("diff_last_cap", "diff_last_cap_p2") if k in r]
        diff = f"{max(diffs):.1e}" if diffs else "-"
        err = f"{r['sim_error_vs_ref']:.1e}" if "sim_error_vs_ref" in r else "-"
        rows.append(
            f"| {r['n']} | {fmt(g('build'))} | {fmt(g('compile'))} | {fmt(g('sim1'))} "
            f"| {fmt(g('sim2'))} | {fmt(g('output'))} | {fmt(g('floor_build'))} "
            f"| {fmt(g('floor_run'))} | {_ratio(g('sim2'), g('floor_run'))} "
            f"| {_ratio(g('sim_core_run'), g('floor_run'))} | {_ratio(g('sim1'), floor_all)} "
            f"| {diff} | {err} | {r['mem_mb']['peak']:.0f} |"
        )
    if notes:
        rows += ["", "Failures:", ""] + notes
    return "\n".join(rows)


def stage_table(results: list[dict]) -> str:
    """Markdown table of ``model.timings`` per N, and the structure of the compiled model."""
    ok = [r for r in results if "error" not in r and r["compile_stages"]]
    if not ok:
        return ""
    names = list(ok[0]["compile_stages"])
    head = "| N | " + " | ".join(names) + " | states | Newton unknowns | BLT blocks |"
    rows = [head, "|" + "---:|" * (len(names) + 4)]
    for r in ok:
        st = r["compile_stages"]
        m = r.get("model", {})
        rows.append(
            f"| {r['n']} | "
            + " | ".join(fmt(st.get(k)) for k in names)
            + f" | {m.get('states')} | {m.get('newton_unknowns')} | {m.get('blocks')} |"
        )
    return "\n".join(rows)


def profile_compile(n: int, start_time: float, top: int = 25) -> None:
    """cProfile of ``ac.compile`` on the N-stage ladder, sorted by cumulative time."""
    import cProfile
    import pstats

    import acausal as ac

    system = build_system(n, start_time)
    prof = cProfile.Profile()
    prof.enable()
    ac.compile(system)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=DEFAULT_N, help="ladder sizes")
    parser.add_argument(
        "--repeats", type=int, default=None, help="repeats per N, best taken (3 if N<=1000 else 2)"
    )
    parser.add_argument("--t-end", type=float, default=1.0, help="simulated time (s)")
    parser.add_argument("--points", type=int, default=101, help="output grid points")
    parser.add_argument("--start-time", type=float, default=0.0, help="step time of the source")
    parser.add_argument("--timeout", type=float, default=7200.0, help="per-N limit (s)")
    parser.add_argument("--json", help="write all results to this JSON file")
    parser.add_argument("--markdown", help="write the tables to this markdown file")
    parser.add_argument("--profile", type=int, metavar="N", help="profile ac.compile at N")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker is not None:
        n = args.worker
        result = measure(n, repeats_for(n, args.repeats), args.t_end, args.points, args.start_time)
        print(json.dumps(result))
        return
    if args.profile is not None:
        profile_compile(args.profile, args.start_time)
        return

    info = machine()
    print(f"machine: {info}")
    results = []
    for n in args.n:
        r = run_worker(n, args)
        results.append(r)
        if "error" in r:
            print(f"N={n}: FAILED: {r['error']}", flush=True)
        else:
            times = ", ".join(f"{k} {v:.3g} s" for k, v in r["times"].items())
            print(f"N={n}: {times}; max diff {r.get('diff_last_cap')}", flush=True)
            for phase, text in r["errors"].items():
                print(f"N={n}: {phase} FAILED: {text}", flush=True)
    text = table(results) + "\n\nCompile stages (s, `model.timings`):\n\n" + stage_table(results)
    print()
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "args": vars(args), "results": results}, fh, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
