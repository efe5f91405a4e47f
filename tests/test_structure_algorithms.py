"""The structural algorithms on hand-made incidence graphs (no symbols, no CasADi): the
answers are worked out by hand in the comments."""

import sys

import numpy as np
import pytest
import scipy.sparse as sp

from acausal.structure.algorithms import (
    StructuralFailure,
    _augment,
    blt,
    pantelides,
    states_and_algebraic,
)
from acausal.structure.dummies import dummy_derivatives
from acausal.structure.graph import dulmage_mendelsohn, match

X, Y, U, V, LAM = range(5)
# the planar pendulum in Cartesian coordinates:
#   e0: x' = u   e1: y' = v   e2: u' = -lam x   e3: v' = -lam y - g   e4: x^2 + y^2 = l^2
PENDULUM = [
    {(X, 1), (U, 0)},
    {(Y, 1), (V, 0)},
    {(U, 1), (LAM, 0), (X, 0)},
    {(V, 1), (LAM, 0), (Y, 0)},
    {(X, 0), (Y, 0)},
]


def structural_derivative(rows):
    """A callback that differentiates an equation structurally: each column keeps its
    order (a nonlinear term) and gains the next one. It records what it was asked."""
    asked = []

    def differentiate(e):
        asked.append(e)
        row = set(rows[e]) | {(v, o + 1) for v, o in rows[e]}
        rows.append(row)
        return row

    return differentiate, asked


def test_pantelides_differentiates_the_pendulum_constraint_twice():
    rows = [set(r) for r in PENDULUM]
    differentiate, asked = structural_derivative(rows)
    p = pantelides(PENDULUM, 5, differentiate)
    # e4 has no highest derivative of its own (x, y appear as x', y' elsewhere): it is
    # differentiated (e5 = e4'); e5 competes with e0 and e1 for x', y': the three are
    # differentiated (e6 = e5' = e4'', e7 = e0', e8 = e1'), raising x, y to order 2 and u, v
    # to order 1; then every equation has its own highest derivative.
    assert asked == [4, 0, 1, 5]
    assert p.child == {4: 5, 0: 6, 1: 7, 5: 8}
    assert p.hv == (2, 2, 1, 1, 0)
    assert p.orders == (0, 0, 0, 0, 0, 1, 1, 1, 2)
    assert p.index == 3  # e4 twice, plus one: lam appears undifferentiated only
    assert sorted(p.assign) == [X, Y, U, V, LAM]  # a perfect matching in the end
    assert len(set(p.assign.values())) == 5


@pytest.mark.parametrize("keep, other", [(X, Y), (Y, X)])
def test_dummy_derivatives_keep_the_cheap_to_keep_coordinate_as_state(keep, other):
    rows = [set(r) for r in PENDULUM]
    differentiate, _ = structural_derivative(rows)
    p = pantelides(PENDULUM, 5, differentiate)

    def cost(col):  # demoting ``keep``'s derivatives is dear
        return 1000.0 if col[0] == keep else 10.0

    dummies = dummy_derivatives(p.rows, p.child, p.hv, cost)
    # level 1: the most differentiated equations (e4'', e0', e1') pick 3 of the highest
    # derivatives {x'', y'', u', v'}: the cheap ones, other'', u', v'; level 2: e4' picks
    # among the predecessors of those of order >= 2, i.e. other'
    assert dummies == {(other, 1), (other, 2), (U, 1), (V, 1)}
    states, algebraic = states_and_algebraic(p.hv, dummies)
    assert states == [(keep, 0), (keep, 1)]  # two states: the pendulum's one degree of freedom
    assert len(algebraic) == sum(h + 1 for h in p.hv) - 2


def test_an_index_one_system_is_not_differentiated():
    # x' = -x + z, 0 = z - x^2: the algebraic equation has its own unknown z
    rows = [{(0, 1), (0, 0), (1, 0)}, {(1, 0), (0, 0)}]
    differentiate, asked = structural_derivative([set(r) for r in rows])
    p = pantelides(rows, 2, differentiate)
    assert asked == [] and p.child == {} and p.hv == (1, 0)
    assert p.index == 1  # no differentiation, plus one for the algebraic z
    states, algebraic = states_and_algebraic(p.hv, dummy_derivatives(p.rows, {}, p.hv, len))
    assert states == [(0, 0)] and algebraic == [(0, 1), (1, 0)]


def test_a_structurally_singular_subset_is_reported_not_looped_on():
    # e0: f(x) = 0, e1: g(x) = 0, e2: h(x, y, z) = 0 - two equations for x alone
    rows = [{(0, 0)}, {(0, 0)}, {(0, 0), (1, 0), (2, 0)}]
    inc = sp.csr_matrix(np.array([[1, 0, 0], [1, 0, 0], [1, 1, 1]], dtype=np.int8))
    row_to_col, col_to_row = match(inc)
    assert (row_to_col >= 0).sum() == 2  # a maximum matching leaves one equation out
    (over_rows, over_cols), (under_rows, under_cols) = dulmage_mendelsohn(
        inc, row_to_col, col_to_row
    )
    assert (over_rows, over_cols) == ([0, 1], [0])  # two equations constrain x only
    assert (under_rows, under_cols) == ([2], [1, 2])  # y and z share one equation
    differentiate, _ = structural_derivative([set(r) for r in rows])
    with pytest.raises(StructuralFailure, match="did not terminate") as info:
        pantelides(rows, 3, differentiate)
    assert info.value.equations == (1,)


def test_blt_orders_an_explicit_equation_a_loop_and_what_follows():
    # e0: a = 1; e1: a + b + c = 0; e2: b - c = 0; e3: c + d = 0 (unknowns a, b, c, d)
    inc = sp.csr_matrix(
        np.array([[1, 0, 0, 0], [1, 1, 1, 0], [0, 1, 1, 0], [0, 0, 1, 1]], dtype=np.int8)
    )
    blocks = blt(inc)
    assert [rows for rows, _ in blocks] == [[0], [1, 2], [3]]
    assert blocks[0][1] == [0] and sorted(blocks[1][1]) == [1, 2] and blocks[2][1] == [3]
    singular = sp.csr_matrix(np.array([[1, 0], [1, 0]], dtype=np.int8))
    with pytest.raises(StructuralFailure) as info:
        blt(singular)
    assert len(info.value.equations) == 1


def test_a_long_augmenting_path_needs_no_recursion_limit():
    """Equation k+1 holds unknown k and k+1, unknown k is matched to equation k+1, the last
    unknown is free: augmenting from equation 0 walks 5,000 equations deep."""
    n = 5000
    limit = sys.getrecursionlimit()
    assert n > limit  # a recursive search would overflow
    rows = [{(0, 0)}] + [{(k - 1, 0), (k, 0)} for k in range(1, n + 1)]
    hv = [0] * (n + 1)
    assign = {k: k + 1 for k in range(n)}
    assert _augment(0, rows, hv, assign, set(), set())
    # every unknown moved down one equation along the path, the last took the free one
    assert assign == {k: k for k in range(n + 1)}
    assert sys.getrecursionlimit() == limit
