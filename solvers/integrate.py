"""IDAS on the semi-explicit index-1 DAE, with forward parameter sensitivities.

A :class:`Simulator` is built once per model, output grid and tolerances and reused for
any parameter values (parameters are an input of the CasADi functions, never baked in).
``sim(p) = (X, Z)`` composes consistent initialization (Newton) and IDAS; forward
sensitivities ``d(X, Z)/dp_j`` integrate with the states as one augmented DAE.
"""

from __future__ import annotations

import re
from typing import Any

import casadi as cs
import numpy as np

from acausal import InitializationError, Model, SimulationError

from .capture import native_stderr
from .diagnose import singular_block
from .dynamic_states import DynamicRun
from .events import EventLoop
from .functions import NEWTON_OPTIONS, DAEFunctions, idas_options
from .initialize import Initializer, build_initializer, converged, damped_start
from .result import Result

SHOWN = 12  # equations listed in a failure's message (all are in SimulationError.equations)
# IDAS's own report (SUNDIALS prints "At t = ..."): the one place a time is read from text
_AT_TIME = re.compile(r"t = ([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")


class Simulator:
    """Simulation of ``model`` on ``grid`` (``grid[0]`` is the start time)."""

    def __init__(
        self,
        model: Model,
        grid: np.ndarray,
        rtol: float,
        atol: float,
        max_steps: int = 100_000,
        breakpoints: tuple[float, ...] = (),
    ) -> None:
        self.model = model
        self.grid = np.asarray(grid, dtype=float)
        dae, p = model.dae, model.p
        self.nx, self.nz = dae.x.numel(), dae.z.numel()
        self.tolerances, self.breakpoints = (rtol, atol, max_steps), tuple(breakpoints)
        self._sensitivity_runs: dict[tuple[int, ...], cs.Function] = {}
        self.functions = DAEFunctions(model)
        self.init: Initializer = build_initializer(model, float(self.grid[0]))
        self.events = None
        self.dynamic = None
        if model.ir.alternatives and not dae.modes:  # a loop that may need other states
            self.dynamic = DynamicRun(
                self.functions, self.grid, self.tolerances, self.initial_values
            )
        if dae.modes:
            self.events = EventLoop(
                self.functions,
                self.initial_values,
                self.initial_sensitivities,
                (rtol, atol, max_steps),
                self.breakpoints,
            )
            return
        pm = cs.MX.sym("p", p.numel())
        x0, z0 = self.init.fun(pm)
        if self.nx:
            xs, zs = self._segments(self.functions.spec(), x0, z0, pm)
        else:  # no states: the algebraic equations at each output time
            xs = cs.MX(0, len(self.grid))
            if self.nz:
                g = cs.Function("g", [dae.z, p, model.t], [dae.alg])
                rf = cs.rootfinder("alg", "newton", g, NEWTON_OPTIONS).map(len(self.grid))
                zs = rf(cs.repmat(z0, 1, len(self.grid)), pm, cs.DM(self.grid).T)
            else:
                zs = cs.MX(0, len(self.grid))
        self.sim = cs.Function("sim", [pm], [xs, zs], ["p"], ["X", "Z"])

    def _segments(
        self,
        spec: dict[str, cs.SX],
        x0: cs.MX,
        z0: cs.MX,
        pm: cs.MX,
        name: str = "sim",
    ) -> tuple[cs.MX, cs.MX]:
        """IDAS on the DAE ``spec`` from breakpoint to breakpoint (a source's step, a
        switch's signal): the states continue across one, the algebraic unknowns are
        solved anew just after it (their jump would stall IDAS's corrector). Output times
        at a breakpoint get the value just before it."""
        grid, (rtol, atol, max_steps) = self.grid, self.tolerances
        edges = [float(grid[0]), *self.breakpoints, float(grid[-1])]
        nz = spec["z"].numel()
        reinit = None
        if nz and self.breakpoints:
            g = cs.Function("g", [spec["z"], spec["x"], spec["p"], spec["t"]], [spec["alg"]])
            reinit = cs.rootfinder(f"{name}_z_after_breakpoint", "newton", g, NEWTON_OPTIONS)
        z0 = cs.reshape(z0, nz, 1)  # an empty z0 may come as 1 x 0
        x, z, xs, zs = x0, z0, [x0], [z0]
        integrators = []  # one per segment (e.g. for their statistics)
        for k, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
            inside = grid[(grid > a) & (grid <= b)]
            tout = np.concatenate([[a], inside, [] if inside.size and inside[-1] == b else [b]])
            opts = idas_options(tout, rtol, atol, max_steps)
            integ = cs.integrator(f"{name}{k}", "idas", spec, a, tout, opts)
            integrators.append(integ)
            out = integ(x0=x, z0=z, p=pm)
            xs.append(out["xf"][:, 1 : 1 + inside.size])
            zs.append(out["zf"][:, 1 : 1 + inside.size])
            x, z = out["xf"][:, -1], out["zf"][:, -1]
            if reinit is not None and k < len(edges) - 2:
                z = reinit(z, x, pm, b)
        if name == "sim":
            self.integrators = integrators
        return cs.horzcat(*xs), cs.horzcat(*zs)

    def settle(self, p: np.ndarray) -> np.ndarray:
        """Event iteration at the start: the start modes (parameters ``<mode>_start``)
        updated until nothing changes; returns the parameters with the settled modes."""
        if self.events is None:
            return p
        names = list(self.model.parameters)
        starts = [names.index(f"{q}_start") for q in self.model.flat.discretes]
        return self.events.settle(p, starts, float(self.grid[0]))

    def initial_values(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Consistent ``(x0, z0)``; an :class:`InitializationError` names what failed."""
        log: list[str] = []
        with native_stderr(log):
            try:
                x0, z0 = (v.full().ravel() for v in self.init.fun(p))
            except RuntimeError as exc:
                newton_failed: str | None = str(exc)
            else:
                newton_failed = None
        res = None if newton_failed else self.init.residual(x0, z0, p).full().ravel()
        if res is None or not converged(res, x0, z0):
            damped = damped_start(self.init, p)  # Levenberg-Marquardt, other guesses
            if damped is not None:
                x0, z0 = damped
                res = self.init.residual(x0, z0, p).full().ravel()
            elif newton_failed is not None:
                raise InitializationError(
                    f"{self.model.name}: initialization failed: {newton_failed}"
                )
        t0 = float(self.grid[0])
        if not converged(res, x0, z0):
            worst = np.argsort(-np.nan_to_num(np.abs(res), nan=np.inf))[:5]
            rows = tuple((self.init.row_name(k), float(res[k])) for k in worst)
            lines = [f"{row}: residual {value:.3g}" for row, value in rows]
            why = singular_block(self.functions, x0, z0, p, t0)
            raise InitializationError(
                f"{self.model.name}: no consistent initial values (Newton did not converge); "
                "largest residuals:\n    "
                + "\n    ".join(lines)
                + (f"\n  {why}" if why else "")
                + "\n  Check conflicting fixed start values, or give better start values.",
                residuals=rows,
            )
        self.init.redundant.check(x0, z0, p)  # fixed starts on what the model determines
        if not np.all(np.isfinite(self.functions.rates(x0, z0, p, t0).full())):
            why = singular_block(self.functions, x0, z0, p, t0)
            why = why or "state derivatives are not finite"
            raise InitializationError(f"{self.model.name}: at the start, {why}")
        return x0, z0

    def run_switching(self, p: np.ndarray) -> np.ndarray:
        """Every named variable on the grid (names x times), switching the state choice
        where it gets singular (:mod:`solvers.dynamic_states`)."""
        try:
            return self._guarded(lambda q: (self.dynamic.run(q), np.zeros(0)), p)[0]
        except SimulationError as exc:
            text, times, values = self.dynamic.explain(p)
            partial = Result(self.model, times, None, None, p, values=values)
            raise SimulationError(
                f"{exc}\n  {text}", exc.time, exc.equations, result=partial
            ) from None

    def run(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """States and Newton unknowns on the grid: arrays (nx, N) and (nz, N)."""
        if self.events is not None:
            return self._guarded(lambda q: self.events.run(q, self.grid), p)
        self.initial_values(p)
        return self._guarded(self.sim, p)

    def _guarded(self, fun: Any, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``fun(p) = (X, Z)`` as arrays; an IDAS failure or a non-finite solution becomes
        a :class:`SimulationError` that says when and where."""
        log: list[str] = []
        error = None
        with native_stderr(log):
            try:
                xs, zs = fun(p)
            except RuntimeError as exc:
                error = str(exc)
        if error is not None:
            raise self._failure(p, error, "".join(log))
        xs, zs = np.asarray(xs), np.asarray(zs)
        if not (np.all(np.isfinite(xs)) and np.all(np.isfinite(zs))):
            raise self._failure(p, "the solution is not finite", "")
        return xs, zs

    def sensitivities(
        self, p: np.ndarray, which: list[int]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`run` together with ``dX/dp_j`` and ``dZ/dp_j`` for parameter positions
        ``which``: ``(X, Z, dX, dZ)``, the latter (nx|nz, N, len(which)).

        The sensitivities ``S = dx/dp_j``, ``R = dz/dp_j`` integrate with the states as one
        DAE: ``S' = f_x S + f_z R + f_p e_j``, ``0 = g_x S + g_z R + g_p e_j`` (directional
        derivatives of ``ode``/``alg``, formed symbolically), from the derivative of the
        consistent initialization, through the same breakpoints. IDAS then controls their
        error too, and ``X``, ``Z`` come from the same run. (CasADi's forward derivative of
        the integrator gives the same numbers, to the tolerances, 10x slower on the Cauer
        filter: ``bench/sensitivities.py``.)"""
        if not self.nx:  # no integrator: the derivative of the algebraic solve
            xs, zs = self.run(p)
            return (xs, zs, *self._forward_sensitivities(p, which))
        key = tuple(which)
        if self.events is not None:
            E = self._seeds(key)
            xa, za = self._guarded(lambda q: self.events.run(q, self.grid, E), p)
        else:
            if key not in self._sensitivity_runs:
                self._sensitivity_runs[key] = self._sensitivity_run(key)
            self.initial_values(p)
            xa, za = self._guarded(self._sensitivity_runs[key], p)
        k, n = len(which), len(self.grid)
        dx = xa[self.nx :].reshape(k, self.nx, n).transpose(1, 2, 0)
        dz = za[self.nz :].reshape(k, self.nz, n).transpose(1, 2, 0)
        return xa[: self.nx], za[: self.nz], dx, dz

    def _seeds(self, which: tuple[int, ...]) -> np.ndarray:
        """``E``: the unit directions of the parameters at positions ``which``."""
        E = np.zeros((self.model.p.numel(), len(which)))
        E[list(which), range(len(which))] = 1.0
        return E

    def initial_sensitivities(
        self, p: np.ndarray, x0: np.ndarray, z0: np.ndarray, seeds: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(dx0/dp E, dz0/dp E)``: the derivative of the consistent initialization."""
        k = seeds.shape[1]
        dx0, dz0 = self.init.fun.forward(k)(p, x0, z0, seeds)
        return dx0.full().reshape(self.nx, k), dz0.full().reshape(self.nz, k)

    def _sensitivity_run(self, which: tuple[int, ...]) -> cs.Function:
        """``p -> ([X; S], [Z; R])`` on the grid, ``S``, ``R`` stacked column by column."""
        E = self._seeds(which)
        k = len(which)
        spec = self.functions.sensitivity_spec(E)
        pm = cs.MX.sym("p", self.model.p.numel())
        x0, z0 = self.init.fun(pm)
        dx0, dz0 = self.init.fun.forward(k)(pm, x0, z0, cs.DM(E))
        z0, dz0 = cs.reshape(z0, self.nz, 1), cs.reshape(dz0, self.nz, k)  # may come 1 x 0
        xs, zs = self._segments(
            spec, cs.vertcat(x0, cs.vec(dx0)), cs.vertcat(z0, cs.vec(dz0)), pm, "sens"
        )
        return cs.Function("sensitivities", [pm], [xs, zs])

    def _forward_sensitivities(
        self, p: np.ndarray, which: list[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """CasADi's forward derivative of ``sim`` in the directions ``which``."""
        xs, zs = self.sim(p)
        seeds = np.zeros((len(p), len(which)))
        seeds[which, range(len(which))] = 1.0
        dxs, dzs = self.sim.forward(len(which))(p, xs, zs, seeds)
        n = len(self.grid)
        shape = lambda a, m: a.full().reshape(m, len(which), n).transpose(0, 2, 1)  # noqa: E731
        return shape(dxs, self.nx), shape(dzs, self.nz)

    def _failure(self, p: np.ndarray, error: str, native: str) -> SimulationError:
        """A :class:`SimulationError` with the failure time and the suspicious blocks."""
        times = _AT_TIME.findall(native)
        t_fail = float(times[-1]) if times else None
        when = f"at t = {t_fail:.6g}" if t_fail is not None else "during integration"
        lines = [ln for ln in native.splitlines() if "At t =" in ln or "NaN detected" in ln]
        said = lines[-1].strip() if lines else error.strip().splitlines()[-1]
        blocks = [b for b in self.model.blocks if b.kind == "newton"]
        equations = tuple(
            self.model.ir.equations[r].origin for b in blocks[:3] for r in b.equations
        )
        detail = ""
        if equations:
            detail = (
                "\n  Equations solved by Newton during the run (check them near that time):\n    "
            )
            detail += "\n    ".join(equations[:SHOWN])
            if len(equations) > SHOWN:
                detail += f"\n    ... and {len(equations) - SHOWN} more (error.equations)"
        at_start = t_fail is not None and t_fail == float(self.grid[0])
        if at_start:
            advice = (
                "  At the start: IDAS begins with x'(0) = 0 and a very fast start can defeat "
                "its first steps at tight tolerances; loosen rtol/atol, or start from rest."
            )
        elif "mxstep" in said:
            advice = (
                "  IDAS took its maximum number of steps within one output interval: the "
                "solution changes very fast or blows up there (check the model and its inputs "
                "near that time), or rtol/atol ask for more than its scale allows (loosen "
                "them), or the output interval is long (a smaller dt restarts the count)."
            )
        else:
            advice = (
                "  Try a tighter rtol/atol, a shorter interval, or check the model near that time."
            )
        return SimulationError(
            f"simulation of {self.model.name} failed {when}: IDAS reported: {said}{detail}\n"
            + advice,
            time=t_fail,
            equations=equations,
        )
