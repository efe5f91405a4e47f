"""
A learned Lagrangian driven by a servo
======================================

After ServoLNN: a pendulum hangs from a cart whose position a servo prescribes. Nobody
writes its equations: a :class:`learning.Lagrangian` component on the coordinates
``x`` (a translational flange) and ``theta`` (a rotational one) states the Euler-Lagrange
equations of :math:`L = \\tfrac12 \\dot q^T M(q) \\dot q - V(q)` with
:math:`M = L L^T + \\epsilon I` and :math:`V` from a :class:`learning.LagrangianNet`, so the
learned mass matrix is positive definite for every weight. ``ln.train_lagrangian`` learns
the network from the coordinates, their derivatives and the measured generalized forces
(the servo's force on the cart, zero on the pendulum), and the trained component then goes
into a new system and runs a motion it never saw.

Small version: 3 trials of 10 s, a 32-unit network, 30 epochs and 40 Levenberg-Marquardt
evaluations; ``examples/learn_servo_lnn.py`` is the study (also without the servo's force).
"""

# %%
# The truth, from the planar library
# ----------------------------------
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
import learning as ln
from components import planar as pl
from components import translational as tr
from solvers import simulate

M_CART, M_BOB, LENGTH, G = 0.45, 0.13, 1.5, 9.8


def cart_pendulum(motion: object) -> ac.System:
    """The cart on a rail (its position prescribed), the pendulum at rest hanging down."""
    s = ac.System("cart_pendulum")
    world = pl.World("world", g=G)
    rail = pl.Prismatic("rail", axis=(1.0, 0.0), use_axis=True)
    servo = tr.Position("servo", s=motion)
    cart = pl.Body("cart", m=M_CART, I=0.0)
    pivot = pl.Revolute("pivot", phi0=0.0, w0=0.0)
    rod = pl.FixedTranslation("rod", r=(0.0, -LENGTH))
    bob = pl.Body("bob", m=M_BOB, I=0.0)
    s.connect(world.frame_b, rail.frame_a)
    s.connect(servo.flange, rail.axis)
    s.connect(rail.frame_b, cart.frame_a, pivot.frame_a)
    s.connect(pivot.frame_b, rod.frame_a)
    s.connect(rod.frame_b, bob.frame_a)
    return s


# %%
# Training data
# -------------
# Each trial moves the cart by two cosines; the columns ``train_lagrangian`` reads are the
# coordinates ``q_*``, speeds ``v_*``, accelerations ``a_*`` and forces ``Q_*``.
rng = np.random.default_rng(0)
trials = []
for k in range(3):
    amplitude, omega = rng.uniform(0.03, 0.2, 2), rng.uniform(0.5, 3.5, 2)
    motion = (-1.0) ** k * sum(a * (1 - ac.cos(w * ac.time)) for a, w in zip(amplitude, omega))
    res = simulate(cart_pendulum(motion), grid=np.linspace(0.0, 10.0, 201), rtol=1e-10, atol=1e-12)
    trials.append(
        {
            "t": res.t,
            "q_x": res["rail.s"],
            "v_x": res["rail.v"],
            "a_x": res["der(der(rail.s))"],
            "q_theta": res["pivot.phi"],
            "v_theta": res["pivot.w"],
            "a_theta": res["der(der(pivot.phi))"],
            "Q_x": res["rail.f"],
            "Q_theta": np.zeros_like(res.t),
        }
    )

# %%
# The component and its training
# ------------------------------
q_seen = np.vstack([np.concatenate([r[f"q_{c}"] for r in trials]) for c in ("x", "theta")])
net = ln.LagrangianNet(2, (32,), "softplus", eps=0.01, seed=0).standardized(q_seen)
coordinates = {"x": ac.Flange, "theta": ac.RotFlange}


def learned_system(motion: object) -> tuple[ac.System, ln.Lagrangian]:
    """The learned component with its x prescribed by ``motion``."""
    s = ac.System("learned")
    lnn = ln.Lagrangian("lnn", coordinates, network=net, q0={"theta": 0.0}, v0={"theta": 0.0})
    servo = tr.Position("servo", s=motion)
    s.connect(servo.flange, lnn.x)
    return s, lnn


_, component = learned_system(0.0)
fit = ln.train_lagrangian(
    component,
    [ln.Experiment(r) for r in trials],
    epochs=30,
    batch=256,
    lr=1e-2,
    decay=0.99,
    polish=True,
    max_nfev=40,
    progress=False,
)
print(fit.message)

# %%
# The learned mass matrix and potential
# -------------------------------------
# ``component.dynamics`` evaluates :math:`M(q)` and :math:`\\partial V/\\partial q` at
# given coordinates; the truth's are
# :math:`M = [[m_1 + m_2, m_2 l \\cos\\theta], [m_2 l \\cos\\theta, m_2 l^2]]` and
# :math:`\\partial V/\\partial\\theta = m_2 g l \\sin\\theta`.
theta = np.linspace(q_seen[1].min(), q_seen[1].max(), 200)
got = component.dynamics({"x": np.zeros_like(theta), "theta": theta}, fit.params)
truth = {
    "M_xx": np.full_like(theta, M_CART + M_BOB),
    "M_xtheta": M_BOB * LENGTH * np.cos(theta),
    "M_thetatheta": np.full_like(theta, M_BOB * LENGTH**2),
    "dV/dtheta": M_BOB * G * LENGTH * np.sin(theta),
}
mine = {
    "M_xx": got["M"][:, 0, 0],
    "M_xtheta": got["M"][:, 0, 1],
    "M_thetatheta": got["M"][:, 1, 1],
    "dV/dtheta": got["dVdq"][:, 1],
}
fig, axes = plt.subplots(1, 4, figsize=(13, 3.2))
for ax, name in zip(axes, truth):
    ax.plot(theta, truth[name], "k", lw=3, alpha=0.3, label="truth")
    ax.plot(theta, mine[name], "--", label="learned")
    ax.set_title(name)
    ax.set_xlabel("theta [rad]")
    ax.grid(alpha=0.3)
    print(
        f"{name:13s} largest error "
        f"{np.max(np.abs(mine[name] - truth[name])) / np.max(np.abs(truth[name])):.2%}"
    )
axes[0].legend(fontsize=8)
fig.tight_layout()

# %%
# A motion it never saw
# ---------------------
# The trained weights go into any system through ``params=``: here the cart moves by
# :math:`x = 0.3 (1 - e^{-5t})`, simulated by IDAS, against the truth.
unseen = 0.3 * (1 - ac.exp(-5 * ac.time))
grid = np.linspace(0.0, 10.0, 1001)
system, _ = learned_system(unseen)  # theta stays free: the compiler warns it gets zero torque
mine = simulate(system, grid=grid, rtol=1e-10, atol=1e-12, params=fit.params)
ref = simulate(cart_pendulum(unseen), grid=grid, rtol=1e-10, atol=1e-12)
fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(grid, ref["pivot.phi"], "k", lw=3, alpha=0.3, label="truth")
ax.plot(grid, mine["lnn.q_theta"], "--", label="learned Lagrangian")
ax.set_xlabel("time [s]")
ax.set_ylabel("theta [rad]")
ax.legend()
ax.grid(alpha=0.3)
fig.tight_layout()
print(
    "theta on the unseen motion: largest error "
    f"{np.max(np.abs(mine['lnn.q_theta'] - ref['pivot.phi'])) / np.ptp(ref['pivot.phi']):.2%}"
    " of its range"
)
