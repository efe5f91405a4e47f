"""A system: component instances and the connections between their connectors.

The connectors and ``connect`` calls form a graph (:meth:`System.graph`, for plots); each
connected part of it is a connection set (potentials equal, flows sum to zero), found by
scipy's connected components. Arrays of components (:class:`~acausal.ComponentArray`)
belong to a system as a whole, and their connector arrays connect element by element.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .arrays import ComponentArray, ConnectorArray, check_array_connection, per_element
from .component import Component, check_connection, check_name, root
from .connectors import Connector
from .errors import ConnectError, NameClashError
from .pickling import PicklesWithCasadi


class System(PicklesWithCasadi):
    """The top level of a model; it pickles and deep-copies (with its components)."""

    def __init__(self, name: str = "system") -> None:
        self.name = check_name("system", name)
        self._components: dict[str, Component] = {}
        self._arrays: dict[str, ComponentArray] = {}  # by prefix
        self._order: list[Component | ComponentArray] = []  # the top level, as added
        self._connections: list[tuple[Connector, ...]] = []
        # connect calls with connector arrays: connectors and arrays, element by element
        self._array_connections: list[tuple[Connector | ConnectorArray, ...]] = []

    def __repr__(self) -> str:
        count = len(self._components) + sum(len(a) for a in self._arrays.values())
        return f"<System {self.name}: {count} components>"

    def add(self, *components: Component | ComponentArray) -> None:
        """Add components or arrays of them (``connect`` adds those it touches by itself);
        an instance of an array adds its whole array."""
        for c in components:
            if isinstance(c, ComponentArray):
                self._add_array(c)
                continue
            if not isinstance(c, Component):
                raise NameClashError(f"System.add(): {c!r} is not a component")
            top = root(c)
            link = top.__dict__.get("_element")
            if link is not None and link.array is not None:
                self._add_array(link.array)
                continue
            other = self._components.get(top.name)
            if other is top:
                continue
            _check_owner(top._system, self, f"component {top.name}")
            if other is not None:
                raise NameClashError(
                    f"two components are named {top.name!r} ({type(other).__name__} and "
                    f"{type(top).__name__}); give each a unique name"
                )
            for a in self._arrays.values():
                if _numbered(top.name, a):
                    raise NameClashError(f"{top.name} is both a component and one of {a!r}")
            self._components[top.name] = top
            self._order.append(top)
            object.__setattr__(top, "_system", self)

    def _add_array(self, a: ComponentArray) -> None:
        if self._arrays.get(a.prefix) is a:
            return
        _check_owner(a._system, self, f"array {a!r}")
        for name in self._components:
            if _numbered(name, a):
                raise NameClashError(f"{name} is both a component and one of {a!r}")
        for b in self._arrays.values():
            if not (a.prefix.startswith(b.prefix) or b.prefix.startswith(a.prefix)):
                continue  # (then no name of one array starts with the other's prefix)
            clash = next((n for n in b._names() if _numbered(n, a)), None)
            if clash is not None:
                raise NameClashError(f"{clash} is one of {b!r} and one of {a!r}")
        self._arrays[a.prefix] = a
        self._order.append(a)
        a._system = self

    def connect(self, *connectors: Connector | ConnectorArray) -> None:
        """Connect two or more connectors of the same type; with connector arrays
        (``caps.port``, ``rs.n[:-1]``), element by element: the ``k``-th elements of
        the arrays (all of one length) with each plain connector given."""
        if not any(isinstance(c, ConnectorArray) for c in connectors):
            connectors = check_connection(connectors)
            self.add(*(c.owner for c in connectors))
            self._connections.append(connectors)
            return
        check_array_connection(connectors)
        self.add(*(c.array if isinstance(c, ConnectorArray) else c.owner for c in connectors))
        self._array_connections.append(tuple(connectors))

    @property
    def components(self) -> list[Component]:
        """The top-level components (an array's instances made into objects)."""
        return [c for entry in self._order for c in _expanded(entry)]

    def all_components(self) -> list[Component]:
        """Every component, nested ones included (arrays' instances made into objects)."""
        return [c for top in self.components for c in top.walk()]

    def connections(self) -> list[tuple[Connector, ...]]:
        """All ``connect`` calls, those inside hierarchical components included, those of
        connector arrays as one call per element."""
        inner = [conn for c in self.all_components() for conn in c._connections]
        each = [conn for call in self._array_connections for conn in per_element(call)]
        return self._connections + each + inner

    def graph(self) -> nx.Graph:
        """Graph of all connectors; an edge for each pair joined by a ``connect`` call."""
        g = nx.Graph()
        g.add_nodes_from(self._connectors())
        for conn in self.connections():
            nx.add_path(g, conn)
        return g

    def connection_sets(self) -> list[list[Connector]]:
        """Connected parts of :meth:`graph`, singletons (unconnected connectors) included,
        each in declaration order and ordered by its first connector.

        The connected components of the connectors' positions joined by each ``connect``
        call (scipy, on a sparse matrix), with no graph object per connector; scipy
        numbers them in the order of their first connector."""
        nodes = self._connectors()
        index = {id(c): k for k, c in enumerate(nodes)}
        heads, tails = [], []
        for conn in self.connections():
            ks = [index[id(c)] for c in conn]
            heads += ks[:-1]
            tails += ks[1:]
        return [[nodes[k] for k in s] for s in connected_sets(len(nodes), heads, tails)]

    def _connectors(self) -> list[Connector]:
        """Every connector in declaration order (an exposed one is its inner connector),
        after checking that every connected connector belongs to this system."""
        nodes = [
            c
            for comp in self.all_components()
            for c in comp._connectors.values()
            if c.owner is comp
        ]
        known = {id(c) for c in nodes}
        for conn in self.connections():
            for c in conn:
                if id(c) not in known:
                    raise ConnectError(
                        f"{c.name} is connected but its component {root(c.owner).name} is "
                        f"not part of system {self.name}"
                    )
        return nodes


def connected_sets(n: int, heads: list[int] | np.ndarray, tails: list[int] | np.ndarray) -> list:
    """The connected parts of ``n`` nodes joined by the edges ``heads[i] - tails[i]``, each
    as its nodes in increasing order, the parts ordered by their first node (scipy numbers
    them so)."""
    order, ends = connected_order(n, heads, tails)
    order, ends = order.tolist(), ends.tolist()
    return [order[a:b] for a, b in zip([0, *ends[:-1]], ends)]


def connected_order(
    n: int, heads: list[int] | np.ndarray, tails: list[int] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`connected_sets` as two arrays: the nodes part after part (``order``) and
    where each part ends in it (``ends``)."""
    joined = sp.csr_matrix((np.ones(len(heads)), (heads, tails)), shape=(n, n))
    count, label = connected_components(joined, directed=False)
    order = np.argsort(label, kind="stable")  # by set, in node order
    return order, np.cumsum(np.bincount(label, minlength=count))


def _expanded(entry: Component | ComponentArray) -> list[Component]:
    return list(entry) if isinstance(entry, ComponentArray) else [entry]


def _check_owner(owner: System | None, system: System, what: str) -> None:
    if owner is not None and owner is not system:
        raise ConnectError(
            f"{what} already belongs to system {owner.name}; a component instance can be "
            "part of one system only: build new instances (call your builder again) or copy "
            "the system with copy.deepcopy"
        )


def _numbered(name: str, a: ComponentArray) -> bool:
    """Whether ``name`` is one of the instances' names ``<prefix>1 .. <prefix>n``."""
    rest = name[len(a.prefix) :]
    return name.startswith(a.prefix) and rest.isdigit() and rest[0] != "0" and int(rest) <= len(a)
