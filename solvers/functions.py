"""The CasADi functions of one compiled model, built on first use and shared by the solvers.

For the semi-explicit DAE ``x' = f(x, z, p, t)``, ``0 = g(x, z, p, t)`` of a
:class:`~acausal.Model`: the rates ``f``, the named outputs ``y(x, z, p, t)`` (all at one
point, or read from a solution on a grid by a :class:`~solvers.readout.Readout`), the
crossing functions and mode updates of events, the residuals of the alias-reduced
equations, and the integrator spec. The object belongs to a solver (a
:class:`~solvers.Simulator`, a :class:`~solvers.Result`), never to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import casadi as cs
import numpy as np

from acausal import Model
from acausal.gc_pause import paused_gc

from .readout import Readout

T = TypeVar("T")

# Newton stops when the residual is below ``abstol`` or after a step below 1e-12
# (CasADi's ``abstolStep``), i.e. converged to rounding for values of order 1: IDAS needs
# algebraic unknowns consistent to its own tolerances (a residual of 1e-10 made the
# error test fail at rtol 1e-12 right after a breakpoint).
NEWTON_OPTIONS = {"abstol": 1e-14, "max_iter": 50, "error_on_fail": False}
# the same stopping rule for the plugin CasADi can generate C code of (no failure report);
# its derivatives (implicit function theorem) by a QR that can be generated too
FAST_NEWTON_OPTIONS = {"abstol": 1e-14, "abstolStep": 1e-12, "max_iter": 50, "linear_solver": "qr"}


def newton_solver(name: str, g: cs.Function, plugin: str = "newton") -> cs.Function:
    """CasADi's Newton rootfinder on ``g``'s first input (its other inputs are
    parameters): ``plugin`` "newton" (the simulator's), or "fast_newton" (the same
    iteration, exported as C code, e.g. into an FMU)."""
    options = NEWTON_OPTIONS if plugin == "newton" else FAST_NEWTON_OPTIONS
    return cs.rootfinder(name, plugin, g, options)


def idas_options(grid: np.ndarray, rtol: float, atol: float, max_steps: int) -> dict:
    """IDAS options for integrating over ``grid`` from consistent ``(x0, z0)``.

    IDAS's own consistent initialization (calc_ic) stays off: it failed on 3,000-stage RC
    ladders. IDAS then takes x'(0) = 0 (x'(0) is only an option, fixed when the integrator
    is built, not an input that could follow the parameters). A wrong x'(0) costs the
    first step an error of about h |x'(0)|, so the first step is tiny, 1e-12 of the
    interval; IDAS grows it by doubling in some 30 steps.
    """
    step0 = max(1e-12 * float(grid[-1] - grid[0]), 1e-15 * abs(float(grid[0])))
    return {
        "abstol": atol,
        "reltol": rtol,
        "calc_ic": False,
        "step0": step0,
        "max_num_steps": max_steps,
    }


def algebraic(model: Model) -> cs.Function:
    """``g(z, x, p, t)``: the algebraic equations, their unknowns ``z`` first (the form a
    rootfinder for ``z`` takes, :func:`newton_solver`)."""
    dae = model.dae
    return cs.Function("g", [cs.SX(dae.z), cs.SX(dae.x), model.p, model.t], [dae.alg])


class DAEFunctions:
    """Functions of ``(x, z, p, t)`` for ``model``, each built once when first asked for."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self._built: dict[str, Any] = {}

    def _get(self, key: str, build: Callable[[], T]) -> T:
        fun = self._built.get(key)
        if fun is None:
            fun = self._built[key] = build()
        return fun

    def _of_point(self, name: str, expr: cs.SX, model: Model | None = None) -> cs.Function:
        """``(x, z, p, t) -> expr`` of ``model``'s symbols (this one's by default)."""
        m = model or self.model
        return cs.Function(name, [m.dae.x, m.dae.z, m.p, m.t], [expr])

    def spec(self) -> dict[str, cs.SX]:
        """The semi-explicit DAE as CasADi's integrators take it."""
        m = self.model
        dae = m.dae
        return {"x": dae.x, "z": dae.z, "p": m.p, "t": m.t, "ode": dae.ode, "alg": dae.alg}

    def sensitivity_spec(self, seeds: np.ndarray) -> dict[str, cs.SX]:
        """The DAE with its forward sensitivities in the directions ``seeds`` (a
        parameters x k array) as one DAE: states ``[x; vec(S)]``, algebraic unknowns
        ``[z; vec(R)]``, ``S' = f_x S + f_z R + f_p E``, ``0 = g_x S + g_z R + g_p E``
        (directional derivatives, formed symbolically; ``vec`` stacks columns)."""
        m = self.model
        dae = m.dae
        k = seeds.shape[1]
        S, R = cs.SX.sym("S", dae.x.numel(), k), cs.SX.sym("R", dae.z.numel(), k)
        args, dirs = cs.vertcat(dae.x, dae.z, m.p), cs.vertcat(S, R, cs.DM(seeds))
        return self.spec() | {
            "x": cs.vertcat(dae.x, cs.vec(S)),
            "z": cs.vertcat(dae.z, cs.vec(R)),
            "ode": cs.vertcat(dae.ode, cs.vec(cs.jtimes(dae.ode, args, dirs))),
            "alg": cs.vertcat(dae.alg, cs.vec(cs.jtimes(dae.alg, args, dirs))),
        }

    @property
    def rates(self) -> cs.Function:
        return self._get("rates", lambda: self._of_point("rates", self.model.dae.ode))

    @property
    def update(self) -> cs.Function:
        return self._get("update", lambda: self._of_point("update", self.model.dae.update))

    @property
    def crossings(self) -> cs.Function:
        """The crossing functions, dense (mapped over a segment into numpy buffers)."""

        def build() -> cs.Function:
            return self._of_point("crossings", cs.densify(self.model.dae.zero))

        return self._get("crossings", build)

    @property
    def outputs(self) -> cs.Function:
        """Every named variable."""
        return self._get("outputs", lambda: self._of_point("outputs", self.model.outputs))

    def named(self, which: Sequence[int]) -> cs.Function:
        """The named variables at positions ``which`` of ``model.names`` (kept per ``which``)."""
        rows = list(which)
        return self._get(f"named {rows}", lambda: self._of_point("named", self.model.outputs[rows]))

    @property
    def readout(self) -> Readout:
        """How each named variable is read from a solution (built on first use)."""

        def build() -> Readout:
            with paused_gc():  # it makes many objects that live on: no point scanning them
                return Readout(self.model)

        return self._get("readout", build)

    @property
    def values(self) -> cs.Function:
        """Every algebraic column (in ``model.ir.algebraic`` order)."""
        return self._get("values", lambda: self._of_point("values", self.model.dae.values))

    @property
    def residuals(self) -> cs.Function:
        """The alias-reduced equations' residuals (before index reduction)."""

        def build() -> cs.Function:
            m = self.model.full  # (its forms and DAE in one set of symbols)
            res = m.reduced.residuals
            alg = m.ir.syms(m.ir.algebraic)
            if alg.numel() and res.numel():
                res = cs.substitute(res, alg, m.dae.values)
            return self._of_point("residuals", res, m)

        return self._get("residuals", build)

    @property
    def named_residuals(self) -> cs.Function:
        """The alias-reduced equations' residuals from the named values ``y`` (in
        ``model.names`` order): ``(y, p, t) -> residuals``, whatever the states."""

        def build() -> cs.Function:
            m = self.model.full
            y = cs.SX.sym("y", len(m.names))
            res = m.reduced.residuals
            chain = [q for ch in m.ir.chains for q in ch]
            syms = m.ir.symbols.take(chain)
            picked = cs.vertcat(*[y[m.check_name(q)] for q in chain])
            return cs.Function("named_residuals", [y, m.p, m.t], [cs.substitute(res, syms, picked)])

        return self._get("named_residuals", build)

    def algebraic_solver(self, name: str) -> cs.Function:
        """Newton on ``0 = g(z, x, p, t)`` for ``z``: ``(z guess, x, p, t) -> z``."""

        return self._get(
            f"algebraic_solver {name}", lambda: newton_solver(name, algebraic(self.model))
        )
