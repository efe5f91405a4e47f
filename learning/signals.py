"""Position, velocity and acceleration from quantized encoder positions.

Learning a constitutive law of a drive needs the coordinates ``q`` and their derivatives
``q'`` and ``q''``, but an incremental encoder measures only ``q`` rounded to its step ``s``.
Plain finite differences amplify that rounding noise; :func:`reconstruct` instead fits
polynomials over a sliding window (Savitzky-Golay, ``scipy.signal.savgol_filter``), as in
drive-identification practice (Van der Linden; the hybrid-structured-networks servo study):

* a cubic ``p(l) = c0 + c1 l + c2 l^2 + c3 l^3`` is fitted by least squares to the ``w``
  samples ``q[k+l]``, ``l = -(w-1)/2 .. (w-1)/2`` (``w`` odd) around each sample ``k``;
  then ``q_hat[k] = c0`` and ``q'_hat[k] = c1 / T`` (``T`` the sample time). At the record's
  ends one cubic fitted to the first (last) ``w`` samples is evaluated instead;
* two passes: ``q'`` is the fit's derivative of ``q`` with window ``w1``, and ``q''`` is the
  fit's derivative of that ``q'`` with window ``w2`` (not the fit's second derivative of
  ``q``). The study reports about 30 % smaller acceleration errors than one fit.

The window comes from the data. Rounding to the step ``s`` adds noise of variance ``s^2/12``;
taken white over ``[0, fs/2]`` (fair when the motion crosses many steps), its one-sided
power spectral density is the floor ``F = s^2 / 12 / (fs / 2)``. The position's PSD ``P(f)``
is estimated by Welch's method (``scipy.signal.welch``: Hann segments of
``max(256, n // 8)`` samples, at most ``n - 1``, half overlapping) applied to the first
difference ``q[k+1] - q[k]`` and divided by that difference's gain ``(2 sin(pi f T))^2``.
Encoder data often span 80-100 dB between the motion's peak and the floor, more than the
Hann window's leakage allows; the difference whitens the spectrum first (and removes a ramp's
trend). ``P`` is the motion's PSD plus ``F``. The cutoff ``f_c`` is the first frequency
above the PSD's peak where the motion's part ``P - F`` falls to the floor, ``P(f_c) = 2 F``
(interpolated linearly in ``log P`` between bins). A cubic fits about one period of a
harmonic in one window, so the window is that period in samples, ``w = fs / f_c``, rounded
to the nearest odd integer >= 5.

The window's bias. A cubic's derivative is exact for polynomials up to degree 4 (the
antisymmetric filter cancels the even one), so its error grows with the window like the
signal's fifth derivative: at frequency ``f`` the two passes attenuate the acceleration by
about ``(pi f w T)^4 / 252``, the same relative gain error on any parameter fitted from it
(an inertia), which no standard error of the fit includes (:mod:`learning.uncertainty`).
A shorter window (``fraction < 1``) cuts that by ``fraction^4`` but leaves more rounding
noise, whose power grows like ``w^-5`` and biases a parameter regressed on the
acceleration the other way. For a fit, compare the parameters from two windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
from scipy.signal import savgol_filter, welch

from acausal.errors import OptionError

ORDER = 3  # the polynomial's degree: cubic
MIN_WINDOW = ORDER + 2  # the smallest odd window that over-determines a cubic
MIN_SPECTRUM_SAMPLES = 64  # fewer samples give no useful spectrum to choose a window from
UNIFORM_RTOL = 1e-3  # sample-time jitter tolerated, relative to the mean sample time


@dataclass(frozen=True, eq=False)
class Reconstruction:
    """Smoothed position ``q``, velocity ``qd`` and acceleration ``qdd`` at the times ``t``.

    ``window``, ``window2``: the two passes' windows (samples); ``step``: the encoder step
    (given or estimated); ``floor``: the quantization noise's PSD ``step^2 / 12 / (fs / 2)``;
    ``frequencies`` (Hz, DC excluded), ``psd``: the position's PSD (Welch, see the module);
    ``cutoff``: the frequency (Hz) where the motion's PSD falls to the floor, None when it
    does not (possible with an explicit window).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    window: int
    window2: int
    step: float
    floor: float
    cutoff: float | None
    frequencies: np.ndarray
    psd: np.ndarray

    def plot(self, ax: Any = None) -> Any:
        """Draw the position's PSD, the quantization floor and the cutoff (needs matplotlib)."""
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Reconstruction.plot needs matplotlib: pip install matplotlib"
            ) from exc
        if ax is None:
            _, ax = plt.subplots(figsize=(8, 4.5))
        ax.semilogy(self.frequencies, self.psd, label="position PSD (Welch)")
        ax.axhline(self.floor, color="k", ls="--", label=f"quantization floor (step {self.step:g})")
        if self.cutoff is not None:
            ax.axvline(self.cutoff, color="r", ls=":", label=f"cutoff {self.cutoff:.3g} Hz")
        ax.set_xlabel("frequency [Hz]")
        ax.set_ylabel("PSD [unit^2/Hz]")
        ax.set_title(f"windows {self.window} / {self.window2} samples")
        ax.legend()
        ax.grid(True, alpha=0.3)
        return ax


def reconstruct(
    t: Any,
    position: Any,
    step: float | None = None,
    window: int | None = None,
    fraction: float = 1.0,
    window2: int | None = None,
) -> Reconstruction:
    """Position, velocity and acceleration from uniformly sampled, quantized positions.

    ``step``: the encoder step; when None, the smallest gap between distinct position values
    (gaps below ``1e-9`` of the positions' range count as round-off), which is the step as
    soon as the record holds two adjacent encoder counts; motion so fast that it skips counts
    and never comes back to them gives a multiple of the step: pass ``step=`` then.
    ``window``: the first pass's window (odd, >= 5); when None, the spectrum's (see the
    module) times ``fraction``: ``w1 = odd(fraction * fs / f_c)``. ``fraction=0.6`` is the
    study's recommendation for data that train a model (the smaller window keeps more of
    the signal, noisier); 1.0 gives the reconstruction closest to the true derivatives.
    ``window2``: the second pass's window, ``w1`` when None. Raises
    :class:`~acausal.errors.OptionError` naming the argument on bad input.
    """
    t, x = _column("t", t), _column("position", position)
    if t.size != x.size:
        raise OptionError(f"reconstruct: t has {t.size} samples, position {x.size}")
    dt = _sample_time(t)
    step = _step(x) if step is None else _positive("step", step)
    floor = step**2 / 12.0 / (0.5 / dt)
    freqs, psd = _spectrum(x, dt)
    cutoff = _cutoff(freqs, psd, floor)
    if window is None:
        w1 = _window_from_data(x.size, cutoff, dt, fraction)
    elif fraction != 1.0:
        raise OptionError("reconstruct: fraction= scales the data-chosen window; omit window=")
    else:
        w1 = _checked_window("window", window, x.size)
    w2 = _checked_window("window2", w1 if window2 is None else window2, x.size)
    qd = savgol_filter(x, w1, ORDER, deriv=1, delta=dt)
    return Reconstruction(
        t=t,
        q=savgol_filter(x, w1, ORDER),
        qd=qd,
        qdd=savgol_filter(qd, w2, ORDER, deriv=1, delta=dt),
        window=w1,
        window2=w2,
        step=step,
        floor=floor,
        cutoff=cutoff,
        frequencies=freqs,
        psd=psd,
    )


def relative_mae(estimate: Any, truth: Any) -> float:
    """The mean absolute error relative to the truth's mean absolute value,
    ``mean(|estimate - truth|) / mean(|truth|)`` (the study's measure of reconstructions)."""
    e, r = _column("estimate", estimate, "relative_mae"), _column("truth", truth, "relative_mae")
    if e.shape != r.shape:
        raise OptionError(f"relative_mae: estimate has {e.size} samples, truth {r.size}")
    scale = np.mean(np.abs(r))
    if scale == 0.0:
        raise OptionError("relative_mae: truth is zero everywhere")
    return float(np.mean(np.abs(e - r)) / scale)


def _column(name: str, values: Any, where: str = "reconstruct") -> np.ndarray:
    """``values`` as a 1-D float array of finite numbers."""
    try:
        a = np.array(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{where}: {name} must be a 1-D array of numbers") from exc
    if a.ndim != 1:
        raise OptionError(f"{where}: {name} must be 1-D, got shape {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise OptionError(
            f"{where}: {name} has {bad.size} NaN/inf samples (first at index {bad[0]})"
        )
    return a


def _sample_time(t: np.ndarray) -> float:
    """The uniform sample time of increasing times ``t``."""
    if t.size < MIN_WINDOW:
        raise OptionError(f"reconstruct: t has {t.size} samples; a cubic fit needs {MIN_WINDOW}")
    steps = np.diff(t)
    back = np.flatnonzero(steps <= 0.0)
    if back.size:
        k = back[0]
        raise OptionError(f"reconstruct: t is not increasing at index {k + 1} (t = {t[k + 1]:g})")
    dt = (t[-1] - t[0]) / (t.size - 1)
    off = np.flatnonzero(np.abs(steps - dt) > UNIFORM_RTOL * dt)
    if off.size:
        k = off[0]
        raise OptionError(
            f"reconstruct: t is not uniformly sampled: t[{k + 1}] - t[{k}] = {steps[k]:g}, "
            f"mean sample time {dt:g}"
        )
    return float(dt)


def _positive(name: str, value: float) -> float:
    """``value`` if it is a finite number > 0."""
    if isinstance(value, bool) or not (
        isinstance(value, Real) and np.isfinite(value) and value > 0
    ):
        raise OptionError(f"reconstruct: {name}={value!r} must be a positive number")
    return float(value)


def _step(x: np.ndarray) -> float:
    """The smallest gap between distinct values of ``x``, ignoring round-off."""
    gaps = np.diff(np.unique(x))
    gaps = gaps[gaps > 1e-9 * (x.max() - x.min())]
    if not gaps.size:
        raise OptionError("reconstruct: position is constant; nothing to reconstruct")
    return float(gaps.min())


def _spectrum(x: np.ndarray, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The PSD of ``x`` (DC excluded) by Welch's method on its first difference, divided by
    the difference's gain ``(2 sin(pi f dt))^2``."""
    d = np.diff(x)
    freqs, psd = welch(d, fs=1.0 / dt, nperseg=min(d.size, max(256, x.size // 8)))
    return freqs[1:], psd[1:] / (2.0 * np.sin(np.pi * freqs[1:] * dt)) ** 2


def _cutoff(freqs: np.ndarray, psd: np.ndarray, floor: float) -> float | None:
    """The first frequency above the PSD's peak where ``psd`` falls to ``2 floor`` (the
    motion's PSD = floor), interpolated in ``log psd``; None if it never does or if even
    the peak is below."""
    peak = int(np.argmax(psd))
    below = np.flatnonzero(psd[peak:] <= 2.0 * floor)
    if not below.size or below[0] == 0:
        return None
    k = peak + int(below[0])
    lo, hi = np.log(psd[k - 1]), np.log(psd[k])
    share = (lo - np.log(2.0 * floor)) / (lo - hi)
    return float(freqs[k - 1] + share * (freqs[k] - freqs[k - 1]))


def _window_from_data(n: int, cutoff: float | None, dt: float, fraction: float) -> int:
    """``fraction`` of the cutoff's period in samples, rounded to the nearest odd >= 5. The
    cutoff lies above the spectrum's first bin ``1 / (nperseg dt)``, so the window is never
    longer than the record."""
    if not (isinstance(fraction, Real) and 0.0 < fraction <= 1.0):
        raise OptionError(f"reconstruct: fraction={fraction!r} must be in (0, 1]")
    if n < MIN_SPECTRUM_SAMPLES:
        raise OptionError(
            f"reconstruct: position has {n} samples; choosing the window from the spectrum "
            f"needs {MIN_SPECTRUM_SAMPLES} (or pass window=)"
        )
    if cutoff is None:
        raise OptionError(
            "reconstruct: the position's PSD does not fall from above the quantization floor "
            "to it: are the positions quantized (pass the encoder's step=), do they move "
            "many steps? or pass window="
        )
    return max(MIN_WINDOW, 2 * int(np.floor(fraction / (cutoff * dt) / 2.0)) + 1)


def _checked_window(name: str, w: Any, n: int) -> int:
    """``w`` if it is an odd integer >= 5 no longer than the record."""
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < MIN_WINDOW or w % 2 == 0:
        raise OptionError(f"reconstruct: {name}={w!r} must be an odd integer >= {MIN_WINDOW}")
    if w > n:
        raise OptionError(f"reconstruct: {name}={w} is longer than the record ({n} samples)")
    return int(w)
