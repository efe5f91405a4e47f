"""Events: located mode switches against piecewise closed forms."""

import numpy as np
import pytest
from scipy.optimize import brentq

import acausal as ac
from components import electrical as el
from solvers import simulate

V0, F, C, R = 10.0, 50.0, 1e-4, 100.0
W = 2 * np.pi * F


def half_wave(Ron=1e-6, Goff=1e-9):
    s = ac.System("half_wave")
    src = el.SineVoltage("V", V=V0, f=F)
    d = el.IdealDiode("D", Ron=Ron, Goff=Goff)
    cap, load, gnd = el.Capacitor("C", C=C, v0=0.0), el.Resistor("R", R=R), el.Ground("G")
    s.connect(src.p, d.p)
    s.connect(d.n, cap.p, load.p)
    s.connect(src.n, cap.n, load.n, gnd.p)
    return s


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


def test_diode_mode_settles_at_start_and_sensitivities_refuse_events():
    # the source forward-biases the diode at once: the start mode 'off' must flip to on
    s = half_wave()
    res = simulate(s, t_end=0.004, dt=1e-4, rtol=1e-10, atol=1e-12)
    assert res["D.off"][0] == 0.0
    assert np.max(np.abs(res["C.v"] - V0 * np.sin(W * res.t))) < 1e-5
    with pytest.raises(ac.ModelError, match="events"):
        simulate(s, t_end=0.004, dt=1e-4, sensitivities=["R.R"])
