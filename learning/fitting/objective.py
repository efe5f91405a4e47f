"""The objective of :func:`learning.fit`: residuals of simulated against measured outputs.

For experiments ``k`` (a system and its data), measured outputs ``j`` and sample times
``t_n``: ``r = sqrt(c_j) (y_kj(t_n; p) - ym_kj(t_n))`` stacked over all finite samples,
``L(p) = ||r||^2``, and ``J = dr/dp`` from IDAS forward sensitivities.

Parameters by name: a plain name (``"mass.m"``) is shared by every experiment whose model
has it; ``"mass.v0@1"`` (:func:`~learning.optimization.result.own_name`) is experiment 1's
own copy of ``mass.v0``.

Simulation tolerances, when not given, follow the data's noise
(:mod:`learning.fitting.tolerances`); after the optimizer stops, the rule is applied again to
the noise the fitted model leaves (:meth:`Objective.refine`), and when that asks for an
``rtol`` over 3 times tighter the fit runs again from its result at those tolerances
(collocation: its result is simulated again).

The optimizer works on a scaled problem (:class:`Scaled`): parameters ``z = p / s_p`` and
residuals ``r / sqrt(L_s)`` (``L_s``: the data's spread, or the start's loss when smaller),
so scipy's absolute tolerances (``gtol``) mean the same in any units.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import acausal as ac
from acausal.errors import (
    InitializationError,
    OptionError,
    ParameterError,
    SimulationError,
)
from solvers import simulate
from solvers.capture import native_stderr

from ..core import check_time
from ..optimization import Failure, split_name
from .tolerances import RTOL_BOUNDS, Tolerances, noise_level, tolerance_rule

FAILURES = (SimulationError, InitializationError, ParameterError, RuntimeError)
PENALTY = 1e3
REFINE = 3.0  # a second pass when the residuals call for an rtol this much tighter


def _numbers(values: Any, what: str) -> np.ndarray:
    """``values`` as a flat float array, or an :class:`OptionError` naming ``what``."""
    if isinstance(values, str):
        values = [values]
    try:
        return np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise OptionError(
            f"fit: {what} holds values that are not numbers (e.g. text); give a numeric "
            "array, one value per sample time"
        ) from None


class ExperimentResiduals:
    """One system with its measured outputs on its output grid; ``columns`` are the
    indices of the fitted values this experiment's model takes, ``pnames`` their names in
    the model (shared names and this experiment's own copies, ``@index`` removed)."""

    def __init__(
        self,
        system: ac.System,
        data: Mapping[str, Any],
        weights: Mapping[str, Any],
        names: Sequence[str],
        index: int,
        t_start: float,
        model: ac.Model | None = None,
    ) -> None:
        self.system = system
        self.model = model if model is not None else ac.compile(system)
        self.simulators: dict = {}  # this experiment's, for the whole fit
        t_key = "t" if "t" in data else "time" if "time" in data else None
        if t_key is None:
            raise OptionError(f"fit: the data for {system.name} need the sample times as 't'")
        t = _numbers(data[t_key], f"data[{t_key!r}] of {system.name}")
        check_time(t, t_key, f"fit ({system.name})")
        if t[0] < t_start:
            raise OptionError(
                f"fit: data of {system.name} start at {t[0]:g} < its t_start {t_start:g}"
            )
        self.offset = int(t[0] > t_start)  # simulate from t_start, compare from t[0]
        self.grid = np.concatenate([[t_start], t]) if self.offset else t
        self.outputs, self.measured, self.masks, self.scales = [], [], [], []
        for name, values in data.items():
            if name == t_key:
                continue
            self.model.check_name(name)
            ym = _numbers(values, f"data[{name!r}] of {system.name}")
            if ym.shape != t.shape:
                raise OptionError(
                    f"fit: data[{name!r}] of {system.name} has {ym.size} samples, t has {t.size}"
                )
            c = np.broadcast_to(np.asarray(weights.get(name, 1.0), dtype=float), t.shape)
            if np.any(c < 0) or not np.all(np.isfinite(c)):
                raise OptionError(f"fit: weights[{name!r}] must be finite and >= 0")
            mask = np.isfinite(ym)  # missing samples (nan) do not count
            if not mask.any():
                raise OptionError(
                    f"fit: data[{name!r}] of {system.name} has no finite sample (all NaN or "
                    "infinite); drop the column or give measured values"
                )
            self.outputs.append(name)
            self.measured.append(ym[mask])
            self.masks.append(mask)
            self.scales.append(np.sqrt(c[mask]))
        if not self.outputs:
            raise OptionError(f"fit: the data for {system.name} measure no variable besides 't'")
        own = self.model.parameters
        self.columns, self.pnames = [], []
        for k, n in enumerate(names):
            base, which = split_name(n)
            if base in own and which in (None, index):
                self.columns.append(k)
                self.pnames.append(base)
        self.size = sum(m.size for m in self.measured)

    def penalty(self) -> float:
        """``sum_j c_j sum_n (ym^2 + range^2)``: the scale of :data:`PENALTY`."""
        total = 0.0
        for ym, s in zip(self.measured, self.scales):
            rng = float(np.ptp(ym)) if ym.size else 0.0
            total += float(np.sum(s**2 * (ym**2 + rng**2)))
        return total

    def reference(self) -> tuple[float, float]:
        """``sum_j c_j sum_n (ym - mean_j)^2`` (the loss of predicting each output's mean)
        and ``sum_j c_j sum_n ym^2``."""
        pairs = list(zip(self.measured, self.scales))
        spread = sum(float(np.sum((s * (ym - ym.mean())) ** 2)) for ym, s in pairs)
        return spread, sum(float(np.sum((s * ym) ** 2)) for ym, s in pairs)

    def evaluate(
        self, x: np.ndarray, rtol: float, atol: float, jac: bool, n_columns: int
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Residuals (and their Jacobian, ``n_columns`` wide) at fitted values ``x``."""
        params = {n: float(x[k]) for k, n in zip(self.columns, self.pnames)}
        res = simulate(
            self.model,
            grid=self.grid,
            simulators=self.simulators,
            rtol=rtol,
            atol=atol,
            params=params,
            sensitivities=self.pnames if jac else (),
        )
        r = [
            s * (res[n][self.offset :][m] - ym)
            for n, ym, m, s in zip(self.outputs, self.measured, self.masks, self.scales)
        ]
        J = None
        if jac:
            J = np.zeros((self.size, n_columns))
            for k, p in zip(self.columns, self.pnames):
                J[:, k] = np.concatenate(
                    [
                        s * res.sensitivity(n, p)[self.offset :][m]
                        for n, m, s in zip(self.outputs, self.masks, self.scales)
                    ]
                )
        return np.concatenate(r), J


def starts(t_start: float | Sequence[float], n: int) -> list[float]:
    """One start time per experiment from a number or a sequence of ``n``."""
    values = np.atleast_1d(_numbers(t_start, "t_start"))
    if values.size == 1:
        values = np.repeat(values, n)
    if values.size != n or not np.all(np.isfinite(values)):
        raise OptionError(
            f"fit: t_start has {values.size} values for {n} experiments; give one time, or "
            "one per experiment (the system's first, then those of experiments=, in order)"
        )
    return values.tolist()


class Objective:
    """``r(p)``, ``J(p) = dr/dp`` and ``L(p) = ||r||^2`` over all experiments, counting
    simulations and keeping every failure and the best point seen. ``weights``: ``c_j``
    by output name, one mapping for every experiment or one per experiment. ``rtol``/``atol``:
    IDAS's tolerances, None to choose them from the data (see the module docstring);
    ``t_start``: one time or one per experiment."""

    def __init__(
        self,
        experiments: Sequence[tuple[ac.System, Mapping[str, Any]]],
        names: Sequence[str],
        weights: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        t_start: float | Sequence[float] = 0.0,
        models: Sequence[ac.Model] | None = None,
    ) -> None:
        self.names = list(names)
        models = list(models) if models is not None else [None] * len(experiments)
        times = starts(t_start, len(experiments))
        each = weights if isinstance(weights, Sequence) else [weights or {}] * len(experiments)
        self.exps = [
            ExperimentResiduals(s, d, w, self.names, k, t0, m)
            for k, ((s, d), w, m, t0) in enumerate(zip(experiments, each, models, times))
        ]
        measured = {name for _, d in experiments for name in d if name not in ("t", "time")}
        for w in each:
            unused = sorted(set(w) - measured)
            if unused:
                raise OptionError(
                    f"fit: weights name {unused[0]!r}, which no experiment measures (they "
                    f"measure {', '.join(map(repr, sorted(measured)))}); weights are by "
                    "measured column"
                )
        columns = [ym for e in self.exps for ym in e.measured]
        self.magnitudes = np.array([float(np.max(np.abs(ym))) for ym in columns])
        noise = min(
            (noise_level(ym) / a for ym, a in zip(columns, self.magnitudes) if a > 0), default=0.0
        )
        self._given = (rtol, atol)
        self._use(tolerance_rule(noise, self._magnitude(), rtol, atol, "data"))
        self.size = sum(e.size for e in self.exps)
        self.fail_loss = PENALTY * max(sum(e.penalty() for e in self.exps), 1e-300)
        self.n_simulations = self.n_failed = self.n_jacobians = 0
        self.history: list[float] = []
        self.best, self.best_x = np.inf, None
        self.failures: list[Failure] = []
        self._cache: tuple[bytes, np.ndarray | None] | None = None
        self.on_evaluation: Callable[[float], None] | None = None

    def _magnitude(self) -> float:
        """The smallest nonzero ``a_j = max |ym_j|`` over all output columns (1 if none)."""
        positive = self.magnitudes[self.magnitudes > 0]
        return float(positive.min()) if positive.size else 1.0

    def _use(self, tolerances: Tolerances) -> None:
        self.tolerances = tolerances
        self.rtol, self.atol = tolerances.rtol, tolerances.atol

    def refine(self, x: np.ndarray) -> bool:
        """Tighten the tolerances to the rule on the noise the model leaves at ``x`` (the
        weighted RMS of ``y - ym`` per output column, relative to ``a_j``) when that asks
        for an ``rtol`` more than :data:`REFINE` times tighter: the data's noise estimate is
        only an upper bound (a rough but noise-free signal looks noisy to it). Afterwards
        the best point is forgotten (losses at other tolerances do not compare); returns
        whether the tolerances changed."""
        if self.tolerances.source == "given" or self.rtol < REFINE * RTOL_BOUNDS[0]:
            return False  # nothing to tighten
        out = self._run(np.asarray(x, dtype=float), jac=False)
        if isinstance(out, str):
            return False
        pieces = np.split(out[0], np.cumsum([m.size for e in self.exps for m in e.measured])[:-1])
        weights = [s for e in self.exps for s in e.scales]
        ratios = [
            np.sqrt(np.sum(r**2) / np.sum(w**2)) / a
            for r, w, a in zip(pieces, weights, self.magnitudes)
            if a > 0 and np.any(w > 0)
        ]
        noise = min([self.tolerances.noise, *ratios])
        finer = tolerance_rule(noise, self._magnitude(), *self._given, "residuals")
        if finer.rtol * REFINE > self.rtol:
            return False
        self._use(finer)
        self.best, self.best_x, self._cache = np.inf, None, None
        return True

    def reference_loss(self) -> float:
        """``L_ref``: the loss of predicting each measured output by its mean (over all
        experiments), or for constant data ``||c ym||^2``, or 1 for all-zero data."""
        spread, size = (sum(v) for v in zip(*(e.reference() for e in self.exps)))
        return spread if spread > 0 else size if size > 0 else 1.0

    def _fail(self, x: np.ndarray, message: str) -> None:
        self.n_failed += 1
        self.failures.append(Failure(dict(zip(self.names, x.tolist())), message))

    def _run(self, x: np.ndarray, jac: bool) -> tuple[np.ndarray, np.ndarray] | str:
        """Residuals and Jacobian, or why the simulation failed."""
        if not np.all(np.isfinite(x)):
            return "non-finite parameter values"
        rs, Js = [], []
        log: list[str] = []
        for e in self.exps:
            self.n_simulations += 1
            try:
                with native_stderr(log):
                    r, J = e.evaluate(x, self.rtol, self.atol, jac, len(self.names))
            except FAILURES as exc:
                return str(exc).strip() or type(exc).__name__
            rs.append(r)
            Js.append(J)
        r = np.concatenate(rs)
        if not np.all(np.isfinite(r)):
            return "the simulated outputs are not finite"
        return r, (np.vstack(Js) if jac else np.zeros(0))

    def residuals(self, x: Sequence[float]) -> np.ndarray | None:
        """``r(p)``, or None after a failed simulation (kept in ``failures``)."""
        x = np.asarray(x, dtype=float)
        if self._cache is not None and self._cache[0] == x.tobytes():
            return self._cache[1]
        out = self._run(x, jac=False)
        r = None if isinstance(out, str) else out[0]
        loss = np.nan if r is None else float(r @ r)
        if isinstance(out, str):
            self._fail(x, out)
        elif loss < self.best:
            self.best, self.best_x = loss, x.copy()
        self.history.append(loss)
        self._cache = (x.tobytes(), r)
        if self.on_evaluation is not None:
            self.on_evaluation(loss)
        return r

    def loss(self, x: Sequence[float]) -> float:
        """``L(p) = ||r(p)||^2``, or ``fail_loss`` for a failed simulation."""
        r = self.residuals(x)
        return self.fail_loss if r is None else float(r @ r)

    def padded(self, x: Sequence[float]) -> np.ndarray:
        """``r(p)``, or the constant vector of squared norm ``fail_loss`` after a failure."""
        r = self.residuals(x)
        return np.full(self.size, np.sqrt(self.fail_loss / self.size)) if r is None else r

    def jacobian(self, x: Sequence[float]) -> np.ndarray:
        """``J(p) = dr/dp`` from IDAS forward sensitivities (zeros after a failure)."""
        x = np.asarray(x, dtype=float)
        self.n_jacobians += 1
        out = self._run(x, jac=True)
        if isinstance(out, str):
            self._fail(x, out)
            return np.zeros((self.size, len(self.names)))
        return out[1]

    def gradient(self, x: Sequence[float]) -> np.ndarray:
        """``dL/dp = 2 J^T r``."""
        return 2.0 * self.jacobian(x).T @ self.padded(x)


class OutOfTime(Exception):
    """Raised by :class:`Scaled` when the fit's ``max_time`` has passed."""


class Scaled:
    """The problem the optimizers see: ``z = p / x_scale`` and ``r~(z) = r(p) / sqrt(L_s)``
    (``J~ = J diag(x_scale) / sqrt(L_s)``, ``L~ = L / L_s``), so that a unit step in ``z``
    is the parameters' own size and scipy's absolute ``gtol`` means the same whatever the
    units. ``L_s = min(L_ref, L_start)``: the data's spread (:meth:`Objective.reference_loss`)
    or the start's loss ``start_loss`` when that is smaller, so ``L~`` starts at most at 1.
    The spread alone is not enough: in closed loop (a controller keeps the output on its
    reference whatever the parameters) the misfit can be 1e-10 of the spread, the scaled
    gradient starts below ``gtol`` and the fit would stop at its start. Minimizers are
    those of ``L``. Raises :class:`OutOfTime` once ``deadline`` (a ``time.perf_counter()``
    value) has passed."""

    def __init__(
        self,
        objective: Objective,
        x_scale: np.ndarray,
        deadline: float = np.inf,
        start_loss: float = np.inf,
    ) -> None:
        self.obj, self.x_scale, self.deadline = objective, np.asarray(x_scale, float), deadline
        reference = objective.reference_loss()
        if np.isfinite(start_loss) and start_loss > 0:
            reference = min(reference, start_loss)
        self.r_scale = np.sqrt(reference)

    def _x(self, z: np.ndarray) -> np.ndarray:
        if _time.perf_counter() > self.deadline:
            raise OutOfTime
        return np.asarray(z, dtype=float) * self.x_scale

    def residuals(self, z: np.ndarray) -> np.ndarray:
        return self.obj.padded(self._x(z)) / self.r_scale

    def jacobian(self, z: np.ndarray) -> np.ndarray:
        return self.obj.jacobian(self._x(z)) * (self.x_scale / self.r_scale)

    def loss(self, z: np.ndarray) -> float:
        return self.obj.loss(self._x(z)) / self.r_scale**2
