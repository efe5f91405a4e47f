"""Dynamic state selection: a mechanism runs through the dead points of its state choice.

A loop of nonlinear position constraints ``g(q) = 0`` (a slider-crank, a four-bar) has no
state choice that is regular everywhere: the coordinates solved from ``g`` (the dummies'
predecessors ``q_d``) are determined only while ``J = dg/dq_d`` is regular, and a crank's
wrist or a rocker's extreme position makes it singular. The compiler keeps the other
choices the same index reduction allows (``model.ir.alternatives``, one per coordinate of
such a loop kept as a state); this runner integrates with one choice and measures, at
every output time, each choice's regularity at the current point,

    h = |det J| / prod_i |G_i|       (0: singular; 1: the chosen columns are the rows' all),

where ``J = dg/dq_d`` and ``G = dg/dq`` (row ``G_i``: the gradient of constraint ``i``
with respect to every coordinate), taken from the first-derivative level of the choice
(``d/dt g = g_q q'``: the columns of the speeds ``q'`` are those of ``dg/dq``); a
pendulum's ``x^2 + y^2 = L^2`` gives ``h = |x| / L`` for ``x`` solved, ``|y| / L`` for
``y``. It switches (as Dymola and OpenModelica do, at an output time rather than a located
root: the trajectory is the same in every set, only its coordinates change) when the
current set's ratio has fallen below ``1/SWITCH`` of the best one's. The new set's states
are read from the named values at that time, its Newton unknowns re-solved. If IDAS fails
before a switch was seen, the run goes back to the last output time and switches there.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple

import casadi as cs
import numpy as np

from acausal import Model, StructureError

from .buffers import mapped_call, numeric_call
from .functions import DAEFunctions, idas_options
from .initialize import z_names

SWITCH = 3.0  # switch when another choice is this many times more regular
# The run starts with one piece over the whole grid: every restart of IDAS begins again at
# order 1 with a tiny step, and at tight tolerances a restart can make IDAS crawl (the
# two-bar actuator at rtol 1e-10: 425,000 steps for 1 s, every one failing the error test
# once, against 0.2 s for the whole 10 s uninterrupted), so a run that never needs a switch
# is one IDAS call. Near a dead point the pieces are short (FIRST_CHUNK after a switch,
# quartered while the regularity falls, one interval after a failure).
FIRST_CHUNK = 8  # output intervals integrated at once after a switch (doubled after)
# IDAS steps per output interval before a piece is given up (a dead point makes IDAS take
# its maximum number of steps, 100,000 by default, before it fails: seconds); a piece of one
# interval that fails with no better choice at hand is retried with the maximum
QUICK = 5_000
RESCUE = 1.5  # after an IDAS failure: switch to a choice this much more regular, if any
LOCKED = 1e-3  # every choice this far below the run's best ratio: the loop is locked


class StateSets:
    """The model's state choices (its own first, then ``ir.alternatives``), their
    regularity at points given by the loops' coordinates (``positions``: their places in
    ``model.names``), and each choice's model (built on first use; one whose blocks are
    singular at the parameters is left out)."""

    def __init__(self, model: Model) -> None:
        ir = model.ir
        self.model = model
        self.sets = [ir.choices, *ir.alternatives]
        chain_names = [q for ch in ir.chains for q in ch]
        coords = ir.symbols.take(chain_names)
        hv = [len(ch) - 1 for ch in ir.chains]
        speeds = ir.syms([(v, 1) for v in range(len(hv)) if hv[v] >= 1])
        outs: list[tuple[cs.SX, cs.Sparsity] | None] = []
        for choices in self.sets:
            lowest = [ch for ch in choices if all(o == 1 for _, o in ch.candidates)]
            eqs = [e for ch in lowest for e in ch.equations]
            if not eqs:
                outs.append(None)
                continue
            res = ir.residuals[eqs]
            cols = ir.syms([c for ch in lowest for c in ch.dummies])
            jac = cs.jacobian(res, cols)
            rows = cs.sqrt(cs.sum2(cs.jacobian(res, speeds) ** 2))
            outs.append((cs.vertcat(*jac.nonzeros(), rows), jac.sparsity()))
        # the coordinates some choice's ratio depends on (the scan evaluates only those)
        used = np.zeros(len(chain_names), dtype=bool)
        for out in outs:
            if out is not None:
                used |= np.asarray(cs.which_depends(out[0], coords, 1, False), dtype=bool)
        keep = np.flatnonzero(used).tolist()
        self.positions = [model.check_name(chain_names[j]) for j in keep]
        args = [coords[keep] if keep else cs.SX(0, 1), model.p, model.t]
        self.jacobians: list[tuple[cs.Function, cs.Sparsity] | None] = [
            None if out is None else (cs.Function("J", args, [out[0]]), out[1]) for out in outs
        ]
        self.models: dict[int, Model | None] = {0: model}
        self._maps: dict[tuple[int, int], cs.Function] = {}  # (choice, points): mapped J

    def regularity(
        self, coords: np.ndarray, p: np.ndarray, t: np.ndarray, which: list[int]
    ) -> np.ndarray:
        """The Hadamard ratios (points x ``which``) of choices ``which`` at the points whose
        loop coordinates are ``coords`` (``positions`` x points), at times ``t``; 0 for a
        choice that cannot be built."""
        n = coords.shape[1]
        out = np.ones((n, len(which)))
        for col, k in enumerate(which):
            if self.models.get(k, 0) is None:
                out[:, col] = 0.0
            elif self.jacobians[k] is not None:
                out[:, col] = self._hadamard(k, coords, p, t)
        return out

    def _hadamard(self, k: int, coords: np.ndarray, p: np.ndarray, t: np.ndarray) -> np.ndarray:
        fun, sparsity = self.jacobians[k]
        n = coords.shape[1]
        times = np.broadcast_to(np.atleast_1d(t), (n,))[None, :]
        (out,) = mapped_call(fun, [coords, p, times], 1, self._maps, k)
        nnz = sparsity.nnz()
        norms = np.prod(out[nnz:], axis=0)
        det = abs_det(sparsity, out[:nnz])
        return np.where(norms > 0, det / np.where(norms > 0, norms, 1.0), 0.0)

    def model_of(self, k: int) -> Model | None:
        if k not in self.models:
            try:
                self.models[k] = self.model.with_states(k - 1)
            except StructureError:
                self.models[k] = None
        return self.models[k]


class Piece(NamedTuple):
    """The grid's points ``first, first + 1, ...`` as integrated with state choice
    ``choice``: its states ``x`` and Newton unknowns ``z`` there (a column per point)."""

    choice: int
    first: int
    x: np.ndarray
    z: np.ndarray


def abs_det(sparsity: cs.Sparsity, nonzeros: np.ndarray) -> np.ndarray:
    """``|det J|`` of square matrices of pattern ``sparsity`` at many points (``nonzeros``:
    their nonzeros, CasADi's order, x points): the product of the ``|det|`` of the diagonal
    blocks of the pattern's block-triangular form (permuting rows and columns changes only
    the sign), a 1 x 1 block being its entry; zero for a structurally singular pattern."""
    n, points = sparsity.size1(), nonzeros.shape[1]
    if cs.sprank(sparsity) < n:
        return np.zeros(points)
    nb, rowperm, colperm, rowblock, colblock, *_ = sparsity.btf()
    rows, cols = (np.asarray(a) for a in sparsity.get_triplet())
    at_row, at_col = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    at_row[rowperm], at_col[colperm] = np.arange(n), np.arange(n)
    block_of = np.repeat(np.arange(nb), np.diff(rowblock))  # by permuted row
    r, c = at_row[rows], at_col[cols]
    det = np.ones(points)
    for b in range(nb):
        first, size = rowblock[b], rowblock[b + 1] - rowblock[b]
        mine = np.flatnonzero((block_of[r] == b) & (c >= colblock[b]) & (c < colblock[b + 1]))
        if size == 1:  # its one entry
            det *= np.abs(nonzeros[mine[0]])
            continue
        dense = np.zeros((points, size * size))
        dense[:, (r[mine] - first) * size + c[mine] - colblock[b]] = nonzeros[mine].T
        det *= np.abs(np.linalg.det(dense.reshape(points, size, size)))
    return det


class DynamicRun:
    """A plain run (no events, no sensitivities) of ``functions.model`` on ``grid`` that
    switches state sets; ``initial_values(p)`` gives the model's consistent ``(x0, z0)``.

    The named variables are made only where a choice's own variables cannot say them: at a
    switch (the new states are read by name), and on the whole grid when the run switched
    (its pieces then hold different unknowns); the scan for dead points evaluates just
    the loops' coordinates."""

    def __init__(
        self,
        functions: DAEFunctions,
        grid: np.ndarray,
        tolerances: tuple[float, float, int],
        initial_values: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    ) -> None:
        self.model, self.grid = functions.model, grid
        self.tolerances, self.initial_values = tolerances, initial_values
        self.functions: dict[int, DAEFunctions] = {0: functions}
        # (choice, points) or (("coordinates", choice), points): mapped outputs
        self._maps: dict[tuple[object, int], cs.Function] = {}
        self.switches: list[tuple[float, tuple[str, ...]]] = []
        self.pieces: list[Piece] = []  # the run so far (what a failure keeps)
        self.at: tuple[int, np.ndarray, np.ndarray, float] = (0, np.zeros(0), np.zeros(0), 0.0)
        self.h_checked = np.inf  # the current choice's ratio when the others were looked at
        self.h_max = 0.0  # the largest ratio of a current choice in this run

    @cached_property
    def sets(self) -> StateSets:
        """The state choices, built on the first run (not with the simulator)."""
        return StateSets(self.model)

    def _functions(self, k: int) -> DAEFunctions:
        if k not in self.functions:
            self.functions[k] = DAEFunctions(self.sets.model_of(k))
        return self.functions[k]

    def run(self, p: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
        """``(X, Z, None)``: the model's states and Newton unknowns on the grid, when the
        run kept its own states throughout; else ``(None, None, Y)``, every named variable
        on the grid (names x times)."""
        grid, (rtol, atol, max_steps) = self.grid, self.tolerances
        cur, (x, z) = 0, self.initial_values(p)
        t, k = float(grid[0]), 0
        chunk = len(grid) - 1
        self.switches, self.h_checked, self.h_max = [], np.inf, 0.0
        self.pieces, self.at = [Piece(0, 0, x[:, None], z[:, None])], (cur, x, z, t)
        patient = False  # a piece first gets QUICK steps per output interval
        while k < len(grid) - 1:
            fun = self._functions(cur)
            tout = np.concatenate([[t], grid[k + 1 : k + 1 + chunk]])
            opts = idas_options(tout, rtol, atol, max_steps if patient else QUICK)
            opts["init_xdot"] = numeric_call(fun.rates, [x, z, p, t], 1)[0].ravel()
            piece = cs.integrator("piece", "idas", fun.spec(), t, tout, opts)
            try:
                xs, zs = numeric_call(piece, [x, z, p], 2)  # x0, z0, p -> xf, zf
            except RuntimeError:
                if chunk > 1:  # find the last output time before the failure
                    chunk = 1
                    continue
                best = self._best(self._coords_here(p)[:, 0], p, t, cur, RESCUE)
                if best is None and patient:
                    raise
                if best is None:  # no other choice is better: let IDAS work harder
                    patient = True
                    continue
                cur, x, z = self._switch(best, p)
                continue
            patient = False
            xs, zs = xs[:, 1:], zs[:, 1:]  # past t
            taken, best, falling = self._scan(cur, xs, zs, p, tout[1:])
            self.pieces.append(Piece(cur, k + 1, xs[:, :taken], zs[:, :taken]))
            k += taken
            t, x, z = float(grid[k]), xs[:, taken - 1], zs[:, taken - 1]
            self.at = (cur, x, z, t)
            if best is not None:
                cur, x, z = self._switch(best, p)
                chunk = FIRST_CHUNK
            else:  # shorter pieces while nearing a dead point: seen before IDAS fails
                chunk = max(1, chunk // 4) if falling else 2 * chunk
        if not self.switches:
            return (
                np.hstack([q.x for q in self.pieces]),
                np.hstack([q.z for q in self.pieces]),
                None,
            )
        return None, None, self._named(p)

    def _named(self, p: np.ndarray) -> np.ndarray:
        """Every named variable (names x points) on the grid points the run has reached."""
        grid = self.grid
        parts = [
            self._outputs(q.choice, q.x, q.z, p, grid[q.first : q.first + q.x.shape[1]])
            for q in self.pieces
        ]
        return np.hstack(parts)

    def _outputs(
        self, k: int, xs: np.ndarray, zs: np.ndarray, p: np.ndarray, times: np.ndarray
    ) -> np.ndarray:
        """Every named variable (names x points) of choice ``k``'s solution ``xs``, ``zs``."""
        fun = self._functions(k).outputs
        return mapped_call(fun, [xs, zs, p, np.reshape(times, (1, -1))], 1, self._maps, k)[0]

    def _coords(
        self, k: int, xs: np.ndarray, zs: np.ndarray, p: np.ndarray, times: np.ndarray
    ) -> np.ndarray:
        """The loops' coordinates (``sets.positions`` x points) of choice ``k``'s solution."""
        fun = self._functions(k).named(self.sets.positions)
        args = [xs, zs, p, np.reshape(times, (1, -1))]
        return mapped_call(fun, args, 1, self._maps, ("coordinates", k))[0]

    def _coords_here(self, p: np.ndarray) -> np.ndarray:
        """The loops' coordinates (``sets.positions`` x 1) at the current point ``self.at``."""
        cur, x, z, t = self.at
        return self._coords(cur, x[:, None], z[:, None], p, [t])

    def explain(self, p: np.ndarray) -> tuple[str, np.ndarray, np.ndarray]:
        """After a failure: what the state choices looked like at the last output time
        reached, and the trajectory up to it ``(text, times, named values)``."""
        cur, _, _, t = self.at
        every = list(range(len(self.sets.sets)))
        h = self.sets.regularity(self._coords_here(p), p, np.array([t]), every)[0]
        others = np.delete(h, cur)
        states = ", ".join(self.sets.model_of(cur).states)
        best = f"{others.max():.2g}" if others.size else "none"
        text = (
            f"at t = {t:.6g}, the last output time reached, the states {states} have "
            f"regularity {h[cur]:.2g} (|det| of the loop's Jacobian over its rows' norms; "
            f"{self.h_max:.2g} at best in this run) and the best other choice {best}: "
            + (
                "no choice of the loop's coordinates determines the others there (a locked "
                "or toggle position: check the geometry and the start values)"
                if max(h[cur], others.max(initial=0.0)) < LOCKED * self.h_max
                else "the failure is not a dead point of the states (check the model's "
                "stiffness, its parameters and rtol/atol near that time)"
            )
            + "; the trajectory up to then is in the error's result"
        )
        values = self._named(p)
        return text, self.grid[: values.shape[1]], values

    def _scan(
        self, cur: int, xs: np.ndarray, zs: np.ndarray, p: np.ndarray, times: np.ndarray
    ) -> tuple[int, int | None, bool]:
        """``(taken, best, falling)``: the output points of a piece of choice ``cur``
        (solution ``xs``, ``zs`` at ``times``) kept, up to the first where another choice is
        ``SWITCH`` times more regular than ``cur``; the choice to switch to there (None:
        keep ``cur``); and whether the current one's ratio halved over the piece. The
        others are looked at where the current one's ratio has halved since they were last
        looked at."""
        coords = self._coords(cur, xs, zs, p, times)
        h_cur = self.sets.regularity(coords, p, times, [cur])[:, 0]
        self.h_max = max(self.h_max, float(h_cur.max()))
        falling = bool(h_cur[-1] < h_cur[0] / 2)
        for j, h in enumerate(h_cur):
            if h < self.h_checked / 2:
                self.h_checked = h
                best = self._best(coords[:, j], p, float(times[j]), cur, SWITCH)
                if best is not None:
                    return j + 1, best, falling
        return xs.shape[1], None, falling

    def _best(
        self, coords: np.ndarray, p: np.ndarray, t: float, cur: int, factor: float = 1.0
    ) -> int | None:
        """The most regular choice at the point of loop coordinates ``coords`` if it is more
        than ``factor`` times as regular as the current one ``cur`` (and can be built),
        else None."""
        every = list(range(len(self.sets.sets)))
        h = self.sets.regularity(coords[:, None], p, np.array([t]), every)[0]
        best = int(np.argmax(h))
        while best != cur and self.sets.model_of(best) is None:
            h[best] = 0.0
            best = int(np.argmax(h))
        return best if best != cur and h[best] > factor * h[cur] else None

    def _switch(self, k: int, p: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """Continue with choice ``k`` at the current point (``self.at``): its states read
        from the named values there, its Newton unknowns re-solved from them as guesses."""
        cur, x, z, t = self.at
        values = self._outputs(cur, x[:, None], z[:, None], p, [t])[:, 0]
        model = self.sets.model_of(k)
        x = values[[model.check_name(q) for q in model.x_names]]
        z = values[[model.check_name(q) for q in z_names(model)]]
        if z.size:
            solve = self._functions(k).algebraic_solver("z_after_switch")
            z = solve(z, x, p, t).full().ravel()
        self.switches.append((t, tuple(model.states)))
        self.h_checked = np.inf
        self.at = (k, x, z, t)
        return k, x, z
