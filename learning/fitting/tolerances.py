"""Simulation tolerances for a fit, when not given, from the noise of the data.

The rule (:func:`tolerance_rule`): with ``sigma_j`` the noise of output column ``j``
(:func:`noise_level`), ``a_j = max |ym_j|`` its magnitude and ``nu = min_j sigma_j / a_j``
the relative noise of the least noisy column,

    rtol = clip(1e-4 nu, 1e-8, 1e-6),    atol = 1e-2 rtol min_j a_j.

Why: a systematic error ``e`` in the simulated outputs biases the parameters by about what
``e`` in the data would, while the noise spreads them by about ``sigma / sqrt(m)``
(``m`` samples); IDAS bounds the local error by ``rtol |y| + atol``, and its global error
is commonly 10 to 100 times that. With ``rtol |y| <= 1e-4 sigma`` the bias stays near a
hundredth of the spread or less for up to ``1e4`` samples per output. ``atol``, the only
control on states near 0, is a hundredth of ``rtol`` at the outputs' size. The bounds:
``1e-6`` (:func:`solvers.simulate`'s default) keeps IDAS's forward sensitivities, which are
error-controlled with the same tolerances, accurate enough for Gauss-Newton steps however
noisy the data; ``1e-8`` (the tightest) is as precise as noise-free data of a few hundred
samples need, at a few times the cost of ``1e-6``. ``atol`` acts on the states: when they
are much smaller than the measured outputs, give ``atol=`` yourself.

The data's noise estimate is an upper bound: a rough but noise-free output (driven by a
noisy measured input) looks noisy. So after the optimizer stops, the rule is applied to the
noise the fitted model leaves (the residuals' RMS per column,
:meth:`learning.fitting.objective.Objective.refine`),
and when that asks for an ``rtol`` over 3 times tighter the fit runs again from its result
at those tolerances (collocation: its result is simulated again).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from acausal.errors import OptionError

NOISE_FRACTION = 1e-4  # rtol / relative noise
ATOL_FRACTION = 1e-2  # atol / (rtol x the outputs' smallest magnitude)
RTOL_BOUNDS = (1e-8, 1e-6)
NOISE_ORDERS = 6  # difference orders tried by noise_level
GRID_SHARE = 0.9  # the share of nonzero differences on a grid that makes data quantized
GRID_TOLERANCE = 1e-3  # distance of a difference / step from an integer still on the grid


def noise_level(y: np.ndarray) -> float:
    """A robust estimate of the white-noise standard deviation in samples ``y`` of a smooth
    signal (uniformly sampled; non-finite samples left out): the larger of the difference
    estimate and, for quantized data, the rounding noise ``q / sqrt(12)``.

    Differences: the ``k``-th differences of white noise ``sigma`` have standard deviation
    ``sigma sqrt(C(2k, k))``, while a smooth signal's shrink like ``h^k``: for ``k = 1..6`` the
    median absolute deviation of ``diff(y, k)`` (times 1.4826, the normal's factor; robust
    to a few kinks such as a step's) divided by ``sqrt(C(2k, k))`` estimates ``sigma`` plus
    what is left of the signal, and the smallest estimate is taken. Within about +-40 % for
    100 samples of noise. For noise-free data it is what the differences leave of the
    signal: ``2e-8`` of its size at 50 samples per period of a sine, ``2e-5`` at 20, more
    for a rough signal (an upper bound, see :meth:`~learning.fitting.objective.Objective.refine`).

    Quantization (:func:`quantization_step`): encoder data sit on a grid of step ``q``, and
    when the motion moves less than a step per sample most differences are exactly 0, so
    the medians above read 0 (or round-off, 1e-16). Rounding to the grid is an error
    uniform on ``[-q/2, q/2]``, of standard deviation ``q / sqrt(12)``, so that is the
    noise's floor whenever a grid is found."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    estimates = []
    for k in range(1, NOISE_ORDERS + 1):
        if y.size < k + 3:
            break
        d = np.diff(y, k)
        mad = float(np.median(np.abs(d - np.median(d))))
        estimates.append(1.4826 * mad / np.sqrt(comb(2 * k, k)))
    return max(min(estimates, default=0.0), quantization_step(y) / np.sqrt(12.0))


def quantization_step(y: np.ndarray) -> float:
    """The grid step ``q`` that the samples ``y`` sit on, 0 when they sit on none.

    ``q`` is the smallest first difference ``|y[k+1] - y[k]|`` above round-off (``1e-9``
    of the range); ``y`` is on its grid when :data:`GRID_SHARE` of the nonzero differences
    are integer multiples of ``q`` (within :data:`GRID_TOLERANCE` of one) and the
    differences take two or more distinct multiples (0 included). The second condition
    keeps an exact ramp (every difference the same) and a single step (one nonzero
    difference) off the grid; a noisy or a smooth float signal fails the first (its
    differences' ratios to the smallest are no integers)."""
    y = np.asarray(y, dtype=float)
    y = y[np.isfinite(y)]
    if y.size < 3:
        return 0.0
    d = np.diff(y)
    moved = np.abs(d[np.abs(d) > 1e-9 * float(np.ptp(y))])
    if moved.size < 2:
        return 0.0
    q = float(moved.min())
    ratios = moved / q
    on_grid = np.abs(ratios - np.round(ratios)) <= GRID_TOLERANCE
    multiples = set(np.round(ratios[on_grid]).astype(int)) | ({0} if moved.size < d.size else set())
    return q if on_grid.mean() >= GRID_SHARE and len(multiples) >= 2 else 0.0


@dataclass(frozen=True)
class Tolerances:
    """IDAS's ``rtol`` and ``atol`` for a fit and where they came from: ``source`` is
    ``"given"``, ``"data"`` (the rule on the data's noise) or ``"residuals"`` (the rule on
    the noise the fitted model leaves); ``noise`` is the relative noise the rule used."""

    rtol: float
    atol: float
    noise: float | None
    source: str

    def __str__(self) -> str:
        tol = f"rtol {self.rtol:.3g}, atol {self.atol:.3g}"
        if self.source == "given":
            return f"simulated at {tol} (given)"
        where = "the data" if self.source == "data" else "the fit's residuals"
        return (
            f"simulated at {tol} (chosen from {where}: relative noise {self.noise:.3g}; "
            "give rtol=/atol= to override)"
        )


def tolerance_rule(
    noise: float, magnitude: float, rtol: float | None, atol: float | None, source: str
) -> Tolerances:
    """``rtol = clip(1e-4 noise, 1e-8, 1e-6)``, ``atol = 1e-2 rtol magnitude`` (see the
    module docstring) for a relative ``noise`` and the outputs' smallest ``magnitude``; a
    given ``rtol`` or ``atol`` is kept."""
    for what, value in (("rtol", rtol), ("atol", atol)):
        if value is not None and not (isinstance(value, int | float) and 0 < value < np.inf):
            raise OptionError(f"fit: {what}={value!r} must be a positive tolerance or None")
    if rtol is not None and atol is not None:
        return Tolerances(float(rtol), float(atol), None, "given")
    chosen = float(np.clip(NOISE_FRACTION * noise, *RTOL_BOUNDS)) if rtol is None else rtol
    absolute = float(atol) if atol is not None else ATOL_FRACTION * chosen * magnitude
    return Tolerances(float(chosen), absolute, noise, source)
