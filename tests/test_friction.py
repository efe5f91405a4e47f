"""Friction with Modelica's modes (forward, stuck, backward, free) against piecewise closed
forms: stick/slip times by hand, a free clutch that engages, break-away with Stribeck
friction, tabulated characteristics, one-way clutches, brakes and hard stops."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import acausal as ac
from components import friction
from components import rotational as rot
from components import translational as tr
from solvers import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")
TOL = dict(rtol=1e-10, atol=1e-12)


def mass_on(element, force, m=1.0):
    """force -> mass -> friction element (its flange_b) -> fixed base (its flange_a)."""
    s = ac.System("mass_on_friction")
    mass, base = tr.Mass("m", m=m, s0=0.0, v0=0.0), tr.Fixed("base")
    push = tr.Force("F", f=force)
    s.connect(push.flange, mass.flange_a)
    s.connect(mass.flange_b, element.flange_b)
    s.connect(element.flange_a, base.flange)
    return s


# -- issue 10: a mass on Coulomb friction under a biased sine ------------------------------
def biased_sine_exact(t_end):
    """F = 0.9 + 0.7 sin 2t on m = 1, kinetic 1, static 1.5, by hand: stuck until F rises
    through 1.5 (sin 2t = 6/7), then m v' = F - 1 until v = 0; F stays within [0.2, 1.6],
    so it sticks again at every stop. Returns pieces (t_b, t_s, s_b) and events."""
    t_b, s_b, pieces, events = np.arcsin(6 / 7) / 2, 0.0, [], []
    while t_b < t_end:

        def v(t, t_b=t_b):
            return -0.1 * (t - t_b) + 0.35 * (np.cos(2 * t_b) - np.cos(2 * t))

        t_s = brentq(v, t_b + 1.0, t_b + np.pi - 0.1, xtol=1e-15)
        assert abs(0.9 + 0.7 * np.sin(2 * t_s)) <= 1.5  # it sticks at the stop
        pieces.append((t_b, t_s, s_b))
        events += [(t_b, 1.0), (t_s, 0.0)]
        s_b = exact_motion(np.array([t_s]), pieces)[0][0]
        t_b += np.pi  # the next time F rises through 1.5
    return pieces, [(t, m) for t, m in events if t < t_end]


def exact_motion(t, pieces):
    """Position and velocity of the mass from the pieces of biased_sine_exact."""
    s, v = np.zeros_like(t), np.zeros_like(t)
    for t_b, t_s, s_b in pieces:
        u = np.clip(t, t_b, t_s) - t_b
        after = t >= t_b
        c, sn = np.cos(2 * t_b), np.sin(2 * t_b)
        s_piece = s_b - 0.05 * u**2 + 0.35 * c * u - 0.175 * (np.sin(2 * (t_b + u)) - sn)
        s[after] = s_piece[after]
        sliding = after & (t <= t_s)
        v[sliding] = (-0.1 * u + 0.35 * (c - np.cos(2 * (t_b + u))))[sliding]
    return s, v


def test_mass_under_a_biased_sine_sticks_and_slips_at_the_closed_form_times():
    # issue 10: each stop is located just past zero speed (v = -8.6e-12), and the next
    # break-away, forward again, used to cycle ("modes do not settle at t = 3.65644")
    fr = tr.CoulombFriction("fr", f_coulomb=1.0, f_static=1.5)
    res = simulate(mass_on(fr, 0.9 + 0.7 * ac.sin(2 * ac.time)), t_end=10.0, dt=1e-3, **TOL)
    pieces, expected = biased_sine_exact(10.0)
    assert [m["fr.mode"] for _, m in res.events] == [m for _, m in expected]
    times = np.array([t for t, _ in res.events]) - [t for t, _ in expected]
    assert np.max(np.abs(times)) < 1e-8  # measured 1.1e-9
    s, v = exact_motion(res.t, pieces)
    assert np.max(np.abs(res["m.v"] - v)) < 1e-7  # measured 9e-10
    assert np.max(np.abs(res["m.s"] - s)) < 1e-7  # measured 1.4e-9
    stuck = res["fr.mode"] == 0
    assert np.max(np.abs(res["fr.f"][stuck] - res["F.f"][stuck])) < 1e-12  # it holds the push
    assert np.max(np.abs(res["m.v"][stuck])) < 1e-10  # measured 8.6e-12: the stops overshoot


# -- clutches and brakes: free while the normal force is zero ------------------------------
def test_clutch_with_zero_normal_force_is_free_then_engages_slides_and_locks():
    # issue 10: a clutch whose normal force is 0 at the start failed to initialize. J1
    # (torque 1) spins up alone, w1 = t, until fn = 20 at t = 1: the clutch slides
    # backward (w_rel = w2 - w1 = -1) with 0.5 * 20 = 10 N m, w1 = 1 - 9 u, w2 = 10 u
    # (u = t - 1), and locks at u = 1/19; then both turn on at 0.5 rad/s^2, held by 0.5 N m
    s = ac.System("engage")
    j1, j2 = rot.Inertia("J1", J=1.0, phi0=0.0, w0=0.0), rot.Inertia("J2", J=1.0, phi0=0.0, w0=0.0)
    clutch, drive = (
        rot.Clutch("c", fn=ac.step(20.0, 1.0), mu_k=0.5, mu_s=0.6),
        rot.Torque("T", tau=1.0),
    )
    s.connect(drive.flange, j1.flange_a)
    s.connect(j1.flange_b, clutch.flange_a)
    s.connect(clutch.flange_b, j2.flange_a)
    res = simulate(s, t_end=3.0, dt=1e-3, **TOL)
    t, lock = res.t, 1.0 + 1.0 / 19.0
    u = t - 1.0
    w1 = np.where(t < 1, t, np.where(t < lock, 1 - 9 * u, 10 / 19 + 0.5 * (t - lock)))
    w2 = np.where(t < 1, 0.0, np.where(t < lock, 10 * u, 10 / 19 + 0.5 * (t - lock)))
    assert np.max(np.abs(res["J1.w"] - w1)) < 1e-8  # measured 5e-12
    assert np.max(np.abs(res["J2.w"] - w2)) < 1e-8
    assert res["c.mode"][0] == friction.FREE and np.max(np.abs(res["c.tau"][t < 1])) < 1e-12
    assert [m for _, m in res.events] == [{"c.mode": -1.0}, {"c.mode": 0.0}]
    assert abs(res.events[0][0] - 1.0) < 1e-12 and abs(res.events[1][0] - lock) < 1e-9
    assert np.max(np.abs(res["c.tau"][t > lock + 1e-3] + 0.5)) < 1e-9  # J2's share


def test_translational_brake_is_free_engages_and_holds():
    # 1 N pushes m = 1 freely until fn = 10 at t = 1: then 0.4 * 10 = 4 N of kinetic
    # friction, v = 1 - 3 (t - 1) until t = 4/3; then held (1 N < 0.5 * 10 N)
    brake = tr.Brake("b", fn=ac.step(10.0, 1.0), mu_k=0.4, mu_s=0.5)
    s = ac.System("brake")
    mass, push = tr.Mass("m", m=1.0, s0=0.0, v0=0.0), tr.Force("F", f=1.0)
    s.connect(push.flange, mass.flange_a)
    s.connect(mass.flange_b, brake.flange_a)
    res = simulate(s, t_end=2.0, dt=1e-3, **TOL)
    t = res.t
    exact = np.where(t < 1, t, np.clip(1 - 3 * (t - 1), 0.0, None))
    assert np.max(np.abs(res["m.v"] - exact)) < 1e-8
    assert res["b.mode"][0] == friction.FREE
    assert [m for _, m in res.events] == [{"b.mode": 1.0}, {"b.mode": 0.0}]
    assert abs(res.events[1][0] - 4 / 3) < 1e-9
    assert np.max(np.abs(res["b.f"][t > 1.34] - 1.0)) < 1e-9  # the brake holds the push


def test_brake_on_a_free_housing_conserves_angular_momentum():
    # the shaft (J = 2, 10 rad/s) brakes against a housing that can turn (J = 3, at rest):
    # 0.4 * 0.1 * 100 = 4 N m on each, the slip 10 - (4/2 + 4/3) t ends at t = 3, then
    # both turn at the common 20 / 5 = 4 rad/s
    s = ac.System("brake_on_housing")
    shaft, housing = rot.Inertia("J1", J=2.0, w0=10.0), rot.Inertia("J2", J=3.0, w0=0.0)
    brake = rot.Brake("brake", fn=100.0, mu_k=0.4, mu_s=0.5, cgeo=0.1, use_support=True)
    s.connect(shaft.flange_b, brake.flange_a)
    s.connect(brake.support, housing.flange_a)
    res = simulate(s, t_end=4.0, dt=1e-3, **TOL)
    t = res.t
    assert np.max(np.abs(res["J1.w"] - np.where(t < 3, 10 - 2 * t, 4.0))) < 1e-8
    assert np.max(np.abs(res["J2.w"] - np.where(t < 3, 4 / 3 * t, 4.0))) < 1e-8
    assert np.max(np.abs(2 * res["J1.w"] + 3 * res["J2.w"] - 20.0)) < 1e-9
    assert [m for _, m in res.events] == [{"brake.friction.mode": 0.0}]


def test_one_way_clutch_locks_backward_and_slides_forward():
    # torque +1 on J1 (flange_a's side): the freewheel drags J2 along (the clutch holds
    # -0.5 N m, any backward torque); from t = 1 the torque is -1: held, J2 would need
    # +0.5 N m > mu_s cgeo fn = 0.4, so J2 overruns, dragged back by 0.5 * 0.8 = 0.4 N m
    s = ac.System("one_way")
    j1, j2 = rot.Inertia("J1", J=1.0, phi0=0.0, w0=0.0), rot.Inertia("J2", J=1.0, phi0=0.0, w0=0.0)
    clutch = rot.OneWayClutch("c", fn=0.8, mu_k=0.5)
    drive = rot.Torque("T", tau=1.0 - ac.step(2.0, 1.0))
    s.connect(drive.flange, j1.flange_a)
    s.connect(j1.flange_b, clutch.flange_a)
    s.connect(clutch.flange_b, j2.flange_a)
    res = simulate(s, t_end=2.0, dt=1e-3, **TOL)
    t, u = res.t, res.t - 1.0
    assert np.max(np.abs(res["J1.w"] - np.where(t < 1, t / 2, 0.5 - 0.6 * u))) < 1e-8
    assert np.max(np.abs(res["J2.w"] - np.where(t < 1, t / 2, 0.5 - 0.4 * u))) < 1e-8
    assert np.max(np.abs(res["c.tau"][t < 1] + 0.5)) < 1e-9
    assert [(te, m) for te, m in res.events] == [(1.0, {"c.mode": 1.0})]


# -- characteristics: tabulated and Stribeck ------------------------------------------------
def test_support_friction_tabulated_with_a_peak_and_extrapolation():
    # f_pos through (0, 1), (0.5, 1.5), extrapolated: f = 1 + v; sticks up to 1.5 * 1.
    # 1.4 N holds it; from t = 1, 2 N: v = 1 - exp(-(t - 1)), beyond the last sample
    fr = tr.SupportFriction("fr", f_pos=[(0.0, 1.0), (0.5, 1.5)], peak=1.5)
    s = ac.System("support_friction")
    mass, push = tr.Mass("m", m=1.0, s0=0.0, v0=0.0), tr.Force("F", f=1.4 + ac.step(0.6, 1.0))
    s.connect(push.flange, mass.flange_a)
    s.connect(mass.flange_b, fr.flange_a)
    res = simulate(s, t_end=4.0, dt=1e-3, **TOL)
    exact = np.where(res.t < 1, 0.0, 1 - np.exp(-(res.t - 1)))
    assert np.max(np.abs(res["m.v"] - exact)) < 1e-8  # measured 6e-10
    assert np.max(np.abs(res["fr.f"][res.t < 1] - 1.4)) < 1e-12
    assert [m for _, m in res.events] == [{"fr.mode": 1.0}]


def test_bearing_friction_follows_a_table_with_a_kink():
    # tau_pos (0, 0.5), (1, 1), (2, 1.2): tau = 0.5 + 0.5 w below w = 1, 1 + 0.2 (w - 1)
    # above. Under 2 N m on J = 1: w = 3 (1 - exp(-t/2)) up to w = 1 at t1 = 2 ln(3/2),
    # then w = 6 - 5 exp(-0.2 (t - t1)); the housing (support) takes the friction torque
    s = ac.System("bearing")
    inertia, drive = rot.Inertia("J", J=1.0, phi0=0.0, w0=0.0), rot.Torque("T", tau=2.0)
    bearing = rot.BearingFriction("b", tau_pos=[(0, 0.5), (1, 1.0), (2, 1.2)], use_support=True)
    housing = rot.Fixed("housing")
    s.connect(drive.flange, inertia.flange_a)
    s.connect(inertia.flange_b, bearing.flange_a)
    s.connect(bearing.support, housing.flange)
    res = simulate(s, t_end=5.0, dt=1e-3, **TOL)
    t, t1 = res.t, 2 * np.log(1.5)
    exact = np.where(t < t1, 3 * (1 - np.exp(-t / 2)), 6 - 5 * np.exp(-0.2 * (t - t1)))
    assert np.max(np.abs(res["J.w"] - exact)) < 1e-8  # measured 3e-10
    assert np.max(np.abs(res["b.support.tau"] + res["b.tau"])) < 1e-12
    assert res["b.mode"][0] == friction.FORWARD  # 2 N m > 0.5 N m: slides from the start


STRIBECK = dict(F_Coulomb=5.0, F_Stribeck=10.0, F_prop=1.0, fexp=2.0)


def stribeck_exact(t_end, amplitude=20.0, omega=2.0):
    """Mass m = 1 under 20 sin 2t with Stribeck friction 5 + v + 10 exp(-2 v), by hand:
    stuck until |F| reaches 5 + 10 (closed form), then the sliding ODE (DOP853 at 1e-13)
    until v = 0, where it sticks if |F| <= 15. Returns the slides (their dense solutions
    and spans) and the events."""
    t, mode, events, slides = 0.0, 0, [], []
    limit = STRIBECK["F_Coulomb"] + STRIBECK["F_Stribeck"]
    base = np.arcsin(limit / amplitude) / omega  # |sin| = 0.75
    while t < t_end:
        if mode == 0:  # next time |F| reaches the limit
            period = np.pi / omega
            k = np.floor(t / period)
            starts = [(k + n) * period + d for n in (0, 1) for d in (base, period - base)]
            t_next = min(c for c in starts if c > t + 1e-12)
            mode = 1 if np.sin(omega * t_next) > 0 else -1
        else:

            def rhs(tt, y, d=mode):
                slide = 5.0 + d * y[0] + 10.0 * np.exp(-2.0 * d * y[0])
                return [amplitude * np.sin(omega * tt) - d * slide]

            def stop(tt, y, d=mode, t0=t):
                return d * y[0] if tt > t0 + 1e-9 else 1.0

            stop.terminal, stop.direction = True, -1
            sol = solve_ivp(
                rhs,
                (t, t_end + 1),
                [0.0],
                "DOP853",
                rtol=1e-13,
                atol=1e-14,
                events=stop,
                dense_output=True,
            )
            t_next = sol.t[-1]
            slides.append((t, t_next, sol.sol))
            hold = amplitude * np.sin(omega * t_next)
            mode = 0 if abs(hold) <= limit else (1 if hold > 0 else -1)
        events.append((t_next, float(mode)))
        t = t_next
    return slides, [(te, m) for te, m in events if te < t_end]


def test_break_away_with_stribeck_friction_against_the_closed_form_and_the_sliding_ode():
    s = ac.System("stribeck")
    mass = tr.MassWithStopAndFriction("m", m=1.0, smin=-100, smax=100, s0=0.0, v0=0.0, **STRIBECK)
    push = tr.Force("F", f=20.0 * ac.sin(2.0 * ac.time))
    s.connect(push.flange, mass.flange_a)
    res = simulate(s, t_end=6.0, dt=1e-3, **TOL)
    slides, expected = stribeck_exact(6.0)
    assert [m["m.mode"] for _, m in res.events] == [m for _, m in expected]
    times = np.array([t for t, _ in res.events]) - [t for t, _ in expected]
    # the first break-away, arcsin(0.75)/2, is a closed form; the others follow the ODE
    assert abs(res.events[0][0] - np.arcsin(0.75) / 2) < 1e-10  # measured 6.9e-12
    assert np.max(np.abs(times)) < 1e-8  # measured 9.8e-10
    exact = np.zeros_like(res.t)
    for t0, t1, sol in slides:
        inside = (res.t > t0) & (res.t < t1)
        exact[inside] = sol(res.t[inside])[0]
    assert np.max(np.abs(res["m.v"] - exact)) < 1e-7  # measured 2.6e-8
    assert res["m.mode"][0] == 0 and np.all(res["m.v"][res.t < 0.42] == 0.0)


def test_mass_hits_its_stops_rests_pressed_and_breaks_loose_away_from_them():
    # Coulomb 5 N only, L = 0.5, stops at +-1 (the centre within +-0.75). 20 N: a = 15
    # from rest, the right end hits at t1 = sqrt(0.1) and rests, the stop and friction
    # holding 20 N; from t = 2, -20 N: a = -15, it hits the left stop at 2 + sqrt(0.2)
    s = ac.System("stops")
    mass = tr.MassWithStopAndFriction(
        "m",
        m=1.0,
        L=0.5,
        smin=-1.0,
        smax=1.0,
        F_Coulomb=5.0,
        F_Stribeck=0.0,
        F_prop=0.0,
        s0=0.0,
        v0=0.0,
    )
    push = tr.Force("F", f=20.0 - ac.step(40.0, 2.0))
    s.connect(push.flange, mass.flange_a)
    res = simulate(s, t_end=3.0, dt=1e-3, **TOL)
    t, t1, t3 = res.t, np.sqrt(0.1), 2 + np.sqrt(0.2)
    exact = np.where(
        t < t1, 7.5 * t**2, np.where(t < 2, 0.75, np.maximum(0.75 - 7.5 * (t - 2) ** 2, -0.75))
    )
    assert np.max(np.abs(res["m.s"] - exact)) < 1e-8  # measured 1.6e-12
    assert np.max(np.abs(res["m.f"][(t > t1 + 1e-3) & (t < 2)] - 20.0)) < 1e-9
    assert [m for _, m in res.events] == [
        {"m.stopped": 1.0, "m.mode": 0.0},
        {"m.stopped": 0.0, "m.mode": -1.0},
        {"m.stopped": -1.0, "m.mode": 0.0},
    ]
    assert abs(res.events[0][0] - t1) < 1e-9 and abs(res.events[2][0] - t3) < 1e-9


def test_a_table_that_is_not_increasing_names_the_parameter():
    with pytest.raises(ac.ParameterError, match=r"b\.tau_pos.*strictly increasing"):
        rot.BearingFriction("b", tau_pos=[(0, 1.0), (0, 2.0)])
    with pytest.raises(ac.ParameterError, match=r"c\.mu_k: give samples as rows"):
        rot.Clutch("c", mu_k=[0.5, 0.3, 0.2])


def test_sensitivities_through_stick_and_slip_match_central_differences():
    # the break-away time moves with f_static, the stop with f_coulomb: the jump conditions
    # at both events carry d(m.s)/dp across them
    fr = tr.CoulombFriction("fr", f_coulomb=1.0, f_static=1.5)
    model = ac.compile(mass_on(fr, 0.9 + 0.7 * ac.sin(2 * ac.time)))
    run = dict(t_end=4.0, dt=1e-2, **TOL)
    res = simulate(model, sensitivities=["fr.f_coulomb", "fr.f_static"], **run)
    assert len(res.events) == 3  # break away, stop, break away
    tight = dict(run, rtol=1e-12, atol=1e-14)
    for name in ("fr.f_coulomb", "fr.f_static"):
        p0, h = model.defaults[name], 1e-6
        up = simulate(model, params={name: p0 + h}, **tight)["m.s"]
        down = simulate(model, params={name: p0 - h}, **tight)["m.s"]
        fd = (up - down) / (2 * h)
        err = np.max(np.abs(res.sensitivity("m.s", name) - fd)) / np.max(np.abs(fd))
        # the differenced runs two decades tighter than the sensitivities': at rtol 1e-10
        # each run's error divided by h = 1e-6 is ~1e-4, the bound (f_static's differences
        # were 1.8e-5 to 1.9e-5 off on different step sequences); now 4.8e-9 and 1.9e-8
        assert err < 1e-4, (name, err)
