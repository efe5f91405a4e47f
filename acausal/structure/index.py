"""Index reduction: Pantelides' algorithm, then Mattsson-Soederlind dummy derivatives.

Pantelides works on the graph of equations and *highest* derivatives. An equation that
finds no augmenting path marks a structurally singular subset of equations (they
determine fewer highest derivatives than their number): each equation of that subset
is differentiated, ``d/dt F = sum_k (dF/dq_k) der(q_k) + dF/dt``, and each variable in it
gains one derivative order, until every equation is matched.

Dummy derivatives then choose which derivatives become algebraic unknowns. Going down
from the highest differentiated equations g_1, with unknowns z_1 their highest
derivatives, a matching picks |g_i| columns of dg_i/dz_i (structurally nonsingular);
those become dummy derivatives, and the step repeats one order lower on their
predecessors. A derivative chain ``v, v', ..., v^(k)`` then has ``v^(j)`` as a state exactly
when ``v^(j+1)`` exists and is not a dummy. Columns are chosen by least cost: a variable with
a fixed start value or a positive state priority is expensive to demote.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import casadi as cs
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

from ..errors import StructureError
from ..flatten import FlatEquation, Symbol
from ..symbols import derivative_name
from ..table import Table
from .alias import Reduced
from .diagnose import explain_singular
from .graph import incidence, match

Col = tuple[int, int]  # (unknown index, derivative order)


@dataclass(frozen=True, eq=False)
class AugEquation:
    """An equation of the index-reduced system: ``order`` times differentiated ``source``."""

    residual: cs.SX
    source: FlatEquation
    order: int

    @property
    def origin(self) -> str:
        text = self.source.origin
        return text if self.order == 0 else f"d{self.order}/dt{self.order} of [{text}]"


@dataclass(frozen=True, eq=False)
class IndexReduced:
    """The index-1 form: every unknown column is a state or algebraic. ``chains[v][o]`` is
    the name of the o-th derivative of unknown v; ``symbols`` the reduced form's table plus
    the derivatives index reduction introduced."""

    reduced: Reduced
    symbols: Table
    equations: tuple[AugEquation, ...]
    chains: tuple[tuple[str, ...], ...]
    states: tuple[Col, ...]
    algebraic: tuple[Col, ...]
    dummies: frozenset[Col]
    index: int

    def sym(self, col: Col) -> cs.SX:
        return self.symbols[self.chains[col[0]][col[1]]].sym

    def name(self, col: Col) -> str:
        return self.chains[col[0]][col[1]]

    def __str__(self) -> str:
        lines = [
            f"IndexReduced {self.reduced.flat.name}: index {self.index}, "
            f"{len(self.equations)} equations, {len(self.states)} states, "
            f"{len(self.algebraic)} algebraic unknowns"
        ]
        lines.append("  states: " + ", ".join(self.name(c) for c in self.states))
        lines.append("  algebraic: " + ", ".join(self.name(c) for c in self.algebraic))
        lines.append(
            "  dummy derivatives: " + ", ".join(sorted(self.name(c) for c in self.dummies))
        )
        lines += [f"  {e.origin}" for e in self.equations]
        return "\n".join(lines)


def _chain(q: str, symbols: dict[str, Symbol]) -> list[str]:
    out = [q]
    while derivative_name(out[-1]) in symbols:
        out.append(derivative_name(out[-1]))
    return out


def reduce_index(red: Reduced) -> IndexReduced:
    """Pantelides + dummy derivatives on the alias-reduced system."""
    unknowns = red.unknowns
    symbols = dict(red.symbols)
    chains = [_chain(q, symbols) for q in unknowns]
    position: dict[str, Col] = {}
    for vi, ch in enumerate(chains):
        for o, q in enumerate(ch):
            position[q] = (vi, o)
    res = [e.residual for e in red.equations]
    cols = [(vi, o) for vi, ch in enumerate(chains) for o in range(len(ch))]
    inc = incidence(res, [symbols[chains[vi][o]].sym for vi, o in cols])
    rows: list[set[Col]] = [
        {cols[c] for c in inc.indices[inc.indptr[r] : inc.indptr[r + 1]]} for r in range(len(res))
    ]
    hv = [0] * len(unknowns)
    for row in rows:
        for vi, o in row:
            hv[vi] = max(hv[vi], o)
    _check_nonsingular(red, rows)
    eqs = [AugEquation(e.residual, e, 0) for e in red.equations]
    original_algebraic = any(h == 0 for h in hv)
    child: dict[int, int] = {}
    assign = _initial_assignment(rows, hv)
    rec = sys.getrecursionlimit()
    sys.setrecursionlimit(max(rec, 4 * len(eqs) + 1000))
    try:
        matched = set(assign.values())
        for k in range(len(eqs)):
            i = k
            while i in child:  # differentiated while an earlier equation was augmented
                i = child[i]
            if i in matched:
                continue
            for _ in range(len(eqs) + 10):
                colored_e: set[int] = set()
                colored_v: set[int] = set()
                if _augment(i, rows, hv, assign, colored_e, colored_v):
                    break
                for vi in colored_v:
                    hv[vi] += 1
                    while len(chains[vi]) <= hv[vi]:
                        q = _new_derivative(chains[vi][-1], symbols)
                        chains[vi].append(q)
                        position[q] = (vi, len(chains[vi]) - 1)
                for e in sorted(colored_e):
                    child[e] = len(eqs)
                    r, row = _differentiate(eqs[e].residual, position, symbols, red.flat.t)
                    eqs.append(AugEquation(r, eqs[e].source, eqs[e].order + 1))
                    rows.append(row)
                for vi in colored_v:
                    assign[vi] = child[assign[vi]]
                i = child[i]
            else:
                raise StructureError(
                    f"index reduction did not terminate at equation {eqs[k].origin}"
                )
            matched = set(assign.values())
    finally:
        sys.setrecursionlimit(rec)
    dummies = _dummy_derivatives(red, eqs, rows, child, hv)
    states = [
        (vi, o) for vi in range(len(chains)) for o in range(hv[vi]) if (vi, o + 1) not in dummies
    ]
    state_set = set(states)
    algebraic = [
        (vi, o) for vi in range(len(chains)) for o in range(hv[vi] + 1) if (vi, o) not in state_set
    ]
    max_order = max((e.order for e in eqs), default=0)
    index = max_order + (1 if original_algebraic else 0)
    return IndexReduced(
        red,
        Table(symbols),
        tuple(eqs),
        tuple(tuple(ch[: hv[vi] + 1]) for vi, ch in enumerate(chains)),
        tuple(states),
        tuple(algebraic),
        frozenset(dummies),
        index,
    )


def _check_nonsingular(red: Reduced, rows: list[set[Col]]) -> None:
    """Equations versus unknowns (any derivative order) must match perfectly."""
    n, m = len(rows), len(red.unknowns)
    data = [(r, vi) for r, row in enumerate(rows) for vi in {v for v, _ in row}]
    r_idx = np.array([d[0] for d in data], dtype=np.int64)
    c_idx = np.array([d[1] for d in data], dtype=np.int64)
    inc = sp.csr_matrix((np.ones(len(data), dtype=np.int8), (r_idx, c_idx)), shape=(n, m))
    row_to_col, col_to_row = match(inc)
    if n != m or (row_to_col < 0).any():
        raise StructureError(explain_singular(red, inc, row_to_col, col_to_row))


def _initial_assignment(rows: list[set[Col]], hv: list[int]) -> dict[int, int]:
    """Maximum matching of equations to highest derivatives, as ``{unknown: equation}``."""
    data = [(r, vi) for r, row in enumerate(rows) for vi, o in row if o == hv[vi]]
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
    i: int,
    rows: list[set[Col]],
    hv: list[int],
    assign: dict[int, int],
    colored_e: set[int],
    colored_v: set[int],
) -> bool:
    """Pantelides' augmenting path search from equation ``i`` over highest derivatives."""
    colored_e.add(i)
    active = [vi for vi, o in rows[i] if o == hv[vi]]
    for vi in active:
        if vi not in assign:
            assign[vi] = i
            return True
    for vi in active:
        if vi not in colored_v:
            colored_v.add(vi)
            if _augment(assign[vi], rows, hv, assign, colored_e, colored_v):
                assign[vi] = i
                return True
    return False


def _new_derivative(name: str, symbols: dict[str, Symbol]) -> str:
    """Add ``der(name)`` to the table ``symbols``; return its name."""
    base = symbols[name]
    new = derivative_name(name)
    symbols[new] = Symbol(
        new,
        "derivative",
        cs.SX.sym(new),
        base.component,
        base=base.base or name,
        order=base.order + 1,
    )
    return new


def _differentiate(
    residual: cs.SX, position: dict[str, Col], symbols: dict[str, Symbol], t: cs.SX
) -> tuple[cs.SX, set[Col]]:
    """``d/dt`` of a residual and its incidence."""
    unk = [s for s in cs.symvar(residual) if s.name() in position]
    out = cs.jacobian(residual, t)
    if unk:
        x = cs.vertcat(*unk)
        dx = cs.vertcat(*[symbols[derivative_name(s.name())].sym for s in unk])
        out = out + cs.jtimes(residual, x, dx)
    row = {position[s.name()] for s in cs.symvar(out) if s.name() in position}
    return out, row


def _dummy_cost(red: Reduced, col: Col) -> float:
    vi, o = col
    q = red.unknowns[vi]
    start = red.starts.get(q)
    cost = 10.0 + 100.0 * red.symbols[q].state_priority
    if o == 1 and start is not None and start.fixed:
        cost += 1000.0
    return max(cost, 1.0)


def _dummy_derivatives(
    red: Reduced,
    eqs: list[AugEquation],
    rows: list[set[Col]],
    child: dict[int, int],
    hv: list[int],
) -> set[Col]:
    """Mattsson-Soederlind selection, structural, with least-cost column choice."""
    parent = {c: p for p, c in child.items()}
    families = []
    for k in range(len(eqs)):
        if k in parent:
            continue
        fam = [k]
        while fam[-1] in child:
            fam.append(child[fam[-1]])
        families.append(fam)
    dummies: set[Col] = set()
    level = 1
    candidates = {(vi, hv[vi]) for vi in range(len(hv)) if hv[vi] >= 1}
    while True:
        g = [fam[len(fam) - level] for fam in families if len(fam) - 1 >= level]
        if not g:
            break
        cand = sorted(c for c in candidates if any(c in rows[r] for r in g))
        if len(cand) < len(g):
            raise StructureError("dummy derivative selection found too few candidate derivatives")
        index = {c: j for j, c in enumerate(cand)}
        data = [
            (i, index[c], _dummy_cost(red, c))
            for i, r in enumerate(g)
            for c in rows[r]
            if c in index
        ]
        mat = sp.csr_matrix(
            ([d[2] for d in data], ([d[0] for d in data], [d[1] for d in data])),
            shape=(len(g), len(cand)),
        )
        try:
            _, chosen = min_weight_full_bipartite_matching(mat)
        except ValueError as exc:
            names = ", ".join(eqs[r].origin for r in g)
            raise StructureError(f"no dummy derivatives for the equations {names}") from exc
        picked = [cand[j] for j in chosen]
        dummies.update(picked)
        candidates = {(vi, o - 1) for vi, o in picked if o - 1 >= 1}
        level += 1
    return dummies
