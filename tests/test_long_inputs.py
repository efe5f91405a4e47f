"""An RC circuit driven by a long sampled record, against its exact solution.

For a piecewise-linear input ``u`` the RC equation ``tau v' = u - v`` has a closed form on
each sample interval ``[t_k, t_k+1]`` where ``u = u_k + b_k (t - t_k)``:

    v(t) = u(t) - b_k tau + (v_k - u_k + b_k tau) exp(-(t - t_k) / tau),

so the response to a rough record (a seeded random walk: a kink at every sample) is known
to rounding. A C2 spline input is checked against scipy's ``solve_ivp`` at tight tolerances.
Timing is the benchmark's business (``bench/long_inputs.py``), not the tests'.
"""

import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

import acausal as ac
from examples.references.rc_record import TAU, R, exact_response, rc, record
from solvers import simulate, simulator


def test_linear_record_matches_the_closed_form():
    tk, uk = record(600, 6.0)
    model = ac.compile(rc((tk, uk)))
    res = simulate(model, t_end=6.0, dt=0.004, rtol=1e-10, atol=1e-12)
    exact = exact_response(tk, uk, res.t)
    # measured 1.7e-8 (the error scales with rtol: 6e-5 at 1e-6, 8e-7 at 1e-8)
    assert np.max(np.abs(res["C.v"] - exact)) < 1e-7
    # the input itself, and the current through the resistor
    np.testing.assert_allclose(res["V.v"], np.interp(res.t, tk, uk), atol=1e-12)
    np.testing.assert_allclose(res["R.i"], (res["V.v"] - res["C.v"]) / R, atol=1e-12)


def test_kinks_of_a_record_are_not_integration_segments():
    """IDAS steps over the record's kinks under error control: one segment, not one per
    sample (which would restart the integrator at every sample)."""
    tk, uk = record(400, 4.0)
    model = ac.compile(rc((tk, uk)))
    grid = np.linspace(0.0, 4.0, 201)
    sim = simulator(model, grid, 1e-8, 1e-10, np.asarray(model.parameter_vector()))
    assert len(sim.integrators) == 1


def test_spline_record_matches_solve_ivp():
    tk, uk = record(300, 3.0)
    model = ac.compile(rc(ac.spline(tk, uk)))
    res = simulate(model, t_end=3.0, dt=0.01, rtol=1e-9, atol=1e-11)
    cubic = CubicSpline(tk, uk)
    ref = solve_ivp(
        lambda t, v: (cubic(t) - v) / TAU,
        (0.0, 3.0),
        [0.0],
        method="DOP853",
        t_eval=res.t,
        rtol=1e-13,
        atol=1e-14,
    )
    assert np.max(np.abs(res["C.v"] - ref.y[0])) < 1e-7  # measured 2.5e-8
    np.testing.assert_allclose(res["V.v"], cubic(res.t), atol=1e-10)
