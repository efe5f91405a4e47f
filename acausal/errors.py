"""Errors a user can cause, each with a message that names their own components.

Every error the framework raises on bad input derives from :class:`ModelError`, so an
application can catch one type; the command line prints the message without a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ModelError(Exception):
    """Base class of every error caused by the model or the inputs a user gave."""


class ConnectError(ModelError):
    """Connectors that cannot be connected (different types, foreign objects)."""


class NameClashError(ModelError):
    """Two components, connectors, parameters or variables share one name."""


class ParameterError(ModelError):
    """A parameter value that is not a finite number."""


class UnitError(ModelError):
    """A unit string that does not parse, a value given in a unit of another dimension
    than its parameter's, or units that do not agree. The message names the component's
    parameter or variable and the unit string."""


class EquationError(ModelError):
    """An equation that is not of the form ``lhs == rhs`` or mixes foreign symbols."""


class StructureError(ModelError):
    """An unbalanced or structurally singular model."""


class OptionError(ModelError, ValueError):
    """A misused argument of a public function: wrong type, out of range, inconsistent."""


class InitializationError(ModelError):
    """No consistent initial values: conflicting fixed starts or a failed Newton solve.

    ``residuals``: the initialization rows with the largest residuals, as (row described
    for a person, value), worst first, when Newton stopped short; empty otherwise.
    """

    def __init__(self, message: str, residuals: tuple[tuple[str, float], ...] = ()) -> None:
        super().__init__(message)
        self.residuals = tuple(residuals)


class SimulationError(ModelError):
    """The integrator failed during a simulation.

    ``time``: when it failed (None if unknown); ``equations``: the equations of the
    blocks involved (solved by Newton near that time), as text; ``result``: the trajectory
    up to the last output time reached, where the solver keeps it (a ``solvers.Result``).
    """

    def __init__(
        self,
        message: str,
        time: float | None = None,
        equations: tuple[str, ...] = (),
        result: object | None = None,
    ) -> None:
        super().__init__(message)
        self.time = time
        self.equations = tuple(equations)
        self.result = result


class ParameterWarning(UserWarning):
    """A parameter value outside its physical range (below the ``min`` its component
    declares: a negative resistance, mass or capacitance): allowed, since active devices
    and a fit's exploration need it, but rarely meant. The message names the parameter."""


class StateSelectionWarning(UserWarning):
    """Index reduction chose the states with a doubt the user should hear about: among
    equally good candidates, or away from the preferred ones because those are singular at
    the start values, or with every choice singular there. The message names the
    coordinates and what to change (a ``state_priority``, the start values)."""


class UnknownNameError(ModelError, KeyError):
    """A name that no variable or parameter has."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def unknown_name(kind: str, name: str, known: Iterable[str]) -> UnknownNameError:
    """An :class:`UnknownNameError` listing the closest known names."""
    known = list(known)
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return UnknownNameError(f"unknown {kind} {name!r}.{hint} ({len(known)} {kind}s are known.)")
