"""``identifiability(system, data, fitted=...)``: which parameters the measured outputs determine.

Local (practical) identifiability after Brun, Reichert & Kuensch, "Practical identifiability
analysis of large environmental simulation models", Water Resour. Res. 37(4), 2001, as De
Groote et al. use it for the slider-crank (Appendix B). For experiments ``e`` (a model and its
sample times ``t_k``), measured outputs ``y_i`` and parameters ``p_j`` at their values ``p0``,
the normalized sensitivity matrix has one row per sample of every output:

    S[(e, i, k), j] = d y_i(t_k) / d p_j * sigma_j / s_i,

from IDAS forward sensitivities (never finite differences; in many directions, a network's
weights, by the state transition matrix and quadratures, :mod:`solvers.transition`),
``sigma_j`` a parameter scale (default ``|p0_j|``, 1 where ``p0_j = 0``: relative changes)
and ``s_i`` an output scale (default the standard deviation of the simulated output over all
samples of all experiments, its largest magnitude if it is constant). A unit column of ``S``
is what a 100 % change of a parameter does to the outputs in units of their spread. From
``S`` (``n`` rows, columns ``s_j``):

- importance ``delta_j = ||s_j|| / sqrt(n)`` (Brun's ``delta^msqr``; the paper's Fig. 21 plots
  ``||s_j||``);
- column-normalized ``S~ = [s_j / ||s_j||]`` and the collinearity index of a subset ``K``,
  ``gamma_K = 1 / sqrt(min eig(S~_K^T S~_K)) = 1 / sigma_min(S~_K)``: a change of the parameters
  of ``K`` along the worst direction (unit length in ``S~`` coordinates) moves the outputs by only
  ``1 / gamma_K`` of what one parameter alone would, so the others compensate all but that
  fraction and standard errors grow by up to ``gamma_K``. ``gamma_K`` only grows when ``K``
  grows (interlacing); ``inf`` for a set holding a parameter without effect;
- Brun's determinant measure ``rho_K = det(S_K^T S_K)^(1 / 2|K|)`` (geometric mean of the
  singular values of the unnormalized ``S_K``), large for sets that are both influential and
  independent: the best identifiable subset of a size is the one with the largest ``rho_K``
  among those with ``gamma_K <= threshold``;
- the correlation matrix of the estimates, ``C = (S^T S)^-1``, ``corr_jl = C_jl / sqrt(C_jj
  C_ll)`` (from the SVD; singular values below ``sigma_max * n * eps`` are raised to that floor,
  so an exactly unidentifiable direction ``v`` gives ``corr -> v_j v_l / |v_j v_l|``), and the
  weakest combination: the right singular vector of ``sigma_min``, as relative changes
  ``dp_j / sigma_j`` (unit norm); ``(1, -1) / sqrt(2)`` on ``R`` and ``C`` says ``R C`` is all
  the outputs see.

Threshold: ``gamma_K > 10`` (default) marks a set that cannot be separated. Brun et al. call
collinearity indices of about 10 to 15 critical; FME's ``collin`` (Soetaert & Petzoldt) uses
about 20 as its rule of thumb. 10 is the cautious end: the outputs then keep 10 % of a unit
parameter change along the worst direction, so 1 % output noise already means ~10 % parameter
error there.

Blocks (e.g. a network's weights, :meth:`~learning.Unknown.parameter_names`): a block's columns
``S_B`` are reduced by their SVD ``S_B = U Sigma W^T`` to the dominant subspace, the ``r``
left singular vectors with ``sigma_i >= block_rtol * sigma_1`` (default 1 %: output directions
the block reaches with at most 100 times the weight change of its strongest one). The block
enters every subset as the orthonormal columns ``U_r`` (and ``U_r Sigma_r`` in ``rho_K``): for one
parameter ``j`` and a block, ``gamma = 1 / sqrt(1 - cos theta_j)``, ``theta_j`` the angle between
``s_j`` and the block's subspace, reported as ``overlap = cos theta_j`` (1: the block can
reproduce what ``p_j`` does). Its importance is ``sigma_1 / sqrt(n)``. The parameters'
correlation and weakest combination are then those with the blocks' directions estimated too:
``S~_p`` with the span of all block directions projected out (the Schur complement).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import acausal as ac
from acausal.errors import OptionError, unknown_name
from solvers.transition import simulate_sensitivities

from ..core import as_pairs, no_params

Subset = tuple[str, ...]
FULL_SEARCH = 8  # all subsets up to this many parameters and blocks, else up to size 4


@dataclass(frozen=True, eq=False)
class IdentifiabilityReport:
    """The outcome of :func:`identifiability` (see the module docstring for the math).

    ``S``: normalized sensitivities, rows experiment by experiment, output by output, sample
    by sample; columns ``columns`` (``params`` then every block's parameters).
    ``importance``, ``overlap`` (parameter -> block -> cos theta), ``block_rank``: by name;
    ``singular_values``: of ``S~`` over the parameters and the block directions;
    ``correlation``: ``params x params``; ``cosines``: ``S~_p^T S~_p`` (the paper's ``Q``,
    Fig. 22: cosines of the angles between the parameters' sensitivity vectors);
    ``weakest``: relative changes by parameter;
    ``collinearity``: ``gamma_K`` and ``determinant``: ``rho_K`` of every subset searched
    (tuples of names in the order of ``items``: ``params`` then block names).
    """

    params: tuple[str, ...]
    blocks: dict[str, tuple[str, ...]]
    outputs: tuple[str, ...]
    n_experiments: int
    S: np.ndarray
    columns: tuple[str, ...]
    output_scales: dict[str, float]
    param_scales: dict[str, float]
    values: dict[str, float]
    importance: dict[str, float]
    block_rank: dict[str, int]
    overlap: dict[str, dict[str, float]]
    singular_values: np.ndarray
    correlation: np.ndarray
    cosines: np.ndarray
    weakest: dict[str, float]
    collinearity: dict[Subset, float]
    determinant: dict[Subset, float]
    threshold: float

    @property
    def items(self) -> tuple[str, ...]:
        """What subsets are made of: the parameters, then the block names."""
        return (*self.params, *self.blocks)

    def unidentifiable(self) -> list[tuple[Subset, float]]:
        """The minimal sets that cannot be separated: ``gamma_K > threshold`` while every set
        with one item fewer stays at or below it; largest ``gamma_K`` first."""
        bad = [
            (k, g)
            for k, g in self.collinearity.items()
            if g > self.threshold
            and all(
                self.collinearity[sub] <= self.threshold
                for sub in itertools.combinations(k, len(k) - 1)
                if sub
            )
        ]
        return sorted(bad, key=lambda kg: -kg[1])

    def best(self, size: int) -> tuple[Subset, float, float] | None:
        """``(subset, gamma_K, rho_K)`` of the largest ``rho_K`` among the subsets of ``size``
        items with ``gamma_K <= threshold``; None when there is none."""
        ok = [k for k, g in self.collinearity.items() if len(k) == size and g <= self.threshold]
        if not ok:
            return None
        k = max(ok, key=self.determinant.__getitem__)
        return k, self.collinearity[k], self.determinant[k]

    def __str__(self) -> str:
        n, thr = self.S.shape[0], self.threshold
        lines = [
            f"identifiability of {len(self.params)} parameters"
            + (f" and {len(self.blocks)} blocks" if self.blocks else "")
            + f" from {', '.join(self.outputs)} ({self.n_experiments} experiments, {n} samples)",
            "  output scales s_i: "
            + ", ".join(f"{o} {s:.4g}" for o, s in self.output_scales.items()),
            f"  {'parameter':<28s} {'value':>11s} {'scale':>11s} {'importance':>11s}",
        ]
        for p in self.params:
            lines.append(
                f"  {p:<28s} {self.values[p]:>11.4g} {self.param_scales[p]:>11.4g} "
                f"{self.importance[p]:>11.4g}"
                + "".join(f"  overlap with {b} {c:.3f}" for b, c in self.overlap[p].items())
            )
        for b, names in self.blocks.items():
            lines.append(
                f"  block {b}: {len(names)} parameters, {self.block_rank[b]} dominant "
                f"directions, importance {self.importance[b]:.4g}"
            )
        lines.append(
            "singular values of the normalized S~: "
            + " ".join(f"{s:.3g}" for s in self.singular_values)
        )
        lines.append(
            "weakest combination (dp / scale): "
            + "  ".join(f"{v:+.3f} {p}" for p, v in self.weakest.items())
        )
        width = max(len(p) for p in self.params)
        for title, matrix in (
            ("correlation of the estimates, from (S^T S)^-1:", self.correlation),
            ("cosines between sensitivity vectors, S~^T S~ (De Groote et al.'s Q):", self.cosines),
        ):
            lines.append(title)
            for p, row in zip(self.params, matrix):
                lines.append(f"  {p:<{width}s} " + " ".join(f"{c:+.3f}" for c in row))
        lines.append(
            f"collinearity index gamma_K (threshold {thr:g}, Brun et al. 2001; "
            f"{len(self.collinearity)} subsets):"
        )
        if len(self.collinearity) <= 40:
            for k, g in self.collinearity.items():
                flag = "  cannot be separated" if g > thr else ""
                lines.append(f"  {_fmt(k)}  gamma {g:.4g}  rho {self.determinant[k]:.4g}{flag}")
        bad = self.unidentifiable()
        lines.append("sets that cannot be separated (minimal, gamma_K > threshold):")
        lines += [f"  {_fmt(k)}  gamma {g:.4g}" for k, g in bad] or ["  none"]
        lines.append("best identifiable subset of each size (largest rho_K, gamma_K <= threshold):")
        for size in range(1, max(map(len, self.collinearity)) + 1):
            found = self.best(size)
            lines.append(
                f"  {size}: none"
                if found is None
                else f"  {size}: {_fmt(found[0])}  gamma {found[1]:.4g}  rho {found[2]:.4g}"
            )
        return "\n".join(lines)


def _fmt(subset: Subset) -> str:
    return "{" + ", ".join(subset) + "}"


def _series(data: Any, name: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Sample times and measured columns of one experiment's ``data`` (fit's format, or
    just the times)."""
    if isinstance(data, Mapping):
        key = "t" if "t" in data else "time" if "time" in data else None
        if key is None:
            raise OptionError(f"identifiability: the data of {name} need the sample times as 't'")
        t = np.asarray(data[key], dtype=float).ravel()
        cols = {k: np.asarray(v, dtype=float).ravel() for k, v in data.items() if k != key}
    else:
        t, cols = np.asarray(data, dtype=float).ravel(), {}
    if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise OptionError(f"identifiability: the sample times of {name} must be 2+ increasing")
    for k, v in cols.items():
        if v.shape != t.shape:
            raise OptionError(
                f"identifiability: data[{k!r}] of {name} has {v.size} samples, t has {t.size}"
            )
    return t, cols


def _sensitivities(
    model: ac.Model,
    data: Any,
    outputs: Sequence[str] | None,
    names: Sequence[str],
    values: Mapping[str, float],
    t_start: float,
    rtol: float,
    atol: float,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per output: its simulated samples and ``d y / d p`` (samples x ``names``; zero for a
    parameter this model does not have), on the data times where the data are finite."""
    t, measured = _series(data, model.name)
    outputs = list(outputs) if outputs is not None else list(measured)
    if not outputs:
        raise OptionError(
            f"identifiability: no outputs for {model.name}: give outputs=[...] or measured "
            "columns in the data"
        )
    for o in outputs:
        model.check_name(o)
    if t[0] < t_start:
        raise OptionError(f"identifiability: data of {model.name} start at {t[0]:g} < t_start")
    offset = int(t[0] > t_start)  # simulate from t_start, use the samples from t[0]
    grid = np.concatenate([[t_start], t]) if offset else t
    own = [n for n in names if n in model.parameters]
    params = {k: v for k, v in values.items() if k in model.parameters}
    res = simulate_sensitivities(model, grid, rtol, atol, params, own)
    out = {}
    for o in outputs:
        mask = np.isfinite(measured[o]) if o in measured else np.ones(t.size, bool)
        D = np.zeros((int(mask.sum()), len(names)))
        for j, n in enumerate(names):
            if n in own:
                D[:, j] = res.sensitivity(o, n)[offset:][mask]
        out[o] = (res[o][offset:][mask], D)
    return out


def _subsets(
    items: Sequence[str],
    normalized: Mapping[str, np.ndarray],
    scaled: Mapping[str, np.ndarray],
    max_size: int,
) -> tuple[dict[Subset, float], dict[Subset, float]]:
    """``gamma_K`` from the normalized columns of each item (empty: no effect, ``inf``) and
    ``rho_K`` from the scaled ones, for every subset of at most ``max_size`` items."""
    gamma, rho = {}, {}
    for size in range(1, min(max_size, len(items)) + 1):
        for k in itertools.combinations(items, size):
            M = np.hstack([normalized[i] for i in k])
            dead = any(normalized[i].shape[1] == 0 for i in k) or M.shape[1] > M.shape[0]
            smin = 0.0 if dead else float(np.linalg.svd(M, compute_uv=False)[-1])
            gamma[k] = 1.0 / smin if smin > 0 else np.inf
            sv = np.linalg.svd(np.hstack([scaled[i] for i in k]), compute_uv=False)
            rho[k] = float(np.exp(np.mean(np.log(sv)))) if not dead and np.all(sv > 0) else 0.0
    return gamma, rho


def _correlation(A: np.ndarray, norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Correlation from ``(A^T A)^-1`` (singular values floored at ``sigma_max n eps``) and
    the weakest direction as ``dp / sigma`` (``A``'s columns are ``s_j / norms_j``)."""
    m = A.shape[1]
    A = np.vstack([A, np.zeros((max(m - A.shape[0], 0), m))])  # fewer samples than params
    _, sa, Vt = np.linalg.svd(A, full_matrices=False)
    floor = max(sa[0], 1e-300) * max(A.shape) * np.finfo(float).eps
    C = (Vt.T / np.maximum(sa, floor) ** 2) @ Vt
    d = np.sqrt(np.diag(C))
    v = Vt[-1] / np.where(norms > 0, norms, 1.0)
    return C / np.outer(d, d), v / np.linalg.norm(v) * np.sign(v[np.argmax(np.abs(v))])


def _analyze(
    S: np.ndarray,
    params: Sequence[str],
    blocks: Mapping[str, Sequence[str]],
    max_size: int | None,
    block_rtol: float,
) -> dict[str, Any]:
    """Every derived field of the report from ``S`` (columns: ``params``, then the blocks'
    parameters block by block)."""
    n, m = S.shape[0], len(params)
    Sp = S[:, :m]
    norms = np.linalg.norm(Sp, axis=0)
    norms[norms <= 1e-12 * max(norms.max(), 1e-300)] = 0.0  # no effect
    Sn = Sp / np.where(norms > 0, norms, 1.0)
    importance = dict(zip(params, (norms / np.sqrt(n)).tolist()))
    normalized = {p: Sn[:, [j]] if norms[j] > 0 else Sn[:, :0] for j, p in enumerate(params)}
    scaled = {p: Sp[:, [j]] for j, p in enumerate(params)}
    rank, start = {}, m
    for b, names in blocks.items():
        U, sv, _ = np.linalg.svd(S[:, start : start + len(names)], full_matrices=False)
        start += len(names)
        r = int(np.sum(sv >= block_rtol * sv[0])) if sv[0] > 0 else 0
        normalized[b], scaled[b], rank[b] = U[:, :r], U[:, :r] * sv[:r], r
        importance[b] = float(sv[0] / np.sqrt(n))
    dirs = [normalized[b] for b in blocks]
    overlap = {
        p: {b: float(np.linalg.norm(normalized[b].T @ Sn[:, j])) for b in blocks}
        for j, p in enumerate(params)
    }
    items = [*params, *blocks]
    gamma, rho = _subsets(
        items, normalized, scaled, max_size or (len(items) if len(items) <= FULL_SEARCH else 4)
    )
    A = Sn
    if dirs:  # the parameters with the blocks' directions estimated alongside
        Q, qs, _ = np.linalg.svd(np.hstack(dirs), full_matrices=False)
        Q = Q[:, qs > 1e-10 * qs.max(initial=0.0)]
        A = Sn - Q @ (Q.T @ Sn)
    correlation, weakest = _correlation(A, norms)
    return {
        "params": tuple(params),
        "blocks": {b: tuple(ns) for b, ns in blocks.items()},
        "importance": importance,
        "block_rank": rank,
        "overlap": overlap,
        "singular_values": np.linalg.svd(np.hstack([Sn, *dirs]), compute_uv=False),
        "correlation": correlation,
        "cosines": Sn.T @ Sn,
        "weakest": dict(zip(params, weakest.tolist())),
        "collinearity": gamma,
        "determinant": rho,
    }


def identifiability(
    system: ac.System | ac.Model | None,
    data: Mapping[str, Any] | Sequence[float] | None = None,
    *,
    fitted: Sequence[str] | None = None,
    outputs: Sequence[str] | None = None,
    blocks: Mapping[str, Sequence[str]] | None = None,
    experiments: Sequence[tuple[ac.System | ac.Model, Any]] | None = None,
    values: Mapping[str, float] | None = None,
    scales: Mapping[str, float] | None = None,
    param_scales: Mapping[str, float] | None = None,
    threshold: float = 10.0,
    max_size: int | None = None,
    block_rtol: float = 1e-2,
    t_start: float = 0.0,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    params: object = None,  # the names to fit were params=: see checks.no_params
) -> IdentifiabilityReport:
    """Local identifiability of ``fitted`` (and ``blocks``) from ``outputs`` (module docstring).

    ``data``: as for :func:`~learning.fit` (``{"t": times, "C1.v": measured, ...}``; the
    measured values only mark missing samples by nan) or just the sample times; with
    ``experiments=[(system or model, data), ...]`` several experiments (their own inputs and
    start values) form one ``S``. ``outputs``: names of the measured variables (default: the
    data's columns). ``blocks``: ``{name: parameter names}`` treated as one item each.
    ``values``: parameter values to evaluate at (default each model's; e.g. ``fit.params``);
    ``scales``: output scales ``s_i`` by name; ``param_scales``: ``sigma_j`` by name.
    ``max_size``: the largest subsets searched (default all when there are at most 8
    parameters and blocks, else 4). The simulation starts at ``t_start``.
    """
    runs = as_pairs(system, data, experiments, "identifiability", weighted=False)
    system, data, experiments = None, None, [(r.system, r.data) for r in runs]
    exps = ([(system, data)] if system is not None else []) + list(experiments or [])
    if not exps or any(d is None for _, d in exps):
        raise OptionError(
            "identifiability: give a system with its data (or sample times), or "
            "experiments=[(system, data), ...]"
        )
    models = [m if isinstance(m, ac.Model) else ac.compile(m) for m, _ in exps]
    blocks = {b: tuple(ns) for b, ns in (blocks or {}).items()}
    no_params("identifiability", params)
    params = list(fitted or ())
    names = [*params, *(n for ns in blocks.values() for n in ns)]
    if not params or any(not ns for ns in blocks.values()):
        raise OptionError("identifiability: name at least one parameter in fitted= and per block")
    twice = sorted({n for n in [*names, *blocks] if [*names, *blocks].count(n) > 1})
    if twice:
        raise OptionError(
            f"identifiability: {', '.join(twice)} named twice (params, blocks and block names "
            "must be distinct)"
        )
    known = {n: v for m in reversed(models) for n, v in m.parameters.items()}
    for n in [*names, *(values or {})]:
        if n not in known:
            raise unknown_name("parameter", n, known)
    p0 = {n: float((values or {}).get(n, known[n])) for n in names}
    sigma = np.array([(param_scales or {}).get(n, abs(p0[n]) or 1.0) for n in names])

    runs = [
        _sensitivities(m, d, outputs, names, values or {}, t_start, rtol, atol)
        for m, (_, d) in zip(models, exps)
    ]
    out_names = list(dict.fromkeys(o for r in runs for o in r))
    s_out = {}
    for o in out_names:
        y = np.concatenate([r[o][0] for r in runs if o in r])
        s = float((scales or {}).get(o, np.std(y) or np.max(np.abs(y), initial=0.0)))
        if not (np.isfinite(s) and s > 0):
            raise OptionError(f"identifiability: output {o} is zero throughout; give scales=")
        s_out[o] = s
    S = np.vstack([r[o][1] * sigma / s_out[o] for r in runs for o in r])
    return IdentifiabilityReport(
        outputs=tuple(out_names),
        n_experiments=len(exps),
        S=S,
        columns=tuple(names),
        output_scales=s_out,
        param_scales=dict(zip(names, sigma.tolist())),
        values=p0,
        threshold=float(threshold),
        **_analyze(S, params, blocks, max_size, block_rtol),
    )
