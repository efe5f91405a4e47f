"""The dummy-derivative choice on plain integers (and, optionally, numbers at a point).

Mattsson and Soederlind's selection, level by level from the most differentiated
equations down: in each connected block of a level, a least-cost full matching of the
block's equations to candidate derivatives picks the dummies (ties broken by a rank); a
numerical check at the start point replaces a choice whose columns of ``dg/dz`` are
singular there by the cheapest regular one (a greedy basis of the columns, optimal for
the column matroid); the dummies' predecessors are the next level's candidates. The
pairs of equally cheap columns that could swap are reported as ties.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .algorithms import Col, StructuralFailure, blt
from .graph import match


class Choice(NamedTuple):
    """The dummy-derivative choice in one connected block of a level: its equations, the
    candidate derivatives, the ``dummies`` chosen among them (the other candidates stay
    state derivatives), ``ties``: pairs ``(kept, dummy)`` of equal cost that could swap
    (another choice as good), ``status`` of the numerical check at the start point:
    ``"regular"``, ``"reselected"`` (the cheapest choice was singular there, the cheapest
    regular one was taken), ``"singular"`` (every choice is singular there) or
    ``"unchecked"`` (no Jacobian, or not finite there), and the ``cheapest`` choice's
    dummies (the same unless reselected)."""

    level: int
    equations: tuple[int, ...]
    candidates: tuple[Col, ...]
    dummies: tuple[Col, ...]
    ties: tuple[tuple[Col, Col], ...]
    status: str
    cheapest: tuple[Col, ...]


Jacobian = Callable[[Sequence[int], Sequence[Col]], "sp.spmatrix | None"]
# A column is dependent when less than this part of its norm is new. Start points are
# projected onto the constraints to a residual of 1e-12, which leaves a double root (a
# coordinate at its dead point) some 1e-6 away: that is still a singular choice.
RANK_TOL = 1e-5


def dummy_derivatives(
    rows: Sequence[frozenset[Col]],
    child: dict[int, int],
    hv: Sequence[int],
    cost: Callable[[Col], float],
    jacobian: Jacobian | None = None,
    rank: Callable[[Col], float] | None = None,
) -> frozenset[Col]:
    """The dummy derivative columns of :func:`select_dummies`."""
    choices = select_dummies(rows, child, hv, cost, jacobian, rank)
    return frozenset(c for ch in choices for c in ch.dummies)


def select_dummies(
    rows: Sequence[frozenset[Col]],
    child: dict[int, int],
    hv: Sequence[int],
    cost: Callable[[Col], float],
    jacobian: Jacobian | None = None,
    rank: Callable[[Col], float] | None = None,
) -> tuple[Choice, ...]:
    """Mattsson-Soederlind selection (see the module docstring), one :class:`Choice` per
    connected block of each level.

    ``cost(col)`` is what demoting ``col`` to a dummy costs (a fixed start value, a state
    priority make it dear; whole numbers, so that the tie-break never outweighs them), and
    ``rank(col)`` in ``[0, 1)`` breaks ties (higher: kept; by default ``(n - v) / (n + 1)``
    for unknown ``v`` of ``n``, so that the unknown declared first stays a state). A block
    of ``m`` equations takes as dummies its least-weight full matching, with weights
    ``w_j = cost_j + rank_j / (m + 1)`` (their tie-break parts sum to less than 1).
    ``jacobian(equations, candidates)``, if given, is the level's ``dg/dz`` at the start
    point: a choice whose columns are singular there is replaced by the cheapest regular
    one (:func:`regular_choice`). A :class:`StructuralFailure` names the equations of a
    level that has no full matching.
    """
    n = len(hv)
    tiebreak = rank or (lambda c: (n - c[0]) / (n + 1))
    families = _families(len(rows), child)
    choices: list[Choice] = []
    level = 1
    candidates = {(v, hv[v]) for v in range(n) if hv[v] >= 1}
    while True:
        g = [fam[len(fam) - level] for fam in families if len(fam) - 1 >= level]
        if not g:
            break
        cand = sorted(candidates & set().union(*(rows[r] for r in g)))
        if len(cand) < len(g):
            raise StructuralFailure("too few candidate derivatives", g)
        mat = None if jacobian is None else sp.csr_matrix(jacobian(g, cand), dtype=float)
        blocks = _connected_blocks(g, cand, rows)
        where = np.zeros(len(cand), dtype=np.int64)  # a candidate's position in its block
        owner = np.zeros(len(cand), dtype=np.int64)  # and its block
        for b, (_, cols) in enumerate(blocks):
            where[cols], owner[cols] = np.arange(len(cols)), b
        for b, (eqs, cols) in enumerate(blocks):
            block = [g[i] for i in eqs], [cand[j] for j in cols]
            prices = [(cost(c), tiebreak(c)) for c in block[1]]
            sub = None
            if mat is not None:  # the block's columns of the level's matrix, in linear time
                part = mat[eqs].tocoo()
                own = owner[part.col] == b
                sub = sp.csr_matrix(
                    (part.data[own], (part.row[own], where[part.col[own]])),
                    shape=(len(eqs), len(cols)),
                )
            choices.append(_choose(level, block, rows, prices, sub))
        picked = [c for ch in choices if ch.level == level for c in ch.dummies]
        candidates = {(v, o - 1) for v, o in picked if o - 1 >= 1}
        level += 1
    return tuple(choices)


def _families(n_rows: int, child: dict[int, int]) -> list[list[int]]:
    """Each original equation followed by its derivatives, ``[e, e', e'', ...]``."""
    parent = set(child.values())
    families = []
    for k in range(n_rows):
        if k in parent:
            continue
        fam = [k]
        while fam[-1] in child:
            fam.append(child[fam[-1]])
        families.append(fam)
    return families


def _connected_blocks(
    g: Sequence[int], cand: Sequence[Col], rows: Sequence[frozenset[Col]]
) -> list[tuple[list[int], list[int]]]:
    """The connected components of the level's equations ``g`` and candidates ``cand``
    (bipartite: an edge where an equation holds a candidate), as positions in ``g`` and
    ``cand``; a choice in one never constrains another."""
    index = {c: j for j, c in enumerate(cand)}
    edges = [(i, len(g) + index[c]) for i, r in enumerate(g) for c in rows[r] if c in index]
    n = len(g) + len(cand)
    graph = sp.csr_matrix(
        (np.ones(len(edges)), ([a for a, _ in edges], [b for _, b in edges])), shape=(n, n)
    )
    _, label = connected_components(graph, directed=False)
    blocks: dict[int, tuple[list[int], list[int]]] = {}
    for node in range(n):
        eqs, cols = blocks.setdefault(int(label[node]), ([], []))
        (eqs if node < len(g) else cols).append(node if node < len(g) else node - len(g))
    return [b for b in blocks.values() if b[0]]


def _choose(
    level: int,
    block: tuple[list[int], list[Col]],
    rows: Sequence[frozenset[Col]],
    prices: list[tuple[float, float]],
    mat: sp.csr_matrix | None,
) -> Choice:
    """One block's dummies: the least-weight full matching for ``prices`` (cost, rank)
    of its candidates, checked against ``mat`` (``dg/dz`` of the block at the start
    point); see :func:`select_dummies`."""
    eqs, cols = block
    weights = [c + r / (len(eqs) + 1) for c, r in prices]
    single = len(cols) == 1  # one equation holding one candidate: nothing to choose
    cheapest = picked = [0] if single else least_cost_columns(eqs, cols, rows, weights)
    status = "unchecked"
    if mat is not None and np.all(np.isfinite(mat.data)):
        status, picked = regular_choice(mat, picked, np.argsort(weights, kind="stable"))
    ties = _ties(eqs, cols, rows, picked, [c for c, _ in prices])
    dummies = tuple(cols[j] for j in picked)
    return Choice(
        level, tuple(eqs), tuple(cols), dummies, ties, status, tuple(cols[j] for j in cheapest)
    )


def least_cost_columns(
    eqs: list[int], cols: list[Col], rows: Sequence[frozenset[Col]], weights: list[float]
) -> list[int]:
    """Positions in ``cols`` of a least-weight matching that covers every equation.

    The column sets that can be matched to distinct equations are the independent sets of
    a matroid (the transversal matroid of the block), and a full matching's columns are
    its bases, so the greedy algorithm finds the least-weight one: columns cheapest first,
    each kept when an augmenting path from it reaches an unmatched equation. The equations
    a failed search reached stay matched among themselves for good (no later path can
    leave them), so they are skipped from then on: near-linear on the sparse blocks of
    large models, where a general assignment solver (scipy's LAPJVsp) grows quadratically
    (0.95 s against 0.13 s on a 20,001 x 30,001 block)."""
    index = {c: j for j, c in enumerate(cols)}
    holders: list[list[int]] = [[] for _ in cols]  # column -> equations holding it
    for i, r in enumerate(eqs):
        for c in rows[r]:
            j = index.get(c)
            if j is not None:
                holders[j].append(i)
    matched = [-1] * len(eqs)  # equation -> its column
    closed = [False] * len(eqs)
    chosen: list[int] = []
    for j in sorted(range(len(cols)), key=weights.__getitem__):
        reached = _augment(j, holders, matched, closed)
        if reached is None:
            chosen.append(j)
            if len(chosen) == len(eqs):
                return sorted(chosen)
        else:
            for i in reached:
                closed[i] = True
    raise StructuralFailure("no full matching of the level's equations", eqs)


def _augment(
    start: int, holders: list[list[int]], matched: list[int], closed: list[bool]
) -> set[int] | None:
    """Match column ``start`` by an augmenting path (depth first, iterative): ``None`` when
    found (``matched`` updated along it), else the equations the search reached."""
    seen: set[int] = set()
    path, nexts, via = [start], [0], []  # columns, their next holder, equations between
    while path:
        col, k = path[-1], nexts[-1]
        if k == len(holders[col]):
            path.pop()
            nexts.pop()
            if via:
                via.pop()
            continue
        nexts[-1] = k + 1
        i = holders[col][k]
        if closed[i] or i in seen:
            continue
        seen.add(i)
        if matched[i] < 0:
            for c, e in zip(path, [*via, i]):
                matched[e] = c
            return None
        path.append(matched[i])
        nexts.append(0)
        via.append(i)
    return seen


def regular_choice(
    mat: np.ndarray | sp.spmatrix, picked: list[int], order: Sequence[int]
) -> tuple[str, list[int]]:
    """``("regular", picked)`` when the columns ``picked`` of ``mat`` (equations by
    candidates) are independent (:func:`independent_square`); else the first ``m``
    independent columns met in ``order`` (cheapest first), a least-cost basis of the column
    matroid (Edmonds' greedy, :func:`independent_columns`; dense, so only a choice singular
    at the start pays for it), as ``("reselected", ...)``; or ``("singular", picked)`` when
    ``mat`` has rank below its ``m`` rows, so that every choice is singular. The rows are
    scaled to a largest entry of 1 first: the answer does not depend on the units an
    equation is written in."""
    mat = sp.csr_matrix(mat, dtype=float)
    peak = abs(mat).max(axis=1).toarray().ravel()
    mat = sp.csr_matrix(sp.diags(1.0 / np.where(peak > 0, peak, 1.0)) @ mat)
    if independent_square(mat[:, picked]):
        return "regular", picked
    basis = independent_columns(mat.toarray(), order)
    if len(basis) < mat.shape[0]:
        return "singular", picked
    return "reselected", sorted(basis)


def independent_square(mat: sp.csr_matrix) -> bool:
    """Whether the columns of the square ``mat`` are independent, in linear time for the
    sparse, nearly triangular matrices of large models: structurally (a perfect matching
    of its nonzeros), then block by block. Its blocks (:func:`.algorithms.blt`) make it
    block triangular, so it is regular exactly when each diagonal block is; each is
    checked by :func:`independent_columns`, each column measured against its norm in the
    whole matrix: the Gram-Schmidt test of the whole matrix with its columns taken block
    after block, in which the earlier blocks' columns span all the rows they touch."""
    mat = sp.csr_matrix(mat)
    mat.eliminate_zeros()
    try:
        blocks = blt(mat)
    except StructuralFailure:
        return False
    norms = np.sqrt(np.asarray(mat.multiply(mat).sum(axis=0)).ravel())
    single = np.array([(r[0], c[0]) for r, c in blocks if len(r) == 1], dtype=np.int64)
    if len(single):  # a 1 x 1 block keeps |a| of the norm: all of them at once
        diagonal = np.abs(np.asarray(mat[single[:, 0], single[:, 1]]).ravel())
        if np.any(diagonal <= RANK_TOL * norms[single[:, 1]]):
            return False
    # the matrix in block order (two permutations): each block a slice of the diagonal
    ordered = mat[np.concatenate([r for r, _ in blocks])][:, np.concatenate([c for _, c in blocks])]
    ordered = sp.csr_matrix(ordered)
    start = 0
    for rows, cols in blocks:
        end = start + len(rows)
        if len(rows) > 1:
            sub = ordered[start:end][:, start:end].toarray()
            if len(independent_columns(sub, range(len(cols)), norms[cols])) < len(cols):
                return False
        start = end
    return True


def independent_columns(
    mat: np.ndarray, order: Sequence[int], norms: np.ndarray | None = None
) -> list[int]:
    """Columns of ``mat`` taken in ``order`` while each adds a direction: after removing
    its projection on those taken (Gram-Schmidt, twice), more than :data:`RANK_TOL` of its
    norm is left (``norms[j]``, when given, stands for column ``j``'s norm)."""
    basis: list[np.ndarray] = []
    taken: list[int] = []
    for j in order:
        col = mat[:, j].astype(float)
        norm = np.linalg.norm(col)
        if norm == 0:
            continue
        rest = col / norm
        for _ in range(2):
            for q in basis:
                rest = rest - (q @ rest) * q
        left = np.linalg.norm(rest)
        if left * norm > RANK_TOL * (norm if norms is None else norms[j]):
            basis.append(rest / left)
            taken.append(int(j))
        if len(taken) == mat.shape[0]:
            break
    return taken


def _ties(
    eqs: list[int],
    cols: list[Col],
    rows: Sequence[frozenset[Col]],
    picked: list[int],
    costs: list[float],
) -> tuple[tuple[Col, Col], ...]:
    """Pairs ``(kept, dummy)`` of equal cost where ``picked - dummy + kept`` still
    matches every equation: from a kept column, an alternating path (equation holding
    it, the column matched to that equation, another equation holding that column, ...)
    reaches exactly the dummies it can replace."""
    if len(picked) == len(cols):
        return ()
    index = {c: j for j, c in enumerate(cols)}
    holds = [[index[c] for c in rows[r] if c in index] for r in eqs]
    owner = _matching(holds, picked)  # equation -> its column
    by_col: dict[int, list[int]] = {}
    for i, js in enumerate(holds):
        for j in js:
            by_col.setdefault(j, []).append(i)
    ties = []
    for k in sorted(set(range(len(cols))) - set(picked)):
        seen, stack = {k}, [k]
        while stack:
            for i in by_col.get(stack.pop(), []):
                j = owner[i]
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        ties += [(cols[k], cols[j]) for j in sorted(seen - {k}) if costs[j] == costs[k]]
    return tuple(ties)


def _matching(holds: list[list[int]], picked: list[int]) -> dict[int, int]:
    """A perfect matching of the equations to the columns ``picked``: equation -> column."""
    allowed = set(picked)
    data = [(i, j) for i, js in enumerate(holds) for j in js if j in allowed]
    inc = sp.csr_matrix(
        (np.ones(len(data), dtype=np.int8), ([a for a, _ in data], [b for _, b in data])),
        shape=(len(holds), max(picked, default=-1) + 1),
    )
    row_to_col, _ = match(inc)
    return {i: int(j) for i, j in enumerate(row_to_col)}
