"""Sums of explicit laws with separate inputs (De Groote et al., Section IV-E)."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

import casadi as cs

from acausal.errors import OptionError

from .explicit import Explicit
from .mlp import MLP


class Sum(Explicit):
    """``output = sum_p eta_p(inputs_p)``: named explicit laws, each on its own inputs,
    all giving the same output; the sum reads the union of their inputs (in order of first
    appearance).

    The paper's split of the slider load into a conservative and a non-conservative force,

        ln.Sum(c=ln.MLP(inputs=("x",)),
               nc=ln.MLP(inputs=("x", "der(x)"), dissipative="der(x)"))

    is ``f = eta_c(x) + eta_nc(x, der(x))``: ``eta_c`` depends on the position only, so it
    is conservative (its work ``int eta_c dx`` between two positions does not depend on the
    path), and ``dissipative=`` makes ``der(x) eta_nc >= 0`` for every weight (see
    :class:`~learning.MLP`). The split is not unique (``eta_nc`` also reads ``x``); the
    paper adds ``c mean(eta_nc^2)`` to the loss, which needs each part along the
    trajectories: :meth:`~learning.Unknown.part_expressions` gives them in the model's
    variables, :meth:`~learning.Unknown.part_values` on a simulated result.

    A part's weights and raw parameters carry its name as a prefix (``c_W1_0_0``,
    ``nc_theta_b2_0``), as template 3 prefixes ``g1_``/``g2_``.
    """

    def __init__(self, **parts: Explicit) -> None:
        if not parts or not all(isinstance(p, Explicit) for p in parts.values()):
            raise OptionError(
                "Sum takes named explicit laws, e.g. ln.Sum(c=ln.MLP(inputs=('x',)), "
                f"nc=ln.MLP(inputs=('x', 'der(x)'))); got {parts!r}"
            )
        outputs = {p.output for p in parts.values()}
        if len(outputs) != 1:
            raise OptionError(f"Sum: the parts give different outputs {sorted(outputs)}")
        self.parts = dict(parts)
        inputs = dict.fromkeys(t for p in parts.values() for t in p.inputs)
        super().__init__(outputs.pop(), tuple(inputs))

    @classmethod
    def additive(
        cls,
        inputs: Sequence[str],
        hidden: int = 5,
        activation: str = "tanh",
        *,
        output: str = "f",
        seed: int = 0,
    ) -> Sum:
        """The structured (additive) network ``y = sum_i NN_i(u_i)``: one ``hidden``-unit
        network per input, each of its units seeing that input only (the hybrid servo
        study's structure), so each input's contribution is a curve of its own, read with
        ``law.predict(samples, theta, part=name)`` (e.g. friction against speed, a spring
        against deflection) and turned into a white-box law by its slopes. Parts are named
        by their input with non-identifier characters as ``_`` (``"der(x)"`` -> ``der_x``)."""
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden < 1:
            raise OptionError(
                f"Sum.additive: hidden={hidden!r} must be an integer >= 1, the units of each "
                "input's network (one layer each), e.g. hidden=5"
            )
        names = [re.sub(r"\W+", "_", t).strip("_") for t in inputs]
        if len(set(names)) != len(names) or not names:
            raise OptionError(f"Sum.additive: give distinct inputs, got {list(inputs)!r}")
        return cls(
            **{
                n: MLP((hidden,), activation, inputs=(t,), output=output, seed=seed + i)
                for i, (n, t) in enumerate(zip(names, inputs))
            }
        )

    def _setup(self) -> None:
        """Bind each part to its inputs' labels and declare its weights, prefixed."""
        column = {t: k for k, t in enumerate(self.inputs)}
        self._columns_of = {n: [column[t] for t in p.inputs] for n, p in self.parts.items()}
        self.parts = {  # a new dict: bound copies share the unbound law's attributes
            name: part.bound([self.labels[0], *(self.labels[1 + k] for k in cols)])
            for (name, part), cols in zip(self.parts.items(), self._columns_of.values())
        }
        for name, part in self.parts.items():
            for wt in part._ws:
                raw = None if wt.raw is None else f"{name}_{wt.raw}"
                self._weights.append(replace(wt, name=f"{name}_{wt.name}", raw=raw))

    def _part_outputs(self, a: list[cs.SX], w: dict[str, cs.SX]) -> dict[str, cs.SX]:
        return {
            name: part._output(
                [a[k] for k in self._columns_of[name]],
                {n: w[f"{name}_{n}"] for n in part.weight_names},
            )
            for name, part in self.parts.items()
        }

    def _output(self, a: list[cs.SX], w: dict[str, cs.SX]) -> cs.SX:
        return sum(self._part_outputs(a, w).values(), cs.SX(0))

    def _with_scaling(self, offsets: Mapping[str, float], scales: Mapping[str, float]) -> Sum:
        law = copy.copy(self)
        law.parts = {n: p._with_scaling(offsets, scales) for n, p in self.parts.items()}
        law._bind(self.labels)
        return law
