"""Explicit multilayer perceptrons ``output = NN(inputs)`` (De Groote et al., Eq. 4)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from ..core import check_layers
from .explicit import Explicit, token
from .law import _check_option, softplus
from .neural import ACTIVATIONS as SQUASHING

ACTIVATIONS = {**SQUASHING, "relu": lambda z: cs.fmax(z, 0), "softplus": softplus}
HE = ("relu", "softplus")  # activations initialized by He's rule; the others by Glorot's


def draw_weights(
    rng: np.random.Generator, fan_in: int, fan_out: int, activation: str
) -> np.ndarray:
    """A layer's ``fan_out x fan_in`` weights from ``N(0, s^2)``: He's ``s^2 = 2 / fan_in``
    for rectifying activations (:data:`HE`), Glorot's ``s^2 = 2 / (fan_in + fan_out)``
    otherwise."""
    var = 2 / fan_in if activation in HE else 2 / (fan_in + fan_out)
    return rng.normal(0.0, np.sqrt(var), (fan_out, fan_in))


class MLP(Explicit):
    """Explicit law ``output = c NN(a)``, a feed-forward network of any depth and width on
    the standardized inputs ``a_k = (u_k - offset_k) / scale_k``:

        z[1] = W[1] a + b[1],   z[l] = W[l] sigma(z[l-1]) + b[l],   NN(a) = z[L],

    ``L = len(hidden) + 1`` (the output layer is linear), ``sigma`` one of ``relu``
    (``max(0, z)``), ``tanh``, ``softplus`` (``log(1 + e^z)``), ``sigmoid``, and
    ``c = output_scale``. With ``hidden=(32,)``, ``activation="relu"``, ``offsets`` 0 and
    ``c = 1`` this is the paper's ``eta(q) = W_o^T relu(W_h^T Sigma q + b_h) + b_o``.

    ``inputs``: the tokens the network reads (``("x", "der(x)")``: the potential difference
    and its rate); ``output``: the token it gives (default the flow ``"f"``). Weights
    ``W{l}_{j}_{k}`` (layer ``l`` from 1, row ``j``, column ``k``) and biases ``b{l}_{j}``
    are all raw parameters (``theta_W1_0_0``, ...): ``n_1 (K + 1) + ... + (n_last + 1)``
    of them (129 for ``hidden=(32,)`` and two inputs).

    Initialization (seeded by ``seed``): every ``W[l]`` drawn from ``N(0, s_l^2)`` with
    He's ``s_l^2 = 2 / fan_in`` for ``relu`` and ``softplus`` (keeps the second moment of
    the pre-activations through rectifying layers) and Glorot's ``s_l^2 = 2 / (fan_in +
    fan_out)`` for ``tanh`` and ``sigmoid``; ``fan_in``/``fan_out`` are the layer's input and
    output widths; biases 0.

    Standardization: ``scales`` (default 1) and ``offsets`` (default 0), per input as a
    sequence or a mapping by token, are fixed data (not parameters);
    :meth:`~learning.laws.explicit.Explicit.standardized` sets them from samples.

    ``dissipative``: an input token ``v`` (the rate conjugate to the output: ``"der(x)"``
    for a force on a flange, ``"x"`` for a current through a pin); the law is then

        eta(u) = c (v / scale_v) softplus(NN(a)),

    so ``v eta = c v^2 softplus(NN(a)) / scale_v >= 0`` for every input and every weight
    (``c, scale_v > 0``, ``softplus > 0``): the power ``v eta`` the component takes in is
    never negative. Nothing is lost: a C^1 ``eta`` with ``v eta >= 0`` vanishes at ``v = 0``
    and is ``v h`` with ``h(d, v) = int_0^1 d eta / dv (d, s v) ds`` (``d``: the other
    inputs), ``h >= 0`` since ``v^2 h >= 0``, which ``softplus(NN)`` approximates (``h -> 0``
    as ``NN -> -inf``); Coulomb friction's jump at ``v = 0`` becomes a steep slope. At
    ``v = 0`` the law is smooth: ``d eta / dv = c softplus(NN(a)) / scale_v`` there (finite,
    > 0), and ``d eta / dw = 0`` (eta is 0 at rest whatever the weights).
    """

    def __init__(
        self,
        hidden: Sequence[int] = (32,),
        activation: str = "relu",
        *,
        inputs: Sequence[str] = ("x",),
        output: str = "f",
        seed: int = 0,
        scales: Sequence[float] | Mapping[str, float] | None = None,
        offsets: Sequence[float] | Mapping[str, float] | None = None,
        output_scale: float = 1.0,
        dissipative: str | None = None,
    ) -> None:
        _check_option("MLP", "activation", activation, tuple(ACTIVATIONS))
        self.hidden = check_layers("MLP", hidden)
        if not (np.isfinite(output_scale) and output_scale > 0):
            raise OptionError(f"MLP: output_scale={output_scale!r} must be a positive number")
        self.activation, self.seed, self.output_scale = activation, seed, float(output_scale)
        self._scales, self._offsets = scales, offsets
        self.dissipative = None if dissipative is None else token(dissipative)
        super().__init__(output, inputs)

    def _setup(self) -> None:
        self.scales = self._per_input("scales", self._scales, 1.0)
        self.offsets = self._per_input("offsets", self._offsets, 0.0)
        if any(not (np.isfinite(s) and s > 0) for s in self.scales):
            raise OptionError(f"MLP: scales={self.scales!r} must be positive numbers")
        if self.dissipative is not None and self.dissipative not in self.inputs:
            raise OptionError(
                f"MLP: dissipative={self.dissipative!r} must name one of the inputs "
                f"{', '.join(self.inputs)} (the rate v in v * eta >= 0)"
            )
        rng = np.random.default_rng(self.seed)
        sizes = self.sizes
        for l in range(1, len(sizes)):
            fan_in, fan_out = sizes[l - 1], sizes[l]
            draws = draw_weights(rng, fan_in, fan_out, self.activation)
            for j in range(fan_out):
                for k in range(fan_in):
                    self._add(f"W{l}_{j}_{k}", "raw", 1, draws[j, k])
            for j in range(fan_out):
                self._add(f"b{l}_{j}", "raw", 1, 0.0)

    def _per_input(
        self, what: str, value: Sequence[float] | Mapping[str, float] | None, default: float
    ) -> tuple[float, ...]:
        if value is None:
            return (default,) * len(self.inputs)
        if isinstance(value, Mapping):
            given = {token(k): float(v) for k, v in value.items()}
            bad = set(given) - set(self.inputs)
            if bad:
                raise OptionError(
                    f"MLP: {what} names {sorted(bad)}; the inputs are {', '.join(self.inputs)}"
                )
            return tuple(given.get(t, default) for t in self.inputs)
        values = tuple(float(v) for v in value)
        if len(values) != len(self.inputs):
            raise OptionError(
                f"MLP: {what} has {len(values)} entries for the inputs {', '.join(self.inputs)}"
            )
        return values

    @property
    def sizes(self) -> list[int]:
        """Layer widths from the inputs to the output: ``[K, *hidden, 1]``."""
        return [len(self.inputs), *self.hidden, 1]

    def _matrix(self, w: dict[str, cs.SX], l: int) -> tuple[cs.SX, cs.SX]:
        """``W[l]`` (rows: this layer's units) and ``b[l]`` as SX matrices."""
        rows, cols = self.sizes[l], self.sizes[l - 1]
        W = cs.vertcat(*[w[f"W{l}_{j}_{k}"] for j in range(rows) for k in range(cols)])
        b = cs.vertcat(*[w[f"b{l}_{j}"] for j in range(rows)])
        return cs.reshape(W, cols, rows).T, b

    def _output(self, a: list[cs.SX], w: dict[str, cs.SX]) -> cs.SX:
        sigma = ACTIVATIONS[self.activation]
        z = (cs.vertcat(*a) - cs.DM(self.offsets)) / cs.DM(self.scales)
        for l in range(1, len(self.sizes)):
            W, b = self._matrix(w, l)
            z = cs.mtimes(W, z if l == 1 else sigma(z)) + b
        if self.dissipative is None:
            return self.output_scale * z
        k = self.inputs.index(self.dissipative)
        return self.output_scale * (a[k] / self.scales[k]) * softplus(z)

    def _with_scaling(self, offsets: Mapping[str, float], scales: Mapping[str, float]) -> MLP:
        law = copy.copy(self)
        law._offsets = law.offsets = tuple(offsets[t] for t in self.inputs)
        law._scales = law.scales = tuple(scales[t] for t in self.inputs)
        return law
