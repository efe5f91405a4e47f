"""
A two-mass servo identified from encoder data
=============================================

After the hybrid-structured-networks study: a motor inertia and a load inertia joined by
a flexible shaft, each with Coulomb plus viscous friction against the housing, driven by
a torque. Only the two angles are logged, rounded to the encoder's step. Two steps:

1. ``ln.reconstruct`` turns each quantized angle into angle, speed and acceleration by
   Savitzky-Golay filtering, choosing the window from the signal's spectrum against its
   quantization floor;
2. ``ln.fit_equations`` fits the model's equations to these records (equation error: no
   simulation), the inertias, shaft stiffness and damping together with one small tanh
   network per friction, :math:`\\tau_f = \\mathrm{NN}(\\omega)`.

``examples/identify_two_mass_servo.py`` is the full study (validation record, sweep over
network sizes, least-squares baseline).
"""

# %%
# The servo, with any friction elements
# -------------------------------------
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
import learning as ln
from components import rotational as rot
from solvers import simulate

TRUTH = {"motor.J": 0.005, "load.J": 0.045, "shaft.c": 69.0, "shaft.d": 0.15}
COULOMB, VISCOUS = {"motor": 0.16, "load": 0.08}, 0.02


def servo(
    motor_friction: list, load_friction: list, drive: object = None, values: dict | None = None
) -> ac.System:
    """Each friction element between its inertia (flange_a) and the housing (flange_b);
    ``drive``: the torque's samples, or None for a parameter ``drive.tau_constant``. The
    load's flange_b stays free (the compiler warns that it gets zero torque)."""
    v = {**TRUTH, **(values or {})}
    s = ac.System("two_mass_servo")
    motor = rot.Inertia("motor", J=v["motor.J"], phi0=0.0, w0=0.0)
    load = rot.Inertia("load", J=v["load.J"], phi0=0.0, w0=0.0)
    shaft = rot.SpringDamper("shaft", c=v["shaft.c"], d=v["shaft.d"])
    source = (
        rot.ConstantTorque("drive", tau_constant=0.0)
        if drive is None
        else rot.Torque("drive", tau=drive)
    )
    housing = rot.Fixed("housing")
    s.connect(source.flange, motor.flange_a, *(f.flange_a for f in motor_friction))
    s.connect(motor.flange_b, shaft.flange_a)
    s.connect(shaft.flange_b, load.flange_a, *(f.flange_a for f in load_friction))
    s.connect(housing.flange, *(f.flange_b for f in (*motor_friction, *load_friction)))
    return s


def true_friction(side: str) -> list:
    """Coulomb friction with stick/slip events plus viscous friction."""
    return [
        rot.CoulombFriction(f"{side}_coulomb", tau_coulomb=COULOMB[side]),
        rot.Damper(f"{side}_viscous", d=VISCOUS),
    ]


# %%
# The measurement
# ---------------
# 1.5 s at 1 kHz; the torque a sum of sines; the angles rounded to 4.2e-4 rad.
rate, step = 1000.0, 4.2e-4
t = np.arange(1500) / rate
rng = np.random.default_rng(3)
tau = np.sin(2 * np.pi * 2.0 * t) + sum(
    0.3 * np.sin(2 * np.pi * rng.uniform(5, 40) * t + rng.uniform(0, 6.3)) for _ in range(6)
)
truth = simulate(
    servo(true_friction("motor"), true_friction("load"), (t, tau)), grid=t, rtol=1e-8, atol=1e-10
)
angles = {side: np.round(truth[f"{side}.phi"] / step) * step for side in ("motor", "load")}

# %%
# Reconstruction
# --------------
# ``rec.q``, ``rec.qd``, ``rec.qdd`` are the smoothed angle, speed and acceleration;
# ``rec.bias`` and ``rec.noise`` the estimated filter bias and rounding noise of the
# acceleration; ``rec.plot()`` shows the spectrum and the chosen window.
record = {"t": t, "tau": tau}
for side in ("motor", "load"):
    rec = ln.reconstruct(t, angles[side], step=step)
    record[f"{side}.phi"], record[f"{side}.w"], record[f"der({side}.w)"] = rec.q, rec.qd, rec.qdd
    error = np.mean(np.abs(rec.qdd - truth[f"der({side}.w)"])) / np.mean(
        np.abs(truth[f"der({side}.w)"])
    )
    print(f"{side}: acceleration error {100 * error:.1f} % of its mean magnitude")
_ = rec.plot()  # the spectrum, its quantization floor and the chosen cut-off

# %%
# The hybrid model and its fit
# ----------------------------
# A friction network reads its inertia's speed (``der(x)`` of the flange it sits on). The
# physical parameters start 20-30 % off the truth.
networks = {
    side: ln.Unknown(
        f"{side}_friction",
        ac.RotFlange,
        ln.MLP((3,), "tanh", inputs=("der(x)",), seed=k).standardized(
            {"der(x)": record[f"{side}.w"]}
        ),
    )
    for k, side in enumerate(("motor", "load"))
}
start = {
    "motor.J": 0.005 * 1.3,
    "load.J": 0.045 * 0.7,
    "shaft.c": 69.0 * 1.2,
    "shaft.d": 0.15 * 0.8,
}
hybrid = servo([networks["motor"]], [networks["load"]], values=start)
fit = ln.fit_equations(
    hybrid, ln.Experiment(record, inputs={"drive.tau_constant": "tau"}), physical=list(TRUTH)
)
for name, value in TRUTH.items():
    print(f"{name:8s} fitted {fit.params[name]:.4g} (truth {value:g})")

# %%
# The learned friction curves
# ---------------------------
# Away from zero speed, where the encoder cannot tell the sign of a slow motion, each
# network is the truth's :math:`F_c\\,\\mathrm{sign}(\\omega) + F_v \\omega`.
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for ax, side in zip(axes, ("motor", "load")):
    w = np.linspace(record[f"{side}.w"].min(), record[f"{side}.w"].max(), 400)
    learned = np.ravel(fit.law(f"{side}_friction")({"der(x)": w}))
    ax.plot(w, COULOMB[side] * np.sign(w) + VISCOUS * w, "k", lw=3, alpha=0.3, label="truth")
    ax.plot(w, learned, "--", label="network")
    ax.set_xlabel(f"{side} speed [rad/s]")
    ax.set_ylabel("friction torque [N m]")
    ax.set_title(side)
    ax.grid(alpha=0.3)
axes[0].legend(fontsize=8)
fig.tight_layout()
