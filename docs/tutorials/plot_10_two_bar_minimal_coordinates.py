"""
A two-bar mechanism reduced to minimal coordinates
==================================================

After Angeli, Desmet and Naets (dynamics-aware autoencoders): two bars in a vertical
plane, each pinned to a slider on its own vertical rail and joined at their far ends by an
elbow. The planar model is an index-3 DAE in the bodies' coordinates, yet the mechanism
has two degrees of freedom, the sliders' heights. ``ln.natural_coordinates`` takes each
bar's two end points along a simulation, ``ln.reduce_mechanism`` trains a decoder from the
heights to those points with a reconstruction and a one-step simulation loss, and the
result is an ordinary component: a Lagrangian in the heights, with the bars' constant mass
matrix and gravity in natural coordinates, that any system can connect to.

Small version: 5 s of training data, 60 epochs; ``examples/reduce_two_bar.py`` is the study
(10 s at 1 kHz, the ablation without the simulation loss).
"""

# %%
# The full planar model
# ---------------------
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
import learning as ln
from components import planar as pl
from components import translational as tr
from solvers import simulate

MASS, INERTIA = (2.9, 1.3), (0.1208, 0.2167)
LENGTH = tuple(np.sqrt(12 * j / m) for m, j in zip(MASS, INERTIA))  # uniform bars
PHI = (1.9326, 2.6556)  # the bars' angles at rest with both sliders at 0, elbow up


def mount(s: ac.System, i: int, flange: ac.Connector, force: object) -> None:
    """A spring (200 N/m), a damper (5 N s/m) and a force on slider ``i``'s flange."""
    spring, damper = tr.Spring(f"spring{i}", c=200.0), tr.Damper(f"damper{i}", d=5.0)
    housing, push = tr.Fixed(f"housing{i}"), tr.Force(f"force{i}", f=force)
    s.connect(flange, spring.flange_b, damper.flange_b, push.flange)
    s.connect(housing.flange, spring.flange_a, damper.flange_a)


def two_bar(forces: tuple) -> ac.System:
    s = ac.System("two_bar")  # gravity: the bodies' default, 9.80665 m/s^2 along -y
    tips = []
    for i in (1, 2):
        rail = pl.Fixed(f"rail{i}", r=(float(i - 1), 0.0))
        slide = pl.Prismatic(f"slide{i}", axis=(0.0, 1.0), use_axis=True, s0=0.0, v0=0.0)
        pin = pl.Revolute(f"pin{i}", state_priority=0, phi_start=PHI[i - 1])
        bar = pl.Body(
            f"bar{i}",
            m=MASS[i - 1],
            I=INERTIA[i - 1],
            r_cm=(LENGTH[i - 1] / 2, 0.0),
            phi_start=PHI[i - 1],
        )
        tip = pl.FixedTranslation(f"tip{i}", r=(LENGTH[i - 1], 0.0))
        s.connect(rail.frame_b, slide.frame_a)
        s.connect(slide.frame_b, pin.frame_a)
        s.connect(pin.frame_b, bar.frame_a, tip.frame_a)
        mount(s, i, slide.axis, forces[i - 1])
        tips.append(tip)
    elbow = pl.Revolute("elbow", state_priority=0)
    s.connect(tips[0].frame_b, elbow.frame_a)
    s.connect(elbow.frame_b, tips[1].frame_b)
    return s


t = ac.time
training_forces = (30 * ac.sin(2 * t) + 10 * ac.sin(5.3 * t), 20 * ac.sin(3.1 * t + 1))
unseen_forces = (15 * ac.sin(2.5 * t), 10 * ac.sin(2.5 * t + 0.5))
full_model = ac.compile(two_bar(training_forces))
print(f"full model: states {full_model.states}, index {full_model.index}")
train_run = simulate(full_model, t_end=5.0, dt=2.5e-3, rtol=1e-10, atol=1e-12)

# %%
# Natural coordinates and the reduction
# -------------------------------------
# The sliders' heights are given as the minimal coordinates, and their axis forces as the
# forces acting along them.
data = ln.natural_coordinates(
    train_run,
    ("bar1", "bar2"),
    minimal=("slide1.s", "slide2.s"),
    forces={"slide1.s": "slide1.f", "slide2.s": "slide2.f"},
)
print(f"{len(data.names)} natural coordinates: {', '.join(data.names)}")
reduction = ln.reduce_mechanism(
    data,
    hidden=(32, 32),
    losses={"rec": 1.0, "sim": 1.0},
    epochs=60,
    lr=3e-3,
    decay=0.98,
    batch=256,
    seed=0,
    progress=False,
)
print(f"{reduction.message}: loss {reduction.loss:.3g} in {reduction.wall_time:.1f} s")

# %%
# The reduced component on forces it never saw
# --------------------------------------------
# ``reduction.component`` builds the reduced mechanism with a flange per minimal
# coordinate (``comp.port(name)``); the same springs, dampers and forces act on it.
reduced = ac.System("two_bar_reduced")
zero = dict.fromkeys(reduction.coordinates, 0.0)
comp = reduction.component(
    "red", q0=zero, v0=zero, ports=dict.fromkeys(reduction.coordinates, ac.Flange)
)
for i, (name, force) in enumerate(zip(reduction.coordinates, unseen_forces), 1):
    mount(reduced, i, comp.port(name), force)
red = simulate(reduced, t_end=5.0, dt=2.5e-3, rtol=1e-8, atol=1e-10)
full = simulate(two_bar(unseen_forces), t_end=5.0, dt=2.5e-3, rtol=1e-10, atol=1e-12)

fig, axes = plt.subplots(2, 2, figsize=(10, 5.5), sharex=True)
for row, bar in zip(axes, ("bar1", "bar2")):
    for ax, axis in zip(row, "xy"):
        ax.plot(full.t, full[f"{bar}.{axis}_cm"], "k", lw=3, alpha=0.3, label="full DAE")
        ax.plot(red.t, red[f"red.{bar}.{axis}_cm"], "--", label="reduced (2 coordinates)")
        ax.set_ylabel(f"{bar}.{axis}_cm [m]")
        ax.grid(alpha=0.3)
        error = np.max(np.abs(red[f"red.{bar}.{axis}_cm"] - full[f"{bar}.{axis}_cm"])) / np.ptp(
            full[f"{bar}.{axis}_cm"]
        )
        print(f"{bar}.{axis}_cm: largest error {error:.2%} of its range")
for ax in axes[1]:
    ax.set_xlabel("time [s] (forces never seen in training)")
axes[0][0].legend(fontsize=8)
fig.tight_layout()
