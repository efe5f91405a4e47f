"""CauerLowPassAnalog (capacitor loops, index 2) against the Modelica reference."""

import numpy as np
import pytest

import acausal as ac
from examples.cauer_filter import build
from solvers import simulate

from .reference import load, max_error

SIGNALS = ["C1.v", "C3.v", "C5.v", "L1.i", "L2.i"]
# The references are accurate to about 1e-5 relative on potentials and 1e-4..1e-3 on rates
# and flows (validation README); our own solution is converged to 3e-7 (rtol 1e-8 vs 1e-11).
TOLERANCE = {"C1.v": 2e-5, "C3.v": 2e-5, "C5.v": 2e-5, "L1.i": 1e-4, "L2.i": 1e-4}


@pytest.fixture(scope="module")
def result():
    return simulate(build(), t_end=60.0, dt=0.012, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", SIGNALS)
def test_cauer_signal_matches_reference(result, name):
    ref = load("Electrical.Analog.Examples.CauerLowPassAnalog")
    err = max_error(ref["time"], ref[name], result.t, result[name])
    scale = np.ptp(ref[name])
    assert err <= TOLERANCE[name] * scale, f"{name}: max error {err:.3g} over range {scale:.3g}"


def test_cauer_structure():
    model = ac.compile(build())
    assert model.index == 2
    assert sorted(model.states) == ["C1.v", "C3.v", "C5.v", "L1.i", "L2.i"]
    assert model.dummy_derivatives == ["der(C2.v)", "der(C4.v)"]
