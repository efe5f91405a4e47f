"""Standard errors and correlations of fitted parameters from the residuals' Jacobian.

Near a least-squares optimum ``p^`` of ``L(p) = |r(p)|^2`` whose residuals are independent with
one variance ``s^2``, the estimate's covariance is ``s^2 (J^T J)^-1`` with ``J = dr/dp`` (the
Gauss-Newton approximation of the inverse Hessian), and

    s^2 = |r_I|^2 / (m_I - n),

``I`` the rows of ``J`` that are not identically zero (a row no parameter moves, e.g. a
rollout's kinematic ``theta_{k+1} = theta_k + h omega_k``, carries no noise of the fit),
``m_I`` their count and ``n`` the number of fitted parameters.

Nuisance parameters (a network's weights, estimated alongside but not reported) are
profiled out: with ``N`` the nuisance columns of ``J`` and ``P_N`` the orthogonal projector
on their span (from an SVD, rank-deficient ``N`` allowed: dead ReLU units, redundant biases),

    cov(p) = s^2 (J_p^T (I - P_N) J_p)^-1,

the Schur complement of the nuisance block: the spread of ``p`` when the nuisance
parameters follow it to their best values. A parameter the nuisance block can mimic
(``J_p`` nearly in the span of ``N``) gets a large standard error.

Correlated residuals. A one-step prediction from measured states has the residual
``x_{k+1} - x_k - h f(x_k)``: white measurement noise ``n_k`` of the states enters it as
``n_{k+1} - n_k`` (to first order, neglecting ``h df/dx n_k`` for ``h |df/dx| << 1``), so
consecutive steps' residuals are correlated, and the first formula overstates the spread:
a smooth ``J`` sees the differenced noise nearly cancel (16-21x on a test oscillator). Given
each row's window, its kind (the state it predicts) and which consecutive windows share a
sample, ``noise="measurement"`` takes the residuals of kind ``k`` as ``D n``, ``D`` the
difference along each chain of linked windows and ``n`` white with ``s_k^2 = g0_k / 2``
(``g0_k``: the kind's mean squared residual with the ``m_I / (m_I - n)`` correction), so

    cov(p) = B^-1 (sum_k s_k^2 (D^T J~_k)^T (D^T J~_k)) B^-1,   B = J~^T J~,

``J~ = (I - P_N) J_p`` and ``D^T J~_k`` the kind's first row, the differences of
consecutive rows and the last row, chain by chain: the cancellation done exactly.
``noise="process"`` takes them as white with one variance ``g0_k`` per kind (the first
formula, kind by kind). Which one holds is the user's knowledge, not the residuals':
estimating the split from the lag-1 autocovariance fails, because a white part of a few
percent (within that estimate's sampling error) dominates the result.

``noise="filtered"``: residuals correlated over a few samples of unknown shape (equation
error on derivatives from a smoothing filter: positively correlated over its window), the
Newey-West sandwich ``B^-1 M B^-1`` with ``M = sum_{|l| <= L} (1 - |l| / (L + 1))
sum_w g_w g_{w+l}^T`` over windows ``w``, ``w + l`` of one chain, ``g_w = J~_w^T r_w`` and
``L = lags``.

What the error bars do not cover: they are the spread that the residuals' noise gives the
parameters around the model's best fit to these data, nothing systematic. Not the bias of a
smoothing filter: a derivative reconstructed by :func:`learning.reconstruct` (two cubic
Savitzky-Golay passes of ``w`` samples, sample time ``T``) is attenuated at frequency ``f``
by about ``(pi f w T)^4 / 252`` (exact to leading order in ``f w T``), a gain error on the
acceleration that an inertia fitted by equation error takes on at the same relative size
(measured on examples/identify_two_mass_servo.py's data with the spectrum's windows: the
acceleration's gain -1.3 % motor, -0.5 % load), nor the opposite bias from the noise left
in a reconstructed regressor (an inertia regressed on a noisy acceleration shrinks by
``var(noise) / var(a)``, which grows as the window shrinks; in :func:`learning.fit_equations`
the acceleration is the residual's target, not a regressor, so only the attenuation biases),
nor a wrong model structure or the integrator's error. A :class:`learning.Reconstruction`
estimates both from the spectrum, as its ``bias`` and ``noise``. Judge those by comparing
windows (the fits on ``window`` and on a window about 1.3x shorter should agree within the
error bars) or against an output-error fit (:func:`learning.fit`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from acausal.errors import OptionError

from ..core import blas_threads

NOISES = ("measurement", "process", "filtered")
RANK_RTOL = 1e-10  # singular values of the nuisance block below this x the largest: null


@dataclass(frozen=True, eq=False)
class Uncertainty:
    """Standard errors ``std`` and the correlation matrix of the parameters ``names`` at
    ``values``; ``sigma``: the residuals' estimated standard deviation ``s``; ``dof``:
    ``m_I - n``; ``nuisance``: how many nuisance parameters were profiled out."""

    names: tuple[str, ...]
    values: np.ndarray
    std: np.ndarray
    correlation: np.ndarray
    sigma: float
    dof: int
    nuisance: int

    def __getitem__(self, name: str) -> float:
        """The standard error of ``name``."""
        if name not in self.names:
            raise OptionError(f"Uncertainty: no parameter {name!r} (have {', '.join(self.names)})")
        return float(self.std[self.names.index(name)])

    def __str__(self) -> str:
        rows = [
            f"  {n:<16s} {v:12.6g} +- {s:.3g} ({s / abs(v):.2%})"
            if v
            else f"  {n:<16s} 0 +- {s:.3g}"
            for n, v, s in zip(self.names, self.values, self.std)
        ]
        k = len(self.names)
        pairs = [
            f"{self.names[i]}/{self.names[j]} {self.correlation[i, j]:+.2f}"
            for i in range(k)
            for j in range(i + 1, k)
        ]
        head = f"standard errors (residual sigma {self.sigma:.3g}, {self.dof} degrees of freedom"
        head += f", {self.nuisance} nuisance parameters profiled out):" if self.nuisance else "):"
        tail = "  (noise only: not a filter's bias on reconstructed derivatives, not model error)"
        corr = ["  correlations: " + ", ".join(pairs)] if pairs else []
        return "\n".join([head, *rows, *corr, tail])


@blas_threads(1)
def from_jacobian(
    names: Sequence[str],
    values: Sequence[float],
    r: np.ndarray,
    J: np.ndarray,
    nuisance: Sequence[int] = (),
    scales: Sequence[float] | None = None,
    rows: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    noise: str = "measurement",
    lags: int = 10,
) -> Uncertainty:
    """:class:`Uncertainty` of the parameters ``names`` (columns of ``J`` not in
    ``nuisance``, in order) from residuals ``r`` (m) and their Jacobian ``J`` (m x n) at
    the optimum; ``scales``: ``dp/dq`` per column when ``J`` is taken with respect to
    scaled parameters ``q`` (the standard errors are returned in ``p``). ``rows``:
    ``(window, kind, linked)``, each row's window index ``0 .. W-1`` and kind, and
    ``linked[w]`` when windows ``w`` and ``w + 1`` share a sample, for ``noise``
    ``"measurement"``, ``"process"`` or ``"filtered"`` (Bartlett kernel over ``lags``
    windows) (above); without ``rows`` the rows are independent with one variance."""
    if noise not in NOISES:
        raise OptionError(f"uncertainty: noise={noise!r} is not one of {NOISES}")
    r, J = np.asarray(r, dtype=float).ravel(), np.asarray(J, dtype=float)
    m, n = J.shape
    if r.size != m:
        raise OptionError(f"from_jacobian: {r.size} residuals but a {m} x {n} Jacobian")
    kept = [j for j in range(n) if j not in set(nuisance)]
    if len(kept) != len(names) or len(values) != len(names):
        raise OptionError(
            f"from_jacobian: {len(names)} names and {len(values)} values for the "
            f"{len(kept)} non-nuisance columns"
        )
    informative = np.any(J != 0, axis=1)
    dof = int(informative.sum()) - n
    if dof <= 0:
        raise OptionError(
            f"from_jacobian: {int(informative.sum())} informative residuals for {n} parameters"
        )
    inflate = informative.sum() / dof
    Jp = J[:, kept] / (1.0 if scales is None else np.asarray(scales, dtype=float)[kept])
    if nuisance:
        U, S, _ = np.linalg.svd(J[:, list(nuisance)], full_matrices=False)
        U = U[:, S > RANK_RTOL * S[0]] if S.size and S[0] > 0 else U[:, :0]
        Jp = Jp - U @ (U.T @ Jp)
    try:
        inv = np.linalg.inv(Jp.T @ Jp)
    except np.linalg.LinAlgError:
        inv = np.full((len(kept), len(kept)), np.inf)
    if rows is None:
        meat = inflate * float(np.mean(r[informative] ** 2)) * (Jp.T @ Jp)
    else:
        meat = (
            _newey_west(r, Jp, inflate, rows[0], rows[2], lags)
            if noise == "filtered"
            else _banded(r, Jp, informative, inflate, *rows, noise)
        )
    cov = inv @ meat @ inv
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    sigma = float(np.sqrt(inflate * np.mean(r[informative] ** 2)))
    return Uncertainty(
        tuple(names), np.asarray(values, dtype=float), std, corr, sigma, dof, len(nuisance)
    )


def _banded(
    r: np.ndarray,
    Jp: np.ndarray,
    informative: np.ndarray,
    inflate: float,
    window: np.ndarray,
    kind: np.ndarray,
    linked: np.ndarray,
    noise: str,
) -> np.ndarray:
    """``J~^T cov(e) J~`` kind by kind for ``noise`` (see the module docstring)."""
    window, kind = np.asarray(window), np.asarray(kind)
    linked = np.append(np.asarray(linked, dtype=bool), False)
    meat = np.zeros((Jp.shape[1], Jp.shape[1]))
    for k in np.unique(kind[informative]):
        these = np.flatnonzero((kind == k) & informative)
        these = these[np.argsort(window[these], kind="stable")]
        g0 = inflate * float(np.mean(r[these] ** 2))
        J = Jp[these]
        if noise == "process":
            meat += g0 * (J.T @ J)
            continue
        w = window[these]
        breaks = np.flatnonzero(~((np.diff(w) == 1) & linked[w[:-1]])) + 1
        for chain in np.split(np.arange(len(these)), breaks):
            Jc = J[chain]
            D = np.vstack([Jc[:1], np.diff(Jc, axis=0), Jc[-1:]])
            meat += g0 / 2 * (D.T @ D)
    return meat


def _newey_west(
    r: np.ndarray, Jp: np.ndarray, inflate: float, window: np.ndarray, linked: np.ndarray, lags: int
) -> np.ndarray:
    """The Bartlett-weighted sum of the windows' score products up to ``lags`` apart."""
    window = np.asarray(window)
    scores = np.zeros((int(window.max()) + 1, Jp.shape[1]))
    np.add.at(scores, window, Jp * r[:, None])
    chain = np.r_[0, np.cumsum(~np.asarray(linked, dtype=bool)[: len(scores) - 1])]
    meat = scores.T @ scores
    for lag in range(1, lags + 1):
        same = chain[:-lag] == chain[lag:]
        cross = (1 - lag / (lags + 1)) * (scores[:-lag][same].T @ scores[lag:][same])
        meat += cross + cross.T
    return inflate * meat
