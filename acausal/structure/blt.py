"""Block lower triangular ordering by the strongly connected components of the equations.

With states known, the equations of the index-1 system are matched to the algebraic
unknowns (derivatives, dummy derivatives, algebraic variables). Equation ``e`` depends on
equation ``e'`` when ``e`` contains the unknown matched to ``e'``; the strongly connected
components of that dependency graph are the blocks (algebraic loops when larger than one)
and a topological order of them solves each block after the blocks it needs. The graph
work is :func:`.algorithms.blt_order`, on integers.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import repeat
from typing import NamedTuple

from ..errors import StructureError
from ..flat import maker
from .algorithms import StructuralFailure, blt_order, runs
from .index import Col, IndexReduced


class Block(NamedTuple):
    """Equations solved together for some unknowns; ``kind`` is decided by causalization:
    ``"explicit"``, ``"linear"`` (solved symbolically), ``"torn"`` (a large linear loop:
    Newton on its tear unknowns, the rest explicit), ``"torn-solved"`` (the same with its
    few tear unknowns solved symbolically) or ``"newton"``."""

    equations: tuple[int, ...]  # indices into IndexReduced.equations
    unknowns: tuple[Col, ...]
    kind: str = "newton"


def sort_blt(ir: IndexReduced) -> tuple[Block, ...]:
    """Blocks of the index-1 system in solution order (:func:`.algorithms.blt_order` on its
    equations and algebraic unknowns: the incidence index reduction found, restricted to
    the algebraic columns)."""
    n = len(ir.equations)
    if n != len(ir.algebraic):
        raise StructureError(
            f"index reduction left {n} equations for {len(ir.algebraic)} algebraic unknowns"
        )
    inc = ir.pattern[:, ir.column_order[len(ir.states) :]].tocsr()
    inc.sum_duplicates()
    try:
        rows, cols, bounds = blt_order(inc)
    except StructuralFailure as exc:
        bad = [ir.equations[r].origin for r in exc.equations]
        raise StructureError(
            "after index reduction the equations do not determine the algebraic unknowns; "
            "unmatched equations:\n    " + "\n    ".join(bad[:12])
        ) from None
    equations = runs(rows.tolist(), bounds)
    unknowns = runs(list(map(ir.algebraic.__getitem__, cols.tolist())), bounds)
    return blocks_of(equations, unknowns, repeat("newton"))


def blocks_of(
    equations: Iterable[tuple[int, ...]], unknowns: Iterable[tuple[Col, ...]], kinds: Iterable[str]
) -> tuple[Block, ...]:
    """``Block(e, u, k)`` for each ``e, u, k`` of the three in turn, made in bulk
    (:func:`~acausal.flat.maker`: a model has one block per scalar equation)."""
    return tuple(map(maker(Block), zip(equations, unknowns, kinds)))
