"""Parameterized constitutive laws ``g(u; w) = 0`` for unknown components.

A law relates the inputs ``u = (u_1, ..., u_K)`` that an :class:`~learning.Unknown` feeds it
(for a Type 1 component the flow ``f = f_a`` and the potential difference ``x = x_a - x_b``,
or their time derivatives) through weights ``w``. Weights are never optimized directly: a law
declares raw parameters ``theta`` (unconstrained reals) and a map ``w = w(theta)`` whose image
satisfies the law's sufficient feasibility (and on request dissipativity) conditions, so every
point an optimizer visits is a feasible model (Matei, de Kleer, Zhenirovskyy, Feldman,
"Learning constitutive equations of physical components with predefined feasibility
conditions", Propositions 4.1-4.4). ``constraint=None`` turns the map off (``w = theta``).

Every law knows

- ``raw_names`` / ``raw_init``: its raw parameter names (``theta_...``) and start values;
- ``relation(u, theta)``: the law ``lhs == rhs`` as CasADi SX (``residual`` = lhs - rhs);
- ``weights(theta)``: the constrained weights as numbers, for tables;
- ``function(derivatives=True)``: ``g(u, theta)`` and ``dg/du`` as a CasADi function;
- ``curve(solve_for, given, theta)``: one input as a function of the others on ``g = 0``;
- ``raw_scales(theta)``: the size of a meaningful step of each raw parameter (fits scale by it).

Reparameterization: ``w = s (m + softplus(theta))`` with a sign ``s`` fixed when the law is
made and a margin ``m >= 0``. Why softplus: ``|theta|`` and ``theta**2`` reach 0 (the excluded
``w_1 = 0``) and have a kink or a vanishing gradient there; ``exp(theta)`` is positive and
scale-free, but its gradient grows exponentially, so a Gauss-Newton or Powell step overflows
or lands on a stiff model that fails to simulate. ``softplus(theta) = log(1 + e^theta)`` is
positive, has gradient ``sigmoid(theta)`` in (0, 1) (no overflow; Jacobians as well conditioned
as with raw weights for ``theta > 0``) and behaves like ``e^theta`` for ``theta < 0``, so a
coefficient the truth does not need shrinks smoothly towards 0. ``transform="exp"`` is there
for weights spanning decades. No continuous map from all of R^n reaches both signs while
avoiding 0, so the sign of each constrained vector is chosen by the user (``signs=``), not
learned.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import casadi as cs
import numpy as np
from numpy.typing import ArrayLike

from acausal.errors import ModelError, OptionError, ParameterError


def softplus(theta: cs.SX | float) -> cs.SX:
    """``log(1 + e^theta)`` without overflow: above ``theta = 30`` it continues linearly.

    (``log`` rather than ``log1p``: equal to rounding for ``theta > -36``, below which the
    weight is 0 plus its margin either way; the derivative ``e^theta / (1 + e^theta)`` stays
    exact; and the equation printer knows ``log``.)"""
    return cs.log(1 + cs.exp(cs.fmin(theta, 30.0))) + cs.fmax(theta - 30.0, 0.0)


def softplus_inv(w: float) -> float:
    """The ``theta`` with ``softplus(theta) = w > 0``: ``theta = w + log(1 - e^-w)``."""
    return float(w + np.log(-np.expm1(-w)))


def _excess(margin: float) -> float:
    """``T(theta)`` for a start value at the margin (a law's own fitted weight at its
    bound, ``init=fit.weights[...]``): below half an ulp of ``margin`` (of 1 for a zero
    margin), so ``margin + T(theta)`` rounds to the margin and the law starts where the fit
    ended. The raw parameter's gradient there is about 0, as it was at the end of that
    fit: a weight meant to move should start inside (beyond the margin)."""
    return (margin if margin > 0 else 1.0) * 2.0**-54


TRANSFORMS: dict[str, tuple[Callable, Callable]] = {
    "softplus": (softplus, softplus_inv),
    "exp": (cs.exp, lambda w: float(np.log(w))),
}


class InputNameError(ModelError):
    """An option names a weight or input the law's current inputs do not have."""


@dataclass(frozen=True)
class Weight:
    """One weight: ``kind`` ``"raw"`` (``w = theta``), ``"signed"`` (``w = sign (margin +
    T(theta))``) or ``"fixed"`` (``w = value``); ``theta0`` is the raw start value."""

    name: str
    raw: str | None
    kind: str
    sign: float = 1.0
    margin: float = 0.0
    value: float = 0.0
    theta0: float = 0.0


class Law:
    """Base class: a relation ``lhs(u; w) == rhs(u; w)`` with raw parameters ``theta``.

    Subclasses set their options, then call ``Law.__init__``, which binds default input
    labels and runs ``_setup`` (declaring weights with :meth:`_add`); ``_relation(u, w)``
    builds the equation from inputs and a mapping of weight expressions.
    """

    constraint: str | None = None
    transform: str = "softplus"
    #: the input tokens an explicit law reads itself, its output first (``("f", "x")``);
    #: None for an implicit law, which reads the tokens its Unknown is given
    tokens: tuple[str, ...] | None = None

    def __init__(
        self,
        n_inputs: int | None = None,
        labels: Sequence[str] | None = None,
        alias: Mapping[str, str] | None = None,
    ) -> None:
        if self.transform not in TRANSFORMS:
            raise OptionError(
                f"{type(self).__name__}: transform={self.transform!r} is not one of "
                f"{', '.join(map(repr, TRANSFORMS))}"
            )
        self.alias: dict[str, str] = dict(alias or {})
        self._explicit_n = n_inputs
        n = n_inputs if n_inputs is not None else (len(labels) if labels else 2)
        try:
            self._bind(tuple(labels) if labels else default_labels(n))
        except InputNameError as err:
            if labels:
                raise
            # options name inputs an Unknown will provide (e.g. "dx1"): bind there
            self._pending: ModelError | None = err

    # -- binding to the inputs an Unknown provides --------------------------------------
    def bound(self, labels: Sequence[str]) -> Law:
        """A copy of this law for the inputs named ``labels`` (e.g. ``("f", "dx")``)."""
        labels = tuple(labels)
        if self._explicit_n is not None and self._explicit_n != len(labels):
            raise OptionError(
                f"{type(self).__name__} was made for {self._explicit_n} inputs but is given "
                f"{len(labels)} ({', '.join(labels)}); drop n_inputs= or match the inputs"
            )
        law = copy.copy(self)
        law._bind(labels)
        return law

    def _with_options(self, **options: object) -> Law:
        """A copy of this law with private options replaced (``_scales=...``), its weights
        declared again for its current inputs (a law still waiting for an Unknown's
        inputs keeps waiting)."""
        law = copy.copy(self)
        vars(law).update(options)
        try:
            law._bind(self.labels)
        except InputNameError as err:
            if self._pending is None:
                raise
            law._pending = err
        return law

    def _bind(self, labels: tuple[str, ...]) -> None:
        self.labels = labels
        self._weights: list[Weight] = []
        self._pending = None
        self._setup()

    @property
    def _ws(self) -> list[Weight]:
        """The declared weights; an error if the options need inputs not yet bound."""
        if self._pending is not None:
            raise OptionError(
                f"{self._pending} (inputs {', '.join(self.labels)}); use the law in an "
                "Unknown with matching inputs=, or call law.bound(labels)"
            )
        return self._weights

    def _setup(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _relation(self, u: list[cs.SX], w: dict[str, cs.SX]) -> tuple[cs.SX, cs.SX]:
        raise NotImplementedError  # pragma: no cover - abstract

    @property
    def n_inputs(self) -> int:
        return len(self.labels)

    def _resolve(
        self, given: Mapping[str, float] | None, canonical: Sequence[str], what: str
    ) -> dict[str, float]:
        """Values the user keyed by any name of a weight (``x5``, ``w_x5`` or its alias),
        keyed by the weight's display name; a name that is no weight is an error."""
        lookup: dict[str, str] = {}
        for c in canonical:
            shown = self.alias.get(c, c)
            lookup[c] = lookup[shown] = shown
            if c.startswith("w_"):
                lookup[c[2:]] = shown
        out = {}
        for key, value in (given or {}).items():
            if key not in lookup:
                names = ", ".join(self.alias.get(c, c) for c in canonical)
                raise InputNameError(
                    f"{type(self).__name__}: {what} names {key!r}, which is not a weight; "
                    f"the weights are {names}"
                )
            out[lookup[key]] = float(value)
        return out

    def _add(
        self, name: str, kind: str, sign: float, init: float, margin: float = 0.0, raw: str = ""
    ) -> None:
        """Declare weight ``name`` of ``kind`` with start value ``init`` (a weight value)."""
        shown = self.alias.get(name, name)
        if kind == "fixed":
            self._weights.append(Weight(shown, None, kind, sign, margin, float(init)))
            return
        if kind == "signed":
            if not np.isfinite(init) or init * sign < margin:
                side = "positive" if sign > 0 else "negative"
                raise ParameterError(
                    f"{type(self).__name__}: start value {shown} = {init!r} must be {side} "
                    f"(at least the margin {margin:g}) under constraint={self.constraint!r}"
                )
            theta0 = TRANSFORMS[self.transform][1](max(abs(init) - margin, _excess(margin)))
        else:
            theta0 = float(init)
        raw = raw or "theta_" + (shown[2:] if shown.startswith("w_") else shown)
        self._weights.append(Weight(shown, raw, kind, sign, margin, 0.0, theta0))

    @property
    def raw_names(self) -> list[str]:
        """Local names of the raw parameters ``theta`` (component parameters of an Unknown)."""
        return [w.raw for w in self._ws if w.raw is not None]

    @property
    def raw_init(self) -> np.ndarray:
        """Start values of the raw parameters, in the order of :attr:`raw_names`."""
        return np.array([w.theta0 for w in self._ws if w.raw is not None], dtype=float)

    @property
    def weight_names(self) -> list[str]:
        """Names of all weights, fixed ones included, as :meth:`weights` reports them."""
        return [w.name for w in self._ws]

    def weight_exprs(self, theta: Sequence[cs.SX]) -> dict[str, cs.SX]:
        """Weights as expressions of the raw parameters: ``w = theta`` (raw),
        ``w = s (m + T(theta))`` (signed) or a constant (fixed)."""
        theta = list(theta)
        if len(theta) != len(self.raw_names):
            raise OptionError(
                f"{type(self).__name__} takes {len(self.raw_names)} raw parameters "
                f"({', '.join(self.raw_names)}), got {len(theta)}"
            )
        it = iter(theta)
        T = TRANSFORMS[self.transform][0]
        out: dict[str, cs.SX] = {}
        for w in self._ws:
            if w.kind == "fixed":
                out[w.name] = cs.SX(w.value)
            elif w.kind == "raw":
                out[w.name] = cs.SX(next(it))
            else:
                out[w.name] = w.sign * (w.margin + T(next(it)))
        return out

    def weights(self, theta: Sequence[float] | Mapping[str, float] | None = None) -> dict:
        """The weights as numbers for raw values ``theta``: a sequence in the order of
        :attr:`raw_names` or a mapping by raw name; default the start values."""
        th = cs.SX.sym("theta", len(self.raw_names))
        w = self.weight_exprs([th[k] for k in range(th.numel())])
        fn = cs.Function("w", [th], [cs.vertcat(*w.values())])
        values = np.asarray(fn(self.raw_values(theta)), dtype=float).ravel()
        return dict(zip(w, values.tolist()))

    def raw_scales(self, theta: Sequence[float] | Mapping[str, float] | None = None) -> np.ndarray:
        """The size of a meaningful change of each raw parameter at ``theta`` (as
        :meth:`weights` takes it), for an optimizer's scaling: ``max(|theta|, 1)`` for a
        raw weight (``w = theta``); for a sign-constrained one ``w = s (m + T(theta))`` a
        change that alters ``T`` by a factor ``e``: 1 where ``T`` is exponential (``exp``;
        softplus below ``theta = 1``), ``theta`` where softplus is linear (``T ~ theta``).
        So a weight at its margin (``theta`` of -50, say) is not given steps of 50."""
        sizes = []
        for w, th in zip([w for w in self._ws if w.raw is not None], self.raw_values(theta)):
            if w.kind == "raw":
                sizes.append(max(abs(th), 1.0))
            else:
                sizes.append(1.0 if self.transform == "exp" else max(th, 1.0))
        return np.array(sizes)

    def raw_values(self, theta: Sequence[float] | Mapping[str, float] | None = None) -> np.ndarray:
        """Raw values as an array in the order of :attr:`raw_names`, from a sequence in that
        order or a mapping by raw name; default the start values."""
        if theta is None:
            return self.raw_init
        if isinstance(theta, Mapping):
            return np.array([float(theta[n]) for n in self.raw_names])
        vals = np.asarray(theta, dtype=float).ravel()
        if vals.size != len(self.raw_names):
            raise OptionError(
                f"{type(self).__name__} takes {len(self.raw_names)} raw parameters, "
                f"got {vals.size} values"
            )
        return vals

    # -- the relation -------------------------------------------------------------------
    def relation(self, u: Sequence[cs.SX], theta: Sequence[cs.SX]) -> tuple[cs.SX, cs.SX]:
        """``(lhs, rhs)`` of the law ``lhs == rhs`` for inputs ``u`` and raw parameters."""
        u = [cs.SX(x) for x in u]
        if len(u) != self.n_inputs:
            raise OptionError(
                f"{type(self).__name__} has inputs {', '.join(self.labels)} but is given {len(u)}"
            )
        return self._relation(u, self.weight_exprs(theta))

    def residual(self, u: Sequence[cs.SX], theta: Sequence[cs.SX]) -> cs.SX:
        """``g(u; w(theta)) = lhs - rhs``."""
        lhs, rhs = self.relation(u, theta)
        return lhs - rhs

    def function(self, derivatives: bool = False) -> cs.Function:
        """``g(u, theta)`` as a CasADi function (``u``: the K inputs, ``theta``: the raw
        parameters); with ``derivatives`` a second output ``dg_du`` (1 x K), the partial
        derivatives Proposition 3.1 requires to be nonzero."""
        u = cs.SX.sym("u", self.n_inputs)
        th = cs.SX.sym("theta", len(self.raw_names))
        g = self.residual([u[k] for k in range(u.numel())], [th[k] for k in range(th.numel())])
        outs = [g, cs.jacobian(g, u)] if derivatives else [g]
        return cs.Function("g", [u, th], outs, ["u", "theta"], ["g", "dg_du"][: len(outs)])

    def curve(
        self,
        solve_for: str,
        given: Mapping[str, ArrayLike],
        theta: Sequence[float] | Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """The law as a curve: the values of input ``solve_for`` with ``g(u; w(theta)) = 0``
        when the other inputs take the values ``given`` (by label or token, e.g.
        ``law.curve("x", {"f": currents})`` for a resistor's voltage; arrays broadcast
        together, a scalar holds an input fixed); ``theta`` as for :meth:`weights`.

        Each point is solved by Newton's method on ``g`` in ``solve_for``, safeguarded by a
        bracket (all points at once): from 0 the interval ``[-b, b]`` is doubled from
        ``b = 1`` until ``g`` changes sign, then a Newton step that leaves the bracket is
        replaced by bisection, until the step is below 1e-14 of the value. A feasible law
        (``dg/du`` never 0, so ``g`` strictly monotone in each input) has exactly one
        root, which this finds; a point with no sign change within ``|u| < 2^200`` is
        ``nan``; an unconstrained law may have several roots, of which one is returned.
        For an explicit law ``output == eta(inputs)`` solved for its output the first
        Newton step is exact (``dg/d output = 1``): the curve is ``eta`` evaluated."""
        target = self._label(solve_for)
        values = {self._label(k): np.asarray(v, dtype=float) for k, v in given.items()}
        missing = [lb for lb in self.labels if lb != target and lb not in values]
        if target in values or missing:
            raise OptionError(
                f"{type(self).__name__}.curve: give every input but {target!r} "
                f"(missing: {', '.join(missing) or 'none'}; inputs {', '.join(self.labels)})"
            )
        shape = np.broadcast_shapes(*(v.shape for v in values.values()))
        flat = {lb: np.broadcast_to(v, shape).ravel() for lb, v in values.items()}
        u = cs.SX.sym("u", self.n_inputs)
        g = self.residual(cs.vertsplit(u), [cs.SX(x) for x in self.raw_values(theta)])
        fn = cs.Function("g", [u], [g, cs.jacobian(g, u[self.labels.index(target)])])

        def at(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """``g`` and ``dg/du_target`` at every point (``fn`` maps over columns)."""
            g, d = fn(np.vstack([x if lb == target else flat[lb] for lb in self.labels]))
            return np.asarray(g, dtype=float).ravel(), np.asarray(d, dtype=float).ravel()

        return _solve(at, np.zeros(int(np.prod(shape)))).reshape(shape)

    def _label(self, key: str) -> str:
        """The input label of ``key`` (a label, or a token such as ``"der(x)"``)."""
        label = input_label(str(key).replace(" ", ""))
        if label not in self.labels:
            raise InputNameError(
                f"{type(self).__name__}: {key!r} is not one of its inputs "
                f"({', '.join(self.labels)})"
            )
        return label

    def __repr__(self) -> str:
        n = "unbound" if self._pending else f"{len(self.raw_names)} raw parameters"
        return (
            f"<{type(self).__name__} inputs ({', '.join(self.labels)}), "
            f"constraint={self.constraint!r}, {n}>"
        )


def _solve(at: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """Roots of ``g`` from ``x`` (see :meth:`Law.curve`); ``at(x) -> (g, dg/dx)``,
    elementwise."""
    g, d = at(x)
    width = np.ones_like(x)
    lo, hi = x - width, x + width
    g_lo, g_hi = at(lo)[0], at(hi)[0]

    def unbracketed() -> np.ndarray:
        return (np.sign(g_lo) == np.sign(g_hi)) & (g != 0)

    for _ in range(200):  # widen until g changes sign (or is 0) on [lo, hi]
        widen = unbracketed()
        if not widen.any():
            break
        width[widen] *= 2
        lo[widen], hi[widen] = x[widen] - width[widen], x[widen] + width[widen]
        g_lo[widen], g_hi[widen] = at(lo)[0][widen], at(hi)[0][widen]
    no_root = unbracketed()
    for _ in range(200):
        left = np.sign(g) == np.sign(g_lo)  # the root is right of x
        lo, g_lo = np.where(left, x, lo), np.where(left, g, g_lo)
        hi = np.where(left, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(g == 0, x, x - g / d)
        inside = (step >= lo) & (step <= hi) & np.isfinite(step)
        new = np.where(inside, step, 0.5 * (lo + hi))
        done = np.abs(new - x) <= 1e-14 * np.maximum(np.abs(new), np.finfo(float).tiny)
        x = new
        if done.all():
            break
        g, d = at(x)
    return np.where(no_root, np.nan, x)


def default_labels(n: int) -> tuple[str, ...]:
    """``f, x`` then ``u2, u3, ...``: the inputs of a law used on its own."""
    return ("f", "x", *(f"u{k}" for k in range(2, n)))[:n]


def input_label(token: str) -> str:
    """A label safe in parameter names for an input token: ``der(x)`` -> ``dx``."""
    return "d" * token.count("der(") + re.sub(r"[^A-Za-z0-9]", "", token.replace("der(", ""))


def input_samples(law: Law, samples: Mapping[str, Sequence[float]] | np.ndarray) -> dict:
    """Samples of each of ``law``'s inputs by label: from a mapping by label or token
    (other keys ignored) or an ``N x K`` array in input order (a vector for one input)."""
    if isinstance(samples, Mapping):
        given = {input_label(str(k).replace(" ", "")): v for k, v in samples.items()}
        missing = [lb for lb in law.labels if lb not in given]
        if missing:
            raise InputNameError(
                f"{type(law).__name__}: samples lack {', '.join(missing)}; "
                f"the inputs are {', '.join(law.labels)}"
            )
        return {lb: np.asarray(given[lb], dtype=float).ravel() for lb in law.labels}
    arr = np.asarray(samples, dtype=float)
    arr = arr[:, None] if arr.ndim == 1 and law.n_inputs == 1 else arr
    if arr.ndim != 2 or arr.shape[1] != law.n_inputs:
        raise OptionError(
            f"{type(law).__name__}: samples of shape {arr.shape} need one column per input "
            f"({', '.join(law.labels)}), or pass a mapping by input"
        )
    return {lb: arr[:, k] for k, lb in enumerate(law.labels)}


def _check_option(law: str, option: str, value: object, allowed: tuple) -> None:
    if value not in allowed:
        raise OptionError(
            f"{law}: {option}={value!r} is not one of {', '.join(map(repr, allowed))}"
        )


def _per_input(law: Law, what: str, value: object, default: object) -> list:
    """A per-input option given as a sequence or as a mapping by input label."""
    if value is None:
        return [default] * law.n_inputs
    if isinstance(value, Mapping):
        bad = set(value) - set(law.labels)
        if bad:
            raise InputNameError(
                f"{type(law).__name__}: {what} names inputs {sorted(bad)}; "
                f"the inputs are {', '.join(law.labels)}"
            )
        return [value.get(label, default) for label in law.labels]
    value = list(value)  # type: ignore[call-overload]
    if len(value) != law.n_inputs:
        raise OptionError(
            f"{type(law).__name__}: {what} has {len(value)} entries for "
            f"{law.n_inputs} inputs ({', '.join(law.labels)})"
        )
    return value
