"""The Furuta pendulum of the hybrid-structured-networks study (Section 7): a user-defined
component written from its Lagrangian, the builders of the true, hybrid and least-squares
models, and the synthetic measurements.

An arm turns about a vertical axis (angle ``alpha``, driven by the motor torque ``u``), a
pendulum at its end about the arm's axis (angle ``beta`` relative to the arm, 0 upright).
With ``s = sin(beta)``, ``c = cos(beta)`` the kinetic and potential energies are

    T = 1/2 (I1 + I4 s^2) alpha'^2 + I3 c alpha' beta' + 1/2 I2 beta'^2,   V = u_g c,

(``I1 .. I4`` inertias fixed by the geometry, ``u_g`` the pendulum's gravity torque), and
:class:`Furuta` states Lagrange's equations ``d/dt dL/dq' - dL/dq = Q`` for ``L = T - V``,
which ``ac.der`` (the chain rule) and ``casadi.gradient`` write out symbolically:

    (I1 + I4 s^2) alpha'' + I3 c beta'' + 2 I4 s c alpha' beta' - I3 s beta'^2 = Q_alpha
    I3 c alpha'' + I2 beta'' - I4 s c alpha'^2 - u_g s                         = Q_beta

(the study's Eq. 24; its accelerations Eq. 25-26 have the denominator ``I1 I2 + I2 I4 s^2 -
I3^2 c^2``). The generalized forces are the torques on the component's two flanges,
``arm`` (angle ``alpha``) and ``pendulum`` (angle ``beta``): ``Q = flange.tau``. In these
coordinates the pendulum flange's angle is already relative to the arm (the joint torque
does no virtual work on ``alpha``; its reaction on the arm is in the Lagrangian), so each
joint's friction sits between its flange and a :class:`~components.rotational.Fixed`
housing with ``flange_a`` on the joint: an :class:`~learning.Unknown` there reads ``x`` =
the joint angle, ``der(x)`` = its speed, and its flow ``f`` is the friction torque (the
joint feels ``-f``), as in ``examples/two_mass_servo.py``.

The truth: the study's hybrid estimates (``I1 = 0.26``, ``I2 = 0.0223``, ``I3 = 0.0149``,
``I4 = 0.0222``, ``u_g = 0.556``), each joint with :class:`StribeckFriction`, stick/slip
friction whose sliding torque falls from the break-away (static) level to the Coulomb level
as the speed grows and then rises viscously,

    F(w) = sign(w) (F_c + (F_s - F_c) exp(-|w| / w_s) + F_v |w|),

stuck (events) until the holding torque exceeds ``F_s``: the stick-slip character the
study's Fig. 25 shows, which a Coulomb + viscous model cannot follow near zero speed.

Measurements: ``RATE`` Hz for ``DURATION`` s from rest with the pendulum ``BETA0`` rad from
upright (it swings through +-2 rad about the bottom, over 8 rad/s); the
motor torque is band-limited noise (white noise through a 4th-order Butterworth low-pass
at ``BAND`` Hz, zero-phase, unit standard deviation, times ``NOISE_AMPLITUDE``) plus a sine
at ``SINE_F`` Hz (near the hanging pendulum's resonance, 0.8 Hz) of amplitude
``SINE_AMPLITUDE``, linear between samples; IDAS at rtol 1e-8; the angles rounded to the
study's encoder steps (``STEPS``: 1.92e-4 rad arm, 1.57e-3 rad pendulum).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import casadi as cs
import numpy as np
from scipy.signal import butter, sosfiltfilt

import acausal as ac
import learning as ln
from components import friction
from components import rotational as rot
from examples.two_mass_servo import network_friction
from solvers import simulate

TRUTH = {"furuta.I1": 0.26, "furuta.I2": 0.0223, "furuta.I3": 0.0149, "furuta.I4": 0.0222}
TRUTH["furuta.u_g"] = 0.556  # the study's hybrid estimates (Table 2) taken as the truth
SIDES = ("arm", "pendulum")
STEPS = {"arm": 1.92e-4, "pendulum": 1.57e-3}  # rad: the study's encoder resolutions
#: the truth's friction per joint: Coulomb, static (break-away), viscous, Stribeck speed
FRICTION = {
    "arm": {"coulomb": 0.15, "static": 0.25, "viscous": 0.05, "w_stribeck": 0.3},
    "pendulum": {"coulomb": 0.004, "static": 0.008, "viscous": 5e-4, "w_stribeck": 0.5},
}
RATE, DURATION, BETA0 = 1000.0, 5.0, 1.0
BAND, NOISE_AMPLITUDE, SINE_F, SINE_AMPLITUDE = 5.0, 1.0, 0.75, 1.5
INPUTS = {"drive.tau_constant": "u"}
START = {"furuta.I1": 1.3, "furuta.I2": 0.7, "furuta.I3": 1.2, "furuta.I4": 0.8}
START["furuta.u_g"] = 1.1  # x truth
HIDDEN = {"arm": 8, "pendulum": 3}  # tanh units of each friction network (the study's)
W_SMOOTH = 0.01  # rad/s: the baseline's Coulomb tanh(w / W_SMOOTH)
BASELINE = [f"{side}_{p}" for side in SIDES for p in ("coulomb.tau_coulomb", "viscous.d")]


def lagrange_equations(
    lagrangian: cs.SX, q: Sequence[cs.SX], w: Sequence[cs.SX], forces: Sequence[cs.SX]
) -> list[cs.SX]:
    """Lagrange's equations ``d/dt dL/dw_k - dL/dq_k == Q_k`` of the Lagrangian
    ``lagrangian`` in the coordinates ``q`` with speeds ``w = q'`` and generalized forces
    ``forces``, as equations of a component (``ac.der`` applies the chain rule)."""
    q, w = cs.vertcat(*q), cs.vertcat(*w)
    momenta, dq = cs.gradient(lagrangian, w), cs.gradient(lagrangian, q)
    return [ac.der(momenta[k]) - dq[k] == forces[k] for k in range(q.numel())]


class Furuta(ac.Component):
    """The Furuta pendulum (see the module docstring): flanges ``arm`` (angle ``alpha``) and
    ``pendulum`` (angle ``beta``, 0 upright), speeds ``w_arm``, ``w_pendulum`` and
    accelerations ``a_arm``, ``a_pendulum``; parameters ``I1 .. I4``, ``u_g``."""

    def __init__(
        self,
        name: str,
        inertias: Sequence[float] = (1.0, 1.0, 0.5, 1.0),
        u_g: float = 1.0,
        phi0: tuple[float, float] = (0.0, np.pi),
        w0: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        super().__init__(name)
        self.arm = self.connector("arm", ac.RotFlange)
        self.pendulum = self.connector("pendulum", ac.RotFlange)
        i1, i2, i3, i4 = (self.parameter(f"I{k + 1}", v) for k, v in enumerate(inertias))
        u_g = self.parameter("u_g", u_g)
        alpha = self.variable("alpha", start=phi0[0], fixed=True)
        beta = self.variable("beta", start=phi0[1], fixed=True)
        wa = self.variable("w_arm", start=w0[0], fixed=True)
        wb = self.variable("w_pendulum", start=w0[1], fixed=True)
        aa, ab = self.variable("a_arm"), self.variable("a_pendulum")
        s, c = ac.sin(beta), ac.cos(beta)
        kinetic = 0.5 * (i1 + i4 * s**2) * wa**2 + i3 * c * wa * wb + 0.5 * i2 * wb**2
        self.equations(
            alpha == self.arm.phi,
            beta == self.pendulum.phi,
            wa == ac.der(alpha),
            wb == ac.der(beta),
            aa == ac.der(wa),
            ab == ac.der(wb),
            *lagrange_equations(
                kinetic - u_g * c, (alpha, beta), (wa, wb), (self.arm.tau, self.pendulum.tau)
            ),
        )


class StribeckFriction(rot.PartialFrictionBetweenFlanges):
    """Stick/slip friction between the flanges: sliding, ``coulomb + (static - coulomb)
    exp(-|w_rel| / w_stribeck) + viscous |w_rel|`` against ``w_rel``; stuck (the library's
    modes and events) up to ``static`` either way."""

    def __init__(
        self,
        name: str,
        coulomb: float = 1.0,
        static: float = 1.5,
        viscous: float = 0.0,
        w_stribeck: float = 0.1,
    ) -> None:
        super().__init__(name)
        fc, fs = self.parameter("coulomb", coulomb), self.parameter("static", static)
        fv, ws = self.parameter("viscous", viscous), self.parameter("w_stribeck", w_stribeck)
        law = friction.stribeck(fc, fv, fs - fc, 1.0 / ws)
        fr = friction.modes(self, self.w_rel, self.sa, law, upper=fs)
        self.mode = fr.mode
        self.equations(
            self.a_rel == ac.if_else(fr.locked, 0.0, self.sa),
            self.tau == ac.if_else(fr.locked, self.sa, fr.sliding),
        )


def friction_torque(w: np.ndarray, side: str) -> np.ndarray:
    """The truth's friction torque of joint ``side`` when sliding at speed ``w``."""
    f = FRICTION[side]
    level = (
        f["coulomb"]
        + (f["static"] - f["coulomb"]) * np.exp(-np.abs(w) / f["w_stribeck"])
        + f["viscous"] * np.abs(w)
    )
    return np.sign(w) * level


def true_friction(side: str) -> list[ac.Component]:
    """The truth's friction of joint ``side``: :class:`StribeckFriction` with stick/slip."""
    return [StribeckFriction(f"{side}_friction", **FRICTION[side])]


def smooth_friction(side: str, w_smooth: float, scale: float = 1.0) -> list[ac.Component]:
    """The least-squares model's friction of ``side``: Coulomb ``F_c tanh(w / w_smooth)``
    plus viscous ``F_v w``, both the truth's ``coulomb``/``viscous`` times ``scale``."""
    f = FRICTION[side]
    return [
        rot.CoulombFriction(
            f"{side}_coulomb", tau_coulomb=scale * f["coulomb"], smooth=True, w_smooth=w_smooth
        ),
        rot.Damper(f"{side}_viscous", d=scale * f["viscous"]),
    ]


def pendulum_system(
    arm_friction: Sequence[ac.Component],
    pendulum_friction: Sequence[ac.Component],
    drive: object = None,
    values: Mapping[str, float] | None = None,
    phi0: tuple[float, float] = (0.0, np.pi),
) -> ac.System:
    """The Furuta pendulum with the given friction elements on each joint (``flange_a`` on
    the joint, ``flange_b`` on the housing), at rest at ``phi0``. ``drive``: the motor
    torque as samples ``(t, u)`` or, when None, the parameter ``drive.tau_constant`` (the
    input column of equation error). ``values``: ``furuta.I1 .. I4``, ``furuta.u_g``
    (default the truth)."""
    v = {**TRUTH, **(values or {})}
    s = ac.System("furuta_pendulum")
    furuta = Furuta("furuta", [v[f"furuta.I{k}"] for k in range(1, 5)], v["furuta.u_g"], phi0=phi0)
    source = (
        rot.ConstantTorque("drive", tau_constant=0.0)
        if drive is None
        else rot.Torque("drive", tau=drive)
    )
    housing = rot.Fixed("housing")
    s.connect(source.flange, furuta.arm, *(f.flange_a for f in arm_friction))
    if pendulum_friction:  # else the pendulum flange stays open: no torque on the joint
        s.connect(furuta.pendulum, *(f.flange_a for f in pendulum_friction))
    if arm_friction or pendulum_friction:
        s.connect(housing.flange, *(f.flange_b for f in (*arm_friction, *pendulum_friction)))
    return s


def torque(seed: int, samples: int) -> np.ndarray:
    """The motor torque on the sample grid (see the module docstring); ``seed`` draws the
    noise."""
    rng = np.random.default_rng(seed)
    margin = 2000  # samples cut from each end of the zero-phase filter's output
    sos = butter(4, BAND, fs=RATE, output="sos")
    noise = sosfiltfilt(sos, rng.standard_normal(samples + 2 * margin))[margin:-margin]
    t = np.arange(samples) / RATE
    return NOISE_AMPLITUDE * noise / np.std(noise) + SINE_AMPLITUDE * np.sin(2 * np.pi * SINE_F * t)


def measure(
    seed: int = 0,
    duration: float = DURATION,
    friction: Callable[[str], list[ac.Component]] = true_friction,
    beta0: float = BETA0,
    rtol: float = 1e-8,
) -> dict[str, np.ndarray]:
    """One synthetic experiment with the torque of ``seed``: ``"t"``, ``"u"``, the quantized
    angles ``"arm.phi"``, ``"pendulum.phi"``, and the truth's ``"true <side>.<q>"`` for the
    angle ``phi``, speed ``w`` and acceleration ``a`` of both joints. ``friction(side)``:
    the truth's friction elements (default :func:`true_friction`); ``beta0``: the
    pendulum's start angle (at rest); ``rtol``: IDAS's (``atol`` 100 times smaller). At
    rtol 1e-8 the angles are off by some 4e-6 rad, which moves a few dozen samples to the
    neighbouring encoder count, and which ones depends on the integrator's path."""
    n = int(round(duration * RATE))
    t = np.arange(n) / RATE
    u = torque(seed, n)
    res = simulate(
        pendulum_system(friction("arm"), friction("pendulum"), (t, u), phi0=(0.0, beta0)),
        grid=t,
        rtol=rtol,
        atol=rtol / 100,
    )
    out = {"t": t, "u": u}
    for side, angle in zip(SIDES, ("alpha", "beta")):
        phi = res[f"furuta.{angle}"]
        out[f"{side}.phi"] = np.round(phi / STEPS[side]) * STEPS[side]
        out[f"true {side}.phi"] = phi
        out[f"true {side}.w"] = res[f"furuta.w_{side}"]
        out[f"true {side}.a"] = res[f"furuta.a_{side}"]
    return out


def reconstructed(
    data: Mapping[str, np.ndarray], fraction: float = 1.0
) -> tuple[dict[str, np.ndarray], dict[str, ln.Reconstruction]]:
    """The equation-error record from the measured angles: the states of the models
    (``furuta.alpha``, ``furuta.beta``, ``furuta.w_arm``, ``furuta.w_pendulum``) and
    ``der(furuta.w_arm)``, ``der(furuta.w_pendulum)`` from :func:`learning.reconstruct`
    (window from the spectrum times ``fraction``), and ``"u"``; with the two
    reconstructions by side."""
    rec = {"t": data["t"], "u": data["u"]}
    parts = {}
    for side, angle in zip(SIDES, ("alpha", "beta")):
        r = ln.reconstruct(data["t"], data[f"{side}.phi"], step=STEPS[side], fraction=fraction)
        rec[f"furuta.{angle}"], rec[f"furuta.w_{side}"] = r.q, r.qd
        rec[f"der(furuta.w_{side})"] = r.qdd
        parts[side] = r
    return rec, parts


def exact(data: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The equation-error record from the truth's unquantized angles, speeds and
    accelerations."""
    rec = {"t": data["t"], "u": data["u"]}
    for side, angle in zip(SIDES, ("alpha", "beta")):
        rec[f"furuta.{angle}"] = data[f"true {side}.phi"]
        rec[f"furuta.w_{side}"] = data[f"true {side}.w"]
        rec[f"der(furuta.w_{side})"] = data[f"true {side}.a"]
    return rec


def speeds(rec: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The joint speeds of an equation-error record, by side."""
    return {side: np.asarray(rec[f"furuta.w_{side}"]) for side in SIDES}


def hybrid(
    speeds: Mapping[str, np.ndarray],
    hidden: Mapping[str, int] = HIDDEN,
    seed: int = 0,
    drive: object = None,
    values: Mapping[str, float] | None = None,
) -> tuple[ac.System, dict[str, ln.Unknown]]:
    """The hybrid model: :func:`pendulum_system` with a friction network on each joint
    (``two_mass_servo.network_friction``: ``hidden[side]`` tanh units on the joint's speed,
    standardized by ``speeds[side]``; the pendulum's seeded ``seed + 1``), and the networks
    by side. ``drive``, ``values``: as
    :func:`pendulum_system`."""
    nets = {
        side: network_friction(side, speeds[side], hidden[side], seed + k)
        for k, side in enumerate(SIDES)
    }
    return pendulum_system([nets["arm"]], [nets["pendulum"]], drive, values), nets


def start_values() -> dict[str, float]:
    """The fits' start for ``I1 .. I4, u_g``: the truth times :data:`START`."""
    return {k: TRUTH[k] * START[k] for k in TRUTH}


def fit_hybrid(
    rec: Mapping[str, np.ndarray], hidden: Mapping[str, int] = HIDDEN, seed: int = 0
) -> tuple[ln.FitResult, dict[str, ln.Unknown]]:
    """The hybrid model fitted by equation error to ``rec`` (as :func:`reconstructed`
    gives): ``I1 .. I4, u_g`` from :func:`start_values` together with the networks'
    weights; with the networks by side."""
    system, nets = hybrid(speeds(rec), hidden, seed, values=start_values())
    fit = ln.fit_equations(system, ln.Experiment(rec, inputs=INPUTS), physical=list(TRUTH))
    return fit, nets


def baseline_system(w_smooth: float = W_SMOOTH, scale: float = 1.0, **kw: object) -> ac.System:
    """The least-squares model: :func:`pendulum_system` with :func:`smooth_friction`
    (``w_smooth``, coefficients the truth's times ``scale``) on each joint; ``kw`` as
    :func:`pendulum_system`."""
    return pendulum_system(
        smooth_friction("arm", w_smooth, scale), smooth_friction("pendulum", w_smooth, scale), **kw
    )


def fit_baseline(rec: Mapping[str, np.ndarray], w_smooth: float = W_SMOOTH) -> ln.FitResult:
    """The least-squares baseline fitted by equation error to ``rec``: ``I1 .. I4, u_g``
    from :func:`start_values` and the four Coulomb and viscous coefficients from half the
    truth's."""
    system = baseline_system(w_smooth, 0.5, values=start_values())
    return ln.fit_equations(system, ln.Experiment(rec, inputs=INPUTS), physical=[*TRUTH, *BASELINE])


def network_curve(fit: ln.FitResult, net: ln.Unknown) -> Callable[[np.ndarray], np.ndarray]:
    """A learned friction network as a function of the joint speed."""
    return lambda w: net.curve("f", {"der(x)": np.asarray(w)}, fit.params)


def baseline_curve(
    params: Mapping[str, float], side: str, w_smooth: float = W_SMOOTH
) -> Callable[[np.ndarray], np.ndarray]:
    """The baseline's friction ``F_c tanh(w / w_smooth) + F_v w`` of ``side`` at
    ``params`` as a function of the joint speed."""
    fc, fv = params[f"{side}_coulomb.tau_coulomb"], params[f"{side}_viscous.d"]
    return lambda w: fc * np.tanh(np.asarray(w) / w_smooth) + fv * np.asarray(w)


def accelerations(
    params: Mapping[str, float],
    rec: Mapping[str, np.ndarray],
    friction: Mapping[str, Callable[[np.ndarray], np.ndarray]],
) -> dict[str, np.ndarray]:
    """The accelerations the model with ``params`` (``furuta.I1 .. u_g``) and the friction
    torques ``friction[side](w)`` gives at the states and torque of ``rec``, by side: the
    study's Eq. 24 solved for ``alpha'', beta''`` in closed form (numpy; independent of
    the compiled model)."""
    i1, i2, i3, i4, ug = (params[k] for k in TRUTH)
    beta, wa, wb = rec["furuta.beta"], rec["furuta.w_arm"], rec["furuta.w_pendulum"]
    s, c = np.sin(beta), np.cos(beta)
    m11, m12 = i1 + i4 * s**2, i3 * c
    q1 = rec["u"] - friction["arm"](wa) - 2 * i4 * s * c * wa * wb + i3 * s * wb**2
    q2 = -friction["pendulum"](wb) + i4 * s * c * wa**2 + ug * s
    det = m11 * i2 - m12**2
    return {"arm": (i2 * q1 - m12 * q2) / det, "pendulum": (m11 * q2 - m12 * q1) / det}


def sign_band(data: Mapping[str, np.ndarray], rec: Mapping[str, np.ndarray], side: str) -> float:
    """The speed band ``|w| < w_band`` of joint ``side`` in which the reconstruction ``rec``
    cannot tell the sign of the speed: the largest true ``|w|`` at which the reconstructed
    speed has the other sign."""
    w = data[f"true {side}.w"]
    wrong = np.sign(rec[f"furuta.w_{side}"]) != np.sign(w)
    return float(np.max(np.abs(w[wrong]), initial=0.0))


def curve_error(learned: np.ndarray, w: np.ndarray, side: str, band: float) -> float:
    """RMS of a friction curve ``learned`` (at speeds ``w``) minus the truth's, relative to
    the truth's range, over the speeds with ``|w| >= band``."""
    keep = np.abs(w) >= band
    truth = friction_torque(w[keep], side)
    return float(np.sqrt(np.mean((learned[keep] - truth) ** 2)) / np.ptp(truth))
