"""``simulate(system, t_end, ...)``: compile (cached), initialize, integrate, package."""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

import acausal as ac
from acausal.errors import ModelError, unknown_name

from .events import check_no_events
from .integrate import Simulator
from .result import Result

_MODELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def compiled(system: ac.System | ac.Model) -> ac.Model:
    """The compiled model of ``system``, compiled once and cached while the system lives.

    Adding components or connections after a simulation invalidates the cache.
    """
    if isinstance(system, ac.Model):
        return system
    key = (len(system.all_components()), len(system.connections()))
    entry = _MODELS.get(system)
    if entry is None or entry[0] != key:
        entry = (key, ac.compile(system), {})
        _MODELS[system] = entry
    return entry[1]


def _simulator(
    model: ac.Model, grid: np.ndarray, rtol: float, atol: float, p: np.ndarray
) -> Simulator:
    """The cached :class:`Simulator` for this grid, these tolerances and the breakpoints
    (times of known discontinuities, e.g. a step's start time) the parameters ``p`` give."""
    cache = model.__dict__.setdefault("_simulators", {})
    breakpoints = model.breakpoint_times(p, float(grid[0]), float(grid[-1]))
    key = (grid.tobytes(), rtol, atol, breakpoints)
    sim = cache.get(key)
    if sim is None:
        if len(cache) > 8:
            cache.clear()
        sim = cache[key] = Simulator(model, grid, rtol, atol, breakpoints=breakpoints)
    return sim


def output_grid(
    t_end: float, dt: float | None, t_start: float, grid: Sequence[float] | None
) -> np.ndarray:
    """The output times: ``grid`` if given, else ``t_start, t_start + dt, ..., t_end``."""
    if grid is not None:
        out = np.asarray(grid, dtype=float).ravel()
        if out.size < 2 or not np.all(np.isfinite(out)) or np.any(np.diff(out) <= 0):
            raise ModelError("grid must hold two or more finite, strictly increasing times")
        return out
    if not (np.isfinite(t_end) and t_end > t_start):
        raise ModelError(f"t_end = {t_end!r} must be a finite time after t_start = {t_start!r}")
    if dt is None:
        dt = (t_end - t_start) / 500
    if not (np.isfinite(dt) and dt > 0):
        raise ModelError(f"dt = {dt!r} must be a positive time step")
    n = int(round((t_end - t_start) / dt))
    out = t_start + dt * np.arange(n + 1)
    out[-1] = min(out[-1], t_end) if abs(out[-1] - t_end) < 1e-9 * max(1.0, abs(t_end)) else out[-1]
    if out[-1] < t_end - 1e-9 * max(1.0, abs(t_end)):
        out = np.append(out, t_end)
    return out


def simulate(
    system: ac.System | ac.Model,
    t_end: float | None = None,
    dt: float | None = None,
    *,
    t_start: float = 0.0,
    grid: Sequence[float] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    params: dict[str, float] | None = None,
    sensitivities: Sequence[str] = (),
) -> Result:
    """Simulate ``system`` from ``t_start`` to ``t_end`` with outputs every ``dt``.

    ``params`` overrides parameter values by name without recompiling; ``sensitivities``
    names parameters whose forward sensitivities ``d y / d p`` the result keeps for every
    variable ``y`` (``result.sensitivity("C1.v", "R1.R")``).
    """
    model = compiled(system)
    if grid is None and t_end is None:
        raise ModelError("simulate needs t_end (and optionally dt) or an explicit grid")
    times = output_grid(t_end if t_end is not None else 0.0, dt, t_start, grid)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(tol) and tol > 0):
            raise ModelError(f"{name} = {tol!r} must be a positive tolerance")
    p = np.asarray(model.parameter_vector(params), dtype=float)
    sim = _simulator(model, times, rtol, atol, p)
    p = sim.settle(p)
    sens = {}
    if sensitivities:
        names = list(model.parameters)
        which = []
        for s in sensitivities:
            if s not in model.parameters:
                raise unknown_name("parameter", s, names)
            which.append(names.index(s))
        check_no_events(sim)
        x, z, dx, dz = sim.sensitivities(p, which)  # the states from the same run
        sens = {s: (dx[:, :, k], dz[:, :, k]) for k, s in enumerate(sensitivities)}
    else:
        x, z = sim.run(p)
    events = sim.events.log if sim.events is not None else []
    return Result(model, times, x, z, p, sens, events)
