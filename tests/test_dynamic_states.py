"""Dynamic state selection: mechanisms whose chosen states have dead points on the way run
through them by switching to another choice (closure, energy and a closed form check)."""

import warnings

import numpy as np
import pytest

import acausal as ac
from components import rotational as rot
from examples.references import mechanisms as mech
from examples.references.pendulum import Pendulum
from solvers import simulate
from solvers.dynamic_states import abs_det

# the start values on the piston pin (slider-crank at 0 deg) or on the rocker (four-bar at
# 90 deg): the static choice keeps that coordinate, which has dead points on the way
ROCKER_STARTS = [
    mech.Variant(m, "rocker", drive, theta0)
    for m, theta0 in (("slider_crank", 0.0), ("four_bar", np.pi / 2))
    for drive in mech.DRIVES
]


@pytest.mark.parametrize("variant", ROCKER_STARTS, ids=lambda v: v.name)
def test_rocker_starts_run_through_their_dead_points(variant):
    model = ac.compile(variant.build())
    first = "pin.phi" if variant.mechanism == "slider_crank" else "B4.phi"
    assert model.states[0] == first and len(model.ir.alternatives) >= 1
    res = simulate(model, t_end=6.5, dt=0.01, rtol=1e-9, atol=1e-11)
    # without switching IDAS stopped at the first dead point (t = 0.155 to 0.71 s)
    assert mech.revolutions(res, variant) >= 10  # 10.6 to 17.6 measured
    assert mech.loop_closure(res, variant.mechanism) <= 1e-8  # measured up to 4e-10
    assert mech.energy_balance(res, variant) <= 1e-6  # measured up to 5e-8
    (t_switch, states), *more = res.state_switches
    assert not more and 0 < t_switch < 0.75
    assert first not in states


def test_the_same_motion_as_with_the_crank_chosen_statically():
    rocker = mech.Variant("slider_crank", "rocker", "torque", 0.0)
    crank = mech.Variant("slider_crank", "crank", "torque", 0.0)
    a = simulate(ac.compile(rocker.build()), t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    b = simulate(ac.compile(crank.build()), t_end=3.0, dt=0.01, rtol=1e-10, atol=1e-12)
    assert a.state_switches and not b.state_switches
    # a run that kept its states is read from them (lazily); one that switched, from the
    # named values of its pieces: the two paths agree below
    assert b.x is not None and a.x is None
    scale = np.max(np.abs(b["B1.phi"]))
    assert np.max(np.abs(a["B1.phi"] - b["B1.phi"])) / scale < 1e-7
    assert np.max(np.abs(a["B1.w"] - b["B1.w"])) / np.max(np.abs(b["B1.w"])) < 1e-6


def test_a_pendulum_started_level_swings_through_the_bottom():
    """Cartesian pendulum released level: y is the state at the start (x's choice is
    singular there) and singular at the bottom; it swings for 3 s, switching between x and
    y, with the rod length and the energy kept, and the period of the exact pendulum."""
    s = ac.System("pendulum")
    s.add(Pendulum("pend", x_start=1.0, y_start=0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.StateSelectionWarning)
        model = ac.compile(s)
    res = simulate(model, t_end=3.0, dt=1e-3, rtol=1e-10, atol=1e-12)
    assert len(res.state_switches) >= 4
    assert np.max(np.abs(res["pend.x"] ** 2 + res["pend.y"] ** 2 - 1)) <= 1e-9
    energy = (res["pend.vx"] ** 2 + res["pend.vy"] ** 2) / 2 + 9.81 * res["pend.y"]
    assert np.max(np.abs(energy)) <= 1e-6  # started at rest at height 0
    # released at 90 degrees: period 4 K(sin 45 deg) sqrt(L / g) = 7.4163 sqrt(1 / 9.81)
    from scipy.special import ellipk

    period = 4 * ellipk(0.5) * np.sqrt(1 / 9.81)
    back = res.t[np.argmax(np.where(res.t > period / 2, res["pend.x"], -np.inf))]
    assert abs(back - period) < 2e-3  # the grid's resolution


def test_a_failure_keeps_the_trajectory_and_says_it_is_not_a_dead_point():
    # a torque 1 / (0.3 - t) on the crank blows the motion up just before t = 0.3
    variant = mech.Variant("four_bar", "crank", "torque", 0.0)
    s = variant.build()
    kick = rot.Torque("kick", tau=0.01 / (0.3 - ac.time))
    inertia = next(c for c in s.components if c.name == "inertia")
    s.connect(kick.flange, inertia.flange_a)
    model = ac.compile(s)
    with pytest.raises(ac.SimulationError) as info:  # 5,000 steps: the limit met in 0.3 s
        simulate(model, t_end=1.0, dt=0.01, rtol=1e-9, atol=1e-11, max_steps=5_000)
    err = info.value
    assert "not a dead point of the states" in str(err)
    assert "maximum number of steps within one output interval" in str(err)
    assert "Try a tighter" not in str(err)
    partial = err.result
    assert 0.25 <= partial.t[-1] < 0.3 and abs(err.time - 0.3) < 1e-3
    before = simulate(model, t_end=0.25, dt=0.01, rtol=1e-9, atol=1e-11)
    n = len(before.t)
    assert np.max(np.abs(partial["B1.phi"][:n] - before["B1.phi"])) < 1e-7


def test_a_rocker_start_with_the_other_angles_free_reaches_the_intended_assembly():
    # four-bar at rest with the rocker's angle fixed and the other joints' angles free
    # (their guesses 0: the links collinear, a singular point of the position loop). Newton
    # may end a turn away from the guesses (B1 at 2 pi: the same assembly), so the angles
    # are compared on the circle; then the run switches off the rocker's dead points
    variant = mech.Variant("four_bar", "rocker", "torque", 0.0)
    res = simulate(ac.compile(variant.build()), t_end=6.5, dt=0.01, rtol=1e-9, atol=1e-11)
    for joint, (phi, w) in variant.joints().items():
        turned = np.angle(np.exp(1j * (res[f"{joint}.phi"][0] - phi)))
        assert abs(turned) < 1e-9 and abs(res[f"{joint}.w"][0] - w) < 1e-9
    assert mech.revolutions(res, variant) >= 10  # 14.3 measured
    assert mech.loop_closure(res, variant.mechanism) <= 1e-8
    assert mech.energy_balance(res, variant) <= 1e-6


def test_the_damped_fallback_reaches_the_assembly_next_to_its_guesses():
    """Levenberg-Marquardt (``damped_start``, what runs where Newton fails) from the same
    start, the free angles moved off the collinear guess to 0.1: the intended assembly
    itself, each angle within 1e-9 (no turn added)."""
    from solvers import DAEFunctions, simulator
    from solvers.initialize import damped_start

    variant = mech.Variant("four_bar", "rocker", "torque", 0.0)
    model = ac.compile(variant.build())
    p = np.asarray(model.parameter_vector(), dtype=float)
    sim = simulator(model, np.linspace(0.0, 0.1, 3), 1e-9, 1e-11, p)
    x0, z0 = damped_start(sim.init, p)
    named = np.asarray(DAEFunctions(model).outputs(x0, z0, p, 0.0)).ravel()
    for joint, (phi, w) in variant.joints().items():
        assert abs(named[model.check_name(f"{joint}.phi")] - phi) < 1e-9
        assert abs(named[model.check_name(f"{joint}.w")] - w) < 1e-9


def test_start_values_that_leave_the_crank_free_are_an_error_naming_it():
    # the piston pin fixed at its extreme (crank at 90 degrees) with speed 0: nothing fixes
    # the crank's speed
    variant = mech.Variant("slider_crank", "rocker", "torque", np.pi / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ac.StateSelectionWarning)
        model = ac.compile(variant.build())
    with pytest.raises(ac.InitializationError) as info:
        simulate(model, t_end=1.0, dt=0.01)
    text = str(info.value)
    assert "the start values do not determine the start" in text
    loose = text.split("is singular in ")[1].split(" (they can move")[0].split(", ")
    assert "B1.w" in loose and "dead point" in text  # Newton's start: B1.phi too


def test_abs_det_by_blocks_matches_the_dense_determinant():
    """``abs_det`` (the product over the block-triangular form's diagonal blocks) against
    numpy's determinant of the dense matrices, on random patterns: many with several
    blocks, some structurally singular."""
    import casadi as cs

    rng = np.random.default_rng(1)
    singular = several = 0
    for trial in range(300):
        n = int(rng.integers(1, 9))
        dense_pattern = (rng.random((n, n)) < rng.uniform(0.15, 0.6)).astype(float)
        if trial % 3 == 0:
            dense_pattern += np.eye(n)
        sparsity = cs.sparsify(cs.DM(dense_pattern)).sparsity()
        nonzeros = rng.normal(size=(sparsity.nnz(), 5))
        rows, cols = sparsity.get_triplet()
        full = np.zeros((5, n, n))
        full[:, rows, cols] = nonzeros.T
        got = abs_det(sparsity, nonzeros)
        assert np.allclose(got, np.abs(np.linalg.det(full)), rtol=1e-10, atol=1e-12)
        singular += cs.sprank(sparsity) < n
        several += sparsity.btf()[0] > 1
    assert singular > 50 and several > 150  # measured 130 and 228
