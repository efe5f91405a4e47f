"""The compiled model as a discrete-time map at the data's sample time, and rollouts of it.

A compiled :class:`~acausal.Model` is the semi-explicit DAE ``x' = f(x, z, p, t)``,
``0 = g(x, z, p, t)`` whose algebraic unknowns ``z`` are the Newton blocks of its BLT plan
(explicit and linear blocks are already solved symbolically inside ``f``). Its states'
derivative as a function of the states alone is

    F(x, p, t) = f(x, z(x, p, t), p, t),   g(x, z(x, p, t), p, t) = 0,

with ``z`` from CasADi's Newton rootfinder, differentiated by the implicit function theorem
(``dz/dx = -g_z^-1 g_x``). One step of length ``h`` from ``x_k`` is explicit Euler
``x_{k+1} = x_k + h F(x_k, p_k, t_k)`` (the paper's; zero-order hold of the inputs) or the
classical Runge-Kutta scheme (``"rk4"``, four evaluations of ``F``, the inputs held to first
order: ``u_k``, ``(u_k + u_{k+1}) / 2``, ``u_{k+1}`` at its stages). ``p_k`` is the model's
parameter vector with the measured inputs in the entries of the input parameters (a
``ConstantTorque``'s ``tau_constant`` set to the sampled torque). A rollout of
``N`` steps is the step's ``mapaccum``; windows and trajectories are its ``map``: one call
evaluates a mini-batch, and CasADi's reverse mode gives the gradient of a loss over it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

import casadi as cs
import numpy as np

import acausal as ac
from acausal.errors import OptionError, unknown_name
from solvers import DAEFunctions, z_start_values

from ..core import Experiment, as_records, check_time, finite_column, numeric

SCHEMES = ("euler", "rk4")


def check_smooth(model: ac.Model) -> None:
    """Rollouts step smooth models: one with discrete modes (events) is refused."""
    if model.dae.modes:
        raise OptionError(
            f"rollout: {model.name} has discrete modes ({', '.join(model.flat.discretes)}); "
            "rollouts step smooth models only: use a smooth variant of the component (e.g. "
            "regularized friction) or fit by simulation (method='least_squares')"
        )


def state_derivative(model: ac.Model, functions: DAEFunctions) -> cs.Function:
    """``(x, z guess, p, t) -> (x', z)``: the states' derivative ``f(x, z(x), p, t)`` with
    the Newton unknowns ``z`` solved from the guess (none when the plan has no Newton block)."""
    m = model
    ode = cs.Function("ode", [m.dae.x, m.dae.z, m.p, m.t], [m.dae.ode])
    x, guess = cs.MX.sym("x", m.dae.x.numel()), cs.MX.sym("z_guess", m.dae.z.numel())
    p, t = cs.MX.sym("p", m.p.numel()), cs.MX.sym("t")
    z = functions.algebraic_solver("z_of_x")(guess, x, p, t) if guess.numel() else guess
    return cs.Function("state_derivative", [x, guess, p, t], [ode(x, z, p, t), z])


def with_inputs(p: cs.MX, positions: Sequence[int], u: cs.MX) -> cs.MX:
    """The parameter vector ``p`` with entry ``positions[j]`` replaced by ``u[j]`` (the
    measured inputs, held in parameters)."""
    out = cs.MX(p)
    for j, k in enumerate(positions):
        out[k] = u[j]
    return out


def newton_along(
    model: ac.Model,
    functions: DAEFunctions,
    X: np.ndarray,
    U: np.ndarray,
    t: np.ndarray,
    positions: Sequence[int],
    p: np.ndarray,
    first: cs.Function | None = None,
) -> np.ndarray:
    """The Newton unknowns ``z`` at the samples (columns) of states ``X``, inputs ``U``
    (rows: the parameters at ``positions``) and times ``t``, each solved from the previous
    sample's (the first from the model's start values, ``first = z_start_values(model)``
    unless given): a mechanism stays on its branch."""
    nz = model.dae.z.numel()
    out = np.empty((nz, len(t)))
    if not nz:
        return out
    solve = functions.algebraic_solver("z_of_x")
    pk, at = np.array(p, dtype=float), list(positions)
    pk[at] = U[:, 0]
    z = (first or z_start_values(model))(pk).full().ravel()
    for k in range(len(t)):
        pk[at] = U[:, k]
        z = solve(z, X[:, k], pk, t[k]).full().ravel()
        out[:, k] = z
    return out


class StepMap:
    """One step ``(x_{k+1}, z_k) = step((x_k, z_{k-1}), u_k, t_k, p)`` of ``model`` at sample
    time ``h``: the accumulated state carries the Newton unknowns ``z`` as the next solve's
    guess (a mechanism's angles must start near the branch it is on; the derivatives do
    not depend on the guess).

    ``inputs``: the model's parameters set from measured inputs at each step (their order
    is the order of ``u``); ``p`` is the full parameter vector (the input entries of it are
    overwritten by ``u``)."""

    def __init__(
        self, model: ac.Model, h: float, inputs: Sequence[str] = (), scheme: str = "rk4"
    ) -> None:
        if scheme not in SCHEMES:
            raise OptionError(f"rollout: scheme={scheme!r} is not one of {SCHEMES}")
        if not (np.isfinite(h) and h > 0):
            raise OptionError(f"rollout: the sample time h = {h!r} must be positive")
        check_smooth(model)
        names = list(model.parameters)
        for n in inputs:
            if n not in model.parameters:
                raise unknown_name("input parameter", n, names)
        self.model, self.h, self.scheme = model, float(h), scheme
        self.inputs = list(inputs)
        self.positions = [names.index(n) for n in self.inputs]
        self.nx, self.nz = model.dae.x.numel(), model.dae.z.numel()
        self.functions = DAEFunctions(model)
        self.z_guesses = z_start_values(model)
        xz = cs.MX.sym("xz", self.nx + self.nz)
        nu = len(self.inputs)
        u = cs.MX.sym("u", 2 * nu)  # the inputs at t_k and t_{k+1}
        t = cs.MX.sym("t")
        p = cs.MX.sym("p", model.p.numel())

        middle = (u[:nu] + u[nu:]) / 2
        held = [with_inputs(p, self.positions, v) for v in (u[:nu], middle, u[nu:])]
        self.step = cs.Function(
            "step", [xz, u, t, p], [self._advance(xz, held, t)], ["xz", "u", "t", "p"], ["xz_next"]
        )
        self._rollouts: dict[int, cs.Function] = {}

    def _advance(self, xz: cs.MX, held: list[cs.MX], t: cs.MX) -> cs.MX:
        """``[x_{k+1}; z(x_k)]`` by the scheme, each stage's ``z`` solved from the guess;
        ``held``: the parameters with the inputs at ``t_k``, ``t_k + h/2`` (their mean:
        first-order hold) and ``t_{k+1}``."""
        x, guess = xz[: self.nx], xz[self.nx :]
        derivative = state_derivative(self.model, self.functions)

        def F(xs: cs.MX, ts: cs.MX, p: cs.MX) -> tuple[cs.MX, cs.MX]:
            xdot, z = derivative(xs, guess, p, ts)
            return xdot, z

        h = self.h
        k1, z = F(x, t, held[0])
        if self.scheme == "euler":
            return cs.vertcat(x + h * k1, z)
        k2 = F(x + h / 2 * k1, t + h / 2, held[1])[0]
        k3 = F(x + h / 2 * k2, t + h / 2, held[1])[0]
        k4 = F(x + h * k3, t + h, held[2])[0]
        return cs.vertcat(x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), z)

    def rollout(self, steps: int) -> cs.Function:
        """``(xz0, U, T, p) -> XZ``: ``steps`` steps from ``xz0 = [x0; z guess]`` with inputs
        ``U`` (column ``k``: ``[u_k; u_{k+1}]``) at times ``T`` (1 x steps); ``XZ`` holds
        ``[x_1; z_0] .. [x_steps; z_{steps-1}]`` as columns."""
        if steps not in self._rollouts:
            self._rollouts[steps] = self.step.mapaccum(steps)
        return self._rollouts[steps]

    def starts(self, X: np.ndarray, U: np.ndarray, t: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``[x_k; z_k]`` for windows starting at the measured states ``X`` (columns), inputs
        ``U`` and times ``t``: each ``z_k`` solved (outside any gradient) by Newton on
        ``g(z, x_k, p_k, t_k) = 0`` from the model's start values at ``p_k`` as guesses, every
        column on its own (one mapped call over the columns)."""
        X = np.asarray(X, dtype=float)
        if not self.nz:
            return X
        count = len(t)
        P = np.repeat(np.asarray(p, dtype=float)[:, None], count, axis=1)
        P[self.positions] = U
        solve = self.functions.algebraic_solver("z_of_x").map(count)
        Z = solve(self.z_guesses.map(count)(P), X, P, np.asarray(t, dtype=float)[None, :])
        return np.vstack([X, Z.full()])


class Trajectory:
    """A measured trajectory: sample times ``t`` (uniform), the model's states (every one,
    by name, one row each) and the measured inputs (one row per input parameter)."""

    def __init__(
        self,
        model: ac.Model,
        data: Mapping[str, object],
        inputs: Mapping[str, str],
    ) -> None:
        check_smooth(model)
        if "t" not in data:
            raise OptionError("rollout: a trajectory's data need the sample times as 't'")
        t = numeric("t", data["t"], None, "time", "rollout")
        check_time(t, "t", "rollout")
        h = np.diff(t)
        if np.max(np.abs(h - h[0])) > 1e-9 * max(1.0, abs(t[-1])):
            raise OptionError("rollout: the samples must be uniform in time (one sample time)")
        self.t, self.h = t, float(h[0])
        chosen = list(model.states)
        keys = [model.measured_name(data, s) for s in chosen]
        missing = [" = ".join(model.names_of(s)) for s, k in zip(chosen, keys) if k is None]
        if missing:
            raise OptionError(
                f"rollout: the data measure no {', '.join(missing)}; a rollout starts each "
                f"window from measured states, and the compiler chose {', '.join(chosen)} "
                "as the states (give those, or set state_priority / fixed starts so that "
                "the measured variables become the states)"
            )

        def column(name: str) -> np.ndarray:
            return finite_column(name, data[name], t.size, "rollout", t)

        self.x = np.vstack([column(k) for k in keys])
        absent = [(p, col) for p, col in inputs.items() if col not in data]
        if absent:
            p, col = absent[0]
            have = [c for c in data if c != "t"]
            close = difflib.get_close_matches(col, have, n=3, cutoff=0.5)
            hint = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
            raise OptionError(
                f"rollout: inputs={{{p!r}: {col!r}}} reads the column {col!r}, which the data "
                f"do not have{hint}; they have {', '.join(map(repr, have))}"
            )
        self.u = (
            np.vstack([column(col) for col in inputs.values()]) if inputs else np.zeros((0, t.size))
        )

    def pairs(self, k: int, steps: int) -> np.ndarray:
        """The inputs of steps ``k .. k+steps-1`` as the step map takes them: column ``i``
        is ``[u_{k+i}; u_{k+i+1}]``."""
        return np.vstack([self.u[:, k : k + steps], self.u[:, k + 1 : k + steps + 1]])

    def windows(self, horizon: int, stride: int = 1) -> list[int]:
        """Start indices of the windows ``k, k+1, .., k+horizon`` inside the trajectory."""
        if horizon >= self.t.size:
            raise OptionError(
                f"rollout: windows of {horizon} steps need {horizon + 1} samples; a trajectory "
                f"has {self.t.size}"
            )
        return list(range(0, self.t.size - horizon, stride))


def predict(
    model: ac.Model | ac.System,
    data: Experiment | Mapping[str, object],
    inputs: Mapping[str, str] | None = None,
    params: Mapping[str, float] | None = None,
    scheme: str = "rk4",
) -> dict[str, np.ndarray]:
    """Free-run prediction of a whole trajectory by the step map from its first measured
    state: ``{"t": t, state: values, ...}``, each state under each of its names
    (``model.names_of``: ``joint.w`` and ``der(joint.phi)``); ``params`` override the
    model's values. ``model``: a compiled model or a system (compiled here). ``data``: one
    :class:`~learning.Experiment` (its ``inputs`` and ``params`` drive the parameters at
    each step) or a dict with the columns named in ``inputs`` (``{parameter: column}``)."""
    if isinstance(model, ac.System):
        model = ac.compile(model)
    elif not isinstance(model, ac.Model):
        raise OptionError(
            f"predict: model is a {type(model).__name__}; give an ac.System or a compiled "
            "ac.Model, e.g. ln.predict(fit.model, experiment)"
        )
    if isinstance(data, Mapping):
        inputs = dict(inputs or {})
    else:
        if isinstance(data, Sequence) and not isinstance(data, str):
            raise OptionError(
                "predict: data holds several experiments; predict one at a time: "
                "[ln.predict(model, e) for e in experiments]"
            )
        records, inputs, _ = as_records(data, model, inputs, "predict", "data")
        data = records[0]
    traj = Trajectory(model, data, inputs)
    step = StepMap(model, traj.h, list(inputs), scheme)
    p = np.asarray(model.parameter_vector(params), dtype=float)
    n = traj.t.size - 1
    xz0 = step.starts(traj.x[:, :1], traj.u[:, :1], traj.t[:1], p)
    X = step.rollout(n)(xz0, traj.pairs(0, n), traj.t[None, :n], p).full()[: step.nx]
    X = np.hstack([traj.x[:, :1], X])
    named = {n: X[k] for k, s in enumerate(model.states) for n in model.names_of(s)}
    return {"t": traj.t, **named}
