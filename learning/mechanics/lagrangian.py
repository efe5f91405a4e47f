"""``Lagrangian``: a component whose equations are the Euler-Lagrange equations of
``L(q, q') = 1/2 q'^T M(q) q' - V(q)``, with ``M`` and ``V`` given as expressions or learned
(:class:`~learning.LagrangianNet`).

Each generalized coordinate ``q_i`` is a 1-D connector (an ``ac.Flange``: position ``s``,
force ``f``; or an ``ac.RotFlange``: angle ``phi``, torque ``tau``), and the connector's flow
is the generalized force ``Q_i`` the rest of the system applies on that coordinate. With
``v = q'`` and ``a = q''`` the component states

    d/dt (dL/dv) - dL/dq = Q:   M(q) a + (sum_k dM/dq_k v_k) v - dT/dq + dV/dq = Q,

``T = 1/2 v^T M v``, the derivatives by CasADi. A coordinate driven by a position source
(a servo) is an "externally specified" coordinate of ServoLNN: the compiler differentiates
the source twice (index reduction) and the coordinate's equation gives the servo's force
(the paper's Eq. 29); the others are free. Multiplying the equations by ``v^T``:

    dE/dt = d(T + V)/dt = v^T Q = sum_i P_i,

since ``dT/dt = v^T M a + 1/2 v^T Mdot v`` and ``v^T (Mdot v - dT/dq) = 1/2 v^T Mdot v``: the
energy ``E`` changes only by the power ``P_i = v_i Q_i`` delivered through the connectors,
for every ``M`` and ``V``. ``T``, ``V``, ``E`` and each ``P_<coordinate>`` are variables of
the component (in a simulation's result); ``q_<c>``, ``v_<c>``, ``a_<c>`` are the
coordinate, its rate and acceleration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError

from .lagrangian_net import LagrangianNet

Expression = Callable[[dict[str, cs.SX], dict[str, cs.SX]], object]
ENERGIES = ("T", "V", "E")
ATTRIBUTES = (
    *ENERGIES,
    "P",
    "coordinates",
    "loads",
    "network",
    "mass_matrix",
    "potential_energy",
)


def inverse_dynamics(
    M: cs.SX, V: cs.SX, q: cs.SX, v: cs.SX, a: cs.SX
) -> tuple[cs.SX, cs.SX, cs.SX]:
    """The Euler-Lagrange left-hand side of ``L = T - V``, ``T = 1/2 v^T M(q) v``: the
    generalized forces ``M a + b`` that move the coordinates ``q`` (symbols) with rates
    ``v`` and accelerations ``a``, the bias ``b = (sum_k dM/dq_k v_k) v - dT/dq + dV/dq``
    and ``T``."""
    kinetic = 0.5 * cs.dot(v, cs.mtimes(M, v))
    bias = cs.jtimes(cs.mtimes(M, v), q, v) - cs.gradient(kinetic, q) + cs.gradient(V, q)
    return cs.mtimes(M, a) + bias, bias, kinetic


class Lagrangian(ac.Component):
    """A mechanism known only through its Lagrangian (see the module docstring).

    ``coordinates``: ``{name: ac.Flange | ac.RotFlange | None}``, one connector per generalized
    coordinate, in order (``None``: an internal coordinate, no connector, ``Q = 0``).
    ``loads``: ``{name: (ac.Flange | ac.RotFlange, position(q, p))}``, connectors whose
    potential is an expression ``s(q)`` of the coordinates (a point's displacement along a
    direction, a body's angle) and whose flow ``f`` acts on the coordinates as the
    generalized force ``(ds/dq)^T f`` (virtual work ``f ds``); its power is
    ``P_<load> = f ds/dt``. ``velocity_terms(q, v)``: the terms
    ``(sum_k dM/dq_k v_k) v - dT/dq`` stated directly (vectors of SX), when ``M``'s
    structure makes them cheaper than differentiating ``M`` (a decoder's
    ``J^T M_n d^2h[v, v]``); they must be those terms, or energy is not conserved. Then
    ``dV/dq`` is CasADi's Jacobian in the mode it finds cheaper (forward for a few
    coordinates, as for the loads' ``ds/dq``) and the equations' common subexpressions are
    merged (``cs.cse``), so ``M``, ``V``, the loads and the velocity terms built from one
    graph (a decoder's ``h(q)`` and ``J``) evaluate it once.
    ``mass(q, p)`` (rows of an n x n symmetric positive definite matrix, or a CasADi matrix)
    and ``potential(q, p)`` (a scalar) are user expressions of
    the coordinates ``q`` and the component's ``parameters`` ``p`` (both dicts by name, e.g.
    ``lambda q, p: -p["m"] * p["g"] * p["l"] * ac.cos(q["theta"])``); a ``network``
    (:class:`~learning.LagrangianNet`) gives whichever of the two is not given, its raw
    weights parameters of this component (``"<name>.nn_W1_0_0"``, :meth:`parameter_names`).
    ``q0``, ``v0``: start values by coordinate, fixed (parameters ``q_<c>0``, ``v_<c>0``).
    """

    def __init__(
        self,
        name: str,
        coordinates: Mapping[str, ac.ConnectorType],
        *,
        mass: Expression | None = None,
        potential: Expression | None = None,
        network: LagrangianNet | None = None,
        parameters: Mapping[str, float] | None = None,
        q0: Mapping[str, float] | None = None,
        v0: Mapping[str, float] | None = None,
        loads: Mapping[str, tuple[ac.ConnectorType, Expression]] | None = None,
        velocity_terms: Callable[[cs.SX, cs.SX], cs.SX] | None = None,
    ) -> None:
        super().__init__(name)
        self._check(coordinates, mass, potential, network, q0, v0, loads or {})
        self.coordinates = tuple(coordinates)
        self.network = network
        p = {k: self.parameter(k, float(v)) for k, v in (parameters or {}).items()}
        self._theta: dict[str, cs.SX] = {}
        if network is not None:
            for raw, value in zip(network.raw_names, network.raw_init):
                self._theta[raw] = self.parameter(f"nn_{raw}", float(value))
        q, v, a, Q = {}, {}, {}, {}
        for c, ctype in coordinates.items():
            start_q, start_v = (q0 or {}).get(c), (v0 or {}).get(c)
            q[c] = self.variable(
                f"q_{c}", start=self.initial(f"q_{c}0", start_q), fixed=start_q is not None
            )
            v[c] = self.variable(
                f"v_{c}", start=self.initial(f"v_{c}0", start_v), fixed=start_v is not None
            )
            a[c] = self.variable(f"a_{c}")
            self.equations(v[c] == ac.der(q[c]), a[c] == ac.der(v[c]))
            Q[c] = cs.SX(0)
            if ctype is not None:
                port = self.connector(c, ctype)  # reached as self.<c> (__getattr__)
                Q[c] = getattr(port, ctype.flows[0])
                self.equations(getattr(port, ctype.potentials[0]) == q[c])
        M, V = self._mass_and_potential(q, p, mass, potential)
        qv, vv, av, Qv = (cs.vertcat(*d.values()) for d in (q, v, a, Q))
        if velocity_terms is None:
            lhs, _, kinetic = inverse_dynamics(M, V, qv, vv, av)
        else:
            kinetic = 0.5 * cs.dot(vv, cs.mtimes(M, vv))
            lhs = cs.mtimes(M, av) + velocity_terms(qv, vv) + cs.jacobian(V, qv).T
        self.loads = tuple(loads or {})
        for load, (ltype, position) in (loads or {}).items():
            port = self.connector(load, ltype)
            s_l, f_l = (getattr(port, k[0]) for k in (ltype.potentials, ltype.flows))
            where = cs.SX(self._call(position, f"the position(q, p) of load {load!r}", q, p))
            self.equations(
                s_l == where,
                self.variable(f"P_{load}") == f_l * cs.jtimes(where, qv, vv),
            )
            Qv = Qv + cs.jacobian(where, qv).T * f_l
        if velocity_terms is not None:
            n = len(self.coordinates)
            lhs, Qv = cs.vertsplit(cs.cse(cs.vertcat(lhs, Qv)), [0, n, 2 * n])
        self.equations(*[lhs[i] == Qv[i] for i in range(len(self.coordinates))])
        self._q, self._v, self._a, self._lhs = qv, vv, av, lhs
        self.T, self.V, self.E = (self.variable(n) for n in ENERGIES)
        self.equations(self.T == kinetic, self.V == V, self.E == self.T + self.V)
        ported = [c for c in self.coordinates if coordinates[c] is not None]
        self.P = {c: self.variable(f"P_{c}") for c in ported}
        self.equations(*[self.P[c] == v[c] * Q[c] for c in ported])
        self.mass_matrix, self.potential_energy = M, V

    def _check(
        self,
        coordinates: Mapping[str, ac.ConnectorType],
        mass: Expression | None,
        potential: Expression | None,
        network: LagrangianNet | None,
        q0: Mapping[str, float] | None,
        v0: Mapping[str, float] | None,
        loads: Mapping[str, tuple[ac.ConnectorType, Expression]],
    ) -> None:
        who = f"Lagrangian {self.full_name}"
        if not isinstance(coordinates, Mapping) or not coordinates:
            raise OptionError(
                f"{who}: coordinates must map names to ac.Flange or ac.RotFlange, e.g. "
                "{'x': ac.Flange, 'theta': ac.RotFlange}"
            )
        ports = {**coordinates, **{k: v[0] for k, v in loads.items()}}
        for c, ctype in ports.items():
            kind = "coordinate" if c in coordinates else "load"
            if ctype not in (ac.Flange, ac.RotFlange) and not (
                kind == "coordinate" and ctype is None
            ):
                raise OptionError(
                    f"{who}: {kind} {c!r} has connector type {ctype!r}; use ac.Flange "
                    "(translation) or ac.RotFlange (rotation)"
                    + (" or None (internal)" if kind == "coordinate" else "")
                )
            if c in ATTRIBUTES or c.startswith("_") or hasattr(ac.Component, c):
                raise OptionError(
                    f"{who}: the {kind} name {c!r} is taken by the component "
                    f"({', '.join(ATTRIBUTES)} and the methods of ac.Component); rename it"
                )
        clash = sorted(set(coordinates) & set(loads))
        if clash:
            raise OptionError(f"{who}: {clash} name both a coordinate and a load; rename one")
        if network is not None and not isinstance(network, LagrangianNet):
            raise OptionError(f"{who}: network= must be an ln.LagrangianNet, got {network!r}")
        if network is not None and network.n != len(coordinates):
            raise OptionError(
                f"{who}: the network has {network.n} coordinates, the component "
                f"{len(coordinates)} ({', '.join(coordinates)})"
            )
        if network is None and (mass is None or potential is None):
            missing = " and ".join(
                n for n, e in (("mass", mass), ("potential", potential)) if e is None
            )
            raise OptionError(f"{who}: give {missing} (expressions of q and p) or a network")
        for what, starts in (("q0", q0), ("v0", v0)):
            bad = sorted(set(starts or {}) - set(coordinates))
            if bad:
                raise OptionError(
                    f"{who}: {what} names {bad}; the coordinates are {', '.join(coordinates)}"
                )

    def _mass_and_potential(
        self,
        q: dict[str, cs.SX],
        p: dict[str, cs.SX],
        mass: Expression | None,
        potential: Expression | None,
    ) -> tuple[cs.SX, cs.SX]:
        n = len(self.coordinates)
        if self.network is not None:
            M, V = self.network.mass_and_potential(cs.vertcat(*q.values()), self._theta)
        if mass is not None:
            M = _matrix(self._call(mass, "mass(q, p)", q, p))
        if potential is not None:
            V = cs.SX(self._call(potential, "potential(q, p)", q, p))
        if M.shape != (n, n) or V.shape != (1, 1):
            raise OptionError(
                f"Lagrangian {self.full_name}: mass must be {n} x {n} and potential a scalar "
                f"for the coordinates {', '.join(self.coordinates)}; got {M.shape} and {V.shape}"
            )
        self._check_definite(M, q)
        return M, V

    def _call(self, fn: Expression, what: str, q: dict[str, cs.SX], p: dict[str, cs.SX]) -> object:
        """``fn(q, p)`` of a user's function ``what``; a coordinate or a parameter it reads
        and the component lacks is an error naming both, not a bare ``KeyError``."""
        who = f"Lagrangian {self.full_name}: {what}"
        return fn(
            _Given(q, who, "coordinate", "coordinates"), _Given(p, who, "parameter", "parameters")
        )

    def _check_definite(self, M: cs.SX, q: dict[str, cs.SX]) -> None:
        """``M`` symmetric positive definite at ``q = 0`` and two seeded points (the declared
        parameter values): a clear error instead of a singular model later."""
        syms = [self._quantities[k].sym for k in self._parameter_names()]
        values = [float(self._quantities[k].value) for k in self._parameter_names()]
        at = cs.Function("M", [cs.vertcat(*q.values()), cs.vertcat(*syms)], [M])
        rng = np.random.default_rng(0)
        for point in (np.zeros(len(q)), *rng.uniform(-1, 1, (2, len(q)))):
            m = np.array(at(point, values))
            if not np.all(np.isfinite(m)) or np.max(np.abs(m - m.T)) > 1e-12 * max(
                1.0, np.max(np.abs(m))
            ):
                raise OptionError(
                    f"Lagrangian {self.full_name}: the mass matrix is not symmetric at q = "
                    f"{np.round(point, 3).tolist()}: {m.tolist()}"
                )
            if np.min(np.linalg.eigvalsh(m)) <= 0:
                raise OptionError(
                    f"Lagrangian {self.full_name}: the mass matrix is not positive definite at "
                    f"q = {np.round(point, 3).tolist()} (eigenvalues "
                    f"{np.linalg.eigvalsh(m).tolist()}); kinetic energy must be positive"
                )

    def _parameter_names(self) -> list[str]:
        return [k for k, qty in self._quantities.items() if qty.kind == "parameter"]

    def __getattr__(self, name: str) -> ac.Connector:
        """A coordinate's connector by the coordinate's name (``cart_pendulum.x``)."""
        connectors = {} if name.startswith("_") else self.__dict__.get("_connectors", {})
        if name in connectors:
            return connectors[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def dynamics(
        self,
        q: Mapping[str, np.ndarray],
        params: Mapping[str, float] | None = None,
        v: Mapping[str, np.ndarray] | None = None,
        a: Mapping[str, np.ndarray] | None = None,
    ) -> dict[str, np.ndarray]:
        """At the samples ``q`` (by coordinate name): ``M(q)`` (samples x n x n), ``V(q)``,
        ``dV/dq`` (samples x n) and, given rates ``v`` and accelerations ``a`` too, the
        inverse dynamics ``Q = M a + Mdot v - dT/dq + dV/dq`` (samples x n: the generalized
        forces that move the coordinates so; ``a = 0`` gives the bias forces). Parameters at
        their declared values or ``params`` (full or local names, e.g. a
        :func:`~learning.train_lagrangian` result's)."""
        names = self._parameter_names()
        values = []
        for k in names:
            given = (params or {}).get(f"{self.full_name}.{k}", (params or {}).get(k))
            values.append(float(self._quantities[k].value if given is None else given))
        columns = {"q": q, "v": v or {}, "a": a or {}}
        wanted = ("q", "v", "a") if v is not None and a is not None else ("q",)
        for what in wanted:
            missing = [c for c in self.coordinates if c not in columns[what]]
            if missing:
                raise OptionError(
                    f"Lagrangian {self.full_name}.dynamics: {what} lacks {', '.join(missing)}"
                )
        rows = [
            np.broadcast_to(np.asarray(columns[w][c], dtype=float).ravel(), np.shape(q[c]))
            for w in wanted
            for c in self.coordinates
        ]
        syms = cs.vertcat(*[self._quantities[k].sym for k in names])
        V = self.potential_energy
        inputs = [self._q, self._v, self._a][: len(wanted)]
        outputs = [self.mass_matrix, V, cs.gradient(V, self._q)]
        outputs += [self._lhs] if len(wanted) == 3 else []
        fn = cs.Function("dynamics", [cs.vertcat(*inputs), syms], outputs)
        X = np.vstack(rows)
        n, count = len(self.coordinates), X.shape[1]
        out = [np.asarray(o) for o in fn.map(count)(X, values)]
        result = {
            "M": out[0].reshape(n, count, n).transpose(1, 0, 2),
            "V": out[1].ravel(),
            "dVdq": out[2].T,
        }
        if len(out) == 4:
            result["Q"] = out[3].T
        return result

    def identified(
        self,
        q: Mapping[str, np.ndarray],
        params: Mapping[str, float] | None = None,
        measured: Sequence[str] = (),
        *,
        v: Mapping[str, np.ndarray] | None = None,
        a: Mapping[str, np.ndarray] | None = None,
        Q: Mapping[str, np.ndarray] | None = None,
        scale_free: bool = False,
    ) -> dict[str, np.ndarray]:
        """What data with the generalized forces of the coordinates ``measured`` (the set
        ``K``; the others, ``E``, externally specified) determine, at the samples ``q``:
        ``"M_KK"`` (samples x |K| x |K|), ``"M_KE"`` (samples x |K| x |E|), ``"dVdq_K"``
        (samples x |K|) and, given ``v`` and ``a`` (``a_K`` is not used) and ``Q`` of ``K``
        (default zero), the forward dynamics ``"a_K" = M_KK^{-1} (Q_K - M_KE a_E - b_K)``.
        ``M_EE`` and the parts of ``V`` that depend on ``q_E`` alone do not enter the
        equations of ``K``, so such data cannot fix them (ServoLNN, Section 4.2) and they are
        not returned. ``scale_free``: every measured force is zero (homogeneous equations:
        any multiple of the Lagrangian fits), so ``M_KK``, ``M_KE`` and ``dV/dq_K`` are
        divided by the gauge ``mean tr M_KK`` over the samples, ``"gauge"`` in the result
        (the forward dynamics need no division)."""
        K = [self.coordinates.index(c) for c in measured if c in self.coordinates]
        if not K or len(K) != len(measured):
            raise OptionError(
                f"Lagrangian {self.full_name}.identified: measured={list(measured)!r} must "
                f"name one or more of its coordinates {', '.join(self.coordinates)}"
            )
        E = [i for i in range(len(self.coordinates)) if i not in K]
        got = self.dynamics(q, params)
        M = got["M"]
        gauge = float(np.mean(np.trace(M[:, K][:, :, K], axis1=1, axis2=2)))
        c = gauge if scale_free else 1.0
        out = {
            "M_KK": M[:, K][:, :, K] / c,
            "M_KE": M[:, K][:, :, E] / c,
            "dVdq_K": got["dVdq"][:, K] / c,
            "gauge": np.asarray(gauge),
        }
        if v is not None and a is not None:
            held = {**a, **{self.coordinates[k]: 0.0 for k in K}}
            rest = self.dynamics(q, params, v, held)["Q"][:, K]  # M_KE a_E + b_K
            force = np.column_stack(
                [
                    np.broadcast_to(
                        np.asarray((Q or {}).get(self.coordinates[k], 0.0)), rest[:, 0].shape
                    )
                    for k in K
                ]
            )
            out["a_K"] = np.linalg.solve(M[:, K][:, :, K], (force - rest)[..., None])[..., 0]
        return out

    def parameter_names(self) -> list[str]:
        """Full names of the network's raw parameters (``["cp.nn_W1_0_0", ...]``)."""
        return [f"{self.full_name}.nn_{raw}" for raw in self._theta]

    def initial_params(self) -> dict[str, float]:
        """The network's raw parameters' declared values by full name."""
        return {
            n: float(self._quantities[n.rsplit(".", 1)[1]].value) for n in self.parameter_names()
        }


class _Given(dict):
    """The ``q`` or ``p`` a user's function receives: reading a name it lacks raises an
    :class:`OptionError` naming the name, the function (``who``) and the names it has."""

    def __init__(self, values: Mapping[str, cs.SX], who: str, kind: str, option: str) -> None:
        super().__init__(values)
        self.who, self.kind, self.option = who, kind, option

    def __missing__(self, name: str) -> cs.SX:
        have = ", ".join(map(repr, self)) or "none"
        raise OptionError(
            f"{self.who} reads the {self.kind} {name!r}, which the component was not given "
            f"(its {self.option}: {have}); add it to {self.option}= or read one of those"
        )


def _matrix(rows: object) -> cs.SX:
    """A CasADi matrix, or rows of expressions, as one SX matrix."""
    if isinstance(rows, (cs.SX, cs.DM)):
        return cs.SX(rows)
    if isinstance(rows, Sequence):
        return cs.vertcat(*[cs.horzcat(*[cs.SX(e) for e in row]) for row in rows])
    raise OptionError(f"Lagrangian: mass must be rows of expressions or a matrix, got {rows!r}")
