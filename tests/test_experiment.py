"""ln.Experiment (issue 32): one measurement type that every learner takes; its checks at
construction and against a model; old call forms give the numbers of the Experiment call;
a learned law read back with fit.law(name)."""

import functools
import pickle

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from examples.references.oscillator import D_TRUE, INPUTS, oscillator
from solvers import simulate
from tests.shared import trajectories

S0 = 0.1  # the experiment's initial position, given as its per-experiment parameter


@functools.lru_cache(maxsize=1)
def _decay() -> dict:
    res = simulate(oscillator(0.0, s0=S0), t_end=1.0, dt=5e-3, rtol=1e-12, atol=1e-14)
    return {n: res[n] for n in ("m.s", "m.v", "der(m.v)")} | {"t": res.t}


def decay() -> dict:
    """The free oscillator's decay from s = 0.1 (IDAS at 1e-12): position, velocity and the
    exact acceleration, 201 samples."""
    return {k: v.copy() for k, v in _decay().items()}


def rc(resistor: ac.Component) -> ac.System:
    s = ac.System("rc")
    V, C, G = el.SineVoltage("V", V=1.0, f=2.0), el.Capacitor("C", C=0.01, v0=0.0), el.Ground("G")
    s.connect(V.p, resistor.p)
    s.connect(resistor.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def test_one_dataframe_experiment_feeds_fit_train_and_fit_equations():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(decay())
    exp = ln.Experiment(frame, params={"m.s0": S0}, name="decay")
    assert exp == ln.Experiment(frame.set_index("t"), params={"m.s0": S0}, name="decay")
    assert exp.measured == ("m.s", "m.v", "der(m.v)") and len(exp) == 201
    # the system starts at rest (s0 = 0) and with d = 0.8: only the experiment's s0 = 0.1
    # makes it move, and each learner must bring d back to the simulated 0.5
    system = oscillator(d=0.8, s0=0.0)
    out = ln.fit(system, exp, physical=["d.d"], progress=False)
    assert out.params["d.d"] == pytest.approx(D_TRUE, rel=1e-4)  # IDAS at rtol ~1e-8: 1e-6
    assert out.model.parameters["m.s0"] == S0
    rolled = ln.train(
        system, exp, physical=["d.d"], epochs=1, polish="least_squares", progress=False
    )
    assert rolled.params["d.d"] == pytest.approx(D_TRUE, rel=1e-4)  # RK4 at h = 5 ms: 1e-7
    solved = ln.fit_equations(system, exp, physical=["d.d"])
    assert solved.params["d.d"] == pytest.approx(D_TRUE, rel=1e-9)  # linear: closed form


def test_old_call_forms_give_the_numbers_of_the_experiment_call():
    data = decay()
    system = oscillator(d=0.8, s0=S0)
    exp = ln.Experiment(data)
    old = ln.fit(system, data, physical=["d.d"], progress=False)
    new = ln.fit(system, exp, physical=["d.d"], progress=False)
    assert new.params["d.d"] == pytest.approx(old.params["d.d"], rel=1e-12)
    assert new.loss == pytest.approx(old.loss, rel=1e-9, abs=1e-30)
    old = ln.fit_equations(system, [data], physical=["d.d"])
    assert ln.fit_equations(system, [exp], physical=["d.d"]).params == pytest.approx(old.params)
    # a measured input that drives a parameter: the old inputs= keyword and the experiment's
    (forced,) = trajectories(freqs=(5.0,), t_end=0.5, dt=5e-3)
    model = ac.compile(oscillator(d=0.8))
    pushed = ln.Experiment(forced, inputs=INPUTS)
    assert pushed.measured == ("m.s", "m.v")
    opts = dict(physical=["d.d"], epochs=1, polish="least_squares", progress=False)
    old = ln.train(model, [forced], inputs=INPUTS, **opts)
    assert ln.train(model, [pushed], **opts).params == pytest.approx(old.params, rel=1e-12)
    # predict takes the system now, and gives what it gives for the compiled model
    before = ln.predict(model, forced, INPUTS)
    after = ln.predict(oscillator(d=0.8), pushed)
    assert np.array_equal(before["m.s"], after["m.s"])
    assert np.array_equal(before["m.v"], after["m.v"])


def test_weights_and_mask_reach_fit_as_its_own_weights_and_nan():
    data = decay()
    out = np.zeros(201, dtype=bool)
    out[[5, 17]] = True
    data["m.s"][5] = np.nan
    exp = ln.Experiment(data, mask={"m.s": ~out}, weights={"m.v": 4.0})
    rec = exp.record()
    assert np.isnan(rec["m.s"][[5, 17]]).all() and np.isfinite(np.delete(rec["m.s"], [5, 17])).all()
    older = {**decay(), "m.s": rec["m.s"]}
    system = oscillator(d=0.8, s0=S0)
    a = ln.fit(system, exp, physical=["d.d"], progress=False)
    b = ln.fit(system, older, physical=["d.d"], weights={"m.v": 4.0}, progress=False)
    assert a.loss == pytest.approx(b.loss, rel=1e-9, abs=1e-30)
    assert a.params["d.d"] == pytest.approx(b.params["d.d"], rel=1e-12)
    with pytest.raises(ac.OptionError, match=r"masks samples of m.s out; train steps"):
        ln.train(system, exp, physical=["d.d"], progress=False)


def test_learned_law_read_back_against_its_closed_form():
    truth = simulate(rc(el.Resistor("R", R=10.0)), t_end=1.0, dt=5e-3, rtol=1e-12, atol=1e-14)
    exp = ln.Experiment(truth, measured=["C.v", "der(C.v)"])
    law = ln.Polynomial(order=1, constraint="dissipative")
    fit = ln.fit_equations(rc(ln.Unknown("Rx", ac.Pin, law=law)), exp)
    i = np.linspace(-0.1, 0.1, 7)
    w = fit.weights["Rx"]
    # g_f(f) = g_x(x): w_f1 i = w_x1 v, so v = (w_f1 / w_x1) i; and the data's R = 10
    assert np.allclose(fit.law("Rx")({"i": i}), w["w_f1"] / w["w_x1"] * i, rtol=1e-12, atol=0)
    assert np.allclose(fit.law("Rx")({"v": 10 * i}), i, rtol=1e-8, atol=1e-15)
    with pytest.raises(ac.UnknownNameError, match="unknown ln.Unknown 'Rxx'.*Did you mean 'Rx'"):
        fit.law("Rxx")


T = np.array([0.0, 0.1, 0.2, 0.3])


@pytest.mark.parametrize(
    "data, options, message",
    [
        ({"t": T, "x": [1.0, 2.0, 3.0]}, {}, "column 'x' has 3 samples, the time has 4"),
        (
            {"t": [0.0, 0.1, 0.1, 0.3], "x": T},
            {},
            r"'t' does not increase at sample 2 \(t\[1\] = 0.1, t\[2\] = 0.1\)",
        ),
        ({"t": [0.0, np.nan, 0.2, 0.3], "x": T}, {}, "time 't' is nan at sample 1"),
        (
            {"t": T, "x": [1.0, 2.0, np.nan, 4.0]},
            {},
            r"column 'x' is nan at sample 2 \(t = 0.2\); give mask=\{'x': ...\} False there",
        ),
        ({"t": T, "x": ["a", "b", "c", "d"]}, {}, "column 'x' is not numeric"),
        ({"t": T, "x": T}, {"inputs": {"p.u": "xx"}}, r"inputs\['p.u'\].*Did you mean 'x'"),
        ({"t": T, "x": T}, {"weights": {"y": 1.0}}, "weights: unknown measured column 'y'"),
        ({"t": T, "x": T}, {"mask": {"x": [1, 0, 1, 1]}}, r"mask\['x'\] must be booleans"),
        ({"x": T}, {}, "no time column 't'"),
    ],
)
def test_bad_experiments_are_named_errors(data, options, message):
    with pytest.raises(ac.ModelError, match=message):
        ln.Experiment(data, **options)


def test_a_masked_nan_is_accepted_and_the_value_is_immutable():
    keep = np.array([True, False, True, True])
    exp = ln.Experiment({"t": T, "x": [1.0, np.nan, 3.0, 4.0]}, mask={"x": keep})
    assert np.isnan(exp.record()["x"][1])
    with pytest.raises(AttributeError, match="immutable"):
        exp.name = "other"
    with pytest.raises(ValueError, match="read-only"):
        exp["x"][0] = 2.0
    assert pickle.loads(pickle.dumps(exp)) == exp


def test_learners_name_what_is_wrong_with_their_data():
    data = decay()
    system = oscillator(d=0.8, s0=S0)
    exp = ln.Experiment(data)
    with pytest.raises(ac.OptionError, match=r"trajectories is one dict; give a list"):
        ln.train(system, data, physical=["d.d"], progress=False)
    with pytest.raises(ac.OptionError, match=r"records is one dict; give a list"):
        ln.fit_equations(system, data, physical=["d.d"])
    with pytest.raises(ac.OptionError, match=r"mixes ln.Experiment values and other data"):
        ln.fit_equations(system, [exp, data], physical=["d.d"])
    res = simulate(system, t_end=0.1, dt=0.01)
    with pytest.raises(ac.OptionError, match=r"data is a simulation Result.*ln.Experiment\("):
        ln.fit(system, res, physical=["d.d"], progress=False)
    wrong = ln.Experiment({**data, "m.vv": data["m.v"]})
    with pytest.raises(ac.UnknownNameError, match=r"measured column.*'m.vv'.*Did you mean 'm.v'"):
        ln.fit(system, wrong, physical=["d.d"], progress=False)
    typo = ln.Experiment(data, params={"m.s00": 0.2})
    with pytest.raises(ac.UnknownNameError, match=r"params.*'m.s00'.*Did you mean 'm.s0'"):
        ln.fit_equations(system, typo, physical=["d.d"])
    driven = ln.Experiment({**data, "F": 0 * data["t"]}, inputs=INPUTS)
    with pytest.raises(ac.OptionError, match=r"inputs=.*simulation holds constant.*SignalVoltage"):
        ln.fit(system, driven, physical=["d.d"], progress=False)
    with pytest.raises(ac.OptionError, match=r"inputs= with ln.Experiment data"):
        ln.train(system, driven, inputs=INPUTS, physical=["d.d"], progress=False)


def test_multi_start_cross_validation_and_identifiability_take_experiments():
    system = oscillator(d=0.8, s0=S0)
    exp = ln.Experiment(decay(), name="decay")
    opts = dict(physical=["d.d"], epochs=1, polish="least_squares")
    many = ln.multi_start(ln.train, system, exp, n_starts=2, **opts)
    assert many.best.params["d.d"] == pytest.approx(D_TRUE, rel=1e-4)
    halves = [
        ln.Experiment({k: v[a:b] for k, v in decay().items()}) for a, b in ((0, 100), (100, 201))
    ]
    folds = ln.cross_validate(system, halves, "m.s", progress=False, **opts)
    assert [f.params["d.d"] for f in folds.fits] == pytest.approx([D_TRUE] * 2, rel=1e-4)
    assert folds.mean_rmse < 1e-5 * S0  # the free runs of the held-out halves: RK4, 5 ms
    old = ln.identifiability(system, decay(), fitted=["d.d", "k.c"])
    new = ln.identifiability(system, exp, fitted=["d.d", "k.c"])
    assert np.allclose(new.singular_values, old.singular_values, rtol=1e-12)
