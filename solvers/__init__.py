"""Numerics for compiled models: consistent initialization, IDAS, forward sensitivities."""

from .batch import BatchResult, simulate_many
from .designs import Normal, TruncatedNormal, Uniform, grid_design, sample_design, tolerance_ranges
from .executors import (
    Shared,
    TaskFailure,
    available_cores,
    describe_executor,
    executor_session,
    run_tasks,
)
from .fmu import CompilerError, StaticStatesWarning, export_fmu
from .functions import DAEFunctions
from .initialize import z_start_values
from .integrate import Simulator
from .progress import BatchProgress, Progress, ProgressOption
from .result import Result
from .simulate import Simulations, as_model, initial_values, output_grid, simulate, simulator
from .time_scales import TimeScales, time_scales

__all__ = [
    "simulate",
    "export_fmu",
    "CompilerError",
    "StaticStatesWarning",
    "Result",
    "Simulator",
    "Simulations",
    "DAEFunctions",
    "as_model",
    "output_grid",
    "simulator",
    "initial_values",
    "z_start_values",
    "time_scales",
    "TimeScales",
    "simulate_many",
    "BatchResult",
    "BatchProgress",
    "grid_design",
    "sample_design",
    "tolerance_ranges",
    "Uniform",
    "Normal",
    "TruncatedNormal",
    "TaskFailure",
    "available_cores",
    "run_tasks",
    "Shared",
    "executor_session",
    "describe_executor",
    "Progress",
    "ProgressOption",
]
