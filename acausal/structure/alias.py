"""Alias elimination: drop equations ``a = +-b`` and ``a = c`` (c a number).

An equation whose residual depends on exactly two undifferentiated variables with
constant coefficients of equal magnitude and no constant term, ``k a + k' b = 0`` with
``|k| = |k'|``, makes ``a = -(k'/k) b`` an alias; one depending on one variable with a
constant coefficient makes it a constant. Alias classes are kept by a union-find with
signs; each class keeps one representative (preferring differentiated variables, fixed
start values, state priority and component variables over connector variables), and
every other member, and its derivative, is replaced by ``+-representative``. A cycle of
aliases that closes consistently is a redundant equation; it stays in the model so that
the balance check can name it. Passes repeat until nothing changes, because eliminating
constants turns ``v = p.v - n.v`` with ``n.v = 0`` into an alias.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs
import numpy as np

from ..errors import InitializationError
from ..flatten import FlatDAE, FlatEquation
from ..symbols import Quantity, quantity_of


@dataclass
class Start:
    """Start value of an unknown after alias elimination, with the variable it came from."""

    value: cs.SX | float
    fixed: bool
    source: str


@dataclass
class Reduced:
    """Equations and unknowns left after alias elimination."""

    flat: FlatDAE
    equations: list[FlatEquation]
    unknowns: list[Quantity]
    eliminated: dict[Quantity, cs.SX]  # variable -> expression in representatives
    members: dict[Quantity, list[Quantity]]  # representative -> other members
    starts: dict[Quantity, Start]


def _preference(q: Quantity) -> tuple:
    return (
        q._der is None,
        not q.fixed,
        -q.state_priority,
        q.start is None,
        "." in q.local,
        len(q.name),
        q.name,
    )


def _find(parent: dict, sign: dict, q: Quantity) -> tuple[Quantity, float]:
    s = 1.0
    root = q
    while parent[root] is not root:
        s *= sign[root]
        root = parent[root]
    # path compression
    node, acc = q, s
    while parent[node] is not root:
        nxt, ns = parent[node], sign[node]
        parent[node], sign[node] = root, acc
        acc *= ns
        node = nxt
    return root, s


def eliminate_aliases(flat: FlatDAE, default_params: dict[str, float]) -> Reduced:
    """Apply alias elimination to ``flat``; see the module docstring."""
    equations = list(flat.equations)
    unknowns = [q for q in flat.variables]
    parent = {q: q for q in unknowns}
    sign = {q: 1.0 for q in unknowns}
    const: dict[Quantity, float] = {}  # root -> constant value of its class
    eliminated: dict[Quantity, cs.SX] = {}
    while True:
        keep, found = _classify(equations, parent, sign, const)
        if not found:
            break
        equations = keep
        old, new = _substitutions(unknowns, parent, sign, const, eliminated)
        unknowns = [q for q in unknowns if q not in eliminated]
        if equations and old:
            res = cs.vertcat(*[e.residual for e in equations])
            res = cs.substitute(res, cs.vertcat(*old), cs.vertcat(*new))
            equations = [FlatEquation(res[k], e.source) for k, e in enumerate(equations)]
    members: dict[Quantity, list[Quantity]] = {}
    for q in eliminated:  # final expressions: a representative may have been eliminated later
        root, s = _find(parent, sign, q)
        eliminated[q] = cs.SX(s * const[root]) if root in const else s * root.sym
        members.setdefault(root, []).append(q)
    starts = _merge_starts(flat, parent, sign, const, default_params)
    return Reduced(flat, equations, unknowns, eliminated, members, starts)


def _classify(equations, parent, sign, const) -> tuple[list[FlatEquation], bool]:
    """Unite alias classes from alias equations; return the other equations."""
    if not equations:
        return equations, False
    res = cs.vertcat(*[e.residual for e in equations])
    syms = cs.symvar(res)
    jac = cs.jacobian(res, cs.vertcat(*syms))
    rows, cols = jac.sparsity().get_triplet()
    nz = jac.nonzeros()
    per_row: dict[int, list[int]] = {}
    for k, r in enumerate(rows):
        per_row.setdefault(r, []).append(k)
    keep: list[FlatEquation] = []
    found = False
    for r, eq in enumerate(equations):
        ks = per_row.get(r, [])
        if _try_alias(eq.residual, ks, cols, nz, syms, parent, sign, const):
            found = True
        else:
            keep.append(eq)
    return keep, found


def _try_alias(residual, ks, cols, nz, syms, parent, sign, const) -> bool:
    if len(ks) not in (1, 2) or not all(nz[k].is_constant() for k in ks):
        return False
    qs = []
    for k in ks:
        sym = syms[cols[k]]
        if sym.name() == "time":
            return False
        q = quantity_of(sym)
        if q not in parent:  # parameter or derivative
            return False
        qs.append(q)
    coef = [float(nz[k]) for k in ks]
    offset = cs.substitute(residual, cs.vertcat(*[q.sym for q in qs]), cs.DM.zeros(len(qs)))
    if not offset.is_constant():
        return False
    offset = float(offset)
    if len(qs) == 1:
        (q,), (a,) = qs, coef
        if q._der is not None:
            return False
        root, s = _find(parent, sign, q)
        if root in const:
            return False  # a second constant for the class: keep as equation
        const[root] = -offset / a * s
        return True
    if offset != 0.0 or abs(coef[0]) != abs(coef[1]):
        return False
    (ra, sa), (rb, sb) = (_find(parent, sign, q) for q in qs)
    if ra is rb:
        return False  # closes a cycle: redundant or contradictory, keep it
    if ra in const and rb in const:
        return False
    rel = -coef[1] / coef[0]  # a = rel * b
    # attach the less preferred root under the other: ra = sa*a, a = rel*b, b = sb*rb
    s = sa * rel * sb  # ra = s * rb
    if _preference(ra) < _preference(rb):
        parent[rb], sign[rb] = ra, s  # rb = s * ra (s = +-1)
        if rb in const:
            const[ra] = s * const.pop(rb)
    else:
        parent[ra], sign[ra] = rb, s
        if ra in const:
            const[rb] = s * const.pop(ra)
    return True


def _substitutions(unknowns, parent, sign, const, eliminated) -> tuple[list, list]:
    """Record the expression of every newly eliminated variable; symbols and replacements."""
    old: list[cs.SX] = []
    new: list[cs.SX] = []
    for q in unknowns:
        root, s = _find(parent, sign, q)
        if root in const:
            value = cs.SX(s * const[root])
        elif root is q:
            continue
        else:
            value = s * root.sym
        eliminated[q] = value
        old.append(q.sym)
        new.append(value)
        if q._der is not None:
            old.append(q._der.sym)
            new.append(cs.SX(0) if root in const else s * root.derivative().sym)
    return old, new


def _merge_starts(flat, parent, sign, const, default_params) -> dict[Quantity, Start]:
    """One start value per class; two different fixed values in a class are an error."""
    pvals = cs.vertcat(*[p.sym for p in flat.parameters]) if flat.parameters else cs.SX()
    pnum = [default_params[p.name] for p in flat.parameters]

    def numeric(expr) -> float:
        e = cs.SX(expr)
        if pvals.numel():
            e = cs.substitute(e, pvals, cs.DM(pnum))
        return float(cs.evalf(e))

    starts: dict[Quantity, Start] = {}
    for q in flat.variables:
        if q.start is None:
            continue
        root, s = _find(parent, sign, q)
        value = s * q.start
        if root in const:
            if q.fixed and not np.isclose(numeric(value), const[root]):
                raise InitializationError(
                    f"fixed start value {q.name} = {numeric(q.start):g} conflicts with the "
                    f"model: {q.name} is constant {s * const[root]:g}; remove the start value"
                )
            continue
        prev = starts.get(root)
        if prev is None or (q.fixed and not prev.fixed):
            starts[root] = Start(value, q.fixed, q.name)
        elif q.fixed and prev.fixed and not np.isclose(numeric(value), numeric(prev.value)):
            raise InitializationError(
                f"conflicting fixed start values: {prev.source} and {q.name} are the same "
                f"variable (connected or aliased) but start at {numeric(prev.value):g} and "
                f"{numeric(value):g} (after sign); remove or align one of them"
            )
    return starts
