"""Plot helpers the identification examples share (matplotlib is optional: ``pip install
-e ".[plot]"``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

Curve = Callable[[np.ndarray], np.ndarray]


def pyplot() -> Any | None:
    """matplotlib's pyplot on the file-only Agg backend, or None (and a note) without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(plots skipped: pip install matplotlib)")
        return None
    return plt


def spectra(plt: Any, parts: Mapping[str, Any], titles: Mapping[str, str], path: Path) -> None:
    """Each reconstruction's spectrum with its cutoff (``Reconstruction.plot``), one panel
    per side, titled by ``titles``."""
    fig, axes = plt.subplots(1, len(parts), figsize=(6 * len(parts), 4.5), squeeze=False)
    for ax, (side, part) in zip(axes[0], parts.items()):
        part.plot(ax)
        ax.set_title(titles[side])
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def friction_curves(
    plt: Any,
    sides: Sequence[str],
    speeds: Mapping[str, np.ndarray],
    truth: Callable[[np.ndarray, str], np.ndarray],
    curves: Mapping[str, Mapping[str, Curve]],
    bands: Mapping[str, float],
    zoom: float,
    path: Path,
) -> None:
    """Per side, the true friction ``truth(w, side)`` and each model's curve over the
    visited ``speeds`` (left) and over ``|w| < zoom`` (right), the band ``|w| < bands[side]``
    shaded (where the reconstruction cannot tell the speed's sign)."""
    fig, axes = plt.subplots(len(sides), 2, figsize=(12, 4 * len(sides)), squeeze=False)
    for row, side in zip(axes, sides):
        w = speeds[side]
        for ax, span in zip(row, ((w.min(), w.max()), (-zoom, zoom))):
            grid = np.linspace(*span, 1001)
            ax.plot(grid, truth(grid, side), "k", lw=1.5, label="truth")
            for name, by_side in curves.items():
                ax.plot(grid, by_side[side](grid), lw=1, label=name)
            ax.axvspan(-bands[side], bands[side], color="0.85", label=f"|w| < {bands[side]:.3g}")
            ax.set_xlabel(f"{side} speed [rad/s]")
            ax.set_ylabel("friction torque [N m]")
        row[0].set_title(f"{side} friction over the visited speeds")
        row[1].set_title("near zero")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
