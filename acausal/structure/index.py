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
when ``v^(j+1)`` exists and is not a dummy. Columns are chosen by least cost (a state
priority anywhere in the alias class, then a fixed start value of the state a demotion
takes away, make it dear) and checked numerically at the start values
(:mod:`.selection`); the choices a tie decided, or that are singular at the start, are
reported as :class:`~acausal.errors.StateSelectionWarning`.

The graph work is in :mod:`.algorithms` (integers only); this module gives it the incidence
of the residuals, differentiates them when asked, and names the new derivatives.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..errors import StateSelectionWarning, StructureError
from ..flatten import FlatEquation, Symbol
from ..symbols import derivative_name
from ..table import Table
from .algorithms import Col, StructuralFailure, pantelides, states_and_algebraic
from .alias import Reduced
from .diagnose import explain_singular
from .dummies import Choice
from .graph import incidence, match
from .selection import select_states, tie_names


class AugEquation(NamedTuple):
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
    choices: tuple[Choice, ...] = ()  # the dummy-derivative choice, block by block
    notes: tuple[str, ...] = ()  # what state selection warned about
    # other choices a run may switch to when this one gets singular (dynamic state selection)
    alternatives: tuple[tuple[Choice, ...], ...] = ()

    @property
    def state_ties(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """States chosen among equally good candidates: ``(state, (others, ...))`` by
        coordinate names, for each choice that a tie decided."""
        return tie_names(self.choices, lambda v: self.chains[v][0])

    def sym(self, col: Col) -> cs.SX:
        return self.symbols[self.chains[col[0]][col[1]]].sym

    def with_choice(self, choices: tuple[Choice, ...]) -> IndexReduced:
        """The same index reduction with another dummy-derivative choice (one of
        :attr:`alternatives`): other states, the same equations."""
        dummies = frozenset(c for ch in choices for c in ch.dummies)
        states, algebraic = states_and_algebraic([len(ch) - 1 for ch in self.chains], dummies)
        return replace(
            self,
            states=tuple(states),
            algebraic=tuple(algebraic),
            dummies=dummies,
            choices=choices,
            notes=(),
            alternatives=(),
        )

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
        lines += [f"  tie: {k} kept over {', '.join(v)}" for k, v in self.state_ties]
        lines += [f"  note: {text}" for text in self.notes]
        lines += [f"  {e.origin}" for e in self.equations]
        return "\n".join(lines)


def _chain(q: str, symbols: dict[str, Symbol]) -> list[str]:
    out = [q]
    while derivative_name(out[-1]) in symbols:
        out.append(derivative_name(out[-1]))
    return out


def reduce_index(red: Reduced) -> IndexReduced:
    """Pantelides + dummy derivatives on the alias-reduced system: the integer algorithms of
    :mod:`.algorithms`, with the differentiation of residuals and the naming of new
    derivatives done here."""
    unknowns = red.unknowns
    symbols = dict(red.symbols)
    chains = [_chain(q, symbols) for q in unknowns]
    position: dict[str, Col] = {}  # by the symbols' own names
    for vi, ch in enumerate(chains):
        for o, q in enumerate(ch):
            position[symbols[q].sym.name()] = (vi, o)
    res = [e.residual for e in red.equations]
    cols = [(vi, o) for vi, ch in enumerate(chains) for o in range(len(ch))]
    inc = incidence(res, [symbols[chains[vi][o]].sym for vi, o in cols])
    rows: list[set[Col]] = [
        {cols[c] for c in inc.indices[inc.indptr[r] : inc.indptr[r + 1]]} for r in range(len(res))
    ]
    _check_nonsingular(red, rows)
    eqs = [AugEquation(e.residual, e, 0) for e in red.equations]

    def differentiate(e: int) -> set[Col]:
        r, row = _differentiate(eqs[e].residual, position, chains, symbols, red.flat.t)
        eqs.append(AugEquation(r, eqs[e].source, eqs[e].order + 1))
        return row

    try:
        result = pantelides(rows, len(unknowns), differentiate)
        choices, notes, alternatives = select_states(
            red, [e.residual for e in eqs], result, lambda c: symbols[chains[c[0]][c[1]]].sym
        )
    except StructuralFailure as exc:
        names = "; ".join(eqs[r].origin for r in exc.equations[:12])
        raise StructureError(
            f"model {red.flat.name}: index reduction failed ({exc.reason}) at: {names}"
        ) from None
    for text in notes:
        warnings.warn(text, StateSelectionWarning, stacklevel=2)
    dummies = frozenset(c for ch in choices for c in ch.dummies)
    for vi, h in enumerate(result.hv):  # every order up to the highest has its symbol
        while len(chains[vi]) <= h:
            _extend(vi, chains, position, symbols)
    states, algebraic = states_and_algebraic(result.hv, dummies)
    return IndexReduced(
        red,
        Table(symbols),
        tuple(eqs),
        tuple(tuple(ch[: result.hv[vi] + 1]) for vi, ch in enumerate(chains)),
        tuple(states),
        tuple(algebraic),
        dummies,
        result.index,
        choices,
        notes,
        alternatives,
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


def _extend(vi: int, chains: list[list[str]], position: dict[str, Col], symbols: dict) -> str:
    """Append the next derivative to unknown ``vi``'s chain; return its name."""
    q = _new_derivative(chains[vi][-1], symbols)
    chains[vi].append(q)
    position[symbols[q].sym.name()] = (vi, len(chains[vi]) - 1)
    return q


def _new_derivative(name: str, symbols: dict[str, Symbol]) -> str:
    """Add ``der(name)`` to the table ``symbols``; return its name."""
    base = symbols[name]
    new = derivative_name(name)
    symbols[new] = Symbol(
        new,
        "derivative",
        cs.SX.sym(derivative_name(base.sym.name())),  # named as der() would name it
        base.component,
        base=base.base or name,
        order=base.order + 1,
    )
    return new


def _differentiate(
    residual: cs.SX,
    position: dict[str, Col],
    chains: list[list[str]],
    symbols: dict[str, Symbol],
    t: cs.SX,
) -> tuple[cs.SX, set[Col]]:
    """``d/dt`` of a residual, ``sum_k (dF/dq_k) der(q_k) + dF/dt`` (a derivative symbol
    made where the chain ends), and its incidence."""
    unk = [s for s in cs.symvar(residual) if s.name() in position]
    out = cs.jacobian(residual, t)
    if unk:
        rates = []
        for s in unk:
            vi, o = position[s.name()]
            name = (
                chains[vi][o + 1]
                if o + 1 < len(chains[vi])
                else _extend(vi, chains, position, symbols)
            )
            rates.append(symbols[name].sym)
        out = out + cs.jtimes(residual, cs.vertcat(*unk), cs.vertcat(*rates))
    row = {position[s.name()] for s in cs.symvar(out) if s.name() in position}
    return out, row
