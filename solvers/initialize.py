"""Consistent initial values of the semi-explicit DAE ``x' = f(x,z,p,t), 0 = g(x,z,p,t)``.

The initialization problem at ``t0`` has unknowns ``w = (x, z)`` and equations

* ``g(x, z, p, t0) = 0``,
* ``y(x, z, p, t0) = y_start`` for every variable ``y`` with a fixed start value,
* ``x_k = x_k,start`` (the start value as a guess, else 0) for states still free,

where the free states are added one by one while each still finds an augmenting path in
the equation-unknown graph, until the system is square. More fixed values than the
model has degrees of freedom is an error naming them. When every row on ``x`` is a
state's own start value, ``x0`` is explicit and Newton runs on ``z`` alone.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import casadi as cs
import numpy as np

from acausal import InitializationError, Model
from acausal.structure.graph import dulmage_mendelsohn, incidence, match

from .functions import NEWTON_OPTIONS


@dataclass
class Initializer:
    """``fun(p) -> (x0, z0)`` and the description of its rows for error messages."""

    fun: cs.Function
    residual: cs.Function  # (x, z, p) -> residuals of the rows below
    rows: list[str | tuple[str, str, cs.SX | float]]  # texts, or (kind, name, value) to format
    model: Model

    def row_name(self, k: int) -> str:
        """Row ``k`` described for a person (formatted only when an error needs it)."""
        return describe_row(self.model, self.rows[k])


def describe_row(model: Model, row: str | tuple[str, str, cs.SX | float]) -> str:
    """A row of the initialization problem as text: ``fixed start C1.v = C1.v0``."""
    if isinstance(row, str):
        return row
    kind, name, value = row
    return f"{kind} {name} = {model.display(value)}"


def column_expressions(model: Model) -> dict[tuple[int, int], cs.SX]:
    """Each unknown column's value in terms of ``(x, z, p, t)`` (split in bulk: reading
    single elements costs tens of microseconds each)."""
    out = dict(zip(model.ir.states, cs.vertsplit(model.dae.x)))
    out.update(zip(model.ir.algebraic, cs.vertsplit(model.dae.values)))
    return out


def build_initializer(model: Model, t0: float) -> Initializer:
    """The initialization problem of ``model`` at time ``t0``; see the module docstring."""
    dae, ir, red = model.dae, model.ir, model.reduced
    x, z = dae.x, dae.z
    nx, nz = x.numel(), z.numel()
    cols = column_expressions(model)
    vindex = {q: vi for vi, q in enumerate(red.unknowns)}
    state_pos = {c: k for k, c in enumerate(ir.states)}
    rows: list[cs.SX] = [dae.alg[k] for k in range(nz)]
    names = [f"algebraic equation of block {b + 1}" for b in dae.alg_blocks]
    fixed_states: set[int] = set()
    for q, start in red.starts.items():
        if not start.fixed or q not in vindex:
            continue
        col = (vindex[q], 0)
        rows.append(cols[col] - start.value)
        names.append(("fixed start", start.source, start.value))
        if col in state_pos:
            fixed_states.add(state_pos[col])
    for k, q in enumerate(model.flat.discretes, start=nx - dae.modes):
        start = model.flat.symbols[q].start
        rows.append(x[k] - start)
        names.append(("start mode", q, start))
        fixed_states.add(k)
    w = cs.vertcat(x, z)
    inc = incidence(rows, w) if rows else None
    row_to_col, col_to_row = match(inc) if rows else (np.array([], int), np.full(nx + nz, -1))
    if (row_to_col < 0).any():
        (over_rows, _), _ = dulmage_mendelsohn(inc, row_to_col, col_to_row)
        picked = [r for r in over_rows if r >= nz] or over_rows
        fixed = [describe_row(model, names[r]) for r in picked]
        raise InitializationError(
            f"{model.name}: conflicting fixed start values over-determine the initial state:\n    "
            + "\n    ".join(fixed)
            + "\n  The model has fewer degrees of freedom than fixed values here (e.g. a loop of"
            " capacitors with every voltage fixed); remove one of them."
        )
    guesses = _guesses(model)
    xk = cs.vertsplit(x)
    adjacency = [list(inc.indices[inc.indptr[r] : inc.indptr[r + 1]]) for r in range(len(rows))]
    col_to_row = list(col_to_row)
    for k in range(nx):
        if k in fixed_states:
            continue
        if col_to_row[k] >= 0 and not _augment(k, adjacency, col_to_row):
            continue  # this state is already determined by fixed values elsewhere
        rows.append(xk[k] - guesses[k])
        names.append(f"start value of state {model.states[k]} (not fixed; taken as given)")
        adjacency.append([k])
        col_to_row[k] = len(rows) - 1
    params = {s.name() for s in cs.vertsplit(model.p)}  # the parameters' own symbol names
    direct = all(
        col_to_row[k] >= nz and _is_own_start(rows[col_to_row[k]], xk[k], params) for k in range(nx)
    )
    missing = [k for k, r in enumerate(col_to_row) if r < 0]
    if missing:
        labels = [model.states[k] if k < nx else str(w[k]) for k in missing]
        raise InitializationError(
            f"{model.name}: initial values are under-determined for {', '.join(labels)}; "
            "give start values (fixed=True) for them"
        )
    return _assemble(model, t0, rows, names, direct, guesses)


def _is_own_start(row: cs.SX, xk: cs.SX, params: set[str]) -> bool:
    """Is ``row`` of the form ``x_k - c(p)`` (``params``: the parameters' names), a state's
    own start value?"""
    return all(s.name() in params for s in cs.symvar(row - xk))


def _augment(col: int, adjacency: list[list[int]], col_to_row: list[int]) -> bool:
    """Free column ``col`` by an alternating path to an unmatched column (BFS)."""
    parent: dict[int, int] = {col: -1}
    queue = deque([col])
    while queue:
        c = queue.popleft()
        r = col_to_row[c]
        for c2 in adjacency[r]:
            if c2 in parent:
                continue
            parent[c2] = c
            if col_to_row[c2] < 0:
                while c2 != col:  # shift rows along the path
                    prev = parent[c2]
                    col_to_row[c2] = col_to_row[prev]
                    c2 = prev
                col_to_row[col] = -1
                return True
            queue.append(c2)
    return False


def _guesses(model: Model) -> list[cs.SX | float]:
    """Start values (fixed or not) of states, then of Newton unknowns; 0 where none (numbers
    stay numbers: wrapping each in an SX costs tens of microseconds)."""
    out: list[cs.SX | float] = []
    for c in model.ir.states:
        s = model.start(c)
        out.append(s.value if s is not None else 0.0)
    out += [model.flat.symbols[q].start for q in model.flat.discretes]
    zsyms = {model.ir.sym(c).name(): c for c in model.ir.algebraic}
    for zk in cs.vertsplit(model.dae.z):
        s = model.start(zsyms[zk.name()])
        out.append(s.value if s is not None else 0.0)
    return out


def _assemble(
    model: Model,
    t0: float,
    rows: list[cs.SX],
    names: list[str],
    direct: bool,
    guesses: list[cs.SX],
) -> Initializer:
    dae, p = model.dae, model.p
    x, z = dae.x, dae.z
    nx, nz = x.numel(), z.numel()
    time = model.t
    res = cs.substitute(cs.vertcat(*rows), time, t0) if rows else cs.SX(0, 1)
    residual = cs.Function("init_residual", [x, z, p], [res])
    guess = cs.Function("init_guess", [p], [cs.vertcat(*guesses)] if guesses else [cs.DM(0, 1)])
    pm = cs.MX.sym("p", p.numel())
    w0 = guess(pm)
    if direct:
        x0 = w0[:nx]
        if nz:
            g = cs.Function("g", [z, x, p], [cs.substitute(dae.alg, time, t0)])
            z0 = cs.rootfinder("init_z", "newton", g, NEWTON_OPTIONS)(w0[nx:], x0, pm)
        else:
            z0 = cs.MX(0, 1)
    else:
        w = cs.vertcat(x, z)
        g = cs.Function("g", [w, p], [res])
        w = cs.rootfinder("init_w", "newton", g, NEWTON_OPTIONS)(w0, pm)
        x0, z0 = w[:nx], w[nx:]
    fun = cs.Function("init", [pm], [x0, z0], ["p"], ["x0", "z0"])
    return Initializer(fun, residual, names, model)
