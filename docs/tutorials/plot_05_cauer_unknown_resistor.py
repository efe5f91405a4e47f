"""
Learning a resistor nobody specified: the Cauer filter
======================================================

The experiment of Matei et al. (*Learning constitutive equations of physical components
with predefined feasibility conditions*): a fifth-order Cauer low-pass filter whose input
resistor R1 is unknown, and only the load voltage ``R2.v`` is measured. R1 becomes an
:class:`learning.Unknown` two-pin component whose constitutive law :math:`g(i, v) = 0` is
a separable odd polynomial, reparameterized so that every optimizer iterate is feasible
(the partial derivatives of Proposition 3.1 never vanish) and dissipative
(:math:`v\\,i \\ge 0`). ``ln.fit`` fits it by least squares, simulating the index-2 DAE
(capacitor loops) with IDAS and its forward sensitivities.
"""

# %%
# The filter, with any component in R1's place
# ---------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
import learning as ln
from components import electrical as el
from solvers import simulate


def cauer(r1: ac.Component) -> ac.System:
    """CauerLowPassAnalog of the Modelica library, driven by a 6 V, 0.05 Hz sine."""
    s = ac.System("cauer")
    V = el.SineVoltage("V", V=6.0, f=0.05)
    R2 = el.Resistor("R2", R=1.0)
    C1, C3, C5 = (
        el.Capacitor(n, C=c, v0=0.0) for n, c in (("C1", 1.072), ("C3", 1.682), ("C5", 0.7262))
    )
    C2 = el.Capacitor("C2", C=1 / (1.704992**2 * 1.304))
    C4 = el.Capacitor("C4", C=1 / (1.179945**2 * 0.8586))
    L1, L2 = el.Inductor("L1", L=1.304, i0=0.0), el.Inductor("L2", L=0.8586, i0=0.0)
    G = el.Ground("G")
    s.connect(V.p, r1.p)
    s.connect(r1.n, C1.p, C2.p, L1.p)
    s.connect(C2.n, L1.n, C3.p, C4.p, L2.p)
    s.connect(C4.n, L2.n, C5.p, R2.p)
    s.connect(V.n, C1.n, C3.n, C5.n, R2.n, G.p)
    return s


# %%
# Measurements
# ------------
# The truth is a linear 2 ohm resistor; the data are the load voltage at 201 times.
# An :class:`learning.Experiment` holds them and checks them once.
t = np.linspace(0.0, 40.0, 201)
truth = simulate(cauer(el.Resistor("R1", R=2.0)), grid=t, rtol=1e-10, atol=1e-12)
data = ln.Experiment({"t": t, "R2.v": truth["R2.v"]}, name="sine")
print(data)

# %%
# The unknown component and the fit
# ---------------------------------
# ``constraint="dissipative"`` makes the polynomial's coefficients same-signed by
# construction (a softplus of the raw parameters): any step of the optimizer gives a
# feasible, dissipative resistor, so no simulation fails.
R1 = ln.Unknown("R1", ac.Pin, law=ln.Polynomial(order=3, constraint="dissipative"))
circuit = cauer(R1)
report = ln.check_feasibility(circuit)  # print(report) lists every component's checks
print("feasible:", report.ok)
print("R1's law:", report.components["R1"].law)
for finding in report.components["R1"].findings:
    print(f"  [{finding.severity}] {finding.check}: {finding.message}")
fit = ln.fit(circuit, data, method="least_squares", max_nfev=40)
print(f"loss {fit.loss:.3g} after {fit.n_simulations} simulations ({fit.n_failed} failed)")
print("weights:", {k: round(v, 6) for k, v in R1.weights(fit.params).items()})

# %%
# The learned law
# ---------------
# ``fit.law("R1")`` is the learned law as a function: the voltage at given currents.
# Over the currents the data visited it is the 2 ohm line.
currents = np.linspace(truth["R1.i"].min(), truth["R1.i"].max(), 101)
learned_v = fit.law("R1")({"i": currents})
fitted = simulate(fit.model, grid=t, rtol=1e-10, atol=1e-12)

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax1.plot(currents, 2.0 * currents, "k-", lw=4, alpha=0.3, label="truth v = 2 i")
ax1.plot(currents, np.ravel(learned_v), "--", label="learned polynomial")
ax1.set_xlabel("R1.i [A]")
ax1.set_ylabel("R1.v [V]")
ax1.legend()
ax2.plot(t, data["R2.v"], "k.", ms=3, label="measured R2.v")
ax2.plot(t, fitted["R2.v"], label="fitted model")
ax2.set_xlabel("time [s]")
ax2.set_ylabel("[V]")
ax2.legend()
for ax in (ax1, ax2):
    ax.grid(alpha=0.3)
fig.tight_layout()
error = np.max(np.abs(np.ravel(learned_v) - 2.0 * currents)) / np.ptp(2.0 * currents)
print(f"largest error of the learned map: {error:.1e} of the truth's range")

# %%
# ``fit.system`` is a copy of the circuit with the fitted values; the circuit you built is
# unchanged, so the same fit from the same start gives the same result. The full study
# (a neural law too, direct collocation with IPOPT, and the same fits without constraints,
# some of whose simulations fail) is ``examples/learn_cauer.py``.
