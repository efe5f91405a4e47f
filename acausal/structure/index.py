"""Index reduction: Pantelides' algorithm, then Mattsson-Soederlind dummy derivatives.

Pantelides works on the graph of equations and *highest* derivatives. An equation that
finds no augmenting path marks a structurally singular subset of equations (they
determine fewer highest derivatives than their number): each equation of that subset
is differentiated, ``d/dt F = sum_k (dF/dq_k) der(q_k) + dF/dt``, and each variable in it
gains one derivative order, until every equation is matched.

Dummy derivatives then choose which derivatives become algebraic unknowns. Going down
from the highest differentiated equations g_1, with unknowns z_1 their highest
derivatives, a matching picks |g_i| columns of dg_i/dz_i (structurally nonsingular);
those become dummy derivatives, and the step repeats one order lower on their
predecessors. A derivative chain ``v, v', ..., v^(k)`` then has ``v^(j)`` as a state exactly
when ``v^(j+1)`` exists and is not a dummy. Columns are chosen by least cost (a state
priority anywhere in the alias class, then a fixed start value of the state a demotion
takes away, make it dear) and checked numerically at the start values
(:mod:`.selection`); the choices a tie decided, or that are singular at the start, are
reported as :class:`~acausal.errors.StateSelectionWarning`.

The graph work is in :mod:`.algorithms` (integers only); this module gives it the incidence
of the residuals, differentiates them, and names the new derivatives. Pantelides runs on
the structural incidence of a derivative, each column of the equation one order up: the
lower orders that nonlinear terms keep never become highest derivatives, so they cannot
change its matching. Once it is done, the derivative equations are made in bulk, one
directional derivative per derivative order (:func:`_differentiate`), and their exact
incidence goes on to the dummy-derivative selection. Every stage is linear in the size of
the model (the numerical check of a level's choice too, block by block: :mod:`.dummies`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain, compress, repeat
from operator import attrgetter
from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..errors import StateSelectionWarning, StructureError
from ..flat import FlatEquation, Records, Symbol
from ..symbols import derivative_names, vstack
from ..table import SymbolTable, Table
from .algorithms import (
    Col,
    Pattern,
    PatternRows,
    StructuralFailure,
    pantelides,
    state_columns,
    states_and_algebraic,
)
from .alias import Reduced
from .diagnose import explain_singular
from .dummies import Choice
from .graph import incidence, match
from .naming import declaration_candidates, declared_derivatives, state_labels
from .selection import select_states, tie_names


class AugEquation(NamedTuple):
    """An equation of the index-reduced system: ``order`` times differentiated ``source``."""

    residual: cs.SX
    source: FlatEquation
    order: int

    @property
    def origin(self) -> str:
        text = self.source.origin
        return text if self.order == 0 else f"d{self.order}/dt{self.order} of [{text}]"


@dataclass(frozen=True, eq=False)
class IndexReduced:
    """The index-1 form: every unknown column is a state or algebraic. ``chains[v][o]`` is
    the name of the o-th derivative of unknown v; ``symbols`` the reduced form's table plus
    the derivatives index reduction introduced."""

    reduced: Reduced
    symbols: SymbolTable
    equations: Sequence[AugEquation]  # (records made when read: AugEquations)
    residuals: cs.SX  # the equations' residuals stacked
    chains: tuple[tuple[str, ...], ...]
    states: tuple[Col, ...]
    algebraic: tuple[Col, ...]
    dummies: frozenset[Col]
    index: int
    choices: tuple[Choice, ...] = ()  # the dummy-derivative choice, block by block
    notes: tuple[str, ...] = ()  # what state selection warned about
    # other choices a run may switch to when this one gets singular (dynamic state selection)
    alternatives: tuple[tuple[Choice, ...], ...] = ()
    # the equations that may declare an unknown equal to a derivative, with that unknown's
    # and the derivative's columns (three rows: .naming.declaration_candidates, numbered
    # as ``pattern``'s columns)
    declaring: np.ndarray = field(default_factory=lambda: np.zeros((3, 0), dtype=np.int64))
    # ``incidence`` as a 0/1 matrix: a row per equation, a column per column (v, o) of
    # ``chains``, numbered chain by chain (``(0, 0), (0, 1), ..., (1, 0), ...``)
    pattern: sp.csr_matrix | None = None

    def column_numbers(self, cols: Iterable[Col]) -> np.ndarray:
        """The numbers of columns ``cols`` in :attr:`pattern`."""
        v, o = np.fromiter(chain.from_iterable(cols), np.int64).reshape(-1, 2).T
        return self.starts[v] + o

    @cached_property
    def starts(self) -> np.ndarray:
        """Where each chain's columns begin in :attr:`pattern` (:func:`_starts`): column
        ``(v, o)`` is number ``starts[v] + o``."""
        return _starts(self.chains)

    @cached_property
    def pattern_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """``(v, o)`` of each column of :attr:`pattern`, as two arrays."""
        v = np.repeat(np.arange(len(self.chains)), np.diff(self.starts))
        return v, np.arange(len(v)) - self.starts[v]

    @cached_property
    def column_order(self) -> np.ndarray:
        """The numbers in :attr:`pattern` of the :attr:`states`, then of the
        :attr:`algebraic` columns (each in order; their lists, as arrays)."""
        _, _, state = state_columns(np.diff(self.starts) - 1, self.dummies)
        return np.concatenate([np.flatnonzero(state), np.flatnonzero(~state)])

    @cached_property
    def incidence(self) -> tuple[frozenset[Col], ...]:
        """Each equation's columns ``(v, o)``: the rows of :attr:`pattern`."""
        return tuple(PatternRows(Pattern(self.pattern, *self.pattern_columns)))

    @cached_property
    def declared(self) -> Table:
        """``der^o(x) -> the unknowns a component declared equal to it``, best first
        (:func:`.naming.declared_derivatives`)."""
        return self.declared_among(np.ones(len(self.pattern_columns[0]), dtype=bool))

    def declared_among(self, wanted: np.ndarray) -> Table:
        """:attr:`declared`'s entries of the derivatives whose columns are ``wanted`` (a
        mask over :attr:`pattern`'s columns), in its order: only their equations are
        examined."""
        candidates = self.declaring[:, wanted[self.declaring[2]]]
        return declared_derivatives(self.reduced, self.pattern_columns, self.chains, candidates)

    @cached_property
    def labels(self) -> Table:
        """``{column name: the name reported}`` where a state ``der(x)`` is reported by the
        variable declared equal to it (:mod:`.naming`); the other columns keep their names.
        Only the states' columns' declarations are read."""
        wanted = np.zeros(len(self.pattern_columns[0]), dtype=bool)
        wanted[self.column_numbers(self.states)] = True
        return state_labels(self.chains, self.states, self.declared_among(wanted))

    def label(self, col: Col) -> str:
        """The name a person reads for column ``col``: :meth:`name`, or the declared
        variable's where the state is a derivative that one equals (:attr:`labels`)."""
        name = self.chains[col[0]][col[1]]
        return self.labels.get(name, name)

    @property
    def state_ties(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """States chosen among equally good candidates: ``(state, (others, ...))`` by
        coordinate names, for each choice that a tie decided."""
        return tie_names(self.choices, lambda v: self.chains[v][0])

    def sym(self, col: Col) -> cs.SX:
        return self.symbols[self.chains[col[0]][col[1]]].sym

    def syms(self, cols: Iterable[Col]) -> cs.SX:
        """The symbols of columns ``cols``, stacked."""
        return self.symbols.take([self.chains[v][o] for v, o in cols])

    def with_choice(self, choices: tuple[Choice, ...]) -> IndexReduced:
        """The same index reduction with another dummy-derivative choice (one of
        :attr:`alternatives`): other states, the same equations."""
        dummies = frozenset(c for ch in choices for c in ch.dummies)
        states, algebraic = states_and_algebraic([len(ch) - 1 for ch in self.chains], dummies)
        return replace(
            self,
            states=tuple(states),
            algebraic=tuple(algebraic),
            dummies=dummies,
            choices=choices,
            notes=(),
            alternatives=(),
        )

    def name(self, col: Col) -> str:
        return self.chains[col[0]][col[1]]

    def __str__(self) -> str:
        lines = [
            f"IndexReduced {self.reduced.flat.name}: index {self.index}, "
            f"{len(self.equations)} equations, "
            f"{state_counts(len(self.states), len(self.reduced.flat.discretes))}, "
            f"{len(self.algebraic)} algebraic unknowns"
        ]
        lines.append("  continuous states: " + ", ".join(self.label(c) for c in self.states))
        if self.reduced.flat.discretes:
            lines.append("  discrete modes: " + ", ".join(self.reduced.flat.discretes))
        lines.append("  algebraic: " + ", ".join(self.label(c) for c in self.algebraic))
        lines.append(
            "  dummy derivatives: " + ", ".join(sorted(self.label(c) for c in self.dummies))
        )
        lines += [f"  tie: {k} kept over {', '.join(v)}" for k, v in self.state_ties]
        lines += [f"  note: {text}" for text in self.notes]
        lines += [f"  {e.origin}" for e in self.equations]
        return "\n".join(lines)


def state_counts(states: int, modes: int) -> str:
    """How many continuous states and discrete modes a model has, as every report says it:
    ``"3 continuous states, 1 discrete mode"`` (the modes are integrated as states of zero
    rate, but are not counted as states)."""
    return (
        f"{states} continuous state{'s' * (states != 1)}, {modes} discrete mode{'s' * (modes != 1)}"
    )


class AugEquations(Records):
    """The index-reduced system's equations (:class:`AugEquation` records, those of the
    reduced form's ``equations`` made only when read): each of ``equations`` as itself
    (order 0), then the derivative equations ``derived``."""

    def __init__(self, equations: Sequence[FlatEquation], derived: list[AugEquation]) -> None:
        super().__init__(len(equations) + len(derived))
        self._made[len(equations) :] = derived
        self._known[len(equations) :] = True
        self._equations = equations

    def _make(self, rows: np.ndarray) -> Iterable[AugEquation]:
        records = self._equations.take(rows)
        return map(AugEquation, map(_residual, records), records, repeat(0))


_residual = attrgetter("residual")


def _chains(unknowns: Iterable[str], symbols: SymbolTable) -> list[list[str]]:
    """Each unknown ``q`` with ``der(q)``, ``der(der(q))``, ... as far as ``symbols`` has
    them: one order after the other, over the chains that reached the order before (the
    names made and looked up in bulk, in the table's index: no record read)."""
    chains = list(map(list, zip(unknowns)))
    heads, names = chains, derivative_names(list(unknowns))
    while heads:
        found = list(map(symbols.index.__contains__, names))
        heads, names = list(compress(heads, found)), list(compress(names, found))
        for ch, name in zip(heads, names):
            ch.append(name)
        names = derivative_names(names)
    return chains


def reduce_index(red: Reduced) -> IndexReduced:
    """Pantelides + dummy derivatives on the alias-reduced system: the integer algorithms of
    :mod:`.algorithms`, with the differentiation of residuals and the naming of new
    derivatives done here."""
    unknowns = red.unknowns
    symbols: dict[str, Symbol] = red.symbols  # (copied if new derivatives join it)
    chains = _chains(unknowns, symbols)
    start = _starts(chains)
    col_v = np.repeat(np.arange(len(chains)), np.diff(start))
    col_o = np.arange(start[-1]) - start[col_v]
    inc = _incidence(red, list(chain.from_iterable(chains)))
    inc.sum_duplicates()  # (none in an incidence: sorts each row's columns)
    first = Pattern(inc, col_v, col_o)
    rows = PatternRows(first)
    _check_nonsingular(red, first)
    declaring = declaration_candidates(first)
    n = len(red.equations)
    derived: list[AugEquation] = []  # the derivative equations, in the order Pantelides made them
    parent: list[int] = []  # of each derivative equation
    structural: list[set[Col]] = []  # their incidence

    def differentiate(e: int) -> set[Col]:
        """The structural incidence of ``d/dt`` of equation ``e`` (each column one order
        up); the residuals follow in bulk (:func:`_differentiate`)."""
        parent.append(e)
        source, order = (red.equations[e], 0) if e < n else derived[e - n][1:]
        derived.append(AugEquation(cs.SX(0), source, order + 1))
        held = rows[e] if e < len(rows) else structural[e - len(rows)]
        structural.append({(v, o + 1) for v, o in held})
        return structural[-1]

    try:
        result = pantelides(rows, len(unknowns), differentiate, first)
        hv = np.asarray(result.hv, dtype=np.int64)
        made, grown = [], np.flatnonzero(hv >= np.diff(start)).tolist()
        symbols = dict(symbols) if grown else symbols
        for vi in grown:  # every order up to the highest has its symbol
            while len(chains[vi]) <= hv[vi]:
                made.append(_new_derivative(chains[vi][-1], symbols))
                chains[vi].append(made[-1])
        table = red.symbols.extended({q: symbols[q] for q in made})
        exact, residuals = _differentiate(red.residuals, derived, parent, chains, table, red.flat.t)
        if parent:
            result = replace(result, rows=(*result.rows[: len(rows)], *exact))
        choices, notes, alternatives = select_states(
            red, residuals, result, lambda c: symbols[chains[c[0]][c[1]]].sym
        )
    except StructuralFailure as exc:
        eqs = AugEquations(red.equations, derived)
        names = "; ".join(eqs[r].origin for r in exc.equations[:12])
        raise StructureError(
            f"model {red.flat.name}: index reduction failed ({exc.reason}) at: {names}"
        ) from None
    for text in notes:
        warnings.warn(text, StateSelectionWarning, stacklevel=2)
    dummies = frozenset(c for ch in choices for c in ch.dummies)
    states, algebraic = states_and_algebraic(result.hv, dummies)
    kept = _kept(chains, hv)
    return IndexReduced(
        red,
        table,
        AugEquations(red.equations, derived),
        residuals,
        kept,
        tuple(states),
        tuple(algebraic),
        dummies,
        result.index,
        choices,
        notes,
        alternatives,
        _renumbered(declaring, first, kept),
        _pattern(result.rows, kept) if parent else _truncated(first, kept),
    )


def _kept(chains: list[list[str]], hv: np.ndarray) -> tuple[tuple[str, ...], ...]:
    """The chains up to each unknown's highest order ``hv``, as tuples."""
    kept = list(map(tuple, chains))
    for vi in np.flatnonzero(np.fromiter(map(len, chains), np.int64, len(chains)) > hv + 1):
        kept[vi] = kept[vi][: hv[vi] + 1]
    return tuple(kept)


def _renumbered(
    candidates: np.ndarray, first: Pattern, chains: Sequence[Sequence[str]]
) -> np.ndarray:
    """:func:`.naming.declaration_candidates` of the incidence ``first`` with their columns
    renumbered as those of ``chains`` (the same ``(v, o)``, numbered chain by chain)."""
    out = candidates.copy()
    out[1:] = _starts(chains)[first.v[out[1:]]] + first.o[out[1:]]
    return out


def _starts(chains: Sequence[Sequence[str]]) -> np.ndarray:
    """Where each chain's columns begin when the columns ``(v, o)`` are numbered chain by
    chain: ``start[v] + o``; the last entry is the number of columns."""
    lengths = np.fromiter(map(len, chains), np.int64, len(chains))
    return np.concatenate(([0], np.cumsum(lengths)))


def _truncated(first: Pattern, chains: Sequence[Sequence[str]]) -> sp.csr_matrix:
    """The incidence ``first`` (over longer chains) in the columns of ``chains``: the
    orders above each chain's highest dropped (no equation holds them)."""
    keep = first.o < np.fromiter(map(len, chains), np.int64, len(chains))[first.v]
    return first.matrix if keep.all() else first.matrix[:, np.flatnonzero(keep)].tocsr()


def _pattern(rows: Sequence[frozenset[Col]], chains: Sequence[Sequence[str]]) -> sp.csr_matrix:
    """The 0/1 matrix of the incidence ``rows`` over the columns of ``chains``, numbered
    chain by chain (:attr:`IndexReduced.pattern`)."""
    start = _starts(chains)
    flat = [(r, int(start[v]) + o) for r, row in enumerate(rows) for v, o in row]
    r_idx, c_idx = np.array(flat, dtype=np.int64).reshape(-1, 2).T
    out = sp.csr_matrix(
        (np.ones(len(flat), dtype=np.int8), (r_idx, c_idx)), shape=(len(rows), int(start[-1]))
    )
    out.sum_duplicates()
    return out


def _incidence(red: Reduced, names: list[str]) -> sp.csr_matrix:
    """The incidence of ``red``'s equations in the symbols ``names``: the columns of the
    one alias elimination kept, when it has them all, else computed anew."""
    at = list(map(red.pattern_position.get, names))
    if red.pattern is not None and None not in at:
        return red.pattern[:, at].tocsr()
    return incidence(red.residuals, red.symbols.take(names))


def _check_nonsingular(red: Reduced, first: Pattern) -> None:
    """Equations versus unknowns (any derivative order) must match perfectly: a maximum
    matching of the equations to the unknowns their columns belong to (``first``)."""
    n, m = first.matrix.shape[0], len(red.unknowns)
    mat = first.matrix
    inc = sp.csr_matrix((mat.data, first.v[mat.indices], mat.indptr), shape=(n, m), copy=True)
    inc.sum_duplicates()
    inc.data[:] = 1  # (two orders of one unknown in a row: one entry)
    row_to_col, col_to_row = match(inc)
    if n != m or (row_to_col < 0).any():
        raise StructureError(explain_singular(red, inc, row_to_col, col_to_row))


def _new_derivative(name: str, symbols: dict[str, Symbol]) -> str:
    """Add ``der(name)`` to the table ``symbols``; return its name."""
    record = symbols[name].derivative()
    symbols[record.name] = record
    return record.name


def _differentiate(
    residuals: cs.SX,
    derived: list[AugEquation],
    parent: list[int],
    chains: list[list[str]],
    symbols: SymbolTable,
    t: cs.SX,
) -> tuple[tuple[frozenset[Col], ...], cs.SX]:
    """Fill in the residuals of the derivative equations ``derived`` (the ``k``-th is
    equation ``parent[k]`` differentiated: of the equations ``residuals`` stacked, then of
    ``derived``), ``d/dt F = sum_k (dF/dq_k) der(q_k) + dF/dt``; return their incidence and
    every equation's residual stacked (``residuals``, then ``derived``'s).

    One directional derivative (``jtimes``, every column seeded by its next derivative)
    and one incidence for all the equations of one derivative order, the orders in turn (a
    parent is one order lower). Every column a parent holds has its next derivative in its
    chain: Pantelides raised the unknown's highest order to it."""
    if not parent:  # nothing differentiated (index 1 or 0)
        return (), residuals
    cols = [(vi, o) for vi, ch in enumerate(chains) for o in range(len(ch))]
    syms = symbols.take([chains[vi][o] for vi, o in cols])
    lower = [k for k, (vi, o) in enumerate(cols) if o + 1 < len(chains[vi])]
    arg, rates = syms[lower], syms[[k + 1 for k in lower]]
    n = residuals.size1()
    rows: list[frozenset[Col]] = [frozenset()] * len(parent)
    orders = [e.order for e in derived]
    outs, made = [cs.SX(0, 1)], []  # the residuals by order, and which equations they are
    for order in sorted(set(orders)):
        ks = [k for k, o in enumerate(orders) if o == order]
        held = [parent[k] for k in ks]
        res = cs.vertcat(*[residuals[e] if e < n else derived[e - n].residual for e in held])
        out = cs.jacobian(res, t) + cs.jtimes(res, arg, rates)
        inc = incidence(out, syms)
        for j, (k, r) in enumerate(zip(ks, cs.vertsplit(out))):
            derived[k] = derived[k]._replace(residual=r)
            rows[k] = frozenset(cols[c] for c in inc.indices[inc.indptr[j] : inc.indptr[j + 1]])
        outs.append(out)
        made += ks
    stacked = cs.vertcat(*outs)
    where = np.empty(len(made), dtype=np.int64)
    where[made] = np.arange(len(made))  # equation k's row in the stack
    return tuple(rows), vstack([residuals, stacked[where.tolist()]])
