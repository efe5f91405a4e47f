"""Fixed start values that the rest of the initialization problem already determines.

A fixed start ``y = c`` (``y`` a variable in terms of ``w = (x, z)`` and ``p``, ``c`` its
start value in terms of ``p``) is *redundant* when the rows matched before it leave no
unknown of ``y`` free (see :mod:`.initialize`): a capacitor's voltage across a source
(``y = V``, no unknown at all), or the third voltage of a capacitor loop whose other two are
fixed. It is consistent at the initial point ``w0`` when

    ``|y(w0, p) - c(p)| <= RTOL max(1, |y(w0, p)|, |c(p)|)``,

and is then honoured without being solved for: the model's own value equals it.

The rows reachable from the redundant ones by alternating paths (the over-determined part of
the Dulmage-Mendelsohn decomposition) fall into groups. Every unknown of a group is matched
to one of its rows, an equation ``g`` or a fixed start, so a group with ``m`` fixed starts of
which ``k`` are redundant leaves them ``m - k`` degrees of freedom: ``k`` of them must go,
or all must agree.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import casadi as cs
import numpy as np

from acausal import InitializationError, Model
from acausal.structure.index import Col

RTOL = 1e-9
EXACT = 1e-12  # closer than this a redundant start holds exactly; between, a warning
_MAX_EQUATIONS = 3  # of the block that determines a variable, quoted in a message
_MAX_LISTED = 12  # fixed starts named in one sentence


@dataclass(frozen=True)
class RedundantStarts:
    """The redundant fixed starts of a model, with what determines each, checked by
    :meth:`check` at an initial point.

    ``sources``: every fixed start of the over-determined groups, by the variable it was
    declared on; the other fields hold positions into it. Per redundant start: ``given``,
    the other fixed starts it is determined with, and ``through``, the equations of the
    block that solves its variable (none for a state). ``values(x, z, p)``: the redundant
    starts' variables ``y``, and every source's start value ``c`` (None when no start is
    redundant).
    """

    model: Model
    sources: tuple[str, ...]
    redundant: tuple[int, ...]
    given: tuple[tuple[int, ...], ...]
    through: tuple[tuple[str, ...], ...]
    groups: tuple[tuple[int, ...], ...]
    values: cs.Function | None

    def check(self, x: np.ndarray, z: np.ndarray, p: np.ndarray) -> None:
        """An :class:`InitializationError` unless every redundant start holds at ``(x, z, p)``
        to :data:`RTOL`."""
        if not self.redundant:
            return
        y, c = (v.full().ravel() for v in self.values(x, z, p))
        bad = [j for j, s in enumerate(self.redundant) if not _agree(y[j], c[s])]
        if bad:
            raise self._error(bad, y, c)
        near = [j for j, s in enumerate(self.redundant) if not _agree(y[j], c[s], EXACT)]
        if near:
            lines = "; ".join(
                f"{self._start(self.redundant[j], c)} differs by "
                f"{y[j] - c[self.redundant[j]]:.3g} from the value the model determines"
                for j in near
            )
            warnings.warn(
                f"{self.model.name}: {lines} (within {RTOL:g} of it, so accepted: the "
                "model's value is used; give the start to more digits to silence this)",
                stacklevel=3,
            )

    def _start(self, s: int, c: np.ndarray) -> str:
        """``C1.v = C1.v0 = 1`` (``C1.v = 1`` for a start given as a number)."""
        source = self.sources[s]
        shown = self.model.display(self.model.flat.symbols[source].start)
        value = f"{c[s]:.12g}"
        return f"{source} = {shown if shown == value else f'{shown} = {value}'}"

    def _conflict(self, j: int, y: np.ndarray, c: np.ndarray) -> str:
        """A redundant start against the value the model determines for its variable."""
        s = self.redundant[j]
        line = f"fixed start {self._start(s, c)} conflicts with {self.sources[s]} = {y[j]:.12g}"
        if self.through[j]:
            line += f" determined by {'; '.join(self.through[j])}"
        if self.given[j]:
            given = _listing([self._start(g, c) for g in self.given[j]])
            line += f"{',' if self.through[j] else ''} given the fixed starts {given}"
        return line

    def _advice(self, group: tuple[int, ...], y: np.ndarray) -> str:
        """How many of a group's fixed starts must go, naming them."""
        excess = [s for s in self.redundant if s in group]
        if len(group) == 1:
            j = self.redundant.index(group[0])
            return (
                f"Remove the fixed start of {self.sources[group[0]]}, or make it {y[j]:.12g} "
                "(the value the model gives it)."
            )
        k, dof = len(excess), len(group) - len(excess)
        return (
            f"The fixed starts of {_listing([self.sources[s] for s in group])} leave the model "
            f"{dof} degree{'s' * (dof != 1)} of freedom: {k} of these {len(group)} fixed "
            f"values must go (remove {'one' if k == 1 else k} of them, e.g. the fixed "
            f"start{'s' * (k != 1)} of {_listing([self.sources[s] for s in excess])}), or make "
            "them consistent."
        )

    def _error(self, bad: list[int], y: np.ndarray, c: np.ndarray) -> InitializationError:
        conflicts = [self._conflict(j, y, c) for j in bad]
        hit = {self.redundant[j] for j in bad}
        advice = [self._advice(g, y) for g in self.groups if hit.intersection(g)]
        return InitializationError(
            f"{self.model.name}: fixed start values conflict with what the model determines:"
            + "".join(f"\n    {line}" for line in conflicts)
            + "".join(f"\n  {line}" for line in advice),
            residuals=tuple(
                (line, float(c[self.redundant[j]] - y[j])) for line, j in zip(conflicts, bad)
            ),
        )


def _listing(items: list[str]) -> str:
    """At most :data:`_MAX_LISTED` items, then how many more."""
    more = len(items) - _MAX_LISTED
    return ", ".join(items[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def _agree(y: float, c: float, tol: float = RTOL) -> bool:
    """``|y - c| <= tol max(1, |y|, |c|)`` (False for NaN)."""
    return bool(abs(y - c) <= tol * max(1.0, abs(y), abs(c)))


def over_determined(
    redundant: Sequence[int], adjacency: Sequence[Sequence[int]], col_to_row: Sequence[int]
) -> tuple[list[set[int]], list[set[int]]]:
    """For each redundant row, the rows it reaches by alternating paths (itself included:
    row -> its unknowns -> the rows matched to them -> ...); and these reaches merged where
    they overlap, the over-determined groups."""
    reaches = []
    for r in redundant:
        seen, stack = {r}, [r]
        while stack:
            for c in adjacency[stack.pop()]:
                r2 = col_to_row[c]
                if r2 >= 0 and r2 not in seen:
                    seen.add(r2)
                    stack.append(r2)
        reaches.append(seen)
    groups: list[set[int]] = []
    for reach in reaches:
        merged = set(reach)
        for g in [g for g in groups if g & reach]:
            merged |= g
            groups.remove(g)
        groups.append(merged)
    return reaches, groups


def redundant_starts(
    model: Model,
    t0: float,
    fixed: Mapping[int, tuple[str, Col | None]],
    redundant: Sequence[int],
    reaches: Sequence[set[int]],
    groups: Sequence[set[int]],
) -> RedundantStarts:
    """:class:`RedundantStarts` from the fixed rows (row -> (the variable the start was
    declared on, its unknown column or None for a mode)), the redundant rows, and their
    reaches and groups from :func:`over_determined` (equations among them are skipped)."""
    involved = sorted(r for g in groups for r in g if r in fixed)
    pos = {r: k for k, r in enumerate(involved)}
    sources = tuple(fixed[r][0] for r in involved)
    block_of = {c: b for b in model.blocks for c in b.unknowns} if redundant else {}
    through = []
    for r in redundant:
        block = block_of.get(fixed[r][1])
        eqs = [model.ir.equations[e].origin for e in block.equations] if block else []
        through.append(tuple(eqs[:_MAX_EQUATIONS] + ["..."] * (len(eqs) > _MAX_EQUATIONS)))
    given = [
        tuple(pos[g] for g in sorted(reach - {r}) if g in pos)
        for r, reach in zip(redundant, reaches)
    ]
    values = None  # (nothing to check: no function of the whole model made for it)
    if redundant:
        y = [model.outputs[model.check_name(fixed[r][0])] for r in redundant]
        c = [cs.SX(model.flat.symbols[s].start) for s in sources]
        x, z = cs.SX(model.dae.x), cs.SX(model.dae.z)
        out = [cs.substitute(cs.vertcat(*y), model.t, t0), cs.vertcat(*c) if c else cs.SX(0, 1)]
        values = cs.Function("redundant_starts", [x, z, model.p], out)
    return RedundantStarts(
        model,
        sources,
        tuple(pos[r] for r in redundant),
        tuple(given),
        tuple(through),
        tuple(tuple(pos[r] for r in sorted(g) if r in pos) for g in groups),
        values,
    )
