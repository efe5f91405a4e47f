"""``ln.Lagrangian``: the Euler-Lagrange equations of a known Lagrangian against the planar
library's cart-pendulum, of a learned one against finite differences and the energy
balance; ``M`` positive definite by construction; clear errors."""

import casadi as cs
import numpy as np
import pytest
from scipy.integrate import cumulative_simpson

import acausal as ac
import learning as ln
from acausal.errors import OptionError
from components import translational as tr
from examples.cart_pendulum import LENGTH as STRING
from examples.cart_pendulum import M_BOB, M_CART
from examples.cart_pendulum import G as G_CART
from examples.references.mechanisms import cart_pendulum
from solvers import simulate
from tests.shared import finite_difference_dynamics

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors:UserWarning")
COORDINATES = {"x": ac.Flange, "theta": ac.RotFlange}
SERVO = 0.2 * (ac.cos(2 * ac.time) - 1)


def known(**starts: dict) -> ln.Lagrangian:
    """The cart-pendulum's Lagrangian: ``M = [[m1 + m2, m2 l cos], [m2 l cos, m2 l^2]]``,
    ``V = -m2 g l cos(theta)`` (theta = 0 hanging down)."""

    def mass(q: dict, p: dict) -> list:
        off = p["m2"] * p["l"] * ac.cos(q["theta"])
        return [[p["m1"] + p["m2"], off], [off, p["m2"] * p["l"] ** 2]]

    return ln.Lagrangian(
        "cp",
        COORDINATES,
        mass=mass,
        potential=lambda q, p: -p["m2"] * p["g"] * p["l"] * ac.cos(q["theta"]),
        parameters={"m1": M_CART, "m2": M_BOB, "l": STRING, "g": G_CART},
        **starts,
    )


def driven(component: ln.Lagrangian) -> ac.System:
    """``component``'s x prescribed by the servo ``x = 0.2 (cos 2t - 1)``, theta free."""
    s = ac.System("servo_driven")
    servo = tr.Position("servo", s=SERVO)
    s.connect(servo.flange, component.x)
    return s


def learned(seed: int = 1) -> ln.Lagrangian:
    net = ln.LagrangianNet(2, (16,), seed=seed, eps=0.01)
    return ln.Lagrangian("cp", COORDINATES, network=net, q0={"theta": 0.3}, v0={"theta": 0.0})


def test_a_known_lagrangian_reproduces_the_planar_cart_pendulum():
    res = simulate(
        driven(known(q0={"theta": 0.0}, v0={"theta": 0.0})),
        t_end=10.0,
        dt=0.005,
        rtol=1e-10,
        atol=1e-12,
    )
    ref = simulate(cart_pendulum(), t_end=10.0, dt=0.005, rtol=1e-10, atol=1e-12)
    assert np.ptp(ref["pivot.phi"]) > 0.5
    assert np.max(np.abs(res["cp.q_theta"] - ref["pivot.phi"])) < 1e-8  # measured 9e-10
    assert np.max(np.abs(res["cp.v_theta"] - ref["pivot.w"])) < 1e-8
    # the servo's force on the cart (the paper's Q_e) is the coordinate's flow
    assert np.max(np.abs(res["cp.x.f"] - ref["rail.f"])) < 1e-8  # of a 1.7 N range
    energy = ref["cart.E_kin"] + ref["cart.E_pot"] + ref["bob.E_kin"] + ref["bob.E_pot"]
    assert np.max(np.abs(res["cp.E"] - energy)) < 1e-8


def test_a_learned_lagrangian_obeys_the_energy_balance():
    """``E(t) - E(0) = int sum_i v_i Q_i dt`` (Simpson on the output grid) for a random
    network: holds by construction of the Euler-Lagrange equations."""
    res = simulate(driven(learned()), t_end=5.0, dt=0.005, rtol=1e-10, atol=1e-12)
    power = res["cp.P_x"] + res["cp.P_theta"]
    work = cumulative_simpson(power, x=res.t, initial=0.0)
    assert np.ptp(res["cp.E"]) > 0.1  # the servo does work on it (0.25 J)
    assert np.ptp(res["cp.q_theta"]) > 1.0  # and it moves (4.4 rad)
    assert np.max(np.abs(res["cp.E"] - res["cp.E"][0] - work)) < 1e-6  # measured 6e-9 J
    assert np.allclose(res["cp.P_x"], res["cp.v_x"] * res["cp.x.f"], rtol=0, atol=1e-12)


def test_a_load_point_acts_by_its_virtual_work():
    """A pendulum in its angle with the bob's horizontal position ``l sin(theta)`` as a load
    connector pushed by a constant force ``F``, a damper on the angle: it settles at
    ``tan(theta) = F / (m g)`` (closed form), and ``E(t) - E(0)`` is the work done through
    both connectors."""
    from components import rotational as rot

    m, l, g, force = 0.4, 0.8, 9.81, 1.5
    pendulum = ln.Lagrangian(
        "pend",
        {"theta": ac.RotFlange},
        mass=lambda q, p: [[p["m"] * p["l"] ** 2]],
        potential=lambda q, p: -p["m"] * g * p["l"] * ac.cos(q["theta"]),
        parameters={"m": m, "l": l},
        q0={"theta": 0.0},
        v0={"theta": 0.0},
        loads={"bob": (ac.Flange, lambda q, p: p["l"] * ac.sin(q["theta"]))},
    )
    s = ac.System("pushed")
    damper, ground = rot.Damper("damper", d=0.3), rot.Fixed("ground")
    push = tr.ConstantForce("push", f_constant=force)
    s.connect(pendulum.theta, damper.flange_b)
    s.connect(damper.flange_a, ground.flange)
    s.connect(push.flange, pendulum.bob)
    model = ac.compile(s)
    # bob.s = l sin(theta) is solved for bob.s at every theta: no other state set to switch to
    assert list(model.states) == ["pend.q_theta", "pend.v_theta"] and not model.ir.alternatives
    res = simulate(model, t_end=30.0, dt=0.01, rtol=1e-10, atol=1e-12)
    assert res["pend.q_theta"][-1] == pytest.approx(np.arctan(force / (m * g)), abs=1e-6)
    assert np.allclose(res["pend.bob.s"], l * np.sin(res["pend.q_theta"]), atol=1e-10)
    work = cumulative_simpson(res["pend.P_theta"] + res["pend.P_bob"], x=res.t, initial=0.0)
    assert np.ptp(res["pend.E"]) > 0.05
    assert np.max(np.abs(res["pend.E"] - res["pend.E"][0] - work)) < 1e-6


def test_learned_equations_against_finite_differences_of_the_network():
    """At states along a simulation, ``M a + Mdot v - dT/dq + dV/dq = Q`` with ``M``, ``V``
    evaluated numerically from the network and their derivatives by central differences."""
    component = learned(seed=3)
    res = simulate(driven(component), t_end=2.0, dt=0.05, rtol=1e-10, atol=1e-12)
    every = slice(None, None, 5)
    q = {c: res[f"cp.q_{c}"][every] for c in COORDINATES}
    v, a = (np.vstack([res[f"cp.{k}_{c}"][every] for c in COORDINATES]).T for k in "va")
    _, _, Qhat = finite_difference_dynamics(component, q, v, a)
    Q = np.vstack([res["cp.x.f"][every], res["cp.theta.tau"][every]]).T
    assert abs(res["cp.theta.tau"]).max() == 0.0  # the pendulum's coordinate is free
    assert np.max(np.abs(Qhat - Q)) < 1e-6


def test_the_network_mass_matrix_is_positive_definite_for_any_weights():
    rng = np.random.default_rng(0)
    net = ln.LagrangianNet(3, (8, 8), "tanh", eps=0.01)
    qs = cs.SX.sym("q", 3)
    ws = {n: cs.SX.sym(n) for n in net.raw_names}
    M, _ = net.mass_and_potential(qs, ws)
    f = cs.Function("M", [qs, cs.vertcat(*ws.values())], [M])
    smallest = min(
        np.min(np.linalg.eigvalsh(np.array(f(rng.normal(size=3), 3 * rng.normal(size=len(ws))))))
        for _ in range(200)
    )
    assert smallest >= 0.01 - 1e-12


def test_what_the_pendulum_equation_identifies_against_the_closed_form():
    """With theta's force measured (x prescribed): ``M_KK = m2 l^2``, ``M_KE = m2 l cos``,
    ``dV/dtheta = m2 g l sin`` and the forward dynamics ``theta'' = -(cos x'' + g sin) / l``;
    scale-free, the same divided by ``m2 l^2``."""
    rng = np.random.default_rng(0)
    th, v, ax = rng.uniform(-1.5, 1.5, 50), rng.normal(size=(2, 50)), rng.normal(size=50)
    q = {"x": rng.normal(size=50), "theta": th}
    rates, accel = {"x": v[0], "theta": v[1]}, {"x": ax, "theta": np.full(50, 7.0)}
    comp = known()
    got = comp.identified(q, measured=["theta"], v=rates, a=accel)
    scaled = comp.identified(q, measured=["theta"], scale_free=True)
    m2l2 = M_BOB * STRING**2
    assert np.allclose(got["M_KK"][:, 0, 0], m2l2, rtol=1e-12)
    assert np.allclose(got["M_KE"][:, 0, 0], M_BOB * STRING * np.cos(th), rtol=1e-12)
    assert np.allclose(got["dVdq_K"][:, 0], M_BOB * G_CART * STRING * np.sin(th), atol=1e-12)
    forward = -(np.cos(th) * ax + G_CART * np.sin(th)) / STRING
    assert np.allclose(got["a_K"][:, 0], forward, rtol=1e-10, atol=1e-12)
    assert float(scaled["gauge"]) == pytest.approx(m2l2, rel=1e-12)
    assert np.allclose(scaled["M_KE"][:, 0, 0], np.cos(th) / STRING, rtol=1e-12)
    with pytest.raises(OptionError, match="measured=\\['y'\\] must name one or more"):
        comp.identified(q, measured=["y"])


def test_bad_lagrangians_get_clear_errors():
    with pytest.raises(OptionError, match="ac.Flange .translation. or ac.RotFlange"):
        ln.Lagrangian("bad", {"x": ac.Pin}, network=ln.LagrangianNet(1))
    with pytest.raises(OptionError, match="coordinate name 'E' is taken"):
        ln.Lagrangian("bad", {"E": ac.Flange}, network=ln.LagrangianNet(1))
    with pytest.raises(OptionError, match="give potential"):
        ln.Lagrangian("bad", {"x": ac.Flange}, mass=lambda q, p: [[1.0]])
    with pytest.raises(OptionError, match="network has 2 coordinates"):
        ln.Lagrangian("bad", {"x": ac.Flange}, network=ln.LagrangianNet(2))
    with pytest.raises(OptionError, match="not symmetric"):
        ln.Lagrangian(
            "bad",
            COORDINATES,
            mass=lambda q, p: [[1.0, 0.5], [0.0, 1.0]],
            potential=lambda q, p: 0.0,
        )
    with pytest.raises(OptionError, match="not positive definite"):
        ln.Lagrangian(
            "bad",
            COORDINATES,
            mass=lambda q, p: [[1.0, 2.0], [2.0, 1.0]],
            potential=lambda q, p: 0.0,
        )
    with pytest.raises(OptionError, match="q0 names \\['y'\\]"):
        ln.Lagrangian("bad", {"x": ac.Flange}, network=ln.LagrangianNet(1), q0={"y": 0.0})
    mass, zero = (lambda q, p: [[1.0]]), (lambda q, p: 0.0)
    with pytest.raises(OptionError, match="load 'tip' has connector type"):
        ln.Lagrangian("bad", {"x": None}, mass=mass, potential=zero, loads={"tip": (ac.Pin, zero)})
    with pytest.raises(OptionError, match="name both a coordinate and a load"):
        ln.Lagrangian(
            "bad", {"x": ac.Flange}, mass=mass, potential=zero, loads={"x": (ac.Flange, zero)}
        )
    with pytest.raises(OptionError, match="relu has no curvature"):
        ln.LagrangianNet(2, activation="relu")
