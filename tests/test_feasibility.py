"""check_feasibility: Proposition 3.1, dissipativity, BLT block Jacobians and the small-capacitor
device, each finding asserted against a closed form or a second computation."""

import casadi as cs
import numpy as np
import pytest
import sympy as sp

import acausal as ac
import learning as ln
from components import electrical as el
from components import rotational as rot
from examples.cauer_filter import build
from learning.cli import main_check
from learning.feasibility.constitutive import constitutive
from learning.feasibility.sympy_bridge import real_zeros, sign_of, to_sympy
from solvers import simulate

ROOT3 = 1 / np.sqrt(3)


class Cubic(el.OnePort):
    """A user's non-monotone resistor v = i^3 - i (a negative slope for |i| < 1/sqrt 3)."""

    def __init__(self, name):
        super().__init__(name)
        self.equations(self.v == self.i**3 - self.i)


def rc(resistor, V=1.0, f=0.5):
    """Sine source -> resistor -> 1 F capacitor."""
    s = ac.System("rc")
    src, gnd = el.SineVoltage("V", V=V, f=f), el.Ground("G")
    cap = el.Capacitor("C", C=1.0, v0=0.0)
    s.connect(src.p, resistor.p)
    s.connect(resistor.n, cap.p)
    s.connect(cap.n, src.n, gnd.p)
    return s


def series(a, b):
    """Sine source (3 V, 0.2 Hz) -> a -> b -> 1 F capacitor."""
    s = ac.System("series")
    src, gnd = el.SineVoltage("V", V=3.0, f=0.2), el.Ground("G")
    cap = el.Capacitor("C", C=1.0, v0=0.0)
    s.connect(src.p, a.p)
    s.connect(a.n, b.p)
    s.connect(b.n, cap.p)
    s.connect(cap.n, src.n, gnd.p)
    return s


def one(findings, check):
    (f,) = [f for f in findings if f.check == check]
    return f


# -- a negative resistor: Proposition 3.1 holds, dissipativity does not ----------------------
def test_negative_resistor_in_rc_is_flagged_as_not_dissipative():
    with pytest.warns(ac.ParameterWarning, match="R1.R = -1"):  # and warned when made
        s = rc(el.Resistor("R1", R=-1.0))
    report = ln.check_feasibility(s, t_end=3.0, dt=0.01)
    assert not report.ok
    assert {f.component for f in report.errors} == {"R1"}
    r1 = report["R1"]
    assert r1.template == 1 and r1.law == "-R*i + v = 0"
    # Prop 3.1: dg/di = -R = 1 and dg/dv = 1 never vanish, proven symbolically
    partials = {f.data["partial"]: f for f in r1.by_check("prop3.1")}
    assert partials["dg/di"].severity == "ok" and partials["dg/di"].data["expr"] == "1"
    assert partials["dg/dv"].severity == "ok" and partials["dg/dv"].data["expr"] == "1"
    diss = one(r1.findings, "dissipativity")
    assert diss.severity == "error"
    assert diss.data["power"] == "-i**2"  # i v = R i^2 with R = -1
    assert diss.data["negative_where"] == {"i": "(-oo, 0) U (0, oo)"}
    # the power along the trajectory is R i^2 < 0: the same as a plain simulation gives
    res = simulate(s, t_end=3.0, dt=0.01)
    assert diss.data["min_power"] == pytest.approx(-np.max(res["R1.i"] ** 2), rel=1e-6)
    assert diss.data["min_power"] < -1.0  # measured -37.1: the circuit is unstable (RC = -1)
    # the capacitor stores energy: no dissipativity asked; its partials are 1 and -C
    assert report["C"].ok
    assert one(report["C"].findings, "dissipativity").severity == "info"
    assert "not dissipative" in str(report)
    # the same resistor with R = 2 passes
    good = ln.check_feasibility(rc(el.Resistor("R1", R=2.0)), t_end=3.0, dt=0.01)
    assert good.ok
    assert one(good["R1"].findings, "dissipativity").data["power"] == "2*i**2"


# -- two non-monotone resistors in series: the loop's determinant vanishes ------------------
@pytest.fixture(scope="module")
def cubic_series():
    return ln.check_feasibility(series(Cubic("R1"), Cubic("R2")), t_end=5.0)


def test_cubic_resistors_violate_prop_3_1_at_the_closed_form_roots(cubic_series):
    for name in ("R1", "R2"):
        comp = cubic_series[name]
        assert comp.law == "i**3 - i - v = 0"
        partials = {f.data["partial"]: f for f in comp.by_check("prop3.1")}
        di = partials["dg/di"]
        assert di.severity == "error" and di.data["expr"] == "3*i**2 - 1"
        assert di.data["zeros"]["i"] == pytest.approx([-ROOT3, ROOT3], abs=1e-12)
        assert partials["dg/dv"].severity == "ok"
        # i v = i^4 - i^2 < 0 for 0 < |i| < 1: an active region
        diss = one(comp.findings, "dissipativity")
        assert diss.severity == "error"
        assert diss.data["negative_where"] == {"i": "(-1, 0) U (0, 1)"}
        assert diss.data["min_power"] < 0


def test_cubic_series_block_determinant_and_where_it_vanishes(cubic_series):
    loops = [b for b in cubic_series.blocks if len(b.equations) > 1]
    assert len(loops) == 1
    block = loops[0]
    assert block.components == ["R1", "R2"]
    # det J = +-2 (3 i^2 - 1) with i the loop current (R1.i, R2.i, V.i are one variable,
    # named by the representative alias elimination keeps: here R1.i)
    (current,) = block.zeros
    assert current in {"R1.i", "R2.i", "V.i"}
    assert block.determinant in (f"2*(3*{current}**2 - 1)", f"-2*(3*{current}**2 - 1)")
    assert block.zeros[current] == pytest.approx([-ROOT3, ROOT3], abs=1e-12)
    assert block.finding.severity == "error"
    # both laws carry the deficient combination equally (identical components)
    assert set(block.shares) >= {"R1", "R2"}
    assert block.shares["R1"] == pytest.approx(block.shares["R2"], rel=0.05)
    # the simulation fails at the fold: the trajectory before it approaches i = -1/sqrt 3
    sim = one(cubic_series.findings, "simulation")
    assert sim.severity == "error" and "failed at t = 0.19" in sim.message
    res = cubic_series.result
    assert res.t[-1] < 0.2
    i_end = res["R1.i"][-1]
    assert i_end == pytest.approx(-ROOT3, abs=0.1)  # measured -0.53
    jac_det = 2 * (3 * i_end**2 - 1)  # closed form at the last point
    assert block.sigma_min <= abs(jac_det)  # smallest singular value <= |det| here (n=4)
    text = str(cubic_series)
    assert f"(3*{current}**2 - 1) vanishes at {current} = -0.5774, 0.5774" in text


def test_small_capacitors_do_not_rescue_a_law_that_violates_prop_3_1():
    report = ln.check_feasibility(series(Cubic("R1"), Cubic("R2")), t_end=5.0, small_capacitor=1e-6)
    setup = [f for f in report.findings if f.check == "setup" and "inserted" in f.message]
    assert "C_eps_R1_n (C = 1e-06) at R1.n" in setup[0].message
    # no loop left: each resistor is its own scalar Newton block, still singular at 1/sqrt 3
    assert all(len(b.equations) == 1 for b in report.blocks)
    singular = {b.components[0]: b for b in report.blocks if b.finding.severity == "error"}
    assert set(singular) == {"R1", "R2"}
    for b in singular.values():
        (zeros,) = b.zeros.values()
        assert zeros == pytest.approx([-ROOT3, ROOT3], abs=1e-12)
    assert not report["R1"].ok


# -- the positive case: a constrained Unknown in the Cauer filter ----------------------------
def cauer_with_unknown(law):
    """The Cauer low-pass filter with its input resistor replaced by an Unknown, driven by a
    6 V sine that sends current both ways."""
    unknown = ln.Unknown("Rx", ac.Pin, law=law)
    return build(source=el.SineVoltage("V", V=6.0, f=0.1), r1=unknown)


def test_dissipative_polynomial_unknown_in_the_cauer_filter_is_ok():
    s = cauer_with_unknown(ln.Polynomial(order=3, constraint="dissipative"))
    report = ln.check_feasibility(s, t_end=20.0, dt=0.02)
    assert report.ok, str(report)
    rx = report["Rx"]
    assert rx.law == "i**5*w_f5 + i**3*w_f3 + i - v**5*w_x5 - v**3*w_x3 - v*w_x1 = 0"
    partials = {f.data["partial"]: f for f in rx.by_check("prop3.1")}
    # proven for every weight the reparameterization allows, not only the current ones
    assert partials["dg/di"].data["expr"] == "5*i**4*w_f5 + 3*i**2*w_f3 + 1"
    assert partials["dg/dv"].data["expr"] == "-5*v**4*w_x5 - 3*v**2*w_x3 - w_x1"
    assert all("Prop 4.1, 4.2" in f.message for f in partials.values())
    diss = one(rx.findings, "dissipativity")
    assert diss.severity == "ok" and "Prop 4.2" in diss.message
    # the power along the trajectory, recomputed from a plain simulation
    res = simulate(s, t_end=20.0, dt=0.02)
    power = res["Rx.i"] * res["Rx.v"]
    assert np.min(res["Rx.i"]) < -0.1 < 0.1 < np.max(res["Rx.i"])  # both ways
    assert diss.data["min_power"] == pytest.approx(np.min(power), abs=1e-12)
    assert diss.data["min_power"] >= -1e-12
    # the unknown is a scalar Newton block whose derivative never vanishes
    (block,) = [b for b in report.blocks if b.components == ["Rx"]]
    assert block.finding.severity == "ok" and "never vanishes" in block.finding.message
    assert block.sigma_min >= 1.0  # |dg/di| = 1 + 3 w_f3 i^2 + 5 w_f5 i^4 >= 1


def test_paper_neural_resistor_is_proven_feasible_for_all_weights():
    law = ln.NeuralNet.paper_resistor()
    report = ln.check_feasibility(rc(ln.Unknown("Rx", ac.Pin, law=law), V=3.0), t_end=3.0)
    partials = {f.data["partial"]: f for f in report["Rx"].by_check("prop3.1")}
    assert "every weight its constraint allows (Prop 4.4" in partials["dg/di"].message
    assert "< 0" in partials["dg/di"].message and "> 0" in partials["dg/dv"].message
    assert "sech" in partials["dg/di"].data["expr"]
    # second method: random raw weights and inputs keep the claimed signs
    rng = np.random.default_rng(44)
    fn = law.bound(("f", "x")).function(derivatives=True).map(2000)
    for _ in range(5):
        theta = rng.normal(0.0, 2.0, len(law.raw_names))
        u = rng.uniform(-3.0, 3.0, (2, 2000))
        _, d = fn(u, np.tile(theta[:, None], (1, 2000)))
        d = np.asarray(d).reshape(2000, 2).T
        assert np.all(d[0] < 0) and np.all(d[1] > 0)


def test_unconstrained_polynomial_is_flagged_at_the_closed_form_roots():
    law = ln.Polynomial(order=3, constraint=None)
    s = rc(ln.Unknown("Rx", ac.Pin, law=law))
    # w_x = (1, -3, 1): g_x'(x) = 1 - 9 x^2 + 5 x^4 vanishes at x^2 = (9 +- sqrt 61) / 10
    params = {"Rx.theta_x1": 1.0, "Rx.theta_x3": -3.0, "Rx.theta_x5": 1.0}
    report = ln.check_feasibility(s, params=params, simulate=False)
    partials = {f.data["partial"]: f for f in report["Rx"].by_check("prop3.1")}
    dv = partials["dg/dv"]
    assert dv.severity == "error"
    y = np.array([(9 - np.sqrt(61)) / 10, (9 + np.sqrt(61)) / 10])
    expected = np.sort(np.concatenate([-np.sqrt(y), np.sqrt(y)]))
    assert dv.data["zeros"]["v"] == pytest.approx(expected, abs=1e-9)  # 0.3434, 0.9213
    assert "constraint='feasible'" in dv.advice
    assert partials["dg/di"].severity == "ok"  # w_f = (1, 0.1, 0.1): 1 + 0.3 i^2 + 0.5 i^4
    # Prop 4.2's sufficient sign pattern is checked at these weights: it fails on w_x3
    diss = one(report["Rx"].findings, "dissipativity")
    assert diss.severity == "warning"
    assert diss.data["sign_pattern"] == "Prop 4.2's sign pattern fails: w_x3 = -3 < 0"
    positive = ln.check_feasibility(s, params={"Rx.theta_x3": 3.0}, simulate=False)
    diss = one(positive["Rx"].findings, "dissipativity")
    assert diss.severity == "ok" and "sign pattern (all >= 0" in diss.message
    # the same law with its constraint on is proven for all weights
    ok = ln.check_feasibility(
        rc(ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=3, constraint="feasible"))),
        simulate=False,
    )
    assert ok.ok


class Wavy(el.OnePort):
    """v = i + a sin(i): monotone for |a| < 1; sympy cannot decide the sign of 1 + a cos(i)."""

    def __init__(self, name, a):
        super().__init__(name)
        a = self.parameter("a", a)
        self.equations(self.v == self.i + a * ac.sin(self.i))


def test_sampled_box_finds_the_zeros_sympy_cannot_and_follows_the_users_box():
    def partial_di(a, box=None):
        report = ln.check_feasibility(rc(Wavy("R1", a)), simulate=False, box=box)
        return [f for f in report["R1"].by_check("prop3.1") if f.data["partial"] == "dg/di"][0]

    bad = partial_di(2.0)  # dg/di = -(1 + 2 cos i) = 0 at i = +-2 pi/3 + 2 pi k
    assert bad.severity == "error" and bad.data["box"] == {"i": (-10.0, 10.0)}
    k = np.arange(-3, 3)
    want = np.sort([z for z in np.r_[2 * np.pi / 3 + 2 * np.pi * k, -2 * np.pi / 3 + 2 * np.pi * k]
                    if abs(z) <= 10])  # fmt: skip
    assert bad.data["box_zeros"]["i"] == pytest.approx(want, abs=1e-9)  # +-2.094, 4.189, 8.378
    # in a box the component never leaves, |dg/di| >= 1 + 2 cos(1): shown, not proven
    for box in ({"i": (-1.0, 1.0)}, {"R1": {"i": (-1.0, 1.0)}}):
        inside = partial_di(2.0, box)
        assert inside.severity == "warning" and "not proven" in inside.message
        assert inside.data["box_min_abs"] == pytest.approx(1 + 2 * np.cos(1.0), rel=1e-12)
    mild = partial_di(0.5)  # 1 + cos(i)/2 >= 1/2 everywhere
    assert mild.severity == "warning"
    assert mild.data["box_min_abs"] == pytest.approx(0.5, abs=1e-6)


# -- the small-capacitor device ---------------------------------------------------------------
def test_small_capacitors_split_the_loop_and_keep_the_solution():
    def build():
        law = ln.Polynomial(order=2, constraint="dissipative")
        return series(ln.Unknown("R1", ac.Pin, law=law), ln.Unknown("R2", ac.Pin, law=law))

    s = build()
    eps = ln.with_small_capacitors(s, C=1e-6)
    # one capacitor, at the node between the two unknowns: the source node and the
    # capacitor node already have known potentials
    added = [c.name for c in eps.all_components() if c.name.startswith("C_eps")]
    assert added == ["C_eps_R1_n"]
    before = [len(b.equations) for b in ac.compile(s).blocks if b.kind == "newton"]
    after = [len(b.equations) for b in ac.compile(eps).blocks if b.kind == "newton"]
    assert before == [4] and after == [1, 1]  # the loop became two scalar blocks
    assert [c.name for c in s.all_components()].count("C_eps_R1_n") == 0  # original unchanged
    r0, r1 = simulate(s, t_end=5.0), simulate(eps, t_end=5.0)
    assert np.max(np.abs(r0["C.v"] - r1["C.v"])) < 1e-4  # measured 2.5e-6
    report = ln.check_feasibility(s, t_end=5.0, small_capacitor=1e-6)
    assert report.ok and report.system == "series_eps"
    assert all(b.finding.severity == "ok" for b in report.blocks)


# -- templates found from equations, and a Type 3 violation ------------------------------------
def test_templates_of_library_components_and_a_zero_gear_ratio():
    assert constitutive(el.Inductor("L")).template == 1
    assert not constitutive(el.Capacitor("C")).resistive
    assert constitutive(el.ConstantVoltage("V")).kind == "source"
    assert constitutive(rot.Inertia("J")).template == 2
    assert constitutive(rot.Damper("d")).resistive  # tau and der(phi): power tau w
    assert not constitutive(rot.Spring("k")).resistive
    gear = constitutive(rot.IdealGear("gear"))
    assert gear.template == 3
    assert [r.named for r in gear.relations] == [["tau_a", "tau_b"], ["phi_a", "phi_b"]]
    s = ac.System("geared")
    src = rot.Torque("T", tau=1.0, use_support=True)
    gearbox = rot.IdealGear("gear", ratio=0.0)
    load, fixed = rot.Inertia("load", J=1.0, phi0=0.0, w0=0.0), rot.Fixed("F")
    s.connect(src.flange, gearbox.flange_a)
    s.connect(gearbox.flange_b, load.flange_a)
    s.connect(src.support, fixed.flange)
    report = ln.check_feasibility(s, simulate=False)
    errors = [f for f in report["gear"].findings if f.severity == "error"]
    assert {f.data["partial"] for f in errors} == {"dG1/dtau_a", "dG2/dphi_b"}
    assert all("identically zero" in f.message for f in errors)


def test_sympy_bridge_matches_casadi_and_proves_signs():
    x, y = cs.SX.sym("x"), cs.SX.sym("y")
    e = cs.tanh(x * y) + 3 * x**3 - cs.fmin(y, 2) + cs.if_else(x < 1, x, 2) + cs.exp(-(x**2))
    names = {"x": sp.Symbol("x", real=True), "y": sp.Symbol("y", real=True)}
    expr = to_sympy(e, lambda s: names[s.name()])
    fun = cs.Function("f", [x, y], [e])
    for a, b in [(0.3, -1.2), (1.5, 2.5), (-2.0, 0.7)]:
        want = float(fun(a, b))
        assert float(expr.subs({names["x"]: a, names["y"]: b})) == pytest.approx(want, rel=1e-12)
    # CasADi's derivative of tanh, 1 - tanh^2, becomes sech^2: positive for sympy
    d = to_sympy(cs.jacobian(2 * cs.tanh(x) + x, x), lambda s: names[s.name()])
    assert sign_of(d) == 1
    var, roots = real_zeros(to_sympy(3 * x**2 - 1, lambda s: names[s.name()]))
    assert [float(r) for r in roots] == pytest.approx([-ROOT3, ROOT3])


# -- the command line's entry point -----------------------------------------------------------
@pytest.mark.filterwarnings("ignore::acausal.ParameterWarning")  # R = -1, meant
def test_main_check_prints_the_report_and_returns_the_exit_code(tmp_path, capsys):
    model = tmp_path / "model.py"
    model.write_text(
        "import acausal as ac\n"
        "from components import electrical as el\n"
        "system = ac.System('rc')\n"
        "V, G = el.SineVoltage('V', V=1.0, f=0.5), el.Ground('G')\n"
        "R, C = el.Resistor('R', R=-1.0), el.Capacitor('C', C=1.0, v0=0.0)\n"
        "system.connect(V.p, R.p)\n"
        "system.connect(R.n, C.p)\n"
        "system.connect(C.n, V.n, G.p)\n"
    )
    assert main_check(model, t_end=2.0) == 1
    out = capsys.readouterr().out
    assert "Feasibility of rc: 1 problem" in out and "not dissipative: i*v = -i**2" in out
    assert main_check(model, t_end=2.0, params={"R.R": 1.0}) == 0
    assert "Feasibility of rc: ok" in capsys.readouterr().out


def test_mistakes_in_the_options_name_what_to_fix():
    s = rc(el.Resistor("R1", R=1.0))
    with pytest.raises(ac.ModelError, match=r"box entry 'R1': 'i' -> \(2, -2\)"):
        ln.check_feasibility(s, box={"R1": {"i": (2, -2)}}, simulate=False)
    with pytest.raises(ac.ModelError, match="'Rx' is not a component of rc"):
        ln.check_feasibility(s, small_capacitor=["Rx"], simulate=False)
    report = ln.check_feasibility(s, simulate=False)
    with pytest.raises(ac.UnknownNameError, match="Did you mean 'R1'"):
        report["R"]
