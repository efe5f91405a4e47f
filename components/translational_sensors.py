"""Ideal translational sensors (Modelica.Mechanics.Translational.Sensors names), imported into
:mod:`components.translational`.

A sensor's reading is a variable of it (``res["vs.v"]``); no signal connectors. An absolute
or relative sensor takes no force from its flanges (it does not load what it measures);
the force sensor is a rigid link between ``flange_a`` and ``flange_b`` and reads what it
transmits.
"""

from __future__ import annotations

import acausal as ac


class PositionSensor(ac.Component):
    """Absolute position ``s = flange.s``; takes no force (``flange.f = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        self.s = self.variable("s", unit="m")
        self.equations(self.flange.f == 0, self.s == self.flange.s)


class SpeedSensor(ac.Component):
    """Absolute speed ``v = der(flange.s)``; takes no force (``flange.f = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        self.v = self.variable("v", unit="m/s")
        self.equations(self.flange.f == 0, self.v == ac.der(self.flange.s))


class AccSensor(ac.Component):
    """Absolute acceleration ``a = der(v)``, ``v = der(flange.s)``; takes no force
    (``flange.f = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.Flange)
        self.v = self.variable("v", unit="m/s")
        self.a = self.variable("a", unit="m/s^2")
        self.equations(
            self.flange.f == 0,
            self.v == ac.der(self.flange.s),
            self.a == ac.der(self.v),
        )


class RelPositionSensor(ac.Component):
    """Relative position ``s_rel = flange_b.s - flange_a.s``; takes no force
    (``flange_a.f = flange_b.f = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        self.s_rel = self.variable("s_rel", unit="m")
        self.equations(
            self.s_rel == self.flange_b.s - self.flange_a.s,
            self.flange_a.f == 0,
            self.flange_b.f == 0,
        )


class RelSpeedSensor(ac.Component):
    """Relative speed ``v_rel = der(s_rel)``, ``s_rel = flange_b.s -
    flange_a.s``; takes no force (``flange_a.f = flange_b.f = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        self.s_rel = self.variable("s_rel", unit="m")
        self.v_rel = self.variable("v_rel", unit="m/s")
        self.equations(
            self.s_rel == self.flange_b.s - self.flange_a.s,
            self.flange_a.f == 0,
            self.flange_b.f == 0,
            self.v_rel == ac.der(self.s_rel),
        )


class ForceSensor(ac.Component):
    """The force ``f = flange_a.f`` transmitted from ``flange_a`` to ``flange_b``, a
    rigid link: ``flange_a.s = flange_b.s``, ``flange_a.f + flange_b.f = 0``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange_a = self.connector("flange_a", ac.Flange)
        self.flange_b = self.connector("flange_b", ac.Flange)
        self.f = self.variable("f", unit="N")
        self.equations(
            self.flange_a.s == self.flange_b.s,
            self.flange_a.f + self.flange_b.f == 0,
            self.f == self.flange_a.f,
        )
