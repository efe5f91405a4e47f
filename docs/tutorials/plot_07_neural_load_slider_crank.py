"""
A neural load in a slider-crank, trained through rollouts
=========================================================

After De Groote et al. (*Neural network augmented physics models*): a slider-crank driven
by a torque on its crank, whose slider pushes against a load nobody modeled (a spring that
engages part-way and direction-dependent friction). Only the crank's angle (an encoder)
and speed are measured. The load becomes an :class:`learning.Unknown` flange-to-flange
component whose force is a small ReLU network of the slider's position and speed,
:math:`f = \\mathrm{NN}(x, \\dot x)`, learned together with the slider mass and the motor
friction by ``ln.train``: the compiled model is stepped at the data's sample time
(explicit Euler here, Newton blocks solved inside), each step predicted from the measured
state (a feedforward fit), with reverse-mode gradients and Adam.

This small version uses 4 trajectories and 12 epochs; ``examples/learn_slider_crank.py``
is the paper-sized study (20 trajectories, recurrent stage, cross-validation).
"""

# %%
# The mechanism, with any load on the slider
# ------------------------------------------
# ``pl.SliderCrank`` is the closed loop (an index-3 DAE); its crank axis and slider axis
# are 1-D flanges. With ``torque=None`` the motor's torque is a parameter,
# ``motor.tau_constant``, which the rollout sets from a data column at each step.
import matplotlib.pyplot as plt
import numpy as np

import acausal as ac
import learning as ln
from components import planar as pl
from components import rotational as rot
from components import translational as tr
from solvers import simulate

L1, L2 = 0.05, 0.29
THETA, OMEGA = "sc.crank_joint.phi", "der(sc.crank_joint.phi)"


def mechanism(
    load: ac.Component, torque: object = None, m_slider: float = 0.77, bm: float = 0.007
) -> ac.System:
    s = ac.System("slider_crank")
    world = pl.World("world", g=0.0)  # a horizontal plane
    sc = pl.SliderCrank("sc", l1=L1, l2=L2, m_slider=m_slider, theta0=0.0, w0=0.0)
    if torque is None:
        motor = rot.ConstantTorque("motor", tau_constant=0.0)
    else:
        motor = rot.Torque("motor", tau=torque)
    friction, housing = rot.Damper("Bm", d=bm), rot.Fixed("housing")
    centre = tr.Fixed("centre", s0=L2 - L1)  # the slider's inner dead centre
    s.connect(world.frame_b, sc.frame_a)
    s.connect(motor.flange, sc.crank_axis, friction.flange_b)
    s.connect(friction.flange_a, housing.flange)
    s.connect(load.flange_a, sc.slider_axis)
    s.connect(load.flange_b, centre.flange)
    return s


def true_force(d: object, v: object) -> object:
    """A spring engaging 6 cm from the dead centre plus skewed Coulomb and viscous friction."""
    if isinstance(d, np.ndarray):
        slip = np.tanh(v / 0.02)
        return 0.8 * np.logaddexp(0.0, (d - 0.06) / 0.002) + slip * (2.25 + 0.75 * slip) + 2.0 * v
    slip = ac.tanh(v / 0.02)
    return 0.8 * ac.log(1 + ac.exp((d - 0.06) / 0.002)) + slip * (2.25 + 0.75 * slip) + 2.0 * v


# %%
# Data: four torque profiles
# --------------------------
# The truth is the same mechanism with the load written as a known law (``ln.Known``). The
# torque is played from its samples; the angle is quantized to 8192 counts per revolution.
rate, n = 2000.0, 400
t = np.arange(n) / rate
rng = np.random.default_rng(0)


def truth_load() -> ln.Unknown:
    """The true load as a known law ``f == F(x, der(x))`` (a new one for each system: a
    component belongs to one system)."""
    law = ln.Known(lambda f, x, v: f == true_force(x, v), n_inputs=3)
    return ln.Unknown("load", ac.Flange, law, inputs=("f", "x", "der(x)"))


records = []
for _ in range(4):
    tau = 0.35 + sum(
        rng.uniform(0.05, 0.3) * np.sin(2 * np.pi * rng.uniform(1, 8) * t + rng.uniform(0, 6.3))
        for _ in range(3)
    )
    res = simulate(mechanism(truth_load(), torque=(t, tau)), grid=t, rtol=1e-10, atol=1e-12)
    step = 2 * np.pi / 8192
    records.append(
        {
            "t": t,
            THETA: np.round(res[THETA] / step) * step,
            OMEGA: res[OMEGA],
            "tau": tau,
            "d": res["load.s"],
            "v": res["der(load.s)"],
        }
    )
experiments = [
    ln.Experiment(r, measured=[THETA, OMEGA], inputs={"motor.tau_constant": "tau"}, name=f"run {k}")
    for k, r in enumerate(records)
]
print(experiments[0])

# %%
# The learner
# -----------
# A 16-unit ReLU network on the slider's position ``x`` and speed ``der(x)``, its inputs
# standardized by the range the data visit; the slider mass and the motor friction start
# 50 % off their true values and are learned with it (``physical=``).
visited = {
    "x": np.concatenate([r["d"] for r in records]),
    "der(x)": np.concatenate([r["v"] for r in records]),
}
law = ln.MLP((16,), "relu", inputs=("x", "der(x)"), seed=1).standardized(visited)
load = ln.Unknown("load", ac.Flange, law)
system = mechanism(load, m_slider=0.77 * 1.5, bm=0.007 * 1.5)
fit = ln.train(
    system,
    experiments,
    physical=["sc.slider.m", "Bm.d"],
    horizon=1,
    scheme="euler",
    epochs=12,
    batch=100,
    lr=3e-3,
    progress=False,
)
print(
    f"loss {fit.loss:.3g}; slider mass {fit.params['sc.slider.m']:.3f} kg (truth 0.77), "
    f"motor friction {fit.params['Bm.d']:.4f} N m s/rad (truth 0.007)"
)

# %%
# Free run and the learned force
# ------------------------------
# ``ln.predict`` free-runs the fitted model from a trajectory's first state with the
# logged torque; ``fit.law("load")`` evaluates the learned force where the slider went.
# With four short trajectories and 12 epochs the free run already follows the measured
# speed, while the slider mass is still some 15 % off and the network takes up part of
# its inertia force. The paper-sized run (``examples/learn_slider_crank.py``: 20
# trajectories, 150 epochs, then a recurrent stage) reports the slider mass within about
# 1 % and the load within 2 % of its range.
free = ln.predict(fit.model, experiments[0])
r = records[0]
learned = np.ravel(fit.law("load")({"x": r["d"], "der(x)": r["v"]}))

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
ax1.plot(t, r[OMEGA], "k", lw=3, alpha=0.3, label="measured speed")
ax1.plot(free["t"], free[OMEGA], label="free run of the fitted model")
ax1.set_xlabel("time [s]")
ax1.set_ylabel("crank speed [rad/s]")
ax1.legend(fontsize=8)
ax2.plot(t, true_force(r["d"], r["v"]), "k", lw=3, alpha=0.3, label="true load force")
ax2.plot(t, learned, label="network")
ax2.set_xlabel("time [s]")
ax2.set_ylabel("load force [N]")
ax2.legend(fontsize=8)
for ax in (ax1, ax2):
    ax.grid(alpha=0.3)
fig.tight_layout()
rmse = np.sqrt(np.mean((free[OMEGA] - r[OMEGA]) ** 2))
print(f"free-run speed RMSE {rmse:.3f} rad/s (speed range {np.ptp(r[OMEGA]):.1f} rad/s)")
