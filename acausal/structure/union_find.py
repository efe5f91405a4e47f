"""Alias classes as a union-find with signs and offsets, on variables numbered ``0..n-1``.

Every variable ``q`` hangs from a parent: ``q = sign[q] * parent[q] + offset[q]`` with
``sign = +-1``; a root is its own parent (sign 1, offset zero). A class (a tree) may have a
constant: its root's value. :meth:`SignedUnionFind.find` gives ``(root, s, c)`` with
``q = s * root + c`` and attaches the nodes on the way to the root (path compression).

A *row* is an equation ``ca a + cb b + h = 0`` of two variables with ``|ca| = |cb|`` (the
alias ``a = -(cb/ca) b - h/ca``) or ``ca a + h = 0`` of one variable that is not
differentiated (the constant ``a = -h/ca``). :meth:`SignedUnionFind.add_row` records one;
it refuses a row that closes a cycle (both variables in one class, or a second constant for
a class: redundant or contradictory, the caller keeps it as an equation), and it keeps
every fixed start in an equation: a class holding a fixed start (:attr:`fixed`) takes no
constant that depends on parameters, and two such classes join only at a zero offset.
When two classes join, the root of lower :attr:`rank` stays root.

Offsets and constants are sums ``sum_k w_k h_k`` of numbers ``w_k`` times *atoms*: the
number 1 (:data:`ONE`) and atoms ``0, 1, ...`` whose meaning is the caller's (for alias
elimination: expressions of parameters). One is a mapping atom -> weight (:data:`Lin`),
never changed in place; :data:`ZERO` is zero.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import NamedTuple, NoReturn

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components, minimum_spanning_tree

Lin = Mapping[int, float]  # an offset: atom -> weight
ONE = -1  # the atom of the number 1


class _Zero(dict):
    """The zero offset: an empty mapping that cannot change; copies and pickles are it (a
    dict, so that its length, truth and lookups cost no Python call)."""

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("ZERO cannot change")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self) -> str:
        return "ZERO"


ZERO: Lin = _Zero()


def axpy(a: Lin, s: float, b: Lin) -> Lin:
    """The offset ``a + s b`` (a new mapping unless one of them is zero)."""
    if not b:
        return a
    if not a:
        return {k: s * w for k, w in b.items()}
    out = dict(a)
    for k, w in b.items():
        total = out.get(k, 0.0) + s * w
        if total == 0.0:
            out.pop(k, None)
        else:
            out[k] = total
    return out


def scaled(lin: Lin, s: float) -> Lin:
    """The offset ``s lin``."""
    return {k: s * w for k, w in lin.items()} if lin else ZERO


def holds_atoms(lin: Lin | None) -> bool:
    """Whether an offset holds an atom other than :data:`ONE` (depends on parameters)."""
    return bool(lin) and not (len(lin) == 1 and ONE in lin)


class SignedUnionFind:
    """Alias classes of ``len(rank)`` variables, each its own class at the start.

    ``rank``: each variable's place in the order of preference of representatives (0
    first; distinct); ``differentiated``: whether a variable is differentiated (it becomes
    no constant; the caller marks more as their derivatives appear); ``fixed``: the
    variables with a fixed start value.

    Each variable's ``parent`` and ``sign`` are C arrays (:mod:`array`): read and written
    one by one as fast as a list's items, and seen as numpy arrays without a copy
    (:meth:`_parents`) by the operations on many variables at once."""

    def __init__(self, rank: np.ndarray, differentiated: np.ndarray, fixed: Iterable[int]) -> None:
        n = len(rank)
        self.rank = np.asarray(rank)
        self.differentiated = np.array(differentiated, dtype=bool)
        self.parent = array("q", np.arange(n, dtype=np.int64).tobytes())
        self.sign = array("d", np.ones(n).tobytes())
        self.offset: dict[int, Lin] = {}  # q -> its offset from its parent (absent: zero)
        self.const: dict[int, Lin] = {}  # root -> the class's constant
        #: roots of classes with a member's fixed start
        self.fixed: set[int] = set(fixed)
        #: roots attached or made constant since the caller last took them (:meth:`take_changed`)
        self.changed: set[int] = set()

    def __len__(self) -> int:
        return len(self.parent)

    def _parents(self) -> tuple[np.ndarray, np.ndarray]:
        """Every variable's parent and sign as numpy arrays sharing their memory (a write
        to them is one to the union-find)."""
        return np.frombuffer(self.parent, dtype=np.int64), np.frombuffer(self.sign)

    def take_changed(self) -> set[int]:
        """The variables attached or made constant since the last call."""
        changed, self.changed = self.changed, set()
        return changed

    def find(self, q: int) -> tuple[int, float, Lin]:
        """``(root, s, c)`` with ``q = s * root + c``; every node on the way is then
        attached to the root directly (path compression)."""
        parent, sign, offset = self.parent, self.sign, self.offset
        up = parent[q]
        if up == q:
            return q, 1.0, ZERO
        if parent[up] == up:  # already attached to the root
            return up, sign[q], offset.get(q, ZERO)
        path = [q]
        root = up
        while parent[root] != root:
            path.append(root)
            root = parent[root]
        s, c = 1.0, ZERO
        for node in reversed(path):  # node = sign * (its old parent, = s root + c) + offset
            ns = sign[node]
            c = axpy(offset.get(node, ZERO), ns, c)
            s *= ns
            parent[node], sign[node] = root, s
            self._set_offset(node, c)
        return root, s, c

    def _set_offset(self, q: int, lin: Lin) -> None:
        if lin:
            self.offset[q] = lin
        else:
            self.offset.pop(q, None)

    def alias_shaped(self, qs: Sequence[int], coef: Sequence[float]) -> bool:
        """Whether the row ``sum coef_k q_k + h = 0`` can be an alias (two variables,
        coefficients of one nonzero magnitude) or a constant (one variable that is not
        differentiated, a nonzero coefficient); whether it is one depends on the classes."""
        if coef[0] == 0.0:
            return False
        if len(qs) == 1:
            return not self.differentiated[qs[0]]
        return abs(coef[0]) == abs(coef[1])

    def add_row(self, qs: Sequence[int], coef: Sequence[float], offset: Lin) -> bool:
        """Record the row ``sum coef_k q_k + offset = 0`` (one or two variables) as an
        alias or a constant if it is one (module docstring); whether it was."""
        if not self.alias_shaped(qs, coef):
            return False
        if len(qs) == 1:
            return self._make_constant(qs[0], coef[0], offset)
        return self._unite(qs[0], qs[1], coef[0], coef[1], offset)

    def _make_constant(self, q: int, a: float, offset: Lin) -> bool:
        """``a q + offset = 0``: the class of ``q`` constant."""
        root, s, c = self.find(q)
        if root in self.const:
            return False  # a second constant for the class: keep as equation
        value = axpy(scaled(offset, -s / a), -s, c)  # s (q - c)
        if root in self.fixed and holds_atoms(value):
            return False
        self.const[root] = value
        self.changed.add(root)
        return True

    def _unite(self, qa: int, qb: int, ka: float, kb: float, offset: Lin) -> bool:
        """``ka qa + kb qb + offset = 0``: the classes of ``qa`` and ``qb`` joined."""
        const, fixed = self.const, self.fixed
        (ra, sa, ca), (rb, sb, cb) = self.find(qa), self.find(qb)
        if ra == rb:
            return False  # closes a cycle: redundant or contradictory, keep it
        if ra in const and rb in const:
            return False
        rel = -kb / ka  # qa = rel * qb + d0, d0 = -offset / ka
        # with qa = sa ra + ca, qb = sb rb + cb: ra = s rb + d
        s = sa * rel * sb
        d = axpy(axpy(scaled(offset, -sa / ka), sa * rel, cb), -sa, ca)
        if ra in fixed and rb in fixed and d:
            return False
        if (ra in fixed or rb in fixed) and (ra in const or rb in const):
            # the joined class's constant (ra = s rb + d): a fixed start against parameters?
            merged = axpy(d, s, const[rb]) if rb in const else axpy(const[ra], -1.0, d)
            if holds_atoms(merged):
                return False
        # attach the less preferred root under the other
        if self.rank[ra] < self.rank[rb]:
            self.parent[rb], self.sign[rb] = ra, s  # rb = s ra - s d (s = +-1)
            self._set_offset(rb, scaled(d, -s))
            if rb in const:
                const[ra] = axpy(d, s, const.pop(rb))
        else:
            self.parent[ra], self.sign[ra] = rb, s
            self._set_offset(ra, d)
            if ra in const:
                const[rb] = axpy(scaled(d, -s), s, const.pop(ra))
        if ra in fixed or rb in fixed:
            fixed.update((ra, rb))
        self.changed.update((ra, rb))
        return True

    def add_plain_rows(
        self, a: np.ndarray, b: np.ndarray, ca: np.ndarray, cb: np.ndarray, h: np.ndarray
    ) -> np.ndarray:
        """The rows ``ca a + cb b + h = 0`` (``b = -1``: none; ``h = 0`` where there are
        two variables; numeric offsets only), recorded as :meth:`add_row` would one by one
        in order, all at once; the positions of the rows taken, in increasing order. Their
        variables must be roots of classes without a constant.

        A row ``k a + k' b = 0`` is an edge between ``a`` and ``b``, a row ``k a + h = 0``
        an edge between ``a`` and a *ground* node. Taken one by one, a row is refused
        exactly when it closes a cycle (two constants for one class are a cycle through the
        ground): the rows taken are the spanning forest that Kruskal's algorithm builds
        from the edges weighted by their order. Each class's root is its member of lowest
        rank; its members' signs are the products of the edges' signs along the tree's
        paths; a class with an edge to the ground takes that edge's constant."""
        two = b >= 0
        index = np.flatnonzero(self._shaped(a, two, ca, cb))
        if not index.size:
            return index
        a, b, ca, cb, h, two = (x[index] for x in (a, b, ca, cb, h, two))
        rel = np.where(two, -cb / ca, h * (-1.0 / ca))  # a = rel b, or a = rel
        n = len(self) + 1  # node 0 the ground, variable k node k + 1
        u, v = a + 1, b + 1
        taken = _spanning_forest(u, v, n)
        pairs, grounded = taken[v[taken] != 0], taken[v[taken] == 0]
        members = np.zeros(n, dtype=bool)
        members[u[taken]] = True
        members[v[pairs]] = True
        touched = np.flatnonzero(members)  # the classes' members (nodes)
        top, sign_up = self._hang(touched, u[pairs], v[pairs], rel[pairs], n)
        parent, sign = self._parents()
        below = touched[top[touched] != touched]  # (the members that are not roots)
        parent[below - 1], sign[below - 1] = top[below] - 1, sign_up[below]  # q = s root
        qs, tops = (touched - 1).tolist(), top[touched] - 1
        for e in grounded.tolist():
            k = int(u[e])
            value = float(sign_up[k]) * float(rel[e])  # q_k = s root = rel
            self.const[int(top[k]) - 1] = {ONE: value} if value else ZERO
        held = np.fromiter(map(self.fixed.__contains__, qs), bool, len(qs))
        self.fixed.update(tops[held].tolist())
        self.changed.update(qs)
        return index[taken]

    def add_star_rows(
        self,
        a: np.ndarray,
        b: np.ndarray,
        ka: np.ndarray,
        kb: np.ndarray,
        atoms: np.ndarray,
        weights: np.ndarray,
    ) -> np.ndarray | None:
        """The rows ``ka a + kb b + w h = 0`` (``h`` the atom ``atoms[k]`` times ``w =
        weights[k]``; no term where the atom is below :data:`ONE`) recorded as
        :meth:`add_row` would one by one in order, all at once, where they are stars: every
        variable the root of a class without a constant, and in each set of classes the
        alias-shaped rows join, every row holds the root of lowest rank, the other variables
        one row each, and at most one of them a fixed start. Then each row hangs its other
        variable under that root with the row's sign and offset, whatever the order. The
        positions of the rows taken, in increasing order; None where the rows are not so."""
        index = np.flatnonzero((ka != 0.0) & (np.abs(ka) == np.abs(kb)))
        a, b, ka, kb, atoms, weights = (x[index] for x in (a, b, ka, kb, atoms, weights))
        nodes = np.unique(np.concatenate([a, b]))
        listed = nodes.tolist()
        parent, sign = self._parents()
        if (parent[nodes] != nodes).any() or self.const.keys() & listed:
            return None
        n = len(self)
        links = sp.csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
        _, label = connected_components(links, directed=False)
        by = nodes[np.lexsort((self.rank[nodes], label[nodes]))]
        head = np.ones(len(by), dtype=bool)
        head[1:] = label[by[1:]] != label[by[:-1]]
        root_of = np.zeros(n, dtype=np.int64)  # by label: the member of lowest rank
        root_of[label[by[head]]] = by[head]
        top = root_of[label[a]]
        leaf = np.where(a == top, b, a)
        fixed = np.fromiter(map(self.fixed.__contains__, listed), bool, len(listed))
        if (
            not ((a == top) | (b == top)).all()
            or np.unique(leaf).size < leaf.size
            or np.bincount(label[nodes[fixed]]).max(initial=0) > 1
        ):
            return None
        # as _unite with both roots: qa = rel qb + d, d = -offset / ka; the lower rank stays
        rel = -kb / ka
        d = (-1.0 / ka) * weights
        off = np.where(a == top, -rel * d, d)  # (b = rel' a - rel' d where a is the root)
        parent[leaf], sign[leaf] = top, rel
        held = atoms >= ONE
        lins = [{atom: w} for atom, w in zip(atoms[held].tolist(), off[held].tolist())]
        self.offset.update(zip(leaf[held].tolist(), lins))
        self.fixed.update(root_of[label[nodes[fixed]]].tolist())  # (the roots' classes)
        self.changed.update(listed)
        return index

    def _shaped(self, a: np.ndarray, two: np.ndarray, ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
        """:meth:`alias_shaped` of rows ``ca a + cb b + h = 0`` at once (``two``: the rows
        with a second variable)."""
        shaped = ca != 0.0
        single = np.flatnonzero(shaped & ~two)
        shaped[single] = ~self.differentiated[a[single]]
        return shaped & (~two | (np.abs(ca) == np.abs(cb)))

    def _hang(
        self, touched: np.ndarray, u: np.ndarray, v: np.ndarray, rel: np.ndarray, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The trees of the forest of edges ``u - v`` (signs ``rel``) over the nodes
        ``touched``: each node's class root (its member of lowest rank), and its sign
        ``node = sign * root``, by a breadth-first walk from the roots (each node's parent)
        and pointer jumping (as many whole-vector steps as the base-2 logarithm of the
        trees' depth)."""
        links = sp.csr_matrix((np.ones(len(u)), (u, v)), shape=(n, n))
        _, label = connected_components(links, directed=False)
        by = touched[np.lexsort((self.rank[touched - 1], label[touched]))]
        head = np.ones(len(by), dtype=bool)
        head[1:] = label[by[1:]] != label[by[:-1]]
        roots = by[head]
        root_of = np.zeros(n, dtype=np.int64)  # by label
        root_of[label[roots]] = roots
        # each member's tree parent (the roots hang from an extra node n), its edge's sign
        tree = sp.csr_matrix(
            (
                np.ones(len(u) + len(roots)),
                (np.concatenate([u, np.full(len(roots), n)]), np.concatenate([v, roots])),
            ),
            shape=(n + 1, n + 1),
        )
        _, pred = breadth_first_order(tree, n, directed=False, return_predecessors=True)
        below = touched[pred[touched] != n]
        up = np.arange(n)
        up[below] = pred[below]
        # each member's sign to its parent: its edge's (a forest: one edge per pair)
        keys = np.minimum(u, v) * n + np.maximum(u, v)
        order = np.argsort(keys)
        wanted = np.minimum(below, up[below]) * n + np.maximum(below, up[below])
        sign_up = np.ones(n)
        sign_up[below] = rel[order[np.searchsorted(keys[order], wanted)]]
        sign_up = _pointer_jump(up, sign_up)[1]
        return root_of[label], sign_up

    def roots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every variable's parent, and its class root and sign, ``q = sign * root +
        offset``, found for all at once by pointer jumping on arrays; the fourth array marks
        the variables with an offset on their way to the root, which :meth:`find` composes."""
        n = len(self)
        parent, sign = (a.copy() for a in self._parents())
        shifted = np.zeros(n, dtype=bool)
        shifted[list(self.offset)] = True
        top = parent == np.arange(n)
        sign[top], shifted[top] = 1.0, False  # a root is itself: sign 1, no offset
        return (parent, *_pointer_jump(parent, sign, shifted))

    def resolve(
        self, qs: Sequence[int], keep_roots: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Terms]:
        """The variables ``qs`` as ``sign * root + offset`` (root -1 and the offset the
        class's constant when the class is constant): the variables, roots and signs as
        arrays, the offsets as :class:`Terms`. With ``keep_roots``, the roots of classes
        without a constant are left out. Roots and signs come from :meth:`roots` for all
        variables at once; an offset is composed only where there is one: a child of its
        root holds it, a grandchild adds its parent's times its sign (as :meth:`find`
        would compose them), deeper ones compose by :meth:`find`; a constant class adds
        its constant times the sign. Each step adds two terms per atom at most, so sums
        of whole vectors give what :func:`axpy` gives one by one."""
        const = self.const
        idx = np.asarray(qs, dtype=np.int64)
        parent, up, sign, shifted = self.roots()
        constant = np.zeros(len(self), dtype=bool)
        constant[list(const)] = True
        if keep_roots:
            idx = idx[(up[idx] != idx) | constant[up[idx]]]
        roots, signs = up[idx], sign[idx]
        at = np.flatnonzero(shifted[idx])
        up = parent[idx[at]]
        child = up == roots[at]
        two = ~child & (parent[up] == roots[at])
        deeper = np.flatnonzero(~child & ~two)
        offset = self.offset
        own = at[child | two]  # (a grandchild's own offset or its parent's may be zero)
        parts = [lin_terms(own, list(map(offset.get, idx[own].tolist(), repeat(ZERO))))]
        up_sign = self._parents()[1][idx[at[two]]]
        lins = list(map(offset.get, up[two].tolist(), repeat(ZERO)))
        parts.append(lin_terms(at[two], lins, up_sign))
        found = [self.find(q)[2] for q in idx[at[deeper]].tolist()]  # (after: find moves nodes)
        parts.append(lin_terms(at[deeper], found))
        terms = _summed(parts, len(idx))
        grounded = np.flatnonzero(constant[roots])
        consts = list(map(const.__getitem__, roots[grounded].tolist()))
        terms = _summed([terms, lin_terms(grounded, consts, signs[grounded])], len(idx))
        roots[grounded] = -1
        return idx, roots, signs, terms


class Terms(NamedTuple):
    """Offsets as the triplets (offset, atom + 1, weight) of a sparse matrix whose column
    0 is the number 1 (:data:`ONE`), in the order of the offsets and of their atoms."""

    rows: np.ndarray
    cols: np.ndarray
    weights: np.ndarray


def lin_terms(places: np.ndarray, lins: Sequence[Lin], scale: np.ndarray | None = None) -> Terms:
    """The offsets ``lins`` (each times ``scale``, +-1, where given) as :class:`Terms`,
    the ``k``-th in row ``places[k]``."""
    sizes = np.fromiter(map(len, lins), np.int64, len(lins))
    n = int(sizes.sum())
    cols = np.fromiter(chain.from_iterable(lins), np.int64, n) + 1
    weights = np.fromiter(chain.from_iterable(map(dict.values, lins)), float, n)
    if scale is not None:
        weights = weights * np.repeat(scale, sizes)
    return Terms(np.repeat(np.asarray(places, dtype=np.int64), sizes), cols, weights)


def _summed(parts: list[Terms], n: int) -> Terms:
    """The sums of the offsets ``parts`` (``n`` rows; two terms at most per atom, so that
    the order of a sum does not matter), without the terms that cancel."""
    rows, cols, weights = (np.concatenate(a) for a in zip(*parts))
    width = int(cols.max()) + 1 if cols.size else 1
    keys = rows.astype(np.int64) * width + cols  # (row after row, each in column order)
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts = np.flatnonzero(np.diff(keys, prepend=-1))
    sums = np.add.reduceat(weights[order], starts) if keys.size else weights[:0]
    keep = sums != 0
    rows, cols = np.divmod(keys[starts[keep]], width)
    return Terms(rows, cols, sums[keep])


def _spanning_forest(u: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    """The edges ``u - v`` (over ``n`` nodes) that Kruskal's algorithm takes when their
    weights are their order (scipy's minimum spanning tree), in increasing order; of
    parallel edges only the first can be taken (the others close a cycle)."""
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    _, first = np.unique(lo * n + hi, return_index=True)
    kept = np.sort(first)
    weights = sp.csr_matrix((kept + 1.0, (lo[kept], hi[kept])), shape=(n, n))
    return np.sort(minimum_spanning_tree(weights).data.astype(np.int64)) - 1


def _pointer_jump(
    up: np.ndarray, sign: np.ndarray, shifted: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Pointer jumping on a forest given by each node's parent ``up`` (a root its own):
    each node's root, the product of the ``sign`` of the nodes from it up to its root,
    and whether any of them is ``shifted``."""
    while True:
        higher = up[up]
        if np.array_equal(higher, up):
            return up, sign, shifted
        sign = sign * sign[up]
        if shifted is not None:
            shifted = shifted | shifted[up]
        up = higher
