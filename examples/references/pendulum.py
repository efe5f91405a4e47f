"""The planar pendulum in Cartesian coordinates: the textbook index-3 DAE.

A point mass ``m`` on a massless rod of length ``L`` under gravity ``g``:
``x' = vx``, ``y' = vy``, ``m vx' = -lam x``, ``m vy' = -lam y - m g``,
``x^2 + y^2 = L^2`` (``lam``: the rod's force per length, a Lagrange multiplier).
"""

from __future__ import annotations

import acausal as ac


class Pendulum(ac.Component):
    """A point mass on a rod of length L in Cartesian coordinates (index 3)."""

    def __init__(
        self,
        name: str,
        L: float = 1.0,
        m: float = 1.0,
        g: float = 9.81,
        x_start: float = 0.6,
        y_start: float = -0.8,
    ) -> None:
        super().__init__(name)
        v = self.variable
        self.x, self.y = v("x", start=x_start), v("y", start=y_start)
        self.vx, self.vy, lam = v("vx"), v("vy"), v("lam")
        self.equations(
            self.vx == ac.der(self.x),
            self.vy == ac.der(self.y),
            m * ac.der(self.vx) == -lam * self.x,
            m * ac.der(self.vy) == -lam * self.y - m * g,
            self.x**2 + self.y**2 == L**2,
        )
