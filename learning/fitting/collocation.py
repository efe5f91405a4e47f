"""Direct collocation of the whole DAE for ``fit(..., method="collocation")``.

For each experiment the mesh is its data times (from ``t_start``) and the times where an
input is discontinuous (a step's time: :meth:`acausal.Model.breakpoint_times`); every mesh
interval is split into ``subintervals`` equal pieces of length ``h``, each collocated with
Radau IIA at ``degree`` points ``tau_1 < ... < tau_d = 1`` (order ``2 d - 1``: 5 for the
default 3 points). A piece that ends on a discontinuity sees the input's value before it.
The NLP, solved by IPOPT (:func:`casadi.nlpsol`):

- unknowns: the fitted parameters ``theta`` (shared by all experiments), and per
  experiment the states and Newton unknowns ``(x0, z0)`` at the start and
  ``(X_ij, Z_ij)`` at every collocation point;
- equality constraints: the initialization residual at ``t_start`` (the algebraic
  equations and the fixed start values, for the current parameters), the collocation
  equations ``sum_r D_jr X_ir = h ode(X_ij, Z_ij, p, t_ij)`` (``X_i0`` the piece's start),
  and ``alg(X_ij, Z_ij, p, t_ij) = 0`` at every point;
- objective: ``||r||^2`` with ``r = sqrt(c_j) (y_j(t_n) - ym_j(t_n))`` and ``y_j`` the
  model's output expression at the collocation point ``tau = 1`` that falls on ``t_n``:
  the loss of the simulation methods, up to the collocation error;
- optionally (``options={"dissipative": True}``) ``power >= 0`` of every
  :class:`~learning.Unknown` at every collocation point: dissipativity sampled along the
  trajectory, for laws whose parameterization does not guarantee it.

Structure is exploited rather than rediscovered: each piece's constraints are one small
SX function of its own unknowns ``u_i = (x_start, X_i, Z_i, theta)``, mapped over the
pieces, and the constraint Jacobian is assembled from the mapped per-piece Jacobians
(their nonzeros scattered to known rows and columns); likewise the outputs at the data
times. The Hessian of the Lagrangian is the constrained Gauss-Newton one, ``2 sigma J_r^T
J_r`` (``J_r = dr/dw``): it drops the constraints' curvature, is exact at a zero residual
and costs one sparse product. Measured on the paper's experiment (3615 unknowns): the NLP
is built in 0.3 s instead of 3.2 s for the exact Hessian of the inlined SX graph.

The start guess is the parameters' start values and the trajectory simulated (IDAS) at
them on the collocation times. ``options``: ``max_iter`` (default 500), ``subintervals``
(default 1), ``degree`` (default 3), ``dissipative`` (default False), ``ipopt``: further
IPOPT options (default quiet: ``print_level`` 0; ``obj_scaling_factor`` and
``max_wall_time`` as :func:`collocate` says).
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from acausal.errors import OptionError
from solvers import simulator
from solvers.capture import native_stderr

from ..laws import Unknown
from .collocation_assembly import Layout, Stack, nlp_functions

if TYPE_CHECKING:
    from .objective import ExperimentResiduals

KNOWN_OPTIONS = {"max_iter", "subintervals", "degree", "dissipative", "ipopt"}
# what to do when IPOPT stops without a solution, by its return status
ADVICE = {
    "Maximum_Iterations_Exceeded": "give IPOPT more iterations: options={'max_iter': ...}",
    "Maximum_CpuTime_Exceeded": "give IPOPT more time: options={'ipopt': {'max_cpu_time': ...}}",
    "Maximum_WallTime_Exceeded": "the fit's max_time ran out: give more (max_time=...)",
    "Restoration_Failed": "the collocated equations could not be satisfied near the start "
    "guess: refine the mesh (options={'subintervals': 2}), start closer (x0=...), or use "
    "method='least_squares'",
    "Infeasible_Problem_Detected": "no parameters satisfy the equations and the constraints "
    "together (with dissipative=True: the data may need an active component)",
    "Invalid_Number_Detected": "a model expression is not finite at some collocation point "
    "(a log, sqrt or division out of its domain): start elsewhere (x0=...) or use "
    "method='least_squares'",
    "Error_In_Step_Computation": "IPOPT's linear algebra failed (a singular KKT system): "
    "refine the mesh or use method='least_squares'",
}


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


def mesh(grid: np.ndarray, breaks: Sequence[float], subintervals: int) -> np.ndarray:
    """Piece boundaries: the data times and the breakpoints, each interval between them
    cut into ``subintervals`` equal pieces."""
    knots = np.union1d(grid, np.asarray(breaks, dtype=float))
    pieces = [np.linspace(a, b, subintervals + 1)[:-1] for a, b in zip(knots[:-1], knots[1:])]
    return np.concatenate([*pieces, knots[-1:]])


def power_expressions(model: Any, system: Any) -> list[tuple[str, cs.SX]]:
    """``(name, power)`` of every :class:`Unknown` in ``system``, each power an expression
    of the model's ``(x, z, p, t)`` through the outputs of the variables it uses."""
    out = []
    for c in system.all_components():
        if not isinstance(c, Unknown):
            continue
        syms = cs.symvar(c.power)
        values = [model.outputs[model.check_name(c.name_of(s))] for s in syms]
        out.append((c.full_name, cs.substitute(c.power, cs.vertcat(*syms), cs.vertcat(*values))))
    return out


@dataclass(frozen=True)
class Settings:
    """What every experiment's transcription shares: the fitted names, their start values
    and NLP unknowns ``theta``, IDAS's tolerances for the start guess, and the options."""

    names: Sequence[str]
    start: np.ndarray
    theta: cs.MX
    rtol: float
    atol: float
    degree: int
    subintervals: int
    dissipative: bool


@dataclass
class Parts:
    """The NLP as it is built: where the unknowns sit, the equality constraints ``g``, the
    inequalities ``power >= 0`` and the weighted residuals ``res``."""

    layout: Layout
    g: Stack = field(default_factory=Stack)
    ineq: Stack = field(default_factory=Stack)
    res: Stack = field(default_factory=Stack)


def _parameters(e: ExperimentResiduals, s: Settings) -> tuple[np.ndarray, cs.Function]:
    """The model's parameter values at the start, and ``p(theta)``: the fixed values with
    the fitted ones in their places."""
    model = e.model
    pnames = list(model.parameters)
    pvals = np.array(list(model.parameters.values()), dtype=float)
    cols = [pnames.index(n) for n in e.pnames]
    pvals[cols] = s.start[e.columns]
    if cols and cs.depends_on(model.breakpoints, model.p[cols]):
        raise OptionError(
            f"fit: in {model.name} the time of an input's discontinuity depends on a fitted "
            "parameter; method='collocation' keeps its mesh fixed: use method='least_squares'"
        )
    th = cs.SX.sym("theta", len(s.names))
    fixed = pvals.copy()
    fixed[cols] = 0.0
    select = cs.DM.zeros(len(pnames), len(s.names))
    for c, k in zip(cols, e.columns):
        select[c, k] = 1
    return pvals, cs.Function("p", [th], [cs.DM(fixed) + cs.mtimes(select, th)])


class _Transcription:
    """One experiment ``e`` collocated: its pieces on the mesh and its unknowns in
    ``layout``, started from IDAS at the start parameters on the collocation times; then
    :meth:`initialization`, :meth:`pieces` and :meth:`outputs` add its constraints and
    residuals to the NLP."""

    def __init__(self, e: ExperimentResiduals, s: Settings, layout: Layout) -> None:
        model = e.model
        if model.dae.modes:
            raise OptionError(
                f"fit: {model.name} has discrete modes (switches, events); "
                "method='collocation' does not handle them: use method='least_squares'"
            )
        self.e, self.s, self.model, self.dae = e, s, model, model.dae
        self.nx, self.nz, self.nth = model.dae.x.numel(), model.dae.z.numel(), len(s.names)
        pvals, self.p_of = _parameters(e, s)
        self.args = [self.dae.x, self.dae.z, model.p, model.t]
        self.tau, self.D = radau(s.degree)
        grid = e.grid
        self.breaks = model.breakpoint_times(pvals, float(grid[0]), float(grid[-1]))
        self.edges = mesh(grid, self.breaks, s.subintervals)
        self.h = np.diff(self.edges)
        self.n = self.h.size
        times = self.edges[:-1, None] + self.h[:, None] * self.tau[None, :]
        ends = np.isin(self.edges[1:], self.breaks)  # left limit of the input at a jump
        times[ends, -1] -= 1e-9 * self.h[ends]
        self.times = times
        # the start guess: IDAS at the start parameters on the collocation times
        sim_grid = np.concatenate([[grid[0]], times.ravel()])
        self.sim = simulator(model, sim_grid, s.rtol, s.atol, pvals, e.simulators)
        with native_stderr([]):
            xs, zs = self.sim.run(pvals)
        xs, zs = xs.reshape(self.nx, sim_grid.size), zs.reshape(self.nz, sim_grid.size)
        self.x0, self.ix0 = layout.new("x0", self.nx, 1, xs[:, 0])
        self.z0, self.iz0 = layout.new("z0", self.nz, 1, zs[:, 0])
        self.X, self.iX = layout.new("X", self.nx, s.degree * self.n, xs[:, 1:])
        self.Z, self.iZ = layout.new("Z", self.nz, s.degree * self.n, zs[:, 1:])
        self.ith = np.arange(self.nth)
        self.last = np.arange(1, self.n + 1) * s.degree - 1  # the columns at tau = 1

    def initialization(self, g: Stack) -> None:
        """The initialization residual at the start, in ``(x0, z0, theta)``."""
        nx, nz = self.nx, self.nz
        u0 = cs.SX.sym("u0", nx + nz + self.nth)
        x_, z_, t_ = u0[:nx], u0[nx : nx + nz], u0[nx + nz :]
        none = cs.SX.sym("none", 0)
        g.add(
            self.sim.init.residual(x_, z_, self.p_of(t_)),
            u0,
            none,
            cs.vertcat(self.x0, self.z0, self.s.theta),
            cs.MX(0, 1),
            np.concatenate([self.ix0[:, 0], self.iz0[:, 0], self.ith])[None, :],
        )

    def pieces(self, g: Stack, ineq: Stack) -> None:
        """The collocation equations of every piece, mapped over the pieces: ``u_i =
        (x_start, vec X_i, vec Z_i, theta)``, ``q_i = (t_i1..t_id, h_i)``; with
        ``dissipative``, ``power >= 0`` of every Unknown at every point."""
        nx, nz, nth, n, degree = self.nx, self.nz, self.nth, self.n, self.s.degree
        nu = nx + degree * (nx + nz) + nth
        u, q = cs.SX.sym("u", nu), cs.SX.sym("q", degree + 1)
        xs_ = u[:nx]
        Xi = cs.reshape(u[nx : nx + nx * degree], nx, degree)
        Zi = cs.reshape(u[nx + nx * degree : nu - nth], nz, degree)
        p = self.p_of(u[nu - nth :])
        slopes = cs.horzcat(xs_, Xi) @ cs.DM(self.D.T)  # h x' at the points
        ode = cs.Function("ode", self.args, [self.dae.ode])
        alg = cs.Function("alg", self.args, [self.dae.alg])
        eqs = []
        for j in range(degree):
            point = (Xi[:, j], Zi[:, j], p, q[j])
            eqs += [slopes[:, j] - q[degree] * ode(*point), alg(*point)]
        last = self.last
        starts = np.concatenate([self.ix0, self.iX[:, last[:-1]]], axis=1)  # x_start of each
        where = np.concatenate(
            [
                starts.T,
                self.iX.T.reshape(n, degree * nx),
                self.iZ.T.reshape(n, degree * nz),
                np.tile(self.ith, (n, 1)),
            ],
            axis=1,
        )
        X, Z, theta = self.X, self.Z, self.s.theta
        Xstart = cs.horzcat(self.x0, X[:, last[:-1].tolist()]) if n > 1 else self.x0
        U = cs.vertcat(
            Xstart,
            cs.reshape(X, nx * degree, n),
            cs.reshape(Z, nz * degree, n),
            cs.repmat(theta, 1, n),
        )
        Q = cs.DM(np.vstack([self.times.T, self.h[None, :]]))
        g.add(cs.vertcat(*eqs), u, q, U, Q, where)
        if self.s.dissipative:
            powers = [w for _, w in power_expressions(self.model, self.e.system)]
            if powers:
                power = cs.Function("power", self.args, [cs.vertcat(*powers)])
                at = [power(Xi[:, j], Zi[:, j], p, q[j]) for j in range(degree)]
                ineq.add(cs.vertcat(*at), u, q, U, Q, where)

    def outputs(self, res: Stack) -> None:
        """The weighted residuals at the data times: the outputs at the piece ends on the
        grid (``x0``, ``z0`` at the start)."""
        e, model, nx, nz = self.e, self.model, self.nx, self.nz
        grid = e.grid
        on_grid = self.last[np.searchsorted(self.edges[1:], grid[1:])]
        ixg = np.concatenate([self.ix0, self.iX[:, on_grid]], axis=1)[:, e.offset :]
        izg = np.concatenate([self.iz0, self.iZ[:, on_grid]], axis=1)[:, e.offset :]
        Xg = cs.horzcat(self.x0, self.X[:, on_grid.tolist()])[:, e.offset :]
        Zg = cs.horzcat(self.z0, self.Z[:, on_grid.tolist()])[:, e.offset :]
        rows = [model.check_name(r) for r in e.outputs]
        out = cs.Function("out", self.args, [cs.vertcat(*[model.outputs[r] for r in rows])])
        nodes = grid.size - e.offset
        scale = np.zeros((len(rows), nodes))
        target = np.zeros_like(scale)
        for j, (ym, mask, s) in enumerate(zip(e.measured, e.masks, e.scales)):
            scale[j, mask], target[j, mask] = s, ym
        ux = cs.SX.sym("u", nx + nz + self.nth)
        qy = cs.SX.sym("q", 2 * len(rows) + 1)  # (scale, target, t)
        y = out(ux[:nx], ux[nx : nx + nz], self.p_of(ux[nx + nz :]), qy[-1])
        r = qy[: len(rows)] * (y - qy[len(rows) : -1])
        res.add(
            r,
            ux,
            qy,
            cs.vertcat(Xg, Zg, cs.repmat(self.s.theta, 1, nodes)),
            cs.DM(np.vstack([scale, target, grid[None, e.offset :]])),
            np.concatenate([ixg.T, izg.T, np.tile(self.ith, (nodes, 1))], axis=1),
        )


@dataclass
class CollocationNLP:
    """The NLP for IPOPT: ``nlp`` (``x``, ``f``, ``g``), the assembled ``jac_g`` and
    ``hess_lag``, the start guess ``w0`` and the bounds on ``g`` (equalities, then
    ``power >= 0``)."""

    nlp: dict[str, cs.MX]
    jac_g: cs.Function
    hess_lag: cs.Function
    w0: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray


def build(
    experiments: Sequence[ExperimentResiduals],
    names: Sequence[str],
    start: np.ndarray,
    rtol: float,
    atol: float,
    options: Mapping[str, Any] | None = None,
) -> CollocationNLP:
    """The collocated fit of ``experiments`` as an NLP (see the module docstring)."""
    opts = dict(options or {})
    unknown = set(opts) - KNOWN_OPTIONS
    if unknown:
        raise OptionError(
            f"fit: options {sorted(unknown)} are not collocation options; "
            f"use {sorted(KNOWN_OPTIONS)} (IPOPT's own go in options['ipopt'])"
        )
    degree, subintervals = int(opts.get("degree", 3)), int(opts.get("subintervals", 1))
    if degree < 1 or subintervals < 1:
        raise OptionError("fit: collocation needs degree >= 1 and subintervals >= 1")
    layout = Layout()
    theta, _ = layout.new("theta", len(names), 1, start)
    dissipative = bool(opts.get("dissipative", False))
    s = Settings(names, start, theta, rtol, atol, degree, subintervals, dissipative)
    nlp = Parts(layout)
    for e in experiments:  # each experiment's unknowns, then its constraints and residuals
        one = _Transcription(e, s, layout)
        one.initialization(nlp.g)
        one.pieces(nlp.g, nlp.ineq)
        one.outputs(nlp.res)
    g, res = nlp.g, nlp.res
    n_eq = g.size
    g.extend(nlp.ineq)  # inequalities after the equalities, in one constraint vector
    w = cs.vertcat(*layout.symbols)
    jac_g, hess_lag = nlp_functions(w, g, res)
    return CollocationNLP(
        nlp={"x": w, "f": cs.sumsqr(res.value()), "g": g.value()},
        jac_g=jac_g,
        hess_lag=hess_lag,
        w0=np.concatenate(layout.guess),
        lbg=np.zeros(g.size),
        ubg=np.concatenate([np.zeros(n_eq), np.full(g.size - n_eq, np.inf)]),
    )


class IterationCallback(cs.Callback):
    """IPOPT's iteration callback: ``report(k, f, feasible)`` after iteration ``k`` with the
    objective ``f`` there and whether the iterate satisfies the constraints (bounds
    ``lbg``, ``ubg``) to ``tol`` (for progress lines during a long solve)."""

    def __init__(
        self,
        lbg: np.ndarray,
        ubg: np.ndarray,
        nx: int,
        tol: float,
        report: Callable[[int, float, bool], None],
    ) -> None:
        cs.Callback.__init__(self)
        self.lbg, self.ubg, self.nx, self.tol = lbg, ubg, nx, tol
        self.report, self.k = report, 0
        self.construct("iterations", {})

    def get_n_in(self) -> int:
        return cs.nlpsol_n_out()

    def get_n_out(self) -> int:
        return 1

    def get_name_in(self, i: int) -> str:
        return cs.nlpsol_out(i)

    def get_name_out(self, i: int) -> str:
        return "ret"

    def get_sparsity_in(self, i: int) -> cs.Sparsity:
        ng = self.lbg.size
        size = {"f": 1, "x": self.nx, "lam_x": self.nx, "g": ng, "lam_g": ng}
        return cs.Sparsity.dense(size.get(cs.nlpsol_out(i), 0), 1)

    def eval(self, arg: list) -> list:
        g = np.asarray(arg[cs.nlpsol_out().index("g")], dtype=float).ravel()
        violation = np.max(np.maximum(self.lbg - g, g - self.ubg), initial=0.0)
        self.report(self.k, float(arg[cs.nlpsol_out().index("f")]), bool(violation <= self.tol))
        self.k += 1
        return [0]


def collocate(
    experiments: Sequence[ExperimentResiduals],
    names: Sequence[str],
    start: np.ndarray,
    rtol: float,
    atol: float,
    options: Mapping[str, Any] | None = None,
    on_iteration: Callable[[int, float, bool], None] | None = None,
    scale: float = 1.0,
    deadline: float = np.inf,
) -> CollocationResult:
    """IPOPT on the collocated fit of ``experiments`` (see the module docstring);
    ``on_iteration(k, f, feasible)`` is called after each IPOPT iteration (``feasible``:
    the equations hold to IPOPT's ``constr_viol_tol``). IPOPT stops at ``deadline`` (a
    ``time.perf_counter()`` value; ``max_wall_time``) and minimizes ``f / scale`` when
    ``scale < 1`` (``obj_scaling_factor``; :func:`learning.fit` passes ``L_ref``): its
    gradient-based scaling shrinks a large objective but never enlarges a small one (a fit
    in SI units of micrometre-sized outputs), whose gradient would meet IPOPT's tolerances
    at the start. ``options["ipopt"]`` overrides both."""
    opts = dict(options or {})
    prob = build(experiments, names, start, rtol, atol, opts)
    ipopt = {"print_level": 0, "sb": "yes", "max_iter": int(opts.get("max_iter", 500))}
    ipopt["obj_scaling_factor"] = max(1.0, 1.0 / scale)  # IPOPT scales large ones down
    if np.isfinite(deadline):  # what is left after building the NLP
        ipopt["max_wall_time"] = max(deadline - _time.perf_counter(), 1e-3)
    ipopt |= dict(opts.get("ipopt", {}))
    settings = {"ipopt": ipopt, "print_time": False}
    settings |= {"jac_g": prob.jac_g, "hess_lag": prob.hess_lag}
    if on_iteration is not None:
        tol = float(ipopt.get("constr_viol_tol", 1e-4))  # IPOPT's default
        callback = IterationCallback(prob.lbg, prob.ubg, prob.w0.size, tol, on_iteration)
        settings["iteration_callback"] = callback
    solver = cs.nlpsol("collocation", "ipopt", prob.nlp, settings)
    with native_stderr([]):
        sol = solver(x0=prob.w0, lbg=prob.lbg, ubg=prob.ubg)
    stats = solver.stats()
    status = str(stats.get("return_status", "unknown"))
    success = bool(stats.get("success", False))
    advice = "" if success else f" ({ADVICE.get(status, 'see IPOPT status ' + status)})"
    return CollocationResult(
        x=sol["x"].full().ravel()[: len(names)],
        success=success,
        message=f"IPOPT: {status}{advice}",
        n_iterations=int(stats.get("iter_count", 0)),
        objective=float(sol["f"]),
        n_simulations=len(experiments),
    )
