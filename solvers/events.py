"""Events: step-and-locate on IDAS for models with discrete modes, with Modelica's semantics.

Between events the modes are constant and the DAE is smooth. IDAS integrates over a few
output times at a time (8 after an event, twice as many each time none fires), and stops
at known time events (breakpoints, where the event iteration runs too); IDAS is given the
rates just after an event as its first derivative.

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

from acausal import InitializationError, SimulationError

from .buffers import mapped_call
from .crossings import Sides
from .event_sensitivities import EventSensitivities
from .functions import DAEFunctions, idas_options

MAX_EVENTS = 10_000


class EventIterationWarning(UserWarning):
    """Modes alternated at one instant; the iteration was resolved by keeping one state."""


LOCATE_ITERATIONS = 100
# output intervals integrated at once after an event, doubled while none fires: the work
# past an event (integrated with the old modes, then thrown away) stays below the rest
FIRST_CHUNK = 8
EVENT_ITERATIONS = 50  # rounds of event iteration at one instant (cycles are found earlier)


class EventLoop:
    """Simulation with events of a model whose ``dae.modes > 0``; ``initial_values(p)``
    gives consistent ``(x0, z0)`` at ``grid[0]``, ``initial_sensitivities(p, x0, z0, E)``
    their derivatives in the directions ``E``; ``tolerances``: IDAS's rtol, atol and
    maximum number of steps."""

    def __init__(
        self,
        functions: DAEFunctions,
        initial_values: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
        initial_sensitivities: Callable[..., tuple[np.ndarray, np.ndarray]],
        tolerances: tuple[float, float, int],
        breakpoints: tuple[float, ...] = (),
    ) -> None:
        self.functions, self.initial_values = functions, initial_values
        self.initial_sensitivities = initial_sensitivities
        self.rtol, self.atol, self.max_steps = tolerances
        self.breakpoints = tuple(breakpoints)
        dae = functions.model.dae
        self.cross = functions.crossings
        self._mapped: dict = {}  # its maps over whole segments, by segment length
        self.nx, self.nz = dae.x.numel(), dae.z.numel()
        self.first = self.nx - dae.modes  # the modes are the last entries of x
        self.step = self._scaled_step(functions.spec())
        self.solve_z = functions.algebraic_solver("z_after_event") if self.nz else None
        self.log: list[tuple[float, dict[str, float]]] = []
        self._sensitivities: dict[bytes, tuple[dict, cs.Function, EventSensitivities]] = {}

    def _scaled_step(self, spec: dict[str, cs.SX]) -> cs.Function:
        """IDAS over one interval ``[t0, t0 + h]`` on scaled time ``t = t0 + tau h``,
        ``tau in [0, 1]`` (one integrator for every ``t0`` and ``h``); parameters
        ``[p; t0; h]``."""
        time = self.functions.model.t
        start, length, tau = cs.SX.sym("t_start"), cs.SX.sym("length"), cs.SX.sym("tau")
        now = start + tau * length
        scaled = {
            "x": spec["x"],
            "z": spec["z"],
            "p": cs.vertcat(spec["p"], start, length),
            "t": tau,
            "ode": length * cs.substitute(spec["ode"], time, now),
            "alg": cs.substitute(spec["alg"], time, now),
        }
        opts = idas_options(np.array([0.0, 1.0]), self.rtol, self.atol, self.max_steps)
        return cs.integrator("event_step", "idas", scaled, 0.0, 1.0, opts)

    def new_sides(self) -> Sides:
        return Sides(self.functions.model.dae.relations, self.atol)

    # -- pieces -------------------------------------------------------------------------
    def _state_at(
        self,
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t0: float,
        h: float,
        step: cs.Function | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        out = (step or self.step)(x0=x, z0=z, p=np.concatenate([p, [t0, h]]))
        xf = out["xf"].full().ravel()
        xf[self.first : self.nx] = x[self.first : self.nx]  # modes are constant: no drift
        return xf, out["zf"].full().ravel()

    def _crossings(self, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float) -> np.ndarray:
        return self.cross(x[: self.nx], z[: self.nz], p, t).full().ravel()

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
        self,
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t: float,
        sides: Sides,
        rounds: list | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Event iteration at ``t`` (see the module docstring): ``(x, z)`` consistent with
        the modes; ``sides`` are updated in place; ``rounds`` (if given) receives each
        round as (the point the updates were applied at, the point they led to)."""
        first, update = self.first, self.functions.update
        visited: list[tuple[bytes, np.ndarray, np.ndarray]] = []
        rounds = [] if rounds is None else rounds
        for _ in range(EVENT_ITERATIONS):
            x = np.concatenate([x[:first], sides.modes(x[first:])])
            new = update(x, z, p, t).full().ravel()
            new[first:] = sides.modes(new[first:])
            applied, z = (x, z, p, t), self._resolve(z, new, p, t)
            rounds.append((applied, (new, z, p, t)))
            flipped = sides.flip(self._crossings(new, z, p, t))
            if not flipped and np.array_equal(new, x):
                return new, z
            key = np.concatenate([new, sides.sigma]).tobytes()
            for k, (seen, xs, zs) in enumerate(visited):
                if seen == key:
                    del rounds[k + 1 :]
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
        names = self.functions.model.modes
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
            f"iteration cycles among {', '.join(self.functions.model.modes)}); "
            "give start values of the modes that agree with the start state"
        )

    # -- the run --------------------------------------------------------------------------
    def _with_sensitivities(
        self, seeds: np.ndarray
    ) -> tuple[dict, cs.Function, EventSensitivities]:
        """The augmented DAE (states and sensitivities in the directions ``seeds``), its
        one-interval step, and the jump conditions (built once per set of seeds)."""
        key = seeds.tobytes() + bytes(seeds.shape[1])
        if key not in self._sensitivities:
            spec = self.functions.sensitivity_spec(seeds)
            jumps = EventSensitivities(self.functions, seeds)
            self._sensitivities[key] = (spec, self._scaled_step(spec), jumps)
        return self._sensitivities[key]

    def run(
        self, p: np.ndarray, grid: np.ndarray, seeds: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """States (modes included) and Newton unknowns on the output ``grid``; with
        ``seeds`` (parameters x k), the states ``[x; vec(S)]`` and unknowns ``[z; vec(R)]``
        with their forward sensitivities (jumps at events as in
        :mod:`solvers.event_sensitivities`)."""
        nx, nz, first = self.nx, self.nz, self.first
        x, z = self.initial_values(p)
        spec, step, jumps = self.functions.spec(), self.step, None
        if seeds is not None:
            spec, step, jumps = self._with_sensitivities(seeds)
            S, R = self.initial_sensitivities(p, x, z, seeds)
            x, z = np.concatenate([x, S.ravel("F")]), np.concatenate([z, R.ravel("F")])
        t = float(grid[0])
        rates = cs.Function("rates", [spec["x"], spec["z"], spec["p"], spec["t"]], [spec["ode"]])
        sides = self.new_sides()
        sides.start(self._crossings(x, z, p, t), x[first:nx])
        xs, zs = [x], [z]
        self.log = []
        pending = [b for b in self.breakpoints if grid[0] < b < grid[-1]]
        chunk, located = FIRST_CHUNK, 0
        while len(xs) < len(grid):
            breakpoint = pending[0] if pending else np.inf
            inside = grid[len(xs) :]
            inside = inside[inside <= breakpoint][:chunk]
            edge = min(breakpoint, float(grid[-1]))
            if inside.size == chunk and inside[-1] < edge:
                edge = float(inside[-1])
            end = [] if inside.size and inside[-1] == edge else [edge]
            tout = np.concatenate([[t], inside, end])
            opts = idas_options(tout, self.rtol, self.atol, self.max_steps)
            opts["init_xdot"] = rates(x, z, p, t).full().ravel()  # jumps at events
            out = cs.integrator("segment", "idas", spec, t, tout, opts)(x0=x, z0=z, p=p)
            seg_x, seg_z = out["xf"].full(), out["zf"].full()
            seg_x[first:nx] = x[first:nx, None]  # modes are constant on a segment
            crossed = self._first_crossing(seg_x, seg_z, p, tout, sides)
            if crossed is None:
                xs += list(seg_x[:, 1 : 1 + inside.size].T)
                zs += list(seg_z[:, 1 : 1 + inside.size].T)
                x, z, t = seg_x[:, -1], seg_z[:, -1], edge
                chunk *= 2
                if edge == breakpoint:  # a time event: inputs jump, modes may change
                    pending.pop(0)
                    z = np.concatenate([self._resolve(z[:nz], x[:nx], p, t), z[nz:]])
                    x, z = self._event(x, z, p, t, sides, None, jumps)
                    chunk = FIRST_CHUNK
                continue
            j, h, i = crossed
            xs += list(seg_x[:, 1:j].T)
            zs += list(seg_z[:, 1:j].T)
            t = float(tout[j - 1]) + h
            x, z = self._state_at(seg_x[:, j - 1], seg_z[:, j - 1], p, float(tout[j - 1]), h, step)
            x, z = self._event(x, z, p, t, sides, i, jumps)
            chunk, located = FIRST_CHUNK, located + 1
            if located > MAX_EVENTS:
                raise SimulationError(
                    f"simulation of {self.functions.model.name}: more than {MAX_EVENTS} "
                    f"events by t = {t:.6g} (chattering between modes?)",
                    time=t,
                )
        n = len(grid)
        return np.array(xs).reshape(n, -1).T, np.array(zs).reshape(n, -1).T

    def _event(
        self,
        x: np.ndarray,
        z: np.ndarray,
        p: np.ndarray,
        t: float,
        sides: Sides,
        crossing: int | None,
        jumps: EventSensitivities | None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The event at ``t``, located on ``crossing`` (None: a time event): the crossings
        that fired take their new sides, then event iteration, and the sensitivities
        (states past ``nx`` in ``x``, past ``nz`` in ``z``) jump; the modes that changed go
        into the log."""
        nx, nz = self.nx, self.nz
        base_x, base_z = x[:nx], z[:nz]
        before = base_x[self.first :].copy()
        if crossing is not None:
            sides.cross(crossing, self._crossings(base_x, base_z, p, t))
        rounds: list = []
        new_x, new_z = self.iterate(base_x, base_z, p, t, sides, rounds)
        names = self.functions.model.modes
        changed = {n: float(v) for n, v, b in zip(names, new_x[self.first :], before) if v != b}
        if changed:  # a crossing can also end where nothing changes (a touch)
            self.log.append((t, changed))
        if jumps is None:
            return new_x, new_z
        k = (len(x) - nx) // nx if nx else 0
        S, R = x[nx:].reshape(nx, k, order="F"), z[nz:].reshape(nz, k, order="F")
        S, R = jumps.jump(crossing, (base_x, base_z, p, t), rounds, S, R)
        return np.concatenate([new_x, S.ravel("F")]), np.concatenate([new_z, R.ravel("F")])

    def _first_crossing(
        self,
        seg_x: np.ndarray,
        seg_z: np.ndarray,
        p: np.ndarray,
        tout: np.ndarray,
        sides: Sides,
    ) -> tuple[int, float, int] | None:
        """``(j, h, i)``: the first output interval ``(tout[j-1], tout[j]]`` where a
        crossing fires, the located event time ``tout[j-1] + h`` and the crossing ``i``
        located first; None if none fires."""
        prev = None
        # every output time at once (one mapped call into numpy buffers), then in order
        args = [seg_x[: self.nx], seg_z[: self.nz], p, np.reshape(tout, (1, -1))]
        (every,) = mapped_call(self.cross, args, 1, self._mapped, "crossings")
        for j in range(len(tout)):
            c = every[:, j]
            fired = np.nonzero(sides.fired(c))[0]
            if prev is not None and fired.size:
                target = sides.target(c)
                span, ta = tout[j] - tout[j - 1], float(tout[j - 1])
                xa, za = seg_x[: self.nx, j - 1], seg_z[: self.nz, j - 1]
                found = [
                    (
                        self._locate(
                            i, xa, za, p, ta, prev[i] - target[i], c[i] - target[i], target[i], span
                        ),
                        i,
                    )
                    for i in fired
                ]
                h, i = min(found)
                return j, h, int(i)
            sides.seen(c)
            prev = c
        return None
