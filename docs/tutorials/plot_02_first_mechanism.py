"""
A first mechanism: a planar pendulum
====================================

Planar multibody components (``from components import planar as pl``) connect through
frames: a frame's potentials are its position ``x, y`` and angle ``phi``, its flows the
force ``fx, fy`` and torque ``tau`` acting on the component. A pendulum is a world frame,
a revolute joint and a body whose centre of mass hangs a rod's length from the joint.
"""

# %%
# Build
# -----
# ``pl.World`` declares gravity (``g`` along :math:`-y`) for every body. The joint's
# ``phi0`` and ``w0`` are the start angle and speed (relative to the world's x axis); a
# body's ``r_cm`` places its centre of mass in body coordinates, ``I`` is its inertia
# about it.
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
from components import planar as pl
from solvers import simulate

length, mass, g = 0.5, 1.0, 9.80665
pendulum = ac.System("pendulum")
world = pl.World("world", g=g)
pivot = pl.Revolute("pivot", phi0=-np.pi / 2 + 1.0, w0=0.0)  # 1 rad from hanging down
bob = pl.Body("bob", m=mass, I=1e-3, r_cm=(length, 0.0))
pendulum.connect(world.frame_b, pivot.frame_a)
pendulum.connect(pivot.frame_b, bob.frame_a)

model = ac.compile(pendulum)
print(model)

# %%
# The body's Newton-Euler equations and the joint's constraints form an index-3 DAE; the
# compiler differentiated the constraints (Pantelides), chose the joint angle and speed as
# states and kept the rest algebraic. :doc:`/concepts/index_reduction` shows the steps.
res = simulate(model, t_end=4.0, dt=2e-3, rtol=1e-9, atol=1e-11)

# %%
# Motion and energy
# -----------------
# Every variable is in the result by name: the joint's angle, the joint force, the body's
# kinetic and potential energies ``bob.E_kin``, ``bob.E_pot``. Their sum stays constant to
# the integrator's tolerance (nothing dissipates).
energy = res["bob.E_kin"] + res["bob.E_pot"]
print(f"energy drift over 4 s: {np.ptp(energy):.2e} J of {energy[0]:.4f} J")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
ax1.plot(res.t, res["pivot.phi"] + np.pi / 2)
ax1.set_xlabel("time [s]")
ax1.set_ylabel("angle from the vertical [rad]")
ax1.grid(alpha=0.3)
ax2.plot(res.t, res["pivot.frame_b.fy"], label="vertical force on the joint's frame_b")
ax2.set_xlabel("time [s]")
ax2.set_ylabel("[N]")
ax2.legend(fontsize=8)
ax2.grid(alpha=0.3)
fig.tight_layout()
