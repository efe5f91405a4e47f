"""``Table``: a read-only dict, the mapping type of the compiler's immutable forms;
``SymbolTable``: a table of symbol records that also keeps their symbols stacked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

import casadi as cs


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


class SymbolTable(Table):
    """A read-only table ``name -> record`` whose records each hold a scalar symbol
    (``record.sym``), with all those symbols stacked in one column ``stack`` in the table's
    order and each name's row in ``index``.

    The symbols of a list of names are then one indexing of ``stack`` (a single CasADi
    call) instead of a ``vertcat`` of Python objects, which costs a binding conversion,
    a few microseconds, per symbol. A table that grows (the derivatives a compiler stage
    adds) is a new table stacking only its new symbols under the old ones
    (:meth:`extended`)."""

    def __init__(self, records: Mapping[str, Any] = (), stack: cs.SX | None = None) -> None:
        super().__init__(records)
        if stack is None:
            stack = cs.vertcat(cs.SX(0, 1), *[r.sym for r in self.values()])
        if stack.numel() != len(self):
            raise ValueError(f"{stack.numel()} stacked symbols for {len(self)} records")
        self.stack = stack
        self.index = dict(zip(self, range(len(self))))

    def take(self, names: Iterable[str]) -> cs.SX:
        """The symbols of ``names`` as one column."""
        rows = list(map(self.index.__getitem__, names))
        return self.stack[rows] if rows else cs.SX(0, 1)

    def extended(self, records: Mapping[str, Any]) -> SymbolTable:
        """This table followed by ``records`` (new names only)."""
        if not records:
            return self
        clash = [n for n in records if n in self.index]
        if clash:
            raise ValueError(f"names already in the table: {clash[:5]}")
        # the new symbols stacked first: a long stack beside many scalars in one call costs more
        stack = cs.vertcat(self.stack, cs.vertcat(*[r.sym for r in records.values()]))
        return SymbolTable({**self, **records}, stack)

    def __reduce__(self) -> tuple:
        return (SymbolTable, (dict(self), self.stack))
