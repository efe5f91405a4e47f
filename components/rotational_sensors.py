"""Ideal rotational sensors (Modelica.Mechanics.Rotational.Sensors names), imported into
:mod:`components.rotational`.

A sensor's reading is a variable of it (``res["ws.w"]``); no signal connectors. An absolute
or relative sensor takes no torque from its flanges (it does not load what it measures);
the torque sensor is a rigid link between ``flange_a`` and ``flange_b`` and reads what it
transmits.
"""

from __future__ import annotations

import acausal as ac


class AngleSensor(ac.Component):
    """Absolute angle ``phi = flange.phi``; takes no torque (``flange.tau = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        self.phi = self.variable("phi", unit="rad")
        self.equations(self.flange.tau == 0, self.phi == self.flange.phi)


class SpeedSensor(ac.Component):
    """Absolute angular speed ``w = der(flange.phi)``; takes no torque (``flange.tau = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        self.w = self.variable("w", unit="rad/s")
        self.equations(self.flange.tau == 0, self.w == ac.der(self.flange.phi))


class AccSensor(ac.Component):
    """Absolute angular acceleration ``a = der(w)``, ``w = der(flange.phi)``; takes no torque
    (``flange.tau = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        self.w = self.variable("w", unit="rad/s")
        self.a = self.variable("a", unit="rad/s^2")
        self.equations(
            self.flange.tau == 0,
            self.w == ac.der(self.flange.phi),
            self.a == ac.der(self.w),
        )


class RelAngleSensor(ac.Component):
    """Relative angle ``phi_rel = flange_b.phi - flange_a.phi``; takes no torque
    (``flange_a.tau = flange_b.tau = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        self.phi_rel = self.variable("phi_rel", unit="rad")
        self.equations(
            self.phi_rel == self.flange_b.phi - self.flange_a.phi,
            self.flange_a.tau == 0,
            self.flange_b.tau == 0,
        )


class RelSpeedSensor(ac.Component):
    """Relative angular speed ``w_rel = der(phi_rel)``, ``phi_rel = flange_b.phi -
    flange_a.phi``; takes no torque (``flange_a.tau = flange_b.tau = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        self.phi_rel = self.variable("phi_rel", unit="rad")
        self.w_rel = self.variable("w_rel", unit="rad/s")
        self.equations(
            self.phi_rel == self.flange_b.phi - self.flange_a.phi,
            self.flange_a.tau == 0,
            self.flange_b.tau == 0,
            self.w_rel == ac.der(self.phi_rel),
        )


class TorqueSensor(ac.Component):
    """The torque ``tau = flange_a.tau`` transmitted from ``flange_a`` to ``flange_b``, a
    rigid link: ``flange_a.phi = flange_b.phi``, ``flange_a.tau + flange_b.tau = 0``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.RotFlange)
        self.flange_b = self.connector("flange_b", ac.RotFlange)
        self.tau = self.variable("tau", unit="N*m")
        self.equations(
            self.flange_a.phi == self.flange_b.phi,
            self.flange_a.tau + self.flange_b.tau == 0,
            self.tau == self.flange_a.tau,
        )
