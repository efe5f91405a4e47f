"""One step of the co-simulation FMU's integrator, generated as C with the model's functions.

The integrator is RODAS4 (Hairer and Wanner, *Solving Ordinary Differential Equations II*,
2nd ed., 1996): a six-stage Rosenbrock method of order 4 with an embedded order-3 estimate,
L-stable and stiffly accurate. It runs on the model's continuous states ``x`` with the
algebraic unknowns solved inside the rates (``x' = f(x, z(x, t), p, t)``) and time appended
as a state (``t' = 1``), so ``J`` below holds the time derivative too. With ``y = (x, t)``,
``F(y) = (f, 1)``, ``J = dF/dy`` at ``y_n`` and ``G = I / (gamma h) - J``::

    G k_i = F(y_n + sum_{j<i} a_ij k_j) + sum_{j<i} c_ij k_j / h,   i = 1 .. 6
    y_n+1 = y_n + sum_i m_i k_i,      error estimate  sum_i e_i k_i  (= k_6)

(the coefficients in this form are those of the KPP chemistry solvers, as the tables below
give them). Chosen over an explicit method because the models exported are often stiff (an
RC ladder's time constants span N^2, an ideal diode's on-resistance makes one of 1e-10 s),
and over implicit Runge-Kutta because each step is six linear solves with one matrix and no
Newton iteration: the step is one straight-line CasADi function (its sparse QR generated as
C), and the FMU's C code does only the step-size control and the events. Order 4 keeps the
steps long at tight tolerances (the second-order ROS2 tried first needed 42,000 steps for
the 100-stage ladder over 2 s at 1e-8).
"""

from __future__ import annotations

from collections.abc import Callable

import casadi as cs

from acausal import Model

from ..functions import algebraic, newton_solver

ORDER = 4  # of the embedded estimate, plus one: the step size's exponent is 1 / ORDER
GAMMA = 0.25
# a_ij and c_ij for j < i, row by row (row i holds i - 1 entries)
A = (
    (1.544,),
    (0.9466785280815826, 0.2557011698983284),
    (3.314825187068521, 2.896124015972201, 0.9986419139977817),
    (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950),
    (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0),
)
C = (
    (-5.6688,),
    (-2.430093356833875, -0.2063599157091915),
    (-0.1073529058151375, -9.594562251023355, -20.47028614809616),
    (7.496443313967647, -10.24680431464352, -33.99990352819905, 11.70890893206160),
    (8.083246795921522, -7.981132988064893, -31.52159432874371, 16.31930543123136,
     -6.058818238834054),
)  # fmt: skip
M = (1.221224509226641, 6.019134481288629, 12.53708332932087, -0.6878860361058950, 1.0, 1.0)
E = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def rosenbrock_step(
    F: Callable[[cs.MX], cs.MX], J: cs.MX, y0: cs.MX, h: cs.MX
) -> tuple[cs.MX, cs.MX]:
    """``(y1, err)``: one RODAS4 step of size ``h`` from ``y0`` for ``y' = F(y)``, with
    ``J = dF/dy`` at ``y0`` (see the module docstring)."""
    G = cs.MX.eye(y0.numel()) / (GAMMA * h) - J
    k: list[cs.MX] = []
    for i in range(len(M)):
        ai, ci = (A[i - 1], C[i - 1]) if i else ((), ())
        y = y0 + sum((a * kj for a, kj in zip(ai, k)), cs.MX.zeros(y0.numel()))
        rhs = F(y) + sum((c * kj for c, kj in zip(ci, k)), cs.MX.zeros(y0.numel())) / h
        k.append(cs.solve(G, rhs, "qr"))
    y1 = y0 + sum(m * ki for m, ki in zip(M, k))
    err = sum(e * ki for e, ki in zip(E, k) if e)
    return y1, err


def step_function(model: Model) -> cs.Function:
    """``fmu_step(x, m, zg, p, t, h) -> (x1, err)``: one RODAS4 step of size ``h`` from the
    continuous states ``x`` at ``t`` with the modes ``m`` held, Newton for ``z`` from the
    guess ``zg`` at every stage."""
    dae, p, t = model.dae, model.p, model.t
    nx = dae.x.numel() - dae.modes
    x, z = cs.SX(dae.x), cs.SX(dae.z)
    f = cs.Function("f", [x, z, p, t], [dae.ode[:nx]])
    xm, mm = cs.MX.sym("x", nx), cs.MX.sym("m", dae.modes)
    zg, pm = cs.MX.sym("zg", z.numel()), cs.MX.sym("p", p.numel())
    tm, h = cs.MX.sym("t"), cs.MX.sym("h")
    y = cs.MX.sym("y", nx + 1)
    state = cs.vertcat(y[:nx], mm)
    zy = zg
    if z.numel():
        zy = newton_solver("fmu_step_z", algebraic(model), "fast_newton")(zg, state, pm, y[nx])
    rates = cs.vertcat(f(state, zy, pm, y[nx]), 1)
    F = cs.Function("F", [y, mm, zg, pm], [rates])
    jac = cs.Function("J", [y, mm, zg, pm], [cs.jacobian(rates, y)])
    y0 = cs.vertcat(xm, tm)
    y1, err = rosenbrock_step(lambda v: F(v, mm, zg, pm), jac(y0, mm, zg, pm), y0, h)
    args, names = [xm, mm, zg, pm, tm, h], ["x", "m", "zg", "p", "t", "h"]
    return cs.Function("fmu_step", args, [y1[:nx], err[:nx]], names, ["x1", "err"])
