"""The stencil compile: a large array model's DAE replicated from two small ones.

A system whose arrays (:meth:`Component.array <acausal.Component.array>`) all have one
length ``n`` and whose connections join them element by element with shifts (``rs.n[:-1]``
to ``rs.p[1:]``), plain connectors to every element, or single elements near an end
(``rs.p[0]``, ``ms.flange_b[-1]``), is a chain of *cells*: cell ``c`` holds instance ``c``
of every array. The structural pipeline treats every interior cell alike, so the
semi-explicit DAE it gives is a stencil: the rates and named outputs of cell ``c`` are one
function ``F(x_{c-w..c+w}, p_{c-w..c+w}, x_g, p_g, t)`` of the states and parameters of the
cells around it and of the plain components' (``g``), for ``H <= c < n - T``; the first
``H`` and the last ``T`` cells have functions of their own.

Here the system is shrunk to ``K`` and ``K + 1`` cells (the arrays' first instances, the
connections' index ranges and end elements moved with the end they belong to) and both are
compiled by the full pipeline (:func:`acausal.model.compile_full`). Each cell's rows (its states'
rates and start values, its names' outputs) become a function of its window, compared
instruction by instruction: the interior ones must all be one function, in both small
models, and the end cells and the plain components' rows the same in both. The orders of
the states, parameters and names (runs of cells, each cell's names in one order) must be
those the ``K`` model's order gives at ``K + 1``. Then the model at ``n`` is the interior
function mapped over ``n - H - T`` cells (CasADi ``Function.map``, called on symbols: the
same kind of expression graph the full pipeline gives), the end cells' functions at their
places, and the plain components' rows; a plain connector joined to every element (a
ground, a wall) has its flow from Kirchhoff's law, the sum of the elements' flows, checked
against the small model's. Anything else - a block of equations spanning all cells (a
ladder solved as one tridiagonal system), events, Newton unknowns, a state choice made at
run time, an instance changed by hand, a 2-D grid - falls back to the full pipeline.

The model returned (:class:`StencilModel`) simulates from that DAE; its stage forms
(``flat``, ``reduced``, ``ir``, the BLT, :meth:`~acausal.Model.dump`) are the full
pipeline's, made when first read from a copy of the small system grown back to ``n``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from typing import NamedTuple

import casadi as cs
import numpy as np

from .arrays import ComponentArray, ConnectorArray, element_of, grown_array
from .connectors import Connector
from .errors import ModelError
from .flat import FlatDAE
from .flatten import flatten
from .model import Model, assemble, compile_full
from .pickling import detached_copy
from .structure.alias import Reduced
from .structure.blt import Block
from .structure.causalize import SemiExplicit
from .structure.index import IndexReduced
from .structure.starts import FixedStart, InitialStarts, Start
from .symbols import symbols_around, vstack
from .system import System
from .table import Table

#: cells of the first small model (the second has one more)
SMALL = 8
#: how far from an end an element may be connected on its own (``rs.p[0]``, ``[-1]``)
EDGE = 2
#: the fewest cells compiled by the stencil (below, the full pipeline is as fast)
MIN_CELLS = 64

Key = tuple[str, str, str]  # a name of cell c is key[0] + key[1] + str(c + 1) + key[2]


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
    order (a plain component, or an array's prefix), the arrays' templates and the
    connections, an array's elements and ranges by position (:class:`Element`,
    :class:`Range`)."""

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
    if n < MIN_CELLS or any(len(a) != n or a._layout is None for a in arrays):
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
    templates = {a.prefix: a.template for a in arrays}
    return Shape(system.name, order, templates, tuple(calls), tuple(array_calls)), n


def _ends(index: np.ndarray, n: int) -> tuple[int, int] | None:
    """``(a, b)`` if ``index`` is ``a, a + 1, ..., n - 1 - b`` with ``a, b <= EDGE``."""
    if not index.size:
        return None
    a, b = int(index[0]), n - 1 - int(index[-1])
    if a > EDGE or b > EDGE or index.size != n - a - b:
        return None
    return (a, b) if np.array_equal(index, np.arange(a, n - b)) else None


def built(shape: Shape, arrays: dict[str, ComponentArray]) -> System:
    """The system of ``shape`` with the ``arrays`` given (all of one length ``k``, by
    prefix): the plain components are the shape's own objects, none of which is changed
    (the new system does not own them)."""
    k = len(next(iter(arrays.values())))

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


class Cells:
    """A small model's names split into cells: ``split(name)`` is ``(c, key)`` for a name
    of instance ``c`` (from 0) of an array, None for a plain component's."""

    def __init__(self, prefixes: Sequence[str], k: int) -> None:
        alternatives = "|".join(map(re.escape, sorted(prefixes, key=len, reverse=True)))
        self._pattern = re.compile(rf"^((?:der\()*)({alternatives})([1-9][0-9]*)(\..*)$")
        self.k = k

    def split(self, name: str) -> tuple[int, Key] | None:
        m = self._pattern.match(name)
        if m is None or int(m[3]) > self.k:
            return None
        return int(m[3]) - 1, (m[1], m[2], m[4])


class Run(NamedTuple):
    """Consecutive names of cells ``first .. last`` (increasing), each cell's keys."""

    first: int
    last: int
    keys: dict[int, tuple[Key, ...]]


Segment = str | Run  # a plain component's name, or a run of cells


def segments(names: Sequence[str], cells: Cells) -> list[Segment]:
    """``names`` as plain names and runs of cells (a run ends where the cell decreases)."""
    out: list[Segment] = []
    run: dict[int, list[Key]] | None = None
    last = -1
    for name in names:
        got = cells.split(name)
        if got is None:
            if run is not None:
                out.append(_run(run))
                run = None
            out.append(name)
            continue
        c, key = got
        if run is None or c < last:
            if run is not None:
                out.append(_run(run))
            run = {}
        run.setdefault(c, []).append(key)
        last = c
    if run is not None:
        out.append(_run(run))
    return out


def _run(keys: dict[int, list[Key]]) -> Run:
    return Run(min(keys), max(keys), {c: tuple(v) for c, v in keys.items()})


@dataclass(frozen=True)
class Plan:
    """Where the small model's cells go at ``n`` cells: the first ``head`` are their own,
    the last ``tail`` are the small model's last ones, the others are cell ``rep``."""

    k: int
    head: int
    tail: int
    rep: int

    def source(self, c: int, n: int) -> int:
        """The small model's cell that cell ``c`` of ``n`` is."""
        if c < self.head:
            return c
        return c - n + self.k if c >= n - self.tail else self.rep

    def target(self, c: int, n: int) -> int | None:
        """The cell of ``n`` that an end cell ``c`` of the small model is (None: interior)."""
        if c < self.head:
            return c
        return c - self.k + n if c >= self.k - self.tail else None


Part = str | tuple[np.ndarray, tuple[Key, ...]]  # a plain name, or cells' keys, cell-major


def grown(segs: list[Segment], plan: Plan, n: int) -> list[Part] | None:
    """The entries of ``segs`` at ``n`` cells: a plain component's name, or an array of
    cells each with the same keys (every key of every cell, cell after cell); None where
    a run starts or ends inside the interior or its interior cells differ."""
    out: list[Part] = []
    inner = range(plan.head, plan.k - plan.tail)
    for seg in segs:
        if isinstance(seg, str):
            out.append(seg)
            continue
        first, last = plan.target(seg.first, n), plan.target(seg.last, n)
        rep = {seg.keys.get(c, ()) for c in inner}
        if first is None or last is None or len(rep) > 1:
            return None
        rep = rep.pop()
        for c in range(first, min(last + 1, plan.head)):
            out.append((np.array([c]), seg.keys.get(c, ())))
        if first < n - plan.tail and last >= plan.head:
            out.append((np.arange(max(first, plan.head), min(last + 1, n - plan.tail)), rep))
        for c in range(max(first, n - plan.tail), last + 1):
            out.append((np.array([c]), seg.keys.get(c - n + plan.k, ())))
    return [p for p in out if isinstance(p, str) or (p[0].size and p[1])]


def flat_names(parts: list[Part]) -> list[str]:
    """The names of ``parts`` (:func:`grown`), in order."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        cells, keys = part
        numbers = (cells + 1).astype(str).tolist()
        out += [f"{a}{p}{c}{b}" for c in numbers for a, p, b in keys]
    return out


class Unfit(Exception):
    """The system has not the stencil's form after all (the full pipeline compiles it)."""


def _signature(fun: cs.Function) -> tuple:
    """``fun``'s algorithm, instruction by instruction (operation, operands, result, and
    the value of a constant): equal for two functions that compute alike."""
    ops = []
    for k in range(fun.n_instructions()):
        op = fun.instruction_id(k)
        value = fun.instruction_constant(k) if op == cs.OP_CONST else 0.0
        ops.append((op, tuple(fun.instruction_input(k)), tuple(fun.instruction_output(k)), value))
    return tuple(ops)


class _Split(NamedTuple):
    """Entries of a small model (states, parameters, names) by cell: each cell's keys and
    positions, and the plain components' names and positions."""

    keys: dict[int, list[Key]]
    at: dict[int, list[int]]
    plain: list[str]
    plain_at: list[int]


def _split(names: Sequence[str], cells: Cells) -> _Split:
    keys: dict[int, list[Key]] = {c: [] for c in range(cells.k)}
    at: dict[int, list[int]] = {c: [] for c in range(cells.k)}
    plain, plain_at = [], []
    for j, name in enumerate(names):
        got = cells.split(name)
        if got is None:
            plain.append(name)
            plain_at.append(j)
        else:
            keys[got[0]].append(got[1])
            at[got[0]].append(j)
    return _Split(keys, at, plain, plain_at)


def _common(split: _Split, what: str) -> list[Key]:
    """The keys every cell has, in one order (else :class:`Unfit`)."""
    first = split.keys[0]
    if any(split.keys[c] != first for c in split.keys):
        raise Unfit(f"the cells' {what} differ")
    return first


class Small:
    """A small model of ``k`` cells analysed (the module docstring): each cell's rows
    (its states' rates and start values, its names' outputs) as a function of its window
    of ``2 w + 1`` cells, their signatures, where the interior begins and ends
    (:class:`Plan`), the plain components' rows as a function of the end cells, and
    the flows of plain connectors joined to every element as sums."""

    def __init__(self, model: Model, system: System, k: int) -> None:
        dae = model.dae
        if dae.z.numel() or dae.modes or dae.zero.numel() or model.ir.alternatives:
            raise Unfit("Newton unknowns, events or a state choice at run time")
        self.model, self.system, self.k = model, system, k
        self.cells = Cells(list(system._arrays), k)
        self.xs = _split(model.x_names, self.cells)
        self.ps = _split(list(model.defaults), self.cells)
        self.ys = _split(model.names, self.cells)
        self.state_keys = _common(self.xs, "states")
        self.param_keys = _common(self.ps, "parameters")
        self.x, self.p = cs.vertsplit(dae.x), cs.vertsplit(model.p)
        starts = [model.start(c) for c in model.ir.states]
        self.starts = starts
        self.rows = [self._rows(c) for c in range(k)]
        self.meta = [self._meta(c) for c in range(k)]
        self.w = self._width()
        sigs = [(_signature(self.function(c)), self.meta[c]) for c in range(k)]
        self.plan = self._plan(sigs)
        self.sigs = sigs

    # -- each cell's rows -----------------------------------------------------------------
    def _rows(self, c: int) -> cs.SX:
        """Cell ``c``'s rates, start values (0 where none) and outputs."""
        at = self.xs.at[c]
        values = [self.starts[j].value if self.starts[j] is not None else 0.0 for j in at]
        parts = [self.model.dae.ode[at], cs.vertcat(cs.SX(0, 1), *values)]
        return cs.vertcat(*parts, self.model.outputs[self.ys.at[c]])

    def _meta(self, c: int) -> tuple:
        """What cell ``c``'s rows are besides their expressions: its names' keys, and of
        each state's start whether it is fixed and where it came from (a cell by its
        offset, or a plain name)."""
        out = []
        for j in self.xs.at[c]:
            s = self.starts[j]
            if s is None:
                out.append(None)
                continue
            got = self.cells.split(s.source)
            out.append((s.fixed, s.source if got is None else (got[0] - c, got[1])))
        return tuple(self.ys.keys[c]), tuple(out)

    def _cell_of(self) -> dict[int, int]:
        """The cell of each state and parameter symbol (by hash)."""
        found = {}
        for split, syms in ((self.xs, self.x), (self.ps, self.p)):
            for c, at in split.at.items():
                found.update((syms[j].element_hash(), c) for j in at)
        return found

    def _width(self) -> int:
        """The farthest cell any cell's rows reach."""
        cell_of, w = self._cell_of(), 0
        for c, rows in enumerate(self.rows):
            held = [cell_of.get(s.element_hash(), c) for s in cs.symvar(rows)]
            w = max([w, *(abs(d - c) for d in held)])
        return w

    def window(self, c: int) -> tuple[cs.SX, cs.SX]:
        """The states and parameters of cells ``c - w .. c + w`` stacked (fresh symbols
        for cells outside the model)."""
        xs, ps = [], []
        for d in range(c - self.w, c + self.w + 1):
            inside = 0 <= d < self.k
            xs += [self.x[j] for j in self.xs.at[d]] if inside else _fresh(self.state_keys)
            ps += [self.p[j] for j in self.ps.at[d]] if inside else _fresh(self.param_keys)
        return cs.vertcat(cs.SX(0, 1), *xs), cs.vertcat(cs.SX(0, 1), *ps)

    def plain(self) -> tuple[cs.SX, cs.SX]:
        """The plain components' states and parameters."""
        xg = [self.x[j] for j in self.xs.plain_at]
        pg = [self.p[j] for j in self.ps.plain_at]
        return cs.vertcat(cs.SX(0, 1), *xg), cs.vertcat(cs.SX(0, 1), *pg)

    def function(self, c: int) -> cs.Function:
        """Cell ``c``'s rows as a function of (window states, window parameters, plain
        states, plain parameters, time); :class:`Unfit` if they hold anything else."""
        try:
            return cs.Function(
                "cell", [*self.window(c), *self.plain(), self.model.t], [self.rows[c]]
            )
        except RuntimeError as exc:
            raise Unfit(f"cell {c} reaches beyond its window") from exc

    def _plan(self, sigs: list) -> Plan:
        """The interior: the cells around the middle one whose signature is its."""
        rep = self.k // 2
        head = rep
        while head > 0 and sigs[head - 1] == sigs[rep]:
            head -= 1
        last = rep
        while last < self.k - 1 and sigs[last + 1] == sigs[rep]:
            last += 1
        plan = Plan(self.k, max(head, self.w), max(self.k - 1 - last, self.w), rep)
        if plan.head + plan.tail + 2 * self.w + 1 > self.k:
            raise Unfit("too few interior cells in the small model")
        return plan


def _fresh(keys: Sequence[Key]) -> list[cs.SX]:
    return cs.vertsplit(cs.SX.sym("outside", len(keys))) if keys else []


class Sum(NamedTuple):
    """A plain connector's flow that Kirchhoff's law gives as minus the sum of the other
    flows of its connection set: theirs by plain name, and by key over runs of cells."""

    name: str
    plain: tuple[str, ...]
    cells: tuple[tuple[Key, int, int], ...]  # (key, first cell, last cell)


class Plain:
    """The plain components' rows of an analysed small model: their states' rates and
    start values, the outputs that depend on the end cells only and the breakpoints, as
    one function of the end cells' states and parameters; the other outputs as sums."""

    def __init__(self, small: Small) -> None:
        self.small = small
        plan, k, w = small.plan, small.k, small.w
        self.region = [*range(plan.head + w), *range(k - plan.tail - w, k)]
        inner = set(range(plan.head + w, k - plan.tail - w))
        cell_of, model = small._cell_of(), small.model
        at = small.ys.plain_at
        outputs = model.outputs[at]
        reach = [
            {cell_of.get(s.element_hash(), -1) for s in cs.symvar(e)} & inner
            for e in cs.vertsplit(outputs)
        ]
        self.edge = [j for j, r in zip(at, reach) if not r]
        summed = [model.names[j] for j, r in zip(at, reach) if r]
        self.sums = tuple(_sums(small, summed))
        xat = small.xs.plain_at
        values = [small.starts[j].value if small.starts[j] is not None else 0.0 for j in xat]
        self.rows = cs.vertcat(
            model.dae.ode[xat],
            cs.vertcat(cs.SX(0, 1), *values),
            model.outputs[self.edge],
            model.breakpoints,
        )
        self.meta = (
            tuple(small.ys.plain),
            tuple(None if small.starts[j] is None else small.starts[j].fixed for j in xat),
            model.breakpoints.numel(),
        )
        try:
            self.function = cs.Function(
                "plain", [*self.inputs(), *small.plain(), model.t], [self.rows]
            )
        except RuntimeError as exc:
            raise Unfit("a plain component's variable depends on the interior") from exc
        self.signature = (_signature(self.function), self.meta, self.sums)

    def inputs(self) -> tuple[cs.SX, cs.SX]:
        """The end cells' states and parameters, stacked."""
        s = self.small
        xs = [s.x[j] for c in self.region for j in s.xs.at[c]]
        ps = [s.p[j] for c in self.region for j in s.ps.at[c]]
        return cs.vertcat(cs.SX(0, 1), *xs), cs.vertcat(cs.SX(0, 1), *ps)


def _sums(small: Small, names: list[str]) -> list[Sum]:
    """Each of ``names`` as :class:`Sum`, checked at two random points against the small
    model's own expression; :class:`Unfit` where one is no such flow."""
    if not names:
        return []
    flows = {}
    for members in small.system.connection_sets():
        for c in members:
            for v in c.ctype.flows:
                flows[f"{c.name}.{v}"] = [f"{o.name}.{v}" for o in members if o is not c]
    model, position = small.model, {n: j for j, n in enumerate(small.model.names)}
    out = []
    for name in names:
        others = flows.get(name)
        if others is None or any(o not in position for o in others):
            raise Unfit(f"{name} depends on the interior and is no connection's flow")
        plain, runs = [], {}
        for o in others:
            got = small.cells.split(o)
            if got is None:
                plain.append(o)
            else:
                runs.setdefault(got[1], []).append(got[0])
        cells = []
        for key, cs_ in runs.items():
            if cs_ != list(range(cs_[0], cs_[-1] + 1)):
                raise Unfit(f"{name}: the elements joined are not a run of cells")
            cells.append((key, cs_[0], cs_[-1]))
        mine = model.outputs[position[name]]
        theirs = -cs.sum1(model.outputs[[position[o] for o in others]])
        _check_equal(model, mine, theirs, name)
        out.append(Sum(name, tuple(plain), tuple(cells)))
    return out


def _check_equal(model: Model, a: cs.SX, b: cs.SX, name: str) -> None:
    """``a == b`` at two random points of (states, parameters, time) (relative 1e-9)."""
    ins = [model.dae.x, model.p, model.t]
    fun = cs.Function("check", ins, [a - b, a])
    rng = np.random.default_rng(0)
    for _ in range(2):
        diff, value = fun(*(rng.uniform(0.5, 1.5, v.numel()) for v in ins))
        if abs(float(diff)) > 1e-9 * (1 + abs(float(value))):
            raise Unfit(f"{name} is not the sum of its connection's other flows")


def agree(a: Small, b: Small) -> Plain:
    """Check that the small models ``a`` (``k`` cells) and ``b`` (``k + 1``) are one
    stencil (the module docstring; :class:`Unfit` if not); ``a``'s plain rows."""
    pa, pb = a.plan, b.plan
    if (a.w, pa.head, pa.tail) != (b.w, pb.head, pb.tail):
        raise Unfit("the small models' ends differ")
    if a.state_keys != b.state_keys or a.param_keys != b.param_keys:
        raise Unfit("the small models' cells differ")
    ends = [(c, c) for c in range(pa.head)]
    ends += [(a.k - pa.tail + j, b.k - pa.tail + j) for j in range(pa.tail)]
    if a.sigs[pa.rep] != b.sigs[pb.rep] or any(a.sigs[i] != b.sigs[j] for i, j in ends):
        raise Unfit("the small models' cells compute differently")
    plain_a, plain_b = Plain(a), Plain(b)
    far = 10 * b.k  # the sums' runs compared at a size beyond both
    if plain_a.signature[:2] != plain_b.signature[:2] or _runs(a, plain_a, far) != _runs(
        b, plain_b, far
    ):
        raise Unfit("the plain components' rows differ")
    for names_a, names_b in (
        (a.model.x_names, b.model.x_names),
        (list(a.model.defaults), list(b.model.defaults)),
        (a.model.names, b.model.names),
    ):
        parts = grown(segments(names_a, a.cells), pa, b.k)
        if parts is None or flat_names(parts) != list(names_b):
            raise Unfit("the small models' orders differ")
    return plain_a


def _runs(small: Small, plain: Plain, n: int) -> list:
    """The sums' runs of cells placed at ``n`` cells."""
    at = small.plan.target
    return [
        (s.name, s.plain, [(key, at(f, n), at(last, n)) for key, f, last in s.cells])
        for s in plain.sums
    ]


class Pieces(NamedTuple):
    """The DAE at ``n`` cells: states, parameters (names, values) and names with their
    symbols and expressions, and each state's start (value, fixed, source; None: none)."""

    x: cs.SX
    x_names: list[str]
    ode: cs.SX
    p: cs.SX
    defaults: dict[str, float]
    names: list[str]
    outputs: cs.SX
    breakpoints: cs.SX
    start_values: cs.SX
    starts: list[tuple[bool, str] | None]


def _symbols(parts: list[Part]) -> cs.SX:
    """New symbols named as ``parts``' names (:func:`flat_names`), made in bulk."""
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(cs.SX.sym(part))
            continue
        cells, keys = part
        around = [(a + p, b) for a, p, b in keys]
        numbers = (cells + 1).astype(str)
        width = np.char.str_len(numbers)
        for size in np.unique(width):  # (the cells increase: each width a run)
            pieces.append(symbols_around(around, numbers[width == size].tolist()))
    return vstack(pieces) if pieces else cs.SX(0, 1)


def _places(parts: list[Part], keys: Sequence[Key], n: int) -> tuple[np.ndarray, dict[str, int]]:
    """Where each of ``keys`` of each cell is among ``parts``' entries (a row per key, a
    column per cell; -1: nowhere), and where each plain name is."""
    index = {key: i for i, key in enumerate(keys)}
    out = np.full((len(keys), n), -1, dtype=np.int64)
    plain, at = {}, 0
    for part in parts:
        if isinstance(part, str):
            plain[part] = at
            at += 1
            continue
        cells, ks = part
        for i, key in enumerate(ks):
            if key in index:
                out[index[key], cells] = at + np.arange(cells.size) * len(ks) + i
        at += cells.size * len(ks)
    return out, plain


class _Pool:
    """Every cell's rows at ``n`` cells, then the plain rows and the sums, as one column:
    where a cell's row of a kind and key is."""

    def __init__(self, small: Small, n: int) -> None:
        self.small, self.n = small, n
        plan, ns = small.plan, len(small.state_keys)
        self.size = small.rows[plan.rep].numel()
        heads = [small.rows[c].numel() for c in range(plan.head)]
        tails = [small.rows[small.k - plan.tail + j].numel() for j in range(plan.tail)]
        inner = n - plan.head - plan.tail
        self.head_at = np.cumsum([0, *heads])[:-1]
        self.inner_at = sum(heads)
        tail0 = self.inner_at + inner * self.size
        self.tail_at = tail0 + np.cumsum([0, *tails])[:-1]
        self.plain_at = tail0 + sum(tails)
        self.ns = ns

    def offset(self, s: int, kind: str, key: Key) -> int:
        """Row of ``key`` of ``kind`` (ode, start, out) in small cell ``s``'s rows."""
        small = self.small
        if kind == "out":
            return 2 * self.ns + small.ys.keys[s].index(key)
        return small.state_keys.index(key) + (self.ns if kind == "start" else 0)

    def rows(self, cells: np.ndarray, kind: str, key: Key) -> np.ndarray:
        """Where ``key``'s row of ``kind`` of each of ``cells`` is."""
        plan, n = self.small.plan, self.n
        out = np.empty(cells.size, dtype=np.int64)
        inner = (cells >= plan.head) & (cells < n - plan.tail)
        off = self.offset(plan.rep, kind, key) if inner.any() else 0
        out[inner] = self.inner_at + (cells[inner] - plan.head) * self.size + off
        for j in np.flatnonzero(~inner).tolist():
            c = int(cells[j])
            s = plan.source(c, n)
            base = self.head_at[c] if c < plan.head else self.tail_at[c - (n - plan.tail)]
            out[j] = base + self.offset(s, kind, key)
        return out

    def entries(self, parts: list[Part], kind: str, plain: Callable[[str], int]) -> np.ndarray:
        """Where the rows of ``parts``' entries are (``plain``: a plain name's)."""
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(np.array([plain(part)]))
                continue
            cells, keys = part
            each = [self.rows(cells, kind, key) for key in keys]
            out.append(np.stack(each, axis=1).ravel())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def synthesize(small: Small, plain: Plain, n: int) -> Pieces:
    """The DAE at ``n`` cells from the analysed small model (see the module docstring)."""
    model, plan, w, cells = small.model, small.plan, small.w, small.cells
    xparts = grown(segments(model.x_names, cells), plan, n)
    pparts = grown(segments(list(model.defaults), cells), plan, n)
    yparts = grown(segments(model.names, cells), plan, n)
    x, p = _symbols(xparts), _symbols(pparts)
    xat, xplain = _places(xparts, small.state_keys, n)
    pat, pplain = _places(pparts, small.param_keys, n)
    xg = x[[xplain[q] for q in small.xs.plain]] if small.xs.plain else cs.SX(0, 1)
    pg = p[[pplain[q] for q in small.ps.plain]] if small.ps.plain else cs.SX(0, 1)
    rest = [xg, pg, model.t]

    def picked(cells: np.ndarray) -> list[cs.SX]:
        """The states and parameters of the windows of ``cells`` (a column each; zeros
        outside the model), by their places (one indexing each)."""
        out = []
        for at, col in zip((xat, pat), (x, p)):
            d = cells[None, :] + np.arange(-w, w + 1)[:, None]  # (offset, cell)
            places = at[:, np.clip(d, 0, n - 1)].transpose(1, 0, 2)  # (offset, key, cell)
            places = np.where(((d >= 0) & (d < n))[:, None, :], places, -1)
            flat = places.reshape(-1, cells.size).ravel(order="F")  # (offset, key) x cell
            inside = flat >= 0
            entries = col[flat[inside].tolist()]
            if not inside.all():
                full = cs.SX.zeros(flat.size)
                full[np.flatnonzero(inside).tolist()] = entries
                entries = full
            out.append(cs.reshape(entries, flat.size // cells.size, cells.size))
        return out

    pool = [small.function(c)(*picked(np.array([c])), *rest) for c in range(plan.head)]
    inner = n - plan.head - plan.tail
    shifted = picked(np.arange(plan.head, n - plan.tail))
    pool.append(cs.vec(small.function(plan.rep).map(inner)(*shifted, *rest)))
    for c in range(n - plan.tail, n):
        pool.append(small.function(c - n + small.k)(*picked(np.array([c])), *rest))
    region = [c if c < plan.head + w else c - small.k + n for c in plain.region]
    ends = [col[at[:, region].ravel(order="F").tolist()] for at, col in zip((xat, pat), (x, p))]
    pool.append(plain.function(*ends, *rest))
    where = _Pool(small, n)
    nxg, nedge = len(small.xs.plain), len(plain.edge)
    edge_at = {model.names[j]: where.plain_at + 2 * nxg + i for i, j in enumerate(plain.edge)}
    ends_at = np.cumsum([0, *(piece.numel() for piece in pool)])
    sums_at = {}
    for k, s in enumerate(plain.sums):
        terms = [edge_at[q] for q in s.plain]
        for key, first, last in s.cells:
            a, b = plan.target(first, n), plan.target(last, n)
            terms += where.rows(np.arange(a, b + 1), "out", key).tolist()
        sums_at[s.name] = int(ends_at[-1]) + k
        pool.append(-cs.sum1(_entries(pool, ends_at, np.array(terms))))
    column = vstack(pool)
    xrow = {q: where.plain_at + i for i, q in enumerate(small.xs.plain)}
    ode = column[where.entries(xparts, "ode", xrow.__getitem__).tolist()]
    starts = column[where.entries(xparts, "start", lambda q: xrow[q] + nxg).tolist()]
    outputs = column[where.entries(yparts, "out", lambda q: {**edge_at, **sums_at}[q]).tolist()]
    bp0 = where.plain_at + 2 * nxg + nedge
    breakpoints = column[list(range(bp0, bp0 + model.breakpoints.numel()))]
    return Pieces(
        x,
        flat_names(xparts),
        ode,
        p,
        _defaults(small, pparts, n),
        flat_names(yparts),
        outputs,
        breakpoints if model.breakpoints.numel() else cs.SX(0, 1),
        starts,
        _starts(small, xparts, n),
    )


def _defaults(small: Small, parts: list[Part], n: int) -> dict[str, float]:
    """The parameters' values at ``n`` cells: each that of its cell in the small model."""
    values = small.model.defaults
    names = flat_names(parts)
    out: list[float] = []
    for part in parts:
        if isinstance(part, str):
            out.append(values[part])
            continue
        cells, keys = part
        s = [small.plan.source(int(c), n) for c in cells[[0, -1]]]
        if s[0] == s[1] or cells.size == 1:
            row = [values[f"{a}{p}{s[0] + 1}{b}"] for a, p, b in keys]
            out += row * cells.size
        else:
            out += [
                values[f"{a}{p}{small.plan.source(int(c), n) + 1}{b}"]
                for c in cells
                for a, p, b in keys
            ]
    return dict(zip(names, out))


def _starts(small: Small, parts: list[Part], n: int) -> list[tuple[bool, str] | None]:
    """Each state's start at ``n`` cells: whether fixed and the variable it came from."""
    out: list[tuple[bool, str] | None] = []
    index = {key: i for i, key in enumerate(small.state_keys)}
    plain = {q: small.starts[j] for q, j in zip(small.xs.plain, small.xs.plain_at)}
    for part in parts:
        if isinstance(part, str):
            s = plain[part]
            out.append(None if s is None else (s.fixed, s.source))
            continue
        cells, keys = part
        for c in cells.tolist():
            meta = small.meta[small.plan.source(c, n)][1]
            for key in keys:
                got = meta[index[key]]
                if got is None or isinstance(got[1], str):
                    out.append(got)
                else:
                    (d, (a, p, b)) = got[1]
                    out.append((got[0], f"{a}{p}{c + d + 1}{b}"))
    return out


def _entries(pieces: list[cs.SX], ends: np.ndarray, at: np.ndarray) -> cs.SX:
    """The entries ``at`` of the pieces stacked (``ends``: where each begins; the last
    entry the total), without stacking them."""
    piece = np.searchsorted(ends, at, side="right") - 1
    parts = [pieces[k][(at[piece == k] - ends[k]).tolist()] for k in np.unique(piece).tolist()]
    return cs.vertcat(cs.SX(0, 1), *parts)


def compile_stencil(system: System) -> Model | None:
    """``system``'s model by the stencil compile, or None where the system has not the
    stencil's form (:func:`array_length`, :class:`Unfit`): then the full pipeline
    compiles it (and reports its errors)."""
    found = shape_of(system)
    if found is None:
        return None
    tic = time.perf_counter()
    shape, n = found
    arrays = {a.prefix: a for a in system._arrays.values()}
    try:
        a, b = (
            _small(built(shape, {p: x._first(k) for p, x in arrays.items()}), k)
            for k in (SMALL, SMALL + 1)
        )
        plain = agree(a, b)
    except Unfit:
        return None
    pieces = synthesize(a, plain, n)
    recipe = detached_copy(shape, system)  # (the plain components and templates, alone)
    return _model(system.name, a, pieces, recipe, n, {"stencil": time.perf_counter() - tic})


def _small(small: System, k: int) -> Small:
    """The model of the system ``small`` of ``k`` cells, analysed; :class:`Unfit` where
    the full pipeline fails on it or it warns (its errors are the full model's to
    report)."""
    try:
        flat = flatten(small)
        model = assemble(flat)
    except ModelError as exc:
        raise Unfit(str(exc)) from exc
    if flat.unconnected:
        raise Unfit("unconnected connectors")
    init = model.initial_starts
    if init.fixed_others or init.newton or init.modes:
        raise Unfit("fixed starts off the states")
    return Small(model, small, k)


def _model(name: str, small: Small, pieces: Pieces, recipe: System, n: int, timings: dict) -> Model:
    """The :class:`StencilModel` of ``pieces``."""
    out = object.__new__(StencilModel)
    values = cs.vertsplit(pieces.start_values)
    starts = tuple(
        None if s is None else Start(v, s[0], s[1]) for s, v in zip(pieces.starts, values)
    )
    fixed = tuple(FixedStart(None, k, s) for k, s in enumerate(starts) if s is not None and s.fixed)
    dae = SemiExplicit(pieces.x, cs.SX(0, 1), pieces.ode, cs.SX(0, 1), cs.SX(0, 1), ())
    out.__dict__.update(
        dae=dae,
        names=tuple(pieces.names),
        outputs=pieces.outputs,
        defaults=Table(pieces.defaults),
        breakpoints=pieces.breakpoints,
        timings=Table(timings),
        p=pieces.p,
        t=small.model.t,
        ranges=small.model.ranges,
        alternatives=(),
        initial_starts=InitialStarts(starts, (), (), fixed, ()),
        _states=tuple(pieces.x_names),
        _modes=(),
        _name=name,
        _recipe=recipe,
        _n=n,
    )
    return out


class StencilModel(Model):
    """A model the stencil compile made (the module docstring). Its DAE (``dae``: states
    and their rates, no Newton unknowns), names and outputs, parameters and their values,
    start values and breakpoints are the stencil's, equal to the full pipeline's to
    rounding (the tests compare them); what the simulations read is these alone. The
    stage forms (``flat``, ``reduced``, ``ir``, :attr:`blocks`, the BLT, the dump) are
    the full pipeline's, compiled when first read from a copy of the small system grown
    back to its ``n`` cells: the same names, symbols of their own."""

    @cached_property
    def _full(self) -> Model:
        """The full pipeline's model of this one's system (compiled when first read)."""
        shape = self._recipe
        arrays = {p: grown_array(p, t, self._n) for p, t in shape.templates.items()}
        return compile_full(built(shape, arrays))

    @property
    def flat(self) -> FlatDAE:
        return self._full.flat

    @property
    def reduced(self) -> Reduced:
        return self._full.reduced

    @property
    def ir(self) -> IndexReduced:
        return self._full.ir

    @property
    def blocks(self) -> tuple[Block, ...]:
        """The BLT blocks of the full pipeline's model (see the class docstring)."""
        return self._full.blocks

    @property
    def name(self) -> str:
        return self._name

    @property
    def n_states(self) -> int:
        return len(self._states)

    @property
    def n_modes(self) -> int:
        return 0

    @cached_property
    def _index_of(self) -> dict[str, int]:
        return dict(zip(self.names, range(len(self.names))))

    def display(self, expr: cs.SX | float) -> str:
        """An expression of this model's symbols as text (they are named by their dotted
        names)."""
        return str(expr)

    def symbol_name(self, sym: cs.SX) -> str:
        return sym.name()

    def with_parameters(self, params: Mapping[str, float]) -> Model:
        values = dict(zip(self.defaults, self.parameter_vector(params)))
        out = object.__new__(StencilModel)
        out.__dict__.update(self.__dict__)
        out.__dict__["defaults"] = Table(values)
        return out

    def __getstate__(self) -> dict:
        forms = ("flat", "reduced", "ir")  # (the full pipeline's: made again when read)
        keep = [f.name for f in fields(Model) if f.name not in forms]
        keep += ["p", "t", "ranges", "alternatives", "initial_starts"]
        keep += ["_states", "_modes", "_name", "_recipe", "_n"]
        return {k: self.__dict__[k] for k in keep}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
