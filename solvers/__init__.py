"""Numerics for compiled models: consistent initialization, IDAS, forward sensitivities."""

from .integrate import Simulator
from .result import Result
from .simulate import compiled, output_grid, simulate

__all__ = ["simulate", "Result", "Simulator", "compiled", "output_grid"]
