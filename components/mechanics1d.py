"""What 1-D translational and rotational mechanics share, written once for both.

An :class:`Axis` names a domain's connector variables (position ``s`` / angle ``phi``, force
``f`` / torque ``tau``, speed ``v`` / ``w``); the compliant elements below declare their
variables under those names, so ``translational.Damper`` has ``s_rel``, ``v_rel`` and ``f``
while ``rotational.Damper`` has ``phi_rel``, ``w_rel`` and ``tau``.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as cs

import acausal as ac


@dataclass(frozen=True)
class Axis:
    """Names of a 1-D mechanical domain."""

    connector: ac.ConnectorType
    position: str
    flow: str
    rate: str


TRANSLATIONAL = Axis(ac.Flange, "s", "f", "v")
ROTATIONAL = Axis(ac.RotFlange, "phi", "tau", "w")


class Compliant(ac.Component):
    """Massless two-flange element: ``<pos>_rel = flange_b.<pos> - flange_a.<pos>``,
    ``flange_b.<flow> = <flow>``, ``flange_a.<flow> = -<flow>``."""

    axis: Axis

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        self.flange_a = self.connector("flange_a", ax.connector)
        self.flange_b = self.connector("flange_b", ax.connector)
        self.rel = self.variable(f"{ax.position}_rel")
        self.load = self.variable(ax.flow)
        setattr(self, f"{ax.position}_rel", self.rel)
        setattr(self, ax.flow, self.load)
        self.equations(
            self.rel == getattr(self.flange_b, ax.position) - getattr(self.flange_a, ax.position),
            getattr(self.flange_b, ax.flow) == self.load,
            getattr(self.flange_a, ax.flow) == -self.load,
        )

    def relative_rate(self) -> cs.SX:
        """Declare ``<rate>_rel = der(<pos>_rel)`` and return it."""
        name = f"{self.axis.rate}_rel"
        rate = self.variable(name)
        setattr(self, name, rate)
        self.equations(rate == ac.der(self.rel))
        return rate


class LinearSpring(Compliant):
    """``<flow> = c (<pos>_rel - <pos>_rel0)``."""

    def __init__(self, name: str, c: float, rel0: float) -> None:
        super().__init__(name)
        c = self.parameter("c", c)
        rel0 = self.parameter(f"{self.axis.position}_rel0", rel0)
        self.equations(self.load == c * (self.rel - rel0))


class LinearDamper(Compliant):
    """``<flow> = d <rate>_rel``."""

    def __init__(self, name: str, d: float) -> None:
        super().__init__(name)
        d = self.parameter("d", d)
        self.equations(self.load == d * self.relative_rate())


class LinearSpringDamper(Compliant):
    """Spring and damper in parallel: ``<flow> = <flow>_c + <flow>_d`` with
    ``<flow>_c = c (<pos>_rel - <pos>_rel0)`` and ``<flow>_d = d <rate>_rel``."""

    def __init__(self, name: str, c: float, d: float, rel0: float) -> None:
        super().__init__(name)
        flow = self.axis.flow
        c, d = self.parameter("c", c), self.parameter("d", d)
        rel0 = self.parameter(f"{self.axis.position}_rel0", rel0)
        rate = self.relative_rate()
        spring, damper = self.variable(f"{flow}_c"), self.variable(f"{flow}_d")
        setattr(self, f"{flow}_c", spring)
        setattr(self, f"{flow}_d", damper)
        self.equations(
            spring == c * (self.rel - rel0),
            damper == d * rate,
            self.load == spring + damper,
        )
