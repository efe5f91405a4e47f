"""Closed-loop planar mechanisms shared by tests and benchmarks: builders, exact geometry,
and the checks every run of them is held to.

Two one-degree-of-freedom loops, each with a rotational ``Inertia`` on the crank axis:

* the slider-crank of MSL ``Mechanics.MultiBody.Examples.Loops.Engine1a``
  (``../shared/validation/README.md``): piston line +y through the crank axis, gravity -y,
  crank angle ``phi`` = 0 with the crank along +y; joints ``B1`` (crank), ``B2`` (crank pin),
  ``pin`` (piston pin) and the prismatic ``cylinder``;
* a Grashof crank-rocker four-bar: ground pivots at the origin and at ``(D, 0)``, crank ``A``,
  coupler ``B``, rocker ``C`` (``A + D < B + C``: the crank turns fully, the rocker swings
  between two dead points); joints ``B1`` (crank), ``B2``, ``B3``, ``B4`` (rocker pivot).

A :class:`Variant` says where the start values sit (on the crank joint, on the inertia, on
the rocker joint - the piston pin of the slider-crank - or nowhere, only guesses), how it
is driven (``free``: a start speed of 10 rad/s, no losses; ``torque``: from rest, a constant
torque against a viscous damper on the crank axis) and the start angle of the crank. Every
joint gets guesses consistent with that angle, so initialization starts on the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import acausal as ac
from components import planar as pl
from components import rotational as rot

G = 9.80665

# Engine1a (MSL), the data of ../shared/validation/README.md
L1, L2 = 0.1, 0.2  # crank radius, connecting rod
M_CRANK, R_CRANK, J_CRANK = 3.596172, 0.036547, 1.143067e-2  # J about the crank axis
M_ROD, I_ROD = 1.848, 6.7144e-3  # I about the rod's centre
M_PISTON, R_PISTON = 6.047566, 0.05  # piston centre 0.05 m beyond the pin along the line
J_EXTRA, W0 = 1.0, 10.0

# the four-bar: link lengths (crank, coupler, rocker, ground) and uniform bars of mass M_*
A, B, C, D = 0.1, 0.35, 0.3, 0.4
M_A, M_B, M_C, J_FOUR_BAR = 0.5, 1.0, 1.0, 0.5

# torque drives (N m) and viscous dampers (N m s/rad): top speeds tau / d = 20 rad/s
DRIVE = {"slider_crank": (20.0, 1.0), "four_bar": (5.0, 0.25)}
ROCKER = {"slider_crank": "pin", "four_bar": "B4"}

MECHANISMS = ("slider_crank", "four_bar")
PLACES = ("crank", "inertia", "rocker", "none")
DRIVES = ("free", "torque")


def slider_crank_joints(phi: float, w: float) -> dict[str, tuple[float, float]]:
    """Joint coordinates ``(angle or s, speed)`` of Engine1a at crank angle ``phi``, speed
    ``w``: rod angle ``psi = -asin(L1 sin(phi) / L2)`` (0 along +y), ``B2 = psi - phi``,
    ``pin = -psi``, ``s = L1 cos(phi) + L2 cos(psi)``; speeds by the chain rule."""
    psi = -np.arcsin(L1 * np.sin(phi) / L2)
    dpsi = -L1 * np.cos(phi) * w / (L2 * np.cos(psi))
    s = L1 * np.cos(phi) + L2 * np.cos(psi)
    ds = -L1 * np.sin(phi) * w - L2 * np.sin(psi) * dpsi
    return {"B1": (phi, w), "B2": (psi - phi, dpsi - w), "pin": (-psi, -dpsi), "cylinder": (s, ds)}


def four_bar_joints(theta: float, w: float) -> dict[str, tuple[float, float]]:
    """Joint coordinates of the four-bar (the assembly with the coupler left of the line
    from crank tip to rocker pivot) at crank angle ``theta``, speed ``w``.

    With the coupler's absolute angle ``beta`` and the rocker's ``gamma``, the loop
    ``A e^(i theta) + B e^(i beta) = D + C e^(i gamma)`` gives the angles by the law of
    cosines and its time derivative ``[-B sin(beta), C sin(gamma); B cos(beta), -C cos(gamma)]
    (beta', gamma') = A w (sin(theta), -cos(theta))`` the speeds.
    """
    tip = A * np.array([np.cos(theta), np.sin(theta)])
    to_pivot = np.array([D, 0.0]) - tip
    e = np.hypot(*to_pivot)
    beta = np.arctan2(to_pivot[1], to_pivot[0]) + np.arccos((B**2 + e**2 - C**2) / (2 * B * e))
    joint = tip + B * np.array([np.cos(beta), np.sin(beta)])
    gamma = np.arctan2(joint[1], joint[0] - D)
    mat = np.array([[-B * np.sin(beta), C * np.sin(gamma)], [B * np.cos(beta), -C * np.cos(gamma)]])
    dbeta, dgamma = np.linalg.solve(mat, A * w * np.array([np.sin(theta), -np.cos(theta)]))
    return {
        "B1": (theta, w),
        "B2": (beta - theta, dbeta - w),
        "B3": (gamma - beta, dgamma - dbeta),
        "B4": (gamma, dgamma),
    }


class WorkMeter(ac.Component):
    """``W(t) = int_0^t P dt`` as a state: ``der(W) = P``, ``W(0) = 0``, where ``P`` is an
    expression of other components' variables."""

    def __init__(self, name: str, power: object) -> None:
        super().__init__(name)
        self.W = self.variable("W", start=0.0, fixed=True)
        self.equations(ac.der(self.W) == power)


@dataclass(frozen=True)
class Variant:
    """One mechanism with its start values at ``place``, driven by ``drive``, from crank
    angle ``theta0`` (rad)."""

    mechanism: str
    place: str
    drive: str
    theta0: float

    @property
    def name(self) -> str:
        return f"{self.mechanism}/{self.place}/{self.drive}/{np.degrees(self.theta0):.0f}deg"

    @property
    def speed0(self) -> float:
        """The crank's start speed (rad/s)."""
        return W0 if self.drive == "free" else 0.0

    def joints(self) -> dict[str, tuple[float, float]]:
        """Every joint's consistent start coordinates."""
        exact = slider_crank_joints if self.mechanism == "slider_crank" else four_bar_joints
        return exact(self.theta0, self.speed0)

    def build(self, state_priority: dict[str, int] | None = None) -> ac.System:
        """The system; ``state_priority`` overrides joints' priorities by joint name."""
        s = ac.System(self.mechanism)
        world = pl.World("world", g=G)
        joints = _joints(self, state_priority or {})
        inertia = rot.Inertia(
            "inertia",
            J=J_EXTRA if self.mechanism == "slider_crank" else J_FOUR_BAR,
            **(_start(self.theta0, self.speed0) if self.place == "inertia" else {}),
        )
        s.connect(inertia.flange_b, joints["B1"].axis)
        loop = _slider_crank_loop if self.mechanism == "slider_crank" else _four_bar_loop
        loop(s, world, joints)
        if self.drive == "torque":
            tau, d = DRIVE[self.mechanism]
            motor = rot.ConstantTorque("motor", tau_constant=tau)
            damper = rot.Damper("damper", d=d)
            housing = rot.Fixed("housing")
            meter = WorkMeter("work", (tau - d * inertia.w) * inertia.w)
            s.connect(motor.flange, inertia.flange_a)
            s.connect(housing.flange, damper.flange_a)
            s.connect(damper.flange_b, joints["B1"].axis)
            s.add(meter)
        return s


def _start(phi: float, w: float) -> dict[str, float]:
    return {"phi0": phi, "w0": w}


def _joints(v: Variant, priority: dict[str, int]) -> dict[str, ac.Component]:
    """The joints, with fixed starts where ``v`` puts them and guesses everywhere else."""
    fixed = {"crank": "B1", "rocker": ROCKER[v.mechanism]}.get(v.place)
    out = {}
    for name, (q, dq) in v.joints().items():
        extra = {"state_priority": priority[name]} if name in priority else {}
        if name == "cylinder":
            out[name] = pl.Prismatic(name, axis=(0.0, 1.0), s_start=q, **extra)
        elif name == fixed:
            out[name] = pl.Revolute(name, use_axis=name == "B1", **_start(q, dq), **extra)
        else:
            out[name] = pl.Revolute(name, use_axis=name == "B1", phi_start=q, **extra)
    return out


def _bar(name: str, m: float, length: float) -> pl.Body:
    """A uniform bar along its frame's x axis."""
    return pl.Body(name, m=m, I=m * length**2 / 12, r_cm=(length / 2, 0.0))


def _slider_crank_loop(s: ac.System, world: pl.World, j: dict[str, ac.Component]) -> None:
    crank = pl.Body("crank", m=M_CRANK, I=J_CRANK - M_CRANK * R_CRANK**2, r_cm=(0.0, R_CRANK))
    crank_arm = pl.FixedTranslation("crank_arm", r=(0.0, L1))
    rod = pl.Body("rod", m=M_ROD, I=I_ROD, r_cm=(0.0, L2 / 2))
    rod_arm = pl.FixedTranslation("rod_arm", r=(0.0, L2))
    piston = pl.Body("piston", m=M_PISTON, I=0.0, r_cm=(0.0, R_PISTON))
    s.connect(world.frame_b, j["B1"].frame_a, j["cylinder"].frame_a)
    s.connect(j["B1"].frame_b, crank.frame_a, crank_arm.frame_a)
    s.connect(crank_arm.frame_b, j["B2"].frame_a)
    s.connect(j["B2"].frame_b, rod.frame_a, rod_arm.frame_a)
    s.connect(rod_arm.frame_b, j["pin"].frame_a)
    s.connect(j["pin"].frame_b, piston.frame_a, j["cylinder"].frame_b)


def _four_bar_loop(s: ac.System, world: pl.World, j: dict[str, ac.Component]) -> None:
    crank, coupler, rocker = _bar("crank", M_A, A), _bar("coupler", M_B, B), _bar("rocker", M_C, C)
    arms = {n: pl.FixedTranslation(f"{n}_arm", r=(r, 0.0)) for n, r in zip("ABC", (A, B, C))}
    pivot = pl.FixedTranslation("ground", r=(D, 0.0))
    s.connect(world.frame_b, j["B1"].frame_a, pivot.frame_a)
    s.connect(j["B1"].frame_b, crank.frame_a, arms["A"].frame_a)
    s.connect(arms["A"].frame_b, j["B2"].frame_a)
    s.connect(j["B2"].frame_b, coupler.frame_a, arms["B"].frame_a)
    s.connect(arms["B"].frame_b, j["B3"].frame_a)
    s.connect(pivot.frame_b, j["B4"].frame_a)
    s.connect(j["B4"].frame_b, rocker.frame_a, arms["C"].frame_a)
    s.connect(arms["C"].frame_b, j["B3"].frame_b)


def variants() -> list[Variant]:
    """The matrix: both mechanisms, every start place, both drives (the ``none`` place only
    torque-driven: without a start speed it stays at rest), crank at 0 and 90 degrees."""
    return [
        Variant(m, place, drive, theta0)
        for m in MECHANISMS
        for place in PLACES
        for drive in DRIVES
        if not (place == "none" and drive == "free")
        for theta0 in (0.0, np.pi / 2)
    ]


# -- what a run is held to --------------------------------------------------------------------
BODIES = {"slider_crank": ("crank", "rod", "piston"), "four_bar": ("crank", "coupler", "rocker")}


def energy(res: object, mechanism: str) -> np.ndarray:
    """Kinetic and potential energy of the bodies plus the inertia's ``J w^2 / 2``."""
    j = J_EXTRA if mechanism == "slider_crank" else J_FOUR_BAR
    total = j * res["inertia.w"] ** 2 / 2
    for body in BODIES[mechanism]:
        total = total + res[f"{body}.E_kin"] + res[f"{body}.E_pot"]
    return total


def energy_balance(res: object, v: Variant) -> float:
    """``max |E(t) - E(0) - W(t)| / max |E|``: the energy gained equals the work of the drive
    minus the damper's losses (``W = 0`` when free)."""
    e = energy(res, v.mechanism)
    work = res["work.W"] if v.drive == "torque" else 0.0
    return float(np.max(np.abs(e - e[0] - work)) / np.max(np.abs(e)))


def loop_closure(res: object, mechanism: str) -> float:
    """The loop recomputed from the joint coordinates alone: the largest gap (m) between
    the closing joint reached through the crank side and through the other side, and the
    angles around the loop (rad, modulo 2 pi)."""
    q = {n: res[f"{n}.phi"] for n in ("B1", "B2", "pin" if mechanism == "slider_crank" else "B3")}
    if mechanism == "slider_crank":
        psi = q["B1"] + q["B2"]  # rod angle
        pin = (-L1 * np.sin(q["B1"]) - L2 * np.sin(psi), L1 * np.cos(q["B1"]) + L2 * np.cos(psi))
        gap = np.hypot(pin[0], pin[1] - res["cylinder.s"])
        turn = psi + q["pin"]  # the piston does not turn
    else:
        beta, gamma = q["B1"] + q["B2"], res["B4.phi"]
        end = A * np.cos(q["B1"]) + B * np.cos(beta), A * np.sin(q["B1"]) + B * np.sin(beta)
        gap = np.hypot(end[0] - D - C * np.cos(gamma), end[1] - C * np.sin(gamma))
        turn = beta + q["B3"] - gamma
    wrapped = np.abs(np.angle(np.exp(1j * turn)))
    return float(max(np.max(gap), np.max(wrapped)))


def revolutions(res: object, v: Variant) -> float:
    """Crank revolutions from the start."""
    return float(abs(res["B1.phi"][-1] - v.theta0) / (2 * np.pi))


def cart_pendulum(drive: ac.Component | None = None) -> ac.System:
    """The cart on a rail with a pendulum of ``examples/cart_pendulum.py`` (its ``truth``),
    driven through the rail's axis: by default by the servo ``x(t) = 0.2 (cos 2t - 1)``
    with a :class:`WorkMeter` ``work`` of the servo's power ``x'(t) f``; else by ``drive``
    (a 1-D source with a ``flange``) on a free cart starting at rest at 0."""
    from examples import cart_pendulum as cp  # imports learning: only when a cart is built

    if drive is not None:
        return cp.truth(drive=drive)
    s = cp.truth(0.2 * (ac.cos(2 * ac.time) - 1))
    rail = next(c for c in s.all_components() if c.name == "rail")
    s.add(WorkMeter("work", -0.4 * ac.sin(2 * ac.time) * rail.f))
    return s
