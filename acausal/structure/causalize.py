"""Solve BLT blocks symbolically where possible; the rest stays for Newton / IDAS.

A block of residuals ``r(y)`` whose Jacobian ``A = dr/dy`` does not depend on ``y`` is
linear, ``r(y) = A y + r(0)``, and is solved as ``y = -A^{-1} r(0)``: a scalar division for
one equation, a symbolic solve (:mod:`.linsolve`) for loops up to ``MAX_LINEAR_LOOP``
unknowns; a larger one (up to ``MAX_TORN_LOOP``) is torn (:mod:`.tearing`) and the rest of
it made explicit in its few tear unknowns, which are solved symbolically too when there
are at most ``MAX_SOLVED_TEARS`` of them (a mechanism's accelerations and joint forces: the
model's rates then hold no unknown of the loop, as in the state-space form a Modelica tool
integrates, and IDAS's error test sees none of them), else go with their residual
equations to Newton. Other blocks keep their unknowns ``z`` and residuals ``g`` as
algebraic equations. Substituting the
solutions in block order gives the semi-explicit index-1 DAE

    x' = f(x, z, p, t),    0 = g(x, z, p, t)

and every unknown as an explicit expression of ``(x, z, p, t)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter

import casadi as cs
import numpy as np

from ..errors import StructureError
from ..flat import FlatDAE, displayed
from ..symbols import column_entries, vstack
from ..table import Table
from . import linsolve
from .blt import Block, blocks_of
from .diagnose import explain_block, is_singular
from .graph import DENSE_ROW, pattern
from .index import IndexReduced, state_counts
from .tearing import Tearing, inner_solutions, tear

MAX_LINEAR_LOOP = 30
MAX_TORN_LOOP = 1000  # larger linear loops go to Newton whole (tearing scans them greedily)
# a torn loop with at most this many tear unknowns has them solved symbolically (a dense
# k x k solve is some 2 k^3 instructions: 617 at k = 5, 1,774 at k = 8); more go to Newton
MAX_SOLVED_TEARS = 8


@dataclass(frozen=True, eq=False)
class SemiExplicit:
    """``x' = ode(x, z, p, t)``, ``0 = alg(x, z, p, t)``; ``values`` of every algebraic
    column; ``blocks``: the BLT blocks with their kinds."""

    x: cs.SX
    z: cs.SX
    ode: cs.SX
    alg: cs.SX
    values: cs.SX  # one entry per IndexReduced.algebraic column, in terms of x, z, p, t
    alg_blocks: tuple[int, ...]  # for each entry of alg: index of its block
    blocks: tuple[Block, ...] = ()
    keys: Table = field(default_factory=Table)  # the symbols' own names -> dotted names

    def __str__(self) -> str:
        kinds = [b.kind for b in self.blocks]
        shown = ("explicit", "linear", "newton")
        shown += tuple(k for k in ("torn", "torn-solved") if k in kinds)
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in shown)
        parts = [self.x, self.z, self.ode, self.alg, self.values, self.zero, self.update]
        x, z, ode, alg, values, zero, update = displayed(parts, self.keys)
        return "\n".join(
            [
                f"SemiExplicit: x holds "
                f"{state_counts(self.x.numel() - self.modes, self.modes)}; "
                f"{self.z.numel()} Newton unknowns; blocks: {counts}",
                f"x = {x}",
                f"z = {z}",
                f"x' = {ode}",
                f"0 = {alg}",
                f"values = {values}",
                f"zero = {zero}",
                f"update = {update}",
            ]
        )

    modes: int = 0  # discrete modes: the last ``modes`` entries of x, with zero rate
    zero: cs.SX = field(default_factory=lambda: cs.SX(0, 1))  # crossing functions
    update: cs.SX = field(default_factory=lambda: cs.SX(0, 1))  # new modes, one iteration
    # per crossing function: the position (among the modes) of the relation it drives, or -1
    relations: tuple[int, ...] = ()


def causalize(ir: IndexReduced, blocks: tuple[Block, ...]) -> SemiExplicit:
    """Classify blocks (explicit, linear, torn, Newton) and build the semi-explicit DAE:
    the scalar blocks solved as whole vectors (:func:`_scalar_solutions`), the others
    block by block (:class:`_Solved`), then the definitions substituted in block order
    into the rates, the Newton residuals and every algebraic column's value."""
    # the symbols of the states and algebraic columns, stacked once and indexed from then
    # on: ``where[numbers]`` are the columns' rows in ``stacked``
    numbers = ir.column_order  # (ir.column_numbers of the states, then of the algebraic)
    where = np.full(ir.pattern.shape[1], -1, dtype=np.int64)
    where[numbers] = np.arange(len(numbers))
    names = list(chain.from_iterable(ir.chains))  # (each column's, numbered chain by chain)
    stacked = ir.symbols.take(map(names.__getitem__, numbers.tolist()))
    explicit, ats, solutions, coefs = _scalar_solutions(ir, blocks, stacked, where)
    out = _Solved(solutions)
    is_explicit = np.zeros(len(blocks), dtype=bool)
    is_explicit[explicit] = True
    others = np.flatnonzero(~is_explicit)
    done = 0  # explicit blocks taken
    for b, cut in zip(others.tolist(), np.searchsorted(explicit, others).tolist()):
        out.explicit(ats[done:cut], cut)  # explicit block k: row k of solutions
        out.block(ir, b, blocks[b], where)
        done = cut
    out.explicit(ats[done:], len(ats))
    _check_linear_blocks(ir, blocks, explicit.tolist(), coefs, out.loops)
    n_states = len(ir.states)
    x = _span(stacked, 0, n_states)
    ode = column_entries(stacked, where[numbers[:n_states] + 1].tolist())  # der(x): the next column
    exprs = [ode, cs.vertcat(*out.alg), _span(stacked, n_states, len(numbers))]
    if out.defined:
        calls = ir.reduced.flat.calls_functions
        exprs = _substitute_chain(column_entries(stacked, out.defined), out.values(), exprs, calls)
    kinded = blocks_of(map(itemgetter(0), blocks), map(itemgetter(1), blocks), out.kinds)
    return SemiExplicit(
        x,
        cs.vertcat(*out.z),
        exprs[0],
        exprs[1],
        exprs[2],
        tuple(out.alg_blocks),
        kinded,
        keys=ir.reduced.flat.keys,
    )


def _scalar_solutions(
    ir: IndexReduced, blocks: tuple[Block, ...], stacked: cs.SX, where: np.ndarray
) -> tuple[np.ndarray, list[int], cs.SX, cs.SX]:
    """The explicit scalar blocks (in block order), the rows in ``stacked`` of their
    unknowns (``where``: the row of each column number), their solutions (a vector, one
    row per explicit block) and the coefficients ``J_bb`` of them (linear all).

    Scalar blocks are handled as whole vectors, since a CasADi call costs tens of
    microseconds and one call per block would dominate large models. With ``r`` the scalar
    blocks' residuals and ``y`` their unknowns (BLT order, so ``J = dr/dy`` is lower
    triangular), a block is explicit when ``J_bb`` does not depend on ``y_b``. Where the
    whole row of ``J`` is free of ``y`` (the row is affine), forward substitution gives
    ``y_b = -(r_b(0) + sum_{j<b} J_bj y_j) / J_bb`` for all such rows at once; other
    explicit rows use ``y_b = -r_b(y_b = 0) / J_bb`` one by one. The rows holding many of
    ``y`` are differentiated apart (:func:`_masked`), their entries written into the
    vectors of the others (stacking and permuting two whole-model sparse Jacobians, or
    even two vectors, costs a sixth of the Jacobian)."""
    scalar = np.flatnonzero(np.fromiter(map(len, map(itemgetter(0), blocks)), np.int64) == 1)
    if not len(scalar):
        return scalar, [], cs.SX(0, 1), cs.SX(0, 1)
    chosen = list(map(blocks.__getitem__, scalar.tolist()))
    eqs = list(map(itemgetter(0), map(itemgetter(0), chosen)))
    res = ir.residuals[eqs]
    solved = ir.column_numbers(map(itemgetter(0), map(itemgetter(1), chosen)))
    ats = where[solved]
    ys = column_entries(stacked, ats.tolist())
    held = np.diff(ir.pattern[eqs][:, solved].indptr)  # how many of ys each row holds
    dense = np.flatnonzero(held > DENSE_ROW)
    dense = dense if len(dense) < len(held) else dense[:0]  # (all dense: all together)
    diag, products, nonaffine, own_dep = _linear_part(
        _masked(res, ys, dense), ys, np.arange(len(held))
    )
    if len(dense):  # their entries in the vectors, each a nonzero there (J_bb = 1 masked)
        at = dense.tolist()
        cols = np.unique(ir.pattern[[eqs[k] for k in at]][:, solved].indices)
        diag[at], products[at], more, own = _linear_part(res[at], ys, dense, cols)
        nonaffine, own_dep = np.union1d(nonaffine, more), np.union1d(own_dep, own)
    linear = np.ones(len(scalar), dtype=bool)
    linear[own_dep] = False
    solutions = -(cs.substitute(res, ys, cs.DM.zeros(ys.numel())) + products)
    solutions = solutions / diag
    for k in nonaffine[linear[nonaffine]].tolist():
        solutions[k] = -cs.substitute(res[k], ys[k], 0) / diag[k]
    keep = np.flatnonzero(linear)
    if len(keep) < len(scalar):  # (the rows of the explicit blocks only)
        solutions, diag = solutions[keep.tolist()], diag[keep.tolist()]
    return scalar[keep], ats[keep].tolist(), solutions, diag


def _masked(res: cs.SX, ys: cs.SX, rows: np.ndarray) -> cs.SX:
    """``res`` with its rows ``rows`` replaced by their unknowns ``ys[rows]``. The rows
    holding many of ``ys`` (more than :data:`.graph.DENSE_ROW`: a ground's current
    balance) are differentiated apart: CasADi colors the columns of a Jacobian for its
    forward sweeps, and a row holding ``k`` of them needs ``k`` colors, each a sweep over
    every row (apart, the others take a few sweeps, the dense ones a reverse sweep each).
    In their place, an entry ``1`` on the diagonal keeps the pattern of the whole-vector
    results (a nonzero in every row), into which theirs are written."""
    if not len(rows):
        return res
    out = cs.SX(res)
    out[rows.tolist()] = ys[rows.tolist()]
    return out


def _linear_part(
    res: cs.SX, ys: cs.SX, rows: np.ndarray, cols: np.ndarray | None = None
) -> tuple[cs.SX, cs.SX, np.ndarray, np.ndarray]:
    """Of the rows ``rows`` (ascending; ``res``, their residuals) of the scalar blocks,
    whose unknowns are ``ys`` (row ``b`` solves ``ys[b]``), with ``J = dres/dys``: the
    columns ``J_bb`` and ``sum_{j != b} J_bj y_j`` (the diagonal's product an explicit
    zero, as ``J_bb - J_bb``), the rows with an entry of ``J`` that depends on ``ys``, and
    those whose ``J_bb`` depends on ``y_b``. ``cols``: the columns of ``J`` the rows hold
    (ascending; all if None), the only ones differentiated in (a few rows holding
    thousands of ``ys``: the others' derivatives are zero, and the product sums the same
    terms in the same order)."""
    if cols is not None:
        ys = column_entries(ys, cols.tolist())
    jac = cs.jacobian(res, ys)
    jrows, jcols = (np.asarray(a, dtype=np.int64) for a in jac.sparsity().get_triplet())
    jcols = jcols if cols is None else cols[jcols]
    on_diag = rows[jrows] == jcols
    at_diag = np.flatnonzero(on_diag).tolist()
    spy = cs.Sparsity.triplet(len(rows), 1, jrows[at_diag].tolist(), [0] * len(at_diag))
    diag = cs.SX(spy, jac.nz[at_diag])  # diag(J), as a column
    offdiag = cs.SX(jac)  # J - diag(diag(J)): its diagonal explicit zeros, as J_bb - J_bb is
    offdiag.nz[at_diag] = 0
    nonaffine, own_dep = _varying(jac, ys, rows[jrows], on_diag, cols)
    return diag, cs.mtimes(offdiag, ys), nonaffine, own_dep


def _varying(
    jac: cs.SX, ys: cs.SX, jrows: np.ndarray, on_diag: np.ndarray, cols: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``jrows`` of the entries of ``J = jac`` that depend on ``ys`` (sorted), and
    the ``k`` whose ``J_kk`` depends on ``y_k`` (``ys``: the columns ``cols`` of the
    unknowns, all if None): none when no entry depends on ``ys`` (one dependency sweep,
    the common case), else from the entries' pattern in ``ys``."""
    if not cs.depends_on(jac, ys):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    entries = pattern(jac.nz[:], ys).tocoo()  # which of ys each nonzero of jac holds
    held = entries.col if cols is None else cols[entries.col]
    own = (jrows[entries.row] == held) & on_diag[entries.row]
    return np.unique(jrows[entries.row]), np.unique(held[own])


class _Solved:
    """What the blocks give, in block order: the definitions ``y = value`` (the symbols by
    their rows in the stacked columns, ``defined``; the values in pieces: runs of explicit
    scalar blocks' rows of ``solutions``, the last one the range ``run``, and loops'
    solutions), the Newton unknowns ``z`` with their residuals ``alg`` and blocks, each
    block's kind, and the linear loops' Jacobians (``loops``, for the singularity check)."""

    def __init__(self, solutions: cs.SX) -> None:
        self.solutions = solutions
        self.defined: list[int] = []
        self.pieces: list[cs.SX] = []
        self.run = (0, 0)  # the rows start, ..., stop - 1 of solutions since the last loop
        self.loops: list[tuple[int, cs.SX]] = []
        self.z: list[cs.SX] = []
        self.alg: list[cs.SX] = []
        self.alg_blocks: list[int] = []
        self.kinds: list[str] = []

    def values(self) -> cs.SX:
        """The defined values, one vector in the order of ``defined``."""
        start, stop = self.run
        run = self.solutions[start:stop] if stop > start else cs.SX(0, 1)
        return vstack([*self.pieces, run])

    def explicit(self, ats: list[int], stop: int) -> None:
        """Consecutive scalar blocks, for the columns ``ats``, whose solutions are the rows
        of ``solutions`` after the run so far, up to ``stop - 1``."""
        self.kinds += ["explicit"] * len(ats)
        self.defined += ats
        self.run = (self.run[0], stop)

    def block(self, ir: IndexReduced, b: int, block: Block, where: np.ndarray) -> None:
        """Block ``b`` of several equations or a scalar one that is not explicit: a linear
        loop solved symbolically (small), torn (the tears solved too when few) or else
        left to Newton (``where``: the stacked columns' row of each column number)."""
        res = ir.residuals[list(block.equations)]
        y = ir.syms(block.unknowns)
        n = len(block.unknowns)
        jac = cs.jacobian(res, y) if 1 < n <= MAX_TORN_LOOP else None
        if jac is None or cs.depends_on(jac, y):
            self.kinds.append("newton")
            self.z += cs.vertsplit(y)
            self.alg += cs.vertsplit(res)
            self.alg_blocks += [b] * res.numel()
            return
        self.loops.append((b, jac))
        at = where[ir.column_numbers(block.unknowns)]
        start, stop = self.run
        self.pieces += [self.solutions[start:stop]] if stop > start else []
        self.run = (stop, stop)
        if n <= MAX_LINEAR_LOOP:
            self.kinds.append("linear")
            sol = linsolve.solve(jac, -cs.substitute(res, y, cs.DM.zeros(y.numel())))
            self.defined += at.tolist()
            self.pieces.append(sol)
            return
        tearing = tear(jac, _nonzero_number)
        syms, values = inner_solutions(res, y, jac, tearing)
        if len(tearing.tears) <= MAX_SOLVED_TEARS:  # the tears first, then the others
            self.kinds.append("torn-solved")
            self.defined += at[list(tearing.tears)].tolist()
            self.pieces.append(_solved_tears(res, y, tearing, syms, values))
        else:
            self.kinds.append("torn")
            self.z += [y[j] for j in tearing.tears]
            self.alg += [res[i] for i in tearing.residual]
            self.alg_blocks += [b] * len(tearing.residual)
        self.defined += [int(at[j]) for _, j in tearing.order]
        self.pieces.append(cs.vertcat(cs.SX(0, 1), *values))


def _substitute_chain(syms: cs.SX, values: cs.SX, exprs: list[cs.SX], calls: bool) -> list:
    """``exprs`` with the definitions ``syms[k] = values[k]`` (two vectors) substituted,
    each value using only earlier symbols: CasADi's ``substitute_inplace`` (one pass, on
    the two vectors: as lists of scalars they would cost a binding conversion each and a
    function of as many inputs), unless the model ``calls`` a CasADi function (a sampled
    signal's ``interpolant``: the values and expressions derive from the model's
    residuals, so they can only call what those call), which ``substitute_inplace``
    corrupts in CasADi 3.8.2 (the call becomes its argument); then halves resolved one
    after the other by ``substitute``, ``O(size log n)``."""
    if not calls:
        return cs.substitute_inplace([syms], [values], exprs, False)[1]
    return cs.substitute(exprs, [syms], [_resolved(syms, values)])


def _resolved(syms: cs.SX, values: cs.SX) -> cs.SX:
    """The chained definitions ``syms = values`` resolved to expressions free of ``syms``."""
    if values.numel() <= 1:
        return values
    half = values.numel() // 2
    first = _resolved(syms[:half], values[:half])
    rest = cs.substitute(values[half:], syms[:half], first)
    return cs.vertcat(first, _resolved(syms[half:], rest))


def _solved_tears(res: cs.SX, y: cs.SX, tearing: Tearing, syms: list, values: list) -> cs.SX:
    """The tear unknowns of a torn block (residuals ``res`` in its unknowns ``y``; ``syms``,
    ``values``: :func:`.tearing.inner_solutions`) as expressions free of ``y``. With every
    inner unknown resolved to an expression of the tears ``t``, the residual equations are
    ``s(t) = M t + s(0)`` (the block is linear, so ``M = ds/dt`` is free of ``y``), and
    ``t = -M^{-1} s(0)`` by :func:`.linsolve.solve` (Householder on the equilibrated
    rows)."""
    inner = cs.vertcat(cs.SX(0, 1), *syms)
    resolved = _resolved(inner, cs.vertcat(cs.SX(0, 1), *values))
    left = cs.substitute(res[tearing.residual], inner, resolved)
    tears = y[tearing.tears]
    at_zero = cs.substitute(left, tears, cs.DM.zeros(tears.numel()))
    return linsolve.solve(cs.jacobian(left, tears), -at_zero)


def _span(stacked: cs.SX, start: int, stop: int) -> cs.SX:
    """The entries ``start, ..., stop - 1`` of a column vector, as
    :func:`~acausal.symbols.column_entries` of them, by one slice (no list of indices to
    convert; CasADi slices a 1 x 1 to an empty range as a 1 x 0)."""
    return stacked[start:stop] if stop > start else cs.SX(0, 1)


def _nonzero_number(a: cs.SX) -> bool:
    """A coefficient safe to divide by in tearing: a nonzero number (a parameter, a mass
    that a fit may move through zero, is not; a state-dependent one even less)."""
    return bool(a.is_constant() and float(cs.evalf(a)) != 0)


def _probe(params: cs.SX, values: np.ndarray, expr: cs.SX) -> np.ndarray:
    """``expr`` at the parameters ``params``' ``values`` and a fixed pseudo-random point in
    [0.5, 1.5] for every other symbol (states, time, unknowns of earlier blocks: the free
    symbols of a function of the parameters, in its order; with none, that function)."""
    fn = cs.Function("probe", [params], [expr], {"allow_free": True})
    others = fn.free_sx()
    if not others:
        return np.asarray(fn(values)).ravel()
    point = np.random.default_rng(12345).uniform(0.5, 1.5, len(others))
    fn = cs.Function("probe", [params, cs.vertcat(cs.SX(0, 1), *others)], [expr])
    return np.asarray(fn(values, point)).ravel()


def _check_linear_blocks(
    ir: IndexReduced,
    blocks: list[Block],
    scalar_blocks: list[int],
    coefs: cs.SX,
    loops: list[tuple[int, cs.SX]],
) -> None:
    """A linear block must be nonsingular at the model's parameter values.

    An exactly singular matrix at the probe point of :func:`_probe` (no ground, a zero
    resistance) is a modeling error, reported with the unknowns it leaves undetermined.
    """
    flat = ir.reduced.flat
    params = parameter_symbols(flat, flat.parameters)
    (values,) = flat.symbols.columns(["value"], rows=flat.kind_rows["parameter"])
    at = np.array(values.tolist(), dtype=float)
    if scalar_blocks:
        values = _probe(params, at, coefs)
        bad = np.flatnonzero((values == 0) | ~np.isfinite(values))
        if len(bad):
            _raise_singular(ir, blocks, scalar_blocks[bad[0]], values[bad[:1], None])
    for b, jac in loops:
        n = jac.size1()
        mat = _probe(params, at, cs.vec(cs.densify(jac))).reshape(n, n, order="F")
        if is_singular(mat):
            _raise_singular(ir, blocks, b, mat)


def parameter_symbols(flat: FlatDAE, names: Sequence[str]) -> cs.SX:
    """The symbols of the parameters ``names`` of ``flat``, stacked: when they are its
    parameters in order, by their rows of its table (:attr:`.FlatDAE.kind_rows`: no name
    looked up), else by name."""
    if names is flat.parameters or list(names) == list(flat.parameters):
        rows = flat.kind_rows["parameter"]
        return flat.symbols.stack[rows.tolist()] if rows.size else cs.SX(0, 1)
    return flat.symbols.take(names)


def _raise_singular(ir: IndexReduced, blocks: list[Block], b: int, mat: np.ndarray) -> None:
    raise StructureError(
        f"model {ir.reduced.flat.name}: "
        + explain_block(ir, b + 1, blocks[b], mat, "at the model's parameter values")
    )
