"""BLT blocks solved by Newton or as loops: can their Jacobian become singular?

For each such block the Jacobian ``J = d residuals / d unknowns`` is

- taken symbolically (sympy, parameters at their values): its determinant, factored, and
  the operating points where it vanishes (exact roots in one variable, else sampled);
- evaluated along the simulated trajectory: smallest singular value and condition number
  over time, sign changes of ``det J``, and at the worst time the unknowns its null vector
  leaves undetermined and the components whose equations carry the deficient combination
  (the left singular vector's weight on each component's equations).

A block whose equations read discrete modes (friction's stuck and sliding, a diode's off) is
a different block in each mode: the symbolic and sampled parts take it once per combination
of the values its modes had along the trajectory (without one: their start values, and 0 and
1 for relations), and a sign change of ``det J`` counts only between times with the same
modes (a switch changes the equations, not a root of one determinant).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from itertools import product

import casadi as cs
import numpy as np
import sympy as sp

import acausal as ac

from ..core import blas_threads
from . import sympy_bridge as sb
from .check_context import Finding, real_symbol, sample_points

MAX_SYMBOLIC = 6  # unknowns; larger blocks get the trajectory analysis only
MAX_MODE_COMBINATIONS = 64  # a block's modes' value combinations analysed one by one
NEAR_SINGULAR = 1e-8  # smallest / largest singular value


@dataclass
class BlockReport:
    """One block: its equations and unknowns, the determinant of its Jacobian, and the
    singular values along the trajectory; ``finding`` is its verdict."""

    index: int  # 1-based, as model.blt() prints it
    kind: str
    equations: list[str]
    unknowns: list[str]
    components: list[str]
    determinant: str | None = None
    zeros: dict = field(default_factory=dict)  # variable -> roots, or "sampled" points
    sigma_min: float | None = None
    cond_max: float | None = None
    t_worst: float | None = None
    null_unknowns: list[str] = field(default_factory=list)
    shares: dict[str, float] = field(default_factory=dict)  # component -> weight
    crossed: bool = False  # det J changes sign between output times
    finding: Finding | None = None
    states: str = ""  # the state set it belongs to, for a run that switched sets


def analysed_blocks(model: ac.Model) -> list[int]:
    """Blocks of more than one equation, and scalar blocks left to Newton."""
    return [k for k, b in enumerate(model.blocks) if len(b.equations) > 1 or b.kind == "newton"]


@blas_threads(1)
def check_blocks(
    model: ac.Model,
    p: np.ndarray,
    result: object | None,
    failed: bool,
    samples: int,
    laws: Collection[str] = (),
) -> list[BlockReport]:
    """A :class:`BlockReport` per analysed block (see the module docstring); ``laws`` names
    the components with constitutive laws (their blocks get advice about laws).

    A run that switched state sets (dynamic state selection) is checked piece by piece:
    each state set's blocks along the times it was used, labelled with its states. OpenBLAS
    runs on one thread meanwhile (:func:`~learning.core.blas_threads`): the blocks' Jacobians
    are small, and a batched SVD of them over the times took 3-6 s of CPU instead of 0.1 s
    with its threads spinning on a loaded machine."""
    pieces = [(model, None, None)] if result is None else state_set_pieces(model, result)
    switching = bool(model.ir.alternatives)
    simulated = (result is not None, failed)
    reports = []
    for part, t, columns in pieces:
        label = f"the states {', '.join(part.states)}" if len(pieces) > 1 else ""
        reports += _blocks(part, p, t, columns, simulated, samples, laws, switching, label)
    return reports


def state_set_pieces(
    model: ac.Model, result: object
) -> list[tuple[ac.Model, np.ndarray, np.ndarray]]:
    """``(model of the state set, times, columns)`` for each piece of ``result`` between
    state-set switches (one piece for a run that kept its states); ``columns`` as
    :func:`trajectory_columns` gives them for that set's model."""
    t = np.asarray(result.t, dtype=float)
    switches = list(result.state_switches)
    if not switches:
        return [(model, t, trajectory_columns(model, result))]
    models = {tuple(model.states): model}
    others = iter(range(len(model.ir.alternatives)))

    def model_with(states: tuple[str, ...]) -> ac.Model:
        """The alternative with these states (each built once, on demand)."""
        while states not in models:
            other = model.with_states(next(others))
            models[tuple(other.states)] = other
        return models[states]

    starts = [(t[0], tuple(model.states)), *switches]
    pieces = []
    for j, (t_on, states) in enumerate(starts):
        t_off = starts[j + 1][0] if j + 1 < len(starts) else np.inf
        rows = np.flatnonzero((t >= t_on) & (t < t_off))
        if rows.size:
            part = model_with(tuple(states))
            pieces.append((part, t[rows], trajectory_columns(part, result)[:, rows]))
    return pieces


def _blocks(
    model: ac.Model,
    p: np.ndarray,
    t: np.ndarray | None,
    columns: np.ndarray | None,
    simulated: tuple[bool, bool],
    samples: int,
    laws: Collection[str],
    switching: bool,
    label: str,
) -> list[BlockReport]:
    """The reports of ``model``'s blocks along times ``t`` (``columns``: the trajectory's
    values there, or None); ``simulated`` is (was there a run, did it fail)."""
    ir = model.ir
    xs = model.dae.x  # the states, then the discrete modes (as a result holds them)
    ys = ir.syms(ir.algebraic)
    modes = cs.vertsplit(xs)[len(ir.states) :]
    candidates = mode_values(model, modes, p, columns)
    reports = []
    for k in analysed_blocks(model):
        block = model.blocks[k]
        res = ir.residuals[list(block.equations)]
        y = ir.syms(block.unknowns)
        jac = cs.densify(cs.jacobian(res, y))
        sources = [ir.equations[r].source for r in block.equations]
        owners = [s.component or "connections" for s in sources]
        rep = BlockReport(
            k + 1,
            block.kind,
            [ir.equations[r].origin for r in block.equations],
            [model.describe(c) for c in block.unknowns],
            sorted({o for o in owners if o != "connections"}),
            states=label,
        )
        jac_p = cs.substitute(jac, model.p, cs.DM(p))
        symbolic, sampled = _per_mode(rep, jac_p, xs, ys, columns, samples, model, candidates)
        if columns is not None:
            _along(rep, jac, xs, ys, model, (t, p), columns, owners, len(modes))
        lawful = bool(set(rep.components) & set(laws))
        rep.finding = _verdict(rep, symbolic, sampled, *simulated, lawful, switching)
        reports.append(rep)
    return reports


def trajectory_columns(model: ac.Model, result: object) -> np.ndarray:
    """The states, the discrete modes and the algebraic columns (``model.ir``'s order), a
    row each along ``result``: from its ``(x, z)`` when it ran ``model`` without switching,
    else by name (a run that switched state sets keeps named values)."""
    ir, n = model.ir, len(result.t)
    if result.x is None or result.model is not model:
        names = model.x_names + [ir.name(c) for c in ir.algebraic]
        return np.vstack([np.asarray(result[name], dtype=float) for name in names])
    fun = cs.Function("values", [model.dae.x, model.dae.z, model.p, model.t], [model.dae.values])
    vals = fun.map(n)(result.x, result.z, result.p, np.asarray(result.t)[None, :]).full()
    return np.vstack([np.asarray(result.x).reshape(-1, n), vals])


def mode_values(
    model: ac.Model, modes: list[cs.SX], p: np.ndarray, columns: np.ndarray | None
) -> dict[str, list[float]]:
    """The values each discrete mode is checked at, by symbol name: those it had along the
    trajectory (rows after the states in ``columns``) and its start value; without a
    trajectory the start value, and 0 and 1 for a relation (a comparison with memory)."""
    values = dict(zip(model.parameters, np.asarray(p, dtype=float).ravel()))
    relations = {e.relation for e in model.flat.events if e.relation is not None}
    start = len(model.ir.states)
    out = {}
    for k, mode in enumerate(modes):
        name = model.symbol_name(mode)
        seen = {values[f"{name}_start"]} if f"{name}_start" in values else set()
        if columns is not None:
            seen |= set(np.round(columns[start + k], 6).tolist())  # IDAS moves them by 1e-27
        elif name in relations:
            seen |= {0.0, 1.0}
        out[mode.name()] = sorted(seen)
    return out


RANK = {"always": 3, "can vanish": 2, True: 2, None: 1, "never": 0, False: 0}


def _per_mode(
    rep: BlockReport,
    jac: cs.SX,
    xs: cs.SX,
    ys: cs.SX,
    columns: np.ndarray | None,
    samples: int,
    model: ac.Model,
    candidates: dict[str, list[float]],
) -> tuple[str | None, bool | None]:
    """The symbolic and sampled verdicts on ``jac`` (parameters substituted); a block that
    reads modes is analysed once per combination of their values, and the worst
    combination's determinant and zeros are kept, with the modes it holds in."""
    name = model.symbol_name

    def verdicts(report: BlockReport, jac: cs.SX) -> tuple[str | None, bool | None]:
        """Symbolic first; sampled where sympy cannot tell, for blocks small enough."""
        symbolic = _symbolic(report, jac, len(report.unknowns), name)
        if symbolic is None and len(report.unknowns) <= MAX_SYMBOLIC:
            return symbolic, _sampled(report, jac, xs, ys, columns, samples, name)
        return symbolic, None

    read = [s for s in cs.symvar(jac) if s.name() in candidates]
    combos = list(product(*(candidates[s.name()] for s in read)))
    if not read or not combos or len(combos) > MAX_MODE_COMBINATIONS:
        return verdicts(rep, jac)
    worst: tuple | None = None
    for combo in combos:
        trial = replace(rep, zeros={})
        symbolic, sampled = verdicts(trial, cs.substitute(jac, cs.vertcat(*read), cs.DM(combo)))
        rank = max(RANK[symbolic], RANK[sampled])
        if worst is None or rank > worst[0]:
            where = ", ".join(f"{name(s)} = {v:g}" for s, v in zip(read, combo))
            worst = (rank, symbolic, sampled, trial, where)
    _, symbolic, sampled, trial, where = worst
    rep.determinant = f"{trial.determinant or 'det J'} (in the mode {where})"
    rep.zeros = trial.zeros
    return symbolic, sampled


def _symbolic(rep: BlockReport, jac: cs.SX, n: int, name: Callable[[cs.SX], str]) -> str | None:
    """Determinant text and zeros; ``"never"``, ``"always"``, ``"can vanish"`` (real roots
    found), or None when sympy cannot tell."""
    if n > MAX_SYMBOLIC:
        return None
    try:
        mat = sb.to_sympy(jac, lambda s: real_symbol(name(s)))
    except sb.NotConvertible:
        return None
    if not isinstance(mat, sp.Matrix):
        mat = sp.Matrix([[mat]])
    if sum(sp.count_ops(e) for e in mat) > sb.MAX_OPS:
        rep.determinant = "(too large to show)"
        return None
    det = sp.expand(mat.det(method="berkowitz")) if n > 1 else sb.tidy(mat[0, 0])
    if not sb.small(det):
        rep.determinant = "(too large to show)"
        return None
    rep.determinant = sb.text(det)
    sign = sb.sign_of(det)
    if sign == 0:
        return "always"
    if sign is not None or not det.free_symbols:
        return "never"
    zeros = sb.real_zeros(det)
    if zeros is None:
        return None  # sympy cannot tell: sampled instead
    var, roots = zeros
    if not roots:
        return "never"
    rep.zeros = {str(var): [float(r) for r in roots]}
    return "can vanish"


def _sampled(
    rep: BlockReport,
    jac: cs.SX,
    xs: cs.SX,
    ys: cs.SX,
    columns: np.ndarray | None,
    samples: int,
    name: Callable[[cs.SX], str],
) -> bool | None:
    """Does ``det J`` change sign on a box around the trajectory's values (or +-10)?"""
    free = cs.symvar(jac)
    if not free:
        return None
    allsyms = cs.vertsplit(cs.vertcat(xs, ys))
    index = {s.name(): k for k, s in enumerate(allsyms)}
    ranges = []
    for s in free:
        k = index.get(s.name())
        if columns is not None and k is not None:
            half = max(1.0, 2.0 * float(np.max(np.abs(columns[k]))))
        else:
            half = 10.0
        ranges.append((-half, half))

    pts = sample_points(ranges, samples)
    fun = cs.Function("J", [cs.vertcat(*free)], [jac])
    n = jac.size1()
    mats = np.asarray(fun.map(pts.shape[1])(pts)).reshape(n, -1, n).transpose(1, 0, 2)
    dets = np.linalg.det(mats)
    finite = np.isfinite(dets)
    if not finite.any():
        return True
    d = dets[finite]
    hit = bool(d.min() < 0 < d.max())
    if hit:
        j = int(np.argmin(np.abs(np.where(finite, dets, np.inf))))
        names = [name(s) for s in free]
        rep.zeros = {"sampled": {nm: float(v) for nm, v in zip(names, pts[:, j])}}
    return hit


def _along(
    rep: BlockReport,
    jac: cs.SX,
    xs: cs.SX,
    ys: cs.SX,
    model: ac.Model,
    at: tuple[np.ndarray, np.ndarray],
    columns: np.ndarray,
    owners: list[str],
    n_modes: int = 0,
) -> None:
    """Singular values over time, and the culprits at the worst time; ``det J`` changing
    sign counts only between times with the same modes (the last ``n_modes`` rows of the
    states in ``columns``); ``at`` is (the times, the parameter values)."""
    t, p = at
    fun = cs.Function("J", [xs, ys, model.p, model.t], [jac])
    n_t = len(t)
    nx = xs.numel()
    n = jac.size1()
    out = fun.map(n_t)(columns[:nx], columns[nx:], p, np.asarray(t)[None, :])
    mats = np.asarray(out).reshape(n, n_t, n).transpose(1, 0, 2)
    finite = np.all(np.isfinite(mats), axis=(1, 2))
    if not finite.any():
        return
    u, s, vt = np.linalg.svd(np.where(finite[:, None, None], mats, 0.0))
    ratio = np.where(finite & (s[:, 0] > 0), s[:, -1] / np.where(s[:, 0] > 0, s[:, 0], 1), 0)
    w = int(np.argmin(ratio))
    rep.sigma_min = float(np.min(s[finite, -1]))
    rep.cond_max = float(1 / ratio[w]) if ratio[w] > 0 else float("inf")
    rep.t_worst = float(t[w])
    signs = np.sign(np.linalg.det(mats[finite]))
    held = np.round(columns[nx - n_modes : nx, finite], 6).T  # the modes at each time
    for combo in {tuple(row) for row in held}:
        same = signs[np.all(held == combo, axis=1)]
        rep.crossed = rep.crossed or bool(same.min() < 0 < same.max())
    null = np.abs(vt[w, -1])
    rep.null_unknowns = [rep.unknowns[j] for j in np.nonzero(null > 0.1 * null.max())[0]]
    left = u[w, :, -1] ** 2
    shares: dict[str, float] = {}
    for owner, weight in zip(owners, left):
        shares[owner] = shares.get(owner, 0.0) + float(weight)
    rep.shares = dict(sorted(shares.items(), key=lambda kv: -kv[1]))


def _verdict(
    rep: BlockReport,
    symbolic: str | None,
    sampled: bool | None,
    simulated: bool,
    failed: bool,
    lawful: bool,
    switching: bool = False,
) -> Finding:
    """The block's verdict; with ``switching`` (the model has other state sets) a zero of
    ``det J`` the trajectory does not come near is where dynamic state selection continues
    with other states: information, not a problem."""
    n = len(rep.equations)
    of = f" of {rep.states}" if rep.states else ""
    where = f"block {rep.index}{of} ({n} equation{'s' * (n > 1)}, {rep.kind}; components "
    where += ", ".join(rep.components or ["none"]) + ")"
    det = f"det J = {rep.determinant}" if rep.determinant else "det J"
    data = {"block": rep.index}
    culprits = [c for c, w in rep.shares.items() if w >= 0.2 and c != "connections"]
    near = rep.cond_max is not None and rep.cond_max > 1 / NEAR_SINGULAR
    crossed = rep.crossed
    along = ""
    if rep.sigma_min is not None:
        along = (
            f"; along the trajectory min sigma = {rep.sigma_min:.3g}, max condition number "
            f"{rep.cond_max:.3g} at t = {rep.t_worst:.4g}"
        )
        if culprits:
            along += f", carried by the equations of {', '.join(culprits)}"
    if symbolic == "always":
        return Finding("block", "error", f"{where}: {det} is identically zero", None, data)
    zeros = ""
    roots = rep.zeros
    if roots:
        zeros = " vanishes at " + "; ".join(
            f"{k} = {', '.join(f'{v:.4g}' for v in vals)}"
            if isinstance(vals, list)
            else "(sampled) " + ", ".join(f"{n} = {v:.4g}" for n, v in vals.items())
            for k, vals in roots.items()
        )
    can = symbolic == "can vanish" or sampled
    if not lawful:
        advice = (
            "these equations lose rank where det J = 0 (for a mechanism, a singular "
            "configuration such as a dead point): keep the operating range away from it or "
            "choose other states"
        )
    elif n == 1:
        advice = (
            f"{', '.join(rep.components) or 'this equation'} cannot be solved for "
            f"{rep.unknowns[0].split(' ')[0]} where det J = 0: make its law strictly monotone "
            "(constraint='feasible' or 'dissipative' for an Unknown, Props 4.1, 4.4)"
        )
    else:
        advice = (
            "the components of this loop cannot be solved together where det J = 0: make "
            "their laws strictly monotone with partial derivatives of one sign (Props 4.1, "
            "4.4), or give them states in between (small_capacitor=)"
        )
    if can or crossed or near:
        text = f"{where}: {det}{zeros or ' can vanish'}{along}"
        if switching and not (failed or crossed or near):
            text += "; where it does, dynamic state selection continues with other states"
            return Finding("block", "info", text, None, data)
        bad = not simulated or failed or crossed or near
        if not bad:
            text += " (the trajectory stays away from it)"
        return Finding("block", "error" if bad else "warning", text, None, data, advice)
    if symbolic == "never":
        return Finding("block", "ok", f"{where}: {det} never vanishes{along}", None, data)
    if sampled is not None:
        return Finding(
            "block", "ok", f"{where}: {det} has no zero in the sampled box{along}", None, data
        )
    return Finding("block", "ok", f"{where}: no singularity found{along}", None, data)
