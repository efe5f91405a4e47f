"""Time functions for sources: step, ramp, sine, and sampled tables.

Each returns a CasADi expression of ``time`` (and of parameters, when given symbols),
so sources stay symbolic and differentiable for index reduction.
"""

from __future__ import annotations

import re

import casadi as cs
import numpy as np

from .errors import ParameterError
from .symbols import time


def step(height: cs.SX | float, start_time: cs.SX | float = 0.0) -> cs.SX:
    """``height`` for ``t >= start_time``, else 0."""
    return cs.if_else(time >= start_time, height, 0.0)


def ramp(height: cs.SX | float, duration: cs.SX | float, start_time: cs.SX | float = 0.0) -> cs.SX:
    """0 before ``start_time``, rising linearly to ``height`` over ``duration``, then constant."""
    frac = cs.fmin(cs.fmax((time - start_time) / duration, 0.0), 1.0)
    return height * frac


def sine(amplitude: cs.SX | float, f: cs.SX | float, phase: cs.SX | float = 0.0) -> cs.SX:
    """``amplitude * sin(2 pi f t + phase)``."""
    return amplitude * cs.sin(2 * np.pi * f * time + phase)


def _samples(t: object, values: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Sample times and values as float arrays, checked."""
    tk = np.asarray(t, dtype=float).ravel()
    yk = np.asarray(values, dtype=float).ravel()
    if tk.size != yk.size or tk.size < 2:
        raise ParameterError(
            f"{name}: samples need equal lengths >= 2, got {tk.size} times and {yk.size} values"
        )
    if not (np.all(np.isfinite(tk)) and np.all(np.isfinite(yk))):
        raise ParameterError(f"{name}: samples contain NaN or infinite values")
    if np.any(np.diff(tk) <= 0):
        raise ParameterError(f"{name}: sample times must be strictly increasing")
    return tk, yk


def _lookup(name: str, method: str, tk: np.ndarray, yk: np.ndarray) -> cs.Function:
    """A CasADi ``interpolant`` of the samples (a binary search per evaluation: the cost of a
    right-hand side does not grow with the record), named for the table."""
    label = "table_" + (re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "signal")
    return cs.interpolant(label, method, [tk], yk)


def sampled(t: object, values: object, name: str = "table") -> cs.SX:
    """Linear interpolation of samples ``(t_k, y_k)``; held constant outside the range. An
    O(log n) lookup (CasADi ``interpolant``) of the clamped time; its kinks are left to
    the integrator's step control (no integration segment per sample)."""
    tk, yk = _samples(t, values, name)
    return _lookup(name, "linear", tk, yk)(cs.fmin(cs.fmax(time, tk[0]), tk[-1]))


def spline(t: object, values: object, name: str = "table") -> cs.SX:
    """Cubic spline through samples ``(t_k, y_k)``: twice continuously differentiable, so
    that index reduction can differentiate a prescribed motion twice (not-a-knot ends, as
    scipy's ``CubicSpline``; held at the end values outside the range). An O(log n) lookup
    (CasADi's ``bspline`` interpolant), differentiated by CasADi."""
    tk, yk = _samples(t, values, name)
    if tk.size < 4:
        raise ParameterError(f"{name}: a cubic spline needs 4 or more samples, got {tk.size}")
    # clamp with strict comparisons, so that the derivative at the end samples is one-sided
    tc = cs.if_else(time < tk[0], tk[0], cs.if_else(time > tk[-1], tk[-1], time))
    return _lookup(name, "bspline", tk, yk)(tc)


def signal(value: object, name: str = "signal", smooth: bool = False) -> cs.SX | float:
    """A source's signal: a number, an expression of ``time``, or samples ``(t, y)``
    (linear interpolation, or a C2 cubic :func:`spline` when ``smooth``)."""
    if isinstance(value, tuple) and len(value) == 2:
        return (spline if smooth else sampled)(value[0], value[1], name)
    if isinstance(value, (cs.SX, int, float)) and not isinstance(value, bool):
        return value
    raise ParameterError(
        f"{name}: {value!r} is not a signal; give a number, an expression of ac.time, "
        "or samples (t_array, values)"
    )
