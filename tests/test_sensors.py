"""Sensors of every domain read the closed form of small circuits and mechanisms, and
inserting them changes nothing else: each test builds its system with and without the
sensors and checks the same variable against the same closed form both ways."""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from components import rotational as rot
from components import thermal as th
from components import translational as tr
from solvers import simulate

# a bare mass or inertia has its other flange free (zero force), as the sensors leave it
pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")

TIGHT = {"rtol": 1e-10, "atol": 1e-12}
WITH_AND_WITHOUT = pytest.mark.parametrize("sensed", [True, False], ids=["sensed", "bare"])


@WITH_AND_WITHOUT
def test_voltage_divider(sensed):
    """V = 3 across R1 = 1 and R2 = 2 in series: i = V / (R1 + R2) = 1, v2 = R2 i = 2,
    the power into R2 is v2 i = 2. The current sensor sits between R1 and R2, the
    voltmeter and the power sensor's voltage path across R2."""
    s = ac.System("divider")
    src, r1, r2 = el.ConstantVoltage("V", V=3.0), el.Resistor("R1", R=1.0), el.Resistor("R2", R=2.0)
    gnd = el.Ground("G")
    s.connect(src.p, r1.p)
    s.connect(r2.n, src.n, gnd.p)
    if sensed:
        am, vm = el.CurrentSensor("Am"), el.VoltageSensor("Vm")
        pm, phi = el.PowerSensor("Pm"), el.PotentialSensor("phi")
        s.connect(r1.n, am.p)
        s.connect(am.n, pm.pc)
        s.connect(pm.nc, r2.p, vm.p, pm.pv, phi.p)
        s.connect(r2.n, vm.n, pm.nv)
    else:
        s.connect(r1.n, r2.p)
    res = simulate(s, t_end=1.0, dt=0.5)
    assert np.max(np.abs(res["R2.v"] - 2.0)) < 1e-12
    assert np.max(np.abs(res["R1.i"] - 1.0)) < 1e-12
    if sensed:
        assert np.max(np.abs(res["Am.i"] - 1.0)) < 1e-12
        assert np.max(np.abs(res["Vm.v"] - 2.0)) < 1e-12
        assert np.max(np.abs(res["phi.phi"] - 2.0)) < 1e-12
        assert np.max(np.abs(res["Pm.power"] - 2.0)) < 1e-12
        # no current into the voltage paths, no voltage across the current paths
        for name in ("Vm.p.i", "Vm.n.i", "phi.p.i", "Pm.pv.i", "Pm.nv.i"):
            assert np.max(np.abs(res[name])) == 0.0, name
        assert np.max(np.abs(res["Am.p.v"] - res["Am.n.v"])) == 0.0


@WITH_AND_WITHOUT
def test_rc_step_response(sensed):
    """V = 1 charges C = 0.5 through R = 2 from 0 (RC = 1): v_C = V (1 - exp(-t/RC)), the
    charging current i = V/R exp(-t/RC)."""
    s = ac.System("rc")
    src, r, c = (
        el.ConstantVoltage("V", V=1.0),
        el.Resistor("R", R=2.0),
        el.Capacitor("C", C=0.5, v0=0.0),
    )
    gnd = el.Ground("G")
    s.connect(src.p, r.p)
    s.connect(c.n, src.n, gnd.p)
    if sensed:
        am, vm = el.CurrentSensor("Am"), el.VoltageSensor("Vm")
        s.connect(r.n, am.p)
        s.connect(am.n, c.p, vm.p)
        s.connect(vm.n, c.n)
    else:
        s.connect(r.n, c.p)
    res = simulate(s, t_end=2.0, dt=0.25, **TIGHT)
    v_exact = 1.0 - np.exp(-res.t)
    assert np.max(np.abs(res["C.v"] - v_exact)) < 1e-8
    if sensed:
        assert np.max(np.abs(res["Vm.v"] - v_exact)) < 1e-8
        assert np.max(np.abs(res["Am.i"] - 0.5 * np.exp(-res.t))) < 1e-8


@WITH_AND_WITHOUT
def test_mass_under_constant_force(sensed):
    """F = 2 pushes m = 0.5 from rest at s = 0: s = F t^2 / (2 m), v = F t / m, a = F / m.
    The force sensor sits between the source and the mass, the absolute sensors on the
    mass's free flange, the relative ones from a fixed point at s = -1 to it."""
    F, m = 2.0, 0.5
    s = ac.System("push")
    push, mass = tr.ConstantForce("F", f_constant=F), tr.Mass("m", m=m, s0=0.0, v0=0.0)
    if sensed:
        fs, ps, vs, acc = (
            tr.ForceSensor("fs"),
            tr.PositionSensor("ps"),
            tr.SpeedSensor("vs"),
            tr.AccSensor("as"),
        )
        ground, rps, rvs = (
            tr.Fixed("ground", s0=-1.0),
            tr.RelPositionSensor("rps"),
            tr.RelSpeedSensor("rvs"),
        )
        s.connect(push.flange, fs.flange_a)
        s.connect(fs.flange_b, mass.flange_a)
        s.connect(mass.flange_b, ps.flange, vs.flange, acc.flange, rps.flange_b, rvs.flange_b)
        s.connect(ground.flange, rps.flange_a, rvs.flange_a)
    else:
        s.connect(push.flange, mass.flange_a)
    res = simulate(s, t_end=1.0, dt=0.25, **TIGHT)
    t = res.t
    s_exact, v_exact = F * t**2 / (2 * m), F * t / m
    assert np.max(np.abs(res["m.s"] - s_exact)) < 1e-8
    assert np.max(np.abs(res["m.v"] - v_exact)) < 1e-8
    if sensed:
        assert np.max(np.abs(res["fs.f"] - F)) < 1e-10
        assert np.max(np.abs(res["ps.s"] - s_exact)) < 1e-8
        assert np.max(np.abs(res["vs.v"] - v_exact)) < 1e-8
        assert np.max(np.abs(res["as.a"] - F / m)) < 1e-8
        assert np.max(np.abs(res["rps.s_rel"] - (s_exact + 1.0))) < 1e-8
        assert np.max(np.abs(res["rvs.v_rel"] - v_exact)) < 1e-8


@WITH_AND_WITHOUT
def test_inertia_under_constant_torque(sensed):
    """tau = 3 turns J = 2 from rest at phi = 0: phi = tau t^2 / (2 J), w = tau t / J,
    a = tau / J; the relative sensors measure from a fixed flange at phi = 0.5."""
    tau, J = 3.0, 2.0
    s = ac.System("spin")
    drive, inertia = (
        rot.ConstantTorque("tau", tau_constant=tau),
        rot.Inertia("J", J=J, phi0=0.0, w0=0.0),
    )
    if sensed:
        ts, ang, ws, acc = (
            rot.TorqueSensor("ts"),
            rot.AngleSensor("ang"),
            rot.SpeedSensor("ws"),
            rot.AccSensor("as"),
        )
        ground, ras, rws = (
            rot.Fixed("ground", phi0=0.5),
            rot.RelAngleSensor("ras"),
            rot.RelSpeedSensor("rws"),
        )
        s.connect(drive.flange, ts.flange_a)
        s.connect(ts.flange_b, inertia.flange_a)
        s.connect(inertia.flange_b, ang.flange, ws.flange, acc.flange, ras.flange_b, rws.flange_b)
        s.connect(ground.flange, ras.flange_a, rws.flange_a)
    else:
        s.connect(drive.flange, inertia.flange_a)
    res = simulate(s, t_end=1.0, dt=0.25, **TIGHT)
    t = res.t
    phi_exact, w_exact = tau * t**2 / (2 * J), tau * t / J
    assert np.max(np.abs(res["J.phi"] - phi_exact)) < 1e-8
    assert np.max(np.abs(res["J.w"] - w_exact)) < 1e-8
    if sensed:
        assert np.max(np.abs(res["ts.tau"] - tau)) < 1e-10
        assert np.max(np.abs(res["ang.phi"] - phi_exact)) < 1e-8
        assert np.max(np.abs(res["ws.w"] - w_exact)) < 1e-8
        assert np.max(np.abs(res["as.a"] - tau / J)) < 1e-8
        assert np.max(np.abs(res["ras.phi_rel"] - (phi_exact - 0.5))) < 1e-8
        assert np.max(np.abs(res["rws.w_rel"] - w_exact)) < 1e-8


@WITH_AND_WITHOUT
def test_thermal_conductor_between_two_temperatures(sensed):
    """G = 4 W/K between fixed T1 = 350 K and T2 = 300 K: Q_flow = G (T1 - T2) = 200 W from
    port_a to port_b; the heat-flow sensor sits between T1 and the conductor."""
    G, T1, T2 = 4.0, 350.0, 300.0
    s = ac.System("wall")
    hot, cold = th.FixedTemperature("hot", T=T1), th.FixedTemperature("cold", T=T2)
    wall = th.ThermalConductor("wall", G=G)
    s.connect(wall.port_b, cold.port)
    if sensed:
        qs, ts, rts = (
            th.HeatFlowSensor("qs"),
            th.TemperatureSensor("ts"),
            th.RelTemperatureSensor("rts"),
        )
        s.connect(hot.port, qs.port_a)
        s.connect(qs.port_b, wall.port_a, ts.port, rts.port_a)
        s.connect(cold.port, rts.port_b)
    else:
        s.connect(hot.port, wall.port_a)
    res = simulate(s, t_end=1.0, dt=0.5)
    assert np.max(np.abs(res["wall.Q_flow"] - G * (T1 - T2))) < 1e-10
    if sensed:
        assert np.max(np.abs(res["qs.Q_flow"] - G * (T1 - T2))) < 1e-10
        assert np.max(np.abs(res["ts.T"] - T1)) < 1e-10
        assert np.max(np.abs(res["rts.T_rel"] - (T1 - T2))) < 1e-10


@WITH_AND_WITHOUT
def test_heat_capacitor_cooling(sensed):
    """C = 5 J/K at T0 = 400 K cools through G = 2 W/K to 300 K: T = 300 + 100 exp(-G t / C),
    the heat flow out of it Q = G (T - 300)."""
    C, G, T0, Ta = 5.0, 2.0, 400.0, 300.0
    s = ac.System("cooling")
    body, wall = th.HeatCapacitor("body", C=C, T0=T0), th.ThermalConductor("wall", G=G)
    ambient = th.FixedTemperature("ambient", T=Ta)
    s.connect(wall.port_b, ambient.port)
    if sensed:
        qs, ts = th.HeatFlowSensor("qs"), th.TemperatureSensor("ts")
        s.connect(body.port, qs.port_a, ts.port)
        s.connect(qs.port_b, wall.port_a)
    else:
        s.connect(body.port, wall.port_a)
    res = simulate(s, t_end=2.0, dt=0.25, **TIGHT)
    T_exact = Ta + (T0 - Ta) * np.exp(-G * res.t / C)
    assert np.max(np.abs(res["body.T"] - T_exact)) < 1e-6
    if sensed:
        assert np.max(np.abs(res["ts.T"] - T_exact)) < 1e-6
        assert np.max(np.abs(res["qs.Q_flow"] - G * (T_exact - Ta))) < 1e-6


@pytest.mark.parametrize(
    ("sensor", "local", "unit"),
    [
        (el.PotentialSensor("x"), "phi", "V"),
        (el.VoltageSensor("x"), "v", "V"),
        (el.CurrentSensor("x"), "i", "A"),
        (el.PowerSensor("x"), "power", "W"),
        (tr.PositionSensor("x"), "s", "m"),
        (tr.SpeedSensor("x"), "v", "m/s"),
        (tr.AccSensor("x"), "a", "m/s^2"),
        (tr.RelPositionSensor("x"), "s_rel", "m"),
        (tr.RelSpeedSensor("x"), "v_rel", "m/s"),
        (tr.ForceSensor("x"), "f", "N"),
        (rot.AngleSensor("x"), "phi", "rad"),
        (rot.SpeedSensor("x"), "w", "rad/s"),
        (rot.AccSensor("x"), "a", "rad/s^2"),
        (rot.RelAngleSensor("x"), "phi_rel", "rad"),
        (rot.RelSpeedSensor("x"), "w_rel", "rad/s"),
        (rot.TorqueSensor("x"), "tau", "N*m"),
        (th.TemperatureSensor("x"), "T", "K"),
        (th.RelTemperatureSensor("x"), "T_rel", "K"),
        (th.HeatFlowSensor("x"), "Q_flow", "W"),
    ],
    ids=lambda v: (
        type(v).__module__.split(".")[-1] + "." + type(v).__name__
        if isinstance(v, ac.Component)
        else None
    ),
)
def test_each_reading_is_in_its_si_unit(sensor, local, unit):
    assert sensor.quantities[local].unit == unit
