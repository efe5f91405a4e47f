"""``Table``: a read-only dict, the mapping type of the compiler's immutable forms."""

from __future__ import annotations

from typing import Any, NoReturn


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

        return Table({k: copy.deepcopy(v, memo) for k, v in self.items()})
