"""A model's time scales at its start, and the horizon and output step they suggest.

At consistent initial values ``(x0, z0)`` the semi-explicit DAE ``x' = f(x, z, p, t)``,
``0 = g(x, z, p, t)`` (index 1: ``g_z`` regular) has the linearization
``dx' = A dx`` with ``A = f_x - f_z g_z^{-1} g_x`` over the continuous states (the
discrete modes, zero-rate states, are left out). Each eigenvalue ``lambda`` of ``A`` gives
a time constant ``1 / |Re lambda|`` (decay, or growth for ``Re lambda > 0``) and, when
complex, a period ``2 pi / |Im lambda|``; eigenvalues below ``1e-10`` of the largest
(integrators, rigid-body modes) give none. Each ``sin``/``cos`` of the model whose argument
depends on time alone gives a source period ``2 pi / |d arg / dt|`` (at the start time), and
the model's breakpoints (steps) the times where something starts.

The horizon covers the slowest behaviour: five of the longest time constant, three of the
longest period, after the last breakpoint; the step resolves the fastest: a twentieth of the
shortest time constant or period, with the number of output points kept between
``MIN_POINTS`` and ``MAX_POINTS`` (IDAS resolves the fast scales by its own steps whatever
the output grid; the grid only samples them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import casadi as cs
import numpy as np

from acausal import Model

from .initialize import build_initializer

TIME_CONSTANTS, PERIODS, PER_SCALE = 5.0, 3.0, 20
MIN_POINTS, MAX_POINTS = 201, 5001
DEFAULT_HORIZON = 10.0  # a model without any time scale (static, or pure integrators)
NEGLIGIBLE = 1e-10  # eigenvalues below this fraction of the largest give no time scale


@dataclass(frozen=True)
class TimeScales:
    """What sets a model's pace at ``t0``: the eigenvalues of its linearization, the time
    constants and periods they give, the periods of its sources and its breakpoints."""

    t0: float
    eigenvalues: tuple[complex, ...]
    time_constants: tuple[float, ...]  # 1/|Re lambda|, sorted
    periods: tuple[float, ...]  # 2 pi/|Im lambda| of the linearization, sorted
    source_periods: tuple[float, ...]  # 2 pi/|omega| of sin/cos(omega t + ...), sorted
    breakpoints: tuple[float, ...]  # after t0, within a span of the slowest scale

    @property
    def growing(self) -> tuple[complex, ...]:
        """Eigenvalues with a positive real part: the start is an unstable equilibrium or
        the solution grows like ``exp(Re lambda t)``."""
        large = max((abs(v) for v in self.eigenvalues), default=0.0)
        return tuple(v for v in self.eigenvalues if v.real > NEGLIGIBLE * large)

    @property
    def scales(self) -> tuple[float, ...]:
        return tuple(sorted(self.time_constants + self.periods + self.source_periods))

    def horizon(self, t_end: float | None = None) -> tuple[float, float]:
        """``(t_end, dt)`` from the scales (see the module docstring); a given ``t_end``
        is kept and only the step chosen."""
        if t_end is None:
            slow = [TIME_CONSTANTS * tc for tc in self.time_constants]
            slow += [PERIODS * T for T in self.periods + self.source_periods]
            settle = max(slow, default=0.0)
            last = max(self.breakpoints, default=self.t0) - self.t0
            span = last + settle if settle else (2.0 * last if last else DEFAULT_HORIZON)
        else:
            span = t_end - self.t0
        fast = min(self.scales, default=span * PER_SCALE / (MIN_POINTS - 1)) / PER_SCALE
        n = min(max(math.ceil(span / fast), MIN_POINTS - 1), MAX_POINTS - 1)
        return self.t0 + span, span / n

    def text(self) -> str:
        """One line for a report: the scales that set the horizon and the step."""
        parts = []
        for label, values in (
            ("time constants", self.time_constants),
            ("periods", self.periods),
            ("source periods", self.source_periods),
            ("breakpoints", self.breakpoints),
        ):
            if values:
                shown = ", ".join(f"{v:.3g}" for v in values[:3])
                more = f" (+{len(values) - 3} more)" if len(values) > 3 else ""
                parts.append(f"{label} {shown}{more}")
        if self.growing:
            shown = ", ".join(f"{v:.3g}" for v in self.growing[:2])
            parts.append(f"growing at the start (eigenvalues {shown})")
        return "; ".join(parts) if parts else "no time scale found"


def time_scales(
    model: Model, params: Mapping[str, float] | None = None, t0: float = 0.0
) -> TimeScales:
    """The time scales of ``model`` at its consistent initial values at ``t0``."""
    p = np.asarray(model.parameter_vector(params), dtype=float)
    x0, z0 = (np.asarray(v, dtype=float).ravel() for v in build_initializer(model, t0).fun(p))
    eig = eigenvalues(model, x0, z0, p, t0)
    large = max((abs(v) for v in eig), default=0.0)
    kept = [v for v in eig if abs(v) > NEGLIGIBLE * large and np.isfinite(v)]
    constants = sorted({1.0 / abs(v.real) for v in kept if abs(v.real) > NEGLIGIBLE * large})
    periods = sorted({2 * math.pi / abs(v.imag) for v in kept if abs(v.imag) > NEGLIGIBLE * large})
    sources = _source_periods(model, x0, z0, p, t0)
    span = max([*constants, *periods, *sources], default=DEFAULT_HORIZON)
    breaks = model.breakpoint_times(p, t0, t0 + 1e6 * span)
    return TimeScales(
        t0, tuple(eig), tuple(constants), tuple(periods), tuple(sources), tuple(breaks)
    )


def eigenvalues(
    model: Model, x0: np.ndarray, z0: np.ndarray, p: np.ndarray, t0: float
) -> list[complex]:
    """Eigenvalues of ``A = f_x - f_z g_z^{-1} g_x`` over the continuous states."""
    dae = model.dae
    n = dae.x.numel() - dae.modes
    if n == 0:
        return []
    x, z = cs.SX(dae.x)[:n], cs.SX(dae.z)
    jac = cs.Function(
        "linearization",
        [dae.x, dae.z, model.p, model.t],
        [cs.jacobian(dae.ode[:n], x), cs.jacobian(dae.ode[:n], z)]
        + [cs.jacobian(dae.alg, x), cs.jacobian(dae.alg, z)],
    )
    fx, fz, gx, gz = (np.asarray(m, dtype=float) for m in jac(x0, z0, p, t0))
    A = fx if z.numel() == 0 else fx - fz @ np.linalg.solve(gz, gx)
    return [complex(v) for v in np.linalg.eigvals(A)] if np.all(np.isfinite(A)) else []


def _source_periods(
    model: Model, x0: np.ndarray, z0: np.ndarray, p: np.ndarray, t0: float
) -> list[float]:
    """``2 pi / |d arg/dt|`` of each ``sin``/``cos`` in the model whose argument depends
    on time and on no unknown (a source), at ``t0``."""
    dae = model.dae
    unknowns = cs.vertcat(dae.x, dae.z)
    args, seen, stack = [], set(), [cs.vertcat(dae.ode, dae.alg, dae.values)]
    while stack:  # the expression graph, each node once
        e = stack.pop()
        for k in range(e.numel()) if not e.is_scalar() else ():
            stack.append(e[k])
        if not e.is_scalar() or e.is_leaf():
            continue
        key = e.element_hash()
        if key in seen:
            continue
        seen.add(key)
        if (e.is_op(cs.OP_SIN) or e.is_op(cs.OP_COS)) and cs.depends_on(e.dep(0), model.t):
            if not cs.depends_on(e.dep(0), unknowns):
                args.append(e.dep(0))
        stack.extend(e.dep(k) for k in range(e.n_dep()))
    if not args:
        return []
    rates = cs.Function("omega", [model.p, model.t], [cs.jacobian(cs.vertcat(*args), model.t)])
    omega = np.abs(np.asarray(rates(p, t0), dtype=float).ravel())
    return sorted({2 * math.pi / float(w) for w in omega if w > 0 and np.isfinite(w)})
