"""The 2-D thermal plate (issue 35's reference model): its closed form against two other
methods (a sparse solve of the assembled Laplacian, the matrix exponential of the assembled
ODE), the compiled and simulated plate against the closed form, and the array-built plate
against the one built instance by instance."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spl

import acausal as ac
from examples.references.thermal_plate import (
    T_COLD,
    T_HOT,
    cell_names,
    plate,
    slowest_time_constant,
    steady_state,
    temperatures,
)
from solvers import simulate
from tests.shared import same_equations

RTOL = ATOL = 1e-8
#: IDAS keeps each step's local error near rtol |T| (<= 3.7e-6 K at T_hot); the plate is
#: a stable linear ODE, so earlier errors decay and the global error stays within a small
#: multiple of that: 10x is the bound (measured on 6 x 5 and 12 x 12: up to 3.9e-6 K during
#: the transient, 2e-8 K once settled).
SIM_TOL = 10 * RTOL * T_HOT
#: t_end = 25 tau: the slowest mode's remaining part, (T_hot - T_cold) exp(-25) = 1.1e-9 K,
#: is far below SIM_TOL, so the simulated end state is the steady state to SIM_TOL.
SETTLED = 25.0


def _laplacian(n: int, m: int) -> sp.csc_matrix:
    """``L_n (x) I + I (x) L_m`` with ``L_k = tridiag(-1, 2, -1)``, row-major cells."""

    def second_difference(k: int) -> sp.spmatrix:
        return sp.diags([-np.ones(k - 1), 2.0 * np.ones(k), -np.ones(k - 1)], [-1, 0, 1])

    return (
        sp.kron(second_difference(n), sp.eye(m)) + sp.kron(sp.eye(n), second_difference(m))
    ).tocsc()


def _border(n: int, m: int) -> np.ndarray:
    """``b``: the sum of the border temperatures next to each cell, shape ``(n, m)``."""
    b = np.zeros((n, m))
    b[0, :] += T_HOT
    b[-1, :] += T_COLD
    b[:, 0] += T_COLD
    b[:, -1] += T_COLD
    return b


@pytest.mark.parametrize("n, m", [(6, 5), (12, 12), (1, 4)])
def test_closed_form_steady_state_equals_the_sparse_solve(n, m):
    closed = steady_state(n, m)
    solved = spl.spsolve(_laplacian(n, m), _border(n, m).ravel()).reshape(n, m)
    np.testing.assert_allclose(closed, solved, rtol=1e-12, atol=0)
    # mirror-symmetric left to right, strictly between the border temperatures
    np.testing.assert_allclose(closed, closed[:, ::-1], rtol=1e-12, atol=0)
    assert np.all((closed > T_COLD) & (closed < T_HOT))


def test_closed_form_transient_equals_the_matrix_exponential():
    """``T(t) = T_ss + expm(-G L t / C) (T(0) - T_ss)`` of the assembled ODE, with C = 2,
    G = 0.5 (so that the rate G / C enters)."""
    n, m, C, G = 6, 5, 2.0, 0.5
    lap = _laplacian(n, m).toarray()
    ss = np.linalg.solve(lap, _border(n, m).ravel())
    tau = slowest_time_constant(n, m, C=C, G=G)
    eig = np.linalg.eigvalsh(lap)
    assert tau == pytest.approx(C / (G * eig[0]), rel=1e-12)
    for t in (0.0, 0.1 * tau, tau, 3.0 * tau):
        expected = ss + sla.expm(-G * lap * t / C) @ (T_COLD - ss)
        got = temperatures(t, n, m, C=C, G=G).ravel()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def _simulated(model: ac.Model, n: int, m: int, times: np.ndarray) -> tuple:
    res = simulate(model, grid=times, rtol=RTOL, atol=ATOL)
    cells = np.array([res[name] for name in cell_names(n, m)])  # (n m, len(times))
    return res, cells.T.reshape(len(times), n, m)


@pytest.mark.parametrize("n, m", [(6, 5), (12, 12)])
def test_simulated_plate_follows_the_closed_form_to_its_steady_state(n, m):
    tau = slowest_time_constant(n, m)
    times = np.array([0.0, 0.2 * tau, tau, 3.0 * tau, SETTLED * tau])
    res, cells = _simulated(ac.compile(plate(n, m)), n, m, times)
    for t, got in zip(times, cells):
        np.testing.assert_allclose(got, temperatures(t, n, m), rtol=0, atol=SIM_TOL)
    np.testing.assert_allclose(cells[-1], steady_state(n, m), rtol=0, atol=SIM_TOL)
    # energy balance at the steady state: the heat from the hot edge leaves through the
    # cold ones (port_a.Q = Q_flow is the heat into each border conductor from its cell)
    into_hot = sum(res[f"Ghot{j}.Q_flow"][-1] for j in range(1, m + 1))
    into_cold = sum(res[f"Gcold{k}.Q_flow"][-1] for k in range(1, m + 2 * n + 1))
    expected = np.sum(steady_state(n, m)[0, :] - T_HOT)  # G = 1
    assert abs(into_hot - expected) <= m * SIM_TOL
    assert abs(into_hot + into_cold) <= (2 * m + 2 * n) * SIM_TOL


def test_array_and_one_by_one_builds_give_the_same_model_and_results():
    """The grid wired by index arithmetic on arrays and the one wired cell by cell: the
    same names, states and equations (the arrays' in another order), the same results."""
    n, m = 6, 5
    by_array, one_by_one = ac.compile(plate(n, m)), ac.compile(plate(n, m, arrays=False))
    assert same_equations(by_array, one_by_one)
    assert sorted(by_array.states) == sorted(cell_names(n, m))
    times = np.linspace(0.0, 3.0 * slowest_time_constant(n, m), 7)
    _, a = _simulated(by_array, n, m, times)
    _, b = _simulated(one_by_one, n, m, times)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
