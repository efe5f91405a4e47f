"""Equation-error fitting (issue 12): parameters from states and their derivatives, without
simulation; closed-form detection of linear parameters, a Newton block inside, standard
errors against repeated noisy records, and malformed records."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from solvers import simulate
from tests.test_rollout import C_TRUE, D_TRUE, INPUTS, diode_circuit, oscillator, trajectories


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
