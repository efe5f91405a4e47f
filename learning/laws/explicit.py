"""Explicit laws ``output = eta(inputs; w)``: a flow (or a potential) given as a function.

An implicit law (:mod:`learning.laws.law`) is a relation ``g(u; w) = 0`` among the quantities an
:class:`~learning.Unknown` feeds it. An explicit law names its output token (default the flow
``"f"``) and its input tokens (e.g. ``("x", "der(x)")``) and is the relation
``output == eta(inputs; w)``, i.e. ``g = output - eta``. Then ``dg/d(output) = 1`` for every
weight, so with the flow as output Proposition 3.1's condition on ``dg/df`` holds without a
reparameterization: the weights are raw (``w = theta``).

As for every law, ``labels`` are the output's then the inputs' (``("f", "x", "dx")``);
``tokens`` spells them as an Unknown does, and an Unknown given no ``inputs=`` reads them.

Inputs are standardized before the law sees them, ``a_k = (u_k - offset_k) / scale_k``
(the paper's ``Sigma q`` with ``Sigma = diag(1 / std)``, optionally centred): ``offsets`` and
``scales`` are fixed data of the law, not parameters. :meth:`Explicit.standardized` returns
the law with them computed from samples of its inputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import casadi as cs
import numpy as np

from acausal.errors import OptionError

from .law import InputNameError, Law, input_label

Samples = Mapping[str, Sequence[float]] | np.ndarray


def token(text: str) -> str:
    """An input token without blanks: ``"der( x )"`` -> ``"der(x)"``."""
    if not isinstance(text, str) or not text.strip():
        raise OptionError(f"an input token must be a name such as 'x' or 'der(x)', got {text!r}")
    return text.replace(" ", "")


class Explicit(Law):
    """Base class of explicit laws ``output == eta(inputs; w)``.

    Subclasses set their options, then call ``Explicit.__init__(output, inputs)``; they
    implement ``_output(a, w)``, ``eta`` for the inputs ``a`` (as the Unknown gives them:
    each law standardizes its own) and the weight expressions ``w``, and
    ``_with_scaling``, the law with other offsets and scales.
    """

    def __init__(self, output: str, inputs: Sequence[str]) -> None:
        if isinstance(inputs, str):
            inputs = (inputs,)
        self.output, self.inputs = token(output), tuple(token(t) for t in inputs)
        what = type(self).__name__
        if not self.inputs:
            raise OptionError(f"{what}: inputs= names no input; e.g. inputs=('x', 'der(x)')")
        if len(set(self.inputs)) != len(self.inputs) or self.output in self.inputs:
            raise OptionError(
                f"{what}: output {self.output!r} and inputs {self.inputs!r} must be distinct"
            )
        super().__init__(labels=[input_label(t) for t in self.tokens])

    @property
    def tokens(self) -> tuple[str, ...]:  # type: ignore[override]
        """``(output, *inputs)``, as an :class:`~learning.Unknown` reads them."""
        return (self.output, *self.inputs)

    # -- the law ------------------------------------------------------------------------
    def _output(self, a: list[cs.SX], w: dict[str, cs.SX]) -> cs.SX:  # pragma: no cover
        raise NotImplementedError

    def _part_outputs(self, a: list[cs.SX], w: dict[str, cs.SX]) -> dict[str, cs.SX]:
        """The additive parts of ``eta`` by name; a law that is no sum is one part, ``law``."""
        return {"law": self._output(a, w)}

    def _relation(self, u: list[cs.SX], w: dict[str, cs.SX]) -> tuple[cs.SX, cs.SX]:
        return u[0], self._output(u[1:], w)

    def _check_inputs(self, u: Sequence[cs.SX | float]) -> list[cs.SX]:
        if len(u) != len(self.inputs):
            raise OptionError(
                f"{type(self).__name__} reads {', '.join(self.inputs)} but is given {len(u)} inputs"
            )
        return [cs.SX(x) for x in u]

    def value(self, u: Sequence[cs.SX | float], theta: Sequence[cs.SX]) -> cs.SX:
        """``eta(u; w(theta))`` for the inputs ``u`` (in the order of ``inputs``)."""
        return self._output(self._check_inputs(u), self.weight_exprs(theta))

    def part_values(self, u: Sequence[cs.SX | float], theta: Sequence[cs.SX]) -> dict[str, cs.SX]:
        """The additive parts of ``eta(u; w(theta))`` by name (see :class:`~learning.Sum`)."""
        return self._part_outputs(self._check_inputs(u), self.weight_exprs(theta))

    def predict(
        self,
        samples: Samples,
        theta: Sequence[float] | Mapping[str, float] | None = None,
        part: str | None = None,
    ) -> np.ndarray:
        """``eta`` (or the named ``part``) as numbers at ``samples`` of the inputs (as
        :meth:`standardized` takes them) for raw values ``theta`` (as :meth:`weights`)."""
        cols = self._columns(samples)
        a_sym = cs.SX.sym("a", len(self.inputs))
        a = cs.vertsplit(a_sym)
        numbers = [cs.SX(x) for x in self.raw_values(theta)]  # so eta is a function of a only
        if part is None:
            out = self.value(a, numbers)
        else:
            parts = self.part_values(a, numbers)
            if part not in parts:
                raise InputNameError(
                    f"{type(self).__name__}: part {part!r} is not one of {', '.join(parts)}"
                )
            out = parts[part]
        fn = cs.Function("eta", [a_sym], [out])  # called on K x N: evaluated per column
        return np.asarray(fn(np.vstack([cols[t] for t in self.inputs])), dtype=float).ravel()

    # -- standardization ------------------------------------------------------------------
    def _columns(self, samples: Samples) -> dict[str, np.ndarray]:
        """Samples of each input: a mapping by token (others ignored) or an array with one
        column per input (``N x K``; a vector when there is one input)."""
        if isinstance(samples, Mapping):
            given = {token(k): v for k, v in samples.items()}
            missing = [t for t in self.inputs if t not in given]
            if missing:
                raise InputNameError(
                    f"{type(self).__name__}: samples lack {', '.join(missing)}; "
                    f"the inputs are {', '.join(self.inputs)}"
                )
            cols = {t: np.asarray(given[t], dtype=float).ravel() for t in self.inputs}
        else:
            arr = np.asarray(samples, dtype=float)
            arr = arr[:, None] if arr.ndim == 1 and len(self.inputs) == 1 else arr
            if arr.ndim != 2 or arr.shape[1] != len(self.inputs):
                raise OptionError(
                    f"{type(self).__name__}: samples of shape {arr.shape} need one column per "
                    f"input ({', '.join(self.inputs)}), or pass a mapping by input"
                )
            cols = {t: arr[:, k] for k, t in enumerate(self.inputs)}
        if len({c.size for c in cols.values()}) != 1:
            raise OptionError(f"{type(self).__name__}: the inputs' samples differ in length")
        return cols

    def standardized(self, samples: Samples, center: bool = True) -> Explicit:
        """This law with each input ``u_k`` scaled by the standard deviation of its samples
        (``scale_k = std(u_k)``, the paper's ``Sigma = diag(1 / std)``) and, with
        ``center``, shifted by their mean (``offset_k = mean(u_k)``; ``center=False`` is the
        paper's ``Sigma q`` exactly). ``samples``: a mapping by input token (``{"x": d,
        "der(x)": v}``, other keys ignored) or an ``N x K`` array; non-finite samples are
        left out. The scales are fixed data of the returned law, not trained."""
        cols = self._columns(samples)
        mean, std = {}, {}
        for t, c in cols.items():
            c = c[np.isfinite(c)]
            std[t] = float(np.std(c)) if c.size > 1 else 0.0
            if not std[t] > 0:
                raise OptionError(
                    f"{type(self).__name__}: the samples of {t!r} have no spread "
                    f"({c.size} finite values, std {std[t]:g}); they cannot set its scale"
                )
            mean[t] = float(np.mean(c)) if center else 0.0
        return self._with_scaling(mean, std)

    def _with_scaling(
        self, offsets: Mapping[str, float], scales: Mapping[str, float]
    ) -> Explicit:  # pragma: no cover - abstract
        raise NotImplementedError
