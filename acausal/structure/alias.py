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
import scipy.sparse as sp

from ..errors import InitializationError
from ..flatten import FlatDAE, FlatEquation, Symbol
from ..symbols import as_sx, derivative_name
from ..table import Table
from .graph import affine_rows, incidence


@dataclass(frozen=True, eq=False)
class Start:
    """Start value of an unknown after alias elimination, with the variable it came from."""

    value: cs.SX | float
    fixed: bool
    source: str


Alias = tuple[float, "str | None", float]  # (sign, representative or None, constant)
Parents = dict[str, str]  # union-find parent
Signs = dict[str, float]  # q = sign[q] * parent[q]
Constants = dict[str, float]  # class root -> its constant value


@dataclass(frozen=True, eq=False)
class Reduced:
    """Equations and unknowns (names) left after alias elimination; ``symbols`` is the flat
    table plus the derivatives of representatives that the substitution created."""

    flat: FlatDAE
    symbols: Table
    equations: tuple[FlatEquation, ...]
    unknowns: tuple[str, ...]
    eliminated: Table  # variable -> (sign, representative or None, constant)
    members: Table  # representative -> other members (tuple)
    starts: Table  # representative -> Start
    # the equations' incidence (0/1, a row per equation) in the symbols named by
    # ``pattern_columns`` (None: time), as alias elimination left it; saves the next stage
    # recomputing it
    pattern: sp.csr_matrix | None = None
    pattern_columns: tuple[str | None, ...] = ()

    def sym(self, name: str) -> cs.SX:
        return self.symbols[name].sym

    def __str__(self) -> str:
        lines = [
            f"Reduced {self.flat.name}: {len(self.equations)} equations for "
            f"{len(self.unknowns)} unknowns, {len(self.eliminated)} aliases eliminated"
        ]
        for q, (s, root, c) in self.eliminated.items():
            rhs = f"{'-' if s < 0 else ''}{root}" if root is not None else ""
            const = f"{c:.17g}" if root is None or c else ""
            lines.append(f"  alias {q} = {rhs}{' + ' if rhs and const else ''}{const}")
        for q, st in self.starts.items():
            fixed = " fixed" if st.fixed else ""
            lines.append(f"  start {q} = {self.flat.display(st.value)}{fixed} (from {st.source})")
        lines += [f"  {e.origin}" for e in self.equations]
        return "\n".join(lines)


def _preference(sym: Symbol, order: int, differentiated: bool) -> tuple:
    """Sort key of representatives: differentiated, fixed start, state priority, any start,
    component variable (not a connector's), short local name, then declaration order."""
    local = sym.name[len(sym.component) + 1 :]
    return (
        not differentiated,
        not sym.fixed,
        -sym.state_priority,
        sym.start is None,
        "." in local,
        len(local),
        order,
    )


def _find(parent: Parents, sign: Signs, q: str) -> tuple[str, float]:
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


class _Classes:
    """Alias classes under construction: union-find with signs, class constants, and the
    symbol table growing by the derivatives of representatives."""

    def __init__(self, flat: FlatDAE) -> None:
        self.symbols: dict[str, Symbol] = dict(flat.symbols)
        self.parent: Parents = {q: q for q in flat.variables}
        self.sign: Signs = {q: 1.0 for q in flat.variables}
        self.const: Constants = {}
        self.deriv = {s.base: s.name for s in flat.symbols.values() if s.order == 1}
        order = {q: k for k, q in enumerate(flat.variables)}
        self.key = {
            q: _preference(self.symbols[q], order[q], q in self.deriv) for q in flat.variables
        }

    def find(self, q: str) -> tuple[str, float]:
        return _find(self.parent, self.sign, q)

    def derivative(self, q: str) -> tuple[str, bool]:
        """The name of ``der(q)``, and whether its symbol is new."""
        name = self.deriv.get(q)
        if name is not None:
            return name, False
        name = self.deriv[q] = derivative_name(q)
        base = self.symbols[q]
        sym = cs.SX.sym(derivative_name(base.sym.name()))  # named as der() would name it
        self.symbols[name] = Symbol(name, "derivative", sym, base.component, base=q, order=1)
        return name, True


def eliminate_aliases(flat: FlatDAE) -> Reduced:
    """Apply alias elimination to ``flat``; see the module docstring."""
    sources = [e.source for e in flat.equations]
    residuals = flat.residuals if sources else cs.SX(0, 1)
    unknowns = list(flat.variables)
    classes = _Classes(flat)
    eliminated: dict[str, Alias] = {}
    # every symbol an equation can hold: variables, their derivatives, parameters, time
    derivatives = [classes.deriv[q] for q in unknowns if q in classes.deriv]
    columns: list[str | None] = [*unknowns, *derivatives, *flat.parameters, *flat.discretes]
    columns.append(None)  # time
    allsyms = cs.vertcat(*[flat.sym(q) for q in columns[:-1]], flat.t)
    check = list(range(len(sources)))  # rows that may be aliases: all, then those changed
    pattern = incidence(residuals, allsyms)  # of the current rows, kept up to date
    while check:
        aliased = _classify(residuals, check, pattern[check], columns, allsyms, classes)
        if not aliased:
            break
        keep = [k for k in range(len(sources)) if k not in aliased]
        sources = [sources[k] for k in keep]
        residuals = residuals[keep] if keep else cs.SX(0, 1)
        old, new, fresh = _substitutions(unknowns, classes, eliminated)
        unknowns = [q for q in unknowns if q not in eliminated]
        if fresh:  # derivatives of representatives created by the substitution
            columns = columns + fresh
            allsyms = cs.vertcat(allsyms, *[classes.symbols[q].sym for q in fresh])
        pattern = pattern[keep]
        pattern.resize(len(keep), len(columns))
        if not (sources and old):
            break
        position = {q: j for j, q in enumerate(columns)}
        replaced = np.zeros(len(columns), dtype=bool)
        replaced[[position[q] for q in old]] = True
        check = np.nonzero(pattern @ replaced.astype(np.int64))[0].tolist()
        residuals = cs.substitute(residuals, allsyms[[position[q] for q in old]], new)
        pattern = _replace_rows(pattern, check, incidence(residuals[check], allsyms))
    split = cs.vertsplit(residuals) if sources else []
    equations = tuple(FlatEquation(r, src) for r, src in zip(split, sources))
    members: dict[str, list[str]] = {}
    const = classes.const
    for q in eliminated:  # final form: a representative may have been eliminated later
        root, s = classes.find(q)
        eliminated[q] = (s, None, s * const[root]) if root in const else (s, root, 0.0)
        members.setdefault(root, []).append(q)
    starts = _merge_starts(flat, classes)
    return Reduced(
        flat,
        Table(classes.symbols),
        equations,
        tuple(unknowns),
        Table(eliminated),
        Table({k: tuple(v) for k, v in members.items()}),
        Table(starts),
        pattern,
        tuple(columns),
    )


def _classify(
    residuals: cs.SX,
    check: list[int],
    inc: sp.csr_matrix,
    columns: list[str | None],
    allsyms: cs.SX,
    classes: _Classes,
) -> set[int]:
    """Unite alias classes from the alias equations among rows ``check`` (``inc``: their
    incidence in ``allsyms``); return their rows.

    Everything runs on whole vectors: the rows depending on one or two unknowns (by the
    Jacobian's sparsity), then their :func:`.graph.affine_rows`. A
    symbolic Jacobian of the whole system would cost one sweep per column of a dense row
    (a ground node's current balance); per-row Python would cost a CasADi call per node.
    """
    unknown = np.array([q is not None and q in classes.parent for q in columns])
    rows = residuals[check]
    rows_of = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))
    bad = np.zeros(inc.shape[0], dtype=bool)
    np.logical_or.at(bad, rows_of, ~unknown[inc.indices])
    counts = np.diff(inc.indptr)
    cand = np.nonzero(((counts == 1) | (counts == 2)) & ~bad)[0].tolist()
    if not cand:
        return set()
    lin = affine_rows(rows[cand], allsyms)
    order = np.argsort(lin.rows, kind="stable")
    starts = np.searchsorted(lin.rows[order], np.arange(len(cand) + 1))
    aliased = set()
    for i, row in enumerate(cand):
        ks = order[starts[i] : starts[i + 1]]
        if not len(ks) or not lin.affine[i]:
            continue
        qs = [columns[c] for c in lin.cols[ks]]
        if _try_alias(qs, lin.values[ks].tolist(), float(lin.offsets[i]), classes):
            aliased.add(check[row])
    return aliased


def _try_alias(qs: list[str], coef: list[float], offset: float, classes: _Classes) -> bool:
    """Record ``sum coef_k q_k + offset = 0`` as an alias or a constant, if it is one."""
    parent, sign, const = classes.parent, classes.sign, classes.const
    if len(qs) == 1:
        (q,), (a,) = qs, coef
        if q in classes.deriv:
            return False
        root, s = classes.find(q)
        if root in const:
            return False  # a second constant for the class: keep as equation
        const[root] = -offset / a * s
        return True
    if offset != 0.0 or abs(coef[0]) != abs(coef[1]):
        return False
    (ra, sa), (rb, sb) = (classes.find(q) for q in qs)
    if ra == rb:
        return False  # closes a cycle: redundant or contradictory, keep it
    if ra in const and rb in const:
        return False
    rel = -coef[1] / coef[0]  # a = rel * b
    # attach the less preferred root under the other: ra = sa*a, a = rel*b, b = sb*rb
    s = sa * rel * sb  # ra = s * rb
    if classes.key[ra] < classes.key[rb]:
        parent[rb], sign[rb] = ra, s  # rb = s * ra (s = +-1)
        if rb in const:
            const[ra] = s * const.pop(rb)
    else:
        parent[ra], sign[ra] = rb, s
        if ra in const:
            const[rb] = s * const.pop(ra)
    return True


def _substitutions(
    unknowns: list[str], classes: _Classes, eliminated: dict[str, Alias]
) -> tuple[list[str], cs.SX, list[str]]:
    """Record every newly eliminated variable as (sign, root, constant).

    Returns the names of the symbols to replace (variables and their derivatives), their
    replacements ``sign * root + constant`` as one vector (built in bulk), and the
    representatives' derivatives created on the way.
    """
    old: list[str] = []
    base: list[cs.SX] = []
    signs: list[float] = []
    offsets: list[float] = []
    fresh: list[str] = []
    table = classes.symbols
    for q in unknowns:
        root, s = classes.find(q)
        if root == q and root not in classes.const:
            continue
        c = classes.const.get(root)
        eliminated[q] = (s, None, s * c) if c is not None else (s, root, 0.0)
        old.append(q)
        base.append(table[root].sym if c is None else cs.SX(0))
        signs.append(s)
        offsets.append(s * c if c is not None else 0.0)
        dq = classes.deriv.get(q)
        if dq is not None:
            old.append(dq)
            if c is None:
                droot, created = classes.derivative(root)
                if created:
                    fresh.append(droot)
                base.append(table[droot].sym)
            else:
                base.append(cs.SX(0))
            signs.append(s)
            offsets.append(0.0)
    new = cs.vertcat(*base) * cs.DM(signs) + cs.DM(offsets) if old else cs.SX()
    return old, new, fresh


def _replace_rows(mat: sp.csr_matrix, rows: list[int], new: sp.csr_matrix) -> sp.csr_matrix:
    """``mat`` with its rows ``rows`` replaced by those of ``new``, in order."""
    if not rows:
        return mat
    changed = np.zeros(mat.shape[0], dtype=bool)
    changed[rows] = True
    kept = np.nonzero(~changed)[0]
    order = np.empty(mat.shape[0], dtype=np.int64)
    order[np.concatenate([kept, np.asarray(rows)])] = np.arange(mat.shape[0])
    return sp.csr_matrix(sp.vstack([mat[kept], new], format="csr")[order])


def _merge_starts(flat: FlatDAE, classes: _Classes) -> dict[str, Start]:
    """One start value per class; two different fixed values in a class are an error."""
    params = [flat.sym(n) for n in flat.parameters]
    values = cs.DM([flat.symbols[n].value for n in flat.parameters])

    def numeric(expr: cs.SX | float) -> float:
        """Value at the parameters' values (only needed when two values are compared)."""
        e = as_sx(expr)
        if params and cs.depends_on(e, cs.vertcat(*params)):
            e = cs.substitute(e, cs.vertcat(*params), values)
        return float(cs.evalf(e))

    starts: dict[str, Start] = {}
    const = classes.const
    for q in flat.variables:
        sym = flat.symbols[q]
        if sym.start is None:
            continue
        root, s = classes.find(q)
        value = sym.start if s > 0 else -sym.start
        if root in const:
            if sym.fixed and not np.isclose(numeric(value), const[root]):
                raise InitializationError(
                    f"fixed start value {q} = {numeric(sym.start):g} conflicts with the "
                    f"model: {q} is constant {s * const[root]:g}; remove the start value"
                )
            continue
        prev = starts.get(root)
        if prev is None or (sym.fixed and not prev.fixed):
            starts[root] = Start(value, sym.fixed, q)
        elif sym.fixed and prev.fixed and not np.isclose(numeric(value), numeric(prev.value)):
            raise InitializationError(
                f"conflicting fixed start values: {prev.source} and {q} are the same "
                f"variable (connected or aliased) but start at {numeric(prev.value):g} and "
                f"{numeric(value):g} (after sign); remove or align one of them"
            )
    return starts
