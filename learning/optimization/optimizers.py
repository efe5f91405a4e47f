"""The learners' optimizers: mini-batch Adam, and the full-batch refinements after it
(L-BFGS-B, least squares by scipy, Levenberg-Marquardt for tall problems), each with one
options type checked once.

- :class:`AdamOptions` and :func:`adam_epochs`: Adam (Kingma and Ba) over shuffled
  mini-batches, the step ``q -= lr m^ / (sqrt(v^) + 1e-8)`` with the bias-corrected first and
  second moments ``m^ = m / (1 - beta1^k)``, ``v^ = v / (1 - beta2^k)`` of the gradient
  (``beta1 = 0.9``, ``beta2 = 0.999``), ``q`` clipped to its bounds after each step, ``lr``
  multiplied by ``decay`` after each epoch; the best-scoring epoch is kept
  (:func:`learning.train`, :func:`learning.train_lagrangian`,
  :func:`learning.reduce_mechanism`).
- :class:`Polish` and :func:`polish_options`: the ``polish=`` option (method, budget,
  tolerance) of :func:`learning.train` and :func:`learning.train_lagrangian`.
- :func:`lbfgs`: L-BFGS-B on a loss ``L(q)`` with its gradient, within bounds.
- :func:`least_squares`: ``min |r(q)|^2`` by scipy's trust-region reflective method (bounds)
  or MINPACK's Levenberg-Marquardt, with the exact Jacobian and columns scaled by it
  (:func:`learning.train`, :func:`learning.fit_equations`).
- :func:`tall_least_squares`: the same without bounds by
  :mod:`learning.optimization.levenberg_marquardt` (one QR per Jacobian;
  :func:`learning.train_lagrangian`).
"""

from __future__ import annotations

import sys
import time as _time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any, NamedTuple

import numpy as np
import scipy.optimize as so

from acausal.errors import OptionError, unknown_name
from solvers.progress import check_progress

from ..core import FitProgress, blas_threads, check_count, check_positive, progress_sink
from .levenberg_marquardt import levenberg_marquardt
from .result import FitResult

Bounds = tuple[np.ndarray | float, np.ndarray | float]
Residuals = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class AdamOptions:
    """The mini-batch Adam loop's options: ``epochs`` passes over the samples, ``batch``
    samples per step, learning rate ``lr`` (multiplied by ``decay`` after each epoch), the
    shuffle's ``seed``, and ``patience`` (stop after that many epochs without a better
    score; None: never)."""

    epochs: int
    batch: int
    lr: float
    decay: float
    seed: int
    patience: int | None
    where: str = "train"  # the learner, for its epoch reports

    @classmethod
    def checked(
        cls,
        where: str,
        progress: object,
        epochs: Any,
        batch: Any,
        lr: Any,
        decay: Any,
        seed: Any,
        patience: Any,
    ) -> AdamOptions:
        """The options of ``where`` (a learner's name, for the messages), checked with its
        epoch reports' ``progress`` (:func:`solvers.progress.check_progress`): ``epochs`` an
        integer >= 0, ``batch`` one >= 1, ``lr > 0`` (Adam moves each parameter by about
        ``lr`` per step; ``lr <= 0`` climbs the loss or stands still), ``decay`` in
        ``(0, 1]``, ``patience`` None or an integer >= 1."""
        check_progress(progress, where)
        check_count(where, "epochs", epochs, minimum=0, hint="0 keeps the start")
        check_count(where, "batch", batch, hint="the samples (windows) per Adam step")
        check_positive(where, "lr", lr, hint="Adam's step size, e.g. lr=1e-3")
        check_positive(
            where,
            "decay",
            decay,
            at_most=1.0,
            hint="the factor on lr after each epoch (1: constant)",
        )
        if patience is not None:
            check_count(where, "patience", patience, hint="or None: no early stopping")
        return cls(epochs, batch, lr, decay, seed, patience, where)


class Adam:
    """Adam's update ``q -= lr m^ / (sqrt(v^) + eps)`` with bias-corrected moments."""

    def __init__(self, size: int, lr: float, beta1: float = 0.9, beta2: float = 0.999) -> None:
        self.m, self.v = np.zeros(size), np.zeros(size)
        self.lr, self.beta1, self.beta2, self.k = lr, beta1, beta2, 0

    def step(self, q: np.ndarray, grad: np.ndarray) -> np.ndarray:
        self.k += 1
        b1, b2 = self.beta1, self.beta2
        self.m = b1 * self.m + (1 - b1) * grad
        self.v = b2 * self.v + (1 - b2) * grad**2
        m_hat, v_hat = self.m / (1 - b1**self.k), self.v / (1 - b2**self.k)
        return q - self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


class AdamRun(NamedTuple):
    """What :func:`adam_epochs` found: the best ``x``, the training loss per epoch
    (``history``) and the scores (``checked``, the start's first)."""

    x: np.ndarray
    history: list[float]
    checked: list[float]

    def message(self, losses: Mapping[str, float] | None = None) -> str:
        """``"<n> epochs of Adam"``, then ``" on <kinds>"`` for the nonzero ``losses``."""
        kinds = ", ".join(k for k in losses or {} if losses[k])
        return f"{len(self.history)} epochs of Adam" + (f" on {kinds}" if kinds else "")

    def result(
        self,
        params: dict[str, float],
        weights: dict[str, dict[str, float]],
        loss: float,
        message: str,
        method: str,
        start: dict[str, float],
        tic: float,
        **more: Any,
    ) -> FitResult:
        """The learner's :class:`~learning.FitResult` after this run (and its polish): the
        epochs' losses and scores as its histories, no simulation, the wall time since
        ``tic``; ``more``: the result's other fields (``models``, ``systems``,
        ``uncertainty``)."""
        return FitResult(
            params=params,
            weights=weights,
            loss=loss,
            loss_history=self.history,
            n_simulations=0,
            n_failed=0,
            wall_time=_time.perf_counter() - tic,
            success=True,
            message=message,
            method=method,
            start=start,
            n_iterations=len(self.history),
            validation_history=self.checked,
            **more,
        )


def adam_epochs(
    loss_and_grad: Callable[[np.ndarray, np.ndarray], tuple[float, np.ndarray]],
    count: int,
    q: np.ndarray,
    score: Callable[[np.ndarray], float],
    held: bool,
    options: AdamOptions,
    progress: bool | str | Callable[[FitProgress], None],
    tic: float,
    bounds: Bounds = (-np.inf, np.inf),
) -> AdamRun:
    """Mini-batch Adam over ``count`` samples (windows, points): each epoch visits them in
    a seeded random order, ``batch`` at a time (``loss_and_grad(index, q)``: the batch's
    mean loss and its gradient), clips ``q`` to ``bounds`` after each step and multiplies
    the learning rate by ``decay``. ``score(q)``: the loss on held-out data (``held``:
    then it is each epoch's score) or, without them, on the training data (the start's
    score only; an epoch's score is then its mean training loss). The best-scoring ``q`` is
    returned (the start counts: a run that never improves returns the start), with the
    training losses per epoch and the scores (start first). ``patience``: stop after that
    many epochs without a better score. ``progress``: each epoch's report
    (:func:`reporter`), ``tic`` the time it counts from."""
    report = reporter(progress, options.epochs, options.where)
    start = score(q)
    rng = np.random.default_rng(options.seed)
    opt = Adam(q.size, options.lr)
    lo, hi = bounds
    best, best_q, history, checked, stale = start, q.copy(), [], [start], 0
    for epoch in range(1, options.epochs + 1):
        order = rng.permutation(count)
        total = 0.0
        for i in range(0, count, options.batch):
            index = order[i : i + options.batch]
            loss, grad = loss_and_grad(index, q)
            total += loss * len(index)
            q = np.clip(opt.step(q, grad), lo, hi)
        opt.lr *= options.decay
        history.append(total / count)
        value = score(q) if held else history[-1]
        checked.append(value)
        if value < best:
            best, best_q, stale = value, q.copy(), 0
        else:
            stale += 1
        elapsed = _time.perf_counter() - tic
        report(FitProgress(epoch, epoch, history[-1], best, 0, elapsed, score=value))
        if options.patience is not None and stale >= options.patience:
            break
    return AdamRun(best_q, history, checked)


def reporter(
    progress: bool | str | Callable[[FitProgress], None], epochs: int, where: str = "train"
) -> Callable[[FitProgress], None]:
    """The epoch report ``progress=`` asks for (:func:`.fit_bar.progress_sink`); printed
    lines and the bar name the learner ``where``."""

    def line(info: FitProgress) -> None:
        print(
            f"{where}: epoch {info.iteration:4d}  loss {info.loss:.6g}  "
            f"score {info.score:.6g}  best {info.best:.6g}  {info.elapsed:.1f} s",
            file=sys.stdout,
            flush=True,
        )

    sink = progress_sink(progress, line, epochs, where)
    return sink if sink is not None else (lambda info: None)


@dataclass(frozen=True)
class Polish:
    """A full-batch refinement's options: ``method`` (``"lbfgs"``: L-BFGS-B on the loss,
    ``"least_squares"``: Gauss-Newton-type steps on the residuals), ``max_iter`` (at most
    that many L-BFGS-B iterations, or residual-and-Jacobian evaluations of a least-squares
    method) and ``tol`` (L-BFGS-B: the projected gradient's ``gtol``, with ``ftol = 1e-3
    tol``; least squares: its ``ftol``, ``xtol`` and ``gtol``)."""

    method: str
    max_iter: int
    tol: float


POLISH_KEYS = ("method", "max_iter", "tol")


def polish_options(
    value: bool | str | Mapping[str, Any], who: str, defaults: Mapping[str, Polish]
) -> Polish | None:
    """``polish=`` as a :class:`Polish` (None: no polish). ``value``: False, True (the first
    method of ``defaults``), a method's name, or a dict of ``method``/``max_iter``/``tol``
    (each defaulting to ``defaults``'s, the method to the first one); ``defaults``: the
    methods ``who`` offers with their defaults. The one parser of :func:`learning.train`'s
    and :func:`~learning.train_lagrangian`'s ``polish``."""
    methods = list(defaults)
    if value is False or value is None:
        return None
    if value is True or (isinstance(value, str) and value in defaults):
        return defaults[methods[0] if value is True else value]
    if not isinstance(value, Mapping):
        raise OptionError(
            f"{who}: polish={value!r} is not one of False, True, "
            f"{', '.join(map(repr, methods))} or a dict of {', '.join(POLISH_KEYS)} "
            f"(e.g. polish={{'method': {methods[0]!r}, 'max_iter': 50}})"
        )
    for key in value:
        if key not in POLISH_KEYS:
            raise OptionError(f"{who}: polish= {unknown_name('option', str(key), POLISH_KEYS)}")
    method = value.get("method", methods[0])
    if method not in defaults:
        raise OptionError(
            f"{who}: polish's method={method!r} is not one of {', '.join(map(repr, methods))}"
        )
    base = defaults[method]
    max_iter, tol = value.get("max_iter", base.max_iter), value.get("tol", base.tol)
    if isinstance(max_iter, bool) or not isinstance(max_iter, int | np.integer) or max_iter < 1:
        raise OptionError(f"{who}: polish's max_iter={max_iter!r} must be an integer >= 1")
    if isinstance(tol, bool) or not isinstance(tol, Real) or not 0 < tol < np.inf:
        raise OptionError(f"{who}: polish's tol={tol!r} must be a positive number")
    return Polish(method, int(max_iter), float(tol))


def remember_last(fn: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], Any]:
    """``fn`` that returns its last value again when called with the same point (scipy
    asks for residuals and Jacobian separately; one evaluation computes both)."""
    last: dict[bytes, Any] = {}

    def call(x: np.ndarray) -> Any:
        key = np.asarray(x, dtype=float).tobytes()
        if key not in last:
            last.clear()
            last[key] = fn(x)
        return last[key]

    return call


def lbfgs(
    loss_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    how: Polish,
    bounds: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, str]:
    """``min L(x)`` from ``x0`` within ``bounds`` by L-BFGS-B (``loss_and_grad(x) = (L,
    dL/dx)``): at most ``how.max_iter`` iterations, stopping when the projected gradient is
    below ``how.tol`` or the relative reduction of ``L`` below ``1e-3 how.tol``. Returns the
    point and ``"<n> iterations: <why it stopped>"``."""
    out = so.minimize(
        loss_and_grad,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(*bounds)),
        options={"ftol": 1e-3 * how.tol, "gtol": how.tol, "maxiter": how.max_iter},
    )
    return out.x, f"{out.nit} iterations: {out.message}"


def least_squares(
    residuals: Residuals,
    x0: np.ndarray,
    how: Polish,
    bounds: Bounds = (-np.inf, np.inf),
    method: str = "trf",
) -> tuple[np.ndarray, str]:
    """``min |r(x)|^2`` from ``x0`` (``residuals(x) = (r, dr/dx)``, one evaluation for both)
    by scipy's ``method``: ``"trf"``, the trust-region reflective method within ``bounds``
    (Gauss-Newton steps, which converge where the loss is a long flat valley, e.g. a physical
    parameter against a network), or ``"lm"``, MINPACK's Levenberg-Marquardt (no bounds);
    the variables scaled by the Jacobian's columns, at most ``how.max_iter`` evaluations,
    ``how.tol`` as ``ftol``, ``xtol`` and ``gtol``; OpenBLAS on one thread
    (:func:`~learning.core.thread_limits.blas_threads`). Returns the point and ``"<n>
    Jacobians: <why it stopped>"``."""
    both = remember_last(residuals)
    with blas_threads(1):
        out = so.least_squares(
            lambda x: both(x)[0],
            x0,
            jac=lambda x: both(x)[1],
            bounds=bounds,
            method=method,
            x_scale="jac",
            ftol=how.tol,
            xtol=how.tol,
            gtol=how.tol,
            max_nfev=how.max_iter,
        )
    return out.x, f"{out.njev} Jacobians: {out.message}"


def tall_least_squares(residuals: Residuals, x0: np.ndarray, how: Polish) -> tuple[np.ndarray, str]:
    """``min |r(x)|^2`` from ``x0`` without bounds by
    :func:`~learning.optimization.levenberg_marquardt.levenberg_marquardt` (one QR of each tall
    Jacobian): at most ``how.max_iter`` evaluations of ``residuals(x) = (r, dr/dx)``,
    ``how.tol`` as ``ftol``, ``xtol`` and ``gtol``, OpenBLAS on one thread. Returns the point
    and ``"<n> evaluations: <why it stopped>"``."""
    with blas_threads(1):
        out = levenberg_marquardt(residuals, x0, how.max_iter, how.tol, how.tol, how.tol)
    return out.x, f"{out.nfev} evaluations: {out.message}"
