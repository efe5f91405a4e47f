"""``train(model, trajectories, ...)``: parameters (network weights and physical values)
learned through rollouts of the compiled model, with Adam on mini-batches of windows.

For trajectories ``j`` with measured states ``x_j(t_k)`` and inputs, every window start ``k``
(every ``stride``-th sample) predicts ``N = horizon`` steps ahead from the measured state by
the step map of :mod:`learning.training.rollout`, and the loss
(:mod:`learning.training.rollout_loss`) is the paper's Eq. 9,

    L(p) = 1/(W N) sum_windows sum_{i=1..N} sum_s C_s (x^_s(t_{k+i}) - x_s(t_{k+i}))^2,

with ``C_s = 1 / var(x_s)`` over the training data by default, plus optional penalties
``c mean_k eta(x_k)^2`` of expressions of the model at the windows' measured starts (the
paper's L2 term on a network's non-conservative part). ``N = 1`` is the feedforward
(teacher-forced) model, ``N > 1`` the recurrent one (backpropagation through time). One
CasADi call evaluates a mini-batch of windows (``map`` over windows of the step's
``mapaccum``) with the gradient by reverse mode. Physical parameters are scaled to O(1)
(the optimizer sees ``q = p / |p_0|``) and kept inside ``bounds``; network weights and raw
law parameters are not scaled. Adam (Kingma and Ba; this and the refinements are
:mod:`learning.optimization.optimizers`') runs over shuffled mini-batches for ``epochs``
(learning rate ``lr``, multiplied by ``decay`` after each epoch), keeping the parameters with
the lowest validation loss (windows of held-out trajectories; without them, the training loss) and
stopping after ``patience`` epochs without improvement; then, optionally, a full-batch
refinement: L-BFGS-B on ``L`` (``polish=True`` or ``"lbfgs"``: at most 500 iterations,
``gtol`` 1e-12) or Gauss-Newton-type least squares on the residuals whose squares make ``L``
(``"least_squares"``, scipy's trust-region reflective method with CasADi's Jacobian: at most
200 evaluations, tolerances 1e-12), or a dict naming the budget, ``polish={"method":
"lbfgs", "max_iter": 50, "tol": 1e-8}``
(:func:`~learning.optimization.optimizers.polish_options`). The result is a
:class:`~learning.FitResult` (``method="rollout"``; ``loss_history``: the training loss per
epoch, ``validation_history``: the validation loss).
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError, unknown_name

from ..core import (
    Experiment,
    FitProgress,
    as_list,
    as_records,
    check_count,
    no_params,
    thread_count,
    with_values,
)
from ..laws import unknowns
from ..optimization import (
    AdamOptions,
    AdamRun,
    FitResult,
    Polish,
    Uncertainty,
    adam_epochs,
    from_jacobian,
    lbfgs,
    least_squares,
    polish_options,
)
from .rollout import StepMap, Trajectory
from .rollout_loss import RolloutLoss, Windows


class SampleLoss:
    """``(columns, index, theta) -> (mean over the indexed samples (columns of
    ``columns``) of |r|^2, its gradient)`` for a per-sample residual function
    ``(column, theta) -> r`` (or ``-> (r, g)``: then plus ``sum_j log(mean g_j / gauge_j)^2``
    over the nonzero entries of ``gauge``, gauges fixing what no residual sees), one mapped
    CasADi function per batch size, its samples split over ``threads`` threads (CasADi's
    threaded ``map``, reverse mode included; default every core the process may use)."""

    def __init__(
        self,
        residual: cs.Function,
        size: int,
        gauge: Sequence[float] = (),
        threads: int | None = None,
    ) -> None:
        self.residual, self.size = residual, size
        self.gauge = np.asarray(gauge, dtype=float)
        self.threads = thread_count("SampleLoss", threads)
        self._by_size: dict[int, cs.Function] = {}

    def __call__(
        self, columns: np.ndarray, index: np.ndarray, theta: np.ndarray
    ) -> tuple[float, np.ndarray]:
        count = len(index)
        if count not in self._by_size:
            X = cs.MX.sym("X", columns.shape[0], count)
            th = cs.MX.sym("theta", self.size)
            out = self.residual.map(count, "thread", min(self.threads, count)).call([X, th])
            L = cs.sumsqr(out[0]) / count
            for j in np.flatnonzero(self.gauge):
                L += cs.log(cs.sum2(out[1][j, :]) / count / self.gauge[j]) ** 2
            self._by_size[count] = cs.Function("batch_loss", [X, th], [L, cs.gradient(L, th)])
        L, g = self._by_size[count](columns[:, index], theta)
        return float(L), np.asarray(g).ravel()

    def total(self, columns: np.ndarray, theta: np.ndarray) -> float:
        """The loss over every sample of ``columns``."""
        return self(columns, np.arange(columns.shape[1]), theta)[0]

    def adam(
        self,
        columns: np.ndarray,
        theta: np.ndarray,
        held: np.ndarray | None,
        options: AdamOptions,
        progress: bool | str | Callable[[FitProgress], None],
        tic: float,
    ) -> AdamRun:
        """:func:`~learning.optimization.optimizers.adam_epochs` over the samples ``columns`` from
        ``theta`` (unbounded), scored on the held-out samples ``held`` (without them, the
        training loss)."""
        scored = held if held is not None else columns
        return adam_epochs(
            lambda index, th: self(columns, index, th),
            columns.shape[1],
            theta,
            lambda th: self.total(scored, th),
            held is not None,
            options,
            progress,
            tic,
        )


def compiled(system: ac.System | ac.Model, who: str) -> tuple[ac.Model, ac.System | None]:
    """The compiled model of ``system`` and the system (None when given a model)."""
    if isinstance(system, ac.Model):
        return system, None
    if isinstance(system, ac.System):
        return ac.compile(system), system
    raise OptionError(f"{who}: expected an ac.System or ac.Model, got {type(system).__name__}")


class Trained:
    """The trained parameters of a fit: ``names`` (``params``, default every
    :class:`~learning.Unknown`'s raw parameters, then ``physical``), their positions
    ``trained`` in the model's parameter vector ``p`` (with ``x0`` applied), ``scales``
    (a physical parameter's ``|start|``, else 1: the optimizer sees ``q = p / scale``)
    and the scaled bounds ``lo``, ``hi`` (``bounds`` by name; ``(0, inf)`` for a physical
    parameter that starts positive)."""

    def __init__(
        self,
        model: ac.Model,
        source: ac.System | None,
        params: Sequence[str] | None,
        physical: Sequence[str],
        x0: Mapping[str, float] | None,
        bounds: Mapping[str, tuple[float, float]] | None,
        who: str,
    ) -> None:
        if params is None:
            params = [n for u in unknowns([source]) for n in u.parameter_names()] if source else []
        names = list(dict.fromkeys([*params, *physical]))
        if not names:
            raise OptionError(f"{who}: nothing to fit: no ln.Unknown in the system, no physical=")
        every = list(model.parameters)
        for n in names:
            if n not in model.parameters:
                raise unknown_name("parameter", n, every)
        self.names, self.physical = names, list(physical)
        self.p = np.asarray(model.parameter_vector(dict(x0 or {})), dtype=float)
        self.trained = [every.index(n) for n in names]
        self.scales = np.array(
            [
                abs(self.p[k]) if n in physical and self.p[k] != 0 else 1.0
                for n, k in zip(names, self.trained)
            ]
        )
        self.lo, self.hi = _bounds(names, physical, self.p[self.trained], bounds or {}, self.scales)

    def values(self, q: np.ndarray) -> dict[str, float]:
        """The parameters by name at scaled values ``q``."""
        return dict(zip(self.names, (q * self.scales).tolist()))


def train(
    system: ac.System | ac.Model,
    trajectories: Experiment | Sequence[Experiment] | Sequence[Mapping[str, Any]],
    *,
    fitted: Sequence[str] | None = None,
    physical: Sequence[str] = (),
    inputs: Mapping[str, str] | None = None,
    horizon: int = 1,
    stride: int = 1,
    scheme: str = "rk4",
    state_weights: Mapping[str, float] | None = None,
    epochs: int = 100,
    batch: int = 64,
    lr: float = 1e-3,
    decay: float = 1.0,
    seed: int = 0,
    validation: Experiment | Sequence[Experiment] | Sequence[Mapping[str, Any]] = (),
    patience: int | None = None,
    polish: bool | str | Mapping[str, Any] = False,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    x0: Mapping[str, float] | None = None,
    penalties: Sequence[tuple[cs.SX, float]] = (),
    uncertainty: bool | str = False,
    progress: bool | str | Callable[[FitProgress], None] = True,
    threads: int | None = None,
    params: object = None,  # the names to fit were params=: see checks.no_params
) -> FitResult:
    """Learn ``fitted`` (default: the raw parameters of every :class:`~learning.Unknown`)
    and ``physical`` parameters from measured ``trajectories`` by rollouts (see the module
    docstring).

    ``trajectories`` (and ``validation``): :class:`~learning.Experiment` values (one or a
    sequence) measuring every state of the compiled model (``model.states``), their
    ``inputs`` driving parameters at each step and their ``params`` held at each step
    (so ``inputs=`` stays empty), their weights one number per state (as
    ``state_weights``, which take precedence); or the older list of dicts, each
    ``{"t": uniform times, <state>: values, <input column>: values}``
    with every state of the compiled model (``model.states``) and the columns named in
    ``inputs`` (``{input parameter: column}``, e.g. ``{"motor.tau_constant": "tau"}``:
    that parameter takes the column's sample at each step, zero-order hold).
    ``validation``: held-out trajectories for early stopping. ``bounds``: ``(low, high)``
    by parameter name (physical parameters default to ``(0, inf)`` when they start
    positive). ``x0``: start values by name (default the model's values). ``penalties``:
    ``(expression, c)`` pairs adding ``c mean(expression^2)`` over the windows' measured
    start states, the expression in the model's ``(x, z, p, t)`` (e.g. a non-conservative
    part, ``unknown.part_expressions(model)["nc"]``, the paper's L2 regularization).
    ``uncertainty``: standard errors and correlations of the ``physical`` parameters (of
    all trained ones when there are none) at the result, the laws' parameters profiled out
    as nuisance (:mod:`learning.optimization.uncertainty`, one full-batch Jacobian), for measurement
    noise on the states (``True`` or ``"measurement"``) or process noise (``"process"``);
    feedforward only (``horizon=1``: a longer window's residuals are correlated along it
    by the model's own dynamics, which the formulas do not allow for). ``threads``: threads
    evaluating a batch's windows (default: every core this process may use; the results do
    not depend on it). ``progress``: True prints a line per epoch, ``"bar"`` shows a tqdm
    bar of the epochs, a callable receives each :class:`~learning.FitProgress`.
    """
    no_params("train", params)
    tic = _time.perf_counter()
    adam = AdamOptions.checked("train", progress, epochs, batch, lr, decay, seed, patience)
    check_count("train", "horizon", horizon, hint="the steps each window predicts (1: feedforward)")
    check_count("train", "stride", stride, hint="samples between window starts")
    model, source = compiled(system, "train")
    data = as_list(trajectories, "train", "trajectories")
    both, inputs, weighted = as_records(
        [*data, *as_list(validation, "train", "validation")], model, inputs, "train", "data"
    )
    trajectories, validation = both[: len(data)], both[len(data) :]
    state_weights = {**weighted, **(state_weights or {})}
    polish = polish_options(polish, "train", POLISHES)
    if uncertainty and horizon != 1:
        raise OptionError(
            f"train: uncertainty=True needs horizon=1 (got {horizon}): the residuals of a "
            "recurrent window are correlated along it and the standard errors would be too small"
        )
    threads = thread_count("train", threads)
    trajs, checks = _trajectories(model, trajectories, validation, inputs)
    tp = Trained(model, source, fitted, physical, x0, bounds, "train")
    names, trained, p, scales, lo, hi = tp.names, tp.trained, tp.p, tp.scales, tp.lo, tp.hi
    every = list(model.parameters)
    step = StepMap(model, trajs[0].h, list(inputs), scheme)
    weights = _state_weights(model, trajs, state_weights)
    objective = RolloutLoss(step, horizon, trained, scales, weights[:, None], penalties, threads)
    train_w = Windows(step, trajs, horizon, stride, p)
    check_w = Windows(step, checks, horizon, stride, p) if checks else train_w
    q = p[trained] / scales
    start = dict(zip(names, p[trained].tolist()))
    run = adam_epochs(
        lambda index, q: objective(train_w, index, q, p),
        train_w.count,
        q,
        lambda q: objective.total(check_w, q, p, batch),
        bool(checks),
        adam,
        progress,
        tic,
        (lo, hi),
    )
    q, message = run.x, run.message()
    if polish:
        q, then = _polish(objective, train_w, q, p, batch, polish, (lo, hi))
        message += then
    fitted = dict(zip(names, (q * scales).tolist()))
    spread = (
        _uncertainty(objective, train_w, q, p, batch, names, physical, scales, uncertainty)
        if uncertainty
        else None
    )
    systems = (with_values(source, fitted),) if source is not None else ()
    return run.result(
        fitted,
        {u.full_name: u.weights(fitted) for u in unknowns([source])} if source else {},
        float(objective.total(train_w, q, p, batch)),
        message,
        "rollout",
        start,
        tic,
        models=(model.with_parameters({**dict(zip(every, p.tolist())), **fitted}),),
        systems=systems,
        uncertainty=spread,
    )


def _trajectories(
    model: ac.Model, data: Sequence[Any], validation: Sequence[Any], inputs: Sequence[str]
) -> tuple[list[Trajectory], list[Trajectory]]:
    """The training and the validation trajectories, all on one sample time."""
    trajs = [Trajectory(model, d, inputs) for d in data]
    checks = [Trajectory(model, d, inputs) for d in validation]
    if not trajs:
        raise OptionError("train: give one or more trajectories")
    hs = {round(tr.h, 15) for tr in trajs + checks}
    if len(hs) > 1:
        raise OptionError(f"train: the trajectories have different sample times {sorted(hs)}")
    return trajs, checks


def _state_weights(
    model: ac.Model, trajs: Sequence[Trajectory], given: Mapping[str, float] | None
) -> np.ndarray:
    """``C_s = 1 / var(x_s)`` over the training trajectories (1 for a constant state),
    overridden by the ``given`` weights by state name."""
    x_all = np.hstack([tr.x for tr in trajs])
    var = np.var(x_all, axis=1)
    weights = 1.0 / np.where(var > 0, var, 1.0)
    for s, w in (given or {}).items():
        k = next((model.states.index(n) for n in model.names_of(s) if n in model.states), None)
        if k is None:
            raise unknown_name("state", s, model.states)
        weights[k] = float(w)
    return weights


def _polish(
    objective: RolloutLoss,
    windows: Windows,
    q: np.ndarray,
    p: np.ndarray,
    batch: int,
    how: Polish,
    bounds: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, str]:
    """The full-batch refinement after Adam: least squares on the stacked residuals or
    L-BFGS-B on the loss; the refined point and what ran, for the message."""
    if how.method == "least_squares":
        q, why = least_squares(
            lambda x: objective.stacked(windows, x, p, batch)[:2], q, how, bounds
        )
        return q, f", then least squares ({why})"
    every_window = np.arange(windows.count)
    q, why = lbfgs(lambda x: objective(windows, every_window, x, p), q, how, bounds)
    return q, f", then L-BFGS-B ({why})"


def _uncertainty(
    objective: RolloutLoss,
    windows: Windows,
    q: np.ndarray,
    p: np.ndarray,
    batch: int,
    names: Sequence[str],
    physical: Sequence[str],
    scales: np.ndarray,
    noise: bool | str,
) -> Uncertainty:
    """Standard errors of the reported parameters (``physical``, else all) at ``q``."""
    r, J, (window, kind) = objective.stacked(windows, q, p, batch)
    nuisance = [j for j, n in enumerate(names) if physical and n not in physical]
    shown = [j for j in range(len(names)) if j not in nuisance]
    values = (q * scales)[shown]
    return from_jacobian(
        [names[j] for j in shown],
        values,
        r,
        J,
        nuisance,
        scales,
        (window, kind, windows.linked),
        "measurement" if noise is True else noise,
    )


def _bounds(
    names: Sequence[str],
    physical: Sequence[str],
    values: np.ndarray,
    given: Mapping[str, tuple[float, float]],
    scales: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled lower and upper bounds: ``given`` ones, ``(0, inf)`` for a physical
    parameter that starts positive, else none."""
    for n, pair in given.items():
        if n not in names:
            raise OptionError(
                f"train: bounds name {n!r}, which is not trained ({', '.join(names)})"
            )
        try:
            low, high = (float(v) for v in pair)
        except (TypeError, ValueError):
            low = high = np.nan
        if not low <= high:
            raise OptionError(
                f"train: bounds[{n!r}]={pair!r} must be a pair (low, high) of numbers with "
                "low <= high (-np.inf or np.inf for no bound)"
            )
    lo, hi = np.full(len(names), -np.inf), np.full(len(names), np.inf)
    for j, n in enumerate(names):
        if n in given:
            lo[j], hi[j] = given[n]
        elif n in physical and values[j] > 0:
            lo[j] = 0.0
        if not lo[j] <= values[j] <= hi[j]:
            raise OptionError(f"train: the start value {values[j]:g} of {n} is outside its bounds")
    return lo / scales, hi / scales


POLISHES = {
    "lbfgs": Polish("lbfgs", 500, 1e-12),
    "least_squares": Polish("least_squares", 200, 1e-12),
}
