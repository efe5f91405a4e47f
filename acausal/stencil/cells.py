"""A small model's names by cell (:class:`Cells`), their order as runs of cells
(:func:`segments`), and that order at any number of cells (:class:`Plan`, :func:`grown`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..symbols import named_around

Key = tuple[str, str, str]  # a name of cell c is key[0] + key[1] + str(c + 1) + key[2]


def cell_name(key: Key, c: int) -> str:
    """The name ``key`` has in cell ``c`` (from 0): ``der(M5.v)`` for ``("der(", "M",
    ".v)")`` and 4."""
    return f"{key[0]}{key[1]}{c + 1}{key[2]}"


def around(keys: Sequence[Key]) -> list[tuple[str, str]]:
    """``keys`` as the parts around a cell's number (:func:`.symbols.named_around`)."""
    return [(a + prefix, b) for a, prefix, b in keys]


class Cells:
    """A small model's names split into cells: ``split(name)`` is ``(c, key)`` for a name
    of instance ``c`` (from 0) of an array, None for a plain component's."""

    def __init__(self, prefixes: Sequence[str], k: int) -> None:
        alternatives = "|".join(map(re.escape, sorted(prefixes, key=len, reverse=True)))
        self._pattern = re.compile(rf"^((?:der\()*)({alternatives})([1-9][0-9]*)(\..*)$")
        self.k = k

    def split(self, name: str) -> tuple[int, Key] | None:
        m = self._pattern.match(name)
        if m is None or int(m[3]) > self.k:
            return None
        return int(m[3]) - 1, (m[1], m[2], m[4])


class Run(NamedTuple):
    """Consecutive names of cells ``first .. last`` (increasing), each cell's keys."""

    first: int
    last: int
    keys: dict[int, tuple[Key, ...]]


Segment = str | Run  # a plain component's name, or a run of cells


def segments(names: Sequence[str], cells: Cells) -> list[Segment]:
    """``names`` as plain names and runs of cells (a run ends where the cell decreases)."""
    out: list[Segment] = []
    run: dict[int, list[Key]] | None = None
    last = -1
    for name in names:
        got = cells.split(name)
        if got is None:
            if run is not None:
                out.append(_run(run))
                run = None
            out.append(name)
            continue
        c, key = got
        if run is None or c < last:
            if run is not None:
                out.append(_run(run))
            run = {}
        run.setdefault(c, []).append(key)
        last = c
    if run is not None:
        out.append(_run(run))
    return out


def _run(keys: dict[int, list[Key]]) -> Run:
    return Run(min(keys), max(keys), {c: tuple(v) for c, v in keys.items()})


@dataclass(frozen=True)
class Plan:
    """Where the small model's cells go at ``n`` cells: the first ``head`` are their own,
    the last ``tail`` are the small model's last ones, the others are cell ``rep``."""

    k: int
    head: int
    tail: int
    rep: int

    def source(self, c: int, n: int) -> int:
        """The small model's cell that cell ``c`` of ``n`` is."""
        if c < self.head:
            return c
        return c - n + self.k if c >= n - self.tail else self.rep

    def target(self, c: int, n: int) -> int | None:
        """The cell of ``n`` that an end cell ``c`` of the small model is (None: interior)."""
        if c < self.head:
            return c
        return c - self.k + n if c >= self.k - self.tail else None


Part = str | tuple[np.ndarray, tuple[Key, ...]]  # a plain name, or cells' keys, cell-major


def grown(segs: list[Segment], plan: Plan, n: int) -> list[Part] | None:
    """The entries of ``segs`` at ``n`` cells: a plain component's name, or an array of
    cells each with the same keys (every key of every cell, cell after cell); None where
    a run starts or ends inside the interior or its interior cells differ."""
    out: list[Part] = []
    inner = range(plan.head, plan.k - plan.tail)
    for seg in segs:
        if isinstance(seg, str):
            out.append(seg)
            continue
        first, last = plan.target(seg.first, n), plan.target(seg.last, n)
        rep = {seg.keys.get(c, ()) for c in inner}
        if first is None or last is None or len(rep) > 1:
            return None
        rep = rep.pop()
        for c in range(first, min(last + 1, plan.head)):
            out.append((np.array([c]), seg.keys.get(c, ())))
        if first < n - plan.tail and last >= plan.head:
            out.append((np.arange(max(first, plan.head), min(last + 1, n - plan.tail)), rep))
        for c in range(max(first, n - plan.tail), last + 1):
            out.append((np.array([c]), seg.keys.get(c - n + plan.k, ())))
    return [p for p in out if isinstance(p, str) or (p[0].size and p[1])]


def flat_names(parts: list[Part]) -> list[str]:
    """The names of ``parts`` (:func:`grown`), in order."""
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        cells, keys = part
        out += named_around(around(keys), (cells + 1).astype(str).tolist())
    return out
