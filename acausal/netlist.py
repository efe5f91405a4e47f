"""The connectors of a system being flattened as numbered nodes, and its connection sets.

Nodes are numbered in order: first the connectors of the components flattened one by one
(each component's own, in declaration order), then, for each array's :class:`~acausal.
arrays.Block`, its instances' connectors, instance after instance, each in the template's
order (node ``base + p * c + j`` is connector ``j`` of the block's ``p``-th instance, ``c``
connectors each). A ``connect`` call of connector objects joins their nodes in a chain;
one of connector arrays joins the ``k``-th elements of its arguments, all at once as
integer arrays; the connection sets are the connected parts (scipy), with no object per
array instance. :meth:`Netlist.nodes` describes every node in bulk (its connector's name,
type and variables' dotted names), an array's nodes by index arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .arrays import Block, ConnectorArray, element_of, length
from .component import Component, root
from .connectors import Connector, ConnectorType
from .errors import ConnectError
from .symbols import Quantity
from .system import System, connected_order


class Nodes(NamedTuple):
    """Every node's connector: its name, its type (``types``: a place in ``ctypes``), and
    its variables' dotted names in its type's order (potentials, then flows): node ``k``'s
    ``j``-th is ``dotted[slots[k, j]]``, at row ``rows[slots[k, j]]`` of the symbol
    table."""

    names: list[str]
    ctypes: list[ConnectorType]
    types: np.ndarray
    dotted: list[str]
    slots: np.ndarray
    rows: np.ndarray


class Netlist:
    """The nodes of ``system``'s connectors, for the components ``comps`` flattened one
    by one and the array ``blocks``; the connection sets are ``order[ends[s - 1]:ends[s]]``
    (each set's nodes in increasing order, the sets by their first node)."""

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
        self.order, self.ends = connected_order(
            self.size, np.concatenate(heads), np.concatenate(tails)
        )

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

    def nodes(self, names_of: Mapping[Quantity, str], index: Mapping[str, int]) -> Nodes:
        """Every node's connector (:class:`Nodes`; ``names_of``: a quantity's dotted name,
        for connectors as objects; ``index``: the symbol table's row of a dotted name);
        an array's instances' variables are their dotted names in the block
        (``Block.names``), found by their rows, which the table holds in a run."""
        ctypes = {id(c.ctype): c.ctype for c in self.connectors}
        for b, locals_, _ in self.blocks:
            ctypes |= {id(t): t for t in _types(b, locals_)}
        place = {key: k for k, key in enumerate(ctypes)}
        width = max((len(t.potentials + t.flows) for t in ctypes.values()), default=0)
        names = [c.name for c in self.connectors]
        types = [np.array([place[id(c.ctype)] for c in self.connectors], dtype=np.int64)]
        dotted: list[str] = []
        own = np.full((len(self.connectors), width), -1, dtype=np.int64)
        for k, c in enumerate(self.connectors):
            variables = c.ctype.potentials + c.ctype.flows
            own[k, : len(variables)] = np.arange(len(dotted), len(dotted) + len(variables))
            dotted += [names_of[c.quantities[v]] for v in variables]
        slots = [own]
        rows = [np.fromiter(map(index.__getitem__, dotted), np.int64, len(dotted))]
        for b, locals_, _ in self.blocks:
            names += [f"{p}.{local}" for p in b.prefixes for local in locals_]
            kinds = np.array([place[id(t)] for t in _types(b, locals_)], dtype=np.int64)
            types.append(np.tile(kinds, len(b.prefixes)))
            slots.append(_block_slots(b, locals_, width, len(dotted)))
            rows.append(np.arange(len(b.names)) + (index[b.names[0]] if b.names else 0))
            dotted += b.names
        return Nodes(
            names,
            list(ctypes.values()),
            np.concatenate(types),
            dotted,
            np.vstack(slots),
            np.concatenate(rows),
        )


def _types(b: Block, locals_: tuple[str, ...]) -> list[ConnectorType]:
    """The types of the block's template's connectors ``locals_``."""
    return [b.array.template._connectors[local].ctype for local in locals_]


def _block_slots(b: Block, locals_: tuple[str, ...], width: int, base: int) -> np.ndarray:
    """The rows of ``b.names`` (from ``base``) holding each of the block's nodes'
    variables, in its type's order, padded with -1 to ``width``: instance ``p``'s
    quantity ``q`` is row ``base + p * quantities + q``."""
    rows = {local: k for k, local in enumerate(b.array.template._quantities)}
    at = np.full((len(locals_), width), -1, dtype=np.int64)
    for j, (local, t) in enumerate(zip(locals_, _types(b, locals_))):
        at[j, : len(t.potentials + t.flows)] = [
            rows[f"{local}.{v}"] for v in t.potentials + t.flows
        ]
    instances = len(rows) * np.arange(len(b.prefixes))[:, None, None]
    slots = np.where(at >= 0, base + instances + at, -1)
    return slots.reshape(len(b.prefixes) * len(locals_), width)
