"""The co-simulation FMU's RODAS4 step (solvers.fmu.step) against closed forms: fourth order
on a smooth problem, and bounded errors with long steps on a stiff one (L-stability)."""

import casadi as cs
import numpy as np

from solvers.fmu.step import rosenbrock_step


def integrate(lam, n):
    """``u' = lam (u - sin t) + cos t``, ``u(0) = 0`` (exact: ``sin t``) to t = 1 in ``n``
    steps, time appended as a state; the error at t = 1 and the last error estimate."""
    y, h = cs.MX.sym("y", 2), cs.MX.sym("h")
    rhs = cs.vertcat(lam * (y[0] - cs.sin(y[1])) + cs.cos(y[1]), 1)
    F = cs.Function("F", [y], [rhs])
    y1, err = rosenbrock_step(F, cs.jacobian(rhs, y), y, h)
    step = cs.Function("step", [y, h], [y1, err])
    v, e = np.zeros(2), None
    for _ in range(n):
        v, e = (np.asarray(a).ravel() for a in step(v, 1.0 / n))
    return abs(v[0] - np.sin(1.0)), abs(e[0])


def test_fourth_order_on_a_smooth_problem():
    errors = [integrate(-2.0, n)[0] for n in (10, 20, 40)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 4.0) < 0.1), orders  # measured 4.03, 4.01


def test_stiff_problem_with_long_steps_stays_accurate():
    # lam h = -1e5: an explicit method would blow up; the error stays at 2e-9 (measured)
    error, estimate = integrate(-1e6, 10)
    assert error < 1e-8 and estimate < 1e-7  # the estimate: 5.4e-9
