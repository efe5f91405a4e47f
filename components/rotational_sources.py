"""Rotational sources (Modelica.Mechanics.Rotational.Sources names), imported into
:mod:`components.rotational`.

A source acts on ``flange`` against a housing. With ``use_support=False`` (the default, as
in Modelica) the housing is fixed at ``phi_support = 0``; with ``use_support=True`` it is
the connector ``support``, which takes the reaction ``support.tau = -flange.tau``.
"""

from __future__ import annotations

import casadi as cs

import acausal as ac


def _housing(comp: ac.Component, flange: ac.Connector, use_support: bool) -> cs.SX | float:
    """The housing's angle ``phi_support`` of a source acting on ``flange``: 0 (fixed), or
    with ``use_support`` that of the connector ``support`` it declares on ``comp``, which
    takes the reaction ``support.tau = -flange.tau``."""
    if not use_support:
        return 0.0
    comp.support = comp.connector("support", ac.RotFlange)
    comp.equations(comp.support.tau == -flange.tau)
    return comp.support.phi


class PartialTorque(ac.Component):
    """Torque ``tau`` acting on ``flange`` in the positive direction: ``flange.tau = -tau``."""

    def __init__(self, name: str, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        _housing(self, self.flange, use_support)
        self.tau = self.variable("tau", unit="N*m")
        self.equations(self.flange.tau == -self.tau)


class Torque(PartialTorque):
    """Torque ``tau`` (a signal: number, expression of ``ac.time`` or samples ``(t, y)``)."""

    def __init__(self, name: str, tau: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        self.equations(self.tau == ac.signal(tau, f"{self.full_name}.tau"))


class ConstantTorque(PartialTorque):
    """``tau = tau_constant``."""

    def __init__(self, name: str, tau_constant: float = 1.0, use_support: bool = False) -> None:
        super().__init__(name, use_support)
        tau_constant = self.parameter("tau_constant", tau_constant, "N*m")
        self.equations(self.tau == tau_constant)


class TorqueStep(PartialTorque):
    """``tau = offset_torque + (step_torque if t >= start_time else 0)``."""

    def __init__(
        self,
        name: str,
        step_torque: float = 1.0,
        offset_torque: float = 0.0,
        start_time: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        step_torque = self.parameter("step_torque", step_torque, "N*m")
        start_time = self.parameter("start_time", start_time, "s")
        offset_torque = self.parameter("offset_torque", offset_torque, "N*m")
        self.equations(self.tau == offset_torque + ac.step(step_torque, start_time))


class SineTorque(PartialTorque):
    """``tau = offset + amplitude sin(2 pi f t + phase)`` (Modelica's Sine block names)."""

    def __init__(
        self,
        name: str,
        amplitude: float = 1.0,
        f: float = 1.0,
        phase: float = 0.0,
        offset: float = 0.0,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, use_support)
        amplitude = self.parameter("amplitude", amplitude, "N*m")
        f = self.parameter("f", f, "Hz")
        phase = self.parameter("phase", phase, "rad")
        offset = self.parameter("offset", offset, "N*m")
        self.equations(self.tau == offset + ac.sine(amplitude, f, phase))


class Position(ac.Component):
    """Prescribed angle ``phi = flange.phi - phi_support`` of ``flange`` relative to the
    housing, ``phi = phi_ref(t)``.

    The signal is differentiated symbolically by index reduction, so an expression of
    ``ac.time`` should be smooth; samples ``(t, y)`` become a C2 cubic spline
    (:func:`acausal.spline`). Driving an inertia this way gives index 3.
    """

    def __init__(self, name: str, phi: object = 0.0, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        phi_support = _housing(self, self.flange, use_support)
        self.phi = self.variable("phi", unit="rad")
        self.equations(
            self.phi == self.flange.phi - phi_support,
            self.phi == ac.signal(phi, f"{self.full_name}.phi", smooth=True),
        )


class PartialSpeed(ac.Component):
    """Prescribed speed ``w = der(phi)`` of ``flange``, ``phi = flange.phi - phi_support``
    its angle relative to the housing; ``phi0`` fixes the initial angle (else the rest of
    the system determines it)."""

    def __init__(self, name: str, phi0: float | None = None, use_support: bool = False) -> None:
        super().__init__(name)
        self.flange = self.connector("flange", ac.RotFlange)
        phi_support = _housing(self, self.flange, use_support)
        phi_start = self.initial("phi0", phi0, "rad")
        self.phi = self.variable("phi", start=phi_start, fixed=phi0 is not None, unit="rad")
        self.w = self.variable("w", unit="rad/s")
        self.equations(
            self.phi == self.flange.phi - phi_support,
            self.w == ac.der(self.phi),
        )


class Speed(PartialSpeed):
    """Prescribed speed ``w`` (a signal: number, expression of ``ac.time`` or samples)."""

    def __init__(
        self, name: str, w: object = 0.0, phi0: float | None = None, use_support: bool = False
    ) -> None:
        super().__init__(name, phi0, use_support)
        self.equations(self.w == ac.signal(w, f"{self.full_name}.w"))


class ConstantSpeed(PartialSpeed):
    """``w = w_fixed``."""

    def __init__(
        self,
        name: str,
        w_fixed: float = 1.0,
        phi0: float | None = None,
        use_support: bool = False,
    ) -> None:
        super().__init__(name, phi0, use_support)
        w_fixed = self.parameter("w_fixed", w_fixed, "rad/s")
        self.equations(self.w == w_fixed)
