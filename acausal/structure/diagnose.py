"""Messages for unbalanced and structurally singular models, in the user's own names."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..symbols import Quantity
from .alias import Reduced
from .graph import dulmage_mendelsohn

_MAX_LISTED = 12


def describe_unknown(red: Reduced, q: Quantity) -> str:
    """``R1.v`` or ``R1.p.v (= C1.n.v = ...)`` when aliases were merged into it."""
    others = [m.name for m in red.members.get(q, [])]
    if not others:
        return q.name
    shown = " = ".join(others[:3]) + (" = ..." if len(others) > 3 else "")
    return f"{q.name} (= {shown})"


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
        owner = red.unknowns[c].owner
        if owner is not None:
            names.append(owner.full_name)
    return sorted(set(names))


def explain_singular(
    red: Reduced, inc: sp.csr_matrix, row_to_col: np.ndarray, col_to_row: np.ndarray
) -> str:
    """Why equations and unknowns do not match: the over- and under-determined parts."""
    n, m = inc.shape
    (orows, ocols), (urows, ucols) = dulmage_mendelsohn(inc, row_to_col, col_to_row)
    head = (
        f"model {red.flat.name} is {'unbalanced' if n != m else 'structurally singular'}: "
        f"{n} equations for {m} unknowns (after eliminating {len(red.eliminated)} aliases)."
    )
    parts = [head]
    if orows:
        parts.append(
            f"\n  Over-determined: these {len(orows)} equations constrain only {len(ocols)} "
            f"unknowns:"
            + _listing([red.equations[r].origin for r in orows])
            + "\n  unknowns:"
            + _listing([describe_unknown(red, red.unknowns[c]) for c in ocols])
            + f"\n  components involved: {', '.join(_components(red, orows, ocols))}."
            + "\n  Remove one of these equations (e.g. a redundant source or ground, or two ideal"
            " sources fixing the same potential or flow)."
        )
    if ucols:
        parts.append(
            f"\n  Under-determined: these {len(ucols)} unknowns appear in only {len(urows)} "
            f"equations:"
            + _listing([describe_unknown(red, red.unknowns[c]) for c in ucols])
            + (
                "\n  equations:" + _listing([red.equations[r].origin for r in urows])
                if urows
                else ""
            )
            + f"\n  components involved: {', '.join(_components(red, urows, ucols))}."
            + "\n  Add the missing relation: e.g. a Ground (or Fixed) to give potentials a"
            " reference, or connect the dangling connectors."
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
