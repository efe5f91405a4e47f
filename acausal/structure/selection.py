"""State selection: what the dummy-derivative choice is told, and what it tells the user.

Told: the cost of demoting each candidate derivative (:class:`Worth`) and the level
Jacobians ``dg/dz`` at the start point (:class:`StartPoint`). Told back: choices among
equally good candidates (ties), and blocks that are singular at the start point, as
:class:`~acausal.errors.StateSelectionWarning` messages in the model's own names.

A *quantity* is a set of columns (unknown, derivative order) equal up to sign: an alias
class is already one column; a *derivative alias*, an equation ``u = +-der^k(v)`` with
constant coefficients (a joint's ``w = der(phi)``, an inertia's speed on the same shaft),
makes ``(u, j)`` and ``(v, j + k)`` one quantity for every ``j``. Demoting candidate
``(v, o)`` to a dummy derivative takes the state ``(v, o - 1)`` away, so its cost is the
worth of that quantity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..symbols import as_sx, is_constant_name
from .algorithms import Col, Pantelides
from .alias import Reduced
from .dummies import Choice, select_dummies
from .graph import affine_rows

PRIORITY, FIXED, BASE = 1000, 100, 10  # a state priority outranks a fixed start value


def strongest(priorities: Iterable[int]) -> int:
    """The strongest request among ``state_priority`` values: the largest if any is
    positive (keep), else the smallest (0: no request, < 0: avoid)."""
    values = list(priorities)
    return max(values) if max(values) > 0 else min(values)


class Worth:
    """Demoting candidate ``(v, o)`` costs ``max(1, BASE + FIXED f + PRIORITY p)`` where,
    over the quantity of ``(v, o - 1)``, ``p`` is the strongest ``priority`` of a member's
    unknown (counted at every derivative order of its chain) and ``f`` is 1 when a member
    ``(u, 0)`` has a ``fixed`` start value: a fixed ``w0`` on ``w = der(phi)`` counts where
    ``der(der(phi))`` is a candidate. Plain data: ``hv`` the highest orders, ``aliases``
    the derivative aliases ``(u, v, k)``, ``priority`` and ``fixed`` per unknown;
    :meth:`of` reads them from a model."""

    def __init__(
        self,
        hv: Sequence[int],
        aliases: Iterable[tuple[int, int, int]],
        priority: Sequence[int],
        fixed: Sequence[bool],
    ) -> None:
        self.root = {(v, o): (v, o) for v in range(len(hv)) for o in range(hv[v] + 1)}
        for u, v, k in aliases:
            for j in range(hv[u] + 1):
                if j + k <= hv[v]:
                    self._union((u, j), (v, j + k))
        self.members: dict[Col, list[Col]] = {}
        for col in self.root:
            self.members.setdefault(self._find(col), []).append(col)
        self.cost_of: dict[Col, int] = {}  # by quantity, as the candidates ask for them
        self.priority, self.fixed = list(priority), list(fixed)

    @classmethod
    def of(cls, red: Reduced, rows: Sequence[Iterable[Col]], hv: Sequence[int]) -> Worth:
        """The worth of ``red``'s quantities: each unknown's priority over its whole alias
        class (:func:`class_priority`), its fixed start, the derivative aliases among the
        equations (``rows``: their incidence)."""
        asked = any(red.symbols.column("state_priority"))
        return cls(
            hv,
            derivative_aliases(red, rows),
            [class_priority(red, q) if asked else 0 for q in red.unknowns],
            [q in red.starts and red.starts[q].fixed for q in red.unknowns],
        )

    def _find(self, col: Col) -> Col:
        while self.root[col] != col:
            self.root[col] = self.root[self.root[col]]
            col = self.root[col]
        return col

    def _union(self, a: Col, b: Col) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self.root[max(ra, rb)] = min(ra, rb)

    def cost(self, col: Col) -> int:
        """What demoting candidate ``col`` to a dummy derivative costs."""
        v, o = col
        root = self._find((v, o - 1))
        if root not in self.cost_of:
            self.cost_of[root] = _worth(self.members[root], self.priority, self.fixed)
        return self.cost_of[root]

    def rank(self, col: Col) -> float:
        """Tie-break in ``[0, 1)`` among candidates of equal cost (higher: kept): the state
        ``(v, o - 1)`` that carries the fixed start value itself, then one whose own alias
        class asked for a priority, then the unknown declared first (of ``n``)."""
        v, o = col
        n = len(self.priority)
        own_start = o == 1 and self.fixed[v]
        return (2 * own_start + (self.priority[v] > 0) + (n - v) / (n + 1)) / 4

    def root_of(self, col: Col) -> Col:
        """The quantity of column ``col``, by one of its columns."""
        return self._find(col)


def _worth(cols: list[Col], priority: Sequence[int], fixed: Sequence[bool]) -> int:
    """``max(1, BASE + FIXED f + PRIORITY p)`` of the quantity made of ``cols``."""
    f = any(fixed[v] for v, o in cols if o == 0)
    p = strongest(priority[v] for v, _ in cols)
    return max(1, BASE + FIXED * f + PRIORITY * p)


def class_priority(red: Reduced, q: str) -> int:
    """The strongest state priority asked of ``q`` or any variable aliased to it."""
    return strongest(red.symbols[m].state_priority for m in (q, *red.members.get(q, ())))


def joint_of(red: Reduced, q: str) -> str:
    """The component that owns coordinate ``q``: that of the alias-class member with the
    highest state priority (a joint rather than a body it moves), else ``q``'s own."""
    members = (q, *red.members.get(q, ()))
    best = max(members, key=lambda m: red.symbols[m].state_priority)
    return red.symbols[best].component or red.symbols[q].component or q


def derivative_aliases(red: Reduced, rows: Sequence[Iterable[Col]]) -> list[tuple[int, int, int]]:
    """``(u, v, k)`` for each equation of ``red`` that reads ``a u + b der^k(v) = 0``
    (``k >= 1``) in its only two symbols, with constant ``|a| = |b| != 0``; ``rows``: the
    equations' incidence. The equations of that shape by incidence are checked at once
    (:func:`.graph.affine_rows`)."""
    pairs = {}
    for e, row in enumerate(rows):
        pair = sorted(row, key=lambda c: c[1])
        if len(pair) == 2 and pair[0][1] == 0 and pair[1][1] != 0 and pair[0][0] != pair[1][0]:
            pairs[e] = pair
    if not pairs:
        return []
    res = red.residuals[list(pairs)]
    x = cs.vertcat(*cs.symvar(res))
    lin = affine_rows(res, x)
    counts = np.bincount(lin.rows, minlength=len(pairs))
    coefs: list[list[float]] = [[] for _ in pairs]
    for r, value in zip(lin.rows.tolist(), lin.values.tolist()):
        coefs[r].append(value)
    out = []
    for i, pair in enumerate(pairs.values()):
        plain = counts[i] == 2 and lin.affine[i] and lin.offsets[i] == 0  # no parameter, time
        if plain and coefs[i][0] != 0 and abs(coefs[i][0]) == abs(coefs[i][1]):
            out.append((pair[0][0], pair[1][0], pair[1][1]))
    return out


class StartPoint:
    """The point where the choices are checked. Every symbol at its start value: an
    unknown's start value (guess or fixed) at the parameters' defaults, else 0 (derivatives
    too); parameters at their defaults, discrete modes at their start values, time 0. Then
    the unknowns ``free`` (those without a fixed start value) are moved onto the
    ``constraints`` (the equations index reduction differentiated) by :meth:`_project`,
    so that, e.g., a body's absolute angle agrees with the joint angles' guesses."""

    def __init__(self, red: Reduced, constraints: Sequence[cs.SX], free: Sequence[cs.SX]) -> None:
        flat = red.flat
        params = flat.symbols.take(flat.parameters)
        defaults = cs.DM([flat.symbols[n].value for n in flat.parameters])
        self.values: dict[str, float] = {
            flat.sym(n).name(): float(flat.symbols[n].value) for n in flat.parameters
        }
        self.values.update(
            {flat.sym(q).name(): float(flat.symbols[q].start) for q in flat.discretes}
        )
        names = list(red.starts)
        if names:
            starts = cs.vertcat(*[as_sx(red.starts[q].value) for q in names])
            if params.numel():
                starts = cs.substitute(starts, params, defaults)
            numbers = np.asarray(cs.evalf(starts)).ravel()
            self.values.update({red.sym(q).name(): float(x) for q, x in zip(names, numbers)})
        if constraints and free:
            self._project(cs.vertcat(*constraints), cs.vertcat(*free))

    def _at(self, syms: Sequence[cs.SX]) -> cs.DM:
        return cs.DM([self.values.get(s.name(), 0.0) for s in syms])

    def _project(self, res: cs.SX, x: cs.SX, steps: int = 30) -> None:
        """Minimum-norm Gauss-Newton on ``res(x) = 0`` from the start values,
        ``x <- x - J(x)^+ res(x)``, until ``|res| <= 1e-12 (1 + |x|)``; where the residual
        is not finite it goes back one step and stops."""
        jac = cs.jacobian(res, x)
        if not cs.depends_on(jac, x):
            return  # linear: the Jacobians to check are the same anywhere on them
        others = [s for s in cs.symvar(res) if not cs.depends_on(s, x)]
        fun = cs.Function("project", [x, cs.vertcat(*others)], [res, jac])
        fixed = self._at(others)
        point = last = np.asarray(self._at(cs.vertsplit(x))).ravel()
        for _ in range(steps):
            r, slope = (np.asarray(a) for a in fun(point, fixed))
            if not np.all(np.isfinite(r)) or not np.all(np.isfinite(slope)):
                point = last
                break
            if np.linalg.norm(r) <= 1e-12 * (1 + np.linalg.norm(point)):
                break
            last, point = point, point - np.linalg.lstsq(slope, r.ravel(), rcond=None)[0]
        self.values.update({s.name(): float(v) for s, v in zip(cs.vertsplit(x), point)})

    def jacobian(self, residuals: Sequence[cs.SX], syms: Sequence[cs.SX]) -> sp.csr_matrix:
        """``d residuals / d syms`` at the start point."""
        jac = cs.jacobian(cs.vertcat(*residuals), cs.vertcat(*syms))
        deps = cs.symvar(jac)
        if deps:
            jac = cs.substitute(jac, cs.vertcat(*deps), self._at(deps))
        return sp.csr_matrix(cs.evalf(jac).sparse())


def filter_ties(choice: Choice, worth: Worth) -> Choice:
    """``choice`` with one tie per pair of quantities: none within a quantity (keeping
    ``w'`` or ``der(der(phi))`` when ``w = der(phi)`` is no choice at all), and of the
    columns of one quantity the most differentiated, so that ``der(der(phi))`` names the
    coordinate ``phi`` where ``der(w)`` would name a speed."""
    best: dict[tuple[Col, Col], tuple[Col, Col]] = {}
    for kept, dummy in choice.ties:
        key = worth.root_of(kept), worth.root_of(dummy)
        if key[0] != key[1] and (key not in best or dummy[1] > best[key][1][1]):
            best[key] = kept, dummy
    return choice._replace(ties=tuple(best.values()))


def tie_names(
    choices: Iterable[Choice], name: Callable[[int], str]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The ties of ``choices`` as ``(kept coordinate, (equally good others, ...))``, by the
    ``name`` of each unknown."""
    out: dict[str, list[str]] = {}
    for ch in choices:
        for (v, _), (u, _) in ch.ties:
            kept, other = name(v), name(u)
            if other != kept and other not in out.setdefault(kept, []):
                out[kept].append(other)
    return tuple((k, tuple(v)) for k, v in out.items() if v)


def select_states(
    red: Reduced,
    residuals: cs.SX,
    result: Pantelides,
    sym: Callable[[Col], cs.SX],
) -> tuple[tuple[Choice, ...], tuple[str, ...], tuple[tuple[Choice, ...], ...]]:
    """The dummy-derivative choices after Pantelides (``residuals``: every equation's, the
    derivatives' included, stacked; ``sym``: a column's symbol), costed by :class:`Worth`
    and checked at the :class:`StartPoint`, what the user should hear about them, and the
    :func:`alternative_choices` a run may switch to."""
    if not result.child:
        return (), (), ()
    worth = Worth.of(red, result.rows[: len(red.equations)], result.hv)
    roots = [r for r in range(len(red.equations)) if r in result.child]
    free = {(v, 0) for r in roots for v, o in result.rows[r] if o == 0 and not worth.fixed[v]}
    start = StartPoint(red, [residuals[r] for r in roots], [sym(c) for c in sorted(free)])

    def jacobian(g: Sequence[int], cand: Sequence[Col]) -> sp.csr_matrix:
        return start.jacobian([residuals[r] for r in g], [sym(c) for c in cand])

    choices = select_dummies(result.rows, result.child, result.hv, worth.cost, jacobian, worth.rank)
    choices = tuple(filter_ties(ch, worth) for ch in choices)

    def unknown(s: cs.SX) -> bool:
        """An unknown column's symbol, by the naming scheme (not a parameter, mode, time):
        the residuals hold no other variables or derivatives."""
        return s.name() != "time" and not is_constant_name(s.name())

    def varies(ch: Choice, cols: Sequence[Col]) -> bool:
        """Whether the block's Jacobian with respect to ``cols`` depends on the unknowns."""
        jac = cs.jacobian(
            cs.vertcat(*[residuals[r] for r in ch.equations]),
            cs.vertcat(*[sym(c) for c in cols]),
        )
        return any(unknown(s) for s in cs.symvar(jac))

    def nonlinear(ch: Choice) -> bool:
        return varies(ch, ch.candidates)

    def switchable(ch: Choice) -> bool:
        """A nonlinear block whose chosen dummies' Jacobian is not a constant regular one
        (``s = h(q)`` with ``s`` the dummy: ``ds/ds = 1`` is regular at every point, so
        keeping ``q`` never needs another choice)."""
        checked = ch.status in ("regular", "reselected")
        return nonlinear(ch) and not (checked and not varies(ch, ch.dummies))

    notes = Notes(red, worth)
    for ch in choices:
        notes.add(ch, nonlinear)
    alternatives = alternative_choices(result, worth, choices, list(filter(switchable, choices)))
    return choices, tuple(notes.texts), alternatives


BOOST = 10**6  # what keeping a coordinate as a state is worth in an alternative choice


def alternative_choices(
    result: Pantelides,
    worth: Worth,
    choices: tuple[Choice, ...],
    switchable: Sequence[Choice],
) -> tuple[tuple[Choice, ...], ...]:
    """The other state sets a run may switch to (dynamic state selection): for each
    coordinate demoted in a block of nonlinear constraints (``switchable``: a mechanism's
    loop, whose every choice is singular somewhere), the choice that keeps it a state
    (its demotion made dear), without the start-point check; distinct sets only."""
    seen = {frozenset(c for ch in choices for c in ch.dummies)}
    out = []
    for ch in switchable:
        for col in ch.dummies:
            keep = worth.root_of((col[0], col[1] - 1))

            def cost(c: Col, keep: Col = keep) -> float:
                return worth.cost(c) + BOOST * (worth.root_of((c[0], c[1] - 1)) == keep)

            alt = select_dummies(result.rows, result.child, result.hv, cost, None, worth.rank)
            key = frozenset(c for a in alt for c in a.dummies)
            if key not in seen:
                seen.add(key)
                out.append(alt)
    return tuple(out)


class Notes:
    """What the user hears about the choices (each text once), in the model's names: the
    coordinate of a candidate ``(v, o)`` is unknown ``v`` (its alias class's name)."""

    def __init__(self, red: Reduced, worth: Worth) -> None:
        self.red, self.worth = red, worth
        self.texts: list[str] = []

    def add(self, ch: Choice, nonlinear: Callable[[Choice], bool]) -> None:
        if ch.status == "singular":
            self._say(self._singular(ch))
        elif ch.status == "reselected":
            self._say(self._reselected(ch))
        if ch.ties and nonlinear(ch):
            for kept, others in tie_names([ch], self.red.unknowns.__getitem__):
                self._say(self._tie(kept, others))

    def _say(self, text: str) -> None:
        if text not in self.texts:
            self.texts.append(text)

    def _coordinates(self, cols: Iterable[Col]) -> list[str]:
        return list(dict.fromkeys(self.red.unknowns[v] for v, _ in cols))

    def _kept(self, ch: Choice, dummies: Iterable[Col]) -> list[str]:
        return self._coordinates(sorted(set(ch.candidates) - set(dummies)))

    def _owner(self, q: str) -> str:
        return joint_of(self.red, q)

    def _singular(self, ch: Choice) -> str:
        asked = [c for c in ch.candidates if self.worth.cost(c) > BASE] or ch.candidates
        coords = self._coordinates(asked)
        owners = ", ".join(dict.fromkeys(self._owner(q) for q in coords))
        return (
            f"model {self.red.flat.name}: at the start values every choice of states among "
            f"{', '.join(coords)} is singular: the {len(ch.equations)} equations that relate "
            f"them lose rank there. Either the start is a singular position (a dead point of "
            f"{owners}) or the start values are not consistent; give start values (fixed, or "
            "guesses such as phi_start) at a regular position."
        )

    def _reselected(self, ch: Choice) -> str:
        preferred, taken = self._kept(ch, ch.cheapest), self._kept(ch, ch.dummies)
        dead = ", ".join(map(self._owner, preferred))
        return (
            f"model {self.red.flat.name}: the preferred states {', '.join(preferred)} are "
            f"singular at the start values (a dead point of {dead}); {', '.join(taken)} are "
            "taken instead. The choice stays fixed during a run: if "
            f"{', '.join(map(self._owner, taken))} reaches a dead point the simulation stops "
            "there; give the joint whose coordinate stays regular over the motion a higher "
            "state_priority, or its fixed start values."
        )

    def _tie(self, kept: str, others: tuple[str, ...]) -> str:
        prio = class_priority(self.red, kept)
        return (
            f"model {self.red.flat.name}: the state {kept} was chosen among equally good "
            f"candidates {', '.join([kept, *others])}: no state_priority or fixed start value "
            "tells them apart, and the first declared is kept. They are not equivalent: each "
            "can be singular at other positions. If another one stays regular over the "
            f"motion, raise its state_priority (e.g. state_priority={max(prio, 0) + 1} on "
            f"{self._owner(others[0])}) or give it the fixed start values."
        )
