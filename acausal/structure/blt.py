"""Block lower triangular ordering by Tarjan's strongly connected components.

With states known, the equations of the index-1 system are matched to the algebraic
unknowns (derivatives, dummy derivatives, algebraic variables). Equation ``e`` depends on
equation ``e'`` when ``e`` contains the unknown matched to ``e'``; the strongly connected
components of that dependency graph are the blocks (algebraic loops when larger than one)
and a topological order of them solves each block after the blocks it needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from ..errors import StructureError
from .graph import incidence, match
from .index import Col, IndexReduced


@dataclass(frozen=True)
class Block:
    """Equations solved together for some unknowns; ``kind`` is decided by causalization:
    ``"explicit"``, ``"linear"`` (solved symbolically) or ``"newton"``."""

    equations: tuple[int, ...]  # indices into IndexReduced.equations
    unknowns: tuple[Col, ...]
    kind: str = "newton"


def sort_blt(ir: IndexReduced) -> list[Block]:
    """Blocks of the index-1 system in solution order."""
    n = len(ir.equations)
    if n != len(ir.algebraic):
        raise StructureError(
            f"index reduction left {n} equations for {len(ir.algebraic)} algebraic unknowns"
        )
    if n == 0:
        return []
    inc = incidence([e.residual for e in ir.equations], [ir.sym(c) for c in ir.algebraic])
    row_to_col, col_to_row = match(inc)
    if (row_to_col < 0).any():
        bad = [ir.equations[r].origin for r in range(n) if row_to_col[r] < 0]
        raise StructureError(
            "after index reduction the equations do not determine the algebraic unknowns; "
            "unmatched equations:\n    " + "\n    ".join(bad[:12])
        )
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    for r in range(n):
        for c in inc.indices[inc.indptr[r] : inc.indptr[r + 1]]:
            src = int(col_to_row[c])
            if src != r:
                g.add_edge(src, r)
    cond = nx.condensation(g)
    blocks = []
    for node in nx.topological_sort(cond):
        rows = sorted(cond.nodes[node]["members"])
        blocks.append(Block(tuple(rows), tuple(ir.algebraic[int(row_to_col[r])] for r in rows)))
    return blocks
