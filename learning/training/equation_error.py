"""``fit_equations(model, records, ...)``: parameters fitted so that the model's equations hold
on measured (or reconstructed) trajectories: equation error, no simulation.

The compiled model's states obey ``x' = F(x, u, p, t) = f(x, z(x, u, p, t), u, p, t)`` (the
Newton unknowns ``z`` solved inside, as in :mod:`learning.training.rollout`). Given at every sample
``k`` of every record the states ``x_k``, the inputs ``u_k`` and the derivatives
``x'_k`` of the states whose derivative depends on the fitted parameters (for a mechanism:
the velocities' derivatives, the accelerations, e.g. from :func:`learning.reconstruct`; a
kinematic ``q' = v`` carries no parameter and is left out), the residuals are

    r_{k,s} = (F_s(x_k, u_k, p) - x'_{k,s}) / sigma_s,   sigma_s = std(x'_s) over the records,

and ``L(p) = mean_k sum_s r_{k,s}^2``. They are minimized over the scaled parameters
``q = p / |p_0|`` (physical ones; network weights unscaled) by scipy's least squares with
CasADi's exact Jacobian: Levenberg-Marquardt (MINPACK) when no parameter is bounded, else
the trust-region reflective method (physical parameters that start positive are kept so).

Parameters that enter linearly are solved in closed form. CasADi decides it: a set ``P_L``
of parameters enters ``r`` affinely when the Jacobian ``dr/dp_L`` does not depend on
``p_L`` (``casadi.depends_on``); the set is grown one parameter at a time in the order
given. When every fitted parameter is in it, ``r = J q + r_0`` and one bounded linear
least-squares solve (``scipy.optimize.lsq_linear``) is the answer; otherwise the linear
physical parameters start from that solve with the others at their starts, and the
trust-region iterations take it from there. (A network's output layer is linear too, but
at a random start its hidden units are nearly collinear, and the closed form would give
huge cancelling output weights that no iteration recovers from: it starts as drawn.)
In ``F``, a mass divides the forces, so a mechanism's inertias do not enter linearly;
stiffnesses and friction coefficients do when the masses are not fitted.

Closed-loop records: a controller that is part of the model is simply more equations; or
the measured actuator signal is given as an input (``inputs={"motor.tau_constant":
"tau"}``) and the controller is left out of the model. The result is a
:class:`~learning.FitResult` (``method="equation_error"``) whose ``params`` start an
output-error fit (``ln.fit(..., x0=result.params)``) or a validation simulation
(``result.model``), with standard errors (:mod:`learning.optimization.uncertainty`; the residuals of
filtered derivatives are correlated over the filter's window: ``lags``, the Bartlett
kernel's length in samples, defaults to 10).
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import casadi as cs
import numpy as np
import scipy.optimize as so

import acausal as ac
from acausal.errors import OptionError
from solvers import DAEFunctions
from solvers.buffers import numeric_call

from ..core import Experiment, as_records, blas_threads, finite_column, no_params, with_values
from ..laws import unknowns
from ..optimization import (
    FitResult,
    Polish,
    Uncertainty,
    from_jacobian,
    least_squares,
    remember_last,
)
from .rollout import check_smooth, newton_along, state_derivative, with_inputs
from .rollout_loss import with_trained
from .rollout_training import Trained, compiled


def fit_equations(
    system: ac.System | ac.Model,
    records: Experiment | Sequence[Experiment] | Sequence[Mapping[str, Any]],
    *,
    fitted: Sequence[str] | None = None,
    physical: Sequence[str] = (),
    inputs: Mapping[str, str] | None = None,
    derivatives: Mapping[str, str] | None = None,
    x0: Mapping[str, float] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    lags: int = 10,
    max_nfev: int = 1000,
    params: object = None,  # the names to fit were params=: see checks.no_params
) -> FitResult:
    """Fit ``fitted`` (default: every :class:`~learning.Unknown`'s raw parameters) and
    ``physical`` parameters by equation error (see the module docstring).

    ``records``: :class:`~learning.Experiment` values (one or a sequence; their
    ``inputs`` and ``params`` drive parameters at each sample, so ``inputs=`` stays empty)
    or the older list of dicts. Each measures (each dict is ``{"t": times, <state>: values,
    "der(<state>)": values, <input column>: values}``) every state of the compiled model,
    and the derivative of every state whose derivative the fitted parameters reach
    (``derivatives`` renames those columns: ``{state: column}``). ``inputs``: ``{input
    parameter: column}`` of the dicts, the parameter taking the column's value at each
    sample. ``x0``, ``bounds``: as :func:`learning.train`.
    """
    no_params("fit_equations", params)
    tic = _time.perf_counter()
    model, source = compiled(system, "fit_equations")
    check_smooth(model)
    records, inputs, weighted = as_records(records, model, inputs, "fit_equations", "records")
    if weighted:
        raise OptionError(
            f"fit_equations: weighs each derivative by its spread, not by weights= (given for "
            f"{', '.join(weighted)}); leave the experiments' weights out"
        )
    tp = Trained(model, source, fitted, physical, x0, bounds, "fit_equations")
    for n in inputs:
        if n not in model.parameters:
            raise OptionError(f"fit_equations: the input {n!r} is not a parameter of the model")
    residual, rows = _residual(model, tp, list(inputs))
    driven = [model.states[i] for i in rows]
    columns = {s: (derivatives or {}).get(s, f"der({s})") for s in driven}
    X, Z, U, T, D = _samples(model, records, inputs, columns, tp)
    sigma = np.std(D, axis=1)
    sigma = np.where(sigma > 0, sigma, 1.0)
    count = X.shape[1]
    mapped = residual.map("residual_all", "serial", count, [5, 6], [])  # q, p shared
    weight = 1.0 / (sigma[:, None] * np.sqrt(count))

    @remember_last
    def rJ(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Residuals (sample-major: sample k's rows together) and their Jacobian."""
        R, Js = numeric_call(mapped, [X, Z, U, T, D, x, tp.p], 2)
        J = (Js.reshape(len(rows), count, -1) * weight[:, :, None]).transpose(1, 0, 2)
        return (R * weight).T.ravel(), J.reshape(count * len(rows), -1)

    q0, message = _solve(rJ, model, tp, rows, max_nfev)
    rv, Jv = rJ(q0)
    fitted = tp.values(q0)
    linked = np.concatenate([_linked(rec) for rec in records])
    spread = _standard_errors(tp, q0, rv, Jv, (count, len(rows)), linked, lags)
    every = dict(zip(model.parameters, tp.p.tolist()))
    return FitResult(
        params=fitted,
        weights={u.full_name: u.weights(fitted) for u in unknowns([source])} if source else {},
        loss=float(np.sum(rv**2)),
        loss_history=[],
        n_simulations=0,
        n_failed=0,
        wall_time=_time.perf_counter() - tic,
        success=True,
        message=message,
        method="equation_error",
        start={n: float(tp.p[k]) for n, k in zip(tp.names, tp.trained)},
        n_iterations=0,
        models=(model.with_parameters({**every, **fitted}),),
        systems=(with_values(source, fitted),) if source is not None else (),
        uncertainty=spread,
    )


def _solve(
    rJ: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    model: ac.Model,
    tp: Trained,
    rows: list[int],
    max_nfev: int,
) -> tuple[np.ndarray, str]:
    """The scaled parameters that minimize the equation error, and how: those the
    residuals are linear in by one linear least-squares solve, the rest by least squares
    (trust-region reflective with bounds, else MINPACK's Levenberg-Marquardt)."""
    q0 = tp.p[tp.trained] / tp.scales
    linear = _linear_set(model, tp, rows)
    if len(linear) < len(tp.names):  # a network's output layer is linear but ill-posed at
        linear = [j for j in linear if tp.names[j] in tp.physical]  # its random start
    message = ""
    if linear:
        q0 = _closed_form(rJ, q0, linear, tp)
        message = f"{len(linear)} of {len(tp.names)} parameters linear: solved in closed form"
    if len(linear) < len(tp.names):
        bounded = np.any(np.isfinite(tp.lo)) or np.any(np.isfinite(tp.hi))
        how = Polish("least_squares", max_nfev, 1e-8)  # scipy's default tolerances
        q0, why = least_squares(rJ, q0, how, (tp.lo, tp.hi), "trf" if bounded else "lm")
        message = (message + "; " if message else "") + f"least squares ({why})"
    return q0, message


def _standard_errors(
    tp: Trained,
    q0: np.ndarray,
    rv: np.ndarray,
    Jv: np.ndarray,
    shape: tuple[int, int],
    linked: np.ndarray,
    lags: int,
) -> Uncertainty:
    """Standard errors of the physical parameters (of all when there are none), the
    others profiled out, from the residuals ``rv`` and Jacobian ``Jv`` at ``q0``;
    ``shape``: (samples, residual rows per sample), the residuals sample-major; the noise
    filtered (correlated along a record over ``lags`` samples, ``linked``)."""
    count, n_rows = shape
    nuisance = [j for j, n in enumerate(tp.names) if tp.physical and n not in tp.physical]
    shown = [j for j in range(len(tp.names)) if j not in nuisance]
    window = np.repeat(np.arange(count), n_rows)
    kind = np.tile(np.arange(n_rows), count)
    return from_jacobian(
        [tp.names[j] for j in shown],
        (q0 * tp.scales)[shown],
        rv,
        Jv,
        nuisance,
        tp.scales,
        (window, kind, linked),
        noise="filtered",
        lags=lags,
    )


def _residual(model: ac.Model, tp: Trained, inputs: list[str]) -> tuple[cs.Function, list[int]]:
    """``(x, z guess, u, t, x'_meas, q, p) -> (F_s - x'_s, d/dq)`` of one sample for the
    driven states ``s`` (those whose derivative depends on ``q``), and their rows; SX
    (fast to map over samples) unless a Newton block's rootfinder is inside."""
    names = list(model.parameters)
    at = [names.index(n) for n in inputs]
    derivative = state_derivative(model, DAEFunctions(model))
    x, guess = cs.MX.sym("x", model.dae.x.numel()), cs.MX.sym("z", model.dae.z.numel())
    u, t = cs.MX.sym("u", len(inputs)), cs.MX.sym("t")
    q, base = cs.MX.sym("q", len(tp.names)), cs.MX.sym("p", model.p.numel())
    p = with_inputs(with_trained(base, q, tp.trained, tp.scales), at, u)
    xdot = derivative(x, guess, p, t)[0]
    rows = sorted(set(cs.jacobian(xdot, q).sparsity().row()))
    if not rows:
        raise OptionError(
            f"fit_equations: no state derivative of {model.name} depends on "
            f"{', '.join(tp.names)}; nothing for equation error to fit"
        )
    measured = cs.MX.sym("xdot", len(rows))
    r = xdot[rows] - measured
    outs = [cs.densify(r), cs.densify(cs.jacobian(r, q))]
    fn = cs.Function("residual", [x, guess, u, t, measured, q, base], outs)
    return (fn if guess.numel() else fn.expand()), rows


def _linear_set(model: ac.Model, tp: Trained, rows: list[int]) -> list[int]:
    """The parameters (indices into ``tp.names``) that enter the driven rows of ``F``
    jointly affinely, grown one at a time in order: ``dF / dp_L`` must not depend on
    ``p_L``. Checked on the model's symbolic ``f`` (SX, exact structure); a model with a
    Newton block (``z`` solved numerically) has none."""
    if model.dae.z.numel():
        return []
    f = model.dae.ode[rows]
    ps = [model.p[k] for k in tp.trained]
    chosen: list[int] = []
    for j in range(len(ps)):
        sub = cs.vertcat(*[ps[i] for i in [*chosen, j]])
        if not cs.depends_on(cs.jacobian(f, sub), sub):
            chosen.append(j)
    return chosen


def _closed_form(
    rJ: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    q0: np.ndarray,
    linear: list[int],
    tp: Trained,
) -> np.ndarray:
    """``q0`` with the linear parameters at their bounded least-squares optimum, the others
    held: ``r = r(q0) + J_L (q_L - q0_L)``."""
    r, J = rJ(q0)
    JL = J[:, linear]
    target = JL @ q0[linear] - r.ravel()
    with blas_threads(1):
        out = so.lsq_linear(JL, target, bounds=(tp.lo[linear], tp.hi[linear]))
    q = q0.copy()
    q[linear] = out.x
    return q


def _samples(
    model: ac.Model,
    records: Sequence[Mapping[str, Any]],
    inputs: Mapping[str, str],
    columns: Mapping[str, str],
    tp: Trained,
) -> tuple[np.ndarray, ...]:
    """States, Newton guesses, inputs, times and measured derivatives of every sample of
    every record, one column per sample."""
    if not records:
        raise OptionError("fit_equations: give one or more records")
    blocks: list[list[np.ndarray]] = [[], [], [], [], []]
    for j, rec in enumerate(records):
        if "t" not in rec:
            raise OptionError(f"fit_equations: record {j} has no times 't'")
        where = f"fit_equations: record {j}"
        t = finite_column("t", rec["t"], None, where)
        if np.any(np.diff(t) <= 0):
            raise OptionError(f"fit_equations: record {j}: 't' must increase")
        keys = {c: model.measured_name(rec, c) or c for c in [*model.states, *columns.values()]}
        needed = [*keys.values(), *inputs.values()]
        missing = [" = ".join(model.names_of(c)) for c in needed if c not in rec]
        if missing:
            raise OptionError(
                f"fit_equations: record {j} lacks {', '.join(missing)} (the states "
                f"{', '.join(model.states)}, the derivatives the parameters reach "
                f"{', '.join(columns.values())} and the inputs)"
            )

        X = _stack(rec, [keys[s] for s in model.states], t, where)
        U = _stack(rec, list(inputs.values()), t, where)
        D = _stack(rec, [keys[c] for c in columns.values()], t, where)
        names = list(model.parameters)
        at = [names.index(n) for n in inputs]
        Z = newton_along(model, DAEFunctions(model), X, U, t, at, tp.p)
        for part, block in zip(blocks, (X, Z, U, t[None, :], D)):
            part.append(block)
    return tuple(np.hstack(b) for b in blocks)


def _stack(rec: Mapping[str, Any], names: list[str], t: np.ndarray, where: str) -> np.ndarray:
    """The record's columns ``names``, a row each of finite floats (``(0, len(t))`` for
    none), or an error naming the column and its length or first bad sample."""
    for n in names:
        if np.size(rec[n]) != t.size:
            raise OptionError(f"{where}: column {n!r} has {np.size(rec[n])} values, not {t.size}")
    rows = [finite_column(n, rec[n], t.size, where, t) for n in names]
    return np.vstack(rows) if rows else np.zeros((0, t.size))


def _linked(rec: Mapping[str, Any]) -> np.ndarray:
    """Consecutive samples of a record are linked; the last is not linked to the next record."""
    n = np.asarray(rec["t"]).size
    return np.r_[np.ones(n - 1, dtype=bool), False]
