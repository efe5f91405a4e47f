"""fitting: output error through the simulated DAE (imports ``core``, ``laws``,
``optimization``).

``output_error``: :func:`fit` (least squares with IDAS sensitivities, Powell,
Nelder-Mead, or collocation) over the loss of ``objective`` (residuals of one or many
experiments, tolerances from the data's noise, failures as a finite penalty);
``collocation``: the whole DAE by Radau IIA collocation, solved by IPOPT;
``identifiability``: which parameters the outputs determine (sensitivities at a point).
A sibling of ``training``: neither imports the other.
"""

from .identifiability import identifiability
from .output_error import fit

__all__ = [
    "identifiability",
    "fit",
]
