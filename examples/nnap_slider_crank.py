"""The slider-crank of De Groote et al. (NNAP paper): builders and the synthetic data set.

The mechanism of the paper's Table I (crank 0.05 m, rod 0.29 m, masses 0.23 / 0.35 / 0.77 kg,
crank and motor inertia J1 = 0.0034 kg m^2, motor friction Bm = 0.007 N m s/rad), lying in a
horizontal plane (no gravity in the plane of motion), driven by a torque on the crank.
The slider's load, the truth a network must find (our choice; the paper measured a real
spring), acts along the slider line with ``d`` the slider's distance from its inner dead
centre (``d = s - (l2 - l1)`` in [0, 2 l1]) and ``v = d'``:

    F(d, v) = k w softplus((d - d0) / w)                    a compression spring engaging
            + tanh(v / v_s) (a + b tanh(v / v_s)) + c v     direction-dependent friction

with ``k = 400 N/m`` from ``d0 = 0.06 m`` (rounded over ``w = 2 mm``), Coulomb levels
``a + b = 3 N`` moving outwards and ``a - b = 1.5 N`` inwards (``v_s = 0.02 m/s``) and
viscous ``c = 2 N s/m``; ``F`` is the force the load takes at the slider (the power ``F v``
it takes in is >= 0 for the friction part).

Data: ``PROFILES`` torque profiles (an offset plus three sines with random amplitudes,
frequencies and phases) from ``STARTS`` crank angles, ``SAMPLES`` samples at ``RATE`` Hz,
simulated by IDAS at rtol 1e-10 with the torque played linearly between its samples; the
crank angle quantized by an encoder of 8192 counts per revolution and the speed with white
noise of ``SPEED_NOISE`` rad/s.
"""

from __future__ import annotations

import numpy as np

import acausal as ac
import learning as ln
from components import planar as pl
from components import rotational as rot
from components import translational as tr
from solvers import simulate

L1, L2 = 0.05, 0.29
M_CRANK, M_ROD, M_SLIDER = 0.23, 0.35, 0.77
J1, BM = 0.0034, 0.007
SPRING, D0, WIDTH = 400.0, 0.06, 0.002
COULOMB, SKEW, V_SLIP, VISCOUS = 2.25, 0.75, 0.02, 2.0
RATE, SAMPLES, PROFILES, STARTS = 2000.0, 800, 10, (0.0, np.pi)
COUNTS, SPEED_NOISE = 8192, 0.02
THETA, OMEGA = "sc.crank_joint.phi", "der(sc.crank_joint.phi)"
INPUTS = {"motor.tau_constant": "tau"}


def spring_force(d: object) -> object:
    """The conservative part of the load: ``k w softplus((d - d0) / w)`` (numbers or CasADi)."""
    if isinstance(d, np.ndarray):
        return SPRING * WIDTH * np.logaddexp(0.0, (d - D0) / WIDTH)
    return SPRING * WIDTH * ac.log(1 + ac.exp((d - D0) / WIDTH))


def friction_force(v: object) -> object:
    """The non-conservative part: ``tanh(v / v_s) (a + b tanh(v / v_s)) + c v``."""
    slip = np.tanh(v / V_SLIP) if isinstance(v, np.ndarray) else ac.tanh(v / V_SLIP)
    return slip * (COULOMB + SKEW * slip) + VISCOUS * v


def load_force(d: object, v: object) -> object:
    """The true slider load ``F(d, v)``: spring plus friction (numbers or CasADi)."""
    return spring_force(d) + friction_force(v)


def mechanism(
    load: ac.Component,
    torque: object = None,
    theta0: float = 0.0,
    values: dict[str, float] | None = None,
) -> ac.System:
    """The slider-crank with ``load`` between the slider and its inner dead centre, motor
    friction ``Bm``, and a torque: ``torque`` (samples ``(t, tau)`` or an expression) or,
    when None, the parameter ``motor.tau_constant`` (the rollout's input). ``values``:
    other physical values (``m_slider``, ``J``, ``m_crank``, ``m_rod``, ``l1``, ``l2``, ``Bm``)."""
    v = {
        "l1": L1,
        "l2": L2,
        "m_crank": M_CRANK,
        "m_rod": M_ROD,
        "m_slider": M_SLIDER,
        "J": J1,
        "Bm": BM,
        **(values or {}),
    }
    s = ac.System("nnap_slider_crank")
    world = pl.World("world", g=0.0)
    sc = pl.SliderCrank(
        "sc",
        l1=v["l1"],
        l2=v["l2"],
        m_crank=v["m_crank"],
        m_rod=v["m_rod"],
        m_slider=v["m_slider"],
        J=v["J"],
        theta0=theta0,
        w0=0.0,
    )
    s.connect(world.frame_b, sc.frame_a)
    motor = (
        rot.ConstantTorque("motor", tau_constant=0.0)
        if torque is None
        else rot.Torque("motor", tau=torque)
    )
    friction, housing = rot.Damper("Bm", d=v["Bm"]), rot.Fixed("housing")
    s.connect(motor.flange, sc.crank_axis, friction.flange_b)
    s.connect(friction.flange_a, housing.flange)
    centre = tr.Fixed("centre", s0=v["l2"] - v["l1"])
    s.connect(load.flange_a, sc.slider_axis)
    s.connect(load.flange_b, centre.flange)
    return s


def true_load() -> ln.Unknown:
    """The truth as an (un-learned) ``ln.Unknown`` with a known law ``f == F(x, der(x))``."""
    law = ln.Known(lambda f, x, v: f == load_force(x, v), n_inputs=3)
    return ln.Unknown("load", ac.Flange, law, inputs=("f", "x", "der(x)"))


def profiles(seed: int = 0, count: int = PROFILES) -> list[np.ndarray]:
    """``count`` torque profiles on the sample grid: ``T0 + sum_i a_i sin(2 pi f_i t + p_i)``."""
    rng = np.random.default_rng(seed)
    t = np.arange(SAMPLES) / RATE
    out = []
    for _ in range(count):
        tau = rng.uniform(0.2, 0.5) * np.ones_like(t)
        for _ in range(3):
            tau += rng.uniform(0.05, 0.3) * np.sin(
                2 * np.pi * rng.uniform(1.0, 8.0) * t + rng.uniform(0, 2 * np.pi)
            )
        out.append(tau)
    return out


def trajectories(seed: int = 0, count: int = PROFILES, starts=STARTS) -> list[dict]:
    """The data set: every profile from every start angle, measured as described above
    (``"t"``, the crank angle and speed, ``"tau"``; plus the true ``"d"``, ``"v"``,
    ``"F"`` for plots and checks)."""
    rng = np.random.default_rng(seed + 1)
    t = np.arange(SAMPLES) / RATE
    step = 2 * np.pi / COUNTS
    out = []
    for tau in profiles(seed, count):
        for theta0 in starts:
            res = simulate(
                mechanism(true_load(), (t, tau), theta0),
                grid=t,
                rtol=1e-10,
                atol=1e-12,
            )
            out.append(
                {
                    "t": t,
                    THETA: np.round(res[THETA] / step) * step,
                    OMEGA: res[OMEGA] + SPEED_NOISE * rng.standard_normal(t.size),
                    "tau": tau,
                    "d": res["load.s"],
                    "v": np.gradient(res["load.s"], t),
                    "F": res["load.f"],
                }
            )
    return out


def slider(theta: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(d, v)`` of the slider from the crank angle and speed (the nominal geometry)."""
    root = np.sqrt(L2**2 - (L1 * np.sin(theta)) ** 2)
    d = L1 * np.cos(theta) + root - (L2 - L1)
    v = -L1 * np.sin(theta) * omega * (1 + L1 * np.cos(theta) / root)
    return d, v
