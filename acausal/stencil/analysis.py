"""A small model analysed (:class:`Small`: each cell's rows as a function of its window,
compared instruction by instruction; :class:`Plain`: the plain components' rows and the
flows summed over every cell) and two of them checked to be one stencil (:func:`agree`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import casadi as cs
import numpy as np

from ..flat import ConnectionEquation
from ..model import Model
from ..system import System
from .cells import Cells, Key, Plan, flat_names, grown, segments


class Unfit(Exception):
    """The system has not the stencil's form after all (the full pipeline compiles it)."""


class TooFew(Unfit):
    """The small model's cells reach too far for its size: a larger one may do."""


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
        self.starts = [model.start(c) for c in model.ir.states]
        self.rows = [self._rows(c) for c in range(k)]
        self.meta = [self._meta(c) for c in range(k)]
        self.cell_of = self._cell_of()
        self.w = self._width()
        self.functions = [self._function(c) for c in range(k)]
        self.sigs = [(_signature(f), m) for f, m in zip(self.functions, self.meta)]
        self.plan = self._plan(self.sigs)

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
        w = 0
        for c, rows in enumerate(self.rows):
            held = [self.cell_of.get(s.element_hash(), c) for s in cs.symvar(rows)]
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

    def _function(self, c: int) -> cs.Function:
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
            raise TooFew("too few interior cells in the small model")
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
        cell_of, model = small.cell_of, small.model
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
        self.signature = (_signature(self.function), self.meta)

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
    flows = {}  # a connector's flow -> the other flows of its set (the flat form's sums)
    for eq in small.model.flat.equations:
        src = eq.source
        if isinstance(src, ConnectionEquation) and src.kind == "flow":
            members = [f"{c}.{src.variable}" for c in src.connectors]
            flows.update((m, [o for o in members if o != m]) for m in members)
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
        ends = small.plan.target  # (None: an interior cell)
        for key, cs_ in runs.items():
            run = cs_ == list(range(cs_[0], cs_[-1] + 1))
            if not run or ends(cs_[0], small.k) is None or ends(cs_[-1], small.k) is None:
                raise Unfit(f"{name}: the elements joined are not a run from end to end")
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
    if plain_a.signature != plain_b.signature or _runs(a, plain_a, far) != _runs(b, plain_b, far):
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
