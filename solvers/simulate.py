"""``simulate(model, t_end, ...)``: initialize, integrate, package a :class:`Result`.

The CasADi functions of a simulation (initializer, IDAS for one grid, tolerances and set
of breakpoints) live in a :class:`~solvers.Simulator`, which belongs to whoever asked for
it: nothing is kept between calls by this module. ``simulate(model, ...)`` alone builds one
for the call. To simulate one compiled model many times (a sweep, a fit, a Monte Carlo
loop), hold a :class:`Simulations` and pass it::

    sims = solvers.Simulations()          # the KEPT_SIMULATORS most recently used
    for R in values:
        res = simulate(model, t_end=10.0, params={"R1.R": R}, simulators=sims)

The calls after the first then reuse the simulator (other parameter values need no new
functions). Building one costs about as much as a short run: a repeated ``simulate`` of
the Cauer filter's step response or of the 300-stage RC ladder takes 2 to 3 times as long
without ``simulators=`` as with it (``bench/repeat_simulate.py``). Pass a
compiled model (``ac.compile(system)``): a System is compiled anew on every call.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import ItemsView, Iterator, Mapping, MutableMapping, Sequence, ValuesView
from numbers import Integral, Real

import numpy as np

import acausal as ac
from acausal.errors import OptionError, unknown_name
from acausal.gc_pause import paused_gc

from .functions import DAEFunctions
from .initialize import build_initializer
from .integrate import MAX_STEPS, Simulator
from .result import Result

#: How many simulators a :class:`Simulations` keeps unless told otherwise.
KEPT_SIMULATORS = 8


class Simulations(MutableMapping):
    """A caller's simulators: the ``capacity`` most recently used are kept, the least
    recently used dropped beyond that. Pass it as ``simulate(..., simulators=)``; its keys
    are :func:`simulator`'s (the model's ``id``, the grid, the tolerances, the
    breakpoints; a simulator holds its model, so no other model can take that ``id`` while
    it is kept). Any dict of yours does the same, unbounded."""

    def __init__(self, capacity: int = KEPT_SIMULATORS) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise OptionError(f"Simulations(capacity={capacity!r}): give an int >= 1")
        self.capacity = capacity
        self._kept: OrderedDict[tuple, Simulator] = OrderedDict()

    def __getitem__(self, key: tuple) -> Simulator:
        sim = self._kept[key]
        self._kept.move_to_end(key)
        return sim

    def __setitem__(self, key: tuple, sim: Simulator) -> None:
        self._kept[key] = sim
        self._kept.move_to_end(key)
        while len(self._kept) > self.capacity:
            self._kept.popitem(last=False)

    def __delitem__(self, key: tuple) -> None:
        del self._kept[key]

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def values(self) -> ValuesView[Simulator]:
        """The simulators, least recently used first (looking does not use them)."""
        return self._kept.values()

    def items(self) -> ItemsView[tuple, Simulator]:
        return self._kept.items()


def as_model(model: ac.System | ac.Model) -> ac.Model:
    """``model`` if compiled, else ``ac.compile(model)``; anything else is an error."""
    if isinstance(model, ac.Model):
        return model
    if isinstance(model, ac.System):
        return ac.compile(model)
    raise OptionError(
        f"expected an ac.Model (from ac.compile) or an ac.System, got {type(model).__name__}"
    )


def simulator(
    model: ac.Model,
    grid: np.ndarray,
    rtol: float,
    atol: float,
    p: np.ndarray,
    simulators: MutableMapping | None = None,
    max_steps: int = MAX_STEPS,
) -> Simulator:
    """The :class:`Simulator` of ``model`` for this grid, these tolerances and the
    breakpoints (times of known discontinuities, e.g. a step's start time) the parameters
    ``p`` give: from ``simulators`` (a :class:`Simulations` or a dict of the caller's, kept
    as long as the caller keeps it) when it holds one, else a new one, put there (sharing
    the model's :class:`DAEFunctions` with a simulator of it there). Without
    ``simulators`` the new one is the caller's alone."""
    breakpoints = model.breakpoint_times(p, float(grid[0]), float(grid[-1]))
    key = (id(model), grid.tobytes(), rtol, atol, max_steps, breakpoints)
    cache = {} if simulators is None else simulators
    sim = cache.get(key)
    if sim is None:
        # another grid or tolerances: the model's functions (and how results are read)
        # come from a simulator of the same model when there is one
        functions = next((s.functions for s in cache.values() if s.model is model), None)
        with paused_gc():  # many small objects that live on: no point scanning them meanwhile
            sim = Simulator(
                model, grid, rtol, atol, max_steps, breakpoints=breakpoints, functions=functions
            )
        cache[key] = sim
    return sim


def initial_values(
    model: ac.Model, t0: float = 0.0, params: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Every named variable at consistent initial values at ``t0`` (Newton from the
    model's start values; fixed starts on variables the model determines are checked, but
    not that Newton converged)."""
    p = np.asarray(model.parameter_vector(params), dtype=float)
    init = build_initializer(model, t0)
    x0, z0 = (v.full().ravel() for v in init.fun(p))
    init.redundant.check(x0, z0, p)
    values = DAEFunctions(model).outputs(x0, z0, p, t0).full().ravel()
    return dict(zip(model.names, values.tolist()))


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise OptionError(f"{name} = {value!r} must be a number, got {type(value).__name__}")
    return float(value)


def output_grid(
    t_end: float, dt: float | None, t_start: float, grid: Sequence[float] | None
) -> np.ndarray:
    """The output times: ``grid`` if given, else ``t_start, t_start + dt, ..., t_end``."""
    t_start = _number("t_start", t_start)
    if grid is not None:
        try:
            out = np.asarray(grid, dtype=float).ravel()
        except (TypeError, ValueError):
            raise OptionError(f"grid must be a sequence of times, got {grid!r:.80}") from None
        if out.size < 2 or not np.all(np.isfinite(out)) or np.any(np.diff(out) <= 0):
            raise OptionError("grid must hold two or more finite, strictly increasing times")
        return out
    t_end = _number("t_end", t_end)
    if not (np.isfinite(t_end) and t_end > t_start):
        raise OptionError(f"t_end = {t_end!r} must be a finite time after t_start = {t_start!r}")
    if dt is None:
        dt = (t_end - t_start) / 500
    dt = _number("dt", dt)
    if not (np.isfinite(dt) and dt > 0):
        raise OptionError(f"dt = {dt!r} must be a positive time step")
    n = int(round((t_end - t_start) / dt))
    out = t_start + dt * np.arange(n + 1)
    out[-1] = min(out[-1], t_end) if abs(out[-1] - t_end) < 1e-9 * max(1.0, abs(t_end)) else out[-1]
    if out[-1] < t_end - 1e-9 * max(1.0, abs(t_end)):
        out = np.append(out, t_end)
    return out


def simulate(
    model: ac.Model | ac.System,
    t_end: float | None = None,
    dt: float | None = None,
    *,
    t_start: float = 0.0,
    grid: Sequence[float] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    params: Mapping[str, float] | None = None,
    sensitivities: Sequence[str] = (),
    simulators: MutableMapping | None = None,
    max_steps: int = MAX_STEPS,
) -> Result:
    """Simulate ``model`` (compiled by ``ac.compile``; a System is compiled first) from
    ``t_start`` to ``t_end`` with outputs every ``dt``.

    ``params`` overrides the model's parameter values by name without recompiling;
    ``sensitivities`` names parameters whose forward sensitivities ``d y / d p`` the result
    keeps for every variable ``y`` (``result.sensitivity("C1.v", "R1.R")``);
    ``simulators``: a :class:`Simulations` (or a dict) of yours that keeps the simulators
    (CasADi functions) this call builds or reuses, for repeated calls (module docstring);
    without it the call builds its own and keeps nothing; ``max_steps``: the IDAS steps
    allowed within one output interval before the run fails (SUNDIALS' ``mxstep``).
    """
    model = as_model(model)
    if grid is None and t_end is None:
        raise OptionError("simulate needs t_end (and optionally dt) or an explicit grid")
    times = output_grid(t_end if t_end is not None else 0.0, dt, t_start, grid)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if not (np.isfinite(_number(name, tol)) and tol > 0):
            raise OptionError(f"{name} = {tol!r} must be a positive tolerance")
    if isinstance(max_steps, bool) or not isinstance(max_steps, Integral) or max_steps < 1:
        raise OptionError(f"max_steps = {max_steps!r} must be a positive whole number")
    if isinstance(sensitivities, str):
        sensitivities = (sensitivities,)
    p = np.asarray(model.parameter_vector(params), dtype=float)
    sim = simulator(model, times, float(rtol), float(atol), p, simulators, int(max_steps))
    p = sim.settle(p)
    sens = {}
    if sensitivities:
        names = list(model.parameters)
        which = []
        for s in sensitivities:
            if s not in model.parameters:
                raise unknown_name("parameter", s, names)
            which.append(names.index(s))
        x, z, dx, dz = sim.sensitivities(p, which)  # the states from the same run
        sens = {s: (dx[:, :, k], dz[:, :, k]) for k, s in enumerate(sensitivities)}
    elif sim.dynamic is not None:
        x, z, values = sim.run_switching(p)
        result = Result(model, times, x, z, p, functions=sim.functions, values=values)
        result.state_switches = list(sim.dynamic.switches)
        return result
    else:
        x, z = sim.run(p)
    events = list(sim.events.log) if sim.events is not None else []
    return Result(model, times, x, z, p, sens, events, functions=sim.functions)
