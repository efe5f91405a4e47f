"""Messages for unbalanced and structurally singular models, in the user's own names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import casadi as cs
import numpy as np
import scipy.sparse as sp

from ..flat import ComponentEquation, FlatDAE
from .alias import Reduced
from .graph import dulmage_mendelsohn
from .selection import class_priority, joint_of

if TYPE_CHECKING:
    from .algorithms import Col
    from .blt import Block
    from .index import IndexReduced

_MAX_LISTED = 12


def describe_unknown(red: Reduced, q: str) -> str:
    """``R1.v`` or ``R1.p.v (= C1.n.v = ...)`` when aliases were merged into it."""
    others = list(red.members.get(q, ()))
    if not others:
        return q
    shown = " = ".join(others[:3]) + (" = ..." if len(others) > 3 else "")
    return f"{q} (= {shown})"


def _listing(items: list[str]) -> str:
    shown = items[:_MAX_LISTED]
    more = f"\n    ... and {len(items) - _MAX_LISTED} more" if len(items) > _MAX_LISTED else ""
    return "".join(f"\n    {s}" for s in shown) + more


def _components(red: Reduced, rows: list[int], cols: list[int]) -> list[str]:
    names = []
    for r in rows:
        comp = red.equations[r].component
        if comp:
            names.append(comp)
    for c in cols:
        owner = red.symbols[red.unknowns[c]].component
        if owner:
            names.append(owner)
    return sorted(set(names))


def _names(items: list[str]) -> str:
    """At most :data:`_MAX_LISTED` names, then how many more."""
    more = len(items) - _MAX_LISTED
    return ", ".join(items[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def _roles(red: Reduced, q: str) -> set[str | None]:
    return {red.symbols[m].role for m in [q, *red.members.get(q, ())]}


def local_imbalance(flat: FlatDAE) -> list[tuple[str, int, int, int]]:
    """Components whose own equations do not balance their own unknowns, by Modelica's local
    balance rule: a component's equations plus the flow variables of its connectors (the
    connections supply one equation per flow) equal its unknowns (its variables and its
    connectors' potentials and flows). ``(component, equations, flows, unknowns)`` for each
    that breaks it, in declaration order (a partial base class does, a complete one does
    not)."""
    equations: dict[str, int] = {}
    for eq in flat.equations:
        if isinstance(eq.source, ComponentEquation):
            equations[eq.source.component] = equations.get(eq.source.component, 0) + 1
    unknowns: dict[str, list[int]] = {}
    for q in flat.variables:
        sym = flat.symbols[q]
        if sym.component:
            counts = unknowns.setdefault(sym.component, [0, 0])
            counts[0] += 1
            counts[1] += sym.role == "flow"
    return [
        (comp, equations.get(comp, 0), flows, n)
        for comp, (n, flows) in unknowns.items()
        if equations.get(comp, 0) + flows != n
    ]


def _imbalance_text(flat: FlatDAE) -> str:
    """The components breaking the local balance rule (:func:`local_imbalance`), if any."""
    lines = []
    for comp, eqs, flows, n in local_imbalance(flat):
        gap = n - eqs - flows
        what = f"{gap} missing" if gap > 0 else f"{-gap} too many"
        lines.append(
            f"{comp}: {_plural(eqs, 'equation')} and {_plural(flows, 'connector flow')} for "
            f"{_plural(n, 'unknown')} ({what})"
        )
    if not lines:
        return ""
    return (
        "\n  Components whose own equations do not match their unknowns (a component needs"
        "\n  as many equations as unknowns, less one per flow variable of its connectors):"
        + _listing(lines)
        + "\n  Give each of them its missing equations (or remove the extra ones) first."
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 'es' if word.endswith('s') else 's'}"


def explain_singular(
    red: Reduced, inc: sp.csr_matrix, row_to_col: np.ndarray, col_to_row: np.ndarray
) -> str:
    """Why equations and unknowns do not match: the over- and under-determined parts."""
    n, m = inc.shape
    (orows, ocols), (urows, ucols) = dulmage_mendelsohn(inc, row_to_col, col_to_row)
    head = (
        f"model {red.flat.name} is {'unbalanced' if n != m else 'structurally singular'}: "
        f"{_plural(n, 'equation')} for {_plural(m, 'unknown')} (after eliminating "
        f"{_plural(len(red.eliminated), 'alias')})."
    )
    local = _imbalance_text(red.flat) if n != m else ""
    parts = [head, local]
    empty = [r for r in orows if inc.indptr[r + 1] == inc.indptr[r]]
    over = [r for r in orows if r not in set(empty)]
    if empty:
        parts.append(
            f"\n  Redundant: {_plural(len(empty), 'equation')} left with no unknown after "
            "eliminating aliases (a closed loop of connections, or a duplicated equation):"
            + _listing([red.equations[r].origin for r in empty])
        )
    if over:
        parts.append(
            f"\n  Over-determined: {_plural(len(over), 'equation')} constrain only "
            f"{_plural(len(ocols), 'unknown')}:"
            + _listing([red.equations[r].origin for r in over])
            + "\n  unknowns:"
            + _listing([describe_unknown(red, red.unknowns[c]) for c in ocols])
            + f"\n  components involved: {_names(_components(red, over, ocols))}."
            + "\n  Remove one of these equations (e.g. two ideal sources fixing the same"
            " potential or flow, or a duplicated relation)."
        )
    if ucols:
        csc = inc.tocsc()
        orphans = [c for c in ucols if csc.indptr[c + 1] == csc.indptr[c]]
        rest = [c for c in ucols if c not in set(orphans)]
        for c in orphans:
            q = red.unknowns[c]
            owner = red.symbols[q].component or "its component"
            parts.append(
                f"\n  {describe_unknown(red, q)} occurs in no equation: add an equation for it "
                f"in {owner} or remove the variable."
            )
        if rest:
            roles = set().union(*(_roles(red, red.unknowns[c]) for c in rest))
            if local:
                advice = "These follow from the components named above: fix those first."
            elif "potential" in roles or empty:
                advice = (
                    "Potentials are determined only up to a constant: connect a reference"
                    " (a Ground, or Fixed) to this part of the model."
                )
            elif over:
                advice = (
                    "These follow from the over-determined part above (e.g. the currents"
                    " of two sources in parallel): fix that part first."
                )
            else:
                advice = "Add the missing relation, or connect the dangling connectors."
            parts.append(
                f"\n  Under-determined: {_plural(len(rest), 'unknown')} appear in only "
                f"{_plural(len(urows), 'equation')}:"
                + _listing([describe_unknown(red, red.unknowns[c]) for c in rest])
                + (
                    "\n  equations:" + _listing([red.equations[r].origin for r in urows])
                    if urows
                    else ""
                )
                + f"\n  components involved: {_names(_components(red, urows, rest))}."
                + f"\n  {advice}"
            )
    return "".join(parts)


GENERIC_ADVICE = (
    "For potentials, connect a reference (Ground, Fixed); otherwise check the parameters"
    " (a zero resistance, mass or inductance) and the equations above."
)


def explain_block(ir: IndexReduced, k: int, block: Block, jac: np.ndarray, where: str) -> str:
    """Why BLT block ``k`` of ``ir`` is numerically singular: its equations, the unknowns
    its Jacobian ``jac`` leaves undetermined (the null vector's support), and what to do
    (:func:`block_advice`)."""
    red = ir.reduced
    names = [describe_unknown(red, ir.label(c)) for c in block.unknowns]
    finite = bool(np.all(np.isfinite(jac)))
    reason = "its Jacobian is singular" if finite else "its Jacobian is not finite"
    text = [f"block {k} is singular {where} ({reason}):"]
    text += [f"    {ir.equations[r].origin}" for r in block.equations]
    involved = undetermined(jac) if finite and jac.size else []
    if involved:
        text.append("  these unknowns are not determined (only a combination of them is):")
        text += [f"    {names[j]}" for j in involved]
    text.append("  " + block_advice(ir, block, [block.unknowns[j] for j in involved]))
    return "\n".join(text)


def undetermined(jac: np.ndarray) -> list[int]:
    """Columns of a singular ``jac`` in its null vector (the last right singular vector)."""
    null = np.linalg.svd(jac)[2][-1]
    return np.nonzero(np.abs(null) > 1e-6 * np.abs(null).max())[0].tolist()


def block_advice(ir: IndexReduced, block: Block, involved: Sequence[Col]) -> str:
    """What to do about a singular block. A block that solves, from the chosen states,
    coordinates that index reduction demoted (a column ``(v, o)`` with ``(v, o + 1)`` a
    dummy derivative, or a dummy itself) through equations nonlinear in the unknowns is
    singular where those states do not determine them (a dead point of a mechanism): the
    advice names the states and their joints, and the joints whose coordinates are
    ``involved`` (in the null vector: free to move while the states stand still), those
    that asked for a state priority first, in declaration order. Otherwise
    :data:`GENERIC_ADVICE`."""
    demoted = [c for c in block.unknowns if c in ir.dummies or (c[0], c[1] + 1) in ir.dummies]
    if not demoted or not _nonlinear(ir, block):
        return GENERIC_ADVICE
    red = ir.reduced
    states = [ir.label(c) for c in ir.states]
    coords = list(dict.fromkeys(ir.chains[v][0] for v, _ in demoted))
    loose = sorted({c[0] for c in involved if c in demoted}) or sorted({v for v, _ in demoted})
    asked = [v for v in loose if class_priority(red, red.unknowns[v]) > 0] or loose
    joints = list(dict.fromkeys(joint_of(red, red.unknowns[v]) for v in asked))
    owners = ", ".join(dict.fromkeys(joint_of(red, ir.chains[v][0]) for v, _ in ir.states))
    return (
        f"This block solves {_names(coords)} from the states {', '.join(states)} that index "
        "reduction chose; it is singular where those states do not determine them (for a "
        f"mechanism, a dead point of {owners}), or where the start values put the model. "
        f"The coordinates of {', '.join(joints)} are free to move there: give {joints[0]} a "
        "higher state_priority (e.g. state_priority=2) or the fixed start values, so that "
        "its coordinate becomes a state, or start away from that position."
    )


def _nonlinear(ir: IndexReduced, block: Block) -> bool:
    """Whether the block's Jacobian depends on unknowns (so it can lose rank along a run)."""
    res = ir.residuals[list(block.equations)]
    jac = cs.jacobian(res, ir.syms(block.unknowns))
    unknowns = {ir.symbols[q].sym.name() for chain in ir.chains for q in chain}
    return any(s.name() in unknowns for s in cs.symvar(jac))


def is_singular(jac: np.ndarray, tol: float = 1e-12) -> bool:
    """Rank-deficient or not finite (relative to the largest singular value)."""
    if not np.all(np.isfinite(jac)):
        return True
    sv = np.linalg.svd(jac, compute_uv=False)
    return bool(sv[0] == 0 or sv[-1] <= tol * sv[0])
