"""acausal: components with flow/potential connectors, assembled and compiled to a DAE.

>>> import acausal as ac
>>> model = ac.compile(system)   # doctest: +SKIP
>>> print(model.blt())           # doctest: +SKIP
"""

from . import structure
from .arrays import ComponentArray, ConnectorArray
from .compiler import compile
from .component import Component, Equation
from .connectors import Connector, ConnectorType, Flange, Frame, HeatPort, Pin, RotFlange
from .errors import (
    ConnectError,
    EquationError,
    InitializationError,
    ModelError,
    NameClashError,
    OptionError,
    ParameterError,
    ParameterWarning,
    SimulationError,
    StateSelectionWarning,
    StructureError,
    UnitError,
    UnknownNameError,
)
from .flat import FlatDAE
from .flatten import flatten
from .model import Model
from .signals import ramp, sampled, signal, sine, spline, step
from .stencil import StencilModel
from .symbols import (
    acos,
    asin,
    atan,
    atan2,
    cos,
    cosh,
    der,
    exp,
    fabs,
    fmax,
    fmin,
    if_else,
    log,
    sign,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    time,
)
from .system import System
from .unit_check import UnitFinding, UnitReport, check_units

__all__ = [
    "structure",
    "Component",
    "ComponentArray",
    "ConnectorArray",
    "Equation",
    "Connector",
    "ConnectorType",
    "Pin",
    "Flange",
    "RotFlange",
    "HeatPort",
    "Frame",
    "System",
    "FlatDAE",
    "flatten",
    "Model",
    "StencilModel",
    "compile",
    "check_units",
    "UnitReport",
    "UnitFinding",
    "ModelError",
    "ConnectError",
    "EquationError",
    "InitializationError",
    "NameClashError",
    "OptionError",
    "ParameterError",
    "ParameterWarning",
    "SimulationError",
    "StateSelectionWarning",
    "StructureError",
    "UnitError",
    "UnknownNameError",
    "der",
    "time",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "sqrt",
    "atan",
    "atan2",
    "asin",
    "acos",
    "fabs",
    "sign",
    "fmin",
    "fmax",
    "if_else",
    "step",
    "ramp",
    "sine",
    "sampled",
    "signal",
    "spline",
]
