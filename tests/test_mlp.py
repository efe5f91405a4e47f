"""Explicit network laws (ln.MLP, ln.Sum): the network against a numpy re-implementation, the
standardization, the dissipative construction, simulation in Unknowns of three domains,
sensitivities against central differences, and a fit that recovers a linear damper."""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
import learning as ln
from acausal.errors import OptionError
from components import electrical as el
from components import rotational as rot
from components import translational as tr
from solvers import simulate

pytestmark = pytest.mark.filterwarnings("ignore:.*unconnected connectors")
TOL = dict(rtol=1e-10, atol=1e-12)
NUMPY_ACT = {
    "relu": lambda z: np.maximum(z, 0.0),
    "tanh": np.tanh,
    "softplus": lambda z: np.logaddexp(0.0, z),
    "sigmoid": lambda z: 1.0 / (1.0 + np.exp(-z)),
}


def numpy_network(weights, sizes, act, a):
    """The network from its weight table, in numpy: a is N x K (already standardized)."""
    z = a.T
    for l in range(1, len(sizes)):
        W = np.array(
            [[weights[f"W{l}_{j}_{k}"] for k in range(sizes[l - 1])] for j in range(sizes[l])]
        )
        b = np.array([weights[f"b{l}_{j}"] for j in range(sizes[l])])
        z = W @ (z if l == 1 else NUMPY_ACT[act](z)) + b[:, None]
    return z.ravel()


def numpy_law(law, theta, u):
    """``c NN((u - offset) / scale)`` (or the dissipative form) in numpy, u: N x K."""
    a = (u - np.array(law.offsets)) / np.array(law.scales)
    nn = numpy_network(law.weights(theta), law.sizes, law.activation, a)
    if law.dissipative is None:
        return law.output_scale * nn
    k = law.inputs.index(law.dissipative)
    return law.output_scale * u[:, k] / law.scales[k] * np.logaddexp(0.0, nn)


# -- the law on its own -------------------------------------------------------------------
@pytest.mark.parametrize("activation", ["relu", "tanh", "softplus", "sigmoid"])
def test_mlp_output_matches_numpy_network_for_random_weights(activation):
    law = ln.MLP(
        hidden=(5, 3),
        activation=activation,
        inputs=("x", "der(x)"),
        scales={"x": 0.5, "der(x)": 2.0},
        offsets=(0.1, -0.3),
        output_scale=4.0,
    )
    assert len(law.raw_names) == (5 * 2 + 5) + (3 * 5 + 3) + (1 * 3 + 1) == 37
    rng = np.random.default_rng(7)
    u = rng.uniform(-3.0, 3.0, (500, 2))
    worst = 0.0
    for _ in range(5):
        theta = rng.normal(0.0, 1.5, len(law.raw_names))
        ours = law.predict(u, theta)
        ref = numpy_law(law, theta, u)
        worst = max(worst, np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))
    assert worst < 1e-13  # measured: 5e-16 (relu) to 1.9e-15 (softplus) of max |eta|


def test_network_size_and_seeded_he_glorot_initialization():
    assert len(ln.MLP(hidden=(32,), inputs=("x", "der(x)")).raw_names) == 129  # the paper's
    assert np.array_equal(ln.MLP(seed=4).raw_init, ln.MLP(seed=4).raw_init)
    assert not np.array_equal(ln.MLP(seed=4).raw_init, ln.MLP(seed=5).raw_init)
    for activation, var in [
        ("relu", lambda fi, fo: 2 / fi),  # He
        ("softplus", lambda fi, fo: 2 / fi),
        ("tanh", lambda fi, fo: 2 / (fi + fo)),  # Glorot
        ("sigmoid", lambda fi, fo: 2 / (fi + fo)),
    ]:
        law = ln.MLP(hidden=(100, 60), activation=activation, inputs=("x", "der(x)"), seed=2)
        w = dict(zip(law.raw_names, law.raw_init))  # raw weights: w = theta
        for l, (fi, fo) in enumerate([(2, 100), (100, 60), (60, 1)], start=1):
            draws = np.array([w[f"theta_W{l}_{j}_{k}"] for j in range(fo) for k in range(fi)])
            std = np.sqrt(var(fi, fo))
            # the sample std of n normal draws has relative error ~ 1/sqrt(2n): allow 3 of them
            assert abs(np.std(draws) / std - 1) < 3 / np.sqrt(2 * draws.size)
            assert abs(np.mean(draws)) < 3 * std / np.sqrt(draws.size)
            assert all(w[f"theta_b{l}_{j}"] == 0.0 for j in range(fo))


def test_standardized_sets_offsets_and_scales_from_samples():
    rng = np.random.default_rng(3)
    d = rng.uniform(0.25, 0.35, 400)
    v = rng.normal(0.2, 1.5, 400)
    law = ln.MLP(hidden=(6,), activation="tanh", inputs=("x", "der(x)"))
    std = law.standardized({"x": d, "der(x)": np.append(v[:-1], np.nan), "f": d})
    assert std.offsets == pytest.approx((np.mean(d), np.mean(v[:-1])), rel=1e-15)
    assert std.scales == pytest.approx((np.std(d), np.std(v[:-1])), rel=1e-15)
    paper = law.standardized(np.column_stack([d, v]), center=False)  # Sigma q exactly
    assert paper.offsets == (0.0, 0.0) and paper.scales == pytest.approx((np.std(d), np.std(v)))
    assert law.scales == (1.0, 1.0) and law.offsets == (0.0, 0.0)  # the original is unchanged
    # the standardized law is the plain network on (u - mean) / std, with the same weights
    u = np.column_stack([d, v])
    a = (u - np.array(std.offsets)) / np.array(std.scales)
    theta = rng.normal(0.0, 1.0, len(law.raw_names))
    assert np.max(np.abs(std.predict(u, theta) - law.predict(a, theta))) < 1e-14
    # a Sum hands each part the scales of its own inputs
    s = ln.Sum(c=ln.MLP(inputs=("x",)), nc=ln.MLP(inputs=("x", "der(x)"))).standardized(
        {"x": d, "der(x)": v}
    )
    assert s.parts["c"].scales == pytest.approx((np.std(d),))
    assert s.parts["nc"].offsets == pytest.approx((np.mean(d), np.mean(v)))
    with pytest.raises(OptionError, match="no spread"):
        law.standardized({"x": d, "der(x)": np.ones(400)})


def test_dissipative_part_never_generates_power_for_any_weights():
    opts = dict(hidden=(16, 16), inputs=("x", "der(x)"), scales=(0.5, 2.0), output_scale=3.0)
    law = ln.MLP(**opts, dissipative="der(x)")
    plain = ln.MLP(**opts)  # the same network without the construction
    rng = np.random.default_rng(11)
    u = np.column_stack([rng.uniform(-5, 5, 10000), rng.uniform(-5, 5, 10000)])
    u[:200, 1] = 0.0  # at rest
    u[200:400, 1] = rng.choice([-1e-12, 1e-12], 200)  # just off rest
    worst, plain_worst = np.inf, np.inf
    for _ in range(20):
        theta = rng.normal(0.0, 1.0, len(law.raw_names))
        eta = law.predict(u, theta)
        # softplus(z) = log(1 + e^z) is exact to ~1e-16 absolute (not relative) for z << 0
        assert np.max(np.abs(eta - numpy_law(law, theta, u))) <= 1e-12 * (1 + np.max(np.abs(eta)))
        worst = min(worst, np.min(u[:, 1] * eta))
        plain_worst = min(plain_worst, np.min(u[:, 1] * plain.predict(u, theta)))
        assert np.all(eta[:200] == 0.0)
    assert worst >= 0.0  # measured: 0 (at rest), never negative
    assert plain_worst < -1.0  # without it the same weights generate power
    # smooth at rest: d eta / dv (x, 0) = c softplus(NN(a)) / scale_v, finite and positive
    x, th = cs.SX.sym("x"), cs.SX.sym("theta", len(law.raw_names))
    v = cs.SX.sym("v")
    deta = cs.Function("d", [x, v, th], [cs.jacobian(law.value([x, v], cs.vertsplit(th)), v)])
    theta = rng.normal(0.0, 3.0, len(law.raw_names))
    xs = np.linspace(-5, 5, 41)
    got = np.array([float(deta(xk, 0.0, theta)) for xk in xs])
    nn = plain.predict(np.column_stack([xs, 0 * xs]), theta) / 3.0
    assert np.max(np.abs(got - 3.0 * np.logaddexp(0.0, nn) / 2.0)) < 1e-12 * np.max(got)


# -- in Unknowns --------------------------------------------------------------------------
def mass_on_unknown(law, s0=0.8, v0=0.3):
    """A mass on a fixed point through an Unknown: m der(v) = -U.f."""
    s = ac.System("mass")
    m = tr.Mass("m", m=1.5, s0=s0, v0=v0)
    U = ln.Unknown("U", ac.Flange, law=law)
    F = tr.Fixed("F")
    s.connect(m.flange_a, U.flange_a)
    s.connect(U.flange_b, F.flange)
    return s, U


def random_params(unknown, seed, scale=0.8):
    rng = np.random.default_rng(seed)
    return {n: rng.normal(0.0, scale) for n in unknown.parameter_names()}


def test_mlp_force_on_a_mass_equals_numpy_network_of_simulated_motion():
    law = ln.MLP(hidden=(8, 8), activation="relu", inputs=("x", "der(x)"), scales=(0.5, 0.5))
    system, U = mass_on_unknown(law)
    params = random_params(U, 5)
    r = simulate(system, t_end=3.0, dt=0.01, params=params, **TOL)
    assert "m.s" in ac.compile(system).states
    theta = [params[n] for n in U.parameter_names()]
    ref = numpy_law(U.law, theta, np.column_stack([r["U.s"], r["der(U.s)"]]))
    assert np.ptp(r["U.s"]) > 0.1 and np.ptp(ref) > 0.1  # it moves, the force varies
    assert np.max(np.abs(r["U.f"] - ref)) < 1e-12  # measured: 3.4e-13 on a range of 1.3e3
    assert np.max(np.abs(1.5 * r["m.a"] + r["U.f"])) < 1e-12  # Newton: m a = -f


def test_mlp_in_electrical_and_rotational_unknowns():
    # a capacitor discharging through i = NN(v): domain tokens on a pin
    circuit = ac.System("rc")
    C = el.Capacitor("C", C=0.5, v0=2.0)
    R = ln.Unknown(
        "R",
        ac.Pin,
        law=ln.MLP(hidden=(4,), activation="softplus", inputs=("v",), output="i", seed=2),
    )
    G = el.Ground("G")
    circuit.connect(C.p, R.p)
    circuit.connect(C.n, R.n, G.p)
    r = simulate(circuit, t_end=1.0, dt=0.01, **TOL)
    ref = numpy_law(R.law, R.law.raw_init, r["R.v"][:, None])
    assert np.ptp(r["R.v"]) > 0.05 and np.max(np.abs(r["R.i"] - ref)) < 1e-12
    # an inertia on tau = NN(phi, der(phi)) to the ground
    drive = ac.System("drive")
    J = rot.Inertia("J", J=0.2, phi0=0.5, w0=-1.0)
    U = ln.Unknown(
        "U",
        ac.RotFlange,
        law=ln.MLP(hidden=(6,), activation="sigmoid", inputs=("phi", "der(phi)"), output="tau"),
    )
    F = rot.Fixed("F")
    drive.connect(J.flange_a, U.flange_a)
    drive.connect(U.flange_b, F.flange)
    r = simulate(drive, t_end=1.0, dt=0.01, **TOL)
    ref = numpy_law(U.law, U.law.raw_init, np.column_stack([r["U.phi"], r["der(U.phi)"]]))
    assert np.ptp(r["U.phi"]) > 0.1 and np.max(np.abs(r["U.tau"] - ref)) < 1e-12
    assert U.law.tokens == ("tau", "phi", "der(phi)") and U.law.labels == ("f", "x", "dx")


def test_sensitivities_to_weights_match_central_differences():
    law = ln.MLP(hidden=(5,), activation="tanh", inputs=("x", "der(x)"), seed=3)
    system, U = mass_on_unknown(law)
    model = ac.compile(system)
    params = random_params(U, 9)
    which = ["U.theta_W1_0_0", "U.theta_W1_3_1", "U.theta_b1_2", "U.theta_W2_0_4", "U.theta_b2_0"]
    r = simulate(model, t_end=2.0, dt=0.1, params=params, sensitivities=which, **TOL)
    h, worst = 1e-5, 0.0
    for name in which:
        up = simulate(model, t_end=2.0, dt=0.1, params={**params, name: params[name] + h}, **TOL)
        dn = simulate(model, t_end=2.0, dt=0.1, params={**params, name: params[name] - h}, **TOL)
        fd = (up["m.s"] - dn["m.s"]) / (2 * h)
        sens = r.sensitivity("m.s", name)
        assert np.max(np.abs(sens)) > 1e-3
        worst = max(worst, np.max(np.abs(sens - fd)) / np.max(np.abs(fd)))
    assert worst < 1e-5  # measured: 1.3e-8


def test_sum_of_conservative_and_dissipative_parts_along_a_trajectory():
    law = ln.Sum(
        c=ln.MLP(hidden=(32,), activation="tanh", inputs=("x",)),
        nc=ln.MLP(hidden=(32,), inputs=("x", "der(x)"), dissipative="der(x)", seed=1),
    )
    assert law.tokens == ("f", "x", "der(x)")
    assert len(law.raw_names) == 97 + 129 and law.raw_names[0] == "c_theta_W1_0_0"
    system, U = mass_on_unknown(law)
    params = random_params(U, 4, scale=0.3)
    model = ac.compile(system)
    r = simulate(model, t_end=3.0, dt=0.01, params=params, **TOL)
    parts = U.part_values(r)
    assert set(parts) == {"c", "nc"}
    assert np.max(np.abs(parts["c"] + parts["nc"] - r["U.f"])) < 1e-12
    theta = [params[n] for n in U.parameter_names()]
    raw = dict(zip(law.raw_names, theta))
    nc = law.parts["nc"]
    nc_ref = numpy_law(
        nc, [raw[f"nc_{n}"] for n in nc.raw_names], np.column_stack([r["U.s"], r["der(U.s)"]])
    )
    assert np.max(np.abs(parts["nc"] - nc_ref)) < 1e-12
    assert np.min(r["der(U.s)"] * parts["nc"]) >= 0.0
    # the same parts in the model's variables (x, z, p, t), as a training loss builds them
    exprs = U.part_expressions(model)
    fn = cs.Function("nc", [model.dae.x, model.dae.z, model.p, model.t], [exprs["nc"]])
    along = np.array([float(fn(r.x[:, k], r.z[:, k], r.p, r.t[k])) for k in range(len(r.t))])
    assert np.max(np.abs(along - parts["nc"])) < 1e-12
    penalty = 1e-6 * np.mean(parts["nc"] ** 2)  # the paper's c mean(eta_nc^2)
    assert penalty == pytest.approx(1e-6 * np.mean(nc_ref**2), rel=1e-12)


def test_explicit_law_errors_name_the_problem():
    with pytest.raises(OptionError, match="explicit law names its own"):
        ln.Unknown("U", ac.Flange, law=ln.MLP(inputs=("x",)), inputs=("f", "der(x)"))
    with pytest.raises(OptionError, match="must name one of the inputs"):
        ln.MLP(inputs=("x",), dissipative="der(x)")
    with pytest.raises(OptionError, match="different outputs"):
        ln.Sum(a=ln.MLP(inputs=("x",)), b=ln.MLP(inputs=("f",), output="x"))
    with pytest.raises(OptionError, match="implicit"):
        ln.Unknown("P", ac.Pin, law=ln.Polynomial()).part_expressions()


# -- learning -----------------------------------------------------------------------------
def oscillator(damper):
    """Mass on a known spring (c = 4) and a damper to a fixed point, released at s = 1."""
    s = ac.System("osc")
    m = tr.Mass("m", m=1.0, s0=1.0, v0=0.0)
    k = tr.Spring("k", c=4.0)
    F = tr.Fixed("F")
    s.connect(m.flange_a, k.flange_b, damper.flange_a)
    s.connect(k.flange_a, damper.flange_b, F.flange)
    return s


def test_fit_of_a_small_mlp_recovers_a_linear_damper():
    d = 0.8
    truth = simulate(oscillator(tr.Damper("D", d=d)), t_end=6.0, dt=0.05, **TOL)
    v = truth["m.v"]  # the damper's der(x) = der(s_a - s_b) with flange_a on the mass
    law = ln.MLP(hidden=(4,), activation="tanh", inputs=("der(x)",), seed=1)
    U = ln.Unknown("D", ac.Flange, law=law.standardized({"der(x)": v}))
    data = {"t": truth.t, "m.s": truth["m.s"]}
    fit = ln.fit(oscillator(U), data, method="least_squares", progress=False)
    theta = [fit.params[n] for n in U.parameter_names()]
    grid = np.linspace(v.min(), v.max(), 201)  # the visited speeds
    force = U.law.predict({"der(x)": grid}, theta)
    err = np.max(np.abs(force - d * grid)) / (d * np.ptp(grid))
    assert err < 1e-3  # measured: 1.4e-5 of the force's range (0.66 at the start)
    assert fit.loss < 1e-8  # measured: 5.9e-13 (sum of squares of m.s over 121 samples)
