"""The equations left during alias elimination (:mod:`.alias`): their residuals, sources
and incidence, which of them are alias candidates, and their substitution.

A candidate holds one or two unknowns and otherwise parameters only (by the incidence);
its coefficients and offset come from :func:`.graph.affine_rows` in a few whole-vector
operations, or, for a connection row as flatten made it, from its kind (``+first - other``
for potentials, a sum for flows), and for an array's row as flatten made it from its
template (:mod:`.alias_templates`: no pass over the instances' rows). An affine row
(constant coefficients) that substitutions changed keeps its coefficients: a
substitution ``x = +-y + offset`` carries each one to the base's column with the sign
(:meth:`Rows._carry`), so only its offset is taken again (no Jacobian). Plain aliases
and numbers are united all at once (:meth:`.SignedUnionFind.add_plain_rows`), rows with
offsets one by one.
"""

from __future__ import annotations

from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..flat import FlatDAE, FlatEquation, Records
from ..symbols import column_entries, scalars, vstack
from ..table import Table
from .alias_templates import Columns, array_pattern, instance_columns, template_rows
from .graph import (
    AffineRows,
    affine_offsets,
    affine_rows,
    csr,
    entry_columns,
    flat_incidence,
    incidence,
    replace_rows,
    row_entries,
    signed_picks,
    substitute_rows,
    take_columns,
    take_rows,
)
from .union_find import ONE, ZERO, SignedUnionFind, Terms

if TYPE_CHECKING:
    from .alias import Classes


class RowEquations(Records):
    """The rows alias elimination left as equations (:class:`FlatEquation` records, made
    only when read): the flat form's record (of ``equations``) of the row each was
    (``origin``) where it is as flatten made it (``pristine``), a new one (its changed
    residual, that record's source) where a substitution changed it."""

    def __init__(
        self, equations: Records, origin: np.ndarray, pristine: np.ndarray, residuals: cs.SX
    ) -> None:
        super().__init__(len(origin))
        self._equations, self._origin, self._pristine = equations, origin, pristine
        self._residuals = residuals

    def _make(self, rows: np.ndarray) -> list[FlatEquation]:
        equations = self._equations.take(self._origin[rows])
        changed = np.flatnonzero(~self._pristine[rows])
        if changed.size:
            split = scalars(column_entries(self._residuals, rows[changed].tolist()))
            for k, residual in zip(changed.tolist(), split):
                equations[k] = FlatEquation(residual, equations[k].source)
        return equations


class Rows:
    """The equations left during alias elimination: their residuals and sources, their
    incidence (``pattern``) in the symbols ``columns`` (:meth:`symbols`; ``position``: a
    name's column), which of them wait for the offsets' passes (``deferred``), which are
    not dropped (``alive``) and the coefficients substitutions carried (``carried``,
    ``form``)."""

    def __init__(self, flat: FlatDAE, classes: Classes) -> None:
        size = len(flat.equations)
        self.residuals = flat.residuals if size else cs.SX(0, 1)
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
        # (kept up to date, as the stage's read-only table of the columns when done: the
        # variables' columns their positions, a copy of the classes', and written here
        # only, through dict's own methods)
        self.position = Table(classes.position)
        n = len(unknowns)
        dict.update(self.position, zip(self.columns[n:], range(n, len(self.columns))))
        # each column's row of the symbol table (the kinds' by index arithmetic) and each
        # table row's column (-1: none)
        kind_rows, index = flat.kind_rows, flat.symbols.index
        table_rows = np.concatenate(
            [
                kind_rows["variable"],
                np.fromiter(map(index.__getitem__, derivatives), np.int64, len(derivatives)),
                kind_rows["parameter"],
                kind_rows["discrete"],
            ]
        )
        # (the columns' symbols: the table's by its stack, time's and the derivatives'
        # made later stacked only where all are needed: :meth:`symbols`)
        self.table_rows, self.stack, self.extra = table_rows, flat.symbols.stack, [flat.t]
        self._allsyms: cs.SX | None = None
        column_of = np.full(len(index), -1, dtype=np.int64)
        column_of[table_rows] = np.arange(len(table_rows))
        start = len(unknowns) + len(derivatives)
        self.params = (start, start + len(flat.parameters))  # their columns
        (values,) = flat.symbols.columns(["value"], rows=kind_rows["parameter"])
        self.values = np.array(values.tolist(), dtype=float)
        self.n_variables = len(unknowns)  # (the first columns)
        # the arrays' rows' incidence and affine rows from their templates (flatten's rows
        # before the connection rows)
        self.templates, arrays = None, None
        if flat.array_templates:
            cols = [
                instance_columns(t, b, column_of, self.position)
                for t, b in zip(flat.array_templates, flat.symbols.blocks)
            ]
            arrays = array_pattern(flat.array_templates, cols, len(self.columns))
            columns = Columns(self.position, self.n_variables, self.params, self.values)
            self.templates = template_rows(flat.array_templates, cols, columns)
        self.pattern = flat_incidence(
            flat, self.residuals, lambda: self.allsyms, self.position, arrays, column_of
        )
        self.deferred = np.zeros(size, dtype=bool)
        self.alive = np.ones(size, dtype=bool)  # (not dropped)
        # the rows changed by substitutions that are affine with their entries in ``form``
        # (a row per row, a column per column), carried through them (:meth:`_carry`)
        self.carried = np.zeros(size, dtype=bool)
        self.form = sp.csr_matrix((size, len(self.columns)))
        # each row's place in flat.equations, and whether it is as flatten made it; a
        # connection row so is ``+first - other`` (potentials) or a sum (flows): the column
        # of each potential row's first variable (-1: a flow row)
        self.origin = np.arange(size)
        self.pristine = np.ones(size, dtype=bool)
        entries = flat.connection_entries
        self.n_own = size - (len(entries.indptr) - 1)
        sources = map(attrgetter("source"), flat.equations[self.n_own :])
        kinds = list(map(attrgetter("kind"), sources))
        potential = np.array(kinds, dtype=object) == "potential"
        self.first = np.full(len(kinds), -1, dtype=np.int64)
        at = entries.indptr[:-1][potential]
        self.first[potential] = entry_columns(entries, self.position, column_of)[at]
        self.array_start = self.n_own - flat.array_rows

    def unite(self, check: np.ndarray, classes: Classes, with_offsets: bool) -> set[int]:
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
        inc = take_rows(self.pattern, check)
        unknown = np.arange(len(self.columns)) < self.n_variables  # the variables come first
        cand, deferred = self._candidates(check, inc, unknown, with_offsets)
        aliased: set[int] = set()
        if cand:
            rows = self._affine(check, inc, cand, classes)
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
        self, check: np.ndarray, inc: sp.csr_matrix, unknown: np.ndarray, with_offsets: bool
    ) -> tuple[list[int], list[int]]:
        """Which of the rows ``check`` (``inc``: their incidence; ``unknown``: which columns
        are variables) hold one or two unknowns and otherwise parameters only, by their
        place in ``check``; and, before the offsets' passes, the rows of those that hold a
        parameter (they wait for those passes)."""
        allowed = unknown.copy()
        allowed[self.params[0] : self.params[1]] = True
        # (each row's entries in some columns counted: their 0/1 flags summed by row)
        row = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))

        def held(flags: np.ndarray) -> np.ndarray:
            return np.bincount(row, flags[inc.indices], inc.shape[0])

        bad = held(~allowed) > 0
        counts = held(unknown)
        shaped = ((counts == 1) | (counts == 2)) & ~bad
        deferred: list[int] = []
        if not with_offsets:  # a row holding a parameter waits for the offsets' passes
            param = held(~unknown) > 0
            deferred = check[shaped & param].tolist()
            shaped &= ~param
        return np.flatnonzero(shaped).tolist(), deferred

    def _affine(
        self, check: np.ndarray, inc: sp.csr_matrix, cand: list[int], classes: Classes
    ) -> _Affine:
        """The candidates ``cand`` (places in ``check``) as :class:`_Affine` rows in the
        variables they hold, the parameters constants at their values; the offsets that
        depend on parameters of the affine ones (no other is united) registered as atoms."""
        rows = check[cand]
        places = np.asarray(cand, dtype=np.int64)
        known = self.pristine[rows] & (self.origin[rows] >= self.n_own)
        # each candidate's entries (place in cand, column, coefficient), its offset and
        # whether it is affine: connection rows as flatten made them from their kind,
        # arrays' rows as flatten made them from their templates, affine rows that
        # substitutions changed from the entries they carried, the others from their
        # Jacobian; then the affine rows' offsets that depend on parameters registered as
        # atoms (numbered in order: the offsets' sums W [1; atoms] are the same)
        entries = [self._connection_entries(inc, places, known, rows)]
        affine, offsets = np.ones(len(cand), dtype=bool), np.zeros(len(cand))
        symbolic = np.zeros(len(cand), dtype=bool)
        from_arrays, array_rows = self._from_templates(rows, known)
        if from_arrays.any():
            arrays, array_rows = np.flatnonzero(from_arrays), array_rows[from_arrays]
            t = self.templates
            entries.append(_entries(t.entries, array_rows, arrays))
            affine[arrays], offsets[arrays] = t.affine[array_rows], t.offsets[array_rows]
            symbolic[arrays] = t.symbolic[array_rows]
        # rows a substitution changed whose entries it carried (:meth:`_carry`), the rest
        tracked = ~known & ~from_arrays & self.carried[rows]
        given = []  # (places, expressions, incidence) of the offsets not from templates
        for group, carried in ((~known & ~from_arrays & ~tracked, False), (tracked, True)):
            group = np.flatnonzero(group)
            if group.size:
                lin, x_cols, p_cols = self._derived(
                    rows[group], take_rows(inc, places[group]), carried
                )
                affine[group], offsets[group] = lin.affine, lin.offsets
                symbolic[group] = lin.symbolic
                entries.append((group[lin.rows], x_cols[lin.cols], lin.values))
                on = np.flatnonzero(lin.symbolic & lin.affine)
                if on.size:
                    exact = _columns(lin.held[on], p_cols, inc.shape[1])
                    given.append((group[on], column_entries(lin.expressions, on.tolist()), exact))
        with_atom = np.flatnonzero(symbolic & affine)
        atom_of: dict[int, int] = {}
        if with_atom.size:
            held = take_rows(inc, places[with_atom])
            first = self._atoms(rows, with_atom, held, from_arrays, given, classes)
            atom_of = dict(zip(with_atom.tolist(), range(first, first + with_atom.size)))
        at, cols, coefs = (np.concatenate(a) for a in zip(*entries))
        order = np.lexsort((cols, at))  # row after row, each in column order
        return _Affine(
            rows,
            np.searchsorted(at[order], np.arange(len(cand) + 1)),
            cols[order].astype(np.int64),
            coefs[order],
            affine,
            offsets,
            atom_of,
        )

    @property
    def allsyms(self) -> cs.SX:
        """Every column's symbol, stacked (made when first read, again after
        :meth:`add_columns`)."""
        if self._allsyms is None:
            self._allsyms = vstack([self.stack[self.table_rows.tolist()], *self.extra])
        return self._allsyms

    def symbols(self, cols: np.ndarray) -> cs.SX:
        """The symbols of the columns ``cols`` (a column vector): one indexing of the
        symbol table's stack where they are all in it (no stacking of every column's)."""
        if not cols.size or cols.max() < len(self.table_rows):
            return column_entries(self.stack, self.table_rows[cols].tolist())
        return column_entries(self.allsyms, cols.tolist())

    def _from_templates(self, rows: np.ndarray, known: np.ndarray) -> tuple[np.ndarray, ...]:
        """Which of the candidates ``rows`` (not ``known``) are arrays' rows as flatten made
        them whose affine rows their templates give, and each one's place among the
        arrays' rows."""
        at = self.origin[rows] - self.array_start
        inside = np.zeros(len(rows), dtype=bool)
        if self.templates is not None:
            covered = self.templates.covered
            inside = ~known & self.pristine[rows] & (at >= 0) & (at < len(covered))
            inside[inside] = covered[at[inside]]
        return inside, at

    def _derived(
        self, rows: np.ndarray, sub: sp.csr_matrix, carried: bool
    ) -> tuple[AffineRows, np.ndarray, np.ndarray]:
        """:class:`.graph.AffineRows` of the rows ``rows`` (``sub``: their incidence) in
        the variables they hold, the parameters they hold constants at their values; and
        the columns of those variables and of those parameters. By
        :func:`.graph.affine_rows`, or, where the entries are ``carried`` (affine rows),
        those and the offsets by :func:`.graph.affine_offsets` (no Jacobian)."""
        held = np.flatnonzero(np.bincount(sub.indices, minlength=len(self.columns)))
        unknown = held < self.n_variables
        x_cols, p_cols = held[unknown], held[~unknown]
        pv = self.values[p_cols - self.params[0]] if p_cols.size else None
        params = self.symbols(p_cols) if p_cols.size else None
        res, x = column_entries(self.residuals, rows.tolist()), self.symbols(x_cols)
        bound = take_columns(sub, np.concatenate([x_cols, p_cols]))
        if not carried:
            return affine_rows(res, x, params, pv, bound), x_cols, p_cols
        off = affine_offsets(res, x, params, pv, bound)
        at, cols, values = _entries(self.form, rows, np.arange(len(rows)))
        local = np.zeros(len(self.columns), dtype=np.int64)
        local[x_cols] = np.arange(len(x_cols))
        affine = np.ones(len(rows), dtype=bool)
        lin = AffineRows(at, local[cols], values, off.values, affine, *off[1:])
        return lin, x_cols, p_cols

    def _atoms(
        self,
        rows: np.ndarray,
        with_atom: np.ndarray,
        held: sp.csr_matrix,
        from_arrays: np.ndarray,
        given: list[tuple[np.ndarray, cs.SX, sp.csr_matrix]],
        classes: Classes,
    ) -> int:
        """Register the offsets of the candidates ``with_atom`` (places among ``rows``;
        ``held``: their incidence) as atoms, in order, with their incidence; return the
        first one's number. The offsets of those not ``from_arrays`` and their incidence
        are ``given`` in groups (places, expressions, incidence), those of the others
        their residuals at zero variables (substituted here, no other row's)."""
        groups = list(given)
        mine = from_arrays[with_atom]
        if mine.any():
            unknown = np.arange(held.shape[1]) < self.n_variables
            sub = take_rows(held, np.flatnonzero(mine))
            cols = np.flatnonzero(np.bincount(sub.indices, minlength=held.shape[1]))
            x, p_cols = self.symbols(cols[unknown[cols]]), cols[~unknown[cols]]
            res = rows[with_atom[mine]].tolist()
            exprs = cs.substitute(self.residuals[res], x, cs.DM.zeros(x.numel()))
            by_p = incidence(exprs, self.symbols(p_cols), take_columns(sub, p_cols))
            groups.append((with_atom[mine], exprs, _columns(by_p, p_cols, held.shape[1])))
        places, exprs, exact = groups[0]
        if len(groups) > 1:  # (merged in the candidates' order)
            order = np.argsort(np.concatenate([g[0] for g in groups])).tolist()
            exprs = vstack([g[1] for g in groups])[order]
            exact = sp.vstack([g[2] for g in groups], format="csr")
            exact = sp.csr_matrix(exact[order])
        return classes.add_atoms(exprs, exact)

    def _connection_entries(
        self, inc: sp.csr_matrix, cand: np.ndarray, known: np.ndarray, rows: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries of the candidates ``cand[known]`` (rows ``rows[known]``, connection
        rows as flatten made them; ``inc``: the incidence of the rows checked), as (place
        in ``cand``, column, coefficient) (:meth:`_kind_entries`)."""
        return self._kind_entries(rows, np.flatnonzero(known), take_rows(inc, cand[known]))

    def _kind_entries(
        self, rows: np.ndarray, places: np.ndarray, sub: sp.csr_matrix | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries of the connection rows ``rows[places]`` as flatten made them
        (``sub``: their incidence, when the caller has it), as (place, column,
        coefficient): 1 for each flow of a sum, 1 and -1 for a potential row's first and
        other variable."""
        if sub is None:
            sub = take_rows(self.pattern, rows[places])
        count = np.diff(sub.indptr)
        at = np.repeat(places, count)
        cols = sub.indices.astype(np.int64)
        first = np.repeat(self.first[self.origin[rows[places]] - self.n_own], count)
        coefs = np.where((first >= 0) & (cols != first), -1.0, 1.0)
        return at, cols, coefs

    def equations(self, flat: FlatDAE) -> RowEquations:
        """The rows as equations (:class:`RowEquations`: their records made when read)."""
        return RowEquations(flat.equations, self.origin, self.pristine, self.residuals)

    def drop(self, aliased: set[int]) -> None:
        """Mark the rows ``aliased`` removed (:meth:`compact` removes them: each pass's
        rows keep their places, no re-indexing of every row per pass)."""
        self.alive[list(aliased)] = False

    def compact(self) -> None:
        """Remove the rows dropped."""
        keep = np.flatnonzero(self.alive)
        self.alive, self.deferred = self.alive[keep], self.deferred[keep]
        self.origin, self.pristine = self.origin[keep], self.pristine[keep]
        self.residuals = column_entries(self.residuals, keep.tolist()) if keep.size else cs.SX(0, 1)
        self.pattern = take_rows(self.pattern, keep)

    def add_columns(self, fresh: list[str], classes: Classes) -> None:
        """Columns for the derivatives of representatives ``fresh`` the substitution made."""
        if fresh:
            n = len(self.columns)
            dict.update(self.position, zip(fresh, range(n, n + len(fresh))))
            self.columns = self.columns + fresh
            self.extra += [classes.made[q].sym for q in fresh]
            self._allsyms = None
        self.pattern.resize(len(self.origin), len(self.columns))
        self.form.resize(len(self.origin), len(self.columns))

    def substitute(self, replaced: Substitution, classes: Classes) -> np.ndarray:
        """Apply the :class:`Substitution` ``replaced`` to the rows holding its symbols;
        return those rows. The bases are picked with their signs
        (:func:`.graph.signed_picks`); the rows' new incidence follows
        (:meth:`_substituted_pattern`)."""
        position = self.position
        n = len(self.columns)
        # (a variable's column is its position; the derivatives' by name)
        old_at = np.concatenate([replaced.at, _columns_of(position, replaced.derivatives)])
        bases = np.concatenate([replaced.roots, _columns_of(position, replaced.bases)])
        signs = np.concatenate([replaced.signs, replaced.signs[replaced.with_der]])
        replaced_cols = np.zeros(n, dtype=np.int64)
        replaced_cols[old_at] = 1
        check = np.flatnonzero((self.pattern @ replaced_cols > 0) & self.alive)
        on = np.flatnonzero(bases >= 0)
        at = bases[on]
        new = signed_picks(self.symbols, on, at, signs[on], len(old_at))
        offset = replaced.offsets.rows.size > 0  # (the derivatives' offsets are zero)
        if offset:
            exprs, held, with_atoms = classes.terms(replaced.offsets, len(old_at), n)
            new += exprs
        new = cs.densify(new)
        before = self._forms(check)
        self.residuals = substitute_rows(self.residuals, check.tolist(), self.symbols(old_at), new)
        self.pristine[check] = False
        # what each replaced symbol brings: its base and its offset's atoms' columns (0/1);
        # whether it holds a symbol (a base or an atom: no number, which could cancel terms)
        sure = bases >= 0  # (a row each: ``on`` are those rows, in order)
        indptr = np.concatenate([[0], np.cumsum(sure)])
        reach = csr(np.ones(len(on), dtype=np.int64), at, indptr, (len(old_at), n))
        if offset:
            reach = reach + held
            sure |= with_atoms
        part = self._substituted_pattern(check, old_at, reach, sure)
        self.pattern = replace_rows(self.pattern, check, part)
        self._carry(check, before, part, (old_at, bases, signs))
        return check

    def _forms(self, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """Which of the rows ``rows`` are affine (constant entries) by what is known of
        them without a Jacobian, and their entries then as (place in ``rows``, column,
        coefficient): connection and arrays' rows as flatten made them from their kind
        and templates, the others as substitutions carried them (:attr:`carried`)."""
        kind = self.pristine[rows] & (self.origin[rows] >= self.n_own)
        arrays, at = self._from_templates(rows, kind)
        parts = [self._kind_entries(rows, np.flatnonzero(kind))]
        if arrays.any():
            arrays[arrays] = self.templates.affine[at[arrays]]
            places = np.flatnonzero(arrays)
            parts.append(_entries(self.templates.entries, at[places], places))
        carried = ~self.pristine[rows] & self.carried[rows]
        if carried.any():
            places = np.flatnonzero(carried)
            parts.append(_entries(self.form, rows[places], places))
        return (kind | arrays | carried, *(np.concatenate(a) for a in zip(*parts)))

    def _carry(
        self,
        check: np.ndarray,
        before: tuple[np.ndarray, ...],
        part: sp.csr_matrix,
        replaced: tuple[np.ndarray, np.ndarray, np.ndarray],
    ) -> None:
        """Carry the entries of the rows ``check`` through their substitution: ``before``,
        which of them are affine and their entries (:meth:`_forms`); ``replaced``, the
        columns replaced, their bases (-1: none) and signs. A base's entry is its
        symbol's times the sign (exactly what the Jacobian of the substituted row gives:
        a change of sign along every path); a row stays carried where no two of its
        entries meet in one column (a sum of entries: left to its Jacobian) and its new
        incidence ``part`` holds exactly the entries' variables."""
        affine, at, cols, coefs = before
        old_at, bases, signs = replaced
        n, rows = len(self.columns), np.arange(len(check))
        to, scale = np.arange(n), np.ones(n)
        to[old_at], scale[old_at] = bases, signs
        new = to[cols]
        on = new >= 0
        keys = at[on] * n + new[on]
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        values = (coefs * scale[cols])[on][order]
        at, cols = np.divmod(keys, n)
        indptr = np.searchsorted(at, np.arange(len(check) + 1))
        after = csr(values, cols, indptr, (len(check), n))
        by = np.repeat(rows, np.diff(part.indptr))
        on = (part.indices < self.n_variables) & affine[by]  # (the others carry nothing)
        theirs = np.sort(by[on] * n + part.indices[on])
        bad = at[1:][keys[1:] == keys[:-1]]
        if not np.array_equal(keys, theirs):
            bad = np.concatenate([bad, np.setxor1d(keys, theirs) // n])
        affine[bad] = False
        self.carried[check] = affine
        self.form = replace_rows(self.form, check, after)

    def _substituted_pattern(
        self, check: np.ndarray, old_at: np.ndarray, reach: sp.csr_matrix, sure: np.ndarray
    ) -> sp.csr_matrix:
        """The incidence of the rows ``check`` after the symbols in the columns ``old_at``
        were replaced (``reach``: the columns each brings, exactly; ``sure``: whether it is
        replaced by an expression of symbols). Their bound, from the old pattern, counts
        the symbols that reach each column; a row whose replaced symbols are all ``sure``
        and whose columns are each reached once holds its bound exactly (no two terms can
        cancel, no number can annul a term); the others' incidence is CasADi's, taken in
        the bound's columns only (no pass over every symbol of the model)."""
        n = len(self.columns)
        kept = np.ones(n, dtype=np.int64)
        kept[old_at] = 0
        old_rows = take_rows(self.pattern, check).astype(np.int64)
        through = take_columns(old_rows, old_at)  # (each row's replaced symbols)
        on_kept = old_rows.data * kept[old_rows.indices]  # (the old rows without those)
        bound = csr(on_kept, old_rows.indices, old_rows.indptr, old_rows.shape)
        bound = bound + through @ reach
        bound.eliminate_zeros()
        bound.sort_indices()
        many = np.repeat(np.arange(len(check)), np.diff(bound.indptr))[bound.data > 1]
        unsure = through @ ~sure > 0
        unsure[many] = True  # (a column reached twice)
        part = csr(np.ones(bound.nnz, dtype=np.int8), bound.indices, bound.indptr, bound.shape)
        rest = np.flatnonzero(unsure).tolist()
        if rest:
            sub = take_rows(bound, rest)
            cols = np.flatnonzero(np.bincount(sub.indices, minlength=n))
            res = column_entries(self.residuals, check[rest].tolist())
            got = incidence(res, self.symbols(cols), take_columns(sub, cols))
            part = replace_rows(part, rest, _columns(got, cols, n))
        return part


class Substitution(NamedTuple):
    """Symbols to replace by ``sign * base + offset``: the variables ``at`` (their
    positions, which are their columns) by their representatives ``roots`` (-1: none, a
    constant) with ``signs`` and ``offsets`` (:class:`.union_find.Terms`, a row per
    variable); and the derivatives (names) of those of them
    that are differentiated (``with_der``: their places in ``at``) by the derivatives of
    their representatives ``bases`` (names; None: zero) with the same signs and no
    offset."""

    at: np.ndarray
    roots: np.ndarray
    signs: np.ndarray
    offsets: Terms
    with_der: np.ndarray
    derivatives: list[str]
    bases: list[str | None]


def _columns_of(position: dict[str | None, int], names: list[str | None]) -> np.ndarray:
    """The columns of ``names`` (-1 for None)."""
    cols = [-1 if q is None else position[q] for q in names]
    return np.array(cols, dtype=np.int64)


class _Affine(NamedTuple):
    """Candidate rows as affine equations: the ``k``-th, row ``rows[k]``, holds the
    variables ``held[bounds[k]:bounds[k + 1]]`` (positions) with the coefficients ``coefs``
    there and the offset ``offsets[k]`` (at the parameters' values), where ``affine[k]``
    (no coefficient depends on a variable); ``atom_of``: ``k`` -> the atom of its offset
    where that depends on parameters and the row is affine."""

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
    offsets = c.offsets.tolist()
    fixing: dict[int, int] = {}  # class root -> rows making it a constant of parameters
    at = np.fromiter(c.atom_of, np.int64, len(c.atom_of))
    for i in at[(np.diff(c.bounds)[at] == 1) & c.affine[at]].tolist():
        root = uf.find(held[starts[i]])[0]
        fixing[root] = fixing.get(root, 0) + 1
    aliased, done = _star_rows(c, uf)  # (the rows of two variables, where they are stars)
    rows = c.rows.tolist()
    for i in np.flatnonzero(c.affine & (np.diff(c.bounds) > 0) & ~done).tolist():
        a, b, row = starts[i], starts[i + 1], rows[i]
        qs = held[a:b]
        atom = c.atom_of.get(i)
        value = offsets[i]
        if atom is not None and len(qs) == 1 and fixing.get(uf.find(qs[0])[0], 0) > 1:
            continue
        offset = {atom: 1.0} if atom is not None else {ONE: value} if value else ZERO
        if uf.add_row(qs, coefs[a:b], offset):
            aliased.add(row)
    return aliased


def _star_rows(c: _Affine, uf: SignedUnionFind) -> tuple[set[int], np.ndarray]:
    """The affine candidates of two variables added to ``uf`` all at once where they form
    stars (:meth:`.SignedUnionFind.add_star_rows`) and no candidate of one variable holds
    one of theirs (so that the two kinds touch other classes, in any order): the rows
    taken, and which candidates were so added (none where they are not so)."""
    count = np.diff(c.bounds)
    first = c.bounds[:-1]
    on = c.affine & (count == 2)
    done = np.zeros(len(c.rows), dtype=bool)
    single = c.held[first[c.affine & (count == 1)]]
    pairs = np.flatnonzero(on)
    a, b = c.held[first[pairs]], c.held[first[pairs] + 1]
    if not pairs.size or np.isin(np.concatenate([a, b]), single).any():
        return set(), done
    atoms = np.where(c.offsets != 0, ONE, ONE - 1)  # (a number, or no term)
    atoms[list(c.atom_of)] = list(c.atom_of.values())
    weights = np.where(atoms >= 0, 1.0, c.offsets)[pairs]
    ka, kb = c.coefs[first[pairs]], c.coefs[first[pairs] + 1]
    taken = uf.add_star_rows(a, b, ka, kb, atoms[pairs], weights)
    if taken is None:
        return set(), done
    done[pairs] = True
    return set(c.rows[pairs[taken]].tolist()), done


def _entries(
    matrix: sp.csr_matrix, picked: np.ndarray, places: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The entries of the rows ``picked`` of ``matrix`` as (place, column, value), the
    ``k``-th row's place ``places[k]``."""
    counts, at = row_entries(matrix.indptr, picked)
    return np.repeat(places, counts), matrix.indices[at], matrix.data[at]


def _columns(pattern: sp.csr_matrix, cols: np.ndarray, n: int) -> sp.csr_matrix:
    """A pattern in the columns ``cols`` (of ``n``) placed in those columns."""
    shape = (pattern.shape[0], n)
    return csr(pattern.data, cols[pattern.indices], pattern.indptr, shape)
