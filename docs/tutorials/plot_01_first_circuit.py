"""
A first circuit: a series RLC step response
===========================================

Build a circuit from library components, compile it, read the compiler's block-lower-
triangular (BLT) form, simulate it and plot what you want to see. A 1 V step drives a
resistor, an inductor and a capacitor in series; the capacitor voltage rings at the
circuit's natural frequency :math:`\\omega_0 = 1/\\sqrt{LC}` and settles with the time
constant :math:`2L/R`.
"""

# %%
# Components and connections
# --------------------------
# A component is created with its instance name and its parameters (Modelica's names);
# ``connect`` joins two or more connectors: their potentials are equal and their flows sum
# to zero.
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
from components import electrical as el
from solvers import simulate

circuit = ac.System("rlc")
V = el.StepVoltage("V", V=1.0, start_time=0.1)
R = el.Resistor("R", R=10.0)
L = el.Inductor("L", L=0.1, i0=0.0)  # i0, v0, ...: start values of the states
C = el.Capacitor("C", C=1e-3, v0=0.0)
G = el.Ground("G")
circuit.connect(V.p, R.p)
circuit.connect(R.n, L.p)
circuit.connect(L.n, C.p)
circuit.connect(C.n, V.n, G.p)

# %%
# Compile once
# ------------
# ``ac.compile`` runs the structural stages (flattening, alias elimination, index
# reduction, BLT sorting) and returns an immutable :class:`acausal.Model`. Its BLT lists
# the blocks in the order they are solved, each with its equation and the unknown it
# determines; the states are the variables IDAS integrates.
model = ac.compile(circuit)
print(model.blt())
print("states:", model.states)

# %%
# Simulate and plot
# -----------------
# ``simulate`` takes the model, the horizon and the output step; every variable of every
# component is in the result under its dotted name. ``params=`` changes parameter values
# without compiling again.
res = simulate(model, t_end=0.6, dt=5e-4)
damped = simulate(model, t_end=0.6, dt=5e-4, params={"R.R": 25.0})

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(res.t, res["C.v"], label="R = 10 ohm")
ax.plot(damped.t, damped["C.v"], label="R = 25 ohm")
ax.set_xlabel("time [s]")
ax.set_ylabel(f"C.v [{res.unit('C.v')}]")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()

# %%
# Check against the closed form
# -----------------------------
# After the step at :math:`t_0` the capacitor voltage is
# :math:`1 - e^{-\\alpha \\tau}(\\cos \\omega_d \\tau + (\\alpha/\\omega_d) \\sin \\omega_d
# \\tau)` with :math:`\\alpha = R/2L`, :math:`\\omega_d = \\sqrt{1/LC - \\alpha^2}` and
# :math:`\\tau = t - t_0`.
alpha, wd = 10.0 / 0.2, np.sqrt(1 / (0.1 * 1e-3) - (10.0 / 0.2) ** 2)
tau = np.clip(res.t - 0.1, 0.0, None)
exact = 1 - np.exp(-alpha * tau) * (np.cos(wd * tau) + alpha / wd * np.sin(wd * tau))
print(f"largest deviation from the closed form: {np.max(np.abs(res['C.v'] - exact)):.1e} V")

# %%
# The result also gives a table (``res.to_dataframe()``, pandas) and a quick plot with one
# labelled axis per unit:
axes = res.plot("C.v", "L.i")
