"""Rollouts of compiled models and training through them (issue 11): the step map against
IDAS, gradients against central differences, parameters recovered from trajectories."""

import numpy as np
import pytest

import acausal as ac
from components import translational as tr
from examples.references.oscillator import C_TRUE, D_TRUE, INPUTS, diode_circuit, oscillator
from learning.evaluation import cross_validate, free_run_rmse
from learning.training import train
from learning.training.rollout import StepMap, Trajectory, predict
from learning.training.rollout_loss import RolloutLoss, Windows
from solvers import simulate

from .shared import trajectories

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")


def test_a_free_run_of_the_step_map_agrees_with_idas():
    (data,) = trajectories(freqs=(5.0,), dt=1e-3)
    model = ac.compile(oscillator())
    half = {k: v[::2] for k, v in data.items()}  # h = 2e-3
    errors = {}
    for scheme in ("rk4", "euler"):
        for name, d in (("h", data), ("2h", half)):
            pred = predict(model, d, INPUTS, scheme=scheme)
            errors[scheme, name] = np.max(np.abs(pred["m.s"] - d["m.s"]))
    # RK4 with the input held to first order (linear between samples): O(h^2) from the
    # input's interpolation (measured 3.7e-7 at h = 1e-3); explicit Euler: O(h)
    assert errors["rk4", "h"] < 1e-6
    assert 3.5 < errors["rk4", "2h"] / errors["rk4", "h"] < 4.5
    assert 1.8 < errors["euler", "2h"] / errors["euler", "h"] < 2.2
    assert errors["euler", "h"] > 100 * errors["rk4", "h"]
    # with no input at all the step map is RK4 on the model: O(h^4)
    free = simulate(oscillator(0.0), grid=data["t"], rtol=1e-12, atol=1e-14)
    still = {"t": free.t, "m.s": free["m.s"], "m.v": free["m.v"], "F": 0 * free.t}
    assert np.max(np.abs(predict(model, still, INPUTS)["m.s"] - free["m.s"])) < 1e-10


def test_rollout_gradient_through_a_newton_block_matches_central_differences():
    model = ac.compile(diode_circuit())
    assert model.dae.z.numel() >= 1  # the diode's block is solved by Newton
    t = np.arange(0, 0.2, 1e-3)
    res = simulate(model, grid=t, rtol=1e-12, atol=1e-14, params={"V.V": 1.5})
    data = {"t": t, "C.v": res["C.v"] * 1.01, "V": np.full(t.size, 1.5)}  # off the truth
    step = StepMap(model, 1e-3, ["V.V"])
    names = list(model.parameters)
    trained = [names.index(n) for n in ("R1.R", "R2.R", "D.Is")]
    p = np.asarray(model.parameter_vector(None), dtype=float)
    scales = np.abs(p[trained])
    loss = RolloutLoss(step, 20, trained, scales, np.ones((1, 1)))
    windows = Windows(step, [Trajectory(model, data, {"V.V": "V"})], 20, 7, p)
    index = np.arange(windows.count)
    q = p[trained] / scales * np.array([1.1, 0.9, 1.2])
    value, grad = loss(windows, index, q, p)
    for j in range(q.size):
        h = 1e-6
        up, down = q.copy(), q.copy()
        up[j] += h
        down[j] -= h
        fd = (loss(windows, index, up, p)[0] - loss(windows, index, down, p)[0]) / (2 * h)
        assert abs(grad[j] - fd) <= 1e-6 * max(abs(fd), 1e-3 * value), (j, grad[j], fd)
    # the residuals the least-squares polish uses make the same loss and gradient
    r, J = (a.full() for a in loss.jacobian(windows.count)(*windows.batch(index), q, p))
    assert float(np.sum(r**2)) == pytest.approx(value, rel=1e-12)
    assert np.allclose(2 * J.T @ r.ravel(), grad, rtol=1e-9, atol=1e-12 * np.abs(grad).max())
    # the windows on two threads: the same loss and gradient to rounding
    threaded = RolloutLoss(step, 20, trained, scales, np.ones((1, 1)), threads=2)
    value2, grad2 = threaded(windows, index, q, p)
    assert value2 == pytest.approx(value, rel=1e-13)
    assert np.allclose(grad2, grad, rtol=1e-12, atol=1e-15 * np.abs(grad).max())


@pytest.mark.parametrize("horizon", [1, 20])
def test_training_recovers_the_spring_and_the_damper(horizon):
    data = trajectories()
    model = ac.compile(oscillator(c=30.0, d=0.8))  # starts 25 % and 60 % off
    fit = train(
        model,
        data[:2],
        physical=["k.c", "d.d"],
        inputs=INPUTS,
        horizon=horizon,
        stride=max(1, horizon // 2),
        epochs=15,
        batch=128,
        lr=0.05,
        validation=data[2:],
        polish=True,
        progress=False,
    )
    assert fit.method == "rollout" and len(fit.loss_history) == 15
    assert abs(fit.params["k.c"] / C_TRUE - 1) < 1e-4  # measured 6e-7 (N = 1)
    assert abs(fit.params["d.d"] / D_TRUE - 1) < 1e-3  # measured 4e-5 (N = 1)
    # the fitted model's free run of the held-out trajectory, and IDAS on it, agree
    rmse = free_run_rmse(fit.model, data[2:], "m.v", INPUTS)[0]
    assert rmse < 1e-4 * np.ptp(data[2]["m.v"])


def test_a_least_squares_polish_finishes_what_two_epochs_of_adam_started():
    data = trajectories()
    model = ac.compile(oscillator(c=30.0, d=0.8))
    options = dict(physical=["k.c", "d.d"], inputs=INPUTS, horizon=10, stride=5, batch=64)
    rough = train(model, data[:2], epochs=2, lr=0.05, progress=False, **options)
    assert abs(rough.params["k.c"] / C_TRUE - 1) > 0.05  # Adam alone is far off
    fit = train(
        model, data[:2], epochs=2, lr=0.05, polish="least_squares", progress=False, **options
    )
    assert "then least squares" in fit.message
    assert abs(fit.params["k.c"] / C_TRUE - 1) < 1e-5  # measured 2e-6 (the input hold)
    assert abs(fit.params["d.d"] / D_TRUE - 1) < 1e-4  # measured 3e-5
    with pytest.raises(ac.OptionError, match="polish='newton' is not one of"):
        train(model, data[:2], polish="newton", progress=False, **options)


def test_bad_data_get_clear_errors():
    model = ac.compile(oscillator())
    (data,) = trajectories(freqs=(3.0,), t_end=0.1)
    with pytest.raises(ac.OptionError, match="compiler chose m.s, m.v"):
        train(
            model,
            [{"t": data["t"], "m.s": data["m.s"], "F": data["F"]}],
            physical=["k.c"],
            inputs=INPUTS,
            progress=False,
        )
    with pytest.raises(ac.OptionError, match="windows of 100 steps need 101 samples"):
        train(model, [data], physical=["k.c"], inputs=INPUTS, horizon=100, progress=False)
    with pytest.raises(ac.UnknownNameError):
        train(model, [data], physical=["nope.x"], inputs=INPUTS, progress=False)
    with pytest.raises(ac.OptionError, match="threads=0 must be an int >= 1"):
        train(model, [data], physical=["k.c"], inputs=INPUTS, threads=0, progress=False)
    sticky = oscillator()
    fixed = next(c for c in sticky.components if c.name == "fx")
    mass = next(c for c in sticky.components if c.name == "m")
    friction = tr.CoulombFriction("fr", f_coulomb=0.1, f_static=0.2)
    sticky.connect(mass.flange_b, friction.flange_b)
    sticky.connect(friction.flange_a, fixed.flange)
    with pytest.raises(ac.OptionError, match="discrete modes"):
        train(sticky, [data], physical=["k.c"], inputs=INPUTS, progress=False)


def test_leave_one_out_cross_validation_over_trajectories():
    data = trajectories()
    model = ac.compile(oscillator(c=30.0, d=0.8))
    cv = cross_validate(
        model,
        data,
        "m.v",
        inputs=INPUTS,
        physical=["k.c", "d.d"],
        epochs=10,
        batch=128,
        lr=0.05,
        polish=True,
        progress=False,
    )
    assert cv.held_out == ((0,), (1,), (2,))
    for fit in cv.fits:  # each fold finds the truth from the other two trajectories
        assert abs(fit.params["k.c"] / C_TRUE - 1) < 1e-4
    assert max(e for fold in cv.rmse for e in fold) < 1e-4 * np.ptp(data[2]["m.v"])
    assert "fold 3: #2:" in str(cv)


def test_an_l2_penalty_sends_the_spring_to_the_conservative_part():
    """A spring and a damper learned as ``Sum(c=MLP(x), nc=MLP(x, v))``: the split is not
    unique (nc can carry c x too); ``c mean(nc^2)`` leaves nc only what c cannot carry."""
    import learning as ln

    data = trajectories()
    s = ac.System("split")
    m = tr.Mass("m", m=1.0, s0=0.1, v0=0.0)
    law = ln.Sum(
        c=ln.MLP((8,), "tanh", inputs=("x",), seed=1),
        nc=ln.MLP((8,), "tanh", inputs=("x", "der(x)"), seed=2),
    )
    u = ln.Unknown("U", ac.Flange, law)
    push, fixed = tr.ConstantForce("F", f_constant=0.0), tr.Fixed("fx")
    s.connect(push.flange, m.flange_a)
    s.connect(m.flange_b, u.flange_a)
    s.connect(u.flange_b, fixed.flange)
    model = ac.compile(s)
    x = np.concatenate([d["m.s"] for d in data[:2]])
    v = np.concatenate([d["m.v"] for d in data[:2]])
    weights = [n for n in model.parameters if n.startswith("U.")]
    spring = {}
    for c in (0.0, 1e-2):
        nc = u.part_expressions(model)["nc"]
        fit = ln.train(
            model,
            data[:2],
            fitted=weights,
            inputs=INPUTS,
            epochs=40,
            batch=256,
            lr=0.02,
            progress=False,
            penalties=[(nc, c)] if c else (),
        )
        theta = [fit.params[n] for n in u.parameter_names()]
        spring[c] = law.predict({"x": x, "der(x)": v}, theta=theta, part="c")
    # the conservative part against the spring's C_TRUE x (relative RMS over the data)
    err = {
        c: np.sqrt(np.mean((f - C_TRUE * x) ** 2)) / np.ptp(C_TRUE * x) for c, f in spring.items()
    }
    # measured 0.0036 with the penalty, 0.12 without
    assert err[1e-2] < 0.02 and err[1e-2] < err[0.0] / 10, err
