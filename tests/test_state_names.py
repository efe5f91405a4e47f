"""States named by the variable the user wrote (issue 31): a revolute joint declares its
speed ``w == der(phi)``; when index reduction keeps ``der(phi)`` as a state, it is reported
as ``w`` in ``model.states``, the BLT, the ``check`` report and the names a result offers,
while the numbers stay those of the same model.

The independent references: the period of a pendulum, ``4 sqrt(L/g) K(sin^2(theta0/2))``
(the complete elliptic integral: ``2 pi sqrt(L/g)`` at small amplitude), its angular
acceleration ``-(g/L) cos(phi)`` (a point mass at ``L`` from the pivot, ``phi`` from +x,
gravity along -y), and a torsional oscillator's period ``2 pi sqrt(J/c)``.
"""

import re

import numpy as np
import pytest
from scipy.special import ellipk

import acausal as ac
from components import planar as pl
from components import rotational as rot
from learning.cli import check_report
from solvers import simulate

G, L = 9.80665, 0.5


class StopJoint(pl.Revolute):
    """A revolute joint with an elastic stop at ``phi_stop``: the speed reverses there, and
    the discrete ``hits`` counts the impacts."""

    def __init__(self, name: str, phi0: float, phi_stop: float) -> None:
        super().__init__(name, phi0=phi0, w0=0.0)
        self.hits = self.discrete("hits", 0.0)
        down = self.w < 0  # moving into the stop (from above)
        self.event(
            [self.phi - phi_stop],
            {self.w: ac.if_else(down, -self.w, self.w), self.hits: self.hits + down},
        )


def pendulum(theta0: float, rev: pl.Revolute | None = None) -> ac.System:
    """A point mass on a massless rod of length L from the joint ``rev`` (a free revolute
    released at rest ``theta0`` from the bottom unless given)."""
    s = ac.System("pendulum")
    world = pl.World("world", g=G)
    rev = rev or pl.Revolute("rev", phi0=-np.pi / 2 + theta0, w0=0.0)
    body = pl.Body("body", m=1.0, I=0.0, r_cm=(L, 0.0))
    s.connect(world.frame_b, rev.frame_a)
    s.connect(rev.frame_b, body.frame_a)
    return s


def period(t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Times between successive upward zero crossings of ``w`` (linear interpolation:
    exact to O(dt^2 w''), and ``w'' = -omega^2 w`` vanishes at the crossing)."""
    k = np.flatnonzero((w[:-1] < 0) & (w[1:] >= 0))
    crossings = t[k] - w[k] * (t[k + 1] - t[k]) / (w[k + 1] - w[k])
    return np.diff(crossings)


def test_a_pendulum_s_states_are_the_joint_s_angle_and_speed():
    model = ac.compile(pendulum(0.2))
    assert model.states == ["rev.phi", "rev.w"]
    blt = re.sub(r" \[[^]]*\]", "", model.blt())  # the listing without units
    assert "\ncontinuous states: rev.phi, rev.w\n" in blt
    assert "der(rev.phi)" not in "".join(model.states) + check_report(model)
    assert "  continuous states (2): rev.phi, rev.w" in check_report(model)
    assert "continuous states: rev.phi, rev.w" in str(model.ir)
    # the column index reduction kept is der(rev.phi): the equation that declares w solves
    # the other one, shown as der(rev.phi), as it would be if w were the state
    (declaring,) = [b for b in model.blocks if model.describe(b.unknowns[0]) == "der(rev.phi)"]
    assert str(model.ir.equations[declaring.equations[0]].origin) == "rev: w == der(phi)"


@pytest.mark.parametrize("theta0", [1e-3, 0.5])
def test_the_pendulum_s_period_and_acceleration_match_the_closed_forms(theta0):
    T = 4 * np.sqrt(L / G) * ellipk(np.sin(theta0 / 2) ** 2)
    res = simulate(pendulum(theta0), t_end=3.2 * T, dt=T / 2000, rtol=1e-11, atol=1e-13)
    assert res.model.states == ["rev.phi", "rev.w"]
    periods = period(res.t, res["rev.w"])
    assert len(periods) >= 2
    # rtol 1e-11 and the crossings' interpolation: measured within 1e-10 of T
    np.testing.assert_allclose(periods, T, rtol=1e-7)
    if theta0 < 0.01:  # the small-angle period, to the amplitude's correction theta0^2 / 16
        assert abs(periods.mean() / (2 * np.pi * np.sqrt(L / G)) - 1) < theta0**2 / 16 + 1e-7
    # the state's derivative under its new name: the point mass's angular acceleration
    alpha = -(G / L) * np.cos(res["rev.phi"])
    np.testing.assert_allclose(res["der(rev.w)"], alpha, rtol=0, atol=1e-8 * np.abs(alpha).max())
    assert np.array_equal(res["der(rev.w)"], res["der(der(rev.phi))"])
    np.testing.assert_allclose(res["rev.w"], res["der(rev.phi)"], rtol=0, atol=1e-12)


def test_an_event_re_initializes_the_state_by_its_declared_name():
    """An elastic stop at the bottom: the speed reverses there, so the mass swings back on
    one side, and each swing out and back takes half the free period."""
    theta0 = 0.3
    T = 4 * np.sqrt(L / G) * ellipk(np.sin(theta0 / 2) ** 2)
    system = pendulum(theta0, StopJoint("rev", -np.pi / 2 + theta0, phi_stop=-np.pi / 2))
    model = ac.compile(system)
    assert model.states == ["rev.phi", "rev.w"]
    res = simulate(model, t_end=1.6 * T, dt=T / 2000, rtol=1e-11, atol=1e-12)
    theta = res["rev.phi"] + np.pi / 2
    assert theta.min() > -1e-6  # never beyond the stop
    assert res["rev.hits"][-1] == 3  # at T/4, 3T/4 and 5T/4
    # back at the release angle, at rest, after T/2, T and 3T/2
    for k in (1, 2, 3):
        i = int(np.argmin(np.abs(res.t - k * T / 2)))
        assert theta[i] == pytest.approx(theta0, abs=1e-6)


def test_an_inertia_on_a_spring_keeps_its_own_angle_and_speed():
    J, c = 2.0, 3.0
    s = ac.System("torsion")
    inertia = rot.Inertia("J", J=J, phi0=0.1, w0=0.0)
    spring = rot.Spring("c", c=c)
    wall = rot.Fixed("wall")
    s.connect(inertia.flange_b, spring.flange_a)
    s.connect(spring.flange_b, wall.flange)
    with pytest.warns(UserWarning, match="unconnected connectors J.flange_a"):
        model = ac.compile(s)
    assert model.states == ["J.phi", "J.w"]
    T = 2 * np.pi * np.sqrt(J / c)
    res = simulate(model, t_end=3.2 * T, dt=T / 2000, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(period(res.t, res["J.w"]), T, rtol=1e-7)


def test_data_may_name_a_relabelled_state_by_either_of_its_names():
    """``rev.w`` and ``der(rev.phi)`` are one number: a rollout's measured states and its
    prediction take either name (they held ``der(rev.phi)`` before
    the relabelling, as the slider-crank example's data still do). The prediction from the
    pendulum's own samples reproduces them to the RK4 error (h = 1 ms, a few 1e-9)."""
    from learning.training.rollout import predict

    model = ac.compile(pendulum(0.3))
    assert model.names_of("rev.w") == ("rev.w", "der(rev.phi)")
    assert model.names_of("der(rev.w)") == ("der(rev.w)", "der(der(rev.phi))")
    res = simulate(model, t_end=0.2, dt=1e-3, rtol=1e-12, atol=1e-12)
    old = {"t": res.t, "rev.phi": res["rev.phi"], "der(rev.phi)": res["rev.w"]}
    new = {"t": res.t, "rev.phi": res["rev.phi"], "rev.w": res["rev.w"]}
    a, b = predict(model, old), predict(model, new)
    for key in ("rev.w", "der(rev.phi)"):
        assert np.array_equal(a[key], b[key])
        assert np.max(np.abs(a[key] - res["rev.w"])) < 1e-7
