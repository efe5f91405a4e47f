"""``learning.levenberg_marquardt``: a linear problem against numpy's least squares, a
nonlinear fit against scipy's MINPACK, and its stopping rules."""

import numpy as np
import pytest
import scipy.optimize as so

from learning.optimization.levenberg_marquardt import levenberg_marquardt


def test_a_linear_problem_reaches_the_least_squares_solution():
    """``r = A x - b``: the minimizer is numpy's ``lstsq`` (columns scaled over six decades,
    which the column scaling must absorb)."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(200, 12)) * np.logspace(-3, 3, 12)
    b = rng.normal(size=200)
    out = levenberg_marquardt(lambda x: (A @ x - b, A), np.zeros(12), max_nfev=50)
    want = np.linalg.lstsq(A, b, rcond=None)[0]
    assert np.allclose(out.x, want, rtol=1e-8, atol=0)
    assert out.cost == pytest.approx(0.5 * np.sum((A @ want - b) ** 2), rel=1e-12)
    assert out.nfev < 10


def _decays(x, t, y):
    """Two exponential decays, ``a1 exp(-k1 t) + a2 exp(-k2 t) - y``, and their Jacobian."""
    a1, k1, a2, k2 = x
    e1, e2 = np.exp(-k1 * t), np.exp(-k2 * t)
    r = a1 * e1 + a2 * e2 - y
    return r, np.column_stack([e1, -a1 * t * e1, e2, -a2 * t * e2])


def test_a_nonlinear_fit_finds_minpacks_minimum():
    """A noisy two-exponential fit (ill-conditioned: the decays overlap) from a poor start:
    the same minimum as scipy's MINPACK Levenberg-Marquardt, to its tolerances."""
    rng = np.random.default_rng(1)
    t = np.linspace(0, 5, 400)
    y = 2.0 * np.exp(-1.3 * t) + 0.7 * np.exp(-0.25 * t) + 1e-3 * rng.normal(size=t.size)
    x0 = np.array([1.0, 2.0, 1.0, 0.1])
    out = levenberg_marquardt(lambda x: _decays(x, t, y), x0, max_nfev=200)
    ref = so.least_squares(
        lambda x: _decays(x, t, y)[0],
        x0,
        jac=lambda x: _decays(x, t, y)[1],
        method="lm",
        x_scale="jac",
    )
    assert ref.success
    assert out.cost == pytest.approx(ref.cost, rel=1e-8)
    assert np.allclose(out.x, ref.x, rtol=1e-5)
    assert "below" in out.message and out.nfev < 200


def test_it_stops_at_max_nfev_and_refuses_a_nonfinite_start():
    t = np.linspace(0, 5, 50)
    y = np.exp(-t)
    out = levenberg_marquardt(lambda x: _decays(x, t, y), np.array([5.0, 3.0, 0.0, 1.0]), 3)
    assert out.nfev == 3 and out.message == "3 evaluations used"
    with pytest.raises(ValueError, match="not finite at the start"):
        levenberg_marquardt(lambda x: (np.full(3, np.nan), np.ones((3, 1))), np.zeros(1), 5)
