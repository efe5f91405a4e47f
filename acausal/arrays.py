"""Arrays of components: many instances of one class built by one CasADi call.

Building a component costs a CasADi binding call per scalar operation of its equations
(about 26 us each from Python), so a ladder of 10,000 stages spends more time in the
constructors than in the compiler. :meth:`Component.array <acausal.Component.array>`
builds the first instance, ``<prefix>1``, by its constructor: it is the *template*. Its
equations, start values and symbolic attributes are one CasADi function of the template's
own symbols; every further instance gets fresh symbols (the template's names with its own
token, as its constructor would name them) and its expressions from that function mapped
over all instances at once (``Function.map``: one call, the scalar work in C++). The
instances are ordinary components, named ``<prefix>1 .. <prefix>n``, equal in every
expression and name to those the constructor would build.

The copies also keep what the call stacked (:class:`Stacks`): their symbols, residuals
and symbolic start values as columns of the template function's inputs and outputs.
Flatten takes them from there (:func:`stacked`: each array's stack once, then one index
puts every entry in its place), where stacking the same scalars again from Python would
cost a binding conversion each (some 4 us: a second at 270,000 symbols).

This holds for *leaf* components: connectors, parameters, variables and equations, and
attributes that are symbols, expressions, connectors or plain values. A class with
subcomponents, inner connections, events, inner/outer parameters, exposed connectors, or
attributes holding anything else (a list of symbols, say) is built by its constructor, one
instance after the other: the same result, at the constructor's cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import accumulate
from numbers import Number
from operator import is_
from typing import TYPE_CHECKING, Any

import casadi as cs
import numpy as np

from .connectors import Connector
from .errors import OptionError
from .gc_pause import paused_gc
from .symbols import Quantity, new_token, vstack

if TYPE_CHECKING:
    from .component import Component

#: Attributes every component has; the others are the class's own (``self.p``, ``self.v``).
_OWN = frozenset(
    {
        "_name",
        "_parent",
        "_children",
        "_quantities",
        "token",
        "_system",
        "_connectors",
        "_equations",
        "_connections",
        "_inners",
        "_events",
        "_outers",
        "_stacks",
    }
)


def instances(
    cls: type[Component], prefix: str, n: int, args: tuple, kwargs: dict[str, Any]
) -> list[Component]:
    """``n`` instances of ``cls`` named ``<prefix>1 .. <prefix>n``, all made with
    ``cls(name, *args, **kwargs)``'s arguments (see the module docstring)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise OptionError(f"{cls.__name__}.array({prefix!r}, n={n!r}): n must be an int >= 1")
    template = cls(f"{prefix}1", *args, **kwargs)
    if n == 1:
        return [template]
    names = [f"{prefix}{k}" for k in range(2, n + 1)]
    with paused_gc():  # many objects that live on, no cycles among them: no point scanning
        if not _is_leaf(template):
            return [template] + [cls(name, *args, **kwargs) for name in names]
        return [template, *_Copier(template).copies(names)]


def _is_leaf(c: Component) -> bool:
    """Whether ``c`` can be copied through its template function."""
    if c._children or c._connections or c._events or c._inners or c._outers:
        return False
    if any(conn.owner is not c for conn in c._connectors.values()):
        return False
    return all(_plain(v) for k, v in c.__dict__.items() if k not in _OWN)


def _plain(value: object) -> bool:
    return value is None or isinstance(value, (cs.SX, Connector, Number, str))


class _Copier:
    """The template's symbols, the expressions to copy, and the function between them."""

    def __init__(self, template: Component) -> None:
        self.template = template
        self.quantities = list(template._quantities.values())
        self.starts = [q for q in self.quantities if isinstance(q.start, cs.SX)]
        attrs = [v for k, v in template.__dict__.items() if k not in _OWN and isinstance(v, cs.SX)]
        exprs = [e.expr for e in template._equations] + [e.residual for e in template._equations]
        exprs += [q.start for q in self.starts] + attrs
        self.shapes = [e.shape for e in exprs]
        # the rows of the residuals and of the start values among the stacked
        # expressions (kept where each is a scalar)
        m, k = len(template._equations), len(self.starts)
        at = list(accumulate((r * c for r, c in self.shapes), initial=0))
        parts = (("residuals", m, 2 * m), ("starts", 2 * m, 2 * m + k))
        self.rows = {w: slice(at[a], at[b]) for w, a, b in parts if at[b] - at[a] == b - a}
        stacked = cs.vertcat(cs.SX(0, 1), *[cs.vec(e) for e in exprs])
        # the template's own symbols (its quantities and their derivatives) are replaced;
        # others (time, foreign symbols) stay the same in every instance
        mark = re.compile(r"(@[vpm])" + re.escape(template.token) + ":")
        names = {q.key for q in self.quantities}
        found = [s for s in cs.symvar(stacked) if s.name() not in names]
        derivs = [s for s in found if mark.search(s.name())]
        others = cs.vertcat(cs.SX(0, 1), *[s for s in found if not mark.search(s.name())])
        # a derivative's name around the template's token: der(@v<token>:x) -> "der(", "@v", ":x)"
        self.derivs = [tuple(mark.split(s.name(), 1)) for s in derivs]
        syms = cs.vertcat(*[q.sym for q in self.quantities], *derivs)
        self.fun = cs.Function("template", [syms, others], [stacked])
        self.others = others

    def copies(self, names: list[str]) -> list[Component]:
        """The instances named ``names``: fresh objects and symbols, then every expression
        of all of them from one call of the mapped template function."""
        made = [self._shell(name) for name in names]
        syms = []
        for c in made:
            syms += [c._quantities[q.local].sym for q in self.quantities]
            syms += [cs.SX.sym(f"{a}{kind}{c.token}:{b}") for a, kind, b in self.derivs]
        n = len(made)
        stride = len(syms) // n
        inputs = cs.reshape(cs.vertcat(*syms), stride, n)
        out = self.fun.map(n)(inputs, cs.repmat(self.others, 1, n))
        flat = cs.vertsplit(cs.vec(out))
        size = out.size1()
        kept = {which: (out, flat, r.start, r.stop - r.start) for which, r in self.rows.items()}
        stacks = Stacks({"symbols": (inputs, syms, 0, len(self.quantities)), **kept})
        for k, c in enumerate(made):
            self._fill(c, flat[k * size : (k + 1) * size])
            object.__setattr__(c, "_stacks", (stacks, k))
        return made

    def _shell(self, name: str) -> Component:
        """An instance with the template's connectors and quantities, new symbols."""
        t = self.template
        c = object.__new__(type(t))
        for key, value in (
            ("_name", name),
            ("_parent", None),
            ("_children", {}),
            ("_quantities", {}),
            ("token", new_token()),
            ("_system", None),
            ("_connectors", {}),
            ("_equations", []),
            ("_connections", []),
            ("_inners", {}),
            ("_events", []),
            ("_outers", {}),
        ):
            object.__setattr__(c, key, value)
        for local, q in t._quantities.items():
            c._quantities[local] = Quantity(
                c,
                local,
                q.kind,
                start=q.start,
                fixed=q.fixed,
                value=q.value,
                state_priority=q.state_priority,
                unit=q.unit,
            )
        for local, conn in t._connectors.items():
            new = Connector(c, local, conn.ctype)
            new.quantities = {v: c._quantities[q.local] for v, q in conn.quantities.items()}
            c._connectors[local] = new
        return c

    def _fill(self, c: Component, scalars: list[cs.SX]) -> None:
        """Set the instance's equations, symbolic start values and attributes from its
        entries of the mapped function's output, ``scalars``."""
        pieces, k = [], 0
        for rows, cols in self.shapes:
            if rows * cols == 1:
                pieces.append(scalars[k])
            else:
                pieces.append(cs.reshape(cs.vertcat(*scalars[k : k + rows * cols]), rows, cols))
            k += rows * cols
        t = self.template
        m = len(t._equations)
        for e, expr, residual in zip(t._equations, pieces[:m], pieces[m : 2 * m]):
            c._equations.append(type(e)(c, e.index, expr, residual))
        for q, start in zip(self.starts, pieces[2 * m : 2 * m + len(self.starts)]):
            c._quantities[q.local].start = start
        symbolic = iter(pieces[2 * m + len(self.starts) :])
        for key, value in t.__dict__.items():
            if key in _OWN:
                continue
            if isinstance(value, cs.SX):
                value = next(symbolic)
            elif isinstance(value, Connector):
                value = c._connectors[value.local]
            object.__setattr__(c, key, value)


#: The scalars of a component that flatten stacks, by name.
PARTS: dict[str, Callable[[Component], list]] = {
    "symbols": lambda c: [q.sym for q in c._quantities.values()],
    "residuals": lambda c: [e.residual for e in c._equations],
    "starts": lambda c: [q.start for q in c._quantities.values() if isinstance(q.start, cs.SX)],
}


class Stacks:
    """What one :meth:`Component.array <acausal.Component.array>` call stacked for its
    copies, and the scalars it handed out: for each of the :data:`PARTS` kept (each of
    its entries a scalar), ``parts[part] = (matrix, handed, first, count)``, copy ``k``'s
    entries being rows ``first .. first + count - 1`` of column ``k`` of ``matrix`` (the
    template function's inputs for the symbols, its outputs for the residuals and start
    values), and the same as the scalars ``handed``, column after column."""

    __slots__ = ("parts",)

    def __init__(self, parts: dict[str, tuple[cs.SX, list[cs.SX], int, int]]) -> None:
        self.parts = {
            which: (matrix, handed, matrix.size1(), first, count)
            for which, (matrix, handed, first, count) in parts.items()
        }

    def __reduce__(self) -> tuple:
        """A copy or a pickle starts without the stacks (they are what one build made;
        copying one component would otherwise copy its whole array): flatten then
        stacks that component's scalars one by one."""
        return (Stacks, ({},))

    def whole(self, which: str) -> tuple[cs.SX, int]:
        """All copies' part ``which`` stacked, copy after copy, and how many scalars each
        copy has."""
        matrix, _, _, first, count = self.parts[which]
        return cs.vec(matrix[first : first + count, :]), count


def _unchanged(c: Component, which: str) -> tuple[Stacks, int] | None:
    """The :class:`Stacks` holding ``c``'s part ``which`` as its array made it, and
    ``c``'s column there; None if ``c`` is not a copy, has outers, or that part changed
    since (compared object by object)."""
    record = c.__dict__.get("_stacks")
    if record is None or c._outers or which not in record[0].parts:
        return None
    _, handed, stride, first, count = record[0].parts[which]
    at = record[1] * stride + first
    mine = PARTS[which](c)
    same = len(mine) == count and all(map(is_, mine, handed[at : at + count]))
    return record if same else None


def stacked(comps: list[Component], which: str, scalars: Callable[[Component], list]) -> cs.SX:
    """The components' part ``which`` (of :data:`PARTS`) stacked in order: unchanged
    copies' as entries of their arrays' :class:`Stacks` (each array's stacked once, then
    all picked in order by one index), any other component's from its ``scalars``."""
    found = [_unchanged(c, which) for c in comps]
    if all(f is None for f in found):
        return cs.vertcat(cs.SX(0, 1), *[x for c in comps for x in scalars(c)])
    pieces, start, width, size = [], {}, {}, 0  # each array's stack, its start, its width
    for f in found:
        if f is not None and id(f[0]) not in start:
            whole, width[id(f[0])] = f[0].whole(which)
            start[id(f[0])] = size
            pieces.append(whole)
            size += whole.numel()
    loose: list = []  # the other components' scalars, after the arrays' stacks
    firsts, counts = [], []  # where each component's entries start, how many
    for c, f in zip(comps, found):
        if f is None:
            mine = scalars(c)
            firsts.append(size + len(loose))
            counts.append(len(mine))
            loose += mine
        else:
            firsts.append(start[id(f[0])] + f[1] * width[id(f[0])])
            counts.append(width[id(f[0])])
    # entry p of the result, the i-th of component j: firsts[j] + i = index[p]
    count = np.asarray(counts, dtype=np.int64)
    shift = np.asarray(firsts, dtype=np.int64) - (np.cumsum(count) - count)
    index = np.repeat(shift, count) + np.arange(count.sum())
    pieces.append(cs.vertcat(cs.SX(0, 1), *loose))
    return vstack(pieces)[index.tolist()]
