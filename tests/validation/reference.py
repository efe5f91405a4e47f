"""Load the external reference trajectories of ../shared/validation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2].parent / "shared" / "validation" / "msl"


def load(example: str) -> dict[str, np.ndarray]:
    """Columns of ``<example>/<Name>.csv`` by their header names, event rows removed.

    At an event the reference repeats the time stamp (left and right limit); both rows are
    dropped, so every remaining time is a plain output point.
    """
    folder = ROOT / example
    files = list(folder.glob("*.csv"))
    if not files:
        pytest.skip(f"reference {example} not found under {ROOT}")
    with open(files[0]) as fh:
        header = [h.strip().strip('"') for h in fh.readline().split(",")]
    data = np.loadtxt(files[0], delimiter=",", skiprows=1)
    t = data[:, 0]
    dup = np.zeros(len(t), dtype=bool)
    same = np.diff(t) == 0
    dup[1:] |= same
    dup[:-1] |= same
    data = data[~dup]
    return {name: data[:, k] for k, name in enumerate(header)}


def max_error(t_ref: np.ndarray, y_ref: np.ndarray, t: np.ndarray, y: np.ndarray) -> float:
    """Largest |y - y_ref| at the reference times (``t`` must contain them)."""
    idx = np.searchsorted(t, t_ref)
    assert np.allclose(t[idx], t_ref, rtol=0, atol=1e-9), "simulation grid misses reference times"
    return float(np.max(np.abs(y[idx] - y_ref)))


def event_times(example: str) -> np.ndarray:
    """The times the reference repeats (its events: left and right limits), each once."""
    files = list((ROOT / example).glob("*.csv"))
    if not files:
        pytest.skip(f"reference {example} not found under {ROOT}")
    t = np.loadtxt(files[0], delimiter=",", skiprows=1, usecols=0)
    return np.unique(t[1:][np.diff(t) == 0])
