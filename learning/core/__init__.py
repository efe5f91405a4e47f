"""core: what every learner shares and that knows nothing of laws (the bottom room).

The one measurement type, :class:`Experiment` (``experiment``), and the forms each learner
computes with (``experiment_forms``: pairs of system and data, records, samples); the checks
of the options every learner shares (``checks``); the one progress mechanism
(``progress``: :class:`FitProgress`, the report every learner emits, and the sink that
prints it, shows a bar or passes it to a callable); the limit on BLAS threads a learner
runs its linear algebra under and the CasADi threads it was asked for
(``thread_limits``).

Imports only acausal and solvers. Modules here are private: other rooms import the names
below.
"""

from .checks import check_count, check_layers, check_positive, no_params
from .experiment import Experiment, check_time, finite_column, numeric
from .experiment_forms import as_list, as_pairs, as_records, as_samples, with_values
from .progress import FitProgress, fit_progress_bar, progress_sink
from .thread_limits import blas_threads, thread_count

__all__ = [
    "blas_threads",
    "thread_count",
    "check_count",
    "check_layers",
    "check_positive",
    "no_params",
    "Experiment",
    "check_time",
    "finite_column",
    "numeric",
    "as_list",
    "as_pairs",
    "as_records",
    "as_samples",
    "with_values",
    "FitProgress",
    "fit_progress_bar",
    "progress_sink",
]
