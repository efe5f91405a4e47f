"""The ServoLNN study's pendulum on a servo-driven cart: the truth from the planar library,
the learned component, and the trials.

A cart (``M_CART`` kg) on a horizontal rail carries a pendulum (a point bob of ``M_BOB`` kg
on a massless rod of ``LENGTH`` m, gravity ``G``); a position servo prescribes the cart's
``x(t)``, the pendulum angle ``theta`` (0 hanging down) is free. Its Lagrangian in
``q = (x, theta)``:

    M(theta) = [[m1 + m2, m2 l cos(theta)], [m2 l cos(theta), m2 l^2]],
    V(theta) = -m2 g l cos(theta),

``x`` is the externally specified coordinate (its force ``Q_x`` is what the servo exerts on
the cart), ``theta`` the free one (``Q_theta = 0``: nothing acts on the pivot).

Trials: ``x(t) = s sum_j A_j (1 - cos(w_j t))`` over two cosines (at rest at 0 when it
starts, on either side of 0 by ``s = +-1``), amplitudes and frequencies spread over the
trials; each simulated by IDAS at rtol 1e-10
and sampled at non-uniform times (steps drawn between 0.5 and 1.5 times the mean step, as
an adaptive solver's output is).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import acausal as ac
import learning as ln
from components import planar as pl
from components import translational as tr
from solvers import Result, simulate

M_CART, M_BOB, LENGTH, G = 0.45, 0.13, 1.5, 9.8
DURATION, MEAN_STEP = 20.0, 0.05
COORDINATES = {"x": ac.Flange, "theta": ac.RotFlange}
UNSEEN = 0.3 * (1 - ac.exp(-5 * ac.time))  # the study's new motion, never in the training


def truth(motion: object = None, drive: ac.Component | None = None) -> ac.System:
    """The planar cart-pendulum, the pendulum at rest hanging down at t = 0: the cart's
    position prescribed by ``motion`` (an expression of ``ac.time``, the servo
    ``servo``), or a free cart at rest at 0 pushed through the rail's axis by ``drive`` (a
    1-D source with a ``flange``)."""
    s = ac.System("cart_pendulum")
    world = pl.World("world", g=G)
    start = {} if drive is None else {"s0": 0.0, "v0": 0.0}
    rail = pl.Prismatic("rail", axis=(1.0, 0.0), use_axis=True, **start)
    if drive is None:
        drive = tr.Position("servo", s=motion)
    cart = pl.Body("cart", m=M_CART, I=0.0)
    pivot = pl.Revolute("pivot", phi0=0.0, w0=0.0)
    rod = pl.FixedTranslation("rod", r=(0.0, -LENGTH))
    bob = pl.Body("bob", m=M_BOB, I=0.0)
    s.connect(world.frame_b, rail.frame_a)
    s.connect(drive.flange, rail.axis)
    s.connect(rail.frame_b, cart.frame_a, pivot.frame_a)
    s.connect(pivot.frame_b, rod.frame_a)
    s.connect(rod.frame_b, bob.frame_a)
    return s


def true_mass(theta: np.ndarray) -> np.ndarray:
    """``M(theta)`` of the truth, samples x 2 x 2."""
    c = M_BOB * LENGTH * np.cos(theta)
    m = np.empty((np.size(theta), 2, 2))
    m[:, 0, 0], m[:, 1, 1] = M_CART + M_BOB, M_BOB * LENGTH**2
    m[:, 0, 1] = m[:, 1, 0] = c
    return m


def true_dV(theta: np.ndarray) -> np.ndarray:
    """``dV/dtheta = m2 g l sin(theta)``."""
    return M_BOB * G * LENGTH * np.sin(theta)


def profiles(count: int, seed: int = 0, cosines: int = 2) -> list[object]:
    """The cart's motions of ``count`` trials, ``s sum_j A_j (1 - cos(w_j t))`` over
    ``cosines`` terms: amplitudes 0.03-0.2 m each (0.05-0.4 m for a single cosine),
    frequencies 0.5-3.5 rad/s (the pendulum's own is 2.56), the side ``s`` alternating.

    With one cosine the cart's acceleration is a function of its position on each trial
    (``x'' = w^2 (A - x)``): with the servo's force measured the learned ``M`` and ``V`` come
    out within 0.1 %, but without it the pendulum's equation cannot tell its terms apart
    (forward dynamics of a held-out trial 64 % off); two cosines give 4 % there and 1.3-2.5 %
    on ``M_thetatheta`` and ``dV/dtheta`` with the force (measured, 10 training trials)."""
    rng = np.random.default_rng(seed)
    low, high = (0.05, 0.4) if cosines == 1 else (0.03, 0.2)
    out = []
    for k in range(count):
        amplitudes, frequencies = rng.uniform(low, high, cosines), rng.uniform(0.5, 3.5, cosines)
        motion = sum(a * (1 - ac.cos(w * ac.time)) for a, w in zip(amplitudes, frequencies))
        out.append((-1.0) ** k * motion)
    return out


def sample_times(seed: int, duration: float = DURATION) -> np.ndarray:
    """Non-uniform sample times from 0 to ``duration``: steps between 0.5 and 1.5 times
    :data:`MEAN_STEP`."""
    rng = np.random.default_rng(seed)
    steps = rng.uniform(0.5, 1.5, int(2 * duration / MEAN_STEP)) * MEAN_STEP
    t = np.concatenate([[0.0], np.cumsum(steps)])
    return t[t <= duration]


def record(res: Result) -> dict[str, np.ndarray]:
    """The training columns of :func:`learning.train_lagrangian` from a simulation of
    :func:`truth`: ``q_/v_/a_`` of ``x`` and ``theta``, ``Q_theta = 0`` and ``Q_x`` (the
    servo's force on the cart), and ``t``."""
    return {
        "t": res.t,
        "q_x": res["rail.s"],
        "v_x": res["rail.v"],
        "a_x": res["der(der(rail.s))"],
        "q_theta": res["pivot.phi"],
        "v_theta": res["pivot.w"],
        "a_theta": res["der(der(pivot.phi))"],
        "Q_x": res["rail.f"],
        "Q_theta": np.zeros_like(res.t),
    }


def trials(
    count: int, seed: int = 0, duration: float = DURATION, cosines: int = 2
) -> list[dict[str, np.ndarray]]:
    """``count`` trials of :func:`profiles` (seeded), each a :func:`record`."""
    out = []
    for k, motion in enumerate(profiles(count, seed, cosines)):
        grid = sample_times(seed + k, duration)
        res = simulate(truth(motion), grid=grid, rtol=1e-10, atol=1e-12)
        out.append(record(res))
    return out


def network(data: Sequence[dict[str, np.ndarray]], seed: int = 0) -> ln.LagrangianNet:
    """The study's network, ``2 x 64 x [1, 2, 1]`` softplus, ``eps = 0.01``, standardized
    by the trials' coordinates."""
    q = np.vstack([np.concatenate([r[f"q_{c}"] for r in data]) for c in COORDINATES])
    return ln.LagrangianNet(2, (64,), "softplus", eps=0.01, seed=seed).standardized(q)


def learned(net: ln.LagrangianNet, motion: object = UNSEEN) -> tuple[ac.System, ln.Lagrangian]:
    """A system of the learned component with ``x`` prescribed by ``motion``, the
    pendulum at rest hanging down at t = 0; with the component."""
    s = ac.System("learned_cart_pendulum")
    component = ln.Lagrangian("lnn", COORDINATES, network=net, q0={"theta": 0.0}, v0={"theta": 0.0})
    servo = tr.Position("servo", s=motion)
    s.connect(servo.flange, component.x)
    return s, component
