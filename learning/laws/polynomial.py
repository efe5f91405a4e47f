"""Separable odd polynomial laws (Propositions 4.1-4.3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from .law import Law, _check_option, _per_input, input_samples


class Polynomial(Law):
    """Separable odd polynomial law ``g_1(u_1) = g_2(u_2) + ... + g_K(u_K)`` with
    ``g_k(l) = sum_{i=1..order} w_{k,i} l^(2i-1)`` (``order`` terms, degree ``2 order - 1``).

    For a Type 1 component this is ``g_f(f) = g_x(x)``; weights are named by input label and
    power (``w_f1, w_f3, ..., w_x1, ...``), raw parameters ``theta_f1, ...``.

    ``constraint``:

    - ``"feasible"`` (Proposition 4.1): each vector ``w_k`` has the fixed sign ``signs[k]``
      (default +1) and ``|w_{k,1}| >= margin > 0``. Then ``|g_k'(l)| = |sum (2i-1) w_{k,i}
      l^(2i-2)| >= |w_{k,1}|`` for every ``l`` (all terms one sign, even powers): the partial
      derivatives of Proposition 3.1 never vanish.
    - ``"dissipative"`` (Propositions 4.2, 4.3): all vectors positive. ``g_f``, ``g_x`` are
      then odd and strictly increasing, so ``g_f(f) = g_x(x)`` gives ``sign f = sign x`` and
      ``f x >= 0``: for Type 1 (``f = f_a = -f_b``, ``x = x_a - x_b``) the power
      ``f_a x_a + f_b x_b = f x``, for Type 2 (``x = x_a = x_b``, ``f = f_a + f_b``) it is
      ``(f_a + f_b) x``; both are >= 0. (With more than two inputs the vectors are still
      positive, but the power guarantee is only for the pair ``(f, x)``.)
    - ``None``: ``w = theta``, no guarantee.

    Input scales: ``g_k`` reads ``u_k / scale_k`` (``scales=`` by input label or in input
    order, default 1; :meth:`standardized` sets them from samples), so inputs of any
    magnitude (currents of 1e-5 A) give weights and raw parameters of order 1. Why the
    constraints survive: ``sum_i w_{k,i} (u / s_k)^(2i-1)`` is the unscaled polynomial with
    weights ``w_{k,i} / s_k^(2i-1)``, each of ``w_{k,i}``'s sign since ``s_k > 0``; the
    sign patterns of Propositions 4.1-4.3 are statements about signs only, so they hold
    for the scaled law as for the unscaled one (``|g_k'(u)| >= |w_{k,1}| / s_k > 0``;
    ``g_k`` odd and increasing, hence ``f x >= 0``). No offsets: a shift would make ``g_k``
    no longer odd, losing both ``g(0) = 0`` and the sign argument. The reported weights
    are those of the scaled inputs.

    ``g = 0`` is unchanged by scaling all weights, so one weight is fixed: by default
    ``w_{1,1} = signs[0]`` (``normalize=True``; no loss of generality since Proposition 4.1
    makes ``w_{1,1}`` nonzero); ``fixed={"x5": 1.0}`` fixes others instead (the paper's
    ``w6 = 1``). ``init`` gives start weights by name (default ``+-1`` for first entries,
    ``+-0.1`` for the others).
    """

    def __init__(
        self,
        order: int = 3,
        constraint: str | None = "dissipative",
        *,
        signs: Sequence[int] | Mapping[str, int] | None = None,
        init: Mapping[str, float] | None = None,
        fixed: Mapping[str, float] | None = None,
        normalize: bool = True,
        transform: str = "softplus",
        margin: float = 1e-6,
        scales: Sequence[float] | Mapping[str, float] | None = None,
        n_inputs: int | None = None,
        labels: Sequence[str] | None = None,
        alias: Mapping[str, str] | None = None,
    ) -> None:
        _check_option("Polynomial", "constraint", constraint, ("feasible", "dissipative", None))
        if not (isinstance(order, int) and order >= 1):
            raise OptionError(f"Polynomial: order={order!r} must be an integer >= 1 (terms)")
        if not (np.isfinite(margin) and margin >= 0):
            raise OptionError(f"Polynomial: margin={margin!r} must be >= 0")
        self.order, self.constraint, self.transform = order, constraint, transform
        self._signs, self._init, self._fixed, self._scales = signs, init, fixed, scales
        self.normalize, self.margin = normalize, float(margin)
        super().__init__(n_inputs, labels, alias)

    @classmethod
    def paper_resistor(
        cls,
        constraint: str | None = "dissipative",
        init: Mapping[str, float] | None = None,
        **options: object,
    ) -> Polynomial:
        """The paper's resistor ``w1 i + w2 i^3 + w3 i^5 = w4 v + w5 v^3 + w6 v^5`` with
        ``w6 = 1`` fixed (weights reported as ``w1 ... w6``, raw ``theta_w1 ... theta_w5``).
        Fixing ``w6`` rather than ``w1`` keeps a ``v^5`` term in every model, so a linear
        truth needs ``w1, w4 >> 1``; the default :class:`Polynomial` fixes ``w_f1 = 1``."""
        alias = {"w_f1": "w1", "w_f3": "w2", "w_f5": "w3", "w_x1": "w4", "w_x3": "w5"}
        alias["w_x5"] = "w6"
        start = {"w1": 1.0, "w2": 0.1, "w3": 0.1, "w4": 1.0, "w5": 0.1, **(init or {})}
        return cls(3, constraint, init=start, fixed={"w6": 1.0}, alias=alias, **options)  # type: ignore[arg-type]

    def _setup(self) -> None:
        signs = _per_input(self, "signs", self._signs, 1)
        if any(s not in (1, -1) for s in signs):
            raise OptionError(f"Polynomial: signs={signs!r} must be +1 or -1 per input")
        if self.constraint == "dissipative" and any(s != 1 for s in signs):
            raise OptionError(
                "Polynomial: constraint='dissipative' needs all coefficient vectors positive; "
                f"signs={signs!r} describes an active element: use constraint='feasible'"
            )
        self.signs = tuple(signs)
        scales = _per_input(self, "scales", self._scales, 1.0)
        if any(not (np.isfinite(x) and x > 0) for x in scales):
            raise OptionError(f"Polynomial: scales={scales!r} must be positive numbers")
        self.scales = tuple(float(x) for x in scales)
        canonical = [f"w_{lb}{2 * i - 1}" for lb in self.labels for i in range(1, self.order + 1)]
        fixed = self._resolve(self._fixed, canonical, "fixed")
        init = self._resolve(self._init, canonical, "init")
        if self._fixed is None and self.normalize:
            fixed = {self.alias.get(canonical[0], canonical[0]): float(signs[0])}
        for label, s in zip(self.labels, signs):
            for i in range(1, self.order + 1):
                name = f"w_{label}{2 * i - 1}"
                shown = self.alias.get(name, name)
                start = init.get(shown, s * (1.0 if i == 1 else 0.1))
                if shown in fixed:
                    value = fixed[shown]
                    if self.constraint and (value * s < 0 or (i == 1 and value * s <= 0)):
                        raise OptionError(
                            f"Polynomial: fixed {shown} = {value!r} breaks constraint="
                            f"{self.constraint!r} (sign {s:+d}, first entries nonzero)"
                        )
                    self._add(name, "fixed", s, value)
                elif self.constraint is None:
                    self._add(name, "raw", s, start)
                else:
                    self._add(name, "signed", s, start, self.margin if i == 1 else 0.0)

    def standardized(self, samples: Mapping[str, Sequence[float]] | np.ndarray) -> Polynomial:
        """This law with each input scaled by the root mean square of its samples,
        ``scale_k = sqrt(mean(u_k^2))`` (about 0, not the mean: no offsets, see the class
        docstring), as :meth:`learning.MLP.standardized` does for networks. ``samples``: a
        mapping by input label or token (``{"f": i, "x": v}``, ``"der(x)"`` or ``"dx"``;
        other keys ignored) or an ``N x K`` array in input order; non-finite samples are
        left out. The scales are fixed data of the returned law, not fitted."""
        scales = {}
        for label, column in input_samples(self, samples).items():
            c = column[np.isfinite(column)]
            scales[label] = float(np.sqrt(np.mean(c**2))) if c.size else 0.0
            if not scales[label] > 0:
                raise OptionError(
                    f"Polynomial: the samples of input {label!r} are all 0 or not finite; "
                    "they cannot set its scale"
                )
        return self._with_options(_scales=scales)

    def _relation(self, u: list[cs.SX], w: dict[str, cs.SX]) -> tuple[cs.SX, cs.SX]:
        def g(k: int) -> cs.SX:
            label, a = self.labels[k], u[k] / self.scales[k]
            return sum(
                (
                    w[self.alias.get(f"w_{label}{p}", f"w_{label}{p}")] * a**p
                    for p in range(1, 2 * self.order, 2)
                ),
                cs.SX(0),
            )

        return g(0), sum((g(k) for k in range(1, self.n_inputs)), cs.SX(0))
