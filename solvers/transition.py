"""Forward sensitivities in many parameter directions through the state transition matrix.

For the semi-explicit index-1 DAE ``x' = f(x, z, p, t)``, ``0 = g(x, z, p, t)`` the
sensitivities ``S = dx/dp E``, ``R = dz/dp E`` in ``k`` directions ``E`` (parameters x k)
solve the linear DAE ``S' = f_x S + f_z R + f_p E``, ``0 = g_x S + g_z R + g_p E``.
Eliminating ``R = -g_z^-1 (g_x S + g_p E)`` gives ``S' = A S + B E`` with
``A = f_x - f_z g_z^-1 g_x``, ``B = f_p - f_z g_z^-1 g_p``. With the transition matrix
``Phi`` (``Phi' = A Phi``, ``Phi(t0) = I``: the sensitivities to the start states, ``nx``
directions), variation of constants gives

    S(t) = Phi(t) (S(t0) + q(t)),     q(t) = int_t0^t Phi(s)^-1 B(s) E ds,
    R(t) = R_Phi(t) (S(t0) + q(t)) + R_p(t),   R_Phi = -g_z^-1 g_x Phi,  R_p = -g_z^-1 g_p E.

IDAS integrates ``x``, ``z``, ``Phi``, ``R_Phi`` (an augmented DAE of ``nx`` directions
instead of ``k``) and ``q`` as quadratures (``nx k`` of them: no Newton iteration and no
Jacobian of theirs, included in the error control). The cost of a direction is then one
evaluation of its integrand per step instead of its share of the augmented DAE's residual,
its Jacobian (second derivatives) and its factorization: with ``k`` much larger than ``nx``
(a network's weights) this is the faster way. It is the same solution of the same
equations, to the integration tolerances; the error in ``q`` reaches ``S`` multiplied by at
most the condition number of ``Phi``, so a run where ``Phi`` gets ill-conditioned (fast
decaying modes: ``Phi^-1`` grows) is not used (:data:`MAX_CONDITION`) and the caller
integrates the sensitivities directly instead. For ``A`` with eigenvalues ``lambda``,
``cond(Phi(t))`` grows like ``exp((max Re lambda - min Re lambda) t)``: a model whose
linearization at the start gives more than ``MAX_CONDITION`` over the grid is not tried, and
a run whose quadratures blow up all the same (IDAS fails) falls back too.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

from acausal import Model, SimulationError

from .buffers import mapped_call, numeric_call
from .functions import idas_options
from .integrate import Simulator
from .result import Result
from .simulate import simulate, simulator
from .time_scales import eigenvalues

MAX_CONDITION = 1e4  # cond(Phi) above this on the grid: integrate the sensitivities directly
MAX_ALGEBRAIC = 50  # g_z^-1 is formed symbolically: up to this many algebraic unknowns


def transition_sensitivities(
    sim: Simulator, p: np.ndarray, which: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """``(X, Z, dX, dZ)`` as :meth:`Simulator.sensitivities` gives them (``dX``
    (nx, N, k)) by the transition matrix (module docstring), or None where that way does
    not apply or does not pay (as :meth:`Simulator.sensitivities`, the model's own states
    throughout): a model with events, breakpoints, no states or more than
    :data:`MAX_ALGEBRAIC` algebraic unknowns, no more directions than states, or
    ``cond(Phi) > MAX_CONDITION`` (foreseen from the start's eigenvalues or found on the
    run)."""
    if (
        len(which) <= sim.nx
        or sim.nz > MAX_ALGEBRAIC
        or sim.events is not None
        or len(sim.segments.parts) > 1
    ):
        return None
    model, dae, grid = sim.model, sim.model.dae, sim.grid
    nx, nz, n, k = sim.nx, sim.nz, len(sim.grid), len(which)
    x0, z0 = sim.initial_values(p)
    lam = [v.real for v in eigenvalues(model, x0, z0, p, grid[0])] or [0.0]
    if (max(lam) - min(lam)) * (grid[-1] - grid[0]) > np.log(MAX_CONDITION):
        return None
    E = cs.DM(sim._seeds(tuple(which)))
    spec = sim.functions.sensitivity_spec(np.zeros((model.p.numel(), nx)))
    Phi = cs.reshape(spec["x"][nx:], nx, nx)
    B = cs.jacobian(dae.ode, model.p) @ E
    if nz:  # z's responses: R_Phi = R_x Phi, R_p = -g_z^-1 g_p E
        g_z = cs.jacobian(dae.alg, dae.z)
        R_x = -cs.solve(g_z, cs.jacobian(dae.alg, dae.x))
        R_p = -cs.solve(g_z, cs.jacobian(dae.alg, model.p) @ E)
        B += cs.jacobian(dae.ode, dae.z) @ R_p
        algebraic = cs.Function(
            "R", [dae.x, dae.z, model.p, model.t], [cs.densify(R_x), cs.densify(R_p)]
        )
    rtol, atol, max_steps = sim.tolerances
    opts = idas_options(grid, rtol, atol, max_steps) | {"quad_err_con": True}
    integrator = cs.integrator(
        "transition", "idas", spec | {"quad": cs.vec(cs.solve(Phi, B))}, grid[0], grid, opts
    )

    S0, _ = sim.initial_sensitivities(p, x0, z0, np.asarray(E))
    R_Phi0 = numeric_call(algebraic, [x0, z0, p, grid[0]], 1)[0] if nz else np.zeros((0, nx))
    start = [
        np.concatenate([x0, np.eye(nx).ravel(order="F")]),
        np.concatenate([z0, R_Phi0.ravel(order="F")]),
    ]
    quadratures = []

    def run(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        xa, za, q = numeric_call(integrator, [*start, v], 3)
        quadratures.append(q)
        return xa, za

    try:
        xa, za = sim._guarded(run, p)
    except SimulationError:  # the quadratures blew up: Phi^-1 grew past what IDAS resolves
        return None
    Phis = xa[nx:].reshape(nx, nx, n, order="F")
    if max(np.linalg.cond(Phis.transpose(2, 0, 1))) > MAX_CONDITION:
        return None
    C = S0[:, :, None] + quadratures[0].reshape(nx, k, n, order="F")  # S(t0) + q(t)
    dx = np.einsum("ijn,jkn->ink", Phis, C)
    dz = np.zeros((nz, n, k))
    if nz:
        R_ps = mapped_call(algebraic, [xa[:nx], za[:nz], p, grid[None, :]], 2, {}, "R")[1]
        R_Phis = za[nz:].reshape(nz, nx, n, order="F")
        dz = np.einsum("ijn,jkn->ink", R_Phis, C) + R_ps.reshape(nz, n, k)
    return xa[:nx], za[:nz], dx, dz


def simulate_sensitivities(
    model: Model, grid: np.ndarray, rtol: float, atol: float, params: dict, names: list[str]
) -> Result:
    """``simulate(model, grid=grid, ..., sensitivities=names)``, the sensitivities by
    :func:`transition_sensitivities` where it applies (the same numbers to the tolerances)."""
    p = np.asarray(model.parameter_vector(params), dtype=float)
    simulators: dict = {}  # (the fallback's run reuses the simulator)
    sim = simulator(model, grid, rtol, atol, p, simulators)
    p = sim.settle(p)
    out = transition_sensitivities(sim, p, [list(model.parameters).index(s) for s in names])
    if out is None:
        return simulate(
            model,
            grid=grid,
            rtol=rtol,
            atol=atol,
            params=params,
            sensitivities=names,
            simulators=simulators,
        )
    x, z, dx, dz = out
    sens = {s: (dx[:, :, j], dz[:, :, j]) for j, s in enumerate(names)}
    return Result(model, grid, x, z, p, sens, [], functions=sim.functions)
