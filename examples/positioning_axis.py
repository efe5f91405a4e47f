"""A closed-loop positioning axis: builders and the synthetic measurements.

A carriage of mass ``m`` on a guide with viscous friction ``d v`` and Coulomb friction
``F_c sign(v)``, pushed by a constant force offset ``F_0`` (a cable chain, a tilt) and by
the actuator force ``F`` of a cascaded position / velocity controller that follows a
reference ``s_r(t)`` with its velocity ``v_r(t)`` fed forward:

    m v' = F + F_0 - d v - F_c sign(v)
    F = k_v (v_c - v) + k_i x_i,   x_i' = v_c - v,   v_c = v_r + k_p (s_r - s)

(P position loop, PI velocity loop), written as the user-defined component
:class:`Controller` with a flange on the carriage. The truth: ``m = 4 kg``, ``d = 12 N s/m``,
``F_c = 3 N``, ``F_0 = 1 N``; gains ``k_p = 50 1/s``, ``k_v = 800 N s/m``, ``k_i = 4e4
N/m`` (velocity loop about 30 Hz).

Decisions:

* the truth's Coulomb friction is the library's event-driven stick/slip
  :class:`~components.translational.CoulombFriction` (``f_static = f_coulomb``): in the
  dwells the carriage sticks (5 % of the time) while the integrator winds until it breaks
  away, which IDAS simulates through its events (a 10 s record in about 1 s). Events with
  the controller are no problem, so the truth is not smoothed. Equation error needs a
  smooth model and gets ``F_c tanh(v / V_SMOOTH)`` (:func:`smooth_friction`), used only
  where ``|v| > V_MIN`` (there it is ``F_c sign(v)`` to 4e-9); output error and the
  validation simulations use the stick/slip law (:func:`stick_slip_friction`), the
  truth's structure: a smooth law creeps where the carriage sticks and misses the
  encoder by micrometres whatever its values;
* the controller is continuous and reads the carriage's true position and speed (a fast
  digital controller's limit): the controller as part of a fitted model is then exactly
  the truth's; the encoder quantizes only what is logged. The logged actuator force is
  the controller's output at the samples (exact, as a drive's current loop reports it);
* the reference is a sequence of point-to-point moves, each a quintic (minimum-jerk)
  polynomial from rest to rest, with dwells between them; it is a piecewise polynomial
  in ``ac.time`` (coefficients switched at the segment boundaries, as ``ac.spline`` does),
  so IDAS steps across a dwell in a few steps; the moves' lengths, durations and dwells
  are drawn from a seed (training: seed 0, validation: seed 1 with other ranges).

Measurements: ``RATE`` Hz for ``DURATION`` s; IDAS at rtol 1e-8; the position rounded to
the encoder step ``STEP`` (1 um); the actuator force as the controller computed it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import casadi as cs
import numpy as np
from scipy.integrate import cumulative_trapezoid

import acausal as ac
import learning as ln
from components import translational as tr
from learning.optimization import Uncertainty, from_jacobian
from solvers import simulate

MASS, VISCOUS, COULOMB, OFFSET = 4.0, 12.0, 3.0, 1.0
GAINS = {"kp": 50.0, "kv": 800.0, "ki": 4.0e4}
RATE, DURATION, STEP = 1000.0, 10.0, 1e-6
V_SMOOTH = 1e-3  # m/s: equation error's Coulomb tanh(v / V_SMOOTH)
TRUTH = {
    "carriage.m": MASS,
    "viscous.d": VISCOUS,
    "coulomb.f_coulomb": COULOMB,
    "offset.f_constant": OFFSET,
}
START = {"carriage.m": 1.3, "viscous.d": 0.7, "coulomb.f_coulomb": 0.6}  # x truth
START_OFFSET = 0.0  # N: the fits' start for the offset
V_MIN = 0.01  # m/s: equation error uses the samples with |v| above
MIN_PIECE = 20  # samples: shorter pieces above V_MIN are left out of equation error
MARGIN = 5  # samples of the logged force kept either side of a move (output error, a)
INPUTS = {"actuator.f_constant": "force"}  # equation error: the logged force as an input
MOVES = {  # the reference's moves: ranges of length (m), duration (s) and dwell (s)
    0: {"length": (0.01, 0.15), "duration": (0.2, 1.5), "dwell": (0.1, 0.5)},
    1: {"length": (0.005, 0.2), "duration": (0.3, 2.0), "dwell": (0.05, 0.3)},
}


@dataclass(frozen=True)
class Reference:
    """A sequence of quintic rest-to-rest moves: segment ``k`` runs from ``starts[k]`` to
    ``starts[k+1]`` (the last to infinity) from ``positions[k]``; ``lengths[k]`` (0 for a
    dwell) covered in ``durations[k]``."""

    starts: np.ndarray
    positions: np.ndarray
    lengths: np.ndarray
    durations: np.ndarray

    def _segment(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        k = np.clip(np.searchsorted(self.starts, t, side="right") - 1, 0, len(self.starts) - 1)
        tau = np.clip((t - self.starts[k]) / self.durations[k], 0.0, 1.0)
        return k, tau

    def position(self, t: np.ndarray) -> np.ndarray:
        """``s_r(t)``."""
        k, tau = self._segment(np.asarray(t, dtype=float))
        return self.positions[k] + self.lengths[k] * tau**3 * (10 - 15 * tau + 6 * tau**2)

    def velocity(self, t: np.ndarray) -> np.ndarray:
        """``v_r(t)``."""
        k, tau = self._segment(np.asarray(t, dtype=float))
        return self.lengths[k] / self.durations[k] * 30 * tau**2 * (1 - tau) ** 2

    def signals(self) -> tuple[cs.SX, cs.SX]:
        """``s_r`` and ``v_r`` as expressions of ``ac.time``: the segment's coefficients
        switched at the segment starts (``casadi.pw_const``)."""
        breaks = cs.DM(self.starts[1:])

        def table(values: np.ndarray) -> cs.SX:
            return cs.pw_const(ac.time, breaks, cs.DM(values))

        t0, s0, ds, T = (
            table(v) for v in (self.starts, self.positions, self.lengths, self.durations)
        )
        tau = cs.fmin(cs.fmax((ac.time - t0) / T, 0.0), 1.0)
        s = s0 + ds * tau**3 * (10 - 15 * tau + 6 * tau**2)
        v = ds / T * 30 * tau**2 * (1 - tau) ** 2
        return s, v


def reference(seed: int, duration: float = DURATION) -> Reference:
    """Moves drawn from ``seed`` (ranges :data:`MOVES` of that seed, else seed 0's) filling
    ``duration`` s: a first dwell of 0.2 s, then moves and dwells alternating; each move's
    length, duration and the dwell after it uniform in their ranges, its direction random
    while the position is within 0.1 m of 0, else back towards 0."""
    ranges = MOVES.get(seed, MOVES[0])
    rng = np.random.default_rng(seed)
    starts, positions, lengths, durations = [0.0], [0.0], [0.0], [0.2]
    s = 0.0
    while starts[-1] + durations[-1] < duration:
        t = starts[-1] + durations[-1]
        if lengths[-1] == 0.0:
            step = rng.uniform(*ranges["length"])
            sign = -np.sign(s) if abs(s) > 0.1 else rng.choice([-1.0, 1.0])
            length, T = sign * step, rng.uniform(*ranges["duration"])
        else:
            length, T = 0.0, rng.uniform(*ranges["dwell"])
        starts.append(t)
        positions.append(s)
        lengths.append(length)
        durations.append(T)
        s += length
    return Reference(*(np.array(v) for v in (starts, positions, lengths, durations)))


class Controller(ac.Component):
    """A cascaded position / velocity controller acting on ``flange`` (the force ``f`` pushes
    it in the positive direction): ``v_c = v_r + kp (s_r - s)`` (P), ``f = kv (v_c - v) + ki
    x_i`` with ``x_i' = v_c - v`` (PI), ``s``, ``v`` the flange's position and speed.
    ``s_ref``, ``v_ref``: signals (numbers, expressions of ``ac.time`` or samples ``(t,
    y)``); ``xi0``: the integrator's start."""

    def __init__(
        self,
        name: str,
        s_ref: object,
        v_ref: object,
        kp: float = GAINS["kp"],
        kv: float = GAINS["kv"],
        ki: float = GAINS["ki"],
        xi0: float = 0.0,
    ) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        kp, kv, ki = (self.parameter(n, v) for n, v in (("kp", kp), ("kv", kv), ("ki", ki)))
        self.v = self.variable("v")
        self.e = self.variable("e")
        self.x_i = self.variable("x_i", start=self.initial("xi0", xi0), fixed=True)
        self.f = self.variable("f")
        s_r = ac.signal(s_ref, f"{self.full_name}.s_ref")
        v_r = ac.signal(v_ref, f"{self.full_name}.v_ref")
        self.equations(
            self.v == ac.der(self.flange.s),
            self.e == v_r + kp * (s_r - self.flange.s) - self.v,
            ac.der(self.x_i) == self.e,
            self.f == kv * self.e + ki * self.x_i,
            self.flange.f == -self.f,
        )


def stick_slip_friction(values: dict[str, float] | None = None) -> list[ac.Component]:
    """The truth's guide: Coulomb friction with stick/slip events and viscous friction
    (default the truth's values; ``values`` by parameter name)."""
    v = {**TRUTH, **(values or {})}
    return [
        tr.CoulombFriction("coulomb", f_coulomb=v["coulomb.f_coulomb"]),
        tr.Damper("viscous", d=v["viscous.d"]),
    ]


def smooth_friction(values: dict[str, float] | None = None) -> list[ac.Component]:
    """The equation-error model's guide: ``F_c tanh(v / V_SMOOTH) + d v`` (default the
    truth's values; ``values`` by parameter name)."""
    v = {**TRUTH, **(values or {})}
    return [
        tr.CoulombFriction(
            "coulomb", f_coulomb=v["coulomb.f_coulomb"], smooth=True, v_smooth=V_SMOOTH
        ),
        tr.Damper("viscous", d=v["viscous.d"]),
    ]


def axis(
    friction: Sequence[ac.Component],
    drive: object = None,
    values: dict[str, float] | None = None,
    s0: float = 0.0,
    v0: float = 0.0,
) -> ac.System:
    """The carriage (starting at ``s0`` with speed ``v0``) on the guide ``friction`` (each
    element with ``flange_a`` on the carriage, ``flange_b`` on the frame) with the offset
    force, driven by ``drive``: a :class:`Reference` (the :class:`Controller` closes the
    loop: the controller is part of the system), samples ``(t, force)`` or an expression of
    ``ac.time`` (the logged actuator force, no controller), or None (the parameter
    ``actuator.f_constant``: the input column of equation error). ``values``: mass and
    offset by parameter name (default the truth's)."""
    v = {**TRUTH, **(values or {})}
    s = ac.System("positioning_axis")
    carriage = tr.Mass("carriage", m=v["carriage.m"], s0=s0, v0=v0)
    offset = tr.ConstantForce("offset", f_constant=v["offset.f_constant"])
    if isinstance(drive, Reference):
        source = Controller("controller", *drive.signals())
    elif drive is None:
        source = tr.ConstantForce("actuator", f_constant=0.0)
    else:
        source = tr.Force("actuator", f=drive)
    frame = tr.Fixed("frame")
    s.connect(carriage.flange_a, source.flange, offset.flange)
    s.connect(carriage.flange_b, *(f.flange_a for f in friction))
    s.connect(frame.flange, *(f.flange_b for f in friction))
    return s


def start_values() -> dict[str, float]:
    """The fits' start: the truth times :data:`START`, the offset at ``START_OFFSET``."""
    return {**{k: TRUTH[k] * START[k] for k in START}, "offset.f_constant": START_OFFSET}


def measure(
    seed: int = 0,
    duration: float = DURATION,
    friction: Callable[[], list[ac.Component]] = stick_slip_friction,
) -> dict[str, np.ndarray]:
    """One synthetic closed-loop experiment following the reference of ``seed``: ``"t"``,
    the quantized position ``"carriage.s"``, the logged actuator ``"force"``, the reference
    ``"s_ref"``, ``"v_ref"``, and the truth's ``"true carriage.<s, v, a>"`` (for errors and
    plots). ``friction()``: the truth's guide (default :func:`stick_slip_friction`)."""
    n = int(round(duration * RATE))
    t = np.arange(n) / RATE
    ref = reference(seed, duration)
    res = simulate(axis(friction(), ref), grid=t, rtol=1e-8, atol=1e-10)
    out = {
        "t": t,
        "carriage.s": np.round(res["carriage.s"] / STEP) * STEP,
        "force": res["controller.f"],
        "s_ref": ref.position(t),
        "v_ref": ref.velocity(t),
    }
    for q in ("s", "v", "a"):
        out[f"true carriage.{q}"] = res[f"carriage.{q}"]
    return out


def reconstructed(
    data: dict[str, np.ndarray], fraction: float = 1.0
) -> tuple[dict[str, np.ndarray], ln.Reconstruction]:
    """The equation-error record from the encoder: ``carriage.s``, ``carriage.v``,
    ``der(carriage.v)`` from :func:`learning.reconstruct` (window from the spectrum times
    ``fraction``) and the logged ``"force"``; with the reconstruction."""
    r = ln.reconstruct(data["t"], data["carriage.s"], step=STEP, fraction=fraction)
    rec = {"t": data["t"], "force": data["force"]}
    rec["carriage.s"], rec["carriage.v"], rec["der(carriage.v)"] = r.q, r.qd, r.qdd
    return rec, r


def integrator_state(data: Mapping[str, np.ndarray], kp: float = GAINS["kp"]) -> np.ndarray:
    """The controller's integrator ``x_i`` along a record, from the encoder and the
    reference (a drive that does not log it): ``x_i = x_i(0) + e_s - e_s(0) + kp int e_s
    dt`` with ``e_s = s_r - s``, since ``x_i' = v_r - v + kp e_s`` (start ``x_i(0) = 0``)."""
    e = data["s_ref"] - data["carriage.s"]
    return e - e[0] + kp * cumulative_trapezoid(e, data["t"], initial=0.0)


def moving(rec: Mapping[str, np.ndarray], v_min: float = V_MIN) -> list[dict[str, np.ndarray]]:
    """The pieces of the record ``rec`` (at least ``MIN_PIECE`` samples each) in which the
    reconstructed speed ``|carriage.v|`` exceeds ``v_min``: equation error's records."""
    keep = np.abs(rec["carriage.v"]) > v_min
    edges = np.flatnonzero(np.diff(np.r_[0, keep.astype(int), 0]))
    return [
        {k: np.asarray(v)[a:b] for k, v in rec.items()}
        for a, b in zip(edges[::2], edges[1::2])
        if b - a >= MIN_PIECE
    ]


def fit_equation_error(
    rec: Mapping[str, np.ndarray],
    ref: Reference | None = None,
    data: Mapping[str, np.ndarray] | None = None,
    v_min: float = V_MIN,
) -> ln.FitResult:
    """Mass, viscous, Coulomb and offset by equation error on the reconstruction ``rec``
    (as :func:`reconstructed` gives) where the speed exceeds ``v_min`` (:func:`moving`),
    from :func:`start_values`, with :func:`smooth_friction`. Without ``ref``: the logged
    force drives the model (option a, the controller left out); with ``ref`` (and the
    measurement ``data`` it was logged from): the controller is part of the model (option
    b), the record completed by its integrator (:func:`integrator_state`)."""
    x0 = start_values()
    if ref is None:
        system, inputs, full = axis(smooth_friction(x0), None, x0), INPUTS, dict(rec)
    else:
        if data is None:
            raise ValueError("fit_equation_error: the controller's record needs data= too")
        system, inputs = axis(smooth_friction(x0), ref, x0), {}
        full = {**rec, "controller.x_i": integrator_state(data)}
        del full["force"]  # the controller computes the force: the logged one is not used
    pieces = [ln.Experiment(piece, inputs=inputs) for piece in moving(full, v_min)]
    return ln.fit_equations(system, pieces, physical=list(TRUTH))


def moves(
    data: Mapping[str, np.ndarray], rec: Mapping[str, np.ndarray], ref: Reference
) -> list[tuple[float, float, float, float]]:
    """The reference's moves as ``(start time, end time, s0, v0)``: the encoder's position
    and the reconstructed speed at the move's first sample."""
    out = []
    t = data["t"]
    for start, length, duration in zip(ref.starts, ref.lengths, ref.durations):
        k = int(np.searchsorted(t, start))
        if length != 0.0 and start + duration <= t[-1]:
            out.append((t[k], start + duration, data["carriage.s"][k], rec["carriage.v"][k]))
    return out


def open_loop_experiments(
    data: Mapping[str, np.ndarray],
    rec: Mapping[str, np.ndarray],
    ref: Reference,
    values: dict[str, float],
) -> tuple[list[tuple[ac.System, ln.Experiment]], list[float]]:
    """Option a for output error: one experiment per move (:func:`moves`), the model with
    :func:`stick_slip_friction` (``values``) driven by the logged force (its samples over the
    move and ``MARGIN`` samples either side: a long table costs every evaluation its
    length), starting at the encoder's position with the reconstructed speed; the
    experiments and their start times."""
    t, force = data["t"], data["force"]
    exps, starts = [], []
    for t0, t1, s0, v0 in moves(data, rec, ref):
        k0, k1 = int(np.searchsorted(t, t0)), int(np.searchsorted(t, t1, side="right"))
        a, b = max(k0 - MARGIN, 0), min(k1 + MARGIN, t.size)
        system = axis(stick_slip_friction(values), (t[a:b], force[a:b]), values, s0=s0, v0=v0)
        position = {"t": t[k0:k1], "carriage.s": data["carriage.s"][k0:k1]}
        exps.append((system, ln.Experiment(position)))
        starts.append(float(t[k0]))
    return exps, starts


def closed_loop_experiment(
    data: Mapping[str, np.ndarray], ref: Reference, values: dict[str, float]
) -> tuple[ac.System, ln.Experiment]:
    """Option b for output error: the model with :func:`stick_slip_friction` (``values``)
    and the controller, driven by the reference, against the whole encoder record."""
    system = axis(stick_slip_friction(values), ref, values)
    return system, ln.Experiment(data, measured=["carriage.s"])


def fit_output_error(
    experiments: Sequence[tuple[ac.System, ln.Experiment]],
    starts: Sequence[float] | float = 0.0,
    x0: Mapping[str, float] | None = None,
) -> tuple[ln.FitResult, Uncertainty]:
    """Mass, viscous, Coulomb and offset by output error (``ln.fit``, least squares through
    IDAS with sensitivities) on ``experiments`` simulated from ``starts``, from ``x0``
    (e.g. the equation-error fit's); with the standard errors at the result
    (:func:`standard_errors`)."""
    fit = ln.fit(
        None,
        None,
        experiments=list(experiments),
        t_start=starts,
        physical=list(TRUTH),
        x0=dict(x0 or start_values()),
        progress=False,
    )
    return fit, standard_errors(fit, experiments, starts)


def standard_errors(
    fit: ln.FitResult,
    experiments: Sequence[tuple[ac.System, ln.Experiment]],
    starts: Sequence[float] | float = 0.0,
) -> Uncertainty:
    """Standard errors of an output-error ``fit`` (``ln.fit`` does not give them): the
    positions' sensitivities to the parameters at the result (IDAS, the fit's tolerances)
    as the Jacobian of the residuals, taken as independent with one variance (the
    encoder's rounding)."""
    names = list(TRUTH)
    starts = list(starts) if isinstance(starts, Sequence) else [starts] * len(experiments)
    rs, Js = [], []
    for k, (_, meas) in enumerate(experiments):
        res = simulate(
            fit.models[k],
            grid=meas["t"],
            t_start=starts[k],
            rtol=fit.rtol,
            atol=fit.atol,
            sensitivities=names,
        )
        rs.append(res["carriage.s"] - meas["carriage.s"])
        Js.append(np.column_stack([res.sensitivity("carriage.s", n) for n in names]))
    return from_jacobian(names, [fit.params[n] for n in names], np.concatenate(rs), np.vstack(Js))


def closed_loop_positions(
    values: Mapping[str, float],
    check: Mapping[str, np.ndarray],
    ref: Reference,
    friction: Callable[[dict[str, float]], list[ac.Component]] = stick_slip_friction,
) -> np.ndarray:
    """The validation simulation: the model with ``values`` and the guide ``friction`` under
    the controller following ``ref``, its position at the samples of ``check`` (IDAS at
    rtol 1e-8)."""
    v = {k: float(values[k]) for k in TRUTH}
    res = simulate(axis(friction(v), ref, v), grid=check["t"], rtol=1e-8, atol=1e-10)
    return res["carriage.s"]
