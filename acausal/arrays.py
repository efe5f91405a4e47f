"""Arrays of components: ``n`` instances of one class as one object.

:meth:`Component.array <acausal.Component.array>` builds the first instance, ``<prefix>1``,
by its constructor: the *template*. Building a component costs a CasADi binding call per
scalar operation of its equations (some 26 us each from Python) and a few Python objects
per quantity, so for a *leaf* class (below) the other instances are not built one by one.
Each exists as its entries of a few matrices (:class:`_Layout`): its own symbols (fresh,
named as its constructor would name them: ``@v<token>:p.v``, ``der(@v<token>:v)``), and
its residuals, symbolic start values and symbolic attributes, computed for all instances
at once by the template's expressions as one CasADi function of the template's symbols,
mapped over the instances (``Function.map``: one call, the scalar work in C++); what
flattening takes (the symbols, residuals and start values) as columns, instance after
instance, made so at once. Its equations' expressions (``lhs == rhs``, read only for
people: origins, instances made objects) are mapped likewise when first read.

A :class:`ComponentArray` is the sequence of the instances. Instance ``k`` becomes a
:class:`~acausal.Component` object only when it is asked for (``caps[k]``, iterating),
equal in every expression and name to the one its constructor would build, and the same
object every time. The connectors of all instances, ``caps.port``, are a
:class:`ConnectorArray`: ``system.connect(caps.port, conductors.port_a)`` connects element
by element without an object per instance (a plain connector among arrays is connected to
every element). :func:`acausal.flatten.flatten` takes the instances from the matrices, all
at once; an instance made into an object and then changed (an equation added, a start
value replaced) is flattened as a component of its own.

A leaf class has connectors, parameters, variables and equations, and attributes that are
symbols, expressions, connectors or plain values. A class with subcomponents, inner
connections, events, inner/outer parameters, exposed connectors, declared valid ranges or
attributes holding anything else (a list of symbols, say) is built by its constructor,
one instance after the other, in an array of the same interface: the same result at the
constructor's cost.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from numbers import Integral, Number
from operator import is_
from typing import TYPE_CHECKING, Any, NamedTuple

import casadi as cs
import numpy as np

from .connectors import Connector, ConnectorType, check_same_type
from .errors import ConnectError, OptionError
from .flat import Deferred
from .gc_pause import paused_gc
from .pickling import PicklesWithCasadi
from .symbols import (
    Quantity,
    column_entries,
    new_tokens,
    symbols_around,
    vstack,
)
from .table import ArrayKeys

if TYPE_CHECKING:
    from .component import Component
    from .system import System

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
        "_element",
    }
)


#: Up to this many instances made objects each get their expressions alone (some 0.1 ms
#: each); after that, all instances' are made at once (a mapped call: 20 ms for 10,000).
_ALONE = 16


def make_array(
    cls: type[Component], prefix: str, n: int, args: tuple, kwargs: dict[str, Any]
) -> ComponentArray:
    """``n`` instances of ``cls`` named ``<prefix>1 .. <prefix>n``, all made with
    ``cls(name, *args, **kwargs)``'s arguments (see the module docstring)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise OptionError(f"{cls.__name__}.array({prefix!r}, n={n!r}): n must be an int >= 1")
    template = cls(f"{prefix}1", *args, **kwargs)
    with paused_gc():  # many objects that live on, no cycles among them: no point scanning
        if not _is_leaf(template):
            made = [template] + [cls(f"{prefix}{k}", *args, **kwargs) for k in range(2, n + 1)]
            return ComponentArray(prefix, made, None, n)
        return ComponentArray(prefix, [template], _Snapshot.of(template), n)


def _is_leaf(c: Component) -> bool:
    """Whether ``c`` can be copied through its template function."""
    if c._children or c._connections or c._events or c._inners or c._outers:
        return False
    if c.valid_ranges() or any(conn.owner is not c for conn in c._connectors.values()):
        return False
    return all(_plain(v) for k, v in c.__dict__.items() if k not in _OWN)


def _plain(value: object) -> bool:
    return value is None or isinstance(value, (cs.SX, Connector, Number, str))


class _Snapshot(NamedTuple):
    """What a leaf template's instances are made from (:meth:`_Layout.of`), taken when its
    array is made: its token, its quantities (local name, symbol key, symbol, start), its
    equations' expressions and residuals and its symbolic attributes (a change to the
    template after that makes it an instance of its own, not a change to the others)."""

    token: str
    quantities: tuple[tuple[str, tuple, cs.SX, Any], ...]
    exprs: tuple[cs.SX, ...]
    residuals: tuple[cs.SX, ...]
    attributes: tuple[cs.SX, ...]

    @staticmethod
    def of(template: Component) -> _Snapshot:
        return _Snapshot(
            template.token,
            tuple((q.local, q.key, q.sym, q.start) for q in template._quantities.values()),
            tuple(e.expr for e in template._equations),
            tuple(e.residual for e in template._equations),
            tuple(
                v for k, v in template.__dict__.items() if k not in _OWN and isinstance(v, cs.SX)
            ),
        )


class _Layout(NamedTuple):
    """A leaf template's entries, with every instance's: its quantities' symbols
    (``symbols``: a column, instance after instance), the symbols of the derivatives its
    expressions take (``rates``; their names' parts around the token in ``derivatives``),
    its equations' residuals (a column, instance after instance), the symbolic start
    values (``initial``, likewise) and the symbolic attributes stacked; each matrix a row
    per entry and a column per instance. Flattening takes the columns whole. The
    equations' expressions (``lhs == rhs``, read only for people: origins, instances
    made objects), a column per instance, are made when first read (``exprs``, from the
    template's: ``declared``, in its symbols and ``others``)."""

    quantities: tuple[str, ...]  # local names, in declaration order
    derivatives: tuple[tuple[str, str, str], ...]  # der(@v<token>:x) -> "der(", "@v", ":x)"
    shapes: tuple[tuple[int, int], ...]  # of each expression, attribute, start value
    equations: int
    starts: tuple[str, ...]  # the quantities whose start value is an expression
    tokens: tuple[str, ...]
    symbols: cs.SX  # (quantities * n) x 1
    rates: cs.SX  # derivatives x n
    exprs: Deferred  # equations x n
    declared: cs.SX  # equations x 1 (the template's)
    residuals: cs.SX  # (equations * n) x 1
    initial: cs.SX  # (starts * n) x 1
    attributes: cs.SX  # (stacked attributes) x n
    others: cs.SX  # the symbols the template's expressions hold besides its own

    @staticmethod
    def of(snap: _Snapshot, n: int) -> _Layout:
        """The template's layout (from its :class:`_Snapshot`), with ``n - 1`` further
        instances' fresh symbols and their residuals, start values and attributes from one
        call of the template function mapped over them."""
        starts = [
            (local, start) for local, _, _, start in snap.quantities if isinstance(start, cs.SX)
        ]
        parts = [snap.exprs, snap.residuals, [start for _, start in starts], snap.attributes]
        stacked = [cs.vertcat(cs.SX(0, 1), *[cs.vec(e) for e in part]) for part in parts]
        # the template's own symbols (its quantities and their derivatives) are replaced;
        # others (time, foreign symbols) stay the same in every instance
        mark = re.compile(r"(@[vpm])" + re.escape(snap.token) + ":")
        names = {key for _, key, _, _ in snap.quantities}
        found = [s for s in cs.symvar(cs.vertcat(*stacked)) if s.name() not in names]
        derivs = [s for s in found if mark.search(s.name())]
        others = cs.vertcat(cs.SX(0, 1), *[s for s in found if not mark.search(s.name())])
        rates = tuple(tuple(mark.split(s.name(), 1)) for s in derivs)
        own = [
            cs.vertcat(cs.SX(0, 1), *[sym for _, _, sym, _ in snap.quantities]),
            cs.vertcat(cs.SX(0, 1), *derivs),
        ]
        tokens = [snap.token] + new_tokens(n - 1)
        if n > 1:  # each further instance's quantities, and its derivatives, around its token
            around = [(f"@{key[1]}", f":{local}") for local, key, _, _ in snap.quantities]
            fresh = [
                symbols_around(around, tokens[1:]),
                symbols_around([(a + kind, f":{b}") for a, kind, b in rates], tokens[1:]),
            ]
            inputs = [cs.reshape(c, m.numel(), n - 1) for c, m in zip(fresh, own)]
            fun = cs.Function("template", [*own, others], stacked[1:])
            mapped = fun.map(n - 1)(*inputs, cs.repmat(others, 1, n - 1))
            own = [vstack([own[0], fresh[0]]), cs.horzcat(own[1], inputs[1])]
            stacked[1:] = [
                vstack([stacked[1], cs.vec(mapped[0])]),
                vstack([stacked[2], cs.vec(mapped[1])]),
                cs.horzcat(stacked[3], mapped[2]),
            ]
        lay = _Layout(
            tuple(local for local, _, _, _ in snap.quantities),
            rates,
            tuple(e.shape for part in parts for e in part),
            len(snap.exprs),
            tuple(local for local, _ in starts),
            tuple(tokens),
            *own,
            Deferred(None),
            *stacked,
            others,
        )
        return lay._replace(exprs=Deferred(lay.expressions))

    def _function(self) -> cs.Function:
        """The template's expressions as a function of its own symbols, its derivatives'
        and ``others``."""
        count = len(self.quantities)
        own = [self.symbols[:count], self.rates[:, 0], self.others]
        return cs.Function("template", own, [self.declared])

    def expressions(self) -> cs.SX:
        """The equations' expressions of every instance, a column each: the template's
        own, the others' from its function of its symbols mapped over theirs (made when
        first read, :attr:`exprs`: flattening reads the residuals)."""
        n, count = len(self.tokens), len(self.quantities)
        if n == 1:
            return self.declared
        syms = cs.reshape(self.symbols[count:], count, n - 1)
        others = cs.repmat(self.others, 1, n - 1)
        mapped = self._function().map(n - 1)(syms, self.rates[:, 1:], others)
        return cs.horzcat(self.declared, mapped)

    def column(self, k: int, alone: bool) -> cs.SX:
        """Instance ``k``'s expressions, residuals, start values and attributes stacked;
        its expressions those of every instance (:attr:`exprs`, made once) unless
        ``alone`` and they are not made yet: then the template's function of its own."""
        m, s, count = self.equations, len(self.starts), len(self.quantities)
        if alone and not self.exprs.made:
            own = (self.symbols[count * k : count * (k + 1)], self.rates[:, k], self.others)
            exprs = self._function()(*own)
        else:
            exprs = self.exprs.value[:, k]
        return cs.vertcat(
            exprs,
            self.residuals[m * k : m * (k + 1)],
            self.initial[s * k : s * (k + 1)],
            self.attributes[:, k],
        )


class Block(NamedTuple):
    """An array's instances that flattening takes from its matrices (``natives``, from
    0, named ``prefixes``), instance after instance: their quantities' symbols' own names
    (``keys``, with their dotted names), dotted names and symbols (a column), their
    residuals and their symbolic start values (columns), their equations' expressions (a
    column per instance, made when first read); and the symbols of the derivatives the
    template's expressions take (a row per derivative, a column per instance)."""

    array: ComponentArray
    natives: np.ndarray
    prefixes: list[str]
    keys: ArrayKeys
    names: list[str]
    symbols: cs.SX
    residuals: cs.SX
    exprs: Deferred
    starts: cs.SX
    derivatives: cs.SX


class _Link:
    """An instance's place in its array. A copy or a pickle of the instance alone drops
    it (copying one component would otherwise copy its whole array): the copy is a
    component of its own. Its array, pickled with it, links it again."""

    __slots__ = ("array", "index")

    def __init__(self, array: ComponentArray | None, index: int) -> None:
        self.array, self.index = array, index

    def __reduce__(self) -> tuple:
        return (_Link, (None, self.index))


def _parts(c: Component) -> tuple:
    """What flattening takes from an array instead of from an instance: its symbols,
    residuals and symbolic start values (as objects), and whether it gained anything an
    array instance has not."""
    return (
        [q.sym for q in c._quantities.values()],
        [e.residual for e in c._equations],
        [q.start for q in c._quantities.values() if isinstance(q.start, cs.SX)],
        bool(c._children or c._connections or c._events or c._inners or c._outers),
    )


def _same(a: tuple, b: tuple) -> bool:
    return a[3] == b[3] and all(
        len(x) == len(y) and all(map(is_, x, y)) for x, y in zip(a[:3], b[:3])
    )


class ComponentArray(PicklesWithCasadi, Sequence):
    """The instances ``<prefix>1 .. <prefix>n`` of one component class (see the module
    docstring): a sequence of components, made into objects when asked for, whose
    connectors are arrays (``caps.port``). Its own methods but :meth:`connector` are
    underscored (the compiler's), so that none hides a connector's name."""

    def __init__(
        self, prefix: str, made: list[Component], snapshot: _Snapshot | None, n: int
    ) -> None:
        self.prefix = prefix
        self.template = made[0]
        self._snapshot = snapshot  # (None: not a leaf class; every instance made)
        self._made_layout: _Layout | None = None
        self._n = n
        self._made: dict[int, Component] = {}
        self._handed: dict[int, tuple] = {}
        self._system: System | None = None
        for k, c in enumerate(made):
            self._keep(k, c)

    @property
    def _layout(self) -> _Layout | None:
        """A leaf class's instances as matrices (:class:`_Layout`), made when first needed
        (flattening, an instance made an object; the stencil compile needs none), from
        the template as it was when the array was made; None for any other class."""
        if self._snapshot is not None and self._made_layout is None:
            with paused_gc():
                self._made_layout = _Layout.of(self._snapshot, self._n)
        return self._made_layout

    # -- the sequence ---------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            return [self[k] for k in range(self._n)[key]]
        if not isinstance(key, Integral) or isinstance(key, bool):
            raise OptionError(f"{self!r}[{key!r}]: index with an int or a slice")
        k = int(key) + self._n if key < 0 else int(key)
        if not 0 <= k < self._n:
            raise IndexError(f"{self!r} has {self._n} instances; index {key} is out of range")
        found = self._made.get(k)
        return found if found is not None else self._keep(k, self._instance(k))

    def __iter__(self) -> Iterator[Component]:
        return (self[k] for k in range(self._n))

    def __add__(self, other: Sequence[Component]) -> list[Component]:
        return list(self) + list(other)

    def __radd__(self, other: Sequence[Component]) -> list[Component]:
        return list(other) + list(self)

    def __repr__(self) -> str:
        return f"<ComponentArray {self.prefix}1..{self.prefix}{self._n} of {self.cls.__name__}>"

    def __getattr__(self, name: str) -> ConnectorArray:
        """``caps.port``: :meth:`connector` ``("port")``."""
        if "template" not in self.__dict__ or name.startswith("__"):
            raise AttributeError(name)
        return self.connector(name)

    def connector(self, name: str) -> ConnectorArray:
        """The connector ``name`` of every instance, as a :class:`ConnectorArray` (also
        ``array.<name>``, unless the array has an attribute of that name)."""
        template = self.template
        if template._connectors.get(name) is None:
            raise AttributeError(
                f"{self!r}: {name!r} is not a connector of {self.cls.__name__} (it has "
                f"{', '.join(template._connectors) or 'none'}); take an instance's "
                f"attributes from it: {self.prefix}[k].{name}"
            )
        return ConnectorArray(self, name, np.arange(self._n))

    @property
    def cls(self) -> type[Component]:
        return type(self.template)

    def _names(self) -> list[str]:
        return [f"{self.prefix}{k}" for k in range(1, self._n + 1)]

    # -- instances as objects ---------------------------------------------------------------
    def _keep(self, k: int, c: Component) -> Component:
        object.__setattr__(c, "_element", _Link(self, k))
        self._made[k] = c
        self._handed[k] = _parts(c)
        return c

    def _instance(self, k: int) -> Component:
        """Instance ``k`` (from 0) as an object: fresh quantities and connectors around its
        column's symbols, its expressions from its columns (:meth:`_Layout.column`)."""
        lay, t = self._layout, self.template
        c = object.__new__(type(t))
        for key, value in (
            ("_name", f"{self.prefix}{k + 1}"),
            ("_parent", None),
            ("_children", {}),
            ("_quantities", {}),
            ("token", lay.tokens[k]),
            ("_system", None),
            ("_connectors", {}),
            ("_equations", []),
            ("_connections", []),
            ("_inners", {}),
            ("_events", []),
            ("_outers", {}),
        ):
            object.__setattr__(c, key, value)
        count = len(lay.quantities)
        syms = cs.vertsplit(lay.symbols[count * k : count * (k + 1)])
        for (local, q), sym in zip(t._quantities.items(), syms):
            c._quantities[local] = Quantity(
                c,
                local,
                q.kind,
                start=q.start,
                fixed=q.fixed,
                value=q.value,
                state_priority=q.state_priority,
                unit=q.unit,
                sym=sym,
            )
        for local, conn in t._connectors.items():
            new = Connector(c, local, conn.ctype)
            new.quantities = {v: c._quantities[q.local] for v, q in conn.quantities.items()}
            c._connectors[local] = new
        # (a few instances made objects: each its own expressions; more: all at once)
        scalars = cs.vertsplit(lay.column(k, alone=len(self._made) <= _ALONE))
        pieces, at = [], 0
        for rows, cols in lay.shapes:
            if rows * cols == 1:
                pieces.append(scalars[at])
            else:
                pieces.append(cs.reshape(cs.vertcat(*scalars[at : at + rows * cols]), rows, cols))
            at += rows * cols
        m = lay.equations
        for e, expr, residual in zip(t._equations, pieces[:m], pieces[m : 2 * m]):
            c._equations.append(type(e)(c, e.index, expr, residual))
        for local, start in zip(lay.starts, pieces[2 * m : 2 * m + len(lay.starts)]):
            c._quantities[local].start = start
        symbolic = iter(pieces[2 * m + len(lay.starts) :])
        for key, value in t.__dict__.items():
            if key in _OWN:
                continue
            if isinstance(value, cs.SX):
                value = next(symbolic)
            elif isinstance(value, Connector):
                value = c._connectors[value.local]
            object.__setattr__(c, key, value)
        return c

    # -- what flattening takes ----------------------------------------------------------
    def _natives(self) -> np.ndarray:
        """The instances (from 0) flattening takes from the matrices: all of a leaf class's
        but those made into objects and then changed or placed inside another component;
        none of any other class's."""
        if self._snapshot is None:
            return np.zeros(0, dtype=np.int64)
        keep = np.ones(self._n, dtype=bool)
        for k, c in self._made.items():
            keep[k] = c._parent is None and _same(_parts(c), self._handed[k])
        return np.flatnonzero(keep)

    def _split(self) -> tuple[list[Component], Block | None]:
        """The instances flattened as components of their own (not :meth:`_natives`), in
        order, and the others as a :class:`Block` (None if there are none)."""
        natives = self._natives()
        keep = np.zeros(self._n, dtype=bool)
        keep[natives] = True
        loose = [self[k] for k in np.flatnonzero(~keep).tolist()]
        if not natives.size:
            return loose, None
        lay = self._layout
        count = len(lay.quantities)
        tokens = [lay.tokens[k] for k in natives.tolist()]
        around = [(f"@{q.key[1]}", f":{q.local}") for q in self.template._quantities.values()]
        prefixes = [f"{self.prefix}{k + 1}" for k in natives.tolist()]
        names = [f"{p}.{q}" for p in prefixes for q in lay.quantities]
        every = natives.size == self._n
        cols = slice(None) if every else natives.tolist()

        def entries(column: cs.SX, width: int) -> cs.SX:
            """The natives' entries of a column of ``width`` entries per instance."""
            rows = (natives[:, None] * width + np.arange(width)).ravel()
            return column if every else column_entries(column, rows.tolist())

        symbols = entries(lay.symbols, count)
        block = Block(
            self,
            natives,
            prefixes,
            ArrayKeys(around, tokens, names),
            names,
            symbols,
            entries(lay.residuals, lay.equations),
            lay.exprs if every else Deferred(lambda: lay.exprs.value[:, cols]),
            entries(lay.initial, len(lay.starts)),
            lay.rates[:, cols],
        )
        return loose, block

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for k, c in self._made.items():  # (a pickled link drops its array: _Link)
            object.__setattr__(c, "_element", _Link(self, k))


def unlinked_array(prefix: str, template: Component, snap: _Snapshot, n: int) -> ComponentArray:
    """An array of ``n`` instances of ``template`` (made from ``snap``, its
    :class:`_Snapshot`) that belongs to no system and does not link the template to
    itself (the template stays its own array's): the stencil compile's arrays of other
    lengths than the user's."""
    out = object.__new__(ComponentArray)
    out.prefix, out.template, out._snapshot, out._n = prefix, template, snap, n
    out._made_layout, out._made, out._handed, out._system = None, {}, {}, None
    return out


class ConnectorArray(Sequence):
    """One connector of some instances of a :class:`ComponentArray` (``caps.port``,
    ``caps.port[1:]``, ``caps.port[[0, 5, 9]]``, ``caps.port[mask]``: indexed as a numpy
    array of the instances' indices is): connected element by element by
    :meth:`System.connect <acausal.System.connect>`; an element taken alone
    (``caps.port[3]``) is that instance's connector."""

    def __init__(self, array: ComponentArray, local: str, index: np.ndarray) -> None:
        self.array = array
        self.local = local
        self.index = index
        self.ctype: ConnectorType = array.template._connectors[local].ctype

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, Integral) and not isinstance(key, bool):
            return self.array[int(self.index[key])]._connectors[self.local]
        try:
            index = self.index[key]
        except (IndexError, TypeError, ValueError) as exc:
            raise OptionError(
                f"{self.name}[{key!r}]: index with an int, a slice or an array of ints ({exc})"
            ) from None
        return ConnectorArray(self.array, self.local, np.atleast_1d(index))

    @property
    def name(self) -> str:
        """``R[1..1000].p``: the instances (by name number) and the connector."""
        ks = self.index + 1
        shown = f"{ks[0]}..{ks[-1]}" if len(ks) > 1 else str(ks[0]) if len(ks) else ""
        return f"{self.array.prefix}[{shown}].{self.local}"

    def __repr__(self) -> str:
        return f"<{self.ctype.name} array {self.name}, {len(self)} connectors>"


def element_of(c: Connector) -> tuple[ComponentArray, int] | None:
    """The array and index of the instance owning connector ``c``, if it is an array's."""
    link = c.owner.__dict__.get("_element")
    return None if link is None or link.array is None else (link.array, link.index)


def check_array_connection(items: tuple) -> int:
    """The common length of the :class:`ConnectorArray` among ``items`` (connectors and
    connector arrays of one ``connect`` call), after checking types, lengths and that no
    element is connected to itself."""
    if len(items) < 2:
        raise ConnectError(f"connect() needs two or more connectors, got {list(items)}")
    for c in items:
        if not isinstance(c, (Connector, ConnectorArray)):
            raise ConnectError(f"connect(): {c!r} is not a connector or a connector array")
    arrays = [c for c in items if isinstance(c, ConnectorArray)]
    lengths = {len(a) for a in arrays}
    if len(lengths) > 1:
        shown = ", ".join(f"{a.name} ({len(a)})" for a in arrays)
        raise ConnectError(
            f"connect({shown}): arrays connected element by element must have one length; "
            "slice them to match"
        )
    check_same_type(items)
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            same = _overlap(a, b)
            if same is not None:
                raise ConnectError(f"connect(): {same} is connected to itself")
    return lengths.pop()


def length(call: tuple) -> int:
    """The length of the connector arrays of a checked array ``connect`` call."""
    return len(next(c for c in call if isinstance(c, ConnectorArray)))


def per_element(call: tuple) -> list[tuple[Connector, ...]]:
    """A checked array ``connect`` call as one call of connectors per element (the
    instances made into objects): the ``k``-th elements of its arrays with its plain
    connectors."""
    return [
        tuple(c[k] if isinstance(c, ConnectorArray) else c for c in call)
        for k in range(length(call))
    ]


def _overlap(a: Any, b: Any) -> str | None:
    """The name of an element ``a`` and ``b`` (connectors or arrays) share at one place."""
    if isinstance(a, Connector) and isinstance(b, Connector):
        return a.name if a is b else None
    if isinstance(a, Connector):
        a, b = b, a
    if isinstance(b, Connector):
        at = element_of(b)
        if at is None or at[0] is not a.array or b.local != a.local:
            return None
        return b.name if at[1] in set(a.index.tolist()) else None
    if a.array is not b.array or a.local != b.local:
        return None
    hit = np.flatnonzero(a.index == b.index)
    return f"{a.array.prefix}{a.index[hit[0]] + 1}.{a.local}" if hit.size else None
