"""``fit(system, data, ...)``: parameters of unknown components from measured time series.

For experiments ``k`` (a system and its data), measured outputs ``j`` (any variables of the
system, by dotted name) and sample times ``t_n`` the fit minimizes

    L(p) = sum_k sum_j c_j sum_n (y_kj(t_n; p) - ym_kj(t_n))^2  =  ||r(p)||^2,

``r = sqrt(c_j) (y - ym)`` stacked over all finite samples, where ``y(t; p)`` is the
simulated DAE (consistent initialization + IDAS) with parameters ``p``: by default the raw
parameters ``theta`` of every :class:`~learning.Unknown` in the systems (each iterate a
feasible model, see :mod:`learning.law`), plus named ``physical`` parameters of known
components. Parameter names are shared across experiments.

Methods:

- ``"least_squares"``: Gauss-Newton with a trust region (:func:`scipy.optimize.least_squares`,
  ``"trf"``; ``options={"method": "lm"}`` for MINPACK's Levenberg-Marquardt) with the
  Jacobian ``dr/dp = sqrt(c_j) dy/dp`` from IDAS forward sensitivities, so the gradient
  is ``dL/dp = 2 J^T r`` with no finite differences;
- ``"powell"``, ``"nelder-mead"``: gradient-free (:func:`scipy.optimize.minimize`), as in
  Matei et al.;
- ``"collocation"``: direct collocation of the whole DAE (Radau IIA) solved by IPOPT, see
  :mod:`learning.collocation`; ``loss`` is then ``L`` simulated (IDAS) at its parameters.

Inputs from data: a measured input drives the system through a source that plays its
samples, e.g. ``el.SignalVoltage("V", v=(t_u, u))`` (linear interpolation;
``ac.spline(t_u, u)`` for a C2 one), built per experiment; ``data`` then holds only the
outputs to match (every name but ``"t"`` is compared). With ``method="collocation"`` put the
input's samples on the data times (or a subset of them): the mesh knows a table's kinks only
there.

A failed simulation (:class:`~acausal.SimulationError`, :class:`~acausal.InitializationError`,
a non-finite parameter or output) does not stop the fit: it is counted in ``n_failed`` and
scored with the penalty loss ``L_fail = 1e3 * max(sum_kj c_j sum_n (ym^2 + (max ym - min ym)^2),
L(p0))``, a thousand times what the trivial prediction ``y = 0`` (plus a range term) or the
start ``p0`` costs, and for least squares the residual vector whose entries all
equal ``sqrt(L_fail / m)``. A finite penalty, not ``inf``: Powell's and Nelder-Mead's line
searches and MINPACK need finite values; any trust-region or simplex step onto a failure is
then rejected. The start point must simulate (else a :class:`~acausal.ModelError` says why).

Fits return, never write: each experiment's system is compiled once, the optimizer varies
the parameters as simulation inputs, and the result carries the fitted values, the fitted
models (the compiled ones with the fitted values as defaults) and copies of the systems
with the fitted values; the user's systems and components are unchanged, so a second
``fit`` from the same start gives the same result.
"""

from __future__ import annotations

import copy
import sys
import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.optimize as so

import acausal as ac
from acausal.errors import (
    InitializationError,
    ModelError,
    OptionError,
    ParameterError,
    SimulationError,
    unknown_name,
)
from solvers import Result, simulate
from solvers.capture import native_stderr

from .unknown import Unknown

METHODS = ("least_squares", "powell", "nelder-mead", "collocation")
FAILURES = (SimulationError, InitializationError, ParameterError, RuntimeError)
PENALTY = 1e3


@dataclass(frozen=True)
class FitProgress:
    """What a progress callable receives: optimizer iterations (Jacobians for least
    squares), objective evaluations, the last and the best loss, failures, seconds. For
    ``method="collocation"`` a report follows each IPOPT iteration, and ``loss`` is the
    collocated objective at that iterate (``best``: the best simulated loss so far)."""

    iteration: int
    evaluations: int
    loss: float
    best: float
    n_failed: int
    elapsed: float

    def __str__(self) -> str:
        return (
            f"iteration {self.iteration:4d}  evaluations {self.evaluations:5d}  "
            f"loss {self.loss:.6g}  best {self.best:.6g}  failed {self.n_failed}  "
            f"{self.elapsed:.1f} s"
        )


@dataclass(frozen=True)
class FitResult:
    """The outcome of :func:`fit`; a value that pickles (e.g. back from a worker process).

    ``params``: fitted values by name; ``weights``: the constrained weights of each
    :class:`~learning.Unknown` (by component name) at ``params``; ``loss`` = ``L(params)``;
    ``loss_history``: ``L`` at every objective evaluation in order (``nan`` for failed
    ones); ``start``: the start values. ``models`` (``model``: the first experiment's) are
    the compiled models with the fitted values as their parameter defaults, so
    ``simulate(fit.model, ...)`` or :meth:`simulate` reproduces the fit; ``systems``
    (``system``) are new systems, copies of yours with the fitted values (yours are
    unchanged).
    """

    params: dict[str, float]
    weights: dict[str, dict[str, float]]
    loss: float
    loss_history: list[float]
    n_simulations: int
    n_failed: int
    wall_time: float
    success: bool
    message: str
    method: str
    start: dict[str, float]
    n_iterations: int
    models: tuple[ac.Model, ...] = ()
    systems: tuple[ac.System, ...] = ()
    last_failure: str = ""
    validation_history: list[float] = field(default_factory=list)  # train(): per epoch

    @property
    def model(self) -> ac.Model:
        return self.models[0]

    @property
    def system(self) -> ac.System:
        return self.systems[0]

    def simulate(self, experiment: int = 0, **kwargs: Any) -> Result:
        """:func:`solvers.simulate` of experiment ``experiment``'s fitted model
        (``params=`` in ``kwargs`` overrides some of the values)."""
        return simulate(self.models[experiment], **kwargs)

    def __str__(self) -> str:
        lines = [
            f"fit ({self.method}): loss {self.loss:.6g}, {self.n_iterations} iterations, "
            f"{self.n_simulations} simulations ({self.n_failed} failed), "
            f"{self.wall_time:.2f} s; {self.message}",
        ]
        lines += [f"  {k:<28s} {self.start[k]:>12.6g} -> {v:.6g}" for k, v in self.params.items()]
        for comp, ws in self.weights.items():
            lines.append(f"  {comp}: " + ", ".join(f"{k} = {v:.6g}" for k, v in ws.items()))
        return "\n".join(lines)


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


class _Experiment:
    """One system with its measured outputs on its output grid."""

    def __init__(
        self,
        system: ac.System,
        data: Mapping[str, Any],
        weights: Mapping[str, Any],
        names: Sequence[str],
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
        if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
            raise OptionError(f"fit: data['t'] of {system.name} must be 2+ increasing times")
        if t[0] < t_start:
            raise OptionError(f"fit: data of {system.name} start at {t[0]:g} < t_start")
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
        self.columns = [k for k, n in enumerate(names) if n in own]
        self.size = sum(m.size for m in self.measured)

    def penalty(self) -> float:
        """``sum_j c_j sum_n (ym^2 + range^2)``: the scale of :data:`PENALTY`."""
        total = 0.0
        for ym, s in zip(self.measured, self.scales):
            rng = float(np.ptp(ym)) if ym.size else 0.0
            total += float(np.sum(s**2 * (ym**2 + rng**2)))
        return total

    def evaluate(
        self, names: Sequence[str], x: np.ndarray, rtol: float, atol: float, jac: bool
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Residuals (and their Jacobian over all ``names``) at parameter values ``x``."""
        params = {names[k]: float(x[k]) for k in self.columns}
        sens = [names[k] for k in self.columns] if jac else ()
        res = simulate(
            self.model,
            grid=self.grid,
            simulators=self.simulators,
            rtol=rtol,
            atol=atol,
            params=params,
            sensitivities=sens,
        )
        r = [
            s * (res[n][self.offset :][m] - ym)
            for n, ym, m, s in zip(self.outputs, self.measured, self.masks, self.scales)
        ]
        J = None
        if jac:
            J = np.zeros((self.size, len(names)))
            for k in self.columns:
                J[:, k] = np.concatenate(
                    [
                        s * res.sensitivity(n, names[k])[self.offset :][m]
                        for n, m, s in zip(self.outputs, self.masks, self.scales)
                    ]
                )
        return np.concatenate(r), J


class Objective:
    """``r(p)``, ``J(p) = dr/dp`` and ``L(p) = ||r||^2`` over all experiments, counting
    simulations and failures and keeping the best point seen."""

    def __init__(
        self,
        experiments: Sequence[tuple[ac.System, Mapping[str, Any]]],
        names: Sequence[str],
        weights: Mapping[str, Any] | None = None,
        rtol: float = 1e-8,
        atol: float = 1e-10,
        t_start: float = 0.0,
        models: Sequence[ac.Model] | None = None,
    ) -> None:
        self.names = list(names)
        models = list(models) if models is not None else [None] * len(experiments)
        self.exps = [
            _Experiment(s, d, weights or {}, self.names, t_start, m)
            for (s, d), m in zip(experiments, models)
        ]
        self.rtol, self.atol = rtol, atol
        self.size = sum(e.size for e in self.exps)
        self.fail_loss = PENALTY * max(sum(e.penalty() for e in self.exps), 1e-300)
        self.n_simulations = self.n_failed = self.n_jacobians = 0
        self.history: list[float] = []
        self.best, self.best_x = np.inf, None
        self.last_failure = ""
        self._cache: tuple[bytes, np.ndarray | None] | None = None
        self.on_evaluation: Callable[[float], None] | None = None

    def _run(self, x: np.ndarray, jac: bool) -> tuple[np.ndarray, np.ndarray] | None:
        """Residuals and Jacobian, or None (counted) when a simulation fails."""
        rs, Js = [], []
        log: list[str] = []
        for e in self.exps:
            self.n_simulations += 1
            try:
                with native_stderr(log):
                    r, J = e.evaluate(self.names, x, self.rtol, self.atol, jac)
            except FAILURES as exc:
                self.last_failure = str(exc).strip()
                return None
            rs.append(r)
            Js.append(J)
        r = np.concatenate(rs)
        if not np.all(np.isfinite(r)):
            self.last_failure = "the simulated outputs are not finite"
            return None
        return r, (np.vstack(Js) if jac else np.zeros(0))

    def residuals(self, x: Sequence[float]) -> np.ndarray | None:
        """``r(p)``, or None after a failed simulation (counted in ``n_failed``)."""
        x = np.asarray(x, dtype=float)
        if self._cache is not None and self._cache[0] == x.tobytes():
            return self._cache[1]
        out = self._run(x, jac=False) if np.all(np.isfinite(x)) else None
        r = None if out is None else out[0]
        loss = np.nan if r is None else float(r @ r)
        if r is None:
            self.n_failed += 1
            if not np.all(np.isfinite(x)):
                self.last_failure = "non-finite parameter values"
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
        if out is None:
            self.n_failed += 1
            return np.zeros((self.size, len(self.names)))
        return out[1]

    def gradient(self, x: Sequence[float]) -> np.ndarray:
        """``dL/dp = 2 J^T r``."""
        return 2.0 * self.jacobian(x).T @ self.padded(x)


class _Progress:
    """Prints (or passes to a callable) a :class:`FitProgress` at most every ``interval`` s."""

    def __init__(self, progress: bool | Callable, interval: float, objective: Objective) -> None:
        self.sink = progress if callable(progress) else (self._print if progress else None)
        self.interval, self.obj = interval, objective
        self.tic = self.last = _time.perf_counter()
        self.iteration = 0

    @staticmethod
    def _print(info: FitProgress) -> None:
        print(f"fit: {info}", file=sys.stdout, flush=True)

    def __call__(self, loss: float, force: bool = False) -> None:
        now = _time.perf_counter()
        if self.sink is None or (not force and now - self.last < self.interval):
            return
        self.last = now
        o = self.obj
        self.sink(
            FitProgress(self.iteration, len(o.history), loss, o.best, o.n_failed, now - self.tic)
        )


def _own(values: Mapping[str, float], model: ac.Model) -> dict[str, float]:
    return {k: v for k, v in values.items() if k in model.defaults}


def with_values(system: ac.System, values: Mapping[str, float]) -> ac.System:
    """A copy of ``system`` whose parameters named in ``values`` take those values."""
    new = copy.deepcopy(system)
    for comp in new.all_components():
        for q in comp.quantities.values():
            if q.kind == "parameter" and q.name in values:
                q.value = float(values[q.name])
    return new


def unknowns(systems: Sequence[ac.System]) -> list[Unknown]:
    """Every :class:`~learning.Unknown` in ``systems`` (nested ones included), one per name."""
    seen: dict[str, Unknown] = {}
    for s in systems:
        for c in s.all_components():
            if isinstance(c, Unknown):
                seen.setdefault(c.full_name, c)
    return list(seen.values())


def fit(
    system: ac.System | None,
    data: Mapping[str, Any] | None,
    *,
    params: Sequence[str] | None = None,
    physical: Sequence[str] = (),
    method: str = "least_squares",
    weights: Mapping[str, Any] | None = None,
    x0: Mapping[str, float] | Sequence[float] | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_nfev: int | None = None,
    progress: bool | Callable[[FitProgress], None] = True,
    progress_interval: float = 1.0,
    experiments: Sequence[tuple[ac.System, Mapping[str, Any]]] | None = None,
    t_start: float = 0.0,
    options: Mapping[str, Any] | None = None,
) -> FitResult:
    """Fit parameters so the simulated outputs match ``data`` (see the module docstring).

    ``data``: ``{"t": times, "C1.v": values, ...}`` (nan marks a missing sample); the
    simulation starts at ``t_start`` (initial values there), outputs are compared at ``t``.
    ``experiments``: further ``(system, data)`` pairs fitted jointly (``system``/``data``
    may be None when all are given here). ``params``: names to fit (default: the raw
    parameters of every :class:`~learning.Unknown`); ``physical``: more parameter names
    (e.g. ``"C1.C"``). ``weights``: ``c_j`` by output name, scalar or per sample
    (default 1). ``x0``: start values by name or in the order of ``fit.params`` (default
    the declared values). ``max_nfev``: objective evaluations (default scipy's);
    ``progress``: True prints a :class:`FitProgress` line at most every
    ``progress_interval`` seconds and once at the end, a callable receives it instead;
    ``options``: passed on to scipy (``least_squares`` keywords or ``minimize`` options).
    The fitted values are written into every experiment's system (the returned ``system``),
    so it simulates as fitted; ``fit.start`` holds the values before.
    """
    tic = _time.perf_counter()
    if method not in METHODS:
        raise OptionError(f"fit: method={method!r} is not one of {', '.join(map(repr, METHODS))}")
    exps = ([(system, data)] if system is not None else []) + list(experiments or [])
    if not exps or any(d is None for _, d in exps):
        raise OptionError("fit: give a system with its data, or experiments=[(system, data), ...]")
    systems = [s for s, _ in exps]
    models = [ac.compile(s) for s in systems]
    known = {n: v for m in reversed(models) for n, v in m.parameters.items()}
    if params is None:
        params = [n for u in unknowns(systems) for n in u.parameter_names()]
    names = list(dict.fromkeys([*params, *physical]))
    if not names:
        raise OptionError("fit: nothing to fit: no ln.Unknown in the system and no physical=")
    for n in names:
        if n not in known:
            raise unknown_name("parameter", n, known)
    start = np.array([known[n] for n in names], dtype=float)
    if isinstance(x0, Mapping):
        for n, v in x0.items():
            if n not in names:
                raise unknown_name("fitted parameter", n, names)
            start[names.index(n)] = float(v)
    elif x0 is not None:
        start = np.asarray(x0, dtype=float).ravel()
        if start.size != len(names):
            raise OptionError(f"fit: x0 has {start.size} values for {len(names)} parameters")
    obj = Objective(exps, names, weights, rtol, atol, t_start, models)
    report = _Progress(progress, progress_interval, obj)
    obj.on_evaluation = report
    if obj.residuals(start) is None:
        raise ModelError(
            f"fit: the start parameters do not simulate ({obj.last_failure}); "
            "give x0= values that do"
        )
    obj.fail_loss = max(obj.fail_loss, PENALTY * obj.best)  # also above the start's loss
    opts = dict(options or {})
    chosen = None  # collocation: its parameters, whatever the best simulated loss seen
    if method == "collocation":
        from .collocation import collocate

        def on_iteration(k: int, collocated: float) -> None:
            report.iteration = k
            report(collocated)

        out = collocate(obj.exps, names, start, rtol, atol, opts, on_iteration)
        obj.n_simulations += out.n_simulations  # the start guesses' trajectories
        report.iteration = n_iter = out.n_iterations
        chosen = out.x
        out.message += f"; collocated loss {out.objective:.6g}"
        if obj.residuals(chosen) is None:  # the true loss: IDAS at the fitted values
            out.success = False
            out.message += f"; the fitted parameters do not simulate ({obj.last_failure})"
    elif method == "least_squares":

        def jac(x: np.ndarray) -> np.ndarray:
            report.iteration += 1
            return obj.jacobian(x)

        opts.setdefault("method", "trf")
        if max_nfev is not None:
            opts["max_nfev"] = max_nfev
        out = so.least_squares(obj.padded, start, jac=jac, **opts)
        n_iter = obj.n_jacobians
    else:

        def callback(xk: np.ndarray) -> None:
            report.iteration += 1

        if max_nfev is not None:
            opts["maxfev"] = max_nfev
        scipy_method = {"powell": "Powell", "nelder-mead": "Nelder-Mead"}[method]
        out = so.minimize(obj.loss, start, method=scipy_method, callback=callback, options=opts)
        n_iter = int(getattr(out, "nit", report.iteration))
    best = obj.best_x if obj.best_x is not None else start
    best_loss = obj.best
    if chosen is not None:
        best = chosen
        best_loss = obj.history[-1]  # nan when that simulation failed
    fitted = dict(zip(names, best.tolist()))
    report(best_loss, force=True)
    return FitResult(
        params=fitted,
        weights={u.full_name: u.weights(fitted) for u in unknowns(systems)},
        loss=float(best_loss),
        loss_history=list(obj.history),
        n_simulations=obj.n_simulations,
        n_failed=obj.n_failed,
        wall_time=_time.perf_counter() - tic,
        success=bool(out.success),
        message=str(out.message),
        method=method,
        start=dict(zip(names, start.tolist())),
        n_iterations=n_iter,
        models=tuple(m.with_parameters(_own(fitted, m)) for m in models),
        systems=tuple(with_values(s, fitted) for s in systems),
        last_failure=obj.last_failure,
    )
