"""The feasibility check's horizon and grid follow the model (issue 31), warnings raised on
the way become findings of its report, and a mechanism whose run switches state sets
(dynamic state selection) is checked piece by piece.

Time scales against closed forms: an RC's eigenvalue is ``-1/(RC)``, an RLC's are the roots
of ``LC s^2 + RC s + 1`` (numpy's polynomial roots, a second method), a sine source's period
is ``1/f``; the horizon is five of the longest time constant or three of the longest
period after the last step, its step at most a twentieth of the shortest scale."""

import warnings

import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import translational as tr
from examples.ladders import rc_ladder
from examples.references import mechanisms as mech
from examples.references.switching import sine_with_load
from solvers.time_scales import MAX_POINTS, time_scales

# the negative elements below are meant
pytestmark = pytest.mark.filterwarnings("ignore::acausal.ParameterWarning")


def rc(source, R=1e3, C=1e-6):
    s = ac.System("rc")
    R_, C_, G = el.Resistor("R", R=R), el.Capacitor("C", C=C), el.Ground("G")
    s.connect(source.p, R_.p)
    s.connect(R_.n, C_.p)
    s.connect(C_.n, source.n, G.p)
    return s


def test_a_500_hz_circuit_is_checked_over_a_few_periods_sampled_within_each():
    """RC = 1 ms and a 500 Hz source: the horizon is max(5 RC, 3/f) = 6 ms with at least
    20 samples per period (the old default, 10 s at 501 points, sampled every 10th
    period: aliased)."""
    system = rc(el.SineVoltage("V", V=1.0, f=500.0))
    scales = time_scales(ac.compile(system))
    assert scales.time_constants == pytest.approx([1e-3], rel=1e-9)
    assert scales.source_periods == pytest.approx([2e-3], rel=1e-12)
    report = ln.check_feasibility(system)
    assert report.ok, str(report)
    assert report.t == pytest.approx((0.0, 6e-3), rel=1e-12)
    assert np.max(np.diff(report.result.t)) <= 2e-3 / 20 * (1 + 1e-9)
    # a given horizon is kept, and only the step follows the model
    longer = ln.check_feasibility(system, t_end=0.05)
    assert longer.t == pytest.approx((0.0, 0.05))
    assert np.max(np.diff(longer.result.t)) <= 2e-3 / 20 * (1 + 1e-9)


def test_an_rlc_after_a_step_is_checked_until_it_settles():
    R, L, C = 0.5, 1.0, 1.0
    s = ac.System("rlc")
    V, G = el.StepVoltage("V", V=1.0, start_time=1.0), el.Ground("G")
    R_, L_, C_ = el.Resistor("R", R=R), el.Inductor("L", L=L), el.Capacitor("C", C=C)
    s.connect(V.p, R_.p)
    s.connect(R_.n, L_.p)
    s.connect(L_.n, C_.p)
    s.connect(C_.n, V.n, G.p)
    scales = time_scales(ac.compile(s))
    roots = np.roots([L * C, R * C, 1.0])
    assert sorted(scales.eigenvalues, key=lambda v: v.imag) == pytest.approx(
        sorted(roots, key=lambda v: v.imag), rel=1e-9
    )
    tau, period = 1 / abs(roots[0].real), 2 * np.pi / abs(roots[0].imag)
    assert scales.breakpoints == (1.0,)
    t_end, dt = scales.horizon()
    assert t_end == pytest.approx(1.0 + max(5 * tau, 3 * period), rel=1e-9)
    assert dt <= min(tau, period) / 20


@pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning")
def test_a_model_without_time_scales_keeps_the_default_horizon():
    """A mass pushed by a constant force: both eigenvalues are 0 (s'' = F/m), no scale."""
    s = ac.System("push")
    m, f = tr.Mass("m", m=2.0), tr.ConstantForce("F", f_constant=1.0)
    s.connect(f.flange, m.flange_a)
    scales = time_scales(ac.compile(s))
    assert scales.scales == () and scales.eigenvalues == pytest.approx([0, 0])
    assert scales.horizon() == pytest.approx((10.0, 10.0 / 200))


def test_warnings_become_findings_and_none_escapes():
    """A negative resistor on a capacitor grows like exp(t) until IDAS fails where
    exp(t) leaves the doubles (t ~ 709.8); the power v*i = -v^2 of the trajectory up to just
    before overflows there (exp(2t) > 1.8e308 for t > 355), and a diode with a negative load
    chatters at its switches. Each is a finding; no warning reaches the caller."""
    unstable = rc(el.StepVoltage("V", V=1.0, start_time=0.5), R=-1.0, C=1.0)
    chatter = sine_with_load(el.IdealDiode("D"), -1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grows = ln.check_feasibility(unstable, t_end=800.0)
        switches = ln.check_feasibility(chatter)
    assert caught == []
    overflow = [f for f in grows.findings if f.check == "numerics"]
    assert overflow and "overflow" in overflow[0].message
    assert any("EventIterationWarning" in f.message for f in switches.findings)
    assert not grows.ok and not switches.ok  # the negative elements themselves are errors


def test_a_slider_crank_that_switches_state_sets_is_checked_piece_by_piece():
    """Started on the piston pin at top dead centre: the pin angle's state set is singular
    at the next dead point (det J = -0.1 cos(B1.phi)), where the run continues with the crank
    angle. Each set's blocks are checked along the times it was used; the dead point is
    information, not a problem. A negative damper on the crank is named."""
    system = mech.Variant("slider_crank", "rocker", "torque", 0.0).build()
    report = ln.check_feasibility(system)
    assert report.ok, str(report)
    assert len(report.result.state_switches) >= 1
    sets = {b.states for b in report.blocks}
    assert len(sets) == 2 and all(sets)
    dead = [b for b in report.blocks if b.finding.severity == "info"]
    assert dead and all("dynamic state selection" in b.finding.message for b in dead)
    bad = ln.check_feasibility(system, params={"damper.d": -1.0})
    assert {(f.check, f.component) for f in bad.errors} == {("dissipativity", "damper")}


def test_the_grid_is_capped_for_a_stiff_model():
    """RC = 1 us and a 1 Hz source: resolving 1 us over 3 s would take 6e7 points; the
    output grid stops at MAX_POINTS (IDAS still resolves the fast scale by its own steps)."""
    system = rc(el.SineVoltage("V", V=1.0, f=1.0), R=1.0, C=1e-6)
    t_end, dt = time_scales(ac.compile(system)).horizon()
    assert t_end == pytest.approx(3.0) and round(t_end / dt) + 1 == MAX_POINTS


def test_a_ladder_of_component_arrays_is_checked_element_by_element():
    """Five RC sections made with Component.array: each instance is checked as itself; the
    horizon covers the ladder's slowest mode (its eigenvalues are those of the tridiagonal
    matrix of the sections: checked against numpy's), and R3 made negative is named."""
    n = 5
    system = rc_ladder(n, arrays=True, start_time=0.1)
    scales = time_scales(ac.compile(system))
    # C v' = K v with K tridiagonal (the conductances n between sections, the last open)
    K = np.diag([-2.0 * n] * (n - 1) + [-1.0 * n]) + np.diag([n] * (n - 1), 1)
    K += np.diag([n] * (n - 1), -1)
    exact = np.sort(np.linalg.eigvals(K / (1.0 / n)).real)
    assert np.sort([v.real for v in scales.eigenvalues]) == pytest.approx(exact, rel=1e-9)
    report = ln.check_feasibility(system)
    assert report.ok and {f"R{k}" for k in range(1, n + 1)} <= set(report.components)
    assert report.t[1] == pytest.approx(0.1 + 5 / abs(exact[-1]), rel=1e-9)
    bad = ln.check_feasibility(system, params={"R3.R": -0.2})
    assert ("dissipativity", "R3") in {(f.check, f.component) for f in bad.errors}
