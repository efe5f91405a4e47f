"""A system: component instances and the connections between their connectors.

The connectors and ``connect`` calls form a graph (:meth:`System.graph`, for plots); each
connected part of it is a connection set (potentials equal, flows sum to zero), found by
scipy's connected components.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .component import Component, check_connection, check_name
from .connectors import Connector
from .errors import ConnectError, NameClashError
from .pickling import PicklesWithCasadi


class System(PicklesWithCasadi):
    """The top level of a model; it pickles and deep-copies (with its components)."""

    def __init__(self, name: str = "system") -> None:
        self.name = check_name("system", name)
        self._components: dict[str, Component] = {}
        self._connections: list[tuple[Connector, ...]] = []

    def __repr__(self) -> str:
        return f"<System {self.name}: {len(self._components)} components>"

    def add(self, *components: Component) -> None:
        """Add components (``connect`` adds the components it touches by itself)."""
        for c in components:
            if not isinstance(c, Component):
                raise NameClashError(f"System.add(): {c!r} is not a component")
            root = _root(c)
            other = self._components.get(root.name)
            if other is root:
                continue
            owner = root._system
            if owner is not None and owner is not self:
                raise ConnectError(
                    f"component {root.name} already belongs to system {owner.name}; a "
                    "component instance can be part of one system only: build new instances "
                    "(call your builder again) or copy the system with copy.deepcopy"
                )
            if other is not None:
                raise NameClashError(
                    f"two components are named {root.name!r} ({type(other).__name__} and "
                    f"{type(root).__name__}); give each a unique name"
                )
            self._components[root.name] = root
            object.__setattr__(root, "_system", self)

    def connect(self, *connectors: Connector) -> None:
        """Connect two or more connectors of the same type."""
        connectors = check_connection(connectors)
        self.add(*(c.owner for c in connectors))
        self._connections.append(connectors)

    @property
    def components(self) -> list[Component]:
        """The top-level components."""
        return list(self._components.values())

    def all_components(self) -> list[Component]:
        """Every component, nested ones included."""
        return [c for top in self._components.values() for c in top.walk()]

    def connections(self) -> list[tuple[Connector, ...]]:
        """All ``connect`` calls, those inside hierarchical components included."""
        inner = [conn for c in self.all_components() for conn in c._connections]
        return self._connections + inner

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
        n = len(nodes)
        joined = sp.csr_matrix((np.ones(len(heads)), (heads, tails)), shape=(n, n))
        count, label = connected_components(joined, directed=False)
        order = np.argsort(label, kind="stable").tolist()  # by set, in declaration order
        ends = np.cumsum(np.bincount(label, minlength=count)).tolist()
        return [[nodes[k] for k in order[a:b]] for a, b in zip([0, *ends[:-1]], ends)]

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
                        f"{c.name} is connected but its component {_root(c.owner).name} is "
                        f"not part of system {self.name}"
                    )
        return nodes


def _root(c: Component) -> Component:
    while c._parent is not None:
        c = c._parent
    return c
