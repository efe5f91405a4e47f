"""The structural algorithms on plain integers: Pantelides, dummy derivatives, BLT.

An equation's incidence is a set of columns ``(v, o)``: unknown ``v`` differentiated ``o``
times. Nothing here knows symbols; where an equation must be differentiated, the caller's
callback does it and returns the new equation's incidence, so a test can hand these
functions a five-equation graph and check the answer.

- :func:`pantelides`: an equation that finds no augmenting path over the highest
  derivatives (``o = hv[v]``) marks a structurally singular subset; each of its equations
  is differentiated and each of its unknowns gains one order, until every equation is
  matched to a highest derivative (Pantelides 1988). The search is iterative (an explicit
  stack): a model's size never meets the interpreter's recursion limit.
- the dummy-derivative selection that follows Pantelides is :mod:`.dummies`.
- :func:`blt`: a maximum matching, then the strongly connected components of the
  equation dependency graph (sparse, scipy) in topological order: the blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence, Set
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .graph import match

Col = tuple[int, int]  # (unknown index, derivative order)


class StructuralFailure(Exception):  # noqa: N818 - a result the caller turns into a message
    """The algorithm cannot go on; ``equations`` are the equation indices involved."""

    def __init__(self, reason: str, equations: Sequence[int]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.equations = tuple(equations)


class Pattern(NamedTuple):
    """The incidence of equations as a 0/1 sparse ``matrix`` (a row per equation) over
    numbered columns, column ``c`` being ``(v[c], o[c])``: the same as the rows' sets of
    columns, as arrays."""

    matrix: sp.csr_matrix
    v: np.ndarray
    o: np.ndarray


class PatternRows(Sequence[frozenset[Col]]):
    """The rows of a :class:`Pattern` as the sets of their columns ``(v, o)``, each made
    when read, all of them in one pass when iterated: index reduction reads none where
    the first matching is complete (most models)."""

    def __init__(self, pattern: Pattern) -> None:
        self.pattern = pattern

    def __len__(self) -> int:
        return self.pattern.matrix.shape[0]

    def __getitem__(self, e: int) -> frozenset[Col]:  # type: ignore[override]
        if not 0 <= e < len(self):
            raise IndexError(e)
        mat, v, o = self.pattern
        held = mat.indices[mat.indptr[e] : mat.indptr[e + 1]]
        return frozenset(zip(v[held].tolist(), o[held].tolist()))

    def __iter__(self) -> Iterator[frozenset[Col]]:
        mat, v, o = self.pattern
        cell = list(zip(v.tolist(), o.tolist())).__getitem__
        held, bounds = mat.indices.tolist(), mat.indptr.tolist()
        return (frozenset(map(cell, held[a:b])) for a, b in zip(bounds, bounds[1:]))


@dataclass(frozen=True)
class Pantelides:
    """Pantelides' result: every equation's incidence (the original ones first, then the
    derivatives in the order they were made; the caller's rows themselves when none was
    differentiated), ``child[e]`` the derivative of equation
    ``e``, ``orders[e]`` how many times equation ``e`` is differentiated, the highest order
    ``hv[v]`` of each unknown, ``assign[v]`` the equation matched to it, and the
    differentiation index (the most differentiations of one equation, plus one when some
    unknown appears undifferentiated only)."""

    rows: Sequence[Set[Col]]
    child: dict[int, int]
    orders: tuple[int, ...]
    hv: tuple[int, ...]
    assign: dict[int, int]
    index: int


def _pattern_of(rows: Sequence[set[Col]]) -> Pattern:
    """The rows' sets of columns as a :class:`Pattern`, the columns numbered in the order
    of ``(v, o)``."""
    entries = [(r, v, o) for r, row in enumerate(rows) for v, o in row]
    r, v, o = np.array(entries, dtype=np.int64).reshape(-1, 3).T
    width = int(o.max(initial=0)) + 1
    cols, at = np.unique(v * width + o, return_inverse=True)
    matrix = sp.csr_matrix(
        (np.ones(len(r), dtype=np.int8), (r, at.ravel())), shape=(len(rows), len(cols))
    )
    return Pattern(matrix, cols // width, cols % width)


def _highest_matrix(pattern: Pattern, n_unknowns: int) -> tuple[list[int], sp.csr_matrix]:
    """``hv[v]``: the highest derivative order of unknown ``v`` in the rows ``pattern``,
    and their incidence in the highest derivatives (a row per equation, a column per
    unknown)."""
    mat = pattern.matrix
    held = mat.indices
    v, o = pattern.v[held], pattern.o[held]
    hv = np.zeros(n_unknowns, dtype=np.int64)
    np.maximum.at(hv, v, o)
    top = o == hv[v]
    rows = np.repeat(np.arange(mat.shape[0]), np.diff(mat.indptr))[top]
    inc = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.int8), (rows, v[top])), shape=(mat.shape[0], n_unknowns)
    )
    inc.sum_duplicates()
    return hv.tolist(), inc


def _initial_assignment(inc: sp.csr_matrix) -> dict[int, int]:
    """Maximum matching of equations to highest derivatives, as ``{unknown: equation}``;
    ``inc``: their incidence (:func:`_highest_matrix`)."""
    if not inc.nnz:
        return {}
    _, col_to_row = match(inc)
    matched = np.flatnonzero(col_to_row >= 0)
    return dict(zip(matched.tolist(), col_to_row[matched].tolist()))


def _augment(
    root: int,
    rows: Sequence[set[Col]],
    hv: Sequence[int],
    assign: dict[int, int],
    colored_e: set[int],
    colored_v: set[int],
) -> bool:
    """Pantelides' augmenting path search from equation ``root`` over the highest
    derivatives, depth first with an explicit stack (the recursive search's visiting order):
    an equation takes a free highest derivative, else each uncolored one in turn is colored
    and its equation searched on; on success, every equation on the path takes the unknown
    it went through."""

    def enter(e: int) -> list[int] | None:
        colored_e.add(e)
        active = [v for v, o in rows[e] if o == hv[v]]
        for v in active:
            if v not in assign:
                assign[v] = e
                return None
        return active

    active = enter(root)
    if active is None:
        return True
    stack: list[list] = [[root, active, 0, -1]]  # equation, candidates, next, unknown taken
    while stack:
        frame = stack[-1]
        e, active, k, _ = frame
        while k < len(active) and active[k] in colored_v:
            k += 1
        if k == len(active):
            stack.pop()
            continue
        v = active[k]
        frame[2], frame[3] = k + 1, v
        colored_v.add(v)
        deeper = enter(assign[v])
        if deeper is None:
            for eq, _, _, taken in reversed(stack):
                assign[taken] = eq
            return True
        stack.append([assign[v], deeper, 0, -1])
    return False


def pantelides(
    rows: Sequence[Set[Col]],
    n_unknowns: int,
    differentiate: Callable[[int], set[Col]],
    pattern: Pattern | None = None,
) -> Pantelides:
    """Index reduction of the equations ``rows`` (see the module docstring).
    ``differentiate(e)`` makes the derivative of equation ``e`` on the caller's side
    (numbered ``len(rows)`` at that moment) and returns its incidence. ``pattern``: the
    same rows as arrays, when the caller has them (else made of them: :func:`_pattern_of`);
    the first matching takes a few array operations on them."""
    hv, inc = _highest_matrix(_pattern_of(rows) if pattern is None else pattern, n_unknowns)
    original_algebraic = any(h == 0 for h in hv)
    child: dict[int, int] = {}
    assign = _initial_assignment(inc)
    if len(assign) == len(rows):  # every equation matched: nothing to differentiate
        index = int(original_algebraic)
        return Pantelides(rows, child, (0,) * len(rows), tuple(hv), assign, index)
    rows = [set(r) for r in rows]
    # the matched equations, kept up to date: an augmenting path matches its root and keeps
    # every other equation on it matched; differentiating moves a match to the derivative
    matched = set(assign.values())
    n_original = len(rows)
    for k in range(n_original):
        i = k
        while i in child:  # differentiated while an earlier equation was augmented
            i = child[i]
        if i in matched:
            continue
        for _ in range(len(rows) + 10):
            colored_e: set[int] = set()
            colored_v: set[int] = set()
            if _augment(i, rows, hv, assign, colored_e, colored_v):
                matched.add(i)
                break
            for v in colored_v:
                hv[v] += 1
            for e in sorted(colored_e):
                child[e] = len(rows)
                rows.append(set(differentiate(e)))
            for v in colored_v:
                matched.discard(assign[v])
                assign[v] = child[assign[v]]
                matched.add(assign[v])
            i = child[i]
        else:
            raise StructuralFailure("index reduction did not terminate", [k])
    orders = [0] * len(rows)
    for e in range(len(rows)):  # a derivative is numbered after its equation
        if e in child:
            orders[child[e]] = orders[e] + 1
    index = max(orders, default=0) + int(original_algebraic)
    frozen = tuple(frozenset(r) for r in rows)
    return Pantelides(frozen, child, tuple(orders), tuple(hv), assign, index)


def states_and_algebraic(hv: Sequence[int], dummies: frozenset[Col]) -> tuple[list[Col], list[Col]]:
    """``(v, o)`` is a state when ``(v, o + 1)`` exists (``o < hv[v]``) and is not a dummy;
    every other column up to ``hv[v]`` is algebraic. Both in the order of ``(v, o)``."""
    v, o, state = state_columns(hv, dummies)
    states = list(zip(v[state].tolist(), o[state].tolist()))
    algebraic = list(zip(v[~state].tolist(), o[~state].tolist()))
    return states, algebraic


def state_columns(
    hv: Sequence[int] | np.ndarray, dummies: frozenset[Col]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The columns ``(v, o)``, ``o <= hv[v]``, in their order as arrays ``v`` and ``o``, and
    which are states (:func:`states_and_algebraic`)."""
    width = np.asarray(hv, dtype=np.int64) + 1  # columns of each unknown
    start = np.cumsum(width) - width
    v = np.repeat(np.arange(len(width)), width)
    o = np.arange(len(v)) - start[v]
    state = o < width[v] - 1
    lowered = [start[u] + k - 1 for u, k in dummies if 1 <= k < width[u]]  # (u, k - 1)
    state[lowered] = False
    return v, o, state


def blt(inc: sp.csr_matrix) -> list[tuple[list[int], list[int]]]:
    """Blocks ``(equation rows, their matched columns)`` of a square incidence matrix in
    an order that solves each after the blocks it needs (:func:`blt_order`, as lists); a
    :class:`StructuralFailure` names the unmatched rows."""
    rows, cols, bounds = (a.tolist() for a in blt_order(inc))
    return [(rows[a:b], cols[a:b]) for a, b in zip(bounds, bounds[1:])]


def blt_order(inc: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The blocks of a square incidence matrix in an order that solves each after the
    blocks it needs, as arrays: the rows of the blocks, block after block (each block's
    ascending), their matched columns, and the blocks' bounds (block ``k`` is
    ``rows[bounds[k]:bounds[k + 1]]``); a :class:`StructuralFailure` names the unmatched
    rows.

    After a maximum matching, equation ``r`` depends on equation ``s`` when ``r`` holds
    the column matched to ``s``; the blocks are the strongly connected components of that
    graph (:func:`scipy.sparse.csgraph.connected_components`, on a sparse matrix), ordered
    by :func:`_topological_order`.
    """
    n = inc.shape[0]
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(1, dtype=np.int64)
    row_to_col, col_to_row = match(inc)
    if (row_to_col < 0).any():
        raise StructuralFailure("imperfect matching", np.nonzero(row_to_col < 0)[0].tolist())
    rows = np.repeat(np.arange(n), np.diff(inc.indptr))
    src = col_to_row[inc.indices]
    edge = src != rows
    dep = sp.csr_matrix(
        (np.ones(int(edge.sum()), dtype=np.int8), (src[edge], rows[edge])), shape=(n, n)
    )
    dep.sum_duplicates()  # also sorts each row's columns
    n_blocks, label = connected_components(dep, directed=True, connection="strong")
    label = label.astype(np.int64)
    order = np.asarray(_topological_order(dep, n_blocks, label), dtype=np.int64)
    rank = np.empty(n_blocks, dtype=np.int64)
    rank[order] = np.arange(n_blocks)  # each block's place in the order
    members = np.argsort(rank[label], kind="stable")  # block after block, each ascending
    bounds = np.concatenate(([0], np.cumsum(np.bincount(label, minlength=n_blocks)[order])))
    return members, row_to_col[members], bounds


def runs(items: Sequence, bounds: np.ndarray) -> list[tuple]:
    """``tuple(items[bounds[k]:bounds[k + 1]])`` for each ``k``: the runs of one item (most
    blocks of a model) made in bulk, as the 1-tuples ``zip`` makes, the others one by one."""
    starts, stops = bounds[:-1].tolist(), bounds[1:].tolist()
    out = list(zip(map(items.__getitem__, starts)))
    for k in np.flatnonzero(np.diff(bounds) > 1).tolist():
        out[k] = tuple(items[starts[k] : stops[k]])
    return out


def _topological_order(dep: sp.csr_matrix, n_blocks: int, label: np.ndarray) -> np.ndarray:
    """The blocks (strong components ``label`` of the graph ``dep``) in a topological order:
    Kahn's generations, each in the order its blocks became free (a block's successors in
    the order their edges first appear over ``dep``'s entries, row by row), the first in the
    order of their least nodes. This is the order
    ``networkx.topological_sort(networkx.condensation(g))`` gives, so the BLT of a model is
    the same as before the graphs were sparse matrices: networkx numbers the components as
    Tarjan's search emits them, and a block no edge enters is entered only as the root of
    a new search, from its least node, after the searches of lesser roots have finished."""
    n = dep.shape[0]
    src = label[np.repeat(np.arange(n), np.diff(dep.indptr))]
    dst = label[dep.indices]
    cross = src != dst
    src, dst = src[cross], dst[cross]
    # the condensation's edges, in order of first appearance
    _, first_seen = np.unique(src * n_blocks + dst, return_index=True)
    first_seen.sort()
    src, dst = src[first_seen], dst[first_seen]
    successors = dst[np.argsort(src, kind="stable")]
    bounds = np.concatenate(([0], np.cumsum(np.bincount(src, minlength=n_blocks))))
    remaining = np.bincount(dst, minlength=n_blocks)
    least = np.full(n_blocks, n)
    np.minimum.at(least, label, np.arange(n))
    free = np.flatnonzero(remaining == 0)
    free = free[np.argsort(least[free])]
    order = []
    while len(free) >= WIDE_GENERATION:  # whole generations as arrays
        order.append(free)
        free = _freed(free, successors, bounds, remaining)
    rest = _kahn(free.tolist(), successors.tolist(), bounds.tolist(), remaining.tolist())
    return np.concatenate([*order, np.array(rest, dtype=np.int64)])


# a generation of Kahn's algorithm this wide is scanned as arrays (some ten numpy calls,
# the time of scanning some hundred edges one by one); narrower ones, and all after them
# (a model of long paths has many), one by one
WIDE_GENERATION = 128


def _freed(
    free: np.ndarray, successors: np.ndarray, bounds: np.ndarray, remaining: np.ndarray
) -> np.ndarray:
    """The generation of Kahn's algorithm after ``free``, as :func:`_kahn` scans it: the
    successors of the blocks ``free`` in turn (block ``x``'s are
    ``successors[bounds[x]:bounds[x + 1]]``), each edge lowering its head's ``remaining``
    in-degree (in place); a head is freed by the edge that lowers it to zero, its last
    one scanned, so the freed are ordered by their last edge."""
    lengths = bounds[free + 1] - bounds[free]
    total = int(lengths.sum())
    firsts = np.repeat(bounds[free] - np.cumsum(lengths) + lengths, lengths)
    scanned = successors[firsts + np.arange(total)]
    heads, from_end, counts = np.unique(scanned[::-1], return_index=True, return_counts=True)
    remaining[heads] -= counts
    done = remaining[heads] == 0
    return heads[done][np.argsort(-from_end[done])]


def _kahn(free: list[int], successors: list[int], bounds: list[int], remaining: list[int]) -> list:
    """Kahn's generations from ``free`` on, edge by edge (as :func:`_freed` does them),
    ``free`` first."""
    order: list[int] = []
    while free:
        order += free
        generation, free = free, []
        for x in generation:
            for y in successors[bounds[x] : bounds[x + 1]]:
                remaining[y] -= 1
                if not remaining[y]:
                    free.append(y)
    return order
