"""What the feasibility checks share: findings, the context of a check, parameter values,
sympy symbols, a component's variables along a trajectory, the sampled box of operating
points and expressions evaluated (and their zeros located) on it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import casadi as cs
import numpy as np
import sympy as sp
from scipy.optimize import brentq

from acausal.symbols import derivative_name

from .constitutive import Constitutive

DEFAULT_HALF_WIDTH = 10.0  # box half-width without a trajectory


@dataclass
class Finding:
    """One result of a check: ``severity`` is ``"error"`` (a condition fails), ``"warning"``
    (could not be shown), ``"ok"`` or ``"info"``; ``data`` holds the numbers."""

    check: str  # "prop3.1", "dissipativity", "block", "simulation", "structure", "setup"
    severity: str
    message: str
    component: str | None = None
    data: dict = field(default_factory=dict)
    advice: str = ""


@dataclass
class Context:
    """What every check needs: parameter values, the trajectory, the box, sample count."""

    values: dict[str, float]  # parameter value by full name and by its symbol's name
    result: object | None  # solvers.Result or None
    box: Mapping | None
    samples: int
    t_range: tuple[float, float]

    def param_value(self, sym: cs.SX) -> float:
        return float(self.values[sym.name()])


# -- helpers ------------------------------------------------------------------------------
def at_values(expr: cs.SX, ctx: Context) -> cs.SX:
    """``expr`` with every parameter replaced by its value."""
    params = [s for s in cs.symvar(expr) if s.name() != "time" and _is_param(s)]
    if not params:
        return expr
    vals = cs.DM([ctx.param_value(s) for s in params])
    return cs.substitute(expr, cs.vertcat(*params), vals)


def _is_param(sym: cs.SX) -> bool:
    """A component's parameter (see :mod:`acausal.symbols` for how symbols are named)."""
    return sym.name().startswith("@p")


def real_symbol(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


def namer(sym: cs.SX) -> sp.Symbol:
    """A component's symbol by its local name (``@p<token>:R`` -> ``R``), others as named."""
    name = sym.name()
    if name.startswith("@"):
        return real_symbol(name.partition(":")[2])
    return real_symbol(name)


def sample_points(ranges: list[tuple[float, float]], n: int) -> np.ndarray:
    """A grid (one or two variables) or seeded uniform samples (more): d x N."""
    d = len(ranges)
    if d == 0:
        return np.zeros((0, 1))
    if d == 1:
        return np.linspace(*ranges[0], max(n, 3))[None, :]
    if d == 2:
        m = max(int(np.sqrt(n)), 3)
        grids = np.meshgrid(*(np.linspace(lo, hi, m) for lo, hi in ranges))
        return np.vstack([g.ravel() for g in grids])
    rng = np.random.default_rng(0)
    return np.vstack([rng.uniform(lo, hi, n) for lo, hi in ranges])


def evaluate(expr: cs.SX, syms: list[cs.SX], points: np.ndarray) -> np.ndarray:
    """A scalar expression of ``syms`` at the columns of ``points``."""
    fun = cs.Function("f", [cs.vertcat(*syms)] if syms else [cs.SX(0, 1)], [expr])
    n = points.shape[1]
    return np.asarray(fun.map(n)(points)).ravel()


def point_text(labels: list[str], point: np.ndarray) -> str:
    return ", ".join(f"{lb} = {v:.4g}" for lb, v in zip(labels, point))


def vanishing(values: np.ndarray) -> tuple[bool, int]:
    """(does it vanish: a sign change or an exact zero among the samples, index nearest 0)."""
    finite = np.isfinite(values)
    if not finite.any():
        return True, 0
    v = np.where(finite, values, np.nan)
    k = int(np.nanargmin(np.abs(v)))
    scale = float(np.nanmax(np.abs(v)))
    changes = bool(np.nanmin(v) < 0 < np.nanmax(v))
    return changes or abs(v[k]) <= 1e-12 * max(scale, 1e-300), k


def trajectory(con: Constitutive, result: object) -> dict[str, np.ndarray]:
    """Values of each variable of the relations along the result; a derivative of a
    connector variable is the result's own (:func:`rate`), by finite differences only where
    the model has none."""
    a, b = con.connectors
    fl, pt = con.flow, con.potential
    if con.template == 1:
        base = {"f": ((1, f"{a}.{fl}"),), "x": ((1, f"{a}.{pt}"), (-1, f"{b}.{pt}"))}
    elif con.template == 2:
        base = {"f": ((1, f"{a}.{fl}"), (1, f"{b}.{fl}")), "x": ((1, f"{a}.{pt}"),)}
    else:
        base = {
            k: ((1, f"{c}.{v}"),)
            for k, c, v in (("f_a", a, fl), ("f_b", b, fl), ("x_a", a, pt), ("x_b", b, pt))
        }
    t = np.asarray(result.t, dtype=float)
    out = {}
    for label in con.variables():
        if label == "time":
            out[label] = t
            continue
        key, order = con.roles[label]
        out[label] = sum(sign * rate(result, name, order) for sign, name in base[key])
    return out


def rate(result: object, name: str, order: int) -> np.ndarray:
    """The ``order``-th time derivative of variable ``name`` along ``result``.

    Exact where the model knows it: ``der(name)`` itself, or through the alias
    ``name = sign * r + c`` (``c`` constant) as ``sign * der(r)``, or zero for a constant.
    Otherwise finite differences of the values (second order, :func:`numpy.gradient`),
    which at a mode switch (a kink) are off by the jump of the slope.
    """
    model = result.model
    name = model.flat.aliases.get(name, name)
    if order == 0 or derivative_name(name, order) in model:
        return np.asarray(result[derivative_name(name, order)], dtype=float)
    alias = model.reduced.eliminated.get(name)
    if alias is not None:
        sign, root, _ = alias
        if root is None:
            return np.zeros(len(result.t))
        return sign * rate(result, root, order)
    t = np.asarray(result.t, dtype=float)
    values = rate(result, name, order - 1)
    return np.gradient(values, t) if len(t) > 2 else np.zeros_like(values)


def box_ranges(con: Constitutive, ctx: Context, traj: dict | None) -> dict[str, tuple]:
    """The sampled box per variable: the user's ``box`` (by label, or by component name
    then label), else +-2x the largest value along the trajectory (at least +-1), else
    +-10; time spans the simulated interval."""
    user: dict = {}
    for key, value in (ctx.box or {}).items():
        if isinstance(value, Mapping):
            if key == con.component.full_name:
                user.update(value)
        else:
            user.setdefault(key, value)
    out = {}
    for label in con.variables():
        if label in user:
            lo, hi = user[label]
        elif label == "time":
            lo, hi = ctx.t_range
        elif traj is not None:
            half = max(1.0, 2.0 * float(np.max(np.abs(traj[label]))))
            lo, hi = -half, half
        else:
            lo, hi = -DEFAULT_HALF_WIDTH, DEFAULT_HALF_WIDTH
        out[label] = (float(lo), float(hi))
    return out


def box_zeros(
    partial: cs.SX, con: Constitutive, ranges: dict[str, tuple], samples: int, data: dict
) -> tuple[bool, str, int]:
    """Does ``partial`` vanish on the box (over the variables it depends on)? Returns
    (vanishes, where as text, number of samples); in one variable each sign change is
    refined to a root (Brent) and recorded in ``data["box_zeros"]``."""
    used = [v for v in ranges if cs.depends_on(partial, con.symbol(v))]
    syms = [con.symbol(v) for v in used]
    points = sample_points([ranges[v] for v in used], samples)
    values = evaluate(partial, syms, points)
    data["box"] = {v: ranges[v] for v in used}
    data["box_min_abs"] = float(np.nanmin(np.abs(values)))
    hit, j = vanishing(values)
    if not hit:
        return False, "", points.shape[1]
    if len(used) == 1:
        fun = cs.Function("d", [syms[0]], [partial])
        grid, vals = points[0], values
        flips = np.nonzero(np.sign(vals[:-1]) * np.sign(vals[1:]) < 0)[0][:8]
        roots = [brentq(lambda z: float(fun(z)), grid[k], grid[k + 1]) for k in flips]
        roots += [float(grid[k]) for k in np.nonzero(vals == 0)[0][:8]]
        if roots:
            data["box_zeros"] = {used[0]: sorted(roots)}
            return True, f"{used[0]} = " + ", ".join(f"{r:.4g}" for r in sorted(roots)), len(grid)
    return True, point_text(used, points[:, j]), points.shape[1]
