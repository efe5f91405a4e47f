"""Many fits as independent tasks on one executor (:mod:`solvers.executors`): multi-start
(the same fit from ``n_starts`` seeded starts) and cross-validation over trajectories (one
:func:`~learning.train` per fold), serially, on local processes or on a Dask cluster.

Cross-validation comes for both kinds of fit: :func:`cross_validate_many` folds rollout
training (:func:`~learning.train`, as :func:`~learning.cross_validate` does serially) over
trajectories, :func:`cross_validate_experiments` folds the output-error fit
(:func:`~learning.fit`) over ``(system, data)`` experiments. The system, the data and the
fit's options travel to each worker once; a task receives its start values and seed (or
its held-out trajectories) and returns a :class:`FitResult`. A fit
that raises, or whose worker dies, is reported by its index with the message; the others
are kept. The result has the best fit and the spread of the others.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import acausal as ac
from acausal.errors import OptionError
from solvers import (
    Progress,
    ProgressOption,
    Shared,
    TaskFailure,
    describe_executor,
    executor_session,
    run_tasks,
    simulate,
)

from ..core import Experiment, as_list, as_pairs
from ..fitting import fit
from ..laws import unknowns
from ..optimization import FitResult
from ..training import compiled, train
from .cross_validation import CrossValidation, fold_groups, free_run_rmse

Fitter = Callable[..., FitResult]
SystemOrBuilder = ac.System | ac.Model | Callable[[], ac.System | ac.Model]


@dataclass(frozen=True)
class ManyFits:
    """Independent fits of one problem. ``labels``: what each task was (``"start 3 (seed
    3)"``, ``"fold 2: held out (4, 7)"``); ``fits``: its :class:`FitResult` (None where it
    failed); ``scores``: what ranks them (the fit's loss for multi-start; the mean held-out
    free-run RMSE for cross-validation; nan where failed); ``errors``: ``{index: message}``;
    for cross-validation ``held_out`` and ``rmse`` per fold (as :class:`CrossValidation`)."""

    labels: tuple[str, ...]
    fits: tuple[FitResult | None, ...]
    scores: np.ndarray
    errors: dict[int, str] = field(default_factory=dict)
    held_out: tuple[tuple[int, ...], ...] = ()
    rmse: tuple[tuple[float, ...], ...] = ()
    state: str = ""
    executor: str = "serial"
    wall_time: float = 0.0

    @property
    def best_index(self) -> int:
        """The task with the lowest score."""
        if not np.any(np.isfinite(self.scores)):
            raise ValueError(f"no fit succeeded:\n{self}")
        return int(np.nanargmin(np.where(np.isfinite(self.scores), self.scores, np.nan)))

    @property
    def best(self) -> FitResult:
        """The fit with the lowest score."""
        return self.fits[self.best_index]

    def spread(self) -> dict[str, tuple[float, float, float, float]]:
        """Per fitted parameter, over the fits that succeeded: (min, median, max, standard
        deviation)."""
        done = [f for f in self.fits if f is not None]
        if not done:
            return {}
        out = {}
        for name in done[0].params:
            v = np.array([f.params[name] for f in done])
            out[name] = (float(v.min()), float(np.median(v)), float(v.max()), float(v.std()))
        return out

    @property
    def cross_validation(self) -> CrossValidation:
        """The folds as :func:`~learning.cross_validate` gives them (every fold must have run)."""
        if not self.held_out or self.errors:
            raise ValueError(f"not a complete cross-validation:\n{self}")
        return CrossValidation(self.state, self.held_out, tuple(self.fits), self.rmse)

    def __str__(self) -> str:
        ok = np.isfinite(self.scores)
        lines = [
            f"{len(self.fits)} fits ({len(self.errors)} failed) on {self.executor} in "
            f"{self.wall_time:.3g} s"
        ]
        if ok.any():
            s = self.scores[ok]
            lines[0] += (
                f"; score best {s.min():.6g} ({self.labels[self.best_index]}), median "
                f"{np.median(s):.6g}, worst {s.max():.6g}"
            )
        for k, label in enumerate(self.labels):
            what = self.errors.get(k) or f"score {self.scores[k]:.6g}"
            lines.append(f"  {label}: {what}")
        return "\n".join(lines)


def _system(payload: SystemOrBuilder, cache: dict) -> ac.System | ac.Model:
    """The system a worker fits: given, or built once by the builder."""
    if isinstance(payload, ac.System | ac.Model):
        return payload
    if "system" not in cache:
        cache["system"] = payload()
    return cache["system"]


def _start_task(shared: Shared, item: tuple[dict[str, float], int | None]) -> FitResult:
    """A worker's multi-start task: the fit from start values ``x0`` (and ``seed``)."""
    (fitter, system, data, options), cache = shared.value()
    x0, seed = item
    extra = {} if seed is None else {"seed": seed}
    return fitter(_system(system, cache), data, x0=x0, **extra, **options)


def _fold_task(shared: Shared, held: tuple[int, ...]) -> tuple[FitResult, tuple[float, ...]]:
    """A worker's cross-validation fold: :func:`train` on all trajectories but ``held``,
    then the free-run RMSE of the state on each held-out one."""
    (system, trajectories, state, inputs, scheme, options), cache = shared.value()
    rest = [d for i, d in enumerate(trajectories) if i not in held]
    fit = train(_system(system, cache), rest, inputs=inputs, scheme=scheme, **options)
    out = [trajectories[i] for i in held]
    return fit, tuple(free_run_rmse(fit.model, out, state, inputs, None, scheme))


def _experiment_fold_task(
    shared: Shared, held: tuple[int, ...]
) -> tuple[FitResult, tuple[float, ...]]:
    """A worker's output-error fold: :func:`fit` of the experiments but ``held`` jointly,
    then the output RMSE of each held-out experiment."""
    (experiments, options), _ = shared.value()
    rest = [e for i, e in enumerate(experiments) if i not in held]
    result = fit(None, None, experiments=rest, **options)
    t_start = float(options.get("t_start", 0.0))
    return result, tuple(output_rmse(result, *experiments[i], t_start) for i in held)


def output_rmse(
    result: FitResult, system: ac.System, data: Experiment | Mapping[str, Any], t_start: float
) -> float:
    """The root-mean-square difference between ``data``'s measured columns (every name
    but ``"t"``; nan samples skipped; an :class:`~learning.Experiment`'s measured columns,
    masked samples skipped, its ``params`` set) and ``system`` simulated from ``t_start``
    with the fitted values of ``result`` it has (at the fit's tolerances): one number over
    all columns and samples, in their units."""
    system, data, _ = as_pairs(system, data, None, "output_rmse")[0]
    model = ac.compile(system)
    values = {n: v for n, v in result.params.items() if n in model.parameters}
    t = np.asarray(data["t"], dtype=float)
    grid = np.concatenate([[t_start], t[t > t_start]])
    run = simulate(model, grid=grid, params=values, rtol=result.rtol, atol=result.atol)
    errors = [
        np.interp(t, run.t, run[name]) - np.asarray(column, dtype=float)
        for name, column in data.items()
        if name != "t"
    ]
    return float(np.sqrt(np.nanmean(np.square(errors))))


def _fitted_values(system: ac.System | ac.Model, options: Mapping[str, Any]) -> dict[str, float]:
    """The start values of the parameters a fit of ``system`` with ``options`` fits: its
    ``fitted`` (default the raw parameters of every :class:`~learning.Unknown`) and
    ``physical``, at the model's values overridden by ``x0``."""
    model, source = compiled(system, "multi_start")
    names = options.get("fitted")
    if names is None:
        names = [n for u in unknowns([source]) for n in u.parameter_names()] if source else []
    names = list(dict.fromkeys([*names, *options.get("physical", ())]))
    if not names:
        raise OptionError("multi_start: nothing to fit: no ln.Unknown in the system, no physical=")
    values = dict(model.parameters) | dict(options.get("x0") or {})
    missing = [n for n in names if n not in values]
    if missing:
        model.parameter_vector(dict.fromkeys(missing, 0.0))  # the error names them
    return {n: float(values[n]) for n in names}


def _run(
    fn: Callable,
    payload: tuple,
    items: Sequence[Any],
    executor: object,
    progress: ProgressOption,
) -> tuple[list[Any], dict[int, str], str]:
    """``fn`` on each item: outcomes (None where failed), errors, where it ran."""
    bar = Progress(len(items), progress, "fits")
    errors: dict[int, str] = {}

    def done(k: int, outcome: Any) -> None:
        if isinstance(outcome, TaskFailure):
            errors[k] = outcome.message
        bar.update(1, int(isinstance(outcome, TaskFailure)))

    try:
        with executor_session(executor) as executor:
            shared = Shared.of(payload, "the system, data and options")
            outcomes = run_tasks(fn, shared, items, executor, on_done=done, name="fit")
            where = describe_executor(executor)
    finally:
        bar.close()
    return [None if k in errors else o for k, o in enumerate(outcomes)], errors, where


def multi_start(
    fitter: Fitter,
    system: SystemOrBuilder,
    data: Any,
    *,
    n_starts: int = 8,
    seed: int = 0,
    spread: float = 0.5,
    starts: Sequence[Mapping[str, float]] | None = None,
    executor: object = None,
    progress: ProgressOption = None,
    **options: Any,
) -> ManyFits:
    """``fitter(system, data, x0=start, **options)`` from many starts, each an independent
    task on ``executor``; ranked by the fit's loss (``result.best``).

    ``fitter``: :func:`~learning.fit`, :func:`~learning.train` or another module-level
    function taking ``(system, data, *, x0=, progress=, ...)``; when it takes ``seed`` (as
    :func:`~learning.train` does, for its batch order), start ``k`` gets ``seed + k``.
    ``system``: a system, a compiled model, or a module-level function returning one (what
    workers build once each). Starts: ``starts`` (``x0`` dicts) if given, else start 0 is
    the declared values (``options["x0"]`` over the model's) and start ``k >= 1`` draws each
    fitted parameter ``v`` as ``v exp(spread z)`` (``spread z`` where ``v = 0``), ``z``
    standard normal from ``numpy.random.default_rng(seed + k)``: the laws' raw parameters
    keep their feasibility (their constraints are reparameterizations) and physical ones
    their sign. ``options`` go to ``fitter`` (``progress=False`` unless given)."""
    tic = time.perf_counter()
    if not callable(fitter):
        raise OptionError(f"multi_start: fitter={fitter!r:.60} must be a fit function, e.g. ln.fit")
    local = (
        system() if not isinstance(system, ac.System | ac.Model) and callable(system) else system
    )
    if starts is None:
        if isinstance(n_starts, bool) or not isinstance(n_starts, int) or n_starts < 1:
            raise OptionError(f"multi_start: n_starts={n_starts!r} must be a positive integer")
        if not (isinstance(spread, int | float) and np.isfinite(spread) and spread > 0):
            raise OptionError(
                f"multi_start: spread={spread!r} must be a positive number (the starts are "
                "v exp(spread z), z standard normal: 0.5 spreads them by about a factor 1.6)"
            )
        base = _fitted_values(local, options)
        starts = [base] + [_perturbed(base, spread, seed + k) for k in range(1, n_starts)]
    seeds = range(seed, seed + len(starts))
    seeded = "seed" in inspect.signature(fitter).parameters
    items = [(dict(x0), s if seeded else None) for x0, s in zip(starts, seeds)]
    labels = [f"start {k}" + (f" (seed {s})" if seeded else "") for k, s in enumerate(seeds)]
    options = {k: v for k, v in options.items() if k != "x0"}
    options.setdefault("progress", False)
    fits, errors, where = _run(
        _start_task, (fitter, system, data, options), items, executor, progress
    )
    scores = np.array([np.nan if f is None else f.loss for f in fits])
    return ManyFits(
        tuple(labels),
        tuple(fits),
        scores,
        errors,
        executor=where,
        wall_time=time.perf_counter() - tic,
    )


def _perturbed(base: Mapping[str, float], spread: float, seed: int) -> dict[str, float]:
    z = np.random.default_rng(seed).standard_normal(len(base))
    return {
        n: float(v * np.exp(spread * zk) if v != 0 else spread * zk)
        for (n, v), zk in zip(base.items(), z)
    }


def cross_validate_many(
    system: SystemOrBuilder,
    trajectories: Sequence[Experiment] | Sequence[Mapping[str, Any]],
    state: str,
    *,
    folds: int | None = None,
    seed: int = 0,
    inputs: Mapping[str, str] | None = None,
    scheme: str = "rk4",
    executor: object = None,
    progress: ProgressOption = None,
    **options: Any,
) -> ManyFits:
    """:func:`~learning.cross_validate` with each fold an independent task on ``executor``:
    leave-one-out (``folds=None``) or ``folds``-fold over trajectories (the same folds for
    the same ``seed``), :func:`~learning.train` on the others (``options`` are its keywords,
    ``progress=False`` unless given), scored by the mean free-run RMSE of ``state`` on the
    held-out ones; ``result.cross_validation`` is the :class:`CrossValidation`."""
    tic = time.perf_counter()
    trajectories = as_list(trajectories, "cross_validate_many", "trajectories")
    groups = fold_groups(len(trajectories), folds, seed)
    options.setdefault("progress", False)
    payload = (system, list(trajectories), state, dict(inputs or {}), scheme, options)
    outcomes, errors, where = _run(_fold_task, payload, groups, executor, progress)
    return _folds(groups, outcomes, errors, state, where, tic)


def cross_validate_experiments(
    experiments: Sequence[tuple[ac.System, Experiment | Mapping[str, Any]]],
    *,
    folds: int | None = None,
    seed: int = 0,
    executor: object = None,
    progress: ProgressOption = None,
    **options: Any,
) -> ManyFits:
    """Cross-validation of the output-error fit over experiments, each fold an independent
    task on ``executor``: leave-one-out (``folds=None``) or ``folds``-fold
    (:func:`fold_groups`) over ``(system, data)`` pairs (``data`` an
    :class:`~learning.Experiment` or a dict), :func:`~learning.fit` of the other experiments jointly
    (``options`` are its keywords, ``progress=False`` unless given; ``t_start`` one time),
    scored by :func:`output_rmse` of each held-out experiment (its system simulated with the
    fitted shared values). ``result.rmse`` per fold and held-out experiment, ``scores`` their
    means."""
    tic = time.perf_counter()
    groups = fold_groups(len(experiments), folds, seed)
    if np.ndim(options.get("t_start", 0.0)) != 0:
        raise OptionError("cross_validate_experiments: t_start must be one time for all")
    options.setdefault("progress", False)
    payload = ([(s, d if isinstance(d, Experiment) else dict(d)) for s, d in experiments], options)
    outcomes, errors, where = _run(_experiment_fold_task, payload, groups, executor, progress)
    return _folds(groups, outcomes, errors, "outputs", where, tic)


def _folds(
    groups: Sequence[tuple[int, ...]],
    outcomes: Sequence[Any],
    errors: dict[int, str],
    state: str,
    where: str,
    tic: float,
) -> ManyFits:
    """The folds' outcomes ``(fit, held-out RMSEs)`` as a :class:`ManyFits`."""
    fits = tuple(None if o is None else o[0] for o in outcomes)
    rmse = tuple(() if o is None else o[1] for o in outcomes)
    scores = np.array([np.mean(e) if e else np.nan for e in rmse])
    labels = tuple(f"fold {k + 1}: held out {g}" for k, g in enumerate(groups))
    return ManyFits(
        labels, fits, scores, errors, tuple(groups), rmse, state, where, time.perf_counter() - tic
    )
