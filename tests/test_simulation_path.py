"""The simulation path: explicit start values, IDAS called directly, breakpoints.

``Simulator.run`` calls IDAS on numpy arrays from the initializer's consistent start;
``Simulator.sim`` composes the same steps as one CasADi function: two code paths that
must give the same numbers. Sensitivities through a breakpoint are checked against
central finite differences, and explicit start values against the values given.
"""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from examples.references.sine_rc import ImplicitCubicResistor
from solvers import simulate, simulator
from solvers.initialize import build_initializer, own_starts

GRID = np.linspace(0.0, 2.0, 81)


def stepped_circuit(start_time: float = 0.3) -> ac.System:
    """A 2 V step at ``start_time`` charging C through the cubic resistor (Newton on its
    current): a breakpoint with an algebraic unknown that jumps there."""
    s = ac.System("stepped")
    src = el.StepVoltage("V", V=2.0, start_time=start_time)
    res = ImplicitCubicResistor("Rx", R=1.0, a=0.5)
    cap = el.Capacitor("C", C=0.3, v0=0.0)
    gnd = el.Ground("G")
    s.connect(src.p, res.p)
    s.connect(res.n, cap.p)
    s.connect(cap.n, src.n, gnd.p)
    return s


def test_own_starts_on_plain_rows():
    x, z, t = cs.SX.sym("x", 3), cs.SX.sym("z"), cs.SX.sym("t")
    a, b = cs.SX.sym("a"), cs.SX.sym("b")
    unknowns = cs.vertcat(z, t)
    rows = cs.vertcat(x[0] - a, (x[1] - 2 * b) + 0.0, x[2] - 1.5)
    got = own_starts(rows, x, unknowns)
    fun = cs.Function("c", [a, b], [got])
    np.testing.assert_array_equal(np.asarray(fun(0.25, 4.0)).ravel(), [0.25, 8.0, 1.5])
    assert own_starts(cs.vertcat(x[0] - a, x[1] + x[2], x[2]), x, unknowns) is None  # two unknowns
    assert own_starts(cs.vertcat(2 * x[0], x[1], x[2]), x, unknowns) is None  # slope 2
    assert own_starts(cs.vertcat(x[0] * a, x[1], x[2]), x, unknowns) is None  # slope a parameter
    assert own_starts(cs.vertcat(x[0] - z, x[1], x[2]), x, unknowns) is None  # a Newton unknown
    assert own_starts(cs.vertcat(x[0] - t, x[1], x[2]), x, unknowns) is None  # time
    assert own_starts(cs.vertcat(x[1], x[0], x[2]), x, unknowns) is None  # not each its own


def test_fixed_starts_are_taken_directly():
    model = ac.compile(stepped_circuit())
    init = build_initializer(model, 0.0)
    names = [f.name() for f in init.fun.find_functions()]
    assert "init_x" in names and "init_w" not in names  # Newton on z alone
    res = simulate(model, grid=GRID, params={"C.v0": 0.7})
    assert res["C.v"][0] == 0.7
    # before the step: the capacitor discharges through the resistor, R i + a i^3 = -v
    i = res["Rx.i"][0]
    assert i + 0.5 * i**3 == pytest.approx(-0.7, abs=1e-12)


def test_direct_run_equals_the_composed_function():
    model = ac.compile(stepped_circuit())
    p = np.asarray(model.parameter_vector(), dtype=float)
    sim = simulator(model, GRID, 1e-9, 1e-11, p)
    assert sim.breakpoints == (0.3,) and len(sim.integrators) == 2
    x, z = sim.run(p)
    xs, zs = (np.asarray(v) for v in sim.sim(p))
    np.testing.assert_allclose(x, xs, rtol=0, atol=1e-13)
    np.testing.assert_allclose(z, zs, rtol=0, atol=1e-13)
    # up to the step (the output at 0.3 is the value just before it) nothing moves
    before = GRID <= 0.3
    assert np.all(x[:, before] == 0.0) and np.all(z[:, before] == 0.0)
    # after it, Newton restarted the current: i(0.3+) from R i + a i^3 = 2 - v(0.3) = 2
    res = simulate(model, grid=np.array([0.0, 0.3, 0.30001]), rtol=1e-10, atol=1e-12)
    i = res["Rx.i"][-1]
    assert i + 0.5 * i**3 == pytest.approx(2.0 - res["C.v"][-1], abs=1e-9)


def test_sensitivities_through_a_breakpoint_match_finite_differences():
    model = ac.compile(stepped_circuit())
    tol = {"grid": GRID, "rtol": 1e-10, "atol": 1e-12}
    res = simulate(model, **tol, sensitivities=["Rx.a", "C.C"])
    for param, value in (("Rx.a", 0.5), ("C.C", 0.3)):
        h = 1e-3 * value  # central differences: O(h^2) 1e-7, IDAS's noise / h 1e-7
        hi = simulate(model, **tol, params={param: value + h})
        lo = simulate(model, **tol, params={param: value - h})
        for name in ("C.v", "Rx.i", "Rx.v"):
            fd = (hi[name] - lo[name]) / (2 * h)
            scale = np.max(np.abs(fd))
            # measured 5e-7 of the scale for each
            assert np.max(np.abs(res.sensitivity(name, param) - fd)) < 2e-6 * scale
