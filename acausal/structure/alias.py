"""Alias elimination: drop equations ``a = +-b + c`` and ``a = c``, ``c`` a constant.

An equation whose residual depends on exactly two undifferentiated variables with
constant coefficients of equal magnitude, ``k a + k' b + h = 0`` with ``|k| = |k'|`` and
``h`` a number or an expression of parameters, makes ``a = -(k'/k) b - h/k`` an alias (a
flange at ``s - L/2`` of its body's centre, a wall at ``s0``); one depending on one
variable with a constant coefficient makes it a constant. Alias classes are kept by a
union-find with signs and offsets (``q = sign * parent + offset``); each class keeps one
representative (preferring differentiated variables, fixed start values, state priority
and component variables over connector variables), and every other member is replaced by
``+-representative + offset``, its derivative by ``+-der(representative)`` (parameters
are constant). A cycle of aliases that closes is a redundant or contradictory equation; it
stays in the model so that the balance check can name it. Passes repeat until nothing
changes, because eliminating constants turns ``v = p.v - n.v`` with ``n.v = 0`` into an
alias.

Offsets are sums ``sum_k w_k h_k`` of numbers ``w_k`` times *atoms*: the number 1 and the
offset expressions ``h_k`` of the alias equations (a Python dict per offset, composed in
the union-find without a CasADi call); the expressions are made once, as one sparse
product ``W [1; h]``, when they are substituted.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from operator import attrgetter

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..errors import InitializationError
from ..flatten import FlatDAE, FlatEquation, Symbol
from ..symbols import as_sx, derivative_name, vstack
from ..table import SymbolTable, Table
from .graph import AffineRows, affine_rows, incidence


@dataclass(frozen=True, eq=False)
class Start:
    """Start value of an unknown after alias elimination, with the variable it came from."""

    value: cs.SX | float
    fixed: bool
    source: str


# (sign, representative or None, constant: a number or an expression of parameters)
Alias = tuple[float, "str | None", "float | cs.SX"]
Parents = dict[str, str]  # union-find parent
Signs = dict[str, float]  # q = sign[q] * parent[q] + offset[q]
Lin = dict[int, float]  # an offset: atom -> weight (atom ONE: the number 1); {} is zero
ONE = -1
Offsets = dict[str, Lin]  # q -> its offset from its parent (absent: zero)
Constants = dict[str, Lin]  # class root -> its constant value


@dataclass(frozen=True, eq=False)
class Reduced:
    """Equations and unknowns (names) left after alias elimination; ``symbols`` is the flat
    table plus the derivatives of representatives that the substitution created."""

    flat: FlatDAE
    symbols: SymbolTable
    equations: tuple[FlatEquation, ...]
    residuals: cs.SX  # the equations' residuals stacked (indexed, not re-stacked, by later stages)
    unknowns: tuple[str, ...]
    eliminated: Table  # variable -> Alias: (sign, representative or None, constant)
    members: Table  # representative -> other members (tuple)
    starts: Table  # representative -> Start
    # the equations' incidence (0/1, a row per equation) in the symbols whose names
    # ``pattern_position`` maps to their columns, in column order (None: time), as alias
    # elimination left it; saves the next stage recomputing it
    pattern: sp.csr_matrix | None = None
    pattern_position: Table = field(default_factory=Table)

    def sym(self, name: str) -> cs.SX:
        return self.symbols[name].sym

    def __str__(self) -> str:
        lines = [
            f"Reduced {self.flat.name}: {len(self.equations)} equations for "
            f"{len(self.unknowns)} unknowns, {len(self.eliminated)} aliases eliminated"
        ]
        for q, (s, root, c) in self.eliminated.items():
            rhs = f"{'-' if s < 0 else ''}{root}" if root is not None else ""
            symbolic = isinstance(c, cs.SX)
            const = self.flat.display(c) if symbolic else f"{c:.17g}" if root is None or c else ""
            lines.append(f"  alias {q} = {rhs}{' + ' if rhs and const else ''}{const}")
        for q, st in self.starts.items():
            fixed = " fixed" if st.fixed else ""
            lines.append(f"  start {q} = {self.flat.display(st.value)}{fixed} (from {st.source})")
        lines += [f"  {e.origin}" for e in self.equations]
        return "\n".join(lines)


def _ranks(symbols: list[Symbol], differentiated: Container[str]) -> np.ndarray:
    """Each variable's place (0 first) in the order of preference of representatives:
    differentiated, fixed start, state priority, any start, a component's own variable
    (not a connector's), short local name, then declaration (list) order."""
    n = len(symbols)
    local = [s.name[len(s.component) + 1 :] for s in symbols]
    keys = (  # the last the first criterion (numpy's lexsort)
        np.arange(n),
        np.fromiter(map(len, local), np.int64, n),
        np.fromiter(("." in name for name in local), bool, n),
        np.fromiter((s.start is None for s in symbols), bool, n),
        -np.fromiter(map(attrgetter("state_priority"), symbols), np.int64, n),
        ~np.fromiter(map(attrgetter("fixed"), symbols), bool, n),
        np.fromiter((s.name not in differentiated for s in symbols), bool, n),
    )
    rank = np.empty(n, dtype=np.int64)
    rank[np.lexsort(keys)] = np.arange(n)
    return rank


#: The zero offset, shared (offsets are never changed in place).
ZERO: Lin = {}


def _axpy(a: Lin, s: float, b: Lin) -> Lin:
    """The offset ``a + s b`` (a new dict unless one of them is zero)."""
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


def _find(parent: Parents, sign: Signs, offset: Offsets, q: str) -> tuple[str, float, Lin]:
    """``(root, s, c)`` with ``q = s * root + c``; every node on the way is then attached
    to the root directly (path compression)."""
    up = parent[q]
    if up is q:
        return q, 1.0, ZERO
    if parent[up] is up:  # already attached to the root
        return up, sign[q], offset.get(q, ZERO)
    path = [q]
    root = up
    while parent[root] is not root:
        path.append(root)
        root = parent[root]
    s, c = 1.0, ZERO
    for node in reversed(path):  # node = sign * (its old parent, = s root + c) + offset
        ns = sign[node]
        c = _axpy(offset.get(node, ZERO), ns, c)
        s *= ns
        parent[node], sign[node] = root, s
        if c:
            offset[node] = c
        else:
            offset.pop(node, None)
    return root, s, c


class _Classes:
    """Alias classes under construction: union-find with signs and offsets, class
    constants, the offsets' atoms, and the symbol table growing by the derivatives of
    representatives."""

    def __init__(self, flat: FlatDAE) -> None:
        variables = flat.variables
        records = list(map(flat.symbols.__getitem__, variables))
        self.symbols: dict[str, Symbol] = dict(flat.symbols)
        self.parent: Parents = dict(zip(variables, variables))
        self.sign: Signs = dict.fromkeys(variables, 1.0)
        self.offset: Offsets = {}
        self.const: Constants = {}
        # roots of classes with a member's fixed start: such a class takes an offset or a
        # constant that depends on parameters only from a class without one, so that every
        # fixed start the initializer must check against the model stays in an equation
        self.fixed = {s.name for s in records if s.fixed}
        self.changed: set[str] = set()  # roots attached or made constant since the last pass
        self.atoms: list[cs.SX] = []  # blocks of atom expressions, atom k at position k
        self.n_atoms = 0
        self.atom_columns: set[int] = set()  # the parameters' columns atoms may hold
        self.deriv = {s.base: s.name for s in flat.symbols.values() if s.order == 1}
        self.made: dict[str, Symbol] = {}  # the derivatives made here, in order
        self.variables = variables  # (their order: the columns of the alias stage)
        self.position = dict(zip(variables, range(len(variables))))
        # preference of representatives, by position (the derivatives as declared)
        self.rank = _ranks(records, self.deriv)

    def prefers(self, a: str, b: str) -> bool:
        """Whether variable ``a`` is a better representative than ``b``."""
        return bool(self.rank[self.position[a]] < self.rank[self.position[b]])

    def find(self, q: str) -> tuple[str, float, Lin]:
        return _find(self.parent, self.sign, self.offset, q)

    def add_atoms(self, block: cs.SX) -> int:
        """Register the expressions ``block`` as atoms; the first one's number."""
        first = self.n_atoms
        self.atoms.append(block)
        self.n_atoms += block.numel()
        return first

    def expressions(self, offsets: list[Lin]) -> cs.SX:
        """The offsets as one vector: ``W [1; atoms]``, ``W`` sparse."""
        rows, cols, weights = [], [], []
        for i, lin in enumerate(offsets):
            for k, w in lin.items():
                rows.append(i)
                cols.append(k + 1)  # ONE (-1) -> column 0
                weights.append(w)
        atoms = cs.vertcat(cs.SX(1), *self.atoms)
        W = cs.DM.triplet(rows, cols, cs.DM(weights), len(offsets), atoms.numel())
        return cs.mtimes(W, atoms)

    def derivative(self, q: str) -> tuple[str, bool]:
        """The name of ``der(q)``, and whether its symbol is new."""
        name = self.deriv.get(q)
        if name is not None:
            return name, False
        name = self.deriv[q] = derivative_name(q)
        base = self.symbols[q]
        sym = cs.SX.sym(derivative_name(base.sym.name()))  # named as der() would name it
        self.symbols[name] = self.made[name] = Symbol(
            name, "derivative", sym, base.component, base=q, order=1
        )
        return name, True


def eliminate_aliases(flat: FlatDAE) -> Reduced:
    """Apply alias elimination to ``flat``; see the module docstring."""
    sources = [e.source for e in flat.equations]
    residuals = flat.residuals if sources else cs.SX(0, 1)
    unknowns = list(flat.variables)
    classes = _Classes(flat)
    eliminated: dict[str, None] = {}  # the variables eliminated, in order (an ordered set)
    # every symbol an equation can hold: variables, their derivatives, parameters, time
    derivatives = [classes.deriv[q] for q in unknowns if q in classes.deriv]
    columns: list[str | None] = [*unknowns, *derivatives, *flat.parameters, *flat.discretes]
    columns.append(None)  # time
    position = {q: j for j, q in enumerate(columns)}  # (kept up to date)
    allsyms = vstack([flat.symbols.take(columns[:-1]), flat.t])
    start = len(unknowns) + len(derivatives)
    params = (start, start + len(flat.parameters))  # their columns
    values = np.array([flat.symbols[n].value for n in flat.parameters], dtype=float)
    check = list(range(len(sources)))  # rows that may be aliases: all, then those changed
    pattern = _incidence(flat, residuals, allsyms, position)  # of the current rows, kept up to date
    with_offsets = False  # first plain aliases and numbers, then offsets (module docstring)
    deferred = np.zeros(len(sources), dtype=bool)  # rows left for the offsets' passes
    while True:
        aliased: set[int] = set()
        if check:
            inc = pattern[check]
            aliased, later = _classify(
                residuals, check, inc, columns, allsyms, classes, params, values, with_offsets
            )
            deferred[check] = False
            deferred[later] = True
        if not aliased:
            if with_offsets or not sources:
                break
            with_offsets, check = True, np.flatnonzero(deferred).tolist()
            continue
        keep = [k for k in range(len(sources)) if k not in aliased]
        deferred = deferred[keep]
        sources = [sources[k] for k in keep]
        residuals = residuals[keep] if keep else cs.SX(0, 1)
        old, base, signs, offsets, fresh, gone = _substitutions(unknowns, classes)
        eliminated.update(dict.fromkeys(gone))
        unknowns = [q for q in unknowns if q not in eliminated]
        if fresh:  # derivatives of representatives created by the substitution
            position.update({q: len(columns) + k for k, q in enumerate(fresh)})
            columns = columns + fresh
            allsyms = cs.vertcat(allsyms, cs.vertcat(*[classes.symbols[q].sym for q in fresh]))
        pattern = pattern[keep]
        pattern.resize(len(keep), len(columns))
        if not sources:
            break
        check = []
        if old:
            replaced = np.zeros(len(columns), dtype=bool)
            replaced[[position[q] for q in old]] = True
            check = np.nonzero(pattern @ replaced.astype(np.int64))[0].tolist()
            # the replacements sign * base + offset (base a representative or its
            # derivative; none for a constant), the bases picked by a sparse product
            on = [k for k, b in enumerate(base) if b is not None]
            at = [position[base[k]] for k in on]
            pick = cs.DM.triplet(on, at, cs.DM([signs[k] for k in on]), len(old), len(columns))
            new = cs.densify(cs.mtimes(pick, allsyms) + classes.expressions(offsets))
            residuals = _substitute_rows(residuals, check, allsyms[[position[q] for q in old]], new)
            # the rows' new columns: their old ones, the representatives, the offsets'
            # parameters; the incidence taken in those only (exact, and no pass over every
            # symbol of the model)
            # (the columns as a mask: numpy 2's hash-based np.unique is slow on large arrays)
            held = np.zeros(len(columns), dtype=bool)
            held[pattern[check].indices] = True
            held[at] = True
            held[list(classes.atom_columns)] = True
            cols = np.flatnonzero(held)
            part = incidence(residuals[check], allsyms[cols.tolist()])
            part = sp.csr_matrix(
                (part.data, cols[part.indices], part.indptr), shape=(len(check), len(columns))
            )
            pattern = _replace_rows(pattern, check, part)
    split = cs.vertsplit(residuals) if sources else []
    equations = tuple(FlatEquation(r, src) for r, src in zip(split, sources))
    # final form: a representative may have been eliminated later
    gone, roots, signs, lins = _aliases(list(eliminated), classes)
    members: dict[str, list[str]] = {}
    for q, root in zip(gone, roots):
        if root is not None:
            members.setdefault(root, []).append(q)
    offsets = _offset_values(classes, lins)
    table = dict(zip(gone, zip(signs, roots, offsets)))
    starts = _merge_starts(flat, table, values)
    return Reduced(
        flat,
        flat.symbols.extended(classes.made),
        equations,
        residuals,
        tuple(unknowns),
        Table(table),
        Table({k: tuple(v) for k, v in members.items()}),
        Table(starts),
        pattern,
        Table(position),
    )


def _substitute_rows(residuals: cs.SX, rows: list[int], old: cs.SX, new: cs.SX) -> cs.SX:
    """``cs.substitute(residuals, old, new)`` where only ``rows`` hold symbols of ``old``:
    those rows substituted and written back into a copy (a substitution evaluates every
    node of what it is given; after the first pass most rows hold no eliminated
    symbol). Where a structural zero is involved, the whole vector is substituted; with
    no rows, nothing is."""
    if not rows:
        return residuals
    part = cs.substitute(residuals[rows], old, new)
    if not (part.is_dense() and residuals.is_dense()):
        return cs.substitute(residuals, old, new)
    out = cs.SX(residuals)
    out[rows] = part
    return out


def _incidence(
    flat: FlatDAE, residuals: cs.SX, allsyms: cs.SX, position: dict[str | None, int]
) -> sp.csr_matrix:
    """The equations' incidence in ``allsyms`` (``position``: each name's row): the components'
    equations by :func:`.graph.incidence`, the connection sets' (the last rows) from the
    variables flatten recorded for them. Those rows hold a ground's flow balance and its
    potential, the dense row and column that make CasADi's sparsity pass slow."""
    entries = flat.connection_entries
    n_conn = len(entries.indptr) - 1
    n_own = residuals.numel() - n_conn
    own = incidence(residuals[:n_own] if n_own else cs.SX(0, 1), allsyms)
    cols = np.array([position[q] for q in entries.names], dtype=np.int64)
    data = np.ones(len(cols), dtype=np.int8)
    conn = sp.csr_matrix((data, cols, entries.indptr), shape=(n_conn, allsyms.numel()))
    conn.sum_duplicates()
    conn.data[:] = 1
    return sp.csr_matrix(sp.vstack([own, conn], format="csr"), dtype=np.int8)


def _offset_values(classes: _Classes, offsets: list[Lin]) -> list[float | cs.SX]:
    """Each offset as a number when it is one (no atom but ONE), else an expression of
    parameters (all of them made in one product)."""
    out: list[float | cs.SX] = []
    symbolic: list[int] = []
    for k, lin in enumerate(offsets):
        if _symbolic(lin):
            out.append(0.0)
            symbolic.append(k)
        else:
            out.append(lin.get(ONE, 0.0))
    if symbolic:
        exprs = cs.vertsplit(classes.expressions([offsets[k] for k in symbolic]))
        for k, e in zip(symbolic, exprs):
            out[k] = e
    return out


def _classify(
    residuals: cs.SX,
    check: list[int],
    inc: sp.csr_matrix,
    columns: list[str | None],
    allsyms: cs.SX,
    classes: _Classes,
    params: tuple[int, int],
    values: np.ndarray,
    with_offsets: bool,
) -> tuple[set[int], list[int]]:
    """Unite alias classes from the alias equations among rows ``check`` (``inc``: their
    incidence in ``allsyms``, whose columns ``params`` are the parameters, of ``values``);
    return their rows, and those left for the passes ``with_offsets``. Without it: plain
    aliases ``a = +-b`` and numeric constants only; with it, offsets too, and a constant
    of parameters for a class that only one of these rows makes constant (two sources on
    one node stay equations, which the diagnosis names).

    Everything runs on whole vectors: the rows holding one or two unknowns and otherwise
    parameters only (by the Jacobian's sparsity), then their :func:`.graph.affine_rows`
    with the parameters as constants. A symbolic Jacobian of the whole system would cost
    one sweep per column of a dense row (a ground node's current balance); per-row Python
    would cost a CasADi call per node.
    """
    unknown = np.arange(len(columns)) < len(classes.parent)  # the variables come first
    allowed = unknown.copy()
    allowed[params[0] : params[1]] = True
    rows = residuals[check]
    rows_of = np.repeat(np.arange(inc.shape[0]), np.diff(inc.indptr))
    bad = np.zeros(inc.shape[0], dtype=bool)
    np.logical_or.at(bad, rows_of, ~allowed[inc.indices])
    counts = np.bincount(rows_of[unknown[inc.indices]], minlength=inc.shape[0])
    shaped = ((counts == 1) | (counts == 2)) & ~bad
    deferred: list[int] = []
    if not with_offsets:  # a row holding a parameter waits for the offsets' passes
        param = np.bincount(rows_of[~unknown[inc.indices]], minlength=inc.shape[0]) > 0
        deferred = [check[k] for k in np.flatnonzero(shaped & param)]
        shaped &= ~param
    cand = np.flatnonzero(shaped).tolist()
    if not cand:
        return set(), deferred
    held = np.flatnonzero(np.bincount(inc[cand].indices, minlength=len(columns)))
    x_cols = held[unknown[held]].tolist()
    p_cols = held[~unknown[held]].tolist()
    pv = values[np.asarray(p_cols, dtype=np.int64) - params[0]] if p_cols else None
    lin = affine_rows(rows[cand], allsyms[x_cols], allsyms[p_cols] if p_cols else None, pv)
    symbolic = np.flatnonzero(lin.symbolic)
    first = classes.add_atoms(lin.expressions[symbolic.tolist()]) if symbolic.size else 0
    if symbolic.size:
        classes.atom_columns.update(p_cols)
    atom_of = dict(zip(symbolic.tolist(), range(first, first + symbolic.size)))
    # each row's unknowns (columns) and coefficients, the rows one after the other
    order = np.argsort(lin.rows, kind="stable")
    bounds = np.searchsorted(lin.rows[order], np.arange(len(cand) + 1))
    held_by = np.asarray(x_cols, dtype=np.int64)[lin.cols[order]]
    if not with_offsets:  # (no row holds a parameter: no atom)
        rows_at = np.asarray(check, dtype=np.int64)[cand]
        plain, later = _plain_rows(rows_at, bounds, held_by, lin.values[order], lin)
        aliased = _unite_plain(*plain, classes) if len(plain[0]) else set()
        return aliased, deferred + later
    # the offsets' passes, row by row: their unknowns (names), coefficients, offsets
    starts = bounds.tolist()
    names = np.asarray(columns, dtype=object)[held_by].tolist()
    coefs = lin.values[order].tolist()
    affine, offsets = lin.affine.tolist(), lin.offsets.tolist()
    fixing: dict[str, int] = {}  # class root -> rows making it a constant of parameters
    for i in symbolic.tolist():
        if starts[i + 1] - starts[i] == 1 and affine[i]:
            root = classes.find(names[starts[i]])[0]
            fixing[root] = fixing.get(root, 0) + 1
    aliased: set[int] = set()
    for i, row in enumerate(cand):
        a, b = starts[i], starts[i + 1]
        if a == b or not affine[i]:
            continue
        qs = names[a:b]
        atom = atom_of.get(i)
        value = offsets[i]
        if atom is not None and len(qs) == 1 and fixing.get(classes.find(qs[0])[0], 0) > 1:
            continue
        offset = {atom: 1.0} if atom is not None else {ONE: value} if value else {}
        if _try_alias(qs, coefs[a:b], offset, classes):
            aliased.add(check[row])
    return aliased, deferred


def _plain_rows(
    rows: np.ndarray, bounds: np.ndarray, held: np.ndarray, coefs: np.ndarray, lin: AffineRows
) -> tuple[tuple[np.ndarray, ...], list[int]]:
    """The first passes' candidate ``rows`` (the ``k``-th holds the unknowns
    ``held[bounds[k]:bounds[k + 1]]`` with coefficients ``coefs``; ``lin`` their
    :class:`.graph.AffineRows`): a row ``ca a + cb b + h = 0`` of two unknowns with an
    offset ``h`` waits for the offsets' passes (returned second); the other affine rows of
    some unknown are plain, returned as arrays ``(rows, a, b, ca, cb, h)`` (``b = -1``:
    one unknown) for :func:`_unite_plain`."""
    count = np.diff(bounds)
    some = (count > 0) & lin.affine
    offset = some & (count == 2) & (lin.offsets != 0)
    keep = np.flatnonzero(some & ~offset)
    first = bounds[keep]
    two = count[keep] == 2
    second = np.where(two, first + 1, first)
    b = np.where(two, held[second], -1)
    cb = np.where(two, coefs[second], 0.0)
    plain = (rows[keep], held[first], b, coefs[first], cb, lin.offsets[keep])
    return plain, rows[offset].tolist()


def _unite_plain(
    rows: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    ca: np.ndarray,
    cb: np.ndarray,
    h: np.ndarray,
    classes: _Classes,
) -> set[int]:
    """The plain rows ``ca a + cb b + h = 0`` (``a``, ``b`` variables by position,
    ``b = -1`` for none; ``h = 0`` when there are two), in order, united as
    :func:`_try_alias` would one by one, all at once; return the rows taken. Their unknowns
    are roots of classes without a constant (the rows of the first passes hold no other).

    A row ``k a + k' b = 0`` (``|k| = |k'|``) is an edge between ``a`` and ``b``, a row
    ``k a + h = 0`` an edge between ``a`` and a *ground* node (``a = -h/k``). Taken one by
    one, a row is refused exactly when it closes a cycle (two constants for one class are
    a cycle through the ground): the rows taken are the spanning forest that Kruskal's
    algorithm builds from the edges weighted by their order, which scipy computes. Each
    class's root is its most preferred member (:func:`_ranks`); its members' signs are the
    products of the edges' signs along the tree's paths (each member's parent by a
    breadth-first walk from the roots, then pointer jumping: as many whole-vector steps as
    the base-2 logarithm of the trees' depth); a class with an edge to the ground takes
    that edge's constant."""
    from scipy.sparse.csgraph import (
        breadth_first_order,
        connected_components,
        minimum_spanning_tree,
    )

    two = b >= 0
    shaped = _shaped_rows(a, two, ca, cb, classes)
    if not shaped.any():
        return set()
    rows, a, b, ca, cb, h, two = (x[shaped] for x in (rows, a, b, ca, cb, h, two))
    rel = np.where(two, -cb / ca, h * (-1.0 / ca))  # a = rel b, or a = rel (as _try_alias)
    n = len(classes.variables) + 1  # node 0 the ground, variable k node k + 1
    u, v = a + 1, b + 1
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    _, first = np.unique(lo * n + hi, return_index=True)  # a parallel edge closes a cycle
    kept = np.sort(first)
    weights = sp.csr_matrix((kept + 1.0, (lo[kept], hi[kept])), shape=(n, n))
    taken = np.sort(minimum_spanning_tree(weights).data.astype(np.int64)) - 1
    pairs, grounded = taken[v[taken] != 0], taken[v[taken] == 0]
    links = sp.csr_matrix((np.ones(len(pairs)), (u[pairs], v[pairs])), shape=(n, n))
    _, label = connected_components(links, directed=False)
    member = np.zeros(n, dtype=bool)
    member[u[taken]] = True
    member[v[pairs]] = True
    touched = np.flatnonzero(member)  # the classes' members
    by = touched[np.lexsort((classes.rank[touched - 1], label[touched]))]
    head = np.ones(len(by), dtype=bool)
    head[1:] = label[by[1:]] != label[by[:-1]]
    roots = by[head]
    root_of = np.zeros(n, dtype=np.int64)  # by label
    root_of[label[roots]] = roots
    # each member's tree parent (the roots hang from an extra node n), its edge's sign
    tree = sp.csr_matrix(
        (
            np.ones(len(pairs) + len(roots)),
            (np.concatenate([u[pairs], np.full(len(roots), n)]), np.concatenate([v[pairs], roots])),
        ),
        shape=(n + 1, n + 1),
    )
    _, pred = breadth_first_order(tree, n, directed=False, return_predecessors=True)
    below = touched[pred[touched] != n]
    signed = sp.csr_matrix((rel[pairs], (u[pairs], v[pairs])), shape=(n, n))
    signed = (signed + signed.T).tocsr()
    up = np.arange(n)
    up[below] = pred[below]
    sign_up = np.ones(n)
    sign_up[below] = np.asarray(signed[below, pred[below]]).ravel()
    while True:  # sign_up[k]: the product of the signs from k up to up[k]
        higher = up[up]
        if np.array_equal(higher, up):
            break
        sign_up = sign_up * sign_up[up]
        up = higher
    names = classes.variables
    members = [names[k - 1] for k in touched.tolist()]
    tops = [names[k - 1] for k in root_of[label[touched]].tolist()]
    parent, sign, fixed = classes.parent, classes.sign, classes.fixed
    for q, top, s in zip(members, tops, sign_up[touched].tolist()):
        if q != top:
            parent[q], sign[q] = top, s  # q = s top
    for e in grounded.tolist():
        k = int(u[e])
        value = float(sign_up[k]) * float(rel[e])  # q_k = s top = rel
        classes.const[names[root_of[label[k]] - 1]] = {ONE: value} if value else ZERO
    fixed.update([top for q, top in zip(members, tops) if q in fixed])
    classes.changed.update(members)
    return set(rows[taken].tolist())


def _shaped_rows(
    a: np.ndarray, two: np.ndarray, ca: np.ndarray, cb: np.ndarray, classes: _Classes
) -> np.ndarray:
    """:func:`_alias_shaped` of rows ``ca a + cb b + h = 0`` at once (``two``: the rows
    with a second unknown ``b``; ``a`` a variable's position)."""
    shaped = ca != 0.0
    single = np.flatnonzero(shaped & ~two)
    names, deriv = classes.variables, classes.deriv
    shaped[single] = [names[k] not in deriv for k in a[single].tolist()]
    return shaped & (~two | (np.abs(ca) == np.abs(cb)))


def _alias_shaped(qs: list[str], coef: list[float], classes: _Classes) -> bool:
    """Whether ``sum coef_k q_k + h = 0`` can be an alias (two unknowns, coefficients of
    one nonzero magnitude) or a constant (one unknown that is not differentiated, a nonzero
    coefficient); whether it is one depends on the classes (:func:`_try_alias`)."""
    if coef[0] == 0.0:
        return False
    if len(qs) == 1:
        return qs[0] not in classes.deriv
    return abs(coef[0]) == abs(coef[1])


def _try_alias(qs: list[str], coef: list[float], offset: Lin, classes: _Classes) -> bool:
    """Record ``sum coef_k q_k + offset = 0`` as an alias or a constant, if it is one.

    A class holding a fixed start (``classes.fixed``) becomes no constant that depends on
    parameters, and two such classes are joined only at a zero offset: the fixed starts
    are then checked against the model by the initializer, at the parameters of each run,
    with the equation that determines them named."""
    parent, sign, const, fixed = classes.parent, classes.sign, classes.const, classes.fixed
    if not _alias_shaped(qs, coef, classes):
        return False
    if len(qs) == 1:
        (q,), (a,) = qs, coef
        root, s, c = classes.find(q)
        if root in const:
            return False  # a second constant for the class: keep as equation
        value = _axpy(_scaled(offset, -s / a), -s, c)  # s (q - c)
        if root in fixed and _symbolic(value):
            return False
        const[root] = value
        classes.changed.add(root)
        return True
    (ra, sa, ca), (rb, sb, cb) = classes.find(qs[0]), classes.find(qs[1])
    if ra == rb:
        return False  # closes a cycle: redundant or contradictory, keep it
    if ra in const and rb in const:
        return False
    rel = -coef[1] / coef[0]  # a = rel * b + d0, d0 = -offset / coef[0]
    # with a = sa ra + ca, b = sb rb + cb: ra = s rb + d
    s = sa * rel * sb
    d = _axpy(_axpy(_scaled(offset, -sa / coef[0]), sa * rel, cb), -sa, ca)
    if ra in fixed and rb in fixed and d:
        return False
    if (ra in fixed or rb in fixed) and (ra in const or rb in const):
        # the joined class's constant (ra = s rb + d): a fixed start against parameters?
        merged = _axpy(d, s, const[rb]) if rb in const else _axpy(const[ra], -1.0, d)
        if _symbolic(merged):
            return False
    # attach the less preferred root under the other
    if classes.prefers(ra, rb):
        parent[rb], sign[rb] = ra, s  # rb = s ra - s d (s = +-1)
        _set(classes.offset, rb, _scaled(d, -s))
        if rb in const:
            const[ra] = _axpy(d, s, const.pop(rb))
    else:
        parent[ra], sign[ra] = rb, s
        _set(classes.offset, ra, d)
        if ra in const:
            const[rb] = _axpy(_scaled(d, -s), s, const.pop(ra))
    if ra in fixed or rb in fixed:
        fixed.update((ra, rb))
    classes.changed.update((ra, rb))
    return True


def _scaled(lin: Lin, s: float) -> Lin:
    """The offset ``s lin``."""
    return {k: s * w for k, w in lin.items()} if lin else ZERO


def _symbolic(lin: Lin | None) -> bool:
    """Whether an offset depends on parameters (holds an atom other than ONE)."""
    return bool(lin) and not (len(lin) == 1 and ONE in lin)


def _set(offsets: Offsets, q: str, lin: Lin) -> None:
    if lin:
        offsets[q] = lin
    else:
        offsets.pop(q, None)


def _class_roots(classes: _Classes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every variable's class root (by position) and sign, ``q = sign * root + offset``,
    found for all variables at once by pointer jumping on arrays (as many whole-vector
    steps as the base-2 logarithm of the trees' depth); the third array marks the
    variables with an offset on their way to the root, whose offsets
    :meth:`_Classes.find` composes. The union-find's dicts hold the variables in their
    order (``classes.variables``): only their values change."""
    pos = classes.position
    n = len(classes.variables)
    up = np.fromiter(map(pos.__getitem__, classes.parent.values()), np.int64, n)
    sign = np.fromiter(classes.sign.values(), float, n)
    shifted = np.zeros(n, dtype=bool)
    shifted[[pos[q] for q in classes.offset]] = True
    top = up == np.arange(n)
    sign[top], shifted[top] = 1.0, False  # a root is itself: sign 1, no offset
    while True:
        higher = up[up]
        if np.array_equal(higher, up):
            return up, sign, shifted
        sign, shifted = sign * sign[up], shifted | shifted[up]
        up = higher


def _aliases(
    variables: list[str], classes: _Classes, keep_roots: bool = False
) -> tuple[list[str], list[str | None], list[float], list[Lin]]:
    """Each of ``variables`` as ``sign * root + offset`` (root None and the offset the
    class's constant when the class is constant), as four lists: names, roots, signs,
    offsets. With ``keep_roots``, the roots of classes without a constant are left out
    (they stay unknowns). Roots and signs come from :func:`_class_roots`, for all variables
    at once; an offset is composed (:meth:`_Classes.find`) only where there is one."""
    names, pos, const = classes.variables, classes.position, classes.const
    idx = np.fromiter(map(pos.__getitem__, variables), np.int64, len(variables))
    up, sign, shifted = _class_roots(classes)
    constant = np.zeros(len(names), dtype=bool)
    constant[[pos[r] for r in const]] = True
    if keep_roots:
        idx = idx[(up[idx] != idx) | constant[up[idx]]]
    qs = [names[k] for k in idx.tolist()]
    roots: list[str | None] = [names[k] for k in up[idx].tolist()]
    signs = sign[idx].tolist()
    offsets = [ZERO] * len(idx)
    for i in np.flatnonzero(shifted[idx]).tolist():
        offsets[i] = classes.find(qs[i])[2]
    for i in np.flatnonzero(constant[up[idx]]).tolist():
        offsets[i] = _axpy(offsets[i], signs[i], const[roots[i]])
        roots[i] = None
    return qs, roots, signs, offsets


def _substitutions(
    unknowns: list[str], classes: _Classes
) -> tuple[list[str], list[str | None], list[float], list[Lin], list[str], list[str]]:
    """The variables eliminated since the last pass and their replacements.

    Returns the names of the symbols to replace (variables and their derivatives) and
    their replacements ``sign * base + offset`` as three lists (``base``: the name of a
    representative or of its derivative, None for zero), the representatives'
    derivatives created on the way, and the newly eliminated variables (in ``unknowns``'
    order).
    """
    changed, classes.changed = classes.changed, set()
    gone, roots, signs, offsets = _aliases(
        [q for q in unknowns if q in changed], classes, keep_roots=True
    )
    old, fresh = list(gone), []
    dbase: list[str | None] = []  # the derivatives' replacements: +-der(root), or zero
    dsigns: list[float] = []
    for q, root, s in zip(gone, roots, signs):
        dq = classes.deriv.get(q)
        if dq is None:
            continue
        old.append(dq)
        if root is not None:
            root, created = classes.derivative(root)
            if created:
                fresh.append(root)
        dbase.append(root)
        dsigns.append(s)
    return old, roots + dbase, signs + dsigns, offsets + [ZERO] * len(dbase), fresh, gone


def _replace_rows(mat: sp.csr_matrix, rows: list[int], new: sp.csr_matrix) -> sp.csr_matrix:
    """``mat`` with its rows ``rows`` replaced by those of ``new``, in order."""
    if not rows:
        return mat
    changed = np.zeros(mat.shape[0], dtype=bool)
    changed[rows] = True
    kept = np.nonzero(~changed)[0]
    order = np.empty(mat.shape[0], dtype=np.int64)
    order[np.concatenate([kept, np.asarray(rows)])] = np.arange(mat.shape[0])
    return sp.csr_matrix(sp.vstack([mat[kept], new], format="csr")[order])


def _merge_starts(
    flat: FlatDAE, eliminated: dict[str, Alias], values: np.ndarray
) -> dict[str, Start]:
    """One start value per class (a member's ``q = s root + c`` gives the root
    ``s (start - c)``); two different fixed values in a class are an error."""
    params = flat.symbols.take(flat.parameters)

    def numeric(expr: cs.SX | float) -> float:
        """Value at the parameters' values (only needed when two values are compared)."""
        e = as_sx(expr)
        if params.numel() and cs.depends_on(e, params):
            e = cs.substitute(e, params, cs.DM(values))
        return float(cs.evalf(e))

    starts: dict[str, Start] = {}
    for q in flat.variables:
        sym = flat.symbols[q]
        if sym.start is None:
            continue
        s, root, c = eliminated.get(q, (1.0, q, 0.0))
        if root is None:
            if sym.fixed and not np.isclose(numeric(sym.start), numeric(c)):
                raise InitializationError(
                    f"fixed start value {q} = {numeric(sym.start):g} conflicts with the "
                    f"model: {q} is constant {numeric(c):g}; remove the start value"
                )
            continue
        shifted = sym.start - c if isinstance(c, cs.SX) or c else sym.start
        value = shifted if s > 0 else -shifted
        prev = starts.get(root)
        if prev is None or (sym.fixed and not prev.fixed):
            starts[root] = Start(value, sym.fixed, q)
        elif sym.fixed and prev.fixed and not np.isclose(numeric(value), numeric(prev.value)):
            raise InitializationError(
                f"conflicting fixed start values: {prev.source} and {q} are the same "
                f"variable (connected or aliased) but start at {numeric(prev.value):g} and "
                f"{numeric(value):g} (after sign and offset); remove or align one of them"
            )
    return starts
