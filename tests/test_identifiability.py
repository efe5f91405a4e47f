"""``ln.identifiability``: the normalized sensitivity matrix, collinearity indices and
correlations against closed forms (an RC circuit, a mass-spring-damper), a network-like block
against the angle it makes with a parameter, and the paper's slider-crank (De Groote et al.,
Appendix B): crank length ``l1`` and slider mass ``m3`` cannot be separated from the crank's
angle and speed, ``{m3, J1, Bm}`` can."""

import itertools

import numpy as np
import pytest
import sympy as sp

import acausal as ac
import learning as ln
from components import electrical as el
from components import planar as pl
from components import rotational as rot
from components import translational as tr
from components.translational_masses import Mass
from examples.references.slider_crank_reference import FRICTION, L1, L2, M_CRANK, M_ROD, M_SLIDER, J
from solvers import simulate, simulator
from solvers.transition import transition_sensitivities

TIGHT = {"rtol": 1e-10, "atol": 1e-12}


def gamma(columns):
    """Brun's collinearity index of the given sensitivity columns (normalized here)."""
    Sn = columns / np.linalg.norm(columns, axis=0)
    return 1.0 / np.linalg.svd(Sn, compute_uv=False)[-1]


# -- RC: only the time constant R C is seen ---------------------------------------------------
V0, R0, C0 = 1.0, 2.0, 0.5
T_RC = np.linspace(0.0, 5.0, 101)


def rc_circuit():
    s = ac.System("rc")
    V = el.ConstantVoltage("V", V=V0)
    R = el.Resistor("R", R=R0)
    C = el.Capacitor("C", C=C0, v0=0.0)
    G = el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, C.p)
    s.connect(C.n, V.n, G.p)
    return s


def rc_columns():
    """``v = V (1 - exp(-t / (R C)))``: ``p dv/dp`` for R, C, V and the scale std(v)."""
    tau = R0 * C0
    v = V0 * (1 - np.exp(-T_RC / tau))
    d_log_tau = -V0 * np.exp(-T_RC / tau) * T_RC / tau  # R dv/dR = C dv/dC = tau dv/dtau
    return np.column_stack([d_log_tau, d_log_tau, v]), np.std(v)


@pytest.fixture(scope="module")
def rc():
    return ln.identifiability(
        rc_circuit(), {"t": T_RC}, fitted=["R.R", "C.C", "V.V"], outputs=["C.v"], **TIGHT
    )


def test_rc_sensitivity_matrix_matches_closed_form(rc):
    cols, scale = rc_columns()
    assert rc.output_scales["C.v"] == pytest.approx(scale, rel=1e-9)
    err = np.max(np.abs(rc.S - cols / scale))
    assert err <= 1e-6, err  # measured 8.7e-10 (entries up to 3.9)
    importance = np.linalg.norm(cols / scale, axis=0) / np.sqrt(T_RC.size)
    assert [rc.importance[p] for p in rc.params] == pytest.approx(importance, rel=1e-8)


def test_rc_product_is_all_that_is_identifiable(rc):
    g = rc.collinearity[("R.R", "C.C")]
    assert g > 1e8  # measured 6.4e15: identical columns up to rounding
    assert rc.singular_values[-1] < 1e-8  # measured 9.5e-17
    assert rc.correlation[0, 1] == pytest.approx(-1.0, abs=1e-9)  # measured -1 - 2e-16
    # the weakest direction: dR/R = -dC/C, i.e. R C stays; V is not involved
    w = rc.weakest
    assert abs(w["R.R"]) == pytest.approx(np.sqrt(0.5), abs=1e-9)
    assert w["R.R"] + w["C.C"] == pytest.approx(0.0, abs=1e-9)
    assert w["V.V"] == pytest.approx(0.0, abs=1e-9)
    assert rc.unidentifiable() == [(("R.R", "C.C"), g)]
    cols, _ = rc_columns()
    for pair in (("R.R", "V.V"), ("C.C", "V.V")):  # identifiable: the closed form's index
        assert rc.collinearity[pair] == pytest.approx(gamma(cols[:, [0, 2]]), rel=1e-6)
    assert rc.collinearity[("R.R", "V.V")] < 3  # measured 2.03
    best, g2, _ = rc.best(2)
    assert best in {("R.R", "V.V"), ("C.C", "V.V")} and g2 < 3
    assert rc.best(3) is None
    text = str(rc)
    # gamma itself is 1 / (rounding of two identical columns): its digits are the LAPACK's
    assert f"{{R.R, C.C}}  gamma {rc.collinearity[('R.R', 'C.C')]:.4g}" in text
    assert "cannot be separated" in text


def test_stiff_model_takes_the_direct_sensitivities_and_matches_closed_form():
    """Two RC branches on one source, time constants 1 ms and 1 s: the transition matrix
    ``diag(exp(-t / 1e-3), exp(-t))`` is ill-conditioned past a few ms, so the report
    integrates the sensitivities directly (the fallback of :mod:`solvers.transition`);
    its matrix still equals the closed form ``p dv/dp`` of both capacitor voltages."""
    taus = {"1": (1.0, 1e-3), "2": (2.0, 0.5)}  # R, C per branch: tau 1 ms and 1 s
    s = ac.System("two_rc")
    V = el.ConstantVoltage("V", V=V0)
    G = el.Ground("G")
    s.connect(V.n, G.p)
    for k, (r, c) in taus.items():
        R, C = el.Resistor(f"R{k}", R=r), el.Capacitor(f"C{k}", C=c, v0=0.0)
        s.connect(V.p, R.p)
        s.connect(R.n, C.p)
        s.connect(C.n, G.p)
    fitted = ["R1.R", "C1.C", "R2.R", "C2.C", "V.V"]
    model = ac.compile(s)
    p = np.array(list(model.parameters.values()))
    sim = simulator(model, T_RC, TIGHT["rtol"], TIGHT["atol"], p)
    which = [list(model.parameters).index(n) for n in fitted]
    assert transition_sensitivities(sim, p, which) is None  # cond(Phi) ~ e^5000
    rep = ln.identifiability(model, {"t": T_RC}, fitted=fitted, outputs=["C1.v", "C2.v"], **TIGHT)
    blocks = []
    for k, (r, c) in taus.items():
        e = np.exp(-T_RC / (r * c))
        v = V0 * (1 - e)
        d_log_tau = -V0 * e * T_RC / (r * c)
        cols = np.zeros((T_RC.size, 5))
        i = 0 if k == "1" else 2
        cols[:, i] = cols[:, i + 1] = d_log_tau
        cols[:, 4] = v
        assert rep.output_scales[f"C{k}.v"] == pytest.approx(np.std(v), rel=1e-9)
        blocks.append(cols / np.std(v))
    err = np.max(np.abs(rep.S - np.vstack(blocks)))
    assert err <= 1e-6, err


def test_capacitor_next_to_an_unknown_resistor_law_is_unidentifiable():
    """A block (an ``ln.Unknown``'s weights): scaling C and the law's current together
    leaves ``v`` unchanged, so C lies in the block's subspace (overlap 1)."""
    s = ac.System("rc_unknown")
    V = el.SineVoltage("V", V=2.0, f=0.3)
    R = ln.Unknown("R", ac.Pin, law=ln.Polynomial(order=3, constraint="dissipative"))
    C = el.Capacitor("C", C=C0, v0=0.0)
    G = el.Ground("G")
    s.connect(V.p, R.p)
    s.connect(R.n, C.p)
    s.connect(C.n, V.n, G.p)
    rep = ln.identifiability(
        s,
        np.linspace(0.0, 5.0, 201),
        fitted=["C.C", "V.V"],
        outputs=["C.v"],
        blocks={"R": R.parameter_names()},
        **TIGHT,
    )
    assert rep.block_rank["R"] == 3  # of 5 weights
    assert rep.overlap["C.C"]["R"] == pytest.approx(1.0, abs=1e-9)
    assert rep.collinearity[("C.C", "R")] > 1e8  # measured 1.7e12
    assert rep.overlap["V.V"]["R"] < 0.8  # measured 0.73
    assert rep.collinearity[("V.V", "R")] < 3  # measured 1.93
    assert rep.unidentifiable()[0][0] == ("C.C", "R")


def test_errors_name_what_to_fix():
    with pytest.raises(ac.UnknownNameError, match="'R.R'"):
        ln.identifiability(rc_circuit(), T_RC, fitted=["R.r"], outputs=["C.v"])
    with pytest.raises(ac.OptionError, match="outputs"):
        ln.identifiability(rc_circuit(), T_RC, fitted=["R.R"])
    with pytest.raises(ac.OptionError, match="named twice"):
        ln.identifiability(
            rc_circuit(), T_RC, fitted=["R.R"], outputs=["C.v"], blocks={"b": ["R.R", "C.C"]}
        )


# -- mass-spring-damper: m, c, d from a step force; only c/m, d/m from a free response ----
M0, C_SPRING, D0, F0, X0 = 1.0, 4.0, 0.8, 2.0, 0.1
T_MSD = np.linspace(0.0, 10.0, 201)
MSD = ["mass.m", "spring.c", "spring.d"]


def msd(force):
    """A mass on a spring-damper to a wall; pushed by ``F0`` from rest, or released at ``X0``."""
    s = ac.System("msd")
    wall = tr.Fixed("wall")
    spring = tr.SpringDamper("spring", c=C_SPRING, d=D0)
    mass = Mass("mass", m=M0, s0=0.0 if force else X0, v0=0.0)
    push = tr.ConstantForce("push", f_constant=F0 if force else 0.0)
    s.connect(wall.flange, spring.flange_a)
    s.connect(spring.flange_b, mass.flange_a)
    s.connect(push.flange, mass.flange_b)
    return s


def msd_columns(force):
    """``p dx/dp`` for m, c, d of the underdamped closed form (sympy), and ``x``."""
    m, c, d, t = sp.symbols("m c d t", positive=True)
    w0, zeta = sp.sqrt(c / m), d / (2 * sp.sqrt(c * m))
    wd = w0 * sp.sqrt(1 - zeta**2)
    decay = sp.exp(-zeta * w0 * t) * (sp.cos(wd * t) + zeta * w0 / wd * sp.sin(wd * t))
    x = F0 / c * (1 - decay) if force else X0 * decay
    vals = {m: M0, c: C_SPRING, d: D0}
    cols = [sp.lambdify(t, (p * x.diff(p)).subs(vals), "numpy")(T_MSD) for p in (m, c, d)]
    return np.column_stack(cols), sp.lambdify(t, x.subs(vals), "numpy")(T_MSD)


@pytest.fixture(scope="module")
def pushed():
    return ln.identifiability(msd(True), {"t": T_MSD}, fitted=MSD, outputs=["mass.s"], **TIGHT)


def test_msd_sensitivity_matrix_matches_closed_form(pushed):
    cols, x = msd_columns(True)
    err = np.max(np.abs(pushed.S - cols / np.std(x)))
    assert err <= 1e-6, err  # measured 6.5e-9 (entries up to 7.6)


def test_msd_step_identifies_m_c_d(pushed):
    cols, _ = msd_columns(True)
    for k in range(1, 4):
        for K in itertools.combinations(range(3), k):
            names = tuple(MSD[j] for j in K)
            assert pushed.collinearity[names] == pytest.approx(gamma(cols[:, K]), rel=1e-6)
    g = pushed.collinearity[tuple(MSD)]
    assert 1 < g < 2  # measured 1.374: m, c, d identifiable together
    assert pushed.unidentifiable() == []
    assert pushed.best(3)[0] == tuple(MSD)
    # correlation of the estimates from (S^T S)^-1 of the closed form's columns
    cov = np.linalg.inv(cols.T @ cols)
    corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    assert np.max(np.abs(pushed.correlation - corr)) <= 1e-6
    assert "none" in str(pushed).split("cannot be separated")[-1].splitlines()[1]


def test_msd_free_response_cannot_separate_m_c_d():
    """``x`` depends on ``c/m`` and ``d/m`` only: scaling all three leaves it unchanged."""
    rep = ln.identifiability(msd(False), {"t": T_MSD}, fitted=MSD, outputs=["mass.s"], **TIGHT)
    cols, x = msd_columns(False)
    assert np.max(np.abs(rep.S - cols / np.std(x))) <= 1e-6  # measured 1.5e-8
    assert rep.collinearity[tuple(MSD)] > 1e8  # measured 2.7e15
    assert all(rep.collinearity[p] < 5 for p in itertools.combinations(MSD, 2))  # max 3.49
    assert rep.unidentifiable() == [(tuple(MSD), rep.collinearity[tuple(MSD)])]
    # dm/m = dc/c = dd/d: the relative changes are equal
    w = np.array(list(rep.weakest.values()))
    assert np.max(np.abs(w - 1 / np.sqrt(3))) <= 1e-6


def test_two_experiments_stack_and_separate_m_c_d():
    """The free response and the step together: rows stack, the scale is pooled, and m, c, d
    become identifiable; a nan in the data drops that sample."""
    free = {"t": T_MSD, "mass.s": np.where(np.arange(T_MSD.size) == 7, np.nan, 0.0)}
    rep = ln.identifiability(
        None,
        fitted=MSD,
        experiments=[(msd(False), free), (msd(True), {"t": T_MSD})],
        outputs=["mass.s"],
        **TIGHT,
    )
    (c_free, x_free), (c_step, x_step) = msd_columns(False), msd_columns(True)
    keep = np.arange(T_MSD.size) != 7
    scale = np.std(np.concatenate([x_free[keep], x_step]))
    expected = np.vstack([c_free[keep], c_step]) / scale
    assert rep.S.shape == (2 * T_MSD.size - 1, 3)
    assert np.max(np.abs(rep.S - expected)) <= 1e-6
    assert rep.collinearity[tuple(MSD)] == pytest.approx(gamma(expected), rel=1e-6)
    assert rep.collinearity[tuple(MSD)] < 2  # measured 1.379


def test_block_enters_by_its_dominant_subspace():
    """``{c, d}`` as one block: ``gamma({m, block}) = 1 / sqrt(1 - cos theta)`` with theta the
    angle between ``s_m`` and span(s_c, s_d), here from the closed form by least squares."""
    rep = ln.identifiability(
        msd(True),
        {"t": T_MSD},
        fitted=["mass.m"],
        blocks={"spring": ["spring.c", "spring.d"]},
        outputs=["mass.s"],
        **TIGHT,
    )
    cols, x = msd_columns(True)
    sm = cols[:, 0] / np.linalg.norm(cols[:, 0])
    coef = np.linalg.lstsq(cols[:, 1:], sm, rcond=None)[0]
    cos = np.linalg.norm(cols[:, 1:] @ coef)
    assert rep.block_rank["spring"] == 2
    assert rep.overlap["mass.m"]["spring"] == pytest.approx(cos, abs=1e-8)  # 0.469
    assert rep.collinearity[("mass.m", "spring")] == pytest.approx(1 / np.sqrt(1 - cos), rel=1e-6)
    assert rep.importance["spring"] == pytest.approx(
        np.linalg.svd(cols[:, 1:] / np.std(x), compute_uv=False)[0] / np.sqrt(T_MSD.size),
        rel=1e-8,
    )


# -- the paper's slider-crank (Table I), horizontal, driven by the motor's torque ----------
ANGLE, SPEED = "sc.crank_joint.phi", "sc.crank_joint.w"
P_SC = ["sc.l1", "sc.slider.m", "sc.J", "Bm.d"]  # l1, m3, J1, Bm


def slider_crank_model():
    """Table I's mechanism in a horizontal plane, a sine torque on the crank against the
    motor's viscous friction ``Bm``; the experiments vary the torque and the start."""
    s = ac.System("slider_crank")
    world = pl.World("world", g=0.0)
    sc = pl.SliderCrank("sc", l1=L1, l2=L2, m_crank=M_CRANK, m_rod=M_ROD, m_slider=M_SLIDER, J=J)
    housing = rot.Fixed("housing")
    bm = rot.Damper("Bm", d=FRICTION)
    motor = rot.SineTorque("motor", amplitude=0.5, f=2.0)
    s.connect(world.frame_b, sc.frame_a)
    s.connect(housing.flange, bm.flange_a)
    s.connect(bm.flange_b, sc.crank_axis, motor.flange)
    with pytest.warns(UserWarning, match="unconnected"):  # the slider's flange stays free
        return ac.compile(s)


def slider_crank_experiments(designs, t):
    """One experiment per (torque amplitude N m, frequency Hz, start angle, start speed)."""
    model = slider_crank_model()
    keys = ("motor.amplitude", "motor.f", "sc.theta0", "sc.w0")
    return [(model.with_parameters(dict(zip(keys, d))), {"t": t}) for d in designs]


# 4 trajectories of 0.4 s (the paper's 800 samples at 2 kHz, here every 2 ms)
DESIGNS = [(0.5, 2.0, 0.0, 10.0), (0.5, 3.0, np.pi / 2, -10.0), (1.0, 1.0, 0.0, 0.0),
           (0.8, 5.0, np.pi, 5.0)]  # fmt: skip
T_SC = np.linspace(0.0, 0.4, 201)


@pytest.fixture(scope="module")
def slider_crank():
    exps = slider_crank_experiments(DESIGNS, T_SC)
    rep = ln.identifiability(None, fitted=P_SC, outputs=[ANGLE, SPEED], experiments=exps, **TIGHT)
    return rep, exps


def test_slider_crank_sensitivities_match_finite_differences(slider_crank):
    """The first experiment's columns against central differences of IDAS runs at rtol
    1e-12 (steps of 1e-4 relative: IDAS's own error over the step stays in the quotient; at
    the sensitivities' rtol 1e-10 it reached 1.7e-5 on J, whose effect on theta is small)."""
    rep, exps = slider_crank
    model = exps[0][0]
    n = T_SC.size
    for j, p in enumerate(P_SC):
        h = 1e-4 * model.parameters[p]
        runs = [
            simulate(
                model, grid=T_SC, params={p: model.parameters[p] + sgn * h}, rtol=1e-12, atol=1e-14
            )
            for sgn in (1, -1)
        ]
        for k, out in enumerate((ANGLE, SPEED)):
            fd = (runs[0][out] - runs[1][out]) / (2 * h) * model.parameters[p]
            fd /= rep.output_scales[out]
            col = rep.S[k * n : (k + 1) * n, j]
            err = np.max(np.abs(col - fd)) / np.max(np.abs(fd))
            assert err <= 1e-5, (p, out, err)  # measured at most 9.4e-7 (m3 on omega)


def test_slider_crank_l1_and_m3_cannot_be_separated(slider_crank):
    rep, _ = slider_crank
    g = rep.collinearity
    l1, m3, J1, Bm = P_SC
    # De Groote et al., Appendix B: l1 and m3 act alike on the crank's motion ...
    assert g[(l1, m3)] > 10  # measured 16.5
    assert rep.cosines[0, 1] > 0.99  # measured 0.996 (the paper's Q, Fig. 22)
    assert rep.correlation[0, 1] < -0.95  # measured -0.999 (estimates, 4 parameters)
    assert g[(l1, m3, J1, Bm)] > 20  # measured 63.4: the set of the paper's Fig. 23
    assert rep.unidentifiable() == [((l1, m3), g[(l1, m3)])]
    # ... while {m3, J1, Bm} (the paper's choice, l1 being measured) and {l1, J1, Bm} are fine
    assert g[(m3, J1, Bm)] < 5  # measured 3.09
    assert g[(l1, J1, Bm)] < 5  # measured 3.69
    assert rep.best(3)[0] == (l1, J1, Bm)  # l1 has the larger effect (rho 13.4 vs 9.7)
    assert rep.best(4) is None
    assert rep.importance[l1] > 3 * rep.importance[m3]  # measured 0.71 vs 0.23


@pytest.mark.slow
def test_slider_crank_paper_sized_data_set():
    """10 torque profiles x 2 start angles, 800 samples at 2 kHz each, and the rod's mass m2
    too. To first order in l1 / l2 the crank sees the inertia ``M(theta) = (J1 + m2 l1^2 / 3)
    + l1^2 (m3 + 2 m2 / 3) sin^2(theta)``: two combinations of four parameters, so l1 goes
    with m3 (and m2, the paper's Fig. 22), and {l1, m3, J1, m2} is all but singular."""
    designs = [
        (a, f, th, 0.0)
        for a, f in zip(np.linspace(0.3, 1.2, 10), (1, 2, 3, 4, 5, 1.5, 2.5, 3.5, 4.5, 6))
        for th in (0.0, np.pi / 2)
    ]
    t = np.arange(800) / 2000.0
    exps = slider_crank_experiments(designs, t)
    rep = ln.identifiability(
        None, fitted=[*P_SC, "sc.m_rod"], outputs=[ANGLE, SPEED], experiments=exps
    )
    l1, m3, J1, Bm, m2 = rep.params
    g = rep.collinearity
    assert g[(l1, m3)] > 10  # measured 11.0
    assert g[(l1, m3, J1, Bm)] > 20  # measured 39.4
    assert g[(l1, m3, J1, m2)] > 1e3  # measured 1.6e4
    assert g[(m3, J1, Bm)] < 5  # measured 2.37
    assert {k for k, _ in rep.unidentifiable()} == {(l1, m3), (l1, J1, m2), (m3, J1, m2)}
    assert rep.best(3)[0] == (l1, J1, Bm)  # gamma 2.85


def test_transition_sensitivities_match_the_augmented_dae():
    """The report's sensitivities come from the transition matrix (``Phi`` and quadratures,
    :mod:`solvers.transition`); the same columns by the augmented DAE of every direction
    (``simulate(sensitivities=)``), and the report from those, agree to the tolerances."""
    model = slider_crank_experiments(DESIGNS[1:2], T_SC)[0][0]
    p = np.array(list(model.parameters.values()))
    which = [list(model.parameters).index(n) for n in P_SC]
    sim = simulator(model, T_SC, TIGHT["rtol"], TIGHT["atol"], p)
    assert transition_sensitivities(sim, p, which) is not None  # the fast path applies
    rep = ln.identifiability(model, {"t": T_SC}, fitted=P_SC, outputs=[ANGLE, SPEED], **TIGHT)
    res = simulate(model, grid=T_SC, sensitivities=P_SC, **TIGHT)
    S = np.vstack(
        [
            np.column_stack([res.sensitivity(o, q) * model.parameters[q] for q in P_SC])
            / rep.output_scales[o]
            for o in (ANGLE, SPEED)
        ]
    )
    err = np.max(np.abs(rep.S - S), axis=0) / np.max(np.abs(S), axis=0)
    assert np.all(err <= 1e-6), err  # measured at most 2.5e-9 (J1)
    sv = np.linalg.svd(S / np.linalg.norm(S, axis=0), compute_uv=False)
    assert rep.singular_values == pytest.approx(sv, rel=1e-6)
    for k, g in rep.collinearity.items():
        assert g == pytest.approx(gamma(S[:, [P_SC.index(q) for q in k]]), rel=1e-6)
