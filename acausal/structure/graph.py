"""Bipartite equation-variable graphs: incidence, maximum matching, Dulmage-Mendelsohn.

The incidence matrix has a row per equation and a column per unknown, nonzero where the
unknown occurs in the equation. A maximum matching pairs equations with unknowns they
contain (scipy's Hopcroft-Karp). The Dulmage-Mendelsohn decomposition splits an imperfect
matching into an over-determined part (equations reachable from an unmatched equation by
alternating paths) and an under-determined part (unknowns reachable from an unmatched
unknown); these are what a structurally singular model's error message names.
"""

from __future__ import annotations

from collections import deque

import casadi as cs
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching


def incidence(residuals: list[cs.SX] | cs.SX, columns: list[cs.SX] | cs.SX) -> sp.csr_matrix:
    """Sparse 0/1 matrix: rows are residuals, columns are the given symbols (lists of
    scalars or column vectors)."""
    res = residuals if isinstance(residuals, cs.SX) else cs.vertcat(*residuals)
    cols = columns if isinstance(columns, cs.SX) else cs.vertcat(*columns)
    n, m = res.numel(), cols.numel()
    if n == 0 or m == 0:
        return sp.csr_matrix((n, m), dtype=np.int8)
    spy = cs.jacobian_sparsity(res, cols)
    colind = np.asarray(spy.colind(), dtype=np.int64)
    row = np.asarray(spy.row(), dtype=np.int64)
    data = np.ones(len(row), dtype=np.int8)
    return sp.csc_matrix((data, row, colind), shape=(n, m)).tocsr()


def match(inc: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Maximum matching: ``row_to_col`` and ``col_to_row`` arrays, -1 where unmatched."""
    n, m = inc.shape
    if n == 0 or m == 0:
        return np.full(n, -1), np.full(m, -1)
    row_to_col = maximum_bipartite_matching(inc, perm_type="column")
    col_to_row = np.full(m, -1)
    matched = row_to_col >= 0
    col_to_row[row_to_col[matched]] = np.nonzero(matched)[0]
    return row_to_col, col_to_row


def _alternating_reach(
    adj: sp.csr_matrix, start: np.ndarray, partner: np.ndarray
) -> tuple[list[int], list[int]]:
    """Nodes reachable from the unmatched nodes ``start`` by alternating paths: a node goes
    to any neighbour (``adj`` row), a neighbour to its matched ``partner``."""
    own, other = set(int(k) for k in start), set()
    queue = deque(own)
    while queue:
        k = queue.popleft()
        for n in adj.indices[adj.indptr[k] : adj.indptr[k + 1]]:
            if n not in other:
                other.add(int(n))
                m = partner[n]
                if m >= 0 and m not in own:
                    own.add(int(m))
                    queue.append(int(m))
    return sorted(own), sorted(other)


def dulmage_mendelsohn(
    inc: sp.csr_matrix, row_to_col: np.ndarray, col_to_row: np.ndarray
) -> tuple[tuple[list[int], list[int]], tuple[list[int], list[int]]]:
    """((over rows, over cols), (under rows, under cols)) of a maximum matching: what the
    unmatched equations, and the unmatched unknowns, reach by alternating paths."""
    over = _alternating_reach(inc, np.nonzero(row_to_col < 0)[0], col_to_row)
    under_cols, under_rows = _alternating_reach(
        inc.T.tocsr(), np.nonzero(col_to_row < 0)[0], row_to_col
    )
    return over, (under_rows, under_cols)
