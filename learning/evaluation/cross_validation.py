"""Evaluating trained models on whole trajectories: free-run errors and cross-validation
over trajectories (leave-one-out or k-fold), each fold trained by :func:`~learning.train`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import acausal as ac
from acausal.errors import OptionError

from ..core import Experiment, as_list
from ..optimization import FitResult
from ..training import compiled, predict, train


def free_run_rmse(
    model: ac.Model | ac.System,
    trajectories: Experiment | Sequence[Experiment] | Sequence[Mapping[str, Any]],
    state: str,
    inputs: Mapping[str, str] | None = None,
    params: Mapping[str, float] | None = None,
    scheme: str = "rk4",
) -> list[float]:
    """The root-mean-square error of ``state`` in a free run (:func:`predict`) of each
    trajectory (experiment) from its first sample."""
    model = model if isinstance(model, ac.Model) else compiled(model, "free_run_rmse")[0]
    check_state(model, state, "free_run_rmse")
    out = []
    for data in as_list(trajectories, "free_run_rmse", "trajectories"):
        pred = predict(model, data, inputs, params, scheme)
        out.append(float(np.sqrt(np.mean((pred[state] - np.asarray(data[state])) ** 2))))
    return out


def check_state(model: ac.Model, state: str, who: str) -> None:
    """An error naming ``state`` unless it is a state of ``model`` (under any of its names,
    :meth:`acausal.Model.names_of`): a free run predicts the states only."""
    names = [n for s in model.states for n in model.names_of(s)]
    if state not in names:
        raise OptionError(
            f"{who}: state={state!r} is not a state of {model.name}; a free run predicts "
            f"the states {', '.join(map(repr, names))}"
        )


@dataclass(frozen=True)
class CrossValidation:
    """Per fold: the held-out trajectories (indices), the fit on the others, and the
    free-run RMSE of ``state`` on each held-out trajectory."""

    state: str
    held_out: tuple[tuple[int, ...], ...]
    fits: tuple[FitResult, ...]
    rmse: tuple[tuple[float, ...], ...]

    @property
    def mean_rmse(self) -> float:
        """The mean over every held-out trajectory of every fold."""
        return float(np.mean([e for fold in self.rmse for e in fold]))

    def __str__(self) -> str:
        lines = [f"cross-validation: free-run RMSE of {self.state}, mean {self.mean_rmse:.6g}"]
        for k, (idx, err) in enumerate(zip(self.held_out, self.rmse)):
            cells = ", ".join(f"#{i}: {e:.4g}" for i, e in zip(idx, err))
            lines.append(f"  fold {k + 1}: {cells}")
        return "\n".join(lines)


def fold_groups(n: int, folds: int | None, seed: int = 0) -> list[tuple[int, ...]]:
    """The held-out trajectories of each fold: one each (``folds=None``, leave-one-out), or
    ``folds`` groups of a seeded random permutation of ``range(n)``."""
    k = n if folds is None else int(folds)
    if not 2 <= k <= n:
        raise OptionError(f"cross-validation: folds={folds} must be between 2 and {n}")
    order = np.random.default_rng(seed).permutation(n) if folds is not None else np.arange(n)
    return [tuple(sorted(int(i) for i in part)) for part in np.array_split(order, k)]


def cross_validate(
    system: ac.System | ac.Model,
    trajectories: Sequence[Experiment] | Sequence[Mapping[str, Any]],
    state: str,
    *,
    folds: int | None = None,
    seed: int = 0,
    inputs: Mapping[str, str] | None = None,
    scheme: str = "rk4",
    **options: Any,
) -> CrossValidation:
    """Leave-one-out (``folds=None``) or ``folds``-fold cross-validation over trajectories:
    :func:`train` on all but the held-out ones (``options`` are its keywords), then the
    free-run RMSE of ``state`` on each held-out trajectory. ``trajectories``:
    :class:`~learning.Experiment` values (``inputs`` then stays empty) or dicts, as
    :func:`train` takes them."""
    trajectories = as_list(trajectories, "cross_validate", "trajectories")
    model = system if isinstance(system, ac.Model) else compiled(system, "cross_validate")[0]
    check_state(model, state, "cross_validate")
    groups = fold_groups(len(trajectories), folds, seed)
    fits, errors = [], []
    for held in groups:
        rest = [d for i, d in enumerate(trajectories) if i not in held]
        fit = train(system, rest, inputs=inputs, scheme=scheme, **options)
        out = [trajectories[i] for i in held]
        fits.append(fit)
        errors.append(tuple(free_run_rmse(fit.model, out, state, inputs, None, scheme)))
    return CrossValidation(state, tuple(groups), tuple(fits), tuple(errors))
