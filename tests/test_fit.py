"""ln.fit: sensitivity gradients against finite differences, recovery of known truths (linear
and cubic resistors) from a measurement elsewhere in the circuit, failure counting with the
constraints off, several experiments, physical parameters, the fitted system."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from examples.references.sine_rc import TRUTH_TOL, CubicResistor, T, measure, rc
from learning.core import FitProgress
from learning.fitting.objective import Objective
from solvers import simulate

from .shared import map_error, unknown


@pytest.fixture(scope="module")
def linear_data():
    return measure(el.Resistor("R1", R=2.0))


def rms_error(fit, data):
    """RMS of the fitted system's simulated C.v against the data, over the data's range."""
    res = simulate(fit.system, grid=data["t"], rtol=1e-8, atol=1e-10)
    return np.sqrt(np.mean((res["C.v"] - data["C.v"]) ** 2)) / np.ptp(data["C.v"])


# -- gradients ----------------------------------------------------------------------------
def test_sensitivity_gradient_matches_central_differences(linear_data):
    data, _ = linear_data
    Rx = unknown()
    s = rc(Rx)
    names = Rx.parameter_names() + ["C.C"]  # a physical parameter of a known component too
    # tight tolerances: the differences divide the integration error by h
    obj = Objective([(s, data)], names, rtol=1e-12, atol=1e-14)
    x = np.array(list(Rx.initial_params().values()) + [1.0]) + [0.3, -0.2, 0.1, 0.4, -0.5, 0.2]
    g = obj.gradient(x)
    h = 1e-4
    fd = np.array([(obj.loss(x + h * e) - obj.loss(x - h * e)) / (2 * h) for e in np.eye(x.size)])
    assert np.linalg.norm(g - fd) / np.linalg.norm(g) < 1e-5  # measured 3e-8
    assert np.all(np.abs(g - fd) <= 1e-5 * np.abs(g) + 1e-7 * np.linalg.norm(g))
    # the Jacobian column by column: dr/dp against differences of the residual vectors
    J = obj.jacobian(x)
    for k, e in enumerate(np.eye(x.size)):
        col = (obj.residuals(x + h * e) - obj.residuals(x - h * e)) / (2 * h)
        assert np.allclose(J[:, k], col, rtol=1e-5, atol=1e-7 * np.abs(J).max())
    assert obj.n_failed == 0


# -- recovering a known truth -------------------------------------------------------------
def test_least_squares_recovers_a_linear_resistor(linear_data):
    data, i_true = linear_data
    Rx = unknown()
    s = rc(Rx)
    start = Rx.initial_params()
    seen = []
    fit = ln.fit(s, data, progress=seen.append, progress_interval=0.0)
    assert fit.success and fit.n_failed == 0
    assert fit.loss < 1e-10 * fit.loss_history[0]  # measured 13.3 -> 5.5e-11
    # (9 Gauss-Newton iterations to 1e-9 of the start loss, 15-40 in all, measured: the
    # polish within the integration error follows rounding, so no count is asserted)
    # the learned v-i map against v = 2 i over the currents the data visit (|i| <= 1.6)
    assert np.ptp(i_true) > 2.5 and i_true.min() < 0 < i_true.max()
    assert map_error(fit, 3, i_true, lambda i: 2.0 * i) < 0.03  # measured 1e-5
    assert rms_error(fit, data) < 0.01  # measured 5e-7
    # the fitted system simulates as fitted, and fit.simulate applies the same values
    a = simulate(fit.system, grid=T)["C.v"]
    assert np.allclose(a, fit.simulate(grid=T)["C.v"], rtol=0, atol=1e-12)
    assert fit.weights["Rx"] == Rx.weights(fit.params)
    assert fit.system is not s and fit.start == start  # a new system; the user's unchanged
    assert Rx.initial_params() == start
    assert fit.model.parameters["Rx.theta_x1"] == fit.params["Rx.theta_x1"]
    # progress: one report per evaluation plus the final one, best loss non-increasing
    assert isinstance(seen[-1], FitProgress) and seen[-1].best == fit.loss
    assert len(seen) == len(fit.loss_history) + 1
    assert all(b2 <= b1 for b1, b2 in zip([p.best for p in seen], [p.best for p in seen][1:]))


def test_powell_reaches_a_comparable_loss_on_a_smaller_law(linear_data):
    data, i_true = linear_data
    fits = {}
    for method in ("least_squares", "powell"):
        Rx = unknown(order=2)  # 3 raw parameters: w_f3, w_x1, w_x3
        fits[method] = ln.fit(rc(Rx), data, method=method, max_nfev=200, progress=False)
    lsq, powell = fits["least_squares"], fits["powell"]
    assert powell.n_failed == 0 and lsq.n_failed == 0
    assert powell.loss < 1e-10 * powell.loss_history[0]  # measured 13.3 -> 2.7e-14
    assert lsq.loss < 1e-10 * lsq.loss_history[0]  # measured 6e-15
    assert map_error(powell, 2, i_true, lambda i: 2.0 * i) < 0.05  # measured 4e-8
    assert rms_error(powell, data) < 0.01  # measured 1e-8


def test_nonlinear_cubic_truth_is_recovered_over_the_data_range():
    a, b = 1.0, 0.5
    data, i_true = measure(CubicResistor("Rc", a=a, b=b))
    Rx = unknown(order=2)  # i + w_f3 i^3 = w_x1 v + w_x3 v^3
    fit = ln.fit(rc(Rx), data, progress=False)
    assert fit.n_failed == 0  # (18-33 Jacobians, measured: a count along the path)
    # truth v = a i + b i^3, i.e. i + (b/a) i^3 = v / a: w_f3 = 0.5, w_x1 = 1, w_x3 = 0
    assert np.ptp(i_true) > 2.5  # |i| up to 1.5: the cubic term is 2/3 of the linear one
    err = map_error(fit, 2, i_true, lambda i: a * i + b * i**3)
    assert err < 0.03  # measured 2e-8
    w = fit.weights["Rx"]
    assert w["w_f3"] == pytest.approx(b / a, rel=1e-3) and w["w_x1"] == pytest.approx(
        1 / a, rel=1e-3
    )
    assert rms_error(fit, data) < 0.01
    # a linear law cannot follow the cubic: its best fit misses by far more
    lin = ln.fit(rc(unknown(order=1)), data, progress=False)
    assert lin.loss > 1e3 * max(fit.loss, 1e-12)


# -- failed simulations -------------------------------------------------------------------
def test_failed_simulations_are_counted_with_the_constraints_off(linear_data):
    data, _ = linear_data
    start = {"x1": 0.05, "f3": 0.5, "x3": 0.5}  # a weak linear term: close to w_x1 = 0
    budget = dict(max_nfev=15, progress=False)  # same start, same budget
    off = ln.fit(rc(unknown(constraint=None, init=start)), data, **budget)
    on = ln.fit(rc(unknown(constraint="dissipative", init=start)), data, **budget)
    assert off.loss_history[0] == pytest.approx(on.loss_history[0], rel=1e-6)  # same start
    # unconstrained, the same budget met 1-4 failed simulations (a count along the path:
    # tests/test_fit_practice.py hands the objective sets known to fail); each is kept
    assert off.n_failed == len(off.failures)
    assert all("failed" in f.message for f in off.failures)
    assert on.n_failed == 0
    assert np.isnan(off.loss_history).sum() <= off.n_failed  # failures logged as nan
    assert on.loss < 1e-3 * on.loss_history[0]  # measured 9.7 -> 4e-4 in 15 evaluations
    assert min(w for k, w in on.weights["Rx"].items() if k.startswith("w_x")) >= 0


# -- several experiments, physical parameters, errors ---------------------------------------
@pytest.mark.parametrize("method", ["least_squares", "collocation"])
def test_two_experiments_are_fitted_jointly(linear_data, method):
    data1, i1 = linear_data
    t2 = np.linspace(0.5, 4.0, 36)  # starts after t_start = 0: simulated from 0, compared here
    data2, i2 = measure(el.Resistor("R1", R=2.0), grid=np.r_[0.0, t2], V=1.5, f=0.7)
    data2 = {"t": t2, "C.v": data2["C.v"][1:]}
    s1, s2 = rc(unknown(), name="rc1"), rc(unknown(), V=1.5, f=0.7, name="rc2")
    exps = [(s1, data1), (s2, data2)]
    fit = ln.fit(None, None, experiments=exps, method=method, progress=False)
    assert fit.n_failed == 0 and len(fit.systems) == 2
    tol = dict(rtol=fit.rtol, atol=fit.atol)  # those of the fit
    # the reported loss is the sum of both experiments' squared errors, recomputed here
    loss = sum(
        np.sum((fit.simulate(k, grid=grid, **tol)["C.v"][k:] - d["C.v"]) ** 2)
        for k, (grid, d) in enumerate([(T, data1), (np.r_[0.0, t2], data2)])
    )
    assert loss == pytest.approx(fit.loss, rel=1e-6, abs=1e-12)
    i_all = np.concatenate([i1, i2])
    assert map_error(fit, 3, i_all, lambda i: 2.0 * i) < 0.03


def test_physical_parameter_of_a_known_component(linear_data):
    data, _ = linear_data
    s = rc(el.Resistor("R1", R=1.0))  # no Unknown: fit the resistance itself
    fit = ln.fit(s, data, physical=["R1.R"], progress=False)
    assert fit.params["R1.R"] == pytest.approx(2.0, rel=1e-6)
    assert fit.start == {"R1.R": 1.0}
    assert simulate(fit.system, grid=T).params["R1.R"] == pytest.approx(2.0, rel=1e-6)
    assert simulate(s, grid=T).params["R1.R"] == 1.0  # the user's system is unchanged
    # weighted: doubling every weight doubles the loss at the same point
    obj1 = Objective([(s, data)], ["R1.R"])
    obj2 = Objective([(s, data)], ["R1.R"], weights={"C.v": 2.0})
    assert obj2.loss([1.5]) == pytest.approx(2 * obj1.loss([1.5]), rel=1e-12)


def test_errors_name_what_to_fix(linear_data):
    data, _ = linear_data
    with pytest.raises(ac.ModelError, match="colocation"):  # a misspelled method is named
        ln.fit(rc(unknown()), data, method="colocation")
    with pytest.raises(ac.ModelError, match="C.vv"):
        ln.fit(rc(unknown()), {"t": T, "C.vv": data["C.v"]}, progress=False)
    with pytest.raises(ac.ModelError, match="R1.RR"):
        ln.fit(rc(el.Resistor("R1")), data, physical=["R1.RR"], progress=False)
    with pytest.raises(ac.ModelError, match="nothing to fit"):
        ln.fit(rc(el.Resistor("R1")), data, progress=False)
    # a start that does not simulate: raw g_f(i) = i - i^3 + 0.1 i^5 folds at |i| = 0.6
    bad = unknown(constraint=None, init={"f3": -1.0})
    with pytest.raises(ac.ModelError, match="start parameters do not simulate"):
        ln.fit(rc(bad), data, progress=False)


@pytest.mark.parametrize("method", ["least_squares", "collocation"])
def test_the_input_comes_from_data(method):
    """The source plays a measured input ``u`` (irregular samples at the data times,
    linearly interpolated: ``SignalVoltage(v=(t, u))``); R = 2 is recovered from C.v."""
    rng = np.random.default_rng(7)
    u = 2.0 * np.sin(1.3 * T) + np.sign(np.sin(0.8 * T)) + 0.3 * rng.standard_normal(T.size)

    def circuit(resistor):
        s = ac.System("measured_input")
        src = el.SignalVoltage("V", v=(T, u))
        C, G = el.Capacitor("C", C=1.0, v0=0.0), el.Ground("G")
        s.connect(src.p, resistor.p)
        s.connect(resistor.n, C.p)
        s.connect(C.n, src.n, G.p)
        return s

    truth = simulate(circuit(el.Resistor("R1", R=2.0)), grid=T, **TRUTH_TOL)
    assert np.allclose(truth["V.v"], u, atol=1e-12)  # the source plays the samples
    data = {"t": T, "C.v": truth["C.v"]}
    fit = ln.fit(circuit(unknown(order=1)), data, method=method, progress=False)
    assert fit.success and fit.n_failed == 0
    w = fit.weights["Rx"]  # w_f1 i = w_x1 v
    assert w["w_f1"] / w["w_x1"] == pytest.approx(2.0, rel=1e-6)  # measured 3e-8, 3e-11
    assert fit.loss < 1e-11  # measured 4e-14 (least squares), 1.4e-13 (collocation)
