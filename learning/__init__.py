"""learning: unknown components with constitutive laws that are feasible by construction.

>>> import acausal as ac
>>> import learning as ln
>>> Rx = ln.Unknown("Rx", ac.Pin, law=ln.Polynomial(order=3, constraint="dissipative"))
>>> Rx.parameter_names()[:2]
['Rx.theta_f3', 'Rx.theta_f5']

Laws (the base :mod:`learning.law`, then one module each): :class:`Polynomial` (separable
odd polynomials, Propositions 4.1-4.3), :class:`NeuralNet` (tanh/sigmoid layers,
Proposition 4.4), :class:`Known` (any user-written relation). Explicit laws
``output = eta(inputs)`` (:mod:`learning.explicit`): :class:`MLP` (networks of any depth
with relu/tanh/softplus/sigmoid units, seeded He/Glorot starts, standardized inputs, an
option dissipative by construction) and :class:`Sum` (named parts on separate inputs, e.g.
conservative + non-conservative). :class:`Unknown` (:mod:`learning.unknown`) places a law
in a Type 1, 2 or 3 two-connector template. :class:`Lagrangian` is a component stated by
its Lagrangian ``1/2 q'^T M(q) q' - V(q)`` (expressions, or a :class:`LagrangianNet`).
:func:`reduce_mechanism` reduces a planar mechanism's :func:`natural_coordinates` to minimal
coordinates (a dynamics-aware autoencoder); its result's ``component`` is a
:class:`ReducedModel`.

Data: an :class:`Experiment` (times, measured columns, inputs and the parameters they
drive, per-experiment parameter values, weights, a mask; from a dict, numpy arrays or a
pandas DataFrame, checked once) is what every learner takes, one or a sequence:
:func:`fit`, :func:`train`, :func:`fit_equations`, :func:`predict`, :func:`train_lagrangian`,
:func:`cross_validate`, :func:`multi_start`, :func:`identifiability`. Every learner returns
a :class:`FitResult`; ``fit.law("Rx")`` is a learned law as a function on arrays
(:class:`LearnedLaw`).
"""

from .equation_error import fit_equations
from .evaluation import CrossValidation, cross_validate, free_run_rmse
from .experiment import Experiment
from .feasibility import FeasibilityReport, check_feasibility, with_small_capacitors
from .fit import fit
from .fit_bar import fit_progress_bar
from .identifiability import identifiability
from .known import Known
from .lagrangian import Lagrangian
from .lagrangian_net import LagrangianNet, MassFloorWarning
from .lagrangian_training import train_lagrangian
from .law import Law, softplus, softplus_inv
from .learned_law import LearnedLaw
from .many_fits import (
    ManyFits,
    cross_validate_experiments,
    cross_validate_many,
    fold_groups,
    multi_start,
    output_rmse,
)
from .mlp import MLP
from .natural import NaturalCoordinates, PointLoad, natural_coordinates
from .neural import NeuralNet
from .polynomial import Polynomial
from .reduced_model import ReducedModel, Reduction
from .reduction import reduce_mechanism
from .result import Failure, FitResult
from .rollout import predict
from .signals import Reconstruction, reconstruct, relative_mae
from .sum_law import Sum
from .training import train
from .unknown import Unknown

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
