"""The variables each row of an array's instances holds, read off its template.

An instance's residuals are the template's function called on the instance's own symbols
(:mod:`.arrays`), so they hold the same symbols in the same places: the template's
incidence, taken once by CasADi, repeated through every instance's names is the
incidence of all of them, without a sparsity pass over the instances' rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from .flat import Entries
from .structure.graph import pattern
from .symbols import derivative_names, split_derivative, time

if TYPE_CHECKING:
    from .arrays import Block


class Template(NamedTuple):
    """An array block's rows as its template's: the template's ``residuals`` (one
    instance's rows) in its ``symbols`` (its quantities, the derivatives the residuals
    take, time), their incidence ``pattern`` (0/1, a row per residual, a column per
    symbol), and ``names``: each instance's dotted name of each symbol (a row per
    instance, in the block's order; time as ``None``). Instance ``i``'s row ``r`` is
    row ``r`` with symbol ``j`` read as ``names[i, j]``."""

    residuals: cs.SX
    symbols: cs.SX
    pattern: sp.csr_matrix
    names: np.ndarray


def block_template(b: Block) -> Template | None:
    """The block's :class:`Template`: the template's incidence in its own symbols, once,
    and each instance's names of them; None when its residuals hold a symbol that is
    neither its own quantity, a derivative of one, nor time (another component's: the
    rows are then read one by one)."""
    t = b.array.template
    residuals = cs.vertcat(cs.SX(0, 1), *[e.residual for e in t._equations])
    own = [q.sym for q in t._quantities.values()]
    local = {q.name(): j for j, q in enumerate(own)}
    held = [s for s in cs.symvar(residuals) if s.name() not in local and s.name() != "time"]
    bases = [split_derivative(s.name()) for s in held]  # (raw name, order)
    if any(raw not in local for raw, _ in bases):
        return None
    count, n = len(own), len(b.prefixes)
    names = np.empty((n, count + len(held) + 1), dtype=object)
    names[:, :count] = np.array(b.names, dtype=object).reshape(n, count)
    for c, (raw, order) in enumerate(bases, start=count):
        names[:, c] = derivative_names(names[:, local[raw]].tolist(), order)
    names[:, -1] = None  # time
    symbols = cs.vertcat(*own, *held, time)
    return Template(residuals, symbols, pattern(residuals, symbols), names)


def block_entries(t: Template) -> Entries:
    """The dotted names each of the block's rows holds (time as ``None``), instance after
    instance: the template's incidence repeated through each instance's names."""
    spy, n = t.pattern, t.names.shape[0]
    indptr = np.concatenate([[0], np.cumsum(np.tile(np.diff(spy.indptr), n))])
    return Entries(indptr, tuple(t.names[:, spy.indices].ravel().tolist()))
