"""Direct collocation of the whole DAE for ``fit(..., method="collocation")``.

For each experiment the time grid (its data times, from ``t_start``) is the mesh; every
mesh interval ``[t_k, t_k+1]`` is split into ``subintervals`` equal pieces of length ``h``,
each collocated with Radau IIA at ``degree`` points ``tau_1 < ... < tau_d = 1`` (order
``2 d - 1``: 5 for the default 3 points). The NLP, solved by IPOPT (:func:`casadi.nlpsol`):

- unknowns: the fitted parameters (shared by all experiments), and per experiment the
  states and Newton unknowns ``(x0, z0)`` at the start and ``(X_ij, Z_ij)`` at every
  collocation point;
- equality constraints: the initialization residual at ``t_start`` (the algebraic
  equations and the fixed start values, for the current parameters), the collocation
  equations ``sum_r D_jr X_ir = h ode(X_ij, Z_ij, p, t_ij)`` (``X_i0`` the piece's start),
  and ``alg(X_ij, Z_ij, p, t_ij) = 0`` at every point;
- objective: ``sum_j c_j sum_n (y_j(t_n) - ym_j(t_n))^2`` with ``y_j`` the model's output
  expression evaluated at the collocation point ``tau = 1`` that falls on ``t_n``: the same
  loss as the simulation methods, up to the collocation error;
- optionally (``options={"dissipative": True}``) ``power >= 0`` of every
  :class:`~learning.Unknown` at every collocation point: dissipativity sampled along the
  trajectory, for laws whose parameterization does not guarantee it.

The start guess is the parameters' start values and the trajectory simulated (IDAS) at
them on the collocation times. ``options``: ``max_iter`` (default 500), ``subintervals``
(default 1), ``degree`` (default 3), ``dissipative`` (default False), ``ipopt``: further
IPOPT options (default quiet: ``print_level`` 0, ``print_time`` false).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np

from acausal.errors import ModelError
from acausal.symbols import quantity_of
from solvers.capture import native_stderr
from solvers.simulate import _simulator

from .unknown import Unknown

KNOWN_OPTIONS = {"max_iter", "subintervals", "degree", "dissipative", "ipopt"}


@dataclass
class CollocationResult:
    """IPOPT's outcome: the parameter values and its status."""

    x: np.ndarray
    success: bool
    message: str
    n_iterations: int
    objective: float  # the collocated loss (IPOPT's objective at x)
    n_simulations: int  # simulations run for the start guess


def radau(degree: int) -> tuple[np.ndarray, np.ndarray]:
    """Radau IIA points ``tau_1..tau_d`` (``tau_d = 1``) and the derivative matrix ``D``
    (``d x (d + 1)``): ``D[j, r] = l_r'(tau_j+1)`` for the Lagrange basis on
    ``(0, tau_1, ..., tau_d)``."""
    tau = np.asarray(cs.collocation_points(degree, "radau"), dtype=float)
    nodes = np.concatenate([[0.0], tau])
    D = np.zeros((degree, degree + 1))
    for r in range(degree + 1):
        basis = np.poly1d([1.0])
        for m in range(degree + 1):
            if m != r:
                basis *= np.poly1d([1.0, -nodes[m]]) / (nodes[r] - nodes[m])
        D[:, r] = np.polyder(basis)(tau)
    return tau, D


def power_expressions(model: Any, system: Any) -> list[tuple[str, cs.SX]]:
    """``(name, power)`` of every :class:`Unknown` in ``system``, each power an expression
    of the model's ``(x, z, p, t)`` through the outputs of the variables it uses."""
    out = []
    for c in system.all_components():
        if not isinstance(c, Unknown):
            continue
        syms = cs.symvar(c.power)
        values = [model.outputs[model.check_name(quantity_of(s).name)] for s in syms]
        out.append((c.full_name, cs.substitute(c.power, cs.vertcat(*syms), cs.vertcat(*values))))
    return out


def _experiment_nlp(
    e: Any,
    names: Sequence[str],
    theta: cs.SX,
    start: np.ndarray,
    degree: int,
    subintervals: int,
    dissipative: bool,
    rtol: float,
    atol: float,
) -> tuple[list[cs.SX], list[np.ndarray], list[cs.SX], list[cs.SX], cs.SX]:
    """Unknowns (with their start guesses), equality and inequality constraints, and the
    loss of one experiment ``e`` (a :class:`learning.fit._Experiment`)."""
    model = e.model
    if model.dae.modes:
        raise ModelError(
            f"fit: {model.name} has discrete modes (switches, events); method='collocation' "
            "does not handle them: use method='least_squares'"
        )
    dae, nx, nz = model.dae, model.dae.x.numel(), model.dae.z.numel()
    pnames = list(model.parameters)
    pvals = np.array(list(model.parameters.values()), dtype=float)
    p = [cs.SX(v) for v in pvals]
    for k in e.columns:
        p[pnames.index(names[k])] = theta[k]
        pvals[pnames.index(names[k])] = start[k]
    p = cs.vertcat(*p)
    args = [dae.x, dae.z, model.p, model.t]
    ode = cs.Function("ode", args, [dae.ode])
    alg = cs.Function("alg", args, [dae.alg])
    rows = [model.check_name(n) for n in e.outputs]
    out = cs.Function("out", args, [cs.vertcat(*[model.outputs[r] for r in rows])])
    powers = power_expressions(model, e.system) if dissipative else []
    pw = cs.Function("power", args, [cs.vertcat(*[q for _, q in powers])]) if powers else None

    tau, D = radau(degree)
    grid = e.grid
    edges = np.concatenate(
        [
            np.linspace(a, b, subintervals + 1)[:-1] for a, b in zip(grid[:-1], grid[1:])
        ]  # piece starts
        + [[grid[-1]]]
    )
    h = np.diff(edges)
    times = (edges[:-1, None] + h[:, None] * tau[None, :]).ravel()
    # the start guess: IDAS at the start parameters on the collocation times
    sim_grid = np.concatenate([[grid[0]], times])
    sim = _simulator(model, sim_grid, rtol, atol, pvals)
    with native_stderr([]):
        xs, zs = sim.run(pvals)
    xs, zs = xs.reshape(nx, sim_grid.size), zs.reshape(nz, sim_grid.size)

    w, w0, g, ineq = [], [], [], []
    x0, z0 = cs.SX.sym("x0", nx), cs.SX.sym("z0", nz)
    w += [x0, z0]
    w0 += [xs[:, 0], zs[:, 0]]
    g.append(sim.init.residual(x0, z0, p))
    nodes = [(x0, z0, float(grid[0]))]  # (x, z, t) at each piece end
    xi = x0
    for i in range(len(h)):
        X = cs.SX.sym(f"X{i}", nx, degree)
        Z = cs.SX.sym(f"Z{i}", nz, degree)
        cols = slice(1 + i * degree, 1 + (i + 1) * degree)
        w += [cs.vec(X), cs.vec(Z)]
        w0 += [xs[:, cols].ravel(order="F"), zs[:, cols].ravel(order="F")]
        Xall = cs.horzcat(xi, X)
        for j in range(degree):
            t = float(times[i * degree + j])
            lhs = Xall @ cs.DM(D[j, :])
            g.append(lhs - h[i] * ode(X[:, j], Z[:, j], p, t))
            g.append(alg(X[:, j], Z[:, j], p, t))
            if pw is not None:
                ineq.append(pw(X[:, j], Z[:, j], p, t))
        xi = X[:, -1]
        nodes.append((xi, Z[:, -1], float(edges[i + 1])))
    # outputs at the grid times: every subintervals-th piece end
    at_grid = nodes[::subintervals]
    Y = [out(x, z, p, t) for x, z, t in at_grid[e.offset :]]
    loss = cs.SX(0)
    for j, (ym, mask, s) in enumerate(zip(e.measured, e.masks, e.scales)):
        yj = cs.vertcat(*[Y[n][j] for n in np.flatnonzero(mask)])
        r = cs.DM(s) * (yj - cs.DM(ym))
        loss += cs.sumsqr(r)
    return w, w0, g, ineq, loss


def collocate(
    experiments: Sequence[Any],
    names: Sequence[str],
    start: np.ndarray,
    rtol: float,
    atol: float,
    options: Mapping[str, Any] | None = None,
) -> CollocationResult:
    """IPOPT on the collocated fit of ``experiments`` (see the module docstring)."""
    opts = dict(options or {})
    unknown = set(opts) - KNOWN_OPTIONS
    if unknown:
        raise ModelError(
            f"fit: options {sorted(unknown)} are not collocation options; "
            f"use {sorted(KNOWN_OPTIONS)} (IPOPT's own go in options['ipopt'])"
        )
    degree = int(opts.get("degree", 3))
    subintervals = int(opts.get("subintervals", 1))
    if degree < 1 or subintervals < 1:
        raise ModelError("fit: collocation needs degree >= 1 and subintervals >= 1")
    theta = cs.SX.sym("theta", len(names))
    w, w0, g, lbg_ineq = [theta], [np.asarray(start, dtype=float)], [], []
    loss = cs.SX(0)
    for e in experiments:
        we, w0e, ge, ie, le = _experiment_nlp(
            e, names, theta, start, degree, subintervals, bool(opts.get("dissipative")), rtol, atol
        )
        w += we
        w0 += w0e
        g += ge
        lbg_ineq += ie
        loss += le
    geq, gin = cs.vertcat(*g), cs.vertcat(*lbg_ineq) if lbg_ineq else cs.SX(0, 1)
    nlp = {"x": cs.vertcat(*w), "f": loss, "g": cs.vertcat(geq, gin)}
    ipopt = {"print_level": 0, "sb": "yes", "max_iter": int(opts.get("max_iter", 500))}
    ipopt |= dict(opts.get("ipopt", {}))
    solver = cs.nlpsol("collocation", "ipopt", nlp, {"ipopt": ipopt, "print_time": False})
    lbg = np.concatenate([np.zeros(geq.numel()), np.zeros(gin.numel())])
    ubg = np.concatenate([np.zeros(geq.numel()), np.full(gin.numel(), np.inf)])
    with native_stderr([]):
        sol = solver(x0=np.concatenate([np.ravel(v) for v in w0]), lbg=lbg, ubg=ubg)
    stats = solver.stats()
    xopt = sol["x"].full().ravel()[: len(names)]
    return CollocationResult(
        x=xopt,
        success=bool(stats.get("success", False)),
        message=f"IPOPT: {stats.get('return_status', 'unknown')}",
        n_iterations=int(stats.get("iter_count", 0)),
        objective=float(sol["f"]),
        n_simulations=len(experiments),
    )
