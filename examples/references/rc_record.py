"""An RC circuit driven by a long sampled record, and its exact response.

For a piecewise-linear input ``u`` the RC equation ``tau v' = u - v`` has a closed form on
each sample interval ``[t_k, t_k+1]`` where ``u = u_k + b_k (t - t_k)``:

    v(t) = u(t) - b_k tau + (v_k - u_k + b_k tau) exp(-(t - t_k) / tau),

so the response to a rough record (a seeded random walk: a kink at every sample) is known
to rounding.
"""

from __future__ import annotations

import numpy as np

import acausal as ac
from components import electrical as el

R, C = 1.0, 0.1
TAU = R * C


def record(n: int, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    """``n`` samples of a random walk with a slow sine under it, over ``[0, t_end]``."""
    tk = np.linspace(0.0, t_end, n)
    walk = np.cumsum(np.random.default_rng(7).normal(0.0, 0.05, n))
    return tk, np.sin(2 * np.pi * 0.3 * tk) + walk


def rc(signal: object) -> ac.System:
    """The source ``V`` (voltage ``signal``) through ``R`` into ``C``."""
    s = ac.System("rc_record")
    src = el.SignalVoltage("V", v=signal)
    res = el.Resistor("R", R=R)
    cap = el.Capacitor("C", C=C, v0=0.0)
    gnd = el.Ground("G")
    s.connect(src.p, res.p)
    s.connect(res.n, cap.p)
    s.connect(cap.n, src.n, gnd.p)
    return s


def exact_response(tk: np.ndarray, uk: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The RC's exact response to the linear interpolation of ``(tk, uk)`` from v = 0."""
    h = np.diff(tk)
    b = np.diff(uk) / h
    v = np.zeros(tk.size)
    for k in range(tk.size - 1):  # the closed form from sample to sample
        v[k + 1] = uk[k + 1] - b[k] * TAU + (v[k] - uk[k] + b[k] * TAU) * np.exp(-h[k] / TAU)
    k = np.clip(np.searchsorted(tk, t, side="right") - 1, 0, tk.size - 2)
    s = t - tk[k]
    u = uk[k] + b[k] * s
    return u - b[k] * TAU + (v[k] - uk[k] + b[k] * TAU) * np.exp(-s / TAU)
