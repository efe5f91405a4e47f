"""``Table``: a read-only dict, the mapping type of the compiler's immutable forms;
``SymbolTable``: a table of symbol records that also keeps their symbols stacked."""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, Sequence, ValuesView
from operator import attrgetter
from typing import Any, NamedTuple, NoReturn

import casadi as cs
import numpy as np

from .symbols import named_around, vstack


def around_spans(given: Sequence[Any], spans: Iterable[tuple[int, Sequence[Any]]]) -> list:
    """``given`` in order around the ``spans`` (each its first row and its items, in
    increasing order): the list whose rows ``first`` on are a span's items and whose
    other rows are ``given``'s (a table's records around its blocks, a form's equations
    around its arrays' rows)."""
    out: list = []
    at = 0  # (the items of ``given`` placed so far)
    for first, items in spans:
        take = first - len(out)
        out += given[at : at + take]
        out += items
        at += take
    return out + list(given[at:])


class Table(dict):
    """A dict that refuses changes after construction (and pickles as a plain one)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a compiled form's table is read-only; build a new one instead")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self) -> tuple:
        return (Table, (dict(self),))

    def __copy__(self) -> Table:
        return self

    def __deepcopy__(self, memo: dict) -> Table:
        import copy

        return type(self)({k: copy.deepcopy(v, memo) for k, v in self.items()})


class ArrayKeys(NamedTuple):
    """An array's instances' symbols' own names, ``a + token + b`` for each of ``tokens``
    (one an instance, all of one length) each ``(a, b)`` of ``around`` (``a``: ``@`` and
    a kind letter), and their dotted ``names`` in that order."""

    around: list[tuple[str, str]]
    tokens: list[str]
    names: list[str]


class Keys(Table):
    """A read-only table of symbols' own names -> dotted names (a flat form's ``keys``):
    the ``pairs`` given, and the arrays' (``blocks``, :class:`ArrayKeys`) after them,
    which it writes only when it is iterated, compared or printed: one of theirs looked
    up is found by its token (a dict of an array's tokens, made at the first such
    look-up) instead of a dict entry per quantity, which a large model makes by the
    hundred thousand and reads a few of."""

    def __init__(
        self, pairs: Iterable[tuple[str, str]] = (), blocks: Sequence[ArrayKeys] = ()
    ) -> None:
        super().__init__(pairs)
        self._blocks = tuple(blocks)
        self._tokens: dict[str, tuple[int, int]] | None = None  # -> (block, instance)
        self._places: list[dict[tuple[str, str], int]] = []  # by block, (a, b) -> its place

    def _find(self, key: object) -> str | None:
        """The dotted name of an array's symbol named ``key``, None if none has it: its
        token runs from its third letter to the ``:`` that starts its ``b``."""
        if not self._blocks or not isinstance(key, str):
            return None
        if self._tokens is None:
            self._tokens = {
                t: (b, k) for b, keys in enumerate(self._blocks) for k, t in enumerate(keys.tokens)
            }
            self._places = [{ab: j for j, ab in enumerate(b.around)} for b in self._blocks]
        colon = key.find(":", 2)
        at = self._tokens.get(key[2:colon]) if colon > 0 else None
        if at is None:
            return None
        b, k = at
        j = self._places[b].get((key[:2], key[colon:]))
        keys = self._blocks[b]
        return None if j is None else keys.names[k * len(keys.around) + j]

    def _complete(self) -> Keys:
        """Every array's pairs written into the dict, after the pairs given; itself."""
        if self._blocks:
            for b in self._blocks:
                dict.update(self, zip(named_around(b.around, b.tokens), b.names))
            self._blocks, self._tokens, self._places = (), None, []
        return self

    def __missing__(self, key: str) -> str:
        found = self._find(key)
        if found is None:
            raise KeyError(key)
        return found

    def get(self, key: str, default: Any = None) -> Any:
        found = dict.get(self, key)
        if found is None:
            found = self._find(key)
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or self._find(key) is not None

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self._complete())

    def __reversed__(self) -> Iterator[str]:
        return dict.__reversed__(self._complete())

    def __len__(self) -> int:
        return dict.__len__(self._complete())

    def keys(self) -> KeysView[str]:
        return dict.keys(self._complete())

    def values(self) -> ValuesView:
        return dict.values(self._complete())

    def items(self) -> ItemsView:
        return dict.items(self._complete())

    def copy(self) -> dict[str, str]:
        return dict(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Keys):
            other._complete()
        return dict.__eq__(self._complete(), other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Any) -> Any:
        return dict(self.items()) | other

    def __ror__(self, other: Any) -> Any:
        return other | dict(self.items())

    def __repr__(self) -> str:
        return dict.__repr__(self._complete())

    def __reduce__(self) -> tuple:
        return (Keys, (dict(dict.items(self)), self._blocks))


class SymbolTable(Table):
    """A read-only table ``name -> record`` whose records each hold a scalar symbol
    (``record.sym``), with all those symbols stacked in one column ``stack`` in the table's
    order and each name's row in ``index``.

    The symbols of a list of names are then one indexing of ``stack`` (a single CasADi
    call) instead of a ``vertcat`` of Python objects, which costs a binding conversion,
    a few microseconds, per symbol. A table that grows (the derivatives a compiler stage
    adds) is a new table stacking only its new symbols under the old ones
    (:meth:`extended`).

    Besides records given one by one (``records``, in order), the table holds ``blocks``
    (an array's instances' quantities, :class:`~acausal.flat.ArraySymbols`), each
    covering the rows ``block.first`` on of ``block.names``; the records fill the other
    rows. A block's records are made only when one is read (then its template
    quantity's, for every instance, at once: ``block.chunk``), and a field of many names
    is read without records (:meth:`columns`). The dict holds the records made so far
    (a read of one of them costs a dict's); its names, length and order are
    ``index``'s."""

    def __init__(
        self,
        records: Mapping[str, Any] = (),
        stack: cs.SX | None = None,
        blocks: Sequence[Any] = (),
    ) -> None:
        records = dict(records)
        if stack is None:
            stack = cs.vertcat(cs.SX(0, 1), *[r.sym for r in records.values()])
        # (the records fill the rows between the blocks)
        names = around_spans(list(records), [(b.first, b.names) for b in blocks])
        if stack.numel() != len(names):
            raise ValueError(f"{stack.numel()} stacked symbols for {len(names)} records")
        super().__init__(records)
        self._set(records, stack, tuple(blocks), dict(zip(names, range(len(names)))))

    def _set(self, records: dict, stack: cs.SX, blocks: tuple, index: dict) -> None:
        self._records = records  # the records given
        self.stack = stack
        self.index = index
        self._blocks = blocks
        self._firsts = np.array([b.first for b in blocks], dtype=np.int64)
        # whether the dict holds every record, in order (only records given: from the start)
        self._ordered = not blocks

    def __missing__(self, name: str) -> Any:
        """The record of a block's ``name``, made with its chunk (a ``KeyError`` if
        ``name`` is not in the table)."""
        row = self.index[name]
        b = self._blocks[int(np.searchsorted(self._firsts, row, side="right")) - 1]
        dict.update(self, b.chunk(self.stack, row - b.first))
        return dict.__getitem__(self, name)

    def _complete(self) -> None:
        """Every block's records made (each chunk once), and the dict in ``index``'s
        order."""
        if self._ordered:
            return
        for b in self._blocks:
            for j in range(b.count):
                if not dict.__contains__(self, b.names[j]):
                    dict.update(self, b.chunk(self.stack, j))
        every = dict(dict.items(self))
        dict.clear(self)
        dict.update(self, zip(self.index, map(every.__getitem__, self.index)))
        self._ordered = True

    def __iter__(self) -> Iterator[str]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, name: object) -> bool:
        return name in self.index

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return dict(self.items()) == dict(other.items())

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._complete()
        return f"SymbolTable({dict.__repr__(self)})"

    def copy(self) -> dict[str, Any]:
        """Every record by name, as a plain dict."""
        return dict(self.items())

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self.index else default

    def keys(self) -> KeysView[str]:
        return self.index.keys()

    def values(self) -> ValuesView:
        self._complete()
        return dict.values(self)

    def items(self) -> ItemsView:
        self._complete()
        return dict.items(self)

    def column(self, field: str, names: Sequence[str] | None = None) -> np.ndarray:
        """The field ``field`` of the records of ``names`` (all, in order, if None), as an
        array of objects (:meth:`columns`)."""
        return self.columns([field], names)[0]

    def columns(
        self,
        fields: Sequence[str],
        names: Sequence[str] | None = None,
        rows: np.ndarray | None = None,
    ) -> list:
        """The fields ``fields`` of the records of ``names`` (all, in order, if None; or
        of the rows ``rows`` when given), each an array of objects: a block's from its
        template's fields by index arithmetic (:meth:`ArraySymbols.columns`; no record
        made), the others' from their records."""
        if rows is not None:
            names = None
        elif names is None:
            rows = np.arange(len(self.index))
        else:
            rows = np.fromiter(map(self.index.__getitem__, names), np.int64, len(names))
        out = [np.empty(len(rows), dtype=object) for _ in fields]
        alone = np.ones(len(rows), dtype=bool)
        for b in self._blocks:
            on = np.flatnonzero((rows >= b.first) & (rows < b.first + len(b.names)))
            for column, values in zip(out, b.columns(fields, rows[on] - b.first)):
                column[on] = values
            alone[on] = False
        at = np.flatnonzero(alone)
        if at.size:
            if names is None:  # (by row)
                names, at_names = list(self.index), rows[at].tolist()
            else:
                at_names = at.tolist()
            records = list(map(self.__getitem__, map(names.__getitem__, at_names)))
            for column, field in zip(out, fields):
                column[at] = np.fromiter(map(attrgetter(field), records), object, at.size)
        return out

    @property
    def blocks(self) -> tuple:
        """The blocks (:class:`~acausal.flat.ArraySymbols`), in the table's order."""
        return self._blocks

    def rows_where(self, field: str, values: Sequence[Any]) -> list[np.ndarray]:
        """For each of ``values``, the rows (ascending) whose record's field ``field`` (a
        field a block keeps per template quantity, e.g. ``kind``) equals it: a block's
        by index arithmetic (instance ``k``'s template quantity ``j`` at row
        ``first + k count + j``), the records' from them (they fill the other rows in
        order); no record of a block made."""
        alone = np.ones(len(self.index), dtype=bool)
        for b in self._blocks:
            alone[b.first : b.first + len(b.names)] = False
        loose = np.flatnonzero(alone)
        given = np.fromiter(map(attrgetter(field), self._records.values()), object, loose.size)
        out = []
        for value in values:
            parts = [loose[given == value]]
            for b in self._blocks:
                own = [j for j, v in enumerate(b.fields[field]) if v == value]
                starts = b.first + b.count * np.arange(len(b.names) // max(b.count, 1))
                parts.append((starts[:, None] + np.array(own, dtype=np.int64)).ravel())
            out.append(np.sort(np.concatenate(parts)))
        return out

    def take(self, names: Iterable[str]) -> cs.SX:
        """The symbols of ``names`` as one column."""
        rows = list(map(self.index.__getitem__, names))
        return self.stack[rows] if rows else cs.SX(0, 1)

    def extended(self, records: Mapping[str, Any], syms: cs.SX | None = None) -> SymbolTable:
        """This table followed by ``records`` (new names only; ``syms``: their symbols
        stacked, if at hand)."""
        if not records:
            return self
        table = SymbolTable.__new__(SymbolTable)
        dict.update(table, dict.items(self))  # (the records made so far; none made here)
        table._set(dict(self._records), self.stack, self._blocks, dict(self.index))
        table._ordered = self._ordered
        return table._grown(records, syms)

    def _grown(self, records: Mapping[str, Any], syms: cs.SX | None = None) -> SymbolTable:
        """This table itself followed by ``records`` (as :meth:`extended`, without
        copying its index: only for a table nothing else holds yet, as flattening's
        before it adds the derivatives)."""
        if not records:
            return self
        if not self.index.keys().isdisjoint(records):
            clash = [n for n in records if n in self.index]
            raise ValueError(f"names already in the table: {clash[:5]}")
        if syms is None:
            # the new symbols stacked first: a long stack beside many scalars in one call costs more
            syms = cs.vertcat(*[r.sym for r in records.values()])
        self.stack = vstack([self.stack, syms])
        self.index.update(zip(records, range(len(self.index), len(self.index) + len(records))))
        dict.update(self, records)
        self._records.update(records)
        return self

    def __reduce__(self) -> tuple:
        return (SymbolTable, (self._records, self.stack, self._blocks))
