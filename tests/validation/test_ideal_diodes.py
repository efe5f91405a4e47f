"""CharacteristicIdealDiodes (three ideal-diode loops, 5 state events) against the Modelica
reference, and its event times against their closed form."""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from solvers import simulate

from .reference import load, max_error

EXAMPLE = "Electrical.Analog.Examples.CharacteristicIdealDiodes"
AMPLITUDE, FREQUENCY, LOAD = 10.0, 1.0, 1e-3
LOOPS = {  # name: (Ron, Goff, Vknee, source offset)
    "Ideal": (0.0, 0.0, 0.0, 0.0),
    "With_Ron_Goff": (0.1, 0.1, 0.0, -9.0),
    "With_Ron_Goff_Vknee": (0.2, 0.2, 5.0, 0.0),
}


def build() -> ac.System:
    s = ac.System("characteristic_ideal_diodes")
    ground = el.Ground("G")
    for name, (ron, goff, vknee, offset) in LOOPS.items():
        src = el.SineVoltage(f"V_{name}", V=AMPLITUDE, f=FREQUENCY, offset=offset)
        diode = el.IdealDiode(name, Ron=ron, Goff=goff, Vknee=vknee)
        load = el.Resistor(f"R_{name}", R=LOAD)
        s.connect(src.p, diode.p)
        s.connect(diode.n, load.p)
        s.connect(load.n, src.n, ground.p)
    return s


def switching_times() -> list[tuple[float, str, float]]:
    """(t, diode, new 'off') in closed form: ``s = 0`` means ``v = Vknee``, ``i = Goff
    Vknee`` in either mode, so a diode switches where the source reaches
    ``Vknee (1 + R Goff)``: ``sin(2 pi f t) = (Vknee (1 + R Goff) - offset) / V``."""
    out = []
    for name, (_, goff, vknee, offset) in LOOPS.items():
        level = (vknee * (1 + LOAD * goff) - offset) / AMPLITUDE
        rise = np.arcsin(level) / (2 * np.pi * FREQUENCY)
        fall = 0.5 / FREQUENCY - rise
        out += [(t, name, off) for t, off in ((rise, 0.0), (fall, 1.0)) if 0 < t < 1]
    return sorted(out)


@pytest.fixture(scope="module")
def result():
    return simulate(ac.compile(build()), t_end=1.0, dt=2e-4, rtol=1e-8, atol=1e-10)


def test_event_times_match_the_closed_form(result):
    expected = switching_times()
    assert len(expected) == 5  # as the reference says
    located = [(t, name) for t, changed in result.events for name in changed]
    assert [n for _, n in located] == [f"{n}.off" for _, n, _ in expected]
    assert [changed for _, changed in result.events] == [
        {f"{n}.off": off} for _, n, off in expected
    ]
    gaps = [abs(t - te) for (t, _), (te, _, _) in zip(located, expected)]
    assert max(gaps) < 1e-10  # measured 3.3e-12


def test_diode_voltages_match_the_reference(result):
    ref = load(EXAMPLE)
    events = np.array([t for t, _, _ in switching_times()])
    away = np.min(np.abs(ref["time"][:, None] - events[None, :]), axis=1) > 1e-3
    for name in LOOPS:
        err = max_error(ref["time"][away], ref[f"{name}.v"][away], result.t, result[f"{name}.v"])
        # the loops are algebraic between events: both solutions are exact to rounding
        # away from the switchings (measured 1e-14 V)
        assert err < 1e-9, (name, err)
