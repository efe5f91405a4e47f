"""States named by the variables the user declared.

A component that declares a speed ``w`` with ``w == der(phi)`` and never differentiates
``w`` (a revolute joint) may leave index reduction keeping ``der(phi)`` as a state: the
body's equations raised ``phi``'s chain to its second derivative, and ``w`` is an algebraic
unknown solved from the declaring equation. ``w`` and ``der(phi)`` are the same number, so
the state is reported under the user's name ``w``, and the names of the two columns swap:
``der(phi)`` labels the column ``w``, which the equation ``w == der(phi)`` solves, as it
would if ``w`` were the state; ``der(der(phi))`` is labelled ``der(w)``, and so on up the
chain (``der^k(der(phi))`` swaps with ``w``'s own ``k``-th derivative where that column
exists). Only labels change: columns, equations and numbers stay as index reduction made
them, and every label names a quantity equal to its column's value.

A *declaration* is an equation of the alias-reduced model that holds exactly one
undifferentiated unknown ``w`` and one derivative ``der^o(x)`` (``o >= 1``) of another,
as ``k (w - der^o(x)) = 0`` with a constant ``k != 0``: no parameter, time or offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
import scipy.sparse as sp

from ..symbols import derivative_name, vstack
from ..table import Table
from .algorithms import Col, Pattern
from .alias import Reduced
from .graph import affine_rows, incidence


def declared_derivatives(red: Reduced, rows: Pattern, chains: Sequence[Sequence[str]]) -> Table:
    """``{der^o(x): (w, ...)}``: the unknowns ``w`` that a declaration (module docstring)
    makes equal to each derivative, best first: declared by the component of ``x``, then
    with a fixed start, a higher state priority, any start, declared earlier. ``rows`` are
    the incidences of ``red``'s equations in the columns of ``chains`` (numbered chain by
    chain)."""
    mat = rows.matrix
    two = np.flatnonzero(np.diff(mat.indptr) == 2)  # the equations of two columns
    a, b = mat.indices[mat.indptr[two]], mat.indices[mat.indptr[two] + 1]
    low, high = np.where(rows.o[a] <= rows.o[b], a, b), np.where(rows.o[a] <= rows.o[b], b, a)
    ok = (rows.o[low] == 0) & (rows.o[high] >= 1) & (rows.v[low] != rows.v[high])
    if not ok.any():
        return Table()
    eqs, low, high = two[ok], low[ok], high[ok]
    free = ~_hold_constants(red, eqs)  # a declaration holds no parameter, mode or time
    if not free.any():
        return Table()
    eqs, low, high = eqs[free], low[free], high[free]
    numbers = np.unique(np.concatenate([low, high]))  # (v, o) order: numbered by chain
    cols = list(zip(rows.v[numbers].tolist(), rows.o[numbers].tolist()))
    at_low, at_high = np.searchsorted(numbers, low), np.searchsorted(numbers, high)
    pairs = list(zip(rows.v[low].tolist(), at_low.tolist(), at_high.tolist()))
    fit = affine_rows(
        red.residuals[eqs.tolist()], red.symbols.take([chains[v][o] for v, o in cols])
    )
    coef = sp.csr_matrix((fit.values, (fit.rows, fit.cols)), shape=(len(pairs), len(cols)))
    exact = np.flatnonzero(fit.affine & (fit.offsets == 0.0))
    k = np.asarray(coef[exact, at_low[exact]]).ravel()  # 0: no entry
    exact = exact[(k != 0.0) & (np.asarray(coef[exact, at_high[exact]]).ravel() == -k)]
    found: dict[str, list[int]] = {}
    for i in exact.tolist():
        u, _, j_high = pairs[i]
        v, o = cols[j_high]
        found.setdefault(chains[v][o], []).append(u)

    def preference(u: int, owner: str) -> tuple:
        sym, start = red.symbols[chains[u][0]], red.starts.get(chains[u][0])
        fixed = start is not None and start.fixed
        return (sym.component != owner, not fixed, -sym.state_priority, start is None, u)

    return Table(
        {
            d: tuple(
                chains[u][0]
                for u in (
                    us
                    if len(us) == 1
                    else sorted(us, key=partial(preference, owner=red.symbols[d].component))
                )
            )
            for d, us in found.items()
        }
    )


def _hold_constants(red: Reduced, eqs: np.ndarray) -> np.ndarray:
    """Which of the equations ``eqs`` of ``red`` hold a parameter, a discrete mode or time:
    by the incidence alias elimination kept, else by a sparsity pass."""
    flat = red.flat
    at = list(map(red.pattern_position.get, (*flat.parameters, *flat.discretes, None)))
    if red.pattern is not None and None not in at:
        held = red.pattern[eqs][:, at].tocsr()
    else:
        constants = vstack([flat.symbols.take((*flat.parameters, *flat.discretes)), flat.t])
        held = incidence(red.residuals[eqs.tolist()], constants)
    return np.diff(held.indptr) > 0


def aliases_of_declared(declared: Table, chains: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """``(der^k(w), column)`` for every declared ``w`` of a derivative ``der^o(x)`` and each
    ``k >= 1`` where ``der^(o+k)(x)`` is a column and ``der^k(w)`` is none: names a result
    offers besides the columns' own (they are equal: ``w = der^o(x)``), whatever the states
    are."""
    if not declared:
        return []
    head = dict(zip((ch[0] for ch in chains), range(len(chains))))  # w: a chain's first
    by_name = {
        ch[o]: (v, o) for v, ch in enumerate(chains) if len(ch) > 1 for o in range(1, len(ch))
    }
    out = []
    for d, ws in declared.items():
        v, o = by_name[d]  # a derivative: o >= 1
        for w in ws:
            for k in range(len(chains[head[w]]), len(chains[v]) - o):  # mostly none
                out.append((derivative_name(w, k), chains[v][o + k]))
    return out


def state_labels(chains: Sequence[Sequence[str]], states: Sequence[Col], declared: Table) -> Table:
    """``{column name: label}`` for the columns whose name changes (module docstring): for
    each state ``der^o(x)`` (``o >= 1``) the first declared ``w`` that is not a state and
    whose columns no earlier state's swap took."""
    by_name = {ch[0]: v for v, ch in enumerate(chains)}
    is_state = set(states)
    labels: dict[str, str] = {}
    for v, o in states:
        for w in declared.get(chains[v][o], ()) if o else ():
            u = by_name[w]
            theirs, mine = chains[v][o:], chains[u]
            if (u, 0) in is_state or labels.keys() & {*theirs, *mine}:
                continue
            for k, q in enumerate(theirs):
                if k < len(mine):
                    labels[q], labels[mine[k]] = mine[k], q
                else:
                    labels[q] = derivative_name(w, k)
            break
    return Table(labels)
