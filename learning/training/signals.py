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

The spectrum. Rounding to the step ``s`` adds noise of variance ``sigma^2 = s^2/12``;
taken white over ``[0, fs/2]`` (fair when the motion crosses many steps), its one-sided
power spectral density is the floor ``F = s^2 / 12 / (fs / 2)``. The position's PSD ``P(f)``
is estimated by Welch's method (``scipy.signal.welch``: Hann segments of
``max(256, n // 8)`` samples, at most ``n - 1``, half overlapping) applied to the first
difference ``q[k+1] - q[k]`` and divided by that difference's gain ``(2 sin(pi f T))^2``.
Encoder data often span 80-100 dB between the motion's peak and the floor, more than the
Hann window's leakage allows; the difference whitens the spectrum first (and removes a ramp's
trend). ``P`` is the motion's PSD plus ``F``. The cutoff ``f_c`` is the first frequency
above the PSD's peak where the motion's part ``P - F`` falls to the floor, ``P(f_c) = 2 F``
(interpolated linearly in ``log P`` between bins): the band edge. The motion's PSD in the
band is estimated as ``S(f) = max(P(f) - F, 0)`` on the bins ``f < f_c`` (above, it is
below the floor and unknown).

The acceleration's two errors, for windows ``w1``, ``w2``. Each pass is a linear filter
with odd coefficients ``c_l`` (per second), so its response to ``exp(i omega t)`` is ``i
omega G_w(f)`` with the real gain ``G_w(f) = sum_l c_l sin(omega l T) / omega`` (``omega =
2 pi f``; ``G_w = 1 - (pi f w T)^4 / 504 + ...`` for a cubic, which differentiates degree-4
polynomials exactly).

* bias ``beta``: the acceleration ``a`` (variance ``sigma_a^2 = sum_f omega^4 S(f) df``)
  comes out as ``G_w1 G_w2 a``; its share along ``a`` falls short of 1 by ``beta = sum_f
  omega^4 S(f) (1 - G_w1(f) G_w2(f)) / sum_f omega^4 S(f)`` (about ``(pi f w T)^4 / 252``
  for one frequency ``f``);
* noise ``nu``: the rounding noise left in ``q''`` relative to the acceleration's power,
  ``nu = sigma^2 sum_k (c1 * c2)_k^2 / sigma_a^2`` (``c1 * c2`` the two passes' combined
  coefficients; by Parseval the floor times ``|omega^2 G_w1 G_w2|^2`` integrated over
  ``[0, fs/2]``).

What they do to a fitted parameter depends on where the acceleration enters. Where it is a
regressor (an inverse-dynamics loss ``tau = J q'' + ...``, as in a Lagrangian's inverse
loss), ``J_hat / J = (1 - beta) / ((1 - beta)^2 + nu)``, about ``1 + beta - nu``: the
attenuation makes the inertia larger, the noise (an error in the regressor) dilutes it.
Where it is the target, as in :func:`learning.fit_equations` (``r = F(x, u, p) - q''``),
``J_hat / J = 1 / (1 - beta)``: the noise adds variance only, the attenuation still biases
(measured on examples/identify_two_mass_servo.py's data, all parameters at once, states
exact: the motor's inertia off by about ``1.5 beta + 0.4 %`` for windows 7-21). No
standard error of a fit includes ``beta`` (:mod:`learning.optimization.uncertainty`). ``beta`` grows
with the window like ``w^4``, ``nu`` falls like ``w^-5``.

The default window: the odd ``w >= 5`` (both passes) that minimizes ``beta(w) + nu(w)``,
how far a regressor's fit can be off when the two do not cancel. For a target
(``fit_equations``) it keeps ``beta`` about as small as ``nu``, a noise that is a small
share of the acceleration's power; a shorter window (``fraction=``, ``window=``) lowers
the bias further for more variance. The scan stops once ``beta`` alone exceeds the best
sum. Asymptotically ``beta = (pi w T)^4 m8 / (252 m4)`` and ``nu = 1468.7 sigma^2 / ((2
pi)^4 w^5 T^4 m4)``, with the band's moments ``m_k = sum_f f^k S(f) df`` and ``1468.7 =
2^5 * 367545 / 8008``, where ``367545 / 8008 = int (k * k)^2`` for the continuous cubic
derivative kernel ``k(x) = (75 x - 105 x^3) / 8`` on the half-window ``[-1, 1]``.
The minimum is then where ``4 beta = 5 nu``:

    ``w^9 = 28915 sigma^2 / (pi^8 T^8 m8)``  (``28915 = 5 * 252 * 1468.7 / 64``),

the rounding noise against the band's eighth moment (``m4`` cancels). The exact sums are
used because at ``w = 7`` the asymptotic forms are 30-50 % off; the closed form lands
within one odd step of the scan. ``fraction=`` instead gives the study's rule, the period
of the band edge in samples times ``fraction``: ``w = odd(fraction * fs / f_c)``. Every
:class:`Reconstruction` reports its windows' ``bias`` and ``noise``.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
from scipy.signal import savgol_coeffs, savgol_filter, welch

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
    does not (possible with an explicit window). ``bias``, ``noise``: the acceleration's
    estimated relative attenuation ``beta`` and rounding-noise power ``nu`` for these windows
    (see the module for what they do to a fitted parameter), None without a cutoff.
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
    bias: float | None
    noise: float | None

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
        title = f"windows {self.window} / {self.window2} samples"
        if self.bias is not None:
            title += f": acceleration bias {self.bias:.2%}, noise {self.noise:.2%}"
        ax.set_title(title)
        ax.legend()
        ax.grid(True, alpha=0.3)
        return ax


def reconstruct(
    t: Any,
    position: Any,
    step: float | None = None,
    window: int | None = None,
    fraction: float | None = None,
    window2: int | None = None,
) -> Reconstruction:
    """Position, velocity and acceleration from uniformly sampled, quantized positions.

    ``step``: the encoder step; when None, the smallest gap between distinct position values
    (gaps below ``1e-9`` of the positions' range count as round-off), which is the step as
    soon as the record holds two adjacent encoder counts; motion so fast that it skips counts
    and never comes back to them gives a multiple of the step: pass ``step=`` then.
    ``window``: the first pass's window (odd, >= 5); when None, the one that minimizes the
    acceleration's bias plus noise as estimated from the spectrum (see the module), for
    fitting parameters. ``fraction``: instead, the study's window, the band edge's period
    times ``fraction``: ``w1 = odd(fraction * fs / f_c)`` (``fraction=0.6`` is its
    recommendation for data that train a model, noisier; 1.0 gives the reconstruction
    closest to the true derivatives). ``window2``: the second pass's window, ``w1`` when
    None. Raises :class:`~acausal.errors.OptionError` naming the argument on bad input.
    """
    t, x = _column("t", t), _column("position", position)
    if t.size != x.size:
        raise OptionError(f"reconstruct: t has {t.size} samples, position {x.size}")
    dt = _sample_time(t)
    step = _step(x) if step is None else _positive("step", step)
    floor = step**2 / 12.0 / (0.5 / dt)
    freqs, psd = _spectrum(x, dt)
    cutoff = _cutoff(freqs, psd, floor)
    band = None if cutoff is None else _Band.estimate(freqs, psd, floor, cutoff, step, dt)
    if window is None:
        _check_spectrum(x.size, cutoff)
        w1 = band.best_window(x.size) if fraction is None else _scaled_window(cutoff, dt, fraction)
    elif fraction is not None:
        raise OptionError("reconstruct: fraction= scales the spectrum's window; omit window=")
    else:
        w1 = _checked_window("window", window, x.size)
    w2 = _checked_window("window2", w1 if window2 is None else window2, x.size)
    bias, noise = (None, None) if band is None else band.errors(w1, w2)
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
        bias=bias,
        noise=noise,
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


@dataclass(frozen=True)
class _Band:
    """The motion's band as the spectrum shows it: angular frequencies ``omega`` of the bins
    below the cutoff, the acceleration's power per bin ``power = omega^4 S(f) df`` (``S =
    max(P - F, 0)``), the rounding noise's variance ``sigma2 = step^2 / 12`` and the sample
    time ``dt``."""

    omega: np.ndarray
    power: np.ndarray
    sigma2: float
    dt: float

    @classmethod
    def estimate(
        cls, freqs: np.ndarray, psd: np.ndarray, floor: float, cutoff: float, step: float, dt: float
    ) -> _Band:
        """The band of a spectrum (Welch's bins are uniform, the first at ``df``)."""
        inside = freqs < cutoff
        omega = 2.0 * np.pi * freqs[inside]
        power = omega**4 * np.maximum(psd[inside] - floor, 0.0) * freqs[0]
        return cls(omega, power, step**2 / 12.0, dt)

    def errors(self, w1: int, w2: int) -> tuple[float, float]:
        """``(beta, nu)`` of two passes with windows ``w1``, ``w2`` (see the module)."""
        (g1, c1), (g2, c2) = self._pass(w1), self._pass(w2)
        total = float(np.sum(self.power))
        beta = float(self.power @ (1.0 - g1 * g2)) / total
        nu = self.sigma2 * float(np.sum(np.convolve(c1, c2) ** 2)) / total
        return beta, nu

    def best_window(self, n: int) -> int:
        """The odd window from 5 to ``n`` minimizing ``beta + nu``; the scan stops once
        ``beta`` alone is no smaller than the best sum (``beta`` grows with the window)."""
        best, best_sum = MIN_WINDOW, np.inf
        for w in range(MIN_WINDOW, n + 1, 2):
            beta, nu = self.errors(w, w)
            if beta >= best_sum:
                break
            if beta + nu < best_sum:
                best, best_sum = w, beta + nu
        return best

    def _pass(self, w: int) -> tuple[np.ndarray, np.ndarray]:
        """One pass's gain ``G_w`` on the band and its coefficients ``c_l`` (per second)."""
        c = savgol_coeffs(w, ORDER, deriv=1, delta=self.dt, use="dot")
        lags = np.arange(w) - (w - 1) // 2
        return np.sin(np.outer(self.omega * self.dt, lags)) @ c / self.omega, c


def _check_spectrum(n: int, cutoff: float | None) -> None:
    """Raise unless the record is long enough and its spectrum has a cutoff to choose a
    window from."""
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


def _scaled_window(cutoff: float, dt: float, fraction: float) -> int:
    """``fraction`` of the cutoff's period in samples, rounded to the nearest odd >= 5. The
    cutoff lies above the spectrum's first bin ``1 / (nperseg dt)``, so the window is never
    longer than the record."""
    if isinstance(fraction, bool) or not (isinstance(fraction, Real) and 0.0 < fraction <= 1.0):
        raise OptionError(f"reconstruct: fraction={fraction!r} must be in (0, 1]")
    return max(MIN_WINDOW, 2 * int(np.floor(fraction / (cutoff * dt) / 2.0)) + 1)


def _checked_window(name: str, w: Any, n: int) -> int:
    """``w`` if it is an odd integer >= 5 no longer than the record."""
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < MIN_WINDOW or w % 2 == 0:
        raise OptionError(f"reconstruct: {name}={w!r} must be an odd integer >= {MIN_WINDOW}")
    if w > n:
        raise OptionError(f"reconstruct: {name}={w} is longer than the record ({n} samples)")
    return int(w)
