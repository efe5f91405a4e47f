"""evaluation: how good is a learned model, over many runs (imports ``core``, ``laws``,
``optimization``, ``fitting``, ``training``).

``cross_validation``: free-run errors and cross-validation over trajectories, each fold
trained by :func:`train`; ``many_fits``: many fits as independent tasks on one executor
(multi-start, cross-validation of rollout training and of the output-error fit). It runs
both learners, so it sits above both.
"""

from .cross_validation import CrossValidation, cross_validate, fold_groups, free_run_rmse
from .many_fits import (
    ManyFits,
    cross_validate_experiments,
    cross_validate_many,
    multi_start,
    output_rmse,
)

__all__ = [
    "CrossValidation",
    "cross_validate",
    "free_run_rmse",
    "ManyFits",
    "cross_validate_experiments",
    "cross_validate_many",
    "fold_groups",
    "multi_start",
    "output_rmse",
]
