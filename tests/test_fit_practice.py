"""ln.fit on what identifying a real positioning stage needs: the same optimum in any units,
simulation tolerances from the data's noise, parameters of each experiment (its initial
state, its own start time), warm starts from a fit's own result, input scales of a
polynomial law, a learned law as a curve, every failed simulation kept, and collocation's
progress and time limit."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import translational as tr
from examples.references.sine_rc import T, measure, rc
from learning.fitting.objective import Objective
from learning.fitting.tolerances import noise_level
from solvers import simulate
from tests.shared import unknown

TRUTH = dict(rtol=1e-12, atol=1e-18)
M, D, F = 0.5, 20.0, 1e-3  # kg, N s/m, N: micrometre motions in SI units


def stage(m=1.0, d=10.0, force=F, v0=0.0, name="stage"):
    """A mass on a viscous guide driven by a known force ``force sin(2 t)``."""
    s = ac.System(name)
    mass = tr.Mass("mass", m=m, s0=0.0, v0=v0)
    guide, drive, ground = (
        tr.Damper("damper", d=d),
        tr.Force("force", f=force * ac.sin(2 * ac.time)),
        tr.Fixed("fixed"),
    )
    s.connect(drive.flange, mass.flange_a)
    s.connect(mass.flange_b, guide.flange_a)
    s.connect(guide.flange_b, ground.flange)
    return s


def positions(t, noise=0.0, seed=11, **kw):
    """The truth's measured positions (m), with white noise ``noise`` times their size."""
    s = simulate(stage(m=M, d=D, **kw), grid=t, t_start=t[0], **TRUTH)["mass.s"]
    rng = np.random.default_rng(seed)
    return s + noise * np.max(np.abs(s)) * rng.standard_normal(t.size)


# -- 1. units ---------------------------------------------------------------------------------
def test_the_same_fit_in_metres_and_in_micrometres_reaches_the_same_optimum():
    t = np.linspace(0.0, 5.0, 101)
    s = positions(t, noise=1e-3)
    physical = ["mass.m", "damper.d"]
    si = ln.fit(stage(), {"t": t, "mass.s": s}, physical=physical, progress=False)
    # micrometres and grams: lengths x 1e6, masses x 1e3, forces (g um / s^2) x 1e9
    um = ln.fit(
        stage(m=1e3, d=1e4, force=F * 1e9),
        {"t": t, "mass.s": s * 1e6},
        physical=physical,
        progress=False,
    )
    assert si.success and um.success and si.message.startswith("converged")
    for n in physical:
        assert um.params[n] / 1e3 == pytest.approx(si.params[n], rel=1e-6)  # measured 2e-10
    assert um.loss / 1e12 == pytest.approx(si.loss, rel=1e-6)
    # and at the noise's level, not where an absolute gtol stops a fit in SI units (before
    # scaling: m = 1.11 after 2 Jacobians); the start was m = 1, d = 10
    assert si.params["mass.m"] == pytest.approx(M, rel=0.02)  # measured 7.6e-4
    assert si.params["damper.d"] == pytest.approx(D, rel=1e-3)  # measured 9.4e-5
    # why it stopped, in words
    short = ln.fit(stage(), {"t": t, "mass.s": s}, physical=physical, progress=False, max_nfev=2)
    assert not short.success and short.message.startswith("stopped: the budget")
    powell = ln.fit(
        stage(), {"t": t, "mass.s": s}, physical=physical, method="powell", progress=False
    )
    assert powell.message.startswith("converged: the loss and the parameters stopped changing")


# -- 2. tolerances from the noise ---------------------------------------------------------------
def test_tolerances_follow_the_noise_and_do_not_move_the_optimum():
    t = np.linspace(0.0, 5.0, 101)
    names = ["mass.m", "damper.d"]
    chosen = {}
    for nu in (3e-4, 3e-3):
        s = positions(t, noise=nu)
        data = {"t": t, "mass.s": s}
        fit = ln.fit(stage(), data, physical=names, progress=False)
        a = np.max(np.abs(s))
        estimate = noise_level(s) / a
        assert 0.5 * nu < estimate < 2 * nu  # the estimator (measured 0.93 nu, 0.85 nu)
        # the rule: rtol = clip(1e-4 noise, 1e-8, 1e-6), atol = 1e-2 rtol max|ym|
        assert fit.rtol == pytest.approx(1e-4 * estimate, rel=1e-12)
        assert fit.atol == pytest.approx(1e-2 * fit.rtol * a, rel=1e-12)
        assert "chosen from the data" in fit.message and f"{fit.rtol:.3g}" in fit.message
        chosen[nu] = fit.rtol
        # the optimum against one at tight tolerances, in units of the parameters'
        # noise-induced standard deviations sigma (J^T J)^-1 (J: IDAS sensitivities)
        tight = ln.fit(stage(), data, physical=names, progress=False, rtol=1e-11, atol=1e-13 * a)
        p = np.array([tight.params[n] for n in names])
        J = Objective([(stage(), data)], names, rtol=1e-11, atol=1e-13 * a).jacobian(p)
        sd = nu * a * np.sqrt(np.diag(np.linalg.inv(J.T @ J)))
        moved = np.abs([fit.params[n] - tight.params[n] for n in names])
        assert np.all(moved < 0.01 * sd)  # measured 3e-4 sd, 6e-4 sd
        assert np.all(np.abs(p - [M, D]) < 4 * sd)  # the truth is within the spread
    assert chosen[3e-3] == pytest.approx(10 * chosen[3e-4], rel=0.5)


def test_noise_free_rough_data_get_their_tolerances_from_the_residuals():
    """A noisy measured input makes the (noise-free) output look noisy to the estimator;
    the fitted model's residuals then show the truth, and a second pass runs at the
    tolerances they ask for."""
    rng = np.random.default_rng(7)
    u = 2.0 * np.sin(1.3 * T) + 0.3 * rng.standard_normal(T.size)

    def circuit(resistor):
        s = ac.System("rough")
        src, C, G = (
            el.SignalVoltage("V", v=(T, u)),
            el.Capacitor("C", C=1.0, v0=0.0),
            el.Ground("G"),
        )
        s.connect(src.p, resistor.p)
        s.connect(resistor.n, C.p)
        s.connect(C.n, src.n, G.p)
        return s

    y = simulate(circuit(el.Resistor("R1", R=2.0)), grid=T, rtol=1e-10, atol=1e-12)["C.v"]
    fit = ln.fit(circuit(unknown(order=1)), {"t": T, "C.v": y}, progress=False)
    first = 1e-4 * noise_level(y) / np.max(np.abs(y))
    assert first > 1e-7  # the data alone ask for little (measured 2e-7)
    assert f"a first pass ran at rtol {first:.3g}" in fit.message
    assert "chosen from the fit's residuals" in fit.message and fit.rtol == 1e-8
    w = fit.weights["Rx"]
    assert w["w_f1"] / w["w_x1"] == pytest.approx(2.0, rel=1e-6)


# -- 3. parameters of each experiment -------------------------------------------------------------
def test_each_experiment_has_its_own_initial_velocity_and_start_time():
    t1, t2 = np.linspace(0.0, 3.0, 61), np.linspace(1.0, 4.0, 61)  # the second starts at t = 1
    v1, v2 = 1e-4, -3e-4  # m/s, at each record's start
    data1 = {"t": t1, "mass.s": positions(t1, v0=v1)}
    data2 = {"t": t2, "mass.s": positions(t2, v0=v2)}

    def both(**options):
        return ln.fit(
            stage(d=D, name="first"),
            data1,
            experiments=[(stage(d=D, name="second"), data2)],
            physical=["mass.m"],
            experiment_params=["mass.v0"],
            t_start=[0.0, 1.0],
            progress=False,
            **options,
        )

    fit = both()
    assert set(fit.params) == {"mass.m", "mass.v0@0", "mass.v0@1"}
    assert fit.start == {"mass.m": 1.0, "mass.v0@0": 0.0, "mass.v0@1": 0.0}
    assert fit.params["mass.m"] == pytest.approx(M, rel=1e-6)  # measured 9e-9
    assert fit.params["mass.v0@0"] == pytest.approx(v1, rel=1e-6)  # measured 4e-8
    assert fit.params["mass.v0@1"] == pytest.approx(v2, rel=1e-6)  # measured 7e-8
    # each experiment's model and system carry its own values
    assert fit.values(1) == {"mass.m": fit.params["mass.m"], "mass.v0": fit.params["mass.v0@1"]}
    again = simulate(fit.systems[1], grid=t2, t_start=1.0, **TRUTH)["mass.s"]
    assert np.max(np.abs(again - data2["mass.s"])) < 1e-6 * np.max(np.abs(data2["mass.s"]))
    # x0 by plain name sets every copy
    other = both(x0={"mass.v0": 2e-4}, max_nfev=1)
    assert other.start["mass.v0@0"] == other.start["mass.v0@1"] == 2e-4
    with pytest.raises(ac.OptionError, match="t_start has 3 values for 2 experiments"):
        ln.fit(
            stage(), data1, experiments=[(stage(), data2)], physical=["mass.m"], t_start=[0, 1, 2]
        )
    with pytest.raises(ac.ModelError, match="mass.vv"):
        ln.fit(stage(), data1, experiment_params=["mass.vv"], progress=False)


# -- 4. warm starts -------------------------------------------------------------------------------
def test_a_network_continues_from_its_own_fitted_weights():
    data, _ = measure(el.Resistor("R1", R=2.0))
    rng = np.random.default_rng(3)
    data = {"t": T, "C.v": data["C.v"] + 1e-3 * rng.standard_normal(T.size)}

    def network(init=None):
        law = ln.NeuralNet(hidden=(2,), constraint="feasible", init=init)
        return ln.Unknown("Rx", ac.Pin, law=law)

    # a first fit that leaves a sign-constrained weight at its margin (-1e-6)
    first = ln.fit(rc(network()), data, x0={"Rx.theta_W1_1_0": -60.0}, max_nfev=20, progress=False)
    assert first.weights["Rx"]["W1_1_0"] == -1e-6
    # again from a law made from the fitted weights (init= used to reject the one at its
    # margin) and from the fitted raw values; by Powell, whose first trials stay near the
    # start (least squares' first trust region, as wide as the start vector, sends this
    # over-parameterized network to models that take IDAS seconds to fail)
    again = dict(data=data, method="powell", max_nfev=5, progress=False)
    law_start = ln.fit(rc(network(init=first.weights["Rx"])), **again)
    by_params = ln.fit(rc(network()), x0=first.params, **again)
    # from the fitted raw values: the first fit's best point with the same model and the same
    # tolerances (chosen from the same data), so the same deterministic computation: equal
    # to the bit on any machine
    assert (by_params.rtol, by_params.atol) == (first.rtol, first.atol)
    assert by_params.loss_history[0] == first.loss
    # from the fitted weights: a law turns each weight into its raw value by the inverse
    # transform (softplus^-1), which the model's softplus undoes only to rounding (measured:
    # one weight of nine 1 ulp off on one CPU, none on another). IDAS's adaptive steps
    # then differ, and at the fit's tolerances (rtol 7.4e-8) a one-ulp change of one raw
    # value moves the loss by up to 5e-5 of itself (measured): the start's weights agree to
    # a few ulps, its loss to the integration's error
    start = network(init=first.weights["Rx"]).law.weights()
    for name, w in first.weights["Rx"].items():
        assert start[name] == pytest.approx(w, rel=1e-14, abs=0), name
    assert law_start.loss_history[0] == pytest.approx(first.loss, rel=1e-3)
    for fit in (law_start, by_params):  # Powell keeps the best point seen
        assert fit.loss <= fit.loss_history[0]
    assert law_start.weights["Rx"]["W1_1_0"] == -1e-6


# -- 5. input scales of a polynomial law -----------------------------------------------------------
I0, V0 = 1e-5, 1.0  # the truth's current and voltage scales


class TinyConductor(el.OnePort):
    """``i/I0 + (i/I0)^3 = v/V0 + (v/V0)^3 / 2``: currents of 1e-5 A at volts."""

    def __init__(self, name):
        super().__init__(name)
        a, b = self.i / I0, self.v / V0
        self.equations(a + a**3 == b + 0.5 * b**3)


def tiny_circuit(resistor):
    s = ac.System("tiny")
    src, C, G = el.SineVoltage("V", V=3.0, f=0.3), el.Capacitor("C", C=1e-5, v0=0.0), el.Ground("G")
    s.connect(src.p, resistor.p)
    s.connect(resistor.n, C.p)
    s.connect(C.n, src.n, G.p)
    return s


def test_polynomial_input_scales_give_order_one_parameters_and_the_same_law():
    truth = simulate(tiny_circuit(TinyConductor("D")), grid=T, rtol=1e-10, atol=1e-14)
    i, v = truth["D.i"], truth["D.v"]
    data = {"t": T, "C.v": truth["C.v"]}
    scaled = ln.Polynomial(order=2).standardized({"f": i, "x": v})
    assert scaled.scales == pytest.approx((np.sqrt(np.mean(i**2)), np.sqrt(np.mean(v**2))))
    # without scales the coefficients span 1e-5 .. 1e10: hand-written starts near them
    by_hand = ln.Polynomial(order=2, init={"f3": 0.8 / I0**2, "x1": 1.2 * I0, "x3": 0.4 * I0})
    fits, laws = {}, {}
    for key, law in (("scaled", scaled), ("unscaled", by_hand)):
        laws[key] = ln.Unknown("Rx", ac.Pin, law=law)
        fits[key] = ln.fit(tiny_circuit(laws[key]), data, progress=False)
        assert fits[key].n_failed == 0 and fits[key].loss < 1e-12  # measured 1.5e-13
    assert max(abs(p) for p in fits["scaled"].params.values()) < 5  # measured 2.4
    assert max(abs(p) for p in fits["unscaled"].params.values()) > 1e9  # theta_f3 = w_f3
    # the two fitted laws are one curve v(i), the truth's (closed form in i and v)
    currents = np.linspace(i.min(), i.max(), 21)
    curves = {k: laws[k].curve("v", {"i": currents}, fits[k].params) for k in fits}
    size = np.max(np.abs(curves["scaled"]))
    assert np.max(np.abs(curves["scaled"] - curves["unscaled"])) < 1e-6 * size  # measured 1e-7
    a, b = currents / I0, curves["scaled"] / V0
    assert np.max(np.abs(a + a**3 - b - 0.5 * b**3)) < 1e-6 * np.max(a + a**3)  # measured 2e-7
    # dissipative under scaling: f x >= 0 along the learned curve
    assert np.all(currents * curves["scaled"] >= 0)
    with pytest.raises(ac.OptionError, match="scales"):
        ln.Polynomial(order=1, scales=(1.0, -1.0))
    with pytest.raises(ac.OptionError, match="'x'"):
        ln.Polynomial(order=1).standardized({"f": i, "x": np.zeros_like(v)})


# -- 6. a learned law as a curve ----------------------------------------------------------------
def test_curves_of_an_implicit_law_against_cardano_and_of_an_explicit_one():
    # i + a i^3 = b v + c v^3: v by Cardano's formula for c v^3 + b v - g = 0
    a, b, c = 0.5, 2.0, 0.3
    law = ln.Polynomial(order=2, init={"f3": a, "x1": b, "x3": c})
    i = np.linspace(-3.0, 3.0, 13)
    p, q = b / c, (i + a * i**3) / c
    root = np.sqrt(q**2 / 4 + p**3 / 27)
    cardano = np.cbrt(q / 2 + root) + np.cbrt(q / 2 - root)
    assert np.allclose(law.curve("x", {"f": i}), cardano, rtol=1e-13, atol=1e-14)
    assert np.allclose(law.curve("f", {"x": cardano}), i, rtol=1e-12, atol=1e-13)
    grid = law.curve("x", {"f": i[:, None] * np.ones(3)})  # arrays broadcast
    assert grid.shape == (13, 3) and np.allclose(grid[:, 2], cardano, rtol=1e-13)
    # the Unknown's names (the pin's i, v) and its parameters by full name
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=2))
    params = dict(zip(Rx.parameter_names(), law.raw_init))
    assert np.allclose(Rx.curve("v", {"i": i}, params), cardano, rtol=1e-13, atol=1e-14)
    # an explicit law solved for its output is the network evaluated
    net = ln.MLP(hidden=(4,), activation="tanh", inputs=("x",))
    x = np.linspace(-2.0, 2.0, 9)
    assert np.array_equal(net.curve("f", {"x": x}), net.predict(x))
    with pytest.raises(ac.ModelError, match=r"'q' is not one of its inputs \(f, x\)"):
        law.curve("q", {"f": i})
    with pytest.raises(ac.OptionError, match="missing: f"):
        law.curve("x", {})


# -- 7. every failure kept ------------------------------------------------------------------------
def test_every_failed_simulation_is_kept_with_its_parameters_and_cause():
    """The objective keeps each failed simulation with its parameters and the simulator's
    message, and a fit reports its objective's failures. The failing sets are made, not
    found along an optimizer's path (which differs between CPUs): with the constraints
    off, ``i + f3 i^3 + f5 i^5`` with ``f3 < 0`` turns back at a current the source drives
    through the law (near ``1 / sqrt(-3 f3)``), and every run that reaches the fold fails."""
    data, _ = measure(el.Resistor("R1", R=2.0))
    system = rc(unknown(constraint=None, init={"x1": 0.5, "f3": 0.5, "x3": 0.5}))
    names = [f"Rx.theta_{w}" for w in ("f3", "f5", "x1", "x3", "x5")]
    obj = Objective([(system, data)], names)
    good = np.array([0.5, 0.1, 0.5, 0.5, 0.1])
    folds = [good + [-4.5, 0.0, 0.0, 0.0, 0.0], good + [-2.0, -0.1, 0.0, 0.0, 0.0]]
    assert obj.residuals(good) is not None
    assert all(obj.residuals(x) is None for x in folds)
    assert obj.n_failed == len(obj.failures) == 2
    model = ac.compile(system)
    for x, failure in zip(folds, obj.failures):
        assert failure.params == dict(zip(names, x.tolist()))
        assert "Rx: i + theta_f3" in failure.message  # the law's equation, near the fold
        with pytest.raises(ac.ModelError) as err:  # it fails again, for the reason kept
            simulate(model, grid=T, rtol=obj.rtol, atol=obj.atol, params=failure.params)
        assert str(err.value).strip() == failure.message
    # a fit near a fold keeps whatever failures its path met (1 on one CPU, 3 on another),
    # each a distinct trial that fails again for the reason recorded
    start = {"x1": 0.002, "f3": 0.5, "x3": 0.5}
    fit = ln.fit(rc(unknown(constraint=None, init=start)), data, max_nfev=15, progress=False)
    assert fit.n_failed == len(fit.failures) >= np.isnan(fit.loss_history).sum()
    assert len({tuple(f.params.values()) for f in fit.failures}) == len(fit.failures)
    assert fit.last_failure == (fit.failures[-1].message if fit.failures else "")
    for failure in fit.failures:
        assert set(failure.params) == set(fit.params)
        with pytest.raises(ac.ModelError) as err:
            simulate(fit.model, grid=T, rtol=fit.rtol, atol=fit.atol, params=failure.params)
        assert str(err.value).strip() == failure.message


# -- 8. collocation: progress and time ----------------------------------------------------------
def test_collocation_progress_tracks_the_best_and_reports_the_end_once():
    data, _ = measure(el.Resistor("R1", R=2.0))
    seen = []
    fit = ln.fit(
        rc(unknown()), data, method="collocation", progress=seen.append, progress_interval=0
    )
    ipopt, end = seen[1:-1], seen[-1]
    start = seen[0].loss
    best = [p.best for p in ipopt]
    assert all(b2 <= b1 for b1, b2 in zip(best, best[1:]))
    assert all(b == start or b in [p.loss for p in ipopt] for b in best)  # reported values
    # (IPOPT's last iterate was its best, 4.7e-14 from 13.3: a fact of the path, not asserted)
    assert best[-1] < 1e-10 * start
    # the end once: the fitted parameters' simulated loss, after IPOPT's last iterate
    assert ipopt[-1].iteration == end.iteration == fit.n_iterations
    assert end.loss == end.best == fit.loss != ipopt[-1].loss
    assert sum(p.loss == fit.loss for p in seen) == 1


def test_max_time_stops_collocation_and_least_squares_with_the_best_seen():
    data, _ = measure(el.Resistor("R1", R=2.0))
    full = ln.fit(rc(unknown()), data, method="collocation", progress=False)
    cut = ln.fit(rc(unknown()), data, method="collocation", progress=False, max_time=1e-3)
    assert (
        not cut.success and "Maximum_WallTime_Exceeded" in cut.message and "max_time" in cut.message
    )
    assert cut.n_iterations < full.n_iterations
    lsq = ln.fit(rc(unknown()), data, progress=False, max_time=1e-3)
    assert not lsq.success and lsq.message.startswith("stopped: max_time (0.001 s)")
    assert lsq.loss == min(lsq.loss_history)  # the best seen: here the start
    with pytest.raises(ac.OptionError, match="max_time"):
        ln.fit(rc(unknown()), data, max_time=0.0)


def test_blas_threads_limit_numpy_and_scipy_openblas_and_restore_them():
    """Inside the fits' block each bundled OpenBLAS runs on one thread (read back through
    the library's own getter); outside, the count it had before."""
    import ctypes

    from learning.core.thread_limits import _openblas, blas_threads

    libs = _openblas()
    if not libs:
        pytest.skip("numpy/scipy do not use their bundled OpenBLAS here")

    def counts() -> list[int]:
        return [getattr(lib, f"scipy_openblas_get_num_threads{s}")() for lib, s in libs]

    def set_counts(values: list[int]) -> None:
        for (lib, s), n in zip(libs, values):
            getattr(lib, f"scipy_openblas_set_num_threads{s}")(ctypes.c_int(n))

    original = counts()
    try:
        set_counts([2] + original[1:])  # a count that differs from 1 on any machine
        before = counts()
        with blas_threads(1):
            assert counts() == [1] * len(libs)
            a = np.random.default_rng(0).standard_normal((60, 40))
            assert np.allclose(
                np.linalg.svd(a, compute_uv=False) ** 2, np.linalg.eigvalsh(a.T @ a)[::-1]
            )
        assert counts() == before
    finally:  # the session goes on with the counts it had
        set_counts(original)
    assert counts() == original
