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
from typing import Any

import casadi as cs
import numpy as np

from acausal.errors import OptionError
from solvers import simulator
from solvers.capture import native_stderr

from ..laws import Unknown

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


def _experiment(
    e: Any,
    names: Sequence[str],
    theta: cs.MX,
    start: np.ndarray,
    layout: Layout,
    g: Stack,
    ineq: Stack,
    res: Stack,
    opts: Mapping[str, Any],
    rtol: float,
    atol: float,
) -> None:
    """Add one experiment ``e`` (a :class:`learning.fitting.objective.Experiment`): its unknowns to
    ``layout``, its constraints to ``g`` and ``ineq``, its weighted residuals to ``res``."""
    model = e.model
    if model.dae.modes:
        raise OptionError(
            f"fit: {model.name} has discrete modes (switches, events); method='collocation' "
            "does not handle them: use method='least_squares'"
        )
    degree, subintervals = opts["degree"], opts["subintervals"]
    dae, nx, nz, nth = model.dae, model.dae.x.numel(), model.dae.z.numel(), len(names)
    pnames = list(model.parameters)
    pvals = np.array(list(model.parameters.values()), dtype=float)
    cols = [pnames.index(n) for n in e.pnames]
    pvals[cols] = start[e.columns]
    if cols and cs.depends_on(model.breakpoints, model.p[cols]):
        raise OptionError(
            f"fit: in {model.name} the time of an input's discontinuity depends on a fitted "
            "parameter; method='collocation' keeps its mesh fixed: use method='least_squares'"
        )
    # p(theta): the fixed values with the fitted ones in their places
    th = cs.SX.sym("theta", nth)
    fixed = pvals.copy()
    fixed[cols] = 0.0
    select = cs.DM.zeros(len(pnames), nth)
    for c, k in zip(cols, e.columns):
        select[c, k] = 1
    p_of = cs.Function("p", [th], [cs.DM(fixed) + cs.mtimes(select, th)])
    args = [dae.x, dae.z, model.p, model.t]

    tau, D = radau(degree)
    grid = e.grid
    breaks = model.breakpoint_times(pvals, float(grid[0]), float(grid[-1]))
    edges = mesh(grid, breaks, subintervals)
    h = np.diff(edges)
    n = h.size
    times = edges[:-1, None] + h[:, None] * tau[None, :]
    ends = np.isin(edges[1:], breaks)  # left limit of the input at a discontinuity
    times[ends, -1] -= 1e-9 * h[ends]
    # the start guess: IDAS at the start parameters on the collocation times
    sim_grid = np.concatenate([[grid[0]], times.ravel()])
    sim = simulator(model, sim_grid, rtol, atol, pvals, e.simulators)
    with native_stderr([]):
        xs, zs = sim.run(pvals)
    xs, zs = xs.reshape(nx, sim_grid.size), zs.reshape(nz, sim_grid.size)
    x0, ix0 = layout.new("x0", nx, 1, xs[:, 0])
    z0, iz0 = layout.new("z0", nz, 1, zs[:, 0])
    X, iX = layout.new("X", nx, degree * n, xs[:, 1:])
    Z, iZ = layout.new("Z", nz, degree * n, zs[:, 1:])
    ith = np.arange(nth)

    # start: the initialization residual
    u0 = cs.SX.sym("u0", nx + nz + nth)
    x_, z_, t_ = u0[:nx], u0[nx : nx + nz], u0[nx + nz :]
    none = cs.SX.sym("none", 0)
    g.add(
        sim.init.residual(x_, z_, p_of(t_)),
        u0,
        none,
        cs.vertcat(x0, z0, theta),
        cs.MX(0, 1),
        np.concatenate([ix0[:, 0], iz0[:, 0], ith])[None, :],
    )

    # the pieces: u_i = (x_start, vec X_i, vec Z_i, theta), q_i = (t_i1..t_id, h_i)
    nu = nx + degree * (nx + nz) + nth
    u, q = cs.SX.sym("u", nu), cs.SX.sym("q", degree + 1)
    xs_ = u[:nx]
    Xi = cs.reshape(u[nx : nx + nx * degree], nx, degree)
    Zi = cs.reshape(u[nx + nx * degree : nu - nth], nz, degree)
    p = p_of(u[nu - nth :])
    slopes = cs.horzcat(xs_, Xi) @ cs.DM(D.T)  # h x' at the points
    ode, alg = cs.Function("ode", args, [dae.ode]), cs.Function("alg", args, [dae.alg])
    eqs = []
    for j in range(degree):
        point = (Xi[:, j], Zi[:, j], p, q[j])
        eqs += [slopes[:, j] - q[degree] * ode(*point), alg(*point)]
    last = np.arange(1, n + 1) * degree - 1  # the columns at tau = 1
    starts = np.concatenate([ix0, iX[:, last[:-1]]], axis=1)  # x_start of each piece
    where = np.concatenate(
        [
            starts.T,
            iX.T.reshape(n, degree * nx),
            iZ.T.reshape(n, degree * nz),
            np.tile(ith, (n, 1)),
        ],
        axis=1,
    )
    Xstart = cs.horzcat(x0, X[:, last[:-1].tolist()]) if n > 1 else x0
    U = cs.vertcat(
        Xstart, cs.reshape(X, nx * degree, n), cs.reshape(Z, nz * degree, n), cs.repmat(theta, 1, n)
    )
    Q = cs.DM(np.vstack([times.T, h[None, :]]))
    g.add(cs.vertcat(*eqs), u, q, U, Q, where)
    if opts["dissipative"]:
        powers = [w for _, w in power_expressions(model, e.system)]
        if powers:
            power = cs.Function("power", args, [cs.vertcat(*powers)])
            at = [power(Xi[:, j], Zi[:, j], p, q[j]) for j in range(degree)]
            ineq.add(cs.vertcat(*at), u, q, U, Q, where)

    # outputs at the data times: the piece ends on the grid (x0, z0 at the start)
    on_grid = last[np.searchsorted(edges[1:], grid[1:])]
    ixg = np.concatenate([ix0, iX[:, on_grid]], axis=1)[:, e.offset :]
    izg = np.concatenate([iz0, iZ[:, on_grid]], axis=1)[:, e.offset :]
    Xg = cs.horzcat(x0, X[:, on_grid.tolist()])[:, e.offset :]
    Zg = cs.horzcat(z0, Z[:, on_grid.tolist()])[:, e.offset :]
    rows = [model.check_name(r) for r in e.outputs]
    out = cs.Function("out", args, [cs.vertcat(*[model.outputs[r] for r in rows])])
    nodes = grid.size - e.offset
    scale = np.zeros((len(rows), nodes))
    target = np.zeros_like(scale)
    for j, (ym, mask, s) in enumerate(zip(e.measured, e.masks, e.scales)):
        scale[j, mask], target[j, mask] = s, ym
    ux = cs.SX.sym("u", nx + nz + nth)
    qy = cs.SX.sym("q", 2 * len(rows) + 1)  # (scale, target, t)
    y = out(ux[:nx], ux[nx : nx + nz], p_of(ux[nx + nz :]), qy[-1])
    r = qy[: len(rows)] * (y - qy[len(rows) : -1])
    res.add(
        r,
        ux,
        qy,
        cs.vertcat(Xg, Zg, cs.repmat(theta, 1, nodes)),
        cs.DM(np.vstack([scale, target, grid[None, e.offset :]])),
        np.concatenate([ixg.T, izg.T, np.tile(ith, (nodes, 1))], axis=1),
    )


def _nlp_functions(w: cs.MX, g: Stack, res: Stack) -> tuple[cs.Function, cs.Function]:
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
    experiments: Sequence[Any],
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
    mesh_opts = {
        "degree": int(opts.get("degree", 3)),
        "subintervals": int(opts.get("subintervals", 1)),
        "dissipative": bool(opts.get("dissipative", False)),
    }
    if mesh_opts["degree"] < 1 or mesh_opts["subintervals"] < 1:
        raise OptionError("fit: collocation needs degree >= 1 and subintervals >= 1")
    layout = Layout()
    theta, _ = layout.new("theta", len(names), 1, start)
    g, ineq, res = Stack(), Stack(), Stack()
    for e in experiments:
        _experiment(e, names, theta, start, layout, g, ineq, res, mesh_opts, rtol, atol)
    n_eq = g.size
    g.extend(ineq)  # inequalities after the equalities, in one constraint vector
    w = cs.vertcat(*layout.symbols)
    jac_g, hess_lag = _nlp_functions(w, g, res)
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
    experiments: Sequence[Any],
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
