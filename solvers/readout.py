"""Reading named variables from a solution on a grid, without evaluating all of them.

A model's named outputs ``y = Y(w, p, t)``, ``w = (x, z)`` its states and Newton unknowns,
fall in two kinds, found from the expressions' structure (once per name, when first read):

* a *row* of the solution: ``y_k = s_k w_j + c_k`` with constants ``s_k != 0`` and ``c_k``
  (a state, a Newton unknown, or an alias of one: ``R1.n.v = C1.v``, ``C1.n.i = -C1.i``),
  i.e. ``Y_k`` depends on ``w_j`` alone, on neither ``p`` nor ``t``, and ``dY_k/dw_j``
  is a constant (then ``c_k = Y_k(0)``);
* *computed*: anything else (an explicitly solved variable, a derivative), evaluated by a
  CasADi function of the solution columns it depends on, at each output time.

A row costs one numpy multiply-add; a computed variable one small function, built on first
use and kept (per model: a :class:`Readout` belongs to a :class:`~solvers.DAEFunctions`,
so every result of one simulator shares it); reading one variable of a large model looks at
that one only. All of them at once go through one function of the computed variables,
evaluated into numpy arrays through CasADi's buffers (no Python lists of floats).
"""

from __future__ import annotations

from collections.abc import Sequence

import casadi as cs
import numpy as np

from acausal import Model
from acausal.structure.graph import incidence

from .buffers import on_grid


class Readout:
    """Which named variables are rows of ``w = (x, z)`` (:attr:`source`, :attr:`sign`,
    :attr:`offset`) and functions for the others, by their position in ``model.names``."""

    def __init__(self, model: Model) -> None:
        self.model = model
        dae = model.dae
        y, x, z = model.outputs, cs.SX(dae.x), cs.SX(dae.z)
        self._y = y if y.is_dense() else cs.densify(y)  # (copies even a dense one)
        self._w = cs.vertcat(x, z) if z.numel() else x
        ny = self._y.numel()
        #: per name: the row of ``w`` it is (-1 for a computed one), its sign and offset;
        #: known for the names read so far (:meth:`_classify`)
        self.source = np.full(ny, -1)
        self.sign = np.zeros(ny)
        self.offset = np.zeros(ny)
        self._classified = np.zeros(ny, dtype=bool)
        self._deps: dict[int, np.ndarray] = {}  # a computed name -> the rows of w it reads
        self._functions: dict[tuple[int, ...], tuple[cs.Function, np.ndarray]] = {}
        self._rows_of: dict[int, int] | None = None  # a symbol of w (by hash) -> its row
        self._constant: frozenset[int] = frozenset()  # the symbols of p and t (by hash)
        self._lookups = 0  # names looked up by a sparsity pass (:meth:`_places`)

    def _classify(self, which: np.ndarray) -> None:
        """Find which of the names at positions ``which`` not looked at before are rows of
        ``w`` (the module docstring), all of them by a few whole-vector CasADi calls."""
        new = np.sort(which[~self._classified[which]])  # the work in the names asked only
        if not new.size:
            return
        new = new[np.concatenate([[True], new[1:] != new[:-1]])]  # (numpy 2's np.unique: slow)
        if new.size <= FEW:
            for k in new.tolist():
                self._classify_one(k)
            self._classified[new] = True
            return
        model, w = self.model, self._w
        y = self._y[new.tolist()]
        on_w = incidence(y, w)
        single = (np.diff(on_w.indptr) == 1) & ~depends(y, cs.vertcat(model.p, model.t))
        rows = np.flatnonzero(single)
        if rows.size:  # keep those whose derivative in their one unknown is a constant
            src = on_w.indices[on_w.indptr[rows]]  # other than 0 (a comparison: no row)
            y_rows = y[rows.tolist()]
            jac = cs.jacobian(y_rows, w)  # at most one entry per row
            held = np.asarray(jac.sparsity().get_triplet()[0], dtype=np.int64)
            order = np.argsort(held, kind="stable")
            slope = jac.nz[order.tolist()] if order.size else cs.SX(0, 1)
            constant = np.flatnonzero(~depends(slope, cs.vertcat(w, model.p, model.t)))
            value = np.asarray(cs.evalf(slope[constant.tolist()])).ravel()
            keep = held[order][constant[value != 0.0]]  # places in rows
            at = new[rows[keep]]
            self.source[at] = src[keep]
            self.sign[at] = value[value != 0.0]
            at_zero = cs.substitute(y_rows[keep.tolist()], w, cs.DM.zeros(w.numel()))
            self.offset[at] = np.asarray(cs.evalf(at_zero)).ravel()
        for k in np.flatnonzero(self.source[new] < 0).tolist():
            self._deps[int(new[k])] = on_w.indices[on_w.indptr[k] : on_w.indptr[k + 1]]
        self._classified[new] = True

    def _classify_one(self, k: int) -> None:
        """:meth:`_classify` of name ``k`` alone, in the symbols its expression holds
        (``symvar``, a superset of what it depends on: a comparison's operand counts):
        the cost of that expression, not of the model (the whole-vector calls cost a pass
        over every symbol of ``w`` and ``p``: a tenth of a second per name read at 10,000
        states)."""
        y = self._y[k]
        held = cs.symvar(y)
        rows, fixed = self._places(held)
        if len(rows) == 1 and not fixed:
            wj = self._w[rows[0]]
            slope = cs.jacobian(y, wj)
            if slope.is_constant() and float(cs.evalf(slope)) != 0.0:  # (0: a comparison)
                self.source[k] = rows[0]
                self.sign[k] = float(cs.evalf(slope))
                self.offset[k] = float(cs.evalf(cs.substitute(y, wj, cs.DM(0.0))))
                return
        self._deps[k] = np.asarray(rows, dtype=np.int64)

    def _places(self, held: list[cs.SX]) -> tuple[list[int], bool]:
        """The rows of ``w`` that the symbols ``held`` are (sorted), and whether any of them
        is a parameter or time. The first :data:`LOOKUPS` names read alone are looked up by
        a sparsity pass over ``w`` (a few milliseconds at 100,000 rows); after those, every
        symbol of ``w`` is put in a table by hash once (a second at 100,000) and each name
        costs its own symbols only."""
        if self._rows_of is None and self._lookups < LOOKUPS:
            self._lookups += 1
            if not held:
                return [], False
            them, model = cs.vertcat(*held), self.model
            rows = cs.jacobian_sparsity(them, self._w).get_triplet()[1]
            # (stacking p and t first would copy every parameter: 70,000 at a 10,000-mass chain)
            fixed = cs.depends_on(them, model.p) or cs.depends_on(them, model.t)
            return sorted(set(rows)), fixed
        if self._rows_of is None:
            self._rows_of = {s.element_hash(): j for j, s in enumerate(cs.vertsplit(self._w))}
            fixed = cs.vertsplit(cs.vertcat(self.model.p, self.model.t))
            self._constant = frozenset(s.element_hash() for s in fixed)
        hashes = [s.element_hash() for s in held]
        rows = sorted({self._rows_of[h] for h in hashes if h in self._rows_of})
        return rows, any(h in self._constant for h in hashes)

    def _function(self, which: tuple[int, ...], derivative: bool) -> tuple[cs.Function, np.ndarray]:
        """``(w_D, p, t) -> y_which`` and ``D``, the rows of ``w`` those outputs depend on;
        with ``derivative``, ``((w_D; dw_D), (p; dp), t) -> Y_w dw + Y_p dp``."""
        got = self._functions.get((which, derivative))
        if got is None:
            idx = list(which)
            read = np.zeros(self._w.numel(), dtype=bool)
            read[np.concatenate([self._deps[k] for k in idx])] = True
            deps = np.flatnonzero(read)
            wd, p, y = self._w[deps.tolist()], self.model.p, self._y[idx]
            if derivative:
                dw, dp = cs.SX.sym("dw", deps.size), cs.SX.sym("dp", p.numel())
                y = cs.jtimes(y, cs.vertcat(wd, p), cs.vertcat(dw, dp))
                wd, p = cs.vertcat(wd, dw), cs.vertcat(p, dp)
            fun = cs.Function("readout", [wd, p, self.model.t], [y])
            got = self._functions[(which, derivative)] = (fun, deps)
        return got

    def evaluate(
        self, which: Sequence[int], w: np.ndarray, p: np.ndarray, t: np.ndarray
    ) -> np.ndarray:
        """Named variables at positions ``which`` on the grid ``t``, an array
        ``(len(which), len(t))``, from the solution ``w`` (``(nx + nz, len(t))``) and the
        parameters ``p``: rows by ``s w_j + c``, the computed ones by one function of them
        all (kept for the next call with the same positions)."""
        return self._read(which, w, p, t, None)

    def derivative(
        self,
        which: Sequence[int],
        w: np.ndarray,
        p: np.ndarray,
        t: np.ndarray,
        dw: np.ndarray,
        dp: np.ndarray,
    ) -> np.ndarray:
        """The directional derivative ``dy = Y_w dw + Y_p dp`` of the named variables at
        positions ``which`` on the grid, for the solution's derivative ``dw`` (same shape
        as ``w``) and the parameters' ``dp``: ``s dw_j`` for a row."""
        return self._read(which, w, p, t, (dw, dp))

    def _read(
        self,
        which: Sequence[int],
        w: np.ndarray,
        p: np.ndarray,
        t: np.ndarray,
        seeds: tuple[np.ndarray, np.ndarray] | None,
    ) -> np.ndarray:
        which = np.asarray(which, dtype=int)
        self._classify(which)
        out = np.empty((which.size, t.size))
        src = self.source[which]
        rows = src >= 0
        sign = self.sign[which[rows], None]
        if seeds is None:
            out[rows] = sign * w[src[rows]] + self.offset[which[rows], None]
        else:
            out[rows] = sign * seeds[0][src[rows]]
        if not np.all(rows):
            fun, deps = self._function(tuple(which[~rows].tolist()), seeds is not None)
            if seeds is None:
                out[~rows] = on_grid(fun, w[deps], p, t)
            else:
                dw, dp = seeds
                stacked = np.concatenate([w[deps], dw[deps]])
                out[~rows] = on_grid(fun, stacked, np.concatenate([p, dp]), t)
        return out


#: Names classified one by one (:meth:`Readout._classify_one`) up to this many at a time.
FEW = 64
#: Names read alone before the symbols of ``w`` are tabled (:meth:`Readout._places`).
LOOKUPS = 16


def depends(expr: cs.SX, syms: cs.SX) -> np.ndarray:
    """Which entries of ``expr`` depend (structurally) on any of the symbols ``syms``: the
    sparsity of ``d expr / ds`` with every symbol shifted by one new symbol ``s`` (one
    column, where the full pattern in ``syms`` costs a pass per 64 of them: seconds for
    the 70,000 parameters of a 10,000-mass chain)."""
    if not syms.numel():
        return np.zeros(expr.numel(), dtype=bool)
    s = cs.SX.sym("s")
    shifted = cs.substitute(expr, syms, syms + s)
    return np.diff(incidence(shifted, s).indptr) > 0
