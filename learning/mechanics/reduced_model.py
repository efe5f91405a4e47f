"""``Reduction`` and ``ReducedModel``: the result of :func:`learning.reduce_mechanism`, a planar
mechanism in minimal coordinates, and that result as an ordinary component.

A decoder ``h_d: x_m -> x_n`` maps the minimal coordinates to the natural ones
(:mod:`learning.mechanics.natural`); with ``J = dh_d/dx_m`` the kinetic energy is
``1/2 x_m'^T M_m x_m'``, ``M_m = J^T M_n J``, and Lagrange's equations are the paper's Eq. 12,

    M_m x_m'' + J^T M_n (d^2h_d/dx_m^2)[x_m', x_m'] = J^T f_e,

(the second term is ``sum_k dM_m/dx_k x_k' x_m' - dT/dx_m``). Gravity, a constant force
``f_g`` on ``x_n``, is the potential ``V = -f_g . h_d(x_m)``, so the reduced model is an
:class:`~learning.Lagrangian` with that ``M`` and ``V`` (energy balance by construction), and
each :class:`~learning.PointLoad` is a load connector at ``s = e . C h_d(x_m)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError

from .dense import Dense, _rows
from .lagrangian import Lagrangian
from .natural import NaturalCoordinates


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
