"""Flatten a :class:`System` into a :class:`FlatDAE`: a symbol table and residual equations.

Every residual ``0 = F(x', x, z, p, t)`` remembers where it came from: a component's
equation, or a connection set, whose equations are

* potentials: ``x_1 = x_k`` for each further connector k of the set,
* flows: ``sum_k f_k = 0`` (a lone, unconnected connector gets ``f = 0``).

Flattening gathers the components' symbols by name (one symbol per quantity; an ``outer``
parameter becomes its ``inner``, a second ``der()`` of a variable the first) and gives each
its dotted name in the symbol table (``C1.v``, ``der(C1.v)``, ``R1.R``) and in ``keys``
(the symbol's own name -> dotted name). An array of components
(:class:`~acausal.ComponentArray`) is taken as a block, its instances' symbols and
equations from its matrices (:mod:`acausal.arrays`), its connectors numbered by
:mod:`acausal.netlist`. The expressions keep the components' symbols, so
no renaming pass costs a symbol per quantity; every text made for people (origins, dumps,
:func:`displayed`) writes the dotted names. The flat model depends on nothing of the user's
objects: a value with its own symbol table, printable and picklable, equal for equal
systems.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import chain, compress, cycle, repeat
from typing import NamedTuple

import casadi as cs
import numpy as np

from .arrays import Block
from .block_entries import Template, block_entries, block_template
from .component import Component, Equation
from .errors import EquationError, NameClashError, StructureError
from .flat import (
    CONSTANT_KINDS,
    ArraySymbols,
    ComponentEquation,
    ConnectionEquation,
    Entries,
    EquationBlock,
    FlatDAE,
    FlatEquation,
    FlatEquations,
    FlatEvent,
    Symbol,
    maker,
)
from .netlist import Netlist
from .symbols import (
    FEW_PARTS,
    Quantity,
    as_sx,
    derivative_name,
    derivative_names,
    scalars,
    split_derivative,
    time,
    vstack,
)
from .system import System
from .table import Keys, SymbolTable, Table
from .units import derivative_unit


def _bind_outers(comps: list[Component]) -> dict[Quantity, Quantity]:
    """Each outer parameter and the inner one of the same name that replaces it."""
    inners: dict[str, Quantity] = {}
    for comp in comps:
        for name, q in comp._inners.items():
            if name in inners:
                raise NameClashError(
                    f"two components provide inner {name!r}: {inners[name].name} and {q.name}; "
                    "keep one (e.g. one World per system)"
                )
            inners[name] = q
    return {q: inners[name] for comp in comps for name, q in comp._outers.items() if name in inners}


def _roles(comp: Component) -> dict[str, str]:
    """``"potential"`` or ``"flow"`` by local name (``p.v``) for the component's own
    connectors' variables."""
    out = {}
    for local, c in comp._connectors.items():
        if c.owner is comp:
            out |= {f"{local}.{v}": "potential" for v in c.ctype.potentials}
            out |= {f"{local}.{v}": "flow" for v in c.ctype.flows}
    return out


class _Unifier:
    """The components' own symbols (``@v<token>:p.v``, ``der(...)``) gathered by name: each
    name is one quantity, with one symbol (the first met) and one dotted name."""

    def __init__(
        self, comps: list[Component], blocks: list[Block], bound: dict[Quantity, Quantity]
    ) -> None:
        self.names: dict[Quantity, str] = {}  # quantity -> dotted name (prefix computed once)
        for comp in comps:
            prefix = comp.full_name + "."
            for q in comp._quantities.values():
                self.names[q] = prefix + q.local
        # a symbol's own name -> dotted name (the flat form's ``keys``, made once; the
        # arrays' found by their tokens)
        self.full = Keys(
            chain(
                ((q.key, name) for q, name in self.names.items()),
                ((q.key, self.names[inner]) for q, inner in bound.items()),
            ),
            [b.keys for b in blocks],
        )
        self.syms: dict[str, cs.SX] = {}  # dotted name -> its one symbol (arrays' apart)
        self.derivatives: list[str] = []  # dotted names of the derivatives met
        self.bases: list[tuple[str, int]] = []  # what each differentiates, how often
        self.columns: list[cs.SX] = []  # their symbols, in columns
        self.blocks = blocks
        self._elements: dict[str, cs.SX] | None = None

    def declared_symbol(self, name: str) -> cs.SX:
        """The symbol of the declared quantity of dotted name ``name``: a component's
        (``syms``) or an array instance's (gathered by name only if one is asked for)."""
        found = self.syms.get(name)
        if found is None:
            if self._elements is None:
                pairs = (zip(b.names, scalars(b.symbols)) for b in self.blocks)
                self._elements = dict(chain.from_iterable(pairs))
            found = self._elements[name]
        return found

    def derived(self, raw: str, where: str) -> tuple[str, int]:
        """The dotted name of the quantity that the derivative named ``raw`` (not a
        declared quantity's own name) differentiates, and its order."""
        base, order = split_derivative(raw)
        full = self.full.get(base)
        if full is None:
            raise EquationError(
                f"{where} uses a symbol ({raw}) of a component that is not part of this "
                "system; add that component, or use only this component's own variables"
            )
        return full, order

    def unify(
        self,
        allx: cs.SX,
        parts: list[tuple[cs.SX, Block | None, str]],
        declared: Iterable[tuple[str, cs.SX]],
        known: cs.SX,
        where: str,
    ) -> tuple[cs.SX, bool, bool]:
        """The stacked expressions ``allx`` with one symbol per dotted name: a declared
        quantity's own, else the first one met; another of that name (a second ``der()``
        of one variable, an ``outer`` bound to its ``inner``) is replaced by it, and an
        unpickled component's ``time`` by ``time``. ``declared``: the components'
        declared quantities' (dotted name, symbol) pairs (stacked: ``known``; the arrays'
        are their blocks'). ``parts``: ``allx``'s rows in order, each the components'
        (block None) or a block's ``"residuals"`` or ``"starts"``.
        Usually nothing is replaced (then the flag is False): the forms keep the
        components' symbols and name them for people through their tables
        (``FlatDAE.keys``). The third value: whether the expressions call a CasADi
        function (a sampled signal's ``interpolant``).

        Only the symbols that are not declared (derivatives, an outer's, time, any
        other) are looked at, found part after part as the free symbols of a CasADi
        function of the declared ones (:meth:`_resolve`), which meets them in the order
        one function of all the parts would; a block's part through its template
        (:meth:`_template`), once for all its instances."""
        self.syms.update(declared)
        if not allx.numel():
            return allx, False, False
        old: list[cs.SX] = []
        new: list[cs.SX] = []
        calls, every = False, None
        for rows, b, part in parts:
            found = None if b is None else self._template(b, part)
            if found is not None and self._instances(b, found[0]):
                calls = calls or found[1]
                continue
            if b is not None and every is None:
                every = vstack([known] + [b.symbols for b in self.blocks])
            inputs = known if b is None else every
            fn = cs.Function("unify", [inputs], [rows], {"allow_free": True})
            calls = calls or bool(fn.find_functions())
            self._resolve(fn.free_sx(), where, old, new)
        if not old:
            return allx, False, calls
        return cs.substitute(allx, cs.vertcat(*old), cs.vertcat(*new)), True, calls

    def _resolve(self, free: list[cs.SX], where: str, old: list, new: list) -> None:
        """Each symbol of ``free`` (each node once) named as the system names it: the
        first of a name becomes that name's symbol, a later other one is to be replaced
        by it (``old``, ``new``); a derivative's name is added to ``derivatives``."""
        syms, full = self.syms, self.full
        for s in free:
            raw = s.name()
            if raw == "time":
                if s.element_hash() != time.element_hash():
                    old.append(s)
                    new.append(time)
                continue
            name = full.get(raw)
            if name is None:  # a derivative
                base, order = self.derived(raw, where)
                name = derivative_name(base, order)
                canon = syms.get(name)
                if canon is None:
                    self.derivatives.append(name)
                    self.bases.append((base, order))
                    self.columns.append(s)
            else:  # a declared quantity's name, not its known symbol (or an outer's)
                canon = self.declared_symbol(name)
            if canon is None:
                syms[name] = s
            elif canon.element_hash() != s.element_hash():  # (not met in an earlier part)
                old.append(s)
                new.append(canon)

    def _known(self, s: cs.SX) -> bool:
        """Whether the symbol ``s`` is ``time`` or a declared quantity's own symbol."""
        raw = s.name()
        if raw == "time":
            return s.element_hash() == time.element_hash()
        name = self.full.get(raw)
        return name is not None and self.declared_symbol(name).element_hash() == s.element_hash()

    def _template(self, b: Block, part: str) -> tuple[list[int], bool] | None:
        """The free symbols of the block's template's ``part`` (``"residuals"`` or
        ``"starts"``): the rows of ``b.derivatives`` met, in order, and whether it calls
        a CasADi function; None if it holds another symbol that is not time or a
        declared one (or starts hold a derivative). Each instance's part is the
        template's function of its own symbols: its free symbols are its own
        derivatives, met in the template's order, and the same others."""
        lay = b.array._layout
        count = len(lay.quantities)
        rows = (
            lay.residuals[: lay.equations]
            if part == "residuals"
            else lay.initial[: len(lay.starts)]
        )
        fn = cs.Function("template", [lay.symbols[:count]], [rows], {"allow_free": True})
        place = {s.element_hash(): d for d, s in enumerate(cs.vertsplit(lay.rates[:, 0]))}
        found = []
        for s in fn.free_sx():
            d = place.get(s.element_hash())
            if d is not None:
                found.append(d)
            elif not self._known(s):
                return None
        if found and part == "starts":
            return None
        return found, bool(fn.find_functions())

    def _instances(self, b: Block, rows: list[int]) -> bool:
        """The block's instances' derivatives of template rows ``rows`` of
        ``b.derivatives``, instance after instance, added as :meth:`_resolve` adds them;
        False (nothing added) if a name is taken already."""
        if not rows:
            return True
        template, lay = b.array.template, b.array._layout
        count = len(template._quantities)
        place = {q.key: j for j, q in enumerate(template._quantities.values())}
        split = [split_derivative(lay.rates[d, 0].name()) for d in rows]
        if any(order < 1 or base not in place for base, order in split):
            return False
        bases = [b.names[place[base] :: count] for base, _ in split]
        orders = [order for _, order in split]
        names = list(map(derivative_names, bases, orders))
        names = list(chain.from_iterable(zip(*names)))
        if not self.syms.keys().isdisjoint(names):
            return False
        self.derivatives += names
        self.bases += zip(chain.from_iterable(zip(*bases)), cycle(orders))
        column = cs.vec(b.derivatives[rows, :])
        self.columns.append(column)
        self.syms.update(zip(names, scalars(column)))
        return True


def flatten(system: System) -> FlatDAE:
    """The :class:`FlatDAE` of ``system``: the components flattened one by one (in
    order), then the arrays' instances taken from their matrices (:mod:`acausal.arrays`)."""
    comps: list[Component] = []
    blocks: list[Block] = []
    for entry in system._order:
        if isinstance(entry, Component):
            comps += entry.walk()
        else:
            loose, found = entry._split()
            comps += loose
            blocks += [found] if found is not None else []
    if not comps and not blocks:
        raise StructureError(f"system {system.name} is empty: add components and connect them")
    bound = _bind_outers(comps)
    ren = _Unifier(comps, blocks, bound)
    declared = [q for comp in comps for q in comp._quantities.values() if q not in bound]
    unified = _unified(comps, blocks, bound, declared, ren, f"system {system.name}")
    owners = {comp: comp.full_name for comp in comps}
    symbols, arrays, kinds = _symbols(comps, blocks, declared, ren, unified, owners)
    table = SymbolTable(symbols, vstack([unified.known, *[b.symbols for b in blocks]]), arrays)
    records = _derivative_symbols(ren.derivatives, ren.bases, table, ren.syms)
    derivatives = cs.vertcat(cs.SX(0, 1), *ren.columns)
    table = table._grown(dict(zip(ren.derivatives, records)), derivatives)
    declared_names = ren.full
    equations = [
        FlatEquation(r, ComponentEquation(owners[e.owner], e.index, e.expr, declared_names))
        for r, e in zip(unified.residuals, unified.own)
    ]
    eq_blocks, first = [], len(equations)  # (their records made when read)
    for b, size in zip(blocks, unified.block_rows):
        indices = [e.index for e in b.array.template._equations]
        eq_blocks.append(EquationBlock(first, b.prefixes, indices, b.exprs, declared_names))
        first += size
    aliases = _exposed(comps, table)
    unconnected, connection_eqs, connection_residuals, entries = _connection_equations(
        Netlist(system, comps, blocks), ren.names, table
    )
    stacked = vstack([*unified.rows, connection_residuals])
    return FlatDAE(
        system.name,
        time,
        table,
        tuple(kinds["variable"]),
        tuple(kinds["parameter"]),
        tuple(kinds["discrete"]),
        FlatEquations(equations + connection_eqs, stacked, eq_blocks),
        stacked,
        aliases,
        declared_names,
        unconnected,
        unified.events,
        entries,
        unified.calls,
        tuple(
            (comp.name_of(v), float(low), float(high), what)
            for comp in comps
            for v, low, high, what in comp.valid_ranges()
        ),
        sum(unified.block_rows),
        *((None, ()) if unified.changed else _entries(blocks)),
    )


class _Unified(NamedTuple):
    """The components' expressions in the system's own symbols: their equations
    (``own``) and residuals, the arrays' residuals and symbolic start values by block, the
    symbolic start values by quantity, the events, the residuals stacked (the
    components' then the arrays', in a few parts: ``rows``), whether any calls a CasADi
    function, the components' declared symbols stacked (``known``), and whether
    the unifier replaced any symbol."""

    own: list[Equation]
    residuals: list[cs.SX]
    block_rows: list[int]  # (their residuals: rows of ``stacked`` after the components')
    block_starts: list[list[cs.SX]]
    start_of: dict[Quantity, cs.SX]
    events: tuple[FlatEvent, ...]
    rows: list[cs.SX]
    calls: bool
    known: cs.SX
    changed: bool


def _unified(
    comps: list[Component],
    blocks: list[Block],
    bound: Mapping[Quantity, Quantity],
    declared: list[Quantity],
    ren: _Unifier,
    where: str,
) -> _Unified:
    """The components' and arrays' equations, symbolic start values and events with every
    symbol replaced by the system's (``ren``: outer bindings, connector copies), in one
    substitution of their stacked expressions."""
    own: list[Equation] = [e for comp in comps for e in comp._equations]
    starts = [q for q in declared if isinstance(q.start, cs.SX)]
    events = [ev for comp in comps for ev in comp._events]
    exprs = [e.residual for e in own] + [q.start for q in starts]
    for ev in events:
        exprs += list(ev.crossings) + [v for _, v in ev.updates]
    known = cs.vertcat(cs.SX(0, 1), *[q.sym for q in declared])
    own_rows = cs.vertcat(cs.SX(0, 1), *[as_sx(e) for e in exprs[: len(own)]])
    other_rows = cs.vertcat(cs.SX(0, 1), *[as_sx(e) for e in exprs[len(own) :]])
    allx = vstack(
        [own_rows] + [b.residuals for b in blocks] + [other_rows] + [b.starts for b in blocks]
    )
    parts = [(own_rows, None, "")] + [(b.residuals, b, "residuals") for b in blocks]
    parts += [(other_rows, None, "")] + [(b.starts, b, "starts") for b in blocks]
    names = ((ren.names[q], q.sym) for q in declared)
    stacked, changed, calls = ren.unify(
        allx, parts if blocks else [(allx, None, "")], names, known, where
    )
    sizes = [b.residuals.numel() for b in blocks], [b.starts.numel() for b in blocks]
    if changed or len(blocks) + 2 > FEW_PARTS:  # (else the parts as given: no copy taken)
        rows = [stacked[: len(own) + sum(sizes[0])]]
    else:
        rows = [own_rows, *[b.residuals for b in blocks]]
    if blocks:  # the components' residuals, the blocks', the others, the blocks' starts
        # (the blocks' residuals stay in the stacked column: FlatEquations)
        own_end, others = len(own), sum(sizes[0]) + len(own)
        pieces = scalars(stacked[:own_end]) + scalars(stacked[others:])
        at = np.cumsum([0, len(exprs), *sizes[1]]).tolist()
        block_starts = [pieces[a:b] for a, b in zip(at[1:-1], at[2:])]
        pieces = pieces[: len(exprs)]
    else:
        pieces = scalars(stacked) if changed else exprs
        block_starts = []
    unified = iter(pieces)
    residuals = [next(unified) for _ in own]
    start_of = {q: next(unified) for q in starts}
    flat_events = []
    for ev in events:
        cross = tuple(next(unified) for _ in ev.crossings)
        ups = tuple((ren.names[q], next(unified)) for q, _ in ev.updates)
        rel = None if ev.relation is None else ren.names[ev.relation]
        flat_events.append(FlatEvent(ev.owner.full_name, cross, ups, rel))
    return _Unified(
        own,
        residuals,
        sizes[0],
        block_starts,
        start_of,
        tuple(flat_events),
        rows,
        calls,
        known,
        changed,
    )


def _symbols(
    comps: list[Component],
    blocks: list[Block],
    declared: list[Quantity],
    ren: _Unifier,
    unified: _Unified,
    owners: dict[Component, str],
) -> tuple[dict[str, Symbol], list[ArraySymbols], dict[str, list[str]]]:
    """The symbol table's records by name of the declared quantities, the arrays' (as
    blocks, after them), and the names of each kind of quantity, in declaration order."""
    symbols: dict[str, Symbol] = {}
    kinds: dict[str, list[str]] = {"parameter": [], "discrete": [], "variable": []}
    roles = {comp: _roles(comp) for comp in comps}
    names = ren.names
    start_of = unified.start_of
    for q in declared:
        name = names[q]
        symbols[name] = Symbol(
            name,
            q.kind,
            q.sym,
            owners[q.owner],
            roles[q.owner].get(q.local) if q.kind == "variable" else None,
            start_of.get(q, q.start),
            q.fixed,
            q.value,
            q.state_priority,
            unit=q.unit,
        )
        kinds[q.kind].append(name)
    arrays, first = [], len(symbols)
    for b, starts in zip(blocks, unified.block_starts):
        arrays.append(_block_symbols(b, starts, first))
        first += len(b.names)
        of_kind = [q.kind for q in b.array.template._quantities.values()]
        for kind, names in kinds.items():  # (the records' names, instance after instance)
            names += compress(b.names, cycle([k == kind for k in of_kind]))
    return symbols, arrays, kinds


def _derivative_symbols(
    names: list[str],
    split: list[tuple[str, int]],
    symbols: SymbolTable,
    syms: dict[str, cs.SX],
) -> list[Symbol]:
    """The records of the derivatives ``names`` (``split``: of which quantity of
    ``symbols``, of which order; their symbols in ``syms``), made in bulk: each its
    base's component, and its unit over seconds to its order."""
    base_names, orders = zip(*split) if split else ((), ())
    kinds, units, components = (
        c.tolist() for c in symbols.columns(["kind", "unit", "component"], base_names)
    )
    if not CONSTANT_KINDS.isdisjoint(kinds):
        constant = next(k for k, kind in enumerate(kinds) if kind in CONSTANT_KINDS)
        raise EquationError(f"der() of {kinds[constant]} {base_names[constant]} is zero; remove it")
    if max(orders, default=0) > 1:
        nested = next(k for k, order in enumerate(orders) if order > 1)
        base = base_names[nested]
        raise EquationError(
            f"{names[nested]}: a derivative of a derivative is not supported; declare a "
            f"variable for the first one (w == der({base.rsplit('.', 1)[-1]}) in "
            f"{symbols[base].component}) and write der(w)"
        )
    units = list(zip(units, orders))
    unit_of = {key: derivative_unit(*key) for key in set(units)}
    fields = (
        names,
        repeat("derivative"),
        map(syms.__getitem__, names),
        components,
        repeat(None),
        repeat(None),
        repeat(False),
        repeat(None),
        repeat(0),
        base_names,
        orders,
        map(unit_of.__getitem__, units),
    )
    return list(map(maker(Symbol), zip(*fields)))


def _entries(blocks: list[Block]) -> tuple[Entries | None, tuple[Template, ...]]:
    """The variables the arrays' rows hold, block after block (:func:`.block_entries`),
    and the blocks' templates; none if a template holds another component's symbol."""
    templates = tuple(map(block_template, blocks))
    if not templates or None in templates:
        return None, ()
    parts = list(map(block_entries, templates))
    ends = np.cumsum([0] + [p.indptr[-1] for p in parts[:-1]])
    indptr = np.concatenate([[0]] + [p.indptr[1:] + e for p, e in zip(parts, ends)])
    return Entries(indptr, tuple(chain.from_iterable(p.names for p in parts))), templates


def _block_symbols(b: Block, starts: list[cs.SX], first: int) -> ArraySymbols:
    """The records of an array block's quantities, instance after instance, from the
    symbol table's row ``first`` on, as a block (``starts``: their symbolic start values,
    unified, in the same order): a template quantity's constant fields, made only when
    a record is read (:class:`ArraySymbols`)."""
    template = b.array.template
    role = _roles(template)
    quantities = list(template._quantities.values())

    def each(field: str) -> tuple:
        return tuple(getattr(q, field) for q in quantities)

    fields = {
        "kind": each("kind"),
        "role": tuple(role.get(q.local) if q.kind == "variable" else None for q in quantities),
        "start": each("start"),
        "fixed": each("fixed"),
        "value": each("value"),
        "state_priority": each("state_priority"),
        "base": ("",) * len(quantities),
        "order": (0,) * len(quantities),
        "unit": each("unit"),
    }
    symbolic = tuple(j for j, q in enumerate(quantities) if isinstance(q.start, cs.SX))
    return ArraySymbols(first, b.names, b.prefixes, fields, symbolic, starts)


def _exposed(comps: list[Component], symbols: dict[str, Symbol]) -> Table:
    """Extra names of exposed connectors' variables: ``motor.flange.phi -> motor.J.phi``."""
    aliases: dict[str, str] = {}
    for comp in comps:
        for local, c in comp._connectors.items():
            if c.owner is not comp:
                for var, q in c.quantities.items():
                    alias = f"{comp.full_name}.{local}.{var}"
                    if alias in symbols or aliases.get(alias, q.name) != q.name:
                        raise NameClashError(f"{alias} names two different variables")
                    aliases[alias] = q.name
    return Table(aliases)


def _connection_equations(
    net: Netlist, names_of: Mapping[Quantity, str], symbols: SymbolTable
) -> tuple[tuple[str, ...], list[FlatEquation], cs.SX, Entries]:
    """Unconnected connectors, the equations of every connection set (``net``'s), their
    residuals stacked and the variables each holds, built in bulk (a few CasADi calls in
    all, not one per equation; the sets' members by index arithmetic): flows ``S f`` with
    ``S`` the 0/1 matrix of which flows each sum adds (a row per set and flow variable),
    potentials ``first - other`` (per set, potential variable and further member);
    ``names_of`` gives each quantity's dotted name."""
    nodes = net.nodes(names_of, symbols.index)
    order, ends = net.order, net.ends
    sizes = np.diff(ends, prepend=0)
    starts = ends - sizes
    ordered = list(map(nodes.names.__getitem__, order.tolist()))
    connectors = [tuple(ordered[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
    unconnected = tuple(ordered[a] for a in starts[sizes == 1].tolist())
    kinds = nodes.types[order[starts]]  # each set's connector type
    labels = [v for t in nodes.ctypes for v in t.potentials + t.flows]
    first_label = np.cumsum([0] + [len(t.potentials + t.flows) for t in nodes.ctypes])[kinds]
    potentials = np.array([len(t.potentials) for t in nodes.ctypes], dtype=np.int64)[kinds]
    flow_count = np.array([len(t.flows) for t in nodes.ctypes], dtype=np.int64)[kinds]

    def dotted(node: np.ndarray, slot: np.ndarray) -> tuple[list[str], np.ndarray, cs.SX]:
        """The dotted names, table rows and symbols of the variables ``slot`` of nodes
        ``node``."""
        at = nodes.slots[node, slot]
        names, rows = list(map(nodes.dotted.__getitem__, at.tolist())), nodes.rows[at]
        return names, rows, symbols.stack[rows.tolist()] if names else cs.SX(0, 1)

    def sources(sets: np.ndarray, slot: np.ndarray, kind: str, index: Iterable) -> list:
        names = map(labels.__getitem__, (first_label[sets] + slot).tolist())
        fields = zip(map(connectors.__getitem__, sets.tolist()), names, repeat(kind), index)
        return list(map(maker(ConnectionEquation), fields))

    flow_set, flow_slot = _runs(flow_count)  # a flow sum per set and flow variable
    flow_slot += potentials[flow_set]
    row, place = _runs(sizes[flow_set])  # its terms: that flow of each member
    flows, flow_rows, flow_syms = dotted(order[starts[flow_set][row] + place], flow_slot[row])
    pair_set, at = _runs(potentials * (sizes - 1))  # first == k-th member, k = 1, 2, ..
    further = (sizes - 1)[pair_set]
    slot, k = at // np.maximum(further, 1), at % np.maximum(further, 1) + 1
    firsts, first_rows, first_syms = dotted(order[starts[pair_set]], slot)
    others, other_rows, other_syms = dotted(order[starts[pair_set] + k], slot)
    flow_src = sources(flow_set, flow_slot, "flow", repeat(1))
    pot_src = sources(pair_set, slot, "potential", k.tolist())

    sums, diffs = cs.SX(0, 1), cs.SX(0, 1)
    if flow_src:
        S = cs.DM(
            cs.Sparsity.triplet(len(flow_src), len(flows), row.tolist(), list(range(len(flows)))), 1
        )
        sums = cs.mtimes(S, flow_syms)
    if firsts:
        diffs = first_syms - other_syms
    stacked = vstack([sums, diffs])
    residuals = scalars(stacked) if stacked.numel() else []
    equations = list(map(maker(FlatEquation), zip(residuals, flow_src + pot_src)))
    # the rows' variables: each flow sum's members, then each potential pair
    counts = np.concatenate([sizes[flow_set], np.full(len(firsts), 2)])
    pairs = [None] * (2 * len(firsts))
    pairs[0::2], pairs[1::2] = firsts, others
    pair_rows = np.column_stack([first_rows, other_rows]).ravel()
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    rows = np.concatenate([flow_rows, pair_rows]).astype(np.int64)
    entries = Entries(indptr, (*flows, *pairs), rows)
    return unconnected, equations, stacked, entries


def _runs(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ``counts[i]`` items of each ``i``, item after item: its ``i`` and its place
    ``0 .. counts[i] - 1`` among them."""
    owner = np.repeat(np.arange(len(counts)), counts)
    return owner, np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
