"""Components: connectors, parameters, variables and equations, possibly subcomponents.

A component is declarative: its ``__init__`` declares what it has and the equations
``lhs == rhs`` that relate them. A hierarchical component assigns subcomponents as
attributes (or passes them to :meth:`Component.add`), connects them with
:meth:`Component.connect`, and makes some of their connectors its own with
:meth:`Component.expose`.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import casadi as cs

from . import listing
from .arrays import ComponentArray, ConnectorArray, check_array_connection, per_element
from .connectors import Connector, ConnectorType, check_same_type
from .errors import (
    ConnectError,
    EquationError,
    NameClashError,
    ParameterError,
    ParameterWarning,
)
from .printing import infix
from .symbols import (
    Quantity,
    as_sx,
    check_value,
    derivative_name,
    new_token,
    split_derivative,
)
from .units import check_unit, convert, is_quantity

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?")


def _user_level(comp: Component) -> int:
    """The ``stacklevel`` that makes a warning raised in a method of ``comp`` point at the
    user's line: the first caller that is neither in this package, nor in the package that
    defines ``comp``'s class (a library such as ``components`` and its helper functions;
    none for a class defined in a script), nor inside a component's own methods."""
    package = type(comp).__module__.partition(".")[0] if "." in type(comp).__module__ else None
    skipped = {__name__.partition(".")[0], package}
    frame, level = sys._getframe(2), 2  # 1: the method that warns, 2: its caller
    while frame.f_back is not None and (
        frame.f_globals.get("__name__", "").partition(".")[0] in skipped
        or isinstance(frame.f_locals.get("self"), Component)
    ):
        frame, level = frame.f_back, level + 1
    return level


def check_name(kind: str, name: object) -> str:
    """A valid local name (identifier, optionally indexed like ``R[3]``)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise NameClashError(
            f"{kind} name {name!r} is not a valid name; use letters, digits and _ "
            "(no dots: hierarchy comes from nesting components)"
        )
    return name


class Equation:
    """One equation ``lhs == rhs`` of a component, kept as the residual ``lhs - rhs``."""

    __slots__ = ("owner", "index", "expr", "residual")

    def __init__(
        self, owner: Component, index: int, expr: cs.SX, residual: cs.SX | None = None
    ) -> None:
        self.owner = owner
        self.index = index
        self.expr = expr
        self.residual = expr.dep(0) - expr.dep(1) if residual is None else residual

    def text(self) -> str:
        """The equation with names local to its component (``v == R*i``)."""
        return infix(self.expr, self.owner.local_name)


@dataclass
class Event:
    """Crossing functions of a component and the mode updates they trigger; for a
    relation (:meth:`Component.relation`), its one crossing and the 0/1 mode it drives."""

    owner: Component
    crossings: tuple[cs.SX, ...]
    updates: tuple[tuple[Quantity, cs.SX], ...]
    relation: Quantity | None = None


class Component:
    """Base class of every component; subclasses declare their contents in ``__init__``."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", check_name("component", name))
        object.__setattr__(self, "_parent", None)
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_quantities", {})
        object.__setattr__(self, "token", new_token())
        object.__setattr__(self, "_system", None)
        self._connectors: dict[str, Connector] = {}
        self._equations: list[Equation] = []
        self._connections: list[tuple[Connector, ...]] = []
        self._inners: dict[str, Quantity] = {}
        self._events: list[Event] = []
        self._outers: dict[str, Quantity] = {}

    # -- naming -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def full_name(self) -> str:
        """Dotted path from the outermost component, e.g. ``motor.R``."""
        return f"{self._parent.full_name}.{self._name}" if self._parent else self._name

    def __repr__(self) -> str:
        """``<Resistor R1: R=2 Ohm>``: the first few parameters with their values and units
        (:func:`acausal.listing.short`; :meth:`describe` lists everything)."""
        return listing.short(self)

    def describe(self) -> str:
        """A listing for people (:func:`acausal.listing.describe`): the class and name, the
        parameters with their values and units, the connectors with their variables'
        units, the variables (with start values) and discrete modes, the subcomponents."""
        return listing.describe(self)

    def __setattr__(self, key: str, value: Any) -> None:
        q = self.__dict__.get("_quantities", {}).get(key)
        if q is not None and q.kind == "parameter" and value is not q.sym:
            raise ParameterError(
                f"{self.full_name}.{key} = {value!r}: a parameter's value is fixed when the "
                f"component is made; pass it to the constructor, or override it per run with "
                f"simulate(..., params={{'{self.full_name}.{key}': {value!r}}})"
            )
        if isinstance(value, Component) and value is not self and value._parent is None:
            self.add(value)
        if isinstance(value, ComponentArray):
            self.add(value)
        object.__setattr__(self, key, value)

    # -- reading a component (public, read-only views) ------------------------------------
    @property
    def parent(self) -> Component | None:
        return self._parent

    @property
    def quantities(self) -> dict[str, Quantity]:
        """Local name -> :class:`Quantity` (variables, parameters, modes; a copy)."""
        return dict(self._quantities)

    @property
    def own_connectors(self) -> dict[str, Connector]:
        """The connectors this component declares (not those exposed from inside it)."""
        return {k: c for k, c in self._connectors.items() if c.owner is self}

    @property
    def declared_equations(self) -> tuple[Equation, ...]:
        return tuple(self._equations)

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def inner_connections(self) -> tuple[tuple[Connector, ...], ...]:
        """The ``connect`` calls made inside this component."""
        return tuple(self._connections)

    def quantity(self, sym: cs.SX) -> Quantity | None:
        """The quantity of this component or one inside it that ``sym`` (or its
        ``der(...)``) names; None for ``time`` and foreign symbols."""
        base, _ = split_derivative(sym.name())
        token, sep, local = base[2:].partition(":")
        if not (base.startswith("@") and sep):
            return None
        for comp in self.walk():
            if comp.token == token:
                return comp._quantities.get(local)
        return None

    def name_of(self, sym: cs.SX) -> str:
        """The dotted name of a symbol of this component or one inside it (``C1.v``,
        ``der(C1.v)``); ``time`` stays ``time``, a foreign symbol keeps its raw name."""
        q = self.quantity(sym)
        if q is None:
            return sym.name()
        return derivative_name(q.name, split_derivative(sym.name())[1])

    def local_name(self, sym: cs.SX) -> str:
        """A symbol's name relative to this component (``v``, ``der(p.v)``, ``sub.x``)."""
        name = sym.name()
        base, order = split_derivative(name)
        q = self.quantity(sym)
        if q is None:
            return name
        prefix = self.full_name + "."
        full = q.name
        text = full[len(prefix) :] if full.startswith(prefix) else full
        return "der(" * order + text + ")" * order

    # -- declarations -------------------------------------------------------------------
    def _claim(self, local: str) -> None:
        taken = self._quantities.keys() | self._connectors.keys() | self._children.keys()
        if local in taken:
            raise NameClashError(f"{self.full_name} declares {local!r} twice; rename one of them")

    def connector(self, name: str, ctype: ConnectorType) -> Connector:
        """Declare a connector of type ``ctype`` (e.g. ``ac.Pin``)."""
        check_name("connector", name)
        if not isinstance(ctype, ConnectorType):
            raise ConnectError(
                f"{self.full_name}.{name}: {ctype!r} is not a connector type (use ac.Pin, ...)"
            )
        self._claim(name)
        c = Connector(self, name, ctype)
        for var in ctype.potentials + ctype.flows:
            unit = check_unit(
                ctype.units.get(var, ""), f"connector type {ctype.name}, variable {var}"
            )
            q = Quantity(self, f"{name}.{var}", "variable", unit=unit)
            c.quantities[var] = q
            self._quantities[q.local] = q
        self._connectors[name] = c
        return c

    def parameter(
        self,
        name: str,
        value: float | str | cs.SX | Any,
        unit: str = "",
        *,
        min: float | None = None,
    ) -> cs.SX:
        """Declare a parameter; it stays symbolic so a simulation can override its value.

        ``unit`` is its unit (a string pint parses: ``"Ohm"``, ``"N*m/(rad/s)"``, ``"1"``
        for a dimensionless one; a typo is a :class:`UnitError` here). ``value`` is a
        number in that unit, or a quantity with a unit of the same dimension, as a string
        (``"2 kOhm"``) or a ``pint.Quantity``, converted here once to the declared unit
        (``"2 kOhm"`` for ``unit="Ohm"`` is 2000.0; :func:`acausal.units.convert`).
        ``min`` is the least physical value (in ``unit``): a smaller one is allowed (a
        negative resistance models an active device, and a fit may explore one) but gets a
        :class:`ParameterWarning` naming the parameter.

        A value that is already an expression of other parameters is returned as is
        (a derived quantity, not a parameter of its own).
        """
        check_name("parameter", name)
        if isinstance(value, cs.SX):
            return value
        where = f"{self.full_name}.{name}"
        check_unit(unit, where)
        if isinstance(value, str) or is_quantity(value):
            value = convert(value, unit, where)
        value = check_value(self.full_name, name, value)
        if min is not None and value < min:
            warnings.warn(
                f"{where} = {value:g} is below its physical minimum {min:g} "
                "(allowed, e.g. for an active device or a fit's exploration, but check the "
                "sign)",
                ParameterWarning,
                stacklevel=_user_level(self),
            )
        self._claim(name)
        q = Quantity(self, name, "parameter", value=value, unit=unit)
        self._quantities[name] = q
        return q.sym

    def inner(self, name: str, value: float | str, unit: str = "") -> cs.SX:
        """Declare a parameter that every :meth:`outer` of the same name in the system uses
        (as Modelica's inner/outer: a World's gravity for all bodies); ``unit`` as for
        :meth:`parameter`."""
        sym = self.parameter(name, value, unit)
        self._inners[name] = self._quantities[name]
        return sym

    def outer(self, name: str, default: float | str, unit: str = "") -> cs.SX:
        """A parameter provided by the system's :meth:`inner` of this name; without one in
        the system it is a parameter of this component with value ``default``; ``unit`` as
        for :meth:`parameter` (the inner's should be the same: :func:`acausal.check_units`
        compares them)."""
        sym = self.parameter(name, default, unit)
        self._outers[name] = self._quantities[name]
        return sym

    def discrete(self, name: str, start: float) -> cs.SX:
        """A discrete mode: constant between events, changed only by :meth:`event` updates.

        It is integrated as a state of zero rate, which IDAS may move by rounding (1e-27):
        compare it with a margin in equations (``mode > 0.5``, ``abs(mode - 1) < 0.5``),
        never with ``==``.

        ``start`` is its value before the event iteration at the start time; it is the
        parameter ``<name>_start``.
        """
        check_name("discrete", name)
        start_sym = self.parameter(f"{name}_start", start, "1")
        self._claim(name)
        q = Quantity(self, name, "discrete", start=start_sym, fixed=True, unit="1")
        self._quantities[name] = q
        return q.sym

    def event(self, crossings: Sequence[cs.SX], updates: dict[cs.SX, cs.SX]) -> None:
        """When an expression of ``crossings`` changes sign, set each target of ``updates``
        to its new value (an expression of modes, variables, parameters and time): a
        discrete mode of this component, or one of its variables that is a state (a
        re-initialization, e.g. a velocity set to zero at a hard stop). Updates repeat
        until nothing changes (event iteration)."""
        rules = {}
        for mode, value in updates.items():
            q = self.quantity(mode) if isinstance(mode, cs.SX) and mode.is_symbolic() else None
            if q is None or q.kind not in ("discrete", "variable") or q.owner is not self:
                raise EquationError(
                    f"{self.full_name}.event(): {mode!r} is not a discrete mode or variable of "
                    f"{self.full_name}; declare it with self.discrete() or self.variable()"
                )
            rules[q] = as_sx(value)
        crossing = tuple(as_sx(c) for c in crossings)
        if not crossing or any(not c.is_scalar() for c in crossing):
            raise EquationError(
                f"{self.full_name}.event(): give one or more scalar crossing expressions"
            )
        self._events.append(Event(self, crossing, tuple(rules.items())))

    def relation(self, comparison: cs.SX, name: str, start: bool = False) -> cs.SX:
        """A relation with memory, as Modelica defines them: the discrete mode ``name``
        (1 or 0) holding ``a < b`` (or ``>``, ``<=``, ``>=``; strict and non-strict are the
        same here), watched by the crossing function ``c = b - a`` (true while ``c > 0``).

        Between events it is constant. At an event it takes the side its crossing went to
        when that crossing fired, and otherwise flips only when ``c`` is beyond a noise
        band (``1e-11`` of the largest ``|c|`` seen, at least ``atol / 1000``) on the other side:
        a value re-computed as ``-2e-15`` right after the switch does not switch it back.
        Mode updates (:meth:`event`) and equations read it like any mode. ``start`` is its
        value before the event iteration at the start time, which decides ``c = 0``
        exactly there (a diode that starts with zero voltage starts off, say).
        """
        cmp = as_sx(comparison)
        if not (cmp.is_scalar() and (cmp.is_op(cs.OP_LT) or cmp.is_op(cs.OP_LE))):
            raise EquationError(
                f"{self.full_name}.relation({name!r}): give one comparison such as "
                "self.s < 0 or self.v >= self.v_max"
            )
        flag = self.discrete(name, float(bool(start)))
        crossing = cmp.dep(1) - cmp.dep(0)
        self._events.append(Event(self, (crossing,), (), self._quantities[name]))
        return flag

    def initial(self, name: str, value: float | str | None, unit: str = "") -> cs.SX | None:
        """A start value declared as parameter ``name`` (in ``unit``, as for
        :meth:`parameter`), so ``simulate(params=)`` can change it without recompiling;
        None stays None (no start value)."""
        return None if value is None else self.parameter(name, value, unit)

    def variable(
        self,
        name: str,
        start: float | cs.SX | None = None,
        fixed: bool = False,
        state_priority: int = 0,
        unit: str = "",
    ) -> cs.SX:
        """Declare an unknown.

        ``start`` is the initial value (a guess unless ``fixed``); ``state_priority`` > 0
        asks index reduction to keep this variable as a state, < 0 to avoid it; ``unit`` is
        its unit (a string pint parses; a typo is a :class:`UnitError` here).
        """
        check_name("variable", name)
        check_unit(unit, f"{self.full_name}.{name}")
        self._claim(name)
        if fixed and start is None:
            raise EquationError(f"{self.full_name}.{name}: fixed=True needs a start value")
        if start is not None and not isinstance(start, cs.SX):
            start = check_value(self.full_name, f"{name} (start)", start)
        q = Quantity(
            self,
            name,
            "variable",
            start=start,
            fixed=fixed,
            state_priority=state_priority,
            unit=unit,
        )
        self._quantities[name] = q
        return q.sym

    def equations(self, *eqs: cs.SX) -> None:
        """Add equations written as ``lhs == rhs``."""
        for eq in eqs:
            k = len(self._equations) + 1
            if isinstance(eq, (bool, int, float)) or not isinstance(eq, cs.SX):
                raise EquationError(
                    f"{self.full_name}: equation #{k} is {eq!r}, not an equation; write it as "
                    "lhs == rhs with at least one variable"
                )
            if not (eq.is_scalar() and eq.is_op(cs.OP_EQ)):
                raise EquationError(
                    f"{self.full_name}: equation #{k} '{infix(eq, self.local_name)}' is not of "
                    "the form lhs == rhs"
                )
            self._equations.append(Equation(self, k, eq))

    @classmethod
    def array(cls, prefix: str, n: int, *args: Any, **kwargs: Any) -> ComponentArray:
        """``n`` instances named ``<prefix>1 .. <prefix>n``, each as
        ``cls(name, *args, **kwargs)`` would make it (``el.Resistor.array("R", 1000,
        R=1e-3)``), built at the cost of one: the first is built by the constructor, and its
        expressions, as one CasADi function of its own symbols, give every other instance's
        in one mapped call. The result is a :class:`~acausal.ComponentArray`: a sequence of
        the instances (each made into an object when asked for: ``rs[k]``) whose connectors
        are arrays (``rs.p``) that :meth:`System.connect <acausal.System.connect>` connects
        element by element (:mod:`acausal.arrays`). All take the same arguments; give
        instances other parameter values by ``simulate(..., params=...)``."""
        from .arrays import make_array

        check_name("component", f"{prefix}1")
        return make_array(cls, prefix, n, args, kwargs)

    def valid_ranges(self) -> tuple[tuple[cs.SX, float, float, str], ...]:
        """Where this component's equations hold: ``(variable, low, high, what)`` for each
        variable (of this component or one inside it) that must stay in ``[low, high]``,
        ``what`` naming the range (``"training range"``). None by default; a component
        that knows (a learned model, valid where its data were) returns them. Nothing
        enforces them: a simulation that fails reports the variables outside theirs where
        it stopped (Modelica's ``min``/``max`` attributes, checked after the fact)."""
        return ()

    # -- hierarchy ----------------------------------------------------------------------
    def add(self, *components: Component | ComponentArray) -> Component | ComponentArray:
        """Make ``components`` subcomponents (an array's: each of its instances, made
        into objects); returns the last one."""
        for c in components:
            if isinstance(c, ComponentArray):
                self.add(*c)
                continue
            if c._parent is not None and c._parent is not self:
                raise NameClashError(f"{c.full_name} already belongs to {c._parent.full_name}")
            if c._parent is self:
                continue
            self._claim(c.name)
            object.__setattr__(c, "_parent", self)
            self._children[c.name] = c
        return components[-1]

    def connect(self, *connectors: Connector | ConnectorArray) -> None:
        """Connect connectors of subcomponents inside this component; connector arrays
        element by element, as :meth:`System.connect <acausal.System.connect>` does."""
        if not any(isinstance(c, ConnectorArray) for c in connectors):
            self._connections.append(check_connection(connectors))
            return
        check_array_connection(connectors)
        self._connections += [check_connection(each) for each in per_element(connectors)]

    def expose(self, name: str, inner: Connector) -> Connector:
        """Make a subcomponent's connector reachable as this component's connector ``name``."""
        check_name("connector", name)
        if not isinstance(inner, Connector) or not _is_inside(inner.owner, self):
            raise ConnectError(
                f"{self.full_name}.expose({name!r}, ...): {inner!r} is not a connector of a "
                f"subcomponent of {self.full_name}"
            )
        self._claim(name)
        self._connectors[name] = inner
        return inner

    def subcomponents(self) -> list[Component]:
        return list(self._children.values())

    def walk(self) -> list[Component]:
        """This component and all components inside it, depth first."""
        out = [self]
        for c in self._children.values():
            out.extend(c.walk())
        return out

    @property
    def connectors(self) -> dict[str, Connector]:
        return dict(self._connectors)


def root(c: Component) -> Component:
    """The outermost component holding ``c`` (``c`` itself at the top level)."""
    while c._parent is not None:
        c = c._parent
    return c


def _is_inside(c: Component, ancestor: Component) -> bool:
    while c is not None:
        if c is ancestor:
            return True
        c = c._parent
    return False


def check_connection(connectors: tuple[Connector, ...]) -> tuple[Connector, ...]:
    """The connectors of one ``connect(...)`` call, after checking their types agree."""
    if len(connectors) < 2:
        raise ConnectError(f"connect() needs two or more connectors, got {list(connectors)}")
    for c in connectors:
        if not isinstance(c, Connector):
            hint = " (a component: pick one of its connectors)" if isinstance(c, Component) else ""
            raise ConnectError(f"connect(): {c!r} is not a connector{hint}")
    check_same_type(connectors)
    if any(c is connectors[0] for c in connectors[1:]):
        raise ConnectError(f"connect(): {connectors[0].name} is connected to itself")
    return tuple(connectors)
