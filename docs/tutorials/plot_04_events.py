"""
Events: a half-wave rectifier
=============================

An ideal diode is a switch with memory: it conducts while its current is positive and
blocks while its voltage is negative, a relation on a crossing function :math:`s`
(Modelica's ``off = s < 0``). The solver finds each zero crossing of :math:`s` to the
tolerance, switches the mode, re-initializes the algebraic variables consistently and
restarts. Here a 50 Hz source charges a smoothing capacitor through the diode.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
from components import electrical as el
from solvers import simulate

s = ac.System("rectifier")
src = el.SineVoltage("V", V=10.0, f=50.0)
d = el.IdealDiode("D", Ron=1e-3, Goff=1e-9)
C = el.Capacitor("C", C=100e-6, v0=0.0)
load = el.Resistor("R", R=200.0)
G = el.Ground("G")
s.connect(src.p, d.p)
s.connect(d.n, C.p, load.p)
s.connect(C.n, load.n, src.n, G.p)

model = ac.compile(s)
print("modes:", model.modes)
res = simulate(model, t_end=0.08, dt=2e-5, rtol=1e-8, atol=1e-10)

# %%
# The diode's mode changes are the result's events: it conducts for a short part of each
# period, near the peak of the source, while the capacitor recharges.
for t_event, modes in res.events[:6]:
    print(f"t = {1e3 * t_event:8.4f} ms: {modes}")
print(f"... {len(res.events)} events in {res.t[-1]:.2f} s")

# %%
fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
ax1.plot(1e3 * res.t, res["V.v"], label="source V.v")
ax1.plot(1e3 * res.t, res["C.v"], label="output C.v")
ax1.set_ylabel("[V]")
ax1.legend(fontsize=8)
ax2.plot(1e3 * res.t, res["D.i"])
ax2.set_ylabel("D.i [A]")
ax2.set_xlabel("time [ms]")
for t_event, _ in res.events:
    ax2.axvline(1e3 * t_event, color="k", lw=0.5, alpha=0.3)
for ax in (ax1, ax2):
    ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# Between events the ripple follows the capacitor's discharge into the load,
# :math:`v(t) = v_0 e^{-t / RC}`: after the last event the voltage fell by the factor the
# closed form gives.
last = res.events[-1][0]
tau = 200.0 * 100e-6
ratio = res["C.v"][-1] / np.interp(last, res.t, res["C.v"])
print(
    f"decay since the last event {ratio:.6f}, closed form {np.exp(-(res.t[-1] - last) / tau):.6f}"
)
