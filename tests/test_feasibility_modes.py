"""The feasibility check on models with discrete modes (issue 31): stick-slip friction
(rotational, translational, a bearing's Stribeck table), clutches, ideal diodes and
switches. Feasible variants pass, with the power of a damper beside stick-slip friction read
from the result's own derivatives (finite differences across a switch showed -2e-6 for a
dissipative damper); a negative damper or resistor beside the switching element is flagged
by name (power ``d w^2 < 0``, ``v^2/R < 0``: closed forms); a loop
that is singular in one mode only is found in that mode (closed form: ``Ron + R = 0``), and a
mode switch is not mistaken for a root of the determinant."""

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import rotational as rot
from components import translational as tr
from examples.references.switching import sine_with_load

# a negative load makes an ideal diode chatter at its switches: the event iteration warns
# (its own tests are in test_events.py); here the report is what is checked
pytestmark = [
    pytest.mark.filterwarnings("ignore::solvers.events.EventIterationWarning"),
    pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning"),
    pytest.mark.filterwarnings("ignore::acausal.ParameterWarning"),  # the negative ones, meant
]
DRIVE = 3.0 * ac.sin(2 * ac.time)


def beside(element, d):
    """An inertia driven by ``DRIVE`` against ``element`` and a damper ``d`` to the ground
    (friction between flanges: to the ground too; a bearing: on the inertia's shaft, its
    housing fixed)."""
    s = ac.System("friction")
    J, tau = rot.Inertia("J", J=1.0), rot.Torque("tau", tau=DRIVE)
    damper, fixed = rot.Damper("d", d=d), rot.Fixed("fx")
    s.connect(tau.flange, J.flange_a)
    s.connect(J.flange_b, element.flange_a, damper.flange_a)
    if isinstance(element, rot.BearingFriction):  # its flange_b: the shaft's free end
        s.connect(damper.flange_b, fixed.flange)
    else:
        s.connect(element.flange_b, damper.flange_b, fixed.flange)
    return s


def clutch(d):
    """Two inertias coupled by a clutch pressed by a varying normal force, the second
    damped by ``d``."""
    s = ac.System("clutch")
    J1, J2, tau = rot.Inertia("J1", J=1.0), rot.Inertia("J2", J=1.0), rot.Torque("tau", tau=DRIVE)
    c = rot.Clutch("c", fn=2.0 * (1 + ac.sin(ac.time)), mu_k=0.5)
    damper, fixed = rot.Damper("d", d=d), rot.Fixed("fx")
    s.connect(tau.flange, J1.flange_a)
    s.connect(J1.flange_b, c.flange_a)
    s.connect(c.flange_b, J2.flange_a)
    s.connect(J2.flange_b, damper.flange_a)
    s.connect(damper.flange_b, fixed.flange)
    return s


def square():
    return ac.if_else(ac.sin(2 * np.pi * ac.time) > 0, 1.0, 0.0)


def slide(d):
    """A mass driven by ``DRIVE`` against Coulomb friction with stiction and a damper ``d``,
    both to the ground."""
    s = ac.System("slide")
    m, f = tr.Mass("m", m=1.0), tr.Force("F", f=DRIVE)
    fr, damper = tr.CoulombFriction("fr", f_coulomb=1.0, f_static=1.5), tr.Damper("d", d=d)
    fixed = tr.Fixed("fx")
    s.connect(f.flange, m.flange_a)
    s.connect(m.flange_b, fr.flange_a, damper.flange_a)
    s.connect(fr.flange_b, damper.flange_b, fixed.flange)
    return s


STRIBECK = [(0, 1.0), (1, 0.8), (3, 1.2)]  # (speed, torque): a dip, then viscous rise
CASES = {  # builder of (feasible, infeasible) by the sign of the element beside, its name
    "rotational Coulomb friction": (
        lambda d: beside(rot.CoulombFriction("fr", tau_coulomb=1.0, tau_static=1.5), d),
        "d",
    ),
    "bearing friction (Stribeck table)": (
        lambda d: beside(rot.BearingFriction("fr", tau_pos=STRIBECK, peak=1.3), d),
        "d",
    ),
    "translational Coulomb friction": (slide, "d"),
    "clutch": (clutch, "d"),
    "ideal diode": (lambda sign: sine_with_load(el.IdealDiode("D"), sign), "R"),
    "ideal switch": (lambda sign: sine_with_load(el.IdealSwitch("S", control=square()), sign), "R"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_models_with_modes_are_checked_and_a_negative_element_beside_is_named(case):
    build, culprit = CASES[case]
    good = ln.check_feasibility(build(1.0), t_end=4.0, dt=0.01)
    assert good.ok, str(good)
    assert good.result is not None and good.result.events  # simulated through the events
    bad = ln.check_feasibility(build(-1.0), t_end=4.0, dt=0.01)
    assert not bad.ok
    assert {(f.check, f.component) for f in bad.errors} == {("dissipativity", culprit)}


def test_a_loop_singular_in_one_mode_is_found_in_that_mode():
    """Diode and load in series: ``s (Ron + R) = V`` on, ``s (1 + Goff R) = V`` off. With
    ``R = -Ron`` the loop has no solution in the on mode only; with ``R = 1`` none vanishes,
    and the sign change of det J at each switch (-Ron - R to 1 + Goff R) is no root. Checked
    without simulating: the relation's modes 0 and 1."""
    Ron = 1e-5
    singular = ln.check_feasibility(
        sine_with_load(el.IdealDiode("D", Ron=Ron), -Ron), simulate=False
    )
    (block,) = [b for b in singular.blocks if b.finding.severity == "error"]
    assert "identically zero" in block.finding.message
    assert "in the mode D.off = 0" in block.finding.message
    regular = ln.check_feasibility(sine_with_load(el.IdealDiode("D", Ron=Ron), 1.0), simulate=False)
    assert regular.ok and all(b.finding.severity == "ok" for b in regular.blocks)
    simulated = ln.check_feasibility(sine_with_load(el.IdealDiode("D", Ron=Ron), -1.0), t_end=2.0)
    assert not any(f.check == "block" for f in simulated.errors)  # the switches are no root


def test_the_command_line_checks_a_circuit_with_an_ideal_diode(tmp_path, capsys):
    """``acausal check --feasibility FILE`` on the diode circuit: it failed with CasADi's
    'variables [...:off] are free' before modes were part of the check."""
    from learning.cli import main

    model = tmp_path / "rectifier.py"
    model.write_text(
        "import acausal as ac\n"
        "from components import electrical as el\n"
        "system = ac.System('rectifier')\n"
        "V, D, G = el.SineVoltage('V', V=1.0, f=1.0), el.IdealDiode('D'), el.Ground('G')\n"
        "R = el.Resistor('R', R=1.0)\n"
        "system.connect(V.p, D.p)\n"
        "system.connect(D.n, R.p)\n"
        "system.connect(R.n, V.n, G.p)\n"
    )
    assert main(["check", "--feasibility", str(model)]) == 0
    out = capsys.readouterr().out
    assert "Feasibility of rectifier: ok" in out and "(in the mode D.off = " in out
