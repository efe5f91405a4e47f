"""laws: constitutive laws and the component that holds one (imports ``core``).

A law is a relation ``g(u; w) = 0`` whose parameters keep it feasible (and, when asked,
dissipative) by construction: ``law`` (the base: raw parameters, their constrained
weights, softplus), ``polynomial`` (separable odd polynomials), ``neural`` (tanh/sigmoid
layers), ``known`` (a user's relation), ``explicit`` (``output = eta(inputs)``) with
``mlp`` (networks of any depth) and ``sum_law`` (sums of named parts). ``unknown``: the
:class:`Unknown` component placing laws in the paper's Type 1, 2 and 3 templates, and
``unknowns`` (every Unknown in systems); ``learned_law``: a law at fitted values as a
function on arrays (what ``FitResult.law`` returns).

Laws are what every room above them is about; they need no data, no optimizer and no
check, only the option checks of ``core``.
"""

from .known import Known
from .law import Law, softplus, softplus_inv
from .learned_law import LearnedLaw
from .mlp import ACTIVATIONS, MLP, draw_weights
from .neural import NeuralNet
from .polynomial import Polynomial
from .sum_law import Sum
from .unknown import Unknown, unknowns

__all__ = [
    "Known",
    "Law",
    "softplus",
    "softplus_inv",
    "LearnedLaw",
    "ACTIVATIONS",
    "MLP",
    "draw_weights",
    "NeuralNet",
    "Polynomial",
    "Sum",
    "Unknown",
    "unknowns",
]
