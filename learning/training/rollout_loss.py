"""The rollout loss of :func:`learning.train`, the paper's Eq. 9 over windows of measured
trajectories: :class:`Windows`, the windows as the arrays one batch call takes, and
:class:`RolloutLoss`, ``L`` and ``dL/dq`` of a batch of them (or the residuals ``r`` with
``L = |r|^2`` and ``dr/dq``) as one CasADi function of the scaled trained parameters
``q = p / scale`` (:func:`with_trained`): a ``map`` over the windows of the step's
``mapaccum`` (:mod:`learning.training.rollout`), the gradient by reverse mode.
"""

from __future__ import annotations

from collections.abc import Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from .rollout import StepMap, Trajectory


class Windows:
    """The windows of some trajectories, as the arrays one batch call takes."""

    def __init__(
        self, step: StepMap, trajs: Sequence[Trajectory], horizon: int, stride: int, p: np.ndarray
    ) -> None:
        # each window's samples: rows k .. k + horizon - 1 of spans[i], k a window start
        starts = [np.array(tr.windows(horizon, stride), dtype=int) for tr in trajs]
        spans = [k[:, None] + np.arange(horizon) for k in starts]
        if not sum(len(k) for k in spans):
            raise OptionError("train: no window fits in the trajectories")
        pairs = list(zip(trajs, spans))
        X = np.hstack([tr.x[:, k[:, 0]] for tr, k in pairs])
        U = np.hstack([tr.u[:, k[:, 0]] for tr, k in pairs])
        self.t = np.concatenate([tr.t[k] for tr, k in pairs])  # W x N
        self.xz0 = step.starts(X, U, self.t[:, 0], p)  # (nx + nz) x W
        self.u = _by_window([np.vstack([tr.u[:, k], tr.u[:, k + 1]]) for tr, k in pairs])
        self.x = _by_window([tr.x[:, k + 1] for tr, k in pairs])  # W x nx x N
        self.count = len(self.t)
        # window w and w + 1 share a sample
        self.linked = np.concatenate([np.arange(len(k)) < len(k) - 1 for k in spans])
        self.linked &= stride <= horizon

    def batch(self, index: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(XZ0, U, T, XM)`` of the windows ``index``, columns window after window."""
        u, xm = (
            a[index].transpose(1, 0, 2).reshape(a.shape[1], len(index) * a.shape[2])
            for a in (self.u, self.x)
        )
        return self.xz0[:, index], u, self.t[index].reshape(1, -1), xm


def _by_window(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Arrays ``rows x W_i x N`` (one per trajectory) as one ``W x rows x N``."""
    return np.concatenate([a.transpose(1, 0, 2) for a in parts])


def with_trained(base: cs.MX, q: cs.MX, trained: Sequence[int], scales: np.ndarray) -> cs.MX:
    """The parameter vector ``base`` with its ``trained`` entries ``q_j * scale_j``."""
    p = cs.MX(base)
    for j, k in enumerate(trained):
        p[k] = q[j] * scales[j]
    return p


class RolloutLoss:
    """``L`` and ``dL/dq`` of a batch of ``B`` windows as one CasADi function of the scaled
    trained parameters ``q`` (built once per batch size), the windows evaluated on
    ``threads`` threads (CasADi's threaded ``map``; its reverse mode is threaded too)."""

    def __init__(
        self,
        step: StepMap,
        horizon: int,
        trained: Sequence[int],
        scales: np.ndarray,
        weights: np.ndarray,
        penalties: Sequence[tuple[cs.SX, float]] = (),
        threads: int = 1,
    ) -> None:
        self.step, self.horizon, self.threads = step, horizon, threads
        self.trained, self.scales, self.weights = list(trained), scales, weights
        m = step.model
        exprs = cs.vertcat(*[e for e, _ in penalties]) if penalties else cs.SX(0, 1)
        self.penalty = cs.Function("penalty", [m.dae.x, m.dae.z, m.p, m.t], [exprs])
        self.factors = cs.DM([c for _, c in penalties])
        self._built: dict[int, cs.Function] = {}
        self._jacobians: dict[int, cs.Function] = {}

    def _residual(self, size: int) -> tuple[list[cs.MX], cs.MX, cs.MX]:
        """Symbols ``(xz0, u, t, xm, q, base)``, the scaled trained parameters ``q`` and the
        residual vector ``r`` of a batch of ``size`` windows with ``L = |r|^2``:
        ``sqrt(C_s / (N B)) (x^ - x)`` stacked with ``sqrt(c / B) eta`` of each penalty."""
        step, n = self.step, self.horizon
        nxz, nx = step.nx + step.nz, step.nx
        xz0 = cs.MX.sym("xz0", nxz, size)
        u = cs.MX.sym("u", 2 * len(step.inputs), n * size)
        t = cs.MX.sym("t", 1, n * size)
        xm = cs.MX.sym("xm", nx, n * size)
        q = cs.MX.sym("q", len(self.trained))
        base = cs.MX.sym("p", step.model.p.numel())
        p = with_trained(base, q, self.trained, self.scales)
        windows = step.rollout(n).map(size, "thread", min(self.threads, size))
        xhat = windows(xz0, u, t, p)[:nx, :]
        r = cs.vec(cs.DM(np.sqrt(self.weights / (n * size))) * (xhat - xm))
        if self.factors.numel():  # c mean(eta^2) at the windows' measured starts
            eta = self.penalty.map(size)(xz0[:nx, :], xz0[nx:, :], p, t[:, ::n])
            r = cs.vertcat(r, cs.vec(cs.sqrt(self.factors / size) * eta))
        return [xz0, u, t, xm, q, base], q, r

    def function(self, size: int) -> cs.Function:
        """``(xz0, u, t, xm, q, p) -> (L, dL/dq)`` of a batch of ``size`` windows."""
        if size not in self._built:
            args, q, r = self._residual(size)
            loss = cs.sumsqr(r)
            self._built[size] = cs.Function("rollout_loss", args, [loss, cs.gradient(loss, q)])
        return self._built[size]

    def jacobian(self, size: int) -> cs.Function:
        """``(xz0, u, t, xm, q, p) -> (r, dr/dq)`` of a batch of ``size`` windows."""
        if size not in self._jacobians:
            args, q, r = self._residual(size)
            self._jacobians[size] = cs.Function("rollout_jac", args, [r, cs.jacobian(r, q)])
        return self._jacobians[size]

    def stacked(
        self, windows: Windows, q: np.ndarray, p: np.ndarray, batch: int
    ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``r``, ``dr/dq`` and each row's ``(window, kind)`` over all of ``windows`` (in
        batches of ``batch``), each batch's rows weighted so that ``|r|^2`` is the loss over
        all; a row's kind is the state it predicts (``nx + j`` for penalty ``j``)."""
        index = np.arange(windows.count)
        parts = [index[i : i + batch] for i in range(0, windows.count, batch)]
        rs, Js, ws, kinds = [], [], [], []
        nx, npen = self.step.nx, self.factors.numel()
        per_window = nx * self.horizon
        for b in parts:
            r, J = self.jacobian(len(b))(*windows.batch(b), q, p)
            c = np.sqrt(len(b) / windows.count)
            rs.append(c * r.full().ravel())
            Js.append(c * J.full())
            ws += [np.repeat(b, per_window), np.repeat(b, npen)]
            kinds += [
                np.tile(np.arange(nx), self.horizon * len(b)),
                np.tile(nx + np.arange(npen), len(b)),
            ]
        return np.concatenate(rs), np.vstack(Js), (np.concatenate(ws), np.concatenate(kinds))

    def __call__(
        self, windows: Windows, index: np.ndarray, q: np.ndarray, p: np.ndarray
    ) -> tuple[float, np.ndarray]:
        loss, grad = self.function(len(index))(*windows.batch(index), q, p)
        return float(loss), grad.full().ravel()

    def total(self, windows: Windows, q: np.ndarray, p: np.ndarray, batch: int) -> float:
        """The loss over all of ``windows`` (in batches of ``batch``)."""
        index = np.arange(windows.count)
        parts = [index[i : i + batch] for i in range(0, windows.count, batch)]
        return sum(self(windows, b, q, p)[0] * len(b) for b in parts) / windows.count
