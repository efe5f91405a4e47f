"""Translational, rotational and thermal components against closed-form solutions."""

import numpy as np
import pytest

import acausal as ac
from components import electrical as el
from components import rotational as rot
from components import thermal as th
from components import translational as tr
from solvers import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")


# -- translational ----------------------------------------------------------------------
def mass_spring(m, c, x0, v0=0.0, d=None):
    """fixed -- spring (or spring-damper) -- mass, the mass at s = x from the fixed point."""
    s = ac.System("mass_spring")
    fixed = tr.Fixed("fixed")
    spring = tr.Spring("spring", c=c) if d is None else tr.SpringDamper("spring", c=c, d=d)
    mass = tr.Mass("mass", m=m, s0=x0, v0=v0)
    s.connect(fixed.flange, spring.flange_a)
    s.connect(spring.flange_b, mass.flange_a)
    return s


def test_undamped_mass_spring_period_and_amplitude():
    m, c, x0 = 2.0, 50.0, 0.1
    w = np.sqrt(c / m)  # 5 rad/s, period 1.2566 s
    res = simulate(mass_spring(m, c, x0), t_end=10.0, dt=0.001, rtol=1e-10, atol=1e-12)
    t, x = res.t, res["mass.s"]
    assert np.max(np.abs(x - x0 * np.cos(w * t))) <= 1e-7  # measured 8e-10
    # period from the upward zero crossings (linear interpolation), amplitude from the peaks
    k = np.nonzero((x[:-1] < 0) & (x[1:] >= 0))[0]
    crossings = t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])
    periods = np.diff(crossings)
    assert len(periods) >= 6
    assert np.max(np.abs(periods - 2 * np.pi / w)) <= 1e-6
    assert np.max(x) == pytest.approx(x0, rel=1e-5)
    assert np.min(x) == pytest.approx(-x0, rel=1e-5)
    # spring force on the mass is -c x; spring extension equals x
    assert np.max(np.abs(res["spring.s_rel"] - x)) <= 1e-12
    assert np.max(np.abs(res["mass.flange_a.f"] + c * x)) <= 1e-9


def test_lossless_mass_spring_conserves_energy():
    m, c, x0, v0 = 0.5, 200.0, 0.05, 1.0
    w = np.sqrt(c / m)
    t_end = 50 * 2 * np.pi / w  # 50 periods
    res = simulate(mass_spring(m, c, x0, v0), t_end=t_end, dt=t_end / 5000, rtol=1e-10, atol=1e-12)
    energy = 0.5 * m * res["mass.v"] ** 2 + 0.5 * c * res["spring.s_rel"] ** 2
    e0 = 0.5 * m * v0**2 + 0.5 * c * x0**2
    assert np.max(np.abs(energy - e0)) / e0 <= 1e-6  # measured 2e-7


def test_damped_oscillator_matches_underdamped_solution():
    m, c, d, x0, v0 = 1.5, 60.0, 1.2, 0.2, -0.3
    w0 = np.sqrt(c / m)
    zeta = d / (2 * np.sqrt(c * m))
    wd = w0 * np.sqrt(1 - zeta**2)
    res = simulate(mass_spring(m, c, x0, v0, d=d), t_end=8.0, dt=0.002, rtol=1e-10, atol=1e-12)
    t = res.t
    decay = np.exp(-zeta * w0 * t)
    B = (v0 + zeta * w0 * x0) / wd
    x = decay * (x0 * np.cos(wd * t) + B * np.sin(wd * t))
    v = -zeta * w0 * x + decay * (-x0 * wd * np.sin(wd * t) + B * wd * np.cos(wd * t))
    assert np.max(np.abs(res["mass.s"] - x)) <= 1e-7 * x0  # measured 2.5e-10
    assert np.max(np.abs(res["spring.v_rel"] - v)) <= 1e-6
    assert np.max(np.abs(res["spring.f_d"] - d * v)) <= 1e-6
    assert np.max(np.abs(res["spring.f"] - (c * x + d * v))) <= 1e-5


def test_spring_and_damper_in_parallel_equal_spring_damper():
    m, c, d, x0 = 1.0, 40.0, 0.8, 0.1
    s = ac.System("parallel")
    fixed = tr.Fixed("fixed")
    spring, damper = tr.Spring("spring", c=c), tr.Damper("damper", d=d)
    mass = tr.Mass("mass", m=m, s0=x0, v0=0.0)
    s.connect(fixed.flange, spring.flange_a, damper.flange_a)
    s.connect(spring.flange_b, damper.flange_b, mass.flange_a)
    a = simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    b = simulate(mass_spring(m, c, x0, d=d), t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(a["mass.s"] - b["mass.s"])) <= 1e-8
    assert np.max(np.abs(a["damper.v_rel"] - b["spring.v_rel"])) <= 1e-7
    # the two forces on the mass add up to the spring-damper's
    assert np.max(np.abs(a["spring.f"] + a["damper.f"] - b["spring.f"])) <= 1e-6


@pytest.mark.parametrize("use_support", [False, True])
def test_force_accelerates_free_mass(use_support):
    """``Force`` pushes its flange in the positive direction: s = s0 + F t^2 / (2 m)."""
    m, F, s0 = 4.0, 3.0, 1.0
    s = ac.System("push")
    force = tr.ConstantForce("force", f_constant=F, use_support=use_support)
    mass = tr.Mass("mass", m=m, L=0.4, s0=s0, v0=0.0)
    s.connect(force.flange, mass.flange_a)
    if use_support:
        fixed = tr.Fixed("fixed", s0=-2.0)
        s.connect(force.support, fixed.flange)
    res = simulate(s, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    assert np.max(np.abs(res["mass.s"] - (s0 + F * t**2 / (2 * m)))) <= 1e-9
    assert np.max(np.abs(res["mass.a"] - F / m)) <= 1e-9
    assert np.max(np.abs(res["force.flange.f"] + F)) <= 1e-12
    assert np.max(np.abs(res["mass.flange_a.s"] - (res["mass.s"] - 0.2))) <= 1e-12
    if use_support:  # the reaction acts on the housing
        assert np.max(np.abs(res["force.support.f"] - F)) <= 1e-12


W_SINE = 2 * np.pi * 0.8
FORCE_SOURCES = {
    "step": (
        lambda: tr.ForceStep("src", step_force=2.0, offset_force=0.5, start_time=0.7),
        lambda t: 0.5 + 2.0 * (t >= 0.7),
        lambda t: 0.5 * t + 2.0 * np.maximum(t - 0.7, 0.0),  # its integral
    ),
    "sine": (
        lambda: tr.SineForce("src", amplitude=3.0, f=0.8, phase=0.4, offset=-1.0),
        lambda t: -1.0 + 3.0 * np.sin(W_SINE * t + 0.4),
        lambda t: -t + 3.0 / W_SINE * (np.cos(0.4) - np.cos(W_SINE * t + 0.4)),
    ),
    "constant": (
        lambda: tr.ConstantForce("src", f_constant=-0.7),
        lambda t: np.full_like(t, -0.7),
        lambda t: -0.7 * t,
    ),
}


@pytest.mark.parametrize("kind", sorted(FORCE_SOURCES))
def test_force_sources_drive_a_free_mass(kind):
    """The source's force and the speed it gives a free mass, m v(t) = int f dt."""
    make, force, impulse = FORCE_SOURCES[kind]
    m = 2.0
    s = ac.System("sources")
    src, mass = make(), tr.Mass("mass", m=m, s0=0.0, v0=0.0)
    s.connect(src.flange, mass.flange_a)
    res = simulate(s, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    assert np.max(np.abs(res["src.f"] - force(t))) <= 1e-12
    assert np.max(np.abs(m * res["mass.v"] - impulse(t))) <= 1e-7


def test_force_from_samples_and_expression_agree():
    m = 2.0
    tk = np.linspace(0.0, 3.0, 301)
    results = []
    for f in (0.5 * ac.time, (tk, 0.5 * tk)):  # the same ramp twice
        s = ac.System("ramp")
        force, mass = tr.Force("force", f=f), tr.Mass("mass", m=m, s0=0.0, v0=0.0)
        s.connect(force.flange, mass.flange_a)
        results.append(simulate(s, t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12))
    t = results[0].t
    exact = 0.5 * t**3 / (6 * m)  # m s''' = 0.5
    for res in results:
        assert np.max(np.abs(res["mass.s"] - exact)) <= 1e-8


def test_position_source_on_mass_is_index_3_with_inertial_reaction():
    m = 1.5
    s = ac.System("servo")
    servo = tr.Position("servo", s=0.2 * (ac.cos(2 * ac.time) - 1))
    mass = tr.Mass("mass", m=m)
    s.connect(servo.flange, mass.flange_a)
    model = ac.compile(s)
    assert model.index == 3
    res = simulate(model, t_end=5.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    pos = 0.2 * (np.cos(2 * t) - 1)
    vel = -0.4 * np.sin(2 * t)
    acc = -0.8 * np.cos(2 * t)
    assert np.max(np.abs(res["mass.s"] - pos)) <= 1e-10
    assert np.max(np.abs(res["mass.v"] - vel)) <= 1e-9
    # the source holds the mass on its trajectory: force on the mass = m s''(t)
    assert np.max(np.abs(res["mass.flange_a.f"] - m * acc)) <= 1e-8
    assert np.max(np.abs(res["servo.flange.f"] + m * acc)) <= 1e-8


def test_speed_source_on_mass():
    m, s0 = 3.0, 0.25
    s = ac.System("drive")
    drive = tr.Speed("drive", v=0.3 * ac.sin(ac.time), s0=s0)
    mass = tr.Mass("mass", m=m)
    s.connect(drive.flange, mass.flange_a)
    res = simulate(s, t_end=4.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    assert np.max(np.abs(res["mass.s"] - (s0 + 0.3 * (1 - np.cos(t))))) <= 1e-9
    assert np.max(np.abs(res["mass.flange_a.f"] - m * 0.3 * np.cos(t))) <= 1e-8


# -- rotational -------------------------------------------------------------------------
@pytest.mark.parametrize("use_support", [False, True])
def test_gear_kinematics_and_torques(use_support):
    """Constant torque on inertia1 -> gear -> inertia2, from rest.

    Reflected to the output: (J2 + ratio^2 J1) w2' = ratio tau, and phi1 = ratio phi2.
    """
    J1, J2, ratio, tau = 0.2, 3.0, 4.0, 1.5
    s = ac.System("gearbox")
    motor = rot.ConstantTorque("motor", tau_constant=tau, use_support=use_support)
    in1 = rot.Inertia("in1", J=J1)
    gear = rot.IdealGear("gear", ratio=ratio, use_support=use_support)
    in2 = rot.Inertia("in2", J=J2, phi0=0.0, w0=0.0)
    s.connect(motor.flange, in1.flange_a)
    s.connect(in1.flange_b, gear.flange_a)
    s.connect(gear.flange_b, in2.flange_a)
    if use_support:
        fixed = rot.Fixed("fixed")
        s.connect(fixed.flange, motor.support, gear.support)
    res = simulate(s, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    a2 = ratio * tau / (J2 + ratio**2 * J1)
    assert np.max(np.abs(res["in2.w"] - a2 * t)) <= 1e-9
    assert np.max(np.abs(res["in1.w"] - ratio * a2 * t)) <= 1e-8
    assert np.max(np.abs(res["in1.phi"] - ratio * res["in2.phi"])) <= 1e-9
    # torque balance 0 = ratio tau_a + tau_b, and the output torque accelerates J2
    assert np.max(np.abs(res["gear.flange_b.tau"] + J2 * a2)) <= 1e-8
    assert np.max(np.abs(res["gear.flange_a.tau"] - J2 * a2 / ratio)) <= 1e-8


def test_gear_driven_by_speed_source():
    """Prescribed input speed: the output turns ratio times slower, the source supplies
    the torque (J1 + J2 / ratio^2) w'(t)."""
    J1, J2, ratio = 0.5, 2.0, 3.0
    s = ac.System("speed_gear")
    drive = rot.Speed("drive", w=2.0 * ac.sin(ac.time), phi0=0.0)
    in1, gear = rot.Inertia("in1", J=J1), rot.IdealGear("gear", ratio=ratio)
    in2 = rot.Inertia("in2", J=J2)
    s.connect(drive.flange, in1.flange_a)
    s.connect(in1.flange_b, gear.flange_a)
    s.connect(gear.flange_b, in2.flange_a)
    res = simulate(s, t_end=4.0, dt=0.01, rtol=1e-10, atol=1e-12)
    t = res.t
    assert np.max(np.abs(res["in2.w"] - 2.0 * np.sin(t) / ratio)) <= 1e-8
    assert np.max(np.abs(res["in2.phi"] - 2.0 * (1 - np.cos(t)) / ratio)) <= 1e-8
    torque = (J1 + J2 / ratio**2) * 2.0 * np.cos(t)
    assert np.max(np.abs(res["in1.flange_a.tau"] - torque)) <= 1e-8


def test_rotational_spring_damper_decay():
    """Inertia on a torsional spring-damper: the underdamped closed form."""
    J, c, d, phi0 = 0.4, 25.0, 0.6, 0.3
    s = ac.System("torsion")
    fixed = rot.Fixed("fixed")
    sd = rot.SpringDamper("sd", c=c, d=d)
    body = rot.Inertia("body", J=J, phi0=phi0, w0=0.0)
    s.connect(fixed.flange, sd.flange_a)
    s.connect(sd.flange_b, body.flange_a)
    res = simulate(s, t_end=5.0, dt=0.005, rtol=1e-10, atol=1e-12)
    t = res.t
    w0 = np.sqrt(c / J)
    zeta = d / (2 * np.sqrt(c * J))
    wd = w0 * np.sqrt(1 - zeta**2)
    phi = phi0 * np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t))
    assert np.max(np.abs(res["body.phi"] - phi)) <= 1e-8
    assert np.max(np.abs(res["sd.phi_rel"] - phi)) <= 1e-8


class DCMotor(ac.Component):
    """Armature R, L and EMF k driving a rotor inertia J; pins p, n and shaft flange."""

    def __init__(self, name, R=1.0, L=0.01, k=0.5, J=0.01):
        super().__init__(name)
        self.R = el.Resistor("R", R=R)
        self.L = el.Inductor("L", L=L, i0=0.0)
        self.emf = el.EMF("emf", k=k)
        self.rotor = rot.Inertia("rotor", J=J, phi0=0.0, w0=0.0)
        self.connect(self.R.n, self.L.p)
        self.connect(self.L.n, self.emf.p)
        self.connect(self.emf.flange, self.rotor.flange_a)
        self.p = self.expose("p", self.R.p)
        self.n = self.expose("n", self.emf.n)
        self.flange = self.expose("flange", self.rotor.flange_b)


def test_hierarchical_dc_motor_steady_state():
    R, k, d, V = 1.2, 0.5, 0.1, 12.0
    s = ac.System("drive")
    source, ground = el.ConstantVoltage("source", V=V), el.Ground("ground")
    motor = DCMotor("motor", R=R, L=0.01, k=k, J=0.01)
    load, housing = rot.Damper("load", d=d), rot.Fixed("housing")
    s.connect(source.p, motor.p)
    s.connect(source.n, motor.n, ground.p)
    s.connect(motor.flange, load.flange_a)
    s.connect(load.flange_b, housing.flange)
    # time constants: L/R = 8 ms, J / (d + k^2/R) = 32 ms; 2 s is steady state.
    res = simulate(s, t_end=2.0, dt=0.01, rtol=1e-10, atol=1e-12)
    w_ss = k * V / (k**2 + R * d)
    i_ss = d * w_ss / k
    assert res["motor.rotor.w"][-1] == pytest.approx(w_ss, rel=1e-8)
    assert res["motor.R.i"][-1] == pytest.approx(i_ss, rel=1e-8)
    # exposed connectors are reachable under the motor's own names
    assert res["motor.flange.phi"][-1] == pytest.approx(res["motor.rotor.phi"][-1], rel=1e-12)
    assert res["load.w_rel"][-1] == pytest.approx(-w_ss, rel=1e-8)
    # power balance at steady state: V i = R i^2 + d w^2
    assert V * i_ss == pytest.approx(R * i_ss**2 + d * w_ss**2, rel=1e-12)  # closed form
    p_in = V * res["motor.R.i"][-1]
    p_out = R * res["motor.R.i"][-1] ** 2 + d * res["motor.rotor.w"][-1] ** 2
    assert p_in == pytest.approx(p_out, rel=1e-8)


# -- thermal ----------------------------------------------------------------------------
def test_heat_capacitor_cools_exponentially():
    C, G, T0, Tamb = 10.0, 2.0, 400.0, 300.0
    s = ac.System("cooling")
    body = th.HeatCapacitor("body", C=C, T0=T0)
    wall = th.ThermalConductor("wall", G=G)
    ambient = th.FixedTemperature("ambient", T=Tamb)
    s.connect(body.port, wall.port_a)
    s.connect(wall.port_b, ambient.port)
    res = simulate(s, t_end=20.0, dt=0.02, rtol=1e-10, atol=1e-10)
    T = Tamb + (T0 - Tamb) * np.exp(-G * res.t / C)
    assert np.max(np.abs(res["body.T"] - T)) <= 1e-6
    # heat flows from the body through the wall: Q_flow = G (T - Tamb) > 0
    assert np.max(np.abs(res["wall.Q_flow"] - G * (T - Tamb))) <= 1e-5
    assert np.max(np.abs(res["body.port.Q"] + G * (T - Tamb))) <= 1e-5


@pytest.mark.parametrize("kind", ["PrescribedHeatFlow", "FixedHeatFlow", "samples"])
def test_heat_flow_source_heats_toward_steady_state(kind):
    C, R, Q, T0, Tamb = 5.0, 0.5, 20.0, 290.0, 290.0
    s = ac.System("heating")
    if kind == "PrescribedHeatFlow":
        heater = th.PrescribedHeatFlow("heater", Q_flow=Q)
    elif kind == "FixedHeatFlow":
        heater = th.FixedHeatFlow("heater", Q_flow=Q)
    else:
        heater = th.PrescribedHeatFlow("heater", Q_flow=([0.0, 10.0], [Q, Q]))
    body = th.HeatCapacitor("body", C=C, T0=T0)
    wall = th.ThermalResistor("wall", R=R)
    ambient = th.FixedTemperature("ambient", T=Tamb)
    s.connect(heater.port, body.port, wall.port_a)
    s.connect(wall.port_b, ambient.port)
    res = simulate(s, t_end=10.0, dt=0.01, rtol=1e-10, atol=1e-10)
    T_ss = Tamb + Q * R
    T = T_ss + (T0 - T_ss) * np.exp(-res.t / (R * C))
    assert np.max(np.abs(res["body.T"] - T)) <= 1e-6
    # the heat enters the body: Q flows out of the source's port
    assert np.max(np.abs(res["heater.port.Q"] + Q)) <= 1e-12
    assert np.max(np.abs(res["wall.Q_flow"] - (T - Tamb) / R)) <= 1e-5


def test_prescribed_temperature_drives_conductor():
    """A capacitor behind a conductor tracks a ramp T(t) = T0 + r t with lag C/G."""
    C, G, T0, r = 2.0, 4.0, 300.0, 1.5
    s = ac.System("tracking")
    source = th.PrescribedTemperature("source", T=T0 + r * ac.time)
    wall, body = th.ThermalConductor("wall", G=G), th.HeatCapacitor("body", C=C, T0=T0)
    s.connect(source.port, wall.port_a)
    s.connect(wall.port_b, body.port)
    res = simulate(s, t_end=5.0, dt=0.01, rtol=1e-10, atol=1e-10)
    tau = C / G
    T = T0 + r * (res.t - tau * (1 - np.exp(-res.t / tau)))
    assert np.max(np.abs(res["body.T"] - T)) <= 1e-6
