"""The flat form: a :class:`FlatDAE` (symbol table, residual equations, events) and its
records, as :func:`acausal.flatten.flatten` makes it.

Every residual ``0 = F(x', x, z, p, t)`` remembers where it came from: a component's
equation (:class:`ComponentEquation`) or a connection set (:class:`ConnectionEquation`).
Symbols have dotted names in the symbol table (``C1.v``, ``der(C1.v)``, ``R1.R``) and in
``keys`` (the symbol's own name -> dotted name); every text made for people (origins,
dumps, :func:`displayed`) writes the dotted names. The form is a value: printable,
picklable, equal for equal systems.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from itertools import repeat
from typing import TYPE_CHECKING, Any, NamedTuple

import casadi as cs
import numpy as np

from .printing import infix
from .symbols import as_sx, column_entries, derivative_name, scalars, split_derivative
from .table import SymbolTable, Table, around_spans

if TYPE_CHECKING:
    from .block_entries import Template


def display_name(name: str, keys: Mapping[str, str]) -> str:
    """The dotted name of a form's symbol named ``name``: a component's own symbol
    (``@v<token>:p.v``) through ``keys``, keeping ``der(...)`` around it."""
    base, order = split_derivative(name)
    return derivative_name(keys.get(base, base), order)


def displayed(exprs: list[cs.SX], keys: Mapping[str, str]) -> list[cs.SX]:
    """``exprs`` with every symbol replaced by one named as people read it (for dumps and
    printing only: one substitution, one new symbol per symbol)."""
    if not exprs:
        return []
    allx = cs.vertcat(*[cs.vec(as_sx(e)) for e in exprs])
    old = cs.symvar(allx)
    if not old:
        return list(exprs)
    new = [cs.SX.sym(display_name(s.name(), keys)) for s in old]
    out = cs.substitute(allx, cs.vertcat(*old), cs.vertcat(*new))
    pieces, k = [], 0
    for e in exprs:
        e = as_sx(e)
        pieces.append(cs.reshape(out[k : k + e.numel()], e.size1(), e.size2()))
        k += e.numel()
    return pieces


#: The kinds of quantity constant between events (:attr:`Symbol.is_constant`).
CONSTANT_KINDS = frozenset({"parameter", "discrete"})


class Symbol(NamedTuple):
    """One entry of a form's symbol table (a named tuple: one is made per quantity of
    large models, and a frozen dataclass costs five times as much to make).

    ``kind``: ``"variable"``, ``"parameter"``, ``"discrete"`` or ``"derivative"`` (then
    ``base`` and ``order``); ``component``: the declaring component; ``role``:
    ``"potential"``/``"flow"`` for a connector's variable; ``start`` an expression of
    parameters (or a number), a guess unless ``fixed``; ``value`` a parameter's value;
    ``unit`` the declared unit (``""`` if none; a derivative's is ``unit(base)/s^order``).
    """

    name: str
    kind: str
    sym: cs.SX
    component: str = ""
    role: str | None = None
    start: cs.SX | float | None = None
    fixed: bool = False
    value: float | None = None
    state_priority: int = 0
    base: str = ""
    order: int = 0
    unit: str = ""

    @property
    def is_constant(self) -> bool:
        return self.kind in CONSTANT_KINDS

    def derivative(self) -> Symbol:
        """The record of ``der()`` of this one, made by the compiler (alias elimination,
        index reduction): a fresh symbol named as ``der()`` would name it, of the same
        component, one order up from the same base."""
        sym = cs.SX.sym(derivative_name(self.sym.name()))
        return Symbol(
            derivative_name(self.name),
            "derivative",
            sym,
            self.component,
            base=self.base or self.name,
            order=self.order + 1,
        )

    def __str__(self) -> str:
        return self.describe(lambda e: infix(as_sx(e)))

    def describe(self, show: Callable[[cs.SX | float], str]) -> str:
        """One line: kind, name, start (as ``show`` writes expressions), flags."""
        if self.kind == "parameter":
            return f"parameter {self.name} = {self.value:.17g}"
        start = "" if self.start is None else f" start={show(self.start)}"
        fixed = " fixed" if self.fixed else ""
        prio = f" state_priority={self.state_priority}" if self.state_priority else ""
        return f"{self.kind} {self.name}{start}{fixed}{prio}"


class ComponentEquation(NamedTuple):
    """Equation ``index`` (from 1) of component ``component``: ``expr`` is ``lhs == rhs``
    as declared, its symbols named by ``names`` (declared name -> dotted name). It is
    ``declared`` itself, or its entry ``row`` (counted down the columns) when that holds
    the equations of an array's instances (a column each, one shared matrix: no object
    per equation)."""

    component: str
    index: int
    declared: cs.SX
    names: Table
    row: int = -1

    @property
    def expr(self) -> cs.SX:
        return self.declared if self.row < 0 else self.declared[self.row]

    @property
    def origin(self) -> str:
        prefix = self.component + "."

        def local(sym: cs.SX) -> str:
            base, order = split_derivative(display_name(sym.name(), self.names))
            return derivative_name(base[len(prefix) :] if base.startswith(prefix) else base, order)

        return f"{self.component}: {infix(self.expr, local)}"


class ConnectionEquation(NamedTuple):
    """An equation generated by a connection set (connector names)."""

    connectors: tuple[str, ...]
    variable: str
    kind: str  # "potential" or "flow"
    index: int = 1

    @property
    def component(self) -> None:
        return None

    @property
    def origin(self) -> str:
        names = ", ".join(self.connectors)
        if len(self.connectors) == 1:
            return f"unconnected {names}: {names}.{self.variable} == 0"
        if self.kind == "flow":
            total = " + ".join(f"{c}.{self.variable}" for c in self.connectors)
            return f"connect({names}): {total} == 0"
        a, b = self.connectors[0], self.connectors[self.index]
        return f"connect({names}): {a}.{self.variable} == {b}.{self.variable}"


def maker(cls: type) -> Callable[[tuple], tuple]:
    """``cls._make`` of a named tuple without its length check (the caller's zip gives
    every field): ``tuple.__new__`` in C, a third of ``_make``'s cost per record. The
    forms' records (equations, symbols, blocks) are made in bulk by it: a large model has
    one per scalar."""
    return partial(tuple.__new__, cls)


class ArraySymbols(NamedTuple):
    """The records of an array's instances' quantities, instance after instance, as a
    symbol table keeps them (its rows ``first`` on; :class:`~acausal.table.SymbolTable`)
    until one is read: ``names`` their dotted names, ``components`` each instance's name,
    ``fields`` each template quantity's other fields of :class:`Symbol` (by field name, a
    value per template quantity), and ``starts`` the symbolic start values of the template
    quantities ``symbolic``, instance after instance, that replace the template's."""

    first: int
    names: list[str]
    components: list[str]
    fields: dict[str, tuple]
    symbolic: tuple[int, ...]
    starts: list[cs.SX]

    @property
    def count(self) -> int:
        """The quantities of an instance."""
        return len(self.fields["kind"])

    def chunk(self, stack: cs.SX, row: int) -> zip:
        """The names and records of the template quantity of local row ``row``, of every
        instance (their symbols: entries of the table's ``stack``), made in bulk."""
        count, f = self.count, self.fields
        j = row % count
        syms = scalars(stack[self.first + j : self.first + len(self.names) : count])
        if j in self.symbolic:
            start = self.starts[self.symbolic.index(j) :: len(self.symbolic)]
        else:
            start = repeat(f["start"][j])
        names = self.names[j::count]
        each = {name: repeat(f[name][j]) for name in f}
        fields = (
            names,
            each["kind"],
            syms,
            self.components,
            each["role"],
            start,
            each["fixed"],
            each["value"],
            each["state_priority"],
            each["base"],
            each["order"],
            each["unit"],
        )
        return zip(names, map(maker(Symbol), zip(*fields)))

    def columns(self, fields: Sequence[str], rows: np.ndarray) -> list[np.ndarray]:
        """The fields ``fields`` of the records of local rows ``rows`` (arrays of
        objects), by index arithmetic from the template's fields: row ``k count + j`` is
        instance ``k``'s template quantity ``j``."""
        n, count = len(rows), self.count
        k, j = np.divmod(rows, count)
        out = []
        for field in fields:
            if field == "name":
                out.append(np.fromiter(map(self.names.__getitem__, rows.tolist()), object, n))
            elif field == "component":
                out.append(np.fromiter(map(self.components.__getitem__, k.tolist()), object, n))
            else:
                out.append(np.fromiter(self.fields[field], object, count)[j])
            if field == "start" and self.symbolic:
                self._symbolic_starts(out[-1], k, j)
        return out

    def _symbolic_starts(self, out: np.ndarray, k: np.ndarray, j: np.ndarray) -> None:
        """Write into ``out`` the symbolic start values of instances ``k``' template
        quantities ``j`` (where ``j`` is one with a symbolic start)."""
        place = np.full(self.count, -1)
        place[list(self.symbolic)] = np.arange(len(self.symbolic))
        on = np.flatnonzero(place[j] >= 0)
        at = k[on] * len(self.symbolic) + place[j[on]]
        out[on] = np.fromiter(map(self.starts.__getitem__, at.tolist()), object, on.size)


class Entries(NamedTuple):
    """Variables held by a run of equations, row by row: row ``k`` holds
    ``names[indptr[k]:indptr[k + 1]]`` (dotted names), a sparse matrix's row pointers;
    ``rows``: their rows of the symbol table, when known."""

    indptr: np.ndarray
    names: tuple[str, ...]
    rows: np.ndarray | None = None


class FlatEquation(NamedTuple):
    """A residual ``0 = residual`` and its source (these records are named tuples: a large
    model makes tens of thousands of them)."""

    residual: cs.SX
    source: ComponentEquation | ConnectionEquation

    @property
    def origin(self) -> str:
        return self.source.origin

    @property
    def component(self) -> str | None:
        return self.source.component


class Deferred:
    """A value made by ``make()`` when first read (:attr:`value`), once (``make`` None:
    ``value`` is given). It pickles as that value, so nothing ``make`` holds is pickled."""

    __slots__ = ("_make", "_value")

    def __init__(self, make: Callable[[], Any] | None, value: Any = None) -> None:
        self._make, self._value = make, value

    @property
    def made(self) -> bool:
        """Whether :attr:`value` is made already."""
        return self._make is None

    @property
    def value(self) -> Any:
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value

    def __reduce__(self) -> tuple:
        return (Deferred, (None, self.value))


class EquationBlock(NamedTuple):
    """An array's instances' equations as :class:`FlatEquations` keeps them: rows
    ``first`` on, instance after instance, ``len(indices)`` an instance (its template's
    equations' ``indices``), each instance's name in ``components``; ``exprs`` the
    declared equations of every instance (a column each, made when a record is first
    made) and ``names`` the flat form's declared names (:class:`ComponentEquation`)."""

    first: int
    components: list[str]
    indices: list[int]
    exprs: Deferred
    names: Table


class Records(Sequence):
    """A sequence of records made only when read, each once, in bulk: a subclass's
    :meth:`_make` makes the records of positions ``rows`` (distinct, ascending) at once."""

    def __init__(self, size: int) -> None:
        self._made: list = [None] * size
        self._known = np.zeros(size, dtype=bool)

    def __len__(self) -> int:
        return len(self._made)

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            return self.take(np.arange(len(self))[at])
        at = range(len(self))[at]  # (an IndexError past the end, as a list's)
        record = self._made[at]
        return record if record is not None else self.take([at])[0]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.take(np.arange(len(self))))

    def take(self, rows: Sequence[int] | np.ndarray) -> list:
        """The records of positions ``rows``, those not made yet made at once."""
        rows = np.asarray(rows, dtype=np.int64)
        missing = np.unique(rows[~self._known[rows]])
        if missing.size:
            for r, record in zip(missing.tolist(), self._make(missing)):
                self._made[r] = record
            self._known[missing] = True
        return list(map(self._made.__getitem__, rows.tolist()))

    def _make(self, rows: np.ndarray) -> Iterable[Any]:
        raise NotImplementedError


class FlatEquations(Records):
    """The flat form's equations (:class:`FlatEquation` records), in order: the records
    given, and the arrays' instances' rows (``blocks``) whose records are made only when
    read, from the stacked ``residuals`` and the blocks' fields."""

    def __init__(self, given: list, residuals: cs.SX, blocks: Sequence[EquationBlock]) -> None:
        sizes = [len(b.components) * len(b.indices) for b in blocks]
        super().__init__(len(given) + sum(sizes))
        # (the records given fill the rows between the blocks)
        self._made = around_spans(given, [(b.first, [None] * n) for b, n in zip(blocks, sizes)])
        self._known[:] = True
        for b, n in zip(blocks, sizes):
            self._known[b.first : b.first + n] = False
        self._residuals = residuals
        self._blocks = tuple(blocks)

    def _make(self, rows: np.ndarray) -> Iterable[FlatEquation]:
        """The records of the blocks' rows ``rows``: their residuals by one indexing of the
        stacked column, their sources block by block."""
        residuals = scalars(column_entries(self._residuals, rows.tolist()))
        return map(maker(FlatEquation), zip(residuals, self._sources(rows)))

    def _sources(self, rows: np.ndarray) -> Iterator[ComponentEquation]:
        """The sources of the blocks' rows ``rows`` (ascending), made in bulk: instance
        ``k``'s template equation ``j`` is row ``first + k m + j`` of its block (``m``
        equations an instance)."""
        firsts = np.array([b.first for b in self._blocks], dtype=np.int64)
        owner = np.searchsorted(firsts, rows, side="right") - 1
        for which in np.unique(owner).tolist():
            b = self._blocks[which]
            local = rows[owner == which] - b.first
            k, j = np.divmod(local, len(b.indices))
            fields = (
                map(b.components.__getitem__, k.tolist()),
                map(b.indices.__getitem__, j.tolist()),
                repeat(b.exprs.value),
                repeat(b.names),
                local.tolist(),
            )
            yield from map(maker(ComponentEquation), zip(*fields))


@dataclass(frozen=True, eq=False)
class FlatEvent:
    """Crossing functions of component ``owner`` and the updates (target name, new value);
    for a relation, the name of the 0/1 mode its one crossing drives."""

    owner: str
    crossings: tuple[cs.SX, ...]
    updates: tuple[tuple[str, cs.SX], ...]
    relation: str | None = None


@dataclass(frozen=True, eq=False)
class FlatDAE:
    """The flat model: symbol table, residual equations, and names for people.

    ``symbols`` holds the variables, parameters, discrete modes and the derivatives the
    equations use; ``aliases`` the extra names of exposed connectors' variables.
    """

    name: str
    t: cs.SX
    symbols: SymbolTable
    variables: tuple[str, ...]
    parameters: tuple[str, ...]
    discretes: tuple[str, ...]
    equations: FlatEquations
    residuals: cs.SX  # the equations' residuals stacked
    aliases: Table
    keys: Table  # a component symbol's own name (``@v<token>:p.v``) -> dotted name
    unconnected: tuple[str, ...] = ()
    events: tuple[FlatEvent, ...] = ()
    # the variables the connection equations (the last rows) hold: known when they are
    # made, so no stage has to find them in the expressions
    connection_entries: Entries = Entries(np.zeros(1, dtype=np.int64), ())
    # whether an expression calls a CasADi function (a sampled signal's interpolant)
    calls_functions: bool = False
    # (variable, low, high, what): where components say their models hold
    # (Component.valid_ranges); a failed simulation reports the variables outside theirs
    ranges: tuple[tuple[str, float, float, str], ...] = ()
    # how many of the equations just before the connection rows are arrays' instances':
    # each holds at most its template's own symbols and time, so no row of them is long;
    # and the variables those rows hold, when flatten knows them from the templates
    array_rows: int = 0
    array_entries: Entries | None = None
    # with ``array_entries``, the arrays' templates, block after block: each instance's
    # rows are its template's residuals in its own symbols
    array_templates: tuple[Template, ...] = ()

    def sym(self, name: str) -> cs.SX:
        return self.symbols[name].sym

    @cached_property
    def kind_rows(self) -> dict[str, np.ndarray]:
        """The rows of ``symbols`` (of its ``stack``) of ``variables``, ``parameters`` and
        ``discretes``, by kind: flatten lists each kind in the table's order, so they are
        its rows of that kind (:meth:`.SymbolTable.rows_where`; no name looked up)."""
        kinds = ("variable", "parameter", "discrete")
        rows = dict(zip(kinds, self.symbols.rows_where("kind", kinds)))
        counts = (len(self.variables), len(self.parameters), len(self.discretes))
        if tuple(map(len, rows.values())) != counts:
            raise ValueError("the symbol table's kinds differ from the flat form's lists")
        return rows

    def display(self, expr: cs.SX | float) -> str:
        """An expression of this form's symbols as text, in dotted names."""
        return infix(as_sx(expr), lambda sym: display_name(sym.name(), self.keys))

    @property
    def parameter_values(self) -> dict[str, float]:
        (values,) = self.symbols.columns(["value"], rows=self.kind_rows["parameter"])
        return dict(zip(self.parameters, values.tolist()))

    def __str__(self) -> str:
        return self.text()

    def text(self, values: bool = True) -> str:
        """The dump; ``values=False`` leaves out the parameters' values (a Model prints its
        own defaults)."""
        lines = [
            f"FlatDAE {self.name}: {len(self.variables)} variables, "
            f"{len(self.parameters)} parameters, {len(self.equations)} equations"
        ]
        if values:
            lines += [f"  {self.symbols[n].describe(self.display)}" for n in self.parameters]
        else:
            lines += [f"  parameter {n}" for n in self.parameters]
        lines += [f"  {self.symbols[n].describe(self.display)}" for n in self.variables]
        lines += [f"  {self.symbols[n].describe(self.display)}" for n in self.discretes]
        lines += [f"  alias {a} = {n}" for a, n in self.aliases.items()]
        lines += [f"  {e.origin}" for e in self.equations]
        for ev in self.events:
            cross = ", ".join(self.display(c) for c in ev.crossings)
            if ev.relation is not None:
                lines.append(f"  relation {ev.relation} = ({cross} > 0), with memory")
                continue
            ups = ", ".join(f"{n} := {self.display(v)}" for n, v in ev.updates)
            lines.append(f"  event of {ev.owner}: when {cross} crosses 0: {ups}")
        lines += [f"  unconnected {c}" for c in self.unconnected]
        return "\n".join(lines)
