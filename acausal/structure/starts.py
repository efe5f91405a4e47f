"""Start values after alias elimination: one per alias class.

A member ``q = s root + c`` with a start value gives its class's representative the start
``s (start - c)``; a fixed start wins over a guess, and two different fixed values in one
class (after sign and offset), or a fixed value on a variable the model makes constant,
are an error naming both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import is_not
from typing import NamedTuple

import casadi as cs
import numpy as np

from ..errors import InitializationError
from ..flat import FlatDAE
from ..symbols import as_sx
from .algorithms import Col

# (sign, representative or None, constant: a number or an expression of parameters)
Alias = tuple[float, "str | None", "float | cs.SX"]


@dataclass(frozen=True, eq=False)
class Start:
    """Start value of an unknown after alias elimination, with the variable it came from."""

    value: cs.SX | float
    fixed: bool
    source: str


class FixedStart(NamedTuple):
    """A fixed start ``y = start.value`` on an unknown column ``col`` of the index-reduced
    form, whose value is entry ``at`` of ``(dae.x, dae.values)`` (a state's place in
    ``dae.x``, ``len(dae.x) + k`` for the ``k``-th algebraic column)."""

    col: Col
    at: int
    start: Start


class InitialStarts(NamedTuple):
    """Every start value the initialization of a compiled model reads
    (:mod:`solvers.initialize`), in the orders it reads them.

    ``states[k]``: the start of the continuous state ``dae.x[k]`` (None: none);
    ``modes[j]``: the start of the ``j``-th discrete mode (a fixed start on the mode, the
    entry ``dae.x[len(states) + j]``, its value the mode's start parameter);
    ``newton[k]``: the start of the Newton unknown ``dae.z[k]`` (None: none);
    ``fixed_on_states``, ``fixed_others``: the fixed starts on states and on algebraic
    unknowns, each group in the order declared."""

    states: tuple[Start | None, ...]
    modes: tuple[Start, ...]
    newton: tuple[Start | None, ...]
    fixed_on_states: tuple[FixedStart, ...]
    fixed_others: tuple[FixedStart, ...]


def merge_starts(
    flat: FlatDAE,
    starts: Sequence[cs.SX | float | None],
    fixed: Sequence[bool],
    eliminated: Mapping[str, Alias],
    values: np.ndarray,
) -> dict[str, Start]:
    """One start value per class (a member's ``q = s root + c`` gives the root
    ``s (start - c)``); two different fixed values in a class are an error. ``starts``,
    ``fixed``: the start values of ``flat.variables`` (None: none) and whether each is
    fixed, in order; ``values``: the parameters'."""
    params: cs.SX | None = None  # stacked when first needed

    def numeric(expr: cs.SX | float) -> float:
        """Value at the parameters' values (only needed when two values are compared)."""
        nonlocal params
        if params is None:
            params = flat.symbols.take(flat.parameters)
        e = as_sx(expr)
        if params.numel() and cs.depends_on(e, params):
            e = cs.substitute(e, params, cs.DM(values))
        return float(cs.evalf(e))

    at = np.flatnonzero(has_start(starts)).tolist()
    names = list(map(flat.variables.__getitem__, at))
    if not any(map(eliminated.__contains__, names)):  # (each its class's representative)
        fixes = map(bool, map(fixed.__getitem__, at))
        return dict(zip(names, map(Start, map(starts.__getitem__, at), fixes, names)))
    merged: dict[str, Start] = {}
    for q, start, fix in zip(names, map(starts.__getitem__, at), map(fixed.__getitem__, at)):
        s, root, c = eliminated.get(q, (1.0, q, 0.0))
        if root is None:
            if fix and not np.isclose(numeric(start), numeric(c)):
                raise InitializationError(
                    f"fixed start value {q} = {numeric(start):g} conflicts with the "
                    f"model: {q} is constant {numeric(c):g}; remove the start value"
                )
            continue
        shifted = start - c if isinstance(c, cs.SX) or c else start
        value = shifted if s > 0 else -shifted
        prev = merged.get(root)
        if prev is None or (fix and not prev.fixed):
            merged[root] = Start(value, bool(fix), q)
        elif fix and prev.fixed and not np.isclose(numeric(value), numeric(prev.value)):
            raise InitializationError(
                f"conflicting fixed start values: {prev.source} and {q} are the same "
                f"variable (connected or aliased) but start at {numeric(prev.value):g} and "
                f"{numeric(value):g} (after sign and offset); remove or align one of them"
            )
    return merged


def has_start(starts: Sequence[cs.SX | float | None]) -> np.ndarray:
    """Whether each of the start values ``starts`` is given (not None), found in C (of
    a large model's variables, a few have one)."""
    return np.fromiter(map(is_not, starts, repeat(None)), bool, len(starts))
