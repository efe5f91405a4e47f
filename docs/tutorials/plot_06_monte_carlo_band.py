"""
A Monte Carlo tolerance band
============================

How far does a filter's step response move when its parts are within :math:`\\pm 5\\,\\%`?
A third-order Butterworth low-pass (doubly terminated LC ladder: 1 ohm, 1 F, 2 H, 1 F,
1 ohm, cut-off 1 rad/s) is compiled once; ``simulate_many`` runs it for 300 parameter
sets drawn by a Latin hypercube, each part normal around its nominal value and truncated
at the tolerance (3 sigma), and keeps the output of each member. Parameters stay symbolic
in the compiled model, so no member compiles anything.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
from components import electrical as el
from solvers import sample_design, simulate_many, tolerance_ranges

s = ac.System("butterworth")
V = el.StepVoltage("V", V=2.0, start_time=1.0)
Rs, Rl = el.Resistor("Rs", R=1.0), el.Resistor("Rl", R=1.0)
C1, C2 = el.Capacitor("C1", C=1.0, v0=0.0), el.Capacitor("C2", C=1.0, v0=0.0)
L = el.Inductor("L", L=2.0, i0=0.0)
G = el.Ground("G")
s.connect(V.p, Rs.p)
s.connect(Rs.n, C1.p, L.p)
s.connect(L.n, C2.p, Rl.p)
s.connect(V.n, C1.n, C2.n, Rl.n, G.p)
model = ac.compile(s)

# %%
# The design
# ----------
# ``tolerance_ranges`` gives each named parameter its distribution; ``sample_design``
# draws the members (a dict of arrays, one per parameter).
parts = ["Rs.R", "Rl.R", "C1.C", "C2.C", "L.L"]
ranges = tolerance_ranges(model, 0.05, parts, distribution="truncnorm")
design = sample_design(ranges, 300, "lhs", seed=1)
print({name: (round(float(v.min()), 4), round(float(v.max()), 4)) for name, v in design.items()})

# %%
# The batch
# ---------
# ``executor="threads"`` runs the members on CasADi's threads (``"processes"``, a Dask
# client or a scheduler address work the same way; see :doc:`/howto/many_runs`).
batch = simulate_many(model, design, t_end=20.0, dt=0.05, outputs=["Rl.v"], executor="threads")
print(
    f"{batch.n_members} members in {batch.wall_time:.2f} s on {batch.executor}, "
    f"{len(batch.errors)} failed"
)

mean = batch.mean("Rl.v")
lo, hi = batch.percentile("Rl.v", [5, 95])
peak = int(np.argmax(mean))
print(
    f"overshoot peak {mean[peak]:.4f} V at t = {batch.t[peak]:.2f} s "
    f"(5-95 %: {lo[peak]:.4f} to {hi[peak]:.4f} V)"
)

fig, ax = plt.subplots(figsize=(8, 4))
for k in range(20):
    ax.plot(batch.t, batch["Rl.v"][k], color="0.6", lw=0.5)
ax.fill_between(batch.t, lo, hi, alpha=0.35, label="5-95 % of the members")
ax.plot(batch.t, mean, label="mean")
ax.set_xlabel("time [s]")
ax.set_ylabel("Rl.v [V]")
ax.set_title("Butterworth low-pass, parts within +-5 % (3 sigma), 300 members")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# The final value is the resistive divider :math:`V R_l / (R_s + R_l)`, which depends only
# on the two resistors: its spread across members is theirs (at 20 s the response has
# settled to 1e-4 V).
final = batch["Rl.v"][:, -1]
divider = 2.0 * design["Rl.R"] / (design["Rs.R"] + design["Rl.R"])
print(f"largest |final - divider| over the members: {np.max(np.abs(final - divider)):.1e} V")
