"""
Friction modes: a brake that grips and holds
============================================

Dry friction has modes, as in Modelica: sliding forward, stuck, sliding backward, and free
(zero normal force). A :class:`components.translational.Brake` between a mass and the
housing is free until its normal force rises, then slides with kinetic friction
:math:`\\mu_k f_n` until the speed reaches zero, and then holds as long as the push stays
below :math:`\\mu_s f_n`. Each change of mode is an event: the integrator stops at the
crossing, the modes are iterated until they agree, and it restarts.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
from components import translational as tr
from solvers import simulate

s = ac.System("brake")
mass = tr.Mass("m", m=1.0, s0=0.0, v0=0.0)
push = tr.Force("F", f=1.0 + 0.8 * ac.sin(1.4 * np.pi * ac.time))  # a signal of ac.time
brake = tr.Brake("b", fn=ac.step(10.0, 1.0), mu_k=0.2, mu_s=0.25)  # fn = 10 N from t = 1 s
s.connect(push.flange, brake.flange_a)
s.connect(brake.flange_b, mass.flange_a)

# the mass's free flange_b gets zero force; the compiler says so in a warning
model = ac.compile(s)
print("continuous states:", model.states, " discrete modes:", model.modes)
res = simulate(model, t_end=4.0, dt=1e-3, rtol=1e-9, atol=1e-11)

# %%
# The events
# ----------
# ``res.events`` lists each event's time and the modes that changed there: the brake
# engages forward (mode +1) at 1 s, grips (mode 0) when the mass stops, and holds while
# the push stays below :math:`\\mu_s f_n = 2.5` N.
for t_event, modes in res.events:
    print(f"t = {t_event:.6f} s: {modes}")

# %%
# Speed, friction force and mode
# ------------------------------
fig, axes = plt.subplots(3, 1, figsize=(7, 6), sharex=True)
axes[0].plot(res.t, res["m.v"])
axes[0].set_ylabel("m.v [m/s]")
axes[1].plot(res.t, res["b.f"], label="brake force b.f")
axes[1].plot(res.t, res["F.f"], "--", label="push F.f")
axes[1].set_ylabel("[N]")
axes[1].legend(fontsize=8)
axes[2].step(res.t, res["b.mode"], where="post")
axes[2].set_yticks([-1, 0, 1, 2])
axes[2].set_ylabel("b.mode")
axes[2].set_xlabel("time [s]")
for ax in axes:
    ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# While stuck, the brake's force is whatever holds the mass: it equals the push, to the
# solver's precision.
held = res.t > res.events[-1][0] + 1e-3
print(
    f"largest |b.f - F.f| while held: {np.max(np.abs(res['b.f'][held] - res['F.f'][held])):.1e} N"
)
