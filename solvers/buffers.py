"""Calling CasADi functions on numpy arrays through CasADi's buffers.

A CasADi call with numpy arguments returns ``DM`` matrices, and ``DM.full()`` goes
through a Python list of floats: at a million values (an IDAS solution of 1,000 states on
1,001 times) that conversion costs more than the integration. ``Function.buffer()`` lets
CasADi read its arguments from, and write its results into, numpy memory directly.
CasADi stores matrices column by column, so a ``(rows, cols)`` value is handed over as a
C-contiguous ``(cols, rows)`` array and read back through a transposed view.
"""

from __future__ import annotations

import casadi as cs
import numpy as np


def _column_major(fun: cs.Function, k: int, value: np.ndarray | float) -> np.ndarray:
    """Input ``k`` of ``fun`` as a contiguous array of its nonzeros (dense inputs)."""
    a = np.ascontiguousarray(np.asarray(value, dtype=float).T)
    if a.size != fun.nnz_in(k):
        raise ValueError(
            f"{fun.name()}: input {fun.name_in(k)} has {a.size} values, expected "
            f"{fun.nnz_in(k)} ({fun.size1_in(k)} x {fun.size2_in(k)})"
        )
    return a


def numeric_call(fun: cs.Function, args: list[np.ndarray | float], n_out: int) -> list[np.ndarray]:
    """``fun``'s first ``n_out`` outputs (dense, ``(rows, cols)`` arrays) for its first
    ``len(args)`` inputs (the others zero); a CasADi error is raised as ``RuntimeError``."""
    inputs = [_column_major(fun, k, a) for k, a in enumerate(args)]
    outputs = [np.empty((fun.size2_out(k), fun.size1_out(k))) for k in range(n_out)]
    for k in range(n_out):
        if fun.nnz_out(k) != fun.numel_out(k):
            raise ValueError(f"{fun.name()}: output {fun.name_out(k)} is not dense")
    buf, run = fun.buffer()
    for k, a in enumerate(inputs):
        buf.set_arg(k, memoryview(a))
    for k, a in enumerate(outputs):
        buf.set_res(k, memoryview(a))
    run()
    return [a.T for a in outputs]


def mapped_call(
    fun: cs.Function, args: list[np.ndarray], n_out: int, cache: dict, label: object
) -> list[np.ndarray]:
    """``fun`` at ``n`` points at once: ``args`` are ``(rows, n)`` arrays (a column per
    point) or vectors shared by all points; the first ``n_out`` outputs as ``(rows, n)``
    arrays. The mapped function is kept in ``cache`` under ``(label, n)``."""
    n = max(np.shape(a)[1] for a in args if np.ndim(a) == 2)
    key = (label, n)
    if key not in cache:
        cache[key] = fun.map(n)
    columns = [a if np.ndim(a) == 2 else np.repeat(np.reshape(a, (-1, 1)), n, 1) for a in args]
    return numeric_call(cache[key], columns, n_out)


def symbolic_call(fun: cs.Function, args: list[cs.MX], n_out: int) -> list[cs.MX]:
    """The same call as :func:`numeric_call` on MX arguments, for composing functions."""
    out = fun.call(dict(zip(fun.name_in(), args)))
    return [out[name] for name in fun.name_out()[:n_out]]


def on_grid(fun: cs.Function, w: np.ndarray, p: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``fun(w[:, j], p, t[j])`` for every time ``j``, an array ``(outputs, len(t))``.

    One call per time, with the buffers pointed at rows of numpy arrays (rather than a map
    over the grid, whose input patterns repeat ``p`` at every time)."""
    columns = np.ascontiguousarray(w.T, dtype=float)  # row j: the solution at t[j]
    params = _column_major(fun, 1, p)
    now = np.zeros(1)
    out = np.empty((t.size, fun.nnz_out(0)))
    buf, run = fun.buffer()
    buf.set_arg(1, memoryview(params))
    buf.set_arg(2, memoryview(now))
    for j in range(t.size):
        buf.set_arg(0, memoryview(columns[j]))
        buf.set_res(0, memoryview(out[j]))
        now[0] = t[j]
        run()
    return out.T
