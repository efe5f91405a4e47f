"""Equation-error fitting (issue 12): parameters from states and their derivatives, without
simulation; closed-form detection of linear parameters, a Newton block inside, standard
errors against repeated noisy records, and malformed records."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import translational as tr
from examples.references.oscillator import C_TRUE, D_TRUE, INPUTS, diode_circuit, oscillator
from solvers import simulate
from tests.shared import trajectories


def records(noise=0.0, seed=0):
    """The oscillator's trajectories with the exact acceleration ``(F - c s - d v) / m``,
    plus white noise of ``noise`` m/s^2."""
    rng = np.random.default_rng(seed)
    out = []
    for d in trajectories():
        a = d["F"] - C_TRUE * d["m.s"] - D_TRUE * d["m.v"]
        out.append({**d, "der(m.v)": a + noise * rng.standard_normal(a.size)})
    return out


def test_linear_parameters_are_solved_in_closed_form():
    fit = ln.fit_equations(
        oscillator(c=30.0, d=0.8), records(), physical=["k.c", "d.d"], inputs=INPUTS
    )
    assert fit.method == "equation_error"
    assert "2 of 2 parameters linear: solved in closed form" in fit.message
    assert "least squares" not in fit.message  # no iterations
    assert fit.params["k.c"] == pytest.approx(C_TRUE, rel=1e-12)
    assert fit.params["d.d"] == pytest.approx(D_TRUE, rel=1e-12)
    # the mass divides the forces: not linear; the others start from their closed form
    both = ln.fit_equations(
        oscillator(c=30.0, d=0.8),
        records(),
        physical=["k.c", "d.d", "m.m"],
        inputs=INPUTS,
        x0={"m.m": 1.3},
    )
    assert "2 of 3 parameters linear" in both.message and "least squares" in both.message
    assert both.params["m.m"] == pytest.approx(1.0, rel=1e-9)
    assert both.params["k.c"] == pytest.approx(C_TRUE, rel=1e-9)
    # the fitted model simulates like the truth (a second method: IDAS)
    data = trajectories()[0]
    res = simulate(both.model, grid=data["t"], params={"F.f_constant": 0.0})
    truth = simulate(oscillator(0.0), grid=data["t"])
    assert np.max(np.abs(res["m.s"] - truth["m.s"])) < 1e-6


def test_a_newton_block_inside_the_derivative():
    model = ac.compile(diode_circuit())
    assert model.dae.z.numel() >= 1
    t = np.arange(0, 0.2, 1e-3)
    res = simulate(model, grid=t, rtol=1e-12, atol=1e-14)
    rec = {"t": t, "C.v": res["C.v"], "der(C.v)": res["der(C.v)"]}
    fit = ln.fit_equations(diode_circuit(R1=14.0, R2=3.0), [rec], physical=["R1.R", "R2.R"])
    assert fit.params["R1.R"] == pytest.approx(10.0, rel=1e-6)
    assert fit.params["R2.R"] == pytest.approx(5.0, rel=1e-5)


def test_standard_errors_match_the_spread_over_repeated_records():
    fits = [
        ln.fit_equations(
            oscillator(c=30.0, d=0.8),
            records(noise=0.05, seed=s),
            physical=["k.c", "d.d"],
            inputs=INPUTS,
        )
        for s in range(40)
    ]
    values = np.array([[f.params["k.c"], f.params["d.d"]] for f in fits])
    said = np.mean([f.uncertainty.std for f in fits], axis=0)
    spread = np.std(values, axis=0, ddof=1)
    assert np.all(np.abs(said / spread - 1) < 0.3), (said, spread)
    assert np.all(np.abs(values.mean(axis=0) - [C_TRUE, D_TRUE]) < 3 * said)


def test_malformed_records_get_clear_errors():
    system, good = oscillator(), records()[0]
    with pytest.raises(ac.OptionError, match=r"lacks der\(m.v\)"):
        ln.fit_equations(
            system,
            [{k: v for k, v in good.items() if k != "der(m.v)"}],
            physical=["k.c"],
            inputs=INPUTS,
        )
    bad = {**good, "m.s": np.where(np.arange(good["t"].size) == 7, np.nan, good["m.s"])}
    with pytest.raises(ac.OptionError, match="column 'm.s' is not finite at sample 7"):
        ln.fit_equations(system, [bad], physical=["k.c"], inputs=INPUTS)
    with pytest.raises(ac.OptionError, match="'t' must increase"):
        ln.fit_equations(system, [{**good, "t": good["t"][::-1]}], physical=["k.c"], inputs=INPUTS)
    with pytest.raises(ac.OptionError, match="has 3 values"):
        ln.fit_equations(system, [{**good, "F": [1, 2, 3]}], physical=["k.c"], inputs=INPUTS)
    with pytest.raises(ac.OptionError, match="no state derivative"):
        ln.fit_equations(system, [good], physical=["m.v0"], inputs=INPUTS)


def axis(law, force=None):
    """A 1 kg carriage pushed by ``force`` (or the input ``F.f_constant``) against an
    unknown load ``law`` on ``(x, der(x))`` to a fixed point."""
    s = ac.System("axis")
    m = tr.Mass("m", m=1.0, s0=0.0, v0=0.0)
    push = tr.ConstantForce("F", f_constant=0.0) if force is None else tr.Force("F", f=force)
    load, fixed = ln.Unknown("load", ac.Flange, law, inputs=law_inputs(law)), tr.Fixed("fx")
    s.connect(push.flange, m.flange_a)
    s.connect(m.flange_b, load.flange_a)
    s.connect(load.flange_b, fixed.flange)
    return s


def law_inputs(law):
    return ("f", "x", "der(x)") if isinstance(law, ln.Known) else None


def spring(x):
    return 20.0 * x + 50.0 * x**3


def friction(v):
    return 0.4 * np.tanh(v / 0.05) + 0.3 * v


def test_a_structured_network_recovers_each_input_s_curve():
    """Exact accelerations of a carriage against a cubic spring and tanh + viscous friction:
    the additive network's two parts are the two curves (each up to its value at 0), from
    1,000 samples (2,000 gave 1.4e-6 and 3.5e-6 against the same closed forms)."""
    truth = ln.Known(lambda f, x, v: f == spring(x) + 0.4 * ac.tanh(v / 0.05) + 0.3 * v, n_inputs=3)
    t = np.arange(0.0, 4.0, 4e-3)
    push = 2.0 * ac.sin(2.1 * ac.time) + 1.5 * ac.sin(5.3 * ac.time)
    res = simulate(axis(truth, push), grid=t, rtol=1e-10, atol=1e-12)
    law = ln.Sum.additive(("x", "der(x)"), hidden=5).standardized(
        {"x": res["load.s"], "der(x)": res["der(load.s)"]}
    )
    learner = axis(law)
    model = ac.compile(learner)
    rec = {"t": t, "F": 2.0 * np.sin(2.1 * t) + 1.5 * np.sin(5.3 * t)}
    rec |= {s: res[s] for s in model.states} | {f"der({s})": res[f"der({s})"] for s in model.states}
    fit = ln.fit_equations(learner, [rec], inputs={"F.f_constant": "F"})
    unknown = next(c for c in fit.system.all_components() if c.name == "load")
    theta = [fit.params[n] for n in unknown.parameter_names()]
    x, v = res["load.s"], res["der(load.s)"]
    zero, samples = {"x": np.zeros(1), "der(x)": np.zeros(1)}, {"x": x, "der(x)": v}
    for part, curve in (("x", spring(x)), ("der_x", friction(v))):
        got = law.predict(samples, theta, part=part) - law.predict(zero, theta, part=part)
        error = np.sqrt(np.mean((got - curve) ** 2)) / np.ptp(curve)
        assert error < 1e-4, (part, error)  # measured 7.5e-6 (spring), 1.7e-5 (friction)
