"""Electrical circuits against closed forms, conservation laws and finite differences."""

import numpy as np

import acausal as ac
from components import electrical as el
from solvers import Simulations, simulate


def rc(R=2.0, C=0.5, V=1.0, v0=0.0, source=None):
    s = ac.System("rc")
    src = source or el.ConstantVoltage("V", V=V)
    r, c, g = el.Resistor("R", R=R), el.Capacitor("C", C=C, v0=v0), el.Ground("G")
    s.connect(src.p, r.p)
    s.connect(r.n, c.p)
    s.connect(c.n, src.n, g.p)
    return s


def test_rc_step_response_closed_form():
    res = simulate(rc(), t_end=5.0, dt=0.01, rtol=1e-10, atol=1e-12)
    exact = 1.0 - np.exp(-res.t / 1.0)
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-8
    # every variable is reachable, aliases included: the resistor current is (V - v_C)/R
    assert np.max(np.abs(res["R.n.i"] + (1.0 - exact) / 2.0)) < 1e-8
    assert np.max(np.abs(res["der(C.v)"] - np.exp(-res.t))) < 1e-7


def test_step_source_start_time():
    s = rc(source=el.StepVoltage("V", V=2.0, start_time=1.0))
    res = simulate(s, t_end=4.0, dt=0.01, rtol=1e-10, atol=1e-12)
    exact = np.where(res.t >= 1.0, 2.0 * (1 - np.exp(-(res.t - 1.0))), 0.0)
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-6


def test_params_rerun_without_recompiling():
    model = ac.compile(rc())
    before = model.parameters["R.R"]
    sims = Simulations()  # the caller keeps the simulators (no process-wide cache)
    tol = dict(rtol=1e-10, atol=1e-12, simulators=sims)
    first = simulate(model, t_end=2.0, dt=0.01, **tol)
    second = simulate(model, t_end=2.0, dt=0.01, params={"R.R": 4.0}, **tol)
    assert second.model is first.model is model  # compiled once, parameters stay symbolic
    assert second.functions is first.functions  # the same simulator's CasADi functions
    assert model.parameters["R.R"] == before != 4.0  # overrides do not change the model's defaults
    assert np.max(np.abs(second["C.v"] - (1 - np.exp(-second.t / 2.0)))) < 1e-8
    assert second.params["R.R"] == 4.0


def test_rl_step_response_closed_form():
    s = ac.System("rl")
    V, R, L, G = (
        el.ConstantVoltage("V", V=3.0),
        el.Resistor("R", R=1.5),
        el.Inductor("L", L=0.3, i0=0.0),
        el.Ground("G"),
    )
    s.connect(V.p, R.p)
    s.connect(R.n, L.p)
    s.connect(L.n, V.n, G.p)
    res = simulate(s, t_end=1.0, dt=0.001, rtol=1e-10, atol=1e-12)
    exact = 3.0 / 1.5 * (1 - np.exp(-1.5 * res.t / 0.3))
    assert np.max(np.abs(res["L.i"] - exact)) < 1e-8


def test_lc_energy_is_conserved():
    s = ac.System("lc")
    C, L, G = el.Capacitor("C", C=2.0, v0=1.5), el.Inductor("L", L=0.5, i0=0.0), el.Ground("G")
    s.connect(C.p, L.p)
    s.connect(C.n, L.n, G.p)
    res = simulate(s, t_end=20.0, dt=0.01, rtol=1e-10, atol=1e-12)
    energy = 0.5 * 2.0 * res["C.v"] ** 2 + 0.5 * 0.5 * res["L.i"] ** 2
    assert np.max(np.abs(energy - energy[0])) < 1e-7 * energy[0]
    assert np.max(np.abs(res["C.v"] - 1.5 * np.cos(res.t))) < 1e-7  # w = 1/sqrt(LC) = 1


def test_sampled_input_is_interpolated():
    t = np.array([0.0, 1.0, 3.0])
    v = np.array([0.0, 1.0, 1.0])  # ramp to 1 V in 1 s, then hold
    s = rc(R=1.0, C=1.0, source=el.SignalVoltage("V", v=(t, v)))
    res = simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    tt = res.t
    ramp = tt - 1 + np.exp(-tt)  # RC = 1, input u = t
    v1 = np.exp(-1.0)  # value at t = 1
    hold = 1 - (1 - v1) * np.exp(-(tt - 1))
    exact = np.where(tt <= 1, ramp, hold)
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-6


def test_forward_sensitivity_matches_closed_form_and_finite_differences():
    s = rc(R=2.0, C=0.5)
    res = simulate(s, t_end=3.0, dt=0.05, rtol=1e-10, atol=1e-12, sensitivities=["R.R", "C.C"])
    t = res.t
    tau = 1.0
    exact_dR = -np.exp(-t / tau) * t / (2.0**2 * 0.5)  # dv/dR for v = 1 - exp(-t/(RC))
    assert np.max(np.abs(res.sensitivity("C.v", "R.R") - exact_dR)) < 1e-7
    # h = 2e-4 of C: the differences' truncation (h^2) and the runs' error over the step
    # (rtol / h) both near 1e-8 (at h = 1e-6 the second alone was 1e-6, near the bound)
    h = 1e-4
    plus = simulate(s, t_end=3.0, dt=0.05, rtol=1e-12, atol=1e-14, params={"C.C": 0.5 + h})
    minus = simulate(s, t_end=3.0, dt=0.05, rtol=1e-12, atol=1e-14, params={"C.C": 0.5 - h})
    fd = (plus["C.v"] - minus["C.v"]) / (2 * h)
    assert np.max(np.abs(res.sensitivity("C.v", "C.C") - fd)) < 1e-5
    # an algebraic variable's sensitivity comes through the chain rule: i = (V - v)/R
    fd_i = (plus["R.i"] - minus["R.i"]) / (2 * h)
    assert np.max(np.abs(res.sensitivity("R.i", "C.C") - fd_i)) < 1e-5


def diode_bridge():
    s = ac.System("bridge")
    V = el.SineVoltage("V", V=10.0, f=50.0)
    D = [el.Diode(f"D{k}", Is=1e-9, N=1.0) for k in range(1, 5)]
    C, R, G = el.Capacitor("C", C=1e-4, v0=0.0), el.Resistor("Rload", R=100.0), el.Ground("G")
    s.connect(V.p, D[0].p, D[2].n)  # bridge input a
    s.connect(V.n, D[1].p, D[3].n, G.p)  # bridge input b
    s.connect(D[0].n, D[1].n, C.p, R.p)  # output +
    s.connect(D[2].p, D[3].p, C.n, R.n)  # output -
    return s


def test_diode_bridge_blt_has_one_diode_loop():
    model = ac.compile(diode_bridge())
    loops = [b for b in model.blocks if len(b.equations) > 1]
    assert len(loops) == 1 and loops[0].kind == "newton"
    text = "\n".join(model.ir.equations[r].origin for r in loops[0].equations)
    assert all(f"D{k}:" in text for k in range(1, 5))
    assert model.states == ["C.v"]


def test_diode_bridge_energy_balance():
    s = diode_bridge()
    res = simulate(s, t_end=0.04, dt=1e-5, rtol=1e-8, atol=1e-10)
    t = res.t
    supplied = np.trapezoid(res["V.v"] * -res["V.i"], t)  # power delivered by the source
    diodes = sum(np.trapezoid(res[f"D{k}.v"] * res[f"D{k}.i"], t) for k in range(1, 5))
    load = np.trapezoid(res["Rload.v"] ** 2 / 100.0, t)
    stored = 0.5 * 1e-4 * (res["C.v"][-1] ** 2 - res["C.v"][0] ** 2)
    assert supplied > 0.01
    assert abs(supplied - diodes - load - stored) < 1e-4 * supplied
    # rectified: the output never reverses and peaks below the source amplitude
    assert res["C.v"].min() > -1e-6 and 8.0 < res["C.v"].max() < 10.0


def test_fast_start_at_tight_tolerance():
    """x'(0) = 1200 A/s while IDAS starts from x'(0) = 0: the tiny first step absorbs it."""
    s = ac.System("rl_fast")
    V, R = el.ConstantVoltage("V", V=12.0), el.Resistor("R", R=1.2)
    L, G = el.Inductor("L", L=0.01, i0=0.0), el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, L.p)
    s.connect(L.n, V.n, G.p)
    res = simulate(s, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(res["L.i"] - 10.0 * (1 - np.exp(-120.0 * res.t)))) < 1e-7


def test_step_source_into_a_newton_block_is_a_breakpoint():
    """A step makes the unknown's current jump; the algebraic unknowns are solved anew at
    the step (a breakpoint) instead of stalling IDAS's corrector there."""
    import learning as ln

    s = ac.System("steprc")
    V, G = el.StepVoltage("V", V=1.0, start_time=1.0), el.Ground("G")
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=1, constraint="dissipative"))
    C = el.Capacitor("C", C=1.0, v0=0.0)
    s.connect(V.p, Rx.p)
    s.connect(Rx.n, C.p)
    s.connect(C.n, V.n, G.p)
    assert ac.compile(s).breakpoint_times(ac.compile(s).parameter_vector(), 0.0, 2.0) == (1.0,)
    res = simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    tau = 1.0 / Rx.weights()["w_x1"]  # law i = w_x1 v: resistance 1/w_x1, C = 1
    exact = np.where(res.t > 1.0, 1 - np.exp(-(res.t - 1.0) / tau), 0.0)
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-7


def test_sensitivities_through_a_newton_block_a_breakpoint_and_the_start():
    """RC with a cubic resistor ``v = a i + b i^3`` (its current solved by Newton during
    the run) and a step at t = 0.37 (a breakpoint: the current is solved anew there):
    d/db, d/dC and d/d(start value) against central differences, and against CasADi's
    own forward derivative of the integrator (a second method). The references run at
    rtol 1e-12 across the breakpoint: that needs the current re-solved to rounding."""
    from examples.references.sine_rc import CubicResistor
    from solvers.simulate import simulator

    s = ac.System("cubic_rc")
    V, R = el.StepVoltage("V", V=2.0, start_time=0.37), CubicResistor("Rc", a=1.0, b=0.5)
    C, G = el.Capacitor("C", C=0.5, v0=0.0), el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, C.p)
    s.connect(C.n, V.n, G.p)
    names = ["Rc.b", "C.C", "C.v0"]
    kw = dict(t_end=2.0, dt=0.05)
    model = ac.compile(s)
    res = simulate(model, **kw, rtol=1e-10, atol=1e-12, sensitivities=names, params={"C.v0": 0.3})
    assert any(b.kind == "newton" for b in model.blocks)
    for n in names:
        h = 1e-4 * max(1.0, abs(res.params[n]))
        fd = {}
        for sign in (1, -1):
            p = {"C.v0": 0.3, n: res.params[n] + sign * h} if n != "C.v0" else {n: 0.3 + sign * h}
            fd[sign] = simulate(model, **kw, rtol=1e-12, atol=1e-14, params=p)
        for y in ("C.v", "Rc.i"):
            d = (fd[1][y] - fd[-1][y]) / (2 * h)
            assert np.max(np.abs(res.sensitivity(y, n) - d)) < 1e-6, (y, n)  # measured 1.7e-7
    sim = simulator(model, res.t, 1e-10, 1e-12, res.p)
    which = [list(model.parameters).index(n) for n in names]
    _, _, dx, _ = sim.sensitivities(res.p, which)
    dx_casadi, _ = sim._forward_sensitivities(res.p, which)
    assert np.max(np.abs(dx - dx_casadi)) < 1e-8  # measured 4.3e-10


def test_switch_held_by_a_constant_control_is_a_parameter():
    """A number as control is the parameter S.control: open (Goff) or closed (Ron) for the
    whole run, in series with R across V: i = V / (R + Ron) closed, V Goff / (1 + R Goff)
    open (the same model, re-simulated with the other value)."""
    s = ac.System("held")
    src, gnd = el.ConstantVoltage("V", V=2.0), el.Ground("G")
    sw, r = el.IdealSwitch("S", control=1.0, Ron=1e-3, Goff=1e-4), el.Resistor("R", R=4.0)
    s.connect(src.p, sw.p)
    s.connect(sw.n, r.p)
    s.connect(r.n, src.n, gnd.p)
    model = ac.compile(s)
    closed = simulate(model, t_end=1.0, dt=0.5)
    opened = simulate(model, t_end=1.0, dt=0.5, params={"S.control": 0.0})
    assert np.max(np.abs(closed["R.i"] - 2.0 / (4.0 + 1e-3))) < 1e-12
    assert np.max(np.abs(opened["R.i"] - 2.0 * 1e-4 / (1 + 4.0 * 1e-4))) < 1e-12
