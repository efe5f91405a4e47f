"""Events: step-and-locate on IDAS for models with discrete modes, with Modelica's semantics.

Between events the modes are constant and the DAE is smooth. Each segment is integrated
by IDAS over the output times it covers (and ends at a known time event, a breakpoint).

**Crossings and their sides.** Every crossing function ``c_i(x, z, p, t)`` has a
remembered side ``sigma_i`` in ``{-1, +1}`` (0 while undecided: a plain crossing that is
exactly 0 at the start), its ``pre`` value. It *fires* when ``c_i`` is beyond a noise band
on the other side: ``sigma_i c_i < -band_i`` (``|c_i| > band_i`` when undecided), with
``band_i = max(BAND * max|c_i| seen in the run, 1e-3 atol)``. The first output interval
where one fires is searched for the root of ``c_i + sigma_i band_i`` by the Illinois
variant of regula falsi on ``h -> c(x(t_k + h))``, where ``x(t_k + h)`` comes from a
one-interval IDAS integration on scaled time ``t = t_k + tau h, tau in [0, 1]``; the
event is placed just past that root (the bracket's far end, so the fired crossing is
surely on its new side). A relation (:meth:`acausal.Component.relation`) is the 0/1 mode
``sigma_i > 0`` of its crossing.

**Event iteration.** At the event the crossings that fired take the side they went to;
then, until nothing changes: the relations' modes are set from the sides, the mode
updates and re-initializations are applied once, the algebraic unknowns re-solved, and the
sides re-evaluated *with hysteresis* (a side flips only when its crossing is beyond the band
on the other side, so rounding noise right after a switch, ``c = -2e-15``, cannot switch it
back). If the iteration comes back to a state it has been in (two modes that alternate at
one instant), the state where the cycle began is kept and a warning says so.

A crossing that changes sign and back between two output times is not seen; choose
``dt`` finer than the shortest interval between events. CasADi 3.8.2's own (experimental)
event handling was tried first: it detects only crossings from positive to negative, and
with two crossing functions it failed with "Trouble interpolating at tout ... too far
back" in IDAS and CVODES.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import casadi as cs
import numpy as np

from acausal import InitializationError, Model, SimulationError

from .functions import DAEFunctions, idas_options

MAX_EVENTS = 10_000
LOCATE_ITERATIONS = 100
EVENT_ITERATIONS = 50  # rounds of event iteration at one instant (cycles are found earlier)
BAND = 1e-11  # the noise band of a crossing, relative to the largest |c| seen


class EventIterationWarning(UserWarning):
    """Modes alternated at one instant; the iteration was resolved by keeping one state."""


class Sides:
    """The remembered sides of the crossing functions, their noise bands, and the relation
    modes they drive (``relations[i]``: position among the modes, or -1)."""

    def __init__(self, relations: tuple[int, ...], atol: float) -> None:
        self.relations = np.asarray(relations, dtype=int)
        self.driven = np.nonzero(self.relations >= 0)[0]
        self.scale = np.zeros(len(relations))
        self.floor = 1e-3 * atol
        self.sigma = np.zeros(len(relations))

    def band(self) -> np.ndarray:
        return np.maximum(BAND * self.scale, self.floor)

    def seen(self, c: np.ndarray) -> None:
        """Widen the bands with the crossing values ``c`` of one point."""
        self.scale = np.maximum(self.scale, np.abs(c))

    def start(self, c: np.ndarray, modes: np.ndarray) -> None:
        """Sides at the start: the sign of ``c``; within the band, a relation's start value
        (its ``pre``), a plain crossing undecided."""
        self.seen(c)
        sigma = np.sign(c) * (np.abs(c) > self.band())
        rel = self.driven
        sigma[rel] = np.where(sigma[rel] != 0, sigma[rel], 2.0 * modes[self.relations[rel]] - 1)
        self.sigma = sigma

    def fired(self, c: np.ndarray) -> np.ndarray:
        """Which crossings are beyond their band on the other side of their side."""
        band = self.band()
        return np.where(self.sigma != 0, self.sigma * c < -band, np.abs(c) > band)

    def target(self, c_after: np.ndarray) -> np.ndarray:
        """The level each crossing fires at: ``-sigma band`` (undecided: the band on the
        side it went to, by ``c_after``)."""
        side = np.where(self.sigma != 0, -self.sigma, np.sign(c_after))
        return side * self.band()

    def flip(self, c: np.ndarray) -> bool:
        """Hysteresis: the sides of the crossings that fired take the side they went to;
        whether any side changed."""
        fired = self.fired(c)
        self.sigma = np.where(fired, np.sign(c), self.sigma)
        return bool(fired.any())

    def modes(self, modes: np.ndarray) -> np.ndarray:
        """``modes`` with each relation's mode set from its crossing's side."""
        out = modes.copy()
        out[self.relations[self.driven]] = (self.sigma[self.driven] > 0).astype(float)
        return out


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
        breakpoints: tuple[float, ...] = (),
    ) -> None:
        self.functions, self.initial_values = functions, initial_values
        self.rtol, self.atol, self.max_steps = rtol, atol, max_steps
        self.breakpoints = tuple(breakpoints)
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

    def new_sides(self) -> Sides:
        return Sides(self.functions.model.dae.relations, self.atol)

    # -- pieces -------------------------------------------------------------------------
    def _state_at(
        self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t0: float, h: float
    ) -> tuple[np.ndarray, np.ndarray]:
        out = self.step(x0=x, z0=z, p=np.concatenate([p, [t0, h]]))
        xf = out["xf"].full().ravel()
        xf[self.first :] = x[self.first :]  # modes are constant between events: no drift
        return xf, out["zf"].full().ravel()

    def _crossings(self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
        return self.cross(x, z, p, t).full().ravel()

    def _resolve(self, z: np.ndarray, x: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
        return z if self.solve_z is None else self.solve_z(z, x, p, t).full().ravel()

    def _locate(
        self,
        i: int,
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t0: float,
        f_lo: float,
        f_hi: float,
        target: float,
        span: float,
    ) -> float:
        """Smallest ``h`` in (0, span] past the root of ``c_i - target`` (Illinois), given
        its values ``f_lo`` at 0 and ``f_hi`` at ``span``."""
        lo, hi = 0.0, span
        side = 0
        tol = 1e-12 * (1.0 + abs(t0) + span)
        for _ in range(LOCATE_ITERATIONS):
            if hi - lo <= tol:
                break
            h = hi - f_hi * (hi - lo) / (f_hi - f_lo)
            if not lo < h < hi:
                h = 0.5 * (lo + hi)
            f = self._crossings(*self._state_at(x, z, p, t0, h), p, t0 + h)[i] - target
            if np.sign(f) == np.sign(f_hi):
                hi, f_hi = h, f
                f_lo = f_lo / 2 if side == 1 else f_lo
                side = 1
            else:
                lo, f_lo = h, f
                f_hi = f_hi / 2 if side == -1 else f_hi
                side = -1
        return hi

    def iterate(
        self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float, sides: Sides
    ) -> tuple[np.ndarray, np.ndarray]:
        """Event iteration at ``t`` (see the module docstring): ``(x, z)`` consistent with
        the modes; ``sides`` are updated in place."""
        first, update = self.first, self.functions.update
        visited: list[tuple[bytes, np.ndarray, np.ndarray]] = []
        for _ in range(EVENT_ITERATIONS):
            x = np.concatenate([x[:first], sides.modes(x[first:])])
            new = update(x, z, p, t).full().ravel()
            new[first:] = sides.modes(new[first:])
            z = self._resolve(z, new, p, t)
            flipped = sides.flip(self._crossings(new, z, p, t))
            if not flipped and np.array_equal(new, x):
                return new, z
            key = np.concatenate([new, sides.sigma]).tobytes()
            for k, (seen, xs, zs) in enumerate(visited):
                if seen == key:
                    return self._keep(visited[k:], xs, zs, p, t, sides)
            visited.append((key, new, z))
            x = new
        raise SimulationError(
            f"simulation of {self.functions.model.name}: the modes do not settle at t = "
            f"{t:.6g} after {EVENT_ITERATIONS} rounds of event iteration; check the mode "
            "updates of the components",
            time=t,
        )

    def _keep(
        self,
        cycle: list[tuple[bytes, np.ndarray, np.ndarray]],
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t: float,
        sides: Sides,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Resolve a cycle of event iteration by keeping its first state, with every side
        set to where its crossing is (so nothing fires again at once); warn."""
        names = list(self.functions.model.flat.discretes)
        modes = np.array([xs[self.first :] for _, xs, _ in cycle])
        moving = [n for k, n in enumerate(names) if np.ptp(modes[:, k]) > 0]
        kept = ", ".join(f"{n} = {x[self.first + names.index(n)]:g}" for n in moving)
        warnings.warn(
            f"simulation of {self.functions.model.name}: at t = {t:.9g} the modes "
            f"{', '.join(moving)} alternate ({len(cycle)} states in a cycle of event "
            f"iteration); kept {kept}",
            EventIterationWarning,
            stacklevel=2,
        )
        c = self._crossings(x, z, p, t)
        sides.sigma = np.where(np.abs(c) > sides.band(), np.sign(c), sides.sigma)
        return x, z

    # -- the start ------------------------------------------------------------------------
    def settle(self, p: np.ndarray, starts: list[int], t0: float) -> np.ndarray:
        """Event iteration at the start: the start modes (parameters ``starts``) and the
        relations' sides updated until nothing changes; the parameters with the settled
        modes."""
        p = np.array(p, dtype=float)
        first, update = self.first, self.functions.update
        x0, z0 = self.initial_values(p)
        sides = self.new_sides()
        sides.start(self._crossings(x0, z0, p, t0), x0[first:])
        visited: list[bytes] = []
        for _ in range(EVENT_ITERATIONS):
            x0[first:] = sides.modes(x0[first:])
            new = sides.modes(update(x0, z0, p, t0).full().ravel()[first:])
            if np.array_equal(new, p[starts]):
                return p
            key = np.concatenate([new, sides.sigma]).tobytes()
            if key in visited:
                break
            visited.append(key)
            p[starts] = new
            x0, z0 = self.initial_values(p)
            sides.flip(self._crossings(x0, z0, p, t0))
        raise InitializationError(
            f"{self.functions.model.name}: the modes do not settle at the start (event "
            f"iteration cycles among {', '.join(self.functions.model.flat.discretes)}); "
            "give start values of the modes that agree with the start state"
        )

    # -- the run --------------------------------------------------------------------------
    def run(self, p: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """States (modes included) and Newton unknowns on the output ``grid``."""
        model = self.functions.model
        x, z = self.initial_values(p)
        t = float(grid[0])
        sides = self.new_sides()
        sides.start(self._crossings(x, z, p, t), x[self.first :])
        xs, zs = [x], [z]
        self.log = []
        located = 0
        pending = [b for b in self.breakpoints if grid[0] < b < grid[-1]]
        while len(xs) < len(grid):
            edge = pending[0] if pending else float(grid[-1])
            inside = grid[len(xs) :]
            inside = inside[inside <= edge]
            tout = np.concatenate(
                [[t], inside, [] if inside.size and inside[-1] == edge else [edge]]
            )
            opts = idas_options(tout, self.rtol, self.atol, self.max_steps)
            integ = cs.integrator("segment", "idas", self.functions.spec(), t, tout, opts)
            out = integ(x0=x, z0=z, p=p)
            seg_x, seg_z = out["xf"].full(), out["zf"].full()
            seg_x[self.first :] = x[self.first :, None]  # modes constant on a segment
            crossed = self._first_crossing(seg_x, seg_z, p, tout, sides)
            if crossed is None:
                xs += list(seg_x[:, 1 : 1 + inside.size].T)
                zs += list(seg_z[:, 1 : 1 + inside.size].T)
                x, z, t = seg_x[:, -1], seg_z[:, -1], edge
                if pending:  # a time event: inputs jump, modes may change
                    pending.pop(0)
                    x, z = self._event(x, self._resolve(z, x, p, t), p, t, sides, None)
                continue
            j, h = crossed
            xs += list(seg_x[:, 1:j].T)
            zs += list(seg_z[:, 1:j].T)
            ta = float(tout[j - 1])
            x, z = self._state_at(seg_x[:, j - 1], seg_z[:, j - 1], p, ta, h)
            t = ta + h
            x, z = self._event(x, z, p, t, sides, self._crossings(x, z, p, t))
            located += 1
            if located > MAX_EVENTS:
                raise SimulationError(
                    f"simulation of {model.name}: more than {MAX_EVENTS} events by t = "
                    f"{t:.6g} (chattering between modes?)",
                    time=t,
                )
        n = len(grid)
        return np.array(xs).reshape(n, self.nx).T, np.array(zs).reshape(n, self.nz).T

    def _event(
        self,
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t: float,
        sides: Sides,
        c: np.ndarray | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The event at ``t``: the crossings that fired (at values ``c``) take their new
        sides, then event iteration; the modes that changed go into the log."""
        before = x[self.first :].copy()
        if c is not None:
            sides.flip(c)
        x, z = self.iterate(x, z, p, t, sides)
        names = self.functions.model.flat.discretes
        changed = {n: float(v) for n, v, b in zip(names, x[self.first :], before) if v != b}
        if changed:  # a crossing can also end where nothing changes (a touch)
            self.log.append((t, changed))
        return x, z

    def _first_crossing(
        self,
        seg_x: np.ndarray,
        seg_z: np.ndarray,
        p: np.ndarray,
        tout: np.ndarray,
        sides: Sides,
    ) -> tuple[int, float] | None:
        """``(j, h)``: the first output interval ``(tout[j-1], tout[j]]`` where a crossing
        fires, and the located event time ``tout[j-1] + h``; None if none fires."""
        prev = None
        for j in range(len(tout)):
            c = self._crossings(seg_x[:, j], seg_z[:, j], p, float(tout[j]))
            fired = np.nonzero(sides.fired(c))[0]
            if prev is not None and fired.size:
                target = sides.target(c)
                span, ta = tout[j] - tout[j - 1], float(tout[j - 1])
                xa, za = seg_x[:, j - 1], seg_z[:, j - 1]
                h = min(
                    self._locate(
                        i, xa, za, p, ta, prev[i] - target[i], c[i] - target[i], target[i], span
                    )
                    for i in fired
                )
                return j, h
            sides.seen(c)
            prev = c
        return None


def check_no_events(model: Model) -> None:
    """Forward sensitivities are not carried across events (yet): say so."""
    if model.dae.modes:
        raise InitializationError(
            f"{model.name}: sensitivities of a model with events (discrete modes "
            f"{', '.join(model.flat.discretes)}) are not supported; use a "
            "smooth variant of the component (e.g. regularized friction) for learning"
        )
