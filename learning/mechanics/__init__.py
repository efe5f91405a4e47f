"""mechanics: learned mechanical components (imports ``core``, ``laws``,
``optimization``, ``training``).

``lagrangian``: a component stated by its Lagrangian ``1/2 q'^T M(q) q' - V(q)``;
``lagrangian_net``: ``M(q) = L L^T + eps I`` and ``V(q)`` as networks;
``lagrangian_training``: :func:`train_lagrangian` on the equation error of the inverse
dynamics; ``natural``: a planar mechanism's natural coordinates; ``reduction``:
:func:`reduce_mechanism`, a dynamics-aware autoencoder to minimal coordinates, whose
``reduced_model`` is a component; ``dense``: that autoencoder's networks. It uses the
networks of ``laws`` and the sample loss and optimizers below it, never the fits.
"""

from .lagrangian import Lagrangian
from .lagrangian_net import LagrangianNet, MassFloorWarning
from .lagrangian_training import train_lagrangian
from .natural import NaturalCoordinates, PointLoad, natural_coordinates
from .reduced_model import ReducedModel, Reduction
from .reduction import reduce_mechanism

__all__ = [
    "Lagrangian",
    "LagrangianNet",
    "MassFloorWarning",
    "train_lagrangian",
    "NaturalCoordinates",
    "PointLoad",
    "natural_coordinates",
    "ReducedModel",
    "Reduction",
    "reduce_mechanism",
]
