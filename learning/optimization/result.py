"""The one result type every learner returns (:class:`FitResult`), the failed simulations it
keeps (:class:`Failure`), and the names it keys values by: a parameter shared by all
experiments keeps its name, experiment ``k``'s own copy of one is ``"name@k"``
(:func:`own_name`, :func:`split_name`; :func:`experiment_values` gives one experiment's
values under their plain names).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import acausal as ac
from acausal.errors import OptionError, UnknownNameError, unknown_name
from solvers import Result, simulate

from ..laws import LearnedLaw, unknowns
from .uncertainty import Uncertainty

TAG = "@"  # "mass.v0@1": experiment 1's own copy of mass.v0


def own_name(name: str, experiment: int) -> str:
    """``"mass.v0@1"``: the name of experiment ``experiment``'s own copy of ``name``."""
    return f"{name}{TAG}{experiment}"


def split_name(name: str) -> tuple[str, int | None]:
    """``"mass.v0@1"`` -> ``("mass.v0", 1)``; a shared name -> ``(name, None)``."""
    base, sep, k = name.rpartition(TAG)
    return (base, int(k)) if sep and k.isdigit() else (name, None)


@dataclass(frozen=True)
class Failure:
    """A simulation that failed during a fit: the parameter values by name, and why."""

    params: dict[str, float]
    message: str

    def __str__(self) -> str:
        values = ", ".join(f"{k} = {v:.6g}" for k, v in self.params.items())
        return f"{self.message} (at {values})"


@dataclass(frozen=True)
class FitResult:
    """The outcome of :func:`fit`; a value that pickles (e.g. back from a worker process).

    ``params``: fitted values by name (an experiment's own copies as ``"name@k"``;
    :meth:`values` gives one experiment's under their plain names); ``weights``: the
    constrained weights of each :class:`~learning.Unknown` (by component name) at
    ``params``; ``loss`` = ``L(params)``; ``loss_history``: ``L`` at every objective
    evaluation in order (``nan`` for failed ones); ``start``: the start values;
    ``uncertainty``: standard errors and correlations when asked for
    (:mod:`learning.optimization.uncertainty`).
    ``message``: why the optimizer stopped, in words, and the tolerances used (``rtol``,
    ``atol``); ``failures``: every failed simulation (values and error message).
    ``models`` (``model``: the first experiment's) are the compiled models with the fitted
    values as their parameter defaults, so ``simulate(fit.model, ...)`` or :meth:`simulate`
    reproduces the fit; ``systems`` (``system``) are new systems, copies of yours with the
    fitted values (yours are unchanged).
    """

    params: dict[str, float]
    weights: dict[str, dict[str, float]]
    loss: float
    loss_history: list[float]
    n_simulations: int
    n_failed: int
    wall_time: float
    success: bool
    message: str
    method: str
    start: dict[str, float]
    n_iterations: int
    models: tuple[ac.Model, ...] = ()
    systems: tuple[ac.System, ...] = ()
    failures: tuple[Failure, ...] = ()
    rtol: float | None = None
    atol: float | None = None
    validation_history: list[float] = field(default_factory=list)  # train(): per epoch
    uncertainty: Uncertainty | None = None  # standard errors, when asked for

    @property
    def model(self) -> ac.Model:
        return self.models[0]

    @property
    def system(self) -> ac.System:
        return self.systems[0]

    @property
    def last_failure(self) -> str:
        """The message of the last failed simulation ("" when none failed)."""
        return self.failures[-1].message if self.failures else ""

    def values(self, experiment: int = 0) -> dict[str, float]:
        """The fitted values as experiment ``experiment``'s model takes them: the shared
        ones and that experiment's own copies under their plain names."""
        return experiment_values(self.params, experiment)

    def law(self, name: str) -> LearnedLaw:
        """The learned law of the :class:`~learning.Unknown` named ``name`` (its full
        name, e.g. ``"Rx"``) at the fitted values (experiment 0's), as a function on numpy
        arrays: ``fit.law("Rx")({"i": currents})`` -> voltages (:class:`LearnedLaw`)."""
        found = {u.full_name: u for u in unknowns(self.systems)}
        if name not in found:
            if not found:
                raise OptionError(
                    f"fit.law({name!r}): this result holds no system with an ln.Unknown (a "
                    "learner given a compiled model returns none); learn from the System"
                )
            raise UnknownNameError(f"fit.law: {unknown_name('ln.Unknown', name, found).args[0]}")
        return LearnedLaw(found[name], self.values())

    def simulate(self, experiment: int = 0, **kwargs: Any) -> Result:
        """:func:`solvers.simulate` of experiment ``experiment``'s fitted model
        (``params=`` in ``kwargs`` overrides some of the values)."""
        return simulate(self.models[experiment], **kwargs)

    def __str__(self) -> str:
        lines = [
            f"fit ({self.method}): loss {self.loss:.6g}, {self.n_iterations} iterations, "
            f"{self.n_simulations} simulations ({self.n_failed} failed), "
            f"{self.wall_time:.2f} s; {self.message}",
        ]
        lines += [f"  {k:<28s} {self.start[k]:>12.6g} -> {v:.6g}" for k, v in self.params.items()]
        for comp, ws in self.weights.items():
            lines.append(f"  {comp}: " + ", ".join(f"{k} = {v:.6g}" for k, v in ws.items()))
        if self.uncertainty is not None:
            lines.append(str(self.uncertainty))
        return "\n".join(lines)


def experiment_values(values: Mapping[str, float], experiment: int) -> dict[str, float]:
    """Fitted ``values`` (shared names and ``"name@k"`` copies) as experiment
    ``experiment`` takes them: shared ones and its own copies under their plain names."""
    out = {}
    for name, v in values.items():
        base, k = split_name(name)
        if k is None or k == experiment:
            out[base] = v
    return out
