"""The sparse assembly of the collocated NLP: each piece's constraints are one small SX
function of its own unknowns, mapped over the pieces (:class:`Block`); a :class:`Stack` of
blocks gives the stacked values, their Jacobian and the Hessian of a weighted sum, assembled
from the mapped per-piece ones (their nonzeros scattered to known rows and columns,
:func:`scatter`); :class:`Layout` places each block of unknowns in the NLP's vector ``w``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np


def scatter(values: cs.MX, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> cs.MX:
    """The sparse matrix with ``values[k]`` added at ``(rows[k], cols[k])`` (duplicates
    summed): ``nonzeros = A values`` with ``A`` the 0/1 matrix from each triplet to its
    place."""
    rows, cols = np.asarray(rows, dtype=int), np.asarray(cols, dtype=int)
    sp, place = cs.Sparsity.triplet(*shape, rows.tolist(), cols.tolist(), True)
    A = cs.DM(cs.Sparsity.triplet(sp.nnz(), rows.size, place, list(range(rows.size))), 1.0)
    return cs.MX(sp, cs.mtimes(A, values)) if rows.size else cs.MX(*shape)


@dataclass
class Block:
    """``fun(u_i, q_i)`` for the columns ``u_i`` of ``U`` (``q_i`` of ``Q``), mapped:
    ``where[i, k]`` is the NLP unknown that entry ``k`` of ``u_i`` is, ``row`` the first
    row of the block's values in their stack."""

    fun: cs.SX
    u: cs.SX
    q: cs.SX
    U: cs.MX
    Q: cs.MX
    where: np.ndarray
    row: int

    @property
    def n(self) -> int:
        return self.where.shape[0]

    def mapped(self, outputs: list[cs.SX], extra: Sequence[cs.SX], args: Sequence[cs.MX]) -> list:
        """``outputs`` (expressions of ``u``, ``q`` and ``extra``) evaluated per column."""
        F = cs.Function("f", [self.u, self.q, *extra], outputs).map(self.n)
        return F.call([self.U, self.Q, *args])

    def places(self, sparsity: cs.Sparsity, rows: Any) -> tuple[np.ndarray, np.ndarray]:
        """Rows and NLP columns of a per-column Jacobian or Hessian's nonzeros, column
        after column; ``rows`` maps a local row to the stack's (``None``: NLP unknowns)."""
        r, c = (np.asarray(a, dtype=int) for a in sparsity.get_triplet())
        cols = self.where[:, c]
        if rows is None:
            return self.where[:, r].ravel(), cols.ravel()
        return rows(np.arange(self.n)[:, None], r[None, :]).ravel(), cols.ravel()


@dataclass
class Stack:
    """Stacked values ``v`` (a column) of mapped SX functions over the NLP unknowns
    ``w``, with ``dv/dw`` and the Hessian of ``sum_k lam_k v_k`` (or of ``sigma ||v||^2``)
    assembled from the per-column ones."""

    blocks: list[Block] = field(default_factory=list)
    size: int = 0

    def add(self, fun: cs.SX, u: cs.SX, q: cs.SX, U: cs.MX, Q: cs.MX, where: np.ndarray) -> None:
        self.blocks.append(Block(fun, u, q, U, Q, where, self.size))
        self.size += where.shape[0] * fun.numel()

    def extend(self, other: Stack) -> None:
        """Append ``other``'s blocks below this stack's."""
        for b in other.blocks:
            self.blocks.append(Block(b.fun, b.u, b.q, b.U, b.Q, b.where, self.size + b.row))
        self.size += other.size

    def value(self) -> cs.MX:
        return cs.vertcat(*[cs.vec(b.mapped([b.fun], [], [])[0]) for b in self.blocks])

    def jacobian(self, ncols: int) -> cs.MX:
        """``dv/dw`` (``size x ncols``, sparse)."""
        vals, rows, cols = [], [], []
        for b in self.blocks:
            J = cs.jacobian(b.fun, b.u)
            m = b.fun.numel()
            vals.append(cs.vec(b.mapped([cs.vertcat(*J.nonzeros())], [], [])[0]))
            r, c = b.places(J.sparsity(), lambda i, k, b=b, m=m: b.row + i * m + k)
            rows.append(r)
            cols.append(c)
        return scatter(
            cs.vertcat(*vals), np.concatenate(rows), np.concatenate(cols), (self.size, ncols)
        )

    def hessian(self, ncols: int, lam: cs.MX | None = None, sigma: cs.MX | None = None) -> cs.MX:
        """The upper triangle of ``d2/dw2 (lam^T v)``, or of ``sigma ||v||^2``."""
        vals, rows, cols = [], [], []
        for b in self.blocks:
            m = b.fun.numel()
            c = cs.SX.sym("c", m if lam is not None else 1)
            weighted = cs.dot(c, b.fun) if lam is not None else c * cs.sumsqr(b.fun)
            H = cs.hessian(weighted, b.u)[0]
            mult = cs.reshape(lam[b.row : b.row + b.n * m], m, b.n) if lam is not None else sigma
            vals.append(cs.vec(b.mapped([cs.vertcat(*H.nonzeros())], [c], [mult])[0]))
            r, k = b.places(H.sparsity(), None)
            rows.append(r)
            cols.append(k)
        r, k = np.concatenate(rows), np.concatenate(cols)
        upper = np.flatnonzero(r <= k)
        v = cs.vertcat(*vals)[upper.tolist()]
        return scatter(v, r[upper], k[upper], (ncols, ncols))


@dataclass
class Layout:
    """Where each experiment's unknowns sit in the NLP's vector ``w``."""

    symbols: list[cs.MX] = field(default_factory=list)
    guess: list[np.ndarray] = field(default_factory=list)
    size: int = 0

    def new(self, name: str, rows: int, cols: int, guess: np.ndarray) -> tuple[cs.MX, np.ndarray]:
        """A block of unknowns and the index of each of its entries (``rows x cols``)."""
        sym = cs.MX.sym(name, rows, cols)
        index = self.size + np.arange(rows * cols).reshape(cols, rows).T
        self.symbols.append(cs.vec(sym))
        self.guess.append(np.asarray(guess, dtype=float).ravel(order="F"))
        self.size += rows * cols
        return sym, index


def nlp_functions(w: cs.MX, g: Stack, res: Stack) -> tuple[cs.Function, cs.Function]:
    """The constraint Jacobian ``(w, p) -> (g, dg/dw)`` and the Hessian of the Lagrangian
    ``(w, p, sigma, lam) -> triu(d2/dw2 (sigma ||r||^2 + lam^T g))`` for IPOPT, both
    assembled from the mapped per-piece ones."""
    p, sigma, lam = cs.MX.sym("p", 0), cs.MX.sym("sigma"), cs.MX.sym("lam", g.size)
    n = w.numel()
    jac_g = cs.Function("jac_g", [w, p], [g.value(), g.jacobian(n)], ["x", "p"], ["g", "jac_g_x"])
    hess = res.hessian(n, sigma=sigma) + g.hessian(n, lam=lam)
    hess_lag = cs.Function(
        "hess_lag", [w, p, sigma, lam], [hess], ["x", "p", "lam_f", "lam_g"], ["hess"]
    )
    return jac_g, hess_lag
