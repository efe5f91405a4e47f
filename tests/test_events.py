"""Events: located mode switches against piecewise closed forms."""

import numpy as np
import pytest
from scipy.optimize import brentq

import acausal as ac
from components import electrical as el
from components import rotational as rot
from components import translational as tr
from examples.references.switching import (
    FC,
    FS,
    MASS,
    OMEGA,
    V0,
    A,
    C,
    F,
    R,
    friction_system,
    half_wave,
)
from solvers import simulate

W = 2 * np.pi * F


def closed_form(t_end):
    """Ideal diode, RC load: conduct (v = V sin wt) until the diode current
    C V w cos wt + V sin wt / R vanishes, then discharge until the source catches up."""
    events, t_on = [], 0.0
    pieces = []
    while t_on < t_end:
        k = np.floor(W * t_on / (2 * np.pi))
        t_off = (np.pi - np.arctan(W * R * C) + 2 * np.pi * k) / W
        v_off = V0 * np.sin(W * t_off)

        def gap(t, t_off=t_off, v_off=v_off):
            return V0 * np.sin(W * t) - v_off * np.exp(-(t - t_off) / (R * C))

        peak = (2 * np.pi * (k + 1) + np.pi / 2) / W
        t_next = brentq(gap, (2 * np.pi * (k + 1)) / W, peak, xtol=1e-14)
        pieces.append((t_on, t_off, t_next, v_off))
        events += [t_off, t_next]
        t_on = t_next
    return pieces, [e for e in events if e < t_end]


def test_half_wave_rectifier_matches_piecewise_closed_form():
    t_end = 0.1
    res = simulate(half_wave(), t_end=t_end, dt=1e-4, rtol=1e-10, atol=1e-12)
    pieces, expected = closed_form(t_end)
    exact = np.empty_like(res.t)
    for t_on, t_off, t_next, v_off in pieces:
        on = (res.t >= t_on) & (res.t <= t_off)
        off = (res.t > t_off) & (res.t < t_next)
        exact[on] = V0 * np.sin(W * res.t[on])
        exact[off] = v_off * np.exp(-(res.t[off] - t_off) / (R * C))
    # Ron = 1 uOhm and Goff = 1 nS make the diode ideal to about 1e-6 V here
    assert np.max(np.abs(res["C.v"] - exact)) < 2e-5
    located = [t for t, _ in res.events]
    assert len(located) == len(expected)
    assert np.max(np.abs(np.array(located) - expected)) < 1e-8  # measured 2e-10
    modes = [m["D.off"] for _, m in res.events]
    assert modes == [1.0 - k % 2 for k in range(len(expected))]  # off, on, off, ...


def test_diode_mode_settles_at_start():
    # started 'off' (a parameter) with the source forward-biasing it (phase 0.3): the start
    # event iteration turns it on: at t = 0 it conducts (10 sin 0.3 - 0) / Ron
    model = ac.compile(half_wave())
    params = {"D.off_start": 1.0, "V.phase": 0.3}
    res = simulate(model, t_end=0.004, dt=1e-4, rtol=1e-10, atol=1e-12, params=params)
    assert res["D.off"][0] == 0.0 and res.events == []
    assert res["D.i"][0] == pytest.approx(V0 * np.sin(0.3) / 1e-6, rel=1e-12)


def central_difference(model, name, output, h, **run):
    p0 = model.defaults[name]
    up = simulate(model, params={name: p0 + h}, **run)[output]
    down = simulate(model, params={name: p0 - h}, **run)[output]
    return (up - down) / (2 * h)


def test_sensitivities_through_diode_events_match_central_differences():
    # six switchings in 0.05 s; each moves with R and C: the jump conditions
    # S+ = S- + (f- - f+) tau_p carry the sensitivities across them
    model = ac.compile(half_wave(Ron=1e-2, Goff=1e-6))
    run = dict(t_end=0.05, dt=1e-4, rtol=1e-10, atol=1e-12)
    res = simulate(model, sensitivities=["R.R", "C.C"], **run)
    assert len(res.events) == 5
    # the differenced runs two decades tighter than the sensitivities': at the same
    # tolerances each run's error, divided by the step, put the differences 1e-7 off on one
    # step sequence and 5e-5 on another (1-ulp changes of the parameters), near the bound;
    # now 8e-7 and 1.7e-6, the sensitivities' own error
    tight = dict(run, rtol=1e-12, atol=1e-14)
    for name, h in (("R.R", 1e-4), ("C.C", 1e-10)):
        fd = central_difference(model, name, "C.v", h, **tight)
        err = np.max(np.abs(res.sensitivity("C.v", name) - fd)) / np.max(np.abs(fd))
        assert err < 1e-4, (name, err)


def knee_loop(load, Ron=0.2, Goff=0.2, Vknee=5.0):
    """A 10 V, 1 Hz sine source, an ideal diode with a knee and a load resistor."""
    s = ac.System("knee")
    src, gnd = el.SineVoltage("V", V=10.0, f=1.0), el.Ground("G")
    d, r = el.IdealDiode("D", Ron=Ron, Goff=Goff, Vknee=Vknee), el.Resistor("R", R=load)
    s.connect(src.p, d.p)
    s.connect(d.n, r.p)
    s.connect(r.n, src.n, gnd.p)
    return s


def test_diode_with_a_knee_switches_at_the_closed_form_times_for_every_load():
    # s = 0 means v = Vknee, i = Goff Vknee in either mode: the diode switches where
    # 10 sin(2 pi t) = Vknee (1 + R Goff). Rounding used to give s the other sign right
    # after the switch (s = -2.4e-15) and 4 of these 25 loads failed ("modes do not settle")
    gaps = []
    for load in np.logspace(-3, 0, 25):
        res = simulate(ac.compile(knee_loop(load)), t_end=1.0, dt=1e-3, rtol=1e-8, atol=1e-10)
        rise = np.arcsin(5.0 * (1 + 0.2 * load) / 10.0) / (2 * np.pi)
        assert [m for _, m in res.events] == [{"D.off": 0.0}, {"D.off": 1.0}]
        gaps += [abs(res.events[0][0] - rise), abs(res.events[1][0] - (0.5 - rise))]
    assert max(gaps) < 1e-9  # measured 3e-12


def test_a_relation_that_starts_at_zero_and_moves_fires_at_once():
    # -10 sin: the diode's s starts at exactly 0 (on, as s < 0 is false) and goes negative
    s = ac.System("reverse")
    src, gnd = el.SineVoltage("V", V=10.0, f=1.0, phase=np.pi), el.Ground("G")
    d, r = el.IdealDiode("D", Ron=1e-6, Goff=1e-9), el.Resistor("R", R=1.0)
    s.connect(src.p, d.p)
    s.connect(d.n, r.p)
    s.connect(r.n, src.n, gnd.p)
    res = simulate(s, t_end=0.6, dt=1e-3, rtol=1e-10, atol=1e-12)
    (t_off, modes), (t_on, back) = res.events
    assert t_off < 1e-9 and modes == {"D.off": 1.0}
    assert abs(t_on - 0.5) < 1e-9 and back == {"D.off": 0.0}
    blocked = (res.t > 0) & (res.t < 0.5)
    # off: i = Goff v with v ~ -10 sin (the load takes 1e-9 of it); i is known to the
    # rounding of the loop equation 10 sin = v + R i (2e-15 A)
    exact = 1e-9 * 10.0 * np.sin(np.pi + 2 * np.pi * res.t[blocked]) / (1 + 1e-9)
    assert np.max(np.abs(res["R.i"][blocked] - exact)) < 1e-14


class Toggle(ac.Component):
    """A mode that flips at every round of event iteration when ``time`` crosses 1."""

    def __init__(self, name):
        super().__init__(name)
        self.x = self.variable("x", start=0.0, fixed=True)
        self.m = self.discrete("m", 0.0)
        self.equations(ac.der(self.x) == self.m)
        self.event([ac.time - 1.0], {self.m: ac.if_else(ac.time > 1.0, 1.0 - self.m, self.m)})


def test_modes_that_alternate_at_one_instant_are_resolved_with_a_warning():
    s = ac.System("toggling")
    s.add(Toggle("T"))
    with pytest.warns(UserWarning, match=r"t = 1 the modes T\.m alternate"):
        res = simulate(s, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    # the first state of the cycle (m = 1) is kept: x = t - 1 after t = 1
    assert np.max(np.abs(res["T.x"] - np.clip(res.t - 1.0, 0.0, None))) < 1e-9
    assert [m for _, m in res.events] == [{"T.m": 1.0}]


def stick_slip_exact(t_end):
    """Mass on a fixed base with Coulomb friction (kinetic FC, static FS) under the force
    A sin(wt), by hand: while stuck, wait for |F| = FS; while sliding in direction d,
    m v = (A/w)(cos w t0 - cos w t) - d FC (t - t0) (v = 0 at t0) until v = 0 again."""
    t, mode, events = 0.0, 0, []
    pieces = []  # (t0, t1, direction)
    while t < t_end:
        if mode == 0:
            # next time |A sin(wt)| reaches FS, after t
            base = np.arcsin(FS / A) / OMEGA
            period = np.pi / OMEGA
            k = np.floor((t - base) / period) + 1
            candidates = [base + n * period for n in range(int(k) - 1, int(k) + 2)]
            candidates += [period - base + n * period for n in range(int(k) - 1, int(k) + 2)]
            t_next = min(c for c in candidates if c > t + 1e-12)
            mode = 1 if A * np.sin(OMEGA * t_next) > 0 else -1
            pieces.append((t, t_next, 0))
        else:
            d, t0 = mode, t

            def vel(tt, t0=t0, d=d):
                return (
                    A / OMEGA * (np.cos(OMEGA * t0) - np.cos(OMEGA * tt)) - d * FC * (tt - t0)
                ) / MASS

            grid = np.linspace(t0 + 1e-9, t0 + 10.0, 100001)
            values = d * vel(grid)
            stop = grid[np.nonzero(values <= 0)[0][0]]
            t_next = brentq(vel, stop - 1e-3, stop, xtol=1e-15)
            hold = A * np.sin(OMEGA * t_next)
            mode = 0 if abs(hold) <= FS else (1 if hold > 0 else -1)
            pieces.append((t0, t_next, d))
        events.append((t_next, mode))
        t = t_next
    return pieces, [(te, m) for te, m in events if te < t_end]


def exact_velocity(t, pieces):
    v = np.zeros_like(t)
    for t0, t1, d in pieces:
        inside = (t >= t0) & (t <= t1)
        if d:
            v[inside] = (
                A / OMEGA * (np.cos(OMEGA * t0) - np.cos(OMEGA * t[inside]))
                - d * FC * (t[inside] - t0)
            ) / MASS
    return v


def test_coulomb_friction_stick_slip_against_exact_event_times():
    t_end = 4.0
    res = simulate(friction_system(), t_end=t_end, dt=1e-3, rtol=1e-10, atol=1e-12)
    pieces, expected = stick_slip_exact(t_end)
    located = res.events
    assert [m["fr.mode"] for _, m in located] == [float(m) for _, m in expected]
    assert np.max(np.abs([t for t, _ in located] - np.array([t for t, _ in expected]))) < 1e-7
    assert np.max(np.abs(res["m.v"] - exact_velocity(res.t, pieces))) < 1e-7
    stuck = res["fr.mode"] == 0
    assert np.max(np.abs(res["m.v"][stuck])) < 1e-9  # no creep while stuck


def test_smooth_friction_approaches_coulomb_while_sliding():
    s = ac.System("smooth")
    mass = tr.Mass("m", m=MASS, v0=2.0, s0=0.0)
    free = tr.ConstantForce("push", f_constant=0.0)
    s.connect(free.flange, mass.flange_a)
    fr = tr.CoulombFriction("fr", f_coulomb=FC, smooth=True, v_smooth=1e-4)
    base = tr.Fixed("base")
    s.connect(mass.flange_b, fr.flange_b)
    s.connect(fr.flange_a, base.flange)
    res = simulate(s, t_end=1.5, dt=0.01, rtol=1e-9, atol=1e-11)
    # while |v| >> v_smooth it decelerates at FC/m: v = 2 - t (it would stop at t = 2)
    assert np.max(np.abs(res["m.v"] - (2.0 - res.t))) < 1e-6


def test_brake_stops_a_spinning_inertia_and_holds_it():
    s = ac.System("braking")
    inertia = rot.Inertia("J", J=2.0, phi0=0.0, w0=10.0)
    brake = rot.Brake("brake", fn=ac.step(100.0, 1.0), mu_k=0.4, mu_s=0.5, cgeo=0.1)
    s.connect(inertia.flange_b, brake.flange_a)
    res = simulate(s, t_end=8.0, dt=0.01, rtol=1e-10, atol=1e-12)
    # 4 N m of kinetic friction from t = 1 on J = 2: w = 10 - 2 (t - 1) until t = 6
    exact = np.clip(10.0 - 2.0 * np.clip(res.t - 1.0, 0.0, None), 0.0, None)
    assert np.max(np.abs(res["J.w"] - exact)) < 1e-7
    (t_stop, modes), *rest = res.events
    assert abs(t_stop - 6.0) < 1e-9 and modes == {"brake.friction.mode": 0.0} and not rest


def test_switched_rc_charges_only_while_closed():
    s = ac.System("switched")
    src, gnd = el.ConstantVoltage("V", V=1.0), el.Ground("G")
    sw = el.IdealSwitch(
        "S", control=ac.if_else(ac.time < 1.0, 0.0, 1.0) - ac.step(1.0, 2.0), Ron=1e-9, Goff=1e-12
    )
    r, c = el.Resistor("R", R=1.0), el.Capacitor("C", C=0.5, v0=0.0)
    s.connect(src.p, sw.p)
    s.connect(sw.n, r.p)
    s.connect(r.n, c.p)
    s.connect(src.n, c.n, gnd.p)
    res = simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    charged = 1 - np.exp(-1.0 / 0.5)  # at t = 2, after one second closed (RC = 0.5)
    exact = np.where(t < 1, 0.0, np.where(t < 2, 1 - np.exp(-(t - 1) / 0.5), charged))
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-6
    assert [te for te, _ in res.events] == [1.0, 2.0]  # time events: exactly


def test_mass_hits_a_hard_stop_rests_and_leaves():
    s = ac.System("stop")
    mass = tr.MassWithStop("m", m=1.0, smin=-1.0, smax=0.5, s0=0.0, v0=0.0)
    push = tr.Force("F", f=1.0 - ac.step(2.0, 2.0))  # +1 N toward the stop, -1 N from t = 2
    s.connect(push.flange, mass.flange_a)
    res = simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    # s = t^2/2 reaches 0.5 at t = 1 (impact, v := 0), rests pressed until the force
    # reverses at t = 2, then s = 0.5 - (t - 2)^2 / 2
    exact = np.where(t < 1, t**2 / 2, np.where(t < 2, 0.5, 0.5 - (t - 2) ** 2 / 2))
    assert np.max(np.abs(res["m.s"] - exact)) < 1e-7
    assert np.max(np.abs(res["m.f_stop"][(t > 1.01) & (t < 1.99)] + 1.0)) < 1e-9
    times = [te for te, _ in res.events]
    assert len(times) == 2 and abs(times[0] - 1.0) < 1e-8 and abs(times[1] - 2.0) < 1e-8


def test_sensitivities_through_a_switch_closed_at_a_time_event():
    # the switch's stepped control closes it at t = 1 exactly (tau_p = 0): R.R's
    # sensitivity of the charging capacitor vs the closed form v = 1 - exp(-(t-1)/(R C))
    s = ac.System("switched")
    src, gnd = el.ConstantVoltage("V", V=1.0), el.Ground("G")
    sw = el.IdealSwitch("S", control=ac.step(1.0, 1.0), Ron=1e-9, Goff=1e-12)
    r, c = el.Resistor("R", R=1.0), el.Capacitor("C", C=0.5, v0=0.0)
    s.connect(src.p, sw.p)
    s.connect(sw.n, r.p)
    s.connect(r.n, c.p)
    s.connect(src.n, c.n, gnd.p)
    res = simulate(s, t_end=2.0, dt=0.01, sensitivities=["R.R"], rtol=1e-10, atol=1e-12)
    u = np.clip(res.t - 1.0, 0.0, None)
    exact = -np.exp(-u / 0.5) * u / 0.5  # d/dR of 1 - exp(-u / (R C)) at R = 1, C = 0.5
    assert np.max(np.abs(res.sensitivity("C.v", "R.R") - exact)) < 1e-8


class Ball(ac.Component):
    """Modelica's bouncing ball: ``h' = v``, ``v' = -g``, and when ``h`` reaches 0 moving
    down, ``reinit(v, -e v)``. Its one event re-initializes a state and drives no mode."""

    def __init__(self, name: str, h0: float = 1.0, e: float = 0.8, g: float = 9.81) -> None:
        super().__init__(name)
        self.h = self.variable("h", start=h0, fixed=True, unit="m")
        self.v = self.variable("v", start=0.0, fixed=True, unit="m/s")
        e = self.parameter("e", e, "1", min=0)
        self.equations(ac.der(self.h) == self.v, ac.der(self.v) == -g)
        self.event([self.h], {self.v: ac.if_else(self.v < 0, -e * self.v, self.v)})


def test_an_event_that_only_reinitializes_a_state_is_not_dropped():
    """A model without discrete modes ran its events' re-initializations nowhere (the ball
    fell through the floor to h = -3.9 at t = 1). Closed form: impacts at
    t1 = sqrt(2 h0/g) and t2 = t1 (1 + 2e), the apex between them at e^2 h0."""
    h0, e, g = 1.0, 0.8, 9.81
    s = ac.System("bounce")
    s.add(Ball("ball", h0, e, g))
    res = simulate(s, t_end=2.0, dt=1e-4, rtol=1e-10, atol=1e-12)
    t1 = np.sqrt(2 * h0 / g)
    t2 = t1 * (1 + 2 * e)
    h = res["ball.h"]
    assert np.min(h) > -1e-8
    between = (res.t > t1) & (res.t < t2)
    assert np.max(h[between]) == pytest.approx(e**2 * h0, abs=1e-6)
    # each impact: the speed jumps from -u to +e u between two samples (u = g t1 at the first)
    v = res["ball.v"]
    jumps = np.flatnonzero(np.diff(v) > 1.0)
    assert res.t[jumps[:2]] == pytest.approx([t1, t2], abs=1e-4)
    assert v[jumps[0] + 1] == pytest.approx(e * g * t1 - g * (res.t[jumps[0] + 1] - t1), rel=1e-6)
