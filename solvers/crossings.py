"""The remembered sides of crossing functions and their noise bands (see
:mod:`solvers.events` for the semantics)."""

from __future__ import annotations

import numpy as np

BAND = 1e-11  # the noise band of a crossing, relative to the largest |c| seen


class Sides:
    """The remembered sides of the crossing functions, their noise bands, and the relation
    modes they drive (``relations[i]``: position among the modes, or -1)."""

    def __init__(self, relations: tuple[int, ...], atol: float) -> None:
        self.relations = np.asarray(relations, dtype=int)
        self.driven = np.nonzero(self.relations >= 0)[0]
        self.scale = np.zeros(len(relations))
        self.floor = 1e-3 * atol
        self.sigma = np.zeros(len(relations))

    def band(self) -> np.ndarray:
        return np.maximum(BAND * self.scale, self.floor)

    def seen(self, c: np.ndarray) -> None:
        """Widen the bands with the crossing values ``c`` of one point."""
        self.scale = np.maximum(self.scale, np.abs(c))

    def start(self, c: np.ndarray, modes: np.ndarray) -> None:
        """Sides at the start: the sign of ``c``; within the band, a relation's start value
        (its ``pre``), a plain crossing undecided."""
        self.seen(c)
        sigma = np.sign(c) * (np.abs(c) > self.band())
        rel = self.driven
        sigma[rel] = np.where(sigma[rel] != 0, sigma[rel], 2.0 * modes[self.relations[rel]] - 1)
        self.sigma = sigma

    def fired(self, c: np.ndarray) -> np.ndarray:
        """Which crossings are beyond their band on the other side of their side."""
        band = self.band()
        return np.where(self.sigma != 0, self.sigma * c < -band, np.abs(c) > band)

    def target(self, c_after: np.ndarray) -> np.ndarray:
        """The level each crossing fires at: ``-sigma band`` (undecided: the band on the
        side it went to, by ``c_after``)."""
        side = np.where(self.sigma != 0, -self.sigma, np.sign(c_after))
        return side * self.band()

    def cross(self, i: int, c: np.ndarray) -> None:
        """Crossing ``i`` was located: it takes the side it went to (the other side, or
        the side of ``c_i`` if undecided), whatever rounding says of ``c_i`` there; the
        others flip with hysteresis."""
        went = -self.sigma[i] if self.sigma[i] != 0 else np.sign(c[i])
        self.flip(c)
        self.sigma[i] = went

    def flip(self, c: np.ndarray) -> bool:
        """Hysteresis: the sides of the crossings that fired take the side they went to;
        whether any side changed."""
        fired = self.fired(c)
        self.sigma = np.where(fired, np.sign(c), self.sigma)
        return bool(fired.any())

    def modes(self, modes: np.ndarray) -> np.ndarray:
        """``modes`` with each relation's mode set from its crossing's side."""
        out = modes.copy()
        out[self.relations[self.driven]] = (self.sigma[self.driven] > 0).astype(float)
        return out
