"""Consistent initial values of the semi-explicit DAE ``x' = f(x,z,p,t), 0 = g(x,z,p,t)``.

The initialization problem at ``t0`` has unknowns ``w = (x, z)`` and rows

* ``g(x, z, p, t0) = 0``,
* ``m_k = m_k,start`` for each discrete mode (the last entries of ``x``),
* ``y(x, z, p, t0) = y_start`` for every variable ``y`` with a fixed start value, those on
  states first, then those on algebraic variables (``y`` is then an expression of ``w`` and
  ``p``; it may contain no unknown at all, e.g. a capacitor's voltage across a source),
* ``x_k = x_k,start`` (the start value as a guess, else 0) for states still free.

A matching of rows to unknowns picks the square system that Newton solves: ``g`` is matched
to ``z`` (it is regular in ``z``), then each row below it in turn by an augmenting path in the
row-unknown graph (rows matched before stay matched). A fixed start without one is
*redundant*: the rows before it already determine every unknown it contains. Free states
are added while each still finds an augmenting path, until the system is square; an
unknown left unmatched is an error naming it. Redundant fixed starts are left out of
Newton and checked at its solution: a consistent one holds there (the model's value equals
it), a conflicting one is an error naming both values and what determines the variable,
with how many fixed values must go (:mod:`.consistency`). When every row on ``x`` is a
state's own start value, ``x0`` is explicit and Newton runs on ``z`` alone.

The common large case costs no search: where the start values of ``x`` hold no unknown and
no time, a mode's or state's own row ``x_j - c_j`` is known to hold ``x_j`` alone (CasADi
finds the other rows' unknowns); the leading such rows each on an unmatched column of
its own are matched to it at once, a state matched to a row on it alone is determined
without a search, and ``x0 = c`` follows without testing the rows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import NamedTuple

import casadi as cs
import numpy as np
import scipy.sparse as sp
from scipy.optimize import least_squares

from acausal import InitializationError, Model
from acausal.structure.diagnose import is_singular, undetermined
from acausal.structure.graph import incidence, match
from acausal.structure.index import Col

from .consistency import RedundantStarts, over_determined, redundant_starts
from .functions import algebraic, newton_solver

UNSET_GUESS = 0.1  # where the damped fallback starts the unknowns that have no start value
RowName = str | tuple[str, str]  # a text, or (kind, name) of a start to format with its value


@dataclass
class Initializer:
    """``fun(p) -> (x0, z0)``, the residuals of the rows it solves and their description for
    error messages, and the redundant fixed starts to check at its solution
    (``redundant.check(x0, z0, p)``)."""

    fun: cs.Function
    residual: cs.Function  # (x, z, p) -> residuals of the rows below
    rows: list[RowName]
    model: Model
    redundant: RedundantStarts
    guesses: cs.SX | cs.DM | None = None  # the start values Newton begins from, (x, z)
    unset: tuple[int, ...] = ()  # where the unknowns have no start value (guessed 0)
    at_time: cs.Function | None = None  # fun at any start time: (p, t0) -> (x0, z0)
    equations: cs.SX | None = None  # the rows solved, in terms of (x, z, p, t)

    @cached_property
    def guess(self) -> cs.Function:
        """``p ->`` the start values Newton begins from, ``(x, z)`` (built when asked)."""
        return cs.Function("init_guess", [self.model.p], [self.guesses])

    def rows_at(self) -> cs.Function:
        """The residuals at any start time: ``(x, z, p, t0) -> rows`` (built when asked)."""
        dae, model = self.model.dae, self.model
        return cs.Function("init_rows", [dae.x, dae.z, model.p, model.t], [self.equations])

    def row_name(self, k: int) -> str:
        """Row ``k`` described for a person (formatted only when an error needs it)."""
        return describe_row(self.model, self.rows[k])


def describe_row(model: Model, row: RowName) -> str:
    """A row of the initialization problem as text: ``fixed start C1.v = C1.v0``."""
    if isinstance(row, str):
        return row
    kind, name = row
    return f"{kind} {name} = {model.display(model.flat.symbols[name].start)}"


def build_initializer(model: Model, t0: float, plugin: str = "newton") -> Initializer:
    """The initialization problem of ``model`` at time ``t0``; see the module docstring.
    ``plugin``: CasADi's rootfinder for Newton (:func:`~solvers.functions.newton_solver`)."""
    dae = model.dae
    x, z = cs.SX(dae.x), cs.SX(dae.z)  # an empty one comes as a DM
    nx, nz = x.numel(), z.numel()
    guesses, unset = _guesses(model)
    starts = guesses[:nx, 0]  # of x: the modes' and states' own start values (0 where none)
    clean = isinstance(starts, cs.DM) or not cs.depends_on(starts, cs.vertcat(x, z, model.t))
    fixed = _fixed_rows(model, x, starts)
    alg = cs.SX(dae.alg)
    rows = cs.vertcat(alg, fixed.residuals) if alg.numel() else fixed.residuals  # grows below
    names: list[RowName] = [f"algebraic equation of block {b + 1}" for b in dae.alg_blocks]
    names += fixed.names
    own = range(nz, nz + len(fixed.at) if clean else nz)  # rows x_j - c_j whose pattern is known
    inc, timed = _row_incidence(rows, x, z, model.t, own, fixed.at)
    adjacency, col_to_row = _match_equations(inc, nx, nz)
    redundant = _match_fixed(nz, adjacency, col_to_row)
    reaches, groups = over_determined(redundant, adjacency, col_to_row)
    n_rows = len(adjacency)
    declared = dict(zip(range(nz, n_rows), zip(fixed.sources, fixed.cols))) if redundant else {}
    checks = redundant_starts(model, t0, declared, redundant, reaches, groups)
    free = _free_states(nx, adjacency, col_to_row)  # their start value (or 0) taken as given
    if free:
        rows = cs.vertcat(rows, x[free] - starts[free])
        x_names = model.x_names
        names += [f"start value of state {x_names[k]} (not fixed; taken as given)" for k in free]
    missing = np.flatnonzero(np.asarray(col_to_row) < 0).tolist()
    if missing:
        labels = [model.x_names[k] if k < nx else model.symbol_name(z[k - nx]) for k in missing]
        raise InitializationError(
            f"{model.name}: initial values are under-determined for {', '.join(labels)}; "
            "give start values (fixed=True) for them"
        )
    on_states = np.asarray(col_to_row[:nx], dtype=np.int64)
    explicit = None
    if np.all(on_states >= nz):
        if clean and np.all((on_states < own.stop) | (on_states >= n_rows)):  # x_k - c_k each
            explicit = -(cs.DM.zeros(nx) - cs.SX(starts))  # own_starts' -rows(x = 0)
        else:
            sub = rows[on_states.tolist()] if nx else cs.SX(0, 1)
            explicit = own_starts(sub, x, cs.vertcat(z, model.t))
    solved = np.sort(col_to_row).tolist()
    if len(solved) < rows.numel() or not solved:  # redundant fixed starts left out; no rows
        rows, names = rows[solved] if solved else cs.SX(0, 1), [names[r] for r in solved]
    init = _assemble(model, t0, rows, names, explicit, guesses, checks, plugin, timed or not clean)
    return replace(init, unset=unset)


class FixedRows(NamedTuple):
    """The rows ``y - y_start`` of the start modes and the fixed starts (:func:`_fixed_rows`),
    each with the variable it was declared on (``sources``), the unknown column it lands on
    (``cols``, None for a mode) and its description; the first ``len(at)`` are the modes'
    and states' own, ``x_j - c_j`` for ``j`` in ``at``; ``residuals``: all of them stacked."""

    sources: list[str]
    cols: list[Col | None]
    names: list[RowName]
    at: list[int]
    residuals: cs.SX


def _fixed_rows(model: Model, x: cs.SX, starts: cs.SX) -> FixedRows:
    """Rows of the start modes, then of the fixed starts on states, then of those on
    algebraic variables (so that of fixed starts that over-determine the initial state, one
    on a variable the model determines is the one left redundant), each group in the order
    declared (:attr:`~acausal.Model.initial_starts`). ``starts``: the start values of ``x``
    (those of modes and states with a fixed start are their rows' values). Built in bulk: a
    CasADi call per row costs tens of microseconds; the values of the unknowns with a fixed
    start on an algebraic unknown are picked from ``(x, dae.values)`` in one call."""
    init = model.initial_starts
    n_states, modes = len(init.states), [start.source for start in init.modes]
    fixed = init.fixed_on_states + init.fixed_others
    at = [*range(n_states, n_states + len(modes)), *(f.at for f in init.fixed_on_states)]
    sources = modes + [f.start.source for f in fixed]
    cols = [None] * len(modes) + [f.col for f in fixed]
    kinds = ["start mode"] * len(modes) + ["fixed start"] * len(fixed)
    names = list(zip(kinds, sources))
    whole = at == list(range(x.numel()))  # every state's own start, in order: none picked
    residuals = (x - starts if whole else x[at] - starts[at]) if at else cs.SX(0, 1)
    if init.fixed_others:
        both = cs.vertcat(x, model.dae.values)
        values = cs.vertcat(*[f.start.value for f in init.fixed_others])
        picked = both[[f.at for f in init.fixed_others]]
        residuals = cs.vertcat(residuals, picked - values)
    return FixedRows(sources, cols, names, at, residuals)


def _row_incidence(
    rows: cs.SX, x: cs.SX, z: cs.SX, t: cs.SX, own: range, at: Sequence[int]
) -> tuple[sp.csr_matrix, bool]:
    """The incidence of ``rows`` in ``w = (x, z)``, and whether any holds time ``t``. The
    rows ``own`` are ``x_j - c_j`` (``j`` in ``at``, ``c`` free of ``x``, ``z`` and ``t``):
    theirs is known, one column each; CasADi finds the others'."""
    n, m = rows.numel(), x.numel() + z.numel()
    rest = [*range(own.start), *range(own.stop, n)]
    found = incidence(rows[rest] if own else rows, cs.vertcat(x, z, t))
    known = sp.csr_matrix((np.ones(len(own), np.int8), at, np.arange(len(own) + 1)), (len(own), m))
    parts = [found[: own.start, :m], known, found[own.start :, :m]]
    inc = sp.vstack(parts, format="csr") if own else found[:, :m]
    return inc, bool(found[:, m].nnz)


def _match_equations(inc: sp.csr_matrix, nx: int, nz: int) -> tuple[list[list[int]], list[int]]:
    """The unknowns (columns of ``w = (x, z)``) of each row of the incidence ``inc``, and
    ``col_to_row`` of a matching of the first ``nz`` rows, ``g``, to ``z`` (-1 where a
    column is unmatched)."""
    cols, ptr = inc.indices.tolist(), inc.indptr.tolist()
    adjacency = [cols[a:b] for a, b in zip(ptr, ptr[1:])]
    col_to_row = [-1] * (nx + nz)
    for c, r in enumerate(match(inc[:nz, nx:])[1]):
        col_to_row[nx + c] = int(r)
    return adjacency, col_to_row


def _match_fixed(first: int, adjacency: list[list[int]], col_to_row: list[int]) -> list[int]:
    """Rows ``first, first + 1, ...`` matched in turn (:func:`_match_row`); the redundant
    ones, that find no match. The leading rows each on one column, unmatched, no two on the
    same (a state's own start), match it at once, as the search from a lone unmatched
    column does: in bulk."""
    lone = np.array([a[0] if len(a) == 1 else -1 for a in adjacency[first:]], dtype=np.int64)
    taken = np.asarray(col_to_row, dtype=np.int64)
    direct = lone >= 0
    direct[direct] = taken[lone[direct]] < 0
    seen = np.zeros(len(lone), dtype=bool)
    seen[np.unique(lone, return_index=True)[1]] = True
    direct &= seen
    n = len(lone) if direct.all() else int(np.argmin(direct))
    taken[lone[:n]] = np.arange(first, first + n)
    col_to_row[:] = taken.tolist()
    return [r for r in range(first + n, len(adjacency)) if not _match_row(r, adjacency, col_to_row)]


def _free_states(nx: int, adjacency: list[list[int]], col_to_row: list[int]) -> list[int]:
    """The states that the rows so far leave free, in order, each matched to a row
    ``x_k = start`` of its own (appended to ``adjacency``): those that an augmenting path
    from them frees (:func:`_free_column`). A state matched to a row on it alone is
    determined, and no other search passes it: skipped without one. Where every other
    state is unmatched, no search moves a match: all are free, in bulk."""
    todo = [k for k, r in enumerate(col_to_row[:nx]) if r < 0 or adjacency[r] != [k]]
    if any(col_to_row[k] >= 0 for k in todo):
        return [k for k in todo if _free_state(k, adjacency, col_to_row)]
    for k in todo:
        col_to_row[k] = len(adjacency)
        adjacency.append([k])
    return todo


def _free_state(k: int, adjacency: list[list[int]], col_to_row: list[int]) -> bool:
    """Whether an augmenting path frees state ``k``; if so, a row ``[k]`` of its own
    (appended) takes it."""
    if _free_column([k], adjacency, col_to_row) < 0:
        return False  # this state is already determined by the rows so far
    col_to_row[k] = len(adjacency)
    adjacency.append([k])
    return True


def _match_row(row: int, adjacency: list[list[int]], col_to_row: list[int]) -> bool:
    """Match ``row`` to one of its columns by an augmenting path; False if it has none."""
    c = _free_column(adjacency[row], adjacency, col_to_row)
    if c >= 0:
        col_to_row[c] = row
    return c >= 0


def _free_column(cols: Sequence[int], adjacency: list[list[int]], col_to_row: list[int]) -> int:
    """One of ``cols`` made unmatched by an augmenting path, or -1 if there is none.

    A breadth-first search over alternating paths (a column, the row matched to it, that
    row's columns, ...) to an unmatched column; the rows along the path then shift one step
    towards it. -1: every path ends in matched columns (the rows matched to ``cols``
    determine them)."""
    parent: dict[int, int] = {c: -1 for c in cols}
    queue = deque(parent)
    while queue:
        c = queue.popleft()
        r = col_to_row[c]
        if r < 0:
            while parent[c] >= 0:  # shift the rows along the path
                col_to_row[c] = col_to_row[parent[c]]
                c = parent[c]
            col_to_row[c] = -1
            return c
        for c2 in adjacency[r]:
            if c2 not in parent:
                parent[c2] = c
                queue.append(c2)
    return -1


def own_starts(rows: cs.SX, x: cs.SX, unknowns: cs.SX) -> cs.SX | None:
    """``c(p)`` if each ``rows[k]`` is ``x_k - c_k(p)``, a state's own start value (the
    states' start values are then explicit), else None.

    Tested on the whole vector at once: row ``k`` depends on ``x_k`` alone among ``x`` and
    none of the ``unknowns`` (the Newton unknowns and time), and ``d row_k / d x_k`` is the
    constant 1; then ``c = -rows(x = 0)``. (A row is ``y - y_start`` with ``y = x_k``;
    ``row - x_k`` does not simplify to ``-y_start`` symbolically.)"""
    n = rows.numel()
    on_x = incidence(rows, x)
    if not np.array_equal(on_x.indptr, np.arange(n + 1)):  # one unknown per row
        return None
    if not np.array_equal(on_x.indices, np.arange(n)) or incidence(rows, unknowns).nnz:
        return None
    slope = cs.diag(cs.jacobian(rows, x))
    if not (slope.is_constant() and np.all(np.asarray(cs.evalf(slope)) == 1)):
        return None
    return -cs.substitute(rows, x, cs.DM.zeros(x.numel()))


def _guesses(model: Model) -> tuple[cs.SX | cs.DM, tuple[int, ...]]:
    """Start values (fixed or not) of states, then of the modes, then of Newton unknowns, 0
    where none, stacked (one ``vertcat``: wrapping each in an SX costs tens of microseconds);
    and the positions of the unknowns that have none."""
    init = model.initial_starts
    n_states, found = len(init.states), [*init.states, *init.newton]
    values = [start.value if start is not None else 0.0 for start in found]
    values[n_states:n_states] = [start.value for start in init.modes]
    shift = len(init.modes)
    unset = [k + shift * (k >= n_states) for k, start in enumerate(found) if start is None]
    return (cs.vertcat(*values) if values else cs.DM(0, 1)), tuple(unset)


def _assemble(
    model: Model,
    t0: float,
    rows: cs.SX,
    names: list[RowName],
    explicit: cs.SX | None,
    guesses: cs.SX | cs.DM,
    redundant: RedundantStarts,
    plugin: str,
    timed: bool,
) -> Initializer:
    """The :class:`Initializer` of the square ``rows`` (``timed``: they may hold time, set
    to ``t0`` in the residuals)."""
    dae, p = model.dae, model.p
    x, z = dae.x, dae.z
    nx, nz = x.numel(), z.numel()
    time = model.t  # (an input below: the start time)
    at_t0 = cs.substitute(rows, time, t0) if timed else rows
    square = cs.Function("init_residual", [x, z, p], [at_t0])
    pm, tm = cs.MX.sym("p", p.numel()), cs.MX.sym("t0")

    def guess() -> cs.MX:  # the start values Newton begins from (made only if Newton runs)
        return cs.Function("init_guess", [p], [guesses])(pm)

    if explicit is not None:  # Newton on z alone
        x0 = cs.Function("init_x", [p], [explicit])(pm)
        if nz:
            z0 = newton_solver("init_z", algebraic(model), plugin)(guess()[nx:], x0, pm, tm)
        else:
            z0 = cs.MX(0, 1)
    else:
        g = cs.Function("g", [cs.vertcat(x, z), p, time], [rows])
        w = newton_solver("init_w", g, plugin)(guess(), pm, tm)
        x0, z0 = w[:nx], w[nx:]
    at_time = cs.Function("init_at", [pm, tm], [x0, z0], ["p", "t0"], ["x0", "z0"])
    fun = cs.Function("init", [pm], at_time(pm, t0), ["p"], ["x0", "z0"])
    return Initializer(
        fun, square, names, model, redundant, guesses, at_time=at_time, equations=rows
    )


def damped_start(init: Initializer, p: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The square system solved by Levenberg-Marquardt (scipy's ``least_squares``) from the
    start values, with the unknowns that have none moved off 0 to ``UNSET_GUESS``: a
    fallback where Newton fails. A guess of 0 for every free angle can sit on a singular
    point (a four-bar's links collinear), where an explicit block divides by zero; the
    damped steps also reach solutions that Newton's full steps overshoot. None if the
    residuals are not finite at that start or it does not solve the rows; an
    :class:`InitializationError` if the system is singular where it ends (the start values
    leave some unknowns free)."""
    fun = _least_squares_functions(init)
    nx = init.model.dae.x.numel()
    w0 = init.guess(p).full().ravel()
    w0[list(init.unset)] += UNSET_GUESS
    if not np.all(np.isfinite(fun(w0, p)[0].full())):
        return None
    sol = least_squares(
        lambda q: fun(q, p)[0].full().ravel(),
        w0,
        jac=lambda q: fun(q, p)[1].full(),
        method="lm",
        xtol=1e-15,
        ftol=1e-15,
        gtol=1e-15,
    )
    x0, z0 = sol.x[:nx], sol.x[nx:]
    res, jac = (v.full() for v in fun(sol.x, p))
    if not converged(res.ravel(), x0, z0):
        return None
    _check_determined(init.model, jac)
    return x0, z0


def ensure_determined(init: Initializer, x0: np.ndarray, z0: np.ndarray, p: np.ndarray) -> None:
    """An :class:`InitializationError` if the initialization's Jacobian is singular at the
    solution ``(x0, z0)`` Newton found: the residuals vanish there, but the start values
    leave some unknowns free (a mechanism started at a dead point), and which solution
    Newton reached is an accident of its steps."""
    _check_determined(init.model, _least_squares_functions(init)(np.r_[x0, z0], p)[1].full())


def _least_squares_functions(init: Initializer) -> cs.Function:
    """``(w, p) -> (residuals, dense Jacobian)`` of the initialization, ``w = (x, z)``."""
    model = init.model
    nx, nz = model.dae.x.numel(), model.dae.z.numel()
    w, ps = cs.SX.sym("w", nx + nz), cs.SX.sym("p", model.p.numel())
    r = init.residual(w[:nx], w[nx:], ps)
    return cs.Function("init_lsq", [w, ps], [r, cs.densify(cs.jacobian(r, w))])


def _check_determined(model: Model, jac: np.ndarray) -> None:
    if jac.size and is_singular(jac, tol=1e-10):  # residuals may vanish, the start is loose
        names = model.x_names + z_names(model)
        loose = ", ".join(names[k] for k in undetermined(jac)[:12])
        raise InitializationError(
            f"{model.name}: the start values do not determine the start: the initialization "
            f"is singular in {loose} (they can move together without violating any "
            "equation); fix the start value of one of them (for a mechanism: a joint's "
            "angle and speed away from its dead point)"
        )


def converged(res: np.ndarray, x0: np.ndarray, z0: np.ndarray) -> bool:
    """Whether the initialization rows' residuals ``res`` at ``(x0, z0)`` say they are
    solved: finite and below ``1e-6 (1 + max |w|)`` (and 1e-6)."""
    scale = 1e-6 * (1 + np.abs(np.concatenate([x0, z0])).max(initial=0))
    return bool(np.all(np.isfinite(res)) and np.abs(res).max(initial=0) <= max(scale, 1e-6))


def z_names(model: Model) -> list[str]:
    """The names of the Newton unknowns ``dae.z``."""
    return [model.ir.name(c) for c in model.z_columns()]


def z_start_values(model: Model) -> cs.Function:
    """``p ->`` the start values of the Newton unknowns ``dae.z`` (0 where none): the
    guesses Newton begins from."""
    values = [s.value if s is not None else 0.0 for s in model.initial_starts.newton]
    return cs.Function("z_start_values", [model.p], [cs.vertcat(*values)])
