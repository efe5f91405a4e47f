"""``train_lagrangian``: a :class:`~learning.Lagrangian`'s network learned from samples of its
coordinates (ServoLNN's losses, Eq. 34-38), by the mini-batch Adam of :func:`learning.train`.

Each sample gives every coordinate's ``q``, ``v = q'``, ``a = q''`` and, for the coordinates
whose generalized force is measured (set ``K``), ``Q``. The component's inverse dynamics

    Q^(q, v, a) = M a + b,   b = (sum_k dM/dq_k v_k) v - dT/dq + dV/dq,

give three residuals per sample, each scaled by the spread of what it predicts:

* inverse: ``(Q^_k - Q_k) / std(Q_k)`` for ``k`` in ``K``;
* forward: ``(a^_K - a_K) / std(a_K)``, ``a^_K = M_KK^{-1} (Q_K - M_KE a_E - b_K)`` (``E``:
  the other, externally specified coordinates, whose accelerations are given);
* power: ``(dE^/dt - sum_K v_k Q_k - sum_E v_e Q^_e) / std(sum_K v_k Q_k)``. The network's
  energy obeys ``dE^/dt = v^T Q^`` identically (:mod:`learning.mechanics.lagrangian`), so this is
  ``sum_K v_k (Q^_k - Q_k)``: with every force measured it is the paper's power loss (36),
  with ``Q_E`` estimated its Eq. 38.

The loss is ``sum_kind w_kind mean_samples |r_kind|^2`` (``losses``: the weights ``w``; a
kind left out is not computed). A measured force that is identically zero (a free
coordinate: ``Q_theta = 0`` of a pendulum's pivot) has no spread: its inverse residual is
taken in accelerations, ``Q^_k / M_kk / std(a_k)``. When every measured force is zero the
equations are homogeneous: the power residual is then taken in accelerations too,
``sum_K v_k Q^_k / M_kk / std(sum_K v_k a_k)``, and the residuals are all scale-free.

What no residual sees is fixed by gauges added to the loss, ``log(mean_batch g / g_0)^2``
with ``g_0`` the start network's mean over the training samples: ``g = tr M_KK`` when the
equations are homogeneous (the Lagrangian's scale), ``g = tr M_EE`` when some forces are not
measured (``M_EE`` is free, see below). Neither changes what the data fix. Without them,
measured on the cart-pendulum without its servo force, force-unit residuals pulled the
Lagrangian towards zero (``M_thetatheta`` at 0.28 of the truth; theta'' 4 % off on a
held-out trial), and scale-free ones let ``M_xx`` fall to ``eps``, where positive
definiteness caps ``|M_xtheta| <= sqrt(M_xx M_thetatheta)`` below the truth's (theta'' 11 %
off).

What the data cannot tell: without ``Q_E`` every residual is unchanged when a function of
``q_E`` alone is added to ``V``, or when ``M_EE`` changes by a matrix function of ``q_E``
alone (neither enters ``Q^_K``; ServoLNN, Section 4.2); and when every measured force is
zero (a free pendulum's pivot) the equations are homogeneous, so the Lagrangian's scale is
not fixed either. The result's message says which, and :meth:`learning.Lagrangian.identified`
evaluates what is identified: ``M_KK``, ``M_KE``, ``dV/dq_K`` (divided by the gauge when the
scale is free) and the forward dynamics.
"""

from __future__ import annotations

import time as _time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import casadi as cs
import numpy as np

from acausal.errors import OptionError
from solvers.buffers import numeric_call

from ..core import Experiment, as_samples, thread_count
from ..optimization import AdamOptions, FitResult, Polish, polish_options, tall_least_squares
from ..training import SampleLoss
from .lagrangian import Lagrangian, inverse_dynamics
from .lagrangian_net import FLOOR_BINDS, MassFloorWarning

LOSSES = ("inverse", "forward", "power")


def train_lagrangian(
    component: Lagrangian,
    data: Experiment | Sequence[Experiment] | Mapping[str, Any] | Sequence[Mapping[str, Any]],
    *,
    losses: Mapping[str, float] | None = None,
    epochs: int = 200,
    batch: int = 256,
    lr: float = 1e-3,
    decay: float = 1.0,
    seed: int = 0,
    validation: Experiment | Sequence[Experiment] | Mapping | Sequence[Mapping] = (),
    patience: int | None = None,
    polish: bool | str | Mapping[str, Any] = False,
    max_nfev: int = 200,
    x0: Mapping[str, float] | None = None,
    threads: int | None = None,
    progress: bool | str | Callable[..., None] = True,
) -> FitResult:
    """Learn ``component``'s network weights from ``data`` (see the module docstring).

    ``data``: one or more :class:`~learning.Experiment` values or records (dicts; e.g. one
    per trial) of columns named by the component's
    variables, ``"q_<c>"``, ``"v_<c>"``, ``"a_<c>"`` for every coordinate ``c`` and
    ``"Q_<c>"`` for those whose generalized force is measured; samples need no common time
    grid (only the values at each sample matter). ``losses``: weights of ``"inverse"``,
    ``"forward"``, ``"power"`` (default 1 each). ``validation``: held-out records scored
    after each epoch (the best epoch is kept). ``polish``: then Levenberg-Marquardt on all
    the training residuals at once (:mod:`learning.optimization.levenberg_marquardt`, CasADi's exact
    Jacobian), kept if it lowers the validation score (the training loss without
    validation): True or ``"least_squares"`` (at most ``max_nfev`` evaluations, tolerances
    1e-8), or a dict as :func:`learning.train`'s, ``{"max_iter": 50, "tol": 1e-10}``
    (:func:`~learning.optimization.optimizers.polish_options`). ``x0``: start weights by full
    name (e.g. an earlier result's ``params``; default the network's drawn ones).
    ``threads``: a batch's samples split over that many threads (default every core). The rest as
    :func:`learning.train`. The result's ``params`` are the component's full parameter
    names (``"cp.nn_W1_0_0"``): pass them to ``simulate(..., params=)`` of any system
    holding a component of that name.
    """
    tic = _time.perf_counter()
    adam = AdamOptions.checked(
        "train_lagrangian", progress, epochs, batch, lr, decay, seed, patience
    )
    if not isinstance(component, Lagrangian) or component.network is None:
        raise OptionError(
            "train_lagrangian: give an ln.Lagrangian component with a network= (its "
            f"weights are what is learned); got {component!r}"
        )
    threads = thread_count("train_lagrangian", threads)
    polish = polish_options(
        polish, "train_lagrangian", {"least_squares": Polish("least_squares", max_nfev, 1e-8)}
    )
    losses = dict(losses if losses is not None else dict.fromkeys(LOSSES, 1.0))
    bad = sorted(set(losses) - set(LOSSES))
    if bad or not any(w > 0 for w in losses.values()):
        raise OptionError(
            f"train_lagrangian: losses={losses!r} must weight one or more of {LOSSES} "
            "with positive numbers"
        )
    data = as_samples(data, "train_lagrangian", "data")
    validation = as_samples(validation, "train_lagrangian", "validation")
    coordinates = component.coordinates
    samples = _samples(data, coordinates, "data")
    known = [c for c in coordinates if f"Q_{c}" in samples]
    if not known:
        raise OptionError(
            "train_lagrangian: no generalized force is measured; give Q_<c> for one or more "
            f"of the coordinates {', '.join(coordinates)}"
        )
    homogeneous = len(_unforced(samples, known)) == len(known)
    checks = _samples(validation, coordinates, "validation", known) if validation else None
    residual = _residual(component, known, samples, losses)
    names, theta0 = _start(component, x0)
    columns = _columns(samples, coordinates, known)
    held = _columns(checks, coordinates, known) if checks else None
    # homogeneous: the scale the data cannot fix is the start's, mean tr M_KK = m_0
    # what the data cannot fix stays at the start's: tr M_KK (homogeneous), tr M_EE
    traces = np.mean(np.asarray(residual.map(columns.shape[1])(columns, theta0)[1]), axis=1)
    gauge = traces * [homogeneous, len(known) < len(coordinates)]
    loss = SampleLoss(residual, theta0.size, gauge, threads)
    scored = held if held is not None else columns  # the data that pick the best weights

    run = loss.adam(columns, theta0, held, adam, progress, tic)
    best = run.x
    unmeasured = [c for c in coordinates if c not in known]
    message = run.message(losses)
    if polish:
        polished, why = _least_squares(residual, columns, best, polish, gauge)
        score = loss.total(scored, polished)
        kept = score < min(run.checked)
        best = polished if kept else best
        message += f", then least squares ({why}; {'kept' if kept else 'not kept: no better'})"
    _warn_at_floor(component, columns[: len(coordinates)], best, known)
    message += _not_identified(unmeasured, homogeneous, gauge[0])
    return run.result(
        dict(zip(names, best.tolist())),
        {},
        loss.total(columns, best),
        message,
        "lagrangian",
        dict(zip(names, theta0.tolist())),
        tic,
    )


def _start(component: Lagrangian, x0: Mapping[str, float] | None) -> tuple[list[str], np.ndarray]:
    """The weights' names and start values: the component's, overridden by ``x0``."""
    names = component.parameter_names()
    start = {**component.initial_params(), **(x0 or {})}
    unknown = sorted(set(x0 or {}) - set(names))
    if unknown:
        raise OptionError(
            f"train_lagrangian: x0 names {unknown[:3]}, not weights of {component.full_name} "
            f"(e.g. {names[0]!r})"
        )
    return names, np.array([start[n] for n in names])


def _not_identified(unmeasured: Sequence[str], homogeneous: bool, scale: float) -> str:
    """What the data leave unidentified, for the message: the parts of ``M`` and ``V``
    on unforced coordinates alone, and with every measured force zero the scale (fixed
    at the start's mean ``tr M_KK`` = ``scale``)."""
    note = ""
    if unmeasured:
        note += (
            f"; without Q for {', '.join(unmeasured)} the parts of M and V that depend on "
            f"{', '.join(unmeasured)} alone are not identified (a family of solutions): "
            "compare forward dynamics, M_KK, M_KE and dV/dq_K (Lagrangian.identified), not "
            "raw M or V"
        )
    if homogeneous:
        note += (
            "; every measured force is zero, so the Lagrangian's scale is not identified "
            f"either (any multiple fits; fixed at the start's mean tr M_KK = {scale:.4g}): "
            "compare them divided by it (Lagrangian.identified(..., scale_free=True))"
        )
    return note


def _warn_at_floor(
    component: Lagrangian, q: np.ndarray, theta: np.ndarray, known: Sequence[str]
) -> None:
    """A :class:`~learning.mechanics.lagrangian_net.MassFloorWarning` when the trained ``M_KK``'s
    smallest eigenvalue is within ``FLOOR_BINDS`` floors at some training sample ``q``
    (``K``: the ``known`` coordinates, whose block the data identify)."""
    net = component.network
    block = [component.coordinates.index(c) for c in known]
    share, lowest = net.floor_share(q, dict(zip(net.raw_names, theta.tolist())), block)
    if share > 0:
        floor = f"eps={net.eps:g}" if net.eps is not None else "the default relative floor"
        warnings.warn(
            MassFloorWarning(
                f"train_lagrangian: {component.full_name}'s learned M_KK (K: "
                f"{', '.join(known)}) has its smallest "
                f"eigenvalue within {FLOOR_BINDS:g} floors ({floor}) at {share:.0%} of the "
                f"training samples (lowest {lowest:.3g} floors): the true M may have a smaller "
                "eigenvalue than the floor allows; give the LagrangianNet a smaller eps= "
                "(eps=None: a floor relative to M's own scale)"
            ),
            stacklevel=3,
        )


def _samples(
    data: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    coordinates: Sequence[str],
    what: str,
    known: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """The records' columns concatenated, checked: every ``q_/v_/a_<c>`` (and ``Q_<c>`` for
    ``known``), finite, of one length per record."""
    records = [data] if isinstance(data, Mapping) else list(data)
    if not records:
        raise OptionError(f"train_lagrangian: {what} holds no record")
    need = [f"{k}_{c}" for c in coordinates for k in ("q", "v", "a")]
    need += [f"Q_{c}" for c in known or ()]
    out: dict[str, list[np.ndarray]] = {}
    for j, rec in enumerate(records):
        missing = [n for n in need if n not in rec]
        if missing:
            raise OptionError(
                f"train_lagrangian: {what} record {j} lacks {', '.join(missing)} (every "
                "coordinate's q_, v_, a_ and the measured forces Q_)"
            )
        columns = [n for n in rec if n in need or (known is None and n.startswith("Q_"))]
        sizes = set()
        for n in columns:
            v = np.asarray(rec[n], dtype=float).ravel()
            if not np.all(np.isfinite(v)):
                raise OptionError(f"train_lagrangian: {what} record {j}: {n!r} has NaN or inf")
            sizes.add(v.size)
            out.setdefault(n, []).append(v)
        if len(sizes) != 1:
            raise OptionError(f"train_lagrangian: {what} record {j}: columns of unequal length")
    if known is None:
        extra = [n for n in out if n.startswith("Q_") and n[2:] not in coordinates]
        if extra:
            raise OptionError(
                f"train_lagrangian: {', '.join(extra)} name no coordinate of the component "
                f"({', '.join(coordinates)})"
            )
        if len({len(v) for v in out.values()}) != 1:
            raise OptionError("train_lagrangian: every record needs the same force columns")
    return {n: np.concatenate(v) for n, v in out.items()}


def _unforced(samples: dict[str, np.ndarray], known: Sequence[str]) -> list[str]:
    """The coordinates of ``known`` whose measured force is zero at every sample."""
    return [c for c in known if not np.any(samples[f"Q_{c}"])]


def _columns(
    samples: dict[str, np.ndarray], coordinates: Sequence[str], known: Sequence[str]
) -> np.ndarray:
    """One column per sample: ``[q; v; a; Q_K]``."""
    rows = [f"{k}_{c}" for k in ("q", "v", "a") for c in coordinates]
    return np.vstack([samples[n] for n in [*rows, *(f"Q_{c}" for c in known)]])


def _residual(
    component: Lagrangian,
    known: Sequence[str],
    samples: dict[str, np.ndarray],
    losses: Mapping[str, float],
) -> cs.Function:
    """``(sample column, theta) -> (weighted residuals, tr M_KK)`` of one sample (SX)."""
    unforced = _unforced(samples, known)
    coords = component.coordinates
    n = len(coords)
    K = [coords.index(c) for c in known]
    E = [i for i in range(n) if i not in K]
    col = cs.SX.sym("sample", 3 * n + len(K))
    q, v, a, Q = col[:n], col[n : 2 * n], col[2 * n : 3 * n], col[3 * n :]
    net = component.network
    theta = cs.SX.sym("theta", len(net.raw_names))
    M, V = net.mass_and_potential(q, dict(zip(net.raw_names, cs.vertsplit(theta))))
    Qhat, bias, _ = inverse_dynamics(M, V, q, v, a)
    zero = [j for j, c in enumerate(known) if c in unforced]
    homogeneous = len(zero) == len(known)
    # a zero force's residual in accelerations, Q^_k / M_kk
    weight = cs.SX.ones(len(K))
    for j in zero:
        weight[j] = 1 / M[K[j], K[j]]
    accel = np.array([np.std(samples[f"a_{c}"]) for c in known])
    force = np.array([np.std(samples[f"Q_{c}"]) for c in known])
    power = sum(samples[f"v_{c}"] * samples[f"{'a' if homogeneous else 'Q'}_{c}"] for c in known)
    spread = {
        "inverse": np.where(force > 0, force, accel),
        "forward": accel,
        "power": np.array([np.std(power)]),
    }
    parts = []
    for kind in LOSSES:
        w = losses.get(kind, 0.0)
        if not w:
            continue
        if kind == "inverse":
            r = (Qhat[K] - Q) * weight
        elif kind == "forward":
            rhs = Q - cs.mtimes(M[K, E], a[E]) - bias[K] if E else Q - bias[K]
            r = cs.solve(M[K, K], rhs) - a[K]
        else:
            r = cs.dot(v[K], (Qhat[K] - Q) * weight) if homogeneous else cs.dot(v[K], Qhat[K] - Q)
        scale = np.where(spread[kind] > 0, spread[kind], 1.0)
        parts.append(np.sqrt(w) * r / cs.DM(scale))
    traces = cs.vertcat(cs.trace(M[K, K]), cs.trace(M[E, E]) if E else 0)
    return cs.Function("lagrangian_residual", [col, theta], [cs.vertcat(*parts), traces])


def _least_squares(
    residual: cs.Function,
    columns: np.ndarray,
    theta: np.ndarray,
    how: Polish,
    gauge: np.ndarray,
) -> tuple[np.ndarray, str]:
    """Levenberg-Marquardt from ``theta`` on every sample's residuals, ``r / sqrt(count)``
    stacked (their squares sum to the loss), and a row per nonzero ``gauge`` entry, with
    ``how``'s budget (evaluations) and tolerance (its ``ftol``, ``xtol``, ``gtol``)."""
    count = columns.shape[1]
    col, th = cs.SX.sym("sample", columns.shape[0]), cs.SX.sym("theta", theta.size)
    r, g = residual(col, th)
    outs = [cs.densify(e) for e in (r, cs.jacobian(r, th), g, cs.jacobian(g, th))]
    # one call over every sample, theta shared, results written into numpy buffers
    per_sample = cs.Function("rJ", [col, th], outs).map("rJ_all", "serial", count, [1], [])
    rows, fixed = r.numel(), np.flatnonzero(gauge)

    def fn(cols: np.ndarray, x: np.ndarray) -> list[np.ndarray]:
        """Sample-major residuals and their Jacobian, over ``sqrt(count)``, then the gauges'."""
        R, J, G, dG = numeric_call(per_sample, [cols, x], 4)
        J = J.reshape(rows, count, -1).transpose(1, 0, 2).reshape(count * rows, -1)
        R, J = R.T.ravel() / np.sqrt(count), J / np.sqrt(count)
        mean = G.mean(axis=1)[fixed]
        dmean = dG.reshape(G.shape[0], count, -1).mean(axis=1)[fixed]
        return [
            np.append(R, np.log(mean / gauge[fixed])),
            np.vstack([J, dmean / mean[:, None]]),
        ]

    return tall_least_squares(lambda x: fn(columns, x), theta, how)
