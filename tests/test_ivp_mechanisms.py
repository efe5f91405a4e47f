"""Three index-3 mechanisms of the Test Set for IVP Solvers written as user components
(:mod:`examples.references.ivp_mechanisms`), left to the compiler, against the test set's reference
solutions at its t_end.

* Andrews' squeezing mechanism (t_end = 0.03) and the car axis (t_end = 3) with every start
  value the test set gives fixed (they are consistent): the compiler picks states regular at
  the start, and the runs reach 7.4+ significant correct digits (scd) in every position.
* The slider crank with an elastic rod (t_end = 0.1): the test set's position start values
  are consistent only to 2.03e-10 (``x3`` is given to 9 digits); fixed as given, the
  mismatch lands on the rod's stretch ``q4`` (5 digits at t_end); with ``x3`` left to the
  constraints every position reaches 7.5+ digits.
* What a user meets on the way: ties and start-point reselections as warnings naming the
  coordinates; conflicting fixed starts say how many must go; no electrical advice.

Measured (rtol = atol = 1e-10 unless noted; scd of the positions at t_end, run time):
Andrews 7.41-10.46 (0.4 s; 8.51-11.45 at 1e-11, 3.6 s), car axis 7.53-9.66 (0.05 s;
9.20-11.43 at 1e-12, 0.06 s), slider crank with x3 free (atol 1e-14) 7.50-12.04 (0.45 s;
8.42-13.01 at rtol 1e-11, atol 1e-15, 0.6 s).
"""

import warnings

import casadi as cs
import numpy as np
import pytest

import acausal as ac
from acausal.structure import linsolve
from examples.references import ivp_mechanisms as ivp
from solvers import DAEFunctions, Simulator, initial_values, simulate
from solvers.diagnose import singular_block

# the warnings of compiling are read where they matter (compiled()); elsewhere they repeat
pytestmark = pytest.mark.filterwarnings("ignore::acausal.StateSelectionWarning")

FREE_X3 = tuple(c for c in ivp.CRANK_COORDINATES if c != "x3")  # all fixed but x3
ELECTRICAL = ("Ground", "resistance", "inductance")


def compiled(system):
    """The model and the texts of the StateSelectionWarnings compiling it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = ac.compile(system)
    notes = [str(w.message) for w in caught if issubclass(w.category, ac.StateSelectionWarning)]
    return model, notes


def regular_at_start(model):
    """None if every BLT block is regular at the consistent start point, else the text of
    the first singular one."""
    sim = Simulator(model, np.array([0.0, 1e-3]), 1e-8, 1e-10)
    p = np.asarray(model.parameter_vector(None), dtype=float)
    x0, z0 = sim.initial_values(p)
    return singular_block(DAEFunctions(model), x0, z0, p, 0.0)


def final(res, prefix, name):
    """The value at t_end of coordinate ``name`` (``der(q)`` for a speed, ``lam1`` ...)."""
    if name.startswith("der("):
        return res[f"der({prefix}.{name[4:]}"][-1]
    return res[f"{prefix}.{name}"][-1]


def digits(res, prefix, reference, names):
    return {k: ivp.scd(final(res, prefix, k), reference[k]) for k in names}


# -- Andrews' squeezing mechanism ----------------------------------------------------------
@pytest.fixture(scope="module")
def andrews():
    model, notes = compiled(ivp.andrews())
    res = simulate(model, t_end=ivp.ANDREWS_T_END, dt=3e-4, rtol=1e-10, atol=1e-10)
    return model, notes, res


def test_andrews_keeps_the_drive_angle_regular_at_the_start(andrews):
    model, notes, _ = andrews
    assert model.index == 3
    assert model.states == ["andrews.beta", "andrews.w_beta"]
    assert regular_at_start(model) is None
    # a 1-dof loop of seven angles, all with fixed starts: a tie, named at both levels
    assert len(notes) == 2
    assert "the state andrews.beta was chosen among equally good candidates" in notes[1]
    assert all(a in notes[1] for a in ("andrews.theta", "andrews.epsilon"))
    assert not any(word in text for text in notes for word in ELECTRICAL)


def test_andrews_starts_at_the_test_sets_consistent_point(andrews):
    """The 14 fixed starts are consistent (checked, then honoured); the multipliers and
    accelerations that follow are the test set's (given there to 30 digits)."""
    iv = initial_values(andrews[0])
    for k, lam in enumerate(ivp.ANDREWS_LAMBDA0, 1):
        assert iv[f"andrews.lam{k}"] == pytest.approx(lam, rel=1e-13, abs=1e-12)
    for a, w in zip(ivp.ANDREWS_ANGLES, ivp.ANDREWS_W0):
        assert iv[f"der(andrews.w_{a})"] == pytest.approx(w, rel=1e-13, abs=1e-10)
    for a, q in zip(ivp.ANDREWS_ANGLES, ivp.ANDREWS_Q0):
        assert iv[f"andrews.{a}"] == q


# Digit counts are bounded by what a tolerance promises, not by the counts one run measured:
# each count is IDAS's error along its own step sequence, which rounding (another CPU's libm,
# a 1-ulp change of a parameter) moves by 0.1-0.5 digit. The claim at a tolerance ``tol``:
# ``-log10(tol) - 3`` significant correct digits (scd) in every position against the test
# set's reference; speeds and multipliers (the constraints differentiated once and twice)
# two digits fewer.
def position_digits(tol):
    return -np.log10(tol) - 3


def test_andrews_reaches_the_reference_at_t_end(andrews):
    """At 1e-10: 7+ digits in the angles (measured 7.41-10.46), 5+ in their speeds
    (5.36-8.18) and the multipliers (5.78-7.14)."""
    _, _, res = andrews
    assert res.t[-1] == pytest.approx(ivp.ANDREWS_T_END)
    assert res.state_switches == []
    angles = digits(res, "andrews", ivp.ANDREWS_REFERENCE, ivp.ANDREWS_ANGLES)
    speeds = digits(res, "andrews", ivp.ANDREWS_REFERENCE, [f"der({a})" for a in angles])
    lams = digits(res, "andrews", ivp.ANDREWS_REFERENCE, [f"lam{k}" for k in range(1, 7)])
    assert min(angles.values()) >= position_digits(1e-10), angles
    assert min({**speeds, **lams}.values()) >= position_digits(1e-10) - 2, (speeds, lams)
    # beta turned 2.5 revolutions: 15.8 rad at t_end
    assert final(res, "andrews", "beta") == pytest.approx(15.81077119629904, rel=1e-7)


def test_andrews_at_rtol_1e_11():
    """The tolerance's 8+ digits in every angle (measured 8.38 for gamma to 11.3). With
    CasADi's own symbolic solve of the 20-unknown acceleration block, its rounding (1.6e-8
    of the largest unknown) made IDAS take 10x the steps of rtol 1e-10 (9.5 s) and reach
    only 7.77 digits; with ``linsolve``'s (1e-15) it takes 0.3 s. (The bound was 8.4, a
    measured count: two solves of the block that differ only in rounding moved gamma's
    digits by 0.3, IDAS's error along another step sequence.)"""
    res = simulate(ivp.andrews(), t_end=ivp.ANDREWS_T_END, dt=3e-4, rtol=1e-11, atol=1e-11)
    got = digits(res, "andrews", ivp.ANDREWS_REFERENCE, ivp.ANDREWS_ANGLES)
    assert min(got.values()) >= position_digits(1e-11), got


def test_inconsistent_fixed_angles_say_how_many_must_go():
    q0 = list(ivp.ANDREWS_Q0)
    q0[2] += 1e-3  # gamma off by a milliradian: 14 fixed starts for a 1-dof mechanism
    model, _ = compiled(ivp.system(ivp.Andrews("andrews", q0=tuple(q0))))
    with pytest.raises(ac.InitializationError) as err:
        simulate(model, t_end=1e-3)
    text = str(err.value)
    assert "fixed start andrews.gamma = 0.45628 = 0.456279819163 conflicts with" in text
    assert "andrews.gamma = 0.455279819163" in text  # what beta's start gives it
    assert "leave the model 2 degrees of freedom: 12 of these 14 fixed values must go" in text
    assert not any(word in text for word in ELECTRICAL)


def test_a_priority_on_an_angle_singular_at_the_start_is_replaced():
    """gamma as the state leaves beta and theta to g1, g2, whose Jacobian in them has
    determinant -rr d sin(theta): zero at the start (theta = 0)."""
    model, notes = compiled(ivp.andrews(state_priority={"gamma": 1}))
    assert model.states == ["andrews.beta", "andrews.w_beta"]
    assert "the preferred states andrews.gamma are singular at the start values" in notes[2]
    assert "andrews.beta are taken instead" in notes[2]
    assert regular_at_start(model) is None


# -- the car axis ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def car():
    return compiled(ivp.car_axis())


def test_car_axis_takes_the_heights_as_states(car):
    """At the start both wheels' x coordinates are at a dead point of their constraints
    (xl = 0 on the road's normal, the axis horizontal): their heights are taken."""
    model, notes = car
    assert model.index == 3
    assert model.states == ["car.yl", "car.yr", "car.v_yl", "car.v_yr"]
    assert regular_at_start(model) is None
    assert any(
        "the preferred states car.xl, car.xr are singular at the start values" in n for n in notes
    )
    assert not any(word in text for text in notes for word in ELECTRICAL)


def test_car_axis_starts_at_the_test_sets_consistent_point(car):
    iv = initial_values(car[0])
    assert iv["car.lam1"] == pytest.approx(0, abs=1e-14)  # the test set's lam = 0
    assert iv["car.lam2"] == pytest.approx(0, abs=1e-14)
    accelerations = [iv[f"der(car.v_{c})"] for c in ivp.CAR_COORDINATES]
    np.testing.assert_allclose(accelerations, [0, -1, 0, -1], atol=1e-14)  # free fall, g = 1


@pytest.mark.parametrize("tol", [1e-10, 1e-12])
def test_car_axis_reaches_the_reference_at_t_end(car, tol):
    """Positions: 7+ digits at 1e-10 (measured 7.53-9.66), 9+ at 1e-12 (9.20-11.43); the
    multipliers 6+ at both (7.03 and 7.16: the reference's, not the tolerance's, limit)."""
    res = simulate(car[0], t_end=ivp.CAR_T_END, dt=0.03, rtol=tol, atol=tol)
    got = digits(res, "car", ivp.CAR_REFERENCE, ivp.CAR_COORDINATES)
    assert min(got.values()) >= position_digits(tol), got
    lam = digits(res, "car", ivp.CAR_REFERENCE, ["lam1", "lam2"])
    assert min(lam.values()) >= 6, lam


def test_car_axis_start_values_follow_its_parameters(car):
    """The starts are expressions of L, L0: another axis length stays consistent."""
    res = simulate(car[0], t_end=0.3, dt=0.01, params={"car.L": 1.1}, rtol=1e-10, atol=1e-10)
    assert res["car.xr"][0] == pytest.approx(1.1, abs=1e-12)
    closure = (res["car.xl"] - res["car.xr"]) ** 2 + (res["car.yl"] - res["car.yr"]) ** 2
    assert np.max(np.abs(closure - 1.21)) <= 1e-9  # measured 1.3e-10 (IDAS's Newton on g)


# -- the slider crank with an elastic connecting rod -------------------------------------------
def test_slider_crank_published_start_is_consistent_to_2e_10_only():
    """crank.f's x3 = 0.450016933 against L1 + L2 + q4 = 0.4500169327969: the test set
    integrates the index-2 form, where this offset just stays; here one coordinate must
    absorb it. With every start fixed, x3 is the state and q4 takes it: the fixed start of
    q4 is moved by 2.03e-10 (1.2e-5 of its value), accepted by the redundant-start check
    (1e-9 * max(1, |y|, |c|), solvers/consistency.py) with a warning giving the amount."""
    model, notes = compiled(ivp.slider_crank())
    states = ["x3", "q1", "q2", "q3", "v_x3", "v_q1", "v_q2", "v_q3"]
    assert model.states == [f"crank.{s}" for s in states]
    assert any("the preferred states crank.phi2 are singular at the start" in n for n in notes)
    assert regular_at_start(model) is None
    with pytest.warns(UserWarning, match=r"crank.q4 .* differs by 2.03e-10 from the value"):
        iv = initial_values(model)
    assert iv["crank.x3"] == ivp.CRANK_Q0[2]
    assert iv["crank.q4"] - ivp.CRANK_Q0[6] == pytest.approx(2.031e-10, rel=1e-3)
    # the longitudinal force follows the stretch: lam2 is 1.3e-5 off the test set's
    assert iv["crank.lam2"] / ivp.CRANK_LAMBDA0[1] - 1 == pytest.approx(1.27e-5, rel=1e-2)


@pytest.fixture(scope="module")
def crank_free_x3():
    return compiled(ivp.slider_crank(fixed=FREE_X3))


def test_slider_crank_with_x3_free_keeps_the_rod_coordinates(crank_free_x3):
    """x3 follows from the constraints; the rod's coordinates q1..q4 are the states (q4
    over phi2, whose choice would leave q4 and x3 to a singular Jacobian at phi2 = 0)."""
    model, notes = crank_free_x3
    assert model.index == 3
    assert model.states == [f"crank.{q}" for q in ("q1", "q2", "q3", "q4")] + [
        f"crank.v_{q}" for q in ("q1", "q2", "q3", "q4")
    ]
    assert regular_at_start(model) is None
    assert any("the preferred states crank.phi2 are singular" in n for n in notes)
    iv = initial_values(model)
    assert iv["crank.x3"] == pytest.approx(0.4500169327969, abs=1e-15)
    assert iv["crank.lam2"] == pytest.approx(ivp.CRANK_LAMBDA0[1], rel=1e-9)
    assert iv["der(crank.v_phi2)"] == pytest.approx(-1.344541576709835e-3, rel=1e-12)


@pytest.mark.parametrize("tols", [(1e-10, 1e-14), (1e-11, 1e-15)])
def test_slider_crank_reaches_the_reference_at_t_end(crank_free_x3, tols):
    """7+ digits in every coordinate at rtol 1e-10 (measured 7.50-12.04), 8+ at 1e-11
    (8.42-13.01); x3 is limited to 8.9 by the reference's own 2.03e-10 offset (above)."""
    rtol, atol = tols
    res = simulate(crank_free_x3[0], t_end=ivp.CRANK_T_END, dt=1e-3, rtol=rtol, atol=atol)
    got = digits(res, "crank", ivp.CRANK_REFERENCE, ivp.CRANK_COORDINATES)
    assert min(got.values()) >= position_digits(rtol), got
    assert final(res, "crank", "phi1") == pytest.approx(15.0, abs=1e-12)  # omega t


def test_slider_crank_with_every_start_fixed_loses_q4():
    """The same run with x3 fixed as published: the rigid coordinates keep the tolerance's
    7+ digits (measured 9.60, 9.13, 7.23), the rod's q4 only 5 (5.06): the 2.03e-10 moved
    onto it at the start (1.2e-5 of its start value) sets that, not the integration."""
    res = simulate(ivp.slider_crank(), t_end=ivp.CRANK_T_END, dt=1e-3, rtol=1e-10, atol=1e-14)
    got = digits(res, "crank", ivp.CRANK_REFERENCE, ivp.CRANK_COORDINATES)
    assert min(got[c] for c in ("phi2", "x3", "q1")) >= position_digits(1e-10), got
    assert 4.8 <= got["q4"] <= 5.4


def test_the_acceleration_block_of_andrews_is_solved_to_roundoff(andrews):
    """Andrews' 20-unknown linear block (accelerations and multipliers) at the output
    point t = 0.024: the compiler's symbolic solution (``linsolve.solve``: Householder on
    equilibrated rows) against LU with pivoting on the same matrix (good to 3e-16 here
    against a 40-digit solve)."""
    model, _, res = andrews
    ir = model.ir
    block = max(model.blocks, key=lambda b: len(b.equations))
    assert block.kind == "linear" and len(block.unknowns) == 20
    r = cs.vertcat(*[ir.equations[e].residual for e in block.equations])
    y = cs.vertcat(*[ir.sym(c) for c in block.unknowns])
    jac, r0 = cs.jacobian(r, y), cs.substitute(r, y, cs.DM.zeros(y.numel()))
    syms = cs.symvar(cs.vertcat(cs.vec(jac), r0))
    k = int(np.argmin(np.abs(res.t - 0.024)))
    point = [
        res[n][k] if n in model.names else model.defaults[n]
        for n in (model.symbol_name(s) for s in syms)
    ]
    f = cs.Function("block", [cs.vertcat(*syms)], [jac, r0, linsolve.solve(jac, -r0)])
    a, b, symbolic = (np.asarray(v) for v in f(point))
    exact = np.linalg.solve(a, -b.ravel())
    assert np.linalg.cond(a) < 1e7  # 1.2e6: numpy's LU is good to ~1e-10 here
    error = np.abs(symbolic.ravel() - exact) / np.abs(exact).max()
    # measured 1.1e-15 of the largest unknown (CasADi's own symbolic solve, which the
    # compiler used before: 4.8e-8); a backward-stable solve promises cond * eps = 1.3e-10
    assert error.max() <= np.linalg.cond(a) * np.finfo(float).eps


# -- framework problems found (see the report): the desired behaviour, failing today ---------
@pytest.mark.xfail(
    reason="acausal/structure/diagnose.py block_advice calls a zero mass a dead point",
    strict=False,
)
def test_a_massless_car_axis_is_not_called_a_dead_point():
    """M = 0 makes the accelerations undetermined (the null vector holds only second
    derivatives); the advice is a dead point and a state_priority on 'car'."""
    with pytest.raises(ac.StructureError) as err:
        ac.compile(ivp.car_axis(M=0.0))
    text = str(err.value)
    assert "der(car.v_xl)" in text  # the undetermined accelerations are listed
    assert not any(word in text for word in ELECTRICAL)
    assert "dead point" not in text and "mass" in text
