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


@pytest.mark.parametrize("seed", range(8))
def test_least_cost_dummies_are_those_of_an_assignment_solver(seed):
    """The greedy least-weight full matching against scipy's assignment solver (LAPJVsp)
    on random sparse blocks: the same total weight, and (distinct weights: the optimum is
    unique) the same columns; a block without a full matching is a StructuralFailure."""
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    from acausal.structure.dummies import least_cost_columns

    rng = np.random.default_rng(seed)
    m, n = 40 + seed, 70 + 3 * seed
    cols = [(j, 1) for j in range(n)]
    weights = rng.permutation(n).astype(float) + rng.random(n)
    # a perfect matching hidden in a random pattern, then sparse extras
    pairs = {(i, int(j)) for i, j in enumerate(rng.permutation(n)[:m])}
    pairs |= {(int(rng.integers(m)), int(rng.integers(n))) for _ in range(2 * m)}
    rows = [frozenset(cols[j] for i2, j in pairs if i2 == i) for i in range(m)]
    picked = least_cost_columns(list(range(m)), cols, rows, weights.tolist())
    i_idx, j_idx = zip(*sorted(pairs))
    mat = sp.csr_matrix((weights[list(j_idx)], (i_idx, j_idx)), shape=(m, n))
    _, solver = min_weight_full_bipartite_matching(mat)
    assert picked == sorted(solver.tolist())
    assert len(picked) == m
    # two equations holding only one shared column: no full matching
    rows_bad = [*rows[:-2], frozenset({cols[0]}), frozenset({cols[0]})]
    with pytest.raises(StructuralFailure):
        least_cost_columns(list(range(m)), cols, rows_bad, weights.tolist())


def _blt_by_networkx(inc):
    """The BLT as networkx computes it (the compiler's former implementation): strongly
    connected components of the dependency graph, condensed, in topological order."""
    import networkx as nx

    row_to_col, col_to_row = match(inc)
    g = nx.DiGraph()
    g.add_nodes_from(range(inc.shape[0]))
    for r in range(inc.shape[0]):
        for c in inc.indices[inc.indptr[r] : inc.indptr[r + 1]]:
            if col_to_row[c] != r:
                g.add_edge(int(col_to_row[c]), r)
    cond = nx.condensation(g)
    out = []
    for node in nx.topological_sort(cond):
        members = sorted(cond.nodes[node]["members"])
        out.append((members, [int(row_to_col[r]) for r in members]))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_blt_blocks_and_order_are_those_of_networkx(seed):
    """Random square incidences with a perfect matching (the diagonal) and loops: the sparse
    strongly connected components come out as the same blocks in the same order."""
    rng = np.random.default_rng(seed)
    n = 60
    extra = sp.random(n, n, density=0.03, random_state=rng, format="csr")
    inc = (sp.eye(n, format="csr") + extra).astype(bool).astype(np.int8)
    perm = rng.permutation(n)  # the matching is not the diagonal of the rows as given
    inc = inc[perm].tocsr()
    inc.sort_indices()
    blocks = blt(inc)
    assert blocks == _blt_by_networkx(inc)
    assert any(len(rows) > 1 for rows, _ in blocks)  # loops were made


def test_incidence_of_a_dense_row_and_a_dense_column():
    """A ground's current balance (every flow) and its potential (in every branch): found
    by parts, equal to CasADi's pattern of the whole."""
    import casadi as cs

    from acausal.structure.graph import incidence, pattern

    n = 700
    x = cs.SX.sym("x", n)
    rows = cs.vertcat(x[1:] - 2 * x[:-1] + x[0], cs.sum1(x))
    got = incidence(rows, x)
    assert (got != pattern(rows, x)).nnz == 0
    assert got[:, 0].nnz == n and got[n - 1].nnz == n


@pytest.mark.parametrize("ladder", ["rc", "chain"])
def test_incidence_of_the_ladders_equals_casadis_pattern(ladder):
    """The ladders' flattened equations (over 512 rows: the grouped path), the components'
    own rows (no dense column) and all rows (a ground's or a wall's balance and its
    potential: dense), against CasADi's pattern of the whole, entry for entry."""
    import casadi as cs

    from acausal.flatten import flatten
    from acausal.structure.graph import incidence, pattern
    from examples.ladders import chain, rc_ladder

    flat = flatten({"rc": rc_ladder, "chain": chain}[ladder](300))
    cols = cs.vertcat(flat.symbols.stack, flat.t)
    own = flat.residuals.numel() - (len(flat.connection_entries.indptr) - 1)
    for res in (flat.residuals[:own], flat.residuals):
        expected = pattern(res, cols)
        got = incidence(res, cols)
        assert res.numel() > 512 and expected.nnz > res.numel()
        assert got.shape == expected.shape and (got != expected).nnz == 0


def test_regular_square_matrices_block_by_block():
    from acausal.structure.dummies import independent_columns, independent_square

    # lower triangular with a 2 x 2 loop: regular; with a singular loop: not
    mat = np.array([[2.0, 0, 0, 0], [1, 1, 1, 0], [0, 1, 1 + 1e-3, 0], [5, 0, 1, 3]])
    assert independent_square(sp.csr_matrix(mat))
    assert len(independent_columns(mat, range(4))) == 4  # the dense test agrees
    mat[2, 2] = 1.0
    assert not independent_square(sp.csr_matrix(mat))
    assert len(independent_columns(mat, range(4))) == 3
    # structurally singular: an empty column
    mat[:, 3] = 0.0
    assert not independent_square(sp.csr_matrix(mat))
