"""ln.fit(method="collocation"): direct collocation (Radau IIA) with IPOPT against least
squares on IDAS, the reported loss against an independent simulation, convergence of the
collocation error with the mesh, and dissipativity as trajectory constraints."""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from examples.references.sine_rc import CubicResistor, T, measure, rc
from learning.fitting.collocation import build, collocate, radau
from learning.fitting.objective import Objective
from learning.laws import unknowns
from solvers import simulate
from tests.shared import map_error, unknown

TOL = dict(rtol=1e-8, atol=1e-10)  # those of the fit


@pytest.fixture(scope="module")
def cubic_data():
    return measure(CubicResistor("Rc", a=1.0, b=0.5))


def simulated_loss(fit, data):
    """``sum (y - ym)^2`` of an independent IDAS simulation of the fitted system (at the
    fit's tolerances)."""
    res = simulate(fit.system, grid=data["t"], rtol=fit.rtol, atol=fit.atol)
    return float(np.sum((res["C.v"] - data["C.v"]) ** 2))


def test_radau_differentiates_polynomials_of_its_degree_exactly():
    tau, D = radau(3)
    assert tau[-1] == pytest.approx(1.0) and np.all(np.diff(tau) > 0)
    nodes = np.concatenate([[0.0], tau])
    for k in range(4):  # d/dt t^k at the collocation points, from the values at the nodes
        assert np.allclose(D @ nodes**k, k * tau ** max(k - 1, 0) if k else 0, atol=1e-12)


def test_collocation_recovers_the_cubic_truth_like_least_squares(cubic_data):
    data, i_true = cubic_data
    fits = {
        m: ln.fit(rc(unknown(order=2)), data, method=m, progress=False)
        for m in ("collocation", "least_squares")
    }
    col, lsq = fits["collocation"], fits["least_squares"]
    assert col.success and col.n_failed == 0 and "Solve_Succeeded" in col.message
    # one simulation to check the start, one for the start guess on the collocation
    # times, one for the true loss at the result (least squares: measured 39)
    assert col.n_simulations == 3 and lsq.n_simulations > 10
    # truth v = i + 0.5 i^3: w_f3 = 0.5, w_x1 = 1, w_x3 = 0
    assert map_error(col, 2, i_true, lambda i: i + 0.5 * i**3) < 0.01  # measured 3e-6
    w = col.weights["Rx"]
    assert w["w_f3"] == pytest.approx(0.5, rel=1e-3) and w["w_x1"] == pytest.approx(1, rel=1e-3)
    # the loss from 13 down to the collocation error's level (measured 5.9e-11; least
    # squares, which fits the integrator itself, 1.1e-14)
    start = col.loss_history[0]
    assert col.loss < 1e-10 * start and lsq.loss < 1e-10 * start
    # the reported loss is a simulation's, not the collocated objective: an independent
    # IDAS run at the returned parameters gives it again (same tolerances)
    assert col.loss == pytest.approx(simulated_loss(col, data), rel=1e-6, abs=1e-14)
    assert col.loss_history[-1] == col.loss and col.n_iterations > 0


def test_collocated_and_simulated_losses_agree_to_the_collocation_error(cubic_data):
    """At the optimum the residual is the collocation error e (the data come from IDAS at
    1e-10): with Radau IIA of 3 points, order 5 at the mesh points, e shrinks 2^5 = 32
    times when the pieces halve, so the loss ~ |e|^2 some 1000 times; the collocated
    objective and the simulated loss differ by at most about |e|^2 + 2 |e| |r|."""
    data, _ = cubic_data
    s = rc(unknown(order=2))
    names = unknowns([s])[0].parameter_names()
    start = np.array([ac.compile(s).parameters[n] for n in names])
    losses = {}
    for sub in (1, 2):
        obj = Objective([(s, data)], names, **TOL)
        out = collocate(obj.exps, names, start, **TOL, options={"subintervals": sub})
        assert out.success
        losses[sub] = (out.objective, obj.loss(out.x))
    (c1, s1), (c2, s2) = losses[1], losses[2]
    assert s1 < 1e-10 and c1 < 1e-10  # measured 5.9e-11 and 4.3e-11
    assert s1 / s2 > 100 and c1 / c2 > 100  # measured 4200 and 6500
    assert abs(np.sqrt(s1) - np.sqrt(c1)) < 0.5 * np.sqrt(s1)  # measured 7.7e-6 vs 6.6e-6
    assert abs(np.sqrt(s2) - np.sqrt(c2)) < 0.5 * np.sqrt(s2)


def test_linear_resistor_with_the_default_law():
    data, i_true = measure(el.Resistor("R1", R=2.0))
    fit = ln.fit(rc(unknown()), data, method="collocation", progress=False)
    assert fit.success and fit.n_failed == 0
    assert map_error(fit, 3, i_true, lambda i: 2.0 * i) < 0.01  # measured 2e-7
    assert fit.loss < 1e-10 * fit.loss_history[0]  # measured 13 -> 4e-14
    # the fitted values are the system's now, as for the other methods
    assert simulate(fit.system, grid=T).params["Rx.theta_x1"] == fit.params["Rx.theta_x1"]


def test_dissipativity_as_trajectory_constraints():
    """An active truth (R = -2, power i v < 0) with an unconstrained linear law
    i = w_x1 v: free, the fit finds w_x1 = -1/2; with power >= 0 at every collocation
    point it stops on the boundary w_x1 = 0 (power w_x1 v^2)."""
    data, _ = measure(el.Resistor("R1", R=-2.0))

    def law():
        return unknown(order=1, constraint=None, init={"x1": -0.3})

    free = ln.fit(rc(law()), data, method="collocation", progress=False)
    assert free.weights["Rx"]["w_x1"] == pytest.approx(-0.5, rel=1e-6)
    assert free.loss < 1e-9  # measured 3e-11
    held = ln.fit(
        rc(law()), data, method="collocation", progress=False, options={"dissipative": True}
    )
    assert held.success and held.n_failed == 0
    assert abs(held.weights["Rx"]["w_x1"]) < 1e-6  # measured -1.1e-9
    res = simulate(held.system, grid=np.linspace(0.0, 6.0, 601), **TOL)
    power = res["Rx.i"] * res["Rx.v"]
    assert power.min() > -1e-6  # measured -1e-8 (free: -72)
    assert held.loss > 1e3  # measured 2467: the active truth is out of reach


def test_unknown_options_are_named():
    data, _ = measure(el.Resistor("R1", R=2.0))
    with pytest.raises(ac.ModelError, match="max_iterations"):
        ln.fit(
            rc(unknown()), data, method="collocation", progress=False, options={"max_iterations": 5}
        )
    few = ln.fit(rc(unknown()), data, method="collocation", progress=False, options={"max_iter": 2})
    assert not few.success and "Maximum_Iterations" in few.message and few.n_iterations == 2
    assert "max_iter" in few.message  # what to do about it


def test_assembled_derivatives_equal_casadis_own():
    """The constraint Jacobian and the Lagrangian's Hessian, assembled from the mapped
    per-piece ones, against CasADi differentiating the whole NLP (expanded to SX), at a
    random point with random multipliers; dissipativity rows included."""
    grid = np.linspace(0.0, 2.0, 9)
    data, _ = measure(CubicResistor("Rc", a=1.0, b=0.5), grid=grid)
    s = rc(unknown(order=2))
    names = unknowns([s])[0].parameter_names()
    start = np.array([ac.compile(s).parameters[n] for n in names])
    obj = Objective([(s, data)], names, **TOL)
    prob = build(obj.exps, names, start, **TOL, options={"dissipative": True})
    w, f, g = prob.nlp["x"], prob.nlp["f"], prob.nlp["g"]
    assert prob.ubg.size > prob.lbg[prob.ubg == 0].size  # power rows are there
    rng = np.random.default_rng(1)
    w0 = prob.w0 + 0.1 * rng.standard_normal(prob.w0.size)
    lam, sigma = rng.standard_normal(g.numel()), 0.7
    whole = cs.Function("whole", [w], [f, g]).expand()
    ws = cs.SX.sym("w", w.numel())
    fs, gs = whole(ws)
    lag = sigma * fs + cs.dot(cs.DM(lam), gs)
    J_ref = cs.Function("J", [ws], [cs.jacobian(gs, ws)])(w0).full()
    H_ref = cs.Function("H", [ws], [cs.triu(cs.hessian(lag, ws)[0])])(w0).full()
    g_val, J = (a.full() for a in prob.jac_g(w0, []))
    H = prob.hess_lag(w0, [], sigma, lam).full()
    assert np.allclose(g_val.ravel(), cs.Function("g", [ws], [gs])(w0).full().ravel(), atol=1e-12)
    assert np.max(np.abs(J - J_ref)) <= 1e-10 * max(1.0, np.max(np.abs(J_ref)))
    assert np.max(np.abs(H - H_ref)) <= 1e-10 * max(1.0, np.max(np.abs(H_ref)))
    assert np.count_nonzero(H_ref) > w.numel()  # a real test: off-diagonal coupling too


def test_a_step_inside_a_mesh_interval_becomes_a_mesh_point():
    """A 3 V step at t = 0.73 (between the data times 0.7 and 0.8): the mesh gets the
    step's time, so the collocated fit is as accurate as with a smooth input, and the
    recovered resistance is the truth (with the mesh on the data times only: R 1.990,
    loss 7e-4)."""

    def circuit(resistor):
        s = ac.System("step_rc")
        src = el.StepVoltage("V", V=3.0, start_time=0.73)
        C, G = el.Capacitor("C", C=1.0, v0=0.0), el.Ground("G")
        s.connect(src.p, resistor.p)
        s.connect(resistor.n, C.p)
        s.connect(C.n, src.n, G.p)
        return s

    grid = np.linspace(0.0, 4.0, 41)
    truth = simulate(circuit(el.Resistor("R1", R=2.0)), grid=grid, rtol=1e-10, atol=1e-12)
    data = {"t": grid, "C.v": truth["C.v"]}
    fit = ln.fit(circuit(unknown(order=1)), data, method="collocation", progress=False)
    assert fit.success
    w = fit.weights["Rx"]  # i = w_x1 v / w_f1: R = w_f1 / w_x1
    assert w["w_f1"] / w["w_x1"] == pytest.approx(2.0, rel=1e-6)  # measured 2.1e-10
    assert fit.loss < 1e-10  # measured 9e-15


def test_progress_is_reported_per_ipopt_iteration():
    data, _ = measure(el.Resistor("R1", R=2.0))
    seen = []
    fit = ln.fit(
        rc(unknown()), data, method="collocation", progress=seen.append, progress_interval=0
    )
    # the start's simulation, IPOPT's iterations 0..n, the end (the fitted parameters'
    # simulation, reported once)
    steps = seen[1:-1]
    assert [p.iteration for p in steps] == list(range(fit.n_iterations + 1))
    assert len(seen) == fit.n_iterations + 3
    # the collocated objective falls from the start's (the simulated loss, up to the
    # collocation error of the start trajectory) to the level of the final loss
    assert steps[0].loss == pytest.approx(fit.loss_history[0], rel=1e-3)
    assert steps[-1].loss < 1e-9 and seen[-1].best == fit.loss
