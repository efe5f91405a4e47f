"""The two-bar actuator of Angeli, Desmet and Naets (Section 5.2, Table 2): builders and data.

Two uniform bars in a vertical plane (gravity along ``-y``): the short one (2.9 kg,
``J = 0.1208 kg m^2`` about its centre, so 0.707 m long) and the long one (1.3 kg,
``J = 0.2167 kg m^2``, 1.414 m), joined at their far ends by a revolute (the elbow); each
bar's base is pinned to a slider on a vertical rail (rails at ``x = 0`` and ``x = 1 m``),
so the mechanism has two degrees of freedom, the sliders' heights ``s_1``, ``s_2`` (the
paper's minimal coordinates). Each slider is held by a spring (200 N/m) and a damper
(5 N s/m) to its rail and pushed by a force along the rail (our choice of support; the
paper gives only the forces' shapes). Forces: ``sim1`` a time-varying pair (training),
``sim2`` a lower sinusoidal pair, ``sim3`` sim1 scaled by 1.1 (the paper: "slightly
increase its amplitude"); 10 s at 1 kHz, IDAS at rtol 1e-10.
"""

from __future__ import annotations

import numpy as np

import acausal as ac
import learning as ln
from components import planar as pl
from components import translational as tr
from solvers import simulate

M1, J1 = 2.9, 0.1208
M2, J2 = 1.3, 0.2167
L1, L2 = np.sqrt(12 * J1 / M1), np.sqrt(12 * J2 / M2)  # uniform bars
RAIL = 1.0  # the second rail's x
SPRING, DAMPER = 200.0, 5.0
PHI = (1.9326, 2.6556)  # the bars' angles at s = (0, 0), elbow up
DURATION, DT = 10.0, 1e-3
BODIES = ("bar1", "bar2")
MINIMAL = ("slide1.s", "slide2.s")


def forces(case: str, scale: float = 1.0) -> tuple[object, object]:
    """The forces on the two sliders (N) of ``case``, times ``scale``."""
    t = ac.time
    if case == "sim1":
        pair = (30 * ac.sin(2 * t) + 10 * ac.sin(5.3 * t), 20 * ac.sin(3.1 * t + 1))
    elif case == "sim2":
        pair = (15 * ac.sin(2.5 * t), 10 * ac.sin(2.5 * t + 0.5))
    elif case == "sim3":
        return forces("sim1", 1.1 * scale)
    else:
        raise ValueError(f"unknown case {case!r}")
    return tuple(scale * f for f in pair)


def mount(s: ac.System, i: int, flange: ac.Connector, force: object) -> None:
    """Slider ``i``'s spring, damper and force, between ``flange`` and its rail."""
    spring, damper = tr.Spring(f"spring{i}", c=SPRING), tr.Damper(f"damper{i}", d=DAMPER)
    housing, push = tr.Fixed(f"housing{i}"), tr.Force(f"force{i}", f=force)
    s.connect(flange, spring.flange_b, damper.flange_b, push.flange)
    s.connect(housing.flange, spring.flange_a, damper.flange_a)


def mechanism(force1: object, force2: object) -> ac.System:
    """The full planar model (an index-3 DAE in the bodies' coordinates)."""
    s = ac.System("two_bar")  # gravity: the bodies' default 9.80665 along -y
    tips = []
    for i, (x, m, J, L) in enumerate(((0.0, M1, J1, L1), (RAIL, M2, J2, L2)), 1):
        rail = pl.Fixed(f"rail{i}", r=(x, 0.0))
        slide = pl.Prismatic(f"slide{i}", axis=(0.0, 1.0), use_axis=True, s0=0.0, v0=0.0)
        pin = pl.Revolute(f"pin{i}", state_priority=0, phi_start=PHI[i - 1])
        bar = pl.Body(f"bar{i}", m=m, I=J, r_cm=(L / 2, 0.0), phi_start=PHI[i - 1])
        tip = pl.FixedTranslation(f"tip{i}", r=(L, 0.0))
        s.connect(rail.frame_b, slide.frame_a)
        s.connect(slide.frame_b, pin.frame_a)
        s.connect(pin.frame_b, bar.frame_a, tip.frame_a)
        mount(s, i, slide.axis, (force1, force2)[i - 1])
        tips.append(tip)
    elbow = pl.Revolute("elbow", state_priority=0)
    s.connect(tips[0].frame_b, elbow.frame_a)
    s.connect(elbow.frame_b, tips[1].frame_b)
    return s


def simulate_case(case: str, scale: float = 1.0, duration: float = DURATION) -> object:
    """The full model's response to ``case`` (a ``Result`` on a 1 ms grid)."""
    return simulate(mechanism(*forces(case, scale)), t_end=duration, dt=DT, rtol=1e-10, atol=1e-12)


def natural(results: object) -> ln.NaturalCoordinates:
    """The bars' natural coordinates (ends of each bar), the sliders' heights as the given
    minimal coordinates and the sliders' axis forces as the forces on them."""
    forces = {m: m.replace(".s", ".f") for m in MINIMAL}
    return ln.natural_coordinates(results, BODIES, minimal=MINIMAL, forces=forces)


def reduced(reduction: ln.Reduction, case: str, scale: float = 1.0) -> tuple[ac.System, object]:
    """The reduced model with the same springs, dampers and forces on its minimal
    coordinates (the sliders' heights, as connectors), at rest at ``s = 0`` like the full
    model."""
    s = ac.System("two_bar_reduced")
    zero = dict.fromkeys(reduction.coordinates, 0.0)
    ports = dict.fromkeys(reduction.coordinates, ac.Flange)
    comp = reduction.component("red", q0=zero, v0=zero, ports=ports)
    for i, (name, force) in enumerate(zip(reduction.coordinates, forces(case, scale)), 1):
        mount(s, i, comp.port(name), force)
    return s, comp


def centres_error(full: object, red: object) -> float:
    """Max over the bars' centres of mass and time of the reduced model's error, relative to
    each coordinate's range of motion in the full model."""
    worst = 0.0
    for b in BODIES:
        for axis in "xy":
            truth = full[f"{b}.{axis}_cm"]
            err = np.max(np.abs(red[f"red.{b}.{axis}_cm"] - truth)) / np.ptp(truth)
            worst = max(worst, float(err))
    return worst
