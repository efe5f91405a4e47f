"""Ideal sensors of 1-D translational and rotational mechanics, written once for both (the
domain's names and units from its :class:`~components.mechanics1d.Axis`), as Modelica's
``Mechanics.Translational.Sensors`` and ``Mechanics.Rotational.Sensors``.

A sensor's reading is a variable of it (``res["sensor.v"]``); no signal connectors. An
absolute or relative sensor takes no force or torque from its flanges (it does not load
what it measures); a force or torque sensor is a rigid link between ``flange_a`` and
``flange_b`` and reads what it transmits.
"""

from __future__ import annotations

import acausal as ac

from .mechanics1d import Axis, derivative, relative_position


class AbsoluteSensor(ac.Component):
    """``flange``, not loaded: ``flange.<flow> = 0``."""

    axis: Axis

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", self.axis.connector)
        self.equations(getattr(self.flange, self.axis.flow) == 0)


class PositionSensor(AbsoluteSensor):
    """``<pos> = flange.<pos>``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        position = self.variable(ax.position, unit=ax.position_unit)
        setattr(self, ax.position, position)
        self.equations(position == getattr(self.flange, ax.position))


class SpeedSensor(AbsoluteSensor):
    """``<rate> = der(flange.<pos>)``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        derivative(self, ax.rate, getattr(self.flange, ax.position), ax.rate_unit)


class AccSensor(AbsoluteSensor):
    """``a = der(<rate>)``, ``<rate> = der(flange.<pos>)``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        rate = derivative(self, ax.rate, getattr(self.flange, ax.position), ax.rate_unit)
        derivative(self, "a", rate, ax.acceleration_unit)


class RelPositionSensor(ac.Component):
    """``flange_a`` and ``flange_b``, not loaded (``flange_a.<flow> = flange_b.<flow> = 0``):
    ``<pos>_rel = flange_b.<pos> - flange_a.<pos>``."""

    axis: Axis

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        self.rel = relative_position(self, ax)
        self.equations(getattr(self.flange_a, ax.flow) == 0, getattr(self.flange_b, ax.flow) == 0)


class RelSpeedSensor(RelPositionSensor):
    """``<rate>_rel = der(<pos>_rel)`` (and ``<pos>_rel``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        derivative(self, f"{self.axis.rate}_rel", self.rel, self.axis.rate_unit)


class FlowSensor(ac.Component):
    """A rigid link that reads what it transmits (a force or torque sensor):
    ``flange_a.<pos> = flange_b.<pos>``, ``flange_a.<flow> + flange_b.<flow> = 0``,
    ``<flow> = flange_a.<flow>`` (positive from ``flange_a`` to ``flange_b``)."""

    axis: Axis

    def __init__(self, name: str) -> None:
        super().__init__(name)
        ax = self.axis
        self.flange_a = self.connector("flange_a", ax.connector)
        self.flange_b = self.connector("flange_b", ax.connector)
        load = self.variable(ax.flow, unit=ax.flow_unit)
        setattr(self, ax.flow, load)
        flow_a, flow_b = getattr(self.flange_a, ax.flow), getattr(self.flange_b, ax.flow)
        self.equations(
            getattr(self.flange_a, ax.position) == getattr(self.flange_b, ax.position),
            flow_a + flow_b == 0,
            load == flow_a,
        )
