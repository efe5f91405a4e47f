"""Jump conditions of forward sensitivities at events.

For the index-1 DAE ``x' = f(x, z, p, t)``, ``0 = h(x, z, p, t)`` with sensitivities
``S = dx/dp``, ``R = dz/dp`` (columns: the parameters asked for, seeds ``E``), an event at
the time ``tau(p)`` where the crossing ``c(x, z, p, t)`` reaches its level moves with the
parameters:

    tau_p = -(c_x S + c_z R + c_p E) / (c_x f + c_z z' + c_t),   z' = -h_z^-1 (h_x f + h_t)

(everything just before the event; a crossing that jumps there, such as a switch's
stepped control, has ``tau_p = 0`` like a time event). Each round ``x <- u(x, z, p, t)``
of event iteration (mode changes, re-initializations) maps the total derivatives ``D = dx(tau)/dp``,
``Dz = dz(tau)/dp`` (from ``D = S + f tau_p``, ``Dz = R + z' tau_p`` before the first round) to

    D <- u_x D + u_z Dz + u_p E + u_t tau_p,    Dz = -h_z^-1 (h_x D + h_p E + h_t tau_p)

(``Dz`` at the round's new point: its algebraic unknowns re-solved), and just after the
event ``S+ = D - f+ tau_p``, ``R+ = -h_z^-1 (h_x S+ + h_p E)`` (consistency of the new
algebraic equations). A time event (a breakpoint) has ``tau_p = 0``. The modes are
piecewise constant, so their rows of ``S`` stay 0.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

from .functions import DAEFunctions

Point = tuple[np.ndarray, np.ndarray, np.ndarray, float]  # (x, z, p, t)


class EventSensitivities:
    """The partial derivatives the jump conditions need, as CasADi functions of one point."""

    def __init__(self, functions: DAEFunctions, seeds: np.ndarray) -> None:
        m = functions.model
        dae = m.dae
        self.seeds = seeds  # E: (number of parameters, k)
        self.nx, self.nz = dae.x.numel(), dae.z.numel()
        args = [dae.x, dae.z, m.p, m.t]

        def partials(name: str, expr: cs.SX) -> cs.Function:
            outs = [cs.densify(cs.jacobian(expr, a)) for a in args]
            return cs.Function(name, args, outs)

        self.f = cs.Function("f", args, [dae.ode])
        self.h = partials("h_partials", dae.alg)
        self.c = partials("c_partials", dae.zero)
        self.u = partials("u_partials", dae.update)

    def _solve_hz(self, point: Point, rhs: np.ndarray) -> np.ndarray:
        """``-h_z^-1 rhs`` at ``point``, where ``rhs`` is ``h_x D + h_p E + h_t tau_p``."""
        if not self.nz:
            return np.zeros((0, rhs.shape[1]))
        hz = self.h(*point)[1].full()
        return -np.linalg.solve(hz, rhs)

    def _rates(self, point: Point) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """``(f, z', [h_x, h_z, h_p, h_t])`` at ``point``."""
        f = self.f(*point).full()
        h = [a.full() for a in self.h(*point)]
        zdot = self._solve_hz(point, h[0] @ f + h[3]) if self.nz else np.zeros((0, 1))
        return f, zdot, h

    def consistent(self, point: Point, S: np.ndarray, tau_p: np.ndarray) -> np.ndarray:
        """``Dz = -h_z^-1 (h_x S + h_p E + h_t tau_p)``: the algebraic unknowns' total
        derivative at ``point`` given the states' ``S``."""
        if not self.nz:
            return np.zeros((0, S.shape[1]))
        hx, _, hp, ht = (a.full() for a in self.h(*point))
        return self._solve_hz(point, hx @ S + hp @ self.seeds + ht @ tau_p)

    def jump(
        self,
        crossing: int | None,
        before: Point,
        rounds: list[tuple[Point, Point]],
        S: np.ndarray,
        R: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(S+, R+)`` after an event located on ``crossing`` (None: a time event) at
        the point ``before``; ``rounds``: each round of event iteration as (the point the
        update was applied at, the point it led to, algebraic unknowns re-solved)."""
        k = S.shape[1]
        tau_p = np.zeros((1, k))
        f, zdot, _ = self._rates(before)
        if crossing is not None:
            cx, cz, cp, ct = (a.full()[crossing : crossing + 1] for a in self.c(*before))
            rate = float((cx @ f + cz @ zdot + ct)[0, 0])
            if np.isfinite(rate) and rate != 0:  # else the crossing jumps: a time event
                tau_p = -(cx @ S + cz @ R + cp @ self.seeds) / rate
        D, Dz = S + f @ tau_p, R + zdot @ tau_p
        for applied, reached in rounds:
            ux, uz, up, ut = (a.full() for a in self.u(*applied))
            D = ux @ D + uz @ Dz + up @ self.seeds + ut @ tau_p
            Dz = self.consistent(reached, D, tau_p)
        after = rounds[-1][1] if rounds else before
        f_after = self.f(*after).full()
        S_after = D - f_after @ tau_p
        return S_after, self.consistent(after, S_after, np.zeros((1, k)))
