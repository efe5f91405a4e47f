"""Mechanics.Rotational.Examples.First against the Modelica reference.

Every signal is checked against the reference and against a second, independent solution:
the hand-reduced ODE (inertia1 reflected through the gear, J2 + ratio^2 J1) integrated by
scipy's DOP853 at tolerance 1e-13. The reference's own deviation from that solution is
4.4e-6 (damper.phi_rel), 1.75e-5 (inertia3.phi), 6.5e-5 and 3.1e-4 (speeds) of the ranges.
"""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import acausal as ac
from components import rotational as rot
from solvers import simulate

from .reference import load, max_error

EXAMPLE = "Mechanics.Rotational.Examples.First"
AMPLITUDE, FREQ = 10.0, 5.0
J1, J2, J3, RATIO, C, D = 0.1, 2.0, 2.0, 10.0, 1e4, 10.0

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")  # inertia3.flange_b


def build() -> ac.System:
    """torque -> inertia1 -> gear -> inertia2 -> spring -> inertia3; damper to the housing."""
    s = ac.System("first")
    fixed = rot.Fixed("fixed")
    torque = rot.Torque(
        "torque", tau=AMPLITUDE * ac.sin(2 * np.pi * FREQ * ac.time), use_support=True
    )
    inertia1 = rot.Inertia("inertia1", J=J1)
    gear = rot.IdealGear("idealGear", ratio=RATIO, use_support=True)
    inertia2 = rot.Inertia("inertia2", J=J2, phi0=0.0, w0=0.0)
    spring = rot.Spring("spring", c=C)
    inertia3 = rot.Inertia("inertia3", J=J3, phi0=0.0, w0=0.0)
    damper = rot.Damper("damper", d=D)
    s.connect(torque.flange, inertia1.flange_a)
    s.connect(inertia1.flange_b, gear.flange_a)
    s.connect(gear.flange_b, inertia2.flange_a)
    s.connect(inertia2.flange_b, spring.flange_a, damper.flange_a)
    s.connect(spring.flange_b, inertia3.flange_a)
    s.connect(damper.flange_b, fixed.flange, torque.support, gear.support)
    return s


def second_method(t):
    """The four signals from the hand-reduced ODE in (phi2, w2, phi3, w3)."""
    j_eff = J2 + RATIO**2 * J1

    def rhs(time, y):
        p2, w2, p3, w3 = y
        tau = RATIO * AMPLITUDE * np.sin(2 * np.pi * FREQ * time)
        return [w2, (tau - D * w2 + C * (p3 - p2)) / j_eff, w3, -C * (p3 - p2) / J3]

    sol = solve_ivp(rhs, (t[0], t[-1]), [0, 0, 0, 0], "DOP853", t, rtol=1e-13, atol=1e-15)
    p2, w2, p3, w3 = sol.y
    return {"damper.phi_rel": -p2, "damper.w_rel": -w2, "inertia3.phi": p3, "inertia3.w": w3}


@pytest.fixture(scope="module")
def ref():
    return load(EXAMPLE)


@pytest.fixture(scope="module")
def result(ref):
    return simulate(build(), grid=ref["time"], rtol=1e-8, atol=1e-10)


SIGNALS = ["damper.phi_rel", "inertia3.phi", "damper.w_rel", "inertia3.w"]


def test_first_compiles_to_index_3():
    model = ac.compile(build())
    assert model.index == 3
    assert sorted(model.states) == ["inertia2.phi", "inertia2.w", "inertia3.phi", "inertia3.w"]


@pytest.mark.parametrize("name", SIGNALS)
def test_first_matches_second_method(result, name):
    other = second_method(result.t)[name]
    err = float(np.max(np.abs(result[name] - other)))
    scale = np.ptp(other)
    # measured at rtol 1e-8 (IDAS's own error): 3e-8, 1e-7, 3.8e-7, 1.8e-6 of the ranges
    assert err <= 1e-5 * scale, f"{name}: max error {err:.3g} over range {scale:.3g}"


@pytest.mark.parametrize("name", SIGNALS)
def test_first_matches_reference(ref, result, name):
    err = max_error(ref["time"], ref[name], result.t, result[name])
    scale = np.ptp(ref[name])
    ref_err = float(np.max(np.abs(ref[name] - second_method(ref["time"])[name])))
    # the reference is accurate to about 1e-5 relative on angles, 1e-4..1e-3 on speeds
    tol = 2e-5 if name.endswith("phi") or name.endswith("phi_rel") else 1e-3
    assert err <= tol * scale, f"{name}: max error {err:.3g} over range {scale:.3g}"
    assert err <= ref_err + 1e-5 * scale, (
        f"{name}: differs from the reference by {err:.3g}, more than the reference's own "
        f"error {ref_err:.3g} against the second method"
    )
