"""Alias elimination's incidence and affine rows (:func:`.graph.affine_rows`) of the
arrays' instances, from their templates.

Each instance's rows are its template's residuals in the instance's own symbols
(:class:`.block_entries.Template`), so their incidence, the Jacobian in the variables,
which of its entries depend on a symbol, and whether the offset at zero depends on the
parameters are the template's, found once on the template's few rows and placed in each
instance's columns (each instance's symbols looked up once) by index arithmetic; the
entries' and offsets' values at ``x = 0`` and each instance's parameters come from the
template's function, evaluated once per distinct row of parameter values. So no pass
over the instances' rows (a Jacobian, a substitution, a function of them) is made for
the ones as flatten made them."""

from __future__ import annotations

from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..block_entries import Template
from ..flat import ArraySymbols
from ..symbols import column_entries
from .graph import affine_form


class TemplateRows(NamedTuple):
    """:class:`.graph.AffineRows` of the arrays' rows (by their place among them), as
    flatten made them, with the variables' columns as ``x`` and the parameters' as
    constants at their values: for the rows that hold variables and parameters only
    (``covered``), their Jacobian ``entries`` (a row per array row, a column per model
    column), ``offsets``, whether they are ``affine`` and whether their offset is
    ``symbolic`` (depends on a parameter)."""

    covered: np.ndarray
    entries: sp.csr_matrix
    offsets: np.ndarray
    affine: np.ndarray
    symbolic: np.ndarray


class Columns(NamedTuple):
    """The model's columns (alias elimination's): each name's (``position``), the
    variables first (``n_variables`` of them), then the parameters' range ``params``,
    with their ``values``."""

    position: dict[str | None, int]
    n_variables: int
    params: tuple[int, int]
    values: np.ndarray


def instance_columns(
    t: Template, block: ArraySymbols, column_of: np.ndarray, position: dict[str | None, int]
) -> np.ndarray:
    """Each instance's column of each of the template's symbols (a row per instance):
    its own quantities' by index arithmetic (``block``: the same instances' rows of the
    symbol table, instance ``k``'s quantity ``j`` at row ``first + k count + j``;
    ``column_of``: each table row's column), the derivatives' and time's by
    ``position``."""
    n, width = t.names.shape
    count = block.count
    cols = np.empty((n, width), dtype=np.int64)
    own = block.first + np.arange(n * count, dtype=np.int64)
    cols[:, :count] = column_of[own].reshape(n, count)
    names = t.names[:, count:].ravel().tolist()
    held = np.fromiter(map(position.__getitem__, names), np.int64, len(names))
    cols[:, count:] = held.reshape(n, width - count)
    return cols


def array_pattern(
    templates: tuple[Template, ...], cols: list[np.ndarray], width: int
) -> sp.csr_matrix:
    """The incidence (0/1, ``width`` columns) of the arrays' rows, block after block: each
    template's incidence through each instance's columns ``cols``
    (:func:`instance_columns`)."""
    parts = []
    for t, c in zip(templates, cols):
        spy, n = t.pattern, c.shape[0]
        indptr = np.concatenate([[0], np.cumsum(np.tile(np.diff(spy.indptr), n))])
        ones = np.ones(indptr[-1], dtype=np.int8)
        parts.append(
            sp.csr_matrix((ones, c[:, spy.indices].ravel(), indptr), (n * spy.shape[0], width))
        )
    out = sp.csr_matrix(sp.vstack(parts, format="csr"), dtype=np.int8)
    out.sum_duplicates()
    return out


def template_rows(
    templates: tuple[Template, ...], cols: list[np.ndarray], columns: Columns
) -> TemplateRows:
    """The :class:`TemplateRows` of the arrays' rows, block after block (``cols``: each
    block's :func:`instance_columns`)."""
    parts = [_block_rows(t, c, columns) for t, c in zip(templates, cols)]
    return TemplateRows(
        np.concatenate([p.covered for p in parts]),
        sp.csr_matrix(sp.vstack([p.entries for p in parts], format="csr")),
        np.concatenate([p.offsets for p in parts]),
        np.concatenate([p.affine for p in parts]),
        np.concatenate([p.symbolic for p in parts]),
    )


def _at_zero(f: cs.Function, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The outputs of ``f(0, p)`` (a column each) for each row ``p`` of ``values`` (an
    instance's parameters), as matrices of a column per instance: evaluated once per
    distinct row (bit for bit; the instances of an array mostly share their values),
    mapped over those."""
    bits = np.ascontiguousarray(values).view(np.uint64).reshape(values.shape)
    _, first, back = np.unique(bits, axis=0, return_index=True, return_inverse=True)
    k = len(first)
    outs = f.map(k)(cs.DM.zeros(f.size1_in(0), k), values[first].T)
    return tuple(o.full()[:, back.ravel()] for o in outs)


def _block_rows(t: Template, cols: np.ndarray, columns: Columns) -> TemplateRows:
    """One block's :class:`TemplateRows` (``cols``: its :func:`instance_columns`): the
    template's rows of variables and parameters only (``rows``), their
    :func:`.graph.affine_form` once, its entries and offsets evaluated for the instances'
    parameters (:func:`_at_zero`), and the entries placed in each instance's columns."""
    n = cols.shape[0]
    var = cols[0] < columns.n_variables
    par = (cols[0] >= columns.params[0]) & (cols[0] < columns.params[1])
    spy = t.pattern
    bad = np.zeros(spy.shape[0], dtype=bool)
    np.logical_or.at(
        bad, np.repeat(np.arange(spy.shape[0]), np.diff(spy.indptr)), ~(var | par)[spy.indices]
    )
    rows = np.flatnonzero(~bad)
    xj, pj = np.flatnonzero(var), np.flatnonzero(par)
    res = column_entries(t.residuals, rows.tolist())
    x, p = column_entries(t.symbols, xj.tolist()), column_entries(t.symbols, pj.tolist())
    form = affine_form(res, x, p)
    pvals = columns.values[cols[:, pj] - columns.params[0]]
    values, offsets = _at_zero(form.function, pvals)
    # every instance's rows: the template's entries in the instance's columns
    size = spy.shape[0]
    order = np.lexsort((form.cols, form.rows))  # row after row, each in column order
    count = np.zeros(size, dtype=np.int64)
    count[rows] = np.bincount(form.rows, minlength=len(rows))
    indptr = np.concatenate([[0], np.cumsum(np.tile(count, n))])
    at = (values[order].T.ravel(), cols[:, xj[form.cols[order]]].ravel(), indptr)
    entries = sp.csr_matrix(at, shape=(n * size, len(columns.position)))
    covered, affine, symbolic = (np.zeros(size, dtype=bool) for _ in range(3))
    covered[rows], affine[rows], symbolic[rows] = True, form.affine, form.symbolic
    offset = np.full((n, size), np.nan)
    offset[:, rows] = offsets.T
    return TemplateRows(
        np.tile(covered, n), entries, offset.ravel(), np.tile(affine, n), np.tile(symbolic, n)
    )
