"""One step of the co-simulation FMU's integrator, generated as C with the model's functions.

The integrator is ROS2, the two-stage linearly implicit Rosenbrock method of Verwer, Spee,
Blom and Hundsdorfer (1999), on the model's continuous states ``x`` with the algebraic
unknowns solved inside the rates (``x' = f(x, z(x, t), p, t)``) and time appended as a state
(``t' = 1``), so ``J`` below holds the time derivative too. With ``y = (x, t)``,
``F(y) = (f, 1)``, ``J = dF/dy`` at ``y_n`` and ``gamma = 1 + 1/sqrt(2)``::

    (I - gamma h J) k1 = F(y_n)
    (I - gamma h J) k2 = F(y_n + h k1) - 2 k1
    y_n+1 = y_n + h (3 k1 + k2) / 2,    error estimate  h (k1 + k2) / 2

(second order, L-stable: stiff circuits take long steps; the estimate is the difference to
the linearly implicit Euler step ``y_n + h k1``). Chosen over an explicit method because the
models exported are often stiff (an RC ladder's time constants span N^2), and over
implicit Runge-Kutta because each step costs two linear solves with one matrix, no Newton
iteration: the step is one straight-line CasADi function (its sparse QR generated as C), and
the FMU's C code does only the step-size control and the events.
"""

from __future__ import annotations

import casadi as cs
import numpy as np

from acausal import Model

from ..functions import newton_solver

GAMMA = 1.0 + 1.0 / np.sqrt(2.0)


def step_function(model: Model) -> cs.Function:
    """``fmu_step(x, m, zg, p, t, h) -> (x1, err)``: one ROS2 step of size ``h`` from the
    continuous states ``x`` at ``t`` with the modes ``m`` held, Newton for ``z`` from the
    guess ``zg`` at both stages."""
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
        g = cs.Function("g", [z, x, p, t], [dae.alg])
        zy = newton_solver("fmu_step_z", g, "fast_newton")(zg, state, pm, y[nx])
    rates = cs.vertcat(f(state, zy, pm, y[nx]), 1)
    F = cs.Function("F", [y, mm, zg, pm], [rates])
    FJ = cs.Function("FJ", [y, mm, zg, pm], [rates, cs.jacobian(rates, y)])
    y0 = cs.vertcat(xm, tm)
    f0, J = FJ(y0, mm, zg, pm)
    A = cs.MX.eye(nx + 1) - GAMMA * h * J
    k1 = cs.solve(A, f0, "qr")
    k2 = cs.solve(A, F(y0 + h * k1, mm, zg, pm) - 2 * k1, "qr")
    y1 = y0 + h * (1.5 * k1 + 0.5 * k2)
    err = 0.5 * h * (k1 + k2)
    args, names = [xm, mm, zg, pm, tm, h], ["x", "m", "zg", "p", "t", "h"]
    return cs.Function("fmu_step", args, [y1[:nx], err[:nx]], names, ["x1", "err"])
