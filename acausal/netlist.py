"""The connectors of a system being flattened as numbered nodes, and its connection sets.

Nodes are numbered in order: first the connectors of the components flattened one by one
(each component's own, in declaration order), then, for each array's :class:`~acausal.
arrays.Block`, its instances' connectors, instance after instance, each in the template's
order (node ``base + p * c + j`` is connector ``j`` of the block's ``p``-th instance, ``c``
connectors each). A ``connect`` call of connector objects joins their nodes in a chain;
one of connector arrays joins the ``k``-th elements of its arguments, all at once as
integer arrays; the connection sets are the connected parts (scipy), with no object per
array instance.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping

import numpy as np

from .arrays import Block, ConnectorArray, element_of, length
from .component import Component, root
from .connectors import Connector, ConnectorType
from .errors import ConnectError
from .symbols import Quantity
from .system import System, connected_sets


class Netlist:
    """The nodes of ``system``'s connectors, for the components ``comps`` flattened one
    by one and the array ``blocks``; ``sets``: each connection set's nodes, in order."""

    def __init__(self, system: System, comps: list[Component], blocks: list[Block]) -> None:
        self.system = system
        self.connectors = [
            c for comp in comps for c in comp._connectors.values() if c.owner is comp
        ]
        self._node_of = {id(c): k for k, c in enumerate(self.connectors)}
        self.blocks: list[tuple[Block, tuple[str, ...], np.ndarray]] = []
        self.bases: list[int] = []
        self._block_of: dict[int, int] = {}  # id(array) -> its place in blocks
        base = len(self.connectors)
        for b in blocks:
            locals_ = tuple(b.array.template._connectors)
            position = np.full(len(b.array), -1, dtype=np.int64)
            position[b.natives] = np.arange(len(b.natives))
            self._block_of[id(b.array)] = len(self.blocks)
            self.blocks.append((b, locals_, position))
            self.bases.append(base)
            base += len(b.natives) * len(locals_)
        self.size = base
        heads: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        tails: list[np.ndarray] = [np.zeros(0, dtype=np.int64)]
        inner = [conn for c in comps for conn in c._connections]
        for call in system._connections + inner:
            ks = np.array([self.node(c) for c in call], dtype=np.int64)
            heads.append(ks[:-1])
            tails.append(ks[1:])
        for call in system._array_connections:  # (checked when connected)
            ids = [self._nodes(item, length(call)) for item in call]
            heads += ids[:-1]
            tails += ids[1:]
        self.sets = connected_sets(self.size, np.concatenate(heads), np.concatenate(tails))

    def node(self, c: Connector) -> int:
        """The node of connector ``c``: its own, or its place in its array's block."""
        k = self._node_of.get(id(c))
        if k is not None:
            return k
        at = element_of(c)
        if at is not None and id(at[0]) in self._block_of:
            place = self._block_of[id(at[0])]
            _, locals_, position = self.blocks[place]
            if position[at[1]] >= 0 and c.local in locals_:
                return self.bases[place] + position[at[1]] * len(locals_) + locals_.index(c.local)
        raise ConnectError(
            f"{c.name} is connected but its component {root(c.owner).name} is not part of system "
            f"{self.system.name}"
        )

    def _nodes(self, item: Connector | ConnectorArray, length: int) -> np.ndarray:
        """The nodes of the ``length`` elements of one argument of an array ``connect``:
        a connector's own node repeated, an array's elements' nodes."""
        if isinstance(item, Connector):
            return np.full(length, self.node(item), dtype=np.int64)
        place = self._block_of.get(id(item.array))
        out = np.full(length, -1, dtype=np.int64)
        if place is not None:
            _, locals_, position = self.blocks[place]
            at = position[item.index]
            native = at >= 0
            out[native] = self.bases[place] + at[native] * len(locals_) + locals_.index(item.local)
        for i in np.flatnonzero(out < 0).tolist():  # instances flattened one by one
            out[i] = self.node(item[i])
        return out

    def describe(
        self, node: int, names_of: Mapping[Quantity, str]
    ) -> tuple[str, ConnectorType, dict[str, str]]:
        """Node ``node``'s connector: its name, type, and the dotted names of its
        variables (``names_of``: a quantity's dotted name, for connectors as objects)."""
        if node < len(self.connectors):
            c = self.connectors[node]
            return c.name, c.ctype, {v: names_of[q] for v, q in c.quantities.items()}
        place = bisect_right(self.bases, node) - 1
        block, locals_, _ = self.blocks[place]
        p, j = divmod(node - self.bases[place], len(locals_))
        name = f"{block.prefixes[p]}.{locals_[j]}"
        ctype = block.array.template._connectors[locals_[j]].ctype
        return name, ctype, {v: f"{name}.{v}" for v in ctype.potentials + ctype.flows}
