"""One count of states everywhere (issue 31): ``summary()``, the BLT's header, the
``acausal check`` report and the model's properties count the continuous states and the
discrete modes apart, and agree with a count by hand.

The hand counts: an inertia (angle and speed) on a bearing with Coulomb friction that turns
with it is 2 continuous states and the bearing's stick/slip mode; two inertias with Coulomb
friction between them are 4 states (each inertia's angle and speed: while sliding they move
apart) and one mode; a half-wave rectifier with a smoothing capacitor is 1 state (the
capacitor's voltage) and the ideal diode's on/off relation.
"""

import re

import pytest

import acausal as ac
from components import electrical as el
from components import rotational as rot
from learning.cli import check_report

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning")


def bearing() -> ac.System:
    s = ac.System("bearing")
    drive = rot.ConstantTorque("T", tau_constant=2.0)
    inertia = rot.Inertia("J", J=2.0, phi0=0.0, w0=0.0)
    friction = rot.BearingFriction("B", tau_pos=((0.0, 1.0),), peak=1.5)
    s.connect(drive.flange, inertia.flange_a)
    s.connect(inertia.flange_b, friction.flange_a)
    return s


def clutch() -> ac.System:
    s = ac.System("clutch")
    drive = rot.ConstantTorque("T", tau_constant=2.0)
    j1 = rot.Inertia("J1", J=2.0, phi0=0.0, w0=0.0)
    j2 = rot.Inertia("J2", J=1.0, phi0=0.0, w0=0.0)
    friction = rot.CoulombFriction("F", tau_coulomb=0.5)
    s.connect(drive.flange, j1.flange_a)
    s.connect(j1.flange_b, friction.flange_a)
    s.connect(friction.flange_b, j2.flange_a)
    return s


def rectifier() -> ac.System:
    s = ac.System("rectifier")
    source = el.SineVoltage("V", V=1.0, f=50.0)
    diode = el.IdealDiode("D")
    load = el.Resistor("R", R=100.0)
    cap = el.Capacitor("C", C=1e-3, v0=0.0)
    ground = el.Ground("G")
    s.connect(source.p, diode.p)
    s.connect(diode.n, load.p, cap.p)
    s.connect(load.n, cap.n, source.n, ground.p)
    return s


CASES = [  # system, the continuous states and the modes counted by hand
    (bearing, ["J.phi", "J.w"], ["B.mode"], "2 continuous states, 1 discrete mode"),
    (
        clutch,
        ["J1.phi", "J1.w", "J2.phi", "J2.w"],
        ["F.mode"],
        "4 continuous states, 1 discrete mode",
    ),
    (rectifier, ["C.v"], ["D.off"], "1 continuous state, 1 discrete mode"),
]


@pytest.mark.parametrize("build, states, modes, counted", CASES)
def test_every_report_counts_states_and_modes_apart(build, states, modes, counted):
    model = ac.compile(build())
    assert sorted(model.states) == states and model.modes == modes
    assert (model.n_states, model.n_modes) == (len(states), len(modes))
    # the integrated vector holds both, states first: that is what the solvers step
    assert model.x_names == model.states + modes
    assert model.dae.x.numel() == len(states) + len(modes) and model.dae.modes == len(modes)
    assert f", {counted}, " in model.summary()
    blt = re.sub(r" \[[^]]*\]", "", model.blt())  # the listing without units
    assert blt.splitlines()[0].endswith(f" blocks, {counted}, index {model.index}")
    assert f"\ncontinuous states: {', '.join(model.states)}\n" in blt
    assert f"\ndiscrete modes: {', '.join(modes)}\n" in blt
    report = check_report(model)
    assert re.search(rf"^  continuous states \({len(states)}\): ", report, re.MULTILINE), report
    assert f"  discrete modes ({len(modes)}): {', '.join(modes)}" in report
    assert f", {counted}, " in str(model.ir) and f"x holds {counted};" in str(model.dae)


def test_a_model_without_modes_says_so():
    """An RC circuit: one state, and the reports say there are no modes."""
    s = ac.System("rc")
    r, c, v, g = (
        el.Resistor("R"),
        el.Capacitor("C", v0=0.0),
        el.ConstantVoltage("V"),
        el.Ground("G"),
    )
    s.connect(v.p, r.p)
    s.connect(r.n, c.p)
    s.connect(c.n, v.n, g.p)
    model = ac.compile(s)
    assert (model.states, model.modes, model.n_states, model.n_modes) == (["C.v"], [], 1, 0)
    assert ", 1 continuous state, 0 discrete modes, " in model.summary()
    assert "discrete modes" not in model.blt().splitlines()[1]
    assert "  discrete modes (0): none" in check_report(model)
