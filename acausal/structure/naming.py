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

import numpy as np

from ..symbols import derivative_name, vstack
from ..table import Table
from .algorithms import Col
from .alias import Reduced
from .graph import affine_rows


def declared_derivatives(
    red: Reduced, rows: Sequence[set[Col]], chains: Sequence[Sequence[str]]
) -> Table:
    """``{der^o(x): (w, ...)}``: the unknowns ``w`` that a declaration (module docstring)
    makes equal to each derivative, best first: declared by the component of ``x``, then
    with a fixed start, a higher state priority, any start, declared earlier. ``rows`` are
    the incidences of ``red``'s equations in the columns of ``chains``."""
    pairs = []  # (equation, the unknown w, the derivative's column)
    for r, row in enumerate(rows):
        if len(row) == 2:
            low, high = sorted(row, key=lambda c: c[1])
            if low[1] == 0 and high[1] >= 1 and low[0] != high[0]:
                pairs.append((r, low[0], high))
    if not pairs:
        return Table()
    cols = sorted({(u, 0) for _, u, _ in pairs} | {d for _, _, d in pairs})
    at = {c: k for k, c in enumerate(cols)}
    flat = red.flat
    constants = vstack([flat.symbols.take((*flat.parameters, *flat.discretes)), flat.t])
    fit = affine_rows(
        red.residuals[[r for r, _, _ in pairs]],
        red.symbols.take([chains[v][o] for v, o in cols]),
        constants,
        np.zeros(constants.numel()),
    )
    entry = dict(zip(zip(fit.rows.tolist(), fit.cols.tolist()), fit.values.tolist()))
    exact = fit.affine & ~fit.symbolic & (fit.offsets == 0.0)
    found: dict[str, list[int]] = {}
    for i in np.flatnonzero(exact).tolist():
        _, u, d = pairs[i]
        k = entry.get((i, at[(u, 0)]), 0.0)
        if k != 0.0 and entry.get((i, at[d])) == -k:
            found.setdefault(chains[d[0]][d[1]], []).append(u)

    def preference(u: int, owner: str) -> tuple:
        sym, start = red.symbols[chains[u][0]], red.starts.get(chains[u][0])
        fixed = start is not None and start.fixed
        return (sym.component != owner, not fixed, -sym.state_priority, start is None, u)

    return Table(
        {
            d: tuple(
                chains[u][0]
                for u in sorted(us, key=lambda u: preference(u, red.symbols[d].component))
            )
            for d, us in found.items()
        }
    )


def aliases_of_declared(declared: Table, chains: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """``(der^k(w), column)`` for every declared ``w`` of a derivative ``der^o(x)`` and each
    ``k >= 1`` where ``der^(o+k)(x)`` is a column and ``der^k(w)`` is none: names a result
    offers besides the columns' own (they are equal: ``w = der^o(x)``), whatever the states
    are."""
    by_name = {ch[o]: (v, o) for v, ch in enumerate(chains) for o in range(len(ch))}
    out = []
    for d, ws in declared.items():
        v, o = by_name[d]
        for w in ws:
            u = by_name[w][0]
            out += [
                (derivative_name(w, k), chains[v][o + k])
                for k in range(len(chains[u]), len(chains[v]) - o)
            ]
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
