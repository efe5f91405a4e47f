"""The constitutive relation of a two-connector component, in the paper's templates.

:func:`constitutive` takes a component's own equations (any component: an
:class:`~learning.Unknown`, a library resistor, a user's class), eliminates its internal
variables (``v = p.v - n.v``, ``i = p.i``: equations affine in an internal variable with a
nonzero constant coefficient; their time derivatives by the chain rule) and sorts what is
left relating the connector variables ``f_a, f_b, x_a, x_b`` into Matei et al.'s templates:

- Type 1: ``f_a + f_b = 0`` and ``g(f, x) = 0`` with ``f = f_a``, ``x = x_a - x_b``;
- Type 2: ``x_a = x_b`` and ``g(f, x) = 0`` with ``f = f_a + f_b``, ``x = x_a``;
- Type 3: ``G1(f_a, f_b) = 0`` and ``G2(x_a, x_b) = 0``.

The relation is written in fresh symbols named as the domain names them (``i``, ``v``,
``der(v)`` on a pin; ``i_a``, ``v_b`` for Type 3), so nothing here touches the model's own
quantities (no derivative is created on a model variable).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import casadi as cs

import acausal as ac
from acausal.symbols import split_derivative, time

POWER_ORDER: dict[str, int | None] = {"i/v": 0, "f/s": 1, "tau/phi": 1, "Q/T": None}


@dataclass
class Relation:
    """One relation ``g = 0`` and the inputs whose partial derivatives Proposition 3.1 names:
    for each of its variables (flow, potential), the highest time derivative present."""

    g: cs.SX
    named: list[str]  # labels of the Prop 3.1 inputs, e.g. ["i", "v"] or ["i", "der(v)"]


@dataclass
class Constitutive:
    """The analysed form of a two-connector component.

    ``kind``: ``"law"`` (a relation between flow and potential: Proposition 3.1 applies),
    ``"source"`` (it fixes only the flow or only the potential: sources, sensors, shorts) or
    ``"other"`` (not in a template; ``note`` says why). ``symbols`` maps each label to its
    fresh symbol and ``roles`` each label to ``(base, order)`` where base is ``f``/``x``
    (Types 1, 2) or ``f_a``, ``f_b``, ``x_a``, ``x_b`` (Type 3).
    """

    component: ac.Component
    kind: str
    template: int | None = None
    relations: list[Relation] = field(default_factory=list)
    symbols: dict[str, cs.SX] = field(default_factory=dict)
    roles: dict[str, tuple[str, int]] = field(default_factory=dict)
    connectors: tuple[str, str] = ("", "")  # full names of connectors a and b
    flow: str = "f"
    potential: str = "x"
    note: str = ""

    @property
    def static(self) -> bool:
        """No time derivative in the relations."""
        return all(self.roles[label][1] == 0 for label in self._used())

    @property
    def power_order(self) -> int | None:
        """``k`` such that flow times the ``k``-th derivative of the potential is power: 0 for
        pins and user connector types (the paper's ``f x``), 1 for flanges (force times
        velocity), None for heat ports (heat flow is itself a power)."""
        return POWER_ORDER.get(self.flow + "/" + self.potential, 0)

    @property
    def resistive(self) -> bool:
        """A law between flows and the power variable of the potential only (a resistor,
        a damper): dissipativity applies. Laws with other derivatives store energy."""
        k = self.power_order
        if k is None:
            return False
        for label in self._used():
            base, order = self.roles[label]
            if order != (0 if base.startswith("f") else k):
                return False
        return True

    def power_text(self) -> str:
        """``f_a x_a + f_b x_b`` with the potential's power variable (``der(x_a)`` ...)."""
        x = "der(x_{})" if self.power_order == 1 else "x_{}"
        return f"f_a {x.format('a')} + f_b {x.format('b')}"

    def power_label(self, which: str = "") -> str:
        """The label of the potential's power variable (``v``, ``der(s)``; ``v_a`` ...)."""
        name = self.potential + (f"_{which}" if which else "")
        return _label(name, self.power_order or 0)

    def _used(self) -> list[str]:
        names = {s.name() for r in self.relations for s in cs.symvar(r.g)}
        return [label for label, sym in self.symbols.items() if sym.name() in names]

    def variables(self) -> list[str]:
        """Labels of the inputs the relations use (all orders), then ``time`` if used."""
        used = self._used()
        if any(cs.depends_on(r.g, time) for r in self.relations):
            used.append("time")
        return used

    def symbol(self, label: str) -> cs.SX:
        return time if label == "time" else self.symbols[label]


def two_connectors(comp: ac.Component) -> tuple[ac.Connector, ac.Connector] | None:
    """The component's own two connectors of one type with one potential and one flow."""
    own = list(comp.own_connectors.values())
    if len(own) != 2 or own[0].ctype is not own[1].ctype or len(own[0].ctype.flows) != 1:
        return None
    return own[0], own[1]


class _Symbols:
    """Fresh symbols per (variable key, derivative order), named for people."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, int], cs.SX] = {}
        self.key_of: dict[str, tuple[str, int]] = {}

    def get(self, key: str, order: int) -> cs.SX:
        if (key, order) not in self.by_key:
            name = key
            for _ in range(order):
                name = f"der({name})"
            sym = cs.SX.sym(name if name not in self.key_of else f"{name}'")
            self.by_key[(key, order)] = sym
            self.key_of[sym.name()] = (key, order)
        return self.by_key[(key, order)]

    def rate(self, expr: cs.SX) -> cs.SX:
        """``d expr / dt`` by the chain rule (parameters constant)."""
        syms = [s for s in cs.symvar(expr) if s.name() in self.key_of]
        out = cs.jacobian(expr, time) if cs.depends_on(expr, time) else cs.SX(0)
        if syms:
            rates = [self.get(k, o + 1) for k, o in (self.key_of[s.name()] for s in syms)]
            out = out + cs.jtimes(expr, cs.vertcat(*syms), cs.vertcat(*rates))
        return out


def constitutive(comp: ac.Component) -> Constitutive | None:
    """The component's relation in a template, or None if it has no two connectors."""
    pair = two_connectors(comp)
    if pair is None:
        return None
    a, b = pair
    flow, pot = a.ctype.flows[0], a.ctype.potentials[0]
    out = Constitutive(comp, "other", connectors=(a.name, b.name), flow=flow, potential=pot)
    if not comp.declared_equations:
        out.note = "declares no equations of its own"
        return out
    roles = {
        a.quantities[flow]: "f_a",
        b.quantities[flow]: "f_b",
        a.quantities[pot]: "x_a",
        b.quantities[pot]: "x_b",
    }
    syms = _Symbols()
    res = cs.vertcat(*[e.residual for e in comp.declared_equations])
    old, new, internals = [], [], set()
    for s in cs.symvar(res):
        if s.name() == "time":
            continue
        base = comp.quantity(s)
        if base is None:
            out.note = f"its equations use {s.name()}, a variable of another component"
            return out
        if base.kind == "parameter":
            continue
        if base.kind == "discrete":
            out.note = "has discrete modes (events): not analysed"
            return out
        if base in roles:
            key = roles[base]
        elif base.owner is comp:
            key = "int:" + base.local
            internals.add(key)
        else:
            out.note = f"its equations use {base.name}, a variable of another component"
            return out
        old.append(s)
        new.append(syms.get(key, split_derivative(s.name())[1]))
    eqs = cs.vertsplit(cs.substitute(res, cs.vertcat(*old), cs.vertcat(*new))) if old else []
    left = _eliminate(eqs, internals, syms)
    if left is None:
        names = ", ".join(sorted(k[4:] for k in internals))
        out.note = f"its internal variables ({names}) could not be eliminated"
        return out
    return _classify(out, left, syms)


def _eliminate(eqs: list[cs.SX], internals: set[str], syms: _Symbols) -> list[cs.SX] | None:
    """Solve equations affine in an internal variable (nonzero constant coefficient, no
    derivative of it in the same equation) for it and substitute, with its derivatives."""
    eqs = list(eqs)
    remaining = set(internals)
    while remaining:
        best = None
        for k, e in enumerate(eqs):
            names = {s.name() for s in cs.symvar(e)}
            for key in sorted(remaining):
                q = syms.get(key, 0)
                if q.name() not in names or any(
                    syms.by_key.get((key, o)) is not None and syms.by_key[(key, o)].name() in names
                    for o in range(1, 8)
                ):
                    continue
                coef = cs.jacobian(e, q)
                variables = [s for s in cs.symvar(coef) if s.name() in syms.key_of]
                if variables or cs.depends_on(coef, time):
                    continue
                rank = (0 if coef.is_constant() else 1, len(names))
                if coef.is_constant() and float(cs.evalf(coef)) == 0:
                    continue
                if best is None or rank < best[0]:
                    best = (rank, k, key, coef)
        if best is None:
            return None
        _, k, key, coef = best
        e = eqs.pop(k)
        value = -cs.substitute(e, syms.get(key, 0), cs.SX(0)) / coef
        old, new = [syms.get(key, 0)], [value]
        order = 1
        while (key, order) in syms.by_key:
            value = syms.rate(value)
            old.append(syms.by_key[(key, order)])
            new.append(value)
            order += 1
        if eqs:
            eqs = cs.vertsplit(cs.substitute(cs.vertcat(*eqs), cs.vertcat(*old), cs.vertcat(*new)))
        remaining.discard(key)
    return eqs


def _is_pair(r: cs.SX, syms: _Symbols, a: str, b: str, sign: float) -> bool:
    """Is ``r`` a nonzero multiple of ``a + sign * b`` (order 0)?"""
    sa, sb = syms.by_key.get((a, 0)), syms.by_key.get((b, 0))
    if sa is None or sb is None:
        return False
    names = {s.name() for s in cs.symvar(r)}
    if names != {sa.name(), sb.name()}:
        return False
    jac = cs.jacobian(r, cs.vertcat(sa, sb))
    if not jac.is_constant():
        return False
    ca, cb = (float(v) for v in cs.evalf(jac).full().ravel())
    rest = cs.substitute(r, cs.vertcat(sa, sb), cs.DM.zeros(2))
    return ca != 0 and cb == sign * ca and rest.is_zero()


def _chain_substitute(g: cs.SX, syms: _Symbols, rules: dict[str, cs.SX]) -> cs.SX:
    """Replace every order of each base ``key`` by the same order of ``rules[key]``."""
    old, new = [], []
    for (key, order), sym in list(syms.by_key.items()):
        if key in rules:
            value = rules[key]
            for _ in range(order):
                value = syms.rate(value)
            old.append(sym)
            new.append(value)
    return cs.substitute(g, cs.vertcat(*old), cs.vertcat(*new)) if old else g


def _uses(g: cs.SX, syms: _Symbols, key: str) -> list[int]:
    names = {s.name() for s in cs.symvar(g)}
    return sorted(o for (k, o), s in syms.by_key.items() if k == key and s.name() in names)


def _classify(out: Constitutive, left: list[cs.SX], syms: _Symbols) -> Constitutive:
    cons_f = [r for r in left if _is_pair(r, syms, "f_a", "f_b", 1.0)]
    cons_x = [r for r in left if _is_pair(r, syms, "x_a", "x_b", -1.0)]
    if len(left) != 2:
        out.note = f"{len(left)} relations remain between its connector variables, not 2"
        return out
    fl, pt = out.flow, out.potential
    if len(cons_f) == 1 and not cons_x or len(cons_x) == 1 and not cons_f:
        template = 1 if cons_f else 2
        g = next(r for r in left if r is not (cons_f or cons_x)[0])
        f, x = syms.get(fl, 0), syms.get(pt, 0)
        if template == 1:
            rules = {"f_b": -f, "f_a": f, "x_a": x + syms.get("x_b", 0)}
            g = _chain_substitute(g, syms, rules)
            stray = "x_b"
        else:
            rules = {"x_b": x, "x_a": x, "f_a": f - syms.get("f_b", 0)}
            g = _chain_substitute(g, syms, rules)
            stray = "f_b"
        if _uses(g, syms, stray):
            out.note = (
                f"type {template} conservation holds, but its relation depends on "
                f"{'the potential at ' + out.connectors[1] if template == 1 else 'f_b alone'}"
            )
            return out
        out.template = template
        bases = {fl: "f", pt: "x"}
        named = []
        for key in (fl, pt):
            orders = _uses(g, syms, key)
            if orders:
                named.append(_label(key, orders[-1]))
        _record(out, syms, bases, g)
        out.relations = [Relation(g, named)]
        if len(named) < 2:
            out.kind = "source"
            which = "flow" if not _uses(g, syms, pt) else "potential"
            out.note = f"fixes its {which} only (a source, sensor or ideal element)"
        else:
            out.kind = "law"
        return out
    if cons_f or cons_x:
        out.note = "both its flows and its potentials are tied (an ideal short)"
        return out
    kinds = []
    for r in left:
        keys = {syms.key_of[s.name()][0] for s in cs.symvar(r) if s.name() in syms.key_of}
        kinds.append("f" if keys <= {"f_a", "f_b"} else "x" if keys <= {"x_a", "x_b"} else "")
    if sorted(kinds) != ["f", "x"]:
        out.note = "its relations mix flows and potentials outside the three templates"
        return out
    g1, g2 = (left[kinds.index("f")], left[kinds.index("x")])
    rules = {
        "f_a": syms.get(f"{fl}_a", 0),
        "f_b": syms.get(f"{fl}_b", 0),
        "x_a": syms.get(f"{pt}_a", 0),
        "x_b": syms.get(f"{pt}_b", 0),
    }
    g1, g2 = (_chain_substitute(g, syms, rules) for g in (g1, g2))
    out.template, out.kind = 3, "law"
    bases = {f"{fl}_a": "f_a", f"{fl}_b": "f_b", f"{pt}_a": "x_a", f"{pt}_b": "x_b"}
    out.relations = []
    for g, keys in ((g1, (f"{fl}_a", f"{fl}_b")), (g2, (f"{pt}_a", f"{pt}_b"))):
        named = [_label(k, _uses(g, syms, k)[-1]) for k in keys if _uses(g, syms, k)]
        out.relations.append(Relation(g, named))
        if len(named) < 2:
            out.kind = "source"
            out.note = "a type 3 relation uses only one of its two variables"
    _record(out, syms, bases, g1, g2)
    return out


def _label(key: str, order: int) -> str:
    for _ in range(order):
        key = f"der({key})"
    return key


def _record(out: Constitutive, syms: _Symbols, bases: dict[str, str], *gs: cs.SX) -> None:
    """Symbols and roles of the labels the relations use."""
    names = {s.name() for g in gs for s in cs.symvar(g)}
    for (key, order), sym in syms.by_key.items():
        if key in bases and sym.name() in names:
            label = _label(key, order)
            out.symbols[label] = sym
            out.roles[label] = (bases[key], order)
