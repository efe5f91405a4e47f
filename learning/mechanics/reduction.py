"""``reduce_mechanism``: a planar mechanism reduced to minimal coordinates by a dynamics-aware
autoencoder (Angeli, Desmet and Naets), the result an ordinary component.

The decoder, the reduced equations and the component: :mod:`learning.mechanics.reduced_model`.

Training (the paper's Eq. 34): an encoder ``h_e: x_n -> x_m`` (or the given minimal
coordinates, Section 4.2.2) and the decoder minimize ``w_rec L_rec + w_sim L_sim`` over
samples ``i`` of the simulations:

* ``L_rec = mean |(h_d(h_e(x_n^i)) - x_n^i) / s_x|^2``, ``s_x`` each coordinate's spread;
* ``L_sim = mean |(h_d(x^_m^{i+1}) - h_d(x_m^{i+1})) / (dt^2 s_a)|^2`` with the one-step
  prediction of the paper's Algorithm 1 from ``x_m^{i-1}``, ``x_m^i``
  (``x_m^k = h_e(x_n^k)`` or the given ones): ``x_m' = (x_m^i - x_m^{i-1}) / dt``,
  ``x^_m^{i+1} = x_m^i + dt x_m' + dt^2 M_m^{-1} (J^T f_e^i - G_m[x_m', x_m'])``. The paper
  compares ``h_d(x^_m^{i+1})`` with ``x_n^{i+1}`` itself, which adds the reconstruction
  error at ``i + 1`` (``L_rec``'s) to an ``O(dt^2)`` dynamics term; here the two are kept
  apart and the dynamics term is divided by ``dt^2`` and the spread ``s_a`` of the natural
  accelerations: an acceleration error, ``a_pred - (x^{i+1} - 2 x^i + x^{i-1}) / dt^2``
  through the decoder, that weighs as much as ``L_rec`` from the first epoch;
* with a learned encoder the same division would amplify the encoder's approximation error
  by ``4/dt^2`` (a sample-to-sample wobble of 1e-6 of the range, at ``dt`` = 1 ms, is an
  acceleration error of 4 ranges/s^2), so ``L_sim`` is the one-step loss's limit
  ``dt -> 0`` instead (the paper's Appendix: velocities and accelerations), on the
  simulation's exact ``x_n'``, ``x_n''``: with ``q = h_e(x_n)`` and ``q' = (dh_e/dx_n) x_n'``,
  the residuals ``(J q' - x_n') / s_v`` and
  ``(J q'' + (d^2h_d/dq^2)[q', q'] - x_n'') / s_a``, ``q''`` from the reduced equations.

Networks: fully connected ``tanh`` (or ``sigmoid``, ``softplus``: twice differentiable, as
the simulation loss needs) layers with a linear last layer; inputs standardized by the
data (the encoder's by the natural coordinates' mean and spread, the decoder's by the
minimal coordinates' when given), the decoder's outputs scaled by each natural coordinate's
spread around its mean, and a coordinate that is constant in the data (a slider's fixed
``x``) is that constant exactly. Weights drawn as :class:`~learning.MLP` draws them,
trained by the mini-batch Adam of :func:`learning.train` on random samples, the best epoch
on the held-out samples (the last ``validation`` fraction of each record, or records given)
kept.
"""

from __future__ import annotations

import re
import time as _time
from collections.abc import Callable, Mapping, Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from ..core import FitProgress, check_layers, thread_count
from ..optimization import AdamOptions
from ..training import SampleLoss
from .dense import Dense, _rows
from .natural import NaturalCoordinates, expect_natural
from .reduced_model import Reduction, velocity_terms

SMOOTH = ("tanh", "sigmoid", "softplus")


def _label(name: str) -> str:
    """A minimal coordinate's local name: ``crank_joint.phi`` -> ``crank_joint_phi``."""
    return re.sub(r"\W", "_", name)


def reduce_mechanism(
    data: NaturalCoordinates,
    *,
    hidden: Sequence[int] = (32, 32),
    activation: str = "tanh",
    losses: Mapping[str, float] | None = None,
    epochs: int = 200,
    batch: int = 256,
    lr: float = 1e-3,
    decay: float = 1.0,
    seed: int = 0,
    validation: float = 0.05,
    patience: int | None = None,
    threads: int | None = None,
    progress: bool | str | Callable[[FitProgress], None] = True,
) -> Reduction:
    """Learn the decoder (and, without given minimal coordinates, the encoder) of ``data``
    (see the module docstring). ``losses``: weights of ``"rec"`` and ``"sim"`` (default 1
    each; ``{"rec": 1}`` is the paper's ablation, reconstruction only). ``validation``: the
    fraction at the end of each record held out (early stopping keeps the best epoch).
    ``threads``: a batch's samples split over that many threads (default every core)."""
    tic = _time.perf_counter()
    expect_natural(data, "reduce_mechanism", "data")
    adam = AdamOptions.checked(
        "reduce_mechanism", progress, epochs, batch, lr, decay, seed, patience
    )
    hidden = check_layers("reduce_mechanism", hidden)
    threads = thread_count("reduce_mechanism", threads)
    losses = dict(losses if losses is not None else {"rec": 1.0, "sim": 1.0})
    _check_options(data, losses, activation, validation)
    recs = data.records
    X = np.vstack([r["x"] for r in recs])
    A = np.vstack([r["a"] for r in recs])
    decoder, encoder, names, varying = _networks(data, X, hidden, activation)
    given = data.minimal is not None
    rng = np.random.default_rng(seed)
    theta0 = decoder.draw(rng)
    if encoder is not None:
        theta0 = np.concatenate([theta0, encoder.draw(rng)])
    V = np.vstack([r["v"] for r in recs])
    scales = tuple(np.maximum(Z.std(axis=0)[varying], 1e-12) for Z in (X, A, V))
    residual = _residual(data, decoder, encoder, varying, scales, losses)
    columns, held = _samples(data, validation)
    loss = SampleLoss(residual, theta0.size, threads=threads)
    run = loss.adam(columns, theta0, held, adam, progress, tic)
    best = run.x
    dec_theta = best[: decoder.count]
    enc_theta = best[decoder.count :] if encoder is not None else None
    XM = np.vstack([r["xm"] for r in recs]) if given else _rows(encoder, enc_theta, X)
    return Reduction(
        data=data,
        names=names,
        decoder=decoder,
        decoder_theta=dec_theta,
        encoder=encoder,
        encoder_theta=enc_theta,
        low=XM.min(axis=0),
        high=XM.max(axis=0),
        loss=loss.total(columns, best),
        loss_history=run.history,
        validation_history=run.checked,
        wall_time=_time.perf_counter() - tic,
        message=run.message(losses),
    )


def _check_options(
    data: NaturalCoordinates, losses: Mapping[str, float], activation: str, validation: float
) -> None:
    if set(losses) - {"rec", "sim"} or not any(w > 0 for w in losses.values()):
        raise OptionError(f"reduce_mechanism: losses={losses!r} must weight 'rec' and/or 'sim'")
    if activation not in SMOOTH:
        raise OptionError(
            f"reduce_mechanism: activation={activation!r} must be one of {SMOOTH} (the "
            "simulation loss differentiates the decoder twice)"
        )
    if not 0 < validation < 0.5:
        raise OptionError(f"reduce_mechanism: validation={validation} must be in (0, 0.5)")
    if not data.records or any(r["t"].size < 10 for r in data.records):
        raise OptionError("reduce_mechanism: every record needs 10 or more samples")


def _networks(
    data: NaturalCoordinates, X: np.ndarray, hidden: Sequence[int], activation: str
) -> tuple[Dense, Dense | None, tuple[str, ...], np.ndarray]:
    """The decoder (minimal -> natural coordinates, copying those given as minimal), the
    encoder when the minimal coordinates are learned (None when given), the minimal
    coordinates' names, and which natural coordinates vary in ``X`` (the others decode
    to their constant mean)."""
    recs = data.records
    m, n = data.mobility, len(data.names)
    mean, spread = X.mean(axis=0), X.std(axis=0)
    varying = spread > 1e-9 * max(1.0, np.max(np.abs(X)))
    given = data.minimal is not None
    copies: tuple[tuple[int, int], ...] = ()
    if given:
        XM = np.vstack([r["xm"] for r in recs])
        dec_in = (XM.mean(axis=0), np.where(XM.std(axis=0) > 0, XM.std(axis=0), 1.0))
        names = tuple(_label(k) for k in data.minimal)
        if len(set(names)) < len(names):
            raise OptionError(
                f"reduce_mechanism: the minimal coordinates {list(data.minimal)} have the same "
                f"local name in {list(names)} (dots and other signs become '_'); rename one"
            )
        copies = _selected(X, XM)
    else:
        dec_in = (np.zeros(m), np.ones(m))
        names = tuple(f"z{k + 1}" for k in range(m))
    sizes = (m, *hidden, n)
    decoder = Dense(sizes, activation, *dec_in, mean, np.where(varying, spread, 0.0), copies)
    encoder = None
    if not given:
        encoder = Dense(
            (n, *reversed(hidden), m),
            activation,
            mean,
            np.where(varying, spread, 1.0),
            np.zeros(m),
            np.ones(m),
        )
    return decoder, encoder, names, varying


def _selected(X: np.ndarray, XM: np.ndarray) -> tuple[tuple[int, int], ...]:
    """``(k, j)``: natural coordinate ``k`` is given minimal coordinate ``j`` in the data (the
    paper's selection matrix, Eq. 36); the decoder passes it through exactly."""
    out = []
    for j in range(XM.shape[1]):
        gap = np.max(np.abs(X - XM[:, j : j + 1]), axis=0)
        k = int(np.argmin(gap))
        if gap[k] <= 1e-9 * max(1.0, np.max(np.abs(XM[:, j]))):
            out.append((k, j))
    return tuple(out)


def _samples(data: NaturalCoordinates, validation: float) -> tuple[np.ndarray, np.ndarray]:
    """Sample columns, split into training and held-out (each record's last ``validation``
    fraction): with given minimal coordinates ``[x^{i-1}; x^i; x^{i+1}; f^i; dt; xm^{i-1};
    xm^i; xm^{i+1}; fm^i]`` for the interior samples, else ``[x^i; v^i; a^i; f^i]``."""
    train, held = [], []
    for r in data.records:
        t, x, f = r["t"], r["x"], r["f"]
        dt = np.diff(t)
        if data.minimal is not None:
            if np.ptp(dt) > 1e-9 * dt.mean():
                raise OptionError("reduce_mechanism: a record's samples must be evenly spaced")
            rows = [x[:-2], x[1:-1], x[2:], f[1:-1], np.full((x.shape[0] - 2, 1), dt.mean())]
            rows += [r["xm"][:-2], r["xm"][1:-1], r["xm"][2:], r["fm"][1:-1]]
        else:
            rows = [x, r["v"], r["a"], f]
        cols = np.hstack(rows).T
        cut = int(round(cols.shape[1] * (1 - validation)))
        train.append(cols[:, :cut])
        held.append(cols[:, cut:])
    return np.hstack(train), np.hstack(held)


def _residual(
    data: NaturalCoordinates,
    decoder: Dense,
    encoder: Dense | None,
    varying: np.ndarray,
    scales: tuple[np.ndarray, np.ndarray, np.ndarray],
    losses: Mapping[str, float],
) -> cs.Function:
    """``(sample column, theta) -> residuals`` of one sample (see the module docstring)."""
    n, m = len(data.names), data.mobility
    col = cs.SX.sym("sample", 4 * n + 1 + 4 * m if encoder is None else 4 * n)
    count = decoder.count + (encoder.count if encoder is not None else 0)
    theta = cs.SX.sym("theta", count)
    th_d, th_e = theta[: decoder.count], theta[decoder.count :]
    keep = np.flatnonzero(varying).tolist()
    parts = []
    exact = {k for k, _ in decoder.copies}  # passed through: no reconstruction error
    rec = [j for j, k in enumerate(keep) if k not in exact]
    x_now = col[n : 2 * n] if encoder is None else col[:n]
    if encoder is None:
        xm_now = col[4 * n + 1 + m : 4 * n + 1 + 2 * m]
    else:
        xm_now = encoder(x_now, th_e)
    if losses.get("rec", 0.0) and rec:
        r = ((decoder(xm_now, th_d) - x_now)[keep] / cs.DM(scales[0]))[rec]
        parts.append(np.sqrt(losses["rec"] / len(rec)) * r)
    if losses.get("sim", 0.0):
        dyn = _Dynamics(data, decoder, theta, th_d, keep, scales)
        w = losses["sim"] / len(keep)
        if encoder is None:
            parts.append(np.sqrt(w) * dyn.one_step(col))
        else:
            parts += [np.sqrt(w / 2) * r for r in dyn.continuous(col, xm_now)]
    return cs.Function("reduction_residual", [col, theta], [cs.vertcat(*parts)])


class _Dynamics:
    """The reduced equations ``M_m q'' = J^T (f_g + f) + Q - G_m[q', q']`` of a decoder
    (``theta``: every trained weight, ``th_d`` the decoder's) and the simulation residuals
    built from them, on the natural coordinates ``keep``, over the spreads ``scales`` (of
    positions, accelerations, velocities)."""

    def __init__(
        self,
        data: NaturalCoordinates,
        decoder: Dense,
        theta: cs.SX,
        th_d: cs.SX,
        keep: list[int],
        scales: tuple[np.ndarray, ...],
    ) -> None:
        self.n, self.m = len(data.names), data.mobility
        self.decoder, self.theta, self.th_d, self.keep = decoder, theta, th_d, keep
        self.scales = [cs.DM(v) for v in scales]
        q, w, load, gen = (
            cs.SX.sym(k, size)
            for k, size in (("q", self.m), ("w", self.m), ("f", self.n), ("Q", self.m))
        )
        h = decoder(q, th_d)
        J = cs.jacobian(h, q)
        Mm = cs.mtimes([J.T, cs.DM(data.mass), J])
        rhs = (
            cs.mtimes(J.T, cs.DM(data.gravity) + load) + gen - velocity_terms(h, J, data.mass, q, w)
        )
        self.accel = cs.Function("accel", [q, w, load, gen, theta], [cs.solve(Mm, rhs)])
        Jw = cs.jtimes(h, q, w)
        self.tangent = cs.Function("tangent", [q, w, theta], [Jw, cs.jtimes(Jw, q, w)])

    def one_step(self, col: cs.SX) -> cs.SX:
        """Given minimal coordinates: the one-step prediction's error through the decoder,
        over ``dt^2 s_a``."""
        n, m = self.n, self.m
        f, dt = col[3 * n : 4 * n], col[4 * n]
        xm_prev, xm_now, xm_next, fm = (
            col[4 * n + 1 + k * m : 4 * n + 1 + (k + 1) * m] for k in range(4)
        )
        rate = (xm_now - xm_prev) / dt
        ahead = xm_now + dt * rate + dt**2 * self.accel(xm_now, rate, f, fm, self.theta)
        miss = self.decoder(ahead, self.th_d) - self.decoder(xm_next, self.th_d)
        return miss[self.keep] / (dt**2 * self.scales[1])

    def continuous(self, col: cs.SX, xm: cs.SX) -> list[cs.SX]:
        """Learned minimal coordinates ``xm = h_e(x)``: the natural velocities and
        accelerations the reduced model gives there, ``J q'`` and ``J q'' + H[q', q']`` with
        ``q' = (dh_e/dx) x'``, against the simulation's, over their spreads."""
        x, v, a, f = (col[k * self.n : (k + 1) * self.n] for k in range(4))
        rate = cs.jtimes(xm, x, v)
        vel, curve = self.tangent(xm, rate, self.theta)
        acc = self.accel(xm, rate, f, cs.SX.zeros(self.m), self.theta)
        push = self.tangent(xm, acc, self.theta)[0]
        return [
            (vel - v)[self.keep] / self.scales[2],
            (push + curve - a)[self.keep] / self.scales[1],
        ]
