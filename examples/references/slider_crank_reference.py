"""The paper's slider-crank by hand: its data and the Lagrangian of the explicit geometry.

An independent model (no acausal components) that tests and the benchmark compare with:
crank of length l1 with its centre of mass at l1/2 and inertia J about the crank axis
(motor included), a uniform rod of length l2, a slider on the x axis through the crank axis.
With the crank angle q, the mass term M(q) and the potential V(q) give
``M(q) q'' + M'(q) q'^2 / 2 + V'(q) = tau - d q'``.
"""

from __future__ import annotations

import sympy as sp

import acausal as ac
from components import planar as pl
from components import rotational as rot

L1, L2 = 0.05, 0.29
M_CRANK, M_ROD, M_SLIDER = 0.23, 0.35, 0.77
J, FRICTION, G = 0.0034, 0.007, 9.80665


def lagrangian_terms() -> tuple[sp.Symbol, sp.Expr, sp.Expr, sp.Expr]:
    """``(q, M, dM/dq, dV/dq)`` as sympy expressions of the crank angle ``q``."""
    q = sp.symbols("q")
    tip = sp.Matrix([L1 * sp.cos(q), L1 * sp.sin(q)])
    slider = sp.Matrix([L1 * sp.cos(q) + sp.sqrt(L2**2 - (L1 * sp.sin(q)) ** 2), 0])
    rod_cm = (tip + slider) / 2
    rod_angle = sp.atan2(slider[1] - tip[1], slider[0] - tip[0])
    mass = (
        J
        + M_ROD * (rod_cm.diff(q).T * rod_cm.diff(q))[0]
        + M_ROD * L2**2 / 12 * rod_angle.diff(q) ** 2
        + M_SLIDER * slider[0].diff(q) ** 2
    )
    potential = G * (M_CRANK * tip[1] / 2 + M_ROD * rod_cm[1])
    return q, mass, mass.diff(q), potential.diff(q)


def _on_world(theta0: float, w0: float) -> tuple[ac.System, pl.SliderCrank]:
    """The mechanism in a vertical plane (the slider line horizontal, +x; gravity -y) on the
    world, crank angle ``theta0`` and speed ``w0``; its crank axis still free."""
    s = ac.System("slider_crank")
    world = pl.World("world", g=G)
    sc = pl.SliderCrank(
        "sc",
        l1=L1,
        l2=L2,
        m_crank=M_CRANK,
        m_rod=M_ROD,
        m_slider=M_SLIDER,
        J=J,
        theta0=theta0,
        w0=w0,
    )
    s.connect(world.frame_b, sc.frame_a)
    return s, sc


def slider_crank(theta0=0.0, w0=0.0, torque=None, friction=None):
    """The mechanism, optionally driven by the torque signal ``torque`` (``motor.tau``) and
    braked by a viscous damper ``friction`` on its crank axis."""
    s, sc = _on_world(theta0, w0)
    housing = rot.Fixed("housing")
    if friction is not None:
        damper = rot.Damper("friction", d=friction)
        s.connect(housing.flange, damper.flange_a)
        s.connect(damper.flange_b, sc.crank_axis)
    if torque is not None:
        motor = rot.Torque("motor", tau=torque)
        s.connect(motor.flange, sc.crank_axis)
    return s


def driven_slider_crank(torque: float = 0.3, friction: float = FRICTION) -> ac.System:
    """The slider-crank from rest, driven through its crank axis by the constant torque
    ``motor.tau_constant`` against the viscous damper ``friction`` (the benchmarks')."""
    s, sc = _on_world(0.0, 0.0)
    housing = rot.Fixed("housing")
    damper = rot.Damper("friction", d=friction)
    motor = rot.ConstantTorque("motor", tau_constant=torque)
    s.connect(housing.flange, damper.flange_a)
    s.connect(damper.flange_b, sc.crank_axis, motor.flange)
    return s
