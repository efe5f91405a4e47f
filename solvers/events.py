"""Events: step-and-locate on IDAS for models with discrete modes.

Between events the modes are constant and the DAE is smooth. Each segment is integrated
by IDAS over the output times it covers; the crossing functions ``c(x, z, p, t)`` are then
checked for a change of sign between consecutive output times. The first crossing is
located by the Illinois variant of regula falsi on ``h -> c(x(t_k + h))``, where
``x(t_k + h)`` comes from a one-interval IDAS integration on scaled time
``t = t_k + tau h, tau in [0, 1]`` (one integrator for every ``t_k`` and ``h``). Just past
the root, the mode updates are repeated until no mode changes (event iteration), the
algebraic unknowns are re-solved for the new modes, and the next segment starts there.

CasADi 3.8.2's own (experimental) event handling was tried first: it detects only
crossings from positive to negative, and with two crossing functions it failed with
"Trouble interpolating at tout ... too far back" in IDAS and CVODES.

A crossing that changes sign and back between two output times is not seen; choose
``dt`` finer than the shortest interval between events.
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as cs
import numpy as np

from acausal import InitializationError, Model, SimulationError

from .functions import MODE_ITERATIONS, DAEFunctions, idas_options

MAX_EVENTS = 10_000
LOCATE_ITERATIONS = 100


class EventLoop:
    """Simulation with events of a model whose ``dae.modes > 0``; ``initial_values(p)``
    gives consistent ``(x0, z0)`` at ``grid[0]``."""

    def __init__(
        self,
        functions: DAEFunctions,
        initial_values: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
        rtol: float,
        atol: float,
        max_steps: int,
    ) -> None:
        self.functions, self.initial_values = functions, initial_values
        self.rtol, self.atol, self.max_steps = rtol, atol, max_steps
        model = functions.model
        dae, p, time = model.dae, model.p, model.t
        self.cross = functions.crossings
        self.nx, self.nz = dae.x.numel(), dae.z.numel()
        self.first = self.nx - dae.modes  # the modes are the last entries of x
        start, length, tau = cs.SX.sym("t_start"), cs.SX.sym("length"), cs.SX.sym("tau")
        now = start + tau * length
        spec = {
            "x": dae.x,
            "z": dae.z,
            "p": cs.vertcat(p, start, length),
            "t": tau,
            "ode": length * cs.substitute(dae.ode, time, now),
            "alg": cs.substitute(dae.alg, time, now),
        }
        unit = np.array([0.0, 1.0])
        self.step = cs.integrator(
            "event_step", "idas", spec, 0.0, 1.0, idas_options(unit, rtol, atol, max_steps)
        )
        self.solve_z = functions.algebraic_solver("z_after_event") if self.nz else None
        self.log: list[tuple[float, dict[str, float]]] = []

    def _state_at(
        self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t0: float, h: float
    ) -> tuple[np.ndarray, np.ndarray]:
        out = self.step(x0=x, z0=z, p=np.concatenate([p, [t0, h]]))
        xf = out["xf"].full().ravel()
        xf[self.first :] = x[self.first :]  # modes are constant between events: no drift
        return xf, out["zf"].full().ravel()

    def _crossings(self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
        return self.cross(x, z, p, t).full().ravel()

    def _locate(
        self,
        i: int,
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t0: float,
        c0: float,
        c1: float,
        span: float,
    ) -> float:
        """Smallest ``h`` in (0, span] past the root of crossing ``i`` (Illinois)."""
        lo, hi, f_lo, f_hi = 0.0, span, c0, c1
        side = 0
        tol = 1e-12 * (1.0 + abs(t0) + span)
        for _ in range(LOCATE_ITERATIONS):
            if hi - lo <= tol:
                break
            h = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            if not lo < h < hi:
                h = 0.5 * (lo + hi)
            f = self._crossings(*self._state_at(x, z, p, t0, h), p, t0 + h)[i]
            if np.sign(f) == np.sign(f_hi):
                hi, f_hi = h, f
                f_lo = f_lo / 2 if side == 1 else f_lo
                side = 1
            else:
                lo, f_lo = h, f
                f_hi = f_hi / 2 if side == -1 else f_hi
                side = -1
        return hi

    def _settle(
        self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Event iteration at ``t``: states re-initialized and modes updated until nothing
        changes."""
        update = self.functions.update
        for _ in range(MODE_ITERATIONS):
            new = update(x, z, p, t).full().ravel()
            if np.array_equal(new, x):
                return x, z
            x = new
            if self.solve_z is not None:
                z = self.solve_z(z, x, p, t).full().ravel()
        raise SimulationError(
            f"simulation of {self.functions.model.name}: the modes do not settle at t = "
            f"{t:.6g} (event iteration cycles); check the mode updates of the components",
            time=t,
        )

    def run(self, p: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """States (modes included) and Newton unknowns on the output ``grid``."""
        model = self.functions.model
        x, z = self.initial_values(p)
        t = float(grid[0])
        xs, zs = [x], [z]
        self.log = []
        names = list(model.flat.discretes)
        first = self.first
        located = 0
        while len(xs) < len(grid):
            tout = np.concatenate([[t], grid[len(xs) :]])
            opts = idas_options(tout, self.rtol, self.atol, self.max_steps)
            integ = cs.integrator("segment", "idas", self.functions.spec(), t, tout, opts)
            out = integ(x0=x, z0=z, p=p)
            seg_x, seg_z = out["xf"].full(), out["zf"].full()
            seg_x[first:] = x[first:, None]  # modes are constant on a segment: no drift
            crossed = self._first_crossing(seg_x, seg_z, p, tout)
            if crossed is None:
                xs += list(seg_x[:, 1:].T)
                zs += list(seg_z[:, 1:].T)
                break
            j, changed, c0, c1 = crossed
            xs += list(seg_x[:, 1:j].T)
            zs += list(seg_z[:, 1:j].T)
            xa, za, ta, span = (
                seg_x[:, j - 1],
                seg_z[:, j - 1],
                float(tout[j - 1]),
                tout[j] - tout[j - 1],
            )
            h = min(self._locate(i, xa, za, p, ta, c0[i], c1[i], span) for i in changed)
            x, z = self._state_at(xa, za, p, ta, h)
            t = ta + h
            before = x[first:].copy()
            x, z = self._settle(x, z, p, t)
            changed = {n: float(v) for n, v, b in zip(names, x[first:], before) if v != b}
            if changed:  # a crossing can also end where nothing changes (a touch)
                self.log.append((t, changed))
            located += 1
            if located > MAX_EVENTS:
                raise SimulationError(
                    f"simulation of {model.name}: more than {MAX_EVENTS} events by t = "
                    f"{t:.6g} (chattering between modes?)",
                    time=t,
                )
        n = len(grid)
        return np.array(xs).reshape(n, self.nx).T, np.array(zs).reshape(n, self.nz).T

    def _first_crossing(
        self, seg_x: np.ndarray, seg_z: np.ndarray, p: np.ndarray, tout: np.ndarray
    ) -> tuple[int, list[int], np.ndarray, np.ndarray] | None:
        """(j, crossings that changed sign, their values at tout[j-1] and tout[j]) for the
        first output interval (tout[j-1], tout[j]] where one changes sign, or None."""
        prev = None
        for j in range(len(tout)):
            c = self._crossings(seg_x[:, j], seg_z[:, j], p, float(tout[j]))
            if prev is not None:
                changed = np.nonzero(np.sign(c) * np.sign(prev) < 0)[0].tolist()
                changed += np.nonzero((c == 0) & (prev != 0))[0].tolist()
                if changed:
                    return j, sorted(set(changed)), prev, c
            prev = np.where(c == 0, prev if prev is not None else c, c)
        return None


def check_no_events(model: Model) -> None:
    """Forward sensitivities are not carried across events (yet): say so."""
    if model.dae.modes:
        raise InitializationError(
            f"{model.name}: sensitivities of a model with events (discrete modes "
            f"{', '.join(model.flat.discretes)}) are not supported; use a "
            "smooth variant of the component (e.g. regularized friction) for learning"
        )
