"""Bipartite equation-variable graphs: incidence, maximum matching, Dulmage-Mendelsohn.

The incidence matrix has a row per equation and a column per unknown, nonzero where the
unknown occurs in the equation. A maximum matching pairs equations with unknowns they
contain (scipy's Hopcroft-Karp). The Dulmage-Mendelsohn decomposition splits an imperfect
matching into an over-determined part (equations reachable from an unmatched equation by
alternating paths) and an under-determined part (unknowns reachable from an unmatched
unknown); these are what a structurally singular model's error message names.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from ..flat import Entries, FlatDAE, display_name
from ..symbols import column_entries, vstack

#: Buckets of rows by which :func:`incidence` finds the columns held by many rows.
BUCKETS = 64


#: The largest index scipy keeps in 32 bits.
INT32_MAX = np.iinfo(np.int32).max
#: How many entries a matrix's ``str`` shows: scipy's default, as its constructor sets it.
MAXPRINT = sp.csr_matrix((0, 0)).maxprint


def csr(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple[int, int]
) -> sp.csr_matrix:
    """The csr matrix of the arrays ``data``, ``indices`` and ``indptr`` (of ``shape``),
    as ``sp.csr_matrix((data, indices, indptr), shape=shape)`` makes it (the index
    arrays 32-bit where every index and count fits, else 64-bit) but without its checks
    of the arrays (a pass over them each, most of a small matrix's cost): the caller's
    arrays must be a valid pattern (``indptr`` of ``shape[0] + 1`` nondecreasing counts,
    every index below ``shape[1]``)."""
    fits = max(shape[0], shape[1], len(indices)) <= INT32_MAX
    kind = np.int32 if fits else np.int64
    out = sp.csr_matrix.__new__(sp.csr_matrix)
    out.maxprint, out.data = MAXPRINT, np.asarray(data)
    out.indices, out.indptr = indices.astype(kind, copy=False), indptr.astype(kind, copy=False)
    out._shape = (int(shape[0]), int(shape[1]))
    return out


def no_entries(n: int, m: int) -> sp.csr_matrix:
    """The ``n`` x ``m`` 0/1 matrix without entries, as ``sp.csr_matrix((n, m),
    dtype=np.int8)`` makes it (:func:`csr`: no checks)."""
    return csr(np.zeros(0, dtype=np.int8), np.zeros(0, np.int64), np.zeros(n + 1, np.int64), (n, m))


def incidence(
    residuals: list[cs.SX] | cs.SX,
    columns: list[cs.SX] | cs.SX,
    bound: sp.spmatrix | None = None,
) -> sp.csr_matrix:
    """Sparse 0/1 matrix: rows are residuals, columns are the given symbols (lists of
    scalars or column vectors).

    CasADi's ``jacobian_sparsity`` colors the columns (or rows) of the pattern, which is
    quadratic when some row holds many columns and some column is held by many rows (a
    ground's current balance and its potential: 100 s at 300,000 rows). So on large
    matrices the columns held by many rows are found first, from the pattern of the
    residuals summed into :data:`BUCKETS` groups (the rows in a fixed pseudo-random order,
    so that a model's period cannot put all the rows of a column into a few groups; a
    column in more than half of the groups, held by some 45 rows or more, is dense), and
    the pattern is taken in two parts, the sparse columns and the dense ones, each fast.
    The groups' pattern and the whole one come from one CasADi function of both (building
    the function, a sort of every node, costs as much as a sparsity pass). A caller that
    knows a ``bound``, a matrix of the result's shape whose nonzeros hold the pattern's,
    saves the groups: a column that ``bound`` holds in more than ``BUCKETS // 2`` rows
    is dense."""
    res = residuals if isinstance(residuals, cs.SX) else cs.vertcat(*residuals)
    cols = columns if isinstance(columns, cs.SX) else cs.vertcat(*columns)
    n, m = res.numel(), cols.numel()
    if n == 0 or m == 0:
        return no_entries(n, m)
    if min(n, m) <= 8 * BUCKETS:  # few rows or columns: no coloring to fear
        return pattern(res, cols)
    if bound is not None:
        dense = np.bincount(sp.csr_matrix(bound).indices, minlength=m) > BUCKETS // 2
        return _split_pattern(res, cols, dense) if dense.any() else pattern(res, cols)
    # row order[j] into group j mod BUCKETS (no periodic aliasing), the groups' sums G res
    order = np.random.default_rng(0).permutation(n).tolist()
    groups = cs.DM(cs.Sparsity.triplet(BUCKETS, n, [j % BUCKETS for j in range(n)], order), 1)
    free = {"allow_free": True}  # (symbols outside ``cols`` are constants here)
    both = cs.Function("incidence", [cols], [res, cs.mtimes(groups, res)], free)
    held = np.diff(np.asarray(both.sparsity_jac(0, 1).colind()))  # (rows per column)
    dense = held > BUCKETS // 2
    if not dense.any():
        return _matrix(both.sparsity_jac(0, 0), n, m)
    return _split_pattern(res, cols, dense)


def _split_pattern(res: cs.SX, cols: cs.SX, dense: np.ndarray) -> sp.csr_matrix:
    """:func:`pattern` of ``res`` in ``cols`` taken in two parts, the columns not
    ``dense`` and the dense ones (each part's sparsity pass fast)."""
    n, m = res.numel(), cols.numel()
    parts = [np.nonzero(~dense)[0], np.nonzero(dense)[0]]
    split = cs.Function("incidence", [cols[p.tolist()] for p in parts], [res], {"allow_free": True})
    blocks = [_matrix(split.sparsity_jac(k, 0), n, len(p)).tocsc() for k, p in enumerate(parts)]
    out = sp.hstack(blocks, format="csc")
    position = np.empty(m, dtype=np.int64)
    position[np.concatenate(parts)] = np.arange(m)
    return out[:, position].tocsr()


def pattern(res: cs.SX, cols: cs.SX) -> sp.csr_matrix:
    """CasADi's Jacobian sparsity of ``res`` in ``cols`` as a 0/1 matrix: :func:`incidence`
    without its guard against a dense row meeting a dense column."""
    return _matrix(cs.jacobian_sparsity(res, cols), res.numel(), cols.numel())


def _matrix(spy: cs.Sparsity, n: int, m: int) -> sp.csr_matrix:
    """A CasADi sparsity pattern of shape ``(n, m)`` as a 0/1 matrix (its transpose's
    compressed columns are the rows: no conversion in scipy)."""
    rows = spy.T
    indptr = np.asarray(rows.colind(), dtype=np.int64)
    col = np.asarray(rows.row(), dtype=np.int64)
    data = np.ones(len(col), dtype=np.int8)
    return csr(data, col, indptr, (n, m))


def row_entries(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``rows`` (in that order) of a compressed matrix whose rows' entries start
    at ``indptr``, as the number of entries of each and the places of those entries in
    the matrix's ``indices`` and ``data``, row after row."""
    start = indptr[rows]
    counts = indptr[rows + 1] - start
    ends = np.cumsum(counts)
    places = np.arange(ends[-1] if ends.size else 0) + np.repeat(start - (ends - counts), counts)
    return counts, places


def take_rows(matrix: sp.csr_matrix, rows: np.ndarray) -> sp.csr_matrix:
    """The rows ``rows`` (integers) of ``matrix`` in that order, as scipy's row indexing
    gives them, by a few gathers (one matrix made, none of indexing's checks)."""
    counts, places = row_entries(matrix.indptr, np.asarray(rows, dtype=np.int64))
    indptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    data, indices = matrix.data[places], matrix.indices[places]
    return csr(data, indices, indptr, (len(counts), matrix.shape[1]))


def take_columns(matrix: sp.csr_matrix, cols: np.ndarray | list[int]) -> sp.csr_matrix:
    """The columns ``cols`` (distinct integers) of ``matrix`` in that order, as scipy's
    column indexing gives them (each row's entries in their old order), by a mask of the
    entries (one matrix made, none of indexing's checks)."""
    n = len(cols)
    local = np.full(matrix.shape[1], -1, dtype=np.int64)
    local[cols] = np.arange(n)
    at = local[matrix.indices]
    keep = at >= 0
    indptr = np.concatenate([[0], np.cumsum(keep)])[matrix.indptr]
    data, indices = matrix.data[keep], at[keep]
    return csr(data, indices, indptr, (matrix.shape[0], n))


class AffineForm(NamedTuple):
    """The Jacobian of residuals ``r(x, c)`` in the symbols ``x`` as triplets (``rows``,
    ``cols``) and its entries ``nz``, whether each row is ``affine`` (no entry of it
    depends on ``x`` or ``c``), the offsets ``r(0, c)`` as ``expressions`` and whether
    each depends on ``c`` (``symbolic``; ``held``: the offsets' incidence in ``c``), and
    ``function``, ``(x, c) -> (nz, r)``: what :func:`affine_rows` evaluates."""

    rows: np.ndarray
    cols: np.ndarray
    nz: cs.SX
    affine: np.ndarray
    symbolic: np.ndarray
    expressions: cs.SX
    held: sp.csr_matrix
    function: cs.Function


def affine_form(res: cs.SX, x: cs.SX, c: cs.SX, bound: sp.spmatrix | None = None) -> AffineForm:
    """:class:`AffineForm` of ``res`` in ``x`` with the constants ``c`` (see
    :func:`affine_rows`, ``bound`` too)."""
    n = res.numel()
    jac = cs.jacobian(res, x)
    nz = cs.vec(jac.nz[:])  # (a column: a dense row's nonzeros come as a row)
    rows, cols = (np.asarray(a, dtype=np.int64) for a in jac.sparsity().get_triplet())
    held = None if bound is None else bound.tocsr()
    varying = np.zeros(len(rows), dtype=bool)  # (none where every entry is a number)
    if not nz.is_constant():
        on_entries = None if held is None else take_rows(held, rows)
        varying = np.diff(incidence(nz, vstack([x, c]), on_entries).indptr) > 0
    function = cs.Function("at_zero", [x, c], [nz, res])
    expressions, by_c = _offsets(res, x, c, held, function)
    affine = np.ones(n, dtype=bool)
    affine[rows[varying]] = False
    symbolic = np.diff(by_c.indptr) > 0
    return AffineForm(rows, cols, nz, affine, symbolic, expressions, by_c, function)


def _offsets(
    res: cs.SX, x: cs.SX, c: cs.SX, held: sp.csr_matrix | None, function: cs.Function
) -> tuple[cs.SX, sp.csr_matrix]:
    """The offsets ``r(0, c)`` of residuals ``r(x, c)`` (``res`` itself without
    constants) and their incidence in ``c`` (``held``: a bound in ``[x; c]``, or None).
    ``function`` maps ``(x, c)`` to outputs whose last is ``r``: called on symbols, it
    gives ``r(0, c)`` as ``cs.substitute`` would (which builds such a function of ``x``
    and calls it so), with no second function built."""
    expressions = res
    if c.numel() and x.numel():
        expressions = function.call([cs.SX.zeros(x.numel()), c])[-1]
    by_c = no_entries(res.numel(), c.numel())
    if c.numel() and not expressions.is_constant():  # (a column may be dense)
        on_constants = (
            None if held is None else take_columns(held, np.arange(x.numel(), held.shape[1]))
        )
        by_c = incidence(expressions, c, on_constants)
    return expressions, by_c


class Offsets(NamedTuple):
    """The offsets ``r(0, c)`` of residuals ``r(x, c)``: their ``values`` at the
    constants' values, the ``expressions``, whether each depends on ``c``
    (``symbolic``) and their incidence in ``c`` (``held``)."""

    values: np.ndarray
    symbolic: np.ndarray
    expressions: cs.SX
    held: sp.csr_matrix


def affine_offsets(
    res: cs.SX,
    x: cs.SX,
    constants: cs.SX | None = None,
    values: np.ndarray | None = None,
    bound: sp.spmatrix | None = None,
) -> Offsets:
    """:class:`Offsets` of ``res`` in the symbols ``x``: what :func:`affine_rows` gives
    of them (the same arguments), without the Jacobian, for rows whose Jacobian the
    caller knows."""
    c = cs.SX(0, 1) if constants is None else constants
    cvals = np.zeros(0) if values is None else np.asarray(values, dtype=float)
    function = cs.Function("at_zero", [x, c], [res])
    held = None if bound is None else bound.tocsr()
    expressions, by_c = _offsets(res, x, c, held, function)
    at_zero = function(cs.DM.zeros(x.numel()), cvals)
    symbolic = np.diff(by_c.indptr) > 0
    return Offsets(np.asarray(at_zero).ravel(), symbolic, expressions, by_c)


class AffineRows(NamedTuple):
    """The Jacobian entries of residuals ``r(x)`` as triplets (``rows``, ``cols``) with
    their ``values`` at ``x = 0``, each row's ``offset`` ``r(0)``, and whether each row is
    ``affine`` (every entry of its row a constant: then ``r = J x + r(0)`` exactly). With
    constants ``c`` (parameters) allowed in the offsets: ``expressions`` are the offsets
    ``r(0, c)`` as an SX vector, ``symbolic`` marks the rows whose offset depends on ``c``
    (their ``offset`` is its value at the constants' values), ``held`` their incidence in
    ``c``."""

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    offsets: np.ndarray
    affine: np.ndarray
    symbolic: np.ndarray
    expressions: cs.SX
    held: sp.csr_matrix


def affine_rows(
    res: cs.SX,
    x: cs.SX,
    constants: cs.SX | None = None,
    values: np.ndarray | None = None,
    bound: sp.spmatrix | None = None,
) -> AffineRows:
    """:class:`AffineRows` of ``res`` in the symbols ``x``, in a few vector operations: the
    Jacobian, which of its entries depend on ``x`` or the ``constants`` (the sparsity of
    the entries' own dependencies), and entries and residuals evaluated at ``x = 0`` and
    the constants' ``values``. Every symbol of ``res`` must be in ``x`` or ``constants``.
    For rows of a few symbols each (alias candidates): no row of the Jacobian is dense, but
    a column may be (a wall's position in every damper's offset), so the dependencies go
    through :func:`incidence` (with ``bound``, when the caller knows one: a 0/1 matrix, a
    row per residual and a column per symbol of ``x`` then ``constants``, holding the
    residuals' pattern; an entry's dependencies are its row's)."""
    c = cs.SX(0, 1) if constants is None else constants
    cvals = np.zeros(0) if values is None else np.asarray(values, dtype=float)
    form = affine_form(res, x, c, bound)
    at_zero = form.function(cs.DM.zeros(x.numel()), cvals)
    entries, offsets = (np.asarray(a).ravel() for a in at_zero)
    return AffineRows(
        form.rows,
        form.cols,
        entries,
        offsets,
        form.affine,
        form.symbolic,
        form.expressions,
        form.held,
    )


def substitute_rows(residuals: cs.SX, rows: list[int], old: cs.SX, new: cs.SX) -> cs.SX:
    """``cs.substitute(residuals, old, new)`` where only ``rows`` hold symbols of ``old``:
    those rows substituted and written back into a copy (a substitution evaluates every
    node of what it is given; after alias elimination's first pass most rows hold no
    eliminated symbol). Where a structural zero is involved, the whole vector is
    substituted; with no rows, nothing is."""
    if not rows:
        return residuals
    part = cs.substitute(column_entries(residuals, rows), old, new)
    if not (part.is_dense() and residuals.is_dense()):
        return cs.substitute(residuals, old, new)
    out = cs.SX(residuals)
    out[rows] = part
    return out


def signed_picks(
    take: Callable[[np.ndarray], cs.SX], on: np.ndarray, at: np.ndarray, signs: np.ndarray, n: int
) -> cs.SX:
    """The ``n``-vector holding ``signs[k]`` times the symbol ``at[k]`` in row ``on[k]``
    (distinct rows, signs +-1; the other rows structural zeros; ``take``: the symbols of
    some places as a column): what the product of the sparse matrix of those entries with
    the symbols gives, without its pass over every symbol."""
    if not len(on):
        return cs.SX(n, 1)
    order = np.argsort(on, kind="stable")  # (the nonzeros in the order of their rows)
    on, at, signs = on[order], at[order], signs[order]
    picked = take(at)
    neg = np.flatnonzero(signs < 0).tolist()
    if neg:
        picked[neg] = -picked[neg]
    if len(on) == n:  # (every row)
        return picked
    return cs.SX(cs.Sparsity.triplet(n, 1, on.tolist(), [0] * len(on)), picked)


def replace_rows(
    mat: sp.csr_matrix, rows: list[int] | np.ndarray, new: sp.csr_matrix
) -> sp.csr_matrix:
    """``mat`` with its rows ``rows`` (distinct) replaced by those of ``new``, in order:
    each entry written to its place in the result at once (no stacking and reordering);
    where every row keeps its number of entries, only the new ones are written, over a
    copy of the old arrays."""
    if not len(rows):
        return mat
    at = np.asarray(rows, dtype=np.int64)
    old, fresh = np.diff(mat.indptr), np.diff(new.indptr)
    kinds = (np.result_type(mat.indices, new.indices), np.result_type(mat.data, new.data))
    if np.array_equal(old[at], fresh):
        to = np.repeat(mat.indptr[at] - new.indptr[:-1], fresh) + np.arange(new.indptr[-1])
        indices, data = mat.indices.astype(kinds[0]), mat.data.astype(kinds[1])
        indices[to], data[to] = new.indices, new.data
        return csr(data, indices, mat.indptr.copy(), mat.shape)
    size = old.copy()
    size[at] = fresh
    indptr = np.concatenate([[0], np.cumsum(size)])
    kept = np.ones(len(size), dtype=bool)
    kept[at] = False
    by = np.repeat(np.arange(len(size)), old)  # (each old entry's row)
    on = kept[by]
    to_old = (indptr[by] - mat.indptr[by] + np.arange(len(by)))[on]
    by_new = np.repeat(at, fresh)
    to_new = indptr[by_new] - np.repeat(new.indptr[:-1], fresh) + np.arange(len(by_new))
    indices, data = np.empty(indptr[-1], kinds[0]), np.empty(indptr[-1], kinds[1])
    indices[to_old], data[to_old] = mat.indices[on], mat.data[on]
    indices[to_new], data[to_new] = new.indices, new.data
    return csr(data, indices, indptr, mat.shape)


def flat_incidence(
    flat: FlatDAE,
    residuals: cs.SX,
    symbols: Callable[[], cs.SX],
    position: dict[str | None, int],
    arrays: sp.csr_matrix | None = None,
    column_of: np.ndarray | None = None,
) -> sp.csr_matrix:
    """The incidence of ``flat``'s equations (their ``residuals``) in the columns
    ``position`` names (each name's column; ``symbols``: a function stacking their
    symbols, called only where a sparsity pass needs them; ``column_of``: each row of the
    symbol table's column, if at hand): the components'
    equations by :func:`incidence`; the arrays' instances' ``arrays`` when the caller has
    them, else from the variables flatten found for them in their templates, or else by
    :func:`pattern` (a row of them holds at most its template's own symbols and time: no
    long row, so no coloring to fear); the connection sets' (the last rows) from the
    variables flatten recorded for them. Those rows hold a ground's flow balance and its
    potential, the dense row and column that make CasADi's sparsity pass slow."""
    entries = flat.connection_entries
    n_conn = len(entries.indptr) - 1
    n_comp = residuals.numel() - n_conn - flat.array_rows
    m = len(position)
    rows = residuals[:n_comp] if n_comp else cs.SX(0, 1)
    comp = _held_incidence(flat, rows, position, m) if n_comp <= 8 * BUCKETS else None
    if comp is None:
        comp = incidence(rows, symbols())
    if arrays is None and flat.array_entries is not None:
        arrays = _named_rows(flat.array_entries, position, column_of, m)
    elif arrays is None:
        rows = residuals[n_comp : n_comp + flat.array_rows] if flat.array_rows else cs.SX(0, 1)
        arrays = pattern(rows, symbols())
    conn = _named_rows(entries, position, column_of, m)
    return sp.csr_matrix(sp.vstack([comp, arrays, conn], format="csr"), dtype=np.int8)


def _held_incidence(
    flat: FlatDAE, res: cs.SX, position: dict[str | None, int], m: int
) -> sp.csr_matrix | None:
    """:func:`pattern` of a few rows ``res`` of ``flat`` in the ``m`` columns
    (``position``: a dotted name's column, None time's) taken in the symbols the rows
    hold only (CasADi's sparsity pass costs a sweep over every column it is given); None
    where a held symbol has no column."""
    held = cs.symvar(res)
    time = flat.t.name()
    names = [None if s.name() == time else display_name(s.name(), flat.keys) for s in held]
    if not all(map(position.__contains__, names)):
        return None
    cols = np.fromiter(map(position.__getitem__, names), np.int64, len(names))
    got = pattern(res, cs.vertcat(cs.SX(0, 1), *held))
    out = sp.csr_matrix((got.data, cols[got.indices], got.indptr), shape=(res.numel(), m))
    out.sort_indices()
    return out


def entry_columns(
    entries: Entries, position: dict[str | None, int], column_of: np.ndarray | None = None
) -> np.ndarray:
    """The columns of the variables ``entries`` holds: by their rows of the symbol table
    (``column_of``: each row's column) when both are known, else by ``position``."""
    if entries.rows is not None and column_of is not None:
        return column_of[entries.rows]
    return np.fromiter(map(position.__getitem__, entries.names), np.int64, len(entries.names))


def _named_rows(
    entries: Entries, position: dict[str | None, int], column_of: np.ndarray | None, m: int
) -> sp.csr_matrix:
    """The 0/1 rows that hold the variables ``entries`` (:func:`entry_columns`)."""
    cols = entry_columns(entries, position, column_of)
    data = np.ones(len(cols), dtype=np.int8)
    out = sp.csr_matrix((data, cols, entries.indptr), shape=(len(entries.indptr) - 1, m))
    out.sum_duplicates()
    out.data[:] = 1
    return out


#: Rows holding more symbols than this are differentiated on their own (causalization's
#: scalar blocks). CasADi colors the columns of a Jacobian for its forward sweeps: a row
#: holding ``k`` symbols needs ``k`` colors, each a sweep over every row, so one dense row
#: (a ground node's current balance) makes the whole Jacobian quadratic in the model's size.
DENSE_ROW = 50


def match(inc: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Maximum matching: ``row_to_col`` and ``col_to_row`` arrays, -1 where unmatched."""
    n, m = inc.shape
    if n == 0 or m == 0:
        return np.full(n, -1), np.full(m, -1)
    row_to_col = maximum_bipartite_matching(inc, perm_type="column")
    col_to_row = np.full(m, -1)
    matched = row_to_col >= 0
    col_to_row[row_to_col[matched]] = np.nonzero(matched)[0]
    return row_to_col, col_to_row


def _alternating_reach(
    adj: sp.csr_matrix, start: np.ndarray, partner: np.ndarray
) -> tuple[list[int], list[int]]:
    """Nodes reachable from the unmatched nodes ``start`` by alternating paths: a node goes
    to any neighbour (``adj`` row), a neighbour to its matched ``partner``."""
    own, other = set(int(k) for k in start), set()
    queue = deque(own)
    while queue:
        k = queue.popleft()
        for n in adj.indices[adj.indptr[k] : adj.indptr[k + 1]]:
            if n not in other:
                other.add(int(n))
                m = partner[n]
                if m >= 0 and m not in own:
                    own.add(int(m))
                    queue.append(int(m))
    return sorted(own), sorted(other)


def dulmage_mendelsohn(
    inc: sp.csr_matrix, row_to_col: np.ndarray, col_to_row: np.ndarray
) -> tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]:
    """((over rows, over cols), (under rows, under cols)) of a maximum matching: what the
    unmatched equations, and the unmatched unknowns, reach by alternating paths."""
    over = _alternating_reach(inc, np.nonzero(row_to_col < 0)[0], col_to_row)
    under_cols, under_rows = _alternating_reach(
        inc.T.tocsr(), np.nonzero(col_to_row < 0)[0], row_to_col
    )
    return over, (under_rows, under_cols)
