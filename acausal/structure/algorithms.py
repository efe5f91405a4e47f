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
- :func:`blt`: a maximum matching, then Tarjan's strongly connected components of the
  equation dependency graph in topological order: the blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import networkx as nx
import numpy as np
import scipy.sparse as sp

from .graph import match

Col = tuple[int, int]  # (unknown index, derivative order)


class StructuralFailure(Exception):  # noqa: N818 - a result the caller turns into a message
    """The algorithm cannot go on; ``equations`` are the equation indices involved."""

    def __init__(self, reason: str, equations: Sequence[int]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.equations = tuple(equations)


@dataclass(frozen=True)
class Pantelides:
    """Pantelides' result: every equation's incidence (the original ones first, then the
    derivatives in the order they were made), ``child[e]`` the derivative of equation
    ``e``, ``orders[e]`` how many times equation ``e`` is differentiated, the highest order
    ``hv[v]`` of each unknown, ``assign[v]`` the equation matched to it, and the
    differentiation index (the most differentiations of one equation, plus one when some
    unknown appears undifferentiated only)."""

    rows: tuple[frozenset[Col], ...]
    child: dict[int, int]
    orders: tuple[int, ...]
    hv: tuple[int, ...]
    assign: dict[int, int]
    index: int


def highest_orders(rows: Sequence[set[Col]], n_unknowns: int) -> list[int]:
    """``hv[v]``: the highest derivative order of unknown ``v`` in ``rows``."""
    hv = [0] * n_unknowns
    for row in rows:
        for v, o in row:
            hv[v] = max(hv[v], o)
    return hv


def _initial_assignment(rows: Sequence[set[Col]], hv: Sequence[int]) -> dict[int, int]:
    """Maximum matching of equations to highest derivatives, as ``{unknown: equation}``."""
    data = [(r, v) for r, row in enumerate(rows) for v, o in row if o == hv[v]]
    if not data:
        return {}
    r_idx = np.array([d[0] for d in data], dtype=np.int64)
    c_idx = np.array([d[1] for d in data], dtype=np.int64)
    inc = sp.csr_matrix(
        (np.ones(len(data), dtype=np.int8), (r_idx, c_idx)), shape=(len(rows), len(hv))
    )
    inc.sum_duplicates()
    _, col_to_row = match(inc)
    return {int(c): int(r) for c, r in enumerate(col_to_row) if r >= 0}


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
    rows: Sequence[set[Col]], n_unknowns: int, differentiate: Callable[[int], set[Col]]
) -> Pantelides:
    """Index reduction of the equations ``rows`` (see the module docstring).
    ``differentiate(e)`` makes the derivative of equation ``e`` on the caller's side
    (numbered ``len(rows)`` at that moment) and returns its incidence."""
    rows = [set(r) for r in rows]
    hv = highest_orders(rows, n_unknowns)
    original_algebraic = any(h == 0 for h in hv)
    child: dict[int, int] = {}
    assign = _initial_assignment(rows, hv)
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
                break
            for v in colored_v:
                hv[v] += 1
            for e in sorted(colored_e):
                child[e] = len(rows)
                rows.append(set(differentiate(e)))
            for v in colored_v:
                assign[v] = child[assign[v]]
            i = child[i]
        else:
            raise StructuralFailure("index reduction did not terminate", [k])
        matched = set(assign.values())
    orders = [0] * len(rows)
    for e in range(len(rows)):  # a derivative is numbered after its equation
        if e in child:
            orders[child[e]] = orders[e] + 1
    index = max(orders, default=0) + int(original_algebraic)
    frozen = tuple(frozenset(r) for r in rows)
    return Pantelides(frozen, child, tuple(orders), tuple(hv), assign, index)


def states_and_algebraic(hv: Sequence[int], dummies: frozenset[Col]) -> tuple[list[Col], list[Col]]:
    """``(v, o)`` is a state when ``(v, o + 1)`` exists (``o < hv[v]``) and is not a dummy;
    every other column up to ``hv[v]`` is algebraic."""
    states = [(v, o) for v in range(len(hv)) for o in range(hv[v]) if (v, o + 1) not in dummies]
    state_set = set(states)
    algebraic = [
        (v, o) for v in range(len(hv)) for o in range(hv[v] + 1) if (v, o) not in state_set
    ]
    return states, algebraic


def blt(inc: sp.csr_matrix) -> list[tuple[list[int], list[int]]]:
    """Blocks ``(equation rows, their matched columns)`` of a square incidence matrix in
    an order that solves each after the blocks it needs; a :class:`StructuralFailure`
    names the unmatched rows."""
    n = inc.shape[0]
    if n == 0:
        return []
    row_to_col, col_to_row = match(inc)
    if (row_to_col < 0).any():
        raise StructuralFailure("imperfect matching", np.nonzero(row_to_col < 0)[0].tolist())
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for r in range(n):
        for c in inc.indices[inc.indptr[r] : inc.indptr[r + 1]]:
            src = int(col_to_row[c])
            if src != r:
                g.add_edge(src, r)
    cond = nx.condensation(g)
    out = []
    for node in nx.topological_sort(cond):
        members = sorted(cond.nodes[node]["members"])
        out.append((members, [int(row_to_col[r]) for r in members]))
    return out
