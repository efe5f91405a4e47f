"""training: learning through the compiled model at the data rate (imports ``core``,
``laws``, ``optimization``).

``rollout``: the step map of the compiled model and :func:`predict` (free runs);
``rollout_loss``: the windowed rollout loss with its reverse-mode gradient;
``rollout_training``: :func:`train` (Adam on mini-batches of windows, then a polish) and
the loss over samples the mechanics learners share; ``equation_error``:
:func:`fit_equations` on measured or reconstructed derivatives; ``signals``: derivative
reconstruction from quantized positions. A sibling of ``fitting``: neither imports the
other.
"""

from .equation_error import fit_equations
from .rollout import predict
from .rollout_training import SampleLoss, compiled, train
from .signals import Reconstruction, reconstruct, relative_mae

__all__ = [
    "fit_equations",
    "predict",
    "SampleLoss",
    "compiled",
    "train",
    "Reconstruction",
    "reconstruct",
    "relative_mae",
]
