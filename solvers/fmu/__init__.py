"""Export of a compiled model as an FMI 2.0 FMU (:func:`export_fmu`)."""

from .code import CompilerError
from .export import StaticStatesWarning, export_fmu

__all__ = ["export_fmu", "CompilerError", "StaticStatesWarning"]
