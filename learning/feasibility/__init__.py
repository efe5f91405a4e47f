"""feasibility: is a proposed model feasible? (imports ``core``, ``laws``).

``report``: :func:`check_feasibility` and its :class:`FeasibilityReport`. It reads each
two-connector component's constitutive relation in the paper's templates
(``constitutive``), checks the laws (``law_checks``: Proposition 3.1's partial derivatives
never vanish, dissipativity) and the model's algebraic blocks (``block_checks``), both on
what ``check_context`` shares (findings, parameter values, the sampled box of operating
points), proving signs with sympy where it can (``sympy_bridge``); ``small_capacitors``
inserts the paper's small capacitors. It reads laws and never fits, so it sits beside the
optimizer room, below the learners.
"""

from .report import FeasibilityReport, check_feasibility
from .small_capacitors import with_small_capacitors

__all__ = [
    "FeasibilityReport",
    "check_feasibility",
    "with_small_capacitors",
]
