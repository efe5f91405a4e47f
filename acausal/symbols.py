"""Scalar quantities of a model and the symbolic operations on them.

Every variable, parameter and derivative is a CasADi ``SX`` symbol named ``@@<uid>``; the
:class:`Quantity` behind it (owner, local name, start value, derivative) is found from the
uid. The uid keeps names unique while a component does not yet know its place in a
hierarchy; :func:`display` turns ``@@<uid>`` back into dotted names for people.

``der(e)`` of an expression follows the chain rule,
``d/dt e(q, p, t) = sum_k (de/dq_k) der(q_k) + de/dt`` with parameters ``p`` constant.
"""

from __future__ import annotations

import itertools
import math
import re
import weakref
from collections.abc import Callable
from numbers import Real
from typing import TYPE_CHECKING

import casadi as cs

from .errors import EquationError, ParameterError

if TYPE_CHECKING:
    from .component import Component

_UIDS = itertools.count(1)
_REGISTRY: weakref.WeakValueDictionary[int, Quantity] = weakref.WeakValueDictionary()
_UID = re.compile(r"@@(\d+)")

#: The independent variable of every model.
time = cs.SX.sym("time")


class Quantity:
    """A scalar unknown, derivative or parameter of a component.

    ``kind`` is ``"variable"``, ``"parameter"`` or ``"derivative"``; a derivative has
    ``base`` (the undifferentiated variable) and ``order`` >= 1.
    """

    __slots__ = (
        "owner",
        "local",
        "kind",
        "uid",
        "sym",
        "start",
        "fixed",
        "value",
        "state_priority",
        "base",
        "order",
        "_der",
        "__weakref__",
    )

    def __init__(
        self,
        owner: Component | None,
        local: str,
        kind: str,
        *,
        start: object = None,
        fixed: bool = False,
        value: float | None = None,
        state_priority: int = 0,
        base: Quantity | None = None,
        order: int = 0,
    ) -> None:
        self.owner = owner
        self.local = local
        self.kind = kind
        self.uid = next(_UIDS)
        self.sym = cs.SX.sym(f"@@{self.uid}")
        self.start = start
        self.fixed = fixed
        self.value = value
        self.state_priority = state_priority
        self.base = base if base is not None else self
        self.order = order
        self._der: Quantity | None = None
        _REGISTRY[self.uid] = self

    @property
    def is_constant(self) -> bool:
        """Parameters, and discrete modes between events: their time derivative is zero."""
        return self.kind in ("parameter", "discrete")

    @property
    def name(self) -> str:
        """Full dotted name, e.g. ``motor.R.p.v`` or ``der(C1.v)``."""
        if self.order:
            inner = self.base.name
            for _ in range(self.order):
                inner = f"der({inner})"
            return inner
        prefix = self.owner.full_name if self.owner is not None else ""
        return f"{prefix}.{self.local}" if prefix else self.local

    def derivative(self) -> Quantity:
        """The quantity ``der(self)``, created on first use."""
        if self.is_constant:
            raise EquationError(
                f"der() of {self.kind} {self.name} is zero by definition; remove it"
            )
        if self._der is None:
            self._der = Quantity(
                self.owner, self.local, "derivative", base=self.base, order=self.order + 1
            )
        return self._der

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"


def quantity_named(name: str) -> Quantity:
    """The :class:`Quantity` whose symbol is named ``name`` (``@@<uid>``)."""
    m = _UID.fullmatch(name)
    q = _REGISTRY.get(int(m.group(1))) if m else None
    if q is None:
        raise EquationError(
            f"symbol {name!r} was not declared by a component; create variables with "
            "Component.variable() or Component.parameter()"
        )
    return q


def quantity_of(sym: cs.SX) -> Quantity:
    """The :class:`Quantity` behind a symbol created by this module."""
    return quantity_named(sym.name())


def der(expr: cs.SX | float) -> cs.SX:
    """Time derivative of an expression of variables, parameters and ``time``."""
    expr = cs.SX(expr)
    if not expr.is_scalar():
        return cs.vertcat(*[der(expr[k]) for k in range(expr.numel())])
    if expr.is_symbolic():
        if expr.name() == "time":
            return cs.SX(1)
        q = quantity_of(expr)
        return cs.SX(0) if q.is_constant else q.derivative().sym
    syms = cs.symvar(expr)
    if not syms:
        return cs.SX(0)
    rates = cs.vertcat(*[der(s) for s in syms])
    return cs.jtimes(expr, cs.vertcat(*syms), rates)


def display(text: str | cs.SX, namer: Callable[[Quantity], str] | None = None) -> str:
    """Replace ``@@<uid>`` in ``text`` by the quantities' names (full names by default)."""
    namer = namer or (lambda q: q.name)

    def repl(m: re.Match[str]) -> str:
        q = _REGISTRY.get(int(m.group(1)))
        return namer(q) if q is not None else m.group(0)

    return _UID.sub(repl, str(text))


def check_value(owner: str, name: str, value: object) -> float:
    """A parameter value as a finite float, or a :class:`ParameterError` naming it."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ParameterError(
            f"parameter {owner}.{name} = {value!r} is not a number; give a finite float"
        )
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(
            f"parameter {owner}.{name} = {value!r} is not a finite number; give a finite float"
        )
    return value


# Math on symbols: CasADi's elementwise functions work on SX and on floats alike.
exp, log, sin, cos, tan, tanh, sinh, cosh = (
    cs.exp,
    cs.log,
    cs.sin,
    cs.cos,
    cs.tan,
    cs.tanh,
    cs.sinh,
    cs.cosh,
)
sqrt, atan, atan2, asin, acos, fabs, sign = (
    cs.sqrt,
    cs.atan,
    cs.atan2,
    cs.asin,
    cs.acos,
    cs.fabs,
    cs.sign,
)
fmin, fmax = cs.fmin, cs.fmax


def if_else(cond: cs.SX, if_true: cs.SX | float, if_false: cs.SX | float) -> cs.SX:
    """``if_true`` where ``cond`` holds, else ``if_false`` (both branches are evaluated)."""
    return cs.if_else(cond, if_true, if_false)
