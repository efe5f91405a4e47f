"""The DAE at ``n`` cells from an analysed small model (:func:`synthesize`): the interior
function mapped over the interior cells, the end cells' and plain rows at their places,
every entry placed by index arithmetic."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import casadi as cs
import numpy as np

from ..symbols import symbols_around, vstack
from .analysis import Plain, Small
from .cells import Key, Part, around, cell_name, flat_names, grown, segments


class Pieces(NamedTuple):
    """The DAE at ``n`` cells: states, parameters (names, values) and names with their
    symbols and expressions, and each state's start (value, fixed, source; None: none)."""

    x: cs.SX
    x_names: list[str]
    ode: cs.SX
    p: cs.SX
    defaults: dict[str, float]
    names: list[str]
    outputs: cs.SX
    breakpoints: cs.SX
    start_values: cs.SX
    starts: list[tuple[bool, str] | None]


#: interior cells mapped as one function (see :func:`_block`)
BLOCK = 8


def _symbols(parts: list[Part]) -> cs.SX:
    """New symbols named as ``parts``' names (:func:`flat_names`), made in bulk."""
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(cs.SX.sym(part))
            continue
        cells, keys = part
        numbers = (cells + 1).astype(str)
        width = np.char.str_len(numbers)
        for size in np.unique(width):  # (the cells increase: each width a run)
            pieces.append(symbols_around(around(keys), numbers[width == size].tolist()))
    return vstack(pieces) if pieces else cs.SX(0, 1)


def _places(parts: list[Part], keys: Sequence[Key], n: int) -> tuple[np.ndarray, dict[str, int]]:
    """Where each of ``keys`` of each cell is among ``parts``' entries (a row per key, a
    column per cell; -1: nowhere), and where each plain name is."""
    index = {key: i for i, key in enumerate(keys)}
    out = np.full((len(keys), n), -1, dtype=np.int64)
    plain, at = {}, 0
    for part in parts:
        if isinstance(part, str):
            plain[part] = at
            at += 1
            continue
        cells, ks = part
        for i, key in enumerate(ks):
            if key in index:
                out[index[key], cells] = at + np.arange(cells.size) * len(ks) + i
        at += cells.size * len(ks)
    return out, plain


class _Pool:
    """Every cell's rows at ``n`` cells, then the plain rows and the sums, as one column:
    where a cell's row of a kind and key is."""

    def __init__(self, small: Small, n: int) -> None:
        self.small, self.n = small, n
        plan, ns = small.plan, len(small.state_keys)
        self.size = small.rows[plan.rep].numel()
        heads = [small.rows[c].numel() for c in range(plan.head)]
        tails = [small.rows[small.k - plan.tail + j].numel() for j in range(plan.tail)]
        inner = n - plan.head - plan.tail
        self.head_at = np.cumsum([0, *heads])[:-1]
        self.inner_at = sum(heads)
        tail0 = self.inner_at + inner * self.size
        self.tail_at = tail0 + np.cumsum([0, *tails])[:-1]
        self.plain_at = tail0 + sum(tails)
        self.ns = ns

    def offset(self, s: int, kind: str, key: Key) -> int:
        """Row of ``key`` of ``kind`` (ode, start, out) in small cell ``s``'s rows."""
        small = self.small
        if kind == "out":
            return 2 * self.ns + small.ys.keys[s].index(key)
        return small.state_keys.index(key) + (self.ns if kind == "start" else 0)

    def rows(self, cells: np.ndarray, kind: str, key: Key) -> np.ndarray:
        """Where ``key``'s row of ``kind`` of each of ``cells`` is."""
        plan, n = self.small.plan, self.n
        out = np.empty(cells.size, dtype=np.int64)
        inner = (cells >= plan.head) & (cells < n - plan.tail)
        off = self.offset(plan.rep, kind, key) if inner.any() else 0
        out[inner] = self.inner_at + (cells[inner] - plan.head) * self.size + off
        for j in np.flatnonzero(~inner).tolist():
            c = int(cells[j])
            s = plan.source(c, n)
            base = self.head_at[c] if c < plan.head else self.tail_at[c - (n - plan.tail)]
            out[j] = base + self.offset(s, kind, key)
        return out

    def entries(self, parts: list[Part], kind: str, plain: Callable[[str], int]) -> np.ndarray:
        """Where the rows of ``parts``' entries are (``plain``: a plain name's)."""
        out = []
        for part in parts:
            if isinstance(part, str):
                out.append(np.array([plain(part)]))
                continue
            cells, keys = part
            each = [self.rows(cells, kind, key) for key in keys]
            out.append(np.stack(each, axis=1).ravel())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def synthesize(small: Small, plain: Plain, n: int) -> Pieces:
    """The DAE at ``n`` cells from the analysed small model (see the module docstring)."""
    model, plan, w, cells = small.model, small.plan, small.w, small.cells
    xparts = grown(segments(model.x_names, cells), plan, n)
    pparts = grown(segments(list(model.defaults), cells), plan, n)
    yparts = grown(segments(model.names, cells), plan, n)
    x, p = _symbols(xparts), _symbols(pparts)
    xat, xplain = _places(xparts, small.state_keys, n)
    pat, pplain = _places(pparts, small.param_keys, n)
    xg = x[[xplain[q] for q in small.xs.plain]] if small.xs.plain else cs.SX(0, 1)
    pg = p[[pplain[q] for q in small.ps.plain]] if small.ps.plain else cs.SX(0, 1)
    rest = [xg, pg, model.t]

    def picked(cells: np.ndarray, width: int = 1) -> list[cs.SX]:
        """The states and parameters of the windows of ``cells`` (each ``c - w .. c +
        width - 1 + w``; a column each; zeros outside the model), by their places (one
        indexing each)."""
        out = []
        for at, col in zip((xat, pat), (x, p)):
            d = cells[None, :] + np.arange(-w, width + w)[:, None]  # (offset, cell)
            places = at[:, np.clip(d, 0, n - 1)].transpose(1, 0, 2)  # (offset, key, cell)
            places = np.where(((d >= 0) & (d < n))[:, None, :], places, -1)
            flat = places.reshape(-1, cells.size).ravel(order="F")  # (offset, key) x cell
            inside = flat >= 0
            entries = col[flat[inside].tolist()]
            if not inside.all():
                full = cs.SX.zeros(flat.size)
                full[np.flatnonzero(inside).tolist()] = entries
                entries = full
            out.append(cs.reshape(entries, flat.size // cells.size, cells.size))
        return out

    pool = [small.functions[c](*picked(np.array([c])), *rest) for c in range(plan.head)]
    blocks, alone = divmod(n - plan.head - plan.tail, BLOCK)
    if blocks:  # (vec: each block's rows, cell after cell, as the cells' own would be)
        first = plan.head + BLOCK * np.arange(blocks)
        pool.append(cs.vec(_block(small).map(blocks)(*picked(first, BLOCK), *rest)))
    if alone:
        last = np.arange(n - plan.tail - alone, n - plan.tail)
        pool.append(cs.vec(small.functions[plan.rep].map(alone)(*picked(last), *rest)))
    for c in range(n - plan.tail, n):
        pool.append(small.functions[c - n + small.k](*picked(np.array([c])), *rest))
    region = [c if c < plan.head + w else c - small.k + n for c in plain.region]
    ends = [col[at[:, region].ravel(order="F").tolist()] for at, col in zip((xat, pat), (x, p))]
    pool.append(plain.function(*ends, *rest))
    where = _Pool(small, n)
    nxg, nedge = len(small.xs.plain), len(plain.edge)
    edge_at = {model.names[j]: where.plain_at + 2 * nxg + i for i, j in enumerate(plain.edge)}
    ends_at = np.cumsum([0, *(piece.numel() for piece in pool)])
    sums_at = {}
    for k, s in enumerate(plain.sums):
        terms = [edge_at[q] for q in s.plain]
        for key, first, last in s.cells:
            a, b = plan.target(first, n), plan.target(last, n)
            terms += where.rows(np.arange(a, b + 1), "out", key).tolist()
        sums_at[s.name] = int(ends_at[-1]) + k
        pool.append(-cs.sum1(_entries(pool, ends_at, np.array(terms))))
    column = vstack(pool)
    xrow = {q: where.plain_at + i for i, q in enumerate(small.xs.plain)}
    ode = column[where.entries(xparts, "ode", xrow.__getitem__).tolist()]
    starts = column[where.entries(xparts, "start", lambda q: xrow[q] + nxg).tolist()]
    plain_rows = edge_at | sums_at
    outputs = column[where.entries(yparts, "out", plain_rows.__getitem__).tolist()]
    bp0 = where.plain_at + 2 * nxg + nedge
    breakpoints = column[list(range(bp0, bp0 + model.breakpoints.numel()))]
    return Pieces(
        x,
        flat_names(xparts),
        ode,
        p,
        _defaults(small, pparts, n),
        flat_names(yparts),
        outputs,
        breakpoints if model.breakpoints.numel() else cs.SX(0, 1),
        starts,
        _starts(small, xparts, n),
    )


def _block(small: Small) -> cs.Function:
    """The interior function of :data:`BLOCK` consecutive cells as one, its common
    subexpressions merged (``cs.cse``: neighbouring cells share terms, as a spring's force
    enters both its masses' rates; mapped cell by cell they would be computed twice): of
    the states and parameters of cells ``-w .. BLOCK - 1 + w``, the plain ones and time,
    the rows of the block's cells, cell after cell."""
    f, w = small.functions[small.plan.rep], small.w
    ns, npar = len(small.state_keys), len(small.param_keys)
    xs = cs.SX.sym("x", ns * (BLOCK + 2 * w))
    ps = cs.SX.sym("p", npar * (BLOCK + 2 * w))
    rest = [cs.SX.sym(f"g{k}", f.size1_in(k)) for k in (2, 3, 4)]
    span = 2 * w + 1
    rows = [
        f(xs[ns * i : ns * (i + span)], ps[npar * i : npar * (i + span)], *rest)
        for i in range(BLOCK)
    ]
    return cs.Function("cells", [xs, ps, *rest], [cs.cse(cs.vertcat(*rows))])


def _defaults(small: Small, parts: list[Part], n: int) -> dict[str, float]:
    """The parameters' values at ``n`` cells: each that of its cell in the small model."""
    values = small.model.defaults
    names = flat_names(parts)
    out: list[float] = []
    for part in parts:
        if isinstance(part, str):
            out.append(values[part])
            continue
        cells, keys = part  # (all one small cell's: an end cell, or the interior's)
        s = small.plan.source(int(cells[0]), n)
        out += [values[cell_name(key, s)] for key in keys] * cells.size
    return dict(zip(names, out))


def _starts(small: Small, parts: list[Part], n: int) -> list[tuple[bool, str] | None]:
    """Each state's start at ``n`` cells: whether fixed and the variable it came from."""
    out: list[tuple[bool, str] | None] = []
    index = {key: i for i, key in enumerate(small.state_keys)}
    plain = {q: small.starts[j] for q, j in zip(small.xs.plain, small.xs.plain_at)}
    for part in parts:
        if isinstance(part, str):
            s = plain[part]
            out.append(None if s is None else (s.fixed, s.source))
            continue
        cells, keys = part
        for c in cells.tolist():
            meta = small.meta[small.plan.source(c, n)][1]
            for key in keys:
                got = meta[index[key]]
                if got is None or isinstance(got[1], str):
                    out.append(got)
                else:
                    d, source = got[1]
                    out.append((got[0], cell_name(source, c + d)))
    return out


def _entries(pieces: list[cs.SX], ends: np.ndarray, at: np.ndarray) -> cs.SX:
    """The entries ``at`` of the pieces stacked (``ends``: where each begins; the last
    entry the total), without stacking them."""
    piece = np.searchsorted(ends, at, side="right") - 1
    parts = [pieces[k][(at[piece == k] - ends[k]).tolist()] for k in np.unique(piece).tolist()]
    return cs.vertcat(cs.SX(0, 1), *parts)
