"""``fit(system, data, ...)``: parameters of unknown components from measured time series.

For experiments ``k`` (a system and its data), measured outputs ``j`` (any variables of the
system, by dotted name) and sample times ``t_n`` the fit minimizes

    L(p) = sum_k sum_j c_j sum_n (y_kj(t_n; p) - ym_kj(t_n))^2  =  ||r(p)||^2,

``r = sqrt(c_j) (y - ym)`` stacked over all finite samples (:mod:`learning.fitting.objective`),
where ``y(t; p)`` is the simulated DAE (consistent initialization + IDAS) with parameters
``p``: by default the raw parameters ``theta`` of every :class:`~learning.Unknown` in the
systems (each iterate a feasible model, see :mod:`learning.laws.law`), plus named ``physical``
parameters of known components. Parameter names are shared across experiments, except
those in ``experiment_params``: each experiment has its own copy, named ``"mass.v0@k"``
(``k`` counts the experiments from 0: ``system`` first, then ``experiments=`` in order), e.g.
each record's initial velocity beside a shared mass. ``L`` is in your units and weighs
outputs by ``c_j`` only: to balance outputs of different units or noise, give
``weights={"x": 1 / sigma_x**2, ...}``.

Methods:

- ``"least_squares"``: Gauss-Newton with a trust region (:func:`scipy.optimize.least_squares`,
  ``"trf"``; ``options={"method": "lm"}`` for MINPACK's Levenberg-Marquardt) with the
  Jacobian ``dr/dp = sqrt(c_j) dy/dp`` from IDAS forward sensitivities, so the gradient
  is ``dL/dp = 2 J^T r`` with no finite differences;
- ``"powell"``, ``"nelder-mead"``: gradient-free (:func:`scipy.optimize.minimize`), as in
  Matei et al.;
- ``"collocation"``: direct collocation of the whole DAE (Radau IIA) solved by IPOPT, see
  :mod:`learning.fitting.collocation`; ``loss`` is then ``L`` simulated (IDAS) at its parameters.

Scaling: scipy's stopping tests are partly absolute (``gtol`` on the gradient), so a fit in
metres (``L ~ 1e-8 m^2``) would stop after a few iterations where the same fit in
micrometres goes on. The optimizers therefore see ``z = p / s_p`` and ``r / sqrt(L_ref)``
(:class:`learning.fitting.objective.Scaled`), ``L_ref`` the loss of predicting each output by its
mean. ``s_p``: ``|p_start|`` for physical parameters (for one that starts at 0, such as an
initial velocity, the change that moves the outputs by their spread, ``sqrt(L_ref) /
||dr/dp||`` at the start); for the raw parameters of laws (dimensionless, O(1) by design)
the change that alters their weight by a factor ``e``
(:meth:`learning.laws.law.Law.raw_scales`: 1, or ``|theta|`` where the weight is ``theta``).
One scalar for all residuals, not one per output: per-output factors would change the
minimizer of ``L`` (that weighting is ``weights=``'s), one factor does not. Changing the
units of the outputs and of the parameters then changes nothing but rounding. IPOPT gets
``obj_scaling_factor = max(1, 1 / L_ref)`` (see :func:`learning.fitting.collocation.collocate`).

Tolerances: ``rtol``/``atol`` default to a rule on the noise (see
:mod:`learning.fitting.objective`: ``rtol = clip(1e-4 nu, 1e-8, 1e-6)`` for the data's relative
noise ``nu``, ``atol = 1e-2 rtol max |ym|``; a second pass at tighter ones when the fitted
model's residuals show less noise than the data seemed to have); ``fit.rtol``, ``fit.atol``
and ``fit.message`` say which were used. To continue a fit exactly, give ``x0=fit.params,
rtol=fit.rtol, atol=fit.atol``.

Inputs from data: a measured input drives the system through a source that plays its
samples, e.g. ``el.SignalVoltage("V", v=(t_u, u))`` (linear interpolation;
``ac.spline(t_u, u)`` for a C2 one), built per experiment; ``data`` then holds only the
outputs to match (every name but ``"t"`` is compared). With ``method="collocation"`` put the
input's samples on the data times (or a subset of them): the mesh knows a table's kinks only
there.

A failed simulation (:class:`~acausal.SimulationError`, :class:`~acausal.InitializationError`,
a non-finite parameter or output) does not stop the fit: it is kept in ``failures`` (the
parameter values and the error's message) and scored with the penalty loss ``L_fail = 1e3 *
max(sum_kj c_j sum_n (ym^2 + (max ym - min ym)^2), L(p0))``, a thousand times what the
trivial prediction ``y = 0`` (plus a range term) or the start ``p0`` costs, and for least
squares the residual vector whose entries all equal ``sqrt(L_fail / m)``. A finite penalty,
not ``inf``: Powell's and Nelder-Mead's line searches and MINPACK need finite values; any
trust-region or simplex step onto a failure is then rejected. The start point must simulate
(else a :class:`~acausal.ModelError` says why).

Fits return, never write: each experiment's system is compiled once, the optimizer varies
the parameters as simulation inputs, and the result carries the fitted values, the fitted
models (the compiled ones with the fitted values as defaults) and copies of the systems
with the fitted values; the user's systems and components are unchanged, so a second
``fit`` from the same start gives the same result, and ``x0=fit.params`` (or a law made
with ``init=fit.weights[...]``) continues from where a fit stopped.
"""

from __future__ import annotations

import sys
import time as _time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.optimize as so

import acausal as ac
from acausal.errors import ModelError, OptionError, unknown_name

from ..core import (
    Experiment,
    FitProgress,
    as_pairs,
    blas_threads,
    check_count,
    no_params,
    progress_sink,
    with_values,
)
from ..laws import unknowns
from ..optimization import FitResult, experiment_values, own_name, split_name
from .objective import PENALTY, Objective, OutOfTime, Scaled

METHODS = ("least_squares", "powell", "nelder-mead", "collocation")
_BUDGET = (
    "stopped: the budget of objective evaluations (max_nfev) was spent before convergence; "
    "give more (max_nfev=...) or start closer (x0=...)"
)
# scipy's termination codes in words
LEAST_SQUARES_STATUS = {
    -2: "stopped by the callback given in options",
    -1: "stopped: MINPACK rejected its inputs (improper input parameters); check options=",
    0: _BUDGET,
    1: "converged: the gradient of the scaled loss fell below gtol (a stationary point)",
    2: "converged: the last step lowered the loss by less than ftol (relative)",
    3: "converged: the last step changed the scaled parameters by less than xtol (relative)",
    4: "converged: the last step changed neither the loss (ftol) nor the parameters (xtol)",
}
MINIMIZE_STATUS = {
    0: "converged: the loss and the parameters stopped changing (xtol, ftol)",
    1: _BUDGET,
    2: "stopped: the iteration limit was reached before convergence; give more "
    "(options={'maxiter': ...})",
    3: "stopped: the loss became NaN",
    4: "stopped: a parameter left its bounds",
}


class _Progress:
    """Prints (or passes to a callable) a :class:`FitProgress` at most every ``interval`` s."""

    def __init__(
        self, progress: bool | str | Callable, interval: float, objective: Objective
    ) -> None:
        self.sink = progress_sink(progress, self._print)
        self.interval, self.obj = interval, objective
        self.tic = self.last = _time.perf_counter()
        self.iteration = 0

    @staticmethod
    def _print(info: FitProgress) -> None:
        print(f"fit: {info}", file=sys.stdout, flush=True)

    def __call__(self, loss: float, force: bool = False, best: float | None = None) -> None:
        """Report ``loss`` and ``best`` (default: the best simulated loss so far)."""
        now = _time.perf_counter()
        if self.sink is None or (not force and now - self.last < self.interval):
            return
        self.last = now
        o = self.obj
        best = o.best if best is None else best
        self.sink(
            FitProgress(self.iteration, len(o.history), loss, best, o.n_failed, now - self.tic)
        )


def _own(values: Mapping[str, float], model: ac.Model) -> dict[str, float]:
    return {k: v for k, v in values.items() if k in model.defaults}


def _names(
    shared: Sequence[str], own: Sequence[str], models: Sequence[ac.Model]
) -> tuple[list[str], dict[str, float]]:
    """The fitted names (``shared``, then each of ``own`` once per experiment whose model
    has it, as ``"name@k"``) and their declared values."""
    known = {n: v for m in reversed(models) for n, v in m.parameters.items()}
    own = list(dict.fromkeys([own] if isinstance(own, str) else own))
    names = [n for n in dict.fromkeys(shared) if n not in own]
    for n in [*names, *own]:
        if n not in known:
            raise unknown_name("parameter", n, known)
    values = {n: known[n] for n in names}
    for n in own:
        values |= {
            own_name(n, k): m.parameters[n] for k, m in enumerate(models) if n in m.parameters
        }
    return list(values), values


def _start(
    names: list[str],
    declared: Mapping[str, float],
    x0: Mapping[str, float] | Sequence[float] | None,
) -> np.ndarray:
    """Start values: ``declared``, overridden by ``x0`` (by name, a plain name setting
    every experiment's copy, or in the order of ``names``)."""
    start = np.array([declared[n] for n in names], dtype=float)
    if isinstance(x0, Mapping):
        for n, v in x0.items():
            hits = [k for k, m in enumerate(names) if n in (m, split_name(m)[0])]
            if not hits:
                raise unknown_name("fitted parameter", n, names)
            start[hits] = float(v)
    elif x0 is not None:
        start = np.asarray(x0, dtype=float).ravel()
        if start.size != len(names):
            raise OptionError(f"fit: x0 has {start.size} values for {len(names)} parameters")
    return start


def _parameter_scales(
    obj: Objective, start: np.ndarray, systems: Sequence[ac.System]
) -> np.ndarray:
    """``s_p``: for the raw parameters of laws their :meth:`~learning.Unknown.raw_scales`
    at the start, for the others ``|p_start|``, and for one that starts at 0 ``sqrt(L_ref) /
    ||dr/dp||`` at the start (the change that moves the outputs by their spread; 1 if they
    do not depend on it)."""
    values = dict(zip(obj.names, start.tolist()))
    raw = {}
    for u in unknowns(systems):
        raw |= u.raw_scales({split_name(n)[0]: v for n, v in values.items()})
    scale = np.array([raw.get(split_name(n)[0], abs(v)) for n, v in values.items()])
    zero = scale == 0
    if zero.any():
        norms = np.linalg.norm(obj.jacobian(start)[:, zero], axis=0)
        with np.errstate(divide="ignore"):
            scale[zero] = np.where(norms > 0, np.sqrt(obj.reference_loss()) / norms, 1.0)
    return scale


def _message(out: Any, table: Mapping[int, str]) -> str:
    status = int(getattr(out, "status", 0))
    return table.get(status, f"scipy's status {status}: {out.message}")


def fit(
    system: ac.System | None,
    data: Experiment | Sequence[Experiment] | Mapping[str, Any] | None,
    *,
    fitted: Sequence[str] | None = None,
    physical: Sequence[str] = (),
    experiment_params: Sequence[str] = (),
    method: str = "least_squares",
    weights: Mapping[str, Any] | None = None,
    x0: Mapping[str, float] | Sequence[float] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    max_nfev: int | None = None,
    max_time: float | None = None,
    progress: bool | str | Callable[[FitProgress], None] = True,
    progress_interval: float = 1.0,
    experiments: Sequence[tuple[ac.System, Any]] | None = None,
    t_start: float | Sequence[float] = 0.0,
    options: Mapping[str, Any] | None = None,
    params: object = None,  # the names to fit were params=: see checks.no_params
) -> FitResult:
    """Fit parameters so the simulated outputs match ``data`` (see the module docstring).

    ``data``: an :class:`~learning.Experiment` (its measured columns compared, its
    ``params`` set in its copy of ``system``, its weights and mask applied), a sequence of
    them (one experiment each, all of ``system``), or the older ``{"t": times, "C1.v":
    values, ...}`` (nan marks a missing sample; a list of such dicts is one experiment
    each); the simulation starts at ``t_start`` (initial values there; one time, or one per
    experiment), outputs are compared at ``t``. ``experiments``: further ``(system, data)``
    pairs fitted jointly, ``data`` in any of those forms (``system``/``data`` may be None
    when all are given here).
    ``fitted``: names to fit (default: the raw parameters of every
    :class:`~learning.Unknown`); ``physical``: more parameter names (e.g. ``"C1.C"``);
    ``experiment_params``: names each experiment fits its own copy of (``"mass.v0@0"``,
    ``"mass.v0@1"``, ...), each starting from its experiment's value (an Experiment's
    ``params``, else the declared one). ``weights``: ``c_j`` by output name, scalar or per
    sample (default 1), for every experiment; an Experiment's own weights take precedence.
    ``x0``: start values by name (a plain name also sets every experiment's copy) or in
    the order of ``fit.params`` (default the declared values). ``rtol``,
    ``atol``: IDAS's tolerances (default from the data's noise). ``max_nfev``: objective
    evaluations (default scipy's); ``max_time``: seconds after which the fit stops with the
    best parameters seen; ``progress``: True prints a :class:`FitProgress` line at most
    every ``progress_interval`` seconds and once at the end, ``"bar"`` shows a tqdm bar
    instead (the ``progress`` extra; quiet when stderr is not a terminal), a callable
    receives each :class:`FitProgress`; ``options``: passed on to scipy (``least_squares``
    keywords or ``minimize`` options) or to collocation.
    """
    tic = _time.perf_counter()
    no_params("fit", params)
    _check_options(method, max_nfev, max_time)
    deadline = tic + (max_time if max_time is not None else np.inf)
    runs = as_pairs(system, data, experiments, "fit")
    exps = [(r.system, r.data) for r in runs]
    if not exps or any(s is None or d is None for s, d in exps):
        raise OptionError(
            "fit: give a system with its data (ln.fit(system, ln.Experiment(...))), or "
            "experiments=[(system, data), ...]"
        )
    systems = [s for s, _ in exps]
    models = [ac.compile(s) for s in systems]
    if fitted is None:
        fitted = [n for u in unknowns(systems) for n in u.parameter_names()]
    names, declared = _names([*fitted, *physical], experiment_params, models)
    if not names:
        raise OptionError("fit: nothing to fit: no ln.Unknown in the system and no physical=")
    start = _start(names, declared, x0)
    each = [{**(weights or {}), **r.weights} for r in runs]
    obj = Objective(exps, names, each, rtol, atol, t_start, models)
    report = _Progress(progress, progress_interval, obj)
    obj.on_evaluation = report
    if obj.residuals(start) is None:
        raise ModelError(
            f"fit: the start parameters do not simulate ({obj.failures[-1].message}); "
            "give x0= values that do"
        )
    obj.fail_loss = max(obj.fail_loss, PENALTY * obj.best)  # also above the start's loss
    x_scale = _parameter_scales(obj, start, systems)
    view = Scaled(obj, x_scale, deadline, obj.best)
    opts = dict(options or {})
    collocated = method == "collocation"
    best, note = start, ""
    try:
        if collocated:
            best, success, message = _collocate(obj, report, start, opts, deadline)
        else:
            success, message = _optimize(method, view, report, start / x_scale, opts, max_nfev)
            best = obj.best_x
        first = obj.tolerances
        if obj.refine(best):  # the residuals ask for tighter tolerances: simulate again
            note = f"; a first pass ran at rtol {first.rtol:.3g}, atol {first.atol:.3g}"
            simulates = _quietly(obj, best, report) is not None
            budget = None if max_nfev is None else max_nfev - len(obj.history)
            if not collocated and simulates and (budget is None or budget > 0):
                success, message = _optimize(method, view, report, best / x_scale, opts, budget)
                best = obj.best_x  # a second pass (IPOPT's result does not depend on them)
    except OutOfTime:
        success = False
        best = obj.best_x if obj.best_x is not None else best
        message = f"stopped: max_time ({max_time:g} s) was reached; the best values seen"
    best_loss = obj.history[-1] if collocated else obj.best  # collocation: nan if it failed
    report(best_loss, force=True, best=best_loss)
    fitted_values = dict(zip(names, best.tolist()))
    return FitResult(
        params=fitted_values,
        weights=_weights(systems, fitted_values),
        loss=float(best_loss),
        loss_history=list(obj.history),
        n_simulations=obj.n_simulations,
        n_failed=obj.n_failed,
        wall_time=_time.perf_counter() - tic,
        success=success,
        message=f"{message}; {obj.tolerances}{note}",
        method=method,
        start=dict(zip(names, start.tolist())),
        n_iterations=report.iteration,
        models=_fitted_models(models, fitted_values),
        systems=tuple(
            with_values(s, experiment_values(fitted_values, k)) for k, s in enumerate(systems)
        ),
        failures=tuple(obj.failures),
        rtol=obj.rtol,
        atol=obj.atol,
    )


def _check_options(method: str, max_nfev: int | None, max_time: float | None) -> None:
    if method not in METHODS:
        raise OptionError(f"fit: method={method!r} is not one of {', '.join(map(repr, METHODS))}")
    if max_nfev is not None:
        check_count("fit", "max_nfev", max_nfev, hint="the budget of objective evaluations")
    if max_time is not None and not (np.isfinite(max_time) and max_time > 0):
        raise OptionError(f"fit: max_time={max_time!r} must be a positive number of seconds")


def _weights(systems: Sequence[ac.System], fitted: Mapping[str, float]) -> dict[str, dict]:
    """The constrained weights of each Unknown at the fitted values of the first
    experiment that has it."""
    weights_of: dict[str, dict[str, float]] = {}
    for k, s in enumerate(systems):
        for u in unknowns([s]):
            weights_of.setdefault(u.full_name, u.weights(experiment_values(fitted, k)))
    return weights_of


def _fitted_models(models: Sequence[ac.Model], fitted: Mapping[str, float]) -> tuple[ac.Model, ...]:
    """Each experiment's compiled model with its fitted values as parameter defaults."""
    return tuple(
        m.with_parameters(_own(experiment_values(fitted, k), m)) for k, m in enumerate(models)
    )


def _quietly(obj: Objective, x: np.ndarray, report: _Progress) -> np.ndarray | None:
    """``obj.residuals(x)`` without a progress report (the final report shows it)."""
    obj.on_evaluation = None
    try:
        return obj.residuals(x)
    finally:
        obj.on_evaluation = report


def _optimize(
    method: str,
    view: Scaled,
    report: _Progress,
    z0: np.ndarray,
    options: Mapping[str, Any],
    max_nfev: int | None,
) -> tuple[bool, str]:
    """One run of scipy's ``method`` on the scaled problem from ``z0``: success and why it
    stopped, in words; the iterations are counted in ``report.iteration``."""
    opts = dict(options)
    if method == "least_squares":

        def jac(z: np.ndarray) -> np.ndarray:
            report.iteration += 1
            return view.jacobian(z)

        opts.setdefault("method", "trf")
        if max_nfev is not None:
            opts["max_nfev"] = max_nfev
        with blas_threads(1):
            out = so.least_squares(view.residuals, z0, jac=jac, **opts)
        return bool(out.success), _message(out, LEAST_SQUARES_STATUS)

    def callback(zk: np.ndarray) -> None:
        report.iteration += 1

    if max_nfev is not None:
        opts["maxfev"] = max_nfev
    scipy_method = {"powell": "Powell", "nelder-mead": "Nelder-Mead"}[method]
    out = so.minimize(view.loss, z0, method=scipy_method, callback=callback, options=opts)
    return bool(out.success), _message(out, MINIMIZE_STATUS)


def _collocate(
    obj: Objective,
    report: _Progress,
    start: np.ndarray,
    opts: Mapping[str, Any],
    deadline: float,
) -> tuple[np.ndarray, bool, str]:
    """``fit(method="collocation")``: IPOPT's parameters, success and message; their
    simulated loss is the last entry of ``obj.history``."""
    from .collocation import collocate

    best = obj.best  # the start's simulated loss

    def on_iteration(k: int, collocated: float, feasible: bool) -> None:
        nonlocal best
        if feasible:
            best = min(best, collocated)
        report.iteration = k
        report(collocated, best=best)

    out = collocate(
        obj.exps,
        obj.names,
        start,
        obj.rtol,
        obj.atol,
        opts,
        on_iteration,
        scale=obj.reference_loss(),
        deadline=deadline,
    )
    obj.n_simulations += out.n_simulations  # the start guesses' trajectories
    report.iteration = out.n_iterations
    message = f"{out.message}; collocated loss {out.objective:.6g}"
    if _quietly(obj, out.x, report) is None:  # the true loss: IDAS at the fitted values
        out.success = False
        message += f"; the fitted parameters do not simulate ({obj.failures[-1].message})"
    return out.x, out.success, message
