"""``simulate_many``: one model simulated for many parameter sets (sweeps, Monte Carlo),
serially, with CasADi's threads, on local processes or on a Dask cluster.

Every member is what :func:`solvers.simulate` gives for its parameters (same grid and
tolerances), whichever executor runs it. Parameters are inputs of the compiled CasADi
functions, so nothing recompiles: a worker builds the model's functions once and then only
receives parameter vectors and returns arrays. Members are sent in chunks (a task is
``chunk`` members; the default gives each worker about four tasks). A member that fails
(initialization, IDAS, a bad parameter value) is reported with its index and message; the
others are kept.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError, unknown_name

from .executors import (
    Shared,
    TaskFailure,
    check_executor,
    describe_executor,
    executor_session,
    run_tasks,
    worker_count,
)
from .progress import Progress, ProgressOption
from .result import Result
from .simulate import as_model, output_grid, simulate, simulator

TASKS_PER_WORKER = 4  # default chunking: about this many tasks per worker

Builder = Callable[[], "ac.System | ac.Model"]


@dataclass(frozen=True)
class BatchResult:
    """Outputs of many simulations of one model.

    ``t``: the output times; ``outputs``: ``{name: array (members, len(t))}`` (a failed
    member's row is nan); ``design``: ``{parameter name: value per member}`` for the
    parameters the members set (the others keep the model's values); ``errors``: ``{member
    index: message}`` for the failed members; ``executor``: where it ran; ``wall_time``: s.
    """

    t: np.ndarray
    outputs: dict[str, np.ndarray]
    design: dict[str, np.ndarray]
    errors: dict[int, str] = field(default_factory=dict)
    executor: str = "serial"
    wall_time: float = 0.0

    @property
    def n_members(self) -> int:
        return len(next(iter(self.design.values()))) if self.design else 0

    @property
    def ok(self) -> np.ndarray:
        """Per member: True when it simulated."""
        good = np.ones(self.n_members, dtype=bool)
        good[list(self.errors)] = False
        return good

    @property
    def failed(self) -> list[int]:
        """Indices of the members that failed, in order."""
        return sorted(self.errors)

    @property
    def throughput(self) -> float:
        """Members per second of wall time."""
        return self.n_members / self.wall_time if self.wall_time > 0 else math.inf

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return self.t
        if name not in self.outputs:
            raise unknown_name("output", name, self.outputs)
        return self.outputs[name]

    def params(self, member: int) -> dict[str, float]:
        """The parameter values member ``member`` set."""
        return {n: float(v[member]) for n, v in self.design.items()}

    def mean(self, name: str) -> np.ndarray:
        """The mean of output ``name`` over the members that simulated, at each time."""
        return np.mean(self[name][self.ok], axis=0)

    def percentile(self, name: str, q: float | Sequence[float]) -> np.ndarray:
        """Percentiles ``q`` (0-100) of output ``name`` over the members that simulated, at
        each time (``(len(q), len(t))`` for several)."""
        return np.percentile(self[name][self.ok], q, axis=0)

    def __str__(self) -> str:
        lines = [
            f"{self.n_members} members ({len(self.errors)} failed) on {self.executor} in "
            f"{self.wall_time:.3g} s ({self.throughput:.4g} members/s); outputs "
            + ", ".join(self.outputs)
        ]
        lines += [f"  member {k}: {self.errors[k]}" for k in self.failed]
        return "\n".join(lines)


@dataclass(frozen=True)
class _Spec:
    """What every member shares: output times, tolerances, outputs, the names set."""

    grid: np.ndarray
    rtol: float
    atol: float
    outputs: tuple[str, ...]
    names: tuple[str, ...]


def _numbers(name: str, values: Sequence[object] | np.ndarray) -> np.ndarray:
    """The members' values of parameter ``name`` as floats; a value that is no number (a
    word, None) is an error naming the parameter and the member."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        flat = np.asarray(values, dtype=object).ravel()
        for k, v in enumerate(flat):
            try:
                float(v)
            except (TypeError, ValueError):
                raise OptionError(
                    f"simulate_many: member {k} of {name} is {v!r:.40}, not a number; give "
                    f"{name} a number (in its SI unit) for every member"
                ) from None
        raise


def _design(
    model: ac.Model, params: Sequence[Mapping[str, float]] | Mapping[str, Sequence[float]]
) -> dict[str, np.ndarray]:
    """``params`` as ``{name: value per member}``: from a dict of equal-length arrays, or
    from a list of dicts (a name a member does not set takes the model's value)."""
    defaults = model.parameters
    if isinstance(params, Mapping):
        design = {}
        for n, v in params.items():
            design[n] = _numbers(n, np.atleast_1d(np.asarray(v, dtype=object)))
            if design[n].ndim != 1:
                raise OptionError(f"simulate_many: params[{n!r}] must be one value per member")
        sizes = {n: v.size for n, v in design.items()}
        if len(set(sizes.values())) > 1:
            raise OptionError(
                f"simulate_many: the parameter arrays have different lengths {sizes}; give "
                "one value per member for each"
            )
    elif isinstance(params, Sequence) and not isinstance(params, str):
        for k, member in enumerate(params):
            if not isinstance(member, Mapping):
                raise OptionError(
                    f"simulate_many: params[{k}] = {member!r:.60} must be a dict "
                    "{parameter name: value}"
                )
        names = list(dict.fromkeys(n for member in params for n in member))
        design = {
            n: _numbers(n, [member.get(n, defaults.get(n, np.nan)) for member in params])
            for n in names
        }
    else:
        raise OptionError(
            "simulate_many: params must be a list of {name: value} dicts (one per member) "
            f"or a dict {{name: array}}; got {type(params).__name__}"
        )
    for n in design:
        if n not in defaults:
            raise unknown_name("parameter", n, defaults)
    if not design or not next(iter(design.values())).size:
        raise OptionError("simulate_many: params holds no members")
    return design


def _simulate_rows(
    model: ac.Model, spec: _Spec, rows: np.ndarray, simulators: dict
) -> tuple[np.ndarray, dict[int, str]]:
    """Each row of ``rows`` (values of ``spec.names``) by :func:`solvers.simulate`:
    outputs ``(rows, outputs, times)`` (nan for a failed row) and ``{row: message}``."""
    values = np.full((len(rows), len(spec.outputs), len(spec.grid)), np.nan)
    errors = {}
    for k, row in enumerate(rows):
        try:
            res = simulate(
                model,
                grid=spec.grid,
                rtol=spec.rtol,
                atol=spec.atol,
                params=dict(zip(spec.names, row.tolist())),
                simulators=simulators,
            )
            values[k] = [res[name] for name in spec.outputs]
        except Exception as exc:  # a member's failure is data, the batch goes on
            errors[k] = TaskFailure.of(exc).message
    return values, errors


def _mappable(sim: object) -> bool:
    """Whether ``sim`` is one CasADi function ``p -> (X, Z)`` (no events, no state switching)."""
    return (
        getattr(sim, "events", None) is None
        and getattr(sim, "dynamic", None) is None
        and isinstance(getattr(sim, "sim", None), cs.Function)
    )


def _simulate_mapped(
    model: ac.Model, spec: _Spec, rows: np.ndarray, simulators: dict, threads: int
) -> tuple[np.ndarray, dict[int, str]]:
    """The rows with the simulator's function ``p -> (X, Z)`` (consistent initialization
    and IDAS) evaluated for all of them in one call, ``Function.map(n, "thread", threads)``.

    Members are grouped by simulator (the breakpoints, e.g. a step's time, may depend on the
    parameters); each member's initial values are computed first (a member that cannot start
    gets its :class:`~acausal.InitializationError`). A group whose mapped call fails, a
    member whose solution is not finite or whose mapped start differs from those initial
    values (Newton inside the mapped call did not find the start the simulator's fallbacks
    did), and models with events or state switching, go through :func:`_simulate_rows`,
    which gives each failing member its own message."""
    values = np.full((len(rows), len(spec.outputs), len(spec.grid)), np.nan)
    errors: dict[int, str] = {}
    groups: dict[int, tuple[object, list[int]]] = {}  # by simulator
    vectors, starts = {}, {}
    for k, row in enumerate(rows):
        try:
            p = np.asarray(model.parameter_vector(dict(zip(spec.names, row.tolist()))), float)
            sim = simulator(model, spec.grid, spec.rtol, spec.atol, p, simulators)
            start = sim.initial_values(p)[0] if _mappable(sim) else None
        except Exception as exc:
            errors[k] = TaskFailure.of(exc).message
            continue
        vectors[k], starts[k] = p, start
        groups.setdefault(id(sim), (sim, []))[1].append(k)
    redo: list[int] = []
    for sim, members in groups.values():
        P = np.column_stack([vectors[k] for k in members])
        if not _mappable(sim):
            redo += members
            continue
        try:
            X, Z = (np.asarray(a) for a in sim.sim.map(len(members), "thread", threads)(P))
        except RuntimeError:  # one member failed inside the call: each on its own
            redo += members
            continue
        n = len(spec.grid)
        for j, k in enumerate(members):
            x, z = X[:, j * n : (j + 1) * n], Z[:, j * n : (j + 1) * n]
            finite = np.all(np.isfinite(x)) and np.all(np.isfinite(z))
            if not (finite and np.allclose(x[:, 0], starts[k], rtol=1e-10, atol=1e-12)):
                redo.append(k)  # not the single run's start (a damped fallback's): alone
                continue
            res = Result(model, spec.grid, x, z, P[:, j], functions=sim.functions)
            values[k] = [res[name] for name in spec.outputs]
    if redo:
        again, failed = _simulate_rows(model, spec, rows[redo], simulators)
        values[redo] = again
        errors |= {redo[j]: message for j, message in failed.items()}
    return values, errors


def _load(payload: object) -> ac.Model:
    """The model a worker simulates: a compiled model, or what a builder returns, compiled."""
    if isinstance(payload, ac.Model | ac.System):
        return as_model(payload)
    built = payload()
    if not isinstance(built, ac.Model | ac.System):
        raise OptionError(
            f"the builder {getattr(payload, '__name__', payload)!r} returned "
            f"{type(built).__name__}, not an ac.System or ac.Model"
        )
    return as_model(built)


def _chunk_task(shared: Shared, item: tuple[_Spec, np.ndarray]) -> tuple[np.ndarray, dict]:
    """A worker's task: a chunk of members of the model in ``shared`` (built and cached
    once per worker process, with its simulators)."""
    payload, cache = shared.value()
    if "model" not in cache:
        cache["model"], cache["simulators"] = _load(payload), {}
    spec, rows = item
    return _simulate_rows(cache["model"], spec, rows, cache["simulators"])


def simulate_many(
    model: ac.Model | ac.System | Builder,
    params: Sequence[Mapping[str, float]] | Mapping[str, Sequence[float]],
    t_end: float | None = None,
    dt: float | None = None,
    *,
    outputs: Sequence[str],
    t_start: float = 0.0,
    grid: Sequence[float] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-8,
    executor: object = None,
    chunk: int | None = None,
    progress: ProgressOption = None,
) -> BatchResult:
    """Simulate ``model`` once per member of ``params`` and keep ``outputs`` (names of
    variables, as in a :class:`~solvers.Result`) on the grid ``t_start, t_start + dt, ...,
    t_end`` (or ``grid``), with IDAS tolerances ``rtol``, ``atol``.

    ``model``: a compiled model, a System (compiled once here), or a module-level function
    returning either (a builder: what process and Dask workers import and call, once each).
    ``params``: ``[{name: value}, ...]`` one dict per member, or ``{name: values}`` equal-
    length arrays (see :mod:`solvers.designs` for grids and random designs). ``executor``:
    ``None``/``"serial"``, ``"threads"`` (each chunk one call of CasADi's ``Function.map``
    with one thread per core; a chunk with a failing member is redone member by member),
    ``"processes"``, a ``concurrent.futures.Executor``, or a ``dask.distributed.Client``
    (see :mod:`solvers.executors`). ``chunk``: members per task (default: about
    :data:`TASKS_PER_WORKER` tasks per worker; with threads, that many mapped calls).
    ``progress``: see :mod:`solvers.progress`.

    Each member equals ``simulate(model, ..., params=member)`` (the threads' mapped call is
    the same CasADi function as a single run, evaluated on other threads).
    """
    tic = time.perf_counter()
    check_executor(executor)
    if isinstance(model, ac.Model | ac.System):
        local = as_model(model)
        payload: object = local
    elif callable(model):
        local, payload = _load(model), model
    else:
        raise OptionError(
            "simulate_many: model must be an ac.Model, an ac.System or a module-level function "
            f"returning one; got {type(model).__name__}"
        )
    if isinstance(outputs, str) or not outputs:
        raise OptionError("simulate_many: outputs must be a list of variable names, e.g. ['C5.v']")
    for name in outputs:
        if name not in local.parameters:
            local.check_name(name)  # an unknown name: the error lists close ones
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if isinstance(tol, bool) or not (isinstance(tol, float | int) and 0 < tol < math.inf):
            raise OptionError(f"simulate_many: {name} = {tol!r} must be a positive tolerance")
    if grid is None and t_end is None:
        raise OptionError("simulate_many needs t_end (and optionally dt) or an explicit grid")
    design = _design(local, params)
    times = output_grid(t_end if t_end is not None else 0.0, dt, t_start, grid)
    spec = _Spec(times, float(rtol), float(atol), tuple(outputs), tuple(design))
    rows = np.column_stack(list(design.values()))
    with executor_session(executor) as executor:
        where = describe_executor(executor)
        values, errors = _run(local, payload, spec, rows, executor, chunk, progress)
    return BatchResult(
        t=times,
        outputs={name: values[:, j, :] for j, name in enumerate(outputs)},
        design=design,
        errors=dict(sorted(errors.items())),
        executor=where,
        wall_time=time.perf_counter() - tic,
    )


def _run(
    model: ac.Model,
    payload: object,
    spec: _Spec,
    rows: np.ndarray,
    executor: object,
    chunk: int | None,
    progress: ProgressOption,
) -> tuple[np.ndarray, dict[int, str]]:
    """The members ``rows`` on ``executor`` in chunks: outputs (members, outputs, times)
    and ``{member: message}``. With ``"threads"`` each chunk is one mapped call here (by
    default :data:`TASKS_PER_WORKER` calls, each giving every thread as many members)."""
    if chunk is not None and (isinstance(chunk, bool) or int(chunk) != chunk or chunk < 1):
        raise OptionError(f"simulate_many: chunk={chunk!r} must be a positive integer")
    workers, mapped = worker_count(executor), check_executor(executor) == "threads"
    per_task = math.ceil(len(rows) / (TASKS_PER_WORKER * workers))
    size = int(chunk) if chunk else per_task * (workers if mapped else 1)  # threads: a round each
    starts = list(range(0, len(rows), size))
    values = np.full((len(rows), len(spec.outputs), len(spec.grid)), np.nan)
    errors: dict[int, str] = {}
    bar = Progress(len(rows), progress, f"simulate_many {model.name}")

    def collect(j: int, outcome: object) -> None:
        block = range(starts[j], min(starts[j] + size, len(rows)))
        if isinstance(outcome, TaskFailure):
            errors.update(dict.fromkeys(block, outcome.message))
        else:
            values[block.start : block.stop] = outcome[0]
            errors.update({block.start + i: m for i, m in outcome[1].items()})
        bar.update(len(block), sum(k in errors for k in block))

    try:
        if mapped:
            simulators: dict = {}
            for j, s in enumerate(starts):
                collect(j, _simulate_mapped(model, spec, rows[s : s + size], simulators, workers))
        else:
            items = [(spec, rows[s : s + size]) for s in starts]
            shared = Shared.of(payload, "the model")
            run_tasks(_chunk_task, shared, items, executor, on_done=collect, name="simulate_many")
    finally:
        bar.close()
    return values, errors
