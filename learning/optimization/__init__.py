"""optimization: one optimizer loop and one result type for every learner (imports
``core``, ``laws``).

``result``: :class:`FitResult`, what every learner returns, with the failed simulations
(:class:`Failure`) and the per-experiment names (``"mass.v0@1"``) it keys values by;
``uncertainty``: standard errors from the Jacobian at the optimum; ``optimizers``: Adam
epochs over mini-batches, the L-BFGS-B and least-squares polish, and
``levenberg_marquardt`` for tall problems without bounds. The result type sits above
``laws`` because ``fit.law("Rx")`` returns a learned law; everything that optimizes sits
above it.
"""

from .optimizers import (
    AdamOptions,
    AdamRun,
    Polish,
    adam_epochs,
    lbfgs,
    least_squares,
    polish_options,
    remember_last,
    tall_least_squares,
)
from .result import Failure, FitResult, experiment_values, own_name, split_name
from .uncertainty import Uncertainty, from_jacobian

__all__ = [
    "AdamOptions",
    "AdamRun",
    "Polish",
    "adam_epochs",
    "lbfgs",
    "least_squares",
    "polish_options",
    "remember_last",
    "tall_least_squares",
    "Failure",
    "FitResult",
    "experiment_values",
    "own_name",
    "split_name",
    "Uncertainty",
    "from_jacobian",
]
