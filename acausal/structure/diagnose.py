"""Messages for unbalanced and structurally singular models, in the user's own names."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .alias import Reduced
from .graph import dulmage_mendelsohn

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


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


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
    parts = [head]
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
            if "potential" in roles or empty:
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


def explain_block(
    k: int, origins: list[str], unknowns: list[str], jac: np.ndarray, where: str
) -> str:
    """Why BLT block ``k`` is numerically singular: its equations and the unknowns its
    Jacobian ``jac`` leaves undetermined (the null vector's support)."""
    finite = bool(np.all(np.isfinite(jac)))
    reason = "its Jacobian is singular" if finite else "its Jacobian is not finite"
    text = [f"block {k} is singular {where} ({reason}):"]
    text += [f"    {o}" for o in origins]
    if finite and jac.size:
        null = np.linalg.svd(jac)[2][-1]
        involved = np.nonzero(np.abs(null) > 1e-6 * np.abs(null).max())[0]
        text.append("  these unknowns are not determined (only a combination of them is):")
        text += [f"    {unknowns[j]}" for j in involved]
    text.append(
        "  For potentials, connect a reference (Ground, Fixed); otherwise check the parameters"
        " (a zero resistance, mass or inductance) and the equations above."
    )
    return "\n".join(text)


def is_singular(jac: np.ndarray, tol: float = 1e-12) -> bool:
    """Rank-deficient or not finite (relative to the largest singular value)."""
    if not np.all(np.isfinite(jac)):
        return True
    sv = np.linalg.svd(jac, compute_uv=False)
    return bool(sv[0] == 0 or sv[-1] <= tol * sv[0])
