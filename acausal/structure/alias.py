"""Alias elimination: drop equations ``a = +-b + c`` and ``a = c``, ``c`` a constant.

An equation whose residual depends on exactly two undifferentiated variables with
constant coefficients of equal magnitude, ``k a + k' b + h = 0`` with ``|k| = |k'|`` and
``h`` a number or an expression of parameters, makes ``a = -(k'/k) b - h/k`` an alias (a
flange at ``s - L/2`` of its body's centre, a wall at ``s0``); one depending on one
variable with a constant coefficient makes it a constant. Alias classes are kept by a
union-find with signs and offsets (:mod:`.union_find`, on the variables' positions); each
class keeps one representative (preferring differentiated variables, fixed start values,
state priority and component variables over connector variables: :func:`preference_ranks`),
and every other member is replaced by ``+-representative + offset``, its derivative by
``+-der(representative)`` (parameters are constant). A cycle of aliases that closes is a
redundant or contradictory equation; it stays in the model so that the balance check can
name it. Passes repeat until nothing changes, because eliminating constants turns
``v = p.v - n.v`` with ``n.v = 0`` into an alias.

The first passes take plain aliases ``a = +-b`` and numeric constants only, all of a pass
at once (:meth:`.SignedUnionFind.add_plain_rows`); rows with an offset wait for the
passes after them, which take them one by one. Offsets are sums ``sum_k w_k h_k`` of
numbers ``w_k`` times *atoms*: the number 1 and the offset expressions ``h_k`` of the alias
equations (composed in the union-find without a CasADi call); the expressions are made
once, as one sparse product ``W [1; h]``, when they are substituted. The equations left,
their candidates and their substitution are :mod:`.alias_rows`'s.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, repeat
from operator import attrgetter, is_
from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..flat import FlatDAE, FlatEquation, Symbol
from ..symbols import column_entries, vstack
from ..table import SymbolTable, Table
from .alias_rows import Rows, Substitution
from .graph import row_entries, signed_picks
from .starts import has_start, merge_starts
from .union_find import SignedUnionFind, Terms


class Aliases(NamedTuple):
    """The eliminated variables as ``sign * representative + offset``, as arrays in the
    order of elimination: ``at`` their positions in ``flat.variables``, ``roots`` their
    representatives' (-1: the class is a constant), ``signs``; the offset is the number
    ``constants[k]``, or, where ``symbolic[k] >= 0``, the expression of parameters
    ``exprs[symbolic[k]]`` (one vector: those offsets in order)."""

    at: np.ndarray
    roots: np.ndarray
    signs: np.ndarray
    constants: np.ndarray
    symbolic: np.ndarray
    exprs: cs.SX

    def offsets(self, ks: np.ndarray) -> list[float | cs.SX]:
        """The offsets of the eliminated variables ``ks`` (places in :attr:`at`), each a
        number or an expression."""
        out = self.constants[ks].tolist()
        where = np.flatnonzero(self.symbolic[ks] >= 0)
        if where.size:
            exprs = cs.vertsplit(self.exprs[self.symbolic[ks[where]].tolist(), 0])
            for k, e in zip(where.tolist(), exprs):
                out[k] = e
        return out

    def table(self, variables: Sequence[str], ks: np.ndarray) -> Table:
        """``{variable: (sign, representative or None, offset)}`` of the eliminated
        variables ``ks`` (places in :attr:`at`)."""
        names = map(variables.__getitem__, self.at[ks].tolist())
        roots = [None if r < 0 else variables[r] for r in self.roots[ks].tolist()]
        return Table(zip(names, zip(self.signs[ks].tolist(), roots, self.offsets(ks))))


@dataclass(frozen=True, eq=False)
class Reduced:
    """Equations and unknowns (names) left after alias elimination; ``symbols`` is the flat
    table plus the derivatives of representatives that the substitution created."""

    flat: FlatDAE
    symbols: SymbolTable
    equations: Sequence[FlatEquation]  # (records made when read: RowEquations)
    residuals: cs.SX  # the equations' residuals stacked (indexed, not re-stacked, by later stages)
    unknowns: tuple[str, ...]
    aliases: Aliases  # the eliminated variables (``eliminated``, ``members``: by name)
    position: Table  # variable -> its place in ``flat.variables`` (the aliases' numbering)
    starts: Table  # representative -> Start
    # the equations' incidence (0/1, a row per equation) in the symbols whose names
    # ``pattern_position`` maps to their columns, in column order (None: time), as alias
    # elimination left it; saves the next stage recomputing it
    pattern: sp.csr_matrix | None = None
    pattern_position: Table = field(default_factory=Table)

    @cached_property
    def eliminated(self) -> Table:
        """variable -> starts.Alias: (sign, representative or None, constant), in the
        order of elimination."""
        return self.aliases.table(self.flat.variables, np.arange(len(self.aliases.at)))

    @cached_property
    def members(self) -> Table:
        """representative -> the other members of its class (tuple), in the order of
        elimination."""
        variables, at, roots = self.flat.variables, self.aliases.at, self.aliases.roots
        on = np.flatnonzero(roots >= 0)
        members: dict[str, list[str]] = {}
        for q, root in zip(at[on].tolist(), roots[on].tolist()):
            members.setdefault(variables[root], []).append(variables[q])
        return Table(zip(members, map(tuple, members.values())))

    def sym(self, name: str) -> cs.SX:
        return self.symbols[name].sym

    def __str__(self) -> str:
        lines = [
            f"Reduced {self.flat.name}: {len(self.equations)} equations for "
            f"{len(self.unknowns)} unknowns, {len(self.eliminated)} aliases eliminated"
        ]
        for q, (s, root, c) in self.eliminated.items():
            rhs = f"{'-' if s < 0 else ''}{root}" if root is not None else ""
            symbolic = isinstance(c, cs.SX)
            const = self.flat.display(c) if symbolic else f"{c:.17g}" if root is None or c else ""
            lines.append(f"  alias {q} = {rhs}{' + ' if rhs and const else ''}{const}")
        for q, st in self.starts.items():
            fixed = " fixed" if st.fixed else ""
            lines.append(f"  start {q} = {self.flat.display(st.value)}{fixed} (from {st.source})")
        lines += [f"  {e.origin}" for e in self.equations]
        return "\n".join(lines)


def preference_ranks(symbols: Sequence[Symbol], differentiated: Container[str]) -> np.ndarray:
    """Each variable's place (0 first) in the order of preference of representatives:
    differentiated, fixed start, state priority, any start, a component's own variable
    (not a connector's), short local name, then declaration (list) order."""
    n = len(symbols)
    names = list(map(attrgetter("name"), symbols))
    fixed = np.fromiter(map(attrgetter("fixed"), symbols), bool, n)
    flags = np.fromiter(map(differentiated.__contains__, names), bool, n)
    components = list(map(attrgetter("component"), symbols))
    priorities = np.fromiter(map(attrgetter("state_priority"), symbols), np.int64, n)
    started = has_start(list(map(attrgetter("start"), symbols)))
    return _ranked(*_local_shapes(names, components), priorities, flags, fixed, started)


def _local_shapes(names: Sequence[str], components: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each name's local part's (after its component's name and a dot) length and whether
    it holds a dot (a connector's variable)."""
    n = len(names)
    start = np.fromiter(map(len, components), np.int64, n) + 1
    length = np.maximum(np.fromiter(map(len, names), np.int64, n) - start, 0)
    dotted = np.fromiter(map(str.find, names, repeat("."), start.tolist()), np.int64, n) >= 0
    return length, dotted


def _table_shapes(symbols: SymbolTable, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_local_shapes` of the records of rows ``rows`` of ``symbols``: a block's
    instances' from its template quantities' local names (instance ``k``'s quantity
    ``j``, row ``first + k count + j``, is named ``component.local_j``), the others' from
    their names and components."""
    n = len(rows)
    length, dotted = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    alone = np.ones(n, dtype=bool)
    for b in symbols.blocks:
        on = np.flatnonzero((rows >= b.first) & (rows < b.first + len(b.names)))
        if on.size:
            skip = len(b.components[0]) + 1
            local = [name[skip:] for name in b.names[: b.count]]
            j = (rows[on] - b.first) % b.count
            length[on] = np.fromiter(map(len, local), np.int64, b.count)[j]
            dotted[on] = np.array(["." in q for q in local], dtype=bool)[j]
            alone[on] = False
    at = np.flatnonzero(alone)
    if at.size:
        names, components = symbols.columns(("name", "component"), rows=rows[at])
        length[at], dotted[at] = _local_shapes(names.tolist(), components.tolist())
    return length, dotted


def _ranked(
    length: np.ndarray,
    dotted: np.ndarray,
    priorities: np.ndarray,
    differentiated: np.ndarray,
    fixed: np.ndarray,
    started: np.ndarray,
) -> np.ndarray:
    """:func:`preference_ranks` of variables given as arrays: their local names' shapes
    (:func:`_local_shapes`), state priorities, whether each is differentiated, has a fixed
    start and has a start."""
    n = len(length)
    keys = (  # the last the first criterion (numpy's lexsort)
        np.arange(n),
        length,
        dotted,
        ~started,
        -priorities,
        ~fixed,
        ~differentiated,
    )
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort(keys)] = np.arange(n)
    return rank


class Classes:
    """Alias classes under construction: the union-find of the variables (by their
    position in ``flat.variables``; ``starts``, ``fixed``: their start values and whether
    each is fixed), the offsets' atoms, and the derivatives of representatives made on
    the way (``made``). The variables' fields are read as columns of the symbol table
    (no record made)."""

    def __init__(self, flat: FlatDAE) -> None:
        variables = flat.variables
        symbols = self.symbols = flat.symbols
        self.atoms: list[cs.SX] = []  # blocks of atom expressions, atom k at position k
        self.n_atoms = 0
        # each atom's row: the columns (parameters) it holds, blocks as registered
        self.atom_held: list[sp.csr_matrix] = []
        (firsts,) = symbols.rows_where("order", [1])  # (the first derivatives)
        names, bases = symbols.columns(("name", "base"), rows=firsts)
        self.deriv = dict(zip(bases.tolist(), names.tolist()))
        self.made: dict[str, Symbol] = {}  # the derivatives made here (not in symbols), in order
        self.variables = variables  # (their order: the columns of the alias stage)
        self.position = Table(zip(variables, range(len(variables))))
        # a class with a member's fixed start takes an offset or a constant that depends on
        # parameters only from a class without one, so that every fixed start the
        # initializer must check against the model stays in an equation
        n = len(variables)
        differentiated = np.zeros(n, dtype=bool)
        at = np.fromiter(map(self.position.get, self.deriv, repeat(-1)), np.int64, len(self.deriv))
        differentiated[at[at >= 0]] = True
        fields = ("fixed", "start", "state_priority")
        rows = flat.kind_rows["variable"]
        fixed, self.starts, priorities = symbols.columns(fields, rows=rows)
        fixed = self.fixed = fixed.astype(bool)
        self.started = has_start(self.starts)  # (whether each variable has a start value)
        length, dotted = _table_shapes(symbols, rows)
        priorities = priorities.astype(np.int64)
        self.uf = SignedUnionFind(  # (ranked by the derivatives as declared)
            _ranked(length, dotted, priorities, differentiated, fixed, self.started),
            differentiated,
            np.flatnonzero(fixed).tolist(),
        )

    def add_atoms(self, block: cs.SX, held: sp.csr_matrix) -> int:
        """Register the expressions ``block`` as atoms (``held``: their incidence, a 0/1
        matrix whose row ``k`` holds the columns the ``k``-th holds); the first one's
        number."""
        first = self.n_atoms
        self.atoms.append(block)
        self.atom_held.append(held)
        self.n_atoms += block.numel()
        return first

    def terms(self, offsets: Terms, m: int, n: int) -> tuple[cs.SX, sp.csr_matrix, np.ndarray]:
        """The ``m`` offsets ``offsets`` as one vector ``W [1; atoms]`` (``W`` sparse; a
        structural zero where an offset is zero), their incidence in the ``n`` columns
        (:meth:`_held`), and whether each holds an atom (depends on parameters)."""
        rows, cols, weights = offsets
        some = np.unique(rows)  # (the offsets that hold a term; the others' rows are empty)
        exprs = self.products(np.searchsorted(some, rows), cols, weights, len(some))
        spy = cs.Sparsity.triplet(m, 1, some.tolist(), [0] * len(some))
        atoms = np.zeros(m, dtype=bool)
        atoms[rows[cols != 0]] = True
        return cs.SX(spy, exprs), self._held(rows, cols, m, n), atoms

    def products(self, rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n: int) -> cs.SX:
        """``W [1; atoms]``, ``W`` the ``n``-row sparse matrix of the triplets (row,
        column, weight); column 0 the number 1, column ``k + 1`` atom ``k``. Where every
        row is one atom times +-1, those are picked (:func:`.graph.signed_picks`); else
        only the columns in use are multiplied (in order: each row's sum the same)."""
        atoms = vstack([cs.SX(1), *self.atoms])
        if len(rows) == n and (np.abs(weights) == 1).all() and (np.bincount(rows) == 1).all():
            return signed_picks(
                lambda at: column_entries(atoms, at.tolist()), rows, cols, weights, n
            )
        used = np.unique(cols)
        atoms = column_entries(atoms, used.tolist()) if used.size else cs.SX(0, 1)
        at = np.searchsorted(used, cols).tolist()
        W = cs.DM.triplet(rows.tolist(), at, cs.DM(weights), n, len(used))
        return cs.mtimes(W, atoms)

    def _held(self, rows: np.ndarray, cols: np.ndarray, m: int, n: int) -> sp.csr_matrix:
        """A matrix whose row ``i`` holds the columns (of ``n``) of the atoms of the
        ``i``-th of ``m`` offsets (given as the triplets' ``rows`` and ``cols``), each entry
        the number of its atoms that hold the column (a product of 0/1 matrices): the
        offset's incidence where every entry is 1."""
        # the atoms' rows stacked after ONE's, which holds no column (the columns only
        # grow: every atom's below n); each triplet's atom's entries, summed
        blocks = self.atom_held
        sizes = np.concatenate([[0], *(np.diff(b.indptr) for b in blocks)]).astype(np.int64)
        indices = np.concatenate([np.zeros(0, np.int64), *(b.indices for b in blocks)])
        data = np.concatenate([np.zeros(0, np.int64), *(b.data for b in blocks)])
        counts, at = row_entries(np.concatenate([[0], np.cumsum(sizes)]), cols)
        by = (data[at].astype(np.int64), (np.repeat(rows, counts), indices[at]))
        return sp.csr_matrix(by, shape=(m, n))

    def derivative(self, q: str) -> tuple[str, bool]:
        """The name of ``der(q)``, and whether its symbol is new."""
        name = self.deriv.get(q)
        if name is not None:
            return name, False
        record = self.symbols[q].derivative()  # (q is undifferentiated: der(q))
        name = self.deriv[q] = record.name
        self.uf.differentiated[self.position[q]] = True
        self.made[name] = record
        return name, True


def eliminate_aliases(flat: FlatDAE) -> Reduced:
    """Apply alias elimination to ``flat``; see the module docstring."""
    classes = Classes(flat)
    rows = Rows(flat, classes)
    left = np.ones(len(flat.variables), dtype=bool)  # the variables not eliminated
    eliminated: list[np.ndarray] = []  # their positions, pass after pass
    check = np.arange(len(rows.origin))  # rows that may be aliases: all, then those changed
    with_offsets = False  # first plain aliases and numbers, then offsets (module docstring)
    while True:
        aliased = rows.unite(check, classes, with_offsets) if len(check) else set()
        if not aliased:
            if with_offsets or not len(rows.origin):
                break
            with_offsets, check = True, np.flatnonzero(rows.deferred)
            continue
        rows.drop(aliased)
        replaced, fresh = _substitutions(left, classes)
        eliminated.append(replaced.at)
        left[replaced.at] = False
        rows.add_columns(fresh, classes)
        if not rows.alive.any():
            break
        check = rows.substitute(replaced, classes) if replaced.at.size else check[:0]
    rows.compact()
    return _reduced(flat, classes, rows, left, np.concatenate([np.zeros(0, np.int64), *eliminated]))


def _reduced(
    flat: FlatDAE, classes: Classes, rows: Rows, left: np.ndarray, eliminated: np.ndarray
) -> Reduced:
    """The form alias elimination leaves (``left``: which variables are unknowns;
    ``eliminated``: the others' positions, in order): the rows' equations, every
    eliminated variable as ``sign * representative + offset`` in its final form (a
    representative may have been eliminated later), and the classes' start values."""
    at, roots, signs, lins = classes.uf.resolve(eliminated)
    aliases = Aliases(at, roots, signs, *_offset_values(classes, lins, len(at)))
    # (the starts read the aliases of the variables with a start value only)
    table = aliases.table(flat.variables, np.flatnonzero(classes.started[at]))
    starts = merge_starts(flat, classes.starts, classes.fixed, table, rows.values)
    return Reduced(
        flat,
        flat.symbols.extended(classes.made),
        rows.equations(flat),
        rows.residuals,
        tuple(compress(flat.variables, left.tolist())),
        aliases,
        classes.position,
        Table(starts),
        rows.pattern,
        rows.position,
    )


def _substitutions(left: np.ndarray, classes: Classes) -> tuple[Substitution, list[str]]:
    """The variables eliminated since the last pass (of those ``left``, in increasing
    order) and their replacements (:class:`.alias_rows.Substitution`), and the
    representatives' derivatives created on the way."""
    changed = np.fromiter(classes.uf.take_changed(), np.int64)
    changed = np.sort(changed[left[changed]])
    at, roots, signs, offsets = classes.uf.resolve(changed, keep_roots=True)
    variables = classes.variables
    # the derivatives' replacements: +-der(root), or zero (parameters are constant)
    with_der = np.flatnonzero(classes.uf.differentiated[at])
    derivatives = list(
        map(classes.deriv.__getitem__, map(variables.__getitem__, at[with_der].tolist()))
    )
    tops = roots[with_der]
    bases = list(map(classes.deriv.get, map(variables.__getitem__, np.maximum(tops, 0).tolist())))
    for k in np.flatnonzero(tops < 0).tolist():
        bases[k] = None
    fresh = []  # (the roots' derivatives not made yet, made in order)
    missing = np.fromiter(map(is_, bases, repeat(None)), bool, len(bases)) & (tops >= 0)
    for k in np.flatnonzero(missing).tolist():
        bases[k], created = classes.derivative(variables[int(tops[k])])
        if created:
            fresh.append(bases[k])
    return Substitution(at, roots, signs, offsets, with_der, derivatives, bases), fresh


def _offset_values(
    classes: Classes, offsets: Terms, n: int
) -> tuple[np.ndarray, np.ndarray, cs.SX]:
    """The offsets as :class:`Aliases` holds them: each a number where it is one (no atom
    but ONE), else an expression of parameters (all of them made in one product, stacked
    in order), with the place of each in that vector (-1: a number)."""
    rows, cols, weights = offsets
    symbolic = np.zeros(n, dtype=bool)
    symbolic[rows[cols != 0]] = True
    constants = np.zeros(n)
    number = (cols == 0) & ~symbolic[rows]
    constants[rows[number]] = weights[number]
    place = np.cumsum(symbolic) - 1
    on = symbolic[rows]
    exprs = classes.products(place[rows[on]], cols[on], weights[on], int(symbolic.sum()))
    return constants, np.where(symbolic, place, -1), exprs
