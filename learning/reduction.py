"""``reduce_mechanism``: a planar mechanism reduced to minimal coordinates by a dynamics-aware
autoencoder (Angeli, Desmet and Naets), the result an ordinary component.

A decoder ``h_d: x_m -> x_n`` maps the minimal coordinates to the natural ones
(:mod:`learning.natural`); with ``J = dh_d/dx_m`` the kinetic energy is
``1/2 x_m'^T M_m x_m'``, ``M_m = J^T M_n J``, and Lagrange's equations are the paper's Eq. 12,

    M_m x_m'' + J^T M_n (d^2h_d/dx_m^2)[x_m', x_m'] = J^T f_e,

(the second term is ``sum_k dM_m/dx_k x_k' x_m' - dT/dx_m``). Gravity, a constant force
``f_g`` on ``x_n``, is the potential ``V = -f_g . h_d(x_m)``, so the reduced model is an
:class:`~learning.Lagrangian` with that ``M`` and ``V`` (energy balance by construction), and
each :class:`~learning.PointLoad` is a load connector at ``s = e . C h_d(x_m)``.

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
from dataclasses import dataclass, field

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError

from .checks import check_layers
from .fit import FitProgress
from .lagrangian import Lagrangian
from .mlp import ACTIVATIONS, draw_weights
from .natural import NaturalCoordinates, expect_natural
from .optimizers import AdamOptions
from .threads import thread_count
from .training import SampleLoss

SMOOTH = ("tanh", "sigmoid", "softplus")


@dataclass(frozen=True)
class Dense:
    """``y = out_offset + out_scale * (W_L h_{L-1} + b_L)``, ``h_k = sigma(W_k h_{k-1} + b_k)``,
    ``h_0 = (x - in_offset) / in_scale``; ``theta`` the weights layer by layer (``W`` row-major,
    then ``b``); ``copies``: ``(k, j)`` pairs whose output ``y_k`` is the input ``x_j`` itself."""

    sizes: tuple[int, ...]
    activation: str
    in_offset: np.ndarray
    in_scale: np.ndarray
    out_offset: np.ndarray
    out_scale: np.ndarray
    copies: tuple[tuple[int, int], ...] = ()

    @property
    def count(self) -> int:
        return sum(o * (i + 1) for i, o in zip(self.sizes[:-1], self.sizes[1:]))

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        parts = []
        for k, (i, o) in enumerate(zip(self.sizes[:-1], self.sizes[1:])):
            last = k == len(self.sizes) - 2
            parts += [draw_weights(rng, i, o, "tanh" if last else self.activation).ravel()]
            parts += [np.zeros(o)]
        return np.concatenate(parts)

    def __call__(self, x: cs.SX | cs.MX, theta: cs.SX | cs.MX | np.ndarray) -> cs.SX | cs.MX:
        h = (x - cs.DM(self.in_offset)) / cs.DM(self.in_scale)
        sigma, at = ACTIVATIONS[self.activation], 0
        layers = list(zip(self.sizes[:-1], self.sizes[1:]))
        for k, (i, o) in enumerate(layers):
            W = cs.reshape(theta[at : at + i * o], i, o).T
            b = theta[at + i * o : at + i * o + o]
            at += i * o + o
            h = cs.mtimes(W, h) + b
            if k < len(layers) - 1:
                h = sigma(h)
        y = cs.DM(self.out_offset) + cs.DM(self.out_scale) * h
        if not self.copies:
            return y
        rows = [y[k] for k in range(self.sizes[-1])]
        for k, j in self.copies:
            rows[k] = x[j]
        return cs.vertcat(*rows)


@dataclass(frozen=True)
class Reduction:
    """A trained reduction: ``decoder`` (weights ``decoder_theta``), the ``encoder`` (``None``
    when the minimal coordinates were given), the natural coordinates' ``data`` (names, mass,
    gravity, bodies, loads), the minimal coordinates' local ``names`` (see
    :attr:`coordinates`) and training range ``low``, ``high``, the loss histories."""

    data: NaturalCoordinates
    names: tuple[str, ...]
    decoder: Dense
    decoder_theta: np.ndarray
    encoder: Dense | None
    encoder_theta: np.ndarray | None
    low: np.ndarray
    high: np.ndarray
    loss: float
    loss_history: list[float] = field(default_factory=list)
    validation_history: list[float] = field(default_factory=list)
    wall_time: float = 0.0
    message: str = ""

    @property
    def coordinates(self) -> tuple[str, ...]:
        """The minimal coordinates by the user's names: the result variables given as
        minimal coordinates (``"crank_joint.phi"``), or the learned ``z1 .. zm``. Inside the
        reduced component coordinate ``coordinates[k]`` is the local name ``names[k]``, the
        name with each character that is not a letter, digit or ``_`` as ``_``
        (``crank_joint_phi``: its ``q_``, ``v_``, ``a_`` variables and its port), and every
        method that takes a coordinate takes either name (:meth:`local`)."""
        return self.data.minimal if self.encoder is None else self.names

    def local(self, name: str) -> str:
        """The local name of the minimal coordinate ``name`` (a user's name, or already a
        local one)."""
        if name in self.names:
            return name
        if name in self.coordinates:
            return self.names[self.coordinates.index(name)]
        raise OptionError(
            f"{name!r} is no minimal coordinate of this reduction ({', '.join(self.coordinates)})"
        )

    def decode(self, xm: np.ndarray) -> np.ndarray:
        """Natural coordinates (samples x n) of minimal ones (samples x m)."""
        return _rows(self.decoder, self.decoder_theta, xm)

    def encode(self, xn: np.ndarray, record: int | None = None) -> np.ndarray:
        """Minimal coordinates (samples x m) of natural ones (samples x n); with the
        minimal coordinates given there is no encoder: ``record``'s data are returned."""
        if self.encoder is None:
            if record is None:
                raise OptionError(
                    "Reduction.encode: the minimal coordinates were given, not learned; "
                    "read them from the data (record=k)"
                )
            return self.data.records[record]["xm"]
        return _rows(self.encoder, self.encoder_theta, xn)

    def initial(
        self, xn: np.ndarray, vn: np.ndarray, record: int | None = None
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Start values ``(q0, v0)`` of the reduced model for natural positions ``xn`` and
        velocities ``vn`` (one sample), by :attr:`coordinates`: ``q0`` encoded (or the given
        minimal coordinates of ``record``'s first sample), ``v0`` the kinetic-energy-weighted
        least-squares rates, ``M_m v0 = J^T M_n vn``."""
        xn, vn = np.asarray(xn, dtype=float).ravel(), np.asarray(vn, dtype=float).ravel()
        q0 = self.encode(xn[None, :], record)[0]
        q = cs.SX.sym("q", len(self.names))
        J = cs.Function("J", [q], [cs.jacobian(self.decoder(q, self.decoder_theta), q)])
        Jq = np.asarray(J(q0))
        v0 = np.linalg.solve(Jq.T @ self.data.mass @ Jq, Jq.T @ self.data.mass @ vn)
        return dict(zip(self.coordinates, q0.tolist())), dict(zip(self.coordinates, v0.tolist()))

    def mass(self, xm: np.ndarray) -> np.ndarray:
        """``M_m = J^T M_n J`` at the rows of ``xm`` (samples x m x m)."""
        q = cs.SX.sym("q", len(self.names))
        J = cs.jacobian(self.decoder(q, self.decoder_theta), q)
        fn = cs.Function("Mm", [q], [cs.mtimes([J.T, cs.DM(self.data.mass), J])])
        xm = np.atleast_2d(xm)
        out = np.asarray(fn.map(xm.shape[0])(xm.T))
        m = len(self.names)
        return out.reshape(m, xm.shape[0], m).transpose(1, 0, 2)

    def component(
        self,
        name: str,
        *,
        q0: Mapping[str, float] | None = None,
        v0: Mapping[str, float] | None = None,
        ports: Mapping[str, ac.ConnectorType] | None = None,
    ) -> ReducedModel:
        """The reduced model as a component (:class:`ReducedModel`); ``q0``, ``v0`` and
        ``ports`` by minimal coordinate (either name, :meth:`local`)."""
        return ReducedModel(name, self, q0=q0, v0=v0, ports=ports)


def velocity_terms(h: cs.SX, J: cs.SX, mass: np.ndarray, q: cs.SX, v: cs.SX) -> cs.SX:
    """``G_m[v, v] = J^T M_n (d^2h_d/dq^2)[v, v]``, Lagrange's velocity terms of
    ``M_m = J^T M_n J``, from the decoded points ``h = h_d(q)`` and ``J = dh_d/dq`` already
    built: ``(d^2h_d/dq^2)[v, v] = d(J v)/dq v`` is one directional derivative of ``J v``."""
    return cs.mtimes([J.T, cs.DM(mass), cs.jtimes(cs.mtimes(J, v), q, v)])


def _rows(net: Dense, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
    x = np.atleast_2d(np.asarray(x, dtype=float))
    sym = cs.SX.sym("x", net.sizes[0])
    fn = cs.Function("net", [sym], [net(sym, theta)])
    return np.asarray(fn.map(x.shape[0])(x.T)).T


def _label(name: str) -> str:
    """A minimal coordinate's local name: ``crank_joint.phi`` -> ``crank_joint_phi``."""
    return re.sub(r"\W", "_", name)


class _Level(ac.Component):
    """One level of a user's dotted name inside a :class:`ReducedModel` (``bar1`` of
    ``red.bar1.x_cm``): variables only, each equal to an expression of the model's."""


class ReducedModel(Lagrangian):
    """The reduced mechanism: an :class:`~learning.Lagrangian` in the minimal coordinates with
    ``M = J^T M_n J`` and ``V = -f_g . h_d(q)`` (see the module docstring), internal
    coordinates unless ``ports`` gives them connectors, and one load connector per
    :class:`~learning.PointLoad` of the data (its position ``e . C h_d(q)``).

    Names: minimal coordinate ``k`` has the local name ``reduction.names[k]`` (its
    ``q_``, ``v_``, ``a_`` variables and its port, :meth:`port`) and is also a variable
    under the user's name ``reduction.coordinates[k]``, as are the decoded natural
    coordinates and each body's centre of mass, so a result reads like the full model's
    with the component's name in front: ``red.crank_joint.phi`` (= ``red.q_crank_joint_phi``),
    ``red.bar1.p0_x``, ``red.bar1.x_cm``, ``red.bar1.y_cm``. ``outside``: how far the
    coordinates are beyond the training range (0 inside; in units of the range):
    :meth:`outside_range` reads it from a result."""

    def __init__(
        self,
        name: str,
        reduction: Reduction,
        *,
        q0: Mapping[str, float] | None = None,
        v0: Mapping[str, float] | None = None,
        ports: Mapping[str, ac.ConnectorType] | None = None,
    ) -> None:
        data, theta = reduction.data, reduction.decoder_theta
        decode = reduction.decoder
        for what, given in (("ports", ports), ("q0", q0), ("v0", v0)):
            unknown = sorted(
                k for k in given or {} if k not in reduction.names + reduction.coordinates
            )
            if unknown:
                raise OptionError(
                    f"ReducedModel {name}: {what} {unknown} name no minimal coordinate "
                    f"({', '.join(reduction.coordinates)})"
                )
        local = {
            w: {reduction.local(k): v for k, v in (g or {}).items()}
            for w, g in (("ports", ports), ("q0", q0), ("v0", v0))
        }
        coords = {c: local["ports"].get(c) for c in reduction.names}

        graph: dict[str, cs.SX] = {}

        def decoded(q: Mapping[str, cs.SX] | cs.SX) -> tuple[cs.SX, cs.SX]:
            """``h_d(q)`` and ``J``, built on the first call (every call gets the
            component's coordinates): one copy of the network in the equations."""
            if not graph:
                qv = cs.vertcat(*q.values()) if isinstance(q, Mapping) else q
                graph["h"] = decode(qv, theta)
                graph["J"] = cs.jacobian(graph["h"], qv)
            return graph["h"], graph["J"]

        def mass(q: dict, p: dict) -> cs.SX:
            J = decoded(q)[1]
            return cs.mtimes([J.T, cs.DM(data.mass), J])

        def load_at(load: object) -> Callable[[dict, dict], cs.SX]:
            e = np.asarray(load.direction, dtype=float)
            row = (e / np.linalg.norm(e)) @ data.point(load.body, load.point)
            return lambda q, p: cs.dot(cs.DM(row), decoded(q)[0])

        super().__init__(
            name,
            coords,
            mass=mass,
            potential=lambda q, p: -cs.dot(cs.DM(data.gravity), decoded(q)[0]),
            q0=local["q0"],
            v0=local["v0"],
            loads={k: (ac.Flange, load_at(load)) for k, load in data.loads.items()},
            velocity_terms=lambda q, v: velocity_terms(*decoded(q), data.mass, q, v),
        )
        self.reduction = reduction
        x = decoded(self._q)[0]
        self._by_user_name = [
            self._named(c, self._q[k]) for k, c in enumerate(reduction.coordinates)
        ]
        for j, n in enumerate(data.names):
            self._named(n, x[j])
        for b, info in data.bodies.items():
            centre = cs.mtimes(cs.DM(data.point(b, info["r_cm"])), x)
            for j, axis in enumerate("xy"):
                self._named(f"{b}.{axis}_cm", centre[j])
        span = np.maximum(reduction.high - reduction.low, 1e-12)
        beyond = cs.fmax(
            cs.fmax(self._q - cs.DM(reduction.high), cs.DM(reduction.low) - self._q), 0
        ) / cs.DM(span)
        self.equations(self.variable("outside") == cs.mmax(beyond))

    def _named(self, dotted: str, value: cs.SX) -> cs.SX:
        """The variable ``<this component>.<dotted>`` equal to ``value``: a subcomponent
        (:class:`_Level`) per dot, made once."""
        *path, leaf = dotted.split(".")
        owner: ac.Component = self
        for part in path:
            inside = {c.name: c for c in owner.subcomponents()}
            owner = inside[part] if part in inside else owner.add(_Level(part))
        variable = owner.variable(leaf)
        owner.equations(variable == value)
        return variable

    def valid_ranges(self) -> tuple[tuple[cs.SX, float, float, str], ...]:
        """Each minimal coordinate (by the user's name) in its training range
        ``[low, high]``: a simulation that fails there says which left it (the networks
        extrapolate outside; :meth:`outside_range` checks a finished result)."""
        return tuple(
            (q, float(lo), float(hi), "training range")
            for q, lo, hi in zip(self._by_user_name, self.reduction.low, self.reduction.high)
        )

    def port(self, coordinate: str) -> ac.Connector:
        """The connector of a minimal coordinate given a port (its user's or local name)."""
        local = self.reduction.local(coordinate)
        if local not in self.connectors:
            raise OptionError(
                f"ReducedModel {self.full_name}: the coordinate {coordinate!r} has no port; "
                f"give it one: component(..., ports={{{coordinate!r}: ac.RotFlange}})"
            )
        return self.connectors[local]

    def outside_range(self, result: object, margin: float = 0.05) -> str | None:
        """``None`` when the result's minimal coordinates stayed in the training range
        (widened by ``margin`` of it on each side: a reduced trajectory that follows the
        training one to a few percent may graze its edges), else a message naming when they
        left it and how far (the model is not to be trusted there: the networks
        extrapolate)."""
        excess = np.asarray(result[f"{self.full_name}.outside"]) - margin
        if not np.any(excess > 0):
            return None
        t = np.asarray(result.t)
        out = np.flatnonzero(excess > 0)
        return (
            f"{self.full_name}: the minimal coordinates leave the training range at t = "
            f"{t[out[0]]:.4g} s (outside for {out.size} of {t.size} samples, up to "
            f"{np.max(excess) + margin:.1%} of the range beyond it): not to be trusted there"
        )


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
    if set(losses) - {"rec", "sim"} or not any(w > 0 for w in losses.values()):
        raise OptionError(f"reduce_mechanism: losses={losses!r} must weight 'rec' and/or 'sim'")
    if activation not in SMOOTH:
        raise OptionError(
            f"reduce_mechanism: activation={activation!r} must be one of {SMOOTH} (the "
            "simulation loss differentiates the decoder twice)"
        )
    if not 0 < validation < 0.5:
        raise OptionError(f"reduce_mechanism: validation={validation} must be in (0, 0.5)")
    recs = data.records
    if not recs or any(r["t"].size < 10 for r in recs):
        raise OptionError("reduce_mechanism: every record needs 10 or more samples")
    m, n = data.mobility, len(data.names)
    X = np.vstack([r["x"] for r in recs])
    A = np.vstack([r["a"] for r in recs])
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
