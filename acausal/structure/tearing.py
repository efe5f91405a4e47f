"""Tearing of linear algebraic loops: a large block solved through a few of its unknowns.

A linear block ``r(y) = A y + r(0) = 0`` (``A`` free of ``y``, its entries expressions of
states, parameters and earlier unknowns) of a mechanism's accelerations and joint forces
has dozens of unknowns, but most of its equations are a sum of forces, an acceleration
of a frame from its neighbour's or a cut force passed on: solvable for one unknown by
dividing by a coefficient that is a nonzero number (no state, and no parameter a user or
a fit may set to zero, can make it vanish). Tearing (as Modelica compilers do) picks a
few *tear* unknowns ``t`` and orders the other equations so that each gives one more
unknown from those already known,

    y_j = -(r_i(y) - A_ij y_j) / A_ij,     A_ij a nonzero number,

until only ``k`` *residual* equations are left: ``k x k`` instead of ``n x n``, the other
unknowns explicit functions of the tears. The residual equations with those substituted
are linear in the tears, ``s(t) = M t + s(0)``: a small system is solved symbolically
(:mod:`.causalize`), a larger one goes with its tears to Newton (IDAS's algebraic part).
The greedy order: an equation with one unknown left that it can be solved for is used at
once; when there is none, the unknown that occurs in the most unused equations is torn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import casadi as cs


class Tearing(NamedTuple):
    """The tearing of a block: ``order``, the pairs (equation, unknown it gives) in the
    order they are solved; ``tears``, the torn unknowns; ``residual``, the equations left
    (as many as there are tears)."""

    order: list[tuple[int, int]]
    tears: list[int]
    residual: list[int]


def tear(jac: cs.SX, safe: Callable[[cs.SX], bool]) -> Tearing:
    """The greedy tearing of the square block with Jacobian ``jac`` (see the module
    docstring); ``safe(a)``: whether an equation may be divided by its coefficient ``a``
    (nonzero wherever the model runs)."""
    n = jac.size1()
    rows, cols = jac.sparsity().get_triplet()
    var_eqs: list[set[int]] = [set() for _ in range(n)]
    left: list[set[int]] = [set() for _ in range(n)]  # each equation's unknowns not yet known
    for i, j in zip(rows, cols):
        var_eqs[j].add(i)
        left[i].add(j)
    solvable = {(i, j) for i, j in zip(rows, cols) if safe(jac[i, j])}
    used: set[int] = set()
    order: list[tuple[int, int]] = []
    tears: list[int] = []
    known: set[int] = set()

    def learn(j: int) -> None:
        known.add(j)
        for i in var_eqs[j]:
            left[i].discard(j)

    while len(known) < n:
        ready = [i for i in range(n) if i not in used and len(left[i]) == 1]
        ready = [(i, *left[i]) for i in ready if (i, *left[i]) in solvable]
        for i, j in ready:
            if j not in known:  # two equations may be ready for one unknown
                used.add(i)
                order.append((i, j))
                learn(j)
        if ready:
            continue
        free = [j for j in range(n) if j not in known]
        torn = max(free, key=lambda j: (sum(i not in used for i in var_eqs[j]), -j))
        tears.append(torn)
        learn(torn)
    return Tearing(order, tears, [i for i in range(n) if i not in used])


def inner_solutions(res: cs.SX, y: cs.SX, jac: cs.SX, tearing: Tearing) -> tuple[list, list]:
    """``(syms, values)``: each inner unknown of ``tearing`` as an expression of the tear
    unknowns and the inner ones before it, ``y_j = -r_i(y_j = 0) / A_ij``."""
    order = tearing.order
    syms = [y[j] for _, j in order]
    return syms, [-cs.substitute(res[i], y[j], 0) / jac[i, j] for i, j in order]
