"""Alias elimination's first passes unite all their plain rows at once (a spanning forest
by Kruskal's algorithm, scipy's); the same rows taken one by one by ``_try_alias`` must
give the same classes: roots, signs, constants, refused rows, fixed and changed roots."""

import numpy as np
import pytest

from acausal.flatten import Symbol
from acausal.structure.alias import ONE, _Classes, _try_alias, _unite_plain


def _classes(n: int, rng: np.random.Generator) -> _Classes:
    """Classes of ``n`` variables ``c<k>.x<k>`` (every one its own root), some with a fixed
    start, some differentiated, some with a state priority."""
    names = [f"c{k}.x{k}" if k % 3 else f"c{k}.p.v" for k in range(n)]
    symbols = {
        q: Symbol(
            q,
            "variable",
            None,
            q.split(".")[0],
            start=0.0 if rng.random() < 0.3 else None,
            fixed=bool(rng.random() < 0.2),
            state_priority=int(rng.integers(0, 2)),
        )
        for q in names
    }
    classes = object.__new__(_Classes)
    classes.symbols = symbols
    classes.parent = {q: q for q in names}
    classes.sign = {q: 1.0 for q in names}
    classes.offset, classes.const, classes.changed = {}, {}, set()
    classes.fixed = {q for q in names if symbols[q].fixed}
    classes.deriv = {q: f"der({q})" for q in names if rng.random() < 0.2}
    classes._order = {q: k for k, q in enumerate(names)}
    classes._differentiated = frozenset(classes.deriv)
    classes._keys = {}
    return classes


def _rows(names: list[str], count: int, rng: np.random.Generator) -> list:
    """Random plain rows: ``k a + k' b = 0`` (mostly ``|k| = |k'|``, so cycles and parallel
    rows occur) and ``k a + h = 0`` (a constant, sometimes zero)."""
    rows = []
    for row in range(count):
        k = float(rng.choice([-2.0, -1.0, 1.0, 3.0]))
        if rng.random() < 0.75:
            a, b = rng.choice(len(names), 2, replace=False)
            other = k * float(rng.choice([-1.0, 1.0])) if rng.random() < 0.9 else 2.5 * k
            rows.append((row, [names[a], names[b]], [k, other], 0.0))
        else:
            a = int(rng.integers(len(names)))
            h = 0.0 if rng.random() < 0.2 else float(rng.normal())
            rows.append((row, [names[a]], [k], h))
    return rows


def _state(classes: _Classes) -> dict:
    out = {}
    for q in classes.parent:
        root, s, c = classes.find(q)
        out[q] = (root, s, dict(c), dict(classes.const.get(root, {})), root in classes.fixed)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_plain_rows_united_at_once_as_one_by_one(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    one_by_one = _classes(n, np.random.default_rng(seed))
    at_once = _classes(n, np.random.default_rng(seed))
    rows = _rows(list(one_by_one.parent), int(rng.integers(1, 2 * n)), rng)
    taken = set()
    for row, qs, coef, h in rows:
        if _try_alias(qs, coef, {ONE: h} if h else {}, one_by_one):
            taken.add(row)
    assert _unite_plain(rows, at_once) == taken
    assert at_once.changed == one_by_one.changed
    expected, got = _state(one_by_one), _state(at_once)
    for q in expected:
        assert got[q][:2] == expected[q][:2] and got[q][4] == expected[q][4], q
        assert got[q][2] == expected[q][2] == {}, q
        for part in (got[q][3], expected[q][3]):
            assert set(part) <= {ONE}
        assert got[q][3].get(ONE, 0.0) == expected[q][3].get(ONE, 0.0), q  # to the bit
