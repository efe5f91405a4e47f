"""Parameter designs for batches of simulations: full grids, and samples of ``n`` members
from a distribution per parameter - uniform over a range, normal, or truncated normal (the
usual model of a component's tolerance) - drawn as Latin hypercubes, quasi- or
pseudo-random samples; and tolerances around a model's values. A design is ``{parameter
name: array of one value per member}``, the form :func:`solvers.simulate_many` takes.

Every method draws points ``u`` in the unit cube, one coordinate per parameter, and maps
each coordinate through the parameter's inverse distribution function, ``x = F^-1(u)``
(inverse transform sampling): uniform ``u`` give ``x`` distributed as ``F``, and the
strata of a Latin hypercube in ``u`` are strata of equal probability in ``x``."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import acausal as ac
from acausal.errors import OptionError, unknown_name

from .simulate import as_model

METHODS = ("lhs", "random", "sobol", "halton")
DISTRIBUTIONS = ("uniform", "normal", "truncnorm")


@dataclass(frozen=True)
class Uniform:
    """Uniform on ``[low, high]``: ``F^-1(u) = low + u (high - low)``. A design's range
    ``(low, high)`` is this distribution."""

    low: float
    high: float

    def __post_init__(self) -> None:
        _finite(self, "low", "high")
        if not self.low <= self.high:
            raise OptionError(
                f"{self}: low = {self.low:g} must be <= high = {self.high:g}; swap them"
            )

    @property
    def dist(self) -> Any:
        """The same distribution as a frozen scipy.stats one (``.mean()``, ``.std()``,
        ``.cdf(x)``, ...)."""
        from scipy import stats  # on use: a third of `import solvers` otherwise

        return stats.uniform(loc=self.low, scale=self.high - self.low)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """The inverse distribution function at ``u`` in ``[0, 1]``."""
        return self.low + u * (self.high - self.low)


@dataclass(frozen=True)
class Normal:
    """Normal with mean ``mean`` and standard deviation ``sd > 0``: ``F^-1(u) = mean + sd
    Phi^-1(u)``, ``Phi`` the standard normal distribution function (``u`` is kept inside
    ``(0, 1)``, so that no member is infinite)."""

    mean: float
    sd: float

    def __post_init__(self) -> None:
        _finite(self, "mean", "sd")
        _positive_sd(self)

    @property
    def dist(self) -> Any:
        from scipy import stats

        return stats.norm(loc=self.mean, scale=self.sd)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        return self.dist.ppf(np.clip(u, _TINY, 1.0 - _EPS))


@dataclass(frozen=True)
class TruncatedNormal:
    """The normal of ``mean`` and ``sd`` restricted to ``[low, high]`` (``low < high``, either
    may be infinite): density ``phi((x - mean) / sd) / (sd (Phi(b) - Phi(a)))`` on it, ``a =
    (low - mean) / sd``, ``b = (high - mean) / sd``; ``F^-1(u) = mean + sd Phi^-1(Phi(a) + u
    (Phi(b) - Phi(a)))`` (scipy.stats.truncnorm). Its standard deviation is less than ``sd``:
    0.9866 ``sd`` for bounds at ``mean +- 3 sd``. :meth:`tolerance` makes the usual model of
    a part's tolerance."""

    mean: float
    sd: float
    low: float
    high: float

    def __post_init__(self) -> None:
        _finite(self, "mean", "sd", "low", "high")
        _positive_sd(self)
        if not self.low < self.high:
            raise OptionError(
                f"{self}: the bounds low = {self.low:g} and high = {self.high:g} must satisfy "
                "low < high (one may be infinite); swap them or widen the interval"
            )

    @classmethod
    def tolerance(cls, value: float, tol: float, sigmas: float = 3.0) -> TruncatedNormal:
        """A part of nominal ``value`` within ``+-tol`` (relative, 0.05 for 5 %) taken as
        ``sigmas`` standard deviations: ``mean = value``, ``sd = |value| tol / sigmas``,
        bounds ``value (1 -+ tol)``."""
        _tolerance_args(value, tol, sigmas)
        low, high = sorted((value * (1 - tol), value * (1 + tol)))
        return cls(value, abs(value) * tol / sigmas, low, high)

    @property
    def dist(self) -> Any:
        from scipy import stats

        a, b = (self.low - self.mean) / self.sd, (self.high - self.mean) / self.sd
        return stats.truncnorm(a, b, loc=self.mean, scale=self.sd)

    def ppf(self, u: np.ndarray) -> np.ndarray:
        return np.clip(self.dist.ppf(u), self.low, self.high)


Distribution = Uniform | Normal | TruncatedNormal
_TINY, _EPS = np.finfo(float).tiny, np.finfo(float).epsneg


def _finite(spec: Distribution, *fields: str) -> None:
    """Each of ``fields`` of ``spec`` a number, finite unless it is a truncation bound."""
    for name in fields:
        value = getattr(spec, name)
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            raise OptionError(f"{type(spec).__name__}: {name} must be a number, got {value!r}")
        if not (
            np.isfinite(value) or (name in ("low", "high") and isinstance(spec, TruncatedNormal))
        ):
            raise OptionError(f"{spec}: {name} = {value} must be finite")


def _positive_sd(spec: Normal | TruncatedNormal) -> None:
    if not spec.sd > 0:
        raise OptionError(
            f"{spec}: the standard deviation sd = {spec.sd:g} must be > 0 (a fixed value "
            "is no distribution: leave the parameter out of the design)"
        )


def _tolerance_args(value: float, tol: float, sigmas: float) -> None:
    if not (np.isfinite(tol) and tol > 0):
        raise OptionError(f"the tolerance tol = {tol!r} must be > 0 (0.05 for +-5 %)")
    _below_one(value, tol)
    if not (np.isfinite(sigmas) and sigmas > 0):
        raise OptionError(f"sigmas = {sigmas!r} must be > 0 (3: the tolerance is 3 sd)")
    if value == 0:
        raise OptionError("a relative tolerance of the value 0 is no interval; give a range")


def _below_one(value: float, tol: float) -> None:
    """A relative tolerance ``tol < 1``: ``value (1 -+ tol)`` keeps the value's sign."""
    if tol >= 1:
        raise OptionError(
            f"the tolerance tol = {tol:g} must be < 1 (0.05 for +-5 %): value (1 -+ tol) = "
            f"({value * (1 - tol):g}, {value * (1 + tol):g}) reaches or crosses zero, members "
            "of the opposite sign to the part's; for a parameter that may change sign give "
            "its range (low, high) or a distribution in the design directly"
        )


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
    ranges: Mapping[str, tuple[float, float] | Distribution],
    n: int,
    method: str = "lhs",
    seed: int | np.random.Generator | None = 0,
) -> dict[str, np.ndarray]:
    """``n`` members, each parameter drawn from its entry of ``ranges``: a range ``(low,
    high)`` (uniform over it), :class:`Uniform`, :class:`Normal` or
    :class:`TruncatedNormal` (e.g. ``{"R1.R": TruncatedNormal.tolerance(2.0, 0.05),
    "C1.C": Normal(1.0, 0.02), "L1.L": (0.9, 1.1)}``). The points in the unit cube
    (module docstring) come from ``method``: ``"lhs"`` a Latin hypercube (each coordinate's
    ``[0, 1)`` cut into ``n`` strata, one member in each: of each parameter, one member in
    each ``1/n`` of its probability), ``"random"`` plain Monte Carlo (independent uniform
    draws), ``"sobol"``/``"halton"`` scrambled low-discrepancy sequences (scipy.stats.qmc).
    ``seed``, a number or a numpy Generator, makes it repeatable."""
    if method not in METHODS:
        raise OptionError(
            f"sample_design: method={method!r} is not one of {', '.join(map(repr, METHODS))}"
        )
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise OptionError(f"sample_design: n={n!r} must be a positive number of members")
    if not ranges:
        raise OptionError(
            "sample_design: give {parameter name: (low, high) or a distribution}, e.g. "
            "{'R1.R': (1.8, 2.2)} or {'R1.R': Normal(2.0, 0.03)}"
        )
    specs = [_spec(name, r) for name, r in ranges.items()]
    d = len(specs)
    from scipy.stats import qmc

    if method == "random":
        unit = np.random.default_rng(seed).random((n, d))
    elif method == "lhs":
        unit = qmc.LatinHypercube(d=d, seed=seed).random(n)
    elif method == "sobol":
        unit = qmc.Sobol(d=d, seed=seed).random(n)
    else:
        unit = qmc.Halton(d=d, seed=seed).random(n)
    return {name: spec.ppf(unit[:, j]) for j, (name, spec) in enumerate(zip(ranges, specs))}


def _spec(name: str, r: object) -> Distribution:
    """A design entry as a distribution: a range ``(low, high)`` is a :class:`Uniform`."""
    if isinstance(r, Uniform | Normal | TruncatedNormal):
        return r
    try:
        low, high = (float(v) for v in r)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise OptionError(
            f"sample_design: the design of {name} must be (low, high), Uniform, Normal or "
            f"TruncatedNormal (numbers), got {r!r:.60}"
        ) from None
    if not (np.isfinite(low) and np.isfinite(high) and low <= high):
        raise OptionError(
            f"sample_design: the range of {name} = ({low}, {high}) must be finite, low <= high"
        )
    return Uniform(low, high)


def tolerance_ranges(
    model: ac.Model | ac.System,
    tolerance: float | Mapping[str, float],
    names: Sequence[str] | None = None,
    distribution: str = "uniform",
    sigmas: float = 3.0,
) -> dict[str, tuple[float, float] | Distribution]:
    """A design's entries for parts within a relative tolerance ``tol`` (0.05 for +-5 %)
    of the model's value ``v`` of each parameter: ``tolerance`` one ``tol`` for each of
    ``names``, or ``{name: tol}`` one per parameter. ``distribution``:

    * ``"uniform"``: the range ``(v (1 - tol), v (1 + tol))``;
    * ``"normal"``: :class:`Normal` with ``mean = v``, ``sd = |v| tol / sigmas``;
    * ``"truncnorm"``: that normal truncated to the range (:meth:`TruncatedNormal.tolerance`:
      a 5 % resistor as 3 sigma within +-5 %).

    ``tol`` must be in ``[0, 1)``: with ``tol >= 1`` the range ``v (1 -+ tol)`` reaches or
    crosses zero, so members would have the opposite sign of the part's value (a negative
    resistance) for every distribution. Below 1 the uniform and truncated ranges keep the
    sign; a normal member has the opposite sign with probability ``Phi(-sigmas / tol)``
    (at most 0.13 % for ``sigmas = 3``). A parameter that may change sign (an offset, a
    phase) takes its range ``(low, high)`` or a distribution in the design directly."""
    if distribution not in DISTRIBUTIONS:
        raise OptionError(
            f"tolerance_ranges: distribution={distribution!r} is not one of "
            f"{', '.join(map(repr, DISTRIBUTIONS))}"
        )
    defaults = as_model(model).parameters
    tol = (
        dict(tolerance)
        if isinstance(tolerance, Mapping)
        else {n: float(tolerance) for n in (names or ())}
    )
    if not tol:
        raise OptionError("tolerance_ranges: name the parameters (names=[...] or {name: tol})")
    out: dict[str, tuple[float, float] | Distribution] = {}
    for n, t in tol.items():
        if n not in defaults:
            raise unknown_name("parameter", n, defaults)
        if not (np.isfinite(t) and t >= 0):
            raise OptionError(f"tolerance_ranges: the tolerance of {n} = {t!r} must be >= 0")
        v = defaults[n]
        try:
            if distribution == "uniform":
                _below_one(v, t)
                out[n] = tuple(sorted((v * (1 - t), v * (1 + t))))
            elif distribution == "normal":
                _tolerance_args(v, t, sigmas)
                out[n] = Normal(v, abs(v) * t / sigmas)
            else:
                out[n] = TruncatedNormal.tolerance(v, t, sigmas)
        except OptionError as exc:
            raise OptionError(f"tolerance_ranges: {n} = {v:g}: {exc}") from None
    return out
