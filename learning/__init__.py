"""learning: unknown components with constitutive laws that are feasible by construction.

>>> import acausal as ac
>>> import learning as ln
>>> Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=3, constraint="dissipative"))
>>> Rx.parameter_names()[:2]
['Rx.theta_f3', 'Rx.theta_f5']

Rooms, each a subpackage named for its job; imports go one way, down this list (enforced by
tests/test_layering.py), and each room's ``__init__`` names what the rooms above may use:

- :mod:`learning.core`: :class:`Experiment` (times, measured columns, inputs and the
  parameters they drive, per-experiment parameter values, weights, a mask; from a dict,
  numpy arrays or a pandas DataFrame, checked once), the option checks, the progress reports
  (:class:`~learning.core.FitProgress`, :func:`fit_progress_bar`), BLAS thread limits;
- :mod:`learning.laws`: :class:`Polynomial` (separable odd polynomials, Propositions
  4.1-4.3), :class:`NeuralNet` (tanh/sigmoid layers, Proposition 4.4), :class:`Known` (any
  user-written relation), explicit laws ``output = eta(inputs)``: :class:`MLP` (networks of
  any depth, seeded starts, standardized inputs, an option dissipative by construction) and
  :class:`Sum` (named parts on separate inputs); :class:`Unknown` places a law in a Type 1,
  2 or 3 two-connector template; :class:`LearnedLaw`, a learned law on arrays;
- :mod:`learning.feasibility`: :func:`check_feasibility`, :func:`with_small_capacitors`;
- :mod:`learning.optimization`: :class:`FitResult`, what every learner returns, with its
  :class:`Failure` records; the optimizers every learner runs;
- :mod:`learning.fitting`: :func:`fit` (output error through IDAS, or collocation),
  :func:`identifiability`; :mod:`learning.training`: :func:`train` (rollouts),
  :func:`predict`, :func:`fit_equations` (equation error), :func:`reconstruct`;
- :mod:`learning.evaluation`: :func:`cross_validate`, :func:`multi_start` and the other
  many-run studies; :mod:`learning.mechanics`: :class:`Lagrangian` (a component stated by
  ``1/2 q'^T M(q) q' - V(q)``, expressions or a :class:`LagrangianNet`),
  :func:`train_lagrangian`, :func:`reduce_mechanism` (a planar mechanism's
  :func:`natural_coordinates` to minimal coordinates; its ``component`` is a
  :class:`ReducedModel`).

The ``acausal`` command (:mod:`learning.cli`) sits on top of them all: it needs acausal,
solvers and learning, so it lives in the top package, and nothing imports it.

Every learner takes an :class:`Experiment` or a sequence of them and returns a
:class:`FitResult`; ``fit.law("Rx")`` is a learned law as a function on arrays.
"""

from .core import Experiment, fit_progress_bar
from .evaluation import (
    CrossValidation,
    ManyFits,
    cross_validate,
    cross_validate_experiments,
    cross_validate_many,
    fold_groups,
    free_run_rmse,
    multi_start,
    output_rmse,
)
from .feasibility import FeasibilityReport, check_feasibility, with_small_capacitors
from .fitting import fit, identifiability
from .laws import (
    MLP,
    Known,
    Law,
    LearnedLaw,
    NeuralNet,
    Polynomial,
    Sum,
    Unknown,
    softplus,
    softplus_inv,
)
from .mechanics import (
    Lagrangian,
    LagrangianNet,
    MassFloorWarning,
    NaturalCoordinates,
    PointLoad,
    ReducedModel,
    Reduction,
    natural_coordinates,
    reduce_mechanism,
    train_lagrangian,
)
from .optimization import Failure, FitResult
from .training import Reconstruction, fit_equations, predict, reconstruct, relative_mae, train

__all__ = [
    "Law",
    "Polynomial",
    "NeuralNet",
    "Known",
    "MLP",
    "Sum",
    "Unknown",
    "Lagrangian",
    "LagrangianNet",
    "MassFloorWarning",
    "train_lagrangian",
    "natural_coordinates",
    "NaturalCoordinates",
    "PointLoad",
    "reduce_mechanism",
    "Reduction",
    "ReducedModel",
    "softplus",
    "softplus_inv",
    "Experiment",
    "fit",
    "fit_equations",
    "FitResult",
    "LearnedLaw",
    "Failure",
    "train",
    "predict",
    "cross_validate",
    "CrossValidation",
    "free_run_rmse",
    "check_feasibility",
    "FeasibilityReport",
    "with_small_capacitors",
    "identifiability",
    "reconstruct",
    "Reconstruction",
    "relative_mae",
    "multi_start",
    "cross_validate_many",
    "cross_validate_experiments",
    "output_rmse",
    "fold_groups",
    "ManyFits",
    "fit_progress_bar",
]
