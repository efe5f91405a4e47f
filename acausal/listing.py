"""Components described for people: ``repr`` and :meth:`Component.describe
<acausal.Component.describe>`, with values and units."""

from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as cs

from .printing import infix

if TYPE_CHECKING:
    from .component import Component
    from .symbols import Quantity

#: how many parameters ``repr`` of a component shows
REPR_PARAMETERS = 4


def _unit(unit: str) -> str:
    return f"[{unit}]" if unit else "(no unit)"


def _value(q: Quantity, digits: int = 6) -> str:
    """``2 Ohm``, ``0.5`` (dimensionless), ``3`` (no unit declared), to ``digits``
    significant digits."""
    return f"{q.value:.{digits}g}" + ("" if q.unit in ("", "1") else f" {q.unit}")


def _text(value: cs.SX | float, comp: Component) -> str:
    return infix(value, comp.local_name) if isinstance(value, cs.SX) else f"{value:g}"


def short(comp: Component) -> str:
    """``<Resistor R1: R=2 Ohm>``: the first :data:`REPR_PARAMETERS` parameters with
    their values (6 digits) and units, then how many more."""
    params = [q for q in comp._quantities.values() if q.kind == "parameter"]
    if not params:
        return f"<{type(comp).__name__} {comp.full_name}>"
    shown = [f"{q.local}={_value(q)}" for q in params[:REPR_PARAMETERS]]
    if len(params) > REPR_PARAMETERS:
        shown.append(f"... {len(params) - REPR_PARAMETERS} more")
    return f"<{type(comp).__name__} {comp.full_name}: {', '.join(shown)}>"


def describe(comp: Component) -> str:
    """The class and name, the parameters with their values (to 15 digits) and units (none
    shown for a dimensionless one), the connectors with their variables' units, the
    variables (with start values) and discrete modes, and the subcomponents; a variable
    declared without a unit says so."""
    lines = [f"{type(comp).__name__} {comp.full_name}"]
    params = [q for q in comp._quantities.values() if q.kind == "parameter"]
    if params:
        lines.append("  parameters:")
        lines += [f"    {q.local} = {_value(q, 15)}" for q in params]
    if comp._connectors:
        lines.append("  connectors:")
        for local, c in comp._connectors.items():
            kind = c.ctype.name if c.owner is comp else f"{c.ctype.name}, of {c.owner.name}"
            shown = ", ".join(f"{v} {_unit(q.unit)}" for v, q in c.quantities.items())
            lines.append(f"    {local} ({kind}): {shown}")
    connected = {q.local for c in comp.own_connectors.values() for q in c.quantities.values()}
    own = [q for q in comp._quantities.values() if q.kind != "parameter"]
    own = [q for q in own if q.local not in connected]
    if own:
        lines.append("  variables:")
        for q in own:
            start = "" if q.start is None else f", start {_text(q.start, comp)}"
            fixed = " (fixed)" if q.fixed and q.kind == "variable" else ""
            mode = ", a discrete mode" if q.kind == "discrete" else ""
            lines.append(f"    {q.local} {_unit(q.unit)}{mode}{start}{fixed}")
    if comp._children:
        shown = ", ".join(f"{c.name} ({type(c).__name__})" for c in comp._children.values())
        lines.append(f"  components: {shown}")
    return "\n".join(lines)
