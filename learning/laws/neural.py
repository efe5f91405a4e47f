"""Neural-network laws: tanh/sigmoid layers with a linear output (Proposition 4.4)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from ..core import check_layers
from .law import Law, _check_option, _per_input

ACTIVATIONS: dict[str, Callable[[cs.SX], cs.SX]] = {
    "tanh": cs.tanh,
    "sigmoid": lambda z: 1 / (1 + cs.exp(-z)),
}


class NeuralNet(Law):
    """Feed-forward law ``g(u) = W[L] a[L-1] + b[L] = 0`` with ``a[0] = u / input_scale``,
    ``a[l] = sigma(W[l] a[l-1] + b[l])`` (sigma = tanh or sigmoid; the paper's Eq. 6-7).

    Weights ``W{l}_{j}_{k}`` (layer ``l`` from 1, row ``j``, column ``k``) and biases
    ``b{l}_{j}``; layer ``L = len(hidden) + 1`` is the linear output.

    ``constraint``:

    - ``"feasible"`` (Proposition 4.4): ``dg/du_k = W[L] D[L-1] W[L-1] ... D[1] W[1][:, k]``
      with ``D[l] = diag(sigma'(z[l])) > 0``, a positive combination of the path products
      ``W[L]_{j_{L-1}} ... W[2]_{j_2 j_1} W[1]_{j_1 k}``. Every ``W[l]`` with ``l >= 2`` is
      made positive and column ``k`` of ``W[1]`` gets the fixed sign ``signs[k]`` (default
      -1 for the flow input, +1 for the others, as the paper's resistor), so all those
      products have sign ``signs[k]`` and none is zero: ``dg/du_k`` never vanishes on any
      bounded set. Positive deeper layers lose nothing (tanh is odd, sigmoid(-z) =
      1 - sigmoid(z): a neuron's sign can be moved into its inputs). ``signs[k] = None``
      leaves input ``k`` unconstrained.
    - ``"dissipative"``: as ``"feasible"`` with ``signs = (-1, +1, ...)`` and the output
      shifted so ``g(0) = 0`` (no output bias). Then on ``g(f, x) = 0`` the flow is an
      increasing function of ``x`` through the origin, so ``f x >= 0`` (an addition to the
      paper, which gives no NN dissipativity condition).
    - ``None``: raw weights, no guarantee.

    Sign-fixed weights are ``s (margin + softplus(theta))``. ``dg/du_k`` is nonzero on every
    bounded set, but it decays where neurons saturate (``1 - tanh(z)^2`` is 0 in floating
    point past ``|z| = 19``) and a bounded ``g`` need not have a root for every input: scale
    inputs to O(1) with ``input_scale``.

    Start weights: magnitudes uniform in ``[0.5, 1.5] / sqrt(fan_in)`` (seeded), signs as the
    pattern, biases 0; the same start with and without constraints. ``init`` overrides by name.
    """

    def __init__(
        self,
        hidden: Sequence[int] = (2,),
        activation: str = "tanh",
        constraint: str | None = "feasible",
        *,
        signs: Sequence[int | None] | Mapping[str, int | None] | None = None,
        init: Mapping[str, float] | None = None,
        seed: int = 0,
        input_scale: Sequence[float] | None = None,
        transform: str = "softplus",
        margin: float = 1e-6,
        n_inputs: int | None = None,
        labels: Sequence[str] | None = None,
        alias: Mapping[str, str] | None = None,
    ) -> None:
        _check_option("NeuralNet", "constraint", constraint, ("feasible", "dissipative", None))
        _check_option("NeuralNet", "activation", activation, tuple(ACTIVATIONS))
        self.hidden = check_layers("NeuralNet", hidden, empty=False)
        self.activation, self.constraint, self.transform = activation, constraint, transform
        self._signs, self._init, self.seed = signs, init, seed
        self._scale, self.margin = input_scale, float(margin)
        super().__init__(n_inputs, labels, alias)

    @classmethod
    def paper_resistor(
        cls,
        constraint: str | None = "feasible",
        init: Mapping[str, float] | None = None,
        **options: object,
    ) -> NeuralNet:
        """The paper's ``g(i, v) = w5 tanh(w1 v + w2 i + b1) + w6 tanh(w3 v + w4 i + b2) +
        b3`` with ``w1, w3, w5, w6 > 0`` and ``w2, w4 < 0`` under ``"feasible"``."""
        alias = {"W1_0_1": "w1", "W1_0_0": "w2", "W1_1_1": "w3", "W1_1_0": "w4"}
        alias |= {"W2_0_0": "w5", "W2_0_1": "w6", "b1_0": "b1", "b1_1": "b2", "b2_0": "b3"}
        return cls((2,), "tanh", constraint, init=init, alias=alias, n_inputs=2, **options)  # type: ignore[arg-type]

    def _setup(self) -> None:
        default = [-1] + [1] * (self.n_inputs - 1)
        signs = _per_input(self, "signs", self._signs, "default")
        signs = [d if s == "default" else s for s, d in zip(signs, default)]
        if any(s not in (1, -1, None) for s in signs):
            raise OptionError(f"NeuralNet: signs={signs!r} must be +1, -1 or None per input")
        if self.constraint == "dissipative" and (signs[0] != -1 or signs[1:2] != [1]):
            raise OptionError(
                "NeuralNet: constraint='dissipative' needs signs -1 for the flow input and "
                f"+1 for the potential input (g decreasing in f, increasing in x), got {signs!r}"
            )
        self.signs = tuple(signs)
        scale = _per_input(self, "input_scale", self._scale, 1.0)
        if any(not (np.isfinite(s) and s > 0) for s in scale):
            raise OptionError(f"NeuralNet: input_scale={scale!r} must be positive numbers")
        self.scale = tuple(float(s) for s in scale)
        rng = np.random.default_rng(self.seed)
        sizes = [self.n_inputs, *self.hidden, 1]
        layers = range(1, len(sizes))
        names = [
            f"W{l}_{j}_{k}" for l in layers for j in range(sizes[l]) for k in range(sizes[l - 1])
        ]
        names += [f"b{l}_{j}" for l in layers for j in range(sizes[l])]
        init = self._resolve(self._init, names, "init")
        for l in range(1, len(sizes)):
            for j in range(sizes[l]):
                for k in range(sizes[l - 1]):
                    s = signs[k] if l == 1 else 1
                    size = rng.uniform(0.5, 1.5) / np.sqrt(sizes[l - 1])
                    sign = s if s is not None else rng.choice([-1.0, 1.0])
                    name = f"W{l}_{j}_{k}"
                    start = init.get(self.alias.get(name, name), sign * size)
                    signed = self.constraint is not None and s is not None
                    self._add(name, "signed" if signed else "raw", s or 1, start, self.margin)
            for j in range(sizes[l]):
                name = f"b{l}_{j}"
                if not (l == len(sizes) - 1 and self.constraint == "dissipative"):
                    self._add(name, "raw", 1, init.get(self.alias.get(name, name), 0.0))

    def _network(self, u: list[cs.SX], w: dict[str, cs.SX]) -> cs.SX:
        act = ACTIVATIONS[self.activation]
        sizes = [self.n_inputs, *self.hidden, 1]
        a = [x / s for x, s in zip(u, self.scale)]
        for l in range(1, len(sizes)):
            z = []
            for j in range(sizes[l]):
                zj = w.get(self.alias.get(f"b{l}_{j}", f"b{l}_{j}"), cs.SX(0))
                for k in range(sizes[l - 1]):
                    zj = zj + w[self.alias.get(f"W{l}_{j}_{k}", f"W{l}_{j}_{k}")] * a[k]
                z.append(zj)
            a = z if l == len(sizes) - 1 else [act(zj) for zj in z]
        return a[0]

    def _relation(self, u: list[cs.SX], w: dict[str, cs.SX]) -> tuple[cs.SX, cs.SX]:
        g = self._network(u, w)
        if self.constraint == "dissipative":
            g = g - self._network([cs.SX(0)] * self.n_inputs, w)
        return g, cs.SX(0)
