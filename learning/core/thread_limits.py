"""``blas_threads(n)``: numpy's and scipy's OpenBLAS limited to ``n`` threads inside a block;
``thread_count``: the CasADi threads a trainer was asked for.

The least-squares fits factor small dense matrices (an SVD of the Jacobian, columns = the
fitted parameters) hundreds of times. OpenBLAS's worker threads bring nothing at that size,
and on a loaded machine (more busy threads than cores) they spin against the other work:
measured on a 2-core machine, one SVD of scipy's trust-region method took about 0.5 s
instead of 3 ms, a fit 2-7 min instead of seconds. ``OPENBLAS_NUM_THREADS`` cannot help
once numpy is imported (OpenBLAS reads it when it loads), so the count is set through the
libraries' own ``set_num_threads`` and restored on exit. Nothing happens where numpy or
scipy use another BLAS (MKL, a system library): then set the library's own variable.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import scipy

from acausal.errors import OptionError
from solvers import available_cores

_SUFFIXES = ("", "64_")  # scipy's 32-bit-integer build, numpy's 64-bit-integer one


@cache
def _openblas() -> tuple[tuple[ctypes.CDLL, str], ...]:
    """The OpenBLAS libraries bundled with the installed numpy and scipy wheels, each with
    its symbol suffix."""
    found = []
    for package in (np, scipy):
        folder = Path(package.__file__).parents[1] / f"{package.__name__}.libs"
        for path in sorted(folder.glob("libscipy_openblas*")):
            lib = ctypes.CDLL(str(path))
            for suffix in _SUFFIXES:
                if hasattr(lib, f"scipy_openblas_set_num_threads{suffix}"):
                    found.append((lib, suffix))
    return tuple(found)


@contextmanager
def blas_threads(n: int = 1) -> Iterator[None]:
    """Inside the block, numpy's and scipy's OpenBLAS use at most ``n`` threads (see the
    module docstring); the previous counts come back on exit."""
    before = []
    for lib, suffix in _openblas():
        before.append((lib, suffix, getattr(lib, f"scipy_openblas_get_num_threads{suffix}")()))
        getattr(lib, f"scipy_openblas_set_num_threads{suffix}")(int(n))
    try:
        yield
    finally:
        for lib, suffix, count in before:
            getattr(lib, f"scipy_openblas_set_num_threads{suffix}")(count)


def thread_count(caller: str, threads: int | None) -> int:
    """``threads`` checked (an int >= 1), or every core the process may use for None."""
    if threads is None:
        return available_cores()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise OptionError(
            f"{caller}: threads={threads!r} must be an int >= 1 (or None: every core)"
        )
    return threads
