"""The README's main job, the paper's experiment: acceptance numbers of issue 4."""

import numpy as np
import pytest

from components import electrical as el
from examples.learn_cauer import BUDGET, R_TRUE, SAMPLES, cauer, laws, learn, voltage_of
from solvers import simulate


@pytest.fixture(scope="module")
def data():
    truth = simulate(cauer(el.Resistor("R1", R=R_TRUE)), grid=SAMPLES, rtol=1e-10, atol=1e-12)
    return truth, {"t": SAMPLES, "R2.v": truth["R2.v"]}


def check(name, tolerance, data):
    truth, measured = data
    fit, unknown = learn(laws(constrained=True)[name], measured, BUDGET)
    currents = np.linspace(truth["R1.i"].min(), truth["R1.i"].max(), 41)
    v = voltage_of(unknown, fit.params, currents)
    map_err = np.max(np.abs(v - R_TRUE * currents)) / np.max(np.abs(R_TRUE * currents))
    sim = simulate(fit.system, grid=SAMPLES, rtol=1e-10, atol=1e-12)
    rms = np.sqrt(np.mean((sim["R2.v"] - measured["R2.v"]) ** 2)) / np.ptp(measured["R2.v"])
    assert fit.n_failed == 0  # the constraints keep every iterate simulatable
    assert map_err < tolerance, map_err  # measured 8e-8 (neural), 5.7e-7 (polynomial)
    assert rms < 0.01, rms


def test_neural_law_recovers_the_resistor(data):
    check("neural", 0.05, data)


def test_polynomial_law_recovers_the_resistor(data):
    check("polynomial", 0.10, data)
