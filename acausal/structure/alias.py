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
from ..symbols import Quantity, quantity_of, time
from .graph import incidence


@dataclass
class Start:
    """Start value of an unknown after alias elimination, with the variable it came from."""

    value: cs.SX | float
    fixed: bool
    source: str


Alias = tuple[float, "Quantity | None", float]  # (sign, representative or None, constant)
Parents = dict[Quantity, Quantity]  # union-find parent
Signs = dict[Quantity, float]  # q = sign[q] * parent[q]
Constants = dict[Quantity, float]  # class root -> its constant value


@dataclass
class Reduced:
    """Equations and unknowns left after alias elimination."""

    flat: FlatDAE
    equations: list[FlatEquation]
    unknowns: list[Quantity]
    eliminated: dict[Quantity, Alias]  # variable -> sign * representative + constant
    members: dict[Quantity, list[Quantity]]  # representative -> other members
    starts: dict[Quantity, Start]


def _preference(q: Quantity) -> tuple:
    """Sort key of representatives: differentiated, fixed start, state priority, any start,
    component variable (not a connector's), short local name, then declaration order."""
    return (
        q._der is None,
        not q.fixed,
        -q.state_priority,
        q.start is None,
        "." in q.local,
        len(q.local),
        q.uid,
    )


def _find(parent: Parents, sign: Signs, q: Quantity) -> tuple[Quantity, float]:
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
    sources = [e.source for e in flat.equations]
    residuals = cs.vertcat(*[e.residual for e in flat.equations]) if sources else cs.SX(0, 1)
    unknowns = list(flat.variables)
    parent = {q: q for q in unknowns}
    sign = {q: 1.0 for q in unknowns}
    const: dict[Quantity, float] = {}  # root -> constant value of its class
    eliminated: dict[Quantity, Alias] = {}
    # every symbol an equation can hold: variables, their derivatives, parameters, time
    derivatives = [q._der for q in unknowns if q._der is not None]
    columns: list[Quantity | None] = [*unknowns, *derivatives, *flat.parameters, *flat.discretes]
    columns.append(None)  # time
    allsyms = cs.vertcat(*[q.sym for q in columns[:-1]], time)
    check = list(range(len(sources)))  # rows that may be aliases: all, then those changed
    while check:
        aliased = _classify(residuals, check, columns, allsyms, parent, sign, const)
        if not aliased:
            break
        keep = [k for k in range(len(sources)) if k not in aliased]
        sources = [sources[k] for k in keep]
        residuals = residuals[keep] if keep else cs.SX(0, 1)
        old, new, fresh = _substitutions(unknowns, parent, sign, const, eliminated)
        unknowns = [q for q in unknowns if q not in eliminated]
        if fresh:  # derivatives of representatives created by the substitution
            columns = columns + fresh
            allsyms = cs.vertcat(allsyms, *[q.sym for q in fresh])
        if not (sources and old):
            break
        replaced = cs.vertcat(*old)
        check = np.nonzero(np.diff(incidence(residuals, replaced).indptr))[0].tolist()
        residuals = cs.substitute(residuals, replaced, new)
    split = cs.vertsplit(residuals) if sources else []
    equations = [FlatEquation(r, src) for r, src in zip(split, sources)]
    members: dict[Quantity, list[Quantity]] = {}
    for q in eliminated:  # final form: a representative may have been eliminated later
        root, s = _find(parent, sign, q)
        eliminated[q] = (s, None, s * const[root]) if root in const else (s, root, 0.0)
        members.setdefault(root, []).append(q)
    starts = _merge_starts(flat, parent, sign, const, default_params)
    return Reduced(flat, equations, unknowns, eliminated, members, starts)


def _classify(
    residuals: cs.SX,
    check: list[int],
    columns: list[Quantity | None],
    allsyms: cs.SX,
    parent: Parents,
    sign: Signs,
    const: Constants,
) -> set[int]:
    """Unite alias classes from the alias equations among rows ``check``; return their rows.

    Everything runs on whole vectors: the rows depending on one or two unknowns (by the
    Jacobian's sparsity), their Jacobian, which of its entries are constant (the sparsity
    of the entries' own dependencies) and the values of entries and offsets at zero. A
    symbolic Jacobian of the whole system would cost one sweep per column of a dense row
    (a ground node's current balance); per-row Python would cost a CasADi call per node.
    """
    unknown = np.array([q is not None and q in parent for q in columns])
    rows = residuals[check]
    inc = incidence(rows, allsyms)
    rows_of = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))
    bad = np.zeros(inc.shape[0], dtype=bool)
    np.logical_or.at(bad, rows_of, ~unknown[inc.indices])
    counts = np.diff(inc.indptr)
    cand = np.nonzero(((counts == 1) | (counts == 2)) & ~bad)[0].tolist()
    if not cand:
        return set()
    sub = rows[cand]
    jac = cs.jacobian(sub, allsyms)
    nz = jac.nz[:]
    varying = np.diff(incidence(nz, allsyms).indptr) > 0
    zero = cs.DM.zeros(allsyms.numel())
    values = np.asarray(cs.evalf(cs.substitute(nz, allsyms, zero))).ravel()
    offsets = np.asarray(cs.evalf(cs.substitute(sub, allsyms, zero))).ravel()
    jrows, jcols = (np.asarray(a) for a in jac.sparsity().get_triplet())
    row_varying = np.zeros(len(cand), dtype=bool)
    np.logical_or.at(row_varying, jrows, varying)
    order = np.argsort(jrows, kind="stable")
    starts = np.searchsorted(jrows[order], np.arange(len(cand) + 1))
    aliased = set()
    for i, row in enumerate(cand):
        ks = order[starts[i] : starts[i + 1]]
        if not len(ks) or row_varying[i]:
            continue
        qs = [columns[c] for c in jcols[ks]]
        if _try_alias(qs, values[ks].tolist(), float(offsets[i]), parent, sign, const):
            aliased.add(check[row])
    return aliased


def _try_alias(
    qs: list[Quantity],
    coef: list[float],
    offset: float,
    parent: Parents,
    sign: Signs,
    const: Constants,
) -> bool:
    """Record ``sum coef_k q_k + offset = 0`` as an alias or a constant, if it is one."""
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


def _substitutions(
    unknowns: list[Quantity],
    parent: Parents,
    sign: Signs,
    const: Constants,
    eliminated: dict[Quantity, Alias],
) -> tuple[list[cs.SX], cs.SX, list[Quantity]]:
    """Record every newly eliminated variable as (sign, root, constant).

    Returns the symbols to replace, their replacements ``sign * root + constant`` as one
    vector (built in bulk), and the representatives' derivatives created on the way.
    """
    old: list[cs.SX] = []
    base: list[cs.SX] = []
    signs: list[float] = []
    offsets: list[float] = []
    fresh: list[Quantity] = []
    for q in unknowns:
        root, s = _find(parent, sign, q)
        if root is q and root not in const:
            continue
        c = const.get(root)
        eliminated[q] = (s, None, s * c) if c is not None else (s, root, 0.0)
        old.append(q.sym)
        base.append(root.sym if c is None else cs.SX(0))
        signs.append(s)
        offsets.append(s * c if c is not None else 0.0)
        if q._der is not None:
            if c is None and root._der is None:
                fresh.append(root.derivative())
            old.append(q._der.sym)
            base.append(root.derivative().sym if c is None else cs.SX(0))
            signs.append(s)
            offsets.append(0.0)
    new = cs.vertcat(*base) * cs.DM(signs) + cs.DM(offsets) if old else cs.SX()
    return old, new, fresh


def _merge_starts(
    flat: FlatDAE,
    parent: Parents,
    sign: Signs,
    const: Constants,
    default_params: dict[str, float],
) -> dict[Quantity, Start]:
    """One start value per class; two different fixed values in a class are an error."""

    def numeric(expr: cs.SX | float) -> float:
        """Value at the parameters' values (only needed when two values are compared)."""
        e = cs.SX(expr)
        syms = cs.symvar(e)
        if syms:
            values = [default_params[quantity_of(sym).name] for sym in syms]
            e = cs.substitute(e, cs.vertcat(*syms), cs.DM(values))
        return float(cs.evalf(e))

    starts: dict[Quantity, Start] = {}
    for q in flat.variables:
        if q.start is None:
            continue
        root, s = _find(parent, sign, q)
        value = q.start if s > 0 else -q.start
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
