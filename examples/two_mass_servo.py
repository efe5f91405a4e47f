"""The two-mass flexible servo of the hybrid-structured-networks study (Section 5): builders
and the synthetic measurements.

A motor inertia ``J_m`` and a load inertia ``J_l`` joined by a shaft (stiffness ``k``,
damping ``b``), the motor driven by a torque ``tau`` against the housing, each inertia with
Coulomb plus viscous friction against the housing:

    J_m w_m' = tau - k (phi_m - phi_l) - b (w_m - w_l) - F_m(w_m)
    J_l w_l' =       k (phi_m - phi_l) + b (w_m - w_l) - F_l(w_l)
    F(w) = F_c sign(w) + F_v w

with the study's values (``J_m = 0.005``, ``J_l = 0.045 kg m^2``, ``k = 69 N m/rad``,
``b = 0.15 N m s/rad``, ``F_c = 0.16 / 0.08 N m`` motor / load, ``F_v = 0.02 N m s/rad``
each; the study's text prints the motor's Coulomb level as 0.016, we take 0.16 as the
issue does).

The truth's friction is the library's :class:`~components.rotational.CoulombFriction` with
stick/slip modes (events) in parallel with a :class:`~components.rotational.Damper`: IDAS
simulates it robustly on the 1 kHz grid (about 8 s for the 2 s record), so the truth is
the discontinuous law, not a smoothed one.

Every friction element sits between its inertia and the housing with ``flange_a`` on the
inertia, so an :class:`~learning.Unknown` there reads ``x`` = the inertia's angle and
``der(x)`` = its speed, and its output ``f`` is the friction torque the inertia feels
(with a minus sign): ``f = F(w)``.

Measurements: ``RATE`` Hz for ``DURATION`` s; the torque is band-limited noise (white
Gaussian noise through a 4th-order Butterworth low-pass at ``BAND`` Hz, zero-phase,
normalized to unit standard deviation, times ``NOISE_AMPLITUDE``) plus a ``SINE_F`` Hz sine
of amplitude ``SINE_AMPLITUDE``, played linearly between samples; IDAS at rtol 1e-8; both
angles rounded to the encoder step ``STEP``. The amplitudes (1 N m each) drive the motor
to about +-8 rad/s and +-900 rad/s^2 and the load to about +-3 rad/s and +-100 rad/s^2
(the study's Fig. 10 shows +-1000 and +-100 rad/s^2), each through zero some 15 (load)
to 80 (motor) times in 2 s and stuck less than 1 % of the time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from scipy.signal import butter, sosfiltfilt

import acausal as ac
import learning as ln
from components import rotational as rot
from solvers import simulate

J_M, J_L, K, B = 0.005, 0.045, 69.0, 0.15
COULOMB = {"motor": 0.16, "load": 0.08}
VISCOUS = {"motor": 0.02, "load": 0.02}
RATE, DURATION, STEP = 1000.0, 2.0, 4.2e-4
BAND, NOISE_AMPLITUDE, SINE_F, SINE_AMPLITUDE = 50.0, 1.0, 2.0, 1.0
SIDES = ("motor", "load")
TRUTH = {"motor.J": J_M, "load.J": J_L, "shaft.c": K, "shaft.d": B}
PAPER = {"motor.J": 5.03e-3, "load.J": 4.53e-2, "shaft.c": 69.14, "shaft.d": 0.1498}
INPUTS = {"drive.tau_constant": "tau"}
START = {"motor.J": 1.3, "load.J": 0.7, "shaft.c": 1.2, "shaft.d": 0.8}  # x truth
HIDDEN = 3  # tanh units of each friction network
W_SMOOTH = 0.01  # rad/s: the baseline's Coulomb tanh(w / W_SMOOTH)
BASELINE = [f"{side}_{p}" for side in SIDES for p in ("coulomb.tau_coulomb", "viscous.d")]


def torque(seed: int, samples: int) -> np.ndarray:
    """The input torque on the sample grid: band-limited noise plus the sine (see the
    module docstring); ``seed`` draws the noise."""
    rng = np.random.default_rng(seed)
    margin = 200  # samples cut from each end of the zero-phase filter's output
    sos = butter(4, BAND, fs=RATE, output="sos")
    noise = sosfiltfilt(sos, rng.standard_normal(samples + 2 * margin))[margin:-margin]
    t = np.arange(samples) / RATE
    return NOISE_AMPLITUDE * noise / np.std(noise) + SINE_AMPLITUDE * np.sin(2 * np.pi * SINE_F * t)


def friction_torque(w: np.ndarray, side: str) -> np.ndarray:
    """The truth's friction torque ``F(w) = F_c sign(w) + F_v w`` of ``side`` (``motor`` or
    ``load``) when sliding at speed ``w``."""
    return COULOMB[side] * np.sign(w) + VISCOUS[side] * w


def true_friction(side: str) -> list[ac.Component]:
    """The truth's friction of ``side``: Coulomb with stick/slip events and viscous."""
    return [
        rot.CoulombFriction(f"{side}_coulomb", tau_coulomb=COULOMB[side]),
        rot.Damper(f"{side}_viscous", d=VISCOUS[side]),
    ]


def smooth_friction(side: str, w_smooth: float, scale: float = 1.0) -> list[ac.Component]:
    """Coulomb ``F_c tanh(w / w_smooth)`` plus viscous ``F_v w`` of ``side``, smooth (for
    equation error), both coefficients the truth's times ``scale`` (a fit's start)."""
    return [
        rot.CoulombFriction(
            f"{side}_coulomb", tau_coulomb=scale * COULOMB[side], smooth=True, w_smooth=w_smooth
        ),
        rot.Damper(f"{side}_viscous", d=scale * VISCOUS[side]),
    ]


def network_friction(side: str, speeds: np.ndarray, hidden: int, seed: int) -> ln.Unknown:
    """The structured network's part for ``side``: ``f = NN(w)``, ``hidden`` tanh units on
    the inertia's speed alone (seeded start), standardized by the ``speeds`` it will see."""
    law = ln.MLP((hidden,), "tanh", inputs=("der(x)",), seed=seed)
    return ln.Unknown(f"{side}_friction", ac.RotFlange, law.standardized({"der(x)": speeds}))


def servo(
    motor_friction: Sequence[ac.Component],
    load_friction: Sequence[ac.Component],
    drive: object = None,
    values: dict[str, float] | None = None,
) -> ac.System:
    """The servo with the given friction elements (each with ``flange_a`` on its inertia and
    ``flange_b`` on the housing), at rest at angle 0. ``drive``: the torque as samples
    ``(t, tau)`` or, when None, the parameter ``drive.tau_constant`` (the input column of
    equation error). ``values``: ``motor.J``, ``load.J``, ``shaft.c``, ``shaft.d`` (default
    the truth)."""
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


def measure(
    seed: int = 0,
    duration: float = DURATION,
    friction: Callable[[str], list[ac.Component]] = true_friction,
) -> dict[str, np.ndarray]:
    """One synthetic experiment with the torque of ``seed``: ``"t"``, ``"tau"``, the
    quantized angles ``"motor.phi"``, ``"load.phi"``, and the truth's ``"true <variable>"``
    for ``phi``, ``w``, ``a`` of both inertias (for errors and plots). ``friction(side)``:
    the truth's friction elements (default :func:`true_friction`)."""
    n = int(round(duration * RATE))
    t = np.arange(n) / RATE
    tau = torque(seed, n)
    res = simulate(
        servo(friction("motor"), friction("load"), (t, tau)),
        grid=t,
        rtol=1e-8,
        atol=1e-10,
    )
    out = {"t": t, "tau": tau}
    for side in SIDES:
        out[f"{side}.phi"] = np.round(res[f"{side}.phi"] / STEP) * STEP
        for q in ("phi", "w", "a"):
            out[f"true {side}.{q}"] = res[f"{side}.{q}"]
    return out


def reconstructed(
    data: dict[str, np.ndarray], fraction: float = 1.0
) -> tuple[dict[str, np.ndarray], dict[str, ln.Reconstruction]]:
    """The equation-error record from measured angles: every state of :func:`servo`'s
    model (``motor.phi``, ``motor.w``, ``load.phi``, ``load.w``) and ``der(motor.w)``,
    ``der(load.w)`` from :func:`learning.reconstruct` (window chosen by the spectrum times
    ``fraction``), and ``"tau"``; with the two reconstructions."""
    rec = {"t": data["t"], "tau": data["tau"]}
    parts = {}
    for side in SIDES:
        r = ln.reconstruct(data["t"], data[f"{side}.phi"], step=STEP, fraction=fraction)
        rec[f"{side}.phi"], rec[f"{side}.w"], rec[f"der({side}.w)"] = r.q, r.qd, r.qdd
        parts[side] = r
    return rec, parts


def exact(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The equation-error record from the truth's unquantized states and accelerations."""
    rec = {"t": data["t"], "tau": data["tau"]}
    for side in SIDES:
        rec[f"{side}.phi"] = data[f"true {side}.phi"]
        rec[f"{side}.w"] = data[f"true {side}.w"]
        rec[f"der({side}.w)"] = data[f"true {side}.a"]
    return rec


def hybrid(
    speeds: Mapping[str, np.ndarray],
    hidden: int = HIDDEN,
    seed: int = 0,
    drive: object = None,
    values: dict[str, float] | None = None,
) -> tuple[ac.System, dict[str, ln.Unknown]]:
    """The hybrid model: :func:`servo` with a :func:`network_friction` on each inertia
    (standardized by ``speeds[side]``; the load's network seeded ``seed + 1``), and the
    networks by side. ``drive``, ``values``: as :func:`servo`."""
    nets = {
        side: network_friction(side, speeds[side], hidden, seed + k) for k, side in enumerate(SIDES)
    }
    return servo([nets["motor"]], [nets["load"]], drive, values), nets


def fit_hybrid(
    rec: Mapping[str, np.ndarray], hidden: int = HIDDEN, seed: int = 0
) -> tuple[ln.FitResult, dict[str, ln.Unknown]]:
    """The hybrid model fitted by equation error to the record ``rec`` (as
    :func:`reconstructed` gives): ``m_m, m_l, k, b`` from :data:`START` times the truth
    together with the networks' weights; with the networks by side."""
    system, nets = hybrid(
        {side: rec[f"{side}.w"] for side in SIDES}, hidden, seed, values=start_values()
    )
    fit = ln.fit_equations(system, ln.Experiment(rec, inputs=INPUTS), physical=list(TRUTH))
    return fit, nets


def fit_baseline(rec: Mapping[str, np.ndarray], w_smooth: float = W_SMOOTH) -> ln.FitResult:
    """The least-squares baseline fitted by equation error to ``rec``: :func:`servo` with
    :func:`smooth_friction` (``w_smooth``) on each inertia, ``m_m, m_l, k, b`` from
    :data:`START` times the truth and the four friction coefficients from half the truth."""
    system = servo(
        smooth_friction("motor", w_smooth, 0.5),
        smooth_friction("load", w_smooth, 0.5),
        values=start_values(),
    )
    return ln.fit_equations(system, ln.Experiment(rec, inputs=INPUTS), physical=[*TRUTH, *BASELINE])


def start_values() -> dict[str, float]:
    """The fits' start for ``m_m, m_l, k, b``: the truth times :data:`START`."""
    return {k: TRUTH[k] * START[k] for k in TRUTH}


def sign_band(data: Mapping[str, np.ndarray], rec: Mapping[str, np.ndarray]) -> float:
    """The speed band ``|w| < w_band`` in which the reconstruction ``rec`` cannot tell the
    sign of the speed: the largest true ``|w|`` (either inertia) at which the reconstructed
    speed has the other sign."""
    worst = 0.0
    for side in SIDES:
        w = data[f"true {side}.w"]
        wrong = np.sign(rec[f"{side}.w"]) != np.sign(w)
        worst = max(worst, float(np.max(np.abs(w[wrong]), initial=0.0)))
    return worst


def curve_error(learned: np.ndarray, w: np.ndarray, side: str, band: float) -> float:
    """RMS of a friction curve ``learned`` (at speeds ``w``) minus the truth's, relative to
    the truth's range, over the speeds with ``|w| >= band``."""
    keep = np.abs(w) >= band
    truth = friction_torque(w[keep], side)
    return float(np.sqrt(np.mean((learned[keep] - truth) ** 2)) / np.ptp(truth))


def white_box(curve: Callable[[np.ndarray], np.ndarray], w: np.ndarray, band: float) -> dict:
    """Coulomb level and viscous slope read from a friction ``curve`` as the study's
    Section 5.4.1 reads them from its plots: a straight line fitted to the curve on 200
    evenly spaced speeds from ``band`` to the largest visited speed ``|w|``, on each side;
    ``coulomb+``/``viscous+`` (``w > 0``: the intercept and the slope), ``coulomb-``/
    ``viscous-`` (``w < 0``: minus the intercept, and the slope)."""
    out = {}
    for sign, name in ((1.0, "+"), (-1.0, "-")):
        grid = sign * np.linspace(band, np.max(sign * w), 200)
        slope, intercept = np.polyfit(grid, curve(grid), 1)
        out[f"coulomb{name}"], out[f"viscous{name}"] = sign * intercept, slope
    return out
