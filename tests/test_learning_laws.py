"""Learning laws and unknown components: Propositions 4.1-4.4 on dense samples, and unknown
components against closed forms and the library's own components."""

import casadi as cs
import numpy as np
import pytest

import acausal as ac
import learning as ln
from components import electrical as el
from components import rotational as rot
from solvers import simulate

TOL = dict(rtol=1e-10, atol=1e-12)


def grid2(lo, hi, n):
    """All pairs of an n-point grid on [lo, hi] as a 2 x n^2 array (inputs f, x)."""
    a = np.linspace(lo, hi, n)
    F, X = np.meshgrid(a, a)
    return np.vstack([F.ravel(), X.ravel()])


_MAPS = {}


def mapped(law, n, derivatives=False):
    """law.function(derivatives) evaluated on n columns at once (cached per law)."""
    key = (id(law), n, derivatives)
    if key not in _MAPS:
        _MAPS[key] = (law, law.function(derivatives).map(n))
    return _MAPS[key][1]


def partials(law, theta, u):
    """dg/du at the columns of u (K x N) -> K x N."""
    fn = mapped(law, u.shape[1], derivatives=True)
    _, d = fn(u, np.tile(np.asarray(theta, float)[:, None], (1, u.shape[1])))
    return np.asarray(d).reshape(u.shape[1], u.shape[0]).T  # map puts the 1 x K rows side by side


def solve_flow(law, theta, x, lo=-1e3, hi=1e3, iters=64):
    """The flow f with g(f, x) = 0 for each x (g monotone in f), by vectorized bisection."""
    fn = mapped(law, x.size)
    th = np.tile(np.asarray(theta, float)[:, None], (1, x.size))
    lo, hi = np.full(x.size, lo), np.full(x.size, hi)
    g_lo = np.asarray(fn(np.vstack([lo, x]), th)).ravel()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        g_mid = np.asarray(fn(np.vstack([mid, x]), th)).ravel()
        same = np.sign(g_mid) == np.sign(g_lo)
        lo, g_lo = np.where(same, mid, lo), np.where(same, g_mid, g_lo)
        hi = np.where(same, hi, mid)
    return 0.5 * (lo + hi)


# -- Proposition 4.1: one-signed coefficient vectors keep dg/df, dg/dx away from zero -------
def test_prop_4_1_feasible_polynomial_partials_never_vanish():
    law = ln.Polynomial(order=3, constraint="feasible", signs=(1, -1))  # an active element
    rng = np.random.default_rng(41)
    u = grid2(-3.0, 3.0, 201)
    worst = np.inf
    for _ in range(20):
        theta = rng.normal(0.0, 3.0, len(law.raw_names))
        w = law.weights(theta)
        d = partials(law, theta, u)
        # g = g_f(f) - g_x(x), w_x < 0: dg/df = g_f'(f) >= w_f1, dg/dx = -g_x'(x) >= |w_x1|
        assert np.all(d[0] >= w["w_f1"] * (1 - 1e-12))
        assert np.all(d[1] >= -w["w_x1"] * (1 - 1e-12))
        assert w["w_x1"] <= -law.margin and w["w_x3"] < 0 and w["w_x5"] < 0
        worst = min(worst, np.min(np.abs(d)))
    assert worst >= law.margin  # measured: min |dg/du| = 1.0e-6 + softplus of the draws
    # without the constraint the same map is raw: w_x = (1, -3, 1) gives
    # g_x'(x) = 1 - 9 x^2 + 5 x^4, which vanishes at x = 0.35, 0.93 inside the box
    raw = ln.Polynomial(order=3, constraint=None)
    theta = [0.1, 0.1, 1.0, -3.0, 1.0]  # w_f3, w_f5, w_x1, w_x3, w_x5
    d = partials(raw, theta, u)
    assert np.min(d[1]) < 0 < np.max(d[1])  # dg/dx changes sign: infeasible points found
    assert np.min(np.abs(d[1])) < 1e-3 * np.max(np.abs(d[1]))


# -- Proposition 4.2: Type 1 dissipative, f_a x_a + f_b x_b >= 0 ----------------------------
def test_prop_4_2_type1_polynomial_is_dissipative_on_dense_samples():
    law = ln.Polynomial(order=3, constraint="dissipative")
    rng = np.random.default_rng(42)
    x = np.linspace(-4.0, 4.0, 2001)
    x_b = rng.uniform(-10, 10, x.size)
    worst = np.inf
    for _ in range(10):
        theta = rng.normal(0.0, 3.0, len(law.raw_names))
        f_a = solve_flow(law, theta, x)
        g = mapped(law, x.size)(np.vstack([f_a, x]), np.tile(theta[:, None], (1, x.size)))
        assert np.max(np.abs(np.asarray(g))) < 1e-8
        f_b, x_a = -f_a, x + x_b  # Type 1: f_a + f_b = 0, x = x_a - x_b
        power = f_a * x_a + f_b * x_b
        assert np.all(power >= 0.0)
        assert np.all(power[np.abs(x) > 1e-3] > 0.0)  # strictly, away from x = 0
        worst = min(worst, np.min(power))
    assert worst >= 0.0
    # raw weights with w_x1 < 0 (a negative resistor near 0) are not dissipative
    raw = ln.Polynomial(order=3, constraint=None)
    theta = np.array([0.1, 0.1, -1.0, 0.1, 0.1])
    f_a = solve_flow(raw, theta, x)
    assert np.min(f_a * x) < -0.1  # negative power found


def dissipative_rc(law, template=1):
    """Sine source -> unknown -> 1 F capacitor (template 1), or, for template 2, source ->
    1 ohm -> node carrying the unknown's p, its n through 1 ohm to a 1 F capacitor."""
    s = ac.System("circ")
    V, G = el.SineVoltage("V", V=3.0, f=0.3), el.Ground("G")
    Rx = ln.Unknown("Rx", ac.Pin, law=law, template=template)
    C = el.Capacitor("C", C=1.0, v0=0.0)
    if template == 1:
        s.connect(V.p, Rx.p)
        s.connect(Rx.n, C.p)
    else:
        R1, R2 = el.Resistor("R1", R=1.0), el.Resistor("R2", R=1.0)
        s.connect(V.p, R1.p)
        s.connect(R1.n, Rx.p)
        s.connect(Rx.n, R2.p)
        s.connect(R2.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s, Rx


def power_along(res, name="Rx"):
    return res[f"{name}.p.i"] * res[f"{name}.p.v"] + res[f"{name}.n.i"] * res[f"{name}.n.v"]


def test_prop_4_2_type1_unknown_is_dissipative_along_trajectories():
    s, Rx = dissipative_rc(ln.Polynomial(order=3, constraint="dissipative"))
    rng = np.random.default_rng(7)
    for _ in range(5):  # one compile, new raw parameters each run
        params = dict(zip(Rx.parameter_names(), rng.normal(0.0, 2.0, 5)))
        res = simulate(s, t_end=6.0, dt=0.01, params=params)
        assert np.min(power_along(res)) >= -1e-9
        assert np.max(np.abs(res["Rx.p.i"])) > 1e-2  # current does flow both ways
        assert np.min(res["Rx.i"]) < 0 < np.max(res["Rx.i"])


# -- Proposition 4.3: Type 2 dissipative, (f_a + f_b) x >= 0 --------------------------------
def test_prop_4_3_type2_polynomial_is_dissipative():
    law = ln.Polynomial(order=3, constraint="dissipative")
    rng = np.random.default_rng(43)
    x = np.linspace(-4.0, 4.0, 2001)
    for _ in range(10):
        theta = rng.normal(0.0, 3.0, len(law.raw_names))
        lost = solve_flow(law, theta, x)  # f = f_a + f_b, x = x_a = x_b
        f_a = rng.uniform(-5, 5, x.size)
        f_b = lost - f_a
        power = f_a * x + f_b * x
        assert np.all(power >= 0.0)
    # along trajectories of the Type 2 template in a circuit
    s, Rx = dissipative_rc(ln.Polynomial(order=3, constraint="dissipative"), template=2)
    for _ in range(3):
        params = dict(zip(Rx.parameter_names(), rng.normal(0.0, 2.0, 5)))
        res = simulate(s, t_end=6.0, dt=0.01, params=params)
        assert np.max(np.abs(res["Rx.p.v"] - res["Rx.n.v"])) < 1e-12  # x_a = x_b
        assert np.max(np.abs(res["Rx.i"] - res["Rx.p.i"] - res["Rx.n.i"])) < 1e-12
        assert np.min(power_along(res)) >= -1e-9
        assert np.min(res["Rx.i"]) < 0 < np.max(res["Rx.i"])
    # raw weights with w_x1 < 0: the Type 2 element delivers power
    raw = ln.Polynomial(order=3, constraint=None)
    s, Rx = dissipative_rc(raw, template=2)
    params = dict(zip(Rx.parameter_names(), [0.1, 0.1, -0.3, 0.0, 0.0]))
    res = simulate(s, t_end=6.0, dt=0.01, params=params)
    assert np.min(power_along(res)) < -0.1


# -- Proposition 4.4: sign-fixed NN weight products keep dg/du away from zero ---------------
@pytest.mark.parametrize("activation", ["tanh", "sigmoid"])
def test_prop_4_4_neural_net_partials_keep_their_sign(activation):
    law = ln.NeuralNet(hidden=(3, 2), activation=activation, constraint="feasible")
    rng = np.random.default_rng(44)
    u = grid2(-4.0, 4.0, 121)
    worst = np.inf
    for _ in range(10):
        theta = rng.normal(0.0, 1.0, len(law.raw_names))
        w = law.weights(theta)
        W1 = np.array([[w[f"W1_{j}_{k}"] for k in range(2)] for j in range(3)])
        W2 = np.array([[w[f"W2_{j}_{k}"] for k in range(3)] for j in range(2)])
        W3 = np.array([[w[f"W3_0_{k}"] for k in range(2)]])
        # every path product W3[a] W2[a, b] W1[b, k] has sign -1 (flow) / +1 (potential)
        prods = W3[0][:, None, None] * W2[:, :, None] * W1[None, :, :]
        assert np.all(prods[..., 0] < 0) and np.all(prods[..., 1] > 0)
        d = partials(law, theta, u)
        assert np.max(d[0]) < 0 < np.min(d[1])  # dg/df < 0 < dg/dx everywhere
        worst = min(worst, -np.max(d[0]), np.min(d[1]))
    # measured: min |dg/du| on [-4, 4]^2 is 7e-10 (tanh), 9e-6 (sigmoid): nonzero, but
    # small where neurons saturate (1 - tanh^2 is exactly 0 in floating point past |z| = 19)
    assert worst > 1e-10
    # unconstrained: the paper's resistor with w2 > 0 > w4 makes dg/di change sign
    raw = ln.NeuralNet.paper_resistor(constraint=None)
    bad = {"w1": 1.0, "w2": 2.0, "w3": 1.0, "w4": -1.0, "w5": 1.0, "w6": 1.0}
    theta = [bad.get(n[6:], 0.0) for n in raw.raw_names]
    d = partials(raw, theta, u)
    assert np.min(d[0]) < 0 < np.max(d[0])


def test_prop_4_4_min_partials_on_the_box_are_positive():
    """The measured margin: on [-4, 4]^2 the smallest |dg/du| of the seeded draws."""
    law = ln.NeuralNet(hidden=(2,), activation="tanh", constraint="feasible")
    u = grid2(-4.0, 4.0, 161)
    d = partials(law, law.raw_init, u)
    assert np.min(np.abs(d)) > 1e-3


# -- unknown components against closed forms ----------------------------------------------
def rc_with(one_port, C=0.5, V=1.0):
    s = ac.System("rc")
    src, cap, g = el.ConstantVoltage("V", V=V), el.Capacitor("C", C=C, v0=0.0), el.Ground("G")
    s.connect(src.p, one_port.p)
    s.connect(one_port.n, cap.p)
    s.connect(cap.n, src.n, g.p)
    return s


def test_linear_polynomial_unknown_is_a_resistor():
    R, C = 2.0, 0.5
    law = ln.Polynomial(order=1, constraint="dissipative", init={"x1": 1 / R})
    Rx = ln.Unknown("Rx", ac.Pin, law=law)  # i = w_x1 v with w_f1 = 1 fixed
    assert Rx.parameter_names() == ["Rx.theta_x1"]
    assert Rx.weights() == pytest.approx({"w_f1": 1.0, "w_x1": 1 / R}, rel=1e-12)
    s = rc_with(Rx, C=C)
    model = ac.compile(s)
    res = simulate(model, t_end=3.0, dt=0.01, **TOL, sensitivities=["Rx.theta_x1"])
    ref = simulate(rc_with(el.Resistor("Rx", R=R), C=C), t_end=3.0, dt=0.01, **TOL)
    exact = 1 - np.exp(-res.t / (R * C))
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-8
    assert np.max(np.abs(res["C.v"] - ref["C.v"])) < 1e-8
    assert np.max(np.abs(res["Rx.i"] - ref["Rx.i"])) < 1e-8
    # sensitivity to the raw parameter: dv/dtheta = (t / C) e^(-t G / C) sigmoid(theta)
    theta = Rx.initial_params()["Rx.theta_x1"]
    G = 1 / R
    dv = res.t / C * np.exp(-res.t * G / C) / (1 + np.exp(-theta))
    assert np.max(np.abs(res.sensitivity("C.v", "Rx.theta_x1") - dv)) < 1e-6
    # a new resistance through the raw parameter, without recompiling
    R2 = 5.0
    theta2 = ln.softplus_inv(1 / R2 - law.margin)
    res2 = simulate(model, t_end=3.0, dt=0.01, **TOL, params={"Rx.theta_x1": theta2})
    assert res2.model is res.model is model
    assert np.max(np.abs(res2["C.v"] - (1 - np.exp(-res2.t / (R2 * C))))) < 1e-8
    assert Rx.weights(res2.params)["w_x1"] == pytest.approx(1 / R2, rel=1e-12)


def test_known_law_is_a_resistor():
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.Known(lambda i, v, R: v == R * i, {"R": 2.0}))
    res = simulate(rc_with(Rx), t_end=3.0, dt=0.01, **TOL, params={"Rx.R": 4.0})
    assert np.max(np.abs(res["C.v"] - (1 - np.exp(-res.t / 2.0)))) < 1e-8


def test_paper_polynomial_resistor_form():
    law = ln.Polynomial.paper_resistor(init={"w1": 2.0, "w4": 3.0})
    assert law.raw_names == [f"theta_w{k}" for k in range(1, 6)]
    w = law.weights()
    assert w["w6"] == 1.0 and w["w1"] == pytest.approx(2.0) and w["w4"] == pytest.approx(3.0)
    i, v = cs.SX.sym("i"), cs.SX.sym("v")
    th = [cs.SX(t) for t in law.raw_init]
    g = cs.Function("g", [i, v], [law.residual([i, v], th)])
    i0, v0 = 0.7, -1.3  # w1 i + w2 i^3 + w3 i^5 - (w4 v + w5 v^3 + v^5)
    lhs = w["w1"] * i0 + w["w2"] * i0**3 + w["w3"] * i0**5
    rhs = w["w4"] * v0 + w["w5"] * v0**3 + v0**5
    assert float(g(i0, v0)) == pytest.approx(lhs - rhs, rel=1e-12)


def test_paper_nn_resistor_is_odd_and_monotone():
    rng = np.random.default_rng(5)
    law = ln.NeuralNet.paper_resistor()
    v = np.linspace(-3.0, 3.0, 601)
    for _ in range(10):
        theta = rng.normal(0.0, 1.5, len(law.raw_names))
        theta[[law.raw_names.index(f"theta_b{k}") for k in (1, 2, 3)]] = 0.0
        w = law.weights(theta)
        assert min(w["w1"], w["w3"], w["w5"], w["w6"]) > 0 > max(w["w2"], w["w4"])
        i = solve_flow(law, theta, v, lo=-1e4, hi=1e4)
        assert np.all(np.diff(i) > 0)  # monotone
        assert np.max(np.abs(i + i[::-1])) < 1e-9 * max(1.0, np.max(np.abs(i)))  # odd
    # in a circuit: the solver's Newton finds the same curve from g(i, v) = 0
    s = ac.System("nn")
    V, G = el.SineVoltage("V", V=3.0, f=0.5), el.Ground("G")
    Rx = ln.Unknown("Rx", ac.Pin, law=ln.NeuralNet.paper_resistor())
    s.connect(V.p, Rx.p)
    s.connect(Rx.n, V.n, G.p)
    res = simulate(s, t_end=2.0, dt=0.01, **TOL)
    order = np.argsort(res["Rx.v"])
    curve = solve_flow(Rx.law, Rx.law.raw_init, res["Rx.v"][order], lo=-1e4, hi=1e4)
    assert np.max(np.abs(res["Rx.i"][order] - curve)) < 1e-8
    assert np.all(np.diff(curve) >= 0) and curve[0] < 0 < curve[-1]


def test_unknown_capacitor_law_with_memory():
    """A Type 1 law on der(v): i = w v' is a capacitor; RC with a 2 ohm resistor."""
    law = ln.Polynomial(order=1, init={"dx1": 0.5})
    Cx = ln.Unknown("Cx", ac.Pin, law=law, inputs=("i", "der(v)"), x0=0.0)
    assert Cx.parameter_names() == ["Cx.theta_dx1"]
    s = ac.System("rc")
    V, R, G = el.ConstantVoltage("V", V=1.0), el.Resistor("R", R=2.0), el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, Cx.p)
    s.connect(Cx.n, V.n, G.p)
    res = simulate(s, t_end=3.0, dt=0.01, **TOL)
    assert np.max(np.abs(res["Cx.v"] - (1 - np.exp(-res.t / 1.0)))) < 1e-8


@pytest.mark.filterwarnings("ignore:.*unconnected connectors")
def test_type2_rotational_brake_with_memory():
    """Type 2 on a shaft: flow lost tau_a + tau_b = d w, w = der(phi): J w' = -d w."""
    J, d, w0 = 2.0, 0.5, 3.0
    law = ln.Polynomial(order=1, init={"dx1": d})
    brake = ln.Unknown("B", ac.RotFlange, law=law, template=2, inputs=("f", "der(x)"))
    shaft = rot.Inertia("J", J=J, phi0=0.0, w0=w0)
    s = ac.System("brake")
    s.connect(shaft.flange_b, brake.flange_a)
    res = simulate(s, t_end=4.0, dt=0.01, **TOL)
    assert np.max(np.abs(res["J.w"] - w0 * np.exp(-d * res.t / J))) < 1e-8
    assert np.max(np.abs(res["B.tau"] - d * res["J.w"])) < 1e-8
    assert np.max(np.abs(res["B.flange_b.tau"])) < 1e-12  # free flange carries nothing


@pytest.mark.filterwarnings("ignore:.*unconnected connectors")
def test_type3_gear_matches_ideal_gear():
    """G1: tau_a + tau_b / ratio = 0, G2: phi_a = ratio phi_b, as two linear laws."""
    ratio = 3.0
    g1 = ln.Polynomial(order=1, constraint="feasible", signs=(1, -1), init={"fb1": -1 / ratio})
    g2 = ln.Polynomial(order=1, constraint="feasible", init={"xb1": ratio})
    gear = ln.Unknown("gear", ac.RotFlange, law=(g1, g2), template=3)
    assert gear.parameter_names() == ["gear.g1_theta_fb1", "gear.g2_theta_xb1"]

    def drive(g):
        s = ac.System("drive")
        T = rot.ConstantTorque("T", tau_constant=2.0)
        J1, J2 = rot.Inertia("J1", J=0.5, phi0=0.0, w0=0.0), rot.Inertia("J2", J=4.0)
        s.connect(T.flange, J1.flange_a)
        s.connect(J1.flange_b, g.flange_a)
        s.connect(g.flange_b, J2.flange_a)
        return simulate(s, t_end=2.0, dt=0.01, **TOL)

    res, ref = drive(gear), drive(rot.IdealGear("gear", ratio=ratio))
    for name in ("J1.phi", "J2.w", "gear.flange_b.tau"):
        assert np.max(np.abs(res[name] - ref[name])) < 1e-8
    assert np.max(np.abs(res["J2.w"])) > 0.1
    assert gear.weights() == pytest.approx(
        {"g1_w_fa1": 1.0, "g1_w_fb1": -1 / ratio, "g2_w_xa1": 1.0, "g2_w_xb1": ratio}
    )


def test_bad_inputs_name_the_component():
    with pytest.raises(ac.ModelError, match="Rx.*'der\\(q\\)'"):
        ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=1), inputs=("i", "der(q)"))
    with pytest.raises(ac.ModelError, match="template 3 takes a pair"):
        ln.Unknown("Gx", ac.RotFlange, law=ln.Polynomial(order=1), template=3)
    with pytest.raises(ac.ModelError, match="dissipative.*signs"):
        ln.Polynomial(order=1, constraint="dissipative", signs=(1, -1))
    with pytest.raises(ac.ParameterError, match="w_x1"):
        ln.Polynomial(order=1, constraint="feasible", init={"x1": -1.0})


def test_type1_translational_damper_and_exp_transform():
    """Type 1 on ac.Flange with a law on der(x): f_a = d (v_a - v_b); m v' = -d v."""
    from components import translational as tr

    m, d, v0 = 2.0, 0.8, 1.5
    law = ln.Polynomial(order=1, transform="exp", init={"dx1": d})
    assert law.bound(("f", "dx")).raw_init == pytest.approx([np.log(d - law.margin)])
    Dx = ln.Unknown("Dx", ac.Flange, law=law, inputs=("f", "der(s)"))
    M, wall = tr.Mass("M", m=m, s0=0.0, v0=v0), tr.Fixed("wall")
    s = ac.System("md")
    s.connect(M.flange_b, Dx.flange_a)
    s.connect(Dx.flange_b, wall.flange)
    with pytest.warns(UserWarning, match="unconnected"):
        res = simulate(s, t_end=3.0, dt=0.01, **TOL)
    assert np.max(np.abs(res["M.v"] - v0 * np.exp(-d * res.t / m))) < 1e-8
    assert np.min(res["Dx.f"] * res["M.v"]) >= 0  # f_a (v_a - v_b) >= 0: dissipative
