"""Lumped heat transfer (Modelica.Thermal.HeatTransfer names and sign conventions).

Connector :data:`ac.HeatPort`: temperature ``T`` (potential, K) and heat flow rate ``Q``
(flow, W, positive into the component). Two-port elements have ``port_a`` and ``port_b``;
one-port elements (capacitor, sources, :class:`TemperatureSensor`) have ``port``.

Sensors give their reading as a variable (``res["Ts.T"]``): a temperature sensor takes no
heat, a :class:`HeatFlowSensor` has no temperature drop.
"""

from __future__ import annotations

import acausal as ac


class HeatCapacitor(ac.Component):
    """Lumped thermal mass: ``C der(T) = port.Q``; ``T0`` fixes the initial temperature."""

    def __init__(self, name: str, C: float = 1.0, T0: float | None = None) -> None:
        super().__init__(name)
        self.port = self.connector("port", ac.HeatPort)
        C = self.parameter("C", C, "J/K", min=0)
        T_start = None if T0 is None else self.parameter("T0", T0, "K", min=0)
        self.T = self.variable("T", start=T_start, fixed=T0 is not None, unit="K")
        self.der_T = self.variable("der_T", unit="K/s")
        self.equations(
            self.T == self.port.T,
            self.der_T == ac.der(self.T),
            C * self.der_T == self.port.Q,
        )


class PartialElement(ac.Component):
    """Two ports, no storage: ``dT = port_a.T - port_b.T``, ``Q_flow = port_a.Q = -port_b.Q``."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.port_a = self.connector("port_a", ac.HeatPort)
        self.port_b = self.connector("port_b", ac.HeatPort)
        self.dT, self.Q_flow = self.variable("dT", unit="K"), self.variable("Q_flow", unit="W")
        self.equations(
            self.dT == self.port_a.T - self.port_b.T,
            self.port_a.Q == self.Q_flow,
            self.port_b.Q == -self.Q_flow,
        )


class ThermalConductor(PartialElement):
    """Heat conduction: ``Q_flow = G dT`` (thermal conductance ``G`` in W/K)."""

    def __init__(self, name: str, G: float = 1.0) -> None:
        super().__init__(name)
        self.equations(self.Q_flow == self.parameter("G", G, "W/K", min=0) * self.dT)


class ThermalResistor(PartialElement):
    """Heat conduction: ``dT = R Q_flow`` (thermal resistance ``R`` in K/W)."""

    def __init__(self, name: str, R: float = 1.0) -> None:
        super().__init__(name)
        self.equations(self.dT == self.parameter("R", R, "K/W", min=0) * self.Q_flow)


class FixedTemperature(ac.Component):
    """``port.T = T`` (a parameter)."""

    def __init__(self, name: str, T: float = 293.15) -> None:
        super().__init__(name)
        self.port = self.connector("port", ac.HeatPort)
        self.equations(self.port.T == self.parameter("T", T, "K", min=0))


class PrescribedTemperature(ac.Component):
    """``port.T = T`` (a signal: number, expression of ``ac.time`` or samples ``(t, y)``)."""

    def __init__(self, name: str, T: object = 293.15) -> None:
        super().__init__(name)
        self.port = self.connector("port", ac.HeatPort)
        self.T = self.variable("T", unit="K")
        self.equations(
            self.T == ac.signal(T, f"{self.full_name}.T"),
            self.port.T == self.T,
        )


class FixedHeatFlow(ac.Component):
    """Heat flow ``Q_flow`` (a parameter) into the component at ``port``: ``port.Q = -Q_flow``."""

    def __init__(self, name: str, Q_flow: float = 1.0) -> None:
        super().__init__(name)
        self.port = self.connector("port", ac.HeatPort)
        self.equations(self.port.Q == -self.parameter("Q_flow", Q_flow, "W"))


class PrescribedHeatFlow(ac.Component):
    """Heat flow ``Q_flow`` (a signal: number, expression of ``ac.time`` or samples
    ``(t, y)``) into the component at ``port``: ``port.Q = -Q_flow`` (Modelica's, without
    its temperature-dependent part)."""

    def __init__(self, name: str, Q_flow: object = 0.0) -> None:
        super().__init__(name)
        self.port = self.connector("port", ac.HeatPort)
        self.Q_flow = self.variable("Q_flow", unit="W")
        self.equations(
            self.Q_flow == ac.signal(Q_flow, f"{self.full_name}.Q_flow"),
            self.port.Q == -self.Q_flow,
        )


class TemperatureSensor(ac.Component):
    """The absolute temperature ``T = port.T``; takes no heat (``port.Q = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.port = self.connector("port", ac.HeatPort)
        self.T = self.variable("T", unit="K")
        self.equations(self.port.Q == 0, self.T == self.port.T)


class RelTemperatureSensor(ac.Component):
    """The temperature difference ``T_rel = port_a.T - port_b.T``; takes no heat
    (``port_a.Q = port_b.Q = 0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.port_a = self.connector("port_a", ac.HeatPort)
        self.port_b = self.connector("port_b", ac.HeatPort)
        self.T_rel = self.variable("T_rel", unit="K")
        self.equations(
            self.port_a.Q == 0,
            self.port_b.Q == 0,
            self.T_rel == self.port_a.T - self.port_b.T,
        )


class HeatFlowSensor(ac.Component):
    """The heat flow rate ``Q_flow = port_a.Q`` from ``port_a`` through the sensor to
    ``port_b``, with no temperature drop (``port_a.T = port_b.T``, ``port_a.Q + port_b.Q =
    0``)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.port_a = self.connector("port_a", ac.HeatPort)
        self.port_b = self.connector("port_b", ac.HeatPort)
        self.Q_flow = self.variable("Q_flow", unit="W")
        self.equations(
            self.port_a.T == self.port_b.T,
            self.port_a.Q + self.port_b.Q == 0,
            self.Q_flow == self.port_a.Q,
        )
