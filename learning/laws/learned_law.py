"""A learned law as a function on numpy arrays: what :meth:`learning.FitResult.law` returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from acausal.errors import OptionError

from .unknown import Unknown


@dataclass(frozen=True)
class LearnedLaw:
    """The law of :class:`~learning.Unknown` ``unknown`` at raw parameter values
    ``params`` (e.g. a fit's). A law relates its quantities by ``g(u_1, ..., u_K; w) = 0``
    (an explicit law by ``u_1 = eta(u_2, ..., u_K; w)``); called with samples of all but
    one of them, it returns the one left out, for each sample: ``u_1 = eta(u_2, ...)``
    evaluated for an explicit law given its inputs, otherwise the root of ``g`` in the
    missing quantity (:meth:`learning.Unknown.curve`: safeguarded Newton, exact to about
    1e-14 relative). Quantities by any of their names (``"i"`` or ``"f"`` on a pin,
    ``"der(x)"`` or ``"dx"``, ...)."""

    unknown: Unknown
    params: dict[str, float]

    def __call__(self, given: Mapping[str, ArrayLike]) -> np.ndarray:
        """The quantity ``given`` leaves out, e.g. ``law({"i": currents})`` -> voltages."""
        keys = [str(k).replace(" ", "") for k in given]
        u = self.unknown
        for spell, law in zip(u._spellings, u.laws):
            if all(k in spell for k in keys):
                missing = [lb for lb in law.labels if lb not in {spell[k] for k in keys}]
                if len(missing) == 1:
                    return u.curve(missing[0], given, self.params)
        reads = "; ".join(", ".join(law.labels) for law in u.laws)
        raise OptionError(
            f"law of {u.full_name}: given {', '.join(map(repr, keys)) or 'nothing'}; give samples "
            f"of every quantity of one law but the one to compute (its laws read: {reads})"
        )

    def __str__(self) -> str:
        laws = "; ".join(f"g({', '.join(law.labels)}) = 0" for law in self.unknown.laws)
        return f"learned law of {self.unknown.full_name}: {laws}"
