"""A system of the stencil's form with its number of cells left open (:class:`Shape`), and
the system of it at any number of cells (:func:`built`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import ConnectorArray, element_of, unlinked_array
from ..connectors import Connector
from ..system import System

#: cells of the first small copy (the second has one more): 8, or 14 where the first
#: copies' cells reach too far for 8 (a window of two cells each way, two end cells)
SMALL = (8, 14)
#: how far from an end an element may be connected on its own (``rs.p[0]``, ``[-1]``)
EDGE = 2
#: the fewest cells compiled by the stencil (its two small compiles cost what the full
#: pipeline costs at 300-400 cells of a chain or an RC ladder)
MIN_CELLS = 300


class Element(NamedTuple):
    """An array's element connected on its own: ``index`` from the array's start (>= 0) or
    from its end (< 0: ``-1`` the last)."""

    prefix: str
    index: int
    local: str


class Range(NamedTuple):
    """An array's connector of instances ``a .. n - 1 - b`` (all but ``a`` at the start and
    ``b`` at the end), connected element by element."""

    prefix: str
    local: str
    a: int
    b: int


class Shape(NamedTuple):
    """A system of the stencil's form with its number of cells left open: its entries in
    order (a plain component, or an array's prefix), each array's template with what its
    instances are made from, and the connections, an array's elements and ranges by
    position (:class:`Element`, :class:`Range`)."""

    name: str
    order: tuple
    templates: dict
    connections: tuple
    array_connections: tuple


def shape_of(system: System) -> tuple[Shape, int] | None:
    """``system``'s :class:`Shape` and its number of cells ``n``, if its arrays all have
    one length ``n >= MIN_CELLS``, none has an instance changed by hand, and each
    connection joins plain connectors, elements within :data:`EDGE` of an end and ranges
    that leave out at most :data:`EDGE` at either end; else None."""
    arrays = list(system._arrays.values())
    if not arrays:
        return None
    n = len(arrays[0])
    if n < MIN_CELLS or any(len(a) != n or a._snapshot is None for a in arrays):
        return None
    if any(a._natives().size != n for a in arrays):  # an instance changed by hand
        return None

    def entry(c: Connector | ConnectorArray) -> Connector | Element | Range | None:
        if isinstance(c, ConnectorArray):
            ends = _ends(c.index, n)
            return None if ends is None else Range(c.array.prefix, c.local, *ends)
        at = element_of(c)
        if at is None:
            return c
        if EDGE <= at[1] < n - EDGE:
            return None
        index = at[1] if at[1] < EDGE else at[1] - n
        return Element(at[0].prefix, index, c.local)

    calls = [tuple(map(entry, call)) for call in system._connections]
    array_calls = [tuple(map(entry, call)) for call in system._array_connections]
    if any(None in call for call in calls + array_calls):
        return None
    order = tuple(e.prefix if e in arrays else e for e in system._order)
    templates = {a.prefix: (a.template, a._snapshot) for a in arrays}
    return Shape(system.name, order, templates, tuple(calls), tuple(array_calls)), n


def _ends(index: np.ndarray, n: int) -> tuple[int, int] | None:
    """``(a, b)`` if ``index`` is ``a, a + 1, ..., n - 1 - b`` with ``a, b <= EDGE``."""
    if not index.size:
        return None
    a, b = int(index[0]), n - 1 - int(index[-1])
    if a > EDGE or b > EDGE or index.size != n - a - b:
        return None
    return (a, b) if np.array_equal(index, np.arange(a, n - b)) else None


def built(shape: Shape, k: int) -> System:
    """The system of ``shape`` with ``k`` cells: its arrays made anew from their templates
    (:func:`.arrays.unlinked_array`), the plain components the shape's own objects, none
    of which is changed (the new system does not own them)."""
    arrays = {p: unlinked_array(p, *made, k) for p, made in shape.templates.items()}

    def placed(c: Connector | Element | Range) -> Connector | ConnectorArray:
        if isinstance(c, Range):
            return ConnectorArray(arrays[c.prefix], c.local, np.arange(c.a, k - c.b))
        if isinstance(c, Element):
            return arrays[c.prefix][c.index % k]._connectors[c.local]
        return c

    out = System(shape.name)
    out._components = {e.name: e for e in shape.order if not isinstance(e, str)}
    out._arrays = {p: arrays[p] for p in shape.templates}
    out._order = [arrays[e] if isinstance(e, str) else e for e in shape.order]
    out._connections = [tuple(map(placed, call)) for call in shape.connections]
    out._array_connections = [tuple(map(placed, call)) for call in shape.array_connections]
    for a in arrays.values():
        a._system = out
    return out
