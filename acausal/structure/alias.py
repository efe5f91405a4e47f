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
from itertools import compress, repeat
from operator import attrgetter, is_

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..flat import FlatDAE, FlatEquation, Symbol
from ..symbols import derivative_name
from ..table import SymbolTable, Table
from .alias_rows import Rows
from .starts import merge_starts
from .union_find import ONE, ZERO, Lin, SignedUnionFind, holds_atoms


@dataclass(frozen=True, eq=False)
class Reduced:
    """Equations and unknowns (names) left after alias elimination; ``symbols`` is the flat
    table plus the derivatives of representatives that the substitution created."""

    flat: FlatDAE
    symbols: SymbolTable
    equations: tuple[FlatEquation, ...]
    residuals: cs.SX  # the equations' residuals stacked (indexed, not re-stacked, by later stages)
    unknowns: tuple[str, ...]
    eliminated: Table  # variable -> starts.Alias: (sign, representative or None, constant)
    members: Table  # representative -> other members (tuple)
    starts: Table  # representative -> Start
    # the equations' incidence (0/1, a row per equation) in the symbols whose names
    # ``pattern_position`` maps to their columns, in column order (None: time), as alias
    # elimination left it; saves the next stage recomputing it
    pattern: sp.csr_matrix | None = None
    pattern_position: Table = field(default_factory=Table)

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
    # the local name: after the component's and a dot
    start = np.fromiter(map(len, map(attrgetter("component"), symbols)), np.int64, n) + 1
    length = np.maximum(np.fromiter(map(len, names), np.int64, n) - start, 0)
    dotted = np.fromiter(map(str.find, names, repeat("."), start.tolist()), np.int64, n) >= 0
    keys = (  # the last the first criterion (numpy's lexsort)
        np.arange(n),
        length,
        dotted,
        np.fromiter(map(is_, map(attrgetter("start"), symbols), repeat(None)), bool, n),
        -np.fromiter(map(attrgetter("state_priority"), symbols), np.int64, n),
        ~np.fromiter(map(attrgetter("fixed"), symbols), bool, n),
        ~np.fromiter(map(differentiated.__contains__, names), bool, n),
    )
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort(keys)] = np.arange(n)
    return rank


class Classes:
    """Alias classes under construction: the union-find of the variables (by their
    position in ``flat.variables``; ``records``: their symbols), the offsets' atoms, and
    the derivatives of representatives made on the way (``made``)."""

    def __init__(self, flat: FlatDAE) -> None:
        variables = flat.variables
        records = self.records = list(map(flat.symbols.__getitem__, variables))
        self.symbols = flat.symbols
        self.atoms: list[cs.SX] = []  # blocks of atom expressions, atom k at position k
        self.n_atoms = 0
        # each atom's row: the columns (parameters) it may hold, blocks as registered
        self.atom_held: list[sp.csr_matrix] = []
        self.deriv = {s.base: s.name for s in flat.symbols.values() if s.order == 1}
        self.made: dict[str, Symbol] = {}  # the derivatives made here (not in symbols), in order
        self.variables = variables  # (their order: the columns of the alias stage)
        self.position = dict(zip(variables, range(len(variables))))
        # a class with a member's fixed start takes an offset or a constant that depends on
        # parameters only from a class without one, so that every fixed start the
        # initializer must check against the model stays in an equation
        self.uf = SignedUnionFind(
            preference_ranks(records, self.deriv),  # (the derivatives as declared)
            list(map(self.deriv.__contains__, variables)),
            [k for k, s in enumerate(records) if s.fixed],
        )

    def resolve(
        self, qs: np.ndarray, keep_roots: bool = False
    ) -> tuple[list[str], list[str | None], list[float], list[Lin]]:
        """:meth:`.SignedUnionFind.resolve` of the variables at positions ``qs``, by name."""
        variables = self.variables
        qs, roots, signs, offsets = self.uf.resolve(qs, keep_roots)
        named = [None if r is None else variables[r] for r in roots]
        return [variables[k] for k in qs], named, signs, offsets

    def add_atoms(self, block: cs.SX, held: sp.csr_matrix) -> int:
        """Register the expressions ``block`` as atoms (``held``: a 0/1 matrix whose row
        ``k`` holds the columns the ``k``-th may hold); the first one's number."""
        first = self.n_atoms
        self.atoms.append(block)
        self.atom_held.append(held)
        self.n_atoms += block.numel()
        return first

    def expressions(self, offsets: list[Lin]) -> cs.SX:
        """The offsets as one vector: ``W [1; atoms]``, ``W`` sparse."""
        rows, cols, weights = _triplets(offsets)
        atoms = cs.vertcat(cs.SX(1), *self.atoms)
        W = cs.DM.triplet(rows, cols, cs.DM(weights), len(offsets), atoms.numel())
        return cs.mtimes(W, atoms)

    def held(self, offsets: list[Lin], n: int) -> sp.csr_matrix:
        """A 0/1 matrix whose row ``i`` holds the columns (of ``n``) that the ``i``-th
        offset may hold: its atoms' (a product of 0/1 matrices)."""
        rows, cols, _ = _triplets(offsets)
        by_atom = sp.csr_matrix((len(offsets), self.n_atoms + 1), dtype=np.int64)
        if rows:
            ones = np.ones(len(rows), dtype=np.int64)
            by_atom = sp.csr_matrix((ones, (rows, cols)), shape=by_atom.shape)
        blocks = [sp.csr_matrix((1, n), dtype=np.int64)]  # (ONE holds no column)
        for block in self.atom_held:
            block = sp.csr_matrix(block, dtype=np.int64)
            block.resize(block.shape[0], n)
            blocks.append(block)
        return sp.csr_matrix(by_atom @ sp.vstack(blocks, format="csr"))

    def derivative(self, q: str) -> tuple[str, bool]:
        """The name of ``der(q)``, and whether its symbol is new."""
        name = self.deriv.get(q)
        if name is not None:
            return name, False
        name = self.deriv[q] = derivative_name(q)
        self.uf.differentiated[self.position[q]] = True
        base = self.symbols[q]
        sym = cs.SX.sym(derivative_name(base.sym.name()))  # named as der() would name it
        self.made[name] = Symbol(name, "derivative", sym, base.component, base=q, order=1)
        return name, True


def eliminate_aliases(flat: FlatDAE) -> Reduced:
    """Apply alias elimination to ``flat``; see the module docstring."""
    classes = Classes(flat)
    rows = Rows(flat, classes)
    left = np.ones(len(flat.variables), dtype=bool)  # the variables not eliminated
    eliminated: list[np.ndarray] = []  # their positions, pass after pass
    check = list(range(len(rows.sources)))  # rows that may be aliases: all, then those changed
    with_offsets = False  # first plain aliases and numbers, then offsets (module docstring)
    while True:
        aliased = rows.unite(check, classes, with_offsets) if check else set()
        if not aliased:
            if with_offsets or not rows.sources:
                break
            with_offsets, check = True, np.flatnonzero(rows.deferred).tolist()
            continue
        rows.drop(aliased)
        old, base, signs, offsets, fresh, gone = _substitutions(left, classes)
        eliminated.append(gone)
        left[gone] = False
        rows.add_columns(fresh, classes)
        if not rows.sources:
            break
        check = rows.substitute(old, base, signs, offsets, classes) if old else []
    return _reduced(flat, classes, rows, left, np.concatenate([np.zeros(0, np.int64), *eliminated]))


def _reduced(
    flat: FlatDAE, classes: Classes, rows: Rows, left: np.ndarray, eliminated: np.ndarray
) -> Reduced:
    """The form alias elimination leaves (``left``: which variables are unknowns;
    ``eliminated``: the others' positions, in order): the rows' equations, every
    eliminated variable as ``sign * representative + offset`` in its final form (a
    representative may have been eliminated later), the classes' members and start
    values."""
    gone, roots, signs, lins = classes.resolve(eliminated)
    members: dict[str, list[str]] = {}
    for q, root in zip(gone, roots):
        if root is not None:
            members.setdefault(root, []).append(q)
    offsets = _offset_values(classes, lins)
    table = Table(zip(gone, zip(signs, roots, offsets)))
    starts = merge_starts(flat, classes.records, table, rows.values)
    return Reduced(
        flat,
        flat.symbols.extended(classes.made),
        rows.equations(flat),
        rows.residuals,
        tuple(compress(flat.variables, left.tolist())),
        table,
        Table(zip(members, map(tuple, members.values()))),
        Table(starts),
        rows.pattern,
        Table(rows.position),
    )


def _substitutions(
    left: np.ndarray, classes: Classes
) -> tuple[list[str], list[str | None], list[float], list[Lin], list[str], np.ndarray]:
    """The variables eliminated since the last pass and their replacements.

    Returns the names of the symbols to replace (variables and their derivatives) and
    their replacements ``sign * base + offset`` as three lists (``base``: the name of a
    representative or of its derivative, None for zero), the representatives'
    derivatives created on the way, and the positions of the newly eliminated variables
    (of those ``left``, in increasing order).
    """
    changed = np.fromiter(classes.uf.take_changed(), np.int64)
    changed = np.sort(changed[left[changed]])
    gone, roots, signs, offsets = classes.resolve(changed, keep_roots=True)
    old, fresh = list(gone), []
    dbase: list[str | None] = []  # the derivatives' replacements: +-der(root), or zero
    dsigns: list[float] = []
    for q, root, s in zip(gone, roots, signs):
        dq = classes.deriv.get(q)
        if dq is None:
            continue
        old.append(dq)
        if root is not None:
            root, created = classes.derivative(root)
            if created:
                fresh.append(root)
        dbase.append(root)
        dsigns.append(s)
    at = list(map(classes.position.__getitem__, gone))
    dzero = [ZERO] * len(dbase)
    return old, roots + dbase, signs + dsigns, offsets + dzero, fresh, np.array(at, np.int64)


def _triplets(offsets: list[Lin]) -> tuple[list[int], list[int], list[float]]:
    """The offsets as the triplets (offset, atom + 1, weight) of a sparse matrix whose
    column 0 is the number 1 (:data:`ONE`)."""
    rows: list[int] = []
    cols: list[int] = []
    weights: list[float] = []
    for i, lin in enumerate(offsets):
        if lin is not ZERO:  # (most are: no call into the mapping)
            rows += [i] * len(lin)
            cols += [k + 1 for k in lin]
            weights += lin.values()
    return rows, cols, weights


def _offset_values(classes: Classes, offsets: list[Lin]) -> list[float | cs.SX]:
    """Each offset as a number when it is one (no atom but ONE), else an expression of
    parameters (all of them made in one product)."""
    out: list[float | cs.SX] = [0.0] * len(offsets)
    symbolic: list[int] = []
    for k, lin in enumerate(offsets):
        if lin is ZERO:  # (most are: no call into the mapping)
            continue
        if holds_atoms(lin):
            symbolic.append(k)
        else:
            out[k] = lin.get(ONE, 0.0)
    if symbolic:
        exprs = cs.vertsplit(classes.expressions([offsets[k] for k in symbolic]))
        for k, e in zip(symbolic, exprs):
            out[k] = e
    return out
