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
from itertools import filterfalse, repeat
from operator import attrgetter, getitem, is_, itemgetter, ne

import casadi as cs
import numpy as np

from ..symbols import derivative_name, split_derivative, vstack
from ..table import Table
from .algorithms import Col, Pattern, runs
from .alias import Reduced
from .graph import incidence


def declaration_candidates(rows: Pattern) -> np.ndarray:
    """The equations that may be declarations (module docstring) by their incidences
    ``rows`` alone: of two columns, an undifferentiated one and a derivative of another
    unknown. Three rows: the equations, their undifferentiated and their derivative
    columns (the numbers of ``rows``)."""
    mat = rows.matrix
    two = np.flatnonzero(np.diff(mat.indptr) == 2)  # the equations of two columns
    a, b = mat.indices[mat.indptr[two]], mat.indices[mat.indptr[two] + 1]
    low, high = np.where(rows.o[a] <= rows.o[b], a, b), np.where(rows.o[a] <= rows.o[b], b, a)
    ok = (rows.o[low] == 0) & (rows.o[high] >= 1) & (rows.v[low] != rows.v[high])
    return np.stack([two[ok], low[ok], high[ok]])


def declared_derivatives(
    red: Reduced,
    columns: tuple[np.ndarray, np.ndarray],
    chains: Sequence[Sequence[str]],
    candidates: np.ndarray,
) -> Table:
    """``{der^o(x): (w, ...)}``: the unknowns ``w`` that a declaration (module docstring)
    makes equal to each derivative, best first: declared by the component of ``x``, then
    with a fixed start, a higher state priority, any start, declared earlier; of the
    ``candidates`` (:func:`declaration_candidates`; a subset of them gives the entries of
    their derivatives, in the same order). ``columns`` are the ``(v, o)`` (two arrays) of
    the columns numbered in ``candidates``, those of ``chains``."""
    eqs, low, high = candidates
    v, o = columns
    if not len(eqs):
        return Table()
    free = ~_hold_constants(red, eqs)  # a declaration holds no parameter, mode or time
    if not free.any():
        return Table()
    eqs, low, high = eqs[free], low[free], high[free]
    numbers = np.unique(np.concatenate([low, high]))  # (v, o) order: numbered by chain
    names = list(map(getitem, map(chains.__getitem__, v[numbers].tolist()), o[numbers].tolist()))
    at_low, at_high = np.searchsorted(numbers, low), np.searchsorted(numbers, high)
    exact = _declarations(red.residuals[eqs.tolist()], red.symbols.take(names), at_low, at_high)
    return _ranked(red, v[low[exact]], at_high[exact], names)


def _declarations(res: cs.SX, x: cs.SX, at_low: np.ndarray, at_high: np.ndarray) -> np.ndarray:
    """Which of the residuals ``res``, each holding the two symbols ``x[at_low]`` and
    ``x[at_high]`` only, are ``k (x[at_low] - x[at_high])`` with a number ``k != 0``: their
    derivatives in the two (one directional derivative per side: a row holds one symbol of
    each) hold no symbol, and at ``x = 0`` the residual is zero and the two derivatives are
    ``k`` and ``-k``. Their indices, ascending."""
    n, m = res.numel(), x.numel()
    seeds = np.zeros((m, 2))
    seeds[at_low, 0] = seeds[at_high, 1] = 1.0
    slopes = cs.jtimes(res, x, cs.DM(seeds))  # row i: d/dx[at_low[i]], d/dx[at_high[i]]
    varying = np.zeros(n, dtype=bool)
    if not slopes.is_constant():
        held = np.diff(incidence(cs.vertcat(slopes[:, 0], slopes[:, 1]), x).indptr) > 0
        varying = held[:n] | held[n:]
    at_zero = cs.Function("at_zero", [x], [slopes, res])(cs.DM.zeros(m))
    (k, k_high), offsets = at_zero[0].full().T, at_zero[1].full().ravel()
    return np.flatnonzero(~varying & (offsets == 0.0) & (k != 0.0) & (k_high == -k))


def _ranked(red: Reduced, u: np.ndarray, high: np.ndarray, names: Sequence[str]) -> Table:
    """``{names[high[i]]: (w, ...)}`` of the declarations ``i``, each of unknown ``u[i]``
    (``w``, its name) equal to the derivative ``names[high[i]]``: the derivatives in order
    of first declaration, each's unknowns by preference (:func:`declared_derivatives`), in
    one sort."""
    if not len(u):
        return Table()
    n = len(u)
    ws = list(map(red.unknowns.__getitem__, u.tolist()))
    syms = list(map(red.symbols.__getitem__, ws))
    starts = list(map(red.starts.get, ws))
    derivatives = list(map(names.__getitem__, high.tolist()))
    owners = map(attrgetter("component"), map(red.symbols.__getitem__, derivatives))
    _, first, group = np.unique(high, return_index=True, return_inverse=True)
    declared = first[group.ravel()]  # where each one's derivative is first declared
    order = np.lexsort(  # the last key first
        (
            u,
            np.fromiter(map(is_, starts, repeat(None)), bool, n),
            -np.array(list(map(attrgetter("state_priority"), syms))),
            ~np.fromiter(map(getattr, starts, repeat("fixed"), repeat(False)), bool, n),
            np.fromiter(map(ne, map(attrgetter("component"), syms), owners), bool, n),
            declared,
        )
    )
    bounds = np.flatnonzero(np.diff(declared[order], prepend=-1, append=n))
    heads = map(derivatives.__getitem__, order[bounds[:-1]].tolist())
    return Table(zip(heads, runs(list(map(ws.__getitem__, order.tolist())), bounds)))


def _hold_constants(red: Reduced, eqs: np.ndarray) -> np.ndarray:
    """Which of the equations ``eqs`` of ``red`` hold a parameter, a discrete mode or time:
    by the incidence alias elimination kept, else by a sparsity pass."""
    flat = red.flat
    at = list(map(red.pattern_position.get, (*flat.parameters, *flat.discretes, None)))
    if red.pattern is not None and None not in at:
        constant = np.zeros(red.pattern.shape[1], dtype=bool)
        constant[at] = True
        held = red.pattern[eqs]  # (a csr matrix's rows: their entries row by row)
        hits = np.repeat(np.arange(len(eqs)), np.diff(held.indptr))[constant[held.indices]]
        return np.bincount(hits, minlength=len(eqs)) > 0
    constants = vstack([flat.symbols.take((*flat.parameters, *flat.discretes)), flat.t])
    return np.diff(incidence(red.residuals[eqs.tolist()], constants).indptr) > 0


def aliases_of_declared(declared: Table, chains: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """``(der^k(w), column)`` for every declared ``w`` of a derivative ``der^o(x)`` and each
    ``k >= 1`` where ``der^(o+k)(x)`` is a column and ``der^k(w)`` is none: names a result
    offers besides the columns' own (they are equal: ``w = der^o(x)``), whatever the states
    are. Only a derivative below the top of its chain has any (mostly none is)."""
    tops = set(map(itemgetter(-1), chains))
    lower = list(filterfalse(tops.__contains__, declared))
    if not lower:
        return []
    chain_of = dict(zip(map(itemgetter(0), chains), chains))  # (no unknown is named der(..))
    out = []
    for d in lower:
        x, o = split_derivative(d)
        for w in declared[d]:
            for k in range(len(chain_of[w]), len(chain_of[x]) - o):
                out.append((derivative_name(w, k), chain_of[x][o + k]))
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
