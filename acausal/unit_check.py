"""``check_units``: whether each component's equations agree with its declared units.

Every equation is walked as its CasADi expression graph, bottom up, giving each node a
unit, or *no unit* when it cannot be known:

* a symbol has its quantity's declared unit (none when undeclared), ``der(x)`` has
  ``unit(x)/s`` (``/s^k`` for the k-th derivative), ``time`` has ``s``;
* a numeric constant has no unit (``2 * time`` may be an angle: ``cos(2 * time)`` is not
  flagged; that is how Modelica treats literals), and neither has anything multiplied by
  a node without unit (CasADi writes ``2*x`` and ``x + x`` as one node, taken as the
  product);
* ``a + b``, ``a - b``, ``lhs == rhs``, comparisons, ``fmin``/``fmax``, ``atan2`` and
  the two branches of ``if_else`` need equal dimensions when both are known, and take the
  known one's unit (a constant adopts the other side's: ``v - 1``);
* ``a * b`` and ``a / b`` multiply and divide units, ``a^k`` with a constant ``k`` takes
  the k-th power, ``sqrt`` the half power;
* ``exp``, ``log``, ``sin``, ``cos``, ``tanh``, ... need a dimensionless argument (radians
  are dimensionless, as in pint and SI) and give ``1`` (``asin``, ``acos``, ``atan``,
  ``atan2`` give ``rad``), but of an argument without unit they give none (a learned law's
  weight ``log(1 + exp(theta))`` carries whatever unit its term needs); ``sign`` gives
  ``1`` (none of an argument without unit), ``abs`` keeps the unit;
* a comparison's (or ``and``/``or``/``not``'s) 0 or 1 is a number like a constant, of no
  unit: ``(w > 0) - (w < 0)`` times a friction table's constant ``1.0`` N*m, which CasADi
  folds away, is not flagged;
* discrete modes are declared dimensionless (``1``): a mode multiplying a term keeps the
  term's unit, a mode added to a voltage is flagged.

A conflict is a :class:`UnitFinding` (component, equation, its text, what the node does
and the two units), and the node then has no unit, so one mistake is reported once.
Start values must be in their variable's unit, event updates in their target's, an
``outer`` parameter in its ``inner``'s, and the connectors of one connection set agree
(they do when their connector type declares the units).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

import casadi as cs

from .component import Component
from .errors import OptionError
from .printing import _FUNCTIONS, infix
from .symbols import Quantity, split_derivative
from .system import System
from .units import parse_unit, registry, unit_text

if TYPE_CHECKING:
    import pint

#: a node's unit: a pint unit, or None when it cannot be known
Unit = Union["pint.Unit", None]

_SAME = {  # operands of equal dimension, the result in their unit: op -> what it does
    cs.OP_ADD: "adds {a} to {b}",
    cs.OP_SUB: "subtracts {b} from {a}",
    cs.OP_FMIN: "takes min of {a} and {b}",
    cs.OP_FMAX: "takes max of {a} and {b}",
    cs.OP_HYPOT: "takes hypot of {a} and {b}",
    cs.OP_FMOD: "takes fmod of {a} and {b}",
}
_COMPARE = {cs.OP_LT, cs.OP_LE, cs.OP_EQ, cs.OP_NE}  # equal dimensions, a 0/1 number
_LOGIC = {cs.OP_AND, cs.OP_OR, cs.OP_NOT}  # a 0/1 number, operands not compared
_KEEP = {cs.OP_NEG, cs.OP_FABS, cs.OP_FLOOR, cs.OP_CEIL, cs.OP_COPYSIGN}
_ANGLE = {cs.OP_ASIN, cs.OP_ACOS, cs.OP_ATAN}  # dimensionless argument, result rad
_DIMENSIONLESS = {  # dimensionless argument, result 1
    cs.OP_EXP,
    cs.OP_LOG,
    cs.OP_SIN,
    cs.OP_COS,
    cs.OP_TAN,
    cs.OP_SINH,
    cs.OP_COSH,
    cs.OP_TANH,
    cs.OP_ASINH,
    cs.OP_ACOSH,
    cs.OP_ATANH,
    cs.OP_ERF,
    cs.OP_ERFINV,
    cs.OP_EXPM1,
    cs.OP_LOG1P,
}
_NAMES = {**_FUNCTIONS, cs.OP_ASINH: "asinh", cs.OP_ACOSH: "acosh", cs.OP_ATANH: "atanh"}
_NAMES |= {cs.OP_ERF: "erf", cs.OP_ERFINV: "erfinv"}
_SHOWN = 80  # characters of a sub-expression shown in a finding


@dataclass(frozen=True)
class UnitFinding:
    """Units that do not agree: in component ``component``'s ``where`` (``"equation #3"``,
    ``"start of v"``, ``"event"``, ``"connection"``, ``"outer g"``) whose text is ``text``,
    the node ``expression`` ``problem`` (``"adds V to A"``); ``units`` are the two units."""

    component: str
    where: str
    text: str
    problem: str
    units: tuple[str, str]
    expression: str = ""

    def __str__(self) -> str:
        inner = "" if self.expression in ("", self.text) else f" (in '{self.expression}')"
        return f"{self.component} {self.where} '{self.text}': {self.problem}{inner}"


@dataclass(frozen=True)
class UnitReport:
    """What :func:`check_units` found: ``findings`` (empty when consistent), how many
    ``components`` and ``equations`` it checked, and the quantities declared without a
    unit (``undeclared``, dotted names: their units are not checked)."""

    name: str
    findings: tuple[UnitFinding, ...]
    components: int
    equations: int
    undeclared: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """No finding."""
        return not self.findings

    def __str__(self) -> str:
        checked = f"{self.components} components, {self.equations} equations"
        if self.undeclared:
            shown = ", ".join(self.undeclared[:8])
            more = f" and {len(self.undeclared) - 8} more" if len(self.undeclared) > 8 else ""
            checked += f"; {len(self.undeclared)} quantities without a unit: {shown}{more}"
        if self.ok:
            return f"units of {self.name}: consistent ({checked})"
        lines = [f"units of {self.name}: {len(self.findings)} problem(s) ({checked})"]
        lines += [f"  {f}" for f in self.findings]
        lines.append(
            "  (declare the units you mean with parameter(..., unit=) and variable(..., "
            "unit=), or correct the equation)"
        )
        return "\n".join(lines)


def _same(a: pint.Unit, b: pint.Unit) -> bool:
    return a.dimensionality == b.dimensionality


class _Walker:
    """Units of the nodes of one component's expressions (kept per node, so a shared
    subexpression is walked, and reported, once)."""

    def __init__(self, comp: Component, unit_of: Callable[[str], Unit]) -> None:
        self.comp = comp
        self.unit_of = unit_of  # a symbol's name -> its unit
        self.memo: dict[int, Unit] = {}
        self.problems: list[tuple[str, tuple[str, str], str]] = []
        self.one = registry().dimensionless
        self.rad = registry().radian

    def text(self, e: cs.SX) -> str:
        t = infix(e, self.comp.local_name)
        return t if len(t) <= _SHOWN else t[: _SHOWN - 3] + "..."

    def flag(self, e: cs.SX, problem: str, a: Unit, b: Unit) -> None:
        units = (unit_text(a) if a is not None else "?", unit_text(b) if b is not None else "?")
        self.problems.append((problem.format(a=units[0], b=units[1]), units, self.text(e)))

    def unit(self, root: cs.SX) -> Unit:
        """The unit of ``root`` (None if unknown), recording conflicts on the way."""
        memo, stack = self.memo, [root]
        while stack:
            e = stack[-1]
            key = e.element_hash()
            if key in memo:
                stack.pop()
                continue
            if e.is_symbolic():
                memo[key] = self.unit_of(e.name())
            elif e.is_constant():
                memo[key] = None
            else:
                deps = [e.dep(k) for k in range(e.n_dep())]
                todo = [d for d in deps if d.element_hash() not in memo]
                if todo:
                    stack += todo
                    continue
                memo[key] = self.combine(e, [memo[d.element_hash()] for d in deps], deps)
            stack.pop()
        return memo[root.element_hash()]

    def agree(self, e: cs.SX, problem: str, a: Unit, b: Unit) -> Unit:
        """The common unit of ``a`` and ``b``; a finding (and None) if they differ."""
        if a is None or b is None:
            return b if a is None else a
        if _same(a, b):
            return a
        self.flag(e, problem, a, b)
        return None

    def combine(self, e: cs.SX, units: list[Unit], deps: list[cs.SX]) -> Unit:
        """The unit of node ``e`` from its operands' ``units``."""
        op = e.op()
        a = units[0] if units else None
        b = units[1] if len(units) > 1 else None
        if op == cs.OP_ADD and all(d.is_op(cs.OP_IF_ELSE_ZERO) for d in deps):
            return self.agree(e, "has if_else branches in {a} and {b}", a, b)
        if op in _SAME:
            return self.agree(e, _SAME[op], a, b)
        if op in _COMPARE:
            self.agree(e, "compares {a} with {b}", a, b)
            return None  # a 0/1 number, as a constant
        if op in _LOGIC:
            return None
        if op in _KEEP:
            return a
        if op == cs.OP_TWICE:  # 2*x: a product with a constant
            return None
        if op == cs.OP_SIGN:
            return None if a is None else self.one
        if op == cs.OP_IF_ELSE_ZERO:
            return b
        if op in (cs.OP_MUL, cs.OP_DIV):
            if a is None or b is None:
                return None
            return a * b if op == cs.OP_MUL else a / b
        if op == cs.OP_INV:
            return None if a is None else 1 / a
        if op == cs.OP_SQ:
            return None if a is None else a**2
        if op == cs.OP_SQRT:
            return None if a is None else a**0.5
        if op in (cs.OP_POW, cs.OP_CONSTPOW):
            return self.power(e, a, b, deps[1])
        if op == cs.OP_ATAN2:
            self.agree(e, "takes atan2 of {a} and {b}", a, b)
            return self.rad
        if op in _DIMENSIONLESS or op in _ANGLE:
            if a is None:  # softplus(theta) may be a weight of any unit: not guessed
                return None
            if a.dimensionality:
                name = _NAMES.get(op, "a function")
                self.flag(e, f"takes {name} of {{a}} (needs a dimensionless argument)", a, None)
            return self.rad if op in _ANGLE else self.one
        return None  # a call of a CasADi function (a sampled signal), or an op not known

    def power(self, e: cs.SX, a: Unit, b: Unit, exponent: cs.SX) -> Unit:
        """``a^k``: a constant ``k`` takes the k-th power; a variable exponent needs a
        dimensionless base and exponent."""
        if exponent.is_constant():
            return None if a is None else a ** float(exponent)
        if b is not None and b.dimensionality:
            self.flag(e, "raises to a power in {b} (needs a dimensionless exponent)", a, b)
        if a is not None and a.dimensionality:
            self.flag(e, "raises {a} to a variable power (needs a dimensionless base)", a, b)
            return None
        return a


class _Checker:
    """The findings over a set of components."""

    def __init__(self, comps: list[Component]) -> None:
        self.comps = comps
        self.declared: dict[str, str] = {}  # a symbol's name -> declared unit text
        for comp in comps:
            for q in comp._quantities.values():
                self.declared[q.key] = q.unit
        self.findings: list[UnitFinding] = []
        self.equations = 0

    def unit_of(self, name: str) -> Unit:
        """The unit of the symbol named ``name`` (``der(...)`` of a quantity: per s)."""
        if name == "time":
            return registry().second
        base, order = split_derivative(name)
        text = self.declared.get(base, "")
        if not text:
            return None
        return parse_unit(text, name) / registry().second ** order

    def quantity_unit(self, q: Quantity) -> Unit:
        return parse_unit(q.unit, q.name) if q.unit else None

    def component(self, comp: Component) -> None:
        walker = _Walker(comp, self.unit_of)
        report = self.reporter(comp, walker)
        for eq in comp._equations:
            self.equations += 1
            lhs, rhs = walker.unit(eq.expr.dep(0)), walker.unit(eq.expr.dep(1))
            if lhs is not None and rhs is not None and not _same(lhs, rhs):
                walker.flag(eq.expr, "its left side is in {a}, its right side in {b}", lhs, rhs)
            report(f"equation #{eq.index}", eq.text())
        for q in comp._quantities.values():
            if isinstance(q.start, cs.SX):
                start = walker.unit(q.start)
                self.target(walker, q, start, q.start)
                report(f"start of {q.local}", f"{q.local}(start) = {walker.text(q.start)}")
        for ev in comp._events:
            for c in ev.crossings:
                walker.unit(c)
            for q, value in ev.updates:
                self.target(walker, q, walker.unit(value), value)
            if ev.relation is None:
                shown = ", ".join(f"{q.local} := {walker.text(v)}" for q, v in ev.updates)
                report("event", shown)
            else:
                report(f"relation {ev.relation.local}", walker.text(ev.crossings[0]))

    def target(self, walker: _Walker, q: Quantity, unit: Unit, value: cs.SX) -> None:
        """A value assigned to ``q`` (a start value, an update) must be in ``q``'s unit."""
        mine = self.quantity_unit(q)
        if mine is not None and unit is not None and not _same(mine, unit):
            walker.flag(value, f"gives {q.local} in {{a}} a value in {{b}}", mine, unit)

    def reporter(self, comp: Component, walker: _Walker) -> Callable[[str, str], None]:
        """A function that turns the walker's new problems into findings of ``where``."""

        def report(where: str, text: str) -> None:
            for problem, units, expression in walker.problems:
                finding = UnitFinding(comp.full_name, where, text, problem, units, expression)
                self.findings.append(finding)
            walker.problems.clear()

        return report

    def pairs(self, kind: str, pairs: Iterable[tuple[Quantity, Quantity, str, str]]) -> None:
        """Quantities that must have one unit: ``(q, other, owner, text)``."""
        for q, other, owner, text in pairs:
            mine, theirs = self.quantity_unit(q), self.quantity_unit(other)
            if mine is not None and theirs is not None and not _same(mine, theirs):
                units = (unit_text(mine), unit_text(theirs))
                problem = f"{q.name} is in {units[0]}, {other.name} in {units[1]}"
                self.findings.append(UnitFinding(owner, kind, text, problem, units))

    def undeclared(self) -> tuple[str, ...]:
        return tuple(q.name for c in self.comps for q in c._quantities.values() if not q.unit)


def _connections(sets: list[list]) -> Iterable[tuple[Quantity, Quantity, str, str]]:
    for cset in sets:
        first = cset[0]
        text = f"connect({', '.join(c.name for c in cset)})"
        for other in cset[1:]:
            for var, q in first.quantities.items():
                if var in other.quantities:
                    yield q, other.quantities[var], first.name, text


def check_units(target: System | Component) -> UnitReport:
    """Check the units of a system's (or a component's, with those inside it) equations,
    start values, event updates, inner/outer parameters and connections; see the module
    docstring for the rules. Returns a :class:`UnitReport` (``report.ok``, ``print(report)``).
    """
    if isinstance(target, System):
        comps, name = target.all_components(), target.name
        sets = [s for s in target.connection_sets() if len(s) > 1]
    elif isinstance(target, Component):
        comps, name = target.walk(), target.full_name
        sets = [list(conn) for c in comps for conn in c._connections]
    else:
        raise OptionError(
            f"check_units() takes an ac.System or an ac.Component, got {type(target).__name__}"
        )
    checker = _Checker(comps)
    for comp in comps:
        checker.component(comp)
    inners = {n: q for c in comps for n, q in c._inners.items()}
    bound = [
        (q, inners[n], c.full_name, f"outer {n}")
        for c in comps
        for n, q in c._outers.items()
        if n in inners
    ]
    checker.pairs("outer", bound)
    checker.pairs("connection", _connections(sets))
    return UnitReport(
        name, tuple(checker.findings), len(comps), checker.equations, checker.undeclared()
    )
