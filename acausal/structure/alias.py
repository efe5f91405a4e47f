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
once, as one sparse product ``W [1; h]``, when they are substituted.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import attrgetter, is_, is_not
from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..flat import FlatDAE, FlatEquation, Symbol
from ..symbols import derivative_name, vstack
from ..table import SymbolTable, Table
from .graph import affine_rows, flat_incidence, incidence, replace_rows, substitute_rows
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


class _Classes:
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
    classes = _Classes(flat)
    rows = _Rows(flat, classes)
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
    flat: FlatDAE, classes: _Classes, rows: _Rows, left: np.ndarray, eliminated: np.ndarray
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


class _Rows:
    """The equations left during alias elimination: their residuals and sources, their
    incidence (``pattern``) in the symbols ``columns`` (``allsyms``; ``position``: a
    name's column), and which of them wait for the offsets' passes (``deferred``)."""

    def __init__(self, flat: FlatDAE, classes: _Classes) -> None:
        self.sources = list(map(attrgetter("source"), flat.equations))
        self.residuals = flat.residuals if self.sources else cs.SX(0, 1)
        # every symbol an equation can hold: variables, their derivatives, parameters, time
        unknowns = flat.variables
        derivatives = list(
            map(classes.deriv.get, compress(unknowns, classes.uf.differentiated.tolist()))
        )
        self.columns: list[str | None] = [
            *unknowns,
            *derivatives,
            *flat.parameters,
            *flat.discretes,
            None,  # time
        ]
        self.position = dict(zip(self.columns, range(len(self.columns))))  # (kept up to date)
        self.allsyms = vstack([flat.symbols.take(self.columns[:-1]), flat.t])
        start = len(unknowns) + len(derivatives)
        self.params = (start, start + len(flat.parameters))  # their columns
        params = map(flat.symbols.__getitem__, flat.parameters)
        self.values = np.array(list(map(attrgetter("value"), params)), dtype=float)
        self.n_variables = len(unknowns)  # (the first columns)
        self.pattern = flat_incidence(flat, self.residuals, self.allsyms, self.position)
        self.deferred = np.zeros(len(self.sources), dtype=bool)
        # each row's place in flat.equations, and whether it is as flatten made it; a
        # connection row so is ``+first - other`` (potentials) or a sum (flows): the column
        # of each potential row's first variable (-1: a flow row)
        self.origin = np.arange(len(self.sources))
        self.pristine = np.ones(len(self.sources), dtype=bool)
        entries = flat.connection_entries
        self.n_own = len(self.sources) - (len(entries.indptr) - 1)
        first = [
            self.position[entries.names[a]] if src.kind == "potential" else -1
            for a, src in zip(entries.indptr[:-1].tolist(), self.sources[self.n_own :])
        ]
        self.first = np.array(first, dtype=np.int64)

    def unite(self, check: list[int], classes: _Classes, with_offsets: bool) -> set[int]:
        """Unite alias classes from the alias equations among the rows ``check``; return
        their rows. Without ``with_offsets``: plain aliases ``a = +-b`` and numeric
        constants only (the other candidates are deferred to the passes with it); with
        it, offsets too, and a constant of parameters for a class that only one of these
        rows makes constant (two sources on one node stay equations, which the diagnosis
        names).

        Everything runs on whole vectors: the rows holding one or two unknowns and
        otherwise parameters only (by the incidence), then their :func:`.graph.affine_rows`
        with the parameters as constants. A symbolic Jacobian of the whole system would
        cost one sweep per column of a dense row (a ground node's current balance); per-row
        Python would cost a CasADi call per node."""
        inc = self.pattern[check]
        unknown = np.arange(len(self.columns)) < self.n_variables  # the variables come first
        cand, deferred = self._candidates(check, inc, unknown, with_offsets)
        aliased: set[int] = set()
        if cand:
            rows = self._affine(check, inc, cand, unknown, classes)
            if with_offsets:
                aliased = _unite_offsets(rows, classes.uf)
            else:  # (no row holds a parameter: no atom)
                (at, *plain), later = _plain_rows(rows)
                aliased = set(at[classes.uf.add_plain_rows(*plain)].tolist())
                deferred += later
        self.deferred[check] = False
        self.deferred[deferred] = True
        return aliased

    def _candidates(
        self, check: list[int], inc: sp.csr_matrix, unknown: np.ndarray, with_offsets: bool
    ) -> tuple[list[int], list[int]]:
        """Which of the rows ``check`` (``inc``: their incidence; ``unknown``: which columns
        are variables) hold one or two unknowns and otherwise parameters only, by their
        place in ``check``; and, before the offsets' passes, the rows of those that hold a
        parameter (they wait for those passes)."""
        allowed = unknown.copy()
        allowed[self.params[0] : self.params[1]] = True
        rows_of = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))
        bad = np.zeros(inc.shape[0], dtype=bool)
        np.logical_or.at(bad, rows_of, ~allowed[inc.indices])
        counts = np.bincount(rows_of[unknown[inc.indices]], minlength=inc.shape[0])
        shaped = ((counts == 1) | (counts == 2)) & ~bad
        deferred: list[int] = []
        if not with_offsets:  # a row holding a parameter waits for the offsets' passes
            param = np.bincount(rows_of[~unknown[inc.indices]], minlength=inc.shape[0]) > 0
            deferred = [check[k] for k in np.flatnonzero(shaped & param)]
            shaped &= ~param
        return np.flatnonzero(shaped).tolist(), deferred

    def _affine(
        self,
        check: list[int],
        inc: sp.csr_matrix,
        cand: list[int],
        unknown: np.ndarray,
        classes: _Classes,
    ) -> _Affine:
        """The candidates ``cand`` (places in ``check``) as :class:`_Affine` rows in the
        variables they hold, the parameters constants at their values; the offsets that
        depend on parameters registered as atoms."""
        rows = np.asarray(check, dtype=np.int64)[cand]
        known = self.pristine[rows] & (self.origin[rows] >= self.n_own)
        rest = np.flatnonzero(~known)
        # each candidate's entries (place in cand, column, coefficient), its offset and
        # whether it is affine: connection rows as flatten made them from their kind,
        # the others from their Jacobian (their offsets' atoms registered)
        at, cols, coefs = self._connection_entries(inc, np.asarray(cand), known, rows)
        affine, offsets = np.ones(len(cand), dtype=bool), np.zeros(len(cand))
        atom_of: dict[int, int] = {}
        if rest.size:
            sub = inc[np.asarray(cand)[rest]]
            held = np.flatnonzero(np.bincount(sub.indices, minlength=len(self.columns)))
            x_cols = held[unknown[held]].tolist()
            p_cols = held[~unknown[held]].tolist()
            pv = (
                self.values[np.asarray(p_cols, dtype=np.int64) - self.params[0]] if p_cols else None
            )
            params = self.allsyms[p_cols] if p_cols else None
            res = self.residuals[rows[rest].tolist()]
            lin = affine_rows(res, self.allsyms[x_cols], params, pv, sub[:, x_cols + p_cols])
            with_atom = np.flatnonzero(lin.symbolic)
            first = 0
            if with_atom.size:  # (an atom holds its row's parameters at most)
                atom_held = sub[with_atom] @ sp.diags((~unknown).astype(np.int8), dtype=np.int8)
                atom_held.eliminate_zeros()
                first = classes.add_atoms(lin.expressions[with_atom.tolist()], atom_held)
            atom_of = dict(zip(rest[with_atom].tolist(), range(first, first + with_atom.size)))
            affine[rest], offsets[rest] = lin.affine, lin.offsets
            at = np.concatenate([at, rest[lin.rows]])
            cols = np.concatenate([cols, np.asarray(x_cols, dtype=np.int64)[lin.cols]])
            coefs = np.concatenate([coefs, lin.values])
        order = np.lexsort((cols, at))  # row after row, each in column order
        return _Affine(
            rows,
            np.searchsorted(at[order], np.arange(len(cand) + 1)),
            cols[order],
            coefs[order],
            affine,
            offsets,
            atom_of,
        )

    def _connection_entries(
        self, inc: sp.csr_matrix, cand: np.ndarray, known: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries of the candidates ``cand[known]`` (rows ``rows[known]``, connection
        rows as flatten made them; ``inc``: the incidence of the rows checked), as (place
        in ``cand``, column, coefficient): 1 for each flow of a sum, 1 and -1 for a
        potential row's first and other variable."""
        places = np.flatnonzero(known)
        sub = inc[cand[places]]
        count = np.diff(sub.indptr)
        at = np.repeat(places, count)
        cols = sub.indices.astype(np.int64)
        first = np.repeat(self.first[self.origin[rows[places]] - self.n_own], count)
        coefs = np.where((first >= 0) & (cols != first), -1.0, 1.0)
        return at, cols, coefs

    def equations(self, flat: FlatDAE) -> tuple[FlatEquation, ...]:
        """The rows as equations: ``flat``'s own records where a row is as flatten made it,
        new ones (the changed residuals split) where a substitution changed it."""
        equations = list(map(flat.equations.__getitem__, self.origin.tolist()))
        changed = np.flatnonzero(~self.pristine).tolist()
        if changed:
            split = cs.vertsplit(self.residuals[changed])
            sources = map(self.sources.__getitem__, changed)
            for k, eq in zip(changed, map(FlatEquation, split, sources)):
                equations[k] = eq
        return tuple(equations)

    def drop(self, aliased: set[int]) -> None:
        """Remove the rows ``aliased``."""
        kept = np.ones(len(self.sources), dtype=bool)
        kept[list(aliased)] = False
        keep = np.flatnonzero(kept).tolist()
        self.deferred = self.deferred[keep]
        self.origin, self.pristine = self.origin[keep], self.pristine[keep]
        self.sources = list(map(self.sources.__getitem__, keep))
        self.residuals = self.residuals[keep] if keep else cs.SX(0, 1)
        self.pattern = self.pattern[keep]

    def add_columns(self, fresh: list[str], classes: _Classes) -> None:
        """Columns for the derivatives of representatives ``fresh`` the substitution made."""
        if fresh:
            self.position.update({q: len(self.columns) + k for k, q in enumerate(fresh)})
            self.columns = self.columns + fresh
            new = cs.vertcat(*[classes.made[q].sym for q in fresh])
            self.allsyms = cs.vertcat(self.allsyms, new)
        self.pattern.resize(len(self.sources), len(self.columns))

    def substitute(
        self,
        old: list[str],
        base: list[str | None],
        signs: list[float],
        offsets: list[Lin],
        classes: _Classes,
    ) -> list[int]:
        """Replace the symbols ``old`` by ``sign * base + offset`` (``base`` a
        representative or its derivative; none for a constant) in the rows holding them;
        return those rows. The bases are picked by a sparse product; the rows' new
        incidence is taken in their old columns, the representatives and the offsets'
        parameters only (exact, and no pass over every symbol of the model)."""
        position, columns, allsyms = self.position, self.columns, self.allsyms
        n = len(columns)
        old_at = [position[q] for q in old]
        replaced = np.zeros(n, dtype=bool)
        replaced[old_at] = True
        check = np.nonzero(self.pattern @ replaced.astype(np.int64))[0].tolist()
        on = [k for k, b in enumerate(base) if b is not None]
        at = [position[base[k]] for k in on]
        pick = cs.DM.triplet(on, at, cs.DM([signs[k] for k in on]), len(old), n)
        new = cs.mtimes(pick, allsyms)
        offset = any(map(is_not, offsets, repeat(ZERO)))
        if offset:
            new += classes.expressions(offsets)
        new = cs.densify(new)
        self.residuals = substitute_rows(self.residuals, check, allsyms[old_at], new)
        self.pristine[check] = False
        # a bound of the new pattern: each replaced column's row, the base and the offset's
        # atoms' columns, in the old pattern's rows (0/1 products)
        reach = sp.csr_matrix((np.ones(len(on), dtype=np.int64), (on, at)), shape=(len(old), n))
        if offset:
            reach = reach + classes.held(offsets, n)
        old_rows = self.pattern[check].astype(np.int64)
        bound = (
            old_rows @ sp.diags((~replaced).astype(np.int64), dtype=np.int64)
            + old_rows[:, old_at] @ reach
        )
        bound.eliminate_zeros()
        cols = np.flatnonzero(np.bincount(bound.indices, minlength=n))
        part = incidence(self.residuals[check], allsyms[cols.tolist()], bound[:, cols])
        part = sp.csr_matrix(
            (part.data, cols[part.indices], part.indptr), shape=(len(check), len(columns))
        )
        self.pattern = replace_rows(self.pattern, check, part)
        return check


class _Affine(NamedTuple):
    """Candidate rows as affine equations: the ``k``-th, row ``rows[k]``, holds the
    variables ``held[bounds[k]:bounds[k + 1]]`` (positions) with the coefficients ``coefs``
    there and the offset ``offsets[k]`` (at the parameters' values), where ``affine[k]``
    (no coefficient depends on a variable); ``atom_of``: ``k`` -> the atom of its offset
    where that depends on parameters."""

    rows: np.ndarray
    bounds: np.ndarray
    held: np.ndarray
    coefs: np.ndarray
    affine: np.ndarray
    offsets: np.ndarray
    atom_of: dict[int, int]


def _plain_rows(c: _Affine) -> tuple[tuple[np.ndarray, ...], list[int]]:
    """The first passes' candidates: a row ``ca a + cb b + h = 0`` of two unknowns with an
    offset ``h`` waits for the offsets' passes (returned second); the other affine rows of
    some unknown are plain, returned as arrays ``(rows, a, b, ca, cb, h)`` (``b = -1``: one
    unknown) for :meth:`.SignedUnionFind.add_plain_rows`."""
    count = np.diff(c.bounds)
    some = (count > 0) & c.affine
    offset = some & (count == 2) & (c.offsets != 0)
    keep = np.flatnonzero(some & ~offset)
    first = c.bounds[keep]
    two = count[keep] == 2
    second = np.where(two, first + 1, first)
    b = np.where(two, c.held[second], -1)
    cb = np.where(two, c.coefs[second], 0.0)
    plain = (c.rows[keep], c.held[first], b, c.coefs[first], cb, c.offsets[keep])
    return plain, c.rows[offset].tolist()


def _unite_offsets(c: _Affine, uf: SignedUnionFind) -> set[int]:
    """The offsets' passes: the candidates added to ``uf`` one by one; return the rows
    taken. A constant of parameters is taken only for a class that one row alone would
    make one (two sources on one node stay equations)."""
    starts, held, coefs = c.bounds.tolist(), c.held.tolist(), c.coefs.tolist()
    affine, offsets = c.affine.tolist(), c.offsets.tolist()
    fixing: dict[int, int] = {}  # class root -> rows making it a constant of parameters
    for i in c.atom_of:
        if starts[i + 1] - starts[i] == 1 and affine[i]:
            root = uf.find(held[starts[i]])[0]
            fixing[root] = fixing.get(root, 0) + 1
    aliased: set[int] = set()
    for i, row in enumerate(c.rows.tolist()):
        a, b = starts[i], starts[i + 1]
        if a == b or not affine[i]:
            continue
        qs = held[a:b]
        atom = c.atom_of.get(i)
        value = offsets[i]
        if atom is not None and len(qs) == 1 and fixing.get(uf.find(qs[0])[0], 0) > 1:
            continue
        offset = {atom: 1.0} if atom is not None else {ONE: value} if value else ZERO
        if uf.add_row(qs, coefs[a:b], offset):
            aliased.add(row)
    return aliased


def _substitutions(
    left: np.ndarray, classes: _Classes
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


def _offset_values(classes: _Classes, offsets: list[Lin]) -> list[float | cs.SX]:
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
