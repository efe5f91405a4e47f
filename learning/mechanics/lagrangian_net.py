"""``LagrangianNet``: the multi-headed network of a learned Lagrangian (ServoLNN, Section 4.1).

One trunk of hidden layers on the standardized coordinates ``a = (q - offset) / scale``
feeds three linear heads: the potential energy ``V``, the diagonal ``l_d`` and the strictly
lower entries ``l_o`` of a lower-triangular ``L``:

    h_1 = sigma(W_1 a + b_1),  h_k = sigma(W_k h_{k-1} + b_k),
    V(q) = c_V (w_V . h + b_V),
    L_ii = sqrt(c_M) softplus(W_d h + b_d)_i,   L_ij = sqrt(c_M) (W_o h + b_o)_(ij)  (i > j),
    M(q) = L L^T + f I,   f = EPS_FRACTION tr(L L^T) / n   (default),   f = eps   (eps= given).

``M`` is symmetric positive definite for every weight (``x^T M x = |L^T x|^2 + f |x|^2``, and
``tr(L L^T) >= sum_i L_ii^2 > 0``). The floor ``f`` bounds ``M``'s smallest eigenvalue from
below, so a mechanism whose true ``M`` has an eigenvalue below ``f`` cannot be learned (``M``
sits at its floor there and the rest of the model bends around it). The default floor is a
fraction :data:`EPS_FRACTION` of ``M``'s own mean eigenvalue, so it follows whatever scale
the data give ``M`` (the units of the masses and inertias): it only bounds ``M``'s condition
number, ``cond(M) <= (n + EPS_FRACTION) / EPS_FRACTION``. A given ``eps`` is an absolute
floor in the data's units (the paper's 0.01, fine for masses of order 1 and more);
:func:`~learning.train_lagrangian` warns (:class:`MassFloorWarning`) when the trained ``M``'s
smallest eigenvalue sits at its floor at a training sample.
The paper puts a ReLU on the diagonal; softplus keeps ``M`` smooth in ``q``, which the
Euler-Lagrange equations differentiate once more (``dM/dq``) and Newton and IDAS once
again. ``c_M``, ``c_V`` (``mass_scale``, ``energy_scale``) and the coordinates' offsets and
scales are fixed data that make the weights O(1); the weights are raw parameters (names
``W{k}_{j}_{i}``, ``b{k}_{j}``, ``WV_{i}``, ``bV``, ``Wd_{j}_{i}``, ``bd_{j}``,
``Wo_{j}_{i}``, ``bo_{j}``), drawn as :class:`~learning.MLP` draws its weights (He for
``relu``/``softplus``, Glorot for ``tanh``/``sigmoid``, seeded; biases 0).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from ..core import check_count, check_layers
from ..laws import ACTIVATIONS, draw_weights, softplus

EPS_FRACTION = 1e-3  # the default floor of M's eigenvalues, relative to their mean
FLOOR_BINDS = 1.5  # M's smallest eigenvalue below this many floors: the floor binds


class MassFloorWarning(UserWarning):
    """A learned mass matrix's smallest eigenvalue sits at the floor ``f`` of
    :class:`LagrangianNet` (within :data:`FLOOR_BINDS` ``f``): the true one may lie below it."""


class LagrangianNet:
    """``q -> (M(q), V(q))`` for ``n`` coordinates (see the module docstring); ``hidden``:
    the trunk's widths (the paper: one layer of 64 softplus units); ``eps``: an absolute
    floor of ``M``'s eigenvalues (the paper: 0.01), None (default) for the floor
    ``EPS_FRACTION`` times ``M``'s mean eigenvalue, which follows the data's scale."""

    def __init__(
        self,
        n: int,
        hidden: Sequence[int] = (64,),
        activation: str = "softplus",
        *,
        eps: float | None = None,
        seed: int = 0,
        mass_scale: float = 1.0,
        energy_scale: float = 1.0,
        offsets: Sequence[float] | None = None,
        scales: Sequence[float] | None = None,
    ) -> None:
        if activation not in ACTIVATIONS or activation == "relu":
            allowed = ", ".join(a for a in ACTIVATIONS if a != "relu")
            raise OptionError(
                f"LagrangianNet: activation={activation!r} must be one of {allowed} (the "
                "Euler-Lagrange equations differentiate the network twice: relu has no curvature)"
            )
        n = check_count("LagrangianNet", "n", n, hint="the number of coordinates")
        hidden = check_layers("LagrangianNet", hidden)
        positive = {"mass_scale": mass_scale, "energy_scale": energy_scale}
        positive.update({"eps": eps} if eps is not None else {})
        for what, value in positive.items():
            if not (np.isfinite(value) and value > 0):
                raise OptionError(f"LagrangianNet: {what}={value!r} must be a positive number")
        self.n, self.hidden, self.activation = n, hidden, activation
        self.eps, self.seed = (None if eps is None else float(eps)), seed
        self.mass_scale, self.energy_scale = float(mass_scale), float(energy_scale)
        self.offsets = self._per_coordinate("offsets", offsets, 0.0)
        self.scales = self._per_coordinate("scales", scales, 1.0)
        if any(not (np.isfinite(s) and s > 0) for s in self.scales):
            raise OptionError(f"LagrangianNet: scales={scales!r} must be positive numbers")
        self.raw_names, self.raw_init = self._draw()

    def _per_coordinate(self, what: str, value: object, default: float) -> tuple[float, ...]:
        if value is None:
            return (default,) * self.n
        values = tuple(float(v) for v in value)  # type: ignore[union-attr]
        if len(values) != self.n:
            raise OptionError(
                f"LagrangianNet: {what} has {len(values)} entries for {self.n} coordinates"
            )
        return values

    @property
    def heads(self) -> dict[str, int]:
        """The heads' widths: ``V`` 1, ``d`` (diagonal) n, ``o`` (strictly lower) n(n-1)/2."""
        return {"V": 1, "d": self.n, "o": self.n * (self.n - 1) // 2}

    def _draw(self) -> tuple[list[str], np.ndarray]:
        rng = np.random.default_rng(self.seed)
        names: list[str] = []
        values: list[float] = []
        sizes = [self.n, *self.hidden]
        layers = [(f"W{k}", f"b{k}", sizes[k - 1], sizes[k]) for k in range(1, len(sizes))]
        layers += [(f"W{h}", f"b{h}", sizes[-1], w) for h, w in self.heads.items() if w]
        for W, b, fan_in, fan_out in layers:
            draws = draw_weights(rng, fan_in, fan_out, self.activation)
            names += [f"{W}_{j}_{i}" for j in range(fan_out) for i in range(fan_in)]
            values += list(draws.ravel())
            names += [f"{b}_{j}" for j in range(fan_out)]
            values += [0.0] * fan_out
        return names, np.array(values)

    def standardized(self, q: np.ndarray | Sequence[Sequence[float]]) -> LagrangianNet:
        """This network with offsets and scales from samples ``q`` (n rows, or columns of
        an (samples, n) array: the means and standard deviations; a constant coordinate
        gets scale 1)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        if q.shape[0] != self.n:
            q = q.T
        if q.shape[0] != self.n or not np.all(np.isfinite(q)):
            raise OptionError(
                f"LagrangianNet.standardized: need finite samples of {self.n} coordinates, "
                f"got an array of shape {np.shape(q)}"
            )
        out = copy.copy(self)
        std = q.std(axis=1)
        out.offsets = tuple(q.mean(axis=1))
        out.scales = tuple(np.where(std > 0, std, 1.0))
        return out

    def mass_and_potential(
        self, q: cs.SX | cs.MX, theta: Mapping[str, cs.SX | cs.MX]
    ) -> tuple[cs.SX | cs.MX, cs.SX | cs.MX]:
        """``M(q)`` (n x n) and ``V(q)`` for the coordinates ``q`` (a column) and the raw
        parameters ``theta`` by name (symbols or numbers)."""
        LLt, V = self._factor_and_potential(q, theta)
        return LLt + self.floor(LLt) * cs.DM.eye(self.n), V

    def _factor_and_potential(
        self, q: cs.SX | cs.MX, theta: Mapping[str, cs.SX | cs.MX]
    ) -> tuple[cs.SX | cs.MX, cs.SX | cs.MX]:
        """``L L^T`` and ``V`` (the module docstring's formulas)."""
        sigma = ACTIVATIONS[self.activation]
        h = (q - cs.DM(self.offsets)) / cs.DM(self.scales)
        sizes = [self.n, *self.hidden]
        for k in range(1, len(sizes)):
            h = sigma(self._affine(theta, f"W{k}", f"b{k}", sizes[k - 1], sizes[k], h))
        width = sizes[-1]
        V = self.energy_scale * self._affine(theta, "WV", "bV", width, 1, h)
        d = softplus(self._affine(theta, "Wd", "bd", width, self.n, h))
        o = self._affine(theta, "Wo", "bo", width, self.heads["o"], h) if self.n > 1 else None
        rows = []
        k = 0
        for i in range(self.n):
            row = []
            for j in range(self.n):
                if j == i:
                    row.append(d[i])
                elif j < i:
                    row.append(o[k])
                    k += 1
                else:
                    row.append(0)
            rows.append(cs.horzcat(*row))
        L = np.sqrt(self.mass_scale) * cs.vertcat(*rows)
        return cs.mtimes(L, L.T), V

    def floor(self, LLt: cs.SX | cs.MX) -> cs.SX | cs.MX | float:
        """The floor ``f`` that ``M = L L^T + f I`` adds (see the module docstring)."""
        return self.eps if self.eps is not None else EPS_FRACTION * cs.trace(LLt) / self.n

    def floor_share(
        self, q: np.ndarray, theta: Mapping[str, float], block: Sequence[int] | None = None
    ) -> tuple[float, float]:
        """At samples ``q`` (n x samples) and weights ``theta``: the share of samples where
        the smallest eigenvalue of ``M`` (of its rows and columns ``block``, e.g. the
        identified ones) is below :data:`FLOOR_BINDS` floors, and the smallest ratio of that
        eigenvalue to the floor (>= 1, 1: exactly at it)."""
        x = cs.SX.sym("q", self.n)
        LLt, _ = self._factor_and_potential(x, theta)
        floor = self.floor(LLt)
        M = LLt + floor * cs.DM.eye(self.n)
        out = cs.Function("mass_floor", [x], [cs.vec(M), cs.SX(floor)]).map(q.shape[1])
        Ms, floors = (np.asarray(v) for v in out(np.asarray(q, dtype=float)))
        index = list(range(self.n)) if block is None else list(block)
        Ms = Ms.T.reshape(-1, self.n, self.n)[:, index][:, :, index]
        smallest = np.linalg.eigvalsh(Ms)[:, 0]
        ratio = smallest / np.ravel(floors)
        return float(np.mean(ratio < FLOOR_BINDS)), float(ratio.min())

    @staticmethod
    def _affine(
        theta: Mapping[str, object], W: str, b: str, fan_in: int, fan_out: int, h: object
    ) -> object:
        names = [f"{W}_{j}_{i}" for j in range(fan_out) for i in range(fan_in)]
        weights = cs.vertcat(*[theta[name] for name in names])
        bias = cs.vertcat(*[theta[f"{b}_{j}"] for j in range(fan_out)])
        return cs.mtimes(cs.reshape(weights, fan_in, fan_out).T, h) + bias
