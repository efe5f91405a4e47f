"""The variables each row of an array's instances holds, read off its template.

An instance's residuals are the template's function called on the instance's own symbols
(:mod:`.arrays`), so they hold the same symbols in the same places: the template's
incidence, taken once by CasADi, repeated through every instance's names is the
incidence of all of them, without a sparsity pass over the instances' rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import casadi as cs
import numpy as np

from .flat import Entries
from .structure.graph import pattern
from .symbols import derivative_name, split_derivative, time

if TYPE_CHECKING:
    from .arrays import Block


def block_entries(b: Block) -> Entries:
    """The dotted names each of the block's rows holds (time as ``None``), instance after
    instance: the template's incidence in its own symbols (its quantities, their
    derivatives, time), once, repeated through each instance's names."""
    t = b.array.template
    residuals = cs.vertcat(cs.SX(0, 1), *[e.residual for e in t._equations])
    own = [q.sym for q in t._quantities.values()]
    local = {q.name(): j for j, q in enumerate(own)}
    held = [s for s in cs.symvar(residuals) if s.name() not in local and s.name() != "time"]
    bases = [split_derivative(s.name()) for s in held]  # (raw name, order)
    count, n = len(own), len(b.prefixes)
    names = np.empty((n, count + len(held) + 1), dtype=object)
    names[:, :count] = np.array(b.names, dtype=object).reshape(n, count)
    for c, (raw, order) in enumerate(bases, start=count):
        names[:, c] = [derivative_name(q, order) for q in names[:, local[raw]]]
    names[:, -1] = None  # time
    spy = pattern(residuals, cs.vertcat(*own, *held, time))
    indptr = np.concatenate([[0], np.cumsum(np.tile(np.diff(spy.indptr), n))])
    return Entries(indptr, tuple(names[:, spy.indices].ravel().tolist()))
