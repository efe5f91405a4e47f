"""The structure stages' sparse helpers (``acausal.structure.graph``) against scipy's own
constructor and indexing: the same matrices, index types and behaviour (they build csr
matrices without scipy's checks, so this is where a change of scipy would show)."""

import numpy as np
import pytest
import scipy.sparse as sp

from acausal.structure.graph import csr, no_entries, row_entries, take_columns, take_rows


def _random(seed: int, shape: tuple[int, int], density: float) -> sp.csr_matrix:
    return sp.random(*shape, density=density, format="csr", random_state=seed, dtype=float)


def _same(a: sp.csr_matrix, b: sp.csr_matrix) -> bool:
    return (
        a.shape == b.shape
        and a.indices.dtype == b.indices.dtype
        and a.indptr.dtype == b.indptr.dtype
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.data, b.data)
    )


@pytest.mark.parametrize(
    "seed, shape, density", [(0, (7, 5), 0.4), (1, (30, 40), 0.1), (2, (1, 9), 0.5)]
)
def test_csr_is_scipys_matrix_without_checks(seed, shape, density):
    m = _random(seed, shape, density)
    mine = csr(m.data, m.indices.astype(np.int64), m.indptr.astype(np.int64), shape)
    theirs = sp.csr_matrix((m.data, m.indices, m.indptr), shape=shape)
    assert _same(mine, theirs)
    # it behaves as one: products, transposes, conversions, indexing, sums
    v = np.arange(shape[1], dtype=float)
    assert np.allclose(mine @ v, theirs @ v)
    assert np.array_equal(mine.T.toarray(), theirs.T.toarray())
    assert np.array_equal(mine.tocsc().toarray(), theirs.toarray())
    assert np.array_equal(
        mine[: shape[0] // 2 + 1].toarray(), theirs[: shape[0] // 2 + 1].toarray()
    )
    assert np.array_equal((mine @ theirs.T).toarray(), (theirs @ theirs.T).toarray())
    assert mine.nnz == theirs.nnz and np.allclose(mine.sum(axis=1), theirs.sum(axis=1))
    assert _same(no_entries(*shape), sp.csr_matrix(shape, dtype=np.int8))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rows_and_columns_taken_as_scipy_indexes(seed):
    m = _random(seed, (25, 18), 0.2)
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, 25, 12)  # (repeats allowed, any order)
    cols = rng.permutation(18)[:7]  # (distinct, any order)
    assert _same(take_rows(m, rows), m[rows])
    assert np.array_equal(take_columns(m, cols).toarray(), m[:, cols].toarray())
    counts, places = row_entries(m.indptr, rows)
    assert np.array_equal(counts, np.diff(m.indptr)[rows])
    assert np.array_equal(m.indices[places], m[rows].indices)
    assert take_rows(m, np.zeros(0, dtype=np.int64)).shape == (0, 18)
