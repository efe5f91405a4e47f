"""Solve BLT blocks symbolically where possible; the rest stays for Newton / IDAS.

A block of residuals ``r(y)`` whose Jacobian ``A = dr/dy`` does not depend on ``y`` is
linear, ``r(y) = A y + r(0)``, and is solved as ``y = -A^{-1} r(0)`` (a scalar division for
one equation; a symbolic solve for loops up to ``MAX_LINEAR_LOOP`` unknowns). Other blocks
keep their unknowns ``z`` and residuals ``g`` as algebraic equations. Substituting the
solutions in block order gives the semi-explicit index-1 DAE

    x' = f(x, z, p, t),    0 = g(x, z, p, t)

and every unknown as an explicit expression of ``(x, z, p, t)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs
import numpy as np

from ..errors import StructureError
from ..symbols import quantity_of
from .blt import Block
from .diagnose import describe_unknown, explain_block, is_singular
from .index import IndexReduced

MAX_LINEAR_LOOP = 30


@dataclass
class SemiExplicit:
    """``x' = ode(x, z, p, t)``, ``0 = alg(x, z, p, t)``; ``values`` of every algebraic column."""

    x: cs.SX
    z: cs.SX
    ode: cs.SX
    alg: cs.SX
    values: cs.SX  # one entry per IndexReduced.algebraic column, in terms of x, z, p, t
    alg_blocks: list[int]  # for each entry of alg: index of its block


def causalize(ir: IndexReduced, blocks: list[Block]) -> SemiExplicit:
    """Classify blocks (setting ``Block.kind``) and build the semi-explicit DAE."""
    defs_sym: list[cs.SX] = []
    defs_val: list[cs.SX] = []
    z: list[cs.SX] = []
    alg: list[cs.SX] = []
    alg_blocks: list[int] = []
    linear_jacs: list[tuple[int, cs.SX]] = []
    for b, block in enumerate(blocks):
        res = cs.vertcat(*[ir.equations[r].residual for r in block.equations])
        y = cs.vertcat(*[ir.sym(c) for c in block.unknowns])
        jac = cs.jacobian(res, y)
        linear = len(block.unknowns) <= MAX_LINEAR_LOOP and not cs.depends_on(jac, y)
        if linear:
            r0 = cs.substitute(res, y, cs.DM.zeros(y.numel()))
            sol = -r0 / jac if y.numel() == 1 else cs.solve(jac, -r0)
            block.kind = "explicit" if y.numel() == 1 else "linear"
            linear_jacs.append((b, jac))
            for k in range(y.numel()):
                defs_sym.append(y[k])
                defs_val.append(sol[k])
        else:
            block.kind = "newton"
            for k in range(y.numel()):
                z.append(y[k])
            for k in range(res.numel()):
                alg.append(res[k])
                alg_blocks.append(b)
    _check_linear_blocks(ir, blocks, linear_jacs)
    x = [ir.sym(c) for c in ir.states]
    ode = [ir.sym((vi, o + 1)) for vi, o in ir.states]
    values = [ir.sym(c) for c in ir.algebraic]
    exprs = [cs.vertcat(*ode), cs.vertcat(*alg), cs.vertcat(*values)]
    if defs_sym:
        _, exprs = cs.substitute_inplace(defs_sym, defs_val, exprs, False)
    return SemiExplicit(cs.vertcat(*x), cs.vertcat(*z), exprs[0], exprs[1], exprs[2], alg_blocks)


def _check_linear_blocks(ir: IndexReduced, blocks: list[Block], jacs: list) -> None:
    """A linear block must be nonsingular at the model's parameter values.

    The Jacobians are evaluated once, all together, with parameters at their values and
    every other symbol (states, time, earlier unknowns) at a fixed pseudo-random point in
    [0.5, 1.5], so an accidental zero is unlikely; an exactly singular matrix there (no
    ground, a zero resistance) is a modeling error, reported with the undetermined unknowns.
    """
    if not jacs:
        return
    flat = cs.vertcat(*[cs.vec(cs.densify(j)) for _, j in jacs])
    syms = cs.symvar(flat)
    rng = np.random.default_rng(12345)
    values = []
    for sym in syms:
        q = None if sym.name() == "time" else quantity_of(sym)
        values.append(q.value if q is not None and q.kind == "parameter" else rng.uniform(0.5, 1.5))
    num = np.asarray(cs.evalf(cs.substitute(flat, cs.vertcat(*syms), cs.DM(values)))).ravel()
    red = ir.reduced
    start = 0
    for b, jac in jacs:
        n = jac.size1()
        mat = num[start : start + n * n].reshape(n, n, order="F")
        start += n * n
        if is_singular(mat):
            block = blocks[b]
            origins = [ir.equations[r].origin for r in block.equations]
            names = [
                describe_unknown(red, ir.chains[vi][o]) if o == 0 else ir.chains[vi][o].name
                for vi, o in block.unknowns
            ]
            raise StructureError(
                f"model {red.flat.name}: "
                + explain_block(b + 1, origins, names, mat, "at the model's parameter values")
            )
