"""The compiler's symbolic linear solve (``acausal.structure.linsolve``) against a 40-digit
solve (mpmath): dense, sparse (block-triangular after permutation) and triangular systems,
with rows of very different sizes, as a mechanism's mass and constraint rows are."""

import casadi as cs
import mpmath
import numpy as np
import pytest

from acausal.structure.linsolve import solve


@pytest.mark.parametrize("n", [2, 3, 5, 12, 25])
def test_symbolic_solve_matches_lu_to_the_condition_number(n):
    rng = np.random.default_rng(n)
    for trial in range(6):
        u, _ = np.linalg.qr(rng.normal(size=(n, n)))
        v, _ = np.linalg.qr(rng.normal(size=(n, n)))
        a = u @ np.diag(np.logspace(0, -4, n)) @ v.T
        if trial % 3 == 1:  # sparse: a permuted block-triangular pattern
            a[rng.random((n, n)) < 0.6] = 0.0
            a += np.diag(rng.uniform(0.5, 2.0, n))
            a = a[rng.permutation(n)][:, rng.permutation(n)]
        elif trial % 3 == 2:  # triangular
            a = np.tril(a) + np.diag(rng.uniform(0.5, 2.0, n))
        a = np.diag(np.logspace(-5, 2, n)[rng.permutation(n)]) @ a  # rows of unequal size
        b = rng.normal(size=n)
        pattern = cs.DM(a != 0).full() != 0
        sym = cs.SX.sym("a", n, n)
        sparse = cs.SX(cs.Sparsity.triplet(n, n, *np.nonzero(pattern)), 0)
        sparse[np.nonzero(pattern)[0].tolist(), np.nonzero(pattern)[1].tolist()] = 1
        entries = sym * sparse
        rhs = cs.SX.sym("b", n)
        f = cs.Function("f", [sym, rhs], [solve(entries, rhs)])
        got = np.asarray(f(a, b)).ravel()
        with mpmath.workdps(40):
            exact = np.array(
                mpmath.lu_solve(mpmath.matrix(a.tolist()), mpmath.matrix(b.tolist())).tolist(),
                dtype=float,
            ).ravel()
        equilibrated = a / np.linalg.norm(a, axis=1, keepdims=True)
        # backward stable on the equilibrated rows: n * cond * eps, with a margin of 10
        bound = 10 * n * np.linalg.cond(equilibrated) * np.finfo(float).eps
        assert np.max(np.abs(got - exact)) / np.max(np.abs(exact)) <= bound
