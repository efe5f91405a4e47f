"""Mechanics.Translational.Examples.Oscillator against the Modelica reference.

The forcing sits at resonance (sqrt(c/m) = 100 rad/s, 2 pi 15.9155 = 99.99998 rad/s), where
the reference (DASSL, tolerance 1e-6) accumulates a phase error: measured against the exact
solution of this linear model it is off by 4.8e-4 of the range on mass1.s and 1.8e-4 on
damper1.s_rel, far more than the 1e-5 the validation README gives as typical. So every
signal is checked twice:

* against the closed-form solution of the forced (damped) oscillator, tightly;
* against the reference, where the whole difference must be explained by the reference's
  own, measured deviation from that closed form (plus 1e-6 of the range), and velocities
  must in any case agree to 1e-3 of their range.
"""

import numpy as np
import pytest

import acausal as ac
from components import translational as tr
from solvers import simulate

from .reference import load, max_error

EXAMPLE = "Mechanics.Translational.Examples.Oscillator"
FREQ = 15.9155  # Hz, Modelica.Blocks.Sources.Sine sine1(f=15.9155), amplitude 1
M, C, D = 1.0, 1e4, 10.0


def build() -> ac.System:
    """Two copies of force -> mass -> spring -> fixed; the second with a damper."""
    s = ac.System("oscillator")
    force = ac.sin(2 * np.pi * FREQ * ac.time)
    for k in (1, 2):
        F = tr.Force(f"force{k}", f=force)
        mass = tr.Mass(f"mass{k}", m=M, L=1.0, s0=-0.5, v0=0.0)
        spring = tr.Spring(f"spring{k}", c=C, s_rel0=1.0)
        fixed = tr.Fixed(f"fixed{k}", s0=1.0)
        s.connect(F.flange, mass.flange_a)
        s.connect(mass.flange_b, spring.flange_a)
        s.connect(spring.flange_b, fixed.flange)
    damper = tr.Damper("damper1", d=D)  # in parallel with spring2
    s.connect(spring.flange_a, damper.flange_a)
    s.connect(damper.flange_b, spring.flange_b)
    return s


def forced_oscillator(t, w0sq, c, w):
    """``x'' + c x' + w0sq x = sin(w t)``, ``x(0) = x'(0) = 0``: (x, x')."""
    den = (w0sq - w**2) ** 2 + (c * w) ** 2
    A, B = (w0sq - w**2) / den, -c * w / den  # particular A sin + B cos
    sig = c / 2
    wd = np.sqrt(w0sq - sig**2)
    C1 = -B
    C2 = (sig * C1 - A * w) / wd
    e = np.exp(-sig * t)
    cw, sw = np.cos(wd * t), np.sin(wd * t)
    x = A * np.sin(w * t) + B * np.cos(w * t) + e * (C1 * cw + C2 * sw)
    v = (
        A * w * np.cos(w * t)
        - B * w * np.sin(w * t)
        + e * ((wd * C2 - sig * C1) * cw - (sig * C2 + wd * C1) * sw)
    )
    return x, v


def exact(t):
    """Closed form of the four compared signals (x = displacement of the mass from rest)."""
    w = 2 * np.pi * FREQ
    x1, v1 = forced_oscillator(t, C / M, 0.0, w)
    x2, v2 = forced_oscillator(t, C / M, D / M, w)
    # mass1.s = -0.5 + x1; damper1 spans mass2.flange_b (at x2) to fixed2 (at 1)
    return {"mass1.s": x1 - 0.5, "mass1.v": v1, "damper1.s_rel": 1.0 - x2, "damper1.v_rel": -v2}


@pytest.fixture(scope="module")
def ref():
    return load(EXAMPLE)


@pytest.fixture(scope="module")
def result(ref):
    return simulate(build(), grid=ref["time"], rtol=1e-8, atol=1e-10)


SIGNALS = ["mass1.s", "damper1.s_rel", "mass1.v", "damper1.v_rel"]


@pytest.mark.parametrize("name", SIGNALS)
def test_oscillator_matches_closed_form(result, name):
    t = result.t
    scale = np.ptp(exact(t)[name])
    err = float(np.max(np.abs(result[name] - exact(t)[name])))
    # measured: 1.5e-7 (mass1.s, mass1.v), 6e-8 (damper1) of the range
    assert err <= 1e-6 * scale, f"{name}: max error {err:.3g} vs closed form, range {scale:.3g}"


@pytest.mark.parametrize("name", SIGNALS)
def test_oscillator_matches_reference(ref, result, name):
    err = max_error(ref["time"], ref[name], result.t, result[name])
    scale = np.ptp(ref[name])
    ref_err = float(np.max(np.abs(ref[name] - exact(ref["time"])[name])))
    assert err <= ref_err + 1e-6 * scale, (
        f"{name}: differs from the reference by {err:.3g}, more than the reference's own "
        f"error {ref_err:.3g} (range {scale:.3g})"
    )
    if name.endswith("v") or name.endswith("v_rel"):
        assert err <= 1e-3 * scale, f"{name}: max error {err:.3g} over range {scale:.3g}"


def test_oscillator_initial_state(result):
    # at rest with the springs unstretched: s_rel = s_rel0 = 1, no force
    assert result["mass1.s"][0] == pytest.approx(-0.5, abs=1e-12)
    assert result["damper1.s_rel"][0] == pytest.approx(1.0, abs=1e-12)
    assert result["spring1.f"][0] == pytest.approx(0.0, abs=1e-9)
