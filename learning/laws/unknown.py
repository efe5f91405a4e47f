"""Unknown two-connector components: a template of conservation equations plus learnable laws.

The paper's three templates for a component with connectors ``a`` and ``b`` (flows ``f_a``,
``f_b`` positive into the component, potentials ``x_a``, ``x_b``):

- Type 1, no flow lost (resistors, springs, dampers): ``f_a + f_b = 0`` and
  ``g(f, x) = 0`` with ``f = f_a``, ``x = x_a - x_b``;
- Type 2, potential unchanged, flow lost (brakes, shunts): ``x_a = x_b`` and
  ``g(f, x) = 0`` with ``f = f_a + f_b``, ``x = x_a``;
- Type 3, separate relations (transformers, gears): ``G1(f_a, f_b) = 0``, ``G2(x_a, x_b) = 0``.

A law may read time derivatives of these quantities (components with memory), named as
input tokens: ``inputs=("f", "der(x)")`` makes a Type 1 law a damper
``g(f_a, d(x_a - x_b)/dt) = 0`` on an ``ac.Flange`` or a capacitor on an ``ac.Pin``.
An explicit law (:mod:`learning.laws.explicit`) names its own tokens, output first:
``ln.MLP(inputs=("x", "der(x)"))`` is the relation ``f == NN(x, der(x))``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np
from numpy.typing import ArrayLike

import acausal as ac
from acausal.errors import OptionError

from .explicit import Explicit
from .law import Law, input_label

if TYPE_CHECKING:
    from solvers import Result

_TOKEN = re.compile(r"((?:der\()*)([A-Za-z_][A-Za-z0-9_]*)(\)*)")

DEFAULT_INPUTS = {1: ("f", "x"), 2: ("f", "x"), 3: (("f_a", "f_b"), ("x_a", "x_b"))}


def connector_names(ctype: ac.ConnectorType) -> tuple[str, str]:
    """Modelica's names: ``p``/``n`` for pins, ``flange_a``/``flange_b`` for 1-D mechanics,
    ``port_a``/``port_b`` otherwise."""
    if ctype is ac.Pin:
        return "p", "n"
    if ctype in (ac.Flange, ac.RotFlange):
        return "flange_a", "flange_b"
    return "port_a", "port_b"


class Unknown(ac.Component):
    """A two-connector component of ``connector_type`` whose constitutive law is learned.

    ``law`` is a :class:`~learning.laws.law.Law` (templates 1, 2) or a pair ``(G1, G2)``
    (template 3); ``inputs`` the tokens each law reads (default ``("f", "x")``, for
    template 3 ``(("f_a", "f_b"), ("x_a", "x_b"))``), where ``der(...)`` takes time
    derivatives and the domain's names are accepted too (``"i"``, ``"der(v)"`` on a pin);
    an explicit law (``ln.MLP``, ``ln.Sum``) brings its own tokens, output first, and then
    takes no ``inputs``.

    Templates 1 and 2 declare the variables named after the connector's flow and potential
    (``i``, ``v`` on a pin; ``f``, ``s`` on a flange), equal to the law's ``f`` and ``x``;
    ``f0``/``x0`` fix their initial values (parameters ``i0``/``v0``, ...), needed when a law
    makes them states. Both are in the connector type's units (``V``, ``A`` on a pin; its
    connectors' variables have them by their type), so ``f0="2 mA"`` works as for any
    parameter. Each law's raw parameters ``theta`` are parameters of this component
    (``"Rx.theta_x1"``; template 3 prefixes ``g1_``/``g2_``), so ``simulate(params=...)``
    changes them without recompiling and ``sensitivities=`` differentiates with respect to
    them. :meth:`weights` reports the constrained weights; ``power`` is the expression
    ``f_a x_a + f_b x_b`` and ``law_inputs`` the expressions each law reads;
    :meth:`part_expressions` and :meth:`part_values` give an explicit law's additive parts,
    :meth:`curve` a learned law as a curve.
    """

    def __init__(
        self,
        name: str,
        connector_type: ac.ConnectorType,
        law: Law | Sequence[Law],
        template: int = 1,
        *,
        inputs: Sequence[str] | Sequence[Sequence[str]] | None = None,
        f0: float | str | None = None,
        x0: float | str | None = None,
    ) -> None:
        super().__init__(name)
        if not isinstance(connector_type, ac.ConnectorType) or len(connector_type.flows) != 1:
            raise OptionError(
                f"Unknown {name}: connector_type {connector_type!r} must be a connector type "
                "with one potential and one flow (ac.Pin, ac.Flange, ac.RotFlange, ac.HeatPort)"
            )
        if template not in (1, 2, 3):
            raise OptionError(f"Unknown {name}: template={template!r} must be 1, 2 or 3")
        self.template = template
        flow, pot = connector_type.flows[0], connector_type.potentials[0]
        na, nb = connector_names(connector_type)
        a = self.connector(na, connector_type)
        b = self.connector(nb, connector_type)
        object.__setattr__(self, na, a)
        object.__setattr__(self, nb, b)
        self.ports = (a, b)
        fa, fb = getattr(a, flow), getattr(b, flow)
        xa, xb = getattr(a, pot), getattr(b, pot)

        laws = self._laws(law)
        tokens = self._tokens(inputs, laws)
        bases, canon = self._template_quantities(connector_type, f0, x0)
        self.laws: list[Law] = []
        self.inputs: list[tuple[str, ...]] = []
        self.law_inputs: list[list[cs.SX]] = []
        self._spellings: list[dict[str, str]] = []  # per law: every name of an input -> label
        self.theta: dict[str, cs.SX] = {}
        self.prefixes = ("g1_", "g2_") if template == 3 else ("",)
        for k, (lw, toks) in enumerate(zip(laws, tokens)):
            self._place(lw, toks, self.prefixes[k], bases, canon)
        self.law = self.laws[0]
        self.power = fa * xa + fb * xb  # f_a x_a + f_b x_b, as an expression

    def _template_quantities(
        self, connector_type: ac.ConnectorType, f0: float | str | None, x0: float | str | None
    ) -> tuple[dict[str, cs.SX], dict[str, str]]:
        """The template's quantities a law may read, by every name (``bases``), and each
        domain name's canonical one (``canon``: ``"i"`` -> ``"f"`` on a pin). Templates 1
        and 2 declare the law's ``f`` and ``x`` (in the port's units, with their start
        values ``f0``, ``x0``) and the equations tying them to the connectors; template 3
        reads the connector variables themselves."""
        flow, pot = connector_type.flows[0], connector_type.potentials[0]
        a, b = self.ports
        fa, fb = getattr(a, flow), getattr(b, flow)
        xa, xb = getattr(a, pot), getattr(b, pot)
        if self.template == 3:
            if f0 is not None or x0 is not None:
                raise OptionError(f"Unknown {self.name}: f0/x0 apply to templates 1 and 2 only")
            bases = {"f_a": fa, "f_b": fb, "x_a": xa, "x_b": xb}
            bases |= {f"{flow}_a": fa, f"{flow}_b": fb, f"{pot}_a": xa, f"{pot}_b": xb}
            canon = {f"{flow}_a": "f_a", f"{flow}_b": "f_b", f"{pot}_a": "x_a", f"{pot}_b": "x_b"}
            return bases, canon
        # the law's f and x in the port's units (f0 = "2 mA" converts as any value)
        fu, xu = (connector_type.units.get(v, "") for v in (flow, pot))
        f0, x0 = self.initial(f"{flow}0", f0, fu), self.initial(f"{pot}0", x0, xu)
        f = self.variable(flow, start=f0, fixed=f0 is not None, unit=fu)
        x = self.variable(pot, start=x0, fixed=x0 is not None, unit=xu)
        setattr(self, flow, f)
        setattr(self, pot, x)
        if self.template == 1:
            self.equations(fa + fb == 0, f == fa, x == xa - xb)
        else:
            self.equations(xa == xb, f == fa + fb, x == xa)
        return {"f": f, "x": x, flow: f, pot: x}, {flow: "f", pot: "x"}

    def _place(
        self,
        law: Law,
        tokens: Sequence[str],
        prefix: str,
        bases: Mapping[str, cs.SX],
        canon: Mapping[str, str],
    ) -> None:
        """Bind ``law`` to the quantities ``tokens`` name: its raw parameters (named with
        ``prefix``) and its relation ``lhs == rhs`` join the component."""
        domain = {c: d for d, c in canon.items()}  # "f" -> "i" on a pin
        exprs, labels, spellings = [], [], {}
        for tok in tokens:
            expr, canonical = self._input(tok, bases, canon)
            exprs.append(expr)
            labels.append(input_label(canonical))
            m = _TOKEN.fullmatch(canonical)
            in_domain = m.group(1) + domain.get(m.group(2), m.group(2)) + m.group(3)
            for name in (tok.replace(" ", ""), canonical, in_domain, labels[-1]):
                spellings[name] = labels[-1]
        bound = law.bound(labels)
        theta = []
        for raw, value in zip(bound.raw_names, bound.raw_init):
            sym = self.parameter(prefix + raw, float(value))
            self.theta[prefix + raw] = sym
            theta.append(sym)
        lhs, rhs = bound.relation(exprs, theta)
        self.equations(lhs == rhs)
        self.laws.append(bound)
        self._spellings.append(spellings)
        self.inputs.append(tuple(tokens))
        self.law_inputs.append(exprs)

    # -- construction helpers -----------------------------------------------------------
    def _laws(self, law: Law | Sequence[Law]) -> list[Law]:
        laws = [law] if isinstance(law, Law) else list(law) if isinstance(law, Sequence) else []
        want = 2 if self.template == 3 else 1
        if len(laws) != want or not all(isinstance(lw, Law) for lw in laws):
            what = "a pair of laws (G1 for flows, G2 for potentials)" if want == 2 else "one law"
            raise OptionError(
                f"Unknown {self.full_name}: template {self.template} takes {what}, "
                f"e.g. ln.Polynomial(...); got {law!r}"
            )
        return laws

    def _tokens(self, inputs: object, laws: list[Law]) -> list[tuple[str, ...]]:
        """Each law's tokens: ``inputs``, else the law's own (explicit laws), else the
        template's default."""
        n_laws = len(laws)
        defaults = list(DEFAULT_INPUTS[3]) if n_laws == 2 else [DEFAULT_INPUTS[self.template]]
        if inputs is None:
            return [lw.tokens or d for lw, d in zip(laws, defaults)]
        groups = list(inputs) if n_laws == 2 else [inputs]  # type: ignore[call-overload]
        if len(groups) != n_laws or any(
            isinstance(g, str) or not all(isinstance(t, str) for t in g) for g in groups
        ):
            shape = "two tuples of tokens" if n_laws == 2 else "a tuple of tokens"
            raise OptionError(
                f"Unknown {self.full_name}: inputs={inputs!r} must be {shape}, "
                f"e.g. {DEFAULT_INPUTS[self.template]!r}"
            )
        for lw, g in zip(laws, groups):
            if lw.tokens is not None and tuple(t.replace(" ", "") for t in g) != lw.tokens:
                raise OptionError(
                    f"Unknown {self.full_name}: {type(lw).__name__} reads {lw.tokens!r} "
                    f"(output first) but inputs={inputs!r}; drop inputs= (an explicit law "
                    "names its own output and inputs)"
                )
        return [tuple(g) for g in groups]

    def _input(
        self, token: str, bases: Mapping[str, cs.SX], canon: Mapping[str, str]
    ) -> tuple[cs.SX, str]:
        """The expression of an input token and its canonical spelling (``der(x)``)."""
        m = _TOKEN.fullmatch(token.replace(" ", ""))
        if m is None or len(m.group(1)) // 4 != len(m.group(3)) or m.group(2) not in bases:
            raise OptionError(
                f"Unknown {self.full_name}: input {token!r} is not one of "
                f"{', '.join(sorted(bases))}, optionally inside der(...)"
            )
        order = len(m.group(3))
        expr = bases[m.group(2)]
        for _ in range(order):
            expr = ac.der(expr)
        base = canon.get(m.group(2), m.group(2))
        return expr, "der(" * order + base + ")" * order

    # -- explicit laws: their parts along trajectories -----------------------------------
    def part_expressions(self, model: ac.Model | None = None) -> dict[str, cs.SX]:
        """The additive parts of each explicit law's output (a :class:`~learning.Sum`'s by
        name, another explicit law's as ``"law"``; template 3 prefixes ``g1_``/``g2_``) as
        expressions of this component's variables and raw parameters, or with ``model``
        (compiled from a system holding this component) of the model's states, algebraic
        unknowns, parameters and time (``model.dae.x``, ``model.dae.z``, ``model.p``,
        ``model.t``), e.g. for a penalty ``c mean(eta_nc^2)`` along trajectories."""
        out: dict[str, cs.SX] = {}
        for lw, prefix, exprs in zip(self.laws, self.prefixes, self.law_inputs):
            if not isinstance(lw, Explicit):
                raise OptionError(
                    f"Unknown {self.full_name}: its {type(lw).__name__} law is implicit "
                    "(g(...) = 0) and has no output expression; parts belong to explicit "
                    "laws (ln.MLP, ln.Sum)"
                )
            theta = [self.theta[prefix + raw] for raw in lw.raw_names]
            parts = lw.part_values(exprs[1:], theta)
            out |= {prefix + name: expr for name, expr in parts.items()}
        return out if model is None else dict(zip(out, in_model(list(out.values()), model)))

    def part_values(self, result: Result) -> dict[str, np.ndarray]:
        """The parts of :meth:`part_expressions` as numbers along a simulated ``result``."""
        exprs = self.part_expressions()
        syms = cs.symvar(cs.vertcat(*exprs.values()))
        fn = cs.Function("parts", syms, [cs.vertcat(*exprs.values())])
        rows = [result[result.model.symbol_name(s)][None, :] for s in syms]
        return dict(zip(exprs, np.asarray(fn(*rows), dtype=float)))  # one column per time

    # -- parameters and weights ---------------------------------------------------------
    def parameter_names(self) -> list[str]:
        """Full names of the raw parameters of all laws (``["Rx.theta_x1", ...]``)."""
        return [f"{self.full_name}.{raw}" for raw in self.theta]

    def initial_params(self) -> dict[str, float]:
        """The raw parameters' declared values by full name."""
        return {f"{self.full_name}.{raw}": float(self._quantities[raw].value) for raw in self.theta}

    def _raw(self, params: Mapping[str, float] | None, k: int) -> list[float]:
        """Law ``k``'s raw values from ``params`` (by full or local name; others at their
        declared values)."""
        values = self.initial_params()
        for key, val in (params or {}).items():
            full = key if key.startswith(self.full_name + ".") else f"{self.full_name}.{key}"
            if full in values:
                values[full] = float(val)
        prefix = f"{self.full_name}.{self.prefixes[k]}"
        return [values[prefix + raw] for raw in self.laws[k].raw_names]

    def weights(self, params: Mapping[str, float] | None = None) -> dict[str, float]:
        """Constrained weights of the laws for raw values ``params`` (by full or local
        name; others at their declared values), e.g. ``Rx.weights(fit.params)``. Template 3
        prefixes the weights of ``G1``/``G2`` with ``g1_``/``g2_``."""
        out: dict[str, float] = {}
        for k, (lw, prefix) in enumerate(zip(self.laws, self.prefixes)):
            out |= {prefix + name: v for name, v in lw.weights(self._raw(params, k)).items()}
        return out

    def raw_scales(self, params: Mapping[str, float] | None = None) -> dict[str, float]:
        """:meth:`learning.laws.law.Law.raw_scales` of every law at raw values ``params`` (as
        :meth:`weights`), by full parameter name."""
        out: dict[str, float] = {}
        for k, (lw, prefix) in enumerate(zip(self.laws, self.prefixes)):
            sizes = lw.raw_scales(self._raw(params, k))
            out |= {f"{self.full_name}.{prefix}{r}": float(v) for r, v in zip(lw.raw_names, sizes)}
        return out

    def curve(
        self,
        solve_for: str,
        given: Mapping[str, ArrayLike],
        params: Mapping[str, float] | None = None,
    ) -> np.ndarray:
        """The learned law as a curve (:meth:`learning.laws.law.Law.curve`) at raw values
        ``params`` (as :meth:`weights`, e.g. ``fit.params``): the values of input
        ``solve_for`` that satisfy it when the other inputs of the same law take the values
        ``given``. Inputs by any of their names: the law's labels (``"f"``, ``"dx"``), the
        tokens as given to ``inputs=``, or the domain's (``"v"``, ``"der(v)"`` on a pin),
        e.g. ``Rx.curve("v", {"i": currents}, fit.params)``; template 3 picks the law
        (``G1`` or ``G2``) that reads them."""
        keys = [str(k).replace(" ", "") for k in (solve_for, *given)]
        for k, spell in enumerate(self._spellings):
            if all(key in spell for key in keys):
                named = {spell[key]: v for key, v in zip(keys[1:], given.values())}
                return self.laws[k].curve(spell[keys[0]], named, self._raw(params, k))
        reads = "; ".join(", ".join(dict.fromkeys(s.values())) for s in self._spellings)
        raise OptionError(
            f"Unknown {self.full_name}: curve({solve_for!r}, {sorted(given)!r}) names inputs "
            f"that are not all read by one of its laws (they read: {reads})"
        )


def in_model(exprs: list[cs.SX], model: ac.Model) -> list[cs.SX]:
    """Expressions of a component's symbols as expressions of ``model``'s states, algebraic
    unknowns, parameters and time: each variable or derivative is replaced, by its dotted
    name, with the model's output expression for it; parameters by the model's symbols."""
    syms = cs.symvar(cs.vertcat(*exprs))
    subs = []
    for sym in syms:
        name = model.symbol_name(sym)
        parameter = name in model.defaults
        subs.append(
            model.parameter_symbol(name) if parameter else model.outputs[model.check_name(name)]
        )
    return cs.substitute(exprs, syms, subs)


def unknowns(systems: Sequence[ac.System]) -> list[Unknown]:
    """Every :class:`~learning.Unknown` in ``systems`` (nested ones included), one per name."""
    seen: dict[str, Unknown] = {}
    for s in systems:
        for c in s.all_components():
            if isinstance(c, Unknown):
                seen.setdefault(c.full_name, c)
    return list(seen.values())
