"""Time functions for sources: step, ramp, sine, and sampled tables.

Each returns a CasADi expression of ``time`` (and of parameters, when given symbols),
so sources stay symbolic and differentiable for index reduction.
"""

from __future__ import annotations

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


def sampled(t: object, values: object, name: str = "table") -> cs.SX:
    """Linear interpolation of samples ``(t_k, y_k)``; held constant outside the range."""
    tk, yk = _samples(t, values, name)
    tc = cs.fmin(cs.fmax(time, tk[0]), tk[-1])
    return cs.pw_lin(tc, cs.DM(tk), cs.DM(yk))


def spline(t: object, values: object, name: str = "table") -> cs.SX:
    """Cubic spline through samples ``(t_k, y_k)``: twice continuously differentiable, so
    that index reduction can differentiate a prescribed motion twice (``not-a-knot`` ends,
    held at the end values outside the range).

    On ``[t_k, t_k+1)`` it is ``a_k + b_k u + c_k u^2 + d_k u^3`` with ``u = t - t_k``; the
    coefficients are piecewise constant in time (zero derivative), so ``der()`` of the
    expression is the spline's exact derivative.
    """
    from scipy.interpolate import CubicSpline

    tk, yk = _samples(t, values, name)
    if tk.size < 4:
        raise ParameterError(f"{name}: a cubic spline needs 4 or more samples, got {tk.size}")
    cubic = CubicSpline(tk, yk)
    # clamp with strict comparisons, so that the derivative at the end samples is one-sided
    tc = cs.if_else(time < tk[0], tk[0], cs.if_else(time > tk[-1], tk[-1], time))
    breaks = cs.DM(tk[1:-1])
    start = cs.pw_const(tc, breaks, cs.DM(tk[:-1]))
    u = tc - start
    d, c, b, a = (cs.pw_const(tc, breaks, cs.DM(cubic.c[k])) for k in range(4))
    return a + u * (b + u * (c + u * d))


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
