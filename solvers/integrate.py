"""IDAS on the semi-explicit index-1 DAE, with forward parameter sensitivities.

A :class:`Simulator` is built once per model, output grid and tolerances and reused for
any parameter values (parameters are an input of the CasADi functions, never baked in).
``run(p) = (X, Z)``: consistent initialization (Newton), then IDAS called on numpy arrays
from that start, segment by segment between breakpoints; forward sensitivities
``d(X, Z)/dp_j`` integrate with the states as one augmented DAE. ``sim`` composes the same
as one CasADi function of ``p`` (for mapping over parameter sets).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import Any, NamedTuple

import casadi as cs
import numpy as np

from acausal import InitializationError, Model, SimulationError

from .buffers import numeric_call, symbolic_call
from .capture import native_stderr
from .diagnose import singular_block
from .dynamic_states import DynamicRun
from .events import EventLoop
from .functions import NEWTON_OPTIONS, DAEFunctions, idas_options
from .initialize import (
    Initializer,
    build_initializer,
    converged,
    damped_start,
    ensure_determined,
)
from .result import Result

CHECKED_START = 300  # up to this many unknowns, a start found by Newton is checked regular
MAX_STEPS = 100_000  # IDAS steps within one output interval before a run fails (simulate's default)
SHOWN = 12  # equations listed in a failure's message (all are in SimulationError.equations)
# IDAS's own report (SUNDIALS prints "At t = ..."): the one place a time is read from text
_AT_TIME = re.compile(r"t = ([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)")


class Segment(NamedTuple):
    """IDAS from one breakpoint to the next: on ``[a, output times in (a, end], end]``."""

    integrator: cs.Function
    inside: int  # how many output times lie in (a, end]
    end: float


class Segments(NamedTuple):
    """The segments of a run, and Newton for ``z`` after a breakpoint (None: no need)."""

    parts: list[Segment]
    reinit: cs.Function | None


def _join(parts: list[np.ndarray]) -> np.ndarray:
    """Solution blocks ``(n, m_k)`` side by side; IDAS's buffers hold them time by time
    (each a transposed C array), so they are joined as they lie, and one is used as is."""
    return parts[0] if len(parts) == 1 else np.concatenate([a.T for a in parts]).T


class Simulator:
    """Simulation of ``model`` on ``grid`` (``grid[0]`` is the start time); ``functions``:
    the model's :class:`DAEFunctions` from another simulator of it, to share."""

    def __init__(
        self,
        model: Model,
        grid: np.ndarray,
        rtol: float,
        atol: float,
        max_steps: int = MAX_STEPS,
        breakpoints: tuple[float, ...] = (),
        functions: DAEFunctions | None = None,
    ) -> None:
        self.model = model
        self.grid = np.asarray(grid, dtype=float)
        dae = model.dae
        self.nx, self.nz = dae.x.numel(), dae.z.numel()
        self.tolerances, self.breakpoints = (rtol, atol, max_steps), tuple(breakpoints)
        self._sensitivity_runs: dict[tuple[int, ...], tuple[Segments, dict]] = {}
        #: the model's functions, shared with other simulators of it when given
        self.functions = functions if functions is not None else DAEFunctions(model)
        #: the ranges the components declare valid (checked where a failed run stopped)
        self.ranges = model.ranges
        self.init: Initializer = build_initializer(model, float(self.grid[0]))
        self.events = None
        self.dynamic = None
        self.segments: Segments | None = None
        events = dae.modes or dae.zero.numel()  # modes, or re-initializations alone
        if model.alternatives and not events:  # a loop that may need other states
            self.dynamic = DynamicRun(
                self.functions, self.grid, self.tolerances, self.initial_values
            )
        if events:
            self.events = EventLoop(
                self.functions,
                self.initial_values,
                self.initial_sensitivities,
                (rtol, atol, max_steps),
                self.breakpoints,
            )
            return
        self.segments = self._segments(self.functions.spec(), "sim") if self.nx else None
        #: one IDAS integrator per segment between breakpoints (e.g. for their statistics)
        self.integrators = [s.integrator for s in self.segments.parts] if self.nx else []

    @cached_property
    def sim(self) -> cs.Function:
        """``p -> (X, Z)`` as one CasADi function (consistent initialization by Newton, then
        IDAS; with no states, Newton at each output time): for composing and mapping over
        parameter sets. :meth:`run` calls the integrators directly instead."""
        model = self.model
        pm = cs.MX.sym("p", model.p.numel())
        x0, z0 = self.init.fun(pm)
        if self.nx:
            z0 = cs.reshape(z0, self.nz, 1)  # an empty z0 may come as 1 x 0
            join = lambda parts: cs.horzcat(*parts)  # noqa: E731
            xs, zs = self._chain(self.segments, x0, z0, pm, symbolic_call, join)
        else:  # no states: the algebraic equations at each output time
            xs = cs.MX(0, len(self.grid))
            zs = self.algebraic_run(z0, pm) if self.nz else cs.MX(0, len(self.grid))
        return cs.Function("sim", [pm], [xs, zs], ["p"], ["X", "Z"])

    @cached_property
    def algebraic_run(self) -> cs.Function:
        """``(z0, p) -> Z``: a model without states, Newton on its algebraic equations at
        each output time from the consistent start ``z0``."""
        model, dae = self.model, self.model.dae
        g = cs.Function("g", [dae.z, model.p, model.t], [dae.alg])
        rf = cs.rootfinder("alg", "newton", g, NEWTON_OPTIONS).map(len(self.grid))
        z0, pm = cs.MX.sym("z0", self.nz), cs.MX.sym("p", model.p.numel())
        zs = rf(cs.repmat(z0, 1, len(self.grid)), pm, cs.DM(self.grid).T)
        return cs.Function("algebraic_run", [z0, pm], [zs])

    def _segments(
        self, spec: dict[str, cs.SX], name: str, xdot0: np.ndarray | None = None
    ) -> Segments:
        """IDAS on the DAE ``spec`` from breakpoint to breakpoint (a source's step, a
        switch's signal), one integrator per segment on the output times inside it, and
        Newton for the algebraic unknowns just after a breakpoint (their jump would stall
        IDAS's corrector). Output times at a breakpoint get the value just before it.
        ``xdot0``: ``x'`` at the start for the first segment (else IDAS takes 0)."""
        grid, (rtol, atol, max_steps) = self.grid, self.tolerances
        edges = [float(grid[0]), *self.breakpoints, float(grid[-1])]
        reinit = None
        if spec["z"].numel() and self.breakpoints:
            g = cs.Function("g", [spec["z"], spec["x"], spec["p"], spec["t"]], [spec["alg"]])
            reinit = cs.rootfinder(f"{name}_z_after_breakpoint", "newton", g, NEWTON_OPTIONS)
        parts = []
        for k, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
            inside = grid[(grid > a) & (grid <= b)]
            tout = np.concatenate([[a], inside, [] if inside.size and inside[-1] == b else [b]])
            opts = idas_options(tout, rtol, atol, max_steps)
            if k == 0 and xdot0 is not None:
                opts["init_xdot"] = xdot0
            integ = cs.integrator(f"{name}{k}", "idas", spec, a, tout, opts)
            parts.append(Segment(integ, inside.size, b))
        return Segments(parts, reinit)

    @staticmethod
    def _chain(
        segments: Segments, x0: Any, z0: Any, p: Any, call: Callable, join: Callable
    ) -> tuple[Any, Any]:
        """The segments one after another from ``(x0, z0)`` (columns): the states continue
        across a breakpoint, the algebraic unknowns are solved anew there; ``(X, Z)`` on
        the grid. ``call(fun, args, n_out)`` evaluates a CasADi function, numerically
        (:func:`~solvers.buffers.numeric_call`) or symbolically; ``join`` concatenates
        columns."""
        x, z, xs, zs = x0, z0, [], []
        last = len(segments.parts) - 1
        for k, part in enumerate(segments.parts):
            xf, zf = call(part.integrator, [x, z, p], 2)
            first = 0 if k == 0 else 1  # IDAS gives (x0, z0) at the start time as they are
            xs.append(xf[:, first : 1 + part.inside])
            zs.append(zf[:, first : 1 + part.inside])
            x, z = xf[:, -1:], zf[:, -1:]
            if segments.reinit is not None and k < last:
                (z,) = call(segments.reinit, [z, x, p, part.end], 1)
        return join(xs), join(zs)

    def settle(self, p: np.ndarray) -> np.ndarray:
        """Event iteration at the start: the start modes (parameters ``<mode>_start``)
        updated until nothing changes; returns the parameters with the settled modes."""
        if self.events is None:
            return p
        names = list(self.model.parameters)
        starts = [names.index(f"{q}_start") for q in self.model.modes]
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
        res = None if newton_failed else self._residuals(x0, z0, p)
        newton = res is not None and converged(res, x0, z0)
        if not newton:
            damped = damped_start(self.init, p)  # Levenberg-Marquardt, other guesses
            if damped is not None:
                x0, z0 = damped
                res = self._residuals(x0, z0, p)
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
        if newton and 0 < self.nz and self.nx + self.nz <= CHECKED_START:
            ensure_determined(self.init, x0, z0, p)  # the damped start checks its own
        self.init.redundant.check(x0, z0, p)  # fixed starts on what the model determines
        if not np.all(np.isfinite(self._start_rates(x0, z0, p, t0))):
            why = singular_block(self.functions, x0, z0, p, t0)
            why = why or "state derivatives are not finite"
            raise InitializationError(f"{self.model.name}: at the start, {why}")
        return x0, z0

    def _residuals(self, x0: np.ndarray, z0: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The initialization rows' residuals at ``(x0, z0)``, through CasADi's buffers (a
        ``DM`` call converts every parameter and value through Python: 9 ms at 70,000
        parameters, where the evaluation takes a quarter of one)."""
        return numeric_call(self.init.residual, [x0, z0, p], 1)[0].ravel()

    def _start_rates(self, x0: np.ndarray, z0: np.ndarray, p: np.ndarray, t0: float) -> np.ndarray:
        """``x' = f(x0, z0, p, t0)``: by the first integrator's own DAE function where one is
        built (IDAS's ``daeF``, ``(t, x, z, p, u) -> (ode, alg)``, of the same expressions),
        which spares making a function of the whole model for this one check."""
        if self.segments is None:
            return self.functions.rates(x0, z0, p, t0).full()
        dae = self.segments.parts[0].integrator.get_function("daeF")
        return numeric_call(dae, [t0, x0, z0, p], 1)[0]

    def run_switching(
        self, p: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """A run that switches the state choice where it gets singular
        (:mod:`solvers.dynamic_states`): ``(X, Z, None)`` if it kept the model's own states
        throughout, else ``(None, None, Y)`` with every named variable on the grid."""

        def run(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            xs, zs, values = self.dynamic.run(q)
            return (xs, zs) if values is None else (values, np.zeros(0))

        try:
            xs, zs = self._guarded(run, p)
        except SimulationError as exc:
            text, times, values = self.dynamic.explain(p)
            partial = Result(self.model, times, None, None, p, values=values)
            raise SimulationError(
                f"{exc}\n  {text}", exc.time, exc.equations, result=partial
            ) from None
        return (None, None, xs) if self.dynamic.switches else (xs, zs, None)

    def run(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """States and Newton unknowns on the grid: arrays (nx, N) and (nz, N)."""
        if self.events is not None:
            return self._guarded(lambda q: self.events.run(q, self.grid), p)
        x0, z0 = self.initial_values(p)
        if not self.nx:  # from the start found (Newton's, or the damped fallback's)
            none = np.zeros((0, len(self.grid)))
            if not self.nz:
                return none, none
            return self._guarded(
                lambda q: (none, numeric_call(self.algebraic_run, [z0, q], 1)[0]), p
            )
        return self._integrate(self.segments, self.functions.spec(), x0, z0, p)

    def _integrate(
        self,
        segments: Segments,
        spec: dict[str, cs.SX],
        x0: np.ndarray,
        z0: np.ndarray,
        p: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """IDAS called on numpy arrays from consistent ``(x0, z0)`` through the segments of
        the DAE ``spec``. The cached integrators begin with ``x'(0) = 0`` (an option fixed
        when they are built); where that defeats the first steps (a fast start at tight
        tolerances: a first step's error ``h |x'(0)|``), the run is repeated once by
        integrators given the true ``x'(0) = f(x0, z0, p, t0)``, built for this start."""
        start = (x0.reshape(-1, 1), z0.reshape(-1, 1))
        try:
            return self._guarded(lambda q: self._chain(segments, *start, q, numeric_call, _join), p)
        except SimulationError as exc:
            if exc.time != float(self.grid[0]):
                raise
        rates = cs.Function("rates", [spec["x"], spec["z"], spec["p"], spec["t"]], [spec["ode"]])
        xdot0 = numeric_call(rates, [x0, z0, p, self.grid[0]], 1)[0].ravel()
        restarted = self._segments(spec, "restart", xdot0)
        return self._guarded(lambda q: self._chain(restarted, *start, q, numeric_call, _join), p)

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
        E = self._seeds(key)
        if self.events is not None:
            xa, za = self._guarded(lambda q: self.events.run(q, self.grid, E), p)
        else:
            if key not in self._sensitivity_runs:
                spec = self.functions.sensitivity_spec(E)
                self._sensitivity_runs[key] = (self._segments(spec, "sens"), spec)
            x0, z0 = self.initial_values(p)
            dx0, dz0 = self.initial_sensitivities(p, x0, z0, E)
            start = [np.concatenate([v, dv.ravel(order="F")]) for v, dv in ((x0, dx0), (z0, dz0))]
            segments, spec = self._sensitivity_runs[key]
            xa, za = self._integrate(segments, spec, *start, p)
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
        blocks = [b for b in self.model.blocks if b.kind in ("newton", "torn")]
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
                "  At the start: a very fast start can defeat IDAS's first steps at tight "
                "tolerances; loosen rtol/atol, or start from rest."
            )
        elif "mxstep" in said:
            advice = (
                "  IDAS took its maximum number of steps within one output interval: the "
                "solution changes very fast or blows up there (check the model and its inputs "
                "near that time), or rtol/atol ask for more than its scale allows (loosen "
                "them), or the output interval is long (a smaller dt restarts the count, a "
                "larger max_steps allows more)."
            )
        else:
            advice = (
                "  Try a tighter rtol/atol, a shorter interval, or check the model near that time."
            )
        partial, outside = self._outside(p, t_fail)
        return SimulationError(
            f"simulation of {self.model.name} failed {when}: IDAS reported: {said}{detail}\n"
            + advice
            + outside,
            time=t_fail,
            equations=equations,
            result=partial,
        )

    def _outside(self, p: np.ndarray, t_fail: float | None) -> tuple[Result | None, str]:
        """For a model whose components declare valid ranges (``model.ranges``): the
        run again up to the last output time before ``t_fail`` (the partial result the
        error keeps) and the variables outside their ranges there, since when."""
        before = self.grid[self.grid < t_fail] if t_fail is not None else self.grid[:0]
        if not self.ranges or before.size < 2:
            return None, ""
        breakpoints = tuple(b for b in self.breakpoints if b < before[-1])
        sim = Simulator(
            self.model, before, *self.tolerances, breakpoints=breakpoints, functions=self.functions
        )
        sim.ranges = ()  # a failure of this run is not explained again
        try:
            partial = Result(self.model, before, *sim.run(p), p, functions=self.functions)
        except SimulationError:
            return None, ""
        lines = []
        for name, low, high, what in self.ranges:
            values = np.asarray(partial[name])
            inside = np.flatnonzero((values >= low) & (values <= high))
            if not low <= values[-1] <= high:
                since = before[inside[-1] + 1] if inside.size else before[0]
                lines.append(
                    f"{name} = {values[-1]:.6g}, outside its {what} [{low:.6g}, {high:.6g}] "
                    f"since t = {since:.6g} s"
                )
        if not lines:
            return partial, ""
        return partial, (
            f"\n  Where the run stopped (t = {before[-1]:.6g} s, the last output time before "
            "the failure), outside the ranges their components hold in:\n    "
            + "\n    ".join(lines)
        )
