"""Numerical diagnosis of BLT blocks: which block is singular at a point, and why.

A block ``r(y) = 0`` is singular at a point when its Jacobian ``dr/dy`` loses rank there;
the right singular vectors of the near-zero singular values tell which combination of the
block's unknowns the equations leave undetermined (for a circuit without ground: all
node potentials shifted together).
"""

from __future__ import annotations

import casadi as cs
import numpy as np

from acausal.structure.diagnose import explain_block, is_singular

from .functions import DAEFunctions


def singular_block(
    functions: DAEFunctions, x: np.ndarray, z: np.ndarray, p: np.ndarray, t: float
) -> str | None:
    """Describe the first block whose Jacobian is singular at ``(x, z, p, t)``, if any."""
    model = functions.model
    ir = model.ir
    values = functions.values(x, z, p, t).full().ravel()
    values = np.where(np.isfinite(values), values, 0.0)
    xs = ir.syms(ir.states)
    ys = ir.syms(ir.algebraic)
    for k, block in enumerate(model.blocks, 1):
        res = ir.residuals[list(block.equations)]
        yb = ir.syms(block.unknowns)
        jac = cs.Function("block_jacobian", [xs, ys, model.p, model.t], [cs.jacobian(res, yb)])
        mat = jac(x, values, p, t).full()
        if is_singular(mat):
            return explain_block(ir, k, block, mat, f"at t = {t:g}")
    return None
