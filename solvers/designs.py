"""Parameter designs for batches of simulations: full grids, Latin hypercubes, quasi- and
pseudo-random samples over ranges, and ranges from relative tolerances around a model's
values. A design is ``{parameter name: array of one value per member}``, the form
:func:`solvers.simulate_many` takes."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.stats import qmc

import acausal as ac
from acausal.errors import OptionError, unknown_name

from .simulate import as_model

METHODS = ("lhs", "random", "sobol", "halton")


def grid_design(values: Mapping[str, Sequence[float]]) -> dict[str, np.ndarray]:
    """The full factorial design: every combination of the listed values, the last name
    varying fastest (``prod(len(v))`` members)."""
    if not values:
        raise OptionError("grid_design: give {parameter name: values}, e.g. {'R1.R': [1, 2]}")
    lists = {n: np.asarray(v, dtype=float).ravel() for n, v in values.items()}
    for n, v in lists.items():
        if v.size == 0:
            raise OptionError(f"grid_design: {n} has no values")
    rows = np.array(list(itertools.product(*lists.values())), dtype=float)
    return {n: rows[:, j].copy() for j, n in enumerate(lists)}


def sample_design(
    ranges: Mapping[str, tuple[float, float]],
    n: int,
    method: str = "lhs",
    seed: int | None = 0,
) -> dict[str, np.ndarray]:
    """``n`` members drawn uniformly in the box ``ranges`` (``{name: (low, high)}``):
    ``"lhs"`` a Latin hypercube (each range cut into ``n`` strata, one member in each),
    ``"random"`` plain Monte Carlo (independent uniform draws), ``"sobol"``/``"halton"``
    scrambled low-discrepancy sequences (scipy.stats.qmc); ``seed`` makes it repeatable."""
    if method not in METHODS:
        raise OptionError(
            f"sample_design: method={method!r} is not one of {', '.join(map(repr, METHODS))}"
        )
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise OptionError(f"sample_design: n={n!r} must be a positive number of members")
    if not ranges:
        raise OptionError("sample_design: give {parameter name: (low, high)}")
    lo, hi = np.array([_range(k, r) for k, r in ranges.items()], dtype=float).T
    d = len(lo)
    if method == "random":
        unit = np.random.default_rng(seed).random((n, d))
    elif method == "lhs":
        unit = qmc.LatinHypercube(d=d, seed=seed).random(n)
    elif method == "sobol":
        unit = qmc.Sobol(d=d, seed=seed).random(n)
    else:
        unit = qmc.Halton(d=d, seed=seed).random(n)
    values = lo + unit * (hi - lo)
    return {name: values[:, j].copy() for j, name in enumerate(ranges)}


def _range(name: str, r: object) -> tuple[float, float]:
    try:
        low, high = (float(v) for v in r)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise OptionError(f"the range of {name} must be (low, high), got {r!r:.60}") from None
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise OptionError(f"the range of {name} = ({low}, {high}) must be finite, low <= high")
    return low, high


def tolerance_ranges(
    model: ac.Model | ac.System,
    tolerance: float | Mapping[str, float],
    names: Sequence[str] | None = None,
) -> dict[str, tuple[float, float]]:
    """``{name: (v (1 - tol), v (1 + tol))}`` around the model's value ``v`` of each
    parameter: ``tolerance`` a relative tolerance (0.05 for +-5 %) for each of ``names``, or
    ``{name: tol}`` one per parameter."""
    defaults = as_model(model).parameters
    tol = (
        dict(tolerance)
        if isinstance(tolerance, Mapping)
        else {n: float(tolerance) for n in (names or ())}
    )
    if not tol:
        raise OptionError("tolerance_ranges: name the parameters (names=[...] or {name: tol})")
    out = {}
    for n, t in tol.items():
        if n not in defaults:
            raise unknown_name("parameter", n, defaults)
        if not (np.isfinite(t) and t >= 0):
            raise OptionError(f"tolerance_ranges: the tolerance of {n} = {t!r} must be >= 0")
        v = defaults[n]
        out[n] = tuple(sorted((v * (1 - t), v * (1 + t))))
    return out
