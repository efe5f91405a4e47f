"""The alias classes' union-find with signs and offsets (``acausal.structure.union_find``)
on variables numbered 0..n-1. Alias elimination's first passes unite all their plain rows
at once (a spanning forest by Kruskal's algorithm, scipy's); the same rows taken one by one
by ``add_row`` must give the same classes: roots, signs, constants, refused rows, fixed and
changed roots."""

import numpy as np
import pytest

from acausal.flat import Symbol
from acausal.structure.alias import preference_ranks
from acausal.structure.graph import substitute_rows
from acausal.structure.union_find import ONE, SignedUnionFind, axpy


def _symbols(n: int, rng: np.random.Generator) -> tuple[list[Symbol], set[str]]:
    """``n`` variables ``c<k>.x<k>`` or ``c<k>.p.v``, some with a fixed start, some with a
    state priority; and the names of those that are differentiated."""
    names = [f"c{k}.x{k}" if k % 3 else f"c{k}.p.v" for k in range(n)]
    symbols = [
        Symbol(
            q,
            "variable",
            None,
            q.split(".")[0],
            start=0.0 if rng.random() < 0.3 else None,
            fixed=bool(rng.random() < 0.2),
            state_priority=int(rng.integers(0, 2)),
        )
        for q in names
    ]
    return symbols, {q for q in names if rng.random() < 0.2}


def _classes(n: int, rng: np.random.Generator) -> SignedUnionFind:
    """Classes of the :func:`_symbols` (every one its own root), ranked by the preference
    of representatives."""
    symbols, differentiated = _symbols(n, rng)
    return SignedUnionFind(
        preference_ranks(symbols, differentiated),
        [s.name in differentiated for s in symbols],
        [k for k, s in enumerate(symbols) if s.fixed],
    )


def _rows(names: range, count: int, rng: np.random.Generator) -> list:
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


def _state(classes: SignedUnionFind) -> dict:
    out = {}
    for q in range(len(classes)):
        root, s, c = classes.find(q)
        out[q] = (root, s, dict(c), dict(classes.const.get(root, {})), root in classes.fixed)
    return out


def _arrays(rows: list) -> list[np.ndarray]:
    """The rows ``(row, variables, coefficients, offset)`` as the arrays ``a, b, ca, cb, h``
    of ``add_plain_rows`` (``b = -1``: one variable)."""
    return [
        np.array([qs[0] for _, qs, _, _ in rows]),
        np.array([qs[1] if len(qs) == 2 else -1 for _, qs, _, _ in rows]),
        np.array([coef[0] for _, _, coef, _ in rows]),
        np.array([coef[1] if len(coef) == 2 else 0.0 for _, _, coef, _ in rows]),
        np.array([h for *_, h in rows]),
    ]


@pytest.mark.parametrize("seed", range(40))
def test_plain_rows_united_at_once_as_one_by_one(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 40))
    one_by_one = _classes(n, np.random.default_rng(seed))
    at_once = _classes(n, np.random.default_rng(seed))
    rows = _rows(range(n), int(rng.integers(1, 2 * n)), rng)
    taken = set()
    for row, qs, coef, h in rows:
        if one_by_one.add_row(qs, coef, {ONE: h} if h else {}):
            taken.add(row)
    assert set(at_once.add_plain_rows(*_arrays(rows)).tolist()) == taken
    assert at_once.changed == one_by_one.changed
    expected, got = _state(one_by_one), _state(at_once)
    for q in expected:
        assert got[q][:2] == expected[q][:2] and got[q][4] == expected[q][4], q
        assert got[q][2] == expected[q][2] == {}, q
        for part in (got[q][3], expected[q][3]):
            assert set(part) <= {ONE}
        assert got[q][3].get(ONE, 0.0) == expected[q][3].get(ONE, 0.0), q  # to the bit


@pytest.mark.parametrize("seed", range(5))
def test_a_long_path_of_aliases_takes_the_signs_along_it(seed):
    """A path of 3,000 aliases ``x_k = +-x_(k+1)`` in shuffled order with a constant at one
    end: deep trees (the signs by many pointer-jumping steps), the same as one by one."""
    rng = np.random.default_rng(seed)
    n = 3000
    one_by_one = _classes(n, np.random.default_rng(seed))
    at_once = _classes(n, np.random.default_rng(seed))
    names = range(n)
    links = [
        ([names[k], names[k + 1]], [1.0, float(rng.choice([-1.0, 1.0]))]) for k in range(n - 1)
    ]
    links = [links[k] for k in rng.permutation(n - 1)]
    ground = next(q for q in reversed(names) if not one_by_one.differentiated[q])
    links.append(([ground], [2.0]))
    rows = [(row, qs, coef, 0.75 if len(qs) == 1 else 0.0) for row, (qs, coef) in enumerate(links)]
    taken = {
        row for row, qs, coef, h in rows if one_by_one.add_row(qs, coef, {ONE: h} if h else {})
    }
    assert set(at_once.add_plain_rows(*_arrays(rows)).tolist()) == taken == set(range(len(rows)))
    assert _state(at_once) == _state(one_by_one)


def _star_rows(rank: np.ndarray, rng: np.random.Generator) -> list:
    """Random rows ``ka a + kb b + w h = 0`` joining groups of the nodes ranked ``rank``
    in stars around their node of lowest rank (but now and then around another, or with a
    leaf in two rows: not stars), with a number, an atom or no offset; a few not
    alias-shaped (``|ka| != |kb|``)."""
    nodes = rng.permutation(len(rank)).tolist()
    rows = []
    while len(nodes) > 2:
        group = [nodes.pop() for _ in range(min(len(nodes), int(rng.integers(2, 5))))]
        group.sort(key=rank.__getitem__, reverse=bool(rng.random() < 0.03))
        hub, leaves = group[0], group[1:]
        if rng.random() < 0.03:
            leaves.append(int(rng.integers(len(rank))))
        for leaf in (q for q in leaves if q != hub):
            ka = float(rng.choice([-2.0, 1.0, 3.0]))
            kb = ka * float(rng.choice([-1.0, 1.0])) if rng.random() < 0.9 else 2.5 * ka
            atom = int(rng.choice([ONE - 1, ONE, 0, 1, 2]))
            w = float(rng.normal()) if atom == ONE else 1.0
            a, b = (hub, leaf) if rng.random() < 0.5 else (leaf, hub)
            rows.append((len(rows), [a, b], [ka, kb], atom, w))
    return [rows[k] for k in rng.permutation(len(rows))]


@pytest.mark.parametrize("seed", range(60))
def test_star_rows_united_at_once_as_one_by_one(seed):
    """Rows with offsets joining classes in stars (the offsets' passes: a body's centre and
    its flanges) taken all at once by ``add_star_rows`` as ``add_row`` takes them one by one
    (roots, signs, offsets and constants to the bit, fixed and changed roots); where they
    are not stars, nothing is taken and nothing changes."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 60))
    one_by_one = _classes(n, np.random.default_rng(seed))
    at_once = _classes(n, np.random.default_rng(seed))
    for classes in (one_by_one, at_once):  # (some classes already joined, one constant)
        classes.fixed = {q for q in classes.fixed if q % 3 == 0}  # (two in a star: rarer)
        classes.add_row([0, 1], [1.0, -1.0], {ONE: 0.5})
        classes.add_row([2], [2.0], {3: 1.0}) if not classes.differentiated[2] else None
        classes.take_changed()
    roots = [q for q in range(n) if one_by_one.find(q)[0] == q and q not in one_by_one.const]
    rows = _star_rows(one_by_one.rank[roots], rng)
    for row in rows:
        row[1][:] = [roots[q] for q in row[1]]
    before = _state(at_once)
    arrays = [np.array(x) for x in zip(*[(*qs, *coef, atom, w) for _, qs, coef, atom, w in rows])]
    got = at_once.add_star_rows(*arrays) if rows else None
    taken = {
        row
        for row, qs, coef, atom, w in rows
        if one_by_one.add_row(qs, coef, {atom: w} if atom >= ONE else {})
    }
    if got is None:
        assert _state(at_once) == before and not at_once.changed
        return
    assert {rows[k][0] for k in got.tolist()} == taken
    assert at_once.changed == one_by_one.changed
    assert _state(at_once) == _state(one_by_one)


def test_ranks_order_representatives_by_the_preference_rules():
    """``preference_ranks`` against a sort by the rules' tuple: differentiated, fixed start,
    state priority, any start, a component's own variable, short local name, declaration
    order."""
    rng = np.random.default_rng(7)
    symbols, differentiated = _symbols(200, rng)

    def key(k: int) -> tuple:
        s = symbols[k]
        local = s.name[len(s.component) + 1 :]
        return (
            s.name not in differentiated,
            not s.fixed,
            -s.state_priority,
            s.start is None,
            "." in local,
            len(local),
            k,
        )

    expected = sorted(range(len(symbols)), key=key)
    assert np.argsort(preference_ranks(symbols, differentiated)).tolist() == expected


@pytest.mark.parametrize("seed", range(20))
def test_all_aliases_at_once_as_found_one_by_one(seed):
    """Every variable's ``sign * root + offset`` from ``resolve`` (roots and signs by
    pointer jumping over all variables, an offset composed only where one lies on the
    way) against ``find`` one variable at a time on a copy: classes made by random alias
    rows with numeric and symbolic (atom) offsets and constants, the unions in random
    order so that the trees grow deep; constant classes give no root (-1) and their constant."""
    import copy

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    classes = _classes(n, rng)
    classes.fixed = set()  # (fixed starts refuse symbolic offsets: none here, more unions)
    names = range(n)
    for _ in range(int(rng.integers(n // 2, 2 * n))):
        offset = {}
        if rng.random() < 0.5:
            offset[ONE] = float(rng.normal())
        if rng.random() < 0.3:
            offset[int(rng.integers(0, 5))] = float(rng.choice([-1.0, 0.5, 2.0]))
        if rng.random() < 0.85:
            a, b = rng.choice(n, 2, replace=False)
            classes.add_row([names[a], names[b]], [1.0, float(rng.choice([-1.0, 1.0]))], offset)
        else:
            q = next(q for q in rng.permutation(n) if not classes.differentiated[q])
            classes.add_row([int(q)], [float(rng.choice([-2.0, 1.0]))], offset)
    one_by_one = copy.deepcopy(classes)
    expected = []
    for q in names:
        root, s, c = one_by_one.find(q)
        const = one_by_one.const.get(root)
        expected.append((q, None, s, axpy(c, s, const)) if const is not None else (q, root, s, c))
    assert classes.offset and classes.const  # offsets and constants were made
    qs, roots, signs, terms = classes.resolve(names)
    offsets = [{} for _ in names]
    for k, col, w in zip(terms.rows.tolist(), terms.cols.tolist(), terms.weights.tolist()):
        offsets[k][col - 1] = w  # (column 0 the number 1, ONE = -1)
    got = zip(qs.tolist(), [None if r < 0 else r for r in roots.tolist()], signs.tolist(), offsets)
    assert [(q, r, s, dict(c)) for q, r, s, c in got] == [
        (q, r, s, dict(c)) for q, r, s, c in expected
    ]


def test_substituting_the_rows_that_hold_the_symbols_is_substituting_all():
    import casadi as cs

    x, y = cs.SX.sym("x", 3), cs.SX.sym("y", 2)
    res = cs.vertcat(x[0] - y[0], cs.sin(y[1]), x[1] * x[2] + 1, y[0] * y[1], x[2])
    old, new = x[[0, 2]], cs.vertcat(y[1] + 2.0, -y[0])
    rows = [0, 2, 4]  # those holding x0 or x2
    for vector in (res, cs.vertcat(res, cs.SX(1, 1))):  # dense, and with a structural zero
        got, want = substitute_rows(vector, rows, old, new), cs.substitute(vector, old, new)
        assert got.sparsity() == want.sparsity()
        assert all(cs.is_equal(a, b, 5) for a, b in zip(cs.vertsplit(got), cs.vertsplit(want)))
    assert str(substitute_rows(res, rows, old, new)[4]) == "(-y_0)"
    assert str(res[4]) == "x_2"  # the argument is left as it was
