"""Numerics for compiled models: consistent initialization, IDAS, forward sensitivities."""

from .functions import DAEFunctions
from .initialize import z_start_values
from .integrate import Simulator
from .result import Result
from .simulate import as_model, initial_values, output_grid, simulate, simulator

__all__ = [
    "simulate",
    "Result",
    "Simulator",
    "DAEFunctions",
    "as_model",
    "output_grid",
    "simulator",
    "initial_values",
    "z_start_values",
]
